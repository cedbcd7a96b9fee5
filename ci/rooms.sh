#!/usr/bin/env bash
# The dependency between the top-level rooms goes one way:
# harness/ linked alone (build/harness.o) names no symbol that storms/
# defines, and no file of harness/ includes a storm's header; storms/ and
# harness/ meet only in tool/, the link step. And harness/ holds rooms
# only, no file at its top level (docs/harness.md). A registry line or a call
# that makes harness/ need storms/ again fails here.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
fail() { echo "rooms: $*" >&2; exit 1; }

# One make: harness/ linked alone, then the storms' objects named.
# shellcheck disable=SC2016 # make expands them
out=$(make -s -j2 -f - rooms <<<'include Makefile
rooms: $(B)/harness.o $(STORM_SRC:%.c=$(B)/h/%.o) ; @echo "storms: $(STORM_SRC:%.c=$(B)/h/%.o)"') ||
	fail "make build/harness.o"
storm_defs=$(sed -n 's/^storms: //p' <<<"$out")
# shellcheck disable=SC2086 # a list of objects
defined=$(nm -g --defined-only $storm_defs | awk 'NF == 3 { print $3 }' | sort -u) ||
	fail "nm storms"
undefined=$(nm -u build/harness.o | awk '{ print $NF }' | sort -u) || fail "nm -u build/harness.o"
both=$(comm -12 <(echo "$defined") <(echo "$undefined"))
[ -z "$both" ] || fail "harness/ needs storms/ to link: ${both//$'\n'/ }"
top=$(find harness -maxdepth 1 -type f -name '*.[ch]' | sort)
[ -z "$top" ] || fail "harness/ holds files outside its rooms: ${top//$'\n'/ }; git mv each into its room (docs/harness.md)"
inc=$(grep -rlE '#include "(storm|storm_scenario)\.h"' harness/ || true)
[ -z "$inc" ] || fail "harness/ includes a storm's header: ${inc//$'\n'/ }"
echo "rooms: harness/ alone leaves $(wc -l <<<"$undefined") symbols undefined, none of storms/'s $(wc -l <<<"$defined")"
