/* show.c - human-readable renderings: summary, nvidia-smi style matrix,
 * Slurm gres.conf lines, plan table.
 * Pure core: struct node_topo / struct plan in, text out. */
#include "topology/show.h"      // defines: show_*
#include "topology/topo.h"      // defines: struct node_topo
#include "topology/cpufeat.h"   // defines: cpufeat_parse, cpufeat_format, cpufeat_bf16_speed
#include "topology/plan.h"      // defines: struct plan, struct slice
#include "topology/pathclass.h" // defines: pathclass_between, pathclass_name, pathclass_legend
#include "common/sbuf.h"           // defines: struct sbuf, sbuf_addf

#include <stdlib.h>
#include <string.h>

static void add_set(struct sbuf *out, const struct bitmap *b)
{
	if (bitmap_is_empty(b))
		sbuf_addstr(out, "-");
	else
		bitmap_format_list(b, out);
}

/* Logical indices of the cores whose first PU lies in cpus. */
static void core_list(const struct node_topo *t, const struct bitmap *cpus, struct bitmap *out)
{
	bitmap_zero(out);
	for (size_t i = 0; i < t->n_cores; i++)
		if (bitmap_test(cpus, (unsigned)bitmap_first(&t->cores[i].pus)))
			bitmap_set(out, t->cores[i].logical_index);
}

static void add_numa_of(const struct node_topo *t, struct sbuf *out, int numa)
{
	if (numa >= 0)
		sbuf_addf(out, "%u", t->numa[numa].os_index);
	else
		sbuf_addstr(out, "-");
}

static void add_strv(struct sbuf *out, char *const *v, size_t n, const char *sep)
{
	for (size_t i = 0; i < n; i++)
		sbuf_addf(out, "%s%s", i ? sep : "", v[i]);
}

/* "cpu features: AVX2 FMA (no AVX-512F, ...)", or why they are unknown:
 * never a guess from the CPU model. */
static void add_cpu_features(const struct node_topo *t, struct sbuf *out)
{
	unsigned have;

	sbuf_addstr(out, "cpu features: ");
	if (!t->cpu_flags) {
		sbuf_addstr(out, "unknown (no CPU flags recorded; "
				 "hpctrain topo --export-xml on the node saves them)\n");
		return;
	}
	have = cpufeat_parse(t->cpu_flags);
	if (have)
		cpufeat_format(have, " ", out);
	else
		sbuf_addstr(out, "none");
	if (have != CPUFEAT_ALL) {
		sbuf_addstr(out, " (no ");
		cpufeat_format(CPUFEAT_ALL & ~have, ", ", out);
		sbuf_addch(out, ')');
	}
	sbuf_addch(out, '\n');
	sbuf_addf(out, "bf16 speed: %s\n",
		  cpufeat_bf16_speed_text(cpufeat_bf16_speed(t->cpu_flags)));
}

