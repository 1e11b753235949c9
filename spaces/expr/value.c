/* spaces/expr/value.c: Python values of the expression language (mpt_value): construction, copying,
 * repr/str, equality, ordering, truthiness and the arithmetic of int64/float/str/list with Python's
 * rules (floor division and modulo signs, true division, power, overflow as an error); and what one
 * evaluation holds (xbudget): every string and list an evaluation allocates is counted here, where it is
 * allocated, and given back where it is freed. */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "spaces/expr/ops.h"
#include "spaces/expr/value.h"

/* ------------------------------------------------------------------ construction */

mpt_value mpt_value_int(int64_t i) {
  mpt_value v;
  memset(&v, 0, sizeof v);
  v.kind = MPT_V_INT;
  v.u.i = i;
  return v;
}

mpt_value mpt_value_float(double f) {
  mpt_value v;
  memset(&v, 0, sizeof v);
  v.kind = MPT_V_FLOAT;
  v.u.f = f;
  return v;
}

mpt_value mpt_value_bool(int b) {
  mpt_value v;
  memset(&v, 0, sizeof v);
  v.kind = MPT_V_BOOL;
  v.u.i = b ? 1 : 0;
  return v;
}

mpt_value mpt_value_str(const char *s) {
  mpt_value v;
  memset(&v, 0, sizeof v);
  v.kind = MPT_V_STR;
  v.u.s = strdup(s ? s : "");
  if (!v.u.s) v.kind = MPT_V_NONE; /* out of memory: an empty value, never a crash */
  return v;
}

void mpt_value_free(mpt_value *v) {
  if (!v) return;
  if (v->kind == MPT_V_STR) {
    free(v->u.s);
  } else if (v->kind == MPT_V_LIST) {
    for (int64_t i = 0; i < v->u.list.n; i++) mpt_value_free(&v->u.list.items[i]);
    free(v->u.list.items);
  }
  memset(v, 0, sizeof *v);
  v->kind = MPT_V_NONE;
}

int mpt_value_copy(mpt_value *dst, const mpt_value *src) { return xv_copy(dst, src, NULL, NULL) ? MPT_ERR_NOMEM : 0; }

/* ------------------------------------------------------------------ what an evaluation holds */

static int64_t str_bytes(size_t len) { return (int64_t)len + 1 + XP_ALLOC_OVERHEAD; }
static int64_t list_bytes(int64_t n) { return n * (int64_t)sizeof(mpt_value) + XP_ALLOC_OVERHEAD; }

/* takes bytes more of b: 0, or the MemoryError of an evaluation over XP_MAX_HELD */
static int charge(xbudget *b, int64_t bytes, mpt_error *err) {
  if (!b) return 0;
  if (bytes > XP_MAX_HELD - b->held)
    return mpt_error_set(err, MPT_ERR_EVAL, "MemoryError: the expression's strings and lists would take more than %lld MiB",
                         (long long)(XP_MAX_HELD >> 20));
  b->held += bytes;
  return 0;
}

static void give_back(xbudget *b, int64_t bytes) {
  if (b) b->held -= bytes;
}

/* frees v; returns the bytes it held */
static int64_t free_held(mpt_value *v) {
  int64_t bytes = 0;
  if (v->kind == MPT_V_STR) {
    bytes = str_bytes(strlen(v->u.s));
    free(v->u.s);
  } else if (v->kind == MPT_V_LIST) {
    bytes = list_bytes(v->u.list.n);
    for (int64_t i = 0; i < v->u.list.n; i++) bytes += free_held(&v->u.list.items[i]);
    free(v->u.list.items);
  }
  memset(v, 0, sizeof *v);
  v->kind = MPT_V_NONE;
  return bytes;
}

void xv_free(mpt_value *v, xbudget *b) {
  if (b) give_back(b, free_held(v));
  else mpt_value_free(v);
}

int xv_alloc_str(mpt_value *out, size_t len, xbudget *b, mpt_error *err) {
  int rc = charge(b, str_bytes(len), err);
  if (rc) return rc;
  char *s = malloc(len + 1);
  if (!s) {
    give_back(b, str_bytes(len));
    return mpt_error_set(err, MPT_ERR_NOMEM, "MemoryError: out of memory");
  }
  s[len] = '\0';
  memset(out, 0, sizeof *out);
  out->kind = MPT_V_STR;
  out->u.s = s;
  return 0;
}

