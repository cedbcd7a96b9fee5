#!/usr/bin/env bash
# residctl run (docs/run.md): each promise one case. ci/run/maptest.c maps
# the file as programs do and compares every byte with pread, under
# residctl run (its mappings must be the pager's memfd, and the summary
# must count faults, fetches and bytes read) and under nothing (the
# kernel's). Root and a memory cgroup are needed. Leaves no cgroup, file
# or process behind. Ends with "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
R=$PWD/build/residctl
die() { echo "run: $*" >&2; exit 2; }
if [ ! -x "$R" ] || [ ! -r build/libresid-preload.so ]; then die "build first: make"; fi
tmp=$(mktemp -d /tmp/resid-run.XXXXXX) || die "mktemp"
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1: $2"; [ -s "$tmp/err" ] && sed 's/^/    /' "$tmp/err"; }
# run's summary is the last stderr line; a JSON field of --json
summary() { tail -n 1 "$tmp/err"; }
field() { jq -r "$1" "$tmp/j.json"; }
no_leftovers() { # pid of a residctl: no cgroup of it, no process of the case
	[ -z "$(find /sys/fs/cgroup -maxdepth 6 -type d -name "residctl-$1-*" 2>/dev/null)" ]
}

cc -std=gnu11 -Wall -Wextra -Werror -O2 ci/run/maptest.c -lpthread -o "$tmp/maptest" ||
	die "ci/run/maptest.c does not build"
M=$tmp/maptest F=$tmp/file.bin
head -c $((6 * 1024 * 1024 + 12345)) /dev/urandom >"$F" || die "the test file"
size=$(stat -c %s "$F")

# 1. The semantics under nothing: the kernel's mmap (the reference).
if MAPTEST_EXPECT=kernel MAPTEST_CTOR=$F "$M" semantics "$F" >"$tmp/plain" 2>"$tmp/err" &&
   ! grep -q FAIL "$tmp/plain"; then ok "maptest semantics under the kernel: $(grep -c '^ok' "$tmp/plain") cases"
else bad "maptest semantics under the kernel" "$(grep FAIL "$tmp/plain")"; fi

# 2. The same cases under residctl run: every view the pager's, every byte
# right; exactly the four calls it cannot serve said on stderr.
MAPTEST_EXPECT=pager MAPTEST_CTOR=$F $R run --file "$F" --budget 1M --chunk 256K --json "$tmp/j.json" \
	-- "$M" semantics "$F" >"$tmp/out" 2>"$tmp/err"; rc=$?
if [ $rc -eq 0 ] && ! grep -q FAIL "$tmp/out" && diff -q <(cut -c1-200 "$tmp/plain") <(cut -c1-200 "$tmp/out") >/dev/null &&
   [ "$(grep -c 'goes to the kernel' "$tmp/err")" -eq 3 ] && [ "$(grep -c 'refused with EACCES' "$tmp/err")" -eq 1 ] &&
   [ "$(field .total.faults)" -gt 0 ] && [ "$(field .total.fetches)" -gt 0 ] &&
   [ "$(field .total.fetch_bytes)" -ge "$size" ] && [ "$(field .total.kernel)" -eq 4 ] &&
   [ "$(field .total.populate)" -ge 1 ] && [ "$(field .total.resident_max)" -le $((1 << 20)) ] &&
   [ "$(field .total.ignored)" -ge 1 ] && [ "$(field .total.refused)" -eq 1 ] &&
   [ "$(field .total.processes)" -eq 2 ] && summary | grep -q 'bytes read from the file'; then
	ok "maptest semantics under residctl run: the same $(grep -c '^ok' "$tmp/out") cases, $(field .total.faults) faults, $(field .total.fetches) fetches"
else bad "maptest semantics under residctl run (exit $rc)" "$(grep FAIL "$tmp/out")"; fi

# 3. The checks above can fail: under nothing, a view is not the pager's.
if ! MAPTEST_EXPECT=pager "$M" sum "$F" >/dev/null 2>"$tmp/err"; then ok "the pager check fails without the preload"
else bad "the pager check fails without the preload" "maptest accepted the kernel's mapping as the pager's"; fi

