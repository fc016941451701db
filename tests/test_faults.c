/*
 * test_faults.c - hardening tests over the whole library path of
 * `strata plan` (load a model and a cluster, plan, stitch, encode, save,
 * export):
 *
 *  - allocation fault injection in SQLite's manner: make allocation N fail
 *    for N = 1, 2, ... until the run succeeds untouched, and require each
 *    run to end in success or a clean error (a negative code and a
 *    message), never a crash; LeakSanitizer (the ASan build) proves that
 *    no failure path leaks.  GLPK's own allocations are not hooked; the
 *    planner's libuv workers share the global, atomic countdown.
 *  - deterministic output: the same inputs give byte-identical plan files
 *    and exports on every run and whatever the thread pool's size (each
 *    size in a child process, since libuv sizes its pool once per
 *    process).
 *  - atomic output: a write that fails leaves nothing behind, neither the
 *    file nor its temporary (*.XXXXXX), and an existing file keeps its old
 *    content.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "strata/strata.h"
#include "testlib.h"

/* Everything one run produces. */
typedef struct {
  unsigned char *plan;
  size_t plan_len;
  char *megatron, *deepspeed, *timeline, *summary;
} outputs_t;

static void outputs_free(outputs_t *o) {
  strata_free(o->plan);
  strata_free(o->megatron);
  strata_free(o->deepspeed);
  strata_free(o->timeline);
  strata_free(o->summary);
  memset(o, 0, sizeof *o);
}

/* The tiny model of every test here: gpt, 2 layers, hidden 128, 4 heads,
 * sequence 64, vocabulary 512. */
static int load_model(strata_gen_opts_t *gen, strata_graph_t **g) {
  strata_gen_opts_keep(gen);
  gen->layers = 2;
  gen->hidden = 128;
  gen->heads = 4;
  gen->seq = 64;
  gen->vocab = 512;
  return strata_model_load("gpt", gen, g);
}

static int exports(const strata_plan_t *p, outputs_t *out) {
  int rc;
  if ((rc = strata_plan_encode(p, &out->plan, &out->plan_len)) ||
      (rc = strata_export_megatron(p, &out->megatron)) ||
      (rc = strata_export_deepspeed(p, &out->deepspeed)) ||
      (rc = strata_export_timeline(p, &out->timeline)))
    return rc;
  return strata_plan_summary(p, &out->summary);
}

/* The library path of `strata plan -o save_path` followed by the three
 * exports and a reload of the saved file (save_path NULL: no file). */
static int whole_plan(int threads, const char *save_path, outputs_t *out) {
  strata_graph_t *g = NULL;
  strata_cluster_t *c = NULL;
  strata_plan_t *p = NULL, *back = NULL;
  strata_plan_opts_t o;
  int rc;
  strata_plan_opts_init(&o);
  o.quiet = 1;
  o.threads = threads;
  o.global_batch = 64;
  o.model_spec = "gpt";
  /* One micro-batch size, recompute and sequence-parallel setting: the
   * search stays small (fewer allocations to step through). */
  o.micro_batch = 1;
  o.gen.micro_batch = 1;
  o.recompute = STRATA_RECOMPUTE_NONE;
  o.sequence_parallel = 0;
  o.zero_stage = 1;
  if ((rc = load_model(&o.gen, &g)) ||
      (rc = strata_cluster_load("dgx-h100:1", &c)) ||
      (rc = strata_pipeline_plan(g, c, &o, &p)) ||
      (rc = strata_merge_stitch(p, g, c)) || (rc = exports(p, out)))
    goto out;
  if (save_path && (rc = strata_plan_save(p, save_path)) == 0)
    rc = strata_plan_load(save_path, &back);
out:
  strata_plan_destroy(back);
  strata_plan_destroy(p);
  strata_cluster_destroy(c);
  strata_graph_destroy(g);
  return rc;
}

/* Names in dir other than keep (NULL: none) ending in ".XXXXXX" style
 * temporaries or anything at all when strict. */
static int leftovers(const char *dir, const char *keep, int strict) {
  DIR *d = opendir(dir);
  struct dirent *e;
  int n = 0;
  ASSERT(d != NULL);
  while ((e = readdir(d))) {
    const char *dot = strrchr(e->d_name, '.');
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    if (keep && !strcmp(e->d_name, keep)) continue;
    if (strict || (dot && strlen(dot) == 7)) {
      fprintf(stderr, "  left behind: %s/%s\n", dir, e->d_name);
      n++;
    }
  }
  closedir(d);
  return n;
}

