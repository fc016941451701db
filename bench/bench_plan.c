/*
 * bench_plan.c - whole-model planning time: gpt3-175b on dgx-h100:128
 * (1024 GPUs), llama3-405b on dgx-h100:2048 (16384 GPUs) and the mixture
 * of experts deepseek-v3 on dgx-h100:256 (2048 GPUs, searching expert,
 * expert tensor and context parallelism too): cold (an
 * empty cache filled as it goes), warm (every subproblem from the cache)
 * and with no cache at all, with 1 and 2 solver threads, and the free
 * mode; then the re-plan after a node is drained.  Prints medians and
 * ratios; never fails on a time.  Last, a mixed cluster: llama2-70b on 64
 * H100 and 64 A100 nodes (bench/data), against the 64 H100 nodes alone;
 * and the mixed search as groups and nodes grow (bench_mixed_scale).
 *
 * Usage: bench_plan [runs [mixed|free]]   (default 5; mixed: the mixed
 * search's scaling alone, 640 nodes of 2 to 4 generations first; free:
 * --free against Megatron mode on dgx-h100:128)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "strata/strata.h"

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

typedef struct {
  const char *model, *cluster;
  int global_batch, megatron;
  double time_limit; /* 0: none */
} case_t;

static void clear_dir(const char *dir) {
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  if (system(cmd) != 0) fprintf(stderr, "cannot clear %s\n", dir);
}

/* One plan; returns seconds, fills stats. */
static double run(const case_t *k, int threads, const char *cache,
                  strata_plan_t **keep) {
  strata_graph_t *g = NULL;
  strata_cluster_t *c = NULL;
  strata_plan_t *p = NULL;
  strata_plan_opts_t o;
  double t0 = strata_now(), t = NAN;
  strata_plan_opts_init(&o);
  o.global_batch = k->global_batch;
  o.megatron = k->megatron;
  o.threads = threads;
  o.cache_dir = cache;
  o.quiet = 1;
  o.time_limit = k->time_limit;
  o.model_spec = k->model;
  if (strata_model_load(k->model, NULL, &g) ||
      strata_cluster_load(k->cluster, &c) ||
      strata_pipeline_plan(g, c, &o, &p) || strata_merge_stitch(p, g, c)) {
    fprintf(stderr, "bench_plan: %s\n", strata_last_error());
  } else {
    t = strata_now() - t0;
  }
  if (keep)
    *keep = p;
  else
    strata_plan_destroy(p);
  strata_cluster_destroy(c);
  strata_graph_destroy(g);
  return t;
}

/* libuv sizes its pool once per process: each thread count is measured
 * in a child process of its own, which sends back its median. */
static double cold_median_in_child(const case_t *k, int threads, int runs,
                                   const char *dir) {
  int fd[2];
  double med = NAN;
  if (pipe(fd) != 0) return NAN;
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    double v[32];
    close(fd[0]);
    for (int r = 0; r < runs; r++) {
      clear_dir(dir);
      v[r] = run(k, threads, dir, NULL);
    }
    med = median(v, runs);
    ssize_t w = write(fd[1], &med, sizeof med);
    _exit(w == (ssize_t)sizeof med ? 0 : 1);
  }
  close(fd[1]);
  if (pid < 0 || read(fd[0], &med, sizeof med) != (ssize_t)sizeof med)
    med = NAN;
  close(fd[0]);
  if (pid > 0) waitpid(pid, NULL, 0);
  return med;
}

