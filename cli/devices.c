/*
 * devices.c - the GPUs a plan runs on, for `strata show` and `strata
 * export hostfile`: the cluster is the one --cluster gives, else the one
 * the plan names when that is a preset (dgx-h100:128, rebuilt from the
 * table).  A plan file is an input like any other, so a name in it never
 * makes strata open a file: a plan made on a spec file needs --cluster
 * for its device map.  A plan file holds no device list (merge/devices.c
 * says why), so where its cluster is not known the message says so and
 * asks for --cluster; `show` then prints the plan and that note instead
 * of failing.
 */
#include <string.h>

#include "cli/devices.h"
#include "core/json.h"
#include "merge/merge_int.h"
#include "topo/cluster.h"

int cli_plan_cluster(const strata_plan_t *p, const char *given,
                     strata_cluster_t **c) {
  int rc;
  *c = NULL;
  if (given) {
    rc = strata_cluster_load(given, c);
    if (rc) strata_error_prefix("--cluster");
    return rc;
  }
  if (!p->cluster || !p->cluster[0])
    return strata_error(STRATA_ENOTFOUND,
                        "the plan names no cluster: give --cluster SPEC");
  if (!st__is_preset(p->cluster))
    return strata_error(STRATA_ENOTFOUND,
                        "the plan's cluster '%s' is not a preset, and strata "
                        "opens no file a plan names: give --cluster SPEC, the "
                        "spec it runs on",
                        p->cluster);
  rc = strata_cluster_load(p->cluster, c);
  if (rc) {
    char *why = strata_strdup(strata_last_error());
    rc = strata_error(rc,
                      "the plan's cluster '%s' cannot be built (%s): give "
                      "--cluster SPEC, the spec it runs on",
                      p->cluster, why ? why : "out of memory");
    strata_free(why);
  }
  return rc;
}

int cli_device_map(const strata_plan_t *p, const char *given,
                   strata_device_map_t **m) {
  strata_cluster_t *c = NULL;
  int rc = cli_plan_cluster(p, given, &c);
  *m = NULL;
  if (!rc) rc = strata_device_map(p, c, m);
  strata_cluster_destroy(c);
  return rc;
}

/* The plan's JSON with "device_map": the map, or {"error": why}.  The
 * map's tree goes into the plan's as it is built (a million-node map is
 * not printed and parsed again). */
static int json_with(char **text, const strata_device_map_t *m,
                     const char *err) {
  cJSON *root = NULL, *d = NULL;
  int rc = st__json_parse(*text, strlen(*text), "show", &root);
  if (!rc && m) rc = st__device_map_tree(m, &d);
  if (!rc && !m &&
      (!(d = cJSON_CreateObject()) || st__json_add_str(d, "error", err)))
    rc = strata_error(STRATA_ENOMEM, "out of memory");
  if (!rc && !cJSON_AddItemToObject(root, "device_map", d))
    rc = strata_error(STRATA_ENOMEM, "out of memory");
  if (!rc) {
    d = NULL; /* root owns it */
    char *out = st__json_print(root);
    if (!out) rc = strata_error(STRATA_ENOMEM, "out of memory");
    strata_free(*text);
    *text = out;
  }
  cJSON_Delete(d);
  cJSON_Delete(root);
  return rc;
}

static int summary_with(char **text, const strata_device_map_t *m,
                        const char *err) {
  strata_buf_t b;
  char *dev = NULL;
  int rc = m ? strata_device_map_summary(m, &dev) : 0;
  if (rc) return rc;
  strata_buf_init(&b);
  strata_buf_puts(&b, *text);
  if (m)
    strata_buf_printf(&b, "\n%s", dev);
  else
    strata_buf_printf(&b, "\ndevices: %s\n", err);
  strata_free(dev);
  if (b.oom) {
    strata_buf_free(&b);
    return strata_error(STRATA_ENOMEM, "out of memory");
  }
  strata_free(*text);
  *text = strata_buf_steal(&b, NULL);
  return 0;
}

int cli_show_devices(const strata_plan_t *p, const char *given, int json,
                     char **text) {
  strata_device_map_t *m = NULL;
  char *err = NULL;
  int rc = cli_device_map(p, given, &m);
  if (rc && (given || rc == STRATA_ENOMEM)) return rc;
  if (rc && !(err = strata_strdup(strata_last_error())))
    return strata_error(STRATA_ENOMEM, "out of memory");
  strata_error_clear();
  rc = json ? json_with(text, m, err) : summary_with(text, m, err);
  strata_free(err);
  strata_device_map_destroy(m);
  return rc;
}
