/* The records the preload leaves (pager/preload/preload.c writes them:
 * "key value" lines, one file per pid) added up, the summary line and
 * --json of residctl run. */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "run/run_report.h"

static const char *const keys[] = {
	"regions",      "served",      "kernel",       "refused", "populate",
	"ignored",      "fetch_bytes", "faults",       "fetches", "refaults",
	"resident_max", "budget",      "prefetches",   "failed",  "fail_errno",
	"fail_chunk",   "sigbus_off",  "trace_errors", "open",    "final",
};
/* The last two are flags; fail_chunk and sigbus_off say "none" with the
 * all-ones value (RESID_NO_CHUNK, UINT64_MAX). */
enum { K_FAILED = 13, K_ERRNO, K_CHUNK, K_SIGBUS, K_TRACE, K_OPEN, K_FINAL };
#define NKEYS (sizeof(keys) / sizeof(keys[0]))

/* One record into v[] (in keys' order) and reason. -1 when malformed. */
static int record(const char *path, uint64_t v[NKEYS], char *reason, size_t rn)
{
	char line[512];
	unsigned seen = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *sp = strchr(line, ' '), *end;

		if (!sp)
			break;
		*sp++ = '\0';
		sp[strcspn(sp, "\n")] = '\0';
		if (!strcmp(line, "reason")) {
			snprintf(reason, rn, "%s", sp);
			continue;
		}
		for (size_t k = 0; k < NKEYS; k++)
			if (!strcmp(line, keys[k])) {
				v[k] = strtoull(sp, &end, 10);
				seen |= *end ? 0 : 1u << k;
			}
	}
	fclose(f);
	return seen == (1u << NKEYS) - 1 ? 0 : -1;
}

int run_totals_read(const char *dir, struct run_totals *t, void **json_procs,
		    char *err, size_t n)
{
	DIR *d = opendir(dir);
	json_t *procs = json_array();
	struct dirent *e;
	char path[4200], reason[320];
	uint64_t v[NKEYS];

	memset(t, 0, sizeof(*t));
	t->fail_chunk = RESID_NO_CHUNK;
	t->sigbus_off = UINT64_MAX;
	if (!d || !procs) {
		snprintf(err, n, "cannot read the records in %s: %s", dir,
			 strerror(errno));
		if (d)
			closedir(d);
		json_decref(procs);
		return -1;
	}
	while ((e = readdir(d))) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);

		if (*end || pid <= 0)
			continue; /* ".", "..", a record being replaced */
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		reason[0] = '\0';
		if (record(path, v, reason, sizeof(reason))) {
			snprintf(err, n, "the preload's record %s is malformed",
				 path);
			closedir(d);
			json_decref(procs);
			return -1;
		}
		t->processes++;
		t->unfinished += !v[K_FINAL];
		t->failed += v[K_FAILED];
		if (!t->fail_errno && v[K_ERRNO]) {
			t->fail_errno = v[K_ERRNO];
			t->fail_chunk = v[K_CHUNK];
		}
		if (t->sigbus_off == UINT64_MAX)
			t->sigbus_off = v[K_SIGBUS];
		t->prefetches += v[12];
		t->regions += v[0];
		t->served += v[1];
		t->kernel += v[2];
		t->refused += v[3];
		t->populate += v[4];
		t->ignored += v[5];
		t->fetch_bytes += v[6];
		t->faults += v[7];
		t->fetches += v[8];
		t->refaults += v[9];
		t->trace_errors += v[K_TRACE];
		if (v[10] > t->resident_max)
			t->resident_max = v[10];
		if (!t->reason[0] && reason[0])
			snprintf(t->reason, sizeof(t->reason), "%s", reason);
		json_t *p = json_object();

		json_object_set_new(p, "pid", json_integer(pid));
		for (size_t k = 0; k < NKEYS; k++)
			json_object_set_new(p, keys[k],
					    k >= K_OPEN ?
						    json_boolean(v[k]) :
					    (k == K_CHUNK &&
					     v[k] == RESID_NO_CHUNK) ||
							    (k == K_SIGBUS &&
							     v[k] == UINT64_MAX) ?
						    json_null() :
						    json_integer(
							    (json_int_t)v[k]));
		json_object_set_new(p, "reason", json_string(reason));
		json_array_append_new(procs, p);
	}
	closedir(d);
	if (json_procs)
		*json_procs = procs;
	else
		json_decref(procs);
	return 0;
}

