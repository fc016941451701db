/*
 * traces_int.h - what the files of traces/ share and nothing outside uses:
 * the per-kind shape check (kinds.c) that validation and the loader call,
 * and a shape formatter for messages.
 */
#ifndef STRATA_TRACES_INT_H
#define STRATA_TRACES_INT_H

#include <stddef.h>

#include "strata/core.h"
#include "strata/traces.h"

/* Largest block repeat accepted (keeps totals far from overflow). */
#define STRATA_MAX_REPEAT 1000000

/* Check op's arity, attributes, dtypes and shapes against the rule of its
 * kind (the table in traces.h).  Returns 0, or STRATA_EBADINPUT with a
 * message naming the op, its kind and the shapes involved.  Tensor indices
 * must already be in range. */
int st__op_check(const strata_graph_t *g, const strata_op_t *op);

/* 1 if op's first output is a view of all of its (single) input: reading
 * the output is reading the input's storage (transpose, reshape,
 * merge_heads, one-output split_heads). */
int st__op_is_full_view(const strata_op_t *op);

/* "[1,2048,2304]" into buf. */
const char *st__shape_str(const strata_tensor_t *t, char *buf, size_t size);

/* The tensor whose storage t is a full view of (t itself if none). */
int st__storage_root(const strata_graph_t *g, int t);

/* Name indexes (names.c).  which: one of these. */
enum { ST__NAME_TENSOR, ST__NAME_OP, ST__NAME_BLOCK };
/* Index of the item named name, or -1. */
int st__name_find(const strata_graph_t *g, int which, const char *name);
/* Index item i (already in its array) under its name. */
int st__name_add(strata_graph_t *g, int which, int i);
void st__name_index_free(strata_graph_t *g);
/* Rebuild every index from the arrays (after items were removed). */
int st__name_reindex(strata_graph_t *g);

/* Fold runs of consecutive structurally identical blocks into one
 * repeated block (fold.c).  g must be validated; it is validated again. */
int st__graph_fold(strata_graph_t *g, int *folded);

#endif
