/* cgroupfs.c against fake cgroup trees (v1, v2, hybrid) built under a
 * temporary directory (cgroup_scope.c against a real hierarchy is
 * test_cgroup_live.c). */
#include <CUnit/CUnit.h>
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup/cgroup_limits.h"
#include "cgroupfs.h"
#include "seam.h"
#include "tests/suites.h"

#define MiB (1ULL << 20)
#define V1_UNLIMITED "9223372036854771712\n"

struct fake {
	char root[PATH_MAX];
	char cgroup[PATH_MAX], mountinfo[PATH_MAX], meminfo[PATH_MAX];
	struct cg_env env;
};

/* The tree of the running test: a fatal assertion skips its fake_free, so
 * the next fake_new and the suite's cleanup remove it. */
static char live_root[PATH_MAX];

/* snprintf that fails the test instead of truncating. */
__attribute__((format(printf, 3, 4))) static void fmt(char *buf, size_t n,
						      const char *f, ...)
{
	va_list ap;
	int w;

	va_start(ap, f);
	w = vsnprintf(buf, n, f, ap);
	va_end(ap);
	CU_ASSERT_FATAL(w >= 0 && (size_t)w < n);
}

static void mkdir_p(char *path)
{
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		CU_ASSERT_FATAL(mkdir(path, 0755) == 0 || errno == EEXIST);
		*p = '/';
	}
	CU_ASSERT_FATAL(mkdir(path, 0755) == 0 || errno == EEXIST);
}

/* Writes <root>/<rel>, making its directories. */
static void put(const struct fake *f, const char *rel, const char *text)
{
	char path[PATH_MAX];
	FILE *fp;

	fmt(path, sizeof(path), "%s/%s", f->root, rel);
	*strrchr(path, '/') = '\0';
	mkdir_p(path);
	path[strlen(path)] = '/';
	fp = fopen(path, "w");
	CU_ASSERT_PTR_NOT_NULL_FATAL(fp);
	CU_ASSERT_FATAL(fputs(text, fp) >= 0);
	CU_ASSERT_FATAL(fclose(fp) == 0);
}

static int rm_one(const char *path, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return flag == FTW_DP ? rmdir(path) : unlink(path);
}

static int drop_live_root(void)
{
	int rc = 0;

	if (live_root[0])
		rc = nftw(live_root, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	live_root[0] = '\0';
	return rc;
}

static void fake_new(struct fake *f)
{
	CU_ASSERT_EQUAL(drop_live_root(), 0);
	strcpy(f->root, "/tmp/residctl-cgtest.XXXXXX");
	CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(f->root));
	strcpy(live_root, f->root);
	fmt(f->cgroup, sizeof(f->cgroup), "%s/proc/self/cgroup", f->root);
	fmt(f->mountinfo, sizeof(f->mountinfo), "%s/proc/self/mountinfo",
	    f->root);
	fmt(f->meminfo, sizeof(f->meminfo), "%s/proc/meminfo", f->root);
	cg_env_init(&f->env, resid_seam_linux.read_text, resid_seam_linux.ctx);
	f->env.proc_self_cgroup = f->cgroup;
	f->env.mountinfo = f->mountinfo;
	f->env.meminfo = f->meminfo;
	put(f, "proc/meminfo",
	    "MemTotal:       16384000 kB\nSwapTotal:       1048576 kB\nSwapFree:        1048576 kB\n");
}

static void fake_free(struct fake *f)
{
	CU_ASSERT_STRING_EQUAL(f->root, live_root);
	CU_ASSERT_EQUAL(drop_live_root(), 0);
}

static int suite_clean(void)
{
	return drop_live_root() ? -1 : 0;
}

/* The mountinfo lines; %1$s is the fake root. */
static void put_mountinfo(struct fake *f, const char *layout)
{
	char text[4096];

	fmt(text, sizeof(text), layout, f->root);
	put(f, "proc/self/mountinfo", text);
}

/* v1 memory at "memory v1" (a space, escaped in mountinfo); with hybrid, a
 * cgroup2 mount without memory as well (this project's machines). */
static void layout_v1(struct fake *f, int hybrid)
{
	put_mountinfo(
		f,
		hybrid ?
			"31 23 0:28 / %1$s/sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
			"32 31 0:29 / %1$s/sys/fs/cgroup/cpu rw,relatime shared:5 - cgroup cgroup rw,cpu\n"
			"35 31 0:32 / %1$s/sys/fs/cgroup/memory\\040v1 rw,relatime shared:8 - cgroup cgroup rw,memory\n"
			"41 31 0:38 / %1$s/sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n" :
			"31 23 0:28 / %1$s/sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
			"35 31 0:32 / %1$s/sys/fs/cgroup/memory\\040v1 rw,relatime - cgroup cgroup rw,memory\n");
	put(f, "proc/self/cgroup",
	    "5:devices:/\n4:memory:/app/job\n1:cpu:/\n0::/\n");
	put(f, "sys/fs/cgroup/unified/cgroup.controllers", "hugetlb\n");
	put(f, "sys/fs/cgroup/memory v1/app/job/memory.limit_in_bytes",
	    "67108864\n");
	put(f, "sys/fs/cgroup/memory v1/app/job/memory.memsw.limit_in_bytes",
	    "67108864\n");
	put(f, "sys/fs/cgroup/memory v1/app/job/memory.stat",
	    "cache 12288\nrss 0\nshmem 4096\nmapped_file 0\ntotal_cache 12288\ntotal_shmem 8192\n");
}

