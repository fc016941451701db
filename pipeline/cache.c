/*
 * cache.c - solved stage subproblems kept on disk across runs, so that a
 * nightly re-plan after a small cluster change re-solves only what
 * changed.
 *
 * One file per subproblem, named by its 64-bit structural key:
 * "<16 hex digits>.ssub".  Layout (little-endian): magic "SSUB", format
 * version (u32), key (u64), CRC32 of the payload (u32), payload length
 * (u32), deflated length (u32), then the zlib-deflated payload.  A file
 * that is short, from another version, for another key, or fails its
 * checksum is ignored (and re-solved), never trusted.  Writes are atomic.
 */
#include <stdio.h>
#include <string.h>

#include <zlib.h>

#include "pipeline/sub.h"

#define CACHE_VERSION 3u
#define HEADER 28
#define MAX_PAYLOAD (64u << 20)

typedef struct {
  strata_buf_t b;
} wr_t;

static void put_u32(unsigned char *p, uint32_t v) {
  for (int i = 0; i < 4; i++)
    p[i] = (unsigned char)(v >> (8 * i));
}

static void put_u64(unsigned char *p, uint64_t v) {
  for (int i = 0; i < 8; i++)
    p[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t get_u32(const unsigned char *p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; i++)
    v |= (uint32_t)p[i] << (8 * i);
  return v;
}

static uint64_t get_u64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++)
    v |= (uint64_t)p[i] << (8 * i);
  return v;
}

static void w_f64(wr_t *w, double v) {
  unsigned char b[8];
  uint64_t u;
  memcpy(&u, &v, 8);
  put_u64(b, u);
  strata_buf_append(&w->b, b, 8);
}

static void w_i32(wr_t *w, int v) {
  unsigned char b[4];
  put_u32(b, (uint32_t)v);
  strata_buf_append(&w->b, b, 4);
}

static void w_str(wr_t *w, const char *s) {
  size_t n = s ? strlen(s) : 0;
  w_i32(w, (int)n);
  strata_buf_append(&w->b, s ? s : "", n);
}

static void write_result(wr_t *w, const strata_stage_result_t *r) {
  int ints[] = {
      (int)r->status, r->devices, r->homogeneous,     r->int_vars,
      r->cont_vars,   r->rows,    r->int_vars_before, r->cont_vars_before,
      r->rows_before, r->n_ops};
  double dbl[] = {r->alpha,
                  r->objective,
                  r->memory_redundancy_bytes,
                  r->comm_bytes,
                  r->comm_seconds,
                  r->sync_seconds,
                  r->compute_seconds,
                  r->fwd_seconds,
                  r->bwd_seconds,
                  r->fwd_comm_seconds,
                  r->bwd_comm_seconds,
                  r->peak_memory_bytes,
                  r->zero_redundancy_bytes,
                  r->mem.weights,
                  r->mem.gradients,
                  r->mem.optimizer,
                  r->mem.activations,
                  r->mem.transient,
                  r->mem.total,
                  r->activations_per_layer,
                  r->min_memory_bytes,
                  r->solve_seconds};
  for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
    w_i32(w, ints[i]);
  for (size_t i = 0; i < sizeof dbl / sizeof dbl[0]; i++)
    w_f64(w, dbl[i]);
  w_str(w, r->hint);
  for (int i = 0; i < r->n_ops; i++) {
    const strata_op_choice_t *o = &r->ops[i];
    w_str(w, o->name);
    w_i32(w, o->layer);
    w_i32(w, o->repeat);
    w_str(w, o->strategy);
    w_str(w, o->placement);
    w_f64(w, o->mem_bytes);
    w_f64(w, o->comm_seconds);
  }
}

typedef struct {
  const unsigned char *p, *end;
  int bad;
} rd_t;

static const unsigned char *take(rd_t *r, size_t n) {
  if (r->bad || (size_t)(r->end - r->p) < n) {
    r->bad = 1;
    return NULL;
  }
  const unsigned char *q = r->p;
  r->p += n;
  return q;
}

static int r_i32(rd_t *r) {
  const unsigned char *q = take(r, 4);
  return q ? (int)get_u32(q) : 0;
}

static double r_f64(rd_t *r) {
  const unsigned char *q = take(r, 8);
  double v = 0;
  if (q) {
    uint64_t u = get_u64(q);
    memcpy(&v, &u, 8);
  }
  return v;
}

static char *r_str(rd_t *r) {
  int n = r_i32(r);
  if (n < 0 || n > 4096) {
    r->bad = 1;
    return NULL;
  }
  const unsigned char *q = take(r, (size_t)n);
  if (!q) return NULL;
  char *s = strata_strndup((const char *)q, (size_t)n);
  if (!s) r->bad = 1;
  return s;
}

