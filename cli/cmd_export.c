/*
 * cmd_export.c - `strata export TARGET PLAN [options] [-o FILE]`: a plan
 * file as Megatron-LM arguments or a launch script, a DeepSpeed config or
 * its pipeline topology in Python, a PyTorch (DTensor) module, a
 * torchtitan configuration (Python, or TOML for an older torchtitan), a
 * Chrome-trace timeline, an HTML page or a Slurm batch script, to
 * standard output or atomically to FILE.  A plan the target cannot run (a
 * free-mode plan for Megatron-LM, ZeRO-2 with pipelining for DeepSpeed,
 * ...) is refused with the reason (exit 2).
 *
 * The node shape the launch script and the page need is that of the
 * cluster the plan names when it is a preset (dgx-h100:128): a plan file
 * is an input, and no name in it makes strata open a file.
 * --gpus-per-node gives it for a plan made on a spec file; the hostfile
 * takes that spec with --cluster, and with it the launch script and the
 * page name the hosts (the device map).
 */
#include <stdio.h>
#include <string.h>

#include "cli/devices.h"
#include "cli/opts.h"
#include "core/text.h"
#include "merge/merge_int.h"

typedef struct {
  const char *out, *plan, *name_map_path, *format, *cluster;
  int target, launch, topology, mindspeed, toml;
  int gpn, fallback;
  const strata_cluster_t *c; /* --cluster's, or the plan's preset; or NULL */
} args_t;

/* With --cluster, the launch script and the page name the hosts (the
 * device map of the plan on it: a plan that does not fit it is refused);
 * without, they are what they were (no map of a preset is guessed). */
static int cluster_map(const strata_plan_t *p, const args_t *a,
                       strata_device_map_t **m) {
  *m = NULL;
  return a->cluster && a->c ? strata_device_map(p, a->c, m) : 0;
}

static int run_megatron(const strata_plan_t *p, const args_t *a,
                        const strata_export_opts_t *o, char **t) {
  strata_device_map_t *m = NULL;
  if (!a->launch)
    return a->mindspeed ? strata_export_mindspeed(p, t)
                        : strata_export_megatron(p, t);
  int rc = cluster_map(p, a, &m);
  if (!rc) rc = st__megatron_launch_map(p, o, m, t);
  strata_device_map_destroy(m);
  return rc;
}
static int run_deepspeed(const strata_plan_t *p, const args_t *a,
                         const strata_export_opts_t *o, char **t) {
  (void)o;
  return a->topology ? strata_export_deepspeed_topology(p, t)
                     : strata_export_deepspeed(p, t);
}
static int run_timeline(const strata_plan_t *p, const args_t *a,
                        const strata_export_opts_t *o, char **t) {
  (void)a, (void)o;
  return strata_export_timeline(p, t);
}
static int run_torch(const strata_plan_t *p, const args_t *a,
                     const strata_export_opts_t *o, char **t) {
  (void)a;
  return strata_export_torch(p, o, t);
}
static int run_torchtitan(const strata_plan_t *p, const args_t *a,
                          const strata_export_opts_t *o, char **t) {
  (void)o;
  return a->toml ? strata_export_torchtitan(p, t) : strata_export_titan(p, t);
}
static int run_html(const strata_plan_t *p, const args_t *a,
                    const strata_export_opts_t *o, char **t) {
  strata_device_map_t *m = NULL;
  int rc = cluster_map(p, a, &m);
  if (!rc) rc = st__export_html_map(p, o, m, t);
  strata_device_map_destroy(m);
  return rc;
}

/* The hosts of the plan on its cluster (--cluster, else the preset it
 * names), in a launcher's format. */
static int run_hostfile(const strata_plan_t *p, const args_t *a,
                        const strata_export_opts_t *o, char **t) {
  strata_hostfile_format_t f = STRATA_HOSTFILE_TORCHRUN;
  strata_device_map_t *m = NULL;
  int rc = a->format ? strata_hostfile_format_parse(a->format, &f) : 0;
  if (!rc) rc = strata_device_map(p, a->c, &m);
  if (!rc) rc = strata_export_hostfile(m, f, o->source, t);
  strata_device_map_destroy(m);
  return rc;
}

/* The Slurm batch script; with --cluster, its --nodelist names the hosts. */
static int run_slurm(const strata_plan_t *p, const args_t *a,
                     const strata_export_opts_t *o, char **t) {
  strata_device_map_t *m = NULL;
  int rc = cluster_map(p, a, &m);
  if (!rc) rc = st__export_slurm_map(p, o, m, t);
  strata_device_map_destroy(m);
  return rc;
}

