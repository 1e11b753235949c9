/* spaces/expr/lex.c: the tokenizer of the expression language (spaces/expr/lex.h): numbers as Python
 * writes them (underscores, bases, exponents), quoted strings with their escapes, names, operators; what
 * Python has and the language does not (comments, triple quotes, string prefixes) is an error at its
 * column. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "spaces/expr/lex.h"

typedef xp_tok tok;

/* the tokenizer's state */
typedef struct P {
  const char *src;
  tok *t;
  int nt, cap;
  int *column;
  mpt_error *err;
} P;

int xp_fail(int *column, mpt_error *err, int code, int col, const char *fmt, const char *arg) {
  if (column) *column = col;
  char buf[256];
  snprintf(buf, sizeof buf, fmt, arg ? arg : "");
  mpt_error_set(err, code, "%s", buf);
  return -1;
}

int xp_nomem(int *column, mpt_error *err) {
  mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  if (column) *column = 0;
  return -1;
}

static int fail(P *p, int code, int col, const char *fmt, const char *arg) { return xp_fail(p->column, p->err, code, col, fmt, arg); }
static int nomem(P *p) { return xp_nomem(p->column, p->err); }

static int push_tok(P *p, tok t) {
  if (p->nt == p->cap) {
    int nc = p->cap ? p->cap * 2 : 32;
    tok *n = realloc(p->t, (size_t)nc * sizeof(tok));
    if (!n) { free(t.s); return nomem(p); }
    p->t = n;
    p->cap = nc;
  }
  p->t[p->nt++] = t;
  return 0;
}

static int is_id_start(int c) { return isalpha(c) || c == '_' || c >= 0x80; }
static int is_id_char(int c) { return isalnum(c) || c == '_' || c >= 0x80; }

int xp_is_name(const char *s) {
  if (!is_id_start((unsigned char)*s)) return 0;
  while (*++s)
    if (!is_id_char((unsigned char)*s)) return 0;
  return 1;
}

/* digits of base `base` with single underscores between digits; copies them (without '_') into buf */
static int scan_digits(const char *s, int *k, int base, char *buf, int *nb, int cap) {
  int start = *k, last_us = 0, nd = 0;
  for (;;) {
    char c = s[*k];
    int ok = base == 16 ? isxdigit((unsigned char)c) : (c >= '0' && c < '0' + (base < 10 ? base : 10));
    if (ok) {
      if (*nb < cap - 1) buf[(*nb)++] = c;
      nd++;
      last_us = 0;
      (*k)++;
    } else if (c == '_' && nd > 0 && !last_us) {
      last_us = 1;
      (*k)++;
    } else {
      break;
    }
  }
  if (last_us) return -1;          /* trailing underscore */
  buf[*nb] = '\0';
  return *k > start ? nd : 0;
}

