/* straggle.c - slow ranks named while the trainer runs (straggle.h).
 * Shell: MPI on the control communicator, through the watchdog. */
#include "trainer/comm/straggle.h" // defines: struct straggle, straggle_*
#include "trainer/comm/comm.h"     // defines: struct comm
#include "trainer/comm/watchdog.h" // defines: watchdog_wait_all
#include "trainer/metrics.h"       // defines: metrics_straggler
#include "common/nodename.h"       // defines: nodename_self
#include "common/say.h"            // defines: say
#include "common/sbuf.h"           // defines: struct sbuf, xcalloc
#include "common/spec/spec.h"      // defines: struct job, STRAGGLER_*

#include <mpi.h>
#include <stdlib.h>
#include <string.h>

/* Node names travel in this many bytes (Slurm's are far shorter). */
#define NODE_BYTES 256

int straggle_init(struct straggle *s, const struct comm *c)
{
	const struct job_straggler *js = &c->job->straggler;

	memset(s, 0, sizeof(*s));
	s->on = c->mpi && c->world > 1;
	s->window = js->steps < STRAGGLER_WINDOW ? (int)js->steps : STRAGGLER_WINDOW;
	if (!s->on || c->rank)
		return 0;
	if (straggler_init(&s->det, js->threshold, js->steps, (size_t)c->world))
		return -1;
	s->all = malloc((size_t)c->world * 4 * sizeof(double));
	if (!s->all)
		return -1;
	s->cv = s->all + 2 * c->world;
	s->mv = s->cv + c->world;
	return 0;
}

void straggle_release(struct straggle *s)
{
	straggler_release(&s->det);
	free(s->all);
	memset(s, 0, sizeof(*s));
}

static void wait_one(struct comm *c, MPI_Request *q, const char *what)
{
	watchdog_wait_all(&c->wd, q, 1, what);
}

/* Rank 0: the window's verdict; the rank named (at most one a window:
 * a second is named at the next) or -1. */
static int judge(struct straggle *s, int world, int64_t to, struct straggler_hit *h)
{
	for (int r = 0; r < world; r++) {
		s->cv[r] = s->all[2 * r];
		s->mv[r] = s->all[2 * r + 1];
	}
	return straggler_observe(&s->det, s->from, to, s->cv, s->mv, h, 1) ? h->rank : -1;
}

/* Rank 0: the log line and the record. */
static int name_it(const struct comm *c, struct metrics *mt, const struct straggler_hit *h,
		   const char *node)
{
	struct sbuf line = SBUF_INIT;
	int rc;

	straggler_describe(h, node, &line);
	say("slow rank: %s%s", line.buf,
	    c->job->straggler.action == STRAGGLER_EXCLUDE ? "; its node is to be excluded" : "");
	sbuf_release(&line);
	rc = metrics_straggler(mt, h, node, c->job->straggler.threshold, c->job->straggler.steps,
			       straggler_action_names[c->job->straggler.action]);
	return rc;
}

int straggle_step(struct straggle *s, struct comm *c, struct metrics *mt, int64_t step,
		  double compute_ms, double own_ms)
{
	double mine[2], scratch[STRAGGLER_WINDOW];
	struct straggler_hit h;
	char node[NODE_BYTES];
	MPI_Request q;
	int named = -1;

	if (!s->on)
		return 0;
	if (!s->n)
		s->from = step;
	s->compute[s->n] = compute_ms;
	s->own[s->n++] = own_ms;
	if (s->n < s->window)
		return 0;
	mine[0] = straggler_median(s->compute, (size_t)s->n, scratch);
	mine[1] = straggler_median(s->own, (size_t)s->n, scratch);
	s->n = 0;
	if (MPI_Igather(mine, 2, MPI_DOUBLE, s->all, 2, MPI_DOUBLE, 0, *(MPI_Comm *)c->ctl, &q))
		return -1;
	wait_one(c, &q, "the gather of the ranks' step times");
	if (!c->rank)
		named = judge(s, c->world, step, &h);
	if (MPI_Ibcast(&named, 1, MPI_INT, 0, *(MPI_Comm *)c->ctl, &q))
		return -1;
	wait_one(c, &q, "the broadcast of a slow rank");
	if (named < 0)
		return 0;
	memset(node, 0, sizeof(node));
	if (c->rank == named)
		strncpy(node, nodename_self(), sizeof(node) - 1);
	if (MPI_Ibcast(node, NODE_BYTES, MPI_CHAR, named, *(MPI_Comm *)c->ctl, &q))
		return -1;
	wait_one(c, &q, "the broadcast of a slow rank's node");
	node[NODE_BYTES - 1] = '\0';
	return c->rank ? 0 : name_it(c, mt, &h, node);
}
