/*
 * degrees.c - the families of the search: which tensor, context, expert
 * and expert-tensor parallel sizes, precisions and ZeRO stages a stage can
 * take, the mesh and links each one's stages run on, and the probe stages
 * solved for each family kept (st__family_add).
 *
 * Megatron-Core lays ranks out tp fastest, then cp, ep, dp, pp
 * (parallel_state.py, order "tp-cp-ep-dp-pp"): a stage's tp x cp ranks
 * are consecutive, the context-parallel group strides by tp.  Its expert
 * layers fold onto the same ranks (etp fastest, then ep, then the expert
 * data parallelism): an expert-parallel group takes tp / etp ranks of the
 * tensor-parallel group (etp 1), then the context-parallel ranks, then
 * data-parallel replicas.  Strata models etp = tp (Megatron's default) and
 * etp = 1, and an expert-parallel group made of whole mesh axes and
 * replicas: ep / (tp / etp) is 1, a multiple of cp, or (cp = 1) any
 * divisor of the experts; what is left over the mesh, ep_outer, must
 * divide the data parallelism (eval.c checks it per configuration).
 *
 * Context parallelism is searched in Megatron mode from where it pays:
 * powers of two with 2 cp dividing the sequence (Megatron's rule) and at
 * least STRATA_CP_MIN_TOKENS tokens per rank, tensor parallelism then
 * within a node.  Expert parallelism is searched over the powers of two
 * dividing the experts (and their number itself).
 */
#include <string.h>

#include "pipeline/search.h"

#define MAX_STAGE_NODES 8

/* ---- the mesh of a family's stages ---- */

int st__family_mesh(const st__search_t *S, const st__family_t *f,
                    strata_mesh_t *m) {
  int rc = strata_cluster_stage_mesh(S->c, f->nodes, f->gpn, m);
  if (rc || f->cp <= 1) return rc;
  /* [cp, tp]: the context-parallel axis is the outer one; across nodes it
   * runs over the inter-node link (its ring's slowest hop) */
  strata_link_t in = m->axis[m->ndim - 1], out = m->axis[0];
  memset(m, 0, sizeof *m);
  m->ndim = f->tp > 1 ? 2 : 1;
  m->shape[0] = f->cp;
  m->shape[1] = f->tp > 1 ? f->tp : 1;
  m->axis[0] = f->nodes > 1 ? out : in;
  m->axis[1] = in;
  return 0;
}

/* The link of a collective over n ranks whose group spans `nodes` x
 * `gpn` GPUs, as one flat ring link: the cluster's cost across its levels
 * at 1 byte and 1 GB fitted to strata_coll_time's (n - 1)/n S/B +
 * (n - 1) a. */
strata_link_t st__group_link(const st__search_t *S, strata_coll_t coll, int n,
                             int nodes, int gpn) {
  strata_link_t l = {25e9, 10e-6};
  double one = 0, big = 0, k = coll == STRATA_COLL_ALLREDUCE ? 2.0 : 1.0;
  if (n < 2 || strata_cluster_coll_time(S->c, coll, 1, nodes, gpn, &one) ||
      strata_cluster_coll_time(S->c, coll, 1e9, nodes, gpn, &big)) {
    strata_error_clear();
    return l;
  }
  double per_byte = (big - one) / (1e9 - 1);
  if (per_byte > 0) l.bandwidth = k * (n - 1.0) / n / per_byte;
  l.latency = (one - per_byte) / (k * (n - 1.0));
  if (l.latency < 0) l.latency = 0;
  return l;
}

/* The shape of a group of n ranks that stride by `stride` (nodes x GPUs
 * per node), ranks numbered node-major. */
void st__group_shape(const st__search_t *S, int stride, int n, int *nodes,
                     int *gpn) {
  int per = stride >= S->G ? 1 : S->G / stride;
  if (per > n) per = n;
  if (per < 1) per = 1;
  *gpn = per;
  *nodes = (n + per - 1) / per;
  if (*nodes > S->N) *nodes = S->N;
}

