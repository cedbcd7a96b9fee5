#!/usr/bin/env bash
# The real engine's fetch at a device class, into results/engine-fetch.md
# and results/engine-fetch.csv: the qwen2.5-3b q4km preset decoded by
# llama-driver under `residctl run` (policy declared) and under the
# kernel's mmap in a memory cgroup of the same limit (run's cgroup limit:
# budget + headroom + margin), at RATIOS of the file, every run with its
# reads throttled by a cgroup v1 blkio group (BPS bytes/s on the model's
# disk; 576716800, ~550 MB/s, a SATA SSD; 0: the host's speed). BEFORE=PATH
# adds the arm of another residctl build (e.g. an export of an older
# commit, built) beside this one. The device-alone rate is dd's O_DIRECT
# read of the whole model, 8 MiB blocks, in the same group. Each run is
# cold (drop_caches) and bounded by `timeout` (RUN_S, 900). TOKENS (3),
# THREADS (2), MARGIN (256M), PREFETCH (run's --prefetch, 2) change the
# runs. Device bytes: what the blkio group read from the disk in the run. OPT: `residctl belady`'s
# lower bound over the declared order of run's chunks, one pass a token, at
# the budget. Needs root and cgroup v1.
# shellcheck source=scripts/lib/common.sh
. "$(dirname "$0")/lib/common.sh"
prologue

engine_prologue engine-fetch
dir=build/engine-fetch # a real disk, not tmpfs: its page cache is dropped
tokens=${TOKENS:-3}
threads=${THREADS:-2}
ratios=${RATIOS:-0.25 0.5 0.75}
bps=${BPS:-576716800}
margin=${MARGIN:-256M}
run_s=${RUN_S:-900}
before=${BEFORE:-}
prefetch=${PREFETCH:-2}
blk=/sys/fs/cgroup/blkio/engine-fetch-$$
mem=/sys/fs/cgroup/memory/engine-fetch-$$-mmap
f=$dir/qwen2.5-3b-q4km.gguf
fail() { echo "engine-fetch: $*" >&2; exit 1; }
say() { echo "engine-fetch: [$((SECONDS - t_start)) s] $*" >&2; }
cold() { sync; echo 1 >/proc/sys/vm/drop_caches; }
field() { jq -r "$1" <<<"$2"; }
if [ ! -d /sys/fs/cgroup/blkio ] || [ ! -d /sys/fs/cgroup/memory ]; then
	echo "engine-fetch: needs cgroup v1's blkio and memory hierarchies under /sys/fs/cgroup" >&2
	exit 2
fi
[ -z "$before" ] || [ -x "$before" ] ||
	{ echo "engine-fetch: BEFORE=$before is not an executable residctl; give a built one" >&2; exit 2; }
cleanup() {
	echo $$ >/sys/fs/cgroup/blkio/cgroup.procs 2>/dev/null || true
	rmdir "$blk" "$mem" 2>/dev/null || true
	rm -f "$f"
}
trap cleanup EXIT
t_start=$SECONDS
mkdir -p "$dir"
say "writing the model (bench mkgguf --preset qwen2.5-3b --quant q4km --seed 1)"
$R bench mkgguf --preset qwen2.5-3b --quant q4km --seed 1 --out "$f" >/dev/null
bytes=$(stat -c %s "$f")
cold
ref=$(timeout "$run_s" $D "$f" --tokens "$tokens" --threads "$threads") ||
	fail "llama-driver on $f under the kernel's mmap failed"
say "reference (mmap, no limit, host speed): ids $(jq -c .tokens <<<"$ref"), $(field .tokens_per_s "$ref") tokens/s"

# From here on every read of this shell's children is throttled.
mkdir "$blk"
src=$(df --output=source "$dir" | tail -n1)
parent=$(lsblk -no PKNAME "$src" 2>/dev/null || true)
majmin=$(lsblk -dno MAJ:MIN "/dev/${parent:-$(basename "$src")}" | tr -d ' ')
[ "$bps" -eq 0 ] || echo "$majmin $bps" >"$blk/blkio.throttle.read_bps_device"
echo $$ >"$blk/cgroup.procs"
cold
dd_rate=$(dd if="$f" of=/dev/null bs=8M iflag=direct 2>&1 | awk '/copied/ { printf "%.0f", $1 / $(NF-3) / 1e6 }')
say "device alone (dd O_DIRECT, 8 MiB): $dd_rate MB/s (throttle ${bps} B/s)"