# 4. A checksum through mmap, 3 passes at a quarter of the file, prefetch
# on: the same sum, the file read more than once, prefetches made,
# resident never above the budget.
"$M" sum "$F" >"$tmp/sum.plain" 2>"$tmp/err"
MAPTEST_EXPECT=pager $R run --file "$F" --ratio 0.25 --chunk 512K --prefetch 1 --json "$tmp/j.json" \
	-- "$M" sum "$F" 3 >"$tmp/sum.run" 2>"$tmp/err"; rc=$?
budget=$(field .budget)
if [ $rc -eq 0 ] && cmp -s "$tmp/sum.plain" "$tmp/sum.run" && [ "$(field .total.fetch_bytes)" -gt "$size" ] &&
   [ "$(field .total.resident_max)" -le "$budget" ] && [ "$(field .total.populate)" -eq 1 ] &&
   [ "$(field .total.prefetches)" -gt 0 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ]; then
	ok "checksum through mmap, 3 passes, ratio 0.25, --prefetch 1: same sum, $(field .total.fetch_bytes) bytes read, $(field .total.prefetches) prefetches, one stderr line"
else bad "checksum under run (exit $rc)" "$(cat "$tmp/sum.plain" "$tmp/sum.run")"; fi

# 4b. The worked example of docs/run.md, and the file by another name (a
# hard link): the same inode, served.
cc -std=gnu11 -Wall -Wextra -Werror -O2 docs/example/mapsum.c -o "$tmp/mapsum" || die "docs/example/mapsum.c does not build"
ln "$F" "$tmp/link.bin" || die "ln"
"$tmp/mapsum" "$F" 2 >"$tmp/sum.plain"
$R run --file "$F" --ratio 0.25 --chunk 512K --json "$tmp/j.json" -- "$tmp/mapsum" "$tmp/link.bin" 2 >"$tmp/sum.run" 2>"$tmp/err"; rc=$?
if [ $rc -eq 0 ] && cmp -s "$tmp/sum.plain" "$tmp/sum.run" && [ "$(field .total.served)" -eq 1 ] &&
   [ "$(field .total.fetch_bytes)" -gt "$size" ] && [ "$(field .total.kernel)" -eq 0 ]; then
	ok "docs/example/mapsum.c through a hard link: same sum, $(field .total.fetch_bytes) bytes read"
else bad "the worked example (exit $rc)" "$(cat "$tmp/sum.plain" "$tmp/sum.run")"; fi

# 4c. A disk's EIO on one chunk (build/libresid-eio.so fails the pager's
# pread there): the program dies of SIGBUS inside that chunk, and run's
# summary and --json name the chunk and the error; the shim said it
# injected, so the EIO was the pager's read's.
[ -r build/libresid-eio.so ] || die "build/libresid-eio.so: build first: make"
RESIDCTL_TEST_EIO=$F:$((5 * 512 * 1024 + 100)):1 LD_PRELOAD=$PWD/build/libresid-eio.so \
	$R run --file "$F" --ratio 0.5 --chunk 512K --json "$tmp/j.json" -- "$tmp/mapsum" "$F" 1 >/dev/null 2>"$tmp/err"; rc=$?
at=$(field .total.sigbus_offset)
if [ $rc -eq 135 ] && [ "$(field .total.fail_chunk)" = 5 ] && [ "$(field .total.fail_errno)" = 5 ] &&
   [ "$(field .total.failed_chunks)" = 1 ] && grep -q 'EIO injected' "$tmp/err" &&
   summary | grep -q 'first chunk 5 (offset 2621440, 524288 bytes): Input/output error' &&
   { [ "$at" = null ] || { [ "$at" -ge 2621440 ] && [ "$at" -lt 3145728 ]; }; }; then
	ok "EIO on chunk 5: SIGBUS (exit 135)$([ "$at" = null ] || echo " at offset $at"), run names the chunk"
else bad "EIO on chunk 5 (exit $rc)" "$(summary)"; fi

