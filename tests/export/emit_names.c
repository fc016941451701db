/*
 * emit_names.c - the property test's generator: hostile names through
 * every export.  For each plan file given, it writes every export that the
 * plan allows once with a benign model and cluster name and plan source
 * ("benign"), then N times with names drawn from shell, Python, TOML, JSON
 * and HTML metacharacters, newlines, escapes, Unicode and invalid UTF-8,
 * set in memory past every check (the writers must hold on their own).
 * check_names.py parses each back with what reads it and compares it with
 * the benign one.  A second pass sets the op names, strategies and
 * placements of the plan's stages to such strings (outputs must still
 * parse).  Last, hostile node names in a device map: the hostfile export
 * must refuse every name that is not an RFC 1123 host name.
 *
 * Usage: emit_names OUTDIR N SEED PLAN...
 * Files: OUTDIR/<plan>.<export>.<i>.<ext> and names.json ({i: bytes as
 * a list of ints}); exit 0, or 1 with a message on stderr.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/text.h"
#include "strata/strata.h"

static const char *const pieces[] = {"$(touch PWNED)",
                                     "`id>PWNED`",
                                     "'",
                                     "\"",
                                     "\"\"\"",
                                     "'''",
                                     "\\",
                                     "\\\"",
                                     "\n",
                                     "\r",
                                     "\t",
                                     "\n[job]\ndump_folder = \"/tmp\"\n",
                                     "#",
                                     ";",
                                     "|",
                                     "&",
                                     ">",
                                     "<",
                                     "${HOME}",
                                     "\x1b[2J",
                                     "</script><script>alert(1)</script>",
                                     "<!--",
                                     "-->",
                                     "]]>",
                                     "&amp;",
                                     "\xc3\xa9",
                                     "\xe6\x97\xa5\xe6\x9c\xac",
                                     "\xf0\x9f\x98\x80",
                                     "\xff",
                                     "\xc0\xaf",
                                     "\xe2\x80\xa8",
                                     "\x7f",
                                     "\xc2\x85",
                                     "{{x}}",
                                     "%s%n",
                                     " ",
                                     "..",
                                     "/",
                                     "\n import os; os.system('id')",
                                     "\\N{BULLET}",
                                     "\\x41",
                                     "\\u0041",
                                     "\x0c",
                                     "\x01",
                                     "slots=8\nevil"};
#define N_PIECES (sizeof pieces / sizeof pieces[0])

static uint64_t rng;
static unsigned next_rand(void) {
  rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
  return (unsigned)(rng >> 11);
}

static void hostile(char *buf, size_t size) {
  size_t n = 0;
  int parts = 1 + (int)(next_rand() % 6);
  buf[0] = '\0';
  for (int i = 0; i < parts; i++) {
    const char *s = pieces[next_rand() % N_PIECES];
    char c[2] = {(char)(0x21 + next_rand() % 94), 0};
    if (next_rand() % 3 == 0) s = c;
    size_t k = strlen(s);
    if (n + k + 1 > size) break;
    memcpy(buf + n, s, k + 1);
    n += k;
  }
}

static int write_file(const char *dir, const char *plan, const char *what,
                      int i, const char *ext, const char *text) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s.%s.%d.%s", dir, plan, what, i, ext);
  FILE *f = fopen(path, "wb");
  if (!f || fputs(text, f) < 0 || fclose(f)) {
    fprintf(stderr, "emit_names: cannot write %s\n", path);
    return 1;
  }
  return 0;
}

typedef int (*export_fn)(const strata_plan_t *, const strata_export_opts_t *,
                         char **);
static int x_megatron(const strata_plan_t *p, const strata_export_opts_t *o,
                      char **t) {
  (void)o;
  return strata_export_megatron(p, t);
}
static int x_deepspeed(const strata_plan_t *p, const strata_export_opts_t *o,
                       char **t) {
  (void)o;
  return strata_export_deepspeed(p, t);
}
static int x_topology(const strata_plan_t *p, const strata_export_opts_t *o,
                      char **t) {
  (void)o;
  return strata_export_deepspeed_topology(p, t);
}
static int x_titan(const strata_plan_t *p, const strata_export_opts_t *o,
                   char **t) {
  (void)o;
  return strata_export_torchtitan(p, t);
}
static int x_timeline(const strata_plan_t *p, const strata_export_opts_t *o,
                      char **t) {
  (void)o;
  return strata_export_timeline(p, t);
}

static const struct {
  const char *name, *ext;
  export_fn fn;
} exports[] = {
    {"megatron", "args", x_megatron},
    {"launch", "sh", strata_export_megatron_launch},
    {"deepspeed", "json", x_deepspeed},
    {"topology", "py", x_topology},
    {"torch", "py", strata_export_torch},
    {"torchtitan", "toml", x_titan},
    {"timeline", "json", x_timeline},
    {"html", "html", strata_export_html},
};
#define N_EXPORTS (sizeof exports / sizeof exports[0])

/* Every export of p that its benign form allows, as file index i. */
static int emit_all(const strata_plan_t *p, const strata_export_opts_t *o,
                    const char *dir, const char *plan, int i,
                    const int *allowed) {
  for (size_t e = 0; e < N_EXPORTS; e++) {
    char *text = NULL;
    if (!allowed[e]) continue;
    int rc = exports[e].fn(p, o, &text);
    if (rc) {
      fprintf(stderr,
              "emit_names: %s %s %d: refused (%s) where the benign "
              "plan is not\n",
              plan, exports[e].name, i, strata_last_error());
      return 1;
    }
    rc = write_file(dir, plan, exports[e].name, i, exports[e].ext, text);
    strata_free(text);
    if (rc) return rc;
  }
  return 0;
}

