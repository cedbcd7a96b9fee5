#!/usr/bin/env bash
# The mutation campaign's simulated detector (scripts/mutate.sh sim and
# simx): what `check --sim --schedules 200` runs — the gate's simulated
# scenarios on equal and unequal chunks, half random walk, half PCT depth
# 3, each schedule with its swarm of faults — with no shrinking: a kill is
# the first failing schedule (--stop), and shrinking a long failure could take the
# detector's whole time limit. Stops at the first scenario that
# fails; exit 1 then, 0 when every one passed, 2 on bad input.
set -uo pipefail
usage="usage: scripts/mutation-sim.sh RESIDCTL [SCHEDULES]   (default 200 per scenario and leg)"
case "${1:-}" in -h | --help) echo "$usage"; exit 0 ;; esac
R=${1:-}
n=${2:-200}
[ -x "$R" ] || { echo "mutation-sim: no residctl '$R'; $usage" >&2; exit 2; }
{ [[ $n =~ ^[1-9][0-9]*$ ]] && [ "$n" -ge 2 ]; } || { echo "mutation-sim: bad schedule count '$n'; give a number >= 2" >&2; exit 2; }
for s in T-1 T-2 T-3 T-4 T-6 T-7; do
	for chunks in equal unequal; do
		for st in random pct:3; do
			out=$($R explore "$s" --chunks "$chunks" --strategy "$st" \
				--fault swarm --schedules $((n / 2)) --no-shrink --stop 2>&1)
			rc=$?
			case $rc in
			0) ;;
			1) echo "mutation-sim: $R explore $s --chunks $chunks --strategy $st --fault swarm --schedules $((n / 2)) --no-shrink --stop failed:"
				grep -E '^first failure|replay:' <<<"$out"
				exit 1 ;;
			*) echo "mutation-sim: $R explore $s --chunks $chunks --strategy $st exited $rc" >&2; exit 2 ;;
			esac
		done
	done
done
echo "mutation-sim: every scenario passed $n schedules"
