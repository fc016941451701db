/*
 * build.c - assemble the auxiliary graph of a stage: which operators (and
 * instances of repeated layers) it holds, their strategies and costs, and
 * the edges along which tensors flow (see stage.h for repeated layers).
 */
#include <string.h>

#include "intraop/stage.h"

typedef struct {
  int *info_of; /* op -> opinfo index or -1 */
  int *base;    /* op -> first node */
  int *n_inst;  /* op -> nodes of this op */
  int *inst0;   /* block -> first instance (within the block) in stage */
  int *k;       /* block -> instances in stage */
} index_t;

static void index_free(index_t *ix) {
  strata_free(ix->info_of);
  strata_free(ix->base);
  strata_free(ix->n_inst);
  strata_free(ix->inst0);
  strata_free(ix->k);
}

static int resolve_opts(const strata_graph_t *g, const strata_stage_opts_t *o,
                        st__stage_t *st, int *pro, int *epi) {
  int L = strata_graph_layers(g);
  strata_stage_opts_t *r = &st->o;
  *r = *o;
  if (r->layer_begin < 0) r->layer_begin = 0;
  if (r->layer_end < 0) r->layer_end = L;
  if (r->layer_begin > r->layer_end || r->layer_end > L)
    return strata_error(STRATA_EINVAL,
                        "layers [%d, %d) are outside the "
                        "model's %d layers",
                        r->layer_begin, r->layer_end, L);
  if (r->zero_stage < 0 || r->zero_stage > 3)
    return strata_error(STRATA_EINVAL, "ZeRO stage %d: must be 0 to 3",
                        r->zero_stage);
  if (r->alpha < 0) return strata_error(STRATA_EINVAL, "alpha must be >= 0");
  int n = strata_mesh_devices(&r->mesh);
  if (n < 1 || r->mesh.ndim < 1 || r->mesh.ndim > STRATA_MESH_MAX_DIMS)
    return strata_error(STRATA_EINVAL, "bad device mesh");
  if (r->in_flight < 1) r->in_flight = 1;
  if (r->micro_batches < 1) r->micro_batches = 1;
  if (r->outer_dp < 1) r->outer_dp = 1;
  if (r->cp < 1) r->cp = 1;
  if (r->ep_outer < 1) r->ep_outer = 1;
  if (!(r->moe_imbalance >= 1)) r->moe_imbalance = 1;
  if (r->cp > 1 && (r->mesh.shape[0] != r->cp || r->cp_comm < 0 ||
                    r->cp_comm > STRATA_CP_ALLGATHER))
    return strata_error(STRATA_EINVAL,
                        "context parallelism %d needs a mesh whose axis 0 "
                        "has %d devices (it has %d)",
                        r->cp, r->cp, r->mesh.shape[0]);
  if (r->ep_outer > 1 && !(r->ep_link.bandwidth > 0 && r->ep_link.latency >= 0))
    return strata_error(STRATA_EINVAL,
                        "expert parallelism across %d replicas needs the "
                        "link they exchange tokens over",
                        r->ep_outer);
  if (!(r->perf.peak_flops > 0 && r->perf.hbm_bandwidth > 0 &&
        r->perf.gemm_max > 0 && r->perf.mem_eff > 0))
    return strata_error(STRATA_EINVAL,
                        "the device's performance figures are missing or "
                        "not positive");
  if (r->fastest_bandwidth <= 0)
    for (int a = 0; a < r->mesh.ndim; a++)
      if (r->mesh.axis[a].bandwidth > r->fastest_bandwidth)
        r->fastest_bandwidth = r->mesh.axis[a].bandwidth;
  st->ctx.moe_factor = 1.0;
  for (int i = 0; i < g->n_ops; i++)
    if (g->ops[i].kind == STRATA_OP_MOE_DISPATCH) {
      if (g->ops[i].capacity <= 0) st->ctx.moe_factor = r->moe_imbalance;
      break;
    }
  *pro = r->with_prologue < 0 ? r->layer_begin == 0 : r->with_prologue;
  *epi = r->with_epilogue < 0 ? r->layer_end == L : r->with_epilogue;
  st->layers = r->layer_end - r->layer_begin;
  st->ctx.g = g;
  st->ctx.o = &st->o;
  st->ctx.m = &st->o.mesh;
  st->ctx.devices = n;
  return 0;
}

