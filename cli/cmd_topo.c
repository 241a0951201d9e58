/* cmd_topo.c - `hpctrain topo`: what a node holds, and how ranks would share it.
 * Shell: probes with hwloc (live, --input FILE or $HPCTRAIN_TOPOLOGY),
 * renders with topology/show, plans with topology/plan. */
#include "common/json_print.h" // defines: json_print
#include "common/say.h" // defines: say
#include "cli/builtin.h"     // defines: cmd_topo
#include "common/diag.h"        // defines: struct diag_list, diag_report_as
#include "common/exitcode.h"    // defines: enum hpt_exit
#include "common/fileio.h"      // defines: fileio_check_regular
#include "common/opt.h"         // defines: struct opt, opt_next
#include "common/sbuf.h"        // defines: struct sbuf, SBUF_CLIP
#include "topology/bitmap.h" // defines: bitmap_parse_list
#include "topology/plan.h"   // defines: plan_slices, plan_policy_set
#include "topology/probe.h"  // defines: probe_load, probe_export_xml
#include "topology/show.h"   // defines: show_*
#include "topology/topo.h"   // defines: struct node_topo

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { OPT_EXPORT_XML = 256, OPT_GRES_CONF, OPT_RANKS, OPT_CPU, OPT_GPU, OPT_NIC,
       OPT_MEMORY, OPT_ALLOWED, OPT_VISIBLE };

static const char *const topo_usage[] = {
	"hpctrain topo [--input <file.xml>] [--json | --gres-conf | --export-xml <file>]",
	"hpctrain topo plan --ranks-per-node <n> [--cpu <p>] [--gpu <p>] [--nic <p>] [--memory <p>] [--json]",
	NULL,
};

static const struct opt topo_opts[] = {
	{ "input", required_argument, NULL, 'i', "FILE",
	  "read a saved hwloc XML topology instead of this machine" },
	{ "json", no_argument, NULL, 'j', NULL, "print JSON" },
	{ "export-xml", required_argument, NULL, OPT_EXPORT_XML, "FILE",
	  "save the topology as hwloc XML, to plan elsewhere" },
	{ "gres-conf", no_argument, NULL, OPT_GRES_CONF, NULL, "print Slurm gres.conf lines for the GPUs" },
	{ "ranks-per-node", required_argument, NULL, OPT_RANKS, "N", "plan: local ranks on the node" },
	{ "cpu", required_argument, NULL, OPT_CPU, "POLICY", "plan: exclusive, node, core-complex or none" },
	{ "gpu", required_argument, NULL, OPT_GPU, "POLICY", "plan: auto or none" },
	{ "nic", required_argument, NULL, OPT_NIC, "POLICY", "plan: rail, single or none" },
	{ "memory", required_argument, NULL, OPT_MEMORY, "POLICY", "plan: local, preferred or none" },
	{ "allowed-cpus", required_argument, NULL, OPT_ALLOWED, "LIST",
	  "plan: only these CPUs, e.g. 0-15,32-47 (as a cgroup would)" },
	{ "visible-gpus", required_argument, NULL, OPT_VISIBLE, "LIST",
	  "plan: only these GPUs by PCI-order index, e.g. 2,3 (as Slurm would)" },
	OPT_HELP,
	OPT_END,
};

static const struct opt_cmd topo_cmd = {
	.name = "topo",
	.usage = topo_usage,
	.summary = "Show a node's packages, NUMA nodes, cores, GPUs and NICs, their PCIe path classes, "
		"and the binding plan for its ranks.",
	.opts = topo_opts,
};

struct topo_args {
	const char *input, *export_xml;
	int json, gres_conf, plan;
	long ranks;
	struct plan_policy policy;
	const char *allowed, *visible;
};

/* Whether --input names something that is not a readable regular file
 * (a FIFO would hang hwloc); says so.  Status 4, not the topology's 7. */
static bool no_input(const struct topo_args *a)
{
	struct sbuf why = SBUF_INIT;
	bool none = a->input && fileio_check_regular(a->input, &why);

	if (none)
		say("%s", why.buf);
	sbuf_release(&why);
	return none;
}

static int load(const struct topo_args *a, struct node_topo *t)
{
	struct diag_list dl = DIAG_LIST_INIT;
	int status = HPT_EXIT_OK;

	if (no_input(a))
		return HPT_EXIT_NO_INPUT;
	if (probe_load(a->input, t, &dl)) {
		diag_report_as(stderr, "hpctrain topo", &dl);
		status = HPT_EXIT_TOPOLOGY;
	}
	diag_list_release(&dl);
	return status;
}

static int show(const struct topo_args *a)
{
	struct diag_list dl = DIAG_LIST_INIT;
	struct node_topo t;
	struct sbuf out = SBUF_INIT;
	int status;

	if (a->export_xml) {
		if (no_input(a))
			return HPT_EXIT_NO_INPUT;
		status = probe_export_xml(a->input, a->export_xml, &dl) ? HPT_EXIT_IO : HPT_EXIT_OK;
		diag_report_as(stderr, "hpctrain topo", &dl);
		diag_list_release(&dl);
		return status;
	}
	topo_init(&t);
	status = load(a, &t);
	if (status)
		return status;
	if (a->json) {
		status = json_print(show_json_topo(&t));
	} else if (a->gres_conf) {
		show_gres_conf(&t, &out);
	} else {
		show_summary(&t, &out);
		if (t.n_gpus || t.n_nics) {
			sbuf_addch(&out, '\n');
			show_matrix(&t, &out);
		}
	}
	fputs(out.buf, stdout);
	sbuf_release(&out);
	topo_release(&t);
	return status;
}