static void layout_v2(struct fake *f)
{
	put_mountinfo(
		f,
		"30 1 0:26 / %1$s/sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot\n");
	put(f, "proc/self/cgroup", "0::/user.slice/job\n");
	put(f, "sys/fs/cgroup/user.slice/job/cgroup.controllers",
	    "cpu io memory pids\n");
	put(f, "sys/fs/cgroup/user.slice/job/memory.max", "max\n");
	put(f, "sys/fs/cgroup/user.slice/job/memory.swap.max", "0\n");
	put(f, "sys/fs/cgroup/user.slice/job/memory.stat",
	    "anon 0\nfile 8192\nshmem_thp 0\nshmem 12288\n");
}

static void path_of(const struct fake *f, const char *rel, char *out)
{
	fmt(out, PATH_MAX, "%s/%s", f->root, rel);
}

static void test_find_v1(void)
{
	struct fake f;
	struct cg_memory m;
	char err[512], dir[PATH_MAX];

	fake_new(&f);
	layout_v1(&f, 0);
	CU_ASSERT_EQUAL_FATAL(cg_find_memory(&f.env, &m, err, sizeof(err)), 0);
	path_of(&f, "sys/fs/cgroup/memory v1/app/job", dir);
	CU_ASSERT_EQUAL(m.version, CG_V1);
	CU_ASSERT_STRING_EQUAL(m.dir, dir);
	CU_ASSERT_STRING_EQUAL(m.rel, "/app/job");
	CU_ASSERT_EQUAL(m.limit, 64 * MiB);
	CU_ASSERT_EQUAL(m.swap_limit, 64 * MiB);
	CU_ASSERT_EQUAL(m.has_swap_file, 1);
	CU_ASSERT_EQUAL(m.swap_total, 1048576ULL * 1024);
	fake_free(&f);
}

static void test_find_hybrid(void)
{
	struct fake f;
	struct cg_memory m;
	char err[512], dir[PATH_MAX];

	fake_new(&f);
	layout_v1(&f, 1);
	CU_ASSERT_EQUAL_FATAL(cg_find_memory(&f.env, &m, err, sizeof(err)), 0);
	path_of(&f, "sys/fs/cgroup/memory v1/app/job", dir);
	CU_ASSERT_EQUAL(m.version, CG_V1);
	CU_ASSERT_STRING_EQUAL(m.dir, dir);

	/* with memory on the v2 side, v2 wins */
	put(&f, "sys/fs/cgroup/unified/cgroup.controllers", "memory hugetlb\n");
	put(&f, "sys/fs/cgroup/unified/memory.stat", "shmem 0\n");
	CU_ASSERT_EQUAL_FATAL(cg_find_memory(&f.env, &m, err, sizeof(err)), 0);
	path_of(&f, "sys/fs/cgroup/unified", dir);
	CU_ASSERT_EQUAL(m.version, CG_V2);
	CU_ASSERT_STRING_EQUAL(m.dir, dir);
	CU_ASSERT_STRING_EQUAL(m.rel, "/");
	/* the v2 root has no limit files: unlimited, no swap file */
	CU_ASSERT_EQUAL(m.limit, CG_UNLIMITED);
	CU_ASSERT_EQUAL(m.has_swap_file, 0);
	fake_free(&f);
}

