/*
 * stageargs.h - options shared by `strata stage`, `strata compare` (and
 * the model options of other commands): the model, the mesh, the cost
 * model's knobs.
 */
#ifndef STRATA_CLI_STAGEARGS_H
#define STRATA_CLI_STAGEARGS_H

#include "cli/cli.h"

typedef struct {
  const char *model;
  strata_gen_opts_t gen; /* overrides of the preset (0 / -1 = keep) */
  int devices;
  int mesh0, mesh1; /* --mesh AxB */
  int layers;       /* --stage-layers; 0: whole model */
  int with_embedding, with_head;
  const char *cluster;
  const char *export_lp;
  int json;
  strata_stage_opts_t so;
  double memory_bytes; /* --memory-gib; 0: the cluster's */
} cli_stage_args_t;

/* Parse argv into a; `cmd` ("stage" or "compare") names the command for
 * messages and help (usage, then the options, then tail); returns 0,
 * CLI_USAGE after a message, or -1 when --help was printed (exit 0). */
int cli_stage_args_parse(const char *cmd, int argc, char **argv,
                         cli_stage_args_t *a, const char *usage,
                         const char *tail);
/* Load the model, set up the mesh (from --cluster when given). */
int cli_stage_setup(const char *cmd, cli_stage_args_t *a, strata_graph_t **g);

#endif
