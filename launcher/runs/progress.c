/* progress.c - parse the tail of metrics.jsonl and say how far a run is.
 * Core: see progress.h (progress_load is its one reader). */
#include "launcher/runs/progress.h" // defines: struct run_progress, progress_*
#include "common/metrics_line.h" // defines: metrics_line_load, metrics_line_plausible
#include "common/runfile.h" // defines: RUNFILE_*
#include "common/fileio.h"     // defines: fileio_open_regular
#include "common/sbuf.h"       // defines: struct sbuf, sbuf_add_number

#include <fcntl.h>
#include <jansson.h>
#include <math.h> /* isfinite, a macro: the login-node binary links no libm */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static double num(json_t *o, const char *key)
{
	return json_number_value(json_object_get(o, key));
}

static void take(json_t *o, struct run_progress *p)
{
	const char *ev = json_string_value(json_object_get(o, "event"));

	/* as report and plan read it: a figure no run logs is no progress */
	if (!ev || !metrics_line_plausible(o))
		return;
	if (!strcmp(ev, "step") && json_is_integer(json_object_get(o, "step"))) {
		p->step_seen = true;
		p->step = json_integer_value(json_object_get(o, "step"));
		if (json_is_integer(json_object_get(o, "total_steps")))
			p->total_steps = json_integer_value(json_object_get(o, "total_steps"));
		p->samples_per_s = num(o, "samples_per_s");
		p->step_ms = num(o, "step_ms");
	} else if (!strcmp(ev, "epoch")) {
		p->epoch_seen = true;
		p->epoch = json_integer_value(json_object_get(o, "epoch"));
		p->epoch_test_accuracy = num(o, "test_accuracy");
		p->epoch_test_loss = num(o, "test_loss");
	} else if (!strcmp(ev, "summary")) {
		p->summary_seen = true;
		p->test_accuracy = num(o, "test_accuracy");
		p->test_loss = num(o, "test_loss");
		p->mean_samples_per_s = num(o, "mean_samples_per_s");
	} else if (!strcmp(ev, "data")) {
		data_read_take(&p->data, o);
	}
}

void progress_parse(const char *text, size_t len, struct run_progress *p)
{
	const char *end = text + len;

	memset(p, 0, sizeof(*p));
	for (const char *line = text; line < end;) {
		const char *nl = memchr(line, '\n', (size_t)(end - line));
		size_t n = nl ? (size_t)(nl - line) : (size_t)(end - line);
		size_t bad = 0; /* a tail's first line is cut: never counted */
		json_t *o = metrics_line_load(line, n, &bad);

		if (json_is_object(o))
			take(o, p);
		json_decref(o);
		line += n + 1;
	}
}

double progress_eta_s(const struct run_progress *p)
{
	if (!p->step_seen || p->total_steps <= 0 || p->step_ms <= 0)
		return -1;
	if (p->step >= p->total_steps)
		return 0;
	return (double)(p->total_steps - p->step) * p->step_ms / 1e3;
}

/* A whole run's length at its logged pace, or -1. */
static double run_length_s(const struct run_progress *p)
{
	if (!p->step_seen || p->total_steps <= 0 || p->step_ms <= 0)
		return -1;
	return (double)p->total_steps * p->step_ms / 1e3;
}

