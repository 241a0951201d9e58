/* stage_mpi.c - the staging step: manifests from rank 0, cache claims on
 * every node, one read of each source streamed along a chain of the
 * nodes that lack it, verified copies published (see stage_mpi.h).
 * Shell: MPI (errors are fatal on MPI_COMM_WORLD: a failed or lost rank
 * ends the step instead of hanging it), files through stage_cache,
 * stage_sink and stage_source. */
#include "launcher/stage/stage_mpi.h"      // defines: stage_mpi_run
#include "launcher/stage/stage_cache.h"    // defines: struct stage_claim, stage_cache_*
#include "launcher/stage/stage_evict.h"    // defines: stage_evict_lru, stage_evict_abandoned
#include "launcher/stage/stage_job.h"      // defines: struct stage_job, struct stage_entry
#include "launcher/stage/stage_manifest.h" // defines: struct stage_manifest, stage_manifest_*
#include "launcher/stage/stage_path.h"     // defines: stage_entry_data_path, stage_path_basename
#include "launcher/stage/stage_plan.h"     // defines: struct stage_link, stage_plan_link
#include "launcher/stage/stage_scan.h"     // defines: stage_scan_since, stage_scan_forget
#include "launcher/stage/stage_sink.h"     // defines: struct stage_sink, stage_sink_*
#include "launcher/stage/stage_source.h"   // defines: struct stage_source, stage_source_*
#include "common/exitcode.h"               // defines: HPT_EXIT_*
#include "common/sbuf.h"                   // defines: struct sbuf
#include "common/monoclock.h"  // defines: monoclock_s

#include <limits.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

/* 4 chunks of 4 MiB in flight per rank: one being received, one being
 * written and forwarded, two posted ahead; 16 MiB of memory. */
#define CHUNK (4u << 20)
#define NBUF 4
/* Each chunk is read and written in slices of 256 KiB, MPI driven
 * between them (see pump). */
#define SLICE (256u << 10)
/* A copy may fail once (fetched again in the next round); a third round
 * serves an entry another job was fetching and then failed to publish. */
#define MAX_ROUNDS 3
enum { TAG_DATA = 0x5d1, TAG_ABORT = 0x5d2, TAG_LINK = 0x600 /* + the entry */ };

struct step {
	struct stage_job *j;
	bool mpi;
	int rank, size;
	struct stage_manifest *m;   /* per entry */
	struct stage_claim *claim;  /* per entry */
	int *failures;              /* per entry: this node's copies that failed */
	char **file_name;           /* per entry: a file source's name in the entry */
	unsigned char *buf[NBUF];
	struct sbuf *log;
};

/* --- collectives that degrade to nothing on one node --- */

