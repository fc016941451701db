/*
 * drainlist.c - which hosts a scheduler says are out of service, from the
 * text its own commands print (docs/cluster-format.md, "Drain lists"):
 *
 *   sinfo -R                    REASON  USER  TIMESTAMP  NODELIST
 *                               (reason may hold spaces: the host list
 *                               is the last field, the one before it a
 *                               timestamp; every host listed is down,
 *                               drained or failing -- that is what -R
 *                               lists)
 *   sinfo -N -h -o "%N %T"      HOST STATE  (STATE as %T prints it,
 *                               "drained", "down*", "mixed+drain", ...)
 *   a plain list                HOSTLIST    (one host list a line)
 *   failed GPUs                 HOST:GPU    (a host list and the local
 *                               index of a GPU: "node042:3"; the list
 *                               then holds "node042:3", for the spec's
 *                               unhealthy.gpus)
 *
 * Host lists are Slurm's (node[001-004,009],gpu7), expanded by the spec
 * reader's expander.  A state is unhealthy when one of its '+'-joined
 * words is down, drain/drained/draining, fail/failing, maint, unknown,
 * inval, future, reboot_issued or a power-down state, or when it carries
 * Slurm's '*' (not responding) or '~' (powered off) flag; idle, mixed,
 * allocated, completing, reserved and planned hosts are healthy.  A line
 * of any other shape is an error naming the line, so a changed sinfo
 * format cannot drain nothing silently.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/text.h"
#include "topo/cluster.h"

#define MAX_FIELDS 64
#define MAX_HOSTS 1000000 /* as many as a spec may have */

typedef struct {
  char **v;
  int n, cap;
} names_t;

static int push(names_t *nm, char *s, const char *where) {
  if (nm->n == MAX_HOSTS) {
    strata_free(s);
    return strata_error(STRATA_EBADINPUT,
                        "%s: the drain list names more than %d hosts", where,
                        MAX_HOSTS);
  }
  if (nm->n == nm->cap) {
    int cap = nm->cap ? 2 * nm->cap : 16;
    char **v = strata_realloc(nm->v, sizeof *v * (size_t)cap);
    if (!v) {
      strata_free(s);
      return strata_error(STRATA_ENOMEM, "out of memory");
    }
    nm->v = v;
    nm->cap = cap;
  }
  nm->v[nm->n++] = s;
  return 0;
}

/* "node[1-2],gpu[3,5]x,login": split at commas outside brackets, expand
 * each part. */
static int add_hostlist(names_t *nm, const char *list, const char *where) {
  int rc = 0, depth = 0;
  for (const char *p = list; *p && !rc;) {
    const char *q = p;
    for (; *q && (*q != ',' || depth); q++)
      depth += (*q == '[') - (*q == ']');
    char *part = strata_strndup(p, (size_t)(q - p)), **names = NULL;
    int n = 0;
    if (!part) return strata_error(STRATA_ENOMEM, "out of memory");
    rc = st__range_expand(part, where, &names, &n);
    for (int i = 0; i < n; i++)
      if (!rc && !(rc = st__hostname_check(names[i], "host", where)))
        rc = push(nm, names[i], where);
      else
        strata_free(names[i]);
    strata_free(names);
    strata_free(part);
    p = *q ? q + 1 : q;
  }
  return rc;
}

/* Whether w[0..n) is one of list[0..k), whatever its case. */
static int word_in(const char *const *list, size_t k, const char *w, size_t n) {
  for (size_t i = 0; i < k; i++)
    if (strlen(list[i]) == n && !strncasecmp(w, list[i], n)) return 1;
  return 0;
}

static int bad_word(const char *w, size_t n) {
  static const char *bad[] = {
      "down",         "drain",         "drained",       "draining",
      "fail",         "failing",       "maint",         "unknown",
      "inval",        "future",        "reboot_issued", "power_down",
      "powered_down", "powering_down", "not_responding"};
  return word_in(bad, sizeof bad / sizeof bad[0], w, n);
}

static int good_word(const char *w, size_t n) {
  static const char *good[] = {
      "idle", "mixed",       "allocated",       "alloc",
      "mix",  "completing",  "reserved",        "planned",
      "resv", "powering_up", "reboot_requested"};
  return word_in(good, sizeof good / sizeof good[0], w, n);
}

