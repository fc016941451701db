/*
 * merge_int.h - what the files of merge/ share: the binary reader/writer
 * of the plan payload and a few helpers on plans.  Internal: nothing here
 * is public API.
 */
#ifndef STRATA_MERGE_INT_H
#define STRATA_MERGE_INT_H

#include <stddef.h>
#include <stdint.h>

#include "strata/merge.h"

/* The payload (payload.c): encode into out (init'd here), or decode
 * data into a new plan; `where` prefixes messages. */
int st__payload_encode(const strata_plan_t *p, strata_buf_t *out);
int st__payload_decode(const unsigned char *data, size_t len, const char *where,
                       strata_plan_t **out);

/* Devices of one stage (nodes x GPUs per node). */
int st__stage_devices(const strata_plan_stage_t *st);
/* Mesh devices sharding a placement such as "[S(1), R]". */
int st__placement_shards(const char *placement, const strata_mesh_t *m);
/* The first / last op of a stage that belongs to a layer (-1: none). */
int st__first_layer_op(const strata_stage_result_t *r);
int st__last_layer_op(const strata_stage_result_t *r);
/* 1 if two op lists are equal in every field (doubles bit for bit). */
int st__ops_equal(const strata_op_choice_t *a, int na,
                  const strata_op_choice_t *b, int nb);
/* The ZeRO/recipe/recompute names as reports print them. */
const char *st__onoff(int v);

#endif
