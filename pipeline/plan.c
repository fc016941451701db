/*
 * plan.c - the planner on a cluster of one shape (entry.c dispatches to
 * it): enumerate the families of stages (tensor-parallel submesh,
 * micro-batch, sequence parallelism, recompute) and solve their probe
 * subproblems concurrently (degrees.c), search the configurations
 * (space.c) with the one evaluation `strata estimate` also uses (eval.c),
 * and solve the chosen stages exactly for the plan's per-operator
 * strategies.
 *
 * Megatron-compatible mode (the default): one tensor-parallel size within
 * a node, Megatron's layouts and the layer splits Megatron-LM accepts.
 * Free mode: stage strategies from the min-memory ILP, submeshes of whole
 * nodes too, layers split to balance the stages.  When a chosen stage does
 * not fit once solved exactly (free mode's ILP under the budget), the next
 * best configuration is taken, so the planner never stops on a model that
 * some configuration can run.
 */
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pipeline/search.h"

/* ---- the chosen configuration, solved exactly ---- */

static strata_link_t dp_link(const st__search_t *S, int t, int dp) {
  strata_link_t l = {25e9, 10e-6};
  int extent = t * dp;
  for (int i = 0; i < strata_cluster_level_count(S->c); i++) {
    const strata_level_t *lv = strata_cluster_level(S->c, i);
    l = lv->link;
    if (lv->span >= extent) break;
  }
  return l;
}

static int final_subs(st__search_t *S, const st__cfg_t *cf,
                      const strata_plan_t *p, st__sub_t **out) {
  for (int k = 0; k < p->n_stages; k++) {
    const strata_plan_stage_t *ps = &p->stages[k];
    const st__family_t *f = cf->fs ? cf->fs[k % cf->p] : cf->f;
    const strata_plan_rank_t *rk = &p->ranks[ps->rank];
    st__search_t *R = cf->ss ? cf->ss[k % cf->p] : S; /* its node group's */
    strata_stage_opts_t so;
    st__base_stage_opts(R, f, &so);
    so.layer_begin = ps->layer_begin;
    so.layer_end = ps->layer_end;
    so.with_prologue = ps->with_prologue;
    so.with_epilogue = ps->with_epilogue;
    so.in_flight = ps->in_flight > 0 ? ps->in_flight : 1;
    so.outer_dp = cf->dp;
    so.outer_link = dp_link(R, f->tcp, cf->dp);
    /* the ILP's budget: what the rank's other items leave */
    double tensors = rk->mem.weights + rk->mem.gradients + rk->mem.optimizer +
                     rk->mem.activations + rk->mem.transient;
    /* the paired layer of the experts' overlap is not the stage's in
     * flight: the ILP is not given its room */
    double other = rk->mem.total - tensors + st__paired_act(R, cf, ps->rank);
    if (!S->o->megatron && !S->o->no_memory_check)
      so.memory_budget = R->budget - other;
    int rc = st__subset_get(&S->subs, S->graphs[f->graph], S->ghash[f->graph],
                            &so, &out[k]);
    if (rc) return rc;
  }
  return 0;
}

static int set_str(char **dst, const char *src) {
  *dst = strata_strdup(src ? src : "");
  return *dst ? 0 : strata_error(STRATA_ENOMEM, "out of memory");
}

/* Whether chunk k of a split holds its rank's layers over v (rank r
 * holding chunks r, r + p, ...), the middle ranks alike: Megatron-LM's
 * first/last form, which the first and last rank's layers tell. */
static int rank_form(const int *n, int K, int p) {
  for (int k = p; k < K; k++)
    if (n[k] != n[k % p]) return 0;
  for (int r = 2; r + 1 < p; r++)
    if (n[r] != n[1]) return 0;
  return 1;
}

/* Chunk k's token of Megatron-LM's layout ("Et*3", "t", "tmL"). */
static void layout_token(const int *n, int K, int k, int mtp, char *t,
                         size_t size) {
  char m[24] = "";
  if (k == K - 1 && mtp > 0) snprintf(m, sizeof m, mtp > 1 ? "m*%d" : "m", mtp);
  snprintf(t, size, "%s%s%.0d%s%s", k == 0 ? "E" : "",
           n[k] > 1    ? "t*"
           : n[k] == 1 ? "t"
                       : "",
           n[k] > 1 ? n[k] : 0, m, k == K - 1 ? "L" : "");
}

/* The split's layout into buf, runs of equal chunks as (..|)*N; "" when
 * it does not fit. */
static void layout_name(const int *n, int K, int mtp, char *buf, size_t size) {
  char tok[64], next[64];
  size_t o = 0;
  buf[0] = '\0';
  for (int k = 0; k < K && o < size;) {
    int r = 1;
    layout_token(n, K, k, mtp, tok, sizeof tok);
    while (k + r < K - 1) {
      layout_token(n, K, k + r, mtp, next, sizeof next);
      if (strcmp(tok, next)) break;
      r++;
    }
    if (r > 1)
      o += (size_t)snprintf(buf + o, size - o, "(%s|)*%d", tok, r);
    else
      o += (size_t)snprintf(buf + o, size - o, "%s%s", tok,
                            k + 1 == K ? "" : "|");
    k += r;
  }
  if (o >= size) buf[0] = '\0';
}

void st__plan_config(const st__cfg_t *cf, const st__cost_t *c,
                     const st__search_t *S, strata_plan_config_t *pc) {
  int n[ST__MAX_PP];
  int K = st__split_of(S, cf, n);
  memset(pc, 0, sizeof *pc);
  pc->tp = cf->f->tcp;
  pc->pp = cf->p;
  pc->dp = cf->dp;
  pc->micro_batch = cf->b;
  pc->vpp = cf->v > 1 ? cf->v : 1;
  pc->sequence_parallel = cf->f->sp;
  pc->zero_stage = cf->f->zero;
  pc->recompute = cf->f->rc;
  /* layers of the first / last pipeline rank, all its chunks */
  pc->first_layers = pc->last_layers = 0;
  for (int k = 0; k < K; k++) {
    if (k % cf->p == 0) pc->first_layers += n[k];
    if (k % cf->p == cf->p - 1) pc->last_layers += n[k];
  }
  pc->step_seconds = c->step;
  pc->peak_memory_bytes = c->peak;
  pc->fits = c->fits;
  pc->tp = cf->f->tp;
  pc->cp = cf->f->cp;
  pc->ep = cf->f->ep;
  pc->etp = cf->f->etp;
  pc->fp8 = cf->f->fp8;
  if (K > 1 && !rank_form(n, K, cf->p))
    layout_name(n, K, S->g->hp.mtp_layers, pc->layout, sizeof pc->layout);
}

