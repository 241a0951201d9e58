/* slurm.c - submit, query and cancel jobs through libslurm (22.05 API).
 * Shell: talks to slurmctld (see slurm.h for the contract: every action
 * returns 0 or a common/exitcode.h status with Slurm's reason in err). */
#include "launcher/slurm/slurm.h"  // defines: hpt_slurm_submit, struct hpt_slurm_job
#include "common/bug.h"  // defines: BUG, BUG_NOTE
#include "common/exitcode.h"    // defines: HPT_EXIT_UNAVAILABLE, HPT_EXIT_REJECTED
#include "launcher/slurm/slurm_errno.h" // defines: hpt_slurm_errno_status
#include "common/sbuf.h"        // defines: struct sbuf, xstrdup, SBUF_CLIP
#include "launcher/slurm/render.h" // defines: struct render_opts
#include "launcher/slurm/slurm_state.h" // defines: hpt_slurm_state_of
#include "common/strfmt.h" // defines: strfmt_label

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* libslurm exports these but 22.05's slurm.h does not declare them
 * (nm -D libslurm.so lists both); declared here,
 * with the signatures of src/common/slurm_protocol_defs.h. */
extern char *slurm_node_state_string(uint32_t inx);
extern const char *slurm_job_reason_string(enum job_state_reason inx);
extern void slurm_hostlist_uniq(hostlist_t hl);
extern void slurm_hostlist_sort(hostlist_t hl);
extern void slurm_free_will_run_response_msg(will_run_response_msg_t *msg);

#define DEFAULT_CONF "/etc/slurm/slurm.conf"

/* A failed call's status: could Slurm not be reached, or did it say no?
 * what is the action ("submit the job"); the message reads
 * "cannot submit the job: Slurm is unavailable: REASON" or
 * "Slurm rejected the job: REASON" (rejected, when given, names the
 * refusal better than "cannot ..."). */
static int failure(const char *what, const char *rejected, struct sbuf *err)
{
	int e = slurm_get_errno();
	int status = hpt_slurm_errno_status(e);

	if (status == HPT_EXIT_UNAVAILABLE)
		sbuf_addf(err, "cannot %s: Slurm is unavailable: %s", what, slurm_strerror(e));
	else if (status == HPT_EXIT_REJECTED && rejected)
		sbuf_addf(err, "%s: %s", rejected, slurm_strerror(e));
	else
		sbuf_addf(err, "cannot %s: %s", what, slurm_strerror(e));
	return status;
}

/* libslurm's configuration, read once per process: the first
 * hpt_slurm_init reads it, the program's main frees it. */
static bool connected;

int hpt_slurm_init(struct sbuf *err)
{
	const char *conf = getenv("SLURM_CONF");

	if (connected)
		return 0;
	if (conf && !*conf)
		conf = NULL;
	if (access(conf ? conf : DEFAULT_CONF, R_OK)) {
		sbuf_addf(err, "no Slurm configuration: cannot read %s%s: %s", conf ? conf : DEFAULT_CONF,
			  conf ? " (from SLURM_CONF)" : " (set SLURM_CONF to your cluster's slurm.conf)",
			  strerror(errno));
		return HPT_EXIT_UNAVAILABLE;
	}
	slurm_init(conf);
	connected = true;
	return 0;
}

bool hpt_slurm_fini(void)
{
	bool was = connected;

	if (connected)
		slurm_fini();
	connected = false;
	return was;
}

void hpt_slurm_forget_job(void)
{
	for (size_t i = 0; environ[i];) {
		const char *eq = strchr(environ[i], '=');
		char name[256];
		size_t len = eq ? (size_t)(eq - environ[i]) : 0;

		/* an entry without '=' names no variable unsetenv could remove */
		if (!eq || strncmp(environ[i], "SLURM_", 6) || len >= sizeof(name) ||
		    !strncmp(environ[i], "SLURM_CONF=", 11)) {
			i++;
			continue;
		}
		memcpy(name, environ[i], len);
		name[len] = '\0';
		unsetenv(name); /* environ shifts down: look at i again */
	}
}

