/*
 * cost.c - the cost model of one operator under one strategy
 * (docs/cost-model.md states every formula and its source).
 *
 * Memory is counted exactly: each tensor's bytes divided by the product of
 * the mesh axes that shard it; replicated and partial tensors whole.
 * Parameter states follow the precision recipe and ZeRO stage, sharded
 * over the axes that replicate the parameter while splitting the work (its
 * data-parallel axes) times the outer data parallelism.  Communication
 * uses topo/'s alpha-beta collectives per mesh axis, and as NCCL runs
 * them across several axes (one flat ring, or an all-reduce's tree).
 * Time is a roofline per kernel on the device's share of the op
 * (topo/perf.c): matrix multiplications by their (m, n, k), fused
 * attention by its FLOPs, everything else by the bytes it reads and
 * writes.
 *
 * Beyond the mesh: expert parameters are split over ep_outer data-parallel
 * replicas too (each rank holding its share of the experts and receiving
 * the token copies of ep_outer replicas for them), exchanged all-to-all
 * over ep_link; their states are sharded and synchronised over the
 * outer_dp / ep_outer replicas that hold the same experts.  With FP8 the
 * layers' linear GEMMs run at the FP8 peak, their saved inputs take a byte
 * per element and each weight keeps FP8 copies (row- and column-wise) as
 * Transformer Engine does.
 */
#include <math.h>
#include <string.h>

#include "intraop/cost.h"

static double tensor_bytes(const strata_graph_t *g, int t) {
  return (double)strata_tensor_bytes(&g->tensors[t]);
}

/* Is t an attention matrix ([..., s, s]), the part selective recompute
 * drops (Korthikanti et al. 2022, section 4.2)? */
static int is_attention_matrix(const strata_graph_t *g, int t) {
  const strata_tensor_t *x = &g->tensors[t];
  return x->ndim >= 2 && x->shape[x->ndim - 1] == g->seq_len &&
         x->shape[x->ndim - 2] == g->seq_len && g->seq_len > 1;
}

/* Collective over a list of groups (inner first): an all-reduce, all-
 * gather or reduce-scatter as NCCL runs it across the levels (one flat
 * ring, or an all-reduce's tree: strata_coll_time_levels); an all-to-all
 * level by level, each moving the data left after the levels inside it. */
static double hier(strata_coll_t coll, double bytes, int n_levels,
                   const int *size, const strata_link_t *link) {
  double t = 0, s = bytes;
  if (coll == STRATA_COLL_ALLREDUCE || coll == STRATA_COLL_ALLGATHER ||
      coll == STRATA_COLL_REDUCESCATTER)
    return strata_coll_time_levels(coll, bytes, n_levels, size, link);
  for (int i = 0; i < n_levels; i++) {
    if (size[i] <= 1) continue;
    t += strata_coll_time(coll, s, size[i], &link[i]);
    s /= size[i];
  }
  return t;
}

/* Does the op's output carry pdim p?  Then a parameter that p does not
 * index gets its gradient summed over p: partial on an axis split by p.
 * (A row-parallel bias is not: its gradient sums the replicated output
 * gradient over tokens, the same on every device.) */
static int in_output(const st__opdims_t *d, int p) {
  for (int i = d->n_in; i < d->n_slots; i++)
    for (int k = 0; k < STRATA_MAX_DIMS; k++)
      if (d->map[i][k] == p) return 1;
  return 0;
}

/* Data-parallel groups of a parameter under s: the mesh axes on which it
 * is replicated while its gradient is summed over the axis's split, inner
 * axis first, then the outer data parallelism.  Returns the level count;
 * *ways the product. */
/* Replicas of the stage holding the same copy of a parameter: the outer
 * data parallelism, or for an expert's parameter the expert data-parallel
 * replicas (the others hold other experts). */
static int outer_ways(const st__cost_ctx_t *c, int expert) {
  int od = c->o->outer_dp > 1 ? c->o->outer_dp : 1;
  int eo = c->o->ep_outer > 1 ? c->o->ep_outer : 1;
  return expert && od >= eo ? od / eo : od;
}

static int dp_levels(const st__cost_ctx_t *c, const st__opdims_t *d,
                     const st__strat_t *s, const st__place_t *pp, int expert,
                     int *size, strata_link_t *link, int *ways) {
  int n = 0;
  *ways = 1;
  for (int a = c->m->ndim - 1; a >= 0; a--) {
    if (pp->kind[a] != ST__PL_R || s->axis[a] == ST__REP) continue;
    if (!in_output(d, s->axis[a])) continue;
    size[n] = c->m->shape[a];
    link[n++] = c->m->axis[a];
    *ways *= c->m->shape[a];
  }
  int od = outer_ways(c, expert);
  if (od > 1) {
    size[n] = od;
    link[n++] = c->o->outer_link;
    *ways *= od;
  }
  return n;
}

/* Over how many replicas ZeRO shards a parameter's states.  Megatron-LM's
 * distributed optimizer shards over its data-parallel group only (with
 * context parallelism: data x context parallel): the outer replicas, the
 * axes that split the batch and the context-parallel axis, not a
 * tensor-parallel axis that splits the sequence (whose layernorm gradients
 * it all-reduces but whose states it keeps whole); elsewhere every replica
 * counts. */
