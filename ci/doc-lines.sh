#!/usr/bin/env bash
# Every replay line docs/ prints (the blocks scripts/doc-lines.sh writes)
# is replayed with this build and must print exactly what the page says it
# prints: the verdict, the steps and the event log. A line from other
# sources is refused by the tool; then rerun scripts/doc-lines.sh.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
R=build/residctl
n=0
bad=0
# A line names the build (a hash of the tool's sources) that printed it.
# When the sources changed since scripts/doc-lines.sh ran, the pages are
# out of date, not wrong: say so instead of failing every code change.
here=$(sed -n 's/^#define RESID_SIM_BUILD "\(.*\)"$/\1/p' build/rev.h)
stale=$(grep -rhoE "^\\\$ residctl replay 'rc3/[0-9a-f]+" docs --include='*.md' |
	sed 's/.*rc3\///' | grep -vcx "$here")
if [ -z "$here" ] || [ "$stale" -ne 0 ]; then
	echo "doc-lines: SKIP: $stale replay lines in docs/ are from other sources than this build (${here:-unknown}); run scripts/doc-lines.sh to refresh them"
	exit 0
fi
while IFS= read -r page; do
	mapfile -t lines <"$page"
	for i in "${!lines[@]}"; do
		l=${lines[$i]}
		[[ "$l" =~ ^'$ residctl replay '\'(.*)\'$ ]] || continue
		line=${BASH_REMATCH[1]}
		want=""
		for ((j = i + 1; j < ${#lines[@]}; j++)); do
			[ "${lines[$j]}" = '```' ] && break
			want+="${lines[$j]}"$'\n'
		done
		got=$($R replay "$line" 2>&1)
		n=$((n + 1))
		if [ "$got"$'\n' != "$want" ]; then
			echo "doc-lines: $page:$((i + 1)): the line no longer prints what the page says" >&2
			echo "  page says: ${want%$'\n'}" >&2
			echo "  replay:    $got" >&2
			bad=$((bad + 1))
		fi
	done
done < <(grep -rl '^\$ residctl replay ' docs --include='*.md')
blocks=$(grep -rh '^<!-- replay: ' docs --include='*.md' | wc -l)
if [ "$n" -eq 0 ] || [ "$n" -ne "$blocks" ]; then
	echo "doc-lines: $blocks replay blocks in docs/ but $n replay lines: run scripts/doc-lines.sh" >&2
	exit 1
fi
if [ "$bad" -ne 0 ]; then
	echo "doc-lines: $bad of $n lines in docs/ do not replay as printed; when the tool's sources changed, rerun scripts/doc-lines.sh" >&2
	exit 1
fi
echo "doc-lines: $n replay lines in docs/ replay as their pages say"
