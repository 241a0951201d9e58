#!/usr/bin/env bats
# report.bats - `hpctrain report` on runs the trainer makes here (one rank,
# and two under mpirun), on recorded runs (a resumed one, two ranks) and a
# recorded sweep (tests/fixtures/metrics, tests/fixtures/sweep): the PNGs,
# their size, report.md, the summary and --json; and its errors.

load common

FIX=$BATS_TEST_DIRNAME/../fixtures

setup() {
	W=$BATS_TEST_TMPDIR
	export OMP_NUM_THREADS=1 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
}

# A finished run of the trainer: DIR LR [RANKS]
train_run() {
	cat >"$W/s-$2.yaml" <<SPEC
version: 1
name: rep
resources: {ranks_per_node: ${3:-1}}
train: {model: cnn, dataset: synthetic, epochs: 1, max_steps: 40, batch_per_rank: 16,
        optimizer: {name: sgd, lr: $2}}
output: {log_every_steps: 2}
SPEC
	if [ "${3:-1}" -gt 1 ]; then
		command -v mpirun >/dev/null || skip "no mpirun (openmpi-bin)"
		mpirun --oversubscribe --bind-to none -np "$3" "$HPT" train -q --run "$1" "$W/s-$2.yaml" >/dev/null
	else
		"$HPT" train -q --run "$1" "$W/s-$2.yaml" >/dev/null
	fi
}

# WIDTHxHEIGHT of a PNG, from its IHDR chunk; fails for anything else.
png_size() {
	[ "$(od -An -tx1 -N8 "$1" | tr -d ' \n')" = 89504e470d0a1a0a ] || return 1
	od -An -tu1 -j16 -N8 "$1" |
		awk '{ print $1*16777216 + $2*65536 + $3*256 + $4 "x" $5*16777216 + $6*65536 + $7*256 + $8 }'
}

@test "report of a two-rank run draws loss, accuracy, each rank's samples/s, communication and lr at the stated size" {
	train_run "$W/run" 0.05 2
	run -0 "$HPT" report --size 800x450 "$W/run"
	[ "${lines[0]}" = "run $W/run" ]
	[[ "$output" == *"samples/s of each of 2 ranks at every logged step"* ]]
	[[ "$output" == *"final: test accuracy "* ]]
	for c in loss accuracy throughput comm lr; do
		[ "$(png_size "$W/run/report/$c.png")" = 800x450 ]
		grep -q "($c.png)" "$W/run/report/report.md"
	done
}

@test "report of a one-rank run by its run directory; -o puts the files elsewhere" {
	train_run "$W/one" 0.05
	run -0 "$HPT" report -o "$W/out" "$W/one"
	[ "$(png_size "$W/out/loss.png")" = 960x540 ]
	[ -s "$W/out/report.md" ]
	[ ! -e "$W/one/report" ]
}

@test "report of a resumed run: the restart, and no communication chart for one rank" {
	cp -r "$FIX/metrics/resumed" "$W/resumed"
	cp -r "$FIX/metrics/dp2" "$W/dp2"
	run -0 "$HPT" report -o "$W/out" "$W/dp2"
	[ -f "$W/out/comm.png" ]
	run -0 "$HPT" report -o "$W/out" "$W/resumed"
	[ "${lines[1]}" = "  60 logged steps, last step 240: loss 0.3817, 86092 samples/s per rank" ]
	[ "${lines[2]}" = "  final: test accuracy 0.8458, test loss 0.4219, 81519 samples/s per rank" ]
	[ "${lines[3]}" = "  restarted 1 time from a checkpoint: 8 step records were logged again and the later ones kept" ]
	[[ "$output" == *"  comm.png: not drawn: a single-rank run: nothing to communicate"* ]]
	# the two-rank report's comm.png is not left behind
	[ ! -e "$W/out/comm.png" ]
	grep -q "^- exposed communication share of each step: not drawn (a single-rank run" "$W/out/report.md"
	for c in loss accuracy throughput lr; do
		[ "$(png_size "$W/out/$c.png")" = 960x540 ]
		grep -q "($c.png)" "$W/out/report.md"
	done
}

