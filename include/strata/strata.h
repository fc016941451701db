/*
 * strata.h - the whole public API of Strata.
 */
#ifndef STRATA_H
#define STRATA_H

#include "strata/core.h"
#include "strata/traces.h"
#include "strata/topo.h"
#include "strata/intraop.h"
#include "strata/pipeline.h"
#include "strata/merge.h"
#include "strata/command.h"

#endif
