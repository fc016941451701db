/*
 * cmd_estimate.c - `strata estimate`: memory and step time of one given
 * configuration, with the planner's own evaluation and defaults (it is
 * `strata plan` with the configuration fixed), then how it compares to
 * the best plan: slower by how much and why, or how far it is from
 * fitting and which memory item decides.
 */
#include <math.h>
#include <string.h>

#include "cli/planargs.h"
#include "core/json.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

/* Megatron-LM's own checks (megatron/training/arguments.py,
 * core/parallel_state.py), before any costing: a configuration it would
 * refuse is refused here with the rule. */
static int sizes_rules(strata_plan_opts_t *o, const strata_graph_t *g,
                       int world) {
  int tp = o->fix_tp, pp = o->fix_pp, cp = o->fix_cp ? o->fix_cp : 1;
  if (!o->fix_dp && world % (tp * cp * pp))
    return cli_usage_error("estimate",
                           "world size %d is not divisible by tensor x "
                           "context x pipeline parallel size %d x %d x %d",
                           world, tp, cp, pp);
  if (!o->fix_dp) o->fix_dp = world / (tp * cp * pp);
  long used = (long)o->fix_dp * tp * cp * pp;
  if (used > world)
    return cli_usage_error("estimate",
                           "tp x cp x pp x dp = %ld exceeds the %d GPUs of "
                           "the cluster",
                           used, world);
  if (g->hp.heads && g->hp.heads % tp)
    return cli_usage_error("estimate",
                           "the number of attention heads (%d) must be "
                           "divisible by the tensor-parallel size %d",
                           g->hp.heads, tp);
  if (g->hp.kv_heads && g->hp.kv_heads % tp)
    return cli_usage_error("estimate",
                           "the number of query groups (%d) must be "
                           "divisible by the tensor-parallel size %d",
                           g->hp.kv_heads, tp);
  if (cp > 1 && g->seq_len % (2 * cp))
    return cli_usage_error("estimate",
                           "seq-length (%d) should be a multiple of 2 * "
                           "context-parallel-size (%d)",
                           g->seq_len, cp);
  if (cp > 1 && !g->hp.flash_attention)
    return cli_usage_error(
        "estimate",
        "context parallelism runs in Transformer Engine's "
        "fused attention, which model '%s' does not use (the "
        "gpt presets follow the 2021 runs): give "
        "--flash-attention",
        g->name);
  return 0;
}

/* Megatron-Core's mixture-of-experts rules, and the layouts Strata models
 * (docs/cost-model.md, "Expert parallelism"). */
