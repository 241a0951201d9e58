/* doctor_record.c - a doctor run into the node ledger (see
 * doctor_record.h).  Shell: libslurm, the ledger file, the clock. */
#include "launcher/doctor/doctor_record.h" // defines: doctor_record_ledger
#include "common/sbuf.h"                   // defines: struct sbuf
#include "launcher/doctor/doctor_env.h"    // defines: doctor_env_slurm_ready
#include "launcher/slurm/slurm.h"          // defines: hpt_slurm_cluster_name

#include <stdlib.h>
#include <time.h>

struct ledger_run {
	const char *cluster;
	const struct ledger_event *ev;
	size_t n;
};

/* Under the ledger's lock, so now is the time of the write. */
static int record_run(json_t *doc, void *arg)
{
	struct ledger_run *r = arg;

	ledger_record(doc, r->cluster, r->ev, r->n, time(NULL));
	return 0;
}

int doctor_record_ledger(const struct ledger_event *ev, size_t n, struct sbuf *warn)
{
	struct sbuf err = SBUF_INIT, cluster = SBUF_INIT, path = SBUF_INIT;
	struct ledger_run r = { NULL, ev, n };
	int status = 0;

	if (!getenv("SLURM_JOB_ID"))
		return 0;
	if (doctor_env_slurm_ready(&err) || hpt_slurm_cluster_name(&cluster, &err) ||
	    ledger_path(&path, &err)) {
		sbuf_addf(warn, "no ledger record: %s", err.buf);
		status = -1;
		goto out;
	}
	r.cluster = cluster.buf;
	sbuf_reset(&err);
	if (ledger_update(path.buf, record_run, &r, &err)) {
		sbuf_addf(warn, "the ledger was not updated: %s", err.buf);
		status = -1;
	}
out:
	sbuf_release(&err);
	sbuf_release(&cluster);
	sbuf_release(&path);
	return status;
}
