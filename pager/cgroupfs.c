/* The memory cgroup: where it is, its limits, its shmem, and the v1/v2
 * mapping (see cgroupfs.h). Every file is read through e->read_text and
 * validated before anything is decided on it (I-10). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroupfs.h"

/* A host with many containers has a long mountinfo; cgroup files are small. */
#define CG_BIG_MAX (1U << 20)
#define CG_SMALL_MAX (64U << 10)

/* v1 reports "unlimited" as the largest page counter times the page size,
 * 9223372036854771712 with 4 KiB pages; anything from LONG_MAX rounded down
 * to the largest base page (64 KiB) upwards is that value. */
#define CG_V1_UNLIMITED_MIN 0x7fffffffffff0000ULL

static const char *const v1_files[2] = {
	"memory.limit_in_bytes",
	"memory.memsw.limit_in_bytes",
};
static const char *const v2_files[2] = { "memory.max", "memory.swap.max" };

void cg_env_init(struct cg_env *e,
		 long (*read_text)(void *ctx, const char *path, char *buf,
				   size_t cap),
		 void *ctx)
{
	e->proc_self_cgroup = "/proc/self/cgroup";
	e->mountinfo = "/proc/self/mountinfo";
	e->meminfo = "/proc/meminfo";
	e->read_text = read_text;
	e->ctx = ctx;
}

/* The whole file in a fresh NUL-terminated buffer; a file that fills the
 * buffer is refused rather than parsed cut short. Returns 0 or -errno. */
static int slurp(const struct cg_env *e, const char *path, size_t cap,
		 char **out)
{
	char *buf = malloc(cap);
	long got;

	if (!buf)
		return -ENOMEM;
	got = e->read_text(e->ctx, path, buf, cap);
	if (got >= 0 && (size_t)got >= cap - 1)
		got = -EFBIG;
	if (got < 0) {
		free(buf);
		return (int)got;
	}
	buf[got] = '\0';
	*out = buf;
	return 0;
}

static int join(char *dst, size_t n, const char *a, const char *b)
{
	int w = snprintf(dst, n, "%s/%s", a, b);

	return w < 0 || (size_t)w >= n ? -1 : 0;
}

/* Decimal digits without sign; the end of the digits in *end. */
static int parse_digits(const char *s, const char **end, uint64_t *out)
{
	uint64_t v = 0;
	const char *p = s;

	for (; *p >= '0' && *p <= '9'; p++) {
		unsigned d = (unsigned)(*p - '0');

		if (v > (UINT64_MAX - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	if (p == s)
		return -1;
	*end = p;
	*out = v;
	return 0;
}

static int only_space(const char *p)
{
	for (; *p; p++)
		if (*p != ' ' && *p != '\t' && *p != '\n')
			return 0;
	return 1;
}

/* Whether `tok` is one of the sep-separated words of list[0..len). */
static int has_word(const char *list, size_t len, char sep, const char *tok)
{
	size_t t = strlen(tok);
	const char *p = list, *end = list + len;

	while (p < end) {
		const char *q = memchr(p, sep, (size_t)(end - p));
		size_t w = q ? (size_t)(q - p) : (size_t)(end - p);

		if (w == t && !memcmp(p, tok, t))
			return 1;
		p += w + 1;
	}
	return 0;
}

const char *cg_limit_file(int version)
{
	return version == CG_V1 ? v1_files[0] :
	       version == CG_V2 ? v2_files[0] :
				  NULL;
}

static const char *usage_file(int version)
{
	return version == CG_V1 ? "memory.usage_in_bytes" :
	       version == CG_V2 ? "memory.current" :
				  NULL;
}

const char *cg_swap_file(int version)
{
	return version == CG_V1 ? v1_files[1] :
	       version == CG_V2 ? v2_files[1] :
				  NULL;
}

int cg_parse_limit(int version, const char *text, uint64_t *out)
{
	const char *end;
	uint64_t v;

	if (version != CG_V1 && version != CG_V2)
		return -1;
	if (version == CG_V2 && !strncmp(text, "max", 3) &&
	    only_space(text + 3)) {
		*out = CG_UNLIMITED;
		return 0;
	}
	if (parse_digits(text, &end, &v) || !only_space(end))
		return -1;
	*out = version == CG_V1 && v >= CG_V1_UNLIMITED_MIN ? CG_UNLIMITED : v;
	return 0;
}

/* Splits a mountinfo line in place; root and mount point are unescaped
 * (the kernel writes space, tab, newline and backslash as \ooo). */
static void unescape(char *s)
{
	char *w = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' &&
		    s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*w++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 +
				      (s[3] - '0'));
			s += 3;
		} else {
			*w++ = *s;
		}
	}
	*w = '\0';
}

