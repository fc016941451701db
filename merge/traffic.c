/*
 * traffic.c - who sends what to whom in one training step: the bytes each
 * device sends to each other device for each kind of collective (tensor,
 * context, expert and data parallelism, the pipeline's point-to-point),
 * for the HTML page's heat map (docs/exports.md, "The communication heat
 * map").
 *
 * A plan file keeps the figures of its collectives in seconds, not bytes,
 * so the bytes are worked out again from the plan's degrees, its model's
 * sizes and its ranks' weights, with the algorithms the cost model assumes
 * (docs/cost-model.md, sections 5, 11, 16 and 17): a ring all-reduce over
 * n devices has each rank send 2(n-1)/n of the tensor to its successor,
 * an all-gather or reduce-scatter (n-1)/n; an all-to-all S/n to each
 * peer; ring attention passes each rank's keys and values to its
 * successor; the pipeline sends each micro-batch's boundary activation
 * forward and its gradient back between the matching devices of
 * adjacent stages.  The devices are Megatron-LM's rank order
 * (merge/devices.c: tp fastest, then cp, then dp, the pipeline rank
 * slowest; the experts' tp-ep-dp), numbered node-major.
 *
 * The matrix stays small whatever the cluster: each device's sends are
 * added straight into its cell (a device, a node, or a pipeline rank), in
 * one pass over the devices.
 */
#include <math.h>
#include <string.h>

#include "merge/merge_int.h"
#include "merge/traffic.h"

static const char *kind_names[ST__TR_KINDS] = {"TP", "CP", "EP all-to-all",
                                               "DP", "PP"};

const char *st__traffic_kind_name(int kind) {
  return kind >= 0 && kind < ST__TR_KINDS ? kind_names[kind] : "?";
}

/* One pipeline rank: its devices and what its chunks hold. */
typedef struct {
  int base, n;       /* global ranks [base, base + n) */
  int t, tp;         /* devices of one replica; of them a tp group */
  double layers;     /* transformer layers over its chunks */
  double moe_layers; /* of them with experts (the model's share) */
  int pro, epi;      /* holds the embedding / the head and loss */
  double params;     /* parameters of one device (its 16-bit weights) */
} prank_t;

typedef struct {
  const strata_plan_t *p;
  st__traffic_t *t;
  int G;         /* GPUs per node */
  int cp, sp;    /* context-parallel size; sequence parallelism */
  double act;    /* one layer's activation of a micro-batch on a cp rank */
  prank_t *rank; /* [pp] */
} ctx_t;

static int plan_cp(const strata_plan_t *p) {
  return p->cp > 1 ? p->cp : 1;
}

static int first_stage(const strata_plan_t *p, int r) {
  for (int s = 0; s < p->n_stages; s++)
    if (p->stages[s].rank == r) return s;
  return -1;
}

static void rank_of(const ctx_t *c, int r, int base, prank_t *k) {
  const strata_plan_t *p = c->p;
  int s = first_stage(p, r);
  memset(k, 0, sizeof *k);
  k->base = base;
  k->t = s < 0 ? 0 : st__stage_devices(&p->stages[s]);
  k->n = k->t * p->dp;
  k->tp = k->t / c->cp > 0 ? k->t / c->cp : 1;
  for (int i = 0; i < p->n_stages; i++) {
    const strata_plan_stage_t *st = &p->stages[i];
    if (st->rank != r) continue;
    k->layers += st->layer_end - st->layer_begin;
    k->pro |= st->with_prologue;
    k->epi |= st->with_epilogue;
  }
  int moe =
      p->experts > 0 ? (p->moe_layers > 0 ? p->moe_layers : p->layers) : 0;
  k->moe_layers = p->layers > 0 ? k->layers * moe / p->layers : 0;
  k->params = p->ranks[r].mem.weights * (p->zero_stage >= 3 ? p->dp : 1) / 2;
}

/* ---- bytes a device sends in one step ---- */

/* Tensor parallelism, to its ring successor.  Per layer and micro-batch,
 * in units of f = (t-1)/t of the layer's activation: without sequence
 * parallelism four all-reduces (attention and MLP, forward and backward:
 * 8f); with it each of the two column-parallel linears all-gathers its
 * input forward, again backward, and reduce-scatters its input's
 * gradient, and each row-parallel one reduce-scatters its output forward
 * and all-gathers the gradient backward (10f).  Full recompute runs the
 * forward's again (4f).  The embedding reduces its output (2f, or a
 * reduce-scatter: f), the head gets the backward's (2f, or with sequence
 * parallelism 3f as a column-parallel linear), and the vocabulary-
 * parallel loss all-reduces 16 bytes per token. */