static const char *subdir(const char *name) {
  static char path[512];
  snprintf(path, sizeof path, "%s/%s", test_scratch_dir(), name);
  mkdir(path, 0755);
  return path;
}

/* ---- allocation failures ---- */

/* Every N up to dense, then every stride-th up to the run's own count:
 * the first few hundred allocations (loading, set-up) densely, the rest
 * sampled so the test stays well under a minute under ASan. */
static void fault_loop(long dense, long stride) {
  const char *dir = subdir("faults");
  char path[600];
  outputs_t out = {0};
  long n, attempts, clean = 0, tried = 0;
  snprintf(path, sizeof path, "%s/p.splan", dir);
  strata_alloc_fail_at(0);
  ASSERT_OK(whole_plan(0, path, &out));
  attempts = strata_alloc_fail_at(0);
  outputs_free(&out);
  unlink(path);
  ASSERT(attempts > 100);
  for (n = 1; n <= attempts + 1; n += n < dense ? 1 : stride) {
    strata_error_clear();
    strata_alloc_fail_at(n);
    int rc = whole_plan(0, path, &out);
    int hit = strata_alloc_failed();
    strata_alloc_fail_at(0);
    outputs_free(&out);
    tried++;
    if (rc) {
      if (rc >= 0 || !strata_last_error()[0] || !hit)
        test_fail(__FILE__, __LINE__, "N=%ld: rc %d, injected %d, message '%s'",
                  n, rc, hit, strata_last_error());
      clean++;
    }
    ASSERT_EQ(leftovers(dir, "p.splan", 0), 0);
    unlink(path);
    if (!rc && !hit) break; /* past the last allocation */
  }
  fprintf(stderr,
          "  %ld allocations per run; %ld values of N tried, %ld "
          "clean errors, the rest succeeded\n",
          attempts, tried, clean);
  ASSERT(clean > 0);
}

TEST(alloc_failures_whole_plan) {
  const char *s = getenv("STRATA_FAULT_STRIDE");
  fault_loop(400, s && atol(s) > 0 ? atol(s) : 7);
}

/* ---- determinism ---- */

static void expect_same(const outputs_t *a, const outputs_t *b,
                        const char *what) {
  if (a->plan_len != b->plan_len || memcmp(a->plan, b->plan, a->plan_len))
    test_fail(__FILE__, __LINE__, "%s: the plan files differ", what);
  ASSERT_STR_EQ(a->megatron, b->megatron);
  ASSERT_STR_EQ(a->deepspeed, b->deepspeed);
  ASSERT_STR_EQ(a->timeline, b->timeline);
  ASSERT_STR_EQ(a->summary, b->summary);
}

TEST(same_output_every_run) {
  outputs_t a = {0}, b = {0};
  ASSERT_OK(whole_plan(0, NULL, &a));
  ASSERT_OK(whole_plan(0, NULL, &b));
  expect_same(&a, &b, "two runs");
  outputs_free(&a);
  outputs_free(&b);
}

/* Plan with `threads` pool threads in a child process; write what it
 * produced into dir/t<threads>.*. */
