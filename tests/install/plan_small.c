/*
 * plan_small.c - a user of the installed library: plan a small GPT on one
 * DGX H100 through the public API only (include/strata/strata.h), print
 * the degrees, and round-trip the plan through its file encoding.  Built
 * by tests/install/run.sh against an installed Strata, once through
 * pkg-config and once through find_package(Strata), shared and static.
 */
#include <stdio.h>
#include <string.h>

#include <strata/strata.h>

int main(void) {
  strata_gen_opts_t ov;
  strata_plan_opts_t po;
  strata_graph_t *g = NULL;
  strata_cluster_t *c = NULL;
  strata_plan_t *p = NULL, *q = NULL;
  unsigned char *data = NULL;
  size_t len = 0;
  int rc;
  strata_init();
  strata_gen_opts_keep(&ov);
  ov.layers = 4, ov.hidden = 512, ov.heads = 8, ov.seq = 256, ov.vocab = 4096;
  strata_plan_opts_init(&po);
  po.global_batch = 64;
  po.quiet = 1;
  if ((rc = strata_model_load("gpt", &ov, &g)) ||
      (rc = strata_cluster_load("dgx-h100:1", &c)) ||
      (rc = strata_pipeline_plan(g, c, &po, &p)) ||
      (rc = strata_merge_stitch(p, g, c)) ||
      (rc = strata_plan_encode(p, &data, &len)) ||
      (rc = strata_plan_decode(data, len, "memory", &q))) {
    fprintf(stderr, "plan_small: %s\n", strata_last_error());
  } else {
    printf("devices %d tp %d pp %d dp %d; %zu bytes; round trip %s\n",
           p->devices, p->tp, p->pp, p->dp, len,
           q->tp == p->tp && q->pp == p->pp && q->dp == p->dp ? "ok" : "BAD");
  }
  strata_free(data);
  strata_plan_destroy(q);
  strata_plan_destroy(p);
  strata_cluster_destroy(c);
  strata_graph_destroy(g);
  return rc ? 1 : 0;
}