static double tp_send(const ctx_t *c, const prank_t *k) {
  const strata_plan_t *p = c->p;
  if (k->tp < 2) return 0;
  double f = (k->tp - 1.0) / k->tp * c->act;
  double per = c->sp ? 10 * f : 8 * f;
  if (p->recompute == STRATA_RECOMPUTE_FULL) per += 4 * f;
  double mb = k->layers * per;
  if (k->pro) mb += c->sp ? f : 2 * f;
  if (k->epi) {
    double tokens = (double)p->micro_batch * p->seq_len / c->cp;
    mb += (c->sp ? 3 * f : 2 * f) + 2 * (k->tp - 1.0) / k->tp * 16 * tokens;
  }
  return mb * p->n_micro;
}

/* Context parallelism, to its ring successor: a layer's local keys and
 * values (of the rank's tp share of the heads) passed cp - 1 times
 * forward, and backward again with their gradients (the all-gather
 * variant moves as much: all-gather, all-gather, reduce-scatter); full
 * recompute passes them forward once more. */
static double cp_send(const ctx_t *c, const prank_t *k) {
  const strata_plan_t *p = c->p;
  if (c->cp < 2 || p->heads < 1) return 0;
  int kvh = p->kv_heads > 0 ? p->kv_heads : p->heads;
  double hd = p->head_dim > 0 ? p->head_dim : (double)p->hidden / p->heads;
  double kv = 2.0 * 2.0 * p->micro_batch * ((double)p->seq_len / c->cp) * kvh *
              hd / k->tp;
  double times = p->recompute == STRATA_RECOMPUTE_FULL ? 4 : 3;
  return k->layers * times * (c->cp - 1) * kv * p->n_micro;
}

/* Expert parallelism, to each of its ep - 1 peers: per MoE layer and
 * micro-batch the dispatch and the combine forward and their gradients
 * backward (four all-to-alls; six with full recompute), each of the
 * rank's tokens times top-k in 16 bits, 1/ep of it to each peer. */
static double ep_send(const ctx_t *c, const prank_t *k, int ep) {
  const strata_plan_t *p = c->p;
  if (ep < 2 || p->experts < 1) return 0;
  double tokens = (double)p->micro_batch * p->seq_len / c->cp;
  if (c->sp && k->tp > 1) tokens /= k->tp;
  int topk = p->topk > 0 ? p->topk : 1;
  double a2a = tokens * topk * p->hidden * 2.0;
  double times = p->recompute == STRATA_RECOMPUTE_FULL ? 6 : 4;
  return k->moe_layers * times * a2a / ep * p->n_micro;
}

/* Data parallelism over the d = cp x dp devices holding the same
 * weights, to the ring successor, per step: ZeRO 0 all-reduces the
 * gradients (in the recipe's main-gradient type); ZeRO 1 reduce-scatters
 * them and all-gathers the updated 16-bit weights (DeepSpeed all-reduces
 * them first); ZeRO 2 reduce-scatters every micro-batch's gradients;
 * ZeRO 3 also gathers the weights before every micro-batch's forward and
 * backward. */
static double dp_send(const ctx_t *c, const prank_t *k) {
  const strata_plan_t *p = c->p;
  int d = c->cp * p->dp, z = p->zero_stage, m = p->n_micro;
  if (d < 2) return 0;
  double gb = p->recipe == STRATA_RECIPE_MEGATRON ? 4 : 2;
  if (p->precision_aware_optimizer > 0 && p->main_grads_dtype > 0) gb = 2;
  double P = k->params, f = (d - 1.0) / d;
  int ds = p->framework == STRATA_FRAMEWORK_DEEPSPEED;
  switch (z) {
  case 0:
    return 2 * f * gb * P;
  case 1:
    return (ds ? 2 * f * gb * P : f * gb * P) + f * 2 * P;
  case 2:
    return m * f * gb * P + f * 2 * P;
  default:
    return m * f * (gb + 4) * P;
  }
}

