/*
 * test_devices.c - which GPUs a plan runs on (merge/devices.c) and its
 * hostfiles (export/export_hostfile.c).
 *
 * The rank coordinates are checked against groups built the way
 * Megatron-LM builds them (megatron/core/parallel_state.py,
 * generate_masked_orthogonal_rank_groups: a group is the ranks that
 * differ only in the masked coordinates, in the order tp-cp-dp-pp, and
 * tp-ep-dp-pp for the expert layers),
 * re-derived here from that algorithm's description rather than from the
 * map's own formula.
 */
#include <regex.h>
#include <stdlib.h>

#include "merge/merge_int.h"
#include "strata/strata.h"
#include "testlib.h"

#define SPEC(f) STRATA_SOURCE_DIR "/tests/data/topo/" f

/* A plan with just what the map reads: degrees and stage submeshes. */
static strata_plan_t *shape_plan(const char *cluster, int tp, int pp, int dp,
                                 int nodes, int gpn) {
  strata_plan_t *p = strata_calloc(1, sizeof *p);
  ASSERT(p);
  p->cluster = strata_strdup(cluster);
  p->tp = tp, p->pp = pp, p->dp = dp, p->devices = tp * pp * dp;
  p->n_stages = pp;
  p->stages = strata_calloc((size_t)pp, sizeof *p->stages);
  ASSERT(p->cluster && p->stages);
  for (int s = 0; s < pp; s++) {
    p->stages[s].rank = s;
    p->stages[s].nodes = nodes;
    p->stages[s].gpus_per_node = gpn;
    p->stages[s].first_rank = s * tp * dp;
  }
  return p;
}

static void free_plan(strata_plan_t *p) {
  if (!p) return;
  strata_free(p->cluster);
  strata_free(p->stages);
  strata_free(p);
}

static strata_device_map_t *map_of(strata_plan_t *p, const char *spec) {
  strata_cluster_t *c = NULL;
  strata_device_map_t *m = NULL;
  ASSERT_OK(strata_cluster_load(spec, &c));
  ASSERT_OK(strata_device_map(p, c, &m));
  strata_cluster_destroy(c);
  return m;
}

/* Megatron-LM's groups for one mask over sizes in its order (tp first),
 * as its algorithm describes them: for each index of the unmasked
 * coordinates, the ranks sum(idx[i] * stride[i]) over the masked ones.
 * Returns the group of `rank` into out (ascending), its size in *n. */
static void megatron_group(int nd, const int *size, const int *mask, int rank,
                           int *out, int *n) {
  int stride[4], idx[4], world = 1;
  for (int i = 0; i < nd; i++) {
    stride[i] = world;
    world *= size[i];
    idx[i] = rank / stride[i] % size[i];
  }
  *n = 0;
  for (int r = 0; r < world; r++) {
    int same = 1;
    for (int i = 0; i < nd; i++)
      if (!mask[i] && r / stride[i] % size[i] != idx[i]) same = 0;
    if (same) out[(*n)++] = r;
  }
}

/* A rank's coordinates in the dense order (tp, cp, dp, pp) or the
 * expert one (etp, ep, edp, pp). */
static void coords(const strata_device_t *d, int expert, int *c) {
  c[0] = expert ? d->etp : d->tp;
  c[1] = expert ? d->ep : d->cp;
  c[2] = expert ? d->edp : d->dp;
  c[3] = d->pp;
}

/* Every rank's group of each kind, from the map's coordinates, equals
 * Megatron-LM's. */
static void check_groups(const strata_device_map_t *m, int expert) {
  int edp = m->n_devices / (m->etp * m->ep * m->pp);
  const int dense[4] = {m->tp, m->cp, m->dp, m->pp};
  const int exp[4] = {m->etp, m->ep, edp, m->pp};
  const int *size = expert ? exp : dense;
  static int group[4096];
  int n;
  for (int kind = 0; kind < 4; kind++) {
    int mask[4] = {kind == 0, kind == 1, kind == 2, kind == 3};
    for (int r = 0; r < m->n_devices; r++) {
      int cd[4], k = 0;
      coords(&m->devices[r], expert, cd);
      megatron_group(4, size, mask, r, group, &n);
      for (int q = 0; q < m->n_devices; q++) {
        int ce[4], same = 1;
        coords(&m->devices[q], expert, ce);
        for (int i = 0; i < 4; i++)
          if (i != kind && ce[i] != cd[i]) same = 0;
        if (!same) continue;
        ASSERT(k < n);
        ASSERT_EQ(q, group[k]);
        k++;
      }
      ASSERT_EQ(k, n);
    }
  }
}

