/* coordinator/coordinator_internal.h: PRIVATE to coordinator/ (the files of the rank-0 loop, coordinator.c);
 * not for use outside it. The run's state (its searches' side, the progress line) and the functions the loop's
 * files share. */
#ifndef MPT_COORDINATOR_INTERNAL_H
#define MPT_COORDINATOR_INTERNAL_H
#include <stdint.h>
#include "coordinator/coordinator.h"
#include "coordinator/cross.h"

/* a search's side of the run: its workers' room, what it has in flight, whether its strategy is exhausted */
typedef struct search_run {
  int64_t in_flight;
  int exhausted;
  int64_t *ids;        /* what its strategy proposed for them */
  int64_t done0;       /* its evaluations when the session started (the progress line's rate) */
  mpt_obs *warm;       /* resume: the block of logged observations being told (WARM_BLOCK) */
  int n_warm;
} search_run;

typedef struct coord_state {
  const mpt_coord_config *c;
  mpt_coord_result *r;   /* the run's totals (mpt_search_totals) */
  mpt_coord_search *S;   /* the searches: c->searches, or the one made of c's strategy and budget */
  int n;
  search_run *run;
  mpt_coord_search one;
  int *one_workers;
  mpt_cross cross;       /* the portability evaluations (c->cross with several searches; cross.n == 0: none) */
  unsigned char *finished; /* per search: SEARCH_FINISHED or SEARCH_OUT_OF_TIME, 0 while it goes on (check_stop) */
  int32_t warm_job;        /* the job whose log the warm start reads now */
  char classes[1536];      /* the classes' parts of the progress line */
  mpt_progress prog;
  double t0;       /* start of this session's run */
  double ask_since; /* start of the ask running now */
} coord_state;

enum { SEARCH_FINISHED = 1, SEARCH_OUT_OF_TIME = 2 }; /* coord_state.finished: by its budget or space; its time */

static inline int clamp_lookahead(int l) { return l < 0 ? 0 : l > MPT_COORD_MAX_LOOKAHEAD ? MPT_COORD_MAX_LOOKAHEAD : l; }

int warm_start(coord_state *s, mpt_error *err);
int take(coord_state *s, int i, mpt_obs *o, mpt_error *err);
int take_cross(coord_state *s, int y, int x, mpt_obs *o, mpt_error *err);
void cancelled_obs(mpt_obs *o, int64_t id, int rank, const char *why);
void classes_text(coord_state *s, double now);
void draw(coord_state *s, double now, int force);
int ask_tick(void *ctx, const char *doing);
int ask(coord_state *s, int i, int n, int64_t *ids);
const char *check_stop(const coord_state *s, double now);
int confirm_finalists(coord_state *s, const char **why, mpt_error *err);
int run_local(coord_state *s, mpt_error *err);
int run_workers(coord_state *s, int size, mpt_error *err);

#endif
