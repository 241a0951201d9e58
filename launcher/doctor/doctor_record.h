/* doctor_record.h - a doctor run written into the node ledger.
 *
 * Shell (doctor_record.c): libslurm for the cluster's name, and the
 * ledger file rewritten under its lock (ledger_update); the events come
 * from doctor_verdict.h.
 */
#ifndef HPT_DOCTOR_RECORD_H
#define HPT_DOCTOR_RECORD_H

#include "launcher/doctor/ledger.h" // defines: struct ledger_event

#include <stddef.h>

struct sbuf;

/* Records n events (ledger_record, now) under this cluster's name, only
 * inside a Slurm job ($SLURM_JOB_ID): the ledger is per cluster, and
 * node names mean something only to the cluster that named them.
 * 0 when recorded or outside a job; -1 with warn ("no ledger record:
 * ..." when the cluster or the ledger's path is unknown, "the ledger
 * was not updated: ..." when the file could not be) otherwise. */
int doctor_record_ledger(const struct ledger_event *ev, size_t n, struct sbuf *warn);

#endif
