/* evaluators/ahead.c: the compile-ahead pipeline (see evaluators/ahead.h): compiles queued in the order they were
 * announced, each run in a forked child (its own process group, killed with the worker) that sends its artifact
 * through a pipe; finished artifacts go to the run's cache (evaluators/ahead_cache.h). */
#include "evaluators/ahead.h"
#include "evaluators/isolate.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include "evaluators/ahead_cache.h"
#include "spaces/sys/clock.h"
#include "spaces/sys/fd_io.h"

enum { QUEUED, RUNNING, FINISHED };

/* one compile announced and not in the cache (yet): queued, running, or failed and not taken */
typedef struct ahead_job {
  int64_t id;
  mpt_ahead_key key;
  int state;
  pid_t pid;
  int fd;
  double t0_ms, ms;      /* its start, moved later by the time it spent paused; its compile time */
  char *buf;
  size_t len, cap;
  int outcome;
  char reason[256];
} ahead_job;

struct mpt_ahead {
  const mpt_ahead_ops *ops;
  void *ctx;
  int jobs;
  ahead_job *q;        /* in the order announced */
  int nq, capq;
  mpt_ahead_cache cache;
  int paused;
  double paused_at_ms; /* when the compiles were paused */
  mpt_ahead_stats st;
};

mpt_ahead *mpt_ahead_create(const mpt_ahead_ops *ops, void *ctx, int jobs, int cache_max) {
  mpt_ahead *a = calloc(1, sizeof *a);
  if (!a) return NULL;
  a->ops = ops;
  a->ctx = ctx;
  a->jobs = jobs > 0 ? jobs : 1;
  if (mpt_ahead_cache_init(&a->cache, cache_max) != 0) {
    free(a);
    return NULL;
  }
  return a;
}

/* ---- the child ---- */

static volatile sig_atomic_t g_cancelled; /* in the compile process: the worker asked it to stop */

static void on_cancel(int sig) {
  (void)sig;
  g_cancelled = 1;
}

int mpt_ahead_cancelled(void) { return g_cancelled != 0; }

static _Noreturn void child_main(mpt_ahead *a, const ahead_job *j, int fd, pid_t parent) {
  prctl(PR_SET_PDEATHSIG, SIGKILL); /* a compile never outlives its worker */
  if (getppid() != parent) _exit(120);
  setpgid(0, 0);
  mpt_run_command_in_caller_group(1); /* a pause (SIGSTOP to this group) stops the compiler too */
  if (fd > 3) close_range(3, (unsigned)fd - 1, 0); /* nothing of the worker's (sockets, the log) held open */
  close_range((unsigned)fd + 1, ~0U, 0);
  signal(SIGINT, SIG_IGN); /* the worker decides what a signal means for a compile: it sends SIGTERM */
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_cancel;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGTERM, &sa, NULL);
  signal(SIGPIPE, SIG_IGN);
  static const int fatal[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
  for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++) signal(fatal[i], SIG_DFL);
  char *blob = NULL;
  size_t len = 0;
  if (a->ops->compile(a->ctx, j->id, &j->key, &blob, &len) != 0) _exit(3);
  _exit(mpt_fd_write_all(fd, blob, len) ? 4 : 0);
}

/* ---- the parent ---- */

static int start_job(mpt_ahead *a, ahead_job *j, mpt_error *err) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return mpt_error_set(err, MPT_ERR_INTERNAL, "compile ahead: pipe: %s", strerror(errno));
  fflush(NULL);
  pid_t parent = getpid(), pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return mpt_error_set(err, MPT_ERR_INTERNAL, "compile ahead: fork: %s", strerror(errno));
  }
  if (pid == 0) {
    close(fds[0]);
    child_main(a, j, fds[1], parent);
  }
  close(fds[1]);
  setpgid(pid, pid);
  if (a->paused) kill(-pid, SIGSTOP);
  j->pid = pid;
  j->fd = fds[0];
  j->state = RUNNING;
  j->t0_ms = mpt_clock_mono_ms();
  a->st.compiles++;
  return 0;
}

