/* The decode workload's weights, its matrix-vector product and the
 * reference outputs (decode.h says why every sum is exact). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/rng.h"
#include "bench/decode.h"

float decode_weight(uint64_t index, uint64_t seed)
{
	uint64_t s = index ^ (seed * 0xd1b54a32d192ed03ull);
	int32_t k = (int32_t)(rng_next(&s) >> 40) - (1 << 23);

	return (float)k * (1.0f / 16777216.0f);
}

void decode_fill(uint8_t *dst, uint64_t off, uint64_t len, uint64_t seed)
{
	for (uint64_t i = 0; i + 4 <= len; i += 4) {
		float w = decode_weight((off + i) / 4, seed);

		memcpy(dst + i, &w, 4);
	}
}

void decode_x(float *x, uint32_t cols)
{
	uint64_t s = 0x5eed;

	for (uint32_t j = 0; j < cols; j++) {
		int k = (int)rng_below(&s, 254) - 127;

		x[j] = (float)(k >= 0 ? k + 1 : k) / 128.0f;
	}
}

struct decode_layer decode_layer_of(const struct layout_layer *l, uint32_t cols)
{
	struct decode_layer d;
	uint64_t end = (l->off + l->len) / 4;

	d.first = (l->off + 3) / 4;
	d.words = end > d.first ? end - d.first : 0;
	d.rows = (d.words + cols - 1) / cols;
	return d;
}

static uint64_t mix(uint64_t v)
{
	return rng_next(&v);
}

uint64_t decode_rows(const float *w, const struct decode_layer *d,
		     uint32_t cols, const float *x, uint64_t r0, uint64_t r1)
{
	uint64_t sum = 0;

	for (uint64_t r = r0; r < r1; r++) {
		const float *row = w + r * cols;
		uint64_t len = d->words - r * cols < cols ?
				       d->words - r * cols :
				       cols,
			 j = 0, bits;
		double a0 = 0, a1 = 0, a2 = 0, a3 = 0, y;

		for (; j + 4 <= len; j += 4) {
			a0 += (double)row[j] * x[j];
			a1 += (double)row[j + 1] * x[j + 1];
			a2 += (double)row[j + 2] * x[j + 2];
			a3 += (double)row[j + 3] * x[j + 3];
		}
		for (; j < len; j++)
			a0 += (double)row[j] * x[j];
		y = (a0 + a1) + (a2 + a3);
		memcpy(&bits, &y, 8);
		sum += mix(bits ^ (r << 1));
	}
	return sum;
}

int decode_reference(const char *path, const struct layout *l, uint32_t cols,
		     const float *x, uint64_t *ref, char *err, size_t n)
{
	uint64_t most = 0;
	float *buf;
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc = 0;

	if (fd < 0) {
		snprintf(err, n, "cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	for (uint32_t i = 0; i < l->nlayers; i++) {
		struct decode_layer d = decode_layer_of(&l->layers[i], cols);

		most = d.words > most ? d.words : most;
	}
	buf = malloc(most ? most * 4 : 4);
	for (uint32_t i = 0; buf && i < l->nlayers && !rc; i++) {
		struct decode_layer d = decode_layer_of(&l->layers[i], cols);
		uint64_t got = 0;

		while (got < d.words * 4) {
			ssize_t k = pread(fd, (char *)buf + got,
					  d.words * 4 - got,
					  (off_t)(d.first * 4 + got));

			if (k < 0 && errno == EINTR)
				continue;
			if (k <= 0) {
				snprintf(err, n, "cannot read %s: %s", path,
					 k ? strerror(errno) : "short file");
				rc = -1;
				break;
			}
			got += (uint64_t)k;
		}
		if (!rc)
			ref[i] = decode_rows(buf, &d, cols, x, 0, d.rows);
	}
	if (!buf) {
		snprintf(err, n, "no memory for the reference outputs");
		rc = -1;
	}
	free(buf);
	close(fd);
	return rc;
}
