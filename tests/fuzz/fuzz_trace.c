/*
 * fuzz_trace.c - the trace loader (strata_trace_parse) on arbitrary text.
 *
 * Properties: no crash, leak or undefined behaviour; a failure always
 * comes with a message; and whatever loads is written back
 * (strata_trace_write) into a trace that loads again to the same text
 * (the writer's output is a fixed point).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "strata/strata.h"

static void check(int ok, const char *what) {
  if (ok) return;
  fprintf(stderr, "fuzz_trace: %s (%s)\n", what, strata_last_error());
  abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  strata_graph_t *g = NULL, *g2 = NULL;
  char *t1 = NULL, *t2 = NULL;
  size_t l1 = 0, l2 = 0;
  fuzz_setup();
  strata_error_clear();
  int rc = strata_trace_parse((const char *)data, size, "fuzz.json", &g);
  if (rc) {
    check(rc < 0 && strata_last_error()[0] && !g, "failure without message");
    return 0;
  }
  strata_graph_stats_t st;
  strata_graph_stats(g, &st);
  check(strata_trace_write(g, &t1, &l1) == 0,
        "a loaded trace cannot be written");
  check(strata_trace_parse(t1, l1, "rewritten", &g2) == 0,
        "a written trace does not load");
  check(strata_trace_write(g2, &t2, &l2) == 0, "cannot write it again");
  check(l1 == l2 && memcmp(t1, t2, l1) == 0,
        "write/parse is not a fixed point");
  strata_free(t1);
  strata_free(t2);
  strata_graph_destroy(g2);
  strata_graph_destroy(g);
  return 0;
}
