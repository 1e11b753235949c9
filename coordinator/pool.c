/* coordinator/pool.c: the worker pool of a run over several ranks (coordinator/pool_internal.h): each worker's
 * home search and the configurations it holds, which searches' work it takes, sending WORK and taking a held
 * configuration off once answered, and the pool's end (the last sends completed, STOP to every worker). */
#include "coordinator/pool_internal.h"
#include <stdlib.h>
#include <string.h>

/* search i's ask buffer, and its workers checked: each a worker rank, in one search per job at most */
static int search_workers_open(coord_state *s, worker_pool *p, int i, mpt_error *err) {
  const mpt_coord_search *S = &s->S[i];
  search_run *run = &s->run[i];
  run->ids = malloc(sizeof *run->ids * ((size_t)S->n_workers * (size_t)p->depth + 1));
  if (!run->ids) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory for %d workers", S->n_workers);
  for (int k = 0; k < S->n_workers; k++) {
    int rank = S->workers[k], twice = 0;
    for (int h = 0; h < i && !twice; h++) twice = s->S[h].job == S->job && mpt_search_worker_place(&s->S[h], rank) >= 0;
    if (rank <= 0 || rank >= p->size || twice)
      return mpt_error_set(err, MPT_ERR_VALUE, "coordinator: rank %d of search '%s' is no worker or serves two searches "
                           "of one job", rank, S->name);
  }
  return 0;
}

/* search h has no work left to hand out: finished, its strategy exhausted, or its whole budget handed out */
static int no_work_left(const coord_state *s, int h) {
  return s->finished[h] || s->run[h].exhausted || s->S[h].budget - s->S[h].res.done - s->run[h].in_flight <= 0;
}

/* worker k takes search i's work now: it is at home there, or its home search has no work left */
int takes_work(const coord_state *s, const worker_pool *p, int i, int k) {
  const worker_slot *w = &p->w[k];
  return !w->out && w->home >= 0 && (w->home == i || no_work_left(s, w->home));
}

/* the room search i's workers that take its work have (each holds up to 1 + the lookahead) */
int64_t search_room(const coord_state *s, const worker_pool *p, int i) {
  int64_t room = 0;
  for (int j = 0; j < s->S[i].n_workers; j++) {
    int k = s->S[i].workers[j];
    if (takes_work(s, p, i, k)) room += p->depth - p->w[k].n;
  }
  return room;
}

int pool_open(coord_state *s, worker_pool *p, int size, mpt_error *err) {
  memset(p, 0, sizeof *p);
  p->size = size;
  p->depth = 1 + clamp_lookahead(s->c->lookahead);
  p->w = calloc((size_t)size, sizeof *p->w);
  if (!p->w) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory for %d workers", size - 1);
  for (int k = 0; k < size; k++) {
    for (int j = 0; j <= MPT_COORD_MAX_LOOKAHEAD; j++) p->w[k].req[j] = MPI_REQUEST_NULL;
    p->w[k].home = -1;
  }
  mpt_backoff_init(&p->b, MPT_BACKOFF_MIN_NS, MPT_BACKOFF_MAX_NS);
  for (int i = 0; i < s->n; i++) {
    int rc = search_workers_open(s, p, i, err);
    if (rc < 0) return rc;
  }
  int *home = malloc(sizeof *home * (size_t)size);
  if (!home) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory for %d workers", size - 1);
  mpt_search_homes(s->S, s->n, size, home);
  for (int k = 1; k < size; k++) p->w[k].home = home[k];
  free(home);
  return 0;
}

/* completes every WORK send to worker k (long done: the worker answered) */
void slot_sends_done(worker_pool *p, int k) {
  for (int j = 0; j < p->depth; j++)
    if (p->w[k].req[j] != MPI_REQUEST_NULL) mpt_wire_wait(&p->w[k].req[j], &p->b);
}

/* the run ends: its reason, the last sends completed, STOP to every worker (1 after an error) */
void pool_close(coord_state *s, worker_pool *p) {
  s->r->reason = p->rc < 0 ? "error" : p->stopping;
  for (int k = 1; p->w && k < p->size; k++) slot_sends_done(p, k);
  mpt_wire_stop_all(s->c->comm, p->rc < 0 ? 1 : 0);
  free(p->w);
}

/* sends config id of search i (cross_from: 0, or x + 1 for search x's best) to worker k, which holds it after what
 * it holds already */
void send_work(coord_state *s, worker_pool *p, int k, int i, int64_t id, int cross_from) {
  worker_slot *w = &p->w[k];
  int j = w->next;
  w->next = (j + 1) % p->depth;
  if (w->req[j] != MPI_REQUEST_NULL) mpt_wire_wait(&w->req[j], &p->b); /* long done: its result came back */
  if (cross_from) s->cross.busy[(cross_from - 1) * s->n + i] = 1;
  w->send[j] = (mpt_wire_work){id, i, s->S[i].job};
  w->held[w->n++] = (held_work){w->send[j], cross_from};
  mpt_wire_send_work(s->c->comm, k, &w->send[j], &w->req[j]);
  s->run[i].in_flight++;
  p->in_flight++;
}

/* worker k's first held configuration is answered (or given up): taken off what it holds */
void slot_pop(coord_state *s, worker_pool *p, int k) {
  worker_slot *w = &p->w[k];
  s->run[w->held[0].work.search].in_flight--;
  memmove(w->held, w->held + 1, (size_t)(w->n - 1) * sizeof *w->held);
  w->n--;
  p->in_flight--;
}
