/* spaces/t1.h: a T1 problem file read into memory: the tuning parameters (values evaluated from their
 * Python `Values` expressions), the compiled conditions, the Search and Budget blocks, and the parsed JSON
 * (kept for the KernelSpecification, which evaluators read). */
#ifndef MPT_T1_H
#define MPT_T1_H
#include <stdint.h>
#include "spaces/expr/expr.h"
#include "spaces/sys/error.h"

struct cJSON;
struct mpt_name_set;

/* Most tuning parameters a problem may have: far above any real problem (tens of parameters), low enough that
 * a file with hundreds of thousands is refused at once rather than read and built for minutes. */
enum { MPT_T1_MAX_PARAMS = 10000 };

typedef enum mpt_ptype { MPT_P_INT, MPT_P_UINT, MPT_P_FLOAT, MPT_P_BOOL, MPT_P_STRING } mpt_ptype;

typedef struct mpt_param {
  char *name;
  mpt_ptype type;
  int n_values;
  mpt_value *values;     /* n_values values, in the order given by `Values` */
  double *numeric;       /* numeric value per index (int/float/bool); index for strings */
  int default_index;     /* index of `Default` in values, or -1 when absent/not a member */
} mpt_param;

typedef struct mpt_condition {
  char *source;          /* the expression text */
  mpt_expr *expr;        /* compiled against the parameter names (slot = parameter index) */
  int n_params;          /* parameters it reads, found from the expression */
  int *params;           /* their indices, ascending */
} mpt_condition;

/* The T1 `Search` block as read (what it means to mptune, the strategy and its options, is the job's to say:
 * spaces/ knows no strategy) */
typedef struct mpt_t1_search {
  char *name;            /* Search.Name; NULL when the file has no Search block */
  int n_attributes;
  char **options;        /* Search.Attributes[i] as "Name=Value" (a number as written in the file, a string as it
                            is, a bool as true/false); NULL where the Value is none of these (an object, a list,
                            null), which no --option key=value can give: why[i] says so */
  const char **why;      /* with options[i] NULL: "an object", "a list", "null" */
} mpt_t1_search;

/* The T1 `Budget` block: each kind at most once, ConfigurationCount and ConfigurationFraction not both */
typedef struct mpt_t1_budget {
  int64_t count;         /* ConfigurationCount: evaluations (>= 1); 0: not given */
  double fraction;       /* ConfigurationFraction: of the valid configurations, in (0, 1]; 0: not given */
  double seconds;        /* TuningDuration: seconds (> 0); 0: not given */
  int count_at, fraction_at, seconds_at; /* the index in Budget[] of each, -1 when not given */
} mpt_t1_budget;

typedef struct mpt_problem {
  char *path;            /* as given */
  char *dir;             /* directory of the file (KernelFile is relative to it) */
  char *text;            /* the whole file, for the run log */
  char *name;            /* General.BenchmarkName, or the file's base name */
  struct cJSON *json;    /* parsed document (owned) */
  int n_params;
  mpt_param *params;
  struct mpt_name_set *param_index; /* parameter name -> index (spaces/sys/name_set.h) */
  int n_conditions;
  mpt_condition *conditions;
  int n_warnings;
  char **warnings;       /* e.g. a condition's `Parameters` list disagreeing with its expression */
  mpt_t1_search search;  /* the Search block (search.name NULL: none) */
  mpt_t1_budget budget;  /* the Budget block (every *_at -1: none) */
} mpt_problem;

/* Reads and checks a T1 file. Errors name the file, the field (e.g. "TuningParameters[2].Values" or
 * "Conditions[1].Expression") and, for expressions, show the expression with a caret. */
int mpt_problem_load(const char *path, mpt_problem **out, mpt_error *err);
/* Same from a string (path is used in messages and for relative files; may be "<string>"). */
int mpt_problem_parse(const char *text, const char *path, mpt_problem **out, mpt_error *err);
void mpt_problem_free(mpt_problem *p);
/* An expression's error at field of p's file (err set by the expression reader or evaluator, col the byte
 * of src it is about, or -1) as "FILE:LINE:COL: FIELD: message", the expression and a caret under col;
 * LINE:COL that byte in the file (mpt_json_locate). Returns err's code (rc without err). For compile
 * errors (t1.c, kernel_spec.c) and run-time errors (space_build.c, kernel_spec_eval.c) alike. */
int mpt_problem_expr_error(const mpt_problem *p, mpt_error *err, int rc, const char *field, const char *src, int col);
/* index of a parameter by name, -1 when unknown (constant time) */
int mpt_problem_param_index(const mpt_problem *p, const char *name);

#endif
