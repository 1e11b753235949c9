/* jobs/output/pareto.c: the Pareto front of a multi-objective run (see pareto.h). */
#include "jobs/output/pareto.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

void mpt_pareto_init(mpt_pareto *f, const mpt_objective *obj) {
  memset(f, 0, sizeof *f);
  f->obj = obj;
}

void mpt_pareto_free(mpt_pareto *f) {
  free(f->p);
  memset(f, 0, sizeof *f);
}

int mpt_pareto_dominates(const mpt_objective *obj, const double *a, const double *b) {
  int better = 0;
  for (int k = 0; k < obj->n; k++) {
    double x = mpt_objective_minimized(&obj->t[k], a[k]), y = mpt_objective_minimized(&obj->t[k], b[k]);
    if (x > y) return 0;
    better |= x < y;
  }
  return better;
}

/* drops point i (order kept: the front stays in arrival order until sorted) */
static void drop(mpt_pareto *f, int i) {
  memmove(f->p + i, f->p + i + 1, sizeof *f->p * (size_t)(f->n - i - 1));
  f->n--;
}

int mpt_pareto_add(mpt_pareto *f, const mpt_space *s, const mpt_obs *ob) {
  if (!mpt_obs_valid(ob)) return 0;
  mpt_pareto_point q = {ob->id, {0}};
  char why[256];
  for (int k = 0; k < f->obj->n; k++)
    if (!isfinite(q.v[k] = mpt_objective_value(f->obj, k, s, ob, why, sizeof why))) return 0;
  for (int i = 0; i < f->n; i++)
    if (f->p[i].id == ob->id) drop(f, i--);
  for (int i = 0; i < f->n; i++)
    if (mpt_pareto_dominates(f->obj, f->p[i].v, q.v)) return 0;
  for (int i = 0; i < f->n; i++)
    if (mpt_pareto_dominates(f->obj, q.v, f->p[i].v)) drop(f, i--);
  if (f->n == f->cap) {
    int cap = f->cap ? 2 * f->cap : 16;
    mpt_pareto_point *p = realloc(f->p, sizeof *p * (size_t)cap);
    if (!p) return MPT_ERR_NOMEM;
    f->p = p;
    f->cap = cap;
  }
  f->p[f->n++] = q;
  return 0;
}

static const mpt_objective *sort_obj;
static int by_first(const void *a, const void *b) {
  const mpt_pareto_point *x = a, *y = b;
  double u = mpt_objective_minimized(&sort_obj->t[0], x->v[0]), w = mpt_objective_minimized(&sort_obj->t[0], y->v[0]);
  return u < w ? -1 : u > w ? 1 : (x->id > y->id) - (x->id < y->id);
}

void mpt_pareto_sort(mpt_pareto *f) {
  sort_obj = f->obj;
  if (f->n > 1) qsort(f->p, (size_t)f->n, sizeof *f->p, by_first);
}

void mpt_pareto_print(mpt_pareto *f, const mpt_space *s, FILE *out) {
  mpt_pareto_sort(f);
  fprintf(out, "pareto front (");
  for (int k = 0; k < f->obj->n; k++)
    fprintf(out, "%s%s%s%s%s", k ? ", " : "", f->obj->t[k].name, f->obj->t[k].unit[0] ? " " : "", f->obj->t[k].unit,
            f->obj->t[k].maximize ? ", max" : "");
  fprintf(out, "): %d configuration%s\n", f->n, f->n == 1 ? "" : "s");
  for (int i = 0; i < f->n; i++) {
    char cfg[1024];
    mpt_space_format(s, f->p[i].id, cfg, (int)sizeof cfg);
    fprintf(out, " ");
    for (int k = 0; k < f->obj->n; k++) fprintf(out, " %.6g", f->p[i].v[k]);
    fprintf(out, "  %s\n", cfg);
  }
}
