#!/usr/bin/env bats
# docs.bats - the man pages agree with the code they document.
#
# In the spirit of git's t/t0450-txt-doc-vs-help.sh: each check reads the
# running binary (`hpctrain help`, `CMD --help`, `validate --fields`) or
# common/exitcode.h, and the man(7) source in man/, and fails on any
# difference in either direction.  Commands are discovered, not listed,
# so a new command is checked as soon as it is in cli/main.c's table.

HPT=${HPT:-$BATS_TEST_DIRNAME/../../bin/hpctrain}
ROOT=$BATS_TEST_DIRNAME/../..
MAN=$ROOT/man

# Commands documented in hpctrain.1 rather than in a page of their own.
NO_PAGE="help version"

# man_section FILE NAME: the source lines of section NAME (`.SH NAME` or
# `.SH "NAME"`), up to the next .SH.
man_section() {
	awk -v want="$2" '
		/^\.SH[ \t]/ { t = $0; sub(/^\.SH[ \t]+/, "", t); gsub(/"/, "", t); on = (t == want); next }
		on { print }' "$1"
}

# tags: the line after each .TP, i.e. the tag of each tagged paragraph.
tags() {
	awk 'prev == ".TP" { print } { prev = $0 }'
}

# render: the text of request lines such as `.BR \-o ", " \-\-output " " \fIFILE\fR`
# ("-o, --output FILE"): quoted arguments, joined with blanks for .B and .I,
# without for the alternating-font requests (.BR, .IR, ...), as roff does.
# Other lines pass unchanged.  Pipe the result through plain.
render() {
	awk '
		!/^\.(B|I|SM|SB|BR|RB|BI|IB|IR|RI)([ \t]|$)/ { print; next }
		{
			mac = $0; sub(/[ \t].*/, "", mac); rest = substr($0, length(mac) + 1)
			n = 0; cur = ""; inarg = 0; inq = 0
			for (i = 1; i <= length(rest); i++) {
				c = substr(rest, i, 1)
				if (inq) {
					if (c == "\"" && substr(rest, i + 1, 1) == "\"") { cur = cur c; i++ }
					else if (c == "\"") inq = 0
					else cur = cur c
				} else if (c == " " || c == "\t") {
					if (inarg) { args[++n] = cur; cur = ""; inarg = 0 }
				} else if (c == "\"") { inq = 1; inarg = 1 }
				else { cur = cur c; inarg = 1 }
			}
			if (inarg) args[++n] = cur
			sep = length(mac) == 3 ? "" : " "
			out = ""
			for (i = 1; i <= n; i++) out = out (i > 1 ? sep : "") args[i]
			print out
		}'
}

# plain: roff source to the text a reader sees, for the escapes we use.
plain() {
	sed -e 's/\\f[BIRP]//g' -e 's/\\-/-/g' -e 's/\\&//g' -e 's/\\e/\\/g' \
	    -e "s/\\\\(aq/'/g" -e 's/\\(dq/"/g'
}

# commands: the names in the command list of `hpctrain help`.
commands() {
	"$HPT" help | awk '/^commands:/ { on = 1; next } on && /^$/ { exit } on { print $1 }'
}

# help_opts CMD: "long short" per option of `hpctrain CMD --help` ("-" when
# the option has no short letter).
help_opts() {
	"$HPT" "$1" --help | awk '
		/^options:/ { on = 1; next }
		on && /^ +-/ {
			short = "-"
			if ($1 ~ /^-[^-],$/) { short = substr($1, 2, 1); long = $2 } else long = $1
			sub(/^--/, "", long)
			print long, short
		}'
}

# same_set WHAT_A A WHAT_B B: fails, naming the differences, unless the
# newline-separated lists A and B hold the same items.
same_set() {
	local only_a only_b
	only_a=$(comm -23 <(printf '%s\n' "$2" | sed '/^$/d' | sort -u) \
		<(printf '%s\n' "$4" | sed '/^$/d' | sort -u))
	only_b=$(comm -13 <(printf '%s\n' "$2" | sed '/^$/d' | sort -u) \
		<(printf '%s\n' "$4" | sed '/^$/d' | sort -u))
	[ -n "$2" ] || { echo "$1: nothing found"; return 1; }
	[ -n "$4" ] || { echo "$3: nothing found"; return 1; }
	[ -z "$only_a" ] || echo "in $1 but not in $3:" $only_a
	[ -z "$only_b" ] || echo "in $3 but not in $1:" $only_b
	[ -z "$only_a" ] && [ -z "$only_b" ]
}

# paged_commands: each command that needs a page of its own.
paged_commands() {
	local c
	for c in $(commands); do
		case " $NO_PAGE " in *" $c "*) continue ;; esac
		echo "$c"
	done
}

@test "every man page passes mandoc -T lint -W warning with no output" {
	local f out bad=0
	for f in "$MAN"/*.[1-9]; do
		out=$(mandoc -T lint -W warning "$f" 2>&1) || true
		[ -z "$out" ] || { echo "$out"; bad=1; }
	done
	[ "$bad" -eq 0 ]
}

@test "every man page renders with groff -ww -man without warnings" {
	local f out bad=0
	for f in "$MAN"/*.[1-9]; do
		out=$(groff -ww -man -z "$f" 2>&1) || { echo "${f##*/}: groff failed"; bad=1; }
		[ -z "$out" ] || { echo "${f##*/}: $out"; bad=1; }
	done
	[ "$bad" -eq 0 ]
}

