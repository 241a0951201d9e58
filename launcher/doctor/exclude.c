/* exclude.c - the nodes a submission leaves out (exclude.h).  Shell. */
#include "launcher/doctor/exclude.h" // defines: exclude_build
#include "common/exitcode.h"         // defines: HPT_EXIT_USAGE
#include "common/sbuf.h"             // defines: struct sbuf
#include "launcher/doctor/ledger.h"  // defines: ledger_load, ledger_cooling, ledger_cooling_note
#include "launcher/slurm/slurm.h"    // defines: hpt_slurm_hostlist, hpt_slurm_cluster_name

#include <jansson.h>
#include <stdlib.h>
#include <time.h>

/* The nodes of cluster in the ledger's cooldown, each said in notes. */
static size_t cooling_nodes(const char *cluster, json_t **doc, const char ***nodes,
			    struct sbuf *notes)
{
	struct sbuf path = SBUF_INIT, err = SBUF_INIT;
	time_t now = time(NULL);
	size_t n = 0;

	*nodes = NULL;
	if (ledger_path(&path, &err) || ledger_load(path.buf, doc, &err)) {
		sbuf_addf(notes, "hpctrain: warning: the node ledger was not read: %s\n", err.buf);
		goto out;
	}
	n = ledger_cooling(*doc, cluster, now, nodes);
	for (size_t i = 0; i < n; i++) {
		sbuf_addstr(notes, "hpctrain: ");
		ledger_cooling_note(ledger_entry(*doc, cluster, (*nodes)[i]), (*nodes)[i], now, notes);
		sbuf_addch(notes, '\n');
	}
out:
	sbuf_release(&path);
	sbuf_release(&err);
	return n;
}

int exclude_build(const char *user, bool ledger, struct sbuf *list, struct sbuf *notes,
		  struct sbuf *err)
{
	struct sbuf cluster = SBUF_INIT, why = SBUF_INIT;
	const char **nodes = NULL;
	json_t *doc = NULL;
	size_t n = 0;
	int status = 0;

	if (ledger && !hpt_slurm_cluster_name(&cluster, &why))
		n = cooling_nodes(cluster.buf, &doc, &nodes, notes);
	else if (ledger)
		sbuf_addf(notes, "hpctrain: warning: the node ledger was not read: %s\n", why.buf);
	if ((user || n) && hpt_slurm_hostlist(user, nodes, n, list)) {
		sbuf_addf(err, "cannot make a hostlist of '%s' and the ledger's nodes", user ? user : "");
		status = HPT_EXIT_USAGE;
	}
	free(nodes);
	json_decref(doc);
	sbuf_release(&cluster);
	sbuf_release(&why);
	return status;
}
