/*
 * command.h - the `strata` commands, run inside the caller's process:
 * the CLI's library (libstrata_cli, with the whole library in it), not
 * the core library's: strata.h does not include this header, and
 * libstrata, strata.pc and find_package(Strata) do not carry the CLI.
 *
 * strata_command_run() takes the argument vector of the `strata` program
 * (argv[0] is the program's name and is not read) and runs it exactly as
 * the program would, with its options, checks, messages and exit codes
 * (docs/cli.md), except that what the command writes to standard output
 * and standard error is returned in two buffers.  This is how the Python
 * package (docs/python.md) plans, estimates and exports: one table of
 * options, the CLI's, and the same bytes as the program prints.
 *
 * Calls are serialised: a second caller waits for the first to finish
 * (the commands share the process's output streams, option parser and
 * interrupt handler).  `strata plan` takes SIGINT for the length of the
 * call and restores the caller's handler after it; an interrupted plan
 * returns 130 and writes nothing.
 */
#ifndef STRATA_COMMAND_H
#define STRATA_COMMAND_H

#include <stddef.h>

#include "strata/core.h" /* strata_free, strata_version */

#ifdef __cplusplus
extern "C" {
#endif

/* Run one command.  out and err (each may be NULL to discard it) receive
 * NUL-terminated buffers to free with strata_free(), their lengths in
 * out_len / err_len (may be NULL).  Returns the exit code: 0 ok, 1 usage,
 * 2 bad input, 3 infeasible (nothing fits), 4 internal error, 130
 * interrupted; -1 (with *out and *err NULL) only if the buffers could not
 * be made. */
int strata_command_run(int argc, const char *const *argv, char **out,
                       size_t *out_len, char **err, size_t *err_len);

#ifdef __cplusplus
}
#endif

#endif
