/* spaces/expr/tree.h: the compiled tree of an expression (struct mpt_expr): its nodes in one array, the
 * operand lists of variable length, the variables it reads; growing it (the parser) and freeing it; and
 * the spines of chains of left-associative operators, which every walker of the tree takes in a loop.
 * Private to the files of spaces/expr/. */
#ifndef MPT_EXPR_TREE_H
#define MPT_EXPR_TREE_H
#include <stdint.h>
#include "spaces/expr/ops.h"
#include "spaces/expr/value.h"

/* A node of the compiled tree. Children are indices into mpt_expr.nodes; variable-length operand lists
 * live in mpt_expr.args[first .. first+n). */
typedef struct xnode {
  uint8_t op;        /* xop */
  uint8_t long_chain; /* a chain operator with a spine of more than XT_SHORT_CHAIN below it (the parser's
                       * resolution sets it): the evaluator takes it in a loop, shorter ones by recursion
                       * (cheaper) */
  int32_t col;       /* 0-based byte offset of the operator/operand in the source */
  int32_t a, b, c;   /* children (or -1) */
  int32_t first, n;  /* operand list in args */
  int32_t slot;      /* X_VAR / X_LOCAL slot, X_COMP local slot, X_CALL builtin */
  char *name;        /* X_NAME (owned; freed after resolution) */
  mpt_value k;       /* X_CONST (owned by the expression) */
} xnode;

typedef struct xfast xfast; /* the numeric fast path of an expression (fast.h) */

typedef struct mpt_expr mpt_expr;
struct mpt_expr {
  char *src;
  xfast *fast;       /* numeric fast path (fast.c), NULL when the expression needs more */
  xnode *nodes;
  int32_t n_nodes, cap_nodes;
  int32_t *args;
  int32_t n_args, cap_args;
  int32_t root;
  int n_locals;      /* comprehension variable slots needed */
  int *uses;
  int n_uses;
  int n_names;
};

/* a new node of kind op at column col (children -1, no constant): its index, or -1 out of memory */
int xt_node_new(mpt_expr *e, int op, int col);
/* appends n operand indices to e->args: the index of the first, or -1 out of memory */
int xt_push_args(mpt_expr *e, const int32_t *v, int n);
/* frees the tree and e itself; e->fast must be freed (fast.h) before */
void xt_free(mpt_expr *e);

/* Chains of left-associative binary operators (a + b - c, a and b or c): the left operand of each is the
 * next one down, a left spine as long as the chain. Every walker of the tree takes a spine in a loop
 * (xt_spine), so that a chain of any length costs no recursion per term; only true nesting (parentheses,
 * right operands) recurses, and that is limited. */
static inline int xt_is_chain_op(int op) { return op >= X_ADD && op <= X_OR && op != X_POW; }
enum { XT_SHORT_CHAIN = 8 }; /* longer spines are "long": see xnode.long_chain */
typedef struct xspine {
  int32_t *v;        /* v[0] the top node, v[k + 1] the left operand of v[k] */
  int n, cap;
  int32_t small[32]; /* v for chains of up to 32 */
} xspine;
/* the spine from node ni (a chain operator) down; returns its bottom, the leftmost operand (evaluated
 * first), or -1 out of memory. xt_spine_free releases s. */
int32_t xt_spine(const mpt_expr *e, int32_t ni, xspine *s);
void xt_spine_free(xspine *s);

#endif
