/* evaluators/isolate.c: evaluations in a child process (fork + socket pair), restarted when it dies,
 * killed when it misses its deadline; RLIMIT_AS for the child (and whether a crash came with it reached); the
 * faulting address of a crash; external commands with a timeout.
 * Contract: evaluators/isolate.h. */
#include "evaluators/isolate.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "spaces/sys/clock.h"
#include "spaces/sys/fd_io.h"
#include "spaces/sys/signame.h"

#if defined(__SANITIZE_ADDRESS__)
#define MPT_ISO_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MPT_ISO_ASAN 1
#endif
#endif

extern char **environ;

/* what a child's fault handler notes for its parent (a shared page): the signal's code and address, and
 * whether the fault came with the address-space limit plausibly reached (mpt_isolate_result.mem_limit_hit) */
typedef struct fault_note {
  volatile int recorded;
  volatile int code;     /* si_code */
  volatile uintptr_t addr; /* si_addr */
  volatile int enomem;   /* errno of the faulting thread was ENOMEM */
  volatile size_t size;  /* VmSize at the fault, bytes (not VmPeak: a fork inherits the worker's) */
  volatile size_t limit; /* the RLIMIT_AS set, bytes */
  volatile size_t allowance; /* of which above the child's size at fork (mpt_isolate_opts.mem_limit) */
} fault_note;

struct mpt_isolate {
  mpt_isolate_opts opts;
  fault_note *note;      /* MAP_SHARED with the children; NULL when it could not be mapped */
  mpt_isolate_serve_fn serve;
  mpt_isolate_init_fn init;
  void *ctx;
  pid_t pid;             /* current child, 0 when none */
  int fd;                /* parent's end of the socket pair, -1 when none */
  int forks;
};

/* ---- child side ---- */

static int write_full(int fd, const void *buf, size_t n) {
  const char *p = buf;
  while (n > 0) {
    ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

#ifndef MPT_ISO_ASAN
/* Current address-space size of this process in bytes (from /proc/self/statm). */
static size_t vm_size(void) {
  FILE *f = fopen("/proc/self/statm", "r");
  unsigned long pages = 0;
  if (!f) return 0;
  if (fscanf(f, "%lu", &pages) != 1) pages = 0;
  fclose(f);
  return (size_t)pages * (size_t)sysconf(_SC_PAGESIZE);
}
#endif

/* the child's fault note (set in the child before its handler is installed) */
static fault_note *g_note;

#ifndef MPT_ISO_ASAN /* no RLIMIT_AS under AddressSanitizer: no size to note */
/* VmSize of this process in bytes, from /proc/self/status with async-signal-safe calls only; 0 unknown */
static size_t vm_size_signal_safe(void) {
  char buf[4096];
  int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0) return 0;
  buf[n] = 0;
  static const char key[] = "\nVmSize:";
  for (char *p = buf; *p; p++) {
    size_t k = 0;
    while (key[k] && p[k] == key[k]) k++;
    if (key[k]) continue;
    size_t kb = 0;
    for (p += k; *p == ' ' || *p == '\t'; p++) {}
    for (; *p >= '0' && *p <= '9'; p++) kb = kb * 10 + (size_t)(*p - '0');
    return kb << 10;
  }
  return 0;
}
#endif

/* SIGSEGV/SIGBUS in a child: note where it faulted and, with an address-space limit, what the parent needs to
 * tell an exhausted limit from a plain bad pointer, then die of the signal (the handler is reset on entry) */
static void fault_handler(int sig, siginfo_t *si, void *uc) {
  (void)uc;
  int e = errno;
  if (g_note) {
    g_note->code = si ? si->si_code : 0;
    g_note->addr = si ? (uintptr_t)si->si_addr : 0;
    g_note->enomem = e == ENOMEM;
#ifndef MPT_ISO_ASAN
    if (g_note->limit > 0) g_note->size = vm_size_signal_safe();
#endif
    g_note->recorded = 1;
  }
  raise(sig); /* a fault re-raises itself on return anyway; a sent signal must too */
}

static void install_fault_note(fault_note *note, size_t limit, size_t allowance) {
  static char *alt; /* an alternate stack: a stack overflow must reach the handler too */
  size_t alt_bytes = 64 * 1024;
  if (!alt) alt = malloc(alt_bytes);
  if (!note || !alt) return;
  g_note = note;
  note->limit = limit;
  note->allowance = allowance;
  stack_t ss = {.ss_sp = alt, .ss_size = alt_bytes, .ss_flags = 0};
  sigaltstack(&ss, NULL);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = fault_handler;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESETHAND;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGSEGV, &sa, NULL);
  sigaction(SIGBUS, &sa, NULL);
}

