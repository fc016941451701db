/*
 * test_merge.c - the global plan: 1F1B simulation against its closed form,
 * stitching on real stage solves and a preset cluster, the .splan round
 * trip (fixed plans and random ones), every decode error, allocation
 * failures, diff, and the three exporters checked against the reference
 * lists of Megatron-LM flags and DeepSpeed keys.
 *
 * With STRATA_MERGE_GOLDEN_DIR set, the golden_files test also writes the
 * small plan files the CLI golden cases use (tests/cli/cases/{show,diff,
 * export}_*).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <zlib.h>

#include "core/json.h"
#include "merge/merge_int.h"
#include "export/plan_text.h"
#include "strata/strata.h"
#include "testlib.h"

/* ---- building plans by hand ---------------------------------------------- */

typedef struct {
  const char *name, *strategy, *placement;
  int in_layer;
} op_spec_t;

static const op_spec_t gpt_ops[] = {
    {"embed", "vocab", "[S(1)]", 0}, {"ln1", "seq", "[S(1)]", 1},
    {"qkv", "col", "[S(2)]", 1},     {"attn", "heads", "[S(1)]", 1},
    {"proj", "row", "[S(1)]", 1},    {"ln2", "seq", "[S(1)]", 1},
    {"fc1", "col", "[S(2)]", 1},     {"gelu", "col", "[S(2)]", 1},
    {"fc2", "row", "[S(1)]", 1},     {"final_ln", "seq", "[S(1)]", 0},
    {"head", "vocab", "[S(2)]", 0},  {"loss", "vocab", "[R]", 0},
};
#define N_GPT_OPS ((int)(sizeof gpt_ops / sizeof gpt_ops[0]))

static int want_op(int i, int first, int last) {
  if (gpt_ops[i].in_layer) return 1;
  return i == 0 ? first : last;
}

static strata_stage_result_t *hand_result(int devices, int first, int last,
                                          int layers, double scale) {
  strata_stage_result_t *r = strata_calloc(1, sizeof *r);
  ASSERT(r);
  r->ops = strata_calloc(N_GPT_OPS, sizeof *r->ops);
  ASSERT(r->ops);
  for (int i = 0; i < N_GPT_OPS; i++) {
    if (!want_op(i, first, last)) continue;
    strata_op_choice_t *o = &r->ops[r->n_ops++];
    o->name = strata_strdup(gpt_ops[i].name);
    o->strategy = strata_strdup(gpt_ops[i].strategy);
    o->placement = strata_strdup(gpt_ops[i].placement);
    o->layer = gpt_ops[i].in_layer ? 0 : -1;
    o->repeat = gpt_ops[i].in_layer ? layers : 1;
    o->mem_bytes = 1e6 * (i + 1) * scale;
    o->comm_seconds = 1e-5 * i;
  }
  r->status = STRATA_STAGE_OPTIMAL;
  r->devices = devices;
  r->homogeneous = 1;
  r->mem.weights = 2e9 * layers * scale;
  r->mem.gradients = 4e9 * layers * scale;
  r->mem.optimizer = 3e9 * layers * scale;
  r->mem.activations = 1.5e9 * layers;
  r->mem.transient = 0.25e9;
  r->mem.total = r->mem.weights + r->mem.gradients + r->mem.optimizer +
                 r->mem.activations + r->mem.transient;
  r->peak_memory_bytes = r->mem.total;
  return r;
}

/* A Megatron-mode GPT plan: pp stages of tp GPUs, dp replicas; split[s]
 * layers in stage s (NULL: layers / pp each). */
static strata_plan_t *hand_plan(int tp, int pp, int dp, int layers,
                                const int *split) {
  strata_plan_t *p = strata_calloc(1, sizeof *p);
  ASSERT(p);
  p->model = strata_strdup("gpt-tiny");
  p->cluster = strata_strdup("dgx-h100:2");
  snprintf(p->family, sizeof p->family, "gpt");
  p->tp = tp, p->pp = pp, p->dp = dp, p->devices = tp * pp * dp;
  p->micro_batch = 1, p->n_micro = 8, p->global_batch = 8 * dp;
  p->zero_stage = 1, p->sequence_parallel = tp > 1, p->megatron = 1;
  p->recipe = STRATA_RECIPE_MEGATRON;
  p->recompute = STRATA_RECOMPUTE_SELECTIVE;
  p->alpha = 1;
  p->seq_len = 128, p->layers = layers, p->hidden = 256, p->heads = 4;
  p->kv_heads = 4, p->ffn = 1024, p->vocab = 1000, p->dropout = 1;
  p->max_position = 128;
  p->moe_grouped_gemm = 1; /* as every plan strata makes holds it */
  p->gpu_memory_bytes = 80e9, p->gpu_peak_flops = 989e12;
  p->n_stages = pp;
  p->stages = strata_calloc((size_t)pp, sizeof *p->stages);
  p->p2p_seconds =
      pp > 1 ? strata_calloc((size_t)pp - 1, sizeof(double)) : NULL;
  p->ranks = strata_calloc((size_t)pp, sizeof *p->ranks);
  p->vpp = 1;
  ASSERT(p->stages && p->ranks);
  for (int s = 0, l = 0; s < pp; s++) {
    strata_plan_stage_t *st = &p->stages[s];
    int n = split ? split[s] : layers / pp;
    st->layer_begin = l, st->layer_end = l + n;
    l += n;
    st->with_prologue = s == 0, st->with_epilogue = s == pp - 1;
    st->nodes = 1, st->gpus_per_node = tp, st->first_rank = s * tp;
    strata_mesh_default(&st->mesh, tp, 1);
    st->in_flight = pp - s;
    st->fwd_seconds = 1e-3 * n, st->bwd_seconds = 2e-3 * n;
    st->sync_seconds = 1e-4;
    st->result = hand_result(tp, s == 0, s == pp - 1, n, 1);
    st->rank = s;
    if (s + 1 < pp) p->p2p_seconds[s] = 2e-5;
    strata_mem_items_t *m = &p->ranks[s].mem;
    const strata_mem_breakdown_t *b = &st->result->mem;
    m->weights = b->weights, m->gradients = b->gradients;
    m->optimizer = b->optimizer, m->activations = b->activations;
    m->transient = b->transient, m->context = 5e8, m->nccl = 1e9;
    m->total = b->total + m->context + m->nccl;
    p->ranks[s].end_seconds = 1.0 + s;
    p->ranks[s].sync_seconds = 1e-4;
  }
  p->step_seconds = 1.0;
  p->step_items.compute = 0.7, p->step_items.tp_comm = 0.05;
  p->step_items.bubble = 0.2, p->step_items.dp_sync = 0.05;
  p->overlap_grad_reduce = dp > 1, p->overlap_param_gather = dp > 1;
  p->n_top = 2;
  p->top = strata_calloc(2, sizeof *p->top);
  ASSERT(p->top);
  p->top[0].tp = tp, p->top[0].pp = pp, p->top[0].dp = dp;
  p->top[0].step_seconds = 1.0, p->top[0].fits = 1;
  p->top[1] = p->top[0];
  p->top[1].pp = pp + 1, p->top[1].step_seconds = 1.1;
  return p;
}

static unsigned char *encode(const strata_plan_t *p, size_t *len) {
  unsigned char *d = NULL;
  ASSERT_OK(strata_plan_encode(p, &d, len));
  return d;
}

/* A file of format `version` around a raw payload, as the encoder would
 * write it. */
static unsigned char *wrap_v(const void *raw, size_t n, int version,
                             size_t *len) {
  uLongf z = compressBound((uLong)n);
  unsigned char *d = strata_malloc(20 + z);
  ASSERT(d);
  ASSERT_EQ(compress2(d + 20, &z, raw, (uLong)n, 9), Z_OK);
  uint32_t v[3] = {strata_crc32(d + 20, z), (uint32_t)n, (uint32_t)z};
  memcpy(d, "SPLN\x00\x00\x00\x00", 8);
  d[4] = (unsigned char)version;
  for (int i = 0; i < 3; i++)
    for (int k = 0; k < 4; k++)
      d[8 + 4 * i + k] = (unsigned char)(v[i] >> (8 * k));
  *len = 20 + z;
  return d;
}

static unsigned char *wrap(const void *raw, size_t n, size_t *len) {
  return wrap_v(raw, n, STRATA_PLAN_FORMAT_VERSION, len);
}

/* p as the strata of formats 3 to 17 wrote it, in the oldest of them
 * that holds it (st__payload_encode_legacy). */
static unsigned char *legacy_file(const strata_plan_t *p, size_t *len) {
  strata_buf_t raw;
  ASSERT_OK(st__payload_encode_legacy(p, &raw));
  unsigned char *d = wrap_v(raw.p, raw.len, st__legacy_format(p), len);
  strata_buf_free(&raw);
  return d;
}

/* *p without the fields added after format 18 was made (tags from
 * STRATA_PLAN_TAG_LEGACY_END): what the old formats can hold of it. */
#define NEW_FIELD_OFF(part, type, m, key, what, lo, hi, codec, tag, ...)       \
  if ((tag) >= STRATA_PLAN_TAG_LEGACY_END) p->m = (type)0;
static void legacy_only(strata_plan_t *p) {
  STRATA_PLAN_FIELDS(NEW_FIELD_OFF)
}
#undef NEW_FIELD_OFF

/* p through its file (format 18), and through the file of the old format
 * that holds it: that one reads as the same plan (less the fields added
 * after format 18, which no old format holds), whose file is the same
 * bytes as p's, and its own payload re-encodes (old format) to itself. */
static strata_plan_t *roundtrip(const strata_plan_t *p) {
  size_t len, l_old, l_new, l_full;
  strata_plan_t lp = *p;
  legacy_only(&lp);
  unsigned char *full = encode(p, &l_full);
  unsigned char *d = encode(&lp, &len), *old = legacy_file(p, &l_old), *e;
  strata_plan_t *q = NULL, *o = NULL;
  ASSERT_EQ(full[4], STRATA_PLAN_FORMAT_VERSION);
  ASSERT_OK(strata_plan_decode(full, l_full, "rt", &q));
  strata_free(full);
  ASSERT_OK(strata_plan_decode(old, l_old, "old", &o));
  e = encode(o, &l_new);
  ASSERT_EQ(l_new, len);
  ASSERT(memcmp(d, e, len) == 0);
  strata_buf_t a, b;
  ASSERT_OK(st__payload_encode_legacy(p, &a));
  ASSERT_OK(st__payload_encode_legacy(o, &b));
  ASSERT(a.len == b.len && memcmp(a.p, b.p, a.len) == 0);
  strata_buf_free(&a);
  strata_buf_free(&b);
  strata_free(e);
  strata_free(old);
  strata_plan_destroy(o);
  strata_free(d);
  return q;
}

/* encode(p) == encode(decode(encode(p))), byte for byte. */
static void assert_stable(const strata_plan_t *p) {
  size_t l1, l2;
  unsigned char *a = encode(p, &l1);
  strata_plan_t *q = NULL;
  ASSERT_OK(strata_plan_decode(a, l1, "rt", &q));
  unsigned char *b = encode(q, &l2);
  ASSERT_EQ(l1, l2);
  ASSERT(memcmp(a, b, l1) == 0);
  strata_free(a);
  strata_free(b);
  strata_plan_destroy(q);
}

/* ---- a. 1F1B ----------------------------------------------------------------
 */

static double simulate(int pp, int n, const double *f, const double *b,
                       const double *p2p) {
  strata_sched_t S;
  memset(&S, 0, sizeof S);
  S.pp = pp, S.vpp = 1, S.n_micro = n, S.fwd = f, S.bwd = b, S.p2p = p2p;
  ASSERT_OK(strata_sched_run(&S));
  double t = S.makespan;
  strata_sched_free(&S);
  return t;
}

TEST(sched_closed_form) {
  double f[8], b[8];
  for (int pp = 1; pp <= 8; pp++)
    for (int n = 1; n <= 24; n += 3)
      for (int k = 0; k < 2; k++) {
        for (int s = 0; s < pp; s++)
          f[s] = 1.0, b[s] = k ? 2.0 : 1.0;
        ASSERT_NEAR(simulate(pp, n, f, b, NULL), (n + pp - 1) * (f[0] + b[0]),
                    1e-12, 0);
      }
}

/* With p2p time c per hop the first forward reaches the last stage after
 * (pp-1)(f+c) and the last backward returns after (pp-1)(b+c) more. */
TEST(sched_p2p_and_uneven) {
  double f[4] = {1, 1, 1, 1}, b[4] = {2, 2, 2, 2}, c[3] = {0.5, 0.5, 0.5};
  ASSERT_NEAR(simulate(4, 1, f, b, c), 4 * 3 + 3 * 2 * 0.5, 1e-12, 0);
  /* more micro-batches: slower than the p2p-free schedule, faster than
   * everything serialised */
  double t = simulate(4, 16, f, b, c);
  ASSERT(t > 19 * 3 + 1e-9);
  ASSERT(t <= 16 * 4 * 3 + 3 * 1.0 + 1e-9);
  /* a slow stage bounds the step: m * (its f + b) at least */
  double g[3] = {1, 3, 1}, h[3] = {1, 3, 1};
  ASSERT(simulate(3, 10, g, h, NULL) >= 10 * 6 - 1e-9);
}

TEST(sched_deterministic_and_ordered) {
  double f[3] = {1, 2, 1.5}, b[3] = {2, 3, 2.5}, c[2] = {0.1, 0.3};
  strata_sched_t S;
  memset(&S, 0, sizeof S);
  S.pp = 3, S.vpp = 1, S.n_micro = 6, S.fwd = f, S.bwd = b, S.p2p = c;
  ASSERT_OK(strata_sched_run(&S));
  for (int s = 0; s < 3; s++)
    for (int m = 0; m < 6; m++) {
      double fs = S.f_start[s * 6 + m], bs = S.b_start[s * 6 + m];
      ASSERT(bs >= fs + f[s] - 1e-12); /* backward after its forward */
      if (s > 0)
        ASSERT(fs >= S.f_start[(s - 1) * 6 + m] + f[s - 1] + c[s - 1] - 1e-12);
      if (s < 2)
        ASSERT(bs >= S.b_start[(s + 1) * 6 + m] + b[s + 1] + c[s] - 1e-12);
    }
  double first = S.makespan;
  strata_sched_free(&S);
  ASSERT_NEAR(simulate(3, 6, f, b, c), first, 0, 0);
}

/* ---- b. stitch
 * ---------------------------------------------------------------- */

static strata_graph_t *small_gpt(int layers) {
  strata_gen_opts_t ov;
  strata_graph_t *g = NULL;
  strata_gen_opts_keep(&ov);
  ov.layers = layers, ov.hidden = 256, ov.heads = 4, ov.seq = 128;
  ov.vocab = 1000;
  ASSERT_OK(strata_model_load("gpt", &ov, &g));
  return g;
}

static strata_stage_result_t *solve_stage(const strata_graph_t *g, int l0,
                                          int l1, int tp) {
  strata_stage_opts_t o;
  strata_stage_result_t *r = NULL;
  strata_stage_opts_init(&o);
  strata_mesh_default(&o.mesh, tp, 1);
  o.layer_begin = l0, o.layer_end = l1;
  o.objective = STRATA_OBJ_MEGATRON;
  o.recipe = STRATA_RECIPE_MEGATRON;
  o.zero_stage = 1;
  ASSERT_OK(strata_stage_solve(g, &o, &r));
  return r;
}

/* A plan of a 4-layer GPT in 2 stages of 2 GPUs, stage results solved. */
static strata_plan_t *solved_plan(const strata_graph_t *g) {
  int split[2] = {2, 2};
  strata_plan_t *p = hand_plan(2, 2, 1, 4, split);
  for (int s = 0; s < 2; s++) {
    strata_stage_result_destroy(p->stages[s].result);
    p->stages[s].result = solve_stage(g, 2 * s, 2 * s + 2, 2);
  }
  p->step_seconds = p->tokens_per_second = p->mfu = 0;
  return p;
}

TEST(stitch_preset_cluster) {
  strata_graph_t *g = small_gpt(4);
  strata_cluster_t *c = NULL;
  ASSERT_OK(strata_cluster_load("dgx-h100:2", &c));
  strata_plan_t *p = solved_plan(g);
  p->step_seconds = 2.0;
  /* before the stitch the summary says the figures are not computed
   * (rather than MFU 0 %) and names the call that computes them */
  char *t = NULL;
  ASSERT_OK(strata_plan_summary(p, &t));
  ASSERT_CONTAINS(t, "tokens/s, MFU        not computed: call "
                     "strata_merge_stitch()");
  ASSERT(!strstr(t, "MFU                  0.0 %"));
  strata_free(t);
  ASSERT_OK(strata_merge_stitch(p, g, c));
  ASSERT_OK(strata_plan_summary(p, &t));
  ASSERT(!strstr(t, "not computed"));
  ASSERT_CONTAINS(t, "  MFU                  ");
  strata_free(t);
  ASSERT_NEAR(p->tokens_per_second, p->global_batch * 128 / p->step_seconds,
              1e-12, 0);
  ASSERT(p->mfu > 0 && p->mfu < 1);
  ASSERT_NEAR(p->mfu,
              p->model_flops_per_step / (2.0 * p->devices * p->gpu_peak_flops),
              1e-12, 0);
  /* the peak device is the rank holding the most */
  double peak = 0;
  for (int r = 0; r < p->pp; r++)
    if (p->ranks[r].mem.total > peak) peak = p->ranks[r].mem.total;
  ASSERT_NEAR(p->peak_memory_bytes, peak, 0, 0);
  ASSERT(p->model_flops_per_step > 0);
  ASSERT_EQ(p->max_position, 128);
  assert_stable(p);
  strata_plan_destroy(p);
  strata_cluster_destroy(c);
  strata_graph_destroy(g);
}

TEST(placement_shards) {
  strata_mesh_t m;
  strata_mesh_default(&m, 2, 4);
  ASSERT_EQ(st__placement_shards("[S(1), R]", &m), 2);
  ASSERT_EQ(st__placement_shards("[R, S(2)]", &m), 4);
  ASSERT_EQ(st__placement_shards("[S(0), S(2)]", &m), 8);
  ASSERT_EQ(st__placement_shards("[P]", &m), 1);
}

/* ---- c. plan files
 * ------------------------------------------------------------ */

static void same_str(const char *a, const char *b) {
  ASSERT_EQ(!a, !b);
  if (a) ASSERT_STR_EQ(a, b);
}

