/*
 * solve.c - turn a stage's auxiliary graph into the ILP (intraop/ilp.h),
 * solve it, and report the chosen strategies with their memory and time.
 *
 * The ILP works in MiB so that GLPK's coefficients stay near 1 whatever the
 * model size; results are scaled back to bytes.  Redundancy is N times a
 * node's per-device bytes minus the unique bytes it must hold anyway, a
 * constant per node, so the objective is the method's: redundancy +
 * alpha * communication (bytes-equivalent on the fastest link).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "intraop/ilp.h"
#include "intraop/solve.h"
#include "intraop/stage.h"

#define SCALE 1048576.0

typedef struct {
  st__ilp_problem_t p;
  double *pool; /* every coefficient array, one allocation */
} problem_t;

static double node_comm(const st__stage_t *st, int node, int s) {
  const st__node_t *n = &st->nodes[node];
  return n->mult * st->info[n->info].cost[s].comm;
}

static double edge_time(const st__stage_t *st, const st__edge_t *e, int su,
                        int sv) {
  const st__opinfo_t *iu = &st->info[st->nodes[e->u].info];
  const st__opinfo_t *iv = &st->info[st->nodes[e->v].info];
  return e->mult * st__edge_cost(&st->ctx, e->tensor, &iu->dims, &iu->strat[su],
                                 e->uslot, &iv->dims, &iv->strat[sv], e->vslot);
}

/* Strategy index seen by the ILP -> the op's own index. */
static int strat_of(const st__stage_t *st, int node, int k) {
  const st__opinfo_t *in = &st->info[st->nodes[node].info];
  return in->fixed >= 0 ? in->fixed : k;
}

static int n_strat(const st__stage_t *st, int node) {
  const st__opinfo_t *in = &st->info[st->nodes[node].info];
  return in->fixed >= 0 ? 1 : in->n_strat;
}

static double weight_red(const st__stage_t *st) {
  return st->o.objective == STRATA_OBJ_MIN_COMM ? 0.0 : 1.0;
}

static double weight_comm(const st__stage_t *st) {
  double a = st->o.objective == STRATA_OBJ_MIN_COMM ? 1.0 : st->o.alpha;
  return a * st->o.fastest_bandwidth;
}

/* The cluster and model readers refuse every value that would make a cost
 * non-finite, so one reaching the ILP is Strata's bug: say so, with the op
 * and strategy, rather than blame the input.  node2 >= 0 (with s2): the
 * other end of an edge. */
static int not_finite(const st__stage_t *st, int node, int s, int node2, int s2,
                      const char *what, double v) {
  char a[128], b[128] = "";
  const st__opinfo_t *in = &st->info[st->nodes[node].info];
  const strata_op_t *op = &st->g->ops[in->op], *op2 = NULL;
  st__strat_name(&in->dims, op, &st->o.mesh, &in->strat[s], a, sizeof a);
  if (node2 >= 0) {
    const st__opinfo_t *in2 = &st->info[st->nodes[node2].info];
    op2 = &st->g->ops[in2->op];
    st__strat_name(&in2->dims, op2, &st->o.mesh, &in2->strat[s2], b, sizeof b);
  }
  return strata_error(STRATA_EINTERNAL,
                      "internal error: the %s of op '%s' under strategy %s%s%s"
                      "%s%s is %g, not a finite number; please report it with "
                      "the model and cluster",
                      what, op->name, a, op2 ? " to op '" : "",
                      op2 ? op2->name : "", op2 ? "' under " : "", b, v);
}

static int node_coefs(const st__stage_t *st, int i, st__ilp_node_t *n) {
  const st__opinfo_t *in = &st->info[st->nodes[i].info];
  double wr = weight_red(st), wc = weight_comm(st);
  int N = st->ctx.devices;
  for (int k = 0; k < n->n_strat; k++) {
    int s = strat_of(st, i, k);
    double mem = st__node_mem(st, i, s);
    n->mem[k] = mem / SCALE;
    n->transient[k] = in->cost[s].transient / SCALE;
    n->cost[k] = (wr * N * mem + wc * node_comm(st, i, s)) / SCALE;
    if (!isfinite(n->mem[k])) return not_finite(st, i, s, -1, 0, "memory", mem);
    if (!isfinite(n->transient[k]))
      return not_finite(st, i, s, -1, 0, "transient memory",
                        in->cost[s].transient);
    if (!isfinite(n->cost[k]))
      return not_finite(st, i, s, -1, 0, "cost", n->cost[k] * SCALE);
  }
  return 0;
}