static int op_included(const strata_graph_t *g, const index_t *ix, int i,
                       int pro, int epi) {
  const strata_op_t *op = &g->ops[i];
  if (op->block >= 0) return ix->k[op->block] > 0;
  int before = g->n_blocks == 0 || i < g->blocks[0].first_op;
  return before ? pro : epi;
}

static int alloc_index(const strata_graph_t *g, index_t *ix) {
  memset(ix, 0, sizeof *ix);
  ix->info_of = strata_malloc(sizeof(int) * (size_t)(g->n_ops + 1));
  ix->base = strata_malloc(sizeof(int) * (size_t)(g->n_ops + 1));
  ix->n_inst = strata_malloc(sizeof(int) * (size_t)(g->n_ops + 1));
  ix->inst0 = strata_malloc(sizeof(int) * (size_t)(g->n_blocks + 1));
  ix->k = strata_malloc(sizeof(int) * (size_t)(g->n_blocks + 1));
  if (!ix->info_of || !ix->base || !ix->n_inst || !ix->inst0 || !ix->k)
    return strata_error(STRATA_ENOMEM, "out of memory");
  return 0;
}

static int fill_index(const strata_graph_t *g, st__stage_t *st, index_t *ix,
                      int pro, int epi) {
  int lb = st->o.layer_begin, le = st->o.layer_end, n_info = 0, n_nodes = 0;
  for (int b = 0; b < g->n_blocks; b++) {
    const strata_block_t *bl = &g->blocks[b];
    int lo = lb > bl->layer0 ? lb : bl->layer0;
    int hi = le < bl->layer0 + bl->repeat ? le : bl->layer0 + bl->repeat;
    ix->k[b] = hi > lo ? hi - lo : 0;
    ix->inst0[b] = lo - bl->layer0;
  }
  for (int i = 0; i < g->n_ops; i++) {
    ix->info_of[i] = -1;
    ix->n_inst[i] = 0;
    if (!op_included(g, ix, i, pro, epi)) continue;
    int b = g->ops[i].block;
    ix->info_of[i] = n_info++;
    ix->base[i] = n_nodes;
    ix->n_inst[i] = (b >= 0 && !st->o.homogeneous) ? ix->k[b] : 1;
    n_nodes += ix->n_inst[i];
  }
  st->n_info = n_info;
  st->n_nodes = n_nodes;
  st->info = strata_calloc((size_t)n_info + 1, sizeof *st->info);
  st->nodes = strata_calloc((size_t)n_nodes + 1, sizeof *st->nodes);
  if (!st->info || !st->nodes)
    return strata_error(STRATA_ENOMEM, "out of memory");
  return 0;
}

static int is_attention_out(const strata_graph_t *g, const strata_op_t *op) {
  if (op->n_out < 1) return 0;
  const strata_tensor_t *t = &g->tensors[op->out[0]];
  return t->ndim >= 2 && t->shape[t->ndim - 1] == g->seq_len &&
         t->shape[t->ndim - 2] == g->seq_len && g->seq_len > 1;
}

/* Slots of op whose saved storage an earlier op of the stage saves. */
static unsigned skip_saved(const strata_graph_t *g, const strata_op_t *op,
                           unsigned char *saved) {
  unsigned sv = strata_op_saves(g, op), skip = 0;
  for (int i = 0; i < op->n_in + op->n_out; i++) {
    unsigned bit =
        i < op->n_in ? STRATA_SAVE_IN(i) : STRATA_SAVE_OUT(i - op->n_in);
    int t = i < op->n_in ? op->in[i] : op->out[i - op->n_in];
    if (!(sv & bit)) continue;
    int root = strata_tensor_storage(g, t);
    if (saved[root] & 2) skip |= 1u << i;
    saved[root] |= 2;
  }
  return skip;
}

/* Selective recompute of Megatron-LM's modules: the slots a recomputed
 * module makes again (its internal tensors; bit 31: the op's own extra
 * saved state, inside a module). */
