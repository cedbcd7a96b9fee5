/* llama-driver: a real engine run over a GGUF file, for the real-application
 * comparisons of design.md §11 (docs/engine.md). It links the prebuilt,
 * unmodified llama.cpp of the pinned npm package, loads the model with the
 * file memory-mapped and nothing copied out of the mapping (no repacking
 * into "extra buffer types", no mlock, no lazy or direct reads), decodes N
 * tokens greedily from a fixed prompt, and prints one JSON line: the token
 * ids, one FNV-1a 64 hash over the bytes of every step's logits, tokens/s,
 * the process's read_bytes and the load time.
 *
 * Two runs of the same model must agree on the ids and the hash to the bit:
 * that is the oracle when the model's bytes come through another mapping.
 * Exit 0 on success, 2 on bad arguments, 1 when the engine fails (one line
 * on stderr each). */
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ggml-backend.h"
#include "llama.h"

#define DEFAULT_PROMPT "The quick brown fox jumps over the lazy dog."
#define MAX_TOKENS 4096

static const char usage[] =
	"usage: llama-driver MODEL.gguf [--tokens N] [--threads T] [--prompt TEXT]\n"
	"                   [--json FILE] [--verbose]\n"
	"  Loads MODEL.gguf with llama.cpp (memory-mapped, no repacking, no mlock),\n"
	"  decodes N tokens greedily (argmax, ties to the lowest id) after the\n"
	"  prompt, and prints one JSON line: the ids, an FNV-1a 64 hash of every\n"
	"  step's logits bytes, tokens/s, read_bytes of /proc/self/io, the load\n"
	"  time. --tokens 1.."
	"4096 (default 16), --threads 1..256 (default 2),\n"
	"  --prompt (default \"" DEFAULT_PROMPT "\"), --json FILE: the\n"
	"  line written to FILE too, --verbose: llama.cpp's log on stderr.\n"
	"  Exit 0, 1 when the engine fails, 2 on bad arguments.\n";

static int verbose;
static char first_error[512]; /* llama.cpp's first error line: the cause */

static void log_cb(enum ggml_log_level level, const char *text, void *ud)
{
	(void)ud;
	if (level == GGML_LOG_LEVEL_ERROR && !first_error[0]) {
		size_t n = strlen(text);

		snprintf(first_error, sizeof(first_error), "%.*s",
			 (int)(n && text[n - 1] == '\n' ? n - 1 : n), text);
	}
	if (verbose)
		fputs(text, stderr);
}

/* One line on stderr, "llama-driver: " and the message, then the tail
 * ("; see --help", llama.cpp's first error), and exit with code. */
__attribute__((format(printf, 2, 3), noreturn)) static void
die(int code, const char *fmt, ...)
{
	va_list ap;

	fputs("llama-driver: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (code == 2)
		fputs("; see llama-driver --help", stderr);
	else if (first_error[0])
		fprintf(stderr, " (llama.cpp: %s)", first_error);
	fputc('\n', stderr);
	exit(code);
}

#define bad_arg(...) die(2, __VA_ARGS__)
#define engine_fail(...) die(1, __VA_ARGS__)

static long range_arg(const char *opt, const char *v, long lo, long hi)
{
	char *end;
	long x;

	errno = 0;
	x = strtol(v, &end, 10);
	if (errno || end == v || *end || x < lo || x > hi)
		bad_arg("bad %s '%s': give a whole number from %ld to %ld", opt,
			v, lo, hi);
	return x;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* read_bytes of /proc/self/io: what the block layer read for this process. */
static uint64_t read_bytes(void)
{
	FILE *f = fopen("/proc/self/io", "r");
	char line[128];
	unsigned long long v = 0;
	int found = 0;

	if (!f)
		engine_fail("cannot open /proc/self/io: %s", strerror(errno));
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "read_bytes: %llu", &v) == 1) {
			found = 1;
			break;
		}
	fclose(f);
	if (!found)
		engine_fail(
			"no read_bytes line in /proc/self/io (a kernel without task I/O accounting)");
	return v;
}

static uint64_t fnv1a64(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

/* The file name of the CPU backend ggml chose for this CPU (its kernels
 * decide the logits' bits), from /proc/self/maps; "?" when none shows. */
static void cpu_backend(char *out, size_t n)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[4608];

	snprintf(out, n, "?");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *p = strstr(line, "/libggml-cpu");

		if (p) {
			p[strcspn(p, "\n")] = '\0';
			snprintf(out, n, "%s", p + 1);
			break;
		}
	}
	fclose(f);
}

static void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

struct result {
	const char *model, *desc_in;
	char desc[128], backend[256];
	uint64_t hash, n_params, file_size, rb_load, rb_end;
	int32_t n_vocab, n_prompt, n_tokens, threads;
	llama_token *ids;
	double load_s, prompt_s, decode_s;
};

