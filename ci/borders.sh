#!/usr/bin/env bash
# The floors of harness/ (harness/floors, docs/harness.md) held against
# every include: a harness room includes headers of its own room and of
# rooms on lower floors only, each by its room ("fault/fault.h"); no file
# includes a harness header by its bare name; storms/ and tool/ may include
# any room; pager/ and invariants/ include nothing of harness/. A quoted
# room path the compiler would find beside the file instead ("oracles/x.h"
# from harness/sim/, where sim/oracles/ is) fails too.
#   bash ci/borders.sh [DIR]     check the tree at DIR (default: this one)
#   bash ci/borders.sh --self-test
#                                plants includes that break the floors into
#                                scratch copies and expects each to fail
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

check() {
	python3 - "$1" <<'EOF'
import os, re, sys

top = sys.argv[1]
os.chdir(top)
floor = {}
with open('harness/floors') as f:
    for n, line in enumerate(f, 1):
        words = line.split('#')[0].split()
        if not words:
            continue
        if not words[0].isdigit() or len(words) < 2:
            print('borders: harness/floors:%d: want "FLOOR ROOM...", got %r'
                  % (n, line.strip()), file=sys.stderr)
            sys.exit(2)
        for room in words[1:]:
            floor[room] = int(words[0])

headers = {}
for root, dirs, files in os.walk('harness'):
    for f in files:
        if f.endswith(('.h', '.def')):
            headers.setdefault(f, []).append(
                os.path.relpath(os.path.join(root, f), 'harness'))

rooms = {r for r in os.listdir('harness') if os.path.isdir(os.path.join('harness', r))}
inc = re.compile(r'^\s*#\s*include\s*(["<])([^">]+)[">]', re.M)
bad = []

def walk(d):
    for root, dirs, files in os.walk(d):
        dirs.sort()
        for f in sorted(files):
            if f.endswith(('.c', '.h', '.def')):
                yield os.path.join(root, f)

for d in ('harness', 'storms', 'tool', 'pager', 'invariants'):
    if not os.path.isdir(d):
        continue
    for p in walk(d):
        parts = p.split('/')
        room = parts[1] if d == 'harness' and len(parts) > 2 else None
        if d == 'harness' and room not in floor:
            bad.append('%s: harness/%s is no room of harness/floors; add it '
                       'on its floor' % (p, room or ''))
            continue
        with open(p, errors='replace') as fh:
            text = fh.read()
        for m in inc.finditer(text):
            line = text.count('\n', 0, m.start()) + 1
            path = m.group(2)
            where = '%s:%d: #include %s%s%s' % (
                p, line, m.group(1), path, '"' if m.group(1) == '"' else '>')
            target = os.path.join('harness', path)
            harness_hdr = '/' in path and os.path.isfile(target)
            if '/' not in path and path in headers:
                if d in ('pager', 'invariants'):
                    bad.append('%s: the pager includes nothing of harness/' % where)
                else:
                    bad.append('%s: a bare harness name; write "%s"'
                               % (where, headers[path][0]))
                continue
            if m.group(1) == '"' and path.split('/')[0] in rooms:
                near = os.path.normpath(os.path.join(os.path.dirname(p), path))
                if near != target and os.path.isfile(near):
                    bad.append('%s: the quote rule takes %s, beside it, not '
                               'harness/%s; name the room (rename one if '
                               'both exist)' % (where, near, path))
                    continue
            if not harness_hdr:
                continue
            if d in ('pager', 'invariants'):
                bad.append('%s: the pager includes nothing of harness/' % where)
                continue
            if d != 'harness':
                continue
            other = path.split('/')[0]
            if other == room:
                continue
            if other not in floor:
                bad.append('%s: harness/%s is no room of harness/floors'
                           % (where, other))
            elif floor[other] >= floor[room]:
                bad.append('%s: %s (floor %d) reaches %s (floor %d); move what '
                           'it needs down, or register it from above'
                           % (where, room, floor[room], other, floor[other]))
for b in bad:
    print('borders: ' + b, file=sys.stderr)
if bad:
    sys.exit(1)
print('borders: %d rooms on %d floors, every include downward'
      % (len(floor), len(set(floor.values()))))
EOF
}

self_test() {
	local rc=0 out
	tmp=$(mktemp -d) || exit 2
	trap 'rm -rf "$tmp"' EXIT
	# A planted line into a scratch copy, and the failure it must cause.
	plant() {
		local what=$1 file=$2 line=$3 expect=$4
		rm -rf "$tmp/t" && mkdir "$tmp/t" &&
			cp -r harness storms tool pager invariants "$tmp/t/" || exit 2
		printf '%s\n' "$line" >>"$tmp/t/$file"
		if out=$(check "$tmp/t" 2>&1); then
			echo "borders self-test: $what passed; it must fail" >&2
			rc=1
		elif ! grep -q "$expect" <<<"$out"; then
			echo "borders self-test: $what failed, but not with '$expect': $out" >&2
			rc=1
		else
			echo "borders self-test: $what fails: $(head -1 <<<"$out")"
		fi
	}
	plant "the pager including a harness room" pager/fetch.c \
		'#include "fault/fault.h"' "pager includes nothing"
	plant "a low room including a higher one" harness/base/clock.c \
		'#include "fault/fault.h"' "base (floor 1) reaches fault"
	plant "a room including one on its own floor" harness/fault/bugs.c \
		'#include "proc/child.h"' "fault (floor 2) reaches proc"
	plant "a bare harness name" storms/storm.c \
		'#include "fault.h"' "bare harness name"
	plant "a room path found beside the file" harness/sim/sim.c \
		'#include "oracles/sim_oracle.h"' "beside it"
	mkdir -p "$tmp/c" && cp -r harness storms tool pager invariants "$tmp/c/" || exit 2
	check "$tmp/c" >/dev/null || { echo "borders self-test: the clean copy fails" >&2; rc=1; }
	return $rc
}

case "${1:-}" in
--self-test) self_test ;;
--help | -h) sed -n '2,12s/^# \{0,1\}//p' "$0" ;;
*) check "${1:-.}" ;;
esac
