/*
 * bench_fidelity.c - what `strata estimate` predicts for the measured runs
 * of Narayanan et al. 2021 ("Efficient Large-Scale Language Model Training
 * on GPU Clusters Using Megatron-LM", SC'21, arXiv:2104.04473): Table 1
 * and the sweeps of its Figures 11 to 18, next to what they measured on
 * Selene (DGX A100 80 GB, 8 x HDR 200 Gb/s per node).
 *
 * Every configuration goes through the command's own path (the planner
 * with every degree fixed, no memory pruning) with the settings of NVIDIA's
 * reproduction scripts (Megatron-LM examples/sc21): fp16 mixed precision,
 * unfused attention with fused softmax, dropout, no sequence parallelism,
 * no distributed optimizer, full activation recomputation (Fig. 17 also
 * without), the micro-batch and interleaving of each run, p2p scatter/
 * gather (Fig. 18 also without), blocking p2p, and the data-parallel
 * all-reduce overlapped only where the script used PyTorch's DDP (Table 1
 * rows up to 18.4B).  One set of parameters serves every row.
 *
 * Throughput is counted the paper's way, equation (3), recomputation
 * included: F = 96 B s l h^2 (1 + s/(6h) + V/(16 l h)) FLOPs per iteration,
 * teraFLOP/s per GPU = F / (step x GPUs); Figure 17 compares sequences per
 * second.  Printed: Table 1 with the error per row and the mean absolute
 * error; for each sweep, predicted against measured, the Spearman rank
 * correlation per curve, and whether the measured fastest is predicted
 * fastest or within 2 % of it.  docs/fidelity.md holds the output.
 *
 * Then today's runs: NVIDIA's Megatron-Bridge performance summaries of
 * 2025-2026 (H100, B200, GB200), a table per GPU of published against
 * predicted tokens/s/GPU with the memory verdicts, which
 * bench/bench_bridge.py prints from the same `strata estimate` commands
 * the recipe test runs (its mapping lives in tests/recipes/run.py, in
 * Python); bench_fidelity runs it on the strata beside it (or --strata
 * PATH) with python3, unless --no-bridge.
 *
 * With --runs FILE it writes its runs as a strata calibrate runs file;
 * with --generalisation it prints, per source group (these runs, the
 * Bridge rows of each GPU), the error with the group left out of the fit
 * and after calibrating on 1, 2 and 3 of its runs (bench_calibration.py,
 * some minutes: the fits are strata calibrate's).
 *
 * Usage: bench_fidelity [--csv] [--calibration FILE] [--strata PATH]
 *                       [--no-bridge] [--runs FILE] [--generalisation]
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "strata/strata.h"

typedef struct {
  const char *fig;   /* "T1", "11", ... */
  const char *curve; /* which line of the figure */
  int layers, hidden, heads;
  int tp, pp, dp, mb, batch, vpp;
  int recompute; /* 1 full, 0 none */
  int sg;        /* p2p scatter/gather */
  int ddp_overlap;
  double measured; /* teraFLOP/s per GPU, or sequences/s (Fig. 17) */
  double predicted;
  int ok;
} run_t;

#define T1(l, h, a, t, p, g, B, b, v, ov, x)                                   \
  { "T1", "", l, h, a, t, p, (g) / ((t) * (p)), b, B, v, 1, 1, ov, x, 0, 0 }
#define RUN(f, c, l, h, a, t, p, d, b, B, v, rc, sg, x)                        \
  { f, c, l, h, a, t, p, d, b, B, v, rc, sg, 0, x, 0, 0 }