static int moe_rules(strata_plan_opts_t *o, const strata_graph_t *g) {
  strata_moe_info_t m;
  int tp = o->fix_tp, cp = o->fix_cp ? o->fix_cp : 1, ep = o->fix_ep;
  int etp = o->fix_etp ? o->fix_etp : tp;
  strata_graph_moe(g, &m);
  if (!m.experts && (ep > 1 || (o->fix_etp && o->fix_etp != tp)))
    return cli_usage_error("estimate",
                           "num_experts must be non None to use expert "
                           "parallelism: the model has no experts");
  if (o->overlap_ep_comm &&
      (!m.experts || ep <= 1 || (o->fix_pp > 1 && o->vpp <= 1) ||
       (!o->recompute_auto && o->recompute == STRATA_RECOMPUTE_FULL) ||
       g->hp.mtp_layers > 1 || !o->megatron ||
       o->global_batch < 2 * (o->micro_batch > 0 ? o->micro_batch : 1) *
                             (o->fix_dp > 0 ? o->fix_dp : 1)))
    return cli_usage_error("estimate",
                           "--overlap-moe-expert-parallel-comm needs expert "
                           "parallelism (--ep > 1), --vpp > 1 with pipeline "
                           "parallelism, no full recompute, one MTP module at "
                           "most, Megatron mode and two micro-batches a step "
                           "to pair (Megatron-LM's rules)");
  if (!m.experts || !ep) return 0;
  if (m.experts % ep)
    return cli_usage_error("estimate",
                           "number of experts (%d) should be a multiple of "
                           "expert model parallel_size (%d)",
                           m.experts, ep);
  if ((long)tp * cp * o->fix_dp % ((long)etp * ep))
    return cli_usage_error("estimate",
                           "tp x cp x dp = %d x %d x %d is not divisible by "
                           "expert tensor x expert model parallel size %d x %d",
                           tp, cp, o->fix_dp, etp, ep);
  if (etp != 1 && etp != tp)
    return cli_usage_error("estimate",
                           "expert tensor-parallel size %d: Strata models 1 "
                           "and the tensor-parallel size %d",
                           etp, tp);
  if (m.moe_ffn % etp)
    return cli_usage_error("estimate",
                           "the experts' hidden size %d is not divisible by "
                           "the expert tensor-parallel size %d",
                           m.moe_ffn, etp);
  int inner = etp == 1 ? tp : 1;
  if (ep % inner || (cp > 1 && ep / inner > 1 && (ep / inner) % cp))
    return cli_usage_error("estimate",
                           "expert-parallel size %d: with etp %d it must be a "
                           "multiple of %d, and what is left a multiple of "
                           "cp %d (or 1): the expert-parallel group Strata "
                           "lays out takes whole tensor- and context-parallel "
                           "groups",
                           ep, etp, inner, cp);
  int outer = ep / inner / (cp > 1 && ep / inner > 1 ? cp : 1);
  if (o->fix_dp % outer)
    return cli_usage_error("estimate",
                           "expert-parallel size %d spans %d data-parallel "
                           "replicas, which do not divide dp %d",
                           ep, outer, o->fix_dp);
  if (ep > 1 && tp > 1 && o->sequence_parallel == 0)
    return cli_usage_error("estimate",
                           "when using expert parallelism and tensor "
                           "parallelism, sequence parallelism must be used");
  return 0;
}

/* The layers of each pipeline rank as Megatron-LM takes them (megatron/
 * core/transformer/transformer_config.py): a first and a last rank of
 * the sizes given, the rest split evenly over the middle ranks, each
 * rank's layers a multiple of the virtual stages; with neither given,
 * equal ranks. */
static int split_rules(strata_plan_opts_t *o, int L, int pp) {
  int v = o->vpp > 1 ? o->vpp : 1, first = o->fix_first, last = o->fix_last;
  if (pp < 2) return 0;
  if (!first && !last) {
    if (L % (pp * v))
      return cli_usage_error(
          "estimate",
          "%d layers do not split evenly over %d pipeline stages%s: give "
          "--first-stage-layers and/or --last-stage-layers (Megatron-LM's "
          "--decoder-first/last-pipeline-num-layers)",
          L, pp, v > 1 ? " of equal virtual stages" : "");
    o->fix_first = o->fix_last = L / pp; /* Megatron-LM's default */
    return 0;
  }
  /* first and last are multiples of v (cli_plan_parse) */
  int rest = L - first - last, middle = pp - (first > 0) - (last > 0);
  if (rest < 0 || (rest > 0) != (middle > 0))
    return cli_usage_error("estimate",
                           "%d layers left for %d middle pipeline stages "
                           "(of %d layers, %d stages)",
                           rest, middle, L, pp);
  if (middle && rest % middle)
    return cli_usage_error("estimate",
                           "%d layers do not split evenly over the %d middle "
                           "pipeline stages",
                           rest, middle);
  if (middle && (rest / middle) % v)
    return cli_usage_error("estimate",
                           "%d layers on each middle pipeline stage are not "
                           "divisible by --vpp %d",
                           rest / middle, v);
  return 0;
}

