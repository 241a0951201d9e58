/* ledger.c - the node ledger's document: checking it, recording doctor
 * runs, cooldowns, forgetting, the table.  Core: see ledger.h.
 *
 * The cooldown policy: a node's n-th failure keeps it out for
 * LEDGER_COOLDOWN_BASE_S * 2^(n-1), at most LEDGER_COOLDOWN_MAX_S.
 *
 * One failure seen by several doctors counts once.  Doctors that run at
 * once on one bad node (the preflights of jobs that started together,
 * a doctor per allocation) each record its failure, and counting each
 * doubled the cooldown once per doctor: four of them made an hour
 * eight.  So a failure recorded less than LEDGER_SAME_FAILURE_S from
 * the start of the node's current cooldown (until - cooldown_s; before
 * it too, since a doctor that read the clock first may take the lock
 * last) is that same failure again: checks, last_checked, last_failure,
 * last_score and the reason are recorded, failures, cooldown_s and
 * until stay.  The window is anchored where the cooldown began, not at
 * the last failure, so failures every few minutes still double.  Ten
 * minutes is longer than a doctor run takes (its --timeout defaults to
 * 60 s) and shorter than the first cooldown, so a node that fails again
 * after its first cooldown always counts again.  Rejected: counting a
 * failure only once the cooldown is over (a node that keeps failing
 * while forced in with --no-ledger would never lengthen its cooldown),
 * and one window since last_failure (it slides with every failure).
 *
 * A cooldown is never longer than the policy's week: ledger_clamp cuts
 * an until beyond now + LEDGER_COOLDOWN_MAX_S (a file edited by hand,
 * or written by another version: year 5138 was seen) when the ledger is
 * read and when it is recorded. */
#include "launcher/doctor/ledger.h" // defines: ledger_*, struct ledger_event
#include "common/sbuf.h"     // defines: struct sbuf, sbuf_add_printable, xcalloc, xstrdup
#include "common/jsonb.h" // defines: jsonb_text

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum field_kind { F_COUNT, F_NUMBER, F_STRING };

/* The fields an entry may hold; others are left alone, so a later
 * version's additions survive an older hpctrain's rewrite. */
static const struct {
	const char *name;
	enum field_kind kind;
} fields[] = {
	{ "checks", F_COUNT },       { "failures", F_COUNT },    { "last_checked", F_COUNT },
	{ "last_failure", F_COUNT }, { "last_ok", F_COUNT },     { "cooldown_s", F_COUNT },
	{ "until", F_COUNT },        { "last_score", F_NUMBER }, { "reason", F_STRING },
};

json_t *ledger_new(void)
{
	return json_pack("{s:i, s:{}}", "version", LEDGER_VERSION, "clusters");
}

static const char *field_is_bad(const json_t *v, enum field_kind kind)
{
	switch (kind) {
	case F_COUNT:
		return json_is_integer(v) && json_integer_value(v) >= 0 ? NULL
									: "a non-negative integer";
	case F_NUMBER:
		return json_is_number(v) ? NULL : "a number";
	case F_STRING:
		return json_is_string(v) ? NULL : "a string";
	}
	return "known";
}

static int check_entry(const char *cluster, const char *node, const json_t *e, struct sbuf *err)
{
	if (!json_is_object(e)) {
		sbuf_addf(err, "node \"%s\" of cluster \"%s\" is not an object", node, cluster);
		return -1;
	}
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		const json_t *v = json_object_get(e, fields[i].name);
		const char *want;

		if (v && (want = field_is_bad(v, fields[i].kind))) {
			sbuf_addf(err, "node \"%s\" of cluster \"%s\": \"%s\" is not %s", node,
				  cluster, fields[i].name, want);
			return -1;
		}
	}
	return 0;
}