/* The model facts of the plan's header from the graph (the exporters read
 * only the plan): the mixture of experts from the ops, so that a trace
 * file says as much as a preset. */
static void model_header(const strata_graph_t *g, strata_plan_t *p) {
  strata_moe_info_t m;
  strata_graph_moe(g, &m);
  p->experts = m.experts;
  p->topk = m.topk;
  p->moe_ffn = m.moe_ffn;
  p->moe_layers = m.moe_layers;
  p->first_dense = m.first_moe > 0 ? m.first_moe : 0;
  p->capacity = m.capacity;
  p->shared_ffn = g->hp.shared_ffn;
  p->q_lora = g->hp.q_lora;
  p->kv_lora = g->hp.kv_lora;
  p->qk_nope = g->hp.qk_nope;
  p->qk_rope = g->hp.qk_rope;
  p->v_head = g->hp.v_head;
  p->head_dim = g->hp.head_dim;
  p->qkv_bias = g->hp.qkv_bias;
  p->out_bias = g->hp.out_bias;
  p->qk_norm = g->hp.qk_norm;
  p->window = g->hp.window;
  p->window_every = g->hp.window_every;
  p->expert_bias = g->hp.expert_bias;
  p->rope_theta = g->hp.rope_theta;
  p->mtp_layers = g->hp.mtp_layers;
  p->rotary_percent = g->hp.rotary_percent < 1 ? g->hp.rotary_percent : 0;
  p->moe_every = g->hp.moe_every > 1 ? g->hp.moe_every : 0; /* 1: all */
  p->nope_every = g->hp.nope_every;
  p->router_sigmoid = g->hp.router_sigmoid;
  p->router_groups = g->hp.router_groups;
  p->router_group_topk = g->hp.router_group_topk;
  p->router_topk_scale = g->hp.router_topk_scale;
  p->router_aux_loss = g->hp.router_aux_loss;
  p->router_seq_aux = g->hp.router_seq_aux;
  p->router_pre_softmax = g->hp.router_pre_softmax;
  p->router_expert_bias = g->hp.router_expert_bias;
  p->router_jitter = g->hp.router_jitter;
  p->rope_scaling = g->hp.rope_scaling;
  p->mlp_bias = g->hp.mlp_bias;
  p->window_from = g->hp.window > 0 ? g->hp.window_from : 0;
  p->attn_chunk = g->hp.attn_chunk;
  p->attn_sinks = g->hp.attn_sinks;
  p->glu_limit = g->hp.glu_limit;
  p->norm_eps = g->hp.norm_eps;
  p->init_std = g->hp.init_std;
}

/* The switches and choices as the plan runs them: the switches as the
 * search costed them and asked the rulebook (eval.c, st__run_switches),
 * the choices as asked, the framework's default where not given. */
static void plan_switches(const strata_plan_opts_t *o, const st__cfg_t *cf,
                          strata_plan_t *p) {
  strata_rules_config_t run;
  st__run_switches(o, cf, &run);
#define SWITCH_COPY(F, m, ...) p->m = run.m;
  STRATA_PLAN_SWITCHES(SWITCH_COPY, p)
#undef SWITCH_COPY
#define CHOICE_COPY(F, kind, m, ...) p->m = o->m > 0 ? o->m : 0;
  STRATA_PLAN_CHOICES(CHOICE_COPY, p)
#undef CHOICE_COPY
  if (cf->p < 2) p->ds_partition = 0; /* no pipeline to partition */
}

/* The plan's header fields from the configuration and its cost. */
static int plan_header(st__search_t *S, const st__cfg_t *cf,
                       const st__cost_t *c, strata_plan_t *p) {
  const strata_graph_t *g = S->graphs[cf->f->graph];
  const strata_plan_opts_t *o = S->o;
  int rc = set_str(&p->model, S->g->name);
  if (!rc) rc = set_str(&p->cluster, strata_cluster_name(S->c));
  if (rc) return rc;
  p->tp = cf->f->tp;
  if (cf->fs && !cf->ss) /* free mode's stages of their own sizes */
    for (int s = 0; s < cf->p; s++)
      p->tp = cf->fs[s]->tcp > p->tp ? cf->fs[s]->tcp : p->tp;
  p->cp = cf->f->cp;
  p->ep = cf->f->ep;
  p->etp = cf->f->etp;
  p->cp_comm = o->cp_comm;
  p->fp8 = cf->f->fp8; /* the recipe, st__lowp_of's */
  p->moe_imbalance = o->moe_imbalance > 1 ? o->moe_imbalance : 1;
  model_header(g, p);
  p->pp = cf->p;
  p->dp = cf->dp;
  p->vpp = cf->v > 1 ? cf->v : 1;
  p->devices = 0;
  for (int s = 0; s < cf->p; s++)
    p->devices += (cf->fs ? cf->fs[s]->tcp : cf->f->tcp) * cf->dp;
  p->micro_batch = cf->b;
  p->global_batch = o->global_batch;
  p->n_micro = cf->m;
  p->zero_stage = cf->f->zero;
  p->sequence_parallel = cf->f->sp;
  p->megatron = o->megatron;
  p->recipe = o->recipe;
  p->recompute = cf->f->rc;
  p->recompute_modules =
      cf->f->rc == STRATA_RECOMPUTE_SELECTIVE ? (int)o->recompute_modules : 0;
  p->framework = o->framework;
  plan_switches(o, cf, p);
  if (p->precision_aware_optimizer > 0) {
    p->main_grads_dtype = o->main_grads_dtype;
    p->exp_avg_dtype = o->exp_avg_dtype;
    p->exp_avg_sq_dtype = o->exp_avg_sq_dtype;
  }
  /* the offloads the search chose (--search-offload), else those given */
  p->offload_layers = cf->act_offload > 0 ? cf->act_offload : o->offload_layers;
  p->optimizer_offload =
      cf->opt_offload > 0 ? cf->opt_offload : o->optimizer_offload;
  if (cf->fg_offload > 0) p->offload_modules = cf->fg_offload;
  if (cf->f->rc == STRATA_RECOMPUTE_FULL) { /* full recompute's unit */
    p->recompute_layers = o->recompute_layers;
    p->recompute_method = o->recompute_method;
  }
  p->account_embedding = cf->acct & 1;
  p->account_loss = (cf->acct & 2) >> 1;
  p->alpha = o->alpha;
  p->seq_len = g->seq_len;
  p->layers = S->L;
  p->hidden = g->hp.hidden;
  p->heads = g->hp.heads;
  p->kv_heads = g->hp.kv_heads;
  p->ffn = g->hp.ffn;
  p->vocab = g->hp.vocab;
  snprintf(p->family, sizeof p->family, "%s", g->hp.family);
  p->step_seconds = c->step;
  p->step_items = c->items;
  p->peak_memory_bytes = c->peak;
  p->gpu_memory_bytes = o->memory_budget > 0
                            ? o->memory_budget
                            : (double)strata_cluster_gpu_memory(S->c);
  p->gpu_peak_flops = /* the peak of the GEMMs' precision */
      strata_cluster_gpu_peak_flops_at(S->c, strata_lowp_peak_bits(p->fp8));
  strata_graph_stats_t st;
  strata_graph_stats(g, &st);
  p->model_flops_per_step = st.flops_per_microbatch * cf->m * cf->dp;
  p->model_flops_unmasked_per_step =
      st.flops_unmasked_per_microbatch * cf->m * cf->dp;
  p->stack = o->stack;
  p->stack_known = 1;
  return 0;
}

