/*
 * json.c - checked getters and builders over cJSON, so that every parser
 * in Strata reports a bad field the same way: where, which key, what was
 * expected.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/json.h"
#include "core/text.h"

/* Line and column (both from 1) of text + off. */
static void line_col(const char *text, size_t off, int *line, int *col) {
  *line = 1;
  *col = 1;
  for (size_t i = 0; i < off; i++) {
    if (text[i] == '\n') {
      ++*line;
      *col = 1;
    } else {
      ++*col;
    }
  }
}

/* "WHERE: WHAT at line L, column C[: WHY]" */
static int bad_at(const char *text, size_t off, const char *where,
                  const char *what, const char *why) {
  int line, col;
  line_col(text, off, &line, &col);
  return strata_error(STRATA_EBADINPUT, "%s: %s at line %d, column %d%s%s",
                      where, what, line, col, why ? ": " : "", why ? why : "");
}

static int is_ws(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* The first byte of text[0, n) that does not start a valid UTF-8
 * character: the lead byte gives the length, st__utf8_valid judges. */
static size_t utf8_bad_at(const char *text, size_t n) {
  size_t i = 0;
  while (i < n) {
    unsigned char c = (unsigned char)text[i];
    size_t k = c < 0x80 ? 1 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
    if (k > n - i || !st__utf8_valid(text + i, k)) return i;
    i += k;
  }
  return n;
}

/* What cJSON lets through and RFC 8259 does not, in the n bytes of the
 * document: raw control characters (cJSON takes any byte up to 0x20 as
 * white space, and keeps them inside strings; a NUL cuts a C string
 * short), \u0000 (cJSON decodes it and the string ends there), and bytes
 * that are not UTF-8. */
static int check_text(const char *text, size_t n, const char *where) {
  char what[64];
  int in_str = 0;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)text[i];
    if (c < 0x20 && (in_str || !is_ws((char)c))) {
      snprintf(what, sizeof what, "a raw control character (byte 0x%02x)", c);
      return bad_at(text, i, where, what,
                    in_str ? "a string writes it as an escape" : NULL);
    }
    if (c == '"') in_str = !in_str;
    /* an escape (only strings hold one): the next byte is taken as is */
    if (c == '\\' && i + 1 < n) {
      if (n - i >= 6 && !memcmp(text + i + 1, "u0000", 5))
        return bad_at(text, i, where, "an escaped NUL (\\u0000)",
                      "no string may hold one");
      i++;
    }
  }
  if (!st__utf8_valid(text, n)) {
    size_t at = utf8_bad_at(text, n);
    snprintf(what, sizeof what, "a byte that is not UTF-8 (0x%02x)",
             at < n ? (unsigned char)text[at] : 0);
    return bad_at(text, at, where, what, "JSON text is UTF-8");
  }
  return 0;
}

/* ---- duplicate keys ---- */

typedef struct {
  const cJSON *dup; /* the first member repeating a key, in text order */
  char path[160];   /* where dup is: "network", "node_groups[0].template" */
} dups_t;

typedef struct {
  const cJSON *it;
  int i;
} member_t;

static int by_key(const void *a, const void *b) {
  const member_t *x = a, *y = b;
  int c = strcmp(x->it->string, y->it->string);
  return c ? c : x->i - y->i;
}

/* Index of the first member of o that repeats an earlier member's key,
 * or -1 (or -2 when out of memory). */
static int first_repeat(const cJSON *o) {
  enum { SMALL = 16 };
  int n = cJSON_GetArraySize(o), best = -1, i = 0;
  const cJSON *it, *jt;
  if (n <= SMALL) {
    cJSON_ArrayForEach(it, o) {
      for (jt = o->child; jt != it; jt = jt->next)
        if (!strcmp(it->string, jt->string)) return i;
      i++;
    }
    return -1;
  }
  member_t *m = strata_malloc(sizeof *m * (size_t)n);
  if (!m) return -2;
  cJSON_ArrayForEach(it, o) {
    m[i].it = it;
    m[i].i = i;
    i++;
  }
  qsort(m, (size_t)n, sizeof *m, by_key);
  for (i = 1; i < n; i++)
    if (!strcmp(m[i].it->string, m[i - 1].it->string) &&
        (best < 0 || m[i].i < best))
      best = m[i].i;
  strata_free(m);
  return best;
}

static void path_add(char *path, size_t size, size_t at, const cJSON *item,
                     int index) {
  char plain[48];
  if (at >= size - 1) return;
  if (!item->string)
    snprintf(path + at, size - at, "[%d]", index);
  else
    snprintf(path + at, size - at, "%s%s", at ? "." : "",
             st__plain(item->string, plain, sizeof plain));
}