TEST(megatron_order_on_presets) {
  static const int cfg[][3] = {{2, 2, 2}, {8, 4, 1}, {1, 1, 32}, {4, 2, 4},
                               {2, 8, 2}, {8, 1, 4}, {1, 4, 8}};
  for (size_t i = 0; i < sizeof cfg / sizeof cfg[0]; i++) {
    int tp = cfg[i][0], pp = cfg[i][1], dp = cfg[i][2];
    strata_plan_t *p = shape_plan("dgx-h100:4", tp, pp, dp, 1, tp);
    strata_device_map_t *m = map_of(p, "dgx-h100:4");
    ASSERT_EQ(m->n_devices, tp * pp * dp);
    for (int r = 0; r < m->n_devices; r++) {
      const strata_device_t *d = &m->devices[r];
      ASSERT_EQ(d->rank, r);
      /* torchrun: node k holds ranks 8k .. 8k + 7, local rank = GPU */
      char host[16];
      snprintf(host, sizeof host, "node%d", r / 8);
      ASSERT_STR_EQ(m->nodes[d->node].name, host);
      ASSERT_EQ(d->local, r % 8);
    }
    check_groups(m, 0);
    strata_device_map_destroy(m);
    free_plan(p);
  }
}

/* Context parallelism (tp x cp devices per stage) and a mixture of
 * experts (expert tp 1 or tp): both orders against Megatron-LM's. */
TEST(context_and_expert_parallelism) {
  static const int cfg[][6] = {/* tp cp pp dp ep etp */
                               {2, 2, 2, 4, 4, 2},
                               {4, 2, 1, 4, 8, 1},
                               {1, 4, 2, 2, 2, 1},
                               {2, 1, 4, 4, 4, 2}};
  for (size_t i = 0; i < sizeof cfg / sizeof cfg[0]; i++) {
    int tp = cfg[i][0], cp = cfg[i][1], pp = cfg[i][2], dp = cfg[i][3];
    strata_plan_t *p = shape_plan("dgx-h100:8", tp * cp, pp, dp, 1, tp * cp);
    p->tp = tp;
    p->cp = cp;
    p->experts = 64;
    p->ep = cfg[i][4];
    p->etp = cfg[i][5];
    strata_device_map_t *m = map_of(p, "dgx-h100:8");
    ASSERT_EQ(m->n_devices, tp * cp * pp * dp);
    ASSERT_EQ(m->cp, cp);
    check_groups(m, 0);
    check_groups(m, 1);
    /* a tensor-parallel group is consecutive GPUs of one node */
    ASSERT_EQ(m->devices[1].tp, tp > 1 ? 1 : 0);
    ASSERT_EQ(m->devices[tp].cp, cp > 1 ? 1 : 0);
    char *json = NULL;
    ASSERT_OK(strata_device_map_json(m, &json));
    ASSERT_CONTAINS(json, "\"edp\":");
    strata_free(json);
    strata_device_map_destroy(m);
    free_plan(p);
  }
}

TEST(drained_nodes_and_a_partial_one) {
  /* 5 nodes of 4 GPUs: node002 drained, node004 has a bad GPU */
  strata_plan_t *p = shape_plan("a100x4-drained", 2, 3, 1, 1, 2);
  strata_device_map_t *m = map_of(p, SPEC("cluster-drained.json"));
  char *text = NULL;
  ASSERT_EQ(m->n_nodes, 5);
  ASSERT_EQ(m->nodes_used, 2);
  ASSERT_STR_EQ(m->nodes[0].name, "node001");
  ASSERT_EQ(m->nodes[0].use, STRATA_NODE_USED);
  ASSERT_EQ(m->nodes[0].gpus, 4);
  ASSERT_EQ(m->nodes[1].use, STRATA_NODE_DROPPED);
  ASSERT_CONTAINS(m->nodes[1].why, "unhealthy.nodes");
  ASSERT_STR_EQ(m->nodes[2].name, "node003");
  ASSERT_EQ(m->nodes[2].use, STRATA_NODE_PARTIAL);
  ASSERT_EQ(m->nodes[2].gpus, 2);
  ASSERT_EQ(m->nodes[2].node_rank, 1);
  ASSERT_EQ(m->nodes[2].first_rank, 4);
  ASSERT_EQ(m->nodes[3].use, STRATA_NODE_DROPPED);
  ASSERT_CONTAINS(m->nodes[3].why, "GPU 1 unhealthy");
  ASSERT_EQ(m->nodes[4].use, STRATA_NODE_UNUSED);
  ASSERT_CONTAINS(m->nodes[4].why, "fit on 2 nodes");
  ASSERT_EQ(m->devices[5].node, 2); /* rank 5: node003, GPU 1 */
  ASSERT_EQ(m->devices[5].local, 1);
  ASSERT_EQ(m->devices[5].pp, 2);
  check_groups(m, 0);
  ASSERT_OK(strata_device_map_summary(m, &text));
  ASSERT_CONTAINS(text, "  node003                      ranks 4-5 (2 of 4 "
                        "GPUs: CUDA_VISIBLE_DEVICES=0,1)\n");
  ASSERT_CONTAINS(text, "  node002                      unhealthy "
                        "(unhealthy.nodes)\n");
  strata_free(text);
  strata_device_map_destroy(m);
  free_plan(p);
}

