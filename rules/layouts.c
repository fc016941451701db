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
