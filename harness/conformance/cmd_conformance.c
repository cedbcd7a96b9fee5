/* residctl conformance: the conformance table on this kernel and on the
 * simulated one, compared field by field. */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cli.h"
#include "campaign/report.h"
#include "conformance/conformance.h"
#include "workload/huge_leg.h"

static const char about[] =
	"  Runs each case of the conformance table (all when none is named): a\n"
	"  sequence of seam calls (fill, UFFDIO_CONTINUE, UFFDIO_WAKE, punch,\n"
	"  read(uffd), reads through mapping A, closing the uffd) on this kernel,\n"
	"  in a memory cgroup of its own that is removed afterwards, and on the\n"
	"  simulated kernel; after each step it compares the return value and\n"
	"  errno, CONTINUE's mapped, the uffd messages, each page's state (hole,\n"
	"  page cache, mapped in A), st_blocks, memory.stat shmem (within the\n"
	"  kernel's flush lag) and what each reader read; at the end of a case,\n"
	"  with the uffd closed, every page read through A. Prints one row per\n"
	"  case and, where the sides differ, both values of each step that\n"
	"  differs (--verbose: of every step). Needs root and userfaultfd.\n"
	"  Exit 0 when every case agrees, 1 when one differs or could not run,\n"
	"  2 on bad input or when the pager cannot run here.\n";

static void errname(int64_t v, char *buf, size_t n)
{
	const char *e = v < 0 ? strerrorname_np((int)-v) : NULL;

	if (e)
		snprintf(buf, n, "-%s", e);
	else
		snprintf(buf, n, "%" PRId64, v);
}

static void obs_line(FILE *f, const char *side, const struct conf_obs *o)
{
	char rc[32], mapped[32];

	errname(o->rc, rc, sizeof(rc));
	errname(o->mapped, mapped, sizeof(mapped));
	fprintf(f,
		"          %-5s rc %s, mapped %s, messages [%s], pages %s, "
		"st_blocks %" PRIu64 ", large %" PRIu64 ", shmem %+" PRId64
		", readers [%s]%s%s\n",
		side, rc, mapped, o->msgs, o->pages, o->st_blocks, o->large,
		o->shmem, o->readers, o->sweep[0] ? ", reads through A " : "",
		o->sweep);
}

static void obs_json(FILE *f, const struct conf_obs *o)
{
	fprintf(f,
		"{\"rc\": %" PRId64 ", \"mapped\": %" PRId64 ", \"messages\": ",
		o->rc, o->mapped);
	json_str(f, o->msgs);
	fputs(", \"pages\": ", f);
	json_str(f, o->pages);
	fprintf(f,
		", \"st_blocks\": %" PRIu64 ", \"large\": %" PRIu64
		", \"shmem\": %" PRId64 ", \"readers\": ",
		o->st_blocks, o->large, o->shmem);
	json_str(f, o->readers);
	fputs(", \"reads_through_a\": ", f);
	json_str(f, o->sweep);
	fputc('}', f);
}

/* The step an observation follows; past the table's steps, the end. */
static const struct conf_step *step_of(const struct conf_case *c, int i)
{
	static const struct conf_step end = { C_END, 0, 0 };

	return i < CONF_MAX_STEPS && c->steps[i].op != C_END ? &c->steps[i] :
							       &end;
}

/* Prints the case's row (and steps); returns 1 when the sides agree. */
static int judge(const struct conf_case *c, const struct conf_run *lx,
		 const struct conf_run *sim, uint64_t tol, int verbose)
{
	char diff[128], name[64];
	int agree = !lx->error[0] && !sim->error[0] && lx->nobs == sim->nobs;

	for (int i = 0; agree && i < lx->nobs; i++)
		agree = !conf_diff(&lx->obs[i], &sim->obs[i], tol, diff,
				   sizeof(diff));
	printf("  %-5s %-24s %s\n", agree ? "agree" : "DIFF", c->name, c->what);
	if (lx->error[0])
		printf("        linux could not run it: %s\n", lx->error);
	if (sim->error[0])
		printf("        sim could not run it: %s\n", sim->error);
	for (int i = 0; i < lx->nobs && i < sim->nobs; i++) {
		if (!conf_diff(&lx->obs[i], &sim->obs[i], tol, diff,
			       sizeof(diff)) &&
		    !verbose)
			continue;
		conf_step_name(step_of(c, i), name, sizeof(name));
		printf("        step %d %s%s%s\n", i + 1, name,
		       diff[0] ? ": differs in " : "", diff);
		obs_line(stdout, "linux", &lx->obs[i]);
		obs_line(stdout, "sim", &sim->obs[i]);
	}
	return agree;
}

