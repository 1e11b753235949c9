/* jobs/job/job_resume.c: rank 0's run log at open: a new log's place checked, or a resumed log read and checked
 * (not written: its new session begins when the run does) with the settings the run goes on with taken from it
 * (seed, budget, strategy and options, evaluator options, the T4 path) and replayed and real measurements kept apart. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "jobs/job/job_internal.h"
#include "jobs/output/outfile.h"

/* a run log's record of some options and where a resume puts them: the setting (field, sep between two options:
 * the strategy's "options" a=1,b=2, the "evaluator_options" one a line), what messages call them, and the job's
 * options (opts, *n: the command line's) with the split copy that keeps the logged ones (*buf) */
typedef struct logged_options {
  const char *field, *what;
  char sep;
  const char **opts;
  int *n;
  char **buf;
} logged_options;

/* --resume: the options the log records (logged: its lo->field setting, NULL when it has none) against the
 * command line's: with none given and some logged, the run goes on with the logged ones (*taken = 1). 0 or <0 */
static int resume_options(mpt_job *job, const logged_options *lo, const char *logged, int *taken, mpt_error *err) {
  *taken = 0;
  if (!logged || !logged[0] || *lo->n > 0) return 0;
  free(*lo->buf);
  if (!(*lo->buf = strdup(logged))) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  const char sep[2] = {lo->sep, '\0'};
  for (char *save = NULL, *kv = strtok_r(*lo->buf, sep, &save); kv; kv = strtok_r(NULL, sep, &save)) {
    if (*lo->n >= MPT_JOB_MAX_OPTS)
      return mpt_error_set(err, MPT_ERR_VALUE, "%s: too many logged %s (max %d)", job->o.log, lo->what, MPT_JOB_MAX_OPTS);
    lo->opts[(*lo->n)++] = kv;
  }
  *taken = 1;
  return 0;
}

/* --resume: the run goes on with the strategy it was started with and, unless --option is given, its
 * options (the log's "strategy" and "options" settings; job->logged_opts keeps the split copy of the
 * options); a --strategy given instead is used, with a note */
static int resume_strategy(mpt_job *job, mpt_error *err) {
  mpt_job_options *o = &job->o;
  const char *st = mpt_runlog_meta(job->log, "strategy");
  if (!st || !st[0]) return 0; /* lost with damaged metadata: --strategy or the default */
  if (o->strategy_given) {
    if (strcmp(st, o->strategy) != 0)
      printf("note: %s was started with strategy '%s'; continuing with '%s'\n", o->log, st, o->strategy);
    return 0;
  }
  o->strategy = st;
  const logged_options lo = {"options", "options", ',', o->opts, &o->n_opts, &job->logged_opts};
  const char *logged = mpt_runlog_meta(job->log, lo.field);
  int given = o->n_opts, take;
  int rc = resume_options(job, &lo, logged, &take, err);
  if (rc) return rc;
  printf("note: continuing with the strategy %s was started with, '%s'%s%s%s\n", o->log, st,
         take ? " (options " : given ? " (with the --option given)" : "", take ? logged : "", take ? ")" : "");
  return 0;
}

/* options kept one a line, as a note shows them: "a=1, b=2" */
static void options_shown(const char *lines, char *buf, size_t cap) {
  size_t at = 0;
  for (const char *c = lines; *c && at + 3 < cap; c++) {
    if (*c == '\n') buf[at++] = ',', buf[at++] = ' ';
    else buf[at++] = *c;
  }
  buf[at] = '\0';
}

/* --resume: the run goes on measuring with the evaluator options the log records ("evaluator_options") unless
 * --evaluator-option is given: then with those, with a note when they differ (as for the strategy's options);
 * logged ones the evaluator does not take (another --evaluator now) are refused, saying how to go on */
