/*
 * ilp_build.c - the flat MIP of a working copy: columns, rows and the
 * constraint matrix as 1-based triplets, ready for glp_load_matrix.
 *
 * Columns: X (binary) per live strategy of each node that has variables,
 * B >= 0 per live strategy pair of each live edge, and T >= t_lb when
 * some node's transient can exceed t_lb.  Rows: sum X = 1 per node; the
 * marginal rows sum_j B_ij - X_i = 0 and sum_i B_ij - X_j = 0 per edge;
 * the memory row; T - sum X_s trans_s >= 0 per node whose transient can
 * exceed t_lb.  Unreduced, every node has variables and every row of
 * DESIGN.md is there.  Reduced, fixed nodes have none.
 *
 * Counting and building walk the same loops so that they cannot disagree.
 * The columns are then reordered (X, costed B, zero-cost B, T), which GLPK
 * solves markedly faster than the natural order.
 */
#include <string.h>

#include "intraop/ilp_impl.h"
#include "strata/core.h"

static int has_vars(const st__ilp_ws_t *ws, int u) {
  return ws->nodes[u].fixed < 0;
}

static int needs_peak_row(const st__ilp_ws_t *ws, int u) {
  const st__ilp_wnode_t *n = &ws->nodes[u];
  if (ws->budget <= 0 || !has_vars(ws, u)) return 0;
  for (int s = 0; s < n->n; s++)
    if (n->alive[s] && n->trans[s] > ws->t_lb) return 1;
  return 0;
}

/* All v-side marginal rows are kept even when reduced: one of them is
 * implied by the others, but leaving it out made GLPK's simplex up to 5x
 * slower on chains. */
static int mv_rows(const st__ilp_ws_t *ws, const st__ilp_wedge_t *e) {
  return ws->nodes[e->v].n_alive;
}

typedef struct {
  int n_int, n_cont, n_rows, has_t;
  size_t nnz;
} counts_t;

static counts_t count(const st__ilp_ws_t *ws) {
  counts_t c = {0, 0, 0, 0, 0};
  size_t mem_nnz = 0;
  for (int u = 0; u < ws->n_nodes; u++) {
    if (!has_vars(ws, u)) continue;
    int na = ws->nodes[u].n_alive;
    c.n_int += na;
    c.n_rows++;
    c.nnz += (size_t)na;
    mem_nnz += (size_t)na;
    if (needs_peak_row(ws, u)) {
      c.has_t = 1;
      c.n_rows++;
      c.nnz += (size_t)na + 1;
    }
  }
  for (int k = 0; k < ws->n_edges; k++) {
    const st__ilp_wedge_t *e = &ws->edges[k];
    if (e->dead) continue;
    size_t na = (size_t)ws->nodes[e->u].n_alive, mv = (size_t)mv_rows(ws, e);
    c.n_cont += (int)(na * (size_t)ws->nodes[e->v].n_alive);
    c.n_rows += (int)(na + mv);
    c.nnz += na * (size_t)ws->nodes[e->v].n_alive + na + mv * (na + 1);
  }
  if (ws->budget > 0) {
    c.n_rows++;
    c.nnz += mem_nnz + (size_t)c.has_t;
  }
  c.n_cont += c.has_t;
  return c;
}

void st__ilp_lp_count(const st__ilp_ws_t *ws, int *n_int, int *n_cont,
                      int *n_rows, size_t *nnz) {
  counts_t c = count(ws);
  *n_int = c.n_int;
  *n_cont = c.n_cont;
  *n_rows = c.n_rows;
  if (nnz) *nnz = c.nnz;
}

/* ---- building ----------------------------------------------------------- */

typedef struct {
  st__ilp_lp_t *lp;
  int col, row; /* last used */
  size_t k;     /* last used triplet */
  int *xcol;    /* [n_nodes] column of the node's first live strategy */
  int tcol;
} builder_t;

static void tag(int *t, int idx, int kind, int a, int b, int c) {
  t[4 * idx] = kind;
  t[4 * idx + 1] = a;
  t[4 * idx + 2] = b;
  t[4 * idx + 3] = c;
}

static int add_col(builder_t *b, int bin, double obj, double lb, int kind,
                   int x, int y, int z) {
  int j = ++b->col;
  b->lp->col_bin[j] = (unsigned char)bin;
  b->lp->obj[j] = obj;
  b->lp->col_lb[j] = lb;
  tag(b->lp->col_tag, j, kind, x, y, z);
  return j;
}

static int add_row(builder_t *b, char type, double rhs, int kind, int x,
                   int y) {
  int i = ++b->row;
  b->lp->row_type[i] = (unsigned char)type;
  b->lp->row_rhs[i] = rhs;
  tag(b->lp->row_tag, i, kind, x, y, 0);
  return i;
}

