#!/usr/bin/env bash
# The long real-kernel runs (the full profile), recorded in results/:
#   the full-profile storms (60 s each, 120 s watchdog) and a storm with
#   every fault point at p=0.01. Takes about DURATION + 4 minutes.
# Usage: scripts/record-storms.sh [DURATION_SECONDS]   (default 600)
# shellcheck source=scripts/lib/common.sh
. "$(dirname "$0")/lib/common.sh"
duration=${1:-600}
prologue
build/residctl probe >results/probe.txt || true
build/residctl check --profile full T-3 T-6 T-7 --json results/storms-full.json \
	| tee results/storms-full.txt
build/residctl storm --duration "$duration" --seed 2026 --fault all=0.01 \
	--json results/storm-faults.json | tee results/storm-faults.txt
