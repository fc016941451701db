/*
 * cmd_stage.c - `strata stage` (not yet implemented).
 */
#include "cli/cli.h"

int cli_cmd_stage(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "strata stage: not implemented yet\n");
  return CLI_INTERNAL;
}
