/*
 * ilp_reduce.c - the working copy of an ILP problem and the reductions
 * that make it smaller without changing its optimum.
 *
 * Each reduction is valid on its own, so they are simply repeated until
 * none applies:
 *   - parallel edges (either direction) are summed into one matrix;
 *   - a strategy s is dropped when another t of the same node is no worse
 *     in everything: node cost, memory and transient (these two only when
 *     there is a memory row), and on every live incident edge t's row (or
 *     column) is elementwise <= s's over the neighbour's live strategies.
 *     Swapping s for t in any solution then costs nothing, so an optimum
 *     survives.  Among identical strategies the lowest index survives,
 *     which makes the outcome independent of anything but the input;
 *   - a node left with one strategy is fixed: its cost, memory and
 *     transient become constants and each incident edge folds into the
 *     neighbour's node costs (no B variables where a side is fixed);
 *   - an edge whose matrix is separable, c_ij = a_i + b_j (all zero is the
 *     common case), folds into the two nodes' costs.
 * Dropping can make a node single, folding can make a strategy dominated,
 * hence the loop.  Every step only lowers counts, so it terminates.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "intraop/ilp_impl.h"
#include "strata/core.h"

static int oom(void) {
  return strata_error(STRATA_ENOMEM, "out of memory building the ILP");
}

static void ws_sizes(const st__ilp_problem_t *p, size_t *n_strat,
                     size_t *n_ecost) {
  *n_strat = 0;
  *n_ecost = 0;
  for (int u = 0; u < p->n_nodes; u++)
    *n_strat += (size_t)p->nodes[u].n_strat;
  for (int e = 0; e < p->n_edges; e++)
    *n_ecost += (size_t)p->nodes[p->edges[e].u].n_strat *
                (size_t)p->nodes[p->edges[e].v].n_strat;
}

static void ws_copy_nodes(st__ilp_ws_t *ws, const st__ilp_problem_t *p) {
  size_t off = 0, tot = 0;
  for (int u = 0; u < p->n_nodes; u++)
    tot += (size_t)p->nodes[u].n_strat;
  for (int u = 0; u < p->n_nodes; u++) {
    const st__ilp_node_t *pn = &p->nodes[u];
    st__ilp_wnode_t *w = &ws->nodes[u];
    w->n = w->n_alive = pn->n_strat;
    w->alive = ws->alive_pool + off;
    w->cost = ws->dpool + off;
    w->mem = ws->dpool + tot + off;
    w->trans = ws->dpool + 2 * tot + off;
    w->fixed = -1;
    for (int s = 0; s < w->n; s++) {
      w->alive[s] = 1;
      w->cost[s] = pn->cost[s];
      w->mem[s] = pn->mem ? pn->mem[s] : 0.0;
      w->trans[s] = pn->transient ? pn->transient[s] : 0.0;
    }
    off += (size_t)pn->n_strat;
  }
}

static void ws_copy_edges(st__ilp_ws_t *ws, const st__ilp_problem_t *p) {
  size_t off = 0;
  for (int e = 0; e < p->n_edges; e++) {
    const st__ilp_edge_t *pe = &p->edges[e];
    size_t n = (size_t)p->nodes[pe->u].n_strat * p->nodes[pe->v].n_strat;
    ws->edges[e].u = pe->u;
    ws->edges[e].v = pe->v;
    ws->edges[e].dead = 0;
    ws->edges[e].cost = ws->epool + off;
    memcpy(ws->edges[e].cost, pe->cost, n * sizeof(double));
    off += n;
  }
  /* Adjacency in CSR form: count, offset, fill (edge order kept). */
  for (int e = 0; e < ws->n_edges; e++) {
    ws->nodes[ws->edges[e].u].n_adj++;
    ws->nodes[ws->edges[e].v].n_adj++;
  }
  int at = 0;
  for (int u = 0; u < ws->n_nodes; u++) {
    ws->nodes[u].adj = ws->adj_pool + at;
    at += ws->nodes[u].n_adj;
    ws->nodes[u].n_adj = 0;
  }
  for (int e = 0; e < ws->n_edges; e++) {
    st__ilp_wnode_t *a = &ws->nodes[ws->edges[e].u];
    st__ilp_wnode_t *b = &ws->nodes[ws->edges[e].v];
    a->adj[a->n_adj++] = e;
    b->adj[b->n_adj++] = e;
  }
}

int st__ilp_ws_init(st__ilp_ws_t *ws, const st__ilp_problem_t *p) {
  size_t n_strat, n_ecost;
  memset(ws, 0, sizeof *ws);
  ws_sizes(p, &n_strat, &n_ecost);
  ws->n_nodes = p->n_nodes;
  ws->n_edges = p->n_edges;
  ws->budget = p->mem_budget;
  ws->obj_const = p->obj_const;
  ws->mem_const = p->mem_const;
  ws->nodes = strata_calloc((size_t)p->n_nodes, sizeof *ws->nodes);
  ws->edges = strata_calloc((size_t)p->n_edges, sizeof *ws->edges);
  ws->alive_pool = strata_malloc(n_strat);
  ws->dpool = strata_malloc(3 * n_strat * sizeof(double));
  ws->epool = strata_malloc(n_ecost * sizeof(double));
  ws->adj_pool = strata_malloc(2 * (size_t)p->n_edges * sizeof(int));
  if (!ws->nodes || !ws->edges || !ws->alive_pool || !ws->dpool || !ws->epool ||
      !ws->adj_pool) {
    st__ilp_ws_free(ws);
    return oom();
  }
  ws_copy_nodes(ws, p);
  ws_copy_edges(ws, p);
  return 0;
}