static int zero_ways(const st__cost_ctx_t *c, const st__opdims_t *d,
                     const st__strat_t *s, const st__place_t *pp, int expert,
                     int ways) {
  if (c->o->objective != STRATA_OBJ_MEGATRON) return ways;
  int z = outer_ways(c, expert);
  for (int a = 0; a < c->m->ndim; a++) {
    int p = s->axis[a];
    if (pp->kind[a] != ST__PL_R || p == ST__REP) continue;
    if (!strcmp(d->name[p], "b") || !strcmp(d->name[p], "dp") ||
        (a == 0 && c->o->cp > 1))
      z *= c->m->shape[a];
  }
  return z;
}

/* Transformer Engine runs a layer's linear GEMMs in FP8 or FP4 (the
 * embedding, the router and the output layer stay in 16 bits), by the
 * recipe's row (intraop/lowp.c). */
static int fp8_gemm(const st__cost_ctx_t *c, const strata_op_t *op) {
  return c->o->fp8 && op->block >= 0 &&
         (op->kind == STRATA_OP_LINEAR || op->kind == STRATA_OP_GROUPED_LINEAR);
}

double st__lowp_cast_time(const strata_perf_t *pf, const strata_lowp_t *r,
                          double elems) {
  if (!(elems > 0)) return 0;
  double cast = strata_perf_stream(pf, (2.0 + 2.0 * r->operand) * elems, 1);
  double amax =
      r->amax_read > 0 ? strata_perf_stream(pf, r->amax_read * elems, 1) : 0;
  return cast + amax;
}

/* The recipe of the stage's narrow GEMMs (delayed scaling when a caller
 * set fp8 to 1 without naming one: the same row). */
static const strata_lowp_t *lowp(const st__cost_ctx_t *c) {
  const strata_lowp_t *r = strata_lowp(c->o->fp8);
  return r ? r : strata_lowp(STRATA_LOWP_DELAYED);
}

/* A GEMM of the op: narrow by the recipe where the op's are, else 16-bit.
 * The 16-bit operand it casts (cast: the forward's input, the backward's
 * output gradient, once for the two GEMMs that use it) goes through
 * Transformer Engine's fused cast-transpose: a read of its 2 bytes and
 * the writes of its row- and column-wise copies at the recipe's operand
 * bytes (the block recipes quantise both from the one read), in one
 * kernel; current scaling first reads it once more for the amax.  The
 * weights' casts run once a step (TE caches them from the first
 * micro-batch) and are left out. */
static double gemm_of(const st__cost_ctx_t *c, const strata_op_t *op,
                      double batch, double m, double n, double k, int cast) {
  const strata_perf_t *pf = &c->o->perf;
  if (!fp8_gemm(c, op)) return strata_perf_gemm(pf, batch, m, n, k, 2);
  const strata_lowp_t *r = lowp(c);
  double q = cast ? st__lowp_cast_time(pf, r, batch * m * k) : 0;
  return strata_perf_gemm_narrow(pf, batch, m, n, k, r->operand, r->fp4) + q;
}

/* The states of the parameter in slot of op; the experts' also apart. */
static void param_states(const st__cost_ctx_t *c, const strata_op_t *op,
                         int expert, int slot, double numel, double full,
                         int zw, double wb, st__op_cost_t *r) {
  const strata_stage_opts_t *o = c->o;
  double gb = o->recipe == STRATA_RECIPE_MEGATRON ? 4.0 : 2.0, ob = 12.0;
  int z = o->zero_stage, od = outer_ways(c, expert);
  double w = wb * numel / (z >= 3 ? zw : 1), g = gb * numel / (z >= 2 ? zw : 1),
         opt = ob * numel / (z >= 1 ? zw : 1);
  /* FP8/FP4: Transformer Engine keeps the weight's row- and column-wise
   * quantised copies (a byte each in FP8) from one micro-batch to the
   * next */
  double copies = fp8_gemm(c, op) && slot == 1 ? lowp(c)->weight_copies : 0;
  w += copies * numel;
  r->weights += w;
  r->grads += g;
  r->optimizer += opt;
  if (expert) {
    r->expert_w += w;
    r->expert_g += g;
    r->expert_o += opt;
  }
  /* unique: every state once over the stage, the ZeRO-sharded ones also
   * spread over the outer replicas */
  r->unique += wb * full / (z >= 3 ? od : 1) + gb * full / (z >= 2 ? od : 1) +
               ob * full / (z >= 1 ? od : 1);
  r->unique += copies * full;
}

