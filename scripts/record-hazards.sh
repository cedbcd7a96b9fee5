#!/usr/bin/env bash
# The kernel's hands on A and B (residctl hazards), kernel by kernel, and
# the pager's verdict there (gate scenario H-1, the hands on a region),
# recorded in results/hazards.json (one object per kernel and hazard, and
# per kernel and H-1 leg) and as a section of results/kernels.md
# (docs/kernels.md, "The kernel's hands on A and B").
#   scripts/record-hazards.sh [MATRIX OPTIONS]  runs kernels/matrix.sh
#       --only-steps probe,hazards,gate --scenarios H-1 (default --cells: every kernel's
#       v2-root-swapoff cell, the cheapest) and residctl hazards on this
#       machine, and records both
#   --from DIR   records the cells of an earlier run's --out DIR instead
#   --host       with --from: this machine's run as well
#   --render     only rewrites the section of results/kernels.md
# The kernels run replace their rows, the others keep theirs; each row
# says its run. The exit status is the matrix's (or the host run's).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
json=results/hazards.json
md=results/kernels.md
title="## The kernel's hands on A and B"

# The section from results/hazards.json, in place of the old one (or last).
render() {
	[ -s "$json" ] || return 0
	local tmp kernels
	tmp=$(mktemp) || return 1
	kernels=$(jq -r '[.[] | select(.hazard) | {k: .kernel, n: .n}] | unique | sort_by(.n) | .[].k' "$json" | uniq)
	{
		awk -v t="$title" '$0 == t {skip = 1; next} skip && /^## / {skip = 0} !skip' "$md" 2>/dev/null
		echo "$title"
		echo
		echo "\`residctl hazards\` in one cell per kernel (\`kernels/matrix.sh --only-steps probe,hazards,gate --scenarios H-1\`) and on the development machine (\`host\`), recorded by \`scripts/record-hazards.sh\`; no pager code, each hazard a small program in a child under a time limit. A verdict compares the row with what 6.18 did (\`harness/hazards/hazards.def\`): \`=\` as measured on 6.18, \`differs\`, \`n/a\` (why in the rows below), \`hung\`. No setting of a kernel was changed: every collapse is \`MADV_COLLAPSE\`, which needs neither khugepaged nor \`shmem_enabled\`."
		echo
		echo "| kernel | release | where | run |"
		echo "|---|---|---|---|"
		jq -r 'map(select(.hazard)) | group_by(.kernel) | sort_by(.[0].n)[] | .[0] | "| \(.kernel) | \(.release) | \(.cell) | \(.run) |"' "$json"
		echo
		printf '| hazard |'
		for k in $kernels; do printf ' %s |' "$k"; done
		echo
		printf '|---|'
		for _ in $kernels; do printf -- '---|'; done
		echo
		jq -r --arg ks "$kernels" '($ks | split("\n")) as $ks | map(select(.hazard)) | group_by(.hazard) | sort_by(.[0].i)[] |
			. as $rows | "| \(.[0].hazard) | " + ([$ks[] as $k | ($rows | map(select(.kernel == $k)) | .[0].verdict // "-") |
			if startswith("as measured") then "=" else sub(":.*"; "") end] | join(" | ")) + " |"' "$json"
		echo
		echo "What each kernel did: the errno of the call (0: it succeeded), A's entries it dropped of those mapped, pages of A it mapped with zeros without a fault, a collapse refused or done, the fault the next touch raised, the rest."
		echo
		echo "| hazard | kernel | on | errno | dropped | zeros | collapse | fault | the rest | verdict |"
		echo "|---|---|---|---|---|---|---|---|---|---|"
		jq -r 'map(select(.hazard)) | sort_by(.i, .n)[] | "| \(.hazard) | \(.kernel) | \(.backing // "-" | if . == "" then "-" else . end) | \(.errno // "-") | \(if .of then "\(.dropped)/\(.of)" else "-" end) | \(.zeros // "-") | \(if .refused == null then "-" elif .refused then "refused" else "done" end) | \(if (.fault // "") == "" then "-" else .fault end) | \(.key | gsub("\\|"; "/"))\(if .note != "" and (.verdict | startswith("n/a") | not) then " (\(.note))" else "" end) | \(.verdict | gsub("\\|"; "/")) |"' "$json"
		echo
		echo "The pager's verdict on each kernel: gate scenario H-1 (T-3's storm while a thread advises the mapping and reads it again, after a prelude that drops entries of resident chunks; \`docs/storms.md\`) in the same cell, each leg's verdict and the refaults it served (PREEMPT_RT kernels have no THP: no huge legs)."
		echo
		echo "| kernel | leg | verdict | refaults served |"
		echo "|---|---|---|---|"
		jq -r 'map(select(.leg)) | sort_by(.n)[] | "| \(.kernel) | \(.leg) | \(.verdict) | \(.refaults_served) |"' "$json"
	} >"$tmp" && mv "$tmp" "$md"
}

# pager KERNEL N GATE_JSON: the H-1 rows of a cell's gate.
pager() {
	jq -c --arg k "$1" --argjson n "$2" '.scenarios[] | select(.id == "H-1") |
		{kernel: $k, n: $n, leg: "\(.backing), \(.chunks)", verdict: .verdict,
		 refaults_served: (.counters.refaults_served // 0)}' "$3"
}

# rows KERNEL N RELEASE WHERE FILE: the rows of one hazards.json.
rows() {
	jq -c --arg k "$1" --argjson n "$2" --arg rel "$3" --arg cell "$4" --arg run "$run" \
		'.hazards | to_entries[] | .value + {i: .key, kernel: $k, n: $n, release: $rel, cell: $cell, run: $run}' "$5"
}

rc=0 from="" host=0
case ${1:-} in
--render) render; exit $? ;;
--from)
	from=${2:-}
	[ -s "$from/cells.jsonl" ] || { echo "record-hazards: --from $from: no cells.jsonl there; give a --out directory of kernels/matrix.sh" >&2; exit 2; }
	[ "${3:-}" = --host ] && host=1
	run="scripts/record-hazards.sh --from $from ($(date -u +%Y-%m-%d))"
	;;
*)
	from=build/hazards-record host=1
	args=("$@")
	[[ " $* " == *" --cells "* ]] ||
		args+=(--cells "$(bash kernels/matrix.sh --list | awk '$2 ~ /-v2-root-swapoff$/ {print $2}' | paste -sd,)")
	run="scripts/record-hazards.sh${*:+ $*} ($(date -u +%Y-%m-%d))"
	bash kernels/matrix.sh --only-steps probe,hazards,gate --scenarios H-1 --out "$from" "${args[@]}"
	rc=$?
	;;
