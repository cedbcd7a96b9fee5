#!/usr/bin/env bash
# A simulated campaign ends within its bounds when the pager is broken the
# way a maintainer breaks it: `check --sim --schedules 2000` on a worker's
# condition wait under `if` (ci/mutants/cond-wait-if.patch, built in a
# scratch copy of the tree) and on bug switch 9 (the chunk lock dropped
# around a policy update), each alone in a 1 GiB memory cgroup (v1) under a
# 120 s limit, must exit 1 with its table and a replay line. Prints each
# run's wall time and peak memory (memory.max_usage_in_bytes). With --all,
# also every bug switch (residctl repro --list). Root, cgroup v1 memory controller.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
root=/sys/fs/cgroup/memory
[ -d "$root" ] || { echo "campaign-bounds: no cgroup v1 memory controller at $root" >&2; exit 2; }
LIMIT=$((1 << 30))
SECONDS_MAX=120
bugs=(9)
[ "${1:-}" = --all ] && mapfile -t bugs < <(build/residctl repro --list | awk '$1 ~ /^[0-9]+$/ {print $1}')

tmp=$(mktemp -d /tmp/resid-bounds.XXXXXX) || exit 2
cg="$root/resid-bounds.$$"
# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
	local pid
	if [ -d "$cg" ]; then
		while read -r pid; do kill -KILL "$pid" 2>/dev/null; done <"$cg/cgroup.procs"
		for _ in 1 2 3 4 5 6 7 8 9 10; do rmdir "$cg" 2>/dev/null && break; sleep 0.2; done
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
mkdir "$cg" && echo "$LIMIT" >"$cg/memory.limit_in_bytes" || exit 2

# The mutant: the tree as it is here, patched, built on its own from this
# build's harness objects (make rebuilds what the patch touches).
if ! { mkdir -p "$tmp/tree/build" &&
	tar --exclude=./build --exclude=./.git -cf - . | tar -xf - -C "$tmp/tree" &&
	{ [ ! -d build/h ] || cp -a build/h build/rev.h "$tmp/tree/build/"; } &&
	patch -s -d "$tmp/tree" -p1 <ci/mutants/cond-wait-if.patch &&
	make -s -C "$tmp/tree" -j2 build/residctl >/dev/null; }; then
	echo "campaign-bounds: could not build the cond-wait-if mutant" >&2
	exit 2
fi

failed=0
printf '%-14s %8s %9s %5s  %s\n' "shape" "wall s" "peak MiB" "exit" "table, replay line"
# run NAME TOOL ARGS...: one campaign alone in the cgroup.
run() {
	local name=$1 tool=$2 t0 t1 rc peak ok=yes
	shift 2
	echo 0 >"$cg/memory.max_usage_in_bytes"
	t0=$EPOCHREALTIME
	(echo $BASHPID >"$cg/cgroup.procs" &&
		exec timeout -s KILL "$SECONDS_MAX" "$tool" check --sim \
			--schedules 2000 "$@") >"$tmp/out" 2>"$tmp/err"
	rc=$?
	t1=$EPOCHREALTIME
	peak=$(($(cat "$cg/memory.max_usage_in_bytes") >> 20))
	if ! grep -q '^total: ' "$tmp/out" || ! grep -q '^replay: residctl check --sim' "$tmp/out" ||
		! grep -q "replay: residctl replay 'rc3/" "$tmp/out"; then
		ok=no
	fi
	printf '%-14s %8.1f %9d %5d  %s\n' "$name" "$(bc <<<"$t1 - $t0")" "$peak" "$rc" "$ok"
	if [ "$rc" -ne 1 ] || [ "$ok" != yes ] || [ "$peak" -ge $((LIMIT >> 20)) ]; then
		echo "campaign-bounds: $name: want exit 1, a table and a replay line under $((LIMIT >> 20)) MiB in ${SECONDS_MAX} s" >&2
		tail -5 "$tmp/err" >&2
		failed=1
	fi
}

run cond-wait-if "$tmp/tree/build/residctl"
for b in "${bugs[@]}"; do
	run "bug $b" build/residctl --bug "$b"
done
exit $failed
