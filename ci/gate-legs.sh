#!/usr/bin/env bash
# The default gate reads a real file, as users do. Each scenario states
# its legs once (.legs in harness/scenarios/ and storms/), and every row of
# the gate's JSON carries them ("gate_legs"): "file" read from a real file
# (O_DIRECT, or buffered where the file system refused it, and said so),
# "unequal" on unequal chunks, "huge" in a huge tmpfs (owed only where the
# probe found one, manifest.huge_tmpfs). Here each scenario must have a
# passing row with no leg (synthetic, equal chunks), one on each leg alone
# and one on each two together, as the gate runs them; no row may take a leg
# its scenario does not state.
set -uo pipefail
json=${1:-build/gate.json}
command -v jq >/dev/null || { echo "gate legs: jq is missing: run scripts/deps.sh" >&2; exit 2; }
[ -s "$json" ] || { echo "gate legs: no $json; run build/residctl check --json $json first" >&2; exit 2; }
# One line per leg owed and not run, or run and not owed.
problems=$(jq -r '
	def legs: [(if .backing | startswith("file") then "file" else empty end),
		(if .chunks | startswith("unequal") then "unequal" else empty end),
		(if .chunks | endswith("+huge") then "huge" else empty end)];
	def name: if . == [] then "synthetic on equal chunks" else join(" and ") end;
	(.manifest.huge_tmpfs // false) as $huge
	| .scenarios | group_by(.id)[]
	| . as $rows | .[0].id as $id | .[0].gate_legs as $stated
	| [$stated[] | select(. != "huge" or $huge)] as $owed
	| [$rows[] | select(.passed) | legs] as $ok
	| (([[]] + [$owed[] | [.]]
	    + [range($owed | length) as $i | range($i + 1; $owed | length) as $j
	       | [$owed[$i], $owed[$j]]])[]
	   | select(. as $want | $ok | index([$want]) | not)
	   | "\($id): no passing row, \(name)"),
	  ($rows[] | legs[] | select(. as $leg | $stated | index($leg) | not)
	   | "\($id): a row on a \(.) leg it does not state")
	' "$json") || { echo "gate legs: $json is not the gate's JSON" >&2; exit 2; }
if [ -n "$problems" ]; then
	while read -r l; do echo "gate legs: $json: $l"; done <<<"$problems" >&2
	exit 1
fi
jq -r '.scenarios as $s
	| "gate legs: \($s | length) rows of \($s | map(.id) | unique | length) scenarios, each leg stated passed: \([$s[] | select(.backing == "file O_DIRECT")] | length) rows read a file with O_DIRECT, \([$s[] | select(.backing == "file buffered")] | length) buffered; \([$s[] | select(.chunks | startswith("unequal"))] | length) on unequal chunks, \([$s[] | select(.chunks | endswith("+huge"))] | length) in a huge tmpfs"' "$json"
