/* jobs/job/job_report.c: what rank 0 says a job came to: why it stopped, the counts and rates, the best (per
 * device class, confirmed) against the default, the Pareto front and the portability table, the log finished,
 * the T4 export; and the process exit status. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "jobs/job/job_internal.h"
#include "jobs/output/class_summary.h"
#include "jobs/output/outfile.h"
#include "jobs/output/portability.h"
#include "spaces/space.h"
#include "spaces/sys/signame.h"

static const char *reason_text(const char *reason) {
  if (!reason) return "?";
  if (strcmp(reason, "budget") == 0) return "evaluation budget reached";
  if (strcmp(reason, "time") == 0) return "time budget reached";
  if (strcmp(reason, "exhausted") == 0) return "every configuration evaluated";
  if (strcmp(reason, "signal") == 0) return "stopped by a signal";
  if (strcmp(reason, "waiting") == 0)
    return "every device class with workers is done; a class without workers in this session waits (continue with "
           "--resume where it has workers)";
  return reason;
}

/* "label: name=value,..." of configuration id, however long (mpt_space_format says how long) */
static void print_config(const char *label, const mpt_space *space, int64_t id) {
  char small[1024], *cfg = small;
  int need = mpt_space_format(space, id, small, (int)sizeof small);
  if (need >= (int)sizeof small && (cfg = malloc((size_t)need + 1)) != NULL) mpt_space_format(space, id, cfg, need + 1);
  printf("%s: %s\n", label, cfg ? cfg : small);
  if (cfg != small) free(cfg);
}

/* why the run stopped; a stop by a signal or by the time budget leaves it resumable: more time (or the rest
 * of an exhaustive collection) is one --resume away */
static void print_stop(const mpt_coord_result *res) {
  if (strcmp(res->reason, "signal") == 0 && res->stopped_rank > 0 && res->signal > 0)
    printf("stopped: worker rank %d received signal %d (%s); %lld evaluations logged (%lld cancelled in flight); "
           "continue with --resume\n", res->stopped_rank, res->signal, mpt_signal_name(res->signal),
           (long long)res->done, (long long)res->cancelled);
  else if (strcmp(res->reason, "signal") == 0 && res->signal == 0)
    printf("stopped: worker rank %d was stopped by a signal of its own (it cancelled its evaluation); %lld evaluations "
           "logged (%lld cancelled in flight); continue with --resume\n",
           res->stopped_rank, (long long)res->done, (long long)res->cancelled);
  else if (strcmp(res->reason, "signal") == 0)
    printf("stopped: signal %d received; %lld evaluations logged (%lld cancelled in flight); continue with --resume\n",
           res->signal, (long long)res->done, (long long)res->cancelled);
  else if (strcmp(res->reason, "time") == 0) {
    char cancelled[96] = "";
    if (res->cancelled > 0)
      snprintf(cancelled, sizeof cancelled, " (%lld cancelled: still running --grace seconds later)", (long long)res->cancelled);
    printf("stopped: time budget reached; %lld evaluations logged%s; more with --resume [--time SECONDS]\n",
           (long long)res->done, cancelled);
    if (res->ask_stopped[0] && res->new_evals == 0) /* a resume with as little time makes no progress either */
      printf("note: the time ran out before the strategy proposed anything (%s); a resume starts that over, so "
             "give it a longer --time\n", res->ask_stopped);
  }
  else
    printf("stopped: %s\n", reason_text(res->reason));
}

/* a projection's stop: it is never resumed */
static void print_virtual_stop(const mpt_coord_result *res) {
  if (strcmp(res->reason, "signal") == 0)
    printf("stopped: signal %d received; the projection ends here, with what was taken so far\n", res->signal);
  else if (strcmp(res->reason, "time") == 0)
    printf("stopped: time budget reached on the virtual clock; %lld evaluations\n", (long long)res->done);
  else
    printf("stopped: %s\n", reason_text(res->reason));
}