int xv_new_str(mpt_value *out, const char *s, size_t len, xbudget *b, mpt_error *err) {
  int rc = xv_alloc_str(out, len, b, err);
  if (!rc) memcpy(out->u.s, s, len);
  return rc;
}

int xv_copy(mpt_value *dst, const mpt_value *src, xbudget *b, mpt_error *err) {
  if (src->kind == MPT_V_STR) return xv_new_str(dst, src->u.s, strlen(src->u.s), b, err);
  if (src->kind != MPT_V_LIST) {
    *dst = *src;
    return 0;
  }
  int64_t n = src->u.list.n;
  mpt_value v;
  int rc = xv_new_list(&v, n, b, err);
  if (rc) return rc;
  for (int64_t i = 0; i < n; i++) {
    rc = xv_copy(&v.u.list.items[i], &src->u.list.items[i], b, err);
    if (rc) {
      xv_free(&v, b); /* the items not copied are NONE */
      return rc;
    }
  }
  *dst = v;
  return 0;
}

int xv_new_list(mpt_value *out, int64_t n, xbudget *b, mpt_error *err) {
  if (n > XP_MAX_LIST) return mpt_error_set(err, MPT_ERR_EVAL, "MemoryError: list of %lld items is too large", (long long)n);
  int rc = charge(b, list_bytes(n), err);
  if (rc) return rc;
  memset(out, 0, sizeof *out);
  out->kind = MPT_V_LIST;
  out->u.list.items = calloc((size_t)(n > 0 ? n : 1), sizeof(mpt_value));
  if (!out->u.list.items) {
    out->kind = MPT_V_NONE;
    give_back(b, list_bytes(n));
    return mpt_error_set(err, MPT_ERR_NOMEM, "MemoryError: out of memory");
  }
  out->u.list.n = n;
  return 0;
}

int xv_list_append(mpt_value *list, int64_t *cap, mpt_value item, xbudget *b, mpt_error *err) {
  if (list->u.list.n >= *cap) {
    int64_t nc = *cap < 8 ? 8 : *cap * 2;
    if (list->u.list.n >= XP_MAX_LIST) {
      xv_free(&item, b);
      return mpt_error_set(err, MPT_ERR_EVAL, "MemoryError: list is too large");
    }
    mpt_value *p = realloc(list->u.list.items, (size_t)nc * sizeof(mpt_value));
    if (!p) {
      xv_free(&item, b);
      return mpt_error_set(err, MPT_ERR_NOMEM, "MemoryError: out of memory");
    }
    list->u.list.items = p;
    *cap = nc;
  }
  int rc = charge(b, (int64_t)sizeof(mpt_value), err);
  if (rc) {
    xv_free(&item, b);
    return rc;
  }
  list->u.list.items[list->u.list.n++] = item;
  return 0;
}

/* ------------------------------------------------------------------ repr */

typedef struct sbuf {
  char *buf;
  int cap, len;
} sbuf;

static void sb_putn(sbuf *b, const char *s, int n) {
  for (int i = 0; i < n; i++) {
    if (b->len + 1 < b->cap) b->buf[b->len] = s[i];
    b->len++;
  }
  if (b->cap > 0) b->buf[b->len < b->cap ? b->len : b->cap - 1] = '\0';
}

static void sb_puts(sbuf *b, const char *s) { sb_putn(b, s, (int)strlen(s)); }

