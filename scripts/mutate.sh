#!/usr/bin/env bash
# The mutation campaign: each mutant of scripts/mutants.txt is applied to a
# copy of this tree (the tree itself is never touched), built, and judged by
# every detector; a detector that fails or times out kills it. Results go to
# OUT/results.tsv (one line per mutant and detector, appended; the last line
# wins), logs to OUT/logs/, and scripts/mutation-report.sh turns them into
# results/mutation.md and results/mutation.json.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
ROOT=$PWD
TABLE=scripts/mutants.txt
ALL_DETECTORS="unit sim gate tsan storm"
FOLLOW_UP="tsanfault stormhard simx"
MIN_MUTANTS=40

usage() {
	cat <<'EOF'
usage: scripts/mutate.sh [--mutants ID[,ID..]] [--detectors D[,D..]]
                         [--out DIR] [--no-report] [--table FILE]
                         [--first-verdict] [--no-baseline]
       scripts/mutate.sh --check | --list | --help
  Applies each mutant of scripts/mutants.txt to a copy of the tree, builds
  it and runs the detectors on it, each under a time limit (a hang is a
  kill by "timeout"):
    unit   build/unit-tests                                      (150 s)
    sim    scripts/mutation-sim.sh build/residctl: check --sim's 200
           schedules per scenario and leg, swarm faults, no shrinking (150 s)
    gate   residctl check T-1 T-3 T-4 T-5 T-6 T-7 H-1, quick profile (150 s)
    tsan   build/tsan/residctl check T-3 T-6                     (90 s)
    storm  residctl storm --duration 6 --round 2 --seed 1 --fault all=0.02 (45 s)
  The gate leaves out T-2 and TSan its unit tests, the two slowest parts of
  the suite, so that 60 mutants fit in an hour on a shared 2-core machine.
  Follow-up detectors, for survivors (--detectors names them):
    tsanfault  build/tsan/residctl check T-3 T-7 --fault all=0.05    (150 s)
    stormhard  residctl storm --duration 20 --round 2 --seed 1 --fault all=0.1 (90 s)
    simx       scripts/mutation-sim.sh build/simx/residctl: the simulation
               build, which preempts at the pager's unlocked loads and stores (150 s)
  The unmutated copy runs first and must pass every detector. A mutant that
  does not compile is reported as such, not as a kill. One line per
  detector shows progress and the time left. Results: OUT/results.tsv
  (default build/mutation), then results/mutation.md and .json (unless
  --no-report). Run it niced: nice -n 19 scripts/mutate.sh >log 2>&1 &
  --check  parses the table and checks that every mutant applies, each
           search string exactly once, to this tree; no build
  --list   prints the mutants
  --table  another table than scripts/mutants.txt (for the self-test)
  --first-verdict  a mutant's detectors stop at the first that kills it by
           a verdict (a failing test or oracle, not a time-out), in the
           order --detectors gives; the rest are not run for it
  --no-baseline  skips the unmutated tree's detectors (still built): for a
           caller that has just run them on this tree (scripts/mutation-sample.sh)
EOF
}

die() { echo "mutate: $*" >&2; exit 2; }

# ---- the table

M_ID=() M_CAT=() M_FILE=() M_WHAT=() M_FIRST=() M_COUNT=()
E_FIND=() E_REPL=()

