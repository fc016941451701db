/*
 * cmd_topo_collect.c - `strata topo collect [DIR|FILE...] [-o SPEC]`: a
 * cluster spec from one hwloc XML export per host (topo/collect.c), with
 * the hosts of a scheduler's drain list as unhealthy (topo/drainlist.c).
 * Without files: this machine, its topology exported next to the spec.
 *
 * The spec is read back with the planner's own reader before it is
 * written, so a spec this command writes is one `strata plan --cluster`
 * takes -- or the message says why not (an unknown GPU model: pass
 * --gpu-model).  Node groups of different shapes are written as found
 * (they describe the cluster truthfully) with a warning that the planner
 * does not take them yet.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/opts.h"
#include "core/json.h"
#include "core/stream.h"

typedef struct {
  const char *out, *unhealthy, *keep;
  strata_collect_opts_t co;
  char **gpus; /* "HOST:GPU" for unhealthy.gpus */
  int ngpus;
  char **files;
  int nfiles, capfiles;
  char *dir; /* the spec's folder */
} args_t;

#define CLI_ARGS_T args_t

static const cli_opt_t opts[] = {
    {CLI_STR("output", 'o', out, "SPEC",
             "write the spec atomically (default: standard\n"
             "output; XML paths are relative to its folder)")},
    {CLI_STR("unhealthy", 0, unhealthy, "FILE",
             "hosts out of service, as `sinfo -R` or\n"
             "`sinfo -N -h -o \"%N %T\"` print them, or one\n"
             "host list a line ('-': standard input); a\n"
             "line HOST:GPU (node042:3) is one failed GPU")},
    {CLI_STR("keep-unhealthy-gpus", 0, keep, "SPEC",
             "keep the unhealthy.gpus of SPEC (the spec this\n"
             "one replaces: GPUs marked by hand stay marked)")},
    {CLI_DOUBLE("nic-gbits", co.nic_gbits, 0.1, 6400, 0, "N",
                "line rate of one NIC in Gb/s (needed with more\n"
                "than one host: hwloc does not give it)")},
    {CLI_INT("leaf-size", co.leaf_size, 1, 1000000, "N",
             "hosts per leaf switch (default 32)")},
    {CLI_STR("name", 0, co.name, "NAME",
             "the spec's name (default: collected)")},
    {CLI_STR("gpu-model", 0, co.gpu_model, "M",
             "the GPUs' table model where hwloc cannot tell")},
    {CLI_END}};

static const cli_optspec_t opt_spec = {
    "topo collect",
    opts,
    "Usage: strata topo collect [DIR|FILE...] [-o SPEC] [options]\n"
    "\n"
    "Write a cluster spec (docs/cluster-format.md) from one hwloc XML\n"
    "export per host, named after the host (`lstopo --of xml HOST.xml`\n"
    "on each host, or the HOST.xml hwloc-gather-topology writes): a\n"
    "folder is read for its *.xml files.  Identical nodes form one node\n"
    "group named by a host range (node[001-004]).  Without files: this\n"
    "machine (when hwloc sees a GPU), its XML written beside the spec.\n"
    "\n"
    "Options:\n",
    "\n"
    "Exit codes: 0 ok, 1 usage, 2 bad input (an unreadable or GPU-less\n"
    "file, a bad drain list, a spec the planner would refuse).\n",
    0,
    22,
    NULL};

static int add_file(args_t *a, const char *path) {
  if (a->nfiles == a->capfiles) {
    int cap = a->capfiles ? 2 * a->capfiles : 64;
    char **v = strata_realloc(a->files, sizeof *v * (size_t)cap);
    if (!v) return strata_error(STRATA_ENOMEM, "out of memory");
    a->files = v;
    a->capfiles = cap;
  }
  if (!(a->files[a->nfiles] = strata_strdup(path)))
    return strata_error(STRATA_ENOMEM, "out of memory");
  a->nfiles++;
  return 0;
}

static int cmp_str(const void *x, const void *y) {
  return strcmp(*(char *const *)x, *(char *const *)y);
}

/* The *.xml files of a folder (hwloc-gather-topology's tarball and text
 * output beside them are skipped). */
static int add_dir(args_t *a, const char *dir, DIR *d) {
  int before = a->nfiles, rc = 0;
  for (struct dirent *e; !rc && (e = readdir(d));) {
    size_t n = strlen(e->d_name);
    char path[4096];
    if (n < 5 || strcmp(e->d_name + n - 4, ".xml") || e->d_name[0] == '.')
      continue;
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    rc = add_file(a, path);
  }
  if (!rc && a->nfiles == before)
    rc = strata_error(STRATA_ENOTFOUND,
                      "%s: no *.xml file in it (export each host with "
                      "lstopo --of xml HOST.xml)",
                      dir);
  if (!rc)
    qsort(a->files + before, (size_t)(a->nfiles - before), sizeof *a->files,
          cmp_str);
  return rc;
}

