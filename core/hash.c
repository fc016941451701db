/*
 * hash.c - structural hashing (XXH64 from libxxhash) and CRC32 (zlib).
 *
 * The incremental state folds each piece into a running XXH64 so that a
 * key is built field by field without assembling a buffer; values are
 * hashed in a fixed byte order so keys agree across machines.
 */
#include <string.h>

#include <xxhash.h>
#include <zlib.h>

#include "strata/core.h"

uint64_t strata_hash64(const void *data, size_t len, uint64_t seed) {
  return XXH64(data, len, seed);
}

void strata_hash_init(strata_hash_t *hs, uint64_t seed) {
  hs->h = seed;
}

void strata_hash_bytes(strata_hash_t *hs, const void *data, size_t len) {
  hs->h = XXH64(data, len, hs->h);
}

void strata_hash_u64(strata_hash_t *hs, uint64_t v) {
  unsigned char b[8];
  for (int i = 0; i < 8; i++)
    b[i] = (unsigned char)(v >> (8 * i));
  strata_hash_bytes(hs, b, sizeof b);
}

void strata_hash_f64(strata_hash_t *hs, double v) {
  uint64_t u;
  if (v == 0.0) v = 0.0; /* -0.0 and 0.0 hash alike */
  memcpy(&u, &v, sizeof u);
  strata_hash_u64(hs, u);
}

void strata_hash_str(strata_hash_t *hs, const char *s) {
  size_t n = s ? strlen(s) : 0;
  strata_hash_u64(hs, n);
  strata_hash_bytes(hs, s ? s : "", n);
}

uint64_t strata_hash_final(const strata_hash_t *hs) {
  return hs->h;
}

uint32_t strata_crc32(const void *data, size_t len) {
  uLong c = crc32(0L, Z_NULL, 0);
  const unsigned char *p = data;
  while (len > 0) { /* crc32 takes a uInt length */
    uInt n = len > (1u << 30) ? (1u << 30) : (uInt)len;
    c = crc32(c, p, n);
    p += n;
    len -= n;
  }
  return (uint32_t)c;
}
