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
int cmd_coverage(int argc, char **argv);
int cmd_conformance(int argc, char **argv);
int cmd_merge(int argc, char **argv);

#endif
