/*
 * eval.c - what one configuration costs: the memory of every pipeline
 * rank with every item the GPU sees, and the step time.
 *
 * This is the one evaluation that `strata plan` ranks with and `strata
 * estimate` prints, so the plan is the best of what estimate would say.
 * Its formulas are in docs/cost-model.md ("Pipeline and step", "Memory as
 * the GPU sees it"):
 *   - model chunks in model order (pp x vpp of them), each the sum of its
 *     parts (kind.c); rank r holds chunks r, r + pp, ...;
 *   - p2p after each chunk: the boundary activation (its 1/t share with
 *     sequence parallelism or Megatron's scatter/gather) over the link
 *     between the two ranks' nodes;
 *   - the schedule simulated op by op (sched.c) gives when each rank's
 *     last backward ends; a lower bound (fill + busy + drain) stands in
 *     for it while searching;
 *   - each rank's gradient synchronisation over its data-parallel group,
 *     exposed unless overlapped with the backward (Megatron buckets it on
 *     the first pipeline rank only), the distributed optimizer's parameter
 *     gather, the optimizer step (memory-bound Adam) and the calibrated
 *     fixed overhead.
 * The experts' states have their own replicas, the expert data-parallel
 * group (dp / ep_outer of the stage's replicas hold the same experts):
 * ZeRO shards them and their gradients are synchronised over it.  ZeRO-2
 * and -3 reduce-scatter gradients after every micro-batch's backward and
 * ZeRO-3 gathers each layer's weights before its forward and backward,
 * the next layer's prefetched while one computes (so only the first
 * layer's, and what exceeds the compute, is exposed).
 */
#include <math.h>
#include <string.h>

#include "pipeline/search.h"

#define GIB 1073741824.0

struct sync_model {
  int t, dp;
  double lat[3], per_byte[3]; /* all-reduce, reduce-scatter, all-gather */
};

static const strata_coll_t sync_coll[3] = {
    STRATA_COLL_ALLREDUCE, STRATA_COLL_REDUCESCATTER, STRATA_COLL_ALLGATHER};

/* The data-parallel group of stride t: dp ranks, t apart. */
static void dp_group_shape(const st__search_t *S, int t, int dp, int *nodes,
                           int *gpn) {
  int per = t >= S->G ? 1 : S->G / t;
  if (per > dp) per = dp;
  if (per < 1) per = 1;
  *gpn = per;
  *nodes = (dp + per - 1) / per;
  if (*nodes > S->N) *nodes = S->N;
}

/* Collectives are affine in their bytes: ask topo/ at two sizes once per
 * (t, dp) and keep the latency and the cost per byte. */
static const struct sync_model *sync_model(st__search_t *S, int t, int dp) {
  for (int i = 0; i < S->n_sync; i++)
    if (S->sync[i].t == t && S->sync[i].dp == dp) return &S->sync[i];
  if (S->n_sync == S->cap_sync) {
    int cap = S->cap_sync ? 2 * S->cap_sync : 64;
    struct sync_model *v = strata_realloc(S->sync, sizeof *v * (size_t)cap);
    if (!v) return NULL;
    S->sync = v;
    S->cap_sync = cap;
  }
  struct sync_model *m = &S->sync[S->n_sync];
  int nodes, gpn;
  m->t = t;
  m->dp = dp;
  dp_group_shape(S, t, dp, &nodes, &gpn);
  for (int k = 0; k < 3; k++) {
    double one = 0, big = 0;
    if (dp > 1 &&
        (strata_cluster_coll_time(S->c, sync_coll[k], 1, nodes, gpn, &one) ||
         strata_cluster_coll_time(S->c, sync_coll[k], 1e9, nodes, gpn, &big))) {
      strata_error_clear();
      one = big = INFINITY;
    }
    m->per_byte[k] = (big - one) / (1e9 - 1);
    m->lat[k] = one - m->per_byte[k];
  }
  S->n_sync++;
  return m;
}

/* ---- the chunks of a configuration ---- */

typedef struct {
  int k0, n;          /* layers [k0, k0 + n) */
  st__part_t part;    /* its costs */
  double zdp;         /* of part's fwd + bwd: ZeRO-2/3's exposed collectives
                         over the data-parallel replicas, one micro-batch */
  double p2p;         /* after it (to the next chunk) */
  double fill, drain; /* forwards / backwards (and p2p) of those before */
  int t;              /* devices of its stage */
} chunk_t;

int st__split_of(const st__search_t *S, const st__cfg_t *cf, int *n) {
  int L = S->L, p = cf->p, v = cf->v > 1 ? cf->v : 1;
  if (p < 1 || p > L || p * v > ST__MAX_PP || v > 64) return -1;
  if (cf->acct) return st__split_accounted(L, p, v, cf->acct, n);
  if (p * v > L) return -1;
  if (cf->split && cf->chunked) { /* a layout of every chunk */
    memcpy(n, cf->split, sizeof *n * (size_t)(p * v));
    return p * v;
  }
  if (cf->split && v == 1) {
    memcpy(n, cf->split, sizeof *n * (size_t)p);
    return p;
  }
  if (cf->split) { /* each rank's layers over its v chunks, every round */
    for (int k = 0; k < p * v; k++) {
      if (cf->split[k % p] % v) return -1;
      n[k] = cf->split[k % p] / v;
    }
    return p * v;
  }
  if (S->lay_K > 0) { /* --pipeline-layout: every chunk as it says */
    if (p * v != S->lay_K) return -1;
    memcpy(n, S->lay_n, sizeof *n * (size_t)S->lay_K);
    return S->lay_K;
  }
  if (p == 1) {
    if (v > 1) return -1;
    n[0] = L;
    return 1;
  }
  /* layers of the first and last ranks (Megatron-LM: a rank not given
   * shares the rest with the middle ranks), each a multiple of v */
  int first = cf->first, last = cf->last;
  if (!first && !last) {
    if (L % p) return -1;
    first = last = L / p;
  }
  if (first < 1 || last < 1 || first + last > L) return -1;
  int rest = L - first - last;
  if (p == 2) {
    if (rest) return -1;
  } else if (rest < p - 2 || rest % (p - 2)) {
    return -1;
  }
  int mid = p > 2 ? rest / (p - 2) : v;
  if (first % v || last % v || mid % v) return -1;
  /* chunk k of rank k mod p holds that rank's layers / v (megatron/core/
   * transformer/transformer_block.py, get_num_layers_to_build) */
  for (int k = 0; k < p * v; k++) {
    int r = k % p;
    n[k] = (r == 0 ? first : r == p - 1 ? last : mid) / v;
  }
  return p * v;
}

static double p2p_between(const st__search_t *S, double bytes, int a, int b,
                          int width);

/* The rank of chunk k: k mod p, or the V's (ZBVZeroBubble, DualPipeV:
 * rank r holds chunks r and 2p - 1 - r). */
static int rank_of(const st__cfg_t *cf, int k) {
  if (k >= cf->p &&
      (cf->sched == STRATA_PPS_ZBV || cf->sched == STRATA_PPS_DUALPIPEV))
    return 2 * cf->p - 1 - k;
  return k % cf->p;
}

/* Rank r's c-th chunk (rank_of's inverse). */
static int chunk_at(const st__cfg_t *cf, int c, int r) {
  if (c == 1 &&
      (cf->sched == STRATA_PPS_ZBV || cf->sched == STRATA_PPS_DUALPIPEV))
    return 2 * cf->p - 1 - r;
  return c * cf->p + r;
}

/* The family of chunk k: its rank's. */
static const st__family_t *fam_of(const st__cfg_t *cf, int k) {
  return cf->fs && cf->fs[rank_of(cf, k)] ? cf->fs[rank_of(cf, k)] : cf->f;
}

/* The search whose cluster runs chunk (or pipeline rank) k: its rank's
 * node group's on a mixed cluster, else S. */
static st__search_t *search_of(st__search_t *S, const st__cfg_t *cf, int k) {
  return cf->ss && cf->ss[rank_of(cf, k)] ? cf->ss[rank_of(cf, k)] : S;
}

/* Chunk k's p2p to the next: over the link between two node groups when
 * they differ, else within its group (ranks counted from the group's
 * first stage). */
static double p2p_after(st__search_t *S, const st__cfg_t *cf, int k,
                        double bytes, int w) {
  st__search_t *A = search_of(S, cf, k), *B = search_of(S, cf, k + 1);
  int k0 = 0;
  if (A != B) return bytes > 0 ? S->xp2p[0] + S->xp2p[1] * bytes : 0;
  while (cf->ss && k0 < k && search_of(S, cf, k0) != A)
    k0++;
  int a = (rank_of(cf, k) - k0) * w, b = (rank_of(cf, k + 1) - k0) * w;
  return p2p_between(A, bytes, a, b, w);
}

/* The p2p time of `bytes` between the stages whose ranks start at a and
 * b: every pair of their t x dp devices sends at once, so the slowest
 * pair decides -- across nodes if any pair is. */