static int megatron_rules(strata_plan_opts_t *o, const strata_graph_t *g,
                          int world, int gpn) {
  int L = strata_graph_layers(g), tp = o->fix_tp, pp = o->fix_pp;
  int rc = sizes_rules(o, g, world);
  if (!rc) rc = moe_rules(o, g);
  if (rc) return rc;
  if (pp > L)
    return cli_usage_error("estimate", "pipeline size %d exceeds the %d layers",
                           pp, L);
  if (o->global_batch % (o->micro_batch * o->fix_dp))
    return cli_usage_error("estimate",
                           "global batch size (%d) is not divisible by micro "
                           "batch size (%d) times data parallel size (%d)",
                           o->global_batch, o->micro_batch, o->fix_dp);
  if (o->sequence_parallel > 0 && tp == 1)
    return cli_usage_error("estimate", "sequence parallelism needs a "
                                       "tensor-parallel size above 1");
  if (o->zero_stage >= 2 && pp > 1)
    return cli_usage_error(
        "estimate",
        "ZeRO stage %d shards gradients%s over the data-parallel ranks, which "
        "%s runs without pipeline parallelism (%s): use --pp 1 or --zero 1",
        o->zero_stage, o->zero_stage >= 3 ? " and parameters" : "",
        o->framework == STRATA_FRAMEWORK_DEEPSPEED ? "DeepSpeed" : "FSDP",
        o->framework == STRATA_FRAMEWORK_DEEPSPEED
            ? "its pipeline engine supports ZeRO stage 0 and 1"
            : "PyTorch FSDP2 refuses pipelining; Megatron-FSDP is run "
              "without it");
  if (tp > gpn ? tp % gpn : gpn % tp)
    return cli_usage_error("estimate",
                           "tensor-parallel size %d: a group within a node "
                           "must divide its %d GPUs, one across nodes take "
                           "whole nodes",
                           tp, gpn);
  int m = o->global_batch / (o->micro_batch * o->fix_dp);
  if (o->vpp > 1) {
    if (pp < 2)
      return cli_usage_error("estimate",
                             "interleaving (--vpp %d) needs a "
                             "pipeline of 2 stages or more",
                             o->vpp);
    if (m < pp || m % pp)
      return cli_usage_error("estimate",
                             "interleaving needs the micro-batches per step "
                             "(%d) to be a multiple of the pipeline size %d",
                             m, pp);
  }
  return split_rules(o, L, pp);
}

/* The item of b that exceeds a's most: its name and the difference. */
static const char *step_term(const strata_step_items_t *a,
                             const strata_step_items_t *b, double *diff) {
  const double x[] = {a->compute,      a->tp_comm,   a->bubble,  a->dp_sync,
                      a->param_gather, a->optimizer, a->overhead};
  const double y[] = {b->compute,      b->tp_comm,   b->bubble,  b->dp_sync,
                      b->param_gather, b->optimizer, b->overhead};
  static const char *name[] = {"compute",
                               "tensor-parallel communication",
                               "the pipeline bubble",
                               "data-parallel gradient synchronisation",
                               "the parameter gather",
                               "the optimizer step",
                               "the fixed overhead"};
  int best = 0;
  for (int i = 1; i < 7; i++)
    if (y[i] - x[i] > y[best] - x[best]) best = i;
  *diff = y[best] - x[best];
  return name[best];
}

static const char *mem_term(const strata_mem_items_t *a,
                            const strata_mem_items_t *b, double *diff) {
  const double x[] = {a->weights,     a->gradients,    a->optimizer,
                      a->activations, a->transient,    a->nccl,
                      a->buckets,     a->fragmentation};
  const double y[] = {b->weights,     b->gradients,    b->optimizer,
                      b->activations, b->transient,    b->nccl,
                      b->buckets,     b->fragmentation};
  static const char *name[] = {"weights",
                               "gradients",
                               "optimizer states",
                               "activations",
                               "transient buffers",
                               "NCCL buffers",
                               "communication buckets",
                               "fragmentation"};
  int best = 0;
  for (int i = 1; i < 8; i++)
    if (y[i] - x[i] > y[best] - x[best]) best = i;
  *diff = y[best] - x[best];
  return name[best];
}

static const strata_mem_items_t *worst_rank(const strata_plan_t *p) {
  int w = 0;
  for (int r = 1; r < p->pp; r++)
    if (p->ranks[r].mem.total > p->ranks[w].mem.total) w = r;
  return &p->ranks[w].mem;
}