void hpt_slurm_submit_result_release(struct hpt_slurm_submit_result *r)
{
	if (!r)
		return;
	free(r->user_msg);
	r->user_msg = NULL;
	r->job_id = 0;
}

/* One setter per option render_sbatch_options can emit, the way sbatch's
 * slurm_opt.c gives each option its setter; a switch with no default,
 * so that an option render gains without a setter here fails the build
 * (-Wswitch), and a key out of range is a bug. */
static void set_opt(job_desc_msg_t *d, const struct render_opt *o, char *tres, size_t tres_len)
{
	switch (o->key) {
	case RENDER_OPT_JOB_NAME:
		d->name = o->text;
		return;
	case RENDER_OPT_NODES:
		d->min_nodes = (uint32_t)o->num;
		d->max_nodes = (uint32_t)(o->num2 ? o->num2 : o->num);
		return;
	case RENDER_OPT_NTASKS_PER_NODE:
		d->ntasks_per_node = (uint16_t)o->num;
		return;
	case RENDER_OPT_CPUS_PER_TASK:
		d->cpus_per_task = (uint16_t)o->num;
		return;
	case RENDER_OPT_GPUS_PER_NODE:
		/* encode-ok: 9 + 20 digits in 64 */
		snprintf(tres, tres_len, "gres:gpu:%lld", (long long)o->num); /* == --gpus-per-node */
		d->tres_per_node = tres;
		return;
	case RENDER_OPT_MEM:
		d->pn_min_memory = (uint64_t)o->num;
		return;
	case RENDER_OPT_TIME:
		d->time_limit = (uint32_t)o->num;
		return;
	case RENDER_OPT_PARTITION:
		d->partition = o->text;
		return;
	case RENDER_OPT_ACCOUNT:
		d->account = o->text;
		return;
	case RENDER_OPT_QOS:
		d->qos = o->text;
		return;
	case RENDER_OPT_CONSTRAINT:
		d->features = o->text;
		return;
	case RENDER_OPT_EXCLUDE:
		d->exc_nodes = o->text;
		return;
	case RENDER_OPT_EXCLUSIVE:
		d->shared = JOB_SHARED_NONE;
		return;
	case RENDER_OPT_SIGNAL:
		d->warn_signal = (uint16_t)o->num;
		d->warn_time = (uint16_t)o->num2;
		d->warn_flags = 0; /* to the steps, not the batch shell (no "B:") */
		return;
	case RENDER_OPT_REQUEUE:
		d->requeue = 1;
		return;
	case RENDER_OPT_NO_REQUEUE:
		d->requeue = 0;
		return;
	case RENDER_OPT_NO_KILL:
		d->kill_on_node_fail = 0;
		return;
	case RENDER_OPT_OPEN_MODE:
		d->open_mode = OPEN_MODE_APPEND;
		return;
	case RENDER_OPT_OUTPUT:
		d->std_out = o->text;
		return;
	case RENDER_OPT_ARRAY:
		d->array_inx = o->text;
		return;
	}
	BUG("no job_desc setter for option %d (--%s)", (int)o->key, o->name);
}

/* The job description of opts, for a job or a question about one
 * (will-run): the options, the caller's ids (slurmctld rejects NO_VAL
 * ones), and what sbatch derives from --nodes and --ntasks-per-node:
 * without min_cpus the job gets one CPU and its srun step cannot start. */