/* how many evaluations, how fast, and how busy the coordinator and the workers were */
static void print_counts(const mpt_coord_result *res, int size, const char *simulate) {
  printf("evaluations: %lld (%lld valid, %lld failed), %lld in this session\n", (long long)res->done,
         (long long)res->valid, (long long)res->failed, (long long)res->new_evals);
  if (res->missing > 0)
    printf("skipped: %lld configuration%s not in the replayed file %s (logged as missing, not counted)\n",
           (long long)res->missing, res->missing == 1 ? "" : "s", simulate ? simulate : "?");
  printf("rate: %.2f evaluations/s over %.3f s with %d worker%s; coordinator busy %.1f us/evaluation, cpu %.1f us/evaluation; workers busy %.1f %%\n",
         res->wall_s > 0 ? (double)res->new_evals / res->wall_s : 0.0, res->wall_s, res->n_workers,
         res->n_workers == 1 ? "" : "s", res->new_evals ? 1e6 * res->busy_s / (double)res->new_evals : 0.0,
         res->new_evals && size > 1 ? 1e6 * res->cpu_s / (double)res->new_evals : 0.0,
         res->wall_s > 0 && res->n_workers > 0 ? 100.0 * res->eval_s / ((double)res->n_workers * res->wall_s) : 0.0);
}

/* how much of the wall time the devices worked (module load to the end of the timed runs, summed over the
 * workers) and waited: for a compiler, the coordinator, the exclusive lock of a shared GPU */
static void print_device_share(const mpt_coord_result *res) {
  if (!(res->device_s > 0) || !(res->wall_s > 0) || res->n_workers < 1) return;
  double worked = 100.0 * res->device_s / ((double)res->n_workers * res->wall_s);
  printf("devices: worked %.1f %% of the wall time, waited %.1f %% (%.3f s of device work over %d worker%s, "
         "%.2f evaluations/s)\n", worked, worked < 100 ? 100 - worked : 0.0, res->device_s, res->n_workers,
         res->n_workers == 1 ? "" : "s", (double)res->new_evals / res->wall_s);
}

/* a default measured in an earlier session: which one, as /sessions records it */
static void print_default_session(const mpt_job *job) {
  const mpt_runlog_session_info *s = &job->default_when;
  printf("note: the default was measured in an earlier session (session %d, %s, %s); a speed-up across sessions "
         "compares times taken under possibly different load\n", (int)job->default_session + 1,
         s->host[0] ? s->host : "host unknown", s->start_time[0] ? s->start_time : "date unknown");
}

/* the best configuration found, and the default's objective and the speed-up over it */
static void print_best(mpt_job *job) {
  const mpt_coord_result *res = &job->res;
  if (res->best_id < 0) {
    printf("best: none (no valid configuration among %lld evaluations)\n", (long long)res->done);
    return;
  }
  int reordered = 0;
  const mpt_job_finalist *confirmed = res->confirmed > 0 || job->confirm.use_logged
                                          ? mpt_job_confirm_best(&job->confirm, &reordered) : NULL;
  if (confirmed) mpt_job_confirm_print(stdout, &job->confirm, &job->objective, job->space, res->confirmed, "");
  double best = confirmed ? confirmed->confirmed : res->best;
  print_config("best", job->space, confirmed ? confirmed->id : res->best_id);
  mpt_job_objective_print(&job->objective, "objective", best);
  if (confirmed) printf("(the best confirmed: the median of its %d re-measurements)\n", confirmed->n_conf);
  if (!reordered) mpt_job_objective_print_spread(&job->objective);
  int n_def = 0;
  double def = confirmed ? mpt_job_confirm_default(&job->confirm, &n_def) : NAN;
  if (res->default_seen && isfinite(res->default_objective) && isfinite(def)) {
    print_config("default", job->space, job->default_id);
    mpt_job_objective_print(&job->objective, "default objective", def);
    mpt_job_objective_print_gain(&job->objective, best, def);
    printf("(both confirmed in the same rounds: the default's median of its %d re-measurements; the search measured it "
           "at %.6g %s)\n", n_def,
           mpt_objective_minimized(&job->objective.obj.t[0], res->default_objective), job->objective.obj.t[0].unit);
  } else if (res->default_seen && isfinite(res->default_objective)) {
    print_config("default", job->space, job->default_id);
    mpt_job_objective_print(&job->objective, "default objective", res->default_objective);
    mpt_job_objective_print_gain(&job->objective, best, res->default_objective);
    if (res->default_logged) print_default_session(job);
  } else if (res->default_seen) {
    printf("default: failed (no valid measurement of the default configuration)\n");
  } else if (res->default_missing) {
    printf("default: not in the replayed file (skipped: no speed-up reported)\n");
  } else if (job->default_id < 0) {
    printf("default: not a valid configuration of the space (no speed-up reported)\n");
  }
}

