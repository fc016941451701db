/*
 * fleet_jobs.c - the jobs `strata fleet` shares a cluster among, read
 * from JOBS.json: {"objective", "jobs": [{"name", "model", "weight",
 * "min_nodes", "max_nodes", "tokens", "deadline", and any option of
 * strata plan}, ...]} (docs/cli.md, "strata fleet").
 *
 * A job's own keys are checked here and a message names its JSON path
 * (jobs[2].min_nodes): a wrong type, a value out of range, min_nodes
 * above max_nodes, a deadline that is past or not a date or duration.
 * Every other key is one of strata plan's options: it is kept as the
 * command-line word it stands for ("seq": 32768 is --seq=32768, "free":
 * true --free, "sequence_parallel": false --no-sequence-parallel), for
 * the CLI to check by plan's own option table and messages.  A job's
 * name becomes the file name of its plan (DIR/NAME.splan), so it is held
 * to a file name's characters and two names that differ only in case are
 * refused (they are one file on a case-insensitive file system).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "core/json.h"
#include "core/text.h"
#include "pipeline/search.h"

#define MAX_JOBS 64
#define MAX_NODES_ASKED 1000000

#define MAX_TOKENS 1e18                  /* a bound, far past any run's */
#define MAX_SECONDS (10 * 366 * 86400.0) /* a deadline within ten years */
#define MAX_KEY 48

static const char *const root_keys[] = {"jobs", "objective", NULL};

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

/* "36h", "10d", "90m", "1w", "3600s": seconds, or -1. */
static double duration(const char *s) {
  char *end;
  double v = strtod(s, &end);
  static const struct {
    const char *unit;
    double s;
  } units[] = {{"s", 1},    {"m", 60},    {"min", 60},
               {"h", 3600}, {"d", 86400}, {"w", 7 * 86400}};
  if (end == s || !(v > 0) || *s == '+') return -1;
  for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
    if (!strcmp(end, units[i].unit)) return v * units[i].s;
  return -1;
}

/* "2027-01-15" or "2027-01-15T08:00Z" / "...T08:00:00Z" (UTC): seconds
 * from now, or -1 when it is not such a date. */
static double date_from_now(const char *s) {
  struct tm tm;
  int y, mo, d, h = 0, mi = 0, sec = 0, n = 0;
  size_t len = strlen(s);
  if (sscanf(s, "%4d-%2d-%2d%n", &y, &mo, &d, &n) != 3 ||
      (len != (size_t)n &&
       sscanf(s + n, "T%2d:%2d:%2dZ%n", &h, &mi, &sec, &n) != 3 &&
       sscanf(s + n, "T%2d:%2dZ%n", &h, &mi, &n) != 2))
    return -1;
  if (len != 10 && s[len - 1] != 'Z') return -1;
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60)
    return -1;
  memset(&tm, 0, sizeof tm);
  tm.tm_year = y - 1900, tm.tm_mon = mo - 1, tm.tm_mday = d;
  tm.tm_hour = h, tm.tm_min = mi, tm.tm_sec = sec;
  return difftime(timegm(&tm), time(NULL));
}

/* The deadline form: tokens (> 0) to train by a deadline, both or
 * neither. */
static int read_deadline(const cJSON *o, const char *where,
                         strata_fleet_job_t *j) {
  const char *dl = NULL;
  int rc = st__json_num(o, "tokens", where, 0, &j->tokens);
  if (rc && rc != STRATA_ENOTFOUND) return rc;
  if (!rc && (!(j->tokens >= 1) || j->tokens > MAX_TOKENS))
    return strata_error(STRATA_EBADINPUT,
                        "%s: field 'tokens' is %g; it must be from 1 to 1e18",
                        where, j->tokens);
  rc = st__json_str(o, "deadline", where, 0, &dl);
  if (rc && rc != STRATA_ENOTFOUND) return rc;
  if (!dl != !(j->tokens > 0))
    return strata_error(STRATA_EBADINPUT,
                        "%s: %s without %s: a deadline is tokens to train by "
                        "a date or within a time (\"tokens\": 1e12, "
                        "\"deadline\": \"2027-01-15\" or \"14d\")",
                        where, dl ? "'deadline'" : "'tokens'",
                        dl ? "'tokens'" : "'deadline'");
  if (!dl) return 0;
  double d = duration(dl), t = d > 0 ? d : date_from_now(dl);
  char shown[96];
  st__plain(dl, shown, sizeof shown);
  if (d < 0 && t == -1)
    return strata_error(STRATA_EBADINPUT,
                        "%s: deadline '%s' is neither a date (2027-01-15 or "
                        "2027-01-15T08:00:00Z, UTC) nor a duration (36h, 14d, "
                        "90m, 2w)",
                        where, shown);
  if (!(t > 0) || t > MAX_SECONDS)
    return strata_error(STRATA_EBADINPUT,
                        "%s: deadline '%s' is %s: give one from now to ten "
                        "years ahead",
                        where, shown,
                        t > 0 ? "more than ten years ahead" : "past");
  j->seconds = t;
  return (j->deadline = strata_strdup(dl))
             ? 0
             : strata_error(STRATA_ENOMEM, "out of memory");
}

static const char *const own_keys[] = {"name",      "model",     "weight",
                                       "min_nodes", "max_nodes", "tokens",
                                       "deadline",  NULL};

