/*
 * core/json.h - helpers over cJSON shared by the modules' parsers and
 * writers (internal: cJSON types never appear in public headers).
 *
 * Getters take the object, a key and a "where" string for messages; they
 * return 0, STRATA_ENOTFOUND when an optional key is absent (out is left
 * untouched), or STRATA_EBADINPUT with a message naming where and key.
 */
#ifndef STRATA_CORE_JSON_H
#define STRATA_CORE_JSON_H

#include <stdint.h>

#include <cjson/cJSON.h>

#include "strata/core.h"

/* Parse text strictly, as RFC 8259 reads it: every input's JSON goes
 * through here.  Refused, each with line and column: a syntax error, data
 * after the document, a raw control character, \u0000 (cJSON would cut
 * the string there), bytes that are not UTF-8, and a key given twice in
 * one object (the message names the object's path and the key; readers
 * of other tools would take the last value where cJSON gives the first). */
int st__json_parse(const char *text, size_t len, const char *where,
                   cJSON **out);
int st__json_int(const cJSON *obj, const char *key, const char *where,
                 int required, int64_t *out);
int st__json_num(const cJSON *obj, const char *key, const char *where,
                 int required, double *out);
int st__json_bool(const cJSON *obj, const char *key, const char *where,
                  int required, int *out);
/* *out points into obj (no copy). */
int st__json_str(const cJSON *obj, const char *key, const char *where,
                 int required, const char **out);
/* The array or object under key (type checked); NULL on absent optional. */
int st__json_array(const cJSON *obj, const char *key, const char *where,
                   int required, const cJSON **out);
int st__json_object(const cJSON *obj, const char *key, const char *where,
                    int required, const cJSON **out);

/* Key hygiene for parsers of hand-written files: the first member of obj
 * whose key is not in known (NULL-terminated), or else the second of two
 * members with the same key; NULL when every key is known and appears
 * once.  *repeated says which case it is (st__json_parse already refuses
 * repeated keys; this holds for trees built otherwise). */
const char *st__json_bad_key(const cJSON *obj, const char *const *known,
                             int *repeated);

/* Builders that record ENOMEM and return NULL/-1 on failure. */
int st__json_add_num(cJSON *obj, const char *key, double v);
/* A new object appended to arr, or NULL (nothing appended) when out of
 * memory. */
cJSON *st__json_push_object(cJSON *arr);
int st__json_add_str(cJSON *obj, const char *key, const char *v);
int st__json_add_bool(cJSON *obj, const char *key, int v);
/* Print (formatted) into a strata_free-able string, with a final newline. */
char *st__json_print(const cJSON *root);

#endif
