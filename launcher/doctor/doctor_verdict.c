/* doctor_verdict.c - the failed nodes, their hostlist and the ledger's
 * events, from graded nodes (see doctor_verdict.h).
 * Pure core: no I/O, no clock; the ledger file is doctor_record.c's. */
#include "launcher/doctor/doctor_verdict.h" // defines: struct doctor_verdict, doctor_verdict_make
#include "launcher/slurm/slurm.h"           // defines: hpt_slurm_hostlist

#include <stdlib.h>
#include <string.h>

/* The failed nodes' names, and their hostlist. */
static void failed_nodes(const struct doctor_node *nodes, size_t n, const char ***names,
			 size_t *k, struct sbuf *hostlist)
{
	*names = xcalloc(n + 1, sizeof(**names));
	*k = 0;
	for (size_t i = 0; i < n; i++)
		if (doctor_node_failed(&nodes[i]))
			(*names)[(*k)++] = nodes[i].node;
	if (*k && hpt_slurm_hostlist(NULL, *names, *k, hostlist))
		for (size_t i = 0; i < *k; i++)
			sbuf_addf(hostlist, "%s%s", i ? "," : "", (*names)[i]);
}

static void first_problem(const struct doctor_node *n, struct sbuf *out)
{
	for (int c = 0; c < DOCTOR_NCHECKS; c++)
		if (n->cell[c].grade == DOCTOR_FAIL) {
			sbuf_addf(out, "%s: %s", doctor_check_name(c), n->cell[c].reason ? n->cell[c].reason : "");
			return;
		}
}

/* One event per node: its first problem, its GEMM next to the best. */
static void ledger_events(const struct doctor_node *nodes, size_t n, struct doctor_verdict *v)
{
	double best = 0;

	v->events = xcalloc(n, sizeof(*v->events));
	v->reasons = xcalloc(n, sizeof(*v->reasons));
	v->n = n;
	for (size_t i = 0; i < n; i++)
		if (nodes[i].gemm_gflops > best)
			best = nodes[i].gemm_gflops;
	for (size_t i = 0; i < n; i++) {
		struct sbuf *why = &v->reasons[i];

		sbuf_init(why);
		first_problem(&nodes[i], why);
		v->events[i] = (struct ledger_event){ nodes[i].node, doctor_node_failed(&nodes[i]),
						      why->len ? why->buf : NULL,
						      best > 0 && nodes[i].gemm_gflops > 0 ? nodes[i].gemm_gflops / best : -1 };
	}
}

void doctor_verdict_make(const struct doctor_node *nodes, size_t n, struct doctor_verdict *out)
{
	memset(out, 0, sizeof(*out));
	sbuf_init(&out->exclude);
	failed_nodes(nodes, n, &out->failed, &out->n_failed, &out->exclude);
	ledger_events(nodes, n, out);
}

void doctor_verdict_release(struct doctor_verdict *v)
{
	if (!v)
		return;
	for (size_t i = 0; v->reasons && i < v->n; i++)
		sbuf_release(&v->reasons[i]);
	free(v->reasons);
	free(v->events);
	free(v->failed);
	sbuf_release(&v->exclude);
	memset(v, 0, sizeof(*v));
}
