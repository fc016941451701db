/*
 * ilp_dp.c - the memory-bound strategy ILP solved by dynamic programming
 * over an elimination order, with the memory budget as a resource.
 *
 * Stage graphs are chains of layers with short branches (attention's q, k,
 * v; residual adds), so eliminating nodes one at a time in min-degree
 * order leaves each a handful of neighbours (bucket elimination, Dechter
 * 1999).  Without the memory row that is the classic min-sum DP; with it,
 * the value of a partial assignment is not one number but the Pareto set
 * of (memory, cost) pairs its eliminated part can reach, so every message
 * table entry holds such a set.  Combining sets is a Minkowski sum (a heap
 * merge that emits only undominated points), and eliminating a node keeps
 * the undominated union over its strategies.  Points that cannot fit (their
 * memory plus the least memory of everything not yet eliminated exceeds the
 * budget) or cannot beat the incumbent (same with costs) are dropped.  The
 * transient peak is a max, not a sum: the problem is solved per peak
 * level L (strategies with transient <= L, budget minus L), the optimum
 * being the best over the levels.  A range of levels is first solved as
 * one relaxation (its strategies, the budget minus its lowest level); it
 * is halved only while that relaxation could beat the incumbent, and a
 * relaxed choice that fits after all is the range's optimum.
 *
 * Exact as long as no set exceeds `cap` points.  Beyond that a set is
 * thinned on a grid over its memory range: in a restricting run the
 * cheapest real point of each cell is kept (what remains is still a real,
 * feasible assignment: a good incumbent), in a relaxing run each cell
 * becomes its ideal point (least memory and least cost of the cell), which
 * can only lower the optimum: a proven lower bound.  Runs go from coarse
 * to fine sets.  Before all that, the Lagrangian dual of the memory row
 * (Fisher 1981), with the exact min-sum DP on the same elimination inside,
 * gives a bound at once and, from its minimisers that fit, incumbents.
 * Graphs whose elimination needs too wide a table are left to GLPK.
 *
 * All memory comes from a few growing arenas (points, provenance, entry
 * offsets) so that a large problem makes few allocations.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "intraop/ilp_impl.h"
#include "strata/core.h"

#define WMAX 8          /* most neighbours of a node when eliminated */
#define KMAX 12         /* most messages one bucket combines */
#define ENT_MAX 4096    /* most entries of one message table */
#define RUNS_MAX 400    /* most DP runs over the peak levels */
#define NODES_MAX 50000 /* larger problems are left to GLPK */
#define POINTS_MAX 8000000

typedef struct {
  double m, c;
} pt_t;

/* One elimination step: node var, eliminated with these neighbours left
 * (the scope of its message), consuming the edges and messages listed. */
typedef struct {
  int var;
  int ns, scope[WMAX];
  int ne, *edges; /* into the shared edge-list pool */
  int nm, msgs[KMAX];
  int n_ent;
  /* numeric pass */
  size_t obase;        /* entry offsets O[obase .. obase + n_ent] */
  size_t lbase;        /* its min-sum table in lag[lbase ..] */
  size_t pbase, vbase; /* first point, first provenance int */
  double sub_mem, sub_cost;
  int sel; /* chosen point (global index) when backtracking */
} bucket_t;

/* A point being built: memory, cost, the strategy of the bucket's node
 * and the index of the point taken from each message. */
typedef struct {
  double m, c;
  int s, idx[KMAX];
} tpt_t;

typedef struct {
  tpt_t *v;
  size_t n, cap;
} tbuf_t;

typedef struct {
  const st__ilp_ws_t *ws;
  int n_live, nb;
  bucket_t *b;
  int *edge_pool;
  int *na, *ids, *ids_off; /* live strategies of each node (compact) */
  int *val;                /* compact strategy per node (backtracking) */
  /* parameters of a run */
  double allow_t, bud, inc;
  int relax, cap, max_cap;
  double deadline, level_opt;
  /* results of a run */
  int thinned, gave_up, oom;
  double tot_mem, tot_cost;
  /* arenas */
  pt_t *P;
  size_t nP, capP;
  int *V;
  size_t nV, capV;
  size_t *O;
  size_t nO, capO;
  tbuf_t cur, nxt, all;
  size_t *heap; /* Minkowski heap: next index of each point, then ids */
  size_t heap_cap;
  double gap; /* relative gap at which a range counts as solved */
  int runs, have;
  double *lag;            /* min-sum table of each bucket (at its obase) */
  int *lag_arg;           /* and the minimising strategy */
  int first, first_exact; /* the level solved before the ranges */
  double first_opt;
} dp_t;

/* ---- arenas ------------------------------------------------------------- */

static int grow(void **p, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap) return 0;
  size_t n = *cap ? *cap : 64;
  while (n < need)
    n *= 2;
  void *q = strata_realloc(*p, n * elem);
  if (!q) return STRATA_ENOMEM;
  *p = q;
  *cap = n;
  return 0;
}

static int tbuf_reserve(tbuf_t *t, size_t n) {
  return grow((void **)&t->v, &t->cap, n, sizeof *t->v);
}

