/* coordinator/pool_internal.h: PRIVATE to coordinator/ (pool.c, dispatch.c, workers.c); not for use outside
 * it. What each worker holds and the pool of them in a run over several ranks. */
#ifndef MPT_COORD_POOL_INTERNAL_H
#define MPT_COORD_POOL_INTERNAL_H
#include <stdint.h>
#include "coordinator/coordinator_internal.h"
#include "mpi/wire.h"

/* one configuration a worker holds: the WORK sent (id, search, job) and whose best it is */
typedef struct held_work {
  mpt_wire_work work;
  int cross_from;      /* 0 its search's candidate, x + 1 search x's best (a portability evaluation) */
} held_work;

/* what one worker holds: the configuration it evaluates and up to `lookahead` more (sent ahead, compiled while it
 * evaluates), in the order sent, which is the order their observations come back in */
typedef struct worker_slot {
  int home;            /* the search it serves first (-1: none, e.g. a worker without a usable device); each
                          configuration it holds names its own search (held[].work.search) */
  int n;               /* held */
  held_work held[MPT_COORD_MAX_LOOKAHEAD + 1];
  mpt_wire_work send[MPT_COORD_MAX_LOOKAHEAD + 1]; /* send buffers of the WORK messages, used in turn */
  MPI_Request req[MPT_COORD_MAX_LOOKAHEAD + 1];
  int next;            /* the send buffer used next */
  int out;             /* its evaluator failed: it gets no more work */
  int dropped;         /* DROP sent (the run is stopping) */
} worker_slot;

/* the workers' side of the run: who serves which search, what is in flight, whether and why the run stops */
typedef struct worker_pool {
  int size;              /* ranks */
  worker_slot *w;        /* per rank */
  int depth;             /* configurations a worker may hold: 1 + the lookahead */
  int64_t in_flight;
  const char *stopping;  /* why the run stops (NULL: it goes on) */
  double t_stop;         /* since when */
  int rc;                /* the first error (err holds it), 0 none */
  mpt_backoff b;
} worker_pool;

int takes_work(const coord_state *s, const worker_pool *p, int i, int k);
int64_t search_room(const coord_state *s, const worker_pool *p, int i);
int pool_open(coord_state *s, worker_pool *p, int size, mpt_error *err);
void slot_sends_done(worker_pool *p, int k);
void pool_close(coord_state *s, worker_pool *p);
void send_work(coord_state *s, worker_pool *p, int k, int i, int64_t id, int cross_from);
void slot_pop(coord_state *s, worker_pool *p, int k);
int dispatch(coord_state *s, worker_pool *p, mpt_error *err);

#endif
