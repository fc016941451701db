/*
 * test_fleet.c - strata fleet's pieces: the split of nodes among jobs
 * (strata_fleet_allocate) against the enumeration of every split on small
 * random curves, with and without required jobs, on one and two node
 * groups; the cluster of some of a cluster's nodes (strata_cluster_subset)
 * against the cluster itself and the spec of those nodes; JOBS.json's
 * reader.
 */
#include <math.h>
#include <stdlib.h>

#include "strata/strata.h"
#include "testlib.h"

#define MAXN 7

typedef struct {
  int jobs, groups, cap[2];
  double value[3 * 2 * (MAXN + 1)];
  int required[3];
  int count_first; /* the fair objective's order: jobs run, then worth */
} toy_t;

/* (c1, v1) beats (c2, v2) in t's order. */
static int beats(const toy_t *t, int c1, double v1, int c2, double v2) {
  return t->count_first ? c1 > c2 || (c1 == c2 && v1 > v2) : v1 > v2;
}

static double toy_value(const toy_t *t, int j, int g, int n) {
  return t->value[(j * t->groups + g) * (MAXN + 1) + n];
}

/* The best total over every split: each job none or (g, n); *count
 * the jobs the best runs. */
static double brute(const toy_t *t, int j, int *left, int *found, int *count) {
  if (j >= t->jobs || j >= 3) {
    *found = 1;
    *count = 0;
    return 0;
  }
  double best = -1;
  int f = 0, c = 0, bc = -1;
  if (!t->required[j]) {
    double v = brute(t, j + 1, left, &f, &c);
    if (f) best = v, bc = c, *found = 1;
  }
  for (int g = 0; g < t->groups; g++)
    for (int n = 1; n <= left[g]; n++) {
      double v = toy_value(t, j, g, n);
      if (v < 0) continue;
      left[g] -= n;
      f = 0;
      double rest = brute(t, j + 1, left, &f, &c);
      left[g] += n;
      if (f && beats(t, c + 1, v + rest, bc, best))
        best = v + rest, bc = c + 1, *found = 1;
    }
  *count = bc;
  return best;
}

static unsigned rnd(unsigned *s) {
  *s = *s * 1103515245u + 12345u;
  return (*s >> 8) & 0xffffff;
}

static void toy_make(toy_t *t, unsigned *seed) {
  memset(t, 0, sizeof *t);
  t->jobs = 2 + (int)(rnd(seed) % 2);
  t->groups = 1 + (int)(rnd(seed) % 2);
  for (int g = 0; g < t->groups; g++)
    t->cap[g] = 1 + (int)(rnd(seed) % MAXN);
  t->count_first = rnd(seed) % 2;
  for (int j = 0; j < t->jobs; j++) {
    t->required[j] = rnd(seed) % 3 == 0;
    for (int g = 0; g < t->groups; g++)
      for (int n = 1; n <= MAXN; n++) /* a quarter of the points missing */
        t->value[(j * t->groups + g) * (MAXN + 1) + n] =
            rnd(seed) % 4 ? (double)(rnd(seed) % 1000) : -1;
  }
}

/* The answer is a split (within the groups, required jobs running, its
 * points present) worth what it says, and worth the enumeration's best:
 * of the most worth (the throughput objective, and the fair one's sum
 * of logs as worths), or of the most jobs running, then the most worth
 * (the fair objective), half the cases each. */
