/* show_json.c - node topology and plan as JSON (`hpctrain topo --json`).
 * Pure core: struct in, jansson value out.  Keys are stable: scripts and
 * the run directory's topo/ record parse them. */
#include "topology/show.h"      // defines: show_json_topo, show_json_plan
#include "topology/topo.h"      // defines: struct node_topo
#include "topology/cpufeat.h"   // defines: cpufeat_parse, cpufeat_descs, cpufeat_bf16_speed
#include "topology/plan.h"      // defines: struct plan, plan_policy_*_name
#include "topology/pathclass.h" // defines: pathclass_between, pathclass_name
#include "common/sbuf.h"           // defines: struct sbuf
#include "common/jsonb.h"          // defines: jsonb_set, jsonb_append, jsonb_text, jsonb_utf8
#include "common/strfmt.h"         // defines: strfmt_label

static json_t *set_str(const struct bitmap *b)
{
	struct sbuf sb = SBUF_INIT;
	json_t *v;

	bitmap_format_list(b, &sb);
	v = jsonb_text(sb.buf);
	sbuf_release(&sb);
	return v;
}

static json_t *strv(char *const *v, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; i < n; i++)
		jsonb_append(&a, jsonb_text(v[i]));
	return a;
}

static json_t *numa_os(const struct node_topo *t, int numa)
{
	return numa >= 0 ? json_integer(t->numa[numa].os_index) : json_null();
}

/* Names from the node or a saved XML file are bytes: carried escaped. */
static json_t *maybe_str(const char *s)
{
	return jsonb_text(s);
}

static void add_pci(json_t **o, const struct topo_pci *p)
{
	char id[16];

	jsonb_set(o, "pci_bus_id", jsonb_text(p->busid));
	strfmt_label(id, sizeof(id), "%04x:%04x", p->vendor, p->device);
	jsonb_set(o, "pci_id", jsonb_text(id));
	strfmt_label(id, sizeof(id), "%04x", p->class_id);
	jsonb_set(o, "pci_class", jsonb_text(id));
	jsonb_set(o, "link_gbps", json_real(p->link_gbps));
	jsonb_set(o, "cpuset", set_str(&p->cpuset));
	jsonb_set(o, "nodeset", set_str(&p->nodeset));
}

static json_t *class_matrix(const struct node_topo *t, bool nics)
{
	json_t *m = json_array();

	for (size_t i = 0; i < t->n_gpus; i++) {
		json_t *row = json_array();
		size_t n = nics ? t->n_nics : t->n_gpus;

		for (size_t j = 0; j < n; j++) {
			const struct topo_pci *b = nics ? &t->nics[j].pci : &t->gpus[j].pci;

			jsonb_append(&row, !nics && i == j ? jsonb_text("X") :
				jsonb_text(pathclass_name(pathclass_between(t, &t->gpus[i].pci, b))));
		}
		jsonb_append(&m, row);
	}
	return m;
}

/* {"avx2": true, ...} keyed by the kernel's flag names; null when the
 * flags are unknown, so no reader mistakes unknown for absent. */
static json_t *cpu_features(const struct node_topo *t)
{
	json_t *o;
	unsigned have;

	if (!t->cpu_flags)
		return json_null();
	o = json_object();
	have = cpufeat_parse(t->cpu_flags);
	for (size_t i = 0; i < CPUFEAT_COUNT; i++)
		jsonb_set(&o, cpufeat_descs[i].flag,
				    json_boolean(have & cpufeat_descs[i].bit));
	return o;
}

