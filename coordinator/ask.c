/* coordinator/ask.c: asking a search's strategy for candidates (coordinator/coordinator_internal.h), with the
 * tick that keeps the progress line going through a long ask and stops it on a signal or the time budget. */
#include "coordinator/coordinator_internal.h"
#include <stdio.h>
#include "coordinator/signals.h"
#include "mpi/wire.h"

/* A long ask (bo taking in a resumed run's logged observations) shows what it does on the progress line once
 * it has run a second, and gives up when a signal or the time budget stops the run */
int ask_tick(void *ctx, const char *doing) {
  coord_state *s = ctx;
  double now = mpt_wire_now();
  if (now - s->ask_since >= 1.0) {
    s->prog.doing = doing;
    draw(s, now, 0);
    s->prog.doing = NULL;
  }
  return mpt_signals_count() > 0 || (s->c->time_budget > 0 && now - s->t0 >= s->c->time_budget);
}

int ask(coord_state *s, int i, int n, int64_t *ids) {
  s->ask_since = mpt_wire_now();
  mpt_strategy *st = s->S[i].strategy;
  int got = mpt_strategy_ask(st, n, ids);
  s->S[i].res.asks++;
  if (got == MPT_ERR_STOPPED) /* for the summary: a resume with as little time would stop there again */
    snprintf(s->S[i].res.ask_stopped, sizeof s->S[i].res.ask_stopped, "%s", mpt_strategy_ask_error(st));
  return got;
}
