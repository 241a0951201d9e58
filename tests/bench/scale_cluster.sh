#!/bin/bash
# scale_cluster.sh - what each per-job step costs as the job grows: on a
# netns cluster of this machine (tests/cluster/up.sh MODE=netns, up to 16
# nodes), at NODES nodes (default "3 8 16") with RPN ranks a node
# (default "1 2"), one real job through hpctrain submit that runs the
# preflight, stages MB megabytes (default 200, in 10 MB files) into a
# node-local cache of its own (nothing is a cache hit) and trains the mlp
# for STEPS steps (default 50) under Open MPI's pml monitoring; then, at
# one rank a node, a job whose last rank is stopped (SIGSTOP) until
# supervise.stall_timeout_s (STALL_S, default 20: a shorter one is taken
# up by the start of 16 ranks on 2 cores) records every rank's stacks (the autopsy),
# and a job whose last node the controller takes DOWN (the lost node).
#
# Per row: each step's wall time (from the moment the controller lists
# the step to the moment it lists the next: squeue polled every 0.1 s),
# what rank 0 holds or writes (the preflight's gathered record, the
# longest metrics.jsonl line), and the messages a rank sends per training
# step (its own and the collectives', from the monitoring's lines in the
# rank logs).  "x3" columns are the ratio to the same step at the
# smallest NODES with the same RPN, measured in the same run: on one
# machine every node shares its cores, so absolute times say little, and
# the growth is the figure.  man/hpctrain-scale.7 models the terms to
# 8,192 nodes.
#
# PARTS (default "steps faults") runs the first table, the second, or both.
# Needs root (namespaces, Slurm's daemons); prints "skipped" otherwise.
# Not part of make check: it takes 10 to 30 minutes on 2 cores.
set -u
cd "$(dirname "$0")/../.." || exit 70
NODES_LIST=${NODES:-3 8 16} RPN_LIST=${RPN:-1 2} STEPS=${STEPS:-50} MB=${MB:-200}
PARTS=${PARTS:-steps faults} STALL_S=${STALL_S:-20}
HPT=$PWD/bin/hpctrain
if [ "$(id -u)" -ne 0 ] || ! command -v slurmctld >/dev/null || [ ! -x "$HPT" ] ||
	! ip netns add "hpt-scale-probe-$$" 2>/dev/null; then
	echo "skipped: needs root, slurm-wlm, network namespaces and bin/hpctrain"
	exit 0
fi
ip netns del "hpt-scale-probe-$$"
MAXN=$(printf '%s\n' $NODES_LIST | sort -n | tail -1)
B=$(mktemp -d /tmp/hpt-scale.XXXXXX)
W=$(mktemp -d /tmp/hpt-scale-work.XXXXXX)
trap 'BASE=$B tests/cluster/down.sh >/dev/null 2>&1; rmdir "$B" 2>/dev/null; rm -rf "$W"' EXIT
BASE=$B MODE=netns NODES=$MAXN tests/cluster/up.sh >"$W/up.log" 2>&1 || {
	cat "$W/up.log"
	exit 1
}
export SLURM_CONF=$B/etc/slurm.conf HPCTRAIN_LEDGER=$W/ledger.json XDG_CACHE_HOME=$W/xdg
mkdir -p "$W/data"
for i in $(seq $((MB / 10))); do
	head -c 10000000 /dev/urandom >"$W/data/part-$i.bin"
done

# spec FILE NAME NODES RPN MAX_STEPS [EXTRA YAML]: the bundled trainer on
# synthetic data (the mlp: compute is no issue), one thread a rank.
spec() {
	cat >"$1" <<SPEC
version: 1
name: $2
resources: {nodes: $3, ranks_per_node: $4, time: "00:20:00"}
binding: {gpu: none, cpu: none, memory: none, nic: none}
env: {OMP_NUM_THREADS: "1", OMPI_MCA_pml_monitoring_enable: "2", OMPI_MCA_pml_monitoring_enable_output: "1"}
code: false
train:
  model: mlp
  dataset: synthetic
  epochs: 1
  max_steps: $5
  batch_per_rank: 8
  optimizer: {name: sgd, lr: 0.01}
  checkpoint: {every_steps: 0, keep: 1}
  allreduce: {stall_timeout_s: 86400}
output: {dir: $W/runs, log_every_steps: 1}
preempt: {lead_s: 0}
${6:-}
SPEC
}

