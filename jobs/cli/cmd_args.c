/* jobs/cli/cmd_args.c: parsing of option values shared by the sub-commands (jobs/cli/cmd_*.c): one message
 * naming the option and the bad value; the up-front check that an output file can be written; the problem
 * as the commands load it and its space as they build it. */
#include <errno.h>
#include <libgen.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "coordinator/progress.h"
#include "coordinator/signals.h"
#include "evaluators/kernel_spec.h"
#include "jobs/cli/commands.h"
#include "spaces/space.h"
#include "spaces/sys/clock.h"
#include "jobs/output/outfile.h"
#include "spaces/json/json_keys.h"

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

int mpt_cmd_known(const char *cmd, const char *o, const char *const *known, mpt_error *err) {
  const char *meant = NULL;
  int best = 3;
  for (const char *const *k = known; *k; k++) {
    if (strcmp(o, *k) == 0) return 0;
    mpt_key_consider(o, *k, 3, &meant, &best); /* "--" alone is a prefix of every option */
  }
  char hint[160] = "";
  if (meant) snprintf(hint, sizeof hint, "; did you mean '%s'?", meant);
  return mpt_error_set(err, MPT_ERR_NAME, "unknown option '%s'%s (see mptune %s --help)", o, hint, cmd);
}

int mpt_cmd_parse_int(const char *opt, const char *s, int64_t lo, int64_t *out, mpt_error *err) {
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (errno || end == s || *end || v < lo)
    return mpt_error_set(err, MPT_ERR_VALUE, "%s: bad value '%s' (expected an integer >= %lld%s)", opt, s, (long long)lo,
                         errno == ERANGE ? " and <= 9223372036854775807" : "");
  *out = v;
  return 0;
}

/* 1 when s is a whole finite number (v) */
static int read_finite(const char *s, double *v) {
  char *end;
  errno = 0;
  *v = strtod(s, &end);
  return !errno && end != s && !*end && isfinite(*v);
}

int mpt_cmd_parse_num(const char *opt, const char *s, double lo, double hi, double *out, mpt_error *err) {
  double v;
  if (!read_finite(s, &v) || v < lo || v > hi)
    return mpt_error_set(err, MPT_ERR_VALUE, "%s: bad value '%s' (expected a number in [%g, %g])", opt, s, lo, hi);
  *out = v;
  return 0;
}

int mpt_cmd_parse_positive(const char *opt, const char *s, double hi, double *out, mpt_error *err) {
  double v;
  if (!read_finite(s, &v) || v <= 0 || v > hi)
    return mpt_error_set(err, MPT_ERR_VALUE, "%s: bad value '%s' (expected a number > 0 and <= %g)", opt, s, hi);
  *out = v;
  return 0;
}

int mpt_cmd_check_output(const char *opt, const char *path, mpt_error *err) {
  struct stat sb;
  if (!path) return 0;
  if (!path[0]) return mpt_error_set(err, MPT_ERR_VALUE, "%s: an empty file name", opt);
  if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
    return mpt_error_set(err, MPT_ERR_IO, "%s %s: is a directory (give a file name)", opt, path);
  if (mpt_outfile_special(path)) return 0; /* /dev/stdout, a pipe: written in place */
  char *copy = mpt_outfile_resolve(path); /* a link's target is what is written */
  if (!copy) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  const char *dir = dirname(copy); /* PATH.tmp.XXXXXX is written there, then renamed to PATH */
  int rc = 0;
  if (stat(dir, &sb) != 0)
    rc = mpt_error_set(err, MPT_ERR_IO, "%s %s: cannot write there: directory '%s' %s", opt, path, dir,
                       errno == ENOENT ? "does not exist" : strerror(errno));
  else if (!S_ISDIR(sb.st_mode))
    rc = mpt_error_set(err, MPT_ERR_IO, "%s %s: cannot write there: '%s' is not a directory", opt, path, dir);
  else if (access(dir, W_OK) != 0)
    rc = mpt_error_set(err, MPT_ERR_IO, "%s %s: cannot write there: directory '%s' is not writable (%s)", opt, path, dir,
                       strerror(errno));
  free(copy);
  return rc;
}

typedef struct space_watch_ctx {
  const char *cmd;
  int print;
  double start, last; /* when the build began; when the last line was printed (seconds after start) */
} space_watch_ctx;

static int space_watch(void *ctx, const char *doing, double done) {
  (void)doing;
  space_watch_ctx *w = ctx;
  double secs = mpt_clock_mono_s() - w->start;
  if (w->print && secs >= 5 && secs - w->last >= 5) {
    w->last = secs;
    char left[32];
    mpt_progress_duration(done > 0 ? secs * (1 - done) / done : NAN, left, sizeof left);
    fprintf(stderr, "mptune %s: building the search space: %.3g%% of its enumeration walked in %.0f s, about %s left\n",
            w->cmd, 100 * done, secs, left);
  }
  return mpt_signals_count() > 0;
}

int mpt_cmd_build_space(const char *cmd, int print, const mpt_problem *p, mpt_space **out, mpt_error *err) {
  space_watch_ctx ctx = {cmd, print, mpt_clock_mono_s(), 0};
  mpt_watch watch = {space_watch, &ctx};
  return mpt_space_build_watched(p, &watch, out, err);
}

int mpt_cmd_load_problem(const char *path, mpt_problem **out, mpt_error *err) {
  int rc = mpt_problem_load(path, out, err);
  return rc ? rc : mpt_kspec_check_keys(*out, err);
}
