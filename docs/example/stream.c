/* A layer-streaming reader on libresid: maps a "model" file whose layers
 * are chunks of unequal size, reads every layer in order for a few tokens
 * under a budget of a third of the file, and checks what it read against
 * plain read() of the file. Build against the installed library:
 *
 *	cc stream.c $(pkg-config --cflags --libs resid) -o stream
 *	./stream model.bin
 *	./stream model.bin --shrink   (truncates the file to a third after
 *	                               resid_open: the report of a failure)
 *
 * A chunk the pager could not read (the file truncated or failing under
 * the region) raises SIGBUS where it is read, as mmap does: the handler
 * leaves the layer loop and the reader reports resid_failure().
 *
 * Exit 0 when every byte matched, 1 when not or on a failed chunk, 2 on
 * bad input. */
#include <errno.h>
#include <fcntl.h>
#include <resid.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PAGE 4096u
#define LAYERS 12
#define TOKENS 3

/* Layers of 1, 2 and 3 parts, page-aligned; the last ends with the file. */
static void make_layers(struct resid_chunk_spec *t, uint64_t size)
{
	uint64_t part = size / (2 * LAYERS) / PAGE * PAGE, off = 0;

	for (uint32_t i = 0; i < LAYERS; i++) {
		t[i].off = off;
		t[i].len = i + 1 < LAYERS ? part * (1 + i % 3) : size - off;
		off += t[i].len;
	}
}

static sigjmp_buf failed;
static void *volatile failed_at;

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	failed_at = si->si_addr;
	siglongjmp(failed, 1);
}

/* FNV-1a over a layer, as a stand-in for the layer's compute. */
static uint64_t compute(const uint8_t *p, uint64_t len, uint64_t h)
{
	for (uint64_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

/* Every layer in order, TOKENS times, the last token's hash in *out; -1
 * when a read raised SIGBUS. */
static int read_tokens(struct resid_region *r,
		       const struct resid_chunk_spec *layers, uint64_t *out)
{
	struct sigaction sa = { .sa_sigaction = on_sigbus,
				.sa_flags = SA_SIGINFO },
			 old;
	int rc = 0;

	sigaction(SIGBUS, &sa, &old);
	if (sigsetjmp(failed, 1))
		rc = -1;
	else
		for (int token = 0; token < TOKENS; token++) {
			uint64_t h = 0xcbf29ce484222325ull;

			for (uint32_t l = 0; l < LAYERS; l++) {
				/* BEFORE_READ: l is next */
				resid_notify_access(r, l);
				h = compute(resid_base(r) + layers[l].off,
					    layers[l].len, h);
			}
			*out = h;
		}
	sigaction(SIGBUS, &old, NULL);
	return rc;
}

static int file_hash(const char *path, const struct resid_chunk_spec *t,
		     uint64_t *h)
{
	int fd = open(path, O_RDONLY);
	uint8_t *buf = malloc(t[LAYERS - 1].off + t[LAYERS - 1].len);
	uint64_t size = t[LAYERS - 1].off + t[LAYERS - 1].len, got = 0;

	while (fd >= 0 && buf && got < size) {
		ssize_t n = read(fd, buf + got, size - got);

		if (n <= 0 && !(n < 0 && errno == EINTR))
			break;
		got += n > 0 ? (uint64_t)n : 0;
	}
	for (uint32_t i = 0; got == size && i < LAYERS; i++)
		*h = compute(buf + t[i].off, t[i].len, *h);
	free(buf);
	if (fd >= 0)
		close(fd);
	return got == size ? 0 : -1;
}

int main(int argc, char **argv)
{
	struct resid_chunk_spec layers[LAYERS];
	struct resid_config cfg;
	char err[RESID_ERRLEN];
	struct stat st;
	uint64_t mine = 0xcbf29ce484222325ull, want = mine;

	int shrink = argc == 3 && !strcmp(argv[2], "--shrink");

	if ((argc != 2 && !shrink) || stat(argv[1], &st) < 0 ||
	    (uint64_t)st.st_size < 2 * LAYERS * PAGE) {
		fprintf(stderr,
			"usage: stream FILE [--shrink] (a file of at "
			"least %u bytes)\n",
			2 * LAYERS * PAGE);
		return 2;
	}
	make_layers(layers, (uint64_t)st.st_size);
	resid_config_init(&cfg);
	cfg.backing = RESID_BACKING_FILE;
	cfg.path = argv[1];
	cfg.region_len = (uint64_t)st.st_size;
	cfg.table = layers;
	cfg.table_len = LAYERS;
	cfg.budget_bytes = (uint64_t)st.st_size / 3 / PAGE * PAGE;
	cfg.prefetch_depth = 1;

	struct resid_region *r = resid_open(&cfg, err);

	if (!r) {
		fprintf(stderr, "stream: %s\n", err);
		return 2;
	}
	uint32_t chunk;

	if (shrink && truncate(argv[1], st.st_size / 3) < 0) {
		fprintf(stderr, "stream: truncate %s: %s\n", argv[1],
			strerror(errno));
		resid_close(r);
		return 2;
	}
	if (read_tokens(r, layers, &mine) < 0) {
		int e = resid_failure(r, &chunk);

		fprintf(stderr,
			"stream: SIGBUS at offset %lld: chunk %u "
			"failed: %s\n",
			(long long)((const uint8_t *)failed_at - resid_base(r)),
			chunk, strerror(e));
		resid_close(r);
		return 1;
	}
	struct resid_stats s;
	int failed = resid_failure(r, &chunk);

	resid_get_stats(r, &s);
	resid_close(r);
	if (file_hash(argv[1], layers, &want) < 0) {
		fprintf(stderr, "stream: cannot read %s\n", argv[1]);
		return 2;
	}
	printf("stream: %d tokens over %d layers, %llu fetches, %llu "
	       "evictions, resident at most %llu of %llu bytes: %s\n",
	       TOKENS, LAYERS, (unsigned long long)s.fetches,
	       (unsigned long long)s.evictions,
	       (unsigned long long)s.resident_max, (unsigned long long)s.budget,
	       mine == want ? "match" : "MISMATCH");
	if (failed)
		fprintf(stderr, "stream: chunk %u failed: %s\n", chunk,
			strerror(failed));
	return mine == want && !failed ? 0 : 1;
}
