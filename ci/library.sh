#!/usr/bin/env bash
# libresid as a user gets it: build/libresid.a calls nothing that prints
# (ci/exports.sh checks what it exports); `make install` into a
# temporary prefix gives a header, the library and resid.pc, and the
# example docs/example/stream.c builds from them alone and reads a file.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
fail() { echo "library: $*" >&2; exit 1; }

# nm's whole output first: grep would end the pipe early (pipefail).
undefined=$(nm -u build/libresid.a) || fail "nm -u failed"
prints=$(awk '$2 ~ /^(f?printf|vf?printf|dprintf|puts|fputs|fputc|putchar|perror|fwrite|stderr|stdout)$/ { print $2 }' <<<"$undefined" | sort -u)
[ -z "$prints" ] || fail "build/libresid.a prints: it calls ${prints//$'\n'/ }"
echo "library: build/libresid.a never prints"

tmp=$(mktemp -d /tmp/resid-library.XXXXXX) || fail "mktemp"
trap 'rm -rf "$tmp"' EXIT
make -s install PREFIX="$tmp/prefix" >/dev/null || fail "make install"
export PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig"
# Only the installed files: the example is built outside the tree.
cp docs/example/stream.c "$tmp/" || fail "copy the example"
flags=$(pkg-config --cflags --libs resid) || fail "pkg-config resid"
read -r -a flags <<<"$flags"
cc -std=gnu11 -Wall -Wextra -Werror -O2 "$tmp/stream.c" "${flags[@]}" \
	-o "$tmp/stream" || fail "the example does not build against the installed library"
head -c $((3 * 1024 * 1024 + 12345)) /dev/urandom >"$tmp/model.bin" || fail "the test file"
timeout 120 "$tmp/stream" "$tmp/model.bin" || fail "the example failed"
# A file shrunk under the region: its SIGBUS handler reports the failure.
timeout 120 "$tmp/stream" "$tmp/model.bin" --shrink 2>"$tmp/err"; rc=$?
cat "$tmp/err"
{ [ $rc -eq 1 ] && grep -q "SIGBUS at offset .*: No data available" "$tmp/err"; } ||
	fail "the example did not report the failed chunk (exit $rc)"