static int add_operand(args_t *a, const char *arg) {
  DIR *d = opendir(arg);
  int rc;
  if (!d) return add_file(a, arg);
  rc = add_dir(a, arg, d);
  closedir(d);
  return rc;
}

/* This machine's topology, exported as HOST.xml in the spec's folder. */
static int add_local(args_t *a) {
  char host[256] = "localhost", path[4400], *xml = NULL;
  size_t len;
  int rc;
  if (gethostname(host, sizeof host - 1) != 0 || !host[0])
    snprintf(host, sizeof host, "localhost");
  snprintf(path, sizeof path, "%s/%s.xml", a->dir, host);
  if ((rc = strata_node_export_local(&xml, &len))) {
    strata_error_prefix("no host files given, and this machine cannot be "
                        "used");
    return rc;
  }
  rc = strata_file_write_atomic(path, xml, len);
  strata_free(xml);
  return rc ? rc : add_file(a, path);
}

static char *dir_of(const char *path) {
  const char *slash = path ? strrchr(path, '/') : NULL;
  if (!path || !strcmp(path, "-") || !slash) return strata_strdup(".");
  return slash == path ? strata_strdup("/")
                       : strata_strndup(path, (size_t)(slash - path));
}

/* The reader's message names the file it read: name the spec instead. */
static void rename_in_error(const char *tmp, const char *name) {
  const char *msg = strata_last_error();
  size_t n = strlen(tmp);
  if (strncmp(msg, tmp, n)) return;
  char *rest = strata_strdup(msg + n);
  if (rest) strata_error(STRATA_OK, "%s%s", name, rest);
  strata_free(rest);
}

/* Read the spec back as the planner will. */
static int check_spec(const args_t *a, const char *spec) {
  char tmp[4400];
  const char *name = a->out && strcmp(a->out, "-") ? a->out : "the spec";
  strata_cluster_t *c = NULL;
  int rc, fd;
  snprintf(tmp, sizeof tmp, "%s/.strata-collect-XXXXXX", a->dir);
  if ((fd = mkstemp(tmp)) < 0)
    return strata_error(STRATA_EIO, "cannot create a file in folder '%s': %s",
                        a->dir, strerror(errno));
  close(fd);
  rc = strata_file_write_atomic(tmp, spec, strlen(spec));
  if (!rc) rc = strata_cluster_load(tmp, &c);
  unlink(tmp);
  strata_cluster_destroy(c);
  if (rc) rename_in_error(tmp, name);
  if (rc == STRATA_EUNSUPPORTED) {
    fprintf(st__stderr(), "strata topo collect: warning: %s\n",
            strata_last_error());
    strata_error_clear();
    return 0;
  }
  return rc;
}

static int add_gpu_name(args_t *a, const char *name) {
  char **v = strata_realloc(a->gpus, sizeof *v * (size_t)(a->ngpus + 1));
  if (!v) return strata_error(STRATA_ENOMEM, "out of memory");
  a->gpus = v;
  for (int i = 0; i < a->ngpus; i++)
    if (!strcmp(v[i], name)) return 0; /* each once */
  if (!(v[a->ngpus] = strata_strdup(name)))
    return strata_error(STRATA_ENOMEM, "out of memory");
  a->ngpus++;
  return 0;
}

/* The drain list's hosts go to the collector; its HOST:GPU lines are
 * kept aside for unhealthy.gpus. */
static int load_unhealthy(args_t *a, char ***names, int *n) {
  char *text = NULL;
  size_t len;
  int rc = strata_file_read(a->unhealthy, 64u << 20, &text, &len), k = 0;
  if (!rc) rc = strata_drain_list_parse(text, len, a->unhealthy, names, n);
  strata_free(text);
  for (int i = 0; i < *n; i++) { /* all of them, so that *n holds */
    char *x = (*names)[i];
    if (!strchr(x, ':')) {
      (*names)[k++] = x; /* hosts first, in order */
      continue;
    }
    if (!rc) rc = add_gpu_name(a, x);
    strata_free(x);
  }
  *n = k;
  a->co.unhealthy = (const char *const *)*names;
  a->co.n_unhealthy = rc ? 0 : k;
  return rc;
}