static void job_desc(const struct render_opts *opts, job_desc_msg_t *d, char *tres,
		     size_t tres_len)
{
	uint32_t cpt;

	slurm_init_job_desc_msg(d);
	for (size_t i = 0; i < opts->n; i++)
		set_opt(d, &opts->v[i], tres, tres_len);
	d->user_id = getuid();
	d->group_id = getgid();
	cpt = d->cpus_per_task == (uint16_t)NO_VAL ? 1 : d->cpus_per_task;
	/* A range (max_nodes above min_nodes) leaves the task count to the
	 * nodes granted, as sbatch --nodes=MIN-MAX --ntasks-per-node does;
	 * min_cpus covers MIN nodes' tasks. */
	if (d->min_nodes != NO_VAL && d->ntasks_per_node != (uint16_t)NO_VAL) {
		if (d->max_nodes == d->min_nodes)
			d->num_tasks = d->min_nodes * d->ntasks_per_node;
		d->min_cpus = d->min_nodes * d->ntasks_per_node * cpt;
	}
}

int hpt_slurm_submit(const struct render_opts *opts, const char *script, const char *work_dir,
		     struct hpt_slurm_submit_result *out, struct sbuf *err)
{
	job_desc_msg_t desc;
	submit_response_msg_t *resp = NULL;
	char tres[64];

	memset(out, 0, sizeof(*out));
	job_desc(opts, &desc, tres, sizeof(tres));
	desc.script = (char *)script;
	desc.work_dir = (char *)work_dir;
	/* sbatch's default --export=ALL */
	desc.environment = environ;
	desc.env_size = 0;
	while (environ[desc.env_size])
		desc.env_size++;
	if (slurm_submit_batch_job(&desc, &resp) != SLURM_SUCCESS)
		return failure("submit the job", "Slurm rejected the job", err);
	out->job_id = resp->job_id;
	if (resp->job_submit_user_msg && *resp->job_submit_user_msg)
		out->user_msg = xstrdup(resp->job_submit_user_msg);
	slurm_free_submit_response_response_msg(resp);
	return 0;
}

int hpt_slurm_cluster_name(struct sbuf *out, struct sbuf *err)
{
	slurm_conf_t *conf = NULL;

	if (slurm_load_ctl_conf((time_t)0, &conf) != SLURM_SUCCESS)
		return failure("read the controller's configuration", NULL, err);
	sbuf_addstr(out, conf->cluster_name ? conf->cluster_name : "");
	slurm_free_ctl_conf(conf);
	return 0;
}

int hpt_slurm_max_array_size(uint32_t *out, struct sbuf *err)
{
	slurm_conf_t *conf = NULL;

	if (slurm_load_ctl_conf((time_t)0, &conf) != SLURM_SUCCESS)
		return failure("read the controller's configuration", NULL, err);
	*out = conf->max_array_sz;
	slurm_free_ctl_conf(conf);
	return 0;
}

