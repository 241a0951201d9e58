#!/usr/bin/env bats
# main.bats - the command table: help, version, unknown commands.

load common

@test "hpctrain --version prints the version" {
	run "$HPT" --version
	[ "$status" -eq 0 ]
	[[ "$output" == "hpctrain "* ]]
}

@test "hpctrain help lists the commands on stdout" {
	run --separate-stderr "$HPT" help
	[ "$status" -eq 0 ]
	[[ "$output" == *"  validate "* ]]
	[[ "$output" == *"  template "* ]]
}

@test "hpctrain CMD --help and hpctrain help CMD agree" {
	for c in validate template; do
		a=$("$HPT" "$c" --help)
		b=$("$HPT" help "$c")
		[ "$a" = "$b" ]
		[[ "$a" == "usage: hpctrain $c"* ]]
	done
}

@test "hpctrain without a command prints usage to stderr with the usage status" {
	run --separate-stderr "$HPT"
	[ "$status" -eq "$EX_USAGE" ]
	[ -z "$output" ]
	[[ "$stderr" == "usage: hpctrain"* ]]
}

@test "an unknown command gets a did-you-mean and the usage status" {
	run --separate-stderr "$HPT" valdate x.yaml
	[ "$status" -eq "$EX_USAGE" ]
	[ "${stderr_lines[0]}" = "hpctrain: 'valdate' is not an hpctrain command; did you mean 'validate'?" ]
}

@test "an unknown global flag gets a did-you-mean" {
	run --separate-stderr "$HPT" --verison
	[ "$status" -eq "$EX_USAGE" ]
	[ "${stderr_lines[0]}" = "hpctrain: unknown option '--verison'; did you mean '--version'?" ]
}

@test "a write error on stdout is reported, not hidden" {
	[ -w /dev/full ] || skip "no /dev/full"
	run bash -c "\"$HPT\" validate --fields >/dev/full"
	[ "$status" -eq "$EX_IO" ]
	[ "$output" = "hpctrain: error writing standard output: No space left on device" ]
}