/* "slower by x % ..." or "does not fit by y GiB ...", into b. */
static void compare(strata_buf_t *b, const strata_plan_t *mine,
                    const strata_plan_t *best, double budget, int fits) {
  const strata_plan_config_t *c = &best->top[0];
  double d;
  char name[200];
  strata_plan_config_name(c, name, sizeof name);
  strata_buf_printf(b, "the best plan: %s: %.3f ms, %.2f GiB\n", name,
                    best->step_seconds * 1e3, best->peak_memory_bytes / GIB);
  if (!fits) {
    const char *t = mem_term(worst_rank(best), worst_rank(mine), &d);
    strata_buf_printf(b,
                      "this configuration does not fit by %.2f GiB; most of "
                      "the difference to the plan is %s (+%.2f GiB)\n",
                      (mine->peak_memory_bytes - budget) / GIB, t, d / GIB);
    return;
  }
  double rel = mine->step_seconds / best->step_seconds - 1;
  if (rel <= 1e-9) {
    strata_buf_puts(b, "this configuration is the plan's (or ties with it)\n");
    return;
  }
  const char *t = step_term(&best->step_items, &mine->step_items, &d);
  strata_buf_printf(b,
                    "this configuration is slower by %.2f %% (+%.3f ms); most "
                    "of the difference is %s (+%.3f ms)\n",
                    100 * rel, (mine->step_seconds - best->step_seconds) * 1e3,
                    t, d * 1e3);
}

/* The same comparison as fields a script can read ("comparison_with_best"
 * in --json; docs/cli.md): the verdict, and the figures behind it. */
static cJSON *compare_json(const strata_plan_t *mine, const strata_plan_t *best,
                           double budget, int fits) {
  cJSON *o = cJSON_CreateObject();
  double d = 0, rel = mine->step_seconds / best->step_seconds - 1;
  char name[200];
  const char *t;
  strata_plan_config_name(&best->top[0], name, sizeof name);
  int bad =
      !o || st__json_add_str(o, "best_configuration", name) ||
      st__json_add_num(o, "best_step_seconds", best->step_seconds) ||
      st__json_add_num(o, "best_peak_memory_bytes", best->peak_memory_bytes);
  if (!bad && !fits) {
    t = mem_term(worst_rank(best), worst_rank(mine), &d);
    bad = st__json_add_str(o, "verdict", "does_not_fit") ||
          st__json_add_num(o, "over_budget_bytes",
                           mine->peak_memory_bytes - budget) ||
          st__json_add_str(o, "main_term", t) ||
          st__json_add_num(o, "main_term_bytes", d);
  } else if (!bad && rel <= 1e-9) {
    bad = st__json_add_str(o, "verdict", "ties");
  } else if (!bad) {
    t = step_term(&best->step_items, &mine->step_items, &d);
    bad = st__json_add_str(o, "verdict", "slower") ||
          st__json_add_num(o, "slower_by", rel) ||
          st__json_add_num(o, "step_delta_seconds",
                           mine->step_seconds - best->step_seconds) ||
          st__json_add_str(o, "main_term", t) ||
          st__json_add_num(o, "main_term_seconds", d);
  }
  if (bad) {
    cJSON_Delete(o);
    return NULL;
  }
  return o;
}

static int json_out(strata_plan_t *p, int fits, const char *cmp, cJSON **cmpj,
                    int timings) {
  char *text = NULL;
  cJSON *root = NULL;
  /* the run's time only when asked for: the same plan, the same bytes */
  int rc =
      strata_plan_json_flags(p, timings ? STRATA_PLAN_JSON_TIMINGS : 0, &text);
  if (!rc) rc = st__json_parse(text, strlen(text), "estimate", &root);
  strata_free(text);
  text = NULL;
  if (!rc) rc = st__json_add_bool(root, "fits", fits);
  if (!rc && cmp) rc = st__json_add_str(root, "comparison", cmp);
  if (!rc && *cmpj) {
    if (!cJSON_AddItemToObject(root, "comparison_with_best", *cmpj))
      rc = strata_error(STRATA_ENOMEM, "out of memory");
    else
      *cmpj = NULL; /* root owns it */
  }
  if (!rc && !(text = st__json_print(root)))
    rc = strata_error(STRATA_ENOMEM, "out of memory");
  cJSON_Delete(root);
  if (rc) return cli_fail("estimate", rc);
  rc = cli_write_output("estimate", NULL, text, strlen(text));
  strata_free(text);
  return rc;
}