static int mountinfo_fields(char *line, char **root, char **mp, char **fstype,
			    char **super)
{
	char *f[6], *save = NULL, *tok;
	int i = 0, dash = 0;

	for (tok = strtok_r(line, " ", &save); tok;
	     tok = strtok_r(NULL, " ", &save)) {
		if (i < 5) {
			f[i++] = tok;
		} else if (!dash) {
			dash = !strcmp(tok, "-");
		} else if (i < 6) {
			f[i++] = tok; /* fstype; source and super options follow */
		} else {
			break;
		}
	}
	if (i < 6 || !tok)
		return -1;
	*super = strtok_r(NULL, " ", &save);
	if (!*super)
		return -1;
	*root = f[3];
	*mp = f[4];
	*fstype = f[5];
	unescape(*root);
	unescape(*mp);
	return 0;
}

struct mount_pick {
	int found;
	char root[CG_PATH_MAX], mp[CG_PATH_MAX];
};

static int pick(struct mount_pick *p, const char *root, const char *mp)
{
	if (p->found)
		return 0; /* the first mount of a hierarchy */
	if (strlen(root) >= sizeof(p->root) || strlen(mp) >= sizeof(p->mp))
		return -1;
	strcpy(p->root, root);
	strcpy(p->mp, mp);
	p->found = 1;
	return 0;
}

static int scan_mountinfo(const struct cg_env *e, const char *ctl,
			  struct mount_pick *v1, struct mount_pick *v2,
			  char *err, size_t n)
{
	char *text, *line, *save = NULL;
	int rc, lineno = 0;

	rc = slurp(e, e->mountinfo, CG_BIG_MAX, &text);
	if (rc) {
		snprintf(err, n, "%s: %s", e->mountinfo, strerror(-rc));
		return -1;
	}
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *root, *mp, *fstype, *super;

		lineno++;
		if (mountinfo_fields(line, &root, &mp, &fstype, &super)) {
			snprintf(err, n, "%s:%d: malformed mountinfo line",
				 e->mountinfo, lineno);
			free(text);
			return -1;
		}
		rc = 0;
		if (!strcmp(fstype, "cgroup") &&
		    has_word(super, strlen(super), ',', ctl))
			rc = pick(v1, root, mp);
		else if (!strcmp(fstype, "cgroup2"))
			rc = pick(v2, root, mp);
		if (rc) {
			snprintf(err, n,
				 "%s:%d: mount point longer than %d bytes",
				 e->mountinfo, lineno, CG_PATH_MAX - 1);
			free(text);
			return -1;
		}
	}
	free(text);
	return 0;
}

/* The v1 path of controller ctl and the v2 path of /proc/self/cgroup; ""
 * when absent. */
