#!/usr/bin/env bash
# make test's shard stage (docs/campaigns.md): each campaign kind run whole
# and as 3 shards (--shard K/3), the shards merged, and the merges compared:
# the same rows, counters, interleavings and failure lists with their
# replay lines, byte for byte. Every campaign here has failures (a bug
# switched on, the self-test's deadlock, reads that all fail, a hunt cut
# short), so the comparison is not of empty lists. Then merge's refusals:
# a shard missing, given twice, cut short, of another campaign or split.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
R=build/residctl
d=build/shard-test
rm -rf "$d"
mkdir -p "$d"
failed=0
bad() { echo "FAIL: $*"; failed=1; }

# run NAME CMD...: CMD whole and as shards 1..3 of 3 (exit 0 or 1 each),
# then merges both and compares everything but the header line.
run() {
	local name=$1 rc k
	shift
	"$@" --report "$d/$name-all.json" >"$d/$name-all.out" 2>&1
	rc=$?
	[ $rc -le 1 ] || { bad "$name: '$*' exited $rc"; tail -3 "$d/$name-all.out"; return; }
	for k in 1 2 3; do
		"$@" --shard $k/3 --report "$d/$name-$k.json" >"$d/$name-$k.out" 2>&1
		rc=$?
		[ $rc -le 1 ] || { bad "$name: shard $k/3 exited $rc"; tail -3 "$d/$name-$k.out"; return; }
	done
	$R merge "$d/$name-all.json" --json "$d/$name-m1.json" >"$d/$name-m1.out"
	rc=$?
	[ $rc = 1 ] || bad "$name: merge of the whole run exited $rc, want 1 (failures)"
	$R merge "$d/$name-1.json" "$d/$name-2.json" "$d/$name-3.json" \
		--json "$d/$name-m3.json" --junit "$d/$name-m3.xml" >"$d/$name-m3.out"
	rc=$?
	[ $rc = 1 ] || bad "$name: merge of 3 shards exited $rc, want 1 (failures)"
	local units whole failing
	units=$(jq '[.rows[].ran] | add' "$d/$name-1.json")
	whole=$(jq '.campaign.size' "$d/$name-1.json")
	failing=$(jq '[.rows[].failing] | add' "$d/$name-m3.json")
	[ "$units" -lt "$whole" ] || bad "$name: shard 1/3 ran $units of $whole units: not split"
	[ "$failing" -gt 0 ] || bad "$name: no failure to compare"
	if ! diff <(tail -n +2 "$d/$name-m1.out") <(tail -n +2 "$d/$name-m3.out") >"$d/$name.diff"; then
		bad "$name: 3 merged shards differ from the whole run ($d/$name.diff):"
		head -20 "$d/$name.diff"
	elif ! cmp -s <(jq -S '{campaign, rows, passed}' "$d/$name-m1.json") \
		<(jq -S '{campaign, rows, passed}' "$d/$name-m3.json"); then
		bad "$name: the merged JSON differs from the whole run's"
	elif ! grep -q '<failure' "$d/$name-m3.xml"; then
		bad "$name: the JUnit file has no failure"
	else
		echo "ok: $name: $whole $(jq -r .campaign.unit "$d/$name-1.json"), $failing failing, 3 shards ($(for k in 1 2 3; do jq '[.rows[].ran] | add' "$d/$name-$k.json"; done | paste -sd+)) merged = whole run, $(grep -c '^  #' "$d/$name-m3.out") listed"
	fi
}

run explore-deadlock $R explore self-deadlock --strategy pct:3 --schedules 300 --seed 3
run explore-bug1 $R explore T-4 --bug 1 --schedules 60
run check-sim $R check --sim T-4 T-5 --bug 1 --schedules 60
# Every round fails the same way, whatever the timing: --huge-dir on a
# tmpfs mounted without huge= makes each round's region refuse to open
# (the pager's verdict at open). Without THP the pager takes 4 KiB pages
# there and the rounds pass, so the kernel must have it. (Failed reads no
# longer fail a round: SIGBUS on a chunk that injected errors failed is
# the contract's outcome; and a hang's message names thread ids.)
if [ -d /sys/kernel/mm/transparent_hugepage ] && [ -d /dev/shm ]; then
	run storm $R storm --rounds 3 --round 1 --seed 5 --huge-dir /dev/shm
else
	echo "n/a: storm: no THP in this kernel (or no /dev/shm) to fail its rounds the same way"
