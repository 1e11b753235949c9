/* spaces/expr/builtins.h: the builtin functions of the expression language on their evaluated arguments
 * (builtins.c). Private to the files of spaces/expr/. */
#ifndef MPT_EXPR_BUILTINS_H
#define MPT_EXPR_BUILTINS_H
#include "spaces/sys/error.h"
#include "spaces/expr/value.h"

/* 0 for an int or bool, else a TypeError */
int xb_need_int(const mpt_value *v, mpt_error *err);
/* the builtins int(), float(), round() over their n evaluated arguments a; the result in o */
int xb_int(xval *a, int n, xval *o, mpt_error *err);
int xb_float(xval *a, int n, xval *o, mpt_error *err);
int xb_round(xval *a, int n, xval *o, mpt_error *err);

#endif