static int scan_proc_cgroup(const struct cg_env *e, const char *ctl, char *p1,
			    char *p2, char *err, size_t n)
{
	char *text, *line, *save = NULL;
	int rc, lineno = 0;

	rc = slurp(e, e->proc_self_cgroup, CG_SMALL_MAX, &text);
	if (rc) {
		snprintf(err, n, "%s: %s", e->proc_self_cgroup, strerror(-rc));
		return -1;
	}
	p1[0] = p2[0] = '\0';
	for (line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *c1 = strchr(line, ':'),
		     *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		const char *end;
		uint64_t id;

		lineno++;
		/* "id:controllers:/path"; the path may itself hold ':' */
		if (!c2 || parse_digits(line, &end, &id) || end != c1 ||
		    c2[1] != '/' || strlen(c2 + 1) >= CG_PATH_MAX) {
			snprintf(err, n,
				 "%s:%d: malformed line, expected id:controllers:/path",
				 e->proc_self_cgroup, lineno);
			free(text);
			return -1;
		}
		if (id == 0 && c2 == c1 + 1)
			strcpy(p2, c2 + 1);
		else if (has_word(c1 + 1, (size_t)(c2 - c1 - 1), ',', ctl))
			strcpy(p1, c2 + 1);
	}
	free(text);
	return 0;
}

/* dir and rel of `path` under a mount with the given root. */
static int place(struct cg_memory *m, const struct mount_pick *mnt,
		 const char *path, const struct cg_env *e, char *err, size_t n)
{
	size_t rl = strlen(mnt->root);
	const char *rel = path;
	int w;

	if (strcmp(mnt->root, "/")) {
		if (strncmp(path, mnt->root, rl) ||
		    (path[rl] != '/' && path[rl] != '\0')) {
			snprintf(err, n,
				 "%s: cgroup %s is outside the root %s of the mount at %s (%s)",
				 e->proc_self_cgroup, path, mnt->root, mnt->mp,
				 e->mountinfo);
			return -1;
		}
		rel = path[rl] ? path + rl : "/";
	}
	strcpy(m->rel, rel);
	if (!strcmp(rel, "/"))
		w = snprintf(m->dir, sizeof(m->dir), "%s", mnt->mp);
	else
		w = snprintf(m->dir, sizeof(m->dir), "%s%s", mnt->mp, rel);
	if (w < 0 || (size_t)w >= sizeof(m->dir)) {
		snprintf(err, n,
			 "%s: cgroup directory %s%s is longer than %d bytes",
			 e->proc_self_cgroup, mnt->mp, rel, CG_PATH_MAX - 1);
		return -1;
	}
	return 0;
}

/* 1 when <m->dir>/cgroup.controllers lists memory, 0 when not, -errno. */
static int v2_has_memory(const struct cg_env *e, const struct cg_memory *m,
			 char *path, size_t pn)
{
	char *text;
	int rc, has;
	size_t len;

	if (join(path, pn, m->dir, "cgroup.controllers"))
		return -ENAMETOOLONG;
	rc = slurp(e, path, CG_SMALL_MAX, &text);
	if (rc)
		return rc;
	len = strcspn(text, "\n");
	has = has_word(text, len, ' ', "memory");
	free(text);
	return has;
}

int cg_find_memory(const struct cg_env *e, struct cg_memory *m, char *err,
		   size_t n)
{
	struct mount_pick *mnt = calloc(2, sizeof(*mnt));
	char *p = malloc(3 * CG_PATH_MAX);
	char *p1 = p, *p2 = p + CG_PATH_MAX, *path = p + 2 * CG_PATH_MAX;
	int rc = -1;

	memset(m, 0, sizeof(*m));
	if (!mnt || !p) {
		snprintf(err, n, "cgroup: out of memory reading %s",
			 e->mountinfo);
		goto out;
	}
	if (scan_mountinfo(e, "memory", &mnt[0], &mnt[1], err, n) ||
	    scan_proc_cgroup(e, "memory", p1, p2, err, n))
		goto out;
	/* a v2 group we cannot place or read matters only with no v1 */
	if (mnt[1].found && p2[0]) {
		int has = 0;

		if (place(m, &mnt[1], p2, e, err, n)) {
			if (!mnt[0].found)
				goto out;
		} else {
			has = v2_has_memory(e, m, path, CG_PATH_MAX);
			if (has < 0 && !mnt[0].found) {
				snprintf(err, n, "%s: %s", path,
					 strerror(-has));
				goto out;
			}
		}
		if (has > 0)
			m->version = CG_V2;
	}
	if (m->version == CG_NONE && mnt[0].found) {
		if (!p1[0]) {
			snprintf(err, n,
				 "%s: no memory line, yet %s mounts the v1 memory controller at %s",
				 e->proc_self_cgroup, e->mountinfo, mnt[0].mp);
			goto out;
		}
		if (place(m, &mnt[0], p1, e, err, n))
			goto out;
		m->version = CG_V1;
	}
	if (m->version == CG_NONE)
		m->dir[0] = m->rel[0] = '\0';
	rc = cg_read_limits(e, m, err, n);
out:
	free(mnt);
	free(p);
	return rc;
}

