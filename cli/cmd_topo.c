/*
 * cmd_topo.c - `strata topo show`: the hierarchy the planner sees for one
 * node (an hwloc XML file, or this machine) or a whole cluster (a preset
 * "dgx-h100:128" or a JSON spec), with each GPU's links and nearest NIC.
 *
 * Everything shown comes from the topo/ accessors, so the text and the
 * JSON (--json) describe exactly what the planner will use.  A node and a
 * cluster go through the same path: a node is a one-node cluster.
 */
#include <stdio.h>
#include <string.h>

#include "cli/opts.h"
#include "core/json.h"
#include "core/stream.h"
#include "core/text.h"

typedef struct {
  const char *node_xml, *cluster;
  int json;
} topo_args_t;

#define CLI_ARGS_T topo_args_t

static const cli_opt_t opts[] = {
    {CLI_STR("node-xml", 0, node_xml, "FILE",
             "a node's hwloc XML export (lstopo --of xml)")},
    {CLI_STR("cluster", 0, cluster, "SPEC",
             "PRESET:NODES (dgx-a100, dgx-h100, dgx-h200, hgx-h800,\n"
             "hgx-a800, hgx-b200, gb200-nvl72, hgx-b300,\n"
             "gb300-nvl72, h100-pcie, mi300x, mi325x; e.g.\n"
             "dgx-h100:128) or a JSON spec\n"
             "(docs/cluster-format.md)")},
    {CLI_FLAG("json", json, 1, "machine-readable output")},
    {CLI_END}};

static const cli_optspec_t opt_spec = {
    "topo show",
    opts,
    "Usage: strata topo show [--node-xml FILE | --cluster SPEC] [--json]\n"
    "\n"
    "Show the hierarchy of levels (NVLink/XGMI domain, PCIe, leaf, spine)\n"
    "with bandwidth per GPU (GB/s = 10^9 bytes/s, one direction) and "
    "latency,\nand each GPU of a node with its links and nearest NIC.  "
    "Without an\noption: this machine.\n"
    "\n"
    "Options:\n",
    "\n"
    "Exit codes: 0 ok, 1 usage, 2 bad input.\n"
    "\n"
    "strata topo collect [DIR|FILE...] [-o SPEC] writes a cluster spec "
    "from\nthe hosts' hwloc exports ('strata topo collect --help').\n",
    0,
    20,
    NULL};

/* Returns 0 to run, -1 when --help was printed, or CLI_USAGE. */
static int parse_args(const char *cmd, int argc, char **argv, topo_args_t *a) {
  int rc;
  memset(a, 0, sizeof *a);
  rc = cli_opts_parse(&opt_spec, argc, argv, a, NULL);
  if (rc) return rc;
  if (a->node_xml && a->cluster)
    return cli_usage_error(cmd, "give --node-xml or --cluster, not both");
  return 0;
}

/* ---- text ---------------------------------------------------------- */

static void print_levels(const strata_cluster_t *c) {
  int gpn = strata_cluster_gpus_per_node(c);
  const char *dev = strata_cluster_device_kind(c);
  fprintf(st__stdout(),
          "hierarchy (bandwidth per %s, one direction: line rate, and what "
          "%s achieves):\n",
          dev, strcmp(dev, "NPU") ? "NCCL" : "HCCL");
  for (int i = strata_cluster_level_count(c) - 1, d = 0; i >= 0; i--, d++) {
    const strata_level_t *l = strata_cluster_level(c, i);
    char note[96] = "";
    if (l->kind == STRATA_LEVEL_LEAF)
      snprintf(note, sizeof note, "  (%d nodes per leaf switch)",
               strata_cluster_leaf_size(c));
    else if (l->kind == STRATA_LEVEL_SPINE)
      snprintf(note, sizeof note, "  (oversubscription %g:1)",
               strata_cluster_oversubscription(c));
    else if (l->span < gpn)
      snprintf(note, sizeof note, "  (%d domains per node)", gpn / l->span);
    char name[32];
    snprintf(name, sizeof name, "%*s%s", 2 * d, "", l->name);
    fprintf(st__stdout(),
            "  %-12s %7d %ss %8.1f GB/s (%6.1f achieved) %6.1f us%s\n", name,
            l->span, dev, l->nominal_bandwidth / 1e9, l->link.bandwidth / 1e9,
            l->link.latency * 1e6, note);
  }
}

