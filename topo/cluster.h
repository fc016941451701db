/*
 * cluster.h - the inside of a cluster and of a parsed cluster spec,
 * shared by the spec reader (cluster_spec.c), the builder (cluster.c) and
 * the cost model (cluster_cost.c).
 *
 * A spec is first read into plain data (st__spec_t) with nothing resolved,
 * then built: XML files loaded, node names expanded, unhealthy nodes
 * dropped, levels derived.  Presets produce the same st__spec_t, so a
 * preset and the equivalent JSON file give the same cluster.
 */
#ifndef STRATA_TOPO_CLUSTER_H
#define STRATA_TOPO_CLUSTER_H

#include "topo/node.h"

/* The most GPUs (and NICs) one node may have in a spec: more than any
 * machine has, few enough that ranks stay ints on 10^6 nodes. */
#define ST__MAX_GPUS 1024

typedef struct {
  char *names;     /* node range "node[001-128]", or NULL: use count */
  int count;       /* nodes (from names when given) */
  char *xml;       /* path resolved against the spec's folder, or NULL */
  char *xml_given; /* the path as written in the spec */
  int local;       /* read this machine */
  /* inline template (when xml is NULL and local is 0) */
  int gpus;
  char *gpu_model;
  double nvlink_bw, pcie_bw; /* bytes/s; < 0: the model's */
  int nics;                  /* NICs per node; < 0: one per GPU */
  double nic_bw;             /* bytes/s per NIC; < 0: the network's */
} st__group_t;

typedef struct {
  char *where;     /* the spec's name in messages */
  char legacy[16]; /* the first bandwidth given by an older "_gbps" key */
  char *name;
  int ngroups;
  st__group_t *groups;
  /* "gpu": overrides of the table */
  char *gpu_model;
  double gpu_memory, gpu_flops, gpu_nvlink; /* < 0: not given */
  /* "network" */
  double nic_bw; /* bytes/s per NIC; < 0: not given */
  double latency, spine_latency, oversub;
  double nvlink_latency, pcie_latency;
  int leaf_size;
  /* "unhealthy" */
  int nbad_nodes, nbad_gpus;
  char **bad_nodes; /* names */
  char **bad_gpus;  /* "name:index" */
} st__spec_t;

/* Read a spec argument: "PRESET:NODES" or a JSON file. */
int st__spec_read(const char *arg, st__spec_t **out);
/* A spec of one node: an hwloc XML file, or this machine (path NULL). */
int st__spec_single(const char *xml_path, st__spec_t **out);
void st__spec_free(st__spec_t *s);
/* Expand "node[001-003,007]" into names (strata_free each and the array).
 * A pattern without brackets is one name.  where prefixes messages. */
int st__range_expand(const char *pattern, const char *where, char ***names,
                     int *n);
/* The preset names, comma-separated, for messages. */
int st__preset_list(strata_buf_t *b);
/* 1 if arg is PRESET:... for a preset of the table: strata_cluster_load
 * builds it (or refuses its node count) without opening a file. */
int st__is_preset(const char *arg);

struct strata_cluster {
  char *name;
  int total_nodes, nodes, gpn;
  char **all_names; /* total_nodes names */
  int *usable;      /* usable node -> physical node */
  char **dropped;   /* total_nodes: why a node is left out, NULL: usable */
  strata_gpu_model_t model;
  char model_name[STRATA_TOPO_NAME_MAX];
  strata_node_topo_t *topo; /* first XML node, or NULL */
  int *domain;              /* per local GPU: its NVLink domain */
  int has_nvlink;
  char link_name[8];                       /* "nvlink" / "xgmi" */
  strata_link_t nvlink, pcie, leaf, spine; /* achieved (st__apply_perf) */
  double nominal[4];        /* line rate per level kind, bytes/s */
  strata_perf_t perf;       /* of its GPUs, calibrated */
  strata_calibration_t cal; /* applied calibration */
  int leaf_size;
  double oversub;
  int nlevels;
  strata_level_t levels[4];
  /* Node groups of different shapes (GPU model or GPUs per node): each a
   * homogeneous cluster of its own nodes (its names, health, levels); the
   * fields above are then group 0's, with the nodes, names and health of
   * the whole spec.  ngroups 0: one shape, no views. */
  int ngroups;
  struct strata_cluster **group;
  int *group_node0;    /* [ngroups]: usable index of each group's first */
  strata_link_t cross; /* between groups: the slower NIC, over the spine */
};

/* Set the achieved links and performance figures from the nominal ones,
 * the GPU's NCCL efficiencies and the calibration (cluster.c calls it
 * once built, strata_cluster_calibrate again). */
void st__apply_perf(strata_cluster_t *c);
/* The link between the groups of a mixed cluster, from theirs. */
void st__cross_link(strata_cluster_t *c);

#endif
