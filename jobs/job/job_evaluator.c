/* jobs/job/job_evaluator.c: a job's evaluator: the one a worker (or the one rank) opens, bound to its node-local
 * device, and the watch that cancels an evaluation in progress when the run stops; the worker's device as that
 * evaluator describes it; the evaluator the workers run (`auto` resolved) for rank 0's decisions. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <cjson/cJSON.h>
#include "jobs/job/job_internal.h"
#include "coordinator/signals.h"
#include "mpi/device.h"
#include "mpi/device_class.h"
#include "mpi/wire.h"
#include "spaces/sys/clock.h"
#include "spaces/t1.h"

static int evaluation_watch(void *ctx, const char *doing, double done) {
  (void)doing, (void)done;
  const evaluation_stop *e = ctx;
  int n = mpt_signals_count();
  if (n >= 2 || (n == 1 && mpt_clock_mono_s() - mpt_signals_first_s() >= e->grace_s)) return 1;
  if (e->deadline_s > 0 && mpt_clock_mono_s() >= e->deadline_s) return 1;
  int flag = 0;
  if (e->stop_comm != MPI_COMM_NULL) MPI_Iprobe(0, MPT_TAG_STOP, e->stop_comm, &flag, MPI_STATUS_IGNORE);
  return flag;
}

int mpt_job_open_evaluator(const mpt_job_options *o, const mpt_problem *p, const mpt_space *s, int rank,
                           int local_rank, mpt_watch watch, mpt_evaluator **out, mpt_error *err) {
  mpt_eval_settings set;
  memset(&set, 0, sizeof set);
  set.simulate_path = o->simulate;
  set.simulate_delay = o->simulate_delay;
  set.simulate_skip_missing = o->simulate_skip_missing;
  set.timeout_s = o->timeout_s;
  set.iterations = o->iterations;
  set.workdir = o->workdir;
  set.objective = o->objective;
  set.local_rank = local_rank;
  set.rank = rank;
  set.watch = watch;
  set.options = o->eval_opts;
  set.n_options = o->n_eval_opts;
  set.compile_jobs = o->compile_jobs;
  set.local_workers = o->node_workers;
  return mpt_evaluator_open(o->evaluator, p, s, &set, out, err);
}

char *mpt_job_evaluator_options_text(const mpt_job_options *o) {
  size_t len = 1;
  for (int i = 0; i < o->n_eval_opts; i++) len += strlen(o->eval_opts[i]) + 1;
  char *s = malloc(len);
  if (!s) return NULL;
  s[0] = '\0';
  for (int i = 0; i < o->n_eval_opts; i++) strcat(strcat(s, i ? "\n" : ""), o->eval_opts[i]);
  return s;
}

int mpt_job_take_evaluator_options(mpt_job *job, const char *text, mpt_error *err) {
  free(job->eval_opts_buf);
  job->o.n_eval_opts = 0;
  if (!(job->eval_opts_buf = strdup(text))) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  for (char *save = NULL, *kv = strtok_r(job->eval_opts_buf, "\n", &save); kv; kv = strtok_r(NULL, "\n", &save)) {
    if (job->o.n_eval_opts >= MPT_JOB_MAX_OPTS)
      return mpt_error_set(err, MPT_ERR_VALUE, "too many evaluator options (max %d)", MPT_JOB_MAX_OPTS);
    job->o.eval_opts[job->o.n_eval_opts++] = kv;
  }
  return 0;
}

int mpt_job_share_evaluator_options(mpt_job *job, mpt_error *err) {
  if (job->size == 1) return 0;
  char *text = job->rank == 0 ? mpt_job_evaluator_options_text(&job->o) : NULL;
  int len = text ? (int)strlen(text) + 1 : 0;
  MPI_Bcast(&len, 1, MPI_INT, 0, job->comm);
  if (len == 0) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory"); /* rank 0 could not join them */
  if (job->rank != 0) text = malloc((size_t)len); /* NULL: the chunks are received all the same, and dropped */
  char chunk[512];
  for (int at = 0; at < len; at += (int)sizeof chunk) {
    int n = len - at < (int)sizeof chunk ? len - at : (int)sizeof chunk;
    if (job->rank == 0) memcpy(chunk, text + at, (size_t)n);
    MPI_Bcast(chunk, n, MPI_CHAR, 0, job->comm);
    if (job->rank != 0 && text) memcpy(text + at, chunk, (size_t)n);
  }
  int rc = job->rank == 0 ? 0
           : text ? mpt_job_take_evaluator_options(job, text, err) : mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  free(text);
  return rc;
}

/* workers (or the one rank): the evaluator, bound to the node-local device and watched by the job; a
 * worker of a simulated class replays that class's file */
int mpt_job_open_rank_evaluator(mpt_job *job, mpt_error *err) {
  job->stop.grace_s = job->o.grace_s;
  job->stop.stop_comm = job->size > 1 ? job->comm : MPI_COMM_NULL;
  mpt_job_options eo = job->o;
  int k = mpt_job_rank_class(&job->o, job->rank, job->size, job->rank_class, sizeof job->rank_class);
  if (k >= 0) eo.simulate = eo.sim_file[k];
  if (job->size > 1 && job->o.device) return 0; /* a job of another class: no evaluator, the device as given */
  if (eo.virtual_workers > 0) {
    if (job->size > 1)
      return mpt_error_set(err, MPT_ERR_VALUE, "--virtual-workers runs on one rank (rank 0 simulates the workers): "
                           "start it without mpiexec or with -n 1");
    eo.simulate_delay = 0; /* the virtual clock takes the delay; nothing sleeps */
  }
  return mpt_job_open_evaluator(&eo, job->prob, job->space, job->rank, job->local_rank,
                                (mpt_watch){evaluation_watch, &job->stop}, &job->ev, err);
}

/* the evaluator the workers run: `auto` resolved as evaluators/auto.c resolves it (sim for a replayed file, cpu for
 * C, C++ or no kernel, a GPU evaluator for CUDA and HIP: "cuda" stands for both, their compile-ahead is the same) */
const char *mpt_job_workers_evaluator(const mpt_job *job) {
  const mpt_job_options *o = &job->o;
  if (strcmp(o->evaluator, "auto") != 0) return o->evaluator;
  if (o->simulate) return "sim";
  const cJSON *ks = job->prob ? cJSON_GetObjectItemCaseSensitive(job->prob->json, "KernelSpecification") : NULL;
  const cJSON *lang = ks ? cJSON_GetObjectItemCaseSensitive(ks, "Language") : NULL;
  const char *l = cJSON_IsString(lang) ? lang->valuestring : "";
  if (strcasecmp(l, "CUDA") == 0 || strcasecmp(l, "HIP") == 0) return "cuda";
  return strcasecmp(l, "OpenCL") == 0 ? "auto" : "cpu";
}

void mpt_job_device(const mpt_job *job, mpt_device_info *out) {
  if (!job->ev && job->o.device) {
    *out = *job->o.device;
    out->rank = job->rank;
    return;
  }
  mpt_device_describe(job->ev, job->rank, out);
  if (job->rank_class[0]) mpt_device_class_assign(out, job->rank_class);
}

int mpt_job_evaluator_open(const mpt_job *job) { return job->ev != NULL; }
