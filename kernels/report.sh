#!/usr/bin/env bash
# The kernel matrix's campaign report (harness/campaign.h's format, read by
# residctl merge): one row, a unit per chosen cell, each cell a finding
# with its verdict; a failed cell fails the row, an infrastructure one is
# counted, not failed (kernels/matrix.sh exits 3 for it).
# usage: kernels/report.sh CELLS.jsonl REPORT K N IDENTITY ORDER [KERNEL_ARGS]
#   ORDER: the chosen cells' numbers (--list), comma-separated, in order;
#   KERNEL_ARGS: what chose the kernels (--kernel F, --newest), for the
#   rerun lines.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# = 6 ] || [ $# = 7 ] || { echo "usage: kernels/report.sh CELLS.jsonl REPORT K N IDENTITY ORDER [KERNEL_ARGS]" >&2; exit 2; }
cells=$1 report=$2 k=$3 n=$4 identity=$5 order=$6 kargs=${7:+ $7}
rev=$(sed -n 's/.*RESID_REV "\(.*\)"/\1/p' build/rev.h)
[ -n "$rev" ] || { echo "kernels/report.sh: no build/rev.h; run make first" >&2; exit 2; }
jq -s --arg rev "$rev" --arg identity "$identity" --argjson k "$k" --argjson n "$n" --arg kargs "$kargs" \
	--argjson order "[$order]" '
	(map(. + {index: (.n as $c | $order | index($c))}) | sort_by(.index)) as $c |
	{format: "residctl-campaign/1",
	 campaign: {command: "kernels", identity: $identity, rev: $rev, seed: "0",
		    size: ($order | length), unit: "cells"},
	 shard: {k: $k, n: $n},
	 rows: [{name: "kernel matrix", order: 0, size: ($order | length),
		 ran: ($c | length),
		 counters: {pass: ([$c[] | select(.verdict == "pass")] | length),
			    fail: ([$c[] | select(.verdict == "fail")] | length),
			    "n/a": ([$c[] | select(.verdict == "n/a")] | length),
			    infrastructure: ([$c[] | select(.verdict == "infrastructure")] | length)},
		 maxima: {}, require: [], samples: [],
		 findings: [$c[] | {index, fails: (.verdict == "fail"),
				    what: "\(.id): \(.verdict) \(.seconds) s \(.reason)",
				    line: "kernels/matrix.sh\($kargs) --cells \(.id)"}],
		 findings_total: ($c | length),
		 failing: ([$c[] | select(.verdict == "fail")] | length)}],
	 seconds: ([$c[].seconds] | add // 0)}' "$cells" >"$report.tmp"
mv "$report.tmp" "$report"