static void test_find_v2(void)
{
	struct fake f;
	struct cg_memory m;
	char err[512], dir[PATH_MAX];

	fake_new(&f);
	layout_v2(&f);
	CU_ASSERT_EQUAL_FATAL(cg_find_memory(&f.env, &m, err, sizeof(err)), 0);
	path_of(&f, "sys/fs/cgroup/user.slice/job", dir);
	CU_ASSERT_EQUAL(m.version, CG_V2);
	CU_ASSERT_STRING_EQUAL(m.dir, dir);
	CU_ASSERT_EQUAL(m.limit, CG_UNLIMITED);
	CU_ASSERT_EQUAL(m.swap_limit, 0);
	CU_ASSERT_EQUAL(m.has_swap_file, 1);

	/* without memory in cgroup.controllers and no v1: none */
	put(&f, "sys/fs/cgroup/user.slice/job/cgroup.controllers", "cpu io\n");
	CU_ASSERT_EQUAL_FATAL(cg_find_memory(&f.env, &m, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(m.version, CG_NONE);
	CU_ASSERT_EQUAL(m.swap_total, 1048576ULL * 1024);
	fake_free(&f);
}

/* A mount whose root is a subtree (a bind mount, a container). */
static void test_find_mount_root(void)
{
	struct fake f;
	struct cg_memory m;
	char err[512], dir[PATH_MAX];

	fake_new(&f);
	layout_v2(&f);
	put_mountinfo(
		&f,
		"30 1 0:26 /user.slice %1$s/sys/fs/cgroup rw - cgroup2 cgroup2 rw\n");
	put(&f, "sys/fs/cgroup/job/cgroup.controllers", "memory\n");
	put(&f, "sys/fs/cgroup/job/memory.max", "1073741824\n");
	CU_ASSERT_EQUAL_FATAL(cg_find_memory(&f.env, &m, err, sizeof(err)), 0);
	path_of(&f, "sys/fs/cgroup/job", dir);
	CU_ASSERT_STRING_EQUAL(m.dir, dir);
	CU_ASSERT_STRING_EQUAL(m.rel, "/job");
	CU_ASSERT_EQUAL(m.limit, 1024 * MiB);
	CU_ASSERT_EQUAL(m.has_swap_file, 0);

	put(&f, "proc/self/cgroup", "0::/system.slice/x\n");
	CU_ASSERT_EQUAL(cg_find_memory(&f.env, &m, err, sizeof(err)), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "outside the root /user.slice"));
	fake_free(&f);
}

/* I-10: every malformed or missing input is an error naming its file. */
static void test_find_malformed(void)
{
	struct fake f;
	struct cg_memory m;
	char err[512];

	fake_new(&f);
	layout_v1(&f, 1);

	put_mountinfo(&f, "31 23 0:28 / %1$s/x rw,relatime\n");
	CU_ASSERT_EQUAL(cg_find_memory(&f.env, &m, err, sizeof(err)), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, f.mountinfo));
	layout_v1(&f, 1);

	put(&f, "proc/self/cgroup", "4:memory\n");
	CU_ASSERT_EQUAL(cg_find_memory(&f.env, &m, err, sizeof(err)), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, f.cgroup));
	put(&f, "proc/self/cgroup", "x:memory:/app\n");
	CU_ASSERT_EQUAL(cg_find_memory(&f.env, &m, err, sizeof(err)), -1);
	put(&f, "proc/self/cgroup", "4:memory:app\n");
	CU_ASSERT_EQUAL(cg_find_memory(&f.env, &m, err, sizeof(err)), -1);
	put(&f, "proc/self/cgroup", "1:cpu:/\n0::/\n");
	CU_ASSERT_EQUAL(cg_find_memory(&f.env, &m, err, sizeof(err)), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "no memory line"));
	layout_v1(&f, 1);

	put(&f, "sys/fs/cgroup/memory v1/app/job/memory.limit_in_bytes",
	    "64M\n");
	CU_ASSERT_EQUAL(cg_find_memory(&f.env, &m, err, sizeof(err)), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "memory.limit_in_bytes"));
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "64M"));
	put(&f, "sys/fs/cgroup/memory v1/app/job/memory.limit_in_bytes",
	    "67108864\n");
	put(&f, "sys/fs/cgroup/memory v1/app/job/memory.memsw.limit_in_bytes",
	    "\n");
	CU_ASSERT_EQUAL(cg_find_memory(&f.env, &m, err, sizeof(err)), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "memory.memsw.limit_in_bytes"));
	layout_v1(&f, 1);

	put(&f, "proc/meminfo", "MemTotal: 1 kB\n");
	CU_ASSERT_EQUAL(cg_find_memory(&f.env, &m, err, sizeof(err)), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, f.meminfo));
	put(&f, "proc/meminfo", "SwapTotal: 12 MB\n");
	CU_ASSERT_EQUAL(cg_find_memory(&f.env, &m, err, sizeof(err)), -1);
	put(&f, "proc/meminfo", "SwapTotal: 0 kB\n");
	CU_ASSERT_EQUAL(cg_find_memory(&f.env, &m, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(m.swap_total, 0);

	/* a non-root memory cgroup without its limit file */
	fmt(err, sizeof(err),
	    "%s/sys/fs/cgroup/memory v1/app/job/memory.limit_in_bytes", f.root);
	CU_ASSERT_EQUAL_FATAL(unlink(err), 0);
	CU_ASSERT_EQUAL(cg_find_memory(&f.env, &m, err, sizeof(err)), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "no such file"));
	fake_free(&f);
}