static int lex_number(P *p, int *k, tok *t) {
  const char *s = p->src;
  int start = *k;
  char buf[512];
  int nb = 0;
  t->col = start;
  if (s[*k] == '0' && (s[*k + 1] == 'x' || s[*k + 1] == 'X' || s[*k + 1] == 'o' || s[*k + 1] == 'O' ||
                       s[*k + 1] == 'b' || s[*k + 1] == 'B')) {
    char c = (char)tolower((unsigned char)s[*k + 1]);
    int base = c == 'x' ? 16 : c == 'o' ? 8 : 2;
    *k += 2;
    if (s[*k] == '_') (*k)++;
    int nd = scan_digits(s, k, base, buf, &nb, sizeof buf);
    if (nd <= 0 || is_id_char((unsigned char)s[*k]))
      return fail(p, MPT_ERR_PARSE, start, "invalid %s literal", base == 16 ? "hexadecimal" : base == 8 ? "octal" : "binary");
    uint64_t v = 0;
    for (int i = 0; i < nb; i++) {
      int d = isdigit((unsigned char)buf[i]) ? buf[i] - '0' : tolower((unsigned char)buf[i]) - 'a' + 10;
      if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base) return fail(p, MPT_ERR_PARSE, start, "integer literal too large (integers are 64-bit)%s", "");
      v = v * (uint64_t)base + (uint64_t)d;
    }
    if (v > (uint64_t)INT64_MAX) return fail(p, MPT_ERR_PARSE, start, "integer literal too large (integers are 64-bit)%s", "");
    t->type = T_INT;
    t->i = (int64_t)v;
    t->len = *k - start;
    return 0;
  }
  int is_float = 0;
  if (s[*k] != '.') {
    if (scan_digits(s, k, 10, buf, &nb, sizeof buf) < 0) return fail(p, MPT_ERR_PARSE, start, "invalid decimal literal%s", "");
  }
  if (s[*k] == '.') {
    is_float = 1;
    (*k)++;
    if (nb < (int)sizeof buf - 1) buf[nb++] = '.';
    if (isdigit((unsigned char)s[*k]) && scan_digits(s, k, 10, buf, &nb, sizeof buf) < 0)
      return fail(p, MPT_ERR_PARSE, start, "invalid decimal literal%s", "");
  }
  if (s[*k] == 'e' || s[*k] == 'E') {
    int save = *k, savenb = nb;
    is_float = 1;
    (*k)++;
    if (nb < (int)sizeof buf - 1) buf[nb++] = 'e';
    if (s[*k] == '+' || s[*k] == '-') {
      if (nb < (int)sizeof buf - 1) buf[nb++] = s[*k];
      (*k)++;
    }
    if (!isdigit((unsigned char)s[*k])) {
      *k = save;
      nb = savenb;
      return fail(p, MPT_ERR_PARSE, start, "invalid decimal literal%s", "");
    }
    if (scan_digits(s, k, 10, buf, &nb, sizeof buf) < 0) return fail(p, MPT_ERR_PARSE, start, "invalid decimal literal%s", "");
  }
  buf[nb] = '\0';
  if (s[*k] == 'j' || s[*k] == 'J') return fail(p, MPT_ERR_PARSE, start, "complex numbers are not supported%s", "");
  t->len = *k - start;
  if (nb >= (int)sizeof buf - 1) /* its digits did not all fit: never read a number cut short */
    return fail(p, MPT_ERR_PARSE, start, "a number literal longer than mptune reads (510 digits)%s", "");
  if (is_float) {
    t->type = T_FLOAT;
    t->f = strtod(buf, NULL);
    return 0;
  }
  /* decimal integer: no leading zeros unless all zeros */
  if (nb > 1 && buf[0] == '0') {
    for (int i = 0; i < nb; i++)
      if (buf[i] != '0') return fail(p, MPT_ERR_PARSE, start, "leading zeros in decimal integer literals are not permitted%s", "");
  }
  uint64_t v = 0;
  for (int i = 0; i < nb; i++) {
    uint64_t d = (uint64_t)(buf[i] - '0');
    if (v > ((uint64_t)INT64_MAX - d) / 10) return fail(p, MPT_ERR_PARSE, start, "integer literal too large (integers are 64-bit)%s", "");
    v = v * 10 + d;
  }
  t->type = T_INT;
  t->i = (int64_t)v;
  return 0;
}

static int lex_string(P *p, int *k, tok *t) {
  const char *s = p->src;
  int start = *k;
  char q = s[*k];
  /* the literal's source up to its end (an unescaped quote, the end of the line or text) bounds what it
   * decodes to (the rest of the source would make many literals quadratic) */
  size_t cap = 1;
  for (int j = *k + 1; s[j] && s[j] != q && s[j] != '\n'; j++, cap++)
    if (s[j] == '\\' && s[j + 1]) j++, cap++;
  char *out = malloc(cap);
  if (!out) return nomem(p);
  size_t n = 0;
  (*k)++;
  for (;;) {
    char c = s[*k];
    if (c == '\0' || c == '\n') {
      free(out);
      return fail(p, MPT_ERR_PARSE, start, "unterminated string literal%s", "");
    }
    if (c == q) { (*k)++; break; }
    if (c == '\\') {
      char d = s[*k + 1];
      int adv = 2;
      switch (d) {
      case '\\': out[n++] = '\\'; break;
      case '\'': out[n++] = '\''; break;
      case '"': out[n++] = '"'; break;
      case 'n': out[n++] = '\n'; break;
      case 't': out[n++] = '\t'; break;
      case 'r': out[n++] = '\r'; break;
      case 'a': out[n++] = '\a'; break;
      case 'b': out[n++] = '\b'; break;
      case 'f': out[n++] = '\f'; break;
      case 'v': out[n++] = '\v'; break;
      case '\n': break;
      case 'x':
        if (isxdigit((unsigned char)s[*k + 2]) && isxdigit((unsigned char)s[*k + 3])) {
          char h[3] = {s[*k + 2], s[*k + 3], 0};
          int v = (int)strtol(h, NULL, 16);
          if (v == 0 || v > 0x7f) { free(out); return fail(p, MPT_ERR_PARSE, *k, "unsupported escape in string literal%s", ""); }
          out[n++] = (char)v;
          adv = 4;
        } else {
          free(out);
          return fail(p, MPT_ERR_PARSE, *k, "truncated \\xXX escape%s", "");
        }
        break;
      case '\0':
        free(out);
        return fail(p, MPT_ERR_PARSE, start, "unterminated string literal%s", "");
      default:
        if (d >= '0' && d <= '7') { free(out); return fail(p, MPT_ERR_PARSE, *k, "octal escapes are not supported%s", ""); }
        if (d == 'u' || d == 'U' || d == 'N') { free(out); return fail(p, MPT_ERR_PARSE, *k, "unicode escapes are not supported%s", ""); }
        out[n++] = '\\'; /* Python keeps unknown escapes */
        adv = 1;
        break;
      }
      *k += adv;
      continue;
    }
    out[n++] = c;
    (*k)++;
  }
  out[n] = '\0';
  t->type = T_STR;
  t->s = out;
  t->col = start;
  t->len = *k - start;
  return 0;
}