static int st__stage_width(const strata_plan_stage_t *ps) {
  return ps->nodes * ps->gpus_per_node;
}

/* Attach the exactly solved stage results; 1 when a stage does not fit. */
static int attach_results(st__search_t *S, strata_plan_t *p, st__sub_t **subs) {
  for (int k = 0; k < p->n_stages; k++) {
    st__sub_t *sub = subs[k];
    strata_plan_stage_t *ps = &p->stages[k];
    if (sub->err)
      return strata_error(sub->err, "stage %d: %s", k,
                          sub->errmsg ? sub->errmsg : "not solved");
    if (sub->res->status > STRATA_STAGE_FEASIBLE) return 1;
    ps->mesh = sub->so.mesh;
    ps->first_rank = ps->rank * st__stage_width(ps) * p->dp;
    /* copy: the same subproblem may serve several stages */
    strata_stage_result_t *r = strata_calloc(1, sizeof *r);
    if (!r) return strata_error(STRATA_ENOMEM, "out of memory");
    *r = *sub->res;
    r->hint = NULL;
    r->ops = strata_calloc((size_t)sub->res->n_ops + 1, sizeof *r->ops);
    ps->result = r;
    if (!r->ops) {
      r->n_ops = 0; /* nothing to free */
      return strata_error(STRATA_ENOMEM, "out of memory");
    }
    for (int i = 0; i < sub->res->n_ops; i++) {
      const strata_op_choice_t *a = &sub->res->ops[i];
      strata_op_choice_t *b = &r->ops[i];
      *b = *a;
      b->name = strata_strdup(a->name);
      b->strategy = strata_strdup(a->strategy);
      b->placement = strata_strdup(a->placement);
      if (!b->name || !b->strategy || !b->placement) {
        r->n_ops = i + 1;
        return strata_error(STRATA_ENOMEM, "out of memory");
      }
    }
  }
  (void)S;
  return 0;
}

int st__build_plan(st__search_t *S, const st__cfg_t *cf, const st__cost_t *c,
                   strata_plan_t **out) {
  st__sub_t **subs = NULL;
  strata_plan_t *p = strata_calloc(1, sizeof *p);
  int rc = p ? 0 : strata_error(STRATA_ENOMEM, "out of memory");
  if (!rc) rc = plan_header(S, cf, c, p);
  if (!rc) rc = st__cfg_fill_plan(S, cf, p);
  if (!rc) {
    subs = strata_calloc((size_t)p->n_stages + 1, sizeof *subs);
    if (!subs) rc = strata_error(STRATA_ENOMEM, "out of memory");
  }
  if (!rc) rc = final_subs(S, cf, p, subs);
  if (!rc)
    rc = st__solve_all_by(&S->subs, S->o->threads, S->cache, S->prog,
                          S->limit_end, S->o->cancel, &S->ilps, &S->hits);
  if (!rc) rc = attach_results(S, p, subs);
  strata_free(subs);
  if (rc) {
    strata_plan_destroy(p);
    return rc;
  }
  *out = p;
  return 0;
}

/* ---- when nothing fits ---- */

static int no_fit_error(const st__search_t *S, const st__cfg_t *lowest,
                        const st__cost_t *lc) {
  char need[32], have[32];
  strata_fmt_bytes(S->budget, have, sizeof have);
  if (!lowest->f || !isfinite(lc->peak))
    return strata_error(STRATA_EINFEASIBLE,
                        "no configuration of %d GPUs can run this model "
                        "(global batch %d): check that the batch divides by "
                        "micro-batch x data parallelism",
                        S->total, S->o->global_batch);
  strata_fmt_bytes(lc->peak, need, sizeof need);
  double ratio = lc->peak / S->budget;
  int more = (int)ceil(S->total * ratio / S->G) * S->G;
  return strata_error(
      STRATA_EINFEASIBLE,
      "the model does not fit: the least memory any plan needs is %s per "
      "device (tp %d, pp %d, dp %d, micro-batch %d, recompute %s%s) but %s "
      "is available. What would help: about %d GPUs or more, GPUs with more "
      "memory, %s%s%sor a smaller global batch",
      need, lowest->f->tp, lowest->p, lowest->dp, lowest->b,
      strata_recompute_name(lowest->f->rc),
      S->o->search_offload ? "; before offloads: none the search may choose "
                             "makes a plan fit"
                           : "",
      have, more, S->zero < 3 ? "ZeRO stage 3 (--zero 3: FSDP), " : "",
      lowest->f->rc != STRATA_RECOMPUTE_FULL
          ? "full activation recompute (--recompute full), "
          : "",
      S->o->search_offload ? ""
                           : "offloads to the host (--search-offload, "
                             "with --precision-aware-optimizer for the "
                             "optimizer's), ");
}

/* Bytes every rank holds whatever its configuration (eval.c's
 * rank_memory): the runtime's context and workspaces, a calibration's
 * fixed extra. */
static double fixed_per_rank(const st__search_t *S) {
  const strata_perf_t *pf = strata_cluster_perf(S->c);
  double cal = strata_cluster_calibration(S->c)->memory_bytes;
  double b = pf->context_bytes + pf->workspace_bytes + (cal > 0 ? cal : 0);
  if (S->o->tp_comm_overlap) b += 3 * 32.0 * 1048576.0;
  return b;
}

/* Bytes of model state per parameter element no configuration can avoid
 * holding on some GPU (intraop/cost.c's param_states, eval.c's scales):
 * the weight at its type (counted by the caller; none under --fp8-param-gather,
 * whose copies may be narrower), the gradient (4 bytes under Megatron-LM's
 * recipe, else 2, by --main-grads-dtype), the optimizer's 12 (by the
 * moments' types; none where any of it may go to the host). */