/* A large cluster's summary: runs of nodes alike on one line each. */
TEST(summary_is_compact) {
  strata_plan_t *p = shape_plan("dgx-h100:20", 8, 1, 16, 1, 8);
  strata_device_map_t *m = map_of(p, "dgx-h100:20");
  char *text = NULL;
  ASSERT_OK(strata_device_map_summary(m, &text));
  ASSERT_STR_EQ(text, "devices: 128 GPUs on 16 of 20 nodes of cluster "
                      "dgx-h100:20\n"
                      "  node0 .. node15 (16 nodes)   ranks 0-127\n"
                      "  left out (4):\n"
                      "  node16 .. node19 (4 nodes)   not needed: the plan's "
                      "128 GPUs fit on 16 nodes\n"
                      "  rank order: Megatron-LM's tp-cp-ep-dp-pp (tp 8, cp "
                      "1, dp 16, pp 1; tp fastest)\n");
  strata_free(text);
  strata_device_map_destroy(m);
  free_plan(p);
}

TEST(plan_that_no_longer_fits) {
  strata_cluster_t *c = NULL;
  strata_device_map_t *m = NULL;
  /* 16 GPUs: the drained spec has only 3 usable nodes of 4 */
  strata_plan_t *p = shape_plan("a100x4-drained", 4, 1, 4, 1, 4);
  ASSERT_OK(strata_cluster_load(SPEC("cluster-drained.json"), &c));
  ASSERT_EQ(strata_device_map(p, c, &m), STRATA_EBADINPUT);
  ASSERT(!m);
  ASSERT_CONTAINS(strata_last_error(), "uses 16 GPUs but cluster");
  ASSERT_CONTAINS(strata_last_error(), "has 12 usable now");
  free_plan(p);
  /* a stage of 8 GPUs per node on nodes of 4 */
  p = shape_plan("dgx-h100:2", 8, 1, 1, 1, 8);
  ASSERT_EQ(strata_device_map(p, c, &m), STRATA_EBADINPUT);
  ASSERT_CONTAINS(strata_last_error(), "spans 1 node(s) x 8 GPUs");
  free_plan(p);
  strata_cluster_destroy(c);
}

/* Lines that are not comments: each must match re (extended). */
static int count_lines(const char *text, const char *re, int *slots) {
  regex_t rx;
  regmatch_t mt[3];
  int n = 0;
  char line[512];
  ASSERT_EQ(regcomp(&rx, re, REG_EXTENDED), 0);
  *slots = 0;
  for (const char *s = text; *s;) {
    const char *e = strchr(s, '\n');
    size_t len = e ? (size_t)(e - s) : strlen(s);
    ASSERT(len < sizeof line);
    memcpy(line, s, len);
    line[len] = 0;
    s += len + (e ? 1 : 0);
    if (line[0] == '#' || !line[0]) continue;
    if (regexec(&rx, line, 3, mt, 0))
      test_fail(__FILE__, __LINE__, "line '%s' !~ %s", line, re);
    *slots += atoi(line + mt[2].rm_so);
    n++;
  }
  regfree(&rx);
  return n;
}

TEST(hostfiles) {
  strata_plan_t *p = shape_plan("a100x4-drained", 2, 3, 1, 1, 2);
  strata_device_map_t *m = map_of(p, SPEC("cluster-drained.json"));
  char *t = NULL;
  int slots;
  /* DeepSpeed's runner reads ^(\S+)\s+slots=(\d+), '#' comments */
  ASSERT_OK(strata_export_hostfile(m, STRATA_HOSTFILE_DEEPSPEED, "x", &t));
  ASSERT_EQ(count_lines(t, "^([^[:space:]]+) +slots=([0-9]+)$", &slots), 2);
  ASSERT_EQ(slots, 6);
  ASSERT_CONTAINS(t, "node001 slots=4\nnode003 slots=2\n");
  ASSERT_CONTAINS(t, "# left out: node002: unhealthy (unhealthy.nodes)");
  strata_free(t);
  ASSERT_OK(strata_export_hostfile(m, STRATA_HOSTFILE_MPI, "x", &t));
  ASSERT_EQ(count_lines(t, "^([^[:space:]]+) slots=([0-9]+)$", &slots), 2);
  strata_free(t);
  ASSERT_OK(strata_export_hostfile(m, STRATA_HOSTFILE_TORCHRUN, "x", &t));
  ASSERT_EQ(count_lines(t,
                        "^node00[13]\t(CUDA_VISIBLE_DEVICES=0,1 )?torchrun "
                        "--nnodes=2 --node-rank=[01] --nproc-per-node=([24]) "
                        "--master-addr=node001 --master-port=29500$",
                        &slots),
            2);
  ASSERT_EQ(slots, 6);
  ASSERT_CONTAINS(t, "node003\tCUDA_VISIBLE_DEVICES=0,1 torchrun --nnodes=2 "
                     "--node-rank=1 --nproc-per-node=2");
  strata_free(t);
  strata_hostfile_format_t f;
  ASSERT_EQ(strata_hostfile_format_parse("slurm", &f), STRATA_EINVAL);
  ASSERT_CONTAINS(strata_last_error(), "torchrun, mpi or deepspeed");
  strata_device_map_destroy(m);
  free_plan(p);
}