/* reads what is there without waiting: 1 at the end of the child's output (or a read error), else 0 */
static int read_some(ahead_job *j) {
  for (;;) {
    struct pollfd p = {.fd = j->fd, .events = POLLIN};
    int pr = poll(&p, 1, 0);
    if (pr < 0 && errno == EINTR) continue;
    if (pr <= 0) return pr < 0;
    if (j->len == j->cap) {
      size_t cap = j->cap ? 2 * j->cap : 1 << 16;
      char *nb = realloc(j->buf, cap);
      if (!nb) return 1;
      j->buf = nb;
      j->cap = cap;
    }
    ssize_t got = read(j->fd, j->buf + j->len, j->cap - j->len);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return 1;
    j->len += (size_t)got;
  }
}

#define CANCEL_GRACE_MS 3000.0 /* a compile asked to stop kills its compiler within this, or is killed */

/* a compile asked to stop (SIGTERM: it kills its compiler and cleans up): waits until it closes its output,
 * CANCEL_GRACE_MS at most */
static void ask_to_stop(ahead_job *j) {
  kill(j->pid, SIGTERM);
  kill(-j->pid, SIGCONT); /* a paused one must run to stop */
  double until = mpt_clock_mono_ms() + CANCEL_GRACE_MS;
  char junk[4096];
  while (mpt_clock_mono_ms() < until) {
    struct pollfd p = {.fd = j->fd, .events = POLLIN};
    if (poll(&p, 1, 50) <= 0) continue;
    ssize_t n = read(j->fd, junk, sizeof junk);
    if (n == 0 || (n < 0 && errno != EINTR)) break;
  }
}

enum { ENDED, CANCEL, KILL };

/* ends a compile: one that ENDED its output is reaped; CANCEL asks it to stop first; then it and whatever it
 * left in its process group are killed; its wait status */
static int stop_job(ahead_job *j, int how) {
  int status = 0;
  if (how == CANCEL) ask_to_stop(j);
  if (how != ENDED) {
    kill(-j->pid, SIGKILL);
    kill(j->pid, SIGKILL);
    kill(-j->pid, SIGCONT);
  }
  while (waitpid(j->pid, &status, 0) < 0 && errno == EINTR) {}
  kill(-j->pid, SIGKILL); /* what it started and left behind */
  close(j->fd);
  j->fd = -1;
  j->ms = mpt_clock_mono_ms() - j->t0_ms;
  j->state = FINISHED;
  return status;
}

static void remove_job(mpt_ahead *a, int i) {
  free(a->q[i].buf);
  memmove(&a->q[i], &a->q[i + 1], (size_t)(a->nq - i - 1) * sizeof *a->q);
  a->nq--;
}

