#!/usr/bin/env bash
# The harness's own throughput (design.md §8) in results/bench-harness.md:
#   the wall time of the quick T-1..T-7 gate (residctl check),
#   schedules per second of T-3 on the simulated kernel, one core (as in
#   scripts/record-sim.sh),
#   time-to-detect of the seven bugs, from results/bugs.json when the kill
#   matrix has written it.
# shellcheck source=scripts/lib/common.sh
. "$(dirname "$0")/lib/common.sh"
prologue
out=results/bench-harness.md
t0=$(date +%s.%N)
gate=$(build/residctl check 2>&1) || { echo "$gate"; echo "bench-harness: the gate failed" >&2; exit 1; }
t1=$(date +%s.%N)
{
	echo "# Harness throughput"
	echo
	echo "\`scripts/bench-harness.sh\` on $(machine), $(date -u +%Y-%m-%d)."
	echo
	echo "## The quick gate T-1..T-7"
	echo
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "Wall time of `residctl check` (quick profile, every scenario in its own cgroup): **%.1f s**.\n\n", b - a }'
	echo '```'
	echo "$gate" | tail -n 9
	echo '```'
	echo
	echo "## T-3 on the simulated kernel, one core (taskset -c 0), seed 1"
	echo
	echo '```'
	for strategy in random pct:3; do
		taskset -c 0 build/residctl explore T-3 --strategy "$strategy" \
			--schedules 5000 --seed 1
	done
	echo '```'
	echo
	echo "## Time to detect the seven bugs (kill matrix)"
	echo
	if [ -f results/bugs.json ]; then
		echo "From \`results/bugs.json\` (\`scripts/kill-matrix.sh\`; the full"
		echo "matrix with oracles and replay lines is \`results/bugs.md\`):"
		echo
		echo "| bug | detector | detected | schedules to detect (median / worst) | s to detect (median) |"
		echo "|---|---|---|---|---|"
		# One line per bug, then one per detector, as cmd_matrix.c writes them.
		awk '
		function num(key,   r) {
			if (!match($0, "\"" key "\": [0-9.]+")) return "";
			r = substr($0, RSTART, RLENGTH); sub(/.*: /, "", r); return r
		}
		/"bug": / { bug = num("bug"); title = $0
			sub(/.*"title": "/, "", title); sub(/".*/, "", title) }
		/"(sched_pct|sched_random|storm|tsan)": / {
			det = $0; sub(/^ *"/, "", det); sub(/".*/, "", det)
			printf "| %s %s | %s | %s/%s | %s / %s | %s |\n", bug, title,
				det, num("detected"), num("runs"),
				num("schedules_median"), num("schedules_worst"),
				num("seconds_median")
		}' results/bugs.json
	else
		echo "Not yet measured: \`results/bugs.json\` (the kill matrix) does not exist."
	fi
} >"$out"
echo "bench-harness: $out"