static void param_cost(const st__cost_ctx_t *c, const strata_op_t *op,
                       const st__opdims_t *d, const st__strat_t *s, int slot,
                       st__op_cost_t *r) {
  const strata_stage_opts_t *o = c->o;
  const strata_tensor_t *t = &c->g->tensors[d->tensor[slot]];
  st__place_t pp;
  int size[STRATA_MESH_MAX_DIMS + 1], ways;
  strata_link_t link[STRATA_MESH_MAX_DIMS + 1];
  int expert = op->kind == STRATA_OP_GROUPED_LINEAR;
  double eo = expert && o->ep_outer > 1 ? o->ep_outer : 1;
  st__placement(d, c->m, s, slot, &pp);
  double numel = (double)strata_tensor_numel(t) / st__shards(c->m, &pp) / eo;
  double wb = strata_dtype_size(t->dtype);
  double gb = o->recipe == STRATA_RECIPE_MEGATRON ? 4.0 : 2.0;
  int lv = dp_levels(c, d, s, &pp, expert, size, link, &ways);
  int z = o->zero_stage, zw = zero_ways(c, d, s, &pp, expert, ways);
  param_states(c, op, expert, slot, numel, (double)strata_tensor_numel(t) / eo,
               zw, wb, r);
  if (lv == 0) return;
  /* ZeRO-3 gathers the whole weight into a buffer while the op runs */
  if (z >= 3) r->transient += wb * numel;
  /* gradient synchronisation once per step; ZeRO-3 also gathers the
   * parameters before forward and backward of every micro-batch */
  /* frameworks synchronise gradients in buckets (PyTorch DDP: 25 MB), so
   * a small tensor pays only its share of a bucket's latency */
  strata_link_t bucket[STRATA_MESH_MAX_DIMS + 1];
  double share = gb * numel / 25e6 < 1 ? gb * numel / 25e6 : 1;
  for (int i = 0; i < lv; i++) {
    bucket[i] = link[i];
    bucket[i].latency *= share;
  }
  double sync = hier(STRATA_COLL_ALLREDUCE, gb * numel, lv, size, bucket);
  if (z >= 3) {
    /* ZeRO-3 gathers each layer's parameters when it runs, before forward
     * and again before backward of every micro-batch: no bucketing */
    double gather = hier(STRATA_COLL_ALLGATHER, wb * numel, lv, size, link);
    r->comm_fwd += gather;
    r->comm_bwd += gather;
  }
  if (z >= 2) {
    /* a sharded gradient cannot accumulate whole: it is reduce-scattered
     * after every micro-batch's backward (DeepSpeed ZeRO-2/3, Megatron-
     * FSDP), not once per step */
    r->comm_bwd +=
        hier(STRATA_COLL_REDUCESCATTER, gb * numel, lv, size, bucket);
    return;
  }
  r->comm += sync;
  r->sync += sync;
}

static double slot_bytes(const st__cost_ctx_t *c, const st__opdims_t *d,
                         const st__strat_t *s, int slot) {
  st__place_t p;
  st__placement(d, c->m, s, slot, &p);
  return tensor_bytes(c->g, d->tensor[slot]) / st__shards(c->m, &p);
}

static int saves_slot(const st__opdims_t *d, unsigned sv, int i) {
  unsigned bit = i < d->n_in ? STRATA_SAVE_IN(i) : STRATA_SAVE_OUT(i - d->n_in);
  return (sv & bit) != 0;
}

/* How much more of slot's tensor the most loaded rank holds than the
 * average: the imbalance factor for token copies grouped by expert. */
static double slot_factor(const st__cost_ctx_t *c, const st__opdims_t *d,
                          int slot) {
  if (c->moe_factor <= 1) return 1;
  return st__is_grouped(c->g, d->tensor[slot]) ? c->moe_factor : 1;
}

/* Bytes of a saved slot: an FP8 GEMM keeps its input in FP8 (Transformer
 * Engine saves the quantised copy it multiplied by, a byte per element). */
static double saved_slot_bytes(const st__cost_ctx_t *c, const strata_op_t *op,
                               const st__opdims_t *d, const st__strat_t *s,
                               int slot) {
  double b = slot_bytes(c, d, s, slot) * slot_factor(c, d, slot);
  if (slot == 0 && fp8_gemm(c, op))
    b *= lowp(c)->saved / strata_dtype_size(c->g->tensors[d->tensor[0]].dtype);
  if (slot < op->n_in) b *= strata_op_saved_scale(c->g, op, slot);
  return b;
}

/* Saved activations of one micro-batch.  Slots in `skip` hold storage an
 * earlier op of the stage already saves (counted once, there). */
static void saved_cost(const st__cost_ctx_t *c, const strata_op_t *op,
                       const st__opdims_t *d, const st__strat_t *s,
                       unsigned skip, st__op_cost_t *r) {
  unsigned sv = strata_op_saves(c->g, op);
  int selective = c->o->recompute == STRATA_RECOMPUTE_SELECTIVE &&
                  !c->o->recompute_modules; /* else by module (build.c) */
  for (int i = 0; i < d->n_slots; i++) {
    const strata_tensor_t *t = &c->g->tensors[d->tensor[i]];
    if (!saves_slot(d, sv, i) || (skip & (1u << i))) continue;
    if (t->kind != STRATA_TENSOR_ACTIVATION) continue;
    if (selective && is_attention_matrix(c->g, d->tensor[i])) continue;
    r->act += saved_slot_bytes(c, op, d, s, i);
  }
  if (op->n_out < 1) return;
  int o0 = d->n_in;
  st__place_t p;
  st__placement(d, c->m, s, o0, &p);
  double extra = (double)strata_op_extra_saved(c->g, op);
  double mask = (sv & STRATA_SAVE_MASK)
                    ? (double)strata_tensor_numel(&c->g->tensors[d->tensor[o0]])
                    : 0;
  if (selective && is_attention_matrix(c->g, d->tensor[o0])) extra -= mask;
  if (skip & (1u << 31)) extra = 0; /* in a recomputed module */
  /* the mask and flash attention's log-sum-exp split like the output */
  if (extra > 0) r->act += extra / st__shards(c->m, &p);
}

