/* straggler.h - slow ranks named: each rank's time per step compared
 * with the median of the ranks', and a rank that stays above threshold
 * times the median for a number of steps in a row named once.
 *
 * Pure core: figures in, verdicts out; no clock, no MPI, no I/O.  The
 * bundled trainer's rank 0 feeds it every STRAGGLER_WINDOW steps with
 * each rank's median compute and own-communication time over the
 * window (trainer/comm/straggle.c gathers them); report and status feed
 * it a user program's logged steps, each rank's time being the inverse
 * of its rank_samples_per_s (launcher/report/report_straggler.c).  Both
 * then say the same thing in the same words (straggler_describe).
 *
 * Cost: O(ranks) memory and O(ranks log ranks) work per observation, on the one
 * process that observes (a sort for the median); nothing per step.
 */
#ifndef HPT_STRAGGLER_H
#define HPT_STRAGGLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sbuf;

/* The trainer compares every this many steps (or every straggler.steps
 * steps when fewer): the median of a rank's own steps in a window, so
 * one slow step (a page fault, a daemon waking) is not a slow rank. */
#define STRAGGLER_WINDOW 10

/* Why a named rank is slow: its compute, its own communication (the
 * time it spends in communication calls that do not wait for a peer),
 * or, from a program's rates alone, not known. */
enum straggler_cause { STRAGGLER_COMPUTE, STRAGGLER_COMM, STRAGGLER_RATE };
extern const char *const straggler_cause_names[];

/* A rank named: over steps [from, to] (all of them observed slow) its
 * time was slower times the median's on average; at the last
 * observation its time and the median's (ms, compute and own
 * communication; comm NAN when not known). */
struct straggler_hit {
	int rank;
	int64_t from, to;
	double slower;
	enum straggler_cause cause;
	double compute_ms, median_compute_ms, comm_ms, median_comm_ms;
};

/* The detector's state over world ranks.  since[r] < 0: rank r is not
 * in a slow streak; named[r]: this streak was reported. */
struct straggler {
	double threshold;
	int64_t steps;
	size_t world;
	int64_t *since;
	double *sum_ratio;
	int64_t *nobs;
	bool *named;
	double *scratch;
};

/* threshold > 1, steps >= 1.  0, or -1 out of memory (s released). */
int straggler_init(struct straggler *s, double threshold, int64_t steps, size_t world);
void straggler_release(struct straggler *s);

/* The lower median of v[0..n) (the middle value, the smaller of the two
 * middle ones for an even n: with two ranks the faster is the
 * reference), ignoring values that are not finite or below 0; NAN when
 * none is left.  scratch holds n doubles; v is not changed. */
double straggler_median(const double *v, size_t n, double *scratch);

/* One observation of steps [from, to]: compute[r] and comm[r] (ms, comm
 * may be NULL) of each of the world ranks; a value that is not finite
 * and >= 0 leaves its rank unjudged (its streak ends).  A rank is slow
 * when compute + comm is above threshold times the median of the ranks'
 * sums; the cause is the part further above its own median.  A rank
 * slow at every observation since its streak began, over at least
 * steps steps, is written to hits (at most max, by rank) and
 * not again until its streak ends (past max, at a later observation).
 * Fewer than 2 ranks with figures: nothing judged.  Returns the number of hits written. */
size_t straggler_observe(struct straggler *s, int64_t from, int64_t to, const double *compute,
			 const double *comm, struct straggler_hit *hits, size_t max);

/* "rank 1 on node2 is 1.43x slower than the median over steps 11-60:
 * its compute (41.2 ms a step against 28.8 ms)"; node may be NULL. */
void straggler_describe(const struct straggler_hit *h, const char *node, struct sbuf *out);

#endif
