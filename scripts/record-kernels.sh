#!/usr/bin/env bash
# Runs the kernel matrix (kernels/matrix.sh; arguments go to it) and
# records it: results/kernels.json (one object per cell) and
# results/kernels.md (one row per cell); with --smoke,
# results/kernels-smoke.{md,json}. The cells run replace their rows, the
# others keep theirs, and each row says the options and date of its run. The
# record is written also when a cell failed; the exit status is the matrix's.
# --from DIR [--smoke] records the cells of an earlier run's --out DIR
# instead (one cut short, say) without running anything; options after DIR
# (say the --profile and --storm DIR ran with) only go into the run column.
# Below the table: what changed between kernels (kernels/diff.sh)
# over every recorded cell, smoke and matrix; then the kernel's hands on A
# and B from results/hazards.json (scripts/record-hazards.sh). The record
# is of kernels.list's kernels and every step of a cell: --kernel, --newest
# and --only-steps are refused.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
[[ " $* " == *" --kernel "* || " $* " == *" --newest "* ]] &&
	{ echo "record-kernels: the record holds kernels.list's kernels; run kernels/matrix.sh --kernel/--newest directly" >&2; exit 2; }
[[ " $* " == *" --only-steps "* ]] &&
	{ echo "record-kernels: a row holds every step of its cell; record --only-steps probe,hazards with scripts/record-hazards.sh" >&2; exit 2; }
name=kernels
[[ " $* " == *" --smoke "* ]] && name=kernels-smoke
out=build/$name-record
mkdir -p build
if [ "${1:-}" = --from ]; then
	[ -s "${2:-}/cells.jsonl" ] || { echo "record-kernels: --from ${2:-}: no cells.jsonl there; give a --out directory of kernels/matrix.sh" >&2; exit 2; }
	out=$2 rc=0 last="recorded from $2"
else
	bash kernels/matrix.sh --out "$out" "$@" | tee "build/$name-record.txt"
	rc=${PIPESTATUS[0]}
	last="exit status $rc"
fi
[ -s "$out/cells.jsonl" ] || { echo "record-kernels: no cell ran" >&2; exit "$rc"; }
mkdir -p results
old=$(cat "results/$name.json" 2>/dev/null || echo '[]')
jq -s --argjson old "$old" --arg run "$* ($(date -u +%Y-%m-%d))" \
	'map(. + {run: $run}) as $new | ($old | map(select(.id as $i | $new | all(.id != $i)))) + $new | sort_by(.n)' \
	"$out/cells.jsonl" >"results/$name.json.new" && mv "results/$name.json.new" "results/$name.json"
total=$(bash kernels/matrix.sh --list | wc -l)
{
	echo "# Kernel matrix${name#kernels}" | sed 's/-smoke$/: the smoke cells/'
	echo
	echo "Produced by \`scripts/record-kernels.sh\` ($(uname -r) host, QEMU $(qemu-system-x86_64 --version | awk 'NR == 1 {print $4}'), $(jq -r '.[0].accel' results/$name.json | tr '[:lower:]' '[:upper:]')); each row's run is in the last column; see [docs/kernels.md](../docs/kernels.md)."
	echo "$(jq length results/$name.json) of the matrix's $total cells recorded; the last run: $last; $(jq '[.[] | select(.verdict == "pass")] | length' results/$name.json) passed, $(jq '[.[] | select(.verdict == "n/a")] | length' results/$name.json) n/a, $(jq '[.[] | select(.verdict == "fail")] | length' results/$name.json) failed, $(jq '[.[] | select(.verdict == "infrastructure")] | length' results/$name.json) infrastructure."
	echo
	echo "| # | cell | package | release | uffd features | cgroup | started from | swap | verdict | scenarios | mismatches | seconds | note | run |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
	jq -r '.[] | "| \(.n) | \(.id) | \(.package) | \(.release // "-") | \(.uffd_features // "-") | \(.cgroup) | \(if .place == "scope" then "delegated scope" else "root" end) | \(if .swap == "on" then "on, forbidden" else "off" end) | \(.verdict) | \(.scenarios // "-") | \(.mismatches // "-") | \(.seconds) | \(.reason | gsub("\\|"; "/")) | \(.run) |"' results/$name.json
	echo
	echo "## What changed between kernels"
	echo
	echo "\`kernels/diff.sh\` over the recorded cells that kept a manifest (\`results/kernels-smoke.json\`, \`results/kernels.json\`): per kernel, what differs from the kernel before it of its flavour (docs/kernels.md)."
	echo
	echo '```'
	recorded=()
	for f in results/kernels-smoke.json results/kernels.json; do [ ! -e "$f" ] || recorded+=("$f"); done
	bash kernels/diff.sh "${recorded[@]}"
	echo '```'
} >"results/$name.md"
# the kernel's hands on A and B, recorded apart (scripts/record-hazards.sh)
[ "$name" != kernels ] || bash scripts/record-hazards.sh --render
echo "record-kernels: results/$name.md, results/$name.json"
exit "$rc"
