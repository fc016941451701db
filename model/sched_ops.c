/*
 * sched_ops.c - the pipeline schedules other than Megatron-LM's 1F1B and
 * interleaved 1F1B (sched.c), simulated op by op: forwards (F), input-
 * gradient backwards (B) and, for the zero-bubble family, weight-gradient
 * backwards (W) split from them (Qi et al. 2024, "Zero Bubble Pipeline
 * Parallelism", section 2).
 *
 * ZB-H1, ZBVZeroBubble, DualPipeV and DualPipe run their authors' own
 * order of each rank's ops (zbh1_order, zbv_order, dual_order), each op
 * as soon as its input and its rank are free.  GPipe, LoopedBFS and
 * InterleavedZeroBubble are stated as the rule for a rank's next op: which
 * ops a rank may start (its warm-up or memory cap: the micro-batches it
 * holds activations of), and which it prefers.  A rank runs the op it may
 * start earliest, B before F before W at the same time; a W only where it
 * fills time the rank would idle (it ends before the next F or B can
 * start) or where the cap leaves nothing else.  Ops are placed one at a
 * time, always the one that starts earliest over all ranks, so no op
 * placed later could have started before one placed earlier: the result
 * depends on nothing but the inputs.
 *
 * Placement: GPipe, 1F1B and ZB-H1 put chunk k on rank k; LoopedBFS and
 * InterleavedZeroBubble chunk k on rank k mod pp; the V-shaped
 * ZBVZeroBubble and DualPipeV chunks k and 2 pp - 1 - k on rank k (the
 * first and last chunk on rank 0); DualPipe runs two pipelines of pp
 * chunks, half the micro-batches each, one from each end (rank r holds
 * chunk r of one and pp - 1 - r of the other: two copies of the model's
 * parameters; DeepSeek-V3 technical report, section 3.2.1).  DualPipe
 * and DualPipeV run a forward and a backward of two chunks of a rank as
 * one overlapped op where both can start: each one's all-to-all hidden
 * under the other's compute.
 */
#include <math.h>
#include <string.h>

#include "pipeline/search.h"

enum { OP_F, OP_B, OP_W };

/* One run: the schedule's chunks (Q of them, M micro-batches each). */
typedef struct {
  const strata_sched_t *S;
  int p, Q, M, split, overlap, local;  /* local: chunks a rank */
  int *rank, *tix, *prev, *next, *pos; /* [Q]: rank, time index, neighbours,
                                          place on its rank */
  int *loc;              /* [p local]: rank r's chunks, by their place on it */
  int *nf, *nb, *nw;     /* [Q]: done of each kind */
  double *f_end, *b_end; /* [Q M] */
  double *free_at;       /* [p] */
  int *cap_fb, *cap_w;   /* [p]: the most F not yet B / W */
} sim_t;

static int v_shaped(int s) {
  return s == STRATA_PPS_ZBV || s == STRATA_PPS_DUALPIPEV;
}

static double p2p_of(const sim_t *X, int q, int to) {
  if (X->rank[q] == X->rank[to] || !X->S->p2p) return 0;
  return X->S->p2p[X->tix[q] < X->tix[to] ? X->tix[q] : X->tix[to]];
}

static double wgt_of(const sim_t *X, int q) {
  const strata_sched_t *S = X->S;
  return S->wgt ? S->wgt[X->tix[q]] : S->bwd[X->tix[q]] / 2;
}

static double op_time(const sim_t *X, int kind, int q) {
  const strata_sched_t *S = X->S;
  if (kind == OP_F) return S->fwd[X->tix[q]];
  if (kind == OP_W) return wgt_of(X, q);
  return S->bwd[X->tix[q]] - (X->split ? wgt_of(X, q) : 0);
}

/* When op (kind, q)'s next micro-batch has its input, or -1: not yet. */
static double ready(const sim_t *X, int kind, int q) {
  int M = X->M;
  if (kind == OP_F) {
    int i = X->nf[q], u = X->prev[q];
    if (u < 0) return 0;
    return X->nf[u] > i ? X->f_end[u * M + i] + p2p_of(X, u, q) : -1;
  }
  if (kind == OP_W) {
    int i = X->nw[q];
    return X->nb[q] > i ? X->b_end[q * M + i] : -1;
  }
  int i = X->nb[q], d = X->next[q];
  if (d < 0) return X->nf[q] > i ? X->f_end[q * M + i] : -1;
  return X->nb[d] > i ? X->b_end[d * M + i] + p2p_of(X, q, d) : -1;
}

