#!/usr/bin/env bash
# design.md §9 "Interruption": each long command is interrupted with SIGINT,
# SIGTERM and SIGKILL at random moments (seeded; the seed is printed), many
# times. Then: exit 130 / 143 on SIGINT / SIGTERM, no process of the run left,
# and no residctl cgroup left (after one further `residctl probe` for
# SIGKILL). Each run starts in a fresh memory cgroup of its own, so that what
# it leaves is told apart from other users' residctl runs: every process and
# cgroup it made stays below it. Also: a live owner's cgroup survives another
# start's sweep, and the watchdog cuts a command that hangs on purpose
# (RESIDCTL_HANG) with a thread dump and a rerun line.
# RESIDCTL_INTERRUPT_SEED=N reruns the same moments; RESIDCTL_INTERRUPT_BUDGET
# is the seconds after which no new pass over the commands starts
# (default 60: one pass).
set -uo pipefail
set -m # background commands do not ignore SIGINT
cd "$(dirname "$0")/.." || exit 2
R=$PWD/build/residctl
seed=${RESIDCTL_INTERRUPT_SEED:-$(date +%s)}
budget=${RESIDCTL_INTERRUPT_BUDGET:-60}
RANDOM=$seed
echo "interrupt: seed $seed (RESIDCTL_INTERRUPT_SEED=$seed bash ci/interrupt.sh repeats it)"
tmp=$(mktemp -d)
# the memory hierarchy (v1 when mounted, else v2) and this shell's place in it
if grep -q '^[0-9]*:memory:' /proc/self/cgroup; then
	mem=$(awk '$(NF-2) == "cgroup" && $NF ~ /(^|,)memory(,|$)/ {print $5; exit}' /proc/self/mountinfo)
	self=$(sed -n 's/^[0-9]*:memory://p' /proc/self/cgroup)
else
	mem=$(awk '$(NF-2) == "cgroup2" {print $5; exit}' /proc/self/mountinfo)
	self=$(sed -n 's/^0:://p' /proc/self/cgroup)
fi
top="$mem${self%/}/residctl-interrupt-test-$$"
# bench device reads it under a device class: on a disk (build/), not tmpfs
if ! { cls=$(mktemp build/ci-interrupt-class.XXXXXX) && head -c $((16 * 1024 * 1024)) /dev/zero >"$cls"; }; then
	echo "interrupt: cannot write a file in build/" >&2
	exit 1
fi
mkdir "$top" || { echo "interrupt: cannot make $top" >&2; rm -f "$cls"; exit 1; }
trap 'find "$top" -depth -type d -exec rmdir {} + 2>/dev/null; rm -rf "$tmp" "$cls"' EXIT
fails=0 runs=0 early=0
bad() { echo "FAIL $*" >&2; fails=$((fails + 1)); }

# The processes and cgroups below the cgroup dir.
procs_in() { find "$1" -name cgroup.procs -exec cat {} + 2>/dev/null; }
groups_in() { find "$1" -mindepth 1 -type d 2>/dev/null; }
# Waits up to $2 tenths of a second for dir to hold no process.
settle() {
	local i
	for ((i = 0; i < $2; i++)); do
		[ -z "$(procs_in "$1")" ] && return 0
		sleep 0.1
	done
	return 1
}

# start DIR CMD...: CMD in its own new cgroup DIR, in the background; PID.
# SIGINT and SIGTERM as at a terminal: a suite started with `&` by a shell
# without job control (or nohup) ignores SIGINT, and a bash script such as
# the kernel matrix cannot trap a signal ignored when it started.
start() {
	local dir=$1
	shift
	mkdir "$dir" || return 1
	(echo "$BASHPID" >"$dir/cgroup.procs" && exec env --default-signal=INT,TERM "$@") >"$tmp/out" 2>"$tmp/err" </dev/null &
	PID=$!
}