/* Fail the Nth allocation for N = 1, 2, ... until the map and its
 * outputs succeed: each failure is a clean ENOMEM (LeakSanitizer checks
 * nothing is lost). */
TEST(allocation_failures) {
  strata_plan_t *p = shape_plan("a100x4-drained", 2, 3, 1, 1, 2);
  strata_cluster_t *c = NULL;
  ASSERT_OK(strata_cluster_load(SPEC("cluster-drained.json"), &c));
  for (long n = 1;; n++) {
    strata_device_map_t *m = NULL;
    char *a = NULL, *b = NULL, *h = NULL;
    strata_alloc_fail_at(n);
    int rc = strata_device_map(p, c, &m);
    if (!rc) rc = strata_device_map_summary(m, &a);
    if (!rc) rc = strata_device_map_json(m, &b);
    if (!rc) rc = strata_export_hostfile(m, STRATA_HOSTFILE_TORCHRUN, "x", &h);
    int failed = strata_alloc_failed();
    strata_alloc_fail_at(0);
    strata_free(a);
    strata_free(b);
    strata_free(h);
    strata_device_map_destroy(m);
    if (!failed) {
      ASSERT_OK(rc);
      break;
    }
    ASSERT_EQ(rc, STRATA_ENOMEM);
    ASSERT(n < 10000);
  }
  strata_cluster_destroy(c);
  free_plan(p);
}

/* Plan model on a mixed spec, check its device map: every rank once, on
 * a node of its stage's group, that node's GPUs in rank order; the plan
 * file keeps each stage's group and GPU.  Returns the plan. */
/* A best configuration that states its layout (plan format 17). */
static int any_layout(const strata_plan_t *p) {
  for (int i = 0; i < p->n_top; i++)
    if (p->top[i].layout[0]) return 1;
  return 0;
}

static strata_plan_t *mixed_plan(const char *model, const char *spec,
                                 const strata_gen_opts_t *sizes, int batch,
                                 int cp, strata_cluster_t **cp_out) {
  strata_cluster_t *c = NULL;
  strata_graph_t *g = NULL;
  strata_plan_t *p = NULL, *q = NULL;
  strata_device_map_t *m = NULL;
  strata_plan_opts_t o;
  strata_gen_opts_t gen;
  strata_gen_opts_keep(&gen);
  if (sizes) gen = *sizes;
  strata_plan_opts_init(&o);
  o.quiet = 1;
  o.model_spec = model;
  o.gen = gen;
  if (batch) o.global_batch = batch;
  o.cp = cp;
  ASSERT_OK(strata_cluster_load(spec, &c));
  ASSERT_OK(strata_model_load(model, &gen, &g));
  ASSERT_OK(strata_pipeline_plan(g, c, &o, &p));
  ASSERT_EQ(p->tp * (p->cp > 1 ? p->cp : 1) * p->pp * p->dp, p->devices);
  ASSERT_OK(strata_device_map(p, c, &m));
  ASSERT_EQ(m->n_devices, p->devices);
  int *seen = strata_calloc((size_t)m->n_devices, sizeof *seen);
  ASSERT(seen);
  for (int i = 0; i < m->n_devices; i++) {
    const strata_device_t *d = &m->devices[i];
    const strata_node_info_t *n = &m->nodes[d->node];
    int z = p->stages[d->pp].group;
    const strata_cluster_t *gz = strata_cluster_group(c, z);
    ASSERT_EQ(d->rank, i);
    ASSERT_EQ(strata_cluster_spec_node_group(c, d->node), z);
    ASSERT(d->local >= 0 && d->local < strata_cluster_gpus_per_node(gz));
    ASSERT_EQ(n->first_rank + d->local, d->rank); /* node-major */
    ASSERT_EQ(seen[i]++, 0);
  }
  strata_free(seen);
  /* the plan file keeps the groups (format 4; 5 with a model's multi-token
   * prediction, 8 with group-limited routing, 12 with the experts' exposed
   * all-to-all, 16 with the MoE layers' host-bound time, 17 with
   * blocking pipeline sends, the router's auxiliary loss of the model's
   * config or a best configuration's layout), show gets the same map */
  unsigned char *data = NULL;
  size_t len = 0;
  ASSERT_OK(strata_plan_encode(p, &data, &len));
  ASSERT_EQ(data[4], STRATA_PLAN_FORMAT_VERSION); /* tagged: no bump */
  ASSERT_EQ(st__legacy_format(p),
            p->step_items.p2p > 0 || p->router_aux_loss > 0 || any_layout(p)
                ? 17
            : p->step_items.host > 0   ? 16
            : p->step_items.ep_a2a > 0 ? 12
            : p->router_groups > 0     ? 8
            : p->mtp_layers > 0        ? 5
                                       : 4);
  ASSERT_OK(strata_plan_decode(data, len, "mixed", &q));
  ASSERT_EQ(q->n_groups, p->n_groups);
  for (int s = 0; s < p->n_stages; s++) {
    ASSERT_EQ(q->stages[s].group, p->stages[s].group);
    ASSERT_STR_EQ(q->stages[s].gpu_model, p->stages[s].gpu_model);
  }
  ASSERT_EQ(q->n_top, p->n_top);
  for (int i = 0; i < p->n_top; i++) /* where each runner-up runs */
    ASSERT_EQ(q->top[i].group, p->top[i].group);
  strata_free(data);
  strata_plan_destroy(q);
  strata_device_map_destroy(m);
  strata_graph_destroy(g);
  *cp_out = c;
  return p;
}

