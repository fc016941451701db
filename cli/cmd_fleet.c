/*
 * cmd_fleet.c - `strata fleet JOBS.json --cluster SPEC [-o DIR] [--json]`:
 * several training jobs share one cluster.  The nodes are split among
 * them to maximise the sum of weight x tokens/s (services/fleet.c, an
 * exact knapsack over each job's throughput on n nodes as the planner
 * gives it), each job is planned on its own nodes, and a summary is
 * printed; -o DIR writes one plan per job, DIR/NAME.splan, and its
 * Slurm batch script beside it, DIR/NAME.slurm (`strata export slurm`).
 *
 * The plans are written to temporary files first and renamed together
 * once all are written: a failure to write leaves none of them, and no old
 * plan of a job half replaced (a rename is atomic in its folder).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/opts.h"
#include "cli/planargs.h"
#include "core/json.h"
#include "core/stream.h"
#include "core/text.h"
#include "merge/merge_int.h"

typedef struct {
  const char *cluster, *output, *calibration, *cache;
  int json, quiet, threads, objective;
  double time_limit;
} fleet_args_t;

#define CLI_ARGS_T fleet_args_t

static const cli_opt_t opts[] = {
    {CLI_STR("cluster", 0, cluster, "SPEC",
             "PRESET:NODES or a cluster spec file (required)")},
    {CLI_STR("calibration", 0, calibration, "FILE",
             "scales fitted by strata calibrate")},
    {CLI_STR("output", 'o', output, "DIR",
             "write each job's plan to DIR/NAME.splan and\n"
             "its Slurm script to DIR/NAME.slurm")},
    {CLI_FLAG("json", json, 1, "JSON summary")},
    {CLI_FLAG("quiet", quiet, 1, "no progress on stderr")},
    {CLI_INT("threads", threads, 1, 1024, "N",
             "solver threads (libuv pool size)")},
    {CLI_STR("cache", 0, cache, "DIR", "keep solved stages in DIR")},
    {CLI_PARSE("objective", objective, strata_fleet_objective_parse, "O",
               "fair (default: sum of weight x log tokens/s,\n"
               "every job that can run) or throughput (sum\n"
               "of weight x tokens/s); beats JOBS.json's")},
    {CLI_DOUBLE("time-limit", time_limit, 0.001, 1e7, 0, "S",
                "the whole run stops after S seconds, with\n"
                "the best split of the curves planned by then")},
    {CLI_END}};

static const cli_optspec_t opt_spec = {
    "fleet",
    opts,
    "Usage: strata fleet JOBS.json --cluster SPEC [-o DIR] [--json]\n"
    "\n"
    "Share a cluster among training jobs: split its usable nodes (whole\n"
    "nodes, each job within one node group) to maximise the objective\n"
    "(by default the sum over jobs of weight x log tokens/s, every job\n"
    "that can run given nodes), each job's tokens/s on n nodes being\n"
    "its best plan's; then plan each job on its nodes.  JOBS.json:\n"
    "{\"objective\": O, \"jobs\": [{\"name\": N, \"model\": M,\n"
    "\"weight\": W, \"min_nodes\": A, \"max_nodes\": Z, \"tokens\": T,\n"
    "\"deadline\": D, and any option of strata plan: \"seq\": 32768,\n"
    "\"precision\": \"fp8\", ...}]} (all but name and model optional; a\n"
    "job with min_nodes or a deadline must run).  docs/cli.md says more.\n"
    "\n"
    "Options:\n",
    "\n"
    "Exit codes: 0 split, 1 usage, 2 bad input, 3 the jobs with min_nodes\n"
    "cannot all run (or no job fits), 4 internal error, 130 (SIGINT) or\n"
    "143 (SIGTERM) interrupted: nothing written.\n",
    0,
    20,
    NULL};

typedef struct {
  fleet_args_t a;
  const char *jobs_path;
  strata_fleet_jobs_t *jobs;
  strata_cluster_t *c;
  strata_graph_t **g;
  strata_plan_opts_t *po;
  strata_fleet_result_t *res;
  double total, seconds;
  char scratch[4096];  /* the run's own stage cache ("": none) */
  cli_plan_args_t *pa; /* each job's plan options */
  int objective;
} fleet_t;

static volatile int interrupted; /* the signal (SIGINT, SIGTERM), or 0 */
static void on_sigint(int sig) {
  interrupted = sig;
}

