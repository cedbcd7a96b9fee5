/* libresid-eio.so: a test artifact of T-8 (built, never installed). An
 * LD_PRELOAD library whose pread and pread64 fail with EIO, as a disk's
 * bad sector does, on every read of one file that overlaps a byte range:
 *   RESIDCTL_TEST_EIO=PATH:OFF:LEN
 * The file is its inode (PATH stat'ed once), so any name or descriptor of
 * it fails alike. The first EIO injected in a process says so on stderr:
 * a test sees that the reads it failed were the pager's. A malformed value
 * ends the process (exit 2) with one line, so no test passes unarmed. */
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static struct {
	int armed;
	dev_t dev;
	ino_t ino;
	uint64_t off, len;
	char path[4096];
} eio;
static int said;

__attribute__((format(printf, 1, 2))) static void line(const char *fmt, ...)
{
	char buf[4400];
	va_list ap;
	int k = snprintf(buf, sizeof(buf),
			 "resid-eio: pid %d: ", (int)getpid());

	va_start(ap, fmt);
	vsnprintf(buf + k, sizeof(buf) - (size_t)k, fmt, ap);
	va_end(ap);
	if (write(STDERR_FILENO, buf, strlen(buf)) < 0)
		return; /* nowhere to say it */
}

__attribute__((constructor)) static void eio_init(void)
{
	const char *v = getenv("RESIDCTL_TEST_EIO");
	const char *c2, *c1;
	struct stat st;
	char *end;

	if (!v)
		return;
	/* PATH may hold colons: OFF and LEN are the last two fields */
	c2 = strrchr(v, ':');
	c1 = c2 ? memrchr(v, ':', (size_t)(c2 - v)) : NULL;
	if (!c1 || c1 == v || (size_t)(c1 - v) >= sizeof(eio.path)) {
		line("RESIDCTL_TEST_EIO '%s' is not PATH:OFF:LEN\n", v);
		_exit(2);
	}
	memcpy(eio.path, v, (size_t)(c1 - v));
	eio.path[c1 - v] = '\0';
	errno = 0;
	eio.off = strtoull(c1 + 1, &end, 10);
	if (end != c2 || errno || c1[1] < '0' || c1[1] > '9')
		goto bad;
	eio.len = strtoull(c2 + 1, &end, 10);
	if (*end || errno || !eio.len || c2[1] < '0' || c2[1] > '9')
		goto bad;
	if (stat(eio.path, &st)) {
		line("RESIDCTL_TEST_EIO: cannot stat %s: %s\n", eio.path,
		     strerror(errno));
		_exit(2);
	}
	eio.dev = st.st_dev;
	eio.ino = st.st_ino;
	eio.armed = 1;
	return;
bad:
	line("RESIDCTL_TEST_EIO '%s': OFF and LEN must be decimal, LEN > 0\n",
	     v);
	_exit(2);
}

/* Whether a read of len bytes at off on fd is one to fail. */
static int hit(int fd, size_t len, off_t off)
{
	struct stat st;

	if (!eio.armed || !len || off < 0 ||
	    (uint64_t)off >= eio.off + eio.len ||
	    (uint64_t)off + len <= eio.off)
		return 0;
	return !fstat(fd, &st) && st.st_dev == eio.dev && st.st_ino == eio.ino;
}

static ssize_t fail(size_t len, off_t off)
{
	if (!__atomic_exchange_n(&said, 1, __ATOMIC_ACQ_REL))
		line("pread of %s at offset %" PRIu64 " (%" PRIu64
		     " bytes): EIO injected (RESIDCTL_TEST_EIO)\n",
		     eio.path, (uint64_t)off, (uint64_t)len);
	errno = EIO;
	return -1;
}

ssize_t pread(int fd, void *buf, size_t len, off_t off)
{
	static ssize_t (*next)(int, void *, size_t, off_t);

	if (!next)
		*(void **)&next = dlsym(RTLD_NEXT, "pread");
	return hit(fd, len, off) ? fail(len, off) : next(fd, buf, len, off);
}

ssize_t pread64(int fd, void *buf, size_t len, off_t off)
{
	static ssize_t (*next)(int, void *, size_t, off_t);

	if (!next)
		*(void **)&next = dlsym(RTLD_NEXT, "pread64");
	return hit(fd, len, off) ? fail(len, off) : next(fd, buf, len, off);
}
