/* spaces/expr/parse.h: the parser of the expression language (parse.c): source text to the compiled tree
 * (tree.h), names resolved to variable slots, comprehension variables and builtins. Private to the files
 * of spaces/expr/. */
#ifndef MPT_EXPR_PARSE_H
#define MPT_EXPR_PARSE_H
#include "spaces/sys/error.h"
#include "spaces/sys/name_set.h"
#include "spaces/expr/tree.h"

/* Parses src into e->nodes (root in e->root), resolving names against names[] (through index when not
 * NULL) and comprehension variables. On error sets *column and err. */
int xp_parse(mpt_expr *e, const char *src, const char *const *names, int n_names, const mpt_name_set *index,
             int *column, mpt_error *err);
/* NULL when an expression can refer to a variable called name, else why not (mpt_expr_name_fault) */
const char *xp_name_fault(const char *name);

#endif
