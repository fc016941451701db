/*
 * bench_fidelity.c - the throughput `strata estimate` predicts for the ten
 * configurations of Narayanan et al. 2021 ("Efficient Large-Scale Language
 * Model Training on GPU Clusters Using Megatron-LM", Table 1) next to the
 * teraFLOP/s per GPU they measured on Selene (DGX A100 80 GB nodes).
 *
 * Each configuration goes through the command's path (fixed tp, pp and
 * dp = GPUs / (tp x pp), no memory pruning, 1F1B stitch) with full
 * activation recomputation, no sequence parallelism, no distributed
 * optimizer and the micro-batch given on the command line (default 1;
 * the paper does not list it per row).  The predicted figure is counted
 * the paper's way, equation (3) with recomputation:
 *   F = 96 B s l h^2 (1 + s/(6h) + V/(16 l h))   FLOPs per iteration,
 *   teraFLOP/s per GPU = F / (step time x GPUs),
 * so that it compares with their column; the model's own MFU (model FLOPs
 * without recomputation) is printed next to it.
 *
 * Usage: bench_fidelity [MICRO_BATCH [EFFICIENCY]]
 * Prints a Markdown table (docs/fidelity.md) and the mean absolute error.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strata/strata.h"

typedef struct {
  const char *model;
  double billions;
  int heads, hidden, layers, tp, pp, gpus, batch;
  double tflops; /* measured, per GPU */
} row_t;

/* Table 1 of Narayanan et al. 2021 (arXiv:2104.04473); V = 51200,
 * s = 2048.  The presets carry the same heads, hidden size and layers. */
static const row_t rows[] = {
    {"gpt-1.7b", 1.7, 24, 2304, 24, 1, 1, 32, 512, 137},
    {"gpt-3.6b", 3.6, 32, 3072, 30, 2, 1, 64, 512, 138},
    {"gpt-7.5b", 7.5, 32, 4096, 36, 4, 1, 128, 512, 142},
    {"gpt-18.4b", 18.4, 48, 6144, 40, 8, 1, 256, 1024, 135},
    {"gpt-39.1b", 39.1, 64, 8192, 48, 8, 2, 512, 1536, 138},
    {"gpt-76.1b", 76.1, 80, 10240, 60, 8, 4, 1024, 1792, 140},
    {"gpt-145.6b", 145.6, 96, 12288, 80, 8, 8, 1536, 2304, 148},
    {"gpt-310.1b", 310.1, 128, 16384, 96, 8, 16, 1920, 2160, 155},
    {"gpt-529.6b", 529.6, 128, 20480, 105, 8, 35, 2520, 2520, 163},
    {"gpt-1t", 1008, 160, 25600, 128, 8, 64, 3072, 3072, 163},
};

/* Equation (3) of the paper: FLOPs of one iteration with recomputation. */
static double paper_flops(const row_t *r) {
  double B = r->batch, s = 2048, l = r->layers, h = r->hidden, V = 51200;
  return 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
}

/* What `strata estimate --model M --cluster dgx-a100:N --tp T --pp P
 * --global-batch B --micro-batch b --recompute full` computes. */
static int estimate(const row_t *r, int mb, double eff, strata_plan_t **out) {
  strata_plan_opts_t po;
  strata_graph_t *g = NULL;
  strata_cluster_t *c = NULL;
  char spec[64];
  strata_plan_opts_init(&po);
  po.recompute = STRATA_RECOMPUTE_FULL;
  po.recompute_auto = 0;
  po.sequence_parallel = 0;
  po.quiet = 1;
  po.gen.micro_batch = mb;
  po.efficiency = eff;
  snprintf(spec, sizeof spec, "dgx-a100:%d", r->gpus / 8);
  int rc = strata_model_load(r->model, &po.gen, &g);
  if (!rc) rc = strata_cluster_load(spec, &c);
  if (!rc) {
    po.fix_tp = r->tp, po.fix_pp = r->pp;
    po.fix_dp = r->gpus / (r->tp * r->pp);
    po.micro_batch = mb;
    po.global_batch = r->batch;
    po.zero_stage = 0;
    po.memory_budget = 1e30;
    rc = strata_pipeline_plan(g, c, &po, out);
  }
  if (!rc) rc = strata_merge_stitch(*out, g, c);
  strata_cluster_destroy(c);
  strata_graph_destroy(g);
  return rc;
}

int main(int argc, char **argv) {
  int mb = argc > 1 ? atoi(argv[1]) : 1;
  double eff = argc > 2 ? atof(argv[2]) : 0.5, sum = 0, peak = 312e12;
  int n = 0;
  if (mb < 1 || eff <= 0 || eff > 1) {
    fprintf(stderr, "usage: bench_fidelity [MICRO_BATCH [EFFICIENCY]]\n");
    return 1;
  }
  printf("micro-batch %d, efficiency %.2f, full recompute, 1F1B\n\n", mb, eff);
  printf("| model | t | p | d | GPUs | B | m | measured TF/s | predicted "
         "TF/s | error | MFU | memory GiB |\n");
  printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    const row_t *r = &rows[i];
    strata_plan_t *p = NULL;
    int d = r->gpus / (r->tp * r->pp);
    if (estimate(r, mb, eff, &p)) {
      printf("| %s | %d | %d | %d | %d | %d | - | %.0f | %s | | | |\n",
             r->model, r->tp, r->pp, d, r->gpus, r->batch, r->tflops,
             strata_last_error());
      continue;
    }
    double tf = paper_flops(r) / (p->step_seconds * r->gpus) / 1e12;
    double err = (tf - r->tflops) / r->tflops;
    sum += fabs(err);
    n++;
    printf("| %s | %d | %d | %d | %d | %d | %d | %.0f (%.0f%%) | %.1f (%.0f%%) "
           "| %+.1f%% | %.1f%% | %.1f%s |\n",
           r->model, r->tp, r->pp, d, r->gpus, r->batch, p->n_micro, r->tflops,
           100 * r->tflops * 1e12 / peak, tf, 100 * tf * 1e12 / peak, 100 * err,
           100 * p->mfu, p->peak_memory_bytes / 1073741824.0,
           p->peak_memory_bytes > p->gpu_memory_bytes ? " (does not fit)" : "");
    strata_plan_destroy(p);
  }
  if (n)
    printf("\nmean absolute error %.1f%% over %d configurations\n",
           100 * sum / n, n);
  return 0;
}