static int folder_writable(const char *dir) {
  struct stat sb;
  if (!*dir)
    return strata_error(STRATA_EBADINPUT, "-o: an empty path: name a folder");
  if (strlen(dir) > 4000)
    return strata_error(STRATA_EBADINPUT,
                        "-o: a folder path of %zu bytes; at most 4000",
                        strlen(dir));
  if (stat(dir, &sb) != 0)
    return strata_error(STRATA_EIO,
                        "-o %s: the folder does not exist: create it or name "
                        "another",
                        dir);
  if (!S_ISDIR(sb.st_mode))
    return strata_error(STRATA_EIO,
                        "-o %s: is not a folder (the plans are DIR/NAME.splan)",
                        dir);
  if (access(dir, W_OK | X_OK) != 0)
    return strata_error(STRATA_EIO, "-o %s: the folder cannot be written: %s",
                        dir, strerror(errno));
  return 0;
}

/* Keys of a job that are strata plan's options but the fleet's to set:
 * one value for every job, or what a job's plan in the fleet is not. */
static const struct {
  const char *name, *why;
} fleet_owns[] = {
    {"cluster", "the fleet's cluster is strata fleet's --cluster"},
    {"calibration", "give strata fleet --calibration"},
    {"threads", "give strata fleet --threads"},
    {"cache", "give strata fleet --cache"},
    {"time-limit", "strata fleet's --time-limit bounds the whole run"},
    {"output", "strata fleet -o DIR writes every job's plan"},
    {"json", "give strata fleet --json"},
    {"timings", "the fleet's summary has no timings"},
    {"quiet", "give strata fleet --quiet"},
    {"baseline", "a re-plan is strata plan's"},
    {"replan-threshold", "a re-plan is strata plan's"},
    {"fallbacks", "a fleet job's plan has no fallbacks"},
    {"pareto-filter", "a fleet job's plan keeps its front whole"},
    {"help", "not an option of a job"},
};

/* Job j's key k: one strata plan takes, and the fleet leaves to it. */
static int job_key_ok(const fleet_t *F, int j, int k) {
  const strata_fleet_job_t *job = &F->jobs->jobs[j];
  const char *word = job->opt_word[k] + 2, *near = NULL;
  char name[64];
  snprintf(name, sizeof name, "%.*s", (int)strcspn(word, "="), word);
  const char *bare = strncmp(name, "no-", 3) ? name : name + 3;
  for (size_t i = 0; i < sizeof fleet_owns / sizeof fleet_owns[0]; i++)
    if (!strcmp(bare, fleet_owns[i].name))
      return strata_error(
          STRATA_EBADINPUT, "%s: jobs[%d].%s: --%s is not a job's option: %s",
          F->jobs_path, j, job->opt_key[k], bare, fleet_owns[i].why);
  static const char *const own[] = {"name",      "model",     "weight",
                                    "min_nodes", "max_nodes", "tokens",
                                    "deadline",  NULL};
  if (cli_plan_option_known(name, &near)) return 0;
  const char *mine = st__did_you_mean(job->opt_key[k], own);
  if (mine) near = mine;
  return strata_error(STRATA_EBADINPUT,
                      "%s: jobs[%d]: unknown key '%s': neither a job's own "
                      "(name, model, weight, min_nodes, max_nodes, tokens, "
                      "deadline) nor an option of strata plan%s%s%s",
                      F->jobs_path, j, job->opt_key[k],
                      near ? "; did you mean '" : "", near ? near : "",
                      near ? "'?" : "");
}

/* Job j's plan options through strata plan's own table: each key alone
 * (its message then names it), then all together (plan's checks of
 * options that go together).  Plan's message is printed as plan prints
 * it, and a line says which key of which job it was. */
