/*
 * opts.c - the option-table parser every command uses (opts.h).  From a
 * command's rows it builds the getopt_long array and short-option string,
 * runs getopt_long, refuses what the rows say to refuse (a value given
 * twice, a flag with its "no-" opposite, an option this mode does not
 * take), warns about deprecated spellings, stores each value where its
 * row says, and prints the option list of the help text from the same
 * rows.  Nothing is allocated: the arrays live on the stack, sized for
 * the largest table (plan's).
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli/opts.h"
#include "core/stream.h"
#include "core/text.h"

enum { MAX_ROWS = 128, VAL_BASE = 1000, VAL_HELP = 999 };

typedef struct {
  const cli_opt_t *o;
  size_t base; /* offset of the row's included table */
  int canon;   /* the row a deprecated spelling stands for (else itself) */
} row_t;

typedef struct {
  row_t rows[MAX_ROWS];
  int n;
  struct option lo[2 * MAX_ROWS + 2];
  char shorts[2 * MAX_ROWS + 4];
} table_t;

/* Rows of t (and of the tables it includes), in order; -1 when they do
 * not fit (a programming error, reported once). */
static int flatten(const cli_opt_t *t, size_t base, table_t *x) {
  for (; t->kind != CLI_OPT_END; t++) {
    if (t->kind == CLI_OPT_INCLUDE) {
      if (flatten(t->sub, base + t->off, x)) return -1;
      continue;
    }
    if (x->n == MAX_ROWS) return -1;
    x->rows[x->n].o = t;
    x->rows[x->n].base = base;
    x->rows[x->n].canon = x->n;
    x->n++;
  }
  return 0;
}

static int find_row(const table_t *x, const char *name) {
  for (int i = 0; i < x->n; i++)
    if (x->rows[i].o->name && !strcmp(x->rows[i].o->name, name)) return i;
  return -1;
}

/* has_arg: 0 none, 1 required, 2 optional */
static void add_entry(table_t *x, int *k, const char *name, int has_arg,
                      int val) {
  x->lo[*k].name = name;
  x->lo[*k].has_arg = has_arg == 2   ? optional_argument
                      : has_arg == 1 ? required_argument
                                     : no_argument;
  x->lo[*k].flag = NULL;
  x->lo[*k].val = val;
  (*k)++;
}

/* The getopt_long entries: NAME (val VAL_BASE + 2i), no-NAME for a toggle
 * (+1), help; a short letter maps back to its row through row_of(). */
static int build(const char *cmd, const cli_opt_t *t, table_t *x) {
  static char neg[MAX_ROWS][64];
  int k = 0, s = 0;
  x->n = 0;
  if (flatten(t, 0, x))
    return cli_usage_error(cmd, "internal: more than %d options", MAX_ROWS);
  for (int i = 0; i < x->n; i++) {
    const cli_opt_t *o = x->rows[i].o;
    if (!o->name) continue;
    if (o->alias_of && (x->rows[i].canon = find_row(x, o->alias_of)) < 0)
      return cli_usage_error(cmd, "internal: --%s stands for unknown --%s",
                             o->name, o->alias_of);
    add_entry(x, &k, o->name, o->dflt ? 2 : o->arg != NULL, VAL_BASE + 2 * i);
    if (o->kind == CLI_OPT_TOGGLE) {
      snprintf(neg[i], sizeof neg[i], "no-%s", o->name);
      add_entry(x, &k, neg[i], 0, VAL_BASE + 2 * i + 1);
    }
    if (o->short_name) {
      x->shorts[s++] = (char)o->short_name;
      if (o->arg) x->shorts[s++] = ':';
    }
  }
  add_entry(x, &k, "help", 0, VAL_HELP);
  memset(&x->lo[k], 0, sizeof x->lo[k]);
  memcpy(x->shorts + s, "h", 2);
  return 0;
}

/* The row of getopt_long's answer c (*neg: its "no-" form), or -1. */
static int row_of(const table_t *x, int c, int *neg) {
  *neg = 0;
  if (c >= VAL_BASE) {
    *neg = (c - VAL_BASE) % 2;
    return (c - VAL_BASE) / 2;
  }
  for (int i = 0; i < x->n; i++)
    if (x->rows[i].o->short_name == c) return i;
  return -1;
}

