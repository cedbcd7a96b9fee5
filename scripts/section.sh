#!/usr/bin/env bash
# Replaces a marked section of a results page: the lines from
# "<!-- NAME:" to "<!-- /NAME -->" in FILE by what stdin gives (the new
# section, both markers included). Fails, FILE untouched, when FILE has
# no such marker.
#   usage: scripts/section.sh NAME FILE <section.md
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: scripts/section.sh NAME FILE <section.md" >&2; exit 2; }
name=$1 file=$2
grep -q "^<!-- $name:" "$file" ||
	{ echo "section: $file has no $name marker" >&2; exit 1; }
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
cat >"$tmp.new"
awk -v f="$tmp.new" -v open="^<!-- $name:" -v shut="^<!-- /$name -->" '
	$0 ~ open { while ((getline l < f) > 0) print l; skip = 1; next }
	$0 ~ shut { skip = 0; next }
	!skip' "$file" >"$tmp"
rm -f "$tmp.new"
cp "$tmp" "$file"
