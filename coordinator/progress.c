/* coordinator/progress.c: the progress line (see coordinator/progress.h). */
#include "coordinator/progress.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Under mpiexec (or srun) a rank's stderr is a pipe to the launcher, which copies it byte for byte to
 * its own stderr: the line is a terminal's when the launcher's is. Walks up to 4 ancestors. */
static int launcher_on_terminal(void) {
  pid_t pid = getppid();
  for (int depth = 0; depth < 4 && pid > 1; depth++) {
    char path[64], comm[64] = "", buf[512];
    snprintf(path, sizeof path, "/proc/%d/comm", (int)pid);
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    if (!fgets(comm, sizeof comm, f)) comm[0] = '\0';
    fclose(f);
    if (strncmp(comm, "mpiexec", 7) == 0 || strncmp(comm, "mpirun", 6) == 0 || strncmp(comm, "srun", 4) == 0) {
      snprintf(path, sizeof path, "/proc/%d/fd/2", (int)pid);
      ssize_t n = readlink(path, buf, sizeof buf - 1);
      if (n <= 0) return 0;
      buf[n] = '\0';
      return strncmp(buf, "/dev/pts/", 9) == 0 || strncmp(buf, "/dev/tty", 8) == 0;
    }
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid); /* "pid (comm) state ppid ..." */
    f = fopen(path, "r");
    if (!f) return 0;
    size_t len = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[len] = '\0';
    char *close = strrchr(buf, ')');
    int ppid = 0;
    if (!close || sscanf(close + 1, " %*c %d", &ppid) != 1) return 0;
    pid = (pid_t)ppid;
  }
  return 0;
}

int mpt_progress_terminal(FILE *f) {
  if (!f) return 0;
  if (isatty(fileno(f))) return 1;
  return f == stderr && launcher_on_terminal();
}

void mpt_progress_init(mpt_progress *p, FILE *f, mpt_progress_mode mode, int64_t budget, double time_budget,
                       int64_t done0, double now) {
  p->f = f;
  p->off = mode == MPT_PROGRESS_OFF || !f;
  p->tty = mode == MPT_PROGRESS_TTY || (mode == MPT_PROGRESS_AUTO && mpt_progress_terminal(f));
  p->budget = budget;
  p->time_budget = time_budget;
  p->done0 = done0;
  p->t0 = now;
  p->last_draw = now;
  p->last_decile = budget > 0 ? done0 * 10 / budget : 0;
  p->drawn = 0;
  p->last_done = -1;
  p->interval = 5.0;
  p->running_since = 0;
  p->doing = NULL;
  p->missing = 0;
  p->classes = NULL;
}

int mpt_progress_duration(double s, char *buf, int cap) {
  if (!isfinite(s) || s < 0) return snprintf(buf, (size_t)cap, "?");
  long t = (long)(s + 0.5);
  if (t >= 3600) return snprintf(buf, (size_t)cap, "%ld:%02ld:%02ld", t / 3600, (t / 60) % 60, t % 60);
  return snprintf(buf, (size_t)cap, "%ld:%02ld", t / 60, t % 60);
}

int mpt_progress_format(const mpt_progress *p, double now, int64_t done, int64_t valid, int64_t failed,
                        double best, char *buf, int cap) {
  double el = now - p->t0;
  int64_t new_done = done - p->done0;
  double rate = el > 0 ? (double)new_done / el : 0;
  double eta = NAN;
  if (p->budget > 0 && rate > 0) eta = (double)(p->budget - done) / rate;
  if (p->time_budget > 0) {
    double left = p->time_budget - el;
    if (left < 0) left = 0;
    if (!isfinite(eta) || left < eta) eta = left;
  }
  char bud[32], best_s[32], eta_s[32], el_s[32];
  if (p->budget > 0) snprintf(bud, sizeof bud, "%lld", (long long)p->budget);
  else snprintf(bud, sizeof bud, "-");
  if (isfinite(best)) snprintf(best_s, sizeof best_s, "%.6g", best);
  else snprintf(best_s, sizeof best_s, "-");
  mpt_progress_duration(eta, eta_s, sizeof eta_s);
  mpt_progress_duration(el, el_s, sizeof el_s);
  char run_s[48] = "";
  if (p->running_since > 0 && now - p->running_since >= 1.0) {
    char d[32];
    mpt_progress_duration(now - p->running_since, d, sizeof d);
    snprintf(run_s, sizeof run_s, " | evaluating for %s", d);
  }
  char missing_s[40] = "";
  if (p->missing > 0) snprintf(missing_s, sizeof missing_s, " missing %lld", (long long)p->missing);
  const char *cls = p->classes ? p->classes : "";
  if (p->doing) return snprintf(buf, (size_t)cap, "%lld/%s evaluations | valid %lld failed %lld%s | best %s | %.2f eval/s | elapsed %s ETA %s%s | %s",
                                (long long)done, bud, (long long)valid, (long long)failed, missing_s, best_s, rate, el_s,
                                eta_s, cls, p->doing);
  return snprintf(buf, (size_t)cap, "%lld/%s evaluations | valid %lld failed %lld%s | best %s | %.2f eval/s | elapsed %s ETA %s%s%s",
                  (long long)done, bud, (long long)valid, (long long)failed, missing_s, best_s, rate, el_s, eta_s, run_s, cls);
}

int mpt_progress_due(const mpt_progress *p, double now, int64_t done) {
  if (p->off) return 0;
  if (p->tty) return now - p->last_draw >= 0.2;
  int64_t decile = p->budget > 0 ? done * 10 / p->budget : 0;
  return now - p->last_draw >= p->interval || decile > p->last_decile;
}

void mpt_progress_update(mpt_progress *p, double now, int64_t done, int64_t valid, int64_t failed,
                         double best, int force) {
  if (p->off) return;
  if (!force && !mpt_progress_due(p, now, done)) return;
  if (!p->tty && p->budget > 0) p->last_decile = done * 10 / p->budget;
  char line[2048];
  mpt_progress_format(p, now, done, valid, failed, best, line, sizeof line);
  if (p->tty) {
    fprintf(p->f, "\r%s\033[K", line);
    p->drawn = 1;
  } else {
    fprintf(p->f, "progress: %s\n", line);
  }
  fflush(p->f);
  p->last_draw = now;
  p->last_done = done;
}

void mpt_progress_finish(mpt_progress *p, double now, int64_t done, int64_t valid, int64_t failed, double best) {
  if (p->off) return;
  if (p->tty || p->last_done != done) mpt_progress_update(p, now, done, valid, failed, best, 1);
  if (p->tty && p->drawn) fputc('\n', p->f);
  fflush(p->f);
  p->drawn = 0;
}