fi
# A 5-schedule cap: most hunts miss on their one seed, so the matrix
# fails in several cells, whatever the timing. Not shrunk: a shrink may
# stop at its time budget, so its line depends on the machine's load.
run matrix $R matrix --no-real --seeds 1 --schedules 5 --no-shrink

# A replay line from the merged shards reproduces its failure.
line=$(jq -r '[.rows[].findings[] | select(.fails) | .line][0]' "$d/explore-deadlock-m3.json")
eval "${line/#residctl/$R}" >"$d/replay.out" 2>&1
[ $? = 1 ] || bad "the merged shards' first replay line did not fail again: $line"

# The kernel matrix's split: its shards list every chosen cell once.
for cells in "" "--smoke"; do
	all=$(bash kernels/matrix.sh --list $cells | awk '{print $2}' | sort)
	parts=$(for k in 1 2 3; do bash kernels/matrix.sh --list $cells --shard $k/3; done | awk '{print $2}' | sort)
	{ [ -n "$all" ] && [ "$all" = "$parts" ]; } || bad "kernel matrix ${cells:-(all)}: 3 shards do not list the cells once each"
done
# Its reports: cells as kernels/matrix.sh records them, one failed.
kcells() {
	local k=$1 i=0 id
	for id in a b c d e; do
		i=$((i + 1))
		[ $(((i - 1) % 3)) = $((k - 1)) ] || continue
		jq -cn --argjson n $((i * 2)) --arg id "$id" --arg v "$([ $id = d ] && echo fail || echo pass)" \
			'{n: $n, id: $id, verdict: $v, reason: "", seconds: 1}'
	done
}
for k in 1 2 3; do
	kcells $k >"$d/cells-$k.jsonl"
	bash kernels/report.sh "$d/cells-$k.jsonl" "$d/kern-$k.json" $k 3 "test" "2,4,6,8,10" ||
		bad "kernels/report.sh failed"
done
$R merge "$d"/kern-{1,2,3}.json >"$d/kern.out"
rc=$?
if [ $rc != 1 ] || ! grep -q '^  #3 d: fail' "$d/kern.out" || ! grep -q 'pass=4 fail=1' "$d/kern.out"; then
	bad "kernel matrix reports: merge exited $rc (want 1) or lost a cell:"
	cat "$d/kern.out"
else
	echo "ok: kernel matrix: 5 cells in 3 shards merged, the failed one named"
fi

# merge's refusals: exit 2 and one line naming the problem.
refuse() {
	local what=$1 want=$2 rc
	shift 2
	$R merge "$@" >"$d/refuse.out" 2>"$d/refuse.err"
	rc=$?
	if [ $rc != 2 ] || [ "$(grep -c . "$d/refuse.err")" != 1 ] ||
		! grep -q "$want" "$d/refuse.err" || [ -s "$d/refuse.out" ]; then
		bad "merge of $what: exit $rc, want 2 and one line with '$want':"
		cat "$d/refuse.err"
	else
		echo "ok: merge refuses $what: $(cat "$d/refuse.err")"
	fi
}
e=$d/explore-deadlock
$R explore self-deadlock --strategy pct:3 --schedules 300 --seed 4 --shard 3/3 --report "$d/other-3.json" >/dev/null
$R explore self-deadlock --strategy pct:3 --schedules 300 --seed 3 --shard 2/2 --report "$d/split-2.json" >/dev/null
jq '.rows[0].ran -= 1' "$e-2.json" >"$d/short-2.json"
refuse "a missing shard" "shard 3/3 is missing" "$e-1.json" "$e-2.json"
refuse "a duplicated shard" "shard 2/3 is given twice" "$e-1.json" "$e-2.json" "$e-2.json" "$e-3.json"
refuse "shards of two campaigns" "of another campaign" "$e-1.json" "$e-2.json" "$d/other-3.json"
refuse "campaigns of two kinds" "of another campaign" "$e-1.json" "$e-2.json" "$d/check-sim-3.json"
refuse "two splits of one campaign" "merge the reports of one split" "$e-1.json" "$d/split-2.json"
refuse "a shard cut short" "cut short" "$e-1.json" "$d/short-2.json" "$e-3.json"
refuse "a file that is no report" "not a campaign report" "$e-1.json" "$d/explore-deadlock-m3.json"
refuse "no file" "no report given"

[ $failed = 0 ] || { echo "shard test: FAILED"; exit 1; }
echo "shard test: passed"