static int own_key(const char *k) {
  for (int i = 0; own_keys[i]; i++)
    if (!strcmp(own_keys[i], k)) return 1;
  return 0;
}

/* One plan option: the key as an option's name (_ as -), its value as
 * the command line gives it. */
static int option_word(const cJSON *v, const char *key, const char *where,
                       char *buf, size_t size) {
  char opt[MAX_KEY + 1];
  size_t n = strlen(key);
  if (n < 1 || n > MAX_KEY ||
      strspn(key, "abcdefghijklmnopqrstuvwxyz"
                  "0123456789_-") != n)
    return strata_error(STRATA_EBADINPUT,
                        "%s: key '%.48s' is neither the job's own (name, "
                        "model, weight, min_nodes, max_nodes, tokens, "
                        "deadline) nor a strata plan option (lower-case "
                        "letters, digits, _ and -: \"seq\", \"precision\")",
                        where, key);
  for (size_t i = 0; i <= n; i++)
    opt[i] = key[i] == '_' ? '-' : key[i];
  if (cJSON_IsBool(v))
    snprintf(buf, size, "--%s%s", cJSON_IsTrue(v) ? "" : "no-", opt);
  else if (cJSON_IsNumber(v) && v->valuedouble == floor(v->valuedouble) &&
           fabs(v->valuedouble) < 9e15)
    snprintf(buf, size, "--%s=%.0f", opt, v->valuedouble);
  else if (cJSON_IsNumber(v))
    snprintf(buf, size, "--%s=%.17g", opt, v->valuedouble);
  else if (cJSON_IsString(v) && strlen(v->valuestring) < 4000)
    snprintf(buf, size, "--%s=%s", opt, v->valuestring);
  else
    return strata_error(STRATA_EBADINPUT,
                        "%s: field '%s' (strata plan's --%s) must be a "
                        "string, a number or true/false",
                        where, key, opt);
  return 0;
}

static int read_options(const cJSON *o, const char *where,
                        strata_fleet_job_t *j) {
  int n = 0, rc = 0;
  char word[4100];
  for (const cJSON *v = o->child; v; v = v->next)
    n += !own_key(v->string);
  if (!n) return 0;
  j->opt_word = strata_calloc((size_t)n, sizeof *j->opt_word);
  j->opt_key = strata_calloc((size_t)n, sizeof *j->opt_key);
  if (!j->opt_word || !j->opt_key)
    return strata_error(STRATA_ENOMEM, "out of memory");
  for (const cJSON *v = o->child; v && !rc; v = v->next) {
    if (own_key(v->string)) continue;
    if ((rc = option_word(v, v->string, where, word, sizeof word))) break;
    int k = j->n_opts++;
    j->opt_word[k] = strata_strdup(word);
    j->opt_key[k] = strata_strdup(v->string);
    if (!j->opt_word[k] || !j->opt_key[k])
      rc = strata_error(STRATA_ENOMEM, "out of memory");
  }
  return rc;
}

static int read_job(const cJSON *o, const char *where, strata_fleet_job_t *j) {
  int rc;
  if (!cJSON_IsObject(o))
    return strata_error(STRATA_EBADINPUT, "%s: a job must be an object", where);
  j->weight = 1;
  if ((rc = read_strings(o, where, j)) ||
      (rc = read_weight(o, where, &j->weight)) ||
      (rc = read_deadline(o, where, j)) || (rc = read_options(o, where, j)) ||
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
  const char *obj = NULL;
  if ((rc = check_keys(root, root_keys, where)) ||
      (rc = st__json_array(root, "jobs", where, 1, &arr)))
    return rc;
  rc = st__json_str(root, "objective", where, 0, &obj);
  if (rc && rc != STRATA_ENOTFOUND) return rc;
  if (obj && strata_fleet_objective_parse(obj, &f->objective)) {
    strata_error_prefix("%s: 'objective'", where);
    return STRATA_EBADINPUT;
  }
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
    strata_free(f->jobs[i].deadline);
    for (int k = 0; k < f->jobs[i].n_opts; k++) {
      strata_free(f->jobs[i].opt_word[k]);
      strata_free(f->jobs[i].opt_key[k]);
    }
    strata_free(f->jobs[i].opt_word);
    strata_free(f->jobs[i].opt_key);
  }
  strata_free(f->jobs);
  strata_free(f);
}

static const char *const objectives[] = {"fair", "throughput", NULL};

const char *strata_fleet_objective_name(int v) {
  return v == STRATA_FLEET_THROUGHPUT ? "throughput" : "fair";
}

int strata_fleet_objective_parse(const char *s, int *out) {
  for (int i = 0; objectives[i]; i++)
    if (s && !strcmp(s, objectives[i])) return *out = i + 1, 0;
  const char *near = s ? st__did_you_mean(s, objectives) : NULL;
  char shown[64];
  return strata_error(STRATA_EINVAL,
                      "'%s' is not an objective: fair (the default: the sum "
                      "of weight x log tokens/s, every job that can run) or "
                      "throughput (the sum of weight x tokens/s)%s%s%s",
                      st__plain(s ? s : "", shown, sizeof shown),
                      near ? "; did you mean '" : "", near ? near : "",
                      near ? "'?" : "");
}
