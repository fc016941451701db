/*
 * topo.h - the cluster: node topology from hwloc, the cluster spec, the
 * hierarchy of levels with bandwidths, and what collectives cost.
 *
 * Bandwidths are bytes per second, unidirectional, per device; latencies
 * are seconds.  Costs follow the alpha-beta model per level (docs/
 * cost-model.md), and NCCL's ring or tree where a group spans levels.
 */
#ifndef STRATA_TOPO_H
#define STRATA_TOPO_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One link class: what a device can push to its peers on one level. */
typedef struct {
  double bandwidth; /* bytes/s */
  double latency;   /* s */
} strata_link_t;

typedef enum {
  STRATA_COLL_ALLREDUCE,
  STRATA_COLL_ALLGATHER,     /* bytes: the gathered (full) size */
  STRATA_COLL_REDUCESCATTER, /* bytes: the input (full) size */
  STRATA_COLL_ALLTOALL,      /* bytes: the full size each device holds */
  STRATA_COLL_P2P,           /* bytes: the message */
  STRATA_COLL_COUNT
} strata_coll_t;

const char *strata_coll_name(strata_coll_t c);

/* Time of a collective over n devices joined by one link class (ring
 * algorithms): all-reduce 2(n-1)/n*S/B + 2(n-1)a; all-gather,
 * reduce-scatter and all-to-all (n-1)/n*S/B + (n-1)a; p2p S/B + a.
 * n <= 1 costs 0. */
double strata_coll_time(strata_coll_t c, double bytes, int n,
                        const strata_link_t *link);

/* All-reduce, all-gather or reduce-scatter over nlev levels (inner first;
 * size[i] ranks per group at level i over link[i]) as NCCL runs it: one
 * flat ring, k (N-1)/N S / min_i(B_i x the ranks inside level i) plus each
 * step's latency at the level it crosses (k = 2 for all-reduce, else 1),
 * or for an all-reduce its tree when faster (docs/cost-model.md).  One
 * level is strata_coll_time(); other collectives cost 0 here. */
double strata_coll_time_levels(strata_coll_t c, double bytes, int nlev,
                               const int *size, const strata_link_t *link);

/*
 * A logical device mesh of one pipeline stage: 1-D or 2-D, each axis bound
 * to the link its groups communicate over.  Axis 0 is the outer (slower)
 * one for a 2-D mesh of nodes x GPUs.  A 1-D mesh has ndim 1, shape[1] = 1.
 */
#define STRATA_MESH_MAX_DIMS 2
typedef struct {
  int ndim;
  int shape[STRATA_MESH_MAX_DIMS];
  strata_link_t axis[STRATA_MESH_MAX_DIMS];
} strata_mesh_t;

/* The documented uniform default: NVLink-class 150 GB/s, 5 us per axis
 * (used when no cluster is given). */
void strata_mesh_default(strata_mesh_t *m, int d0, int d1);
int strata_mesh_devices(const strata_mesh_t *m);

/* ---------------------------------------------------------------------
 * GPU models: the figures hwloc does not give (docs/cluster-format.md
 * cites the vendors' datasheets for each).
 */
typedef struct {
  const char *name;             /* "H100-SXM" */
  const char *vendor;           /* "NVIDIA", "AMD" */
  uint64_t memory_bytes;        /* HBM per device */
  double peak_flops;            /* bf16 dense (fp16 where bf16 is missing) */
  double nvlink_bandwidth;      /* bytes/s one direction, all links; 0: none */
  double pcie_bandwidth;        /* bytes/s one direction (x16 link) */
  double host_bandwidth;        /* bytes/s one direction to the host's memory
                                   (0: the PCIe link's; GB200: NVLink-C2C) */
  double host_memory_bandwidth; /* bytes/s of the host's DRAM a GPU has in
                                   its reference system (the node's over
                                   its GPUs; 0: not known) */
  double host_memory_bytes;     /* the host's DRAM a GPU has in its reference
                                   system (likewise; 0: not known) */
} strata_gpu_model_t;

