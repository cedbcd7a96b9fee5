#!/usr/bin/env bash
# build/libresid.a exports only what pager/include/resid.h declares
# (scripts/api-names.sh reads the header): no harness entry point, no
# internal name of the pager. Fails naming each global symbol the header
# does not declare.
# Usage: ci/exports.sh [--self-test]
#   --self-test  also plants a global function into a scratch copy of the
#                archive and fails unless the check catches it
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
fail() { echo "exports: $*" >&2; exit 1; }
self_test=0
case ${1-} in
-h | --help) sed -n '2,8s/^# \{0,1\}//p' "$0"; exit 0 ;;
--self-test) self_test=1 ;;
'') ;;
*) echo "exports: unknown argument '$1'; use --self-test or nothing (--help)" >&2; exit 2 ;;
esac

declared=$(bash scripts/api-names.sh) || fail "could not read the names pager/include/resid.h declares"
# check ARCHIVE: prints each defined global of ARCHIVE that resid.h does
# not declare; fails when there is one.
check() {
	local defined extra
	# nm's whole output first: a pipe would hide its failure.
	defined=$(nm -g --defined-only "$1") || { echo "nm $1 failed"; return 1; }
	extra=$(awk 'NR == FNR { api[$1] = 1; next } NF == 3 && !($3 in api) { print $3 }' \
		<(echo "$declared") <(echo "$defined"))
	[ -z "$extra" ] || { echo "$1 exports what resid.h does not declare: ${extra//$'\n'/ }"; return 1; }
}

make -s build/libresid.a || fail "make build/libresid.a"
why=$(check build/libresid.a) || fail "$why"
echo "exports: build/libresid.a exports $(wc -l <<<"$declared") names, each declared in resid.h"
[ $self_test -eq 1 ] || exit 0

tmp=$(mktemp -d /tmp/resid-exports.XXXXXX) || fail "mktemp"
trap 'rm -rf "$tmp"' EXIT
echo 'int resid_planted(void) { return 0; }' >"$tmp/planted.c"
if ! { cp build/libresid.a "$tmp/libresid.a" &&
	cc -c -o "$tmp/planted.o" "$tmp/planted.c" &&
	ar rcs "$tmp/libresid.a" "$tmp/planted.o"; }; then
	fail "self-test: the scratch archive"
fi
if why=$(check "$tmp/libresid.a"); then
	fail "self-test: a planted global function passed the check"
fi
grep -q 'resid_planted$' <<<"$why" || fail "self-test: the check did not name the planted function: $why"
echo "exports: self-test: a scratch archive with a planted function fails: $why"
