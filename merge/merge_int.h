/*
 * merge_int.h - what the files of merge/ share: the 1F1B schedule
 * simulation (stitch.c computes the step time with it, the timeline
 * exporter draws it), the binary reader/writer of the plan payload and a
 * few helpers on plans.  Internal: nothing here is public API.
 */
#ifndef STRATA_MERGE_INT_H
#define STRATA_MERGE_INT_H

#include <stddef.h>
#include <stdint.h>

#include "strata/merge.h"

/* One pipeline schedule: inputs (pp stages, n_micro micro-batches, the
 * per-micro-batch forward and backward time of each stage, the one-way
 * p2p time of each boundary, the gradient sync of each stage) and, after
 * st__sched_run, the start of every forward and backward. */
typedef struct {
  int pp, n_micro;
  const double *fwd, *bwd;   /* [pp] */
  const double *p2p;         /* [pp - 1]; NULL: all 0 */
  const double *sync;        /* [pp]; NULL: all 0 */
  double *f_start, *b_start; /* [pp * n_micro], index s * n_micro + m */
  double *stage_end;         /* [pp]: end of the stage's last backward */
  double makespan;           /* end of the last backward anywhere */
  double step;               /* max over stages of stage_end + sync */
} st__sched_t;

/* Simulate 1F1B (warm-up forwards, alternating forward/backward, cool-down
 * backwards) respecting the cross-stage dependencies.  Allocates the
 * output arrays; free with st__sched_free.  0 or STRATA_ENOMEM/EINVAL. */
int st__sched_run(st__sched_t *s);
void st__sched_free(st__sched_t *s);
/* Fill a schedule's inputs from a plan (arrays owned by the plan). */
int st__sched_from_plan(const strata_plan_t *p, st__sched_t *s,
                        double **scratch);

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
