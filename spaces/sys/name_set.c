/* spaces/sys/name_set.c: the hash set of names (contract in spaces/sys/name_set.h), FNV-1a hashed, linear probing. */
#include "spaces/sys/name_set.h"
#include "spaces/sys/error.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t hash_name(const char *s) {
  uint64_t h = 1469598103934665603ULL;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
  return h ^ (h >> 29); /* the low bits pick the slot: fold the high ones in */
}

/* the slot of name, or of the free slot where it would go */
static size_t slot_of(const mpt_name_set *s, const char *name) {
  size_t mask = s->cap - 1, i = (size_t)hash_name(name) & mask;
  while (s->names[i] && strcmp(s->names[i], name) != 0) i = (i + 1) & mask;
  return i;
}

/* a table of cap slots (a power of two) holding what s holds */
static int rehash(mpt_name_set *s, size_t cap) {
  mpt_name_set t = {.cap = cap, .n = s->n};
  t.names = calloc(cap, sizeof *t.names);
  t.values = malloc(cap * sizeof *t.values);
  if (!t.names || !t.values) {
    free(t.names);
    free(t.values);
    return MPT_ERR_NOMEM;
  }
  for (size_t k = 0; k < s->cap; k++)
    if (s->names[k]) {
      size_t i = slot_of(&t, s->names[k]);
      t.names[i] = s->names[k];
      t.values[i] = s->values[k];
    }
  mpt_name_set_free(s);
  *s = t;
  return 0;
}

int mpt_name_set_init(mpt_name_set *s, size_t expected) {
  memset(s, 0, sizeof *s);
  size_t cap = 16;
  while (cap < 2 * expected && cap < ((size_t)1 << (8 * sizeof(size_t) - 2))) cap *= 2;
  return rehash(s, cap);
}

int mpt_name_set_add(mpt_name_set *s, const char *name, int value, int *existing) {
  if (2 * (s->n + 1) > s->cap) {
    int rc = rehash(s, s->cap ? 2 * s->cap : 16);
    if (rc) return rc;
  }
  size_t i = slot_of(s, name);
  if (s->names[i]) {
    if (existing) *existing = s->values[i];
    return 1;
  }
  s->names[i] = name;
  s->values[i] = value;
  s->n++;
  return 0;
}

int mpt_name_set_find(const mpt_name_set *s, const char *name) {
  if (!s->cap) return -1;
  size_t i = slot_of(s, name);
  return s->names[i] ? s->values[i] : -1;
}

void mpt_name_set_free(mpt_name_set *s) {
  free(s->names);
  free(s->values);
  s->names = NULL;
  s->values = NULL;
  s->cap = s->n = 0;
}