/* An H100 group and an A100 group: stages on both, more layers on each
 * H100 stage than on any A100 stage, a step no worse than the H100 group's
 * best alone, exported for Megatron-LM and refused by DeepSpeed. */
TEST(mixed_h100_a100) {
  strata_cluster_t *c = NULL;
  strata_plan_t *p = mixed_plan("gpt-7.5b", SPEC("mixed.json"), NULL, 0, 0, &c);
  int h_min = 1 << 30, a_max = 0, on[2] = {0, 0};
  ASSERT_EQ(p->n_groups, 2);
  for (int s = 0; s < p->n_stages; s++) {
    const strata_plan_stage_t *st = &p->stages[s];
    int n = st->layer_end - st->layer_begin, z = st->group;
    on[z]++;
    if (z == 0 && n < h_min) h_min = n;
    if (z == 1 && n > a_max) a_max = n;
    ASSERT_STR_EQ(st->gpu_model, z == 0 ? "H100-SXM" : "A100-80GB");
  }
  printf("  gpt-7.5b: pp %d (%d on H100, %d on A100), step %.3f s\n", p->pp,
         on[0], on[1], p->step_seconds);
  ASSERT(on[0] > 0 && on[1] > 0);
  ASSERT(h_min > a_max);
  /* the runners-up say where they run: the best over the groups, then
   * each group's best alone (the H100 one before the A100 one) */
  ASSERT(p->n_top >= 3);
  ASSERT_EQ(p->top[0].group, 0);
  ASSERT_EQ(p->top[1].group, 1);
  ASSERT_EQ(p->top[2].group, 2);
  char *sum = NULL;
  ASSERT_OK(strata_plan_summary(p, &sum));
  ASSERT_CONTAINS(sum, "stages over the node groups: ");
  ASSERT_CONTAINS(sum, "node group 1 alone: ");
  strata_free(sum);
  strata_graph_t *g = NULL;
  strata_gen_opts_t gen;
  strata_plan_opts_t o;
  strata_plan_t *h = NULL;
  strata_gen_opts_keep(&gen);
  strata_plan_opts_init(&o);
  o.quiet = 1;
  o.model_spec = "gpt-7.5b";
  ASSERT_OK(strata_model_load("gpt-7.5b", &gen, &g));
  ASSERT_OK(strata_pipeline_plan(g, strata_cluster_group(c, 0), &o, &h));
  printf("  H100 group alone: %.3f s\n", h->step_seconds);
  ASSERT(p->step_seconds <= h->step_seconds);
  /* the plan's configuration, fixed as strata estimate fixes it, costs
   * what the plan says */
  strata_plan_t *e = NULL;
  o.tp = p->tp, o.pp = p->pp, o.dp = p->dp;
  o.micro_batch = p->micro_batch;
  o.vpp = p->vpp; /* interleaved over the groups: each rank's chunks */
  o.first_layers = strata_plan_rank_layers(p, 0);
  o.last_layers = strata_plan_rank_layers(p, p->pp - 1);
  ASSERT_OK(strata_pipeline_plan(g, c, &o, &e));
  ASSERT_NEAR(e->step_seconds, p->step_seconds, 1e-12, 0);
  strata_plan_destroy(e);
  /* planned for DeepSpeed, whose PipelineModule gives no stage a count of
   * its own: on one group, and it exports */
  strata_plan_opts_init(&o);
  o.quiet = 1;
  o.model_spec = "gpt-7.5b";
  o.framework = STRATA_FRAMEWORK_DEEPSPEED;
  ASSERT_OK(strata_pipeline_plan(g, c, &o, &e));
  for (int s = 1; s < e->n_stages; s++)
    ASSERT_EQ(e->stages[s].group, e->stages[0].group);
  char *ds = NULL;
  ASSERT_OK(strata_export_deepspeed(e, &ds));
  strata_free(ds);
  strata_plan_destroy(e);
  char *t = NULL;
  ASSERT_OK(strata_export_megatron(p, &t));
  ASSERT_CONTAINS(t, "--pipeline-model-parallel-size");
  strata_free(t);
  ASSERT_EQ(strata_export_deepspeed(p, &t), STRATA_EUNSUPPORTED);
  ASSERT_CONTAINS(strata_last_error(), "node groups of different GPUs");
  strata_plan_destroy(h);
  strata_graph_destroy(g);
  strata_plan_destroy(p);
  strata_cluster_destroy(c);
}

