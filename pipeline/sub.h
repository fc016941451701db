/*
 * sub.h - stage subproblems of the planner (internal to pipeline/): one
 * (layer count, prologue/epilogue, submesh, in-flight micro-batches,
 * options) combination, identified by a structural hash, solved once.
 */
#ifndef STRATA_PIPELINE_SUB_H
#define STRATA_PIPELINE_SUB_H

#include "strata/pipeline.h"

typedef struct {
  /* the question */
  const strata_graph_t *g;
  uint64_t graph_hash;
  strata_stage_opts_t so;
  uint64_t key;
  /* the answer */
  int err; /* 0, or the STRATA_E* code of a failed solve */
  char *errmsg;
  strata_stage_result_t *res;
  int from_cache;
  int cached;  /* stored in the cache by this run */
  int counted; /* counted among the ILPs solved */
  int paired;  /* solved with the job of another (pool.c) */
  int prio;    /* under a time limit, solved in ascending order (the
                  families likeliest to fit first: plan.c); 0: unranked */
} st__sub_t;

typedef struct {
  int n, cap;
  int requests; /* st__subset_get calls: subproblems before de-duplication */
  st__sub_t **v;
  /* open-addressing index key -> position */
  int *slot;
  int nslots;
} st__subset_t;

uint64_t st__graph_hash(const strata_graph_t *g);
uint64_t st__sub_key(uint64_t graph_hash, const strata_stage_opts_t *so);

void st__subset_init(st__subset_t *s);
void st__subset_free(st__subset_t *s);
/* The subproblem with this question, added if new (*out NULL on ENOMEM). */
int st__subset_get(st__subset_t *s, const strata_graph_t *g, uint64_t gh,
                   const strata_stage_opts_t *so, st__sub_t **out);

typedef struct st__cache st__cache_t;

/* A plan's progress on stderr (progress.c): silent in the plan's first
 * second, then one line rewritten in place on a terminal, a line every
 * few seconds on a file or pipe.  on 0: never (--quiet). */
typedef struct {
  int on, tty, shown;
  long lines;
  double t0, last;
  double best;    /* the least step any phase reported (INFINITY: none) */
  char where[64]; /* the node group being searched ("": the cluster) */
} st__progress_t;

void st__progress_init(st__progress_t *p, int on);
/* The node group the phases that follow work on (NULL: the cluster's). */
void st__progress_where(st__progress_t *p, const char *where);
/* The best step shown: the least of every step reported so far and best
 * (a phase's own), so that it never rises from one phase or group to the
 * next; INFINITY while none. p may be NULL. */
double st__progress_best(st__progress_t *p, double best);
/* phase's work done out of total, the best step so far and the bound no
 * plan beats (either INFINITY or NAN when not known); p may be NULL. */
void st__progress_note(st__progress_t *p, const char *phase, long done,
                       long total, double best, double bound);
/* The line st__progress_note prints, into buf: the phase, its work done,
 * the best step (or, before there is one, what the phase waits for), the
 * bound where one is known, the seconds since the start. */
void st__progress_line(char *buf, size_t size, const char *phase, long done,
                       long total, double best, double bound, double seconds);
/* Ends a line left open on a terminal. */
void st__progress_end(st__progress_t *p);
/* A plan the time limit cut short: its step and the bound no plan beats
 * (what the search had not ruled out), and the gap between them. */
void st__progress_gap(st__progress_t *p, double best, double bound);
double st__bound_kept(double best, double bound);

/* Solve every unsolved subproblem of s on libuv's pool (threads > 0 sizes
 * it), consulting the cache and keeping what is settled in it (written
 * when the run flushes it) when cache is set; prog (or NULL) hears of
 * the solves done. */
int st__solve_all(st__subset_t *s, int threads, st__cache_t *cache,
                  st__progress_t *prog, double deadline,
                  const volatile int *cancel, int *ilps, int *hits);
/* The same for the chosen plan's stages: none is dropped at end (> 0),
 * each gets what is left to it (a fraction of a second at least). */
int st__solve_all_by(st__subset_t *s, int threads, st__cache_t *cache,
                     st__progress_t *prog, double end,
                     const volatile int *cancel, int *ilps, int *hits);

/* Disk cache of stage results (cache.c): one file per folder, read once,
 * checksummed per entry, tagged with the result's layout.  open reads it
 * (a missing, damaged or foreign file gives an empty cache, with a note;
 * a FIFO, device or folder in place of the file or its lock, a warning
 * and no caching; only STRATA_ENOMEM fails); get decodes one entry and
 * checks what it holds (STRATA_ENOTFOUND, STRATA_ECORRUPT: dropped with a
 * warning, STRATA_ENOMEM); put keeps a new entry in memory; flush writes
 * them once per run, merged with what other runs wrote meanwhile,
 * atomically, under the lock (removing dead runs' temporary files);
 * close frees (NULL allowed).  Not thread-safe: use from one thread. */
int st__cache_open(const char *dir, st__cache_t **out);
int st__cache_get(st__cache_t *c, uint64_t key, strata_stage_result_t **out);
int st__cache_put(st__cache_t *c, uint64_t key, const strata_stage_result_t *r);
int st__cache_flush(st__cache_t *c);
void st__cache_close(st__cache_t *c);

#endif
