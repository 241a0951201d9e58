/* slurm.h - the few things hpctrain asks of Slurm, through libslurm.
 *
 * Shell: the only file that includes <slurm/slurm.h>.  No shelling out to
 * sbatch/squeue/scancel: libslurm gives exact error codes, where parsing
 * a command's output would guess.
 *
 * Every action returns 0, or an exit status of common/exitcode.h with a
 * message in err that says what failed and Slurm's reason:
 *   HPT_EXIT_UNAVAILABLE  no configuration, or the controller (or munge)
 *                         cannot be reached;
 *   HPT_EXIT_REJECTED     the controller answered no (bad partition, too
 *                         many GPUs, ...); err holds Slurm's own words;
 *   HPT_EXIT_NO_INPUT     no such job (or no longer: without accounting,
 *                         finished jobs are forgotten after MinJobAge).
 * Exported names are hpt_slurm_*, never slurm_*: that prefix is
 * libslurm's own, and a clash would link silently to the wrong symbol.
 */
#ifndef HPT_LAUNCHER_SLURM_H
#define HPT_LAUNCHER_SLURM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

struct render_opts;
struct sbuf;

/* Reads the configuration ($SLURM_CONF, else /etc/slurm/slurm.conf)
 * the first time it is called; later calls return 0 at once.  libslurm
 * exits the process on a missing file, so its presence is checked
 * first.  Returns 0 or HPT_EXIT_UNAVAILABLE.  Call it where Slurm is
 * needed; only a program's main calls hpt_slurm_fini, once, at its end
 * (cli/main.c: the commands flagged NEEDS_SLURM); it returns whether
 * hpt_slurm_init had read the configuration. */
int hpt_slurm_init(struct sbuf *err);
bool hpt_slurm_fini(void);

/* Unsets every SLURM_* variable but SLURM_CONF (which cluster), so that
 * a job submitted from inside a job inherits neither its identity nor
 * its shape: a SLURM_NTASKS of two nodes would make the steps of a job
 * granted one ask for two tasks there.  The submission hands the job
 * this process's environment. */
void hpt_slurm_forget_job(void);

struct hpt_slurm_submit_result {
	uint32_t job_id;
	char *user_msg;     /* job_submit plugin's message to the user, or NULL */
};

/* Submits script as a batch job running in work_dir with the calling
 * user's ids and environment, its options taken from opts (the records
 * the script's #SBATCH lines were written from).  */
int hpt_slurm_submit(const struct render_opts *opts, const char *script, const char *work_dir,
		     struct hpt_slurm_submit_result *out, struct sbuf *err);
void hpt_slurm_submit_result_release(struct hpt_slurm_submit_result *r);

/* The cluster's name (ClusterName), appended to out.  0 or a status. */
int hpt_slurm_cluster_name(struct sbuf *out, struct sbuf *err);

/* Slurm's default MaxArraySize: task ids 0..1000. */
#define HPT_SLURM_DEFAULT_MAX_ARRAY_SIZE 1001

/* The controller's MaxArraySize, the most tasks one array can hold (its
 * ids run 0..N-1); 0 where the cluster disables arrays.  0 or a status. */
int hpt_slurm_max_array_size(uint32_t *out, struct sbuf *err);

/* The munge socket Slurm authenticates through (AuthInfo=socket=...),
 * appended to out; nothing when Slurm uses munge's default.  0 or a status. */
int hpt_slurm_munge_socket(struct sbuf *out, struct sbuf *err);

/* The names of every node the controller has (hidden partitions'
 * too), sorted: *names is allocated (NULL when none).  0 or a status.
 * Free with hpt_slurm_node_names_free. */
int hpt_slurm_node_names(char ***names, size_t *n, struct sbuf *err);
/* Whether node is one of names (sorted, as hpt_slurm_node_names gives them). */
bool hpt_slurm_node_names_has(char *const *names, size_t n, const char *node);
void hpt_slurm_node_names_free(char **names, size_t n);
/* How many nodes the controller has idle (not allocated, drained,
 * down or failing) whose names the hostlist exclude (NULL or "": none)
 * leaves in.  -1 with err when the node list cannot be read. */
int64_t hpt_slurm_idle_nodes(const char *exclude, struct sbuf *err);

/* Whether the controller holds node as failed: DOWN or FAIL.  Not
 * responding alone is not: it is one missed ping, which a busy slurmd
 * clears at the next; SlurmdTimeout later the node is DOWN.  A drain
 * set by hand is an admin's choice, not a failure.
 * 1 with state given Slurm's words ("DOWN*: Not responding"), 0 when
 * it is up, or a status with err when the controller cannot say. */
int hpt_slurm_node_failed(const char *node, struct sbuf *state, struct sbuf *err);

/* Slurm's hostlist form ("node[1-3,7]") of the hosts of prev (a hostlist
 * or NULL) and add[0..n), each once, sorted, appended to out.  No
 * controller needed.  0, or -1 for a list libslurm cannot parse. */