typedef struct {
  const char *value[MAX_ROWS]; /* per canonical row: the value given */
  int spelling[MAX_ROWS];      /* the row given, 2i + neg, +1 */
} seen_t;

static const char *spelled(const table_t *x, int v, char *buf, size_t n) {
  snprintf(buf, n, "%s%s", v % 2 ? "no-" : "", x->rows[v / 2].o->name);
  return buf;
}

/* A value may be given once: a second would silently win, and scripts
 * that build command lines hide such slips.  A flag may repeat (--json
 * twice means --json), but not with its "no-" opposite. */
static int check_repeat(const char *cmd, const table_t *x, seen_t *z, int i,
                        int neg, const char *arg) {
  int c = x->rows[i].canon, was = z->spelling[c] - 1;
  char b1[80], b2[80];
  if (was >= 0 && x->rows[i].o->arg)
    return cli_usage_error(cmd,
                           "--%s is given twice ('%s', then '%s'); give "
                           "it once",
                           x->rows[c].o->name, z->value[c], arg);
  if (was >= 0 && was % 2 != neg)
    return cli_usage_error(cmd,
                           "--%s and --%s contradict each other; give "
                           "one",
                           spelled(x, was, b1, sizeof b1),
                           spelled(x, 2 * i + neg, b2, sizeof b2));
  z->value[c] = arg ? arg : "";
  z->spelling[c] = 2 * i + neg + 1;
  return 0;
}

static int store(const cli_optspec_t *s, const row_t *r, int neg,
                 const char *arg, void *args) {
  const cli_opt_t *o = r->o;
  char *p = (char *)args + r->base + o->off, name[80];
  long v;
  double d;
  int rc = 0;
  snprintf(name, sizeof name, "--%s", o->name);
  switch (o->kind) {
  case CLI_OPT_FLAG:
    *(int *)p = (int)o->lo;
    return 0;
  case CLI_OPT_TOGGLE:
    *(int *)p = !neg;
    return 0;
  case CLI_OPT_STR:
    *(const char **)p = arg;
    return 0;
  case CLI_OPT_INT:
    if (!(rc = cli_parse_int(s->cmd, name, arg, (long)o->lo, (long)o->hi, &v)))
      *(int *)p = (int)v;
    return rc;
  case CLI_OPT_DOUBLE:
    if (!(rc = cli_parse_double(s->cmd, name, arg, o->lo, o->hi, &d)))
      *(double *)p = d * (o->scale ? o->scale : 1);
    return rc;
  case CLI_OPT_PARSE:
    return o->parse(arg, (int *)p)
               ? cli_usage_error(s->cmd, "%s: %s", name, strata_last_error())
               : 0;
  default:
    return s->call(s->cmd, o->id, arg, args);
  }
}

/* A deprecated spelling keeps its meaning; the warning names the new one
 * (with the value converted when both are scaled numbers). */
static void warn_alias(const cli_optspec_t *s, const table_t *x, int i,
                       const char *arg) {
  const cli_opt_t *o = x->rows[i].o, *n = x->rows[x->rows[i].canon].o;
  fprintf(st__stderr(), "strata %s: warning: --%s is deprecated: ", s->cmd,
          o->name);
  if (o->kind == CLI_OPT_DOUBLE && n->kind == CLI_OPT_DOUBLE && arg)
    fprintf(st__stderr(), "--%s %s is --%s %.6g", o->name, arg, n->name,
            strtod(arg, NULL) * (o->scale ? o->scale : 1) /
                (n->scale ? n->scale : 1));
  else
    fprintf(st__stderr(), "give --%s", n->name);
  fprintf(st__stderr(), "%s%s%s\n", o->why ? " (" : "", o->why ? o->why : "",
          o->why ? ")" : "");
}

static int refuse_mode(const cli_optspec_t *s, const cli_opt_t *o) {
  return cli_usage_error(s->cmd, "--%s is not an option of strata %s: %s",
                         o->name, s->cmd, o->why ? o->why : "it ignores it");
}