TEST(allocate_equals_brute_force) {
  unsigned seed = 12345;
  int feasible = 0, infeasible = 0, fewer = 0;
  for (int trial = 0; trial < 4000; trial++) {
    toy_t t;
    toy_make(&t, &seed);
    strata_fleet_problem_t p = {t.jobs,  t.groups,   t.cap,        MAXN,
                                t.value, t.required, t.count_first};
    strata_fleet_choice_t ch[3];
    double total = -2, sum = 0;
    int left[2] = {t.cap[0], t.cap[1]}, found = 0, count = 0, ran = 0;
    double best = brute(&t, 0, left, &found, &count);
    int rc = strata_fleet_allocate(&p, ch, &total);
    if (!found) {
      ASSERT_EQ(rc, STRATA_EINFEASIBLE);
      infeasible++;
      continue;
    }
    ASSERT_OK(rc);
    feasible++;
    int used[2] = {0, 0};
    for (int j = 0; j < t.jobs; j++) {
      if (t.required[j]) ASSERT(ch[j].nodes > 0);
      if (!ch[j].nodes) continue;
      ASSERT(ch[j].group >= 0 && ch[j].group < t.groups);
      used[ch[j].group] += ch[j].nodes;
      ran++;
      ASSERT(toy_value(&t, j, ch[j].group, ch[j].nodes) >= 0);
      sum += toy_value(&t, j, ch[j].group, ch[j].nodes);
    }
    for (int g = 0; g < t.groups; g++)
      ASSERT(used[g] <= t.cap[g]);
    ASSERT_NEAR(sum, total, 0, 1e-9);
    ASSERT_NEAR(total, best, 0, 1e-9);
    ASSERT_EQ(ran, count);
    /* a case where the most worth runs fewer jobs than the fair order */
    if (t.count_first) {
      t.count_first = 0;
      int c2 = 0;
      left[0] = t.cap[0], left[1] = t.cap[1];
      brute(&t, 0, left, &found, &c2);
      fewer += c2 < count;
    }
  }
  /* both outcomes and both orders were exercised */
  ASSERT(feasible > 1000);
  ASSERT(infeasible > 10);
  ASSERT(fewer > 50);
}

/* Ties go to fewer nodes: a flat curve gets one node. */
TEST(allocate_ties_take_fewer_nodes) {
  int cap[1] = {4}, req[2] = {1, 0};
  double v[2 * 5] = {0, 5, 5, 5, 5, /* job 1 flat */ 0, 1, 2, 3, 3};
  strata_fleet_problem_t p = {2, 1, cap, 4, v, req, 0};
  strata_fleet_choice_t ch[2];
  double total;
  ASSERT_OK(strata_fleet_allocate(&p, ch, &total));
  ASSERT_EQ(ch[0].nodes, 1);
  ASSERT_EQ(ch[1].nodes, 3);
  ASSERT_NEAR(total, 8, 0, 1e-12);
}

/* A table past the limit is refused with a message, not allocated. */
TEST(allocate_refuses_huge_tables) {
  int cap[8], req[64] = {0};
  for (int g = 0; g < 8; g++)
    cap[g] = 100;
  strata_fleet_problem_t p = {64, 8, cap, 100, NULL, req, 0};
  strata_fleet_choice_t ch[64];
  ASSERT_EQ(strata_fleet_allocate(&p, ch, NULL), STRATA_EUNSUPPORTED);
  ASSERT_CONTAINS(strata_last_error(), "states");
}

static double step_of(const strata_graph_t *g, const strata_cluster_t *c) {
  strata_plan_opts_t o;
  strata_plan_t *p = NULL;
  strata_plan_opts_init(&o);
  o.quiet = 1;
  o.global_batch = 64;
  ASSERT_OK(strata_pipeline_plan(g, c, &o, &p));
  double s = p->step_seconds;
  strata_plan_destroy(p);
  return s;
}

/* The subset of every node is the cluster; the first n nodes plan as
 * the preset of n nodes; later nodes keep their names, the others are
 * another job's; across a leaf boundary the spine appears. */
TEST(subset_is_its_nodes) {
  strata_cluster_t *c = NULL, *s = NULL, *small = NULL;
  strata_graph_t *g = NULL;
  ASSERT_OK(strata_model_load("gpt-1.7b", NULL, &g));
  ASSERT_OK(strata_cluster_load("dgx-h100:40", &c));
  ASSERT_OK(strata_cluster_subset(c, 0, 0, 40, NULL, &s));
  ASSERT_EQ(strata_cluster_level_count(s), strata_cluster_level_count(c));
  ASSERT_NEAR(step_of(g, s), step_of(g, c), 1e-12, 0);
  strata_cluster_destroy(s);
  ASSERT_OK(strata_cluster_subset(c, 0, 0, 4, "x", &s));
  ASSERT_OK(strata_cluster_load("dgx-h100:4", &small));
  ASSERT_NEAR(step_of(g, s), step_of(g, small), 1e-12, 0);
  ASSERT_STR_EQ(strata_cluster_name(s), "x");
  strata_cluster_destroy(s);
  ASSERT_OK(strata_cluster_subset(c, 0, 30, 4, NULL, &s));
  ASSERT_EQ(strata_cluster_nodes(s), 4);
  ASSERT_STR_EQ(strata_cluster_node_name(s, 0), "node30");
  ASSERT_CONTAINS(strata_cluster_spec_node_dropped(s, 0), "another job");
  ASSERT(strata_cluster_spec_node_dropped(s, 31) == NULL);
  int last = strata_cluster_level_count(s) - 1;
  ASSERT_EQ(strata_cluster_level(s, last)->kind, STRATA_LEVEL_SPINE);
  strata_cluster_destroy(s);
  ASSERT_EQ(strata_cluster_subset(c, 0, 38, 4, NULL, &s), STRATA_EINVAL);
  ASSERT_EQ(strata_cluster_subset(c, 1, 0, 1, NULL, &s), STRATA_EINVAL);
  strata_cluster_destroy(small);
  strata_cluster_destroy(c);
  strata_graph_destroy(g);
}

