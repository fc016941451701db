/*
 * fuzz_pipeline.c - the whole pipeline through the public API: a cluster
 * spec and a small model become a plan, which is stitched, encoded,
 * decoded, re-encoded, shown, diffed and exported.
 *
 * An input is one JSON object (seeds in corpus/pipeline):
 *   {"cluster": {a cluster spec, docs/cluster-format.md},
 *    "model": {"family": "gpt", "layers": 2, "hidden": 64, "heads": 4,
 *              "kv_heads": 4, "ffn": 256, "seq": 64, "vocab": 512},
 *    "plan": {"global_batch": 16, "micro_batch": 0, "zero": -1,
 *             "recompute": "auto", "sequence_parallel": -1,
 *             "free": false, "memory_gb": 0, "alpha": 1}}
 * The spec goes through the real loader (written to a scratch file next
 * to node.xml, a small real hwloc export it may name).  Sizes are kept
 * small (a model of at most 4 layers of hidden 256, at most 64 GPUs) so
 * one input plans in well under a second; larger ones are skipped, not
 * refused: the planner's limits are not what is under test here.
 *
 * Properties: a failure has a message and is never STRATA_EINTERNAL (the
 * readers must refuse what the planner cannot cost); a plan has finite
 * figures, every pipeline rank within the memory budget, its devices
 * within the cluster and its chunks covering the layers in order; it encodes,
 * decodes and re-encodes to the same bytes and differs from its decoded
 * self in nothing; every exporter either writes or refuses with a
 * message.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "fuzz_util.h"
#include "strata/strata.h"

static void check(int ok, const char *what) {
  if (ok) return;
  fprintf(stderr, "fuzz_pipeline: %s (%s)\n", what, strata_last_error());
  abort();
}

/* o[key] as an int clamped to [lo, hi], or def when absent. */
static int num(const cJSON *o, const char *key, int def, int lo, int hi) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  if (!cJSON_IsNumber(v) || !isfinite(v->valuedouble)) return def;
  double d = v->valuedouble;
  return d < lo ? lo : d > hi ? hi : (int)d;
}

static const char *str(const cJSON *o, const char *key, const char *def) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
  return cJSON_IsString(v) ? v->valuestring : def;
}

/* The model's family and sizes; 0 when the input names no known family. */
static int model_opts(const cJSON *m, strata_gen_opts_t *g, const char **fam) {
  strata_family_t f;
  *fam = str(m, "family", "gpt");
  if (strata_family_parse(*fam, &f)) return 0;
  strata_gen_opts_keep(g);
  g->layers = num(m, "layers", 2, 1, 4);
  g->hidden = num(m, "hidden", 64, 8, 256);
  g->heads = num(m, "heads", 4, 1, 16);
  g->kv_heads = num(m, "kv_heads", 0, 0, 16);
  g->ffn = num(m, "ffn", 0, 0, 1024);
  g->seq = num(m, "seq", 64, 8, 256);
  g->vocab = num(m, "vocab", 512, 8, 2048);
  g->flash_attention = num(m, "flash_attention", -1, -1, 1);
  return 1;
}

static void plan_opts(const cJSON *o, strata_plan_opts_t *po) {
  const char *rc = str(o, "recompute", "auto");
  strata_plan_opts_init(po);
  po->global_batch = num(o, "global_batch", 16, 1, 4096);
  po->micro_batch = num(o, "micro_batch", 0, 0, 8);
  po->zero_stage = num(o, "zero", -1, -1, 3);
  po->sequence_parallel = num(o, "sequence_parallel", -1, -1, 1);
  po->megatron = !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "free"));
  po->memory_budget = num(o, "memory_gb", 0, 0, 4096) * 1e9;
  po->alpha = num(o, "alpha", 1, 0, 1000);
  if (strcmp(rc, "auto")) strata_recompute_parse(rc, &po->recompute);
  po->threads = 1;
  po->top = 1; /* the best configuration only: the others cost time */
  po->quiet = 1;
  po->time_limit = 5;
  po->stage_time_limit = 1;
}

