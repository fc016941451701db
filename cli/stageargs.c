/*
 * stageargs.c - parsing of the options `strata stage` and `strata compare`
 * share, and the set-up of model and mesh they both need.
 */
#include <stdlib.h>
#include <string.h>

#include "cli/stageargs.h"

enum {
  OPT_MODEL = 256,
  OPT_DEVICES,
  OPT_MESH,
  OPT_LAYERS,
  OPT_MB,
  OPT_SEQ,
  OPT_ALPHA,
  OPT_MEM,
  OPT_ZERO,
  OPT_RECIPE,
  OPT_RECOMPUTE,
  OPT_OBJECTIVE,
  OPT_TLIM,
  OPT_LP,
  OPT_JSON,
  OPT_FLASH,
  OPT_NOFLASH,
  OPT_SP,
  OPT_FULL,
  OPT_EMB,
  OPT_HEAD,
  OPT_CLUSTER,
  OPT_INFLIGHT,
  OPT_HELP,
  OPT_GAP
};

static const struct option long_opts[] = {
    {"model", required_argument, 0, OPT_MODEL},
    {"devices", required_argument, 0, OPT_DEVICES},
    {"mesh", required_argument, 0, OPT_MESH},
    {"layers", required_argument, 0, OPT_LAYERS},
    {"micro-batch", required_argument, 0, OPT_MB},
    {"seq", required_argument, 0, OPT_SEQ},
    {"alpha", required_argument, 0, OPT_ALPHA},
    {"memory-gb", required_argument, 0, OPT_MEM},
    {"zero", required_argument, 0, OPT_ZERO},
    {"recipe", required_argument, 0, OPT_RECIPE},
    {"recompute", required_argument, 0, OPT_RECOMPUTE},
    {"objective", required_argument, 0, OPT_OBJECTIVE},
    {"time-limit", required_argument, 0, OPT_TLIM},
    {"mip-gap", required_argument, 0, OPT_GAP},
    {"export-lp", required_argument, 0, OPT_LP},
    {"json", no_argument, 0, OPT_JSON},
    {"flash-attention", no_argument, 0, OPT_FLASH},
    {"no-flash-attention", no_argument, 0, OPT_NOFLASH},
    {"sequence-parallel", no_argument, 0, OPT_SP},
    {"full", no_argument, 0, OPT_FULL},
    {"with-embedding", no_argument, 0, OPT_EMB},
    {"with-head", no_argument, 0, OPT_HEAD},
    {"cluster", required_argument, 0, OPT_CLUSTER},
    {"in-flight", required_argument, 0, OPT_INFLIGHT},
    {"help", no_argument, 0, OPT_HELP},
    {0, 0, 0, 0}};

static int parse_mesh(const char *cmd, const char *s, cli_stage_args_t *a) {
  char *end;
  long x = strtol(s, &end, 10), y = 1;
  if (end != s && (*end == 'x' || *end == 'X')) {
    const char *t = end + 1;
    y = strtol(t, &end, 10);
    if (end == t) x = -1;
  }
  if (*end || x < 1 || y < 1 || x > 65536 || y > 65536)
    return cli_usage_error(cmd, "--mesh wants AxB (e.g. 2x4), not '%s'", s);
  a->mesh0 = (int)x;
  a->mesh1 = (int)y;
  return 0;
}

static int parse_enum(const char *cmd, int rc) {
  if (rc) return cli_usage_error(cmd, "%s", strata_last_error());
  return 0;
}

static int parse_one(const char *cmd, int c, cli_stage_args_t *a) {
  long v;
  int rc = 0;
  switch (c) {
  case OPT_MODEL:
    a->model = optarg;
    break;
  case OPT_DEVICES:
    rc = cli_parse_int(cmd, "--devices", optarg, 1, 1 << 20, &a->devices);
    break;
  case OPT_MESH:
    rc = parse_mesh(cmd, optarg, a);
    break;
  case OPT_LAYERS:
    rc = cli_parse_int(cmd, "--layers", optarg, 1, 100000, &a->layers);
    break;
  case OPT_MB:
    rc = cli_parse_int(cmd, "--micro-batch", optarg, 1, 1 << 20, &v);
    a->gen.micro_batch = (int)v;
    break;
  case OPT_SEQ:
    rc = cli_parse_int(cmd, "--seq", optarg, 1, 1 << 24, &v);
    a->gen.seq = (int)v;
    break;
  case OPT_ALPHA:
    rc = cli_parse_double(cmd, "--alpha", optarg, 0, 1e12, &a->so.alpha);
    break;
  case OPT_MEM:
    rc = cli_parse_double(cmd, "--memory-gb", optarg, 1e-6, 1e9, &a->memory_gb);
    break;
  case OPT_ZERO:
    rc = cli_parse_int(cmd, "--zero", optarg, 0, 3, &v);
    a->so.zero_stage = (int)v;
    break;
  case OPT_RECIPE:
    rc = parse_enum(cmd, strata_recipe_parse(optarg, &a->so.recipe));
    break;
  case OPT_RECOMPUTE:
    rc = parse_enum(cmd, strata_recompute_parse(optarg, &a->so.recompute));
    break;
  case OPT_OBJECTIVE:
    rc = parse_enum(cmd, strata_objective_parse(optarg, &a->so.objective));
    break;
  case OPT_TLIM:
    rc = cli_parse_double(cmd, "--time-limit", optarg, 0.001, 1e6,
                          &a->so.time_limit);
    break;
  case OPT_GAP:
    rc = cli_parse_double(cmd, "--mip-gap", optarg, 0, 1, &a->so.mip_gap);
    break;
  case OPT_INFLIGHT:
    rc = cli_parse_int(cmd, "--in-flight", optarg, 1, 100000, &v);
    a->so.in_flight = (int)v;
    break;
  case OPT_LP:
    a->export_lp = optarg;
    break;
  case OPT_JSON:
    a->json = 1;
    break;
  case OPT_FLASH:
    a->gen.flash_attention = 1;
    break;
  case OPT_NOFLASH:
    a->gen.flash_attention = 0;
    break;
  case OPT_SP:
    a->so.sequence_parallel = 1;
    break;
  case OPT_FULL:
    a->so.homogeneous = 0;
    break;
  case OPT_EMB:
    a->with_embedding = 1;
    break;
  case OPT_HEAD:
    a->with_head = 1;
    break;
  case OPT_CLUSTER:
    a->cluster = optarg;
    break;
  default:
    rc = cli_usage_error(cmd, "unknown option");
    break;
  }
  return rc;
}

