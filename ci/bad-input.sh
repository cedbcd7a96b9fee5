#!/usr/bin/env bash
# Bad input to the tool: each case must print exactly one line on stderr,
# exit 2, and leave no cgroup and no process behind.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
R=build/residctl
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0

# The cgroups a residctl process of this pid made (residctl-PID-TAG).
cgroups_of() { find /sys/fs/cgroup -maxdepth 6 -type d -name "residctl-$1-*" 2>/dev/null; }

expect2() { # name, command...
	local name=$1; shift
	"$@" >"$tmp/out" 2>"$tmp/err" &
	local pid=$! rc lines
	wait "$pid"
	rc=$?
	lines=$(wc -l <"$tmp/err")
	if [ "$rc" -eq 2 ] && [ "$lines" -eq 1 ] && [ -z "$(cgroups_of "$pid")" ] &&
	   ! pgrep -P $$ >/dev/null; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL $name: exit $rc, $lines stderr lines:" >&2
		sed 's/^/    /' "$tmp/err" >&2
	fi
}

head -c 1048576 /dev/urandom >"$tmp/small.bin"
printf 'residctl-trace 1 reference\nchunks 2\nchunk-size 4096\naccesses 3\n0\n1\n' >"$tmp/truncated.trace"
printf 'residctl-trace 1 fault\nchunks 2\nchunk-size 4096\naccesses 2\n0\n1\n' >"$tmp/fault.trace"
printf 'not a trace\n' >"$tmp/corrupt.trace"
printf 'residctl-trace 1 reference\nchunks 2\nchunk-size 4096\naccesses 2\n0\n1\n' >"$tmp/good.trace"