static void bench_case(const case_t *k, int runs, const char *dir) {
  double warm[32], nocache[32];
  strata_plan_t *p = NULL;
  double c1 = cold_median_in_child(k, 1, runs, dir);
  double c2 = cold_median_in_child(k, 2, runs, dir);
  clear_dir(dir);
  run(k, 2, dir, NULL); /* fill the cache */
  for (int r = 0; r < runs; r++)
    warm[r] = run(k, 2, dir, r ? NULL : &p);
  for (int r = 0; r < runs; r++)
    nocache[r] = run(k, 2, NULL, NULL);
  /* this process's pool has 2 threads from here on */
  double w = median(warm, runs);
  printf("%-12s %-16s %-8s cold 1 thread %8.3f s, 2 threads %8.3f s "
         "(x%.2f), warm %7.3f s (%.1f%% of cold); no cache %7.3f s\n",
         k->model, k->cluster, k->megatron ? "megatron" : "free", c1, c2,
         c2 > 0 ? c1 / c2 : 0, w, c2 > 0 ? 100 * w / c2 : 0,
         median(nocache, runs));
  if (p)
    printf("    plan: tp %d cp %d ep %d etp %d pp %d dp %d micro %d; "
           "subproblems %d total, %d distinct; warm run: %d ILPs solved, %d "
           "from cache\n",
           p->tp, p->cp, p->ep, p->etp, p->pp, p->dp, p->micro_batch,
           p->subproblems_total, p->subproblems_distinct, p->ilps_solved,
           p->cache_hits);
  strata_plan_destroy(p);
}

/* The nightly re-plan: the cache warmed on 128 nodes, then one node is
 * drained (127 nodes): only what changed is solved. */
static void bench_drain(const char *dir) {
  case_t full = {"gpt3-175b", "dgx-h100:128", 1536, 1, 0};
  case_t less = {"gpt3-175b", "dgx-h100:127", 1536, 1, 0};
  strata_plan_t *p = NULL;
  clear_dir(dir);
  double cold = run(&full, 2, dir, NULL);
  double t = run(&less, 2, dir, &p);
  if (p)
    printf("re-plan after draining a node (128 -> 127 nodes): %.3f s against "
           "%.3f s cold (%.1f%%); %d ILPs solved, %d from cache; plan tp %d "
           "pp %d dp %d on %d GPUs\n",
           t, cold, 100 * t / cold, p->ilps_solved, p->cache_hits, p->tp, p->pp,
           p->dp, p->devices);
  strata_plan_destroy(p);
}

/* Node groups of different GPUs planning together, and the faster group
 * alone on the same network. */
static void bench_mixed(int runs) {
  case_t mixed = {"llama2-70b",
                  STRATA_SOURCE_DIR "/bench/data/h100x64-a100x64.json", 1024, 1,
                  0};
  case_t alone = {"llama2-70b", STRATA_SOURCE_DIR "/bench/data/h100x64.json",
                  1024, 1, 0};
  double v[32], w[32];
  strata_plan_t *p = NULL, *q = NULL;
  for (int r = 0; r < runs; r++) {
    v[r] = run(&mixed, 2, NULL, r ? NULL : &p);
    w[r] = run(&alone, 2, NULL, r ? NULL : &q);
  }
  if (!p || !q) return;
  printf("mixed cluster llama2-70b on 64 H100 + 64 A100 nodes: %.3f s to "
         "plan; tp %d pp %d dp %d, layers per stage",
         median(v, runs), p->tp, p->pp, p->dp);
  for (int s = 0; s < p->n_stages; s++)
    printf(" %d%s", p->stages[s].layer_end - p->stages[s].layer_begin,
           p->n_groups > 1 ? (p->stages[s].group ? "(A100)" : "(H100)") : "");
  printf("; step %.3f s against %.3f s on the H100 nodes alone (%.3f s to "
         "plan)\n",
         p->step_seconds, q->step_seconds, median(w, runs));
  strata_plan_destroy(p);
  strata_plan_destroy(q);
}

/* A cluster spec of n node groups of nodes / n nodes each, one GPU
 * generation a group (H100, A100, H200, B200 in that order), in dir. */
