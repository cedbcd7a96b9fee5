#!/usr/bin/env bash
# docs/extending.md followed for real: a scratch copy of the tree gets the
# files its recipes show (extracted from the page, so the page cannot rot),
# builds, and the new command answers --help and bad input as every
# command does. Reuses the built objects: only what the recipe changes is
# compiled.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "extend: FAIL: $*" >&2; exit 1; }

# The fenced block after the marker line <!-- extend: PATH -->.
recipe() {
	awk -v want="<!-- extend: $1 -->" '
		$0 == want { found = 1; next }
		found && /^```/ { if (inside) exit; inside = 1; next }
		inside { print }' docs/extending.md
}

[ -x build/residctl ] || fail "build the tree first (make)"
mkdir -p "$tmp/tree/build"
cp -rp Makefile pager invariants harness storms "$tmp/tree/" || fail "copy"
cp -rp build/h build/rev.h "$tmp/tree/build/" || fail "copy of the objects"
recipe harness/cmd_hello.c >"$tmp/tree/harness/cmd_hello.c"
recipe harness/commands.def >>"$tmp/tree/harness/commands.def"
[ -s "$tmp/tree/harness/cmd_hello.c" ] || fail "no harness/cmd_hello.c block in docs/extending.md"
make -C "$tmp/tree" -j2 build/residctl >"$tmp/make.log" 2>&1 ||
	fail "the recipe does not build: $(grep -m1 error "$tmp/make.log")"
R=$tmp/tree/build/residctl
$R --help | grep -q '^  hello ' || fail "residctl --help does not list hello"
$R hello --help >"$tmp/help" || fail "hello --help exits $?"
if ! grep -q '^usage: residctl hello' "$tmp/help" ||
   ! grep -q -- '--times N' "$tmp/help"; then
	fail "hello --help: $(head -1 "$tmp/help")"
fi
[ "$($R hello --times 2 --name you)" = "hello, you
hello, you" ] || fail "hello --times 2 --name you"
$R hello --times 0 >/dev/null 2>"$tmp/err"
rc=$?
if [ "$rc" -ne 2 ] || [ "$(wc -l <"$tmp/err")" -ne 1 ] ||
   ! grep -q "'0'" "$tmp/err"; then
	fail "hello --times 0: exit $rc, $(cat "$tmp/err")"
fi
# Every command of the registry, and every benchmark of bench's, prints its
# usage line from --help and exits 0.
cmds=$($R --help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 }')
benches=$($R bench --help | awk '/^benchmarks:/ { on = 1; next } on && /^  [a-z]/ { print "bench " $1 }')
want=$(($(grep -c '^COMMAND(' harness/commands.def) + 1)) # and hello
[ "$(echo "$cmds" | wc -l)" -eq "$want" ] ||
	fail "residctl --help lists $(echo "$cmds" | wc -l) commands, want $want"
while read -r c; do
	# shellcheck disable=SC2086 # "bench arms" is two words
	$R $c --help >"$tmp/help" 2>&1 || fail "$c --help exits $?"
	grep -q "^usage: residctl $c" "$tmp/help" || fail "$c --help: $(head -1 "$tmp/help")"
done < <(printf '%s\n%s\n' "$cmds" "$benches")
echo "extend: a command from docs/extending.md builds and answers --help and bad input; every command answers --help"