static int float_repr(double d, char *buf, int cap) {
  char out[64];
  if (isnan(d)) {
    snprintf(out, sizeof out, "nan");
  } else if (isinf(d)) {
    snprintf(out, sizeof out, "%s", d < 0 ? "-inf" : "inf");
  } else if (d == 0.0) {
    snprintf(out, sizeof out, "%s", signbit(d) ? "-0.0" : "0.0");
  } else {
    /* shortest round-trip digits (what Python's repr gives): for p = 1..17 the correctly rounded p
     * digits (%.{p-1}e), or, next to a power of two where the rounding interval is lopsided, the
     * p-digit neighbour one unit above or below */
    char digits[24];
    int nd = 0, neg = signbit(d) != 0, exp10 = 0;
    for (int p = 1; p <= 17; p++) {
      char e[48];
      snprintf(e, sizeof e, "%.*e", p - 1, fabs(d));
      nd = 0;
      const char *q = e;
      for (; *q && *q != 'e'; q++)
        if (*q >= '0' && *q <= '9') digits[nd++] = *q;
      digits[nd] = '\0';
      exp10 = atoi(q + 1);
      if (strtod(e, NULL) == fabs(d) || p == 17) break;
      int found = 0;
      for (int dir = 1; dir >= -1 && !found; dir -= 2) {
        char cand[24];
        int ce = exp10;
        memcpy(cand, digits, (size_t)nd + 1);
        int i = nd - 1;
        if (dir > 0) {
          while (i >= 0 && cand[i] == '9') cand[i--] = '0';
          if (i >= 0) cand[i]++;
          else { cand[0] = '1'; ce++; } /* 99..9 + 1 = 100..0 (p digits, one more decade) */
        } else {
          while (i >= 0 && cand[i] == '0') cand[i--] = '9';
          if (i >= 0) cand[i]--;
          if (cand[0] == '0') { /* 100..0 - 1 = 99..9, one decade less */
            for (int j = 0; j < nd; j++) cand[j] = '9';
            ce--;
          }
        }
        char t[64];
        snprintf(t, sizeof t, "%c.%se%d", cand[0], cand + 1, ce);
        if (strtod(t, NULL) == fabs(d)) {
          memcpy(digits, cand, (size_t)nd + 1);
          exp10 = ce;
          found = 1;
        }
      }
      if (found) break;
    }
    while (nd > 1 && digits[nd - 1] == '0') nd--;
    digits[nd] = '\0';
    int o = 0;
    if (neg) out[o++] = '-';
    if (exp10 >= -4 && exp10 < 16) {
      if (exp10 >= 0) {
        for (int i = 0; i <= exp10; i++) out[o++] = i < nd ? digits[i] : '0';
        out[o++] = '.';
        if (nd > exp10 + 1)
          for (int i = exp10 + 1; i < nd; i++) out[o++] = digits[i];
        else
          out[o++] = '0';
      } else {
        out[o++] = '0';
        out[o++] = '.';
        for (int i = 0; i < -exp10 - 1; i++) out[o++] = '0';
        for (int i = 0; i < nd; i++) out[o++] = digits[i];
      }
      out[o] = '\0';
    } else {
      out[o++] = digits[0];
      if (nd > 1) {
        out[o++] = '.';
        for (int i = 1; i < nd; i++) out[o++] = digits[i];
      }
      snprintf(out + o, sizeof out - (size_t)o, "e%c%02d", exp10 < 0 ? '-' : '+', exp10 < 0 ? -exp10 : exp10);
    }
  }
  return snprintf(buf, (size_t)(cap > 0 ? cap : 0), "%s", out);
}

static void sb_str_repr(sbuf *b, const char *s) {
  char quote = '\'';
  if (strchr(s, '\'') && !strchr(s, '"')) quote = '"';
  sb_putn(b, &quote, 1);
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    char tmp[8];
    if (*p == '\\') sb_puts(b, "\\\\");
    else if (*p == (unsigned char)quote) { tmp[0] = '\\'; tmp[1] = quote; sb_putn(b, tmp, 2); }
    else if (*p == '\n') sb_puts(b, "\\n");
    else if (*p == '\r') sb_puts(b, "\\r");
    else if (*p == '\t') sb_puts(b, "\\t");
    else if (*p < 0x20 || *p == 0x7f) { snprintf(tmp, sizeof tmp, "\\x%02x", *p); sb_puts(b, tmp); }
    else sb_putn(b, (const char *)p, 1);
  }
  sb_putn(b, &quote, 1);
}

static void sb_repr(sbuf *b, const mpt_value *v, int as_str) {
  char tmp[64];
  switch (v->kind) {
  case MPT_V_NONE: sb_puts(b, "None"); break;
  case MPT_V_BOOL: sb_puts(b, v->u.i ? "True" : "False"); break;
  case MPT_V_INT: snprintf(tmp, sizeof tmp, "%lld", (long long)v->u.i); sb_puts(b, tmp); break;
  case MPT_V_FLOAT: float_repr(v->u.f, tmp, sizeof tmp); sb_puts(b, tmp); break;
  case MPT_V_STR:
    if (as_str) sb_puts(b, v->u.s);
    else sb_str_repr(b, v->u.s);
    break;
  case MPT_V_LIST:
    sb_puts(b, "[");
    for (int64_t i = 0; i < v->u.list.n; i++) {
      if (i) sb_puts(b, ", ");
      sb_repr(b, &v->u.list.items[i], 0);
    }
    sb_puts(b, "]");
    break;
  }
}

