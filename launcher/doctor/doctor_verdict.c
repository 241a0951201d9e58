/* doctor_verdict.c - the failed nodes, their hostlist and the ledger's
 * events, from graded nodes (see doctor_verdict.h).
 * Pure core: no I/O, no clock; the ledger file is doctor_record.c's. */
#include "launcher/doctor/doctor_verdict.h" // defines: struct doctor_verdict, doctor_verdict_make
#include "launcher/slurm/slurm.h"           // defines: hpt_slurm_hostlist

#include <stdbool.h>
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

/* The first failed check in table order, or DOCTOR_NCHECKS. */
static int first_failed(const struct doctor_node *n)
{
	int c = 0;

	while (c < DOCTOR_NCHECKS && n->cell[c].grade != DOCTOR_FAIL)
		c++;
	return c;
}

static void first_problem(const struct doctor_node *n, struct sbuf *out)
{
	int c = first_failed(n);

	if (c < DOCTOR_NCHECKS)
		sbuf_addf(out, "%s: %s", doctor_check_name(c), n->cell[c].reason ? n->cell[c].reason : "");
}

/* Whether n >= 2 nodes all failed the same check first: then it is the
 * job's problem, said in out. */
static bool job_fault(const struct doctor_node *nodes, size_t n, struct sbuf *out)
{
	int c = n >= 2 ? first_failed(&nodes[0]) : DOCTOR_NCHECKS;

	for (size_t i = 1; c < DOCTOR_NCHECKS && i < n; i++)
		if (first_failed(&nodes[i]) != c)
			return false;
	if (c == DOCTOR_NCHECKS)
		return false;
	sbuf_addf(out, "every node failed %s first; %s: ", doctor_check_name(c), nodes[0].node);
	first_problem(&nodes[0], out);
	return true;
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
	sbuf_init(&out->job_fault);
	if (job_fault(nodes, n, &out->job_fault)) {
		out->failed = xcalloc(1, sizeof(*out->failed));
		return;
	}
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
	sbuf_release(&v->job_fault);
	memset(v, 0, sizeof(*v));
}