/* the T4 export of a finished run (or of a tuning run stopped by its time budget; a collection is exported
 * once whole) */
static int export_t4(const mpt_job *job, mpt_error *err) {
  const mpt_job_options *o = &job->o;
  const char *reason = job->res.reason;
  int by_time = strcmp(reason, "time") == 0, finished = !by_time && strcmp(reason, "signal") != 0;
  if (!o->t4) return 0;
  if (!finished && !(by_time && !o->collect)) {
    printf("t4: not written (the %s is not finished)\n", o->collect ? "collection" : "run");
    return 0;
  }
  if (job->classes.n > 1 && !mpt_outfile_special(o->t4)) /* one file per device class */
    return mpt_runlog_export_t4_classes(o->log, o->t4, stdout, "t4:", err);
  int rc = mpt_runlog_export_t4(o->log, o->t4, err);
  if (rc < 0) return rc;
  printf("t4: %s%s\n", job->t4_shown, job->t4_from_log ? " (as the first session asked)" : "");
  return 0;
}

/* a run stopped by an error: the evaluations and the re-measurements of --confirm the log holds (those of every
 * class, a class's confirmation that failed cutting short none made before it) */
static void print_error_stop(mpt_job *job) {
  int64_t made = 0;
  for (int c = 0; c < job->confirm.n_classes; c++) made += mpt_job_confirm_of(&job->confirm, c)->made;
  char confirmed[160] = "";
  if (made + job->confirm.n_logged > 0)
    snprintf(confirmed, sizeof confirmed, " and %lld re-measurements of the confirmation (%lld in this session), "
             "all logged", (long long)(made + job->confirm.n_logged), (long long)made);
  fprintf(stderr, "mptune %s: the run stopped after %lld evaluations%s%s\n", job->cmd, (long long)job->res.done,
          confirmed, job->o.virtual_workers > 0 ? " (a projection is not resumed)"
                                                : "; it can be continued with --resume");
}

int mpt_job_report(mpt_job *job, mpt_error *err) {
  if (!job->ran) return 0;
  const mpt_coord_result *res = &job->res;
  if (job->run_rc < 0) {
    print_error_stop(job);
    return 0;
  }
  if (job->default_session >= 0 && mpt_runlog_session(job->log, job->default_session, &job->default_when) != 0)
    memset(&job->default_when, 0, sizeof job->default_when);
  int rc = mpt_runlog_finish(job->log, res->reason, err);
  if (rc < 0) return rc;
  if (job->o.virtual_workers > 0) print_virtual_stop(res);
  else print_stop(res);
  print_counts(res, job->size, job->o.simulate);
  if (!job->o.simulate) print_device_share(res);
  if (job->o.virtual_workers > 0) {
    char line[512];
    mpt_virtual_format(&job->vres, job->o.virtual_workers, line, sizeof line);
    printf("%s; projection took %.3f s\n", line, job->vres.real_s);
  }
  if (job->n_searches > 1) /* times of different devices do not compare: a best (confirmed) per class */
    mpt_class_summary_print(stdout, job->space, job->searches, job->n_searches, &job->confirm, &job->objective);
  else
    print_best(job);
  mpt_job_objective_print_front(&job->objective);
  int finished = strcmp(res->reason, "budget") == 0 || strcmp(res->reason, "exhausted") == 0;
  if (job->n_searches > 1 && !job->o.no_cross && finished &&
      (rc = mpt_portability_print(stdout, job->log, job->searches, job->n_searches, &job->objective, err)) < 0)
    return rc;
  mpt_runlog_close(job->log);
  job->log = NULL;
  printf("log: %s\n", job->o.log);
  if ((rc = export_t4(job, err)) < 0) return rc;
  fflush(stdout);
  /* as a shell reports a command a signal stopped (to rank 0, or to one worker that told of it): 130, 143;
   * a worker that cancelled without telling which signal: 1 */
  int by_signal = strcmp(res->reason, "signal") == 0;
  job->exit_status = by_signal ? (res->signal ? 128 + res->signal : 1) : 0;
  return 0;
}

int mpt_job_exit_status(const mpt_job *job) { return job->exit_status; }
