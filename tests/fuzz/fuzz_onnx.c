/*
 * fuzz_onnx.c - the ONNX importer (strata_onnx_parse) on arbitrary
 * bytes: protobuf-c's decoder, the reader's checks, shape inference, the
 * op patterns and the layer finder.
 *
 * Properties: no crash, leak or undefined behaviour; a failure always
 * comes with a message and leaves no graph; and whatever imports is a
 * graph the trace writer and loader take back to the same text, with a
 * parameter count no larger than the elements the file's bytes could
 * describe.  Seeds (corpus/onnx) are tiny GPTs exported by
 * torch.onnx.export at opsets 14 and 17, tied and untied, a tiny
 * LLaMA-style GQA export (tests/onnx/llama.py: Expand, Where,
 * ConstantOfShape) and a tf2onnx-style GPT (tests/onnx/other_exporter.py:
 * Constant-node weights, Tile, Range).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "strata/strata.h"

static void check(int ok, const char *what) {
  if (ok) return;
  fprintf(stderr, "fuzz_onnx: %s (%s)\n", what, strata_last_error());
  abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  strata_graph_t *g = NULL, *g2 = NULL;
  strata_graph_stats_t st;
  char *t1 = NULL, *t2 = NULL;
  size_t l1 = 0, l2 = 0;
  fuzz_setup();
  strata_error_clear();
  int rc = strata_onnx_parse(data, size, "fuzz.onnx", NULL, &g);
  if (rc) {
    check(rc < 0 && strata_last_error()[0] && !g, "failure without message");
    return 0;
  }
  strata_graph_stats(g, &st);
  check(st.parameters >= 0 && st.layers >= 1, "an import without layers");
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
