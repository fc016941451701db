/*
 * sub.c - structural hashing of stage subproblems and the set that
 * de-duplicates them: a model with 96 identical layers asks for O(L)
 * distinct stages, not O(L^2), and each is solved once.
 */
#include <string.h>

#include "pipeline/sub.h"

uint64_t st__graph_hash(const strata_graph_t *g) {
  strata_hash_t h;
  strata_hash_init(&h, 0x5354524154410001ULL);
  strata_hash_u64(&h, (uint64_t)g->micro_batch);
  strata_hash_u64(&h, (uint64_t)g->seq_len);
  for (int i = 0; i < g->n_tensors; i++) {
    const strata_tensor_t *t = &g->tensors[i];
    strata_hash_u64(&h, (uint64_t)t->ndim);
    for (int k = 0; k < t->ndim; k++)
      strata_hash_u64(&h, (uint64_t)t->shape[k]);
    strata_hash_u64(&h, (uint64_t)t->dtype * 4 + (uint64_t)t->kind);
  }
  for (int i = 0; i < g->n_ops; i++) {
    const strata_op_t *o = &g->ops[i];
    strata_hash_u64(&h, (uint64_t)o->kind);
    for (int k = 0; k < o->n_in; k++)
      strata_hash_u64(&h, (uint64_t)o->in[k]);
    for (int k = 0; k < o->n_out; k++)
      strata_hash_u64(&h, 1000000u + (uint64_t)o->out[k]);
    strata_hash_u64(&h, (uint64_t)(o->block + 1));
    strata_hash_u64(&h, (uint64_t)o->window * 65536u + (uint64_t)o->topk);
    strata_hash_f64(&h, o->capacity);
    strata_hash_u64(&h, (uint64_t)o->causal);
    strata_hash_str(&h, o->name);
  }
  for (int b = 0; b < g->n_blocks; b++) {
    strata_hash_u64(&h, (uint64_t)g->blocks[b].first_op);
    strata_hash_u64(&h, (uint64_t)g->blocks[b].n_ops);
    strata_hash_u64(&h, (uint64_t)g->blocks[b].repeat);
  }
  return strata_hash_final(&h);
}

uint64_t st__sub_key(uint64_t graph_hash, const strata_stage_opts_t *so) {
  strata_hash_t h;
  strata_hash_init(&h, graph_hash);
  strata_hash_u64(&h, (uint64_t)so->mesh.ndim);
  for (int a = 0; a < so->mesh.ndim; a++) {
    strata_hash_u64(&h, (uint64_t)so->mesh.shape[a]);
    strata_hash_f64(&h, so->mesh.axis[a].bandwidth);
    strata_hash_f64(&h, so->mesh.axis[a].latency);
  }
  int v[] = {so->layer_begin,
             so->layer_end,
             so->with_prologue,
             so->with_epilogue,
             (int)so->objective,
             (int)so->recipe,
             so->zero_stage,
             (int)so->recompute,
             so->sequence_parallel,
             so->megatron_tp_axes,
             so->in_flight,
             so->micro_batches,
             so->outer_dp,
             so->homogeneous,
             so->reduce,
             so->fp8,
             so->tp_comm_overlap,
             so->ep_comm_overlap,
             so->perf.sms,
             so->cp,
             so->cp_comm,
             so->ep_outer,
             (int)so->ep_axes};
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
    strata_hash_u64(&h, (uint64_t)(int64_t)v[i]);
  if (so->recompute_modules) /* keys without it as they were */
    strata_hash_u64(&h, 0x52434d00u | so->recompute_modules);
  /* a MoE model's eager layers: other keys as they were */
  if (so->moe_host > 0) strata_hash_f64(&h, so->moe_host);
  /* another attention kernel than TE's: other keys as they were */
  if (so->attn_kernel) strata_hash_u64(&h, 0x41544e00u | so->attn_kernel);
  double d[] = {so->alpha,
                so->memory_budget,
                so->outer_link.bandwidth,
                so->outer_link.latency,
                so->perf.peak_flops,
                so->perf.peak_fp8_flops,
                so->perf.hbm_bandwidth,
                so->perf.gemm_max,
                so->perf.gemm_w0,
                so->perf.gemm_k0,
                so->perf.mem_eff,
                so->perf.stream_eff,
                so->perf.attn_fwd,
                so->perf.attn_bwd,
                so->perf.attn_s0,
                so->perf.launch_seconds,
                so->fastest_bandwidth,
                so->mip_gap,
                so->ep_link.bandwidth,
                so->ep_link.latency,
                so->moe_imbalance};
  for (size_t i = 0; i < sizeof d / sizeof d[0]; i++)
    strata_hash_f64(&h, d[i]);
  if (so->fp8) { /* only narrow GEMMs use them: other keys as they were */
    strata_hash_f64(&h, so->perf.gemm_k0_narrow);
    strata_hash_f64(&h, so->perf.sustain_narrow);
  }
  return strata_hash_final(&h);
}