# one NAME MAXDELAY_MS SIG CMD...
one() {
	local name=$1 max=$2 sig=$3 ms rc want dir="$top/run-$runs"
	shift 3
	ms=$((RANDOM % max + 10)) t1=$SECONDS
	start "$dir" "$@" || { bad "$name: cannot start"; return; }
	sleep "$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))"
	runs=$((runs + 1))
	# a command that ended on its own is not judged for its status
	if [ "$(awk '{print $3}' "/proc/$PID/stat" 2>/dev/null)" = Z ] || ! kill "-$sig" "$PID" 2>/dev/null; then
		early=$((early + 1))
		wait "$PID"
		want=any
	else
		want=$((128 + $(kill -l "$sig")))
		# SIGKILL: the children die with the parent; nobody may hang
		local i
		for ((i = 0; i < 600; i++)); do
			[ "$(awk '{print $3}' "/proc/$PID/stat" 2>/dev/null)" = Z ] && break
			kill -0 "$PID" 2>/dev/null || break
			sleep 0.1
		done
		if [ "$i" = 600 ]; then
			bad "$name SIG$sig after ${ms} ms: still running 60 s later"
			kill -KILL "$PID"
		fi
		wait "$PID"
	fi
	rc=$?
	echo "  $name SIG$sig after $ms ms: exit $rc ($((SECONDS - t1)) s)"
	[ "$want" = any ] || [ "$rc" = "$want" ] ||
		bad "$name SIG$sig after ${ms} ms: exit $rc, want $want ($(tail -1 "$tmp/err"))"
	# children die with their parent at once; a killed kernel matrix's
	# guard polls, then gives them a second after SIGTERM
	settle "$dir" "$([ "$name" = kernel-matrix ] && echo 150 || echo 20)" ||
		bad "$name SIG$sig after ${ms} ms: processes left: $(procs_in "$dir" | tr '\n' ' ')"
	[ "$sig" = KILL ] && (echo "$BASHPID" >"$dir/cgroup.procs" && exec "$R" probe >/dev/null 2>&1)
	[ -z "$(groups_in "$dir")" ] ||
		bad "$name SIG$sig after ${ms} ms: cgroups left: $(groups_in "$dir" | tr '\n' ' ')"
	# a device class's v1 blkio group is in its own hierarchy
	local io
	io=$(find /sys/fs/cgroup -maxdepth 8 -type d -name "residctl-$PID-*" 2>/dev/null)
	[ -z "$io" ] || bad "$name SIG$sig after ${ms} ms: cgroups left: $io"
	procs_in "$dir" | xargs -r kill -KILL 2>/dev/null
	settle "$dir" 50
	find "$dir" -depth -type d -exec rmdir {} + 2>/dev/null
}

rev=$(sed -n 's/.*"\(.*\)".*/\1/p' build/rev.h)
# name, the longest moment (ms) to interrupt at, the command
cases=(
	"check-storm|3500|$R check T-3 --seed %S"
	"check-child|4000|$R check T-1 T-2 --seed %S"
	"storm|4000|$R storm --duration 60 --round 20 --seed %S"
	"explore|3000|$R explore T-3 --schedules 1000000 --seed %S"
	"replay|15|$R replay rc3/$rev/T-3/random/%S/-/4/-/0*5"
	"repro|4000|$R repro 2"
	"matrix|4000|$R matrix --seeds 2 --runs 1"
	"bench|4000|$R bench arms --passes 2 --ratios 0.5 --dir $tmp"
	"bench-class|3000|$R bench device --file $cls --device-class 8M --seconds 20"
	"conformance|600|$R conformance"
)
if [ -d /var/cache/residctl-kernels ] && ls /var/cache/residctl-kernels/linux-image-6.1.0-*-amd64_*/vmlinuz >/dev/null 2>&1; then
	cases+=("kernel-matrix|6000|bash $PWD/kernels/matrix.sh --smoke --cells 6.1-v1-scope-swapon --out $tmp/km")
else
	echo "SKIP: kernel matrix interrupts: no kernel in /var/cache/residctl-kernels (make kernels fetches them)"
fi

