/* spaces/expr/tree.c: the compiled tree of an expression (tree.h): growing its node and operand arrays,
 * freeing it, and the spine of a chain of left-associative operators. */
#include <stdlib.h>
#include <string.h>
#include "spaces/expr/tree.h"

int xt_node_new(mpt_expr *e, int op, int col) {
  if (e->n_nodes == e->cap_nodes) {
    int32_t nc = e->cap_nodes ? e->cap_nodes * 2 : 32;
    xnode *n = realloc(e->nodes, (size_t)nc * sizeof(xnode));
    if (!n) return -1;
    e->nodes = n;
    e->cap_nodes = nc;
  }
  xnode *n = &e->nodes[e->n_nodes];
  memset(n, 0, sizeof *n);
  n->op = (uint8_t)op;
  n->col = col;
  n->a = n->b = n->c = -1;
  n->slot = -1;
  n->k.kind = MPT_V_NONE;
  return e->n_nodes++;
}

int xt_push_args(mpt_expr *e, const int32_t *v, int n) {
  if (e->n_args + n > e->cap_args) {
    int32_t nc = e->cap_args ? e->cap_args : 32;
    while (nc < e->n_args + n) nc *= 2;
    int32_t *a = realloc(e->args, (size_t)nc * sizeof(int32_t));
    if (!a) return -1;
    e->args = a;
    e->cap_args = nc;
  }
  int first = e->n_args;
  if (n > 0) memcpy(e->args + first, v, (size_t)n * sizeof(int32_t));
  e->n_args += n;
  return first;
}

void xt_free(mpt_expr *e) {
  if (!e) return;
  for (int32_t i = 0; i < e->n_nodes; i++) {
    free(e->nodes[i].name);
    mpt_value_free(&e->nodes[i].k);
  }
  free(e->nodes);
  free(e->args);
  free(e->uses);
  free(e->src);
  free(e);
}

int32_t xt_spine(const mpt_expr *e, int32_t ni, xspine *s) {
  s->v = s->small;
  s->n = 0;
  s->cap = (int)(sizeof s->small / sizeof s->small[0]);
  for (; ni >= 0 && xt_is_chain_op(e->nodes[ni].op); ni = e->nodes[ni].a) {
    if (s->n == s->cap) {
      int32_t *v = malloc(2 * (size_t)s->cap * sizeof *v);
      if (!v) {
        xt_spine_free(s);
        return -1;
      }
      memcpy(v, s->v, (size_t)s->n * sizeof *v);
      if (s->v != s->small) free(s->v);
      s->v = v;
      s->cap *= 2;
    }
    s->v[s->n++] = ni;
  }
  return ni;
}

void xt_spine_free(xspine *s) {
  if (s->v != s->small) free(s->v);
  s->v = s->small;
  s->n = 0;
}