int ledger_check(const json_t *doc, struct sbuf *err)
{
	const json_t *version = json_object_get(doc, "version");
	json_t *clusters = json_object_get(doc, "clusters"), *c, *e;
	const char *cname, *node;

	if (!json_is_object(doc)) {
		sbuf_addstr(err, "the node ledger is not a JSON object");
		return -1;
	}
	if (!json_is_integer(version) || json_integer_value(version) != LEDGER_VERSION) {
		sbuf_addf(err, "the node ledger's version is not %d (a later hpctrain's?)",
			  LEDGER_VERSION);
		return -1;
	}
	if (!json_is_object(clusters)) {
		sbuf_addstr(err, "the node ledger has no \"clusters\" object");
		return -1;
	}
	json_object_foreach(clusters, cname, c) {
		if (!json_is_object(c)) {
			sbuf_addf(err, "cluster \"%s\" is not an object", cname);
			return -1;
		}
		json_object_foreach(c, node, e)
			if (check_entry(cname, node, e, err))
				return -1;
	}
	return 0;
}

long ledger_cooldown(long failures)
{
	long s = LEDGER_COOLDOWN_BASE_S;

	if (failures <= 0)
		return 0;
	/* Stop doubling at the cap: a node may fail more often than a long has bits. */
	for (long i = 1; i < failures && s < LEDGER_COOLDOWN_MAX_S; i++)
		s *= 2;
	return s < LEDGER_COOLDOWN_MAX_S ? s : LEDGER_COOLDOWN_MAX_S;
}

/* parent[key] as an object, made (or remade, over a non-object) when needed. */
static json_t *child(json_t *parent, const char *key)
{
	json_t *o = json_object_get(parent, key);

	if (!json_is_object(o)) {
		o = json_object();
		json_object_set_new(parent, key, o);
	}
	return o;
}

static json_int_t get_int(const json_t *e, const char *key)
{
	return json_integer_value(json_object_get(e, key));
}

static void set_int(json_t *e, const char *key, json_int_t v)
{
	json_object_set_new(e, key, json_integer(v));
}

/* Whether a failure at now is the one that began e's current cooldown,
 * seen again (see the top of this file). */
static bool is_same_failure(const json_t *e, time_t now)
{
	json_int_t cooldown = get_int(e, "cooldown_s"), began = get_int(e, "until") - cooldown;

	return cooldown > 0 && now - began < LEDGER_SAME_FAILURE_S &&
	       began - now < LEDGER_SAME_FAILURE_S;
}

/* Bounds e's cooldown to the policy's: until at most now + the longest
 * cooldown, cooldown_s at most the longest.  Whether it changed e. */
static bool clamp_entry(json_t *e, time_t now)
{
	bool changed = false;

	if (get_int(e, "until") > now + LEDGER_COOLDOWN_MAX_S) {
		set_int(e, "until", now + LEDGER_COOLDOWN_MAX_S);
		changed = true;
	}
	if (get_int(e, "cooldown_s") > LEDGER_COOLDOWN_MAX_S) {
		set_int(e, "cooldown_s", LEDGER_COOLDOWN_MAX_S);
		changed = true;
	}
	return changed;
}

size_t ledger_clamp(json_t *doc, time_t now)
{
	json_t *clusters = json_object_get(doc, "clusters"), *c, *e;
	const char *cname, *node;
	size_t n = 0;

	json_object_foreach(clusters, cname, c)
		json_object_foreach(c, node, e)
			if (json_is_object(e))
				n += clamp_entry(e, now);
	return n;
}

static void record_one(json_t *e, const struct ledger_event *ev, time_t now)
{
	json_int_t failures;
	bool same;

	set_int(e, "checks", get_int(e, "checks") + 1);
	set_int(e, "last_checked", now);
	if (ev->score >= 0)
		json_object_set_new(e, "last_score", json_real(ev->score));
	if (!ev->failed) {
		set_int(e, "last_ok", now);
		return;
	}
	same = is_same_failure(e, now);
	set_int(e, "last_failure", now);
	/* A failure without a reason must not show an older one as its own. */
	if (ev->reason)
		json_object_set_new(e, "reason", jsonb_text(ev->reason)); /* fails only out of memory */
	else
		json_object_del(e, "reason");
	if (same)
		return;
	failures = get_int(e, "failures") + 1;
	set_int(e, "failures", failures);
	set_int(e, "cooldown_s", ledger_cooldown((long)failures));
	set_int(e, "until", now + ledger_cooldown((long)failures));
}

