/*
 * names.c - option defaults and the names of objectives, recipes,
 * recompute modes and outcomes (parsed by the CLI, printed in reports).
 */
#include <string.h>

#include "strata/intraop.h"

void strata_stage_opts_init(strata_stage_opts_t *o) {
  memset(o, 0, sizeof *o);
  strata_mesh_default(&o->mesh, 1, 1);
  o->layer_begin = o->layer_end = -1;
  o->with_prologue = o->with_epilogue = -1;
  o->alpha = 1.0;
  o->objective = STRATA_OBJ_MIN_MEM;
  o->recipe = STRATA_RECIPE_ZERO;
  o->sequence_parallel = -1;
  o->in_flight = 1;
  o->micro_batches = 1;
  o->outer_dp = 1;
  o->outer_link.bandwidth = 25e9;
  o->outer_link.latency = 10e-6;
  strata_perf_of(strata_gpu_model_find("H100-SXM"), &o->perf, NULL);
  o->homogeneous = 1;
  o->reduce = 1;
  o->time_limit = 60;
  o->mip_gap = 1e-6;
  o->cp = 1;
  o->cp_comm = STRATA_CP_P2P;
  o->ep_outer = 1;
  o->ep_link = o->outer_link;
  o->moe_imbalance = 1.0;
}

static const char *obj_names[] = {"min-mem", "min-comm", "megatron", "dp"};
static const char *rc_names[] = {"none", "selective", "full"};
static const char *recipe_names[] = {"zero", "megatron"};
static const char *status_names[] = {"optimal", "feasible", "infeasible",
                                     "no-solution"};

static int find(const char *const *names, int n, const char *s) {
  for (int i = 0; i < n; i++)
    if (!strcmp(names[i], s)) return i;
  return -1;
}

const char *strata_objective_name(strata_objective_t o) {
  return (unsigned)o < 4 ? obj_names[o] : "?";
}

int strata_objective_parse(const char *s, strata_objective_t *out) {
  int i = find(obj_names, 4, s);
  if (i < 0)
    return strata_error(STRATA_EINVAL,
                        "unknown objective '%s' (min-mem, "
                        "min-comm, megatron, dp)",
                        s);
  *out = (strata_objective_t)i;
  return 0;
}

const char *strata_recompute_name(strata_recompute_t r) {
  if (r == STRATA_RECOMPUTE_AUTO) return "auto";
  return (unsigned)r < 3 ? rc_names[r] : "?";
}

int strata_recompute_parse(const char *s, strata_recompute_t *out) {
  int i = find(rc_names, 3, s);
  if (i < 0)
    return strata_error(STRATA_EINVAL,
                        "unknown recompute mode '%s' (none, "
                        "selective, full)",
                        s);
  *out = (strata_recompute_t)i;
  return 0;
}

const char *strata_recipe_name(strata_recipe_t r) {
  return (unsigned)r < 2 ? recipe_names[r] : "?";
}

int strata_recipe_parse(const char *s, strata_recipe_t *out) {
  int i = find(recipe_names, 2, s);
  if (i < 0)
    return strata_error(STRATA_EINVAL,
                        "unknown precision recipe '%s' (zero: "
                        "2+2+12 bytes/param, megatron: 2+4+12)",
                        s);
  *out = (strata_recipe_t)i;
  return 0;
}

const char *strata_stage_status_name(strata_stage_status_t s) {
  return (unsigned)s < 4 ? status_names[s] : "?";
}
