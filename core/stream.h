/*
 * stream.h - where Strata's output and messages go.  The command-line tool
 * writes to the process's standard output and standard error; a caller
 * that runs a command inside its own process (strata_command_run, the
 * Python package) redirects both into buffers for the length of the call.
 * Every write that stands for "standard output" or "standard error" goes
 * through these two functions, never through stdout or stderr directly.
 */
#ifndef STRATA_CORE_STREAM_H
#define STRATA_CORE_STREAM_H

#include <stdio.h>

/* The stream standing for standard output (stdout unless redirected). */
FILE *st__stdout(void);
/* The stream standing for standard error (stderr unless redirected). */
FILE *st__stderr(void);
/* Redirect both (NULL restores the process's own).  The caller serialises
 * redirections: strata_command_run holds a lock for the call. */
void st__set_streams(FILE *out, FILE *err);
/* Whether the standard-error stream is a terminal (never when redirected). */
int st__stderr_is_tty(void);

#endif
