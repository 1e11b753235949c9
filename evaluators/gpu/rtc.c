/* evaluators/gpu/rtc.c: run-time compilations in a forked child (a compiler crash or hang loses only that
 * child; its result comes back through a pipe) and the result they give. Contract: evaluators/gpu/rtc.h. */
#include "evaluators/gpu/rtc.h"
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "spaces/sys/clock.h"
#include "spaces/sys/fd_io.h"

void mpt_rtc_result_free(mpt_rtc_result *r) {
  if (!r) return;
  free(r->code);
  free(r->lowered);
  free(r->log);
  memset(r, 0, sizeof *r);
}

/* What the child writes to the pipe: this header, then the error message (msg_len bytes), the code, the
 * lowered name and the log. */
typedef struct wire_hdr {
  int32_t rc, ok, is_ptx, err_code;
  uint64_t code_size, lowered_len, log_len, msg_len;
  double compile_ms;
} wire_hdr;

/* One call of a compile function, as the child makes it. */
typedef struct compile_call {
  mpt_rtc_compile_fn fn;
  const char *source, *source_name, *kernel_name, *arch;
  const char *const *opts;
  int n_opts;
} compile_call;

/* What the parent read from the child: the bytes, and why reading stopped early (if it did). buf is NULL
 * when memory ran out. */
typedef struct child_report {
  char *buf;
  size_t len;
  int timed_out, cancelled;
} child_report;

static const char *signal_name(int sig) {
  switch (sig) {
  case SIGSEGV: return "SIGSEGV";
  case SIGABRT: return "SIGABRT";
  case SIGBUS: return "SIGBUS";
  case SIGFPE: return "SIGFPE";
  case SIGILL: return "SIGILL";
  case SIGKILL: return "SIGKILL";
  case SIGTERM: return "SIGTERM";
  default: return "signal";
  }
}

/* ---- the child ---- */

/* the header of a report of the compile function's outcome (rc, e; r only when rc is 0) */
static void make_header(int rc, const mpt_error *e, const mpt_rtc_result *r, wire_hdr *h) {
  memset(h, 0, sizeof *h);
  h->rc = rc;
  h->err_code = e->code;
  h->msg_len = rc ? strlen(e->msg) : 0;
  if (rc == 0) {
    h->ok = r->ok;
    h->is_ptx = r->is_ptx;
    h->code_size = r->code ? r->code_size : 0;
    h->lowered_len = r->lowered ? strlen(r->lowered) : 0;
    h->log_len = r->log ? strlen(r->log) : 0;
    h->compile_ms = r->compile_ms;
  }
}

int mpt_rtc_pack(int rc, const mpt_error *e, const mpt_rtc_result *r, char **buf, size_t *len) {
  wire_hdr h;
  make_header(rc, e, r, &h);
  *len = sizeof h + h.msg_len + h.code_size + h.lowered_len + h.log_len;
  char *p = *buf = malloc(*len);
  if (!p) return -1;
  memcpy(p, &h, sizeof h);
  p += sizeof h;
  if (h.msg_len) memcpy(p, e->msg, h.msg_len);
  p += h.msg_len;
  if (h.code_size) memcpy(p, r->code, h.code_size);
  p += h.code_size;
  if (h.lowered_len) memcpy(p, r->lowered, h.lowered_len);
  p += h.lowered_len;
  if (h.log_len) memcpy(p, r->log, h.log_len);
  return 0;
}

/* Writes the outcome of the compile function (rc, e; r only when rc is 0) to fd, part by part (a part that
 * cannot be read breaks the report off there): 0, or -1 when a write failed. */
static int write_report(int fd, int rc, const mpt_error *e, const mpt_rtc_result *r) {
  wire_hdr h;
  make_header(rc, e, r, &h);
  int bad = mpt_fd_write_all(fd, &h, sizeof h);
  if (!bad && h.msg_len) bad = mpt_fd_write_all(fd, e->msg, h.msg_len);
  if (!bad && h.code_size) bad = mpt_fd_write_all(fd, r->code, h.code_size);
  if (!bad && h.lowered_len) bad = mpt_fd_write_all(fd, r->lowered, h.lowered_len);
  if (!bad && h.log_len) bad = mpt_fd_write_all(fd, r->log, h.log_len);
  return bad;
}