int hpt_slurm_hostlist(const char *prev, const char *const *add, size_t n, struct sbuf *out);
/* 0 when s is a hostlist --exclude can take (Slurm parses it, and it
 * holds only the characters of node names and a hostlist's [-,]), else
 * -1 with err. */
int hpt_slurm_hostlist_check(const char *s, struct sbuf *err);
/* The hosts of the hostlist list, in its order, into *names (free with
 * hpt_slurm_node_names_free).  No controller needed.  0, or -1 for a
 * list libslurm cannot parse. */
int hpt_slurm_hostlist_names(const char *list, char ***names, size_t *n);
/* 1 when host is in the hostlist list. */
int hpt_slurm_hostlist_has(const char *list, const char *host);

/* One job as status shows it.  Strings are owned, never NULL. */
struct hpt_slurm_job {
	uint32_t job_id;
	char *name, *state, *reason, *nodes, *partition, *work_dir;
	uint32_t uid;
	bool pending;       /* queued or held (base state PENDING), whatever
			     * its flags name it (REQUEUE_HOLD, ...) */
	bool finished;      /* ended for good: COMPLETED, FAILED, ... and no
			     * flag of a job in transit (slurm_state.h) */
	bool completed;     /* finished, and COMPLETED */
	int exit_code;      /* of the batch script, when it exited */
	int exit_signal;    /* that killed it, else 0 */
	unsigned restarts;  /* requeues so far */
	unsigned nodes_n, tasks;
	uint32_t array_job_id; /* of the array this job is a task of; 0: none */
	int64_t array_task;    /* its index in that array; -1: none, or the
				* array's record of still-pending tasks */
	char *array_pending;   /* that record's task list ("2-5%2"), else "" */
	time_t submit_time, start_time, end_time; /* 0 when not yet */
};

void hpt_slurm_job_release(struct hpt_slurm_job *j);
/* A copy with strings of its own. */
void hpt_slurm_job_copy(struct hpt_slurm_job *dst, const struct hpt_slurm_job *src);

/* Loads one job.  0 or a status (HPT_EXIT_NO_INPUT for an unknown id). */
int hpt_slurm_job(uint32_t job_id, struct hpt_slurm_job *out, struct sbuf *err);

/* Loads every record of a job: one, or each task of an array (and the
 * array's record of its pending tasks).  *v as hpt_slurm_jobs_of gives it. */
int hpt_slurm_job_all(uint32_t job_id, struct hpt_slurm_job **v, size_t *n, struct sbuf *err);

/* Loads task of array array_id: its own record once it has one, else
 * (still pending in the array's record) that record, with array_task set
 * to task.  0 or a status (HPT_EXIT_NO_INPUT when Slurm has forgotten it). */
int hpt_slurm_array_task(uint32_t array_id, int64_t task, struct hpt_slurm_job *out,
			 struct sbuf *err);

/* In v (an array's records, from hpt_slurm_job_all and in its order):
 * task's own record, else the pending record that holds it, else NULL.
 * O(log n + pending records). */
const struct hpt_slurm_job *hpt_slurm_task_in(const struct hpt_slurm_job *v, size_t n,
					      int64_t task);

/* Loads every job of uid the controller knows, by job id.  *v is
 * allocated (free each with hpt_slurm_job_release, then free(*v)). */
int hpt_slurm_jobs_of(uint32_t uid, struct hpt_slurm_job **v, size_t *n, struct sbuf *err);

/* Cancels a job as scancel does (SIGKILL to every step and the batch
 * script; the job ends CANCELLED): with task >= 0 only that task of array
 * job_id, else the job (every task of an array).  A job that already
 * finished is not an error: *was_done is set instead. */
int hpt_slurm_cancel(uint32_t job_id, int64_t task, bool *was_done, struct sbuf *err);

/* When Slurm would start a job of opts (a rendered job's options, as
 * hpt_slurm_submit takes them) if it were submitted now: its backfill
 * scheduler's answer to slurm_job_will_run2, as sbatch --test-only
 * asks.  Nothing is submitted.  HPT_EXIT_REJECTED, with Slurm's words,
 * for a job it would never run (more nodes than the partition has). */
struct hpt_slurm_will_run {
	time_t start;      /* predicted start */
	char *nodes;       /* the nodes it would start on (owned) */
	char *partition;   /* the partition it would start in (owned) */
};
int hpt_slurm_will_run(const struct render_opts *opts, const char *work_dir,
		       struct hpt_slurm_will_run *out, struct sbuf *err);
void hpt_slurm_will_run_release(struct hpt_slurm_will_run *w);

/* A partition's size: name, or the default partition when NULL. */
struct hpt_slurm_partition {
	char *name;            /* owned */
	uint32_t total_nodes;
	uint32_t max_nodes;    /* per job; 0: no limit */
};
int hpt_slurm_partition(const char *name, struct hpt_slurm_partition *out, struct sbuf *err);
void hpt_slurm_partition_release(struct hpt_slurm_partition *p);

#endif
