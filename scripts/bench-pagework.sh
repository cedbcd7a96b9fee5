#!/usr/bin/env bash
# The fetch's costs without the pager (root not needed; about a minute):
# scripts/pagework.c on a 512 MiB file in build/ (not tmpfs) read with
# O_DIRECT and a memfd, at 8 and 128 MiB chunks, 5 runs each, the kinds
# interleaved run by run: a 1 MiB read then write in series and with a
# reader thread and two slots (what fetch.c does), pwrite and fallocate
# into punched pages, and the punch by one thread and by two at once.
# Writes results/bench-pagework.md. Extra argument: the directory for the
# file (default build).
# shellcheck source=scripts/lib/common.sh
. "$(dirname "$0")/lib/common.sh"
dir=${1:-build}
[ -d "$dir" ] || { echo "bench-pagework: no directory $dir: give an existing one" >&2; exit 2; }
bash scripts/deps.sh
file="$dir/pagework.$$"
scratch "$file"
cc -std=gnu11 -O2 -Wall -Wextra -Werror -pthread scripts/pagework.c -o "$tmp/pagework"
head -c $((512 << 20)) /dev/urandom >"$file"
sync "$file"
for c in 8 128; do
	echo "bench-pagework: $c MiB chunks" >&2
	"$tmp/pagework" "$file" "$c" 5 >>"$tmp/out.csv"
done
{
	echo "# The fetch's costs without the pager"
	echo
	echo "\`scripts/bench-pagework.sh\` on $(machine), $(date -u '+%Y-%m-%d %H:%M UTC'), load average $(load) at the end."
	echo "A 512 MiB file read with \`O_DIRECT\` in 1 MiB parts and a memfd"
	echo "([scripts/pagework.c](../scripts/pagework.c)); median of 5 runs, the kinds"
	echo "interleaved run by run. serial: each part read, then written into the"
	echo "memfd; reader: the next part read by another thread while this one is"
	echo "written (two 1 MiB slots, as the pager's workers do); both punch the"
	echo "chunk two behind, as eviction would. pwrite, allocate: the same"
	echo "walk filling the punched pages with \`pwrite\` or \`fallocate\` (which"
	echo "zeroes them), the punches not counted; punch, punch2: punching"
	echo "populated pages chunk by chunk, and in two halves by two threads at once."
	echo
	echo "| chunk MiB | kind | ms per MiB | MiB/s |"
	echo "|---|---|---|---|"
	awk -F, '{ printf "| %s | %s | %s | %s |\n", $2, $1, $3, $4 }' "$tmp/out.csv"
} >results/bench-pagework.md
echo "bench-pagework: results/bench-pagework.md"
