#!/usr/bin/env bash
# The real engine on the project's own models (docs/engine.md), under the
# kernel's plain mmap, into results/engine.md and results/engine-strace.txt:
#   - bench mkgguf writes the tiny preset twice: the same bytes;
#   - llama-driver decodes it twice with 1 thread and once with 2: the
#     same token ids and the same logits hash each time;
#   - the calls llama.cpp makes on the model file and its mapping (strace);
#   - the qwen2.5-3b preset at q4km and q8_0, the page cache dropped before
#     each cold run (root), then a warm run and a warm run with 1 thread:
#     tokens/s, read_bytes, load time, and again the same ids and hash.
# About 3 minutes on 2 loaded cores. Needs root (drop_caches), strace, and
# what scripts/engine.sh needs (exit 2 when it cannot install the engine).
# TOKENS (16) and THREADS (2) change the runs of the 3B models.
# shellcheck source=scripts/lib/common.sh
. "$(dirname "$0")/lib/common.sh"
prologue strace

engine_prologue engine-smoke
dir=build/engine-smoke # a real disk, not tmpfs: its page cache is dropped
tokens=${TOKENS:-16}
threads=${THREADS:-2}
mkdir -p "$dir"
scratch "$dir"
fail() { echo "engine-smoke: $*" >&2; exit 1; }
field() { jq -r "$1" <<<"$2"; }
idhash() { jq -c '[.tokens, .logits_fnv1a64]' <<<"$1"; }

# 1. The tiny preset, twice.
$R bench mkgguf --preset tiny --seed 1 --out "$dir/tiny.gguf" >/dev/null
$R bench mkgguf --preset tiny --seed 1 --out "$dir/tiny2.gguf" >/dev/null
cmp -s "$dir/tiny.gguf" "$dir/tiny2.gguf" || fail "two writes of tiny seed 1 differ"
tiny_bytes=$(stat -c %s "$dir/tiny.gguf")
tiny_sha=$(sha256sum "$dir/tiny.gguf" | cut -c1-16)
$R bench mkgguf --preset tiny --quant q4km --seed 1 --out "$dir/tiny-q4km.gguf" >/dev/null

# 2. Decodes of the tiny models: 1 thread twice, 2 threads once.
declare -A line
for m in tiny tiny-q4km; do
	for run in t1a t1b t2; do
		t=${run:1:1}
		line[$m.$run]=$($D "$dir/$m.gguf" --tokens 32 --threads "$t") ||
			fail "llama-driver on $m.gguf ($run) failed"
	done
	[ "$(idhash "${line[$m.t1a]}")" = "$(idhash "${line[$m.t1b]}")" ] ||
		fail "$m: two runs with 1 thread differ: ${line[$m.t1a]} / ${line[$m.t1b]}"
	[ "$(idhash "${line[$m.t1a]}")" = "$(idhash "${line[$m.t2]}")" ] ||
		fail "$m: 1 and 2 threads differ: ${line[$m.t1a]} / ${line[$m.t2]}"
done

# 3. What llama.cpp does with the file and its mapping.
strace -f -o "$dir/strace.txt" -e trace=openat,close,lseek,read,pread64,fadvise64,mmap,munmap,madvise,mprotect,mremap \
	$D "$dir/tiny.gguf" --tokens 4 --threads 1 >/dev/null || fail "llama-driver under strace failed"
