/* spaces/expr/builtins.c: the builtin functions of the expression language on their evaluated arguments,
 * with Python's semantics: the numeric conversions int() (of floats, bools and strings in any base-10
 * spelling Python accepts), float() (including "inf", "nan" and underscores) and round() with ndigits
 * (ties to even, negative ndigits); range() built as a list, list(), len(), min(), max(), abs(), sum(),
 * bool(), str(). The evaluator (eval.c) calls them once their arguments are evaluated; what it does
 * without building a range (len, `in`, comprehensions) stays there. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "spaces/expr/builtins.h"
#include "spaces/expr/ops.h"

int xb_need_int(const mpt_value *v, mpt_error *err) {
  if (xv_is_intlike(v)) return 0;
  return mpt_error_set(err, MPT_ERR_EVAL, "TypeError: '%s' object cannot be interpreted as an integer", mpt_value_type_name(v));
}

static int parse_int_str(const char *s, int64_t *out) {
  while (isspace((unsigned char)*s)) s++;
  int neg = 0;
  if (*s == '+' || *s == '-') { neg = *s == '-'; s++; }
  uint64_t v = 0;
  int nd = 0, last_us = 0;
  for (; *s && !isspace((unsigned char)*s); s++) {
    if (*s == '_' && nd && !last_us) { last_us = 1; continue; }
    if (*s < '0' || *s > '9') return -1;
    last_us = 0;
    uint64_t d = (uint64_t)(*s - '0');
    if (v > (UINT64_MAX - d) / 10) return -2;
    v = v * 10 + d;
    nd++;
  }
  if (!nd || last_us) return -1;
  while (isspace((unsigned char)*s)) s++;
  if (*s) return -1;
  if (neg) {
    if (v > (uint64_t)INT64_MAX + 1) return -2;
    *out = (int64_t)(0 - v);
  } else {
    if (v > (uint64_t)INT64_MAX) return -2;
    *out = (int64_t)v;
  }
  return 0;
}

static int parse_float_str(const char *s, double *out) {
  while (isspace((unsigned char)*s)) s++;
  size_t n = strlen(s);
  while (n && isspace((unsigned char)s[n - 1])) n--;
  if (!n || n > 1000) return -1;
  char buf[1024];
  size_t o = 0;
  for (size_t i = 0; i < n; i++) {
    char ch = s[i];
    if (ch == '_') { /* only between digits */
      if (!i || i + 1 >= n || !isdigit((unsigned char)s[i - 1]) || !isdigit((unsigned char)s[i + 1])) return -1;
      continue;
    }
    if (ch == 'x' || ch == 'X' || ch == 'p' || ch == 'P' || ch == '(' || isspace((unsigned char)ch)) return -1;
    buf[o++] = ch;
  }
  buf[o] = '\0';
  /* accept only [sign](inf|infinity|nan) or a decimal number */
  const char *q = buf + ((buf[0] == '+' || buf[0] == '-') ? 1 : 0);
  if (!strcasecmp(q, "inf") || !strcasecmp(q, "infinity") || !strcasecmp(q, "nan")) {
    double v = tolower((unsigned char)q[0]) == 'n' ? NAN : INFINITY;
    *out = buf[0] == '-' ? -v : v;
    return 0;
  }
  if (!isdigit((unsigned char)*q) && *q != '.') return -1;
  char *end;
  errno = 0;
  double v = strtod(buf, &end);
  if (*end) return -1;
  *out = v;
  return 0;
}

static int float_to_int(double f, int64_t *out, mpt_error *err) {
  if (isnan(f)) return mpt_error_set(err, MPT_ERR_EVAL, "ValueError: cannot convert float NaN to integer");
  if (isinf(f)) return mpt_error_set(err, MPT_ERR_EVAL, "OverflowError: cannot convert float infinity to integer");
  double t = trunc(f);
  if (t >= 9223372036854775808.0 || t < -9223372036854775808.0) return xv_overflow(err);
  *out = (int64_t)t;
  return 0;
}