/* a variant that calls exit() ends the child there: the worker's exit handlers (HDF5 closing the run log
 * the child inherited a copy of, MPI) must never run in it (registered last, this one runs first) */
static void exit_at_once(int status, void *arg) {
  (void)arg;
  _exit(status);
}

#define RETIRE_BIT ((uint64_t)1 << 63) /* in an answer's length: the child ends after it */
static int g_retire;                   /* in the child: mpt_isolate_retire was called */

void mpt_isolate_retire(void) { g_retire = 1; }

static void child_main(mpt_isolate *iso, int fd, pid_t parent) {
  /* die with the worker; a variant that hangs must never outlive it */
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(120);
  /* a process group of its own: whatever a variant starts (a fork that outlives it) goes with it */
  setpgid(0, 0);
  on_exit(exit_at_once, NULL);
  /* keep only stdio and our socket: another isolation's socket inherited here would keep that child
   * from seeing its parent close it */
  if (fd > 3) close_range(3, (unsigned)fd - 1, 0);
  close_range((unsigned)fd + 1, ~0U, 0);
  /* SIGINT/SIGTERM (Ctrl-C on the process group, Slurm's SIGTERM to every process of the job) are the
   * worker's business: it finishes or cancels the evaluation in flight and then stops the child, which
   * must not die first and turn that evaluation into a false `crash` */
  signal(SIGINT, SIG_IGN);
  signal(SIGTERM, SIG_IGN);
  signal(SIGPIPE, SIG_DFL);
  /* a faulting variant dies of its signal (reported by name), whatever handlers the worker (MPI, a
   * sanitizer) installed */
  static const int fatal[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP};
  for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++) signal(fatal[i], SIG_DFL);
  size_t limit = 0;
#ifndef MPT_ISO_ASAN
  if (iso->opts.mem_limit > 0) limit = vm_size() + iso->opts.mem_limit;
#endif
  install_fault_note(iso->note, limit, limit ? iso->opts.mem_limit : 0);
  if (limit > 0) {
    struct rlimit rl;
    rl.rlim_cur = rl.rlim_max = (rlim_t)limit;
    setrlimit(RLIMIT_AS, &rl);
  }
  if (iso->init && iso->init(iso->ctx) != 0) _exit(121);
  size_t cap = iso->opts.max_request;
  char *req = malloc(cap), *resp = malloc(cap);
  if (!req || !resp) _exit(122);
  for (;;) {
    uint64_t len;
    if (mpt_fd_read_all(fd, &len, sizeof len) != 0) _exit(0); /* parent closed: done */
    if (len > cap) _exit(123);
    if (mpt_fd_read_all(fd, req, (size_t)len) != 0) _exit(0);
    errno = 0; /* an ENOMEM at a fault is the variant's, not left over from before */
    long n = iso->serve(iso->ctx, req, (size_t)len, resp, cap);
    if (n < 0 || (size_t)n > cap) _exit(124);
    uint64_t out = (uint64_t)n | (g_retire ? RETIRE_BIT : 0);
    if (write_full(fd, &out, sizeof out) != 0 || write_full(fd, resp, (size_t)n) != 0) _exit(0);
    if (iso->opts.one_shot || g_retire) _exit(0);
  }
}

/* ---- parent side ---- */

static void reap(mpt_isolate *iso, int kill_it, int *signal_out, int *exit_out) {
  int st = 0;
  if (signal_out) *signal_out = 0;
  if (exit_out) *exit_out = 0;
  if (iso->fd >= 0) close(iso->fd);
  iso->fd = -1;
  if (iso->pid > 0) {
    if (kill_it) kill(iso->pid, SIGKILL);
    kill(-iso->pid, SIGKILL); /* what the variant left running (before the wait: the group still exists) */
    while (waitpid(iso->pid, &st, 0) < 0 && errno == EINTR) {}
    if (WIFSIGNALED(st) && signal_out) *signal_out = WTERMSIG(st);
    if (WIFEXITED(st) && exit_out) *exit_out = WEXITSTATUS(st);
  }
  iso->pid = 0;
}

