/* evaluators/objective.c: the run's objective (see objective.h): `--objective` parsed against the problem's
 * Metrics, and the value of each term for an observation. */
#include "evaluators/objective.h"
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "spaces/expr/expr.h"

enum { SLOT_TIME, SLOT_ENERGY, SLOT_POWER, N_EXTRA }; /* a metric's names after the parameters */
static const char *const extra_names[N_EXTRA] = {"time", "energy", "power"};

/* the Metrics entry called name (NULL: none); *index its position */
static const cJSON *find_metric(const mpt_problem *p, const char *name, int *index) {
  const cJSON *ms = p ? cJSON_GetObjectItemCaseSensitive(p->json, "Metrics") : NULL;
  int i = 0;
  for (const cJSON *m = ms ? ms->child : NULL; m; m = m->next, i++) {
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(m, "Name");
    if (cJSON_IsString(n) && strcmp(n->valuestring, name) == 0) return *index = i, m;
  }
  return NULL;
}

static int compile_metric(const mpt_problem *p, const cJSON *m, int index, mpt_objective_term *t, mpt_error *err) {
  const cJSON *ex = cJSON_GetObjectItemCaseSensitive(m, "Expression");
  const cJSON *unit = cJSON_GetObjectItemCaseSensitive(m, "Unit");
  const cJSON *goal = cJSON_GetObjectItemCaseSensitive(m, "Goal");
  char field[64];
  snprintf(field, sizeof field, "Metrics[%d]", index);
  if (!cJSON_IsString(ex))
    return mpt_error_set(err, MPT_ERR_VALUE, "%s: %s.Expression: missing or not a string", p->path, field);
  if (goal && (!cJSON_IsString(goal) || (strcmp(goal->valuestring, "min") && strcmp(goal->valuestring, "max"))))
    return mpt_error_set(err, MPT_ERR_VALUE, "%s: %s.Goal: \"min\" or \"max\" expected", p->path, field);
  t->maximize = goal && strcmp(goal->valuestring, "max") == 0;
  snprintf(t->unit, sizeof t->unit, "%s", cJSON_IsString(unit) ? unit->valuestring : "");
  const char **names = calloc((size_t)p->n_params + N_EXTRA, sizeof *names);
  if (!names) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  for (int i = 0; i < p->n_params; i++) names[i] = p->params[i].name;
  for (int i = 0; i < N_EXTRA; i++) names[p->n_params + i] = extra_names[i];
  int col = -1;
  int rc = mpt_expr_compile(ex->valuestring, names, p->n_params + N_EXTRA, &t->expr, &col, err);
  free(names);
  if (rc) {
    strcat(field, ".Expression");
    return mpt_problem_expr_error(p, err, rc, field, ex->valuestring, col);
  }
  return 0;
}

/* one term, "name" or "name:min" / "name:max" */
static int parse_term(const char *term, const mpt_problem *p, mpt_objective *o, mpt_error *err) {
  mpt_objective_term *t = &o->t[o->n];
  char name[64];
  const char *colon = strchr(term, ':');
  size_t nl = colon ? (size_t)(colon - term) : strlen(term);
  if (nl == 0 || nl >= sizeof name)
    return mpt_error_set(err, MPT_ERR_VALUE, "--objective: '%s': a name expected (time, energy, edp or a Metrics Name)", term);
  snprintf(name, sizeof name, "%.*s", (int)nl, term);
  snprintf(t->name, sizeof t->name, "%s", name);
  int index = -1;
  const cJSON *m = NULL;
  if (strcmp(name, "time") == 0) t->kind = MPT_OBJ_TIME, strcpy(t->unit, "ms");
  else if (strcmp(name, "energy") == 0) t->kind = MPT_OBJ_ENERGY, strcpy(t->unit, "J");
  else if (strcmp(name, "edp") == 0) t->kind = MPT_OBJ_EDP, strcpy(t->unit, "J*s");
  else if ((m = find_metric(p, name, &index)) != NULL) t->kind = MPT_OBJ_METRIC;
  else
    return mpt_error_set(err, MPT_ERR_NAME, "--objective: unknown objective '%s' (time, energy, edp, or the Name of one of "
                         "%s's Metrics)", name, p ? p->path : "the problem");
  if (m) {
    int rc = compile_metric(p, m, index, t, err);
    o->n++; /* freed with the objective, also after an error */
    if (rc) return rc;
    for (int i = 0; i < mpt_expr_n_uses(t->expr); i++)
      o->needs_energy |= mpt_expr_uses(t->expr)[i] >= p->n_params + SLOT_ENERGY;
  } else {
    o->n++;
    o->needs_energy |= t->kind != MPT_OBJ_TIME;
  }
  if (colon && strcmp(colon, ":min") && strcmp(colon, ":max"))
    return mpt_error_set(err, MPT_ERR_VALUE, "--objective: '%s': ':min' or ':max' expected after the name", term);
  if (colon) t->maximize = strcmp(colon, ":max") == 0;
  return 0;
}

