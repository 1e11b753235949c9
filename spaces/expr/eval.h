/* spaces/expr/eval.h: the general evaluator of compiled expressions (eval.c) and the constant folding that
 * uses it at compile time. Private to the files of spaces/expr/. */
#ifndef MPT_EXPR_EVAL_H
#define MPT_EXPR_EVAL_H
#include "spaces/sys/error.h"
#include "spaces/expr/tree.h"

/* Evaluates node of e with vars (and the comprehension variables in locals, XP_MAX_LOCALS of them) into
 * out. fault, when not NULL: set to the column of the innermost node whose evaluation failed (-1 when
 * none). */
int xe_eval(const mpt_expr *e, int32_t node, const mpt_value *vars, mpt_value *locals, xval *out,
            mpt_error *err, int32_t *fault);
/* constant folding of subtrees without variables; never fails (errors stay for run time) */
void xe_fold(mpt_expr *e);

#endif
