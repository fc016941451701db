/*
 * perf.c - how fast a GPU runs the kernels of a training step: the
 * roofline of docs/cost-model.md ("Time").
 *
 * A GEMM's achieved fraction of the peak is a product of terms, each a
 * documented effect:
 *   gemm_max           the most the largest GEMMs reach (maximum
 *                      achievable matmul FLOP/s, measured per GPU model);
 *   q(m) q(n)          the fill of the last 128-wide tile along m and n
 *                      (tile quantisation);
 *   w / (w + gemm_w0)  w = output tiles of 128 x 128 per SM: a GEMM with
 *                      too few tiles leaves SMs idle (tile and wave
 *                      quantisation, NVIDIA's "Matrix Multiplication
 *                      Background" guide), smoothed because cuBLAS picks
 *                      smaller tiles and split-k for small outputs;
 *   k / (k + gemm_k0)  a short inner dimension does little work per tile
 *                      load and store (prologue/epilogue overhead); an
 *                      FP8 or FP4 GEMM's main loop is faster a k-step
 *                      while that overhead is not, so its k0 is larger.
 * The time is the larger of that compute time and the bytes the GEMM must
 * move at the achieved HBM bandwidth, plus one launch.  Streaming kernels
 * are charged by bytes only; fused attention by its FLOPs at its own
 * measured fraction of the peak.
 *
 * The table holds the figures per GPU model; docs/cost-model.md gives the
 * source of each.  Calibration (strata calibrate) scales them per cluster.
 */
#include <math.h>
#include <string.h>

#include "topo/node.h"

#define GIB (1024.0 * 1024.0 * 1024.0)
#define MIB (1024.0 * 1024.0)

typedef struct {
  const char *name;
  double fp8, fp4, hbm;
  int sms;
  double gemm_max, mem_eff, attn_fwd, attn_bwd, attn_s0;
  double workspace, nccl_comm, nccl_pair;
  double nvlink_eff, pcie_eff, net_eff;
} row_t;

/* Shared by every GPU: the tile and inner-dimension terms of the GEMM
 * curve and the launch, fitted once to the public cuBLAS/cuBLASLt sweeps
 * of the A100, H100 and B200 (10 % RMS, docs/cost-model.md); the CUDA
 * context with its lazily loaded kernels (PyTorch PR #86509: 274 MiB lazy
 * to 636 MiB eager). */
#define GEMM_W0 0.5
#define GEMM_K0 96.0
/* The k term of FP8 GEMMs, fitted once to the public H800 sweeps (the
 * H100 SXM's die and clocks): TileLang's FP8 GEMM at M = N = 8192, K 256
 * to 16384 (376 to 1523 TFLOP/s, tile-ai/tilelang benchmark/matmul_fp8)
 * and DeepGEMM's dense M = 4096 shapes (590 to 1358 TFLOP/s, the
 * deepseek-ai/DeepGEMM README): 6 % RMS with gemm_max unchanged
 * (docs/cost-model.md, "FP8 GEMMs by shape").  Used for FP4 too, for
 * want of a public sweep. */
#define GEMM_K0_NARROW 800.0
#define LAUNCH 4e-6
/* Set on Narayanan et al. 2021, the only end-to-end runs the model is
 * built on (docs/fidelity.md, "Parameters set on the paper"), for every
 * GPU alike:
 *  - SUSTAIN: the fraction of a microbenchmark's tensor-core rate (the
 *    GEMM curve, fused attention) that GEMMs sustain inside a training
 *    step -- clocks under sustained load, allocator and launch gaps;
 *  - STREAM_EFF: the fraction of HBM bandwidth the framework's fused
 *    elementwise, norm and softmax kernels reach (PyTorch's own unfused
 *    layer_norm and SwiGLU reach 0.49-0.51 on an H100 at 2048 x 8192,
 *    pyptx "Performance"; Megatron-LM fuses them). */