/* "3 x 150" when all peers are alike, else each value. */
static void print_peers(const strata_node_topo_t *n, int i) {
  double first = -1;
  int same = 1, k = 0;
  for (int j = 0; j < strata_node_gpu_count(n); j++) {
    double v = strata_node_link(n, i, j);
    if (j == i || v <= 0) continue;
    if (first < 0) first = v;
    same &= v == first;
    k++;
  }
  if (!k) {
    fprintf(st__stdout(), "%-18s", "-");
  } else if (same) {
    char buf[48];
    snprintf(buf, sizeof buf, "%d x %.0f", k, first / 1e9);
    fprintf(st__stdout(), "%-18s", buf);
  } else {
    for (int j = 0; j < strata_node_gpu_count(n); j++)
      if (j != i)
        fprintf(st__stdout(), "%.0f ", strata_node_link(n, i, j) / 1e9);
  }
}

static void print_node(const strata_node_topo_t *n, const char *dev) {
  char mem[32];
  fprintf(st__stdout(), "%ss of one node (%s; %s links%s):\n", dev,
          strata_node_source(n),
          strata_node_link_kind(n)[0] ? strata_node_link_kind(n) : "no",
          strata_node_has_switch(n) ? " through NVSwitches" : "");
  fprintf(st__stdout(), "  %-3s %-12s %-10s %-11s %-4s %-6s %-18s %s\n", "gpu",
          "pci", "model", "memory", "numa", "PCIe", "peers GB/s",
          "nearest NIC");
  for (int i = 0; i < strata_node_gpu_count(n); i++) {
    const strata_gpu_info_t *g = strata_node_gpu(n, i);
    const strata_nic_info_t *nic = strata_node_nic(n, g->nic);
    fprintf(st__stdout(), "  %-3d %-12s %-10s %-11s %-4d %-6.1f ", i,
            g->pci_busid, g->table ? g->table->name : "?",
            strata_fmt_bytes((double)g->memory_bytes, mem, sizeof mem), g->numa,
            g->pcie_bandwidth / 1e9);
    print_peers(n, i);
    fprintf(st__stdout(), " %s%s%s%s\n", nic ? nic->name : "-", nic ? " (" : "",
            nic ? strata_nearness_name(g->nic_nearness) : "", nic ? ")" : "");
  }
  for (int i = 0; i < strata_node_nic_count(n); i++) {
    const strata_nic_info_t *nic = strata_node_nic(n, i);
    fprintf(st__stdout(), "  nic %-10s %-12s %-8s %-12s numa %d\n", nic->name,
            nic->pci_busid, nic->rdma ? "RDMA" : "Ethernet", nic->netdev,
            nic->numa);
  }
}