/* The least step of p's front (STRATA_PARETO_STEP_GPUS) on at most
 * `gpus` GPUs; INFINITY where none. */
static double front_best(const strata_plan_t *p, int gpus) {
  double best = INFINITY;
  for (int i = 0; i < p->n_pareto; i++) {
    const strata_plan_config_t *x = &p->pareto[i];
    if (x->tp * (x->cp > 1 ? x->cp : 1) * x->pp * x->dp <= gpus &&
        x->step_seconds < best)
      best = x->step_seconds;
  }
  return best;
}

/* strata fleet's curve from one search: the front of step against GPUs
 * on a group's most nodes gives on n nodes exactly the step of a plan on
 * the first n nodes alone, for every n (across the leaf boundary at 32
 * too), and nothing where that plan finds nothing. */
static void front_matches(const char *model, const char *cluster, int batch,
                          const int *counts, int n_counts) {
  strata_cluster_t *c = NULL, *s = NULL;
  strata_graph_t *g = NULL;
  strata_plan_t *front = NULL, *p = NULL;
  strata_plan_opts_t o;
  ASSERT_OK(strata_model_load(model, NULL, &g));
  ASSERT_OK(strata_cluster_load(cluster, &c));
  strata_plan_opts_init(&o);
  o.quiet = 1;
  o.global_batch = batch;
  o.top = 1;
  o.pareto = STRATA_PARETO_STEP_GPUS;
  ASSERT_OK(strata_pipeline_plan(g, c, &o, &front));
  ASSERT(front->n_pareto > 1);
  o.pareto = 0;
  int gpn = strata_cluster_gpus_per_node(c), fits = 0;
  for (int i = 0; i < n_counts; i++) {
    ASSERT_OK(strata_cluster_subset(c, 0, 0, counts[i], NULL, &s));
    int rc = strata_pipeline_plan(g, s, &o, &p);
    double want = rc ? INFINITY : p->step_seconds;
    if (rc) ASSERT_EQ(rc, STRATA_EINFEASIBLE);
    strata_error_clear();
    double got = front_best(front, counts[i] * gpn);
    if (isfinite(want))
      ASSERT_NEAR(got, want, 1e-12, 0);
    else
      ASSERT(!isfinite(got));
    fits += !rc;
    strata_plan_destroy(p);
    strata_cluster_destroy(s);
    p = NULL;
  }
  ASSERT(fits > 1);
  strata_plan_destroy(front);
  strata_cluster_destroy(c);
  strata_graph_destroy(g);
}

TEST(front_equals_plan_per_count) {
  const int wide[] = {1, 2, 3, 5, 8, 13, 31, 32, 33, 40};
  const int all[] = {1, 2, 3, 4, 5, 6};
  front_matches("gpt-1.7b", "dgx-h100:40", 256, wide, 10);
  front_matches("llama2-70b", "dgx-h100:6", 96, all, 6);
}

static int parse(const char *text, strata_fleet_jobs_t **f) {
  return strata_fleet_jobs_parse(text, strlen(text), "J", f);
}

