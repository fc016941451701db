/*
 * fuzz_calibration.c - the calibration file reader
 * (strata_calibration_parse, docs/calibration.md) on arbitrary text.
 *
 * Properties: a failure has a message; what is read writes back
 * (strata_calibration_write) to a file that reads to the same figures (to
 * cJSON's printing precision) and then to the same text; and it applies to a
 * cluster (a preset of two nodes) leaving every level with a positive, finite
 * bandwidth, so a calibration can never make a cost non-finite.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "strata/strata.h"

static void check(int ok, const char *what) {
  if (ok) return;
  fprintf(stderr, "fuzz_calibration: %s (%s)\n", what, strata_last_error());
  abort();
}

/* cJSON prints a number with 15 significant digits when they read back
 * to within a few ulps, so a written figure may move by that much (and
 * no more); the text itself is a fixed point. */
static int near(double x, double y) {
  return fabs(x - y) <= 4 * DBL_EPSILON * fmax(fabs(x), fabs(y));
}

static int same(const strata_calibration_t *a, const strata_calibration_t *b) {
  int eq = near(a->gemm, b->gemm) && near(a->attention, b->attention) &&
           near(a->stream, b->stream) &&
           near(a->step_seconds, b->step_seconds) &&
           near(a->memory_bytes, b->memory_bytes);
  for (int i = 0; i < 4; i++)
    eq &= near(a->link[i], b->link[i]);
  return eq;
}

static void applies(const strata_calibration_t *cal) {
  static strata_cluster_t *c;
  if (!c) check(strata_cluster_load("dgx-h100:2", &c) == 0, "no preset");
  check(strata_cluster_calibrate(c, cal) == 0,
        "a calibration that reads does not apply");
  for (int i = 0; i < strata_cluster_level_count(c); i++) {
    const strata_level_t *l = strata_cluster_level(c, i);
    check(isfinite(l->link.bandwidth) && l->link.bandwidth > 0,
          "a calibrated level cannot be costed");
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  strata_calibration_t a, b;
  char *t1 = NULL, *t2 = NULL;
  fuzz_setup();
  strata_error_clear();
  int rc = strata_calibration_parse((const char *)data, size, "fuzz.json", &a);
  if (rc) {
    check(rc < 0 && strata_last_error()[0], "failure without message");
    return 0;
  }
  check(strata_calibration_write(&a, &t1) == 0,
        "a calibration cannot be written");
  check(strata_calibration_parse(t1, strlen(t1), "written", &b) == 0,
        "a written calibration does not read");
  check(same(&a, &b), "write then read changed a figure");
  check(strata_calibration_write(&b, &t2) == 0 && !strcmp(t1, t2),
        "write/read is not a fixed point");
  applies(&a);
  strata_free(t1);
  strata_free(t2);
  return 0;
}