void show_summary(const struct node_topo *t, struct sbuf *out)
{
	struct bitmap cores = BITMAP_INIT;

	sbuf_addf(out, "node %s (%s)\n", t->hostname ? t->hostname : "?",
		  t->source ? t->source : "?");
	sbuf_addf(out, "cpus: %zu package%s, %zu numa node%s, %zu cores, %zu pus; allowed ",
		  t->n_packages, t->n_packages == 1 ? "" : "s",
		  t->n_numa, t->n_numa == 1 ? "" : "s",
		  t->n_cores, bitmap_count(&t->cpuset));
	add_set(out, &t->allowed);
	sbuf_addch(out, '\n');
	add_cpu_features(t, out);
	for (size_t p = 0; p < t->n_packages; p++) {
		const struct topo_package *pk = &t->packages[p];

		sbuf_addf(out, "package %u: %s; cpus ", pk->os_index, pk->model ? pk->model : "?");
		add_set(out, &pk->cpuset);
		sbuf_addch(out, '\n');
	}
	for (size_t n = 0; n < t->n_numa; n++) {
		const struct topo_numa *nu = &t->numa[n];

		core_list(t, &nu->cpuset, &cores);
		sbuf_addf(out, "numa %u: %.1f GiB; cores ", nu->os_index,
			  (double)nu->memory / (1024.0 * 1024.0 * 1024.0));
		add_set(out, &cores);
		sbuf_addstr(out, "; cpus ");
		add_set(out, &nu->cpuset);
		sbuf_addch(out, '\n');
	}
	sbuf_addf(out, "gpus: %zu\n", t->n_gpus);
	for (size_t i = 0; i < t->n_gpus; i++) {
		const struct topo_gpu *g = &t->gpus[i];

		sbuf_addf(out, "  gpu %zu  %s  %s  numa ", i, g->pci.busid, g->model);
		add_numa_of(t, out, g->numa);
		if (g->n_osdevs) {
			sbuf_addstr(out, "  (");
			add_strv(out, g->osdevs, g->n_osdevs, ", ");
			sbuf_addch(out, ')');
		}
		sbuf_addch(out, '\n');
	}
	sbuf_addf(out, "nics: %zu\n", t->n_nics);
	for (size_t i = 0; i < t->n_nics; i++) {
		const struct topo_nic *n = &t->nics[i];

		sbuf_addf(out, "  nic %zu  %s  ", i, n->pci.busid);
		add_strv(out, n->ofed, n->n_ofed, ",");
		if (n->n_ofed && n->n_net)
			sbuf_addch(out, ' ');
		add_strv(out, n->net, n->n_net, ",");
		sbuf_addf(out, "  %s  numa ", n->model);
		add_numa_of(t, out, n->numa);
		sbuf_addch(out, '\n');
	}
	bitmap_release(&cores);
}

static const struct topo_pci *matrix_dev(const struct node_topo *t, size_t i)
{
	return i < t->n_gpus ? &t->gpus[i].pci : &t->nics[i - t->n_gpus].pci;
}

void show_matrix(const struct node_topo *t, struct sbuf *out)
{
	size_t n = t->n_gpus + t->n_nics;

	for (size_t i = 0; i < t->n_gpus; i++)
		sbuf_addf(out, "\tGPU%zu", i);
	for (size_t i = 0; i < t->n_nics; i++)
		sbuf_addf(out, "\tNIC%zu", i);
	sbuf_addstr(out, "\tCPU Affinity\tNUMA Affinity\n");
	/* O(n^2 x depth), n < 40 on any real node. */
	for (size_t r = 0; r < n; r++) {
		const struct topo_pci *a = matrix_dev(t, r);

		if (r < t->n_gpus)
			sbuf_addf(out, "GPU%zu", r);
		else
			sbuf_addf(out, "NIC%zu", r - t->n_gpus);
		for (size_t c = 0; c < n; c++) {
			if (c == r)
				sbuf_addstr(out, "\t X ");
			else
				sbuf_addf(out, "\t%s", pathclass_name(
					pathclass_between(t, a, matrix_dev(t, c))));
		}
		sbuf_addch(out, '\t');
		add_set(out, &a->cpuset);
		sbuf_addch(out, '\t');
		add_set(out, &a->nodeset);
		sbuf_addch(out, '\n');
	}
	sbuf_addch(out, '\n');
	pathclass_legend(out);
	if (t->n_nics) {
		sbuf_addstr(out, "\nNIC Legend:\n\n");
		for (size_t i = 0; i < t->n_nics; i++)
			sbuf_addf(out, "  NIC%zu: %s\n", i, topo_nic_name(&t->nics[i]));
	}
}

static const char *render_node(const struct topo_gpu *g)
{
	for (size_t i = 0; i < g->n_osdevs; i++)
		if (!strncmp(g->osdevs[i], "renderD", 7))
			return g->osdevs[i];
	return NULL;
}

