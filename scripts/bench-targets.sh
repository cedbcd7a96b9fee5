#!/usr/bin/env bash
# Issue 14's time targets, side by side in one run (root: memory cgroups;
# 6 minutes on an idle 2-CPU machine, 15 or more when it is loaded):
#   1. the arms at budget ratio 0.5, each run 3 times, interleaved run by
#      run: 16 chunks of 8 MiB, 8 passes (A-seq, A-random, D, D-whole, E)
#      and 8 chunks of 128 MiB, 4 passes (A-seq, D, D-whole, E), with the
#      device's limit measured by fio on the same file before and after
#      each sweep (bench arms --device);
#   2. D at budget ratio 1 (the file fits): the work of a visit to a
#      resident chunk, for the floor of D's wall a whole-chunk pager has;
#   3. the fault's wait on a predicted chunk against the read, 8 and
#      128 MiB chunks (bench fetch, mode ahead).
# Writes:
#   results/bench-targets.md              the targets, then the tables
#   results/bench-targets-arms.csv        every arm run of both sizes
#   results/bench-targets-fetch.csv       every fetch run
#   results/performance.md                its targets section, between the
#                                         "targets:" markers
# Extra arguments go to every residctl run (e.g. --dir /mnt/disk).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh fio
make -s all
mkdir -p results
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
build/residctl bench arms --chunk 8M --chunks 16 --passes 8 --ratios 0.5 \
	--arms A,D,D-whole,E --reps 3 --device --csv "$tmp/a8.csv" "$@" \
	>"$tmp/a8.md"
build/residctl bench arms --chunk 128M --chunks 8 --passes 4 --ratios 0.5 \
	--arms A-seq,D,D-whole,E --reps 3 --device --csv "$tmp/a128.csv" "$@" \
	>"$tmp/a128.md"
# The scan's own work: D with a budget that holds the file, each chunk
# fetched once, every later pass a hit.
build/residctl bench arms --chunk 8M --chunks 16 --passes 8 --ratios 1.0 \
	--arms D --reps 3 --csv "$tmp/w8.csv" "$@" >/dev/null
build/residctl bench arms --chunk 128M --chunks 8 --passes 4 --ratios 1.0 \
	--arms D --reps 3 --csv "$tmp/w128.csv" "$@" >/dev/null
build/residctl bench fetch --sizes 8M,128M --reps 3 \
	--csv results/bench-targets-fetch.csv "$@" >"$tmp/f.md"
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
{ cat "$tmp/a8.csv"; for f in a128 w8 w128; do tail -n +2 "$tmp/$f.csv"; done; } \
	>results/bench-targets-arms.csv

