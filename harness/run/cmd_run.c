/* residctl run: an unmodified program whose read-only mappings of one file
 * are served by the pager (design.md §11, docs/run.md). residctl checks
 * everything first, makes the chunk table and read order, enters a memory
 * cgroup whose limit is the budget + the pager's headroom + the program's
 * own margin, swap forbidden (the bench arms' cg_scope), and runs the
 * program with libresid-preload.so in LD_PRELOAD and its configuration in
 * RESIDCTL_RUN_* variables; at the end, one summary line from the records
 * the preload left, the cgroup removed, the program's exit status kept. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sys/resource.h>

#include "base/cli.h"
#include "base/page_cache.h"
#include "cgroup/cgroup_scope.h"
#include "proc/child.h"
#include "run/run_report.h"
#include "run/run_trace.h"
#include "seam.h"
#include "workload/huge_leg.h"
#include "workload/read_order.h"

/* A tensor table's chunks are at most this share of the budget. */
#define SPLIT_SHARE 16
/* An embedding table read by rows is cut into pieces of this size: a
 * token's row then costs one piece, not a sixteenth of the budget. */
#define ROW_PIECE (2u << 20)

static const char about[] =
	"  Runs PROGRAM unmodified in a memory cgroup (limit: the budget + the\n"
	"  pager's headroom + --margin for the program's own memory; swap\n"
	"  forbidden), with libresid-preload.so in LD_PRELOAD: its PROT_READ\n"
	"  mappings of PATH (MAP_SHARED or MAP_PRIVATE, any page-aligned offset\n"
	"  and length) are served from one pager region of the whole file,\n"
	"  under the budget; MAP_POPULATE is stripped. What the region cannot\n"
	"  serve (PROT_WRITE, MAP_FIXED, an unaligned offset, the file replaced\n"
	"  or truncated since the start) goes to the kernel's mmap with one line\n"
	"  on stderr. The chunks and their read order come from PATH's own\n"
	"  tensor table (--order auto: GGUF or safetensors; equal --chunk chunks\n"
	"  for any other file) or from a layout file (--order FILE: 'offset\n"
	"  length' lines, or a safetensors or GGUF header). At the end one line\n"
	"  on stderr: bytes read from the file, faults, fetches, resident max,\n"
	"  budget. SIGINT and SIGTERM go to the program; the cgroup is removed.\n"
	"  --kernel-mmap runs the program without the pager (arm A: the kernel\n"
	"  pages PATH) in the same cgroup, the limit the pager's would have;\n"
	"  --advice gives its PROT_READ mappings of PATH that madvise (normal:\n"
	"  none, the default). --device-class holds the reads of PATH's block\n"
	"  device to a class of drive (host: none, the default). --trace FILE\n"
	"  records the chunks the program reads, each switch of chunk, into\n"
	"  FILE (a reference trace for residctl belady): the chunks are those\n"
	"  of --budget or --ratio, the whole file is resident (each chunk read\n"
	"  once).\n"
	"  Exit: the program's status (128 + N after signal N), 2 on bad input.\n"
	"  Options come before the '--'. Needs root (the cgroup, userfaultfd).\n"
	"  docs/run.md has the semantics and the RESIDCTL_RUN_* variables.\n";

struct run {
	const char *file, *order, *json, *huge_dir, *trace;
	uint64_t budget, margin, chunk, prefetch;
	double ratio;
	int have_budget, have_ratio, kernel, have_advice, advice;
	enum resid_policy policy;
	struct devclass dc;
};

/* --advice, and what libresid-advice.so calls them */
static const char *const advices[] = { "normal", "random", "sequential",
				       "willneed", NULL };

static int ratio_opt(void *dst, const char *where, const char *v, char *err,
		     size_t n)
{
	char *end;
	double r = strtod(v, &end);

	(void)where;
	if (*end || !(r > 0 && r <= 1)) {
		snprintf(err, n,
			 "bad ratio '%s'; give a share of the file in (0, 1], e.g. 0.5",
			 v);
		return -1;
	}
	*(double *)dst = r;
	return 0;
}

