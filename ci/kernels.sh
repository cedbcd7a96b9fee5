#!/usr/bin/env bash
# make test's kernel stage: the smoke cells of the kernel matrix
# (kernels/matrix.sh --smoke: probe, the cgroup tests on the real
# hierarchy, T-4 and T-5) on 6.1-rt v2 from the root with swap, 6.12 v2
# from a delegated scope, 6.1 v1 from a scope with swap, and 6.12 v1, which
# the kernel cannot have (probe must say no);
# then a kernel brought as a developer would (--kernel): 6.1's vmlinuz as a
# bare path, no config, no modules: v2 from the root boots, a v1 and a swap
# cell are n/a, not run. No download beyond the first run's.
# A failure in a booted kernel fails the suite; an infrastructure failure
# (packages, download, boot, emulator) prints SKIP with its reason.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
. kernels/fetch.sh
rc=0
# smoke_run OUT ARGS..: the matrix's status, folded into rc
smoke_run() {
	local out=$1 st
	shift
	bash kernels/matrix.sh --smoke --jobs 2 --out "$out" "$@"
	st=$?
	case $st in
	0) ;;
	3)
		echo "SKIP: kernel matrix smoke cells: infrastructure failure:"
		jq -r 'select(.verdict == "infrastructure") | "  \(.id): \(.reason)"' "$out/cells.jsonl" 2>/dev/null ;;
	*) rc=1 ;;
	esac
	return $st
}
smoke_run build/kernels-smoke
if kernel_fetch 6.1 2>/dev/null; then
	smoke_run build/kernels-smoke-own --kernel "$KDIR/vmlinuz" \
		--cells own-v2-root-swapoff,own-v1-root-swapoff,own-v2-root-swapon
	# the two cells that cannot be judged without a config or brd say why
	if [ $? != 3 ] && [ "$(jq -r 'select(.verdict == "n/a" and (.reason | startswith("not run: "))) | .id' \
		build/kernels-smoke-own/cells.jsonl 2>/dev/null | wc -l)" != 2 ]; then
		echo "kernels: own-v1-root-swapoff and own-v2-root-swapon should be n/a, not run"
		rc=1
	fi
else
	echo "SKIP: kernel matrix smoke cell of a bare vmlinuz: 6.1 is not in the cache (see above)"
fi
exit $rc