static void assert_same_plan(const strata_plan_t *a, const strata_plan_t *b) {
  same_str(a->model, b->model);
  same_str(a->cluster, b->cluster);
  ASSERT_STR_EQ(a->family, b->family);
  ASSERT_EQ(a->tp, b->tp);
  ASSERT_EQ(a->pp, b->pp);
  ASSERT_EQ(a->dp, b->dp);
  ASSERT_EQ(a->global_batch, b->global_batch);
  ASSERT_EQ(a->recompute, b->recompute);
  ASSERT_EQ(a->n_stages, b->n_stages);
  ASSERT(a->step_seconds == b->step_seconds && a->mfu == b->mfu);
  for (int s = 0; s < a->n_stages; s++) {
    const strata_plan_stage_t *x = &a->stages[s], *y = &b->stages[s];
    ASSERT_EQ(x->layer_begin, y->layer_begin);
    ASSERT_EQ(x->layer_end, y->layer_end);
    ASSERT_EQ(x->mesh.shape[0], y->mesh.shape[0]);
    ASSERT(x->mesh.axis[0].bandwidth == y->mesh.axis[0].bandwidth);
    ASSERT_EQ(x->in_flight, y->in_flight);
    ASSERT(x->fwd_seconds == y->fwd_seconds);
    ASSERT_EQ(!x->result, !y->result);
    if (!x->result) continue;
    ASSERT(x->result->mem.total == y->result->mem.total);
    ASSERT_EQ(x->result->status, y->result->status);
    ASSERT(st__ops_equal(x->result->ops, x->result->n_ops, y->result->ops,
                         y->result->n_ops));
  }
  for (int s = 0; s + 1 < a->n_stages; s++)
    ASSERT(a->p2p_seconds[s] == b->p2p_seconds[s]);
  for (int r = 0; r < a->pp; r++)
    ASSERT(memcmp(&a->ranks[r], &b->ranks[r], sizeof a->ranks[r]) == 0);
  ASSERT_EQ(a->n_top, b->n_top);
  for (int i = 0; i < a->n_top; i++)
    ASSERT(memcmp(&a->top[i], &b->top[i], sizeof a->top[i]) == 0);
  ASSERT(memcmp(&a->step_items, &b->step_items, sizeof a->step_items) == 0);
  ASSERT_EQ(a->overlap_grad_reduce, b->overlap_grad_reduce);
  ASSERT_EQ(a->framework, b->framework);
}

TEST(roundtrip_fixed_plans) {
  int uneven[4] = {3, 4, 4, 1};
  strata_plan_t *plans[4] = {
      hand_plan(1, 1, 1, 4, NULL), hand_plan(2, 2, 2, 8, NULL),
      hand_plan(4, 4, 1, 12, uneven), hand_plan(8, 3, 4, 12, NULL)};
  strata_free(plans[1]->model);
  plans[1]->model = NULL; /* NULL strings survive too */
  strata_free(plans[2]->stages[2].result->ops[0].strategy);
  plans[2]->stages[2].result->ops[0].strategy = strata_strdup("dp x row");
  plans[3]->stages[1].result->hint = strata_strdup("a hint");
  for (int i = 0; i < 4; i++) {
    strata_plan_t *q = roundtrip(plans[i]);
    assert_same_plan(plans[i], q);
    assert_stable(plans[i]);
    strata_plan_destroy(q);
    strata_plan_destroy(plans[i]);
  }
}

/* Identical op lists of middle stages are stored once: a reference to the
 * first equal list instead of the list. */
TEST(roundtrip_collapses_stages) {
  strata_plan_t *p4 = hand_plan(2, 4, 1, 16, NULL);
  strata_plan_t *p12 = hand_plan(2, 12, 1, 48, NULL);
  strata_plan_t *d12 = hand_plan(2, 12, 1, 48, NULL);
  for (int s = 0; s < 12; s++) { /* every stage's ops its own */
    strata_op_choice_t *o = &d12->stages[s].result->ops[1];
    o->mem_bytes += s + 1;
  }
  strata_buf_t r4, r12, x12;
  ASSERT_OK(st__payload_encode(p4, &r4));
  ASSERT_OK(st__payload_encode(p12, &r12));
  ASSERT_OK(st__payload_encode(d12, &x12));
  printf("  8 more stages: %zu bytes collapsed, %zu with their own ops\n",
         r12.len - r4.len, x12.len - r4.len);
  /* each of the 12 collapsed op lists (12 ops) saved at least 200 bytes */
  ASSERT(x12.len - r12.len > 11 * 200);
  assert_stable(d12);
  strata_buf_free(&r4);
  strata_buf_free(&r12);
  strata_buf_free(&x12);
  strata_plan_destroy(p4);
  strata_plan_destroy(p12);
  strata_plan_destroy(d12);
}

static uint64_t rng_state = 88172645463325252ull;
static unsigned rnd(unsigned n) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (unsigned)(rng_state % n);
}

/* A name as the decoder takes one (printable text, core/text.h), or NULL:
 * ASCII and a two-byte UTF-8 letter. */
static char *rnd_str(void) {
  char buf[40];
  unsigned n = 1 + rnd(12), k = 0;
  if (rnd(10) == 0) return NULL;
  for (unsigned i = 0; i < n; i++) {
    if (rnd(8) == 0) {
      buf[k++] = (char)0xc3, buf[k++] = (char)(0xa0 + rnd(16)); /* à .. ï */
      continue;
    }
    buf[k++] = (char)(0x20 + rnd(0x5f));
  }
  buf[k] = 0;
  return strata_strdup(buf);
}

/* A time or size: finite, at least 0. */
static double rnd_f(void) {
  switch (rnd(5)) {
  case 0:
    return 0;
  case 1:
    return (double)rnd(1000) / 7;
  case 2:
    return 1e12 * rnd(100000);
  default:
    return (double)rnd(1u << 30) / 3.0;
  }
}

static strata_plan_t *random_plan(void) {
  int pp = 1 + (int)rnd(6);
  strata_plan_t *p =
      hand_plan(1 + (int)rnd(8), pp, 1 + (int)rnd(4), 4 * pp, NULL);
  strata_free(p->cluster);
  p->cluster = rnd_str();
  p->step_seconds = rnd_f(), p->mfu = rnd_f(), p->alpha = rnd_f();
  p->time_limited = (int)rnd(2);
  p->overlap_grad_reduce = (int)rnd(2), p->framework = rnd(2);
  p->step_items.bubble = rnd_f();
  for (int r = 0; r < pp; r++)
    p->ranks[r].mem.nccl = rnd_f(), p->ranks[r].exposed_sync = rnd_f();
  for (int s = 0; s < pp; s++) {
    strata_stage_result_t *r = p->stages[s].result;
    if (rnd(5) == 0) {
      strata_stage_result_destroy(r);
      p->stages[s].result = NULL;
      continue;
    }
    r->mem.total = rnd_f();
    r->hint = rnd(3) ? NULL : rnd_str();
    for (int i = 0; i < r->n_ops && rnd(2); i++) {
      strata_free(r->ops[i].name);
      r->ops[i].name = rnd_str();
      r->ops[i].mem_bytes = rnd_f();
      r->ops[i].layer = (int)rnd((unsigned)p->layers + 1) - 1;
    }
    p->stages[s].sync_seconds = rnd_f();
  }
  return p;
}

TEST(roundtrip_random_plans) {
  for (int k = 0; k < 300; k++) {
    strata_plan_t *p = random_plan();
    strata_plan_t *q = roundtrip(p);
    assert_same_plan(p, q);
    assert_stable(p);
    strata_plan_destroy(q);
    strata_plan_destroy(p);
  }
}

static void expect_decode_error(const unsigned char *d, size_t len, int code,
                                const char *msg) {
  strata_plan_t *q = NULL;
  int rc = strata_plan_decode(d, len, "x.splan", &q);
  ASSERT_EQ(rc, code);
  ASSERT(q == NULL);
  ASSERT_CONTAINS(strata_last_error(), msg);
  ASSERT_CONTAINS(strata_last_error(), "x.splan: ");
}

TEST(decode_errors) {
  strata_plan_t *p = hand_plan(2, 2, 1, 4, NULL);
  size_t len;
  unsigned char *d = encode(p, &len);
  unsigned char *c = strata_malloc(len + 8);
  ASSERT(c);
#define RESET() memcpy(c, d, len)
  RESET();
  c[0] = 'X';
  expect_decode_error(c, len, STRATA_EBADINPUT, "not a Strata plan file");
  expect_decode_error((const unsigned char *)"{}", 2, STRATA_EBADINPUT,
                      "not a Strata plan file");
  RESET();
  c[4] = STRATA_PLAN_FORMAT_VERSION + 1;
  char newer[80];
  snprintf(newer, sizeof newer,
           "plan format version %d is newer than this strata reads (%d)",
           STRATA_PLAN_FORMAT_VERSION + 1, STRATA_PLAN_FORMAT_VERSION);
  expect_decode_error(c, len, STRATA_EVERSION, newer);
  RESET();
  c[4] = 2; /* the format before context and expert parallelism */
  expect_decode_error(c, len, STRATA_EVERSION,
                      "version 2 was written by an older strata");
  RESET();
  c[4] = 1; /* the format before the step and memory items */
  expect_decode_error(c, len, STRATA_EVERSION,
                      "version 1 was written by an older strata");
  RESET();
  c[len - 3] ^= 0x10; /* a bit of the payload */
  expect_decode_error(c, len, STRATA_ECORRUPT, "corrupt: checksum mismatch");
  RESET();
  expect_decode_error(c, len - 1, STRATA_ECORRUPT, "truncated");
  expect_decode_error(c, 12, STRATA_ECORRUPT, "truncated");
  c[len] = 0;
  expect_decode_error(c, len + 1, STRATA_ECORRUPT, "after the payload");
  c[12] = c[13] = c[14] = c[15] = 0xff; /* 4 GiB inflated */
  expect_decode_error(c, len, STRATA_ECORRUPT, "the limit is");
  RESET();
  c[12] ^= 1; /* inflated length off by one */
  expect_decode_error(c, len, STRATA_ECORRUPT, "does not inflate");
  RESET();
  c[6] = 1;
  expect_decode_error(c, len, STRATA_ECORRUPT, "unknown flags");
#undef RESET
  strata_free(c);
  strata_free(d);
  strata_plan_destroy(p);
}

/* p's payload as written, refused on reading with code and msg. */
static void expect_payload_error(const strata_plan_t *p, const char *msg) {
  strata_buf_t raw;
  size_t len;
  ASSERT_OK(st__payload_encode(p, &raw));
  unsigned char *d = wrap(raw.p, raw.len, &len);
  expect_decode_error(d, len, STRATA_ECORRUPT, msg);
  strata_free(d);
  strata_buf_free(&raw);
}

TEST(decode_bad_payload) {
  strata_plan_t *p = hand_plan(2, 2, 1, 4, NULL);
  strata_buf_t raw;
  size_t len;
  ASSERT_OK(st__payload_encode(p, &raw));
  unsigned char *d = wrap(raw.p, raw.len, &len);
  strata_plan_t *q = NULL;
  ASSERT_OK(strata_plan_decode(d, len, "w", &q)); /* the wrapper is right */
  strata_plan_destroy(q);
  strata_free(d);
  d = wrap(raw.p, raw.len / 2, &len);
  expect_decode_error(d, len, STRATA_ECORRUPT, "past the payload's end");
  strata_free(d);
  d = wrap(raw.p, 3, &len);
  expect_decode_error(d, len, STRATA_ECORRUPT, "corrupt: the plan's");
  strata_free(d);
  strata_buf_free(&raw);
  p->recipe = (strata_recipe_t)7; /* ill-typed: not a recipe */
  expect_payload_error(p, "recipe is 7, not 0 to 1");
  p->recipe = STRATA_RECIPE_MEGATRON;
  /* micro-batch x dp overflows an int to 0 (the exporters divide by it) */
  p->micro_batch = 65536, p->dp = 65536, p->n_micro = 1, p->global_batch = 0;
  expect_payload_error(p, "batch is not micro-batch x dp");
  p->micro_batch = 1, p->dp = 1, p->n_micro = 8, p->global_batch = 7;
  expect_payload_error(p, "batch is not micro-batch x dp");
  p->global_batch = 8;
  p->stages[0].mesh.ndim = 3;
  expect_payload_error(p, "mesh dimensions is out of range");
  strata_plan_destroy(p);
}

/* A plan with multi-token prediction (or a partial rotary, interleaved MoE
 * layers, NoPE layers, a sigmoid router) is format 5: those after the
 * groups' count (1 here); it reads back, re-encodes to the same bytes, and
 * a module count out of 0..16 is refused. */
TEST(format5_multi_token_prediction) {
  strata_plan_t *p = hand_plan(2, 4, 1, 16, NULL);
  size_t len;
  p->mtp_layers = 2;
  unsigned char *d = legacy_file(p, &len);
  ASSERT_EQ(d[4], 5);
  strata_free(d);
  p->rotary_percent = 0.5, p->moe_every = 2, p->nope_every = 4;
  p->router_sigmoid = 1;
  strata_plan_t *q = roundtrip(p);
  ASSERT_EQ(q->mtp_layers, 2);
  ASSERT_NEAR(q->rotary_percent, 0.5, 0, 0);
  ASSERT_EQ(q->moe_every, 2);
  ASSERT_EQ(q->nope_every, 4);
  ASSERT_EQ(q->router_sigmoid, 1);
  assert_same_plan(p, q);
  assert_stable(p);
  strata_plan_destroy(q);
  p->mtp_layers = 0, p->rotary_percent = 0, p->moe_every = 0;
  p->nope_every = 0, p->router_sigmoid = 0; /* without: format 3 */
  d = legacy_file(p, &len);
  ASSERT_EQ(d[4], 3);
  strata_free(d);
  p->mtp_layers = 17;
  strata_buf_t raw;
  ASSERT_OK(st__payload_encode_legacy(p, &raw));
  d = wrap_v(raw.p, raw.len, 5, &len);
  expect_decode_error(d, len, STRATA_ECORRUPT,
                      "multi-token prediction modules is out of range");
  strata_free(d);
  strata_buf_free(&raw);
  ASSERT_OK(st__payload_encode(p, &raw)); /* format 18: the plan's check */
  d = wrap(raw.p, raw.len, &len);
  expect_decode_error(d, len, STRATA_ECORRUPT,
                      "multi-token prediction modules is 17, not 0 to 16");
  strata_free(d);
  strata_buf_free(&raw);
  strata_plan_destroy(p);
}

/* plan_fields.h drives the codec, the JSON and diff: every header slot
 * is a field's, and each switch, set alone away from its default (off,
 * on for a TN row), survives the file, is so in show --json and is the
 * one configuration line diff reports. */
#define REST_MUST 0
#define REST_MUST_SHOWN 0
#define REST_MUST_SHOWN_OFF 1
TEST(plan_fields_table) {
  ASSERT_EQ(st__plan_fields_complete(), 1);
  static const char *keys[] = {
#define SWITCH_NAME(F, m, key, ...) #key,
      STRATA_PLAN_SWITCHES(SWITCH_NAME, keys)
#undef SWITCH_NAME
  };
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
    strata_plan_t *p = hand_plan(2, 4, 2, 16, NULL), *b, *q;
    char *json = NULL, *diff = NULL, want[128];
    const char *was = "";
    b = hand_plan(2, 4, 2, 16, NULL);
    int k = 0;
#define SWITCH_SET(F, m, key, what, codec, ...)                                \
  p->m = b->m = REST_##codec;                                                  \
  if (k++ == (int)i)                                                           \
    p->m = !REST_##codec, was = REST_##codec ? "false" : "true";
    STRATA_PLAN_SWITCHES(SWITCH_SET, p)
#undef SWITCH_SET
    q = roundtrip(p);
    assert_same_plan(p, q);
    ASSERT_OK(strata_plan_json(q, &json));
    snprintf(want, sizeof want, "\"%s\":\t%s", keys[i], was);
    ASSERT_CONTAINS(json, want);
    int differs = 0;
    ASSERT_OK(strata_plan_diff(b, q, 1, &diff, &differs));
    ASSERT_EQ(differs, 1);
    snprintf(want, sizeof want, "\"%s\"", keys[i]);
    ASSERT_CONTAINS(diff, want);
    strata_free(json);
    strata_free(diff);
    strata_plan_destroy(q);
    strata_plan_destroy(b);
    strata_plan_destroy(p);
  }
}

/* Each choice of plan_fields.h, set alone to its last name (a set to all
 * of them), makes a file of its slot's format that reads back the same, is
 * named in show --json and is the one configuration line diff reports; left at
 * 0 it writes nothing (the file keeps its older format). */
TEST(plan_choices_table) {
  static const struct {
    const char *key, *json;
  } rows[] = {
      {"moe_token_dispatcher", "\"moe_token_dispatcher\":\t\"flex\""},
      {"moe_flex_backend", "\"moe_flex_backend\":\t\"hybridep\""},
      {"moe_router_dtype", "\"moe_router_dtype\":\t\"fp64\""},
      {"moe_token_drop_policy", "\"moe_token_drop_policy\":\t\"position\""},
      {"cuda_graph_impl", "\"cuda_graph_impl\":\t\"full_iteration\""},
      {"cuda_graph_scope", "\"cuda_graph_scope\":\t[\"attn\", \"mlp\", "
                           "\"moe\", \"moe_router\", \"moe_preprocess\"]"},
      {"recompute_method", "\"recompute_method\":\t\"block\""},
      {"ds_partition_method", "\"ds_partition_method\":\t\"type:embedding\""},
      {"offload_modules",
       "\"offload_modules\":\t[\"attn_norm\", \"qkv_linear\", \"core_attn\", "
       "\"attn_proj\", \"mlp_norm\", \"expert_fc1\", \"moe_act\"]"},
      {"pp_schedule", "\"pp_schedule\":\t\"DualPipe\""},
  };
  size_t len;
  int n_choices = 0; /* every choice has its row here */
#define CHOICE_COUNT(F, ...) n_choices++;
  STRATA_PLAN_CHOICES(CHOICE_COUNT, p)
#undef CHOICE_COUNT
  ASSERT_EQ((int)(sizeof rows / sizeof rows[0]), n_choices);
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    strata_plan_t *p = hand_plan(2, 4, 2, 16, NULL), *b, *q;
    b = hand_plan(2, 4, 2, 16, NULL);
    unsigned char *d = legacy_file(p, &len);
    ASSERT(d[4] < 9);
    strata_free(d);
    char *json = NULL, *diff = NULL, want[128];
    int k = 0, newer = 0;
#define CHOICE_SET(F, kind, m, key, what, tag, diff, cli, when, help, ...)     \
  if (k++ == (int)i)                                                           \
    p->m = STRATA_PLAN_CHOICE_HI_##kind(__VA_ARGS__),                          \
    newer = (tag) >= STRATA_PLAN_TAG_LEGACY_END;
    STRATA_PLAN_CHOICES(CHOICE_SET, p)
#undef CHOICE_SET
    d = legacy_file(p, &len);
    /* the old formats kept it from 9 on; one added after 18 only 18 */
    ASSERT(newer ? d[4] < 9 : d[4] >= 9);
    strata_free(d);
    q = roundtrip(p);
    assert_same_plan(p, q);
    ASSERT_OK(strata_plan_json(q, &json));
    ASSERT_CONTAINS(json, rows[i].json);
    int differs = 0;
    ASSERT_OK(strata_plan_diff(b, q, 1, &diff, &differs));
    ASSERT_EQ(differs, 1);
    snprintf(want, sizeof want, "\"%s\"", rows[i].key);
    ASSERT_CONTAINS(diff, want);
    strata_free(json);
    strata_free(diff);
    strata_plan_destroy(q);
    strata_plan_destroy(b);
    strata_plan_destroy(p);
  }
}

