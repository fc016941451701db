/*
 * layouts.c - the layer splits Megatron-LM states beyond a first and a
 * last rank: the embedding and the loss counted as pipeline units
 * (--account-for-embedding-in-pipeline-split, --account-for-loss-in-
 * pipeline-split; megatron/core/transformer/transformer_block.py,
 * get_num_layers_to_build) and an explicit layout of every virtual stage
 * (--pipeline-model-parallel-layout; megatron/core/transformer/
 * pipeline_parallel_layer_layout.py).  Both give each model chunk k of
 * the pp x vpp (rank k mod pp) its own count of transformer layers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/search.h"

#define SAYF(...) (why && n ? snprintf(why, n, __VA_ARGS__) : 0, 1)

int st__split_accounted(int L, int p, int v, int acct, int *n) {
  int K = p * (v > 1 ? v : 1), units = L + !!(acct & 1) + !!(acct & 2);
  if (p < 2 || K > ST__MAX_PP || units % K) return -1;
  for (int k = 0; k < K; k++)
    n[k] = units / K;
  /* the first virtual stage of the first rank builds one layer fewer,
   * the last of the last rank likewise: one unit a chunk leaves the
   * embedding (or the loss) alone in its chunk */
  if (acct & 1) n[0]--;
  if (acct & 2) n[K - 1]--;
  return n[0] >= 0 && n[K - 1] >= 0 && K > 1 ? K : -1;
}

/* The count after a '*' at s[i] (0 to 2^20): its value, *end past it. */
static long count_at(const char *s, const char **end) {
  char *stop;
  long t = strtol(s + 1, &stop, 10);
  *end = stop;
  return stop == s + 1 || t < 0 || t > (1 << 20) ? -1 : t;
}

/* Append body (len bytes, commas dropped) `times` times to out. */
static int put_times(char *out, size_t *o, size_t cap, const char *body,
                     size_t len, long times) {
  for (long t = 0; t < times; t++)
    for (size_t i = 0; i < len; i++) {
      if (body[i] == ',') continue;
      if (*o + 1 >= cap) return 1;
      out[(*o)++] = body[i];
    }
  return 0;
}

/* Megatron-LM's expansion: commas dropped, every "(...)*N" unrolled, then
 * every "x*N" (no nesting, as its regular expressions take it).  Into out
 * (cap bytes); 1 with the reason when it is not one. */
static int unroll_groups(const char *s, char *out, size_t cap, char *why,
                         size_t n) {
  char *mid = strata_malloc(cap);
  size_t o = 0;
  int rc = !mid && SAYF("out of memory");
  for (const char *c = s; !rc && *c;) { /* "(...)*N" */
    const char *end = c + 1, *after;
    if (*c != '(') {
      rc = put_times(mid, &o, cap, c, 1, 1);
      c++;
      continue;
    }
    end = strchr(c + 1, ')');
    if (!end || memchr(c + 1, '(', (size_t)(end - c - 1)))
      rc = SAYF("pipeline layout: '(' at %d has no ')' or holds another '(' "
                "(Megatron-LM does not nest them)",
                (int)(c - s));
    else if (end[1] != '*' || end == c + 1)
      rc = SAYF("pipeline layout: the group at %d needs something inside "
                "and '*N' after it",
                (int)(c - s));
    else {
      long t = count_at(end + 1, &after);
      if (t < 0)
        rc = SAYF("pipeline layout: '*' at %d needs a count of 0 to 2^20",
                  (int)(end + 1 - s));
      else if (put_times(mid, &o, cap, c + 1, (size_t)(end - c - 1), t))
        rc = SAYF("pipeline layout: more than %zu units", cap - 1);
      c = after;
    }
  }
  size_t m = o;
  o = 0;
  for (size_t i = 0; !rc && i < m;) { /* "x*N" */
    const char *after;
    long t = 1;
    if (i + 1 < m && mid[i + 1] == '*') {
      mid[m] = '\0';
      t = count_at(mid + i + 1, &after);
      if (t < 0) {
        rc = SAYF("pipeline layout: '*' after '%c' needs a count of 0 to 2^20",
                  mid[i]);
        break;
      }
    } else {
      after = mid + i + 1;
    }
    if (put_times(out, &o, cap, mid + i, 1, t))
      rc = SAYF("pipeline layout: more than %zu units", cap - 1);
    i = (size_t)(after - mid);
  }
  strata_free(mid);
  if (!rc) out[o] = '\0';
  return rc;
}

int st__layout_parse(const char *s, int layers, int mtp, int *nl, int cap,
                     int *K_out, char *why, size_t n) {
  size_t big = (size_t)layers + (size_t)mtp + (size_t)cap + 64;
  char *u = strata_malloc(big);
  if (!u) return SAYF("out of memory");
  memset(nl, 0, sizeof *nl * (size_t)cap);
  int rc = unroll_groups(s, u, big, why, n), K = 0, t = 0, m = 0;
  size_t len = rc ? 0 : strlen(u), bad = rc ? 0 : strspn(u, "EtmL|");
  if (!rc && bad < len)
    rc = SAYF("pipeline layout: '%c' is not a layer (E embedding, t a "
              "transformer layer, m a multi-token prediction module, L the "
              "loss, '|' between virtual stages)",
              (u[bad] > 32 && u[bad] < 127) ? u[bad] : '?');
  for (size_t i = 0; !rc && i < len; i++) {
    char c = u[i];
    if (c == '|' && ++K >= cap)
      rc = SAYF("pipeline layout: more than %d virtual stages", cap);
    else if ((c == 'E') != (i == 0))
      rc = SAYF("pipeline layout: the embedding 'E' comes once, first");
    else if ((c == 'L') != (i + 1 == len))
      rc = SAYF("pipeline layout: the loss 'L' comes once, last");
    else if (c == 't' && m)
      rc = SAYF("pipeline layout: a transformer layer after a multi-token "
                "prediction module (they come after every layer)");
    else if (c == 'm' && memchr(u + i, '|', len - i))
      rc = SAYF("pipeline layout: the multi-token prediction modules sit "
                "with the loss on the last virtual stage (as Strata costs "
                "them)");
    else if (c == 't')
      nl[K]++, t++;
    else if (c == 'm')
      m++;
  }
  if (!rc && len == 0)
    rc = SAYF("pipeline layout: it begins with the embedding 'E' and ends "
              "with the loss 'L'");
  if (!rc && t != layers)
    rc = SAYF("pipeline layout: %d transformer layers 't', the model has %d", t,
              layers);
  if (!rc && m != mtp)
    rc = SAYF("pipeline layout: %d multi-token prediction modules 'm', the "
              "model has %d",
              m, mtp);
  strata_free(u);
  if (!rc) *K_out = K + 1;
  return rc;
}

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