static int finite_nonneg(double x) {
  return isfinite(x) && x >= 0;
}

/* The plan's figures, memory, devices and layers.  The stages are the
 * pp x vpp model chunks in model order; rank r holds chunks r, r + pp,
 * ..., so the devices of a replica are those of the first pp chunks. */
/* The budget of a device of node group z (the whole cluster's GPU when
 * it has one shape). */
static double budget_of(const strata_cluster_t *c, int z,
                        const strata_plan_opts_t *po) {
  const strata_cluster_t *g = strata_cluster_group(c, z);
  check(g != NULL, "a stage names a node group the cluster lacks");
  return (po->memory_budget > 0 ? po->memory_budget
                                : (double)strata_cluster_gpu_memory(g)) -
         po->memory_reserve;
}

static void invariants(const strata_plan_t *p, const strata_cluster_t *c,
                       const strata_plan_opts_t *po) {
  double budget = 0;
  int used = 0, layer = 0;
  for (int z = 0; z < strata_cluster_group_count(c); z++)
    if (budget_of(c, z, po) > budget) budget = budget_of(c, z, po);
  check(p->n_stages >= 1 && p->pp >= 1 && p->dp >= 1 &&
            p->n_stages == p->pp * (p->vpp > 1 ? p->vpp : 1),
        "a plan's stages are not pp x vpp chunks");
  check(finite_nonneg(p->step_seconds) && p->step_seconds > 0 &&
            finite_nonneg(p->tokens_per_second) && finite_nonneg(p->mfu) &&
            finite_nonneg(p->peak_memory_bytes),
        "a plan figure is not finite");
  check(p->peak_memory_bytes <= budget * (1 + 1e-9),
        "the plan's peak memory exceeds the budget");
  for (int r = 0; p->ranks && r < p->pp; r++) /* stage r is on rank r */
    check(finite_nonneg(p->ranks[r].mem.total) &&
              p->ranks[r].mem.total <=
                  budget_of(c, p->stages[r].group, po) * (1 + 1e-9),
          "a rank exceeds the memory budget");
  for (int s = 0; s < p->n_stages; s++) {
    const strata_plan_stage_t *st = &p->stages[s];
    check(finite_nonneg(st->fwd_seconds) && finite_nonneg(st->bwd_seconds) &&
              finite_nonneg(st->sync_seconds),
          "a stage time is not finite");
    check(s + 1 == p->n_stages || finite_nonneg(p->p2p_seconds[s]),
          "a p2p time is not finite");
    check(st->rank == s % p->pp, "a chunk is not on rank s mod pp");
    const strata_cluster_t *g = strata_cluster_group(c, st->group);
    int gpn = g ? strata_cluster_gpus_per_node(g) : 0;
    check(st->nodes >= 1 && st->gpus_per_node >= 1 && g &&
              st->nodes <= strata_cluster_nodes(g) && st->gpus_per_node <= gpn,
          "a stage's submesh is not in the cluster");
    check(st->first_rank >= 0 &&
              st->first_rank + (st->nodes - 1) * gpn + st->gpus_per_node <=
                  strata_cluster_gpus(c),
          "a stage's ranks are outside the cluster");
    check(st->layer_begin == layer && st->layer_end >= st->layer_begin,
          "the stages do not cover the layers in order");
    layer = st->layer_end;
    if (s < p->pp) used += st->nodes * st->gpus_per_node;
  }
  check(layer == p->layers, "the stages do not cover every layer");
  check((long)used * p->dp <= strata_cluster_gpus(c) &&
            p->devices <= strata_cluster_gpus(c),
        "the plan uses more devices than the cluster has");
}

static void exported(int rc, char *t) {
  check(rc == 0 || (rc < 0 && rc != STRATA_EINTERNAL && strata_last_error()[0]),
        "an exporter failed without a message");
  if (!rc) strata_free(t);
  strata_error_clear();
}

