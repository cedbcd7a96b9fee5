#!/usr/bin/env bash
# The time targets (wall, fetch rate, tokens/s), side by side in one run (root:
# memory cgroups; 12 minutes on an idle 2-CPU machine, 25 or more when it
# is loaded):
#   1. the arms at budget ratio 0.5, each run 3 times, interleaved run by
#      run: 16 chunks of 8 MiB, 8 passes (A-seq, A-random, D, D-whole, E,
#      E-overlap) and 8 chunks of 128 MiB, 4 passes (A-seq, D, D-whole, E,
#      E-overlap: eviction that overlaps consumption), both
#      with D-huge and E-overlap-huge (B in huge folios) where
#      the kernel has shmem THP, each with
#      the arm 'device' (the file read alone with O_DIRECT) in the same
#      rotation, and fio on the same file before and after each sweep
#      (bench arms --device);
#   2. D and A-seq at budget ratio 1 (the file fits): the work of a visit to a
#      resident chunk, for the floor of D's wall a whole-chunk pager has;
#   3. the fault's wait on a predicted chunk against the read, 8 and
#      128 MiB chunks (bench fetch, mode ahead);
#   4. the decode workload (bench decode: 16 chunks of 16 MiB, 6 tokens,
#      2 threads) at ratios 0.25, 0.5, 0.75, A, C, D, E and 'device', 3
#      runs interleaved.
# Writes:
#   results/bench-targets.md              the targets, then the tables
#   results/bench-targets-arms.csv        every arm run of both sizes
#   results/bench-targets-fetch.csv       every fetch run
#   results/bench-targets-decode.csv      every decode run
#   results/performance.md                its targets section, between the
#                                         "targets:" markers
# Extra arguments go to every residctl run (e.g. --dir /mnt/disk).
# --report: the tables again from the last run's files in results/, nothing
# measured.
# shellcheck source=scripts/lib/common.sh
. "$(dirname "$0")/lib/common.sh"
mkdir -p results
scratch

if [ "${1:-}" = --report ]; then
	# The tables again from the last run's CSVs and tables in results/
	# (after a change to this script's arithmetic); nothing is measured.
	when=$(sed -n '3s/.* CPUs, \(.*\)\.$/\1/p' results/bench-targets.md)
	load_before=$(sed -n 's/^Load average.*before: \(.*\); after.*/\1/p' results/bench-targets.md)
	load_after=$(sed -n 's/^Load average.*; after: \(.*\)\.$/\1/p' results/bench-targets.md)
	awk 'on; seen && /^$/ { on = 1 } /^\| target \|/ { seen = 1 }' \
		results/bench-targets.md >"$tmp/tables.md"
	cp "$tmp/tables.md" "$tmp/f.md"
else
	bash scripts/deps.sh fio
	make -s all
	when=$(date -u '+%Y-%m-%d %H:%M UTC')
	load_before=$(load)
	huge=,D-huge,E-overlap-huge
	if [ ! -e /sys/kernel/mm/transparent_hugepage/shmem_enabled ]; then
		echo "bench-targets: no shmem THP in this kernel: no huge arms" >&2
		huge=
	fi
	build/residctl bench arms --chunk 8M --chunks 16 --passes 8 --ratios 0.5 \
		--arms A,D,D-whole,E,E-overlap$huge,device --reps 3 --device --csv "$tmp/a8.csv" "$@" \
		>"$tmp/a8.md"
	build/residctl bench arms --chunk 128M --chunks 8 --passes 4 --ratios 0.5 \
		--arms A-seq,D,D-whole,E,E-overlap$huge,device --reps 3 --device --csv "$tmp/a128.csv" \
		"$@" >"$tmp/a128.md"
	# The scan's own work: D with a budget that holds the file, each chunk
	# fetched once, every later pass a hit.
	build/residctl bench arms --chunk 8M --chunks 16 --passes 8 --ratios 1.0 \
		--arms A-seq,D --reps 3 --csv "$tmp/w8.csv" "$@" >/dev/null
	build/residctl bench arms --chunk 128M --chunks 8 --passes 4 --ratios 1.0 \
		--arms A-seq,D --reps 3 --csv "$tmp/w128.csv" "$@" >/dev/null
	build/residctl bench fetch --sizes 8M,128M --reps 3 \
		--csv results/bench-targets-fetch.csv "$@" >"$tmp/f.md"
	build/residctl bench decode --chunk 16M --chunks 16 --passes 6 \
		--ratios 0.25,0.5,0.75 --arms A,C,D,E,device --reps 3 \
		--csv results/bench-targets-decode.csv "$@" >"$tmp/d.md"
	load_after=$(load)
	{ cat "$tmp/a8.csv"; for f in a128 w8 w128; do tail -n +2 "$tmp/$f.csv"; done; } \
		>results/bench-targets-arms.csv
	cat "$tmp/a8.md" "$tmp/a128.md" "$tmp/f.md" "$tmp/d.md" >"$tmp/tables.md"
