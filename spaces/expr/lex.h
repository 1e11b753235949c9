/* spaces/expr/lex.h: the tokens of the expression language and the tokenizer (spaces/expr/lex.c), used by
 * the parser (spaces/expr/parse.c). Private to the files of spaces/expr/. */
#ifndef MPT_EXPR_LEX_H
#define MPT_EXPR_LEX_H
#include <stdint.h>
#include "spaces/sys/error.h"

enum { T_EOF, T_INT, T_FLOAT, T_STR, T_NAME, T_OP };

typedef struct xp_tok {
  int type;
  int col, len;
  int64_t i;
  double f;
  char *s;      /* T_STR value / T_NAME text (owned) */
  char op[4];   /* T_OP text */
} xp_tok;

/* The tokens of src, the last one T_EOF: 0, or -1 with err set and *column (when not NULL) at the
 * 0-based column of the error. *toks and *n hold the tokens read either way: free them with xp_toks_free. */
int xp_tokenize(const char *src, xp_tok **toks, int *n, int *column, mpt_error *err);
void xp_toks_free(xp_tok *toks, int n);
/* 1 when all of s is one name token (a letter, '_' or a non-ASCII byte, then those or digits) */
int xp_is_name(const char *s);

/* sets err and *column (when not NULL) to col; fmt takes one string, arg ("" when NULL); returns -1 */
int xp_fail(int *column, mpt_error *err, int code, int col, const char *fmt, const char *arg);
/* "out of memory", at column 0; returns -1 */
int xp_nomem(int *column, mpt_error *err);

#endif
