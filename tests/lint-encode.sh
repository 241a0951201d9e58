#!/bin/sh
# lint-encode.sh - an encoder's failure is looked at.  json_pack and
# json_string return NULL for a string that is not UTF-8, and
# json_object_set_new / json_array_append_new then leave the member out:
# a data set's file vanished from its manifest that way, and a record
# silently lost a field.  snprintf cuts what does not fit and says so
# only in its result: a path or a command cut short names another file.
# So a statement that drops what one of these returns is an offence:
#   - snprintf(...);            use strfmt (checked) or strfmt_label (text
#                               for people, where a cut costs nothing)
#   - json_pack(...); json_dumps(...); json_dumpf(...);
#   - json_object_set_new(...) / json_array_append_new(...) (and their
#     reference-keeping forms) of a json_pack, json_string of a
#     variable, json_stringn or json_sprintf: use jsonb_set /
#     jsonb_append (common/jsonb.h), or check the result.
# unless the statement says why in an `encode-ok: <reason>` comment on
# its first line or the line above.  A call whose result is tested,
# assigned or returned is not flagged.  Prints each offence and exits 1
# when there is one.
#
# Usage: sh tests/lint-encode.sh [ROOT]   (ROOT defaults to .)
cd "${1:-.}" || exit 2
find cli common launcher topology trainer \( -name '*.c' -o -name '*.cu' \) ! -path common/strfmt.c |
	sort | xargs awk '
	function flush() {
		if (kind == "snprintf")
			why = "ignores whether snprintf fit: use strfmt (a path, a command, a record) " \
			      "or strfmt_label (text for people)"
		else if (kind ~ /^json_(pack|dumps|dumpf)$/)
			why = "ignores what " kind " returns (NULL or -1 for a string that is not UTF-8)"
		else if (stmt ~ /json_pack[[:space:]]*\(|json_string[[:space:]]*\([[:space:]]*[^"[:space:]]|json_stringn[[:space:]]*\(|json_v?sprintf[[:space:]]*\(/)
			why = "ignores whether " kind " took its value (a json_pack or json_string that " \
			      "fails on a string that is not UTF-8): use jsonb_set or jsonb_append"
		else
			why = ""
		if (why != "" && !ok) {
			printf "%s:%d: %s, or say why in an encode-ok: comment\n", FILENAME, sline, why
			bad = 1
		}
		stmt = ""
	}
	FNR == 1 { stmt = ""; prev = ""; cont = 0 }
	{
		line = $0
		if (stmt != "") {
			stmt = stmt " " line
			if (line ~ /encode-ok: *[^ *]/)
				ok = 1
			if (line ~ /;[[:space:]]*(\/[*\/].*)?$/)
				flush()
			prev = line
			next
		}
		calls = "(snprintf|json_pack|json_dumps|json_dumpf|json_object_set_new|json_array_append_new|json_object_set|json_array_append)[[:space:]]*\\("
		# a line that goes on an expression (after , ( = && || ? :) starts no statement
		if (!cont && match(line, "^[[:space:]]*(else[[:space:]]+)?(\\(void\\)[[:space:]]*)?" calls) ||
		    match(line, "^[[:space:]]*(} *)?(else[[:space:]]+)?(if|for|while)[[:space:]]*\\(.*\\)[[:space:]]+" calls)) {
			s = substr(line, RSTART, RLENGTH)
			match(s, calls "$")
			kind = substr(s, RSTART)
			sub(/[[:space:]]*\($/, "", kind)
			stmt = line
			sline = FNR
			ok = line ~ /encode-ok: *[^ *]/ || prev ~ /encode-ok: *[^ *]/
			if (line ~ /;[[:space:]]*(\/[*\/].*)?$/)
				flush()
		}
		prev = line
		code = line
		sub(/\/\*.*\*\/|\/\/.*$/, "", code)
		sub(/[[:space:]]+$/, "", code)
		if (code != "" && code !~ /^[[:space:]]*(\*|\/\*|#)/)
			cont = code ~ /(,|\(|=|&&|\|\||\?|:)$/
	}
	END { exit bad }' || exit 1
