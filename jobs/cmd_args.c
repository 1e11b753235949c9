/* jobs/cmd_args.c: parsing of option values shared by the sub-commands (jobs/cmd_*.c): one message
 * naming the option and the bad value. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include "jobs/commands.h"

const char *mpt_cmd_value(int argc, char **argv, int *i, mpt_error *err) {
  const char *o = argv[*i];
  if (*i + 1 >= argc) {
    mpt_error_set(err, MPT_ERR_VALUE, "%s needs a value", o);
    return NULL;
  }
  const char *v = argv[*i + 1];
  /* a long option where the value should be: the value was left out. Values never start with "--" and a
   * letter (a file of such a name can be given as ./--name). */
  if (v[0] == '-' && v[1] == '-' && ((v[2] >= 'a' && v[2] <= 'z') || (v[2] >= 'A' && v[2] <= 'Z'))) {
    mpt_error_set(err, MPT_ERR_VALUE, "%s needs a value, but is followed by the option '%s'", o, v);
    return NULL;
  }
  ++*i;
  return v;
}

int mpt_cmd_parse_int(const char *opt, const char *s, int64_t lo, int64_t *out, mpt_error *err) {
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (errno || end == s || *end || v < lo)
    return mpt_error_set(err, MPT_ERR_VALUE, "%s: bad value '%s' (expected an integer >= %lld)", opt, s, (long long)lo);
  *out = v;
  return 0;
}

int mpt_cmd_parse_num(const char *opt, const char *s, double lo, double hi, double *out, mpt_error *err) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || end == s || *end || !isfinite(v) || v < lo || v > hi)
    return mpt_error_set(err, MPT_ERR_VALUE, "%s: bad value '%s' (expected a number in [%g, %g])", opt, s, lo, hi);
  *out = v;
  return 0;
}
