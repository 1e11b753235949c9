/* evaluators/kernel_spec_eval.h: shared by reading a KernelSpecification (kernel_spec.c) and computing a
 * launch (kernel_launch.c); not part of the evaluators' contract (that is evaluators/kernel_spec.h). */
#ifndef MPT_KERNEL_SPEC_EVAL_H
#define MPT_KERNEL_SPEC_EVAL_H
#include <stdint.h>
#include "evaluators/kernel_spec.h"

/* sets err to "FILE:LINE:COL: KernelSpecification.FIELD: message" (FIELD may be ""; LINE:COL where its value
 * is in the file, mpt_json_locate) and returns code */
int mpt_ks_err(mpt_error *err, int code, const mpt_problem *p, const char *field, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

/* Evaluates e with vars to a number: *d the value, *i the exact integer when integral (either may be
 * NULL); need_int rejects a non-integral result. Messages name the field, the expression and, when
 * config is not "", the configuration. */
int mpt_ks_eval_number(const mpt_kernel_spec *ks, const mpt_expr *e, const mpt_value *vars, const char *field,
                       const char *config, int need_int, double *d, int64_t *i, mpt_error *err);
#endif
