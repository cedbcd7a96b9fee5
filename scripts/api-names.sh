#!/usr/bin/env bash
# Prints the functions pager/include/resid.h declares, one a line, sorted:
# the only names build/libresid.a may export (the Makefile keeps these
# global, ci/exports.sh checks the archive against them). The header is
# preprocessed (no comments, no macros) and only its own lines are read,
# not stddef.h's or stdint.h's; a name followed by "(" is a function.
# Usage: scripts/api-names.sh
set -euo pipefail
cd "$(dirname "$0")/.."
case ${1-} in
-h | --help) sed -n '2,7s/^# \{0,1\}//p' "$0"; exit 0 ;;
'') ;;
*) echo "api-names: unknown argument '$1'; it takes none (--help)" >&2; exit 2 ;;
esac

header=pager/include/resid.h
# The line markers of cc -E name the file each following line is from.
text=$(${CC:-cc} -std=gnu11 -E "$header" | awk -v own="\"$header\"" '
	/^# [0-9]+ "/ { mine = $3 == own; next }
	mine') || { echo "api-names: cc -E $header failed" >&2; exit 1; }
names=$(tr '\n' ' ' <<<"$text" | grep -oE '[A-Za-z_][A-Za-z0-9_]* *\(' | tr -d ' (' | sort -u) ||
	{ echo "api-names: $header declares no function" >&2; exit 1; }
echo "$names"