/* The modifier's collectives on axis a, one micro-batch: the
 * sequence-parallel linear (and grouped GEMM) gathers its input in forward
 * and again in backward and reduce-scatters the input gradient; dispatch
 * and combine exchange the token copies all-to-all, forward and backward.
 * (Ring attention's passes are charged once its compute is known.) */
static void sp_comm(const st__cost_ctx_t *c, const strata_op_t *op,
                    const st__opdims_t *d, const st__strat_t *s, int a,
                    st__op_cost_t *r) {
  int n = c->m->shape[a];
  const strata_link_t *l = &c->m->axis[a];
  if (op->kind == STRATA_OP_MOE_DISPATCH || op->kind == STRATA_OP_MOE_COMBINE) {
    int g = op->kind == STRATA_OP_MOE_DISPATCH ? d->n_in : 0;
    double b = slot_bytes(c, d, s, g) * slot_factor(c, d, g);
    r->comm_fwd += strata_coll_time(STRATA_COLL_ALLTOALL, b, n, l);
    r->comm_bwd += strata_coll_time(STRATA_COLL_ALLTOALL, b, n, l);
    return;
  }
  if (op->kind == STRATA_OP_FLASH_ATTENTION) return;
  double full = slot_bytes(c, d, s, 0) * slot_factor(c, d, 0) * n;
  r->comm_fwd += strata_coll_time(STRATA_COLL_ALLGATHER, full, n, l);
  r->comm_bwd += strata_coll_time(STRATA_COLL_ALLGATHER, full, n, l) +
                 strata_coll_time(STRATA_COLL_REDUCESCATTER, full, n, l);
  r->transient += full;
}

/* Collectives inside the op, one micro-batch: the modifier's on each
 * axis; vocabulary-parallel cross-entropy all-reduces one fp32 number per
 * token three times in forward (the max, the sum of exponentials and the
 * target's logit); dispatch and combine exchange the copies with the
 * expert-parallel replicas beyond the mesh (all-to-all: ep_link's latency
 * plus the device's copies over its bandwidth). */
static void own_comm(const st__cost_ctx_t *c, const strata_op_t *op,
                     const st__opdims_t *d, const st__strat_t *s,
                     st__op_cost_t *r) {
  for (int a = 0; a < c->m->ndim; a++) {
    int n = c->m->shape[a];
    const strata_link_t *l = &c->m->axis[a];
    if (s->sp[a]) sp_comm(c, op, d, s, a, r);
    if (op->kind == STRATA_OP_CROSS_ENTROPY && s->axis[a] != ST__REP &&
        d->map[0][2] == s->axis[a]) {
      const strata_tensor_t *lg = &c->g->tensors[op->in[0]];
      double tokens = (double)(lg->shape[0] * lg->shape[1]);
      r->comm_fwd +=
          3 * strata_coll_time(STRATA_COLL_ALLREDUCE, 4 * tokens, n, l);
    }
  }
  int eo = c->o->ep_outer;
  if (eo > 1 && (op->kind == STRATA_OP_MOE_DISPATCH ||
                 op->kind == STRATA_OP_MOE_COMBINE)) {
    int g = op->kind == STRATA_OP_MOE_DISPATCH ? d->n_in : 0;
    double b = slot_bytes(c, d, s, g) * slot_factor(c, d, g);
    double t = c->o->ep_link.latency + b / c->o->ep_link.bandwidth;
    r->comm_fwd += t;
    r->comm_bwd += t;
  }
}

/* Ring attention (the modifier on flash attention, context parallelism's
 * p2p variant): n - 1 steps, each passing the local keys and values to the
 * next rank (backward: also their gradients) while the attention of the
 * block in hand runs; what a step's transfer takes beyond its block's
 * compute is exposed. */
static void ring_comm(const st__cost_ctx_t *c, const strata_op_t *op,
                      const st__opdims_t *d, const st__strat_t *s,
                      st__op_cost_t *r) {
  if (op->kind != STRATA_OP_FLASH_ATTENTION) return;
  for (int a = 0; a < c->m->ndim; a++) {
    if (!s->sp[a]) continue;
    int n = c->m->shape[a];
    const strata_link_t *l = &c->m->axis[a];
    double kv = slot_bytes(c, d, s, 1) + slot_bytes(c, d, s, 2);
    double tf = strata_coll_time(STRATA_COLL_P2P, kv, 2, l);
    double tb = strata_coll_time(STRATA_COLL_P2P, 2 * kv, 2, l);
    double ef = tf - r->fwd / n, eb = tb - r->bwd / n;
    r->cp_fwd += (n - 1) * (ef > 0 ? ef : 0);
    r->cp_bwd += (n - 1) * (eb > 0 ? eb : 0);
  }
  r->comm_fwd += r->cp_fwd;
  r->comm_bwd += r->cp_bwd;
}