/* A model whose layers differ (DeepSeek-V3's dense layers, then MoE ones,
 * and its MTP module on the last stage) plans over both groups too, split
 * by the prefix-sum DP: 8 of its layers fit neither group alone; the
 * plan's split fixed as strata estimate fixes it costs what it says. */
TEST(mixed_layers_that_differ) {
  strata_cluster_t *c = NULL;
  strata_gen_opts_t sizes;
  strata_gen_opts_keep(&sizes);
  sizes.layers = 8;
  strata_plan_t *p =
      mixed_plan("deepseek-v3", SPEC("mixed.json"), &sizes, 64, 0, &c);
  int on[2] = {0, 0};
  for (int s = 0; s < p->n_stages; s++)
    on[p->stages[s].group]++;
  printf("  deepseek-v3, 8 layers: pp %d (%d on H100, %d on A100), step "
         "%.3f s\n",
         p->pp, on[0], on[1], p->step_seconds);
  ASSERT_EQ(p->n_groups, 2);
  ASSERT(on[0] > 0 && on[1] > 0);
  strata_graph_t *g = NULL;
  strata_plan_opts_t o;
  strata_plan_t *h = NULL, *e = NULL;
  strata_plan_opts_init(&o);
  o.quiet = 1;
  o.model_spec = "deepseek-v3";
  o.gen = sizes;
  o.global_batch = 64;
  ASSERT_OK(strata_model_load("deepseek-v3", &sizes, &g));
  /* neither group alone holds it: only a plan over both does */
  for (int z = 0; z < 2; z++)
    ASSERT_EQ(strata_pipeline_plan(g, strata_cluster_group(c, z), &o, &h),
              STRATA_EINFEASIBLE);
  o.tp = p->tp, o.pp = p->pp, o.dp = p->dp, o.ep = p->ep;
  o.etp = p->etp, o.cp = p->cp > 0 ? p->cp : 1;
  o.micro_batch = p->micro_batch, o.gen.micro_batch = p->micro_batch;
  o.first_layers = strata_plan_rank_layers(p, 0);
  o.last_layers = strata_plan_rank_layers(p, p->pp - 1);
  ASSERT_OK(strata_pipeline_plan(g, c, &o, &e));
  ASSERT_NEAR(e->step_seconds, p->step_seconds, 1e-12, 0);
  char *t = NULL;
  ASSERT_OK(strata_export_megatron(p, &t));
  ASSERT_CONTAINS(t, "--mtp-num-layers 1");
  strata_free(t);
  strata_plan_destroy(e);
  strata_plan_destroy(h);
  strata_graph_destroy(g);
  strata_plan_destroy(p);
  strata_cluster_destroy(c);
}

/* FP8 on an H100 + A100 cluster: refused with the group that lacks it and
 * what to ask instead; auto plans FP8 where the GPUs have it. */
