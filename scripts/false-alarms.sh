#!/usr/bin/env bash
# The false-alarm campaign of I-7: quick real-kernel storm rounds
# at each chunk size, without and with injected faults. A failed round is a
# false alarm unless it is a pager bug; the st_blocks lag that a page count
# disproved (design.md §2.6) is counted, not failed. Writes
# results/false-alarms.md and results/false-alarms.json.
# Usage: scripts/false-alarms.sh [ROUNDS_PER_CELL] [ROUND_SECONDS]
#        (defaults 100 and 2: 10 cells, about 40 minutes)
# shellcheck source=scripts/lib/common.sh
. "$(dirname "$0")/lib/common.sh"
target=${1:-100}
round=${2:-2}
case "$target$round" in
*[!0-9]*) echo "false-alarms: give whole numbers, e.g. 100 2" >&2; exit 2 ;;
esac
bash scripts/deps.sh
make -s all
out=build/false-alarms
rm -rf "$out"; mkdir -p "$out" results

field() { sed -n "s/^  \"$2\": \([0-9]*\),\$/\1/p" "$1"; }

rows=() total_rounds=0 total_failed=0 total_lag=0 cell=0
for chunk in 64K 128K 256K 1M 2M; do
	for faults in none all=0.01; do
		rounds=0 failed=0 lag=0 mism=0 part=0 cell=$((cell + 1))
		fopt=()
		[ "$faults" = none ] || fopt=(--fault "$faults")
		while [ "$rounds" -lt "$target" ]; do
			part=$((part + 1))
			left=$(( (target - rounds) * (round + 1) ))
			[ "$left" -le 120 ] || left=120
			j="$out/$chunk-${faults%%=*}-$part.json"
			rc=0
			build/residctl storm --round "$round" --duration "$left" \
				--chunk "$chunk" --seed "$((cell * 1000 + part))" "${fopt[@]}" \
				--json "$j" >"${j%.json}.txt" 2>&1 || rc=$?
			if [ "$rc" -gt 1 ] || [ ! -s "$j" ]; then
				echo "false-alarms: storm exited $rc; see ${j%.json}.txt" >&2
				exit 1
			fi
			rounds=$((rounds + $(field "$j" rounds)))
			failed=$((failed + $(field "$j" failed_rounds)))
			lag=$((lag + $(field "$j" st_blocks_lag)))
			mism=$((mism + $(field "$j" mismatches)))
			grep -h "FAILED" "${j%.json}.txt" >>"$out/failures.txt" || true
			printf '\r  chunk %-4s faults %-8s rounds %4d  failed %d  lag %d ' \
				"$chunk" "$faults" "$rounds" "$failed" "$lag" >&2
		done
		echo >&2
		rows+=("$chunk $faults $rounds $failed $mism $lag")
		total_rounds=$((total_rounds + rounds))
		total_failed=$((total_failed + failed))
		total_lag=$((total_lag + lag))
	done
done

{
	echo "# I-7 false alarms: quick storm rounds by chunk size"
	echo
	echo "\`scripts/false-alarms.sh $target $round\` on $(uname -r), revision" \
		"$(git describe --always --dirty --abbrev=12), $(date -u +%F)."
	echo "Rounds of $round s (\`residctl storm --round $round --chunk C\`:"
	echo "threads, workers, prefetch depth, budget and policy drawn per round),"
	echo "without faults and with every fault point at p = 0.01."
	echo "A failed round would be a false alarm (or a pager bug); \"st_blocks lag\""
	echo "counts the reconciles where st_blocks exceeded resident + reserved and"
	echo "an exact page count (SEEK_DATA/SEEK_HOLE) was inside the bounds: the"
	echo "kernel lowering i_blocks late after a punch (design.md §2.6)."
	echo
	echo "| chunk | faults | rounds | failed | mismatches | st_blocks lag |"
	echo "|---|---|---|---|---|---|"
	for r in "${rows[@]}"; do
		read -r -a c <<<"$r"
		set -- "${c[@]}"
		echo "| $1 | $2 | $3 | $4 | $5 | $6 |"
	done
	echo "| all | | $total_rounds | $total_failed | | $total_lag |"
	if [ -s "$out/failures.txt" ]; then
		echo
		echo "Failed rounds:"
		echo
		sed 's/^/    /' "$out/failures.txt"
	fi
} >results/false-alarms.md
{
	printf '{"rounds_per_cell": %d, "round_seconds": %d, "cells": [' "$target" "$round"
	sep=
	for r in "${rows[@]}"; do
		read -r -a c <<<"$r"
		set -- "${c[@]}"
		printf '%s{"chunk": "%s", "faults": "%s", "rounds": %d, "failed": %d, "mismatches": %d, "st_blocks_lag": %d}' \
			"$sep" "$1" "$2" "$3" "$4" "$5" "$6"
		sep=", "
	done
	printf '], "rounds": %d, "failed": %d, "st_blocks_lag": %d}\n' \
		"$total_rounds" "$total_failed" "$total_lag"
} >results/false-alarms.json
cat results/false-alarms.md
[ "$total_failed" -eq 0 ]