static void print_one(const strata_cluster_t *c) {
  const strata_gpu_model_t *m = strata_cluster_gpu_model(c);
  const strata_node_topo_t *n = strata_cluster_node_topo(c);
  char mem[32];
  fprintf(st__stdout(), "%d usable nodes", strata_cluster_nodes(c));
  if (strata_cluster_total_nodes(c) != strata_cluster_nodes(c))
    fprintf(st__stdout(), " (of %d; %d dropped as unhealthy)",
            strata_cluster_total_nodes(c),
            strata_cluster_total_nodes(c) - strata_cluster_nodes(c));
  const char *dev = strata_cluster_device_kind(c);
  fprintf(st__stdout(), " x %d %ss = %d %ss\n", strata_cluster_gpus_per_node(c),
          dev, strata_cluster_gpus(c), dev);
  const strata_perf_t *pf = strata_cluster_perf(c);
  fprintf(st__stdout(), "%s %s: %s, %.1f TFLOP/s bf16 dense", dev, m->name,
          strata_fmt_bytes((double)m->memory_bytes, mem, sizeof mem),
          m->peak_flops / 1e12);
  if (pf->peak_fp8_flops > 0)
    fprintf(st__stdout(), ", %.1f fp8", pf->peak_fp8_flops / 1e12);
  /* microbenchmark rates, and what a training step sustains of them */
  fprintf(st__stdout(),
          "\nkernels: GEMMs up to %.1f %% of peak (%.1f %% sustained in a "
          "step, FP8 and FP4 %.1f %%), HBM %.0f GB/s (copies %.0f %%, "
          "framework kernels %.0f %%), fused attention %.0f / %.0f %% (fwd / "
          "bwd; %.0f / %.0f %% sustained)\n",
          100 * pf->gemm_max, 100 * pf->sustain * pf->gemm_max,
          100 * pf->sustain * pf->sustain_narrow * pf->gemm_max,
          pf->hbm_bandwidth / 1e9, 100 * pf->mem_eff, 100 * pf->stream_eff,
          100 * pf->attn_fwd, 100 * pf->attn_bwd,
          100 * pf->sustain * pf->attn_fwd, 100 * pf->sustain * pf->attn_bwd);
  print_levels(c);
  if (n) print_node(n, dev);
}

/* A mixed cluster: the whole, then each group as the planner sees it
 * (its nodes by name, its GPU and levels), then the link between them. */
static void print_text(const strata_cluster_t *c) {
  int K = strata_cluster_group_count(c);
  fprintf(st__stdout(), "cluster %s: ", strata_cluster_name(c));
  if (K == 1) {
    print_one(c);
    return;
  }
  fprintf(st__stdout(),
          "%d node groups of different shapes, %d usable nodes, %d %ss\n", K,
          strata_cluster_nodes(c), strata_cluster_gpus(c),
          strata_cluster_device_kind(c));
  for (int k = 0; k < K; k++) {
    const strata_cluster_t *g = strata_cluster_group(c, k);
    int last = strata_cluster_total_nodes(g) - 1;
    fprintf(st__stdout(), "\ngroup %d (%s .. %s): ", k,
            strata_cluster_spec_node_name(g, 0),
            strata_cluster_spec_node_name(g, last));
    print_one(g);
  }
  strata_link_t x = strata_cluster_group_link(c);
  fprintf(st__stdout(),
          "\nbetween groups: %.1f GB/s per %s achieved, %.1f us (the slower "
          "group's NIC)\n",
          x.bandwidth / 1e9, strata_cluster_device_kind(c), x.latency * 1e6);
}

/* ---- JSON ---------------------------------------------------------- */

static cJSON *json_levels(const strata_cluster_t *c) {
  cJSON *arr = cJSON_CreateArray();
  for (int i = 0; arr && i < strata_cluster_level_count(c); i++) {
    const strata_level_t *l = strata_cluster_level(c, i);
    cJSON *o = cJSON_CreateObject();
    if (o) cJSON_AddItemToArray(arr, o);
    if (!o || st__json_add_str(o, "name", l->name) ||
        st__json_add_num(o, "span_gpus", l->span) ||
        st__json_add_num(o, "bandwidth_gbps", l->nominal_bandwidth / 1e9) ||
        st__json_add_num(o, "achieved_gbps", l->link.bandwidth / 1e9) ||
        st__json_add_num(o, "latency_us", l->link.latency * 1e6)) {
      cJSON_Delete(arr);
      return NULL;
    }
  }
  return arr;
}