fi

# The targets table from the CSV of the arms (columns by name) and the
# wait table of bench fetch.
targets() {
	# Shared by both awk programs: the median, least and most of the n
	# values in v (sorted in place).
	local stats='
	function stats(v, n,   i, k, x) {
		for (i = 2; i <= n; i++)
			for (k = i; k > 1 && v[k - 1] > v[k]; k--) { x = v[k]; v[k] = v[k - 1]; v[k - 1] = x }
		lo = v[1]; hi = v[n]
		return v[int(n / 2) + 1]
	}
	function spread(m) { return sprintf("**%.2f x** (%.2f-%.2f over %d runs)", m, lo, hi, nrep) }
	function met(x) { return x ? "met" : "not met" }'
	awk -F, "$stats"'
	NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
	{
		s = $col["chunk_bytes"] / 1048576; a = $col["arm"]
		w = $col["wall_s"]
		visits[s] = $col["chunks"] * $col["passes"]
		# Ratio 1: the work of one visit to a resident chunk (D), to a
		# cached one (A-seq): the passes after the first, of the run
		# whose first pass was timed (the first).
		if ($col["ratio"] + 0 == 1) {
			split($col["wall_s_each"], each, " ")
			later = (each[1] - $col["first_pass_s"]) / (visits[s] - $col["chunks"])
			if (a == "D") work[s] = later
			if (a == "A-seq") awork[s] = later
			next
		}
		if ($col["wall_s_each"] == "") {
			if (a == "FNU") fnu[s] = $col["bytes_read"]
			next
		}
		nrep = split($col["wall_s_each"], each, " ")
		split($col["mibps_each"], rate, " ")
		# Run by run: the fastest A of run k, each arm'"'"'s wall and
		# fetch rate (the device'"'"'s read rate) of run k.
		for (k = 1; k <= nrep; k++) {
			if (a ~ /^A-/ && (!((s, k) in Ak) || each[k] < Ak[s, k])) Ak[s, k] = each[k]
			Wk[s, a, k] = each[k]; Fk[s, a, k] = rate[k]
		}
		if (a ~ /^A-/ && (!(s in A) || w < A[s])) { A[s] = w; An[s] = a }
		if (a !~ /^A-/ && a != "device") {
			W1[s, a] = each[1]; FP[s, a] = $col["first_pass_s"]
			chunks[s] = $col["chunks"]
			W[s, a] = w; B[s, a] = $col["bytes_read"]
			F[s, a] = $col["pager_fetch_bytes"] / 1048576 / ($col["fetch_ns"] / 1e9)
			R[s, a] = $col["pager_fetch_bytes"] / 1048576 / ($col["read_ns"] / 1e9)
		}
		fio[s] = $col["device_mibps"]
		sizes[s] = 1
	}
	# The median over runs of arm a over the reference of the same run.
	function byrun(s, a, what,   k, v) {
		for (k = 1; k <= nrep; k++)
			v[k] = what == "wall" ? Wk[s, a, k] / Ak[s, k] : Fk[s, a, k] / Fk[s, "device", k]
		return stats(v, nrep)
	}
	END {
		nway = split("E-overlap D-huge E-overlap-huge", way, " ")
		label["E-overlap"] = "eviction overlapping consumption"
		label["D-huge"] = "B in huge folios"
		label["E-overlap-huge"] = "both of them"
		for (s = 8; s <= 128; s *= 16) {
			if (!(s in sizes)) continue
			r = byrun(s, "D", "wall"); l = lo; h = hi
			printf "| D wall <= 0.85 x A, %d MiB chunks, ratio 0.5 | D %.2f s, %s %.2f s (medians); D / the fastest A of the same run: %s; D-whole %.2f x, E %.2f x; D read %.0f MiB, Belady %.0f | %s |\n", s, W[s, "D"], An[s], A[s], spread(r), byrun(s, "D-whole", "wall"), byrun(s, "E", "wall"), B[s, "D"] / 1048576, fnu[s] / 1048576, met(r <= 0.85) (B[s, "D"] == fnu[s] ? "" : "; D bytes != Belady")
			# The other ways, each against A run by run.
			for (i = 1; i <= nway; i++) {
				x = way[i]
				if (!((s, x) in W)) continue
				r = byrun(s, x, "wall")
				printf "| the same, %s: %s, %d MiB chunks | %s %.2f s (median); / the fastest A of the same run: %s; read %.0f MiB, Belady %.0f | %s |\n", x, label[x], s, x, W[s, x], spread(r), B[s, x] / 1048576, fnu[s] / 1048576, met(r <= 0.85) (B[s, x] == fnu[s] ? "" : "; bytes != Belady")
			}
		}
		for (s = 8; s <= 128; s *= 16) {
			if (!(s in sizes)) continue
			for (k = 1; k <= nrep; k++) v[k] = Fk[s, "device", k]
			dv = stats(v, nrep); dl = lo; dh = hi
			q = byrun(s, "D", "fetch")
			printf "| fetch >= 75 %% of the device, %d MiB chunks, the 4 KiB path (the device read alone with O_DIRECT, interleaved run by run) | device %.0f MiB/s (%.0f-%.0f); D %.0f MiB/s per fetch (reads alone %.0f); D / the device of the same run: **%.1f %%** (%.1f-%.1f %%), D-whole %.1f %%; fio best before and after the sweep %.0f MiB/s (D %.1f %% of it) | %s |\n", s, dv, dl, dh, F[s, "D"], R[s, "D"], 100 * q, 100 * lo, 100 * hi, 100 * byrun(s, "D-whole", "fetch"), fio[s], 100 * F[s, "D"] / fio[s], met(q >= 0.75)
			if ((s, "D-huge") in W) {
				q = byrun(s, "D-huge", "fetch")
				printf "| fetch >= 75 %% of the device on the huge path, %d MiB chunks | D-huge %.0f MiB/s per fetch (reads alone %.0f); / the device of the same run: **%.1f %%** (%.1f-%.1f %%), E-overlap-huge %.1f %% | %s |\n", s, F[s, "D-huge"], R[s, "D-huge"], 100 * q, 100 * lo, 100 * hi, 100 * byrun(s, "E-overlap-huge", "fetch"), met(q >= 0.75)
			}
			dev[s] = dv
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
			# What a miss after the first pass cost D (its first run):
			# the later passes less their hits, over their misses.
			miss = (W1[s, "D"] - FP[s, "D"] - h * work[s]) / (m - chunks[s])
			printf "| (the floor of D wall / A, %d MiB chunks) | a visit'"'"'s work %.2f ms (ratio 1; A-seq'"'"'s to a cached chunk %.2f ms); %d hits, %.0f misses: at the device'"'"'s rate (run by run) **%.2f s = %.2f x A**; at D'"'"'s fetch rate %.2f s = %.2f x A (D took %.2f s: a miss after the first pass %.1f ms, its fetch %.1f, a visit'"'"'s work %.1f) | %s |\n", s, 1000 * work[s], 1000 * awork[s], h, m, lo, lo / A[s], pd, pd / A[s], W[s, "D"], 1000 * miss, 1000 * s / F[s, "D"], 1000 * work[s], (lo / A[s] <= 0.85 ? "reachable" : "out of reach")
		}
	}' results/bench-targets-arms.csv
	# The decode targets: tokens/s = passes / wall, run by run.
	awk -F, "$stats"'
	NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
	$col["wall_s_each"] != "" && $col["arm"] != "device" {
		a = $col["arm"]; r = $col["ratio"] + 0; g = a ~ /^A-/ ? "A" : a
		nrep = split($col["wall_s_each"], each, " ")
		for (k = 1; k <= nrep; k++) {
			t = $col["passes"] / each[k]
			if (!((g, r, k) in T) || t > T[g, r, k]) T[g, r, k] = t
			if (g != "A" && (!((r, k) in P) || t > P[r, k])) P[r, k] = t
		}
		ratios[r] = 1
		# Where a token goes (first run): A'"'"'s read rate over its wall,
		# D'"'"'s fetches (on its critical path) and the rest.
		if (g == "A" && (!((g, r) in wall) || each[1] < wall[g, r]) || g == "D") {
			wall[g, r] = each[1]; mib[g, r] = $col["bytes_read"] / 1048576
			fetch[g, r] = $col["fetch_ns"] / 1e9; tok = $col["passes"]
		}
	}
	function where(r) {
		return sprintf("ratio %.2f: A reads %.0f MiB in %.2f s a token (%.0f MiB/s); D fetches %.0f MiB in %.2f s of its %.2f s a token (%.0f MiB/s), the rest (the product, hits) %.2f s", r, mib["A", r] / tok, wall["A", r] / tok, mib["A", r] / wall["A", r], mib["D", r] / tok, fetch["D", r] / tok, wall["D", r] / tok, mib["D", r] / fetch["D", r], (wall["D", r] - fetch["D", r]) / tok)
	}
	function med(g, r,   k, v) { for (k = 1; k <= nrep; k++) v[k] = T[g, r, k]; return stats(v, nrep) }
	function best(r,   k, v) { for (k = 1; k <= nrep; k++) v[k] = P[r, k] / T["A", r, k]; return stats(v, nrep) }
	END {
		if (!(0.25 in ratios) || !(0.75 in ratios)) exit
		rise = ""; ok = 1
		split("A C D E", arm, " ")
		for (i = 1; i <= 4; i++) {
			g = arm[i]; x = med(g, 0.75) / med(g, 0.25)
			rise = rise sprintf("%s%s %.3f -> %.3f -> %.3f (%.2f x)", i > 1 ? "; " : "", g, med(g, 0.25), med(g, 0.5), med(g, 0.75), x)
			ok = ok && (g == "D" || g == "E" ? x >= 1.2 : x >= 0.8 && x <= 1.25)
		}
		printf "| decode: D and E rise with the budget (0.75 / 0.25 >= 1.2), A and C flat (0.8-1.25) | tokens/s at ratios 0.25 -> 0.5 -> 0.75, medians: %s | %s |\n", rise, met(ok)
		q = best(0.75)
		printf "| decode: best pager arm >= 2 x A, ratio 0.75 | best of C, D, E / the fastest A, run by run: %s | %s |\n", spread(q), met(q >= 2)
		q = best(0.25)
		printf "| decode: best pager arm >= 1.2 x A, ratio 0.25 | best of C, D, E / the fastest A, run by run: %s | %s |\n", spread(q), met(q >= 1.2)
		printf "| (decode: where a token goes, first run) | %s; %s | |\n", where(0.25), where(0.75)
	}' results/bench-targets-decode.csv
	awk -F'|' '
	/^The fault.s wait/ { on = 1; next }
	on && /^\| [0-9]/ {
		gsub(/ /, "")
		printf "| fault wait on a predicted chunk <= 1.1 x the read, %s MiB | whole chunk %s ms, plain read %s ms: **%s x**; against the pager'"'"'s own read phase %s x; first byte %s ms | %s |\n", $2, $4, $3, $7, $8, $5, ($7 + 0 <= 1.1 ? "met" : "not met")
	}
	on && /^$/ && seen++ { on = 0 }' "$tmp/f.md"
}

{
	echo "# The time targets, side by side"
	echo
	echo "\`scripts/bench-targets.sh\` on $(machine), $when."
	echo "Load average (1, 5, 15 min) before: $load_before; after: $load_after."
	echo "Wall times are medians of 3 runs per arm, the arms interleaved run by"
	echo "run with the device read alone (arm 'device'); fio ran on the same file"
	echo "before and after each sweep of the arms."
	echo
	echo "| target | measured | |"
	echo "|---|---|---|"
	targets
	echo
	cat "$tmp/tables.md"
} >"$tmp/targets.md"
cp "$tmp/targets.md" results/bench-targets.md

# The section of results/performance.md between its markers.
{
	echo "Measured $when, load average $load_before before and $load_after after ([bench-targets.md](bench-targets.md)):"
	echo
	echo "| target | measured | |"
	echo "|---|---|---|"
	targets
} | bash scripts/perf-section.sh targets scripts/bench-targets.sh
echo "bench-targets: results/bench-targets.md, results/bench-targets-{arms,fetch,decode}.csv, results/performance.md"
