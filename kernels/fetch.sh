# shellcheck shell=bash
# Sourced by kernels/matrix.sh: a matrix kernel from kernels.list,
# downloaded with apt-get (pinned version; the newest of its series, said
# loudly, when the pin is gone from the mirror), cached in $CACHE and
# unpacked there: vmlinuz, config, brd.ko (the RAM disk a swap cell swaps
# on). Both of Debian's packagings: linux-image-REL holding boot/vmlinuz-REL
# and the modules (up to 6.12), or linux-image-REL as a metapackage over
# linux-binary-REL (usr/lib/modules/REL/vmlinuz), linux-modules-REL and
# linux-base-REL (usr/lib/modules/REL/config) (trixie-backports' 6.19 on).
# Or the kernel a developer hands over (OWN_KERNEL, OWN_CONFIG,
# OWN_MODULES: kernel id "own", unpacked into OWN_DIR).

KLIST=${KLIST:-$(dirname "${BASH_SOURCE[0]}")/kernels.list}
CACHE=/var/cache/residctl-kernels
# The mirror of a suite the host's apt sources do not name (kernels/deps.sh
# adds bookworm-backports from the same one).
MIRROR=${RESIDCTL_MIRROR:-http://deb.debian.org/debian}

kernel_ids() {
	if [ -n "${OWN_KERNEL:-}" ]; then echo own; else awk '!/^#/ && NF {print $1}' "$KLIST"; fi
}

# kernel_field ID COLUMN (2 suite, 3 package, 4 version, 5 fallback pattern)
kernel_field() { awk -v id="$1" -v c="$2" '!/^#/ && $1 == id {print $c}' "$KLIST"; }

# suite_apt SUITE: sets APT (options for apt-get and apt-cache) to the
# host's configuration when its sources name SUITE, else to one of our own
# under $CACHE/apt/SUITE (sources, lists, cache): the host's /etc/apt is
# never changed. The lists are fetched when absent; 1 when that fails.
suite_apt() {
	local s=$1 a="$CACHE/apt/$1"
	APT=()
	grep -rqsE "(^|[[:space:]])$s([[:space:]]|\$)" /etc/apt/sources.list /etc/apt/sources.list.d/ && return 0
	APT=(-o "Dir::Etc::SourceList=$a/sources.list" -o "Dir::Etc::SourceParts=$a/parts"
		-o "Dir::Etc::Preferences=$a/parts/none" -o "Dir::Etc::PreferencesParts=$a/parts"
		-o "Dir::State=$a/state" -o "Dir::State::status=$a/status"
		-o "Dir::Cache=$a/cache" -o Acquire::Languages=none -o APT::Sandbox::User=root)
	ls "$a/state/lists/"*_Packages* >/dev/null 2>&1 && return 0
	suite_update "$s"
}

# suite_update SUITE: apt-get update of our own configuration for SUITE.
suite_update() {
	local a="$CACHE/apt/$1"
	[ ${#APT[@]} -gt 0 ] || return 0
	mkdir -p "$a/parts" "$a/state/lists/partial" "$a/cache/archives/partial"
	: >>"$a/status"
	echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $MIRROR $1 main" >"$a/sources.list"
	# apt-get update says W: and exits 0 when an index could not be fetched
	apt-get "${APT[@]}" update -q >"$a/update.log" 2>&1 && ! grep -qE '^(E:|W: Failed|W: Some)' "$a/update.log" && return 0
	echo "residctl kernels: apt-get update of $1 from $MIRROR failed: $(grep -m1 -E '^(E|W):' "$a/update.log")" >&2
	return 1
}

# The .deb of PKG=VER in $CACHE/debs, downloading it when absent. 1 when the
# mirror does not have that version.
deb_get() {
	local pkg=$1 ver=$2 d="$CACHE/debs"
	mkdir -p "$d"
	ls "$d/${pkg}_${ver#*:}_"*.deb >/dev/null 2>&1 && return 0
	# apt's sandbox user cannot write into a root-owned cache
	(cd "$d" && apt-get "${APT[@]}" download -q "$pkg=$ver" >"$d/.apt.log" 2>&1) && return 0
	cat "$d/.apt.log" >&2
	return 1
}

# deb_unpack PKG VER DIR: the files a cell needs from PKG=VER, into DIR.
deb_unpack() {
	local debs=("$CACHE/debs/${1}_${2#*:}_"*.deb) deb
	deb=${debs[0]}
	# tar exits 2 when a pattern matches nothing; what was found is checked
	dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$3" --wildcards \
		'*/vmlinuz*' '*/config*' '*/brd.ko*' 2>/dev/null
	[ "${PIPESTATUS[0]}" = 0 ] || { echo "residctl kernels: dpkg-deb --fsys-tarfile $deb failed" >&2; return 1; }
}

# kernel_pin ID: sets PKG VER, the pinned package, or the newest of its
# series when the mirror no longer has the pin (with a WARNING).
kernel_pin() {
	local id=$1 pat alt
	PKG=$(kernel_field "$id" 3) VER=$(kernel_field "$id" 4) pat=$(kernel_field "$id" 5)
	apt-cache "${APT[@]}" show "$PKG=$VER" >/dev/null 2>&1 && return 0
	# lists older than the mirror's moves
	suite_update "$(kernel_field "$id" 2)" || return 1
	apt-cache "${APT[@]}" show "$PKG=$VER" >/dev/null 2>&1 && return 0
	alt=$(apt-cache "${APT[@]}" search --names-only "$pat" | awk '{print $1}' | sort -V | tail -1)
	VER=$(apt-cache "${APT[@]}" show --no-all-versions "$alt" 2>/dev/null | awk '/^Version:/ {print $2; exit}')
	if [ -z "$alt" ] || [ -z "$VER" ]; then
		echo "residctl kernels: $PKG=$(kernel_field "$id" 4) is not on the mirror and nothing matches $pat: run apt-get update, or update $KLIST" >&2
		return 1
	fi
	echo "residctl kernels: WARNING: pinned $PKG=$(kernel_field "$id" 4) is gone from the mirror; using $alt=$VER (update $KLIST)" >&2
	PKG=$alt
}

# kernel_fetch ID: sets KDIR (vmlinuz, config, brd.ko, release, package).
# 1 with a line on stderr on any failure (an infrastructure failure).
kernel_fetch() {
	local id=$1 suite tmp rel p dep pinned
	[ "$id" = own ] && { own_fetch; return; }
	suite=$(kernel_field "$id" 2)
	[ -n "$suite" ] || { echo "residctl kernels: kernel '$id' is not in $KLIST" >&2; return 1; }
	pinned="$CACHE/$(kernel_field "$id" 3)_$(kernel_field "$id" 4 | sed 's/^[0-9]*://')"
	KDIR=$pinned
	[ -s "$KDIR/release" ] && return 0
	# a pin the mirror had dropped, resolved once: the cells that share
	# the kernel then ask apt nothing (one apt at a time per lists dir)
	if [ -s "$pinned.moved" ] && [ -s "$CACHE/$(cat "$pinned.moved")/release" ]; then
		KDIR="$CACHE/$(cat "$pinned.moved")"
		echo "residctl kernels: WARNING: pinned $(kernel_field "$id" 3)=$(kernel_field "$id" 4) is gone from the mirror; using $(cat "$KDIR/package") (update $KLIST)" >&2
		return 0
	fi
	suite_apt "$suite" && kernel_pin "$id" || return 1
	KDIR="$CACHE/${PKG}_${VER#*:}"
	[ "$KDIR" = "$pinned" ] || echo "${PKG}_${VER#*:}" >"$pinned.moved"
	[ -s "$KDIR/release" ] && return 0
	deb_get "$PKG" "$VER" || { echo "residctl kernels: apt-get download $PKG=$VER into $CACHE/debs failed (see above)" >&2; return 1; }
	tmp=$(mktemp -d "$CACHE/.x.XXXXXX")
	deb_unpack "$PKG" "$VER" "$tmp" || { rm -rf "$tmp"; return 1; }
	if [ ! -d "$tmp/boot" ]; then
		# a metapackage: the kernel, its modules and config are in the
		# packages of the same version it depends on
		for p in $(apt-cache "${APT[@]}" show "$PKG=$VER" | sed -n 's/^Depends: //p' | tr ',' '\n' |
			grep -oE '^ *linux-(binary|modules|base)-[^ ]+' | tr -d ' '); do
			dep=$p
			{ deb_get "$p" "$VER" && deb_unpack "$p" "$VER" "$tmp"; } ||
				{ echo "residctl kernels: $p=$VER (a part of $PKG) could not be downloaded or unpacked" >&2; rm -rf "$tmp"; return 1; }
		done
	fi
	rel=$(cd "$tmp" && { ls boot/vmlinuz-* usr/lib/modules/*/vmlinuz; } 2>/dev/null | sed -E 's,^boot/vmlinuz-,,; s,^usr/lib/modules/([^/]+)/vmlinuz$,\1,' | head -1)
	if [ -z "$rel" ]; then
		echo "residctl kernels: $PKG=$VER${dep:+ and its linux-binary-*, linux-modules-*, linux-base-*} hold no boot/vmlinuz-* or usr/lib/modules/*/vmlinuz" >&2
		rm -rf "$tmp"
		return 1
	fi
	mkdir -p "$KDIR"
	{ cp "$(first_file "$tmp/boot/vmlinuz-$rel" "$tmp/usr/lib/modules/$rel/vmlinuz")" "$KDIR/vmlinuz" &&
		cp "$(first_file "$tmp/boot/config-$rel" "$tmp/usr/lib/modules/$rel/config")" "$KDIR/config" &&
		brd_copy "$(find "$tmp" -name 'brd.ko*' | head -1)" "$KDIR/brd.ko"; } ||
		{ echo "residctl kernels: $PKG=$VER: no config or brd module for $rel" >&2; rm -rf "$tmp" "$KDIR"; return 1; }
	echo "$PKG $VER" >"$KDIR/package"
	echo "$rel" >"$KDIR/release"
	rm -rf "$tmp"
}

# first_file PATH..: the first that exists.
first_file() {
	local f
	for f; do
		[ ! -e "$f" ] || { echo "$f"; return 0; }
	done
	return 1
}

# brd_copy MODULE DEST: the module uncompressed (busybox insmod reads only
# plain ELF; Debian's modules are .ko.xz since trixie).
brd_copy() {
	case $1 in
	'') return 1 ;;
	*.xz) xz -dc "$1" >"$2" ;;
	*.zst) zstd -qdc "$1" >"$2" ;;
	*.gz) gzip -dc "$1" >"$2" ;;
	*) cp "$1" "$2" ;;
	esac
}