static void test_parse_limit(void)
{
	uint64_t v;
	char buf[24];

	CU_ASSERT_EQUAL(cg_parse_limit(CG_V2, "max\n", &v), 0);
	CU_ASSERT_EQUAL(v, CG_UNLIMITED);
	CU_ASSERT_EQUAL(cg_parse_limit(CG_V1, "max\n", &v), -1);
	CU_ASSERT_EQUAL(cg_parse_limit(CG_V1, V1_UNLIMITED, &v), 0);
	CU_ASSERT_EQUAL(v, CG_UNLIMITED);
	/* 64 KiB pages report a lower unlimited */
	CU_ASSERT_EQUAL(cg_parse_limit(CG_V1, "9223372036854710272", &v), 0);
	CU_ASSERT_EQUAL(v, CG_UNLIMITED);
	CU_ASSERT_EQUAL(cg_parse_limit(CG_V2, V1_UNLIMITED, &v), 0);
	CU_ASSERT_EQUAL(v, 9223372036854771712ULL);
	CU_ASSERT_EQUAL(cg_parse_limit(CG_V1, "67108864\n", &v), 0);
	CU_ASSERT_EQUAL(v, 64 * MiB);
	CU_ASSERT_EQUAL(cg_parse_limit(CG_V2, "0\n", &v), 0);
	CU_ASSERT_EQUAL(v, 0);
	CU_ASSERT_EQUAL(cg_parse_limit(CG_V2, "", &v), -1);
	CU_ASSERT_EQUAL(cg_parse_limit(CG_V2, "\n", &v), -1);
	CU_ASSERT_EQUAL(cg_parse_limit(CG_V2, "12ab\n", &v), -1);
	CU_ASSERT_EQUAL(cg_parse_limit(CG_V2, "maxi\n", &v), -1);
	CU_ASSERT_EQUAL(cg_parse_limit(CG_V1, "-1\n", &v), -1);
	CU_ASSERT_EQUAL(cg_parse_limit(CG_V1, " 5\n", &v), -1);
	CU_ASSERT_EQUAL(cg_parse_limit(CG_V1, "18446744073709551616", &v), -1);
	CU_ASSERT_EQUAL(cg_parse_limit(CG_NONE, "5", &v), -1);

	CU_ASSERT_EQUAL(cg_format_limit(CG_V2, CG_UNLIMITED, buf, sizeof(buf)),
			0);
	CU_ASSERT_STRING_EQUAL(buf, "max");
	CU_ASSERT_EQUAL(cg_format_limit(CG_V1, CG_UNLIMITED, buf, sizeof(buf)),
			0);
	CU_ASSERT_STRING_EQUAL(buf, "-1");
	CU_ASSERT_EQUAL(cg_format_limit(CG_V1, 64 * MiB, buf, sizeof(buf)), 0);
	CU_ASSERT_STRING_EQUAL(buf, "67108864");
	CU_ASSERT_EQUAL(cg_format_limit(CG_V1, 64 * MiB, buf, 4), -1);

	CU_ASSERT_STRING_EQUAL(cg_limit_file(CG_V1), "memory.limit_in_bytes");
	CU_ASSERT_STRING_EQUAL(cg_swap_file(CG_V1),
			       "memory.memsw.limit_in_bytes");
	CU_ASSERT_STRING_EQUAL(cg_limit_file(CG_V2), "memory.max");
	CU_ASSERT_STRING_EQUAL(cg_swap_file(CG_V2), "memory.swap.max");
	CU_ASSERT_PTR_NULL(cg_limit_file(CG_NONE));
	CU_ASSERT_PTR_NULL(cg_swap_file(CG_NONE));
}

static struct cg_memory mem(int version, uint64_t limit, uint64_t swap_limit,
			    int has_swap_file, uint64_t swap_total)
{
	struct cg_memory m;

	memset(&m, 0, sizeof(m));
	m.version = version;
	strcpy(m.dir, "/sys/fs/cgroup/x");
	strcpy(m.rel, "/x");
	m.limit = limit;
	m.swap_limit = swap_limit;
	m.has_swap_file = has_swap_file;
	m.swap_total = swap_total;
	return m;
}

static void test_swap_check(void)
{
	const uint64_t G = 1024 * MiB;
	struct cg_memory m;
	char why[512];

	m = mem(CG_V2, 64 * MiB, 0, 1, G);
	CU_ASSERT_EQUAL(cg_swap_check(&m, why, sizeof(why)),
			CG_SWAP_V2_MAX_ZERO);
	m = mem(CG_V2, 64 * MiB, G, 1, G);
	CU_ASSERT_EQUAL(cg_swap_check(&m, why, sizeof(why)), -1);
	CU_ASSERT_STRING_EQUAL(
		why,
		"swap is possible for this cgroup: set /sys/fs/cgroup/x/memory.swap.max to 0");
	m = mem(CG_V2, 64 * MiB, CG_UNLIMITED, 1, G);
	CU_ASSERT_EQUAL(cg_swap_check(&m, why, sizeof(why)), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "memory.swap.max to 0"));

	m = mem(CG_V1, 64 * MiB, 64 * MiB, 1, G);
	CU_ASSERT_EQUAL(cg_swap_check(&m, why, sizeof(why)),
			CG_SWAP_V1_MEMSW_EQ_LIMIT);
	m = mem(CG_V1, 64 * MiB, 128 * MiB, 1, G);
	CU_ASSERT_EQUAL(cg_swap_check(&m, why, sizeof(why)), -1);
	CU_ASSERT_STRING_EQUAL(
		why,
		"swap is possible for this cgroup: set /sys/fs/cgroup/x/memory.memsw.limit_in_bytes to 67108864 (its memory.limit_in_bytes)");
	/* unlimited == unlimited forbids nothing */
	m = mem(CG_V1, CG_UNLIMITED, CG_UNLIMITED, 1, G);
	CU_ASSERT_EQUAL(cg_swap_check(&m, why, sizeof(why)), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "memory.limit_in_bytes to a limit"));
	m = mem(CG_V1, 64 * MiB, CG_UNLIMITED, 0, G);
	CU_ASSERT_EQUAL(cg_swap_check(&m, why, sizeof(why)), -1);
	CU_ASSERT_PTR_NOT_NULL(
		strstr(why, "has no memory.memsw.limit_in_bytes"));

	/* no swap at all: any cgroup will do */
	m = mem(CG_V2, CG_UNLIMITED, CG_UNLIMITED, 1, 0);
	CU_ASSERT_EQUAL(cg_swap_check(&m, why, sizeof(why)),
			CG_SWAP_NONE_CONFIGURED);
	m = mem(CG_V1, CG_UNLIMITED, CG_UNLIMITED, 0, 0);
	CU_ASSERT_EQUAL(cg_swap_check(&m, why, sizeof(why)),
			CG_SWAP_NONE_CONFIGURED);
	m = mem(CG_NONE, CG_UNLIMITED, CG_UNLIMITED, 0, 0);
	CU_ASSERT_EQUAL(cg_swap_check(&m, why, sizeof(why)),
			CG_SWAP_NONE_CONFIGURED);
	m = mem(CG_NONE, CG_UNLIMITED, CG_UNLIMITED, 0, G);
	CU_ASSERT_EQUAL(cg_swap_check(&m, why, sizeof(why)), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "no memory cgroup"));

	/* the roots cannot forbid swap: no advice to set their files */
	m = mem(CG_V2, CG_UNLIMITED, CG_UNLIMITED, 0, G);
	strcpy(m.rel, "/");
	CU_ASSERT_EQUAL(cg_swap_check(&m, why, sizeof(why)), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "root memory cgroup"));
	CU_ASSERT_PTR_NULL(strstr(why, "memory.swap.max"));
	m = mem(CG_V1, CG_UNLIMITED, CG_UNLIMITED, 1, G);
	strcpy(m.rel, "/");
	CU_ASSERT_EQUAL(cg_swap_check(&m, why, sizeof(why)), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(why, "child cgroup that forbids swap"));
	CU_ASSERT_PTR_NULL(strstr(why, "limit_in_bytes"));

	CU_ASSERT_STRING_EQUAL(cg_swap_cond_name(CG_SWAP_V2_MAX_ZERO),
			       "v2_swap_max_0");
	CU_ASSERT_STRING_EQUAL(cg_swap_cond_name(CG_SWAP_V1_MEMSW_EQ_LIMIT),
			       "v1_memsw_eq_limit");
	CU_ASSERT_STRING_EQUAL(cg_swap_cond_name(CG_SWAP_NONE_CONFIGURED),
			       "no_swap_configured");
}

