/*
 * fleet_jobs.c - the jobs `strata fleet` shares a cluster among, read
 * from JOBS.json: {"jobs": [{"name", "model", "global_batch", "weight",
 * "min_nodes", "max_nodes"}, ...]} (docs/cli.md, "strata fleet").
 *
 * Every value is checked where it is read and a message names its JSON
 * path (jobs[2].min_nodes): an unknown key (with the one it was meant
 * to be, when one is near),
 * a wrong type, a value out of range, min_nodes above max_nodes.  A job's
 * name becomes the file name of its plan (DIR/NAME.splan), so it is held
 * to a file name's characters and two names that differ only in case are
 * refused (they are one file on a case-insensitive file system).
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "core/json.h"
#include "core/text.h"
#include "pipeline/search.h"

#define MAX_JOBS 64
#define MAX_NODES_ASKED 1000000

static const char *const root_keys[] = {"jobs", NULL};
static const char *const job_keys[] = {
    "name", "model", "global_batch", "weight", "min_nodes", "max_nodes", NULL};

static int check_keys(const cJSON *o, const char *const *keys,
                      const char *where) {
  int repeated = 0;
  const char *bad = st__json_bad_key(o, keys, &repeated);
  char shown[96];
  if (!bad) return 0;
  st__plain(bad, shown, sizeof shown);
  if (repeated)
    return strata_error(STRATA_EBADINPUT, "%s: key '%s' is given twice", where,
                        shown);
  const char *near = st__did_you_mean(bad, keys);
  return strata_error(STRATA_EBADINPUT, "%s: unknown key '%s'%s%s%s", where,
                      shown, near ? "; did you mean '" : "", near ? near : "",
                      near ? "'?" : "");
}

/* An optional integer in [lo, hi] (absent: *out unchanged). */
static int opt_int(const cJSON *o, const char *key, const char *where,
                   int64_t lo, int64_t hi, int *out) {
  int64_t v;
  int rc = st__json_int(o, key, where, 0, &v);
  if (rc == STRATA_ENOTFOUND) return 0;
  if (rc) return rc;
  if (v < lo || v > hi)
    return strata_error(STRATA_EBADINPUT,
                        "%s: field '%s' is %lld; it must be from %lld to %lld",
                        where, key, (long long)v, (long long)lo, (long long)hi);
  *out = (int)v;
  return 0;
}

static int read_strings(const cJSON *o, const char *where,
                        strata_fleet_job_t *j) {
  const char *name, *model;
  int rc = st__json_str(o, "name", where, 1, &name);
  if (!rc) rc = st__file_name_check(name, "the job's name", where);
  if (!rc) rc = st__json_str(o, "model", where, 1, &model);
  if (!rc) rc = st__name_check(model, "the model", where);
  if (rc) return rc;
  j->name = strata_strdup(name);
  j->model = strata_strdup(model);
  return j->name && j->model ? 0 : strata_error(STRATA_ENOMEM, "out of memory");
}

static int read_weight(const cJSON *o, const char *where, double *w) {
  int rc = st__json_num(o, "weight", where, 0, w);
  if (rc == STRATA_ENOTFOUND) return 0;
  if (rc) return rc;
  if (!(*w > 0) || *w > 1e6)
    return strata_error(STRATA_EBADINPUT,
                        "%s: field 'weight' is %g; it must be above 0 and at "
                        "most 1e6 (a job's share of the objective)",
                        where, *w);
  return 0;
}