int mpt_value_repr(const mpt_value *v, char *buf, int cap) {
  sbuf b = {buf, cap, 0};
  if (cap > 0) buf[0] = '\0';
  sb_repr(&b, v, 0);
  return b.len;
}

int mpt_value_str_repr(const mpt_value *v, char *buf, int cap) {
  sbuf b = {buf, cap, 0};
  if (cap > 0) buf[0] = '\0';
  sb_repr(&b, v, 1);
  return b.len;
}

const char *mpt_value_type_name(const mpt_value *v) {
  switch (v->kind) {
  case MPT_V_NONE: return "NoneType";
  case MPT_V_BOOL: return "bool";
  case MPT_V_INT: return "int";
  case MPT_V_FLOAT: return "float";
  case MPT_V_STR: return "str";
  case MPT_V_LIST: return "list";
  }
  return "?";
}

/* ------------------------------------------------------------------ comparison */

static inline int is_num(const mpt_value *v) { return xv_is_intlike(v) || v->kind == MPT_V_FLOAT; }

int xv_cmp_int_float(int64_t i, double f) {
  if (isnan(f)) return 2;
  if (f >= 9223372036854775808.0) return -1;
  if (f < -9223372036854775808.0) return 1;
  double t = trunc(f);
  int64_t ti = (int64_t)t;
  if (i < ti) return -1;
  if (i > ti) return 1;
  double fr = f - t;
  return fr > 0 ? -1 : (fr < 0 ? 1 : 0);
}

/* numeric three-way comparison: -1, 0, 1, or 2 when unordered */
static int num_cmp(const mpt_value *a, const mpt_value *b) {
  if (xv_is_intlike(a) && xv_is_intlike(b)) return a->u.i < b->u.i ? -1 : (a->u.i > b->u.i ? 1 : 0);
  if (xv_is_intlike(a)) return xv_cmp_int_float(a->u.i, b->u.f);
  if (xv_is_intlike(b)) {
    int c = xv_cmp_int_float(b->u.i, a->u.f);
    return c == 2 ? 2 : -c;
  }
  if (a->u.f < b->u.f) return -1;
  if (a->u.f > b->u.f) return 1;
  if (a->u.f == b->u.f) return 0;
  return 2;
}

int mpt_value_equal(const mpt_value *a, const mpt_value *b) {
  if (is_num(a) && is_num(b)) return num_cmp(a, b) == 0;
  if (a->kind != b->kind) return 0;
  switch (a->kind) {
  case MPT_V_NONE: return 1;
  case MPT_V_STR: return strcmp(a->u.s, b->u.s) == 0;
  case MPT_V_LIST:
    if (a->u.list.n != b->u.list.n) return 0;
    for (int64_t i = 0; i < a->u.list.n; i++)
      if (!mpt_value_equal(&a->u.list.items[i], &b->u.list.items[i])) return 0;
    return 1;
  default: return 0;
  }
}

int mpt_value_truthy(const mpt_value *v) {
  switch (v->kind) {
  case MPT_V_NONE: return 0;
  case MPT_V_BOOL:
  case MPT_V_INT: return v->u.i != 0;
  case MPT_V_FLOAT: return v->u.f != 0.0;
  case MPT_V_STR: return v->u.s[0] != '\0';
  case MPT_V_LIST: return v->u.list.n != 0;
  }
  return 0;
}

double mpt_value_as_double(const mpt_value *v, int *ok) {
  if (xv_is_intlike(v)) { if (ok) *ok = 1; return (double)v->u.i; }
  if (v->kind == MPT_V_FLOAT) { if (ok) *ok = 1; return v->u.f; }
  if (ok) *ok = 0;
  return 0.0;
}

static const char *cmp_sym(int cmp) {
  static const char *s[] = {"<", "<=", ">", ">=", "==", "!=", "in", "not in"};
  return s[cmp];
}

static int apply_order(int cmp, int c) { /* c in -1,0,1,2 */
  if (c == 2) return 0;
  switch (cmp) {
  case C_LT: return c < 0;
  case C_LE: return c <= 0;
  case C_GT: return c > 0;
  case C_GE: return c >= 0;
  }
  return 0;
}