static void json_line(FILE *f, const struct result *r)
{
	double gen = r->prompt_s + r->decode_s;

	fputs("{\"model\":", f);
	json_string(f, r->model);
	fprintf(f, ",\"file_bytes\":%" PRIu64 ",\"desc\":", r->file_size);
	json_string(f, r->desc);
	fprintf(f, ",\"n_params\":%" PRIu64 ",\"n_vocab\":%d,\"cpu_backend\":",
		r->n_params, r->n_vocab);
	json_string(f, r->backend);
	fprintf(f,
		",\"threads\":%d,\"prompt_tokens\":%d,\"n_tokens\":%d,\"tokens\":[",
		r->threads, r->n_prompt, r->n_tokens);
	for (int i = 0; i < r->n_tokens; i++)
		fprintf(f, "%s%d", i ? "," : "", r->ids[i]);
	fprintf(f,
		"],\"logits_fnv1a64\":\"%016" PRIx64 "\",\"load_s\":%.3f,"
		"\"prompt_s\":%.3f,\"decode_s\":%.3f,\"tokens_per_s\":%.3f,"
		"\"read_bytes_load\":%" PRIu64 ",\"read_bytes\":%" PRIu64 "}\n",
		r->hash, r->load_s, r->prompt_s, r->decode_s,
		gen > 0 ? r->n_tokens / gen : 0.0, r->rb_load, r->rb_end);
}

/* The directory of the loaded libllama: the CPU backends lie beside it. */
static void backend_dir(char *out, size_t n)
{
	Dl_info info;
	char tmp[PATH_MAX];

	if (!dladdr((void *)llama_backend_init, &info) || !info.dli_fname)
		engine_fail("cannot find where libllama was loaded from");
	snprintf(tmp, sizeof(tmp), "%s", info.dli_fname);
	snprintf(out, n, "%s", dirname(tmp));
}

struct opts {
	const char *model, *prompt, *json;
};

/* The command line into o and r's sizes; a bad one exits 2 with its line. */
static void parse_args(int argc, char **argv, struct opts *o, struct result *r)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(usage, stdout);
			exit(0);
		} else if (!strcmp(a, "--verbose")) {
			verbose = 1;
		} else if (!strcmp(a, "--tokens") || !strcmp(a, "--threads") ||
			   !strcmp(a, "--prompt") || !strcmp(a, "--json")) {
			if (i + 1 == argc)
				bad_arg("%s needs a value", a);
			const char *v = argv[++i];

			if (!strcmp(a, "--tokens"))
				r->n_tokens = (int32_t)range_arg(a, v, 1,
								 MAX_TOKENS);
			else if (!strcmp(a, "--threads"))
				r->threads = (int32_t)range_arg(a, v, 1, 256);
			else if (!strcmp(a, "--prompt"))
				o->prompt = v;
			else
				o->json = v;
		} else if (a[0] == '-' && a[1]) {
			bad_arg("unknown option '%s'", a);
		} else if (o->model) {
			bad_arg("a second model '%s'; give one MODEL.gguf", a);
		} else {
			o->model = a;
		}
	}
}

/* The model a regular file, the prompt not empty, --json's directory
 * writable: refused before anything is loaded. */
static void check_args(const struct opts *o, struct result *r)
{
	struct stat st;

	if (!o->model)
		bad_arg("no MODEL.gguf given");
	if (!*o->prompt)
		bad_arg("an empty --prompt; give some text");
	if (stat(o->model, &st))
		bad_arg("model '%s': %s", o->model, strerror(errno));
	if (!S_ISREG(st.st_mode))
		bad_arg("model '%s' is not a regular file", o->model);
	if (o->json) {
		char tmp[PATH_MAX];

		snprintf(tmp, sizeof(tmp), "%s", o->json);
		if (access(dirname(tmp), W_OK))
			bad_arg("--json '%s': its directory is not writable (%s)",
				o->json, strerror(errno));
	}
	r->model = o->model;
	r->file_size = (uint64_t)st.st_size;
}

static struct llama_model *load_model(const char *path, struct result *r)
{
	char dir[PATH_MAX];

	llama_log_set(log_cb, NULL);
	backend_dir(dir, sizeof(dir));
	ggml_backend_load_all_from_path(dir);
	if (!ggml_backend_dev_by_type(GGML_BACKEND_DEVICE_TYPE_CPU))
		engine_fail("no CPU backend could be loaded from %s", dir);
	llama_backend_init();

	/* Every weight stays in the file's mapping: mmap without mlock, no
	 * lazy reads, no repacked copies, no devices but the CPU. */
	struct llama_model_params mp = llama_model_default_params();