int mpt_objective_parse(const char *spec, const mpt_problem *p, mpt_objective *out, mpt_error *err) {
  memset(out, 0, sizeof *out);
  char buf[512];
  snprintf(buf, sizeof buf, "%s", spec && spec[0] ? spec : "time");
  char *save = NULL;
  for (char *term = strtok_r(buf, ",", &save); term; term = strtok_r(NULL, ",", &save)) {
    if (out->n == MPT_OBJECTIVE_MAX_TERMS) {
      mpt_objective_free(out);
      return mpt_error_set(err, MPT_ERR_VALUE, "--objective: at most %d objectives", MPT_OBJECTIVE_MAX_TERMS);
    }
    int rc = parse_term(term, p, out, err);
    if (rc) {
      mpt_objective_free(out);
      return rc;
    }
  }
  if (out->n == 0) return mpt_error_set(err, MPT_ERR_VALUE, "--objective: '%s': no objective named", spec);
  return 0;
}

void mpt_objective_free(mpt_objective *o) {
  for (int k = 0; k < o->n; k++) mpt_expr_free(o->t[k].expr);
  memset(o, 0, sizeof *o);
}

void mpt_objective_describe(const mpt_objective *o, char *buf, size_t cap) {
  size_t at = 0;
  buf[0] = 0;
  for (int k = 0; k < o->n && at < cap; k++) {
    int def_max = 0; /* as written: the direction shown unless it is the default one */
    at += (size_t)snprintf(buf + at, cap - at, "%s%s%s", k ? "," : "", o->t[k].name,
                           o->t[k].maximize != def_max ? ":max" : "");
  }
}

double mpt_objective_time_ms(const mpt_obs *o) {
  if (o->n_times <= 0) return o->median;
  double sum = 0;
  for (int i = 0; i < o->n_times; i++) sum += o->times[i];
  return sum / o->n_times;
}

static double metric_value(const mpt_objective_term *t, const mpt_space *s, const mpt_obs *ob, char *why, size_t cap) {
  const mpt_problem *p = mpt_space_problem(s);
  int n = p->n_params;
  mpt_value *vars = calloc((size_t)n + N_EXTRA, sizeof *vars);
  int *idx = calloc((size_t)n + 1, sizeof *idx);
  double v = NAN;
  if (vars && idx) {
    mpt_space_config(s, ob->id, idx);
    for (int i = 0; i < n; i++) vars[i] = p->params[i].values[idx[i]]; /* borrowed: eval only reads them */
    vars[n + SLOT_TIME] = mpt_value_float(mpt_objective_time_ms(ob));
    vars[n + SLOT_ENERGY] = mpt_value_float(ob->energy_j);
    vars[n + SLOT_POWER] = mpt_value_float(ob->power_w);
    mpt_value out = {0};
    mpt_error e;
    mpt_error_clear(&e);
    int ok = 0;
    if (mpt_expr_eval(t->expr, vars, &out, &e) == 0) v = mpt_value_as_double(&out, &ok);
    if (!ok) snprintf(why, cap, "metric '%s' (%s): %s", t->name, mpt_expr_source(t->expr),
                      e.msg[0] ? e.msg : "not a number");
    if (!ok) v = NAN;
    mpt_value_free(&out);
  }
  free(vars);
  free(idx);
  return v;
}

double mpt_objective_value(const mpt_objective *o, int k, const mpt_space *s, const mpt_obs *ob, char *why,
                           size_t cap) {
  const mpt_objective_term *t = &o->t[k];
  double time = mpt_objective_time_ms(ob), v = NAN;
  why[0] = 0;
  switch (t->kind) {
  case MPT_OBJ_TIME: v = k == 0 && o->t[0].kind == MPT_OBJ_TIME && isfinite(ob->objective) ? ob->objective : time; break;
  case MPT_OBJ_ENERGY: v = ob->energy_j; break;
  case MPT_OBJ_EDP: v = ob->energy_j * time * 1e-3; break;
  case MPT_OBJ_METRIC: v = metric_value(t, s, ob, why, cap); break;
  }
  if (!isfinite(v) && !why[0])
    snprintf(why, cap, "no %s measured%s", t->name,
             t->kind == MPT_OBJ_TIME ? "" : " (no power observer: NVML or ROCm SMI, docs/GPU.md)");
  return v;
}

double mpt_objective_minimized(const mpt_objective_term *t, double v) { return t->maximize ? -v : v; }

void mpt_objective_apply(const mpt_objective *o, const mpt_space *s, mpt_obs *ob) {
  if (ob->status != MPT_STATUS_OK || (o->n == 1 && o->t[0].kind == MPT_OBJ_TIME && !o->t[0].maximize)) return;
  char why[MPT_OBS_REASON];
  double v = mpt_objective_value(o, 0, s, ob, why, sizeof why);
  if (isfinite(v)) {
    ob->objective = mpt_objective_minimized(&o->t[0], v);
    return;
  }
  ob->status = MPT_STATUS_RUNTIME_ERROR;
  ob->objective = NAN;
  snprintf(ob->reason, sizeof ob->reason, "%s", why);
}