static int b_int(xval *a, int n, xval *o, mpt_error *err) {
  if (n == 0) return xv_set_owned(o, xv_i(0));
  const mpt_value *v = &a[0].v;
  int64_t r = 0;
  switch (v->kind) {
  case MPT_V_BOOL:
  case MPT_V_INT: return xv_set_owned(o, xv_i(v->u.i));
  case MPT_V_FLOAT:
    if (float_to_int(v->u.f, &r, err)) return MPT_ERR_EVAL;
    return xv_set_owned(o, xv_i(r));
  case MPT_V_STR: {
    int rc = parse_int_str(v->u.s, &r);
    if (rc == -2) return xv_overflow(err);
    if (rc) {
      char rep[160];
      mpt_value_repr(v, rep, sizeof rep);
      return mpt_error_set(err, MPT_ERR_EVAL, "ValueError: invalid literal for int() with base 10: %s", rep);
    }
    return xv_set_owned(o, xv_i(r));
  }
  default:
    return mpt_error_set(err, MPT_ERR_EVAL, "TypeError: int() argument must be a string, a bytes-like object or a real number, not '%s'",
                         mpt_value_type_name(v));
  }
}

static int b_float(xval *a, int n, xval *o, mpt_error *err) {
  if (n == 0) return xv_set_owned(o, xv_f(0.0));
  const mpt_value *v = &a[0].v;
  switch (v->kind) {
  case MPT_V_BOOL:
  case MPT_V_INT: return xv_set_owned(o, xv_f((double)v->u.i));
  case MPT_V_FLOAT: return xv_set_owned(o, xv_f(v->u.f));
  case MPT_V_STR: {
    double d;
    if (parse_float_str(v->u.s, &d)) {
      char rep[160];
      mpt_value_repr(v, rep, sizeof rep);
      return mpt_error_set(err, MPT_ERR_EVAL, "ValueError: could not convert string to float: %s", rep);
    }
    return xv_set_owned(o, xv_f(d));
  }
  default:
    return mpt_error_set(err, MPT_ERR_EVAL, "TypeError: float() argument must be a string or a real number, not '%s'", mpt_value_type_name(v));
  }
}

/* decimal string of a non-negative integral double, exact */
static int round_float_neg(double x, int64_t nd, double *out) {
  /* rounds |x| to a multiple of 10^-nd (nd < 0) half-to-even, exactly */
  double ax = fabs(x);
  double ip = trunc(ax);
  int frac_nonzero = (ax - ip) != 0.0;
  char digits[400];
  int len = snprintf(digits, sizeof digits, "%.0f", ip);
  int64_t k = -nd; /* digits to clear */
  if (k > len) { *out = copysign(0.0, x); return 0; }
  int keep = len - (int)k;
  /* discarded part compared with half */
  int cmp; /* -1 below half, 0 tie, 1 above */
  if (digits[keep] > '5') cmp = 1;
  else if (digits[keep] < '5') cmp = -1;
  else {
    cmp = 0;
    for (int i = keep + 1; i < len; i++)
      if (digits[i] != '0') { cmp = 1; break; }
    if (!cmp && frac_nonzero) cmp = 1;
  }
  char res[420];
  memcpy(res, "0", 2);
  char kept[400];
  memcpy(kept, digits, (size_t)keep);
  kept[keep] = '\0';
  int up = cmp > 0 || (cmp == 0 && keep > 0 && ((kept[keep - 1] - '0') & 1));
  /* value = kept (+1 if up) * 10^k */
  char num[402];
  num[0] = '0';
  memcpy(num + 1, kept, (size_t)keep + 1);
  int nl = keep + 1;
  if (up) {
    int i = nl - 1;
    while (i >= 0 && num[i] == '9') num[i--] = '0';
    if (i >= 0) num[i]++;
  }
  snprintf(res, sizeof res, "%se%lld", num, (long long)k);
  double r = strtod(res, NULL);
  *out = copysign(r, x);
  return 0;
}

