#!/usr/bin/env bash
# The kernel matrix (design.md §10, docs/kernels.md): every cell of kernel package
# x cgroup v1|v2 x started from the root cgroup | a delegated scope that holds
# a process x swap off | on (forbidden in the scenarios' cgroups), each booted
# under QEMU from an initramfs of busybox, residctl and its libraries.
# Exit 0: every cell passed (or is n/a); 1: a cell failed; 3: no cell failed
# but one could not be run (infrastructure, retried once); 2: bad input.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
. kernels/fetch.sh
. kernels/steps.sh

usage="usage: kernels/matrix.sh [--cells ID,ID..] [--smoke] [--profile quick|full]
                                [--storm SECONDS] [--jobs N] [--out DIR] [--cache DIR] [--list]
                                [--shard K/N] [--report FILE] [--newest]
                                [--only-steps NAME,NAME..] [--scenarios ID,ID..]
                                [--kernel BZIMAGE [--kernel-config FILE] [--kernel-modules DIR]]
  Boots each cell (all by default, in the order --list prints) and runs in it
  residctl probe, residctl hazards, the cgroup unit tests on the real
  hierarchy (unit-tests cgroup-live), conformance, the gate (residctl check
  --json) and, with --storm, a storm.
  A cell passes when every step exits 0, the gate has no mismatch, no
  residctl cgroup is left and the kernel log has no oops, BUG, WARNING, hung
  task, lockup or OOM. A cell the kernel cannot have (e.g. cgroup v1 on 6.12)
  is n/a: probe must say no and the gate refuse to start there.
  --smoke: the cells and steps of make test (probe, cgroup-live,
  conformance, T-4, T-5).
  --only-steps NAME,..: only those steps of each cell (probe, hazards,
  cgroup-live, conformance, gate, storm; kernels/steps.sh), e.g. probe,hazards
  for the kernel's hands on A and B alone (scripts/record-hazards.sh).
  --scenarios ID,..: the gate step runs only these scenarios (e.g. H-1).
  --jobs N boots N cells at once (default 1; each guest has 2 vCPUs).
  Kernels come from kernels/kernels.list (pinned), cached in --cache
  (default /var/cache/residctl-kernels); results in --out (default
  build/kernels): one directory per cell and cells.jsonl.
  --shard K/N boots only the chosen cells at positions i (from 0, in --list
  order) with i mod N = K - 1 (K from 1); --list then prints those; --report
  writes the campaign report (every cell with its verdict) that residctl
  merge combines.
  --newest: instead of kernels.list, the newest plain and PREEMPT_RT kernels
  the mirror has in kernels.list's suites (printed as resolved).
  --kernel BZIMAGE: your own kernel instead (cells own-*); with its .config
  (--kernel-config) and a modules tree holding brd (--kernel-modules, or
  CONFIG_BLK_DEV_RAM=y). Cells needing what was not given are n/a, not run.
  At the end, per kernel, what differs from the kernel before it."
SMOKE_CELLS="6.1-rt-v2-root-swapon 6.12-v2-scope-swapoff 6.1-v1-scope-swapon 6.12-v1-root-swapoff"
OUT=build/kernels PROFILE=quick STORM=0 JOBS=1
cells="" only="" scenarios="" smoke=0 list=0 newest=0 SHARD_K=1 SHARD_N=1 REPORT="" OWN_KERNEL="" OWN_CONFIG="" OWN_MODULES=""