int hpt_slurm_munge_socket(struct sbuf *out, struct sbuf *err)
{
	slurm_conf_t *conf = NULL;
	const char *p;

	if (slurm_load_ctl_conf((time_t)0, &conf) != SLURM_SUCCESS)
		return failure("read the controller's configuration", NULL, err);
	/* AuthInfo=socket=PATH,cred_expire=10 */
	p = conf->authinfo ? strstr(conf->authinfo, "socket=") : NULL;
	if (p) {
		p += strlen("socket=");
		sbuf_add(out, p, strcspn(p, ","));
	}
	slurm_free_ctl_conf(conf);
	return 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int hpt_slurm_node_names(char ***names, size_t *n, struct sbuf *err)
{
	node_info_msg_t *msg = NULL;

	*names = NULL;
	*n = 0;
	/* SHOW_ALL: a node of a hidden partition is still a name --exclude takes */
	if (slurm_load_node((time_t)0, &msg, SHOW_ALL) != SLURM_SUCCESS)
		return failure("list the cluster's nodes", NULL, err);
	*names = xcalloc(msg->record_count + 1, sizeof(**names));
	for (uint32_t i = 0; i < msg->record_count; i++)
		if (msg->node_array[i].name) /* a slot of no node (a future or removed one) */
			(*names)[(*n)++] = xstrdup(msg->node_array[i].name);
	slurm_free_node_info_msg(msg);
	qsort(*names, *n, sizeof(**names), by_name);
	return 0;
}

int64_t hpt_slurm_idle_nodes(const char *exclude, struct sbuf *err)
{
	node_info_msg_t *msg = NULL;
	int64_t idle = 0;

	if (slurm_load_node((time_t)0, &msg, SHOW_ALL) != SLURM_SUCCESS) {
		failure("list the cluster's nodes", NULL, err);
		return -1;
	}
	for (uint32_t i = 0; i < msg->record_count; i++) {
		const node_info_t *nd = &msg->node_array[i];
		uint32_t bad = NODE_STATE_DRAIN | NODE_STATE_FAIL | NODE_STATE_NO_RESPOND |
			       NODE_STATE_COMPLETING | NODE_STATE_POWERED_DOWN;

		if (!nd->name || (nd->node_state & NODE_STATE_BASE) != NODE_STATE_IDLE ||
		    (nd->node_state & bad))
			continue;
		idle += !(exclude && *exclude && hpt_slurm_hostlist_has(exclude, nd->name) == 1);
	}
	slurm_free_node_info_msg(msg);
	return idle;
}

int hpt_slurm_node_failed(const char *node, struct sbuf *state, struct sbuf *err)
{
	node_info_msg_t *msg = NULL;
	char *name = xstrdup(node);
	int failed = 0, rc;

	rc = slurm_load_node_single(&msg, name, SHOW_ALL);
	free(name);
	if (rc != SLURM_SUCCESS)
		return failure("read the node's state", NULL, err);
	for (uint32_t i = 0; msg && i < msg->record_count; i++) {
		const node_info_t *nd = &msg->node_array[i];

		if (!nd->name || strcmp(nd->name, node))
			continue;
		/* NOT_RESPONDING alone is a missed ping, set and cleared
		 * under load; slurmctld sets DOWN once SlurmdTimeout passes */
		failed = (nd->node_state & NODE_STATE_BASE) == NODE_STATE_DOWN ||
			 (nd->node_state & NODE_STATE_FAIL);
		if (failed) {
			sbuf_addstr(state, slurm_node_state_string(nd->node_state));
			if (nd->reason && *nd->reason)
				sbuf_addf(state, ": %s", nd->reason);
		}
	}
	slurm_free_node_info_msg(msg);
	return failed;
}

bool hpt_slurm_node_names_has(char *const *names, size_t n, const char *node)
{
	return n && bsearch(&node, names, n, sizeof(*names), by_name);
}

void hpt_slurm_node_names_free(char **names, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

int hpt_slurm_hostlist(const char *prev, const char *const *add, size_t n, struct sbuf *out)
{
	hostlist_t hl = slurm_hostlist_create(prev && *prev ? prev : NULL);
	char *s;

	if (!hl)
		return -1;
	for (size_t i = 0; i < n; i++)
		slurm_hostlist_push_host(hl, add[i]);
	slurm_hostlist_uniq(hl); /* sorts too */
	s = slurm_hostlist_ranged_string_malloc(hl);
	slurm_hostlist_destroy(hl);
	if (!s)
		return -1;
	sbuf_addstr(out, s);
	free(s);
	return 0;
}

int hpt_slurm_hostlist_check(const char *s, struct sbuf *err)
{
	struct sbuf out = SBUF_INIT;
	int rc = 0;

	if (!*s || strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-[],") !=
		       strlen(s) || hpt_slurm_hostlist(s, NULL, 0, &out)) {
		sbuf_addf(err, "'%s' is not a Slurm hostlist such as node[1-3,7]", SBUF_CLIP(s));
		rc = -1;
	}
	sbuf_release(&out);
	return rc;
}

int hpt_slurm_hostlist_names(const char *list, char ***names, size_t *n)
{
	hostlist_t hl = slurm_hostlist_create(list && *list ? list : NULL);
	char *h;

	*names = NULL;
	*n = 0;
	if (!hl)
		return -1;
	while ((h = slurm_hostlist_shift(hl))) {
		*names = xrealloc(*names, (*n + 1) * sizeof(**names));
		(*names)[(*n)++] = xstrdup(h);
		free(h);
	}
	slurm_hostlist_destroy(hl);
	return 0;
}

int hpt_slurm_hostlist_has(const char *list, const char *host)
{
	hostlist_t hl = slurm_hostlist_create(list && *list ? list : NULL);
	int found;

	if (!hl)
		return 0;
	found = slurm_hostlist_find(hl, host) >= 0;
	slurm_hostlist_destroy(hl);
	return found;
}

void hpt_slurm_job_release(struct hpt_slurm_job *j)
{
	if (!j)
		return;
	free(j->name);
	free(j->state);
	free(j->reason);
	free(j->nodes);
	free(j->partition);
	free(j->work_dir);
	free(j->array_pending);
	memset(j, 0, sizeof(*j));
}

static char *dup_or_empty(const char *s)
{
	return xstrdup(s ? s : "");
}

void hpt_slurm_job_copy(struct hpt_slurm_job *dst, const struct hpt_slurm_job *src)
{
	*dst = *src;
	dst->name = dup_or_empty(src->name);
	dst->state = dup_or_empty(src->state);
	dst->reason = dup_or_empty(src->reason);
	dst->nodes = dup_or_empty(src->nodes);
	dst->partition = dup_or_empty(src->partition);
	dst->work_dir = dup_or_empty(src->work_dir);
	dst->array_pending = dup_or_empty(src->array_pending);
}

static void fill_job(const slurm_job_info_t *in, struct hpt_slurm_job *j)
{
	struct hpt_slurm_state state;
	const char *reason = "";

	hpt_slurm_state_of(in->job_state, &state);
	memset(j, 0, sizeof(*j));
	j->job_id = in->job_id;
	j->name = dup_or_empty(in->name);
	/* COMPLETING while it is: a COMPLETED that is not finished would
	 * have status --wait print an end and go on waiting */
	j->state = dup_or_empty(state.name);
	if (in->state_desc && *in->state_desc)
		reason = in->state_desc;
	else if (in->state_reason != WAIT_NO_REASON)
		reason = slurm_job_reason_string(in->state_reason);
	j->reason = dup_or_empty(reason);
	j->nodes = dup_or_empty(in->nodes);
	j->partition = dup_or_empty(in->partition);
	j->work_dir = dup_or_empty(in->work_dir);
	j->uid = in->user_id;
	/* ended, and its processes gone: nothing more will reach its logs;
	 * a job being requeued is on its way back to PENDING */
	j->pending = state.pending;
	j->finished = state.finished;
	j->completed = state.completed;
	if (j->finished && in->exit_code != NO_VAL) {
		int st = (int)in->exit_code;

		j->exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : 0;
		j->exit_signal = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
	}
	j->restarts = in->restart_cnt;
	j->nodes_n = in->num_nodes;
	j->tasks = in->num_tasks == NO_VAL ? 0 : in->num_tasks;
	j->array_job_id = in->array_job_id;
	j->array_task = -1;
	if (in->array_job_id && in->array_task_id != NO_VAL)
		j->array_task = in->array_task_id;
	j->array_pending = dup_or_empty(in->array_task_str);
	j->submit_time = in->submit_time;
	j->start_time = state.pending ? 0 : in->start_time;
	j->end_time = j->finished ? in->end_time : 0;
}

int hpt_slurm_job(uint32_t job_id, struct hpt_slurm_job *out, struct sbuf *err)
{
	job_info_msg_t *msg = NULL;
	char what[64];

	memset(out, 0, sizeof(*out));
	strfmt_label(what, sizeof(what), "load job %u", job_id);
	if (slurm_load_job(&msg, job_id, SHOW_ALL) != SLURM_SUCCESS)
		return failure(what, NULL, err);
	if (!msg->record_count) {
		slurm_free_job_info_msg(msg);
		sbuf_addf(err, "cannot %s: %s", what, slurm_strerror(ESLURM_INVALID_JOB_ID));
		return HPT_EXIT_NO_INPUT;
	}
	fill_job(&msg->job_array[0], out);
	slurm_free_job_info_msg(msg);
	return 0;
}

static int by_id(const void *a, const void *b)
{
	const struct hpt_slurm_job *x = a, *y = b;
	/* an array's tasks together, in task order, its pending record last */
	uint32_t xi = x->array_job_id ? x->array_job_id : x->job_id;
	uint32_t yi = y->array_job_id ? y->array_job_id : y->job_id;
	int64_t xt = x->array_task < 0 ? INT64_MAX : x->array_task;
	int64_t yt = y->array_task < 0 ? INT64_MAX : y->array_task;

	if (xi != yi)
		return xi < yi ? -1 : 1;
	return xt < yt ? -1 : xt > yt;
}

static void fill_all(const job_info_msg_t *msg, struct hpt_slurm_job **v, size_t *n)
{
	*v = xcalloc(msg->record_count + 1, sizeof(**v));
	*n = 0;
	for (uint32_t i = 0; i < msg->record_count; i++)
		fill_job(&msg->job_array[i], &(*v)[(*n)++]);
	qsort(*v, *n, sizeof(**v), by_id);
}

int hpt_slurm_job_all(uint32_t job_id, struct hpt_slurm_job **v, size_t *n, struct sbuf *err)
{
	job_info_msg_t *msg = NULL;
	char what[64];

	*v = NULL;
	*n = 0;
	strfmt_label(what, sizeof(what), "load job %u", job_id);
	if (slurm_load_job(&msg, job_id, SHOW_ALL) != SLURM_SUCCESS)
		return failure(what, NULL, err);
	if (!msg->record_count) {
		slurm_free_job_info_msg(msg);
		sbuf_addf(err, "cannot %s: %s", what, slurm_strerror(ESLURM_INVALID_JOB_ID));
		return HPT_EXIT_NO_INPUT;
	}
	fill_all(msg, v, n);
	slurm_free_job_info_msg(msg);
	return 0;
}

/* Whether "0,2-5:2%2" (a pending array record's task list) holds task. */
static bool task_list_has(const char *list, int64_t task)
{
	char *p = (char *)list;

	while (*p && *p != '%') {
		char *end;
		long a = strtol(p, &end, 10), b = a, step = 1;

		if (end == p)
			return false;
		if (*end == '-')
			b = strtol(end + 1, &end, 10);
		if (*end == ':')
			step = strtol(end + 1, &end, 10);
		if (task >= a && task <= b && step > 0 && (task - a) % step == 0)
			return true;
		p = end + (*end == ',');
		if (*end && *end != ',' && *end != '%')
			return false;
	}
	return false;
}

/* v is in by_id's order: the tasks' own records by task, then the
 * array's pending records (one, or a few).  The own records are
 * searched by halves: status finds each of a sweep's points in its
 * array's records, and a scan per point was O(points x tasks). */
const struct hpt_slurm_job *hpt_slurm_task_in(const struct hpt_slurm_job *v, size_t n,
					      int64_t task)
{
	const struct hpt_slurm_job *pending = NULL;
	size_t own = n, lo = 0, hi;

	while (own && v[own - 1].array_task < 0)
		own--;
	for (hi = own; lo < hi;) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].array_task == task)
			return &v[mid];
		if (v[mid].array_task < task)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = own; i < n; i++)
		if (task_list_has(v[i].array_pending, task))
			pending = &v[i];
	return pending;
}

