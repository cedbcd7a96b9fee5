#!/usr/bin/env bash
# The whole test suite: build, unit tests, bad-input tests of the tool, the
# gate. Stops at the first failing stage and says which. The campaigns add
# the code probes they hit to build/coverage.txt; the last stage fails when
# a required probe was never hit.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
# Each stage's header says how long the suite has run (its 15-minute bound).
stage() { printf '\n=== %s (at %d s)\n' "$1" "$SECONDS"; }
fail() { echo "residctl test: FAILED at: $1" >&2; exit 1; }

export RESIDCTL_COVERAGE=$PWD/build/coverage.txt
rm -f "$RESIDCTL_COVERAGE"
# No file cites what a clone does not hold (docs/design.md is the design).
stage "the repository stands alone"; bash ci/standalone.sh || fail "the repository stands alone"
stage "dependencies"; bash scripts/deps.sh || fail "dependencies"
# clang-format 14 by .clang-format (scripts/format.sh applies it) and no
# function body over 80 lines outside harness/tests/; each check is first
# shown a planted file it must reject.
stage "C style"; { bash ci/style.sh --self-test && bash ci/style.sh; } || fail "C style"
stage "build"; make -s -j"$(nproc)" all || fail "build"
stage "the installed library and its example"; bash ci/library.sh || fail "library"
stage "the library exports only resid.h"; bash ci/exports.sh --self-test || fail "exports"
# Each promise of resid.h, by clients of the installed library.
stage "the library's contract"; bash ci/contract.sh || fail "contract"
# An unmodified program's mappings served through the preload (docs/run.md).
stage "residctl run"; bash ci/run.sh || fail "residctl run"
# Device classes: the throttle holds, run under a class and as arm A.
stage "device classes"; bash ci/devclass.sh || fail "device classes"
stage "unit tests (CUnit)"; build/unit-tests || fail "unit tests"
stage "unit tests: the per-test time limit"; bash ci/time-limit.sh || fail "unit-test time limit"
# docs/extending.md followed in a scratch copy: a command, an oracle, a
# scenario and a fault point added, built and run.
stage "extending the harness"; bash ci/extend.sh || fail "extending the harness"
# harness/ links without storms/: the rooms depend one way.
stage "rooms"; bash ci/rooms.sh || fail "rooms"
# Each harness room includes only rooms on lower floors (harness/floors),
# and the check fails on includes planted to break them.
stage "floors"; { bash ci/borders.sh && bash ci/borders.sh --self-test; } || fail "floors"
stage "memory headroom (cgroup v1)"; bash scripts/headroom.sh || fail "memory headroom"
stage "bad input"; bash ci/bad-input.sh || fail "bad input"
stage "real layouts"; bash ci/layout.sh || fail "real layouts"
stage "mutation table"; bash ci/mutate.sh || fail "mutation table"
# A seeded sample of the mutants results/mutation.json records as killed by
# a verdict: each still is, or the recorded score no longer holds.
stage "mutation score (a sample)"; RESIDCTL_COVERAGE="" bash scripts/mutation-sample.sh || fail "mutation score"
# T-8 runs the real engine: installed first, best effort (without it T-8
# is UNKNOWN and the stage fails, saying why).
stage "gate"; bash scripts/engine.sh >/dev/null || true
build/residctl check --json build/gate.json --junit build/gate-junit.xml || fail "gate"
# Its rows read a real file with O_DIRECT and unequal chunks too.
stage "gate legs: file and unequal rows"; bash ci/gate-legs.sh build/gate.json || fail "gate legs"
# SIGINT, SIGTERM, SIGKILL at random moments: nothing left (design.md §9).
stage "interrupts"; bash ci/interrupt.sh || fail "interrupts"
stage "faults in the real scenarios"; bash ci/faults.sh || fail "faults"
stage "simulated kernel"; bash ci/sim.sh || fail "simulated kernel"
# Campaigns on a broken pager end within their bounds: a worker's wait
# under `if` (a patched scratch copy) and bug 9, each in a 1 GiB cgroup.
stage "campaign bounds"; RESIDCTL_COVERAGE="" bash ci/campaign-bounds.sh || fail "campaign bounds"
# Campaigns in shards (--shard K/N, residctl merge) equal the whole run,
# and the CI files that run them lint clean (docs/campaigns.md).
stage "shards merged"; RESIDCTL_COVERAGE="" bash ci/shard.sh || fail "shards merged"
stage "CI files (yamllint, actionlint)"; bash ci/lint-ci.sh || fail "CI files"
# The simulated kernel against this one, call by call (design.md §4).
stage "conformance"; build/residctl conformance --json build/conformance.json || fail "conformance"
# Every fault point, wakes and punches failing more often: the pager's error
# paths on the real kernel (partial and failed CONTINUE, punch and wake
# retries). Seed 11's rounds draw a 1 ms FETCHING time-out (all three first
# rounds) and evict-ahead (the first and third), for the watchdog's reset
# and evict-ahead probes.
stage "storm with faults"; build/residctl storm --duration 10 --round 2 --seed 11 \
	--fault all=0.02 --fault wake=0.2 --fault punch=0.2 --json build/storm-faults.json || fail "storm with faults"
stage "kernel matrix smoke cells (QEMU)"; bash ci/kernels.sh || fail "kernel matrix smoke cells"
# ThreadSanitizer: a report is a failure (exit 66), also in a storm's child.
export TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1 suppressions=$PWD/ci/tsan.supp"
stage "TSan build"; make -s -j"$(nproc)" tsan || fail "TSan build"
stage "TSan: unit tests"; build/tsan/unit-tests || fail "TSan: unit tests"
stage "TSan: storms T-3, T-6, T-7"; build/tsan/residctl check T-3 T-6 T-7 --swarm --backing synthetic || fail "TSan: storms"
stage "TSan: storms with faults"; bash ci/tsan-faults.sh || fail "TSan: storms with faults"
# Runs with bugs switched on prove nothing about the pager's rare paths.
stage "the bug switches (repro all)"; RESIDCTL_COVERAGE="" bash ci/bugs.sh || fail "the bug switches"
stage "replay lines in docs/"; RESIDCTL_COVERAGE="" bash ci/doc-lines.sh || fail "replay lines in docs/"
stage "code probes"; build/residctl coverage "$RESIDCTL_COVERAGE" || fail "code probes"
echo "residctl test: all stages passed in $SECONDS s"
