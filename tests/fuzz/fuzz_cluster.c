/*
 * fuzz_cluster.c - the cluster spec loader on arbitrary text.
 *
 * strata_cluster_load takes a path (or a PRESET:NODES string), so each
 * input is written to a scratch file first.  A spec that loads is then
 * asked what the planner asks: collective times over the whole cluster
 * and over one node, and the stage meshes, which must be finite; every
 * level must have a positive, finite bandwidth and the GPU memory and
 * FLOP/s (a spec the planner cannot cost must be refused here).  The
 * scratch folder also holds node.xml (a small real hwloc export), so a
 * spec naming it reaches the XML path of a node group.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "fuzz_util.h"
#include "strata/strata.h"

static void check(int ok, const char *what) {
  if (ok) return;
  fprintf(stderr, "fuzz_cluster: %s (%s)\n", what, strata_last_error());
  abort();
}

static void probe(const strata_cluster_t *c) {
  int nodes = strata_cluster_nodes(c), g = strata_cluster_gpus_per_node(c);
  double s = 0;
  strata_mesh_t m;
  check(nodes >= 1 && g >= 1, "a loaded cluster without devices");
  for (int k = 0; k < STRATA_COLL_COUNT; k++) {
    if (strata_cluster_coll_time(c, (strata_coll_t)k, 1e6, nodes, g, &s) == 0)
      check(isfinite(s) && s >= 0, "a collective time is not finite");
    if (strata_cluster_coll_time(c, (strata_coll_t)k, 1e6, 1, g, &s) == 0)
      check(isfinite(s) && s >= 0, "a node collective time is not finite");
  }
  strata_cluster_stage_mesh(c, 1, g, &m);
  strata_cluster_stage_mesh(c, nodes, g, &m);
  for (int i = 0; i < strata_cluster_level_count(c); i++) {
    const strata_level_t *l = strata_cluster_level(c, i);
    check(l != NULL, "a missing level");
    check(isfinite(l->link.bandwidth) && l->link.bandwidth > 0 &&
              isfinite(l->link.latency) && l->link.latency >= 0,
          "a level's bandwidth or latency cannot be costed");
  }
  check(strata_cluster_gpu_memory(c) > 0 &&
            strata_cluster_gpu_peak_flops(c) > 0 &&
            isfinite(strata_cluster_gpu_peak_flops(c)),
        "a GPU without memory or FLOP/s");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  strata_cluster_t *c = NULL;
  static int copied;
  fuzz_setup();
  if (!copied++) fuzz_copy_file(FUZZ_NODE_XML, "node.xml");
  strata_error_clear();
  const char *path = fuzz_write_file("cluster.json", data, size);
  int rc = strata_cluster_load(path, &c);
  if (rc) {
    check(rc < 0 && strata_last_error()[0] && !c, "failure without message");
    return 0;
  }
  probe(c);
  strata_cluster_destroy(c);
  return 0;
}