static int b_round(xval *a, int n, xval *o, mpt_error *err) {
  const mpt_value *v = &a[0].v;
  if (n == 2 && a[1].v.kind == MPT_V_NONE) n = 1;
  if (v->kind != MPT_V_INT && v->kind != MPT_V_BOOL && v->kind != MPT_V_FLOAT)
    return mpt_error_set(err, MPT_ERR_EVAL, "TypeError: type %s doesn't define __round__ method", mpt_value_type_name(v));
  if (n == 1) {
    if (xv_is_intlike(v)) return xv_set_owned(o, xv_i(v->u.i));
    double f = v->u.f;
    if (isnan(f)) return mpt_error_set(err, MPT_ERR_EVAL, "ValueError: cannot convert float NaN to integer");
    if (isinf(f)) return mpt_error_set(err, MPT_ERR_EVAL, "OverflowError: cannot convert float infinity to integer");
    double r = nearbyint(f); /* default rounding mode: half to even */
    int64_t i = 0;
    if (float_to_int(r, &i, err)) return MPT_ERR_EVAL;
    return xv_set_owned(o, xv_i(i));
  }
  if (xb_need_int(&a[1].v, err)) return MPT_ERR_EVAL;
  int64_t nd = a[1].v.u.i;
  if (xv_is_intlike(v)) {
    int64_t x = v->u.i;
    if (nd >= 0) return xv_set_owned(o, xv_i(x));
    if (nd < -18) { /* 10**19 and beyond: only |x| > 5*10**18 rounds away from 0, to +-10**19 */
      if (nd == -19 && (x > 5000000000000000000LL || x < -5000000000000000000LL)) return xv_overflow(err);
      return xv_set_owned(o, xv_i(0));
    }
    int64_t pw = 1;
    for (int64_t i = 0; i < -nd; i++) pw *= 10;
    int64_t r = 0;
    xv_int_mod(x, pw, &r, err);
    __int128 q = (__int128)x - r; /* multiple of pw, floor; half to even */
    int up = (__int128)r * 2 > pw || ((__int128)r * 2 == pw && ((q / pw) % 2 != 0));
    if (up) q += pw;
    if (q > INT64_MAX || q < INT64_MIN) return xv_overflow(err);
    return xv_set_owned(o, xv_i((int64_t)q));
  }
  double x = v->u.f;
  if (x == 0.0 || !isfinite(x)) return xv_set_owned(o, xv_f(x)); /* before the ndigits limits */
  if (nd > 323) return xv_set_owned(o, xv_f(x));
  if (nd < -308) return xv_set_owned(o, xv_f(0.0 * x));
  double r = 0.0;
  if (nd >= 0) {
    char buf[800];
    snprintf(buf, sizeof buf, "%.*f", (int)nd, x);
    r = strtod(buf, NULL);
    if (r == 0.0) r = copysign(0.0, x);
  } else {
    round_float_neg(x, nd, &r);
  }
  if (isinf(r)) return mpt_error_set(err, MPT_ERR_EVAL, "OverflowError: rounded value too large to represent");
  return xv_set_owned(o, xv_f(r));
}

/* ------------------------------------------------------------------ range, list, len, min, max, abs, sum, bool, str */

int xb_not_iterable(const mpt_value *v, mpt_error *err) {
  return mpt_error_set(err, MPT_ERR_EVAL, "TypeError: '%s' object is not iterable", mpt_value_type_name(v));
}

static int b_range(xval *a, int n, xval *o, xbudget *held, mpt_error *err) {
  for (int i = 0; i < n; i++)
    if (xb_need_int(&a[i].v, err)) return MPT_ERR_EVAL;
  int64_t start = 0, stop, step = 1;
  if (n == 1) stop = a[0].v.u.i;
  else { start = a[0].v.u.i; stop = a[1].v.u.i; }
  if (n == 3) step = a[2].v.u.i;
  if (step == 0) return mpt_error_set(err, MPT_ERR_EVAL, "ValueError: range() arg 3 must not be zero");
  __int128 len = 0;
  if (step > 0 && start < stop) len = ((__int128)stop - start - 1) / step + 1;
  if (step < 0 && start > stop) len = ((__int128)start - stop - 1) / (-(__int128)step) + 1;
  if (len > XP_MAX_LIST)
    return mpt_error_set(err, MPT_ERR_EVAL, "MemoryError: range of %lld items is too large to materialize", (long long)(len > INT64_MAX ? INT64_MAX : len));
  mpt_value l;
  int rc = xv_new_list(&l, (int64_t)len, held, err);
  if (rc) return rc;
  for (int64_t i = 0; i < (int64_t)len; i++) l.u.list.items[i] = xv_i((int64_t)(start + (__int128)i * step));
  return xv_set_owned(o, l);
}

