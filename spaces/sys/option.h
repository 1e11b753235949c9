/* spaces/sys/option.h: the option tables of strategies and evaluators: one row per option a part takes
 * (`--option key=value` for a strategy, `--evaluator-option key=value` for an evaluator), with its type,
 * default, range or choices and help, and the checks and parsing of a value against its row. */
#ifndef MPT_OPTION_H
#define MPT_OPTION_H
#include <stddef.h>

typedef enum mpt_opt_type { MPT_OPT_INT, MPT_OPT_DOUBLE, MPT_OPT_STRING, MPT_OPT_BOOL } mpt_opt_type;

/* One option a part accepts. `choices` (strings only) is a '|'-separated list or NULL. A table ends with a
 * row whose key is NULL. */
typedef struct mpt_option_spec {
  const char *key;
  mpt_opt_type type;
  const char *default_value;
  const char *help;
  const char *choices;
  double min, max;       /* inclusive range for numbers; ignored when min > max */
} mpt_option_spec;

/* "int", "float", "string", "bool" */
const char *mpt_option_type_name(mpt_opt_type t);
/* "key (type, default D[, range a..b][, one of x|y])" of one option */
void mpt_option_describe(const mpt_option_spec *o, char *buf, size_t cap);
/* 0 when v fits o (its type, range, choices), else -1 with why ("'x' is not an integer") */
int mpt_option_check_value(const mpt_option_spec *o, const char *v, char *why, size_t cap);
/* the row of table whose key is key (NULL: none; table may be NULL) */
const mpt_option_spec *mpt_option_find(const mpt_option_spec *table, const char *key);

/* parsing as the checks accept: 0 and *out, or -1 */
int mpt_option_parse_int(const char *v, long long *out);
int mpt_option_parse_double(const char *v, double *out);
int mpt_option_parse_bool(const char *v, int *out); /* 1/true/yes/on, 0/false/no/off, any case */

#endif