/* Of the token copies an all-to-all sends to other nodes, the fraction a
 * dispatcher sends that forwards a token once to each node holding any of
 * its experts, and there over NVLink to their GPUs (DeepEP's internode
 * kernels, after DeepSeek-V3's report section 3.2.2; NVIDIA's HybridEP
 * the same way): the token's distinct other nodes over its copies on
 * other nodes, k (N - 1) / N, with routing uniform over the experts
 * (or, group-limited, over the router's groups when whole groups sit on
 * a node: DeepSeek-V3 picks 4 of 8).  The combine sums a node's copies
 * before sending them back, the same volume.  1 for Megatron's alltoall
 * dispatcher, which sends every copy. */
double st__ep_node_share(const strata_graph_t *g, int dispatcher, int nodes) {
  const struct strata_graph_hp *h = &g->hp;
  if (STRATA_CHOICE(dispatcher) != STRATA_MOE_FLEX || nodes <= 1 ||
      h->experts <= 0 || h->topk <= 0)
    return 1;
  double units = h->experts, picks = h->topk;
  if (h->router_groups > 0 && h->router_group_topk > 0 &&
      h->router_groups % nodes == 0)
    units = h->router_groups, picks = h->router_group_topk;
  double there = units / nodes, miss = 1; /* no pick on a given node */
  for (int i = 0; i < picks; i++)
    miss *= units - there - i > 0 ? (units - there - i) / (units - i) : 0;
  double share = nodes * (1 - miss) / h->topk;
  return share < 1 ? share : 1;
}

/* The all-to-all of the expert-parallel replicas beyond the mesh (ep_outer
 * ranks t apart) as an affine model of the bytes a device holds: the
 * cluster's hierarchical cost at 1 byte and 1 GB, its inter-node part
 * scaled by the copies the dispatcher sends across nodes. */
static int ep_a2a_time(const st__search_t *S, double bytes, int nodes, int gpn,
                       double share, double *t) {
  double across = 0;
  if (strata_cluster_coll_time(S->c, STRATA_COLL_ALLTOALL, bytes, nodes, gpn,
                               t) ||
      (nodes > 1 && strata_cluster_coll_time(S->c, STRATA_COLL_ALLTOALL, bytes,
                                             nodes, 1, &across)))
    return -1;
  *t -= (1 - share) * across;
  return 0;
}

static strata_link_t ep_link(const st__search_t *S, const st__family_t *f) {
  strata_link_t l = {25e9, 10e-6};
  double one = 0, big = 0;
  int nodes, gpn;
  st__group_shape(S, f->tcp, f->ep_outer, &nodes, &gpn);
  double share = st__ep_node_share(S->g, S->o->moe_dispatcher, nodes);
  if (ep_a2a_time(S, 1, nodes, gpn, share, &one) ||
      ep_a2a_time(S, 1e9, nodes, gpn, share, &big) || !(big > one)) {
    strata_error_clear();
    return l;
  }
  double per_byte = (big - one) / (1e9 - 1);
  l.bandwidth = 1 / per_byte;
  l.latency = one - per_byte > 0 ? one - per_byte : 0;
  return l;
}

/* Megatron-LM's full-iteration graph holds every layer (a dropless MoE
 * layer through its paged stash, as Megatron-Bridge's recipes run it), a
 * layer's graph of scope moe the whole MoE layer, and so does one of no
 * scope (the whole layer) where the experts' input is padded to a
 * capacity (token drop: rules.c, graph_scope); moe_router and
 * moe_preprocess leave the experts' part, where the host-bound gaps are,
 * eager. */