static int edge_coefs(const st__stage_t *st, const st__edge_t *se,
                      st__ilp_edge_t *pe) {
  int nu = n_strat(st, se->u), nv = n_strat(st, se->v);
  double wc = weight_comm(st);
  for (int i = 0; i < nu; i++)
    for (int j = 0; j < nv; j++) {
      int su = strat_of(st, se->u, i), sv = strat_of(st, se->v, j);
      double c = wc * edge_time(st, se, su, sv) / SCALE;
      if (!isfinite(c))
        return not_finite(st, se->u, su, se->v, sv, "resharding cost",
                          c * SCALE);
      pe->cost[i * nv + j] = c;
    }
  return 0;
}

static int build_problem(const st__stage_t *st, problem_t *pr) {
  size_t total = 0;
  memset(pr, 0, sizeof *pr);
  for (int i = 0; i < st->n_nodes; i++)
    total += 3 * (size_t)n_strat(st, i);
  for (int e = 0; e < st->n_edges; e++)
    total += (size_t)n_strat(st, st->edges[e].u) *
             (size_t)n_strat(st, st->edges[e].v);
  pr->pool = strata_malloc(sizeof(double) * (total + 1));
  pr->p.nodes = strata_calloc((size_t)st->n_nodes + 1, sizeof *pr->p.nodes);
  pr->p.edges = strata_calloc((size_t)st->n_edges + 1, sizeof *pr->p.edges);
  if (!pr->pool || !pr->p.nodes || !pr->p.edges)
    return strata_error(STRATA_ENOMEM, "out of memory building the ILP");
  double *q = pr->pool, wr = weight_red(st);
  int rc;
  pr->p.n_nodes = st->n_nodes;
  pr->p.n_edges = st->n_edges;
  for (int i = 0; i < st->n_nodes; i++) {
    st__ilp_node_t *n = &pr->p.nodes[i];
    n->n_strat = n_strat(st, i);
    n->cost = q;
    n->mem = q + n->n_strat;
    n->transient = q + 2 * n->n_strat;
    q += 3 * n->n_strat;
    if ((rc = node_coefs(st, i, n))) return rc;
    pr->p.obj_const -= wr * st__node_unique(st, i) / SCALE;
  }
  for (int e = 0; e < st->n_edges; e++) {
    const st__edge_t *se = &st->edges[e];
    st__ilp_edge_t *pe = &pr->p.edges[e];
    pe->u = se->u;
    pe->v = se->v;
    pe->cost = q;
    q += (size_t)n_strat(st, se->u) * n_strat(st, se->v);
    if ((rc = edge_coefs(st, se, pe))) return rc;
  }
  if (!isfinite(pr->p.obj_const))
    return strata_error(STRATA_EINTERNAL,
                        "internal error: the unique bytes of the stage are "
                        "%g, not a finite number; please report it with the "
                        "model and cluster",
                        -pr->p.obj_const * SCALE);
  pr->p.mem_budget = st->o.memory_budget > 0 ? st->o.memory_budget / SCALE : 0;
  return 0;
}

static void problem_free(problem_t *pr) {
  strata_free(pr->pool);
  strata_free(pr->p.nodes);
  strata_free(pr->p.edges);
}

/* The stage's operators, strategies and costs, with the fixed layouts of
 * the Megatron and DP objectives. */
static int build_stage(const strata_graph_t *g, const strata_stage_opts_t *o,
                       st__stage_t *st) {
  int rc = st__stage_build(g, o, st);
  if (rc) return rc;
  if (st->o.objective == STRATA_OBJ_MEGATRON ||
      st->o.objective == STRATA_OBJ_DP)
    rc = st__fixed_layouts(st);
  if (rc) st__stage_free(st);
  return rc;
}

static int prepare(const strata_graph_t *g, const strata_stage_opts_t *o,
                   st__stage_t *st, problem_t *pr) {
  int rc = build_stage(g, o, st);
  return rc ? rc : build_problem(st, pr);
}

