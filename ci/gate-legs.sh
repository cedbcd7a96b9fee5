#!/usr/bin/env bash
# Issue 12: the default gate reads the path users take. Its JSON must hold a
# passing row of T-1, T-2, T-3, T-6 and T-7 read from a real file (O_DIRECT,
# or buffered where the file system refused it, and said so), and of T-1 and
# T-3 on unequal chunks, beside every scenario's synthetic row.
set -uo pipefail
json=${1:-build/gate.json}
bad=0
# $1 id, $2 backing (an extended regex), $3 chunks
row() {
	if ! grep -Eq "\"id\": \"$1\", \"backing\": \"$2\", \"chunks\": \"$3\", \"passed\": true" "$json"; then
		echo "gate legs: no passing row $1 ($2, $3 chunks) in $json" >&2
		bad=1
	fi
}
for t in T-1 T-2 T-3 T-4 T-5 T-6 T-7; do row "$t" synthetic equal; done
for t in T-1 T-2 T-3 T-6 T-7; do row "$t" 'file (O_DIRECT|buffered)' equal; done
for t in T-1 T-3; do
	row "$t" synthetic unequal
	row "$t" 'file (O_DIRECT|buffered)' unequal
done
[ "$bad" -eq 0 ] || exit 1
echo "gate legs: $(grep -c '"backing": "file O_DIRECT"' "$json") rows read a file with O_DIRECT, $(grep -c '"backing": "file buffered"' "$json") buffered; $(grep -c '"chunks": "unequal"' "$json") rows on unequal chunks"
