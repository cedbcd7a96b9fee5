#!/bin/busybox sh
# shellcheck shell=dash
# PID 1 of a kernel-matrix cell (docs/kernels.md). Sets up the cell that the
# kernel command line names (residctl.cg=v1|v2 residctl.place=root|scope
# residctl.swap=off|on), runs each line of /steps from the cell's cgroup, and
# reports on the second serial port only; the console keeps the kernel log.
/bin/busybox --install -s /bin
export PATH=/bin:/sbin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
mkdir -p /out
# the longest hung-task threshold, as the host script does for stalls
echo 600 2>/dev/null >/proc/sys/kernel/hung_task_timeout_secs

stty -F /dev/ttyS1 raw -echo 2>/dev/null
exec 3>/dev/ttyS1
say() { echo "@$*" >&3; }
die() { say "setup-failed $*"; poweroff -f; }

read -r cmdline </proc/cmdline
# shellcheck disable=SC2086 # its words
for w in $cmdline; do
	case $w in
	residctl.cg=*) CG=${w#*=} ;;
	residctl.place=*) PLACE=${w#*=} ;;
	residctl.swap=*) SWAP=${w#*=} ;;
	esac
done
say "cell cg=$CG place=$PLACE swap=$SWAP release=$(uname -r)"

# The memory controller as a host would have it: v2 with memory enabled
# down to user.slice (systemd), or v1 memory mounted beside other
# hierarchies. A kernel without v1 memcg gets v1 cpu only: no memory at all.
case $CG in
v2)
	mount -t cgroup2 cgroup2 /sys/fs/cgroup || die "mount cgroup2"
	ROOT=/sys/fs/cgroup
	echo +memory >"$ROOT/cgroup.subtree_control" || die "enable memory"
	;;
v1)
	mount -t tmpfs cgroup /sys/fs/cgroup || die "mount cgroup tmpfs"
	mkdir -p /sys/fs/cgroup/memory /sys/fs/cgroup/cpu
	mount -t cgroup -o cpu cpu /sys/fs/cgroup/cpu || die "mount v1 cpu"
	ROOT=/sys/fs/cgroup/memory
	mount -t cgroup -o memory memory "$ROOT" || ROOT=/sys/fs/cgroup/cpu
	;;
*) die "residctl.cg=$CG: use v1 or v2" ;;
esac
# the kernel's controllers, for what changed between kernels
if [ "$CG" = v2 ]; then
	say "controllers $(cat "$ROOT/cgroup.controllers")"
else
	say "controllers $(awk '!/^#/ && $4 == 1 {printf "%s%s", s, $1; s = " "}' /proc/cgroups)"
fi

# "scope": what systemd-run --scope -p Delegate=yes gives: a leaf cgroup below
# user.slice (memory enabled there) that already holds a process.
HOME_CG=$ROOT
if [ "$PLACE" = scope ]; then
	mkdir -p "$ROOT/user.slice/session-1.scope" || die "mkdir scope"
	[ "$CG" != v2 ] || echo +memory >"$ROOT/user.slice/cgroup.subtree_control" || die "enable memory in user.slice"
	HOME_CG=$ROOT/user.slice/session-1.scope
	sleep 2147483647 &
	echo $! >"$HOME_CG/cgroup.procs" || die "helper into scope"
fi

if [ "$SWAP" = on ]; then
	# a module, or brd built in (sized by the kernel command line)
	[ ! -f /brd.ko ] || insmod /brd.ko rd_nr=1 rd_size=131072 || die "insmod brd"
	{ mkswap /dev/ram0 >/dev/null && swapon /dev/ram0; } || die "swapon"
fi
say "setup-done cgroup=$HOME_CG swap=$(grep SwapTotal /proc/meminfo | tr -s ' ')"

# Each step: "name<TAB>command", run by sh from the cell's cgroup. A file
# the command writes to /out/<name>.json is sent after it.
while IFS='	' read -r name cmd || [ -n "$name" ]; do
	[ -n "$name" ] || continue
	say "step $name begin"
	sh -c 'echo $$ >"$1/cgroup.procs" && shift && eval "$*"' step "$HOME_CG" "$cmd" >&3 2>&1
	rc=$?
	say "step $name end $rc"
	if [ -f "/out/$name.json" ]; then
		say "file $name begin"
		cat "/out/$name.json" >&3
		echo >&3
		say "file $name end"
	fi
done </steps

find /sys/fs/cgroup -type d -name 'residctl-*' | while read -r d; do
	say "leftover $d"
done
say "done"
poweroff -f
