#!/usr/bin/env bash
# The whole test suite: build, unit tests, bad-input tests of the tool, the
# gate. Stops at the first failing stage and says which.
set -uo pipefail
cd "$(dirname "$0")/.."
stage() { printf '\n=== %s\n' "$1"; }
fail() { echo "residctl test: FAILED at: $1" >&2; exit 1; }

stage "dependencies"; bash scripts/deps.sh || fail "dependencies"
stage "build"; make -s all || fail "build"
stage "unit tests (CUnit)"; build/unit-tests || fail "unit tests"
stage "bad input"; bash ci/bad-input.sh || fail "bad input"
stage "gate"; build/residctl check --json build/gate.json --junit build/gate-junit.xml || fail "gate"
stage "faults in the real scenarios"; bash ci/faults.sh || fail "faults"
stage "simulated kernel"; bash ci/sim.sh || fail "simulated kernel"
# ThreadSanitizer: a report is a failure (exit 66), also in a storm's child.
export TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1 suppressions=$PWD/ci/tsan.supp"
stage "TSan build"; make -s tsan || fail "TSan build"
stage "TSan: unit tests"; build/tsan/unit-tests || fail "TSan: unit tests"
stage "TSan: storms T-3, T-6, T-7"; build/tsan/residctl check T-3 T-6 T-7 || fail "TSan: storms"
stage "the seven bugs (repro all)"; bash ci/bugs.sh || fail "the seven bugs"
echo "residctl test: all stages passed"