/* Rank r's ops held: F not yet B, F not yet W; its F and B left. */
static void held(const sim_t *X, int r, int *fb, int *fw, int *f_left,
                 int *b_left) {
  *fb = *fw = *f_left = *b_left = 0;
  for (int i = 0; i < X->local; i++) {
    int q = X->loc[r * X->local + i];
    *fb += X->nf[q] - X->nb[q];
    *fw += X->nf[q] - (X->split ? X->nw[q] : X->nb[q]);
    *f_left += X->M - X->nf[q];
    *b_left += X->M - X->nb[q];
  }
}

/* May rank r start (kind, q) now, by its schedule's rule? */
static int allowed(const sim_t *X, int r, int kind, int q) {
  int s = X->S->schedule, fb, fw, fl, bl;
  if (kind == OP_W) return X->split;
  held(X, X->rank[q], &fb, &fw, &fl, &bl);
  if (s == STRATA_PPS_GPIPE) return kind == OP_F || fl == 0;
  if (s == STRATA_PPS_LOOPED_BFS) {
    /* breadth first: every micro-batch of a chunk before the next */
    if (kind == OP_B && fl) return 0;
    for (int i = 0; i < X->local; i++) {
      int u = X->loc[r * X->local + i];
      if (u != q && (kind == OP_F ? X->pos[u] < X->pos[q] && X->nf[u] < X->M
                                  : X->pos[u] > X->pos[q] && X->nb[u] < X->M))
        return 0;
    }
    return 1;
  }
  if (kind == OP_B) return 1;
  /* the warm-up caps a rank's first chunk; its later chunks' forwards
   * (each a step nearer a backward) only the memory, of which each chunk
   * keeps room for one forward of every later one: a rank full of its
   * first chunk's forwards could never run the one its backward needs */
  int later = X->local - 1 - X->pos[q];
  return fw + later < X->cap_w[r] && (fb < X->cap_fb[r] || X->pos[q] > 0);
}

/* The caps: 1F1B's warm-up (pp - r F before its first B), its memory (no
 * rank holds more micro-batches than 1F1B's first does) for ZB-H1; the
 * interleaved warm-up for InterleavedZeroBubble; the V-shapes' 2 pp
 * chunks (1F1B's activations) and DualPipe's pp + 1. */
static void caps(sim_t *X) {
  int p = X->p, v = X->S->vpp, s = X->S->schedule, big = X->Q * X->M;
  for (int r = 0; r < p; r++) {
    int *fb = &X->cap_fb[r], *w = &X->cap_w[r];
    *fb = *w = big;
    if (s == STRATA_PPS_1F1B || s == STRATA_PPS_ZBH1)
      *fb = p - r, *w = s == STRATA_PPS_ZBH1 ? p : p - r;
    else if (s == STRATA_PPS_INTERLEAVED_ZB)
      *fb = (p - r - 1) * 2 + (v - 1) * p + 1,
      *w = (p - 1) * 2 + (v - 1) * p + 1;
    else if (v_shaped(s))
      *fb = *w = 2 * p + (s == STRATA_PPS_DUALPIPEV);
    else if (s == STRATA_PPS_DUALPIPE)
      *fb = *w = p + 1;
  }
}

/* A candidate op of a rank: kind, chunk, start, time. */
typedef struct {
  int kind, q;
  double start, len;
} cand_t;

/* Prefer a to b: the earlier start, then B, F, W; then the chunk nearer
 * the pipeline's end (its ops free memory sooner). */
static int better(const cand_t *a, const cand_t *b) {
  double eps = 1e-12 * (fabs(a->start) + fabs(b->start) + 1e-30);
  if (b->q < 0) return 1;
  if (a->start < b->start - eps) return 1;
  if (a->start > b->start + eps) return 0;
  static const int rank_of_kind[] = {0, 1, 2};
  if (a->kind != b->kind) return rank_of_kind[a->kind] < rank_of_kind[b->kind];
  return a->q > b->q;
}

/* Rank r's next op by its rule (q < 0: none it may start), with its pair
 * (DualPipe's overlapped F and B) in *pair. */