bad() { echo "kernels/matrix.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
	case $1 in
	--help | -h) echo "$usage"; exit 0 ;;
	--list) list=1 ;;
	--smoke) smoke=1 ;;
	--cells) [ $# -ge 2 ] || bad "--cells needs a list; see --list"; cells=${2//,/ }; shift ;;
	--profile) [ "${2:-}" = quick ] || [ "${2:-}" = full ] || bad "unknown profile '${2:-}'; use quick or full"; PROFILE=$2; shift ;;
	--storm) [[ ${2:-} =~ ^[0-9]+$ ]] || bad "bad storm duration '${2:-}'; give seconds (0: none)"; STORM=$2; shift ;;
	--jobs) [[ ${2:-} =~ ^[1-9][0-9]?$ ]] || bad "bad job count '${2:-}'; give 1..99"; JOBS=$2; shift ;;
	--out) [ -n "${2:-}" ] || bad "--out needs a directory"; OUT=$2; shift ;;
	--cache) [ -n "${2:-}" ] || bad "--cache needs a directory"; CACHE=$2; shift ;;
	--shard)
		{ [[ ${2:-} =~ ^([0-9]+)/([0-9]+)$ ]] && [ "${BASH_REMATCH[1]}" -ge 1 ] &&
			[ "${BASH_REMATCH[1]}" -le "${BASH_REMATCH[2]}" ]; } ||
			bad "bad shard '${2:-}'; give K/N with 1 <= K <= N, K counting from 1 (Kubernetes: JOB_COMPLETION_INDEX + 1)"
		SHARD_K=$((10#${BASH_REMATCH[1]})) SHARD_N=$((10#${BASH_REMATCH[2]})); shift ;;
	--report) [ -n "${2:-}" ] || bad "--report needs a file"; REPORT=$2; shift ;;
	--newest) newest=1 ;;
	--only-steps)
		[[ ${2:-} =~ ^[a-z-]+(,[a-z-]+)*$ ]] || bad "--only-steps needs step names, e.g. probe,hazards"
		for st in ${2//,/ }; do
			cell_steps x 1 | cut -f1 | grep -qx -- "$st" ||
				bad "unknown step '$st'; give some of: $(cell_steps x 1 | cut -f1 | paste -sd,)"
		done
		only=" ${2//,/ } "; shift ;;
	--scenarios)
		[[ ${2:-} =~ ^[A-Za-z]+-[0-9]+(,[A-Za-z]+-[0-9]+)*$ ]] || bad "--scenarios needs scenario ids, e.g. H-1,T-3"
		scenarios=${2//,/ }; shift ;;
	--kernel)
		{ [ -f "${2:-}" ] && bzimage_release "$2" >/dev/null; } ||
			bad "--kernel '${2:-}' is not a bzImage; give arch/x86/boot/bzImage or a vmlinuz"
		OWN_KERNEL=$(realpath "$2"); shift ;;
	--kernel-config) [ -f "${2:-}" ] || bad "--kernel-config '${2:-}' is not a file; give the kernel's .config"; OWN_CONFIG=$(realpath "$2"); shift ;;
	--kernel-modules) [ -e "${2:-}" ] || bad "--kernel-modules '${2:-}' does not exist; give INSTALL_MOD_PATH of make modules_install, or brd.ko"; OWN_MODULES=$(realpath "$2"); shift ;;
	*) bad "unknown option '$1'; see --help" ;;
	esac
	shift
done
[ -n "$OWN_KERNEL" ] || [ -z "$OWN_CONFIG$OWN_MODULES" ] || bad "--kernel-config and --kernel-modules go with --kernel BZIMAGE"
[ -z "$OWN_KERNEL" ] || [ $newest = 0 ] || bad "--newest and --kernel each choose the kernels; give one"
# The newest kernel of each flavour, as kernels.list lines of their own.
if [ $newest = 1 ]; then
	newest_list=$(mktemp /tmp/residctl-km-newest.XXXXXX)
	trap 'rm -f "$newest_list"' EXIT
	for flavour in plain rt; do
		line=$(kernel_newest $flavour) || { echo "kernels/matrix.sh: infrastructure: the mirror could not be asked for the newest kernels" >&2; exit 3; }
		echo "$line" >>"$newest_list"
		read -r nid nsuite npkg nver _ <<<"$line"
		echo "kernel matrix: newest $flavour kernel: $npkg $nver ($nsuite), $(awk -v p="$npkg" '$3 == p {f=1} END {print f ? "kernels.list'"'"'s" : "not in kernels.list, as"}' "$KLIST") $nid" >&2
	done
	KLIST=$newest_list
fi

# Every cell, in a stable order with its number: the order --shard splits.
all_cells() {
	local k cg place swap i=0
	for k in $(kernel_ids); do
		for cg in v1 v2; do
			for place in root scope; do
				for swap in off on; do
					i=$((i + 1))
					echo "$i $k-$cg-$place-swap$swap $k $cg $place $swap"
				done
			done
		done
	done
}
[ $smoke = 1 ] && [ -z "$cells" ] && [ -z "$OWN_KERNEL" ] && [ $newest = 0 ] && cells=$SMOKE_CELLS
for c in $cells; do
	all_cells | awk -v c="$c" '$2 == c {f=1} END {exit !f}' || bad "unknown cell '$c'; see --list"
