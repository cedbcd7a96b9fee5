#!/usr/bin/env bash
# What changed between kernels (docs/kernels.md): per kernel of the matrix,
# in its order, the manifest fields that differ from the kernel before it of
# the same flavour (7.3-rt against 6.12-rt; a flavour's first against the
# kernel just before it)
# (uffd features and ioctls by name, THP and shmem THP defaults, cgroup
# controllers, poison, /dev/userfaultfd) and each conformance case whose
# kernel side changed (its steps, before -> after); the first kernel's
# manifest in full. One cell stands for its kernel: v2 before v1, swap off
# before on, the root before a scope, among the cells that kept a manifest.
# usage: kernels/diff.sh CELLS... (cells.jsonl of a run, or
# results/kernels.json; a cell in a later file replaces one of the same id
# unless it has no manifest)
set -euo pipefail
usage="usage: kernels/diff.sh CELLS.jsonl|KERNELS.json..."
[ $# -ge 1 ] || { echo "$usage" >&2; exit 2; }
{ [ "$1" != --help ] && [ "$1" != -h ]; } || { echo "$usage"; exit 0; }
for f in "$@"; do
	[ -s "$f" ] || { echo "kernels/diff.sh: '$f' is missing or empty; give a run's cells.jsonl or results/kernels.json" >&2; exit 2; }
done
jq -c 'if type == "array" then .[] else . end' "$@" | jq -rs '
	def words: (. // "") | split(" ") | map(select(. != ""));
	def setdiff($a; $b): ($b | words) as $new | ($a | words) as $old |
		([$new[] | select(. as $w | $old | index([$w]) | not) | "+" + .] +
		 [$old[] | select(. as $w | $new | index([$w]) | not) | "-" + .]) | join(" ");
	def rank: [(if .cgroup == "v2" then 0 else 1 end), (if .swap == "off" then 0 else 1 end),
		   (if .place == "root" then 0 else 1 end)];
	(reduce .[] as $c ({}; .[$c.id] |= if $c.manifest or (. == null) or (.manifest | not) then $c else . end) | [.[]] | map(select(.manifest)) |
	 group_by(.kernel) | map(sort_by(rank) | .[0]) | sort_by(.n)) as $k |
	if ($k | length) == 0 then "no cell has a manifest (none reached its probe, or all were recorded before the matrix kept one)" else
	def flavour: sub("^[0-9.]+"; "");
	range(0; $k | length) as $i | $k[$i] as $c | $c.manifest as $m |
	([range(0; $i) | select($k[.].kernel | flavour == ($c.kernel | flavour))] | last // ($i - 1)) as $j |
	"\($c.kernel) (\($m.kernel), cell \($c.id))\(if $i > 0 then ", against \($k[$j].kernel)" else "" end):",
	(if $i == 0 then
		"  uffd features \($m.uffd_features): \($m.uffd_feature_names)",
		"  uffd ioctls \($m.uffd_ioctls): \($m.uffd_ioctl_names)",
		"  THP enabled [\($m.thp)], shmem_enabled [\($m.shmem_thp)]; poison \($m.poison); /dev/userfaultfd \($m.dev_userfaultfd)",
		"  cgroup controllers (\($c.cgroup)): \($m.controllers)"
	 else
		$k[$j] as $p | $p.manifest as $o |
		([(if $o.uffd_features != $m.uffd_features then
			"  uffd features \($o.uffd_features) -> \($m.uffd_features): \(setdiff($o.uffd_feature_names; $m.uffd_feature_names))" else empty end),
		  (if $o.uffd_ioctls != $m.uffd_ioctls then
			"  uffd ioctls \($o.uffd_ioctls) -> \($m.uffd_ioctls): \(setdiff($o.uffd_ioctl_names; $m.uffd_ioctl_names))" else empty end),
		  (if $o.thp != $m.thp then "  THP enabled [\($o.thp)] -> [\($m.thp)]" else empty end),
		  (if $o.shmem_thp != $m.shmem_thp then "  shmem THP [\($o.shmem_thp)] -> [\($m.shmem_thp)]" else empty end),
		  (if $o.poison != $m.poison then "  poison \($o.poison) -> \($m.poison)" else empty end),
		  (if $o.dev_userfaultfd != $m.dev_userfaultfd then "  /dev/userfaultfd \($o.dev_userfaultfd) -> \($m.dev_userfaultfd)" else empty end),
		  (if $p.cgroup != $c.cgroup then "  cgroup controllers not compared (\($p.cgroup) cell before, \($c.cgroup) here)"
		   elif setdiff($o.controllers; $m.controllers) != "" then "  cgroup controllers: \(setdiff($o.controllers; $m.controllers))" else empty end),
		  (if ($p.conformance_kernel and $c.conformance_kernel) then
			(($p.conformance_kernel | keys) + ($c.conformance_kernel | keys) | unique) as $cases |
			([$cases[] as $case |
			  ($p.conformance_kernel[$case] // "absent" | split("; ")) as $a |
			  ($c.conformance_kernel[$case] // "absent" | split("; ")) as $b |
			  select($a != $b) |
			  "  conformance \($case), kernel side: " + ([range(0; [($a | length), ($b | length)] | max) |
				select($a[.] != $b[.]) | "\($a[.] // "absent") -> \($b[.] // "absent")"] | join("; "))] |
			 if length == 0 then "  conformance: the kernel side of all \($cases | length) cases as on \($p.kernel)" else .[] end)
		   else "  conformance not compared (a cell without it)" end)] |
		 .[])
	 end)
	end'
