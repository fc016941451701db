/*
 * cmd_compare.c - `strata compare` (not yet implemented).
 */
#include "cli/cli.h"

int cli_cmd_compare(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "strata compare: not implemented yet\n");
  return CLI_INTERNAL;
}
