/*
 * log.c - messages on standard error, filtered by a level; the streams
 * that stand for standard output and error (core/stream.h); and small
 * formatting helpers shared by the reports.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "core/stream.h"
#include "strata/core.h"

static atomic_int level = STRATA_LOG_WARN;
/* Redirected streams (NULL: the process's own).  Workers of the thread
 * pool log too, so these are process-wide, not per thread. */
static FILE *_Atomic out_stream, *_Atomic err_stream;

FILE *st__stdout(void) {
  FILE *f = atomic_load(&out_stream);
  return f ? f : stdout;
}

FILE *st__stderr(void) {
  FILE *f = atomic_load(&err_stream);
  return f ? f : stderr;
}

void st__set_streams(FILE *out, FILE *err) {
  atomic_store(&out_stream, out);
  atomic_store(&err_stream, err);
}

int st__stderr_is_tty(void) {
  return !atomic_load(&err_stream) && isatty(STDERR_FILENO);
}

void strata_log_set_level(strata_log_level_t l) {
  atomic_store(&level, (int)l);
}

strata_log_level_t strata_log_get_level(void) {
  return (strata_log_level_t)atomic_load(&level);
}

void strata_log(strata_log_level_t l, const char *fmt, ...) {
  static const char *names[] = {"error", "warning", "info", "debug"};
  if ((int)l > atomic_load(&level)) return;
  char line[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  fprintf(st__stderr(), "strata: %s: %s\n", names[l], line);
}

double strata_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

const char *strata_fmt_bytes(double bytes, char *buf, size_t size) {
  static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int u = 0;
  double v = bytes < 0 ? -bytes : bytes;
  while (v >= 1024.0 && u < 5) {
    v /= 1024.0;
    u++;
  }
  snprintf(buf, size, "%s%.2f %s", bytes < 0 ? "-" : "", v, units[u]);
  return buf;
}
