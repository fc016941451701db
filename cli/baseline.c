/*
 * baseline.c - `strata plan --baseline OLD.splan`: keep yesterday's
 * configuration when it still pays, so a nightly re-plan changes the
 * configs a cluster runs only for a real gain (docs/nightly.md).
 *
 * OLD's configuration -- degrees (tp, cp, ep, etp, pp, dp), micro-batch,
 * interleaving, layer split, recompute, sequence parallelism, precision,
 * ZeRO stage, recipe, framework, overlaps -- is costed on today's cluster with
 * the planner's own evaluation, as `strata estimate` costs a fixed
 * configuration (the planner with every degree fixed, the memory check off so
 * that a configuration that no longer fits is still priced and said so).  It is
 * kept when it fits and its step is at most the threshold above the
 * best plan's; the verdict carries both steps, so the summary and the
 * JSON say which plan was kept and by what numbers.  A baseline of
 * another model or batch is refused: it is not the same training run.
 */
#include <math.h>
#include <string.h>

#include "cli/baseline.h"
#include "core/json.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

/* A plan's configuration in words, as its list of best configurations
 * names it (top[0] is its own). */
static void config_name(const strata_plan_t *p, char *buf, size_t size) {
  if (p->n_top > 0 && p->top)
    strata_plan_config_name(&p->top[0], buf, size);
  else
    snprintf(buf, size, "tp %d, pp %d, dp %d, micro %d", p->tp, p->pp, p->dp,
             p->micro_batch);
}

/* The same training run: model, its sizes and the global batch. */
static int same_run(const strata_plan_t *old, const strata_plan_t *now,
                    const char *path) {
  const int a[] = {old->layers, old->hidden,  old->heads, old->kv_heads,
                   old->ffn,    old->seq_len, old->vocab, old->global_batch};
  const int b[] = {now->layers, now->hidden,  now->heads, now->kv_heads,
                   now->ffn,    now->seq_len, now->vocab, now->global_batch};
  static const char *what[] = {"layers",     "hidden size", "heads",
                               "KV heads",   "FFN size",    "sequence",
                               "vocabulary", "global batch"};
  if (strcmp(old->model ? old->model : "", now->model ? now->model : ""))
    return strata_error(STRATA_EBADINPUT,
                        "--baseline %s was planned for model '%s', this plan "
                        "is for '%s': give a baseline of the same run",
                        path, old->model ? old->model : "?",
                        now->model ? now->model : "?");
  for (size_t i = 0; i < sizeof a / sizeof a[0]; i++)
    if (a[i] != b[i])
      return strata_error(STRATA_EBADINPUT,
                          "--baseline %s has %s %d, this plan %d: not the "
                          "same training run",
                          path, what[i], a[i], b[i]);
  return 0;
}

