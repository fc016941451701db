/*
 * common.c - error reporting, value parsing and output shared by the
 * subcommands (their options are parsed from tables: cli/opts.c).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/cli.h"
#include "core/stream.h"

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
  case STRATA_ETIMEDOUT:
    return CLI_TIMEOUT;
  default:
    return CLI_INTERNAL;
  }
}

int cli_fail(const char *cmd, int err) {
  const char *msg = strata_last_error();
  if (!msg[0]) msg = strata_strerror(err);
  fprintf(st__stderr(), "strata %s: %s\n", cmd, msg);
  return cli_exit_code(err);
}

int cli_usage_error(const char *cmd, const char *fmt, ...) {
  va_list ap;
  fprintf(st__stderr(), "strata %s: ", cmd);
  va_start(ap, fmt);
  vfprintf(st__stderr(), fmt, ap);
  va_end(ap);
  fprintf(st__stderr(), "\nTry 'strata %s --help'.\n", cmd);
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
    if (fwrite(text, 1, len, st__stdout()) != len ||
        fflush(st__stdout()) != 0) {
      fprintf(st__stderr(), "strata %s: cannot write to standard output\n",
              cmd);
      return CLI_INTERNAL;
    }
    return CLI_OK;
  }
  rc = strata_file_write_atomic(path, text, len);
  return rc ? cli_fail(cmd, rc) : CLI_OK;
}

/* The folder part of path ("." for a bare name), in buf. */
static void folder_of(const char *path, char *buf, size_t size) {
  const char *slash = strrchr(path, '/');
  if (!slash)
    snprintf(buf, size, ".");
  else if (slash == path)
    snprintf(buf, size, "/");
  else
    snprintf(buf, size, "%.*s", (int)(slash - path), path);
}

int cli_output_writable(const char *opt, const char *path) {
  struct stat sb;
  char dir[4096];
  if (!path || strcmp(path, "-") == 0) return 0;
  if (!*path)
    return strata_error(STRATA_EBADINPUT, "%s: an empty path: name a file",
                        opt);
  if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
    return strata_error(STRATA_EIO, "%s %s: is a folder: name a file in it",
                        opt, path);
  if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) /* a device, a FIFO */
    return access(path, W_OK) == 0
               ? 0
               : strata_error(STRATA_EIO, "%s %s: cannot be written: %s", opt,
                              path, strerror(errno));
  /* a new file (or the rename over an old one) needs the folder's write
   * and search permissions */
  folder_of(path, dir, sizeof dir);
  if (stat(dir, &sb) != 0)
    return strata_error(STRATA_EIO,
                        "%s %s: the folder '%s' does not exist: create it or "
                        "name another",
                        opt, path, dir);
  if (!S_ISDIR(sb.st_mode))
    return strata_error(STRATA_EIO, "%s %s: '%s' is not a folder", opt, path,
                        dir);
  if (access(dir, W_OK | X_OK) != 0)
    return strata_error(STRATA_EIO,
                        "%s %s: the folder '%s' cannot be written: %s", opt,
                        path, dir, strerror(errno));
  return 0;
}
