/*
 * merge.h - the global plan: stitching stage plans with the point-to-point
 * traffic between stages and the 1F1B schedule; the compressed plan file
 * (.splan); show, diff; exporters to Megatron-LM arguments, a DeepSpeed
 * config and a Chrome-trace timeline.
 */
#ifndef STRATA_MERGE_H
#define STRATA_MERGE_H

#include <stddef.h>

#include "strata/pipeline.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Stitch: what follows from the planner's costed step and the graph:
 * tokens/s, MFU, the peak device and the model facts the exporters read
 * (the step itself is costed by the planner, pipeline/eval.c). */
int strata_merge_stitch(strata_plan_t *p, const strata_graph_t *g,
                        const strata_cluster_t *c);

/* Plan files (docs/plan-format.md): magic, version, flags, CRC32,
 * zlib-deflated payload; runs of identical layers collapsed.  Decoding
 * then encoding gives the same bytes.  Decode errors: STRATA_EBADINPUT
 * (not a plan file), EVERSION (a newer format), ECORRUPT (truncated,
 * checksum mismatch, absurd lengths, bad fields), ENOMEM; the message
 * starts with `where`. */
#define STRATA_PLAN_FORMAT_VERSION 2
#define STRATA_PLAN_MAX_PAYLOAD (256 * 1024 * 1024) /* inflated bytes */
int strata_plan_encode(const strata_plan_t *p, unsigned char **data,
                       size_t *len);
int strata_plan_decode(const unsigned char *data, size_t len, const char *where,
                       strata_plan_t **out);
int strata_plan_save(const strata_plan_t *p, const char *path); /* atomic */
int strata_plan_load(const char *path, strata_plan_t **out);

/* Reports, into strata_free-able strings. */
int strata_plan_summary(const strata_plan_t *p, char **text);
int strata_plan_json(const strata_plan_t *p, char **text);
/* *differs is 0 when nothing differs (degrees, stages, strategies,
 * figures); the text then says "plans are identical". */
int strata_plan_diff(const strata_plan_t *a, const strata_plan_t *b, int json,
                     char **text, int *differs);

/* Exporters.  A plan Megatron-LM cannot express is refused
 * (STRATA_EUNSUPPORTED) with the reason. */
int strata_export_megatron(const strata_plan_t *p, char **text);
int strata_export_deepspeed(const strata_plan_t *p, char **text);
int strata_export_timeline(const strata_plan_t *p, char **text);

#ifdef __cplusplus
}
#endif
#endif
