/* placeholder until the module has sources */
typedef int strata_traces_placeholder_t;
