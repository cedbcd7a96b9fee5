#!/usr/bin/env bash
# Replaces one section of results/performance.md, the lines from
# "<!-- NAME: ..." to "<!-- /NAME -->", with the body read from stdin
# (markers added here), so that a benchmark script rewrites its own figures
# and nothing else. Usage: perf-section.sh NAME SCRIPT <body
set -euo pipefail
name=$1 script=$2
perf=results/performance.md
grep -q "^<!-- $name:" "$perf" ||
	{ echo "perf-section: $perf has no '<!-- $name:' marker; add one where the section goes" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
{ echo "<!-- $name: written by $script -->"; cat; echo "<!-- /$name -->"; } >"$tmp/section.md"
awk -v f="$tmp/section.md" -v name="$name" '
	index($0, "<!-- " name ":") == 1 { while ((getline l < f) > 0) print l; skip = 1; next }
	$0 == "<!-- /" name " -->" { skip = 0; next }
	!skip' "$perf" >"$tmp/perf.md"
cp "$tmp/perf.md" "$perf"
