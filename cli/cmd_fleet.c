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
  int json, quiet, threads;
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
    {CLI_DOUBLE("time-limit", time_limit, 0.001, 1e7, 0, "S",
                "each plan's search stops after S seconds")},
    {CLI_END}};

static const cli_optspec_t opt_spec = {
    "fleet",
    opts,
    "Usage: strata fleet JOBS.json --cluster SPEC [-o DIR] [--json]\n"
    "\n"
    "Share a cluster among training jobs: split its usable nodes (whole\n"
    "nodes, each job within one node group) to maximise the sum over\n"
    "jobs of weight x tokens/s, each job's tokens/s on n nodes being\n"
    "its best plan's; then plan each job on its nodes.  JOBS.json:\n"
    "{\"jobs\": [{\"name\": N, \"model\": M, \"global_batch\": B,\n"
    "\"weight\": W, \"min_nodes\": A, \"max_nodes\": Z}]} (all but name\n"
    "and model optional; a job with min_nodes must run, one without\n"
    "may be left out).  docs/cli.md says more.\n"
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
  char scratch[4096]; /* the run's own stage cache ("": none) */
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

/* Each job's model and options: the library's defaults, its global batch. */
static int load_models(fleet_t *F) {
  int n = F->jobs->n, e;
  F->g = strata_calloc((size_t)n, sizeof *F->g);
  F->po = strata_calloc((size_t)n, sizeof *F->po);
  F->res = strata_calloc((size_t)n, sizeof *F->res);
  if (!F->g || !F->po || !F->res)
    return strata_error(STRATA_ENOMEM, "out of memory");
  for (int j = 0; j < n; j++) {
    const strata_fleet_job_t *job = &F->jobs->jobs[j];
    strata_plan_opts_t *po = &F->po[j];
    strata_plan_opts_init(po);
    if ((e = strata_model_load(job->model, &po->gen, &F->g[j]))) {
      strata_error_prefix("%s: jobs[%d].model", F->jobs_path, j);
      return e;
    }
    po->global_batch = job->global_batch;  /* 0: the library's default */
    strata_plan_opts_resolve(po, F->g[j]); /* fleet.c reads it */
    po->model_spec = job->model;
    po->quiet = 1;
    po->threads = F->a.threads;
    po->cache_dir = F->a.cache;
    po->time_limit = F->a.time_limit;
    po->cancel = &interrupted;
  }
  return 0;
}

static int load(fleet_t *F) {
  strata_calibration_t cal;
  int e;
  if ((e = strata_fleet_jobs_load(F->jobs_path, &F->jobs))) return e;
  if ((e = strata_cluster_load(F->a.cluster, &F->c))) {
    strata_error_prefix("--cluster");
    return e;
  }
  if (F->a.calibration &&
      ((e = strata_calibration_load(F->a.calibration, &cal)) ||
       (e = strata_cluster_calibrate(F->c, &cal))))
    return e;
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

static int add_job(const fleet_t *F, int j, cJSON *arr) {
  const strata_fleet_result_t *r = &F->res[j];
  char path[4200], hosts[300];
  cJSON *o = st__json_push_object(arr);
  if (!o) return -1;
  plan_path(F, j, 0, path, sizeof path);
  hosts_of(F, j, hosts, sizeof hosts);
  int bad = st__json_add_str(o, "name", F->jobs->jobs[j].name) |
            st__json_add_num(o, "nodes", r->nodes) |
            st__json_add_num(o, "weight", F->jobs->jobs[j].weight);
  if (r->plan)
    bad |= st__json_add_num(o, "group", r->group) |
           st__json_add_str(o, "gpu_model", gpu_of(F, j)) |
           st__json_add_str(o, "hosts", hosts) |
           st__json_add_num(o, "tp", r->plan->tp) |
           st__json_add_num(o, "pp", r->plan->pp) |
           st__json_add_num(o, "dp", r->plan->dp) |
           st__json_add_num(o, "step_seconds", r->step_seconds) |
           st__json_add_num(o, "tokens_per_second", r->tokens_per_second);
  else
    bad |= (cJSON_AddNullToObject(o, "step_seconds") == NULL) |
           st__json_add_num(o, "tokens_per_second", 0);
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
      st__json_add_num(root, "weighted_tokens_per_second", F->total) ||
      !(arr = cJSON_AddArrayToObject(root, "jobs"));
  for (int j = 0; !bad && j < F->jobs->n; j++)
    bad = add_job(F, j, arr);
  if (!bad) *text = st__json_print(root);
  cJSON_Delete(root);
  return *text ? 0 : strata_error(STRATA_ENOMEM, "out of memory");
}

static int report_text(const fleet_t *F, char **text) {
  strata_buf_t b;
  char name[96], hosts[300], cl[200], tot[64], w[64];
  strata_buf_init(&b);
  strata_buf_printf(&b,
                    "%d jobs on %s (%d usable nodes): %s weighted "
                    "tokens/s\n\n",
                    F->jobs->n, st__plain(F->a.cluster, cl, sizeof cl),
                    strata_cluster_nodes(F->c),
                    st__fmt_num(F->total, 0, tot, sizeof tot));
  strata_buf_printf(&b, "%-20s %6s %-13s %-28s %4s %4s %5s %10s %12s %7s\n",
                    "job", "nodes", "group", "hosts", "tp", "pp", "dp",
                    "step (s)", "tokens/s", "weight");
  for (int j = 0; j < F->jobs->n; j++) {
    const strata_fleet_result_t *r = &F->res[j];
    st__plain(F->jobs->jobs[j].name, name, sizeof name);
    hosts_of(F, j, hosts, sizeof hosts);
    st__fmt_num(F->jobs->jobs[j].weight, 3, w, sizeof w);
    if (!r->plan) {
      strata_buf_printf(&b, "%-20s %6d %-13s %-28s %4s %4s %5s %10s %12s %7s\n",
                        name, 0, "-", "(not run)", "-", "-", "-", "-", "0", w);
      continue;
    }
    char grp[48];
    snprintf(grp, sizeof grp, "%d %s", r->group, gpu_of(F, j));
    strata_buf_printf(&b,
                      "%-20s %6d %-13s %-28s %4d %4d %5d %10.4f %12.0f %7s\n",
                      name, r->nodes, grp, hosts, r->plan->tp, r->plan->pp,
                      r->plan->dp, r->step_seconds, r->tokens_per_second, w);
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
    double curve = r->value / F->jobs->jobs[j].weight;
    if (!r->plan || fabs(r->tokens_per_second - curve) <= 1e-3 * curve)
      continue;
    fprintf(st__stderr(),
            "strata fleet: warning: job '%s' runs %.0f tokens/s on its own "
            "nodes and %.0f on the group's first %d (its nodes sit under "
            "other leaf switches); the split took the latter\n",
            F->jobs->jobs[j].name, r->tokens_per_second, curve, r->nodes);
  }
}

static int run(fleet_t *F) {
  int e;
  char *text = NULL;
  double t0 = strata_now();
  if ((e = scratch_cache(F)) || (e = load(F))) return cli_fail("fleet", e);
  e = strata_fleet_plan(F->c, F->jobs->n, (const strata_graph_t *const *)F->g,
                        F->po, F->jobs->jobs, F->res, &F->total);
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
  int plans = 0;
  for (int j = 0; j < F->jobs->n; j++)
    plans += F->res[j].planned;
  if (!F->a.quiet)
    fprintf(st__stderr(),
            "strata fleet: %d jobs, %d plans for their curves and %d on their "
            "nodes; %.2f s\n",
            F->jobs->n, plans, F->jobs->n, F->seconds);
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
  strata_free(F.res);
  strata_cluster_destroy(F.c);
  strata_fleet_jobs_destroy(F.jobs);
  return rc;
}
