/*
 * opts.h - one table of options per command, as Redis builds its config
 * from one table: each row names an option (long name, short letter, its
 * value), says where the value goes and how it is checked, and carries
 * the option's help line.  The getopt_long array, the repeated-option
 * check, -h/--help and the option list of the help text are all made
 * from the same rows, so adding an option is one row (plus its handling
 * where a row cannot say it).
 *
 * A target is an offset into the command's argument struct (the macros
 * below take it from CLI_ARGS_T, which a file defines before its table);
 * CLI_OPT_INCLUDE splices another table whose offsets are relative to a
 * member (the model options, kept in a strata_gen_opts_t).  A deprecated
 * spelling is a row of its own with alias_of naming the row it stands for:
 * it keeps its old meaning (its own kind, range and scale), counts as that
 * option for the repeated-option check, and warns on stderr.
 */
#ifndef STRATA_CLI_OPTS_H
#define STRATA_CLI_OPTS_H

#include <stddef.h>
#include <stdio.h>

#include "cli/cli.h"

typedef enum {
  CLI_OPT_END = 0, /* ends a table */
  CLI_OPT_HEADING, /* help: a line of its own, no option */
  CLI_OPT_FLAG,    /* int target = (int)lo */
  CLI_OPT_TOGGLE,  /* --NAME: int target = 1; --no-NAME: 0 */
  CLI_OPT_STR,     /* const char * target = the value */
  CLI_OPT_INT,     /* int target = the value, an integer in [lo, hi] */
  CLI_OPT_DOUBLE,  /* double target = the value (in [lo, hi]) * scale */
  CLI_OPT_CALL,    /* the spec's call(id, value or NULL) */
  CLI_OPT_PARSE,   /* int target = parse(value): a name the row's reads */
  CLI_OPT_INCLUDE  /* the rows of sub, their offsets from off */
} cli_opt_kind_t;

typedef struct cli_opt {
  cli_opt_kind_t kind;
  const char *name; /* without "--" */
  int short_name;   /* 0: none */
  size_t off;
  double lo, hi, scale; /* scale 0 means 1 */
  int id;               /* CALL */
  const char *arg;      /* the value's name in the help; NULL: a flag */
  const char *help;     /* '\n' continues it; NULL: not listed */
  const char *alias_of; /* deprecated: the row this spelling stands for */
  unsigned only;        /* nonzero: the spec modes that take it */
  const char *why;      /* others refuse it, saying why */
  const struct cli_opt *sub;
  int (*parse)(const char *s, int *out); /* PARSE: 0, or an error */
  /* A value that may be left out (--NAME alone means --NAME dflt): the
   * next word is its value unless it begins with '-' (NULL: required). */
  const char *dflt;
} cli_opt_t;

typedef struct {
  const char *cmd; /* "topo collect": for messages */
  const cli_opt_t *opts;
  const char *usage; /* help before the option list */
  const char *tail;  /* help after it (may be NULL) */
  unsigned mode;     /* matched against each row's only */
  int col;           /* help column (0: 24) */
  int (*call)(const char *cmd, int id, const char *arg, void *args);
} cli_optspec_t;

/* Parse argv[1..] into args.  Operands are left in argv[*first..argc);
 * with first NULL an operand is a usage error.  An option with a value
 * given twice, a flag with its "no-" opposite, an unknown option and an
 * option the mode does not take are usage errors (message printed,
 * CLI_USAGE returned).  -h/--help prints the help and returns -1. */
int cli_opts_parse(const cli_optspec_t *s, int argc, char **argv, void *args,
                   int *first);
/* The row of t (or of a table it includes) named name, or NULL. */
const cli_opt_t *cli_opts_find(const cli_opt_t *t, const char *name);
/* The help: usage, the option list, tail. */
void cli_opts_help(const cli_optspec_t *s, FILE *f);

/* The model options of `trace gen` (and plan, estimate, trace info),
 * relative to a strata_gen_opts_t. */
extern const cli_opt_t cli_model_opts[];

/* Row makers: the fields of one row, written {CLI_INT(...)} and
 * followed by more designators where needed ({CLI_STR(...), .only = 1}).
 * CLI_ARGS_T is the argument struct, F a member path in it. */
#define CLI_O_(k, n, s, F, lo_, hi_, sc, a, h)                                 \
  .kind = k, .name = n, .short_name = s, .off = offsetof(CLI_ARGS_T, F),       \
  .lo = lo_, .hi = hi_, .scale = sc, .arg = a, .help = h
#define CLI_HEAD(h) .kind = CLI_OPT_HEADING, .help = h
#define CLI_FLAG(n, F, v, h) CLI_O_(CLI_OPT_FLAG, n, 0, F, v, 0, 0, NULL, h)
#define CLI_TOGGLE(n, F, h) CLI_O_(CLI_OPT_TOGGLE, n, 0, F, 0, 0, 0, NULL, h)
#define CLI_STR(n, s, F, a, h) CLI_O_(CLI_OPT_STR, n, s, F, 0, 0, 0, a, h)
#define CLI_INT(n, F, lo, hi, a, h)                                            \
  CLI_O_(CLI_OPT_INT, n, 0, F, lo, hi, 0, a, h)
#define CLI_DOUBLE(n, F, lo, hi, sc, a, h)                                     \
  CLI_O_(CLI_OPT_DOUBLE, n, 0, F, lo, hi, sc, a, h)
#define CLI_CALL(n, s, i, a, h)                                                \
  .kind = CLI_OPT_CALL, .name = n, .short_name = s, .id = i, .arg = a, .help = h
#define CLI_PARSE(n, F, fn, a, h)                                              \
  CLI_O_(CLI_OPT_PARSE, n, 0, F, 0, 0, 0, a, h), .parse = fn
#define CLI_INCLUDE(F, t)                                                      \
  .kind = CLI_OPT_INCLUDE, .off = offsetof(CLI_ARGS_T, F), .sub = t
#define CLI_END .kind = CLI_OPT_END

#define CLI_GIB (1024.0 * 1024.0 * 1024.0)
/* Why --memory-gb, the old spelling, warns. */
#define CLI_GB_WHY "10^9 bytes; memory options are in GiB, 2^30 bytes"

#endif
