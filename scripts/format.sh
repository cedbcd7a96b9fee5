#!/usr/bin/env bash
# Formats every tracked C file in place by .clang-format (the kernel's
# style), with clang-format 14: another version lays some lines out
# differently, and ci/style.sh checks with 14. FILE... formats only those.
set -euo pipefail
cd "$(dirname "$0")/.." || exit 2
usage="usage: scripts/format.sh [FILE...]
Formats the tracked *.c and *.h files (or FILE...) in place with
clang-format 14 and .clang-format; ci/style.sh checks the result."
case "${1:-}" in
-h | --help) echo "$usage"; exit 0 ;;
-*) echo "format: unknown option '$1'; see --help" >&2; exit 2 ;;
esac
CF=${CLANG_FORMAT:-clang-format-14}
command -v "$CF" >/dev/null || { echo "format: no $CF: run scripts/deps.sh (Debian's clang-format-14)" >&2; exit 2; }
if [ $# -gt 0 ]; then
	for f in "$@"; do
		[ -f "$f" ] || { echo "format: no file '$f'; name files from the tree's root" >&2; exit 2; }
	done
	files=("$@")
else
	mapfile -t files < <(git ls-files '*.c' '*.h')
	[ ${#files[@]} -gt 0 ] || { echo "format: git lists no C file here; run it inside the clone" >&2; exit 2; }
fi
printf '%s\0' "${files[@]}" | xargs -0 -n 50 -P "$(nproc)" "$CF" -i --style=file
echo "format: ${#files[@]} files formatted"
