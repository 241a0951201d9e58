/* cmd_stage.c - `hpctrain stage`: copy data sets to node-local storage
 * once per node, from one read of the shared file system, into a cache
 * later jobs reuse; list and clear that cache.
 *
 * Shell: parses the options, finds the node's name and cache, sets up
 * MPI (one task per node: srun --ntasks-per-node=1 hpctrain stage --run
 * RUN), runs the step (launcher/stage/stage_mpi.c) and writes each
 * node's record; a node whose copy failed twice goes into the node
 * ledger, as a node that fails doctor does.  Built as bin/hpctrain-stage: MPI stays out of the
 * login-node binary. */
#include "common/json_print.h"               // defines: json_print
#include "common/say.h" // defines: say
#include "common/diag.h"                  // defines: struct diag_list, diag_report
#include "common/envvar.h"                // defines: envvar_int
#include "common/exitcode.h"              // defines: enum hpt_exit
#include "common/mpistep.h"   // defines: mpistep_launched, mpistep_check_alone, mpistep_exit_on_term, mpistep_fence
#include "common/fileio.h"                // defines: fileio_private_dir, fileio_write_atomic
#include "common/isotime.h"               // defines: isotime_format
#include "common/opt.h"                   // defines: struct opt, opt_next
#include "common/sbuf.h"                  // defines: struct sbuf
#include "common/spec/spec.h"             // defines: struct job, job_release
#include "common/spec/specfile.h"         // defines: specfile_load_run
#include "launcher/doctor/doctor_record.h" // defines: doctor_record_ledger
#include "launcher/stage/stage_evict.h"   // defines: stage_evict_list, stage_evict_clear
#include "launcher/stage/stage_job.h"     // defines: struct stage_job, stage_job_*, stage_job_from_spec
#include "launcher/stage/stage_manifest.h" // defines: stage_manifest_to_json, stage_manifest_hex
#include "launcher/stage/stage_mpi.h"     // defines: stage_mpi_run
#include "launcher/stage/stage_path.h"    // defines: stage_cache_dir, stage_path_expand
#include "launcher/stage/stage_scan.h"    // defines: stage_scan

#include <errno.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { OPT_RUN = 256, OPT_CACHE, OPT_MAX_GB, OPT_ENTRY, OPT_VERIFY, OPT_REPORT, OPT_LIST,
       OPT_CLEAR, OPT_MANIFEST };

static const char *const stage_usage[] = {
	"srun --mpi=pmix --ntasks-per-node=1 hpctrain stage --run <run>",
	"hpctrain stage [<options>] --entry <name>=<src>...",
	"hpctrain stage --list [--cache <dir>] [--json]",
	"hpctrain stage --clear [--cache <dir>] [<hash>...]",
	"hpctrain stage --manifest <src>",
	NULL,
};

static const struct opt stage_opts[] = {
	{ "run", required_argument, NULL, OPT_RUN, "RUN",
	  "stage the data.stage entries of RUN/resolved.yaml; record RUN/stage/<node>.json" },
	{ "entry", required_argument, NULL, OPT_ENTRY, "NAME=SRC",
	  "stage SRC (an absolute path) as NAME; SRC@sha256:HEX pins its manifest (repeatable)" },
	{ "cache", required_argument, NULL, OPT_CACHE, "DIR",
	  "the node's cache (%n: the node's name; default: "
	  "$TMPDIR/hpctrain-cache-<uid>, else under /dev/shm)" },
	{ "max-gb", required_argument, NULL, OPT_MAX_GB, "GB",
	  "evict least recently used entries not in use above GB (10^9 bytes) after staging" },
	{ "verify", no_argument, NULL, OPT_VERIFY, NULL,
	  "hash every file of a cached entry, not only files whose mtime moved" },
	{ "report", required_argument, NULL, OPT_REPORT, "FILE",
	  "write this node's record there (%n: the node's name)" },
	{ "list", no_argument, NULL, OPT_LIST, NULL,
	  "list the cache's entries: name, size, last use, in use" },
	{ "clear", no_argument, NULL, OPT_CLEAR, NULL,
	  "remove the named entries (all without one), keeping those in use" },
	{ "manifest", required_argument, NULL, OPT_MANIFEST, "SRC",
	  "print SRC's manifest as JSON (what submit pins) and exit" },
	{ "json", no_argument, NULL, 'j', NULL, "print --list as JSON" },
	OPT_HELP,
	OPT_END,
};

