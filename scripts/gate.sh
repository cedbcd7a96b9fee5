#!/usr/bin/env bash
# The main job: the T-1..T-7 gate on the real kernel, a table of mismatch
# counts, and JSON and JUnit reports under build/. Extra arguments go to
# `residctl check` (e.g. --seed 7, --profile full, T-2).
# shellcheck source=scripts/lib/common.sh
. "$(dirname "$0")/lib/common.sh"
prologue
exec build/residctl check --json build/gate.json --junit build/gate-junit.xml "$@"
