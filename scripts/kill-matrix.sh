#!/usr/bin/env bash
# The kill matrix (SPEC §6, issue 5): every bug switched on alone, and all
# off, against the scheduler (PCT and random walk, 20 seeds), the real-kernel
# storm and TSan (3 runs each). Writes results/bugs.md and results/bugs.json.
# Takes about a quarter of an hour on 2 cores; root for the real-kernel runs.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
make -s all tsan
build/residctl matrix --seeds "${SEEDS:-20}" --runs "${RUNS:-3}" \
	--md results/bugs.md --json results/bugs.json "$@"
