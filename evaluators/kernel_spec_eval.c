/* evaluators/kernel_spec_eval.c: what reading a KernelSpecification and computing a launch share: the
 * message format naming the file and field, and the evaluation of an expression to a number with a
 * message naming the field, the expression and the configuration. Contract:
 * evaluators/kernel_spec_eval.h. */
#include "evaluators/kernel_spec_eval.h"
#include "spaces/json/json_keys.h"
#include <math.h>
#include <stdarg.h>
#include <stdio.h>

/* "FILE:LINE:COL: KernelSpecification.FIELD: message", LINE:COL the field's value in the file */
int mpt_ks_err(mpt_error *err, int code, const mpt_problem *p, const char *field, const char *fmt, ...) {
  char msg[1536], full[300], at[600];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  snprintf(full, sizeof full, "KernelSpecification%s%s", field[0] ? "." : "", field);
  mpt_json_locate(p->path, p->text, full, -1, at, sizeof at);
  return mpt_error_set(err, code, "%s: %s: %s", at, full, msg);
}

/* err (set by a failed evaluation of e with vars, the expression at KernelSpecification.FIELD) as
 * "FILE:LINE:COL: KernelSpecification.FIELD: 'SOURCE' failed[ for CONFIG]: MESSAGE", then the expression
 * and a caret under the operation that failed; returns rc */
static int expr_fault(mpt_error *err, int rc, const mpt_problem *p, const char *field, const mpt_expr *e,
                      const mpt_value *vars, const char *config) {
  char inner[1024], full[300];
  snprintf(inner, sizeof inner, "%s", err->msg);
  snprintf(full, sizeof full, "KernelSpecification%s%s", field[0] ? "." : "", field);
  mpt_error_set(err, rc, "'%s' failed%s%s: %s", mpt_expr_source(e), config[0] ? " for " : "", config, inner);
  return mpt_problem_expr_error(p, err, rc, full, mpt_expr_source(e), mpt_expr_fault_column(e, vars));
}

/* value -> int64 (ints, bools, integral floats) */
static int value_to_int(const mpt_value *v, int64_t *out) {
  if (v->kind == MPT_V_INT || v->kind == MPT_V_BOOL) {
    *out = v->u.i;
    return 0;
  }
  if (v->kind == MPT_V_FLOAT && v->u.f == floor(v->u.f) && fabs(v->u.f) < 9.2e18) {
    *out = (int64_t)v->u.f;
    return 0;
  }
  return -1;
}

/* Evaluates e with vars; numeric result as double in *d (and exact int in *i when integral).
 * `what` names the field, `config` the binding for messages. */
int mpt_ks_eval_number(const mpt_kernel_spec *ks, const mpt_expr *e, const mpt_value *vars,
                       const char *field, const char *config, int need_int, double *d, int64_t *i,
                       mpt_error *err) {
  mpt_value v = {0};
  int rc = mpt_expr_eval(e, vars, &v, err);
  if (rc) return expr_fault(err, rc, ks->problem, field, e, vars, config);
  int ok = 0;
  double x = mpt_value_as_double(&v, &ok);
  int64_t xi = 0;
  int isint = value_to_int(&v, &xi) == 0;
  const char *type = mpt_value_type_name(&v); /* a static string */
  mpt_value_free(&v);
  if (!ok || (need_int && !isint)) {
    return mpt_ks_err(err, MPT_ERR_VALUE, ks->problem, field, "'%s' gives %s%s%s, expected %s",
                mpt_expr_source(e), ok ? "a non-integral number" : type,
                config[0] ? " for " : "", config, need_int ? "an integer" : "a number");
  }
  if (d) *d = x;
  if (i) *i = isint ? xi : (int64_t)x;
  return 0;
}