csv=results/engine-fetch.csv
echo "ratio,arm,budget,cgroup_limit,tokens,tokens_per_s,driver_s,tokens_per_driver_s,read_bytes,read_bytes_per_token,device_bytes,device_mb_per_driver_s,fetches,opt_bound_bytes_per_token,same,seconds" >"$csv.tmp"
rows=()
# opt_bound JSON: the bytes OPT's lower bound misses over JSON's chunks in
# its declared order, one pass a token, at its budget.
opt_bound() {
	local n
	n=$(jq '.order | length' "$1")
	{
		echo "residctl-trace 1 reference"
		echo "chunks $(jq '.chunks | length' "$1")"
		jq -r '.chunks | to_entries[] | "size \(.key) \(((.value[1] + 4095) / 4096 | floor) * 4096)"' "$1"
		echo "accesses $((n * tokens))"
		for _ in $(seq "$tokens"); do jq -r '.order[]' "$1"; done
	} >"$dir/trace"
	$R belady "$dir/trace" --capacity "$(jq .budget "$1")" | awk '$1 == "bound" { print $NF }'
}
# The bytes the blkio group has read from the disk.
device_read() {
	awk -v d="$majmin" '$1 == d && $2 == "Read" { print $3 }' "$blk/blkio.throttle.io_service_bytes"
}
# arm NAME RATIO CMD...: one cold run; sets out, s.
arm() {
	local name=$1 ratio=$2 ex=0 t0=$SECONDS dev0
	shift 2
	cold
	dev0=$(device_read)
	out=$(timeout "$run_s" "$@" 2>"$dir/err") || ex=$?
	s=$((SECONDS - t0))
	[ "$ex" -eq 0 ] || fail "$name at $ratio: exit $ex: $(tail -n2 "$dir/err")"
	local same=no rb fe='' opt='' dev ds
	dev=$(($(device_read) - dev0))
	# the driver's own time: mmap's MAP_POPULATE reads in its load
	ds=$(jq '.load_s + .prompt_s + .decode_s' <<<"$out")
	[ "$(jq -c .tokens <<<"$out")" = "$(jq -c .tokens <<<"$ref")" ] &&
		[ "$(field .logits_fnv1a64 "$out")" = "$(field .logits_fnv1a64 "$ref")" ] && same=yes
	rb=$(field .read_bytes "$out")
	if [ "$name" != mmap ]; then
		fe=$(jq .total.fetches "$dir/run.json")
		budget=$(jq .budget "$dir/run.json")
		limit=$(jq .cgroup_limit "$dir/run.json")
		opt=$(($(opt_bound "$dir/run.json") / tokens))
	fi
	say "$name at $ratio: $(field .tokens_per_s "$out") tokens/s, $((rb / tokens)) bytes a token, same $same, $s s"
	local tds mbs
	tds=$(awk -v t="$tokens" -v d="$ds" 'BEGIN { printf "%.3f", t / d }')
	mbs=$(awk -v b="$dev" -v d="$ds" 'BEGIN { printf "%.0f", b / d / 1e6 }')
	echo "$ratio,$name,$budget,$limit,$tokens,$(field .tokens_per_s "$out"),$ds,$tds,$rb,$((rb / tokens)),$dev,$mbs,$fe,$opt,$same,$s" >>"$csv.tmp"
	rows+=("| $ratio | $name | $(field .tokens_per_s "$out") | $tds | $((rb / tokens)) | ${opt:+$opt ($(awk -v a="$rb" -v b="$opt" -v t="$tokens" 'BEGIN { printf "%.2fx", a / t / b }'))} | $mbs | $fe | $same |")
}
for ratio in $ratios; do
	for bin in $before $R; do
		name=run
		[ "$bin" = "$R" ] || name=before
		arm "$name" "$ratio" "$bin" run --file "$f" --ratio "$ratio" --policy declared --prefetch "$prefetch" \
			--margin "$margin" --json "$dir/run.json" -- $D "$f" --tokens "$tokens" --threads "$threads"
	done
	mkdir "$mem"
	echo "$limit" >"$mem/memory.limit_in_bytes"
	[ ! -e "$mem/memory.memsw.limit_in_bytes" ] || echo "$limit" >"$mem/memory.memsw.limit_in_bytes"
	# shellcheck disable=SC2016 # the inner shell's own pid
	arm mmap "$ratio" sh -c 'echo $$ >"$0/cgroup.procs" && exec "$@"' "$mem" \
		$D "$f" --tokens "$tokens" --threads "$threads"
	rmdir "$mem"
done
mv "$csv.tmp" "$csv"

{
	echo "# The real engine's fetch at a device class: qwen2.5-3b q4km"
	echo
	echo "Made by \`scripts/engine-fetch.sh\` (TOKENS=$tokens THREADS=$threads RATIOS=\"$ratios\""
	echo "BPS=$bps MARGIN=$margin PREFETCH=$prefetch${before:+ BEFORE=$before}) on $(date -u +%Y-%m-%d), $(machine),"
	echo "load $(load) at the end; $((SECONDS - t_start)) s in all; the figures are in"
	echo "[engine-fetch.csv](engine-fetch.csv). The model: $bytes bytes."
	echo
	echo "Every run's reads go through a cgroup v1 blkio group throttled to $bps bytes/s"
	echo "on the model's disk (0: not throttled); the device alone there (dd, O_DIRECT,"
	echo "8 MiB blocks, the whole model, cold) read $dd_rate MB/s. *run* is"
	echo "\`residctl run --policy declared --prefetch $prefetch\` at the ratio of the file; *mmap* is the driver"
	echo "under the kernel's mmap in a memory cgroup whose limit is run's cgroup limit"
	echo "(budget + headroom + --margin)${before:+; *before* is \`$before\`}. Each run is cold;"
	echo "bytes a token are the driver's read_bytes (\`/proc/self/io\`) over the $tokens"
	echo "tokens (the prompt's pass, which reads the whole file once, is one of them);"
	echo "*same*: the ids and the logits hash of the unthrottled, unlimited mmap run."
	echo "OPT: \`residctl belady\`'s lower bound over run's chunks in their declared order,"
	echo "one pass a token, at the budget (the order, not a recording of the engine's"
	echo "touches)."
	echo "Benchmarks, not tests: the times move with the machine's load."
	echo
	echo "*tokens/s* is the driver's (prompt and decode); *a driver s*: tokens over"
	echo "load + prompt + decode (mmap's MAP_POPULATE reads the file in its load, which"
	echo "the pager strips); *device MB/s*: what the blkio group read from the disk over"
	echo "that time."
	echo
	echo "| ratio | arm | tokens/s | tokens a driver s | bytes a token | OPT bound a token (arm / OPT) | device MB/s | fetches | same |"
	echo "|---|---|---|---|---|---|---|---|---|"
	printf '%s\n' "${rows[@]}"
	echo
	echo "Rerun: \`scripts/engine-fetch.sh\` (root)."
} >results/engine-fetch.md
say "results/engine-fetch.md, $csv"