# submit SPEC: sets JOB and DIR.
submit() {
	local out
	out=$("$HPT" submit --json "$1") || return 1
	JOB=$(jq -r .job_id <<<"$out")
	DIR=$(jq -r .dir <<<"$out")
}

# poll_steps JOB FILE: until the job has left the queue, a line per
# change of its steps: "TIME step step ..." (squeue's view).
poll_steps() {
	local last= now steps
	while squeue -h -j "$1" -o %T 2>/dev/null | grep -q .; do
		now=$(date +%s.%N)
		steps=$(squeue -h -s -j "$1" -o %i 2>/dev/null | grep -v batch | sort | tr '\n' ' ')
		[ "$steps" != "$last" ] && echo "$now $steps" >>"$2" && last=$steps
		sleep 0.1
	done
	echo "$(date +%s.%N) end" >>"$2"
}

# step_times FILE: "preflight stage train" wall seconds: each step id
# from its first line to the first line without it.
step_times() {
	awk '{ t = $1; seen = " "; for (i = 2; i <= NF; i++) { if ($i == "end") continue; if (!($i in first)) first[$i] = t; seen = seen $i " " }
		for (s in first) if (!(s in last) && index(seen, " " s " ") == 0) last[s] = t }
		END { n = 0; for (s in first) ids[n++] = s
			for (i = 0; i < n; i++) for (j = i + 1; j < n; j++) { split(ids[i], a, "."); split(ids[j], b, ".")
				if (b[2] + 0 < a[2] + 0) { x = ids[i]; ids[i] = ids[j]; ids[j] = x } }
			for (i = 0; i < n; i++) printf "%.1f ", last[ids[i]] - first[ids[i]]; print "" }' "$1"
}

# messages DIR STEPS: rank 0's own and collective messages a step, the
# mean rank's, from the pml monitoring's lines in the rank logs.
messages() {
	cat "$1"/logs/rank-*.out | awk -F'\t' -v s="$2" '
		$1 == "E" || $1 == "I" { split($5, m, " "); msgs[$1, $2] += m[1]; tot[$1] += m[1]; ranks[$2] = 1 }
		END { n = 0; for (r in ranks) n++; if (!n) n = 1
			printf "%.1f %.1f %.1f %.1f", msgs["E", 0] / s, tot["E"] / n / s, msgs["I", 0] / s, tot["I"] / n / s }'
}

part() { case " $PARTS " in *" $1 "*) return 0 ;; esac; return 1; }
echo "scale: a netns cluster of $MAXN nodes on this machine ($(nproc) CPUs: $(lscpu | sed -n 's/^Model name: *//p'))"
echo "job: preflight; stage of $MB MB ($((MB / 10)) files); mlp, batch 8 a rank, $STEPS steps; pml monitoring"
part steps && printf '%6s %4s %6s %10s %8s %8s %7s %7s %7s %10s %9s %9s %9s %9s\n' nodes rpn ranks \
	"preflight" stage train "x3 pre" "x3 stg" "x3 trn" "pre bytes" "line max" "own r0" \
	"coll r0" "coll avg"
part steps || RPN_LIST=
for rpn in $RPN_LIST; do
	base=
	for n in $NODES_LIST; do
		tag=n$n-r$rpn
		spec "$W/$tag.yaml" "scale-$tag" "$n" "$rpn" "$STEPS" "preflight: true
