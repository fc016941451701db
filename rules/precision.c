/*
 * precision.c - the narrow-precision recipe a plan's GEMMs run: what the
 * options ask on the cluster's GPU (intraop/lowp.c holds the recipes).
 */
#include <string.h>

#include "pipeline/search.h"

int st__blackwell(const strata_cluster_t *c) {
  const strata_gpu_model_t *m = c ? strata_cluster_gpu_model(c) : NULL;
  if (!m || !m->name) return -1;
  return strstr(m->name, "B200") != NULL || strstr(m->name, "B300") != NULL;
}

/* Blackwell's Transformer Engine recipe is MXFP8 (block scales); earlier
 * GPUs scale per tensor. */
int st__lowp_of(const strata_plan_opts_t *o, const strata_cluster_t *c) {
  if (o->precision == STRATA_PRECISION_FP4) return STRATA_LOWP_NVFP4;
  if (o->fp8_recipe > STRATA_LOWP_NONE) return o->fp8_recipe;
  return st__blackwell(c) == 1 ? STRATA_LOWP_MXFP8 : STRATA_LOWP_DELAYED;
}
