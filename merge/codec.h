/*
 * codec.h - the little-endian binary reader and writer of the plan payload
 * (docs/plan-format.md): unsigned LEB128 varints, zigzag signed varints,
 * IEEE-754 doubles as 8 little-endian bytes (exact round trip), strings as
 * varint (length + 1) then the bytes, 0 standing for a NULL string.
 *
 * The writer records an out-of-memory once in its buffer; the reader stops
 * at the first problem and remembers the field it was reading, so a
 * decoder can read every field straight through and check once.
 */
#ifndef STRATA_MERGE_CODEC_H
#define STRATA_MERGE_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include "strata/core.h"

typedef struct {
  strata_buf_t b;
} st__wr_t;

void st__wr_u(st__wr_t *w, uint64_t v);
void st__wr_i(st__wr_t *w, int64_t v);
void st__wr_f(st__wr_t *w, double v);
void st__wr_s(st__wr_t *w, const char *s);

typedef struct {
  const unsigned char *p;
  size_t len, pos;
  const char *bad; /* the field that failed, NULL while all is well */
  const char *why; /* "ends early", "is out of range", ... */
} st__rd_t;

uint64_t st__rd_u(st__rd_t *r, const char *field);
/* A signed varint that must lie in [lo, hi]. */
int st__rd_int(st__rd_t *r, const char *field, int lo, int hi);
double st__rd_f(st__rd_t *r, const char *field);
/* A strata_malloc'd copy (NULL for a NULL string); *oom set on failure. */
char *st__rd_s(st__rd_t *r, const char *field, int *oom);
/* Read a string into a fixed buffer (truncation is an error). */
void st__rd_sbuf(st__rd_t *r, const char *field, char *buf, size_t size);

#endif