/* Parses "2,3" into indices; -1 on anything else. */
static int parse_gpu_list(const char *s, int **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	while (*s) {
		char *end;
		long v = strtol(s, &end, 10);

		if (end == s || v < 0 || v > 1023 || (*end && *end != ','))
			return -1;
		*out = xrealloc(*out, (*n + 1) * sizeof(**out));
		(*out)[(*n)++] = (int)v;
		s = *end ? end + 1 : end;
	}
	return 0;
}

static int plan(const struct topo_args *a)
{
	struct plan_request req = { .ranks = (unsigned)a->ranks, .policy = a->policy };
	struct diag_list dl = DIAG_LIST_INIT;
	struct bitmap allowed;
	struct node_topo t;
	struct plan p;
	struct sbuf out = SBUF_INIT;
	int *visible = NULL, status;
	size_t n_visible = 0;

	bitmap_init(&allowed);
	if (a->allowed) {
		if (bitmap_parse_list(&allowed, a->allowed))
			return opt_error(&topo_cmd, "--allowed-cpus: expected a CPU list like 0-3,8, got '%s'",
					 SBUF_CLIP(a->allowed));
		req.allowed = &allowed;
	}
	if (a->visible) {
		if (parse_gpu_list(a->visible, &visible, &n_visible)) {
			bitmap_release(&allowed);
			return opt_error(&topo_cmd, "--visible-gpus: expected indices like 0,2, got '%s'",
					 SBUF_CLIP(a->visible));
		}
		req.visible_gpus = visible ? visible : (const int[]){ 0 };
		req.n_visible_gpus = n_visible;
	}
	topo_init(&t);
	plan_init(&p);
	status = load(a, &t);
	if (status)
		goto out;
	if (plan_slices(&t, &req, &p, &dl)) {
		diag_report_as(stderr, "hpctrain topo", &dl);
		status = HPT_EXIT_TOPOLOGY;
		goto out;
	}
	if (a->json) {
		status = json_print(show_json_plan(&t, &p));
	} else {
		show_plan_table(&t, &p, &out);
		fputs(out.buf, stdout);
	}
out:
	sbuf_release(&out);
	plan_release(&p);
	topo_release(&t);
	diag_list_release(&dl);
	bitmap_release(&allowed);
	free(visible);
	return status;
}

static int set_policy(struct topo_args *a, const char *key, const char *value)
{
	if (!plan_policy_set(&a->policy, key, value))
		return 0;
	return opt_error(&topo_cmd, "--%s: unknown policy '%s'", key, SBUF_CLIP(value));
}

int cmd_topo(int argc, char **argv)
{
	struct topo_args a = { .policy = PLAN_POLICY_INIT, .ranks = -1 };
	int c, rc;

	a.input = getenv("HPCTRAIN_TOPOLOGY");
	if (a.input && !*a.input)
		a.input = NULL;
	opt_reset();
	while ((c = opt_next(&topo_cmd, argc, argv)) != -1) {
		char *end;

		switch (c) {
		case 'i':
			a.input = optarg;
			break;
		case 'j':
			a.json = 1;
			break;
		case OPT_EXPORT_XML:
			a.export_xml = optarg;
			break;
		case OPT_GRES_CONF:
			a.gres_conf = 1;
			break;
		case OPT_RANKS:
			a.ranks = strtol(optarg, &end, 10);
			if (*end || end == optarg || a.ranks < 1 || a.ranks > PLAN_MAX_RANKS)
				return opt_error(&topo_cmd, "--ranks-per-node: expected 1..%d, got '%s'",
						 PLAN_MAX_RANKS, SBUF_CLIP(optarg));
			break;
		case OPT_CPU:
		case OPT_GPU:
		case OPT_NIC:
		case OPT_MEMORY:
			rc = set_policy(&a, c == OPT_CPU ? "cpu" : c == OPT_GPU ? "gpu" :
					    c == OPT_NIC ? "nic" : "memory", optarg);
			if (rc)
				return rc;
			break;
		case OPT_ALLOWED:
			a.allowed = optarg;
			break;
		case OPT_VISIBLE:
			a.visible = optarg;
			break;
		case 'h':
			opt_usage(stdout, &topo_cmd);
			return HPT_EXIT_OK;
		default:
			return HPT_EXIT_USAGE;
		}
	}
	if (optind < argc && !strcmp(argv[optind], "plan")) {
		a.plan = 1;
		optind++;
	}
	if (optind < argc)
		return opt_error(&topo_cmd, "unexpected argument '%s'", SBUF_CLIP(argv[optind]));
	if (a.plan && a.ranks < 0)
		return opt_error(&topo_cmd, "plan needs --ranks-per-node");
	if (!a.plan && (a.ranks >= 0 || a.allowed || a.visible))
		return opt_error(&topo_cmd, "--ranks-per-node, --allowed-cpus and --visible-gpus belong to 'topo plan'");
	if (a.json + a.gres_conf + !!a.export_xml > 1)
		return opt_error(&topo_cmd, "--json, --gres-conf and --export-xml exclude each other");
	return a.plan ? plan(&a) : show(&a);
}
