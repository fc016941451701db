/*
 * plan_file.c - the .splan container (docs/plan-format.md): a 20-byte
 * little-endian header (magic "SPLN", format version, flags, CRC32 of the
 * stored payload, its inflated and stored lengths) and the payload of
 * payload.c deflated by zlib at a fixed level.
 *
 * The CRC covers the stored (deflated) bytes, so any flipped bit is caught
 * before zlib sees the stream and reported as a checksum mismatch.  The
 * decoder checks in the order a user can act on: not a plan file at all,
 * a newer format, truncation, corruption; it never inflates more than
 * STRATA_PLAN_MAX_PAYLOAD bytes, whatever the header claims.
 */
#include <string.h>
#include <zlib.h>

#include "merge/merge_int.h"

#define HDR 20
#define LEVEL 9

static void put16(unsigned char *p, unsigned v) {
  p[0] = (unsigned char)v;
  p[1] = (unsigned char)(v >> 8);
}

static void put32(unsigned char *p, uint32_t v) {
  for (int i = 0; i < 4; i++)
    p[i] = (unsigned char)(v >> (8 * i));
}

static unsigned get16(const unsigned char *p) {
  return (unsigned)p[0] | (unsigned)p[1] << 8;
}

static uint32_t get32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
         (uint32_t)p[3] << 24;
}

static int deflate_into(const strata_buf_t *raw, unsigned version,
                        unsigned char **data, size_t *len) {
  uLongf zlen = compressBound((uLong)raw->len);
  unsigned char *out = strata_malloc(HDR + (size_t)zlen);
  if (!out) return strata_error(STRATA_ENOMEM, "out of memory");
  int z = compress2(out + HDR, &zlen, (const Bytef *)raw->p, (uLong)raw->len,
                    LEVEL);
  if (z != Z_OK) {
    strata_free(out);
    return strata_error(z == Z_MEM_ERROR ? STRATA_ENOMEM : STRATA_EINTERNAL,
                        "plan: zlib compress2 failed (%d)", z);
  }
  memcpy(out, "SPLN", 4);
  put16(out + 4, version);
  put16(out + 6, 0);
  put32(out + 8, strata_crc32(out + HDR, (size_t)zlen));
  put32(out + 12, (uint32_t)raw->len);
  put32(out + 16, (uint32_t)zlen);
  *data = out;
  *len = HDR + (size_t)zlen;
  return 0;
}

/* A plan the decoder would refuse is not written (st__plan_check): the
 * message names `where` and the field. */
static int encode(const strata_plan_t *p, const char *where,
                  unsigned char **data, size_t *len) {
  strata_buf_t raw;
  int rc;
  if (!p || !data || !len)
    return strata_error(STRATA_EINVAL, "plan encode: no plan");
  rc = st__plan_check(p, STRATA_EBADINPUT, where,
                      "not written, as strata would call it corrupt");
  if (rc) return rc;
  rc = st__payload_encode(p, &raw);
  if (rc) return rc;
  if (raw.len > STRATA_PLAN_MAX_PAYLOAD)
    rc = strata_error(STRATA_EINVAL,
                      "plan: %zu bytes of payload exceed the "
                      "format's limit",
                      raw.len);
  /* format 18, tagged records: a field this strata does not know is
   * skipped or refused by its own flag, not by the version */
  if (!rc) rc = deflate_into(&raw, STRATA_PLAN_FORMAT_VERSION, data, len);
  strata_buf_free(&raw);
  return rc;
}

int strata_plan_encode(const strata_plan_t *p, unsigned char **data,
                       size_t *len) {
  return encode(p, "plan", data, len);
}

int strata_plan_check_made(const strata_plan_t *p, const char *where) {
  if (!p) return strata_error(STRATA_EINVAL, "plan check: no plan");
  return st__plan_check(p, STRATA_EINTERNAL, where ? where : "plan",
                        "not written: strata made a plan it would call "
                        "corrupt, a bug in strata (please report it with "
                        "the command)");
}

