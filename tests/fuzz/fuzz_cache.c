/*
 * fuzz_cache.c - the stage cache (pipeline/cache.c) reading a hostile
 * stages.scache.
 *
 * A checksum covers bytes, not meaning, so the input comes two ways (its
 * first byte says which): the file as it is, or entries the target
 * frames itself -- a valid header (this build's format and layout tag)
 * and each entry's checksum computed -- so that the fuzzer reaches the
 * decoder and the checks of what an entry holds.  Framed input is a
 * sequence of [key: 8 bytes][length: 2 bytes][payload].
 *
 * Properties: opening never fails but for memory; every entry that loads
 * is one the planner may use (a settled status, finite figures of at
 * least 0, op names, strategies and placements present and printable);
 * a new entry put and written next to whatever the file held loads back.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/text.h"
#include "fuzz_util.h"
#include "pipeline/sub.h"
#include "strata/strata.h"

#define MAX_KEYS 256

static void check(int ok, const char *what) {
  if (ok) return;
  fprintf(stderr, "fuzz_cache: %s\n", what);
  abort();
}

static void put32(unsigned char *p, uint32_t v) {
  for (int i = 0; i < 4; i++)
    p[i] = (unsigned char)(v >> (8 * i));
}

static uint64_t get64(const unsigned char *p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; i++)
    v |= (uint64_t)p[i] << (8 * i);
  return v;
}

static uint32_t get32(const unsigned char *p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; i++)
    v |= (uint32_t)p[i] << (8 * i);
  return v;
}

/* A result with every field set, as the cache keeps them. */
static strata_stage_result_t *sample(void) {
  strata_stage_result_t *r = strata_calloc(1, sizeof *r);
  check(r != NULL, "out of memory");
  r->status = STRATA_STAGE_OPTIMAL;
  r->devices = 8;
  r->homogeneous = 1;
  r->alpha = 1;
  r->fwd_seconds = 0.25;
  r->mem.total = 1e9;
  r->n_ops = 1;
  r->ops = strata_calloc(2, sizeof *r->ops);
  check(r->ops != NULL, "out of memory");
  r->ops[0].name = strata_strdup("qkv");
  r->ops[0].strategy = strata_strdup("row");
  r->ops[0].placement = strata_strdup("[S(1)]");
  r->ops[0].repeat = 1;
  return r;
}

static char dir[256], lock[300];

static void remove_lock(void) {
  unlink(lock);
}

/* The scratch folder the cache lives in (its lock removed at exit, so
 * that fuzz_util.c can remove the folder). */
static const char *folder(const char *p) {
  if (!dir[0]) {
    snprintf(dir, sizeof dir, "%.*s", (int)(strrchr(p, '/') - p), p);
    snprintf(lock, sizeof lock, "%s/stages.scache.lock", dir);
    atexit(remove_lock);
  }
  return dir;
}

/* The header of a file this build writes (the first 24 bytes), from a
 * cache written once. */
static const unsigned char *header(void) {
  static unsigned char h[24];
  static int done;
  if (done) return h;
  const char *p = fuzz_write_file("stages.scache", (const uint8_t *)"", 0);
  char file[300];
  folder(p);
  st__cache_t *c = NULL;
  strata_stage_result_t *r = sample();
  check(st__cache_open(dir, &c) == 0, "cannot open a new cache");
  check(st__cache_put(c, 1, r) == 0 && st__cache_flush(c) == 0,
        "cannot write a new cache");
  st__cache_close(c);
  strata_stage_result_destroy(r);
  snprintf(file, sizeof file, "%s/stages.scache", dir);
  FILE *f = fopen(file, "rb");
  check(f && fread(h, 1, 24, f) == 24, "cannot read the new cache");
  fclose(f);
  done = 1;
  return h;
}

/* Framed entries into a file with valid checksums; their keys. */
static void frame(const uint8_t *d, size_t n, strata_buf_t *b, uint64_t *keys,
                  int *nk) {
  unsigned char h[24], e[16];
  memcpy(h, header(), 24);
  strata_buf_append(b, h, 24);
  size_t at = 0;
  uint32_t count = 0;
  while (at + 10 <= n && count < MAX_KEYS) {
    uint64_t key = get64(d + at);
    size_t len = d[at + 8] | (size_t)d[at + 9] << 8;
    at += 10;
    if (len > n - at) len = n - at;
    memcpy(e, d + at - 10, 8);
    put32(e + 8, (uint32_t)len);
    put32(e + 12, strata_crc32(d + at, len));
    strata_buf_append(b, e, 16);
    strata_buf_append(b, d + at, len);
    keys[(*nk)++] = key;
    at += len;
    count++;
  }
  check(!b->oom, "out of memory");
  put32((unsigned char *)b->p + 16, count);
  put32((unsigned char *)b->p + 20, strata_crc32(b->p, 20));
}