void st__ilp_ws_free(st__ilp_ws_t *ws) {
  strata_free(ws->nodes);
  strata_free(ws->edges);
  strata_free(ws->alive_pool);
  strata_free(ws->dpool);
  strata_free(ws->epool);
  strata_free(ws->adj_pool);
  memset(ws, 0, sizeof *ws);
}

/* ---- parallel edges ---------------------------------------------------- */

typedef struct {
  int lo, hi, id;
} edge_key_t;

static int edge_key_cmp(const void *a, const void *b) {
  const edge_key_t *x = a, *y = b;
  if (x->lo != y->lo) return x->lo < y->lo ? -1 : 1;
  if (x->hi != y->hi) return x->hi < y->hi ? -1 : 1;
  return (x->id > y->id) - (x->id < y->id);
}

/* Add edge src into dst (same endpoints, possibly reversed). */
static void edge_add_into(st__ilp_ws_t *ws, st__ilp_wedge_t *dst,
                          const st__ilp_wedge_t *src) {
  int nu = ws->nodes[dst->u].n, nv = ws->nodes[dst->v].n;
  int same = src->u == dst->u;
  for (int i = 0; i < nu; i++)
    for (int j = 0; j < nv; j++)
      dst->cost[i * nv + j] +=
          same ? src->cost[i * nv + j] : src->cost[j * nu + i];
}

static int merge_parallel(st__ilp_ws_t *ws) {
  if (ws->n_edges < 2) return 0;
  edge_key_t *k = strata_malloc((size_t)ws->n_edges * sizeof *k);
  if (!k) return oom();
  for (int e = 0; e < ws->n_edges; e++) {
    int u = ws->edges[e].u, v = ws->edges[e].v;
    k[e] = (edge_key_t){u < v ? u : v, u < v ? v : u, e};
  }
  qsort(k, (size_t)ws->n_edges, sizeof *k, edge_key_cmp);
  for (int a = 0, b; a < ws->n_edges; a = b) {
    for (b = a + 1; b < ws->n_edges && k[b].lo == k[a].lo && k[b].hi == k[a].hi;
         b++) {
      edge_add_into(ws, &ws->edges[k[a].id], &ws->edges[k[b].id]);
      ws->edges[k[b].id].dead = 1;
    }
  }
  strata_free(k);
  return 0;
}

/* ---- dominance ---------------------------------------------------------- */

/* Compare strategies t and s of node u on edge e: returns -1 if t's line is
 * worse somewhere (no dominance), else 1 if strictly better somewhere, else
 * 0. */
static int edge_cmp(const st__ilp_ws_t *ws, int u, const st__ilp_wedge_t *e,
                    int t, int s) {
  int strict = 0;
  if (e->u == u) {
    const st__ilp_wnode_t *w = &ws->nodes[e->v];
    const double *rt = e->cost + (size_t)t * w->n;
    const double *rs = e->cost + (size_t)s * w->n;
    for (int j = 0; j < w->n; j++) {
      if (!w->alive[j]) continue;
      if (rt[j] > rs[j]) return -1;
      if (rt[j] < rs[j]) strict = 1;
    }
  } else {
    const st__ilp_wnode_t *w = &ws->nodes[e->u];
    int nv = ws->nodes[u].n;
    for (int i = 0; i < w->n; i++) {
      if (!w->alive[i]) continue;
      double ct = e->cost[(size_t)i * nv + t], cs = e->cost[(size_t)i * nv + s];
      if (ct > cs) return -1;
      if (ct < cs) strict = 1;
    }
  }
  return strict;
}

/* 1 if a <= b componentwise (with *strict set on any <), else 0. */
static int le(double a, double b, int *strict) {
  if (a > b) return 0;
  if (a < b) *strict = 1;
  return 1;
}

static int dominates(const st__ilp_ws_t *ws, int u, int t, int s) {
  const st__ilp_wnode_t *n = &ws->nodes[u];
  int strict = 0;
  if (!le(n->cost[t], n->cost[s], &strict)) return 0;
  if (ws->budget > 0 && (!le(n->mem[t], n->mem[s], &strict) ||
                         !le(n->trans[t], n->trans[s], &strict)))
    return 0;
  for (int k = 0; k < n->n_adj; k++) {
    const st__ilp_wedge_t *e = &ws->edges[n->adj[k]];
    if (e->dead) continue;
    int c = edge_cmp(ws, u, e, t, s);
    if (c < 0) return 0;
    if (c > 0) strict = 1;
  }
  return strict || t < s;
}