/* ---- symbolic elimination ----------------------------------------------- */

typedef struct {
  int *v, n, cap;
} ilist_t;

static int ilist_add(ilist_t *l, int x) {
  for (int i = 0; i < l->n; i++)
    if (l->v[i] == x) return 0;
  size_t cap = (size_t)l->cap;
  if (grow((void **)&l->v, &cap, (size_t)l->n + 1, sizeof(int)))
    return STRATA_ENOMEM;
  l->cap = (int)cap;
  l->v[l->n++] = x;
  return 0;
}

static void ilist_del(ilist_t *l, int x) {
  for (int i = 0; i < l->n; i++)
    if (l->v[i] == x) {
      l->v[i] = l->v[--l->n];
      return;
    }
}

static int live(const st__ilp_ws_t *ws, int u) {
  return ws->nodes[u].fixed < 0;
}

static int live_edge(const st__ilp_ws_t *ws, int k) {
  const st__ilp_wedge_t *e = &ws->edges[k];
  return !e->dead && live(ws, e->u) && live(ws, e->v);
}

/* Next node to eliminate: least degree, lowest index on ties. */
static int pick(const st__ilp_ws_t *ws, const ilist_t *adj,
                const unsigned char *done) {
  int best = -1;
  for (int u = 0; u < ws->n_nodes; u++)
    if (live(ws, u) && !done[u] && (best < 0 || adj[u].n < adj[best].n))
      best = u;
  return best;
}

/* Messages still pending whose scope holds u are consumed by u's bucket;
 * a bucket with an empty scope also takes the previous such bucket, so
 * that all components end in one chain of messages. */
static int take_msgs(dp_t *d, int at, int *pending, int *n_pend, int *acc) {
  bucket_t *b = &d->b[at];
  b->nm = 0;
  for (int i = 0; i < *n_pend;) {
    const bucket_t *m = &d->b[pending[i]];
    int has = 0;
    for (int k = 0; k < m->ns; k++)
      has |= m->scope[k] == b->var;
    if (!has) {
      i++;
      continue;
    }
    if (b->nm >= KMAX) return 1;
    b->msgs[b->nm++] = pending[i];
    pending[i] = pending[--*n_pend];
  }
  if (b->ns == 0) {
    if (*acc >= 0) {
      if (b->nm >= KMAX) return 1;
      b->msgs[b->nm++] = *acc;
    }
    *acc = at;
  } else {
    pending[(*n_pend)++] = at;
  }
  return 0;
}

/* Eliminate u: its neighbours become its scope and a clique. */
static int eliminate(dp_t *d, ilist_t *adj, int u, int at) {
  bucket_t *b = &d->b[at];
  b->var = u;
  b->ns = adj[u].n;
  if (b->ns > WMAX) return 1;
  size_t ent = 1;
  for (int i = 0; i < b->ns; i++) {
    b->scope[i] = adj[u].v[i];
    ent *= (size_t)d->na[b->scope[i]];
    if (ent * (size_t)d->na[u] > ENT_MAX * 4 || ent > ENT_MAX) return 1;
  }
  b->n_ent = (int)ent;
  for (int i = 0; i < b->ns; i++) {
    int a = b->scope[i];
    ilist_del(&adj[a], u);
    for (int j = 0; j < b->ns; j++)
      if (j != i && ilist_add(&adj[a], b->scope[j])) return -1;
  }
  return 0;
}

/* The live edges of u whose other end is not yet eliminated. */
static void bucket_edges(dp_t *d, int at, const unsigned char *done,
                         int *pool_at) {
  const st__ilp_ws_t *ws = d->ws;
  bucket_t *b = &d->b[at];
  const st__ilp_wnode_t *n = &ws->nodes[b->var];
  b->edges = d->edge_pool + *pool_at;
  b->ne = 0;
  for (int k = 0; k < n->n_adj; k++) {
    int e = n->adj[k];
    int other = ws->edges[e].u == b->var ? ws->edges[e].v : ws->edges[e].u;
    if (live_edge(ws, e) && !done[other]) b->edges[b->ne++] = e;
  }
  *pool_at += b->ne;
}

static int build_adj(dp_t *d, ilist_t *adj) {
  const st__ilp_ws_t *ws = d->ws;
  for (int k = 0; k < ws->n_edges; k++) {
    if (!live_edge(ws, k)) continue;
    if (ilist_add(&adj[ws->edges[k].u], ws->edges[k].v) ||
        ilist_add(&adj[ws->edges[k].v], ws->edges[k].u))
      return -1;
  }
  return 0;
}

/* Min-degree elimination order and the buckets.  Returns 0, 1 when the
 * problem is too wide for the DP, or -1 out of memory. */
