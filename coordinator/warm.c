/* coordinator/warm.c: the warm start of a run (coordinator/coordinator_internal.h): every logged observation
 * goes to its search's strategy in blocks, and as related knowledge to the other searches of its job. */
#include "coordinator/coordinator_internal.h"
#include <stdlib.h>

/* warm start from the log (mpt_coord_config.resume_each): each search's runs of tellable observations are
 * told in blocks of WARM_BLOCK, to it and (transfer) to the other searches of its job */
enum { WARM_BLOCK = 512 };

static void warm_flush(coord_state *s, int i) {
  mpt_search_tell(s->S, s->n, i, s->run[i].warm, s->run[i].n_warm, s->c->transfer);
  s->run[i].n_warm = 0;
}

static int warm_one(void *ctx, const mpt_obs *o, const int32_t *config) {
  (void)config;
  coord_state *s = ctx;
  if (o->cross_from > 0) { /* a portability evaluation: no search's measurement */
    if (s->cross.n) mpt_cross_logged(&s->cross, s->S, s->warm_job, o);
    return 0;
  }
  int i = mpt_search_find(s->S, s->n, s->warm_job, s->S == &s->one ? 0 : o->device_class);
  if (i < 0 || o->status == MPT_STATUS_CANCELLED || o->id < 0 || o->id >= mpt_space_size(mpt_search_space(&s->S[i], s->c))) {
    for (int k = 0; k < s->n; k++) warm_flush(s, k);
    return 0;
  }
  search_run *w = &s->run[i];
  if (!w->warm && !(w->warm = malloc(sizeof(mpt_obs) * WARM_BLOCK))) return MPT_ERR_NOMEM;
  mpt_search_count(&s->S[i].res, s->S[i].default_id, o);
  if (o->id == s->S[i].default_id && o->status != MPT_STATUS_MISSING) s->S[i].res.default_logged = 1;
  w->warm[w->n_warm++] = *o;
  if (w->n_warm == WARM_BLOCK) warm_flush(s, i);
  return 0;
}

static int warm_read(coord_state *s, int32_t job, mpt_coord_each_fn each, void *src, mpt_error *err) {
  s->warm_job = job;
  int rc = each(src, warm_one, s, err);
  if (rc == MPT_ERR_NOMEM && !err->msg[0]) mpt_error_set(err, rc, "out of memory");
  for (int i = 0; rc == 0 && i < s->n; i++) warm_flush(s, i);
  return rc;
}

/* the run's one log (mpt_coord_config.resume_each), or each job's own (its first search's resume_each; none: a
 * fresh run) */
int warm_start(coord_state *s, mpt_error *err) {
  if (s->c->resume_each) return warm_read(s, 0, s->c->resume_each, s->c->resume_src, err);
  for (int i = 0; i < s->n; i++) {
    const mpt_coord_search *S = &s->S[i];
    int first = 1; /* the job's first search reads its log */
    for (int k = 0; k < i; k++) first &= s->S[k].job != S->job;
    int rc = first && S->resume_each ? warm_read(s, S->job, S->resume_each, S->resume_src, err) : 0;
    if (rc < 0) return rc;
  }
  return 0;
}
