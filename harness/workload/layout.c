/* A layout from a file: the text table, the choice between it and a
 * safetensors header, and the chunk table derived from the layers (the
 * rules are in layout.h). */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/err_line.h"
#include "workload/layout.h"

void layout_free(struct layout *l)
{
	for (uint32_t i = 0; l->names && i < l->nlayers; i++)
		free(l->names[i]);
	free(l->names);
	free(l->layers);
	free(l->chunks);
	memset(l, 0, sizeof(*l));
}

int layout_derive(struct layout *l, char *err, size_t n)
{
	uint32_t c = 0;

	free(l->chunks);
	l->chunks = malloc(l->nlayers * sizeof(*l->chunks));
	if (!l->chunks)
		return err_line(err, n, "no memory for %" PRIu32 " chunks",
				l->nlayers);
	l->chunks[0].off = 0;
	for (uint32_t i = 0; i < l->nlayers; i++) {
		uint64_t floor = l->layers[i].off & ~(RESID_PAGE - 1);

		if (i && floor > l->chunks[c].off)
			l->chunks[++c].off = floor;
		l->layers[i].chunk = c;
	}
	l->nchunks = c + 1;
	l->region_len = l->layers[l->nlayers - 1].off +
			l->layers[l->nlayers - 1].len;
	for (c = 0; c < l->nchunks; c++)
		l->chunks[c].len = (c + 1 < l->nchunks ? l->chunks[c + 1].off :
							 l->region_len) -
				   l->chunks[c].off;
	return 0;
}

uint32_t layout_last_chunk(const struct layout *l, uint32_t layer)
{
	const struct layout_layer *y = &l->layers[layer];
	uint32_t c = y->chunk;

	return c + 1 < l->nchunks && y->off + y->len > l->chunks[c + 1].off ?
		       c + 1 :
		       c;
}

uint64_t layout_largest_chunk(const struct layout *l)
{
	uint64_t max = 0;

	for (uint32_t c = 0; c < l->nchunks; c++)
		if (l->chunks[c].len > max)
			max = l->chunks[c].len;
	return (max + RESID_PAGE - 1) & ~(RESID_PAGE - 1);
}

int layout_name(struct layout *l, const char *name, char *err, size_t n)
{
	if (l->nlayers > l->names_cap) {
		uint32_t grow = l->nlayers * 2;
		char **p = realloc(l->names, grow * sizeof(*p));

		if (!p)
			return err_line(err, n,
					"no memory for %" PRIu32 " names",
					grow);
		memset(p + l->names_cap, 0, (grow - l->names_cap) * sizeof(*p));
		l->names = p;
		l->names_cap = grow;
	}
	l->names[l->nlayers - 1] = strdup(name);
	return l->names[l->nlayers - 1] ?
		       0 :
		       err_line(err, n, "no memory for the name of %s", name);
}

/* Decimal, or hex after 0x; no sign, no octal, no overflow. */
static int number(const char *s, uint64_t *out)
{
	int hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
	const char *digits = hex ? s + 2 : s;
	unsigned long long v;
	char *end;

	if (!(hex ? strchr("0123456789abcdefABCDEF", *digits) && *digits :
		    *digits >= '0' && *digits <= '9'))
		return -1;
	errno = 0;
	v = strtoull(digits, &end, hex ? 16 : 10);
	if (errno || *end)
		return -1;
	*out = v;
	return 0;
}

int layout_add(struct layout *l, uint32_t *cap, uint64_t off, uint64_t len,
	       const char *path, const char *what, char *err, size_t n)
{
	uint64_t prev_end = l->nlayers ? l->layers[l->nlayers - 1].off +
						 l->layers[l->nlayers - 1].len :
					 0;

	if (!len)
		return err_line(
			err, n,
			"%s: %s: length 0; give each layer at least one byte",
			path, what);
	if (off + len < off)
		return err_line(err, n,
				"%s: %s: offset %" PRIu64 " + length %" PRIu64
				" overflows 64 bits; fix the numbers",
				path, what, off, len);
	if (l->nlayers && off < prev_end)
		return err_line(err, n,
				"%s: %s: offset %" PRIu64
				" is before the end of the previous layer (%" PRIu64
				"); list layers in file order, without overlap",
				path, what, off, prev_end);
	if (l->nlayers == LAYOUT_MAX_LAYERS)
		return err_line(err, n,
				"%s: %s: more than %u layers; merge some", path,
				what, LAYOUT_MAX_LAYERS);
	if (l->nlayers == *cap) {
		uint32_t grow = *cap ? *cap * 2 : 64;
		void *p = realloc(l->layers, grow * sizeof(*l->layers));

		if (!p)
			return err_line(err, n,
					"no memory for %" PRIu32 " layers",
					grow);
		l->layers = p;
		*cap = grow;
	}
	l->layers[l->nlayers++] = (struct layout_layer){ off, len, 0 };
	return 0;
}