/* One option getopt_long returned: checked, stored, warned about. */
static int take(const cli_optspec_t *s, const table_t *x, seen_t *z, int c,
                const char *arg, void *args) {
  int neg, i = row_of(x, c, &neg), rc;
  if (i < 0 || i >= x->n)
    return cli_usage_error(s->cmd, "internal: option %d", c);
  const cli_opt_t *o = x->rows[i].o;
  if (o->only && !(o->only & s->mode)) return refuse_mode(s, o);
  if ((rc = check_repeat(s->cmd, x, z, i, neg, arg))) return rc;
  if ((rc = store(s, &x->rows[i], neg, arg, args))) return rc;
  if (o->alias_of) warn_alias(s, x, i, arg);
  return 0;
}

/* getopt_long's value, or for a row whose value may be left out the next
 * word (taken from argv) unless it is an option, else the default. */
static const char *optional_value(const table_t *x, int c, int argc,
                                  char **argv) {
  int neg, i = row_of(x, c, &neg);
  if (optarg || i < 0 || i >= x->n || !x->rows[i].o->dflt) return optarg;
  if (optind < argc && argv[optind][0] != '-') return argv[optind++];
  return x->rows[i].o->dflt;
}

/* What getopt_long did not take: an unknown option, with the one of this
 * command it was meant to be when one is near (deprecated spellings are
 * never offered), or a known one without its value. */
static int unknown_option(const cli_optspec_t *s, const table_t *x,
                          const char *word) {
  const char *names[MAX_ROWS + 1];
  char name[64];
  int n = 0;
  size_t len = strcspn(word + (word[0] == '-') + (word[1] == '-'), "=");
  snprintf(name, sizeof name, "%.*s", (int)len,
           word + (word[0] == '-') + (word[1] == '-'));
  for (int i = 0; i < x->n; i++)
    if (x->rows[i].o->name && !x->rows[i].o->alias_of &&
        (!x->rows[i].o->only || (x->rows[i].o->only & s->mode)))
      names[n++] = x->rows[i].o->name;
  names[n] = NULL;
  const char *near = word[0] == '-' && word[1] == '-' && strcmp(word, "--")
                         ? st__did_you_mean(name, names)
                         : NULL;
  if (near && !strcmp(near, name)) near = NULL; /* known: its value lacks */
  return cli_usage_error(s->cmd, "unknown or incomplete option '%s'%s%s%s",
                         word, near ? "; did you mean --" : "",
                         near ? near : "", near ? "?" : "");
}

int cli_opts_parse(const cli_optspec_t *s, int argc, char **argv, void *args,
                   int *first) {
  static table_t x; /* the CLI parses one command line at a time */
  seen_t z;
  int c, rc;
  memset(&z, 0, sizeof z);
  if ((rc = build(s->cmd, s->opts, &x))) return rc;
  optind = 0; /* glibc: start afresh */
  opterr = 0;
  while ((c = getopt_long(argc, argv, x.shorts, x.lo, NULL)) != -1) {
    if (c == VAL_HELP || c == 'h') {
      cli_opts_help(s, st__stdout());
      return -1;
    }
    if (c == '?' || c == ':') return unknown_option(s, &x, argv[optind - 1]);
    if ((rc = take(s, &x, &z, c, optional_value(&x, c, argc, argv), args)))
      return rc;
  }
  if (!first && optind < argc)
    return cli_usage_error(s->cmd, "unexpected argument '%s'", argv[optind]);
  if (first) *first = optind;
  return 0;
}

const cli_opt_t *cli_opts_find(const cli_opt_t *t, const char *name) {
  for (; t->kind != CLI_OPT_END; t++) {
    const cli_opt_t *o =
        t->kind == CLI_OPT_INCLUDE ? cli_opts_find(t->sub, name) : NULL;
    if (o) return o;
    if (t->name && !strcmp(t->name, name)) return t;
  }
  return NULL;
}

