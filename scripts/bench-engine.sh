#!/usr/bin/env bash
# The headline on a real engine: tokens/s of llama.cpp (the C driver) on the
# qwen2.5-3b preset of `bench mkgguf` against the budget, per device class,
# into results/bench-engine.csv (and bench-engine-fetch.csv: bench fetch
# under each class), results/bench-engine.md, the figure
# results/bench-engine.png (tokens/s against the budget, an arm a line, a
# class a panel) and the targets table of results/performance.md. Arms:
#   A  the kernel's mmap in the same cgroup (run --kernel-mmap), the best of
#      its advice variants (ADVICE)
#   C  the pager, lru          D  the pager, the declared (GGUF) order
#   E  D with prefetch (PREFETCH) and B in huge folios where THP allows
# at each ratio of the file, under each class; the device alone (bench
# device) in the same rotation. REPS rounds, each running every class,
# ratio and arm once (interleaved), the page cache dropped before each run.
# Per run: tokens/s decoding (the steps after the prompt's, over their time:
# the rate the budget decides; the driver's own figure, which counts the
# prompt's cold pass, is in the CSV too) and read_bytes (/proc/PID/io of the
# engine, which counts the pager's reads: it runs in the engine's process);
# the token ids and logits hash against an unlimited mmap run; OPT bytes per
# token from the engine's own chunk reference trace (run --trace at that
# ratio, whose chunks it records) by residctl belady's furthest-next-use at
# the budget.
# CLASSES ("sata nvme3 host"), RATIOS ("0.25 0.5 0.75 0.9"), ARMS ("A C D
# E"), ADVICE ("normal sequential": random turns readahead off, every miss
# a 4 KiB read), REPS (3), TOKENS (4), THREADS (2), QUANT (q4km), PREFETCH
# (1) change the runs; RUN_S (900) bounds each.
# Needs root and what scripts/engine.sh needs.
# shellcheck source=scripts/lib/common.sh
. "$(dirname "$0")/lib/common.sh"
prologue gnuplot-nox jq
engine_prologue bench-engine
dir=build/bench-engine # a real disk, not tmpfs: its page cache is dropped
classes=${CLASSES:-sata nvme3 host}
ratios=${RATIOS:-0.25 0.5 0.75 0.9}
arms=${ARMS:-A C D E}
advice=${ADVICE:-normal sequential}
reps=${REPS:-3}
tokens=${TOKENS:-4}
threads=${THREADS:-2}
quant=${QUANT:-q4km}
prefetch=${PREFETCH:-1}
run_s=${RUN_S:-900}
mkdir -p "$dir"
scratch "$dir/huge"
t_start=$SECONDS
fail() { echo "bench-engine: $*" >&2; exit 1; }
say() { echo "bench-engine: [$((SECONDS - t_start)) s] $*" >&2; }
cold() { sync; echo 1 >/proc/sys/vm/drop_caches; }
field() { jq -r "$1" <<<"$2"; }

f=$dir/qwen2.5-3b-$quant.gguf
say "the model (bench mkgguf --preset qwen2.5-3b --quant $quant --seed 1)"
$R bench mkgguf --preset qwen2.5-3b --quant "$quant" --seed 1 --out "$f" >/dev/null
bytes=$(stat -c %s "$f")

# E's B in huge folios where the kernel has THP for tmpfs.
huge=()
if [ -e /sys/kernel/mm/transparent_hugepage/shmem_enabled ]; then
	mkdir -p "$dir/huge"
	mountpoint -q "$dir/huge" || mount -t tmpfs -o huge=within_size tmpfs "$dir/huge"
	huge=(--huge-dir "$PWD/$dir/huge")
	trap 'umount "$dir/huge" 2>/dev/null; rm -rf "$tmp" "$dir/huge"' EXIT
fi

cold
say "the reference: the kernel's mmap, no limit, cold"
mmap_reference "$f"
# The engine's own memory and 64 MiB: what the cgroup holds beyond the
# budget and the pager's headroom is page cache to arm A, so a wide margin
# would give the kernel's mmap a larger budget than the pager's.
margin=$(((own + 1048575) / 1048576 + 64))
ref_ids=$(jq -c .tokens <<<"$ref")
ref_hash=$(field .logits_fnv1a64 "$ref")
say "ids $ref_ids, hash $ref_hash, $(field .tokens_per_s "$ref") tokens/s; --margin ${margin}M"

