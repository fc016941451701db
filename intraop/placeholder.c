/* placeholder until the module has sources */
typedef int strata_intraop_placeholder_t;
