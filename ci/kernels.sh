#!/usr/bin/env bash
# make test's kernel stage: the smoke cells of the kernel matrix
# (scripts/kernel-matrix.sh --smoke: probe, the cgroup tests on the real
# hierarchy, T-4 and T-5) on 6.1 v2 from a delegated scope, 6.1-rt v2 from
# the root with swap, 6.12 v2 from a delegated scope, 6.1 v1 from a scope
# with swap, and 6.12 v1, which the kernel cannot have (probe must say no).
# A failure in a booted kernel fails the suite; an infrastructure failure
# (packages, download, boot, emulator) prints SKIP with its reason.
set -uo pipefail
cd "$(dirname "$0")/.."
out=build/kernels-smoke
bash scripts/kernel-matrix.sh --smoke --jobs 2 --out "$out"
case $? in
0) exit 0 ;;
3)
	echo "SKIP: kernel matrix smoke cells: infrastructure failure:"
	jq -r 'select(.verdict == "infrastructure") | "  \(.id): \(.reason)"' "$out/cells.jsonl" 2>/dev/null
	exit 0 ;;
*) exit 1 ;;
esac