/* Every GEMM recipe (delayed, MXFP8, tensorwise, blockwise FP8, NVFP4) is
 * written and read back, in the plan and in its kept configurations. */
TEST(gemm_recipes_round_trip) {
  for (int r = 0; r < STRATA_LOWP_COUNT; r++) {
    strata_plan_t *p = hand_plan(2, 4, 2, 16, NULL), *q;
    p->fp8 = p->top[0].fp8 = p->top[1].fp8 = r;
    q = roundtrip(p);
    assert_same_plan(p, q);
    ASSERT_EQ(q->top[1].fp8, r);
    strata_plan_destroy(q);
    strata_plan_destroy(p);
  }
}

/* A plan of format 8 or older reads with the experts' GEMMs grouped, as
 * its export always said; one that turns them off is format 9. */
TEST(grouped_gemm_defaults_on) {
  strata_plan_t *p = hand_plan(2, 2, 1, 4, NULL), *q;
  size_t len;
  unsigned char *d = legacy_file(p, &len);
  ASSERT(d[4] < 9);
  ASSERT_OK(strata_plan_decode(d, len, "g", &q));
  ASSERT_EQ(q->moe_grouped_gemm, 1);
  strata_free(d);
  strata_plan_destroy(q);
  p->moe_grouped_gemm = 0;
  d = legacy_file(p, &len);
  ASSERT_EQ(d[4], 9);
  ASSERT_OK(strata_plan_decode(d, len, "g", &q));
  ASSERT_EQ(q->moe_grouped_gemm, 0);
  strata_free(d);
  strata_plan_destroy(q);
  strata_plan_destroy(p);
}

/* Every byte truncation and many random corruptions fail cleanly. */
TEST(decode_fuzz) {
  strata_plan_t *p = hand_plan(4, 3, 2, 12, NULL);
  size_t len;
  unsigned char *d = encode(p, &len), *c = strata_malloc(len);
  for (size_t n = 0; n < len; n++) {
    strata_plan_t *q = NULL;
    ASSERT(strata_plan_decode(d, n, "t", &q) < 0 && !q);
  }
  for (int k = 0; k < 2000; k++) {
    strata_plan_t *q = NULL;
    memcpy(c, d, len);
    c[rnd((unsigned)len)] ^= (unsigned char)(1 + rnd(255));
    if (strata_plan_decode(c, len, "t", &q) == 0) strata_plan_destroy(q);
  }
  strata_free(c);
  strata_free(d);
  strata_plan_destroy(p);
}

TEST(save_and_load) {
  char path[512];
  strata_plan_t *p = hand_plan(2, 2, 1, 4, NULL), *q = NULL;
  snprintf(path, sizeof path, "%s/p.splan", test_scratch_dir());
  ASSERT_OK(strata_plan_save(p, path));
  ASSERT_OK(strata_plan_load(path, &q));
  assert_same_plan(p, q);
  strata_plan_destroy(q);
  q = NULL;
  snprintf(path, sizeof path, "%s/missing.splan", test_scratch_dir());
  ASSERT(strata_plan_load(path, &q) < 0 && !q);
  strata_plan_destroy(p);
}

/* A plan the decoder would refuse is not written: encode and save check
 * it first and name the field (the hostile-input report's MEDIUM 6: a
 * trace's sequence of 2^31 - 1 gave a plan file show called corrupt). */
TEST(encode_refuses_what_decode_refuses) {
  char path[512];
  struct stat st;
  unsigned char *d = NULL;
  size_t len = 0;
  strata_plan_t *p = hand_plan(2, 2, 1, 4, NULL);
  snprintf(path, sizeof path, "%s/refused.splan", test_scratch_dir());
  p->seq_len = 2147483647;
  ASSERT_EQ(strata_plan_save(p, path), STRATA_EBADINPUT);
  ASSERT_CONTAINS(strata_last_error(),
                  "refused.splan: not written, as strata would call it "
                  "corrupt: the plan's sequence length is 2147483647");
  ASSERT(stat(path, &st) != 0);
  ASSERT_EQ(strata_plan_encode(p, &d, &len), STRATA_EBADINPUT);
  /* the same plan as strata made it: an internal error, a bug to report
   * (strata plan -o exits 4) */
  ASSERT_EQ(strata_plan_check_made(p, "x.splan"), STRATA_EINTERNAL);
  ASSERT_CONTAINS(strata_last_error(),
                  "x.splan: not written: strata made a plan it would call "
                  "corrupt, a bug in strata (please report it with the "
                  "command): the plan's sequence length is 2147483647");
  p->seq_len = 1024;
  ASSERT_OK(strata_plan_check_made(p, "x.splan"));
  p->stages[1].fwd_seconds = -INFINITY;
  ASSERT_EQ(strata_plan_encode(p, &d, &len), STRATA_EBADINPUT);
  ASSERT_CONTAINS(strata_last_error(), "stage 1 forward time is -inf");
  p->stages[1].fwd_seconds = 1e-3;
  p->stages[1].rank = 0;
  ASSERT_EQ(strata_plan_encode(p, &d, &len), STRATA_EBADINPUT);
  ASSERT_CONTAINS(strata_last_error(), "stage 1 rank is 0, not 1");
  p->stages[1].rank = 1;
  strata_free(p->cluster);
  p->cluster = strata_strdup("pod\ncurl x | sh");
  ASSERT_EQ(strata_plan_encode(p, &d, &len), STRATA_EBADINPUT);
  ASSERT_CONTAINS(strata_last_error(), "cluster name holds a control");
  strata_free(p->cluster);
  p->cluster = strata_strdup("pod");
  ASSERT_OK(strata_plan_encode(p, &d, &len));
  strata_free(d);
  strata_plan_destroy(p);
}

/* ---- d. allocation failures
 * -------------------------------------------------- */

typedef int (*plan_fn_t)(const strata_plan_t *p, const void *arg, char **out);

static int fn_decode(const strata_plan_t *p, const void *arg, char **out) {
  const strata_buf_t *file = arg;
  strata_plan_t *q = NULL;
  (void)p;
  int rc =
      strata_plan_decode((const unsigned char *)file->p, file->len, "f", &q);
  strata_plan_destroy(q);
  *out = NULL;
  return rc;
}
static int fn_encode(const strata_plan_t *p, const void *arg, char **out) {
  size_t len;
  (void)arg;
  return strata_plan_encode(p, (unsigned char **)out, &len);
}
static int fn_summary(const strata_plan_t *p, const void *a, char **out) {
  (void)a;
  return strata_plan_summary(p, out);
}
static int fn_json(const strata_plan_t *p, const void *a, char **out) {
  (void)a;
  return strata_plan_json(p, out);
}
static int fn_diff(const strata_plan_t *p, const void *a, char **out) {
  int d;
  return strata_plan_diff(p, a, 0, out, &d);
}
static int fn_diff_json(const strata_plan_t *p, const void *a, char **out) {
  int d;
  return strata_plan_diff(p, a, 1, out, &d);
}
static int fn_megatron(const strata_plan_t *p, const void *a, char **out) {
  (void)a;
  return strata_export_megatron(p, out);
}
static int fn_deepspeed(const strata_plan_t *p, const void *a, char **out) {
  (void)a;
  return strata_export_deepspeed(p, out);
}
static int fn_timeline(const strata_plan_t *p, const void *a, char **out) {
  (void)a;
  return strata_export_timeline(p, out);
}

static int fn_launch(const strata_plan_t *p, const void *a, char **out) {
  strata_export_opts_t o;
  (void)p;
  strata_export_opts_init(&o);
  o.gpus_per_node = 8;
  return strata_export_megatron_launch(a, &o, out); /* q: dp 1 */
}
static int fn_topology(const strata_plan_t *p, const void *a, char **out) {
  (void)a;
  return strata_export_deepspeed_topology(p, out);
}
static int fn_torch(const strata_plan_t *p, const void *a, char **out) {
  (void)a;
  return strata_export_torch(p, NULL, out);
}
static int fn_html(const strata_plan_t *p, const void *a, char **out) {
  (void)a;
  return strata_export_html(p, NULL, out);
}
static int fn_frameworks(const strata_plan_t *p, const void *a, char **out) {
  (void)a;
  return strata_plan_frameworks(p, out);
}

/* Fail allocation 1, 2, ... until fn succeeds; each failure must be a
 * clean STRATA_ENOMEM (ASan reports any leak). */
static long fail_each(plan_fn_t fn, const strata_plan_t *p, const void *arg) {
  long n;
  for (n = 1; n < 100000; n++) {
    char *out = NULL;
    strata_alloc_fail_at(n);
    int rc = fn(p, arg, &out);
    int failed = strata_alloc_failed();
    strata_alloc_fail_at(0);
    strata_free(out);
    if (rc == 0) {
      ASSERT(!failed);
      break;
    }
    if (rc != STRATA_ENOMEM)
      test_fail(__FILE__, __LINE__, "allocation %ld: rc %d (%s)", n, rc,
                strata_last_error());
    ASSERT(failed);
  }
  return n;
}

/* The offloads in the page's summary and, for fine-grained activation
 * offloading, the launch script's NVTE_CPU_OFFLOAD_V1 (validate_args
 * asserts it with Transformer Engine 2.10 or later); none without. */
TEST(offloads_in_exports) {
  strata_plan_t *p = hand_plan(2, 1, 8, 16, NULL);
  strata_export_opts_t o;
  char *t = NULL;
  strata_export_opts_init(&o);
  o.gpus_per_node = 8;
  ASSERT_OK(strata_export_html(p, NULL, &t));
  ASSERT(!strstr(t, "offloaded"));
  strata_free(t);
  ASSERT_OK(strata_export_megatron_launch(p, &o, &t));
  ASSERT(!strstr(t, "NVTE_CPU_OFFLOAD_V1"));
  strata_free(t);
  p->offload_layers = 3, p->host_memory_gib = 1.5;
  ASSERT_OK(strata_export_html(p, NULL, &t));
  ASSERT_CONTAINS(t, "<th class=l>offloaded</th><td>3 layers' activations "
                     "(1.50 GiB a GPU on the host)");
  strata_free(t);
  p->offload_layers = 0;
  p->offload_modules = STRATA_OFM_CORE_ATTN | STRATA_OFM_QKV_LINEAR;
  ASSERT_OK(strata_export_html(p, NULL, &t));
  ASSERT_CONTAINS(t, "the activations of qkv_linear, core_attn (1.50 GiB");
  strata_free(t);
  ASSERT_OK(strata_export_megatron_launch(p, &o, &t));
  ASSERT_CONTAINS(t, "export NVTE_CPU_OFFLOAD_V1=1\n");
  strata_free(t);
  strata_plan_destroy(p);
}

TEST(alloc_failures) {
  strata_plan_t *p = hand_plan(2, 3, 2, 12, NULL),
                *q = hand_plan(4, 2, 1, 12, NULL);
  strata_buf_t file;
  strata_buf_init(&file);
  unsigned char *d;
  size_t len;
  ASSERT_OK(strata_plan_encode(p, &d, &len));
  file.p = (char *)d, file.len = len;
  const plan_fn_t fns[] = {fn_decode,   fn_encode,    fn_summary,  fn_json,
                           fn_diff,     fn_diff_json, fn_megatron, fn_deepspeed,
                           fn_timeline, fn_launch,    fn_topology, fn_torch,
                           fn_html,     fn_frameworks};
  for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++) {
    long n = fail_each(
        fns[i], p, fns[i] == fn_decode ? (const void *)&file : (const void *)q);
    ASSERT(n > 1 && n < 100000);
  }
  strata_free(d);
  strata_plan_destroy(p);
  strata_plan_destroy(q);
}

/* ---- e. diff
 * ----------------------------------------------------------------- */

static char *diff_text(const strata_plan_t *a, const strata_plan_t *b, int json,
                       int *differs) {
  char *t = NULL;
  ASSERT_OK(strata_plan_diff(a, b, json, &t, differs));
  return t;
}

TEST(diff_identical_and_changes) {
  strata_plan_t *a = hand_plan(2, 4, 2, 16, NULL), *b = roundtrip(a);
  int differs = -1;
  char *t = diff_text(a, b, 0, &differs);
  ASSERT_EQ(differs, 0);
  ASSERT_STR_EQ(t, "plans are identical\n");
  strata_free(t);
  t = diff_text(a, b, 1, &differs);
  cJSON *j = cJSON_Parse(t);
  ASSERT(cJSON_IsTrue(cJSON_GetObjectItem(j, "identical")));
  cJSON_Delete(j);
  strata_free(t);
  strata_plan_destroy(b);

  b = hand_plan(4, 4, 1, 16, NULL); /* tp 2 -> 4, dp 2 -> 1 */
  t = diff_text(a, b, 0, &differs);
  ASSERT_EQ(differs, 1);
  ASSERT_CONTAINS(t, "tp: 2 -> 4");
  ASSERT_CONTAINS(t, "stage 0: layers 0-3 on 1x2 -> layers 0-3 on 1x4");
  strata_free(t);
  strata_plan_destroy(b);

  int split[4] = {5, 4, 4, 3};
  b = hand_plan(2, 4, 2, 16, split); /* a boundary moved */
  t = diff_text(a, b, 0, &differs);
  ASSERT_EQ(differs, 1);
  ASSERT_CONTAINS(t, "stage 0: layers 0-3 on 1x2 -> layers 0-4 on 1x2");
  ASSERT_CONTAINS(t, "stage 3: layers 12-15 on 1x2 -> layers 13-15 on 1x2");
  strata_free(t);
  strata_plan_destroy(b);

  b = roundtrip(a); /* a strategy in stages 1 and 2 */
  for (int s = 1; s <= 2; s++) {
    strata_op_choice_t *o = &b->stages[s].result->ops[1]; /* qkv */
    ASSERT_STR_EQ(o->name, "qkv");
    strata_free(o->strategy);
    o->strategy = strata_strdup("dp");
  }
  t = diff_text(a, b, 0, &differs);
  ASSERT_EQ(differs, 1);
  ASSERT_CONTAINS(t, "strategies:\n  layers 4-11: qkv: col -> dp\n");
  strata_free(t);
  t = diff_text(a, b, 1, &differs);
  j = cJSON_Parse(t);
  ASSERT(j);
  ASSERT(cJSON_IsFalse(cJSON_GetObjectItem(j, "identical")));
  ASSERT(cJSON_GetArraySize(cJSON_GetObjectItem(j, "changes")) == 1);
  cJSON_Delete(j);
  strata_free(t);
  b->step_seconds = a->step_seconds + 1;
  t = diff_text(a, b, 0, &differs);
  /* in the summary's units: ms and GiB, not seconds and bytes */
  ASSERT_CONTAINS(t, "figures:\n  step time: 1000.000 ms -> 2000.000 ms "
                     "(+1000.000 ms, +100.0%)");
  strata_free(t);
  b->peak_memory_bytes = a->peak_memory_bytes + 1024.0 * 1024 * 1024;
  t = diff_text(a, b, 0, &differs);
  ASSERT_CONTAINS(t, "peak memory: 0.00 GiB -> 1.00 GiB (+1.00 GiB)");
  strata_free(t);
  /* two configurations that differ by vpp (or cp) alone read apart */
  strata_plan_config_t ca = {0}, cb;
  char na[200], nb[200];
  ca.tp = ca.pp = ca.dp = ca.micro_batch = ca.vpp = ca.cp = ca.ep = 1;
  ca.pp = 4;
  ca.vpp = 2;
  cb = ca;
  cb.vpp = 4;
  strata_plan_config_name(&ca, na, sizeof na);
  strata_plan_config_name(&cb, nb, sizeof nb);
  ASSERT_CONTAINS(na, "vpp 2");
  ASSERT_CONTAINS(nb, "vpp 4");
  cb = ca;
  cb.cp = 2;
  strata_plan_config_name(&cb, nb, sizeof nb);
  ASSERT_CONTAINS(nb, "cp 2");
  strata_plan_destroy(b);
  strata_plan_destroy(a);
}

/* Strategies are compared once per interval between stage boundaries,
 * not once per layer: a plan claiming 10^9 layers (a damaged file, found
 * by fuzz_plan: 34 s for one diff) diffs at once, and the runs still say
 * which layers changed. */
TEST(diff_huge_layer_ranges) {
  strata_plan_t *a = hand_plan(2, 4, 2, 16, NULL), *b;
  const int big = 250000000;
  int differs = -1;
  for (int s = 0; s < a->n_stages; s++) {
    a->stages[s].layer_begin = s * big;
    a->stages[s].layer_end = (s + 1) * big;
  }
  a->layers = 4 * big;
  b = roundtrip(a);
  for (int s = 1; s <= 2; s++) {
    strata_op_choice_t *o = &b->stages[s].result->ops[1]; /* qkv */
    strata_free(o->strategy);
    o->strategy = strata_strdup("dp");
  }
  b->stages[3].layer_begin = 3 * big + 1; /* a boundary moved by one */
  b->stages[2].layer_end = 3 * big + 1;
  char *t = diff_text(a, b, 0, &differs);
  ASSERT_EQ(differs, 1);
  ASSERT_CONTAINS(t, "layers 250000000-750000000: qkv: col -> dp\n");
  strata_free(t);
  strata_plan_destroy(b);
  strata_plan_destroy(a);
}

static char *diff_tol(const strata_plan_t *a, const strata_plan_t *b,
                      double tol, int json, int *differs) {
  strata_diff_opts_t o;
  char *t = NULL;
  strata_diff_opts_init(&o);
  ASSERT(o.tolerance == 0.005);
  o.tolerance = tol;
  o.json = json;
  ASSERT_OK(strata_plan_diff_opts(a, b, &o, &t, differs));
  return t;
}

/* Figures are predictions: a drift within the tolerance (0.5 % by
 * default) is no change; beyond it, or with tolerance 0, it is. */