static int contains(const mpt_value *container, const mpt_value *x, int *res, mpt_error *err) {
  if (container->kind == MPT_V_LIST) {
    *res = 0;
    for (int64_t i = 0; i < container->u.list.n; i++)
      if (mpt_value_equal(&container->u.list.items[i], x)) { *res = 1; break; }
    return 0;
  }
  if (container->kind == MPT_V_STR) {
    if (x->kind != MPT_V_STR)
      return mpt_error_set(err, MPT_ERR_EVAL, "TypeError: 'in <string>' requires string as left operand, not %s", mpt_value_type_name(x));
    *res = strstr(container->u.s, x->u.s) != NULL;
    return 0;
  }
  return mpt_error_set(err, MPT_ERR_EVAL, "TypeError: argument of type '%s' is not iterable", mpt_value_type_name(container));
}

int xv_compare(int cmp, const mpt_value *l, const mpt_value *r, int *res, mpt_error *err) {
  switch (cmp) {
  case C_EQ: *res = mpt_value_equal(l, r); return 0;
  case C_NE: *res = !mpt_value_equal(l, r); return 0;
  case C_IN: return contains(r, l, res, err);
  case C_NOTIN: {
    int rc = contains(r, l, res, err);
    *res = !*res;
    return rc;
  }
  default: break;
  }
  if (is_num(l) && is_num(r)) { *res = apply_order(cmp, num_cmp(l, r)); return 0; }
  if (l->kind == MPT_V_STR && r->kind == MPT_V_STR) {
    int c = strcmp(l->u.s, r->u.s);
    *res = apply_order(cmp, c < 0 ? -1 : (c > 0 ? 1 : 0));
    return 0;
  }
  if (l->kind == MPT_V_LIST && r->kind == MPT_V_LIST) {
    int64_t n = l->u.list.n < r->u.list.n ? l->u.list.n : r->u.list.n;
    for (int64_t i = 0; i < n; i++)
      if (!mpt_value_equal(&l->u.list.items[i], &r->u.list.items[i]))
        return xv_compare(cmp, &l->u.list.items[i], &r->u.list.items[i], res, err);
    int64_t a = l->u.list.n, b = r->u.list.n;
    *res = apply_order(cmp, a < b ? -1 : (a > b ? 1 : 0));
    return 0;
  }
  return mpt_error_set(err, MPT_ERR_EVAL, "TypeError: '%s' not supported between instances of '%s' and '%s'", cmp_sym(cmp),
                       mpt_value_type_name(l), mpt_value_type_name(r));
}

/* ------------------------------------------------------------------ arithmetic */

int xv_overflow(mpt_error *err) {
  return mpt_error_set(err, MPT_ERR_EVAL, "OverflowError: integer result does not fit in 64 bits");
}

int xv_int_floordiv(int64_t a, int64_t b, int64_t *q, mpt_error *err) {
  if (b == 0) return mpt_error_set(err, MPT_ERR_EVAL, "ZeroDivisionError: integer division or modulo by zero");
  if (b == -1) {
    if (a == INT64_MIN) return xv_overflow(err);
    *q = -a;
    return 0;
  }
  int64_t d = a / b, m = a % b;
  if (m != 0 && ((m < 0) != (b < 0))) d--;
  *q = d;
  return 0;
}

int xv_int_mod(int64_t a, int64_t b, int64_t *r, mpt_error *err) {
  if (b == 0) return mpt_error_set(err, MPT_ERR_EVAL, "ZeroDivisionError: integer modulo by zero");
  if (b == -1) { *r = 0; return 0; }
  int64_t m = a % b;
  if (m != 0 && ((m < 0) != (b < 0))) m += b;
  *r = m;
  return 0;
}

/* int / int correctly rounded, as Python: exact in double when both fit in 53 bits; otherwise the
 * quotient of |a| * 2^s by |b| is taken in 128-bit integers with at least 63 significant bits and a
 * sticky bit for a non-zero remainder, so the one rounding to double (__floatuntidf, to nearest even)
 * is the correct one; the scaling back by 2^-s is exact. */
