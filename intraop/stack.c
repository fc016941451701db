/*
 * stack.c - the software stack's table (include/strata/stack.h): each
 * attention kernel's speed as published, and each framework's default.
 *
 * The attention rows are the FlashAttention-3 paper's forward sweeps on an
 * H100 80GB SXM5 in BF16 (Shah et al. 2024, arXiv:2407.08608, Figure 5:
 * batch x sequence = 16k tokens, 2048 hidden), TFLOP/s at sequences of
 * 512 to 16k for FlashAttention 2, cuDNN and FlashAttention 3, by head
 * size and mask.  A kernel's scale is its figure over cuDNN's at the same
 * sequence, head size and mask (interpolated in log2 of the sequence and
 * of the head size, held flat beyond the sweep), so that the GPU table's
 * own curve, set for Transformer Engine's cuDNN attention, stays as it is
 * for Megatron-LM.  docs/cost-model.md ("The software stack") lists every
 * source and what is assumed where none was found.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "strata/stack.h"

#include "strata/core.h"

#define N_SEQ 6 /* 512, 1k, 2k, 4k, 8k, 16k */

typedef struct {
  int head_dim, causal;
  double fa2[N_SEQ], cudnn[N_SEQ], fa3[N_SEQ];
} attn_row_t;

/* FlashAttention-3 paper, Figure 5 (H100 80GB SXM5, BF16, forward) */
static const attn_row_t h100[] = {
    {64,
     0,
     {282, 306, 318, 321, 322, 324},
     {335, 373, 395, 408, 412, 413},
     {333, 392, 460, 476, 496, 497}},
    {128,
     0,
     {309, 350, 362, 368, 370, 370},
     {497, 574, 617, 609, 600, 595},
     {467, 565, 625, 638, 646, 648}},
    {128,
     1,
     {191, 260, 298, 319, 333, 335},
     {315, 410, 484, 518, 529, 539},
     {292, 423, 521, 579, 602, 616}},
    {256,
     0,
     {208, 251, 278, 293, 297, 298},
     {308, 391, 450, 483, 497, 509},
     {286, 427, 537, 612, 628, 642}},
};
#define N_H100 ((int)(sizeof h100 / sizeof h100[0]))

/* FlexAttention over FlashAttention 2: "90 % of FlashAttention2's
 * performance in the forward pass and 85 % in the backward pass" (PyTorch,
 * "FlexAttention: The Flexibility of PyTorch with the Performance of
 * FlashAttention", its kernel benchmarks on an H100) */
#define FLEX_FWD 0.90
#define FLEX_BWD 0.85
/* PyTorch's eager norms and activations over fused ones: 0.49-0.51 of HBM
 * (pyptx "Performance", layer_norm and SwiGLU at 2048 x 8192 on an H100)
 * against the table's 0.7 (topo/perf.c, STREAM_EFF) */
/* FlashAttention 1 over 2: the FlashAttention-2 paper's "around 2x
 * speedup compared to FlashAttention" (Dao 2023, arXiv:2307.08691) puts
 * it near 0.5; set to 0.6 on LLM Foundry's published FSDP runs of mid
 * 2023, which ran FlashAttention 1 (bench_fidelity, "LLM Foundry": mean
 * absolute error 3.5 % H100, 4.6 % A100; 0.5 gives 9.5 % and 11.7 %) */
#define FA1_OF_FA2 0.6
#define EAGER_STREAM (0.50 / 0.70)

static const char *const attn_names[] = {"te",   "fa2",  "fa3",
                                         "sdpa", "flex", "fa1"};
static const char *const gemm_names[] = {"te", "eager", "compile"};
static const char *const alloc_names[] = {"caching", "expandable"};

/* The caching allocator's slack over the dynamic memory: GMLake (Guo et
 * al., ASPLOS'24) stitches the allocator's blocks with CUDA's virtual
 * memory management and cuts fragmentation by 15 % on average (up to 33 %)
 * over eight LLMs on A100 80GB: the share such stitching removes.
 * Expandable segments map the pages of one growing virtual range with the
 * same API (PyTorch's CUDACachingAllocator.cpp, ExpandableSegment), so a
 * run with them is charged none of it; what they leave (a live block
 * between two free ones, the small blocks' own pool) is not modelled. */