/* a list/str operand as a list value (strings split into 1-character strings) */
static int as_list(xval *x, xval *o, xbudget *held, mpt_error *err) {
  if (x->v.kind == MPT_V_LIST) {
    if (x->own) { *o = *x; x->own = 0; x->v.kind = MPT_V_NONE; return 0; }
    mpt_value l;
    int rc = xv_copy(&l, &x->v, held, err);
    return rc ? rc : xv_set_owned(o, l);
  }
  if (x->v.kind == MPT_V_STR) {
    int64_t n = (int64_t)strlen(x->v.u.s);
    mpt_value l;
    int rc = xv_new_list(&l, n, held, err);
    if (rc) return rc;
    for (int64_t i = 0; i < n; i++) {
      rc = xv_new_str(&l.u.list.items[i], &x->v.u.s[i], 1, held, err);
      if (rc) { xv_free(&l, held); return rc; }
    }
    return xv_set_owned(o, l);
  }
  return xb_not_iterable(&x->v, err);
}

static int b_minmax(int is_max, xval *a, int n, xval *o, xbudget *held, mpt_error *err) {
  const char *fname = is_max ? "max" : "min";
  const mpt_value *items;
  int64_t cnt;
  mpt_value tmpl;
  int have_tmp = 0;
  mpt_value *argv = NULL;
  if (n == 1) {
    if (a[0].v.kind == MPT_V_LIST) {
      items = a[0].v.u.list.items;
      cnt = a[0].v.u.list.n;
    } else if (a[0].v.kind == MPT_V_STR) {
      xval t = {{0}, 0};
      int rc = as_list(&a[0], &t, held, err);
      if (rc) return rc;
      tmpl = t.v;
      have_tmp = 1;
      items = tmpl.u.list.items;
      cnt = tmpl.u.list.n;
    } else {
      return xb_not_iterable(&a[0].v, err);
    }
    if (cnt == 0) {
      if (have_tmp) xv_free(&tmpl, held);
      return mpt_error_set(err, MPT_ERR_EVAL, "ValueError: %s() arg is an empty sequence", fname);
    }
  } else {
    argv = malloc((size_t)n * sizeof(mpt_value));
    if (!argv) return mpt_error_set(err, MPT_ERR_NOMEM, "MemoryError: out of memory");
    for (int i = 0; i < n; i++) argv[i] = a[i].v;
    items = argv;
    cnt = n;
  }
  int64_t best = 0;
  int rc = 0;
  for (int64_t i = 1; i < cnt; i++) {
    int less;
    /* max keeps the first maximal item (item > best, i.e. best < item); min: item < best */
    rc = is_max ? xv_compare(C_GT, &items[i], &items[best], &less, err) : xv_compare(C_LT, &items[i], &items[best], &less, err);
    if (rc) break;
    if (less) best = i;
  }
  if (!rc) {
    mpt_value r;
    rc = xv_copy(&r, &items[best], held, err);
    if (!rc) xv_set_owned(o, r);
  }
  if (have_tmp) xv_free(&tmpl, held);
  free(argv);
  return rc;
}