awk -v f="$dir/tiny.gguf" -v size="$tiny_bytes" '
	function hex(s,   v, i) { # mawk has no strtonum
		v = 0; s = tolower(substr(s, 3))
		for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
		return v }
	index($0, "\"" f "\"") && /openat/ { fd = $NF; open = 1; print; next }
	open && $0 ~ ("(read|pread64|lseek|fadvise64|close)\\(" fd "[,)]") { print; if ($0 ~ /close\(/) open = 0; next }
	open && /mmap\(/ && $0 ~ (", " fd ", ") { print; base = hex($NF); next }
	base && /(munmap|madvise|mprotect|mremap)\(/ {
		split($2, a, /[(,]/); addr = hex(a[2])
		if (addr >= base && addr < base + size) print }' "$dir/strace.txt" |
	sed -E 's/^[0-9]+ +//; s/"([^"]{0,24})[^"]*"\.\.\./"\1"../' >"$dir/strace-model.txt"
grep -q 'MAP_SHARED|MAP_POPULATE' "$dir/strace-model.txt" || fail "no shared mapping of the model in the trace"
{
	echo "# llama.cpp's calls on the model file and its mapping: llama-driver on the"
	echo "# tiny preset ($tiny_bytes bytes), 4 tokens, 1 thread; scripts/engine-smoke.sh."
	echo "# pread64 calls on the model: $(grep -c '^pread64' "$dir/strace-model.txt" || true)"
	cat "$dir/strace-model.txt"
} >results/engine-strace.txt

# 4. The qwen2.5-3b preset, cold (page cache dropped) then warm.
declare -A big
for q in q4km q8_0; do
	f=$dir/qwen2.5-3b-$q.gguf
	t0=$(date +%s.%N)
	$R bench mkgguf --preset qwen2.5-3b --quant $q --seed 1 --out "$f" >/dev/null
	big[$q.write_s]=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
	big[$q.bytes]=$(stat -c %s "$f")
	sync
	echo 1 >/proc/sys/vm/drop_caches
	big[$q.cold]=$($D "$f" --tokens "$tokens" --threads "$threads") || fail "llama-driver on $f (cold) failed"
	big[$q.warm]=$($D "$f" --tokens "$tokens" --threads "$threads") || fail "llama-driver on $f (warm) failed"
	[ "$(idhash "${big[$q.cold]}")" = "$(idhash "${big[$q.warm]}")" ] ||
		fail "$q: cold and warm runs differ: ${big[$q.cold]} / ${big[$q.warm]}"
	if [ "$threads" -ne 1 ]; then
		big[$q.one]=$($D "$f" --tokens "$tokens" --threads 1) || fail "llama-driver on $f (1 thread) failed"
		[ "$(idhash "${big[$q.cold]}")" = "$(idhash "${big[$q.one]}")" ] ||
			fail "$q: $threads threads and 1 differ: ${big[$q.cold]} / ${big[$q.one]}"
	fi
	rm -f "$f"
done

# 5. The record.
row() { # label, json
	printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' "$1" \
		"$(field .threads "$2")" "$(field .load_s "$2")" "$(field .prompt_s "$2")" \
		"$(field .decode_s "$2")" "$(field .tokens_per_s "$2")" \
		"$(field .read_bytes_load "$2")" "$(field .read_bytes "$2")"
}
{
	echo "# The real engine on the project's models (plain mmap)"
	echo
	echo "Made by \`scripts/engine-smoke.sh\` on $(date -u +%Y-%m-%d), $(machine), load $(load);"
	echo "llama.cpp of npm's node-llama-cpp 3.22.1 (docs/engine.md), CPU backend"
	echo "\`$(field .cpu_backend "${line[tiny.t1a]}")\`. Benchmarks, not tests: the times move with the"
	echo "machine's load; the ids and hashes must not move at all."
	echo
	echo "## Same bytes, same tokens"
	echo
	echo "- \`bench mkgguf --preset tiny --seed 1\` written twice: the same $tiny_bytes bytes,"
	echo "  sha256 \`$tiny_sha...\` (their FNV-1a 64 is pinned in harness/tests/test_gguf.c)."
	for m in tiny tiny-q4km; do
		echo "- \`$m.gguf\` ($(field .desc "${line[$m.t1a]}"), $(field .n_params "${line[$m.t1a]}") parameters), 32 tokens:"
		echo "  1 thread twice and 2 threads once gave the same ids and logits hash"
		echo "  \`$(field .logits_fnv1a64 "${line[$m.t1a]}")\`; ids \`$(jq -c .tokens <<<"${line[$m.t1a]}")\`."
	done
	echo
	echo "## qwen2.5-3b preset, $tokens tokens"
	echo
	echo "Cold: \`echo 1 > /proc/sys/vm/drop_caches\` before the run; warm: the run after it."
	echo "tokens/s counts the prompt's pass (one forward pass per token generated)."
	echo "read_bytes is \`/proc/self/io\` after the load and at the end."
	echo
	echo "| model | threads | load s | prompt s | decode s | tokens/s | read_bytes after load | read_bytes at end |"
	echo "|---|---|---|---|---|---|---|---|"
	for q in q4km q8_0; do
		row "$q cold" "${big[$q.cold]}"
		row "$q warm" "${big[$q.warm]}"
		[ -z "${big[$q.one]:-}" ] || row "$q warm" "${big[$q.one]}"
	done
	echo
	for q in q4km q8_0; do
		j=${big[$q.cold]}
		echo "- $q: $(field .file_bytes "$j") bytes ($(awk -v b="$(field .file_bytes "$j")" 'BEGIN { printf "%.2f", b / 1073741824 }') GiB, written in ${big[$q.write_s]} s),"
		echo "  \"$(field .desc "$j")\", $(field .n_params "$j") parameters; cold, warm and 1 thread: the same ids and"
		echo "  logits hash \`$(field .logits_fnv1a64 "$j")\`, ids \`$(jq -c .tokens <<<"$j")\`."
	done
	echo
	echo "## The calls on the mapping"
	echo
	echo "[engine-strace.txt](engine-strace.txt): the tiny model under \`strace -f\`, every call on the"
	echo "model's file descriptor and on its mapping; docs/engine.md reads it."
} >results/engine.md
echo "engine-smoke: results/engine.md, results/engine-strace.txt"