static long eio_read(void *ctx, const char *path, char *buf, size_t cap)
{
	(void)ctx;
	(void)path;
	(void)buf;
	(void)cap;
	return -EIO;
}

static void test_shmem(void)
{
	struct fake f;
	struct cg_memory m;
	struct cg_env broken;
	char err[512];
	const char *key;
	uint64_t v;

	fake_new(&f);
	layout_v1(&f, 1);
	CU_ASSERT_EQUAL_FATAL(cg_find_memory(&f.env, &m, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(cg_read_shmem(&f.env, &m, &v), 0);
	CU_ASSERT_EQUAL(v, 8192); /* total_shmem, not shmem */
	put(&f, "sys/fs/cgroup/memory v1/app/job/memory.stat",
	    "cache 0\nshmem 4096\n");
	CU_ASSERT_EQUAL(cg_read_shmem(&f.env, &m, &v), 0);
	CU_ASSERT_EQUAL(v, 4096);
	put(&f, "sys/fs/cgroup/memory v1/app/job/memory.stat",
	    "cache 0\nshmem_thp 4096\n");
	CU_ASSERT_EQUAL(cg_read_shmem(&f.env, &m, &v), -EBADMSG);
	put(&f, "sys/fs/cgroup/memory v1/app/job/memory.stat",
	    "shmem 4096\ntotal_shmem 81x92\n");
	CU_ASSERT_EQUAL(cg_read_shmem(&f.env, &m, &v), -EBADMSG);
	broken = f.env;
	broken.read_text = eio_read;
	CU_ASSERT_EQUAL(cg_read_shmem(&broken, &m, &v), -EIO);
	fake_free(&f);

	fake_new(&f);
	layout_v2(&f);
	CU_ASSERT_EQUAL_FATAL(cg_find_memory(&f.env, &m, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(cg_read_shmem(&f.env, &m, &v), 0);
	CU_ASSERT_EQUAL(v, 12288);
	/* v2 has no total_shmem; a v1 key must not be taken */
	CU_ASSERT_EQUAL(cg_stat_shmem(CG_V2, "total_shmem 5\n", &v, &key), -1);
	CU_ASSERT_EQUAL(cg_stat_shmem(CG_V2, "file 1\nshmem 7", &v, &key), 0);
	CU_ASSERT_EQUAL(v, 7);
	CU_ASSERT_STRING_EQUAL(key, "shmem");
	CU_ASSERT_EQUAL(cg_stat_shmem(CG_V2, "shmem -7\n", &v, &key), -1);
	CU_ASSERT_EQUAL(cg_stat_shmem(CG_V2, "shmem\n", &v, &key), -1);
	put(&f, "sys/fs/cgroup/user.slice/job/memory.stat", "anon 0\n");
	CU_ASSERT_EQUAL(cg_read_shmem(&f.env, &m, &v), -EBADMSG);
	fake_free(&f);
}

static void test_flush_tolerance(void)
{
	const uint64_t page = 4096;

	CU_ASSERT_EQUAL(cg_flush_tolerance("6.18.44-fc-v669", 2),
			128 * page * 2);
	CU_ASSERT_EQUAL(cg_flush_tolerance("6.1.0-18-amd64", 8),
			128 * page * 8);
	CU_ASSERT_EQUAL(cg_flush_tolerance("6.0.19", 4), 96 * page * 4);
	CU_ASSERT_EQUAL(cg_flush_tolerance("5.15.0-91-generic", 4),
			96 * page * 4);
	CU_ASSERT_EQUAL(cg_flush_tolerance("5.10.0-28-amd64", 4),
			128 * page * 4);
	CU_ASSERT_EQUAL(cg_flush_tolerance("4.19.0", 1), 128 * page);
	CU_ASSERT_EQUAL(cg_flush_tolerance("linux", 3), 128 * page * 3);
	CU_ASSERT_EQUAL(cg_flush_tolerance("5", 3), 128 * page * 3);
	CU_ASSERT_EQUAL(cg_flush_tolerance(NULL, 1), 128 * page);
	CU_ASSERT_EQUAL(cg_flush_tolerance("6.6.1", 0), 128 * page);
}

static void test_limit_writes(void)
{
	struct cg_write w[CG_MAX_WRITES];
	struct cg_memory m;

	/* v1 lowering from unlimited: limit first, memsw second */
	m = mem(CG_V1, CG_UNLIMITED, CG_UNLIMITED, 1, 1);
	CU_ASSERT_EQUAL_FATAL(cg_limit_writes(&m, 64 * MiB, w), 2);
	CU_ASSERT_STRING_EQUAL(w[0].file, "memory.limit_in_bytes");
	CU_ASSERT_STRING_EQUAL(w[0].value, "67108864");
	CU_ASSERT_STRING_EQUAL(w[1].file, "memory.memsw.limit_in_bytes");
	CU_ASSERT_STRING_EQUAL(w[1].value, "67108864");
	/* v1 raising past memsw: memsw first */
	m = mem(CG_V1, 32 * MiB, 32 * MiB, 1, 1);
	CU_ASSERT_EQUAL_FATAL(cg_limit_writes(&m, 64 * MiB, w), 2);
	CU_ASSERT_STRING_EQUAL(w[0].file, "memory.memsw.limit_in_bytes");
	CU_ASSERT_STRING_EQUAL(w[1].file, "memory.limit_in_bytes");
	/* v1 without swap accounting: the limit alone */
	m = mem(CG_V1, CG_UNLIMITED, CG_UNLIMITED, 0, 0);
	CU_ASSERT_EQUAL_FATAL(cg_limit_writes(&m, 64 * MiB, w), 1);
	CU_ASSERT_STRING_EQUAL(w[0].file, "memory.limit_in_bytes");
	/* v2: swap forbidden first */
	m = mem(CG_V2, CG_UNLIMITED, CG_UNLIMITED, 1, 1);
	CU_ASSERT_EQUAL_FATAL(cg_limit_writes(&m, 64 * MiB, w), 2);
	CU_ASSERT_STRING_EQUAL(w[0].file, "memory.swap.max");
	CU_ASSERT_STRING_EQUAL(w[0].value, "0");
	CU_ASSERT_STRING_EQUAL(w[1].file, "memory.max");
	CU_ASSERT_STRING_EQUAL(w[1].value, "67108864");

	CU_ASSERT_EQUAL(cg_limit_writes(&m, 0, w), -1);
	CU_ASSERT_EQUAL(cg_limit_writes(&m, 64 * MiB + 1, w), -1);
	CU_ASSERT_EQUAL(cg_limit_writes(&m, CG_UNLIMITED, w), -1);
	m = mem(CG_NONE, CG_UNLIMITED, CG_UNLIMITED, 0, 1);
	CU_ASSERT_EQUAL(cg_limit_writes(&m, 64 * MiB, w), -1);
}

static uint64_t read_value(const struct cg_memory *m, const char *file)
{
	char path[PATH_MAX], text[64];
	FILE *fp;
	uint64_t v = 0;

	fmt(path, sizeof(path), "%s/%s", m->dir, file);
	fp = fopen(path, "r");
	CU_ASSERT_PTR_NOT_NULL_FATAL(fp);
	CU_ASSERT_PTR_NOT_NULL_FATAL(fgets(text, sizeof(text), fp));
	CU_ASSERT_EQUAL(fclose(fp), 0);
	CU_ASSERT_EQUAL_FATAL(cg_parse_limit(m->version, text, &v), 0);
	return v;
}

/* Plain file writes into the fake tree, refusing what a v1 kernel refuses
 * (limit above memsw, memsw below limit) at every step. */
static void apply(const struct cg_memory *m, const struct cg_write *w, int nw)
{
	char path[PATH_MAX];
	FILE *fp;

	for (int i = 0; i < nw; i++) {
		uint64_t v;

		CU_ASSERT_EQUAL_FATAL(cg_parse_limit(m->version, w[i].value,
						     &v),
				      0);
		if (m->version == CG_V1 && m->has_swap_file) {
			int is_limit = !strcmp(w[i].file, cg_limit_file(CG_V1));
			uint64_t other =
				read_value(m, is_limit ? cg_swap_file(CG_V1) :
							 cg_limit_file(CG_V1));

			CU_ASSERT_FATAL(is_limit ? v <= other : v >= other);
		}
		fmt(path, sizeof(path), "%s/%s", m->dir, w[i].file);
		fp = fopen(path, "w");
		CU_ASSERT_PTR_NOT_NULL_FATAL(fp);
		CU_ASSERT_FATAL(fprintf(fp, "%s\n", w[i].value) > 0);
		CU_ASSERT_FATAL(fclose(fp) == 0);
	}
}

/* The mapping end to end: the writes for a limit, applied, read back, I-3. */
static void set_and_check(struct fake *f, struct cg_memory *m, uint64_t limit,
			  int cond)
{
	struct cg_write w[CG_MAX_WRITES];
	char err[512];
	int nw = cg_limit_writes(m, limit, w);

	CU_ASSERT_EQUAL_FATAL(nw, 2);
	apply(m, w, nw);
	CU_ASSERT_EQUAL_FATAL(cg_read_limits(&f->env, m, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(m->limit, limit);
	CU_ASSERT_EQUAL(cg_swap_check(m, err, sizeof(err)), cond);
}

static void test_mapping_end_to_end(void)
{
	struct fake f;
	struct cg_memory m;
	char err[512];

	fake_new(&f);
	layout_v1(&f, 1);
	put(&f, "sys/fs/cgroup/memory v1/app/job/memory.limit_in_bytes",
	    V1_UNLIMITED);
	put(&f, "sys/fs/cgroup/memory v1/app/job/memory.memsw.limit_in_bytes",
	    V1_UNLIMITED);
	CU_ASSERT_EQUAL_FATAL(cg_find_memory(&f.env, &m, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(cg_swap_check(&m, err, sizeof(err)), -1);
	set_and_check(&f, &m, 64 * MiB, CG_SWAP_V1_MEMSW_EQ_LIMIT);
	set_and_check(&f, &m, 256 * MiB, CG_SWAP_V1_MEMSW_EQ_LIMIT);
	set_and_check(&f, &m, 32 * MiB, CG_SWAP_V1_MEMSW_EQ_LIMIT);
	fake_free(&f);

	fake_new(&f);
	layout_v2(&f);
	put(&f, "sys/fs/cgroup/user.slice/job/memory.swap.max", "max\n");
	CU_ASSERT_EQUAL_FATAL(cg_find_memory(&f.env, &m, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(cg_swap_check(&m, err, sizeof(err)), -1);
	set_and_check(&f, &m, 64 * MiB, CG_SWAP_V2_MAX_ZERO);
	CU_ASSERT_EQUAL(m.swap_limit, 0);
	set_and_check(&f, &m, 16 * MiB, CG_SWAP_V2_MAX_ZERO);
	fake_free(&f);
}

/* A limit above the process's cgroup binds too, with what its other
 * children use (once, a 12 MiB limit on the parent was ignored and the
 * OOM killer ended the process); swap is decided up the tree as well. */
static void test_ancestors_v2(void)
{
	struct fake f;
	struct cg_memory m;
	struct cg_room room;
	char err[512], dir[PATH_MAX];

	fake_new(&f);
	layout_v2(&f);
	put(&f, "sys/fs/cgroup/user.slice/job/memory.current", "1048576\n");
	put(&f, "sys/fs/cgroup/user.slice/memory.max", "12582912\n");
	put(&f, "sys/fs/cgroup/user.slice/memory.current", "10485760\n");
	put(&f, "sys/fs/cgroup/user.slice/memory.swap.max", "max\n");
	put(&f, "sys/fs/cgroup/user.slice/job/memory.swap.max", "max\n");
	CU_ASSERT_EQUAL_FATAL(cg_find_memory(&f.env, &m, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL_FATAL(cg_read_room(&f.env, &m, &room, err, sizeof(err)),
			      0);
	path_of(&f, "sys/fs/cgroup/user.slice", dir);
	CU_ASSERT_EQUAL(room.room, 2 * MiB);
	CU_ASSERT_EQUAL(room.limit, 12 * MiB);
	CU_ASSERT_EQUAL(room.usage, 10 * MiB);
	CU_ASSERT_STRING_EQUAL(room.dir, dir);
	CU_ASSERT_EQUAL(cg_swap_check(&m, err, sizeof(err)), -1);
	/* swap.max 0 on the slice forbids swap below it */
	put(&f, "sys/fs/cgroup/user.slice/memory.swap.max", "0\n");
	CU_ASSERT_EQUAL_FATAL(cg_read_limits(&f.env, &m, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(m.swap_above, CG_ABOVE_FORBIDS);
	CU_ASSERT_STRING_EQUAL(m.swap_above_dir, dir);
	CU_ASSERT_EQUAL(cg_swap_check(&m, err, sizeof(err)),
			CG_SWAP_V2_MAX_ZERO);
	/* the job's own limit is the tighter one now */
	put(&f, "sys/fs/cgroup/user.slice/job/memory.max", "2097152\n");
	CU_ASSERT_EQUAL_FATAL(cg_read_room(&f.env, &m, &room, err, sizeof(err)),
			      0);
	CU_ASSERT_EQUAL(room.room, 1 * MiB);
	CU_ASSERT_STRING_EQUAL(room.dir, m.dir);
	/* an unreadable usage at a limited level is an error, not room */
	path_of(&f, "sys/fs/cgroup/user.slice/memory.current", dir);
	CU_ASSERT_EQUAL_FATAL(unlink(dir), 0);
	CU_ASSERT_EQUAL(cg_read_room(&f.env, &m, &room, err, sizeof(err)), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "user.slice/memory.current"));
	fake_free(&f);
}

static void test_ancestors_v1(void)
{
	struct fake f;
	struct cg_memory m;
	struct cg_room room;
	char err[512], dir[PATH_MAX];

	fake_new(&f);
	layout_v1(&f, 1);
	put(&f, "sys/fs/cgroup/memory v1/app/job/memory.usage_in_bytes",
	    "5242880\n");
	put(&f, "sys/fs/cgroup/memory v1/app/memory.limit_in_bytes",
	    "50331648\n");
	put(&f, "sys/fs/cgroup/memory v1/app/memory.memsw.limit_in_bytes",
	    V1_UNLIMITED);
	put(&f, "sys/fs/cgroup/memory v1/app/memory.usage_in_bytes",
	    "41943040\n");
	put(&f, "sys/fs/cgroup/memory v1/memory.limit_in_bytes", V1_UNLIMITED);
	put(&f, "sys/fs/cgroup/memory v1/memory.usage_in_bytes", "999999999\n");
	CU_ASSERT_EQUAL_FATAL(cg_find_memory(&f.env, &m, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL_FATAL(cg_read_room(&f.env, &m, &room, err, sizeof(err)),
			      0);
	path_of(&f, "sys/fs/cgroup/memory v1/app", dir);
	CU_ASSERT_EQUAL(room.room, 8 * MiB);
	CU_ASSERT_STRING_EQUAL(room.dir, dir);
	/* the job forbids swap, yet the app's reclaim may swap its pages */
	CU_ASSERT_EQUAL(m.swap_above, CG_ABOVE_ALLOWS);
	CU_ASSERT_EQUAL(cg_swap_check(&m, err, sizeof(err)), -1);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, dir));
	CU_ASSERT_PTR_NOT_NULL(
		strstr(err, "memory.memsw.limit_in_bytes to 50331648"));
	put(&f, "sys/fs/cgroup/memory v1/app/memory.memsw.limit_in_bytes",
	    "50331648\n");
	CU_ASSERT_EQUAL_FATAL(cg_read_limits(&f.env, &m, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(cg_swap_check(&m, err, sizeof(err)),
			CG_SWAP_V1_MEMSW_EQ_LIMIT);
	/* an unlimited job under an app that forbids swap */
	put(&f, "sys/fs/cgroup/memory v1/app/job/memory.limit_in_bytes",
	    V1_UNLIMITED);
	put(&f, "sys/fs/cgroup/memory v1/app/job/memory.memsw.limit_in_bytes",
	    V1_UNLIMITED);
	CU_ASSERT_EQUAL_FATAL(cg_read_limits(&f.env, &m, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(m.swap_above, CG_ABOVE_FORBIDS);
	CU_ASSERT_EQUAL(cg_swap_check(&m, err, sizeof(err)),
			CG_SWAP_V1_MEMSW_EQ_LIMIT);
	fake_free(&f);
}

static void test_describe(void)
{
	struct cg_memory m = mem(CG_V1, 64 * MiB, 64 * MiB, 1, 0);
	char buf[512];

	CU_ASSERT_EQUAL(cg_describe(&m, buf, sizeof(buf)), 0);
	CU_ASSERT_STRING_EQUAL(
		buf,
		"cgroup v1 dir=/sys/fs/cgroup/x memory.limit_in_bytes=67108864 memory.memsw.limit_in_bytes=67108864 swap_total=0");
	m = mem(CG_V2, CG_UNLIMITED, 0, 0, 4096);
	CU_ASSERT_EQUAL(cg_describe(&m, buf, sizeof(buf)), 0);
	CU_ASSERT_STRING_EQUAL(
		buf,
		"cgroup v2 dir=/sys/fs/cgroup/x memory.max=max memory.swap.max=absent swap_total=4096");
	CU_ASSERT_EQUAL(cg_describe(&m, buf, 8), -1);
}

void suite_cgroup(void)
{
	CU_pSuite s = CU_add_suite("cgroup", NULL, suite_clean);

	if (!s)
		return;
	if (!CU_add_test(s, "find v1", test_find_v1) ||
	    !CU_add_test(s, "find hybrid", test_find_hybrid) ||
	    !CU_add_test(s, "find v2", test_find_v2) ||
	    !CU_add_test(s, "find under a mount root", test_find_mount_root) ||
	    !CU_add_test(s, "malformed inputs", test_find_malformed) ||
	    !CU_add_test(s, "limit parsing and names", test_parse_limit) ||
	    !CU_add_test(s, "I-3 swap check", test_swap_check) ||
	    !CU_add_test(s, "shmem", test_shmem) ||
	    !CU_add_test(s, "flush tolerance", test_flush_tolerance) ||
	    !CU_add_test(s, "limit writes order", test_limit_writes) ||
	    !CU_add_test(s, "mapping end to end", test_mapping_end_to_end) ||
	    !CU_add_test(s, "ancestors v2: room and swap", test_ancestors_v2) ||
	    !CU_add_test(s, "ancestors v1: room and swap", test_ancestors_v1) ||
	    !CU_add_test(s, "describe", test_describe))
		return; /* run.c reports CU_get_error() */
}
