/* jobs/output/portability.c: the portability table (jobs/output/portability.h). */
#include "jobs/output/portability.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct table {
  const mpt_coord_search *S;
  int n;
  const mpt_objective_term *t; /* the objective (NULL: the time in ms) */
  double *value;               /* n * n: [x * n + y] x's best measured on y, minimized (NAN: failed) */
  unsigned char *have;         /* n * n: measured */
} table;

static int search_of_class(const table *t, int32_t device_class) {
  for (int i = 0; i < t->n; i++)
    if (t->S[i].device_class == device_class) return i;
  return -1;
}

/* a portability evaluation of the final best of its row's class: its cell (the last one logged counts) */
static int take_record(void *ctx, const mpt_obs *o, const int32_t *config) {
  (void)config;
  table *t = ctx;
  if (o->cross_from <= 0 || o->status == MPT_STATUS_CANCELLED) return 0;
  int x = search_of_class(t, o->cross_from - 1), y = search_of_class(t, o->device_class);
  if (x < 0 || y < 0 || o->id != t->S[x].res.best_id) return 0;
  t->value[x * t->n + y] = mpt_obs_valid(o) ? o->objective : NAN;
  t->have[x * t->n + y] = 1;
  return 0;
}

/* a minimized objective value as measured (a maximized one negated back) */
static double measured(const table *t, double minimized) {
  return t->t ? mpt_objective_minimized(t->t, minimized) : minimized;
}

/* one cell: "0.906 ms (1.00x)", "1104 runs/s (1.00x)", "failed" or "-" (not measured); the ratio is how many
 * times worse the cell is than the column's own best (a time over the best's, a maximized rate the best's over
 * it), left out where it has no meaning (a value not above 0) */
static void cell(char *buf, size_t cap, const table *t, int x, int y) {
  double own = t->S[y].res.best, v = x == y ? own : t->value[x * t->n + y];
  if (x != y && !t->have[x * t->n + y]) {
    snprintf(buf, cap, "-");
    return;
  }
  if (!isfinite(v)) {
    snprintf(buf, cap, "failed");
    return;
  }
  double a = measured(t, v), b = measured(t, own);
  const char *unit = t->t ? t->t->unit : "ms";
  int n = snprintf(buf, cap, "%.4g%s%s", a, unit[0] ? " " : "", unit);
  if (n >= 0 && (size_t)n < cap && a > 0 && b > 0)
    snprintf(buf + n, cap - (size_t)n, " (%.2fx)", t->t && t->t->maximize ? b / a : a / b);
}

/* the table's first line: what its cells say */
static void print_head(FILE *f, const table *t) {
  fprintf(f, "portability (rows: the best configuration of a class; columns: the class it was measured on; ");
  if (!t->t || (t->t->kind == MPT_OBJ_TIME && !t->t->maximize))
    fprintf(f, "the time and its ratio to that class's own best):\n");
  else
    fprintf(f, "the %s%s%s (%s is better) and how many times worse than that class's own best it is):\n",
            t->t->name, t->t->unit[0] ? " in " : "", t->t->unit, t->t->maximize ? "higher" : "lower");
}

static void print_table(FILE *f, const table *t) {
  print_head(f, t);
  fprintf(f, "%-24s", "");
  for (int y = 0; y < t->n; y++) fprintf(f, " %-22.22s", t->S[y].name);
  fputc('\n', f);
  for (int x = 0; x < t->n; x++) {
    if (t->S[x].res.best_id < 0) continue;
    char label[64], c[64];
    snprintf(label, sizeof label, "best of %s", t->S[x].name);
    fprintf(f, "%-24.24s", label);
    for (int y = 0; y < t->n; y++) {
      cell(c, sizeof c, t, x, y);
      fprintf(f, " %-22s", c);
    }
    fputc('\n', f);
  }
}

int mpt_portability_print(FILE *f, mpt_runlog *log, const mpt_coord_search *searches, int n,
                          const mpt_job_objective *objective, mpt_error *err) {
  const mpt_objective_term *term = mpt_job_objective_term(objective);
  table t = {searches, n, term, calloc((size_t)(n * n), sizeof(double)), calloc((size_t)(n * n), 1)};
  int rc = t.value && t.have ? mpt_runlog_each(log, take_record, &t, err) : mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  if (rc == 0) print_table(f, &t);
  free(t.value);
  free(t.have);
  return rc;
}