TEST(diff_tolerance) {
  strata_plan_t *a = hand_plan(2, 4, 2, 16, NULL), *b = roundtrip(a);
  int differs = -1;
  a->step_seconds = 2.0;
  b->step_seconds = 2.0006; /* +0.03 % */
  b->stages[1].fwd_seconds = a->stages[1].fwd_seconds * 1.004;
  char *t = diff_tol(a, b, 0.005, 0, &differs);
  ASSERT_EQ(differs, 0);
  ASSERT_STR_EQ(t, "plans are identical (2 figures moved by at most 0.5%)\n");
  strata_free(t);
  t = diff_tol(a, b, 0, 0, &differs);
  ASSERT_EQ(differs, 1);
  ASSERT_CONTAINS(t, "step time: 2000.000 ms -> 2000.600 ms");
  strata_free(t);
  t = diff_tol(a, b, 0.001, 1, &differs); /* the stage time moved 0.4 % */
  ASSERT_EQ(differs, 1);
  cJSON *j = cJSON_Parse(t);
  ASSERT(j);
  ASSERT_EQ(cJSON_GetObjectItem(j, "figures_within_tolerance")->valuedouble, 1);
  ASSERT_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(j, "changes")), 1);
  cJSON_Delete(j);
  strata_free(t);
  b->step_seconds = NAN; /* never within a tolerance */
  t = diff_tol(a, b, 0.5, 0, &differs);
  ASSERT_EQ(differs, 1);
  strata_free(t);
  strata_diff_opts_t o;
  strata_diff_opts_init(&o);
  o.tolerance = 1.5;
  ASSERT_EQ(strata_plan_diff_opts(a, b, &o, &t, &differs), STRATA_EINVAL);
  strata_plan_destroy(b);
  strata_plan_destroy(a);
}

/* ---- f. Megatron-LM
 * ------------------------------------------------------------ */

/* 1 if line is one of the lines of the reference file. */
static int in_file(const char *text, const char *line) {
  size_t n = strlen(line);
  for (const char *q = text; (q = strstr(q, line)); q += n)
    if ((q == text || q[-1] == '\n') && (q[n] == '\n' || q[n] == 0)) return 1;
  return 0;
}

static char *read_reference(const char *name) {
  char path[512], *text = NULL;
  size_t len;
  snprintf(path, sizeof path, "%s/reference/%s", test_shared_dir(), name);
  ASSERT_OK(strata_file_read(path, 0, &text, &len));
  return text;
}

/* Every "--flag" of the export is a line of megatron_flags.txt. */
static void check_flags(const char *args) {
  char *ref = read_reference("megatron_flags.txt"), flag[128];
  int n = 0;
  for (const char *q = args; (q = strstr(q, "--")); q += 2) {
    size_t k = strcspn(q, " \\\n");
    ASSERT(k < sizeof flag);
    memcpy(flag, q, k);
    flag[k] = 0;
    if (!in_file(ref, flag))
      test_fail(__FILE__, __LINE__, "flag %s is not in the reference", flag);
    n++;
  }
  ASSERT(n >= 10);
  strata_free(ref);
}

static char *megatron(const strata_plan_t *p) {
  char *t = NULL;
  ASSERT_OK(strata_export_megatron(p, &t));
  check_flags(t);
  return t;
}

TEST(megatron_gpt) {
  strata_plan_t *p = hand_plan(2, 4, 2, 16, NULL);
  char *t = megatron(p);
  ASSERT_CONTAINS(t, "--tensor-model-parallel-size 2 \\\n");
  ASSERT_CONTAINS(t, "--pipeline-model-parallel-size 4 \\\n");
  ASSERT_CONTAINS(t, "--num-layers 16 \\\n");
  ASSERT_CONTAINS(t, "--sequence-parallel");
  ASSERT_CONTAINS(t, "--use-distributed-optimizer");
  ASSERT_CONTAINS(t, "--recompute-granularity selective");
  ASSERT_CONTAINS(t, "--global-batch-size 16");
  ASSERT(!strstr(t, "--swiglu") && !strstr(t, "first-pipeline"));
  ASSERT(t[strlen(t) - 1] == '\n' && t[strlen(t) - 2] != '\\');
  strata_free(t);
  p->recompute = STRATA_RECOMPUTE_FULL;
  t = megatron(p);
  ASSERT_CONTAINS(t, "--recompute-granularity full \\\n--recompute-method "
                     "uniform \\\n--recompute-num-layers 1");
  strata_free(t);
  p->precision_aware_optimizer = 1, p->optimizer_offload = 0.75;
  t = megatron(p);
  ASSERT_CONTAINS(t, "--use-precision-aware-optimizer \\\n"
                     "--optimizer-cpu-offload \\\n"
                     "--optimizer-offload-fraction 0.75 \\\n"
                     "--overlap-cpu-optimizer-d2h-h2d");
  strata_free(t);
  /* a fraction written in the fewest digits that read back as it */
  p->optimizer_offload = 0.95;
  t = megatron(p);
  ASSERT_CONTAINS(t, "--optimizer-offload-fraction 0.95 \\\n");
  strata_free(t);
  p->precision_aware_optimizer = 0, p->optimizer_offload = 0;
  /* fine-grained activation offloading: the switch and the modules */
  p->offload_modules = STRATA_OFM_CORE_ATTN | STRATA_OFM_ATTN_PROJ;
  p->recompute = STRATA_RECOMPUTE_NONE; /* full: refused */
  t = megatron(p);
  ASSERT_CONTAINS(t, "--fine-grained-activation-offloading \\\n"
                     "--offload-modules core_attn attn_proj \\\n");
  strata_free(t);
  p->offload_modules = 0, p->recompute = STRATA_RECOMPUTE_FULL;
  p->recompute_method = STRATA_RECOMPUTE_BLOCK, p->recompute_layers = 3;
  t = megatron(p);
  ASSERT_CONTAINS(t, "--recompute-granularity full \\\n--recompute-method "
                     "block \\\n--recompute-num-layers 3");
  strata_free(t);
  strata_plan_destroy(p);
}

TEST(megatron_llama_uneven) {
  int split[4] = {3, 4, 4, 5};
  strata_plan_t *p = hand_plan(4, 4, 1, 16, split);
  snprintf(p->family, sizeof p->family, "llama");
  p->heads = 8, p->kv_heads = 4, p->flash_attention = 1, p->dropout = 0;
  p->untie_embeddings = 1;
  char *t = megatron(p);
  ASSERT_CONTAINS(t, "--group-query-attention \\\n--num-query-groups 4");
  ASSERT_CONTAINS(t, "--swiglu");
  ASSERT_CONTAINS(t, "--normalization RMSNorm");
  ASSERT_CONTAINS(t, "--position-embedding-type rope");
  ASSERT_CONTAINS(t, "--disable-bias-linear");
  ASSERT_CONTAINS(t, "--untie-embeddings-and-output-weights");
  /* flash attention: Megatron-LM's default backend, nothing to ask */
  ASSERT(!strstr(t, "--use-flash-attn") && !strstr(t, "--attention-backend"));
  ASSERT_CONTAINS(t, "--decoder-first-pipeline-num-layers 3");
  ASSERT_CONTAINS(t, "--decoder-last-pipeline-num-layers 5");
  ASSERT_CONTAINS(t, "--attention-dropout 0");
  strata_free(t);
  strata_plan_destroy(p);
}

static void expect_refusal(strata_plan_t *p, const char *why) {
  char *t = NULL;
  ASSERT_EQ(strata_export_megatron(p, &t), STRATA_EUNSUPPORTED);
  ASSERT(t == NULL);
  ASSERT_CONTAINS(strata_last_error(), why);
  strata_plan_destroy(p);
}

TEST(megatron_rules) {
  strata_plan_t *p = hand_plan(2, 2, 2, 8, NULL);
  p->devices = 10;
  expect_refusal(p, "world size 10 is not tp 2 x pp 2 x dp 2");
  p = hand_plan(4, 2, 1, 8, NULL);
  p->heads = 6;
  /* the framework rules are the rulebook's words (rules/rules.c) */
  expect_refusal(p, "megatron export: the number of attention heads (6) must "
                    "be divisible by the tensor-parallel size 4");
  p = hand_plan(4, 2, 1, 8, NULL);
  p->heads = 8, p->kv_heads = 2;
  expect_refusal(p, "the number of query groups (2) must be divisible by the "
                    "tensor-parallel size 4");
  p = hand_plan(2, 2, 2, 8, NULL);
  p->global_batch = 15;
  expect_refusal(p, "global batch size (15) is not divisible by micro batch "
                    "size (1) times data parallel size (2)");
  p = hand_plan(1, 2, 1, 8, NULL);
  p->sequence_parallel = 1;
  expect_refusal(p, "sequence parallelism needs a tensor-parallel size above "
                    "1");
  p = hand_plan(2, 3, 1, 12, NULL);
  p->stages[1].gpus_per_node = 4;
  expect_refusal(p, "stage 1 runs on 4 devices, not tp x cp = 2");
  p = hand_plan(2, 2, 1, 8, NULL);
  p->megatron = 0;
  expect_refusal(p, "free-mode plan");
  /* stages of their own sizes: Megatron-LM's explicit layout, and no
   * first/last counts beside it (Megatron takes one or the other) */
  int odd[4] = {3, 5, 4, 4};
  char *t = NULL;
  p = hand_plan(2, 4, 1, 16, odd);
  ASSERT_OK(strata_export_megatron(p, &t));
  ASSERT_CONTAINS(t, "--pipeline-model-parallel-layout 'Et*3|t*5|t*4|t*4L' \\");
  ASSERT(!strstr(t, "--decoder-first-pipeline-num-layers"));
  ASSERT(!strstr(t, "--decoder-last-pipeline-num-layers"));
  strata_free(t);
  strata_plan_destroy(p);
  /* interleaved with uneven ranks: pp 2 names the first rank only (the
   * last is Megatron-LM's one middle rank: with none it divides by 0),
   * and beyond 2 the first is named even when it equals the middle */
  int two[4] = {2, 1, 2, 1}, four[8] = {1, 1, 1, 2, 1, 1, 1, 2};
  for (int k = 0; k < 2; k++) {
    int pp = k ? 4 : 2;
    p = hand_plan(2, 2 * pp, 1, k ? 10 : 6, k ? four : two);
    p->pp = pp, p->vpp = 2, p->devices = 2 * pp, p->n_micro = 2 * pp;
    p->global_batch = 2 * pp;
    for (int s = 0; s < p->n_stages; s++)
      p->stages[s].rank = s % pp;
    ASSERT_OK(strata_export_megatron(p, &t));
    ASSERT_CONTAINS(t, k ? "--decoder-first-pipeline-num-layers 2"
                         : "--decoder-first-pipeline-num-layers 4");
    if (k)
      ASSERT_CONTAINS(t, "--decoder-last-pipeline-num-layers 4");
    else
      ASSERT(!strstr(t, "--decoder-last-pipeline-num-layers"));
    ASSERT_CONTAINS(t, "--num-virtual-stages-per-pipeline-rank 2");
    ASSERT(!strstr(t, "--num-layers-per-virtual-pipeline-stage"));
    strata_free(t);
    strata_plan_destroy(p);
  }
  /* multi-token prediction: Megatron-LM's flag, and its 'm' on the last
   * stage of an explicit layout */
  p = hand_plan(2, 4, 1, 16, odd);
  p->mtp_layers = 1;
  ASSERT_OK(strata_export_megatron(p, &t));
  ASSERT_CONTAINS(t, "--pipeline-model-parallel-layout 'Et*3|t*5|t*4|t*4mL'");
  ASSERT_CONTAINS(t, "--mtp-num-layers 1");
  strata_free(t);
  ASSERT_EQ(strata_export_deepspeed(p, &t), STRATA_EUNSUPPORTED);
  ASSERT_CONTAINS(strata_last_error(), "multi-token prediction");
  snprintf(p->family, sizeof p->family, "llama"); /* torchtitan's */
  ASSERT_EQ(strata_export_torchtitan(p, &t), STRATA_EUNSUPPORTED);
  ASSERT_CONTAINS(strata_last_error(), "multi-token prediction");
  strata_plan_destroy(p);
  /* chunks of no layer: the embedding's and the loss's alone, written
   * without a "t*0" (Megatron-LM's layout; torchtitan's model parts:
   * tests/cli/cases/export_torchtitan_embedding_alone) */
  int alone[4] = {0, 8, 8, 0};
  p = hand_plan(2, 4, 1, 16, alone);
  ASSERT_OK(strata_export_megatron(p, &t));
  ASSERT_CONTAINS(t, "--pipeline-model-parallel-layout 'E|(t*8|)*2L'");
  strata_free(t);
  strata_plan_destroy(p);
  /* a layout longer than any fixed buffer: 600 stages of 1 and 2 layers
   * in turn, written whole */
  static int turns[600];
  for (int s = 0; s < 600; s++)
    turns[s] = 1 + s % 2;
  p = hand_plan(1, 600, 1, 900, turns);
  ASSERT_OK(strata_export_megatron(p, &t));
  const char *lay = strstr(t, "--pipeline-model-parallel-layout '");
  ASSERT(lay != NULL);
  const char *end = strchr(lay + 34, '\'');
  ASSERT(end != NULL && end[-1] == 'L');
  int bars = 0;
  for (const char *c = lay; c < end; c++)
    bars += *c == '|';
  ASSERT_EQ(bars, 599);
  strata_free(t);
  strata_plan_destroy(p);
  p = hand_plan(2, 2, 1, 8, NULL);
  p->stages[1].layer_begin = 5;
  expect_refusal(p, "not a split of the model in order");
  p = hand_plan(2, 2, 1, 8, NULL);
  p->layers = 10;
  expect_refusal(p, "the stages hold 8 layers, the model has 10");
}

/* ---- g. DeepSpeed
 * --------------------------------------------------------------- */

/* The keys of section [name] of deepspeed_keys.txt, one per line. */
static int ds_key(const char *ref, const char *section, const char *key) {
  char head[96];
  snprintf(head, sizeof head, "[%s]\n", section);
  const char *s = strstr(ref, head);
  if (!s) return 0;
  s += strlen(head);
  const char *e = strstr(s, "\n[");
  size_t n = strlen(key);
  for (const char *q = s; (q = strstr(q, key)) && (!e || q < e); q += n)
    if (q[-1] == '\n' && q[n] == '\n') return 1;
  return 0;
}

/* Fields of a top-level section the reference names but does not list:
 * data_types.grad_accum_dtype, read by DeepSpeedConfig (runtime/config.py,
 * get_data_types_params; the key is runtime/constants.py's
 * GRAD_ACCUM_DTYPE). */
static int ds_field(const char *section, const char *key) {
  return !strcmp(section, "data_types") && !strcmp(key, "grad_accum_dtype");
}

static cJSON *deepspeed(const strata_plan_t *p) {
  char *t = NULL, *ref = read_reference("deepspeed_keys.txt");
  ASSERT_OK(strata_export_deepspeed(p, &t));
  cJSON *j = cJSON_Parse(t);
  ASSERT(j);
  for (cJSON *k = j->child; k; k = k->next) {
    if (!ds_key(ref, "top-level", k->string))
      test_fail(__FILE__, __LINE__, "key %s is not in the reference",
                k->string);
    for (cJSON *x = cJSON_IsObject(k) ? k->child : NULL; x; x = x->next)
      if (!ds_key(ref, k->string, x->string) && !ds_field(k->string, x->string))
        test_fail(__FILE__, __LINE__, "key %s.%s is not in the reference",
                  k->string, x->string);
  }
  strata_free(ref);
  strata_free(t);
  return j;
}

static int num(const cJSON *o, const char *k) {
  const cJSON *x = cJSON_GetObjectItem(o, k);
  ASSERT(cJSON_IsNumber(x));
  return x->valueint;
}

TEST(deepspeed_config) {
  strata_plan_t *p = hand_plan(2, 4, 3, 16, NULL);
  cJSON *j = deepspeed(p);
  ASSERT_EQ(num(j, "train_batch_size"), 24);
  ASSERT_EQ(num(j, "train_batch_size"),
            num(j, "train_micro_batch_size_per_gpu") *
                num(j, "gradient_accumulation_steps") * p->dp);
  ASSERT_EQ(num(cJSON_GetObjectItem(j, "zero_optimization"), "stage"), 1);
  ASSERT(cJSON_IsTrue(
      cJSON_GetObjectItem(cJSON_GetObjectItem(j, "bf16"), "enabled")));
  /* ZeRO 1 accumulates in fp32 (BF16_Optimizer, as the memory counts) */
  const cJSON *dt = cJSON_GetObjectItem(j, "data_types");
  ASSERT(cJSON_IsString(cJSON_GetObjectItem(dt, "grad_accum_dtype")));
  ASSERT_STR_EQ(cJSON_GetObjectItem(dt, "grad_accum_dtype")->valuestring,
                "fp32");
  /* the saved inputs whole, as the memory counts them (tp 2 here) */
  ASSERT_EQ(p->tp, 2);
  ASSERT(cJSON_IsFalse(
      cJSON_GetObjectItem(cJSON_GetObjectItem(j, "activation_checkpointing"),
                          "partition_activations")));
  /* the stage count (recorded: PipelineModule takes it as an argument)
   * and the boundary as costed: whole (no scatter/gather); selective
   * recompute checkpoints no whole layer */
  const cJSON *pl = cJSON_GetObjectItem(j, "pipeline");
  ASSERT_EQ(num(pl, "stages"), p->pp);
  ASSERT(cJSON_IsFalse(cJSON_GetObjectItem(pl, "pipe_partitioned")));
  ASSERT(cJSON_IsFalse(cJSON_GetObjectItem(pl, "grad_partitioned")));
  ASSERT(!cJSON_GetObjectItem(pl, "activation_checkpoint_interval"));
  cJSON_Delete(j);
  p->scatter_gather = 1; /* DeepSpeed's default: split over the tp ranks */
  j = deepspeed(p);
  pl = cJSON_GetObjectItem(j, "pipeline");
  ASSERT(cJSON_IsTrue(cJSON_GetObjectItem(pl, "pipe_partitioned")));
  ASSERT(cJSON_IsTrue(cJSON_GetObjectItem(pl, "grad_partitioned")));
  cJSON_Delete(j);
  /* a partition method given: the split it gave, recorded in the config
   * and passed to PipelineModule */
  p->ds_partition = STRATA_DS_TYPE_TRANSFORMER_EMBEDDING;
  j = deepspeed(p);
  ASSERT_STR_EQ(
      cJSON_GetObjectItem(cJSON_GetObjectItem(j, "pipeline"), "partition")
          ->valuestring,
      "type:transformer|embedding");
  cJSON_Delete(j);
  {
    char *py = NULL;
    ASSERT_OK(strata_export_deepspeed_topology(p, &py));
    ASSERT_CONTAINS(py, "partition_method=\"type:transformer|embedding\"");
    strata_free(py);
  }
  p->ds_partition = 0;
  p->recompute = STRATA_RECOMPUTE_FULL; /* the engine's interval: 1 layer */
  j = deepspeed(p);
  ASSERT_EQ(
      num(cJSON_GetObjectItem(j, "pipeline"), "activation_checkpoint_interval"),
      1);
  cJSON_Delete(j);
  /* ZeRO-3 without pipelining is fine; with pp > 1 it is refused */
  strata_plan_destroy(p);
  p = hand_plan(8, 1, 2, 4, NULL);
  p->zero_stage = 3, p->recompute = STRATA_RECOMPUTE_NONE;
  p->heads = p->kv_heads = 8; /* divisible by tp 8 (Megatron-DeepSpeed's) */
  j = deepspeed(p);
  ASSERT_EQ(num(cJSON_GetObjectItem(j, "zero_optimization"), "stage"), 3);
  ASSERT(!cJSON_GetObjectItem(j, "data_types"));
  ASSERT(!cJSON_GetObjectItem(j, "activation_checkpointing"));
  ASSERT(!cJSON_GetObjectItem(j, "pipeline")); /* pp 1 */
  cJSON_Delete(j);
  strata_plan_destroy(p);
  p = hand_plan(2, 2, 2, 8, NULL);
  p->zero_stage = 2;
  char *t = NULL;
  ASSERT_EQ(strata_export_deepspeed(p, &t), STRATA_EUNSUPPORTED);
  /* the rulebook's words, as strata estimate says them */
  ASSERT_CONTAINS(strata_last_error(), "its pipeline engine supports ZeRO "
                                       "stage 0 and 1");
  p->zero_stage = 1, p->global_batch = 17;
  ASSERT_EQ(strata_export_deepspeed(p, &t), STRATA_EUNSUPPORTED);
  ASSERT_CONTAINS(strata_last_error(), "global batch size (17)");
  /* without ZeRO DeepSpeed's bf16 keeps no fp32 master weights */
  p->global_batch = 16, p->zero_stage = 0;
  ASSERT_EQ(strata_export_deepspeed(p, &t), STRATA_EUNSUPPORTED);
  ASSERT_CONTAINS(strata_last_error(), "--zero 1 keeps them");
  strata_plan_destroy(p);
}