static void status_text(int status, char *buf, size_t n)
{
	if (WIFSIGNALED(status))
		snprintf(buf, n, "killed by signal %d (exit %d)",
			 WTERMSIG(status), 128 + WTERMSIG(status));
	else
		snprintf(buf, n, "exit %d", WEXITSTATUS(status));
}

/* "; chunk C (offset O, L bytes) failed: error, SIGBUS at offset X", or
 * "" when no chunk failed. */
static void failure_text(const struct run_setup *s, const struct run_totals *t,
			 char *buf, size_t n)
{
	size_t k;

	buf[0] = '\0';
	if (!t->failed && !t->fail_errno)
		return;
	if (t->fail_chunk < s->nchunks)
		k = (size_t)snprintf(buf, n,
				     "; %" PRIu64
				     " chunk%s failed, first chunk %" PRIu64
				     " (offset %" PRIu64 ", %" PRIu64
				     " bytes): %s",
				     t->failed, t->failed == 1 ? "" : "s",
				     t->fail_chunk,
				     s->chunks[t->fail_chunk].off,
				     s->chunks[t->fail_chunk].len,
				     strerror((int)t->fail_errno));
	else
		k = (size_t)snprintf(buf, n, "; the pager failed: %s",
				     strerror((int)t->fail_errno));
	if (k < n && t->sigbus_off != UINT64_MAX)
		snprintf(buf + k, n - k, ", SIGBUS at offset %" PRIu64,
			 t->sigbus_off);
}

void run_summary(const struct run_setup *s, const struct run_totals *t,
		 int status)
{
	char st[64], procs[160] = "", failed[256];

	status_text(status, st, sizeof(st));
	if (s->advice) {
		fprintf(stderr,
			"residctl run: %s: %" PRIu64
			" bytes read from the disk by the program's processes (the kernel's mmap, advice %s, cgroup limit %" PRIu64
			" as the pager's at budget %" PRIu64
			", device class %s); %s\n",
			s->path, s->read_bytes, s->advice, s->limit, s->budget,
			s->device_class, st);
		return;
	}
	if (!t->processes) {
		fprintf(stderr,
			"residctl run: %s never mapped %s: nothing was served (%s)\n",
			s->program, s->path, st);
		return;
	}
	if (t->processes > 1)
		snprintf(procs, sizeof(procs),
			 "; %" PRIu32 " processes, each its own region",
			 t->processes);
	if (t->unfinished)
		snprintf(procs + strlen(procs), sizeof(procs) - strlen(procs),
			 "; %" PRIu32
			 " without final counters (exec, _exit or a signal)",
			 t->unfinished);
	failure_text(s, t, failed, sizeof(failed));
	if (!t->regions) {
		fprintf(stderr,
			"residctl run: %s was never served: %" PRIu64
			" mappings went to the kernel (first: %s)%s; %s\n",
			s->path, t->kernel, t->reason, procs, st);
		return;
	}
	fprintf(stderr,
		"residctl run: %s: %" PRIu64
		" bytes read from the file, %" PRIu64 " faults, %" PRIu64
		" fetches, resident max %" PRIu64 " of budget %" PRIu64
		" (cgroup limit %" PRIu64 "); %" PRIu64
		" mappings served, %" PRIu64 " MAP_POPULATE stripped, %" PRIu64
		" calls to the kernel%s%s%s%s%s%s%s; %s\n",
		s->path, t->fetch_bytes, t->faults, t->fetches, t->resident_max,
		s->budget, s->limit, t->served, t->populate, t->kernel,
		t->kernel ? " (first: " : "", t->kernel ? t->reason : "",
		t->kernel ? ")" : "", failed, procs,
		strcmp(s->device_class, "host") ? "; device class " : "",
		strcmp(s->device_class, "host") ? s->device_class : "", st);
}