static double p2p_between(const st__search_t *S, double bytes, int a, int b,
                          int width) {
  int cross = 0;
  for (int x = 0; x < width && x < S->G && !cross; x++)
    cross = (a + x) / S->G != (b + x) / S->G;
  const double *m = S->p2p[cross];
  return a == b || bytes <= 0 ? 0 : m[0] + m[1] * bytes;
}

/* The boundary activation one rank sends: its context-parallel share of
 * the sequence, and of that its tensor-parallel share with sequence
 * parallelism (or Megatron's scatter/gather). */
static double boundary_bytes(const st__search_t *S, const st__family_t *f,
                             int layer) {
  const strata_graph_t *g = S->graphs[f->graph];
  int b = strata_graph_layer_block(g, layer);
  if (b < 0) return 0;
  double bytes = (double)strata_tensor_bytes(&g->tensors[g->blocks[b].output]);
  bytes /= f->cp > 1 ? f->cp : 1;
  if (f->sp || S->o->scatter_gather) bytes /= f->tp;
  return bytes;
}

/* Replicas holding the same experts: the expert data parallelism beyond
 * the stage's mesh. */
static int expert_dp(const st__cfg_t *cf) {
  int eo = cf->f->ep_outer > 1 ? cf->f->ep_outer : 1;
  return cf->dp >= eo ? cf->dp / eo : 1;
}

/* Elements of the dense and the experts' parameters in a part (from the
 * optimizer states: 12 bytes per parameter whatever the precision). */
static double dense_params(const st__part_t *x) {
  return (x->o - x->eo) / 12.0;
}

static double expert_params(const st__part_t *x) {
  return x->eo / 12.0;
}

/* The precision-aware optimizer (Transformer Engine's FusedAdam under
 * Megatron-LM's distributed optimizer, optimizer_config.py): the fp32
 * master weight kept as the 16 bits its bf16 weight lacks
 * (store_param_remainders), Adam's moments and the main gradients in
 * their types -- over the recipe's 12 optimizer and 4 gradient bytes a
 * parameter. */
/* The quantised copies (row- and column-wise: two bytes in FP8) of the
 * GEMM weights among w bytes of weights of n parameters, wc bytes a GEMM
 * parameter (intraop/cost.c; intraop/lowp.c's weight_copies). */
static double fp8_copies(double w, double n) {
  return w > 2.0 * n ? w - 2.0 * n : 0;
}
static double lowp_copies(const st__family_t *f) {
  const strata_lowp_t *r = strata_lowp(f->fp8);
  return r ? r->weight_copies : 2.0;
}

static double state_bytes(int t) {
  return t == STRATA_STATE_FP32 ? 4.0 : 2.0;
}
static double optimizer_scale(const st__search_t *S) {
  const strata_plan_opts_t *o = S->o;
  if (o->precision_aware_optimizer <= 0) return 1;
  return (2.0 + state_bytes(o->exp_avg_dtype) +
          state_bytes(o->exp_avg_sq_dtype)) /
         12.0;
}
static double grad_scale(const st__search_t *S) {
  const strata_plan_opts_t *o = S->o;
  if (o->precision_aware_optimizer <= 0 || o->recipe != STRATA_RECIPE_MEGATRON)
    return 1;
  return state_bytes(o->main_grads_dtype) / 4.0;
}

/* torchtitan's FSDP2 under PyTorch's pipelining (any ZeRO stage of a
 * pipeline: its data parallelism is FSDP2 whatever the stage): with a
 * pipeline torchtitan does not reshard after forward (apply_fsdp,
 * reshard_after_forward = not pp_enabled), and the pipeline stage runs
 * every backward with reshard_after_backward and gradient sync off
 * (torch/distributed/pipelining/stage.py, backward_maybe_with_nosync),
 * so the 16-bit parameters stay gathered and the gradients accumulate
 * unsharded in fp32 (reduce_dtype) through the step; _post_backward then
 * reduce-scatters every group once, after the last backward, and
 * reshards.  One all-gather and one reduce-scatter a step, the memory of
 * ZeRO 1 (docs/cost-model.md, "torchtitan"). */
static int fsdp_pp(const st__search_t *S, const st__cfg_t *cf) {
  return S->o->framework == STRATA_FRAMEWORK_TORCHTITAN && cf->p > 1 &&
         cf->f->zero >= 1;
}

/* The switches cf runs, which the plan records (plan.c) and the rulebook
 * is asked: each as given (on when > 0), but that Megatron-LM overlaps
 * the gradient reduction and the parameter gather only across dp > 1,
 * the gather from ZeRO 1 on and behind an overlapped reduction;
 * DeepSpeed overlaps neither with ZeRO 0 or 1, nor the gather after
 * ZeRO 2's step (dp_sync); sequence parallelism carries the tensor-
 * parallel overlap; the experts' overlap is the family's; the p2p
 * overlap is Megatron-LM's default (on with vpp) unless given; the
 * experts' GEMMs are grouped unless asked not to be; torchtitan's FSDP2
 * under a pipeline reduces after the last backward and gathers in the
 * first forward (fsdp_pp): neither of Megatron-LM's overlaps. */
void st__run_switches(const strata_plan_opts_t *o, const st__cfg_t *cf,
                      strata_rules_config_t *c) {
  int ds = o->framework == STRATA_FRAMEWORK_DEEPSPEED;
#define SWITCH_RUN(F, m, ...) c->m = o->m > 0;
  STRATA_PLAN_SWITCHES(SWITCH_RUN, c)
#undef SWITCH_RUN
  c->overlap_grad_reduce =
      o->overlap_grad_reduce != 0 && cf->dp > 1 && !(ds && cf->f->zero < 2);
  c->overlap_param_gather = o->overlap_param_gather != 0 && cf->dp > 1 &&
                            cf->f->zero >= 1 && !ds && c->overlap_grad_reduce;
  c->tp_comm_overlap = o->tp_comm_overlap > 0 && cf->f->sp;
  c->overlap_ep_comm = cf->f->epo;
  c->overlap_p2p = cf->v <= 1 && o->megatron ? 0
                   : o->overlap_p2p >= 0     ? o->overlap_p2p
                                             : cf->v > 1;
  c->moe_grouped_gemm = o->moe_grouped_gemm != 0;
  if (o->framework == STRATA_FRAMEWORK_TORCHTITAN && cf->p > 1)
    c->overlap_grad_reduce = c->overlap_param_gather = 0;
}

void st__cfg_rules(const st__search_t *S, const st__cfg_t *cf,
                   const st__family_t *f, strata_rules_config_t *c) {
  *c = S->rules;
  st__run_switches(S->o, cf, c);
  c->tp = f->tp, c->cp = f->cp, c->ep = f->ep, c->etp = f->etp;
  c->pp = cf->p, c->vpp = cf->v, c->dp = cf->dp;
  c->micro_batch = cf->b, c->global_batch = S->o->global_batch;
  c->zero_stage = f->zero, c->sequence_parallel = f->sp;
  c->recompute = f->rc, c->lowp = f->fp8;
  c->overlap_ep_comm = f->epo;
}

/* Whether the frameworks run cf: the rulebook's rows of the whole
 * configuration (ST__AT_CFG) asked of each stage's family, and expert
 * parallelism whose replicas beyond the mesh divide the data
 * parallelism.  The experts' overlap given on is off only where it
 * cannot run (never for memory or speed: the plan would drop what was
 * asked). */
static int cfg_valid(const st__search_t *S, const st__cfg_t *cf) {
  strata_rules_config_t c;
  for (int s = 0; s < (cf->fs ? cf->p : 1); s++) {
    const st__family_t *f = cf->fs && cf->fs[s] ? cf->fs[s] : cf->f;
    if (f->ep_outer > 1 && cf->dp % f->ep_outer) return 0;
    st__cfg_rules(S, cf, f, &c);
    if (strata_rules_check(&c, ST__AT_CFG, NULL)) return 0;
    c.overlap_ep_comm = 1;
    if (!f->epo && S->o->overlap_ep_comm > 0 && f->ep > 1 &&
        !strata_rules_check(&c, ST__AT_CFG, NULL))
      return 0;
  }
  return 1;
}

/* A collective over the family's data-parallel replicas in nb buckets:
 * the dense bytes over the dp ranks t apart, the experts' over their own
 * replicas (seconds; k indexes sync_coll). */
static int dp_coll(st__search_t *S, const st__cfg_t *cf, int k, double nb,
                   double dense, double expert, double *t) {
  const st__family_t *f = cf->f;
  int edp = expert_dp(cf), eo = f->ep_outer > 1 ? f->ep_outer : 1;
  *t = 0;
  if (cf->dp > 1) {
    const struct sync_model *sm = sync_model(S, f->tcp, cf->dp);
    if (!sm) return strata_error(STRATA_ENOMEM, "out of memory");
    *t += nb * sm->lat[k] + sm->per_byte[k] * dense;
  }
  if (edp > 1 && expert > 0) {
    const struct sync_model *sm = sync_model(S, f->tcp * eo, edp);
    if (!sm) return strata_error(STRATA_ENOMEM, "out of memory");
    *t += sm->lat[k] + sm->per_byte[k] * expert;
  }
  return 0;
}