static double state_bytes_per_param(const st__search_t *S) {
  const strata_plan_opts_t *o = S->o;
  int pao = o->precision_aware_optimizer > 0;
  double g = o->recipe == STRATA_RECIPE_MEGATRON ? 4.0 : 2.0;
  if (pao && o->recipe == STRATA_RECIPE_MEGATRON)
    g = o->main_grads_dtype == STRATA_STATE_FP32 ? 4.0 : 2.0;
  double opt = 12.0;
  if (pao)
    opt = 2.0 + (o->exp_avg_dtype == STRATA_STATE_FP32 ? 4.0 : 2.0) +
          (o->exp_avg_sq_dtype == STRATA_STATE_FP32 ? 4.0 : 2.0);
  if (o->search_offload || o->optimizer_offload > 0) opt = 0;
  return g + opt;
}

double st__memory_floor(const st__search_t *S, double *states, double *params) {
  strata_graph_stats_t st;
  strata_graph_stats(S->g, &st);
  double n = (double)st.parameters;
  double total = (S->o->fp8_param_gather ? 0 : (double)st.weight_bytes) +
                 n * state_bytes_per_param(S);
  if (states) *states = total;
  if (params) *params = n;
  return total / S->total + fixed_per_rank(S);
}

/* The model's states alone, spread evenly over every GPU, exceed a
 * device: nothing fits, refused before any search (0 where the bound does
 * not prove it). */
static int floor_error(const st__search_t *S) {
  double states, params;
  double floor = st__memory_floor(S, &states, &params);
  if (S->o->no_memory_check || !(floor > S->budget)) return 0;
  char need[32], have[32], all[32], count[48];
  snprintf(count, sizeof count, "%.1f %s",
           params >= 1e9 ? params / 1e9 : params / 1e6,
           params >= 1e9 ? "billion" : "million");
  strata_fmt_bytes(floor, need, sizeof need);
  strata_fmt_bytes(S->budget, have, sizeof have);
  strata_fmt_bytes(states, all, sizeof all);
  double room = S->budget - fixed_per_rank(S);
  int more = room > 0 ? (int)ceil(states / room / S->G) * S->G : 0;
  char gpus[64] = "";
  if (more > 0) snprintf(gpus, sizeof gpus, "about %d GPUs or more, ", more);
  return strata_error(
      STRATA_EINFEASIBLE,
      "the model does not fit: every plan needs at least %s per device (the "
      "weights, gradients and optimizer states of its %s parameters, %s "
      "in all, spread evenly over the %d GPUs, and the runtime's context "
      "and workspaces) but %s is available. What would help: %sGPUs with "
      "more memory, %sor a narrower optimizer (--precision-aware-optimizer)",
      need, count, all, S->total, have, gpus,
      S->o->search_offload || S->o->optimizer_offload > 0
          ? ""
          : "offloads to the host (--search-offload, with "
            "--precision-aware-optimizer for the optimizer's), ");
}

/* The time limit ran out before any configuration that fits was found:
 * the closest miss so far, the one of least memory, with its figures. */
static int time_limit_error(const st__search_t *S, const st__cfg_t *lowest,
                            const st__cost_t *lc) {
  char need[32], have[32];
  strata_fmt_bytes(S->budget, have, sizeof have);
  if (!lowest->f || !isfinite(lc->peak))
    return strata_error(STRATA_ETIMEDOUT,
                        "nothing fits within the time limit (%g s): no "
                        "configuration was costed in time (%ld bounded); a "
                        "longer --time-limit searches further",
                        S->o->time_limit, S->bounded);
  strata_fmt_bytes(lc->peak, need, sizeof need);
  return strata_error(
      STRATA_ETIMEDOUT,
      "nothing fits within the time limit (%g s): the closest miss of %ld "
      "configurations costed needs %s per device (tp %d, pp %d, dp %d, "
      "micro-batch %d, recompute %s, step %.3f s) but %s is available; a "
      "longer --time-limit searches further",
      S->o->time_limit, S->bounded + S->evaluated, need, lowest->f->tp,
      lowest->p, lowest->dp, lowest->b, strata_recompute_name(lowest->f->rc),
      lc->step, have);
}

/* The search stopped at the time limit (space.c), or the probes took it
 * all (their solves were cancelled). */
static int out_of_time(const st__search_t *S) {
  return S->deadline < 0 || S->probes_cut ||
         (S->deadline > 0 && strata_now() > S->deadline);
}

/* ---- set-up ---- */

static const struct {
  const char *name;
  strata_precision_t p;
} precisions[] = {{"bf16", STRATA_PRECISION_BF16},
                  {"fp8", STRATA_PRECISION_FP8},
                  {"fp4", STRATA_PRECISION_FP4},
                  {"auto", STRATA_PRECISION_AUTO}};

const char *strata_pareto_name(int v) {
  return v == STRATA_PARETO_MEMORY ? "memory"
         : v == STRATA_PARETO_GPUS ? "gpus"
                                   : "none";
}

int strata_pareto_parse(const char *s, int *out) {
  if (s && !strcmp(s, "memory")) return *out = STRATA_PARETO_MEMORY, 0;
  if (s && !strcmp(s, "gpus")) return *out = STRATA_PARETO_GPUS, 0;
  return strata_error(STRATA_EINVAL,
                      "'%s' is not an axis of the front: memory (step time "
                      "against peak memory per device, the default) or gpus "
                      "(and the GPUs used)",
                      s ? s : "");
}

const char *strata_precision_name(strata_precision_t p) {
  for (int i = 0; i < 4; i++)
    if (precisions[i].p == p) return precisions[i].name;
  return "?";
}

int strata_precision_parse(const char *s, strata_precision_t *out) {
  for (int i = 0; i < 4; i++)
    if (!strcmp(s, precisions[i].name)) {
      *out = precisions[i].p;
      return 0;
    }
  return strata_error(STRATA_EINVAL,
                      "unknown precision '%s' (bf16, fp8, fp4 or auto)", s);
}

static const char *const state_dtypes[] = {"fp32", "bf16", "fp16"};

const char *strata_state_dtype_name(int t) {
  return t >= 0 && t < 3 ? state_dtypes[t] : "?";
}

int strata_state_dtype_parse(const char *s, int *out) {
  for (int i = 0; i < 3; i++)
    if (!strcmp(s, state_dtypes[i])) {
      *out = i;
      return 0;
    }
  return strata_error(STRATA_EINVAL,
                      "unknown optimizer state type '%s' (fp32, bf16 or fp16)",
                      s);
}

static const char *const framework_names[] = {"megatron", "deepspeed",
                                              "torchtitan"};
#define N_FRAMEWORKS 3

const char *strata_framework_name(strata_framework_t f) {
  return (unsigned)f < N_FRAMEWORKS ? framework_names[f] : "?";
}