int cg_find_v1(const struct cg_env *e, const char *ctl, struct cg_memory *m,
	       char *err, size_t n)
{
	struct mount_pick *mnt = calloc(2, sizeof(*mnt));
	char *p = malloc(2 * CG_PATH_MAX);
	int rc = -1;

	memset(m, 0, sizeof(*m));
	if (!mnt || !p) {
		snprintf(err, n, "cgroup: out of memory reading %s",
			 e->mountinfo);
		goto out;
	}
	if (scan_mountinfo(e, ctl, &mnt[0], &mnt[1], err, n) ||
	    scan_proc_cgroup(e, ctl, p, p + CG_PATH_MAX, err, n))
		goto out;
	rc = 1;
	if (mnt[0].found && p[0]) {
		rc = place(m, &mnt[0], p, e, err, n);
		m->version = rc ? CG_NONE : CG_V1;
	}
out:
	free(mnt);
	free(p);
	return rc;
}

/* One limit file of dir: 0, -ENOENT (absent), or -1 with err. */
static int read_limit_at(const struct cg_env *e, int version, const char *dir,
			 const char *file, uint64_t *out, char *err, size_t n)
{
	char path[CG_PATH_MAX], *text;
	int rc;

	if (join(path, sizeof(path), dir, file)) {
		snprintf(err, n, "%s/%s: path longer than %d bytes", dir, file,
			 CG_PATH_MAX - 1);
		return -1;
	}
	rc = slurp(e, path, CG_SMALL_MAX, &text);
	if (rc == -ENOENT)
		return rc;
	if (rc) {
		snprintf(err, n, "%s: %s", path, strerror(-rc));
		return -1;
	}
	rc = cg_parse_limit(version, text, out);
	if (rc)
		snprintf(err, n,
			 "%s: malformed limit \"%.32s\", expected a byte count%s",
			 path, text, version == CG_V2 ? " or max" : "");
	free(text);
	return rc;
}

static int read_limit(const struct cg_env *e, const struct cg_memory *m,
		      const char *file, uint64_t *out, char *err, size_t n)
{
	return read_limit_at(e, m->version, m->dir, file, out, err, n);
}

/* The length of m->dir's mount point: where the walk up stops. */
static size_t mount_len(const struct cg_memory *m)
{
	size_t d = strlen(m->dir);
	size_t r = strcmp(m->rel, "/") ? strlen(m->rel) : 0;

	return r <= d ? d - r : d;
}

/* Cuts dir to its parent cgroup; 0 when dir is the mount point. */
static int parent_dir(char *dir, size_t top)
{
	char *slash = strrchr(dir, '/');

	if (strlen(dir) <= top || !slash || (size_t)(slash - dir) < top)
		return 0;
	*slash = '\0';
	return 1;
}

