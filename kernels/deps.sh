#!/usr/bin/env bash
# What the kernel matrix needs on the host: QEMU 10 from bookworm-backports
# (Debian 12's QEMU 7.2 crashes 6.12 in ~40 % of boots), busybox-static, cpio,
# jq and xz-utils. As root it adds the backports source (default pin priority
# 100, so nothing else is upgraded) and installs only what is missing;
# otherwise it prints the command and fails.
set -euo pipefail
src=/etc/apt/sources.list.d/residctl-backports.sources
qemu_ok() {
	local v
	v=$(dpkg-query -W -f='${Status} ${Version}' qemu-system-x86 2>/dev/null) || return 1
	[[ $v == "install ok installed "* ]] || return 1
	dpkg --compare-versions "${v##* }" ge 1:10
}
missing=()
for p in busybox-static cpio jq xz-utils; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
qemu_ok || missing+=(qemu-system-x86)
have_src() { grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; }
[ ${#missing[@]} -eq 0 ] && have_src && exit 0
if [ "$(id -u)" -ne 0 ]; then
	echo "residctl kernels: need bookworm-backports and ${missing[*]:-nothing else}; as root run: bash kernels/deps.sh" >&2
	exit 1
fi
if ! have_src; then
	echo "residctl kernels: adding bookworm-backports ($src)"
	cat >"$src" <<SRC
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q >/dev/null
[ ${#missing[@]} -eq 0 ] && exit 0
echo "residctl kernels: installing ${missing[*]}"
# -t: qemu-system-x86 and the QEMU 10 parts it needs come from backports;
# packages that exist only in bookworm still come from bookworm.
apt-get install -y -q --no-install-recommends -t bookworm-backports "${missing[@]}" >/dev/null
qemu_ok || { echo "residctl kernels: qemu-system-x86 from bookworm-backports did not install (version 10 needed)" >&2; exit 1; }
