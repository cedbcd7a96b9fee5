#!/usr/bin/env bash
# The mutation score, kept by CI: a seeded handful of the mutants that
# results/mutation.json records as killed by a verdict (a failing test or
# oracle, not a time-out), each run by scripts/mutate.sh against the
# detector that killed it. One of them that survives or only times out now
# means the recorded score (results/mutation.md) no longer holds: exit 1,
# naming it. The seed (default: the commit count, so each commit samples
# others, and a rerun of the same commit the same ones) and the sample are
# printed.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
usage="usage: scripts/mutation-sample.sh [--count N] [--seed S] [--detectors D[,D..]] [--out DIR]
  N mutants (default 2) drawn by seed S among those results/mutation.json
  records as killed by a verdict of one of the detectors (default sim, the
  cheapest), each run against that detector alone, after the tree's own
  detectors ran in the suite (mutate.sh --no-baseline)."
count=2 seed=$(git rev-list --count HEAD 2>/dev/null || echo 1) dets=sim out=build/mutation-sample
while [ $# -gt 0 ]; do
	case $1 in
	-h | --help) echo "$usage"; exit 0 ;;
	--count) [[ ${2:-} =~ ^[1-9][0-9]*$ ]] || { echo "mutation-sample: bad --count '${2:-}': give a number >= 1" >&2; exit 2; }
		count=$2; shift ;;
	--seed) [[ ${2:-} =~ ^[0-9]+$ ]] || { echo "mutation-sample: bad --seed '${2:-}': give a decimal number" >&2; exit 2; }
		seed=$2; shift ;;
	--detectors) [ -n "${2:-}" ] || { echo "mutation-sample: --detectors needs a list, e.g. sim,unit" >&2; exit 2; }
		dets=${2//,/ }; shift ;;
	--out) [ -n "${2:-}" ] || { echo "mutation-sample: --out needs a directory" >&2; exit 2; }
		out=$2; shift ;;
	*) echo "mutation-sample: unknown argument '$1'; see --help" >&2; exit 2 ;;
	esac
	shift
done
json=results/mutation.json
command -v jq >/dev/null || { echo "mutation-sample: jq is missing: run scripts/deps.sh" >&2; exit 2; }
[ -f "$json" ] || { echo "mutation-sample: no $json: run make mutants" >&2; exit 2; }
# "ID DETECTOR" for each mutant a detector of the list killed by a verdict,
# the first such detector in the list; then a seeded order.
pairs=$(jq -r --arg dets "$dets" '.mutants[] | . as $m |
	[($dets | split(" "))[] | select(($m.detectors[.].outcome // "") == "killed")] |
	select(length > 0) | "\($m.id) \(.[0])"' "$json" |
	while read -r id det; do
		printf '%s %s %s\n' "$(printf '%s:%s' "$seed" "$id" | md5sum | cut -c1-8)" "$id" "$det"
	done | sort | head -n "$count" | cut -d' ' -f2-)
[ -n "$pairs" ] || { echo "mutation-sample: $json records no mutant killed by a verdict of: $dets" >&2; exit 2; }
echo "mutation-sample: seed $seed: $(tr '\n' ';' <<<"$pairs")"
rm -rf "$out"
bad=""
while read -r id det; do
	bash scripts/mutate.sh --no-baseline --no-report --mutants "$id" --detectors "$det" \
		--out "$out" 2>&1 | grep -E "\] $id $det " || true
	outcome=$(awk -F'\t' -v id="$id" -v d="$det" '$1 == id && $4 == d { o = $5 } END { print o }' "$out/results.tsv" 2>/dev/null)
	[ "$outcome" = killed ] || bad+=" $id ($det: ${outcome:-not run}, see $out/logs/)"
done <<<"$pairs"
if [ -n "$bad" ]; then
	echo "mutation-sample: no longer killed by a verdict:$bad; the score in results/mutation.md dropped: find what stopped catching it, or rerun make mutants and answer the survivor" >&2
	exit 1
fi
echo "mutation-sample: each sampled mutant is still killed by a verdict of its recorded detector"