TEST(mixed_fp8) {
  strata_cluster_t *c = NULL;
  strata_graph_t *g = NULL;
  strata_gen_opts_t gen;
  strata_plan_opts_t o;
  strata_plan_t *p = NULL;
  strata_gen_opts_keep(&gen);
  strata_plan_opts_init(&o);
  o.quiet = 1;
  o.precision = STRATA_PRECISION_FP8;
  ASSERT_OK(strata_model_load("gpt-7.5b", &gen, &g));
  ASSERT_OK(strata_cluster_load(SPEC("mixed.json"), &c));
  ASSERT_EQ(strata_pipeline_plan(g, c, &o, &p), STRATA_EINVAL);
  ASSERT(p == NULL);
  ASSERT_CONTAINS(strata_last_error(), "node group 1 (A100-80GB): FP8 needs");
  ASSERT_CONTAINS(strata_last_error(), "--precision auto weighs FP8");
  o.precision = STRATA_PRECISION_AUTO;
  ASSERT_OK(strata_pipeline_plan(g, c, &o, &p));
  ASSERT(p->fp8); /* FP8 pays here, so on the H100s only */
  for (int s = 0; s < p->n_stages; s++)
    ASSERT_EQ(p->stages[s].group, 0);
  strata_plan_destroy(p);
  strata_graph_destroy(g);
  strata_cluster_destroy(c);
}

/* Groups of 8 and of 4 GPUs per node, with an unhealthy node in each:
 * the map still puts every rank on a healthy node of its group. */
TEST(mixed_gpus_per_node) {
  strata_cluster_t *c = NULL;
  strata_plan_t *p =
      mixed_plan("gpt-1.7b", SPEC("mixed-gpn.json"), NULL, 0, 0, &c);
  ASSERT_EQ(p->n_groups, 2);
  for (int s = 0; s < p->n_stages; s++)
    ASSERT(p->stages[s].gpus_per_node <=
           strata_cluster_gpus_per_node(
               strata_cluster_group(c, p->stages[s].group)));
  strata_plan_destroy(p);
  strata_cluster_destroy(c);
}

/* A model too small to gain from the slower group: the plan runs on the
 * H100 node alone and the map names the A100 nodes left out and why. */
TEST(mixed_group_left_out) {
  strata_cluster_t *c = NULL;
  strata_gen_opts_t gen;
  strata_gen_opts_keep(&gen);
  gen.layers = 4, gen.hidden = 128, gen.heads = 4, gen.seq = 64;
  gen.vocab = 512;
  strata_plan_t *p =
      mixed_plan("gpt", SPEC("mixed-small.json"), &gen, 32, 0, &c);
  strata_device_map_t *m = NULL;
  char *t = NULL;
  ASSERT_EQ(p->n_groups, 2);
  for (int s = 0; s < p->n_stages; s++)
    ASSERT_EQ(p->stages[s].group, 0);
  ASSERT(p->n_top >= 1);
  ASSERT_EQ(p->top[0].group, 1); /* the best is group 0's, alone */
  ASSERT_OK(strata_plan_summary(p, &t));
  ASSERT_CONTAINS(t, "group 1: left out, the best plan found does not use it");
  strata_free(t);
  ASSERT_OK(strata_device_map(p, c, &m));
  ASSERT_EQ(m->nodes_used, 1);
  ASSERT_EQ(m->nodes[1].use, STRATA_NODE_UNUSED);
  ASSERT_CONTAINS(m->nodes[2].why, "node group 1 (A100-40GB) left out");
  strata_device_map_destroy(m);
  strata_plan_destroy(p);
  strata_cluster_destroy(c);
}

/* The mixed search starts from the K-th best row the groups alone give
 * the list, so what it finds must not depend on K: the best plan is the
 * same for every --top and each list is the start of a longer one (a
 * mixed row that could enter the list is never cut). */
static strata_plan_t *plan_top(const char *model, const char *spec,
                               const strata_gen_opts_t *gen, int batch,
                               int top) {
  strata_cluster_t *c = NULL;
  strata_graph_t *g = NULL;
  strata_plan_t *p = NULL;
  strata_plan_opts_t o;
  strata_plan_opts_init(&o);
  o.quiet = 1;
  o.model_spec = model;
  o.gen = *gen;
  o.top = top;
  if (batch) o.global_batch = batch;
  ASSERT_OK(strata_cluster_load(spec, &c));
  ASSERT_OK(strata_model_load(model, gen, &g));
  ASSERT_OK(strata_pipeline_plan(g, c, &o, &p));
  strata_graph_destroy(g);
  strata_cluster_destroy(c);
  return p;
}