@test "report removes only the charts its manifest lists: a user's own comm.png survives" {
	cp -r "$FIX/metrics/resumed" "$W/resumed"
	mkdir "$W/out"
	echo "my own chart" >"$W/out/comm.png"
	run -0 "$HPT" report -o "$W/out" "$W/resumed"
	[[ "$output" == *"  comm.png: not drawn: a single-rank run: nothing to communicate"* ]]
	[ "$(cat "$W/out/comm.png")" = "my own chart" ]
	# the manifest names what report wrote, and only that
	[ "$(jq -r '[.files[].name] | sort | join(" ")' "$W/out/.hpctrain-report.json")" = \
		"accuracy.png loss.png lr.png throughput.png" ]
	[ "$(stat -c %a "$W/out/.hpctrain-report.json")" = 600 ]
	# a chart report wrote but the user has replaced since stays too
	cp -r "$FIX/metrics/dp2" "$W/dp2"
	rm "$W/out/comm.png"
	run -0 "$HPT" report -o "$W/out" "$W/dp2"
	cp "$W/out/loss.png" "$W/mine.png" && cp "$W/mine.png" "$W/out/comm.png"
	run -0 "$HPT" report -o "$W/out" "$W/resumed"
	cmp "$W/mine.png" "$W/out/comm.png"
}

@test "report prints a figure not logged as - and a huge one short, skips one no run logs, and still draws a chart of +-1e308" {
	mkdir "$W/huge"
	printf 'version: 1\nname: huge\ncommand: [true]\n' >"$W/huge/resolved.yaml"
	cat >"$W/huge/metrics.jsonl" <<'EOF'
{"event":"step","step":1,"epoch":0,"loss":-1e308,"accuracy":0.1,"lr":0.1,"samples_per_s":1e12}
{"event":"step","step":2,"epoch":0,"loss":1e308,"accuracy":0.2,"lr":0.1,"samples_per_s":5}
{"event":"step","step":3,"epoch":0,"loss":1e308,"accuracy":0.3,"lr":0.1}
{"event":"step","step":4,"epoch":0,"loss":1,"accuracy":0.3,"lr":0.1,"samples_per_s":1e308}
{"event":"step","step":5,"epoch":0,"loss":1,"accuracy":0.3,"lr":0.1,"step_ms":1e-300}
{"event":"summary","steps":3,"test_accuracy":0.3,"mean_samples_per_s":1.7e308,"ranks":1}
{"event":"summary","steps":3,"test_accuracy":0.3,"mean_samples_per_s":1e12,"ranks":1}
EOF
	run -0 "$HPT" report "$W/huge"
	[ "${lines[1]}" = "  3 logged steps, last step 3: loss 1e+308, - samples/s per rank" ]
	[ "${lines[2]}" = "  final: test accuracy 0.3000, test loss -, 1e+12 samples/s per rank" ]
	[ "${lines[3]}" = "  3 lines of metrics.jsonl were not records, or records of figures no run logs, and were skipped" ]
	[ "${lines[4]}" = "  $W/huge/report/loss.png" ] # drawn: test_report checks its pixels
	[[ "$output" != *nan* ]]
}