TEST(jobs_read) {
  strata_fleet_jobs_t *f = NULL;
  ASSERT_OK(parse("{\"objective\": \"throughput\", \"jobs\": [{\"name\": "
                  "\"a\", \"model\": \"gpt\", \"tokens\": 1e9, \"deadline\": "
                  "\"36h\"}, {\"name\": \"b-2.x\", \"model\": \"llama3-8b\", "
                  "\"global_batch\": 256, \"weight\": 2.5, \"min_nodes\": 2, "
                  "\"max_nodes\": 2, \"seq\": 32768, \"precision\": \"fp8\", "
                  "\"free\": true, \"sequence_parallel\": false, "
                  "\"moe_imbalance\": 1.25}]}",
                  &f));
  ASSERT_EQ(f->n, 2);
  ASSERT_EQ(f->objective, STRATA_FLEET_THROUGHPUT);
  ASSERT_STR_EQ(f->jobs[1].name, "b-2.x");
  ASSERT_EQ(f->jobs[0].n_opts, 0);
  ASSERT_NEAR(f->jobs[0].tokens, 1e9, 0, 0);
  ASSERT_NEAR(f->jobs[0].seconds, 36 * 3600, 0, 0);
  ASSERT_EQ(f->jobs[1].n_opts, 6);
  ASSERT_STR_EQ(f->jobs[1].opt_word[0], "--global-batch=256");
  ASSERT_STR_EQ(f->jobs[1].opt_key[0], "global_batch");
  ASSERT_STR_EQ(f->jobs[1].opt_word[1], "--seq=32768");
  ASSERT_STR_EQ(f->jobs[1].opt_word[2], "--precision=fp8");
  ASSERT_STR_EQ(f->jobs[1].opt_word[3], "--free");
  ASSERT_STR_EQ(f->jobs[1].opt_word[4], "--no-sequence-parallel");
  ASSERT_STR_EQ(f->jobs[1].opt_word[5], "--moe-imbalance=1.25");
  ASSERT_NEAR(f->jobs[0].weight, 1, 0, 0);
  ASSERT_NEAR(f->jobs[1].weight, 2.5, 0, 0);
  ASSERT_EQ(f->jobs[1].min_nodes, 2);
  strata_fleet_jobs_destroy(f);
}

