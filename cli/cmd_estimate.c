/*
 * cmd_estimate.c - `strata estimate` (not yet implemented).
 */
#include "cli/cli.h"

int cli_cmd_estimate(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "strata estimate: not implemented yet\n");
  return CLI_INTERNAL;
}