double xv_int_truediv(int64_t a, int64_t b) {
  const int64_t lim = (int64_t)1 << 53;
  if ((a <= lim && a >= -lim && b <= lim && b >= -lim) || a == 0) return (double)a / (double)b;
  int neg = (a < 0) != (b < 0);
  unsigned __int128 ua = a < 0 ? (unsigned __int128)(-(__int128)a) : (unsigned __int128)a;
  unsigned __int128 ub = b < 0 ? (unsigned __int128)(-(__int128)b) : (unsigned __int128)b;
  int bits = 0;
  for (unsigned __int128 t = ua; t; t >>= 1) bits++;
  int s = 126 - bits;
  unsigned __int128 x = ua << s;
  unsigned __int128 q = x / ub, r = x % ub;
  if (r) q |= 1;
  double d = ldexp((double)q, -s);
  return neg ? -d : d;
}

int xv_float_floordiv(double vx, double wx, double *q, mpt_error *err) {
  if (wx == 0.0) return mpt_error_set(err, MPT_ERR_EVAL, "ZeroDivisionError: float floor division by zero");
  double mod = fmod(vx, wx);
  double div = (vx - mod) / wx;
  if (mod != 0.0) {
    if ((wx < 0) != (mod < 0)) div -= 1.0;
  }
  double fd;
  if (div != 0.0) {
    fd = floor(div);
    if (div - fd > 0.5) fd += 1.0;
  } else {
    fd = copysign(0.0, vx / wx);
  }
  *q = fd;
  return 0;
}

int xv_float_mod(double vx, double wx, double *r, mpt_error *err) {
  if (wx == 0.0) return mpt_error_set(err, MPT_ERR_EVAL, "ZeroDivisionError: float modulo");
  double mod = fmod(vx, wx);
  if (mod != 0.0) {
    if ((wx < 0) != (mod < 0)) mod += wx;
  } else {
    mod = copysign(0.0, wx);
  }
  *r = mod;
  return 0;
}

/* float ** float as CPython's float_pow */
int xv_float_pow(double iv, double iw, double *r, mpt_error *err) {
  if (iw == 0.0) { *r = 1.0; return 0; }
  if (isnan(iv)) { *r = iw == 0.0 ? 1.0 : iv; return 0; }
  if (isnan(iw)) { *r = iv == 1.0 ? 1.0 : iw; return 0; }
  if (isinf(iw)) {
    double a = fabs(iv);
    if (a == 1.0) *r = 1.0;
    else if ((iw > 0.0) == (a > 1.0)) *r = fabs(iw);
    else *r = 0.0;
    return 0;
  }
  int iw_is_odd = fmod(fabs(iw), 2.0) == 1.0;
  if (isinf(iv)) {
    if (iw > 0.0) *r = iw_is_odd ? iv : fabs(iv);
    else *r = iw_is_odd ? copysign(0.0, iv) : 0.0;
    return 0;
  }
  if (iv == 0.0) {
    if (iw < 0.0) return mpt_error_set(err, MPT_ERR_EVAL, "ZeroDivisionError: 0.0 cannot be raised to a negative power");
    *r = iw_is_odd ? iv : 0.0;
    return 0;
  }
  int negate = 0;
  if (iv < 0.0) {
    if (iw != floor(iw))
      return mpt_error_set(err, MPT_ERR_EVAL, "ValueError: negative number raised to a fractional power (complex result) is not supported");
    iv = -iv;
    negate = iw_is_odd;
  }
  if (iv == 1.0) { *r = negate ? -1.0 : 1.0; return 0; }
  double x = pow(iv, iw);
  if (isinf(x)) return mpt_error_set(err, MPT_ERR_EVAL, "OverflowError: (34, 'Numerical result out of range')");
  *r = negate ? -x : x;
  return 0;
}

int xv_int_pow(int64_t a, int64_t b, mpt_value *out, mpt_error *err) {
  if (b < 0) {
    double r = 0.0;
    int rc = xv_float_pow((double)a, (double)b, &r, err);
    if (rc) return rc;
    *out = mpt_value_float(r);
    return 0;
  }
  int64_t result = 1, base = a;
  while (b) {
    if (b & 1)
      if (__builtin_mul_overflow(result, base, &result)) return xv_overflow(err);
    b >>= 1;
    if (b && __builtin_mul_overflow(base, base, &base)) return xv_overflow(err);
  }
  *out = mpt_value_int(result);
  return 0;
}