static unsigned module_skip(const strata_graph_t *g, const unsigned *mods_of,
                            int i, unsigned mods) {
  const strata_op_t *op = &g->ops[i];
  unsigned skip = 0;
  if (!mods) return 0;
  for (int s = 0; s < op->n_in + op->n_out; s++) {
    int t = s < op->n_in ? op->in[s] : op->out[s - op->n_in];
    if (st__module_drops(g, mods_of, t, mods)) skip |= 1u << s;
  }
  return skip | ((mods_of[i] & mods) ? 1u << 31 : 0);
}

static int fill_ops(const strata_graph_t *g, st__stage_t *st, const index_t *ix,
                    unsigned char *seen, unsigned mods,
                    const unsigned *mods_of) {
  for (int i = 0; i < g->n_ops; i++) {
    int id = ix->info_of[i];
    if (id < 0) continue;
    const strata_op_t *op = &g->ops[i];
    st__opinfo_t *in = &st->info[id];
    in->op = i;
    in->fixed = -1;
    for (int s = 0; s < op->n_in; s++) {
      const strata_tensor_t *t = &g->tensors[op->in[s]];
      if (t->kind != STRATA_TENSOR_PARAM || (seen[op->in[s]] & 1)) continue;
      seen[op->in[s]] |= 1;
      in->owns |= 1u << s;
    }
    if (op->block >= 0) {
      const strata_block_t *bl = &g->blocks[op->block];
      in->is_ckpt = st->o.recompute == STRATA_RECOMPUTE_FULL &&
                    g->tensors[bl->output].producer == i;
      in->in_recompute =
          st->o.recompute == STRATA_RECOMPUTE_FULL ||
          (st->o.recompute == STRATA_RECOMPUTE_SELECTIVE &&
           (mods ? (mods_of[i] & mods) != 0 : is_attention_out(g, op)));
    }
    int rc = st__opdims(g, op, &in->dims);
    if (!rc)
      rc =
          st__strategies_g(g, &in->dims, &st->o.mesh, &in->strat, &in->n_strat);
    if (rc) return rc;
    if (in->n_strat == 0)
      return strata_error(STRATA_EBADINPUT,
                          "op '%s' (%s) has no valid "
                          "strategy on a %d-device mesh: its dimensions do "
                          "not divide by the mesh axes",
                          op->name, strata_op_kind_name(op->kind),
                          st->ctx.devices);
    in->cost = strata_calloc((size_t)in->n_strat, sizeof *in->cost);
    if (!in->cost) return strata_error(STRATA_ENOMEM, "out of memory");
    unsigned skip = skip_saved(g, op, seen) | module_skip(g, mods_of, i, mods);
    for (int s = 0; s < in->n_strat; s++)
      st__op_cost(&st->ctx, op, &in->dims, &in->strat[s], in->owns, skip,
                  in->is_ckpt, in->in_recompute, &in->cost[s]);
  }
  return 0;
}

/* Every op's info; with recompute modules, each op's module read once. */
static int fill_info(const strata_graph_t *g, st__stage_t *st,
                     const index_t *ix, unsigned char *seen) {
  unsigned mods = st->o.recompute == STRATA_RECOMPUTE_SELECTIVE
                      ? st->o.recompute_modules
                      : 0;
  unsigned *mods_of = NULL;
  if (mods) {
    mods_of = strata_calloc((size_t)g->n_ops + 1, sizeof *mods_of);
    if (!mods_of) return strata_error(STRATA_ENOMEM, "out of memory");
    st__graph_modules(g, mods_of);
  }
  int rc = fill_ops(g, st, ix, seen, mods, mods_of);
  strata_free(mods_of);
  return rc;
}

static void fill_nodes(const strata_graph_t *g, st__stage_t *st,
                       const index_t *ix) {
  for (int i = 0; i < g->n_ops; i++) {
    if (ix->info_of[i] < 0) continue;
    int b = g->ops[i].block;
    for (int j = 0; j < ix->n_inst[i]; j++) {
      st__node_t *n = &st->nodes[ix->base[i] + j];
      n->info = ix->info_of[i];
      n->mult = (b >= 0 && st->o.homogeneous) ? ix->k[b] : 1;
    }
  }
}

