/*
 * merge.h - the global plan: stitching stage plans with the point-to-point
 * traffic between stages and the 1F1B schedule; the compressed plan file
 * (.splan); show, diff; exporters to Megatron-LM arguments and launch
 * scripts, DeepSpeed configs, PyTorch (DTensor) and torchtitan, a
 * Chrome-trace timeline and an HTML page.
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
 * (the step itself is costed by the planner, model/eval.c). */
int strata_merge_stitch(strata_plan_t *p, const strata_graph_t *g,
                        const strata_cluster_t *c);

/* Plan files (docs/plan-format.md): magic, version, flags, CRC32,
 * zlib-deflated payload; runs of identical layers collapsed.  Decoding
 * then encoding gives the same bytes.  Decode errors: STRATA_EBADINPUT
 * (not a plan file), EVERSION (a newer format), ECORRUPT (truncated,
 * checksum mismatch, absurd lengths, bad fields), ENOMEM; the message
 * starts with `where`. */
/* STRATA_PLAN_FORMAT_VERSION: plan_fields.h, beside the fields it holds. */
#define STRATA_PLAN_MAX_PAYLOAD (256 * 1024 * 1024) /* inflated bytes */
int strata_plan_encode(const strata_plan_t *p, unsigned char **data,
                       size_t *len);
int strata_plan_decode(const unsigned char *data, size_t len, const char *where,
                       strata_plan_t **out);
int strata_plan_save(const strata_plan_t *p, const char *path); /* atomic */
/* A plan strata itself made (planned, stitched) that the plan file's
 * checks would refuse: STRATA_EINTERNAL, a bug to report, where a plan
 * given to encode or save is refused as bad input.  0 when it passes;
 * the message starts with `where`. */
int strata_plan_check_made(const strata_plan_t *p, const char *where);
int strata_plan_load(const char *path, strata_plan_t **out);

/* Layers of pipeline rank r: the sum of its stages (its virtual stages'
 * model chunks when the plan interleaves). */
int strata_plan_rank_layers(const strata_plan_t *p, int rank);
/* The plan's split as Megatron-LM's --pipeline-model-parallel-layout
 * writes it, runs of equal chunks as "(..|)*N": "Et|(t*2|)*62tL".  0, or
 * -1 when it does not fit in size bytes. */
int strata_plan_layout(const strata_plan_t *p, char *buf, size_t size);
/* The same, whole, in a string of its own (strata_free it); NULL out of
 * memory or for a plan of no stages. */
char *strata_plan_layout_dup(const strata_plan_t *p);
/* 1 when the split is in Megatron-LM's first/last form (every rank's
 * chunks alike, the middle ranks alike, none empty), which the first and
 * last ranks' layers state; 0 when only a layout (strata_plan_layout)
 * does. */
int strata_plan_rank_form(const strata_plan_t *p);

/* Reports, into strata_free-able strings. */
int strata_plan_summary(const strata_plan_t *p, char **text);
/* "tp 2, ep 8, etp 1, pp 8, dp 4, micro 2, sp, recompute none": a
 * configuration in words (cp, ep, FP8 and ZeRO only where used). */
void strata_plan_config_name(const strata_plan_config_t *c, char *buf,
                             size_t size);
/* The "schema_version" every JSON document strata prints carries at its
 * top (plan, show, estimate, diff; docs/plan-format.md, "JSON schema
 * version"): raised when a field is removed, renamed or changes meaning,
 * not when one is added. */
#define STRATA_JSON_SCHEMA_VERSION 1
/* Deterministic: the same plan gives the same bytes.  The run's timing
 * (search.plan_seconds) is added only with STRATA_PLAN_JSON_TIMINGS. */
int strata_plan_json(const strata_plan_t *p, char **text);
#define STRATA_PLAN_JSON_TIMINGS 1u
int strata_plan_json_flags(const strata_plan_t *p, unsigned flags, char **text);
/* Whether a checkpoint written under plan `old` loads under plan `new`,
 * per framework checkpoint format (export/checkpoint.c, docs/cost-model.md
 * "Re-plans that keep the checkpoint"): loads as is or not and why, the
 * framework's own conversion where not, the bytes a reshard reads (0 when
 * the state's sharding is unchanged), the checkpoint's bytes (weights and
 * optimizer state, each once) and the reshard's seconds on new's devices. */