static int no_operand(void *dst, const char *where, const char *v, char *err,
		      size_t n)
{
	(void)dst;
	(void)where;
	snprintf(err, n,
		 "unexpected '%s'; put the program after '--': residctl run [OPTIONS] --file PATH -- PROGRAM [ARGS]",
		 v);
	return -1;
}

static int parse(struct run *o, int argc, char **argv)
{
	struct cli_opt opts[] = {
		{ "file", CLI_TEXT, &o->file, .arg = "PATH",
		  .help = "the file whose mappings the pager serves (required)" },
		{ "budget", CLI_BYTES, &o->budget, .arg = "BYTES", .min = 1,
		  .what = "budget", .seen = &o->have_budget,
		  .fix = "give bytes, at least the largest chunk, e.g. 256M",
		  .help = "most bytes of PATH resident at once" },
		{ "ratio", CLI_CALL, &o->ratio, .arg = "R", .parse = ratio_opt,
		  .seen = &o->have_ratio,
		  .help = "the budget as a share of PATH (default 0.5)" },
		{ "policy", CLI_CALL, &o->policy, .parse = cli_policy,
		  .arg = "lru|learned|declared",
		  .help = "the eviction policy (default declared)" },
		{ "order", CLI_TEXT, &o->order, .arg = "auto|FILE",
		  .help = "chunks and read order: PATH's tensor table (auto, "
			  "the default) or a layout file" },
		{ "chunk", CLI_BYTES, &o->chunk, .arg = "BYTES",
		  .min = RESID_PAGE, .align = RESID_PAGE, .what = "chunk size",
		  .help = "equal chunks for a file without a tensor table "
			  "(default 2M)" },
		{ "prefetch", CLI_U64, &o->prefetch, .arg = "N", .max = 64,
		  .what = "prefetch depth", .help = "chunks fetched ahead" },
		{ "margin", CLI_BYTES, &o->margin, .arg = "BYTES",
		  .align = RESID_PAGE, .what = "margin",
		  .help = "the program's own memory in the cgroup (default 64M)" },
		{ "huge-dir", CLI_TEXT, &o->huge_dir, .arg = "DIR",
		  .help = "a tmpfs mounted huge=within_size for the pager's "
			  "pages (resid.h); chunks start on its folios" },
		CLI_JSON(&o->json, "write the run's account"),
		{ "kernel-mmap", CLI_FLAG, &o->kernel,
		  .help = "no pager: the kernel's mmap in the same cgroup" },
		{ "advice", CLI_CHOICE, &o->advice, .choices = advices,
		  .seen = &o->have_advice,
		  .help = "--kernel-mmap's madvise of PATH's mappings "
			  "(default normal)" },
		DEVCLASS_OPT(&o->dc),
		{ "trace", CLI_TEXT, &o->trace, .arg = "FILE",
		  .help = "record the chunk references into FILE (the chunks "
			  "of the budget; the whole file resident)" },
		{ 0 },
	};
	const struct cli_spec spec = {
		.cmd = "run",
		.synopsis = "--file PATH -- PROGRAM [ARGS]",
		.about = about,
		.opts = opts,
		.operands = 1,
		.operand = { .type = CLI_CALL, .parse = no_operand },
	};

	o->ratio = 0.5;
	o->chunk = 2 << 20;
	o->margin = 64 << 20;
	o->policy = RESID_POLICY_DECLARED;
	return cli_parse(&spec, argc, argv);
}