static int human_out(const strata_plan_t *p, int fits, double budget,
                     const char *cmp) {
  char *text = NULL;
  int rc = strata_plan_summary(p, &text);
  if (rc) return cli_fail("estimate", rc);
  fputs(text, stdout);
  strata_free(text);
  if (!fits)
    printf("\ndoes not fit: %.2f GiB per device needed, %.2f GiB available "
           "(the GPU's %.2f GiB less the reserve)\n",
           p->peak_memory_bytes / GIB, budget / GIB, p->gpu_memory_bytes / GIB);
  if (cmp) printf("\n%s", cmp);
  return 0;
}

/* The best plan with the user's own options, the configuration free. */
static char *comparison(const cli_plan_args_t *user, const strata_plan_t *mine,
                        const strata_graph_t *g, const strata_cluster_t *c,
                        double budget, int fits, cJSON **js) {
  strata_plan_opts_t o = user->po;
  strata_plan_t *best = NULL;
  strata_buf_t b;
  char *out = NULL;
  o.fix_tp = o.fix_pp = o.fix_dp = o.fix_first = o.fix_last = 0;
  o.fix_cp = o.fix_ep = o.fix_etp = 0;
  o.no_memory_check = 0;
  o.top = 1;
  if (strata_pipeline_plan(g, c, &o, &best) == 0) {
    strata_buf_init(&b);
    compare(&b, mine, best, budget, fits);
    out = b.oom ? NULL : strata_buf_steal(&b, NULL);
    if (js) *js = compare_json(mine, best, budget, fits);
    strata_buf_free(&b);
  } else {
    strata_error_clear();
  }
  strata_plan_destroy(best);
  return out;
}

int cli_cmd_estimate(int argc, char **argv) {
  cli_plan_args_t a, user;
  strata_graph_t *g = NULL;
  strata_cluster_t *c = NULL;
  strata_plan_t *p = NULL;
  char *cmp = NULL;
  cJSON *cmpj = NULL;
  int rc = cli_plan_parse("estimate", argc, argv, 1, &a), e;
  if (rc) return rc < 0 ? CLI_OK : rc;
  user = a;
  if (!a.po.micro_batch) a.po.micro_batch = a.po.gen.micro_batch = 1;
  if (!a.po.vpp) a.po.vpp = 1;
  if (!a.po.fix_cp) a.po.fix_cp = 1;
  if ((rc = cli_plan_load("estimate", &a, &g, &c))) goto out;
  user.po.global_batch = a.po.global_batch; /* the default follows seq */
  rc = megatron_rules(&a.po, g, strata_cluster_gpus(c),
                      strata_cluster_gpus_per_node(c));
  if (rc) goto out;
  a.po.no_memory_check = 1; /* report whether it fits, do not prune */
  a.po.top = 1;
  a.po.quiet = 1;
  if ((e = strata_pipeline_plan(g, c, &a.po, &p)) ||
      (e = strata_merge_stitch(p, g, c))) {
    rc = cli_fail("estimate", e);
    goto out;
  }
  double budget =
      (a.po.memory_budget > 0 ? a.po.memory_budget
                              : (double)strata_cluster_gpu_memory(c)) -
      a.po.memory_reserve;
  int fits = p->peak_memory_bytes <= budget;
  if (!a.no_compare) {
    user.po.quiet = 1;
    cmp = comparison(&user, p, g, c, budget, fits, a.json ? &cmpj : NULL);
  }
  rc = a.json ? json_out(p, fits, cmp, &cmpj, a.timings)
              : human_out(p, fits, budget, cmp);
  if (!rc && !fits) rc = CLI_INFEASIBLE;
out:
  strata_free(cmp);
  cJSON_Delete(cmpj);
  strata_plan_destroy(p);
  strata_cluster_destroy(c);
  strata_graph_destroy(g);
  return rc;
}