int strata_framework_parse(const char *s, strata_framework_t *out) {
  for (int i = 0; i < N_FRAMEWORKS; i++)
    if (!strcmp(s, framework_names[i])) {
      *out = (strata_framework_t)i;
      return 0;
    }
  return strata_error(STRATA_EINVAL,
                      "unknown framework '%s' (megatron, deepspeed or "
                      "torchtitan)",
                      s);
}

/* The model at micro-batch b: a preset or family generated again, a file
 * (trace or config) re-shaped by following its batch (strata_graph_rebatch). */
static int graph_at(st__search_t *S, int regen, int b, strata_graph_t **out) {
  if (b == S->g->micro_batch) {
    *out = NULL;
    return 0;
  }
  if (regen) {
    strata_gen_opts_t gen = S->o->gen;
    gen.micro_batch = b;
    return strata_model_load(S->o->model_spec, &gen, out);
  }
  return strata_graph_rebatch(S->g, b, out);
}

/* The embedding table is read after the last layer too (a tied head, a
 * multi-token prediction module's embedding): the first and last stage
 * each hold it, and their gradients are summed (Megatron-LM's embedding
 * group). */
static int embedding_on_last_stage(const strata_graph_t *g) {
  int t = strata_graph_find_tensor(g, "embed.weight");
  if (!g->hp.family[0] || t < 0 || g->n_blocks < 1) return 0;
  const strata_block_t *b = &g->blocks[g->n_blocks - 1];
  for (int i = b->first_op + b->n_ops; i < g->n_ops; i++)
    for (int k = 0; k < g->ops[i].n_in; k++)
      if (g->ops[i].in[k] == t) return 1;
  return 0;
}

static int load_graphs(st__search_t *S) {
  const strata_plan_opts_t *o = S->o;
  static const int bs[] = {1, 2, 4, 8};
  struct stat sb;
  int regen = o->model_spec && stat(o->model_spec, &sb) != 0;
  S->graphs[0] = S->g;
  S->n_graphs = 1;
  if (o->micro_batch <= 0) {
    S->n_graphs = 0;
    for (size_t i = 0; i < sizeof bs / sizeof bs[0]; i++) {
      if (o->global_batch % bs[i]) continue;
      strata_graph_t *g = NULL;
      int rc = graph_at(S, regen, bs[i], &g);
      if (rc == STRATA_EBADINPUT && !regen) {
        /* a trace whose batch cannot be re-shaped plans at its own */
        strata_log(STRATA_LOG_INFO, "micro-batch %d: %s", bs[i],
                   strata_last_error());
        strata_error_clear();
        continue;
      }
      if (rc) return rc;
      S->own[S->n_graphs] = g;
      S->graphs[S->n_graphs] = g ? g : S->g;
      S->n_graphs++;
    }
    if (!S->n_graphs) {
      S->graphs[0] = S->g;
      S->n_graphs = 1;
    }
  } else if (o->micro_batch != S->g->micro_batch) {
    int rc = graph_at(S, regen, o->micro_batch, &S->own[0]);
    if (rc) {
      strata_error_prefix("micro-batch %d", o->micro_batch);
      return rc;
    }
    S->graphs[0] = S->own[0];
  }
  for (int i = 0; i < S->n_graphs; i++) {
    const strata_graph_t *g = S->graphs[i];
    S->ghash[i] = st__graph_hash(g);
    S->param_bytes[i] = 0;
    S->max_param[i] = 0;
    S->max_expert[i] = 0;
    for (int t = 0; t < g->n_tensors; t++) {
      const strata_tensor_t *x = &g->tensors[t];
      if (x->kind != STRATA_TENSOR_PARAM) continue;
      if (!S->param_bytes[i]) S->param_bytes[i] = strata_dtype_size(x->dtype);
      double b = (double)strata_tensor_bytes(x);
      if (x->ndim == 3) { /* a grouped GEMM's experts */
        if (b > S->max_expert[i]) S->max_expert[i] = b;
      } else if (b > S->max_param[i]) {
        S->max_param[i] = b;
      }
    }
    S->kv_bytes[i] = 0;
    for (int k = 0; k < g->n_ops; k++)
      if (g->ops[k].kind == STRATA_OP_FLASH_ATTENTION) {
        double b = (double)strata_tensor_bytes(&g->tensors[g->ops[k].in[1]]) +
                   (double)strata_tensor_bytes(&g->tensors[g->ops[k].in[2]]);
        if (b > S->kv_bytes[i]) S->kv_bytes[i] = b;
      }
    if (!S->param_bytes[i]) S->param_bytes[i] = 2;
    S->tied[i] = embedding_on_last_stage(g);
  }
  return 0;
}

/* --search-offload where no offload can be chosen: refused, saying why. */
static int check_search_offload(const strata_plan_opts_t *o) {
  if (!o->search_offload) return 0;
  if (o->framework != STRATA_FRAMEWORK_MEGATRON)
    return strata_error(STRATA_EINVAL,
                        "--search-offload: the offloads it searches are "
                        "Megatron-LM's, which --framework %s does not run",
                        strata_framework_name(o->framework));
  if (o->optimizer_offload > 0 && o->offload_layers > 0)
    return strata_error(STRATA_EINVAL,
                        "--search-offload has nothing to search: "
                        "--optimizer-offload-fraction and "
                        "--cpu-offloading-num-layers are both given");
  int opt = !(o->optimizer_offload > 0) && o->precision_aware_optimizer > 0;
  int free_acts = !(o->offload_layers > 0) && !o->offload_modules;
  int act = free_acts && o->pp <= 1 &&
            (o->recompute == STRATA_RECOMPUTE_AUTO ||
             o->recompute == STRATA_RECOMPUTE_NONE);
  int fg = free_acts && o->recompute != STRATA_RECOMPUTE_FULL;
  if (opt || act || fg) return 0;
  return strata_error(STRATA_EINVAL,
                      "--search-offload has nothing to search: the optimizer's "
                      "share is searched only with --precision-aware-"
                      "optimizer (Megatron-LM's) and no "
                      "--optimizer-offload-fraction, and activations only "
                      "without full recompute and without "
                      "--cpu-offloading-num-layers or --offload-modules "
                      "given");
}

/* --no-search-layouts where the search tries no layout anyway: refused,
 * saying why (an option the configuration makes meaningless). */
static int check_search_layouts(const strata_plan_opts_t *o) {
  const char *why = !o->no_search_layouts ? NULL
                    : !o->megatron        ? "free mode splits the layers to "
                                            "balance its stages"
                    : o->framework != STRATA_FRAMEWORK_MEGATRON
                        ? "they are Megatron-LM's, and the plan is for another "
                          "framework"
                    : o->pipeline_layout ? "--pipeline-layout gives the split"
                    : o->first_layers || o->last_layers
                        ? "--first-stage-layers/--last-stage-layers give the "
                          "split"
                    : o->account_embedding > 0 || o->account_loss > 0
                        ? "--account-for-embedding/--account-for-loss give the "
                          "split"
                    : o->pp == 1 ? "--pp 1 has no split"
                                 : NULL;
  if (!why) return 0;
  return strata_error(STRATA_EINVAL,
                      "--no-search-layouts: the search tries no layout here "
                      "(%s); drop it",
                      why);
}

