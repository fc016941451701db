/*
 * fuzz_util.c - set-up shared by the fuzz targets.  The scratch folder is
 * per process (libFuzzer's -fork and -jobs run several), and is removed
 * at exit so a long run leaves nothing behind in /tmp.
 */
#include "fuzz_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "strata/strata.h"

static char dir[64];
static char path[128];
static char copy[128];

static void cleanup(void) {
  if (path[0]) unlink(path);
  if (copy[0]) unlink(copy);
  if (dir[0]) rmdir(dir);
}

void fuzz_setup(void) {
  static int done;
  if (done) return;
  done = 1;
  strata_init();
  strata_log_set_level(STRATA_LOG_ERROR);
  /* hwloc's own messages on damaged XML are noise here. */
  setenv("HWLOC_HIDE_ERRORS", "2", 1);
}

static void make_dir(void) {
  const char *tmp = getenv("TMPDIR");
  snprintf(dir, sizeof dir, "%s/strata-fuzz-XXXXXX",
           tmp && strlen(tmp) < 32 ? tmp : "/tmp");
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    abort();
  }
  atexit(cleanup);
}

void fuzz_copy_file(const char *src, const char *name) {
  char buf[65536];
  size_t n;
  FILE *in, *out;
  if (!dir[0]) make_dir();
  snprintf(copy, sizeof copy, "%s/%s", dir, name);
  in = fopen(src, "rb");
  out = fopen(copy, "wb");
  if (!in || !out) {
    perror(src);
    abort();
  }
  while ((n = fread(buf, 1, sizeof buf, in)) > 0)
    if (fwrite(buf, 1, n, out) != n) abort();
  fclose(in);
  if (fclose(out) != 0) abort();
}

const char *fuzz_write_file(const char *name, const uint8_t *data,
                            size_t size) {
  FILE *f;
  if (!dir[0]) make_dir();
  snprintf(path, sizeof path, "%s/%s", dir, name);
  f = fopen(path, "wb");
  if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0) {
    perror(path);
    abort();
  }
  return path;
}