static void ilp_opts(const strata_stage_opts_t *o, st__ilp_opts_t *io) {
  st__ilp_opts_init(io);
  io->time_limit = o->time_limit;
  io->mip_gap = o->mip_gap;
  io->presolve_reduce = o->reduce;
}

int strata_stage_export_lp(const strata_graph_t *g,
                           const strata_stage_opts_t *o, const char *path) {
  st__stage_t st;
  problem_t pr;
  st__ilp_opts_t io;
  memset(&pr, 0, sizeof pr);
  int rc = prepare(g, o, &st, &pr);
  if (!rc) {
    ilp_opts(o, &io);
    rc = st__ilp_write_lp(&pr.p, &io, path);
  }
  problem_free(&pr);
  st__stage_free(&st);
  return rc;
}

int st__stage_report(const st__stage_t *st, const st__ilp_result_t *ir,
                     strata_stage_result_t *r);

/* The ILP of a built stage at o's micro-batches in flight and time limit
 * (all the stage's costs hold for any: only the memory's multipliers
 * read it), solved and reported into *out. */
static int solve_built(st__stage_t *st, const strata_stage_opts_t *o, double t0,
                       strata_stage_result_t **out) {
  problem_t pr;
  st__ilp_opts_t io;
  st__ilp_result_t ir;
  strata_stage_result_t *r = NULL;
  memset(&pr, 0, sizeof pr);
  memset(&ir, 0, sizeof ir);
  *out = NULL;
  st->o.in_flight = o->in_flight < 1 ? 1 : o->in_flight;
  st->o.time_limit = o->time_limit;
  int rc = build_problem(st, &pr);
  if (rc) goto out;
  ilp_opts(&st->o, &io);
  rc = st__ilp_solve(&pr.p, &io, &ir);
  if (rc) goto out;
  r = strata_calloc(1, sizeof *r);
  if (!r) {
    rc = strata_error(STRATA_ENOMEM, "out of memory");
    goto out;
  }
  rc = st__stage_report(st, &ir, r);
  if (rc) goto out;
  r->objective = ir.objective * SCALE;
  r->objective_bound = ir.bound * SCALE;
  r->gap = ir.gap;
  r->min_memory_bytes = ir.min_memory * SCALE;
  r->solve_seconds = strata_now() - t0;
  r->int_vars = ir.int_vars;
  r->cont_vars = ir.cont_vars;
  r->rows = ir.rows;
  r->int_vars_before = ir.int_vars_before;
  r->cont_vars_before = ir.cont_vars_before;
  r->rows_before = ir.rows_before;
  *out = r;
  r = NULL;
out:
  strata_stage_result_destroy(r);
  st__ilp_result_free(&ir);
  problem_free(&pr);
  return rc;
}

int strata_stage_solve(const strata_graph_t *g, const strata_stage_opts_t *o,
                       strata_stage_result_t **out) {
  st__stage_t st;
  double t0 = strata_now();
  *out = NULL;
  int rc = build_stage(g, o, &st);
  if (rc) return rc;
  rc = solve_built(&st, o, t0, out);
  st__stage_free(&st);
  return rc;
}

void st__stage_solve_flights(const strata_graph_t *g,
                             const strata_stage_opts_t *const *o, int n,
                             strata_stage_result_t **out, int *rc, char **why) {
  st__stage_t st;
  double t0 = strata_now();
  int built = build_stage(g, o[0], &st);
  for (int i = 0; i < n; i++) {
    out[i] = NULL;
    why[i] = NULL;
    rc[i] = built ? built : solve_built(&st, o[i], t0, &out[i]);
    if (rc[i]) why[i] = strata_strdup(strata_last_error());
    t0 = strata_now();
  }
  if (!built) st__stage_free(&st);
}

