#!/usr/bin/env bash
# Where a fetch's time goes (root; perf from Debian's linux-perf; about a
# minute): arm D of bench arms at budget ratio 0.5 (16 chunks of 8 MiB,
# 8 passes, as in bench-targets.sh; extra arguments go to both runs, e.g.
# --chunk 128M --chunks 8 --passes 4), once under `perf trace -s` (the
# time of every system call of the fetch workers and their readers) and
# once under `perf record -g` (kernel and user symbols of those threads).
# Writes results/bench-profile.md (or the file in $PROFILE_OUT).
# shellcheck source=scripts/lib/common.sh
. "$(dirname "$0")/lib/common.sh"
out=${PROFILE_OUT:-results/bench-profile.md}
prologue linux-perf
scratch
run=(build/residctl bench arms --chunk 8M --chunks 16 --passes 8 --ratios 0.5
	--arms D "$@")

echo "bench-profile: perf trace -s" >&2
perf trace -s -o "$tmp/trace.txt" "${run[@]}" --csv "$tmp/t.csv" >/dev/null
echo "bench-profile: perf record -g" >&2
perf record -q -g -o "$tmp/perf.data" "${run[@]}" --csv "$tmp/r.csv" >/dev/null
mib() {
	awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		$c["arm"] == "D" { printf "%.0f", $c["pager_fetch_bytes"] / 1048576 }' "$1"
}
fetched=$(mib "$tmp/t.csv")

# perf trace -s: a block per thread, "comm (tid), N events", then one line
# per system call: name, calls, errors, total ms, ...
syscalls() {
	awk -v mib="$fetched" '
	/^ [^ ].* \([0-9]+\), [0-9]+ events/ { comm = $1; next }
	comm ~ /^resid-(fetch|read)$/ && $2 ~ /^[0-9]+$/ && $4 ~ /^[0-9.]+$/ {
		k = comm " " $1; calls[k] += $2; ms[k] += $4
	}
	END {
		for (k in ms) {
			split(k, p, " ")
			printf "| %s | %s | %d | %.0f | %.3f |\n", p[1], p[2], calls[k], ms[k], ms[k] / mib
		}
	}' "$tmp/trace.txt" | sort -t'|' -k5 -rn | head -12
}

report() {
	perf report -i "$tmp/perf.data" --stdio "$@" -g none 2>/dev/null
}
share=$(report --no-children --sort comm | awk '$2 ~ /^resid-(fetch|read)$/ { gsub("%", "", $1); s += $1 } END { printf "%.1f", s }')
# Inclusive: the kernel paths a fetch takes, as a share of all samples.
paths() {
	report --children --sort comm,sym | awk '
	$3 ~ /^resid-(fetch|read)$/ && $5 ~ /^(shmem_file_write_iter|shmem_alloc_and_add_folio|copy_folio_from_iter_atomic|shmem_fallocate|shmem_undo_range|unmap_mapping_range|userfaultfd_ioctl|mfill_atomic_continue|ksys_pread64|iomap_dio_rw|ext4_file_read_iter)$/ {
		gsub("%", "", $1); s[$5] += $1
	}
	END { for (k in s) printf "| %s | %.1f %% |\n", k, s[k] }' | sort -t'|' -k3 -rn
}
# Self time of the fetch threads' symbols, as a share of those threads.
symbols() {
	report --no-children --sort comm,sym | awk '
	$2 ~ /^resid-(fetch|read)$/ { gsub("%", "", $1); s[$4] += $1; t += $1 }
	END { for (k in s) printf "| %s | %.1f %% |\n", k, 100 * s[k] / t }' |
		sort -t'|' -k3 -rn | head -12
}

{
	echo "# Where a fetch's time goes"
	echo
	echo "\`scripts/bench-profile.sh $*\` on $(machine),"
	echo "$(date -u '+%Y-%m-%d %H:%M UTC'), load average $(load) at the end:"
	echo "arm D, \`${run[*]:3}\`; the pager fetched $fetched MiB in the traced run."
	echo
	echo "System calls of the fetch workers (resid-fetch) and their readers"
	echo "(resid-read), \`perf trace -s\` (futex: waits for locks, jobs and the"
	echo "reader; pread64: the O_DIRECT reads; pwrite64: into the memfd;"
	echo "fallocate: the victims' punches; ioctl: CONTINUE and WAKE):"
	echo
	echo "| thread | system call | calls | total ms | ms per MiB fetched |"
	echo "|---|---|---|---|---|"
	syscalls
	echo
	echo "\`perf record -g\`: the fetch threads hold $share % of all samples (the"
	echo "rest is the application checking every word, and the bench writing"
	echo "its file). Their kernel paths, inclusive, as a share of all samples:"
	echo
	echo "| path | samples |"
	echo "|---|---|"
	paths
	echo
	echo "Their own time by symbol, as a share of the fetch threads' samples:"
	echo
	echo "| symbol | share |"
	echo "|---|---|"
	symbols
} >"$out"
echo "bench-profile: $out"
