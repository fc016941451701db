/*
 * buf.c - a growable, always NUL-terminated byte buffer for building
 * output.  After a failed allocation the buffer is marked and later
 * appends do nothing, so a writer checks once at the end.
 */
#include <stdio.h>
#include <string.h>

#include "strata/core.h"

void strata_buf_init(strata_buf_t *b) {
  memset(b, 0, sizeof *b);
}

void strata_buf_free(strata_buf_t *b) {
  strata_free(b->p);
  strata_buf_init(b);
}

static int reserve(strata_buf_t *b, size_t extra) {
  if (b->oom) return STRATA_ENOMEM;
  if (b->len + extra + 1 <= b->cap) return 0;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < b->len + extra + 1)
    cap *= 2;
  char *p = strata_realloc(b->p, cap);
  if (!p) {
    b->oom = 1;
    return strata_error(STRATA_ENOMEM, "out of memory building output");
  }
  b->p = p;
  b->cap = cap;
  return 0;
}

int strata_buf_append(strata_buf_t *b, const void *data, size_t n) {
  int rc = reserve(b, n);
  if (rc) return rc;
  memcpy(b->p + b->len, data, n);
  b->len += n;
  b->p[b->len] = '\0';
  return 0;
}

int strata_buf_puts(strata_buf_t *b, const char *s) {
  return strata_buf_append(b, s, strlen(s));
}

int strata_buf_printf(strata_buf_t *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) return strata_error(STRATA_EINTERNAL, "bad format string");
  int rc = reserve(b, (size_t)n);
  if (rc) return rc;
  va_start(ap, fmt);
  vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
  return 0;
}

char *strata_buf_steal(strata_buf_t *b, size_t *len) {
  char *p = b->p;
  if (len) *len = b->len;
  if (!p) p = strata_strdup("");
  strata_buf_init(b);
  return p;
}

int strata_buf_finish(strata_buf_t *b, char **text) {
  if (b->oom) {
    strata_buf_free(b);
    return strata_error(STRATA_ENOMEM, "out of memory");
  }
  *text = strata_buf_steal(b, NULL);
  return 0;
}