/* Local size of pdim p: its size over the mesh axes that split it. */
static double local_dim(const st__cost_ctx_t *c, const st__opdims_t *d,
                        const st__strat_t *s, int p) {
  double v = (double)d->size[p];
  for (int a = 0; a < c->m->ndim; a++)
    if (s->axis[a] == p) v /= c->m->shape[a];
  return v;
}

static int pdim_named(const st__opdims_t *d, const char *name) {
  for (int p = 0; p < d->n_pdims; p++)
    if (!strcmp(d->name[p], name)) return p;
  return -1;
}

/* Bytes of the activation slots (inputs and outputs) on one device (on
 * the most loaded one for token copies). */
static double act_bytes(const st__cost_ctx_t *c, const st__opdims_t *d,
                        const st__strat_t *s) {
  double b = 0;
  for (int i = 0; i < d->n_slots; i++)
    if (c->g->tensors[d->tensor[i]].kind == STRATA_TENSOR_ACTIVATION)
      b += slot_bytes(c, d, s, i) * slot_factor(c, d, i);
  return b;
}

/* A linear layer: forward Y = X W^T (m x n, inner k), backward the input
 * gradient (m x k, inner n) and the weight gradient (n x k, inner m). */
static void time_linear(const st__cost_ctx_t *c, const strata_op_t *op,
                        const st__opdims_t *d, const st__strat_t *s,
                        st__op_cost_t *r) {
  int pn = d->pdim_n, pk = pdim_named(d, "k");
  double m = 1, n = local_dim(c, d, s, pn), k = local_dim(c, d, s, pk);
  for (int p = 0; p < d->n_pdims; p++)
    if (p != pn && p != pk) m *= local_dim(c, d, s, p);
  r->gemm_fwd = gemm_of(c, op, 1, m, n, k, 1);
  r->gemm_bwd = gemm_of(c, op, 1, m, k, n, 1) + gemm_of(c, op, 1, n, k, m, 0);
  r->fwd = r->gemm_fwd;
  r->bwd = r->gemm_bwd;
}

/* Grouped GEMMs: each of the rank's experts (E over the axes splitting
 * them and the expert-parallel replicas beyond) multiplies the copies it
 * receives (those of its replica's tokens times the ep_outer replicas
 * sending to it, times the imbalance) by its [n, k] weight.  Transformer
 * Engine runs them as one cuBLAS GEMM an expert, launched one by one over
 * its compute streams ("for now, we only have multi-stream cublas
 * backend": te_general_grouped_gemm; four streams,
 * nvte_get_num_compute_streams): the wave term sees the tiles of at most
 * four experts at once, and each expert pays its launch. */
#define ST__GROUPED_STREAMS 4.0

static double grouped_at(const st__cost_ctx_t *c, const strata_op_t *op,
                         double E, double m, double n, double k, int cast) {
  const strata_perf_t *pf = &c->o->perf;
  double b = E < ST__GROUPED_STREAMS ? E : ST__GROUPED_STREAMS;
  return E / b * gemm_of(c, op, b, m, n, k, cast) +
         (E - E / b) * pf->launch_seconds;
}

static void time_grouped(const st__cost_ctx_t *c, const strata_op_t *op,
                         const st__opdims_t *d, const st__strat_t *s,
                         st__op_cost_t *r) {
  double eo = c->o->ep_outer > 1 ? c->o->ep_outer : 1;
  double E = local_dim(c, d, s, pdim_named(d, "e")) / eo;
  double m = local_dim(c, d, s, pdim_named(d, "b")) *
             local_dim(c, d, s, pdim_named(d, "c")) * eo * slot_factor(c, d, 0);
  double n = local_dim(c, d, s, d->pdim_n),
         k = local_dim(c, d, s, pdim_named(d, "k"));
  if (E < 1) E = 1;
  r->gemm_fwd = grouped_at(c, op, E, m, n, k, 1);
  r->gemm_bwd =
      grouped_at(c, op, E, m, k, n, 1) + grouped_at(c, op, E, n, k, m, 0);
  r->fwd = r->gemm_fwd;
  r->bwd = r->gemm_bwd;
}

/* Fused attention: FlashAttention's backward does 2.5 times the forward's
 * FLOPs (five products to two); the FLOPs count only the pairs a causal
 * mask or window leaves (traces/kinds.c), which is what the kernel skips
 * to.  The kernels run in 16 bits (Transformer Engine's FP8 recipes leave
 * attention in BF16 unless asked). */