static cand_t pick(const sim_t *X, int r, cand_t *pair) {
  cand_t best = {0, -1, 0, 0}, w = {0, -1, 0, 0};
  pair->q = -1;
  for (int i = 0; i < X->local; i++) {
    int q = X->loc[r * X->local + i];
    for (int kind = OP_F; kind <= OP_W; kind++) {
      int *n = kind == OP_F ? X->nf : kind == OP_B ? X->nb : X->nw;
      if (n[q] >= X->M || !allowed(X, r, kind, q)) continue;
      double at = ready(X, kind, q);
      if (at < 0) continue;
      cand_t c = {kind, q, at > X->free_at[r] ? at : X->free_at[r], 0};
      c.len = op_time(X, kind, q);
      if (kind == OP_W) {
        if (better(&c, &w)) w = c;
      } else if (better(&c, &best))
        best = c;
    }
  }
  /* a W where it ends before the F or B can start, or nothing else */
  if (w.q >= 0 && (best.q < 0 || w.start + w.len <= best.start)) return w;
  if (best.q < 0 || !X->overlap) return best;
  int other = best.kind == OP_F ? OP_B : OP_F;
  for (int i = 0; i < X->local; i++) {
    int q = X->loc[r * X->local + i], *n = other == OP_F ? X->nf : X->nb;
    if (q == best.q || n[q] >= X->M || !allowed(X, r, other, q)) continue;
    double at = ready(X, other, q);
    if (at < 0 || at > best.start) continue;
    cand_t c = {other, q, best.start, op_time(X, other, q)};
    if (pair->q < 0 || c.q > pair->q) *pair = c;
  }
  return best;
}

/* What running F and B of a and b as one op hides: each one's all-to-all
 * under the other's compute. */
static double hidden(const sim_t *X, const cand_t *a, const cand_t *b) {
  const strata_sched_t *S = X->S;
  const cand_t *f = a->kind == OP_F ? a : b, *g = a->kind == OP_F ? b : a;
  double af = S->a2a_f ? S->a2a_f[X->tix[f->q]] : 0;
  double ab = S->a2a_b ? S->a2a_b[X->tix[g->q]] : 0;
  double h = (af < g->len - ab ? af : g->len - ab) +
             (ab < f->len - af ? ab : f->len - af);
  return h > 0 ? h : 0;
}

/* Op c of rank r done at end: its cell's start and end. */
static void place(sim_t *X, const cand_t *c, double end) {
  int M = X->M, r = X->rank[c->q];
  strata_sched_t *S = (strata_sched_t *)X->S;
  if (c->kind == OP_F) {
    S->f_start[c->q * M + X->nf[c->q]] = c->start;
    X->f_end[c->q * M + X->nf[c->q]++] = end;
  } else if (c->kind == OP_B) {
    S->b_start[c->q * M + X->nb[c->q]] = c->start;
    X->b_end[c->q * M + X->nb[c->q]++] = end;
  } else
    X->nw[c->q]++;
  if (end > S->rank_end[r]) S->rank_end[r] = end;
  /* a blocking send holds the rank for the transfer after its op */
  double busy = end;
  int to = c->kind == OP_F   ? X->next[c->q]
           : c->kind == OP_B ? X->prev[c->q]
                             : -1;
  if (S->blocking_p2p && to >= 0) busy += p2p_of(X, c->q, to);
  if (busy > X->free_at[r]) X->free_at[r] = busy;
}

/* One op of a rank's fixed order: its kind and chunk, a full backward
 * (B and W as one op) or a split one, and the op it runs overlapped with
 * (pq >= 0: a full backward of chunk pq under forward q, DualPipe's
 * F&B). */
typedef struct {
  short q, pq;
  char kind, full;
} ord_t;

/* A rank's order as it is written: o its ops, n how many; the weight
 * gradients deferred, oldest first (DualPipe's WeightGradStore queue). */
typedef struct {
  ord_t *o;
  int n, wq[256], wn, wh, lim;
  int cnt[2][3]; /* its two chunks' F, B, W emitted */
  int q[2];      /* its two chunks */
} ow_t;

static void emit(ow_t *w, int kind, int c, int full) {
  if (w->cnt[c][kind] >= w->lim) return; /* ZBV's padding micro-batches */
  ord_t x = {(short)w->q[c], -1, (char)kind, (char)full};
  w->o[w->n++] = x;
  w->cnt[c][kind]++;
  if (kind == OP_B && !full) w->wq[w->wn++ % 256] = w->q[c];
}