static int b_sum(xval *a, int n, xval *o, xbudget *held, mpt_error *err) {
  mpt_value acc = xv_i(0);
  if (n == 2) {
    if (a[1].v.kind == MPT_V_STR)
      return mpt_error_set(err, MPT_ERR_EVAL, "TypeError: sum() can't sum strings [use ''.join(seq) instead]");
    int rc = xv_copy(&acc, &a[1].v, held, err);
    if (rc) return rc;
  }
  xval items = {{0}, 0};
  if (a[0].v.kind == MPT_V_LIST) {
    items.v = a[0].v; /* borrowed */
  } else if (a[0].v.kind == MPT_V_STR) {
    int rc = as_list(&a[0], &items, held, err); /* sum('') is 0; sum('ab') fails on 0 + 'a' */
    if (rc) { xv_free(&acc, held); return rc; }
  } else {
    xv_free(&acc, held);
    return xb_not_iterable(&a[0].v, err);
  }
  for (int64_t i = 0; i < items.v.u.list.n; i++) {
    mpt_value r;
    int rc = xv_binop(X_ADD, &acc, &items.v.u.list.items[i], &r, held, err);
    xv_free(&acc, held);
    if (rc) { xv_release(&items, held); return rc; }
    acc = r;
  }
  xv_release(&items, held);
  return xv_set_owned(o, acc);
}

static int b_list(xval *a, int n, xval *o, xbudget *held, mpt_error *err) {
  if (n) return as_list(&a[0], o, held, err);
  mpt_value l;
  int rc = xv_new_list(&l, 0, held, err);
  if (!rc) xv_set_owned(o, l);
  return rc;
}

static int b_len(const mpt_value *v, xval *o, mpt_error *err) {
  if (v->kind == MPT_V_LIST) return xv_set_owned(o, xv_i(v->u.list.n));
  if (v->kind == MPT_V_STR) return xv_set_owned(o, xv_i((int64_t)strlen(v->u.s)));
  return mpt_error_set(err, MPT_ERR_EVAL, "TypeError: object of type '%s' has no len()", mpt_value_type_name(v));
}

static int b_abs(const mpt_value *v, xval *o, mpt_error *err) {
  if (xv_is_intlike(v)) {
    if (v->u.i == INT64_MIN) return xv_overflow(err);
    return xv_set_owned(o, xv_i(v->u.i < 0 ? -v->u.i : v->u.i));
  }
  if (v->kind == MPT_V_FLOAT) return xv_set_owned(o, xv_f(fabs(v->u.f)));
  return mpt_error_set(err, MPT_ERR_EVAL, "TypeError: bad operand type for abs(): '%s'", mpt_value_type_name(v));
}

/* str(v) of a value that is no string: its str() text, in a new string */
static int str_of_value(const mpt_value *v, xval *o, xbudget *held, mpt_error *err) {
  int len = mpt_value_str_repr(v, NULL, 0);
  if (len > XP_MAX_STR) return mpt_error_set(err, MPT_ERR_EVAL, "MemoryError: string is too large");
  mpt_value s;
  int rc = xv_alloc_str(&s, (size_t)len, held, err);
  if (rc) return rc;
  mpt_value_str_repr(v, s.u.s, len + 1);
  return xv_set_owned(o, s);
}

static int b_str(xval *a, int n, xval *o, xbudget *held, mpt_error *err) {
  if (n && a[0].v.kind != MPT_V_STR) return str_of_value(&a[0].v, o, held, err);
  const char *s = n ? a[0].v.u.s : "";
  mpt_value r;
  int rc = xv_new_str(&r, s, strlen(s), held, err);
  return rc ? rc : xv_set_owned(o, r);
}

int xb_call(int builtin, xval *a, int n, xval *o, xbudget *held, mpt_error *err) {
  switch (builtin) {
  case B_RANGE: return b_range(a, n, o, held, err);
  case B_LIST: return b_list(a, n, o, held, err);
  case B_LEN: return b_len(&a[0].v, o, err);
  case B_MIN: return b_minmax(0, a, n, o, held, err);
  case B_MAX: return b_minmax(1, a, n, o, held, err);
  case B_ABS: return b_abs(&a[0].v, o, err);
  case B_INT: return b_int(a, n, o, err);
  case B_FLOAT: return b_float(a, n, o, err);
  case B_ROUND: return b_round(a, n, o, err);
  case B_SUM: return b_sum(a, n, o, held, err);
  case B_BOOL: return xv_set_owned(o, xv_b(n ? mpt_value_truthy(&a[0].v) : 0));
  case B_STR: return b_str(a, n, o, held, err);
  default: return mpt_error_set(err, MPT_ERR_INTERNAL, "internal error: unknown builtin");
  }
}