static int symbolic(dp_t *d) {
  const st__ilp_ws_t *ws = d->ws;
  int rc = 0, n_pend = 0, acc = -1, pool_at = 0;
  ilist_t *adj = strata_calloc((size_t)ws->n_nodes + 1, sizeof *adj);
  unsigned char *done = strata_calloc((size_t)ws->n_nodes + 1, 1);
  int *pending = strata_malloc(((size_t)d->n_live + 1) * sizeof *pending);
  if (!adj || !done || !pending) rc = -1;
  if (!rc) rc = build_adj(d, adj);
  for (int at = 0; !rc && at < d->n_live; at++) {
    int u = pick(ws, adj, done);
    rc = eliminate(d, adj, u, at);
    if (rc) break;
    bucket_edges(d, at, done, &pool_at);
    done[u] = 1;
    rc = take_msgs(d, at, pending, &n_pend, &acc);
  }
  for (int u = 0; adj && u < ws->n_nodes; u++)
    strata_free(adj[u].v);
  strata_free(adj);
  strata_free(done);
  strata_free(pending);
  return rc;
}

/* ---- numeric pass ------------------------------------------------------- */

static int strat(const dp_t *d, int u, int s) {
  return d->ids[d->ids_off[u] + s];
}

static int allowed(const dp_t *d, int u, int s) {
  return d->ws->nodes[u].trans[strat(d, u, s)] <= d->allow_t;
}

static size_t entry_of(const dp_t *d, const bucket_t *m) {
  size_t e = 0;
  for (int i = 0; i < m->ns; i++)
    e = e * (size_t)d->na[m->scope[i]] + (size_t)d->val[m->scope[i]];
  return e;
}

static double edge_cost(const dp_t *d, int k) {
  const st__ilp_wedge_t *e = &d->ws->edges[k];
  int nv = d->ws->nodes[e->v].n;
  return e->cost[(size_t)strat(d, e->u, d->val[e->u]) * nv +
                 strat(d, e->v, d->val[e->v])];
}

/* The least cost of each edge of bucket b over allowed strategies. */
static double edges_lb(const dp_t *d, const bucket_t *b) {
  double sum = 0;
  for (int k = 0; k < b->ne; k++) {
    const st__ilp_wedge_t *e = &d->ws->edges[b->edges[k]];
    double lo = INFINITY;
    for (int i = 0; i < d->na[e->u]; i++)
      for (int j = 0; j < d->na[e->v]; j++)
        if (allowed(d, e->u, i) && allowed(d, e->v, j))
          lo = fmin(lo,
                    e->cost[(size_t)strat(d, e->u, i) * d->ws->nodes[e->v].n +
                            strat(d, e->v, j)]);
    sum += lo;
  }
  return sum;
}

/* Per bucket, lower bounds of what its subtree holds and costs (least
 * memory and least cost of each node and edge), and the totals. */
static void bounds(dp_t *d) {
  const st__ilp_ws_t *ws = d->ws;
  d->tot_mem = d->tot_cost = 0;
  for (int at = 0; at < d->nb; at++) {
    bucket_t *b = &d->b[at];
    const st__ilp_wnode_t *n = &ws->nodes[b->var];
    b->sub_mem = b->sub_cost = INFINITY;
    for (int s = 0; s < d->na[b->var]; s++)
      if (allowed(d, b->var, s)) {
        b->sub_mem = fmin(b->sub_mem, n->mem[strat(d, b->var, s)]);
        b->sub_cost = fmin(b->sub_cost, n->cost[strat(d, b->var, s)]);
      }
    b->sub_cost += edges_lb(d, b);
    d->tot_mem += b->sub_mem;
    d->tot_cost += b->sub_cost;
    for (int k = 0; k < b->nm; k++) {
      b->sub_mem += d->b[b->msgs[k]].sub_mem;
      b->sub_cost += d->b[b->msgs[k]].sub_cost;
    }
  }
}

/* Would a point of bucket b be worth keeping?  Not if the rest cannot
 * fit beside it, nor if the rest's least cost reaches the incumbent. */
static int keep(const dp_t *d, const bucket_t *b, double m, double c) {
  double rest_m = d->tot_mem - b->sub_mem, rest_c = d->tot_cost - b->sub_cost;
  if (m + rest_m > d->bud + 1e-9 * fabs(d->bud)) return 0;
  return !(c + rest_c >= d->inc);
}

static int tpt_cmp(const void *a, const void *b) {
  const tpt_t *x = a, *y = b;
  if (x->m != y->m) return x->m < y->m ? -1 : 1;
  if (x->c != y->c) return x->c < y->c ? -1 : 1;
  return (x->s > y->s) - (x->s < y->s);
}

/* Heap of (i, j) pairs keyed by the sum of cur[i] and the message's point
 * j: pops the Minkowski sum in order of memory, keeping what no earlier
 * point dominates. */
typedef struct {
  const tpt_t *a;
  const pt_t *q;
  size_t na, nq;
  size_t *j; /* next j of each i */
} mink_t;

static int mk_less(const mink_t *k, int x, int y) {
  double mx = k->a[x].m + k->q[k->j[x]].m, my = k->a[y].m + k->q[k->j[y]].m;
  if (mx != my) return mx < my;
  double cx = k->a[x].c + k->q[k->j[x]].c, cy = k->a[y].c + k->q[k->j[y]].c;
  if (cx != cy) return cx < cy;
  return x < y;
}

