#!/usr/bin/env bash
# The bug switches (design.md §6's seven bugs, three that took the harness
# down, a refault answered with a wake): the production library carries no
# bug switch, and `residctl repro all` catches each bug with every detector
# expected of it (scheduler with a replay line reproduced 10/10; TSan for 4,
# 5, 6; the real-kernel storms for 2, 3, 7, 10, 11). Needs build/tsan.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

# nm's whole output first: grep -q would end the pipe early (pipefail).
prod=$(nm build/libresid.a) && harness=$(nm build/libresid-harness.a) || exit 1
# Harness-only symbols (bug switches, code probes): none in production.
only_in_harness() { # symbol, what it is
	if grep -q " $1\$" <<<"$prod"; then
		echo "bugs: the production library build/libresid.a has $2" >&2
		exit 1
	fi
	if ! grep -q " B $1\$" <<<"$harness"; then
		echo "bugs: the harness library has no $2 to test" >&2
		exit 1
	fi
}
only_in_harness resid_bugs "bug switches"
only_in_harness resid_code_probes "code probes"
echo "bugs: build/libresid.a has no bug switches and no code probes; the harness build has both"
build/residctl repro all