esac
new=$(mktemp) || exit 2
trap 'rm -f "$new"' EXIT
while read -r cell; do
	id=$(jq -r .id <<<"$cell")
	[ -s "$from/$id/hazards.json" ] || { echo "record-hazards: $id: no hazards.json ($(jq -r '.verdict + ": " + .reason' <<<"$cell"))" >&2; continue; }
	rows "$(jq -r .kernel <<<"$cell")" "$(jq -r .n <<<"$cell")" "$(jq -r '.release // "-"' <<<"$cell")" \
		"cell $id, $(jq -r .seconds <<<"$cell") s" "$from/$id/hazards.json" >>"$new"
	[ ! -s "$from/$id/gate.json" ] || pager "$(jq -r .kernel <<<"$cell")" "$(jq -r .n <<<"$cell")" "$from/$id/gate.json" >>"$new"
done < <(jq -c . "$from/cells.jsonl")
if [ $host = 1 ]; then
	make -s all || exit 2
	t0=$(date +%s)
	build/residctl hazards --json build/hazards-host.json || rc=$?
	rows host 999 "$(uname -r)" "this machine, $(id -un), build/residctl hazards, $(($(date +%s) - t0)) s" \
		build/hazards-host.json >>"$new"
	build/residctl check H-1 --json build/h1-host.json >/dev/null || rc=$?
	pager host 999 build/h1-host.json >>"$new"
fi
if [ ! -s "$new" ]; then
	echo "record-hazards: nothing to record" >&2
	[ "$rc" != 0 ] || rc=2
	exit "$rc"
fi
mkdir -p results
old=$(cat "$json" 2>/dev/null || echo '[]')
jq -s --argjson old "$old" '. as $new | ($old | map(select(.kernel as $k | $new | all(.kernel != $k)))) + $new | sort_by(.n, .i)' \
	"$new" >"$json.new" && mv "$json.new" "$json" || exit 2
render || exit 2
echo "record-hazards: $json, $md ($title)"
exit "$rc"
