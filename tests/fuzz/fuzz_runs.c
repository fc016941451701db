/*
 * fuzz_runs.c - the measured runs strata calibrate reads
 * (strata_measurements_parse, docs/calibration.md), JSON or CSV, on
 * arbitrary text.
 *
 * Properties: a failure has a message and leaves nothing behind; what is
 * read holds at least one run, each with a configuration (tp and pp of at
 * least 1) and a measured step that is positive and finite, and a peak
 * that is finite and not negative.  Fitting (strata calibrate) plans every
 * run and is not fuzzed here.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "fuzz_util.h"
#include "strata/strata.h"

static void check(int ok, const char *what) {
  if (ok) return;
  fprintf(stderr, "fuzz_runs: %s (%s)\n", what, strata_last_error());
  abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  strata_measurements_t *m = NULL;
  fuzz_setup();
  strata_error_clear();
  int rc = strata_measurements_parse((const char *)data, size, "fuzz.csv", &m);
  if (rc) {
    check(rc < 0 && strata_last_error()[0] && !m, "failure without message");
    return 0;
  }
  check(m && m->n >= 1 && m->v, "no runs read");
  for (int i = 0; i < m->n; i++) {
    const strata_measurement_t *r = &m->v[i];
    check(isfinite(r->step_seconds) && r->step_seconds > 0,
          "a run's step is not a positive number");
    check(isfinite(r->peak_bytes) && r->peak_bytes >= 0,
          "a run's peak is not a number >= 0");
    check(r->po.tp >= 1 && r->po.pp >= 1, "a run without tp and pp");
  }
  strata_measurements_destroy(m);
  return 0;
}