expect2 "unknown command" $R frobnicate
expect2 "unknown scenario" $R check T-9
expect2 "bad seed" $R check --seed x1
expect2 "bad profile" $R check --profile slow
expect2 "unknown check --backing" $R check --backing disk
expect2 "unknown check --chunks" $R check --chunks odd
expect2 "unknown check --pages" $R check --pages 2m
expect2 "check --pages huge of a scenario with no huge leg" $R check T-4 --pages huge
expect2 "T-4 has no file leg" $R check T-4 --backing file
expect2 "check --sim reads no file" $R check --sim --backing file
expect2 "check --sim T-8 (real kernel only)" $R check --sim T-8
# Past the rows one check runs (CHECK_MAX_ROWS, 64): T-1 has 7 legs.
expect2 "check past its row limit" $R check T-1 T-1 T-1 T-1 T-1 T-1 T-1 T-1 T-1 T-1
# shellcheck disable=SC2046 # 65 operands
expect2 "check past its row limit in scenarios" $R check $(printf 'T-4 %.0s' $(seq 65))
expect2 "malformed RESIDCTL_TEST_EIO" env RESIDCTL_TEST_EIO=/etc/hostname:x:1 LD_PRELOAD="$PWD/build/libresid-eio.so" /bin/true
expect2 "RESIDCTL_TEST_EIO on a missing file" env RESIDCTL_TEST_EIO=/nonexistent:0:1 LD_PRELOAD="$PWD/build/libresid-eio.so" /bin/true
expect2 "unknown storm --backing" $R storm --backing disk
expect2 "storm --huge-dir not a directory" $R storm --rounds 1 --huge-dir /nonexistent
expect2 "storm --huge-dir not on a tmpfs" $R storm --rounds 1 --huge-dir "$PWD"
expect2 "storm --huge-dir relative" $R storm --rounds 1 --huge-dir tmp
expect2 "unknown explore --chunks" $R explore T-3 --chunks odd
expect2 "budget 0" $R verify --synthetic 8M --budget 0
expect2 "budget below chunk" $R verify --synthetic 8M --chunk 2M --budget 1M
expect2 "chunk not 4096-multiple" $R verify --synthetic 8M --chunk 5000
expect2 "chunk larger than region" $R verify --synthetic 8M --chunk 16M --budget 16M
expect2 "region larger than file" $R verify "$tmp/small.bin" --region 2M --chunk 512K --budget 1M
expect2 "missing backing file" $R verify "$tmp/nonexistent.bin"
expect2 "unreadable backing file" $R verify "$tmp"
expect2 "truncated trace" $R belady "$tmp/truncated.trace" --capacity 8K
expect2 "corrupt trace" $R belady "$tmp/corrupt.trace" --capacity 8K
expect2 "fault trace to the solver" $R belady "$tmp/fault.trace" --capacity 8K
expect2 "unknown fault point" $R storm --duration 1 --fault bogus=0.1
expect2 "fault probability out of range" $R storm --duration 1 --fault wake=1.5
expect2 "fault in the environment" env RESIDCTL_FAULTS=punch@0 $R storm --duration 1
expect2 "storm duration 0" $R storm --duration 0
expect2 "unknown sim scenario" $R explore T-9
expect2 "a scenario with no simulated form" $R explore T-5
expect2 "a simulated-only scenario on the real kernel" $R check self-deadlock
expect2 "unknown strategy" $R explore T-3 --strategy pct:x
expect2 "malformed replay line" $R replay 'garbage'
expect2 "replay line from another build" $R replay 'rc3/0123456789ab/T-3/random/1/-/4/-/0*5'
expect2 "shard 0 of 3" $R explore T-3 --shard 0/3
expect2 "shard past N" $R matrix --shard 5/4
expect2 "shard without a slash" $R check --sim --shard 3
expect2 "shard of a search tree" $R explore self-deadlock --strategy dfs:1 --shard 1/2
expect2 "shard of the real gate" $R check --shard 1/2
expect2 "shard of a timed storm" $R storm --duration 5 --shard 1/2
expect2 "storm rounds and duration" $R storm --rounds 2 --duration 5
expect2 "merge of nothing" $R merge
expect2 "merge of a missing file" $R merge "$tmp/none.json"
expect2 "merge of a file not a report" $R merge "$tmp/good.trace"
expect2 "kernel matrix shard 0" bash kernels/matrix.sh --shard 0/2
expect2 "kernel matrix, a kernel not a bzImage" bash kernels/matrix.sh --kernel ci/bad-input.sh
expect2 "kernel matrix, a config without a kernel" bash kernels/matrix.sh --kernel-config ci/bad-input.sh
expect2 "kernel diff of a missing file" bash kernels/diff.sh "$tmp/none.jsonl"
expect2 "replay line, old format" $R replay 'rc2/0123456789ab/T-3/random/1/-/4/0*5'
expect2 "replay line, bad bug field" $R replay 'rc3/x/T-3/random/1/12/4/-/0*5'
expect2 "replay line, bad fault field" $R replay 'rc3/x/T-3/random/1/-/4/wake@0/0*5'
rev=$(sed -n 's/.*RESID_SIM_BUILD "\(.*\)".*/\1/p' build/rev.h)
expect2 "replay line, fault it cannot fire" $R replay "rc3/$rev/self-deadlock/random/1/-/1/punch=1/0*5"
expect2 "repro without a bug" $R repro
expect2 "repro of bug 12" $R repro 12
expect2 "repro bad seed" $R repro 2 --seed x
expect2 "check --bug 0" $R check --bug 0
expect2 "explore --bug list" $R explore T-3 --bug 1,,2
expect2 "storm --bug" $R storm --bug 12
expect2 "RESIDCTL_BUGS bad" env RESIDCTL_BUGS=all,3 $R check T-2
expect2 "matrix no seeds" $R matrix --seeds 0
expect2 "check --fault unknown point" $R check T-3 --fault nosuch=0.5
expect2 "check --fault T-5 cannot fire" $R check T-5 --fault punch=1
expect2 "check --sim --fault all, T-5" $R check --sim T-5 --fault all=0.1
expect2 "explore --fault it cannot fire" $R explore self-deadlock --fault wake@1
expect2 "explore --fault bad calls" $R explore T-7 --fault wake@2+2
expect2 "check --chunk not 4K" $R check T-3 --chunk 5000
expect2 "schedules without --sim" $R check --schedules 10
expect2 "seconds without --sim" $R check --seconds 10
expect2 "failures-per-row without --sim" $R check --failures-per-row 2
expect2 "explore --seconds 0" $R explore T-1 --seconds 0
expect2 "capacity below a chunk" $R belady "$tmp/good.trace" --capacity 1K
expect2 "unknown benchmark" $R bench frob
expect2 "bench ratio out of range" $R bench arms --ratios 1.5
expect2 "bench budget below a chunk" $R bench arms --ratios 0.01
expect2 "bench unknown arm" $R bench arms --arms B
expect2 "bench file in memory" $R bench arms --dir /dev/shm
expect2 "bench fetch size not 4K" $R bench fetch --sizes 3000
expect2 "bench --device without fio" env PATH=/nonexistent $R bench arms --device
expect2 "bench decode --cols 0" $R bench decode --cols 0
expect2 "bench device without --file" $R bench device
expect2 "bench device on a missing file" $R bench device --file /nonexistent
expect2 "bench arms bad device class" $R bench arms --device-class ssd
expect2 "bench fetch bad IOPS" $R bench fetch --device-class 100M,0
expect2 "bench arms class on tmpfs" $R bench arms --dir /dev/shm --device-class sata
expect2 "bench arms --cols" $R bench arms --cols 64
# Options are matched by name, never by a prefix of the argument: a longer
# misspelt name is refused, not taken for the option it starts with.
expect2 "check --seeds is not --seed" $R check T-5 --seeds 3
expect2 "check --chunks is not --chunk" $R check T-3 --chunks 64K
expect2 "check --jsonx is not --json" $R check T-5 --jsonx "$tmp/x.json"
expect2 "verify --chunks is not --chunk" $R verify --synthetic 8M --chunks 1M
expect2 "storm --seeds is not --seed" $R storm --duration 1 --seeds 1
expect2 "explore --seeds is not --seed" $R explore T-3 --seeds 2
expect2 "repro --seeds is not --seed" $R repro 2 --seeds 1
expect2 "matrix --seedsx is not --seeds" $R matrix --seedsx 2
expect2 "bench arms --chun is ambiguous" $R bench arms --chun 1M
expect2 "bench fetch --sizesx is not --sizes" $R bench fetch --sizesx 2M
expect2 "probe --json takes no value" $R probe --json=1
expect2 "check --json needs a value" $R check --json
expect2 "coverage of a missing file" $R coverage "$tmp/none.txt"
expect2 "conformance of an unknown case" $R conformance no-such-case
expect2 "conformance, unknown option" $R conformance --fast
# Past the cases one conformance runs (CONF_MAX_CASES, 64).
# shellcheck disable=SC2046 # 65 operands
expect2 "conformance past its case limit" $R conformance $(printf 'uffd-read-empty %.0s' $(seq 65))
expect2 "hazards, an unknown hazard" $R hazards no-such-hazard
expect2 "hazards --json without a file" $R hazards --json
expect2 "hazards, a hazard named twice" $R hazards cold dontneed cold
expect2 "hazards, unknown option" $R hazards --fast
expect2 "coverage of a trace, not a coverage file" $R coverage "$tmp/good.trace"
printf '0 100\n50 10\n' >"$tmp/overlap.layout"
printf '0 100\n200 x\n' >"$tmp/badlen.layout"
printf '0 8192\n8192 8192\n' >"$tmp/good.layout"
printf '\x40\0\0\0\0\0\0\0{"a":{"dtype":"F16","shape":[2],"data_offsets":[0,5]}}          ' >"$tmp/bad.safetensors"
expect2 "verify: overlapping layers" $R verify --synthetic 1M --table "$tmp/overlap.layout"
expect2 "verify: bad layer length" $R verify --synthetic 1M --table "$tmp/badlen.layout"
expect2 "verify: bad safetensors header" $R verify --synthetic 1M --table "$tmp/bad.safetensors"
expect2 "verify: missing layout" $R verify --synthetic 1M --table "$tmp/nonexistent.layout"
expect2 "verify: layout past the file" $R verify --synthetic 8K --table "$tmp/good.layout"
expect2 "verify: --chunk with --table" $R verify --synthetic 1M --table "$tmp/good.layout" --chunk 4K
expect2 "bench: bad layout" $R bench arms --table "$tmp/overlap.layout"
expect2 "bench: --chunks with --table" $R bench arms --table "$tmp/good.layout" --chunks 4
expect2 "bench: budget below the largest layer chunk" $R bench arms --table "$tmp/good.layout" --ratios 0.25
expect2 "storm --watchdog 0" $R storm --watchdog 0
expect2 "bench: a huge arm on chunks off the huge page" $R bench arms --table "$tmp/good.layout" --ratios 1 --arms D-huge
expect2 "mkmodel without FILE" $R bench mkmodel --layers 2
expect2 "mkmodel 0 layers" $R bench mkmodel "$tmp/m.safetensors" --layers 0
expect2 "mkmodel too large" $R bench mkmodel "$tmp/m.safetensors" --layers 1000 --hidden 65536
expect2 "mkgguf without --preset" $R bench mkgguf --out "$tmp/m.gguf"
expect2 "mkgguf unknown preset" $R bench mkgguf --preset huge --out "$tmp/m.gguf"
expect2 "mkgguf unknown quant" $R bench mkgguf --preset tiny --quant q2 --out "$tmp/m.gguf"
expect2 "mkgguf without --out" $R bench mkgguf --preset tiny
expect2 "mkgguf into a missing directory" $R bench mkgguf --preset tiny --out "$tmp/none/m.gguf"
expect2 "mkgguf onto a directory" $R bench mkgguf --preset tiny --out "$tmp"
mkfifo "$tmp/fifo"
printf 'GGUF\3\0\0\0' >"$tmp/bad.gguf"
expect2 "run: no program" $R run --file "$tmp/small.bin" --
expect2 "run: a program not found" $R run --file "$tmp/small.bin" -- "$tmp/no-such-program"
expect2 "run: the program before --" $R run --file "$tmp/small.bin" true
expect2 "run: no --file" $R run -- true
expect2 "run: a budget below the largest chunk" $R run --file "$tmp/small.bin" --budget 4K -- true
expect2 "run: a budget above the cgroup's room" $R run --file "$tmp/small.bin" --budget 100000G -- true
expect2 "run: --budget and --ratio" $R run --file "$tmp/small.bin" --budget 1M --ratio 0.5 -- true
expect2 "run: --trace with --kernel-mmap" $R run --file "$tmp/small.bin" --kernel-mmap --trace "$tmp/t.trace" -- true
expect2 "run: --trace with --prefetch" $R run --file "$tmp/small.bin" --prefetch 1 --trace "$tmp/t.trace" -- true
expect2 "run: --trace into a missing directory" $R run --file "$tmp/small.bin" --trace "$tmp/no/such/t.trace" -- true
expect2 "run: a directory as the file" $R run --file "$tmp" -- true
expect2 "run: a FIFO as the file" $R run --file "$tmp/fifo" -- true
expect2 "run: a missing file" $R run --file "$tmp/nonexistent.bin" -- true
expect2 "run: a broken GGUF header" $R run --file "$tmp/bad.gguf" -- true
expect2 "run: a layout past the file" $R run --file "$tmp/small.bin" --order "$tmp/overlap.layout" -- true
expect2 "run: unknown option" $R run --file "$tmp/small.bin" --frob -- true
expect2 "run: bad policy" $R run --file "$tmp/small.bin" --policy mru -- true
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
	expect2 "not root, no cgroup access" \
		setpriv --reuid=65534 --regid=65534 --clear-groups $R check T-2
fi
echo "bad input: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