/* The options that fix OLD's configuration on top of the user's. */
static void fix_options(const strata_plan_t *old, strata_plan_opts_t *o,
                        char **lay) {
  o->tp = old->tp;
  o->pp = old->pp;
  o->dp = old->dp;
  o->cp = old->cp > 0 ? old->cp : 1;
  o->ep = old->experts > 0 && old->ep > 0 ? old->ep : 0;
  o->etp = old->experts > 0 && old->etp > 0 ? old->etp : 0;
  o->cp_comm = old->cp_comm;
  o->precision = old->fp8 == STRATA_LOWP_NVFP4 ? STRATA_PRECISION_FP4
                 : old->fp8                    ? STRATA_PRECISION_FP8
                                               : STRATA_PRECISION_BF16;
  /* the recipe OLD ran, given where it is not the GPU's own */
  o->fp8_recipe = old->fp8 && old->fp8 != STRATA_LOWP_NVFP4 ? old->fp8 : 0;
  if (old->moe_imbalance > 0) o->moe_imbalance = old->moe_imbalance;
  o->micro_batch = o->gen.micro_batch = old->micro_batch;
  o->vpp = old->vpp > 1 ? old->vpp : 1;
  o->first_layers = o->last_layers = 0;
  /* the embedding or loss counted: the even split of their units */
  if (old->pp > 1 && old->n_stages >= 2 && !old->account_embedding &&
      !old->account_loss) {
    o->first_layers = strata_plan_rank_layers(old, 0);
    o->last_layers = strata_plan_rank_layers(old, old->pp - 1);
  }
  /* chunks of their own sizes: the layout states them */
  if (old->pp > 1 && old->megatron && old->n_groups < 2 &&
      !old->account_embedding && !old->account_loss &&
      !strata_plan_rank_form(old) && (*lay = strata_plan_layout_dup(old))) {
    o->first_layers = o->last_layers = 0;
    o->pipeline_layout = *lay;
  }
  o->recompute = old->recompute;
  o->recompute_modules = (unsigned)old->recompute_modules;
  o->recompute_layers = old->recompute_layers;
  o->offload_layers = old->offload_layers;
  o->optimizer_offload = old->optimizer_offload;
  o->search_offload = 0; /* OLD's offloads as it ran them */
  o->main_grads_dtype = old->main_grads_dtype;
  o->exp_avg_dtype = old->exp_avg_dtype;
  o->exp_avg_sq_dtype = old->exp_avg_sq_dtype;
  o->sequence_parallel = old->sequence_parallel;
  o->zero_stage = old->zero_stage;
  o->recipe = old->recipe;
  o->framework = old->framework;
  o->megatron = old->megatron;
#define COPY_SWITCH(F, m, ...) o->m = old->m;
  STRATA_PLAN_SWITCHES(COPY_SWITCH, o)
#undef COPY_SWITCH
  /* what OLD holds as the framework's default is not given (the
   * rulebook refuses a switch given where it means nothing) */
  if (old->scatter_gather == (old->framework == STRATA_FRAMEWORK_DEEPSPEED))
    o->scatter_gather = STRATA_AUTO;
  o->moe_grouped_gemm = old->moe_grouped_gemm ? STRATA_AUTO : 0;
  o->moe_shared_overlap = old->moe_shared_overlap ? 1 : STRATA_AUTO;
#define COPY_CHOICE(F, kind, m, ...) o->m = old->m;
  STRATA_PLAN_CHOICES(COPY_CHOICE, o)
#undef COPY_CHOICE
  o->no_memory_check = 1;
  o->top = 1;
  o->pareto = 0; /* the front is the search's, today's plan carries it */
  o->quiet = 1;
}

/* OLD's configuration on today's cluster; 0 with *out NULL and the reason
 * in v when it cannot be costed there. */
static int cost_old(const cli_plan_args_t *a, const strata_plan_t *old,
                    const strata_graph_t *g, const strata_cluster_t *c,
                    strata_plan_t **out, cli_baseline_t *v) {
  strata_plan_opts_t o = a->po;
  int rc;
  *out = NULL;
  if (old->devices > strata_cluster_gpus(c)) {
    snprintf(v->reason, sizeof v->reason,
             "it needs %d %ss and the cluster has %d usable now", old->devices,
             strata_cluster_device_kind(c), strata_cluster_gpus(c));
    return 0;
  }
  char *lay = NULL; /* a layout plan's, which o points to */
  fix_options(old, &o, &lay);
  rc = strata_pipeline_plan(g, c, &o, out);
  strata_free(lay);
  if (!rc) rc = strata_merge_stitch(*out, g, c);
  if (rc == STRATA_ENOMEM || rc == STRATA_ECANCELED) return rc;
  if (rc) {
    snprintf(v->reason, sizeof v->reason,
             "it cannot be costed on the cluster now: %s", strata_last_error());
    strata_error_clear();
    strata_plan_destroy(*out);
    *out = NULL;
  }
  return 0;
}

static int same_config(const strata_plan_config_t *x,
                       const strata_plan_config_t *y) {
  return x->tp == y->tp && x->pp == y->pp && x->dp == y->dp &&
         x->micro_batch == y->micro_batch && x->vpp == y->vpp &&
         x->sequence_parallel == y->sequence_parallel &&
         x->zero_stage == y->zero_stage && x->recompute == y->recompute &&
         x->first_layers == y->first_layers && x->last_layers == y->last_layers;
}

/* The kept plan lists itself first, then the search's best others, and
 * takes the search's Pareto front (--pareto). */
static int merge_top(strata_plan_t *kept, strata_plan_t *best) {
  int cap = best->n_top > 1 ? best->n_top : 1, n = 1;
  strata_plan_config_t *t = strata_calloc((size_t)cap + 1, sizeof *t);
  if (!t) return strata_error(STRATA_ENOMEM, "out of memory");
  t[0] = kept->top[0];
  for (int i = 0; i < best->n_top && n < cap; i++)
    if (!same_config(&best->top[i], &t[0])) t[n++] = best->top[i];
  strata_free(kept->top);
  kept->top = t;
  kept->n_top = n;
  kept->plan_seconds += best->plan_seconds;
  kept->pareto_axes = best->pareto_axes;
  kept->pareto = best->pareto, kept->n_pareto = best->n_pareto;
  best->pareto = NULL, best->n_pareto = 0, best->pareto_axes = 0;
  return 0;
}