/* ---- g2. launch script, topology, torch, frameworks
 * ---------------------------------------------- */

static char *launch(const strata_plan_t *p, int gpn) {
  strata_export_opts_t o;
  char *t = NULL;
  strata_export_opts_init(&o);
  o.gpus_per_node = gpn;
  ASSERT_OK(strata_export_megatron_launch(p, &o, &t));
  return t;
}

TEST(launch_script) {
  strata_plan_t *p = hand_plan(2, 2, 1, 8, NULL);
  char *t = launch(p, 8), *u = NULL;
  ASSERT_CONTAINS(t, "#!/usr/bin/env bash\n");
  ASSERT_CONTAINS(t, "export CUDA_DEVICE_MAX_CONNECTIONS=1\n");
  ASSERT_CONTAINS(t, "NNODES=1\nGPUS_PER_NODE=4\n");
  ASSERT_CONTAINS(t, "\"$MEGATRON_LM/pretrain_gpt.py\"");
  ASSERT_CONTAINS(t, "--tokenizer-type GPT2BPETokenizer");
  ASSERT_CONTAINS(t, "TRAIN_ITERS=${TRAIN_ITERS:?");
  ASSERT_CONTAINS(t, "--lr \"$LR\"");
  char *args = strata_strdup(strstr(t, "PLAN_ARGS=(") + 11);
  *strstr(args, "\n)\n") = 0; /* the plan's flags only */
  check_flags(args);
  strata_free(args);
  strata_free(t);
  /* LLaMA 3's RoPE base; BERT's script and tokenizer; tp 1 needs no env */
  snprintf(p->family, sizeof p->family, "llama");
  p->vocab = 128256;
  t = launch(p, 8);
  ASSERT_CONTAINS(t, "--rotary-base 500000");
  ASSERT_CONTAINS(t, "--tokenizer-type HuggingFaceTokenizer");
  strata_free(t);
  strata_plan_destroy(p);
  p = hand_plan(1, 1, 8, 4, NULL);
  snprintf(p->family, sizeof p->family, "bert");
  t = launch(p, 8);
  ASSERT_CONTAINS(t, "\"$MEGATRON_LM/examples/bert/pretrain_bert.py\"");
  ASSERT_CONTAINS(t, "--tokenizer-type BertWordPieceLowerCase");
  ASSERT_CONTAINS(t, "--bert-no-binary-head");
  ASSERT(!strstr(t, "CUDA_DEVICE_MAX_CONNECTIONS") && !strstr(t, "MOCK"));
  strata_free(t);
  /* refused: unknown node shape, partial nodes, another rank order */
  strata_export_opts_t o;
  strata_export_opts_init(&o);
  ASSERT_EQ(strata_export_megatron_launch(p, &o, &u), STRATA_EUNSUPPORTED);
  ASSERT_CONTAINS(strata_last_error(),
                  "give --cluster SPEC or --gpus-per-node");
  o.gpus_per_node = 6;
  ASSERT_EQ(strata_export_megatron_launch(p, &o, &u), STRATA_EUNSUPPORTED);
  ASSERT_CONTAINS(strata_last_error(), "do not fill whole nodes of 6");
  strata_plan_destroy(p);
  p = hand_plan(2, 2, 2, 8, NULL); /* first_rank s x tp: not Megatron's */
  o.gpus_per_node = 8;
  ASSERT_EQ(strata_export_megatron_launch(p, &o, &u), STRATA_EUNSUPPORTED);
  ASSERT_CONTAINS(strata_last_error(), "Megatron-LM's rank order");
  ASSERT(u == NULL);
  strata_plan_destroy(p);
}

TEST(deepspeed_refusals_and_topology) {
  strata_plan_t *p = hand_plan(2, 3, 1, 12, NULL);
  char *t = NULL;
  p->stages[1].gpus_per_node = 4, p->devices = 8; /* stages of 2, 4, 2 */
  ASSERT_EQ(strata_export_deepspeed(p, &t), STRATA_EUNSUPPORTED);
  ASSERT_CONTAINS(strata_last_error(), "stage 1 runs on 4 devices");
  ASSERT_OK(strata_plan_frameworks(p, &t));
  ASSERT_CONTAINS(t, "Megatron-LM: no -- stage 1 runs on 4 devices");
  ASSERT_CONTAINS(t, "DeepSpeed pipeline engine: no -- stage 1 runs on 4");
  ASSERT_CONTAINS(t, "PyTorch DTensor: no -- stage 1 runs on 4 devices");
  strata_free(t);
  strata_plan_destroy(p);
  p = hand_plan(2, 3, 1, 12, NULL);
  p->devices = 8, p->dp = 1; /* 3 stages do not divide 8 GPUs */
  ASSERT_EQ(strata_export_deepspeed(p, &t), STRATA_EUNSUPPORTED);
  ASSERT_CONTAINS(strata_last_error(), "do not divide the world of 8");
  strata_plan_destroy(p);
  p = hand_plan(2, 2, 2, 8, NULL);
  ASSERT_OK(strata_export_deepspeed_topology(p, &t));
  ASSERT_CONTAINS(t, "PipeModelDataParallelTopology(num_pp=PP, num_mp=TP, "
                     "num_dp=DP)");
  ASSERT_CONTAINS(t, "TP, PP, DP = 2, 2, 2\n");
  strata_free(t);
  p->megatron = 0; /* free mode with tensor parallelism */
  ASSERT_EQ(strata_export_deepspeed(p, &t), STRATA_EUNSUPPORTED);
  ASSERT_CONTAINS(strata_last_error(), "strata export torch");
  strata_plan_destroy(p);
}

/* torchtitan: LLaMA to llama3 and Qwen 3 to qwen3 by their flavors' sizes
 * (qwen3's head of 128, tied up to 4B); qwen3 has no pipeline split. */
static strata_plan_t *qwen3_8b(int tp, int pp, int dp) {
  strata_plan_t *p = hand_plan(tp, pp, dp, 36, NULL);
  snprintf(p->family, sizeof p->family, "qwen3");
  p->hidden = 4096, p->heads = 32, p->kv_heads = 8, p->ffn = 12288;
  p->head_dim = 128, p->qk_norm = 1, p->untie_embeddings = 1;
  return p;
}

TEST(torchtitan_models) {
  strata_plan_t *p = qwen3_8b(2, 1, 4);
  char *t = NULL;
  ASSERT_OK(strata_export_torchtitan(p, &t));
  ASSERT_CONTAINS(t, "name = \"qwen3\"\nflavor = \"8B\"\n");
  ASSERT_CONTAINS(t, "tensor_parallel_degree = 2\n");
  strata_free(t);
  /* 4B is tied: an untied head of its sizes has no flavor */
  p->layers = 36, p->hidden = 2560, p->ffn = 9728;
  ASSERT_EQ(strata_export_torchtitan(p, &t), STRATA_EUNSUPPORTED);
  ASSERT_CONTAINS(strata_last_error(), "no qwen3 flavor");
  ASSERT_CONTAINS(strata_last_error(), "an untied head");
  p->untie_embeddings = 0;
  ASSERT_OK(strata_export_torchtitan(p, &t));
  ASSERT_CONTAINS(t, "flavor = \"4B\"");
  strata_free(t);
  p->qk_norm = 0;
  ASSERT_EQ(strata_export_torchtitan(p, &t), STRATA_EUNSUPPORTED);
  ASSERT_CONTAINS(strata_last_error(), "no q/k norms");
  strata_plan_destroy(p);
  p = qwen3_8b(2, 2, 2);
  ASSERT_EQ(strata_export_torchtitan(p, &t), STRATA_EUNSUPPORTED);
  ASSERT_CONTAINS(strata_last_error(), "re-plan with --pp 1");
  strata_plan_destroy(p);
  /* llama3 8B: the same sizes as before; with q/k norms it is not one */
  p = hand_plan(2, 2, 2, 32, NULL);
  snprintf(p->family, sizeof p->family, "llama");
  p->hidden = 4096, p->heads = 32, p->kv_heads = 8, p->ffn = 14336;
  p->untie_embeddings = 1;
  ASSERT_OK(strata_export_titan(p, &t));
  ASSERT_CONTAINS(t, "STRATA_MODEL = \"llama3\"\nSTRATA_FLAVOR = \"8B\"\n");
  ASSERT_CONTAINS(t, "model_spec = model_registry(\"8B\")\n");
  strata_free(t);
  p->qk_norm = 1;
  ASSERT_EQ(strata_export_titan(p, &t), STRATA_EUNSUPPORTED);
  ASSERT_CONTAINS(strata_last_error(), "q/k norms");
  ASSERT_EQ(strata_export_torchtitan(p, &t), STRATA_EUNSUPPORTED);
  ASSERT_CONTAINS(strata_last_error(), "q/k norms");
  strata_plan_destroy(p);
}

/* The torchtitan header and description state every degree, cp among
 * them (they said "tp 2, pp 2, dp 1" of a cp 2 plan).  RoPE: the Python
 * configuration writes the plan's into the flavor's RoPE configs; the
 * TOML form's llama3 flavors scale as Llama 3.1 in code, so it takes
 * that scaling and refuses a model without (it did the reverse). */
TEST(torchtitan_degrees_and_rope) {
  strata_plan_t *p = hand_plan(2, 2, 2, 32, NULL);
  strata_rope_scaling_t *r = &p->rope_scaling;
  char *t = NULL;
  snprintf(p->family, sizeof p->family, "llama");
  p->hidden = 4096, p->heads = 32, p->kv_heads = 8, p->ffn = 14336;
  p->untie_embeddings = 1;
  p->cp = 2, p->dp = 1;                 /* the same 8 GPUs */
  for (int s = 0; s < p->n_stages; s++) /* tp x cp devices a stage */
    p->stages[s].gpus_per_node = 4, p->stages[s].first_rank = 4 * s;
  ASSERT_OK(strata_export_titan(p, &t));
  ASSERT_CONTAINS(t, "GPUs; tp 2, cp 2, pp 2, dp 1.\n");
  ASSERT_CONTAINS(t, "context_parallel_degree=2,\n");
  ASSERT_CONTAINS(t, "rope.scaling = \"none\"\n");
  strata_free(t);
  ASSERT_EQ(strata_export_torchtitan(p, &t), STRATA_EUNSUPPORTED);
  ASSERT_CONTAINS(strata_last_error(), "has no RoPE scaling");
  r->type = STRATA_ROPE_SCALING_LLAMA3;
  r->factor = 8, r->low = 1, r->high = 4, r->original = 8192;
  ASSERT_OK(strata_export_torchtitan(p, &t));
  ASSERT_CONTAINS(t, "GPUs; tp 2, cp 2, pp 2, dp 1.\n");
  ASSERT_CONTAINS(t, "description = \"strata plan: ");
  ASSERT_CONTAINS(t, ", tp 2, cp 2, pp 2, dp 1\"\n");
  ASSERT_CONTAINS(t, "context_parallel_degree = 2\n");
  strata_free(t);
  ASSERT_OK(strata_export_titan(p, &t));
  ASSERT_CONTAINS(t, "rope.scaling = \"llama\"\n"
                     "        rope.scaling_factor = 8\n"
                     "        rope.low_freq_factor = 1\n"
                     "        rope.high_freq_factor = 4\n"
                     "        rope.original_max_position_embeddings = 8192\n");
  strata_free(t);
  r->low = 2; /* not the flavors' */
  ASSERT_EQ(strata_export_torchtitan(p, &t), STRATA_EUNSUPPORTED);
  ASSERT_OK(strata_export_titan(p, &t));
  ASSERT_CONTAINS(t, "rope.low_freq_factor = 2\n");
  strata_free(t);
  r->type = STRATA_ROPE_SCALING_YARN;
  ASSERT_EQ(strata_export_titan(p, &t), STRATA_EUNSUPPORTED);
  ASSERT_CONTAINS(strata_last_error(), "RoPE scaling other than Llama 3.1's");
  r->type = STRATA_ROPE_SCALING_NONE;
  p->rope_theta = 10000;
  ASSERT_EQ(strata_export_torchtitan(p, &t), STRATA_EUNSUPPORTED);
  ASSERT_OK(strata_export_titan(p, &t));
  ASSERT_CONTAINS(t, "rope.theta = 10000\n");
  strata_free(t);
  strata_plan_destroy(p);
  strata_error_clear();
}

/* The batch: a forward of one micro-batch on a data-parallel rank (the
 * TOML form's local_batch_size was the global batch over dp, every
 * micro-batch in one forward); with a pipeline the step's micro-batches. */
TEST(torchtitan_batch) {
  strata_plan_t *p = hand_plan(2, 1, 4, 32, NULL);
  strata_rope_scaling_t *r = &p->rope_scaling;
  char *t = NULL;
  snprintf(p->family, sizeof p->family, "llama");
  p->hidden = 4096, p->heads = 32, p->kv_heads = 8, p->ffn = 14336;
  p->untie_embeddings = 1, p->micro_batch = 2, p->global_batch = 64;
  r->type = STRATA_ROPE_SCALING_LLAMA3;
  r->factor = 8, r->low = 1, r->high = 4, r->original = 8192;
  ASSERT_OK(strata_export_titan(p, &t));
  ASSERT_CONTAINS(t, "num_tokens_per_microbatch_per_dp_rank=2 * 128,\n");
  ASSERT_CONTAINS(t, "num_tokens_per_train_step=64 * 128,\n");
  ASSERT(!strstr(t, "num_pp_microbatches"));
  strata_free(t);
  ASSERT_OK(strata_export_torchtitan(p, &t));
  ASSERT_CONTAINS(t, "local_batch_size = 2  #");
  ASSERT_CONTAINS(t, "global_batch_size = 64\n");
  strata_free(t);
  strata_plan_destroy(p);
  p = hand_plan(2, 2, 2, 32, NULL);
  snprintf(p->family, sizeof p->family, "llama");
  p->hidden = 4096, p->heads = 32, p->kv_heads = 8, p->ffn = 14336;
  p->untie_embeddings = 1;
  ASSERT_OK(strata_export_titan(p, &t)); /* global 16, dp 2, micro 1 */
  ASSERT_CONTAINS(t, "num_pp_microbatches=8,\n");
  ASSERT_CONTAINS(t, "num_tokens_per_microbatch_per_dp_rank=1 * 128,\n");
  ASSERT_CONTAINS(t, "\"norm\", \"lm_head\"],\n            ],\n");
  strata_free(t);
  strata_plan_destroy(p);
  strata_error_clear();
}

/* The model's own settings reach the exports: its trained context, not
 * the sequence (and never below it), the router's training as its config
 * states it (Megatron-LM's auxiliary loss is off unless told), Llama
 * 3.1's RoPE scaling, which torchtitan's llama3 applies itself. */
