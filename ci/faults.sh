#!/usr/bin/env bash
# One fault seam under every real-kernel run: a fault named for a scenario
# is injected and its row counts it; a fault that always fires and leaves
# the pager no way forward ends the scenario (a FAIL row, the count kept)
# instead of hanging the gate.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
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
echo "faults: T-1 with punch=1 stopped, $(grep -o 'fired:punch=[0-9]*' "$tmp/t1.out" | tr '\n' ' ')"

# The real read under faults: T-1 and T-3 read a real file with
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
# Every row: equal and unequal chunks, and the huge legs where this
# kernel can mount a huge tmpfs (4 rows without them, 6 with).
all=$(grep -c '"backing": ' "$tmp/file.json")
rows=$(grep -c '"backing": "file O_DIRECT"' "$tmp/file.json")
for f in eio eintr short; do
	n=$(grep -Ec "\"fired:backing_read/$f\": [1-9]" "$tmp/file.json")
	if [ "$rows" -lt 4 ] || [ "$rows" -ne "$all" ] || [ "$n" -ne "$rows" ]; then
		cat "$tmp/file.out" >&2
		echo "faults: $rows of $all file rows (4 or more) read with O_DIRECT," \
			"$n counted backing_read/$f" >&2
		exit 1
	fi
done
echo "faults: T-1 and T-3 from a file passed with $reads, each counted in $rows rows"

# A storm on the user's huge tmpfs (--huge-dir), mounted in a mount
# namespace of its own: every round on 2 MiB chunks holds huge folios
# (where the kernel has THP).
if [ "$($R probe --json | jq .huge_tmpfs)" != true ]; then
	echo "faults: storm --huge-dir: n/a, no huge tmpfs on this kernel"
	exit 0
fi
hd=$tmp/huge
mkdir -p "$hd"
# shellcheck disable=SC2016 # expanded by the inner sh
if ! unshare -m sh -c 'mount -t tmpfs -o huge=always,size=512M none "$1" &&
	exec "$2" storm --rounds 2 --round 1 --seed 3 --chunk 2M --huge-dir "$1" --json "$3"' \
	sh "$hd" "$R" "$tmp/huge.json" >"$tmp/huge.out" 2>&1 ||
   [ "$(jq .huge_rounds "$tmp/huge.json")" != 2 ]; then
	cat "$tmp/huge.out" >&2
	echo "faults: storm --huge-dir: not every round held huge folios" >&2
	exit 1
fi
echo "faults: storm --huge-dir: 2 of 2 rounds on 2 MiB chunks held huge folios"