/* The export targets, one row each; `strata --help`, `export --help` and
 * the unknown-target message list them from here.
 *
 * To add an export target:
 *   1. strata_export_<x>(p, ..., &text) in merge/export_<x>.c, declared
 *      in include/strata/merge.h (and, for the shared library, named by
 *      cmake/strata.map's strata_* pattern: nothing to add there);
 *   2. a framework's exporter first asks the rulebook of the saved plan,
 *      st__rules_refuse(p, STRATA_RULES_<F>, "<x>") (merge/refuse.c),
 *      and its format's own refusals only after; a new framework is a
 *      STRATA_RULES_<F> bit and its rows in pipeline/rules.c's table
 *      (that file's head says how to add a rule) and a verdict in
 *      merge/frameworks.c, so show and diff say what export would do;
 *   3. a run_<x> above and its row here; its options in this file's table;
 *   4. docs/exports.md (what it writes, when it refuses, the framework
 *      version its names come from) and docs/cli.md;
 *   5. tests: its names against the framework's list (tests/export/),
 *      a cli golden case, and its name in tests/snapshot/run.sh's list
 *      of targets (then run.sh --update, reviewing the new lines).
 */
static const struct {
  const char *name;
  int (*run)(const strata_plan_t *, const args_t *,
             const strata_export_opts_t *, char **);
} targets[] = {
    {"megatron", run_megatron}, {"deepspeed", run_deepspeed},
    {"torch", run_torch},       {"torchtitan", run_torchtitan},
    {"timeline", run_timeline}, {"html", run_html},
    {"hostfile", run_hostfile}, {"slurm", run_slurm},
};

#define CLI_ARGS_T args_t

static const cli_opt_t opts[] = {
    {CLI_STR("output", 'o', out, "FILE",
             "write FILE atomically (default: standard output)")},
    {CLI_FLAG("launch", launch, 1, "megatron: the launch script")},
    {CLI_FLAG("mindspeed", mindspeed, 1,
              "megatron: for MindSpeed on Ascend NPUs\n"
              "(docs/exports.md, \"MindSpeed\")")},
    {CLI_FLAG("topology", topology, 1,
              "deepspeed: the pipeline topology in Python")},
    {CLI_FLAG("toml", toml, 1,
              "torchtitan: the TOML job config of torchtitan\n"
              "before 2026-02-23 (docs/exports.md)")},
    {CLI_INT("gpus-per-node", gpn, 1, 1024, "G",
             "the cluster's GPUs per node (default: from the\n"
             "cluster: --cluster, or the preset the plan names)")},
    {CLI_STR("name-map", 0, name_map_path, "FILE",
             "torch: module names of your model (JSON,\n"
             "docs/exports.md; default: the family's)")},
    {CLI_STR("format", 0, format, "F",
             "hostfile: torchrun (default), mpi or deepspeed")},
    {CLI_STR("cluster", 0, cluster, "SPEC",
             "the cluster it runs on, for the hostfile and the\n"
             "node shape of the launch script and the page,\n"
             "which then name its hosts (default: the preset\n"
             "the plan names)")},
    {CLI_INT("fallback", fallback, 1, STRATA_FALLBACKS_MAX, "N",
             "export the plan's fallback for N nodes of each\n"
             "node group lost (strata plan --fallbacks)")},
    {CLI_END}};

static const cli_optspec_t opt_spec = {
    "export",
    opts,
    "Usage: strata export TARGET PLAN [options] [-o FILE]\n"
    "\n"
    "Targets:\n"
    "  megatron    Megatron-LM arguments, one per line ending in '\\'\n"
    "              (--launch: a complete launch script, one torchrun per "
    "node)\n"
    "  deepspeed   a DeepSpeed config (JSON); --topology: the Python lines\n"
    "              that build its pipeline topology\n"
    "  torch       a Python module: device mesh, DTensor parallelize_module\n"
    "              plan per block, pipeline split, FSDP (any plan, free "
    "mode too)\n"
    "  torchtitan  a torchtitan configuration (Python: --module/--config)\n"
    "              of a Megatron-mode plan; --toml: the TOML job config\n"
    "              of torchtitan before 2026-02-23\n"
    "  timeline    the 1F1B schedule in Chrome trace format (Perfetto,\n"
    "              chrome://tracing)\n"
    "  html        one self-contained page: schedule, memory, devices,\n"
    "              runners-up\n"
    "  hostfile    the hosts it runs on, in rank order, for a launcher\n"
    "              (--format torchrun: one torchrun line per host; mpi,\n"
    "              deepspeed: 'HOST slots=N')\n"
    "  slurm       a Slurm batch script: #SBATCH nodes and GPUs, an srun\n"
    "              of the plan's launch on every node (any plan)\n"
    "\n"
    "Options (after the target or the plan as well as before):\n",
    "\n"
    "Exit codes: 0 ok, 1 usage, 2 unreadable plan file or a plan the\n"
    "target cannot run (the message says why), 4 internal error.\n",
    0,
    24,
    NULL};

void cli_export_target_names(char *buf, size_t size) {
  size_t k = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < sizeof targets / sizeof targets[0] && k < size; i++)
    k += (size_t)snprintf(buf + k, size - k, "%s%s", i ? ", " : "",
                          targets[i].name);
}