/* The run's totals: the "total" object of --json. */
static void set_totals(json_t *tot, const struct run_totals *t)
{
	json_object_set_new(tot, "processes", json_integer(t->processes));
	json_object_set_new(tot, "unfinished", json_integer(t->unfinished));
	json_object_set_new(tot, "regions",
			    json_integer((json_int_t)t->regions));
	json_object_set_new(tot, "served", json_integer((json_int_t)t->served));
	json_object_set_new(tot, "kernel", json_integer((json_int_t)t->kernel));
	json_object_set_new(tot, "refused",
			    json_integer((json_int_t)t->refused));
	json_object_set_new(tot, "populate",
			    json_integer((json_int_t)t->populate));
	json_object_set_new(tot, "ignored",
			    json_integer((json_int_t)t->ignored));
	json_object_set_new(tot, "fetch_bytes",
			    json_integer((json_int_t)t->fetch_bytes));
	json_object_set_new(tot, "faults", json_integer((json_int_t)t->faults));
	json_object_set_new(tot, "fetches",
			    json_integer((json_int_t)t->fetches));
	json_object_set_new(tot, "refaults",
			    json_integer((json_int_t)t->refaults));
	json_object_set_new(tot, "prefetches",
			    json_integer((json_int_t)t->prefetches));
	json_object_set_new(tot, "resident_max",
			    json_integer((json_int_t)t->resident_max));
	json_object_set_new(tot, "first_reason", json_string(t->reason));
	json_object_set_new(tot, "failed_chunks",
			    json_integer((json_int_t)t->failed));
	json_object_set_new(tot, "fail_errno",
			    json_integer((json_int_t)t->fail_errno));
	json_object_set_new(tot, "fail_chunk",
			    t->fail_chunk == RESID_NO_CHUNK ?
				    json_null() :
				    json_integer((json_int_t)t->fail_chunk));
	json_object_set_new(tot, "sigbus_offset",
			    t->sigbus_off == UINT64_MAX ?
				    json_null() :
				    json_integer((json_int_t)t->sigbus_off));
}

/* What the run was given: the top of --json, before the chunks. */
static void set_setup(json_t *o, const struct run_setup *s)
{
	json_object_set_new(o, "command", json_string("run"));
	json_object_set_new(o, "file", json_string(s->path));
	json_object_set_new(o, "program", json_string(s->program));
	json_object_set_new(o, "size", json_integer((json_int_t)s->size));
	json_object_set_new(o, "budget", json_integer((json_int_t)s->budget));
	json_object_set_new(o, "headroom",
			    json_integer((json_int_t)s->headroom));
	json_object_set_new(o, "margin", json_integer((json_int_t)s->margin));
	json_object_set_new(o, "cgroup_limit",
			    json_integer((json_int_t)s->limit));
	json_object_set_new(o, "policy", json_string(s->policy));
	json_object_set_new(o, "arm",
			    json_string(s->advice ? "kernel-mmap" : "pager"));
	json_object_set_new(o, "advice",
			    s->advice ? json_string(s->advice) : json_null());
	json_object_set_new(o, "device_class", json_string(s->device_class));
	json_object_set_new(o, "read_bytes",
			    json_integer((json_int_t)s->read_bytes));
	json_object_set_new(o, "prefetch", json_integer(s->prefetch));
	json_object_set_new(o, "order_source", json_string(s->order_source));
}

int run_json(const char *path, const struct run_setup *s,
	     const struct run_totals *t, void *json_procs, int status,
	     char *err, size_t n)
{
	json_t *o = json_object(), *tot = json_object(), *ch = json_array(),
	       *seq = json_array();
	char tmp[4200];
	int rc = -1;

	for (uint32_t c = 0; c < s->nchunks; c++)
		json_array_append_new(ch,
				      json_pack("[II]",
						(json_int_t)s->chunks[c].off,
						(json_int_t)s->chunks[c].len));
	for (uint32_t i = 0; i < s->nseq; i++)
		json_array_append_new(seq, json_integer(s->seq[i]));
	set_totals(tot, t);
	set_setup(o, s);
	json_object_set_new(o, "chunks", ch);
	json_object_set_new(o, "order", seq);
	json_object_set_new(o, "exit",
			    json_integer(WIFSIGNALED(status) ?
						 128 + WTERMSIG(status) :
						 WEXITSTATUS(status)));
	json_object_set_new(o, "signal",
			    json_integer(WIFSIGNALED(status) ?
						 WTERMSIG(status) :
						 0));
	json_object_set_new(o, "total", tot);
	json_object_set_new(o, "processes",
			    json_procs ? (json_t *)json_procs : json_array());
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	if (json_dump_file(o, tmp, JSON_INDENT(1) | JSON_SORT_KEYS))
		snprintf(err, n,
			 "cannot write %s: %s; give a writable --json path",
			 tmp, strerror(errno));
	else if (rename(tmp, path))
		snprintf(err, n, "cannot rename %s to %s: %s", tmp, path,
			 strerror(errno));
	else
		rc = 0;
	if (rc)
		unlink(tmp);
	json_decref(o);
	return rc;
}
