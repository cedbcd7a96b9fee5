#!/usr/bin/env bash
# Turns a committed results/mutation.json back into the results of the runs
# that made it, so that a rerun of some mutants can be merged with them:
# DIR/results.tsv and DIR/revision for the full run, DIR/rerun-N/ for each
# rerun merged into it (in order). The exit codes are not kept in the JSON:
# "-" stands in. It prints the mutation-report.sh arguments that rebuild
# the JSON; append a new rerun's results.tsv to them.
set -euo pipefail
cd "$(dirname "$0")/.."
usage="usage: scripts/mutation-results-from-json.sh JSON|REV:JSON DIR   (e.g. HEAD~3:results/mutation.json build/mutation-old)"
case "${1:-}" in -h | --help) echo "$usage"; exit 0 ;; esac
[ $# -eq 2 ] || { echo "$usage" >&2; exit 2; }
json=$1 dir=$2
tmp=$(mktemp) || exit 1
trap 'rm -f "$tmp"' EXIT
# A committed version, REV:PATH, names its commit in the origin.
if [ ! -f "$json" ] && [[ $json == *:* ]] && git show "$json" >"$tmp" 2>/dev/null; then
	made=" of commit $(git log -1 --format=%h "${json%%:*}" -- "${json#*:}")"
	label=${json#*:} json=$tmp
elif [ -f "$json" ]; then
	made="" label=$json
else
	echo "mutation-results-from-json: no file $json: give a results/mutation.json or REV:results/mutation.json" >&2
	exit 2
fi
command -v jq >/dev/null || { echo "mutation-results-from-json: jq is missing: run scripts/deps.sh" >&2; exit 2; }
jq -e '.mutants' "$json" >/dev/null || { echo "mutation-results-from-json: $json has no mutants: give a results/mutation.json" >&2; exit 2; }

# Results of tree $1 (a result without a revision is the full run's).
write() {
	mkdir -p "$2"
	{
		printf 'id\tcategory\tfile\tdetector\toutcome\texit\tseconds\twhat\n'
		jq -r --arg rev "$1" '.revision as $full | .mutants[] | . as $m |
			.detectors | to_entries[] | select((.value.revision // $full) == $rev) |
			[$m.id, $m.category, $m.file, .key, .value.outcome, "-",
			 (.value.seconds | tostring), $m.what] | @tsv' "$json"
	} >"$2/results.tsv.tmp"
	echo "$1" >"$2/revision"
	echo "recovered from $label$made by scripts/mutation-results-from-json.sh" >"$2/origin"
	mv "$2/results.tsv.tmp" "$2/results.tsv"
	args+=" $2/results.tsv"
}
args=""
write "$(jq -r '.revision' "$json")" "$dir"
n=0
while read -r rev; do
	n=$((n + 1))
	write "$rev" "$dir/rerun-$n"
done < <(jq -r '.reruns // [] | .[]' "$json")
echo "mutation-results-from-json: wrote the results of $((n + 1)) run(s); scripts/mutation-report.sh$args rebuilds $label"