json_t *show_json_topo(const struct node_topo *t)
{
	json_t *o = json_object(), *a;

	jsonb_set(&o, "source", maybe_str(t->source));
	jsonb_set(&o, "hostname", maybe_str(t->hostname));
	jsonb_set(&o, "cpuset", set_str(&t->cpuset));
	jsonb_set(&o, "allowed", set_str(&t->allowed));
	jsonb_set(&o, "cpu_features", cpu_features(t));
	jsonb_set(&o, "bf16_speed",
			    t->cpu_flags ? jsonb_text(cpufeat_bf16_speed_key(
						   cpufeat_bf16_speed(t->cpu_flags)))
					 : json_null());
	a = json_array();
	for (size_t i = 0; i < t->n_packages; i++) {
		const struct topo_package *p = &t->packages[i];

		jsonb_append(&a, json_pack("{s:I, s:o, s:o}",
			"os_index", (json_int_t)p->os_index, "model", maybe_str(p->model),
			"cpuset", set_str(&p->cpuset)));
	}
	jsonb_set(&o, "packages", a);
	a = json_array();
	for (size_t i = 0; i < t->n_numa; i++) {
		const struct topo_numa *n = &t->numa[i];

		jsonb_append(&a, json_pack("{s:I, s:I, s:o, s:o}",
			"os_index", (json_int_t)n->os_index, "memory_bytes", (json_int_t)n->memory,
			"package", n->package >= 0 ? json_integer(t->packages[n->package].os_index)
						   : json_null(),
			"cpuset", set_str(&n->cpuset)));
	}
	jsonb_set(&o, "numa_nodes", a);
	a = json_array();
	for (size_t i = 0; i < t->n_cores; i++) {
		const struct topo_core *c = &t->cores[i];

		jsonb_append(&a, json_pack("{s:I, s:I, s:o, s:o, s:I, s:o}",
			"logical_index", (json_int_t)c->logical_index,
			"os_index", (json_int_t)c->os_index,
			"package", c->package >= 0 ? json_integer(t->packages[c->package].os_index)
						   : json_null(),
			"numa", numa_os(t, c->numa), "l3", (json_int_t)c->l3,
			"cpuset", set_str(&c->pus)));
	}
	jsonb_set(&o, "cores", a);
	a = json_array();
	for (size_t i = 0; i < t->n_gpus; i++) {
		const struct topo_gpu *g = &t->gpus[i];
		json_t *x = json_pack("{s:I, s:o, s:o, s:o, s:o, s:o}", "index", (json_int_t)i,
				      "vendor", jsonb_text(g->vendor), "model", jsonb_text(g->model), "uuid", maybe_str(g->uuid),
				      "os_devices", strv(g->osdevs, g->n_osdevs),
				      "numa", numa_os(t, g->numa));

		add_pci(&x, &g->pci);
		jsonb_append(&a, x);
	}
	jsonb_set(&o, "gpus", a);
	a = json_array();
	for (size_t i = 0; i < t->n_nics; i++) {
		const struct topo_nic *n = &t->nics[i];
		json_t *attrs = json_object();
		json_t *x;
		struct sbuf key = SBUF_INIT;

		for (size_t j = 0; j < n->n_attrs; j++)
			jsonb_set(&attrs, jsonb_utf8(n->attrs[j].name, &key),
				  jsonb_text(n->attrs[j].value));
		x = json_pack("{s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "index", (json_int_t)i,
			      "name", jsonb_text(topo_nic_name(n)), "vendor", jsonb_text(n->vendor),
			      "model", jsonb_text(n->model),
			      "openfabrics", strv(n->ofed, n->n_ofed), "net", strv(n->net, n->n_net),
			      "attributes", attrs, "numa", numa_os(t, n->numa));
		add_pci(&x, &n->pci);
		jsonb_append(&a, x);
		sbuf_release(&key);
	}
	jsonb_set(&o, "nics", a);
	jsonb_set(&o, "gpu_gpu", class_matrix(t, false));
	jsonb_set(&o, "gpu_nic", class_matrix(t, true));
	return o;
}

json_t *show_json_plan(const struct node_topo *t, const struct plan *p)
{
	json_t *o = json_object(), *a = json_array();

	jsonb_set(&o, "policy", json_pack("{s:s, s:s, s:s, s:s}",
		"gpu", plan_policy_gpu_name(p->policy.gpu),
		"cpu", plan_policy_cpu_name(p->policy.cpu),
		"nic", plan_policy_nic_name(p->policy.nic),
		"memory", plan_policy_memory_name(p->policy.memory)));
	jsonb_set(&o, "ranks", json_integer((json_int_t)p->n));
	jsonb_set(&o, "gpus", json_integer((json_int_t)p->n_gpus));
	for (size_t r = 0; r < p->n; r++) {
		const struct slice *s = &p->slices[r];
		json_t *names = json_array(), *idx = json_array();

		for (size_t i = 0; i < s->n_nics; i++) {
			jsonb_append(&names, jsonb_text(topo_nic_name(&t->nics[s->nics[i]])));
			jsonb_append(&idx, json_integer(s->nics[i]));
		}
		jsonb_append(&a, json_pack("{s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:s, s:s, s:o}",
			"local_rank", (json_int_t)s->local_rank,
			"gpu", s->gpu >= 0 ? json_integer(s->gpu) : json_null(),
			"gpu_ordinal", s->gpu_ordinal >= 0 ? json_integer(s->gpu_ordinal) : json_null(),
			"pci_bus_id", s->gpu >= 0 ? jsonb_text(s->busid) : json_null(),
			"nics", names, "nic_indices", idx,
			"nic_class", s->n_nics ? jsonb_text(pathclass_name(s->nic_class)) : json_null(),
			"cpuset", set_str(&s->cpuset), "nodeset", set_str(&s->nodeset),
			"memory", plan_policy_memory_name(s->memory),
			"why", s->why ? s->why : "",
			"cpu_note", maybe_str(s->cpu_note)));
	}
	jsonb_set(&o, "slices", a);
	return o;
}