/* The worst status of all nodes. */
static int agree(const struct step *s, int local)
{
	int worst = local;

	if (s->mpi)
		MPI_Allreduce(&local, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	return worst;
}

/* Rank 0's text (and status) to every node: *text is rank 0's on entry
 * there, a new string elsewhere. */
static void bcast_text(const struct step *s, int *status, char **text)
{
	int head[2] = { *status, *text ? (int)strlen(*text) : 0 };

	if (!s->mpi)
		return;
	MPI_Bcast(head, 2, MPI_INT, 0, MPI_COMM_WORLD);
	if (s->rank) {
		*status = head[0];
		*text = xcalloc((size_t)head[1] + 1, 1);
	}
	if (head[1])
		MPI_Bcast(*text, head[1], MPI_CHAR, 0, MPI_COMM_WORLD);
}

/* --- manifests --- */

static char *scan_all(struct step *s, int *status, struct sbuf *err)
{
	json_t *a = json_array();
	char *text = NULL;

	for (size_t e = 0; e < s->j->n && !*status; e++) {
		const struct stage_entry *en = &s->j->v[e];
		struct stage_manifest before = { 0 };
		struct sbuf why = SBUF_INIT;

		*status = stage_scan_since(en->src, &s->m[e], &before, &s->j->bytes_read,
					   STAGE_SCAN_STREAMED | (en->tree ? STAGE_SCAN_TREE : 0),
					   &why);
		if (*status) {
			sbuf_addf(err, "data entry %s: %s", en->name, why.buf);
		} else if (en->manifest && strcmp(en->manifest, s->m[e].hash)) {
			sbuf_addf(err, "data entry %s: %s changed since its manifest was pinned "
				  "(pinned %.19s..., now %.19s...)", en->name, en->src, en->manifest,
				  s->m[e].hash);
			/* the scan's cache names the files only when it still
			 * holds the pinned scan (submit's, on a shared home) */
			if (!strcmp(before.hash, en->manifest)) {
				sbuf_addstr(err, ": ");
				stage_manifest_diff(&before, &s->m[e], en->src, 5, err);
			}
			sbuf_addstr(err, "; submit the job again");
			*status = HPT_EXIT_CHANGED;
		}
		if (!*status && json_array_append_new(a, stage_manifest_to_json(&s->m[e]))) {
			sbuf_addf(err, "data entry %s: its manifest cannot be written as JSON",
				  en->name);
			*status = HPT_EXIT_INTERNAL;
		}
		stage_manifest_release(&before);
		sbuf_release(&why);
	}
	if (!*status && !(text = json_dumps(a, JSON_COMPACT))) {
		sbuf_addstr(err, "the manifests cannot be written as JSON (out of memory)");
		*status = HPT_EXIT_INTERNAL;
	}
	if (text && strlen(text) > INT_MAX) { /* MPI counts are ints: ~10^7 files */
		free(text);
		text = NULL;
		sbuf_addstr(err, "the manifests exceed 2 GiB of JSON; stage fewer files per entry");
		*status = HPT_EXIT_FAILURE;
	}
	json_decref(a);
	return text ? text : xstrdup(err->buf);
}

static int manifests(struct step *s, struct sbuf *err)
{
	int status = 0;
	char *text = s->rank == 0 ? scan_all(s, &status, err) : NULL;
	json_error_t jerr;
	json_t *a;

	bcast_text(s, &status, &text);
	if (s->rank && status)
		sbuf_addstr(err, text);
	if (s->rank && !status) {
		a = json_loads(text, 0, &jerr);
		if (!json_is_array(a) || json_array_size(a) != s->j->n)
			status = HPT_EXIT_INTERNAL;
		for (size_t e = 0; !status && e < s->j->n; e++)
			if (stage_manifest_from_json(json_array_get(a, e), &s->m[e], err))
				status = HPT_EXIT_INTERNAL;
		if (status)
			sbuf_addstr(err, " (the manifests rank 0 sent do not check)");
		json_decref(a);
	}
	free(text);
	for (size_t e = 0; !status && e < s->j->n; e++) {
		struct stage_entry *en = &s->j->v[e];

		en->is_file = s->m[e].is_file;
		en->bytes = s->m[e].bytes;
		/* encode-ok: a hash into a buffer of the same size */
		snprintf(en->hash, sizeof(en->hash), "%s", s->m[e].hash);
		free(en->path);
		en->path = stage_entry_data_path(s->j->cache, en->hash, en->src, en->is_file);
		s->file_name[e] = en->is_file ? stage_path_basename(en->src) : NULL;
	}
	return agree(s, status);
}

/* --- the cache --- */

/* Claims the entries this node has not settled: without
 * STAGE_CACHE_WAIT, those unclaimed (the first round, or a copy that
 * failed), not waiting for another process's fetch (BUSY); with it, only
 * the BUSY ones, waiting.  A wait never ends holding a fetch lock: a
 * MISS found after it is let go and claimed again in the next round.
 * So a rank blocked on another job's lock holds none its peers or that
 * job could be waiting for, and two jobs sharing nodes cannot deadlock. */
static int claim_all(struct step *s, unsigned flags, bool first, struct sbuf *err)
{
	bool wait = flags & STAGE_CACHE_WAIT;

	for (size_t e = 0; e < s->j->n; e++) {
		struct stage_entry *en = &s->j->v[e];
		struct stage_claim *c = &s->claim[e];
		struct sbuf note = SBUF_INIT;
		double t0 = monoclock_s();
		int rc;

		if (c->state != (wait ? STAGE_CLAIM_BUSY : STAGE_CLAIM_NONE))
			continue;
		rc = stage_cache_claim(s->j->cache, &s->m[e], s->file_name[e],
				       flags | (s->j->verify ? STAGE_CACHE_VERIFY : 0), c, &note, err);
		if (rc) {
			sbuf_release(&note);
			return rc;
		}
		if (c->repaired) {
			en->refetched++;
			sbuf_addf(s->log, "%s: the cached copy was damaged (%s); fetching it again\n",
				  en->name, note.buf);
		}
		if (first || wait)
			en->hit = c->state == STAGE_CLAIM_HIT;
		if (wait && c->state == STAGE_CLAIM_MISS)
			stage_claim_release(c);
		en->seconds += monoclock_s() - t0;
		sbuf_release(&note);
	}
	return 0;
}

/* --- the stream --- */

/* The requests of a stream in flight: receives (rr) and sends (sr) per
 * buffer, and the statuses of receives that pump completed. */
struct flight {
	bool mpi;
	MPI_Request rr[NBUF], sr[NBUF];
	MPI_Status rst[NBUF];
	bool rdone[NBUF];
};

static void flight_init(struct flight *f, bool mpi)
{
	f->mpi = mpi;
	for (int b = 0; b < NBUF; b++) {
		f->rr[b] = f->sr[b] = MPI_REQUEST_NULL;
		f->rdone[b] = false;
	}
}

/* Open MPI's TCP transport moves bytes only inside MPI calls: while a
 * rank reads, hashes or writes a 4 MiB chunk, the forward of the last
 * one and the receives posted ahead stand still, and each node of the
 * chain would receive, write and send one after the other.  So chunks
 * are read and written in slices, with a test of every request in
 * flight between two slices; a receive it completes keeps its status. */
static void pump(struct flight *f)
{
	MPI_Status st[NBUF];
	int idx[NBUF], n = 0, done;

	if (!f->mpi)
		return;
	MPI_Testsome(NBUF, f->rr, &n, idx, st);
	for (int i = 0; n != MPI_UNDEFINED && i < n; i++) {
		f->rst[idx[i]] = st[i];
		f->rdone[idx[i]] = true;
	}
	MPI_Testall(NBUF, f->sr, &done, MPI_STATUSES_IGNORE);
}

/* Receive b's status, waiting for it unless pump saw it complete. */
static void flight_wait_recv(struct flight *f, int b, MPI_Status *st)
{
	if (!f->rdone[b])
		MPI_Wait(&f->rr[b], &f->rst[b]);
	f->rdone[b] = false;
	*st = f->rst[b];
}

static int read_sliced(struct stage_source *src, unsigned char *p, size_t n, struct flight *f,
		       struct sbuf *why)
{
	while (n) {
		size_t k = n < SLICE ? n : SLICE;
		int status = stage_source_read(src, p, k, why);

		if (status)
			return status;
		pump(f);
		p += k;
		n -= k;
	}
	return 0;
}

static void write_sliced(struct stage_sink *sink, const unsigned char *p, size_t n,
			 struct flight *f)
{
	while (n) {
		size_t k = n < SLICE ? n : SLICE;

		stage_sink_write(sink, p, k);
		pump(f);
		p += k;
		n -= k;
	}
}

static int send_stream(struct step *s, size_t e, int next, struct stage_sink *sink,
		       struct sbuf *why)
{
	const struct stage_manifest *m = &s->m[e];
	struct stage_source src;
	struct flight f;
	uint64_t left = m->bytes, nch = stage_plan_chunks(left, CHUNK);
	int status = 0;

	flight_init(&f, s->mpi);
	stage_source_open(&src, s->j->v[e].src, m);
	for (uint64_t k = 0; k < nch; k++) {
		int b = (int)(k % NBUF);
		size_t n = left < CHUNK ? (size_t)left : CHUNK;

		if (s->mpi)
			MPI_Wait(&f.sr[b], MPI_STATUS_IGNORE);
		if (!status)
			status = read_sliced(&src, s->buf[b], n, &f, why);
		if (next >= 0) {
			MPI_Isend(s->buf[b], status ? 0 : (int)n, MPI_BYTE, next,
				  status ? TAG_ABORT : TAG_DATA, MPI_COMM_WORLD, &f.sr[b]);
			if (!status)
				s->j->bytes_sent += n;
		}
		/* the send reads the buffer while this writes it out */
		if (sink && !status)
			write_sliced(sink, s->buf[b], n, &f);
		left -= n;
	}
	if (!status) /* the empty files after the last byte */
		status = stage_source_read(&src, s->buf[0], 0, why);
	if (status == HPT_EXIT_FAILURE) {
		/* a file is not what the scan's cache said: the next scan
		 * hashes everything again, instead of failing the same way */
		struct sbuf ignored = SBUF_INIT;

		stage_scan_forget(s->j->v[e].src, &ignored);
		sbuf_release(&ignored);
	}
	if (s->mpi)
		MPI_Waitall(NBUF, f.sr, MPI_STATUSES_IGNORE);
	s->j->bytes_read += src.bytes_read;
	stage_source_release(&src);
	return status;
}

static void recv_stream(struct step *s, size_t e, int prev, int next, struct stage_sink *sink)
{
	uint64_t nch = stage_plan_chunks(s->m[e].bytes, CHUNK);
	struct flight f;
	bool aborted = false;

	flight_init(&f, true);
	for (int b = 0; b < NBUF; b++)
		if ((uint64_t)b < nch)
			MPI_Irecv(s->buf[b], CHUNK, MPI_BYTE, prev, MPI_ANY_TAG, MPI_COMM_WORLD, &f.rr[b]);
	for (uint64_t k = 0; k < nch; k++) {
		int b = (int)(k % NBUF), count = 0;
		MPI_Status st;

		flight_wait_recv(&f, b, &st);
		MPI_Get_count(&st, MPI_BYTE, &count);
		if (next >= 0) {
			MPI_Isend(s->buf[b], count, MPI_BYTE, next, st.MPI_TAG, MPI_COMM_WORLD, &f.sr[b]);
			if (st.MPI_TAG == TAG_DATA)
				s->j->bytes_sent += (uint64_t)count;
		}
		if (st.MPI_TAG != TAG_DATA) {
			aborted = true;
		} else {
			s->j->bytes_received += (uint64_t)count;
			/* the forward above and the receives posted ahead run meanwhile */
			if (sink && !aborted)
				write_sliced(sink, s->buf[b], (size_t)count, &f);
		}
		MPI_Wait(&f.sr[b], MPI_STATUS_IGNORE);
		if (k + NBUF < nch)
			MPI_Irecv(s->buf[b], CHUNK, MPI_BYTE, prev, MPI_ANY_TAG, MPI_COMM_WORLD, &f.rr[b]);
	}
}

/* The copy of entry e on this node, after the stream: publish it, or
 * say why not.  Two causes, two answers: the node's cache storage
 * refused a write (a full cache, ENOSPC; a read-only or failing file
 * system; a record that cannot be written) is an I/O error of this
 * node's storage (HPT_EXIT_IO), not fetched again, since reading the
 * source again would meet the same full disk, and no mark against the
 * node; a copy whose bytes do not match the manifest is fetched once
 * more, and the second such failure is the node's own (its disk or
 * memory: node_failed, for the ledger). */
static int settle(struct step *s, size_t e, struct stage_sink *sink, struct sbuf *err)
{
	struct stage_entry *en = &s->j->v[e];
	struct sbuf why = SBUF_INIT;
	int rc = 0, pub = 0;

	if (!sink->failed && !stage_sink_finish(sink) &&
	    !(pub = stage_cache_publish(s->j->cache, &s->m[e], s->file_name[e], sink->tmp,
					sink->keys, en->name, en->src, &s->claim[e], &why))) {
		stage_sink_take(sink);
		goto out;
	}
	if (!sink->failed)
		sbuf_addstr(&sink->err, why.buf);
	stage_claim_release(&s->claim[e]); /* claimed again, without waiting, next round */
	if (sink->io_error || pub) {
		sbuf_addf(err, "data entry %s: cannot write its copy in the node cache %s: %s",
			  en->name, s->j->cache, sink->err.buf);
		rc = pub ? pub : HPT_EXIT_IO;
	} else if (++s->failures[e] >= 2) {
		sbuf_addf(err, "data entry %s: the copy failed twice on this node: %s",
			  en->name, sink->err.buf);
		s->j->node_failed = true;
		rc = HPT_EXIT_FAILURE;
	} else {
		en->refetched++;
		sbuf_addf(s->log, "%s: the copy failed (%s); fetching it again\n", en->name,
			  sink->err.buf);
	}
out:
	sbuf_release(&why);
	return rc;
}

/* Entry e along its chain (lacks: a byte per rank).  Returns the status
 * every node shares (the source failed: abort holds rank 0's message), and
 * sets *local to this node's own failure. */
static int transfer(struct step *s, size_t e, const struct stage_link *link, int *local,
		    struct sbuf *err)
{
	struct stage_sink sink;
	struct sbuf why = SBUF_INIT;
	int prev = link->prev, next = link->next, place = link->place, status = 0;
	bool writes = s->claim[e].state == STAGE_CLAIM_MISS;
	double t0 = monoclock_s();
	char *text = NULL;

	memset(&sink, 0, sizeof(sink));
	if (!link->len)
		return 0;
	if (place >= 0 && writes && stage_sink_open(&sink, s->j->cache, &s->m[e], s->file_name[e], &why)) {
		sink.failed = true;
		sink.io_error = true; /* the cache refused a directory: its storage */
		sbuf_addstr(&sink.err, why.buf);
	}
	if (place >= 0 && writes && s->j->damage > 0 && s->m[e].bytes) {
		sink.damage = true;
		s->j->damage--;
	}
	/* the reader's own copy: stage_source hashes what it reads, and a
	 * mismatch fails the step before settle; a second sha256 of the same
	 * buffer would prove nothing more (an injected fault is hashed) */
	sink.verified = place == 0 && !sink.damage;
	if (place == 0)
		status = send_stream(s, e, next, writes ? &sink : NULL, &why);
	else if (place > 0)
		recv_stream(s, e, prev, next, writes ? &sink : NULL);
	if (s->rank == 0)
		text = xstrdup(status ? why.buf : "");
	bcast_text(s, &status, &text);
	if (status) {
		sbuf_addf(err, "data entry %s: %s", s->j->v[e].name, text);
	} else if (place >= 0 && writes && !*local) {
		*local = settle(s, e, &sink, err);
	}
	s->j->v[e].seconds += monoclock_s() - t0;
	stage_sink_release(&sink);
	sbuf_release(&why);
	free(text);
	return status;
}

/* --- the step --- */

/* Each entry's link of this rank (stage_plan.h), from an all-reduce and
 * two exclusive scans of 2 ints an entry, then a message from the next
 * rank in each chain: O(entries) bytes and log N messages a rank. */
static void link_all(struct step *s, const unsigned char *mine, struct stage_link *link)
{
	size_t n = s->j->n;
	int *in, *sum, *before, *mark, *prev, nreq = 0;
	MPI_Request *req;

	if (!n)
		return;
	in = xcalloc(2 * n, sizeof(int));
	sum = xcalloc(2 * n, sizeof(int));
	before = xcalloc(n, sizeof(int));
	mark = xcalloc(n, sizeof(int));
	prev = xcalloc(n, sizeof(int));
	req = xcalloc(2 * n, sizeof(*req));
	for (size_t e = 0; e < n; e++) {
		in[e] = mine[e];                       /* lacks it */
		in[n + e] = s->rank == 0 || mine[e];   /* is in its chain */
		mark[e] = in[n + e] ? s->rank : -1;
	}
	if (s->mpi) {
		MPI_Allreduce(in, sum, (int)(2 * n), MPI_INT, MPI_SUM, MPI_COMM_WORLD);
		MPI_Exscan(in + n, before, (int)n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
		MPI_Exscan(mark, prev, (int)n, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	} else {
		memcpy(sum, in, 2 * n * sizeof(int));
	}
	for (size_t e = 0; e < n; e++) {
		if (s->rank == 0) { /* an exclusive scan leaves rank 0's undefined */
			before[e] = 0;
			prev[e] = -1;
		}
		stage_plan_link(in[n + e], sum[e], sum[n + e], before[e], prev[e], &link[e]);
		if (link[e].has_next)
			MPI_Irecv(&link[e].next, 1, MPI_INT, MPI_ANY_SOURCE, TAG_LINK + (int)e,
				  MPI_COMM_WORLD, &req[nreq++]);
		if (link[e].place > 0)
			MPI_Isend(&s->rank, 1, MPI_INT, link[e].prev, TAG_LINK + (int)e,
				  MPI_COMM_WORLD, &req[nreq++]);
	}
	if (nreq)
		MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE);
	free(in);
	free(sum);
	free(before);
	free(mark);
	free(prev);
	free(req);
}

static int rounds(struct step *s, struct sbuf *err)
{
	size_t n = s->j->n;
	unsigned char *mine = xcalloc(n ? n : 1, 1);
	struct stage_link *link = xcalloc(n ? n : 1, sizeof(*link));
	int status = 0;

	for (int round = 0; round < MAX_ROUNDS && !status; round++) {
		int local = claim_all(s, 0, round == 0, err), missing = 0, total = 0;

		if ((status = agree(s, local)))
			break;
		for (size_t e = 0; e < n; e++)
			mine[e] = s->claim[e].state == STAGE_CLAIM_MISS;
		link_all(s, mine, link);
		for (size_t e = 0; e < n && !status; e++)
			status = transfer(s, e, &link[e], &local, err);
		if (status)
			break;
		/* another job was fetching these: wait for it, outside any
		 * collective, and take what it published */
		if (!local)
			local = claim_all(s, STAGE_CACHE_WAIT, false, err);
		for (size_t e = 0; e < n; e++)
			missing += s->claim[e].state != STAGE_CLAIM_HIT;
		if ((status = agree(s, local)))
			break;
		total = missing;
		if (s->mpi)
			MPI_Allreduce(&missing, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
		if (!total)
			break;
		if (round == MAX_ROUNDS - 1) {
			for (size_t e = 0; e < n; e++)
				if (s->claim[e].state != STAGE_CLAIM_HIT)
					sbuf_addf(err, "%sdata entry %s: not staged after %d rounds",
						  err->len ? "; " : "", s->j->v[e].name, MAX_ROUNDS);
			status = HPT_EXIT_FAILURE;
		}
	}
	if (status && !err->len)
		sbuf_addstr(err, "staging failed on another node (see its message)");
	free(mine);
	free(link);
	return status;
}

int stage_mpi_run(struct stage_job *j, bool mpi, struct sbuf *log, struct sbuf *err)
{
	struct step s = { .j = j, .mpi = mpi, .size = 1, .log = log };
	double t0 = monoclock_s();
	size_t n = j->n ? j->n : 1;
	int status;

	if (mpi) {
		MPI_Comm_rank(MPI_COMM_WORLD, &s.rank);
		MPI_Comm_size(MPI_COMM_WORLD, &s.size);
	}
	s.m = xcalloc(n, sizeof(*s.m));
	s.claim = xcalloc(n, sizeof(*s.claim));
	s.failures = xcalloc(n, sizeof(*s.failures));
	s.file_name = xcalloc(n, sizeof(*s.file_name));
	for (size_t e = 0; e < j->n; e++)
		stage_claim_init(&s.claim[e]);
	for (int b = 0; b < NBUF; b++)
		s.buf[b] = xmalloc(CHUNK);
	status = stage_cache_open(j->cache, err) ? HPT_EXIT_IO : 0;
	if (!status)
		stage_evict_abandoned(j->cache, log);
	if ((status = agree(&s, status))) {
		if (!err->len)
			sbuf_addstr(err, "another node cannot use its cache");
		goto out;
	}
	if ((status = manifests(&s, err))) {
		if (!err->len)
			sbuf_addstr(err, "another node could not read the manifests");
		goto out;
	}
	if ((status = rounds(&s, err)))
		goto out;
	if (j->max_bytes && stage_evict_lru(j->cache, j->max_bytes, log, err))
		status = HPT_EXIT_IO;
out:
	j->seconds = monoclock_s() - t0;
	/* the claims (use locks) stay held until the process exits: the
	 * caller writes its record, then exits; stage_cache_hold is how a
	 * rank holds an entry for longer */
	for (size_t e = 0; e < j->n; e++) {
		if (status)
			stage_claim_release(&s.claim[e]);
		stage_manifest_release(&s.m[e]);
		free(s.file_name[e]);
	}
	for (int b = 0; b < NBUF; b++)
		free(s.buf[b]);
	free(s.m);
	free(s.claim); /* the descriptors of successful claims stay open on purpose */
	free(s.failures);
	free(s.file_name);
	return status;
}