# 4d. --trace: the chunks the program reads, each switch once, in a reference
# trace belady reads back: two passes of 13 chunks (the last one short, so
# the sizes are listed), the file read once (the whole file is the budget).
$R run --file "$F" --chunk 512K --trace "$tmp/t.trace" --json "$tmp/j.json" -- "$tmp/mapsum" "$F" 2 >"$tmp/sum.run" 2>"$tmp/err"; rc=$?
want=$( (seq 0 12; seq 0 12) | tr '\n' ' ')
if [ $rc -eq 0 ] && cmp -s "$tmp/sum.plain" "$tmp/sum.run" && [ "$(field .total.fetch_bytes)" -eq $(((size + 4095) / 4096 * 4096)) ] &&
   grep -q -- "--trace $tmp/t.trace: 26 references over 13 chunks" "$tmp/err" &&
   [ "$(sed -n '1,2p;15p' "$tmp/t.trace" | tr '\n' ' ')" = "residctl-trace 1 reference chunks 13 size 12 16384 " ] &&
   [ "$(tail -n 26 "$tmp/t.trace" | tr '\n' ' ')" = "$want" ] &&
   $R belady "$tmp/t.trace" --capacity 1M >"$tmp/b.out" 2>>"$tmp/err" &&
   grep -q '^accesses 26$' "$tmp/b.out" && grep -q '^fnu misses 24 ' "$tmp/b.out"; then
	ok "--trace: 26 references of 13 chunks, the file read once, belady at 1M: $(grep '^fnu' "$tmp/b.out")"
else bad "--trace (exit $rc)" "$(head -c 600 "$tmp/t.trace" 2>/dev/null | tr '\n' ' ')"; fi

# 5. --order auto on a GGUF file stored out of read order: chunks from the
# tensor table, declared blk.0, blk.1, norm, output (the header's chunk
# where its tensor is); the embeddings, read a row a token, left out.
"$M" mkgguf "$tmp/m.gguf" || die "maptest mkgguf"
"$M" sum "$tmp/m.gguf" >"$tmp/sum.plain"
MAPTEST_EXPECT=pager $R run --file "$tmp/m.gguf" --ratio 0.5 --json "$tmp/j.json" \
	-- "$M" sum "$tmp/m.gguf" 2 >"$tmp/sum.run" 2>"$tmp/err"; rc=$?
