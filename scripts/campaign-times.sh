#!/usr/bin/env bash
# The per-shard times of docs/campaigns.md, written to results/campaigns.md:
# 1. `check --sim --schedules 8000` as 4 shards, one after another, each
#    timed (wall clock, user and system CPU), then merged;
# 2. the first 2 of the 16 shards of the 1,000,000-schedule campaign of
#    ci/github/residctl.yml (`check --sim --schedules 83334`), timed;
# with the load average, the schedules per CPU second, and the time of the
# whole 1,000,000-schedule campaign, labelled as an extrapolation.
# shellcheck source=scripts/lib/common.sh
. "$(dirname "$0")/lib/common.sh"
make -s all
for t in jq /usr/bin/time; do
	command -v "$t" >/dev/null || { echo "scripts/campaign-times.sh: needs $t (scripts/deps.sh; apt-get install time)" >&2; exit 2; }
done
d=build/campaign-times
rm -rf "$d"
mkdir -p "$d"
out=results/campaigns.md
calc() { awk "BEGIN {printf \"%.${1}f\", $2}"; }

# shards S N M: shards 1..M of `check --sim --schedules S --shard K/N`, a
# table row each; sets RATE (schedules per CPU s over them).
shards() {
	local s=$1 n=$2 m=$3 k wall user sys cnt tot=0 cpu=0
	echo "| shard | schedules | wall s | CPU s (user+sys) | schedules per CPU s |"
	echo "|---|---|---|---|---|"
	for k in $(seq 1 "$m"); do
		echo "check --sim --schedules $s: shard $k/$n ..." >&2
		/usr/bin/time -f "%e %U %S" -o "$d/time-$s-$k" nice -n 10 build/residctl check --sim \
			--schedules "$s" --shard "$k/$n" --report "$d/sim-$s-$k.json" >"$d/sim-$s-$k.txt" || [ $? = 1 ]
		read -r wall user sys <"$d/time-$s-$k"
		cnt=$(jq '[.rows[].counters.schedules // 0] | add' "$d/sim-$s-$k.json")
		echo "| $k/$n | $cnt | $wall | $(calc 2 "$user + $sys") | $(calc 0 "$cnt / ($user + $sys)") |"
		tot=$((tot + cnt))
		cpu=$(calc 2 "$cpu + $user + $sys")
	done
	RATE=$(calc 0 "$tot / $cpu")
	echo
	echo "$m shards: $tot schedules, $cpu CPU s, $RATE schedules per CPU second."
}

{
	echo "# Campaign shards: measured times"
	echo
	echo "Written by \`scripts/campaign-times.sh\` on $(date -u +%Y-%m-%d) (rev"
	echo "$(sed -n 's/.*RESID_REV "\(.*\)"/\1/p' build/rev.h)) on the 2-core development machine, shared with"
	echo "other work; each shard at \`nice -n 10\`, one after another. Load average"
	echo "before: $(load)."
	echo
	echo "## \`check --sim --schedules 8000\` in 4 shards, merged"
	echo
	echo "8000 schedules for each of the 12 simulated rows, 6 scenarios on equal"
	echo "and unequal chunks (half random walk, half PCT 3; T-5 runs once, in"
	echo "shard 1)."
	echo
	shards 8000 4 4
	build/residctl merge "$d"/sim-8000-*.json --json "$d/merged.json" >"$d/merged.txt" || [ $? = 1 ]
	echo "\`residctl merge\`: $(jq '[.rows[].counters.schedules // 0] | add' "$d/merged.json") schedules, verdict $(jq -r 'if .passed then "pass" else "FAIL" end' "$d/merged.json")."
	echo
	echo "## The 1,000,000-schedule campaign: shards 1 and 2 of 16"
	echo
	echo "\`check --sim --schedules 83334 --shard K/16\` (ci/github/residctl.yml's"
	echo "simulation jobs): 1,000,008 schedules in all, 62,500 or 62,501 a shard."
	echo
	shards 83334 16 2
	echo
	echo "Load average after: $(load)."
	echo
	echo "**Extrapolated, not measured:** the 16 shards at $RATE schedules per CPU"
	echo "second are $(calc 0 "1000002 / 16 / $RATE") CPU s each, $(calc 0 "1000002 / $RATE") CPU s in all (a core as fast"
	echo "as this one's, plus each job's build); in 64 shards $(calc 0 "1000002 / 64 / $RATE") s each."
} >"$out"
cat "$out"