/* Walk node in text order; 1 when a repeated key was found (d->dup and
 * d->path say which), -1 when out of memory. */
static int find_dup(const cJSON *node, dups_t *d, size_t at) {
  const cJSON *it;
  int rep = -1, i = 0, r;
  if (!cJSON_IsObject(node) && !cJSON_IsArray(node)) return 0;
  if (cJSON_IsObject(node) && (rep = first_repeat(node)) == -2) return -1;
  cJSON_ArrayForEach(it, node) {
    if (i == rep) {
      d->dup = it;
      d->path[at] = '\0';
      return 1;
    }
    path_add(d->path, sizeof d->path, at, it, i);
    if ((r = find_dup(it, d, strlen(d->path)))) return r;
    d->path[at] = '\0';
    i++;
  }
  return 0;
}

/* Members keyed k before target in text order (*seen), and in all. */
static int count_keys(const cJSON *node, const char *k, const cJSON *target,
                      int *seen, int *found) {
  const cJSON *it;
  int n = 0;
  cJSON_ArrayForEach(it, node) {
    if (it == target) *found = 1;
    if (it->string && !strcmp(it->string, k)) {
      n++;
      if (!*found) ++*seen;
    }
    n += count_keys(it, k, target, seen, found);
  }
  return n;
}

/* Where the dup's key is in the text: its occurrence as "k" followed by
 * ':' whose rank among them is its rank in the tree.  Found only when the
 * key is written without escapes (every occurrence, so the two counts
 * agree); SIZE_MAX otherwise. */
static size_t dup_offset(const char *text, size_t n, const cJSON *root,
                         const cJSON *dup) {
  const char *k = dup->string;
  size_t kl = strlen(k), at = SIZE_MAX;
  int seen = 0, found = 0, total, hits = 0;
  if (strpbrk(k, "\"\\")) return SIZE_MAX;
  total = count_keys(root, k, dup, &seen, &found);
  for (size_t i = 0; i + kl + 2 <= n; i++) {
    if (text[i] != '"' || memcmp(text + i + 1, k, kl) ||
        text[i + kl + 1] != '"')
      continue;
    size_t bs = 0, j = i + kl + 2;
    while (bs < i && text[i - 1 - bs] == '\\')
      bs++;
    while (j < n && is_ws(text[j]))
      j++;
    if (bs % 2 || j >= n || text[j] != ':') continue;
    if (hits++ == seen) at = i;
  }
  return hits == total ? at : SIZE_MAX;
}

static int check_dups(const char *text, size_t n, const cJSON *root,
                      const char *where) {
  dups_t d = {0};
  int r = find_dup(root, &d, 0);
  if (r < 0)
    return strata_error(STRATA_ENOMEM, "%s: out of memory parsing JSON", where);
  if (!r) return 0;
  char key[80], pos[48] = "";
  size_t off = dup_offset(text, n, root, d.dup);
  if (off != SIZE_MAX) {
    int line, col;
    line_col(text, off, &line, &col);
    snprintf(pos, sizeof pos, " (line %d, column %d)", line, col);
  }
  return strata_error(STRATA_EBADINPUT,
                      "%s: %s%s'%s' is given twice%s; give it once", where,
                      d.path, d.path[0] ? ": " : "",
                      st__plain(d.dup->string, key, sizeof key), pos);
}

int st__json_parse(const char *text, size_t len, const char *where,
                   cJSON **out) {
  const char *end = NULL;
  *out = cJSON_ParseWithLengthOpts(text, len, &end, 0);
  if (!*out) {
    if (strata_alloc_failed())
      return strata_error(STRATA_ENOMEM, "%s: out of memory parsing JSON",
                          where);
    if (!end || end < text || end > text + len) end = text;
    int line, col;
    line_col(text, (size_t)(end - text), &line, &col);
    return strata_error(
        STRATA_EBADINPUT,
        "%s: not valid JSON (syntax error at line %d, column %d)", where, line,
        col);
  }
  /* cJSON stops after the value and any bytes up to 0x20 that follow it;
   * the value itself ends in a byte above that */
  size_t doc = (size_t)(end - text), rest;
  while (doc > 0 && (unsigned char)text[doc - 1] <= 0x20)
    doc--;
  for (rest = doc; rest < len && is_ws(text[rest]); rest++) {
  }
  int rc = 0;
  if (rest < len)
    rc = bad_at(text, rest, where, "data after the JSON document", NULL);
  if (!rc) rc = check_text(text, doc, where);
  if (!rc) rc = check_dups(text, doc, *out, where);
  if (rc) {
    cJSON_Delete(*out);
    *out = NULL;
  }
  return rc;
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