void st__subset_init(st__subset_t *s) {
  memset(s, 0, sizeof *s);
}

void st__subset_free(st__subset_t *s) {
  for (int i = 0; i < s->n; i++) {
    strata_stage_result_destroy(s->v[i]->res);
    strata_free(s->v[i]->errmsg);
    strata_free(s->v[i]);
  }
  strata_free(s->v);
  strata_free(s->slot);
  st__subset_init(s);
}

static int rehash(st__subset_t *s, int nslots) {
  int *slot = strata_malloc(sizeof(int) * (size_t)nslots);
  if (!slot) return strata_error(STRATA_ENOMEM, "out of memory");
  for (int i = 0; i < nslots; i++)
    slot[i] = -1;
  for (int i = 0; i < s->n; i++) {
    int j = (int)(s->v[i]->key & (uint64_t)(nslots - 1));
    while (slot[j] >= 0)
      j = (j + 1) & (nslots - 1);
    slot[j] = i;
  }
  strata_free(s->slot);
  s->slot = slot;
  s->nslots = nslots;
  return 0;
}

static int push(st__subset_t *s, st__sub_t *sub) {
  if (s->n == s->cap) {
    int cap = s->cap ? 2 * s->cap : 64;
    st__sub_t **v = strata_realloc(s->v, sizeof *v * (size_t)cap);
    if (!v) return strata_error(STRATA_ENOMEM, "out of memory");
    s->v = v;
    s->cap = cap;
  }
  s->v[s->n++] = sub;
  if (2 * s->n > s->nslots) {
    int rc = rehash(s, s->nslots ? 2 * s->nslots : 128);
    if (rc) s->n--; /* the caller still owns sub */
    return rc;
  }
  int j = (int)(sub->key & (uint64_t)(s->nslots - 1));
  while (s->slot[j] >= 0)
    j = (j + 1) & (s->nslots - 1);
  s->slot[j] = s->n - 1;
  return 0;
}

int st__subset_get(st__subset_t *s, const strata_graph_t *g, uint64_t gh,
                   const strata_stage_opts_t *so, st__sub_t **out) {
  uint64_t key = st__sub_key(gh, so);
  *out = NULL;
  s->requests++;
  if (s->nslots) {
    int j = (int)(key & (uint64_t)(s->nslots - 1));
    for (; s->slot[j] >= 0; j = (j + 1) & (s->nslots - 1))
      if (s->v[s->slot[j]]->key == key) {
        *out = s->v[s->slot[j]];
        return 0;
      }
  }
  st__sub_t *sub = strata_calloc(1, sizeof *sub);
  if (!sub) return strata_error(STRATA_ENOMEM, "out of memory");
  sub->g = g;
  sub->graph_hash = gh;
  sub->so = *so;
  sub->key = key;
  sub->err = 1; /* not solved yet */
  int rc = push(s, sub);
  if (rc) {
    strata_free(sub);
    return rc;
  }
  *out = sub;
  return 0;
}