/* An edge from a node to itself: a one-op layer whose output feeds the
 * next instance of the same op, which a single node stands for (repeats
 * folded, or the stage's only instance wrapping around).  Both ends take
 * the same strategy, so the resharding is the diagonal of the edge's cost
 * and belongs to the node's own communication: the ILP's edges join two
 * different nodes. */
static void add_self_edge(st__stage_t *st, int u, int uslot, int vslot,
                          int tensor, double mult) {
  const st__node_t *n = &st->nodes[u];
  st__opinfo_t *in = &st->info[n->info];
  double k = mult / (n->mult > 0 ? n->mult : 1);
  for (int s = 0; s < in->n_strat; s++)
    in->cost[s].comm +=
        k * st__edge_cost(&st->ctx, tensor, &in->dims, &in->strat[s], uslot,
                          &in->dims, &in->strat[s], vslot);
}

static int add_edge(st__stage_t *st, int u, int v, int uslot, int vslot,
                    int tensor, double mult) {
  if (mult <= 0) return 0;
  if (u == v) {
    add_self_edge(st, u, uslot, vslot, tensor, mult);
    return 0;
  }
  if (st->n_edges == st->cap_edges) {
    int cap = st->cap_edges ? 2 * st->cap_edges : 64;
    st__edge_t *e = strata_realloc(st->edges, sizeof *e * (size_t)cap);
    if (!e) return strata_error(STRATA_ENOMEM, "out of memory");
    st->edges = e;
    st->cap_edges = cap;
  }
  st__edge_t *e = &st->edges[st->n_edges++];
  e->u = u;
  e->v = v;
  e->uslot = uslot;
  e->vslot = vslot;
  e->tensor = tensor;
  e->mult = mult;
  return 0;
}

static int out_slot(const strata_graph_t *g, int op, int tensor) {
  for (int k = 0; k < g->ops[op].n_out; k++)
    if (g->ops[op].out[k] == tensor) return g->ops[op].n_in + k;
  return -1;
}

/* The node holding the last instance of op p in the model, if the stage
 * has it (a block's last instance may belong to a later stage). */
static int last_node(const strata_graph_t *g, const index_t *ix, int p) {
  if (ix->info_of[p] < 0) return -1;
  int b = g->ops[p].block;
  if (b >= 0 && ix->inst0[b] + ix->k[b] != g->blocks[b].repeat) return -1;
  return ix->base[p] + ix->n_inst[p] - 1;
}

static int edges_of_input(const strata_graph_t *g, st__stage_t *st,
                          const index_t *ix, int w, int slot) {
  const strata_op_t *op = &g->ops[w];
  int t = op->in[slot], p = g->tensors[t].producer, bw = op->block;
  if (p < 0) return 0;
  int us = out_slot(g, p, t), rc = 0;
  double m = (bw >= 0 && st->o.homogeneous) ? ix->k[bw] : 1;
  if (bw >= 0 && g->ops[p].block == bw) { /* inside one layer */
    for (int j = 0; j < ix->n_inst[w] && !rc; j++)
      rc = add_edge(st, ix->base[p] + j, ix->base[w] + j, us, slot, t, m);
    return rc;
  }
  if (bw >= 0 && t == g->blocks[bw].input) { /* the residual stream */
    int q = g->tensors[g->blocks[bw].output].producer;
    int qs = out_slot(g, q, g->blocks[bw].output);
    int u = ix->inst0[bw] == 0 ? last_node(g, ix, p) : -1;
    /* A first layer whose producer lies outside the stage is fed by a
     * layer like itself (the previous stage's last): count that edge too,
     * so that a layout's cost at the stage boundary is not hidden. */
    double wrap = ix->k[bw] - 1 + (u < 0 ? 1 : 0);
    if (st->o.homogeneous) {
      rc = add_edge(st, ix->base[q], ix->base[w], qs, slot,
                    g->blocks[bw].output, wrap);
    } else {
      int n = ix->n_inst[w];
      for (int j = 0; j < n && !rc; j++)
        if (j > 0 || u < 0)
          rc = add_edge(st, ix->base[q] + (j > 0 ? j - 1 : n - 1),
                        ix->base[w] + j, qs, slot, g->blocks[bw].output, 1);
    }
    if (rc || u < 0) return rc;
    return add_edge(st, u, ix->base[w], us, slot, t, 1);
  }
  int u = last_node(g, ix, p);
  for (int j = 0; j < ix->n_inst[w] && !rc && u >= 0; j++)
    rc = add_edge(st, u, ix->base[w] + j, us, slot, t, m);
  return rc;
}

