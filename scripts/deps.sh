#!/usr/bin/env bash
# Installs the Debian packages residctl needs, and those named as arguments
# (a benchmark's tools), only those missing. As root it runs apt-get;
# otherwise it prints the exact command and fails.
set -euo pipefail
need=(make gcc libcunit1-dev libfiu-dev fiu-utils libcgroup-dev libjansson-dev clang clang-format-14 libclang-rt-14-dev yamllint shellcheck jq "$@")
missing=()
for p in "${need[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
	echo "residctl: missing packages; run: sudo apt-get install -y ${missing[*]}" >&2
	exit 1
fi
echo "residctl: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null
apt-get install -y -q "${missing[@]}" >/dev/null
