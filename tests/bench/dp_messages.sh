#!/bin/sh
# dp_messages.sh - what a rank of the bundled trainer sends per step, by
# world size: the trainer (mlp on synthetic data, batch 8 a rank, STEPS
# steps, default 20) at each of RANKS (default "2 4 8 16"; 32 and 64 run
# too, slowly, on a small machine) under mpirun --oversubscribe on this
# machine, counted by Open MPI's own pml monitoring
# (--mca pml_monitoring_enable 2: "E" lines are the program's own
# point-to-point messages, "I" the collectives' internal ones).  TRAIN
# names another build of hpctrain-train to compare (default
# bin/hpctrain-train).
#
# Per world size, rank 0's and the mean rank's messages per step, split
# into the program's own (the stall watchdog's and any other control
# traffic: goal 0 in a step that does not stall, at any size) and the
# collectives' (the allreduces, broadcasts and gathers Open MPI runs:
# its algorithms grow as log N or N per rank), and bytes per step.
# "growth" is the ratio to the row above: a term that grows as N shows
# about 2 per doubling, log N about (k+1)/k.
#
# Not a test: counts, not times; it asserts nothing.
set -eu
cd "$(dirname "$0")/../.."
STEPS=${STEPS:-20} RANKS=${RANKS:-2 4 8 16} TRAIN=${TRAIN:-bin/hpctrain-train}
if ! command -v mpirun >/dev/null 2>&1 || [ ! -x "$TRAIN" ]; then
	echo "skipped: no mpirun or no $TRAIN"
	exit 0
fi
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
cat >"$W/s.yaml" <<YAML
version: 1
name: messages
train:
  model: mlp
  dataset: synthetic
  epochs: 1
  max_steps: $STEPS
  batch_per_rank: 8
  optimizer: {name: sgd, lr: 0.01}
  checkpoint: {every_steps: 0, keep: 1}
output: {dir: $W/runs, log_every_steps: 100000}
YAML
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1 \
	OMPI_MCA_mpi_yield_when_idle=1
echo "messages sent per step (mlp, batch 8 a rank, $STEPS steps; Open MPI pml monitoring)"
printf '  %6s %12s %12s %12s %12s %14s %7s\n' ranks "own rank 0" "own mean" "coll rank 0" \
	"coll mean" "bytes rank 0" growth
prev=
for n in $RANKS; do
	rm -rf "$W/runs" "$W/r"
	if ! timeout 600 mpirun --oversubscribe --bind-to none -np "$n" \
		--mca pml_monitoring_enable 2 --mca pml_monitoring_enable_output 1 \
		"$TRAIN" -q --run "$W/r" "$W/s.yaml" >"$W/out" 2>&1; then
		printf '  %6s failed: %s\n' "$n" "$(grep -v '^[EI]	' "$W/out" | tail -1)"
		continue
	fi
	# E|I <from> <to> <bytes> bytes <msgs> msgs sent ...
	awk -F'\t' -v n="$n" -v s="$STEPS" -v prev="$prev" '
		$1 == "E" || $1 == "I" {
			split($4, b, " "); split($5, m, " ")
			msgs[$1, $2] += m[1]; tot[$1] += m[1]
			if ($2 == 0) bytes0 += b[1]
		}
		END {
			own0 = msgs["E", 0] / s; coll0 = msgs["I", 0] / s
			g = prev == "" || prev == 0 ? "-" : sprintf("%.2f", coll0 / prev)
			printf "  %6d %12.1f %12.1f %12.1f %12.1f %14.0f %7s\n", n, own0,
				tot["E"] / n / s, coll0, tot["I"] / n / s, bytes0 / s, g
			print coll0 > "/dev/stderr"
		}' "$W/out" 2>"$W/prev"
	prev=$(cat "$W/prev")
done