	mp.n_gpu_layers = 0;
	mp.load_mode = LLAMA_LOAD_MODE_MMAP;
	mp.lazy_mode = LLAMA_LAZY_MODE_OFF;
	mp.use_extra_bufts = false;
	mp.check_tensors = false;

	double t0 = now();
	struct llama_model *model = llama_model_load_from_file(path, mp);

	r->load_s = now() - t0;
	if (!model)
		engine_fail("cannot load '%s'", path);
	r->rb_load = read_bytes();
	llama_model_desc(model, r->desc, sizeof(r->desc));
	r->n_params = llama_model_n_params(model);
	return model;
}

/* The prompt's tokens (*ptok, malloc'd) and a context that holds them
 * and the tokens to come. */
static struct llama_context *make_context(struct llama_model *model,
					  const char *prompt, struct result *r,
					  llama_token **ptok)
{
	const struct llama_vocab *vocab = llama_model_get_vocab(model);
	int32_t plen = (int32_t)strlen(prompt);

	*ptok = malloc(sizeof(**ptok) * ((size_t)plen + 8));
	r->n_vocab = llama_vocab_n_tokens(vocab);
	r->ids = malloc(sizeof(*r->ids) * (size_t)r->n_tokens);
	if (!*ptok || !r->ids)
		engine_fail("out of memory");
	r->n_prompt = llama_tokenize(vocab, prompt, plen, *ptok, plen + 8, true,
				     false);
	if (r->n_prompt <= 0)
		engine_fail("the prompt tokenized to %d tokens", r->n_prompt);

	struct llama_context_params cp = llama_context_default_params();

	cp.n_ctx = (uint32_t)(r->n_prompt + r->n_tokens + 16);
	cp.n_batch = (uint32_t)r->n_prompt;
	cp.n_ubatch = (uint32_t)r->n_prompt;
	cp.n_seq_max = 1;
	cp.n_threads = r->threads;
	cp.n_threads_batch = r->threads;
	cp.no_perf = true;

	struct llama_context *ctx = llama_init_from_model(model, cp);

	if (!ctx)
		engine_fail("cannot make a context of %u tokens for '%s'",
			    cp.n_ctx, r->model);
	return ctx;
}

/* Greedy decoding. Step k hashes the logits that choose token k: the
 * prompt's last position for k = 0, then the previous chosen token's. */
static void generate(struct llama_context *ctx, llama_token *ptok,
		     struct result *r)
{
	uint64_t h = 0xcbf29ce484222325ull;
	double t1 = now(), t2 = t1;
	llama_token tok;

	if (llama_decode(ctx, llama_batch_get_one(ptok, r->n_prompt)))
		engine_fail("decoding the prompt of %d tokens failed",
			    r->n_prompt);
	for (int k = 0; k < r->n_tokens; k++) {
		const float *logits;
		int best = 0;

		if (k == 0)
			t2 = now();
		else if (llama_decode(ctx, llama_batch_get_one(&tok, 1)))
			engine_fail("decoding step %d failed", k);
		logits = llama_get_logits_ith(ctx, -1);
		if (!logits)
			engine_fail("no logits at step %d", k);
		for (int j = 0; j < r->n_vocab; j++) {
			if (!isfinite(logits[j]))
				engine_fail("step %d: the logit of token %d is %f; the model's weights overflow",
					    k, j, (double)logits[j]);
			if (logits[j] > logits[best])
				best = j;
		}
		h = fnv1a64(h, logits, sizeof(*logits) * (size_t)r->n_vocab);
		r->ids[k] = tok = best;
	}
	r->prompt_s = t2 - t1;
	r->decode_s = now() - t2;
	r->hash = h;
	r->rb_end = read_bytes();
}

static void write_result(const char *json, const struct result *r)
{
	json_line(stdout, r);
	fflush(stdout);
	if (json) {
		FILE *f = fopen(json, "w");

		if (!f)
			engine_fail("cannot write %s: %s", json,
				    strerror(errno));
		json_line(f, r);
		if (fclose(f))
			engine_fail("cannot write %s: %s", json,
				    strerror(errno));
	}
}

int main(int argc, char **argv)
{
	struct opts o = { .prompt = DEFAULT_PROMPT };
	struct result r = { .n_tokens = 16, .threads = 2 };
	llama_token *ptok;

	parse_args(argc, argv, &o, &r);
	check_args(&o, &r);

	struct llama_model *model = load_model(o.model, &r);
	struct llama_context *ctx = make_context(model, o.prompt, &r, &ptok);

	generate(ctx, ptok, &r);
	cpu_backend(r.backend, sizeof(r.backend));
	write_result(o.json, &r);
	llama_free(ctx);
	llama_model_free(model);
	llama_backend_free();
	free(ptok);
	free(r.ids);
	return 0;
}
