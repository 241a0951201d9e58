#!/usr/bin/env bats
# topo.bats - `hpctrain topo` on this machine and on fixture topologies.

load common

FIX=$BATS_TEST_DIRNAME/../fixtures
DGXA100=$FIX/256amd64-8n16c2t-dgxa100.xml

@test "topo summarises this machine and --json parses" {
	run --separate-stderr "$HPT" topo
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "node "*"(live)" ]]
	ncpu=$(nproc --all)
	echo "$output" | grep -q "cores.* $ncpu pus"
	run --separate-stderr "$HPT" topo --json
	[ "$status" -eq 0 ]
	echo "$output" | jq -e '(.cores | length) >= 1 and (.numa_nodes | length) >= 1' >/dev/null
	[ "$(echo "$output" | jq '.gpus | length')" -eq "$(echo "$output" | jq '[.gpus[]] | length')" ]
}

@test "topo counts 8 GPUs and 8 HCAs on the DGX A100 fixture, NVSwitches excluded" {
	run "$HPT" topo --input "$DGXA100" --json
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | jq '.gpus | length')" -eq 8 ]
	echo "$output" | jq -e '[.nics[] | select((.openfabrics | length) > 0)] | length >= 8' >/dev/null
}

@test "topo prints an nvidia-smi style matrix with a legend" {
	run "$HPT" topo --input "$DGXA100"
	[ "$status" -eq 0 ]
	echo "$output" | grep -q $'^\tGPU0\tGPU1'
	echo "$output" | grep -q '^  PIX  = Connection traversing at most a single PCIe bridge$'
}

@test "topo plan gives each DGX A100 rank its GPU, rail HCA and NUMA cores" {
	run "$HPT" topo --input "$DGXA100" plan --ranks-per-node 8 --json
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | jq -r '.slices[0].pci_bus_id')" = "0000:05:00.0" ]
	run "$HPT" topo --input "$DGXA100" plan --ranks-per-node 8
	[ "$status" -eq 0 ]
	[ "${lines[1]}" = "0     0    0000:05:00.0  mlx5_0 (PXB)  48-55,176-183    3     PXB to gpu 0; gpus 0-1 split 2 nics" ]
	[ "${lines[8]}" = "7     7    0000:b6:00.0  mlx5_9 (PXB)  88-95,216-223    5     PXB to gpu 7; gpus 6-7 split 2 nics" ]
}

@test "topo plan honours a narrowed CPU set and GPU list" {
	run "$HPT" topo --input "$DGXA100" plan --ranks-per-node 2 --visible-gpus 2,3 --allowed-cpus 16-31,144-159
	[ "$status" -eq 0 ]
	[[ "${lines[1]}" == "0     2    0000:45:00.0"* ]]
	[[ "${lines[2]}" == "1     3    0000:46:00.0"* ]]
}

@test "topo plan refuses more ranks than cores with the topology status" {
	run --separate-stderr "$HPT" topo --input "$FIX/24em64t-2n6c2t-pci.xml" plan --ranks-per-node 13 --gpu none
	[ "$status" -eq 7 ]
	[[ "$stderr" == "hpctrain topo: plan: ranks: "* ]]
}

@test "topo --gres-conf prints one gres line per GPU" {
	run "$HPT" topo --input "$DGXA100" --gres-conf
	[ "$status" -eq 0 ]
	[ "$(echo "$output" | grep -c '^Name=gpu File=/dev/nvidia[0-7] Cores=')" -eq 8 ]
}

@test "topo --export-xml round-trips through --input" {
	tmp=$(mktemp -d)
	run "$HPT" topo --export-xml "$tmp/me.xml"
	[ "$status" -eq 0 ]
	a=$("$HPT" topo --json | jq -c '.cores')
	b=$("$HPT" topo --input "$tmp/me.xml" --json | jq -c '.cores')
	rm -rf "$tmp"
	[ "$a" = "$b" ]
}