static int resume_evaluator_options(mpt_job *job, mpt_error *err) {
  mpt_job_options *o = &job->o;
  const logged_options lo = {"evaluator_options", "evaluator options", '\n', o->eval_opts, &o->n_eval_opts,
                             &job->eval_opts_buf};
  const char *logged = mpt_runlog_meta(job->log, lo.field);
  if (!logged) return 0; /* a log written before they were recorded, or lost with damaged metadata */
  char *now = mpt_job_evaluator_options_text(o), was[1024], given[1024];
  if (!now) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  options_shown(logged, was, sizeof was);
  options_shown(now, given, sizeof given);
  int same = strcmp(now, logged) == 0, take;
  free(now);
  int rc = resume_options(job, &lo, logged, &take, err);
  if (rc) return rc;
  if (!same && !take)
    printf("note: %s was measured with %s%s%s; continuing with the --evaluator-option given, '%s'\n", o->log,
           was[0] ? "the evaluator options '" : "no evaluator option", was, was[0] ? "'" : "", given);
  if (!take) return 0;
  const mpt_evaluator_type *t = mpt_evaluator_find(o->evaluator);
  for (int i = 0; rc == 0 && t && i < o->n_eval_opts; i++)
    if ((rc = mpt_evaluator_check_option(t, o->eval_opts[i], err)) != 0)
      mpt_error_prefix(err, "%s was measured with the evaluator option %s, which --evaluator %s does not take (give "
                       "--evaluator-option to go on with others)", o->log, o->eval_opts[i], o->evaluator);
  if (rc == 0) printf("note: continuing with the evaluator options %s was measured with, '%s'\n", o->log, was);
  return rc;
}

/* 1 when c begins an entry "CLASS=" of a log's simulated classes (a class name has no comma, and no slash) */
static int sim_entry_at(const char *c) {
  size_t name = strcspn(c, "=,/\t\n");
  return name > 0 && c[name] == '=';
}

/* the file the log's simulated classes sim ("CLASS=FILE,CLASS=FILE") give class cls, into buf; 0 when none */
static int logged_sim_file(const char *sim, const char *cls, char *buf, size_t cap) {
  for (const char *c = sim; c && sim_entry_at(c);) {
    const char *file = strchr(c, '=') + 1, *end = file;
    while (*end && !(*end == ',' && sim_entry_at(end + 1))) end++;
    if ((size_t)(file - 1 - c) == strlen(cls) && strncmp(c, cls, strlen(cls)) == 0) {
      snprintf(buf, cap, "%.*s", (int)(end - file), file);
      return 1;
    }
    c = *end ? end + 1 : NULL;
  }
  return 0;
}

/* a log of simulated classes resumed with simulated classes: each class given another file than it was run with
 * is said (its records then come from two files); a file given by another path, a class added or left out are not */
static void warn_changed_classes(const mpt_job *job, const char *sim) {
  const mpt_job_options *o = &job->o;
  for (int i = 0; i < o->n_sim; i++) {
    char was[4096];
    const char *cls = o->sim_class[i], *now = o->sim_file[i];
    if (!logged_sim_file(sim, cls, was, sizeof was) || strcmp(was, now) == 0 || mpt_same_file(was, now)) continue;
    fprintf(stderr, "mptune %s: warning: %s was run with --simulate %s=%s; resuming it with --simulate %s=%s: class "
            "%s's records come from both files (those logged before replayed from the first, the new ones from the "
            "second)\n", job->cmd, o->log, cls, was, cls, now, cls);
  }
}

/* replayed and real measurements never in one log; another replay file (a partial one completed, or
 * another device's; of simulated classes, the class whose file changed) is said */
static int check_resumed_simulate(mpt_job *job, mpt_error *err) {
  const mpt_job_options *o = &job->o;
  const char *ev = mpt_runlog_meta(job->log, "evaluator");
  if (ev && strcmp(ev, MPT_JOB_VIRTUAL_EVALUATOR) == 0)
    return mpt_error_set(err, MPT_ERR_STATE, "%s is a projection on a virtual clock (--virtual-workers): its times "
                         "are virtual, so it is not resumed (start a new log)", o->log);
  const char *sim = mpt_runlog_meta(job->log, "simulate"); /* "" or absent: real evaluations */
  char now[4096];
  mpt_job_sim_text(o, now, sizeof now);
  if (o->n_sim > 0 && sim && strcmp(sim, now) == 0) return 0; /* the same simulated classes */
  if (sim && (sim[0] != 0) != (o->simulate != NULL))
    return mpt_error_set(err, MPT_ERR_STATE, "%s was run %s%s; resuming it %s would mix replayed and real "
                         "measurements in one log (start a new log for that)", o->log,
                         sim[0] ? "with --simulate " : "on real evaluations", sim,
                         o->simulate ? "with --simulate" : "on real evaluations");
  if (sim && o->n_sim > 0 && sim_entry_at(sim)) warn_changed_classes(job, sim);
  else if (sim && sim[0] && strcmp(sim, o->simulate) != 0 && !mpt_same_file(sim, o->simulate))
    fprintf(stderr, "mptune %s: warning: %s was run with --simulate %s; resuming it with --simulate %s puts the "
            "measurements of both files in one log\n", job->cmd, o->log, sim, o->simulate);
  return 0;
}