static void time_flash(const st__cost_ctx_t *c, const strata_op_t *op,
                       const st__opdims_t *d, const st__strat_t *s,
                       st__op_cost_t *r) {
  const strata_perf_t *pf = &c->o->perf;
  double f = strata_op_flops_fwd(c->g, op) / st__work_split(c->m, s);
  double keys = (double)c->g->tensors[op->in[1]].shape[2];
  int windowed = op->window > 0 && op->window < keys;
  for (int a = 0; a < c->m->ndim; a++)
    if (s->sp[a]) keys /= c->m->shape[a]; /* a ring step's block */
  if (windowed && op->window < keys) keys = op->window;
  (void)d;
  /* the stack's kernel: its rate over TE's at this shape (stack.c) */
  double hd = (double)c->g->tensors[op->in[0]].shape[3];
  double sf = strata_stack_attn_scale(pf, c->o->attn_kernel, keys, hd,
                                      op->causal, 0),
         sb = strata_stack_attn_scale(pf, c->o->attn_kernel, keys, hd,
                                      op->causal, 1);
  r->fwd = strata_perf_attention(pf, f / sf, keys, 0, 0);
  r->bwd = strata_perf_attention(pf, 2.5 * f / sb, keys, 1, 0);
}

/* A batched matmul a[B.., m, k] b[B.., k, n]: forward, then the gradients
 * of a (m x k, inner n) and b (k x n, inner m). */
static void time_matmul(const st__cost_ctx_t *c, const st__opdims_t *d,
                        const st__strat_t *s, st__op_cost_t *r) {
  const strata_perf_t *pf = &c->o->perf;
  int pm = pdim_named(d, "m"), pk = pdim_named(d, "k"), pn = pdim_named(d, "n");
  double B = 1, m = local_dim(c, d, s, pm), k = local_dim(c, d, s, pk),
         n = local_dim(c, d, s, pn);
  for (int p = 0; p < d->n_pdims; p++)
    if (p != pm && p != pk && p != pn) B *= local_dim(c, d, s, p);
  r->gemm_fwd = strata_perf_gemm(pf, B, m, n, k, 2);
  r->gemm_bwd =
      strata_perf_gemm(pf, B, m, k, n, 2) + strata_perf_gemm(pf, B, k, n, m, 2);
  r->fwd = r->gemm_fwd;
  r->bwd = r->gemm_bwd;
}

/* Streaming kernels: the bytes the forward reads and writes (the dropout
 * mask at a byte per element); the backward reads the output gradient and
 * what was saved and writes the input gradient: 1.5 times the forward's
 * bytes in two kernels (docs/cost-model.md). */
static void time_stream(const st__cost_ctx_t *c, const strata_op_t *op,
                        const st__opdims_t *d, const st__strat_t *s,
                        st__op_cost_t *r) {
  const strata_perf_t *pf = &c->o->perf;
  double b = act_bytes(c, d, s);
  if (op->kind == STRATA_OP_DROPOUT && op->n_out > 0)
    b += slot_bytes(c, d, s, d->n_in) /
         strata_dtype_size(c->g->tensors[op->out[0]].dtype);
  r->fwd = strata_perf_stream(pf, b, 1);
  r->bwd = strata_perf_stream(pf, 1.5 * b, 2);
  if (op->kind == STRATA_OP_ADD && op->n_in == 2) {
    /* a residual add: its backward passes the gradient on unchanged; the
     * gradient reaching the residual's fork from both sides is summed
     * there, one kernel of the add's own bytes */
    r->bwd = strata_perf_stream(pf, b, 1);
    /* Megatron-LM fuses bias, dropout and the residual add into one
     * kernel (bias_dropout_add_fused_train): the dropout's output is
     * never written or read back; the add costs only the residual read
     * and its output beyond what the dropout is charged */
    for (int i = 0; i < 2; i++) {
      int pr = c->g->tensors[op->in[i]].producer;
      if (pr >= 0 && c->g->ops[pr].kind == STRATA_OP_DROPOUT) {
        r->fwd = strata_perf_stream(pf, slot_bytes(c, d, s, d->n_in), 0);
        break;
      }
    }
  }
}

/* Fused attention over the other sequence's keys (t of k[b,kv,t,d]). */
static void time_cross_attention(const st__cost_ctx_t *c, const strata_op_t *op,
                                 const st__strat_t *s, st__op_cost_t *r) {
  const strata_perf_t *pf = &c->o->perf;
  double f = strata_op_flops_fwd(c->g, op) / st__work_split(c->m, s);
  double seq = (double)c->g->tensors[op->in[1]].shape[2];
  r->fwd = strata_perf_attention(pf, f, seq, 0, 0);
  r->bwd = strata_perf_attention(pf, 2.5 * f, seq, 1, 0);
}

/* A strided convolution is one GEMM over the patches: img[b,c,H,W],
 * w[h,c,p,q]: m = b (H/p)(W/q), k = c p q, n = h; the split divides the
 * rows (docs/cost-model.md). */
static void time_patch_embed(const st__cost_ctx_t *c, const strata_op_t *op,
                             const st__strat_t *s, st__op_cost_t *r) {
  const strata_perf_t *pf = &c->o->perf;
  const strata_tensor_t *x = &c->g->tensors[op->in[0]];
  const strata_tensor_t *w = &c->g->tensors[op->in[1]];
  double n = (double)w->shape[0],
         k = (double)w->shape[1] * w->shape[2] * w->shape[3];
  double m = (double)x->shape[0] * (x->shape[2] / w->shape[2]) *
             (x->shape[3] / w->shape[3]) / st__work_split(c->m, s);
  int eb = c->o->fp8 ? 1 : 2;
  r->gemm_fwd = strata_perf_gemm(pf, 1, m, n, k, eb);
  r->gemm_bwd = strata_perf_gemm(pf, 1, m, k, n, eb) +
                strata_perf_gemm(pf, 1, n, k, m, eb);
  r->fwd = r->gemm_fwd;
  r->bwd = r->gemm_bwd;
}