static int fill_edges(const strata_graph_t *g, st__stage_t *st,
                      const index_t *ix) {
  for (int w = 0; w < g->n_ops; w++) {
    if (ix->info_of[w] < 0) continue;
    for (int s = 0; s < g->ops[w].n_in; s++) {
      if (g->tensors[g->ops[w].in[s]].kind != STRATA_TENSOR_ACTIVATION)
        continue;
      int rc = edges_of_input(g, st, ix, w, s);
      if (rc) return rc;
    }
  }
  return 0;
}

int st__stage_build(const strata_graph_t *g, const strata_stage_opts_t *o,
                    st__stage_t *st) {
  index_t ix;
  unsigned char *seen = NULL;
  int pro = 0, epi = 0, rc;
  memset(st, 0, sizeof *st);
  st->g = g;
  memset(&ix, 0, sizeof ix);
  rc = resolve_opts(g, o, st, &pro, &epi);
  if (!rc) rc = alloc_index(g, &ix);
  if (!rc) rc = fill_index(g, st, &ix, pro, epi);
  if (rc) goto out;
  seen = strata_calloc((size_t)g->n_tensors + 1, 1);
  if (!seen) {
    rc = strata_error(STRATA_ENOMEM, "out of memory");
    goto out;
  }
  rc = fill_info(g, st, &ix, seen);
  if (rc) goto out;
  fill_nodes(g, st, &ix);
  rc = fill_edges(g, st, &ix);
out:
  strata_free(seen);
  index_free(&ix);
  if (rc) st__stage_free(st);
  return rc;
}

void st__stage_free(st__stage_t *st) {
  /* info is NULL with n_info set when its allocation failed */
  for (int i = 0; st->info && i < st->n_info; i++) {
    strata_free(st->info[i].strat);
    strata_free(st->info[i].cost);
  }
  strata_free(st->info);
  strata_free(st->nodes);
  strata_free(st->edges);
  st->info = NULL;
  st->nodes = NULL;
  st->edges = NULL;
  st->n_info = st->n_nodes = st->n_edges = 0;
}

void st__node_mults(const st__stage_t *st, int node, double *act_m,
                    double *ckpt_m) {
  const st__node_t *n = &st->nodes[node];
  const strata_op_t *op = &st->g->ops[st->info[n->info].op];
  *ckpt_m = 0;
  *act_m = n->mult * st->o.in_flight;
  if (st->o.recompute != STRATA_RECOMPUTE_FULL || op->block < 0) return;
  /* one layer is recomputed at a time: its activations count once */
  const strata_block_t *bl = &st->g->blocks[op->block];
  int lo = st->o.layer_begin > bl->layer0 ? st->o.layer_begin : bl->layer0;
  int hi = st->o.layer_end < bl->layer0 + bl->repeat ? st->o.layer_end
                                                     : bl->layer0 + bl->repeat;
  *act_m = st->o.homogeneous || hi <= lo ? 1.0 : 1.0 / (hi - lo);
  *ckpt_m = n->mult * st->o.in_flight;
}

double st__node_mem(const st__stage_t *st, int node, int s) {
  const st__node_t *n = &st->nodes[node];
  const st__op_cost_t *c = &st->info[n->info].cost[s];
  double am, cm;
  st__node_mults(st, node, &am, &cm);
  return n->mult * (c->weights + c->grads + c->optimizer) + am * c->act +
         cm * c->ckpt;
}

double st__node_unique(const st__stage_t *st, int node) {
  const st__node_t *n = &st->nodes[node];
  const st__opinfo_t *in = &st->info[n->info];
  const st__op_cost_t *c = &in->cost[0];
  double am, cm, u;
  st__node_mults(st, node, &am, &cm);
  u = n->mult * c->unique + am * c->unique_act;
  if (in->is_ckpt) {
    const strata_op_t *op = &st->g->ops[in->op];
    u += cm * (double)strata_tensor_bytes(&st->g->tensors[op->out[0]]);
  }
  return u;
}
