/* A write(2) of every byte, for the pipes a forked child reports through. */
#ifndef HARNESS_WRITE_ALL_H
#define HARNESS_WRITE_ALL_H

#include <stddef.h>

/* Writes len bytes from p to fd, retrying short writes and EINTR;
 * 0, or -1 when a write fails or writes nothing. */
int write_all(int fd, const void *p, size_t len);

#endif
