#!/usr/bin/env bash
# The engine of docs/engine.md: the prebuilt llama.cpp that npm's
# node-llama-cpp ships, pinned by engine/package-lock.json, installed into
# build/engine/ without fetching or building anything but npm packages; the
# headers of that exact source extracted from the package's git bundle into
# build/engine/llama.cpp/ (not committed); the C driver engine/driver.c
# built against them into build/engine/llama-driver.
#
# Idempotent: each step runs again only when its input changed (the lock,
# the bundle, the driver's source). Exit 0 when build/engine/llama-driver is
# ready; 2, after one line on stderr, when node or npm is missing or the
# registry cannot be reached (the gate reports UNKNOWN); 1 on any other
# failure, named.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2

out=build/engine
libdir=$out/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64
bundle=$out/node_modules/node-llama-cpp/llama/gitRelease.bundle
# The one commit of the bundle that node-llama-cpp 3.22.1 ships: the
# headers must be this source's, the shared objects were built from it.
llama_commit=de3ff815ea7d559ee917f063901b8986f038abc6
version=3.22.1

fail() { echo "engine: $*" >&2; exit 1; }

for tool in node npm git cc; do
	command -v "$tool" >/dev/null || {
		case $tool in
		node | npm) echo "engine: $tool is not installed; apt-get install -y nodejs npm" >&2; exit 2 ;;
		git) echo "engine: git is not installed; apt-get install -y git" >&2; exit 2 ;;
		cc) echo "engine: no C compiler; apt-get install -y build-essential" >&2; exit 2 ;;
		esac
	}
done
mkdir -p "$out"

# 1. The npm packages, exactly as locked. `npm ci` refuses this lock: it
# leaves out the optional platform packages of node-llama-cpp that the
# registry reachable here does not serve, and `npm ci` wants every one
# listed; `npm install --no-save` with the lock in place installs the locked
# versions (integrity checked against the lock) and writes nothing back.
# --omit=optional skips the CUDA and Vulkan builds, --ignore-scripts and
# NODE_LLAMA_CPP_SKIP_DOWNLOAD keep node-llama-cpp from fetching or building
# llama.cpp itself.
stamp=$(cat engine/package.json engine/package-lock.json | sha256sum | cut -c1-16)
if [ "$(cat "$out/.npm-stamp" 2>/dev/null)" != "$stamp" ] || [ ! -d "$libdir" ]; then
	cp engine/package.json engine/package-lock.json "$out/"
	if ! log=$(cd "$out" && NODE_LLAMA_CPP_SKIP_DOWNLOAD=true npm install --no-save \
		--ignore-scripts --omit=optional --no-audit --no-fund --prefer-offline 2>&1); then
		if grep -qE 'ENOTFOUND|ECONNREFUSED|ETIMEDOUT|EAI_AGAIN|ECONNRESET|network' <<<"$log"; then
			echo "engine: the npm registry is unreachable ($(grep -m1 -oE 'ENOTFOUND|ECONNREFUSED|ETIMEDOUT|EAI_AGAIN|ECONNRESET|network[^.]*' <<<"$log")); nothing installed" >&2
			exit 2
		fi
		fail "npm install in $out failed: $(grep -m1 'npm error' <<<"$log" || tail -n1 <<<"$log")"
	fi
	cmp -s engine/package-lock.json "$out/package-lock.json" ||
		fail "npm rewrote $out/package-lock.json; the lock in engine/ is out of date"
	for pkg in node-llama-cpp @node-llama-cpp/linux-x64; do
		got=$(sed -n 's/^  "version": "\(.*\)",$/\1/p' "$out/node_modules/$pkg/package.json")
		[ "$got" = "$version" ] || fail "$pkg is $got in $out, not the pinned $version"
	done
	echo "$stamp" >"$out/.npm-stamp"
fi
for so in libllama.v0.5.0.so libggml.v0.5.0.so libggml-base.so; do
	[ -f "$libdir/$so" ] || fail "$libdir/$so is missing; remove $out and run this again"
done

# 2. The headers of the source the shared objects were built from.
src=$out/llama.cpp
if [ "$(cat "$src/.stamp" 2>/dev/null)" != "$llama_commit" ]; then
	heads=$(git bundle list-heads "$bundle" 2>/dev/null) ||
		fail "$bundle is not a git bundle"
	grep -q "^$llama_commit " <<<"$heads" ||
		fail "$bundle does not hold commit $llama_commit but: $heads"
	rm -rf "$src"
	git clone -q --no-checkout "$bundle" "$src" 2>/dev/null ||
		fail "git clone of $bundle failed"
	git -C "$src" checkout -q "$llama_commit" -- include ggml/include ||
		fail "cannot check out the headers of $llama_commit"
	echo "$llama_commit" >"$src/.stamp"
fi

# 3. The driver, against those headers and the prebuilt objects (rpath
# relative to the binary, so build/ may move).
drv=$out/llama-driver
if [ ! -x "$drv" ] || [ engine/driver.c -nt "$drv" ] || [ "$0" -nt "$drv" ]; then
	# shellcheck disable=SC2016 # $ORIGIN is the dynamic linker's, not the shell's
	${CC:-cc} -std=gnu11 -Wall -Wextra -Werror -O2 -g -D_GNU_SOURCE \
		-isystem "$src/include" -isystem "$src/ggml/include" \
		engine/driver.c -o "$drv.tmp" \
		-L"$libdir" -l:libllama.v0.5.0.so -l:libggml.v0.5.0.so -l:libggml-base.so \
		-Wl,-rpath,'$ORIGIN/node_modules/@node-llama-cpp/linux-x64/bins/linux-x64' \
		-ldl -lm || fail "building $drv failed"
	mv "$drv.tmp" "$drv"
fi
echo "engine: $drv (node-llama-cpp $version, llama.cpp $llama_commit)"