/* The forked child: compiles, reports to fd and leaves with _exit (status 3 when the report could not be
 * written whole). */
static _Noreturn void compile_in_child(int fd, const compile_call *c) {
  signal(SIGPIPE, SIG_IGN);
  /* a crashing compiler dies of its own signal, not in the caller's handlers (MPI, test harness) */
  static const int crash_sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
  for (int i = 0; i < 5; i++) signal(crash_sigs[i], SIG_DFL);
  mpt_rtc_result r;
  mpt_error e;
  mpt_error_clear(&e);
  int rc = c->fn(c->source, c->source_name, c->kernel_name, c->arch, c->opts, c->n_opts, &r, &e);
  _exit(write_report(fd, rc, &e, &r) ? 3 : 0);
}

/* ---- the parent ---- */

/* Forks the child that runs c, its report coming back through a pipe: the child's pid with *fd the
 * pipe's read end, or MPT_ERR_INTERNAL. */
static pid_t spawn_compiler(const compile_call *c, int *fd, mpt_error *err) {
  int fds[2];
  if (pipe(fds) != 0) return mpt_error_set(err, MPT_ERR_INTERNAL, "pipe: %s", strerror(errno));
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return mpt_error_set(err, MPT_ERR_INTERNAL, "fork: %s", strerror(errno));
  }
  if (pid == 0) {
    close(fds[0]);
    compile_in_child(fds[1], c);
  }
  close(fds[1]);
  *fd = fds[0];
  return pid;
}

/* Reads everything the child writes to fd until it closes the pipe, the deadline passes (timeout_s > 0)
 * or the watch says stop, asked at least every 100 ms. */
static void read_report(int fd, double timeout_s, const mpt_watch *watch, child_report *rep) {
  size_t cap = 1 << 16;
  memset(rep, 0, sizeof *rep);
  rep->buf = malloc(cap);
  double deadline = timeout_s > 0 ? mpt_clock_mono_s() + timeout_s : 0;
  while (rep->buf) {
    int wait_ms = -1;
    if (deadline > 0) {
      double left = deadline - mpt_clock_mono_s();
      if (left <= 0) {
        rep->timed_out = 1;
        break;
      }
      wait_ms = (int)(left * 1000) + 1;
    }
    /* the watch: a stop ends the compile at once; with one rank the progress line goes on during a long one */
    if (mpt_watch_call(watch, NULL, -1)) {
      rep->cancelled = 1;
      break;
    }
    if (wait_ms < 0 || wait_ms > 100) wait_ms = 100;
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int pr = poll(&p, 1, wait_ms);
    if (pr < 0 && errno == EINTR) continue;
    if (pr < 0) break;
    if (pr == 0) continue; /* deadline checked above */
    if (rep->len == cap) {
      char *nb = realloc(rep->buf, cap * 2);
      if (!nb) break;
      rep->buf = nb;
      cap *= 2;
    }
    ssize_t got = read(fd, rep->buf + rep->len, cap - rep->len);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    rep->len += (size_t)got;
  }
}