static int drop_dominated(st__ilp_ws_t *ws) {
  int changed = 0;
  for (int u = 0; u < ws->n_nodes; u++) {
    st__ilp_wnode_t *n = &ws->nodes[u];
    if (n->fixed >= 0) continue;
    for (int s = 0; s < n->n && n->n_alive > 1; s++) {
      if (!n->alive[s]) continue;
      for (int t = 0; t < n->n; t++) {
        if (t == s || !n->alive[t] || !dominates(ws, u, t, s)) continue;
        n->alive[s] = 0;
        n->n_alive--;
        changed = 1;
        break;
      }
    }
  }
  return changed;
}

/* ---- folding ------------------------------------------------------------ */

static int first_alive(const st__ilp_wnode_t *n) {
  for (int s = 0; s < n->n; s++)
    if (n->alive[s]) return s;
  return -1;
}

/* Node u has one strategy s: fold its edges into the neighbours. */
static void fix_node(st__ilp_ws_t *ws, int u) {
  st__ilp_wnode_t *n = &ws->nodes[u];
  int s = first_alive(n);
  for (int k = 0; k < n->n_adj; k++) {
    st__ilp_wedge_t *e = &ws->edges[n->adj[k]];
    if (e->dead) continue;
    if (e->u == u) {
      st__ilp_wnode_t *w = &ws->nodes[e->v];
      for (int j = 0; j < w->n; j++)
        w->cost[j] += e->cost[(size_t)s * w->n + j];
    } else {
      st__ilp_wnode_t *w = &ws->nodes[e->u];
      for (int i = 0; i < w->n; i++)
        w->cost[i] += e->cost[(size_t)i * n->n + s];
    }
    e->dead = 1;
  }
  ws->obj_const += n->cost[s];
  ws->mem_const += n->mem[s];
  if (n->trans[s] > ws->t_lb) ws->t_lb = n->trans[s];
  n->fixed = s;
}

static int fix_singles(st__ilp_ws_t *ws) {
  int changed = 0;
  for (int u = 0; u < ws->n_nodes; u++) {
    if (ws->nodes[u].fixed < 0 && ws->nodes[u].n_alive == 1) {
      fix_node(ws, u);
      changed = 1;
    }
  }
  return changed;
}

/* c_ij - c_i0j - c_ij0 + c_i0j0 == 0 over live strategies (to rounding). */
static int separable(const st__ilp_ws_t *ws, const st__ilp_wedge_t *e, int i0,
                     int j0) {
  const st__ilp_wnode_t *a = &ws->nodes[e->u], *b = &ws->nodes[e->v];
  const double *c = e->cost;
  double scale = 0.0;
  for (int i = 0; i < a->n; i++)
    for (int j = 0; a->alive[i] && j < b->n; j++)
      if (b->alive[j] && fabs(c[(size_t)i * b->n + j]) > scale)
        scale = fabs(c[(size_t)i * b->n + j]);
  for (int i = 0; i < a->n; i++) {
    for (int j = 0; a->alive[i] && j < b->n; j++) {
      if (!b->alive[j]) continue;
      double r = c[(size_t)i * b->n + j] - c[(size_t)i * b->n + j0] -
                 c[(size_t)i0 * b->n + j] + c[(size_t)i0 * b->n + j0];
      if (fabs(r) > 1e-12 * scale) return 0;
    }
  }
  return 1;
}

static int fold_separable(st__ilp_ws_t *ws) {
  int changed = 0;
  for (int k = 0; k < ws->n_edges; k++) {
    st__ilp_wedge_t *e = &ws->edges[k];
    if (e->dead) continue;
    st__ilp_wnode_t *a = &ws->nodes[e->u], *b = &ws->nodes[e->v];
    int i0 = first_alive(a), j0 = first_alive(b);
    if (!separable(ws, e, i0, j0)) continue;
    for (int i = 0; i < a->n; i++)
      a->cost[i] += e->cost[(size_t)i * b->n + j0];
    for (int j = 0; j < b->n; j++)
      b->cost[j] +=
          e->cost[(size_t)i0 * b->n + j] - e->cost[(size_t)i0 * b->n + j0];
    e->dead = 1;
    changed = 1;
  }
  return changed;
}

/* Every node's transient is at least its smallest live one, so that much
 * of the peak is certain: raise T's lower bound (rows at or below it are
 * then not built). */
static void raise_t_lb(st__ilp_ws_t *ws) {
  for (int u = 0; u < ws->n_nodes; u++) {
    const st__ilp_wnode_t *n = &ws->nodes[u];
    if (n->fixed >= 0) continue;
    double lo = INFINITY;
    for (int s = 0; s < n->n; s++)
      if (n->alive[s] && n->trans[s] < lo) lo = n->trans[s];
    if (lo > ws->t_lb) ws->t_lb = lo;
  }
}

int st__ilp_ws_reduce(st__ilp_ws_t *ws) {
  int rc = merge_parallel(ws);
  if (rc) return rc;
  for (int changed = 1; changed;) {
    changed = drop_dominated(ws);
    changed |= fix_singles(ws);
    changed |= fold_separable(ws);
  }
  raise_t_lb(ws);
  return 0;
}
