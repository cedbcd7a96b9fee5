#!/usr/bin/env bash
# One change's effect on the fetch, measured side by side (root: memory
# cgroups; a few minutes): this tree and the commit REV, each built in its
# own tree, run arm D of bench arms at budget ratio 0.5 alternately, RUNS
# times each (default 5): 16 chunks of 8 MiB, 8 passes, and 8 chunks of
# 128 MiB, 4 passes; then bench fetch's modes ahead (the 4 KiB path) and
# huge-ahead (huge folios in B) at 8 and 128 MiB chunks, one rep a run.
# Alternating runs share the machine's moments, so the ratio of the
# medians holds where a run's own time swings with the load.
# Writes results/bench-ab.md (or $AB_OUT).
#   usage: scripts/bench-ab.sh REV [RUNS]
# shellcheck source=scripts/lib/common.sh
. "$(dirname "$0")/lib/common.sh"
usage="usage: scripts/bench-ab.sh REV [RUNS]   (e.g. scripts/bench-ab.sh HEAD~3 5)"
case "${1:-}" in -h | --help) echo "$usage"; exit 0 ;; esac
{ [ $# -ge 1 ] && [ $# -le 2 ]; } || { echo "$usage" >&2; exit 2; }
rev=$1 runs=${2:-5}
git rev-parse --verify -q "$rev^{commit}" >/dev/null ||
	{ echo "bench-ab: $rev is not a commit here: give a commit, branch or tag" >&2; exit 2; }
[[ $runs =~ ^[1-9][0-9]?$ ]] ||
	{ echo "bench-ab: RUNS $runs is not a count from 1 to 99" >&2; exit 2; }
out=${AB_OUT:-results/bench-ab.md}
bash scripts/deps.sh
tmp=$(mktemp -d)
old="$tmp/old"
trap 'git worktree remove --force "$old" 2>/dev/null; rm -rf "$tmp"' EXIT
git worktree add -q --detach "$old" "$rev"
echo "bench-ab: building $rev and this tree" >&2
make -s -C "$old" all >/dev/null
make -s all >/dev/null
here="this tree ($(git rev-parse --short HEAD)$(git diff --quiet HEAD -- pager harness tool storms || echo ', changed'))"

# bench fetch's modes both builds have (an older REV may lack the huge
# ones, or --modes itself: then no fetch table).
modes=ahead,huge-ahead
fetch_help=$("$old/build/residctl" bench fetch --help 2>&1)
if ! grep -q -- --modes <<<"$fetch_help"; then
	modes=
elif ! grep -q huge-ahead <<<"$fetch_help"; then
	modes=ahead
fi
sizes=("8M 16 8" "128M 8 4")
for ((i = 1; i <= runs; i++)); do
	for s in "${sizes[@]}"; do
		read -r chunk n passes <<<"$s"
		for side in old new; do
			bin=build/residctl
			[ $side = old ] && bin="$old/build/residctl"
			echo "bench-ab: run $i of $runs, $chunk chunks, $side" >&2
			"$bin" bench arms --chunk "$chunk" --chunks "$n" --passes "$passes" \
				--ratios 0.5 --arms D --csv "$tmp/$side-$chunk-$i.csv" >/dev/null
		done
	done
	for side in old new; do
		[ -n "$modes" ] || break
		bin=build/residctl
		[ $side = old ] && bin="$old/build/residctl"
		echo "bench-ab: run $i of $runs, bench fetch, $side" >&2
		"$bin" bench fetch --sizes 8M,128M --reps 1 --modes "$modes" \
			--csv "$tmp/fetch-$side-$i.csv" >/dev/null
	done
done

# Per side and size: wall, fetch and read rates of each run.
rows() { # side chunk
	for ((i = 1; i <= runs; i++)); do
		awk -F, -v side="$1" 'NR == 1 { for (k = 1; k <= NF; k++) c[$k] = k; next }
			$c["arm"] == "D" {
				mib = $c["pager_fetch_bytes"] / 1048576
				printf "%s %s %.3f %.0f %.0f %.0f\n", side, $c["chunk_bytes"] / 1048576, $c["wall_s"], mib / ($c["fetch_ns"] / 1e9), mib / ($c["read_ns"] / 1e9), $c["bytes_read"] / 1048576
			}' "$tmp/$1-$2-$i.csv"
	done
}
for s in "${sizes[@]}"; do
	read -r chunk _ <<<"$s"
	rows old "$chunk"
	rows new "$chunk"
done >"$tmp/all.txt"

# med FILE COLUMN KEY..: the median of COLUMN over the lines of FILE whose
# first fields are the KEYs.
med() {
	local f=$1 col=$2
	shift 2
	awk -v col="$col" -v keys="$*" 'BEGIN { n = split(keys, k, " ") }
		{ for (i = 1; i <= n; i++) if ($i != k[i]) next; print $col }' "$f" |
		sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}
{
	echo "# One change, side by side"
	echo
	echo "\`scripts/bench-ab.sh $rev $runs\` on $(machine), $(date -u '+%Y-%m-%d %H:%M UTC'), load average $(load) at the end."
	echo "Arm D of \`bench arms\` at budget ratio 0.5, $runs runs of each build,"
	echo "alternating: old is $rev ($(git rev-parse --short "$rev")), new is $here."
	echo "Medians; fetch MiB/s is the pager's fetch_bytes over its fetches' own"
	echo "time, read MiB/s over the read phase (the reads and the writes into"
	echo "the memfd)."
	echo
	echo "| chunk MiB | wall s, old | wall s, new | new / old | fetch MiB/s, old | new | new / old | read MiB/s, old | new |"
	echo "|---|---|---|---|---|---|---|---|---|"
	for size in 8 128; do
		wo=$(med "$tmp/all.txt" 3 old $size) wn=$(med "$tmp/all.txt" 3 new $size)
		fo=$(med "$tmp/all.txt" 4 old $size) fn=$(med "$tmp/all.txt" 4 new $size)
		ro=$(med "$tmp/all.txt" 5 old $size) rn=$(med "$tmp/all.txt" 5 new $size)
		awk -v s=$size -v wo="$wo" -v wn="$wn" -v fo="$fo" -v fn="$fn" -v ro="$ro" -v rn="$rn" \
			'BEGIN { printf "| %s | %.2f | %.2f | %.3f | %d | %d | %.3f | %d | %d |\n", s, wo, wn, wn / wo, fo, fn, fn / fo, ro, rn }'
	done
	echo
	if [ -z "$modes" ]; then
		echo "\`bench fetch\` of $rev has no --modes: not compared."
		echo
	else
		echo "\`bench fetch\`, MiB/s of a fetch as the application sees it (median"
		echo "of the runs) and the wait for a chunk's first byte, ms:"
		echo
		echo "| chunk MiB | mode | MiB/s, old | new | new / old | first byte ms, old | new |"
		echo "|---|---|---|---|---|---|---|"
		for side in old new; do
			for ((i = 1; i <= runs; i++)); do
				awk -F, -v side=$side 'NR == 1 { for (k = 1; k <= NF; k++) c[$k] = k; next }
					{ printf "%s %d %s %s %.2f\n", side, $c["chunk_bytes"] / 1048576, $c["mode"], $c["mib_s"], $c["first_byte_ns"] / 1e6 }' \
					"$tmp/fetch-$side-$i.csv"
			done
		done >"$tmp/fetch.txt"
		for size in 8 128; do
			for mode in ${modes//,/ }; do
				awk -v z=$size -v m="$mode" -v o="$(med "$tmp/fetch.txt" 4 old $size "$mode")" -v n="$(med "$tmp/fetch.txt" 4 new $size "$mode")" \
					-v fo="$(med "$tmp/fetch.txt" 5 old $size "$mode")" -v fn="$(med "$tmp/fetch.txt" 5 new $size "$mode")" \
					'BEGIN { printf "| %s | %s | %.0f | %.0f | %.3f | %.2f | %.2f |\n", z, m, o, n, n / o, fo, fn }'
			done
		done
		echo
	fi
	echo "Every run (side, chunk MiB, wall s, fetch MiB/s, read MiB/s, MiB read from the disk):"
	echo
	echo '```'
	cat "$tmp/all.txt"
	echo '```'
} >"$out"
echo "bench-ab: $out"
