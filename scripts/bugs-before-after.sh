#!/usr/bin/env bash
# Appends to results/bugs.md the schedules to detect of an older kill
# matrix (results/bugs.json at revision REV, default e47aa1e: the last whose
# hunts gave bugs 7 and 8 faults and a chunk size of their own) beside those
# of results/bugs.json now (the generic campaign: swarm faults).
# scripts/kill-matrix.sh runs it after the matrix.
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in -h | --help) echo "usage: scripts/bugs-before-after.sh [REV]   (default e47aa1e)"; exit 0 ;; esac
before=${1:-e47aa1e}
command -v jq >/dev/null || { echo "bugs-before-after: jq is missing: run scripts/deps.sh" >&2; exit 2; }
old=$(git show "$before:results/bugs.json" 2>/dev/null) || {
	echo "bugs-before-after: no results/bugs.json at revision '$before'; give a commit that has one" >&2
	exit 2
}
[ -f results/bugs.json ] || { echo "bugs-before-after: no results/bugs.json: run scripts/kill-matrix.sh" >&2; exit 2; }
{
	echo
	echo "## Schedules to detect: $before (a bug's own faults) and now (the generic campaign)"
	echo
	echo "Before: \`results/bugs.json\` of $before ($(jq -r '.seeds' <<<"$old") seeds, $(jq -r '.runs' <<<"$old") real-kernel runs), whose hunts injected \`cond/spurious=0.5\` for bug 8 and, on the real kernel, \`backing_read/eio=0.6\` with 64 KiB chunks for bug 7. Now ($(jq -r '.seeds' results/bugs.json) seeds): every hunt is the generic campaign, each schedule or storm drawing its faults (and a storm its chunk size) from its seed (swarm). Scheduler: median / worst schedules to detect, then detected / seeds; real kernel: detected / runs. Expected detectors only."
	echo
	echo "| bug | detector | before | now |"
	echo "|---|---|---|---|"
	jq -r -n --argjson a "$old" --slurpfile b results/bugs.json '
		def cell(c; d): if c == null or c.ran < c.runs then "not run"
			elif d == "storm" or d == "tsan" then "\(c.detected)/\(c.runs) runs"
			else "\(c.schedules_median) / \(c.schedules_worst), \(c.detected)/\(c.runs)" end;
		range(1; $b[0].bugs | length) as $i |
		("sched_pct", "sched_random", "storm", "tsan") as $d |
		select($b[0].bugs[$i][$d].expected) |
		"| \($i) \($b[0].bugs[$i].title) | \($d) | \(cell($a.bugs[$i][$d]; $d)) | \(cell($b[0].bugs[$i][$d]; $d)) |"'
} >>results/bugs.md
echo "bugs-before-after: appended $before's schedules to detect beside today's to results/bugs.md"