/* n layers' collective of `total` seconds overlapped with `compute` by
 * prefetching the next layer's: the first (or last) layer's is exposed,
 * and whatever the compute cannot hide. */
static double prefetched(double total, double compute, int n) {
  if (n < 1) n = 1;
  double hidden = total - compute;
  return total / n + (n - 1.0) / n * (hidden > 0 ? hidden : 0);
}

/* ZeRO-2/3 over the outer replicas, every micro-batch: the gradients
 * reduce-scattered after each layer's backward, ZeRO-3's weights gathered
 * before each layer's forward and backward (16-bit weights, the gradients
 * in the recipe's type). */
static int zero_collectives(st__search_t *S, const st__cfg_t *cf, chunk_t *ch,
                            int K) {
  const st__family_t *f = cf->f;
  double wb = S->param_bytes[f->graph];
  double gb =
      (S->o->recipe == STRATA_RECIPE_MEGATRON ? 4.0 : 2.0) * grad_scale(S);
  for (int k = 0; k < K; k++) {
    st__part_t *x = &ch[k].part;
    double ag = 0, rs = 0;
    int rc = 0;
    if (cf->dp <= 1) return 0;
    if (f->zero >= 3)
      rc = dp_coll(S, cf, 2, 1, wb * dense_params(x), wb * expert_params(x),
                   &ag);
    if (!rc)
      rc = dp_coll(S, cf, 1, 1, gb * dense_params(x), gb * expert_params(x),
                   &rs);
    if (rc) return rc;
    double ef = prefetched(ag, x->fwd, ch[k].n);
    double eb = prefetched(ag + rs, x->bwd, ch[k].n);
    x->fwd += ef;
    x->bwd += eb;
    ch[k].zdp = ef + eb;
  }
  return 0;
}

/* One way to the host's memory, bytes/s: the GPU model's host link
 * (GB200: NVLink-C2C), else its PCIe link, at the copies' efficiency. */
static double host_bandwidth(const st__search_t *S) {
  const strata_gpu_model_t *m = strata_cluster_gpu_model(S->c);
  const strata_perf_t *pf = strata_cluster_perf(S->c);
  double bw = m && m->host_bandwidth > 0   ? m->host_bandwidth
              : m && m->pcie_bandwidth > 0 ? m->pcie_bandwidth
                                           : 64e9;
  double eff = pf->link_eff[STRATA_LEVEL_PCIE];
  return bw * (eff > 0 && eff <= 1 ? eff : 1);
}

/* The host's DRAM a GPU has (the GPU table's reference system; 0: not
 * known, not checked). */
static double host_capacity(const st__search_t *S) {
  const strata_gpu_model_t *m = strata_cluster_gpu_model(S->c);
  return m ? m->host_memory_bytes : 0;
}

/* The configuration's offloads: those the search chose for it (--search-
 * offload, offload.c), else the options'. */
static double opt_offload(const st__search_t *S, const st__cfg_t *cf) {
  return cf->opt_offload > 0 ? cf->opt_offload : S->o->optimizer_offload;
}
static int act_offload(const st__search_t *S, const st__cfg_t *cf) {
  return cf->act_offload > 0 ? cf->act_offload : S->o->offload_layers;
}

/* --cpu-offloading-num-layers N (one stage, Megatron-LM's
 * cpu_offload_context): N layers' saved activations go to the host during
 * forward and come back during backward, overlapped with those layers'
 * compute; what the copy takes beyond it is exposed.  The activations of
 * a layer are the stage's over its layers (one layer's kept on the GPU
 * as the copy's buffer, rank_memory). */
static void offload_time(const st__search_t *S, const st__cfg_t *cf,
                         chunk_t *c) {
  int N = act_offload(S, cf), L = S->L;
  if (N < 1 || L < 1) return;
  st__part_t *x = &c->part;
  double bytes = x->act * N / L, t = bytes / host_bandwidth(S);
  double ef = t - x->fwd * N / L, eb = t - x->bwd * N / L;
  x->fwd += ef > 0 ? ef : 0;
  x->bwd += eb > 0 ? eb : 0;
}

static double offload_share(const st__search_t *S, const st__cfg_t *cf) {
  int N = act_offload(S, cf), L = S->L;
  return N > 0 && L > 0 && N < L ? (L - N + 1.0) / L : 1;
}

/* --offload-modules (fine_grained_activation_offload.py): each layer's
 * offloaded groups go to the host on the offload manager's D2H stream as
 * the forward passes them and come back on its H2D stream before their
 * backward, beside the compute stream; what the copies of the chunk's
 * layers take beyond its compute is exposed. */
static unsigned fg_offload(const st__search_t *S, const st__cfg_t *cf) {
  return cf->fg_offload > 0 ? (unsigned)cf->fg_offload
                            : (unsigned)S->o->offload_modules;
}
static void fg_time(const st__search_t *S, const st__family_t *f, unsigned mods,
                    chunk_t *c) {
  double t = st__fg_layer_bytes(S, f, mods) * c->n / host_bandwidth(S);
  if (!(t > 0)) return;
  double ef = t - c->part.fwd, eb = t - c->part.bwd;
  c->part.fwd += ef > 0 ? ef : 0;
  c->part.bwd += eb > 0 ? eb : 0;
}

/* The bytes of rank r's in-flight activations that --offload-modules
 * keeps on the host: the offloaded groups of every layer of every
 * micro-batch in flight, but one layer's, which the manager keeps on
 * the GPU (its margin against reloads that would stall the backward);
 * at most the activations themselves. */
static double fg_held(const st__search_t *S, const st__cfg_t *cf,
                      const chunk_t *ch, int r, const int *count, double act) {
  double b = st__fg_layer_bytes(S, cf->f, fg_offload(S, cf)), h = 0;
  int v = cf->v > 1 ? cf->v : 1;
  if (!(b > 0)) return 0;
  for (int c = 0; c < v; c++)
    h += count[c] * b * ch[chunk_at(cf, c, r)].n;
  h = h > b ? h - b : 0;
  return h < act ? h : act;
}

static int build_chunks(st__search_t *S, const st__cfg_t *cf, chunk_t *ch,
                        int *K_out) {
  int n[ST__MAX_PP];
  int K = st__split_of(S, cf, n);
  if (K < 1 || !cfg_valid(S, cf)) return 1; /* not one Megatron-LM runs */
  for (int k = 0, l = 0; k < K; l += n[k], k++) {
    const st__family_t *f = fam_of(cf, cf->fs ? k : 0);
    chunk_t *c = &ch[k];
    memset(c, 0, sizeof *c);
    c->k0 = l;
    c->n = n[k];
    c->t = f->tcp;
    if (K == 1) {
      c->part = f->only_part;
      st__unit_only(S, f, &c->part);
      continue;
    }
    if (k == 0) c->part = f->pro;
    if (k == K - 1) c->part = f->epi;
    st__chunk_add(search_of(S, cf, k), f, l, n[k], &c->part);
  }
  if (cf->f->zero >= 2 && !fsdp_pp(S, cf)) {
    int rc = zero_collectives(S, cf, ch, K);
    if (rc) return rc;
  }
  if (K == 1) offload_time(S, cf, &ch[0]);
  for (int k = 0; k < K; k++)
    fg_time(search_of(S, cf, k), fam_of(cf, cf->fs ? k : 0), fg_offload(S, cf),
            &ch[k]);
  /* p2p: ranks of chunk k's stage start at (k mod pp) x t x dp */
  for (int k = 0; k + 1 < K; k++) {
    const st__family_t *f = fam_of(cf, cf->fs ? k : 0);
    /* a chunk of no layer (the embedding's alone, or one Megatron-LM's
     * layout leaves empty) passes on what a layer does */
    int last = ch[k].k0 + ch[k].n - 1;
    double bytes = boundary_bytes(S, f, last > 0 ? last : 0);
    ch[k].p2p = p2p_after(S, cf, k, bytes, f->tcp * cf->dp);
  }
  for (int k = 1; k < K; k++) {
    ch[k].fill = ch[k - 1].fill + ch[k - 1].part.fwd + ch[k - 1].p2p;
    ch[k].drain = ch[k - 1].drain + ch[k - 1].part.bwd + ch[k - 1].p2p;
  }
  *K_out = K;
  return 0;
}

/* ---- memory of a rank ---- */

/* The forwards rank r runs of an interleaved schedule before its first
 * backward, and the one with it: Megatron-LM's warm-up, (p - r - 1) 2 +
 * (v - 1) p, plus one (schedules.py; with the experts' all-to-all
 * overlapped the one more is its extra warm-up forward). */
static int warmup_forwards(const st__cfg_t *cf, int r) {
  int p = cf->p, v = cf->v > 1 ? cf->v : 1;
  return (p - r - 1) * 2 + (v - 1) * p + 1;
}

/* With the experts' all-to-all overlapped, Megatron-LM pairs the next
 * micro-batch's forward with a backward layer by layer (combined 1F1B:
 * model_chunk_schedule_plan.py, forward of layer i with backward of
 * layer L - 1 - i, each freeing as the other allocates).  Its schedules
 * add a warm-up forward (schedules.py, "one extra micro-batch forward
 * step before the 1f1b stages"), which is the forward 1F1B's steady
 * state would have run anyway: what the pairing holds beyond the
 * micro-batches in flight is one layer's activations (the largest of
 * rank r's family), the forward's layer before the backward's is freed.
 * A rank whose every forward is a warm-up one (m v at most its warm-up:
 * Megatron-LM's are_all_microbatches_in_warmup) pairs none. */
