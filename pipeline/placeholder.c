/* placeholder until the module has sources */
typedef int strata_pipeline_placeholder_t;