int st__moe_graphed(const st__search_t *S) {
  const strata_plan_opts_t *o = S->o;
  int impl = STRATA_CHOICE(o->cuda_graph_impl), s = o->cuda_graph_scope;
  if (impl == STRATA_CUDA_GRAPH_FULL) return 1;
  if (impl == STRATA_CUDA_GRAPH_NONE) return 0;
  return (s & STRATA_CUDA_GRAPH_MOE) || (!s && S->rules.capacity > 0);
}

void st__family_stage_opts(const st__search_t *S, const st__family_t *f,
                           strata_stage_opts_t *so) {
  so->cp = f->cp;
  so->cp_comm = S->o->cp_comm;
  so->ep_outer = f->ep_outer;
  so->ep_axes = f->ep_axes;
  if (f->ep_outer > 1) so->ep_link = ep_link(S, f);
  so->moe_imbalance = S->o->moe_imbalance > 1 ? S->o->moe_imbalance : 1;
  so->fp8 = f->fp8;
  so->ep_comm_overlap = f->epo;
  so->moe_host = S->rules.experts > 0 && !st__moe_graphed(S)
                     ? so->perf.moe_host_seconds
                     : 0;
  if (f->cp > 1) so->megatron_tp_axes = 1;
}

/* ---- the degrees ---- */

/* A candidate for the rulebook's rules (rules.c), of graph g. */
static strata_rules_config_t candidate(const st__search_t *S,
                                       const strata_graph_t *g) {
  strata_rules_config_t c = S->rules;
  c.heads = g->hp.heads, c.kv_heads = g->hp.kv_heads;
  c.seq_len = g->seq_len, c.flash_attention = g->hp.flash_attention;
  return c;
}

static int divides_heads(const st__search_t *S, const strata_graph_t *g,
                         int t) {
  strata_rules_config_t c = candidate(S, g);
  c.tp = t;
  return !strata_rules_check(&c, ST__AT_TP, NULL);
}

/* Tensor-parallel sizes: powers of two within a node (Megatron mode), or
 * whole nodes up to MAX_STAGE_NODES (free mode); a fixed size as given
 * (several whole nodes too).  With context parallelism the stage's tp x
 * cp ranks: tp within a node, the stage taking whole nodes when larger. */
static int stage_shape(const st__search_t *S, int tp, int cp, int *nodes,
                       int *gpn) {
  const strata_plan_opts_t *o = S->o;
  int t = tp * cp;
  if (cp > 1 && (tp > S->G || S->G % tp)) return 0;
  if (t <= S->G) {
    if (S->G % t) return 0;
    *nodes = 1;
    *gpn = t;
    return 1;
  }
  if (t % S->G || t / S->G > S->N) return 0;
  if (cp == 1 && !o->tp && (o->megatron || t / S->G > MAX_STAGE_NODES))
    return 0;
  *nodes = t / S->G;
  *gpn = S->G;
  return 1;
}

static int cp_ok(const st__search_t *S, const strata_graph_t *g, int cp) {
  const strata_plan_opts_t *o = S->o;
  if (o->cp) return cp == o->cp;
  if (cp == 1) return 1;
  strata_rules_config_t c = candidate(S, g);
  c.cp = cp;
  return o->megatron && g->seq_len / cp >= STRATA_CP_MIN_TOKENS &&
         !strata_rules_check(&c, ST__AT_CP, NULL);
}

/* Fill f's expert-parallel layout for ep; 0 if Strata cannot lay it out
 * (see the file's comment) or the experts do not divide.  Free mode lays
 * the experts on the mesh in the ILP: ep there counts replicas only. */