double st__paired_act(const st__search_t *S, const st__cfg_t *cf, int r) {
  const st__family_t *f = fam_of(cf, r);
  int v = cf->v > 1 ? cf->v : 1;
  if (!f->epo || !f->layer) return 0;
  if (v > 1 && warmup_forwards(cf, r) >= cf->m * v) return 0;
  if (v == 1 && cf->m < 2) return 0;
  const strata_graph_t *g = S->graphs[f->graph];
  double most = 0;
  for (int b = 0; b < g->n_blocks; b++)
    if (f->layer[b].act > most) most = f->layer[b].act;
  return most;
}

/* The micro-batches each chunk of a rank holds activations of at the
 * peak of a schedule of its own order (sched_ops.c's caps): GPipe's and
 * LoopedBFS's every one (all forwards first); ZB-H1's first rank's p, on
 * every rank (a W's inputs held until it runs: Qi et al. 2024, 2.1);
 * InterleavedZeroBubble's first rank's interleaved warm-up; the V-shapes'
 * p of each half-size chunk (1F1B's, DualPipeV one more); DualPipe's p +
 * 1 (the DeepSeek-V3 report, table 2). */
static void sched_in_flight(const st__cfg_t *cf, int *count) {
  int p = cf->p, v = cf->v > 1 ? cf->v : 1, m = cf->m, s = cf->sched;
  for (int c = 0; c < v; c++) {
    int n = p;
    if (s == STRATA_PPS_GPIPE || s == STRATA_PPS_LOOPED_BFS)
      n = m;
    else if (s == STRATA_PPS_INTERLEAVED_ZB)
      n = ((p - 1) * 2 + (v - 1) * p + 1 + v - 1 - c) / v;
    else if (s == STRATA_PPS_DUALPIPE || s == STRATA_PPS_DUALPIPEV)
      n = p + (c == 0);
    count[c] = n < m ? n : m;
  }
}

/* In-flight micro-batches of each chunk on rank r at the end of its
 * warm-up: the first min(W_r + 1, m v) forwards of Megatron's order (with
 * the experts' all-to-all overlapped, the same: st__paired_act). */
static void in_flight(const st__cfg_t *cf, int r, int *count) {
  int p = cf->p, v = cf->v > 1 ? cf->v : 1, m = cf->m;
  for (int c = 0; c < v; c++)
    count[c] = 0;
  if (ST__SCHED_OWN(cf->sched)) {
    sched_in_flight(cf, count);
    return;
  }
  if (v == 1) {
    count[0] = p - r < m ? p - r : m;
    return;
  }
  int w = warmup_forwards(cf, r);
  if (w > m * v) w = m * v;
  /* forward i runs chunk (i mod p v) / p: each full round of p v gives
   * every chunk p, the rest fills the chunks in order */
  int full = w / (p * v), rest = w % (p * v);
  for (int c = 0; c < v; c++) {
    int x = rest - c * p;
    count[c] = full * p + (x < 0 ? 0 : x > p ? p : x);
  }
}

static double comm_of(const strata_perf_t *pf, int n) {
  return n > 2 ? pf->nccl_comm_bytes : n == 2 ? pf->nccl_pair_bytes : 0;
}

/* NCCL communicators a rank joins (Megatron-LM's process groups that run
 * a collective: docs/cost-model.md), as bytes. */
static double nccl_bytes(const st__search_t *S, const st__cfg_t *cf, int r) {
  const strata_perf_t *pf = strata_cluster_perf(S->c);
  const st__family_t *f = cf->f;
  int t = f->tcp, p = cf->p, dp = cf->dp, world = t * p * dp;
  double big = pf->nccl_comm_bytes, pair = pf->nccl_pair_bytes, b = 0;
  if (world <= 1) return 0;
  b += big; /* the world group */
  b += comm_of(pf, f->tp) + comm_of(pf, f->cp);
  b += comm_of(pf, dp * f->cp); /* data parallel with context parallel */
  if (p > 1) {
    if (cf->v > 1) /* one 2-rank communicator per neighbour */
      b += (p > 2 ? 2 : 1) * pair;
    else
      b += p > 2 ? big : pair;
    /* a tied embedding: its gradient is summed over first and last */
    if ((r == 0 || r == p - 1) && S->tied[f->graph]) b += pair;
  }
  if (f->zero >= 1) b += big; /* the distributed optimizer's instance */
  if (f->ep > 1) /* expert parallel, expert tensor parallel, expert data
                    parallel */
    b += comm_of(pf, f->ep) + comm_of(pf, f->etp) +
         comm_of(pf, f->tp * f->cp * dp / (f->etp * f->ep));
  return b;
}

/* NCCL's all-to-all connects every pair of the expert-parallel group and
 * gives each peer its own buffers: measured at 3.3 GB per GPU for the 7
 * peers of an 8-GPU NVLink node (NVIDIA/nccl#1685, 32 channels a pair), and
 * by NCCL's defaults two channels of 9.19 MiB (the Simple, LL and LL128
 * buffers: docs/cost-model.md) for a peer across the network.  The group
 * is ep ranks etp apart. */
#define A2A_NVL_PEER (3.3e9 / 7)
#define A2A_NET_PEER (2 * 9.19 * 1048576.0)
static double ep_buffers(const st__search_t *S, const st__family_t *f) {
  if (f->ep <= 1) return 0;
  int per = f->etp >= S->G ? 1 : S->G / f->etp;
  if (per > f->ep) per = f->ep;
  return (per - 1) * A2A_NVL_PEER + (f->ep - per) * A2A_NET_PEER;
}

/* Ring attention receives the next rank's keys and values while it
 * computes with the current ones (double buffered), in backward their
 * gradients too: four times one layer's local keys and values. */
static double cp_buffers(const st__search_t *S, const st__family_t *f) {
  if (f->cp <= 1 || S->o->cp_comm != STRATA_CP_P2P) return 0;
  return 4.0 * S->kv_bytes[f->graph] / ((double)f->tp * f->cp);
}

/* Model states after ZeRO over the outer replicas (Megatron's distributed
 * optimizer: optimizer states, z = 1): the dense ones over dp, the
 * experts' over their own replicas.  torchtitan's FSDP2 under a pipeline
 * (fsdp_pp) holds the whole 16-bit parameters and fp32 gradients of its
 * stage through the step and shards the rest: ZeRO 1's states, the
 * parameters and gradients the stage solve shared over the
 * context-parallel ranks (FSDP's mesh is dp x cp) whole again. */
static void model_states(const st__cfg_t *cf, int fsdp, const st__part_t *x,
                         strata_mem_items_t *m) {
  int z = cf->f->zero, dp = cf->dp, edp = expert_dp(cf);
  if (fsdp) {
    int cp = cf->f->cp > 1 ? cf->f->cp : 1;
    m->weights = x->w * (z >= 3 ? cp : 1);
    m->gradients = x->g * (z >= 2 ? cp : 1);
    m->optimizer = x->o / dp;
    m->experts = 0; /* torchtitan's models here are dense */
    return;
  }
  double w = (x->w - x->ew) / (z >= 3 ? dp : 1) + x->ew / (z >= 3 ? edp : 1);
  double g = (x->g - x->eg) / (z >= 2 ? dp : 1) + x->eg / (z >= 2 ? edp : 1);
  double o = (x->o - x->eo) / (z >= 1 ? dp : 1) + x->eo / (z >= 1 ? edp : 1);
  m->weights = w;
  m->gradients = g;
  m->optimizer = o;
  m->experts = x->ew / (z >= 3 ? edp : 1) + x->eg / (z >= 2 ? edp : 1) +
               x->eo / (z >= 1 ? edp : 1);
}

/* The host's memory a rank's offloads hold: the activations the GPU does
 * not keep, and for the optimizer's offloaded share of its n parameters
 * their fp32 copy, its gradient and Adam's two moments (16 B each; the
 * CPU Adam's, fp32 whatever the GPU's types). */
static double host_bytes(const st__search_t *S, const st__cfg_t *cf, double act,
                         double n) {
  return act * (1 - offload_share(S, cf)) + opt_offload(S, cf) * n * 16.0;
}

/* FSDP2's unsharded buffers (torchtitan: one FSDP unit a transformer
 * block): forward holds the running block's parameters gathered and the
 * next one's prefetched; backward those two, the running block's 16-bit
 * gradients and their fp32 copy for the reduce-scatter (torchtitan's
 * mixed_precision_reduce float32).  A block's parameters: the rank's over
 * its layers; the running unit's the largest weight (an embedding's unit)
 * where larger. */