static void set_names(strata_plan_t *p, const char *model,
                      const char *cluster) {
  strata_free(p->model);
  strata_free(p->cluster);
  p->model = strata_strdup(model);
  p->cluster = strata_strdup(cluster);
}

/* Op names, strategies and placements of every stage set to hostile
 * strings: the outputs must still parse (not compared). */
static int emit_ops(strata_plan_t *p, strata_export_opts_t *o, const char *dir,
                    const char *plan, const int *allowed) {
  char buf[256];
  for (int s = 0; s < p->n_stages; s++) {
    strata_stage_result_t *r = p->stages[s].result;
    for (int i = 0; r && i < r->n_ops; i++) {
      hostile(buf, sizeof buf);
      if (r->ops[i].name) {
        strata_free(r->ops[i].name);
        r->ops[i].name = strata_strdup(buf);
      }
      hostile(buf, sizeof buf);
      strata_free(r->ops[i].placement);
      r->ops[i].placement = strata_strdup(buf);
    }
  }
  /* A refusal is fine here (the torch map finds no module for a renamed
   * op); what is written must parse. */
  for (size_t e = 0; e < N_EXPORTS; e++) {
    char *text = NULL;
    if (!allowed[e] || exports[e].fn(p, o, &text)) continue;
    int rc =
        write_file(dir, plan, exports[e].name, 100000, exports[e].ext, text);
    strata_free(text);
    if (rc) return rc;
  }
  return 0;
}

static int one_plan(const char *path, const char *dir, int n, FILE *names) {
  strata_plan_t *p = NULL;
  strata_export_opts_t o;
  int allowed[N_EXPORTS], rc;
  const char *base = strrchr(path, '/');
  char plan[256], buf[256], cl[256], src[256];
  snprintf(plan, sizeof plan, "%s", base ? base + 1 : path);
  if (strchr(plan, '.')) *strchr(plan, '.') = '\0';
  if ((rc = strata_plan_load(path, &p))) {
    fprintf(stderr, "emit_names: %s\n", strata_last_error());
    return 1;
  }
  strata_export_opts_init(&o);
  o.gpus_per_node = 8;
  o.source = "benign";
  set_names(p, "benign", "benign");
  for (size_t e = 0; e < N_EXPORTS; e++) {
    char *text = NULL;
    allowed[e] = !exports[e].fn(p, &o, &text);
    if (allowed[e])
      rc |= write_file(dir, plan, exports[e].name, 0, exports[e].ext, text);
    strata_free(text);
  }
  for (int i = 1; i <= n && !rc; i++) {
    hostile(buf, sizeof buf);
    hostile(cl, sizeof cl);
    hostile(src, sizeof src);
    set_names(p, buf, cl);
    o.source = src;
    fprintf(names, "%s\"%s.%d\": [", i > 1 || ftell(names) > 2 ? ", " : "",
            plan, i);
    for (const char *s = buf; *s; s++)
      fprintf(names, "%s%d", s > buf ? ", " : "", (unsigned char)*s);
    fputs("]", names);
    rc = emit_all(p, &o, dir, plan, i, allowed);
  }
  o.source = "benign";
  set_names(p, "benign", "benign");
  if (!rc) rc = emit_ops(p, &o, dir, plan, allowed);
  strata_plan_destroy(p);
  return rc;
}

