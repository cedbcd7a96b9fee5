#!/usr/bin/env bash
# The real engine through the pager on a 3B model, into results/engine-run.md
# and results/engine-run.csv: the qwen2.5-3b preset of `bench mkgguf`
# decoded by llama-driver under the kernel's mmap, then under `residctl
# run` (policy declared) at ratios 0.25, 0.5, 0.75 and 0.9 of the file; at
# each the token ids and logits hash against the mmap run's, tokens/s,
# bytes read per token (read_bytes of /proc/self/io, which counts the
# pager's reads too: it runs in the engine's process) and run's fetches.
# The page cache is dropped before every run (root). --margin is measured:
# twice the engine's own resident memory under mmap (its peak RSS less the
# file, which MAP_POPULATE made resident), at least 256 MiB.
# QUANTS ("q4km q8_0"), TOKENS (8), THREADS (2), RATIOS change the runs.
# Needs root and what scripts/engine.sh needs (exit 2 when it cannot
# install the engine). Each run is bounded by `timeout` (RUN_S, 1800).
# shellcheck source=scripts/lib/common.sh
. "$(dirname "$0")/lib/common.sh"
prologue

engine_prologue engine-run
dir=build/engine-run # a real disk, not tmpfs: its page cache is dropped
quants=${QUANTS:-q4km q8_0}
tokens=${TOKENS:-8}
threads=${THREADS:-2}
ratios=${RATIOS:-0.25 0.5 0.75 0.9}
run_s=${RUN_S:-1800}
mkdir -p "$dir"
scratch "$dir"
t_start=$SECONDS
fail() { echo "engine-run: $*" >&2; exit 1; }
say() { echo "engine-run: [$((SECONDS - t_start)) s] $*" >&2; }
cold() { sync; echo 1 >/proc/sys/vm/drop_caches; }
field() { jq -r "$1" <<<"$2"; }
csv=results/engine-run.csv
echo "quant,file_bytes,mode,ratio,policy,budget,margin,tokens,threads,same_ids,same_hash,tokens_per_s,read_bytes,read_bytes_per_token,fetches,fetch_bytes,exit,seconds" >"$csv.tmp"
rows=()
hashes=()

for q in $quants; do
	f=$dir/qwen2.5-3b-$q.gguf
	say "$q: writing the model (bench mkgguf --preset qwen2.5-3b --quant $q --seed 1)"
	$R bench mkgguf --preset qwen2.5-3b --quant "$q" --seed 1 --out "$f" >/dev/null
	bytes=$(stat -c %s "$f")
	cold
	say "$q: the kernel's mmap, cold"
	t0=$SECONDS
	mmap_reference "$f"
	ref_s=$((SECONDS - t0))
	margin=$(((2 * own + 1048575) / 1048576))
	[ "$margin" -ge 256 ] || margin=256
	say "$q: ids $(jq -c .tokens <<<"$ref"), hash $(field .logits_fnv1a64 "$ref"), $(field .tokens_per_s "$ref") tokens/s; peak RSS $rss_kb KiB, $((own >> 20)) MiB beside the file: --margin ${margin}M"
	rb=$(field .read_bytes "$ref")
	echo "$q,$bytes,mmap,,,,,$tokens,$threads,yes,yes,$(field .tokens_per_s "$ref"),$rb,$((rb / tokens)),,,0,$ref_s" >>"$csv.tmp"
	rows+=("| $q | mmap | | $(field .tokens_per_s "$ref") | $rb | $((rb / tokens)) | | | $ref_s | yes |")
	for ratio in $ratios; do
		cold
		say "$q: residctl run --ratio $ratio --policy declared, cold"
		t0=$SECONDS
		ex=0
		out=$(timeout "$run_s" $R run --file "$f" --ratio "$ratio" --policy declared \
			--margin "${margin}M" --json "$dir/run.json" -- \
			$D "$f" --tokens "$tokens" --threads "$threads" 2>"$dir/err") || ex=$?
		s=$((SECONDS - t0))
		[ "$ex" -eq 0 ] || fail "$q at $ratio: exit $ex: $(tail -n2 "$dir/err")"
		ids=no hash=no
		[ "$(jq -c .tokens <<<"$out")" = "$(jq -c .tokens <<<"$ref")" ] && ids=yes
		[ "$(field .logits_fnv1a64 "$out")" = "$(field .logits_fnv1a64 "$ref")" ] && hash=yes
		rb=$(field .read_bytes "$out")
		fe=$(jq .total.fetches "$dir/run.json")
		fb=$(jq .total.fetch_bytes "$dir/run.json")
		budget=$(jq .budget "$dir/run.json")
		say "$q at $ratio: ids $ids, hash $hash, $(field .tokens_per_s "$out") tokens/s, $fe fetches, $s s"
		echo "$q,$bytes,run,$ratio,declared,$budget,$((margin << 20)),$tokens,$threads,$ids,$hash,$(field .tokens_per_s "$out"),$rb,$((rb / tokens)),$fe,$fb,$ex,$s" >>"$csv.tmp"
		rows+=("| $q | run $ratio | $budget | $(field .tokens_per_s "$out") | $rb | $((rb / tokens)) | $fe | $fb | $s | $([ "$ids$hash" = yesyes ] && echo yes || echo "**no** (ids $ids, hash $hash)") |")
	done
	hashes+=("- $q: $bytes bytes, \"$(field .desc "$ref")\"; under mmap ids \`$(jq -c .tokens <<<"$ref")\`, logits hash \`$(field .logits_fnv1a64 "$ref")\`; --margin ${margin}M (peak RSS $rss_kb KiB under mmap, less the file)")
	rm -f "$f"
done
mv "$csv.tmp" "$csv"

{
	echo "# The real engine through the pager: qwen2.5-3b preset"
	echo
	echo "Made by \`scripts/engine-run.sh\` (QUANTS=\"$quants\" TOKENS=$tokens THREADS=$threads"
	echo "RATIOS=\"$ratios\") on $(date -u +%Y-%m-%d), $(machine), load $(load) at the end;"
	echo "$((SECONDS - t_start)) s in all. llama.cpp of npm's node-llama-cpp 3.22.1 (docs/engine.md),"
	echo "CPU backend \`$(field .cpu_backend "$ref")\`; the figures are in [engine-run.csv](engine-run.csv)."
	echo
	echo "Each row is one cold run (\`echo 1 > /proc/sys/vm/drop_caches\` before it): the"
	echo "driver under the kernel's mmap, then under \`residctl run --policy declared\` with"
	echo "the budget the ratio of the file. *same* compares the token ids and the hash of"
	echo "every step's logits with the mmap run's. read_bytes is the driver's"
	echo "\`/proc/self/io\`, which counts the pager's reads (it runs in the driver's"
	echo "process); per token: divided by the $tokens tokens (the prompt's pass is one"
	echo "of them). fetches and fetch bytes are run's \`--json\` totals. Benchmarks, not"
	echo "tests: the times move with the machine's load; the ids and hashes must not."
	echo
	echo "| model | mode | budget | tokens/s | read_bytes | per token | fetches | fetch bytes | s | same |"
	echo "|---|---|---|---|---|---|---|---|---|---|"
	printf '%s\n' "${rows[@]}"
	echo
	printf '%s\n' "${hashes[@]}"
	echo
	echo "Rerun: \`scripts/engine-run.sh\` (root)."
} >results/engine-run.md
say "results/engine-run.md, $csv"
