/*
 * strata.h - the whole public API of the Strata library.  The `strata`
 * commands run in-process (strata_command_run) are the CLI's, in their
 * own header (strata/command.h) and library (libstrata_cli).
 */
#ifndef STRATA_H
#define STRATA_H

#include "strata/core.h"
#include "strata/traces.h"
#include "strata/topo.h"
#include "strata/intraop.h"
#include "strata/pipeline.h"
#include "strata/merge.h"

#endif