static void emit_w(ow_t *w) { /* the oldest deferred W, if any */
  if (w->wh == w->wn) return;
  ord_t x = {(short)w->wq[w->wh++ % 256], -1, OP_W, 0};
  w->o[w->n++] = x;
}

static void emit_fb(ow_t *w, int cf, int cb) { /* F of cf under B of cb */
  ord_t x = {(short)w->q[cf], (short)w->q[cb], OP_F, 1};
  w->o[w->n++] = x;
  w->cnt[cf][OP_F]++, w->cnt[cb][OP_B]++;
}

/* ZB-H1's own order (Qi et al. 2024, figure 3): rank r runs 1F1B's
 * warm-up of p - r - 1 forwards, then a forward and a backward at a time
 * with each weight gradient r micro-batches late (its memory then 1F1B's
 * first rank's, p micro-batches, on every rank), then the backwards left
 * each with a W, then the Ws left: the Ws fill the cool-down's waits. */
static void zbh1_order(const sim_t *X, int r, ow_t *o) {
  int m = X->M, w = X->p - r - 1, nw = 0;
  if (w > m) w = m;
  o->q[0] = r, o->lim = m;
  for (int i = 0; i < w; i++)
    emit(o, OP_F, 0, 0);
  for (int j = 0; j < m; j++) {
    if (w + j < m) emit(o, OP_F, 0, 0);
    emit(o, OP_B, 0, 0);
    if (j >= r || w + j >= m) emit_w(o), nw++;
  }
  while (nw++ < m)
    emit_w(o);
}

/* ZB-V's order (Qi et al. 2024, "Pipeline Parallelism with Controllable
 * Memory", section 6; torch.distributed.pipelining's ScheduleZBVZeroBubble
 * states it so): chunk 0 (stage r) and chunk 1 (stage 2p - 1 - r); 2(p -
 * r) - 1 forwards of chunk 0, r pairs F1 F0, p - r of F1 B1 W1, then F0 B0
 * W0 F1 B1 W1 while forwards are left, then r of B0 B1, p - r of B0 W0,
 * the Ws of chunk 1 left and those of chunk 0.  It is written for at
 * least 2p - 1 micro-batches; with fewer the ops of the missing ones are
 * left out, as torch does. */
static void zbv_order(const sim_t *X, int r, ow_t *o) {
  int p = X->p, n = X->M > 2 * p - 1 ? X->M : 2 * p - 1;
  o->q[0] = r, o->q[1] = 2 * p - 1 - r, o->lim = X->M;
  for (int i = 0; i < 2 * (p - r) - 1; i++)
    emit(o, OP_F, 0, 0);
  for (int i = 0; i < r; i++)
    emit(o, OP_F, 1, 0), emit(o, OP_F, 0, 0);
  for (int i = 0; i < p - r; i++)
    emit(o, OP_F, 1, 0), emit(o, OP_B, 1, 0), emit(o, OP_W, 1, 0);
  int f0 = 2 * (p - r) - 1 + r, f1 = p, b0 = 0, b1 = p - r;
  while (f1 < f0 || f0 < n) {
    if (f0 < n) emit(o, OP_F, 0, 0), f0++;
    emit(o, OP_B, 0, 0), emit(o, OP_W, 0, 0), b0++;
    emit(o, OP_F, 1, 0), emit(o, OP_B, 1, 0), emit(o, OP_W, 1, 0);
    f1++, b1++;
  }
  int w0 = b0, w1 = b1;
  for (int i = 0; i < r; i++)
    emit(o, OP_B, 0, 0), emit(o, OP_B, 1, 0), b0++, b1++;
  for (int i = 0; i < p - r; i++)
    emit(o, OP_B, 0, 0), emit(o, OP_W, 0, 0), b0++, w0++;
  for (; w1 < b1; w1++)
    emit(o, OP_W, 1, 0);
  for (; w0 < b0; w0++)
    emit(o, OP_W, 0, 0);
}