#define SUSTAIN 0.86
/* Set on the H100 rows of NVIDIA's Megatron-Bridge performance summaries
 * (docs/fidelity.md, "Today's runs: the two parameters"), for every GPU
 * alike:
 *  - SUSTAIN_NARROW: of SUSTAIN, what FP8 and FP4 GEMMs keep in a step
 *    (their microbenchmark curve is fitted to short sweeps; a step's
 *    narrow tensor-core work runs at the power limit's clocks);
 *  - MOE_HOST: what one MoE layer adds to a micro-batch's forward and
 *    backward where no CUDA graph captures it, beyond its kernels -- the
 *    device waiting on the host that issues the layer's many small
 *    kernels (the token counts read back for a dropless dispatch, the
 *    grouped GEMMs' per-expert setup).  Full-iteration graphs, or a graph
 *    of the whole MoE layer, remove it. */
#define SUSTAIN_NARROW 0.92
#define MOE_HOST 2.2e-3
#define STREAM_EFF 0.7
#define CONTEXT (512 * MIB)

/* name, fp8 and fp4 dense FLOP/s, HBM bytes/s, SMs; gemm_max (maximum
 * achievable matmul / peak); streaming fraction of HBM; fused attention forward
 * and backward fraction of peak and its half-sequence; workspaces; NCCL buffers
 * per communicator (> 2 ranks, 2 ranks); NCCL bus bandwidth over line rate on
 * NVLink/XGMI, PCIe and the network.  Sources per figure in docs/cost-model.md
 * ("The GPU table"). */
static const row_t rows[] = {
    {"A100-40GB", 0, 0, 1555e9, 108, 0.869, 0.81, 0.71, 0.60, 512, 22.25 * MIB,
     688e6, 544e6, 0.78, 0.80, 0.94},
    {"A100-80GB", 0, 0, 2039e9, 108, 0.869, 0.81, 0.71, 0.60, 512, 22.25 * MIB,
     688e6, 544e6, 0.78, 0.80, 0.94},
    {"H100-SXM", 1978.9e12, 0, 3352e9, 132, 0.803, 0.88, 0.57, 0.55, 320,
     98 * MIB, 550 * MIB, 294 * MIB, 0.81, 0.80, 0.94},
    {"H100-PCIe", 1513e12, 0, 2000e9, 114, 0.803, 0.88, 0.57, 0.55, 320,
     98 * MIB, 294 * MIB, 294 * MIB, 0.81, 0.80, 0.94},
    {"H200", 1978.9e12, 0, 4800e9, 132, 0.803, 0.85, 0.57, 0.55, 320, 98 * MIB,
     550 * MIB, 294 * MIB, 0.81, 0.80, 0.94},
    /* H800: the H100 SXM's die and HBM3 with fewer NVLink links */
    {"H800", 1978.9e12, 0, 3352e9, 132, 0.803, 0.88, 0.57, 0.55, 320, 98 * MIB,
     550 * MIB, 294 * MIB, 0.81, 0.80, 0.94},
    /* H20: Hopper at a sixth of the H100's tensor rate (78 SMs), HBM3 of
     * 4.0 TB/s; kernel fractions as the H100's */
    {"H20", 296e12, 0, 4000e9, 78, 0.803, 0.88, 0.57, 0.55, 320, 98 * MIB,
     550 * MIB, 294 * MIB, 0.81, 0.80, 0.94},
    /* A800: the A100 80GB with 8 NVLink links of the A100's 12 */
    {"A800-80GB", 0, 0, 2039e9, 108, 0.869, 0.81, 0.71, 0.60, 512, 22.25 * MIB,
     688e6, 544e6, 0.78, 0.80, 0.94},
    {"B200", 4500e12, 9000e12, 8000e9, 148, 0.776, 0.85, 0.53, 0.50, 320,
     50.25 * MIB, 550 * MIB, 294 * MIB, 0.76, 0.80, 0.94},
    /* GB200: the B200's die at 1.2 kW (NVL72 datasheet: 2.5 PF bf16) */
    {"GB200", 5000e12, 10000e12, 8000e9, 148, 0.776, 0.85, 0.53, 0.50, 320,
     50.25 * MIB, 550 * MIB, 294 * MIB, 0.76, 0.80, 0.94},
    /* Blackwell Ultra: dense FP4 14 PF a B300 (HGX B300) and 15 a GB300
     * (GB300 NVL72: 1,080 PF for 72), fp8 and bf16 as B200 and GB200, 160 SMs,
     * HBM3e at 8 TB/s (GB300 NVL72: 576 TB/s for 72); kernel fractions
     * as the B200's, for want of a public sweep of it */
    {"B300", 4500e12, 14000e12, 8000e9, 160, 0.776, 0.85, 0.53, 0.50, 320,
     50.25 * MIB, 550 * MIB, 294 * MIB, 0.76, 0.80, 0.94},
    {"GB300", 5000e12, 15000e12, 8000e9, 160, 0.776, 0.85, 0.53, 0.50, 320,
     50.25 * MIB, 550 * MIB, 294 * MIB, 0.76, 0.80, 0.94},
    {"V100", 0, 0, 900e9, 80, 0.80, 0.80, 0.35, 0.30, 512, 22.25 * MIB, 688e6,
     544e6, 0.80, 0.80, 0.94},
    {"P100", 0, 0, 732e9, 56, 0.80, 0.80, 0.30, 0.25, 512, 22.25 * MIB, 688e6,
     544e6, 0.80, 0.80, 0.94},
    {"MI250X", 0, 0, 1638e9, 110, 0.60, 0.78, 0.30, 0.25, 512, 22.25 * MIB,
     688e6, 544e6, 0.71, 0.80, 0.94},
    {"MI300A", 1961.2e12, 0, 5300e9, 228, 0.511, 0.78, 0.28, 0.24, 512,
     22.25 * MIB, 688e6, 544e6, 0.71, 0.80, 0.94},
    {"MI300X", 2614.9e12, 0, 5300e9, 304, 0.511, 0.78, 0.28, 0.24, 512,
     22.25 * MIB, 688e6, 544e6, 0.71, 0.80, 0.94},
    /* MI325X: the MI300X's CDNA 3 compute with HBM3E of 6 TB/s */
    {"MI325X", 2614.9e12, 0, 6000e9, 304, 0.511, 0.78, 0.28, 0.24, 512,
     22.25 * MIB, 688e6, 544e6, 0.71, 0.80, 0.94},
    /* Ascend: no FP8 or FP4 (the 950 series is the first with them); HBM
     * about 1.6 TB/s a die; 24 cube cores; no public GEMM, attention or
     * HCCL sweep was found, so the kernel and link fractions are the
     * A100's, a part of its class, and HCCL's buffers its default
     * HCCL_BUFFSIZE of 200 MB a communicator: calibrate before trusting
     * a step time (docs/cost-model.md, "The GPU table") */
    {"Ascend-910B", 0, 0, 1600e9, 24, 0.869, 0.81, 0.71, 0.60, 512, 22.25 * MIB,
     200e6, 200e6, 0.78, 0.80, 0.94},
    {"Ascend-910C", 0, 0, 1600e9, 24, 0.869, 0.81, 0.71, 0.60, 512, 22.25 * MIB,
     200e6, 200e6, 0.78, 0.80, 0.94},
};
#define N_ROWS ((int)(sizeof rows / sizeof rows[0]))

