#!/usr/bin/env bash
# The simulated kernel under the deterministic scheduler: the gate's
# scenarios for a fixed budget of schedules (no failure allowed), and the
# harness's self-tests: a planted lock-order inversion, a division by zero
# and a spin (verdicts, not the end of the harness), and in the
# simulation build (make simx) an unannotated lost update and a pager
# mutant, must be found, shrunk, and their replay lines must reproduce them
# 10 times out of 10 with the same event log; and a failure that needs
# injected faults must carry them in its line, replay 10/10, and pass once
# they are taken out.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
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

# The replay line in a campaign's output.
line_of() {
	sed -n "s/^  replay: residctl replay '\(.*\)'$/\1/p" <<<"$1"
}

# A failure's replay line, run 10 times: the same failure, one event log.
# $1: the tool, $2: the line, $3: what the failure says.
replays_ten() {
	local first="" i r rc hash
	for i in $(seq 10); do
		r=$($1 replay "$2")
		rc=$?
		hash=$(sed -n 's/.*event log \([0-9a-f]*\).*/\1/p' <<<"$r")
		if [ "$rc" -ne 1 ] || ! grep -q "$3" <<<"$r"; then
			echo "sim self-test: replay $i did not reproduce the $3" >&2
			return 1
		fi
		[ -z "$first" ] && first=$hash
		if [ "$hash" != "$first" ]; then
			echo "sim self-test: replay $i gave event log $hash, not $first" >&2
			return 1
		fi
	done
	echo "sim self-test: $3 replayed 10/10 with event log $first"
}

# A campaign that must fail with $3: prints it, then replays its line.
# $1: the tool, $2: the explore arguments.
must_find() {
	local out rc args
	read -r -a args <<<"$2"
	out=$($1 explore "${args[@]}")
	rc=$?
	echo "$out"
	if [ "$rc" -ne 1 ] || ! grep -q "$3" <<<"$out"; then
		echo "sim self-test: $1 explore $2 did not find the $3 (exit $rc)" >&2
		return 1
	fi
	replays_ten "$1" "$(line_of "$out")" "$3"
}

must_find $R "self-deadlock --strategy pct:3 --schedules 200 --seed 1" \
	deadlock || exit 1

# A crash and a spin with no scheduling point in a controlled thread are a
# schedule's verdict (harness/sim/guard.c): each needs one preemption, is
# found by PCT while the campaign goes on (every schedule is run), and its
# line replays 10/10 to the same verdict and event log.
for scen in self-crash self-spin; do
	if ! $R explore $scen --strategy dfs:0 >/dev/null; then
		echo "sim self-test: dfs:0 reported a $scen failure no schedule has" >&2
		exit 1
	fi
done
out=$($R explore self-crash --strategy pct:3 --schedules 200 --seed 1)
if ! grep -qE '^explore self-crash: 200 schedules, .*, [0-9]+ failures' <<<"$out" ||
	! grep -qE '^  crash +[0-9]+$' <<<"$out"; then
	echo "sim self-test: the campaign did not go on past its crashes:" >&2
	echo "$out" >&2
	exit 1
fi
must_find $R "self-crash --strategy pct:3 --schedules 200 --seed 1" \
	"crash: SIGFPE (integer divide by zero) in thread 2 (self), in selfbreak_main" ||
	exit 1
must_find $R "self-spin --strategy dfs:1" \
	"no-progress: no scheduling point for 100 ms of CPU time in thread 2 (self)" ||
	exit 1
# A run that steps without progress ends at the stall bound as
# no-progress; the failure is printed with its unshrunk line the moment it
# is found (on stderr, before shrinking), and the line replays.
err=$($R explore self-livelock --schedules 200 2>&1 >/dev/null)
if ! grep -qE "^self-livelock: failure found after [0-9]+ schedules: no-progress: stall bound: 200000 steps" <<<"$err" ||
	! grep -q "^  unshrunk: residctl replay 'rc3/" <<<"$err"; then
	echo "sim self-test: the livelock was not printed with its unshrunk line when found:" >&2
	echo "$err" >&2
	exit 1
fi
must_find $R "self-livelock --schedules 200" \
	"no-progress: stall bound: 200000 steps without progress" || exit 1

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
replays_ten $R "$line" lost-wakeup || exit 1
# The faults field is the one before the schedule.
nofaults=${line%/*/*}/-/${line##*/}
if ! $R replay "$nofaults" >/dev/null; then
	echo "sim self-test: the bug 7 line still fails without its faults:" \
		"$nofaults" >&2
	exit 1
fi
echo "sim self-test: bug 7's line carries its faults and passes without them"
# The same hunt on unequal chunks (1 to 4 pages, the last ending
# unaligned): found, its line says so, and it replays 10/10.
out=$($R explore T-7 --bug 7 --chunks unequal --schedules 500 --seed 1)
line=$(line_of "$out")
if ! grep -q '/T-7+unequal/' <<<"$line"; then
	echo "sim self-test: bug 7 on unequal chunks gave no +unequal line:" \
		"$line" >&2
	exit 1
fi
replays_ten $R "$line" lost-wakeup || exit 1
$R explore T-2 --strategy dfs:1 --chunks unequal --schedules 1000 || exit 1

# The simulation build (make simx): the pager's plain loads and stores,
# instrumented by the compiler, are scheduling points where no common lock
# protects them. The gate's scenarios still pass there.
X=build/simx/residctl
make -s -j"$(nproc)" simx || exit 1
$X check --sim --schedules $((schedules / 2)) || exit 1
# An unannotated lost update: no schedule of the plain build can split the
# read from the write (the search at 3 preemptions is exhaustive); the
# simulation build needs two preemptions (start the second thread first,
# switch back between its read and write).
for b in "$R dfs:3" "$X dfs:1"; do
	if ! "${b% *}" explore self-race --strategy "${b#* }" >/dev/null; then
		echo "sim self-test: ${b% *} explore self-race --strategy ${b#* } found a lost update it cannot reach" >&2
		exit 1
	fi
done
if $X explore self-race --strategy dfs:2 >/dev/null; then
	echo "sim self-test: $X missed the lost update at dfs:2" >&2
	exit 1
fi
must_find $X "self-race --strategy pct:3 --schedules 2000 --seed 1" \
	"lost update" || exit 1
# A pager mutant (ci/mutants/unlocked-reserve.patch): the reservation
# taken after the budget lock is dropped. The plain simulation passes it;
# the simulation build finds the lost reservation, as a budget overrun
# (I-11) or as pages the accounting cannot explain (I-7), whichever the
# schedule reaches first.
M=build/mutant
$M/plain-residctl check --sim T-3 T-6 --schedules "$schedules" >/dev/null || {
	echo "sim self-test: the plain simulation now catches the unlocked reservation; pick a mutant it misses" >&2
	exit 1
}
must_find $M/simx-residctl "T-6 --strategy pct:3 --schedules 300 --seed 1" \
	"I-11\|I-7 " || exit 1