static void judge(const cli_plan_args_t *a, const strata_cluster_t *c,
                  const strata_plan_t *base, const strata_plan_t *best,
                  cli_baseline_t *v) {
  double budget = strata_plan_memory_budget(&a->po, c);
  v->costed = 1;
  v->base_step = base->step_seconds;
  v->base_peak = base->peak_memory_bytes;
  v->budget = budget;
  v->fits = base->peak_memory_bytes <= budget;
  v->slower = base->step_seconds / best->step_seconds - 1;
  v->kept = v->fits && v->slower <= v->threshold + 1e-12;
  if (!v->fits)
    snprintf(v->reason, sizeof v->reason,
             "it does not fit now: %.2f GiB per device, %.2f GiB available",
             base->peak_memory_bytes / GIB, budget / GIB);
  else
    snprintf(v->reason, sizeof v->reason,
             "its step, %.3f ms, is %.2f %% %s the best plan's %.3f ms, %s "
             "the %g %% threshold",
             base->step_seconds * 1e3, fabs(v->slower) * 100,
             v->slower >= 0 ? "above" : "below", best->step_seconds * 1e3,
             v->kept ? "within" : "beyond", v->threshold * 100);
}

int cli_baseline_apply(const cli_plan_args_t *a, const strata_graph_t *g,
                       const strata_cluster_t *c, strata_plan_t **plan,
                       cli_baseline_t *v) {
  strata_plan_t *old = NULL, *costed = NULL, *best = *plan;
  int rc;
  memset(v, 0, sizeof *v);
  v->file = a->baseline;
  v->threshold = a->replan_threshold / 100;
  v->best_step = best->step_seconds;
  config_name(best, v->best_cfg, sizeof v->best_cfg);
  if ((rc = strata_plan_load(a->baseline, &old))) {
    strata_error_prefix("--baseline");
    return rc;
  }
  config_name(old, v->base_cfg, sizeof v->base_cfg);
  if (!(rc = same_run(old, best, a->baseline)))
    rc = cost_old(a, old, g, c, &costed, v);
  if (!rc && costed) judge(a, c, costed, best, v);
  if (!rc && v->kept && !(rc = merge_top(costed, best))) {
    strata_plan_destroy(best);
    *plan = costed;
    costed = NULL;
  }
  strata_plan_destroy(costed);
  strata_plan_destroy(old);
  return rc;
}

int cli_baseline_text(const cli_baseline_t *v, strata_buf_t *b) {
  if (v->kept)
    strata_buf_printf(b,
                      "\nbaseline: kept %s's configuration (%s): %s\n"
                      "          (the best plan now: %s)\n",
                      v->file, v->base_cfg, v->reason, v->best_cfg);
  else
    strata_buf_printf(b, "\nbaseline: replaced %s's configuration (%s): %s\n",
                      v->file, v->base_cfg, v->reason);
  return b->oom ? strata_error(STRATA_ENOMEM, "out of memory") : 0;
}

int cli_baseline_json(const cli_baseline_t *v, char **text) {
  cJSON *root = NULL, *o;
  int rc = st__json_parse(*text, strlen(*text), "plan", &root);
  if (rc) return rc;
  o = cJSON_AddObjectToObject(root, "baseline");
  int bad = !o || st__json_add_str(o, "file", v->file) ||
            st__json_add_bool(o, "kept", v->kept) ||
            st__json_add_str(o, "configuration", v->base_cfg) ||
            st__json_add_str(o, "best_configuration", v->best_cfg) ||
            st__json_add_str(o, "reason", v->reason) ||
            st__json_add_num(o, "threshold", v->threshold) ||
            st__json_add_num(o, "best_step_seconds", v->best_step);
  if (!bad && v->costed)
    bad = st__json_add_bool(o, "fits", v->fits) ||
          st__json_add_num(o, "step_seconds", v->base_step) ||
          st__json_add_num(o, "slower_by", v->slower) ||
          st__json_add_num(o, "peak_memory_bytes", v->base_peak);
  char *out = bad ? NULL : st__json_print(root);
  cJSON_Delete(root);
  if (!out) return strata_error(STRATA_ENOMEM, "out of memory");
  strata_free(*text);
  *text = out;
  return 0;
}