# The targets table from the CSV of the arms (columns by name) and the
# wait table of bench fetch.
targets() {
	awk -F, '
	NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
	{
		s = $col["chunk_bytes"] / 1048576; a = $col["arm"]
		w = $col["wall_s"]
		visits[s] = $col["chunks"] * $col["passes"]
		# Ratio 1: the work of one visit to a resident chunk, from
		# the passes after the first (wall less the fetches).
		if ($col["ratio"] + 0 == 1) {
			if (a == "D")
				work[s] = (w - $col["fetch_ns"] / 1e9) / (visits[s] - $col["chunks"])
			next
		}
		if (a ~ /^A-/ && (!(s in A) || w < A[s])) { A[s] = w; An[s] = a }
		if (a == "D" || a == "D-whole" || a == "E") {
			W[s, a] = w; B[s, a] = $col["bytes_read"]
			F[s, a] = $col["pager_fetch_bytes"] / 1048576 / ($col["fetch_ns"] / 1e9)
			R[s, a] = $col["pager_fetch_bytes"] / 1048576 / ($col["read_ns"] / 1e9)
		}
		if (a == "FNU") fnu[s] = $col["bytes_read"]
		dev[s] = $col["device_mibps"]
		sizes[s] = 1
	}
	function met(x) { return x ? "met" : "not met" }
	END {
		for (s = 8; s <= 128; s *= 16) {
			if (!(s in sizes)) continue
			r = W[s, "D"] / A[s]
			printf "| D wall <= 0.7 x A, %d MiB chunks, ratio 0.5 | D %.2f s, %s %.2f s: **%.2f x** (D-whole %.2f x, E %.2f x); D read %.0f MiB, Belady %.0f | %s |\n", s, W[s, "D"], An[s], A[s], r, W[s, "D-whole"] / A[s], W[s, "E"] / A[s], B[s, "D"] / 1048576, fnu[s] / 1048576, met(r <= 0.7) (B[s, "D"] == fnu[s] ? "" : "; D bytes != Belady")
		}
		for (s = 8; s <= 128; s *= 16) {
			if (!(s in sizes)) continue
			q = F[s, "D"] / dev[s]
			printf "| fetch >= 90 %% of the device, %d MiB chunks | D: %.0f MiB/s per fetch (reads alone %.0f), fio best %.0f MiB/s: **%.1f %%** (D-whole %.1f %%) | %s |\n", s, F[s, "D"], R[s, "D"], dev[s], 100 * q, 100 * F[s, "D-whole"] / dev[s], met(q >= 0.9)
		}
		# What a pager that fetches whole chunks can reach: hits cost
		# their work, a miss its fetch or its work, whichever is longer
		# (the pieces overlap the two), at the device rate and at D'"'"'s.
		for (s = 8; s <= 128; s *= 16) {
			if (!(s in work)) continue
			m = B[s, "D"] / 1048576 / s; h = visits[s] - m
			dv = s / dev[s]; dv = dv > work[s] ? dv : work[s]
			df = s / F[s, "D"]; df = df > work[s] ? df : work[s]
			lo = h * work[s] + m * dv; pd = h * work[s] + m * df
			printf "| (the floor of D wall / A, %d MiB chunks) | a visit'"'"'s work %.2f ms (ratio 1); %d hits, %.0f misses: at the device'"'"'s rate **%.2f s = %.2f x A**; at D'"'"'s fetch rate %.2f s = %.2f x A (D took %.2f s) | %s |\n", s, 1000 * work[s], h, m, lo, lo / A[s], pd, pd / A[s], W[s, "D"], (lo / A[s] <= 0.7 ? "reachable" : "out of reach")
		}
	}' results/bench-targets-arms.csv
	awk -F'|' '
	/^The fault.s wait/ { on = 1; next }
	on && /^\| [0-9]/ {
		gsub(/ /, "")
		printf "| fault wait on a predicted chunk <= 1.1 x the read, %s MiB | whole chunk %s ms, plain read %s ms: **%s x**; against the pager'"'"'s own read phase %s x; first byte %s ms | %s |\n", $2, $4, $3, $7, $8, $5, ($7 + 0 <= 1.1 ? "met" : "not met")
	}
	on && /^$/ && seen++ { on = 0 }' "$tmp/f.md"
}

{
	echo "# Issue 14's time targets, side by side"
	echo
	echo "\`scripts/bench-targets.sh\` on $(uname -r), $(nproc) CPUs, $(date -u '+%Y-%m-%d %H:%M UTC')."
	echo "Load average (1, 5, 15 min) before: $load_before; after: $load_after."
	echo "Wall times are medians of 3 runs per arm, the arms interleaved run by"
	echo "run; fio ran on the same file before and after each sweep."
	echo
	echo "| target | measured | |"
	echo "|---|---|---|"
	targets
	echo
	cat "$tmp/a8.md" "$tmp/a128.md" "$tmp/f.md"
} >results/bench-targets.md

# The section of results/performance.md between its markers.
{
	echo "<!-- targets: written by scripts/bench-targets.sh -->"
	echo "Measured $(date -u '+%Y-%m-%d %H:%M UTC'), load average $load_before before and $load_after after ([bench-targets.md](bench-targets.md)):"
	echo
	echo "| target | measured | |"
	echo "|---|---|---|"
	targets
	echo "<!-- /targets -->"
} | bash scripts/section.sh targets results/performance.md
echo "bench-targets: results/bench-targets.md, results/bench-targets-{arms,fetch}.csv, results/performance.md"
