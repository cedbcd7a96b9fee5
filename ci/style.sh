#!/usr/bin/env bash
# The C style, checked mechanically in about a second:
#  - every tracked *.c and *.h file is as clang-format 14 lays it out by
#    .clang-format (the kernel's style); scripts/format.sh fixes one that
#    is not;
#  - no function outside harness/tests/ has a body over 80 lines (the
#    lines between its braces, which the style puts in column 0).
# --self-test plants a badly formatted file and an 81-line function in a
# scratch copy and fails unless each check rejects its plant, by name, and
# passes an 80-line function and a long one under harness/tests/.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
MAX=80
usage="usage: ci/style.sh [--self-test]
Checks that the tracked C files are formatted (clang-format 14,
.clang-format) and that no function outside harness/tests/ has a body
over $MAX lines. --self-test shows both checks failing on planted files."
self_test=0
case "${1:-}" in
"") ;;
--self-test) self_test=1 ;;
-h | --help) echo "$usage"; exit 0 ;;
*) echo "style: unknown argument '$1'; see --help" >&2; exit 2 ;;
esac
CF=${CLANG_FORMAT:-clang-format-14}
command -v "$CF" >/dev/null || { echo "style: no $CF: run scripts/deps.sh (Debian's clang-format-14)" >&2; exit 2; }

# unformatted FILE...: prints the files clang-format would change, one a
# line; 2 when clang-format itself fails.
unformatted() {
	local out rc
	out=$(printf '%s\0' "$@" | xargs -0 "$CF" --dry-run --Werror --style=file 2>&1)
	rc=$?
	printf '%s\n' "$out" | sed -n 's/^\(.*\):[0-9]*:[0-9]*: error: code should be clang-formatted.*/\1/p' | sort -u
	if [ "$rc" -ne 0 ] && ! grep -q 'error: code should be clang-formatted' <<<"$out"; then
		echo "style: $CF failed (exit $rc): $(head -3 <<<"$out")" >&2
		return 2
	fi
}

# long_functions FILE...: FILE:FUNCTION:LINES for each function whose body
# is over MAX lines. A definition's last line with a `(` at column 0 before
# its `{` names it (an __attribute__((...)) in front is skipped).
long_functions() {
	awk -v max="$MAX" '
	FNR == 1 { start = 0; cand = "" }
	/^[A-Za-z_]/ && /\(/ {
		s = $0
		gsub(/__attribute__ *\(\([^()]*(\([^()]*\)[^()]*)*\)\)/, "", s)
		if (match(s, /[A-Za-z_][A-Za-z_0-9]* *\(/)) {
			cand = substr(s, RSTART, RLENGTH)
			sub(/ *\($/, "", cand)
		}
	}
	/^\{/ { name = cand; start = FNR; next }
	/^\}/ && start {
		if (FNR - start - 1 > max)
			print FILENAME ":" name ":" FNR - start - 1
		start = 0
	}' "$@"
}

# check: both checks over the tracked C files of the working directory;
# prints what fails and how to fix it; 1 then.
check() {
	local body bad long rc=0
	local f files=()
	# A tracked file deleted in the working tree is not checked.
	while IFS= read -r -d '' f; do
		[ -e "$f" ] && files+=("$f")
	done < <(git ls-files -z '*.c' '*.h')
	[ ${#files[@]} -gt 0 ] || { echo "style: git lists no C file in $PWD" >&2; return 2; }
	bad=$(unformatted "${files[@]}") || return 2
	if [ -n "$bad" ]; then
		echo "style: $(wc -l <<<"$bad") files are not formatted by .clang-format:" >&2
		awk '{ print "  " $0 }' <<<"$bad" >&2
		echo "style: fix them with: bash scripts/format.sh (every file) or bash scripts/format.sh FILE..." >&2
		rc=1
	fi
	mapfile -t body < <(printf '%s\n' "${files[@]}" | grep -v '^harness/tests/')
	long=$(long_functions "${body[@]}" | sort -t: -k3,3nr)
	if [ -n "$long" ]; then
		echo "style: $(wc -l <<<"$long") functions outside harness/tests/ have a body over $MAX lines (file:function:lines):" >&2
		awk '{ print "  " $0 }' <<<"$long" >&2
		echo "style: split each into functions of at most $MAX lines" >&2
		rc=1
	fi
	[ "$rc" -ne 0 ] || echo "style: ${#files[@]} C files formatted, no function over $MAX lines outside harness/tests/"
	return "$rc"
}

# fn NAME LINES: a formatted function whose body is LINES lines.
fn() {
	printf 'int %s(void)\n{\n\tint x = 0;\n\n' "$1"
	for ((i = 0; i < $2 - 3; i++)); do printf '\tx++;\n'; done
	printf '\treturn x;\n}\n'
}

# The self-test: a clean scratch tree passes, then each plant fails its
# check by name while the files within the rules stay unnamed.
self_test() {
	local tmp out rc
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' RETURN
	cp .clang-format "$tmp"/
	mkdir -p "$tmp/harness/tests"
	fn fits "$MAX" >"$tmp/fits.c"
	fn test_long $((MAX + 1)) >"$tmp/harness/tests/test_long.c"
	if ! git -C "$tmp" init -q || ! git -C "$tmp" add .; then
		echo "style: self-test: git init in $tmp failed" >&2
		return 2
	fi
	out=$(cd "$tmp" && check 2>&1) || { echo "style: self-test: the clean scratch tree failed:" >&2; echo "$out" >&2; return 1; }
	printf 'int badly (void){return 0;}\n' >"$tmp/badly.c"
	fn too_long $((MAX + 1)) >"$tmp/too_long.c"
	git -C "$tmp" add . || return 2
	out=$(cd "$tmp" && check 2>&1)
	rc=$?
	awk '{ print "  self-test| " $0 }' <<<"$out"
	[ "$rc" -eq 1 ] || { echo "style: self-test: the planted tree exited $rc, not 1" >&2; return 1; }
	grep -qx '  badly.c' <<<"$out" || { echo "style: self-test: the format check did not name badly.c" >&2; return 1; }
	grep -qx "  too_long.c:too_long:$((MAX + 1))" <<<"$out" || { echo "style: self-test: the length check did not name too_long.c:too_long:$((MAX + 1))" >&2; return 1; }
	! grep -qE 'fits|test_long|  too_long\.c$' <<<"$out" || { echo "style: self-test: a file within the rules was named" >&2; return 1; }
	echo "style: self-test: the badly formatted file and the $((MAX + 1))-line function fail, by name"
}

if [ "$self_test" -eq 1 ]; then
	self_test
else
	check
fi
