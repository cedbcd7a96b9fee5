#!/usr/bin/env bash
# docs/extending.md, followed to the letter: in a scratch copy of the tree
# (and of build/, so that only what the additions touch is rebuilt), every
# block the page marks `<!-- extend: new FILE -->`, `FILE end` or `FILE
# before LINE` is written where it says; then the tool and the unit tests
# build, the new command answers --help and bad input as every command
# does, the registries' unit tests pass, the new scenario passes on the
# real and the simulated kernel with the new fault point firing, and the
# new oracle has its column in the campaign report. A page that no longer
# builds or runs fails here. Every registered command answers --help.
set -euo pipefail
cd "$(dirname "$0")/.."
page=docs/extending.md
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -a Makefile harness pager invariants storms "$tmp"/
[ -d build ] && cp -a build "$tmp"/

# Each marked block: the marker's line, then the fenced block after it.
n=0
while IFS= read -r marker; do
	IFS= read -r fence
	block=$(mktemp -p "$tmp")
	while IFS= read -r l && [ "$l" != '```' ]; do
		printf '%s\n' "$l"
	done >"$block"
	[[ "$fence" == '```'* ]] || { echo "extend: $page: no block after: $marker" >&2; exit 1; }
	spec=${marker#<!-- extend: }
	spec=${spec% -->}
	case "$spec" in
	new\ *) how=new file=${spec#new } ;;
	*) file=${spec%% *} how=${spec#"$file" } ;;
	esac
	target=$tmp/$file
	case "$how" in
	new) cp "$block" "$target" ;;
	end) cat "$block" >>"$target" ;;
	before\ *)
		line=${how#before }
		grep -qxF -- "$line" "$target" ||
			{ echo "extend: $page: no line '$line' in $file" >&2; exit 1; }
		awk -v line="$line" -v add="$block" '
			$0 == line { while ((getline l < add) > 0) print l }
			{ print }' "$target" >"$target.new"
		mv "$target.new" "$target" ;;
	*) echo "extend: $page: unknown marker: $marker" >&2; exit 1 ;;
	esac
	n=$((n + 1))
done < <(awk '/^<!-- extend: .* -->$/ { print; getline; print; while ((getline l) > 0) { print l; if (l == "```") break } }' "$page")
if [ "$n" -ne 8 ]; then
	echo "extend: $page: $n marked blocks, expected 8 (a command, an oracle, a scenario, a fault point)" >&2
	exit 1
fi

cd "$tmp"
make -s -j2 build/residctl build/unit-tests >build.log 2>&1 ||
	{ cat build.log >&2; echo "extend: the tree with the page's additions does not build" >&2; exit 1; }
R=build/residctl
fail() { echo "extend: FAIL: $*" >&2; exit 1; }
$R --help | grep -q '^  hello ' || fail "residctl --help does not list hello"
$R hello --help >help.txt || fail "hello --help exits $?"
if ! grep -q '^usage: residctl hello' help.txt ||
   ! grep -q -- '--times N' help.txt; then
	fail "hello --help: $(head -1 help.txt)"
fi
[ "$($R hello --times 2 --name you)" = "hello, you
hello, you" ] || fail "hello --times 2 --name you"
rc=0
$R hello --times 0 >/dev/null 2>err.txt || rc=$?
if [ "$rc" -ne 2 ] || [ "$(wc -l <err.txt)" -ne 1 ] ||
   ! grep -q "'0'" err.txt; then
	fail "hello --times 0: exit $rc, $(cat err.txt)"
fi
# Every command of the registry, and every benchmark of bench's, prints its
# usage line from --help and exits 0.
cmds=$($R --help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 }')
benches=$($R bench --help | awk '/^benchmarks:/ { on = 1; next } on && /^  [a-z]/ { print "bench " $1 }')
want=$(grep -c '^COMMAND(' harness/commands.def) # hello's line too
[ "$(echo "$cmds" | wc -l)" -eq "$want" ] ||
	fail "residctl --help lists $(echo "$cmds" | wc -l) commands, want $want"
while read -r c; do
	# shellcheck disable=SC2086 # "bench arms" is two words
	$R $c --help >help.txt 2>&1 || fail "$c --help exits $?"
	grep -q "^usage: residctl $c" help.txt || fail "$c --help: $(head -1 help.txt)"
done < <(printf '%s\n%s\n' "$cmds" "$benches")
if ! { build/unit-tests oracles && build/unit-tests scenarios; } >ut.log 2>&1; then
	cat ut.log >&2
	echo "extend: the registries' unit tests fail with the additions" >&2
	exit 1
fi
$R check example --fault worker/yield=1 --json real.json >real.txt 2>&1 ||
	{ cat real.txt >&2; echo "extend: residctl check example failed" >&2; exit 1; }
jq -e '.scenarios[0] | .verdict == "pass" and .counters["fired:worker/yield"] > 0' \
	real.json >/dev/null ||
	{ cat real.txt >&2; echo "extend: check example: not a pass with worker/yield fired" >&2; exit 1; }
$R explore example --schedules 20 --fault worker/yield=0.5 --report sim.json >sim.txt 2>&1 ||
	{ cat sim.txt >&2; echo "extend: residctl explore example failed" >&2; exit 1; }
jq -e '.rows[0].counters | .schedules == 20 and .failures == 0 and
	.sleeper == 0 and .["resid/worker/yield"] > 0' sim.json >/dev/null ||
	{ jq .rows[0].counters sim.json >&2; echo "extend: explore example: no sleeper column, or worker/yield never fired" >&2; exit 1; }
echo "extend: docs/extending.md's command, oracle, scenario and fault point build and run; every command answers --help"