static void put(builder_t *b, int row, int col, double v) {
  size_t k = ++b->k;
  b->lp->ia[k] = row;
  b->lp->ja[k] = col;
  b->lp->ar[k] = v;
}

/* Column of live strategy s of node u (X columns are consecutive). */
static int xcol_of(const builder_t *b, const st__ilp_ws_t *ws, int u, int s) {
  int j = b->xcol[u];
  for (int t = 0; t < s; t++)
    j += ws->nodes[u].alive[t];
  return j;
}

static void build_nodes(builder_t *b, const st__ilp_ws_t *ws) {
  for (int u = 0; u < ws->n_nodes; u++) {
    const st__ilp_wnode_t *n = &ws->nodes[u];
    if (!has_vars(ws, u)) continue;
    int r = add_row(b, 'E', 1.0, ST__ILP_ROW_ONE, u, 0);
    b->xcol[u] = b->col + 1;
    for (int s = 0; s < n->n; s++)
      if (n->alive[s])
        put(b, r, add_col(b, 1, n->cost[s], 0.0, ST__ILP_COL_X, u, s, 0), 1.0);
  }
}

static void build_edge(builder_t *b, const st__ilp_ws_t *ws,
                       const st__ilp_wedge_t *e, int ord) {
  const st__ilp_wnode_t *na = &ws->nodes[e->u], *nb = &ws->nodes[e->v];
  int c0 = b->col + 1, nbl = nb->n_alive, left = mv_rows(ws, e);
  for (int i = 0; i < na->n; i++)
    for (int j = 0; na->alive[i] && j < nb->n; j++)
      if (nb->alive[j])
        add_col(b, 0, e->cost[(size_t)i * nb->n + j], 0.0, ST__ILP_COL_B, ord,
                i, j);
  int ii = 0;
  for (int i = 0; i < na->n; i++) {
    if (!na->alive[i]) continue;
    int r = add_row(b, 'E', 0.0, ST__ILP_ROW_MU, ord, i);
    for (int jj = 0; jj < nbl; jj++)
      put(b, r, c0 + ii * nbl + jj, 1.0);
    put(b, r, xcol_of(b, ws, e->u, i), -1.0);
    ii++;
  }
  int jj = 0;
  for (int j = 0; j < nb->n && jj < left; j++) {
    if (!nb->alive[j]) continue;
    int r = add_row(b, 'E', 0.0, ST__ILP_ROW_MV, ord, j);
    for (int i2 = 0; i2 < na->n_alive; i2++)
      put(b, r, c0 + i2 * nbl + jj, 1.0);
    put(b, r, xcol_of(b, ws, e->v, j), -1.0);
    jj++;
  }
}

static void build_memory(builder_t *b, const st__ilp_ws_t *ws, int has_t) {
  if (ws->budget <= 0) return;
  if (has_t) b->tcol = add_col(b, 0, 0.0, ws->t_lb, ST__ILP_COL_T, 0, 0, 0);
  double rhs = ws->budget - ws->mem_const - (has_t ? 0.0 : ws->t_lb);
  int r = add_row(b, 'U', rhs, ST__ILP_ROW_MEM, 0, 0);
  for (int u = 0; u < ws->n_nodes; u++) {
    const st__ilp_wnode_t *n = &ws->nodes[u];
    for (int s = 0; has_vars(ws, u) && s < n->n; s++)
      if (n->alive[s]) put(b, r, xcol_of(b, ws, u, s), n->mem[s]);
  }
  if (has_t) put(b, r, b->tcol, 1.0);
  for (int u = 0; u < ws->n_nodes; u++) {
    const st__ilp_wnode_t *n = &ws->nodes[u];
    if (!needs_peak_row(ws, u)) continue;
    int pr = add_row(b, 'L', 0.0, ST__ILP_ROW_PEAK, u, 0);
    put(b, pr, b->tcol, 1.0);
    for (int s = 0; s < n->n; s++)
      if (n->alive[s]) put(b, pr, xcol_of(b, ws, u, s), -n->trans[s]);
  }
}

static int lp_alloc(st__ilp_lp_t *lp, const counts_t *c) {
  size_t nc = (size_t)lp->n_cols + 1, nr = (size_t)lp->n_rows + 1;
  lp->ia = strata_malloc((c->nnz + 1) * sizeof(int));
  lp->ja = strata_malloc((c->nnz + 1) * sizeof(int));
  lp->ar = strata_malloc((c->nnz + 1) * sizeof(double));
  lp->obj = strata_calloc(nc, sizeof(double));
  lp->col_lb = strata_calloc(nc, sizeof(double));
  lp->col_bin = strata_calloc(nc, 1);
  lp->row_type = strata_calloc(nr, 1);
  lp->row_rhs = strata_calloc(nr, sizeof(double));
  lp->col_tag = strata_calloc(4 * nc, sizeof(int));
  lp->row_tag = strata_calloc(4 * nr, sizeof(int));
  if (!lp->ia || !lp->ja || !lp->ar || !lp->obj || !lp->col_lb ||
      !lp->col_bin || !lp->row_type || !lp->row_rhs || !lp->col_tag ||
      !lp->row_tag)
    return strata_error(STRATA_ENOMEM, "out of memory building the ILP");
  return 0;
}

