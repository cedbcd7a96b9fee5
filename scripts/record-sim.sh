#!/usr/bin/env bash
# Records the simulated kernel's figures in results/:
#   sim-bench.txt      schedules per second of T-3 on one core (taskset -c 0)
#   sim-campaign.txt   100,000 schedules across the gate's scenarios with the
#                      real pager and no bug: the no-false-positive row
# Usage: scripts/record-sim.sh [TOTAL_SCHEDULES]   (default 100000)
# shellcheck source=scripts/lib/common.sh
. "$(dirname "$0")/lib/common.sh"
total=${1:-100000}
prologue
{
	echo "# T-3 on the simulated kernel, one core (taskset -c 0), seed 1"
	for strategy in random pct:3; do
		taskset -c 0 build/residctl explore T-3 --strategy "$strategy" \
			--schedules 5000 --seed 1
	done
} | tee results/sim-bench.txt
# Six scenarios, both strategies: total/12 schedules per campaign.
per=$(((total + 11) / 12))
{
	echo "# $((per * 12)) schedules, real pager, no bug switched on"
	for scen in T-1 T-2 T-3 T-4 T-6 T-7; do
		for strategy in random pct:3; do
			build/residctl explore "$scen" --strategy "$strategy" \
				--schedules "$per" --seed 2026
		done
	done
} | tee results/sim-campaign.txt
