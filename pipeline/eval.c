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
 */
#include <math.h>
#include <string.h>

#include "pipeline/search.h"

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
  double p2p;         /* after it (to the next chunk) */
  double fill, drain; /* forwards / backwards (and p2p) of those before */
  int t;              /* devices of its stage */
} chunk_t;

int st__split_of(const st__search_t *S, const st__cfg_t *cf, int *n) {
  int L = S->L, p = cf->p, v = cf->v > 1 ? cf->v : 1;
  if (p < 1 || p > L || p * v > L || p * v > ST__MAX_PP || v > 64) return -1;
  if (cf->split) {
    memcpy(n, cf->split, sizeof *n * (size_t)p);
    return p;
  }
  if (v > 1) { /* interleaving: equal chunks */
    if (L % (p * v)) return -1;
    for (int k = 0; k < p * v; k++)
      n[k] = L / (p * v);
    return p * v;
  }
  if (p == 1) {
    n[0] = L;
    return 1;
  }
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
  n[0] = first;
  n[p - 1] = last;
  for (int s = 1; s < p - 1; s++)
    n[s] = rest / (p - 2);
  return p;
}

static const st__family_t *fam_of(const st__cfg_t *cf, int s) {
  return cf->fs && cf->fs[s] ? cf->fs[s] : cf->f;
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

static double boundary_bytes(const st__search_t *S, const st__family_t *f,
                             int layer) {
  const strata_graph_t *g = S->graphs[f->graph];
  int b = strata_graph_layer_block(g, layer);
  if (b < 0) return 0;
  double bytes = (double)strata_tensor_bytes(&g->tensors[g->blocks[b].output]);
  if (f->sp || S->o->scatter_gather) bytes /= f->t;
  return bytes;
}

static int build_chunks(st__search_t *S, const st__cfg_t *cf, chunk_t *ch,
                        int *K_out) {
  int n[ST__MAX_PP];
  int K = st__split_of(S, cf, n);
  if (K < 1) return 1; /* not a split Megatron-LM accepts */
  for (int k = 0, l = 0; k < K; l += n[k], k++) {
    const st__family_t *f = fam_of(cf, cf->fs ? k : 0);
    chunk_t *c = &ch[k];
    memset(c, 0, sizeof *c);
    c->k0 = l;
    c->n = n[k];
    c->t = f->t;
    if (K == 1) {
      c->part = f->only_part;
      continue;
    }
    if (k == 0) c->part = f->pro;
    if (k == K - 1) c->part = f->epi;
    st__layers_add(S, f, l, n[k], &c->part);
  }
  /* ZeRO-3: each chunk gathers its weights over the data-parallel group
   * before its forward and again before its backward, every micro-batch */
  if (S->zero >= 3 && cf->dp > 1) {
    const struct sync_model *sm = sync_model(S, cf->f->t, cf->dp);
    if (!sm) return strata_error(STRATA_ENOMEM, "out of memory");
    for (int k = 0; k < K; k++) {
      double ag = sm->lat[2] + sm->per_byte[2] * ch[k].part.w;
      ch[k].part.fwd += ag;
      ch[k].part.bwd += ag;
      ch[k].part.comm_fwd += ag;
      ch[k].part.comm_bwd += ag;
    }
  }
  /* p2p: ranks of chunk k's stage start at (k mod pp) x t x dp */
  for (int k = 0; k + 1 < K; k++) {
    const st__family_t *f = fam_of(cf, cf->fs ? k : 0);
    int w = f->t * cf->dp, a = (k % cf->p) * w, b = ((k + 1) % cf->p) * w;
    double bytes = boundary_bytes(S, f, ch[k].k0 + ch[k].n - 1);
    ch[k].p2p = p2p_between(S, bytes, a, b, w);
  }
  for (int k = 1; k < K; k++) {
    ch[k].fill = ch[k - 1].fill + ch[k - 1].part.fwd + ch[k - 1].p2p;
    ch[k].drain = ch[k - 1].drain + ch[k - 1].part.bwd + ch[k - 1].p2p;
  }
  *K_out = K;
  return 0;
}

/* ---- memory of a rank ---- */

/* In-flight micro-batches of each chunk on rank r at the end of its
 * warm-up: the first min(W_r + 1, m v) forwards of Megatron's order. */
static void in_flight(const st__cfg_t *cf, int r, int *count) {
  int p = cf->p, v = cf->v > 1 ? cf->v : 1, m = cf->m;
  for (int c = 0; c < v; c++)
    count[c] = 0;
  if (v == 1) {
    count[0] = p - r < m ? p - r : m;
    return;
  }
  int w = (p - r - 1) * 2 + (v - 1) * p + 1;
  if (w > m * v) w = m * v;
  for (int i = 0; i < w; i++)
    count[(i % (p * v)) / p]++;
}

/* NCCL communicators a rank joins (Megatron-LM's process groups that run
 * a collective: docs/cost-model.md), as bytes. */
static double nccl_bytes(const st__search_t *S, const st__cfg_t *cf, int r) {
  const strata_perf_t *pf = strata_cluster_perf(S->c);
  int t = cf->f->t, p = cf->p, dp = cf->dp, world = t * p * dp;
  double big = pf->nccl_comm_bytes, pair = pf->nccl_pair_bytes, b = 0;
  if (world <= 1) return 0;
  b += big; /* the world group */
  if (t > 1) b += t > 2 ? big : pair;
  if (dp > 1) b += dp > 2 ? big : pair;
  if (p > 1) {
    if (cf->v > 1) /* one 2-rank communicator per neighbour */
      b += (p > 2 ? 2 : 1) * pair;
    else
      b += p > 2 ? big : pair;
    /* a tied embedding: its gradient is summed over first and last */
    if ((r == 0 || r == p - 1) && S->tied[cf->f->graph]) b += pair;
  }
  if (S->zero >= 1) b += big; /* the distributed optimizer's instance */
  return b;
}

static void rank_memory(st__search_t *S, const st__cfg_t *cf, const chunk_t *ch,
                        int r, strata_mem_items_t *m) {
  const strata_perf_t *pf = strata_cluster_perf(S->c);
  int p = cf->p, v = cf->v > 1 ? cf->v : 1, dp = cf->dp, z = S->zero;
  int count[64];
  double w = 0, g = 0, o = 0, act = 0, tr = 0;
  in_flight(cf, r, count);
  for (int c = 0; c < v; c++) {
    const st__part_t *x = &ch[c * p + r].part;
    w += x->w;
    g += x->g;
    o += x->o;
    act += count[c] * x->act + x->fixed_act;
    if (x->transient > tr) tr = x->transient;
  }
  memset(m, 0, sizeof *m);
  /* ZeRO shards over the outer replicas (Megatron's distributed
   * optimizer: optimizer states, z = 1) */
  m->weights = z >= 3 ? w / dp : w;
  m->gradients = z >= 2 ? g / dp : g;
  m->optimizer = z >= 1 ? o / dp : o;
  if (S->o->framework == STRATA_FRAMEWORK_DEEPSPEED) {
    /* bf16 .grad tensors live next to the fp32 accumulation buffer
     * (DeepSpeed's BF16_Optimizer) */
    m->gradients += 2.0 * (w / 2.0) / (z >= 2 ? dp : 1);
    if (z >= 1 && p == 1) m->buckets = 2.0 * 5e8; /* reduce_bucket_size */
    if (z >= 3) m->buckets += 2.0 * 5e7;          /* prefetch bucket */
  }
  m->activations = act;
  m->transient = tr;
  /* ZeRO-3 gathers each weight whole while its op runs (the probes, with
   * no replicas, hold none): the largest one on the device */
  if (z >= 3 && dp > 1) m->transient += S->max_param[cf->f->graph] / cf->f->t;
  m->context = pf->context_bytes;
  m->workspace = pf->workspace_bytes;
  if (S->o->tp_comm_overlap) m->workspace += 3 * 32.0 * 1048576.0;
  m->nccl = nccl_bytes(S, cf, r);
  m->fragmentation = 0.15 * (act + tr);
  m->calibration = strata_cluster_calibration(S->c)->memory_bytes;
  m->total = m->weights + m->gradients + m->optimizer + m->activations +
             m->transient + m->context + m->workspace + m->nccl + m->buckets +
             m->fragmentation + m->calibration;
}

/* ---- time ---- */

typedef struct {
  double busy, compute, tpc; /* all micro-batches: fwd + bwd, of which */
  double fwd1, bwd1;         /* one micro-batch, all its chunks */
  double sync, exposed, gather, opt;
  double fill, drain; /* lower bound terms */
} rank_time_t;

/* Megatron-LM overlaps p2p only with interleaving (on by default there);
 * its non-interleaved schedule sends and receives in one blocking batch. */
static int blocking_p2p(const st__search_t *S, const st__cfg_t *cf) {
  if (cf->v <= 1 && S->o->megatron) return 1;
  if (S->o->overlap_p2p >= 0) return !S->o->overlap_p2p;
  return cf->v <= 1;
}

static double params_of(const st__search_t *S, const st__cfg_t *cf, double w) {
  return w / S->param_bytes[cf->f->graph];
}

static int rank_time(st__search_t *S, const st__cfg_t *cf, const chunk_t *ch,
                     int K, int r, rank_time_t *rt) {
  const strata_perf_t *pf = strata_cluster_perf(S->c);
  int p = cf->p, v = cf->v > 1 ? cf->v : 1, dp = cf->dp, z = S->zero;
  int blocking = blocking_p2p(S, cf);
  double w = 0, g = 0, insync = 0, comm = 0;
  memset(rt, 0, sizeof *rt);
  for (int c = 0; c < v; c++) {
    int k = c * p + r;
    const st__part_t *x = &ch[k].part;
    double send = 0;
    if (blocking) {
      if (k + 1 < K) send += ch[k].p2p;
      if (k > 0) send += ch[k - 1].p2p;
    }
    rt->fwd1 += x->fwd;
    rt->bwd1 += x->bwd;
    rt->busy += cf->m * (x->fwd + x->bwd + send);
    comm += cf->m * (x->comm_fwd + x->comm_bwd);
    w += x->w;
    g += x->g;
    insync += x->sync;
  }
  rt->tpc = comm;
  rt->compute = cf->m * (rt->fwd1 + rt->bwd1) - comm;
  rt->fill = ch[r].fill; /* chunks before this rank's first */
  rt->drain = ch[r].drain;
  /* gradient synchronisation over the data-parallel group */
  double params = params_of(S, cf, w);
  rt->sync = insync;
  if (dp > 1) {
    const struct sync_model *sm = sync_model(S, cf->f->t, dp);
    if (!sm) return strata_error(STRATA_ENOMEM, "out of memory");
    double bucket = 4e7 > 1e6 * dp ? 4e7 : 1e6 * dp;
    int bucketed = S->o->overlap_grad_reduce && r == 0;
    double nb = bucketed ? ceil(params / bucket) : 1;
    if (nb < 1) nb = 1;
    int k = z >= 1 ? 1 : 0;
    rt->sync += nb * sm->lat[k] + sm->per_byte[k] * g;
    rt->exposed = rt->sync;
    if (bucketed) {
      double e = rt->sync - rt->bwd1, last = rt->sync / nb;
      rt->exposed = e > last ? e : last;
    }
    if (z == 1 || z == 2) { /* the updated parameters gathered back */
      double ag = nb * sm->lat[2] + sm->per_byte[2] * (params * 2.0);
      rt->gather = ag;
      if (S->o->overlap_param_gather) {
        double e = ag - rt->fwd1, last = ag / nb;
        rt->gather = e > last ? e : last;
      }
    }
  } else {
    rt->exposed = rt->sync;
  }
  /* Adam over the rank's shard: read gradient, master weight, two
   * moments (16 B), write those three (12 B) and the bf16 weight (2 B) */
  double shard = z >= 1 ? params / dp : params;
  rt->opt = strata_perf_stream(pf, 30.0 * shard, 4);
  return 0;
}

/* ---- the step ---- */

static int simulate(const st__cfg_t *cf, const chunk_t *ch, int K, int blocking,
                    double *rank_end) {
  double fwd[ST__MAX_PP], bwd[ST__MAX_PP], p2p[ST__MAX_PP];
  strata_sched_t sc;
  for (int k = 0; k < K; k++) {
    fwd[k] = ch[k].part.fwd;
    bwd[k] = ch[k].part.bwd;
    p2p[k] = ch[k].p2p;
  }
  memset(&sc, 0, sizeof sc);
  sc.pp = cf->p;
  sc.vpp = cf->v > 1 ? cf->v : 1;
  sc.n_micro = cf->m;
  sc.fwd = fwd;
  sc.bwd = bwd;
  sc.p2p = K > 1 ? p2p : NULL;
  sc.blocking_p2p = blocking;
  int rc = strata_sched_run(&sc);
  if (!rc) memcpy(rank_end, sc.rank_end, sizeof *rank_end * (size_t)cf->p);
  strata_sched_free(&sc);
  return rc;
}

/* Scratch arrays for a configuration, kept across calls: the search costs
 * a hundred thousand configurations and must not allocate for each. */
struct st__scratch {
  chunk_t ch[ST__MAX_PP];
  double end[ST__MAX_PP];
  rank_time_t rt[ST__MAX_PP];
};

static double step_of(const st__search_t *S, const st__cfg_t *cf,
                      const rank_time_t *rt, double *end, int exact,
                      strata_step_items_t *it);

/* Peak memory of rank r of a pipeline without interleaving that holds
 * layers [k, k + n) (with the prologue on rank 0 and the epilogue on the
 * last rank), counted as st__cfg_cost_cut counts it: the search drops the
 * splits whose first, last or middle rank cannot fit before costing them
 * (space.c).  It grows with n at a fixed start (every item adds). */
double st__rank_peak(st__search_t *S, const st__cfg_t *cf, int r, int k,
                     int n) {
  chunk_t *ch = S->scratch->ch;
  const st__family_t *f = cf->f;
  strata_mem_items_t m;
  memset(&ch[r], 0, sizeof ch[r]);
  ch[r].k0 = k;
  ch[r].n = n;
  ch[r].t = f->t;
  if (cf->p == 1) {
    ch[r].part = f->only_part;
  } else {
    if (r == 0) ch[r].part = f->pro;
    if (r == cf->p - 1) ch[r].part = f->epi;
    st__layers_add(S, f, k, n, &ch[r].part);
  }
  rank_memory(S, cf, ch, r, &m);
  return m.total;
}

void st__eval_free(st__search_t *S) {
  strata_free(S->scratch);
  S->scratch = NULL;
}

int st__cfg_cost(st__search_t *S, const st__cfg_t *cf, int exact,
                 st__cost_t *out) {
  return st__cfg_cost_cut(S, cf, exact, INFINITY, out);
}

int st__eval_scratch(st__search_t *S) {
  if (!S->scratch && !(S->scratch = strata_malloc(sizeof *S->scratch)))
    return strata_error(STRATA_ENOMEM, "out of memory");
  return 0;
}

int st__cfg_cost_cut(st__search_t *S, const st__cfg_t *cf, int exact,
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
    rc = rank_time(S, cf, ch, K, r, &rt[r]);
  if (rc) goto done;
  out->step = step_of(S, cf, rt, end, 0, &out->items);
  if (!exact && out->step >= cutoff) { /* its memory is not needed */
    out->fits = -1;
    S->bounded++;
    goto done;
  }
  out->peak = 0;
  for (int r = 0; r < cf->p; r++) {
    strata_mem_items_t m;
    rank_memory(S, cf, ch, r, &m);
    if (m.total > out->peak) out->peak = m.total, out->worst_rank = r;
  }
  out->fits = out->peak <= S->budget;
  if (exact) {
    rc = simulate(cf, ch, K, blocking_p2p(S, cf), end);
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

/* The step from each rank's times: exactly, from when the schedule ends
 * each rank; or bounded (no schedule run) by each rank's own fill and
 * work, and the makespan by the fill, work and drain around any rank. */
static double step_of(const st__search_t *S, const st__cfg_t *cf,
                      const rank_time_t *rt, double *end, int exact,
                      strata_step_items_t *it) {
  double last = -1, opt = 0, gather = 0, mk = 0;
  int rl = 0;
  for (int r = 0; r < cf->p; r++) {
    if (!exact) {
      double around = rt[r].fill + rt[r].busy + rt[r].drain;
      mk = around > mk ? around : mk;
      end[r] = rt[r].fill + rt[r].busy;
    }
    if (end[r] + rt[r].exposed > last) last = end[r] + rt[r].exposed, rl = r;
    if (rt[r].opt > opt) opt = rt[r].opt;
    if (rt[r].gather > gather) gather = rt[r].gather;
  }
  if (!exact && mk > last) {
    last = mk;
    end[rl] = mk - rt[rl].exposed;
  }
  it->compute = rt[rl].compute;
  it->tp_comm = rt[rl].tpc;
  it->bubble = end[rl] - rt[rl].compute - rt[rl].tpc;
  it->dp_sync = rt[rl].exposed;
  it->param_gather = gather;
  it->optimizer = opt;
  it->overhead = strata_cluster_calibration(S->c)->step_seconds;
  return last + opt + gather + it->overhead;
}

/* ---- the plan's fields ---- */

int st__cfg_fill_plan(st__search_t *S, const st__cfg_t *cf, strata_plan_t *p) {
  chunk_t *ch = strata_calloc(ST__MAX_PP, sizeof *ch);
  double *end = strata_calloc(ST__MAX_PP, sizeof *end);
  rank_time_t rt;
  int K = 0, rc = ch && end ? 0 : strata_error(STRATA_ENOMEM, "out of memory");
  if (!rc && (rc = build_chunks(S, cf, ch, &K)) > 0)
    rc = strata_error(STRATA_EINTERNAL, "a configuration with no valid split");
  if (!rc) rc = simulate(cf, ch, K, blocking_p2p(S, cf), end);
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
    s->rank = k % cf->p;
    s->fwd_seconds = ch[k].part.fwd;
    s->bwd_seconds = ch[k].part.bwd;
    p->p2p_seconds[k] = ch[k].p2p;
    p->n_stages++;
  }
  for (int r = 0; r < cf->p && !rc; r++) {
    strata_plan_rank_t *pr = &p->ranks[r];
    int count[64];
    rc = rank_time(S, cf, ch, K, r, &rt);
    if (rc) break;
    rank_memory(S, cf, ch, r, &pr->mem);
    in_flight(cf, r, count);
    pr->busy_seconds = rt.busy;
    pr->end_seconds = end[r];
    pr->sync_seconds = rt.sync;
    pr->exposed_sync = rt.exposed;
    pr->optimizer_seconds = rt.opt;
    for (int c = 0; c < (cf->v > 1 ? cf->v : 1); c++) {
      strata_plan_stage_t *s = &p->stages[c * cf->p + r];
      s->in_flight = count[c];
      s->sync_seconds = rt.sync;
    }
  }
  strata_free(ch);
  strata_free(end);
  return rc;
}