/* Restores the min-heap h[0..n) below i: the slot that frees first on top. */
static void sift_down(double *h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, m = i;
		double t;

		if (l < n && h[l] < h[m])
			m = l;
		if (l + 1 < n && h[l + 1] < h[m])
			m = l + 1;
		if (m == i)
			return;
		t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

/* The slots are a min-heap: O(n log slots).  A scan of the slots per
 * queued point was O(n^2) for an array without a cap (a slot per
 * point), 10^8 steps per poll of status --wait at 10,000 points.  Which
 * of two equal slots takes a point does not change the slots' values. */
double progress_queue_eta_s(const struct queued_point *pt, size_t n, size_t cap)
{
	double mean = 0, *slot, eta = 0;
	size_t paced = 0, running = 0, nslot;

	for (size_t i = 0; i < n; i++) {
		double len = run_length_s(pt[i].prog);

		if (len >= 0) {
			mean += len;
			paced++;
		}
		running += pt[i].running && !pt[i].done;
	}
	if (!paced)
		return -1;
	mean /= (double)paced;
	/* Slurm may run more than the cap says (a cap lowered by scontrol) */
	nslot = cap && cap < n ? (cap > running ? cap : running) : n;
	if (!nslot)
		return 0;
	slot = xcalloc(nslot, sizeof(*slot));
	for (size_t i = 0, k = 0; i < n; i++) {
		double left = progress_eta_s(pt[i].prog);

		if (pt[i].done || !pt[i].running)
			continue;
		slot[k++] = left >= 0 ? left : mean;
	}
	for (size_t k = nslot / 2; k-- > 0;)
		sift_down(slot, nslot, k);
	/* the queue in task order, each to the slot that frees first */
	for (size_t i = 0; i < n; i++) {
		if (pt[i].done || pt[i].running)
			continue;
		slot[0] += mean;
		sift_down(slot, nslot, 0);
	}
	for (size_t k = 0; k < nslot; k++)
		if (slot[k] > eta)
			eta = slot[k];
	free(slot);
	return eta;
}

void progress_add_duration(struct sbuf *out, double s)
{
	long long t;

	/* a pace from metrics.jsonl can be anything: no cast beyond long long */
	if (!(s >= 0) || s >= 1e12) {
		if (s >= 1e12 && isfinite(s))
			sbuf_addf(out, "%.3gh", s / 3600);
		else
			sbuf_addch(out, '-');
		return;
	}
	t = (long long)(s + 0.5);
	if (t >= 3600)
		sbuf_addf(out, "%lldh%02lldm", t / 3600, t / 60 % 60);
	else if (t >= 60)
		sbuf_addf(out, "%lldm%02llds", t / 60, t % 60);
	else
		sbuf_addf(out, "%llds", t);
}

void progress_format(const char *state, const struct run_progress *p, struct sbuf *out)
{
	double eta = progress_eta_s(p);

	sbuf_addstr(out, state);
	if (!p->step_seen)
		return;
	sbuf_addf(out, "  step %lld", (long long)p->step);
	if (p->total_steps > 0) {
		/* in double: 100 * step overflows int64 for a step of 2^57 */
		double pct = 100.0 * (double)p->step / (double)p->total_steps;

		sbuf_addf(out, "/%lld (", (long long)p->total_steps);
		if (pct > -1e12 && pct < 1e12)
			sbuf_addf(out, "%lld", (long long)pct);
		else
			sbuf_add_number(out, pct, 0);
		sbuf_addstr(out, "%)");
	}
	sbuf_addstr(out, "  ");
	sbuf_add_number(out, p->samples_per_s, 0);
	sbuf_addstr(out, " samples/s per rank");
	if (eta > 0 && !p->summary_seen) {
		sbuf_addstr(out, "  ETA ");
		progress_add_duration(out, eta);
	}
}

bool progress_final(const struct run_progress *p, double *acc, double *loss)
{
	if (p->summary_seen) {
		*acc = p->test_accuracy;
		*loss = p->test_loss;
		return true;
	}
	*acc = p->epoch_test_accuracy;
	*loss = p->epoch_test_loss;
	return p->epoch_seen;
}

void progress_load(const char *dir, struct run_progress *p)
{
	char *path = xasprintf("%s/" RUNFILE_METRICS, dir);
	struct sbuf buf = SBUF_INIT, ignored = SBUF_INIT;
	/* not there yet, or not a regular file (a FIFO would block status):
	 * no progress to show */
	int fd = fileio_open_regular(path, 0, &ignored);
	struct stat st;

	memset(p, 0, sizeof(*p));
	free(path);
	sbuf_release(&ignored);
	if (fd < 0)
		return;
	if (!fstat(fd, &st)) {
		off_t from = st.st_size > PROGRESS_TAIL_BYTES ? st.st_size - PROGRESS_TAIL_BYTES : 0;
		char chunk[8192];
		ssize_t n;

		while ((n = pread(fd, chunk, sizeof(chunk), from)) > 0) {
			sbuf_add(&buf, chunk, (size_t)n);
			from += n;
			if (buf.len > 2 * PROGRESS_TAIL_BYTES) /* growing while read: enough */
				break;
		}
	}
	progress_parse(buf.buf, buf.len, p);
	if (!p->data.seen && buf.len) {
		struct run_progress head;
		char chunk[PROGRESS_HEAD_BYTES];
		ssize_t n = pread(fd, chunk, sizeof(chunk), 0);
		/* the head's last line may be cut: progress_parse skips it */

		if (n > 0) {
			progress_parse(chunk, (size_t)n, &head);
			p->data = head.data;
		}
	}
	close(fd);
	sbuf_release(&buf);
}