static int job_options(fleet_t *F, int j, cli_plan_args_t *a) {
  const strata_fleet_job_t *job = &F->jobs->jobs[j];
  int n = job->n_opts, rc = 0;
  char model[4200];
  char **argv = strata_calloc((size_t)n + 4, sizeof *argv);
  if (!argv) return cli_fail("fleet", strata_error(STRATA_ENOMEM, "oom"));
  snprintf(model, sizeof model, "--model=%s", job->model);
  argv[0] = "plan", argv[1] = model, argv[2] = "--cluster=-";
  for (int k = 0; k < n && !rc; k++) {
    if ((rc = job_key_ok(F, j, k))) {
      rc = cli_fail("fleet", rc);
      break;
    }
    argv[3] = job->opt_word[k];
    if ((rc = cli_plan_parse("plan", 4, argv, 0, a)))
      fprintf(st__stderr(),
              "strata fleet: %s: jobs[%d].%s: strata plan refuses it "
              "(above)\n",
              F->jobs_path, j, job->opt_key[k]);
  }
  for (int k = 0; k < n && !rc; k++)
    argv[3 + k] = job->opt_word[k];
  if (!rc && (rc = cli_plan_parse("plan", 3 + n, argv, 0, a)))
    fprintf(st__stderr(),
            "strata fleet: %s: jobs[%d] ('%s'): strata plan refuses its "
            "options together (above)\n",
            F->jobs_path, j, job->name);
  strata_free(argv);
  return rc == CLI_USAGE ? CLI_BADINPUT : rc;
}

/* Each job's model and options: strata plan's, read by its table from
 * the job's keys, with plan's defaults (its global batch too). */
static int load_models(fleet_t *F) {
  int n = F->jobs->n, e;
  F->g = strata_calloc((size_t)n, sizeof *F->g);
  F->po = strata_calloc((size_t)n, sizeof *F->po);
  F->res = strata_calloc((size_t)n, sizeof *F->res);
  F->pa = strata_calloc((size_t)n, sizeof *F->pa);
  if (!F->g || !F->po || !F->res || !F->pa)
    return cli_fail("fleet", strata_error(STRATA_ENOMEM, "out of memory"));
  for (int j = 0; j < n; j++) {
    const strata_fleet_job_t *job = &F->jobs->jobs[j];
    strata_plan_opts_t *po = &F->po[j];
    if ((e = job_options(F, j, &F->pa[j]))) return e;
    *po = F->pa[j].po;
    if ((e = strata_model_load(job->model, &po->gen, &F->g[j]))) {
      strata_error_prefix("%s: jobs[%d].model", F->jobs_path, j);
      return cli_fail("fleet", e);
    }
    /* a global batch not given is 0: the library's default */
    strata_plan_opts_resolve(po, F->g[j]); /* fleet.c reads it */
    po->model_spec = job->model;
    po->quiet = 1;
    po->threads = F->a.threads;
    po->cache_dir = F->a.cache;
    po->cancel = &interrupted;
  }
  return 0;
}

/* JOBS.json, the cluster, the models: 0 or the exit code. */
static int load(fleet_t *F) {
  strata_calibration_t cal;
  int e;
  if ((e = strata_fleet_jobs_load(F->jobs_path, &F->jobs)))
    return cli_fail("fleet", e);
  F->objective = F->a.objective       ? F->a.objective
                 : F->jobs->objective ? F->jobs->objective
                                      : STRATA_FLEET_FAIR;
  if ((e = strata_cluster_load(F->a.cluster, &F->c))) {
    strata_error_prefix("--cluster");
    return cli_fail("fleet", e);
  }
  if (F->a.calibration &&
      ((e = strata_calibration_load(F->a.calibration, &cal)) ||
       (e = strata_cluster_calibrate(F->c, &cal))))
    return cli_fail("fleet", e);
  return load_models(F);
}

static int stitch(fleet_t *F) {
  for (int j = 0; j < F->jobs->n; j++) {
    strata_fleet_result_t *r = &F->res[j];
    int e = r->plan ? strata_merge_stitch(r->plan, F->g[j], r->cluster) : 0;
    if (e) {
      strata_error_prefix("job '%s'", F->jobs->jobs[j].name);
      return e;
    }
  }
  return 0;
}

static void plan_path(const fleet_t *F, int j, int tmp, char *buf,
                      size_t size) {
  snprintf(buf, size, "%s/%s%s%s", F->a.output, tmp ? "." : "",
           F->jobs->jobs[j].name, tmp ? ".splan.tmp" : ".splan");
}

/* DIR/NAME.slurm beside the plan (tmp: its temporary name). */
static void slurm_path(const fleet_t *F, int j, int tmp, char *buf,
                       size_t size) {
  snprintf(buf, size, "%s/%s%s%s", F->a.output, tmp ? "." : "",
           F->jobs->jobs[j].name, tmp ? ".slurm.tmp" : ".slurm");
}

/* Job j's Slurm batch script (`strata export slurm` of its plan on its
 * nodes, which it names) to its temporary file. */