static void sift(const mink_t *k, int *h, size_t n, size_t i) {
  for (;;) {
    size_t l = 2 * i + 1, r = l + 1, m = i;
    if (l < n && mk_less(k, h[l], h[m])) m = l;
    if (r < n && mk_less(k, h[r], h[m])) m = r;
    if (m == i) return;
    int t = h[i];
    h[i] = h[m];
    h[m] = t;
    i = m;
  }
}

/* nxt = undominated points of cur + q (message slot slot). */
static int minkowski(dp_t *d, const bucket_t *b, const pt_t *q, size_t nq,
                     int slot) {
  mink_t k = {d->cur.v, q, d->cur.n, nq, NULL};
  size_t n = d->cur.n;
  double best_c = INFINITY;
  d->nxt.n = 0;
  if (nq == 0) n = 0;
  if (grow((void **)&d->heap, &d->heap_cap, 2 * n + 2, sizeof(size_t)))
    return STRATA_ENOMEM;
  k.j = d->heap;
  int *h = (int *)(k.j + n);
  for (size_t i = 0; i < n; i++)
    k.j[i] = 0, h[i] = (int)i;
  for (size_t i = n / 2; i-- > 0;)
    sift(&k, h, n, i);
  while (n > 0) {
    int i = h[0];
    const tpt_t *a = &d->cur.v[i];
    double m = a->m + q[k.j[i]].m, c = a->c + q[k.j[i]].c;
    if (!keep(d, b, m, -INFINITY)) break; /* every later point is heavier */
    if (c < best_c && keep(d, b, m, c)) {
      if (tbuf_reserve(&d->nxt, d->nxt.n + 1)) return STRATA_ENOMEM;
      tpt_t *t = &d->nxt.v[d->nxt.n++];
      *t = *a;
      t->m = m, t->c = c, t->idx[slot] = (int)k.j[i];
      best_c = c;
    }
    if (++k.j[i] == nq) h[0] = h[--n];
    sift(&k, h, n, 0);
  }
  tbuf_t t = d->cur;
  d->cur = d->nxt;
  d->nxt = t;
  return 0;
}

/* The points of node var at strategy s over the message entries the
 * current assignment (d->val) selects, appended to d->all. */
static int combine(dp_t *d, const bucket_t *b, int s) {
  const st__ilp_wnode_t *n = &d->ws->nodes[b->var];
  int o = strat(d, b->var, s), rc;
  double c = n->cost[o];
  for (int k = 0; k < b->ne; k++)
    c += edge_cost(d, b->edges[k]);
  if (tbuf_reserve(&d->cur, 1)) return STRATA_ENOMEM;
  d->cur.n = 0;
  if (!keep(d, b, n->mem[o], c)) return 0;
  d->cur.v[0] = (tpt_t){.m = n->mem[o], .c = c, .s = s};
  d->cur.n = 1;
  for (int k = 0; k < b->nm && d->cur.n > 0; k++) {
    const bucket_t *m = &d->b[b->msgs[k]];
    size_t e = m->obase + entry_of(d, m);
    size_t lo = d->O[e], hi = d->O[e + 1];
    if ((rc = minkowski(d, b, d->P + lo, hi - lo, k))) return rc;
  }
  if (d->cur.n == 0) return 0;
  if (tbuf_reserve(&d->all, d->all.n + d->cur.n)) return STRATA_ENOMEM;
  memcpy(d->all.v + d->all.n, d->cur.v, d->cur.n * sizeof *d->cur.v);
  d->all.n += d->cur.n;
  return 0;
}

/* Keep the undominated points of d->all (sorted), thinned to d->cap. */
static void pareto(dp_t *d) {
  size_t w = 0;
  double best_c = INFINITY;
  if (d->all.n == 0) return;
  qsort(d->all.v, d->all.n, sizeof *d->all.v, tpt_cmp);
  for (size_t i = 0; i < d->all.n; i++)
    if (d->all.v[i].c < best_c) {
      best_c = d->all.v[i].c;
      d->all.v[w++] = d->all.v[i];
    }
  d->all.n = w;
  if (w <= (size_t)d->cap) return;
  d->thinned = 1;
  double lo = d->all.v[0].m, width = (d->all.v[w - 1].m - lo) / d->cap;
  size_t k = 0;
  for (size_t i = 0; i < w;) {
    size_t j = i;
    long cell = width > 0 ? (long)((d->all.v[i].m - lo) / width) : 0;
    while (j + 1 < w && width > 0 &&
           (long)((d->all.v[j + 1].m - lo) / width) == cell)
      j++;
    /* the cell is d->all.v[i..j]: cheapest last, lightest first */
    tpt_t t = d->all.v[j];
    if (d->relax) t.m = d->all.v[i].m; /* provenance now meaningless */
    if (!d->relax && i == 0 && j > 0) d->all.v[k++] = d->all.v[0];
    d->all.v[k++] = t;
    i = j + 1;
  }
  d->all.n = k;
}

