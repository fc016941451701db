/*
 * stack.h - the software stack a run uses, as data (intraop/stack.c): the
 * attention kernel, whose efficiency is a curve over the sequence, the
 * head size and the causal mask, and the path of the layers' other
 * kernels.  Each framework has a default stack (strata_stack_default); a
 * plan's options may override any key (strata plan/estimate --stack).
 * The table's rows and their sources: docs/cost-model.md, "The software
 * stack".
 */
#ifndef STRATA_STACK_H
#define STRATA_STACK_H

#include "strata/topo.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The fused attention kernel.  TE (Transformer Engine's cuDNN fused
 * attention) is the GPU table's own curve (topo/perf.c); the others are
 * rated against it. */
typedef enum {
  STRATA_ATTN_TE,   /* cuDNN fused attention through Transformer Engine */
  STRATA_ATTN_FA2,  /* FlashAttention 2 */
  STRATA_ATTN_FA3,  /* FlashAttention 3 (Hopper) */
  STRATA_ATTN_SDPA, /* PyTorch SDPA, its FlashAttention 2 backend */
  STRATA_ATTN_FLEX, /* PyTorch FlexAttention */
  STRATA_ATTN_FA1,  /* FlashAttention (1.x) */
  STRATA_ATTN_COUNT
} strata_attn_kernel_t;

/* The path of the GEMMs' neighbours (norms, activations, residuals): the
 * fused kernels of Transformer Engine / Megatron, PyTorch eager, or
 * torch.compile's fusions. */
typedef enum {
  STRATA_GEMM_PATH_TE,
  STRATA_GEMM_PATH_EAGER,
  STRATA_GEMM_PATH_COMPILE,
  STRATA_GEMM_PATH_COUNT
} strata_gemm_path_t;

/* PyTorch's CUDA caching allocator: as it comes (cudaMalloc'd segments,
 * free blocks merged only within one), or with expandable segments
 * (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True: one virtual range a
 * stream, physical pages mapped into it as it grows, CUDA's virtual
 * memory management) */
typedef enum {
  STRATA_ALLOC_CACHING,
  STRATA_ALLOC_EXPANDABLE,
  STRATA_ALLOC_COUNT
} strata_alloc_t;

typedef struct {
  int attn;  /* strata_attn_kernel_t; -1: the framework's default */
  int gemm;  /* strata_gemm_path_t; -1: the framework's default */
  int alloc; /* strata_alloc_t; -1: the framework's default */
} strata_stack_t;

/* Every key not given (-1). */
void strata_stack_init(strata_stack_t *s);
/* The default of framework f (strata_framework_t's value: 0 Megatron-LM,
 * 1 DeepSpeed, 2 torchtitan), the keys of *s not given filled in. */
void strata_stack_default(int framework, strata_stack_t *s);
/* "attn=fa3,gemm=compile,alloc=expandable" into *s (keys given override);
 * STRATA_EINVAL naming the key or value and what it takes. */
int strata_stack_parse(const char *text, strata_stack_t *s);
const char *strata_attn_kernel_name(int k);
const char *strata_gemm_path_name(int g);
const char *strata_alloc_name(int a);
/* Of the dynamic memory (activations and the largest op's buffers), what
 * allocator a leaves reserved but unusable at the peak. */
double strata_stack_fragmentation(int a);
/* Of the GPU table's fused-attention efficiency (TE's), what kernel k
 * reaches on sequences of seq keys a query sees, heads of head_dim, with
 * or without a causal mask, forward or backward, on the GPU of perf p
 * (its generation read from its tensor cores: FP4 Blackwell, FP8 Hopper,
 * else Ampere or older).  1 for TE. */
double strata_stack_attn_scale(const strata_perf_t *p, int k, double seq,
                               double head_dim, int causal, int bwd);
/* The streaming kernels' fraction of HBM bandwidth under GEMM path g, of
 * the table's (the fused kernels'). */
double strata_stack_stream_scale(int g);
/* Can kernel k run on the GPU of perf p (FlashAttention 3: Hopper)? */
int strata_stack_attn_runs(const strata_perf_t *p, int k);

#ifdef __cplusplus
}
#endif
#endif