static int fill_ops(const st__stage_t *st, const int *choice,
                    strata_stage_result_t *r) {
  char buf[128], pl[96];
  r->ops = strata_calloc((size_t)st->n_nodes + 1, sizeof *r->ops);
  if (!r->ops) return strata_error(STRATA_ENOMEM, "out of memory");
  r->n_ops = st->n_nodes;
  for (int i = 0; i < st->n_nodes; i++) {
    const st__node_t *n = &st->nodes[i];
    const st__opinfo_t *in = &st->info[n->info];
    const strata_op_t *op = &st->g->ops[in->op];
    int s = strat_of(st, i, choice[i]);
    strata_op_choice_t *c = &r->ops[i];
    st__place_t p;
    st__strat_name(&in->dims, op, &st->o.mesh, &in->strat[s], buf, sizeof buf);
    st__placement(&in->dims, &st->o.mesh, &in->strat[s], in->dims.n_in, &p);
    st__place_name(&st->o.mesh, &p, pl, sizeof pl);
    c->name = strata_strdup(op->name);
    c->strategy = strata_strdup(buf);
    c->placement = strata_strdup(pl);
    if (!c->name || !c->strategy || !c->placement)
      return strata_error(STRATA_ENOMEM, "out of memory");
    c->layer = op->layer;
    c->repeat = (int)n->mult;
    c->mem_bytes = st__node_mem(st, i, s);
    c->comm_seconds = node_comm(st, i, s);
  }
  return 0;
}

/* One micro-batch through the stage: compute, and the collectives that
 * the GEMMs next to them do not hide (all of them unless tensor-parallel
 * communication overlap is on: then max(0, comm - GEMM) per direction),
 * of which ring attention's exposed exchange is named apart (the step's
 * cp comm item).  The experts' dispatch and combine all-to-all are kept apart
 * (the step names them): tensor-parallel overlap does not hide them
 * (Transformer Engine's userbuffers overlap the tensor-parallel gathers and
 * reduce-scatters with their GEMMs, not the experts' exchange).  With the
 * experts' all-to-all overlapped (Megatron-LM's batch-level EP
 * overlap: the forward of one micro-batch runs with the backward of
 * another, each one's all-to-all under the other's compute; DeepSeek-V3's
 * DualPipe pairs them the same way), a pair's all-to-all A = a_f + a_b
 * hides under its compute C = c_f + c_b: max(0, A - C) stays exposed,
 * shared by the directions as A is.  Every micro-batch is counted as
 * paired, the steady state's case: the warmup's and cooldown's unpaired
 * passes make it a bound from below. */
static void fill_times(const st__stage_t *st, const int *choice,
                       strata_stage_result_t *r) {
  double cf = 0, cb = 0, mf = 0, mb = 0, gf = 0, gb = 0, af = 0, ab = 0;
  double hf = 0, hb = 0, qf = 0, qb = 0;
  for (int i = 0; i < st->n_nodes; i++) {
    const st__node_t *n = &st->nodes[i];
    const st__op_cost_t *c =
        &st->info[n->info].cost[strat_of(st, i, choice[i])];
    strata_op_kind_t k = st->g->ops[st->info[n->info].op].kind;
    cf += n->mult * c->fwd;
    cb += n->mult * c->bwd;
    hf += n->mult * c->host_fwd;
    hb += n->mult * c->host_bwd;
    qf += n->mult * c->cp_fwd;
    qb += n->mult * c->cp_bwd;
    if (k == STRATA_OP_MOE_DISPATCH || k == STRATA_OP_MOE_COMBINE) {
      af += n->mult * c->comm_fwd;
      ab += n->mult * c->comm_bwd;
    } else {
      mf += n->mult * c->comm_fwd;
      mb += n->mult * c->comm_bwd;
    }
    gf += n->mult * c->gemm_fwd;
    gb += n->mult * c->gemm_bwd;
  }
  for (int e = 0; e < st->n_edges; e++) {
    const st__edge_t *se = &st->edges[e];
    const st__opinfo_t *iu = &st->info[st->nodes[se->u].info];
    const st__opinfo_t *iv = &st->info[st->nodes[se->v].info];
    double f, b;
    st__edge_times(&st->ctx, se->tensor, &iu->dims,
                   &iu->strat[strat_of(st, se->u, choice[se->u])], se->uslot,
                   &iv->dims, &iv->strat[strat_of(st, se->v, choice[se->v])],
                   se->vslot, &f, &b);
    mf += se->mult * f;
    /* a recomputed consumer receives its input again */
    mb += se->mult * (b + (iv->in_recompute ? f : 0));
  }
  if (st->o.tp_comm_overlap) {
    mf = mf > gf ? mf - gf : 0;
    mb = mb > gb ? mb - gb : 0;
  }
  /* of what stays, the ring's exchange last hidden (the overlap is the
   * tensor-parallel collectives' with their GEMMs) */
  r->fwd_cp_seconds = qf < mf ? qf : mf;
  r->bwd_cp_seconds = qb < mb ? qb : mb;
  if (st->o.ep_comm_overlap && af + ab > 0) {
    double a = af + ab, c = cf + cb, left = a > c ? (a - c) / a : 0;
    af *= left;
    ab *= left;
  }
  r->fwd_a2a_seconds = af;
  r->bwd_a2a_seconds = ab;
  mf += af;
  mb += ab;
  r->fwd_comm_seconds = mf;
  r->bwd_comm_seconds = mb;
  /* the host's gaps after: the device idles, hiding no collective */
  r->fwd_host_seconds = hf;
  r->bwd_host_seconds = hb;
  r->fwd_seconds = cf + mf + hf;
  r->bwd_seconds = cb + mb + hb;
}

