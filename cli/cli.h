/*
 * cli.h - what the `strata` subcommands share: the exit-code convention,
 * error reporting and output helpers.
 *
 * Exit codes (docs/cli.md): 0 ok, 1 usage, 2 bad input, 3 infeasible,
 * 4 internal error.
 */
#ifndef STRATA_CLI_H
#define STRATA_CLI_H

#include <stdio.h>

#include "strata/strata.h"

enum {
  CLI_OK = 0,
  CLI_USAGE = 1,
  CLI_BADINPUT = 2,
  CLI_INFEASIBLE = 3,
  CLI_INTERNAL = 4,
  CLI_TIMEOUT = 5 /* no plan found within --time-limit; one may exist */
};

typedef struct {
  const char *name;
  const char *summary;
  int (*run)(int argc, char **argv);
} cli_command_t;

/* `strata ARGV[1] ...`: the command named, given argv + 1; or the
 * program's help, version or a usage error.  Returns the exit code. */
int cli_main(int argc, char **argv);

/* Map a STRATA_E* code to an exit code. */
int cli_exit_code(int err);
/* Print "strata <cmd>: <last error>" on stderr; return the exit code. */
int cli_fail(const char *cmd, int err);
/* Print a usage error (and a hint to --help); return CLI_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Parse helpers: return 0 or print a usage error and return CLI_USAGE. */
int cli_parse_int(const char *cmd, const char *opt, const char *arg, long lo,
                  long hi, long *out);
int cli_parse_double(const char *cmd, const char *opt, const char *arg,
                     double lo, double hi, double *out);
/* Write text to path atomically, or to stdout when path is NULL or "-". */
int cli_write_output(const char *cmd, const char *path, const char *text,
                     size_t len);

/* Whether an output file could be written at path (an existing folder
 * that takes a new file, or a device that opens for writing), checked
 * before a long run so that its result is not lost to a typo: 0, or a
 * STRATA_EIO error naming what is wrong.  "-" and NULL are stdout. */
int cli_output_writable(const char *opt, const char *path);

/* "megatron, deepspeed, ...": every export target, from its table. */
void cli_export_target_names(char *buf, size_t size);

/* show/export --fallback N (fallbacks.c): *p becomes its fallback plan of N
 * nodes lost (0: *p as it is); a plan that stores fewer is refused, saying what
 * it stores.  0, or a STRATA_E* code. */
int cli_select_fallback(const char *path, int n, strata_plan_t **p);

/* The subcommands. */
int cli_cmd_trace(int argc, char **argv);
int cli_cmd_stage(int argc, char **argv);
int cli_cmd_compare(int argc, char **argv);
int cli_cmd_topo(int argc, char **argv);
int cli_topo_collect(int argc, char **argv);
int cli_cmd_plan(int argc, char **argv);
int cli_cmd_fleet(int argc, char **argv);
int cli_cmd_show(int argc, char **argv);
int cli_cmd_diff(int argc, char **argv);
int cli_cmd_export(int argc, char **argv);
int cli_cmd_estimate(int argc, char **argv);
int cli_cmd_calibrate(int argc, char **argv);

#endif