static int ep_layout(const st__search_t *S, const strata_moe_info_t *m, int ep,
                     st__family_t *f) {
  int inner = f->etp == 1 ? f->tp : 1, rest;
  strata_rules_config_t c = S->rules;
  c.tp = f->tp, c.cp = f->cp, c.etp = f->etp, c.ep = ep;
  c.experts = m->experts, c.moe_ffn = m->moe_ffn;
  f->ep = ep;
  f->ep_outer = 1;
  f->ep_axes = 0;
  if (m->experts <= 0) return ep == 1 && f->etp == f->tp;
  if (strata_rules_check(&c, ST__AT_EP, NULL)) return 0;
  if (!S->o->megatron) {
    f->ep_outer = ep;
    return f->etp == f->tp;
  }
  /* the experts' hidden size over etp; whole tp and cp groups */
  if (strata_rules_check(&c, ST__AT_EP_LAYOUT, NULL)) return 0;
  rest = ep / inner;
  if (inner > 1) /* the tensor-parallel axes */
    f->ep_axes = f->cp > 1 ? 2u : f->nodes > 1 && f->gpn > 1 ? 3u : 1u;
  if (f->cp > 1 && rest > 1) {
    f->ep_axes |= 1u;
    rest /= f->cp;
  }
  f->ep_outer = rest;
  return rest <= S->total / f->tcp;
}

static int ep_candidate(const st__search_t *S, const strata_moe_info_t *m,
                        int ep) {
  if (S->o->ep) return ep == S->o->ep;
  if (m->experts <= 0) return ep == 1;
  if (!S->o->megatron) return ep == 1; /* free mode: the ILP lays experts */
  strata_rules_config_t c = S->rules;
  c.experts = m->experts, c.ep = ep;
  return !strata_rules_check(&c, ST__AT_EP, NULL) &&
         ((ep & (ep - 1)) == 0 || ep == m->experts);
}

typedef struct {
  int zero[4], n_zero;
  int fp8[2], n_fp8;
  int epo[2], n_epo;
} choices_t;

/* ZeRO stages and precisions to try: the ones given, or when asked to
 * choose, every one the mode and the GPU allow. */
static void choices(const st__search_t *S, choices_t *c) {
  const strata_plan_opts_t *o = S->o;
  memset(c, 0, sizeof *c);
  if (o->zero_stage == STRATA_AUTO)
    for (int z = o->megatron ? 1 : 0; z <= 3; z++)
      c->zero[c->n_zero++] = z;
  else
    c->zero[c->n_zero++] = S->zero;
  int has_fp8 = strata_cluster_perf(S->c)->peak_fp8_flops > 0;
  if (!st__narrow(o->precision)) c->fp8[c->n_fp8++] = 0;
  /* the narrow GEMMs' recipe (NVFP4 only when given: plan.c checks the
   * GPU has FP4 tensor cores) */
  if (o->precision == STRATA_PRECISION_FP4)
    c->fp8[c->n_fp8++] = STRATA_LOWP_NVFP4;
  else if (o->precision != STRATA_PRECISION_BF16 && has_fp8)
    c->fp8[c->n_fp8++] = st__lowp_of(o, S->c);
  /* the experts' all-to-all overlapped where asked: both, the search
   * keeping it where Megatron-LM runs it (the rulebook's ep-overlap:
   * add_variants, then eval.c's cfg_valid) */
  c->epo[c->n_epo++] = 0;
  if (o->overlap_ep_comm) c->epo[c->n_epo++] = 1;
}

/* The family variants of recompute r and sequence parallelism sp: each
 * ZeRO stage, GEMM recipe and experts' overlap chosen; c: the rulebook's
 * configuration of them (a copy the call changes). */
static int add_precisions(st__search_t *S, const st__family_t *base,
                          const choices_t *ch, strata_rules_config_t *c, int r,
                          int sp, int aux) {
  int rc = 0;
  for (int z = 0; z < ch->n_zero && !rc; z++)
    for (int p = 0; p < ch->n_fp8 && !rc; p++)
      for (int e = 0; e < ch->n_epo && !rc; e++) {
        c->overlap_ep_comm = ch->epo[e];
        if (ch->epo[e] && strata_rules_check(c, ST__AT_FAMILY, NULL)) continue;
        st__family_t f = *base;
        f.sp = sp;
        f.rc = (strata_recompute_t)r;
        f.zero = ch->zero[z];
        f.fp8 = ch->fp8[p];
        f.epo = ch->epo[e];
        f.aux = aux;
        rc = st__family_add(S, &f);
      }
  return rc;
}

