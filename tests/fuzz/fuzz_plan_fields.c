/*
 * fuzz_plan_fields.c - plan files with a valid checksum and hostile
 * values: a good plan (the .splan seeds of corpus/plan, decoded once) has
 * its decoded fields set to values the input picks -- counts, degrees,
 * ranks, indices, times, sizes, names -- then is encoded field by field
 * (st__payload_encode: format 18, and it checks nothing) and wrapped with a
 * valid CRC, as a hand-edited plan file would be.  fuzz_plan mutates bytes, so
 * most of its inputs die at a varint or a range; this one reaches the checks
 * that hold fields against each other, and the readers behind them.
 *
 * Properties: the decoder refuses with a message, or the plan it accepts
 * encodes again (the encoder's checks are the decoder's) and every reader
 * runs without a crash or undefined behaviour: the summary, JSON, diff
 * against itself and its base, every exporter, and the device map and
 * hostfiles on a preset and on a mixed cluster.
 *
 * Input: byte 0 picks the base plan; then records of 3 bytes, each (field
 * selector, value selector, a small number).
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "fuzz_util.h"
#include "merge/merge_int.h"
#include "strata/strata.h"

#define HDR 20
#define MAX_BASE 16

static strata_plan_t *base[MAX_BASE];
static int n_base;
static strata_cluster_t *clusters[2];

static void check(int ok, const char *what) {
  if (ok) return;
  fprintf(stderr, "fuzz_plan_fields: %s (%s)\n", what, strata_last_error());
  abort();
}

static void put32(unsigned char *p, uint32_t v) {
  for (int i = 0; i < 4; i++)
    p[i] = (unsigned char)(v >> (8 * i));
}

static void load_bases(void) {
  DIR *d = opendir(FUZZ_PLAN_SEEDS);
  struct dirent *e;
  check(d != NULL, "no seed folder");
  while ((e = readdir(d)) && n_base < MAX_BASE) {
    char path[1024];
    size_t n = strlen(e->d_name);
    if (n < 6 || strcmp(e->d_name + n - 6, ".splan")) continue;
    snprintf(path, sizeof path, "%s/%s", FUZZ_PLAN_SEEDS, e->d_name);
    if (!strata_plan_load(path, &base[n_base])) n_base++;
  }
  closedir(d);
  check(n_base > 0, "no seed plan decodes");
  strata_cluster_load("dgx-h100:4", &clusters[0]);
  strata_cluster_load(FUZZ_MIXED_SPEC, &clusters[1]);
  strata_error_clear();
}

static strata_plan_t *copy_of(const strata_plan_t *p) {
  unsigned char *d = NULL;
  size_t n = 0;
  strata_plan_t *q = NULL;
  check(strata_plan_encode(p, &d, &n) == 0, "a seed does not encode");
  check(strata_plan_decode(d, n, "seed", &q) == 0, "a seed does not decode");
  strata_free(d);
  return q;
}

/* The fields a record may set: every int and double of the plan. */
typedef struct {
  int *i[4096];
  double *f[4096];
  int ni, nf;
} fields_t;

static void add_i(fields_t *t, int *v) {
  if (t->ni < 4096) t->i[t->ni++] = v;
}
static void add_f(fields_t *t, double *v) {
  if (t->nf < 4096) t->f[t->nf++] = v;
}

static void header_fields(fields_t *t, strata_plan_t *p) {
  int *ints[] = {&p->devices,      &p->tp,          &p->pp,
                 &p->dp,           &p->micro_batch, &p->global_batch,
                 &p->n_micro,      &p->zero_stage,  &p->sequence_parallel,
                 &p->megatron,     &p->vpp,         &p->seq_len,
                 &p->layers,       &p->hidden,      &p->heads,
                 &p->kv_heads,     &p->ffn,         &p->vocab,
                 &p->max_position, &p->cp,          &p->ep,
                 &p->etp,          &p->experts,     &p->topk,
                 &p->moe_ffn,      &p->shared_ffn,  &p->first_dense,
                 &p->moe_layers,   &p->q_lora,      &p->kv_lora,
                 &p->qk_nope,      &p->qk_rope,     &p->v_head,
                 &p->head_dim,     &p->window,      &p->window_every,
                 &p->mtp_layers,   &p->moe_every,   &p->nope_every,
                 &p->cp_comm,      &p->fp8,         &p->qk_norm};
  double *dbl[] = {&p->alpha,
                   &p->step_seconds,
                   &p->tokens_per_second,
                   &p->mfu,
                   &p->peak_memory_bytes,
                   &p->gpu_memory_bytes,
                   &p->gpu_peak_flops,
                   &p->model_flops_per_step,
                   &p->step_items.compute,
                   &p->step_items.bubble,
                   &p->moe_imbalance,
                   &p->capacity,
                   &p->rope_theta,
                   &p->rotary_percent};
  for (size_t k = 0; k < sizeof ints / sizeof ints[0]; k++)
    add_i(t, ints[k]);
  for (size_t k = 0; k < sizeof dbl / sizeof dbl[0]; k++)
    add_f(t, dbl[k]);
}