# bzimage_release FILE: the release a bzImage names in its setup header
# (kernel_version, at 0x20E, points 0x200 before the string); 1 when FILE is
# not a bzImage.
bzimage_release() {
	local off
	[ "$(dd if="$1" bs=1 skip=$((0x202)) count=4 2>/dev/null)" = HdrS ] || return 1
	off=$(od -An -tu2 -j $((0x20e)) -N2 "$1" | tr -d ' ')
	dd if="$1" bs=1 skip=$((off + 0x200)) count=200 2>/dev/null | tr '\0' '\n' | awk 'NR == 1 {print $1}'
}

# own_fetch: the developer's kernel into OWN_DIR: vmlinuz, release (from
# the image), package; config when OWN_CONFIG names one; brd.ko when
# OWN_MODULES holds one (a modules_install tree, or the module itself).
own_fetch() {
	local brd="" rel
	KDIR=$OWN_DIR
	[ -s "$KDIR/package" ] && return 0
	rm -rf "$KDIR"
	mkdir -p "$KDIR"
	rel=$(bzimage_release "$OWN_KERNEL") || { echo "residctl kernels: $OWN_KERNEL is not a bzImage" >&2; return 1; }
	cp "$OWN_KERNEL" "$KDIR/vmlinuz" || return 1
	[ -z "${OWN_CONFIG:-}" ] || cp "$OWN_CONFIG" "$KDIR/config" || return 1
	if [ -n "${OWN_MODULES:-}" ]; then
		brd=$(find "$OWN_MODULES" -path "*/$rel/*" -name 'brd.ko*' 2>/dev/null | head -1)
		[ -n "$brd" ] || brd=$(find "$OWN_MODULES" -name 'brd.ko*' | head -1)
		[ -z "$brd" ] || brd_copy "$brd" "$KDIR/brd.ko" || return 1
	fi
	echo "$rel" >"$KDIR/release"
	echo "own: $OWN_KERNEL${OWN_CONFIG:+ config $OWN_CONFIG}${brd:+ brd $brd}" >"$KDIR/package"
}