/* The options that do not change the mesh: recompute, sequence
 * parallelism, ZeRO and precision, each asked of the rulebook's rows of
 * the family's layers (ST__AT_LAYER, ST__AT_SP) and of the experts'
 * overlap as far as a family decides it (ST__AT_FAMILY; the pipeline and
 * the batch are eval.c's cfg_valid's). */
static int add_variants(st__search_t *S, st__family_t *base) {
  const strata_plan_opts_t *o = S->o;
  choices_t ch;
  int rc = 0;
  choices(S, &ch);
  strata_rules_config_t c = S->rules;
  c.tp = base->tp, c.cp = base->cp, c.ep = base->ep, c.etp = base->etp;
  /* block recompute: a full family's layers past a chunk's first N are
   * its sibling's without recompute, added as no candidate of its own
   * where full recompute was asked */
  int block = STRATA_CHOICE(o->recompute_method) == STRATA_RECOMPUTE_BLOCK;
  for (int r = 0; r < 3 && !rc; r++) {
    int aux = block && r == STRATA_RECOMPUTE_NONE &&
              o->recompute == STRATA_RECOMPUTE_FULL;
    if (o->recompute != STRATA_RECOMPUTE_AUTO && r != (int)o->recompute && !aux)
      continue;
    /* per-layer CUDA graphs take no recompute they would hold; fine-
     * grained offloading keeps its modules' activations */
    c.recompute = (strata_recompute_t)r;
    if (strata_rules_check(&c, ST__AT_LAYER, NULL)) continue;
    for (int sp = 0; sp <= 1 && !rc; sp++) {
      /* free mode plans no sequence parallelism; the rulebook's: it needs
       * tp > 1, and expert with tensor parallelism needs it */
      c.sequence_parallel = sp;
      if (sp && !o->megatron) continue;
      if (o->megatron && strata_rules_check(&c, ST__AT_SP, NULL)) continue;
      if (o->sequence_parallel >= 0 && sp != o->sequence_parallel &&
          base->tp > 1 && o->megatron)
        continue;
      rc = add_precisions(S, base, &ch, &c, r, sp, aux);
    }
  }
  return rc;
}

static int add_layouts(st__search_t *S, int gi, int tp, int cp, int nodes,
                       int gpn) {
  const strata_plan_opts_t *o = S->o;
  strata_moe_info_t m;
  int rc = 0;
  strata_graph_moe(S->graphs[gi], &m);
  for (int etp = tp; etp >= 1 && !rc; etp = etp > 1 ? 1 : 0) {
    if (o->etp ? etp != o->etp : etp != tp && m.experts <= 0) continue;
    if (etp != tp && etp != 1) continue;
    for (int ep = 1; ep <= (m.experts > 0 ? m.experts : 1) && !rc; ep++) {
      st__family_t f;
      memset(&f, 0, sizeof f);
      f.nodes = nodes, f.gpn = gpn, f.tcp = tp * cp, f.tp = tp, f.cp = cp;
      f.graph = gi, f.etp = etp;
      if (!ep_candidate(S, &m, ep) || !ep_layout(S, &m, ep, &f)) continue;
      rc = add_variants(S, &f);
    }
    if (tp == 1) break;
  }
  return rc;
}

/* Two families alike but for recompute. */
static int same_shape(const st__family_t *a, const st__family_t *b) {
  return a->nodes == b->nodes && a->gpn == b->gpn && a->tp == b->tp &&
         a->cp == b->cp && a->ep == b->ep && a->etp == b->etp &&
         a->ep_outer == b->ep_outer && a->ep_axes == b->ep_axes &&
         a->graph == b->graph && a->sp == b->sp && a->zero == b->zero &&
         a->fp8 == b->fp8;
}