int hpt_slurm_array_task(uint32_t array_id, int64_t task, struct hpt_slurm_job *out,
			 struct sbuf *err)
{
	struct hpt_slurm_job *v = NULL;
	const struct hpt_slurm_job *found;
	size_t n = 0;
	int status = hpt_slurm_job_all(array_id, &v, &n, err);

	memset(out, 0, sizeof(*out));
	found = status ? NULL : hpt_slurm_task_in(v, n, task);
	if (found) {
		*out = *found;
		memset(&v[found - v], 0, sizeof(*v)); /* its strings now out's */
		out->array_task = task;
	} else if (!status) {
		sbuf_addf(err, "cannot load job %u_%lld: Slurm no longer knows it (without "
			  "accounting, finished jobs are forgotten after MinJobAge)", array_id,
			  (long long)task);
		status = HPT_EXIT_NO_INPUT;
	}
	for (size_t i = 0; i < n; i++)
		hpt_slurm_job_release(&v[i]);
	free(v);
	return status;
}

int hpt_slurm_jobs_of(uint32_t uid, struct hpt_slurm_job **v, size_t *n, struct sbuf *err)
{
	job_info_msg_t *msg = NULL;

	*v = NULL;
	*n = 0;
	if (slurm_load_job_user(&msg, uid, SHOW_ALL) != SLURM_SUCCESS)
		return failure("list jobs", NULL, err);
	fill_all(msg, v, n);
	slurm_free_job_info_msg(msg);
	return 0;
}

