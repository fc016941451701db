/*
 * common.c - error reporting, option parsing and output shared by the
 * subcommands.
 */
#include <errno.h>
#include <getopt.h>
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

/* The entry of opts that getopt_long matched (a short option is found by
 * its code), or -1. */
static int entry_of(const struct option *opts, int c, int longindex) {
  if (longindex >= 0) return longindex;
  for (int i = 0; opts[i].name; i++)
    if (opts[i].val == c && !opts[i].flag) return i;
  return -1;
}

/* The entry named "no-NAME" for NAME, or NAME for "no-NAME", or -1. */
static int opposite_of(const struct option *opts, int i) {
  const char *n = opts[i].name;
  for (int j = 0; opts[j].name; j++) {
    const char *m = opts[j].name;
    if ((!strncmp(m, "no-", 3) && !strcmp(m + 3, n)) ||
        (!strncmp(n, "no-", 3) && !strcmp(n + 3, m)))
      return j;
  }
  return -1;
}

/* An option that takes a value may be given once: a second one would
 * silently win, and scripts that build command lines hide such slips.  A
 * flag may repeat (--json twice means --json), but not with its "no-"
 * opposite. */
static int check_repeat(const char *cmd, const struct option *opts, int i,
                        const char **seen, const char *arg) {
  static const char given[] = "";
  int j = opposite_of(opts, i);
  if (opts[i].has_arg != no_argument && seen[i])
    return cli_usage_error(cmd,
                           "--%s is given twice ('%s', then '%s'); give "
                           "it once",
                           opts[i].name, seen[i], arg ? arg : "");
  if (j >= 0 && seen[j])
    return cli_usage_error(cmd,
                           "--%s and --%s contradict each other; give "
                           "one",
                           opts[j].name, opts[i].name);
  seen[i] = arg ? arg : given;
  return 0;
}

int cli_getopt_operands(const char *cmd, int argc, char **argv,
                        const char *shortopts, const struct option *opts,
                        int help_code, void (*help)(void),
                        int (*on_opt)(int c, void *ctx), void *ctx,
                        int *first) {
  enum { MAX_OPTS = 128 };
  const char *seen[MAX_OPTS] = {0};
  int c, longindex = -1;
  optind = 0; /* glibc: start afresh */
  opterr = 0;
  while ((c = getopt_long(argc, argv, shortopts, opts, &longindex)) != -1) {
    int i = c == '?' || c == ':' ? -1 : entry_of(opts, c, longindex), rc;
    longindex = -1;
    if (c == help_code) {
      help();
      return -1;
    }
    if (c == '?' || c == ':')
      return cli_usage_error(cmd, "unknown or incomplete option '%s'",
                             argv[optind - 1]);
    if (i >= 0 && i < MAX_OPTS &&
        (rc = check_repeat(cmd, opts, i, seen, optarg)))
      return rc;
    if ((rc = on_opt(c, ctx))) return rc;
  }
  *first = optind;
  return 0;
}

int cli_getopt(const char *cmd, int argc, char **argv, const char *shortopts,
               const struct option *opts, int help_code, void (*help)(void),
               int (*on_opt)(int c, void *ctx), void *ctx) {
  int first, rc = cli_getopt_operands(cmd, argc, argv, shortopts, opts,
                                      help_code, help, on_opt, ctx, &first);
  if (rc) return rc;
  if (first < argc)
    return cli_usage_error(cmd, "unexpected argument '%s'", argv[first]);
  return 0;
}