/* The keys of a file as it is (as far as its framing goes). */
static void raw_keys(const uint8_t *d, size_t n, uint64_t *keys, int *nk) {
  size_t at = 24;
  while (n >= 24 && at + 16 <= n && *nk < MAX_KEYS) {
    size_t len = get32(d + at + 8);
    keys[(*nk)++] = get64(d + at);
    if (len > n - at - 16) break;
    at += 16 + len;
  }
}

static int figure(double x) {
  return isfinite(x) && x >= 0;
}

static void name(const char *s) {
  check(s != NULL, "a loaded op lacks a string");
  check(st__name_check(s, "name", "fuzz") == 0, "a loaded name is not one");
  strata_error_clear();
}

/* What a loaded entry must hold for the planner to use it. */
static void valid(const strata_stage_result_t *r) {
  check(r->status == STRATA_STAGE_OPTIMAL ||
            r->status == STRATA_STAGE_INFEASIBLE,
        "a loaded entry is not settled");
  const double f[] = {
      r->compute_seconds,  r->fwd_seconds,      r->bwd_seconds,
      r->fwd_comm_seconds, r->bwd_comm_seconds, r->peak_memory_bytes,
      r->mem.weights,      r->mem.gradients,    r->mem.optimizer,
      r->mem.activations,  r->mem.transient,    r->mem.total,
      r->comm_seconds,     r->sync_seconds,     r->activations_per_layer,
      r->min_memory_bytes};
  for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
    check(figure(f[i]), "a loaded figure is not finite and at least 0");
  check(r->devices >= 1, "a loaded entry has no devices");
  check(r->n_ops >= 0 && (r->n_ops == 0 || r->ops), "loaded ops missing");
  for (int k = 0; k < r->n_ops; k++) {
    name(r->ops[k].name);
    name(r->ops[k].strategy);
    name(r->ops[k].placement);
    check(figure(r->ops[k].mem_bytes) && figure(r->ops[k].comm_seconds),
          "a loaded op's figure is not finite and at least 0");
  }
  if (r->hint) name(r->hint);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint64_t keys[MAX_KEYS];
  int nk = 0;
  strata_buf_t b;
  fuzz_setup();
  strata_error_clear();
  if (size < 1) return 0;
  strata_buf_init(&b);
  header();
  if (data[0] & 1) {
    strata_buf_append(&b, data + 1, size - 1);
    raw_keys(data + 1, size - 1, keys, &nk);
  } else {
    frame(data + 1, size - 1, &b, keys, &nk);
  }
  fuzz_write_file("stages.scache", (const uint8_t *)b.p, b.len);
  strata_buf_free(&b);
  st__cache_t *c = NULL;
  check(st__cache_open(dir, &c) == 0, "a cache file made open fail");
  for (int i = 0; i < nk; i++) {
    strata_stage_result_t *r = NULL;
    int rc = st__cache_get(c, keys[i], &r);
    check(rc == 0 || rc == STRATA_ENOTFOUND || rc == STRATA_ECORRUPT,
          "get failed otherwise");
    check((rc == 0) == (r != NULL), "a result without success");
    if (r) valid(r);
    strata_stage_result_destroy(r);
  }
  /* a new entry written beside theirs loads back */
  strata_stage_result_t *x = sample(), *got = NULL;
  uint64_t mine = 0x5eed5eed5eed5eedULL;
  check(st__cache_put(c, mine, x) == 0, "put failed");
  check(st__cache_flush(c) == 0, "flush failed");
  st__cache_close(c);
  check(st__cache_open(dir, &c) == 0, "the written cache does not open");
  check(st__cache_get(c, mine, &got) == 0, "the new entry does not load back");
  check(got->devices == 8 && got->n_ops == 1 &&
            !strcmp(got->ops[0].placement, "[S(1)]"),
        "the new entry loads back different");
  strata_stage_result_destroy(got);
  strata_stage_result_destroy(x);
  st__cache_close(c);
  return 0;
}