int hpt_slurm_cancel(uint32_t job_id, int64_t task, bool *was_done, struct sbuf *err)
{
	char what[64], id[40];

	*was_done = false;
	if (task >= 0)
		/* encode-ok: 10 + 1 + 20 digits in 40 */
		snprintf(id, sizeof(id), "%u_%lld", job_id, (long long)task);
	else
		/* encode-ok: 10 digits in 40 */
		snprintf(id, sizeof(id), "%u", job_id);
	strfmt_label(what, sizeof(what), "cancel job %s", id);
	/* by its string id: an array task alone, not the whole array */
	if (slurm_kill_job2(id, SIGKILL, 0, NULL) == SLURM_SUCCESS)
		return 0;
	if (slurm_get_errno() == ESLURM_ALREADY_DONE) {
		*was_done = true;
		return 0;
	}
	return failure(what, NULL, err);
}

int hpt_slurm_will_run(const struct render_opts *opts, const char *work_dir,
		       struct hpt_slurm_will_run *out, struct sbuf *err)
{
	job_desc_msg_t desc;
	will_run_response_msg_t *resp = NULL;
	char tres[64];

	memset(out, 0, sizeof(*out));
	job_desc(opts, &desc, tres, sizeof(tres));
	desc.work_dir = (char *)work_dir;
	if (slurm_job_will_run2(&desc, &resp) != SLURM_SUCCESS || !resp)
		return failure("ask when the job would start", "Slurm would not run the job", err);
	out->start = resp->start_time;
	out->nodes = xstrdup(resp->node_list ? resp->node_list : "");
	out->partition = xstrdup(resp->part_name ? resp->part_name : "");
	slurm_free_will_run_response_msg(resp);
	return 0;
}