int strata_gpu_model_count(void);
const strata_gpu_model_t *strata_gpu_model_at(int i);
/* Find by table name, case-insensitive; NULL if unknown. */
const strata_gpu_model_t *strata_gpu_model_find(const char *name);
/* Match a name as drivers report it ("NVIDIA H100 80GB HBM3"); NULL if
 * none matches. */
const strata_gpu_model_t *strata_gpu_model_match(const char *reported);
/* The board's power and its list price (docs/cost-model.md, "Cost and
 * energy", cites each): *tdp_watts the datasheet's TDP (maximum board
 * power), *usd_per_hour a public on-demand price of one GPU for an hour;
 * 0 where the table does not know it.  Both pointers may be NULL. */
void strata_gpu_model_power_price(const strata_gpu_model_t *m,
                                  double *tdp_watts, double *usd_per_hour);
/* What the output calls such a device: "NPU" for Huawei's Ascend, "GPU"
 * for the others (and for NULL). */
const char *strata_gpu_model_kind(const strata_gpu_model_t *m);

/* ---------------------------------------------------------------------
 * How fast a GPU runs what a training step asks of it (docs/cost-model.md,
 * "Time"): a roofline per kernel.  A matrix multiplication of (m, n, k)
 * reaches gemm_max x q(m) q(n) x (w / (w + gemm_w0)) x (k / (k + gemm_k0))
 * of the peak, q the fill of its last 128-wide tile and w its output tiles
 * of 128 x 128 per SM, unless it is bound by the bytes it moves; streaming
 * kernels (norms, softmax, elementwise) move bytes at mem_eff of the HBM
 * bandwidth; fused attention runs at its own fraction of the peak; every kernel
 * pays a launch.  The figures per GPU model and their sources are in
 * docs/cost-model.md.
 */
typedef struct {
  double peak_flops;       /* dense bf16/fp16 tensor FLOP/s */
  double peak_fp8_flops;   /* dense fp8 FLOP/s; 0: no fp8 tensor cores */
  double peak_fp4_flops;   /* dense fp4 FLOP/s; 0: no fp4 tensor cores */
  double hbm_bandwidth;    /* bytes/s, datasheet */
  int sms;                 /* streaming multiprocessors / compute units */
  double gemm_max;         /* fraction of peak the largest GEMMs reach */
  double sustain;          /* fraction of the microbenchmark rates (GEMM,
                              fused attention) sustained in a training step */
  double gemm_w0;          /* output tiles per SM at half the tile term */
  double gemm_k0;          /* inner dimension at half the k term */
  double gemm_k0_narrow;   /* ... of FP8 and FP4 GEMMs, whose main loop runs
                              twice (four times) as fast a k-step while a
                              tile's prologue and epilogue do not */
  double sustain_narrow;   /* of sustain, what FP8 and FP4 GEMMs keep */
  double mem_eff;          /* fraction of HBM bandwidth a copy reaches (a
                              GEMM's operands) */
  double stream_eff;       /* fraction a framework's elementwise, norm and
                              softmax kernels reach */
  double attn_fwd;         /* fused attention forward: fraction of peak */
  double attn_bwd;         /* fused attention backward: fraction of peak */
  double attn_s0;          /* sequence at which attention reaches half */
  double launch_seconds;   /* per kernel */
  double moe_host_seconds; /* an eager MoE layer's host-bound gaps, one
                              micro-batch, forward and backward */
  double context_bytes;    /* CUDA/HIP context, kernels, library handles */
  double workspace_bytes;  /* cuBLAS/cuBLASLt and TE workspaces */
  double nccl_comm_bytes;  /* NCCL buffers of a communicator of > 2 ranks */
  double nccl_pair_bytes;  /* ... of a 2-rank communicator */
  /* Achieved fraction of a link's nominal bandwidth by NCCL/RCCL's
   * collectives (bus bandwidth over line rate), per level kind. */
  double link_eff[4]; /* indexed by strata_level_kind_t */
} strata_perf_t;

/* The performance figures of a GPU model (the vendor's class defaults
 * when the model is not in the table: say so with *known = 0). */
