/* coordinator/draw.c: the run's progress line (coordinator/progress.h) drawn from its searches' counts, with
 * each class's own part when the run has several searches (coordinator/coordinator_internal.h). */
#include "coordinator/coordinator_internal.h"

/* every class's own part of the progress line (several searches) */
void classes_text(coord_state *s, double now) {
  int at = 0;
  for (int i = 0; s->n > 1 && i < s->n && at < (int)sizeof s->classes - 1; i++)
    at += mpt_search_progress(&s->S[i], s->run[i].done0, now - s->t0, s->classes + at, (int)sizeof s->classes - at);
  s->prog.classes = s->n > 1 ? s->classes : NULL;
}

void draw(coord_state *s, double now, int force) {
  mpt_search_totals(s->S, s->n, s->r);
  s->prog.missing = s->r->missing;
  if (force || mpt_progress_due(&s->prog, now, s->r->done)) classes_text(s, now); /* formatted only when drawn */
  mpt_progress_update(&s->prog, now, s->r->done, s->r->valid, s->r->failed, s->r->best, force);
}