static const double alloc_frag[] = {0.15, 0.0};

void strata_stack_init(strata_stack_t *s) {
  s->attn = s->gemm = s->alloc = -1;
}

/* Megatron-LM: Transformer Engine (its cuDNN attention, fused kernels);
 * Megatron-DeepSpeed: FlashAttention 2 (--use-flash-attn-v2) and its
 * fused kernels; torchtitan: SDPA and eager PyTorch (compile off unless
 * asked: its job config's compile.enable). */
void strata_stack_default(int framework, strata_stack_t *s) {
  static const int attn[] = {STRATA_ATTN_TE, STRATA_ATTN_FA2, STRATA_ATTN_SDPA};
  static const int gemm[] = {STRATA_GEMM_PATH_TE, STRATA_GEMM_PATH_TE,
                             STRATA_GEMM_PATH_EAGER};
  int f = framework >= 0 && framework < 3 ? framework : 0;
  if (s->attn < 0) s->attn = attn[f];
  if (s->gemm < 0) s->gemm = gemm[f];
  /* none of the three sets PYTORCH_CUDA_ALLOC_CONF itself (Megatron-
   * Bridge's performance recipes do, per recipe: --stack alloc=) */
  if (s->alloc < 0) s->alloc = STRATA_ALLOC_CACHING;
}

const char *strata_attn_kernel_name(int k) {
  return k >= 0 && k < STRATA_ATTN_COUNT ? attn_names[k] : "?";
}

const char *strata_gemm_path_name(int g) {
  return g >= 0 && g < STRATA_GEMM_PATH_COUNT ? gemm_names[g] : "?";
}

const char *strata_alloc_name(int a) {
  return a >= 0 && a < STRATA_ALLOC_COUNT ? alloc_names[a] : "?";
}

double strata_stack_fragmentation(int a) {
  return a >= 0 && a < STRATA_ALLOC_COUNT ? alloc_frag[a] : alloc_frag[0];
}

static int lookup(const char *v, size_t n, const char *const *names, int count,
                  int *out) {
  for (int i = 0; i < count; i++)
    if (strlen(names[i]) == n && !strncmp(v, names[i], n)) {
      *out = i;
      return 0;
    }
  return -1;
}

static int parse_one(const char *item, size_t len, strata_stack_t *s) {
  const char *eq = memchr(item, '=', len);
  if (!eq)
    return strata_error(STRATA_EINVAL,
                        "--stack: '%.*s' is not KEY=VALUE (keys: attn, gemm, "
                        "alloc)",
                        (int)len, item);
  size_t kn = (size_t)(eq - item), vn = len - kn - 1;
  if (kn == 4 && !strncmp(item, "attn", 4)) {
    if (!lookup(eq + 1, vn, attn_names, STRATA_ATTN_COUNT, &s->attn)) return 0;
    return strata_error(STRATA_EINVAL,
                        "--stack: unknown attention kernel '%.*s' (te, fa1, "
                        "fa2, fa3, sdpa or flex)",
                        (int)vn, eq + 1);
  }
  if (kn == 4 && !strncmp(item, "gemm", 4)) {
    if (!lookup(eq + 1, vn, gemm_names, STRATA_GEMM_PATH_COUNT, &s->gemm))
      return 0;
    return strata_error(STRATA_EINVAL,
                        "--stack: unknown GEMM path '%.*s' (te, eager or "
                        "compile)",
                        (int)vn, eq + 1);
  }
  if (kn == 5 && !strncmp(item, "alloc", 5)) {
    if (!lookup(eq + 1, vn, alloc_names, STRATA_ALLOC_COUNT, &s->alloc))
      return 0;
    return strata_error(STRATA_EINVAL,
                        "--stack: unknown allocator '%.*s' (caching or "
                        "expandable)",
                        (int)vn, eq + 1);
  }
  return strata_error(STRATA_EINVAL,
                      "--stack: unknown key '%.*s' (attn, gemm or alloc)",
                      (int)kn, item);
}