void strata_perf_of(const strata_gpu_model_t *m, strata_perf_t *p, int *known);
/* Fraction of the peak a GEMM of batch x (m, n, k) reaches (no roofline). */
double strata_perf_gemm_eff(const strata_perf_t *p, double batch, double m,
                            double n, double k);
/* ... of an FP8 or FP4 GEMM (its k term's half point gemm_k0_narrow). */
double strata_perf_gemm_eff_narrow(const strata_perf_t *p, double batch,
                                   double m, double n, double k);
/* Seconds of batch GEMMs of (m, n, k) with elements of elem_bytes (1: fp8
 * operands at the fp8 peak, 2: bf16/fp16): the larger of the compute and
 * the memory time, plus one launch.  0 for an empty product. */
double strata_perf_gemm(const strata_perf_t *p, double batch, double m,
                        double n, double k, int elem_bytes);
/* The same with operands of `operand` bytes an element (their scales
 * in) at the fp8 peak, or the fp4 peak where fp4 (a narrow-precision
 * recipe's GEMM: intraop.h, strata_lowp_t). */
double strata_perf_gemm_narrow(const strata_perf_t *p, double batch, double m,
                               double n, double k, double operand, int fp4);
/* Seconds of kernels that stream `bytes` through HBM. */
double strata_perf_stream(const strata_perf_t *p, double bytes, int kernels);
/* Seconds of fused attention doing `flops` over sequences of `seq`
 * (backward: bwd = 1): the fraction of the peak rises with the sequence
 * as attn x seq / (seq + attn_s0). */
double strata_perf_attention(const strata_perf_t *p, double flops, double seq,
                             int bwd, int fp8);

/* ---------------------------------------------------------------------
 * One node's topology, read from hwloc (an XML export or this machine).
 */
#define STRATA_TOPO_NAME_MAX 64

/* How close a NIC is to a GPU: the first object their PCI paths share. */
typedef enum {
  STRATA_NEAR_SWITCH,  /* same PCIe switch (a PCI bridge) */
  STRATA_NEAR_ROOT,    /* same host bridge (root complex) */
  STRATA_NEAR_NUMA,    /* same NUMA node */
  STRATA_NEAR_SOCKET,  /* same package */
  STRATA_NEAR_MACHINE, /* across sockets */
  STRATA_NEAR_NONE     /* no NIC */
} strata_nearness_t;
const char *strata_nearness_name(strata_nearness_t n);

typedef struct {
  char name[STRATA_TOPO_NAME_MAX];  /* OS devices, "cuda0/nvml0" or "pci" */
  char model[STRATA_TOPO_NAME_MAX]; /* as reported ("" if not) */
  const strata_gpu_model_t *table;  /* matched table entry or NULL */
  char pci_busid[16];               /* "0000:4e:00.0" */
  unsigned vendor_id, device_id;
  uint64_t memory_bytes;   /* as reported by hwloc, else the table's; 0 */
  double pcie_bandwidth;   /* bytes/s of its PCIe link; 0 unknown */
  double nvlink_bandwidth; /* bytes/s to all peers together; 0 none */
  int numa;                /* OS index of its NUMA node, -1 unknown */
  int package;             /* logical index of its package, -1 unknown */
  int domain;              /* NVLink/XGMI domain (connected peers) */
  int nic;                 /* nearest NIC (index), -1 if none */
  strata_nearness_t nic_nearness;
} strata_gpu_info_t;

typedef struct {
  char name[STRATA_TOPO_NAME_MAX];   /* "mlx5_0", else the net device */
  char netdev[STRATA_TOPO_NAME_MAX]; /* "ibp94s0" ("" if none) */
  char pci_busid[16];
  int rdma; /* InfiniBand / RoCE (an OpenFabrics device) or Slingshot */
  int numa, package;
} strata_nic_info_t;

typedef struct strata_node_topo strata_node_topo_t;

/* Read a node from an hwloc XML file.  Errors (message names the file):
 * STRATA_ENOTFOUND / EIO (cannot read), EVERSION (written by hwloc 3.x),
 * EBADINPUT (not hwloc XML, truncated, no GPU in it), ENOMEM. */