@test "every key of validate --fields is a .B line in KEYS of hpctrain-job.5 and vice versa" {
	local fields keys
	fields=$("$HPT" validate --fields | cut -f1)
	keys=$(man_section "$MAN/hpctrain-job.5" KEYS | sed -n 's/^\.B[ \t]\{1,\}//p')
	same_set "validate --fields" "$fields" "hpctrain-job.5 KEYS" "$keys"
}

@test "hpctrain-job.5 lists the keys in the order of validate --fields" {
	local fields keys
	fields=$("$HPT" validate --fields | cut -f1)
	keys=$(man_section "$MAN/hpctrain-job.5" KEYS | sed -n 's/^\.B[ \t]\{1,\}//p')
	diff <(echo "$fields") <(echo "$keys")
}

@test "hpctrain-job.5 states each key's default as validate --fields prints it" {
	local key type def help entry want bad=0
	while IFS=$'\t' read -r key type def help; do
		entry=$(man_section "$MAN/hpctrain-job.5" KEYS | awk -v k="$key" '
			/^\.(TP|SS|SH)/ { on = 0 }
			on { print }
			prev == ".TP" && $0 == ".B " k { on = 1 }
			{ prev = $0 }' | plain | tr '\n' ' ')
		case $def in
		-) continue ;;
		"(required)") want="Required." ;;
		*) def=${def#\"}; want="Default: ${def%\"}." ;;
		esac
		case $entry in
		*"$want"*) ;;
		*) echo "$key: expected \"$want\" in its entry"; bad=1 ;;
		esac
	done < <("$HPT" validate --fields)
	[ "$bad" -eq 0 ]
}

@test "every exit status of common/exitcode.h is in EXIT STATUS of hpctrain.1 and vice versa" {
	local code doc
	code=$(sed -n 's/^[[:space:]]*HPT_EXIT_[A-Z0-9_]*[[:space:]]*=[[:space:]]*\([0-9]\{1,\}\).*/\1/p' \
		"$ROOT/common/exitcode.h")
	doc=$(man_section "$MAN/hpctrain.1" "EXIT STATUS" | tags | sed -n 's/^\.B[ \t]\{1,\}\([0-9]\{1,\}\)$/\1/p')
	same_set "common/exitcode.h" "$code" "hpctrain.1 EXIT STATUS" "$doc"
}

@test "every command of hpctrain help is in COMMANDS of hpctrain.1 and vice versa" {
	local doc
	doc=$(man_section "$MAN/hpctrain.1" COMMANDS | tags | sed -n 's/^\.B[ \t]\{1,\}//p')
	same_set "hpctrain help" "$(commands)" "hpctrain.1 COMMANDS" "$doc"
}