TEST(exports_carry_model_settings) {
  strata_plan_t *p = hand_plan(2, 2, 2, 8, NULL);
  char *t = NULL;
  snprintf(p->family, sizeof p->family, "llama");
  p->max_position = 131072;
  ASSERT_OK(strata_export_megatron(p, &t));
  ASSERT_CONTAINS(t, "--seq-length 128 \\\n--max-position-embeddings 131072");
  ASSERT(!strstr(t, "--moe-aux-loss-coeff"));
  strata_free(t);
  p->experts = 8, p->topk = 2, p->moe_ffn = 512, p->moe_layers = 8;
  p->ep = 1, p->etp = 2;
  ASSERT_OK(strata_export_megatron(p, &t));
  ASSERT(!strstr(t, "--moe-aux-loss-coeff")); /* none stated: none */
  ASSERT(!strstr(t, "--moe-router-pre-softmax"));
  strata_free(t);
  p->router_aux_loss = 0.02, p->router_pre_softmax = 1;
  p->router_jitter = 0.01;
  p->router_expert_bias = 1; /* a softmax router: no balancing bias */
  ASSERT_OK(strata_export_megatron(p, &t));
  ASSERT_CONTAINS(t, "--moe-router-load-balancing-type aux_loss \\\n"
                     "--moe-aux-loss-coeff 0.02 \\\n");
  ASSERT_CONTAINS(t, "--moe-router-pre-softmax");
  ASSERT_CONTAINS(t, "--moe-input-jitter-eps 0.01");
  ASSERT(!strstr(t, "--moe-router-enable-expert-bias"));
  strata_free(t);
  p->router_sigmoid = 1, p->router_seq_aux = 1; /* DeepSeek-V3's */
  ASSERT_OK(strata_export_megatron(p, &t));
  ASSERT_CONTAINS(t, "--moe-router-load-balancing-type seq_aux_loss");
  ASSERT_CONTAINS(t, "--moe-router-enable-expert-bias");
  ASSERT(!strstr(t, "--moe-router-pre-softmax")); /* sigmoid scores */
  strata_free(t);
  /* the family named in refusals: a mixture of experts by its model's
   * name, a model of no family said so (it read "has no  model") */
  ASSERT_EQ(strata_export_torchtitan(p, &t), STRATA_EUNSUPPORTED);
  ASSERT_STR_EQ(strata_last_error(),
                "torchtitan export: the plan's model (gpt-tiny) has experts "
                "(a mixture of experts), and torchtitan's llama3 and qwen3 "
                "are dense models without them; export it for Megatron-LM");
  p->family[0] = '\0';
  ASSERT_EQ(strata_export_torchtitan(p, &t), STRATA_EUNSUPPORTED);
  ASSERT_CONTAINS(strata_last_error(), "torchtitan has no model for a model "
                                       "of no family (a trace file");
  ASSERT_EQ(strata_export_megatron(p, &t), STRATA_EUNSUPPORTED);
  ASSERT_CONTAINS(strata_last_error(), "no training script here for a model "
                                       "of no family");
  ASSERT(!strstr(strata_last_error(), "''"));
  strata_plan_destroy(p);
  /* Llama 3.1's scaling is torchtitan llama3's own */
  p = hand_plan(2, 2, 2, 32, NULL);
  snprintf(p->family, sizeof p->family, "llama");
  p->hidden = 4096, p->heads = 32, p->kv_heads = 8, p->ffn = 14336;
  p->untie_embeddings = 1;
  p->rope_scaling = (strata_rope_scaling_t){.type = STRATA_ROPE_SCALING_LLAMA3,
                                            .factor = 8,
                                            .low = 1,
                                            .high = 4,
                                            .original = 8192};
  ASSERT_OK(strata_export_torchtitan(p, &t));
  ASSERT_CONTAINS(t, "flavor = \"8B\"");
  strata_free(t);
  p->rope_scaling.factor = 16;
  ASSERT_EQ(strata_export_torchtitan(p, &t), STRATA_EUNSUPPORTED);
  ASSERT_CONTAINS(strata_last_error(),
                  "has llama3 RoPE scaling and the llama3 flavors");
  strata_plan_destroy(p);
  strata_error_clear();
}

/* Megatron-LM's RoPE scaling flags fix what they do not take: other
 * figures are refused with the reason. */
TEST(megatron_rope_scaling_refusals) {
  strata_plan_t *p = hand_plan(2, 2, 2, 8, NULL);
  strata_rope_scaling_t *r = &p->rope_scaling;
  char *t = NULL;
  snprintf(p->family, sizeof p->family, "llama");
  r->type = STRATA_ROPE_SCALING_LLAMA3;
  r->factor = 8, r->low = 2, r->high = 4, r->original = 8192;
  ASSERT_EQ(strata_export_megatron(p, &t), STRATA_EUNSUPPORTED);
  ASSERT_STR_EQ(strata_last_error(),
                "megatron export: the model's rope_scaling (llama3: "
                "low_freq_factor 2, high_freq_factor 4, "
                "original_max_position_embeddings 8192) is not what "
                "--use-rope-scaling applies (1, 4, 8192)");
  r->low = 1;
  ASSERT_OK(strata_export_megatron(p, &t));
  ASSERT_CONTAINS(t, "--use-rope-scaling \\\n--rope-scaling-factor 8\n");
  strata_free(t);
  r->type = STRATA_ROPE_SCALING_LINEAR, r->factor = 2.5;
  ASSERT_EQ(strata_export_megatron(p, &t), STRATA_EUNSUPPORTED);
  ASSERT_CONTAINS(strata_last_error(), "(linear, factor 2.5) is not an "
                                       "integer");
  r->factor = 4;
  ASSERT_OK(strata_export_megatron(p, &t));
  ASSERT_CONTAINS(t, "--rotary-seq-len-interpolation-factor 4");
  strata_free(t);
  r->full_only = 1, p->window = 1024;
  ASSERT_EQ(strata_export_megatron(p, &t), STRATA_EUNSUPPORTED);
  ASSERT_CONTAINS(strata_last_error(), "full-attention layers only");
  strata_plan_destroy(p);
  strata_error_clear();
}

/* A plan's rope scaling is stored (format 7) and read back; where this
 * strata does not yet read format 7 the plan is refused, not written
 * without it. */
TEST(rope_scaling_in_plan_files) {
  strata_plan_t *p = hand_plan(2, 2, 2, 8, NULL), *q = NULL;
  unsigned char *data = NULL;
  size_t len = 0;
  p->rope_scaling.type = STRATA_ROPE_SCALING_YARN;
  p->rope_scaling.factor = 40, p->rope_scaling.original = 4096;
  p->rope_scaling.low = 1, p->rope_scaling.high = 32;
  p->rope_scaling.mscale = p->rope_scaling.mscale_all = 1;
  int rc = strata_plan_encode(p, &data, &len);
  if (STRATA_PLAN_FORMAT_VERSION >= 7) {
    ASSERT_OK(rc);
    ASSERT_OK(strata_plan_decode(data, len, "p.splan", &q));
    ASSERT(!memcmp(&q->rope_scaling, &p->rope_scaling, sizeof p->rope_scaling));
    strata_plan_destroy(q);
    strata_free(data);
  } else {
    ASSERT_EQ(rc, STRATA_EUNSUPPORTED);
    ASSERT_CONTAINS(strata_last_error(), "rope_scaling (yarn) needs plan "
                                         "format 7");
  }
  strata_plan_destroy(p);
  strata_error_clear();
}

/* show --json: every degree at the top level, the biases and the RoPE
 * scaling in "architecture". */
static double jnum(const cJSON *o, const char *key) {
  const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, key);
  ASSERT(cJSON_IsNumber(x));
  return x->valuedouble;
}

TEST(json_degrees_and_architecture) {
  strata_plan_t *p = hand_plan(2, 2, 2, 8, NULL);
  char *t = NULL;
  p->cp = 2, p->qkv_bias = p->out_bias = 1;
  p->rope_scaling.type = STRATA_ROPE_SCALING_LLAMA3;
  p->rope_scaling.factor = 8, p->rope_scaling.original = 8192;
  ASSERT_OK(strata_plan_json(p, &t));
  cJSON *j = cJSON_Parse(t), *a = cJSON_GetObjectItem(j, "architecture");
  ASSERT(j && a);
  ASSERT_EQ(jnum(j, "tp"), 2);
  ASSERT_EQ(jnum(j, "cp"), 2);
  ASSERT_EQ(jnum(j, "ep"), 1);
  ASSERT_EQ(jnum(j, "etp"), 2); /* no experts: Megatron-LM's default, tp */
  ASSERT_EQ(jnum(j, "pp"), 2);
  ASSERT_EQ(jnum(j, "dp"), 2);
  ASSERT_EQ(jnum(j, "vpp"), 1);
  ASSERT(cJSON_IsTrue(cJSON_GetObjectItem(a, "qkv_bias")));
  ASSERT(cJSON_IsTrue(cJSON_GetObjectItem(a, "out_bias")));
  ASSERT(cJSON_IsFalse(cJSON_GetObjectItem(a, "mlp_bias")));
  ASSERT(!cJSON_GetObjectItem(a, "expert_bias")); /* no experts */
  const cJSON *r = cJSON_GetObjectItem(a, "rope_scaling");
  ASSERT_STR_EQ(cJSON_GetStringValue(cJSON_GetObjectItem(r, "type")), "llama3");
  ASSERT_EQ(jnum(r, "factor"), 8);
  ASSERT_EQ(jnum(r, "original"), 8192);
  cJSON_Delete(j);
  strata_free(t);
  p->rope_scaling.type = STRATA_ROPE_SCALING_NONE;
  ASSERT_OK(strata_plan_json(p, &t));
  j = cJSON_Parse(t);
  ASSERT(cJSON_IsNull(cJSON_GetObjectItem(
      cJSON_GetObjectItem(j, "architecture"), "rope_scaling")));
  cJSON_Delete(j);
  strata_free(t);
  strata_plan_destroy(p);
}

#define GIB (1024.0 * 1024.0 * 1024.0)

/* A mixed cluster (H200 then H100 stages): each rank measured against its
 * own GPU's memory, in the summary, its rank table, the JSON and the HTML
 * memory chart; with the plan's figure not the table's (--memory-gib)
 * every rank against that figure, as before. */
TEST(mixed_memory_per_rank) {
  strata_plan_t *p = hand_plan(2, 2, 1, 8, NULL);
  const strata_gpu_model_t *h200 = strata_gpu_model_find("H200");
  const strata_gpu_model_t *h100 = strata_gpu_model_find("H100-SXM");
  char *t = NULL;
  ASSERT(h200 && h100);
  p->n_groups = 2;
  p->stages[0].group = 1, p->stages[1].group = 0;
  snprintf(p->stages[0].gpu_model, sizeof p->stages[0].gpu_model, "H200");
  snprintf(p->stages[1].gpu_model, sizeof p->stages[1].gpu_model, "H100-SXM");
  p->ranks[0].mem.total = 90.0 * GIB, p->ranks[1].mem.total = 76.3 * GIB;
  p->peak_memory_bytes = 90.0 * GIB;
  p->gpu_memory_bytes = (double)h200->memory_bytes; /* the fullest rank's */
  ASSERT_OK(strata_plan_summary(p, &t));
  ASSERT_CONTAINS(t, "peak memory          76.30 GiB of 80.00 GiB on rank 1's "
                     "H100-SXM, the fullest against its own GPU (the most, "
                     "90.00 GiB of 141.00 GiB, on rank 0's H200)");
  ASSERT_CONTAINS(t, "   80.00 H100-SXM\n");
  ASSERT_CONTAINS(t, "  141.00 H200\n");
  strata_free(t);
  ASSERT_OK(strata_plan_json(p, &t));
  cJSON *j = cJSON_Parse(t),
        *r1 = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "ranks"), 1);
  ASSERT_EQ(jnum(r1, "gpu_memory_bytes"), h100->memory_bytes);
  ASSERT_STR_EQ(cJSON_GetStringValue(cJSON_GetObjectItem(r1, "gpu_model")),
                "H100-SXM");
  cJSON_Delete(j);
  strata_free(t);
  ASSERT_OK(strata_export_html(p, NULL, &t));
  ASSERT_CONTAINS(t, "<title>rank 1: capacity 80.0 GiB</title>");
  ASSERT_CONTAINS(t, "<title>rank 0: capacity 141.0 GiB</title>");
  ASSERT_CONTAINS(t, "76.30 GiB of 80.00 GiB on rank 1's H100-SXM");
  strata_free(t);
  p->gpu_memory_bytes = 100.0 * GIB; /* --memory-gib 100: every rank's */
  ASSERT_OK(strata_plan_summary(p, &t));
  ASSERT_CONTAINS(t, "peak memory          90.00 GiB of 100.00 GiB per device");
  ASSERT_CONTAINS(t, "  100.00 H100-SXM\n");
  strata_free(t);
  strata_plan_destroy(p);
}

/* A plan on Ascend NPUs names them so: its file keeps it (format 17; a
 * GPU plan keeps its older format), the summary and the HTML page say
 * NPU wherever they name a device. */
TEST(npu_plans_say_npu) {
  strata_plan_t *p = hand_plan(2, 2, 2, 8, NULL), *q;
  char *t = NULL;
  size_t len;
  unsigned char *d = legacy_file(p, &len);
  ASSERT(d[4] < 17);
  strata_free(d);
  p->npu = 1;
  d = legacy_file(p, &len);
  ASSERT_EQ(d[4], 17);
  strata_free(d);
  q = roundtrip(p);
  ASSERT_EQ(q->npu, 1);
  p->pareto_axes = STRATA_PARETO_GPUS, p->n_pareto = 1;
  p->pareto = strata_calloc(1, sizeof *p->pareto);
  p->pareto[0] = p->top[0];
  p->tokens_per_second = 1e5, p->mfu = 0.4, p->model_flops_per_step = 1e15;
  ASSERT_OK(strata_plan_summary(p, &t));
  ASSERT_CONTAINS(t, "per NPU\n");
  ASSERT_CONTAINS(t, "and NPUs used");
  ASSERT_CONTAINS(t, ", 8 NPUs\n");
  strata_free(t);
  ASSERT_OK(strata_export_html(p, NULL, &t));
  ASSERT_CONTAINS(t, "on one NPU's link in a node");
  ASSERT_CONTAINS(t, "node 0 NPU 1");
  ASSERT(!strstr(t, "GPU"));
  strata_free(t);
  strata_plan_destroy(q);
  strata_plan_destroy(p);
}

TEST(torch_module) {
  strata_plan_t *p = hand_plan(2, 2, 2, 8, NULL);
  strata_export_opts_t o;
  char *t = NULL;
  p->megatron = 0;
  for (int s = 0; s < 2; s++) /* proj leaves a pending sum */
    for (int i = 0; i < p->stages[s].result->n_ops; i++)
      if (!strcmp(p->stages[s].result->ops[i].name, "proj")) {
        strata_free(p->stages[s].result->ops[i].placement);
        p->stages[s].result->ops[i].placement = strata_strdup("[P]");
      }
  ASSERT_OK(strata_export_torch(p, NULL, &t));
  /* qkv "[S(2)]" after ln1 "[S(1)]"; proj "[P]" before ln2 "[S(1)]" */
  ASSERT_CONTAINS(t, "\"attn.c_attn\": ColwiseParallel(input_layouts=Shard(1)");
  ASSERT_CONTAINS(t,
                  "\"attn.c_proj\": RowwiseParallel(input_layouts=Shard(-1), "
                  "output_layouts=Shard(1)");
  ASSERT_CONTAINS(t, "\"ln_1\": SequenceParallel(sequence_dim=1)");
  ASSERT_CONTAINS(t, "\"mlp.c_proj\": SequenceParallel(sequence_dim=1)");
  ASSERT_CONTAINS(t, "(4, 8, 1, block_plan_0, Shard(1)),");
  strata_free(t);
  strata_export_opts_init(&o);
  o.name_map = "{\"blocks\": \"net.blocks\", \"modules\": {\"qkv\": "
               "[\"q\", \"kv\"]}}";
  ASSERT_OK(strata_export_torch(p, &o, &t));
  ASSERT_CONTAINS(t, "\"q\": ColwiseParallel");
  ASSERT_CONTAINS(t, "\"kv\": ColwiseParallel");
  ASSERT(!strstr(t, "c_proj"));
  strata_free(t);
  o.name_map = "{\"blocks\": \"h\", \"modules\": {\"qkv\": "
               "\"x\\\"); import os #\"}}";
  ASSERT_EQ(strata_export_torch(p, &o, &t), STRATA_EBADINPUT);
  ASSERT_CONTAINS(strata_last_error(),
                  "modules.qkv wants a dotted module path");
  strata_plan_destroy(p);
}

/* ---- h. timeline
 * ------------------------------------------------------------------ */

TEST(timeline_trace) {
  strata_plan_t *p = hand_plan(2, 3, 1, 12, NULL);
  char *t = NULL;
  ASSERT_OK(strata_export_timeline(p, &t));
  cJSON *j = cJSON_Parse(t);
  ASSERT(j);
  ASSERT_STR_EQ(cJSON_GetStringValue(cJSON_GetObjectItem(j, "displayTimeUnit")),
                "ms");
  cJSON *ev = cJSON_GetObjectItem(j, "traceEvents");
  ASSERT(cJSON_IsArray(ev));
  int x[3] = {0}, names = 0, p2p = 0, sync = 0, items = 0;
  double end = 0, items_us = 0;
  cJSON *e;
  cJSON_ArrayForEach(e, ev) {
    const char *ph = cJSON_GetStringValue(cJSON_GetObjectItem(e, "ph"));
    const char *cat = cJSON_GetStringValue(cJSON_GetObjectItem(e, "cat"));
    int tid = cJSON_GetObjectItem(e, "tid")->valueint;
    if (!strcmp(ph, "M")) names++;
    if (strcmp(ph, "X")) continue;
    double e1 = cJSON_GetObjectItem(e, "ts")->valuedouble +
                cJSON_GetObjectItem(e, "dur")->valuedouble;
    if (e1 > end) end = e1;
    if (!strcmp(cat, "p2p"))
      p2p++;
    else if (!strcmp(cat, "sync"))
      sync++;
    else if (!strcmp(cat, "step item")) /* a thread of their own */
      items++, items_us += cJSON_GetObjectItem(e, "dur")->valuedouble;
    else {
      ASSERT(tid >= 0 && tid < 3); /* a forward or backward of a rank */
      x[tid]++;
    }
  }
  for (int s = 0; s < 3; s++)
    ASSERT_EQ(x[s], 2 * p->n_micro);
  ASSERT(items >= 1); /* the step's items end to end: the step */
  ASSERT(fabs(items_us - p->step_seconds * 1e6) <=
         1e-3 * p->step_seconds * 1e6 + 1);
  ASSERT_EQ(p2p, 2 * 2 * p->n_micro);
  ASSERT_EQ(sync, 3);
  ASSERT(names >= 1 + 3 + 4);
  cJSON_Delete(j);
  strata_free(t);
  /* a damaged plan's absurd schedule is refused, not drawn */
  p->n_micro = 100000000;
  t = NULL;
  ASSERT_EQ(strata_export_timeline(p, &t), STRATA_EUNSUPPORTED);
  ASSERT_CONTAINS(strata_last_error(), "3 stages x 100000000 micro-batches");
  ASSERT(t == NULL);
  strata_plan_destroy(p);
}

/* ---- i. reports
 * -------------------------------------------------------------------- */

TEST(summary_and_json) {
  strata_plan_t *p = hand_plan(2, 2, 1, 8, NULL);
  char *t = NULL;
  ASSERT_OK(strata_plan_summary(p, &t));
  ASSERT_CONTAINS(t, "plan: gpt-tiny on dgx-h100:2 (4 devices)");
  ASSERT_CONTAINS(t, "tp 2, pp 2, dp 1");
  ASSERT_CONTAINS(t, "layer template of stage 0");
  ASSERT_CONTAINS(t, "qkv");
  strata_free(t);
  ASSERT_OK(strata_plan_json(p, &t));
  cJSON *j = cJSON_Parse(t);
  ASSERT(j);
  ASSERT_EQ(num(j, "tp"), 2);
  ASSERT_EQ(num(j, "n_micro"), 8);
  cJSON *st = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "stages"), 1);
  ASSERT_EQ(num(st, "layer_begin"), 4);
  ASSERT_EQ(num(st, "devices"), 2);
  ASSERT(cJSON_GetObjectItem(cJSON_GetObjectItem(st, "memory"), "total_bytes"));
  ASSERT(cJSON_GetArraySize(cJSON_GetObjectItem(st, "ops")) > 5);
  ASSERT(cJSON_GetObjectItem(j, "step_seconds"));
  /* deterministic: no timing unless asked for */
  ASSERT(
      !cJSON_GetObjectItem(cJSON_GetObjectItem(j, "search"), "plan_seconds"));
  cJSON_Delete(j);
  strata_free(t);
  p->plan_seconds = 1.5;
  ASSERT_OK(strata_plan_json_flags(p, STRATA_PLAN_JSON_TIMINGS, &t));
  j = cJSON_Parse(t);
  ASSERT_EQ(
      cJSON_GetObjectItem(cJSON_GetObjectItem(j, "search"), "plan_seconds")
              ->valuedouble *
          2,
      3);
  cJSON_Delete(j);
  strata_free(t);
  strata_plan_destroy(p);
}