/* Hostile node names in a device map: refused unless a host name. */
static int hostfiles(int n) {
  strata_cluster_t *c = NULL;
  strata_plan_t *p = NULL;
  strata_device_map_t *m = NULL;
  strata_graph_t *g = NULL;
  strata_gen_opts_t ov;
  strata_plan_opts_t po;
  char buf[256], path_name[32];
  int rc, bad = 0;
  strata_gen_opts_keep(&ov);
  ov.layers = 2, ov.hidden = 256, ov.heads = 4, ov.seq = 128, ov.vocab = 1000;
  strata_plan_opts_init(&po);
  po.global_batch = 32, po.quiet = 1;
  if ((rc = strata_model_load("gpt", &ov, &g)) ||
      (rc = strata_cluster_load("dgx-h100:2", &c)) ||
      (rc = strata_pipeline_plan(g, c, &po, &p)) ||
      (rc = strata_device_map(p, c, &m))) {
    fprintf(stderr, "emit_names: %s\n", strata_last_error());
    bad = 1;
  }
  for (int i = 0; !bad && i < n; i++) {
    char *text = NULL;
    hostile(buf, sizeof buf);
    if (i % 4 == 0) /* now and then a name that is a host name */
      for (int k = 0; k < 1 + (int)(next_rand() % 20); k++)
        buf[k] = "ab-.0z9"[next_rand() % 7], buf[k + 1] = '\0';
    /* One used node gets the name (an unused one is only named in a
     * comment). */
    int used = 0, target = -1;
    for (int k = 0; k < m->n_nodes; k++)
      if (m->nodes[k].node_rank >= 0 && used++ == i % m->nodes_used) target = k;
    for (int k = 0; k < m->n_nodes; k++) {
      strata_free(m->nodes[k].name);
      snprintf(path_name, sizeof path_name, "node%d", k);
      m->nodes[k].name = strata_strdup(k == target ? buf : path_name);
    }
    rc = strata_export_hostfile(m, (strata_hostfile_format_t)(i % 3), buf,
                                &text);
    if (!rc == !!st__hostname_valid(buf)) {
      strata_free(text);
      continue;
    }
    fprintf(stderr, "emit_names: hostfile %s a node named '%s'\n",
            rc ? "refused" : "wrote", buf);
    bad = 1;
    strata_free(text);
  }
  strata_device_map_destroy(m);
  strata_plan_destroy(p);
  strata_cluster_destroy(c);
  strata_graph_destroy(g);
  return bad;
}

int main(int argc, char **argv) {
  if (argc < 5) {
    fprintf(stderr, "usage: emit_names OUTDIR N SEED PLAN...\n");
    return 2;
  }
  const char *dir = argv[1];
  int n = atoi(argv[2]), rc = 0;
  rng = strtoull(argv[3], NULL, 10) | 1;
  char path[4096];
  strata_init();
  snprintf(path, sizeof path, "%s/names.json", dir);
  FILE *names = fopen(path, "w");
  if (!names) return 1;
  fputs("{", names);
  for (int a = 4; a < argc && !rc; a++)
    rc = one_plan(argv[a], dir, n, names);
  fputs("}\n", names);
  if (fclose(names)) rc = 1;
  return rc || hostfiles(4 * n) ? 1 : 0;
}