/* a compile that ended: its artifact into the cache (and the job removed), or its failure kept in the job */
static void finish_job(mpt_ahead *a, int i, int outcome) {
  ahead_job *j = &a->q[i];
  int status = stop_job(j, outcome == MPT_AHEAD_DONE ? ENDED : outcome == MPT_AHEAD_CANCELLED ? CANCEL : KILL);
  j->outcome = outcome;
  if (outcome == MPT_AHEAD_TIMEOUT)
    snprintf(j->reason, sizeof j->reason, "compiler timed out after %.3g s (killed)", a->ops->timeout(a->ctx));
  else if (outcome == MPT_AHEAD_CANCELLED)
    snprintf(j->reason, sizeof j->reason, "cancelled while compiling: the run is stopping (compiler killed)");
  if (outcome != MPT_AHEAD_DONE) return;
  if (WIFSIGNALED(status) || !WIFEXITED(status) || WEXITSTATUS(status) != 0 || !j->len) {
    j->outcome = MPT_AHEAD_CRASHED;
    if (WIFSIGNALED(status))
      snprintf(j->reason, sizeof j->reason, "compile process crashed with signal %d (%s)", WTERMSIG(status),
               strsignal(WTERMSIG(status)));
    else
      snprintf(j->reason, sizeof j->reason, "compile process exited with status %d before reporting",
               WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return;
  }
  if (a->ops->cacheable && !a->ops->cacheable(a->ctx, j->buf, j->len)) return; /* kept for its take alone */
  mpt_ahead_entry e = {j->key, j->buf, j->len, j->ms, j->id, 0};
  j->buf = NULL;
  mpt_ahead_cache_put(&a->cache, &e, a->ops->forget, a->ctx);
  remove_job(a, i);
}

/* one running job looked at: 1 when it finished (and may be gone from the queue) */
static int poll_job(mpt_ahead *a, int i) {
  ahead_job *j = &a->q[i];
  if (j->state != RUNNING) return 0;
  if (read_some(j)) {
    finish_job(a, i, MPT_AHEAD_DONE);
    return 1;
  }
  if (!a->paused && mpt_clock_mono_ms() - j->t0_ms > 1e3 * a->ops->timeout(a->ctx)) {
    finish_job(a, i, MPT_AHEAD_TIMEOUT);
    return 1;
  }
  return 0;
}

void mpt_ahead_pump(mpt_ahead *a) {
  if (!a) return;
  int running = 0;
  for (int i = 0; i < a->nq;) {
    if (poll_job(a, i) && (i >= a->nq || a->q[i].state != FINISHED)) continue; /* removed: i is the next one */
    running += a->q[i].state == RUNNING;
    i++;
  }
  mpt_error e;
  for (int i = 0; i < a->nq && running < a->jobs; i++) {
    if (a->q[i].state != QUEUED) continue;
    mpt_error_clear(&e);
    if (start_job(a, &a->q[i], &e) == 0) running++;
    else break; /* fork failed: mpt_ahead_take says so when this one is needed */
  }
}

static int find_job(const mpt_ahead *a, int64_t id) {
  for (int i = 0; i < a->nq; i++)
    if (a->q[i].id == id) return i;
  return -1;
}

/* appends a queued job for id: its index, -1 when out of memory */
static int add_job(mpt_ahead *a, int64_t id, const mpt_ahead_key *key) {
  if (a->nq == a->capq) {
    int cap = a->capq ? 2 * a->capq : 8;
    ahead_job *nq = realloc(a->q, (size_t)cap * sizeof *nq);
    if (!nq) return -1;
    a->q = nq;
    a->capq = cap;
  }
  ahead_job *j = &a->q[a->nq];
  memset(j, 0, sizeof *j);
  j->id = id;
  j->key = *key;
  j->fd = -1;
  j->state = QUEUED;
  return a->nq++;
}

void mpt_ahead_prepare(mpt_ahead *a, int64_t id) {
  mpt_ahead_key key;
  if (!a || find_job(a, id) >= 0 || a->ops->key(a->ctx, id, &key) != 0) return;
  if (mpt_ahead_cache_find(&a->cache, &key) >= 0) return;
  for (int i = 0; i < a->nq; i++) /* the same compile announced for another id */
    if (a->q[i].key.h[0] == key.h[0] && a->q[i].key.h[1] == key.h[1]) return;
  if (add_job(a, id, &key) >= 0) mpt_ahead_pump(a);
}

void mpt_ahead_discard(mpt_ahead *a, int64_t id) {
  int i = a ? find_job(a, id) : -1;
  if (i < 0) return;
  if (a->q[i].state == RUNNING) stop_job(&a->q[i], CANCEL);
  remove_job(a, i);
  mpt_ahead_pump(a);
}

/* the cached artifact i as id's result (a copy) */
static int give_cached(mpt_ahead *a, int i, int64_t id, mpt_ahead_result *res, mpt_error *err) {
  mpt_ahead_entry *e = &a->cache.e[i];
  res->outcome = MPT_AHEAD_DONE;
  res->blob = malloc(e->len ? e->len : 1);
  if (!res->blob) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  memcpy(res->blob, e->blob, e->len);
  res->len = e->len;
  res->compile_ms = e->compile_ms;
  res->cached = e->taken || e->for_id != id;
  if (res->cached) a->st.cache_hits++;
  else if (res->waited_ms == 0) a->st.ahead++;
  e->taken = 1;
  mpt_ahead_cache_pin(&a->cache, i);
  return 0;
}

/* waits for job i (started now if it was not) until it finishes or the watch says stop */
static int wait_job(mpt_ahead *a, int64_t id, const mpt_watch *watch, mpt_error *err) {
  int i = find_job(a, id);
  if (i >= 0 && a->q[i].state == QUEUED) {
    int rc = start_job(a, &a->q[i], err); /* the device waits for this one: started beyond the limit */
    if (rc) return rc;
  }
  /* the watch may announce more work (mpt_ahead_prepare) and pump: the queue changes under this loop, so id's
   * job is looked up again after every call that may change it */
  for (;;) {
    if ((i = find_job(a, id)) < 0 || a->q[i].state != RUNNING) break;
    int stop = mpt_watch_call(watch, "compiling", -1);
    if ((i = find_job(a, id)) < 0 || a->q[i].state != RUNNING) break;
    if (stop) {
      finish_job(a, i, MPT_AHEAD_CANCELLED);
      break;
    }
    struct pollfd p = {.fd = a->q[i].fd, .events = POLLIN};
    poll(&p, 1, 100);
    if (!poll_job(a, i)) mpt_ahead_pump(a);
  }
  return 0;
}

int mpt_ahead_take(mpt_ahead *a, int64_t id, const mpt_watch *watch, mpt_ahead_result *res, mpt_error *err) {
  memset(res, 0, sizeof *res);
  mpt_ahead_key key;
  if (a->ops->key(a->ctx, id, &key) != 0)
    return mpt_error_set(err, MPT_ERR_VALUE, "compile ahead: configuration %lld has no compile", (long long)id);
  mpt_ahead_pump(a);
  int c = mpt_ahead_cache_find(&a->cache, &key);
  if (c >= 0) return give_cached(a, c, id, res, err);
  if (find_job(a, id) < 0 && add_job(a, id, &key) < 0) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  double t0 = mpt_clock_mono_ms();
  int rc = wait_job(a, id, watch, err);
  if (rc) return rc;
  res->waited_ms = mpt_clock_mono_ms() - t0;
  a->st.waited_ms += res->waited_ms;
  int i = find_job(a, id);
  if (i < 0) { /* done: in the cache */
    c = mpt_ahead_cache_find(&a->cache, &key);
    if (c < 0) return mpt_error_set(err, MPT_ERR_INTERNAL, "compile ahead: the artifact of %lld is lost", (long long)id);
    return give_cached(a, c, id, res, err);
  }
  ahead_job *j = &a->q[i];
  res->outcome = j->outcome;
  res->compile_ms = j->ms;
  snprintf(res->reason, sizeof res->reason, "%s", j->reason);
  if (j->outcome == MPT_AHEAD_DONE) { /* an artifact not kept for the run: this take's alone */
    res->blob = j->buf;
    res->len = j->len;
    j->buf = NULL;
  }
  remove_job(a, i);
  mpt_ahead_pump(a);
  return 0;
}

/* a pause stops every running compile; the time a compile spent stopped does not count against its timeout (on an
 * oversubscribed node the compiles are paused through every timed run, a long one included) */
void mpt_ahead_pause(mpt_ahead *a, int paused) {
  if (!a || a->paused == paused) return;
  a->paused = paused;
  double now = mpt_clock_mono_ms();
  if (paused) a->paused_at_ms = now;
  for (int i = 0; i < a->nq; i++) {
    ahead_job *j = &a->q[i];
    if (j->state != RUNNING) continue;
    kill(-j->pid, paused ? SIGSTOP : SIGCONT);
    if (!paused) j->t0_ms += now - (j->t0_ms > a->paused_at_ms ? j->t0_ms : a->paused_at_ms);
  }
}

void mpt_ahead_get_stats(const mpt_ahead *a, mpt_ahead_stats *out) {
  if (a) *out = a->st;
  else memset(out, 0, sizeof *out);
}

void mpt_ahead_destroy(mpt_ahead *a) {
  if (!a) return;
  for (int i = 0; i < a->nq; i++)
    if (a->q[i].state == RUNNING) stop_job(&a->q[i], CANCEL);
  while (a->nq > 0) remove_job(a, a->nq - 1);
  free(a->q);
  mpt_ahead_cache_clear(&a->cache, a->ops->forget, a->ctx);
  free(a);
}
