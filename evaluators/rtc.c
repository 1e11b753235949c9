/* evaluators/rtc.c: run-time compilations in a forked child (a compiler crash or hang loses only that
 * child; its result comes back through a pipe) and the result they give. Contract: evaluators/rtc.h. */
#include "evaluators/rtc.h"
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
#include "evaluators/isolate.h"
#include "spaces/sys/clock.h"

void mpt_rtc_result_free(mpt_rtc_result *r) {
  if (!r) return;
  free(r->code);
  free(r->lowered);
  free(r->log);
  memset(r, 0, sizeof *r);
}

typedef struct wire_hdr {
  int32_t rc, ok, is_ptx, err_code;
  uint64_t code_size, lowered_len, log_len, msg_len;
  double compile_ms;
} wire_hdr;

static int write_all(int fd, const void *p, size_t n) {
  const char *c = p;
  while (n > 0) {
    ssize_t w = write(fd, c, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return -1;
    c += w;
    n -= (size_t)w;
  }
  return 0;
}

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

int mpt_rtc_compile_isolated(mpt_rtc_compile_fn fn, const char *source, const char *source_name,
                             const char *kernel_name, const char *arch, const char *const *opts,
                             int n_opts, double timeout_s, mpt_rtc_result *res, mpt_error *err) {
  memset(res, 0, sizeof *res);
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
    signal(SIGPIPE, SIG_IGN);
    /* a crashing compiler dies of its own signal, not in the caller's handlers (MPI, test harness) */
    static const int crash_sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
    for (int i = 0; i < 5; i++) signal(crash_sigs[i], SIG_DFL);
    mpt_rtc_result r;
    mpt_error e;
    mpt_error_clear(&e);
    int rc = fn(source, source_name, kernel_name, arch, opts, n_opts, &r, &e);
    wire_hdr h;
    memset(&h, 0, sizeof h);
    h.rc = rc;
    h.err_code = e.code;
    h.msg_len = rc ? strlen(e.msg) : 0;
    if (rc == 0) {
      h.ok = r.ok;
      h.is_ptx = r.is_ptx;
      h.code_size = r.code ? r.code_size : 0;
      h.lowered_len = r.lowered ? strlen(r.lowered) : 0;
      h.log_len = r.log ? strlen(r.log) : 0;
      h.compile_ms = r.compile_ms;
    }
    int bad = write_all(fds[1], &h, sizeof h);
    if (!bad && h.msg_len) bad = write_all(fds[1], e.msg, h.msg_len);
    if (!bad && h.code_size) bad = write_all(fds[1], r.code, h.code_size);
    if (!bad && h.lowered_len) bad = write_all(fds[1], r.lowered, h.lowered_len);
    if (!bad && h.log_len) bad = write_all(fds[1], r.log, h.log_len);
    _exit(bad ? 3 : 0);
  }
  close(fds[1]);
  /* read everything the child writes, with the deadline */
  size_t cap = 1 << 16, len = 0;
  char *buf = malloc(cap);
  int timed_out = 0, cancelled = 0, rc = 0;
  double deadline = timeout_s > 0 ? mpt_clock_mono_s() + timeout_s : 0;
  while (buf) {
    int wait_ms = -1;
    if (deadline > 0) {
      double left = deadline - mpt_clock_mono_s();
      if (left <= 0) {
        timed_out = 1;
        break;
      }
      wait_ms = (int)(left * 1000) + 1;
    }
    /* a stop request ends the compile now; the one-rank progress line goes on during a long one */
    if (mpt_isolate_stop_requested()) {
      cancelled = 1;
      break;
    }
    if (wait_ms < 0 || wait_ms > 100) wait_ms = 100;
    struct pollfd p = {.fd = fds[0], .events = POLLIN};
    int pr = poll(&p, 1, wait_ms);
    if (pr < 0 && errno == EINTR) continue;
    if (pr < 0) break;
    if (pr == 0) continue; /* deadline checked above */
    if (len == cap) {
      char *nb = realloc(buf, cap * 2);
      if (!nb) break;
      buf = nb;
      cap *= 2;
    }
    ssize_t got = read(fds[0], buf + len, cap - len);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    len += (size_t)got;
  }
  close(fds[0]);
  if (timed_out || cancelled) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!buf) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  char msg[512];
  if (timed_out || cancelled || WIFSIGNALED(status) || len < sizeof(wire_hdr)) {
    res->ok = 0;
    if (cancelled) {
      res->cancelled = 1;
      snprintf(msg, sizeof msg, "cancelled while compiling for %s: the run is stopping (compiler killed)", arch);
    } else if (timed_out) {
      res->timed_out = 1;
      snprintf(msg, sizeof msg, "compiler timed out after %.3g s compiling for %s (killed)", timeout_s, arch);
    } else if (WIFSIGNALED(status)) {
      res->crashed = WTERMSIG(status);
      snprintf(msg, sizeof msg, "compiler crashed with %s (signal %d) compiling for %s",
               signal_name(res->crashed), res->crashed, arch);
    } else {
      res->crashed = SIGABRT;
      snprintf(msg, sizeof msg, "compiler process exited with status %d before reporting (compiling for %s)",
               WIFEXITED(status) ? WEXITSTATUS(status) : -1, arch);
    }
    res->log = strdup(msg);
    free(buf);
    return 0;
  }
  wire_hdr h;
  memcpy(&h, buf, sizeof h);
  size_t need = sizeof h + h.msg_len + h.code_size + h.lowered_len + h.log_len;
  if (need != len) { /* the child ended in the middle of its report: this variant's compile failed */
    res->ok = 0;
    res->crashed = SIGABRT;
    snprintf(msg, sizeof msg, "compiler process ended before its result was complete (%zu of %zu bytes; exit status "
             "%d; compiling for %s)", len, need, WIFEXITED(status) ? WEXITSTATUS(status) : -1, arch);
    res->log = strdup(msg);
    free(buf);
    return 0;
  }
  const char *p = buf + sizeof h;
  if (h.rc == MPT_ERR_INTERNAL) { /* the compiler failed on this source (no program, no code): a compile error */
    res->ok = 0;
    res->log = strndup(p, h.msg_len);
    free(buf);
    return res->log ? 0 : mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  }
  if (h.rc != 0) { /* the compiler cannot be used at all (not found, an architecture it does not know) */
    rc = mpt_error_set(err, h.rc, "%.*s", (int)h.msg_len, p);
    free(buf);
    return rc;
  }
  p += h.msg_len;
  res->ok = h.ok;
  res->is_ptx = h.is_ptx;
  res->compile_ms = h.compile_ms;
  if (h.code_size) {
    res->code = malloc(h.code_size);
    if (res->code) memcpy(res->code, p, h.code_size);
    res->code_size = h.code_size;
  }
  p += h.code_size;
  res->lowered = strndup(p, h.lowered_len);
  p += h.lowered_len;
  res->log = strndup(p, h.log_len);
  free(buf);
  if ((h.code_size && !res->code) || !res->lowered || !res->log) {
    mpt_rtc_result_free(res);
    return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  }
  return 0;
}