static int read_result(rd_t *rd, strata_stage_result_t *r) {
  int *ints[] = {NULL,
                 &r->devices,
                 &r->homogeneous,
                 &r->int_vars,
                 &r->cont_vars,
                 &r->rows,
                 &r->int_vars_before,
                 &r->cont_vars_before,
                 &r->rows_before,
                 &r->n_ops};
  double *dbl[] = {&r->alpha,
                   &r->objective,
                   &r->memory_redundancy_bytes,
                   &r->comm_bytes,
                   &r->comm_seconds,
                   &r->sync_seconds,
                   &r->compute_seconds,
                   &r->fwd_seconds,
                   &r->bwd_seconds,
                   &r->fwd_comm_seconds,
                   &r->bwd_comm_seconds,
                   &r->peak_memory_bytes,
                   &r->zero_redundancy_bytes,
                   &r->mem.weights,
                   &r->mem.gradients,
                   &r->mem.optimizer,
                   &r->mem.activations,
                   &r->mem.transient,
                   &r->mem.total,
                   &r->activations_per_layer,
                   &r->min_memory_bytes,
                   &r->solve_seconds};
  r->status = (strata_stage_status_t)r_i32(rd);
  for (size_t i = 1; i < sizeof ints / sizeof ints[0]; i++)
    *ints[i] = r_i32(rd);
  for (size_t i = 0; i < sizeof dbl / sizeof dbl[0]; i++)
    *dbl[i] = r_f64(rd);
  r->hint = r_str(rd);
  if (r->hint && !r->hint[0]) { /* written as "" for NULL */
    strata_free(r->hint);
    r->hint = NULL;
  }
  if (rd->bad || r->n_ops < 0 || r->n_ops > 1000000 ||
      (unsigned)r->status > STRATA_STAGE_NO_SOLUTION) {
    r->n_ops = 0;
    return STRATA_ECORRUPT;
  }
  int n = r->n_ops;
  r->n_ops = 0;
  r->ops = strata_calloc((size_t)n + 1, sizeof *r->ops);
  if (!r->ops) return STRATA_ENOMEM;
  for (int i = 0; i < n && !rd->bad; i++, r->n_ops++) {
    strata_op_choice_t *o = &r->ops[i];
    o->name = r_str(rd);
    o->layer = r_i32(rd);
    o->repeat = r_i32(rd);
    o->strategy = r_str(rd);
    o->placement = r_str(rd);
    o->mem_bytes = r_f64(rd);
    o->comm_seconds = r_f64(rd);
  }
  return rd->bad || rd->p != rd->end ? STRATA_ECORRUPT : 0;
}

static void path_of(const char *dir, uint64_t key, char *buf, size_t n) {
  snprintf(buf, n, "%s/%016llx.ssub", dir, (unsigned long long)key);
}

int st__cache_put(const char *dir, uint64_t key,
                  const strata_stage_result_t *r) {
  wr_t w;
  char path[4096];
  unsigned char *out = NULL;
  int rc = 0;
  strata_buf_init(&w.b);
  write_result(&w, r);
  if (w.b.oom) {
    rc = STRATA_ENOMEM;
    goto out;
  }
  uLongf clen = compressBound((uLong)w.b.len);
  out = strata_malloc(HEADER + clen);
  if (!out) {
    rc = STRATA_ENOMEM;
    goto out;
  }
  if (compress2(out + HEADER, &clen, (const Bytef *)w.b.p, (uLong)w.b.len, 6) !=
      Z_OK) {
    rc = STRATA_EINTERNAL;
    goto out;
  }
  memcpy(out, "SSUB", 4);
  put_u32(out + 4, CACHE_VERSION);
  put_u64(out + 8, key);
  put_u32(out + 16, strata_crc32(w.b.p, w.b.len));
  put_u32(out + 20, (uint32_t)w.b.len);
  put_u32(out + 24, (uint32_t)clen);
  path_of(dir, key, path, sizeof path);
  rc = strata_file_write_atomic_nosync(path, out, HEADER + clen);
  if (rc) strata_log(STRATA_LOG_WARN, "cache: %s", strata_last_error());
out:
  strata_free(out);
  strata_buf_free(&w.b);
  return rc;
}

static int check_header(const unsigned char *d, size_t n, uint64_t key,
                        uint32_t *raw, uint32_t *clen) {
  if (n < HEADER || memcmp(d, "SSUB", 4) != 0) return STRATA_ECORRUPT;
  if (get_u32(d + 4) != CACHE_VERSION) return STRATA_EVERSION;
  if (get_u64(d + 8) != key) return STRATA_ECORRUPT;
  *raw = get_u32(d + 20);
  *clen = get_u32(d + 24);
  if (*raw > MAX_PAYLOAD || *clen != n - HEADER) return STRATA_ECORRUPT;
  return 0;
}

int st__cache_get(const char *dir, uint64_t key, strata_stage_result_t **out) {
  char path[4096], *data = NULL;
  size_t n = 0;
  unsigned char *raw = NULL;
  strata_stage_result_t *r = NULL;
  uint32_t rawlen, clen;
  int rc;
  *out = NULL;
  path_of(dir, key, path, sizeof path);
  rc = strata_file_read(path, MAX_PAYLOAD, &data, &n);
  if (rc) goto out;
  const unsigned char *d = (const unsigned char *)data;
  rc = check_header(d, n, key, &rawlen, &clen);
  if (rc) goto out;
  raw = strata_malloc(rawlen + 1);
  r = strata_calloc(1, sizeof *r);
  if (!raw || !r) {
    rc = STRATA_ENOMEM;
    goto out;
  }
  uLongf got = rawlen;
  if (uncompress(raw, &got, d + HEADER, clen) != Z_OK || got != rawlen ||
      strata_crc32(raw, rawlen) != get_u32(d + 16)) {
    rc = STRATA_ECORRUPT;
    goto out;
  }
  rd_t rd = {raw, raw + rawlen, 0};
  rc = read_result(&rd, r);
  if (!rc) {
    *out = r;
    r = NULL;
  }
out:
  if (rc && rc != STRATA_ENOTFOUND)
    strata_log(STRATA_LOG_INFO, "cache: ignoring %s (%s)", path,
               strata_strerror(rc));
  strata_stage_result_destroy(r);
  strata_free(raw);
  strata_free(data);
  return rc;
}
