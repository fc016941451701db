/*
 * cmd_trace.c - `strata trace` (not yet implemented).
 */
#include "cli/cli.h"

int cli_cmd_trace(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "strata trace: not implemented yet\n");
  return CLI_INTERNAL;
}
