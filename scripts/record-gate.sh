#!/usr/bin/env bash
# Reruns the gate and records it in results/: the kernel probe, the table,
# and the JSON and JUnit reports. Arguments go to `residctl check`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
make -s all
mkdir -p results
build/residctl probe >results/probe.txt || true
build/residctl check --json results/gate.json --junit results/gate-junit.xml "$@" | tee results/gate.txt
