/* spaces/sys/name_set.h: a set of names, each with an integer (its index in the caller's table), for lookups in
 * constant expected time: open addressing with linear probing over a power-of-two table kept at most half
 * full. The names are not copied: they must outlive the set. */
#ifndef MPT_NAME_SET_H
#define MPT_NAME_SET_H
#include <stddef.h>

typedef struct mpt_name_set {
  size_t cap;          /* slots, a power of two (0 before the first add) */
  size_t n;            /* names held */
  const char **names;  /* per slot: the name, NULL when free */
  int *values;         /* per slot: the name's integer */
} mpt_name_set;

/* An empty set with room for `expected` names before it grows; 0 or MPT_ERR_NOMEM. */
int mpt_name_set_init(mpt_name_set *s, size_t expected);
/* Adds name with value; when the name is there already, leaves the set as it is and sets *existing (if
 * not NULL) to its value and returns 1. Else 0, or MPT_ERR_NOMEM. */
int mpt_name_set_add(mpt_name_set *s, const char *name, int value, int *existing);
/* The value of name, or -1 when it is not in the set. */
int mpt_name_set_find(const mpt_name_set *s, const char *name);
void mpt_name_set_free(mpt_name_set *s);

#endif