static run_t runs[] = {
    /* Table 1: micro-batch and virtual stages from run_table_1.sh */
    T1(24, 2304, 24, 1, 1, 32, 512, 16, 1, 1, 137),
    T1(30, 3072, 32, 2, 1, 64, 512, 16, 1, 1, 138),
    T1(36, 4096, 32, 4, 1, 128, 512, 16, 1, 1, 142),
    T1(40, 6144, 48, 8, 1, 256, 1024, 8, 1, 1, 135),
    T1(48, 8192, 64, 8, 2, 512, 1536, 4, 1, 0, 138),
    T1(60, 10240, 80, 8, 4, 1024, 1792, 2, 3, 0, 140),
    T1(80, 12288, 96, 8, 8, 1536, 2304, 2, 2, 0, 148),
    T1(96, 16384, 128, 8, 16, 1920, 2160, 1, 2, 0, 155),
    T1(105, 20480, 128, 8, 35, 2520, 2520, 1, 3, 0, 163),
    T1(128, 25600, 160, 8, 64, 3072, 3072, 1, 1, 0, 163),
    /* Figure 7: one GPU, a 1B GPT of 128 heads (4 layers, h 4096) */
    RUN("7", "one GPU", 4, 4096, 128, 1, 1, 1, 1, 64, 1, 1, 1, 68),
    RUN("7", "one GPU", 4, 4096, 128, 1, 1, 1, 2, 64, 1, 1, 1, 78),
    RUN("7", "one GPU", 4, 4096, 128, 1, 1, 1, 4, 64, 1, 1, 1, 86),
    RUN("7", "one GPU", 4, 4096, 128, 1, 1, 1, 8, 64, 1, 1, 1, 89),
    RUN("7", "one GPU", 4, 4096, 128, 1, 1, 1, 16, 64, 1, 1, 1, 91),
    /* Figure 11: pipeline weak scaling, l = 3p, t = 8 */
    RUN("11", "B=8", 3, 20480, 128, 8, 1, 1, 1, 8, 1, 1, 1, 165),
    RUN("11", "B=8", 6, 20480, 128, 8, 2, 1, 1, 8, 1, 1, 1, 142),
    RUN("11", "B=8", 12, 20480, 128, 8, 4, 1, 1, 8, 1, 1, 1, 121),
    RUN("11", "B=8", 24, 20480, 128, 8, 8, 1, 1, 8, 1, 1, 1, 87),
    RUN("11", "B=128", 3, 20480, 128, 8, 1, 1, 1, 128, 1, 1, 1, 175),
    RUN("11", "B=128", 6, 20480, 128, 8, 2, 1, 1, 128, 1, 1, 1, 169),
    RUN("11", "B=128", 12, 20480, 128, 8, 4, 1, 1, 128, 1, 1, 1, 166),
    RUN("11", "B=128", 24, 20480, 128, 8, 8, 1, 1, 128, 1, 1, 1, 161),
    /* Figure 12: GPT-3 175B on 96 GPUs, non-interleaved vs 4 chunks */
    RUN("12", "1F1B", 96, 12288, 96, 8, 12, 1, 1, 12, 1, 1, 1, 82),
    RUN("12", "1F1B", 96, 12288, 96, 8, 12, 1, 1, 24, 1, 1, 1, 109),
    RUN("12", "1F1B", 96, 12288, 96, 8, 12, 1, 1, 36, 1, 1, 1, 122),
    RUN("12", "1F1B", 96, 12288, 96, 8, 12, 1, 1, 48, 1, 1, 1, 130),
    RUN("12", "1F1B", 96, 12288, 96, 8, 12, 1, 1, 60, 1, 1, 1, 135),
    RUN("12", "interleaved", 96, 12288, 96, 8, 12, 1, 1, 12, 4, 1, 1, 119),
    RUN("12", "interleaved", 96, 12288, 96, 8, 12, 1, 1, 24, 4, 1, 1, 134),
    RUN("12", "interleaved", 96, 12288, 96, 8, 12, 1, 1, 36, 4, 1, 1, 141),
    RUN("12", "interleaved", 96, 12288, 96, 8, 12, 1, 1, 48, 4, 1, 1, 143),
    RUN("12", "interleaved", 96, 12288, 96, 8, 12, 1, 1, 60, 4, 1, 1, 146),
    /* Figure 13: tensor vs pipeline, 162.2B, 64 GPUs */
    RUN("13", "B=32", 32, 20480, 128, 32, 2, 1, 1, 32, 1, 1, 1, 103),
    RUN("13", "B=32", 32, 20480, 128, 16, 4, 1, 1, 32, 1, 1, 1, 134),
    RUN("13", "B=32", 32, 20480, 128, 8, 8, 1, 1, 32, 1, 1, 1, 140),
    RUN("13", "B=32", 32, 20480, 128, 4, 16, 1, 1, 32, 1, 1, 1, 111),
    RUN("13", "B=32", 32, 20480, 128, 2, 32, 1, 1, 32, 1, 1, 1, 91),
    RUN("13", "B=128", 32, 20480, 128, 32, 2, 1, 1, 128, 1, 1, 1, 107),
    RUN("13", "B=128", 32, 20480, 128, 16, 4, 1, 1, 128, 1, 1, 1, 146),
    RUN("13", "B=128", 32, 20480, 128, 8, 8, 1, 1, 128, 1, 1, 1, 165),
    RUN("13", "B=128", 32, 20480, 128, 4, 16, 1, 1, 128, 1, 1, 1, 162),
    RUN("13", "B=128", 32, 20480, 128, 2, 32, 1, 1, 128, 1, 1, 1, 148),
    /* Figure 14: pipeline vs data, 5.9B, 64 GPUs */
    RUN("14", "B=32", 32, 3840, 32, 1, 2, 32, 1, 32, 1, 1, 1, 62),
    RUN("14", "B=32", 32, 3840, 32, 1, 4, 16, 1, 32, 1, 1, 1, 56),
    RUN("14", "B=32", 32, 3840, 32, 1, 8, 8, 1, 32, 1, 1, 1, 53),
    RUN("14", "B=32", 32, 3840, 32, 1, 16, 4, 1, 32, 1, 1, 1, 49),
    RUN("14", "B=32", 32, 3840, 32, 1, 32, 2, 1, 32, 1, 1, 1, 43),
    RUN("14", "B=512", 32, 3840, 32, 1, 2, 32, 1, 512, 1, 1, 1, 148),
    RUN("14", "B=512", 32, 3840, 32, 1, 4, 16, 1, 512, 1, 1, 1, 141),
    RUN("14", "B=512", 32, 3840, 32, 1, 8, 8, 1, 512, 1, 1, 1, 129),
    RUN("14", "B=512", 32, 3840, 32, 1, 16, 4, 1, 512, 1, 1, 1, 114),
    RUN("14", "B=512", 32, 3840, 32, 1, 32, 2, 1, 512, 1, 1, 1, 90),
    /* Figure 15: tensor vs data, 5.9B, 64 GPUs */
    RUN("15", "B=32", 32, 3840, 32, 2, 1, 32, 1, 32, 1, 1, 1, 56),
    RUN("15", "B=32", 32, 3840, 32, 4, 1, 16, 1, 32, 1, 1, 1, 54),
    RUN("15", "B=32", 32, 3840, 32, 8, 1, 8, 1, 32, 1, 1, 1, 55),
    RUN("15", "B=32", 32, 3840, 32, 16, 1, 4, 1, 32, 1, 1, 1, 36),
    RUN("15", "B=32", 32, 3840, 32, 32, 1, 2, 1, 32, 1, 1, 1, 22),
    RUN("15", "B=128", 32, 3840, 32, 2, 1, 32, 1, 128, 1, 1, 1, 103),
    RUN("15", "B=128", 32, 3840, 32, 4, 1, 16, 1, 128, 1, 1, 1, 88),
    RUN("15", "B=128", 32, 3840, 32, 8, 1, 8, 1, 128, 1, 1, 1, 70),
    RUN("15", "B=128", 32, 3840, 32, 16, 1, 4, 1, 128, 1, 1, 1, 39),
    RUN("15", "B=128", 32, 3840, 32, 32, 1, 2, 1, 128, 1, 1, 1, 22),
    RUN("15", "B=512", 32, 3840, 32, 2, 1, 32, 1, 512, 1, 1, 1, 127),
    RUN("15", "B=512", 32, 3840, 32, 4, 1, 16, 1, 512, 1, 1, 1, 104),
    RUN("15", "B=512", 32, 3840, 32, 8, 1, 8, 1, 512, 1, 1, 1, 75),
    RUN("15", "B=512", 32, 3840, 32, 16, 1, 4, 1, 512, 1, 1, 1, 40),
    RUN("15", "B=512", 32, 3840, 32, 32, 1, 2, 1, 512, 1, 1, 1, 22),
    /* Figure 16: micro-batch size, 91B, (t, p) = (8, 8) */
    RUN("16", "B=128", 32, 15360, 128, 8, 8, 1, 1, 128, 1, 1, 1, 156),
    RUN("16", "B=128", 32, 15360, 128, 8, 8, 1, 2, 128, 1, 1, 1, 159),
    RUN("16", "B=128", 32, 15360, 128, 8, 8, 1, 4, 128, 1, 1, 1, 139),
    RUN("16", "B=128", 32, 15360, 128, 8, 8, 1, 8, 128, 1, 1, 1, 120),
    RUN("16", "B=512", 32, 15360, 128, 8, 8, 1, 1, 512, 1, 1, 1, 162),
    RUN("16", "B=512", 32, 15360, 128, 8, 8, 1, 2, 512, 1, 1, 1, 171),
    RUN("16", "B=512", 32, 15360, 128, 8, 8, 1, 4, 512, 1, 1, 1, 160),
    RUN("16", "B=512", 32, 15360, 128, 8, 8, 1, 8, 512, 1, 1, 1, 154),
    /* Figure 17: activation recompute, 145B, (t, p) = (8, 16): seq/s */
    RUN("17", "recompute", 80, 12288, 96, 8, 16, 1, 1, 1, 1, 1, 1, 0.6),
    RUN("17", "recompute", 80, 12288, 96, 8, 16, 1, 1, 2, 1, 1, 1, 1.0),
    RUN("17", "recompute", 80, 12288, 96, 8, 16, 1, 1, 4, 1, 1, 1, 1.8),
    RUN("17", "recompute", 80, 12288, 96, 8, 16, 1, 1, 8, 1, 1, 1, 3.0),
    RUN("17", "recompute", 80, 12288, 96, 8, 16, 1, 1, 16, 1, 1, 1, 4.3),
    RUN("17", "recompute", 80, 12288, 96, 8, 16, 1, 1, 32, 1, 1, 1, 5.7),
    RUN("17", "recompute", 80, 12288, 96, 8, 16, 1, 1, 64, 1, 1, 1, 6.8),
    RUN("17", "recompute", 80, 12288, 96, 8, 16, 1, 1, 128, 1, 1, 1, 7.4),
    RUN("17", "recompute", 80, 12288, 96, 8, 16, 1, 1, 256, 1, 1, 1, 7.8),
    RUN("17", "none", 80, 12288, 96, 8, 16, 1, 1, 1, 1, 0, 1, 0.7),
    RUN("17", "none", 80, 12288, 96, 8, 16, 1, 1, 2, 1, 0, 1, 1.3),
    RUN("17", "none", 80, 12288, 96, 8, 16, 1, 1, 4, 1, 0, 1, 2.3),
    RUN("17", "none", 80, 12288, 96, 8, 16, 1, 1, 8, 1, 0, 1, 3.9),
    /* Figure 18: scatter/gather, 175B, 96 GPUs, interleaved */
    RUN("18", "off", 96, 12288, 96, 8, 12, 1, 1, 12, 4, 1, 0, 107),
    RUN("18", "off", 96, 12288, 96, 8, 12, 1, 1, 24, 4, 1, 0, 121),
    RUN("18", "off", 96, 12288, 96, 8, 12, 1, 1, 36, 4, 1, 0, 127),
    RUN("18", "off", 96, 12288, 96, 8, 12, 1, 1, 48, 4, 1, 0, 130),
    RUN("18", "off", 96, 12288, 96, 8, 12, 1, 1, 60, 4, 1, 0, 131),
    RUN("18", "on", 96, 12288, 96, 8, 12, 1, 1, 12, 4, 1, 1, 119),
    RUN("18", "on", 96, 12288, 96, 8, 12, 1, 1, 24, 4, 1, 1, 134),
    RUN("18", "on", 96, 12288, 96, 8, 12, 1, 1, 36, 4, 1, 1, 141),
    RUN("18", "on", 96, 12288, 96, 8, 12, 1, 1, 48, 4, 1, 1, 143),
    RUN("18", "on", 96, 12288, 96, 8, 12, 1, 1, 60, 4, 1, 1, 146),
};
#define N_RUNS ((int)(sizeof runs / sizeof runs[0]))