/* Block recompute: each full family's sibling without recompute (the
 * experts' overlap aside: full recompute has none), or the family is
 * dropped. */
static void link_siblings(st__search_t *S) {
  if (STRATA_CHOICE(S->o->recompute_method) != STRATA_RECOMPUTE_BLOCK) return;
  for (int i = 0; i < S->n_fam; i++) {
    st__family_t *f = &S->fam[i];
    if (f->rc != STRATA_RECOMPUTE_FULL) continue;
    for (int j = 0; j < S->n_fam && f->sib < 0; j++)
      if (S->fam[j].rc == STRATA_RECOMPUTE_NONE && !S->fam[j].epo &&
          same_shape(f, &S->fam[j]))
        f->sib = j;
    if (f->sib < 0) f->aux = 1; /* not costable */
  }
}

/* Why the degrees given lay out no stage: the first of the checks above
 * they fail, with its figures (the heads, the powers of two the sizes
 * step through, the nodes' GPUs), else the experts' rules together. */
static int no_layout(const st__search_t *S) {
  const strata_plan_opts_t *o = S->o;
  int tp = o->tp ? o->tp : 1, cp = o->cp ? o->cp : 1;
  int nodes, gpn;
  for (int gi = 0; gi < S->n_graphs; gi++) {
    const struct strata_graph_hp *h = &S->graphs[gi]->hp;
    int kv = h->kv_heads ? h->kv_heads : h->heads;
    if (divides_heads(S, S->graphs[gi], tp)) continue;
    if (h->heads % tp)
      return strata_error(STRATA_EINVAL,
                          "--tp %d: the model's %d heads (%d key-value "
                          "groups) do not divide by %d",
                          tp, h->heads, kv, tp);
    return strata_error(STRATA_EINVAL,
                        "--tp %d: the model's %d key-value groups (of %d "
                        "heads) do not divide by %d",
                        tp, kv, h->heads, tp);
  }
  if (tp & (tp - 1) || cp & (cp - 1))
    return strata_error(STRATA_EINVAL,
                        "--%s %d: the planner lays out %s sizes that are "
                        "powers of two (1, 2, 4, 8, ...)",
                        tp & (tp - 1) ? "tp" : "cp", tp & (tp - 1) ? tp : cp,
                        tp & (tp - 1) ? "tensor-parallel" : "context-parallel");
  if (!stage_shape(S, tp, cp, &nodes, &gpn))
    return strata_error(STRATA_EINVAL,
                        "tp %d x cp %d: a stage of %d GPUs does not fit this "
                        "cluster (%d node%s of %d GPUs; a stage is part of a "
                        "node or whole nodes, the tensor-parallel group "
                        "within one)",
                        tp, cp, tp * cp, S->N, S->N == 1 ? "" : "s", S->G);
  return strata_error(STRATA_EINVAL,
                      "no stage can be laid out with tensor-parallel size %d, "
                      "context-parallel size %d, expert-parallel size %d and "
                      "expert tensor-parallel size %d on this cluster's nodes "
                      "of %d GPUs: check that the experts divide by ep, that "
                      "etp is 1 or tp, that ep / (tp / etp) is 1 or a "
                      "multiple of cp, and that the sequence splits into 2 x "
                      "cp chunks",
                      tp, cp, o->ep ? o->ep : 1, o->etp, S->G);
}