/* DualPipe's and DualPipeV's order (DeepSeek-V3 technical report, section
 * 3.2.1, figure 5; the eight steps of deepseek-ai/DualPipe): with R ranks
 * a direction (DualPipe p/2, DualPipeV p), h the rank's place (DualPipe
 * min(r, p - 1 - r)), M micro-batches a direction and chunk 0 the one the
 * rank runs early: (R - h - 1) 2 F0; h + 1 of F0 F1; R - h - 1 of B1 (W
 * deferred) W F1; M - 2R + h + 1 of F0&B1 F1&B0 (the pairs overlapped,
 * full backwards; the middle rank runs its first F0 and B1 apart); R - h
 * - 1 of B1 F1&B0; h + 1 of B1 B0, the Ws deferred from the middle one
 * on; R - h - 1 of W B0 (W deferred); h + 1 Ws. */
static void dual_order(const sim_t *X, int r, ow_t *o) {
  int p = X->p, dual = X->S->schedule == STRATA_PPS_DUALPIPE;
  int R = dual ? p / 2 : p, h = dual && r >= p / 2 ? p - 1 - r : r;
  int middle = dual ? h == R - 1 : r == p - 1;
  if (dual)
    o->q[0] = r < R ? r : 2 * p - 1 - r, o->q[1] = r < R ? 2 * p - 1 - r : r;
  else
    o->q[0] = r, o->q[1] = 2 * p - 1 - r;
  o->lim = X->M;
  for (int i = 0; i < (R - h - 1) * 2; i++)
    emit(o, OP_F, 0, 0);
  for (int i = 0; i < h + 1; i++)
    emit(o, OP_F, 0, 0), emit(o, OP_F, 1, 0);
  for (int i = 0; i < R - h - 1; i++)
    emit(o, OP_B, 1, 0), emit_w(o), emit(o, OP_F, 1, 0);
  for (int i = 0; i < X->M - 2 * R + h + 1; i++) {
    if (i == 0 && middle)
      emit(o, OP_F, 0, 0), emit(o, OP_B, 1, 1);
    else
      emit_fb(o, 0, 1);
    emit_fb(o, 1, 0);
  }
  for (int i = 0; i < R - h - 1; i++)
    emit(o, OP_B, 1, 1), emit_fb(o, 1, 0);
  int zb = 0;
  for (int i = 0; i < h + 1; i++) {
    if (i == (h + 1) / 2 && h % 2 == 1) zb = 1;
    emit(o, OP_B, 1, !zb);
    if (i == (h + 1) / 2 && h % 2 == 0) zb = 1;
    emit(o, OP_B, 0, !zb);
  }
  for (int i = 0; i < R - h - 1; i++)
    emit_w(o), emit(o, OP_B, 0, 0);
  for (int i = 0; i < h + 1; i++)
    emit_w(o);
}

/* Op x of an order as it would start now, or start < 0: an input is not
 * there yet. */
static cand_t ord_cand(const sim_t *X, int r, const ord_t *x) {
  cand_t c = {x->kind, x->q, -1, 0};
  double t = ready(X, x->kind, x->q);
  if (t < 0) return c;
  c.start = t > X->free_at[r] ? t : X->free_at[r];
  c.len = x->kind == OP_B && x->full ? X->S->bwd[X->tix[x->q]]
                                     : op_time(X, x->kind, x->q);
  return c;
}

/* Place op x of rank r's order if its inputs are there; 1 if placed. */
static int ord_place(sim_t *X, int r, const ord_t *x) {
  cand_t c = ord_cand(X, r, x), d = {OP_B, x->pq, 0, 0};
  if (c.start < 0) return 0;
  double end = c.start + c.len;
  if (x->pq >= 0) { /* the F&B pair: one op, each all-to-all hidden */
    double t = ready(X, OP_B, x->pq);
    if (t < 0) return 0;
    if (t > c.start) c.start = t;
    d.start = c.start, d.len = X->S->bwd[X->tix[x->pq]];
    end = c.start + c.len + d.len - hidden(X, &c, &d);
    place(X, &d, end);
    X->nw[x->pq]++;
  }
  place(X, &c, end);
  if (x->kind == OP_B && x->full) X->nw[x->q]++;
  return 1;
}

/* Each rank's ops in its fixed order, each as soon as its inputs and its
 * rank are free. */
