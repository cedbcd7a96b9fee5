#!/usr/bin/env bash
# Device classes (docs/bench.md, docs/run.md), seconds only: `bench device`
# under a small RATE on a file on a real disk reads at most 1.5x the limit
# (the throttle holds, not a speed); `run --device-class` and `run
# --kernel-mmap` on a tiny program; the refusals (a bad class, a file on
# tmpfs, --advice without --kernel-mmap), each one line and exit 2; and no
# cgroup left by any of them. Root and a cgroup with blkio (v1) or io (v2)
# are needed.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
R=$PWD/build/residctl
die() { echo "devclass: $*" >&2; exit 2; }
if [ ! -x "$R" ] || [ ! -r build/libresid-advice.so ]; then die "build first: make"; fi
tmp=$(mktemp -d build/ci-devclass.XXXXXX) || die "mktemp in build/"
shm=$(mktemp /dev/shm/resid-devclass.XXXXXX) || die "mktemp in /dev/shm"
trap 'rm -rf "$tmp" "$shm"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1: $2"; [ -s "$tmp/err" ] && sed 's/^/    /' "$tmp/err"; }
# Every residctl-<pid>-* cgroup whose process is gone: none may be left.
leftovers() {
	find /sys/fs/cgroup -maxdepth 8 -type d -name 'residctl-*' 2>/dev/null |
		while read -r d; do
			pid=${d##*/residctl-}; pid=${pid%%-*}
			[ -d "/proc/$pid" ] || echo "$d"
		done
}
refused() { # name, then the command: exit 2 and one line naming what
	local name=$1; shift
	"$@" >/dev/null 2>"$tmp/err"; local rc=$?
	if [ $rc -eq 2 ] && [ "$(wc -l <"$tmp/err")" -eq 1 ]; then ok "$name refused: $(cat "$tmp/err")"
	else bad "$name" "exit $rc, $(wc -l <"$tmp/err") lines"; fi
}

F=$tmp/file.bin
head -c $((16 * 1024 * 1024)) /dev/urandom >"$F" || die "the test file"
head -c $((1024 * 1024)) /dev/urandom >"$shm" || die "the tmpfs file"
cc -std=gnu11 -O2 docs/example/mapsum.c -o "$tmp/mapsum" || die "docs/example/mapsum.c does not build"

# 1. The device alone under 8 MiB/s: at most 1.5x (12.6 MB/s), and it read.
if $R bench device --file "$F" --device-class 8M --seconds 2 --json "$tmp/d.json" >"$tmp/out" 2>"$tmp/err"; then
	mbps=$(jq -r .device_mbps "$tmp/d.json")
	if [ "$(jq -r .device_class "$tmp/d.json")" = 8M ] &&
	   awk -v m="$mbps" 'BEGIN { exit !(m > 0 && m <= 1.5 * 8 * 1.048576) }'; then
		ok "bench device under 8M: $mbps MB/s"
	else bad "bench device under 8M" "$mbps MB/s, over 12.6 or none"; fi
else bad "bench device under 8M" "exit $?"; fi

# 2. run under a class, the pager's and the kernel's arm: same checksum,
# the class in the summary, the kernel's arm reading the file from disk.
want=$("$tmp/mapsum" "$F" 1)
got=$($R run --file "$F" --ratio 0.5 --device-class 32M -- "$tmp/mapsum" "$F" 1 2>"$tmp/err")
if [ "$got" = "$want" ] && tail -n 1 "$tmp/err" | grep -q 'device class 32M'; then ok "run --device-class 32M"
else bad "run --device-class 32M" "checksum $got, want $want; $(tail -n 1 "$tmp/err")"; fi
got=$($R run --file "$F" --ratio 0.5 --kernel-mmap --advice sequential --device-class 32M \
	--json "$tmp/k.json" -- "$tmp/mapsum" "$F" 1 2>"$tmp/err")
if [ "$got" = "$want" ] && [ "$(jq -r .arm "$tmp/k.json")" = kernel-mmap ] &&
   [ "$(jq -r .advice "$tmp/k.json")" = sequential ] &&
   [ "$(jq -r .read_bytes "$tmp/k.json")" -ge $((16 * 1024 * 1024)) ]; then
	ok "run --kernel-mmap --advice sequential: $(jq -r .read_bytes "$tmp/k.json") bytes read"
else bad "run --kernel-mmap" "checksum $got; $(tail -n 1 "$tmp/err")"; fi

# 3. The refusals.
refused "a bad class" "$R" bench device --file "$F" --device-class fast
refused "a bad IOPS" "$R" run --file "$F" --device-class 100M,x -- /bin/true
refused "bench device on tmpfs" "$R" bench device --file "$shm" --device-class sata
refused "run on tmpfs" "$R" run --file "$shm" --device-class sata -- /bin/true
refused "--advice without --kernel-mmap" "$R" run --file "$F" --advice random -- /bin/true

# 4. Nothing left.
left=$(leftovers)
if [ -z "$left" ]; then ok "no cgroup left behind"; else bad "cgroups left" "$left"; fi
echo "devclass: $pass passed, $fail failed"
[ $fail -eq 0 ]
