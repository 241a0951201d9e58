# lint-bats.awk - finds assertions that cannot fail in bats tests.
#
# Bash's set -e ignores a command negated with `!`: `! grep x f` as a
# line of its own never fails a test, unless it is the test's last
# command, whose status bats reads.  So this flags a `!` negation that
# is followed by another command before the closing `}`, and every one
# inside a loop body (only the last iteration's status would count).
# Write `run ! cmd` or `! cmd || false` instead.
#
# Usage: awk -f tests/lint-bats.awk tests/cli/*.bats tests/cli/*.bash
# Prints FILE:LINE: text for each, and exits 1 when there is one.

function report(file, line, text) {
	printf "%s:%d: a negated command that cannot fail the test (use `run !` or `|| false`): %s\n", file, line, text
	bad = 1
}

function negated(s) {
	# `!` as a pipeline's first word: at the start, or after ; && || do then else
	# ... but not `[ ! -e x ]`, `run !`, or a line ending in `|| false`.
	if (s ~ /\|\|[ \t]*false[ \t]*$/)
		return 0
	return s ~ /(^|[;&|]|[ \t]do|[ \t]then|[ \t]else)[ \t]*![ \t]/
}

FNR == 1 { pending = 0; heredoc = "" }

# Skip here-documents: their lines are data, not commands.
heredoc != "" {
	if ($0 ~ "^[ \t]*" heredoc "[ \t]*$")
		heredoc = ""
	next
}

{
	line = $0
	sub(/^[ \t]+/, "", line)
	if (line == "" || line ~ /^#/)
		next
	# Any command after a pending negation makes it a dead assertion;
	# the closing brace of the test (column 0) makes it the last one.
	if (pending) {
		if ($0 !~ /^}/)
			report(FILENAME, pending_line, pending_text)
		pending = 0
	}
	if (negated(line)) {
		if (line ~ /(^|[ \t;])do[ \t]/ || line ~ /^(for|while|until)[ \t]/)
			report(FILENAME, FNR, line)
		else {
			pending = 1
			pending_line = FNR
			pending_text = line
		}
	}
	if (match(line, /<<-?[ \t]*['"]?[A-Za-z_]+['"]?/)) {
		heredoc = substr(line, RSTART, RLENGTH)
		sub(/^<<-?[ \t]*['"]?/, "", heredoc)
		sub(/['"]$/, "", heredoc)
	}
}

END { exit bad }
