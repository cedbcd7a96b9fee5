#!/usr/bin/env bash
# Eviction that overlaps consumption, side by side in one
# run: A (mmap), D, E (D + prefetch) and E-overlap (E with overlap_evict,
# the scan announcing its progress through each chunk), interleaved run by
# run, 3 repetitions, on the cyclic scan at ratio 0.5:
#   results/bench-overlap.md   the bench's tables, then the wall-time
#                              ratios E-overlap / D and E-overlap / A
#   results/bench-overlap.csv  every run
# 8 MiB chunks (16, 8 passes); BIG=1 adds 128 MiB chunks (8, 4 passes).
# Extra arguments go to every run (e.g. --dir /mnt/disk, --reps 5).
# shellcheck source=scripts/lib/common.sh
. "$(dirname "$0")/lib/common.sh"
prologue
scratch

sizes="8M:16:8"
[ "${BIG:-0}" = 1 ] && sizes="$sizes 128M:8:4"
first=1
for s in $sizes; do
	IFS=: read -r chunk n passes <<<"$s"
	build/residctl bench arms --chunk "$chunk" --chunks "$n" \
		--passes "$passes" --ratios 0.5 --arms A,D,E,E-overlap,device \
		--reps 3 --csv "$tmp/$chunk.csv" "$@" >"$tmp/$chunk.md"
	if [ $first = 1 ]; then
		cp "$tmp/$chunk.csv" "$tmp/all.csv"
		first=0
	else
		tail -n +2 "$tmp/$chunk.csv" >>"$tmp/all.csv"
	fi
done
cp "$tmp/all.csv" results/bench-overlap.csv

# The ratios of the medians, per chunk size, from the wall-time table the
# bench prints (its columns: ratio, A (fastest), D, E, E-overlap, ...).
ratios() {
	awk -F'|' '/^\| ratio \| A \(fastest\)/ { t = 1; next }
		t && /^\|---/ { next }
		t && /^\| [0-9]/ {
			a = $3 + 0; d = $4 + 0; e = $5 + 0; o = $6 + 0
			printf "| %s | %.2f | %.2f | %.2f | %.2f | %.3f | %.3f | %.3f |\n", \
				$2, a, d, e, o, o / d, o / e, o / a
			t = 0 }' "$1"
}
{
	echo "# Eviction that overlaps consumption"
	echo
	echo "\`scripts/bench-overlap.sh\` on $(machine)," \
		"$(date -u '+%Y-%m-%d %H:%M') UTC, load average" \
		"$(load). Wall times are medians of 3" \
		"runs per arm, the arms interleaved run by run; bytes read are" \
		"in the tables below (E-overlap must read what D and Belady do)."
	echo
	echo "| chunk | ratio | A s | D s | E s | E-overlap s | E-overlap / D | E-overlap / E | E-overlap / A |"
	echo "|---|---|---|---|---|---|---|---|---|"
	for s in $sizes; do
		chunk=${s%%:*}
		ratios "$tmp/$chunk.md" | sed "s/^| /| $chunk | /"
	done
	echo
	for s in $sizes; do
		cat "$tmp/${s%%:*}.md"
		echo
	done
} >results/bench-overlap.md
echo "bench-overlap: results/bench-overlap.md"