static double fsdp2_buffers(const st__search_t *S, const st__cfg_t *cf,
                            const chunk_t *ch, int r, const st__part_t *sum,
                            double largest) {
  int v = cf->v > 1 ? cf->v : 1, n = 0;
  double pb =
      S->param_bytes[cf->f->graph] > 0 ? S->param_bytes[cf->f->graph] : 2.0;
  for (int c = 0; c < v; c++)
    n += ch[chunk_at(cf, c, r)].n;
  double block = n > 0 ? dense_params(sum) / n : 0, run = largest / pb;
  if (block > run) run = block;
  return pb * (run + block) + (pb + 4.0) * run;
}

/* Memory of rank r on its GPU; *host (if given) the host's it holds. */
static void rank_memory(st__search_t *S, const st__cfg_t *cf, const chunk_t *ch,
                        int r, strata_mem_items_t *m, double *host) {
  const strata_perf_t *pf = strata_cluster_perf(S->c);
  const st__family_t *f = cf->f;
  int p = cf->p, v = cf->v > 1 ? cf->v : 1, dp = cf->dp, z = f->zero;
  int count[64];
  double act = 0, tr = 0;
  st__part_t sum;
  memset(&sum, 0, sizeof sum);
  in_flight(cf, r, count);
  for (int c = 0; c < v; c++) {
    const st__part_t *x = &ch[chunk_at(cf, c, r)].part;
    st__part_add(&sum, x);
    act += count[c] * x->act + x->fixed_act;
    if (x->transient > tr) tr = x->transient;
  }
  act += st__paired_act(S, cf, r);
  if (cf->sched == STRATA_PPS_DUALPIPE && p > 1) {
    /* DualPipe's second copy: the parameters of stage p - 1 - r */
    st__part_t mirror = ch[p - 1 - r].part;
    mirror.act = 0;
    st__part_add(&sum, &mirror);
  }
  memset(m, 0, sizeof *m);
  /* --fp8-param-gather: a GEMM's quantised weight and its transpose are
   * its compute copy (two bytes a parameter in FP8, the recipe's
   * weight_copies), with no 16-bit weight beside them; the other weights
   * stay 16-bit */
  if (S->o->fp8_param_gather && f->fp8) {
    double wc = lowp_copies(f);
    double ge = fp8_copies(sum.ew, expert_params(&sum)) / wc;
    double gd = fp8_copies(sum.w - sum.ew, dense_params(&sum)) / wc;
    sum.ew = 2.0 * expert_params(&sum) - (2.0 - wc) * ge;
    sum.w = 2.0 * dense_params(&sum) - (2.0 - wc) * gd + sum.ew;
  }
  /* the parameters of the rank's optimizer shard (before the states'
   * types scale the bytes they are counted from) */
  double shard =
      z >= 1 ? dense_params(&sum) / dp + expert_params(&sum) / expert_dp(cf)
             : dense_params(&sum) + expert_params(&sum);
  double os = optimizer_scale(S), gs = grad_scale(S);
  sum.o *= os, sum.eo *= os, sum.g *= gs, sum.eg *= gs;
  model_states(cf, fsdp_pp(S, cf), &sum, m);
  m->optimizer *= 1 - opt_offload(S, cf); /* the host holds the rest */
  if (S->o->framework == STRATA_FRAMEWORK_DEEPSPEED) {
    /* bf16 .grad tensors live next to the fp32 accumulation buffer
     * (DeepSpeed's BF16_Optimizer) */
    m->gradients += 2.0 * (dense_params(&sum) / (z >= 2 ? dp : 1) +
                           expert_params(&sum) / (z >= 2 ? expert_dp(cf) : 1));
    if (z >= 1 && p == 1) m->buckets = 2.0 * 5e8; /* reduce_bucket_size */
    if (z >= 3) m->buckets += 2.0 * 5e7;          /* prefetch bucket */
  }
  double kept = act * offload_share(S, cf); /* the host holds the rest */
  double fg = fg_held(S, cf, ch, r, count, kept);
  m->activations = kept - fg;
  if (host) *host = host_bytes(S, cf, act, shard) + fg;
  m->transient = tr;
  /* ZeRO-3 gathers each weight whole while its op runs (the probes, with
   * no replicas, hold none): the largest one on the device */
  if (z >= 3 && dp > 1 && !fsdp_pp(S, cf)) {
    double d = S->max_param[f->graph] / f->tp,
           e = S->max_expert[f->graph] / ((double)f->etp * f->ep);
    m->transient += S->o->framework == STRATA_FRAMEWORK_TORCHTITAN
                        ? fsdp2_buffers(S, cf, ch, r, &sum, d > e ? d : e)
                    : d > e ? d
                            : e;
  }
  m->context = pf->context_bytes;
  m->workspace = pf->workspace_bytes;
  if (S->o->tp_comm_overlap) m->workspace += 3 * 32.0 * 1048576.0;
  m->nccl = nccl_bytes(S, cf, r);
  m->ep_buffers = ep_buffers(S, f);
  m->cp_buffers = cp_buffers(S, f);
  m->fragmentation =
      strata_stack_fragmentation(S->o->stack.alloc) * (m->activations + tr);
  m->calibration = strata_cluster_calibration(S->c)->memory_bytes;
  m->total = m->weights + m->gradients + m->optimizer + m->activations +
             m->transient + m->context + m->workspace + m->nccl + m->buckets +
             m->fragmentation + m->calibration + m->ep_buffers + m->cp_buffers;
}

/* ---- time ---- */

typedef struct {
  double busy, compute, tpc; /* all micro-batches: fwd + bwd, of which */
  double a2a;                /* ... the experts' all-to-all (not in tpc) */
  double cp;                 /* ... ring attention's exchange (not in tpc) */
  double host;               /* ... the eager MoE layers' host-bound gaps */
  double zdp;                /* ... ZeRO-2/3's data-parallel collectives */
  double p2p;                /* ... the blocking sends before its end */
  double fwd1, bwd1;         /* one micro-batch, all its chunks */
  double sync, exposed, gather, opt;
  double fill, drain; /* lower bound terms */
  double tail;        /* of busy, the blocking send after its last backward
                         (the rank's end is before it, the drain after it) */
} rank_time_t;

/* Megatron-LM overlaps p2p only with interleaving (on by default there);
 * its non-interleaved schedule sends and receives in one blocking batch. */
static int blocking_p2p(const st__search_t *S, const st__cfg_t *cf) {
  if (cf->v <= 1 && S->o->megatron) return 1;
  if (S->o->overlap_p2p >= 0) return !S->o->overlap_p2p;
  return cf->v <= 1;
}

/* The gradient synchronisation once per step over the data-parallel
 * replicas (ZeRO 0: all-reduce, 1: reduce-scatter; 2 and 3 reduce every
 * micro-batch, in the chunks' backward), in buckets overlapped with the
 * backward on the first pipeline rank; then the updated 16-bit parameters
 * gathered back (ZeRO 1 and 2).  The dense gradients go over the dp
 * replicas, the experts' over theirs.
 *
 * DeepSpeed with ZeRO 0 or 1 reduces once the backward is over: its
 * pipeline engine turns the backward's reduction off and runs ReduceGrads
 * after the schedule (deepspeed/runtime/pipe/engine.py), and its plain
 * engine calls allreduce_gradients after the last micro-batch's backward
 * (engine.py); with bf16 and ZeRO 1 (BF16_Optimizer, fp32 gradient
 * accumulation, which the export asks for) that is an all-reduce of the
 * fp32 gradients (buffered_allreduce_fallback), and the optimizer's step
 * gathers the updated bf16 weights before it returns (bf16_optimizer.py
 * update_lp_params): nothing overlaps. */
/* torchtitan's FSDP2 under a pipeline (fsdp_pp): the fp32 gradients
 * reduce-scattered once, after the last backward, one collective per FSDP
 * unit (a layer) with nothing left to hide them; the 16-bit parameters
 * all-gathered once, in the first micro-batch's forward, each unit's
 * prefetched behind the one before (FSDP2's implicit forward prefetch). */
static int fsdp_pp_sync(st__search_t *S, const st__cfg_t *cf, int units,
                        const st__part_t *x, rank_time_t *rt) {
  double pd = dense_params(x), rs = 0, ag = 0;
  int rc = dp_coll(S, cf, 1, units, 4.0 * grad_scale(S) * pd, 0, &rs);
  if (!rc) rc = dp_coll(S, cf, 2, units, 2.0 * pd, 0, &ag);
  if (rc) return rc;
  rt->sync += rs;
  rt->exposed = rt->sync;
  rt->gather = prefetched(ag, rt->fwd1, units);
  return 0;
}

