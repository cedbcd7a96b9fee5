#!/usr/bin/env bash
# The simulated kernel under the deterministic scheduler: the gate's
# scenarios for a fixed budget of schedules (no failure allowed), and the
# harness's self-test: a planted lock-order inversion must be found, shrunk,
# and its replay line must reproduce it 10 times out of 10 with the same
# event log; and a failure that needs injected faults must carry them in its
# line, replay 10/10, and pass once they are taken out.
set -uo pipefail
cd "$(dirname "$0")/.."
R=build/residctl
schedules=${SIM_SCHEDULES:-2000}

$R check --sim --schedules "$schedules" || exit 1
# The pager's error paths under the scheduler: every fault point at 2 %,
# decided by each schedule's stream; the rows count what fired.
$R check --sim T-3 T-6 --fault all=0.02 --schedules "$((schedules / 2))" ||
	exit 1
# The bounded exhaustive search over a tiny pager run: no failure.
$R explore T-2 --strategy dfs:1 --schedules 1000 || exit 1
# The planted inversion needs one preemption: dfs:0 must not find it,
# dfs:1 must.
if ! $R explore self-deadlock --strategy dfs:0 >/dev/null; then
	echo "sim self-test: dfs:0 reported a failure no schedule has" >&2
	exit 1
fi
if $R explore self-deadlock --strategy dfs:1 >/dev/null; then
	echo "sim self-test: dfs:1 missed the planted deadlock" >&2
	exit 1
fi

out=$($R explore self-deadlock --strategy pct:3 --schedules 200 --seed 1)
rc=$?
echo "$out"
if [ "$rc" -ne 1 ] || ! grep -q "deadlock" <<<"$out"; then
	echo "sim self-test: the planted deadlock was not found (exit $rc)" >&2
	exit 1
fi
# The line in a campaign's output.
line_of() {
	sed -n "s/^  replay: residctl replay '\(.*\)'$/\1/p" <<<"$1"
}

# Replays LINE 10 times: each must fail with VERDICT and one event log.
replay10() {
	local line=$1 verdict=$2 first="" r rc hash
	for i in $(seq 10); do
		r=$($R replay "$line")
		rc=$?
		hash=$(sed -n 's/.*event log \([0-9a-f]*\).*/\1/p' <<<"$r")
		if [ "$rc" -ne 1 ] || ! grep -q "$verdict" <<<"$r"; then
			echo "sim self-test: replay $i did not reproduce the $verdict" >&2
			return 1
		fi
		[ -z "$first" ] && first=$hash
		if [ "$hash" != "$first" ]; then
			echo "sim self-test: replay $i gave event log $hash, not $first" >&2
			return 1
		fi
	done
	echo "sim self-test: $verdict replayed 10/10 with event log $first"
}

replay10 "$(line_of "$out")" deadlock || exit 1

# Bug 7 drops a wake only when a fetch is abandoned, which T-7's failing
# reads (its default faults) cause: the shrunk line names the read calls
# that must fail, replays 10/10, and passes without them.
out=$($R explore T-7 --bug 7 --schedules 500 --seed 1)
rc=$?
line=$(line_of "$out")
if [ "$rc" -ne 1 ] || ! grep -q '/backing_read:eio@[0-9+]*[,/]' <<<"$line"; then
	echo "sim self-test: bug 7 under T-7's faults gave no line naming its" \
		"failing reads (exit $rc): $line" >&2
	exit 1
fi
replay10 "$line" lost-wakeup || exit 1
# The faults field is the one before the schedule.
nofaults=$(sed 's#/[^/]*/\([^/]*\)$#/-/\1#' <<<"$line")
if ! $R replay "$nofaults" >/dev/null; then
	echo "sim self-test: the bug 7 line still fails without its faults:" \
		"$nofaults" >&2
	exit 1
fi
echo "sim self-test: bug 7's line carries its faults and passes without them"