static void stage_fields(fields_t *t, strata_plan_t *p) {
  for (int s = 0; s < p->n_stages; s++) {
    strata_plan_stage_t *st = &p->stages[s];
    int *ints[] = {&st->layer_begin,   &st->layer_end, &st->with_prologue,
                   &st->with_epilogue, &st->nodes,     &st->gpus_per_node,
                   &st->first_rank,    &st->in_flight, &st->rank,
                   &st->group,         &st->mesh.ndim, &st->mesh.shape[0],
                   &st->mesh.shape[1]};
    for (size_t k = 0; k < sizeof ints / sizeof ints[0]; k++)
      add_i(t, ints[k]);
    add_f(t, &st->fwd_seconds);
    add_f(t, &st->bwd_seconds);
    add_f(t, &st->sync_seconds);
    add_f(t, &st->mesh.axis[0].bandwidth);
    add_f(t, &st->mesh.axis[1].latency);
    if (s + 1 < p->n_stages && p->p2p_seconds) add_f(t, &p->p2p_seconds[s]);
    strata_stage_result_t *r = st->result;
    if (!r) continue;
    add_i(t, &r->devices);
    add_f(t, &r->mem.total);
    add_f(t, &r->fwd_seconds);
    for (int i = 0; i < r->n_ops && i < 8; i++) {
      add_i(t, &r->ops[i].layer);
      add_i(t, &r->ops[i].repeat);
      add_f(t, &r->ops[i].mem_bytes);
    }
  }
}

static void tail_fields(fields_t *t, strata_plan_t *p) {
  for (int r = 0; r < p->pp && p->ranks; r++) {
    add_f(t, &p->ranks[r].mem.total);
    add_f(t, &p->ranks[r].end_seconds);
    add_f(t, &p->ranks[r].sync_seconds);
  }
  for (int i = 0; i < p->n_top; i++) {
    strata_plan_config_t *c = &p->top[i];
    int *ints[] = {&c->tp, &c->pp, &c->dp,  &c->micro_batch, &c->vpp,
                   &c->cp, &c->ep, &c->etp, &c->group};
    for (size_t k = 0; k < sizeof ints / sizeof ints[0]; k++)
      add_i(t, ints[k]);
    add_f(t, &c->step_seconds);
  }
  add_i(t, &p->n_groups);
}

static int int_value(unsigned v, unsigned small, int old) {
  static const int table[] = {0,
                              1,
                              -1,
                              2,
                              3,
                              16,
                              1024,
                              1025,
                              1 << 20,
                              1 << 30,
                              (1 << 30) - 1,
                              2147483647,
                              -2147483647,
                              64,
                              65};
  unsigned n = sizeof table / sizeof table[0];
  if (v < n) return table[v];
  if (v < n + 8) return old + (int)small - 128; /* near the old value */
  return (int)small;
}

static double dbl_value(unsigned v, unsigned small, double old) {
  static const double table[] = {0.0, -0.0, 1.0, -1.0, 1e308, -1e-300, 1e-12};
  unsigned n = sizeof table / sizeof table[0];
  if (v < n) return table[v];
  if (v == n) return NAN;
  if (v == n + 1) return INFINITY;
  if (v == n + 2) return -INFINITY;
  return old * (small / 16.0);
}

/* A name: the old one, or bytes the input chose (a control character, an
 * invalid UTF-8 byte, a quote). */
static void set_name(char **s, unsigned small) {
  static const char *names[] = {"",      "a\nb",       "\x1b[2J",    "\xff\xfe",
                                "\"'$(", "dgx-h100:4", "/etc/passwd"};
  strata_free(*s);
  *s = strata_strdup(names[small % (sizeof names / sizeof names[0])]);
}

static void mutate(strata_plan_t *p, const uint8_t *d, size_t n) {
  fields_t *t = calloc(1, sizeof *t);
  if (!t) abort();
  header_fields(t, p);
  stage_fields(t, p);
  tail_fields(t, p);
  for (size_t k = 0; k + 3 <= n && k < 3 * 32; k += 3) {
    unsigned f = d[k], v = d[k + 1], small = d[k + 2];
    if (v >= 250) { /* a name */
      char **s = v == 250 ? &p->model : v == 251 ? &p->cluster : NULL;
      if (!s && p->stages[0].result && p->stages[0].result->n_ops)
        s = &p->stages[0].result->ops[f % p->stages[0].result->n_ops].name;
      if (s) set_name(s, small);
    } else if (v & 1) {
      int **x = &t->i[(f * 7 + small) % (unsigned)t->ni];
      **x = int_value(v >> 1, small, **x);
    } else {
      double **x = &t->f[(f * 5 + small) % (unsigned)t->nf];
      **x = dbl_value(v >> 1, small, **x);
    }
  }
  free(t);
}