/* Equation (3) of the paper: FLOPs of one iteration with recomputation. */
static double paper_flops(const run_t *r) {
  double B = r->batch, s = 2048, l = r->layers, h = r->hidden, V = 51200;
  return 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
}

static int gpus(const run_t *r) {
  return r->tp * r->pp * r->dp;
}

/* A calibration to apply (--calibration FILE): how a fitted one fares on
 * these runs; the figures in docs/fidelity.md are without one. */
static const strata_calibration_t *calibration;

/* What `strata estimate` computes for the run. */
static int estimate(const run_t *r, double *step, double *mem) {
  strata_plan_opts_t po;
  strata_graph_t *g = NULL;
  strata_cluster_t *c = NULL;
  strata_plan_t *p = NULL;
  char spec[64];
  strata_plan_opts_init(&po);
  strata_gen_opts_keep(&po.gen);
  po.gen.layers = r->layers, po.gen.hidden = r->hidden;
  po.gen.heads = r->heads, po.gen.vocab = 51200, po.gen.seq = 2048;
  po.gen.micro_batch = r->mb;
  po.gen.flash_attention = 0, po.gen.dropout = 1;
  po.recompute = r->recompute ? STRATA_RECOMPUTE_FULL : STRATA_RECOMPUTE_NONE;
  po.sequence_parallel = 0;
  po.zero_stage = 0;
  po.overlap_grad_reduce = r->ddp_overlap;
  po.overlap_param_gather = 0;
  po.overlap_p2p = 0;
  /* 2021's scatter/gather, where there is a boundary to split (given
   * elsewhere, the rulebook refuses it as meaning nothing) */
  po.scatter_gather = r->sg && r->pp > 1 && r->tp > 1 ? 1 : STRATA_AUTO;
  po.quiet = 1;
  po.micro_batch = r->mb;
  po.global_batch = r->batch;
  po.tp = r->tp, po.pp = r->pp, po.dp = r->dp;
  if (r->pp > 1) /* Megatron-LM's even split */
    po.first_layers = po.last_layers = r->layers / r->pp;
  po.vpp = r->vpp;
  po.no_memory_check = 1;
  po.top = 1;
  snprintf(spec, sizeof spec, "dgx-a100:%d", (gpus(r) + 7) / 8);
  int rc = strata_model_load("gpt", &po.gen, &g);
  if (!rc) rc = strata_cluster_load(spec, &c);
  if (!rc && calibration) rc = strata_cluster_calibrate(c, calibration);
  if (!rc) rc = strata_pipeline_plan(g, c, &po, &p);
  if (!rc) {
    *step = p->step_seconds;
    *mem = p->peak_memory_bytes;
  }
  strata_plan_destroy(p);
  strata_cluster_destroy(c);
  strata_graph_destroy(g);
  return rc;
}

