/*
 * run.c - `strata <command> [options]`: find the command, hand it argv.
 * Each command parses its options from its own table (cli/opts.h), which
 * also gives its --help; results go to standard output, messages to
 * standard error (core/stream.h: the process's own for the `strata`
 * program, buffers for strata_command_run).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "core/stream.h"
#include "core/text.h"

static const cli_command_t commands[] = {
    {"trace", "generate, inspect and convert model traces", cli_cmd_trace},
    {"topo", "show a node's or a cluster's topology", cli_cmd_topo},
    {"stage", "solve one pipeline stage's strategy ILP", cli_cmd_stage},
    {"compare", "compare objectives on one stage", cli_cmd_compare},
    {"plan", "plan a model on a cluster", cli_cmd_plan},
    {"fleet", "split a cluster among several jobs and plan each",
     cli_cmd_fleet},
    {"show", "print a plan file", cli_cmd_show},
    {"diff", "compare two plan files", cli_cmd_diff},
    {"export", "export a plan", cli_cmd_export},
    {"estimate", "memory and time of a given configuration", cli_cmd_estimate},
    {"calibrate", "fit the cost model to measured runs", cli_cmd_calibrate},
};
#define N_COMMANDS (sizeof commands / sizeof commands[0])

/* One line of the list; export's names every target from its table. */
static void print_command(FILE *f, const cli_command_t *c) {
  char targets[256];
  if (c->run != cli_cmd_export) {
    fprintf(f, "  %-10s %s\n", c->name, c->summary);
    return;
  }
  cli_export_target_names(targets, sizeof targets);
  fprintf(f, "  %-10s %s (%s)\n", c->name, c->summary, targets);
}

static void usage(FILE *f) {
  fprintf(f,
          "Usage: strata <command> [options]\n"
          "\n"
          "Strata plans how to train a large model on a GPU cluster: pipeline\n"
          "stages, tensor/data parallelism and per-operator strategies chosen\n"
          "to minimise memory redundancy + alpha * communication.\n"
          "\n"
          "Commands:\n");
  for (size_t i = 0; i < N_COMMANDS; i++)
    print_command(f, &commands[i]);
  fprintf(f,
          "\n"
          "Options:\n"
          "  -h, --help     this help\n"
          "  -V, --version  print the version\n"
          "\n"
          "'strata <command> --help' (or 'strata help <command>') describes "
          "a command.\n"
          "A model is a preset, a family, a trace file or a Hugging Face\n"
          "config.json (docs/import.md).  Exit codes: 0 ok, 1 usage, 2 bad\n"
          "input, 3 infeasible, 4 internal error, 130 interrupted (Ctrl-C).\n");
}

/* A word that is no command, with the command it was meant to be when
 * one is near. */
static int unknown_command(const char *who, const char *word) {
  const char *names[N_COMMANDS + 1], *near;
  char shown[96];
  for (size_t i = 0; i < N_COMMANDS; i++)
    names[i] = commands[i].name;
  names[N_COMMANDS] = NULL;
  near = st__did_you_mean(word, names);
  fprintf(st__stderr(),
          "%s: unknown command '%s'%s%s%s\nTry 'strata --help'.\n", who,
          st__plain(word, shown, sizeof shown), near ? "; did you mean '" : "",
          near ? near : "", near ? "'?" : "");
  return CLI_USAGE;
}

int cli_main(int argc, char **argv) {
  if (argc < 2) {
    usage(st__stderr());
    return CLI_USAGE;
  }
  if (!strcmp(argv[1], "help") && argc >= 3 && argc <= 4) {
    /* strata help COMMAND [SUBCOMMAND]: COMMAND [SUBCOMMAND] --help */
    for (size_t i = 0; i < N_COMMANDS; i++)
      if (!strcmp(argv[2], commands[i].name)) {
        char *help_argv[] = {argv[2], argv[3], "--help", NULL};
        if (argc == 3) help_argv[1] = "--help", help_argv[2] = NULL;
        return commands[i].run(argc - 1, help_argv);
      }
    return unknown_command("strata help", argv[2]);
  }
  if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") ||
      (!strcmp(argv[1], "help") && argc == 2)) {
    usage(st__stdout());
    return CLI_OK;
  }
  if (!strcmp(argv[1], "help")) {
    fprintf(st__stderr(), "strata help: a command and a subcommand at most\n");
    return CLI_USAGE;
  }
  if (!strcmp(argv[1], "-V") || !strcmp(argv[1], "--version")) {
    fprintf(st__stdout(), "strata %s\n", STRATA_VERSION);
    return CLI_OK;
  }
  for (size_t i = 0; i < N_COMMANDS; i++)
    if (!strcmp(argv[1], commands[i].name))
      return commands[i].run(argc - 1, argv + 1);
  return unknown_command("strata", argv[1]);
}