static int json_gpu_fields(cJSON *o, const strata_node_topo_t *n, int i) {
  const strata_gpu_info_t *g = strata_node_gpu(n, i);
  const strata_nic_info_t *nic = strata_node_nic(n, g->nic);
  cJSON *peers = cJSON_AddArrayToObject(o, "peers_gbps");
  if (!peers) return -1;
  for (int j = 0; j < strata_node_gpu_count(n); j++)
    if (!cJSON_AddItemToArray(
            peers, cJSON_CreateNumber(strata_node_link(n, i, j) / 1e9)))
      return -1;
  if (st__json_add_num(o, "index", i) || st__json_add_str(o, "name", g->name) ||
      st__json_add_str(o, "model", g->table ? g->table->name : "") ||
      st__json_add_str(o, "reported_model", g->model) ||
      st__json_add_str(o, "pci_busid", g->pci_busid) ||
      st__json_add_num(o, "memory_bytes", (double)g->memory_bytes) ||
      st__json_add_num(o, "pcie_gbps", g->pcie_bandwidth / 1e9) ||
      st__json_add_num(o, "nvlink_gbps", g->nvlink_bandwidth / 1e9) ||
      st__json_add_num(o, "numa", g->numa) ||
      st__json_add_num(o, "package", g->package))
    return -1;
  if (!nic) return cJSON_AddNullToObject(o, "nearest_nic") ? 0 : -1;
  return st__json_add_str(o, "nearest_nic", nic->name) ||
         st__json_add_str(o, "nic_nearness",
                          strata_nearness_name(g->nic_nearness));
}

static int json_nics(cJSON *root, const strata_node_topo_t *n) {
  cJSON *arr = cJSON_AddArrayToObject(root, "nics");
  for (int i = 0; arr && i < strata_node_nic_count(n); i++) {
    const strata_nic_info_t *nic = strata_node_nic(n, i);
    cJSON *o = st__json_push_object(arr);
    if (!o) return -1;
    if (st__json_add_str(o, "name", nic->name) ||
        st__json_add_str(o, "netdev", nic->netdev) ||
        st__json_add_str(o, "pci_busid", nic->pci_busid) ||
        st__json_add_bool(o, "rdma", nic->rdma) ||
        st__json_add_num(o, "numa", nic->numa))
      return -1;
  }
  return arr ? 0 : -1;
}

/* Per GPU of one node: from hwloc when the node came from XML, else the
 * template's uniform figures. */
static int json_gpus(cJSON *root, const strata_cluster_t *c) {
  const strata_node_topo_t *n = strata_cluster_node_topo(c);
  const strata_level_t *l0 = strata_cluster_level(c, 0);
  cJSON *arr = cJSON_AddArrayToObject(root, "node_gpus");
  int gpn = strata_cluster_gpus_per_node(c);
  for (int i = 0; arr && i < gpn; i++) {
    cJSON *o = st__json_push_object(arr);
    char nic[32];
    if (!o) return -1;
    if (n) {
      if (json_gpu_fields(o, n, i)) return -1;
      continue;
    }
    snprintf(nic, sizeof nic, "nic%d", i);
    if (st__json_add_num(o, "index", i) ||
        st__json_add_str(o, "model", strata_cluster_gpu_model(c)->name) ||
        st__json_add_num(o, "memory_bytes",
                         (double)strata_cluster_gpu_memory(c)) ||
        st__json_add_num(o, "nvlink_gbps",
                         l0->kind == STRATA_LEVEL_NVLINK && gpn > 1
                             ? l0->link.bandwidth / 1e9
                             : 0) ||
        st__json_add_str(o, "nearest_nic", nic))
      return -1;
  }
  if (!arr) return -1;
  return n ? json_nics(root, n) : 0;
}

static int json_model(cJSON *root, const strata_cluster_t *c) {
  const strata_gpu_model_t *m = strata_cluster_gpu_model(c);
  cJSON *o = cJSON_AddObjectToObject(root, "gpu_model");
  if (!o || st__json_add_str(o, "name", m->name) ||
      st__json_add_num(o, "memory_bytes", (double)m->memory_bytes) ||
      st__json_add_num(o, "peak_tflops", m->peak_flops / 1e12))
    return -1;
  return 0;
}

