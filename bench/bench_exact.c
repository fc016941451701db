/*
 * bench_exact.c - the plan against every configuration `strata estimate`
 * takes, on real sizes: for each case, every family (tensor-parallel
 * size, micro-batch, sequence parallelism, recompute), pipeline size with
 * Megatron-LM's even split (estimate's default), data parallelism and
 * virtual stages is costed exactly by the planner's evaluation, without
 * any bound; the least step that fits is compared with `strata plan`'s.
 * The plan also searches uneven first and last stages, so plan / best is
 * at most 1; tests/test_pipeline.c checks the whole space, uneven splits
 * included, on small cases.  Prints the table of docs/benchmarks.md.
 *
 * Usage: bench_exact
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipeline/search.h"
#include "strata/strata.h"

typedef struct {
  const char *model, *cluster;
  int global_batch;
} case_t;

typedef struct {
  double step, peak;
  st__cfg_t cf;
  long n, fit;
} best_t;

static int consider(st__search_t *S, st__cfg_t *cf, best_t *b) {
  st__cost_t c;
  int rc = st__cfg_cost(S, cf, 1, &c);
  if (rc || !isfinite(c.step)) return rc;
  b->n++;
  if (!c.fits) return 0;
  b->fit++;
  if (c.step < b->step || (c.step == b->step && c.peak < b->peak)) {
    b->step = c.step;
    b->peak = c.peak;
    b->cf = *cf;
  }
  return 0;
}

static int enumerate(st__search_t *S, best_t *b) {
  int L = S->L, rc = 0;
  for (int i = 0; i < S->n_fam && !rc; i++) {
    const st__family_t *f = &S->fam[i];
    if (!f->ok) continue;
    int mb = S->graphs[f->graph]->micro_batch;
    for (int p = 1; p <= L && p <= ST__MAX_PP && !rc; p++) {
      if (L % p) continue; /* Megatron-LM's even split */
      for (int dp = 1; f->tcp * p * dp <= S->total && !rc; dp++) {
        if (S->o->global_batch % (mb * dp)) continue;
        st__cfg_t cf;
        memset(&cf, 0, sizeof cf);
        cf.f = f, cf.p = p, cf.dp = dp, cf.b = mb;
        cf.m = S->o->global_batch / (mb * dp);
        cf.first = cf.last = p > 1 ? L / p : 0;
        cf.v = 1;
        rc = consider(S, &cf, b);
        for (int v = 2; !rc && p >= 3 && p * v <= L; v++) {
          if (L % (p * v) || cf.m % p || cf.m < p) continue;
          cf.v = v;
          cf.first = cf.last = 0;
          rc = consider(S, &cf, b);
        }
      }
    }
  }
  return rc;
}

/* The table: a 4-GPU-per-node H100 template of 21 nodes. */
static const char *template21 =
    "{\"name\": \"h100x4-21\", \"node_groups\": [{\"count\": 21, "
    "\"template\": {\"gpus\": 4, \"gpu_model\": \"H100-SXM\", "
    "\"nvlink_gbytes_per_s\": 450, \"nics\": 4, \"nic_gbytes_per_s\": 50}}], "
    "\"network\": {\"latency_us\": 5, \"leaf_size\": 8}}";

int main(void) {
  const case_t cases[] = {
      {"gpt-7.5b", "dgx-a100:4", 256},      {"llama2-70b", "h100x4-21", 1024},
      {"llama3-405b", "dgx-h100:64", 512},  {"gpt-39.1b", "dgx-a100:64", 1536},
      {"gpt-529.6b", "dgx-a100:280", 2240},
  };
  strata_init();
  printf("| model | cluster | global batch | plan | best of %s | plan / "
         "best | configurations (fit) | plan s | enumeration s |\n",
         "estimate's space");
  printf("|---|---|---|---|---|---|---|---|---|\n");
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const case_t *k = &cases[i];
    strata_graph_t *g = NULL;
    strata_cluster_t *c = NULL;
    strata_plan_t *p = NULL;
    strata_plan_opts_t o;
    st__search_t S;
    best_t b = {INFINITY, INFINITY, {0}, 0, 0};
    strata_plan_opts_init(&o);
    o.quiet = 1;
    o.global_batch = k->global_batch;
    o.model_spec = k->model;
    int rc = strata_model_load(k->model, NULL, &g);
    if (!rc && strcmp(k->cluster, "h100x4-21"))
      rc = strata_cluster_load(k->cluster, &c);
    else if (!rc) {
      char path[] = "/tmp/bench_exact_XXXXXX";
      int fd = mkstemp(path);
      FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
      rc = f && fputs(template21, f) >= 0 && fclose(f) == 0
               ? strata_cluster_load(path, &c)
               : strata_error(STRATA_EIO, "cannot write %s", path);
      if (fd >= 0) unlink(path);
    }
    double t0 = strata_now();
    if (!rc) rc = strata_pipeline_plan(g, c, &o, &p);
    double t1 = strata_now();
    if (!rc) rc = st__search_prepare(&S, g, c, &o);
    if (!rc) {
      rc = enumerate(&S, &b);
      st__search_release(&S);
    }
    double t2 = strata_now();
    if (rc) {
      fprintf(stderr, "bench_exact: %s on %s: %s\n", k->model, k->cluster,
              strata_last_error());
    } else {
      char pe[32] = "", be[32] = ""; /* context and expert parallelism */
      if (p->cp > 1 || p->ep > 1)
        snprintf(pe, sizeof pe, ", cp %d, ep %d", p->cp, p->ep);
      if (b.cf.f->cp > 1 || b.cf.f->ep > 1)
        snprintf(be, sizeof be, ", cp %d, ep %d", b.cf.f->cp, b.cf.f->ep);
      printf("| %s | %s | %d | tp %d%s, pp %d, dp %d, mb %d, vpp %d%s: %.3f "
             "s | tp %d%s, pp %d, dp %d, mb %d, vpp %d%s: %.3f s | %.4f | %ld "
             "(%ld) | %.2f | %.2f |\n",
             k->model, k->cluster, k->global_batch, p->tp, pe, p->pp, p->dp,
             p->micro_batch, p->vpp, p->sequence_parallel ? ", sp" : "",
             p->step_seconds, b.cf.f->tp, be, b.cf.p, b.cf.dp, b.cf.b,
             b.cf.v > 1 ? b.cf.v : 1, b.cf.f->sp ? ", sp" : "", b.step,
             p->step_seconds / b.step, b.n, b.fit, t1 - t0, t2 - t1);
    }
    strata_plan_destroy(p);
    strata_cluster_destroy(c);
    strata_graph_destroy(g);
  }
  return 0;
}
