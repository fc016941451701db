/*
 * cmd_plan.c - `strata plan` (not yet implemented).
 */
#include "cli/cli.h"

int cli_cmd_plan(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "strata plan: not implemented yet\n");
  return CLI_INTERNAL;
}