static double value_of(const run_t *r, double step) {
  if (!strcmp(r->fig, "17")) return r->batch / step; /* sequences/s */
  return paper_flops(r) / (step * gpus(r)) / 1e12;
}

/* Spearman's rank correlation of x and y (average ranks for ties). */
static void ranks(const double *v, int n, double *rk) {
  for (int i = 0; i < n; i++) {
    double less = 0, same = 0;
    for (int j = 0; j < n; j++)
      less += v[j] < v[i], same += v[j] == v[i];
    rk[i] = less + (same + 1) / 2;
  }
}

static double spearman(const double *x, const double *y, int n) {
  double rx[64], ry[64], mx = 0, my = 0, sxy = 0, sxx = 0, syy = 0;
  ranks(x, n, rx);
  ranks(y, n, ry);
  for (int i = 0; i < n; i++)
    mx += rx[i] / n, my += ry[i] / n;
  for (int i = 0; i < n; i++) {
    sxy += (rx[i] - mx) * (ry[i] - my);
    sxx += (rx[i] - mx) * (rx[i] - mx);
    syy += (ry[i] - my) * (ry[i] - my);
  }
  return sxx > 0 && syy > 0 ? sxy / sqrt(sxx * syy) : 1;
}

static void table1(void) {
  double sum = 0, worst = 0;
  int n = 0;
  printf("## Table 1\n\n| model | t | p | d | GPUs | B | b | v | measured "
         "TF/s | predicted TF/s | error |\n|---|---|---|---|---|---|---|---|"
         "---|---|---|\n");
  for (int i = 0; i < N_RUNS; i++) {
    const run_t *r = &runs[i];
    if (strcmp(r->fig, "T1")) continue;
    double P = 12.0 * r->layers * r->hidden * (double)r->hidden *
               (1 + 13.0 / (12 * r->hidden) +
                (51200.0 + 2048) / (12.0 * r->layers * r->hidden)) /
               1e9;
    if (!r->ok) {
      printf("| %.1fB | %d | %d | %d | %d | %d | %d | %d | %.0f | failed | |\n",
             P, r->tp, r->pp, r->dp, gpus(r), r->batch, r->mb, r->vpp,
             r->measured);
      continue;
    }
    double e = (r->predicted - r->measured) / r->measured;
    sum += fabs(e);
    worst = fabs(e) > worst ? fabs(e) : worst;
    n++;
    printf("| %.1fB | %d | %d | %d | %d | %d | %d | %d | %.0f | %.1f | %+.1f%% "
           "|\n",
           P, r->tp, r->pp, r->dp, gpus(r), r->batch, r->mb, r->vpp,
           r->measured, r->predicted, 100 * e);
  }
  printf("\nTable 1: mean absolute error %.1f %%, worst %.1f %% over %d rows "
         "(targets: <= 5 %%, <= 10 %%)\n\n",
         n ? 100 * sum / n : 0, 100 * worst, n);
}

