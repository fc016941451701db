/*
 * alloc.c - allocation through one place, so that tests can inject
 * failures (SQLite's way: fail the Nth allocation for N = 1, 2, ... and
 * require a clean error each time).
 *
 * The countdown is atomic because pool workers allocate too.  With
 * injection off the cost is one relaxed load per allocation.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "strata/core.h"

static atomic_long fail_at;  /* 0: off; else the 1-based allocation to fail */
static atomic_long attempts; /* allocations since strata_alloc_fail_at */
static atomic_int failed;

static int should_fail(void) {
  long at = atomic_load_explicit(&fail_at, memory_order_relaxed);
  long n = atomic_fetch_add_explicit(&attempts, 1, memory_order_relaxed) + 1;
  if (at > 0 && n >= at) {
    atomic_store(&failed, 1);
    return 1;
  }
  return 0;
}

long strata_alloc_fail_at(long n) {
  long prev = atomic_exchange(&attempts, 0);
  atomic_store(&fail_at, n > 0 ? n : 0);
  atomic_store(&failed, 0);
  return prev;
}

int strata_alloc_failed(void) {
  return atomic_load(&failed);
}

void *strata_malloc(size_t n) {
  if (should_fail()) return NULL;
  return malloc(n ? n : 1);
}

void *strata_calloc(size_t count, size_t size) {
  if (should_fail()) return NULL;
  return calloc(count ? count : 1, size ? size : 1);
}

void *strata_realloc(void *p, size_t n) {
  if (should_fail()) return NULL;
  return realloc(p, n ? n : 1);
}

char *strata_strndup(const char *s, size_t n) {
  size_t len = strnlen(s, n);
  char *d = strata_malloc(len + 1);
  if (d) {
    memcpy(d, s, len);
    d[len] = '\0';
  }
  return d;
}

char *strata_strdup(const char *s) {
  return strata_strndup(s, (size_t)-1);
}

void strata_free(void *p) {
  free(p);
}

static void *cjson_malloc(size_t n) {
  return strata_malloc(n);
}

const char *strata_version(void) {
  return STRATA_VERSION;
}

void strata_init(void) {
  cJSON_Hooks hooks = {cjson_malloc, strata_free};
  cJSON_InitHooks(&hooks);
}
