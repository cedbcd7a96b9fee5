#!/usr/bin/env bash
# The repository stands alone: nothing in it cites what a clone does not
# hold. The design it follows is docs/design.md ("design.md §N"), so no file
# may cite the product spec that lived outside the tree, a path into a
# directory beside the clone, or a tracker issue by number (say why or what
# instead). Greps every tracked file (untracked ones too when there is no
# git); exit 1 with the offending lines, 0 when there are none.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

# The patterns are built from pieces so that this file does not match itself.
spec='SP''EC §'
beside='shar''ed/'
ticket='\bissue''s? ?#?[0-9]'
pattern="$spec|$beside|$ticket"

if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	list() { git ls-files -z; }
else
	list() { find . \( -name .git -o -name build \) -prune -o -type f -print0; }
fi
# -I skips binary files (the plots); -s files listed but deleted meanwhile.
found=$(list | xargs -0 grep -nIisE -- "$pattern")
if [ -n "$found" ]; then
	printf '%s\n' "$found"
	n=$(printf '%s\n' "$found" | wc -l)
	echo "standalone: $n lines cite what a clone does not hold: cite docs/design.md (design.md §N) instead of the spec, and say why or what instead of an issue number" >&2
	exit 1
fi
echo "standalone: no file cites the spec outside the tree, a directory beside it or a tracker issue"
