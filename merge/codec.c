/*
 * codec.c - varints, doubles and strings of the plan payload (codec.h).
 * Every read is bounds-checked against what is left, so a hostile payload
 * can make a field fail but never make the reader run past the buffer or
 * allocate more than the payload's own size.
 */
#include <string.h>

#include "merge/codec.h"

void st__wr_u(st__wr_t *w, uint64_t v) {
  unsigned char t[10];
  size_t n = 0;
  do {
    t[n] = (unsigned char)(v & 0x7f);
    v >>= 7;
    if (v) t[n] |= 0x80;
    n++;
  } while (v);
  strata_buf_append(&w->b, t, n);
}

void st__wr_i(st__wr_t *w, int64_t v) {
  st__wr_u(w, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

void st__wr_f(st__wr_t *w, double v) {
  uint64_t u;
  unsigned char t[8];
  memcpy(&u, &v, sizeof u);
  for (int i = 0; i < 8; i++)
    t[i] = (unsigned char)(u >> (8 * i));
  strata_buf_append(&w->b, t, 8);
}

void st__wr_s(st__wr_t *w, const char *s) {
  if (!s) {
    st__wr_u(w, 0);
    return;
  }
  size_t n = strlen(s);
  st__wr_u(w, (uint64_t)n + 1);
  strata_buf_append(&w->b, s, n);
}

static void fail(st__rd_t *r, const char *field, const char *why) {
  if (r->bad) return;
  r->bad = field;
  r->why = why;
}

uint64_t st__rd_u(st__rd_t *r, const char *field) {
  uint64_t v = 0;
  for (int shift = 0; !r->bad; shift += 7) {
    if (r->pos >= r->len) {
      fail(r, field, "is missing (the payload ends early)");
      break;
    }
    unsigned char c = r->p[r->pos++];
    if (shift > 63 || (shift == 63 && (c & 0x7e))) {
      fail(r, field, "is not a valid varint");
      break;
    }
    v |= (uint64_t)(c & 0x7f) << shift;
    if (!(c & 0x80)) {
      /* A trailing zero byte would decode to the same value: one encoding
       * per value keeps decode-then-encode byte-exact. */
      if (c == 0 && shift > 0) {
        fail(r, field, "is not a minimal varint");
        break;
      }
      return v;
    }
  }
  return 0;
}

int st__rd_int(st__rd_t *r, const char *field, int lo, int hi) {
  uint64_t u = st__rd_u(r, field);
  int64_t v = (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
  if (r->bad) return 0;
  if (v < lo || v > hi) {
    fail(r, field, "is out of range");
    return 0;
  }
  return (int)v;
}

double st__rd_f(st__rd_t *r, const char *field) {
  uint64_t u = 0;
  double v;
  if (r->bad) return 0;
  if (r->len - r->pos < 8) {
    fail(r, field, "is missing (the payload ends early)");
    return 0;
  }
  for (int i = 0; i < 8; i++)
    u |= (uint64_t)r->p[r->pos + i] << (8 * i);
  r->pos += 8;
  memcpy(&v, &u, sizeof v);
  return v;
}

/* The length of the next string, or -1 for NULL or a failure. */
static long str_len(st__rd_t *r, const char *field) {
  uint64_t n = st__rd_u(r, field);
  if (r->bad || n == 0) return -1;
  if (n - 1 > r->len - r->pos) {
    fail(r, field, "is longer than the payload");
    return -1;
  }
  return (long)(n - 1);
}

char *st__rd_s(st__rd_t *r, const char *field, int *oom) {
  long n = str_len(r, field);
  char *s;
  if (n < 0) return NULL;
  if (memchr(r->p + r->pos, 0, (size_t)n)) {
    fail(r, field, "holds a NUL byte");
    return NULL;
  }
  s = strata_strndup((const char *)r->p + r->pos, (size_t)n);
  if (!s) *oom = 1;
  r->pos += (size_t)n;
  return s;
}

void st__rd_sbuf(st__rd_t *r, const char *field, char *buf, size_t size) {
  long n = str_len(r, field);
  buf[0] = 0;
  if (n < 0) {
    fail(r, field, "is missing (a NULL string)");
    return;
  }
  if ((size_t)n >= size || memchr(r->p + r->pos, 0, (size_t)n)) {
    fail(r, field, "is too long or holds a NUL byte");
    return;
  }
  memcpy(buf, r->p + r->pos, (size_t)n);
  buf[n] = 0;
  r->pos += (size_t)n;
}
