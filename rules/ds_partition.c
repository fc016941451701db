/*
 * ds_partition.c - the layer split DeepSpeed's PipelineModule gives
 * (--ds-partition-method): its _partition_layers over the layer specs of
 * Megatron-DeepSpeed's GPTModelPipe (megatron/model/gpt_model.py):
 *
 *   _to_float16, EmbeddingPipe, L x ParallelTransformerLayerPipe,
 *   _calculate_moe_loss (a mixture of experts only), LayerNorm (or
 *   RMSNorm), the head (a TiedLayerSpec of EmbeddingPipe when tied, else
 *   LMHeadPipe), float16_to_fp32
 *
 * (deepspeedai/Megatron-DeepSpeed).  bigscience's fork, BLOOM's, adds a
 * transposing lambda before the layers and `undo` after them: no weight
 * for 'type:' or 'parameters', whose splits are the same there, but two
 * more specs for 'uniform', whose split here is deepspeedai's.  The
 * methods (deepspeed/runtime/pipe/module.py, _partition_layers):
 *   uniform      partition_uniform over the specs' count
 *   parameters   partition_balanced over each spec's parameters (a tied
 *                head builds its EmbeddingPipe again and counts all of
 *                it); counted whole here, where each rank counts its
 *                tensor-parallel shard (the norms whole)
 *   type:REGEX   partition_balanced over 1 for the specs whose class name
 *                the regex matches (case-insensitive), 0 for the rest
 * and partition_balanced (deepspeed/runtime/utils.py) is the linear
 * partition's dynamic program minimising the largest part less the
 * smallest, a later boundary winning ties -- run here exactly as there.
 * Strata runs the split when stage 0 holds the embedding, the last stage
 * the head, and each stage a transformer layer.
 */
#include <math.h>
#include <string.h>

#include "pipeline/search.h"

/* Parameters of the ops of [a, b) (each tensor once) and of each layer. */
static double params_of(const strata_graph_t *g, int a, int b) {
  double n = 0;
  for (int t = 0; t < g->n_tensors; t++) {
    const strata_tensor_t *x = &g->tensors[t];
    if (x->kind != STRATA_TENSOR_PARAM) continue;
    int used = 0;
    for (int i = a; i < b && !used; i++)
      for (int k = 0; k < g->ops[i].n_in; k++)
        used |= g->ops[i].in[k] == t;
    if (used) n += (double)strata_tensor_numel(x);
  }
  return n;
}

static double layer_params(const strata_graph_t *g, int l) {
  int b = strata_graph_layer_block(g, l);
  if (b < 0) return 0;
  const strata_block_t *k = &g->blocks[b];
  return params_of(g, k->first_op, k->first_op + k->n_ops);
}

/* The kind of spec i of L + 5 + moe (moe: the loss function after the
 * layers). */
enum { SPEC_FN, SPEC_EMBED, SPEC_LAYER, SPEC_NORM, SPEC_HEAD };

static int spec_kind(int i, int L, int moe) {
  return i == 0             ? SPEC_FN
         : i == 1           ? SPEC_EMBED
         : i < L + 2        ? SPEC_LAYER
         : i < L + 2 + moe  ? SPEC_FN
         : i == L + 2 + moe ? SPEC_NORM
         : i == L + 3 + moe ? SPEC_HEAD
                            : SPEC_FN;
}

/* partition_uniform(num_items, num_parts) */
static void uniform(int n, int m, int *parts) {
  if (n <= m) {
    for (int p = 0; p <= m; p++)
      parts[p] = p < n ? p : n;
    return;
  }
  int chunk = n / m, residual = n - chunk * m;
  for (int p = 0; p <= m; p++)
    parts[p] = p * chunk + (p < residual ? p : residual);
}

/* partition_balanced(weights, num_parts), its ties as numpy's loop breaks
 * them (`>=`: the last k).  0, or -1 out of memory. */
