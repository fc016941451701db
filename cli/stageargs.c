/*
 * stageargs.c - the options `strata stage` and `strata compare` share
 * (one table, cli/opts.h; compare refuses the two it has no use for),
 * and the set-up of model and mesh they both need.
 */
#include <stdlib.h>
#include <string.h>

#include "cli/opts.h"
#include "cli/stageargs.h"

enum { C_MESH, C_RECIPE, C_RECOMPUTE, C_OBJECTIVE };

#define CLI_ARGS_T cli_stage_args_t

static const cli_opt_t opts[] = {
    {CLI_STR("model", 0, model, "M",
             "preset, family (gpt, bert, llama) or trace file")},
    {CLI_INT("devices", devices, 1, 1 << 20, "N",
             "devices of the stage (a 1-D mesh)")},
    {CLI_CALL("mesh", 0, C_MESH, "AxB",
              "a 2-D mesh: A outer x B inner devices")},
    {CLI_STR("cluster", 0, cluster, "SPEC",
             "take links, GPU peak and memory (the default\n"
             "limit) from a cluster: PRESET:NODES or a file;\n"
             "without it every axis is 150 GB/s, 5 us")},
    {CLI_INT("stage-layers", layers, 1, 100000, "K",
             "the stage holds the model's first K layers only")},
    {CLI_INT("layers", layers, 1, 100000, "K", NULL),
     .alias_of = "stage-layers",
     .why = "--layers is the model's layer count in every other command"},
    {CLI_FLAG("with-embedding", with_embedding, 1,
              "with --stage-layers: include the embedding")},
    {CLI_FLAG("with-head", with_head, 1,
              "with --stage-layers: include the head and loss")},
    {CLI_INT("micro-batch", gen.micro_batch, 1, 1 << 20, "b",
             "micro-batch size (default: the model's, 1)")},
    {CLI_INT("seq", gen.seq, 1, 1 << 24, "S", "sequence length")},
    {CLI_TOGGLE("flash-attention", gen.flash_attention,
                "fused attention (default: the model's)")},
    {CLI_DOUBLE("alpha", so.alpha, 0, 1e12, 0, "A",
                "weight of communication (default 1)")},
    {CLI_DOUBLE("memory-gib", memory_bytes, 1e-6, 1e9, CLI_GIB, "G",
                "memory limit per device in GiB (2^30 bytes)")},
    {CLI_DOUBLE("memory-gb", memory_bytes, 1e-6, 1e9, 1e9, "G", NULL),
     .alias_of = "memory-gib", .why = CLI_GB_WHY},
    {CLI_INT("zero", so.zero_stage, 0, 3, "Z", "ZeRO stage 0-3 (default 0)")},
    {CLI_CALL("recipe", 0, C_RECIPE, "R",
              "zero (2+2+12 B/param) or megatron (2+4+12)")},
    {CLI_CALL("recompute", 0, C_RECOMPUTE, "R", "none, selective or full")},
    {CLI_CALL("objective", 0, C_OBJECTIVE, "O",
              "min-mem (default), min-comm, megatron, dp"),
     .only = 1, .why = "compare solves every objective"},
    {CLI_FLAG("sequence-parallel", so.sequence_parallel, 1,
              "megatron objective: with sequence parallelism")},
    {CLI_INT("in-flight", so.in_flight, 1, 100000, "K",
             "micro-batches whose activations are live")},
    {CLI_FLAG("full", so.homogeneous, 0,
              "solve every layer (default: one per block,\n"
              "the best homogeneous solution)")},
    {CLI_DOUBLE("time-limit", so.time_limit, 0.001, 1e6, 0, "S",
                "ILP time limit in seconds (default 60)")},
    {CLI_DOUBLE("mip-gap", so.mip_gap, 0, 1, 0, "G",
                "relative MIP gap (default 1e-6)")},
    {CLI_STR("export-lp", 0, export_lp, "FILE",
             "write the ILP in CPLEX LP format"),
     .only = 1,
     .why = "compare solves four ILPs; strata stage "
            "--objective O --export-lp FILE writes one"},
    {CLI_FLAG("json", json, 1, "JSON output")},
    {CLI_END}};

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

static int call(const char *cmd, int id, const char *arg, void *args) {
  cli_stage_args_t *a = args;
  switch (id) {
  case C_MESH:
    return parse_mesh(cmd, arg, a);
  case C_RECIPE:
    return parse_enum(cmd, strata_recipe_parse(arg, &a->so.recipe));
  case C_RECOMPUTE:
    return parse_enum(cmd, strata_recompute_parse(arg, &a->so.recompute));
  default: /* C_OBJECTIVE */
    return parse_enum(cmd, strata_objective_parse(arg, &a->so.objective));
  }
}

int cli_stage_args_parse(const char *cmd, int argc, char **argv,
                         cli_stage_args_t *a, const char *usage,
                         const char *tail) {
  const cli_optspec_t spec = {
      cmd, opts, usage, tail, strcmp(cmd, "compare") ? 1 : 2, 23, call};
  memset(a, 0, sizeof *a);
  strata_gen_opts_keep(&a->gen);
  strata_stage_opts_init(&a->so);
  int rc = cli_opts_parse(&spec, argc, argv, a, NULL);
  if (rc) return rc;
  if (!a->model) return cli_usage_error(cmd, "--model is required");
  if (!a->devices && !a->mesh0)
    return cli_usage_error(cmd, "--devices (or --mesh) is required");
  if (a->mesh0 && a->devices && a->mesh0 * a->mesh1 != a->devices)
    return cli_usage_error(cmd, "--mesh %dx%d has %d devices, not %d", a->mesh0,
                           a->mesh1, a->mesh0 * a->mesh1, a->devices);
  if (!a->mesh0) {
    a->mesh0 = (int)a->devices;
    a->mesh1 = 1;
  }
  a->devices = a->mesh0 * a->mesh1;
  if (a->memory_bytes > 0) a->so.memory_budget = a->memory_bytes;
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
    if (a->memory_bytes <= 0)
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
      return cli_usage_error(cmd, "--stage-layers %d: the model has %d layers",
                             a->layers, L);
    }
    a->so.layer_begin = 0;
    a->so.layer_end = a->layers;
    a->so.with_prologue = a->with_embedding;
    a->so.with_epilogue = a->with_head;
  }
  return 0;
}
