#!/usr/bin/env bash
# The arms of design.md §8 on the synthetic cyclic layer scan, the default sweep
# (a few minutes on a 2-core machine; root: memory cgroups):
#   results/bench-arms.csv  every run of both chunk sizes
#   results/bench-arms.md   the tables
#   results/bench-arms.png  bytes read against budget ratio, every arm
# 8 MiB chunks: 16 chunks, 8 passes, arms A-seq, A-random, C, D, E, D-ahead.
# 128 MiB chunks: 8 chunks, 4 passes, arms A-seq, C, D, E. A-random faults
# 4 KiB at a time (about 50 s a run at this size): FULL=1 adds it.
# Extra arguments go to both runs (e.g. --dir /mnt/disk, --threads 2).
# shellcheck source=scripts/lib/common.sh
. "$(dirname "$0")/lib/common.sh"
prologue gnuplot-nox
scratch

big_arms=A-seq,C,D,E
[ "${FULL:-0}" = 1 ] && big_arms=A-seq,A-random,C,D,E
build/residctl bench arms --chunk 8M --chunks 16 --passes 8 \
	--arms A,C,D,E,D-ahead --csv "$tmp/8.csv" "$@" >"$tmp/8.md"
build/residctl bench arms --chunk 128M --chunks 8 --passes 4 \
	--arms "$big_arms" --csv "$tmp/128.csv" "$@" >"$tmp/128.md"

{ cat "$tmp/8.csv"; tail -n +2 "$tmp/128.csv"; } >results/bench-arms.csv
{
	echo "# Arms on the synthetic cyclic layer scan"
	echo
	echo "\`scripts/bench-arms.sh\` on $(machine), $(date -u +%Y-%m-%d)."
	echo "Bytes read are unaffected by other load on the machine; wall"
	echo "times are not (it is shared)."
	echo
	cat "$tmp/8.md" "$tmp/128.md"
} >results/bench-arms.md

# The plot: one panel per chunk size, MiB read against the budget ratio.
# Fixed styles, so an arm looks the same in both panels; the references
# first, wide and dashed, so that D drawn over them stays visible where they
# coincide (on equal chunks the bound, FNU and the exact optimum agree).
declare -A style=(
	[bound]='lc rgb "black" dt 2 lw 4 pt 0' [FNU]='lc rgb "#555555" dt 3 lw 3 pt 0'
	[exact]='lc rgb "#aaaaaa" dt 4 lw 2 pt 0'
	[A-seq]='lc rgb "#1f77b4" pt 4' [A-random]='lc rgb "#17becf" pt 6'
	[A-normal]='lc rgb "#7f7f7f" pt 8' [C]='lc rgb "#d62728" pt 2'
	[D]='lc rgb "#2ca02c" pt 7' [E]='lc rgb "#ff7f0e" pt 5'
	[D-ahead]='lc rgb "#9467bd" pt 9'
)
refs="bound FNU exact"
arms="$refs $(awk -F, -v refs=" $refs " 'NR > 1 && index(refs, " " $7 " ") == 0 && !seen[$7]++ { printf "%s ", $7 }' results/bench-arms.csv)"
for size in 8388608 134217728; do
	for arm in $arms; do
		awk -F, -v s="$size" -v a="$arm" \
			'$1 == s && $7 == a { print $5, $8 / 1048576 }' \
			results/bench-arms.csv >"$tmp/$size-$arm.dat"
	done
done
plots() { # chunk size: one "plot" clause per arm that ran at that size
	local sep=""
	for arm in $arms; do
		[ -s "$tmp/$1-$arm.dat" ] || continue
		printf '%s"%s" using 1:2 with linespoints %s title "%s"' "$sep" \
			"$tmp/$1-$arm.dat" "${style[$arm]:-}" "$arm"
		sep=", "
	done
}
plot results/bench-arms.png 1200 500 <<GP
set multiplot layout 1,2 title "Bytes read from the disk against the budget (ratio of the file), cyclic layer scan; D lies on the optimum"
set xlabel "budget ratio"
set ylabel "MiB read"
set key top right
set grid
set title "16 chunks of 8 MiB, 8 passes"
plot $(plots 8388608)
set title "8 chunks of 128 MiB, 4 passes"
plot $(plots 134217728)
unset multiplot
GP
echo "bench-arms: results/bench-arms.csv, results/bench-arms.md, results/bench-arms.png"
