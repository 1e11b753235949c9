/* evaluators/gpu/gpu_list_forked.c: mpt_gpu_list_cuda and mpt_gpu_list_hip (gpu_devices.h): the device lists made
 * in a forked child, so that the caller never initializes a GPU runtime (a process that forks after it did cannot
 * use CUDA in the child: the evaluators fork their device servers and compiles, `mptune devices` and the tests list
 * before they open an evaluator). */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "evaluators/gpu/gpu_devices.h"
#include "spaces/sys/fd_io.h"

enum { MOST = 64 };                    /* devices one list carries */
#define LIST_TIMEOUT_MS 120000         /* a driver that hangs while it initializes */

typedef struct list_report {
  int32_t n;                           /* as mpt_gpu_list_*_here returned */
  int32_t code;
  char msg[1024];
  mpt_gpu_desc gpus[MOST];
} list_report;

typedef int (*list_fn)(mpt_gpu_desc *out, int cap, mpt_error *err);

static _Noreturn void list_in_child(list_fn fn, int fd) {
  list_report *r = calloc(1, sizeof *r);
  if (!r) _exit(2);
  mpt_error e;
  mpt_error_clear(&e);
  r->n = fn(r->gpus, MOST, &e);
  r->code = e.code;
  snprintf(r->msg, sizeof r->msg, "%s", e.msg);
  _exit(mpt_fd_write_all(fd, r, sizeof *r) ? 3 : 0);
}

/* reads the child's report whole: 0, or -1 (it died, or hung past the timeout) */
static int read_report(int fd, list_report *r) {
  size_t got = 0;
  while (got < sizeof *r) {
    struct pollfd p = {.fd = fd, .events = POLLIN};
    int pr = poll(&p, 1, LIST_TIMEOUT_MS);
    if (pr < 0 && errno == EINTR) continue;
    if (pr <= 0) return -1;
    ssize_t n = read(fd, (char *)r + got, sizeof *r - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return -1;
    got += (size_t)n;
  }
  return 0;
}

static int list_forked(list_fn fn, const char *label, mpt_gpu_desc *out, int cap, mpt_error *err) {
  int fds[2];
  if (pipe(fds) != 0) return mpt_error_set(err, MPT_ERR_DEVICE, "no %s device: pipe: %s", label, strerror(errno));
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return mpt_error_set(err, MPT_ERR_DEVICE, "no %s device: fork: %s", label, strerror(errno));
  }
  if (pid == 0) {
    close(fds[0]);
    list_in_child(fn, fds[1]);
  }
  close(fds[1]);
  list_report *r = malloc(sizeof *r);
  int bad = !r || read_report(fds[0], r) != 0;
  close(fds[0]);
  if (bad) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  if (bad) {
    free(r);
    return mpt_error_set(err, MPT_ERR_DEVICE, "no %s device: listing the devices failed (the runtime %s)", label,
                         WIFSIGNALED(status) ? "crashed" : "hung or gave no answer");
  }
  int n = r->n;
  if (n < 0) mpt_error_set(err, r->code ? r->code : n, "%s", r->msg);
  for (int i = 0; i < n && i < cap && i < MOST; i++) out[i] = r->gpus[i];
  free(r);
  return n;
}

int mpt_gpu_list_cuda(mpt_gpu_desc *out, int cap, mpt_error *err) {
  return list_forked(mpt_gpu_list_cuda_here, "CUDA", out, cap, err);
}

int mpt_gpu_list_hip(mpt_gpu_desc *out, int cap, mpt_error *err) {
  return list_forked(mpt_gpu_list_hip_here, "HIP", out, cap, err);
}