/* The pipeline: one boundary's activation of a micro-batch on a device
 * (its cp share, and its tp share with sequence parallelism or
 * Megatron's scatter/gather), as the planner costs it. */
static double pp_boundary(const ctx_t *c, const prank_t *k) {
  double b = c->act;
  if (c->sp || c->p->scatter_gather > 0) b /= k->tp;
  return b;
}

/* ---- into the cells ---- */

static int cell_of(const ctx_t *c, int g) {
  const st__traffic_t *t = c->t;
  if (t->fold == ST__FOLD_DEVICES) return g;
  if (t->fold == ST__FOLD_NODES) return g / c->G;
  for (int r = 0; r < c->p->pp; r++)
    if (g >= c->rank[r].base && g < c->rank[r].base + c->rank[r].n) return r;
  return 0;
}

static void add(const ctx_t *c, int kind, int from, int to, double bytes) {
  st__traffic_t *t = c->t;
  if (bytes <= 0 || from == to) return;
  size_t i = ((size_t)kind * t->n + cell_of(c, from)) * t->n + cell_of(c, to);
  double bw = from / c->G == to / c->G ? t->intra_bw : t->inter_bw;
  double s = bw > 0 ? bytes / bw : 0;
  t->bytes[i] += bytes;
  if (s > t->seconds[i]) t->seconds[i] = s;
  t->kind_bytes[kind] += bytes;
}

/* Device i of pipeline rank k: its successor in the ring of the devices
 * that share every coordinate but one, whose size is n and whose stride
 * in i is `stride`. */
static int ring_next(int i, int n, int stride) {
  int pos = i / stride % n;
  return i + ((pos + 1) % n - pos) * stride;
}

static void rank_traffic(const ctx_t *c, const prank_t *k, int ep, int etp) {
  double tp = tp_send(c, k), cp = cp_send(c, k), dp = dp_send(c, k);
  double a2a = ep_send(c, k, ep);
  int d = c->cp * c->p->dp;
  for (int i = 0; i < k->n; i++) {
    int g = k->base + i;
    if (tp > 0) add(c, ST__TR_TP, g, k->base + ring_next(i, k->tp, 1), tp);
    if (cp > 0) add(c, ST__TR_CP, g, k->base + ring_next(i, c->cp, k->tp), cp);
    /* the cp x dp devices of one tp rank: stride tp, in rank order */
    if (dp > 0) add(c, ST__TR_DP, g, k->base + ring_next(i, d, k->tp), dp);
    if (a2a > 0) {
      int e = i / etp % ep;
      for (int q = 0; q < ep; q++)
        if (q != e) add(c, ST__TR_EP, g, g + (q - e) * etp, a2a);
    }
  }
}

/* Every boundary of chunk k to k + 1: each device of the sender's rank
 * sends its micro-batches' activations to the same device of the next
 * rank, which sends their gradients back. */
static void pp_traffic(const ctx_t *c) {
  const strata_plan_t *p = c->p;
  for (int s = 0; s + 1 < p->n_stages; s++) {
    const prank_t *a = &c->rank[p->stages[s].rank];
    const prank_t *b = &c->rank[p->stages[s + 1].rank];
    double bytes = pp_boundary(c, a) * p->n_micro;
    for (int i = 0; i < a->n && i < b->n; i++) {
      add(c, ST__TR_PP, a->base + i, b->base + i, bytes);
      add(c, ST__TR_PP, b->base + i, a->base + i, bytes);
    }
  }
}

/* Link bandwidths: a stage's mesh over nodes has the node's links on
 * its inner axis and the network on its outer one; every axis of a
 * one-node stage's mesh is the node's (a 2-D one splits the node, cp x
 * tp: its outer axis is no network).  Without a stage over nodes, the
 * network's is what a p2p across nodes took (bytes over the plan's p2p
 * time). */
