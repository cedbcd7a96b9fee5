#!/usr/bin/env bash
# The simulated kernel under the deterministic scheduler: the gate's
# scenarios for a fixed budget of schedules (no failure allowed), and the
# harness's self-test: a planted lock-order inversion must be found, shrunk,
# and its replay line must reproduce it 10 times out of 10 with the same
# event log.
set -uo pipefail
cd "$(dirname "$0")/.."
R=build/residctl
schedules=${SIM_SCHEDULES:-2000}

$R check --sim --schedules "$schedules" || exit 1
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
line=$(sed -n "s/^  replay: residctl replay '\(.*\)'$/\1/p" <<<"$out")
first=""
for i in $(seq 10); do
	r=$($R replay "$line")
	rc=$?
	hash=$(sed -n 's/.*event log \([0-9a-f]*\).*/\1/p' <<<"$r")
	if [ "$rc" -ne 1 ] || ! grep -q "deadlock" <<<"$r"; then
		echo "sim self-test: replay $i did not reproduce the deadlock" >&2
		exit 1
	fi
	[ -z "$first" ] && first=$hash
	if [ "$hash" != "$first" ]; then
		echo "sim self-test: replay $i gave event log $hash, not $first" >&2
		exit 1
	fi
done
echo "sim self-test: deadlock found, replayed 10/10 with event log $first"
