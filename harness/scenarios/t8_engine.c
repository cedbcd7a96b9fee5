/* T-8 a real engine through the pager (design.md §11): unmodified llama.cpp
 * (build/engine/llama-driver, docs/engine.md) decodes this residctl's own
 * tiny model under the kernel's mmap, then under `residctl run` for every
 * policy at 0.25, 0.5 and 0.75 of the file; every run's token ids and
 * logits hash must be the reference's. Then the reads of one layer chunk
 * fail with EIO (libresid-eio.so): the engine must die of SIGBUS in that
 * chunk and run must name it, never exit 0 and never hang. UNKNOWN where
 * the engine is not installed (make engine). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/clock.h"
#include "proc/child.h"
#include "scenarios/scenario.h"
#include "workload/huge_leg.h"
#include "workload/workload.h"

#define TOKENS "8"
/* llama.cpp's own memory beside the budget: about 30 MiB resident on the
 * tiny model, its libraries' pages charged too. */
#define MARGIN "128M"
/* One run's bound; a tiny decode takes seconds. */
#define RUN_S 60.0

static const double ratios[] = { 0.25, 0.5, 0.75 };
/* Two engine threads where the budget is tightest (two threads faulting
 * across a chunk border need both chunks at once); one elsewhere, as
 * ggml's spinning barrier costs seconds a run on a loaded 2-core machine.
 * 1 and 2 threads give the same logits bits (results/engine.md). */
static const char *const threads[] = { "2", "1", "1" };
static const char *const policies[] = { "lru", "learned", "declared" };

struct t8 {
	char exe[PATH_MAX], driver[PATH_MAX], shim[PATH_MAX];
	char dir[64], model[128], out[128], err[128], json[128];
	const char *huge_dir; /* the huge leg's mount point, else NULL */
	char *ref_tokens, *ref_hash;
};

/* The engine and the shim beside this residctl (build/); -1 when the
 * engine is not installed, with why in res. */
static int find_tools(struct t8 *t, struct scen_result *res)
{
	ssize_t k = readlink("/proc/self/exe", t->exe, sizeof(t->exe) - 1);
	char dir[PATH_MAX];

	if (k <= 0) {
		scen_fail(res, "cannot read /proc/self/exe: %s",
			  strerror(errno));
		return -1;
	}
	t->exe[k] = '\0';
	snprintf(dir, sizeof(dir), "%s", t->exe);
	*strrchr(dir, '/') = '\0';
	snprintf(t->driver, sizeof(t->driver), "%.4000s/engine/llama-driver",
		 dir);
	snprintf(t->shim, sizeof(t->shim), "%.4000s/libresid-eio.so", dir);
	if (access(t->driver, X_OK)) {
		scen_unknown(res,
			     "no engine: %s is missing; make engine installs "
			     "it (node, npm and the npm registry needed)",
			     t->driver);
		return -1;
	}
	if (access(t->shim, R_OK)) {
		scen_fail(res, "%s is missing; make builds it", t->shim);
		return -1;
	}
	return 0;
}

/* In the child: the huge leg's tmpfs, the shim, the output files, then
 * argv. Never returns. */