done
chosen=$(all_cells | awk -v want=" $cells " 'want == "  " || index(want, " " $2 " ")')
# This shard's cells: position i of the chosen ones when i mod N = K - 1.
todo=$(awk -v k="$SHARD_K" -v n="$SHARD_N" '(NR - 1) % n == k - 1' <<<"$chosen")
if [ $list = 1 ]; then
	[ -z "$todo" ] || echo "$todo"
	exit 0
fi

OUT=$(realpath -m "$OUT")
# The steps of a cell, those of --only-steps alone when given.
steps_only() {
	if [ -z "$only" ]; then cat; else awk -F'\t' -v only="$only" 'index(only, " " $1 " ")'; fi
}
OWN_DIR=$OUT/own-kernel
gate_args="$scenarios --profile $PROFILE"
[ $smoke = 1 ] && gate_args="T-4 T-5"
# a cell's whole boot; TCG on a loaded machine runs the quick gate in 1.5-5 min
TIMEOUT=2400
SETUP_S=300
[ $smoke = 1 ] && TIMEOUT=600
[ "$PROFILE" = full ] && TIMEOUT=$((TIMEOUT + 3600))
TIMEOUT=$((TIMEOUT + STORM * 2))

# KVM when it boots a guest, TCG otherwise (a /dev/kvm that is there but
# hangs, as under some nested hypervisors, counts as not working). The
# answer is kept in the cache for this boot of the host: a hanging probe
# costs 20 s a run.
ACCEL=tcg CPU=max
accel_pick() {
	[ -w /dev/kvm ] || return 0
	local t boot memo=$CACHE/accel
	boot=$(cat /proc/sys/kernel/random/boot_id)
	if [ "$(cut -d' ' -f1 "$memo" 2>/dev/null)" = "$boot" ]; then
		[ "$(cut -d' ' -f2 "$memo")" = kvm ] && ACCEL=kvm CPU=host
		return 0
	fi
	t=$(mktemp -d)
	mkdir -p "$t/r/bin" "$t/r/dev"
	cp /bin/busybox "$t/r/bin/"
	printf '#!/bin/busybox sh\n/bin/busybox mount -t devtmpfs d /dev\n/bin/busybox echo kvm-ok >/dev/ttyS1\n/bin/busybox poweroff -f\n' >"$t/r/init"
	chmod +x "$t/r/init"
	(cd "$t/r" && find . | cpio -o -H newc 2>/dev/null | gzip -1 >"$t/i.gz")
	( timeout 20 qemu-system-x86_64 -accel kvm -cpu host -m 256 -display none \
		-monitor none -no-reboot -kernel "$KDIR/vmlinuz" -initrd "$t/i.gz" \
		-append "console=ttyS0 panic=-1" -serial null -serial "file:$t/out" \
		>/dev/null 2>&1; true ) 2>/dev/null &
	wait $! # in the background: a signal's trap runs at once, not 20 s later
	grep -q kvm-ok "$t/out" 2>/dev/null && ACCEL=kvm CPU=host
	rm -rf "$t"
	echo "$boot $ACCEL" >"$memo" || true
	return 0
}

# The initramfs: busybox, residctl, unit-tests, the libraries ldd names, the
# init, the steps and the RAM-disk module. 1 with a line on stderr.
initramfs() {
	local dir=$1 steps=$2 r="$1/root" f libs
	rm -rf "$r"
	mkdir -p "$r/bin" "$r/proc" "$r/sys" "$r/dev" "$r/tmp" "$r/sys/fs/cgroup"
	libs=$(ldd build/residctl build/unit-tests | grep -o '/[^ ]*\.so[^ ]*' | sort -u) &&
	cp /bin/busybox build/residctl build/unit-tests "$r/bin/" || return 1
	for f in $libs; do
		mkdir -p "$r$(dirname "$f")" && cp -L "$f" "$r$f" || return 1
	done
	cp kernels/guest-init.sh "$r/init" &&
	{ [ ! -f "$KDIR/brd.ko" ] || cp "$KDIR/brd.ko" "$r/brd.ko"; } &&
	printf '%s\n' "$steps" >"$r/steps" &&
	(cd "$r" && find . | cpio -o -H newc 2>/dev/null | gzip -1 >"$dir/initramfs.gz") ||
		return 1
	rm -rf "$r"
}