/* One sweep figure: each curve's points, its rank correlation and whether
 * the measured fastest is predicted fastest (or within 2 %). */
static void figure(const char *fig) {
  const char *curves[8];
  int nc = 0;
  for (int i = 0; i < N_RUNS; i++) {
    if (strcmp(runs[i].fig, fig)) continue;
    int seen = 0;
    for (int c = 0; c < nc; c++)
      seen |= !strcmp(curves[c], runs[i].curve);
    if (!seen && nc < 8) curves[nc++] = runs[i].curve;
  }
  printf("## Figure %s\n\n| curve | t | p | d | b | B | v | measured | "
         "predicted | error |\n|---|---|---|---|---|---|---|---|---|---|\n",
         fig);
  double allx[64], ally[64];
  int na = 0;
  for (int c = 0; c < nc; c++)
    for (int i = 0; i < N_RUNS; i++) {
      const run_t *r = &runs[i];
      if (strcmp(r->fig, fig) || strcmp(r->curve, curves[c]) || !r->ok)
        continue;
      printf("| %s | %d | %d | %d | %d | %d | %d | %.1f | %.1f | %+.1f%% |\n",
             r->curve, r->tp, r->pp, r->dp, r->mb, r->batch, r->vpp,
             r->measured, r->predicted,
             100 * (r->predicted - r->measured) / r->measured);
      if (na < 64) allx[na] = r->measured, ally[na++] = r->predicted;
    }
  printf("\n");
  for (int c = 0; c < nc; c++) {
    double x[64], y[64];
    int n = 0, best_m = -1, best_p = -1;
    for (int i = 0; i < N_RUNS && n < 64; i++) {
      const run_t *r = &runs[i];
      if (strcmp(r->fig, fig) || strcmp(r->curve, curves[c]) || !r->ok)
        continue;
      x[n] = r->measured, y[n] = r->predicted;
      if (best_m < 0 || x[n] > x[best_m]) best_m = n;
      if (best_p < 0 || y[n] > y[best_p]) best_p = n;
      n++;
    }
    if (n < 2) continue;
    double gap = 1 - y[best_m] / y[best_p];
    printf("Figure %s, %s: Spearman %.2f over %d points; the measured "
           "fastest is predicted %s\n",
           fig, curves[c], spearman(x, y, n), n,
           best_m == best_p ? "fastest"
           : gap <= 0.02    ? "within 2 % of the fastest"
                            : "slower than the fastest by more than 2 %");
  }
  if (nc > 1)
    printf("Figure %s, all curves: Spearman %.2f over %d points\n", fig,
           spearman(allx, ally, na), na);
  printf("\n");
}

/* The measured step of a run: its throughput turned back into seconds
 * (equation (3) for teraFLOP/s, the batch for sequences/s). */
static double measured_step(const run_t *r) {
  if (!strcmp(r->fig, "17")) return r->batch / r->measured;
  return paper_flops(r) / (r->measured * 1e12 * gpus(r));
}

/* The runs as a strata calibrate runs file (docs/calibration.md), each
 * row the configuration estimate() costs, labelled "Narayanan 2021|...":
 * what bench_calibration.py calibrates on and predicts. */
static int write_runs(const char *path) {
  FILE *f = fopen(path, "w");
  if (!f) return 1;
  fprintf(f, "{\"format\": \"strata-measurements\", \"version\": 1,\n"
             " \"model\": \"gpt\", \"runs\": [\n");
  for (int i = 0; i < N_RUNS; i++) {
    const run_t *r = &runs[i];
    fprintf(f,
            "  {\"label\": \"Narayanan 2021|fig %s %s t%d p%d d%d b%d B%d "
            "v%d\", \"cluster\": \"dgx-a100:%d\", \"layers\": %d, "
            "\"hidden\": %d, \"heads\": %d, \"vocab\": 51200, \"seq\": 2048, "
            "\"flash_attention\": false, \"recompute\": \"%s\", "
            "\"sequence_parallel\": false, \"zero\": 0, "
            "\"overlap_grad_reduce\": %s, \"overlap_param_gather\": false, "
            "\"overlap_p2p\": false, %s\"tp\": %d, \"pp\": %d, \"dp\": %d, "
            "\"micro_batch\": %d, \"global_batch\": %d, \"vpp\": %d, "
            "\"step_seconds\": %.6g}%s\n",
            r->fig, r->curve, r->tp, r->pp, r->dp, r->mb, r->batch, r->vpp,
            (gpus(r) + 7) / 8, r->layers, r->hidden, r->heads,
            r->recompute ? "full" : "none", r->ddp_overlap ? "true" : "false",
            r->sg && r->pp > 1 && r->tp > 1 ? "\"scatter_gather\": true, " : "",
            r->tp, r->pp, r->dp, r->mb, r->batch, r->vpp, measured_step(r),
            i + 1 < N_RUNS ? "," : "");
  }
  fprintf(f, "]}\n");
  return fclose(f) != 0;
}

