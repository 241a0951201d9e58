#!/bin/sh
# demo.sh - `make demo`: the most complete real job this version can run.
#
# Starts a throw-away one-node Slurm (tests/cluster/up.sh), submits the
# fmnist-cpu template with `hpctrain submit`, waits for it with
# `hpctrain status --wait`, prints its result, its per-rank logs and its
# run directory, and takes the cluster down again (HPT_DEMO_KEEP=1 keeps it
# up and says how to use it).  The job trains with the bundled trainer when
# bin/hpctrain-train is built (make all builds it); otherwise each rank prints the binding
# `hpctrain launch` gave it.  Runs land in build/demo/runs/.
set -eu
cd "$(dirname "$0")/.."
ROOT=$PWD
HPT=$ROOT/bin/hpctrain
BASE=${HPT_DEMO_CLUSTER:-/tmp/hpctrain-demo-cluster}
WORK=$ROOT/build/demo

if [ "$(id -u)" -ne 0 ]; then
	echo "make demo: starting a local Slurm needs root (slurmctld, slurmd, munge)" >&2
	exit 1
fi
down() {
	if [ "${HPT_DEMO_KEEP:-0}" = 1 ]; then
		echo "== the cluster stays up: export SLURM_CONF=$BASE/etc/slurm.conf;" \
			"stop it with 'make cluster-down CLUSTER_BASE=$BASE'"
	else
		BASE=$BASE bash "$ROOT/tests/cluster/down.sh" >/dev/null 2>&1 || true
	fi
}
trap down EXIT
trap 'exit 130' INT TERM

echo "== starting a one-node Slurm cluster in $BASE"
BASE=$BASE MODE=single bash "$ROOT/tests/cluster/up.sh" >/dev/null
SLURM_CONF=$BASE/etc/slurm.conf
export SLURM_CONF

mkdir -p "$WORK"
cd "$WORK"
if [ -x "$ROOT/bin/hpctrain-train" ]; then
	echo "== submitting templates/fmnist-cpu.yaml (the bundled trainer, 2 ranks)"
	set --
else
	echo "== submitting templates/fmnist-cpu.yaml; no trainer built yet, so each rank"
	echo "   prints the binding hpctrain launch gave it"
	# single quotes: the rank's shell expands these, hpctrain never does
	set -- --set 'command=[sh, -c, "echo rank $RANK of $WORLD_SIZE, local rank $LOCAL_RANK, on $(hostname): cpus $(sed -n \"s/^Cpus_allowed_list:[[:space:]]*//p\" /proc/self/status), mems $(sed -n \"s/^Mems_allowed_list:[[:space:]]*//p\" /proc/self/status), OMP_NUM_THREADS=${OMP_NUM_THREADS:-unset}, CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-none}"]'
fi
"$HPT" submit --json "$@" "$ROOT/templates/fmnist-cpu.yaml" >submit.out
JOB=$(sed -n 's/^  "job_id": \([0-9]*\),$/\1/p' submit.out)
DIR=$(sed -n 's/^  "dir": "\(.*\)",$/\1/p' submit.out)
echo "   job $JOB, run directory $DIR"

echo "== waiting for job $JOB"
status=0
"$HPT" status --wait "$JOB" || status=$?
echo "== the last lines of each rank's log (all of it: hpctrain logs $DIR)"
for f in "$DIR"/logs/rank-*.out; do
	[ -f "$f" ] || continue
	r=${f##*/rank-}
	"$HPT" logs --rank "${r%.out}" "$DIR" | tail -n 3 | sed "s/^/${r%.out}: /"
done
echo "== run directory"
ls -l "$DIR"
if [ "$status" -eq 0 ]; then
	echo "== job $JOB COMPLETED; its record is $DIR/submit.json"
else
	echo "== job $JOB did not complete; see $DIR/logs/" >&2
fi
exit "$status"