void hpt_slurm_will_run_release(struct hpt_slurm_will_run *w)
{
	free(w->nodes);
	free(w->partition);
	w->nodes = w->partition = NULL;
}

int hpt_slurm_partition(const char *name, struct hpt_slurm_partition *out, struct sbuf *err)
{
	partition_info_msg_t *msg = NULL;
	int status = HPT_EXIT_NO_INPUT;

	memset(out, 0, sizeof(*out));
	if (slurm_load_partitions(0, &msg, SHOW_ALL) != SLURM_SUCCESS)
		return failure("load the partitions", "Slurm refused to list the partitions", err);
	for (uint32_t i = 0; i < msg->record_count; i++) {
		const partition_info_t *p = &msg->partition_array[i];

		if (name ? strcmp(p->name, name) : !(p->flags & PART_FLAG_DEFAULT))
			continue;
		out->name = xstrdup(p->name);
		out->total_nodes = p->total_nodes;
		out->max_nodes = p->max_nodes == INFINITE ? 0 : p->max_nodes;
		status = 0;
		break;
	}
	slurm_free_partition_info_msg(msg);
	if (status)
		sbuf_addf(err, name ? "no partition %s" : "no default partition%s", name ? name : "");
	return status;
}

void hpt_slurm_partition_release(struct hpt_slurm_partition *p)
{
	free(p->name);
	p->name = NULL;
}