/* A plan holds pp ranks: a record that raised pp gets zeroed ranks up to
 * it (the encoder writes pp of them), or the input is dropped past 1024
 * (found by the fuzzer itself: a heap overflow in the encoder's put_rank
 * on a plan this target had made inconsistent). */
static int fit_ranks(strata_plan_t *p, int had) {
  if (p->pp <= had) return 1;
  if (p->pp > 1024) return 0;
  strata_plan_rank_t *r = strata_realloc(p->ranks, sizeof *r * (size_t)p->pp);
  if (!r) return 0;
  memset(r + had, 0, sizeof *r * (size_t)(p->pp - had));
  p->ranks = r;
  return 1;
}

static unsigned char *wrap(const strata_plan_t *p, size_t *len) {
  strata_buf_t raw;
  if (st__payload_encode(p, &raw)) return NULL;
  uLongf zlen = compressBound((uLong)raw.len);
  unsigned char *f = malloc(HDR + zlen);
  if (!f || compress2(f + HDR, &zlen, (const Bytef *)raw.p, (uLong)raw.len,
                      9) != Z_OK)
    abort();
  memcpy(f, "SPLN", 4);
  f[4] = STRATA_PLAN_FORMAT_VERSION; /* tagged records */
  f[5] = f[6] = f[7] = 0;
  put32(f + 8, (uint32_t)crc32(0, f + HDR, (uInt)zlen));
  put32(f + 12, (uint32_t)raw.len);
  put32(f + 16, (uint32_t)zlen);
  *len = HDR + zlen;
  strata_buf_free(&raw);
  return f;
}

static void devices(const strata_plan_t *p) {
  for (int k = 0; k < 2; k++) {
    strata_device_map_t *m = NULL;
    char *t = NULL;
    if (!clusters[k] || strata_device_map(p, clusters[k], &m)) continue;
    if (!strata_device_map_summary(m, &t)) strata_free(t);
    if (!strata_device_map_json(m, &t)) strata_free(t);
    for (int f = 0; f < 3; f++)
      if (!strata_export_hostfile(m, (strata_hostfile_format_t)f, "x", &t))
        strata_free(t);
    strata_device_map_destroy(m);
  }
}

static void readers(const strata_plan_t *p, const strata_plan_t *b) {
  char *t = NULL;
  int differs = 1;
  strata_export_opts_t o;
  strata_export_opts_init(&o);
  o.gpus_per_node = 8;
  if (!strata_plan_summary(p, &t)) strata_free(t);
  if (!strata_plan_json(p, &t)) strata_free(t);
  if (!strata_plan_diff(p, p, 0, &t, &differs)) {
    check(!differs, "a plan differs from itself");
    strata_free(t);
  }
  if (!strata_plan_diff(b, p, 1, &t, &differs)) strata_free(t);
  if (!strata_export_megatron(p, &t)) strata_free(t);
  if (!strata_export_megatron_launch(p, &o, &t)) strata_free(t);
  if (!strata_export_deepspeed(p, &t)) strata_free(t);
  if (!strata_export_deepspeed_topology(p, &t)) strata_free(t);
  if (!strata_export_torch(p, &o, &t)) strata_free(t);
  if (!strata_export_torchtitan(p, &t)) strata_free(t);
  if (!strata_export_timeline(p, &t)) strata_free(t);
  if (!strata_export_html(p, &o, &t)) strata_free(t);
  devices(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_setup();
  if (!n_base) load_bases();
  if (size < 1) return 0;
  strata_error_clear();
  const strata_plan_t *b = base[data[0] % n_base];
  strata_plan_t *p = copy_of(b), *q = NULL;
  mutate(p, data + 1, size - 1);
  if (!fit_ranks(p, b->pp)) {
    strata_plan_destroy(p);
    return 0;
  }
  size_t len = 0;
  unsigned char *file = wrap(p, &len), *again = NULL;
  strata_plan_destroy(p);
  if (!file) return 0; /* out of memory */
  int rc = strata_plan_decode(file, len, "fuzz.splan", &q);
  free(file);
  if (rc) {
    check(rc < 0 && strata_last_error()[0] && !q, "failure without message");
    return 0;
  }
  check(strata_plan_encode(q, &again, &len) == 0,
        "a plan the decoder accepts does not encode");
  strata_free(again);
  readers(q, b);
  strata_plan_destroy(q);
  return 0;
}