static int save_slurm(const fleet_t *F, int j) {
  const strata_fleet_result_t *r = &F->res[j];
  strata_device_map_t *m = NULL;
  strata_export_opts_t o;
  char src[300], path[4200], *text = NULL;
  strata_export_opts_init(&o);
  snprintf(src, sizeof src, "%s.splan", F->jobs->jobs[j].name);
  o.source = src;
  o.gpus_per_node = strata_cluster_gpus_per_node(r->cluster);
  int rc = strata_device_map(r->plan, r->cluster, &m);
  if (!rc) rc = st__export_slurm_map(r->plan, &o, m, &text);
  slurm_path(F, j, 1, path, sizeof path);
  if (!rc) rc = strata_file_write_atomic_nosync(path, text, strlen(text));
  if (rc)
    strata_error_prefix("job '%s': its Slurm script", F->jobs->jobs[j].name);
  strata_device_map_destroy(m);
  strata_free(text);
  return rc;
}

static int rename_job(const fleet_t *F, int k) {
  char tmp[4200], dst[4200];
  for (int slurm = 0; slurm < 2; slurm++) {
    (slurm ? slurm_path : plan_path)(F, k, 1, tmp, sizeof tmp);
    (slurm ? slurm_path : plan_path)(F, k, 0, dst, sizeof dst);
    if (rename(tmp, dst) != 0)
      return strata_error(STRATA_EIO, "%s: cannot rename %s: %s", dst, tmp,
                          strerror(errno));
  }
  return 0;
}

/* Every plan and its Slurm script to a temporary file, then all renamed;
 * none on a failure. */
static int save_plans(const fleet_t *F) {
  char tmp[4200];
  int rc = 0, j;
  if (!F->a.output) return 0;
  for (j = 0; j < F->jobs->n && !rc; j++) {
    if (!F->res[j].plan) continue;
    plan_path(F, j, 1, tmp, sizeof tmp);
    rc = strata_plan_save(F->res[j].plan, tmp);
    if (!rc) rc = save_slurm(F, j);
  }
  for (int k = 0; k < F->jobs->n && !rc; k++)
    if (F->res[k].plan) rc = rename_job(F, k);
  for (int k = 0; rc && k < j; k++) {
    plan_path(F, k, 1, tmp, sizeof tmp);
    unlink(tmp);
    slurm_path(F, k, 1, tmp, sizeof tmp);
    unlink(tmp);
  }
  return rc;
}

/* "node032 .. node063", the hosts of job j's run of nodes. */
static void hosts_of(const fleet_t *F, int j, char *buf, size_t size) {
  const strata_fleet_result_t *r = &F->res[j];
  const strata_cluster_t *s = r->cluster;
  if (!r->plan) {
    snprintf(buf, size, "-");
    return;
  }
  const char *a = strata_cluster_node_name(s, 0);
  const char *b = strata_cluster_node_name(s, r->nodes - 1);
  if (r->nodes == 1)
    snprintf(buf, size, "%s", a);
  else
    snprintf(buf, size, "%s .. %s", a, b);
}

/* The GPU model of job j's node group. */
static const char *gpu_of(const fleet_t *F, int j) {
  const strata_gpu_model_t *m =
      strata_cluster_gpu_model(strata_cluster_group(F->c, F->res[j].group));
  return m && m->name ? m->name : "?";
}

/* The weighted tokens/s of the split, on the curves. */
static double weighted_sum(const fleet_t *F) {
  double sum = 0;
  for (int j = 0; j < F->jobs->n; j++)
    if (F->res[j].plan) sum += F->jobs->jobs[j].weight * F->res[j].value;
  return sum;
}

static int add_degrees(cJSON *o, const strata_plan_t *p) {
  return st__json_add_num(o, "tp", p->tp) |
         st__json_add_num(o, "cp", p->cp > 1 ? p->cp : 1) |
         st__json_add_num(o, "pp", p->pp) |
         st__json_add_num(o, "vpp", p->vpp > 1 ? p->vpp : 1) |
         st__json_add_num(o, "ep", p->ep > 1 ? p->ep : 1) |
         st__json_add_num(o, "dp", p->dp);
}

