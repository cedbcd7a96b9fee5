/* The one line a parser or a check leaves in its caller's buffer. */
#ifndef HARNESS_ERR_LINE_H
#define HARNESS_ERR_LINE_H

#include <stddef.h>

/* Writes the line into err (n bytes; a longer one is cut, still one line)
 * and returns -1. */
int err_line(char *err, size_t n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