# each tensor's chunk, by its file offset (the layout of maptest mkgguf)
order=$(jq -c '[.order[] as $c | .chunks[$c][0]]' "$tmp/j.json")
want=$(python3 - "$tmp/m.gguf" <<'EOF'
import struct, sys
b = open(sys.argv[1], 'rb').read()
p = 24 + 8 + len('general.alignment') + 8
t = []
for _ in range(struct.unpack_from('<Q', b, 8)[0]):
    n = struct.unpack_from('<Q', b, p)[0]; name = b[p + 8:p + 8 + n].decode(); p += 8 + n + 4 + 16 + 4
    t.append((name, struct.unpack_from('<Q', b, p)[0])); p += 8
data = (p + 63) // 64 * 64
rank = lambda s: 0 if s.startswith('token_embd') else 1 + int(s.split('.')[1]) if s.startswith('blk.') else 9 if s == 'output_norm.weight' else 10
key = lambda s: '.'.join(s.split('.')[:2]) if s.startswith('blk.') else s
firsts, prev = {}, None
for name, off in sorted(t, key=lambda x: x[1]):  # layers: runs of one block
    if key(name) != prev and not name.startswith('token_embd'):
        c = (data + off) // 4096 * 4096
        firsts[c] = min(firsts.get(c, 99), rank(name))
    prev = key(name)
print('[' + ','.join(str(c) for c in sorted(firsts, key=lambda c: (firsts[c], c))) + ']')
EOF
)
# layers longer than a sixteenth of the budget are cut into pieces, which
# follow each other in their layer's place: fold them back into layers
layers=$(python3 -c '
import json, sys
order, want = json.loads(sys.argv[1]), json.loads(sys.argv[2])
pieces = [max(w for w in want if w <= c) for c in order]
folded = [c for i, c in enumerate(pieces) if i == 0 or c != pieces[i - 1]]
ok = all(b > a for p, q in zip(order, order[1:]) for a, b in [(p, q)]
         if max(w for w in want if w <= p) == max(w for w in want if w <= q))
print(json.dumps(folded, separators=(",", ":")) if ok else "pieces out of order")
' "$order" "$want")
if [ $rc -eq 0 ] && cmp -s "$tmp/sum.plain" "$tmp/sum.run" && [ "$(field .order_source)" = gguf ] &&
   [ "$layers" = "$want" ] && [ "$(field .total.faults)" -gt 0 ] &&
   [ "$(field '.order | length')" -lt "$(field '.chunks | length')" ]; then
	ok "--order auto on GGUF: $(field '.chunks | length') unequal chunks, $(field '.order | length') in read order $order"
else bad "--order auto on GGUF (exit $rc)" "order $order (layers $layers), want $want, source $(field .order_source)"; fi

# 6. --order auto on safetensors (bench mkmodel): the chunks of its layers.
$R bench mkmodel "$tmp/m.safetensors" --layers 12 --hidden 128 --ffn 256 --vocab 2048 >/dev/null 2>&1 ||
	die "bench mkmodel"
"$M" sum "$tmp/m.safetensors" >"$tmp/sum.plain"
MAPTEST_EXPECT=pager $R run --file "$tmp/m.safetensors" --ratio 0.5 --json "$tmp/j.json" \
	-- "$M" sum "$tmp/m.safetensors" 2 >"$tmp/sum.run" 2>"$tmp/err"; rc=$?
if [ $rc -eq 0 ] && cmp -s "$tmp/sum.plain" "$tmp/sum.run" && [ "$(field .order_source)" = safetensors ] &&
   [ "$(field '.chunks | length')" -ge 14 ] && [ "$(field '.order[-1]')" -eq "$(( $(field '.chunks | length') - 1 ))" ]; then
	ok "--order auto on safetensors: $(field '.chunks | length') chunks, lm_head last"
else bad "--order auto on safetensors (exit $rc)" "$(field .order_source) $(field '.order')"; fi

# 7. Two processes map the file: each its own region, both sums right.
# shellcheck disable=SC2016 # the inner shell expands them
MAPTEST_EXPECT=pager $R run --file "$F" --budget 1M --chunk 256K --json "$tmp/j.json" \
	-- sh -c '"$0" sum "$1" & "$0" sum "$1"; wait' "$M" "$F" >"$tmp/sum.run" 2>"$tmp/err"; rc=$?
"$M" sum "$F" >"$tmp/sum.plain"
if [ $rc -eq 0 ] && [ "$(sort -u "$tmp/sum.run")" = "$(cat "$tmp/sum.plain")" ] && [ "$(wc -l <"$tmp/sum.run")" -eq 2 ] &&
   [ "$(field .total.processes)" -eq 2 ] && [ "$(field .total.regions)" -eq 2 ]; then
	ok "two processes: two regions under one cgroup, both sums right"
else bad "two processes (exit $rc)" "$(cat "$tmp/sum.run")"; fi

# 8. The file replaced, or truncated, after residctl run looked at it: the
# kernel serves what is there now, with one line naming why.
cp "$F" "$tmp/r.bin" && head -c 300000 /dev/urandom >"$tmp/new.bin"
$R run --file "$tmp/r.bin" --budget 1M --chunk 256K -- "$M" replace "$tmp/r.bin" "$tmp/new.bin" >"$tmp/out" 2>"$tmp/err"; rc=$?
if [ $rc -eq 0 ] && grep -q '^ok' "$tmp/out" && grep -q 'goes to the kernel: the file was replaced' "$tmp/err" &&
   summary | grep -q 'was never served'; then ok "the file replaced: the kernel serves the new one, said"
else bad "the file replaced (exit $rc)" "$(cat "$tmp/out")"; fi
cp "$F" "$tmp/t.bin"
$R run --file "$tmp/t.bin" --budget 1M --chunk 256K -- "$M" truncate "$tmp/t.bin" >"$tmp/out" 2>"$tmp/err"; rc=$?
if [ $rc -eq 0 ] && grep -q '^ok' "$tmp/out" && grep -q 'goes to the kernel: the file is .* truncated or grown' "$tmp/err"; then
	ok "the file truncated: the kernel serves it, said"
else bad "the file truncated (exit $rc)" "$(cat "$tmp/out")"; fi

# 9. A malformed variable: the preload falls back to the kernel, naming it.
out=$(env LD_PRELOAD="$PWD/build/libresid-preload.so" RESIDCTL_RUN_FILE="$F" \
	RESIDCTL_RUN_ID="$(stat -c %d:%i:%s "$F")" RESIDCTL_RUN_BUDGET=1x RESIDCTL_RUN_CHUNKS=0 \
	MAPTEST_EXPECT=kernel "$M" sum "$F" 2>"$tmp/err"); rc=$?
if [ $rc -eq 0 ] && [ "$out" = "$(cat "$tmp/sum.plain")" ] && [ "$(wc -l <"$tmp/err")" -eq 1 ] &&
   grep -q "RESIDCTL_RUN_BUDGET '1x'" "$tmp/err"; then ok "a malformed RESIDCTL_RUN_BUDGET: the kernel's mmap, one line naming it"
else bad "a malformed variable (exit $rc)" "$out"; fi

# 10. The exit status is the program's, a signal's as a shell gives it;
# a program that never maps the file is said so.
$R run --file "$F" --budget 1M --chunk 256K -- sh -c 'exit 7' 2>"$tmp/err"; rc=$?
if [ $rc -eq 7 ] && summary | grep -q 'never mapped'; then ok "exit 7 kept; 'never mapped' said"
else bad "exit status kept (exit $rc)" ""; fi
$R run --file "$F" --budget 1M --chunk 256K -- sh -c 'kill -SEGV $$' 2>"$tmp/err"; rc=$?
if [ $rc -eq 139 ] && summary | grep -q 'killed by signal 11'; then ok "a SIGSEGV death is exit 139"
else bad "signal death (exit $rc)" ""; fi

# 11. What the program leaves running is ended with the run.
$R run --file "$F" --budget 1M --chunk 256K -- sh -c 'sleep 41 & exit 0' 2>"$tmp/err"; rc=$?
if [ $rc -eq 0 ] && ! pgrep -x -f 'sleep 41' >/dev/null && grep -q 'ended 1 process' "$tmp/err"; then
	ok "a background process the program left is ended"
else bad "leftovers (exit $rc)" "$(pgrep -a -f 'sleep 41')"; pkill -x -f 'sleep 41'; fi

# 12. SIGTERM goes to the program; the cgroup is removed; exit 143.
$R run --file "$F" --budget 1M --chunk 256K -- sleep 37 2>"$tmp/err" &
rpid=$!
for _ in $(seq 50); do pgrep -x -f 'sleep 37' >/dev/null && break; sleep 0.1; done
kill -TERM $rpid; wait $rpid; rc=$?
if [ $rc -eq 143 ] && ! pgrep -x -f 'sleep 37' >/dev/null && no_leftovers $rpid; then
	ok "SIGTERM forwarded: exit 143, no process, no cgroup"
else bad "SIGTERM (exit $rc)" ""; pkill -x -f 'sleep 37'; fi

# 13. Bad input writes nothing: no --json file, no cgroup.
$R run --file "$F" --budget 4K --json "$tmp/none.json" -- true 2>"$tmp/err"; rc=$?
if [ $rc -eq 2 ] && [ ! -e "$tmp/none.json" ] && [ ! -e "$tmp/none.json.tmp" ] && [ "$(wc -l <"$tmp/err")" -eq 1 ]; then
	ok "bad input: exit 2, one line, no --json file"
else bad "bad input writes nothing (exit $rc)" ""; fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