/* ---- j. sizes and golden files
 * ------------------------------------------------------- */

/* gpt3-175b on 1024 GPUs: tp 8, pp 16, dp 8, stages solved with the
 * Megatron layout (first, middle and last distinct). */
TEST(plan_size_gpt3) {
  strata_graph_t *g = NULL;
  strata_cluster_t *c = NULL;
  ASSERT_OK(strata_model_load("gpt3-175b", NULL, &g));
  ASSERT_OK(strata_cluster_load("dgx-h100:128", &c));
  strata_plan_t *p = hand_plan(8, 16, 8, 96, NULL);
  p->global_batch = 1536, p->n_micro = 192;
  p->heads = 96, p->hidden = 12288, p->ffn = 49152, p->seq_len = 2048;
  for (int s = 0; s < 16; s++) {
    strata_plan_stage_t *st = &p->stages[s];
    strata_stage_result_destroy(st->result);
    st->result = solve_stage(g, st->layer_begin, st->layer_end, 8);
    ASSERT_OK(strata_cluster_stage_mesh(c, 1, 8, &st->mesh));
    st->first_rank = s * 8;
  }
  ASSERT_OK(strata_merge_stitch(p, g, c));
  size_t len;
  unsigned char *d = encode(p, &len);
  printf(
      "  gpt3-175b, 1024 GPUs, 16 stages: %zu bytes; step %.3f s, MFU %.1f%%\n",
      len, p->step_seconds, 100 * p->mfu);
  ASSERT(len < 8192);
  assert_stable(p);
  strata_free(d);
  strata_plan_destroy(p);
  strata_cluster_destroy(c);
  strata_graph_destroy(g);
}

/* The small plan files of the CLI golden cases, written only on request
 * (STRATA_MERGE_GOLDEN_DIR=tests/cli/cases). */
TEST(golden_files) {
  const char *dir = getenv("STRATA_MERGE_GOLDEN_DIR");
  strata_plan_t *a = hand_plan(2, 2, 2, 4, NULL);
  int split[2] = {3, 1};
  strata_plan_t *b = hand_plan(2, 2, 2, 4, split);
  strata_free(b->stages[1].result->ops[1].strategy);
  b->stages[1].result->ops[1].strategy = strata_strdup("dp");
  strata_graph_t *g = small_gpt(4);
  ASSERT_OK(strata_merge_stitch(a, g, NULL));
  ASSERT_OK(strata_merge_stitch(b, g, NULL));
  strata_graph_destroy(g);
  size_t la, lb;
  unsigned char *da = encode(a, &la), *db = encode(b, &lb);
  ASSERT(la < 2048);
  if (dir) {
    const char *names[] = {"show_plan",       "show_json",
                           "export_megatron", "export_deepspeed",
                           "export_timeline", "diff_same",
                           "diff_changed",    "diff_json",
                           "show_json_twice", "diff_tolerance_bad"};
    char path[1024];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
      snprintf(path, sizeof path, "%s/%s/plan.splan", dir, names[i]);
      ASSERT_OK(strata_file_write_atomic(path, da, la));
    }
    snprintf(path, sizeof path, "%s/diff_changed/new.splan", dir);
    ASSERT_OK(strata_file_write_atomic(path, db, lb));
    snprintf(path, sizeof path, "%s/diff_json/new.splan", dir);
    ASSERT_OK(strata_file_write_atomic(path, db, lb));
    /* the same plan with its predicted figures 0.03 % higher */
    strata_plan_t *d = roundtrip(a);
    d->step_seconds *= 1.0003;
    d->stages[0].fwd_seconds *= 1.0003;
    size_t ld;
    unsigned char *dd = encode(d, &ld);
    const char *drift[] = {"diff_drift", "diff_drift_exact"};
    for (int i = 0; i < 2; i++) {
      snprintf(path, sizeof path, "%s/%s/plan.splan", dir, drift[i]);
      ASSERT_OK(strata_file_write_atomic(path, da, la));
      snprintf(path, sizeof path, "%s/%s/new.splan", dir, drift[i]);
      ASSERT_OK(strata_file_write_atomic(path, dd, ld));
    }
    strata_free(dd);
    strata_plan_destroy(d);
    a->zero_stage = 2; /* Megatron-FSDP's optim_grads, with a pipeline */
    strata_free(da);
    da = encode(a, &la);
    snprintf(path, sizeof path, "%s/export_megatron_zero2/plan.splan", dir);
    ASSERT_OK(strata_file_write_atomic(path, da, la));
    da[la - 2] ^= 4; /* a flipped bit */
    snprintf(path, sizeof path, "%s/show_corrupt/plan.splan", dir);
    ASSERT_OK(strata_file_write_atomic(path, da, la));
    printf("  wrote golden plan files (%zu and %zu bytes)\n", la, lb);
  }
  strata_free(da);
  strata_free(db);
  strata_plan_destroy(a);
  strata_plan_destroy(b);
}

/* A plan the time limit cut short keeps its proven bound: no plan is
 * faster, and it is at most the step found; it survives the plan file and
 * show --json gives it.  The three-generation cluster's search runs for
 * minutes at the default batch, so a limit of a few seconds stops it. */
TEST(time_limited_plan_keeps_its_bound) {
  char spec[600];
  strata_graph_t *g = NULL;
  strata_cluster_t *c = NULL;
  strata_plan_t *p = NULL, *q = NULL;
  strata_plan_opts_t o;
  unsigned char *data = NULL;
  size_t len = 0;
  char *json = NULL;
  snprintf(spec, sizeof spec, "%s/bench/data/h100x256-a100x256-h200x128.json",
           test_source_dir());
  ASSERT_OK(strata_model_load("llama3-405b", NULL, &g));
  ASSERT_OK(strata_cluster_load(spec, &c));
  strata_plan_opts_init(&o);
  o.quiet = 1;
  o.threads = 1;
  /* a loaded machine may find nothing at all in the first limits (exit
   * 5), or a plan but no bound (a group's or the mixed search that would
   * start past the deadline is skipped, and nothing is then claimed: 0):
   * the search takes minutes, so any limit that finds a plan cuts it
   * short */
  int rc = STRATA_ETIMEDOUT;
  for (o.time_limit = 0.3; o.time_limit < 30; o.time_limit *= 3) {
    rc = strata_pipeline_plan(g, c, &o, &p);
    if (rc == STRATA_ETIMEDOUT) continue;
    if (rc || p->bound_seconds > 0) break;
    ASSERT_EQ(p->time_limited, 1); /* no bound claimed: cut short */
    strata_plan_destroy(p);
    p = NULL;
  }
  ASSERT_OK(rc);
  ASSERT(p != NULL);
  ASSERT_OK(strata_merge_stitch(p, g, c));
  ASSERT_EQ(p->time_limited, 1);
  ASSERT(p->bound_seconds > 0 && p->bound_seconds <= p->step_seconds);
  ASSERT_OK(strata_plan_encode(p, &data, &len));
  ASSERT_OK(strata_plan_decode(data, len, "p.splan", &q));
  ASSERT(q->bound_seconds == p->bound_seconds);
  ASSERT_OK(strata_plan_json(q, &json));
  ASSERT_CONTAINS(json, "\"bound_seconds\":");
  strata_free(json);
  ASSERT_OK(strata_plan_summary(q, &json));
  ASSERT_CONTAINS(json, "no plan is faster than ");
  strata_free(json);
  strata_free(data);
  strata_plan_destroy(q);
  strata_plan_destroy(p);
  strata_cluster_destroy(c);
  strata_graph_destroy(g);
}

/* Format 13: a plan with a Pareto front keeps it (every configuration,
 * its axes), re-encodes to the same bytes, and a plan without one stays
 * at its older format; a front out of order or without its axes is
 * refused by the encoder, as the decoder would refuse it. */
/* The front's lines read differently: configurations that share a name
 * are told apart by their pipeline split, then by which chunk layout of
 * that split; recompute none and selective at one step and memory are
 * one line with a note (the best configurations' too). */
TEST(pareto_names_tell_apart) {
  strata_plan_t *p = hand_plan(2, 2, 2, 8, NULL);
  char *text = NULL;
  const int first[] = {4, 4, 5, 3, 4, 4}, last[] = {4, 4, 3, 5, 4, 4};
  p->pareto_axes = STRATA_PARETO_MEMORY;
  p->n_pareto = 6;
  p->pareto = strata_calloc(6, sizeof *p->pareto);
  for (int i = 0; i < 6; i++) {
    strata_plan_config_t *c = &p->pareto[i];
    *c = p->top[0];
    c->micro_batch = 1, c->vpp = i < 4 ? 1 : 2;
    c->first_layers = first[i], c->last_layers = last[i];
    c->recompute = i == 1 ? STRATA_RECOMPUTE_SELECTIVE : STRATA_RECOMPUTE_NONE;
    c->step_seconds = 1.0 + (i > 1 ? i : 0);
    c->peak_memory_bytes = 9e9 - 1e9 * (i > 1 ? i : 0);
  }
  p->top[1] = p->pareto[1]; /* the runner-up: the best, selective */
  p->top[0] = p->pareto[0];
  ASSERT_OK(strata_plan_summary(p, &text));
  ASSERT_CONTAINS(text, "  1. tp 2, pp 2, dp 2, micro 1, recompute none "
                        "(recompute selective the same here: it drops nothing "
                        "more): 1000.000 ms");
  ASSERT_CONTAINS(text, "  1. tp 2, pp 2, dp 2, micro 1, recompute none, "
                        "layers 4 first, 4 last (recompute selective the same "
                        "here: it drops nothing more): 1000.000 ms");
  ASSERT_CONTAINS(text, "  2. tp 2, pp 2, dp 2, micro 1, recompute none, "
                        "layers 5 first, 3 last: 3000.000 ms");
  ASSERT_CONTAINS(text, "  3. tp 2, pp 2, dp 2, micro 1, recompute none, "
                        "layers 3 first, 5 last: 4000.000 ms");
  ASSERT_CONTAINS(text, "  4. tp 2, pp 2, dp 2, micro 1, vpp 2, recompute "
                        "none, layers 4 first, 4 last, chunk layout 1 of "
                        "those: 5000.000 ms");
  ASSERT_CONTAINS(text, "  5. tp 2, pp 2, dp 2, micro 1, vpp 2, recompute "
                        "none, layers 4 first, 4 last, chunk layout 2 of "
                        "those: 6000.000 ms");
  ASSERT(!strstr(text, "  6. "));
  ASSERT(!strstr(text, "selective: 1000.000 ms"));
  strata_free(text);
  /* with their layouts (format 17), the layout names them */
  snprintf(p->pareto[4].layout, sizeof p->pareto[4].layout, "Et*3|t|t*2|t*2L");
  snprintf(p->pareto[5].layout, sizeof p->pareto[5].layout, "Et|t*3|t*3|tL");
  size_t len;
  unsigned char *d = legacy_file(p, &len);
  ASSERT_EQ(d[4], 17);
  strata_free(d);
  strata_plan_t *q = roundtrip(p);
  ASSERT_STR_EQ(q->pareto[5].layout, "Et|t*3|t*3|tL");
  ASSERT_STR_EQ(q->pareto[0].layout, "");
  ASSERT_OK(strata_plan_summary(q, &text));
  ASSERT_CONTAINS(text, "  4. tp 2, pp 2, dp 2, micro 1, vpp 2, recompute "
                        "none, layout Et*3|t|t*2|t*2L: 5000.000 ms");
  ASSERT_CONTAINS(text, "  5. tp 2, pp 2, dp 2, micro 1, vpp 2, recompute "
                        "none, layout Et|t*3|t*3|tL: 6000.000 ms");
  strata_free(text);
  strata_plan_destroy(q);
  strata_plan_destroy(p);
}

TEST(pareto_front_in_plan_files) {
  strata_plan_t *p = hand_plan(2, 2, 2, 8, NULL);
  size_t len;
  unsigned char *d = legacy_file(p, &len);
  ASSERT(d[4] < 13); /* the version: no front, no format 13 */
  strata_free(d);
  p->pareto_axes = STRATA_PARETO_GPUS;
  p->n_pareto = 3;
  p->pareto = strata_calloc(3, sizeof *p->pareto);
  for (int i = 0; i < 3; i++) {
    p->pareto[i] = p->top[0];
    p->pareto[i].dp = 2 >> (i > 1);
    p->pareto[i].micro_batch = 4 >> i;
    p->pareto[i].step_seconds = 1.5 + i;
    p->pareto[i].peak_memory_bytes = 3e9 - 1e9 * i;
  }
  d = legacy_file(p, &len);
  ASSERT_EQ(d[4], 13);
  strata_free(d);
  strata_plan_t *q = roundtrip(p);
  ASSERT_EQ(q->pareto_axes, STRATA_PARETO_GPUS);
  ASSERT_EQ(q->n_pareto, 3);
  for (int i = 0; i < 3; i++) {
    ASSERT(q->pareto[i].step_seconds == p->pareto[i].step_seconds);
    ASSERT(q->pareto[i].peak_memory_bytes == p->pareto[i].peak_memory_bytes);
    ASSERT_EQ(q->pareto[i].dp, p->pareto[i].dp);
    ASSERT_EQ(q->pareto[i].micro_batch, p->pareto[i].micro_batch);
  }
  assert_stable(p);
  char *text = NULL;
  ASSERT_OK(strata_plan_json(q, &text));
  ASSERT_CONTAINS(text, "\"pareto_axes\":\t\"gpus\"");
  ASSERT_CONTAINS(text, "\"config\":\t\"tp 2, pp 2, dp 1, micro 1");
  strata_free(text);
  ASSERT_OK(strata_plan_summary(q, &text));
  ASSERT_CONTAINS(text, "Pareto front (step time against peak memory per "
                        "device and GPUs used): 3 configurations");
  strata_free(text);
  /* the page plots one point a configuration, the plan's ringed, and
   * lists them; without a front, no such section */
  ASSERT_OK(strata_export_html(q, NULL, &text));
  ASSERT_CONTAINS(text, "<h2>Pareto front</h2>");
  int dots = 0;
  for (const char *x = text; (x = strstr(x, "<circle class=pareto")); x++)
    dots++;
  ASSERT_EQ(dots, 3);
  ASSERT_CONTAINS(text, "stroke=\"#c53030\" stroke-width=\"2\"");
  ASSERT_CONTAINS(text, "<td>3</td><td class=l>tp 2, pp 2, dp 1, micro 1");
  strata_free(text);
  strata_plan_destroy(q);
  q = hand_plan(2, 2, 2, 8, NULL);
  ASSERT_OK(strata_export_html(q, NULL, &text));
  ASSERT(!strstr(text, "Pareto"));
  strata_free(text);
  strata_plan_destroy(q);
  unsigned char *bad = NULL;
  p->pareto[2].step_seconds = 1; /* faster than the one before it */
  ASSERT_EQ(strata_plan_encode(p, &bad, &len), STRATA_EBADINPUT);
  ASSERT_CONTAINS(strata_last_error(), "Pareto configuration 3 is faster");
  p->pareto[2].step_seconds = 3.5;
  p->pareto_axes = 0; /* a front without its axes */
  ASSERT_EQ(strata_plan_encode(p, &bad, &len), STRATA_EBADINPUT);
  ASSERT_CONTAINS(strata_last_error(), "Pareto front holds 3");
  strata_plan_destroy(p);
}

/* A fallback that is the plan itself (its lost nodes idle in the plan)
 * or the same as an earlier fallback says so once, in the summary and in
 * the JSON, instead of printing the plan again. */
TEST(fallbacks_the_same_plan) {
  strata_plan_t *p = hand_plan(2, 2, 1, 8, NULL);
  char *text = NULL;
  p->fallbacks_asked = p->n_fallbacks = 3;
  p->fallbacks = strata_calloc(3, sizeof *p->fallbacks);
  p->fallbacks[0] = hand_plan(2, 2, 1, 8, NULL);
  p->fallbacks[1] = hand_plan(1, 2, 1, 8, NULL);
  p->fallbacks[2] = hand_plan(1, 2, 1, 8, NULL);
  for (int i = 0; i < 3; i++)
    p->fallbacks[i]->nodes_lost = i + 1;
  p->fallbacks[1]->step_seconds = p->fallbacks[2]->step_seconds = 2.0;
  ASSERT_OK(strata_plan_summary(p, &text));
  ASSERT_CONTAINS(text, "  1 node lost: the plan itself (its 4 GPUs are "
                        "still there: it does not use every node)\n");
  ASSERT_CONTAINS(text, "  2 nodes lost: tp 1, pp 2, dp 1");
  ASSERT_CONTAINS(text, "  3 nodes lost: the same plan as for 2 nodes lost\n");
  ASSERT(!strstr(text, "  1 node lost: tp 2"));
  strata_free(text);
  ASSERT_OK(strata_plan_json(p, &text));
  cJSON *j = cJSON_Parse(text), *a = cJSON_GetObjectItem(j, "fallbacks");
  ASSERT_EQ(cJSON_GetArraySize(a), 3);
  ASSERT_EQ(jnum(cJSON_GetArrayItem(a, 0), "same_as_nodes_lost"), 0);
  ASSERT(!cJSON_GetObjectItem(cJSON_GetArrayItem(a, 1), "same_as_nodes_lost"));
  ASSERT_EQ(jnum(cJSON_GetArrayItem(a, 2), "same_as_nodes_lost"), 2);
  cJSON_Delete(j);
  strata_free(text);
  strata_plan_destroy(p);
}

/* Format 14: fallback plans, each a whole plan of its own, through the
 * plan file (the same bytes again; a plan without them keeps its older
 * format), the summary and the JSON; a fallback in the wrong place, or
 * one holding fallbacks of its own, is refused by the encoder. */