/* Header checks; on success *raw_len and *z_len are the two lengths. */
static int check_header(const unsigned char *d, size_t len, const char *w,
                        size_t *raw_len, size_t *z_len) {
  if (len < 4 || memcmp(d, "SPLN", 4) != 0)
    return strata_error(STRATA_EBADINPUT, "%s: not a Strata plan file", w);
  if (len < HDR)
    return strata_error(STRATA_ECORRUPT,
                        "%s: truncated: %zu bytes, shorter than the %d-byte "
                        "header",
                        w, len, HDR);
  unsigned v = get16(d + 4);
  if (v > STRATA_PLAN_FORMAT_VERSION)
    return strata_error(STRATA_EVERSION,
                        "%s: plan format version %u is newer than this strata "
                        "reads (%d); upgrade strata",
                        w, v, STRATA_PLAN_FORMAT_VERSION);
  if (v == 1 || v == 2)
    return strata_error(STRATA_EVERSION,
                        "%s: plan format version %u was written by an older "
                        "strata, %s: plan again (strata plan ... -o FILE)",
                        w, v,
                        v == 1 ? "whose cost model this one replaced"
                               : "before context and expert parallelism");
  if (v == 0 || get16(d + 6) != 0)
    return strata_error(STRATA_ECORRUPT,
                        "%s: corrupt: bad version 0 or "
                        "unknown flags 0x%x",
                        w, get16(d + 6));
  *raw_len = get32(d + 12);
  *z_len = get32(d + 16);
  if (*raw_len == 0)
    return strata_error(STRATA_ECORRUPT,
                        "%s: corrupt: the header announces an empty payload",
                        w);
  if (*raw_len > STRATA_PLAN_MAX_PAYLOAD)
    return strata_error(STRATA_ECORRUPT,
                        "%s: corrupt: a payload of %zu bytes "
                        "(the limit is %d)",
                        w, *raw_len, STRATA_PLAN_MAX_PAYLOAD);
  if (*z_len > len - HDR)
    return strata_error(STRATA_ECORRUPT,
                        "%s: truncated: the header announces "
                        "%zu bytes of payload, the file holds %zu",
                        w, *z_len, len - HDR);
  if (*z_len < len - HDR)
    return strata_error(STRATA_ECORRUPT,
                        "%s: corrupt: %zu bytes after the "
                        "payload",
                        w, len - HDR - *z_len);
  if (strata_crc32(d + HDR, *z_len) != get32(d + 8))
    return strata_error(STRATA_ECORRUPT, "%s: corrupt: checksum mismatch", w);
  return 0;
}

static int inflate_payload(const unsigned char *z, size_t z_len, size_t raw_len,
                           const char *w, unsigned char **out) {
  unsigned char *raw = strata_malloc(raw_len);
  uLongf got = (uLongf)raw_len;
  if (!raw) return strata_error(STRATA_ENOMEM, "out of memory");
  int r = uncompress(raw, &got, z, (uLong)z_len);
  if (r == Z_MEM_ERROR) {
    strata_free(raw);
    return strata_error(STRATA_ENOMEM, "out of memory");
  }
  if (r != Z_OK || got != raw_len) {
    strata_free(raw);
    return strata_error(STRATA_ECORRUPT,
                        "%s: corrupt: the payload does not "
                        "inflate to the %zu bytes the header announces",
                        w, raw_len);
  }
  *out = raw;
  return 0;
}

/* Format 18's records, or an older format's layout. */
int st__payload_decode(const unsigned char *data, size_t len, const char *where,
                       unsigned version, strata_plan_t **out) {
  if (version >= 18) return st__tags_decode(data, len, where, 0, NULL, out);
  return st__payload_decode_legacy(data, len, where, version, out);
}

int strata_plan_decode(const unsigned char *data, size_t len, const char *where,
                       strata_plan_t **out) {
  size_t raw_len = 0, z_len = 0;
  unsigned char *raw = NULL;
  const char *w = where ? where : "plan";
  int rc;
  if (!data || !out) return strata_error(STRATA_EINVAL, "plan decode: no data");
  rc = check_header(data, len, w, &raw_len, &z_len);
  if (!rc) rc = inflate_payload(data + HDR, z_len, raw_len, w, &raw);
  if (!rc) rc = st__payload_decode(raw, raw_len, w, get16(data + 4), out);
  strata_free(raw);
  return rc;
}

int strata_plan_save(const strata_plan_t *p, const char *path) {
  unsigned char *data = NULL;
  size_t len = 0;
  int rc = encode(p, path ? path : "plan", &data, &len);
  if (!rc) rc = strata_file_write_atomic(path, data, len);
  strata_free(data);
  return rc;
}

int strata_plan_load(const char *path, strata_plan_t **out) {
  char *data = NULL;
  size_t len = 0;
  int rc = strata_file_read(path, STRATA_PLAN_MAX_PAYLOAD + 64, &data, &len);
  if (!rc) rc = strata_plan_decode((const unsigned char *)data, len, path, out);
  strata_free(data);
  return rc;
}
