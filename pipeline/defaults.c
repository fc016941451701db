/*
 * defaults.c - the planner's options and their defaults, in one place.
 * strata_plan_opts_init() fills what needs nothing to be known;
 * strata_plan_opts_resolve() fills, from the model and the cluster, what
 * the init leaves at 0 ("the library's default", as zstd's parameters do):
 * the global batch follows the sequence length.  strata_pipeline_plan()
 * resolves its own copy of the options, so the C API, `strata plan` and
 * the Python package (which runs the CLI) plan the same thing from the
 * same given options: the CLI passes only what the user gave.
 *
 * To add an option: a member of strata_plan_opts_t (pipeline.h) whose 0
 * means "the default", its default here (init when constant, resolve when
 * it follows the model or the cluster), its row in the CLI's table
 * (cli/planargs.c) and its line in docs/cli.md.  A switch or a choice
 * that a plan records is a row of include/strata/plan_fields.h instead,
 * which gives all of these.
 */
#include <string.h>

#include "strata/pipeline.h"

void strata_plan_opts_init(strata_plan_opts_t *o) {
  memset(o, 0, sizeof *o);
  o->global_batch = 0; /* resolved: strata_default_global_batch */
  o->alpha = 1.0;
  o->memory_reserve = 0.5 * 1024 * 1024 * 1024;
  o->zero_stage = 1;
  o->recipe = STRATA_RECIPE_MEGATRON;
  o->recompute = STRATA_RECOMPUTE_AUTO;
  o->sequence_parallel = STRATA_AUTO;
  o->megatron = 1;
  o->stage_time_limit = 60;
#define SWITCH_DEFAULT(F, m, key, what, codec, slot, diff, cli, def, help)     \
  o->m = def;
  STRATA_PLAN_SWITCHES(SWITCH_DEFAULT, o)
#undef SWITCH_DEFAULT
  o->top = 3;
  strata_gen_opts_keep(&o->gen);
  o->cp_comm = STRATA_AUTO;
  o->precision = STRATA_PRECISION_BF16;
  o->moe_imbalance = 1.0;
  strata_stack_init(&o->stack);
}

int strata_default_global_batch(int seq_len) {
  const long budget = 1L << 22; /* tokens a step: 1024 x 4096 */
  int b = 1024;
  while (b > 1 && seq_len > 0 && (long)b * seq_len > budget)
    b /= 2;
  return b;
}

void strata_plan_opts_resolve(strata_plan_opts_t *o, const strata_graph_t *g) {
  if (!o->global_batch && g)
    o->global_batch = strata_default_global_batch(g->seq_len);
}

void strata_plan_opts_fixed(strata_plan_opts_t *o) {
  if (!o->micro_batch) o->micro_batch = o->gen.micro_batch = 1;
  if (!o->vpp && !o->pipeline_layout) o->vpp = 1; /* a layout gives its own */
  if (!o->cp) o->cp = 1;
}

double strata_plan_memory_budget(const strata_plan_opts_t *o,
                                 const strata_cluster_t *c) {
  double gpu = o->memory_budget > 0 ? o->memory_budget
                                    : (double)strata_cluster_gpu_memory(c);
  return gpu - o->memory_reserve;
}