typedef struct {
  const char *cmd;
  cli_stage_args_t *a;
} optctx_t;

static int on_opt(int c, void *ctx) {
  optctx_t *x = ctx;
  return parse_one(x->cmd, c, x->a);
}

int cli_stage_args_parse(const char *cmd, int argc, char **argv,
                         cli_stage_args_t *a, void (*help)(void)) {
  optctx_t oc = {cmd, a};
  memset(a, 0, sizeof *a);
  strata_gen_opts_keep(&a->gen);
  strata_stage_opts_init(&a->so);
  int rc =
      cli_getopt(cmd, argc, argv, "", long_opts, OPT_HELP, help, on_opt, &oc);
  if (rc) return rc;
  if (!a->model) return cli_usage_error(cmd, "--model is required");
  if (!a->devices && !a->mesh0)
    return cli_usage_error(cmd, "--devices (or --mesh) is required");
  if (a->mesh0 && a->devices && a->mesh0 * a->mesh1 != a->devices)
    return cli_usage_error(cmd, "--mesh %dx%d has %d devices, not %ld",
                           a->mesh0, a->mesh1, a->mesh0 * a->mesh1, a->devices);
  if (!a->mesh0) {
    a->mesh0 = (int)a->devices;
    a->mesh1 = 1;
  }
  a->devices = (long)a->mesh0 * a->mesh1;
  if (a->memory_gb > 0) a->so.memory_budget = a->memory_gb * 1e9;
  return 0;
}

/* With --cluster the mesh's links, the GPU's peak and memory come from
 * the cluster: N devices within a node form a 1-D mesh over its link;
 * more are whole nodes (a 2-D mesh nodes x GPUs); --mesh AxB takes A
 * nodes x B GPUs of each. */
static int cluster_mesh(const char *cmd, cli_stage_args_t *a) {
  strata_cluster_t *c = NULL;
  int rc = strata_cluster_load(a->cluster, &c), nodes, gpn;
  if (rc) return cli_fail(cmd, rc);
  int G = strata_cluster_gpus_per_node(c);
  if (a->mesh1 > 1) {
    nodes = a->mesh0;
    gpn = a->mesh1;
  } else if (a->mesh0 <= G) {
    nodes = 1;
    gpn = a->mesh0;
  } else {
    nodes = a->mesh0 / G;
    gpn = G;
    if (a->mesh0 % G) {
      strata_cluster_destroy(c);
      return cli_usage_error(cmd,
                             "--devices %d: more than one node (%d GPUs) "
                             "must be whole nodes",
                             a->mesh0, G);
    }
  }
  rc = strata_cluster_stage_mesh(c, nodes, gpn, &a->so.mesh);
  if (!rc) {
    a->so.perf = *strata_cluster_perf(c);
    a->so.fastest_bandwidth = strata_cluster_fastest_bandwidth(c);
    if (a->memory_gb <= 0)
      a->so.memory_budget = (double)strata_cluster_gpu_memory(c);
  }
  strata_cluster_destroy(c);
  return rc ? cli_fail(cmd, rc) : 0;
}

int cli_stage_setup(const char *cmd, cli_stage_args_t *a, strata_graph_t **g) {
  int rc = strata_model_load(a->model, &a->gen, g);
  if (rc) return cli_fail(cmd, rc);
  strata_mesh_default(&a->so.mesh, a->mesh0, a->mesh1);
  if (a->cluster && (rc = cluster_mesh(cmd, a))) {
    strata_graph_destroy(*g);
    *g = NULL;
    return rc;
  }
  if (a->layers > 0) {
    int L = strata_graph_layers(*g);
    if (a->layers > L) {
      strata_graph_destroy(*g);
      *g = NULL;
      return cli_usage_error(cmd, "--layers %ld: the model has %d layers",
                             a->layers, L);
    }
    a->so.layer_begin = 0;
    a->so.layer_end = (int)a->layers;
    a->so.with_prologue = a->with_embedding;
    a->so.with_epilogue = a->with_head;
  }
  return 0;
}