static int find_target(const char *name) {
  for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++)
    if (!strcmp(name, targets[i].name)) return (int)i;
  return -1;
}

static int parse(int argc, char **argv, args_t *a) {
  int first, rc = cli_opts_parse(&opt_spec, argc, argv, a, &first);
  if (rc) return rc;
  char names[256];
  cli_export_target_names(names, sizeof names);
  if (argc - first != 2)
    return cli_usage_error("export", "wants a target (%s) and a plan file",
                           names);
  if ((a->target = find_target(argv[first])) < 0) {
    const char *all[sizeof targets / sizeof targets[0] + 1], *near;
    for (size_t i = 0; i < sizeof targets / sizeof targets[0]; i++)
      all[i] = targets[i].name;
    all[sizeof targets / sizeof targets[0]] = NULL;
    near = st__did_you_mean(argv[first], all);
    return cli_usage_error("export", "unknown target '%s'%s%s%s (%s)",
                           argv[first], near ? "; did you mean '" : "",
                           near ? near : "", near ? "'?" : "", names);
  }
  const char *t = targets[a->target].name;
  if (a->launch && strcmp(t, "megatron"))
    return cli_usage_error("export", "--launch is for the megatron target");
  if (a->mindspeed && strcmp(t, "megatron"))
    return cli_usage_error("export", "--mindspeed is for the megatron target");
  if (a->topology && strcmp(t, "deepspeed"))
    return cli_usage_error("export", "--topology is for the deepspeed target");
  if (a->toml && strcmp(t, "torchtitan"))
    return cli_usage_error("export", "--toml is for the torchtitan target");
  if (a->name_map_path && strcmp(t, "torch"))
    return cli_usage_error("export", "--name-map is for the torch target");
  if (a->format && strcmp(t, "hostfile"))
    return cli_usage_error("export", "--format is for the hostfile target");
  strata_hostfile_format_t f;
  if (a->format && strata_hostfile_format_parse(a->format, &f))
    return cli_usage_error("export", "%s", strata_last_error());
  a->plan = argv[first + 1];
  return 0;
}

/* The cluster: --cluster's, else the plan's when it is a preset; only the
 * hostfile needs one (the others' node shape is then unknown, which only
 * the targets that need it refuse).  A --cluster that cannot be read is an
 * error for every target. */
static int export_cluster(const strata_plan_t *p, const args_t *a,
                          strata_cluster_t **c) {
  int rc = cli_plan_cluster(p, a->cluster, c);
  if (rc && rc != STRATA_ENOMEM && !a->cluster &&
      strcmp(targets[a->target].name, "hostfile")) {
    strata_error_clear();
    rc = 0;
  }
  return rc;
}

/* The node shape from that cluster, unless --gpus-per-node gives it. */
static void node_shape(const strata_cluster_t *c, const args_t *a,
                       strata_export_opts_t *o) {
  o->gpus_per_node = a->gpn;
  if (!c) return;
  if (!o->gpus_per_node) o->gpus_per_node = strata_cluster_gpus_per_node(c);
  o->nodes_per_leaf = strata_cluster_leaf_size(c);
  /* node groups of different GPU counts: no one count per node */
  for (int k = 1; k < strata_cluster_group_count(c) && !a->gpn; k++)
    if (strata_cluster_gpus_per_node(strata_cluster_group(c, k)) !=
        strata_cluster_gpus_per_node(c))
      o->gpus_per_node = -1;
}

int cli_cmd_export(int argc, char **argv) {
  const char *cmd = "export";
  args_t a = {0};
  int rc = parse(argc, argv, &a);
  strata_plan_t *p = NULL;
  strata_cluster_t *c = NULL;
  strata_export_opts_t o;
  char *text = NULL, *map = NULL;
  size_t len;
  if (rc) return rc < 0 ? CLI_OK : rc;
  strata_export_opts_init(&o);
  o.source = a.plan;
  o.mindspeed = a.mindspeed;
  if (a.name_map_path &&
      (rc = strata_file_read(a.name_map_path, 1 << 20, &map, &len))) {
    rc = cli_fail(cmd, rc);
    goto out;
  }
  o.name_map = map;
  if (!(rc = strata_plan_load(a.plan, &p)) &&
      (rc = cli_select_fallback(a.plan, a.fallback, &p))) {
    rc = cli_fail(cmd, rc);
    goto out;
  }
  if (!rc) {
    if (!(rc = export_cluster(p, &a, &c))) {
      a.c = c;
      node_shape(c, &a, &o);
      rc = targets[a.target].run(p, &a, &o, &text);
    }
    if (rc) strata_error_prefix("%s", a.plan); /* which plan was refused */
  }
  if (rc) {
    rc = cli_fail(cmd, rc);
    goto out;
  }
  rc = cli_write_output(cmd, a.out, text, strlen(text));
out:
  strata_free(text);
  strata_free(map);
  strata_cluster_destroy(c);
  strata_plan_destroy(p);
  return rc;
}