static int check_opts(const st__search_t *S) {
  const strata_plan_opts_t *o = S->o;
  int rc = check_search_offload(o);
  if (!rc) rc = check_search_layouts(o);
  if (rc) return rc;
  if (o->global_batch < 1 || o->global_batch > ST__MAX_GLOBAL_BATCH)
    return strata_error(STRATA_EINVAL,
                        "global batch %d: must be 1 to %d sequences (2^20): "
                        "beyond it a step's micro-batches outgrow what the "
                        "search costs in time and its double arithmetic "
                        "holds exactly",
                        o->global_batch, ST__MAX_GLOBAL_BATCH);
  if (S->L < 1)
    return strata_error(STRATA_EBADINPUT,
                        "model '%s' has no layers to pipeline", S->g->name);
  if (S->g->seq_len > (1 << 30))
    return strata_error(STRATA_EBADINPUT,
                        "model '%s': sequence length %d, over the 2^30 a "
                        "plan file holds",
                        S->g->name, S->g->seq_len);
  if (o->zero_stage > 3)
    return strata_error(STRATA_EINVAL, "ZeRO stage %d: must be 0 to 3",
                        o->zero_stage);
  if (!o->megatron && o->cp > 1)
    return strata_error(
        STRATA_EINVAL,
        "context parallelism (--cp %d) is Megatron's layout; in "
        "free mode each stage's ILP splits the sequence where "
        "it pays: drop --cp or --free",
        o->cp);
  if (!(o->moe_imbalance >= 1 && o->moe_imbalance <= 1000))
    return strata_error(STRATA_EINVAL,
                        "MoE imbalance %g: the most loaded rank's share over "
                        "the mean is at least 1",
                        o->moe_imbalance);
  if (o->precision == STRATA_PRECISION_FP4 &&
      !(strata_cluster_perf(S->c)->peak_fp4_flops > 0))
    return strata_error(STRATA_EINVAL,
                        "FP4 (NVFP4) needs FP4 tensor cores, which the %s "
                        "does not have (B200 and GB200 do)",
                        strata_cluster_gpu_model(S->c)
                            ? strata_cluster_gpu_model(S->c)->name
                            : "cluster's GPU");
  const strata_gpu_model_t *gm = strata_cluster_gpu_model(S->c);
  if (o->precision == STRATA_PRECISION_FP8 &&
      !(strata_cluster_perf(S->c)->peak_fp8_flops > 0))
    return strata_error(
        STRATA_EINVAL, "FP8 needs FP8 %s, which the %s does not have (%s)",
        gm && gm->vendor && !strcmp(gm->vendor, "Huawei") ? "matrix units"
                                                          : "tensor cores",
        gm ? gm->name : "cluster's GPU",
        gm && gm->vendor && !strcmp(gm->vendor, "Huawei")
            ? "Ascend 910B and 910C compute in BF16 and FP16; Huawei's "
              "first NPUs with FP8 are the Ascend 950 series"
            : "H100, H200, B200, MI300X do");
  if (o->vpp < 0 || o->vpp > 64)
    return strata_error(STRATA_EINVAL, "virtual stages %d: must be 1 to 64",
                        o->vpp);
  return 0;
}

/* p2p as an affine model of its bytes, within a node and across nodes. */
static void p2p_models(st__search_t *S) {
  for (int x = 0; x < 2; x++) {
    int nodes = x && S->N > 1 ? 2 : 1, g = nodes == 1 && S->G > 1 ? 2 : 1;
    double one = 0, big = 0;
    if (nodes * g < 2 ||
        strata_cluster_coll_time(S->c, STRATA_COLL_P2P, 1, nodes, g, &one) ||
        strata_cluster_coll_time(S->c, STRATA_COLL_P2P, 1e9, nodes, g, &big)) {
      strata_error_clear();
      one = big = 0;
    }
    S->p2p[x][1] = (big - one) / (1e9 - 1);
    S->p2p[x][0] = one - S->p2p[x][1];
  }
  if (S->N <= 1) memcpy(S->p2p[1], S->p2p[0], sizeof S->p2p[0]);
}

/* The framework's defaults and reach.  DeepSpeed's pipeline engine sends
 * the boundary split over the tensor-parallel ranks (pipeline.
 * pipe_partitioned, on by default with model parallelism:
 * deepspeed/runtime/pipe/engine.py); Megatron-LM sends it whole without
 * sequence parallelism.  The DeepSpeed export can state no context or
 * expert parallelism, interleaving, FP8, multi-token prediction or
 * free-mode layouts (export/export_deepspeed.c), and its partition no
 * split but the even one (space.c): planning for DeepSpeed searches only
 * what it can state, and asking for more is refused with the rulebook's
 * reason (rules.c), so that the plan always exports. */
static int framework_limits(strata_plan_opts_t *o, const strata_graph_t *g,
                            const strata_cluster_t *c) {
  strata_rules_config_t rc;
  strata_rules_verdict_t v;
  int ds = o->framework == STRATA_FRAMEWORK_DEEPSPEED;
  strata_rules_config_init(&rc, g, c, o); /* the options as given */
  if (strata_rules_check(&rc, STRATA_RULES_OPTIONS, &v))
    return strata_error(STRATA_EINVAL, "%s", v.why);
  /* a unit of layers given: full recompute of it */
  if ((o->recompute_layers > 0 || o->recompute_method) &&
      o->recompute == STRATA_RECOMPUTE_AUTO)
    o->recompute = STRATA_RECOMPUTE_FULL;
  /* modules given: selective recompute of them */
  if (o->recompute_modules && o->recompute == STRATA_RECOMPUTE_AUTO)
    o->recompute = STRATA_RECOMPUTE_SELECTIVE;
  /* offloading: one stage, nothing recomputed (Megatron-LM's rules) */
  if (o->offload_layers > 0) {
    if (o->recompute == STRATA_RECOMPUTE_AUTO)
      o->recompute = STRATA_RECOMPUTE_NONE;
    if (!o->pp) o->max_pp = 1;
  }
  /* one stage: no split for the embedding and the loss to count in */
  if (o->pp == 1) o->account_embedding = o->account_loss = 0;
  if (o->scatter_gather < 0) o->scatter_gather = ds;
  strata_stack_default((int)o->framework, &o->stack);
  if (!strata_stack_attn_runs(strata_cluster_perf(c), o->stack.attn))
    return strata_error(STRATA_EINVAL,
                        "--stack attn=%s: FlashAttention 3 runs on Hopper "
                        "GPUs only, not on %s",
                        strata_attn_kernel_name(o->stack.attn),
                        strata_cluster_gpu_model(c)
                            ? strata_cluster_gpu_model(c)->name
                            : "this GPU");
  if (o->framework == STRATA_FRAMEWORK_TORCHTITAN) {
    /* bf16 (the rulebook's titan-plan refused the rest); its qwen3
     * MoE shards experts over ep alone (titan-etp refuses --etp > 1) */
    strata_moe_info_t m;
    strata_graph_moe(g, &m);
    if (m.experts && !o->etp) o->etp = 1;
    o->precision = STRATA_PRECISION_BF16;
    return 0;
  }
  if (!ds) return 0;
  o->cp = o->ep = o->vpp = 1;
  o->precision = STRATA_PRECISION_BF16;
  return 0;
}