/* Every export, for a plan on nodes of gpn GPUs. */
static void export_all(const strata_plan_t *q, int gpn) {
  int (*plain[])(const strata_plan_t *, char **) = {
      strata_export_megatron, strata_export_deepspeed, strata_export_timeline,
      strata_export_deepspeed_topology, strata_export_torchtitan};
  int (*with_opts[])(const strata_plan_t *, const strata_export_opts_t *,
                     char **) = {strata_export_megatron_launch,
                                 strata_export_torch, strata_export_html};
  strata_export_opts_t o;
  char *t = NULL;
  strata_export_opts_init(&o);
  o.gpus_per_node = gpn;
  strata_error_clear();
  for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++)
    exported(plain[i](q, &t), t);
  for (size_t i = 0; i < sizeof with_opts / sizeof with_opts[0]; i++)
    exported(with_opts[i](q, &o, &t), t);
}

/* Encode, decode, re-encode; show, diff and export. */
static void round_trip(const strata_plan_t *p, int gpn) {
  unsigned char *a = NULL, *b = NULL;
  size_t la = 0, lb = 0;
  strata_plan_t *q = NULL;
  char *t = NULL;
  int differs = 1;
  check(strata_plan_encode(p, &a, &la) == 0, "a plan does not encode");
  check(strata_plan_decode(a, la, "fuzz.splan", &q) == 0,
        "an encoded plan does not decode");
  check(strata_plan_encode(q, &b, &lb) == 0, "a decoded plan does not encode");
  check(la == lb && !memcmp(a, b, la), "encode, decode, encode changed bytes");
  check(strata_plan_diff(p, q, 0, &t, &differs) == 0 && !differs,
        "a plan differs from its decoded self");
  strata_free(t);
  check(strata_plan_summary(q, &t) == 0, "no summary");
  strata_free(t);
  check(strata_plan_json(q, &t) == 0, "no JSON");
  strata_free(t);
  export_all(q, gpn);
  strata_plan_destroy(q);
  strata_free(a);
  strata_free(b);
}

static void run(const cJSON *in) {
  const cJSON *spec = cJSON_GetObjectItemCaseSensitive(in, "cluster");
  strata_cluster_t *c = NULL;
  strata_graph_t *g = NULL;
  strata_plan_t *p = NULL;
  strata_gen_opts_t gen;
  strata_plan_opts_t po;
  const char *fam;
  char *text;
  int rc;
  if (!cJSON_IsObject(spec) ||
      !model_opts(cJSON_GetObjectItemCaseSensitive(in, "model"), &gen, &fam))
    return;
  if (!(text = cJSON_PrintUnformatted(spec))) return;
  rc = strata_cluster_load(
      fuzz_write_file("cluster.json", (const uint8_t *)text, strlen(text)), &c);
  cJSON_free(text);
  if (rc || strata_cluster_gpus(c) > 64 || strata_model_load(fam, &gen, &g))
    goto out;
  plan_opts(cJSON_GetObjectItemCaseSensitive(in, "plan"), &po);
  po.model_spec = fam;
  po.gen = gen;
  strata_error_clear();
  rc = strata_pipeline_plan(g, c, &po, &p);
  if (!rc) rc = strata_merge_stitch(p, g, c);
  check(rc != STRATA_EINTERNAL, "the planner hit an internal error");
  check(!rc || strata_last_error()[0], "the planner failed without a message");
  if (!rc) {
    invariants(p, c, &po);
    round_trip(p, strata_cluster_gpus_per_node(c));
  }
out:
  strata_plan_destroy(p);
  strata_graph_destroy(g);
  strata_cluster_destroy(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static int copied;
  cJSON *in;
  fuzz_setup();
  if (!copied++) fuzz_copy_file(FUZZ_NODE_XML, "node.xml");
  strata_error_clear();
  in = cJSON_ParseWithLength((const char *)data, size);
  if (cJSON_IsObject(in)) run(in);
  cJSON_Delete(in);
  return 0;
}