static void fill_totals(const st__stage_t *st, const int *choice,
                        strata_stage_result_t *r) {
  int N = st->ctx.devices, first_block = -1;
  double peak_t = 0, unique = 0, mem = 0;
  fill_times(st, choice, r);
  for (int i = 0; i < st->n_nodes; i++) {
    const st__node_t *n = &st->nodes[i];
    const st__opinfo_t *in = &st->info[n->info];
    const strata_op_t *op = &st->g->ops[in->op];
    int s = strat_of(st, i, choice[i]);
    const st__op_cost_t *c = &in->cost[s];
    double am, cm;
    st__node_mults(st, i, &am, &cm);
    r->mem.weights += n->mult * c->weights;
    r->mem.gradients += n->mult * c->grads;
    r->mem.optimizer += n->mult * c->optimizer;
    r->mem.expert_weights += n->mult * c->expert_w;
    r->mem.expert_gradients += n->mult * c->expert_g;
    r->mem.expert_optimizer += n->mult * c->expert_o;
    r->mem.activations += am * c->act + cm * c->ckpt;
    if (c->transient > peak_t) peak_t = c->transient;
    mem += st__node_mem(st, i, s);
    unique += st__node_unique(st, i);
    r->comm_seconds += node_comm(st, i, s);
    r->sync_seconds += n->mult * c->sync;
    if (node_comm(st, i, s) > 0)
      strata_log(STRATA_LOG_DEBUG, "op %s: own communication %.3f us", op->name,
                 node_comm(st, i, s) * 1e6);
    r->compute_seconds += n->mult * c->compute;
    if (op->block >= 0 && first_block < 0) first_block = op->block;
    /* one layer: the first node of each op (its first instance) */
    if (op->block >= 0 && op->block == first_block &&
        (i == 0 || st->nodes[i - 1].info != n->info))
      r->activations_per_layer +=
          st->o.recompute == STRATA_RECOMPUTE_FULL ? c->ckpt : c->act;
  }
  for (int e = 0; e < st->n_edges; e++) {
    const st__edge_t *se = &st->edges[e];
    double t = edge_time(st, se, strat_of(st, se->u, choice[se->u]),
                         strat_of(st, se->v, choice[se->v]));
    r->comm_seconds += t;
    if (t > 0)
      strata_log(STRATA_LOG_DEBUG, "edge %s -> %s (%s, x%g): %.3f us",
                 st->g->ops[st->info[st->nodes[se->u].info].op].name,
                 st->g->ops[st->info[st->nodes[se->v].info].op].name,
                 st->g->tensors[se->tensor].name, se->mult, t * 1e6);
  }
  r->mem.transient = peak_t;
  r->mem.total = mem + peak_t;
  r->peak_memory_bytes = r->mem.total;
  r->memory_redundancy_bytes = N * mem - unique;
  if (r->memory_redundancy_bytes < 0) r->memory_redundancy_bytes = 0;
  r->zero_redundancy_bytes = unique / N;
  r->comm_bytes = r->comm_seconds * st->o.fastest_bandwidth;
}

/* The least per-device memory any strategy needs under other options:
 * with a budget of one byte the ILP is infeasible and its exact minimum
 * comes back without GLPK (intraop/ilp.c). */
