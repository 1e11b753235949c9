/* spaces/cond_split.c: a problem's conditions as the space builder enumerates them: each cut at its
 * top-level `and`s where that is exact (spaces/cond_split.h), so that every part is checked as soon as
 * the parameters it reads are assigned. */
#include "spaces/cond_split.h"
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

static int word_is(const char *w, size_t n, const char *k) { return strlen(k) == n && memcmp(w, k, n) == 0; }

/* Cuts src at its top-level `and`s when `and` is its lowest-precedence operator there (no top-level `or`,
 * `if`, `else`, `for`, `lambda`): then "A and B" holds exactly when A and B both hold, and an error in
 * either makes the configuration invalid either way. Returns the number of parts (0 or 1: no split); starts[j]
 * the byte of src where parts[j] begins. */
static int split_and(const char *src, char **parts, int *starts, int cap) {
  int depth = 0, n = 0;
  size_t start = 0, i = 0, len = strlen(src);
  while (i < len) {
    char c = src[i];
    if (c == '\'' || c == '"') {
      i++;
      while (i < len && src[i] != c) i += src[i] == '\\' ? 2 : 1;
      i++;
      continue;
    }
    if (c == '(' || c == '[' || c == '{') depth++;
    else if (c == ')' || c == ']' || c == '}') depth--;
    /* a name's bytes as the tokenizer takes them: letters, digits, '_' and any byte of a UTF-8
     * sequence (>= 0x80), so that "éandé" is one name, not é and é */
    if (isalpha((unsigned char)c) || c == '_' || isdigit((unsigned char)c) || (unsigned char)c >= 0x80) {
      size_t j = i;
      while (j < len && (isalnum((unsigned char)src[j]) || src[j] == '_' || src[j] == '.' || (unsigned char)src[j] >= 0x80))
        j++;
      if (depth == 0 && !isdigit((unsigned char)c)) {
        const char *w = src + i;
        size_t wl = j - i;
        if (word_is(w, wl, "or") || word_is(w, wl, "if") || word_is(w, wl, "else") || word_is(w, wl, "for") ||
            word_is(w, wl, "lambda"))
          goto nosplit;
        if (word_is(w, wl, "and")) {
          if (n + 1 >= cap) goto nosplit;
          starts[n] = (int)start;
          parts[n++] = strndup(src + start, i - start);
          start = j;
        }
      }
      i = j;
      continue;
    }
    i++;
  }
  if (n == 0) return 0;
  starts[n] = (int)start;
  parts[n++] = strdup(src + start);
  return n;
nosplit:
  for (int k = 0; k < n; k++) free(parts[k]);
  return 0;
}

void mpt_cond_list_free(mpt_cond_list *b) {
  for (int k = 0; k < b->n; k++)
    if (b->owned && b->owned[k]) {
      mpt_expr_free(b->cs[k].expr);
      free(b->cs[k].params);
      free(b->cs[k].source);
    }
  free(b->cs);
  free(b->orig);
  free(b->offset);
  free(b->owned);
  b->cs = NULL;
  b->n = 0;
}

int mpt_cond_list_split(const mpt_problem *p, mpt_cond_list *b) {
  memset(b, 0, sizeof *b);
  int cap = p->n_conditions + 1;
  b->cs = calloc((size_t)cap, sizeof(mpt_condition));
  b->orig = calloc((size_t)cap, sizeof(int));
  b->offset = calloc((size_t)cap, sizeof(int));
  b->owned = calloc((size_t)cap, 1);
  const char **names = malloc(sizeof(char *) * (size_t)(p->n_params + 1));
  if (!b->cs || !b->orig || !b->offset || !b->owned || !names) { free(names); return MPT_ERR_NOMEM; }
  for (int i = 0; i < p->n_params; i++) names[i] = p->params[i].name;
  for (int k = 0; k < p->n_conditions; k++) {
    char *parts[64];
    int starts[64];
    int np = split_and(p->conditions[k].source, parts, starts, 64);
    mpt_expr *ex[64];
    int ok = np > 1;
    for (int j = 0; j < np; j++) {
      int col;
      mpt_error e;
      ex[j] = NULL;
      if (!parts[j] || mpt_expr_compile_indexed(parts[j], names, p->n_params, p->param_index, &ex[j], &col, &e))
        ok = 0;
    }
    if (ok && b->n + np + (p->n_conditions - k - 1) > cap) { /* room for the rest, one each at least */
      cap = (b->n + np + p->n_conditions - k) * 2;
      mpt_condition *nc = realloc(b->cs, sizeof(mpt_condition) * (size_t)cap);
      int *no = nc ? realloc(b->orig, sizeof(int) * (size_t)cap) : NULL;
      if (nc) b->cs = nc;
      if (no) b->orig = no;
      int *nf = no ? realloc(b->offset, sizeof(int) * (size_t)cap) : NULL;
      if (nf) b->offset = nf;
      uint8_t *nw = nf ? realloc(b->owned, (size_t)cap) : NULL;
      if (nw) b->owned = nw;
      if (!nc || !no || !nf || !nw) ok = -1;
    }
    for (int j = 0; j < np; j++) {
      if (ok == 1) {
        mpt_condition *c = &b->cs[b->n];
        c->source = parts[j];
        c->expr = ex[j];
        c->n_params = mpt_expr_n_uses(ex[j]);
        c->params = malloc(sizeof(int) * (size_t)(c->n_params + 1));
        if (c->params && c->n_params) memcpy(c->params, mpt_expr_uses(ex[j]), sizeof(int) * (size_t)c->n_params);
        b->orig[b->n] = k;
        b->offset[b->n] = starts[j];
        b->owned[b->n] = 1;
        b->n++;
        if (!c->params) { free(names); return MPT_ERR_NOMEM; }
      } else {
        mpt_expr_free(ex[j]);
        free(parts[j]);
      }
    }
    if (ok < 0) { free(names); return MPT_ERR_NOMEM; }
    if (ok != 1) {
      b->cs[b->n] = p->conditions[k];
      b->orig[b->n] = k;
      b->offset[b->n] = 0;
      b->owned[b->n] = 0;
      b->n++;
    }
  }
  free(names);
  return 0;
}