static int add_job(const fleet_t *F, int j, cJSON *arr) {
  const strata_fleet_result_t *r = &F->res[j];
  const strata_fleet_job_t *job = &F->jobs->jobs[j];
  char path[4200], hosts[300];
  cJSON *o = st__json_push_object(arr);
  if (!o) return -1;
  plan_path(F, j, 0, path, sizeof path);
  hosts_of(F, j, hosts, sizeof hosts);
  int bad = st__json_add_str(o, "name", job->name) |
            st__json_add_num(o, "nodes", r->nodes) |
            st__json_add_num(o, "weight", job->weight);
  if (r->plan)
    bad |= st__json_add_num(o, "group", r->group) |
           st__json_add_str(o, "gpu_model", gpu_of(F, j)) |
           st__json_add_str(o, "hosts", hosts) | add_degrees(o, r->plan) |
           st__json_add_num(o, "step_seconds", r->step_seconds) |
           st__json_add_num(o, "tokens_per_second", r->tokens_per_second) |
           st__json_add_num(o, "curve_tokens_per_second", r->value) |
           (cJSON_AddNullToObject(o, "why_not_run") == NULL);
  else
    bad |= (cJSON_AddNullToObject(o, "step_seconds") == NULL) |
           st__json_add_num(o, "tokens_per_second", 0) |
           st__json_add_str(o, "why_not_run", r->why);
  if (job->tokens > 0)
    bad |= st__json_add_num(o, "tokens", job->tokens) |
           st__json_add_str(o, "deadline", job->deadline) |
           st__json_add_num(o, "needed_tokens_per_second", r->need);
  bad |= st__json_add_num(o, "plans", r->planned) |
         st__json_add_bool(o, "cut_by_time_limit", r->cut);
  if (r->plan && F->a.output)
    bad |= st__json_add_str(o, "plan", path);
  else
    bad |= cJSON_AddNullToObject(o, "plan") == NULL;
  return bad ? -1 : 0;
}

static int report_json(const fleet_t *F, char **text) {
  cJSON *root = cJSON_CreateObject(), *arr = NULL;
  int bad =
      !root ||
      st__json_add_num(root, "schema_version", STRATA_JSON_SCHEMA_VERSION) ||
      st__json_add_str(root, "cluster", F->a.cluster) ||
      st__json_add_num(root, "nodes", strata_cluster_nodes(F->c)) ||
      st__json_add_str(root, "objective",
                       strata_fleet_objective_name(F->objective)) ||
      st__json_add_num(root, "objective_value", F->total) ||
      st__json_add_num(root, "weighted_tokens_per_second", weighted_sum(F)) ||
      !(arr = cJSON_AddArrayToObject(root, "jobs"));
  for (int j = 0; !bad && j < F->jobs->n; j++)
    bad = add_job(F, j, arr);
  if (!bad) *text = st__json_print(root);
  cJSON_Delete(root);
  return *text ? 0 : strata_error(STRATA_ENOMEM, "out of memory");
}

#define ROW "%-20s %5s %-13s %-24s %3s %3s %4s %3s %3s %5s %9s %12s %6s\n"

static void text_row(const fleet_t *F, int j, strata_buf_t *b) {
  const strata_fleet_result_t *r = &F->res[j];
  const strata_plan_t *p = r->plan;
  char name[96], hosts[300], w[32], n[16], grp[48], d[6][16], st[32], tk[32];
  st__plain(F->jobs->jobs[j].name, name, sizeof name);
  hosts_of(F, j, hosts, sizeof hosts);
  st__fmt_num(F->jobs->jobs[j].weight, 3, w, sizeof w);
  snprintf(n, sizeof n, "%d", r->nodes);
  if (!p) {
    strata_buf_printf(b, ROW, name, n, "-", "(not run)", "-", "-", "-", "-",
                      "-", "-", "-", "0", w);
    return;
  }
  int deg[6] = {p->tp,
                p->cp > 1 ? p->cp : 1,
                p->pp,
                p->vpp > 1 ? p->vpp : 1,
                p->ep > 1 ? p->ep : 1,
                p->dp};
  for (int k = 0; k < 6; k++)
    snprintf(d[k], sizeof d[k], "%d", deg[k]);
  snprintf(grp, sizeof grp, "%d %s", r->group, gpu_of(F, j));
  strata_buf_printf(b, ROW, name, n, grp, hosts, d[0], d[1], d[2], d[3], d[4],
                    d[5], st__fmt_num(r->step_seconds, 3, st, sizeof st),
                    st__fmt_num(r->tokens_per_second, 0, tk, sizeof tk), w);
}