@test "report --json prints the summary and the charts, drawn or not" {
	cp -r "$FIX/metrics/dp2" "$W/dp2"
	run -0 --separate-stderr "$HPT" report --json "$W/dp2"
	[ "$(jq -r '[.finished, .ranks, .rank_rates, .logged_steps, .restarts] | @tsv' <<<"$output")" = \
	  "$(printf 'true\t2\t2\t60\t0')" ]
	[ "$(jq -r '.test_accuracy' <<<"$output")" = 0.8458 ]
	[ "$(jq -r '[.charts[].name] | join(" ")' <<<"$output")" = "loss accuracy throughput comm lr" ]
	[ "$(jq -r '.charts[0].file' <<<"$output")" = "$W/dp2/report/loss.png" ]
	[ "$(jq -r '.report_md' <<<"$output")" = "$W/dp2/report/report.md" ]
	cp -r "$FIX/metrics/resumed" "$W/resumed"
	run -0 --separate-stderr "$HPT" report --json "$W/resumed"
	[ "$(jq -r '.charts[] | select(.name == "comm") | [(.file == null), .not_drawn] | @tsv' <<<"$output")" = \
	  "$(printf 'true\ta single-rank run: nothing to communicate')" ]
}

@test "report of a sweep record draws the final metrics per parameter and the scaling against ranks" {
	# a 2x2 sweep of lr and ranks whose fourth point was killed
	mkdir -p "$W/runs"
	cp -r "$FIX/sweep/lr-ranks" "$W/runs/"
	cd "$W"
	run -0 "$HPT" report lr-ranks
	[ "${lines[0]}" = "$W/runs/lr-ranks/sweep-243bbcdcf04f.json: 4 points" ]
	[ "${lines[1]}" = '  0 {"train.optimizer.lr":0.05,"resources.ranks_per_node":1}: test accuracy 0.8358, test loss 0.4523, 81682 samples/s global, 1 ranks' ]
	[[ "${lines[2]}" == *'"resources.ranks_per_node":2}: test accuracy 0.8097, test loss 0.5118, 38717 samples/s global, 2 ranks' ]]
	[ "${lines[4]}" = '  3 {"train.optimizer.lr":0.1,"resources.ranks_per_node":2}: not finished (3 logged steps, last 30)' ]
	d=runs/lr-ranks/sweep-243bbcdcf04f-report
	for c in final_accuracy_train_optimizer_lr final_loss_train_optimizer_lr \
		 final_accuracy_resources_ranks_per_node final_loss_resources_ranks_per_node \
		 scaling efficiency loss; do
		[ "$(png_size "$d/$c.png")" = 960x540 ]
		grep -q "($c.png)" "$d/report.md"
	done
	run -0 --separate-stderr "$HPT" report --json -o "$W/j" runs/lr-ranks/sweep-243bbcdcf04f.json
	[ "$(jq -r '[.points[] | .finished] | join(" ")' <<<"$output")" = "true true true false" ]
	[ "$(jq -r '[.points[] | .ranks] | join(" ")' <<<"$output")" = "1 2 1 2" ]
}

@test "report of a sweep over ranks alone fits hpctrain plan's model through the points" {
	local rec d
	mkdir -p "$W/runs"
	cp -r "$FIX/sweep/lr-ranks" "$W/runs/"
	cd "$W"
	# the fixture's points at lr 0.05: 1 and 2 ranks, nothing else apart
	rec=runs/lr-ranks/sweep-000000000001.json
	jq '.axes = [.axes[1]] | .points = [.points[0], .points[1]] |
	    .points[].params |= del(.["train.optimizer.lr"])' runs/lr-ranks/sweep-243bbcdcf04f.json >"$rec"
	run -0 "$HPT" report "$rec"
	d=runs/lr-ranks/sweep-000000000001-report
	[ "$(png_size "$d/scaling.png")" = 960x540 ]
	grep -E "^Fitted to 2 points \(hpctrain plan's model\): a step takes [0-9.]+ ms of compute \+ [0-9.]+ ms x 2\(R-1\)/R of allreduce within a node of R ranks \+ [0-9.]+ ms x 2\(N-1\)/N between N nodes, \+-[0-9]+%\.$" "$d/report.md"
	# two series apart (two learning rates): no fit, as before
	run -0 "$HPT" report runs/lr-ranks/sweep-243bbcdcf04f.json
	run ! grep -q "^Fitted" runs/lr-ranks/sweep-243bbcdcf04f-report/report.md
}

