/* residctl hazards: what this kernel does when applications and the
 * kernel itself lay hands on A and B (hazards.def), one row each. */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

#include "base/cli.h"
#include "campaign/report.h"
#include "hazards/hazards.h"

static const char about[] =
	"  Runs small programs of userfaultfd and a memfd mapped twice, as the\n"
	"  pager maps it (A read-only and registered, B read-write), no pager\n"
	"  code, each in a child under a time limit, and prints per hazard what\n"
	"  the kernel did: the errno of the call, A's entries dropped, pages of\n"
	"  A mapped with zeros without a fault, a collapse refused, the next\n"
	"  fault; and whether that is what 6.18 did. The collapse rows need THP,\n"
	"  those on a huge=always tmpfs (mounted in a mount namespace of their\n"
	"  own) and compaction also root; elsewhere they are n/a. No setting of\n"
	"  the machine is changed. HAZARD... runs only those, each named once\n"
	"  (--list).\n"
	"  Exit 0 when every row was measured (hung and n/a are results), 1\n"
	"  when a row's setup failed.\n";

static void list(void)
{
	for (int i = 0; i < nhazards; i++)
		printf("%-27s %s\n", hazards[i].name, hazards[i].what);
}

/* One run's rows, fresh per call: a second call in one process starts
 * from nothing of the first. on[i] for hazards[i]. */
struct hz_rows {
	int on[HZ_COUNT];
	struct hz_out out[HZ_COUNT];
	char outcome[HZ_COUNT][512], verdicts[HZ_COUNT][512];
};

/* The hazards named on the command line; one named twice is refused (it
 * would run once), so no call names more than HZ_COUNT. */
static int hazard_opt(void *dst, const char *where, const char *v, char *err,
		      size_t n)
{
	int *on = dst, i = hz_find(v);

	(void)where;
	if (i < 0) {
		snprintf(err, n,
			 "unknown hazard '%s'; see residctl hazards "
			 "--list",
			 v);
		return -1;
	}
	if (on[i]) {
		snprintf(err, n,
			 "hazard '%s' named twice; name each of the "
			 "%d hazards at most once",
			 v, HZ_COUNT);
		return -1;
	}
	on[i] = 1;
	return 0;
}

static void verdict(const struct hazard *h, const struct hz_out *o,
		    const char *outcome, char *buf, size_t n)
{
	if (o->na)
		snprintf(buf, n, "n/a: %s", o->note);
	else if (o->error)
		snprintf(buf, n, "error: %s", o->note);
	else if (o->hung)
		snprintf(buf, n, "hung: %s", o->note);
	else if (!strcmp(outcome, h->on618))
		snprintf(buf, n, "as measured on 6.18");
	else
		snprintf(buf, n, "differs: 6.18 gave \"%s\"", h->on618);
}

static void num(FILE *f, const char *name, int v)
{
	fprintf(f, ", \"%s\": ", name);
	if (v < 0)
		fputs("null", f);
	else
		fprintf(f, "%d", v);
}

static int write_json(const char *path, const char *release, const int *on,
		      const struct hz_out *out, char outcome[][512],
		      char verdicts[][512])
{
	char tmp[4200];
	FILE *f = open_tmp(path, tmp, sizeof(tmp));
	int first = 1;

	if (!f)
		return -1;
	fputs("{\n  \"kernel\": ", f);
	json_str(f, release);
	fputs(",\n  \"hazards\": [", f);
	for (int i = 0; i < nhazards; i++) {
		const struct hz_out *o = &out[i];

		if (!on[i])
			continue;
		fprintf(f, "%s\n    {\"hazard\": ", first ? "" : ",");
		first = 0;
		json_str(f, hazards[i].name);
		fputs(", \"what\": ", f);
		json_str(f, hazards[i].what);
		fputs(", \"backing\": ", f);
		json_str(f, o->backing);
		fputs(", \"errno\": ", f);
		if (o->err < 0)
			fputs("null", f);
		else
			json_str(f, hz_errname(o->err));
		num(f, "dropped", o->dropped);
		num(f, "of", o->of);
		num(f, "zeros", o->zeros);
		fprintf(f, ", \"refused\": %s",
			o->refused < 0 ? "null" :
			o->refused     ? "true" :
					 "false");
		fputs(", \"fault\": ", f);
		json_str(f, o->fault);
		fputs(", \"key\": ", f);
		json_str(f, o->key);
		fputs(", \"note\": ", f);
		json_str(f, o->note);
		fputs(", \"outcome\": ", f);
		json_str(f, outcome[i]);
		fputs(", \"on_6_18\": ", f);
		json_str(f, hazards[i].on618);
		fputs(", \"verdict\": ", f);
		json_str(f, verdicts[i]);
		fputc('}', f);
	}
	fputs("\n  ]\n}\n", f);
	return close_tmp(f, tmp, path);
}

/* Runs the hazards r->on names (none: every one); json NULL for none. */
static int run_rows(struct hz_rows *r, const char *json)
{
	struct utsname u;
	int errors = 0, any = 0;

	for (int i = 0; i < nhazards; i++)
		any |= r->on[i];
	for (int i = 0; i < nhazards; i++)
		r->on[i] |= !any; /* none named: every one */
	if (uname(&u) < 0) {
		perror("residctl hazards: uname");
		return 1;
	}
	printf("residctl hazards: the kernel's hands on A and B, kernel %s\n",
	       u.release);
	printf("%-27s %-6s %-60s %s\n", "hazard", "on", "outcome", "verdict");
	for (int i = 0; i < nhazards; i++) {
		struct hz_out *o = &r->out[i];

		if (!r->on[i])
			continue;
		hz_run(&hazards[i], o);
		hz_outcome(o, r->outcome[i], sizeof(r->outcome[i]));
		verdict(&hazards[i], o, r->outcome[i], r->verdicts[i],
			sizeof(r->verdicts[i]));
		errors += o->error;
		printf("%-27s %-6s %-60s %s\n", hazards[i].name,
		       o->backing[0] ? o->backing : "-",
		       r->outcome[i][0] ? r->outcome[i] : "-", r->verdicts[i]);
		if (o->note[0] && !o->na && !o->error && !o->hung)
			printf("%-27s %-6s %s\n", "", "", o->note);
		fflush(stdout);
	}
	if (json && write_json(json, u.release, r->on, r->out, r->outcome,
			       r->verdicts) < 0)
		return 1;
	return errors ? 1 : 0;
}

int cmd_hazards(int argc, char **argv)
{
	struct hz_rows r = { 0 };
	const char *json = NULL;
	struct cli_opt opts[] = {
		{ "list", CLI_ACTION, NULL, .act = list,
		  .help = "list the hazards" },
		CLI_JSON(&json, "write every row, its fields and verdict"),
		{ 0 },
	};
	const struct cli_spec spec = {
		.cmd = "hazards",
		.synopsis = "[HAZARD...]",
		.about = about,
		.opts = opts,
		.operands = INT_MAX,
		.operand = { .type = CLI_CALL,
			     .dst = r.on,
			     .parse = hazard_opt },
	};
	int rc = cli_parse(&spec, argc, argv);

	return rc == CLI_RUN ? run_rows(&r, json) : rc;
}