static void child_exec(const struct t8 *t, char *const argv[], const char *eio)
{
	char err[512];
	int out = open(t->out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	int fd = open(t->err, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (out < 0 || fd < 0 || dup2(out, 1) < 0 || dup2(fd, 2) < 0)
		_exit(126);
	if (t->huge_dir && huge_leg_enter(t->huge_dir, err, sizeof(err)) < 0) {
		dprintf(2, "the huge leg: %s\n", err);
		_exit(126);
	}
	if (eio) {
		setenv("LD_PRELOAD", t->shim, 1); /* run puts its own first */
		setenv("RESIDCTL_TEST_EIO", eio, 1);
	}
	execv(argv[0], argv);
	dprintf(2, "cannot run %s: %s\n", argv[0], strerror(errno));
	_exit(127);
}

/* Runs argv with stdout and stderr in t's files, bounded by RUN_S: SIGTERM
 * then (run removes its cgroup) SIGKILL. Its exit code, 128 + N after
 * signal N, or -1 when it had to be ended (hung) or could not start. */
static int spawn(const struct t8 *t, char *const argv[], const char *eio)
{
	struct timespec tick = { 0, 20000000L };
	double end = mono_now() + RUN_S;
	int status, sig = 0;
	pid_t pid = child_fork();

	if (pid == 0)
		child_exec(t, argv, eio);
	if (pid < 0)
		return -1;
	for (;;) {
		pid_t w = child_reap(pid, &status, 1);

		if (w == pid)
			break;
		if (w < 0)
			return -1;
		if (mono_now() > end + (sig ? 5 : 0)) {
			if (sig == SIGKILL) {
				child_reap(pid, &status, 0);
				return -1;
			}
			sig = sig ? SIGKILL : SIGTERM;
			kill(pid, sig);
			end = mono_now();
		}
		nanosleep(&tick, NULL);
	}
	if (sig)
		return -1;
	return WIFSIGNALED(status) ? 128 + WTERMSIG(status) :
				     WEXITSTATUS(status);
}

/* The first line of a file, for a message. */
static const char *first_line(const char *path, char *buf, size_t n)
{
	FILE *f = fopen(path, "r");

	buf[0] = '\0';
	if (f) {
		if (!fgets(buf, (int)n, f))
			buf[0] = '\0';
		fclose(f);
	}
	buf[strcspn(buf, "\n")] = '\0';
	return buf[0] ? buf : "(nothing on stderr)";
}

/* Whether the file holds s. */
static int file_has(const char *path, const char *s)
{
	char line[4096];
	FILE *f = fopen(path, "r");
	int yes = 0;

	while (f && !yes && fgets(line, sizeof(line), f))
		yes = strstr(line, s) != NULL;
	if (f)
		fclose(f);
	return yes;
}

/* The driver's line in t->out: its ids (compact JSON) and logits hash,
 * malloc'd. -1 when there is none. */
static int driver_line(const struct t8 *t, char **tokens, char **hash)
{
	json_t *j = json_load_file(t->out, JSON_DISABLE_EOF_CHECK, NULL);
	json_t *ids = json_object_get(j, "tokens");
	const char *h = json_string_value(json_object_get(j, "logits_fnv1a64"));

	*tokens = json_is_array(ids) ? json_dumps(ids, JSON_COMPACT) : NULL;
	*hash = h ? strdup(h) : NULL;
	json_decref(j);
	if (*tokens && *hash)
		return 0;
	free(*tokens);
	free(*hash);
	return -1;
}

static uint64_t total_of(json_t *run, const char *key)
{
	json_int_t v = json_integer_value(
		json_object_get(json_object_get(run, "total"), key));

	return v > 0 ? (uint64_t)v : 0;
}

/* `residctl run` of the driver at ratio under policy, --json in t->json.
 * The exit code as spawn's. */
static int run_engine(const struct t8 *t, double ratio, const char *policy,
		      const char *nthreads, const char *eio)
{
	char r[16];
	char *argv[24];
	int n = 0;

	snprintf(r, sizeof(r), "%.2f", ratio);
	argv[n++] = (char *)t->exe;
	argv[n++] = "run";
	argv[n++] = "--file";
	argv[n++] = (char *)t->model;
	argv[n++] = "--ratio";
	argv[n++] = r;
	argv[n++] = "--policy";
	argv[n++] = (char *)policy;
	argv[n++] = "--margin";
	argv[n++] = MARGIN;
	argv[n++] = "--json";
	argv[n++] = (char *)t->json;
	if (t->huge_dir) {
		argv[n++] = "--huge-dir";
		argv[n++] = (char *)t->huge_dir;
	}
	argv[n++] = "--";
	argv[n++] = (char *)t->driver;
	argv[n++] = (char *)t->model;
	argv[n++] = "--tokens";
	argv[n++] = TOKENS;
	argv[n++] = "--threads";
	argv[n++] = (char *)nthreads;
	argv[n] = NULL;
	unlink(t->json);
	return spawn(t, argv, eio);
}

/* The model and the reference under the kernel's mmap. -1 after a
 * failure. */
static int reference(struct t8 *t, uint64_t seed, struct scen_result *res)
{
	char s[24], line[512];
	char *mk[] = { t->exe,   "bench", "mkgguf", "--preset", "tiny",
		       "--seed", s,       "--out",  t->model,   NULL };
	char *ref[] = { t->driver, t->model, "--tokens", TOKENS, NULL };
	const char *huge = t->huge_dir;
	int rc;

	snprintf(s, sizeof(s), "%" PRIu64, seed);
	t->huge_dir = NULL; /* neither needs a namespace of its own */
	rc = spawn(t, mk, NULL);
	if (rc) {
		scen_fail(res, "bench mkgguf --preset tiny exited %d: %s", rc,
			  first_line(t->err, line, sizeof(line)));
	} else if ((rc = spawn(t, ref, NULL))) {
		scen_fail(res,
			  "the engine under the kernel's mmap exited %d: "
			  "%s",
			  rc, first_line(t->err, line, sizeof(line)));
	} else if (driver_line(t, &t->ref_tokens, &t->ref_hash) < 0) {
		scen_fail(res, "the engine under the kernel's mmap printed no "
			       "ids and hash");
		rc = -1;
	}
	t->huge_dir = huge;
	return rc ? -1 : 0;
}

/* Every policy at every ratio: the reference's ids and hash, each. */
static void compare_runs(const struct t8 *t, struct scen_result *res)
{
	char line[512];

	for (size_t p = 0; p < 3; p++)
		for (size_t i = 0; i < 3; i++) {
			int rc = run_engine(t, ratios[i], policies[p],
					    threads[i], NULL);
			json_t *j = json_load_file(t->json, 0, NULL);
			char *ids = NULL, *hash = NULL;

			scen_add(res, "runs", 1);
			res->checks++;
			if (rc || driver_line(t, &ids, &hash) < 0) {
				res->mismatches++;
				scen_fail(res, "%s at %.2f: %s %d, %s",
					  policies[p], ratios[i],
					  rc < 0 ? "ended after" : "exit",
					  rc < 0 ? (int)RUN_S : rc,
					  first_line(t->err, line,
						     sizeof(line)));
			} else if (strcmp(ids, t->ref_tokens) ||
				   strcmp(hash, t->ref_hash)) {
				res->mismatches++;
				scen_fail(res,
					  "%s at %.2f: ids %s hash %s, "
					  "the kernel's mmap %s %s",
					  policies[p], ratios[i], ids, hash,
					  t->ref_tokens, t->ref_hash);
			} else {
				scen_add(res, "equal", 1);
			}
			scen_add(res, "fetches", total_of(j, "fetches"));
			scen_add(res, "fetch_bytes",
				 total_of(j, "fetch_bytes"));
			free(ids);
			free(hash);
			json_decref(j);
		}
}

/* EIO on the reads of one layer chunk (the middle one of the table run
 * makes at 0.5): exit 135 (SIGBUS), run's account naming that chunk and,
 * where the kernel gave the SIGBUS an address, an offset inside it. */
static void eio_run(const struct t8 *t, struct scen_result *res)
{
	json_t *j, *chunks, *tot;
	char spec[256], line[512];
	json_int_t c, off, len, at;
	int rc;

	if ((rc = run_engine(t, 0.5, "declared", "1", NULL)) ||
	    !(j = json_load_file(t->json, 0, NULL))) {
		scen_fail(res, "EIO: the run without it exited %d", rc);
		return;
	}
	chunks = json_object_get(j, "chunks");
	c = (json_int_t)json_array_size(chunks) / 2;
	off = json_integer_value(json_array_get(json_array_get(chunks, c), 0));
	len = json_integer_value(json_array_get(json_array_get(chunks, c), 1));
	json_decref(j);
	snprintf(spec, sizeof(spec), "%s:%lld:%lld", t->model, (long long)off,
		 (long long)len);
	rc = run_engine(t, 0.5, "declared", "2", spec);
	res->checks++;
	scen_count(res, "eio_chunk", (uint64_t)c);
	scen_count(res, "eio_exit", rc < 0 ? 0 : (uint64_t)rc);
	if (rc < 0) {
		res->mismatches++;
		scen_fail(res, "EIO on chunk %lld: no end after %.0f s (hung)",
			  (long long)c, RUN_S);
		return;
	}
	if (rc != 128 + SIGBUS) {
		res->mismatches++;
		scen_fail(res,
			  "EIO on chunk %lld: exit %d, not SIGBUS's %d: %s",
			  (long long)c, rc, 128 + SIGBUS,
			  rc ? first_line(t->err, line, sizeof(line)) :
			       "the engine ran on");
		return;
	}
	if (!file_has(t->err, "EIO injected")) {
		res->mismatches++;
		scen_fail(res,
			  "EIO on chunk %lld: the shim injected none, yet "
			  "SIGBUS",
			  (long long)c);
		return;
	}
	j = json_load_file(t->json, 0, NULL);
	tot = json_object_get(j, "total");
	at = json_is_integer(json_object_get(tot, "sigbus_offset")) ?
		     json_integer_value(json_object_get(tot, "sigbus_offset")) :
		     -1;
	if (!json_is_integer(json_object_get(tot, "fail_chunk")) ||
	    json_integer_value(json_object_get(tot, "fail_chunk")) != c ||
	    json_integer_value(json_object_get(tot, "fail_errno")) != EIO ||
	    (at >= 0 && (at < off || at >= off + len))) {
		res->mismatches++;
		scen_fail(res,
			  "EIO on chunk %lld (offset %lld, %lld bytes): run "
			  "reported chunk %lld, errno %lld, SIGBUS at %lld",
			  (long long)c, (long long)off, (long long)len,
			  (long long)json_integer_value(
				  json_object_get(tot, "fail_chunk")),
			  (long long)json_integer_value(
				  json_object_get(tot, "fail_errno")),
			  (long long)at);
	}
	json_decref(j);
}

static int t8_run(const struct run_opts *o, struct scen_result *res)
{
	struct t8 *t = calloc(1, sizeof(*t));
	const char *tmp = getenv("TMPDIR");

	snprintf(res->backing, sizeof(res->backing), "gguf file");
	snprintf(res->chunks, sizeof(res->chunks), "layers%s",
		 o->leg & LEG_HUGE ? "+huge" : "");
	if (!t) {
		scen_fail(res, "out of memory");
		return -1;
	}
	if (find_tools(t, res) < 0) {
		free(t);
		return 0;
	}
	t->huge_dir = o->leg & LEG_HUGE ? o->huge_dir : NULL;
	snprintf(t->dir, sizeof(t->dir), "%.40s/residctl-t8-XXXXXX",
		 tmp && tmp[0] == '/' ? tmp : "/tmp");
	if (!mkdtemp(t->dir)) {
		scen_fail(res, "cannot make %s: %s", t->dir, strerror(errno));
		free(t);
		return -1;
	}
	snprintf(t->model, sizeof(t->model), "%s/tiny.gguf", t->dir);
	snprintf(t->out, sizeof(t->out), "%s/out", t->dir);
	snprintf(t->err, sizeof(t->err), "%s/err", t->dir);
	snprintf(t->json, sizeof(t->json), "%s/run.json", t->dir);
	if (reference(t, o->seed, res) == 0) {
		compare_runs(t, res);
		eio_run(t, res);
	}
	unlink(t->model);
	unlink(t->out);
	unlink(t->err);
	unlink(t->json);
	rmdir(t->dir);
	free(t->ref_tokens);
	free(t->ref_hash);
	free(t);
	return 0;
}

/* No simulated form: it runs an engine's processes on the real kernel. */
const struct scenario scenario_t8 = {
	.id = "T-8",
	.title = "a real engine through the pager",
	.reads = "a GGUF file, its layers as chunks",
	.run = t8_run,
	.no_seam = 1,
	.real_only = 1,
	.legs = LEG_HUGE,
};