int strata_stack_parse(const char *text, strata_stack_t *s) {
  if (!text || !*text)
    return strata_error(STRATA_EINVAL, "--stack: empty (KEY=VALUE,...)");
  const char *p = text;
  for (;;) {
    const char *c = strchr(p, ',');
    size_t n = c ? (size_t)(c - p) : strlen(p);
    int rc = parse_one(p, n, s);
    if (rc) return rc;
    if (!c) return 0;
    p = c + 1;
  }
}

/* A curve's value at seq (log2-interpolated, flat beyond the sweep). */
static double at_seq(const double *v, double seq) {
  double x = log2(seq > 1 ? seq : 1) - 9; /* 512 -> 0 */
  if (x <= 0) return v[0];
  if (x >= N_SEQ - 1) return v[N_SEQ - 1];
  int i = (int)x;
  double t = x - i;
  return v[i] * (1 - t) + v[i + 1] * t;
}

/* Kernel (FA2 or FA3) over cuDNN on one row. */
static double row_ratio(const attn_row_t *r, int fa3, double seq) {
  double k = at_seq(fa3 ? r->fa3 : r->fa2, seq), c = at_seq(r->cudnn, seq);
  return c > 0 ? k / c : 1;
}

static const attn_row_t *find(int head_dim, int causal) {
  for (int i = 0; i < N_H100; i++)
    if (h100[i].head_dim == head_dim && h100[i].causal == causal)
      return &h100[i];
  return NULL;
}

/* Non-causal ratio at a head size (log2-interpolated over 64, 128, 256);
 * a causal mask scales it as it scales the 128 rows (the only head size
 * the paper sweeps with the mask). */
static double h100_ratio(int fa3, double seq, double hd, int causal) {
  static const int hds[] = {64, 128, 256};
  double x = log2(hd > 1 ? hd : 1) - 6, r;
  if (x <= 0)
    r = row_ratio(find(64, 0), fa3, seq);
  else if (x >= 2)
    r = row_ratio(find(256, 0), fa3, seq);
  else {
    int i = (int)x;
    double t = x - i;
    r = row_ratio(find(hds[i], 0), fa3, seq) * (1 - t) +
        row_ratio(find(hds[i + 1], 0), fa3, seq) * t;
  }
  if (causal)
    r *= row_ratio(find(128, 1), fa3, seq) / row_ratio(find(128, 0), fa3, seq);
  return r;
}

/* Hopper and later: the paper's rows (Blackwell: the same, for want of a
 * published sweep of these kernels on it); Ampere and older: FlashAttention
 * 2 is the fused kernel TE's is measured against (no published A100 sweep
 * sets one above the other), so 1. */
static int hopper_or_later(const strata_perf_t *p) {
  return p && p->peak_fp8_flops > 0;
}

int strata_stack_attn_runs(const strata_perf_t *p, int k) {
  return k != STRATA_ATTN_FA3 ||
         (p && p->peak_fp8_flops > 0 && !(p->peak_fp4_flops > 0));
}

double strata_stack_attn_scale(const strata_perf_t *p, int k, double seq,
                               double head_dim, int causal, int bwd) {
  if (k <= STRATA_ATTN_TE || k >= STRATA_ATTN_COUNT) return 1;
  double fa2 = hopper_or_later(p) ? h100_ratio(0, seq, head_dim, causal) : 1;
  switch (k) {
  case STRATA_ATTN_FA3:
    return hopper_or_later(p) ? h100_ratio(1, seq, head_dim, causal) : fa2;
  case STRATA_ATTN_FLEX:
    return fa2 * (bwd ? FLEX_BWD : FLEX_FWD);
  case STRATA_ATTN_FA1:
    return fa2 * FA1_OF_FA2;
  default: /* FA2, and SDPA's FlashAttention 2 backend */
    return fa2;
  }
}

double strata_stack_stream_scale(int g) {
  return g == STRATA_GEMM_PATH_EAGER ? EAGER_STREAM : 1;
}