__attribute__((format(printf, 1, 2))) static int bad(const char *fmt, ...)
{
	va_list ap;

	fputs("residctl run: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 2;
}

/* PROGRAM as execvp would find it. */
static int find_program(const char *name, char *out, size_t n)
{
	const char *path = getenv("PATH");
	struct stat st;

	if (strchr(name, '/')) {
		snprintf(out, n, "%s", name);
		return stat(out, &st) || !S_ISREG(st.st_mode) ||
				       access(out, X_OK) ?
			       -1 :
			       0;
	}
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin";
	for (const char *p = path; *p;) {
		size_t len = strcspn(p, ":");

		snprintf(out, n, "%.*s/%s", (int)len, len ? p : ".", name);
		if (!stat(out, &st) && S_ISREG(st.st_mode) &&
		    !access(out, X_OK))
			return 0;
		p += len + (p[len] == ':');
	}
	return -1;
}

/* The preload lib (libresid-preload.so, or --kernel-mmap's
 * libresid-advice.so): the variable env, else beside this residctl or in
 * ../lib from it (an installed prefix). */
static int find_preload(const char *lib, const char *envname, char *out,
			size_t n)
{
	const char *env = getenv(envname);
	char exe[PATH_MAX - 32];
	ssize_t k;

	if (env && *env) {
		snprintf(out, n, "%s", env);
		if (env[0] != '/' || access(out, R_OK))
			return bad("%s '%s' is not a readable absolute path; give %s's",
				   envname, env, lib);
		return 0;
	}
	k = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (k > 0) {
		exe[k] = '\0';
		*strrchr(exe, '/') = '\0';
		snprintf(out, n, "%s/%s", exe, lib);
		if (!access(out, R_OK))
			return 0;
		snprintf(out, n, "%s/../lib/%s", exe, lib);
		if (!access(out, R_OK))
			return 0;
	}
	return bad("%s is neither beside residctl nor in ../lib from it; build it (make) or set %s",
		   lib, envname);
}

static uint64_t mem_available(void)
{
	char line[256];
	unsigned long long kb;
	FILE *f = fopen("/proc/meminfo", "r");
	uint64_t v = UINT64_MAX;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
			v = (uint64_t)kb * 1024;
	if (f)
		fclose(f);
	return v;
}

/* The room a child cgroup of this process's can be given: the tree's
 * (cgroupfs.h) and the machine's. */
static int room_of(uint64_t *room, char *where, size_t wn)
{
	struct cg_env env;
	struct cg_memory *m = malloc(sizeof(*m));
	struct cg_room r;
	char err[512];
	uint64_t avail = mem_available();

	cg_env_init(&env, resid_seam_linux.read_text, resid_seam_linux.ctx);
	if (!m || cg_find_memory(&env, m, err, sizeof(err)) ||
	    (m->version != CG_NONE &&
	     cg_read_room(&env, m, &r, err, sizeof(err)))) {
		free(m);
		return bad("%s", m ? err : "no memory");
	}
	if (m->version == CG_NONE) {
		free(m);
		return bad("no memory controller in %s: enable it (v2: add memory to the parent's cgroup.subtree_control; v1: mount -t cgroup -o memory memory /sys/fs/cgroup/memory)",
			   env.mountinfo);
	}
	*room = r.room < avail ? r.room : avail;
	snprintf(where, wn, "%s",
		 r.room < avail ? r.dir : "the machine's MemAvailable");
	free(m);
	return 0;
}

/* A comma-separated list for the environment; NULL without memory. */
static char *csv(const uint64_t *a64, const uint32_t *a32, uint32_t n)
{
	size_t cap = (size_t)n * 21 + 1, k = 0;
	char *s = malloc(cap);

	if (!s)
		return NULL;
	s[0] = '\0';
	for (uint32_t i = 0; i < n; i++)
		k += (size_t)snprintf(s + k, cap - k, "%s%" PRIu64,
				      i ? "," : "", a64 ? a64[i] : a32[i]);
	return s;
}

/* The layer whose first byte is in chunk c, for an error line. */
static const char *chunk_name(const struct layout *l, uint32_t c)
{
	for (uint32_t i = 0; l->names && i < l->nlayers; i++)
		if (l->layers[i].chunk == c)
			return l->names[i];
	return NULL;
}

/* Everything checked and made before anything is started. */
struct plan {
	char prog[PATH_MAX], preload[PATH_MAX], path[PATH_MAX];
	struct stat st;
	struct read_order ord;
	struct resid_config cfg;
	uint64_t budget, headroom, limit;
	char *chunks_env, *order_env;
	struct devclass_dev dev;
};

/* Whether what.tmp can be made beside path; 0, or 2 said. */
static int writable(const char *what, const char *path)
{
	char tmp[PATH_MAX + 8];
	int fd;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return bad("cannot write %s %s: %s; give a writable path", what,
			   tmp, strerror(errno));
	close(fd);
	unlink(tmp);
	return 0;
}

static int check_file(struct run *o, struct plan *p)
{
	if (!o->file)
		return bad(
			"no --file given; residctl run [OPTIONS] --file PATH -- PROGRAM [ARGS]");
	if (stat(o->file, &p->st))
		return bad("cannot stat --file %s: %s; give the file the program maps",
			   o->file, strerror(errno));
	if (S_ISDIR(p->st.st_mode))
		return bad("--file %s is a directory; give the regular file the program maps",
			   o->file);
	if (S_ISFIFO(p->st.st_mode))
		return bad("--file %s is a FIFO; give the regular file the program maps",
			   o->file);
	if (!S_ISREG(p->st.st_mode))
		return bad("--file %s is not a regular file; give the file the program maps",
			   o->file);
	if (!p->st.st_size)
		return bad("--file %s is empty; give the file the program maps",
			   o->file);
	if (!realpath(o->file, p->path))
		return bad("cannot resolve --file %s: %s", o->file,
			   strerror(errno));
	if (o->huge_dir) {
		struct stat hd;

		if (o->huge_dir[0] != '/' || stat(o->huge_dir, &hd) ||
		    !S_ISDIR(hd.st_mode))
			return bad("--huge-dir '%s' is not an absolute path to a directory; give a tmpfs mounted with huge=within_size",
				   o->huge_dir);
	}
	if (o->json && writable("--json", o->json))
		return 2;
	if (o->trace && writable("--trace", o->trace))
		return 2;
	return 0;
}

/* The command line: a program, one of --budget and --ratio, --advice
 * only with --kernel-mmap, and --file. */
static int check_command(struct run *o, int nprog, char **prog, struct plan *p)
{
	if (nprog < 1)
		return bad(
			"no program given; residctl run [OPTIONS] --file PATH -- PROGRAM [ARGS]");
	if (find_program(prog[0], p->prog, sizeof(p->prog)))
		return bad("program '%s' not found or not executable (PATH=%s); give its path",
			   prog[0], getenv("PATH") ? getenv("PATH") : "");
	if (o->have_budget && o->have_ratio)
		return bad("give --budget or --ratio, not both");
	if (o->trace && o->kernel)
		return bad(
			"--trace records the pager's faults; --kernel-mmap runs without the pager: drop one");
	if (o->trace && o->prefetch)
		return bad("--trace with --prefetch %" PRIu64
			   ": a prefetch maps a chunk before the program reads it, and the read would not be recorded; drop --prefetch",
			   o->prefetch);
	if (o->have_advice && !o->kernel)
		return bad("--advice %s is for --kernel-mmap; the pager serves the mappings without it",
			   advices[o->advice]);
	return check_file(o, p);
}

/* The library the program gets in LD_PRELOAD: the pager's, the advice
 * library with --kernel-mmap, or none for advice normal. */
static int pick_preload(const struct run *o, struct plan *p)
{
	int rc = 0;

	if (!o->kernel)
		rc = find_preload("libresid-preload.so", "RESIDCTL_PRELOAD",
				  p->preload, sizeof(p->preload));
	else if (o->advice)
		rc = find_preload("libresid-advice.so",
				  "RESIDCTL_ADVICE_PRELOAD", p->preload,
				  sizeof(p->preload));
	return rc;
}

/* The region's configuration, and the cgroup limit it needs, which must
 * fit in the room there is. */
static int plan_region(const struct run *o, struct plan *p, uint64_t size)
{
	uint64_t room = 0;
	char where[CG_PATH_MAX];
	struct resid_config *c = &p->cfg;
	int rc;

	resid_config_init(c);
	c->backing = RESID_BACKING_FILE;
	c->path = p->path;
	c->region_len = size;
	c->table = p->ord.lay.chunks;
	c->table_len = p->ord.lay.nchunks;
	c->budget_bytes = p->budget;
	c->policy = o->policy;
	c->declared_seq = p->ord.nseq ? p->ord.seq : NULL;
	c->declared_len = p->ord.nseq;
	c->prefetch_depth = (uint32_t)o->prefetch;
	c->huge_dir = o->huge_dir;
	p->headroom = resid_headroom(c);
	p->limit = (p->budget + p->headroom + o->margin + RESID_PAGE - 1) &
		   ~(RESID_PAGE - 1);
	if ((rc = room_of(&room, where, sizeof(where))))
		return rc;
	if (p->limit > room)
		return bad("budget %" PRIu64 " + headroom %" PRIu64
			   " + --margin %" PRIu64 " = %" PRIu64
			   " exceed the room of %s (%" PRIu64
			   " bytes); give --budget at most %" PRIu64,
			   p->budget, p->headroom, o->margin, p->limit, where,
			   room,
			   room > p->headroom + o->margin ?
				   room - p->headroom - o->margin :
				   0);
	return 0;
}

/* The chunks' offsets and their read order, as the preload reads them
 * from its environment. */
static int plan_env(struct plan *p)
{
	p->chunks_env = malloc((size_t)p->ord.lay.nchunks * sizeof(uint64_t));
	if (!p->chunks_env)
		return bad("no memory");
	for (uint32_t i = 0; i < p->ord.lay.nchunks; i++)
		((uint64_t *)p->chunks_env)[i] = p->ord.lay.chunks[i].off;
	char *s = csv((uint64_t *)p->chunks_env, NULL, p->ord.lay.nchunks);

	free(p->chunks_env);
	p->chunks_env = s;
	p->order_env = csv(NULL, p->ord.seq, p->ord.nseq);
	if (!p->chunks_env || !p->order_env)
		return bad("no memory");
	/* one environment string holds at most 128 KiB (MAX_ARG_STRLEN) */
	if (strlen(p->chunks_env) > 120000)
		return bad("%" PRIu32
			   " chunks do not fit in the environment; give --order a layout of fewer layers, or a larger --chunk",
			   p->ord.lay.nchunks);
	return 0;
}

static int make_plan(struct run *o, int nprog, char **prog, struct plan *p)
{
	uint64_t size, folio;
	char err[1024];
	int rc;

	if ((rc = check_command(o, nprog, prog, p)))
		return rc;
	if ((rc = pick_preload(o, p)))
		return rc;
	if (devclass_throttles(&o->dc) &&
	    devclass_device(p->path, &p->dev, err, sizeof(err)))
		return bad("%s", err);
	size = (uint64_t)p->st.st_size;
	if (read_order_make(p->path, size, o->order, o->chunk, &p->ord, err,
			    sizeof(err)))
		return bad("%s", err);
	p->budget = o->have_budget ? o->budget :
				     (uint64_t)((double)size * o->ratio) &
					     ~(RESID_PAGE - 1);
	/* A tensor table's layers are cut to a sixteenth of the budget: two
	 * threads reading across a border need both chunks at once, and with
	 * room for one they evict each other for ever; the room the stream's
	 * chunks take from what stays resident is fetched again every pass.
	 * The token embeddings, read a row a token, are cut finer and left
	 * out of the order (docs/run.md has the figures). */
	if (strcmp(p->ord.source, "table") && strcmp(p->ord.source, "equal") &&
	    read_order_split(&p->ord, p->budget / SPLIT_SHARE, ROW_PIECE, err,
			     sizeof(err)))
		return bad("%s", err);
	/* --huge-dir: the huge path takes chunks on folio borders only. */
	folio = o->huge_dir ? huge_leg_folio() : 0;
	if (folio && read_order_align(&p->ord, folio, err, sizeof(err)))
		return bad("%s", err);
	/* --trace: the chunks of that budget, which the trace is for; the
	 * whole file resident, so each chunk is read once. */
	if (o->trace)
		p->budget = (size + RESID_PAGE - 1) & ~(RESID_PAGE - 1);
	if (p->budget < p->ord.largest) {
		const char *name = chunk_name(&p->ord.lay, p->ord.largest_id);

		return bad("budget %" PRIu64
			   " is below the largest chunk (chunk %" PRIu32
			   " at offset %" PRIu64 ", %" PRIu64
			   " bytes%s%s%s); give --budget at least %" PRIu64,
			   p->budget, p->ord.largest_id,
			   p->ord.lay.chunks[p->ord.largest_id].off,
			   p->ord.largest, name ? ", tensor '" : "",
			   name ? name : "", name ? "'" : "", p->ord.largest);
	}
	if ((rc = plan_region(o, p, size)))
		return rc;
	return plan_env(p);
}

/* The pager preload's configuration. */
static void pager_env(const struct run *o, const struct plan *p,
		      const char *report)
{
	char v[64];

	setenv("RESIDCTL_RUN_FILE", p->path, 1);
	snprintf(v, sizeof(v), "%" PRIu64, p->budget);
	setenv("RESIDCTL_RUN_BUDGET", v, 1);
	setenv("RESIDCTL_RUN_CHUNKS", p->chunks_env, 1);
	setenv("RESIDCTL_RUN_ORDER", p->order_env, 1);
	setenv("RESIDCTL_RUN_POLICY", resid_policy_name(p->cfg.policy), 1);
	snprintf(v, sizeof(v), "%" PRIu64, o->prefetch);
	setenv("RESIDCTL_RUN_PREFETCH", v, 1);
	if (o->huge_dir)
		setenv("RESIDCTL_RUN_HUGE_DIR", o->huge_dir, 1);
	else
		unsetenv("RESIDCTL_RUN_HUGE_DIR");
	setenv("RESIDCTL_RUN_REPORT", report, 1);
	if (o->trace)
		setenv("RESIDCTL_RUN_TRACE", "1", 1);
	else
		unsetenv("RESIDCTL_RUN_TRACE");
}

/* In the child: the preload's configuration, then the program. With
 * --kernel-mmap the advice library, or nothing for advice normal. */
static void start(const struct run *o, const struct plan *p, char **prog,
		  const char *report)
{
	char v[PATH_MAX + 64];
	const char *old = getenv("LD_PRELOAD");

	snprintf(v, sizeof(v), "%" PRIu64 ":%" PRIu64 ":%" PRIu64,
		 (uint64_t)p->st.st_dev, (uint64_t)p->st.st_ino,
		 (uint64_t)p->st.st_size);
	setenv("RESIDCTL_RUN_ID", v, 1);
	if (o->kernel)
		setenv("RESIDCTL_RUN_ADVICE", advices[o->advice], 1);
	else
		pager_env(o, p, report);
	if (p->preload[0] && old && *old) {
		char *both = malloc(strlen(p->preload) + strlen(old) + 2);

		if (both) {
			sprintf(both, "%s:%s", p->preload, old);
			setenv("LD_PRELOAD", both, 1);
		}
	} else if (p->preload[0]) {
		setenv("LD_PRELOAD", p->preload, 1);
	}
	execv(p->prog, prog);
	fprintf(stderr, "residctl run: cannot run %s: %s\n", p->prog,
		strerror(errno));
	_exit(127);
}

/* --kernel-mmap: the file's page cache emptied first, as the bench arms'
 * arm A, so the kernel reads what the program touches. 0, or 1 said. */
static int empty_cache(const struct plan *p)
{
	char err[PATH_MAX + 200];
	const char *how;
	int fd = open(p->path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		fprintf(stderr, "residctl run: cannot open %s: %s\n", p->path,
			strerror(errno));
		return 1;
	}
	how = page_cache_drop(fd, p->path, (uint64_t)p->st.st_size, err,
			      sizeof(err));
	close(fd);
	if (how)
		return 0;
	fprintf(stderr, "residctl run: %s\n", err);
	return 1;
}

static void pause_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Sends sig to every process of the cgroup but this one; how many. */
static int signal_left(const char *procs, int sig)
{
	char line[32];
	int k = 0;
	FILE *f = fopen(procs, "r");

	while (f && fgets(line, sizeof(line), f)) {
		pid_t pid = (pid_t)atoi(line);

		if (pid > 0 && pid != getpid()) {
			kill(pid, sig);
			k++;
		}
	}
	if (f)
		fclose(f);
	return k;
}

/* What the program left running in the cgroup is ended (SIGTERM, SIGKILL
 * after 2 s) and reaped (this process is their subreaper), so the cgroup
 * can go. */
static void end_leftovers(const struct cg_scope *s)
{
	char procs[CG_PATH_MAX + 16];
	int n, first;

	snprintf(procs, sizeof(procs), "%s/cgroup.procs", s->mem.dir);
	first = n = signal_left(procs, SIGTERM);
	for (int t = 0; n && t < 200; t++) {
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		pause_ms(10);
		n = signal_left(procs, 0);
	}
	for (int t = 0; n && t < 200; t++) {
		signal_left(procs, SIGKILL);
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		pause_ms(10);
		n = signal_left(procs, 0);
	}
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
	if (first)
		fprintf(stderr,
			"residctl run: ended %d process%s the program left in the run's cgroup\n",
			first, first > 1 ? "es" : "");
}

static void remove_dir(const char *dir)
{
	char path[PATH_MAX + 32];
	struct dirent *e;
	DIR *d = opendir(dir);

	while (d && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			unlink(path);
		}
	if (d)
		closedir(d);
	rmdir(dir);
}

/* --trace FILE from the references, and one line saying what it holds.
 * 0, or 1 said. */
static int trace_out(const struct run *o, const struct plan *p,
		     const char *report, const struct run_totals *t)
{
	struct run_trace_info ti;
	char err[1024];

	if (run_trace_write(report, o->trace, p->ord.lay.chunks,
			    p->ord.lay.nchunks, &ti, err, sizeof(err))) {
		fprintf(stderr, "residctl run: %s\n", err);
		return 1;
	}
	fprintf(stderr,
		"residctl run: --trace %s: %" PRIu64 " references over %" PRIu32
		" chunks (pid %ld%s)%s\n",
		o->trace, ti.records, p->ord.lay.nchunks, ti.pid,
		ti.processes > 1 ?
			"; other processes recorded too, each its own region: only this one's" :
			"",
		t->trace_errors ?
			"; some drops of A's entries or records failed: a return to a chunk may be missing" :
			"");
	return 0;
}

/* The '--' that ends the options, or argc when there is none. */
static int find_dash(int argc, char **argv)
{
	int dash = argc;

	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--")) {
			dash = i;
			break;
		}
	return dash;
}

