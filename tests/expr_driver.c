/* tests/expr_driver.c: differential-test driver for the expression language. Reads one expression per
 * line on stdin, evaluates it with the fixed variables below (tests/expr_diff.py defines the same ones
 * for Python) and prints one line each: "OK <repr>" or "ERR <ExceptionClass>" (SyntaxError for compile
 * errors, NameError for unknown names, the Python class named in the message for run-time errors,
 * "OverflowError" also for int64 overflow). With --bool it prints "OK True/False" from
 * mpt_expr_eval_bool instead, to check the hot path against the general one; with --slow the numeric
 * fast path (spaces/expr/fast.c) is disabled so that the general evaluator is checked alone.
 * With --float-repr each line is a C float literal (e.g. hex 0x1.8p+1) and it prints mpt_value_repr of it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "spaces/expr/expr.h"
#include "spaces/expr/tree.h" /* struct mpt_expr: whether e->fast was compiled */

static int build_vars(mpt_value *v) {
  v[0] = mpt_value_int(3);      /* a */
  v[1] = mpt_value_int(-2);     /* b */
  v[2] = mpt_value_int(0);      /* z */
  v[3] = mpt_value_float(2.5);  /* f */
  v[4] = mpt_value_float(-0.5); /* g */
  v[5] = mpt_value_str("ab");   /* s */
  v[6] = mpt_value_bool(1);     /* t */
  int rc = 0;
  rc |= mpt_expr_eval_const("[1, 2, 3]", &v[7], NULL, NULL);        /* L */
  rc |= mpt_expr_eval_const("[]", &v[8], NULL, NULL);               /* E */
  rc |= mpt_expr_eval_const("[1.5, -2, True, 'x']", &v[9], NULL, NULL); /* F */
  rc |= mpt_expr_eval_const("[[1, 2], [3]]", &v[10], NULL, NULL);   /* M */
  v[11] = mpt_value_int(-7);                   /* n */
  v[12] = mpt_value_int(4611686018427387904);  /* B = 2**62 */
  return rc;
}

static const char *const names[] = {"a", "b", "z", "f", "g", "s", "t", "L", "E", "F", "M", "n", "B"};
#define N_NAMES 13

static void err_class(const mpt_error *err, int code, char *out, size_t cap) {
  if (code == MPT_ERR_PARSE) { snprintf(out, cap, "SyntaxError"); return; }
  if (code == MPT_ERR_NAME) { snprintf(out, cap, "NameError"); return; }
  if (code == MPT_ERR_NOMEM) { snprintf(out, cap, "MemoryError"); return; }
  const char *colon = strchr(err->msg, ':');
  size_t n = colon ? (size_t)(colon - err->msg) : strlen(err->msg);
  if (n >= cap) n = cap - 1;
  memcpy(out, err->msg, n);
  out[n] = '\0';
}

int main(int argc, char **argv) {
  int as_bool = 0, float_repr = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--float-repr")) float_repr = 1;
    else if (!strcmp(argv[i], "--bool")) as_bool = 1;
    else if (!strcmp(argv[i], "--slow")) mpt_expr_set_fast_path(0);
  }
  mpt_value vars[N_NAMES];
  if (build_vars(vars)) {
    fprintf(stderr, "expr_driver: cannot build the variables\n");
    return 2;
  }
  size_t cap = 0;
  char *line = NULL;
  ssize_t len;
  size_t rcap = 1 << 16;
  char *rep = malloc(rcap);
  if (!rep) return 2;
  long n_fast = 0, n_lines = 0;
  while ((len = getline(&line, &cap, stdin)) >= 0) {
    n_lines++;
    while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = '\0';
    if (float_repr) {
      mpt_value d = mpt_value_float(strtod(line, NULL));
      mpt_value_repr(&d, rep, (int)rcap);
      printf("%s\n", rep);
      continue;
    }
    mpt_error err;
    mpt_error_clear(&err);
    mpt_expr *e;
    int col;
    int rc = mpt_expr_compile(line, names, N_NAMES, &e, &col, &err);
    char cls[64];
    if (rc) {
      err_class(&err, rc, cls, sizeof cls);
      printf("ERR %s\n", cls);
      continue;
    }
    n_fast += e->fast != NULL;
    if (as_bool) {
      int truth;
      rc = mpt_expr_eval_bool(e, vars, &truth, &err);
      if (rc) {
        err_class(&err, rc, cls, sizeof cls);
        printf("ERR %s\n", cls);
      } else {
        printf("OK %s\n", truth ? "True" : "False");
      }
    } else {
      mpt_value out;
      rc = mpt_expr_eval(e, vars, &out, &err);
      if (rc) {
        err_class(&err, rc, cls, sizeof cls);
        printf("ERR %s\n", cls);
      } else {
        int need = mpt_value_repr(&out, rep, (int)rcap);
        if (need >= (int)rcap) {
          rcap = (size_t)need + 1;
          char *r2 = realloc(rep, rcap);
          if (!r2) return 2;
          rep = r2;
          mpt_value_repr(&out, rep, (int)rcap);
        }
        printf("OK %s\n", rep);
        mpt_value_free(&out);
      }
    }
    mpt_expr_free(e);
  }
  fprintf(stderr, "expr_driver: %ld expressions, %ld compiled to the numeric fast path\n", n_lines, n_fast);
  free(line);
  free(rep);
  for (int i = 0; i < N_NAMES; i++) mpt_value_free(&vars[i]);
  return 0;
}