/* What an importer could not map: its FLOPs at the largest GEMMs' rate or
 * its bytes at the streaming rate, whichever is slower; backward twice the
 * forward. */
static void time_generic(const st__cost_ctx_t *c, const strata_op_t *op,
                         const st__opdims_t *d, const st__strat_t *s,
                         st__op_cost_t *r) {
  const strata_perf_t *pf = &c->o->perf;
  double f = strata_op_flops_fwd(c->g, op) / st__work_split(c->m, s);
  double peak = pf->peak_flops * pf->gemm_max;
  time_stream(c, op, d, s, r);
  if (peak > 0 && f / peak > r->fwd) r->fwd = f / peak;
  if (peak > 0 && 2 * f / peak > r->bwd) r->bwd = 2 * f / peak;
}

/* Megatron-LM's VocabParallelCrossEntropy (megatron/core/tensor_parallel/
 * cross_entropy.py), per logit: forward copies the logits to fp32
 * (logits.float(): read e, write 4), takes the max (read 4), subtracts it
 * (read and write 4), exps in place (read and write 4), sums (read 4) and
 * divides in place into the saved softmax (read and write 4); backward
 * subtracts the one-hot (one element a row), scales by the output gradient
 * in place (read and write 4) and casts the gradient back (read 4, write
 * e).  fp32 logits need no casts. */
static void time_cross_entropy(const st__cost_ctx_t *c, const strata_op_t *op,
                               const st__opdims_t *d, const st__strat_t *s,
                               st__op_cost_t *r) {
  const strata_perf_t *pf = &c->o->perf;
  double e = strata_dtype_size(c->g->tensors[op->in[0]].dtype);
  double n = slot_bytes(c, d, s, 0) / e;
  int cast = e < 4;
  r->fwd = strata_perf_stream(pf, n * ((cast ? e + 4 : 0) + 32), 5 + cast);
  r->bwd = strata_perf_stream(pf, n * (8 + (cast ? 4 + e : 0)), 1 + cast);
}

static void op_time(const st__cost_ctx_t *c, const strata_op_t *op,
                    const st__opdims_t *d, const st__strat_t *s,
                    st__op_cost_t *r) {
  const strata_perf_t *pf = &c->o->perf;
  switch (op->kind) {
  case STRATA_OP_LINEAR:
  case STRATA_OP_MOE_ROUTER:
    time_linear(c, op, d, s, r);
    break;
  case STRATA_OP_GROUPED_LINEAR:
    time_grouped(c, op, d, s, r);
    break;
  case STRATA_OP_MATMUL:
    time_matmul(c, d, s, r);
    break;
  case STRATA_OP_FLASH_ATTENTION:
    time_flash(c, op, d, s, r);
    break;
  case STRATA_OP_CROSS_ATTENTION:
    time_cross_attention(c, op, s, r);
    break;
  case STRATA_OP_PATCH_EMBED:
    time_patch_embed(c, op, s, r);
    break;
  case STRATA_OP_GENERIC:
    time_generic(c, op, d, s, r);
    break;
  case STRATA_OP_SPLIT_HEADS:
  case STRATA_OP_TRANSPOSE:
  case STRATA_OP_RESHAPE:
  case STRATA_OP_PERMUTE:
  case STRATA_OP_SPLIT:
  case STRATA_OP_SLICE:
    break; /* views: the next kernel reads them in place */
  case STRATA_OP_EMBEDDING: {
    /* a gather of rows, and their scatter-add into the table gradient */
    double out = slot_bytes(c, d, s, d->n_in);
    r->fwd = strata_perf_stream(pf, 2 * out, 1);
    r->bwd = strata_perf_stream(pf, 2 * out, 1);
    break;
  }
  case STRATA_OP_CROSS_ENTROPY:
    time_cross_entropy(c, op, d, s, r);
    break;
  default:
    time_stream(c, op, d, s, r);
    break;
  }
}

/* The eager MoE layer's host-bound gaps (the stage's moe_host), charged
 * once a layer on its dispatch: a third in forward and two in backward,
 * which issues about twice the kernels (docs/cost-model.md, "The eager
 * MoE layer"). */
static void host_gaps(const st__cost_ctx_t *c, const strata_op_t *op,
                      st__op_cost_t *r) {
  double h = c->o->moe_host;
  if (op->kind != STRATA_OP_MOE_DISPATCH || !(h > 0)) return;
  r->host_fwd = h / 3;
  r->host_bwd = h - h / 3;
}