static void free_plan(struct plan *p)
{
	read_order_free(&p->ord);
	free(p->chunks_env);
	free(p->order_env);
	free(p);
}

/* Forks the program and waits for it; its wait status (127 << 8 when it
 * could not be forked). */
static int run_program(const struct run *o, const struct plan *p, char **prog,
		       const char *report)
{
	int status = 0;
	pid_t pid;

	/* signals go to the program, which decides; its orphans come here */
	child_stop_softly();
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	pid = child_fork();
	if (pid == 0)
		start(o, p, prog, report);
	if (pid < 0) {
		fprintf(stderr, "residctl run: fork: %s\n", strerror(errno));
		status = 127 << 8;
	} else {
		/* orphans of the program are reaped as they end, not left as
		 * zombies until it exits */
		for (;;) {
			int st;
			pid_t w = waitpid(-1, &st, 0);

			if (w == pid || (w < 0 && errno != EINTR)) {
				status = w == pid ? st : status;
				break;
			}
		}
		int gone;

		child_reap(pid, &gone, 1); /* reaped: this unregisters it */
	}
	return status;
}

/* The line on stderr, and --json; 1 when a record could not be read or
 * written. */
static int report_run(const struct run *o, const struct plan *p,
		      const char *program, const char *report, int status)
{
	struct run_totals t;
	void *procs = NULL;
	char err[1024];
	int rc = 0;

	/* every process of the program was waited for here (subreaper) */
	struct rusage ru = { 0 };

	if (getrusage(RUSAGE_CHILDREN, &ru)) {
		fprintf(stderr, "residctl run: getrusage: %s\n",
			strerror(errno));
		rc = 1;
	}
	struct run_setup s = {
		.path = p->path,
		.program = program,
		.policy = resid_policy_name(p->cfg.policy),
		.order_source = p->ord.source,
		.size = (uint64_t)p->st.st_size,
		.budget = p->budget,
		.headroom = p->headroom,
		.margin = o->margin,
		.limit = p->limit,
		.nchunks = p->ord.lay.nchunks,
		.prefetch = (uint32_t)o->prefetch,
		.chunks = p->ord.lay.chunks,
		.seq = p->ord.seq,
		.nseq = p->ord.nseq,
		.advice = o->kernel ? advices[o->advice] : NULL,
		.device_class = devclass_label(&o->dc),
		.read_bytes = (uint64_t)ru.ru_inblock * 512,
	};

	if (run_totals_read(report, &t, o->json ? &procs : NULL, err,
			    sizeof(err))) {
		fprintf(stderr, "residctl run: %s\n", err);
		rc = 1;
	} else {
		run_summary(&s, &t, status);
		if (o->json && run_json(o->json, &s, &t, procs, status, err,
					sizeof(err))) {
			fprintf(stderr, "residctl run: %s\n", err);
			rc = 1;
		}
		if (o->trace && trace_out(o, p, report, &t))
			rc = 1;
	}
	return rc;
}

