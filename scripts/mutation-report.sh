#!/usr/bin/env bash
# Writes results/mutation.md and results/mutation.json from the results of
# scripts/mutate.sh (OUT/results.tsv; the last line for a mutant and a
# detector wins, across several files too, so a rerun of some mutants given
# after the full run replaces their results) and the answers to its
# survivors in scripts/mutation-answers.txt. Exit 1 when a survivor has no
# answer.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = --help ] || [ "${1:-}" = -h ]; then
	echo "usage: scripts/mutation-report.sh [RESULTS_TSV..]   (default build/mutation/results.tsv)"
	echo "  Several files: the later ones are reruns; their results replace the earlier ones."
	exit 0
fi
[ $# -gt 0 ] || set -- build/mutation/results.tsv
answers=scripts/mutation-answers.txt
revs="" origins=""
for tsv in "$@"; do
	[ -f "$tsv" ] || { echo "mutation-report: no results $tsv: run scripts/mutate.sh first" >&2; exit 2; }
	revs+="$(cat "$(dirname "$tsv")/revision" 2>/dev/null || echo unknown)"$'\n'
	origins+="$(cat "$(dirname "$tsv")/origin" 2>/dev/null || true)"$'\n'
done
# Reruns on several trees: say where the pager and the table are the same.
same="" prev=""
while read -r rev; do
	if [ -n "$prev" ] && git diff --quiet "$prev" "$rev" -- pager scripts/mutants.txt 2>/dev/null; then
		same+="$prev"
	fi
	same+=$'\n'
	prev=$rev
done <<<"$(tail -n +2 <<<"$revs")"
[ -f "$answers" ] || { echo "mutation-report: no $answers" >&2; exit 2; }
mkdir -p results
md=results/mutation.md.tmp json=results/mutation.json.tmp
trap 'rm -f "$md" "$json"' EXIT

rc=0
awk -F'\t' -v md="$md" -v json="$json" -v revs="$revs" -v origins="$origins" -v same="$same" '
function jstr(s) {
	gsub(/\\/, "\\\\", s); gsub(/"/, "\\\"", s); gsub(/\t/, " ", s)
	return "\"" s "\""
}
function pct(a, b) { return b ? sprintf("%.0f%%", 100 * a / b) : "-" }
function kill(o) { return o == "killed" || o == "timeout" }
# The answers: "ID KIND TEXT", continued on lines that start with blanks.
FNR == NR {
	if ($0 ~ /^#/ || $0 ~ /^[ \t]*$/) next
	if ($0 ~ /^[ \t]/) { sub(/^[ \t]+/, ""); atext[last] = atext[last] " " $0; next }
	split($0, w, " ")
	last = w[1]; akind[last] = w[2]
	t = $0; sub(/^[^ ]+ [^ ]+ */, "", t); atext[last] = t
	next
}
FNR == 1 { nf++; fname[nf] = FILENAME; next }
{
	id = $1
	if (!(id in cat)) { order[++n] = id }
	cat[id] = $2; file[id] = $3; what[id] = $8
	if (!($4 in seen)) { dets[++nd] = $4; seen[$4] = 1 }
	out[id, $4] = $5; secs[id, $4] = $7; src[id, $4] = nf
	if ($5 != "nocompile") built[id] = nf
}
END {
	split(revs, rev, "\n"); split(origins, origin, "\n"); split(same, rsame, "\n")
	# A mutant that did not compile and was fixed in the table: a later
	# file that built it makes the earlier "nocompile" rows void.
	for (k in out) {
		split(k, kk, SUBSEP)
		if (out[k] == "nocompile" && (kk[1] in built) && src[k] < built[kk[1]])
			delete out[k]
	}
	for (f = 1; f <= nf; f++)
		if (origin[f] != "") fname[f] = fname[f] " (" origin[f] ")"
	from = "tree " rev[1] ", from " fname[1]
	for (f = 2; f <= nf; f++)
		from = from (f == nf ? " and " : ", ") "tree " rev[f] ", from " fname[f]
	ncomp = 0; nkill = 0; nequiv = 0; nnocomp = 0; unanswered = 0; nfollow = 0
	followup["tsanfault"] = 1; followup["stormhard"] = 1; followup["simx"] = 1
	for (i = 1; i <= n; i++) {
		id = order[i]; v = "survived"; byverdict = 0
		for (j = 1; j <= nd; j++) {
			o = out[id, dets[j]]
			if (o == "nocompile") v = "nocompile"
			else if (kill(o) && v != "nocompile") v = "killed"
			if (o == "killed") byverdict = 1
		}
		verdict[id] = v
		# Killed by a failing test or oracle, not only by a time-out.
		if (v == "killed" && byverdict) nverdict++
		else if (v == "killed") timeoutonly = timeoutonly " " id
		mainkill = 0
		for (j = 1; j <= nd; j++)
			if (!(dets[j] in followup) && kill(out[id, dets[j]])) mainkill = 1
		if (v == "nocompile") { nnocomp++; continue }
		ncomp++; catn[cat[id]]++
		if (v == "killed") { nkill++; catk[cat[id]]++; if (!mainkill) nfollow++ }
		for (j = 1; j <= nd; j++) {
			o = out[id, dets[j]]
			if (o != "") dran[dets[j]]++
			if (kill(o)) dk[dets[j]]++
			if (o == "timeout") dt[dets[j]]++
		}
		if (v == "survived") {
			if (!(id in akind)) unanswered++
			else if (akind[id] == "equivalent") nequiv++
		}
	}

	print "# Mutation campaign" > md
	print "" > md
	print "Produced by `scripts/mutate.sh` (the mutants: `scripts/mutants.txt`) and " \
	      "`scripts/mutation-report.sh` (answers to survivors: " \
	      "`scripts/mutation-answers.txt`), " from \
	      (nf > 1 ? "; a later file is a rerun, and its result for a mutant " \
	       "and a detector replaces the earlier one" : "") "." > md
	print "Each mutant is a fault of our own making in `pager/` (not a bug switch " \
	      "of design.md §6), applied to a copy of the tree and judged by every " \
	      "detector; a detector that fails or exceeds its time limit kills it " \
	      "(\"timeout\"). `--help` of the script lists the detectors and limits." > md
	print "" > md
	printf "**Overall: %d of %d compiled mutants killed (%s)**; %d of the survivors " \
	       "are argued equivalent, so %d of %d non-equivalent mutants are killed (%s). " \
	       "Did not compile: %d.\n\n", nkill, ncomp, pct(nkill, ncomp), nequiv, nkill,
	       ncomp - nequiv, pct(nkill, ncomp - nequiv), nnocomp > md
	printf "**Killed by a verdict** (a failing test or oracle, not a time-out of the " \
	       "runner): **%d of %d non-equivalent mutants (%s)**; killed only by a time-out:%s.\n\n",
	       nverdict, ncomp - nequiv, pct(nverdict, ncomp - nequiv),
	       (timeoutonly == "" ? " none" : timeoutonly) > md
	printf "The five campaign detectors (unit, sim, gate, tsan, storm) kill %d (%s); " \
	       "the follow-up detectors tsanfault, stormhard and simx, run on survivors only, " \
	       "%d more. Unit results of mutants answered with a `check` are the rerun " \
	       "after that check was added: the unit tests grew during the campaign.\n\n",
	       nkill - nfollow, pct(nkill - nfollow, ncomp), nfollow > md
	print "| detector | mutants run | killed | of which timeout | survived | kill rate |" > md
	print "|---|---:|---:|---:|---:|---:|" > md
	for (j = 1; j <= nd; j++) {
		d = dets[j]
		printf "| %s | %d | %d | %d | %d | %s |\n", d, dran[d], dk[d], dt[d], dran[d] - dk[d], pct(dk[d], dran[d]) > md
	}
	printf "| **any** | %d | %d | | %d | %s |\n\n", ncomp, nkill, ncomp - nkill, pct(nkill, ncomp) > md
	print "| category | mutants | killed | kill rate |" > md
	print "|---|---:|---:|---:|" > md
	split("lock budget data error", cs, " ")
	split("locking and ordering|accounting and budget|data path|error handling", cn, "|")
	for (c = 1; c <= 4; c++)
		printf "| %s (%s) | %d | %d | %s |\n", cn[c], cs[c], catn[cs[c]], catk[cs[c]], pct(catk[cs[c]], catn[cs[c]]) > md
	print "" > md
	notrun = ""
	while ((getline line < "scripts/mutants.txt") > 0)
		if (line ~ /^mutant /) {
			split(line, w, " ")
			if (!(w[2] in cat)) notrun = notrun " " w[2]
		}
	if (notrun != "")
		printf "Mutants of the table with no result yet:%s.\n\n", notrun > md
	for (f = 2; f <= nf; f++) {
		list = ""
		for (i = 1; i <= n; i++) {
			ds = ""
			for (j = 1; j <= nd; j++)
				if (src[order[i], dets[j]] == f) ds = ds (ds == "" ? "" : ", ") dets[j]
			if (ds != "") list = list (list == "" ? "" : "; ") order[i] " (" ds ")"
		}
		printf "Rerun on tree %s (%s%s): %s. ", rev[f], fname[f],
		       (rsame[f - 1] != "" ? "; the pager and the mutants as on tree " rsame[f - 1] : ""), list > md
	}
	if (nf > 1)
		printf "Every other result is from tree %s, %s.\n\n", rev[1], fname[1] > md
	print "## Every mutant" > md
	print "" > md
	hdr = "| id | file | what it breaks |"; sep = "|---|---|---|"
	for (j = 1; j <= nd; j++) { hdr = hdr " " dets[j] " |"; sep = sep "---|" }
	print hdr " verdict |" > md
	print sep "---|" > md
	for (i = 1; i <= n; i++) {
		id = order[i]; line = "| " id " | `" file[id] "` | " what[id] " |"
		for (j = 1; j <= nd; j++) {
			o = out[id, dets[j]]
			line = line " " (o == "killed" ? "**killed**" : o == "timeout" ? "**timeout**" : o == "" ? "·" : o) " |"
		}
		print line " " verdict[id] " |" > md
	}
	print "" > md
	print "## Survivors and their answers" > md
	print "" > md
	print "An answer is `equivalent` (no run can tell the mutant from the pager), " \
	      "`check` (a check added here kills it: its rerun is in the table above) or " \
	      "`scenario` (the scenario or oracle that would kill it)." > md
	print "" > md
	for (i = 1; i <= n; i++) {
		id = order[i]
		if (verdict[id] != "survived" && !(id in akind)) continue
		printf "- **%s** (%s, %s): %s. ", id, cat[id], verdict[id], what[id] > md
		if (id in akind) printf "*%s*: %s\n", akind[id], atext[id] > md
		else printf "**UNANSWERED**\n" > md
	}

	reruns = ""
	for (f = 2; f <= nf; f++) reruns = reruns (f > 2 ? ", " : "") jstr(rev[f])
	printf "{\n  \"revision\": %s,\n  \"reruns\": [%s],\n  \"compiled\": %d,\n  \"killed\": %d,\n" \
	       "  \"kill_rate\": %.3f,\n  \"equivalent\": %d,\n  \"kill_rate_non_equivalent\": %.3f,\n" \
	       "  \"did_not_compile\": %d,\n  \"killed_by_follow_up_only\": %d,\n" \
	       "  \"killed_by_verdict\": %d,\n  \"verdict_rate_non_equivalent\": %.3f,\n  \"detectors\": {", jstr(rev[1]), reruns, ncomp, nkill,
	       (ncomp ? nkill / ncomp : 0), nequiv, (ncomp - nequiv ? nkill / (ncomp - nequiv) : 0),
	       nnocomp, nfollow, nverdict, (ncomp - nequiv ? nverdict / (ncomp - nequiv) : 0) > json
	for (j = 1; j <= nd; j++)
		printf "%s\n    %s: {\"run\": %d, \"killed\": %d, \"timeout\": %d, \"kill_rate\": %.3f}",
		       (j > 1 ? "," : ""), jstr(dets[j]), dran[dets[j]], dk[dets[j]], dt[dets[j]],
		       (dran[dets[j]] ? dk[dets[j]] / dran[dets[j]] : 0) > json
	printf "\n  },\n  \"mutants\": [" > json
	for (i = 1; i <= n; i++) {
		id = order[i]
		printf "%s\n    {\"id\": %s, \"category\": %s, \"file\": %s, \"what\": %s, \"verdict\": %s, \"detectors\": {",
		       (i > 1 ? "," : ""), jstr(id), jstr(cat[id]), jstr(file[id]), jstr(what[id]), jstr(verdict[id]) > json
		sepr = ""
		for (j = 1; j <= nd; j++) {
			if (out[id, dets[j]] == "") continue
			printf "%s%s: {\"outcome\": %s, \"seconds\": %s, \"revision\": %s}", sepr,
			       jstr(dets[j]), jstr(out[id, dets[j]]), secs[id, dets[j]] + 0,
			       jstr(rev[src[id, dets[j]]]) > json
			sepr = ", "
		}
		printf "}" > json
		if (id in akind)
			printf ", \"answer\": {\"kind\": %s, \"text\": %s}", jstr(akind[id]), jstr(atext[id]) > json
		printf "}" > json
	}
	print "\n  ]\n}" > json
	if (unanswered) {
		printf "mutation-report: %d survivors have no answer in scripts/mutation-answers.txt\n", unanswered > "/dev/stderr"
		exit 1
	}
}' "$answers" "$@" || rc=$?
mv "$md" results/mutation.md
mv "$json" results/mutation.json
echo "mutation-report: wrote results/mutation.md and results/mutation.json"
exit $rc