static int dp_sync(st__search_t *S, const st__cfg_t *cf, int r,
                   const st__part_t *x, rank_time_t *rt, int units) {
  int dp = cf->dp, z = cf->f->zero, edp = expert_dp(cf);
  int ds = S->o->framework == STRATA_FRAMEWORK_DEEPSPEED;
  double pd = dense_params(x), pe = expert_params(x);
  rt->exposed = rt->sync;
  if (dp <= 1) return 0;
  if (fsdp_pp(S, cf)) return fsdp_pp_sync(S, cf, units, x, rt);
  double bucket = 4e7 > 1e6 * dp ? 4e7 : 1e6 * dp;
  int bucketed = S->o->overlap_grad_reduce && r == 0 && !ds;
  double nb = bucketed ? ceil((pd + pe) / bucket) : 1;
  if (nb < 1) nb = 1;
  if (z < 2) {
    double t = 0;
    double gs = grad_scale(S); /* the main gradients' type */
    int rc = dp_coll(S, cf, z >= 1 && !ds ? 1 : 0, nb, gs * (x->g - x->eg),
                     edp > 1 ? gs * x->eg : 0, &t);
    if (rc) return rc;
    rt->sync += t;
    rt->exposed = rt->sync;
    if (bucketed) {
      double e = rt->sync - rt->bwd1, last = rt->sync / nb;
      rt->exposed = e > last ? e : last;
    }
  }
  if (z == 1 || z == 2) { /* the updated parameters gathered back */
    double ag = 0;
    double bd = 2.0 * pd, be = 2.0 * pe;        /* 16-bit weights */
    if (S->o->fp8_param_gather && cf->f->fp8) { /* the GEMMs' narrow */
      const strata_lowp_t *lr = strata_lowp(cf->f->fp8);
      /* each GEMM parameter moves at the recipe's operand bytes, not 2 */
      double wc = lowp_copies(cf->f), cut = 2.0 - lr->operand;
      bd -= fp8_copies(x->w - x->ew, pd) / wc * cut;
      be -= fp8_copies(x->ew, pe) / wc * cut;
    }
    int rc = dp_coll(S, cf, 2, nb, bd, edp > 1 ? be : 0, &ag);
    if (rc) return rc;
    rt->gather = ag;
    if (S->o->overlap_param_gather && S->o->overlap_grad_reduce && !ds) {
      double e = ag - rt->fwd1, last = ag / nb;
      /* the first bucket's gather, which the forward waits for, under
       * the optimizer step (--overlap-param-gather-with-optimizer-step) */
      if (S->o->overlap_param_gather_step > 0)
        last = last > rt->opt ? last - rt->opt : 0;
      rt->gather = e > last ? e : last;
    }
  }
  return 0;
}

/* Adam over a shard of n parameters: on the GPU, reading the gradient,
 * master weight and two moments (16 B) and writing those three (12 B) and
 * the bf16 weight (2 B); with --optimizer-offload-fraction F, Megatron-
 * LM's HybridDeviceOptimizer steps F of them on the host at once: their
 * gradients copied to it, Adam over the fp32 copies there (28 B a
 * parameter through the host's DRAM), the weights copied back in bf16
 * (cast on the host before the copy), each parameter's three pipelined
 * with --overlap-cpu-optimizer-d2h-h2d, as the export sets. */
static double optimizer_time(const st__search_t *S, const st__cfg_t *cf,
                             double n) {
  const strata_perf_t *pf = strata_cluster_perf(S->c);
  double F = opt_offload(S, cf);
  double gpu = strata_perf_stream(pf, 30.0 * n * (1 - F), 4);
  if (!(F > 0)) return gpu;
  const strata_gpu_model_t *g = strata_cluster_gpu_model(S->c);
  double dram = g && g->host_memory_bandwidth > 0 ? g->host_memory_bandwidth
                                                  : 50e9,
         link = host_bandwidth(S), h = F * n;
  double d2h = h * 4.0 * grad_scale(S) / link, h2d = h * 2.0 / link,
         cpu = h * 28.0 / dram;
  double host = d2h > cpu ? d2h : cpu;
  if (h2d > host) host = h2d;
  return gpu > host ? gpu : host;
}

static int rank_time(st__search_t *S, const st__cfg_t *cf, const chunk_t *ch,
                     int K, int r, rank_time_t *rt) {
  int v = cf->v > 1 ? cf->v : 1, z = cf->f->zero;
  int blocking = blocking_p2p(S, cf), units = 0;
  double comm = 0, a2a = 0;
  st__part_t sum;
  memset(rt, 0, sizeof *rt);
  memset(&sum, 0, sizeof sum);
  for (int c = 0; c < v; c++) {
    int k = chunk_at(cf, c, r);
    const st__part_t *x = &ch[k].part;
    double send = 0;
    if (blocking) {
      if (k + 1 < K) send += ch[k].p2p;
      if (k > 0) send += ch[k - 1].p2p;
    }
    rt->fwd1 += x->fwd;
    rt->bwd1 += x->bwd;
    rt->busy += cf->m * (x->fwd + x->bwd + send);
    rt->p2p += cf->m * send;
    comm += cf->m * (x->comm_fwd + x->comm_bwd);
    a2a += cf->m * (x->a2a_fwd + x->a2a_bwd);
    rt->host += cf->m * (x->host_fwd + x->host_bwd);
    rt->cp += cf->m * (x->cp_fwd + x->cp_bwd);
    rt->zdp += cf->m * ch[k].zdp;
    units += ch[k].n + (k == 0) + (k == K - 1); /* layers, embedding, head */
    st__part_add(&sum, x);
  }
  rt->tpc = comm - a2a - rt->cp;
  rt->a2a = a2a;
  rt->compute = cf->m * (rt->fwd1 + rt->bwd1) - comm - rt->zdp - rt->host;
  rt->fill = ch[r].fill; /* chunks before this rank's first */
  rt->drain = ch[r].drain;
  rt->tail = blocking && r > 0 ? ch[r - 1].p2p : 0;
  rt->p2p -= rt->tail; /* 0 exactly where nothing blocks */
  rt->sync = sum.sync; /* inside the stage's mesh */
  /* Adam over the rank's shard: read gradient, master weight, two
   * moments (16 B), write those three (12 B) and the bf16 weight (2 B);
   * before the gather, which may run under it */
  double shard =
      z >= 1 ? dense_params(&sum) / cf->dp + expert_params(&sum) / expert_dp(cf)
             : dense_params(&sum) + expert_params(&sum);
  rt->opt = optimizer_time(S, cf, shard);
  return dp_sync(S, cf, r, &sum, rt, units);
}

/* ---- the step ---- */

/* The schedule of chunks ch: each rank's end into rank_end.  With a cut
 * (finite, after[r] what the step adds to rank r's end), 1 as soon as no
 * rank can end under it (st__sched_cut); B keeps the buffers (NULL: they
 * are made for this call). */
static int simulate(const st__cfg_t *cf, const chunk_t *ch, int K, int blocking,
                    double *rank_end, st__sched_buf_t *B, const double *after,
                    double cut) {
  double fwd[ST__MAX_PP], bwd[ST__MAX_PP], p2p[ST__MAX_PP], wgt[ST__MAX_PP],
      af[ST__MAX_PP], ab[ST__MAX_PP];
  strata_sched_t sc;
  st__sched_buf_t own;
  int full = cf->f->rc == STRATA_RECOMPUTE_FULL;
  for (int k = 0; k < K; k++) {
    const st__part_t *x = &ch[k].part;
    fwd[k] = x->fwd;
    bwd[k] = x->bwd;
    p2p[k] = ch[k].p2p;
    /* the weight gradients: half the backward's compute (each GEMM's
     * input and weight gradient alike: Qi et al. 2024, table 1), less
     * full recompute's re-run forward, which only the input's needs */
    wgt[k] = 0.5 * (x->bwd - x->comm_bwd - (full ? x->fwd - x->comm_fwd : 0));
    if (wgt[k] < 0) wgt[k] = 0;
    af[k] = x->a2a_fwd;
    ab[k] = x->a2a_bwd;
  }
  memset(&sc, 0, sizeof sc);
  memset(&own, 0, sizeof own);
  sc.pp = cf->p;
  sc.vpp = cf->v > 1 ? cf->v : 1;
  sc.n_micro = cf->m;
  sc.fwd = fwd;
  sc.bwd = bwd;
  sc.p2p = K > 1 ? p2p : NULL;
  sc.blocking_p2p = blocking;
  sc.schedule = cf->sched;
  sc.wgt = wgt;
  sc.a2a_f = af;
  sc.a2a_b = ab;
  int rc = st__sched_cut(&sc, B ? B : &own, after, cut);
  if (!rc) memcpy(rank_end, sc.rank_end, sizeof *rank_end * (size_t)cf->p);
  st__sched_buf_free(&own);
  return rc;
}

/* Scratch arrays for a configuration, kept across calls: the search costs
 * a hundred thousand configurations and must not allocate for each. */
struct st__scratch {
  chunk_t ch[ST__MAX_PP];
  double end[ST__MAX_PP], after[ST__MAX_PP];
  rank_time_t rt[ST__MAX_PP];
  st__sched_buf_t sched;
};

static double step_of(const st__search_t *S, const st__cfg_t *cf,
                      const rank_time_t *rt, double *end, int exact,
                      strata_step_items_t *it);

/* What every rank's end is followed by: the slowest optimizer step and
 * parameter gather. */
static void step_tails(const st__cfg_t *cf, const rank_time_t *rt, double *opt,
                       double *gather) {
  *opt = *gather = 0;
  for (int r = 0; r < cf->p; r++) {
    if (rt[r].opt > *opt) *opt = rt[r].opt;
    if (rt[r].gather > *gather) *gather = rt[r].gather;
  }
}