int st__enumerate_families(st__search_t *S) {
  const strata_plan_opts_t *o = S->o;
  int rc = 0;
  for (int gi = 0; gi < S->n_graphs && !rc; gi++)
    for (int tp = 1; tp <= S->total && !rc; tp *= 2) {
      if (o->tp && tp != o->tp) {
        if (tp > o->tp) break;
        continue;
      }
      if (!divides_heads(S, S->graphs[gi], tp)) continue;
      for (int cp = 1; tp * cp <= S->total && !rc; cp *= 2) {
        int nodes, gpn;
        if (!cp_ok(S, S->graphs[gi], cp) ||
            !stage_shape(S, tp, cp, &nodes, &gpn))
          continue;
        rc = add_layouts(S, gi, tp, cp, nodes, gpn);
      }
    }
  if (!rc && (o->tp || o->cp || o->ep || o->etp) && !S->n_fam)
    rc = no_layout(S);
  if (!rc) link_siblings(S);
  return rc;
}

/* ---- families and their probes ---- */

void st__base_stage_opts(const st__search_t *S, const st__family_t *f,
                         strata_stage_opts_t *so) {
  const strata_plan_opts_t *o = S->o;
  strata_stage_opts_init(so);
  st__family_mesh(S, f, &so->mesh);
  so->alpha = o->alpha;
  so->objective = o->megatron ? STRATA_OBJ_MEGATRON : STRATA_OBJ_MIN_MEM;
  so->recipe = o->recipe;
  so->zero_stage = f->zero;
  so->recompute = f->rc;
  so->recompute_modules =
      f->rc == STRATA_RECOMPUTE_SELECTIVE ? o->recompute_modules : 0;
  so->sequence_parallel = f->sp;
  so->megatron_tp_axes = so->mesh.ndim;
  so->perf = *strata_cluster_perf(S->c);
  so->perf.stream_eff *= strata_stack_stream_scale(o->stack.gemm);
  so->attn_kernel = o->stack.attn > 0 ? o->stack.attn : 0;
  so->tp_comm_overlap = o->tp_comm_overlap && f->sp;
  so->fastest_bandwidth = strata_cluster_fastest_bandwidth(S->c);
  so->time_limit = o->stage_time_limit;
  so->layer_begin = 0;
  st__family_stage_opts(S, f, so);
}

static int probe(st__search_t *S, const st__family_t *f, int begin, int end,
                 int pro, int epi, int in_flight, st__sub_t **out) {
  strata_stage_opts_t so;
  st__base_stage_opts(S, f, &so);
  so.layer_begin = begin;
  so.layer_end = end;
  so.with_prologue = pro;
  so.with_epilogue = epi;
  so.in_flight = in_flight;
  return st__subset_get(&S->subs, S->graphs[f->graph], S->ghash[f->graph], &so,
                        out);
}

static int family_probes(st__search_t *S, st__family_t *f) {
  const strata_graph_t *g = S->graphs[f->graph];
  int B = g->n_blocks, L = S->L, rc = 0;
  f->mid = strata_calloc((size_t)(2 * B + 1), sizeof *f->mid);
  if (!f->mid) return strata_error(STRATA_ENOMEM, "out of memory");
  rc = probe(S, f, 0, L, 1, 1, 1, &f->only);
  for (int b = 0; b < B && !rc && L >= 2; b++)
    for (int k = 0; k < 2 && !rc; k++)
      rc = probe(S, f, g->blocks[b].layer0, g->blocks[b].layer0 + 1, 0, 0,
                 k + 1, &f->mid[2 * b + k]);
  for (int k = 0; k < 2 && !rc && L >= 2; k++) {
    rc = probe(S, f, 0, 1, 1, 0, k + 1, &f->first[k]);
    if (!rc) rc = probe(S, f, L - 1, L, 0, 1, k + 1, &f->last[k]);
  }
  return rc;
}

int st__family_add(st__search_t *S, const st__family_t *f) {
  if (S->n_fam >= ST__MAX_FAMILIES) return 0;
  st__family_t *n = &S->fam[S->n_fam];
  *n = *f;
  n->sib = -1;
  n->mid = NULL;
  n->layer = NULL;
  n->pre = NULL;
  S->n_fam++;
  return family_probes(S, n);
}
