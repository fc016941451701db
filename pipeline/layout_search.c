/*
 * layout_search.c - the layer splits the search generates for Megatron-LM
 * pipelines whose split is left to it (rules/layouts.c parses and checks
 * the splits Megatron-LM states): candidate layouts from the layers'
 * weights, each a --pipeline-model-parallel-layout the rulebook accepts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/search.h"

/* ---- the layouts the search generates ---- */

int st__layouts_allowed(const st__search_t *S) {
  const strata_plan_opts_t *o = S->o;
  /* Megatron-LM's own pipelines, its split left to the search: no rank's
   * size, layout, or embedding or loss counted was given */
  return !o->no_search_layouts && o->megatron &&
         o->framework == STRATA_FRAMEWORK_MEGATRON && !o->first_layers &&
         !o->last_layers && S->lay_K == 0 && o->account_embedding <= 0 &&
         o->account_loss <= 0;
}

/* Whether the chunks n[0..p v) are what a first and a last rank of their
 * own sizes with equal middle ranks give (st__split_of's form): every
 * rank's chunks equal, the middle ranks alike. */
static int rank_form(const int *n, int p, int v) {
  for (int k = p; k < p * v; k++)
    if (n[k] != n[k % p]) return 0;
  for (int r = 2; r < p - 1; r++)
    if (n[r] != n[1]) return 0;
  return 1;
}

static double work_of(const st__part_t *x) {
  return x->fwd + x->bwd;
}

int st__layout_weights(const st__search_t *S, const st__cfg_t *cf, double *w) {
  double unit = st__layers_work(cf->f, 0, S->L) / S->L;
  if (!(unit > 0)) return -1;
  w[0] = work_of(&cf->f->pro) / unit;
  w[1] = work_of(&cf->f->epi) / unit;
  return 0;
}

/* Rank r takes x extra layers, one on each of its latest x middle chunks
 * (not the embedding's chunk 0 nor the loss's K - 1). */
static void extras_to(int *n, int p, int K, int r, int x) {
  for (int k = (K - 1 - r) / p * p + r; x > 0 && k >= 0; k -= p)
    if (k != 0 && k != K - 1) n[k]++, x--;
}

int st__layout_fill(int L, int p, int v, const double *w, int i, int *n) {
  int K = p * v;
  if (i < 0 || i >= ST__LAYOUTS || p < 2 || K < 3 || K > L || K > ST__MAX_PP)
    return -1;
  int q = L / K, a = q - 1 + i / 3, b = q - 2 + i % 3, R = L - a - b;
  if (a < 0 || b < 0 || R < K - 2) return -1;
  int c = R / (K - 2), e = R % (K - 2);
  for (int k = 0; k < K; k++)
    n[k] = k == 0 ? a : k == K - 1 ? b : c;
  /* The extras go one at a time to the least loaded rank with a middle
   * chunk left (ties: the later rank), the embedding and the loss counted
   * by their work (w).  Rank r's j-th extra comes at the load l_r + j, so
   * the e extras are the e least (l_r + j, -r) over every rank's middle
   * chunks: the middle ranks' loads are alike (v c layers each), one
   * level of them at a time, later ranks first; the first rank's and the
   * last's their own, the last rank before the middle ones at a tie and
   * the first rank after them. */
  int cap0 = v - 1, capm = p > 2 ? v : 0, x0 = 0, xl = 0, jm = 0, part = 0;
  double l0 = a + (double)c * (v - 1) + w[0],
         ll = b + (double)c * (v - 1) + w[1];
  double lm = (double)c * v; /* exact: whole layers */
  while (e > 0) {
    int has0 = x0 < cap0, hasl = xl < cap0, hasm = jm < capm;
    double km = lm + jm;
    if (!has0 && !hasl && !hasm) return -1;
    if (hasl && (!hasm || ll <= km) && (!has0 || ll <= l0)) {
      xl++, ll += 1, e--; /* the last rank: first at a tie */
    } else if (hasm && (!has0 || km <= l0)) {
      if (e < p - 2) { /* this level to the last e middle ranks */
        part = e;
        break;
      }
      jm++, e -= p - 2;
    } else {
      x0++, l0 += 1, e--;
    }
  }
  extras_to(n, p, K, 0, x0);
  extras_to(n, p, K, p - 1, xl);
  for (int r = 1; r < p - 1; r++)
    extras_to(n, p, K, r, jm + (r >= p - 1 - part));
  return rank_form(n, p, v) ? -1 : K;
}

int st__layout_candidate(const st__search_t *S, const st__cfg_t *cf,
                         const double *w, int i, int *n) {
  if (cf->ss || cf->fs) return -1;
  return st__layout_fill(S->L, cf->p, cf->v > 1 ? cf->v : 1, w, i, n);
}