static int tokenize(P *p) {
  const char *s = p->src;
  int k = 0;
  static const char *ops2[] = {"**", "//", "<=", ">=", "==", "!=", "<<", ">>", "<>", NULL};
  for (;;) {
    while (s[k] == ' ' || s[k] == '\t' || s[k] == '\n' || s[k] == '\r' || s[k] == '\f' ||
           (s[k] == '\\' && s[k + 1] == '\n'))
      k += s[k] == '\\' ? 2 : 1;
    tok t;
    memset(&t, 0, sizeof t);
    t.col = k;
    char c = s[k];
    if (c == '\0') {
      t.type = T_EOF;
      return push_tok(p, t);
    }
    if (c == '#') return fail(p, MPT_ERR_PARSE, k, "comments are not supported%s", "");
    if (isdigit((unsigned char)c) || (c == '.' && isdigit((unsigned char)s[k + 1]))) {
      if (lex_number(p, &k, &t)) return -1;
    } else if (c == '\'' || c == '"') {
      if ((s[k + 1] == c && s[k + 2] == c)) return fail(p, MPT_ERR_PARSE, k, "triple-quoted strings are not supported%s", "");
      if (lex_string(p, &k, &t)) return -1;
    } else if (is_id_start((unsigned char)c)) {
      int st = k;
      while (is_id_char((unsigned char)s[k])) k++;
      if (s[k] == '\'' || s[k] == '"') {
        return fail(p, MPT_ERR_PARSE, st, "string prefixes are not supported%s", "");
      }
      t.type = T_NAME;
      t.len = k - st;
      t.s = strndup(s + st, (size_t)t.len);
      if (!t.s) return nomem(p);
    } else {
      int matched = 0;
      for (int i = 0; ops2[i]; i++)
        if (s[k] == ops2[i][0] && s[k + 1] == ops2[i][1]) {
          memcpy(t.op, ops2[i], 2);
          matched = 2;
          break;
        }
      if (!matched && strchr("()[],+-*/%<>&|^~=:.{}", c) && c) {
        t.op[0] = c;
        matched = 1;
      }
      if (!matched) {
        char ch[8];
        if ((unsigned char)c >= 0x20 && (unsigned char)c < 0x7f) snprintf(ch, sizeof ch, "%c", c);
        else snprintf(ch, sizeof ch, "\\x%02x", (unsigned char)c);
        return fail(p, MPT_ERR_PARSE, k, "invalid character '%s'", ch);
      }
      t.type = T_OP;
      t.len = matched;
      k += matched;
    }
    if (push_tok(p, t)) return -1;
  }
}

int xp_tokenize(const char *src, xp_tok **toks, int *n, int *column, mpt_error *err) {
  P p = {src, NULL, 0, 0, column, err};
  int rc = tokenize(&p);
  *toks = p.t;
  *n = p.nt;
  return rc;
}

void xp_toks_free(xp_tok *toks, int n) {
  for (int i = 0; i < n; i++) free(toks[i].s);
  free(toks);
}