# What the kernel says on an oops, BUG, WARNING, hung task, soft or hard
# lockup, RCU stall, OOM or panic (not the words of its command line).
BADLOG='Oops|BUG:|WARNING:|blocked for more than|soft lockup|hard LOCKUP|detected stall|self-detected stall|Out of memory|oom-kill|invoked oom-killer|Kernel panic|general protection fault'

# boot_cell DIR CG PLACE SWAP: one boot; results.log (the second serial
# port), console.log, qemu.log. Returns qemu's status (124: timeout). The
# stall and lockup detectors get their longest thresholds: an emulated CPU
# that a loaded host leaves unscheduled for a minute is not a kernel bug.
boot_cell() {
	local d=$1 rc
	: >"$d/results.log"
	: >"$d/console.log"
	timeout --kill-after=10 "$TIMEOUT" nice -n 10 qemu-system-x86_64 \
		-accel "$ACCEL" -cpu "$CPU" -m 1536 -smp 2 -display none \
		-monitor none -no-reboot -kernel "$KDIR/vmlinuz" \
		-initrd "$d/initramfs.gz" \
		-append "console=ttyS0 panic=-1 rcupdate.rcu_cpu_stall_timeout=300 watchdog_thresh=60 brd.rd_nr=1 brd.rd_size=131072 residctl.cg=$2 residctl.place=$3 residctl.swap=$4" \
		-serial "file:$d/console.log" -serial "file:$d/results.log" \
		>"$d/qemu.log" 2>&1 &
	local q=$! t=0
	# A guest not through its cell setup in SETUP_S s hangs before
	# residctl runs (judge: infrastructure); do not wait out TIMEOUT.
	while kill -0 $q 2>/dev/null && ! grep -q '^@setup-done' "$d/results.log"; do
		[ $t -ge "$SETUP_S" ] && { kill -TERM $q; break; }
		sleep 1
		t=$((t + 1))
	done
	wait $q
	rc=$?
	tr -d '\r' <"$d/results.log" >"$d/results.txt"
	return $rc
}

# The text between @file NAME begin/end of results.txt.
result_file() {
	awk -v n="$2" '$0 == "@file " n " end" {f=0} f {print} $0 == "@file " n " begin" {f=1}' "$1/results.txt"
}
step_rc() { awk -v n="$2" '$1 == "@step" && $2 == n && $3 == "end" {print $4}' "$1/results.txt"; }