static cJSON *json_cluster(const strata_cluster_t *c) {
  cJSON *root = cJSON_CreateObject(), *levels = NULL;
  if (!root || st__json_add_str(root, "name", strata_cluster_name(c)) ||
      st__json_add_num(root, "nodes", strata_cluster_nodes(c)) ||
      st__json_add_num(root, "total_nodes", strata_cluster_total_nodes(c)) ||
      st__json_add_num(root, "gpus_per_node",
                       strata_cluster_gpus_per_node(c)) ||
      st__json_add_num(root, "gpus", strata_cluster_gpus(c)) ||
      json_model(root, c) ||
      st__json_add_num(root, "leaf_size", strata_cluster_leaf_size(c)) ||
      st__json_add_num(root, "spine_oversubscription",
                       strata_cluster_oversubscription(c)) ||
      st__json_add_num(root, "fastest_gbps",
                       strata_cluster_fastest_bandwidth(c) / 1e9))
    goto out;
  if (!(levels = json_levels(c)) ||
      !cJSON_AddItemToObject(root, "levels", levels)) {
    cJSON_Delete(levels);
    goto out;
  }
  if (json_gpus(root, c)) goto out;
  return root;
out:
  cJSON_Delete(root);
  return NULL;
}

/* A mixed cluster adds "groups" (each as a cluster of its own) and
 * "group_link". */
static int json_groups(cJSON *root, const strata_cluster_t *c) {
  int K = strata_cluster_group_count(c);
  cJSON *arr = NULL;
  strata_link_t x = strata_cluster_group_link(c);
  if (K == 1) return 0;
  if (!(arr = cJSON_AddArrayToObject(root, "groups"))) return -1;
  for (int k = 0; k < K; k++) {
    cJSON *g = json_cluster(strata_cluster_group(c, k));
    if (!g || !cJSON_AddItemToArray(arr, g)) {
      cJSON_Delete(g);
      return -1;
    }
  }
  cJSON *l = cJSON_AddObjectToObject(root, "group_link");
  if (!l || st__json_add_num(l, "gbps", x.bandwidth / 1e9) ||
      st__json_add_num(l, "latency_us", x.latency * 1e6))
    return -1;
  return 0;
}

static char *json_text(const strata_cluster_t *c) {
  cJSON *root = json_cluster(c);
  char *text = NULL;
  if (root && !json_groups(root, c)) text = st__json_print(root);
  cJSON_Delete(root);
  if (!text) strata_error(STRATA_ENOMEM, "out of memory writing JSON");
  return text;
}

/* ---- the command --------------------------------------------------- */

static int topo_show(int argc, char **argv) {
  const char *cmd = "topo show";
  topo_args_t a;
  strata_cluster_t *c = NULL;
  char *text = NULL;
  int rc = parse_args(cmd, argc, argv, &a);
  if (rc) return rc < 0 ? CLI_OK : rc;
  rc = a.cluster ? strata_cluster_load(a.cluster, &c)
                 : strata_cluster_load_node(a.node_xml, &c);
  if (rc) return cli_fail(cmd, rc);
  if (!a.json) {
    print_text(c);
    rc = fflush(st__stdout()) ? CLI_INTERNAL : CLI_OK;
  } else if (!(text = json_text(c))) {
    rc = cli_fail(cmd, STRATA_ENOMEM);
  } else {
    rc = cli_write_output(cmd, NULL, text, strlen(text));
  }
  strata_free(text);
  strata_cluster_destroy(c);
  return rc;
}

int cli_cmd_topo(int argc, char **argv) {
  if (argc < 2) {
    cli_opts_help(&opt_spec, st__stderr());
    return CLI_USAGE;
  }
  if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
    cli_opts_help(&opt_spec, st__stdout());
    return CLI_OK;
  }
  if (!strcmp(argv[1], "show")) return topo_show(argc - 1, argv + 1);
  if (!strcmp(argv[1], "collect")) return cli_topo_collect(argc - 1, argv + 1);
  static const char *const subs[] = {"show", "collect", NULL};
  const char *near = st__did_you_mean(argv[1], subs);
  return cli_usage_error(
      "topo", "unknown subcommand '%s'%s%s%s (show or collect)", argv[1],
      near ? "; did you mean '" : "", near ? near : "", near ? "'?" : "");
}
