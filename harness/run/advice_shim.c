/* libresid-advice.so: residctl run --kernel-mmap's preload (docs/run.md),
 * arm A of a real program. The kernel pages PATH; this library only gives
 * the advice of RESIDCTL_RUN_ADVICE (sequential, random, willneed) to every
 * PROT_READ mapping (without PROT_WRITE) of the file RESIDCTL_RUN_ID
 * (DEV:INO:SIZE, as residctl run sets it), right after the kernel's mmap
 * returns it. The program's own later madvise calls still apply. A
 * malformed value ends the process (exit 2) with one line, so no run
 * measures an arm it was not asked for. */
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static struct {
	int armed, advice;
	unsigned long long dev, ino;
} adv;

__attribute__((format(printf, 1, 2))) static void fatal(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int k = snprintf(buf, sizeof(buf), "resid-advice: ");

	va_start(ap, fmt);
	vsnprintf(buf + k, sizeof(buf) - (size_t)k, fmt, ap);
	va_end(ap);
	if (write(STDERR_FILENO, buf, strlen(buf)) < 0)
		_exit(2); /* nowhere to say it */
	_exit(2);
}

__attribute__((constructor)) static void advice_init(void)
{
	static const struct {
		const char *name;
		int advice;
	} names[] = {
		{ "sequential", MADV_SEQUENTIAL },
		{ "random", MADV_RANDOM },
		{ "willneed", MADV_WILLNEED },
	};
	const char *a = getenv("RESIDCTL_RUN_ADVICE");
	const char *id = getenv("RESIDCTL_RUN_ID");
	unsigned long long size;
	int end = 0;

	if (!a)
		return;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(a, names[i].name))
			adv.advice = names[i].advice, adv.armed = 1;
	if (!adv.armed)
		fatal("RESIDCTL_RUN_ADVICE '%.40s' is not sequential, random or willneed\n",
		      a);
	if (!id ||
	    sscanf(id, "%llu:%llu:%llu%n", &adv.dev, &adv.ino, &size, &end) !=
		    3 ||
	    id[end])
		fatal("RESIDCTL_RUN_ID '%.60s' is not DEV:INO:SIZE in decimal; residctl run sets it\n",
		      id ? id : "(unset)");
}

static void advise(void *p, size_t len, int prot, int fd)
{
	struct stat st;

	if (adv.armed && p != MAP_FAILED && fd >= 0 && prot & PROT_READ &&
	    !(prot & PROT_WRITE) && !fstat(fd, &st) &&
	    (unsigned long long)st.st_dev == adv.dev &&
	    (unsigned long long)st.st_ino == adv.ino) {
		int saved = errno;

		madvise(p, len,
			adv.advice); /* advice: a refusal changes nothing */
		errno = saved;
	}
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	static void *(*next)(void *, size_t, int, int, int, off_t);
	void *p;

	if (!next)
		*(void **)&next = dlsym(RTLD_NEXT, "mmap");
	p = next(addr, len, prot, flags, fd, off);
	advise(p, len, prot, fd);
	return p;
}

void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	static void *(*next)(void *, size_t, int, int, int, off_t);
	void *p;

	if (!next)
		*(void **)&next = dlsym(RTLD_NEXT, "mmap64");
	p = next(addr, len, prot, flags, fd, off);
	advise(p, len, prot, fd);
	return p;
}