static const struct opt_cmd stage_cmd = {
	.name = "stage",
	.usage = stage_usage,
	.summary = "Copy data sets to every node's local cache from one read of the shared file "
		   "system, verified and published atomically; list and clear the cache.",
	.opts = stage_opts,
};

struct stage {
	const char *run, *cache, *report, *manifest;
	bool list, clear, json;
	struct stage_job job;
	char **hashes;
	size_t nhashes;
	const char *node;
	bool mpi;
	int rank;
};

/* The node's name: SLURMD_NODENAME, as everywhere in hpctrain (tests
 * give each rank its own to simulate nodes on one host), else the host's
 * short name. */
static const char *node_name(void)
{
	static char host[256];
	const char *n = getenv("SLURMD_NODENAME");

	if (n && *n && !strchr(n, '/'))
		return n;
	if (gethostname(host, sizeof(host) - 1))
		return "localhost";
	host[strcspn(host, ".")] = '\0';
	return host;
}

static int parse_args(struct stage *st, int argc, char **argv)
{
	struct sbuf err = SBUF_INIT;
	char *end;
	double gb;
	int c;

	opt_reset();
	while ((c = opt_next(&stage_cmd, argc, argv)) != -1) {
		switch (c) {
		case OPT_RUN: st->run = optarg; break;
		case OPT_CACHE: st->cache = optarg; break;
		case OPT_REPORT: st->report = optarg; break;
		case OPT_MANIFEST: st->manifest = optarg; break;
		case OPT_VERIFY: st->job.verify = true; break;
		case OPT_LIST: st->list = true; break;
		case OPT_CLEAR: st->clear = true; break;
		case 'j': st->json = true; break;
		case OPT_ENTRY:
			if (stage_job_parse_entry(&st->job, optarg, &err)) {
				opt_error(&stage_cmd, "%s", err.buf);
				sbuf_release(&err);
				return HPT_EXIT_USAGE;
			}
			break;
		case OPT_MAX_GB:
			errno = 0;
			gb = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(gb > 0) || gb > 1e9)
				return opt_error(&stage_cmd, "--max-gb: expected a number above 0, got '%s'",
						 SBUF_CLIP(optarg));
			st->job.max_bytes = (uint64_t)(gb * 1e9);
			break;
		case 'h':
			opt_usage(stdout, &stage_cmd);
			return -1;
		default:
			return HPT_EXIT_USAGE;
		}
	}
	if (st->clear) {
		if (opt_check_operands(&stage_cmd, argc, argv, optind))
			return HPT_EXIT_USAGE;
		for (int i = optind; i < argc; i++) {
			const char *h = argv[i];
			unsigned char b[32];

			if (!strncmp(h, "sha256:", 7))
				h += 7;
			if (stage_manifest_parse_hex(h, b))
				return opt_error(&stage_cmd, "expected an entry's hash (sha256:HEX or "
						 "64 hex digits), got '%s'", SBUF_CLIP(argv[i]));
			argv[i] = (char *)h;
		}
		st->hashes = argv + optind;
		st->nhashes = (size_t)(argc - optind);
	} else if (optind != argc) {
		return opt_error(&stage_cmd, "unexpected argument '%s'", SBUF_CLIP(argv[optind]));
	}
	if ((st->list + st->clear + !!st->manifest + !!st->run + !!st->job.n) != 1)
		return opt_error(&stage_cmd, "give one of --run, --entry, --list, --clear and "
				 "--manifest");
	if (st->json && !st->list)
		return opt_error(&stage_cmd, "--json goes with --list");
	if ((st->report || st->job.verify || st->job.max_bytes) && !st->job.n && !st->run)
		return opt_error(&stage_cmd, "--report, --verify and --max-gb go with --run or "
				 "--entry");
	if (st->run && (st->cache || st->report))
		return opt_error(&stage_cmd, "--run takes its cache from the job and records in RUN/stage/");
	return 0;
}

/* The cache of --cache (with %n) or the default one. */
static char *cache_of(const struct stage *st)
{
	if (st->cache)
		return stage_path_expand(st->cache, st->node);
	return stage_cache_dir(NULL, "auto", NULL, getenv("TMPDIR"), (unsigned)getuid());
}

