/* A program that knows nothing of residctl: it maps a file read-only, as
 * inference engines map their weights, and checksums it PASSES times.
 * docs/run.md runs it under `residctl run`; ci/run.sh checks that the sum
 * is the same as without.
 *
 *	cc -O2 docs/example/mapsum.c -o mapsum && ./mapsum FILE [PASSES] */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int passes = argc > 2 ? atoi(argv[2]) : 1, fd;
	uint64_t h = 1469598103934665603ull;
	const unsigned char *p;
	struct stat st;

	if (argc < 2 || (fd = open(argv[1], O_RDONLY)) < 0 || fstat(fd, &st)) {
		fprintf(stderr,
			"usage: mapsum FILE [PASSES] (a readable file)\n");
		return 2;
	}
	p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED | MAP_POPULATE,
		 fd, 0);
	if (p == MAP_FAILED) {
		perror("mapsum: mmap");
		return 1;
	}
	close(fd);
	for (int k = 0; k < passes; k++)
		for (off_t i = 0; i < st.st_size; i++)
			h = (h ^ p[i]) * 1099511628211ull;
	printf("%016" PRIx64 "\n", h);
	return munmap((void *)p, (size_t)st.st_size) ? 1 : 0;
}