/* python3 with argv (argv[0] the script): 0 when it ran and exited 0,
 * else a line saying how it ended. */
static int python(const char *what, char *const *argv) {
  fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) {
    printf("\n%s: could not start python3\n", what);
    return 1;
  }
  if (pid == 0) {
    char *args[8] = {"python3"};
    for (int i = 0; argv[i] && i < 6; i++)
      args[i + 1] = argv[i];
    execvp("python3", args);
    _exit(127);
  }
  int st = 0;
  pid_t w;
  while ((w = waitpid(pid, &st, 0)) < 0 && errno == EINTR)
    ;
  if (w >= 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0) return 0;
  printf("\n%s: python3 %s ended with %s %d\n", what, argv[0],
         w >= 0 && WIFEXITED(st) ? "exit" : "status",
         w >= 0 && WIFEXITED(st) ? WEXITSTATUS(st) : st);
  return 1;
}

/* MosaicML LLM Foundry's published throughput (scripts/train/benchmarking/
 * README.md): MPT models under PyTorch FSDP (FULL_SHARD), attn_impl
 * flash, bf16, one node of 8 GPUs, at sequences of 2k to 64k; a fit set
 * for the stack's rows (docs/fidelity.md, "LLM Foundry").  Tokens/s/GPU
 * as published; the model's shape from the repository's
 * yamls/pretrain/mpt-*.yaml (vocabulary 50368, MLP 4h). */
typedef struct {
  const char *gpu, *size;
  int layers, hidden, heads, seq, mb, accum, ckpt;
  double measured, before, after;
  int ok;
} foundry_t;

#define MPT7B 32, 4096, 32
#define MPT13B 40, 5120, 40
#define MPT3B 32, 2560, 20
#define MPT1B 24, 2048, 16
#define MPT760M 24, 1536, 12
static foundry_t foundry[] = {
    {"H100", "7b", MPT7B, 65536, 1, 2, 1, 1956, 0, 0, 0},
    {"H100", "7b", MPT7B, 32768, 2, 2, 1, 3318, 0, 0, 0},
    {"H100", "7b", MPT7B, 8192, 8, 2, 1, 6935, 0, 0, 0},
    {"H100", "7b", MPT7B, 4096, 16, 2, 1, 8611, 0, 0, 0},
    {"H100", "7b", MPT7B, 2048, 6, 1, 0, 10643, 0, 0, 0},
    {"H100", "13b", MPT13B, 32768, 1, 3, 1, 1976, 0, 0, 0},
    {"H100", "13b", MPT13B, 16384, 3, 3, 1, 2985, 0, 0, 0},
    {"H100", "13b", MPT13B, 4096, 10, 3, 1, 4717, 0, 0, 0},
    {"H100", "3b", MPT3B, 65536, 1, 2, 1, 3262, 0, 0, 0},
    {"H100", "3b", MPT3B, 32768, 3, 6, 1, 5873, 0, 0, 0},
    {"H100", "3b", MPT3B, 16384, 1, 6, 0, 11152, 0, 0, 0},
    {"H100", "3b", MPT3B, 8192, 3, 6, 0, 16578, 0, 0, 0},
    {"H100", "3b", MPT3B, 4096, 5, 6, 0, 20964, 0, 0, 0},
    {"H100", "1b", MPT1B, 65536, 1, 2, 1, 5506, 0, 0, 0},
    {"H100", "1b", MPT1B, 32768, 1, 4, 0, 12025, 0, 0, 0},
    {"H100", "1b", MPT1B, 16384, 2, 4, 0, 19649, 0, 0, 0},
    {"H100", "1b", MPT1B, 8192, 3, 4, 0, 29157, 0, 0, 0},
    {"H100", "1b", MPT1B, 4096, 7, 4, 0, 38535, 0, 0, 0},
    {"H100", "1b", MPT1B, 2048, 14, 1, 0, 45455, 0, 0, 0},
    {"H100", "760m", MPT760M, 32768, 1, 2, 0, 16291, 0, 0, 0},
    {"H100", "760m", MPT760M, 16384, 3, 2, 0, 27815, 0, 0, 0},
    {"H100", "760m", MPT760M, 8192, 6, 2, 0, 41825, 0, 0, 0},
    {"H100", "760m", MPT760M, 4096, 12, 2, 0, 55459, 0, 0, 0},
    {"A100", "7b", MPT7B, 65536, 1, 2, 1, 1013, 0, 0, 0},
    {"A100", "7b", MPT7B, 32768, 2, 2, 1, 1672, 0, 0, 0},
    {"A100", "7b", MPT7B, 16384, 4, 2, 1, 2453, 0, 0, 0},
    {"A100", "7b", MPT7B, 8192, 8, 2, 1, 3206, 0, 0, 0},
    {"A100", "7b", MPT7B, 4096, 16, 2, 1, 3684, 0, 0, 0},
    {"A100", "7b", MPT7B, 2048, 6, 2, 0, 4641, 0, 0, 0},
    {"A100", "13b", MPT13B, 32768, 1, 3, 1, 1016, 0, 0, 0},
    {"A100", "13b", MPT13B, 16384, 3, 3, 1, 1431, 0, 0, 0},
    {"A100", "13b", MPT13B, 8192, 5, 3, 1, 1795, 0, 0, 0},
    {"A100", "13b", MPT13B, 4096, 10, 3, 1, 2060, 0, 0, 0},
    {"A100", "13b", MPT13B, 2048, 2, 3, 0, 2262, 0, 0, 0},
    {"A100", "3b", MPT3B, 65536, 1, 2, 1, 1767, 0, 0, 0},
    {"A100", "3b", MPT3B, 32768, 3, 6, 1, 3029, 0, 0, 0},
    {"A100", "3b", MPT3B, 16384, 1, 6, 0, 5529, 0, 0, 0},
    {"A100", "3b", MPT3B, 8192, 3, 6, 0, 7695, 0, 0, 0},
    {"A100", "3b", MPT3B, 4096, 5, 6, 0, 9457, 0, 0, 0},
    {"A100", "3b", MPT3B, 2048, 10, 2, 0, 10811, 0, 0, 0},
    {"A100", "1b", MPT1B, 65536, 1, 2, 1, 3044, 0, 0, 0},
    {"A100", "1b", MPT1B, 32768, 1, 4, 0, 6275, 0, 0, 0},
    {"A100", "1b", MPT1B, 16384, 2, 4, 0, 9956, 0, 0, 0},
    {"A100", "1b", MPT1B, 8192, 3, 4, 0, 13814, 0, 0, 0},
    {"A100", "1b", MPT1B, 4096, 7, 4, 0, 17807, 0, 0, 0},
    {"A100", "1b", MPT1B, 2048, 14, 4, 0, 20513, 0, 0, 0},
    {"A100", "760m", MPT760M, 65536, 1, 2, 1, 4143, 0, 0, 0},
    {"A100", "760m", MPT760M, 32768, 1, 2, 0, 8802, 0, 0, 0},
    {"A100", "760m", MPT760M, 16384, 3, 2, 0, 14274, 0, 0, 0},
    {"A100", "760m", MPT760M, 8192, 6, 2, 0, 20933, 0, 0, 0},
    {"A100", "760m", MPT760M, 4096, 12, 2, 0, 27351, 0, 0, 0},
    {"A100", "760m", MPT760M, 2048, 24, 2, 0, 32434, 0, 0, 0},
};
#define N_FOUNDRY ((int)(sizeof foundry / sizeof foundry[0]))