static void bandwidths(ctx_t *c) {
  const strata_plan_t *p = c->p;
  st__traffic_t *t = c->t;
  for (int s = 0; s < p->n_stages; s++) {
    const strata_mesh_t *m = &p->stages[s].mesh;
    int inner = m->ndim == 2 ? 1 : 0;
    if (p->stages[s].nodes > 1 && m->ndim == 2 && m->shape[0] > 1) {
      if (!t->intra_bw) t->intra_bw = m->axis[1].bandwidth;
      if (!t->inter_bw) t->inter_bw = m->axis[0].bandwidth;
    } else if (p->stages[s].nodes <= 1 && !t->intra_bw) {
      t->intra_bw = m->axis[inner].bandwidth;
    }
  }
  for (int s = 0; !t->inter_bw && p->p2p_seconds && s + 1 < p->n_stages; s++) {
    const prank_t *a = &c->rank[p->stages[s].rank];
    const prank_t *b = &c->rank[p->stages[s + 1].rank];
    if (a->base / c->G != b->base / c->G && p->p2p_seconds[s] > 0)
      t->inter_bw = pp_boundary(c, a) / p->p2p_seconds[s];
  }
}

/* The node size: given, else the stages' (a stage over nodes spans
 * whole ones), else 8 GPUs as the page's drawing takes. */
static int node_size(const strata_plan_t *p, int given) {
  if (given > 0) return given;
  for (int s = 0; s < p->n_stages; s++)
    if (p->stages[s].nodes > 1) return p->stages[s].gpus_per_node;
  return p->devices > 0 && p->devices < 8 ? p->devices : 8;
}

static int setup(ctx_t *c, int gpus_per_node, int max_cells) {
  const strata_plan_t *p = c->p;
  st__traffic_t *t = c->t;
  int base = 0;
  c->G = node_size(p, gpus_per_node);
  c->cp = plan_cp(p);
  c->sp = p->sequence_parallel > 0;
  c->act =
      (double)p->micro_batch * ((double)p->seq_len / c->cp) * p->hidden * 2.0;
  if (!(c->rank = strata_calloc((size_t)p->pp, sizeof *c->rank)))
    return strata_error(STRATA_ENOMEM, "out of memory");
  for (int r = 0; r < p->pp; r++) {
    rank_of(c, r, base, &c->rank[r]);
    base += c->rank[r].n;
  }
  t->devices = base;
  t->gpus_per_node = c->G;
  int nodes = (base + c->G - 1) / c->G;
  t->fold = base <= max_cells    ? ST__FOLD_DEVICES
            : nodes <= max_cells ? ST__FOLD_NODES
                                 : ST__FOLD_STAGES;
  t->n = t->fold == ST__FOLD_DEVICES ? base
         : t->fold == ST__FOLD_NODES ? nodes
                                     : p->pp;
  size_t cells = (size_t)ST__TR_KINDS * t->n * t->n;
  t->bytes = strata_calloc(cells, sizeof *t->bytes);
  t->seconds = strata_calloc(cells, sizeof *t->seconds);
  if (!t->bytes || !t->seconds)
    return strata_error(STRATA_ENOMEM, "out of memory");
  return 0;
}

int st__traffic(const strata_plan_t *p, int gpus_per_node, int max_cells,
                st__traffic_t *t) {
  ctx_t c = {p, t, 0, 0, 0, 0, NULL};
  int rc;
  memset(t, 0, sizeof *t);
  t->dev = p && p->npu ? "NPU" : "GPU";
  if (!p || p->pp < 1 || p->dp < 1 || p->n_stages < 1 || !p->stages ||
      !p->ranks)
    return strata_error(STRATA_EINVAL, "traffic: a plan with no stage");
  if (max_cells < 1) max_cells = 1;
  if ((rc = setup(&c, gpus_per_node, max_cells))) goto out;
  bandwidths(&c);
  int ep = p->experts > 0 && p->ep > 1 ? p->ep : 1;
  int etp = p->experts > 0 && p->etp > 0 ? p->etp : p->tp;
  for (int r = 0; r < p->pp; r++) {
    const prank_t *k = &c.rank[r];
    /* the experts' groups tile the rank's devices (devices.c checks as
     * much); a rank they do not tile sends no all-to-all */
    int e = etp > 0 && (long long)etp * ep <= k->n && k->n % (etp * ep) == 0
                ? ep
                : 1;
    rank_traffic(&c, k, e, etp > 0 ? etp : 1);
  }
  pp_traffic(&c);
out:
  strata_free(c.rank);
  if (rc) st__traffic_free(t);
  return rc;
}

void st__traffic_free(st__traffic_t *t) {
  if (!t) return;
  strata_free(t->bytes);
  strata_free(t->seconds);
  memset(t, 0, sizeof *t);
}
