#!/usr/bin/env bash
# The arms on a real layout: two synthetic safetensors models
# whose tensors straddle pages as a real model's do (`residctl bench
# mkmodel`): 8 layers (10 chunks, small enough for the exact optimum) and 24
# narrower layers (26 chunks: only the bound and FNU). Each is checked byte
# for byte through the pager (`verify --table`), then scanned layer by layer
# by one and by two application threads. D announces each
# layer's own chunk, D-touched every chunk the layer's bytes touch; both
# against the lower bound, furthest-next-use (FNU) and the exact optimum.
# Root (memory cgroups), about 12 minutes here. Bytes only are results: wall times
# depend on the machine's load.
#   results/bench-layout.csv  every run, both models and thread counts
#   results/bench-layout.md   the tables
# Extra arguments go to both runs (e.g. --dir /mnt/disk, --passes 8).
# shellcheck source=scripts/lib/common.sh
. "$(dirname "$0")/lib/common.sh"
prologue
small=build/model-8-layers.safetensors
large=build/model-24-layers.safetensors
scratch "$small" "$large"

shape_small="--layers 8 --hidden 768 --ffn 2048 --vocab 8192"
shape_large="--layers 24 --hidden 512 --ffn 1408 --vocab 8192"
# shellcheck disable=SC2086 # the shapes are lists of options
build/residctl bench mkmodel "$small" $shape_small --seed 1 >"$tmp/mk-small"
# shellcheck disable=SC2086
build/residctl bench mkmodel "$large" $shape_large --seed 2 >"$tmp/mk-large"
build/residctl verify "$small" --table "$small" --passes 2 >"$tmp/verify-small"
build/residctl verify "$large" --table "$large" --passes 2 >"$tmp/verify-large"
for t in 1 2; do
	build/residctl bench arms --table "$small" --passes 4 --threads "$t" \
		--arms A-seq,C,D,E,D-touched --csv "$tmp/small-$t.csv" "$@" >"$tmp/small-$t.md"
	build/residctl bench arms --table "$large" --passes 4 --threads "$t" \
		--arms C,D,E,D-touched --csv "$tmp/large-$t.csv" "$@" >"$tmp/large-$t.md"
done

{
	cat "$tmp/small-1.csv"
	for f in small-2 large-1 large-2; do tail -n +2 "$tmp/$f.csv"; done
} >results/bench-layout.csv
{
	echo "# Arms on a real layout: synthetic safetensors models"
	echo
	echo "\`scripts/bench-layout.sh\` on $(machine), $(date -u +%Y-%m-%d)."
	echo "The models, F16, packed as the safetensors writer packs them (tensors"
	echo "start and end inside pages):"
	echo
	echo "- \`residctl bench mkmodel $small $shape_small\`:"
	echo "  $(cut -d' ' -f3 "$tmp/mk-small") bytes; \`verify --table\`: \`$(tail -1 "$tmp/verify-small")\`"
	echo "- \`residctl bench mkmodel $large $shape_large --seed 2\`:"
	echo "  $(cut -d' ' -f3 "$tmp/mk-large") bytes; \`verify --table\`: \`$(tail -1 "$tmp/verify-large")\`"
	echo
	echo "Layers as the layout reader groups them: the embedding, each"
	echo "\`model.layers.<n>.\`, the final norm, the head; a chunk starts at the page"
	echo "floor of each layer's first byte."
	echo
	echo "Bytes read do not depend on the machine's load; the wall times below"
	echo "were taken on a shared, loaded machine and are not results."
	echo
	cat "$tmp/small-1.md" "$tmp/small-2.md" "$tmp/large-1.md" "$tmp/large-2.md"
} >results/bench-layout.md
echo "bench-layout: results/bench-layout.csv, results/bench-layout.md"