static int report_text(const fleet_t *F, char **text) {
  strata_buf_t b;
  char cl[200], tot[64], name[96];
  strata_buf_init(&b);
  strata_buf_printf(&b,
                    "%d jobs on %s (%d usable nodes), objective %s: %s "
                    "weighted tokens/s",
                    F->jobs->n, st__plain(F->a.cluster, cl, sizeof cl),
                    strata_cluster_nodes(F->c),
                    strata_fleet_objective_name(F->objective),
                    st__fmt_num(weighted_sum(F), 0, tot, sizeof tot));
  if (F->objective == STRATA_FLEET_FAIR)
    strata_buf_printf(&b, ", sum of weight x ln(tokens/s) %s",
                      st__fmt_num(F->total, 3, tot, sizeof tot));
  strata_buf_printf(&b, "\n\n" ROW, "job", "nodes", "group", "hosts", "tp",
                    "cp", "pp", "vpp", "ep", "dp", "step (s)", "tokens/s",
                    "weight");
  for (int j = 0; j < F->jobs->n; j++)
    text_row(F, j, &b);
  for (int j = 0, first = 1; j < F->jobs->n; j++) {
    const strata_fleet_job_t *job = &F->jobs->jobs[j];
    char a[32], c[32];
    st__plain(job->name, name, sizeof name);
    if ((!F->res[j].plan || job->tokens > 0) && first)
      strata_buf_puts(&b, "\n"), first = 0;
    if (!F->res[j].plan)
      strata_buf_printf(&b, "%s is not run: %s\n", name, F->res[j].why);
    else if (job->tokens > 0)
      strata_buf_printf(
          &b,
          "%s meets its deadline (%s): it needs %s "
          "tokens/s, its nodes make %s\n",
          name, job->deadline, st__fmt_num(F->res[j].need, 0, a, sizeof a),
          st__fmt_num(F->res[j].tokens_per_second, 0, c, sizeof c));
  }
  *text = strata_buf_steal(&b, NULL);
  return *text ? 0 : strata_error(STRATA_ENOMEM, "out of memory");
}

/* Without --cache the plans of the curves still share their solved
 * stages (most of a job's stages repeat from one node count to the
 * next), in a folder of the run's own, $TMPDIR/strata-fleet-PID-XXXXXX,
 * removed at its end (SIGINT and SIGTERM included); what a run killed
 * outright leaves is removed by the next (stale_remove). */
#define SCRATCH_PREFIX "strata-fleet-"
#define SCRATCH_STALE_S 60 /* unwritten this long, of a dead process */

static const char *scratch_parent(void) {
  const char *tmp = getenv("TMPDIR");
  return tmp && *tmp ? tmp : "/tmp";
}

/* The files of folder NAME in at, then the folder (a sub-folder, which a
 * stage cache never has, keeps it); no link is followed. */
static void folder_remove_at(int at, const char *name) {
  int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
  struct dirent *e;
  if (!d) {
    if (fd >= 0) close(fd);
    return;
  }
  while ((e = readdir(d)))
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
      unlinkat(fd, e->d_name, 0);
  closedir(d);
  unlinkat(at, name, AT_REMOVEDIR);
}

/* Is NAME in at the scratch folder of a run that is gone: named
 * strata-fleet-PID-XXXXXX, a folder of this user's, not written for
 * SCRATCH_STALE_S, and PID no process (kill(PID, 0) fails with ESRCH:
 * one that lives, or is another user's, keeps it). */