/* The ancestors' word on swap, nearest first (enum cg_swap_above). */
static int read_swap_above(const struct cg_env *e, struct cg_memory *m,
			   char *err, size_t n)
{
	char dir[CG_PATH_MAX];
	size_t top = mount_len(m);

	m->swap_above = CG_ABOVE_SILENT;
	m->swap_above_limit = CG_UNLIMITED;
	m->swap_above_dir[0] = '\0';
	strcpy(dir, m->dir);
	while (m->swap_above != CG_ABOVE_ALLOWS && parent_dir(dir, top)) {
		uint64_t limit = CG_UNLIMITED, swap = CG_UNLIMITED;
		int rl, rs, says;

		rl = read_limit_at(e, m->version, dir,
				   cg_limit_file(m->version), &limit, err, n);
		rs = read_limit_at(e, m->version, dir, cg_swap_file(m->version),
				   &swap, err, n);
		if (rl == -1 || rs == -1)
			return -1;
		if (m->version == CG_V2)
			says = rs == 0 && swap == 0 ? CG_ABOVE_FORBIDS :
						      CG_ABOVE_SILENT;
		else if (rl || limit == CG_UNLIMITED)
			says = CG_ABOVE_SILENT;
		else
			says = rs == 0 && swap == limit ? CG_ABOVE_FORBIDS :
							  CG_ABOVE_ALLOWS;
		if (says == CG_ABOVE_SILENT ||
		    (says == CG_ABOVE_FORBIDS && m->swap_above))
			continue;
		m->swap_above = says;
		m->swap_above_limit = limit;
		strcpy(m->swap_above_dir, dir);
	}
	return 0;
}

static int read_swap_total(const struct cg_env *e, uint64_t *bytes, char *err,
			   size_t n)
{
	static const char key[] = "SwapTotal:";
	char *text, *p;
	const char *end;
	uint64_t kb;
	int rc;

	rc = slurp(e, e->meminfo, CG_SMALL_MAX, &text);
	if (rc) {
		snprintf(err, n, "%s: %s", e->meminfo, strerror(-rc));
		return -1;
	}
	p = text;
	while (p && strncmp(p, key, sizeof(key) - 1))
		p = (p = strchr(p, '\n')) ? p + 1 : NULL;
	rc = -1;
	if (!p) {
		snprintf(err, n, "%s: no SwapTotal line", e->meminfo);
	} else {
		p += sizeof(key) - 1;
		p += strspn(p, " \t");
		if (parse_digits(p, &end, &kb) || strncmp(end, " kB", 3) ||
		    (end[3] != '\n' && end[3] != '\0') ||
		    kb > UINT64_MAX / 1024)
			snprintf(err, n,
				 "%s: malformed SwapTotal line, expected \"SwapTotal: <n> kB\"",
				 e->meminfo);
		else
			rc = 0;
	}
	if (!rc)
		*bytes = kb * 1024;
	free(text);
	return rc;
}

int cg_read_limits(const struct cg_env *e, struct cg_memory *m, char *err,
		   size_t n)
{
	int rc;

	if (read_swap_total(e, &m->swap_total, err, n))
		return -1;
	m->limit = m->swap_limit = CG_UNLIMITED;
	m->has_swap_file = 0;
	if (m->version == CG_NONE)
		return 0;
	rc = read_limit(e, m, cg_limit_file(m->version), &m->limit, err, n);
	/* a v2 root cgroup has no limit files: it is not limited */
	if (rc == -ENOENT && strcmp(m->rel, "/")) {
		snprintf(err, n, "%s/%s: no such file in a memory cgroup",
			 m->dir, cg_limit_file(m->version));
		return -1;
	}
	if (rc == -1)
		return -1;
	rc = read_limit(e, m, cg_swap_file(m->version), &m->swap_limit, err, n);
	if (rc == -1)
		return -1;
	/* absent: swap accounting is off (or the root); I-3 decides */
	m->has_swap_file = rc == 0;
	return read_swap_above(e, m, err, n);
}