/* Rank r's memory of chunks ch at the least the search may offload to. */
static double least_peak(st__search_t *S, const st__cfg_t *cf,
                         const chunk_t *ch, int r) {
  st__cfg_t most = *cf;
  strata_mem_items_t m;
  int opt = 0, act = 0;
  st__offload_room(S, cf, &opt, &act);
  if (opt) most.opt_offload = 1;
  if (act) most.act_offload = act;
  most.fg_offload = (int)st__offload_fg_room(S, cf);
  rank_memory(S, &most, ch, r, &m, NULL);
  return m.total;
}

/* Peak memory of rank r that holds n layers (with the prologue on rank 0
 * and the epilogue on the last rank), its first chunk from layer k: with
 * v virtual stages, n / v layers from k + c L / v for each chunk c.
 * Counted as st__cfg_cost_cut counts it: the search drops the splits whose
 * first, last or middle rank cannot fit before costing them (space.c).  It
 * grows with n at a fixed start (every item adds). */
double st__rank_peak(st__search_t *S, const st__cfg_t *cf, int r, int k,
                     int n) {
  chunk_t *ch = S->scratch->ch;
  const st__family_t *f = cf->f;
  int p = cf->p, v = cf->v > 1 ? cf->v : 1;
  for (int c = 0; c < v; c++) {
    chunk_t *x = &ch[c * p + r];
    memset(x, 0, sizeof *x);
    x->k0 = k + c * (S->L / v);
    x->n = n / v;
    x->t = f->tcp;
    if (p == 1) {
      x->part = f->only_part;
      st__unit_only(S, f, &x->part);
      continue;
    }
    if (r == 0 && c == 0) x->part = f->pro;
    if (r == p - 1 && c == v - 1) x->part = f->epi;
    st__chunk_add(S, f, x->k0, x->n, &x->part);
  }
  return least_peak(S, cf, ch, r);
}

/* Rank r's chunks of split n (K of them) into the scratch chunks, without
 * what only adds to them (ZeRO-2/3's collectives, offloads, the p2p
 * sends): each part at most its own.  rank_time reads rank r's chunks,
 * the p2p of each one's neighbour before (none here), and chunk r's fill
 * and drain (none here). */
static chunk_t *rank_chunks(st__search_t *S, const st__cfg_t *cf, const int *n,
                            int r, int K) {
  chunk_t *ch = S->scratch->ch;
  const st__family_t *f = cf->f;
  int p = cf->p;
  for (int k = r, l = 0, j = 0; k < K; k += p) {
    for (; j < k; j++) /* l: the layers before chunk k */
      l += n[j];
    chunk_t *c = &ch[k];
    if (k > 0) ch[k - 1].p2p = 0;
    memset(c, 0, sizeof *c);
    c->k0 = l, c->n = n[k], c->t = f->tcp;
    if (k == 0) c->part = f->pro;
    if (k == K - 1) c->part = f->epi;
    st__chunk_add(S, f, l, n[k], &c->part);
  }
  return ch;
}

double st__rank_layout_peak(st__search_t *S, const st__cfg_t *cf, const int *n,
                            int r) {
  int K = cf->p * (cf->v > 1 ? cf->v : 1);
  return least_peak(S, cf, rank_chunks(S, cf, n, r, K), r);
}

double st__rank_floor(st__search_t *S, const st__cfg_t *cf, const int *n, int r,
                      double *peak) {
  int K = cf->p * (cf->v > 1 ? cf->v : 1);
  rank_time_t rt;
  chunk_t *ch = rank_chunks(S, cf, n, r, K);
  if (peak) *peak = least_peak(S, cf, ch, r);
  if (rank_time(S, cf, ch, K, r, &rt)) return 0;
  /* its ops run one after another (end >= its work), then its exposed
   * synchronisation; the step adds the largest optimizer and gather */
  return cf->m * (rt.fwd1 + rt.bwd1) + rt.exposed + rt.opt + rt.gather +
         strata_cluster_calibration(S->c)->step_seconds;
}

int st__layers_alike(const st__search_t *S, const st__cfg_t *cf) {
  const st__family_t *f = cf->f;
  int N = S->o->recompute_layers,
      block = STRATA_CHOICE(S->o->recompute_method) == STRATA_RECOMPUTE_BLOCK;
  /* st__chunk_add adds n of them: no block or uniform recompute by the
   * chunk */
  return S->graphs[f->graph]->n_blocks == 1 &&
         (f->rc != STRATA_RECOMPUTE_FULL || (N <= 1 && !block));
}

int st__rank_floor_by_count(const st__search_t *S, const st__cfg_t *cf, int r) {
  /* a rank past the first (its gradients reduced unbucketed, its gather
   * unhidden), no FSDP under the pipeline (its gather's prefetch shrinks
   * as the forward grows): every item of the floor adds with each layer */
  return r > 0 && r < cf->p && !fsdp_pp(S, cf) && st__layers_alike(S, cf);
}

void st__offload_room(const st__search_t *S, const st__cfg_t *cf, int *opt,
                      int *act) {
  const strata_plan_opts_t *o = S->o;
  strata_rules_config_t c;
  *opt = *act = 0;
  if (!o->search_offload) return;
  /* cf with the optimizer, then the layers, on the host */
  st__cfg_rules(S, cf, cf->f, &c);
  c.optimizer_offload = 1;
  *opt = !(o->optimizer_offload > 0) &&
         !strata_rules_check(&c, ST__AT_OPT_OFFLOAD, NULL);
  c.optimizer_offload = 0, c.offload_layers = 1;
  if (o->offload_layers > 0 || o->offload_modules || S->L < 2 ||
      strata_rules_check(&c, ST__AT_ACT_OFFLOAD, NULL))
    return;
  *act = S->L - 1; /* Megatron-LM keeps one layer's on the GPU */
}

double st__least_optimizer_offload(st__search_t *S, const st__cfg_t *cf) {
  chunk_t *ch = S->scratch->ch;
  st__cfg_t none = *cf;
  double F = 0;
  int K = 0;
  none.opt_offload = 0;
  if (build_chunks(S, &none, ch, &K)) return INFINITY;
  for (int r = 0; r < cf->p; r++) {
    strata_mem_items_t m;
    st__search_t *R = search_of(S, cf, r);
    rank_memory(R, &none, ch, r, &m, NULL);
    if (m.total <= R->budget) continue;
    if (!(m.optimizer > 0)) return INFINITY;
    double f = (m.total - R->budget) / m.optimizer;
    if (f > F) F = f;
  }
  return F;
}

void st__eval_free(st__search_t *S) {
  if (S->scratch) st__sched_buf_free(&S->scratch->sched);
  strata_free(S->scratch);
  S->scratch = NULL;
}

int st__cfg_cost(st__search_t *S, const st__cfg_t *cf, int exact,
                 st__cost_t *out) {
  return st__cfg_cost_cut(S, cf, exact, INFINITY, out);
}

int st__eval_scratch(st__search_t *S) {
  if (!S->scratch && !(S->scratch = strata_calloc(1, sizeof *S->scratch)))
    return strata_error(STRATA_ENOMEM, "out of memory");
  return 0;
}

static int cost_one(st__search_t *S, const st__cfg_t *cf, int exact,
                    double cutoff, st__cost_t *out);

/* Is a better than b: it fits where b does not, else the shorter step. */
static int cost_better(const st__cost_t *a, const st__cost_t *b) {
  if ((a->fits == 1) != (b->fits == 1)) return a->fits == 1;
  return a->step < b->step;
}

/* The configuration with its schedule: the one it names, else the best of
 * those the framework runs for its chunks a rank (--pp-schedule auto) or
 * the one asked; 1F1B and interleaved 1F1B kept as 0 (sched.c's order). */
static int best_sched(st__search_t *S, const st__cfg_t *cf, int exact,
                      double cutoff, st__cost_t *out, int *chosen) {
  int s[ST__MAX_SCHEDS], v = cf->v > 1 ? cf->v : 1;
  int n = st__pp_schedules(S->o->framework, S->o->pp_schedule, v, s);
  st__cfg_t one = *cf;
  *chosen = cf->sched;
  if (cf->sched && !st__sched_micro_ok(cf->sched, cf->p, cf->m)) {
    memset(out, 0, sizeof *out);
    out->step = INFINITY;
    return 0;
  }
  if (cf->sched || cf->p < 2) return cost_one(S, cf, exact, cutoff, out);
  if (n == 0) { /* no schedule it asks runs v chunks a rank */
    memset(out, 0, sizeof *out);
    out->step = INFINITY;
    return 0;
  }
  memset(out, 0, sizeof *out);
  out->step = INFINITY;
  for (int i = 0, any = 0; i < n; i++) {
    st__cost_t c;
    one.sched = ST__SCHED_OWN(s[i]) ? s[i] : 0;
    if (!st__sched_micro_ok(s[i], cf->p, cf->m)) continue;
    int rc = cost_one(S, &one, exact, cutoff, &c);
    if (rc) return rc;
    if (!any++ || cost_better(&c, out)) *out = c, *chosen = one.sched;
    if (out->fits == 1 && out->step < cutoff) cutoff = out->step;
  }
  return 0;
}