static int spawn_child(mpt_isolate *iso, mpt_error *err) {
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    return mpt_error_set(err, MPT_ERR_INTERNAL, "isolation: socketpair: %s", strerror(errno));
  fflush(NULL); /* no buffered output duplicated into the child */
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    close(sv[0]);
    close(sv[1]);
    return mpt_error_set(err, MPT_ERR_INTERNAL, "isolation: fork: %s", strerror(errno));
  }
  if (pid == 0) {
    close(sv[0]);
    child_main(iso, sv[1], parent);
    _exit(0);
  }
  close(sv[1]);
  setpgid(pid, pid); /* as the child does: no window in which a kill of its group misses it */
  iso->pid = pid;
  iso->fd = sv[0];
  iso->forks++;
  return 0;
}

int mpt_isolate_create(const mpt_isolate_opts *opts, mpt_isolate_serve_fn serve,
                       mpt_isolate_init_fn init, void *ctx, mpt_isolate **out, mpt_error *err) {
  *out = NULL;
  if (!serve) return mpt_error_set(err, MPT_ERR_VALUE, "isolation: no serve function");
  mpt_isolate *iso = calloc(1, sizeof *iso);
  if (!iso) return mpt_error_set(err, MPT_ERR_NOMEM, "isolation: out of memory");
  if (opts) iso->opts = *opts;
  if (iso->opts.max_request == 0) iso->opts.max_request = (size_t)1 << 20;
  void *m = mmap(NULL, sizeof(fault_note), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  iso->note = m == MAP_FAILED ? NULL : m; /* without it no crash has an address or is said to be the limit's */
  iso->serve = serve;
  iso->init = init;
  iso->ctx = ctx;
  iso->fd = -1;
  *out = iso;
  return 0;
}

enum { CANCEL_POLL_MS = 100, WAIT_CANCELLED = -2 };

/* 1 when process pid has ended (left waitable: WNOWAIT) */
static int has_ended(pid_t pid) {
  siginfo_t si;
  memset(&si, 0, sizeof si);
  return waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid;
}

/* waits until fd is readable or the deadline passes, asking watch (may be NULL) at least every
 * CANCEL_POLL_MS; 1 readable, 0 timeout, WAIT_CANCELLED when the watch said stop, -1 error, or (pid > 0)
 * that process ended with nothing to read: a process it started may hold the other end open, so its death
 * shows no EOF */
static int wait_readable(int fd, double deadline, pid_t pid, const mpt_watch *watch) {
  int watched = watch && watch->fn;
  for (;;) {
    if (mpt_watch_call(watch, NULL, -1)) return WAIT_CANCELLED;
    int ms = -1;
    if (deadline > 0) {
      double left = deadline - mpt_clock_mono_s();
      if (left <= 0) return 0;
      ms = (int)(left * 1000.0) + 1;
    }
    if ((watched || pid > 0) && (ms < 0 || ms > CANCEL_POLL_MS)) ms = CANCEL_POLL_MS;
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int r = poll(&p, 1, ms);
    if (r > 0) return 1;
    if (r < 0 && errno != EINTR) return -1;
    if (r == 0 && pid > 0 && has_ended(pid)) return poll(&p, 1, 0) > 0 ? 1 : -1; /* what it wrote first */
  }
}

/* reads n bytes before the deadline; 1 done, 0 timeout, WAIT_CANCELLED, -1 EOF/error (child died) */
static int read_deadline(int fd, void *buf, size_t n, double deadline, pid_t pid, const mpt_watch *watch) {
  char *p = buf;
  while (n > 0) {
    int w = wait_readable(fd, deadline, pid, watch);
    if (w <= 0) return w;
    ssize_t r = read(fd, p, n);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return -1;
    p += r;
    n -= (size_t)r;
  }
  return 1;
}

int mpt_isolate_call(mpt_isolate *iso, const void *req, size_t req_len, void *resp, size_t resp_cap,
                     size_t *resp_len, double timeout_s, mpt_isolate_result *res, mpt_error *err) {
  memset(res, 0, sizeof *res);
  if (resp_len) *resp_len = 0;
  if (req_len > iso->opts.max_request)
    return mpt_error_set(err, MPT_ERR_VALUE, "isolation: request of %zu bytes exceeds %zu", req_len,
                         iso->opts.max_request);
  double t0 = mpt_clock_mono_s();
  double deadline = timeout_s > 0 ? t0 + timeout_s : 0;
  if (iso->pid == 0) {
    int rc = spawn_child(iso, err);
    if (rc) return rc;
  }
  if (iso->note) iso->note->recorded = 0; /* limit and allowance: set once by the serving child */
  uint64_t len = req_len;
  int sig = 0, ex = 0;
  if (write_full(iso->fd, &len, sizeof len) != 0 || write_full(iso->fd, req, req_len) != 0) {
    reap(iso, 1, &sig, &ex); /* the child died before taking the request (e.g. its init failed) */
    goto crashed;
  }
  uint64_t rlen = 0;
  int r = read_deadline(iso->fd, &rlen, sizeof rlen, deadline, iso->pid, &iso->opts.watch);
  int retire = r == 1 && (rlen & RETIRE_BIT);
  rlen &= ~RETIRE_BIT;
  if (r == 1 && rlen > 0) {
    if (rlen > resp_cap) {
      reap(iso, 1, NULL, NULL);
      return mpt_error_set(err, MPT_ERR_INTERNAL, "isolation: response of %llu bytes exceeds %zu",
                           (unsigned long long)rlen, resp_cap);
    }
    r = read_deadline(iso->fd, resp, (size_t)rlen, deadline, iso->pid, &iso->opts.watch);
  }
  if (r == 0 || r == WAIT_CANCELLED) {
    reap(iso, 1, NULL, NULL);
    res->outcome = r == 0 ? MPT_ISO_TIMEOUT : MPT_ISO_CANCELLED;
    res->seconds = mpt_clock_mono_s() - t0;
    if (r == 0) snprintf(res->reason, sizeof res->reason, "no answer after %.3g s: killed", timeout_s);
    else snprintf(res->reason, sizeof res->reason, "cancelled after %.3g s: the run is stopping", res->seconds);
    return 0;
  }
  if (r < 0) {
    reap(iso, 0, &sig, &ex);
    goto crashed;
  }
  if (resp_len) *resp_len = (size_t)rlen;
  res->outcome = MPT_ISO_OK;
  res->seconds = mpt_clock_mono_s() - t0;
  if (iso->opts.one_shot || retire) reap(iso, 0, NULL, NULL);
  return 0;
crashed:
  res->outcome = MPT_ISO_CRASH;
  res->signal = sig;
  if ((sig == SIGSEGV || sig == SIGBUS) && iso->note && iso->note->recorded) {
    res->fault_known = 1;
    res->fault_code = iso->note->code;
    res->fault_addr = iso->note->addr;
    if (iso->note->limit > 0)
      res->mem_limit_hit = iso->note->enomem || iso->note->size + iso->note->allowance / 10 >= iso->note->limit;
  }
  res->exit_status = ex;
  res->seconds = mpt_clock_mono_s() - t0;
  if (sig)
    snprintf(res->reason, sizeof res->reason, "killed by %s (%s)", mpt_signal_name(sig), strsignal(sig));
  else
    snprintf(res->reason, sizeof res->reason, "evaluation process exited with status %d", ex);
  return 0;
}

void mpt_isolate_destroy(mpt_isolate *iso) {
  if (!iso) return;
  if (iso->pid > 0) {
    /* closing the socket ends a serving child; kill it if it is busy (a hang) */
    close(iso->fd);
    iso->fd = -1;
    double end = mpt_clock_mono_s() + 0.5;
    while (!has_ended(iso->pid) && mpt_clock_mono_s() < end) {
      struct timespec ts = {0, 2000000};
      nanosleep(&ts, NULL);
    }
    reap(iso, 1, NULL, NULL); /* the child when still busy, and what its variants left running */
  }
  if (iso->note) munmap(iso->note, sizeof *iso->note);
  free(iso);
}

int mpt_isolate_forks(const mpt_isolate *iso) { return iso->forks; }
pid_t mpt_isolate_pid(const mpt_isolate *iso) { return iso->pid; }

/* ---- external commands ---- */

static int run_in_caller_group; /* mpt_run_command_in_caller_group */

void mpt_run_command_in_caller_group(int on) { run_in_caller_group = on; }

int mpt_run_command(char *const argv[], double timeout_s, char *out, size_t cap, int *status,
                    double *seconds, mpt_error *err) {
  return mpt_run_command_env(argv, environ, NULL, timeout_s, out, cap, status, seconds, err);
}

int mpt_run_command_env(char *const argv[], char *const envp[], const mpt_watch *watch, double timeout_s, char *out,
                        size_t cap, int *status, double *seconds, mpt_error *err) {
  double t0 = mpt_clock_mono_s();
  *status = -1;
  if (seconds) *seconds = 0;
  if (out && cap) out[0] = 0;
  int pfd[2];
  if (pipe2(pfd, O_CLOEXEC) != 0)
    return mpt_error_set(err, MPT_ERR_INTERNAL, "cannot run %s: pipe: %s", argv[0], strerror(errno));
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, pfd[1], 1);
  posix_spawn_file_actions_adddup2(&fa, pfd[1], 2);
  posix_spawn_file_actions_addclosefrom_np(&fa, 3); /* not the worker's sockets, pipes or run log */
  posix_spawnattr_t at;
  posix_spawnattr_init(&at);
  /* its own process group, so a timeout kills the compiler driver and everything it started */
  posix_spawnattr_setflags(&at, (run_in_caller_group ? 0 : POSIX_SPAWN_SETPGROUP) | POSIX_SPAWN_SETSIGDEF |
                                     POSIX_SPAWN_SETSIGMASK);
  posix_spawnattr_setpgroup(&at, 0);
  sigset_t all, none;
  sigfillset(&all);
  sigemptyset(&none);
  sigdelset(&all, SIGKILL);
  sigdelset(&all, SIGSTOP);
  posix_spawnattr_setsigdefault(&at, &all);
  posix_spawnattr_setsigmask(&at, &none);
  pid_t pid;
  int rc = posix_spawnp(&pid, argv[0], &fa, &at, argv, envp);
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&at);
  close(pfd[1]);
  if (rc != 0) {
    close(pfd[0]);
    return mpt_error_set(err, MPT_ERR_IO, "cannot run %s: %s", argv[0], strerror(rc));
  }
  double deadline = timeout_s > 0 ? t0 + timeout_s : 0;
  size_t used = 0;
  int timed_out = 0; /* 1: the deadline passed, 2: the watch said stop */
  char sink[4096];
  for (;;) {
    int w = wait_readable(pfd[0], deadline, 0, watch);
    if (w == 0 || w == WAIT_CANCELLED) {
      timed_out = w == 0 ? 1 : 2;
      break;
    }
    if (w < 0) break;
    char *dst = sink;
    size_t room = sizeof sink;
    if (out && cap > 64 && used + 1 >= cap && !strstr(out, "error")) {
      /* full of warnings and no error yet: keep the later half, so that the first error line is kept */
      size_t keep = used / 2;
      memmove(out, out + used - keep, keep);
      used = keep;
      out[used] = 0;
    }
    if (out && used + 1 < cap) {
      dst = out + used;
      room = cap - 1 - used;
    }
    ssize_t r = read(pfd[0], dst, room);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    if (dst != sink) used += (size_t)r, out[used] = 0;
  }
  if (out && cap) out[used] = 0;
  close(pfd[0]);
  int st = 0;
  if (timed_out) {
    if (!run_in_caller_group) kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
  }
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {}
  if (timed_out)
    *status = timed_out == 1 ? -1 : -2;
  else if (WIFEXITED(st))
    *status = WEXITSTATUS(st);
  else if (WIFSIGNALED(st))
    *status = 128 + WTERMSIG(st);
  if (seconds) *seconds = mpt_clock_mono_s() - t0;
  return 0;
}