void show_gres_conf(const struct node_topo *t, struct sbuf *out)
{
	struct bitmap local = BITMAP_INIT, logical = BITMAP_INIT;
	unsigned nvidia = 0;
	int i;

	sbuf_addf(out, "# gres.conf for %s, from hpctrain topo --gres-conf\n",
		  t->hostname ? t->hostname : "this node");
	for (size_t k = 0; k < t->n_gpus; k++) {
		const struct topo_gpu *g = &t->gpus[k];
		const char *rd = render_node(g);

		topo_local_cores(t, &g->pci, &local);
		bitmap_zero(&logical);
		bitmap_foreach(i, &local)
			bitmap_set(&logical, t->cores[i].logical_index);
		if (g->pci.vendor == 0x10de)
			sbuf_addf(out, "Name=gpu File=/dev/nvidia%u Cores=", nvidia++);
		else if (rd)
			sbuf_addf(out, "Name=gpu File=/dev/dri/%s Cores=", rd);
		else {
			sbuf_addf(out, "# gpu %zu (%s): no device file known\n", k, g->pci.busid);
			continue;
		}
		add_set(out, &logical);
		sbuf_addch(out, '\n');
	}
	bitmap_release(&local);
	bitmap_release(&logical);
}

static void nic_cell(const struct node_topo *t, const struct slice *s, struct sbuf *out)
{
	for (size_t i = 0; i < s->n_nics; i++)
		sbuf_addf(out, "%s%s", i ? "," : "", topo_nic_name(&t->nics[s->nics[i]]));
	if (s->n_nics)
		sbuf_addf(out, " (%s)", pathclass_name(s->nic_class));
	else
		sbuf_addstr(out, "-");
}

#define PLAN_COLS 7

void show_plan_table(const struct node_topo *t, const struct plan *p, struct sbuf *out)
{
	static const char *const head[PLAN_COLS] = {
		"rank", "gpu", "pci id", "nics", "cpus", "numa", "why",
	};
	struct sbuf *cell = xcalloc((p->n + 1) * PLAN_COLS, sizeof(*cell));
	size_t width[PLAN_COLS];

	/* Two passes: cells first, then pad to the widest of each column. */
	for (size_t c = 0; c < PLAN_COLS; c++) {
		sbuf_init(&cell[c]);
		sbuf_addstr(&cell[c], head[c]);
	}
	for (size_t r = 0; r < p->n; r++) {
		const struct slice *s = &p->slices[r];
		struct sbuf *row = &cell[(r + 1) * PLAN_COLS];

		for (size_t c = 0; c < PLAN_COLS; c++)
			sbuf_init(&row[c]);
		sbuf_addf(&row[0], "%u", s->local_rank);
		if (s->gpu >= 0) {
			sbuf_addf(&row[1], "%d", s->gpu);
			sbuf_addstr(&row[2], s->busid);
		} else {
			sbuf_addstr(&row[1], "-");
			sbuf_addstr(&row[2], "-");
		}
		nic_cell(t, s, &row[3]);
		add_set(&row[4], &s->cpuset);
		add_set(&row[5], &s->nodeset);
		sbuf_addstr(&row[6], s->why ? s->why : "");
	}
	for (size_t c = 0; c < PLAN_COLS; c++) {
		width[c] = 0;
		for (size_t r = 0; r <= p->n; r++)
			if (cell[r * PLAN_COLS + c].len > width[c])
				width[c] = cell[r * PLAN_COLS + c].len;
	}
	for (size_t r = 0; r <= p->n; r++) {
		for (size_t c = 0; c < PLAN_COLS; c++) {
			const struct sbuf *x = &cell[r * PLAN_COLS + c];

			if (c + 1 < PLAN_COLS)
				sbuf_addf(out, "%-*s  ", (int)width[c], x->buf);
			else
				sbuf_addstr(out, x->buf);
		}
		sbuf_addch(out, '\n');
		if (r > 0 && p->slices[r - 1].cpu_note)
			sbuf_addf(out, "%*s  note: %s\n", (int)width[0], "",
				  p->slices[r - 1].cpu_note);
	}
	for (size_t i = 0; i < (p->n + 1) * PLAN_COLS; i++)
		sbuf_release(&cell[i]);
	free(cell);
}
