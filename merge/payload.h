/*
 * payload.h - the parts of the plan payload that format 18's records
 * (payload_tags.c) and the older formats (payload.c) lay out alike: the
 * stages, the ranks, lists of configurations, the node groups, the RoPE
 * scaling and the layouts, each in the binary encoding of codec.h.  A
 * reader stops at the first problem and leaves it in the st__rd_t; the
 * int returned is an allocation failure.
 */
#ifndef STRATA_MERGE_PAYLOAD_H
#define STRATA_MERGE_PAYLOAD_H

#include "merge/codec.h"
#include "merge/merge_int.h"

void st__put_stages(st__wr_t *w, const strata_plan_t *p);
int st__get_stages(st__rd_t *r, strata_plan_t *p, int *oom);
void st__put_ranks(st__wr_t *w, const strata_plan_t *p);
int st__get_ranks(st__rd_t *r, strata_plan_t *p);
void st__put_configs(st__wr_t *w, const strata_plan_config_t *v, int n);
int st__get_configs(st__rd_t *r, strata_plan_t *p); /* the kept ones */
int st__get_pareto(st__rd_t *r, strata_plan_t *p);  /* the front */
void st__put_groups(st__wr_t *w, const strata_plan_t *p);
/* one_ok: a count of 1 (nothing after it) is read as no groups. */
void st__get_groups(st__rd_t *r, strata_plan_t *p, int one_ok);
void st__put_rope(st__wr_t *w, const strata_rope_scaling_t *s);
/* version > 7: type 0 (none) is allowed. */
void st__get_rope(st__rd_t *r, strata_rope_scaling_t *s, unsigned version);
void st__put_layouts(st__wr_t *w, const strata_plan_t *p);
void st__get_layouts(st__rd_t *r, strata_plan_t *p);
/* The batch against its factors, before anything divides by them. */
void st__check_batch(st__rd_t *r, const strata_plan_t *p);

#endif