/* Kills the child when reading stopped early, and reaps it: its wait status. */
static int reap_compiler(pid_t pid, const child_report *rep) {
  if (rep->timed_out || rep->cancelled) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

/* The child gave no report: killed at the deadline or on the stop request, crashed, or left before
 * writing its header. The variant's compile fails, the log says why; 0. */
static int fail_without_report(const child_report *rep, int status, double timeout_s, const char *arch,
                               mpt_rtc_result *res) {
  char msg[512];
  res->ok = 0;
  if (rep->cancelled) {
    res->cancelled = 1;
    snprintf(msg, sizeof msg, "cancelled while compiling for %s: the run is stopping (compiler killed)", arch);
  } else if (rep->timed_out) {
    res->timed_out = 1;
    snprintf(msg, sizeof msg, "compiler timed out after %.3g s compiling for %s (killed)", timeout_s, arch);
  } else if (WIFSIGNALED(status)) {
    res->crashed = WTERMSIG(status);
    snprintf(msg, sizeof msg, "compiler crashed with %s (signal %d) compiling for %s", signal_name(res->crashed),
             res->crashed, arch);
  } else {
    res->crashed = SIGABRT;
    snprintf(msg, sizeof msg, "compiler process exited with status %d before reporting (compiling for %s)",
             WIFEXITED(status) ? WEXITSTATUS(status) : -1, arch);
  }
  res->log = strdup(msg);
  return 0;
}

/* The child ended in the middle of its report (need bytes announced, rep->len read): this variant's
 * compile failed; 0. */
static int fail_incomplete_report(const child_report *rep, size_t need, int status, const char *arch,
                                  mpt_rtc_result *res) {
  char msg[512];
  res->ok = 0;
  res->crashed = SIGABRT;
  snprintf(msg, sizeof msg, "compiler process ended before its result was complete (%zu of %zu bytes; exit status "
           "%d; compiling for %s)", rep->len, need, WIFEXITED(status) ? WEXITSTATUS(status) : -1, arch);
  res->log = strdup(msg);
  return 0;
}

/* The result of a whole report (header h, the parts from p on) into res: 0 or MPT_ERR_NOMEM. */
static int copy_result(const wire_hdr *h, const char *p, mpt_rtc_result *res, mpt_error *err) {
  res->ok = h->ok;
  res->is_ptx = h->is_ptx;
  res->compile_ms = h->compile_ms;
  if (h->code_size) {
    res->code = malloc(h->code_size);
    if (res->code) memcpy(res->code, p, h->code_size);
    res->code_size = h->code_size;
  }
  p += h->code_size;
  res->lowered = strndup(p, h->lowered_len);
  p += h->lowered_len;
  res->log = strndup(p, h->log_len);
  if ((h->code_size && !res->code) || !res->lowered || !res->log) {
    mpt_rtc_result_free(res);
    return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  }
  return 0;
}

/* A report with its header: a compile error, an error of the compile function, or the result. */
static int unpack_report(const child_report *rep, int status, const char *arch, mpt_rtc_result *res,
                         mpt_error *err) {
  wire_hdr h;
  memcpy(&h, rep->buf, sizeof h);
  size_t need = sizeof h + h.msg_len + h.code_size + h.lowered_len + h.log_len;
  if (need != rep->len) return fail_incomplete_report(rep, need, status, arch, res);
  const char *p = rep->buf + sizeof h;
  if (h.rc == MPT_ERR_INTERNAL) { /* the compiler failed on this source (no program, no code): a compile error */
    res->ok = 0;
    res->log = strndup(p, h.msg_len);
    return res->log ? 0 : mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  }
  if (h.rc != 0) /* the compiler cannot be used at all (not found, an architecture it does not know) */
    return mpt_error_set(err, h.rc, "%.*s", (int)h.msg_len, p);
  return copy_result(&h, p + h.msg_len, res, err);
}

int mpt_rtc_compile_isolated(mpt_rtc_compile_fn fn, const char *source, const char *source_name,
                             const char *kernel_name, const char *arch, const char *const *opts,
                             int n_opts, double timeout_s, const mpt_watch *watch, mpt_rtc_result *res,
                             mpt_error *err) {
  memset(res, 0, sizeof *res);
  const compile_call call = {fn, source, source_name, kernel_name, arch, opts, n_opts};
  int fd = -1;
  pid_t pid = spawn_compiler(&call, &fd, err);
  if (pid < 0) return (int)pid;
  child_report rep;
  read_report(fd, timeout_s, watch, &rep);
  close(fd);
  int status = reap_compiler(pid, &rep);
  if (!rep.buf) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  int rc;
  if (rep.timed_out || rep.cancelled || WIFSIGNALED(status) || rep.len < sizeof(wire_hdr))
    rc = fail_without_report(&rep, status, timeout_s, arch, res);
  else
    rc = unpack_report(&rep, status, arch, res, err);
  free(rep.buf);
  return rc;
}

int mpt_rtc_unpack(const char *buf, size_t len, mpt_rtc_result *res, mpt_error *err) {
  memset(res, 0, sizeof *res);
  child_report rep = {(char *)buf, len, 0, 0};
  if (len < sizeof(wire_hdr)) {
    res->crashed = SIGABRT;
    res->log = strdup("compile process sent no result");
    return res->log ? 0 : mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  }
  return unpack_report(&rep, 0, "its architecture", res, err);
}

int mpt_rtc_packed_rc(const char *buf, size_t len) {
  wire_hdr h;
  if (len < sizeof h) return MPT_ERR_INTERNAL;
  memcpy(&h, buf, sizeof h);
  return h.rc;
}
