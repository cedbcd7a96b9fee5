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
# One leg: each would wait out the stall time-out.
$R check T-1 --backing synthetic --chunks equal --fault punch=1 \
	--json "$tmp/t1.json" >"$tmp/t1.out"
rc=$?
if [ "$rc" -ne 1 ] || ! grep -q 'no progress for' "$tmp/t1.out" ||
   ! grep -Eq '"fired:punch": [1-9]' "$tmp/t1.json"; then
	cat "$tmp/t1.out" >&2
	echo "faults: T-1 with punch=1 did not end in a FAIL row counting" \
		"its punches (exit $rc)" >&2
	exit 1
fi
echo "faults: T-1 with punch=1 stopped, $(grep -o 'fired:punch=[0-9]*' "$tmp/t1.out")"

# The real read under faults (issue 12): T-1 and T-3 read a real file with
# O_DIRECT (equal and unequal chunks, the last ending unaligned) while the
# backing reads fail with EIO and EINTR and come back short. Every row
# passes, reads the file, and counts each of the three faults.
reads="backing_read/eio=0.05,backing_read/eintr=0.1,backing_read/short=0.3"
# The files go here, so that what is left behind is this script's.
export TMPDIR=$tmp
if ! $R check T-1 T-3 --backing file --fault "$reads" \
	--json "$tmp/file.json" >"$tmp/file.out"; then
	cat "$tmp/file.out" >&2
	echo "faults: a file-backed row failed under failing reads" >&2
	exit 1
fi
rows=$(grep -c '"backing": "file O_DIRECT"' "$tmp/file.json")
for f in eio eintr short; do
	n=$(grep -Ec "\"fired:backing_read/$f\": [1-9]" "$tmp/file.json")
	if [ "$rows" -ne 4 ] || [ "$n" -ne 4 ]; then
		cat "$tmp/file.out" >&2
		echo "faults: $rows of 4 file rows read with O_DIRECT, $n counted" \
			"backing_read/$f" >&2
		exit 1
	fi
done
echo "faults: T-1 and T-3 from a file passed with $reads, each counted in 4 rows"

# The storm rounds from a file, with the same faults: every round reads
# its file with O_DIRECT and passes; the faults fired.
if ! $R storm --backing file --duration 6 --round 3 --seed 12 \
	--fault "$reads" --json "$tmp/storm.json" >"$tmp/storm.out" 2>&1; then
	cat "$tmp/storm.out" >&2
	echo "faults: a file-backed storm round failed under failing reads" >&2
	exit 1
fi
rounds=$(sed -n 's/.*"rounds": \([0-9]*\).*/\1/p' "$tmp/storm.json")
direct=$(sed -n 's/.*"direct_rounds": \([0-9]*\).*/\1/p' "$tmp/storm.json")
for f in eio eintr short; do
	if ! grep -Eq "\"resid/backing_read/$f\": [1-9]" "$tmp/storm.json"; then
		echo "faults: the file-backed storm did not count backing_read/$f" >&2
		exit 1
	fi
done
if [ -z "$rounds" ] || [ "$rounds" -lt 1 ] || [ "$direct" != "$rounds" ]; then
	echo "faults: $direct of $rounds storm rounds read their file with O_DIRECT" >&2
	exit 1
fi
echo "faults: $rounds storm rounds from a file (O_DIRECT) passed with $reads"
if ls -d "$tmp"/residctl-file-* 2>/dev/null; then
	echo "faults: a backing file's directory was left behind" >&2
	exit 1
fi
