#include <stdarg.h>
#include <stdio.h>

#include "base/err_line.h"

int err_line(char *err, size_t n, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, n, fmt, ap);
	va_end(ap);
	return -1;
}
