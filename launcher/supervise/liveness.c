/* liveness.c - write and read the per-rank liveness files, and say what
 * a rank is doing from one (see liveness.h). */
#include "launcher/supervise/liveness.h" // defines: liveness_write, liveness_load_dir, liveness_activity
#include "launcher/supervise/autopsy.h"  // defines: autopsy_format_ranks
#include "common/fileio.h"        // defines: fileio_write_unsynced
#include "common/jsonfile.h"      // defines: jsonfile_load
#include "common/sbuf.h"          // defines: struct sbuf
#include "common/strfmt.h" // defines: strfmt_label
#include "common/jsonb.h" // defines: jsonb_text

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MARK_NAME "progress"

static json_t *time_or_null(double t)
{
	return t > 0 ? json_real(t) : json_null();
}

int liveness_write(const char *dir, const struct liveness *l, struct sbuf *err)
{
	struct sbuf path = SBUF_INIT;
	char *text = NULL;
	/* the node's name is the host's, bytes: carried escaped, so a rank
	 * is never without its record */
	json_t *doc = json_pack("{s:i, s:i, s:o, s:i, s:i, s:s, s:f, s:f, s:f, s:o, s:o, s:o, s:I}",
				"rank", (int)l->rank, "world_size", (int)l->world, "node",
				jsonb_text(l->host), "pid", (int)l->pid, "supervisor_pid",
				(int)getpid(), "state", l->state,
				"started", l->started, "updated", l->updated,
				"cpu_s", l->cpu_s,
				"last_output", time_or_null(l->last_output),
				"last_heartbeat", time_or_null(l->last_heartbeat),
				"last_progress", time_or_null(l->last_progress),
				"output_bytes", (json_int_t)l->output_bytes);
	int rc = -1;

	if (!doc) {
		sbuf_addf(err, "cannot encode the liveness record of rank %u", l->rank);
		goto out;
	}
	json_object_set_new(doc, "exit_status", l->exit_status >= 0 ? json_integer(l->exit_status)
								  : json_null());
	json_object_set_new(doc, "signal", l->signal ? json_integer(l->signal) : json_null());
	json_object_set_new(doc, "first_heartbeat", time_or_null(l->first_heartbeat));
	if (l->oom_kills >= 0)
		json_object_set_new(doc, "oom_kills", json_integer(l->oom_kills));
	if (l->contract)
		json_object_set(doc, "contract", l->contract);
	if (l->inside)
		json_object_set(doc, "contract_inside", l->inside);
	sbuf_addf(&path, "%s/rank-%u.json", dir, l->rank);
	/* a mkstemp file renamed over the name: never the fixed temporary
	 * name .rank-N.json.tmp, which a link could have been planted at */
	text = json_dumps(doc, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
	if (!text)
		sbuf_addf(err, "cannot encode %s", path.buf);
	else
		rc = fileio_write_unsynced(path.buf, text, strlen(text), 0600, err);
out:
	free(text);
	json_decref(doc);
	sbuf_release(&path);
	return rc;
}

double liveness_cpu_seconds(pid_t pid)
{
	char path[64], buf[1024];
	unsigned long long ut, st;
	const char *p;
	FILE *f;
	size_t n;

	/* encode-ok: a pid in a /proc path: at most 11 digits more */
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (!(f = fopen(path, "r"))) /* open-ok: /proc, the kernel's */
		return -1;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* comm may hold blanks and parentheses: fields count from the last ')'. */
	if (!(p = strrchr(buf, ')')) ||
	    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
		return -1;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

static int is_liveness_name(const char *path)
{
	const char *b = strrchr(path, '/');

	b = b ? b + 1 : path;
	return !strncmp(b, "rank-", 5) && !strstr(b, ".stacks.");
}

static int by_rank(const void *a, const void *b)
{
	json_int_t x = json_integer_value(json_object_get(*(json_t *const *)a, "rank"));
	json_int_t y = json_integer_value(json_object_get(*(json_t *const *)b, "rank"));

	return x < y ? -1 : x > y;
}

json_t **liveness_load_dir(const char *dir, size_t *n)
{
	struct sbuf pat = SBUF_INIT, err = SBUF_INIT;
	json_t **v = NULL;
	glob_t g;

	*n = 0;
	sbuf_addf(&pat, "%s/rank-*.json", dir);
	if (!glob(pat.buf, 0, NULL, &g)) {
		v = xcalloc(g.gl_pathc, sizeof(*v));
		for (size_t i = 0; i < g.gl_pathc; i++) {
			json_t *doc;

			if (!is_liveness_name(g.gl_pathv[i]))
				continue;
			doc = jsonfile_load(g.gl_pathv[i], LIVENESS_MAX_BYTES, 0, &err);
			sbuf_reset(&err); /* a rank's file being replaced: skip it */
			if (json_is_integer(json_object_get(doc, "rank")))
				v[(*n)++] = doc;
			else
				json_decref(doc);
		}
		globfree(&g);
		qsort(v, *n, sizeof(*v), by_rank);
	}
	sbuf_release(&pat);
	sbuf_release(&err);
	return v;
}

double liveness_latest_progress(const char *dir, unsigned self, unsigned *files)
{
	size_t n;
	json_t **v = liveness_load_dir(dir, &n);
	double latest = 0;

	*files = 0;
	for (size_t i = 0; i < n; i++) {
		double t = json_number_value(json_object_get(v[i], "last_progress"));

		if ((unsigned)json_integer_value(json_object_get(v[i], "rank")) != self) {
			(*files)++;
			if (t > latest)
				latest = t;
		}
		json_decref(v[i]);
	}
	free(v);
	return latest;
}

int liveness_mark_open(const char *dir, struct sbuf *err)
{
	struct sbuf path = SBUF_INIT;
	int fd;

	sbuf_addf(&path, "%s/" MARK_NAME, dir);
	/* open-ok: created here or vetted below (a regular file of this user's) */
	fd = open(path.buf, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0600);
	if (fd < 0)
		sbuf_addf(err, "cannot open %s: %s", path.buf, strerror(errno));
	else
		fd = fileio_vet_fd(fd, path.buf, FILEIO_OWNED, err);
	sbuf_release(&path);
	return fd;
}

int liveness_mark_due(double seen, double progress, double period)
{
	return progress - seen >= period;
}

static double mtime_of(const struct stat *st)
{
	return (double)st->st_mtim.tv_sec + st->st_mtim.tv_nsec / 1e9;
}

double liveness_mark_note(int fd, double seen, double progress, double period)
{
	struct stat st;

	if (fd < 0 || !liveness_mark_due(seen, progress, period))
		return seen;
	if (!fstat(fd, &st) && mtime_of(&st) > seen)
		seen = mtime_of(&st);
	if (!liveness_mark_due(seen, progress, period))
		return seen;
	/* now, by the file system's clock: at or after progress */
	return futimens(fd, NULL) ? seen : progress;
}

double liveness_mark_read(const char *dir)
{
	struct sbuf path = SBUF_INIT, err = SBUF_INIT;
	struct stat st;
	double t = 0;
	int fd;

	sbuf_addf(&path, "%s/" MARK_NAME, dir);
	fd = fileio_open_regular(path.buf, FILEIO_NOFOLLOW | FILEIO_OWNED, &err);
	if (fd >= 0 && !fstat(fd, &st))
		t = mtime_of(&st);
	if (fd >= 0)
		close(fd);
	sbuf_release(&path);
	sbuf_release(&err);
	return t;
}

void liveness_activity(json_t *r, double now, char *buf, size_t len)
{
	const char *state = json_string_value(json_object_get(r, "state"));
	double last = json_number_value(json_object_get(r, "last_progress"));
	json_t *ex = json_object_get(r, "exit_status");
	int sig = (int)json_integer_value(json_object_get(r, "signal"));

	if (!state)
		state = "?";
	if (json_is_integer(ex) && sig)
		strfmt_label(buf, len, "%s %d (SIG%s)", state, (int)json_integer_value(ex),
			 sigabbrev_np(sig) ? sigabbrev_np(sig) : "?");
	else if (json_is_integer(ex))
		strfmt_label(buf, len, "%s %d", state, (int)json_integer_value(ex));
	else if (strcmp(state, "running"))
		strfmt_label(buf, len, "%s", state);
	else if (last > 0 && now - last > 2 * LIVENESS_PERIOD_S)
		strfmt_label(buf, len, "idle %.0fs", now - last);
	else
		strfmt_label(buf, len, "progressing");
}

double liveness_period(int64_t stall_s)
{
	if (stall_s <= 0 || stall_s >= 2 * LIVENESS_PERIOD_S)
		return LIVENESS_PERIOD_S;
	return stall_s < 2 ? 1 : (double)stall_s / 2;
}

bool liveness_has_started(json_t *r, bool output_counts)
{
	return json_number_value(json_object_get(r, "last_heartbeat")) > 0 ||
	       (output_counts && json_number_value(json_object_get(r, "last_output")) > 0);
}

/* The ranks below world in v that did not start, grouped by node in the
 * order the nodes first appear: O(n x nodes), once, when a job ends. */
static void say_starting(json_t **v, size_t n, unsigned world, bool output_counts,
			 struct sbuf *out)
{
	unsigned *ranks = xcalloc(n ? n : 1, sizeof(*ranks));
	bool *done = xcalloc(n ? n : 1, sizeof(*done));
	const char *sep = "starting: ";

	for (size_t i = 0; i < n; i++) {
		const char *node = json_string_value(json_object_get(v[i], "node"));
		size_t k = 0;

		if (done[i])
			continue;
		for (size_t j = i; j < n; j++) {
			const char *other = json_string_value(json_object_get(v[j], "node"));
			json_int_t r = json_integer_value(json_object_get(v[j], "rank"));

			if (done[j] || (node ? !other || strcmp(node, other) : !!other))
				continue;
			done[j] = true;
			if (r >= 0 && (unsigned long long)r < world &&
			    !liveness_has_started(v[j], output_counts))
				ranks[k++] = (unsigned)r;
		}
		if (!k)
			continue;
		sbuf_addstr(out, sep);
		autopsy_format_ranks(ranks, k, out);
		sbuf_addstr(out, " on ");
		sbuf_add_printable(out, node ? node : "?");
		sep = ", ";
	}
	free(ranks);
	free(done);
}

void liveness_say_unstarted(json_t **v, size_t n, unsigned world, bool output_counts,
			    struct sbuf *out)
{
	unsigned *missing = xcalloc(world ? world : 1, sizeof(*missing));
	struct sbuf starting = SBUF_INIT;
	size_t nmissing = 0, i = 0;

	/* v is sorted by rank: walk both */
	for (unsigned r = 0; r < world; r++) {
		while (i < n && json_integer_value(json_object_get(v[i], "rank")) < (json_int_t)r)
			i++;
		if (i >= n || json_integer_value(json_object_get(v[i], "rank")) != (json_int_t)r)
			missing[nmissing++] = r;
	}
	if (nmissing) {
		sbuf_addstr(out, nmissing == 1 ? "no record from rank " : "no record from ranks ");
		autopsy_format_ranks(missing, nmissing, out);
	}
	say_starting(v, n, world, output_counts, &starting);
	if (starting.len)
		sbuf_addf(out, "%s%s", nmissing ? "; " : "", starting.buf);
	sbuf_release(&starting);
	free(missing);
}
