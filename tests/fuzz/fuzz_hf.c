/*
 * fuzz_hf.c - the Hugging Face config importer (strata_hf_parse) on
 * arbitrary text.
 *
 * Properties: no crash, leak or undefined behaviour; a failure always
 * comes with a message; and whatever imports is a graph the trace writer
 * and loader take back to the same text.  The model is kept small by the
 * overrides (one layer, a short sequence), so that a config claiming
 * billions of parameters costs nothing but its shapes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "strata/strata.h"

static void check(int ok, const char *what) {
  if (ok) return;
  fprintf(stderr, "fuzz_hf: %s (%s)\n", what, strata_last_error());
  abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  strata_graph_t *g = NULL, *g2 = NULL;
  strata_gen_opts_t ov;
  char *t1 = NULL, *t2 = NULL;
  size_t l1 = 0, l2 = 0;
  fuzz_setup();
  strata_error_clear();
  strata_gen_opts_keep(&ov);
  ov.layers = 1;
  ov.seq = 16;
  int rc = strata_hf_parse((const char *)data, size, "fuzz.json", &ov, &g);
  if (rc) {
    check(rc < 0 && strata_last_error()[0] && !g, "failure without message");
    return 0;
  }
  check(strata_trace_write(g, &t1, &l1) == 0, "an import cannot be written");
  check(strata_trace_parse(t1, l1, "written", &g2) == 0,
        "a written import does not load");
  check(strata_trace_write(g2, &t2, &l2) == 0, "cannot write it again");
  check(l1 == l2 && !memcmp(t1, t2, l1), "the written import changed");
  strata_free(t1);
  strata_free(t2);
  strata_graph_destroy(g);
  strata_graph_destroy(g2);
  return 0;
}
