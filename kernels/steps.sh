# shellcheck shell=bash
# Sourced by kernels/matrix.sh: what a cell runs in the guest, in
# order, one "name<TAB>command" line each (the guest runs the command with sh
# from the cell's cgroup; a step passes when it exits 0, and a JSON file it
# writes to /out/<name>.json comes back to the host, as <name>.json in the
# cell's directory). To run one more command in every cell, add one printf
# line to cell_steps; --only-steps NAME,.. keeps only the named ones.

# cell_steps GATE_ARGS STORM_SECONDS [SMOKE]: make test's smoke cells leave
# the hazards out (scripts/record-hazards.sh records them per kernel).
cell_steps() {
	printf 'probe\tresidctl probe --json >/out/probe.json\n'
	[ "${3:-0}" = 1 ] || printf 'hazards\tresidctl hazards --json /out/hazards.json\n'
	printf 'cgroup-live\tunit-tests cgroup-live\n'
	printf 'conformance\tresidctl conformance --json /out/conformance.json\n'
	printf 'gate\tresidctl check --json /out/gate.json %s\n' "$1"
	[ "$2" = 0 ] || printf 'storm\tresidctl storm --duration %s --json /out/storm.json\n' "$2"
}

# A cell the kernel cannot have: probe must say no (exit 1) and the gate
# must refuse to start (exit 2), never run and fail. The probe's verdict
# line is printed too: the judge wants the right reason for the no.
na_steps() {
	printf 'probe\tresidctl probe --json >/out/probe.json; residctl probe\n'
	printf 'gate\tresidctl check T-5\n'
}
