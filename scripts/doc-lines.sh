#!/usr/bin/env bash
# Writes the replay lines that docs/ prints, with what replaying them
# prints, from the build at hand. A block in a page is
#   <!-- replay: ARGS -->
#   ```
#   $ residctl replay 'LINE'
#   (what `residctl replay` prints for it)
#   ```
# where ARGS are residctl arguments whose output holds a replay line (the
# first one is taken, e.g. `repro 7 --no-real`). A line names the build of
# the sources that printed it, so rerun this after changing the tool's
# sources; ci/doc-lines.sh (make test) replays every block and fails when
# one no longer prints what the page says.
# Usage: scripts/doc-lines.sh [PAGE.md...]   (default: every page in docs/)
set -euo pipefail
cd "$(dirname "$0")/.."
make -s all
R=build/residctl
mapfile -t pages < <(if [ $# -gt 0 ]; then printf '%s\n' "$@"; else
	grep -rl '^<!-- replay: ' docs --include='*.md'; fi)
tmp=""
trap 'rm -f "$tmp"' EXIT
for page in "${pages[@]}"; do
	tmp=$(mktemp)
	skip=0
	while IFS= read -r l; do
		if [ "$skip" = 1 ]; then
			# Drop the old block: its fences and what is between.
			[ "$l" = '```' ] && fences=$((fences + 1))
			[ "$fences" -ge 2 ] && skip=0
			continue
		fi
		printf '%s\n' "$l"
		[[ "$l" =~ ^'<!-- replay: '(.*)' -->'$ ]] || continue
		args=${BASH_REMATCH[1]}
		echo "doc-lines: $page: residctl $args" >&2
		# ARGS are words by design; a campaign that found its failure
		# exits 1, which is what it is here for.
		# shellcheck disable=SC2086
		line=$({ $R $args 2>/dev/null || true; } |
			sed -n "s/.*residctl replay '\(.*\)'.*/\1/p" | head -1)
		if [ -z "$line" ]; then
			echo "doc-lines: $page: residctl $args printed no replay line" >&2
			exit 1
		fi
		printf '```\n$ residctl replay %s\n' "'$line'"
		$R replay "$line" || true
		printf '```\n'
		skip=1
		fences=0
	done <"$page" >"$tmp"
	mv "$tmp" "$page"
done