typedef enum {
  STRATA_CKPT_MG_DIST,      /* Megatron-LM --ckpt-format torch_dist (default),
                               Megatron-FSDP's fsdp_dtensor */
  STRATA_CKPT_MG_LEGACY,    /* Megatron-LM --ckpt-format torch */
  STRATA_CKPT_DS_ZERO,      /* DeepSpeed's ZeRO checkpoint */
  STRATA_CKPT_DS_UNIVERSAL, /* DeepSpeed's universal checkpoint */
  STRATA_CKPT_DCP,          /* torch.distributed.checkpoint (torchtitan) */
  STRATA_CKPT_FORMATS
} strata_ckpt_format_t;
typedef struct {
  strata_ckpt_format_t format;
  int loads_as_is;
  char why[320];
  char conversion[320]; /* "" when it loads as is */
  double bytes, checkpoint_bytes, seconds;
} strata_ckpt_verdict_t;
int strata_checkpoint_compare(const strata_plan_t *old_plan,
                              const strata_plan_t *new_plan,
                              strata_ckpt_verdict_t v[STRATA_CKPT_FORMATS]);
/* Weights and optimizer state of the whole model, each byte once. */
double strata_checkpoint_bytes(const strata_plan_t *p);
const char *strata_ckpt_format_name(strata_ckpt_format_t f);
/* The format a plan's framework writes by default. */
strata_ckpt_format_t strata_ckpt_default_format(const strata_plan_t *p);

/* *differs is 0 when nothing differs (degrees, stages, strategies,
 * figures, exactly); the text then says "plans are identical". */
int strata_plan_diff(const strata_plan_t *a, const strata_plan_t *b, int json,
                     char **text, int *differs);
/* The same with a tolerance on the figures (step time, tokens/s, MFU,
 * memory, stage times): one that moves by at most tolerance x the larger
 * of its two values is not a difference (the text and JSON count such
 * figures).  Degrees, stages and strategies compare exactly. */
#define STRATA_DIFF_TOLERANCE 0.005 /* 0.5 % */
typedef struct {
  int json;
  double tolerance; /* relative, 0 <= t < 1; default STRATA_DIFF_TOLERANCE */
} strata_diff_opts_t;
void strata_diff_opts_init(strata_diff_opts_t *o);
int strata_plan_diff_opts(const strata_plan_t *a, const strata_plan_t *b,
                          const strata_diff_opts_t *o, char **text,
                          int *differs);

/* Exporters (docs/exports.md).  A plan the target cannot run is refused
 * (STRATA_EUNSUPPORTED) with the reason; the output is a strata_free-able
 * string. */
int strata_export_megatron(const strata_plan_t *p, char **text);
/* The same for MindSpeed on Ascend NPUs (docs/exports.md, "MindSpeed"):
 * --transformer-impl local added; FP8, FP4, the tensor-parallel overlap
 * and CUDA graphs refused. */
int strata_export_mindspeed(const strata_plan_t *p, char **text);
int strata_export_deepspeed(const strata_plan_t *p, char **text);
int strata_export_timeline(const strata_plan_t *p, char **text);

/* What some exports need that a plan file does not hold: the cluster's
 * node shape (from the cluster spec the plan names, or given). */
typedef struct {
  int gpus_per_node;    /* 0: unknown (the launch script refuses) */
  int nodes_per_leaf;   /* 0: unknown (the page draws no leaf switches) */
  const char *source;   /* the plan file's name, for headers (NULL: none) */
  const char *name_map; /* torch export: a name map (JSON text), NULL: the
                           family's module names */
  int mindspeed;        /* megatron launch: for MindSpeed on Ascend NPUs */
} strata_export_opts_t;
void strata_export_opts_init(strata_export_opts_t *o);

/* A bash script that runs the plan with Megatron-LM: environment, one
 * torchrun per node, the plan's flags and the run's own arguments as
 * variables the user must set. */
int strata_export_megatron_launch(const strata_plan_t *p,
                                  const strata_export_opts_t *o, char **text);
/* The Python lines that build the DeepSpeed pipeline topology (tp, pp,
 * dp) and PipelineModule arguments matching strata_export_deepspeed. */
int strata_export_deepspeed_topology(const strata_plan_t *p, char **text);
/* A Python module: the device mesh, per transformer block a DTensor
 * parallelize_module plan from the plan's per-operator layouts, the
 * pipeline split and the FSDP wrapping. */
int strata_export_torch(const strata_plan_t *p, const strata_export_opts_t *o,
                        char **text);
/* A torchtitan job config (TOML) of a Megatron-mode plan, for torchtitan
 * before its Python configurations (2026-02-23). */