static int run_order(sim_t *X, ord_t *o, int *at, int *len) {
  int p = X->p, left = 0, cap = 6 * X->M + 8;
  for (int r = 0; r < p; r++) {
    ow_t w;
    memset(&w, 0, sizeof w);
    w.o = o + (size_t)r * cap;
    if (X->S->schedule == STRATA_PPS_ZBH1)
      zbh1_order(X, r, &w);
    else if (X->S->schedule == STRATA_PPS_ZBV)
      zbv_order(X, r, &w);
    else
      dual_order(X, r, &w);
    len[r] = w.n, at[r] = 0, left += w.n;
  }
  while (left > 0) {
    int progress = 0;
    for (int r = 0; r < p; r++)
      for (; at[r] < len[r]; at[r]++, progress++, left--)
        if (!ord_place(X, r, &o[(size_t)r * cap + at[r]])) break;
    if (!progress)
      return strata_error(STRATA_EINTERNAL, "schedule: pipeline deadlock");
  }
  return 0;
}

/* Mark the ranks whose next op placing op c may change: its own, and
 * the rank its output goes to. */
static void touch(const sim_t *X, const cand_t *c, int *dirty) {
  dirty[X->rank[c->q]] = 1;
  int to = c->kind == OP_F   ? X->next[c->q]
           : c->kind == OP_B ? X->prev[c->q]
                             : -1;
  if (to >= 0) dirty[X->rank[to]] = 1;
}

/* Every op, the earliest over all ranks first; each rank's pick kept
 * until an op placed changes what it may run (c: its op, pr: its pair). */
static int run_picks(sim_t *X, cand_t *c, cand_t *pr) {
  long left = (long)X->Q * X->M * (X->split ? 3 : 2);
  int *dirty = X->cap_w + X->p + X->Q; /* p ints after loc */
  for (int r = 0; r < X->p; r++)
    dirty[r] = 1;
  while (left > 0) {
    int b = -1;
    for (int r = 0; r < X->p; r++) {
      if (dirty[r]) c[r] = pick(X, r, &pr[r]), dirty[r] = 0;
      if (c[r].q >= 0 && (b < 0 || better(&c[r], &c[b]))) b = r;
    }
    if (b < 0) /* the rule left every rank waiting */
      return 1;
    cand_t best = c[b], pair = pr[b];
    double end = best.start + best.len;
    if (pair.q >= 0) {
      end += pair.len - hidden(X, &best, &pair);
      place(X, &pair, end);
      touch(X, &pair, dirty);
      left--;
    }
    place(X, &best, end);
    touch(X, &best, dirty);
    left--;
  }
  return 0;
}

static int fixed_order(int s) {
  return s == STRATA_PPS_ZBH1 || s == STRATA_PPS_ZBV ||
         s == STRATA_PPS_DUALPIPEV || s == STRATA_PPS_DUALPIPE;
}

/* Every op: in the schedule's fixed order, else by its rule, the
 * earliest over all ranks first. */
static int run_ops(sim_t *X) {
  if (fixed_order(X->S->schedule)) {
    int *at = strata_calloc(2 * (size_t)X->p, sizeof *at);
    ord_t *o = strata_malloc((size_t)X->p * (6 * X->M + 8) * sizeof *o);
    int rc = at && o ? run_order(X, o, at, at + X->p)
                     : strata_error(STRATA_ENOMEM, "out of memory");
    strata_free(at);
    strata_free(o);
    return rc;
  }
  cand_t *c = strata_malloc(2 * (size_t)X->p * sizeof *c);
  if (!c) return strata_error(STRATA_ENOMEM, "out of memory");
  int rc = run_picks(X, c, c + X->p);
  strata_free(c);
  return rc;
}

/* The schedule's chunks: their ranks, time indexes and neighbours. */
static void chunks(sim_t *X) {
  int p = X->p, s = X->S->schedule, K = p * X->S->vpp;
  for (int q = 0; q < X->Q; q++) {
    int lane = s == STRATA_PPS_DUALPIPE ? q / p : 0, j = q - lane * p;
    int first = lane * p,
        last = s == STRATA_PPS_DUALPIPE ? first + p - 1 : K - 1;
    X->tix[q] = s == STRATA_PPS_DUALPIPE ? j : q;
    if (s == STRATA_PPS_DUALPIPE)
      X->rank[q] = lane ? p - 1 - j : j;
    else if (v_shaped(s))
      X->rank[q] = q < p ? q : 2 * p - 1 - q;
    else
      X->rank[q] = q % p;
    X->pos[q] = s == STRATA_PPS_DUALPIPE ? lane : q / p;
    X->prev[q] = q > first ? q - 1 : -1;
    X->next[q] = q < last ? q + 1 : -1;
  }
  for (int q = 0; q < X->Q; q++)
    X->loc[X->rank[q] * X->local + X->pos[q]] = q;
}