static double least_memory(const strata_graph_t *g,
                           const strata_stage_opts_t *o) {
  st__stage_t st;
  problem_t pr;
  st__ilp_opts_t io;
  st__ilp_result_t ir;
  strata_stage_opts_t alt = *o;
  double m = INFINITY;
  alt.memory_budget = 1;
  memset(&pr, 0, sizeof pr);
  memset(&ir, 0, sizeof ir);
  if (prepare(g, &alt, &st, &pr) == 0) {
    ilp_opts(&alt, &io);
    if (st__ilp_solve(&pr.p, &io, &ir) == 0) m = ir.min_memory * SCALE;
    st__ilp_result_free(&ir);
  }
  st__stage_free(&st); /* also when prepare failed after building it */
  problem_free(&pr);
  strata_error_clear();
  return m;
}

/* One suggestion: what it would need, and whether that fits. */
static void suggest(strata_buf_t *b, const char *what, double need, double now,
                    double budget) {
  char m[32];
  if (!(need < now * 0.999)) return; /* it would not help */
  strata_buf_printf(b, "%s%s (needs %s%s)", b->len ? "; " : "", what,
                    strata_fmt_bytes(need, m, sizeof m),
                    need <= budget ? ", fits" : "");
}

/* Infeasible: say what the least is, and try what could help -- a higher
 * ZeRO stage, full recompute, both -- reporting only what lowers it. */
static int fill_hint(const st__stage_t *st, const st__ilp_result_t *ir,
                     strata_stage_result_t *r) {
  char need[32], have[32];
  strata_buf_t tips, out;
  double now = ir->min_memory * SCALE, budget = st->o.memory_budget;
  strata_stage_opts_t o = st->o;
  strata_buf_init(&tips);
  strata_buf_init(&out);
  double best = now;
  if (o.zero_stage < 3) {
    o.zero_stage = 3;
    double z = least_memory(st->g, &o);
    suggest(&tips, "ZeRO stage 3 (--zero 3)", z, now, budget);
    best = z < best ? z : best;
    o.zero_stage = st->o.zero_stage;
  }
  if (o.recompute != STRATA_RECOMPUTE_FULL) {
    o.recompute = STRATA_RECOMPUTE_FULL;
    double f = least_memory(st->g, &o);
    suggest(&tips, "full recompute (--recompute full)", f, now, budget);
    best = f < best ? f : best;
    if (st->o.zero_stage < 3) {
      o.zero_stage = 3;
      suggest(&tips, "both", least_memory(st->g, &o), best, budget);
    }
  }
  strata_buf_printf(&out,
                    "no strategy fits %s per device; the least any "
                    "needs is %s. What would help: %s%smore devices",
                    strata_fmt_bytes(budget, have, sizeof have),
                    strata_fmt_bytes(now, need, sizeof need),
                    tips.len ? tips.p : "", tips.len ? "; " : "");
  strata_buf_free(&tips);
  if (out.oom) {
    strata_buf_free(&out);
    return strata_error(STRATA_ENOMEM, "out of memory");
  }
  r->hint = strata_buf_steal(&out, NULL);
  return r->hint ? 0 : strata_error(STRATA_ENOMEM, "out of memory");
}

int st__stage_report(const st__stage_t *st, const st__ilp_result_t *ir,
                     strata_stage_result_t *r) {
  static const strata_stage_status_t map[] = {
      STRATA_STAGE_OPTIMAL, STRATA_STAGE_FEASIBLE, STRATA_STAGE_INFEASIBLE,
      STRATA_STAGE_NO_SOLUTION};
  r->status = map[ir->status];
  r->devices = st->ctx.devices;
  r->homogeneous = st->o.homogeneous;
  r->alpha = st->o.alpha;
  if (ir->status == ST__ILP_INFEASIBLE) return fill_hint(st, ir, r);
  if (ir->status == ST__ILP_NO_SOLUTION) return 0;
  fill_totals(st, ir->choice, r);
  return fill_ops(st, ir->choice, r);
}

void strata_stage_result_destroy(strata_stage_result_t *r) {
  if (!r) return;
  for (int i = 0; i < r->n_ops; i++) {
    strata_free(r->ops[i].name);
    strata_free(r->ops[i].strategy);
    strata_free(r->ops[i].placement);
  }
  strata_free(r->ops);
  strata_free(r->hint);
  strata_free(r);
}