int strata_export_torchtitan(const strata_plan_t *p, char **text);
/* The same as a torchtitan configuration: a Python module whose
 * strata_plan() returns its Trainer.Config (torchtitan 0.2.2). */
int strata_export_titan(const strata_plan_t *p, char **text);
/* A Slurm batch script: #SBATCH nodes, one task and the GPUs per node,
 * and an srun of the plan's launch on every node (the Megatron-LM launch
 * script where Megatron-LM runs the plan, else torchrun of the user's
 * script). */
int strata_export_slurm(const strata_plan_t *p, const strata_export_opts_t *o,
                        char **text);
/* One self-contained HTML page: schedule, memory, devices, runners-up. */
int strata_export_html(const strata_plan_t *p, const strata_export_opts_t *o,
                       char **text);

/* Which frameworks can run the plan: one line per framework, "NAME: yes"
 * or "NAME: no -- reason" (the exporter's refusal), into *text. */
int strata_plan_frameworks(const strata_plan_t *p, char **text);

/* ---- Which GPUs a plan runs on (merge/devices.c, docs/exports.md) ----
 * Computed from the plan and the cluster it runs on (nothing of it is in
 * the plan file): the plan's N GPUs are the first N of the cluster's
 * usable numbering (node-major, unhealthy nodes skipped), and each rank's
 * coordinates follow Megatron-LM's order tp-cp-ep-dp-pp (tensor-parallel
 * rank fastest, the pipeline rank slowest). */
typedef enum {
  STRATA_NODE_USED,    /* every GPU */
  STRATA_NODE_PARTIAL, /* its first `gpus` GPUs */
  STRATA_NODE_UNUSED,  /* healthy, but the plan's GPUs fill fewer nodes */
  STRATA_NODE_DROPPED  /* left out by the spec (unhealthy) */
} strata_node_use_t;
const char *strata_node_use_name(strata_node_use_t u);

typedef struct {
  char *name;
  strata_node_use_t use;
  int gpus;       /* GPUs used: local 0 .. gpus - 1 */
  int first_rank; /* global rank of its local GPU 0; -1 not used */
  int node_rank;  /* the launcher's node rank; -1 not used */
  char *why;      /* not used: why (NULL when used) */
  int group;      /* its node group on a mixed cluster (else 0) */
} strata_node_info_t;

typedef struct {
  int rank, node, local; /* node: index into the map's nodes */
  int tp, cp, dp, pp;    /* the rank's coordinates */
  int etp, ep, edp;      /* in the expert layers (tp-ep-dp-pp) */
} strata_device_t;

typedef struct {
  char *cluster; /* as the plan names it */
  int gpus_per_node, tp, cp, dp, pp;
  int experts, etp, ep; /* experts: 1 for a mixture of experts */
  int n_devices;
  strata_device_t *devices; /* by rank */
  int n_nodes, nodes_used;
  strata_node_info_t *nodes; /* every node of the spec, in its order */
  int npu;                   /* the devices are Ascend NPUs: named so */
} strata_device_map_t;

/* The map of plan p on cluster c.  STRATA_EBADINPUT (with what changed)
 * when the plan does not fit the cluster as it is now: more GPUs than
 * are usable, or stages wider than its nodes. */
int strata_device_map(const strata_plan_t *p, const strata_cluster_t *c,
                      strata_device_map_t **out);
void strata_device_map_destroy(strata_device_map_t *m);
/* "devices: 16 GPUs on 2 of 4 nodes ..." with the nodes left out and
 * why; or the map as JSON (nodes and ranks). */
int strata_device_map_summary(const strata_device_map_t *m, char **text);
int strata_device_map_json(const strata_device_map_t *m, char **text);

typedef enum {
  STRATA_HOSTFILE_TORCHRUN, /* per host: its torchrun command line */
  STRATA_HOSTFILE_MPI,      /* OpenMPI: "host slots=N" */
  STRATA_HOSTFILE_DEEPSPEED /* DeepSpeed: "host slots=N" */
} strata_hostfile_format_t;
int strata_hostfile_format_parse(const char *s, strata_hostfile_format_t *out);
const char *strata_hostfile_format_name(strata_hostfile_format_t f);
/* The hosts of a map in a launcher's format; source names the plan in
 * the header comment (NULL: none). */
int strata_export_hostfile(const strata_device_map_t *m,
                           strata_hostfile_format_t f, const char *source,
                           char **text);

#ifdef __cplusplus
}
#endif
#endif