# judge DIR NA QRC LACKS: sets VERDICT (pass, fail, n/a, infrastructure)
# and REASON.
judge() {
	local d=$1 na=$2 qrc=$3 lacks=$4 name rc want bad
	local r=$d/results.txt
	VERDICT=fail REASON=""
	if ! grep -q '^@cell ' "$r"; then
		VERDICT=infrastructure REASON="the guest did not boot (qemu status $qrc; see $d/console.log)"
		return
	fi
	if grep -q '^@setup-failed' "$r"; then
		VERDICT=infrastructure REASON="cell setup: $(sed -n 's/^@setup-failed //p' "$r" | head -1)"
		return
	fi
	bad=$(grep -aE "$BADLOG" "$d/console.log" | head -3 | tr '\n' ' ')
	# Nothing of residctl ran yet: a guest that hangs in its own setup
	# (seen: a 6.12 guest under loaded TCG whose CPU 1 timer stopped
	# right after /init, an RCU stall 300 s later) is the emulator's.
	if ! grep -q '^@setup-done' "$r"; then
		VERDICT=infrastructure REASON="the guest stopped in its cell setup, before any step (qemu status $qrc) $bad"
		return
	fi
	if ! grep -q '^@done' "$r"; then
		if [ "$qrc" != 0 ] && [ "$qrc" != 124 ] && [ -z "$bad" ]; then
			VERDICT=infrastructure REASON="qemu stopped (status $qrc): $(tail -1 "$d/qemu.log")"
		else
			REASON="the guest stopped in step $(awk '$1 == "@step" {s=$2} END {print s}' "$r") (qemu status $qrc) $bad"
		fi
		return
	fi
	while read -r name; do
		rc=$(step_rc "$d" "$name")
		want=0
		if [ "$na" = 1 ]; then
			want=2
			[ "$name" != probe ] || want=1
		fi
		[ "$rc" = "$want" ] || REASON="$REASON$name exited ${rc:-?} (want $want); "
	done < <(awk '$1 == "@step" && $3 == "begin" {print $2}' "$r")
	# A no for another reason (e.g. swap, when no trial cgroup could be
	# made) would hide a probe that misses the absent controller.
	[[ $na = 1 && $lacks = *CONFIG_MEMCG_V1* ]] &&
		! grep -q '^can the pager run here? no: no memory cgroup controller' "$r" &&
		REASON="${REASON}probe did not say no memory cgroup controller ($(grep -m1 '^can the pager run here?' "$r")); "
	[ -n "$bad" ] && REASON="${REASON}kernel log: $bad; "
	grep -q '^@leftover' "$r" && REASON="${REASON}cgroups left: $(sed -n 's/^@leftover //p' "$r" | tr '\n' ' '); "
	if [ -z "$REASON" ]; then
		VERDICT=pass
		[ "$na" = 1 ] && VERDICT=n/a
	fi
}