/* --keep-unhealthy-gpus SPEC: the GPUs that spec marks unhealthy. */
static int load_kept(args_t *a) {
  char *text = NULL;
  size_t len;
  cJSON *root = NULL, *g;
  int rc = strata_file_read(a->keep, 64u << 20, &text, &len);
  if (!rc) rc = st__json_parse(text, len, a->keep, &root);
  strata_free(text);
  g = rc ? NULL
         : cJSON_GetObjectItem(cJSON_GetObjectItem(root, "unhealthy"), "gpus");
  if (!rc && g && !cJSON_IsArray(g))
    rc = strata_error(STRATA_EBADINPUT,
                      "%s: unhealthy.gpus is not a list of \"NODE:INDEX\"",
                      a->keep);
  for (cJSON *e = g ? g->child : NULL; !rc && e; e = e->next)
    rc = cJSON_IsString(e) && strchr(e->valuestring, ':')
             ? add_gpu_name(a, e->valuestring)
             : strata_error(STRATA_EBADINPUT,
                            "%s: unhealthy.gpus holds something other than "
                            "\"NODE:INDEX\"",
                            a->keep);
  cJSON_Delete(root);
  if (rc) strata_error_prefix("--keep-unhealthy-gpus");
  return rc;
}

/* Whether HOST:GPU names a host collected (HOST.xml among the files). */
static int gpu_host_known(const args_t *a, const char *gpu) {
  size_t h = (size_t)(strrchr(gpu, ':') - gpu);
  for (int i = 0; i < a->nfiles; i++) {
    const char *b = strrchr(a->files[i], '/');
    b = b ? b + 1 : a->files[i];
    if (strlen(b) == h + 4 && !strncmp(b, gpu, h) && !strcmp(b + h, ".xml"))
      return 1;
  }
  return 0;
}

/* unhealthy.gpus into the spec, for the hosts collected; *ignored counts
 * the others. */
static int add_gpus(args_t *a, char **spec, int *ignored) {
  cJSON *root = NULL, *u, *arr;
  int rc = st__json_parse(*spec, strlen(*spec), "the spec", &root), bad = 0;
  if (rc) return rc;
  u = cJSON_GetObjectItem(root, "unhealthy");
  if (!u) u = cJSON_AddObjectToObject(root, "unhealthy");
  arr = u ? cJSON_AddArrayToObject(u, "gpus") : NULL;
  bad = !arr;
  for (int i = 0; !bad && i < a->ngpus; i++) {
    if (!gpu_host_known(a, a->gpus[i])) {
      (*ignored)++;
      continue;
    }
    cJSON *s = cJSON_CreateString(a->gpus[i]);
    bad = !s || !cJSON_AddItemToArray(arr, s);
  }
  char *out = bad ? NULL : st__json_print(root);
  cJSON_Delete(root);
  if (!out) return strata_error(STRATA_ENOMEM, "out of memory");
  strata_free(*spec);
  *spec = out;
  return 0;
}

static int run(args_t *a, char **spec) {
  char **bad = NULL;
  int nbad = 0, ignored = 0, gignored = 0, rc = 0;
  if (!a->nfiles) rc = add_local(a);
  if (!rc && a->unhealthy) rc = load_unhealthy(a, &bad, &nbad);
  if (!rc && a->keep) rc = load_kept(a);
  if (!rc)
    rc = strata_topo_collect((const char *const *)a->files, a->nfiles, &a->co,
                             spec, &ignored);
  if (!rc && a->ngpus) rc = add_gpus(a, spec, &gignored);
  if (!rc) rc = check_spec(a, *spec);
  if (!rc && ignored)
    fprintf(st__stderr(),
            "strata topo collect: %d of the %d unhealthy hosts %s not among "
            "the %d collected (ignored)\n",
            ignored, nbad, ignored == 1 ? "is" : "are", a->nfiles);
  if (!rc && gignored)
    fprintf(st__stderr(),
            "strata topo collect: %d of the %d unhealthy GPUs %s on hosts "
            "not among the %d collected (ignored)\n",
            gignored, a->ngpus, gignored == 1 ? "is" : "are", a->nfiles);
  strata_names_free(bad, nbad);
  return rc;
}

int cli_topo_collect(int argc, char **argv) {
  const char *cmd = "topo collect";
  args_t a;
  char *spec = NULL;
  int first = 0, rc;
  memset(&a, 0, sizeof a);
  strata_collect_opts_init(&a.co);
  rc = cli_opts_parse(&opt_spec, argc, argv, &a, &first);
  if (rc) return rc < 0 ? CLI_OK : rc;
  if (!(a.dir = dir_of(a.out))) rc = strata_error(STRATA_ENOMEM, "oom");
  a.co.spec_dir = a.dir;
  for (int i = first; i < argc && !rc; i++)
    rc = add_operand(&a, argv[i]);
  if (!rc) rc = run(&a, &spec);
  rc =
      rc ? cli_fail(cmd, rc) : cli_write_output(cmd, a.out, spec, strlen(spec));
  strata_free(spec);
  strata_names_free(a.files, a.nfiles);
  strata_names_free(a.gpus, a.ngpus);
  strata_free(a.dir);
  return rc;
}
