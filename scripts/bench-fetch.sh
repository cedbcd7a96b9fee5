#!/usr/bin/env bash
# The fetch path against the platform limit (design.md §8), the default sweep:
# chunks of 2..128 MiB, 3 reps, the application thread on one CPU and the
# pager's threads on the others; then 8, 32 and 128 MiB again unpinned, to
# show what sharing a CPU with the application costs. Every mode, also the
# device and the huge path's (scripts/bench-huge.sh is the short
# run of those). About 7 minutes; root (memory cgroups).
#   results/bench-fetch.csv           every figure per chunk size and mode
#   results/bench-fetch-unpinned.csv  the same, threads not pinned
#   results/bench-fetch.md            the tables of both
# Extra arguments go to residctl bench fetch (e.g. --dir /mnt/disk).
# shellcheck source=scripts/lib/common.sh
. "$(dirname "$0")/lib/common.sh"
prologue
scratch
build/residctl bench fetch --csv results/bench-fetch.csv "$@" >"$tmp/pinned.md"
build/residctl bench fetch --pin no --sizes 8M,32M,128M \
	--csv results/bench-fetch-unpinned.csv "$@" >"$tmp/unpinned.md"
{
	echo "# The fetch path against the platform limit"
	echo
	echo "\`scripts/bench-fetch.sh\` on $(machine), $(date -u +%Y-%m-%d)."
	echo "Latencies are wall-clock on a shared machine: compare modes within"
	echo "a row (they run interleaved, rep by rep), not across runs."
	echo
	cat "$tmp/pinned.md"
	echo "## The same, threads not pinned"
	echo
	echo "The application thread and the pager's threads share both CPUs as"
	echo "the scheduler places them."
	echo
	sed 1,2d "$tmp/unpinned.md"
} >results/bench-fetch.md
echo "bench-fetch: results/bench-fetch.csv, results/bench-fetch-unpinned.csv, results/bench-fetch.md"