TEST(mixed_best_whatever_top) {
  strata_gen_opts_t big, small;
  strata_gen_opts_keep(&big);
  strata_gen_opts_keep(&small);
  small.layers = 4, small.hidden = 128, small.heads = 4, small.seq = 64;
  small.vocab = 512;
  const struct {
    const char *model, *spec;
    const strata_gen_opts_t *gen;
    int batch;
  } k[] = {{"gpt-7.5b", SPEC("mixed.json"), &big, 0},
           {"gpt", SPEC("mixed-small.json"), &small, 32}};
  for (int i = 0; i < 2; i++) {
    strata_plan_t *p[3];
    const int top[3] = {1, 3, 6};
    for (int j = 0; j < 3; j++)
      p[j] = plan_top(k[i].model, k[i].spec, k[i].gen, k[i].batch, top[j]);
    for (int j = 1; j < 3; j++) {
      ASSERT_EQ(p[j]->step_seconds, p[0]->step_seconds);
      ASSERT_EQ(p[j]->pp, p[0]->pp);
      ASSERT(p[j]->n_top >= p[j - 1]->n_top);
      for (int r = 0; r < p[j - 1]->n_top; r++) {
        ASSERT_EQ(p[j]->top[r].step_seconds, p[j - 1]->top[r].step_seconds);
        ASSERT_EQ(p[j]->top[r].group, p[j - 1]->top[r].group);
      }
    }
    for (int j = 0; j < 3; j++)
      strata_plan_destroy(p[j]);
  }
}

/* Context parallelism across the groups: the plan's tp is the tensor-
 * parallel size, not tp x cp, and each rank's coordinates say so. */
TEST(mixed_context_parallel) {
  strata_cluster_t *c = NULL;
  strata_plan_t *p =
      mixed_plan("llama2-70b", SPEC("mixed.json"), NULL, 64, 2, &c);
  int on[2] = {0, 0};
  ASSERT_EQ(p->cp, 2);
  for (int s = 0; s < p->n_stages; s++) {
    on[p->stages[s].group]++;
    ASSERT_EQ(p->stages[s].nodes * p->stages[s].gpus_per_node, p->tp * p->cp);
  }
  ASSERT(on[0] > 0 && on[1] > 0);
  char *t = NULL;
  ASSERT_OK(strata_export_megatron(p, &t));
  char want[64];
  snprintf(want, sizeof want, "--tensor-model-parallel-size %d \\", p->tp);
  ASSERT_CONTAINS(t, want);
  ASSERT_CONTAINS(t, "--context-parallel-size 2");
  strata_free(t);
  strata_plan_destroy(p);
  strata_cluster_destroy(c);
}

/* A plan built in memory with values the decoder refuses (a caller may
 * build one): the map refuses it too, with no division by 0, overflow or
 * read past the stages (the plan files of the hostile-input report). */
TEST(inconsistent_plans_refused) {
  strata_cluster_t *c = NULL;
  strata_plan_t *p =
      mixed_plan("llama2-70b", SPEC("mixed.json"), NULL, 64, 2, &c);
  strata_device_map_t *m = NULL;
  int cp = p->cp, rank = p->stages[0].rank, etp = p->etp;
  p->cp = 16 * p->tp * cp; /* tp = devices / cp would be 0 */
  ASSERT_EQ(strata_device_map(p, c, &m), STRATA_ECORRUPT);
  ASSERT_CONTAINS(strata_last_error(), "context-parallel size");
  p->cp = cp;
  for (int s = 0; s < p->n_stages; s++) /* no stage on rank 0 */
    if (p->stages[s].rank == rank) p->stages[s].rank = 1 << 30;
  ASSERT_EQ(strata_device_map(p, c, &m), STRATA_ECORRUPT);
  for (int s = 0; s < p->n_stages; s++)
    if (p->stages[s].rank == 1 << 30) p->stages[s].rank = rank;
  p->experts = 8, p->ep = 4, p->etp = 1 << 30; /* etp x ep overflows */
  ASSERT_EQ(strata_device_map(p, c, &m), STRATA_ECORRUPT);
  p->experts = 0, p->ep = 1, p->etp = etp;
  ASSERT_OK(strata_device_map(p, c, &m));
  strata_device_map_destroy(m);
  strata_plan_destroy(p);
  strata_cluster_destroy(c);
}

static const test_entry_t tests[] = {
    TEST_ENTRY(megatron_order_on_presets),
    TEST_ENTRY(context_and_expert_parallelism),
    TEST_ENTRY(drained_nodes_and_a_partial_one),
    TEST_ENTRY(summary_is_compact),
    TEST_ENTRY(plan_that_no_longer_fits),
    TEST_ENTRY(hostfiles),
    TEST_ENTRY(allocation_failures),
    TEST_ENTRY(mixed_h100_a100),
    TEST_ENTRY(mixed_layers_that_differ),
    TEST_ENTRY(mixed_fp8),
    TEST_ENTRY(mixed_gpus_per_node),
    TEST_ENTRY(mixed_group_left_out),
    TEST_ENTRY(mixed_best_whatever_top),
    TEST_ENTRY(mixed_context_parallel),
    TEST_ENTRY(inconsistent_plans_refused),
};
TEST_MAIN(tests)
