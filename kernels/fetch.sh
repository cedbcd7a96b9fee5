# Sourced by scripts/kernel-matrix.sh: a matrix kernel from kernels.list,
# downloaded with apt-get (pinned version; the newest of its series, said
# loudly, when the pin is gone from the mirror), cached in $CACHE and
# unpacked there: vmlinuz, config, brd.ko (the RAM disk a swap cell swaps on).

KLIST=${KLIST:-$(dirname "${BASH_SOURCE[0]}")/kernels.list}

kernel_ids() { awk '!/^#/ && NF {print $1}' "$KLIST"; }

# kernel_field ID COLUMN (2 package, 3 version, 4 fallback pattern)
kernel_field() { awk -v id="$1" -v c="$2" '!/^#/ && $1 == id {print $c}' "$KLIST"; }

# The .deb of PKG=VER in $CACHE/debs, downloading it when absent. 1 when the
# mirror does not have that version.
deb_get() {
	local pkg=$1 ver=$2 d="$CACHE/debs"
	mkdir -p "$d"
	ls "$d/${pkg}_${ver#*:}_"*.deb >/dev/null 2>&1 && return 0
	# apt's sandbox user cannot write into a root-owned cache
	(cd "$d" && apt-get download -q "$pkg=$ver" >"$d/.apt.log" 2>&1) && return 0
	cat "$d/.apt.log" >&2
	return 1
}

# kernel_fetch ID: sets KDIR (vmlinuz, config, brd.ko, release, package).
# 1 with a line on stderr on any failure (an infrastructure failure).
kernel_fetch() {
	local id=$1 pkg ver pat deb tmp rel brd
	pkg=$(kernel_field "$id" 2) ver=$(kernel_field "$id" 3) pat=$(kernel_field "$id" 4)
	[ -n "$pkg" ] || { echo "residctl kernels: kernel '$id' is not in $KLIST" >&2; return 1; }
	if ! deb_get "$pkg" "$ver"; then
		local alt altver
		if apt-cache show "$pkg=$ver" >/dev/null 2>&1; then
			echo "residctl kernels: apt-get download $pkg=$ver into $CACHE/debs failed (see above)" >&2
			return 1
		fi
		alt=$(apt-cache search --names-only "$pat" | awk '{print $1}' | sort -V | tail -1)
		altver=$(apt-cache show --no-all-versions "$alt" 2>/dev/null | awk '/^Version:/ {print $2; exit}')
		if [ -z "$alt" ] || [ -z "$altver" ]; then
			echo "residctl kernels: $pkg=$ver is not on the mirror and nothing matches $pat: run apt-get update, or update $KLIST" >&2
			return 1
		fi
		echo "residctl kernels: WARNING: pinned $pkg=$ver is gone from the mirror; using $alt=$altver (update $KLIST)" >&2
		pkg=$alt ver=$altver
		deb_get "$pkg" "$ver" || { echo "residctl kernels: apt-get download $pkg=$ver failed" >&2; return 1; }
	fi
	KDIR="$CACHE/${pkg}_${ver#*:}"
	[ -s "$KDIR/vmlinuz" ] && [ -s "$KDIR/brd.ko" ] && return 0
	deb=$(ls "$CACHE/debs/${pkg}_${ver#*:}_"*.deb | head -1)
	tmp=$(mktemp -d "$CACHE/.x.XXXXXX")
	if ! dpkg-deb -x "$deb" "$tmp"; then
		echo "residctl kernels: dpkg-deb -x $deb failed" >&2
		rm -rf "$tmp"
		return 1
	fi
	rel=$(ls "$tmp/boot" | sed -n 's/^vmlinuz-//p' | head -1)
	brd=$(find "$tmp/lib/modules/$rel" -name 'brd.ko*' | head -1)
	if [ -z "$rel" ] || [ -z "$brd" ]; then
		echo "residctl kernels: $deb has no boot/vmlinuz-* or brd module" >&2
		rm -rf "$tmp"
		return 1
	fi
	mkdir -p "$KDIR"
	cp "$tmp/boot/vmlinuz-$rel" "$KDIR/vmlinuz"
	cp "$tmp/boot/config-$rel" "$KDIR/config"
	case $brd in
	*.xz) xz -dc "$brd" >"$KDIR/brd.ko" ;;
	*.zst) zstd -qdc "$brd" >"$KDIR/brd.ko" ;;
	*) cp "$brd" "$KDIR/brd.ko" ;;
	esac
	echo "$rel" >"$KDIR/release"
	echo "$pkg $ver" >"$KDIR/package"
	rm -rf "$tmp"
}

# kernel_lacks CG: empty when the kernel in KDIR can run a cell of cgroup
# version CG, else what it lacks (the cell is then n/a).
kernel_lacks() {
	local cg=$1 c="$KDIR/config" o miss=""
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