# kernel_newest FLAVOUR (plain or rt): the newest kernel of that flavour in
# the suites of kernels.list, as a kernels.list line; its id is the
# kernels.list id when that pins the same package, else the series
# (e.g. 7.4-rt). 1 with a line on stderr when the mirror cannot be asked.
kernel_newest() {
	local re='^linux-image-[0-9][^ ]*-amd64$' s pkg best="" bsuite="" ver id
	[ "$1" = rt ] && re='^linux-image-[0-9][^ ]*-rt-amd64$'
	while read -r s <&4; do
		suite_apt "$s" || return 1
		pkg=$(apt-cache "${APT[@]}" search --names-only "$re" | awk '{print $1}' |
			{ if [ "$1" = rt ]; then cat; else grep -vE -- '-(cloud|rt)-amd64$'; fi } | sort -V | tail -1)
		[ -n "$pkg" ] || continue
		[ -n "$best" ] && [ "$(printf '%s\n%s\n' "$best" "$pkg" | sort -V | tail -1)" = "$best" ] && continue
		best=$pkg bsuite=$s
	done 4< <(awk '!/^#/ && NF {print $2}' "$KLIST" | sort -u)
	[ -n "$best" ] || { echo "residctl kernels: no $1 kernel matches $re in the suites of $KLIST" >&2; return 1; }
	suite_apt "$bsuite" || return 1
	ver=$(apt-cache "${APT[@]}" show --no-all-versions "$best" | awk '/^Version:/ {print $2; exit}')
	id=$(awk -v p="$best" '!/^#/ && $3 == p {print $1; exit}' "$KLIST")
	# linux-image-7.3.4+deb13-rt-amd64: series 7.3, rest +deb13-rt-amd64
	[[ $best =~ ^linux-image-([0-9]+\.[0-9]+)\.[0-9]+(.*)$ ]] || return 1
	local mm=${BASH_REMATCH[1]} rest=${BASH_REMATCH[2]}
	if [ -z "$id" ]; then
		id=$mm
		[ "$1" = rt ] && id=$mm-rt
	fi
	rest=${rest//./\\.}
	echo "$id $bsuite $best $ver ^linux-image-${mm/./\\.}\\.[0-9]+${rest//+/\\+}\$"
}

# kernel_unknown CG SWAP: empty when the cell can be judged from what KDIR
# holds, else what is missing (the cell is n/a and not booted): a v1 cell
# needs the config to know whether there is a v1 memory controller, a swap
# cell the brd module or brd built in.
kernel_unknown() {
	if [ "$1" = v1 ] && [ ! -f "$KDIR/config" ]; then
		echo "no config given (KERNEL_CONFIG=): whether the kernel has a v1 memory controller (CONFIG_MEMCG_V1) is unknown"
	elif [ "$2" = on ] && [ ! -f "$KDIR/brd.ko" ] && ! grep -qs '^CONFIG_BLK_DEV_RAM=y' "$KDIR/config"; then
		echo "nothing to swap on: no brd module (KERNEL_MODULES=) and no config with CONFIG_BLK_DEV_RAM=y"
	fi
}

# kernel_lacks CG: empty when the kernel in KDIR can run a cell of cgroup
# version CG (or there is no config to tell: the probe will), else what it
# lacks (the cell is then n/a).
kernel_lacks() {
	local cg=$1 c="$KDIR/config" o miss=""
	[ -f "$c" ] || return 0
	for o in USERFAULTFD MEMCG SHMEM SWAP DEVTMPFS BLK_DEV_INITRD SERIAL_8250_CONSOLE; do
		grep -q "^CONFIG_$o=y" "$c" || miss="$miss CONFIG_$o"
	done
	# v1 memcg is optional (CONFIG_MEMCG_V1) since 6.11, always there before
	if [ "$cg" = v1 ] && ! grep -q '^CONFIG_MEMCG_V1=y' "$c"; then
		local rel
		rel=$(cat "$KDIR/release")
		printf '%s\n6.11\n' "${rel%%-*}" | sort -VC || miss="$miss CONFIG_MEMCG_V1"
	fi
	echo "${miss# }"
}
