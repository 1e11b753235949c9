/* spaces/expr/fast.h: the numeric fast path of the expression language (fast.c): a numeric expression
 * compiled a second time into a statically typed tree of C functions. Private to the files of
 * spaces/expr/. */
#ifndef MPT_EXPR_FAST_H
#define MPT_EXPR_FAST_H
#include <stdint.h>
#include "spaces/expr/tree.h"

/* the Python kind of a fast result: int, bool, float, or int or bool depending on the variables' kinds */
enum { XF_PK_INT, XF_PK_BOOL, XF_PK_FLOAT, XF_PK_INTBOOL };
xfast *xf_compile(const mpt_expr *e);  /* NULL when not applicable */
void xf_free(xfast *f);
/* 0: result in *iout or *fout (*is_float) with its Python kind XF_PK_*; 1: use the general evaluator */
int xf_run(const xfast *f, const mpt_value *vars, int *is_float, int *pykind, double *fout, int64_t *iout);

#endif