/* Store d->all as the next entry of bucket b. */
static int store(dp_t *d, const bucket_t *b) {
  size_t n = d->all.n, stride = (size_t)b->nm + 1;
  if (d->nP + n > POINTS_MAX) {
    d->gave_up = 1;
    return 0;
  }
  if (grow((void **)&d->P, &d->capP, d->nP + n, sizeof *d->P) ||
      grow((void **)&d->V, &d->capV, d->nV + n * stride, sizeof(int)) ||
      grow((void **)&d->O, &d->capO, d->nO + 1, sizeof(size_t)))
    return STRATA_ENOMEM;
  for (size_t i = 0; i < n; i++) {
    const tpt_t *t = &d->all.v[i];
    d->P[d->nP + i] = (pt_t){t->m, t->c};
    int *v = d->V + d->nV + i * stride;
    v[0] = t->s;
    memcpy(v + 1, t->idx, (size_t)b->nm * sizeof(int));
  }
  d->nP += n;
  d->nV += n * stride;
  d->O[d->nO++] = d->nP;
  return 0;
}

/* Decode entry e of bucket b into d->val for its scope. */
static void set_entry(dp_t *d, const bucket_t *b, size_t e) {
  for (int i = b->ns; i-- > 0;) {
    int u = b->scope[i];
    d->val[u] = (int)(e % (size_t)d->na[u]);
    e /= (size_t)d->na[u];
  }
}

static int run_bucket(dp_t *d, bucket_t *b) {
  int rc;
  b->obase = d->nO;
  b->pbase = d->nP;
  b->vbase = d->nV;
  if (grow((void **)&d->O, &d->capO, d->nO + 1, sizeof(size_t)))
    return STRATA_ENOMEM;
  d->O[d->nO++] = d->nP;
  for (size_t e = 0; e < (size_t)b->n_ent && !d->gave_up; e++) {
    set_entry(d, b, e);
    d->all.n = 0;
    for (int s = 0; s < d->na[b->var]; s++) {
      if (!allowed(d, b->var, s)) continue;
      d->val[b->var] = s;
      if ((rc = combine(d, b, s))) return rc;
    }
    pareto(d);
    if ((rc = store(d, b))) return rc;
  }
  return 0;
}

/* Walk the buckets backwards from the cheapest final point. */
static void backtrack(dp_t *d, size_t best) {
  d->b[d->nb - 1].sel = (int)best;
  for (int at = d->nb; at-- > 0;) {
    bucket_t *b = &d->b[at];
    const int *v = d->V + b->vbase + ((size_t)b->sel - b->pbase) * (b->nm + 1);
    d->val[b->var] = v[0];
    for (int k = 0; k < b->nm; k++) {
      bucket_t *m = &d->b[b->msgs[k]];
      m->sel = (int)(d->O[m->obase + entry_of(d, m)] + (size_t)v[k + 1]);
    }
  }
}

/* One run at the current parameters: *cost the best cost found (live part
 * only), INFINITY if none. */
static int run(dp_t *d, double *cost) {
  int rc = 0;
  d->nP = d->nV = d->nO = 0;
  d->thinned = d->gave_up = 0;
  *cost = INFINITY;
  bounds(d);
  for (int at = 0; at < d->nb && !rc && !d->gave_up; at++) {
    if (d->deadline > 0 && strata_now() > d->deadline) d->gave_up = 1;
    rc = run_bucket(d, &d->b[at]);
  }
  if (rc || d->gave_up || d->nb == 0) return rc;
  const bucket_t *last = &d->b[d->nb - 1];
  size_t lo = d->O[last->obase], hi = d->O[last->obase + 1];
  if (hi == lo) return 0;
  *cost = d->P[hi - 1].c; /* the cheapest undominated point is the last */
  if (!d->relax || !d->thinned) backtrack(d, hi - 1);
  return 0;
}

/* ---- setup -------------------------------------------------------------- */

static int setup(dp_t *d, const st__ilp_ws_t *ws) {
  size_t n_ids = 0, n_ends = 0;
  memset(d, 0, sizeof *d);
  d->ws = ws;
  for (int u = 0; u < ws->n_nodes; u++)
    if (live(ws, u)) d->n_live++, n_ids += (size_t)ws->nodes[u].n;
  for (int k = 0; k < ws->n_edges; k++)
    n_ends += (size_t)live_edge(ws, k);
  d->nb = d->n_live;
  d->b = strata_calloc((size_t)d->nb + 1, sizeof *d->b);
  d->edge_pool = strata_malloc((n_ends + 1) * sizeof(int));
  d->na = strata_calloc((size_t)ws->n_nodes + 1, sizeof(int));
  d->val = strata_calloc((size_t)ws->n_nodes + 1, sizeof(int));
  d->ids_off = strata_calloc((size_t)ws->n_nodes + 1, sizeof(int));
  d->ids = strata_malloc((n_ids + 1) * sizeof(int));
  if (!d->b || !d->edge_pool || !d->na || !d->val || !d->ids_off || !d->ids)
    return STRATA_ENOMEM;
  int at = 0;
  for (int u = 0; u < ws->n_nodes; u++) {
    d->ids_off[u] = at;
    for (int s = 0; live(ws, u) && s < ws->nodes[u].n; s++)
      if (ws->nodes[u].alive[s]) d->ids[at++] = s, d->na[u]++;
  }
  return 0;
}