# run_cell N ID KERNEL CG PLACE SWAP: one line of JSON on cells.jsonl.
run_cell() {
	local n=$1 id=$2 k=$3 cg=$4 place=$5 swap=$6 d="$OUT/$2" t0 lacks na=0 steps
	local attempt=0 qrc gate probe
	rm -rf "$d"
	mkdir -p "$d"
	t0=$(date +%s)
	VERDICT="" REASON=""
	if ! kernel_fetch "$k" 2>"$d/fetch.log" && ! kernel_fetch "$k" 2>>"$d/fetch.log"; then
		VERDICT=infrastructure REASON="kernel $k: $(tail -1 "$d/fetch.log")"
	else
		lacks=$(kernel_lacks "$cg")
		steps=$(cell_steps "$gate_args" "$STORM" "$smoke" | steps_only)
		[ -n "$lacks" ] && na=1 steps=$(na_steps | steps_only)
		REASON=$(kernel_unknown "$cg" "$swap")
		if [ -n "$REASON" ]; then
			VERDICT=n/a na=0 REASON="not run: $REASON"
		else
			initramfs "$d" "$steps" 2>"$d/initramfs.log" ||
				VERDICT=infrastructure REASON="initramfs: $(tail -1 "$d/initramfs.log")"
		fi
	fi
	while [ -z "$VERDICT" ] || { [ "$VERDICT" = infrastructure ] && [ $attempt = 1 ]; }; do
		[ $attempt = 1 ] && echo "  $id: infrastructure ($REASON), retrying once"
		attempt=$((attempt + 1))
		boot_cell "$d" "$cg" "$place" "$swap"
		qrc=$?
		judge "$d" "$na" "$qrc" "$lacks"
	done
	[ "$na" = 1 ] && REASON="kernel lacks $lacks${REASON:+; $REASON}"
	touch "$d/results.txt"
	# each step's JSON as a file of its own, for the records
	sed -n 's/^@file \([a-z-]*\) begin$/\1/p' "$d/results.txt" | while read -r f; do
		result_file "$d" "$f" >"$d/$f.json"
	done
	probe=$(result_file "$d" probe | grep -m1 '^{' || true)
	gate=$(result_file "$d" gate)
	conf=$(result_file "$d" conformance)
	jq -cn --argjson n "$n" --arg id "$id" --arg kernel "$k" --arg cg "$cg" \
		--arg place "$place" --arg swap "$swap" --arg verdict "$VERDICT" \
		--arg reason "$REASON" --argjson seconds $(($(date +%s) - t0)) \
		--arg accel "$ACCEL" --argjson attempts "$attempt" \
		--arg package "$(cat "${KDIR:-/nonexistent}/package" 2>/dev/null)" \
		--argjson probe "${probe:-null}" --argjson gate "${gate:-null}" \
		--argjson conf "${conf:-null}" \
		--arg controllers "$(sed -n 's/^@controllers //p' "$d/results.txt")" '{
		n: $n, id: $id, kernel: $kernel, package: $package,
		release: ($probe.kernel // null),
		uffd_features: ($probe.uffd_features // null),
		cgroup: $cg, place: $place, swap: $swap, verdict: $verdict,
		reason: ($reason + (if $gate then [$gate.scenarios[] | select(.passed | not) | "\(.id): \(.message)"] | join("; ") else "" end)),
		scenarios: (if $gate then "\([$gate.scenarios[] | select(.passed)] | length)/\($gate.scenarios | length)" else null end),
		mismatches: (if $gate then ([$gate.scenarios[].mismatches] | add) else null end),
		seconds: $seconds, accel: $accel, attempts: $attempts,
		manifest: (if $probe then $probe | {kernel, uffd_features, uffd_feature_names,
			uffd_ioctls, uffd_ioctl_names, poison, dev_userfaultfd, thp, shmem_thp,
			controllers: $controllers} else null end),
		conformance_kernel: (if $conf then [$conf.cases[] | {(.name): (.linux_error +
			([.steps[] | "\(.step): \(.linux | del(.shmem) | to_entries | map(select(.value != "" and .value != 0) | "\(.key)=\(.value)") | join(" "))"] | join("; ")))}] | add
			else null end)}' >"$d/cell.json"
	cat "$d/cell.json" >>"$OUT/cells.jsonl"
	printf '  %-24s %-14s %-6s %4ss  %s\n' "$id" "$VERDICT" \
		"$(jq -r '.scenarios // "-"' "$d/cell.json")" \
		"$(jq -r .seconds "$d/cell.json")" "$REASON"
}

# Interrupted (design.md §9): SIGINT/SIGTERM end every process this run started
# (the cells' subshells; timeout, which passes it on to QEMU; the helpers)
# and exit 130/143. Each program it runs inherits RESIDCTL_KM_OWNER; a guard
# ends them and the script's own subshells when the script is killed
# outright. A subshell is a fork, not an exec: /proc/PID/environ keeps the
# script's environment from before the export, so the subshells this
# script starts in the background are listed in km_jobs instead.
export RESIDCTL_KM_OWNER=$$
km_jobs=$(mktemp /tmp/residctl-km-jobs.XXXXXX)
km_cmd=$(tr '\0' ' ' </proc/$$/cmdline)
km_marked() { grep -lsxz "RESIDCTL_KM_OWNER=$RESIDCTL_KM_OWNER" /proc/[0-9]*/environ | cut -d/ -f3; }
km_end() { # SIGNAL PIDS..: sends SIGNAL to PIDS (lists of them) and to every marked process
	local sig=$1 pids
	shift
	read -r -d '' -a pids <<<"$* $(km_marked)"
	kill "-$sig" "${pids[@]}" 2>/dev/null
}
km_job() { # the background job just started
	echo "$!" >>"$km_jobs"
}
km_orphans() { # the listed jobs still running: the script's command line
	local p
	[ -f "$km_jobs" ] || return 0
	while read -r p; do
		[ "$(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)" != "$km_cmd" ] || echo "$p"
	done <"$km_jobs"
}
km_tree() { # the descendants of PID, from one ps
	ps -e -o pid=,ppid= | awk -v root="$1" '{up[$1] = $2}
		END {for (p in up) {x = p; while (x in up && x != root && x > 1) x = up[x]; if (x == root && p != root) print p}}'
}
km_guard() {
	trap '' INT TERM
	local kids=""
	while kill -0 "$RESIDCTL_KM_OWNER" 2>/dev/null; do
		kids=$(km_tree "$RESIDCTL_KM_OWNER")
		sleep 1
	done
	km_end TERM "$kids" "$(km_orphans)"
	sleep 1
	km_end KILL "$kids" "$(km_orphans)"
	rm -f "$km_jobs"
}
# not a job of this shell (its last wait would wait for it); its pid
km_guard_pid=$( (km_guard </dev/null >/dev/null 2>&1 & echo $!) )
# shellcheck disable=SC2317 # called by the traps below
km_stop() { # SIGNAL STATUS
	trap '' INT TERM
	km_end TERM "$(jobs -p)" # its jobs ignore SIGINT (bash, no job control)
	wait
	kill -KILL "$km_guard_pid" 2>/dev/null
	echo "kernels/matrix.sh: interrupted (SIG$1): the cells stopped, results incomplete in $OUT" >&2
	exit "$2"
}
trap 'km_stop INT 130' INT
trap 'km_stop TERM 143' TERM
trap 'kill -KILL "$km_guard_pid" 2>/dev/null; rm -f "$km_jobs" ${newest_list:+"$newest_list"}' EXIT
# bash runs a trap only when the foreground child has ended (SIGINT during
# a clean build: 130 after 48 s); with a job and `wait` it runs at once.
bg_wait() {
	"$@" &
	km_job
	wait $!
}

if ! bg_wait bash kernels/deps.sh; then
	echo "kernels/matrix.sh: infrastructure: the matrix's packages are missing (see above)" >&2
	exit 3
fi
bg_wait make -s all || bad "the build failed"
# Every gate scenario but T-8: the guest has no engine (build/engine/), so
# T-8 would be UNKNOWN there.
[ $smoke = 1 ] || gate_args="$gate_args $(build/residctl check --list | awk '$1 != "T-8" { print $1 }' | paste -sd' ')"
mkdir -p "$OUT"
: >"$OUT/cells.jsonl"
[ "$SHARD_N" -gt 1 ] && echo "kernel matrix: shard $SHARD_K/$SHARD_N of $(grep -c . <<<"$chosen") cells"
echo "kernel matrix: $(grep -c . <<<"$todo") cells, steps: $(cell_steps "$gate_args" "$STORM" "$smoke" | steps_only | cut -f1 | tr '\n' ' ')"
# each kernel once before the cells share it; the accelerator once
picked=0
for k in $(awk '{print $3}' <<<"$todo" | uniq); do
	# the download in a job; again here, from the cache, for KDIR
	bg_wait kernel_fetch "$k" 2>/dev/null && kernel_fetch "$k" &&
		[ $picked = 0 ] && accel_pick && picked=1
done
running=0
while read -r n id k cg place swap; do
	[ -n "$n" ] || continue
	if [ "$running" -ge "$JOBS" ]; then
		wait -n
		running=$((running - 1))
	fi
	run_cell "$n" "$id" "$k" "$cg" "$place" "$swap" </dev/null &
	km_job
	running=$((running + 1))
done <<<"$todo"
wait
jq -sc 'sort_by(.n)[]' "$OUT/cells.jsonl" >"$OUT/cells.sorted" && mv "$OUT/cells.sorted" "$OUT/cells.jsonl"
fails=$(jq -r 'select(.verdict == "fail") | .id' "$OUT/cells.jsonl" | wc -l)
infra=$(jq -r 'select(.verdict == "infrastructure") | .id' "$OUT/cells.jsonl" | wc -l)
echo "kernel matrix: $(grep -c . "$OUT/cells.jsonl") cells, $fails failed, $infra infrastructure ($OUT/cells.jsonl)"
echo "what changed between kernels (kernels/diff.sh $OUT/cells.jsonl):"
bash kernels/diff.sh "$OUT/cells.jsonl" | sed 's/^/  /'
[ -z "$REPORT" ] || bash kernels/report.sh "$OUT/cells.jsonl" "$REPORT" "$SHARD_K" "$SHARD_N" \
	"profile=$PROFILE storm=$STORM smoke=$smoke cells=$(awk '{print $2}' <<<"$chosen" | paste -sd,)" \
	"$(awk '{print $1}' <<<"$chosen" | paste -sd,)" \
	"${OWN_KERNEL:+--kernel $OWN_KERNEL}${OWN_CONFIG:+ --kernel-config $OWN_CONFIG}${OWN_MODULES:+ --kernel-modules $OWN_MODULES}${newest_list:+--newest}" || exit 2
[ "$fails" -gt 0 ] && exit 1
[ "$infra" -gt 0 ] && exit 3
exit 0