int cmd_run(int argc, char **argv)
{
	struct run o = { 0 };
	struct plan *p = calloc(1, sizeof(*p));
	struct cg_scope scope;
	char report[] = "/tmp/residctl-run-XXXXXX", err[1024];
	int dash, rc, status;

	if (!p)
		return bad("no memory");
	dash = find_dash(argc, argv);
	rc = parse(&o, dash, argv);
	if (rc == CLI_RUN &&
	    (rc = make_plan(&o, argc - dash - 1, argv + dash + 1, p)) == 0)
		rc = CLI_RUN;
	if (rc == CLI_RUN && o.kernel && (rc = empty_cache(p)) == 0)
		rc = CLI_RUN;
	if (rc == CLI_RUN && !mkdtemp(report))
		rc = bad("cannot make %s for the records: %s", report,
			 strerror(errno));
	if (rc == CLI_RUN &&
	    cg_scope_enter_class(&scope, "run", p->limit, &o.dc, &p->dev, err,
				 sizeof(err)) < 0) {
		rmdir(report);
		rc = bad("%s", err);
	}
	if (rc != CLI_RUN) {
		free_plan(p);
		return rc;
	}
	status = run_program(&o, p, argv + dash + 1, report);
	end_leftovers(&scope);
	rc = cg_scope_leave(&scope) < 0;
	if (report_run(&o, p, argv[dash + 1], report, status))
		rc = 1;
	remove_dir(report);
	free_plan(p);
	if (rc)
		return rc;
	return WIFSIGNALED(status) ? 128 + WTERMSIG(status) :
				     WEXITSTATUS(status);
}
