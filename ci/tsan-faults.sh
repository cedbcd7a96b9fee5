#!/usr/bin/env bash
# ThreadSanitizer on the pager's error paths: T-3, T-6, T-7 and randomized
# storm rounds, each drawing from its seed which fault points are on and at
# which probability, and the storms their chunk size (swarm, docs/storms.md).
# A report fails (ci/test.sh's TSAN_OPTIONS: halt_on_error, also in a
# storm's child), and so does a point that never fired: its error path did
# not run under TSan. Seed 287's eight rounds draw every point, each at a
# summed probability of 0.11 or more over the rounds (the JSON lists each
# round's draw; without TSan, 1 s rounds fired every point 4 times or more).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
T=build/tsan/residctl
json=build/tsan-faults.json

if [[ ${TSAN_OPTIONS:-} != *halt_on_error=1* ]]; then
	echo "tsan-faults: TSAN_OPTIONS lacks halt_on_error=1; run it from ci/test.sh" >&2
	exit 2
fi
# Another seed's draws on the 4 KiB legs (the TSan stage before ran every
# leg with seed 1).
$T check T-3 T-6 T-7 --swarm --seed 2 --pages 4k --backing synthetic || exit 1
$T storm --rounds 8 --round 3 --seed 287 --json "$json" || exit 1
never=$(grep -o '"resid/[^"]*": 0[,}]' "$json" | cut -d'"' -f2)
if [ -n "$never" ]; then
	echo "tsan-faults: never fired under TSan: ${never//$'\n'/ }" >&2
	exit 1
fi
echo "tsan-faults: every fault point fired under TSan (swarm rounds), no report"
