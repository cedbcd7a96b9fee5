#!/usr/bin/env bash
# The unit tests' per-test time limit (harness/tests/time_limit.c): in its
# own invocation, a test that sleeps 30 s under a 1 s limit must fail by
# name, and the test after it must still run and pass; the whole run must
# end in seconds, not hang. Its CUnit output is kept out of the log (its
# failure is the expected one). UNIT_TESTS names another build's binary.
set -uo pipefail
cd "$(dirname "$0")/.."
out=$(timeout 20 "${UNIT_TESTS:-build/unit-tests}" --time-limit-self-test 2>&1)
rc=$?
want=("sleeps past the limit: the test ran past its time limit of 1 s"
	"Test: runs after it ...passed")
if [ "$rc" -ne 1 ]; then
	echo "time limit: unit-tests --time-limit-self-test exited $rc, not 1 (124: it hung)" >&2
	echo "$out" >&2
	exit 1
fi
for w in "${want[@]}"; do
	if ! grep -qF "$w" <<<"$out"; then
		echo "time limit: no '$w' in the self-test's output" >&2
		echo "$out" >&2
		exit 1
	fi
done
# CUnit's count: 2 tests run, 1 passed, 1 failed.
if ! grep -qE '^ +tests +2 +2 +1 +1 ' <<<"$out"; then
	echo "time limit: the self-test did not run 2 tests with 1 failed" >&2
	echo "$out" >&2
	exit 1
fi
echo "time limit: a test past its 1 s limit failed by name, the next one ran and passed"
