/* evaluators/gpu_devices.c: GPU enumeration (CUDA driver API, HIP runtime, both loaded at run time)
 * with the *_VISIBLE_DEVICES rules, the round-robin device pick, and compilations isolated in a
 * child process (a compiler crash or hang loses only that child). */
#include "evaluators/gpu_devices.h"
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
#include "evaluators/cuda_api.h"
#include "evaluators/hip_api.h"
#include "spaces/sys/clock.h"

void mpt_rtc_result_free(mpt_rtc_result *r) {
  if (!r) return;
  free(r->code);
  free(r->lowered);
  free(r->log);
  memset(r, 0, sizeof *r);
}

int mpt_gpu_pick(int local_rank, int count) {
  if (count <= 0) return -1;
  if (local_rank < 0) local_rank = 0;
  return local_rank % count;
}

/* A visibility list hides everything when it is empty or starts with a negative or non-numeric id
 * (the runtimes stop parsing at the first invalid entry). UUIDs ("GPU-…") are valid entries. */
static int list_hides_all(const char *v) {
  while (*v == ' ') v++;
  if (!*v) return 1;
  if (*v == '-') return 1;
  if (strncmp(v, "GPU-", 4) == 0 || strncmp(v, "MIG-", 4) == 0) return 0;
  return !(*v >= '0' && *v <= '9');
}

/* HIP reads CUDA_VISIBLE_DEVICES when HIP_VISIBLE_DEVICES is not set (ROCm's "HIP environment
 * variables": "HIP_VISIBLE_DEVICES or CUDA_VISIBLE_DEVICES: device indices exposed to HIP applications");
 * ROCR_VISIBLE_DEVICES applies beneath both */
const char *mpt_gpu_visibility_hides_all(const char *api) {
  const char *vars[3] = {"CUDA_VISIBLE_DEVICES", NULL, NULL};
  if (strcmp(api, "hip") == 0) {
    vars[0] = "ROCR_VISIBLE_DEVICES";
    vars[1] = getenv("HIP_VISIBLE_DEVICES") ? "HIP_VISIBLE_DEVICES" : "CUDA_VISIBLE_DEVICES";
  }
  for (int i = 0; vars[i]; i++) {
    const char *v = getenv(vars[i]);
    if (v && list_hides_all(v)) return vars[i];
  }
  return NULL;
}

int mpt_gpu_bind(const mpt_gpu_desc *gpus, int n, int local_rank) {
  int count = 0;
  for (int i = 0; i < n; i++) count += strcmp(gpus[i].api, gpus[0].api) == 0;
  int pick = mpt_gpu_pick(local_rank, count);
  for (int i = 0; i < n && pick >= 0; i++)
    if (strcmp(gpus[i].api, gpus[0].api) == 0 && pick-- == 0) return i;
  return -1;
}

static void copy_str(char *dst, size_t cap, const char *src) {
  snprintf(dst, cap, "%s", src ? src : "");
}

int mpt_gpu_list_cuda(mpt_gpu_desc *out, int cap, mpt_error *err) {
  const mpt_cuda_driver *d;
  mpt_error e;
  mpt_error_clear(&e);
  if (mpt_cuda_driver_load(&d, &e))
    return mpt_error_set(err, MPT_ERR_DEVICE, "no CUDA device: %s", e.msg);
  const char *hidden = mpt_gpu_visibility_hides_all("cuda");
  if (hidden)
    return mpt_error_set(err, MPT_ERR_DEVICE, "no CUDA device: %s='%s' hides every device", hidden,
                         getenv(hidden));
  char t[256];
  mpt_cu_result r = d->cuInit(0);
  if (r != MPT_CU_SUCCESS)
    return mpt_error_set(err, MPT_ERR_DEVICE, "no CUDA device: cuInit: %s", mpt_cuda_result_text(d, r, t, sizeof t));
  int n = 0;
  r = d->cuDeviceGetCount(&n);
  if (r != MPT_CU_SUCCESS)
    return mpt_error_set(err, MPT_ERR_DEVICE, "no CUDA device: cuDeviceGetCount: %s",
                         mpt_cuda_result_text(d, r, t, sizeof t));
  if (n <= 0) return mpt_error_set(err, MPT_ERR_DEVICE, "no CUDA device: the driver reports none");
  for (int i = 0; i < n && i < cap; i++) {
    mpt_gpu_desc *g = &out[i];
    memset(g, 0, sizeof *g);
    copy_str(g->vendor, sizeof g->vendor, "NVIDIA");
    copy_str(g->api, sizeof g->api, "cuda");
    g->index = i;
    mpt_cu_device dev;
    if (d->cuDeviceGet(&dev, i) != MPT_CU_SUCCESS) continue;
    if (d->cuDeviceGetName(g->name, (int)sizeof g->name, dev) != MPT_CU_SUCCESS) copy_str(g->name, sizeof g->name, "?");
    int major = 0, minor = 0;
    d->cuDeviceGetAttribute(&major, MPT_CU_DEV_CC_MAJOR, dev);
    d->cuDeviceGetAttribute(&minor, MPT_CU_DEV_CC_MINOR, dev);
    snprintf(g->arch, sizeof g->arch, "sm_%d%d", major, minor);
    size_t bytes = 0;
    if (d->cuDeviceTotalMem(&bytes, dev) == MPT_CU_SUCCESS) g->memory_gib = (double)bytes / (1024.0 * 1024 * 1024);
    d->cuDeviceGetAttribute(&g->multiprocessors, MPT_CU_DEV_MULTIPROCESSOR_COUNT, dev);
    d->cuDeviceGetAttribute(&g->max_threads_per_block, MPT_CU_DEV_MAX_THREADS_PER_BLOCK, dev);
    d->cuDeviceGetAttribute(&g->max_shared_per_block, MPT_CU_DEV_MAX_SHARED_PER_BLOCK, dev);
  }
  return n;
}