static const char *op_sym(int op) {
  switch (op) {
  case X_ADD: return "+";
  case X_SUB: return "-";
  case X_MUL: return "*";
  case X_DIV: return "/";
  case X_FLOORDIV: return "//";
  case X_MOD: return "%";
  case X_POW: return "** or pow()";
  case X_BAND: return "&";
  case X_BOR: return "|";
  case X_BXOR: return "^";
  case X_LSHIFT: return "<<";
  case X_RSHIFT: return ">>";
  }
  return "?";
}

static int unsupported(int op, const mpt_value *l, const mpt_value *r, mpt_error *err) {
  return mpt_error_set(err, MPT_ERR_EVAL, "TypeError: unsupported operand type(s) for %s: '%s' and '%s'", op_sym(op),
                       mpt_value_type_name(l), mpt_value_type_name(r));
}

/* the items of the lists l and then r copied into out, a list of their number of items */
static int copy_items(mpt_value *out, const mpt_value *l, const mpt_value *r, xbudget *held, mpt_error *err) {
  int64_t a = l->u.list.n;
  for (int64_t i = 0; i < out->u.list.n; i++) {
    int rc = xv_copy(&out->u.list.items[i], i < a ? &l->u.list.items[i] : &r->u.list.items[i - a], held, err);
    if (rc) {
      xv_free(out, held);
      return rc;
    }
  }
  return 0;
}

static int repeat(const mpt_value *seq, int64_t times, mpt_value *out, xbudget *held, mpt_error *err) {
  if (times < 0) times = 0;
  if (seq->kind == MPT_V_STR ? seq->u.s[0] == '\0' : seq->u.list.n == 0) times = 0; /* '' * 10**18 */
  if (seq->kind == MPT_V_STR) {
    size_t len = strlen(seq->u.s);
    if (len && (uint64_t)times > (uint64_t)XP_MAX_STR / len)
      return mpt_error_set(err, MPT_ERR_EVAL, "MemoryError: string is too large");
    size_t total = len * (size_t)times;
    int rc = xv_alloc_str(out, total, held, err);
    if (rc) return rc;
    if (total) memcpy(out->u.s, seq->u.s, len);
    for (size_t done = len; done < total; done *= 2) /* doubling what is there: few large copies */
      memcpy(out->u.s + done, out->u.s, total - done < done ? total - done : done);
    return 0;
  }
  int64_t n = seq->u.list.n;
  if (n && times > XP_MAX_LIST / n) return mpt_error_set(err, MPT_ERR_EVAL, "MemoryError: list is too large");
  int rc = xv_new_list(out, n * times, held, err);
  if (rc) return rc;
  for (int64_t t = 0; t < times; t++)
    for (int64_t i = 0; i < n; i++) {
      rc = xv_copy(&out->u.list.items[t * n + i], &seq->u.list.items[i], held, err);
      if (rc) {
        xv_free(out, held);
        return rc;
      }
    }
  return 0;
}

static int concat(const mpt_value *l, const mpt_value *r, mpt_value *out, xbudget *held, mpt_error *err) {
  if (l->kind == MPT_V_STR) {
    size_t a = strlen(l->u.s), b = strlen(r->u.s);
    if (a + b > XP_MAX_STR) return mpt_error_set(err, MPT_ERR_EVAL, "MemoryError: string is too large");
    int rc = xv_alloc_str(out, a + b, held, err);
    if (rc) return rc;
    memcpy(out->u.s, l->u.s, a);
    memcpy(out->u.s + a, r->u.s, b);
    return 0;
  }
  int rc = xv_new_list(out, l->u.list.n + r->u.list.n, held, err);
  return rc ? rc : copy_items(out, l, r, held, err);
}