static int balanced(const double *w, int n, int m, int *parts) {
  if (n <= m) {
    uniform(n, m, parts);
    return 0;
  }
  size_t cells = (size_t)(n + 1) * (m + 1);
  double *mx = strata_malloc(cells * sizeof *mx);
  double *mn = strata_malloc(cells * sizeof *mn);
  double *cost = strata_malloc(cells * sizeof *cost);
  int *pos = strata_calloc(cells, sizeof *pos);
  double *ps = strata_calloc((size_t)n + 1, sizeof *ps);
  int rc = mx && mn && cost && pos && ps ? 0 : -1;
  if (!rc) {
#define AT(a, i, j) a[(size_t)(i) * (m + 1) + (j)]
    for (size_t c = 0; c < cells; c++)
      mx[c] = mn[c] = cost[c] = INFINITY;
    for (int i = 1; i <= n; i++)
      ps[i] = ps[i - 1] + w[i - 1];
    AT(mx, 0, 0) = 0;
    AT(cost, 0, 0) = 0;
    for (int i = 1; i <= n; i++)
      for (int j = 1; j <= (i < m ? i : m); j++)
        for (int k = 0; k < i; k++) {
          double seg = ps[i] - ps[k];
          double hi = AT(mx, k, j - 1) > seg ? AT(mx, k, j - 1) : seg;
          double lo = AT(mn, k, j - 1) < seg ? AT(mn, k, j - 1) : seg;
          double c = hi - lo;
          if (AT(cost, i, j) >= c) {
            AT(cost, i, j) = c;
            AT(mx, i, j) = hi;
            AT(mn, i, j) = lo;
            AT(pos, i, j) = k;
          }
        }
    parts[m] = n;
    for (int i = m; i >= 1; i--)
      parts[i - 1] = AT(pos, parts[i], i);
#undef AT
  }
  strata_free(mx);
  strata_free(mn);
  strata_free(cost);
  strata_free(pos);
  strata_free(ps);
  return rc;
}

int st__ds_partition(const strata_graph_t *g, int layers, unsigned specs,
                     int method, int pp, int *n) {
  int tied = (specs & ST__DS_TIED) != 0, moe = (specs & ST__DS_MOE) != 0;
  int L = layers, S = L + 5 + moe, rc = 0;
  if (pp < 2 || pp > ST__MAX_PP || L < pp) return -1;
  double *w = strata_calloc((size_t)S, sizeof *w);
  int *parts = strata_calloc((size_t)pp + 1, sizeof *parts);
  if (!w || !parts) {
    strata_free(w);
    strata_free(parts);
    return -2;
  }
  int m = STRATA_CHOICE(method);
  if (m == STRATA_DS_PARAMETERS && !g) m = STRATA_DS_TYPE_TRANSFORMER;
  /* the embedding's, the norm's and the head's parameters: the head's
   * weight of what follows the layers, the norm the rest; a tied head
   * builds the whole EmbeddingPipe again, and counts what it does */
  double pre = 0, norm = 0, head = 0;
  if (m == STRATA_DS_PARAMETERS && g->n_blocks > 0) {
    const strata_block_t *f = &g->blocks[0], *e = &g->blocks[g->n_blocks - 1];
    int h = strata_graph_find_tensor(g, tied ? "embed.weight" : "head.weight");
    double post = params_of(g, e->first_op + e->n_ops, g->n_ops);
    pre = params_of(g, 0, f->first_op);
    double w_head = h >= 0 ? (double)strata_tensor_numel(&g->tensors[h]) : 0;
    norm = post > w_head ? post - w_head : 0;
    head = tied ? pre : w_head;
  }
  for (int i = 0; i < S; i++) {
    int k = spec_kind(i, L, moe);
    switch (m) {
    case STRATA_DS_TYPE_TRANSFORMER:
      w[i] = k == SPEC_LAYER;
      break;
    case STRATA_DS_TYPE_EMBEDDING:
      w[i] = k == SPEC_EMBED || (k == SPEC_HEAD && tied);
      break;
    case STRATA_DS_TYPE_TRANSFORMER_EMBEDDING:
      w[i] = k == SPEC_LAYER || k == SPEC_EMBED || (k == SPEC_HEAD && tied);
      break;
    case STRATA_DS_PARAMETERS:
      w[i] = k == SPEC_EMBED   ? pre
             : k == SPEC_LAYER ? layer_params(g, i - 2)
             : k == SPEC_NORM  ? norm
             : k == SPEC_HEAD  ? head
                               : 0;
      break;
    default:
      break;
    }
  }
  if (m == STRATA_DS_UNIFORM)
    uniform(S, pp, parts);
  else if (balanced(w, S, pp, parts))
    rc = -2;
  /* transformer layers of each stage; the embedding on the first, the
   * head on the last */
  for (int s = 0; s < pp && !rc; s++) {
    n[s] = 0;
    for (int i = parts[s]; i < parts[s + 1]; i++)
      n[s] += spec_kind(i, L, moe) == SPEC_LAYER;
    if (n[s] < 1) rc = -1;
  }
  if (!rc && (parts[1] <= 1 || parts[pp - 1] > L + 3 + moe)) rc = -1;
  strata_free(w);
  strata_free(parts);
  return rc ? rc : pp;
}
