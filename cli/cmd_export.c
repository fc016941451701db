/*
 * cmd_export.c - `strata export` (not yet implemented).
 */
#include "cli/cli.h"

int cli_cmd_export(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "strata export: not implemented yet\n");
  return CLI_INTERNAL;
}
