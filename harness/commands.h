/* The subcommands of residctl; each returns the process exit code. */
#ifndef HARNESS_COMMANDS_H
#define HARNESS_COMMANDS_H

int cmd_check(int argc, char **argv);
int cmd_probe(int argc, char **argv);
int cmd_belady(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_storm(int argc, char **argv);
int cmd_explore(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_repro(int argc, char **argv);
int cmd_matrix(int argc, char **argv);
int cmd_bench(int argc, char **argv);

/* verify's oracle: compares [off, off + len) of the mapping a with the file
 * fd, adding the bytes that differ to *bad. 0, or -errno when the oracle's
 * own read failed (-ENODATA: the file ended early), which is not a
 * mismatch of the pager's. */
#include <stdint.h>
int verify_compare(int fd, const uint8_t *a, uint64_t off, uint64_t len,
		   uint8_t *buf, uint64_t *bad);

#endif
