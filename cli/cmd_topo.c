/*
 * cmd_topo.c - `strata topo` (not yet implemented).
 */
#include "cli/cli.h"

int cli_cmd_topo(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "strata topo: not implemented yet\n");
  return CLI_INTERNAL;
}