static int write_json(const char *path, const struct conf_case *const *cs,
		      int n, const struct conf_run *lx,
		      const struct conf_run *sim, uint64_t tol)
{
	char tmp[4200], diff[128], name[64];
	FILE *f = open_tmp(path, tmp, sizeof(tmp));

	if (!f)
		return -1;
	fprintf(f, "{\n  \"shmem_tolerance\": %" PRIu64 ",\n  \"cases\": [\n",
		tol);
	for (int i = 0; i < n; i++) {
		fputs("    {\"name\": ", f);
		json_str(f, cs[i]->name);
		fputs(", \"linux_error\": ", f);
		json_str(f, lx[i].error);
		fputs(", \"sim_error\": ", f);
		json_str(f, sim[i].error);
		fputs(", \"steps\": [", f);
		for (int s = 0; s < lx[i].nobs && s < sim[i].nobs; s++) {
			conf_diff(&lx[i].obs[s], &sim[i].obs[s], tol, diff,
				  sizeof(diff));
			conf_step_name(step_of(cs[i], s), name, sizeof(name));
			fprintf(f, "%s\n      {\"step\": ", s ? "," : "");
			json_str(f, name);
			fputs(", \"differs\": ", f);
			json_str(f, diff);
			fputs(", \"linux\": ", f);
			obs_json(f, &lx[i].obs[s]);
			fputs(", \"sim\": ", f);
			obs_json(f, &sim[i].obs[s]);
			fputc('}', f);
		}
		fprintf(f, "]}%s\n", i + 1 < n ? "," : "");
	}
	fputs("  ]\n}\n", f);
	return close_tmp(f, tmp, path);
}

static void list(void)
{
	for (int c = 0; c < conf_ncases; c++)
		printf("%-24s %s\n", conf_cases[c].name, conf_cases[c].what);
}

/* One call's cases and what each side saw, fresh per call: a second call
 * in one process starts from nothing of the first. */
struct conf_call {
	const struct conf_case *c[CONF_MAX_CASES];
	int n; /* counted past CONF_MAX_CASES, for the refusal */
	struct conf_run lx[CONF_MAX_CASES], sim[CONF_MAX_CASES];
};

static int case_opt(void *dst, const char *where, const char *v, char *err,
		    size_t n)
{
	struct conf_call *k = dst;
	const struct conf_case *c = conf_case_find(v);

	(void)where;
	if (!c) {
		snprintf(err, n,
			 "unknown case '%s'; see residctl conformance "
			 "--list",
			 v);
		return -1;
	}
	if (k->n < CONF_MAX_CASES)
		k->c[k->n] = c;
	k->n++;
	return 0;
}

/* Runs the cases k names (none: every one, the huge ones where a huge
 * tmpfs can be had); json NULL for none. */
static int run_cases(struct conf_call *k, const char *json, int verbose)
{
	const struct conf_case **chosen = k->c;
	int n = k->n, agree = 0, named = n > 0;
	uint64_t tol = 0;
	char err[512];

	if (n > CONF_MAX_CASES) {
		fprintf(stderr,
			"residctl conformance: %d cases named, more "
			"than the %d one call runs; name fewer\n",
			n, CONF_MAX_CASES);
		return 2;
	}
	err[0] = '\0';
	if (!named && !huge_leg_available(err, sizeof(err)))
		printf("residctl conformance: the huge cases are n/a here: %s\n",
		       err);
	else
		err[0] = '\0';
	for (int c = 0; !named && c < conf_ncases; c++)
		if (!conf_cases[c].huge || !err[0])
			chosen[n++] = &conf_cases[c];
	if (conf_run_linux(chosen, n, k->lx, &tol, err, sizeof(err)) < 0) {
		fprintf(stderr, "residctl conformance: %s\n", err);
		return 2;
	}
	if (conf_run_sim(chosen, n, k->sim, err, sizeof(err)) < 0) {
		fprintf(stderr, "residctl conformance: %s\n", err);
		return 2;
	}
	printf("residctl conformance: this kernel against the simulated one, "
	       "%d cases (memory.stat tolerance %" PRIu64 " bytes)\n",
	       n, tol);
	for (int i = 0; i < n; i++)
		agree += judge(chosen[i], &k->lx[i], &k->sim[i], tol, verbose);
	printf("total: %d agree, %d differ\n", agree, n - agree);
	if (json && write_json(json, chosen, n, k->lx, k->sim, tol) < 0)
		return 2;
	return agree == n ? 0 : 1;
}

int cmd_conformance(int argc, char **argv)
{
	/* On the heap: each case's observations, both sides, are large. */
	struct conf_call *k = calloc(1, sizeof(*k));
	const char *json = NULL;
	int verbose = 0;
	struct cli_opt opts[] = {
		{ "list", CLI_ACTION, NULL, .act = list,
		  .help = "list the cases" },
		CLI_JSON(&json, "write every case's steps, both sides"),
		{ "verbose", CLI_FLAG, &verbose,
		  .help = "print every step, not only those that differ" },
		{ 0 },
	};
	const struct cli_spec spec = {
		.cmd = "conformance",
		.synopsis = "[CASE...]",
		.about = about,
		.opts = opts,
		.operands = INT_MAX,
		.operand = { .type = CLI_CALL, .dst = k, .parse = case_opt },
	};
	int rc;

	if (!k) {
		fprintf(stderr, "residctl conformance: out of memory\n");
		return 2;
	}
	rc = cli_parse(&spec, argc, argv);
	if (rc == CLI_RUN)
		rc = run_cases(k, json, verbose);
	free(k);
	return rc;
}
