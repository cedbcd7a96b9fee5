#!/usr/bin/env bash
# The arms on a real layout (issue 14): a synthetic safetensors model whose
# tensors straddle pages as a real model's do (`residctl bench mkmodel`),
# checked byte for byte through the pager (`verify --table`), then scanned
# layer by layer by one and by two application threads. D announces each
# layer's own chunk, D-touched every chunk the layer's bytes touch; both
# against the lower bound, furthest-next-use (FNU) and the exact optimum.
# Root (memory cgroups), a few minutes. Bytes only are results: wall times
# depend on the machine's load.
#   results/bench-layout.csv  every run, both thread counts
#   results/bench-layout.md   the tables
# Extra arguments go to both runs (e.g. --dir /mnt/disk, --passes 8).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
make -s all
mkdir -p results
model=build/model-8-layers.safetensors
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$model"' EXIT

build/residctl bench mkmodel "$model" --layers 8 --hidden 768 --ffn 2048 \
	--vocab 8192 --seed 1 >"$tmp/mk"
build/residctl verify "$model" --table "$model" --passes 2 >"$tmp/verify"
for t in 1 2; do
	build/residctl bench arms --table "$model" --passes 4 --threads "$t" \
		--arms A-seq,C,D,E,D-touched --csv "$tmp/$t.csv" "$@" >"$tmp/$t.md"
done

{ cat "$tmp/1.csv"; tail -n +2 "$tmp/2.csv"; } >results/bench-layout.csv
{
	echo "# Arms on a real layout: a synthetic safetensors model"
	echo
	echo "\`scripts/bench-layout.sh\` on $(uname -r), $(nproc) CPUs, $(date -u +%Y-%m-%d)."
	echo "The model: \`residctl bench mkmodel $model --layers 8 --hidden 768"
	echo "--ffn 2048 --vocab 8192\` ($(cut -d' ' -f3 "$tmp/mk") bytes, F16, packed as the"
	echo "safetensors writer packs them, so tensors start and end inside pages)."
	echo "Layers as the layout reader groups them: the embedding, each"
	echo "\`model.layers.<n>.\`, the final norm, the head; a chunk starts at the page"
	echo "floor of each layer's first byte. \`verify --table\` through the pager:"
	echo "\`$(tail -1 "$tmp/verify")\`."
	echo
	echo "Bytes read do not depend on the machine's load; the wall times below"
	echo "were taken on a shared, loaded machine and are not results."
	echo
	cat "$tmp/1.md" "$tmp/2.md"
} >results/bench-layout.md
echo "bench-layout: results/bench-layout.csv, results/bench-layout.md"