static void write_spec(const char *path, int n, int nodes) {
  static const char *gpu[] = {"H100-SXM", "A100-80GB", "H200", "B200"};
  FILE *f = fopen(path, "w");
  if (!f) return;
  fprintf(f, "{\"name\": \"mixed%dx%d\", \"node_groups\": [", n, nodes);
  for (int z = 0; z < n; z++)
    fprintf(f,
            "%s{\"count\": %d, \"template\": {\"gpus\": 8, "
            "\"gpu_model\": \"%s\"}}",
            z ? ", " : "", nodes / n, gpu[z]);
  fprintf(f, "], \"network\": {\"nic_gbits_per_s\": 400, \"leaf_size\": "
             "32, \"spine_oversubscription\": 1}}\n");
  fclose(f);
}

/* The CPU seconds this process has used (every thread's). */
static double cpu_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* One thread, no cache: the median CPU seconds of runs plans of k (the
 * machine is shared: its wall time says little), and the plan of the
 * first. */
static double median_of(const case_t *k, int runs, strata_plan_t **keep) {
  double v[32];
  for (int r = 0; r < runs; r++) {
    double c0 = cpu_now();
    v[r] = isnan(run(k, 1, NULL, r ? NULL : keep)) ? NAN : cpu_now() - c0;
  }
  return median(v, runs);
}

/* The mixed search as groups and nodes grow: llama3-405b on 2, 3 and 4
 * GPU generations of 64 to 2048 nodes; then the three-generation
 * cluster of bench/data (256 H100, 256 A100, 128 H200 nodes) against
 * the homogeneous 640 H100 nodes at the CLI's default global batch (512)
 * and at 2048, and deepseek-v3 on it, whole and under --time-limit 10
 * and 30.  CPU seconds, medians of runs (deepseek-v3: one). */
static void bench_mixed_scale(int runs, const char *dir) {
  static const int nodes[] = {64, 256, 1024, 2048};
  char path[600];
  snprintf(path, sizeof path, "%s/spec.json", dir);
  for (int n = 2; n <= 4; n++)
    for (size_t i = 0; i < sizeof nodes / sizeof nodes[0]; i++) {
      write_spec(path, n, nodes[i]);
      case_t k = {"llama3-405b", path, 2048, 1, 0};
      strata_plan_t *p = NULL;
      double t = median_of(&k, runs, &p);
      unsigned used = 0; /* the groups the plan's stages run on */
      for (int st = 0; p && st < p->n_stages; st++)
        used |= 1u << p->stages[st].group;
      if (p)
        printf("mixed %d generations, %4d nodes, llama3-405b: %8.3f s "
               "(CPU, 1 thread); pp %d on %d of the groups, step %.3f s\n",
               n, nodes[i], t, p->pp, __builtin_popcount(used),
               p->step_seconds);
      strata_plan_destroy(p);
    }
  const char *three =
      STRATA_SOURCE_DIR "/bench/data/h100x256-a100x256-h200x128.json";
  static const int batches[] = {512, 2048}; /* the CLI's default, and 4x */
  for (int i = 0; i < 2; i++) {
    case_t mixed = {"llama3-405b", three, batches[i], 1, 0};
    case_t homo = {"llama3-405b", "dgx-h100:640", batches[i], 1, 0};
    double tm = median_of(&mixed, runs, NULL),
           th = median_of(&homo, runs, NULL);
    printf("three generations, 640 nodes, llama3-405b, global batch %d: "
           "%.3f s against %.3f s on dgx-h100:640 (x%.1f)\n",
           batches[i], tm, th, th > 0 ? tm / th : 0);
  }
  static const double limits[] = {0, 10, 30};
  for (int i = 0; i < 3; i++) {
    case_t ds = {"deepseek-v3", three, 1024, 1, limits[i]};
    strata_plan_t *p = NULL;
    double t = median_of(&ds, 1, &p);
    if (p)
      printf("three generations, 640 nodes, deepseek-v3, time limit %g s: "
             "%.3f s; step %.3f s%s\n",
             limits[i], t, p->step_seconds,
             p->time_limited ? " (cut short)" : "");
    strata_plan_destroy(p);
  }
}

