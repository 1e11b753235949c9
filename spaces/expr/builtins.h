/* spaces/expr/builtins.h: the builtin functions of the expression language on their evaluated arguments
 * (builtins.c). Private to the files of spaces/expr/. */
#ifndef MPT_EXPR_BUILTINS_H
#define MPT_EXPR_BUILTINS_H
#include "spaces/sys/error.h"
#include "spaces/expr/value.h"

/* the builtin B_* (ops.h) over its n evaluated arguments a (the parser checked their number); the
 * result in o; what it allocates counts in held */
int xb_call(int builtin, xval *a, int n, xval *o, xbudget *held, mpt_error *err);
/* 0 for an int or bool, else a TypeError */
int xb_need_int(const mpt_value *v, mpt_error *err);
/* the TypeError of iterating over v */
int xb_not_iterable(const mpt_value *v, mpt_error *err);

#endif