unescape() {
	local v=$1
	v=${v//\\n/$'\n'}
	printf '%s' "${v//\\t/$'\t'}"
}

parse_table() {
	local line key val n=0 i=-1 want=find
	while IFS= read -r line || [ -n "$line" ]; do
		n=$((n + 1))
		[[ -z $line || $line == \#* ]] && continue
		key=${line%% *}
		val=${line#"$key"}
		val=${val# }
		case $key in
		mutant)
			[ $i -lt 0 ] || [ "$want" = find ] ||
				die "$TABLE:$n: mutant ${M_ID[i]} has a find without a repl"
			read -r id cat file extra <<<"$val"
			{ [ -n "${file:-}" ] && [ -z "${extra:-}" ]; } ||
				die "$TABLE:$n: want 'mutant ID CATEGORY FILE'"
			case $cat in lock | budget | data | error) ;;
			*) die "$TABLE:$n: mutant $id: category '$cat' is not lock, budget, data or error" ;;
			esac
			for x in "${M_ID[@]}"; do
				[ "$x" != "$id" ] || die "$TABLE:$n: mutant $id is defined twice"
			done
			i=$((i + 1))
			M_ID[i]=$id M_CAT[i]=$cat M_FILE[i]=$file M_WHAT[i]=""
			M_FIRST[i]=${#E_FIND[@]} M_COUNT[i]=0 want=find
			;;
		what | find | repl)
			[ $i -ge 0 ] || die "$TABLE:$n: '$key' before the first mutant"
			if [ "$key" = what ]; then
				M_WHAT[i]=$val
			elif [ "$key" != "$want" ]; then
				die "$TABLE:$n: mutant ${M_ID[i]}: '$key' where '$want' was expected"
			elif [ "$key" = find ]; then
				[ -n "$val" ] || die "$TABLE:$n: mutant ${M_ID[i]}: empty find"
				E_FIND+=("$(unescape "$val")") want=repl
			else
				E_REPL+=("$(unescape "$val")") want=find
				M_COUNT[i]=$((M_COUNT[i] + 1))
			fi
			;;
		*) die "$TABLE:$n: unknown key '$key' (mutant, what, find, repl)" ;;
		esac
	done <"$TABLE"
	[ "$want" = find ] || die "$TABLE: mutant ${M_ID[i]} ends with a find without a repl"
	for i in "${!M_ID[@]}"; do
		[ -n "${M_WHAT[i]}" ] || die "mutant ${M_ID[i]}: no 'what' line"
		[ "${M_COUNT[i]}" -gt 0 ] || die "mutant ${M_ID[i]}: no find/repl pair"
	done
}

# Applies mutant $1's edits to the text of its file in $2 (a tree); with $3
# = write, writes the result. Exits 2, naming the mutant, when a search
# string is missing or occurs more than once.
apply_mutant() {
	local i=$1 mode=${3:-} f=$2/${M_FILE[$1]} text e find after
	[ -f "$f" ] || die "mutant ${M_ID[i]}: no file ${M_FILE[i]}"
	text=$(cat "$f" && printf x) || die "mutant ${M_ID[i]}: cannot read $f"
	text=${text%x}
	for ((e = M_FIRST[i]; e < M_FIRST[i] + M_COUNT[i]; e++)); do
		find=${E_FIND[e]}
		[[ $text == *"$find"* ]] ||
			die "mutant ${M_ID[i]}: search string $((e - M_FIRST[i] + 1)) not found in ${M_FILE[i]}: update $TABLE"
		after=${text#*"$find"}
		[[ $after != *"$find"* ]] ||
			die "mutant ${M_ID[i]}: search string $((e - M_FIRST[i] + 1)) occurs more than once in ${M_FILE[i]}: make it longer in $TABLE"
		text=${text%%"$find"*}${E_REPL[e]}$after
	done
	[ "$mode" != write ] || printf '%s' "$text" >"$f" ||
		die "mutant ${M_ID[i]}: cannot write $f"
}

# The whole run is one function, parsed before it starts, so that editing
# this file during a campaign cannot change the campaign.
main() {
	# ---- options

	mode=run only="" detectors=$ALL_DETECTORS out=build/mutation report=1 first=0 baseline=1
	while [ $# -gt 0 ]; do
		case $1 in
		--help | -h) usage; exit 0 ;;
		--check) mode=check ;;
		--list) mode=list ;;
		--mutants) [ $# -ge 2 ] || die "--mutants needs a list of ids, e.g. --mutants L01,B03"
			only=${2//,/ }; shift ;;
		--detectors) [ $# -ge 2 ] || die "--detectors needs a list, e.g. --detectors unit,sim"
			detectors=${2//,/ }; shift ;;
		--table) [ $# -ge 2 ] || die "--table needs a file"
			TABLE=$2; shift ;;
		--out) [ $# -ge 2 ] || die "--out needs a directory"
			out=$2; shift ;;
		--no-report) report=0 ;;
		--first-verdict) first=1 ;;
		--no-baseline) baseline=0 ;;
		*) die "unknown argument '$1': see scripts/mutate.sh --help" ;;
		esac
		shift
	done
	for d in $detectors; do
		[[ " $ALL_DETECTORS $FOLLOW_UP " == *" $d "* ]] ||
			die "unknown detector '$d': pick from ${ALL_DETECTORS// /,},${FOLLOW_UP// /,}"
	done
	[ -f "$TABLE" ] || die "no table $TABLE"
	parse_table

	if [ "$mode" = list ]; then
		for i in "${!M_ID[@]}"; do
			printf '%s  %-6s  %-26s %s\n' "${M_ID[i]}" "${M_CAT[i]}" "${M_FILE[i]}" "${M_WHAT[i]}"
		done
		exit 0
	fi
	if [ "$mode" = check ]; then
		declare -A per=()
		for i in "${!M_ID[@]}"; do
			apply_mutant "$i" "$ROOT"
			per[${M_CAT[i]}]=$((${per[${M_CAT[i]}]:-0} + 1))
		done
		[ ${#M_ID[@]} -ge $MIN_MUTANTS ] ||
			die "$TABLE holds ${#M_ID[@]} mutants; the campaign needs at least $MIN_MUTANTS"
		for c in lock budget data error; do
			[ "${per[$c]:-0}" -gt 0 ] || die "$TABLE has no mutant of category $c"
		done
		echo "mutate: ${#M_ID[@]} mutants (lock ${per[lock]}, budget ${per[budget]}, data ${per[data]}, error ${per[error]}) each apply exactly once to this tree"
		exit 0
	fi

	sel=()
	if [ -n "$only" ]; then
		for id in $only; do
			found=""
			for i in "${!M_ID[@]}"; do
				[ "${M_ID[i]}" = "$id" ] && found=$i
			done
			[ -n "$found" ] || die "unknown mutant '$id': see scripts/mutate.sh --list"
			sel+=("$found")
		done
	else
		sel=("${!M_ID[@]}")
	fi
	# Every selected mutant must apply before anything runs.
	for i in "${sel[@]}"; do apply_mutant "$i" "$ROOT"; done

	# ---- the campaign

	declare -A LIMIT=([unit]=150 [sim]=150 [gate]=150 [tsan]=90 [storm]=45
		[tsanfault]=150 [stormhard]=90 [simx]=150)
	export TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1 suppressions=$ROOT/ci/tsan.supp"

	work=$(mktemp -d "${TMPDIR:-/tmp}/resid-mutate.XXXXXX") || die "cannot make a work directory"
	det_pid=""
	# shellcheck disable=SC2317 # called by the trap below
	cleanup() {
		[ -z "$det_pid" ] || kill -TERM -- "-$det_pid" 2>/dev/null
		rm -rf "$work"
	}
	trap cleanup EXIT
	trap 'echo "mutate: interrupted; results so far are in $out/results.tsv" >&2; exit 130' INT TERM

	mkdir -p "$out/logs" || die "cannot make $out/logs"
	tsv=$out/results.tsv
	git describe --always --dirty --abbrev=12 >"$out/revision" 2>/dev/null ||
		echo unknown >"$out/revision"
	[ -f "$tsv" ] || printf 'id\tcategory\tfile\tdetector\toutcome\texit\tseconds\twhat\n' >"$tsv"

	tar -C "$ROOT" --exclude=./.git --exclude=./build -cf - . | tar -C "$work" -xf - ||
		die "cannot copy the tree to $work"
	# The tree's objects, if any, spare the first build (make judges by mtime).
	if [ -d build/h ]; then
		{ mkdir -p "$work/build" && cp -a build/h "$work/build/"; } || die "cannot copy build/h"
		[ ! -d build/tsan ] || [[ " $detectors " != *" tsan"* ]] ||
			cp -a build/tsan "$work/build/" || die "cannot copy build/tsan"
		[ ! -d build/simx ] || [[ " $detectors " != *" simx "* ]] ||
			cp -a build/simx "$work/build/" || die "cannot copy build/simx"
	fi

	build() {
		local targets=(build/residctl build/unit-tests)
		[[ " $detectors " != *" tsan"* ]] || targets+=(build/tsan/residctl)
		[[ " $detectors " != *" simx "* ]] || targets+=(build/simx/residctl)
		(cd "$work" && make -s -j2 "${targets[@]}") >"$1" 2>&1
	}

	# Runs detector $1 in the work tree, its output to $2; sets OUTCOME
	# (survived, killed, timeout) and RC.
	detect() {
		local d=$1 log=$2 cmd
		case $d in
		unit) cmd="build/unit-tests" ;;
		sim) cmd="bash scripts/mutation-sim.sh build/residctl" ;;
		gate) cmd="build/residctl check T-1 T-3 T-4 T-5 T-6 T-7 H-1" ;;
		tsan) cmd="build/tsan/residctl check T-3 T-6" ;;
		storm) cmd="build/residctl storm --duration 6 --round 2 --seed 1 --fault all=0.02" ;;
		tsanfault) cmd="build/tsan/residctl check T-3 T-7 --fault all=0.05" ;;
		stormhard) cmd="build/residctl storm --duration 20 --round 2 --seed 1 --fault all=0.1" ;;
		simx) cmd="bash scripts/mutation-sim.sh build/simx/residctl" ;;
		esac
		(cd "$work" && exec timeout -k 10 "${LIMIT[$d]}" bash -c "$cmd") >"$log" 2>&1 </dev/null &
		det_pid=$!
		wait "$det_pid"
		RC=$?
		det_pid=""
		if [ $RC -eq 0 ]; then
			OUTCOME=survived
		elif [ $RC -eq 124 ] || [ $RC -eq 137 ]; then
			OUTCOME=timeout
		else
			OUTCOME=killed
		fi
	}

	# One result line: mutant $1, detector $2, outcome $3, exit $4, seconds $5.
	row() {
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "${M_ID[$1]}" "${M_CAT[$1]}" \
			"${M_FILE[$1]}" "$2" "$3" "$4" "$5" "${M_WHAT[$1]}" >>"$tsv"
	}

	t_start=$SECONDS
	echo "mutate: work tree $work; detectors: $detectors" >&2
	echo "mutate: building and checking the unmutated tree" >&2
	build "$out/logs/none-build.log" || die "the unmutated tree does not build: see $out/logs/none-build.log"
	for d in $detectors; do
		[ $baseline -eq 1 ] || break
		t0=$SECONDS
		detect "$d" "$out/logs/none-$d.log"
		echo "mutate: unmutated: $d $OUTCOME ($((SECONDS - t0)) s)" >&2
		[ "$OUTCOME" = survived ] || {
			echo "mutate: the unmutated tree fails detector $d (exit $RC), see $out/logs/none-$d.log: kill rates would mean nothing" >&2
			exit 1
		}
	done
	t_base=$((SECONDS - t_start))

	prev=""
	k=0
	for i in "${sel[@]}"; do
		k=$((k + 1))
		t_m=$SECONDS
		id=${M_ID[i]}
		if [ -n "$prev" ]; then
			cp "$ROOT/${M_FILE[prev]}" "$work/${M_FILE[prev]}" || die "cannot restore ${M_FILE[prev]}"
		fi
		apply_mutant "$i" "$work" write
		prev=$i
		if ! build "$out/logs/$id-build.log"; then
			for d in $detectors; do row "$i" "$d" nocompile - 0; done
			echo "mutate: [$k/${#sel[@]}] $id did not compile (see $out/logs/$id-build.log)" >&2
			continue
		fi
		summary=""
		for d in $detectors; do
			t0=$SECONDS
			detect "$d" "$out/logs/$id-$d.log"
			row "$i" "$d" "$OUTCOME" "$RC" $((SECONDS - t0))
			summary+=" $d:$OUTCOME"
			echo "mutate: [$k/${#sel[@]}] $id $d $OUTCOME ($((SECONDS - t0)) s)" >&2
			[ $first -eq 0 ] || [ "$OUTCOME" != killed ] || break
		done
		elapsed=$((SECONDS - t_start - t_base))
		left=$((elapsed * (${#sel[@]} - k) / k))
		echo "mutate: [$k/${#sel[@]}] $id ${M_CAT[i]}:$summary ($((SECONDS - t_m)) s; $((elapsed / 60)) min done, about $((left / 60)) min left)" >&2
	done

	echo "mutate: ${#sel[@]} mutants in $(((SECONDS - t_start) / 60)) min; results in $tsv" >&2
	[ $report -eq 0 ] || bash scripts/mutation-report.sh "$tsv"
}

main "$@"
exit $?