static int list_cache(struct stage *st)
{
	struct stage_evict_list l;
	struct sbuf err = SBUF_INIT;
	char *cache = cache_of(st);
	int status = 0;

	if (stage_evict_list(cache, &l, &err)) {
		say("%s", err.buf);
		status = HPT_EXIT_NO_INPUT;
	} else if (st->json) {
		status = json_print(stage_evict_list_json(cache, &l));
	} else {
		printf("cache %s: %zu entries, %.3f GB\n", cache, l.n, (double)l.bytes / 1e9);
		for (size_t i = 0; i < l.n; i++) {
			struct sbuf name = SBUF_INIT;
			char when[ISOTIME_SIZE];

			isotime_format(l.v[i].last_use, when);
			sbuf_add_printable(&name, l.v[i].name ? l.v[i].name : "?");
			printf("sha256:%.12s  %-16s %12llu  %s  %s\n", l.v[i].hex, name.buf,
			       (unsigned long long)l.v[i].bytes, when, l.v[i].in_use ? "in use" : "-");
			sbuf_release(&name);
		}
	}
	stage_evict_list_release(&l);
	sbuf_release(&err);
	free(cache);
	return status;
}

static int clear_cache(struct stage *st)
{
	struct sbuf err = SBUF_INIT, log = SBUF_INIT;
	char *cache = cache_of(st);
	int rc = stage_evict_clear(cache, (const char *const *)st->hashes, st->nhashes, &log, &err);

	fputs(log.buf, stdout);
	if (rc < 0)
		say("%s", err.buf);
	else if (rc)
		say("some entries were kept (in use) or not found");
	sbuf_release(&err);
	sbuf_release(&log);
	free(cache);
	return rc < 0 ? HPT_EXIT_IO : rc ? HPT_EXIT_FAILURE : 0;
}

static int print_manifest(const char *src)
{
	struct stage_manifest m = { 0 };
	struct sbuf err = SBUF_INIT;
	int status = stage_scan(src, &m, &err);

	if (status)
		say("%s", err.buf);
	else
		status = json_print(stage_manifest_to_json(&m));
	stage_manifest_release(&m);
	sbuf_release(&err);
	return status;
}

/* The entries, cache and limit of RUN's job (cli/stage_job.c). */
static int load_run(struct stage *st)
{
	struct diag_list dl = DIAG_LIST_INIT;
	struct sbuf where = SBUF_INIT, err = SBUF_INIT;
	struct job job;
	int status;

	memset(&job, 0, sizeof(job));
	if (fileio_exists(st->run) && fileio_check_owned(st->run, &where)) {
		say("%s", where.buf);
		sbuf_release(&where);
		return HPT_EXIT_IO;
	}
	status = specfile_load_run(st->run, &job, &dl, &where, NULL);
	if (status)
		diag_report(stderr, &dl);
	else if ((status = stage_job_from_spec(&job, getenv("TMPDIR"), (unsigned)getuid(),
						  &st->job, &err)))
		say("%s", err.buf);
	job_release(&job);
	diag_list_release(&dl);
	sbuf_release(&where);
	sbuf_release(&err);
	return status;
}

/* rchar of /proc/self/io: every byte this process read, whatever
 * counted it; 0 where the kernel does not say (no task I/O accounting). */
static uint64_t proc_rchar(void)
{
	unsigned long long v = 0;
	char line[128];
	FILE *f = fopen("/proc/self/io", "re"); /* open-ok: /proc, the kernel's */

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "rchar: %llu", &v) == 1)
			break;
	fclose(f);
	return v;
}

/* RUN/stage/<node>.json, or --report FILE. */
static int write_record(struct stage *st)
{
	json_t *doc = stage_job_record(&st->job, st->node);
	char *text = json_dumps(doc, JSON_INDENT(2)), *path = NULL, *dir = NULL;
	struct sbuf err = SBUF_INIT;
	int status = 0;

	if (st->run) {
		dir = xasprintf("%s/stage", st->run);
		path = xasprintf("%s/%s.json", dir, st->node);
	} else {
		path = stage_path_expand(st->report, st->node);
	}
	if (!text)
		sbuf_addf(&err, "cannot write %s: the node's name or cache path is not UTF-8", path);
	if (!text || (dir && fileio_private_dir(dir, &err)) ||
	    fileio_write_atomic(path, text, strlen(text), 0600, 0, &err)) {
		say("%s", err.buf);
		status = HPT_EXIT_IO;
	}
	json_decref(doc);
	sbuf_release(&err);
	free(text);
	free(path);
	free(dir);
	return status;
}