int cg_swap_check(const struct cg_memory *m, char *why, size_t n)
{
	const char *sf = cg_swap_file(m->version);

	if (m->version == CG_V2 && ((m->has_swap_file && m->swap_limit == 0) ||
				    m->swap_above == CG_ABOVE_FORBIDS))
		return CG_SWAP_V2_MAX_ZERO;
	/* both unlimited are equal too, yet forbid nothing */
	if (m->version == CG_V1 && m->swap_above != CG_ABOVE_ALLOWS &&
	    ((m->has_swap_file && m->limit != CG_UNLIMITED &&
	      m->swap_limit == m->limit) ||
	     (m->limit == CG_UNLIMITED && m->swap_above == CG_ABOVE_FORBIDS)))
		return CG_SWAP_V1_MEMSW_EQ_LIMIT;
	if (m->swap_total == 0)
		return CG_SWAP_NONE_CONFIGURED;

	if (m->version == CG_NONE)
		snprintf(why, n,
			 "swap is possible (SwapTotal %" PRIu64
			 " kB) and no memory cgroup was found: run swapoff -a, or run in a memory cgroup that forbids swap",
			 m->swap_total / 1024);
	/* the v2 root has no swap file and the v1 root memcg takes no limit */
	else if (!strcmp(m->rel, "/"))
		snprintf(why, n,
			 "swap is possible (SwapTotal %" PRIu64
			 " kB) and %s is the root memory cgroup, which cannot forbid it: run in a child cgroup that forbids swap (residctl check makes one per scenario), or run swapoff -a",
			 m->swap_total / 1024, m->dir);
	else if (m->version == CG_V1 && m->swap_above == CG_ABOVE_ALLOWS)
		snprintf(why, n,
			 "swap is possible for this cgroup: its ancestor %s limits memory to %" PRIu64
			 " and lets its reclaim swap: set %s/%s to %" PRIu64
			 " too",
			 m->swap_above_dir, m->swap_above_limit,
			 m->swap_above_dir, sf, m->swap_above_limit);
	else if (!m->has_swap_file)
		snprintf(why, n,
			 "swap is possible (SwapTotal %" PRIu64
			 " kB) and %s has no %s (swap accounting off): run swapoff -a, or run in a cgroup that has %s",
			 m->swap_total / 1024, m->dir, sf, sf);
	else if (m->version == CG_V2)
		snprintf(why, n,
			 "swap is possible for this cgroup: set %s/%s to 0",
			 m->dir, sf);
	else if (m->limit == CG_UNLIMITED)
		snprintf(why, n,
			 "swap is possible for this cgroup: set %s/%s to a limit, then %s to the same value",
			 m->dir, cg_limit_file(m->version), sf);
	else
		snprintf(why, n,
			 "swap is possible for this cgroup: set %s/%s to %" PRIu64
			 " (its %s)",
			 m->dir, sf, m->limit, cg_limit_file(m->version));
	return -1;
}

const char *cg_swap_cond_name(int cond)
{
	switch (cond) {
	case CG_SWAP_V2_MAX_ZERO:
		return "v2_swap_max_0";
	case CG_SWAP_V1_MEMSW_EQ_LIMIT:
		return "v1_memsw_eq_limit";
	case CG_SWAP_NONE_CONFIGURED:
		return "no_swap_configured";
	default:
		return "none";
	}
}

/* The value of `key` in memory.stat: 1 found, 0 absent, -1 malformed. */
static int stat_key(const char *stat, const char *key, uint64_t *out)
{
	size_t kl = strlen(key);
	const char *p = stat, *end;

	for (; p; p = (p = strchr(p, '\n')) ? p + 1 : NULL) {
		if (strncmp(p, key, kl) || p[kl] != ' ')
			continue;
		if (parse_digits(p + kl + 1, &end, out) ||
		    (*end != '\n' && *end != '\0'))
			return -1;
		return 1;
	}
	return 0;
}

