#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/cli.h"
#include "resid.h"

#define MAX_OPTS 64
#define OPT_BASE 256 /* getopt's val of the table's entry 0 */

int cli_bytes(const char *s, uint64_t *out)
{
	unsigned long long v;
	unsigned shift = 0;
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -1;
	switch (*end) {
	case 'K':
	case 'k':
		shift = 10;
		end++;
		break;
	case 'M':
	case 'm':
		shift = 20;
		end++;
		break;
	case 'G':
	case 'g':
		shift = 30;
		end++;
		break;
	}
	if (*end || v > (UINT64_MAX >> shift))
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

int cli_u64(const char *s, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

/* One walk over the arguments by getopt_long. */
struct walk {
	const struct cli_spec *s;
	int argc;
	char **argv;
	const struct option *lo;
	const char *arg; /* the value or operand just returned */
	int status;      /* with EXIT: the exit code */
	int rest, seen;
};

enum { END = -1, EXIT = -2, OPERAND = 1 };

/* Why getopt_long refused the long option `bad`, in one line. */
static void bad_long(const struct walk *w, const char *bad)
{
	const char *cmd = w->s->cmd;
	size_t len = strcspn(bad + 2, "=");
	int matches = 0, exact = 0;

	for (const struct option *o = w->lo; o->name; o++)
		if (!strncmp(o->name, bad + 2, len)) {
			matches++;
			exact |= strlen(o->name) == len;
		}
	if (exact)
		fprintf(stderr,
			"residctl %s: --%.*s takes no value; see "
			"residctl %s --help\n",
			cmd, (int)len, bad + 2, cmd);
	else if (matches > 1)
		fprintf(stderr,
			"residctl %s: option '%s' is ambiguous; spell "
			"it out, see residctl %s --help\n",
			cmd, bad, cmd);
	else
		fprintf(stderr,
			"residctl %s: unknown option '%s'; see "
			"residctl %s --help\n",
			cmd, bad, cmd);
}

static int walk_exit(struct walk *w, int status)
{
	w->status = status;
	return EXIT;
}

/* The next option's val (arg holds its value), OPERAND, EXIT (--help; an
 * unknown or ambiguous option, a missing value, one operand too many) or
 * END. */
static int next(struct walk *w)
{
	const char *cmd = w->s->cmd, *bad;
	int v;

	if (w->rest) /* after "--": operands only */
		v = optind < w->argc ? OPERAND : END;
	else
		v = getopt_long(w->argc, w->argv, "-:h", w->lo, NULL);
	if (v == END && optind < w->argc) {
		w->rest = 1;
		v = OPERAND;
	}
	w->arg = v == OPERAND && w->rest ? w->argv[optind++] : optarg;
	if (v == 'h') {
		cli_usage(stdout, w->s);
		return walk_exit(w, fflush(stdout) != 0);
	}
	if (v == OPERAND && w->seen++ == w->s->operands) {
		fprintf(stderr,
			"residctl %s: unexpected '%s'; see residctl %s "
			"--help\n",
			cmd, w->arg, cmd);
		return walk_exit(w, 2);
	}
	if (v != '?' && v != ':')
		return v;
	bad = w->argv[optind - 1];
	if (v == ':')
		fprintf(stderr,
			"residctl %s: %s needs a value; see residctl %s "
			"--help\n",
			cmd, bad, cmd);
	else if (optopt && strncmp(bad, "--", 2))
		fprintf(stderr,
			"residctl %s: unknown option '-%c'; see "
			"residctl %s --help\n",
			cmd, optopt, cmd);
	else
		bad_long(w, bad);
	return walk_exit(w, 2);
}

/* 4096 as 4K, 16777216 as 16M: how a user writes bytes. */
static void bytes_name(uint64_t v, char *buf, size_t n)
{
	static const char unit[] = "KMG";
	int u = -1;

	while (u < 2 && v && v % 1024 == 0) {
		v /= 1024;
		u++;
	}
	snprintf(buf, n, "%llu%.*s", (unsigned long long)v, u >= 0,
		 u >= 0 ? &unit[u] : "");
}

/* What a number of o's range looks like, for an error line. */
static void range_fix(const struct cli_opt *o, char *buf, size_t n)
{
	char a[32], b[32];

	if (o->fix) {
		snprintf(buf, n, "%s", o->fix);
	} else if (o->type == CLI_BYTES) {
		bytes_name(o->align, a, sizeof(a));
		bytes_name(o->max, b, sizeof(b));
		snprintf(buf, n, "give %s%s%s%s",
			 o->align ? "a multiple of " : "bytes (K, M or G)",
			 o->align ? a : "", o->max ? " up to " : "",
			 o->max ? b : "");
	} else if (o->max) {
		snprintf(buf, n, "give %llu..%llu", (unsigned long long)o->min,
			 (unsigned long long)o->max);
	} else if (o->min) {
		snprintf(buf, n, "give a number >= %llu",
			 (unsigned long long)o->min);
	} else {
		snprintf(buf, n, "give a decimal number");
	}
}

/* The choices as "a, b or c" (sep ", ") or "a|b|c" (sep "|"). */
static void choices_line(const struct cli_opt *o, const char *sep, char *buf,
			 size_t n)
{
	size_t len = 0;

	buf[0] = '\0';
	for (int i = 0; o->choices[i] && len < n; i++)
		len += (size_t)snprintf(buf + len, n - len, "%s%s",
					i ? (o->choices[i + 1] || *sep == '|' ?
						     sep :
						     " or ") :
					    "",
					o->choices[i]);
}

/* Parses v, the value of o (or of the variable env), into o->dst; -1
 * after one line on stderr. */
static int set(const struct cli_spec *s, const struct cli_opt *o,
	       const char *env, const char *v)
{
	char err[1024], what[64];
	uint64_t x;

	snprintf(what, sizeof(what), o->what ? "%s" : "--%s",
		 o->what ? o->what : o->name);
	switch (o->type) {
	case CLI_FLAG:
	case CLI_UNFLAG:
		*(int *)o->dst = o->type == CLI_FLAG;
		return 0;
	case CLI_ACTION:
		return 0;
	case CLI_TEXT:
		*(const char **)o->dst = v;
		return 0;
	case CLI_CHOICE:
		for (int i = 0; o->choices[i]; i++)
			if (!strcmp(v, o->choices[i])) {
				*(int *)o->dst = i;
				return 0;
			}
		choices_line(o, ", ", err, sizeof(err));
		fprintf(stderr, "residctl %s: unknown %s '%s'%s%s; use %s\n",
			s->cmd, what, v, env ? " in " : "", env ? env : "",
			err);
		return -1;
	case CLI_CALL:
		if (o->parse(o->dst,
			     env     ? env :
			     o->name ? o->name :
				       "operand",
			     v, err, sizeof(err)) == 0)
			return 0;
		fprintf(stderr, "residctl %s: %s\n", s->cmd, err);
		return -1;
	case CLI_U64:
	case CLI_BYTES:
		if (!(o->type == CLI_U64 ? cli_u64(v, &x) : cli_bytes(v, &x)) &&
		    x >= o->min && (!o->max || x <= o->max) &&
		    (!o->align || x % o->align == 0)) {
			*(uint64_t *)o->dst = x;
			return 0;
		}
		range_fix(o, err, sizeof(err));
		fprintf(stderr, "residctl %s: bad %s '%s'%s%s; %s\n", s->cmd,
			what, v, env ? " in " : "", env ? env : "", err);
		return -1;
	}
	return -1;
}

int cli_parse(const struct cli_spec *s, int argc, char **argv)
{
	struct option lo[MAX_OPTS + 2] = { { "help", no_argument, NULL, 'h' } };
	const struct cli_opt *o;
	const char *v;
	int n = 1, opt;

	for (o = s->opts; o && o->name && n <= MAX_OPTS; o++)
		lo[n++] = (struct option){
			o->name,
			o->type == CLI_FLAG || o->type == CLI_UNFLAG ||
					o->type == CLI_ACTION ?
				no_argument :
				required_argument,
			NULL, OPT_BASE + (int)(o - s->opts)
		};
	/* Set but empty is how a user clears a variable. */
	for (o = s->opts; o && o->name; o++)
		if (o->env && (v = getenv(o->env)) && *v &&
		    set(s, o, o->env, v) < 0)
			return 2;
	optind = 0; /* glibc: start over, also for a second command */
	opterr = 0;
	struct walk w = { .s = s, .argc = argc, .argv = argv, .lo = lo };

	while ((opt = next(&w)) != END) {
		if (opt == EXIT)
			return w.status;
		o = opt == OPERAND ? &s->operand : &s->opts[opt - OPT_BASE];
		if (o->type == CLI_ACTION) {
			o->act();
			return fflush(stdout) != 0;
		}
		if (set(s, o, NULL, w.arg) < 0)
			return 2;
		if (o->seen)
			*o->seen = 1;
	}
	if (w.seen < s->required) {
		fprintf(stderr,
			"residctl %s: no %s given; usage: residctl %s "
			"%s [OPTIONS]\n",
			s->cmd, s->synopsis, s->cmd, s->synopsis);
		return 2;
	}
	return CLI_RUN;
}

/* text from column 26, folded at spaces before column 79. */
static void wrapped(FILE *f, const char *text)
{
	const int width = 79 - 26;

	while ((int)strlen(text) > width) {
		int cut = width;

		while (cut > 0 && text[cut] != ' ')
			cut--;
		if (!cut)
			break;
		fprintf(f, "%.*s\n%26s", cut, text, "");
		text += cut + 1;
	}
	fprintf(f, "%s\n", text);
}

void cli_usage(FILE *f, const struct cli_spec *s)
{
	char head[96], arg[64], text[512];

	fprintf(f, "usage: residctl %s%s%s [OPTIONS]\n%soptions:\n", s->cmd,
		s->synopsis ? " " : "", s->synopsis ? s->synopsis : "",
		s->about ? s->about : "");
	for (const struct cli_opt *o = s->opts; o && o->name; o++) {
		size_t len;

		if (o->type == CLI_CHOICE && !o->arg)
			choices_line(o, "|", arg, sizeof(arg));
		else
			snprintf(arg, sizeof(arg), "%s", o->arg ? o->arg : "");
		snprintf(head, sizeof(head), "--%s%s%s", o->name,
			 arg[0] ? " " : "", arg);
		fprintf(f, "  %-24s%s", head,
			strlen(head) > 23 ? "\n"
					    "                          " :
					    "");
		len = (size_t)snprintf(text, sizeof(text), "%s",
				       o->help ? o->help : "");
		if (o->type == CLI_U64 && (o->min || o->max) &&
		    len < sizeof(text))
			len += (size_t)snprintf(text + len, sizeof(text) - len,
						o->max ? " (%llu..%llu)" :
							 " (>= %llu)",
						(unsigned long long)o->min,
						(unsigned long long)o->max);
		if (o->env && len < sizeof(text))
			snprintf(text + len, sizeof(text) - len, "; %s too",
				 o->env);
		wrapped(f, text);
	}
	fprintf(f, "  %-24sthis text\n", "--help");
}

int cli_policy(void *dst, const char *where, const char *v, char *err, size_t n)
{
	(void)where;
	if (!resid_policy_parse(v, dst))
		return 0;
	snprintf(err, n, "bad policy '%s'; use lru, learned or declared", v);
	return -1;
}