int strata_node_load_xml(const char *path, strata_node_topo_t **out);
/* The machine this runs on; EBADINPUT if hwloc sees no GPU. */
int strata_node_load_local(strata_node_topo_t **out);
/* The machine this runs on as hwloc XML (strata_free-able, *len bytes);
 * EBADINPUT if hwloc sees no GPU. */
int strata_node_export_local(char **xml, size_t *len);
void strata_node_destroy(strata_node_topo_t *n);

const char *strata_node_source(const strata_node_topo_t *n);
int strata_node_gpu_count(const strata_node_topo_t *n);
const strata_gpu_info_t *strata_node_gpu(const strata_node_topo_t *n, int i);
int strata_node_nic_count(const strata_node_topo_t *n);
const strata_nic_info_t *strata_node_nic(const strata_node_topo_t *n, int i);
/* GPU-to-GPU NVLink/XGMI bandwidth, bytes/s one direction; 0: no link. */
double strata_node_link(const strata_node_topo_t *n, int a, int b);
/* "NVLink", "XGMI" or "" (no GPU-to-GPU links). */
const char *strata_node_link_kind(const strata_node_topo_t *n);
/* 1 if the GPUs reach each other through NVSwitches. */
int strata_node_has_switch(const strata_node_topo_t *n);

/* ---------------------------------------------------------------------
 * A cluster: nodes of one shape, the network between them, and the
 * hierarchy of levels the planner binds mesh axes to.
 *
 * Ranks number the usable GPUs node-major (rank = node * gpus_per_node +
 * local), as torchrun and Megatron-LM assign them.  A node with an
 * unhealthy GPU is dropped entirely (docs/cluster-format.md).
 */
typedef enum {
  STRATA_LEVEL_NVLINK, /* GPUs of one NVLink/XGMI domain */
  STRATA_LEVEL_PCIE,   /* GPUs of one node across PCIe */
  STRATA_LEVEL_LEAF,   /* nodes under one leaf switch */
  STRATA_LEVEL_SPINE   /* nodes across leaves (oversubscribed) */
} strata_level_kind_t;

typedef struct {
  strata_level_kind_t kind;
  char name[16];            /* "nvlink", "xgmi", "pcie", "leaf", "spine" */
  int span;                 /* GPUs a group within this level can hold */
  strata_link_t link;       /* achieved bandwidth per GPU, one direction
                               (nominal x the GPU's NCCL efficiency x
                               calibration); latency */
  double nominal_bandwidth; /* line rate per GPU, one direction */
} strata_level_t;

typedef struct strata_cluster strata_cluster_t;

/* spec: "PRESET:NODES" ("dgx-h100:128") or the path of a JSON cluster spec
 * (docs/cluster-format.md).  Errors carry a message naming the spec and
 * what is wrong: STRATA_EBADINPUT, ENOTFOUND, EVERSION, EUNSUPPORTED;
 * no healthy GPU left is EBADINPUT. */
int strata_cluster_load(const char *spec, strata_cluster_t **out);
/* The same cluster with `lost` nodes of each node group out of service
 * (its last usable ones, listed as unhealthy): what a fallback plan runs
 * on (strata plan --fallbacks).  STRATA_EINFEASIBLE, saying which, when
 * a group has no more usable nodes than that. */
int strata_cluster_load_lost(const char *spec, int lost,
                             strata_cluster_t **out);
/* A one-node cluster from an hwloc XML file, or this machine (path NULL). */
int strata_cluster_load_node(const char *xml_path, strata_cluster_t **out);
void strata_cluster_destroy(strata_cluster_t *c);

const char *strata_cluster_name(const strata_cluster_t *c);
int strata_cluster_nodes(const strata_cluster_t *c);       /* usable nodes */
int strata_cluster_total_nodes(const strata_cluster_t *c); /* incl. dropped */
int strata_cluster_gpus_per_node(const strata_cluster_t *c);
int strata_cluster_gpus(const strata_cluster_t *c); /* usable GPUs */
/* Node groups of different shapes (GPU model or GPUs per node) plan
 * together (docs/cluster-format.md, "Mixed node groups").  A cluster of
 * one shape has 1 group, itself.  Group k is a homogeneous cluster of its
 * own nodes (what every function above answers for it); the whole answers
 * group 0's GPU, GPUs per node and levels, its nodes and GPUs are every
 * group's.  Usable nodes are numbered group by group in spec order: group
 * k's first is usable node strata_cluster_group_first_node(c, k). */