int st__sched_micro_ok(int s, int pp, int m) {
  return !(s == STRATA_PPS_DUALPIPE || s == STRATA_PPS_DUALPIPEV) ||
         m >= 2 * pp;
}

int st__sched_ops_check(const strata_sched_t *S) {
  int s = S->schedule;
  if ((s == STRATA_PPS_GPIPE || s == STRATA_PPS_ZBH1 ||
       s == STRATA_PPS_DUALPIPE) &&
      S->vpp != 1)
    return strata_error(STRATA_EINVAL, "schedule %s: one chunk a rank, not %d",
                        strata_pp_schedule_name(s), S->vpp);
  if (v_shaped(s) && S->vpp != 2)
    return strata_error(STRATA_EINVAL,
                        "schedule %s: two chunks a rank (a V), not %d",
                        strata_pp_schedule_name(s), S->vpp);
  if ((s == STRATA_PPS_LOOPED_BFS || s == STRATA_PPS_INTERLEAVED_ZB) &&
      S->vpp < 2)
    return strata_error(STRATA_EINVAL,
                        "schedule %s: at least two chunks a rank",
                        strata_pp_schedule_name(s));
  if (!st__sched_micro_ok(s, S->pp, S->n_micro))
    return strata_error(STRATA_EINVAL,
                        "schedule %s: at least twice as many micro-batches "
                        "(%d) as stages (%d), as its order needs",
                        strata_pp_schedule_name(s), S->n_micro, S->pp);
  if (s == STRATA_PPS_DUALPIPE && (S->n_micro % 2 || S->pp % 2))
    return strata_error(STRATA_EINVAL,
                        "schedule DualPipe: an even number of stages (%d) "
                        "and of micro-batches (%d), half from each end",
                        S->pp, S->n_micro);
  return 0;
}

int st__sched_ops_run(strata_sched_t *S) {
  int rc = st__sched_ops_check(S), p = S->pp;
  if (rc) return rc;
  sim_t X;
  memset(&X, 0, sizeof X);
  X.S = S, X.p = p;
  int dual = S->schedule == STRATA_PPS_DUALPIPE;
  X.Q = dual ? 2 * p : p * S->vpp;
  X.M = dual ? S->n_micro / 2 : S->n_micro;
  X.split = S->schedule >= STRATA_PPS_INTERLEAVED_ZB;
  X.overlap = dual || S->schedule == STRATA_PPS_DUALPIPEV;
  X.local = dual ? 2 : S->vpp;
  size_t cells = (size_t)X.Q * X.M;
  int *ints = strata_calloc((size_t)X.Q * 9 + 3 * (size_t)p, sizeof *ints);
  double *d = strata_calloc(2 * cells + (size_t)p, sizeof *d);
  if (!ints || !d) {
    rc = strata_error(STRATA_ENOMEM, "out of memory");
    goto out;
  }
  X.rank = ints, X.tix = ints + X.Q, X.prev = ints + 2 * X.Q;
  X.next = ints + 3 * X.Q, X.pos = ints + 4 * X.Q, X.nf = ints + 5 * X.Q;
  X.nb = ints + 6 * X.Q, X.nw = ints + 7 * X.Q;
  X.cap_fb = ints + 8 * X.Q, X.cap_w = X.cap_fb + p;
  X.loc = X.cap_w + p; /* Q of them: p ranks of local chunks each */
  X.f_end = d, X.b_end = d + cells, X.free_at = d + 2 * cells;
  chunks(&X);
  caps(&X);
  for (size_t i = 0; i < cells; i++)
    S->f_start[i] = S->b_start[i] = -1;
  for (int r = 0; r < p; r++)
    S->rank_end[r] = 0;
  rc = run_ops(&X);
  S->makespan = 0;
  for (int r = 0; r < p && !rc; r++)
    if (S->rank_end[r] > S->makespan) S->makespan = S->rank_end[r];
out:
  strata_free(ints);
  strata_free(d);
  return rc;
}