@test "report refuses a sweep record it cannot chart, naming the file" {
	mkdir -p "$W/runs/x"
	cp -r "$FIX/sweep/lr-ranks/c14a22d52cc0" "$W/runs/x/"
	rec=$W/runs/x/sweep-0123456789ab.json
	echo '{"points": [{"params": {"a": 1}, "run": "c14a22d52cc0"}], "axes": [{"values": [1]}]}' >"$rec"
	run -4 --separate-stderr "$HPT" report "$rec"
	[ "$stderr" = "hpctrain report: $rec is not a sweep record (its axes are not a list of keys with their values)" ]
	echo '{"points": [{"run": "c14a22d52cc0"}], "axes": []}' >"$rec"
	run -4 --separate-stderr "$HPT" report "$rec"
	[ "$stderr" = "hpctrain report: $rec is not a sweep record (a point without its params)" ]
	echo '{"points": [' >"$rec"
	run -4 --separate-stderr "$HPT" report "$rec"
	[[ "$stderr" == "hpctrain report: cannot read the sweep record $rec: "* ]]
}

@test "report refuses a missing run, a bad --size and a directory it cannot write" {
	run -4 --separate-stderr "$HPT" report "$W/nothing"
	[[ "$stderr" == "hpctrain report: no run, sweep or job $W/nothing"* ]]
	mkdir -p "$W/empty" && touch "$W/empty/resolved.yaml"
	run -4 --separate-stderr "$HPT" report "$W/empty"
	[ "$stderr" = "hpctrain report: cannot open $W/empty/metrics.jsonl: No such file or directory" ]
	for s in 10x10 9000x100 800 800x abcxdef 800x450x2; do
		run -2 --separate-stderr "$HPT" report --size "$s" "$W/empty"
		[ "${stderr_lines[0]}" = "hpctrain report: --size: expected WxH, 200x150 to 8000x8000, got '$s'" ]
	done
	train_run "$W/ok" 0.05
	touch "$W/file"
	run -8 --separate-stderr "$HPT" report -o "$W/file/sub" "$W/ok"
	[[ "$stderr" == "hpctrain report: cannot create $W/file/sub"* ]]
}