static int read_job(const cJSON *o, const char *where, strata_fleet_job_t *j) {
  int rc;
  if (!cJSON_IsObject(o))
    return strata_error(STRATA_EBADINPUT, "%s: a job must be an object", where);
  j->weight = 1;
  if ((rc = check_keys(o, job_keys, where)) ||
      (rc = read_strings(o, where, j)) ||
      (rc = opt_int(o, "global_batch", where, 1, 1 << 30, &j->global_batch)) ||
      (rc = read_weight(o, where, &j->weight)) ||
      (rc =
           opt_int(o, "min_nodes", where, 1, MAX_NODES_ASKED, &j->min_nodes)) ||
      (rc = opt_int(o, "max_nodes", where, 1, MAX_NODES_ASKED, &j->max_nodes)))
    return rc;
  if (j->min_nodes && j->max_nodes && j->min_nodes > j->max_nodes)
    return strata_error(STRATA_EBADINPUT,
                        "%s: min_nodes %d is above max_nodes %d", where,
                        j->min_nodes, j->max_nodes);
  return 0;
}

/* Names that differ only in case name one file on some file systems. */
static int check_names(const strata_fleet_jobs_t *f, const char *where) {
  for (int i = 1; i < f->n; i++)
    for (int k = 0; k < i; k++)
      if (!strcasecmp(f->jobs[i].name, f->jobs[k].name))
        return strata_error(
            STRATA_EBADINPUT,
            "%s: jobs[%d].name '%s' is jobs[%d]'s '%s' "
            "again%s: each job's plan is a file of its name",
            where, i, f->jobs[i].name, k, f->jobs[k].name,
            strcmp(f->jobs[i].name, f->jobs[k].name) ? " but for case" : "");
  return 0;
}

static int read_jobs(const cJSON *root, const char *where,
                     strata_fleet_jobs_t *f) {
  const cJSON *arr;
  char at[64];
  int rc;
  if (!cJSON_IsObject(root))
    return strata_error(STRATA_EBADINPUT,
                        "%s: the top level must be an object {\"jobs\": "
                        "[...]}",
                        where);
  if ((rc = check_keys(root, root_keys, where)) ||
      (rc = st__json_array(root, "jobs", where, 1, &arr)))
    return rc;
  int n = cJSON_GetArraySize(arr);
  if (n < 1 || n > MAX_JOBS)
    return strata_error(STRATA_EBADINPUT,
                        "%s: 'jobs' has %d entries; give 1 to %d jobs", where,
                        n, MAX_JOBS);
  if (!(f->jobs = strata_calloc((size_t)n, sizeof *f->jobs)))
    return strata_error(STRATA_ENOMEM, "out of memory");
  for (int i = 0; i < n; i++) {
    snprintf(at, sizeof at, "jobs[%d]", i);
    f->n = i + 1;
    if ((rc = read_job(cJSON_GetArrayItem(arr, i), at, &f->jobs[i]))) {
      strata_error_prefix("%s", where);
      return rc;
    }
  }
  return check_names(f, where);
}

int strata_fleet_jobs_parse(const char *text, size_t len, const char *where,
                            strata_fleet_jobs_t **out) {
  cJSON *root = NULL;
  strata_fleet_jobs_t *f = NULL;
  int rc;
  *out = NULL;
  if (!where) where = "jobs";
  if ((rc = st__json_parse(text, len, where, &root))) return rc;
  if (!(f = strata_calloc(1, sizeof *f)))
    rc = strata_error(STRATA_ENOMEM, "out of memory");
  if (!rc) rc = read_jobs(root, where, f);
  cJSON_Delete(root);
  if (rc)
    strata_fleet_jobs_destroy(f);
  else
    *out = f;
  return rc;
}

int strata_fleet_jobs_load(const char *path, strata_fleet_jobs_t **out) {
  char *text = NULL;
  size_t len = 0;
  *out = NULL;
  int rc = strata_file_read(path, 16u << 20, &text, &len);
  if (!rc) rc = strata_fleet_jobs_parse(text, len, path, out);
  strata_free(text);
  return rc;
}

void strata_fleet_jobs_destroy(strata_fleet_jobs_t *f) {
  if (!f) return;
  for (int i = 0; f->jobs && i < f->n; i++) {
    strata_free(f->jobs[i].name);
    strata_free(f->jobs[i].model);
  }
  strata_free(f->jobs);
  strata_free(f);
}