/* Context parallelism's exchange: Transformer Engine runs sliding-window
 * attention with the keys and values all-gathered, never around the ring,
 * so a windowed model all-gathers by default and a ring it asks for is
 * refused (the rulebook's cp-window-ring).  Fills S->rules, the options'
 * configuration the search's filters copy. */
static int cp_exchange(st__search_t *S) {
  strata_plan_opts_t *o = &S->opts;
  strata_rules_verdict_t v;
  strata_rules_config_init(&S->rules, S->g, S->c, o);
  if (o->cp_comm < 0)
    o->cp_comm = S->rules.cp_comm =
        S->rules.windowed ? STRATA_CP_ALLGATHER : STRATA_CP_P2P;
  if (strata_rules_check(&S->rules, ST__AT_CP_COMM, &v))
    return strata_error(STRATA_EINVAL, "%s", v.why);
  return 0;
}

/* --pipeline-layout (the rulebook checked it): its chunks' layers, and
 * the virtual stages it gives; the buffer of --ds-partition-method's
 * splits. */
static int layout_of(st__search_t *S) {
  strata_plan_opts_t *o = &S->opts;
  char why[512];
  S->ds_n = strata_calloc(ST__MAX_PP, sizeof *S->ds_n);
  if (!S->ds_n) return strata_error(STRATA_ENOMEM, "out of memory");
  if (!o->pipeline_layout) return 0;
  S->lay_n = strata_calloc(ST__MAX_PP, sizeof *S->lay_n);
  if (!S->lay_n) return strata_error(STRATA_ENOMEM, "out of memory");
  if (st__layout_parse(o->pipeline_layout, S->L, S->g->hp.mtp_layers, S->lay_n,
                       ST__MAX_PP, &S->lay_K, why, sizeof why))
    return strata_error(STRATA_EINVAL, "%s", why);
  o->vpp = o->pp > 0 ? S->lay_K / o->pp : 0;
  return 0;
}

static int setup(st__search_t *S, const strata_graph_t *g,
                 const strata_cluster_t *c, const strata_plan_opts_t *o) {
  memset(S, 0, sizeof *S);
  S->g = g;
  S->c = c;
  S->opts = *o;
  S->o = o = &S->opts;
  S->L = strata_graph_layers(g);
  S->G = strata_cluster_gpus_per_node(c);
  S->N = strata_cluster_nodes(c);
  S->total = strata_cluster_gpus(c);
  S->zero = o->zero_stage >= 0 ? o->zero_stage : 1;
  S->budget = strata_plan_memory_budget(o, c);
  /* the search stops at 90 % of the limit: what follows (the chosen
   * configuration's fields, the report) fits in the rest */
  double now = strata_now();
  double t0 = o->time_start > 0 && o->time_start < now ? o->time_start : now;
  S->deadline = o->time_limit > 0 ? t0 + 0.9 * o->time_limit : 0;
  S->limit_end = o->time_limit > 0 ? t0 + o->time_limit : 0;
  S->bound_left = INFINITY;
  st__subset_init(&S->subs);
  if (!(S->budget > 0))
    return strata_error(STRATA_EINVAL,
                        "the memory reserve (%.2f GiB) leaves nothing of the "
                        "device's %.2f GiB",
                        o->memory_reserve / 1073741824.0,
                        (S->budget + o->memory_reserve) / 1073741824.0);
  p2p_models(S);
  int rc = framework_limits(&S->opts, g, c);
  if (!rc) rc = cp_exchange(S);
  if (!rc) rc = check_opts(S);
  if (!rc) rc = layout_of(S);
  if (!rc) rc = load_graphs(S);
  if (!rc) st__fg_prepare(S);
  if (!rc) {
    S->fam = strata_calloc(ST__MAX_FAMILIES, sizeof *S->fam);
    if (!S->fam) rc = strata_error(STRATA_ENOMEM, "out of memory");
  }
  return rc;
}

static void teardown(st__search_t *S) {
  st__subset_free(&S->subs);
  for (int i = 0; i < ST__MAX_GRAPHS; i++)
    strata_graph_destroy(S->own[i]);
  for (int i = 0; S->fam && i < S->n_fam; i++)
    st__family_free(&S->fam[i]);
  strata_free(S->fam);
  strata_free(S->sync);
  strata_free(S->lay_n);
  strata_free(S->ds_n);
  for (int i = 0; S->front && i < S->n_front; i++)
    strata_free(S->front[i].split);
  strata_free(S->front);
  strata_free(S->front_cost);
  st__eval_free(S);
}

static int prepare_cache(const char *dir) {
  if (!dir) return 0;
  if (mkdir(dir, 0755) != 0) {
    struct stat sb;
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
      return strata_error(STRATA_EIO, "cannot use cache folder '%s'", dir);
  }
  return 0;
}

static int fit_families(st__search_t *S) {
  for (int i = 0; i < S->n_fam; i++) {
    int rc = st__family_fit(S, &S->fam[i]);
    if (rc) return rc;
  }
  return 0;
}

/* --pareto: the search's front into the plan. */
static int keep_front(const st__search_t *S, strata_plan_t *p) {
  p->pareto_axes = S->o->pareto;
  if (S->n_front == 0) return 0;
  p->pareto = strata_calloc((size_t)S->n_front, sizeof *p->pareto);
  if (!p->pareto) return strata_error(STRATA_ENOMEM, "out of memory");
  for (int i = 0; i < S->n_front; i++)
    st__plan_config(&S->front[i], &S->front_cost[i], S, &p->pareto[i]);
  p->n_pareto = S->n_front;
  return 0;
}

/* The best configuration whose stages fit when solved exactly; its
 * runners-up go into the plan. */
