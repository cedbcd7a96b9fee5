#!/usr/bin/env bash
# The fetch's costs without the pager (about three minutes): scripts/pagework.c
# on a 512 MiB file in build/ (not tmpfs) read with O_DIRECT, at 8 and
# 128 MiB chunks, 5 runs each, the kinds interleaved run by run: the device
# alone (1 and 4 MiB reads), a 1 MiB read then write in series and with a
# reader thread and two slots (what fetch.c does; and two 4 MiB slots),
# pwrite and fallocate into punched pages, pwrite into pages freed 3 s
# before (fresh), the punch by one thread and by two at once, and the
# first and second read of B through entries made up front (touch,
# touch2); into a memfd (4 KiB pages),
# and, as root where shmem has THP, into a file on a tmpfs mounted with
# huge=within_size in a mount namespace of its own (the huge path's B).
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
huge=1 why=""
if [ "$(id -u)" != 0 ]; then
	huge=0 why="the huge rows need root (a tmpfs mount): run as root"
elif [ ! -e /sys/kernel/mm/transparent_hugepage/shmem_enabled ]; then
	huge=0 why="the huge rows need shmem THP, which this kernel lacks"
fi
for c in 8 128; do
	echo "bench-pagework: $c MiB chunks, memfd" >&2
	"$tmp/pagework" "$file" "$c" 5 >>"$tmp/out.csv"
	[ "$huge" = 1 ] || continue
	echo "bench-pagework: $c MiB chunks, tmpfs with huge=within_size" >&2
	mkdir -p "$tmp/huge"
	# shellcheck disable=SC2016 # expanded by the inner sh
	unshare -m sh -c 'mount -t tmpfs -o huge=within_size,size=1g pagework "$1" &&
		exec "$2" "$3" "$4" 5 "$1"' sh "$tmp/huge" "$tmp/pagework" "$file" "$c" >>"$tmp/out.csv"
done
{
	echo "# The fetch's costs without the pager"
	echo
	echo "\`scripts/bench-pagework.sh\` on $(machine), $(date -u '+%Y-%m-%d %H:%M UTC'), load average $(load) at the end."
	echo "A 512 MiB file read with \`O_DIRECT\` in 1 MiB parts and a memfd"
	echo "([scripts/pagework.c](../scripts/pagework.c)); median of 5 runs, the kinds"
	echo "interleaved run by run. device: the reads alone, into one reused"
	echo "buffer (device4: in 4 MiB parts); serial: each part read, then written into the"
	echo "memfd; reader: the next part read by another thread while this one is"
	echo "written (two 1 MiB slots, as the pager's workers do; reader4: two"
	echo "4 MiB slots); all punch the"
	echo "chunk two behind, as eviction would. pwrite, allocate: the same"
	echo "walk filling the punched pages with \`pwrite\` or \`fallocate\` (which"
	echo "zeroes them), the punches not counted; fresh: \`pwrite\` of the whole file"
	echo "into B emptied 3 s before (pages the machine had time to take back:"
	echo "on a VM whose balloon reports free memory to its host, their first"
	echo "touch is a host fault); punch, punch2: punching"
	echo "populated pages chunk by chunk, and in two halves by two threads at once;"
	echo "touch, touch2: B mapped read-only with every 4 KiB entry made up front"
	echo "(\`MAP_POPULATE\`, as \`UFFDIO_CONTINUE\` maps A) and read word by word, the"
	echo "first time and again (on a VM whose host shadows the guest's page"
	echo "tables, the first read of each new entry is a trip to the host)."
	echo "B: a memfd of 4 KiB pages (4k), or a file on a tmpfs mounted with"
	echo "\`huge=within_size\` (huge: 2 MiB folios, checked in /proc/meminfo),"
	echo "as B on the pager's huge path. / device: the kind's MiB/s over the"
	echo "device's of the same run; for the page work alone (pwrite, allocate)"
	echo "it is the most any fetch that writes B could reach of the device."
	[ -z "$why" ] || { echo; echo "No huge rows: $why."; }
	rep=/sys/module/page_reporting/parameters/page_reporting_order
	if [ -r "$rep" ]; then
		echo
		echo "Free page reporting is on here: free blocks of order $(cat "$rep")"
		echo "($((4 << $(cat "$rep"))) KiB) and up go back to the host."
	fi
	echo
	echo "| chunk MiB | B | kind | ms per MiB | MiB/s | / device |"
	echo "|---|---|---|---|---|---|"
	awk -F, '$2 == "device" { dev[$1 "," $3] = $5 }
		{ row[NR] = $0 }
		END { for (i = 1; i <= NR; i++) { split(row[i], f, ",")
			printf "| %s | %s | %s | %s | %s | %.1f %% |\n", f[3], f[1], f[2], f[4], f[5],
				100 * f[5] / dev[f[1] "," f[3]] } }' "$tmp/out.csv"
} >results/bench-pagework.md
echo "bench-pagework: results/bench-pagework.md"