int mpt_gpu_list_hip(mpt_gpu_desc *out, int cap, mpt_error *err) {
  const mpt_hip_api *a;
  mpt_error e;
  mpt_error_clear(&e);
  if (mpt_hip_load(&a, &e)) return mpt_error_set(err, MPT_ERR_DEVICE, "no HIP device: %s", e.msg);
  const char *hidden = mpt_gpu_visibility_hides_all("hip");
  if (hidden)
    return mpt_error_set(err, MPT_ERR_DEVICE, "no HIP device: %s='%s' hides every device", hidden,
                         getenv(hidden));
  /* the ROCm runtime needs the kernel driver's /dev/kfd: say so instead of a bare hipErrorNoDevice */
  if (access("/dev/kfd", F_OK) != 0)
    return mpt_error_set(err, MPT_ERR_DEVICE, "no HIP device: /dev/kfd is missing (no AMD GPU driver on this machine)");
  char t[256];
  int n = 0;
  /* hipInit fails without a GPU (hipErrorInvalidDevice / hipErrorNoDevice); the count says why */
  mpt_hip_result ri = a->hipInit(0);
  mpt_hip_result r = a->hipGetDeviceCount(&n);
  if (r != MPT_HIP_SUCCESS || n <= 0) {
    if (r == MPT_HIP_SUCCESS) r = ri;
    return mpt_error_set(err, MPT_ERR_DEVICE, "no HIP device: %s",
                         r != MPT_HIP_SUCCESS ? mpt_hip_result_text(a, r, t, sizeof t) : "the runtime reports none");
  }
  for (int i = 0; i < n && i < cap; i++) {
    mpt_gpu_desc *g = &out[i];
    memset(g, 0, sizeof *g);
    copy_str(g->vendor, sizeof g->vendor, "AMD");
    copy_str(g->api, sizeof g->api, "hip");
    g->index = i;
    if (a->hipDeviceGetName(g->name, (int)sizeof g->name, i) != MPT_HIP_SUCCESS || !g->name[0])
      copy_str(g->name, sizeof g->name, "AMD GPU");
    char full[256];
    if (mpt_hip_arch_name(a, i, full, sizeof full, &e) == 0) {
      full[strcspn(full, ":")] = 0; /* "gfx90a:sramecc+:xnack-" -> "gfx90a" */
      copy_str(g->arch, sizeof g->arch, full);
    } else {
      copy_str(g->arch, sizeof g->arch, "gfx?");
    }
    size_t bytes = 0;
    if (a->hipDeviceTotalMem(&bytes, i) == MPT_HIP_SUCCESS) g->memory_gib = (double)bytes / (1024.0 * 1024 * 1024);
    a->hipDeviceGetAttribute(&g->multiprocessors, MPT_HIP_DEV_MULTIPROCESSOR_COUNT, i);
    a->hipDeviceGetAttribute(&g->max_threads_per_block, MPT_HIP_DEV_MAX_THREADS_PER_BLOCK, i);
    a->hipDeviceGetAttribute(&g->max_shared_per_block, MPT_HIP_DEV_MAX_SHARED_PER_BLOCK, i);
  }
  return n;
}

int mpt_gpu_list_all(mpt_gpu_desc *out, int cap, char *why, size_t why_cap) {
  mpt_error e;
  int total = 0;
  if (why && why_cap) why[0] = 0;
  mpt_error_clear(&e);
  int n = mpt_gpu_list_cuda(out, cap, &e);
  if (n < 0) {
    if (why && why_cap) snprintf(why + strlen(why), why_cap - strlen(why), "CUDA: %s\n", e.msg);
  } else {
    total += n < cap ? n : cap;
  }
  mpt_error_clear(&e);
  n = mpt_gpu_list_hip(out + total, cap - total, &e);
  if (n < 0) {
    if (why && why_cap) snprintf(why + strlen(why), why_cap - strlen(why), "HIP: %s\n", e.msg);
  } else {
    total += n < cap - total ? n : cap - total;
  }
  return total;
}

/* ---- isolated compilation ------------------------------------------------------------------- */

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
                             int n_opts, double timeout_s, const mpt_watch *watch, mpt_rtc_result *res,
                             mpt_error *err) {
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
    /* the watch: a stop ends the compile now; with one rank the progress line goes on during a long one */
    if (mpt_watch_call(watch, NULL, -1)) {
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