TEST(jobs_refused) {
  static const struct {
    const char *text, *msg;
  } bad[] = {
      {"[]", "the top level must be an object"},
      {"{\"jobs\": []}", "give 1 to 64 jobs"},
      {"{\"job\": []}", "unknown key 'job'; did you mean 'jobs'?"},
      {"{\"jobs\": [{\"model\": \"gpt\"}]}",
       "jobs[0]: missing required field 'name'"},
      {"{\"jobs\": [{\"name\": \"../x\", \"model\": \"gpt\"}]}",
       "cannot be a file name"},
      {"{\"objective\": \"fare\", \"jobs\": [{\"name\": \"a\", "
       "\"model\": \"gpt\"}]}",
       "'fare' is not an objective: fair"},
      {"{\"jobs\": [{\"name\": \"a\", \"model\": \"gpt\", \"Seq\": 1}]}",
       "key 'Seq' is neither the job's own"},
      {"{\"jobs\": [{\"name\": \"a\", \"model\": \"gpt\", \"seq\": [1]}]}",
       "field 'seq' (strata plan's --seq) must be a string"},
      {"{\"jobs\": [{\"name\": \"a\", \"model\": \"gpt\", \"deadline\": "
       "\"2h\"}]}",
       "'deadline' without 'tokens'"},
      {"{\"jobs\": [{\"name\": \"a\", \"model\": \"gpt\", \"tokens\": 1e9, "
       "\"deadline\": \"2001-01-01\"}]}",
       "deadline '2001-01-01' is past"},
      {"{\"jobs\": [{\"name\": \"a\", \"model\": \"gpt\", \"tokens\": 1e9, "
       "\"deadline\": \"soon\"}]}",
       "is neither a date"},
      {"{\"jobs\": [{\"name\": \"a\", \"model\": \"gpt\", \"tokens\": 1e19, "
       "\"deadline\": \"2d\"}]}",
       "field 'tokens' is 1e+19"},
      {"{\"jobs\": [{\"name\": \"a\", \"model\": \"gpt\", \"weight\": 0}]}",
       "'weight' is 0"},
      {"{\"jobs\": [{\"name\": \"a\", \"model\": 3}]}",
       "jobs[0]: field 'model' must be a string"},
      {"{\"jobs\": [{\"name\": \"a\", \"model\": \"gpt\", \"min_nodes\": 4, "
       "\"max_nodes\": 2}]}",
       "jobs[0]: min_nodes 4 is above max_nodes 2"},
      {"{\"jobs\": [{\"name\": \"a\", \"model\": \"gpt\", \"min_nodes\": "
       "1.5}]}",
       "field 'min_nodes' must be an integer"},
      {"{\"jobs\": [{\"name\": \"ab\", \"model\": \"gpt\"}, {\"name\": "
       "\"AB\", \"model\": \"gpt\"}]}",
       "jobs[1].name 'AB' is jobs[0]'s 'ab' again but for case"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    strata_fleet_jobs_t *f = (strata_fleet_jobs_t *)1;
    ASSERT_EQ(parse(bad[i].text, &f), STRATA_EBADINPUT);
    ASSERT(f == NULL);
    ASSERT_CONTAINS(strata_last_error(), bad[i].msg);
  }
}

/* The library path of strata fleet: JOBS.json read, two tiny jobs split
 * over a cluster of three nodes and planned on their own. */
static int whole_fleet(double *total) {
  static const char jobs[] =
      "{\"jobs\": [{\"name\": \"a\", \"model\": \"gpt\"}, "
      "{\"name\": \"b\", \"model\": \"gpt\", \"min_nodes\": 1, "
      "\"weight\": 2}]}";
  strata_fleet_jobs_t *f = NULL;
  strata_cluster_t *c = NULL;
  strata_graph_t *g[2] = {NULL, NULL};
  strata_plan_opts_t po[2];
  strata_fleet_result_t res[2];
  strata_gen_opts_t gen;
  memset(res, 0, sizeof res);
  strata_gen_opts_keep(&gen);
  gen.layers = 2, gen.hidden = 128, gen.heads = 4, gen.seq = 64;
  gen.vocab = 512;
  int rc = strata_fleet_jobs_parse(jobs, strlen(jobs), "J", &f);
  if (!rc) rc = strata_cluster_load("dgx-h100:3", &c);
  for (int j = 0; j < 2 && !rc; j++) {
    strata_plan_opts_init(&po[j]);
    po[j].quiet = 1;
    po[j].global_batch = 16;
    rc = strata_model_load(f->jobs[j].model, &gen, &g[j]);
  }
  if (!rc)
    rc = strata_fleet_plan(c, 2, (const strata_graph_t *const *)g, po, f->jobs,
                           NULL, res, total);
  if (!rc && !(res[1].nodes > 0 && res[1].plan && res[1].cluster))
    rc = 1; /* the job with min_nodes runs, with its plan and nodes */
  strata_fleet_results_free(res, 2);
  strata_graph_destroy(g[0]);
  strata_graph_destroy(g[1]);
  strata_cluster_destroy(c);
  strata_fleet_jobs_destroy(f);
  return rc;
}

/* Allocation N fails, for every N until the run succeeds: a clean error
 * each time (LeakSanitizer, in the ASan build, that nothing leaks), and
 * the same split once it succeeds. */
TEST(alloc_failures_fleet) {
  double want = 0, got;
  strata_alloc_fail_at(0);
  ASSERT_OK(whole_fleet(&want));
  long attempts = strata_alloc_fail_at(0), clean = 0;
  ASSERT(attempts > 100);
  long stride = attempts / 300 > 1 ? attempts / 300 : 1; /* ~600 runs */
  for (long n = 1; n <= attempts + 1; n += n < 300 ? 1 : stride) {
    strata_error_clear();
    strata_alloc_fail_at(n);
    int rc = whole_fleet(&got);
    int hit = strata_alloc_failed();
    strata_alloc_fail_at(0);
    if (rc) {
      if (rc >= 0 || !strata_last_error()[0] || !hit)
        test_fail(__FILE__, __LINE__, "N=%ld: rc %d, injected %d, '%s'", n, rc,
                  hit, strata_last_error());
      clean++;
    } else {
      ASSERT_NEAR(got, want, 1e-12, 0);
    }
    if (!rc && !hit) break;
  }
  fprintf(stderr, "  %ld allocations a run, %ld clean errors\n", attempts,
          clean);
  ASSERT(clean > 0);
}

static const test_entry_t tests[] = {
    TEST_ENTRY(allocate_equals_brute_force),
    TEST_ENTRY(allocate_ties_take_fewer_nodes),
    TEST_ENTRY(allocate_refuses_huge_tables),
    TEST_ENTRY(subset_is_its_nodes),
    TEST_ENTRY(front_equals_plan_per_count),
    TEST_ENTRY(jobs_read),
    TEST_ENTRY(jobs_refused),
    TEST_ENTRY(alloc_failures_fleet),
};
TEST_MAIN(tests)
