/*
 * cmd_diff.c - `strata diff` (not yet implemented).
 */
#include "cli/cli.h"

int cli_cmd_diff(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "strata diff: not implemented yet\n");
  return CLI_INTERNAL;
}
