/* exclude.c - the nodes a submission leaves out, and how many it leaves
 * in (exclude.h).  Shell. */
#include "launcher/doctor/exclude.h" // defines: exclude_build
#include "common/exitcode.h"         // defines: HPT_EXIT_USAGE
#include "common/sbuf.h"             // defines: struct sbuf, sbuf_add_printable
#include "launcher/doctor/ledger.h"  // defines: ledger_load, ledger_cooling, ledger_cooling_note
#include "launcher/slurm/slurm.h"    // defines: hpt_slurm_hostlist, hpt_slurm_node_names, hpt_slurm_hostlist_has

#include <jansson.h>
#include <stdlib.h>
#include <time.h>

/* Drops from nodes[0..n) those the controller does not have, each said
 * in notes; returns how many are left.  A ledger entry outlives the
 * node it names (renamed, retired, another cluster of the same name),
 * and Slurm refuses a whole job whose --exclude names an unknown node
 * ("Invalid node name specified"): one such entry would fail every
 * submission until its cooldown ends.  When the controller's node list
 * cannot be read the nodes are kept, and the submission reports what
 * Slurm says. */
static size_t known_nodes(const char **nodes, size_t n, const char *cluster, struct sbuf *notes)
{
	struct sbuf err = SBUF_INIT;
	char **names;
	size_t nn, k = 0;

	if (hpt_slurm_node_names(&names, &nn, &err)) {
		sbuf_addf(notes, "warning: the ledger's nodes were not checked against "
			  "the cluster's: %s\n", err.buf);
		sbuf_release(&err);
		return n;
	}
	for (size_t i = 0; i < n; i++) {
		if (hpt_slurm_node_names_has(names, nn, nodes[i])) {
			nodes[k++] = nodes[i];
			continue;
		}
		sbuf_addstr(notes, "warning: not excluding ");
		sbuf_add_printable(notes, nodes[i]);
		sbuf_addf(notes, ", which the node ledger holds but cluster %s has no node of that "
			  "name ('hpctrain doctor --forget ", cluster);
		sbuf_add_printable(notes, nodes[i]);
		sbuf_addstr(notes, "' clears it)\n");
	}
	hpt_slurm_node_names_free(names, nn);
	return k;
}

/* The nodes of cluster in the ledger's cooldown that the cluster has,
 * each said in notes. */
static size_t cooling_nodes(const char *cluster, json_t **doc, const char ***nodes,
			    struct sbuf *notes)
{
	struct sbuf path = SBUF_INIT, err = SBUF_INIT;
	time_t now = time(NULL);
	size_t n = 0;

	*nodes = NULL;
	if (ledger_path(&path, &err) || ledger_load(path.buf, doc, &err)) {
		sbuf_addf(notes, "warning: the node ledger was not read: %s\n", err.buf);
		goto out;
	}
	n = ledger_cooling(*doc, cluster, now, nodes);
	if (n)
		n = known_nodes(*nodes, n, cluster, notes);
	for (size_t i = 0; i < n; i++) {
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
		sbuf_addf(notes, "warning: the node ledger was not read: %s\n", why.buf);
	/* The user's own --exclude goes to Slurm as given: a name it does
	 * not know is the user's to correct, and Slurm's refusal says so. */
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

int64_t exclude_nodes_left(const char *exclude)
{
	struct sbuf err = SBUF_INIT;
	char **names;
	size_t n;
	int64_t left = 0;

	if (hpt_slurm_node_names(&names, &n, &err)) {
		sbuf_release(&err);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		left += !(exclude && *exclude && hpt_slurm_hostlist_has(exclude, names[i]) == 1);
	hpt_slurm_node_names_free(names, n);
	return left;
}