void st__op_cost(const st__cost_ctx_t *c, const strata_op_t *op,
                 const st__opdims_t *d, const st__strat_t *s,
                 unsigned owns_param, unsigned skip_saved, int is_ckpt,
                 int in_recompute, st__op_cost_t *r) {
  const strata_stage_opts_t *o = c->o;
  double mb = o->micro_batches > 0 ? o->micro_batches : 1;
  memset(r, 0, sizeof *r);
  for (int i = 0; i < d->n_in; i++)
    if (owns_param & (1u << i)) param_cost(c, op, d, s, i, r);
  saved_cost(c, op, d, s, skip_saved, r);
  /* the saved set unsharded: what the stage must hold at least */
  st__strat_t rep;
  st__op_cost_t u;
  memset(&rep, 0, sizeof rep);
  memset(&u, 0, sizeof u);
  for (int a = 0; a < STRATA_MESH_MAX_DIMS; a++)
    rep.axis[a] = ST__REP;
  saved_cost(c, op, d, &rep, skip_saved, &u);
  r->unique_act = u.act;
  if (is_ckpt) r->ckpt = slot_bytes(c, d, s, d->n_in);
  own_comm(c, op, d, s, r);
  for (int i = d->n_in; i < d->n_slots; i++)
    r->transient += slot_bytes(c, d, s, i) * slot_factor(c, d, i);
  op_time(c, op, d, s, r);
  host_gaps(c, op, r);
  ring_comm(c, op, d, s, r);
  if (in_recompute) {
    r->host_bwd += r->host_fwd;
    r->bwd += r->fwd;
    r->gemm_bwd += r->gemm_fwd;
    r->comm_bwd += r->comm_fwd;
    r->cp_bwd += r->cp_fwd;
  }
  r->comm += mb * (r->comm_fwd + r->comm_bwd);
  r->compute = mb * (r->fwd + r->bwd);
}

static void grad_expected(const strata_mesh_t *m, const st__place_t *out,
                          st__place_t *g) {
  *g = *out;
  for (int a = 0; a < m->ndim; a++)
    if (g->kind[a] == ST__PL_P) g->kind[a] = ST__PL_R;
}

/* Resharding, per mesh axis the collective its placements need (table in
 * docs/cost-model.md); several axes that need the same collective run it
 * as one collective across them (hier(): NCCL's ring or tree over the
 * axes, inner (faster) first). */
double st__reshard_time(const strata_mesh_t *m, double bytes,
                        const st__place_t *from, const st__place_t *to) {
  int size[4][STRATA_MESH_MAX_DIMS], n[4] = {0, 0, 0, 0};
  strata_link_t link[4][STRATA_MESH_MAX_DIMS];
  static const strata_coll_t kind[4] = {
      STRATA_COLL_ALLGATHER, STRATA_COLL_ALLTOALL, STRATA_COLL_ALLREDUCE,
      STRATA_COLL_REDUCESCATTER};
  double rest = bytes; /* what the axes moving nothing leave sharded */
  for (int a = m->ndim - 1; a >= 0; a--) {
    int f = from->kind[a], k = to->kind[a], c = -1;
    if (m->shape[a] <= 1) continue;
    if (f == ST__PL_S && k == ST__PL_R)
      c = 0;
    else if (f == ST__PL_S && k == ST__PL_S && from->dim[a] != to->dim[a])
      c = 1;
    else if (f == ST__PL_P && k == ST__PL_R)
      c = 2;
    else if (f == ST__PL_P && k == ST__PL_S)
      c = 3;
    if (c < 0) {
      if (f == ST__PL_S) rest /= m->shape[a];
      continue;
    }
    size[c][n[c]] = m->shape[a];
    link[c][n[c]++] = m->axis[a];
  }
  double t = 0;
  for (int c = 0; c < 4; c++) {
    if (!n[c]) continue;
    if (c == 1) { /* all-to-all on each axis, the others' shards apart */
      for (int i = 0; i < n[c]; i++)
        t += strata_coll_time(STRATA_COLL_ALLTOALL, rest, size[c][i],
                              &link[c][i]);
      continue;
    }
    t += hier(kind[c], rest, n[c], size[c], link[c]);
  }
  return t;
}

void st__edge_times(const st__cost_ctx_t *c, int tensor, const st__opdims_t *du,
                    const st__strat_t *su, int uslot, const st__opdims_t *dw,
                    const st__strat_t *sw, int wslot, double *fwd,
                    double *bwd) {
  st__place_t pu, pw, gu, gw;
  double bytes = tensor_bytes(c->g, tensor);
  st__placement(du, c->m, su, uslot, &pu);
  st__placement(dw, c->m, sw, wslot, &pw);
  st__grad_placement(dw, c->m, sw, wslot, &gw);
  grad_expected(c->m, &pu, &gu);
  *fwd = st__reshard_time(c->m, bytes, &pu, &pw);
  *bwd = st__reshard_time(c->m, bytes, &gw, &gu);
}

double st__edge_cost(const st__cost_ctx_t *c, int tensor,
                     const st__opdims_t *du, const st__strat_t *su, int uslot,
                     const st__opdims_t *dw, const st__strat_t *sw, int wslot) {
  double mb = c->o->micro_batches > 0 ? c->o->micro_batches : 1, f, b;
  st__edge_times(c, tensor, du, su, uslot, dw, sw, wslot, &f, &b);
  return mb * (f + b);
}