static int scratch_stale(int at, const char *name, time_t now) {
  const char *p = name + strlen(SCRATCH_PREFIX);
  char *end;
  struct stat st;
  if (strncmp(name, SCRATCH_PREFIX, strlen(SCRATCH_PREFIX)) || *p < '1' ||
      *p > '9')
    return 0;
  long pid = strtol(p, &end, 10);
  if (*end != '-' || strlen(end + 1) != 6 || pid <= 0 || pid == getpid())
    return 0;
  if (fstatat(at, name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISDIR(st.st_mode) ||
      st.st_uid != geteuid() || now - st.st_mtime < SCRATCH_STALE_S)
    return 0;
  return kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

static void stale_remove(void) {
  DIR *d = opendir(scratch_parent());
  struct dirent *e;
  time_t now = time(NULL);
  while (d && (e = readdir(d)))
    if (scratch_stale(dirfd(d), e->d_name, now))
      folder_remove_at(dirfd(d), e->d_name);
  if (d) closedir(d);
}

static int scratch_cache(fleet_t *F) {
  if (F->a.cache) return 0;
  stale_remove();
  snprintf(F->scratch, sizeof F->scratch, "%s/" SCRATCH_PREFIX "%ld-XXXXXX",
           scratch_parent(), (long)getpid());
  if (!mkdtemp(F->scratch)) {
    F->scratch[0] = '\0'; /* no shared cache: slower, not wrong */
    return 0;
  }
  F->a.cache = F->scratch;
  return 0;
}

static void scratch_remove(fleet_t *F) {
  if (F->scratch[0]) folder_remove_at(AT_FDCWD, F->scratch);
}

/* A job whose own nodes cost more than its curve's point (they span
 * more leaf switches than the group's first nodes): said, with both. */
static void warn_placement(const fleet_t *F) {
  for (int j = 0; j < F->jobs->n; j++) {
    const strata_fleet_result_t *r = &F->res[j];
    double curve = r->value;
    if (!r->plan || fabs(r->tokens_per_second - curve) <= 1e-3 * curve)
      continue;
    fprintf(st__stderr(),
            "strata fleet: warning: job '%s' runs %.0f tokens/s on its own "
            "nodes and %.0f on the group's first %d (%s); the split took "
            "the latter\n",
            F->jobs->jobs[j].name, r->tokens_per_second, curve, r->nodes,
            r->cut ? "its curve's plans were cut short by the time limit"
                   : "its nodes sit under other leaf switches");
  }
}

static int run(fleet_t *F) {
  int e;
  char *text = NULL;
  double t0 = strata_now();
  strata_fleet_opts_t fo;
  scratch_cache(F);
  if ((e = load(F))) return e;
  strata_fleet_opts_init(&fo);
  fo.objective = F->objective;
  fo.time_limit = F->a.time_limit;
  fo.start = t0;
  e = strata_fleet_plan(F->c, F->jobs->n, (const strata_graph_t *const *)F->g,
                        F->po, F->jobs->jobs, &fo, F->res, &F->total);
  if (!e && interrupted)
    e = strata_error(STRATA_ECANCELED, "interrupted: nothing was written");
  if (!e) e = stitch(F);
  if (!e) e = save_plans(F);
  if (!e) e = F->a.json ? report_json(F, &text) : report_text(F, &text);
  if (e) return cli_fail("fleet", e);
  warn_placement(F);
  F->seconds = strata_now() - t0;
  int rc = cli_write_output("fleet", NULL, text, strlen(text));
  strata_free(text);
  int plans = 0, runs = 0;
  for (int j = 0; j < F->jobs->n; j++)
    plans += F->res[j].planned, runs += F->res[j].plan != NULL;
  if (!F->a.quiet)
    fprintf(st__stderr(),
            "strata fleet: %d jobs, %d plans for their curves and %d on their "
            "nodes; %.2f s\n",
            F->jobs->n, plans, runs, F->seconds);
  return rc;
}

int cli_cmd_fleet(int argc, char **argv) {
  fleet_t F;
  int first, rc, e;
  memset(&F, 0, sizeof F);
  interrupted = 0;
  rc = cli_opts_parse(&opt_spec, argc, argv, &F.a, &first);
  if (rc) return rc < 0 ? CLI_OK : rc;
  if (first != argc - 1) return cli_usage_error("fleet", "give one JOBS.json");
  if (!F.a.cluster) return cli_usage_error("fleet", "--cluster is required");
  F.jobs_path = argv[first];
  if (F.a.output && (e = folder_writable(F.a.output)))
    return cli_fail("fleet", e);
  struct sigaction sa, old, oldterm;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, &old);
  sigaction(SIGTERM, &sa, &oldterm);
  rc = run(&F);
  scratch_remove(&F);
  sigaction(SIGINT, &old, NULL);
  sigaction(SIGTERM, &oldterm, NULL);
  if (interrupted && rc) rc = 128 + interrupted; /* 130, 143 */
  if (F.res) strata_fleet_results_free(F.res, F.jobs ? F.jobs->n : 0);
  for (int j = 0; F.g && F.jobs && j < F.jobs->n; j++)
    strata_graph_destroy(F.g[j]);
  strata_free(F.g);
  strata_free(F.po);
  strata_free(F.pa);
  strata_free(F.res);
  strata_cluster_destroy(F.c);
  strata_fleet_jobs_destroy(F.jobs);
  return rc;
}