data:
  stage: [{name: d, src: $W/data}]
  cache: {dir: $B/local/cache-$tag}"
		if ! submit "$W/$tag.yaml"; then
			printf '%6s %4s submit failed\n' "$n" "$rpn"
			continue
		fi
		poll_steps "$JOB" "$W/$tag.poll"
		read -r pre stg trn _ <<<"$(step_times "$W/$tag.poll")"
		st=$(jq -r .exit_status "$DIR/end.json" 2>/dev/null)
		if [ "$st" != 0 ]; then
			printf '%6s %4s job %s ended with status %s: %s\n' "$n" "$rpn" "$JOB" "$st" \
				"$(tail -1 "$DIR"/logs/batch-*.out)"
			continue
		fi
		[ -n "$base" ] || base="$pre $stg $trn"
		read -r bpre bstg btrn <<<"$base"
		line=$(awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }' "$DIR/metrics.jsonl")
		read -r own0 _ coll0 collavg <<<"$(messages "$DIR" "$STEPS")"
		printf '%6d %4d %6d %10s %8s %8s %7.2f %7.2f %7.2f %10d %9d %9s %9s %9s\n' "$n" "$rpn" \
			$((n * rpn)) "$pre" "$stg" "$trn" "$(echo "$pre / $bpre" | bc -l)" \
			"$(echo "$stg / $bstg" | bc -l)" "$(echo "$trn / $btrn" | bc -l)" \
			"$(stat -c %s "$DIR/preflight.json")" "$line" "$own0" "$coll0" "$collavg"
	done
done

part faults || exit 0
echo
echo "stall autopsy (supervise.stall_timeout_s $STALL_S; the last rank SIGSTOPped after its first step) and"
echo "lost node (the controller takes the last node DOWN after the first step), one rank a node:"
printf '%6s %12s %12s %12s %14s %14s\n' nodes "stop->end s" "stacks bytes" "autopsy s" \
	"down->end s" "down->ledger s"
fmt() { case $1 in -) echo - ;; *) printf '%.1f' "$1" ;; esac; }
# wait_step DIR JOB: until the run has logged a step (5 minutes at most,
# and not after the job has ended).
wait_step() {
	for _ in $(seq 3000); do
		grep -qs '"event":"step"' "$1/metrics.jsonl" && return 0
		squeue -h -j "$2" -o %T 2>/dev/null | grep -q . || return 1
		sleep 0.1
	done
	return 1
}
for n in $NODES_LIST; do
	tag=stall-n$n
	spec "$W/$tag.yaml" "scale-$tag" "$n" 1 1000000 "preflight: false
supervise: {stall_timeout_s: $STALL_S}"
	a_end=- a_bytes=- a_s=-
	if submit "$W/$tag.yaml" && wait_step "$DIR" "$JOB"; then
		pid=$(jq -r .pid "$DIR/ranks/rank-$((n - 1)).json")
		t0=$(date +%s.%N)
		kill -STOP "$pid"
		timeout 300 "$HPT" status --wait "$JOB" >/dev/null
		a_end=$(echo "$(date +%s.%N) - $t0" | bc -l)
		kill -CONT "$pid" 2>/dev/null
		a_bytes=$(cat "$DIR"/ranks/rank-*.stacks.json 2>/dev/null | wc -c)
		t1=$(date +%s.%N)
		"$HPT" autopsy "$DIR" >/dev/null 2>&1
		a_s=$(echo "$(date +%s.%N) - $t1" | bc -l)
	fi
	tag=lost-n$n
	spec "$W/$tag.yaml" "scale-$tag" "$n" 1 1000000 "preflight: false"
	l_end=- l_ledger=-
	if submit "$W/$tag.yaml" && wait_step "$DIR" "$JOB"; then
		t0=$(date +%s.%N)
		scontrol update nodename="node$n" state=down reason="scale_cluster.sh: lost"
		for _ in $(seq 3000); do
			[ "$l_end" = - ] && ! squeue -h -s -j "$JOB" -o %i | grep -q "^$JOB\.[0-9]" &&
				l_end=$(echo "$(date +%s.%N) - $t0" | bc -l)
			[ "$l_ledger" = - ] && grep -qs "\"node$n\"" "$HPCTRAIN_LEDGER" &&
				l_ledger=$(echo "$(date +%s.%N) - $t0" | bc -l)
			[ "$l_end" != - ] && [ "$l_ledger" != - ] && break
			sleep 0.1
		done
		scancel -u root
		timeout 120 "$HPT" status --wait "$JOB" >/dev/null
		scontrol update nodename="node$n" state=resume
		rm -f "$HPCTRAIN_LEDGER"
	fi
	printf '%6d %12s %12s %12s %14s %14s\n' "$n" "$(fmt "$a_end")" "$a_bytes" "$(fmt "$a_s")" \
		"$(fmt "$l_end")" "$(fmt "$l_ledger")"
done
