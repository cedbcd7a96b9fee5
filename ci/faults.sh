#!/usr/bin/env bash
# One fault seam under every real-kernel run: a fault named for a scenario
# is injected and its row counts it; a fault that always fires and leaves
# the pager no way forward ends the scenario (a FAIL row, the count kept)
# instead of hanging the gate.
set -uo pipefail
cd "$(dirname "$0")/.."
R=build/residctl
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Two named eviction punches fail; T-4's accounting still holds.
if ! $R check T-4 --fault punch@1+2 --json "$tmp/t4.json" >"$tmp/t4.out"; then
	cat "$tmp/t4.out" >&2
	echo "faults: T-4 failed with two failed punches" >&2
	exit 1
fi
if ! grep -q '"fired:punch": 2' "$tmp/t4.json"; then
	echo "faults: T-4's JSON does not count the 2 punches that failed" >&2
	exit 1
fi
echo "faults: T-4 passed with punch@1+2, both counted"

# Every punch fails: T-1 cannot evict, so it is stopped, not hung.
$R check T-1 --fault punch=1 --json "$tmp/t1.json" >"$tmp/t1.out"
rc=$?
if [ "$rc" -ne 1 ] || ! grep -q 'no progress for' "$tmp/t1.out" ||
   ! grep -Eq '"fired:punch": [1-9]' "$tmp/t1.json"; then
	cat "$tmp/t1.out" >&2
	echo "faults: T-1 with punch=1 did not end in a FAIL row counting" \
		"its punches (exit $rc)" >&2
	exit 1
fi
echo "faults: T-1 with punch=1 stopped, $(grep -o 'fired:punch=[0-9]*' "$tmp/t1.out")"
