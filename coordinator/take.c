/* coordinator/take.c: taking an observation (coordinator/coordinator_internal.h): logged (flushed) first, then
 * told to its search's strategy and counted; a portability evaluation logged and noted; a cancelled one made. */
#include "coordinator/coordinator_internal.h"
#include <math.h>
#include <stdio.h>

/* search i's record callback: its job's, else the run's */
static int record(coord_state *s, int i, const mpt_obs *o, mpt_error *err) {
  mpt_coord_record_fn fn = s->S[i].record ? s->S[i].record : s->c->record;
  return fn ? fn(s->S[i].record ? s->S[i].record_ctx : s->c->record_ctx, o, err) : 0;
}

/* log (flushed) first, then tell search i's strategy (and, as related, the other searches') */
int take(coord_state *s, int i, mpt_obs *o, mpt_error *err) {
  mpt_coord_result *r = &s->S[i].res;
  o->device_class = s->S[i].device_class;
  int rc = record(s, i, o, err);
  if (rc < 0) return rc;
  if (o->status == MPT_STATUS_CANCELLED) {
    r->cancelled++;
    return 0;
  }
  mpt_search_tell(s->S, s->n, i, o, 1, s->c->transfer);
  mpt_search_count(r, s->S[i].default_id, o);
  if (o->status == MPT_STATUS_MISSING) return 0;
  r->new_evals++;
  if (o->t_end > o->t_start) r->eval_s += o->t_end - o->t_start;
  if (isfinite(o->benchmark_ms) && o->benchmark_ms > 0) r->device_s += o->benchmark_ms * 1e-3;
  return 0;
}

/* a portability evaluation of search x's best on search y's class: logged (flushed), noted; no search hears of it */
int take_cross(coord_state *s, int y, int x, mpt_obs *o, mpt_error *err) {
  o->device_class = s->S[y].device_class;
  o->cross_from = s->S[x].device_class + 1;
  s->cross.busy[x * s->n + y] = 0;
  int rc = record(s, y, o, err);
  if (rc < 0) return rc;
  if (o->status != MPT_STATUS_CANCELLED) s->cross.done[x * s->n + y] = o->id;
  return 0;
}

void cancelled_obs(mpt_obs *o, int64_t id, int rank, const char *why) {
  mpt_obs_init(o, id);
  o->status = MPT_STATUS_CANCELLED;
  o->rank = rank;
  snprintf(o->reason, sizeof o->reason, "%s", why);
}