t0=$SECONDS
pass=0
while [ $pass = 0 ] || [ $((SECONDS - t0)) -lt "$budget" ]; do
	for c in "${cases[@]}"; do
		for sig in INT TERM KILL; do
			[ $pass -gt 0 ] && [ $((SECONDS - t0)) -ge "$budget" ] && break 2
			IFS='|' read -r name max cmd <<<"$c"
			# shellcheck disable=SC2086 # the command's words
			one "$name" "$max" "$sig" ${cmd//%S/$RANDOM}
		done
	done
	pass=$((pass + 1))
done
echo "interrupt: $runs interruptions of ${#cases[@]} commands in $((SECONDS - t0)) s ($early ended before the signal), $fails failed"

# The same, at moments chosen: once each storm's child runs in its cgroup.
# SIGKILL of B: its child dies with it (PR_SET_PDEATHSIG), and the next
# start removes B's cgroup but not live A's; SIGTERM of A: forwarded, exit
# 143, nothing left.
storm_up() { # DIR: starts a storm there and waits for its cgroup; PID
	start "$1" "$R" storm --duration 60 --round 20 --seed 5 || return 1
	for ((i = 0; i < 100; i++)); do
		[ -n "$(groups_in "$1")" ] && return 0
		sleep 0.1
	done
	bad "storm in $1: no cgroup after 10 s"
	return 1
}
A=$top/live-a B=$top/killed-b
if storm_up "$A" && pa=$PID && storm_up "$B"; then
	pb=$PID live=$(groups_in "$A")
	kill -KILL "$pb"
	wait "$pb"
	settle "$B" 20 || bad "SIGKILL of storm: its child outlived it: $(procs_in "$B" | tr '\n' ' ')"
	# Any residctl start sweeps: on a shared machine another one may have
	# been first, and then this start has nothing to say.
	stale=$(groups_in "$B")
	"$R" probe >/dev/null 2>"$tmp/probe.err"
	[ -z "$(groups_in "$B")" ] || bad "SIGKILL of storm: the next start left its cgroups: $(groups_in "$B" | tr '\n' ' ')"
	[ -z "$stale" ] || grep -q "stale cgroups of gone residctl processes: [1-9]" "$tmp/probe.err" ||
		bad "SIGKILL of storm: the next start did not say what it removed"
	for g in $live; do [ -d "$g" ] || bad "the sweep removed $g of a live storm"; done
	kill -TERM "$pa"
	wait "$pa"
	rc=$?
	[ "$rc" = 143 ] || bad "SIGTERM of storm: exit $rc, want 143"
	settle "$A" 20 || bad "SIGTERM of storm: processes left: $(procs_in "$A" | tr '\n' ' ')"
	[ -z "$(groups_in "$A")" ] || bad "SIGTERM of storm: cgroups left: $(groups_in "$A" | tr '\n' ' ')"
fi
for d in "$A" "$B"; do
	procs_in "$d" | xargs -r kill -KILL 2>/dev/null
	settle "$d" 50
	find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
done

# The watchdog: a hang in the tool and one in a child are cut and named.
for where in main child; do
	dir="$top/hang-$where"
	# timeout: a watchdog that never fires fails the test, not the suite
	start "$dir" timeout -s KILL 60 env RESIDCTL_WATCHDOG=2 RESIDCTL_HANG=$where "$R" check T-1 --seed 4
	wait "$PID"
	rc=$?
	[ "$rc" = 1 ] || bad "watchdog ($where): exit $rc, want 1"
	grep -q "watchdog: no progress for 2 s" "$tmp/err" || bad "watchdog ($where): no hang reported"
	grep -q "watchdog: thread dump (tid comm state wchan): [0-9]* residctl S" "$tmp/err" ||
		bad "watchdog ($where): no thread dump"
	[ $where = main ] || grep -q "^  child [0-9]*: watchdog: thread dump" "$tmp/err" ||
		bad "watchdog ($where): the child's threads not dumped"
	grep -x "rerun: .*$R check T-1 --seed 4" "$tmp/err" | grep -q "RESIDCTL_HANG=$where .*RESIDCTL_WATCHDOG=2 \|RESIDCTL_WATCHDOG=2 .*RESIDCTL_HANG=$where " ||
		bad "watchdog ($where): no rerun line"
	settle "$dir" 30 || bad "watchdog ($where): processes left"
	[ -z "$(groups_in "$dir")" ] || bad "watchdog ($where): cgroups left"
	rmdir "$dir" 2>/dev/null
	[ "$fails" = 0 ] || sed 's/^/    /' "$tmp/err" >&2
done

if [ "$fails" != 0 ]; then
	echo "interrupt: FAILED ($fails); rerun: RESIDCTL_INTERRUPT_SEED=$seed bash ci/interrupt.sh" >&2
	exit 1
fi
echo "interrupt: all passed"
