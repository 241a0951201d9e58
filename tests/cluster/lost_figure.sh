#!/bin/bash
# lost_figure.sh - how long a run that lost a node takes to train again:
# on a two-node netns cluster (up.sh MODE=netns NODES=2), the bundled
# trainer on nodes 1-2 with a checkpoint every step; after 5 steps the
# controller takes node2 DOWN (scontrol, as a health check would);
# doctor --lost resubmits the run without node2, and attempt 2 resumes
# on node1.  Prints, from file times polled every few milliseconds: the
# node taken down to attempt 2's
# submission (Slurm ending the step), Slurm's share (submission to the
# batch script's start), the batch script and srun to the rank's start,
# the rank's start to the trainer's "resuming from" line (program
# start, MPI, data set, model and the checkpoint load), and that line
# to the first step.  Needs root; run from the repository after make.
# Not part of the suite: a measurement.
set -u
cd "$(dirname "$0")/../.." || exit 70
export HPT=$PWD/bin/hpctrain
B=$(mktemp -d /tmp/hpt-lost-figure.XXXXXX)
W=$(mktemp -d /tmp/hpt-lost-figure-work.XXXXXX)
trap 'BASE=$B tests/cluster/down.sh >/dev/null 2>&1; rmdir "$B" 2>/dev/null; rm -rf "$W"' EXIT
BASE=$B MODE=netns NODES=2 tests/cluster/up.sh >"$W/up.log" 2>&1 || { cat "$W/up.log"; exit 1; }
export SLURM_CONF=$B/etc/slurm.conf HPCTRAIN_LEDGER=$W/ledger.json XDG_CACHE_HOME=$W/xdg
cat >"$W/train.yaml" <<SPEC
version: 1
name: train
resources: {nodes: 1-2, ranks_per_node: 1, time: "00:05:00"}
binding: {gpu: none, cpu: none, memory: none, nic: none}
env: {OMP_NUM_THREADS: "1"}
train:
  model: cnn
  dataset: synthetic
  epochs: 1
  max_steps: 40
  batch_per_rank: 32
  optimizer: {name: sgd, lr: 0.05, momentum: 0.9}
  checkpoint: {every_steps: 1, keep: 2}
output: {dir: $W/runs, log_every_steps: 1}
preempt: {lead_s: 0}
preflight: false
SPEC
out=$("$HPT" submit --json "$W/train.yaml") || exit 1
DIR=$(jq -r .dir <<<"$out")
JOB=$(jq -r .job_id <<<"$out")
A=$DIR/attempts/2
for _ in $(seq 300); do
	n=$(grep -c '"step"' "$DIR/metrics.jsonl" 2>/dev/null)
	[ "${n:-0}" -ge 5 ] && break
	sleep 0.1
done
(
	sub= res= step=
	for _ in $(seq 20000); do
		now=$(date +%s.%N)
		[ -z "$sub" ] && [ -f "$A/submit.json" ] && sub=$now
		[ -z "$res" ] && grep -qs "resuming from" "$A/logs/rank-0.out" && res=$now
		[ -z "$step" ] && grep -qs '"step"' "$A/metrics.jsonl" && step=$now && break
		sleep 0.002
	done
	echo "$sub $res $step" >"$W/poll"
) &
poll=$!
killed=$(date +%s.%N)
scontrol update nodename=node2 state=down reason="lost_figure.sh: taken away"
timeout 120 "$HPT" status --wait "$JOB" >/dev/null
wait "$poll"
read -r sub res step <"$W/poll"
job2=$(jq -r .job_id "$A/submit.json")
timeout 120 "$HPT" status --wait --json "$job2" | jq -r '"attempt 2: " + .jobs[0].state'
batch=$(stat -c %.W "$A"/logs/batch-*.out)
rank=$(jq -r .started "$A/ranks/rank-0.json")
grep -h "resuming from" "$A"/logs/rank-0.out
awk -v k="$killed" -v s="$sub" -v b="$batch" -v r="$rank" -v c="$res" -v f="$step" 'BEGIN {
	printf "node down -> attempt 2 submitted (Slurm ends the step): %.3f s\n", s - k
	printf "submitted -> batch script starts (Slurm):            %.3f s\n", b - s
	printf "batch script -> rank starts (srun, launch):          %.3f s\n", r - b
	printf "rank -> resumed (trainer start + checkpoint load):   %.3f s\n", c - r
	printf "resumed -> first step logged:                        %.3f s\n", f - c
	printf "attempt 2: batch start -> first step %.3f s, submission -> first step %.3f s\n", f - b, f - s
}'