int st__cfg_cost_cut(st__search_t *S, const st__cfg_t *cf, int exact,
                     double cutoff, st__cost_t *out) {
  int chosen;
  return best_sched(S, cf, exact, cutoff, out, &chosen);
}

static int cost_one(st__search_t *S, const st__cfg_t *cf, int exact,
                    double cutoff, st__cost_t *out) {
  int K = 0, rc = 0;
  memset(out, 0, sizeof *out);
  out->step = INFINITY;
  if ((rc = st__eval_scratch(S))) return rc;
  chunk_t *ch = S->scratch->ch;
  double *end = S->scratch->end;
  rank_time_t *rt = S->scratch->rt;
  rc = build_chunks(S, cf, ch, &K);
  if (rc) {
    if (rc > 0) rc = 0; /* not a valid split: its step stays infinite */
    goto done;
  }
  for (int r = 0; r < cf->p && !rc; r++)
    rc = rank_time(search_of(S, cf, r), cf, ch, K, r, &rt[r]);
  if (rc) goto done;
  out->step = step_of(S, cf, rt, end, 0, &out->items);
  if (!exact && out->step >= cutoff) { /* its memory is not needed */
    out->fits = -1;
    S->bounded++;
    goto done;
  }
  out->peak = 0;
  out->fits = 1;
  for (int r = 0; r < cf->p; r++) {
    strata_mem_items_t m;
    st__search_t *R = search_of(S, cf, r); /* each rank on its own GPU */
    double host = 0, cap = host_capacity(R);
    rank_memory(R, cf, ch, r, &m, &host);
    if (m.total > out->peak) out->peak = m.total, out->worst_rank = r;
    if (!(m.total <= R->budget)) out->fits = 0;
    if (cap > 0 && host > cap) out->fits = 0; /* the host's, not the GPU's */
  }
  if (exact) {
    /* a rank's end plus what the step adds after it (step_of) */
    double *after = S->scratch->after, opt, gather;
    step_tails(cf, rt, &opt, &gather);
    for (int r = 0; r < cf->p; r++)
      after[r] = rt[r].exposed + opt + gather +
                 strata_cluster_calibration(S->c)->step_seconds;
    rc = simulate(cf, ch, K, blocking_p2p(S, cf), end, &S->scratch->sched,
                  after, cutoff);
    if (rc > 0) { /* cannot end under the cut: no better than it */
      rc = 0;
      out->step = INFINITY;
      S->evaluated++;
      goto done;
    }
    if (rc) goto done;
    out->step = step_of(S, cf, rt, end, 1, &out->items);
  }
  if (exact)
    S->evaluated++;
  else
    S->bounded++;
done:
  return rc;
}

/* The rank whose items the step shows: of the most work, its busy time
 * before its end and its exposed gradient sync (the first of equals, to a
 * relative 1e-12). */
static int busiest(const st__cfg_t *cf, const rank_time_t *rt) {
  int b = 0;
  double most = -1;
  for (int r = 0; r < cf->p; r++) {
    double w = rt[r].busy - rt[r].tail + rt[r].exposed;
    if (w > most * (1 + 1e-12)) most = w, b = r;
  }
  return b;
}

/* The step's items (docs/cost-model.md, "The step's items"): the busiest
 * rank's work, each part its own item, and the pipeline bubble, the time
 * it idles before the step's last rank ends with its exposed sync (`to`):
 * its fill and drain and its waits on the others, whatever they spend
 * that time on.  No rank idles less, so the bubble is the time no rank of
 * the pipeline escapes; with equal stages, (p - 1)/(v m) of the work. */
static void step_items(const st__search_t *S, const st__cfg_t *cf,
                       const rank_time_t *rt, double to, double opt,
                       double gather, strata_step_items_t *it) {
  const rank_time_t *b = &rt[busiest(cf, rt)];
  it->compute = b->compute;
  it->tp_comm = b->tpc;
  it->ep_a2a = b->a2a;
  it->cp_comm = b->cp;
  it->host = b->host;
  it->p2p = b->p2p;
  it->dp_sync = b->exposed + b->zdp;
  it->bubble = to - (b->busy - b->tail) - b->exposed;
  /* rounding: the schedule's sum of the same times in another order */
  if (fabs(it->bubble) <= 1e-12 * to || (it->bubble < 0 && it->bubble > -1e-9))
    it->bubble = 0;
  it->param_gather = gather;
  it->optimizer = opt;
  it->overhead = strata_cluster_calibration(S->c)->step_seconds;
}

/* The step from each rank's times: exactly, from when the schedule ends
 * each rank; or bounded (no schedule run) by each rank's own fill and
 * work, and the makespan by the fill, work and drain around any rank. */
static double step_of(const st__search_t *S, const st__cfg_t *cf,
                      const rank_time_t *rt, double *end, int exact,
                      strata_step_items_t *it) {
  double last = -1, opt, gather, mk = 0;
  int rl = 0;
  step_tails(cf, rt, &opt, &gather);
  for (int r = 0; r < cf->p; r++) {
    if (!exact) {
      /* a schedule of its own order: DualPipe feeds rank r from both
       * ends, the zero-bubble ones drain by input gradients alone */
      int ops = ST__SCHED_OWN(cf->sched);
      double own = (ops ? 0 : rt[r].fill) + rt[r].busy - rt[r].tail;
      double around = own + (ops ? 0 : rt[r].drain);
      mk = around > mk ? around : mk;
      end[r] = own;
    }
    if (end[r] + rt[r].exposed > last) last = end[r] + rt[r].exposed, rl = r;
  }
  if (!exact && mk > last) {
    last = mk;
    end[rl] = mk - rt[rl].exposed;
  }
  step_items(S, cf, rt, last, opt, gather, it);
  return last + opt + gather + it->overhead;
}

/* ---- the plan's fields ---- */

int st__cfg_fill_plan(st__search_t *S, const st__cfg_t *given,
                      strata_plan_t *p) {
  st__cfg_t one = *given;
  const st__cfg_t *cf = &one;
  st__cost_t best;
  int sched, rc0 = best_sched(S, given, 1, INFINITY, &best, &sched);
  if (rc0) return rc0;
  one.sched = sched;
  p->pp_schedule = sched;
  chunk_t *ch = strata_calloc(ST__MAX_PP, sizeof *ch);
  double *end = strata_calloc(ST__MAX_PP, sizeof *end);
  rank_time_t rt;
  int K = 0, rc = ch && end ? 0 : strata_error(STRATA_ENOMEM, "out of memory");
  if (!rc && (rc = build_chunks(S, cf, ch, &K)) > 0)
    rc = strata_error(STRATA_EINTERNAL, "a configuration with no valid split");
  if (!rc)
    rc = simulate(cf, ch, K, blocking_p2p(S, cf), end, NULL, NULL, INFINITY);
  if (!rc) {
    p->stages = strata_calloc((size_t)K, sizeof *p->stages);
    p->ranks = strata_calloc((size_t)cf->p, sizeof *p->ranks);
    p->p2p_seconds = strata_calloc((size_t)K, sizeof *p->p2p_seconds);
    if (!p->stages || !p->ranks || !p->p2p_seconds)
      rc = strata_error(STRATA_ENOMEM, "out of memory");
  }
  for (int k = 0; k < K && !rc; k++) {
    strata_plan_stage_t *s = &p->stages[k];
    const st__family_t *f = fam_of(cf, cf->fs ? k : 0);
    s->layer_begin = ch[k].k0;
    s->layer_end = ch[k].k0 + ch[k].n;
    s->with_prologue = k == 0;
    s->with_epilogue = k == K - 1;
    s->nodes = f->nodes;
    s->gpus_per_node = f->gpn;
    s->rank = rank_of(cf, k);
    s->fwd_seconds = ch[k].part.fwd;
    s->bwd_seconds = ch[k].part.bwd;
    p->p2p_seconds[k] = ch[k].p2p;
    p->n_stages++;
  }
  for (int r = 0; r < cf->p && !rc; r++) {
    strata_plan_rank_t *pr = &p->ranks[r];
    int count[64];
    rc = rank_time(search_of(S, cf, r), cf, ch, K, r, &rt);
    if (rc) break;
    double host = 0;
    rank_memory(search_of(S, cf, r), cf, ch, r, &pr->mem, &host);
    if (host / GIB > p->host_memory_gib) { /* the file's figures in GiB */
      p->host_memory_gib = host / GIB;
      p->host_capacity_gib = host_capacity(search_of(S, cf, r)) / GIB;
    }
    in_flight(cf, r, count);
    pr->busy_seconds = rt.busy;
    pr->end_seconds = end[r];
    pr->sync_seconds = rt.sync;
    pr->exposed_sync = rt.exposed;
    pr->optimizer_seconds = rt.opt;
    for (int c = 0; c < (cf->v > 1 ? cf->v : 1); c++) {
      strata_plan_stage_t *s = &p->stages[chunk_at(cf, c, r)];
      s->in_flight = count[c];
      s->sync_seconds = rt.sync;
    }
  }
  strata_free(ch);
  strata_free(end);
  return rc;
}