int strata_cluster_group_count(const strata_cluster_t *c);
const strata_cluster_t *strata_cluster_group(const strata_cluster_t *c, int k);
int strata_cluster_group_first_node(const strata_cluster_t *c, int k);
/* The group of spec node i (0 .. total nodes), -1 out of range. */
int strata_cluster_spec_node_group(const strata_cluster_t *c, int i);
/* Between two groups: the slower NIC share per GPU (over the spine when
 * the cluster spans leaves). */
strata_link_t strata_cluster_group_link(const strata_cluster_t *c);
/* Name of usable node i ("node017"). */
const char *strata_cluster_node_name(const strata_cluster_t *c, int i);
/* Every node of the spec, usable or not (0 <= i < total nodes, in spec
 * order): its name, and why it is left out ("unhealthy (unhealthy.nodes)",
 * "GPU 3 unhealthy (unhealthy.gpus)"; NULL: usable).  NULL out of range. */
const char *strata_cluster_spec_node_name(const strata_cluster_t *c, int i);
const char *strata_cluster_spec_node_dropped(const strata_cluster_t *c, int i);
/* A cluster of n usable nodes of node group `group` (0 on a cluster of one
 * shape), its usable nodes first .. first + n - 1 (counted within the
 * group), for a job given those nodes (strata fleet): a cluster of one
 * shape, its GPUs, links and calibration the group's, its levels those of
 * its own nodes (the spine only when they span leaves).  Every node of the
 * group keeps its name and place; those left out are dropped as "another
 * job's".  name (NULL: the group's) is the cluster's name.  STRATA_EINVAL
 * when the group has no such nodes. */
int strata_cluster_subset(const strata_cluster_t *c, int group, int first,
                          int n, const char *name, strata_cluster_t **out);
const strata_gpu_model_t *strata_cluster_gpu_model(const strata_cluster_t *c);
/* "NPU" when every node group's devices are NPUs, else "GPU". */
const char *strata_cluster_device_kind(const strata_cluster_t *c);
uint64_t strata_cluster_gpu_memory(const strata_cluster_t *c);
double strata_cluster_gpu_peak_flops(const strata_cluster_t *c);
/* The datasheet's dense peak of the tensor cores of `bits` (16: bf16/fp16,
 * 8: fp8, 4: fp4), the one MFU is counted against; the 16-bit peak where
 * the GPU has none of that width. */
double strata_cluster_gpu_peak_flops_at(const strata_cluster_t *c, int bits);
/* The performance figures of its GPUs (strata_perf_of, scaled by the
 * calibration when one was applied). */
const strata_perf_t *strata_cluster_perf(const strata_cluster_t *c);

/* Calibration (strata calibrate, docs/calibration.md): scales of the
 * achieved rates fitted to measured steps on the user's cluster.  1 (and
 * 0 for the additive terms) changes nothing. */
typedef struct {
  double gemm;         /* GEMM efficiency */
  double attention;    /* fused attention efficiency */
  double stream;       /* achieved HBM bandwidth of streaming kernels */
  double link[4];      /* achieved bandwidth per level kind */
  double step_seconds; /* fixed time added to every step */
  double memory_bytes; /* fixed memory added to every device */
} strata_calibration_t;
void strata_calibration_init(strata_calibration_t *cal);
/* Read a calibration file (JSON, docs/calibration.md); errors name the
 * file and the field: STRATA_ENOTFOUND/EIO, EBADINPUT, EVERSION. */
int strata_calibration_load(const char *path, strata_calibration_t *out);
int strata_calibration_parse(const char *text, size_t len, const char *where,
                             strata_calibration_t *out);
/* Serialise to a strata_free-able JSON string. */
int strata_calibration_write(const strata_calibration_t *cal, char **text);
/* Apply a calibration to a cluster (replacing any earlier one). */
int strata_cluster_calibrate(strata_cluster_t *c,
                             const strata_calibration_t *cal);
