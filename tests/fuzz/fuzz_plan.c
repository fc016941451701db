/*
 * fuzz_plan.c - the .splan decoder (strata_plan_decode) and everything
 * that reads a decoded plan (show, JSON, diff, every exporter).
 *
 * A CRC guards the payload, so random bytes almost never get past the
 * header.  An input that starts with "SPLN" is decoded as it is (header,
 * length and checksum checks); any other input is taken as a raw payload
 * and wrapped in a valid header first, which sends the fuzzer straight at
 * the payload decoder.
 *
 * The round-trip property (docs/plan-format.md): whatever decodes
 * re-encodes to the same payload bytes -- a file of format 18 (tagged
 * records) as strata writes it, one of an older format in that format
 * (st__payload_encode_legacy: nothing of it was lost) -- and, for a
 * wrapped input (deflated here at the encoder's level), to the same file
 * bytes.  A record of a tag this strata does not know is skipped: such an
 * input re-encodes without it, to a file that re-encodes to itself.  A
 * plan file deflated by another zlib may differ in its compressed stream
 * only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "fuzz_util.h"
#include "merge/merge_int.h"
#include "strata/strata.h"

#define HDR 20

static void check(int ok, const char *what) {
  if (ok) return;
  fprintf(stderr, "fuzz_plan: %s (%s)\n", what, strata_last_error());
  abort();
}

static void put32(unsigned char *p, uint32_t v) {
  for (int i = 0; i < 4; i++)
    p[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t get32(const unsigned char *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
         (uint32_t)p[3] << 24;
}

/* A plan file around raw payload bytes, as the encoder makes one. */
static unsigned char *wrap(const uint8_t *raw, size_t n, size_t *len) {
  uLongf zlen = compressBound((uLong)n);
  unsigned char *f = malloc(HDR + zlen);
  if (!f || compress2(f + HDR, &zlen, raw, (uLong)n, 9) != Z_OK) abort();
  memcpy(f, "SPLN", 4);
  /* format 18, tagged records; the older formats come in through whole
   * files (corpus/plan: 3, mixed.splan 4, mtp.splan 5, ep-overlap.splan
   * 6, ...) */
  f[4] = STRATA_PLAN_FORMAT_VERSION;
  f[5] = 0;
  f[6] = f[7] = 0;
  put32(f + 8, (uint32_t)crc32(0, f + HDR, (uInt)zlen));
  put32(f + 12, (uint32_t)n);
  put32(f + 16, (uint32_t)zlen);
  *len = HDR + zlen;
  return f;
}

/* The inflated payload of a plan file the decoder accepted. */
static unsigned char *payload(const unsigned char *f, size_t *n) {
  uLongf raw = get32(f + 12);
  unsigned char *p = malloc(raw ? raw : 1);
  if (!p || uncompress(p, &raw, f + HDR, get32(f + 16)) != Z_OK) abort();
  *n = raw;
  return p;
}

static void readers(const strata_plan_t *p) {
  char *t = NULL;
  int differs = 1;
  if (strata_plan_summary(p, &t) == 0) strata_free(t);
  if (strata_plan_json(p, &t) == 0) strata_free(t);
  if (strata_plan_diff(p, p, 0, &t, &differs) == 0) {
    check(!differs, "a plan differs from itself");
    strata_free(t);
  }
  strata_export_opts_t o;
  strata_export_opts_init(&o);
  o.gpus_per_node = 8;
  if (strata_export_megatron(p, &t) == 0) strata_free(t);
  if (strata_export_deepspeed(p, &t) == 0) strata_free(t);
  if (strata_export_timeline(p, &t) == 0) strata_free(t);
  if (strata_export_deepspeed_topology(p, &t) == 0) strata_free(t);
  if (strata_export_torchtitan(p, &t) == 0) strata_free(t);
  if (strata_export_megatron_launch(p, &o, &t) == 0) strata_free(t);
  if (strata_export_torch(p, &o, &t) == 0) strata_free(t);
  if (strata_export_html(p, &o, &t) == 0) strata_free(t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  strata_plan_t *p = NULL;
  unsigned char *wrapped = NULL, *enc = NULL, *raw_in, *raw_out;
  const unsigned char *file = data;
  size_t flen = size, elen = 0, n_in, n_out;
  fuzz_setup();
  strata_error_clear();
  if (size < 4 || memcmp(data, "SPLN", 4) != 0) {
    if (size > (1u << 20)) return 0;
    file = wrapped = wrap(data, size, &flen);
  }
  int rc = strata_plan_decode(file, flen, "fuzz.splan", &p);
  if (rc) {
    check(rc < 0 && strata_last_error()[0] && !p, "failure without message");
    free(wrapped);
    return 0;
  }
  check(strata_plan_encode(p, &enc, &elen) == 0,
        "a decoded plan does not encode");
  raw_in = payload(file, &n_in);
  raw_out = payload(enc, &n_out);
  int version = file[4] | file[5] << 8, skipped = 0;
  if (version < STRATA_PLAN_FORMAT_VERSION) { /* its own format's bytes */
    strata_buf_t old;
    check(st__payload_encode_legacy(p, &old) == 0, "no old encoding");
    free(raw_out);
    raw_out = malloc(old.len ? old.len : 1);
    if (!raw_out) abort();
    memcpy(raw_out, old.p, old.len);
    n_out = old.len;
    strata_buf_free(&old);
  } else {
    strata_plan_t *q = NULL;
    check(st__tags_decode(raw_in, n_in, "fuzz", 0, &skipped, &q) == 0,
          "the payload decodes once, not twice");
    strata_plan_destroy(q);
  }
  if (skipped) { /* the unknown records are dropped: a fixed point next */
    strata_plan_t *q = NULL;
    unsigned char *enc2 = NULL;
    size_t elen2 = 0;
    check(strata_plan_decode(enc, elen, "fuzz.splan", &q) == 0 &&
              strata_plan_encode(q, &enc2, &elen2) == 0,
          "a re-encoded plan does not read");
    check(elen2 == elen && memcmp(enc, enc2, elen) == 0,
          "re-encoding is not a fixed point");
    strata_free(enc2);
    strata_plan_destroy(q);
    free(raw_in);
    raw_in = payload(enc, &n_in);
    if (wrapped) flen = 0; /* the file differs by the records dropped */
  }
  if (n_in != n_out || memcmp(raw_in, raw_out, n_in) != 0) {
    size_t i = 0;
    while (i < n_in && i < n_out && raw_in[i] == raw_out[i])
      i++;
    fprintf(stderr,
            "fuzz_plan: payload of %zu bytes re-encodes to %zu, "
            "first difference at byte %zu\n",
            n_in, n_out, i);
    check(0, "decode then encode changed the payload");
  }
  if (wrapped && flen)
    check(elen == flen && memcmp(enc, file, flen) == 0,
          "decode then encode changed the file");
  readers(p);
  free(raw_in);
  free(raw_out);
  strata_free(enc);
  strata_plan_destroy(p);
  free(wrapped);
  return 0;
}
