/* placeholder until the module has sources */
typedef int strata_merge_placeholder_t;