/* --resume: the T4 path the log records; without --t4 the export goes there, checked as a --t4 given is
 * (an output never replaces an input) */
static int resume_t4(mpt_job *job, mpt_error *err) {
  const char *t4 = mpt_runlog_meta(job->log, "t4");
  if (!t4 || !t4[0]) return 0;
  if (!(job->t4_logged = strdup(t4))) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  if (job->o.t4) return 0;
  job->o.t4 = job->t4_shown = job->t4_logged;
  job->t4_from_log = 1;
  if (mpt_same_file(job->o.log, job->o.t4))
    return mpt_error_set(err, MPT_ERR_VALUE, "%s records --t4 %s, the log itself", job->o.log, job->o.t4);
  return mpt_job_check_outputs(job, err);
}

/* --resume: the log read and checked only (a resume refused here or by a worker leaves it as it was; its
 * new session begins when the run does), and the settings the run goes on with taken from it: the seed,
 * the budget (a --time given bounds it too), the strategy and its options */
static int resume_log(mpt_job *job, mpt_error *err) {
  mpt_job_options *o = &job->o;
  int collect = o->collect;
  int64_t extend_to = o->reopen ? INT64_MAX : collect || !job->budget_given ? 0 : o->budget;
  int rc = mpt_runlog_open_checked(o->log, job->space, extend_to, job->cmd, &job->log,
                                   err); /* a log of the other command is refused there, finished or not */
  if (rc) return rc;
  job->n_resumed = mpt_runlog_count(job->log); /* the coordinator reads them (resume_each) */
  if (mpt_runlog_extended(job->log) && o->budget > mpt_runlog_measured_class(job->log))
    printf("note: %s had finished with %lld evaluations; extending it to %lld\n", o->log,
           (long long)mpt_runlog_measured_class(job->log), (long long)o->budget);
  if (!o->seed_given) {
    const char *s = mpt_runlog_meta(job->log, "seed");
    if (s) o->seed = strtoull(s, NULL, 10), o->seed_given = 1;
  }
  if ((rc = check_resumed_simulate(job, err)) != 0) return rc;
  if (!collect && !job->budget_given) {
    const char *b = mpt_runlog_meta(job->log, "budget");
    long long v = b ? strtoll(b, NULL, 10) : 0;
    if (v > 0) o->budget = v;
    else if (o->time_budget <= 0)
      return mpt_error_set(err, MPT_ERR_VALUE, "%s records no evaluation budget%s: give --budget N or --time SECONDS", o->log,
                           mpt_runlog_recovered(job->log) ? " (it was lost with the damaged metadata; the recovered records are kept)" : "");
  }
  if ((rc = resume_t4(job, err)) != 0) return rc;
  if ((rc = resume_evaluator_options(job, err)) != 0) return rc;
  return collect ? 0 : resume_strategy(job, err);
}

/* rank 0: the log to resume, or the place of a new one (created once every rank is ready) */
int mpt_job_open_log(mpt_job *job, mpt_error *err) {
  const mpt_job_options *o = &job->o;
  struct stat sb;
  int exists = stat(o->log, &sb) == 0;
  if (o->resume) {
    if (!exists) return mpt_error_set(err, MPT_ERR_IO, "--resume: run log '%s' does not exist", o->log);
    return resume_log(job, err);
  }
  if (exists && !o->force)
    return mpt_error_set(err, MPT_ERR_STATE, "run log '%s' already exists: use --resume to continue that run or --force to overwrite it", o->log);
  if (exists && S_ISDIR(sb.st_mode)) return mpt_error_set(err, MPT_ERR_IO, "run log '%s' is a directory", o->log);
  if (exists) return mpt_runlog_check_unlocked(o->log, err); /* --force: not over a log another run is writing */
  return 0;
}
