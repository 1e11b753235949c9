/* spaces/cond_split.h: a problem's conditions split at their top-level `and`s, for the space builder
 * (spaces/space_build.c). A condition "A and B" whose lowest-precedence operator at top level is `and` (no
 * top-level `or`, `if`, `else`, `for`, `lambda`) holds exactly when A and B both hold, and an error in
 * either makes the configuration invalid either way: so its parts are checked separately, each as soon as
 * the parameters it reads are assigned. Conditions that cannot be split (or whose parts do not compile)
 * are kept as they are. */
#ifndef MPT_COND_SPLIT_H
#define MPT_COND_SPLIT_H
#include <stdint.h>
#include "spaces/t1.h"

typedef struct mpt_cond_list {
  int n;              /* conditions */
  mpt_condition *cs;
  int *orig;          /* cs[k] comes from the problem's conditions[orig[k]] */
  int *offset;        /* cs[k].source begins at this byte of conditions[orig[k]].source */
  uint8_t *owned;     /* cs[k].expr/params/source allocated here (a part), else the problem's */
} mpt_cond_list;

/* the conditions of p, split; 0 or MPT_ERR_NOMEM (call mpt_cond_list_free either way) */
int mpt_cond_list_split(const mpt_problem *p, mpt_cond_list *out);
void mpt_cond_list_free(mpt_cond_list *l);
#endif
