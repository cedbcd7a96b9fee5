#!/usr/bin/env bash
# The mutation campaign's table still fits the tree: every mutant of
# scripts/mutants.txt applies, each search string exactly once. And the
# script refuses a broken table with exit 2, naming the mutant, before it
# would build anything.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
bash scripts/mutate.sh --check || exit 1

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
refused() { # table text, expected message
	printf '%b' "$1" >"$tmp/table.txt"
	out=$(bash scripts/mutate.sh --check --table "$tmp/table.txt" 2>&1)
	rc=$?
	if [ $rc -ne 2 ] || ! grep -q "$2" <<<"$out"; then
		echo "ci/mutate.sh: a broken table gave exit $rc and '$out', not exit 2 and '$2'" >&2
		exit 1
	fi
}
refused 'mutant Z01 data pager/ring.c\nwhat x\nfind no such text\nrepl y\n' \
	'mutant Z01: search string 1 not found'
refused 'mutant Z02 data pager/ring.c\nwhat x\nfind q->count\nrepl y\n' \
	'mutant Z02: search string 1 occurs more than once'
refused 'mutant Z03 data pager/ring.c\nwhat x\nfind q->head = q->count = 0;\n' \
	'mutant Z03 ends with a find without a repl'
refused 'mutant Z04 speed pager/ring.c\n' "category 'speed'"
echo "ci/mutate.sh: the mutation table applies; broken tables are refused"
