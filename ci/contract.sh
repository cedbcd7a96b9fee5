#!/usr/bin/env bash
# The library's contract, as a user meets it: the clients of
# ci/contract/ are built from the installed prefix alone (make install,
# pkg-config resid) and run on the real kernel, each in a cgroup of its
# own; each "ok"/"FAIL" line they print is one promise of resid.h. The
# cgroup case runs in the shape of a container or a systemd slice: a limit
# on an ancestor (swap allowed there, forbidden in the leaf, as v1 memsw
# can say), the client's own cgroup unlimited, a sibling using memory.
# Root and a memory cgroup (v1 here; v2 works the same) are needed. Leaves
# no cgroup, file or process behind. Ends with "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
die() { echo "contract: $*" >&2; exit 2; }

v1=/sys/fs/cgroup/memory
if [ -d "$v1" ] && rel=$(sed -n 's/^[0-9]*:memory:\(.*\)$/\1/p' /proc/self/cgroup) && [ -n "$rel" ]; then
	ver=1 base="$v1${rel%/}" limit=memory.limit_in_bytes
else
	ver=2 rel=$(sed -n 's/^0:://p' /proc/self/cgroup) base="/sys/fs/cgroup${rel%/}" limit=memory.max
	grep -qw memory "$base/cgroup.subtree_control" 2>/dev/null ||
		die "no memory controller for the children of $base"
fi
tmp=$(mktemp -d /tmp/resid-contract.XXXXXX) || die "mktemp"
top="$base/residctl-$$-contract"
hog=/dev/shm/resid-contract-$$
cleanup() {
	rm -f "$hog"
	# depth first: leaves before their parent
	for d in $(find "$top" -mindepth 1 -depth -type d 2>/dev/null) "$top"; do
		[ -d "$d" ] || continue
		while read -r p; do kill -9 "$p" 2>/dev/null; done <"$d/cgroup.procs"
		rmdir "$d" 2>/dev/null || sleep 0.2
		rmdir "$d" 2>/dev/null
	done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

make -s install PREFIX="$tmp/prefix" >/dev/null || die "make install"
export PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig"
flags=$(pkg-config --cflags --libs resid) || die "pkg-config resid"
read -r -a flags <<<"$flags"
clients=(fork cgroup signals two special truncate api hands)
# outside the tree: only the installed header and library; two at a time
cp ci/contract/*.c ci/contract/client.h "$tmp/" || die "copy the clients"
printf '%s\n' "${clients[@]}" | xargs -P 2 -I{} cc -std=gnu11 -Wall -Wextra -Werror \
	-O2 "$tmp/{}.c" "${flags[@]}" -lpthread -o "$tmp/{}" ||
	die "a client does not build against the installed library"
mkdir "$top" || die "mkdir $top"

pass=0 fail=0
# run NAME CGROUP_DIR ARGS...: the client alone in CGROUP_DIR; a client that
# dies or hangs (60 s) is a failure of its own.
run() {
	local name=$1 cg=$2; shift 2
	local out rc
	out=$( (echo $BASHPID >"$cg/cgroup.procs" && exec timeout -s KILL 60 "$tmp/$name" "$@") 2>&1)
	rc=$?
	[ -z "$out" ] || printf '  %s\n' "${out//$'\n'/$'\n'  }"
	pass=$((pass + $(grep -c '^ok ' <<<"$out")))
	fail=$((fail + $(grep -c '^FAIL ' <<<"$out")))
	if [ $rc -gt 1 ] || { [ $rc -ne 0 ] && ! grep -q '^FAIL ' <<<"$out"; }; then
		echo "  FAIL $name: the client exited $rc (137: killed after 60 s)"
		fail=$((fail + 1))
	fi
}
leaf() { mkdir "$top/$1" && echo "$top/$1"; }

run fork "$(leaf fork)" "$tmp/fork.bin"
run signals "$(leaf signals)" "$tmp/signals.bin"
run two "$(leaf two)" "$tmp/two1.bin" "$tmp/two2.bin"
mkfifo "$tmp/fifo" || die "mkfifo"
mkdir "$tmp/dir"
run special "$(leaf special)" "$tmp/fifo" "$tmp/dir" /dev/null
run truncate "$(leaf truncate)" "$tmp/truncate.bin"
run api "$(leaf api)" "$tmp/api.bin"
# the client mounts a huge tmpfs there in a mount namespace of its own
mkdir "$tmp/huge" || die "mkdir huge"
run hands "$(leaf hands)" "$tmp/hands.bin" "$tmp/huge"

# The slice: 32 MiB on the ancestor, swap allowed there; the app's own
# cgroup unlimited (v1: its memsw equal to its limit would forbid swap for
# its own reclaim, so the leaf gets a large limit with memsw equal to it);
# a sibling holds 16 MiB of shmem.
slice=$(leaf slice) || die "mkdir slice"
echo $((32 << 20)) >"$slice/$limit" || die "set the slice's limit"
mkdir "$slice/app" "$slice/sibling" || die "mkdir app, sibling"
if [ $ver = 1 ] && [ -e "$slice/app/memory.memsw.limit_in_bytes" ]; then
	{ echo $((1 << 30)) >"$slice/app/$limit" &&
		echo $((1 << 30)) >"$slice/app/memory.memsw.limit_in_bytes"; } ||
		die "forbid swap in the app's cgroup"
fi
(echo $BASHPID >"$slice/sibling/cgroup.procs" &&
	exec dd if=/dev/zero of="$hog" bs=1M count=16 status=none) || die "the sibling's 16 MiB"
run cgroup "$(leaf make)" "$tmp/cgroup.bin" "$slice" make
run cgroup "$slice/app" "$tmp/cgroup.bin" "$slice" refuse
run cgroup "$slice/app" "$tmp/cgroup.bin" "$slice" fits

echo "contract: $pass passed, $fail failed"
[ $fail -eq 0 ] && [ $pass -gt 0 ]