static const row_t *find_row(const char *name) {
  for (int i = 0; name && i < N_ROWS; i++)
    if (!strcmp(rows[i].name, name)) return &rows[i];
  return NULL;
}

void strata_perf_of(const strata_gpu_model_t *m, strata_perf_t *p, int *known) {
  const row_t *r = m ? find_row(m->name) : NULL;
  int amd = m && m->vendor && !strcmp(m->vendor, "AMD");
  if (known) *known = r != NULL;
  if (!r) r = find_row(amd ? "MI300X" : "H100-SXM");
  memset(p, 0, sizeof *p);
  p->peak_flops = m && m->peak_flops > 0 ? m->peak_flops : 989.4e12;
  p->peak_fp8_flops = r->fp8;
  p->peak_fp4_flops = r->fp4;
  p->hbm_bandwidth = r->hbm;
  p->sms = r->sms;
  p->gemm_max = r->gemm_max;
  p->sustain = SUSTAIN;
  p->sustain_narrow = SUSTAIN_NARROW;
  p->gemm_w0 = GEMM_W0;
  p->gemm_k0 = GEMM_K0;
  p->gemm_k0_narrow = GEMM_K0_NARROW;
  p->mem_eff = r->mem_eff;
  p->stream_eff = STREAM_EFF;
  p->attn_fwd = r->attn_fwd;
  p->attn_bwd = r->attn_bwd;
  p->attn_s0 = r->attn_s0;
  p->launch_seconds = LAUNCH;
  p->moe_host_seconds = MOE_HOST;
  p->context_bytes = CONTEXT;
  p->workspace_bytes = r->workspace;
  p->nccl_comm_bytes = r->nccl_comm;
  p->nccl_pair_bytes = r->nccl_pair;
  p->link_eff[STRATA_LEVEL_NVLINK] = r->nvlink_eff;
  p->link_eff[STRATA_LEVEL_PCIE] = r->pcie_eff;
  p->link_eff[STRATA_LEVEL_LEAF] = r->net_eff;
  p->link_eff[STRATA_LEVEL_SPINE] = r->net_eff;
}