/* Column class for the final order: X, costed B, free B, T. */
static int col_class(const st__ilp_lp_t *lp, int j) {
  int kind = lp->col_tag[4 * j];
  if (kind == ST__ILP_COL_X) return 0;
  if (kind == ST__ILP_COL_T) return 3;
  return lp->obj[j] != 0.0 ? 1 : 2;
}

static void permute_doubles(double *v, const int *perm, double *tmp, int n) {
  for (int j = 1; j <= n; j++)
    tmp[perm[j]] = v[j];
  memcpy(v + 1, tmp + 1, (size_t)n * sizeof *v);
}

/* Reorder the columns by class (stable).  GLPK's simplex is much faster
 * on these MIPs with the zero-cost B columns last (2.5x on a 500-node
 * chain): its initial basis and pricing depend on the column order. */
static int order_columns(st__ilp_lp_t *lp) {
  int n = lp->n_cols, k = 0, rc = 0;
  int *perm = strata_malloc(((size_t)n + 1) * sizeof *perm);
  double *tmp = strata_malloc(((size_t)n + 1) * 4 * sizeof *tmp);
  if (!perm || !tmp) {
    rc = strata_error(STRATA_ENOMEM, "out of memory building the ILP");
    goto out;
  }
  for (int c = 0; c < 4; c++)
    for (int j = 1; j <= n; j++)
      if (col_class(lp, j) == c) perm[j] = ++k;
  for (size_t q = 1; q <= lp->nnz; q++)
    lp->ja[q] = perm[lp->ja[q]];
  permute_doubles(lp->obj, perm, tmp, n);
  permute_doubles(lp->col_lb, perm, tmp, n);
  for (int j = 1; j <= n; j++)
    tmp[perm[j]] = lp->col_bin[j];
  for (int j = 1; j <= n; j++)
    lp->col_bin[j] = (unsigned char)tmp[j];
  int *tags = (int *)tmp;
  memcpy(tags + 4, lp->col_tag + 4, (size_t)n * 4 * sizeof(int));
  for (int j = 1; j <= n; j++)
    memcpy(lp->col_tag + 4 * perm[j], tags + 4 * j, 4 * sizeof(int));
out:
  strata_free(perm);
  strata_free(tmp);
  return rc;
}

int st__ilp_lp_build(const st__ilp_ws_t *ws, st__ilp_lp_t *lp) {
  counts_t c = count(ws);
  builder_t b = {lp, 0, 0, 0, NULL, 0};
  int rc;
  memset(lp, 0, sizeof *lp);
  lp->n_cols = c.n_int + c.n_cont;
  lp->n_rows = c.n_rows;
  lp->n_int = c.n_int;
  lp->nnz = c.nnz;
  b.xcol = strata_calloc((size_t)ws->n_nodes, sizeof(int));
  rc = b.xcol ? lp_alloc(lp, &c)
              : strata_error(STRATA_ENOMEM, "out of memory building the ILP");
  if (rc) goto out;
  lp->obj[0] = ws->obj_const;
  build_nodes(&b, ws);
  for (int k = 0, ord = 0; k < ws->n_edges; k++)
    if (!ws->edges[k].dead) build_edge(&b, ws, &ws->edges[k], ord++);
  build_memory(&b, ws, c.has_t);
  if (b.col != lp->n_cols || b.row != lp->n_rows || b.k != lp->nnz)
    rc = strata_error(STRATA_EINTERNAL,
                      "ILP size mismatch: %d/%d columns, "
                      "%d/%d rows, %zu/%zu entries",
                      b.col, lp->n_cols, b.row, lp->n_rows, b.k, lp->nnz);
  if (!rc) rc = order_columns(lp);
out:
  strata_free(b.xcol);
  if (rc) st__ilp_lp_free(lp);
  return rc;
}

void st__ilp_lp_free(st__ilp_lp_t *lp) {
  strata_free(lp->ia);
  strata_free(lp->ja);
  strata_free(lp->ar);
  strata_free(lp->obj);
  strata_free(lp->col_lb);
  strata_free(lp->col_bin);
  strata_free(lp->row_type);
  strata_free(lp->row_rhs);
  strata_free(lp->col_tag);
  strata_free(lp->row_tag);
  memset(lp, 0, sizeof *lp);
}
