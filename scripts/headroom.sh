#!/usr/bin/env bash
# The pager's memory headroom beyond its budget, measured (design.md §9,
# docs/core.md): for a few configurations, the peak usage of a cgroup v1
# of its own while a region is read, less the usage before resid_open and
# the budget (resident + reserved bytes never exceed it, and budget +
# headroom is what resid_open asks of the cgroup), next to resid_headroom().
# Less the resident bytes instead, in-flight fetches' pages would count as
# overhead and the figure would move with the load. Then the limit check: at
# usage + budget + resid_headroom the region runs; at usage + budget it is
# refused with the number (without the check it was OOM-killed). Root, cgroup
# v1 memory controller.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
root=/sys/fs/cgroup/memory
[ -d "$root" ] || { echo "headroom: no cgroup v1 memory controller at $root" >&2; exit 2; }
tmp=$(mktemp -d /tmp/resid-headroom.XXXXXX) || exit 2
cg="$root/resid-headroom.$$"
cleanup() { rmdir "$cg" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT
make -s install PREFIX="$tmp/prefix" >/dev/null || exit 2
export PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig"
read -r -a flags <<<"$(pkg-config --cflags --libs resid)" || exit 2
cc -std=gnu11 -O2 -Wall -Wextra -Werror scripts/headroom.c \
	"${flags[@]}" -o "$tmp/headroom" || exit 2
mkdir "$cg" || exit 2

# run LIMIT ARGS...: the program alone in the cgroup, under LIMIT (-1: none).
run() {
	local limit=$1; shift
	echo "$limit" >"$cg/memory.limit_in_bytes" || return 2
	(echo $BASHPID >"$cg/cgroup.procs" && exec "$tmp/headroom" "$cg" "$@")
}

M=$((1 << 20))
for conf in "$((64 * M)) $M $((8 * M)) 4" "$((256 * M)) $((2 * M)) $((32 * M)) 4" \
	    "$((256 * M)) $((64 * 1024)) $((16 * M)) 8" "$((29 * M)) $((512 * 1024)) $((4 * M)) 1"; do
	read -r -a args <<<"$conf"
	out=$(run -1 "${args[@]}") || { echo "headroom: run failed: $out" >&2; exit 1; }
	echo "$out"
	over=$(sed -n 's/.*overhead \(-\?[0-9]*\),.*/\1/p' <<<"$out")
	head=$(sed -n 's/.*resid_headroom \([0-9]*\)$/\1/p' <<<"$out")
	[ "$over" -le "$head" ] || { echo "headroom: measured $over > resid_headroom $head" >&2; exit 1; }
done

# The limit check, on the first configuration: the program sets the limit
# from its own usage just before resid_open.
set -- $((64 * M)) $M $((8 * M)) 4
out=$(run -1 "$@" headroom); rc=$?
echo "limit usage + budget + headroom + 512 KiB: exit $rc: $out"
[ $rc -eq 0 ] || exit 1
out=$(run -1 "$@" budget); rc=$?
echo "limit usage + budget: exit $rc: $out"
[ $rc -eq 3 ] || { echo "headroom: expected a refusal (exit 3), not an OOM kill" >&2; exit 1; }
