/*
 * json.c - checked getters and builders over cJSON, so that every parser
 * in Strata reports a bad field the same way: where, which key, what was
 * expected.
 */
#include <math.h>
#include <string.h>

#include "core/json.h"
#include "core/text.h"

int st__json_parse(const char *text, size_t len, const char *where,
                   cJSON **out) {
  const char *end = NULL;
  *out = cJSON_ParseWithLengthOpts(text, len, &end, 0);
  if (*out) return 0;
  if (strata_alloc_failed())
    return strata_error(STRATA_ENOMEM, "%s: out of memory parsing JSON", where);
  if (!end || end < text || end > text + len) end = text;
  int line = 1, col = 1;
  for (const char *p = text; p < end; p++) {
    if (*p == '\n') {
      line++;
      col = 1;
    } else {
      col++;
    }
  }
  return strata_error(STRATA_EBADINPUT,
                      "%s: not valid JSON (syntax error at line %d, column %d)",
                      where, line, col);
}

static int missing(const char *key, const char *where, int required) {
  if (!required) return STRATA_ENOTFOUND;
  return strata_error(STRATA_EBADINPUT, "%s: missing required field '%s'",
                      where, key);
}

static int wrong(const char *key, const char *where, const char *want) {
  return strata_error(STRATA_EBADINPUT, "%s: field '%s' must be %s", where, key,
                      want);
}

int st__json_num(const cJSON *obj, const char *key, const char *where,
                 int required, double *out) {
  const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!it || cJSON_IsNull(it)) return missing(key, where, required);
  if (!cJSON_IsNumber(it) || !isfinite(it->valuedouble))
    return wrong(key, where, "a number");
  *out = it->valuedouble;
  return 0;
}

int st__json_int(const cJSON *obj, const char *key, const char *where,
                 int required, int64_t *out) {
  double v;
  int rc = st__json_num(obj, key, where, required, &v);
  if (rc) return rc;
  if (v != floor(v) || v < -9.0e15 || v > 9.0e15)
    return wrong(key, where, "an integer");
  *out = (int64_t)v;
  return 0;
}

int st__json_bool(const cJSON *obj, const char *key, const char *where,
                  int required, int *out) {
  const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!it || cJSON_IsNull(it)) return missing(key, where, required);
  if (!cJSON_IsBool(it)) return wrong(key, where, "true or false");
  *out = cJSON_IsTrue(it);
  return 0;
}

int st__json_str(const cJSON *obj, const char *key, const char *where,
                 int required, const char **out) {
  const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!it || cJSON_IsNull(it)) return missing(key, where, required);
  if (!cJSON_IsString(it)) return wrong(key, where, "a string");
  *out = it->valuestring;
  return 0;
}

int st__json_array(const cJSON *obj, const char *key, const char *where,
                   int required, const cJSON **out) {
  const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!it || cJSON_IsNull(it)) return missing(key, where, required);
  if (!cJSON_IsArray(it)) return wrong(key, where, "an array");
  *out = it;
  return 0;
}

int st__json_object(const cJSON *obj, const char *key, const char *where,
                    int required, const cJSON **out) {
  const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!it || cJSON_IsNull(it)) return missing(key, where, required);
  if (!cJSON_IsObject(it)) return wrong(key, where, "an object");
  *out = it;
  return 0;
}

static int known_key(const char *k, const char *const *known) {
  for (int i = 0; known[i]; i++)
    if (!strcmp(k, known[i])) return 1;
  return 0;
}

const char *st__json_bad_key(const cJSON *obj, const char *const *known,
                             int *repeated) {
  const cJSON *it, *jt;
  *repeated = 0;
  cJSON_ArrayForEach(it, obj) {
    if (!it->string || !known_key(it->string, known)) return it->string;
  }
  /* Every key is known, so a long object repeats one early: the search
   * below stays short. */
  cJSON_ArrayForEach(it, obj) for (jt = obj->child; jt != it; jt = jt->next) {
    if (!strcmp(it->string, jt->string)) {
      *repeated = 1;
      return it->string;
    }
  }
  return NULL;
}

int st__edit_distance(const char *a, const char *b) {
  enum { MAX = 63 };
  int row[MAX + 1], la = (int)strnlen(a, MAX), lb = (int)strnlen(b, MAX);
  for (int j = 0; j <= lb; j++)
    row[j] = j;
  for (int i = 1; i <= la; i++) {
    int diag = row[0]; /* d[i-1][j-1] */
    row[0] = i;
    for (int j = 1; j <= lb; j++) {
      int up = row[j], best = diag + (a[i - 1] != b[j - 1]);
      if (up + 1 < best) best = up + 1;
      if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
      diag = up;
      row[j] = best;
    }
  }
  return row[lb];
}

const char *st__nearest(const char *s, const char *const *names) {
  const char *best = NULL;
  int bd = 0;
  for (int i = 0; names[i]; i++) {
    int d = st__edit_distance(s, names[i]);
    if (!best || d < bd) {
      best = names[i];
      bd = d;
    }
  }
  return best;
}

static int added(const cJSON *it) {
  return it ? 0 : strata_error(STRATA_ENOMEM, "out of memory building JSON");
}

cJSON *st__json_push_object(cJSON *arr) {
  cJSON *o = cJSON_CreateObject();
  if (!o || !cJSON_AddItemToArray(arr, o)) {
    cJSON_Delete(o);
    return NULL;
  }
  return o;
}

int st__json_add_num(cJSON *obj, const char *key, double v) {
  return added(cJSON_AddNumberToObject(obj, key, v));
}

int st__json_add_str(cJSON *obj, const char *key, const char *v) {
  /* JSON is UTF-8 (RFC 8259 §8.1): a name with invalid bytes is written
   * with U+FFFD in their place, never as the bytes. */
  if (v && !st__utf8_valid(v, strlen(v))) {
    char *fixed = st__utf8_fix(v);
    if (!fixed)
      return strata_error(STRATA_ENOMEM, "out of memory building JSON");
    int rc = added(cJSON_AddStringToObject(obj, key, fixed));
    strata_free(fixed);
    return rc;
  }
  return added(cJSON_AddStringToObject(obj, key, v));
}

int st__json_add_bool(cJSON *obj, const char *key, int v) {
  return added(cJSON_AddBoolToObject(obj, key, v));
}

char *st__json_print(const cJSON *root) {
  char *s = cJSON_Print(root);
  if (!s) {
    strata_error(STRATA_ENOMEM, "out of memory printing JSON");
    return NULL;
  }
  size_t n = strlen(s);
  char *t = strata_realloc(s, n + 2);
  if (!t) {
    strata_free(s);
    strata_error(STRATA_ENOMEM, "out of memory printing JSON");
    return NULL;
  }
  t[n] = '\n';
  t[n + 1] = '\0';
  return t;
}
