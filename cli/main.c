/*
 * main.c - the `strata` program: the library's commands (cli/run.c) on the
 * process's own standard output and error.  STRATA_LOG=info|debug shows
 * more of the library's messages.
 */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

int main(int argc, char **argv) {
  strata_init();
  const char *lv = getenv("STRATA_LOG");
  if (lv && !strcmp(lv, "debug"))
    strata_log_set_level(STRATA_LOG_DEBUG);
  else if (lv && !strcmp(lv, "info"))
    strata_log_set_level(STRATA_LOG_INFO);
  return cli_main(argc, argv);
}
