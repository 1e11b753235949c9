/* tests/bench_runlog.c: benchmark (not a test) of the sim part's hot paths: loading a brute-forced file
 * (mpt_replay_load), appending to the run log one record at a time with its flush (what the coordinator
 * pays per evaluation), reading the log back, and the T4 export.
 *   bench_runlog T1.json REPLAY_FILE [N_APPENDS] [DIR]      prints one line per measurement */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "evaluators/evaluator.h"
#include "evaluators/replay/replay.h"
#include "jobs/runlog/runlog.h"
#include "spaces/sys/clock.h"

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s T1.json REPLAY_FILE [N_APPENDS] [DIR]\n", argv[0]);
    return 2;
  }
  int64_t n = argc > 3 ? atoll(argv[3]) : 4362;
  const char *dir = argc > 4 ? argv[4] : "/tmp";
  mpt_problem *p;
  mpt_space *s;
  mpt_error err;
  if (mpt_problem_load(argv[1], &p, &err) || mpt_space_build(p, &s, &err)) {
    fprintf(stderr, "%s\n", err.msg);
    return 1;
  }
  double t0 = mpt_clock_mono_s();
  mpt_replay *r;
  int reps = 5;
  for (int i = 0; i < reps; i++) {
    if (mpt_replay_load(argv[2], s, &r, &err)) { fprintf(stderr, "%s\n", err.msg); return 1; }
    if (i < reps - 1) mpt_replay_free(r);
  }
  double t_load = (mpt_clock_mono_s() - t0) / reps;
  printf("replay load: %.1f ms per load (%lld records, %s)\n", 1e3 * t_load, (long long)mpt_replay_count(r), argv[2]);

  char path[1024], t4[1100];
  snprintf(path, sizeof path, "%s/bench_runlog_%d.h5", dir, (int)getpid());
  snprintf(t4, sizeof t4, "%s.json", path);
  mpt_run_meta m = {0};
  m.mode = "tune";
  m.strategy = "random";
  m.evaluator = "sim";
  mpt_runlog *log;
  if (mpt_runlog_create(path, s, &m, &log, &err)) { fprintf(stderr, "%s\n", err.msg); return 1; }
  int64_t size = mpt_space_size(s);
  double *lat = malloc(sizeof(double) * (size_t)n);
  t0 = mpt_clock_mono_s();
  for (int64_t i = 0; i < n; i++) {
    mpt_obs o;
    mpt_replay_get(r, i % size, &o);
    o.id = i % size;
    double a = mpt_clock_mono_s();
    if (mpt_runlog_append(log, &o, 1, &err)) { fprintf(stderr, "%s\n", err.msg); return 1; }
    lat[i] = mpt_clock_mono_s() - a;
  }
  double t_app = mpt_clock_mono_s() - t0;
  double mx = 0;
  for (int64_t i = 0; i < n; i++) mx = lat[i] > mx ? lat[i] : mx;
  printf("append+flush: %.1f us per record (mean of %lld single-record appends), max %.1f us\n",
         1e6 * t_app / (double)n, (long long)n, 1e6 * mx);
  if (mpt_runlog_finish(log, "budget", &err)) { fprintf(stderr, "%s\n", err.msg); return 1; }
  mpt_runlog_close(log);
  t0 = mpt_clock_mono_s();
  if (mpt_runlog_open_readonly(path, &log, &err)) { fprintf(stderr, "%s\n", err.msg); return 1; }
  mpt_obs *all;
  int64_t na;
  if (mpt_runlog_read(log, &all, &na, &err)) { fprintf(stderr, "%s\n", err.msg); return 1; }
  mpt_runlog_close(log);
  printf("open+read: %.1f ms for %lld records\n", 1e3 * (mpt_clock_mono_s() - t0), (long long)na);
  free(all);
  t0 = mpt_clock_mono_s();
  if (mpt_runlog_export_t4(path, t4, &err)) { fprintf(stderr, "%s\n", err.msg); return 1; }
  printf("T4 export: %.1f ms for %lld records\n", 1e3 * (mpt_clock_mono_s() - t0), (long long)na);
  FILE *f = fopen(path, "rb");
  if (f) {
    fseek(f, 0, SEEK_END);
    printf("log size: %.2f MB (%.0f bytes per record)\n", (double)ftell(f) / 1e6, (double)ftell(f) / (double)na);
    fclose(f);
  }
  unlink(path);
  unlink(t4);
  free(lat);
  mpt_replay_free(r);
  mpt_space_free(s);
  mpt_problem_free(p);
  return 0;
}