static void teardown(dp_t *d) {
  strata_free(d->b);
  strata_free(d->edge_pool);
  strata_free(d->na);
  strata_free(d->val);
  strata_free(d->ids_off);
  strata_free(d->ids);
  strata_free(d->P);
  strata_free(d->V);
  strata_free(d->O);
  strata_free(d->cur.v);
  strata_free(d->nxt.v);
  strata_free(d->all.v);
  strata_free(d->heap);
  strata_free(d->lag);
  strata_free(d->lag_arg);
}

/* ---- levels ------------------------------------------------------------- */

static int dbl_cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The least peak of any choice: every node's least transient, and t_lb
 * (which holds the fixed nodes'). */
static double least_peak(const st__ilp_ws_t *ws) {
  double lb = ws->t_lb;
  for (int u = 0; u < ws->n_nodes; u++) {
    double lo = INFINITY;
    for (int s = 0; live(ws, u) && s < ws->nodes[u].n; s++)
      if (ws->nodes[u].alive[s]) lo = fmin(lo, ws->nodes[u].trans[s]);
    if (lo < INFINITY) lb = fmax(lb, lo);
  }
  return lb;
}

/* The peak levels, increasing from the least peak any choice has. */
static int levels(const st__ilp_ws_t *ws, double **out, int *n) {
  size_t k = 1, cap = 1;
  for (int u = 0; u < ws->n_nodes; u++)
    cap += live(ws, u) ? (size_t)ws->nodes[u].n : 0;
  double *l = strata_malloc(cap * sizeof *l);
  if (!l) return STRATA_ENOMEM;
  l[0] = least_peak(ws);
  for (int u = 0; u < ws->n_nodes; u++)
    for (int s = 0; live(ws, u) && s < ws->nodes[u].n; s++)
      if (ws->nodes[u].alive[s] && ws->nodes[u].trans[s] > l[0])
        l[k++] = ws->nodes[u].trans[s];
  qsort(l, k, sizeof *l, dbl_cmp);
  size_t w = 0;
  for (size_t i = 0; i < k; i++)
    if (w == 0 || l[i] != l[w - 1]) l[w++] = l[i];
  *out = l;
  *n = (int)w;
  return 0;
}

/* One run over the peak levels lv[lo..hi]: strategies up to lv[hi], the
 * budget less lv[lo] (a relaxation unless lo == hi), restricting or
 * relaxing.  *v: its value (live part), INFINITY when nothing fits or
 * beats the incumbent. */
static int run_at(dp_t *d, const double *lv, int lo, int hi, int relax,
                  double *v) {
  d->allow_t = lv[hi];
  d->bud = d->ws->budget - d->ws->mem_const - lv[lo];
  d->relax = relax;
  d->runs++;
  return run(d, v);
}

static int out_of_time(const dp_t *d) {
  return d->runs >= RUNS_MAX || (d->deadline > 0 && strata_now() > d->deadline);
}

/* The set sizes a run is tried with, smallest first: a coarse run is
 * cheap and often enough (an incumbent to prune with, a bound that
 * already settles a range). */
static int cap_step(const dp_t *d, int k) {
  int c = d->max_cap >> (3 * (2 - k));
  return c < 8 ? 8 : c;
}

/* The choice the last run backtracked becomes the incumbent. */
static void adopt(dp_t *d, double v, int *choice) {
  const st__ilp_ws_t *ws = d->ws;
  d->inc = v;
  d->have = 1;
  for (int u = 0; u < ws->n_nodes; u++)
    choice[u] = live(ws, u) ? strat(d, u, d->val[u]) : ws->nodes[u].fixed;
}

/* Does the choice the last run backtracked fit, with its true peak? */
static int fits(const dp_t *d) {
  const st__ilp_ws_t *ws = d->ws;
  double m = ws->mem_const, peak = ws->t_lb;
  for (int u = 0; u < ws->n_nodes; u++) {
    if (!live(ws, u)) continue;
    int o = strat(d, u, d->val[u]);
    m += ws->nodes[u].mem[o];
    peak = fmax(peak, ws->nodes[u].trans[o]);
  }
  return m + peak <= ws->budget + 1e-9 * fabs(ws->budget);
}

/* Restricting runs at level lv[i]: a better choice becomes the incumbent.
 * *exact: the level's optimum was found. */
static int restrict_at(dp_t *d, const double *lv, int i, int steps, int *choice,
                       int *exact) {
  double v;
  *exact = 0;
  for (int k = 0; k < steps && !*exact && !out_of_time(d); k++) {
    d->cap = cap_step(d, k);
    int rc = run_at(d, lv, i, i, 0, &v);
    if (rc || d->gave_up) return rc;
    *exact = !d->thinned;
    if (*exact) d->level_opt = v;
    if (v < d->inc) adopt(d, v, choice);
  }
  return 0;
}

/* What a range can do at best, given a relaxed value v computed while
 * pruning against the incumbent (INFINITY: nothing beats it). */
static double range_bound(const dp_t *d, double v, double parent) {
  return fmax(parent, v < INFINITY ? v : d->inc);
}

static int pruned(const dp_t *d, double bound) {
  double inc = d->inc + d->ws->obj_const;
  return bound + d->ws->obj_const >= inc - d->gap * fabs(inc);
}

/* Relaxing runs over lv[lo..hi], finer until one settles the range.
 * When a run is exact and its choice fits after all (its true peak
 * leaves room), that choice is the range's optimum. */
static int relax_range(dp_t *d, const double *lv, int lo, int hi, double parent,
                       int steps, int *choice, double *bound) {
  double v;
  *bound = parent;
  for (int k = 0; k < steps && !out_of_time(d); k++) {
    d->cap = cap_step(d, k);
    int rc = run_at(d, lv, lo, hi, 1, &v);
    if (rc || d->gave_up) return rc;
    *bound = fmax(*bound, range_bound(d, v, parent));
    if (!d->thinned && v < d->inc && fits(d)) adopt(d, v, choice);
    if (!d->thinned || pruned(d, *bound)) return 0;
  }
  return 0;
}

/* Solve the levels lv[lo..hi] whose bound is at least parent: *bound
 * receives a lower bound of their optimum (live part).  A range whose
 * relaxation cannot beat the incumbent is dropped whole; otherwise it is
 * halved, down to single levels solved exactly (or, when thinned,
 * bounded by their relaxation). */
static int range(dp_t *d, const double *lv, int lo, int hi, double parent,
                 int *choice, double *bound) {
  double b1, b2;
  int rc, exact;
  *bound = parent;
  if (out_of_time(d) || (d->have && pruned(d, parent))) return 0;
  if (lo == hi && lo == d->first && d->first_exact) {
    *bound = range_bound(d, d->first_opt, parent); /* solved first */
    return 0;
  }
  if (lo == hi) {
    if ((rc = restrict_at(d, lv, lo, 3, choice, &exact))) return rc;
    if (exact) *bound = range_bound(d, d->level_opt, parent);
    if (exact || d->gave_up) return 0;
  }
  if ((rc = relax_range(d, lv, lo, hi, parent, 3, choice, bound)) || d->gave_up)
    return rc;
  if (lo == hi || pruned(d, *bound)) return 0;
  int mid = lo + (hi - lo) / 2;
  if ((rc = range(d, lv, mid + 1, hi, *bound, choice, &b2))) return rc;
  if ((rc = range(d, lv, lo, mid, *bound, choice, &b1))) return rc;
  *bound = fmin(b1, b2);
  return 0;
}

void st__ilp_dp_out_init(st__ilp_dp_out_t *out) {
  out->applicable = out->have = 0;
  out->bound = -INFINITY;
}

/* ---- the Lagrangian bound --------------------------------------------- */

/* Min-sum of cost + lam * mem over the allowed strategies, exactly, on
 * the same elimination (one number per table entry instead of a set):
 * its value and, in d->val, a minimiser. */
static double lag_run(dp_t *d, double lam) {
  const st__ilp_ws_t *ws = d->ws;
  for (int at = 0; at < d->nb; at++) {
    const bucket_t *b = &d->b[at];
    const st__ilp_wnode_t *n = &ws->nodes[b->var];
    for (size_t e = 0; e < (size_t)b->n_ent; e++) {
      double best = INFINITY;
      int arg = 0;
      set_entry(d, b, e);
      for (int s = 0; s < d->na[b->var]; s++) {
        if (!allowed(d, b->var, s)) continue;
        int o = strat(d, b->var, s);
        double v = n->cost[o] + lam * n->mem[o];
        d->val[b->var] = s;
        for (int k = 0; k < b->ne; k++)
          v += edge_cost(d, b->edges[k]);
        for (int k = 0; k < b->nm; k++) {
          const bucket_t *m = &d->b[b->msgs[k]];
          v += d->lag[m->lbase + entry_of(d, m)];
        }
        if (v < best) best = v, arg = s;
      }
      d->lag[b->lbase + e] = best;
      d->lag_arg[b->lbase + e] = arg;
    }
  }
  for (int at = d->nb; at-- > 0;) {
    const bucket_t *b = &d->b[at];
    d->val[b->var] = d->lag_arg[b->lbase + entry_of(d, b)];
  }
  return d->lag[d->b[d->nb - 1].lbase];
}

/* Memory of the minimiser in d->val (live part, no peak). */
static double val_mem(const dp_t *d) {
  double m = 0;
  for (int u = 0; u < d->ws->n_nodes; u++)
    if (live(d->ws, u)) m += d->ws->nodes[u].mem[strat(d, u, d->val[u])];
  return m;
}

/* Cost of the minimiser in d->val (live part), summed afresh rather than
 * recovered from the priced value, which would carry lam * mem's
 * rounding. */
static double val_cost(dp_t *d) {
  const st__ilp_ws_t *ws = d->ws;
  double c = 0;
  for (int u = 0; u < ws->n_nodes; u++)
    if (live(ws, u)) c += ws->nodes[u].cost[strat(d, u, d->val[u])];
  for (int k = 0; k < ws->n_edges; k++)
    if (live_edge(ws, k)) c += edge_cost(d, k);
  return c;
}

/* One point of the dual: its value (a lower bound); its minimiser becomes
 * the incumbent when it fits and is better.  *over: the minimiser's
 * memory exceeds the budget. */
static double lag_point(dp_t *d, double lam, int *choice, int *over) {
  double v = lag_run(d, lam), m = val_mem(d);
  *over = m > d->bud;
  if (fits(d)) {
    double cost = val_cost(d);
    if (cost < d->inc) adopt(d, cost, choice);
  }
  return v - lam * d->bud;
}

/* The Lagrangian dual of the memory row, max over lam >= 0 of
 * min_x cost(x) + lam (mem(x) - budget), with the exact min-sum DP inside
 * (Fisher 1981): as strong as the LP relaxation on a chain, at the cost
 * of a few dozen cheap runs.  Every strategy, the least peak: a
 * relaxation of every level.  Returns the best value seen. */
static double lagrangian(dp_t *d, const double *lv, int n_lv, int *choice) {
  double lo = 0, hi = 1, best, v;
  int over;
  d->allow_t = lv[n_lv - 1];
  d->bud = d->ws->budget - d->ws->mem_const - lv[0];
  best = lag_point(d, 0, choice, &over);
  if (!over) return best; /* the unconstrained optimum fits the relaxation */
  for (int i = 0; i < 200 && isfinite(hi); i++, lo = hi, hi *= 4) {
    best = fmax(best, v = lag_point(d, hi, choice, &over));
    if (!over) break;
  }
  for (int it = 0; it < 60 && !out_of_time(d); it++) {
    double mid = 0.5 * (lo + hi);
    best = fmax(best, v = lag_point(d, mid, choice, &over));
    if (over)
      lo = mid;
    else
      hi = mid;
  }
  return best;
}

/* The min-sum tables; 0, or 1 when too large to be worth it. */
static int lag_alloc(dp_t *d) {
  size_t n = 0;
  for (int at = 0; at < d->nb; at++) {
    d->b[at].lbase = n;
    n += (size_t)d->b[at].n_ent;
  }
  if (n > POINTS_MAX) return 1;
  d->lag = strata_malloc((n + 1) * sizeof *d->lag);
  d->lag_arg = strata_malloc((n + 1) * sizeof *d->lag_arg);
  return d->lag && d->lag_arg ? 0 : STRATA_ENOMEM;
}

int st__ilp_dp_solve(const st__ilp_ws_t *ws, int cap, double gap,
                     double deadline, int *choice, st__ilp_dp_out_t *out) {
  dp_t d;
  double *lv = NULL, bound;
  int n_lv = 0, exact = 0;
  st__ilp_dp_out_init(out);
  int rc = setup(&d, ws);
  if (rc || ws->budget <= 0 || d.n_live > NODES_MAX || cap < 1) goto out;
  rc = symbolic(&d);
  if (rc) {
    rc = rc < 0 ? STRATA_ENOMEM : 0; /* 1: too wide, left to GLPK */
    goto out;
  }
  if ((rc = levels(ws, &lv, &n_lv))) goto out;
  out->applicable = 1;
  d.max_cap = cap;
  d.gap = gap;
  d.deadline = deadline;
  d.inc = INFINITY;
  /* bounds at once, whatever the deadline leaves of the rest: the
   * Lagrangian dual, and a coarse relaxation of every level */
  double b0 = -INFINITY;
  if ((rc = lag_alloc(&d)) < 0) goto out;
  if (rc == 0 && d.nb > 0) b0 = lagrangian(&d, lv, n_lv, choice);
  if ((rc = relax_range(&d, lv, 0, n_lv - 1, b0, 1, choice, &b0))) goto out;
  /* then the highest peak (every strategy allowed; a peak is small beside
   * the rest of the memory): an incumbent to prune the rest with */
  if (!(d.have && pruned(&d, b0)) &&
      (rc = restrict_at(&d, lv, n_lv - 1, 3, choice, &exact)))
    goto out;
  d.first = n_lv - 1;
  d.first_exact = exact;
  d.first_opt = d.level_opt;
  if ((rc = range(&d, lv, 0, n_lv - 1, b0, choice, &bound))) goto out;
  out->have = d.have;
  if (bound > -INFINITY) out->bound = ws->obj_const + fmin(bound, d.inc);
out:
  strata_free(lv);
  teardown(&d);
  if (rc) return strata_error(STRATA_ENOMEM, "out of memory solving the ILP");
  return 0;
}