/* 640 nodes of 2, 3 and 4 GPU generations (640 / n nodes a group, one
 * less at 3) against the homogeneous 640 H100 nodes, llama3-405b at the
 * CLI's default global batch: the mixed search's cost by generations. */
static void bench_mixed_640(int runs, const char *dir) {
  char path[600];
  snprintf(path, sizeof path, "%s/spec640.json", dir);
  case_t homo = {"llama3-405b", "dgx-h100:640", 512, 1, 0};
  double th = median_of(&homo, runs, NULL);
  printf("dgx-h100:640, llama3-405b, global batch 512: %.3f s (CPU)\n", th);
  for (int n = 2; n <= 4; n++) {
    write_spec(path, n, 640);
    case_t k = {"llama3-405b", path, 512, 1, 0};
    double t = median_of(&k, runs, NULL);
    printf("mixed %d generations, 640 nodes, llama3-405b, global batch 512: "
           "%.3f s (CPU), x%.1f the homogeneous\n",
           n, t, th > 0 ? t / th : 0);
  }
}

/* --free against Megatron mode on dgx-h100:128 (global batch 1024): each
 * plan's step and CPU seconds (one run: free mode's search is slow). */
static void bench_free(void) {
  static const char *models[] = {"gpt3-175b", "llama3-405b", "deepseek-v3"};
  for (int i = 0; i < 3; i++) {
    case_t meg = {models[i], "dgx-h100:128", 1024, 1, 0};
    case_t fr = {models[i], "dgx-h100:128", 1024, 0, 0};
    strata_plan_t *p = NULL, *q = NULL;
    double tm = median_of(&meg, 1, &p), tf = median_of(&fr, 1, &q);
    if (p && q)
      printf("%s on dgx-h100:128: Megatron mode step %.3f s (%.2f s CPU), "
             "--free step %.3f s (%.2f s CPU, %s plan kept)\n",
             models[i], p->step_seconds, tm, q->step_seconds, tf,
             q->megatron ? "the Megatron-mode" : "free mode's own");
    strata_plan_destroy(p);
    strata_plan_destroy(q);
  }
}

int main(int argc, char **argv) {
  int runs = argc > 1 ? atoi(argv[1]) : 5;
  if (runs < 1 || runs > 32) runs = 5;
  char dir[] = "/tmp/strata-bench-XXXXXX";
  strata_init();
  setvbuf(stdout, NULL, _IOLBF, 0); /* each figure as it comes */
  if (!mkdtemp(dir)) return 1;
  static const case_t cases[] = {
      {"gpt3-175b", "dgx-h100:128", 1536, 1, 0},
      {"llama3-405b", "dgx-h100:2048", 2048, 1, 0},
      {"gpt3-175b", "dgx-h100:128", 1536, 0, 0},
      {"deepseek-v3", "dgx-h100:256", 1024, 1, 0},
  };
  printf("strata plan benchmark: median of %d runs, %ld cores online\n", runs,
         sysconf(_SC_NPROCESSORS_ONLN));
  if (argc > 2 && strcmp(argv[2], "mixed") == 0) { /* that part alone */
    bench_mixed_640(runs > 3 ? 3 : runs, dir);
    bench_mixed_scale(runs > 3 ? 3 : runs, dir);
    clear_dir(dir);
    return 0;
  }
  if (argc > 2 && strcmp(argv[2], "free") == 0) { /* that part alone */
    bench_free();
    clear_dir(dir);
    return 0;
  }
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    bench_case(&cases[i], (i == 2 || i == 3) && runs > 3 ? 3 : runs, dir);
  bench_drain(dir);
  bench_mixed(runs);
  bench_mixed_640(runs > 3 ? 3 : runs, dir);
  bench_mixed_scale(runs > 3 ? 3 : runs, dir);
  clear_dir(dir);
  return 0;
}