void ledger_record(json_t *doc, const char *cluster, const struct ledger_event *ev, size_t n,
		   time_t now)
{
	json_t *c = child(child(doc, "clusters"), cluster);

	ledger_clamp(doc, now);
	for (size_t i = 0; i < n; i++)
		if (ev[i].node && *ev[i].node)
			record_one(child(c, ev[i].node), &ev[i], now);
}

/* Removes node from clusters[cname], and the cluster when that empties it. */
static int forget_in(json_t *clusters, const char *cname, const char *node)
{
	json_t *c = json_object_get(clusters, cname);

	if (!json_is_object(c) || json_object_del(c, node))
		return 0;
	if (!json_object_size(c))
		json_object_del(clusters, cname);
	return 1;
}

int ledger_forget(json_t *doc, const char *cluster, const char *node)
{
	json_t *clusters = json_object_get(doc, "clusters"), *c;
	const char *cname;
	void *tmp;
	int n = 0;

	if (!json_is_object(clusters))
		return 0;
	if (cluster)
		return forget_in(clusters, cluster, node);
	json_object_foreach_safe(clusters, tmp, cname, c)
		n += forget_in(clusters, cname, node);
	return n;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The keys of obj, sorted; *keys is malloc'd (NULL when none). */
static size_t sorted_keys(const json_t *obj, const char ***keys)
{
	size_t n = json_object_size(obj), i = 0;
	const char *k;
	json_t *v;

	*keys = n ? xcalloc(n, sizeof(**keys)) : NULL;
	json_object_foreach((json_t *)obj, k, v)
		(*keys)[i++] = k;
	if (n)
		qsort(*keys, n, sizeof(**keys), by_name);
	return n;
}

const json_t *ledger_entry(const json_t *doc, const char *cluster, const char *node)
{
	const json_t *e = json_object_get(json_object_get(json_object_get(doc, "clusters"), cluster),
					  node);

	return json_is_object(e) ? e : NULL;
}

size_t ledger_cooling(const json_t *doc, const char *cluster, time_t now, const char ***nodes)
{
	const json_t *c = json_object_get(json_object_get(doc, "clusters"), cluster);
	size_t n = sorted_keys(json_is_object(c) ? c : NULL, nodes), k = 0;

	for (size_t i = 0; i < n; i++)
		if (get_int(json_object_get(c, (*nodes)[i]), "until") > now)
			(*nodes)[k++] = (*nodes)[i];
	if (!k) {
		free(*nodes);
		*nodes = NULL;
	}
	return k;
}

/* s with what a terminal would act on escaped (sbuf_add_printable):
 * a reason and a node name come from a file anyone may have written.
 * malloc'd. */
static char *escaped(const char *s)
{
	struct sbuf out = SBUF_INIT;

	sbuf_add_printable(&out, s);
	return sbuf_detach(&out, NULL);
}

/* "6d 23h", "2h 10m", "45m", "30s". */
static void add_span(struct sbuf *out, long s)
{
	if (s >= 86400)
		sbuf_addf(out, "%ldd %ldh", s / 86400, s % 86400 / 3600);
	else if (s >= 3600)
		sbuf_addf(out, "%ldh %ldm", s / 3600, s % 3600 / 60);
	else if (s >= 60)
		sbuf_addf(out, "%ldm", s / 60);
	else
		sbuf_addf(out, "%lds", s);
}

static void add_state(struct sbuf *out, const json_t *e, time_t now)
{
	time_t until = (time_t)get_int(e, "until");
	char when[32];
	struct tm tm;

	if (until <= now) {
		sbuf_addstr(out, "ok");
		return;
	}
	gmtime_r(&until, &tm);
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M", &tm);
	sbuf_addf(out, "cooling until %s (", when);
	add_span(out, (long)(until - now));
	sbuf_addstr(out, " left)");
}

enum { COL_CLUSTER, COL_NODE, COL_FAILURES, COL_CHECKS, COL_SCORE, COL_STATE, COL_REASON, NCOL };

static const char *const headers[NCOL] = {
	"CLUSTER", "NODE", "FAILURES", "CHECKS", "SCORE", "STATE", "REASON",
};

struct row {
	char *col[NCOL];
};

static void fill_row(struct row *r, const char *cluster, const char *node, const json_t *e,
		     time_t now)
{
	const json_t *score = json_object_get(e, "last_score");
	const char *reason = json_string_value(json_object_get(e, "reason"));
	struct sbuf state = SBUF_INIT;

	add_state(&state, e, now);
	r->col[COL_CLUSTER] = escaped(cluster);
	r->col[COL_NODE] = escaped(node);
	r->col[COL_FAILURES] = xasprintf("%lld", (long long)get_int(e, "failures"));
	r->col[COL_CHECKS] = xasprintf("%lld", (long long)get_int(e, "checks"));
	r->col[COL_SCORE] = json_is_number(score) ? xasprintf("%.2f", json_number_value(score))
						  : xstrdup("-");
	r->col[COL_STATE] = sbuf_detach(&state, NULL);
	r->col[COL_REASON] = escaped(reason ? reason : "-");
}

/* Each row's cells padded to the widest of their column, the last not. */
static void add_rows(struct sbuf *out, struct row *rows, size_t n)
{
	size_t width[NCOL] = { 0 };

	for (size_t i = 0; i < n; i++)
		for (int c = 0; c < NCOL; c++)
			if (strlen(rows[i].col[c]) > width[c])
				width[c] = strlen(rows[i].col[c]);
	for (size_t i = 0; i < n; i++) {
		for (int c = 0; c < NCOL - 1; c++)
			sbuf_addf(out, "%-*s  ", (int)width[c], rows[i].col[c]);
		sbuf_addf(out, "%s\n", rows[i].col[NCOL - 1]);
	}
}

void ledger_format(const json_t *doc, time_t now, struct sbuf *out)
{
	const json_t *clusters = json_object_get(doc, "clusters");
	const char **cnames, **nodes;
	size_t nc = sorted_keys(json_is_object(clusters) ? clusters : NULL, &cnames);
	struct row *rows = xcalloc(1, sizeof(*rows));
	size_t n = 1;

	for (int c = 0; c < NCOL; c++)
		rows[0].col[c] = xstrdup(headers[c]);
	for (size_t i = 0; i < nc; i++) {
		const json_t *cl = json_object_get(clusters, cnames[i]);
		size_t nn = sorted_keys(json_is_object(cl) ? cl : NULL, &nodes);

		rows = xrealloc(rows, (n + nn) * sizeof(*rows));
		for (size_t j = 0; j < nn; j++)
			fill_row(&rows[n++], cnames[i], nodes[j], json_object_get(cl, nodes[j]), now);
		free(nodes);
	}
	if (n == 1)
		sbuf_addstr(out, "the ledger is empty\n");
	else
		add_rows(out, rows, n);
	for (size_t i = 0; i < n; i++)
		for (int c = 0; c < NCOL; c++)
			free(rows[i].col[c]);
	free(rows);
	free(cnames);
}

void ledger_cooling_note(const json_t *entry, const char *node, time_t now, struct sbuf *out)
{
	json_int_t until = json_integer_value(json_object_get(entry, "until"));
	const char *why = json_string_value(json_object_get(entry, "reason"));

	sbuf_addstr(out, "excluding ");
	sbuf_add_printable(out, node);
	sbuf_addf(out, ": it failed doctor %lld time(s), last: ",
		  (long long)json_integer_value(json_object_get(entry, "failures")));
	sbuf_add_printable(out, why ? why : "?");
	sbuf_addf(out, "; cooling down for %lld min more ('hpctrain doctor --forget ",
		  (long long)((until - now + 59) / 60));
	sbuf_add_printable(out, node);
	sbuf_addstr(out, "' clears it)");
}
