#!/usr/bin/env bash
# The huge path's fetch target: the fetch on the huge path (huge folios in B,
# from a tmpfs mounted huge=always in each run's own mount namespace, or
# --huge-dir DIR) against the 4 KiB path and the device itself (O_DIRECT
# into one reused huge-page buffer), the modes alternating run by run, at
# 8 and 128 MiB chunks, 3 reps (root: memory cgroups; about 3 minutes).
# Writes:
#   results/bench-huge.csv     every run (bench fetch's columns)
#   results/bench-huge.md      the table bench fetch prints
#   results/performance.md     its huge section, between the "huge:" markers
# Extra arguments go to residctl bench fetch (e.g. --dir /mnt/disk).
# shellcheck source=scripts/lib/common.sh
. "$(dirname "$0")/lib/common.sh"
prologue
scratch
grep -q '^<!-- huge:' results/performance.md ||
	{ echo "bench-huge: results/performance.md has no huge marker" >&2; exit 1; }
load_before=$(load)
build/residctl bench fetch --sizes 8M,128M --reps 3 \
	--modes device,pager,ahead,huge,huge-ahead \
	--csv results/bench-huge.csv "$@" >"$tmp/f.md"
load_after=$(load)

# Per size and mode the median rep's MiB/s and its phase timers per fetch
# (ms); the target row compares huge-ahead, the best huge mode here, and
# huge with the device.
targets() {
	awk -F, '
	NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
	{
		s = $col["chunk_bytes"] / 1048576; m = $col["mode"]
		k = s SUBSEP m; n[k]++
		v[k, n[k]] = $col["mib_s"]
		f = $col["fetches"] ? $col["fetches"] : 1
		ph[k, n[k]] = sprintf("reserve %.2f, read %.2f, CONTINUE %.2f, wait %.2f", $col["reserve_ns"] / f / 1e6, $col["read_ns"] / f / 1e6, $col["continue_ns"] / f / 1e6, $col["lat_mean_ns"] / 1e6)
		sizes[s] = 1
	}
	function median(k,   i, j, t, c) {
		c = n[k]
		for (i = 1; i <= c; i++) o[i] = i
		for (i = 1; i <= c; i++)
			for (j = i + 1; j <= c; j++)
				if (v[k, o[j]] < v[k, o[i]]) { t = o[i]; o[i] = o[j]; o[j] = t }
		return o[int((c + 1) / 2)]
	}
	END {
		for (s = 8; s <= 128; s *= 16) {
			if (!(s in sizes)) continue
			d = v[s SUBSEP "device", median(s SUBSEP "device")]
			split("pager ahead huge huge-ahead", ms, " ")
			for (i = 1; i <= 4; i++) {
				k = s SUBSEP ms[i]; j = median(k)
				r[ms[i]] = v[k, j]; p[ms[i]] = ph[k, j]
			}
			q = r["huge-ahead"] / d
			printf "| fetch >= 75 %% of the device on the huge path, %d MiB chunks | huge-ahead %.0f MiB/s, device %.0f MiB/s: **%.1f %%** (huge %.1f %%; the 4 KiB path: ahead %.1f %%, pager %.1f %%); per fetch, ms: huge-ahead %s; ahead (4 KiB) %s | %s |\n", s, r["huge-ahead"], d, 100 * q, 100 * r["huge"] / d, 100 * r["ahead"] / d, 100 * r["pager"] / d, p["huge-ahead"], p["ahead"], (q >= 0.75 ? "met" : "not met")
		}
	}' results/bench-huge.csv
}

{
	echo "# The fetch on the huge path"
	echo
	echo "\`scripts/bench-huge.sh\` on $(machine), $(date -u '+%Y-%m-%d %H:%M UTC')."
	echo "Load average (1, 5, 15 min) before: $load_before; after: $load_after."
	echo
	echo "| target | measured | |"
	echo "|---|---|---|"
	targets
	echo
	cat "$tmp/f.md"
} >results/bench-huge.md
{
	echo "Measured $(date -u '+%Y-%m-%d %H:%M UTC'), load average $load_before before and $load_after after ([bench-huge.md](bench-huge.md)):"
	echo
	echo "| target | measured | |"
	echo "|---|---|---|"
	targets
} | bash scripts/perf-section.sh huge scripts/bench-huge.sh
echo "bench-huge: results/bench-huge.md, results/bench-huge.csv, results/performance.md"
