/*
 * fuzz_fleet.c - strata fleet's JOBS.json reader (strata_fleet_jobs_parse,
 * docs/cli.md "strata fleet") on arbitrary text.
 *
 * Properties: a failure has a message and leaves no jobs; what reads has
 * 1 to 64 jobs, each named as a file may be named (letters, digits, '.',
 * '_', '-', not first '.' or '-'), no two names equal but for case, a
 * model, a weight above 0 and min_nodes at most max_nodes where both are
 * given.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fuzz_util.h"
#include "strata/strata.h"

static void check(int ok, const char *what) {
  if (ok) return;
  fprintf(stderr, "fuzz_fleet: %s (%s)\n", what, strata_last_error());
  abort();
}

static int file_name(const char *s) {
  size_t n = strlen(s);
  if (!n || n > 64 || s[0] == '.' || s[0] == '-') return 0;
  return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                   "0123456789._-") == n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  strata_fleet_jobs_t *f = NULL;
  fuzz_setup();
  strata_error_clear();
  int rc = strata_fleet_jobs_parse((const char *)data, size, "fuzz.json", &f);
  if (rc) {
    check(rc < 0 && strata_last_error()[0] && !f, "failure without message");
    return 0;
  }
  check(f->n >= 1 && f->n <= 64, "a job count out of range");
  for (int i = 0; i < f->n; i++) {
    const strata_fleet_job_t *j = &f->jobs[i];
    check(file_name(j->name), "a job name that is no file name");
    check(j->model && j->model[0], "a job without a model");
    check(j->weight > 0, "a weight of 0 or less");
    check(!j->min_nodes || !j->max_nodes || j->min_nodes <= j->max_nodes,
          "min_nodes above max_nodes");
    for (int k = 0; k < i; k++)
      check(strcasecmp(j->name, f->jobs[k].name) != 0, "a name twice");
  }
  strata_fleet_jobs_destroy(f);
  return 0;
}
