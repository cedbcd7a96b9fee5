#!/usr/bin/env bash
# The main job: the T-1..T-8 gate on the real kernel, a table of mismatch
# counts, and JSON and JUnit reports under build/. Extra arguments go to
# `residctl check` (e.g. --seed 7, --profile full, T-2). T-8's engine is
# installed first, best effort: where it cannot be (scripts/engine.sh says
# why in one line) T-8 is UNKNOWN.
# shellcheck source=scripts/lib/common.sh
. "$(dirname "$0")/lib/common.sh"
prologue
bash scripts/engine.sh >/dev/null || true
exec build/residctl check --json build/gate.json --junit build/gate-junit.xml "$@"