static int read_text(FILE *f, const char *path, struct layout *l, char *err,
		     size_t n)
{
	char *line = NULL, *save, *tok[3], what[32];
	size_t cap = 0;
	uint32_t lcap = 0;
	uint64_t lineno = 0, off, len;
	int rc = 0;

	while (!rc && getline(&line, &cap, f) >= 0) {
		int k = 0;

		lineno++;
		line[strcspn(line, "#")] = '\0';
		for (char *t = strtok_r(line, " \t\r\n", &save); t && k < 3;
		     t = strtok_r(NULL, " \t\r\n", &save))
			tok[k++] = t;
		snprintf(what, sizeof(what), "line %" PRIu64, lineno);
		if (!k)
			continue;
		if (k != 2)
			rc = err_line(
				err, n,
				"%s:%" PRIu64
				": %s fields; give 'offset length' (decimal or 0x hex), one layer per line",
				path, lineno,
				k < 2 ? "1 field, not 2" : "more than 2");
		else if (number(tok[0], &off))
			rc = err_line(
				err, n,
				"%s:%" PRIu64
				": bad offset '%s'; give a decimal or 0x hex number",
				path, lineno, tok[0]);
		else if (number(tok[1], &len))
			rc = err_line(
				err, n,
				"%s:%" PRIu64
				": bad length '%s'; give a decimal or 0x hex number",
				path, lineno, tok[1]);
		else
			rc = layout_add(l, &lcap, off, len, path, what, err, n);
	}
	if (!rc && ferror(f))
		rc = err_line(err, n,
			      "%s: read error after line %" PRIu64
			      "; check the file",
			      path, lineno);
	free(line);
	return rc;
}

/* A safetensors file begins with its header length, whose high bytes are
 * zero; a text table begins with 8 bytes of text. */
static int looks_like_text(const unsigned char *b, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if ((b[i] < 0x20 || b[i] > 0x7e) &&
		    (!b[i] || !strchr("\t\r\n", b[i])))
			return 0;
	return 1;
}

int layout_read(const char *path, struct layout *out, char *err, size_t n)
{
	unsigned char head[8];
	size_t got;
	FILE *f;
	int rc;

	memset(out, 0, sizeof(*out));
	f = fopen(path, "r");
	if (!f)
		return err_line(
			err, n,
			"cannot open the layout %s: %s; give a readable table or safetensors file",
			path, strerror(errno));
	got = fread(head, 1, sizeof(head), f);
	if (got >= 4 && !memcmp(head, "GGUF", 4)) {
		fclose(f);
		rc = gguf_layers(path, out, err, n);
	} else if (got == sizeof(head) && !looks_like_text(head, got)) {
		fclose(f);
		rc = safetensors_layers(path, out, err, n);
	} else {
		rewind(f);
		rc = read_text(f, path, out, err, n);
		fclose(f);
	}
	if (!rc && !out->nlayers)
		rc = err_line(
			err, n,
			"%s: no layers; give one 'offset length' line per layer, or a safetensors file with tensors",
			path);
	if (!rc)
		rc = layout_derive(out, err, n);
	if (rc)
		layout_free(out);
	return rc;
}

size_t layout_layer_key(const char *name, int64_t *block)
{
	static const char *const marks[] = { "blk.", "layers.", "h.",
					     "blocks." };

	for (size_t m = 0; m < sizeof(marks) / sizeof(marks[0]); m++)
		for (const char *s = strstr(name, marks[m]); s;
		     s = strstr(s + 1, marks[m])) {
			const char *d = s + strlen(marks[m]), *e = d;

			if (s != name && s[-1] != '.')
				continue;
			while (*e >= '0' && *e <= '9')
				e++;
			if (e > d && e - d < 10 && *e == '.') {
				if (block)
					*block = strtoll(d, NULL, 10);
				return (size_t)(e - name);
			}
		}
	return 0;
}

int layout_group(const struct layout_tensor *t, size_t nt, const char *path,
		 struct layout *out, char *err, size_t n)
{
	uint32_t cap = 0;
	char what[300];

	for (size_t i = 0; i < nt;) {
		size_t key = layout_layer_key(t[i].name, NULL), k = i + 1;

		while (key && k < nt &&
		       layout_layer_key(t[k].name, NULL) == key &&
		       !strncmp(t[k].name, t[i].name, key))
			k++;
		snprintf(what, sizeof(what), "tensor '%.256s'", t[i].name);
		if (layout_add(out, &cap, t[i].begin, t[k - 1].end - t[i].begin,
			       path, what, err, n) ||
		    layout_name(out, t[i].name, err, n))
			return -1;
		i = k;
	}
	return 0;
}
