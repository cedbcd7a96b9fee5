#!/usr/bin/env bash
# The tables, the figure and the targets of scripts/bench-engine.sh from its
# CSV: results/bench-engine.md, results/bench-engine.png and the 'engine'
# section of results/performance.md. Usage: bench-engine-report.sh CSV
# FETCH_CSV FILE_BYTES IDS HASH SECONDS (bench-engine.sh calls it; rerun it alone on
# a CSV to redraw).
# shellcheck source=scripts/lib/common.sh
. "$(dirname "$0")/lib/common.sh"
csv=$1 fcsv=$2 bytes=$3 ids=$4 hash=$5 secs=$6
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Medians per class, ratio and arm (A: per advice; a cell's A is its best
# advice's median). Columns: class ratio arm advice median min max
# MiB-a-token OPT-MiB-a-token runs same-everywhere device-MB/s.
tail -n +2 "$csv" | sort -t, -k2,2 -k4,4n -k5,5 -k6,6 -k9,9g | awk -F, '
	function flush() {
		if (n == 0) return
		m = n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
		printf "%s %s %s %s %.3f %.3f %.3f %.0f %s %d %s %.0f\n", c, r, a, adv, m, v[1], v[n],
			rb / n / 1048576, opt == "" ? "-" : sprintf("%.0f", opt / 1048576), n, same, dev / n
		n = 0; rb = 0; opt = ""; same = "yes"; dev = 0
	}
	BEGIN { same = "yes" }
	{ k = $2 " " $4 " " $5 " " $6 }
	k != key { flush(); key = k; c = $2; r = $4; a = $5; adv = $6 == "" ? "-" : $6 }
	{ v[++n] = $9; rb += $12; dev += $3; if ($13 != "") opt = $13; if ($16 != "yes") same = "no" }
	END { flush() }' >"$tmp/cells"
# The best A per class and ratio.
awk '$3 == "A" { k = $1 " " $2; if (!(k in best) || $5 > best[k]) { best[k] = $5; line[k] = $0 } }
	$3 != "A" { print }
	END { for (k in line) { $0 = line[k]; $3 = "A"; print } }' "$tmp/cells" |
	sort -k1,1 -k2,2n -k3,3 >"$tmp/best"

classes=$(cut -d' ' -f1 "$tmp/best" | awk '!seen[$0]++')
{
	echo "# The real engine against the budget, per device class"
	echo
	echo "Made by \`scripts/bench-engine.sh\` on $(date -u +%Y-%m-%d), $(machine), load $(load) at the end; $secs s in all."
	echo "The model: the qwen2.5-3b preset of \`residctl bench mkgguf\`, $bytes bytes; llama.cpp through"
	echo "\`build/engine/llama-driver\`. Every run in [bench-engine.csv](bench-engine.csv); a cell is the"
	echo "median of its runs (least-most) of tokens/s decoding: the steps after the prompt's over their time. Under an unlimited mmap: ids \`$ids\`, logits hash \`$hash\`;"
	echo "*same* says whether every run of the cell gave both. MiB a token is read_bytes over the tokens (the prompt's cold pass is one of them);"
	echo "OPT is furthest-next-use over the engine's chunk references (run --trace at the ratio) at the budget."
	echo
	echo "| class | device MB/s | ratio | arm | advice | tokens/s decoding | least-most | MiB a token | OPT MiB a token | runs | same |"
	echo "|---|---|---|---|---|---|---|---|---|---|---|"
	awk '{ printf "| %s | %s | %s | %s | %s | %.3f | %.3f-%.3f | %s | %s | %s | %s |\n", $1, $12, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11 }' "$tmp/cells"
	echo
	echo "Rerun: \`scripts/bench-engine.sh\` (root); redraw: \`scripts/bench-engine-report.sh\`."
} >results/bench-engine.md

# The figure: a panel a class, an arm a line.
n=$(wc -w <<<"$classes")
{
	echo "set multiplot layout 1,$n"
	echo "set xlabel 'budget (share of the model)'; set ylabel 'tokens/s (decoding)'; set key top left; set grid"
	echo "set xrange [0.2:0.95]; set logscale y; set yrange [0.1:*]"
	for c in $classes; do
		echo "set title '$c'"
		printf "plot"
		sep=""
		for a in A C D E; do
			awk -v c="$c" -v a="$a" '$1 == c && $3 == a' "$tmp/best" >"$tmp/best.$c.$a"
			[ -s "$tmp/best.$c.$a" ] || continue
			printf "%s '%s' using 2:5:6:7 with yerrorlines title '%s'" "$sep" "$tmp/best.$c.$a" "$a"
			sep=","
		done
		echo
	done
	echo "unset multiplot"
} | plot results/bench-engine.png $((420 * n)) 380

# The targets. cell CLASS RATIO ARM: that cell's median tokens/s.
cell() { awk -v c="$1" -v r="$2" -v a="$3" '$1 == c && $2 == r && $3 == a { print $5 }' "$tmp/best"; }
best_pager() { for a in C D E; do cell "$1" "$2" "$a"; done | sort -g | tail -n1; }
ratio_of() { awk -v x="$1" -v y="$2" 'BEGIN { if (x == "" || y == "" || y == 0) print "-"; else printf "%.2f", x / y }'; }
met() { awk -v x="$1" -v t="$2" 'BEGIN { print (x != "-" && x >= t) ? "met" : "not met" }'; }
{
	echo "Measured $(date -u '+%Y-%m-%d %H:%M') UTC by \`scripts/bench-engine.sh\`, load $(load) at the end ([bench-engine.md](bench-engine.md), figure [bench-engine.png](bench-engine.png)):"
	echo
	echo "| target | measured | |"
	echo "|---|---|---|"
	for t in "sata 0.75 3.5" "nvme3 0.75 2.5" "sata 0.25 1.2" "nvme3 0.25 1.2"; do
		read -r c r want <<<"$t"
		x=$(ratio_of "$(best_pager "$c" "$r")" "$(cell "$c" "$r" A)")
		echo "| best pager arm ≥ $want × A at $r on $c | $x × (best $(best_pager "$c" "$r"), A $(cell "$c" "$r" A) tokens/s) | $(met "$x" "$want") |"
	done
	for c in $classes; do
		ds=$(awk -v c="$c" '$1 == c && $3 == "D" { printf "%s%.3f", s, $5; s = " -> " }' "$tmp/best")
		rise=$(awk -v c="$c" '$1 == c && $3 == "D" { if (p != "" && $5 < 1.10 * p) bad = 1; p = $5 } END { print bad ? "not met" : "met" }' "$tmp/best")
		echo "| D rises ≥ 10 % at every step on $c | $ds | $rise |"
		flat=$(awk -v c="$c" '$1 == c && $3 == "A" { v[++n] = $5; s += $5 }
			END { m = s / n; for (i = 1; i <= n; i++) { d = (v[i] - m) / m; if (d < 0) d = -d; if (d > w) w = d }
			printf "%.0f %% (mean %.3f)|%s", 100 * w, m, w <= 0.25 ? "met" : "not met" }' "$tmp/best")
		echo "| A within ±25 % of its mean on $c | widest ${flat%|*} | ${flat#*|} |"
		opt=$(awk -v c="$c" '$1 == c && $3 == "D" && $9 != "-" { x = $8 / $9; printf "%s%.2f", s, x; s = ", "; if (x > w) w = x }
			END { printf "|%s", w <= 1.10 ? "met" : "not met" }' "$tmp/best")
		echo "| D's bytes a token ≤ 1.10 × OPT's on $c | ${opt%|*} (by ratio) | ${opt#*|} |"
	done
	# The fetch: each pager mode's median MiB/s over the device's, per
	# class and chunk size (columns by name: the CSV grows at its end).
	awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		{ k = $col["device_class"] " " $col["chunk_bytes"] / 1048576 " " $col["mode"]; print k, $col["mib_s"] }' "$fcsv" |
		sort -k1,1 -k2,2n -k3,3 -k4,4g | awk '
		function flush() { if (n) med[key] = n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2; n = 0 }
		{ k = $1 " " $2 " " $3; if (k != key) { flush(); key = k } v[++n] = $4 }
		END {
			flush()
			for (k in med) {
				split(k, p, " ")
				if (p[3] == "device") continue
				d = med[p[1] " " p[2] " device"]
				if (d > 0) printf "%s %s %s %.1f %.0f %.0f\n", p[1], p[2], p[3], 100 * med[k] / d, med[k], d
			}
		}' | sort -k1,1 -k2,2n -k3,3 | while read -r c mib mode pct got dev; do
		echo "| the pager's fetch ≥ 85 % of the device on $c, $mib MiB chunks, $mode | $pct % ($got of $dev MiB/s, medians) | $(met "$pct" 85) |"
	done
} | bash scripts/perf-section.sh engine scripts/bench-engine.sh