/* 1 unhealthy, 0 healthy, -1 not a state this reader knows. */
static int state_bad(const char *st) {
  int any_bad = 0;
  for (const char *p = st; *p;) {
    const char *q = p;
    while (*q && *q != '+')
      q++;
    size_t n = (size_t)(q - p);
    while (n && strchr("*~#!%$@^-", p[n - 1])) {
      any_bad |= p[n - 1] == '*' || p[n - 1] == '~';
      n--;
    }
    if (bad_word(p, n))
      any_bad = 1;
    else if (!good_word(p, n))
      return -1;
    p = *q ? q + 1 : q;
  }
  return any_bad;
}

/* YYYY-MM-DDTHH:MM:SS, or "Unknown" as sinfo prints a missing time. */
static int is_timestamp(const char *s) {
  if (!strcmp(s, "Unknown") || !strcmp(s, "None")) return 1;
  return strlen(s) == 19 && s[4] == '-' && s[7] == '-' && s[10] == 'T' &&
         s[13] == ':' && s[16] == ':' && isdigit((unsigned char)s[0]);
}

static int split_fields(char *line, char **f) {
  int n = 0;
  char *save = NULL;
  for (char *p = strtok_r(line, " \t", &save); p && n < MAX_FIELDS;
       p = strtok_r(NULL, " \t", &save))
    f[n++] = p;
  return n;
}

/* "node042:3" (or "node[041-042]:3"): GPU 3 of each host, named
 * "HOST:3" in the list (a GPU failing on a node in service). */
static int add_gpu(names_t *nm, char *item, const char *where) {
  char *colon = strrchr(item, ':'), *end;
  long gpu;
  *colon = 0;
  gpu = strtol(colon + 1, &end, 10);
  if (colon == item || !isdigit((unsigned char)colon[1]) || *end || gpu > 1023)
    return strata_error(STRATA_EBADINPUT,
                        "%s: '%s:%s' is not HOST:GPU (a host and the local "
                        "index of one of its GPUs, 0 to 1023)",
                        where, item, colon + 1);
  names_t hosts = {0};
  int rc = add_hostlist(&hosts, item, where);
  for (int i = 0; i < hosts.n && !rc; i++) {
    size_t n = strlen(hosts.v[i]) + 8;
    char *s = strata_malloc(n);
    if (!s) {
      rc = strata_error(STRATA_ENOMEM, "out of memory");
      break;
    }
    snprintf(s, n, "%s:%ld", hosts.v[i], gpu);
    rc = push(nm, s, where);
  }
  strata_names_free(hosts.v, hosts.n);
  return rc;
}

static int parse_line(names_t *nm, char *line, const char *where, int lineno) {
  char *f[MAX_FIELDS], at[600];
  int n = split_fields(line, f), bad;
  snprintf(at, sizeof at, "%s:%d", where, lineno);
  if (n == 0 || f[0][0] == '#') return 0;
  if (!strcmp(f[0], "REASON") || !strcmp(f[0], "NODELIST") ||
      !strcmp(f[0], "HOSTNAMES"))
    return 0; /* a header */
  if (n == 1 && strchr(f[0], ':')) return add_gpu(nm, f[0], at);
  if (n == 1) return add_hostlist(nm, f[0], at);
  if (n == 2 && (bad = state_bad(f[1])) >= 0)
    return bad ? add_hostlist(nm, f[0], at) : 0;
  if (n >= 4 && is_timestamp(f[n - 2])) return add_hostlist(nm, f[n - 1], at);
  return strata_error(STRATA_EBADINPUT,
                      "%s: not a drain list line: give `sinfo -R` output "
                      "(REASON USER TIMESTAMP NODELIST), `sinfo -N -h -o \"%%N "
                      "%%T\"` output (HOST STATE, with a state sinfo prints) "
                      "or one host list a line",
                      at);
}

int strata_drain_list_parse(const char *text, size_t len, const char *where,
                            char ***out, int *count) {
  names_t nm = {0};
  int rc = 0, lineno = 0;
  *out = NULL;
  *count = 0;
  for (size_t i = 0; i < len && !rc;) {
    size_t j = i;
    while (j < len && text[j] != '\n')
      j++;
    char *line = strata_strndup(text + i, j - i);
    if (!line) {
      rc = strata_error(STRATA_ENOMEM, "out of memory");
      break;
    }
    rc = parse_line(&nm, line, where, ++lineno);
    strata_free(line);
    i = j + 1;
  }
  if (rc) {
    strata_names_free(nm.v, nm.n);
    return rc;
  }
  *out = nm.v;
  *count = nm.n;
  return 0;
}
