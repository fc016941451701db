/*
 * names.c - the name indexes of a graph: tensor, op and block ids to
 * their index, one open-addressing hash table each (XXH64 of the name,
 * linear probing, at most half full).
 *
 * A loader resolves every reference by name; with a linear search a model
 * stored as thousands of separate layers took time quadratic in its size
 * (most of it in that search).  The builders insert each new name, so a
 * lookup is constant time and loading is linear.  The tables hold indices
 * only: the names stay in the graph's arrays.
 */
#include <string.h>

#include "traces/traces_int.h"

typedef struct {
  int *slot; /* index + 1, 0 empty */
  int cap;   /* a power of two, or 0 */
  int n;
} table_t;

struct st__graph_index {
  table_t t[3];
};

static const char *name_at(const strata_graph_t *g, int which, int i) {
  if (which == ST__NAME_TENSOR) return g->tensors[i].name;
  if (which == ST__NAME_OP) return g->ops[i].name;
  return g->blocks[i].name;
}

static int grow_table(const strata_graph_t *g, int which, table_t *t) {
  int cap = t->cap ? 2 * t->cap : 64;
  int *slot = strata_calloc((size_t)cap, sizeof *slot);
  if (!slot) return strata_error(STRATA_ENOMEM, "out of memory indexing names");
  for (int i = 0; i < t->cap; i++) {
    if (!t->slot[i]) continue;
    const char *nm = name_at(g, which, t->slot[i] - 1);
    uint64_t h = strata_hash64(nm, strlen(nm), 0);
    int k = (int)(h & (uint64_t)(cap - 1));
    while (slot[k])
      k = (k + 1) & (cap - 1);
    slot[k] = t->slot[i];
  }
  strata_free(t->slot);
  t->slot = slot;
  t->cap = cap;
  return 0;
}

int st__name_find(const strata_graph_t *g, int which, const char *name) {
  if (!g->index) return -1;
  const table_t *t = &g->index->t[which];
  if (!t->cap) return -1;
  uint64_t h = strata_hash64(name, strlen(name), 0);
  for (int k = (int)(h & (uint64_t)(t->cap - 1)); t->slot[k];
       k = (k + 1) & (t->cap - 1))
    if (!strcmp(name_at(g, which, t->slot[k] - 1), name)) return t->slot[k] - 1;
  return -1;
}

int st__name_add(strata_graph_t *g, int which, int i) {
  if (!g->index && !(g->index = strata_calloc(1, sizeof *g->index)))
    return strata_error(STRATA_ENOMEM, "out of memory indexing names");
  table_t *t = &g->index->t[which];
  int rc;
  if (2 * (t->n + 1) > t->cap && (rc = grow_table(g, which, t))) return rc;
  const char *nm = name_at(g, which, i);
  uint64_t h = strata_hash64(nm, strlen(nm), 0);
  int k = (int)(h & (uint64_t)(t->cap - 1));
  while (t->slot[k])
    k = (k + 1) & (t->cap - 1);
  t->slot[k] = i + 1;
  t->n++;
  return 0;
}

void st__name_index_free(strata_graph_t *g) {
  if (!g->index) return;
  for (int w = 0; w < 3; w++)
    strata_free(g->index->t[w].slot);
  strata_free(g->index);
  g->index = NULL;
}

int st__name_reindex(strata_graph_t *g) {
  int rc = 0;
  st__name_index_free(g);
  for (int i = 0; i < g->n_tensors && !rc; i++)
    rc = st__name_add(g, ST__NAME_TENSOR, i);
  for (int i = 0; i < g->n_ops && !rc; i++)
    rc = st__name_add(g, ST__NAME_OP, i);
  for (int i = 0; i < g->n_blocks && !rc; i++)
    rc = st__name_add(g, ST__NAME_BLOCK, i);
  return rc;
}
