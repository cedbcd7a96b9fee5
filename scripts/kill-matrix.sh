#!/usr/bin/env bash
# The kill matrix (design.md §6): every bug switched on alone, and all
# off, against the scheduler (PCT and random walk, 20 seeds), the real-kernel
# storm and TSan (3 runs each). Writes results/bugs.md and results/bugs.json.
# Takes about a quarter of an hour on 2 cores; root for the real-kernel runs.
# Then scripts/bugs-before-after.sh appends the schedules to detect of
# revision BEFORE (default e47aa1e, the last whose hunts gave bugs 7 and 8
# faults and a chunk size of their own) beside this run's.
# Arguments go to residctl matrix (e.g. --no-real --seeds 10).
# shellcheck source=scripts/lib/common.sh
. "$(dirname "$0")/lib/common.sh"
before=${BEFORE:-e47aa1e}
bash scripts/deps.sh
# TSan only for the real-kernel cells.
if [[ " $* " == *" --no-real "* ]]; then make -s all; else make -s all tsan; fi
build/residctl matrix --seeds "${SEEDS:-20}" --runs "${RUNS:-3}" \
	--md results/bugs.md --json results/bugs.json "$@" || rc=$?
bash scripts/bugs-before-after.sh "$before"
exit "${rc:-0}"