@test "report of a staged run has a Staging section: each node's time, bytes and hits, a chart, and the read rate" {
	local p sum
	make_shards "$W/src"
	stage_records "$W/run" "$W/src" 3
	p=$(jq -r '.entries[0].path' "$W/run/stage/n0.json")
	printf 'version: 1\nname: st\ntrain: {model: mlp, dataset: "stage:ds", epochs: 1, batch_per_rank: 16}\ndata: {stage: [{name: ds, src: %s}]}\n' \
		"$W/src" >"$W/s.yaml"
	HPCTRAIN_DATA_DS=$p "$HPT" train -q --run "$W/run" "$W/s.yaml" >/dev/null
	run -0 "$HPT" report "$W/run"
	grep -Eqx '  stage: 3 nodes, [0-9.]+ kB read from the source, [0-9.]+ kB sent, 0/3 hits, slowest node [0-9.]+ s \(n[012]\)' <<<"$output"
	grep -Eqx "  data read at [0-9.]+ [kMG]?B/s from $p \\(staged\\): [0-9.]+ kB in [0-9.]+ s" <<<"$output"
	[[ "$output" == *"  $W/run/report/stage.png"* ]]
	[ "$(png_size "$W/run/report/stage.png")" = 960x540 ]
	grep -qx '## Staging' "$W/run/report/report.md"
	grep -q '(stage.png)' "$W/run/report/report.md"
	for n in n0 n1 n2; do grep -Eq "^\\| $n \\| [0-9.]+ \\| .* \\| 0/1 \\| 0 \\|\$" "$W/run/report/report.md"; done
	# the sums are the records' own
	sum=$(cat "$W"/run/stage/*.json | jq -s 'map(.bytes_read) | add')
	run -0 "$HPT" report --json "$W/run"
	jq -e --argjson sum "$sum" --arg p "$p" '.stage.nodes == 3 and .stage.bytes_read == $sum and
		.stage.hits == 0 and .stage.entries == 3 and (.stage.per_node | length) == 3 and
		.data_read.staged and .data_read.path == $p and .data_read.bytes_per_s > 0 and
		any(.charts[]; .name == "stage" and .file != null)' <<<"$output"
	# staged again: every node hit its cache, nothing was sent (files this
	# young are hashed again at the source, so it may still be read)
	stage_records "$W/run" "$W/src" 3
	run -0 "$HPT" report "$W/run"
	grep -Eq '^  stage: 3 nodes, .* read from the source, 0 B sent, 3/3 hits, slowest node ' <<<"$output"
}

@test "report skips stage records that are links, FIFOs or torn, and forgets stage.png once none is left" {
	train_run "$W/run" 0.05
	mkdir -m 700 "$W/run/stage"
	printf '{"node": "n0", "seconds": 1.5, "bytes_read": 2000000, "bytes_sent": 0, "bytes_received": 0, "entries": [{"hit": true}]}' \
		>"$W/run/stage/n0.json"
	printf '{"node": "n9", "seconds": 99, "bytes_read": 1}' >"$W/outside.json"
	ln -s "$W/outside.json" "$W/run/stage/n9.json"
	mkfifo "$W/run/stage/n8.json"
	printf '{"node": "n7", "sec' >"$W/run/stage/n7.json"
	run -0 timeout 60 "$HPT" report "$W/run"
	[[ "$output" == *$'\n'"  stage: 1 node, 2.0 MB read from the source, 0 B sent, 1/1 hits, slowest node 1.50 s (n0); 3 records skipped"$'\n'* ]]
	[ -s "$W/run/report/stage.png" ]
	rm -r "$W/run/stage"
	run -0 "$HPT" report "$W/run"
	[[ "$output" != *stage* ]]
	[ ! -e "$W/run/report/stage.png" ]
	! grep -q Staging "$W/run/report/report.md"
}

# A run of two attempts, built by hand: DIR.  Attempt 1 (4 ranks) was
# requeued at step 60 and went on from 50, then lost a node after 130;
# attempt 2 went on from the checkpoint at 110 on 2 ranks and finished.
# Each attempt recorded its end (end.json), as the batch script does.
attempts_run() {
	mkdir -p "$1/attempts/2"
	printf 'version: 1\nname: tl\ncommand: [/bin/true]\nresources: {nodes: 2, ranks_per_node: 2}\n' \
		>"$1/resolved.yaml"
	cp "$1/resolved.yaml" "$1/attempts/2/"
	cat >"$1/metrics.jsonl" <<'EOF'
{"event":"step","step":10,"loss":2.0,"world_size":4,"restart":0}
{"event":"step","step":50,"loss":1.6,"world_size":4,"restart":0}
{"event":"step","step":60,"loss":1.5,"world_size":4,"restart":0}
{"event":"step","step":50,"loss":1.55,"world_size":4,"restart":1}
{"event":"step","step":130,"loss":1.0,"world_size":4,"restart":1}
EOF
	echo '{"exit_status": 1, "requeued": false, "job_id": 1001, "restart": 1}' >"$1/end.json"
	cat >"$1/attempts/2/metrics.jsonl" <<'EOF'
{"event":"step","step":110,"loss":1.1,"world_size":2,"attempt":2}
{"event":"step","step":200,"loss":0.5,"world_size":2,"attempt":2}
{"event":"summary","steps":200,"test_accuracy":0.9,"test_loss":0.4}
EOF
	echo '{"exit_status": 0, "requeued": false, "job_id": 1002, "restart": 0}' >"$1/attempts/2/end.json"
}

@test "report of a run covers every attempt: one timeline, its requeue, attempt and resize said, and each attempt's recorded end" {
	attempts_run "$W/r"
	run -0 "$HPT" report "$W/r"
	[ "${lines[0]}" = "run $W/r" ]
	# attempt 1's first step is there: the timeline starts at 10, not 110
	[ "${lines[1]}" = "  4 logged steps, last step 200: loss 0.5000, - samples/s per rank" ]
	[ "${lines[3]}" = "  restarted 1 time from a checkpoint: 3 step records were logged again and the later ones kept" ]
	[ "${lines[4]}" = "  2 attempts in one timeline: 1 requeue, 1 resize" ]
	[ "${lines[5]}" = "  requeued at step 50 (attempt 1), 4 ranks" ]
	[ "${lines[6]}" = "  attempt 2 went on at step 110, 2 ranks" ]
	[ "${lines[7]}" = "  resized from 4 to 2 ranks at step 110 (attempt 2)" ]
	[ "${lines[8]}" = "  attempt 1 (job 1001): failed, exit 1, after 1 requeue (from the run's record)" ]
	[ "${lines[9]}" = "  attempt 2 (job 1002): completed, exit 0 (from the run's record)" ]
	[ "$(png_size "$W/r/report/loss.png")" = 960x540 ]
	grep -qx '  attempt 2 went on at step 110, 2 ranks' "$W/r/report/report.md"
	run -0 --separate-stderr "$HPT" report --json "$W/r"
	[ "$(jq -r '[.run, .attempts, .restarts, .resizes, .logged_steps, .output] | @tsv' <<<"$output")" = \
	  "$(printf '%s\t2\t1\t1\t4\t%s' "$W/r" "$W/r/report")" ]
	[ "$(jq -c '.events' <<<"$output")" = \
	  '[{"step":50,"kind":"requeue","attempt":1,"world_size":4},{"step":110,"kind":"attempt","attempt":2,"world_size":2},{"step":110,"kind":"resize","attempt":2,"world_size":2,"from_world_size":4}]' ]
	[ "$(jq -r '.attempt_ends[] | [.attempt, .end.job_id, .end.exit_status, .end.requeued, .end.state, .end.source] | @tsv' <<<"$output")" = \
	  "$(printf '1\t1001\t1\tfalse\tfailed\trun record\n2\t1002\t0\tfalse\tcompleted\trun record')" ]
}

@test "report of one attempt's directory reports that attempt alone; a name covers them all" {
	attempts_run "$W/runs/tl/0123456789ab"
	run -0 "$HPT" report "$W/runs/tl/0123456789ab/attempts/2"
	[ "${lines[0]}" = "run $W/runs/tl/0123456789ab/attempts/2" ]
	[ "${lines[1]}" = "  2 logged steps, last step 200: loss 0.5000, - samples/s per rank" ]
	[ "${lines[3]}" = "  attempt 2 (job 1002): completed, exit 0 (from the run's record)" ]
	[[ "$output" != *"went on"* && "$output" != *requeue* ]]
	[ -s "$W/runs/tl/0123456789ab/attempts/2/report/loss.png" ]
	run -0 --separate-stderr "$HPT" report --json "$W/runs/tl/0123456789ab/attempts/2"
	[ "$(jq -r '[.attempts, .restarts, .resizes, (.events | length)] | @tsv' <<<"$output")" = "$(printf '1\t0\t0\t0')" ]
	cd "$W"
	run -0 --separate-stderr "$HPT" report --json tl
	[ "$(jq -r '[.run, .attempts, .logged_steps, (.events | length)] | @tsv' <<<"$output")" = \
	  "$(printf '%s\t2\t4\t3' "$W/runs/tl/0123456789ab")" ]
}

@test "report of a run whose later attempt never trained says so, and fails only when no attempt has metrics" {
	attempts_run "$W/r"
	mkdir "$W/r/attempts/3"
	cp "$W/r/resolved.yaml" "$W/r/attempts/3/"
	run -0 "$HPT" report "$W/r"
	[ "${lines[4]}" = "  3 attempts in one timeline: 1 requeue, 1 resize" ]
	[[ "$output" == *$'\n'"  attempt 3: no recorded end, no metrics (it never trained)"$'\n'* ]]
	rm "$W/r/metrics.jsonl" "$W/r/attempts/2/metrics.jsonl"
	run -4 --separate-stderr "$HPT" report "$W/r"
	[ "$stderr" = "hpctrain report: cannot open $W/r/attempts/3/metrics.jsonl: No such file or directory" ]
	# a FIFO in an attempt fails the report, as it does alone
	mkfifo "$W/r/attempts/2/metrics.jsonl"
	run -4 --separate-stderr timeout 60 "$HPT" report "$W/r"
	[[ "$stderr" == "hpctrain report: cannot read $W/r/attempts/2/metrics.jsonl: "* ]]
}

@test "report of a run of several ranks whose program logs no comm_ms says so, not that it ran one rank" {
	mkdir "$W/u"
	printf 'version: 1\nname: u\ncommand: [/bin/true]\nresources: {nodes: 2, ranks_per_node: 2}\n' >"$W/u/resolved.yaml"
	printf '{"event":"step","step":%d,"loss":1,"samples_per_s":10,"step_ms":5}\n' 1 2 3 >"$W/u/metrics.jsonl"
	run -0 "$HPT" report "$W/u"
	[[ "$output" == *$'\n'"  comm.png: not drawn: the program logged no comm_ms in its step records"$'\n'* ]]
	run -0 --separate-stderr "$HPT" report --json "$W/u"
	[ "$(jq -r '.ranks' <<<"$output")" = 4 ]
	# one rank: as before
	printf 'version: 1\nname: u\ncommand: [/bin/true]\n' >"$W/u/resolved.yaml"
	run -0 "$HPT" report "$W/u"
	[[ "$output" == *$'\n'"  comm.png: not drawn: no comm_ms in the step records: a single-rank run"$'\n'* ]]
}

@test "report names a program's rank whose logged rate stays slow for straggler.steps, and no rank whose noise stays under the threshold" {
	mkdir "$W/u"
	printf 'version: 1\nname: u\ncommand: [/bin/true]\nresources: {nodes: 2, ranks_per_node: 2}\nstraggler: {steps: 20}\n' \
		>"$W/u/resolved.yaml"
	# ranks 0, 1 and 3 within 10% of each other; rank 2 at 60 of 100
	# samples/s from step 11 on (1.67x the median's time per sample)
	for s in $(seq 1 40); do
		r2=100
		[ "$s" -gt 10 ] && r2=60
		printf '{"event":"step","step":%d,"loss":1,"samples_per_s":100,"step_ms":5,"rank_samples_per_s":[100,%d,%d,%d]}\n' \
			"$s" $((95 + s % 10)) "$r2" $((105 - s % 10))
	done >"$W/u/metrics.jsonl"
	run -0 "$HPT" report "$W/u"
	[[ "$output" == *$'\n'"  slow rank: rank 2 is 1.67x slower than the median over steps 11-30: its rate (16.7 ms a sample against 10 ms)"$'\n'* ]]
	[ "$(grep -c 'slow rank' <<<"$output")" = 1 ]
	run -0 --separate-stderr "$HPT" report --json "$W/u"
	[ "$(jq -c '[.stragglers[] | [.rank, .from_step, .step, .cause, .from_rates]]' <<<"$output")" = '[[2,11,30,"rate",true]]' ]
	# at threshold 2 nobody is named
	sed -i 's/straggler: {steps: 20}/straggler: {steps: 20, threshold: 2}/' "$W/u/resolved.yaml"
	run -0 "$HPT" report "$W/u"
	[[ "$output" != *"slow rank"* ]]
}