TEST(fallback_plans_in_plan_files) {
  strata_plan_t *p = hand_plan(2, 2, 2, 8, NULL);
  p->fallbacks_asked = 3;
  p->n_fallbacks = 2;
  p->fallbacks = strata_calloc(2, sizeof *p->fallbacks);
  p->fallbacks[0] = hand_plan(2, 2, 1, 8, NULL);
  p->fallbacks[1] = hand_plan(1, 2, 1, 8, NULL);
  for (int i = 0; i < 2; i++) {
    p->fallbacks[i]->nodes_lost = i + 1;
    p->fallbacks[i]->step_seconds = 2.0 + i;
  }
  p->step_seconds = 1.0;
  size_t len;
  unsigned char *d = legacy_file(p, &len);
  ASSERT_EQ(d[4], 14);
  strata_free(d);
  strata_plan_t *q = roundtrip(p);
  ASSERT_EQ(q->fallbacks_asked, 3);
  ASSERT_EQ(q->n_fallbacks, 2);
  ASSERT_EQ(q->fallbacks[1]->nodes_lost, 2);
  ASSERT_EQ(q->fallbacks[1]->tp, 1);
  ASSERT_EQ(q->fallbacks[0]->dp, 1);
  ASSERT(q->fallbacks[1]->step_seconds == 3.0);
  ASSERT_EQ(q->fallbacks[0]->n_stages, 2);
  assert_stable(p);
  char *text = NULL;
  ASSERT_OK(strata_plan_summary(q, &text));
  ASSERT_CONTAINS(text, "  2 nodes lost: tp 1, pp 2, dp 1");
  ASSERT_CONTAINS(text, "3000.000 ms (+200.00 %)");
  ASSERT_CONTAINS(text, "  3 nodes lost: none stored");
  strata_free(text);
  ASSERT_OK(strata_plan_summary(q->fallbacks[0], &text));
  ASSERT_CONTAINS(text, "fallback: the plan of the cluster with 1 node of "
                        "each node group lost");
  strata_free(text);
  ASSERT_OK(strata_plan_json(q, &text));
  ASSERT_CONTAINS(text, "\"fallbacks_asked\":\t3");
  ASSERT_CONTAINS(text, "\"nodes_lost\":\t2");
  strata_free(text);
  strata_plan_destroy(q);
  unsigned char *bad = NULL;
  p->fallbacks[1]->nodes_lost = 3; /* not the plan of 2 nodes lost */
  ASSERT_EQ(strata_plan_encode(p, &bad, &len), STRATA_EBADINPUT);
  ASSERT_CONTAINS(strata_last_error(), "fallback 2 is not the plan of 2 nodes");
  p->fallbacks[1]->nodes_lost = 2;
  /* a fallback holding one of its own (past the encoder's check): the
   * decoder refuses it before it nests any deeper */
  strata_plan_t *f = p->fallbacks[0];
  f->fallbacks_asked = f->n_fallbacks = 1;
  f->fallbacks = strata_calloc(1, sizeof *f->fallbacks);
  f->fallbacks[0] = hand_plan(1, 1, 1, 8, NULL);
  f->fallbacks[0]->nodes_lost = 1;
  for (int v = 14; v <= STRATA_PLAN_FORMAT_VERSION; v += 4) { /* 14, 18 */
    strata_buf_t raw;
    if (v < 18)
      ASSERT_OK(st__payload_encode_legacy(p, &raw));
    else
      ASSERT_OK(st__payload_encode(p, &raw));
    strata_plan_t *nest = NULL;
    ASSERT_EQ(st__payload_decode((const unsigned char *)raw.p, raw.len,
                                 "n.splan", (unsigned)v, &nest),
              STRATA_ECORRUPT);
    ASSERT_CONTAINS(strata_last_error(), "n.splan (fallback 1): corrupt: the "
                                         "plan's fallback count is not 0");
    strata_buf_free(&raw);
  }
  strata_plan_destroy(p);
  p = hand_plan(2, 2, 2, 8, NULL);
  d = legacy_file(p, &len);
  ASSERT(d[4] < 13);
  strata_free(d);
  strata_plan_destroy(p);
}

/* ---- format 18's records ---- */

static size_t put_varint(unsigned char *b, uint64_t v) {
  size_t n = 0;
  do {
    b[n] = (unsigned char)(v & 0x7f);
    v >>= 7;
    if (v) b[n] |= 0x80;
    n++;
  } while (v);
  return n;
}

static uint64_t get_varint(const unsigned char *b, size_t *i) {
  uint64_t v = 0;
  for (int s = 0;; s += 7) {
    unsigned char c = b[(*i)++];
    v |= (uint64_t)(c & 0x7f) << s;
    if (!(c & 0x80)) return v;
  }
}

/* p's payload with a record (tag, must, type 0, an int 7) put before the
 * first record of a higher tag; *at: where it went. */
static unsigned char *with_record(const strata_plan_t *p, uint64_t tag,
                                  int must, size_t *len, size_t *at) {
  strata_buf_t raw;
  ASSERT_OK(st__payload_encode(p, &raw));
  unsigned char rec[24], *out = strata_malloc(raw.len + sizeof rec);
  size_t n = put_varint(rec, tag << 3 | (uint64_t)must << 2);
  n += put_varint(rec + n, 1);
  rec[n++] = 14; /* zigzag 7 */
  size_t i = 0;
  while (i < raw.len) {
    size_t start = i;
    uint64_t key = get_varint((const unsigned char *)raw.p, &i);
    uint64_t l = get_varint((const unsigned char *)raw.p, &i);
    if (key >> 3 > tag) {
      i = start;
      break;
    }
    i += (size_t)l;
  }
  memcpy(out, raw.p, i);
  memcpy(out + i, rec, n);
  memcpy(out + i + n, raw.p + i, raw.len - i);
  *len = raw.len + n;
  *at = i;
  strata_buf_free(&raw);
  return out;
}

/* A field this strata does not know: an optional one is skipped, at the
 * end or between known ones, and the plan reads as without it; a
 * must-understand one is refused, naming its tag. */
TEST(unknown_tags) {
  strata_plan_t *p = hand_plan(2, 4, 2, 16, NULL), *q = NULL;
  strata_buf_t plain;
  ASSERT_OK(st__payload_encode(p, &plain));
  const uint64_t tags[] = {12, STRATA_PLAN_TAG_NEXT, 1000000};
  for (size_t k = 0; k < sizeof tags / sizeof tags[0]; k++) {
    size_t n, at, len;
    unsigned char *raw = with_record(p, tags[k], 0, &n, &at);
    ASSERT(at > 0); /* after known records */
    int skipped = -1;
    ASSERT_OK(st__tags_decode(raw, n, "u.splan", 0, &skipped, &q));
    ASSERT_EQ(skipped, 1);
    assert_same_plan(p, q);
    strata_buf_t again;
    ASSERT_OK(st__payload_encode(q, &again)); /* the field is dropped */
    ASSERT(again.len == plain.len && !memcmp(again.p, plain.p, plain.len));
    strata_buf_free(&again);
    strata_plan_destroy(q);
    q = NULL;
    unsigned char *d = wrap(raw, n, &len); /* through the file reader too */
    ASSERT_OK(strata_plan_decode(d, len, "u.splan", &q));
    strata_plan_destroy(q);
    q = NULL;
    strata_free(d);
    strata_free(raw);
    raw = with_record(p, tags[k], 1, &n, &at);
    d = wrap(raw, n, &len);
    char want[96];
    snprintf(want, sizeof want, "u.splan: the plan holds field tag %llu",
             (unsigned long long)tags[k]);
    strata_plan_t *r = NULL;
    ASSERT_EQ(strata_plan_decode(d, len, "u.splan", &r), STRATA_EVERSION);
    ASSERT(r == NULL);
    ASSERT_CONTAINS(strata_last_error(), want);
    ASSERT_CONTAINS(strata_last_error(), "must understand");
    strata_free(d);
    strata_free(raw);
  }
  strata_buf_free(&plain);
  strata_plan_destroy(p);
  strata_error_clear();
}

/* A record out of order, of another type, stored at 0 or running past
 * the payload is refused, naming the field. */
TEST(tagged_records_refused) {
  strata_plan_t *p = hand_plan(2, 4, 2, 16, NULL);
  size_t n, at, len;
  /* tp (tag 17) again, after pp's */
  unsigned char *raw = with_record(p, 17, 1, &n, &at), *d;
  d = wrap(raw, n, &len);
  expect_decode_error(d, len, STRATA_ECORRUPT,
                      "tensor-parallel size (tag 17) follows tag 17");
  strata_free(d);
  strata_free(raw);
  /* pp as a double */
  strata_buf_t b;
  ASSERT_OK(st__payload_encode(p, &b));
  unsigned char *x = (unsigned char *)b.p;
  size_t i = 0;
  while (i < b.len) {
    size_t start = i;
    uint64_t key = get_varint(x, &i), l = get_varint(x, &i);
    if (key >> 3 == 18) {
      x[start] = (unsigned char)(key | 1); /* type 1: a double */
      d = wrap(x, b.len, &len);
      expect_decode_error(d, len, STRATA_ECORRUPT,
                          "pipeline size (tag 18) is stored as type 1");
      strata_free(d);
      x[start] = (unsigned char)key;
      x[i] = 0; /* its value 0: a default is left out */
      d = wrap(x, b.len, &len);
      expect_decode_error(d, len, STRATA_ECORRUPT,
                          "pipeline size (tag 18) is stored as 0");
      strata_free(d);
      d = wrap(x, i, &len); /* the payload ends before its value */
      expect_decode_error(d, len, STRATA_ECORRUPT,
                          "pipeline size (tag 18) is 1 bytes long, past the "
                          "payload's end (0 left)");
      strata_free(d);
      break;
    }
    i += (size_t)l;
  }
  ASSERT(i < b.len);
  strata_buf_free(&b);
  strata_plan_destroy(p);
}

/* Every plan file of the tree in an old format (the seeds of fuzz_plan,
 * the CLI cases' inputs) still reads: its payload re-encodes in its own
 * format to the same bytes (nothing lost), and as format 18 to a file
 * that shows the same JSON. */
static int old_sample(const char *path, int *versions) {
  char *data = NULL, *j1 = NULL, *j2 = NULL;
  size_t len = 0, n18 = 0;
  unsigned char *d18 = NULL;
  strata_plan_t *p = NULL, *q = NULL;
  ASSERT_OK(strata_file_read(path, 1 << 24, &data, &len));
  const unsigned char *f = (const unsigned char *)data;
  int v = len >= 20 ? f[4] : 0;
  if (strata_plan_decode(f, len, path, &p)) { /* the refused ones */
    ASSERT(strstr(path, "format-v1") || strstr(path, "show_corrupt"));
    strata_free(data);
    return 0;
  }
  if (v < STRATA_PLAN_FORMAT_VERSION) {
    uLongf raw_len = (uLongf)f[12] | (uLongf)f[13] << 8 | (uLongf)f[14] << 16 |
                     (uLongf)f[15] << 24;
    unsigned char *raw = strata_malloc(raw_len);
    ASSERT(raw && uncompress(raw, &raw_len, f + 20, (uLong)(len - 20)) == Z_OK);
    strata_buf_t again;
    ASSERT_OK(st__payload_encode_legacy(p, &again));
    ASSERT_EQ(st__legacy_format(p), v);
    ASSERT(again.len == raw_len && !memcmp(again.p, raw, raw_len));
    strata_buf_free(&again);
    strata_free(raw);
    versions[v]++;
  }
  ASSERT_OK(strata_plan_encode(p, &d18, &n18));
  ASSERT_OK(strata_plan_decode(d18, n18, path, &q));
  ASSERT_OK(strata_plan_json(p, &j1));
  ASSERT_OK(strata_plan_json(q, &j2));
  ASSERT_STR_EQ(j1, j2);
  strata_free(j1);
  strata_free(j2);
  strata_free(d18);
  strata_plan_destroy(q);
  strata_plan_destroy(p);
  strata_free(data);
  return v < STRATA_PLAN_FORMAT_VERSION;
}

static int old_samples_in(const char *dir, int *versions, int depth) {
  DIR *d = opendir(dir);
  struct dirent *e;
  int n = 0;
  ASSERT(d != NULL);
  while ((e = readdir(d))) {
    char path[1024];
    size_t l = strlen(e->d_name);
    if (e->d_name[0] == '.') continue;
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    struct stat st;
    if (stat(path, &st)) continue;
    if (S_ISDIR(st.st_mode) && depth > 0)
      n += old_samples_in(path, versions, depth - 1);
    else if (l > 6 && !strcmp(e->d_name + l - 6, ".splan"))
      n += old_sample(path, versions);
  }
  closedir(d);
  return n;
}

TEST(old_formats_still_read) {
  int versions[STRATA_PLAN_FORMAT_VERSION + 1] = {0}, n = 0;
  n += old_samples_in(STRATA_SOURCE_DIR "/tests/fuzz/corpus/plan", versions, 0);
  n += old_samples_in(STRATA_SOURCE_DIR "/tests/cli/cases", versions, 2);
  n += old_sample(STRATA_SOURCE_DIR "/tests/bad-inputs/files/good.splan",
                  versions);
  n += old_sample(STRATA_SOURCE_DIR "/tests/bad-inputs/files/free.splan",
                  versions);
  printf("  %d plan files of formats 3 to 17 read:", n);
  for (int v = 3; v < STRATA_PLAN_FORMAT_VERSION; v++)
    if (versions[v]) printf(" %d of %d", versions[v], v);
  printf("\n");
  ASSERT(n >= 50);
  /* a sample of each shape: one shape, node groups, multi-token
   * prediction, the overlap, the MoE choices, a front, fallbacks */
  const int need[] = {3, 4, 5, 6, 9, 13, 14};
  for (size_t i = 0; i < sizeof need / sizeof need[0]; i++)
    ASSERT(versions[need[i]] > 0);
}

/* show's text and its JSON from one field list: every option of
 * plan_fields.h (a CONF row) is named by a line of export/plan_text.h's
 * table, or by its list of those said elsewhere or left out; a key
 * named there is a field's (no stale name). */
#define TEXT_KEYS_L(keys, ...) " " keys
#define TEXT_KEYS_W(keys, ...) " " keys
static const char text_keys[] =
    ST__PLAN_TEXT(TEXT_KEYS_L, TEXT_KEYS_W) " " ST__PLAN_TEXT_ELSEWHERE " ";
#define FIELD_KEY_CONF(k) k,
#define FIELD_KEY_ARCH(k) k,
#define FIELD_KEY_RUN(k) k,
#define FIELD_KEY_ITEM(k)
#define FIELD_KEY(part, t, m, key, ...) FIELD_KEY_##part(#key)
static const char *const field_keys[] = {STRATA_PLAN_FIELDS(FIELD_KEY) NULL};
#define FIELD_CONF_CONF 1
#define FIELD_CONF_ARCH 0
#define FIELD_CONF_RUN 0
#define FIELD_CONF_ITEM 0
#define FIELD_CONF(part, ...) FIELD_CONF_##part,
static const int field_conf[] = {STRATA_PLAN_FIELDS(FIELD_CONF) 0};

static int names_key(const char *list, const char *key) {
  char w[80];
  snprintf(w, sizeof w, " %s ", key);
  return strstr(list, w) != NULL;
}

TEST(text_rows_cover_the_fields) {
  int i = 0, n = 0;
  for (; field_keys[i]; i++) {
    if (!field_conf[i]) continue;
    n++;
    if (!names_key(text_keys, field_keys[i]))
      test_fail(__FILE__, __LINE__,
                "plan field '%s' has no line in export/plan_text.h (nor is it "
                "in ST__PLAN_TEXT_ELSEWHERE)",
                field_keys[i]);
  }
  ASSERT(n > 40); /* the options, switches and choices */
  /* every key the text table names is a field's */
  const char *s = text_keys;
  while (*s) {
    char w[80];
    size_t k = strcspn(s, " ");
    if (k && k < sizeof w) {
      memcpy(w, s, k);
      w[k] = 0;
      int found = 0;
      for (int j = 0; field_keys[j] && !found; j++)
        found = !strcmp(field_keys[j], w);
      if (!found)
        test_fail(__FILE__, __LINE__,
                  "export/plan_text.h names '%s', no key of plan_fields.h", w);
    }
    s += k + (s[k] == ' ');
  }
}

static const test_entry_t tests[] = {
    TEST_ENTRY(unknown_tags),
    TEST_ENTRY(tagged_records_refused),
    TEST_ENTRY(old_formats_still_read),
    TEST_ENTRY(time_limited_plan_keeps_its_bound),
    TEST_ENTRY(pareto_front_in_plan_files),
    TEST_ENTRY(pareto_names_tell_apart),
    TEST_ENTRY(fallback_plans_in_plan_files),
    TEST_ENTRY(fallbacks_the_same_plan),
    TEST_ENTRY(sched_closed_form),
    TEST_ENTRY(sched_p2p_and_uneven),
    TEST_ENTRY(sched_deterministic_and_ordered),
    TEST_ENTRY(stitch_preset_cluster),
    TEST_ENTRY(placement_shards),
    TEST_ENTRY(roundtrip_fixed_plans),
    TEST_ENTRY(roundtrip_collapses_stages),
    TEST_ENTRY(roundtrip_random_plans),
    TEST_ENTRY(decode_errors),
    TEST_ENTRY(decode_bad_payload),
    TEST_ENTRY(format5_multi_token_prediction),
    TEST_ENTRY(plan_fields_table),
    TEST_ENTRY(plan_choices_table),
    TEST_ENTRY(gemm_recipes_round_trip),
    TEST_ENTRY(grouped_gemm_defaults_on),
    TEST_ENTRY(decode_fuzz),
    TEST_ENTRY(save_and_load),
    TEST_ENTRY(encode_refuses_what_decode_refuses),
    TEST_ENTRY(offloads_in_exports),
    TEST_ENTRY(alloc_failures),
    TEST_ENTRY(diff_identical_and_changes),
    TEST_ENTRY(diff_tolerance),
    TEST_ENTRY(diff_huge_layer_ranges),
    TEST_ENTRY(megatron_gpt),
    TEST_ENTRY(megatron_llama_uneven),
    TEST_ENTRY(megatron_rules),
    TEST_ENTRY(deepspeed_config),
    TEST_ENTRY(torchtitan_models),
    TEST_ENTRY(torchtitan_degrees_and_rope),
    TEST_ENTRY(torchtitan_batch),
    TEST_ENTRY(rope_scaling_in_plan_files),
    TEST_ENTRY(exports_carry_model_settings),
    TEST_ENTRY(json_degrees_and_architecture),
    TEST_ENTRY(mixed_memory_per_rank),
    TEST_ENTRY(npu_plans_say_npu),
    TEST_ENTRY(megatron_rope_scaling_refusals),
    TEST_ENTRY(launch_script),
    TEST_ENTRY(deepspeed_refusals_and_topology),
    TEST_ENTRY(torch_module),
    TEST_ENTRY(timeline_trace),
    TEST_ENTRY(summary_and_json),
    TEST_ENTRY(plan_size_gpt3),
    TEST_ENTRY(golden_files),
    TEST_ENTRY(text_rows_cover_the_fields),
};

TEST_MAIN(tests)