@test "topo lists this machine's CPU features as /proc/cpuinfo flags them" {
	flags=" $(grep -m1 '^flags' /proc/cpuinfo | sed 's/^[^:]*://') "
	[ "$flags" != "  " ] || skip "no flags line in /proc/cpuinfo"
	run -0 --separate-stderr "$HPT" topo --json
	for f in avx2 fma avx512f avx512_bf16 avx512_fp16 amx_tile amx_bf16; do
		want=false
		[[ "$flags" == *" $f "* ]] && want=true
		[ "$(jq ".cpu_features.$f" <<<"$output")" = "$want" ]
	done
	run -0 --separate-stderr "$HPT" topo
	[[ "${lines[2]}" == "cpu features: "* ]]
	[[ "$flags" != *" avx2 "* ]] || [[ "${lines[2]}" == "cpu features: AVX2 "* ]]
}

@test "topo shows the CPU features a saved XML holds, and unknown where it holds none" {
	run -0 "$HPT" topo --input "$FIX/144em64t-4n18c2t-snc2-cpuonly-cpuflags.xml"
	[ "${lines[2]}" = "cpu features: AVX2 FMA AVX-512F (no AVX512-BF16, AVX512-FP16, AMX-TILE, AMX-BF16, AMX-FP16)" ]
	[ "${lines[3]}" = "bf16 speed: emulated (fp32 kernels on bf16-rounded inputs, no bf16 arithmetic)" ]
	run -0 "$HPT" topo --input "$FIX/224em64t-2n56c2t-dgxh100-cpuflags.xml" --json
	jq -e '.cpu_features | .avx512_bf16 and .avx512_fp16 and .amx_tile and .amx_bf16' <<<"$output"
	run -0 "$HPT" topo --input "$DGXA100"
	[ "${lines[2]}" = "cpu features: unknown (no CPU flags recorded; hpctrain topo --export-xml on the node saves them)" ]
	run -0 "$HPT" topo --input "$DGXA100" --json
	[ "$(jq .cpu_features <<<"$output")" = null ]
}

@test "topo --export-xml keeps the CPU flags, and a re-export adds none" {
	tmp=$(mktemp -d)
	run -0 "$HPT" topo --export-xml "$tmp/me.xml"
	if grep -q '^flags' /proc/cpuinfo; then
		grep -q '<info name="HPCTrainCPUFlags" value="' "$tmp/me.xml"
	fi
	a=$("$HPT" topo --json | jq -c .cpu_features)
	b=$("$HPT" topo --input "$tmp/me.xml" --json | jq -c .cpu_features)
	[ "$a" = "$b" ]
	run -0 "$HPT" topo --input "$DGXA100" --export-xml "$tmp/a100.xml"
	run -0 "$HPT" topo --input "$tmp/a100.xml" --json
	rm -rf "$tmp"
	[ "$(jq .cpu_features <<<"$output")" = null ]
}

@test "topo reads HPCTRAIN_TOPOLOGY" {
	HPCTRAIN_TOPOLOGY=$DGXA100 run "$HPT" topo --json
	[ "$(echo "$output" | jq '.gpus | length')" -eq 8 ]
}

@test "topo names a missing or broken input with its status" {
	run --separate-stderr "$HPT" topo --input /nonexistent.xml
	[ "$status" -eq "$EX_NO_INPUT" ]
	[ "$stderr" = "hpctrain topo: cannot open /nonexistent.xml: No such file or directory" ]
	tmp=$(mktemp)
	echo '<topology><object type=' >"$tmp"
	run --separate-stderr "$HPT" topo --input "$tmp"
	rm -f "$tmp"
	[ "$status" -eq 7 ]
	[[ "$stderr" == "hpctrain topo: $tmp: cannot read as hwloc XML"* ]]
	run -7 --separate-stderr "$HPT" topo plan --ranks-per-node 13 --cpu exclusive \
		--input "$BATS_TEST_DIRNAME/../fixtures/24em64t-2n6c2t-pci.xml"
	[ "$stderr" = "hpctrain topo: plan: ranks: 13 ranks need 13 allowed cores with cpu: exclusive, but only 12 are allowed" ]
}

@test "topo plan with a bad policy is a usage error" {
	run --separate-stderr "$HPT" topo plan --ranks-per-node 2 --cpu exclusiv
	[ "$status" -eq "$EX_USAGE" ]
	[ "${stderr_lines[0]}" = "hpctrain topo: --cpu: unknown policy 'exclusiv'" ]
}