/* The fill of the last 128-wide tile along a dimension. */
static double tile_fill(double x) {
  double tiles = ceil(x / 128.0);
  return tiles > 0 ? x / (tiles * 128.0) : 0;
}

static double eff_at(const strata_perf_t *p, double batch, double m, double n,
                     double k, double k0) {
  if (!(batch > 0 && m > 0 && n > 0 && k > 0)) return 0;
  double w = batch * m * n / (128.0 * 128.0 * (p->sms > 0 ? p->sms : 1));
  return p->sustain * p->gemm_max * tile_fill(m) * tile_fill(n) *
         (w / (w + p->gemm_w0)) * (k / (k + k0));
}

double strata_perf_gemm_eff(const strata_perf_t *p, double batch, double m,
                            double n, double k) {
  return eff_at(p, batch, m, n, k, p->gemm_k0);
}

double strata_perf_gemm_eff_narrow(const strata_perf_t *p, double batch,
                                   double m, double n, double k) {
  double k0 = p->gemm_k0_narrow > 0 ? p->gemm_k0_narrow : p->gemm_k0;
  double keep = p->sustain_narrow > 0 ? p->sustain_narrow : 1;
  return keep * eff_at(p, batch, m, n, k, k0);
}

static double gemm_at(const strata_perf_t *p, double batch, double m, double n,
                      double k, double elem_bytes, double peak, int narrow) {
  double eff = narrow ? strata_perf_gemm_eff_narrow(p, batch, m, n, k)
                      : strata_perf_gemm_eff(p, batch, m, n, k);
  if (!(eff > 0)) return 0;
  double flops = 2.0 * batch * m * n * k;
  /* operands at their width, the result in 16 bits */
  double bytes = batch * ((m * k + k * n) * elem_bytes + 2.0 * m * n);
  double tc = flops / (peak * eff);
  double tm = bytes / (p->hbm_bandwidth * p->mem_eff);
  return (tc > tm ? tc : tm) + p->launch_seconds;
}

double strata_perf_gemm(const strata_perf_t *p, double batch, double m,
                        double n, double k, int elem_bytes) {
  int narrow = elem_bytes == 1 && p->peak_fp8_flops > 0;
  double peak = narrow ? p->peak_fp8_flops : p->peak_flops;
  return gemm_at(p, batch, m, n, k, elem_bytes, peak, narrow);
}

double strata_perf_gemm_narrow(const strata_perf_t *p, double batch, double m,
                               double n, double k, double operand, int fp4) {
  double peak = fp4 && p->peak_fp4_flops > 0    ? p->peak_fp4_flops
                : !fp4 && p->peak_fp8_flops > 0 ? p->peak_fp8_flops
                                                : p->peak_flops;
  return gemm_at(p, batch, m, n, k, operand, peak, peak != p->peak_flops);
}

double strata_perf_stream(const strata_perf_t *p, double bytes, int kernels) {
  if (!(bytes > 0) && kernels <= 0) return 0;
  double t = bytes > 0 ? bytes / (p->hbm_bandwidth * p->stream_eff) : 0;
  return t + kernels * p->launch_seconds;
}

double strata_perf_attention(const strata_perf_t *p, double flops, double seq,
                             int bwd, int fp8) {
  if (!(flops > 0)) return 0;
  double peak =
      fp8 && p->peak_fp8_flops > 0 ? p->peak_fp8_flops : p->peak_flops;
  double eff =
      p->sustain * (bwd ? p->attn_bwd : p->attn_fwd) * seq / (seq + p->attn_s0);
  return flops / (peak * eff) + p->launch_seconds;
}
