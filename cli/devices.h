/*
 * devices.h - the cluster a plan runs on and its device map, shared by
 * `strata show` and `strata export hostfile` (cli/devices.c).
 */
#ifndef STRATA_CLI_DEVICES_H
#define STRATA_CLI_DEVICES_H

#include "cli/cli.h"

/* The cluster given (--cluster), else the one the plan names when that is
 * a preset (no file is opened for a name a plan holds); an error says
 * which could not be had and asks for --cluster. */
int cli_plan_cluster(const strata_plan_t *p, const char *given,
                     strata_cluster_t **c);
/* The plan's device map on that cluster. */
int cli_device_map(const strata_plan_t *p, const char *given,
                   strata_device_map_t **m);
/* Append the devices to a plan's summary or JSON text (*text replaced).
 * Without `given`, a cluster that cannot be read or a plan that does not
 * fit it becomes a note in the output, not an error. */
int cli_show_devices(const strata_plan_t *p, const char *given, int json,
                     char **text);

#endif