static void plan_in_child(int threads, const char *dir) {
  pid_t pid = fork();
  int status = 0;
  ASSERT(pid >= 0);
  if (pid == 0) {
    outputs_t o = {0};
    char path[600];
    int rc = whole_plan(threads, NULL, &o);
    const struct {
      const char *ext;
      const void *p;
      size_t n;
    } f[] = {{"splan", o.plan, o.plan_len},
             {"megatron", o.megatron, o.megatron ? strlen(o.megatron) : 0},
             {"deepspeed", o.deepspeed, o.deepspeed ? strlen(o.deepspeed) : 0},
             {"timeline", o.timeline, o.timeline ? strlen(o.timeline) : 0}};
    for (size_t i = 0; !rc && i < sizeof f / sizeof f[0]; i++) {
      snprintf(path, sizeof path, "%s/t%d.%s", dir, threads, f[i].ext);
      rc = strata_file_write_atomic(path, f[i].p, f[i].n);
    }
    if (rc) fprintf(stderr, "threads %d: %s\n", threads, strata_last_error());
    outputs_free(&o);
    _exit(rc ? 1 : 0);
  }
  ASSERT(waitpid(pid, &status, 0) == pid);
  ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static char *slurp(const char *dir, int threads, const char *ext, size_t *n) {
  char path[600], *d = NULL;
  snprintf(path, sizeof path, "%s/t%d.%s", dir, threads, ext);
  ASSERT_OK(strata_file_read(path, 0, &d, n));
  return d;
}

TEST(same_output_any_thread_count) {
  const char *dir = subdir("threads");
  const int threads[] = {1, 2, 8};
  const char *ext[] = {"splan", "megatron", "deepspeed", "timeline"};
  for (int i = 0; i < 3; i++)
    plan_in_child(threads[i], dir);
  for (int i = 1; i < 3; i++)
    for (int e = 0; e < 4; e++) {
      size_t n0, n1;
      char *a = slurp(dir, 1, ext[e], &n0),
           *b = slurp(dir, threads[i], ext[e], &n1);
      if (n0 != n1 || memcmp(a, b, n0))
        test_fail(__FILE__, __LINE__, "%s differs between 1 and %d threads",
                  ext[e], threads[i]);
      strata_free(a);
      strata_free(b);
    }
  ASSERT_EQ(leftovers(dir, NULL, 0), 0);
}

/* ---- atomic output ---- */

TEST(failed_write_leaves_nothing) {
  const char *dir = subdir("atomic");
  char path[600];
  struct stat st;
  /* a folder that does not exist */
  snprintf(path, sizeof path, "%s/missing/x.json", dir);
  ASSERT(strata_file_write_atomic(path, "x", 1) < 0);
  ASSERT_CONTAINS(strata_last_error(), "missing/x.json");
  ASSERT(stat(path, &st) != 0);
  /* a file where a folder should be */
  snprintf(path, sizeof path, "%s/plain", dir);
  ASSERT_OK(strata_file_write_atomic(path, "old", 3));
  snprintf(path, sizeof path, "%s/plain/x.json", dir);
  ASSERT(strata_file_write_atomic(path, "x", 1) < 0);
  /* a target that is a folder: the rename fails, the folder stays */
  snprintf(path, sizeof path, "%s/isdir", dir);
  mkdir(path, 0755);
  ASSERT(strata_file_write_atomic(path, "x", 1) < 0);
  ASSERT(stat(path, &st) == 0 && S_ISDIR(st.st_mode));
  /* a successful write replaces the old content whole */
  snprintf(path, sizeof path, "%s/plain", dir);
  ASSERT_OK(strata_file_write_atomic(path, "new content", 11));
  char *d = NULL;
  size_t n = 0;
  ASSERT_OK(strata_file_read(path, 0, &d, &n));
  ASSERT_STR_EQ(d, "new content");
  strata_free(d);
  /* nothing but the two names, and no temporary */
  ASSERT_EQ(leftovers(dir, "plain", 0), 0);
  DIR *dd = opendir(dir);
  int names = 0;
  struct dirent *e;
  while ((e = readdir(dd)))
    names += e->d_name[0] != '.';
  closedir(dd);
  ASSERT_EQ(names, 2);
}

TEST(read_only_folder) {
  const char *dir = subdir("readonly");
  char path[600];
  struct stat st;
  snprintf(path, sizeof path, "%s/plan.splan", dir);
  ASSERT(chmod(dir, 0555) == 0);
  /* root may write anyway; the check is only meaningful for others */
  if (geteuid() != 0) {
    ASSERT(strata_file_write_atomic(path, "x", 1) < 0);
    ASSERT_CONTAINS(strata_last_error(), "plan.splan");
    ASSERT(stat(path, &st) != 0);
  }
  chmod(dir, 0755);
  ASSERT_EQ(leftovers(dir, NULL, 0), 0);
  /* sysfs refuses new files even to root */
  ASSERT(strata_file_write_atomic("/sys/strata-test.splan", "x", 1) < 0);
  ASSERT(stat("/sys/strata-test.splan", &st) != 0);
}

TEST(special_file_is_written_in_place) {
  /* Renaming over /dev/null would replace the device (as root). */
  struct stat st;
  ASSERT_OK(strata_file_write_atomic("/dev/null", "x", 1));
  ASSERT(stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode));
}

static const test_entry_t tests[] = {
    TEST_ENTRY(same_output_every_run),
    TEST_ENTRY(same_output_any_thread_count),
    TEST_ENTRY(failed_write_leaves_nothing),
    TEST_ENTRY(read_only_folder),
    TEST_ENTRY(special_file_is_written_in_place),
    TEST_ENTRY(alloc_failures_whole_plan),
};

TEST_MAIN(tests)
