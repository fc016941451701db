/*
 * report_list.c - the names of a list of configurations (the best ones,
 * the Pareto front) as a reader tells them apart.
 *
 * strata_plan_config_name says the degrees, the micro-batch, vpp and
 * recompute; two configurations of one list may differ only in how the
 * layers split over the pipeline (the first and the last rank's layers),
 * or in how each rank's layers split over its chunks (the layout a
 * configuration keeps where its first and last rank do not tell it).  A
 * name shared in its list gets the split ("layers 17 first, 15 last", or
 * "layout Et*2|(t*3|)*10tL"), and one still shared after that (a plan
 * file older than format 17 keeps no layout) its place among those, so
 * no two lines read the same.  Two
 * neighbours that differ only in recompute none against selective at
 * the same step and memory (selective finds nothing to drop: flash
 * attention keeps no scores) read as one line with a note.
 */
#include <stdio.h>
#include <string.h>

#include "merge/merge_int.h"

/* The base name with the pipeline split, where there is one: the first
 * and last rank's layers, or every virtual stage's (Megatron-LM's
 * layout) where those do not tell it. */
static void split_name(const strata_plan_config_t *c, char *buf, size_t size) {
  strata_plan_config_name(c, buf, size);
  size_t n = strlen(buf);
  if (c->layout[0] && n < size)
    snprintf(buf + n, size - n, ", layout %s", c->layout);
  else if (c->pp > 1 && c->first_layers > 0 && n < size)
    snprintf(buf + n, size - n, ", layers %d first, %d last", c->first_layers,
             c->last_layers);
}

static int shared(const strata_plan_config_t *v, int n, int i,
                  void (*name)(const strata_plan_config_t *, char *, size_t)) {
  char a[200], b[200];
  name(&v[i], a, sizeof a);
  for (int j = 0; j < n; j++) { /* one that reads as i's line: not another */
    if (j == i || st__same_but_recompute(&v[i], &v[j])) continue;
    name(&v[j], b, sizeof b);
    if (!strcmp(a, b)) return 1;
  }
  return 0;
}

void st__list_name(const strata_plan_config_t *v, int n, int i, char *buf,
                   size_t size) {
  strata_plan_config_name(&v[i], buf, size);
  if (!shared(v, n, i, strata_plan_config_name)) return;
  split_name(&v[i], buf, size);
  if (!shared(v, n, i, split_name)) return;
  /* the same split of the ranks: its k-th among those that share it */
  char a[200], b[200];
  int k = 1;
  split_name(&v[i], a, sizeof a);
  for (int j = 0; j < i; j++) {
    split_name(&v[j], b, sizeof b);
    k += !strcmp(a, b) && !st__same_but_recompute(&v[i], &v[j]);
  }
  size_t len = strlen(buf);
  if (len < size)
    snprintf(buf + len, size - len, ", chunk layout %d of those", k);
}

int st__same_but_recompute(const strata_plan_config_t *a,
                           const strata_plan_config_t *b) {
  const int x[] = {a->tp,          a->pp,           a->dp,
                   a->micro_batch, a->vpp,          a->sequence_parallel,
                   a->zero_stage,  a->first_layers, a->last_layers,
                   a->cp,          a->ep,           a->etp,
                   a->fp8,         a->group,        a->fits};
  const int y[] = {b->tp,          b->pp,           b->dp,
                   b->micro_batch, b->vpp,          b->sequence_parallel,
                   b->zero_stage,  b->first_layers, b->last_layers,
                   b->cp,          b->ep,           b->etp,
                   b->fp8,         b->group,        b->fits};
  if (a->recompute == b->recompute || a->recompute == STRATA_RECOMPUTE_FULL ||
      b->recompute == STRATA_RECOMPUTE_FULL ||
      a->step_seconds != b->step_seconds ||
      a->peak_memory_bytes != b->peak_memory_bytes ||
      strcmp(a->layout, b->layout))
    return 0;
  return !memcmp(x, y, sizeof x);
}
