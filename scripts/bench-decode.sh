#!/usr/bin/env bash
# The headline (design.md §8) on this machine: tokens/s of a decode-shaped workload
# (`residctl bench decode`: each layer's f32 weights multiplied into a
# vector by 2 threads, a pass over every layer a token, every layer's output
# checked) for A (kernel mmap, the fastest madvise), C, D, E across budget
# ratios 0.25..0.75, 3 runs of each arm interleaved run by run with the
# device read alone (arm 'device'), each run in its own memory cgroup with
# the page cache emptied (root). Two layouts:
#   equal: 16 chunks of 16 MiB, 6 tokens;
#   model: `bench mkmodel --dtype F32` (8 layers, H 768, F 2048, V 8192:
#          unequal layers straddling pages), 6 tokens.
# About 25 minutes on a loaded 2-CPU machine. Writes:
#   results/bench-decode.csv  every run of both layouts
#   results/bench-decode.md   the tables
#   results/bench-decode.png  tokens/s against the budget ratio per arm
# Extra arguments go to both runs (e.g. --dir /mnt/disk, --reps 5).
# shellcheck source=scripts/lib/common.sh
. "$(dirname "$0")/lib/common.sh"
prologue gnuplot-nox
model=build/model-decode.safetensors
scratch "$model"

shape="--layers 8 --hidden 768 --ffn 2048 --vocab 8192"
load_before=$(load)
# shellcheck disable=SC2086 # the shape is a list of options
build/residctl bench mkmodel "$model" $shape --dtype F32 >"$tmp/mk"
build/residctl bench decode --chunk 16M --chunks 16 --passes 6 --reps 3 \
	--arms A,C,D,E,device --csv "$tmp/equal.csv" "$@" >"$tmp/equal.md"
build/residctl bench decode --table "$model" --passes 6 --reps 3 \
	--arms A,C,D,E,device --csv "$tmp/model.csv" "$@" >"$tmp/model.md"
load_after=$(load)
{ cat "$tmp/equal.csv"; tail -n +2 "$tmp/model.csv"; } >results/bench-decode.csv
{
	echo "# Tokens/s of a decode-shaped workload against the budget"
	echo
	echo "\`scripts/bench-decode.sh\` on $(machine), $(date -u '+%Y-%m-%d %H:%M UTC')."
	echo "Load average (1, 5, 15 min) before: $load_before; after: $load_after."
	echo "The model: \`residctl bench mkmodel $shape --dtype F32\`, $(cut -d' ' -f3 "$tmp/mk") bytes."
	echo
	echo "![tokens/s against the budget ratio](bench-decode.png)"
	echo
	cat "$tmp/equal.md" "$tmp/model.md"
} >results/bench-decode.md

# The plot: per layout a table "ratio, then median least most of A (the
# fastest madvise at each ratio), C, D, E", tokens/s from every run's wall.
table() { # layout
	awk -F, -v lay="$1" '
	NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
	$col["layout"] == lay && $col["wall_s_each"] != "" && $col["arm"] != "device" {
		g = $col["arm"] ~ /^A-/ ? "A" : $col["arm"]
		n = split($col["wall_s_each"], w, " ")
		for (i = 1; i <= n; i++) t[i] = $col["passes"] / w[i]
		for (i = 2; i <= n; i++)
			for (k = i; k > 1 && t[k - 1] > t[k]; k--) { x = t[k]; t[k] = t[k - 1]; t[k - 1] = x }
		r = $col["ratio"]; m = t[int(n / 2) + 1]
		if (!((g, r) in med) || m > med[g, r]) { med[g, r] = m; lo[g, r] = t[1]; hi[g, r] = t[n] }
		ratios[r] = 1
	}
	END {
		for (r in ratios) {
			printf "%s", r
			split("A C D E", arm, " ")
			for (i = 1; i <= 4; i++)
				printf " %s %s %s", med[arm[i], r], lo[arm[i], r], hi[arm[i], r]
			print ""
		}
	}' results/bench-decode.csv | sort -n
}
head='ratio "A: kernel mmap (fastest madvise)" lo hi "C: pager + lru" lo hi "D: pager + declared order" lo hi "E: D + prefetch" lo hi'
{ echo "$head"; table equal; } >"$tmp/equal.dat"
{ echo "$head"; table "$(basename "$model")"; } >"$tmp/model.dat"
plot results/bench-decode.png 1200 520 <<GP
set multiplot layout 1,2 title "Decode-shaped workload (f32 y = W x per layer, 2 threads): tokens/s against the budget; median of the runs, bars least..most"
set xlabel "budget ratio (of the file)"
set ylabel "tokens/s"
set key below maxrows 2
set grid
set xrange [0.2:0.8]
set yrange [0:*]
colours = "#1f77b4 #d62728 #2ca02c #ff7f0e"
arm(f) = sprintf("plot for [i=1:4] '%s' using 1:(column(3*i-1)):(column(3*i)):(column(3*i+1)) with yerrorlines lw 2 pt (i*2) lc rgb word(colours, i) title columnhead(3*i-1)", f)
set title "16 equal chunks of 16 MiB"
eval arm("$tmp/equal.dat")
set title "synthetic F32 safetensors model: 8 layers, unequal chunks"
eval arm("$tmp/model.dat")
unset multiplot
GP
# The section of results/performance.md: the tokens/s tables of both
# layouts.
tokens() { # title, the markdown of one run
	echo "$1:"
	echo
	awk '/^Tokens\/s/ { on = 1; next } on && /^\|/ { print; seen = 1; next } seen { exit }' "$2"
	echo
}
{
	echo "Measured $(date -u '+%Y-%m-%d %H:%M UTC'), load average $load_before before and $load_after after ([bench-decode.md](bench-decode.md), every run in [bench-decode.csv](bench-decode.csv)); tokens/s, median of 3 runs interleaved (least-most):"
	echo
	echo "![tokens/s against the budget ratio](bench-decode.png)"
	echo
	tokens "16 equal chunks of 16 MiB, 6 tokens a run" "$tmp/equal.md"
	tokens "the F32 model ($(cut -d' ' -f3 "$tmp/mk") bytes, unequal layers), 6 tokens a run" "$tmp/model.md"
} | bash scripts/perf-section.sh decode scripts/bench-decode.sh
echo "bench-decode: results/bench-decode.csv, results/bench-decode.md, results/bench-decode.png"
