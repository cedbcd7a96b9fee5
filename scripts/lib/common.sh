# shellcheck shell=bash
# The prologue of the scripts that build the tool and measure or record with
# it (bench-*, record-*, gate.sh, ...), sourced first:
#   . "$(dirname "$0")/lib/common.sh"
# strict mode and the tree's root as the working directory, then the
# helpers below.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 2

# prologue [PACKAGE...]: the Debian packages residctl needs and these (a
# benchmark's tools), the build, and results/ to write into.
prologue() {
	bash scripts/deps.sh "$@"
	make -s all
	mkdir -p results
}

# scratch [PATH...]: a temporary directory in $tmp, removed on exit with
# the PATHs (what the script makes elsewhere, e.g. a model in build/).
scratch() {
	tmp=$(mktemp -d)
	# shellcheck disable=SC2064 # the names are fixed here
	trap "rm -rf $(printf '%q ' "$tmp" "$@")" EXIT
}

# The machine a figure was measured on, and its load average (1, 5, 15 min).
machine() { echo "$(uname -r), $(nproc) CPUs"; }
load() { cut -d' ' -f1-3 /proc/loadavg; }

# plot PNG WIDTH HEIGHT: draws the gnuplot commands on stdin into PNG
# (pngcairo, 10 pt; gnuplot-nox, which prologue installs when asked).
plot() {
	{ printf 'set terminal pngcairo size %s,%s font ",10"\nset output "%s"\n' "$2" "$3" "$1"; cat; } | gnuplot
}

# engine_prologue NAME: the engine installed (scripts/engine.sh; its exit
# code when it cannot be) and root (drop_caches), for the scripts that
# drop the page cache and run llama-driver; D and R name the two tools.
engine_prologue() {
	local rc=0
	bash scripts/engine.sh || rc=$?
	[ "$rc" -eq 0 ] || exit "$rc"
	[ "$(id -u)" -eq 0 ] || { echo "$1: run as root (drop_caches)" >&2; exit 2; }
	# shellcheck disable=SC2034 # the caller's names
	D=build/engine/llama-driver
	# shellcheck disable=SC2034
	R=build/residctl
}

# mmap_reference MODEL: the engine under the kernel's mmap with no limit
# (the caller's D, dir, run_s, tokens, threads and fail; the caller drops
# the page cache first): its JSON line in ref, its peak RSS in rss_kb and
# in own the bytes of it beside the model, the engine's own memory.
# shellcheck disable=SC2034,SC2154 # the caller's names
mmap_reference() {
	local bytes
	bytes=$(stat -c %s "$1")
	ref=$(timeout "$run_s" /usr/bin/time -f '%M' -o "$dir/rss" "$D" "$1" --tokens "$tokens" --threads "$threads") ||
		fail "llama-driver on $1 under the kernel's mmap failed"
	rss_kb=$(tail -n1 "$dir/rss")
	own=$((rss_kb * 1024 - bytes))
	[ "$own" -gt 0 ] || own=0
}
