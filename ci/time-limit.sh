#!/usr/bin/env bash
# The unit-test runner's isolation (harness/tests/time_limit.c): in its own
# invocation, a test that hangs (2 s limit), one that raises SIGBUS, one
# that writes through NULL and one that aborts must each fail by name; the
# test after them and two real suites after that must still run and pass;
# all of it within 10 s (one hung test costs its limit), not a hang. Its CUnit
# output is kept out of the log (its failures are the expected ones).
# UNIT_TESTS names another build's binary.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
start=$SECONDS
out=$(timeout 10 "${UNIT_TESTS:-build/unit-tests}" --time-limit-self-test chunks content 2>&1)
rc=$?
took=$((SECONDS - start))
fail() {
	echo "time limit: $1" >&2
	echo "$out" >&2
	exit 1
}
[ "$rc" -eq 124 ] && fail "the self-test did not end within 10 s"
[ "$rc" -eq 1 ] || fail "unit-tests --time-limit-self-test exited $rc, not 1"
want=("time-limit-self-test: hangs: ran past its time limit of 2 s and was killed"
	"time-limit-self-test: raises SIGBUS: killed by SIGBUS"
	"time-limit-self-test: writes through NULL: killed by SIGSEGV"
	"time-limit-self-test: aborts: killed by SIGABRT"
	"Test: runs after them ...passed")
for w in "${want[@]}"; do
	grep -qF "$w" <<<"$out" || fail "no '$w' in the self-test's output"
done
# CUnit's counts: the self-test suite ran 5 tests, 4 failed; then the two
# real suites, each with every test passed.
summaries=$(grep -E '^ +tests ' <<<"$out")
[ "$(sed -n 1p <<<"$summaries" | awk '{print $3, $4, $5}')" = "5 1 4" ] ||
	fail "the self-test suite did not run 5 tests with 4 failed"
for i in 2 3; do
	read -r _ _ ran passed failed _ <<<"$(sed -n ${i}p <<<"$summaries")"
	{ [ -n "$ran" ] && [ "$ran" -gt 0 ] && [ "$ran" = "$passed" ] && [ "$failed" = 0 ]; } ||
		fail "a suite after the self-test did not pass whole"
done
echo "time limit: a hung test, SIGBUS, SIGSEGV and abort each failed by name; the next test and two suites ran and passed (${took} s)"
# Three tests past their limits stop the run: the fourth and the suite after
# it never start (a pager that hangs would have each test wait its limit).
out=$(timeout 20 "${UNIT_TESTS:-build/unit-tests}" --hang-self-test chunks 2>&1)
rc=$?
[ "$rc" -eq 1 ] || fail "unit-tests --hang-self-test exited $rc, not 1"
[ "$(grep -c 'hang-self-test: hangs: ran past its time limit' <<<"$out")" -eq 3 ] ||
	fail "the hang self-test did not report three tests past their limits"
grep -qF "3 tests ran past their time limits (above): stopping here" <<<"$out" ||
	fail "the run did not say it stopped"
if grep -qF "never runs" <<<"$out" || grep -q "Suite: chunks" <<<"$out"; then
	fail "a test after the third hang ran"
fi
echo "time limit: three hung tests stopped the run, naming them; nothing after them ran"
