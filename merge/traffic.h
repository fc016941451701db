/*
 * traffic.h - the bytes one training step moves between every pair of
 * devices, by collective kind (merge/traffic.c), for the HTML page's heat
 * map.  Internal to merge/: nothing here is public API.
 */
#ifndef STRATA_MERGE_TRAFFIC_H
#define STRATA_MERGE_TRAFFIC_H

#include "strata/merge.h"

/* The kinds, in the order the page draws them. */
enum { ST__TR_TP, ST__TR_CP, ST__TR_EP, ST__TR_DP, ST__TR_PP, ST__TR_KINDS };
/* What a cell of the matrix stands for. */
enum { ST__FOLD_DEVICES, ST__FOLD_NODES, ST__FOLD_STAGES };

typedef struct {
  int fold;          /* ST__FOLD_* */
  int n;             /* cells per side */
  int devices;       /* GPUs of the plan */
  int gpus_per_node; /* the node size the folding used */
  /* [kind][from][to], index (kind * n + from) * n + to: bytes per step
   * the devices of `from` send to those of `to` (the diagonal of a folded
   * matrix: traffic inside a node or a pipeline rank) */
  double *bytes;
  /* the same cells: the busiest device pair's bytes over its link's
   * bandwidth (0 where that link's bandwidth is not known) */
  double *seconds;
  double kind_bytes[ST__TR_KINDS]; /* summed over every pair */
  /* bytes/s of one GPU's link inside a node and to another node, from the
   * stages' meshes or the plan's p2p times (0: not known) */
  double intra_bw, inter_bw;
  const char *dev; /* what the devices are called: "GPU", "NPU" */
} st__traffic_t;

/* "TP", "CP", "EP all-to-all", "DP", "PP"; "?" out of range. */
const char *st__traffic_kind_name(int kind);

/* The traffic of one step of plan p (docs/exports.md, "The communication
 * heat map"): per device at most max_cells cells a side, else per node
 * (gpus_per_node GPUs; 0: the stages' node size), else per pipeline rank.
 * STRATA_EINVAL for a plan with no stage, STRATA_ENOMEM; t is zeroed
 * first and holds nothing on error. */
int st__traffic(const strata_plan_t *p, int gpus_per_node, int max_cells,
                st__traffic_t *t);
void st__traffic_free(st__traffic_t *t);

#endif
