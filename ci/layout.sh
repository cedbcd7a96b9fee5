#!/usr/bin/env bash
# Real layouts end to end: a synthetic safetensors model (tensors straddling
# pages) read through the pager layer by layer by `verify --table`, every
# byte compared with pread; a text table likewise; and `bench arms --table`
# on the model, where no pager arm may fetch fewer bytes than the lower
# bound and no word may be wrong; and `bench decode --table` on an F32
# model, every layer's output right in every arm.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
R=build/residctl
tmp=$(mktemp -d build/ci-layout.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "layout: FAIL: $*" >&2; exit 1; }

$R bench mkmodel "$tmp/model.safetensors" --layers 4 --hidden 320 --ffn 864 \
	--vocab 1000 >/dev/null || fail "mkmodel"
$R verify "$tmp/model.safetensors" --table "$tmp/model.safetensors" \
	--budget 4M --passes 2 >"$tmp/v1" 2>&1 || fail "verify of the model: $(tail -1 "$tmp/v1")"
grep -q " 0 mismatches" "$tmp/v1" || fail "verify of the model: $(tail -1 "$tmp/v1")"
printf '# layers that share pages and run into the next chunk\n0x100 4000\n5200 3\n0x1454 70000\n75500 12345\n' >"$tmp/table"
$R verify --synthetic 1M --table "$tmp/table" --budget 80K --passes 3 \
	--policy learned >"$tmp/v2" 2>&1 || fail "verify of a text table: $(tail -1 "$tmp/v2")"
$R bench arms --table "$tmp/model.safetensors" --passes 2 --ratios 0.5 \
	--arms D,D-touched,E --dir "$tmp" --csv "$tmp/arms.csv" >/dev/null 2>"$tmp/err" ||
	fail "bench arms --table: $(tail -1 "$tmp/err")"
# pager_fetch_bytes (10) >= bound_bytes (13); mismatches (19) = 0.
awk -F, 'NR > 1 && $10 != "" {
	rows++
	if ($10 + 0 < $13 + 0) { print "arm " $7 " fetched " $10 " < bound " $13; bad = 1 }
	if ($19 != 0) { print "arm " $7 " read " $19 " wrong words"; bad = 1 }
} END { if (rows != 3) { print rows " pager rows, want 3"; bad = 1 } exit bad }' \
	"$tmp/arms.csv" >&2 || fail "bench arms --table figures"
$R bench mkmodel "$tmp/f32.safetensors" --layers 4 --hidden 256 --ffn 640 \
	--vocab 1000 --dtype F32 >/dev/null || fail "mkmodel --dtype F32"
$R bench decode --table "$tmp/f32.safetensors" --passes 2 --ratios 0.5 \
	--arms A-seq,C,D,E --dir "$tmp" --csv "$tmp/decode.csv" >/dev/null 2>"$tmp/err" ||
	fail "bench decode --table: $(tail -1 "$tmp/err")"
# Four arms ran; mismatches (19) = 0 wrong outputs; workload (29) decode.
awk -F, 'NR > 1 && $7 ~ /^(A-seq|C|D|E)$/ {
	rows++
	if ($19 != 0 || $29 != "decode") { print "arm " $7 ": " $19 " wrong outputs, workload " $29; bad = 1 }
} END { if (rows != 4) { print rows " arm rows, want 4"; bad = 1 } exit bad }' \
	"$tmp/decode.csv" >&2 || fail "bench decode --table outputs"
echo "layout: model and text table verified, bench arms above the bound, decode outputs right"
