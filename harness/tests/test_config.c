/* Bad input to resid_open (I-10): each is refused with one line that names
 * the value, and nothing is left open. Kernel conditions that this machine
 * does not have are made through a seam that wraps the Linux one. */
#include <CUnit/CUnit.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "resid_harness.h"
#include "seam.h"
#include "tests/suites.h"

static struct resid_seam fake;
static struct resid_harness knobs;
static int strip_minor, deny_backing, swap_on;

static int fake_api(void *ctx, int fd, struct uffdio_api *api)
{
	int rc = resid_seam_linux.uffd_api(ctx, fd, api);

	if (strip_minor && rc == 0)
		api->features &= ~(uint64_t)UFFD_FEATURE_MINOR_SHMEM;
	return rc;
}

static int fake_backing_open(void *ctx, const char *path, int direct,
			     uint64_t *size)
{
	if (deny_backing)
		return -EACCES;
	return resid_seam_linux.backing_open(ctx, path, direct, size);
}

static long fake_read_text(void *ctx, const char *path, char *buf, size_t cap)
{
	if (swap_on && !strcmp(path, "/proc/meminfo"))
		return snprintf(buf, cap,
				"MemTotal: 1000000 kB\n"
				"SwapTotal: 1048576 kB\n");
	return resid_seam_linux.read_text(ctx, path, buf, cap);
}

static void base(struct resid_config *c)
{
	resid_config_init(c);
	c->region_len = 8 << 20;
	c->chunk_size = 2 << 20;
	c->budget_bytes = 4 << 20;
	c->backing = RESID_BACKING_SYNTHETIC;
	resid_harness_init(&knobs);
	knobs.seam = &fake;
	c->harness = &knobs;
	strip_minor = deny_backing = swap_on = 0;
}

/* Opens, expects a refusal whose one line contains `needle`. */
static void refused(const struct resid_config *c, const char *needle)
{
	char err[RESID_ERRLEN];
	struct resid_region *r = resid_open(c, err);

	CU_ASSERT_PTR_NULL(r);
	if (r) {
		resid_close(r);
		return;
	}
	CU_ASSERT(strchr(err, '\n') == NULL);
	if (!strstr(err, needle)) {
		fprintf(stderr, "\n  expected '%s' in: %s\n", needle, err);
		CU_FAIL("error line does not name the problem");
	}
}

static void budget_zero_or_below_chunk(void)
{
	struct resid_config c;

	base(&c);
	c.budget_bytes = 0;
	refused(&c, "budget_bytes is 0");
	base(&c);
	c.budget_bytes = 1 << 20;
	refused(&c, "smaller than the largest chunk");
}

static void chunk_size_bad(void)
{
	struct resid_config c;

	base(&c);
	c.chunk_size = 5000;
	refused(&c, "5000");
	base(&c);
	c.chunk_size = 16 << 20;
	c.budget_bytes = 16 << 20;
	refused(&c, "larger than region_len");
	base(&c);
	c.fetch_piece = 6000;
	refused(&c, "fetch_piece 6000");
}

static void backing_file_problems(void)
{
	struct resid_config c;
	char path[] = "/tmp/residctl-test-XXXXXX";
	int fd = mkstemp(path);

	CU_ASSERT_FATAL(fd >= 0);
	CU_ASSERT_FATAL(ftruncate(fd, 1 << 20) == 0);
	close(fd);
	base(&c);
	c.backing = RESID_BACKING_FILE;
	c.path = path;
	refused(&c, "larger than the file");
	base(&c);
	c.backing = RESID_BACKING_FILE;
	c.path = "/nonexistent/residctl-weights.bin";
	refused(&c, "/nonexistent/residctl-weights.bin");
	base(&c);
	c.backing = RESID_BACKING_FILE;
	c.path = path;
	deny_backing = 1;
	refused(&c, "Permission denied");
	unlink(path);
}

static void swap_possible_refused(void)
{
	struct resid_config c;

	base(&c);
	swap_on = 1;
	refused(&c, "I-3");
}

static void kernel_without_minor_shmem(void)
{
	struct resid_config c;

	base(&c);
	strip_minor = 1;
	refused(&c, "UFFD_FEATURE_MINOR_SHMEM");
}

static void declared_sequence_out_of_range(void)
{
	static const uint32_t seq[] = { 0, 1, 7 };
	struct resid_config c;

	base(&c);
	c.declared_seq = seq;
	c.declared_len = 3;
	refused(&c, "7");
}

static void good_config_opens(void)
{
	struct resid_config c;
	char err[RESID_ERRLEN];

	base(&c);
	struct resid_region *r = resid_open(&c, err);

	CU_ASSERT_PTR_NOT_NULL(r);
	if (!r)
		fprintf(stderr, "\n  resid_open: %s\n", err);
	resid_close(r);
}

static int setup(void)
{
	fake = resid_seam_linux;
	fake.name = "test";
	fake.uffd_api = fake_api;
	fake.backing_open = fake_backing_open;
	fake.read_text = fake_read_text;
	return 0;
}

void suite_config(void)
{
	CU_pSuite s = CU_add_suite("config", setup, NULL);

	CU_add_test(s, "good config opens", good_config_opens);
	CU_add_test(s, "budget 0 or below a chunk", budget_zero_or_below_chunk);
	CU_add_test(s, "chunk size bad", chunk_size_bad);
	CU_add_test(s, "backing file problems", backing_file_problems);
	CU_add_test(s, "swap possible refused", swap_possible_refused);
	CU_add_test(s, "kernel without MINOR_SHMEM",
		    kernel_without_minor_shmem);
	CU_add_test(s, "declared sequence out of range",
		    declared_sequence_out_of_range);
}
