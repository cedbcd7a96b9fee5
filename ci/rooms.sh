#!/usr/bin/env bash
# The dependency between the top-level rooms goes one way (issue 23):
# harness/ linked alone (build/harness.o) names no symbol that storms/
# defines, and no file of harness/ includes a storm's header; storms/ and
# harness/ meet only in tool/, the link step. A registry line or a call
# that makes harness/ need storms/ again fails here.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
fail() { echo "rooms: $*" >&2; exit 1; }

# One make: harness/ linked alone, then the storms' objects named.
# shellcheck disable=SC2016 # make expands them
storm_defs=$(make -s -j2 -f - rooms <<<'include Makefile
rooms: $(B)/harness.o $(STORM_SRC:%.c=$(B)/h/%.o) ; @echo $(STORM_SRC:%.c=$(B)/h/%.o)') ||
	fail "make build/harness.o"
# shellcheck disable=SC2086 # a list of objects
defined=$(nm -g --defined-only $storm_defs | awk 'NF == 3 { print $3 }' | sort -u) ||
	fail "nm storms"
undefined=$(nm -u build/harness.o | awk '{ print $NF }' | sort -u) || fail "nm -u build/harness.o"
both=$(comm -12 <(echo "$defined") <(echo "$undefined"))
[ -z "$both" ] || fail "harness/ needs storms/ to link: ${both//$'\n'/ }"
inc=$(grep -rlE '#include "(storm|storm_scenario)\.h"' harness/ || true)
[ -z "$inc" ] || fail "harness/ includes a storm's header: ${inc//$'\n'/ }"
echo "rooms: harness/ alone leaves $(wc -l <<<"$undefined") symbols undefined, none of storms/'s $(wc -l <<<"$defined")"