int xv_binop(int op, const mpt_value *l, const mpt_value *r, mpt_value *out, xbudget *held, mpt_error *err) {
  if (xv_is_intlike(l) && xv_is_intlike(r)) {
    int64_t a = l->u.i, b = r->u.i, x = 0;
    switch (op) {
    case X_ADD: if (__builtin_add_overflow(a, b, &x)) return xv_overflow(err); *out = mpt_value_int(x); return 0;
    case X_SUB: if (__builtin_sub_overflow(a, b, &x)) return xv_overflow(err); *out = mpt_value_int(x); return 0;
    case X_MUL: if (__builtin_mul_overflow(a, b, &x)) return xv_overflow(err); *out = mpt_value_int(x); return 0;
    case X_DIV:
      if (b == 0) return mpt_error_set(err, MPT_ERR_EVAL, "ZeroDivisionError: division by zero");
      *out = mpt_value_float(xv_int_truediv(a, b));
      return 0;
    case X_FLOORDIV: if (xv_int_floordiv(a, b, &x, err)) return MPT_ERR_EVAL; *out = mpt_value_int(x); return 0;
    case X_MOD: if (xv_int_mod(a, b, &x, err)) return MPT_ERR_EVAL; *out = mpt_value_int(x); return 0;
    case X_POW: return xv_int_pow(a, b, out, err);
    case X_BAND: case X_BOR: case X_BXOR:
      x = op == X_BAND ? (a & b) : op == X_BOR ? (a | b) : (a ^ b);
      *out = (l->kind == MPT_V_BOOL && r->kind == MPT_V_BOOL) ? mpt_value_bool((int)x) : mpt_value_int(x);
      return 0;
    case X_LSHIFT:
      if (b < 0) return mpt_error_set(err, MPT_ERR_EVAL, "ValueError: negative shift count");
      if (a == 0) { *out = mpt_value_int(0); return 0; }
      if (b >= 64) return xv_overflow(err);
      {
        __int128 w = (__int128)a * ((__int128)1 << b);
        if (w > INT64_MAX || w < INT64_MIN) return xv_overflow(err);
        *out = mpt_value_int((int64_t)w);
      }
      return 0;
    case X_RSHIFT:
      if (b < 0) return mpt_error_set(err, MPT_ERR_EVAL, "ValueError: negative shift count");
      *out = mpt_value_int(b >= 63 ? (a < 0 ? -1 : 0) : (a >> b));
      return 0;
    }
  }
  if (is_num(l) && is_num(r)) {
    double a = l->kind == MPT_V_FLOAT ? l->u.f : (double)l->u.i;
    double b = r->kind == MPT_V_FLOAT ? r->u.f : (double)r->u.i;
    double x = 0.0;
    switch (op) {
    case X_ADD: *out = mpt_value_float(a + b); return 0;
    case X_SUB: *out = mpt_value_float(a - b); return 0;
    case X_MUL: *out = mpt_value_float(a * b); return 0;
    case X_DIV:
      if (b == 0.0) return mpt_error_set(err, MPT_ERR_EVAL, "ZeroDivisionError: float division by zero");
      *out = mpt_value_float(a / b);
      return 0;
    case X_FLOORDIV: if (xv_float_floordiv(a, b, &x, err)) return MPT_ERR_EVAL; *out = mpt_value_float(x); return 0;
    case X_MOD: if (xv_float_mod(a, b, &x, err)) return MPT_ERR_EVAL; *out = mpt_value_float(x); return 0;
    case X_POW: if (xv_float_pow(a, b, &x, err)) return MPT_ERR_EVAL; *out = mpt_value_float(x); return 0;
    default: return unsupported(op, l, r, err);
    }
  }
  if (op == X_ADD && l->kind == r->kind && (l->kind == MPT_V_STR || l->kind == MPT_V_LIST)) return concat(l, r, out, held, err);
  if (op == X_MUL) {
    if ((l->kind == MPT_V_STR || l->kind == MPT_V_LIST) && xv_is_intlike(r)) return repeat(l, r->u.i, out, held, err);
    if ((r->kind == MPT_V_STR || r->kind == MPT_V_LIST) && xv_is_intlike(l)) return repeat(r, l->u.i, out, held, err);
  }
  return unsupported(op, l, r, err);
}

int xv_unop(int op, const mpt_value *a, mpt_value *out, mpt_error *err) {
  const char *sym = op == X_NEG ? "-" : op == X_POS ? "+" : "~";
  if (op == X_NOT) { *out = mpt_value_bool(!mpt_value_truthy(a)); return 0; }
  if (xv_is_intlike(a)) {
    if (op == X_NEG) {
      if (a->u.i == INT64_MIN) return xv_overflow(err);
      *out = mpt_value_int(-a->u.i);
    } else if (op == X_POS) {
      *out = mpt_value_int(a->u.i);
    } else {
      *out = mpt_value_int(~a->u.i);
    }
    return 0;
  }
  if (a->kind == MPT_V_FLOAT && op != X_INV) {
    *out = mpt_value_float(op == X_NEG ? -a->u.f : a->u.f);
    return 0;
  }
  return mpt_error_set(err, MPT_ERR_EVAL, "TypeError: bad operand type for unary %s: '%s'", sym, mpt_value_type_name(a));
}