/* "  -o, --output FILE", "  --[no-]json" */
static int left_of(const cli_opt_t *o, char *buf, size_t n) {
  char sh[8] = "";
  if (o->short_name) snprintf(sh, sizeof sh, "-%c, ", o->short_name);
  return snprintf(buf, n, "  %s--%s%s%s%s%s%s", sh,
                  o->kind == CLI_OPT_TOGGLE ? "[no-]" : "", o->name,
                  o->arg ? " " : "", o->dflt ? "[" : "", o->arg ? o->arg : "",
                  o->dflt ? "]" : "");
}

/* The help lines of one row: its left column, then its text, each
 * continuation line indented to the column. */
static void print_row(FILE *f, const cli_opt_t *o, int col) {
  char left[160];
  const char *h = o->help;
  int w = left_of(o, left, sizeof left);
  if (w > col - 1)
    fprintf(f, "%s\n%*s", left, col, "");
  else
    fprintf(f, "%-*s", col, left);
  for (const char *nl; (nl = strchr(h, '\n')); h = nl + 1)
    fprintf(f, "%.*s\n%*s", (int)(nl - h), h, col, "");
  fprintf(f, "%s\n", h);
}

static void print_rows(FILE *f, const cli_opt_t *t, unsigned mode, int col) {
  for (; t->kind != CLI_OPT_END; t++) {
    if (t->kind == CLI_OPT_INCLUDE)
      print_rows(f, t->sub, mode, col);
    else if (t->kind == CLI_OPT_HEADING)
      fprintf(f, "%s\n", t->help);
    else if (t->help && (!t->only || (t->only & mode)))
      print_row(f, t, col);
  }
}

void cli_opts_help(const cli_optspec_t *s, FILE *f) {
  static const cli_opt_t help_row = {.kind = CLI_OPT_FLAG,
                                     .name = "help",
                                     .short_name = 'h',
                                     .help = "this help"};
  int col = s->col ? s->col : 24;
  fputs(s->usage, f);
  print_rows(f, s->opts, s->mode, col);
  print_row(f, &help_row, col);
  if (s->tail) fputs(s->tail, f);
}

/* ---- the model options ---------------------------------------------- */

#define CLI_ARGS_T strata_gen_opts_t
#define SIZE_MAX_ ((double)(1L << 30)) /* as a plan file bounds sizes */

/* One meaning everywhere: --layers is the model's number of transformer
 * layers (blocks), whatever command takes it. */
const cli_opt_t cli_model_opts[] = {
    {CLI_INT("layers", layers, 1, SIZE_MAX_, "N",
             "transformer layers (blocks) of the model")},
    {CLI_INT("hidden", hidden, 1, SIZE_MAX_, "N", "hidden size")},
    {CLI_INT("heads", heads, 1, SIZE_MAX_, "N", "attention heads")},
    {CLI_INT("kv-heads", kv_heads, 1, SIZE_MAX_, "N",
             "key/value heads (grouped-query attention)")},
    {CLI_INT("ffn", ffn, 1, SIZE_MAX_, "N", "MLP inner size")},
    /* as a trace bounds it (traces/validate.c) */
    {CLI_INT("seq", seq, 1, 1 << 24, "N", "sequence length in tokens")},
    {CLI_INT("vocab", vocab, 1, SIZE_MAX_, "N", "vocabulary size")},
    {CLI_INT("head-dim", head_dim, 1, SIZE_MAX_, "N", "llama: head size")},
    {CLI_INT("window", window, 1, SIZE_MAX_, "N",
             "llama: sliding-window attention, in tokens")},
    {CLI_INT("experts", experts, 1, SIZE_MAX_, "N",
             "llama: routed experts (a mixture of experts)")},
    {CLI_INT("topk", topk, 1, SIZE_MAX_, "N", "llama: experts per token")},
    {CLI_INT("moe-ffn", moe_ffn, 1, SIZE_MAX_, "N",
             "llama: an expert's MLP inner size")},
    {CLI_DOUBLE("capacity-factor", capacity, 0.01, 1000, 0, "F",
                "llama: the experts' capacity factor")},
    {CLI_INT("mtp-layers", mtp_layers, 0, 16, "N",
             "llama: N multi-token prediction modules\n"
             "(DeepSeek-V3's; 0: none)")},
    {CLI_TOGGLE("flash-attention", flash_attention,
                "fused attention (default: the model's)")},
    {CLI_END}};