# A trace a ratio: its chunks are those run cuts for that budget.
for ratio in $ratios; do
	say "the engine's chunk references at $ratio (run --trace), for OPT"
	timeout "$run_s" "$R" run --file "$f" --ratio "$ratio" --trace "$dir/trace-$ratio" \
		--margin "${margin}M" -- "$D" "$f" --tokens "$tokens" --threads "$threads" \
		>/dev/null 2>"$dir/err" || fail "run --trace at $ratio: $(tail -n2 "$dir/err")"
done

csv=results/bench-engine.csv
echo "rep,class,device_mbps,ratio,arm,advice,budget,tokens,decode_tokens_per_s,tokens_per_s,read_bytes,read_bytes_per_token,opt_bytes_per_token,fetches,fetch_bytes,same,seconds" >"$csv.tmp"

# one_run REP CLASS MBPS RATIO ARM [ADVICE]: one cold run, one CSV row.
one_run() {
	local rep=$1 class=$2 mbps=$3 ratio=$4 arm=$5 adv=${6:-} opts out ex=0 t0 same opt='' dec
	case $arm in
	A) opts=(--kernel-mmap --advice "$adv") ;;
	C) opts=(--policy lru --prefetch 0) ;;
	D) opts=(--policy declared --prefetch 0) ;;
	E) opts=(--policy declared --prefetch "$prefetch" "${huge[@]}") ;;
	esac
	cold
	t0=$SECONDS
	out=$(timeout "$run_s" "$R" run --file "$f" --ratio "$ratio" --margin "${margin}M" \
		--device-class "$class" --json "$dir/run.json" "${opts[@]}" -- \
		"$D" "$f" --tokens "$tokens" --threads "$threads" 2>"$dir/err") || ex=$?
	[ "$ex" -eq 0 ] || fail "$arm$adv at $ratio on $class: exit $ex: $(tail -n2 "$dir/err")"
	same=no
	[ "$(jq -c .tokens <<<"$out")" = "$ref_ids" ] && [ "$(field .logits_fnv1a64 "$out")" = "$ref_hash" ] && same=yes
	local budget rb fe fb
	budget=$(jq .budget "$dir/run.json")
	rb=$(field .read_bytes "$out")
	fe=$(jq '.total.fetches // 0' "$dir/run.json")
	fb=$(jq '.total.fetch_bytes // 0' "$dir/run.json")
	opt=$($R belady "$dir/trace-$ratio" --capacity "$budget" | awk '$1 == "fnu" { print $NF }')
	opt=$((opt / tokens))
	dec=$(jq -r '(.n_tokens - 1) / .decode_s * 1000 | round / 1000' <<<"$out")
	echo "$rep,$class,$mbps,$ratio,$arm,$adv,$budget,$tokens,$dec,$(field .tokens_per_s "$out"),$rb,$((rb / tokens)),$opt,$fe,$fb,$same,$((SECONDS - t0))" >>"$csv.tmp"
	say "rep $rep $class $ratio $arm$adv: $dec tokens/s decoding ($(field .tokens_per_s "$out") with the prompt), $((rb / tokens >> 20)) MiB a token, same $same"
}

for rep in $(seq "$reps"); do
	for class in $classes; do
		cold
		$R bench device --file "$f" --device-class "$class" --seconds 3 --json "$dir/device.json" >/dev/null ||
			fail "bench device on $class"
		mbps=$(jq .device_mbps "$dir/device.json")
		say "rep $rep $class: the device alone $mbps MB/s"
		for ratio in $ratios; do
			for arm in $arms; do
				if [ "$arm" = A ]; then
					for a in $advice; do one_run "$rep" "$class" "$mbps" "$ratio" A "$a"; done
				else
					one_run "$rep" "$class" "$mbps" "$ratio" "$arm"
				fi
			done
		done
	done
done
mv "$csv.tmp" "$csv"

# The pager's fetch against the device alone under each class (bench fetch:
# its modes alternate rep by rep on a file of its own).
fcsv=results/bench-engine-fetch.csv
rm -f "$fcsv"
for class in $classes; do
	say "$class: bench fetch (device, ahead, prefetch)"
	$R bench fetch --sizes "${FETCH_SIZES:-8M,32M}" --total 1G --reps "$reps" \
		--modes device,ahead,prefetch --device-class "$class" --dir "$dir" \
		--csv "$dir/fetch.csv" >/dev/null || fail "bench fetch on $class"
	if [ -f "$fcsv" ]; then tail -n +2 "$dir/fetch.csv" >>"$fcsv"; else cp "$dir/fetch.csv" "$fcsv"; fi
done
bash scripts/bench-engine-report.sh "$csv" "$fcsv" "$bytes" "$ref_ids" "$ref_hash" "$((SECONDS - t_start))"
