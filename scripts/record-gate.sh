#!/usr/bin/env bash
# Reruns the gate and records it in results/: the kernel probe, the table,
# and the JSON and JUnit reports. Arguments go to `residctl check`.
# shellcheck source=scripts/lib/common.sh
. "$(dirname "$0")/lib/common.sh"
prologue
build/residctl probe >results/probe.txt || true
build/residctl check --json results/gate.json --junit results/gate-junit.xml "$@" | tee results/gate.txt
