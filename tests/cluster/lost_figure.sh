#!/bin/bash
# lost_figure.sh - how long a run that lost a node takes to train again,
# both ways side by side, on a three-node netns cluster (up.sh
# MODE=netns NODES=3): the bundled trainer on 2 nodes with a checkpoint
# every step; after 5 steps the controller takes node2 DOWN (scontrol,
# as a health check would).
#
#   resubmission: resources.nodes 2 and no spare: the allocation cannot
#     go on, so doctor --lost resubmits the run without node2 and
#     attempt 2, a new job, resumes on node1 and node3;
#   in place: resources.nodes 2 and spares 1: the batch script starts a
#     new training step in the same job on node1 and the spare node3.
#
# Prints, for each, from file times polled every few milliseconds and
# the records: node taken down -> the old step ended (srun returned:
# Slurm kills a step whose node it holds DOWN at once, with no KillWait,
# and the surviving supervisors are killed with it, so no rank's record
# says when; in place, doctor records srun's return as step_ended_at)
# -> attempt 2 made (in place: doctor's new attempt; resubmitted: its
# submit.json, one term with the step's end), -> attempt 2's rank 0
# starts (the queue and the batch script when resubmitted; srun and
# launch), -> the trainer's "resuming from" line (program start, MPI,
# data, model and the checkpoint load), -> the first step; and the
# steps lost (logged by attempt 1 after the checkpoint attempt 2
# resumed from); in place, also what the attempt's record gives for the
# last terms (status --json: the trainer's checkpoint load, rank 0's
# first heartbeat from restarted_at, the steps lost).  A node that
# goes silent instead adds Slurm's
# SlurmdTimeout (300 s by default) before the controller holds it
# DOWN.  Needs root; run from the repository after make.  Not part of
# the suite: a measurement.
set -u
cd "$(dirname "$0")/../.." || exit 70
export HPT=$PWD/bin/hpctrain
B=$(mktemp -d /tmp/hpt-lost-figure.XXXXXX)
W=$(mktemp -d /tmp/hpt-lost-figure-work.XXXXXX)
trap 'BASE=$B tests/cluster/down.sh >/dev/null 2>&1; rmdir "$B" 2>/dev/null; rm -rf "$W"' EXIT
BASE=$B MODE=netns NODES=3 tests/cluster/up.sh >"$W/up.log" 2>&1 || { cat "$W/up.log"; exit 1; }
export SLURM_CONF=$B/etc/slurm.conf XDG_CACHE_HOME=$W/xdg

# spec NAME SPARES
spec() {
	cat >"$W/$1.yaml" <<SPEC
version: 1
name: $1
resources: {nodes: 2, spares: $2, ranks_per_node: 1, time: "00:05:00"}
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
}

# measure NAME SPARES: one run, node2 taken down after 5 steps; prints
# the breakdown
measure() {
	local name=$1 out dir job a killed sub res step rank ended made last from recorded
	export HPCTRAIN_LEDGER=$W/$name-ledger.json
	spec "$name" "$2"
	out=$("$HPT" submit --json "$W/$name.yaml") || return 1
	dir=$(jq -r .dir <<<"$out")
	job=$(jq -r .job_id <<<"$out")
	a=$dir/attempts/2
	for _ in $(seq 300); do
		n=$(grep -c '"step"' "$dir/metrics.jsonl" 2>/dev/null)
		[ "${n:-0}" -ge 5 ] && break
		sleep 0.1
	done
	(
		sub= res= step=
		for _ in $(seq 30000); do
			now=$(date +%s.%N)
			[ -z "$sub" ] && [ -f "$a/submit.json" ] && sub=$now
			[ -z "$res" ] && grep -qs "resuming from" "$a"/logs/rank-0.out && res=$now
			[ -z "$step" ] && grep -qs '"step"' "$a/metrics.jsonl" && step=$now && break
			sleep 0.002
		done
		echo "$sub $res $step" >"$W/$name.poll"
	) &
	poll=$!
	killed=$(date +%s.%N)
	scontrol update nodename=node2 state=down reason="lost_figure.sh: taken away"
	wait "$poll"
	read -r sub res step <"$W/$name.poll"
	rank=$(jq -r .started "$a/ranks/rank-0.json")
	if jq -e .in_allocation "$a/submit.json" >/dev/null; then
		ended=$(jq .in_allocation.step_ended_at "$a/submit.json")
		made=$(jq .in_allocation.restarted_at "$a/submit.json")
	else
		# srun's return is not recorded on this path: one term to the submission
		ended=
		made=$sub
	fi
	[ -n "${DEBUG:-}" ] && jq -c '{rank, node, state, updated, signal}' "$dir"/ranks/rank-*.json >&2 &&
		jq -c . "$a/submit.json" >&2
	last=$(jq -s '[.[] | select(.step != null) | .step] | max' "$dir/metrics.jsonl")
	from=$(sed -n 's/.*resuming from .* (step \([0-9]*\)).*/\1/p' "$a"/logs/rank-0.out | head -1)
	timeout 120 "$HPT" status --wait "$job" >/dev/null
	job2=$(jq -r .job_id "$a/submit.json")
	[ "$job2" = "$job" ] || timeout 120 "$HPT" status --wait "$job2" >/dev/null
	# in place, the figures the attempt's record gives (status --json)
	recorded=
	[ "$job2" = "$job" ] && recorded=$("$HPT" status --json "$dir" |
		jq -r '.in_allocation | "\(.checkpoint_load_s) \(.first_step_s) \(.lost_steps)"')
	scontrol update nodename=node2 state=resume 2>/dev/null
	for _ in $(seq 100); do [ "$(sinfo -h -n node2 -o %t)" = idle ] && break; sleep 0.1; done
	awk -v name="$name" -v k="$killed" -v e="$ended" -v m="$made" -v r="$rank" \
	    -v c="$res" -v s="$step" -v last="$last" -v from="${from:-0}" -v rec="$recorded" 'BEGIN {
		printf "%s:\n", name
		if (e != "") {
			printf "  node down -> old step ended (Slurm kills it, srun returns):  %7.3f s\n", e - k
			printf "  -> attempt 2 made (doctor --lost, in place):                   %7.3f s\n", m - e
		} else {
			printf "  node down -> attempt 2 submitted (step end, doctor, sbatch):   %7.3f s\n", m - k
		}
		printf "  -> attempt 2 rank 0 starts (queue, batch script, srun, launch): %7.3f s\n", r - m
		printf "  -> resumed (trainer start, MPI, checkpoint load):               %7.3f s\n", c - r
		printf "  -> first step logged:                                           %7.3f s\n", s - c
		printf "  node down -> first step of attempt 2:                           %7.3f s\n", s - k
		printf "  steps lost (logged after the checkpoint resumed from):          %d\n", last - from
		if (rec != "") {
			split(rec, f, " ")
			printf "  recorded (status --json): checkpoint load %s s, attempt made -> first step %s s, steps lost %s\n", f[1], f[2], f[3]
		}
	}'
}

measure resubmit 0
measure inplace 1