/* Tokens/s/GPU strata estimate predicts for a Foundry row under a stack
 * ({-1, -1}: Megatron-LM's, today's curve; else the given keys). */
static int foundry_estimate(const foundry_t *r, const strata_stack_t *stack,
                            double *tps) {
  strata_plan_opts_t po;
  strata_graph_t *g = NULL;
  strata_cluster_t *c = NULL;
  strata_plan_t *p = NULL;
  strata_plan_opts_init(&po);
  strata_gen_opts_keep(&po.gen);
  po.gen.layers = r->layers, po.gen.hidden = r->hidden;
  po.gen.heads = r->heads, po.gen.vocab = 50368, po.gen.seq = r->seq;
  po.gen.micro_batch = r->mb;
  po.gen.flash_attention = 1, po.gen.dropout = 0;
  po.recompute = r->ckpt ? STRATA_RECOMPUTE_FULL : STRATA_RECOMPUTE_NONE;
  po.sequence_parallel = 0;
  po.zero_stage = 3; /* FULL_SHARD */
  po.quiet = 1;
  po.micro_batch = r->mb;
  po.global_batch = r->mb * r->accum * 8;
  po.tp = 1, po.pp = 1, po.dp = 8;
  po.no_memory_check = 1;
  po.top = 1;
  po.stack = *stack;
  int rc = strata_model_load("gpt", &po.gen, &g);
  if (!rc)
    rc = strata_cluster_load(
        strcmp(r->gpu, "H100") ? "dgx-a100:1" : "dgx-h100:1", &c);
  if (!rc) rc = strata_pipeline_plan(g, c, &po, &p);
  if (!rc) *tps = (double)po.global_batch * r->seq / p->step_seconds / 8;
  strata_plan_destroy(p);
  strata_cluster_destroy(c);
  strata_graph_destroy(g);
  return rc;
}

/* The fit set: each row before (TE's curve, fused kernels: the model as
 * it was, with no stack) and after (FlashAttention 1.x -- the tables date
 * from May-June 2023, before LLM Foundry took up FlashAttention 2 -- and
 * eager PyTorch), and the mean absolute error per GPU. */
static void foundry_table(void) {
  strata_stack_t before, after;
  strata_stack_init(&before);
  strata_stack_init(&after);
  after.attn = STRATA_ATTN_FA1, after.gemm = STRATA_GEMM_PATH_EAGER;
  printf("## LLM Foundry (PyTorch FSDP, 8 GPUs; tokens/s/GPU)\n\n| GPU | "
         "model | seq | mb | ckpt | published | before | error | after | "
         "error |\n|---|---|---|---|---|---|---|---|---|---|\n");
  for (int i = 0; i < N_FOUNDRY; i++) {
    foundry_t *r = &foundry[i];
    r->ok = !foundry_estimate(r, &before, &r->before) &&
            !foundry_estimate(r, &after, &r->after);
    if (!r->ok) {
      printf("| %s | %s | %d | %d | %d | %.0f | failed: %s | | | |\n", r->gpu,
             r->size, r->seq, r->mb, r->ckpt, r->measured, strata_last_error());
      continue;
    }
    printf("| %s | %s | %d | %d | %d | %.0f | %.0f | %+.1f%% | %.0f | "
           "%+.1f%% |\n",
           r->gpu, r->size, r->seq, r->mb, r->ckpt, r->measured, r->before,
           100 * (r->before / r->measured - 1), r->after,
           100 * (r->after / r->measured - 1));
  }
  static const char *gpus_[] = {"H100", "A100"};
  printf("\n");
  for (int k = 0; k < 2; k++) {
    double eb = 0, ea = 0, wa = 0;
    int n = 0;
    for (int i = 0; i < N_FOUNDRY; i++) {
      const foundry_t *r = &foundry[i];
      if (!r->ok || strcmp(r->gpu, gpus_[k])) continue;
      double a = fabs(r->after / r->measured - 1);
      eb += fabs(r->before / r->measured - 1), ea += a, n++;
      wa = a > wa ? a : wa;
    }
    printf("LLM Foundry %s: mean absolute error %.1f %% before, %.1f %% "
           "after (worst %.1f %%) over %d rows\n",
           gpus_[k], n ? 100 * eb / n : 0, n ? 100 * ea / n : 0, 100 * wa, n);
  }
  printf("\n");
}

