#!/usr/bin/env bash
# The seven historical bugs (SPEC §6): the production library carries no
# bug switch, and `residctl repro all` catches each bug with every detector
# SPEC §6 expects (scheduler with a replay line reproduced 10/10; TSan for
# 4, 5, 6; the real-kernel watchdog for 2, 3, 7). Needs build/tsan.
set -uo pipefail
cd "$(dirname "$0")/.."

# nm's whole output first: grep -q would end the pipe early (pipefail).
prod=$(nm build/libresid.a) && harness=$(nm build/libresid-harness.a) || exit 1
if grep -q ' resid_bugs$' <<<"$prod"; then
	echo "bugs: the production library build/libresid.a has bug switches" >&2
	exit 1
fi
if ! grep -q ' B resid_bugs$' <<<"$harness"; then
	echo "bugs: the harness library has no bug switches to test" >&2
	exit 1
fi
# Code probes (pager/code_probe.h) are compiled out the same way.
if grep -q ' resid_code_probes$' <<<"$prod"; then
	echo "bugs: the production library build/libresid.a has code probes" >&2
	exit 1
fi
if ! grep -q ' B resid_code_probes$' <<<"$harness"; then
	echo "bugs: the harness library has no code probes" >&2
	exit 1
fi
echo "bugs: build/libresid.a has no bug switches and no code probes; the harness build has both"
build/residctl repro all
