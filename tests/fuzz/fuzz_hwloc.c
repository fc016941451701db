/*
 * fuzz_hwloc.c - a node's topology from hwloc XML (strata_node_load_xml)
 * on arbitrary text, through a scratch file as users give it.
 *
 * hwloc's XML parser is the one under test together with Strata's checks
 * around it and its extraction of GPUs, NICs and links; hwloc prints
 * nothing (HWLOC_HIDE_ERRORS).  Inputs are slower than the other targets'
 * (hwloc builds a whole topology), so runs use -timeout generously.
 */
#include <stdio.h>
#include <stdlib.h>

#include "fuzz_util.h"
#include "strata/strata.h"

static void check(int ok, const char *what) {
  if (ok) return;
  fprintf(stderr, "fuzz_hwloc: %s (%s)\n", what, strata_last_error());
  abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  strata_node_topo_t *n = NULL;
  fuzz_setup();
  strata_error_clear();
  const char *path = fuzz_write_file("node.xml", data, size);
  int rc = strata_node_load_xml(path, &n);
  if (rc) {
    check(rc < 0 && strata_last_error()[0] && !n, "failure without message");
    return 0;
  }
  int gpus = strata_node_gpu_count(n);
  check(gpus >= 1, "a node without GPUs was accepted");
  for (int a = 0; a < gpus; a++) {
    const strata_gpu_info_t *gi = strata_node_gpu(n, a);
    check(gi && gi->nic < strata_node_nic_count(n),
          "a GPU's NIC is out of range");
    for (int b = 0; b < gpus; b++)
      check(strata_node_link(n, a, b) >= 0, "a negative link bandwidth");
  }
  strata_node_destroy(n);
  return 0;
}