int st__choose(st__search_t *S, strata_plan_t **out) {
  int K = S->o->top > 0 ? S->o->top : 1, n = 0, rc;
  if (!S->o->megatron && K < 4) K = 4; /* fallbacks for the exact solves */
  st__cfg_t *best = strata_calloc((size_t)K, sizeof *best), lowest;
  st__cost_t *cost = strata_calloc((size_t)K, sizeof *cost), lc;
  memset(&lowest, 0, sizeof lowest);
  rc = best && cost ? 0 : strata_error(STRATA_ENOMEM, "out of memory");
  if (!rc) rc = st__search(S, best, cost, K, &n, &lowest, &lc);
  if (!rc && n == 0)
    rc = out_of_time(S) ? time_limit_error(S, &lowest, &lc)
                        : no_fit_error(S, &lowest, &lc);
  int chosen = -1;
  for (int i = 0; i < n && !rc && chosen < 0; i++) {
    rc = st__build_plan(S, &best[i], &cost[i], out);
    if (rc == 1) { /* a stage does not fit when solved exactly */
      rc = 0;
      continue;
    }
    if (!rc) chosen = i;
  }
  if (!rc && chosen < 0)
    rc = strata_error(STRATA_EINFEASIBLE,
                      "no configuration fits when its stages are solved "
                      "exactly; try --recompute full or more GPUs");
  if (!rc) {
    strata_plan_t *p = *out;
    int keep = S->o->top > 0 ? S->o->top : 1;
    p->top = strata_calloc((size_t)keep, sizeof *p->top);
    if (!p->top) rc = strata_error(STRATA_ENOMEM, "out of memory");
    for (int i = chosen; i < n && !rc && p->n_top < keep; i++)
      st__plan_config(&best[i], &cost[i], S, &p->top[p->n_top++]);
    if (!rc && S->o->pareto) rc = keep_front(S, p);
    if (rc) {
      strata_plan_destroy(p);
      *out = NULL;
    }
  }
  for (int i = 0; best && i < n; i++)
    strata_free(best[i].split);
  strata_free(best);
  strata_free(cost);
  return rc;
}

/* A family's order under a time limit: the likeliest to fit first (the
 * most devices a stage's states spread over, then the deepest ZeRO and
 * recompute, then the smallest micro-batch), so that a limit reached
 * in the stage solves leaves whole families that fit, and a plan. */
typedef struct {
  int spread, zero, rc, graph, i;
} fit_key_t;

static int fit_cmp(const void *a, const void *b) {
  const fit_key_t *x = a, *y = b;
  if (x->spread != y->spread) return y->spread - x->spread;
  if (x->zero != y->zero) return y->zero - x->zero;
  if (x->rc != y->rc) return y->rc - x->rc;
  if (x->graph != y->graph) return x->graph - y->graph;
  return x->i - y->i;
}

static void rank_sub(st__sub_t *s, int r) {
  if (s && (s->prio == 0 || s->prio > r)) s->prio = r;
}

static int fit_first(st__search_t *S) {
  fit_key_t *k = strata_calloc((size_t)S->n_fam + 1, sizeof *k);
  if (!k) return strata_error(STRATA_ENOMEM, "out of memory");
  for (int i = 0; i < S->n_fam; i++) {
    const st__family_t *f = &S->fam[i];
    k[i] = (fit_key_t){f->tcp * f->ep, f->zero, (int)f->rc, f->graph, i};
  }
  qsort(k, (size_t)S->n_fam, sizeof *k, fit_cmp);
  for (int r = 0; r < S->n_fam; r++) {
    const st__family_t *f = &S->fam[k[r].i];
    int B = S->graphs[f->graph]->n_blocks;
    rank_sub(f->only, r + 1);
    for (int j = 0; f->mid && j < 2 * B; j++)
      rank_sub(f->mid[j], r + 1);
    for (int j = 0; j < 2; j++)
      rank_sub(f->first[j], r + 1), rank_sub(f->last[j], r + 1);
  }
  strata_free(k);
  return 0;
}

/* bound: refuse by the memory floor before any probe (a whole cluster's
 * search; a group of a mixed one holds only its stages).  share: of the
 * time left to the deadline, what the stage solves may take (1: all). */
static int prepare(st__search_t *S, const strata_graph_t *g,
                   const strata_cluster_t *c, const strata_plan_opts_t *o,
                   st__search_t *first, int bound, double share,
                   const char *where) {
  int rc = setup(S, g, c, o);
  if (!rc && bound) rc = floor_error(S);
  st__cache_t *cache = first ? first->cache : NULL;
  S->prog = first ? first->prog : &S->prog_own;
  if (!first) st__progress_init(S->prog, !o->quiet);
  if (where) st__progress_where(S->prog, where);
  if (first) /* one limit for the whole plan, from its start */
    S->deadline = first->deadline, S->limit_end = first->limit_end;
  if (!rc) rc = prepare_cache(o->cache_dir);
  if (!rc && o->cache_dir && cache) S->cache = cache;
  if (!rc && o->cache_dir && !cache) {
    rc = st__cache_open(o->cache_dir, &S->cache);
    S->own_cache = !rc;
  }
  if (!rc) rc = st__enumerate_families(S);
  if (!rc && S->deadline > 0) rc = fit_first(S);
  double solves_end = S->deadline;
  if (S->deadline > 0 && share < 1)
    solves_end = strata_now() + share * (S->deadline - strata_now());
  if (!rc)
    rc = st__solve_all(&S->subs, o->threads, S->cache, S->prog, solves_end,
                       o->cancel, &S->ilps, &S->hits);
  if (!rc && solves_end > 0 && strata_now() >= solves_end) S->probes_cut = 1;
  if (!rc) rc = fit_families(S);
  return rc;
}

int st__search_prepare_in(st__search_t *S, const strata_graph_t *g,
                          const strata_cluster_t *c,
                          const strata_plan_opts_t *o, st__search_t *first) {
  return prepare(S, g, c, o, first, 0, 1, NULL);
}

int st__search_prepare_share(st__search_t *S, const strata_graph_t *g,
                             const strata_cluster_t *c,
                             const strata_plan_opts_t *o, st__search_t *first,
                             double share, const char *where) {
  return prepare(S, g, c, o, first, 0, share, where);
}

int st__search_prepare(st__search_t *S, const strata_graph_t *g,
                       const strata_cluster_t *c, const strata_plan_opts_t *o) {
  return prepare(S, g, c, o, NULL, 1, 1, NULL);
}

void st__search_release(st__search_t *S) {
  if (S->prog == &S->prog_own) st__progress_end(S->prog);
  if (S->own_cache) {
    if (!(S->o->cancel && *S->o->cancel)) st__cache_flush(S->cache);
    st__cache_close(S->cache);
  }
  S->cache = NULL;
  S->own_cache = 0;
  teardown(S);
}
