/* spaces/expr/ops.h: the operation codes of the expression language, codes only: the node kinds of the
 * compiled tree (the operators among them), the comparison codes of a comparison chain and the builtin
 * functions. The values' arithmetic (value.c) takes its operator codes from here, the tree (tree.h) its
 * node kinds, the builtins (builtins.c) their numbers. Private to the files of spaces/expr/: the public
 * headers (expr.h, value.h) do not include it. */
#ifndef MPT_EXPR_OPS_H
#define MPT_EXPR_OPS_H

/* Node kinds of the compiled tree (tree.h). */
typedef enum xop {
  X_CONST,      /* k */
  X_VAR,        /* slot: vars[slot] */
  X_LOCAL,      /* slot: comprehension variable */
  X_NAME,       /* unresolved name (parser only); name */
  X_NEG, X_POS, X_INV, X_NOT,                   /* a */
  X_ADD, X_SUB, X_MUL, X_DIV, X_FLOORDIV, X_MOD, X_POW,
  X_BAND, X_BOR, X_BXOR, X_LSHIFT, X_RSHIFT,    /* a op b */
  X_AND, X_OR,                                  /* a, b (short-circuit, return operand) */
  X_CMP,        /* chain: args[first..first+n) operands, args[first+n..first+2n-1) comparison codes */
  X_IFELSE,     /* a if b else c */
  X_INDEX,      /* a[b] */
  X_LIST,       /* [args...] */
  X_COMP,       /* [a for local slot in b if args...] */
  X_CALL,       /* builtin slot(args...) */
} xop;

/* The comparisons of a chain (a < b <= c) and `in`. */
typedef enum xcmp { C_LT, C_LE, C_GT, C_GE, C_EQ, C_NE, C_IN, C_NOTIN } xcmp;

/* The builtin functions (the slot of an X_CALL node). */
typedef enum xbuiltin {
  B_RANGE, B_LIST, B_LEN, B_MIN, B_MAX, B_ABS, B_INT, B_FLOAT, B_ROUND, B_SUM, B_BOOL, B_STR,
  B_COUNT
} xbuiltin;

#endif
