/*
 * command.c - strata_command_run(): a `strata` command inside the
 * caller's process (include/strata/command.h), with standard output and
 * standard error redirected into memory streams for the call.  One lock
 * serialises the calls, since the streams, getopt's state and the SIGINT
 * handler of `strata plan` belong to the whole process.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "cli/cli.h"
#include "core/stream.h"
#include "strata/command.h"

static uv_once_t once = UV_ONCE_INIT;
static uv_mutex_t lock;

static void init_lock(void) {
  if (uv_mutex_init(&lock)) abort(); /* no mutex: nothing can be serialised */
}

/* A copy of a memory stream's bytes in Strata's allocator (so that one
 * strata_free() frees what the caller gets), or NULL. */
static char *take(const char *buf, size_t len, size_t *len_out) {
  char *s = strata_malloc(len + 1);
  if (!s) return NULL;
  if (len) memcpy(s, buf, len);
  s[len] = '\0';
  if (len_out) *len_out = len;
  return s;
}

/* getopt_long permutes the vector and the commands take char **: they get
 * a copy of the pointers (the strings are only read). */
static int run(int argc, const char *const *argv) {
  char **v = strata_calloc((size_t)argc + 1, sizeof *v);
  if (!v) return CLI_INTERNAL;
  for (int i = 0; i < argc; i++)
    v[i] = (char *)argv[i];
  int rc = cli_main(argc, v);
  strata_free(v);
  return rc;
}

int strata_command_run(int argc, const char *const *argv, char **out,
                       size_t *out_len, char **err, size_t *err_len) {
  char *obuf = NULL, *ebuf = NULL;
  size_t olen = 0, elen = 0;
  int rc = -1;
  if (out) *out = NULL;
  if (err) *err = NULL;
  if (argc < 1 || !argv) return CLI_USAGE;
  strata_init();
  uv_once(&once, init_lock);
  uv_mutex_lock(&lock);
  FILE *o = open_memstream(&obuf, &olen), *e = open_memstream(&ebuf, &elen);
  if (!o || !e) goto out;
  st__set_streams(o, e);
  strata_error_clear();
  rc = run(argc, argv);
  st__set_streams(NULL, NULL);
  fflush(o);
  fflush(e);
  if ((out && !(*out = take(obuf, olen, out_len))) ||
      (err && !(*err = take(ebuf, elen, err_len)))) {
    if (out) strata_free(*out), *out = NULL;
    rc = -1;
  }
out:
  if (o) fclose(o);
  if (e) fclose(e);
  free(obuf); /* open_memstream's buffers are the C library's */
  free(ebuf);
  uv_mutex_unlock(&lock);
  return rc;
}
