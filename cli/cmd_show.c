/*
 * cmd_show.c - `strata show` (not yet implemented).
 */
#include "cli/cli.h"

int cli_cmd_show(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "strata show: not implemented yet\n");
  return CLI_INTERNAL;
}