int cg_stat_shmem(int version, const char *stat, uint64_t *bytes,
		  const char **key)
{
	static const char *const v1_keys[] = { "total_shmem", "shmem", NULL };
	static const char *const v2_keys[] = { "shmem", NULL };
	const char *const *k;
	int rc;

	if (version != CG_V1 && version != CG_V2)
		return -1;
	for (k = version == CG_V1 ? v1_keys : v2_keys; *k; k++) {
		rc = stat_key(stat, *k, bytes);
		if (rc < 0)
			return -1;
		if (rc > 0) {
			*key = *k;
			return 0;
		}
	}
	return -1;
}

static int read_usage_at(const struct cg_env *e, int version, const char *dir,
			 uint64_t *bytes)
{
	char path[CG_PATH_MAX], *text, *end;
	int rc;

	if (version == CG_NONE)
		return -ENOENT;
	if (join(path, sizeof(path), dir, usage_file(version)))
		return -ENAMETOOLONG;
	rc = slurp(e, path, CG_SMALL_MAX, &text);
	if (rc)
		return rc;
	errno = 0;
	*bytes = strtoull(text, &end, 10);
	rc = end == text || errno || (*end && *end != '\n') ? -EBADMSG : 0;
	free(text);
	return rc;
}

int cg_read_room(const struct cg_env *e, const struct cg_memory *m,
		 struct cg_room *out, char *err, size_t n)
{
	char dir[CG_PATH_MAX];
	size_t top = mount_len(m);

	out->room = out->limit = CG_UNLIMITED;
	out->usage = 0;
	out->dir[0] = '\0';
	if (m->version == CG_NONE)
		return 0;
	strcpy(dir, m->dir);
	do {
		uint64_t limit, usage = 0, room;
		int rc = read_limit_at(e, m->version, dir,
				       cg_limit_file(m->version), &limit, err,
				       n);

		if (rc == -1)
			return -1;
		if (rc == -ENOENT || limit == CG_UNLIMITED)
			continue; /* a root: no limit */
		rc = read_usage_at(e, m->version, dir, &usage);
		if (rc < 0) {
			snprintf(err, n, "%s/%s: %s", dir,
				 usage_file(m->version), strerror(-rc));
			return -1;
		}
		room = usage < limit ? limit - usage : 0;
		if (room < out->room) {
			out->room = room;
			out->limit = limit;
			out->usage = usage;
			strcpy(out->dir, dir);
		}
	} while (parent_dir(dir, top));
	return 0;
}

int cg_read_shmem(const struct cg_env *e, const struct cg_memory *m,
		  uint64_t *bytes)
{
	char path[CG_PATH_MAX], *text;
	const char *key;
	int rc;

	if (m->version == CG_NONE)
		return -ENOENT;
	if (join(path, sizeof(path), m->dir, CG_STAT_FILE))
		return -ENAMETOOLONG;
	rc = slurp(e, path, CG_SMALL_MAX, &text);
	if (rc)
		return rc;
	rc = cg_stat_shmem(m->version, text, bytes, &key) ? -EBADMSG : 0;
	free(text);
	return rc;
}

/* Two parts per CPU: a CPU keeps up to a batch (64 pages) of updates to
 * itself before it adds them to the group's pending count, and a read
 * flushes only when that count passes the threshold (64 pages per CPU, 32
 * on 5.15..6.0). A 60 s storm measured 240 pages of lag on 2 CPUs, past the
 * threshold alone (128). */
uint64_t cg_flush_tolerance(const char *kernel_release, unsigned online_cpus)
{
	uint64_t major, minor, threshold = 64;
	const char *end;

	if (kernel_release && !parse_digits(kernel_release, &end, &major) &&
	    *end == '.' && !parse_digits(end + 1, &end, &minor) &&
	    ((major == 5 && minor >= 15) || (major == 6 && minor == 0)))
		threshold = 32;
	return (64 + threshold) * RESID_PAGE * (online_cpus ? online_cpus : 1);
}