@test "every command of hpctrain help but help and version has man/hpctrain-CMD.1" {
	local c bad=0
	for c in $(paged_commands); do
		[ -f "$MAN/hpctrain-$c.1" ] || { echo "no man/hpctrain-$c.1"; bad=1; }
	done
	[ "$bad" -eq 0 ]
}

@test "every man/hpctrain-CMD.1 documents a command of hpctrain help" {
	local f pages
	pages=$(for f in "$MAN"/hpctrain-*.1; do
		[ -e "$f" ] || continue
		f=${f##*/hpctrain-}
		echo "${f%.1}"
	done)
	same_set "man/hpctrain-*.1" "$pages" "commands with a page" "$(paged_commands)"
}

# tag_of LONG: from rendered tags on stdin, the one that names --LONG.
tag_of() {
	awk -v o="--$1" '{ n = split($0, w, /[ ,=]+/); for (i = 1; i <= n; i++) if (w[i] == o) { print; exit } }'
}

@test "every long option of hpctrain CMD --help is in OPTIONS of its man page and vice versa" {
	local c o page help doc bad=0
	for c in $(paged_commands); do
		page=$MAN/hpctrain-$c.1
		[ -f "$page" ] || continue # reported by the test above
		help=$(help_opts "$c" | cut -d' ' -f1)
		# Options the page describes, as tags ...
		doc=$(man_section "$page" OPTIONS | tags | render | plain |
			grep -o -- '--[a-z0-9][a-z0-9-]*' | sed 's/^--//')
		same_set "hpctrain $c --help" "$help" "hpctrain-$c.1 OPTIONS tags" "$doc" || bad=1
		# ... and every option it mentions there at all.
		doc=$(man_section "$page" OPTIONS | render | plain |
			grep -o -- '--[a-z0-9][a-z0-9-]*' | sed 's/^--//' | sort -u)
		for o in $doc; do
			printf '%s\n' "$help" | grep -qx -- "$o" ||
				{ echo "hpctrain-$c.1 OPTIONS mentions --$o, which $c --help does not list"; bad=1; }
		done
	done
	[ "$bad" -eq 0 ]
}

@test "every short option letter of hpctrain CMD --help is in the tag of its long option" {
	local c page long short tags tag bad=0
	for c in $(paged_commands); do
		page=$MAN/hpctrain-$c.1
		[ -f "$page" ] || continue # reported by the test above
		# the page's tags, rendered once a page, not once an option
		tags=$(man_section "$page" OPTIONS | tags | render | plain)
		while read -r long short; do
			tag=$(printf '%s\n' "$tags" | tag_of "$long")
			if [ "$short" = - ]; then
				case "$tag" in "--$long"*) ;; *)
					echo "hpctrain-$c.1: expected a tag starting \"--$long\", got \"$tag\""; bad=1 ;;
				esac
			else
				case "$tag" in "-$short, --$long"*) ;; *)
					echo "hpctrain-$c.1: expected a tag starting \"-$short, --$long\", got \"$tag\""; bad=1 ;;
				esac
			fi
		done < <(help_opts "$c")
	done
	[ "$bad" -eq 0 ]
}

@test "the SYNOPSIS of every command page and of hpctrain.1 is the usage of --help" {
	local c page usage doc bad=0
	for c in "" $(paged_commands); do
		page=$MAN/hpctrain${c:+-$c}.1
		[ -f "$page" ] || { echo "no ${page##*/}"; bad=1; continue; }
		# The synopsis is every line before the first blank one, each
		# behind a 7-column "usage: ", "   or: " or continuation margin.
		usage=$("$HPT" ${c:+"$c"} --help | awk 'NF == 0 { exit } { print substr($0, 8) }')
		doc=$(man_section "$page" SYNOPSIS | grep -v '^\.' | plain)
		[ "$usage" = "$doc" ] || {
			echo "${page##*/} SYNOPSIS differs from 'hpctrain${c:+ $c} --help':"
			diff <(echo "$usage") <(echo "$doc") || true
			bad=1
		}
	done
	[ "$bad" -eq 0 ]
}
