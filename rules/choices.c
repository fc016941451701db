/*
 * choices.c - the names of plan_fields.h's planning choices: for each row
 * of STRATA_PLAN_CHOICES its strata_<key>_name and strata_<key>_parse,
 * made from the row's names, so that the command line, the runs files,
 * show --json, diff and the exporters say a value one way.  A value is 0
 * where it is not given and k for the k-th name; a set (NAMES) is a mask
 * whose bit k - 1 is the k-th name, given as a comma list.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "pipeline/search.h"

/* The names of each row, NULL-terminated. */
#define CHOICE_NAMES(F, kind, m, key, what, slot, diff, cli, when, help, ...)  \
  static const char *const key##_names[] = {__VA_ARGS__, NULL};
STRATA_PLAN_CHOICES(CHOICE_NAMES, _)
#undef CHOICE_NAMES

/* The constants of plan_fields.h count the names. */
_Static_assert(STRATA_MOE_FLEX == 3 && STRATA_MOE_HYBRIDEP == 2 &&
                   STRATA_MOE_FP64 == 2 && STRATA_MOE_DROP_POSITION == 2 &&
                   STRATA_CUDA_GRAPH_TE == 3 && STRATA_CUDA_GRAPH_FULL == 4 &&
                   STRATA_CUDA_GRAPH_MOE_PREPROCESS == 1 << 4 &&
                   STRATA_DS_TYPE_EMBEDDING == 5,
               "plan_fields.h's constants follow the names of its choices");

static int count(const char *const *names) {
  int n = 0;
  while (names[n])
    n++;
  return n;
}

/* "a, b or c" into buf. */
static const char *listed(const char *const *names, char *buf, size_t size) {
  size_t k = 0;
  int n = count(names);
  buf[0] = 0;
  for (int i = 0; i < n && k < size; i++)
    k += (size_t)snprintf(buf + k, size - k, "%s%s",
                          i == 0       ? ""
                          : i == n - 1 ? " or "
                                       : ", ",
                          names[i]);
  return buf;
}

/* The pipeline schedules' names are torchtitan's, which it reads
 * case-insensitively (get_schedule_class lowers them). */
static int find(const char *const *names, const char *s, size_t len) {
  int any_case = names == pp_schedule_names;
  for (int i = 0; names[i]; i++)
    if (strlen(names[i]) == len &&
        !(any_case ? strncasecmp(names[i], s, len) : strncmp(names[i], s, len)))
      return i;
  return -1;
}

static const char *name_of(const char *const *names, int v) {
  return v >= 0 && v <= count(names) ? names[v > 0 ? v - 1 : 0] : "?";
}

static const char *bit_name(const char *const *names, int bit) {
  return bit >= 0 && bit < count(names) ? names[bit] : NULL;
}

static int parse_one(const char *const *names, const char *what, const char *s,
                     int *out) {
  char list[256];
  int i = s ? find(names, s, strlen(s)) : -1;
  if (i < 0)
    return strata_error(STRATA_EINVAL, "unknown %s '%s' (%s)", what, s ? s : "",
                        listed(names, list, sizeof list));
  *out = i + 1;
  return 0;
}

/* A comma list of names, each once, at least one. */
static int parse_set(const char *const *names, const char *what, const char *s,
                     int *out) {
  char list[256];
  int mask = 0;
  for (const char *p = s ? s : ""; s;) {
    const char *e = strchr(p, ',');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    int i = find(names, p, len);
    if (i < 0 || mask & (1 << i))
      return strata_error(STRATA_EINVAL,
                          "%s '%s': a comma list of %s, each once", what, s,
                          listed(names, list, sizeof list));
    mask |= 1 << i;
    if (!e) break;
    p = e + 1;
  }
  if (!mask)
    return strata_error(STRATA_EINVAL, "%s '%s': a comma list of %s", what,
                        s ? s : "", listed(names, list, sizeof list));
  *out = mask;
  return 0;
}

#define NAME_OF_NAME name_of
#define NAME_OF_NAMES bit_name
#define PARSE_NAME parse_one
#define PARSE_NAMES parse_set
#define CHOICE_API(F, kind, m, key, what, ...)                                 \
  const char *strata_##key##_name(int v) {                                     \
    return NAME_OF_##kind(key##_names, v);                                     \
  }                                                                            \
  int strata_##key##_parse(const char *s, int *out) {                          \
    return PARSE_##kind(key##_names, what, s, out);                            \
  }
STRATA_PLAN_CHOICES(CHOICE_API, _)
#undef CHOICE_API