static void summary(const struct stage *st)
{
	size_t hits = 0;

	for (size_t i = 0; i < st->job.n; i++)
		hits += st->job.v[i].hit;
	say("%s: %zu entries, %zu hits, %.1f MB read, %.1f MB received, "
		"%.1f MB sent, %.2f s", st->node, st->job.n, hits, (double)st->job.bytes_read / 1e6,
		(double)st->job.bytes_received / 1e6, (double)st->job.bytes_sent / 1e6,
		st->job.seconds);
}

/* HPCTRAIN_STAGE_DAMAGE=N: the tests' fault, this node's next N copies
 * written with a flipped byte (verification must catch it). */
static int damage_copies(void)
{
	const char *v = getenv("HPCTRAIN_STAGE_DAMAGE");
	struct sbuf err = SBUF_INIT;
	int64_t n = 0;

	if (v && *v && envvar_int("HPCTRAIN_STAGE_DAMAGE", v, 0, 1000, &n, &err)) {
		say("warning: %s; ignored", err.buf);
		n = 0;
	}
	sbuf_release(&err);
	return (int)n;
}

/* A node whose copy failed verification twice wrote bad bytes that
 * arrived good (each chunk is checked as it is read): its disk or
 * memory is suspect, so it goes into the node ledger like a node that
 * failed doctor, and submit leaves it out while it cools down.  Only
 * inside a job (doctor_record_ledger checks), and only for that cause:
 * a changed source is nobody's node's fault. */
static void record_node_failure(const struct stage *st, const char *why)
{
	struct sbuf reason = SBUF_INIT, warn = SBUF_INIT;
	struct ledger_event ev = { .node = st->node, .failed = true, .score = -1 };

	sbuf_addf(&reason, "stage: %s", why);
	ev.reason = reason.buf;
	if (doctor_record_ledger(&ev, 1, &warn))
		say("%s: warning: %s", st->node, warn.buf);
	else if (getenv("SLURM_JOB_ID"))
		say("%s: recorded in the node ledger", st->node);
	sbuf_release(&reason);
	sbuf_release(&warn);
}

static int run_step(struct stage *st)
{
	struct sbuf err = SBUF_INIT, log = SBUF_INIT;
	int status, rc;

	if (mpistep_launched()) {
		if (MPI_Init(NULL, NULL) != MPI_SUCCESS) {
			say("MPI_Init failed");
			return HPT_EXIT_UNAVAILABLE;
		}
		mpistep_fence();
		/* the default, said out loud: an MPI error anywhere ends the
		 * whole step (never a rank waiting on a dead peer) */
		MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
		st->mpi = true;
		MPI_Comm_rank(MPI_COMM_WORLD, &st->rank);
	} else if ((status = mpistep_check_alone("stage", &err))) {
		say("%s", err.buf);
		sbuf_release(&err);
		return status;
	}
	if (!st->run)
		st->job.cache = cache_of(st);
	st->job.damage = damage_copies();
	status = stage_mpi_run(&st->job, st->mpi, &log, &err);
	if (log.len)
		fprintf(stderr, "%s", log.buf);
	if (status)
		say("%s: %s", st->node, err.buf);
	if (st->job.node_failed)
		record_node_failure(st, err.buf);
	summary(st);
	st->job.proc_rchar = proc_rchar();
	if ((st->run || st->report) && (rc = write_record(st)) && !status)
		status = rc;
	if (!status && st->rank == 0)
		for (size_t i = 0; i < st->job.n; i++)
			printf("%s=%s\n", st->job.v[i].name, st->job.v[i].path);
	if (st->mpi) {
		/* every node ends with the worst status, so srun's is the step's */
		rc = status;
		mpistep_exit_on_term(rc);
		MPI_Allreduce(&rc, &status, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
		mpistep_exit_on_term(status);
		MPI_Finalize();
	}
	sbuf_release(&err);
	sbuf_release(&log);
	return status;
}

int cmd_stage(int argc, char **argv)
{
	struct stage st = { 0 };
	int status;

	st.node = node_name();
	status = parse_args(&st, argc, argv);
	if (status) {
		stage_job_release(&st.job);
		return status < 0 ? HPT_EXIT_OK : status;
	}
	if (st.list)
		status = list_cache(&st);
	else if (st.clear)
		status = clear_cache(&st);
	else if (st.manifest)
		status = print_manifest(st.manifest);
	else if (!st.run || !(status = load_run(&st)))
		status = run_step(&st);
	stage_job_release(&st.job);
	return status;
}