/* bench_bridge.py on strata: its table, or a line saying why none. */
static void bridge(const char *strata) {
  char script[] = STRATA_SOURCE_DIR "/bench/bench_bridge.py";
  if (access(strata, X_OK) != 0) {
    printf("\nMegatron-Bridge runs: no strata at %s (--strata PATH)\n", strata);
    return;
  }
  char *argv[] = {script, (char *)strata, NULL};
  python("Megatron-Bridge runs", argv);
}

/* --generalisation: these runs and the Bridge reference rows written as
 * runs files, then bench_calibration.py's leave-one-source-out and
 * calibration on 1-3 runs per group (docs/calibration.md). */
static int generalisation(const char *strata) {
  char dir[] = "/tmp/bench_fidelity.XXXXXX", nar[64], br[64];
  char bscript[] = STRATA_SOURCE_DIR "/bench/bench_bridge.py";
  char cscript[] = STRATA_SOURCE_DIR "/bench/bench_calibration.py";
  char runs_opt[] = "--runs";
  if (access(strata, X_OK) != 0 || !mkdtemp(dir)) {
    printf("generalisation: no strata at %s, or no scratch folder\n", strata);
    return 1;
  }
  snprintf(nar, sizeof nar, "%s/narayanan.json", dir);
  snprintf(br, sizeof br, "%s/bridge.json", dir);
  char *bargv[] = {bscript, (char *)strata, runs_opt, br, NULL};
  char *cargv[] = {cscript, (char *)strata, nar, br, NULL};
  int rc = write_runs(nar) || python("Megatron-Bridge runs", bargv) ||
           python("generalisation", cargv);
  unlink(nar);
  unlink(br);
  rmdir(dir);
  return rc;
}

int main(int argc, char **argv) {
  int csv = 0, no_bridge = 0, gen = 0;
  char strata[4096];
  /* the strata of this build: bench/.. */
  const char *slash = strrchr(argv[0], '/');
  if (slash)
    snprintf(strata, sizeof strata, "%.*s/../strata", (int)(slash - argv[0]),
             argv[0]);
  else
    snprintf(strata, sizeof strata, "../strata");
  static strata_calibration_t cal;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--csv")) {
      csv = 1;
    } else if (!strcmp(argv[i], "--no-bridge")) {
      no_bridge = 1;
    } else if (!strcmp(argv[i], "--generalisation")) {
      gen = 1;
    } else if (!strcmp(argv[i], "--runs") && i + 1 < argc) {
      if (write_runs(argv[++i])) {
        fprintf(stderr, "bench_fidelity: cannot write %s\n", argv[i]);
        return 1;
      }
      return 0;
    } else if (!strcmp(argv[i], "--strata") && i + 1 < argc) {
      snprintf(strata, sizeof strata, "%s", argv[++i]);
    } else if (!strcmp(argv[i], "--calibration") && i + 1 < argc) {
      if (strata_calibration_load(argv[++i], &cal)) {
        fprintf(stderr, "bench_fidelity: %s\n", strata_last_error());
        return 1;
      }
      calibration = &cal;
    } else {
      fprintf(stderr, "usage: bench_fidelity [--csv] [--calibration FILE] "
                      "[--strata PATH] [--no-bridge] [--runs FILE] "
                      "[--generalisation]\n");
      return 1;
    }
  }
  if (gen) return generalisation(strata);
  for (int i = 0; i < N_RUNS; i++) {
    run_t *r = &runs[i];
    double step = 0, mem = 0;
    if (estimate(r, &step, &mem)) {
      fprintf(stderr, "bench_fidelity: figure %s %s: %s\n", r->fig, r->curve,
              strata_last_error());
      continue;
    }
    r->predicted = value_of(r, step);
    r->ok = 1;
    if (csv)
      printf("%s,%s,%d,%d,%d,%d,%d,%d,%d,%.4f,%.4f,%.3f\n", r->fig, r->curve,
             r->tp, r->pp, r->dp, r->mb, r->batch, r->vpp, r->recompute,
             r->measured, r->predicted, mem / 1073741824.0);
  }
  if (csv) return 0;
  printf(
      "Narayanan et al. 2021 against strata estimate (dgx-a100 presets)\n\n");
  table1();
  static const char *figs[] = {"7",  "11", "12", "13", "14",
                               "15", "16", "17", "18"};
  for (size_t f = 0; f < sizeof figs / sizeof figs[0]; f++)
    figure(figs[f]);
  if (!calibration) foundry_table();
  if (!no_bridge && !calibration) {
    printf("\n");
    bridge(strata);
  }
  return 0;
}
