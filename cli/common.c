/*
 * common.c - error reporting, value parsing and output shared by the
 * subcommands (their options are parsed from tables: cli/opts.c).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

int cli_exit_code(int err) {
  switch (err) {
  case STRATA_OK:
    return CLI_OK;
  case STRATA_EINVAL:
    return CLI_USAGE;
  case STRATA_EBADINPUT:
  case STRATA_EVERSION:
  case STRATA_ECORRUPT:
  case STRATA_ENOTFOUND:
  case STRATA_EIO:
  case STRATA_EUNSUPPORTED:
    return CLI_BADINPUT;
  case STRATA_EINFEASIBLE:
    return CLI_INFEASIBLE;
  default:
    return CLI_INTERNAL;
  }
}

int cli_fail(const char *cmd, int err) {
  const char *msg = strata_last_error();
  if (!msg[0]) msg = strata_strerror(err);
  fprintf(stderr, "strata %s: %s\n", cmd, msg);
  return cli_exit_code(err);
}

int cli_usage_error(const char *cmd, const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "strata %s: ", cmd);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, "\nTry 'strata %s --help'.\n", cmd);
  return CLI_USAGE;
}

int cli_parse_int(const char *cmd, const char *opt, const char *arg, long lo,
                  long hi, long *out) {
  char *end;
  errno = 0;
  long v = strtol(arg, &end, 10);
  if (errno || end == arg || *end || v < lo || v > hi)
    return cli_usage_error(cmd, "%s wants an integer from %ld to %ld, not '%s'",
                           opt, lo, hi, arg);
  *out = v;
  return 0;
}

int cli_parse_double(const char *cmd, const char *opt, const char *arg,
                     double lo, double hi, double *out) {
  char *end;
  errno = 0;
  double v = strtod(arg, &end);
  if (errno || end == arg || *end || !(v >= lo && v <= hi))
    return cli_usage_error(cmd, "%s wants a number from %g to %g, not '%s'",
                           opt, lo, hi, arg);
  *out = v;
  return 0;
}

int cli_write_output(const char *cmd, const char *path, const char *text,
                     size_t len) {
  int rc;
  if (!path || strcmp(path, "-") == 0) {
    if (fwrite(text, 1, len, stdout) != len || fflush(stdout) != 0) {
      fprintf(stderr, "strata %s: cannot write to standard output\n", cmd);
      return CLI_INTERNAL;
    }
    return CLI_OK;
  }
  rc = strata_file_write_atomic(path, text, len);
  return rc ? cli_fail(cmd, rc) : CLI_OK;
}