const strata_calibration_t *
strata_cluster_calibration(const strata_cluster_t *c);

/* The fastest level's bandwidth (to turn seconds into bytes-equivalent). */
double strata_cluster_fastest_bandwidth(const strata_cluster_t *c);
int strata_cluster_level_count(const strata_cluster_t *c);
const strata_level_t *strata_cluster_level(const strata_cluster_t *c, int i);
/* Nodes per leaf switch and the spine oversubscription (>= 1). */
int strata_cluster_leaf_size(const strata_cluster_t *c);
double strata_cluster_oversubscription(const strata_cluster_t *c);
/* The node's hwloc topology (NULL for template and preset nodes). */
const strata_node_topo_t *strata_cluster_node_topo(const strata_cluster_t *c);

/* Time (s) of a collective of `bytes` (as in strata_coll_time) over the
 * first `nodes` usable nodes x the first `gpus_per_node` GPUs of each:
 * a ring over one level; across nodes as strata_coll_time_levels (one
 * flat ring, or an all-reduce's tree) and an all-to-all in node then
 * across nodes.  STRATA_EINVAL if the group does not fit. */
int strata_cluster_coll_time(const strata_cluster_t *c, strata_coll_t coll,
                             double bytes, int nodes, int gpus_per_node,
                             double *seconds);
/* The same over an explicit list of ranks (distinct, in range). */
int strata_cluster_coll_time_ranks(const strata_cluster_t *c,
                                   strata_coll_t coll, double bytes,
                                   const int *ranks, int nranks,
                                   double *seconds);
/* The mesh of a stage submesh: k GPUs of one node (nodes = 1) give a 1-D
 * mesh over the intra-node link; k nodes x g GPUs a 2-D mesh with axis 0
 * the inter-node link (worse when the nodes span leaves) and axis 1 the
 * intra-node link.  STRATA_EINVAL if it does not fit. */
int strata_cluster_stage_mesh(const strata_cluster_t *c, int nodes,
                              int gpus_per_node, strata_mesh_t *m);

/* ---------------------------------------------------------------------
 * A cluster spec from the cluster's own tools (topo/collect.c,
 * docs/cluster-format.md "Collecting a spec"): one hwloc XML export per
 * host, identical nodes grouped under a Slurm-style host range, and the
 * hosts a drain list names as unhealthy.
 */
typedef struct {
  const char *name;             /* the spec's "name" (NULL: "collected") */
  const char *spec_dir;         /* folder the spec is written to: XML paths are
                                   made relative to it (NULL: the current one) */
  double nic_gbits;             /* per NIC, Gb/s (0: not given; needed with > 1
                                   host) */
  int leaf_size;                /* hosts per leaf switch (0: the default) */
  const char *gpu_model;        /* "gpu": {"model"} where hwloc cannot tell */
  const char *const *unhealthy; /* host names to list as unhealthy */
  int n_unhealthy;
} strata_collect_opts_t;
void strata_collect_opts_init(strata_collect_opts_t *o);

/* A spec (JSON text, strata_free-able) from hwloc XML files, each named
 * after its host (node001.xml -> node001).  Errors name the file:
 * unreadable or GPU-less XML, a host given twice, a name a host range
 * cannot hold.  *ignored counts unhealthy names that are not among the
 * hosts (a drain list covers the whole scheduler). */
int strata_topo_collect(const char *const *paths, int n,
                        const strata_collect_opts_t *o, char **spec,
                        int *ignored);

/* The hosts a drain list names as unhealthy (docs/cluster-format.md):
 * `sinfo -R` output (the last field is the host list), `sinfo -N -h -o
 * "%N %T"` output (host and state: down, drained, draining, fail,
 * failing, maint, unknown, ... or a '*' / '~' flag), or one host list a
 * line; '#' comments.  Host lists use Slurm's syntax (node[001-004,009]).
 * Errors name the file and line. */
int strata_drain_list_parse(const char *text, size_t len, const char *where,
                            char ***names, int *n);
void strata_names_free(char **names, int n);

#ifdef __cplusplus
}
#endif
#endif
