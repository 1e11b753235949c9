/* tests/test_cpu_isolate.c: the isolation layer (evaluators/isolate.c): a serving child answers
 * requests; a child that segfaults, aborts, hangs or runs out of memory is reported (signal name,
 * timeout) and replaced; one-shot mode; external commands with a timeout; the watch that cancels a call. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <signal.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "spaces/sys/signame.h"
#include "evaluators/isolate.h"
#include "tests/asan.h"

extern char **environ;

static long serve(void *ctx, const void *req, size_t len, void *resp, size_t cap) {
  (void)ctx;
  char cmd[64];
  snprintf(cmd, sizeof cmd, "%.*s", (int)len, (const char *)req);
  if (strcmp(cmd, "segv") == 0) {
    volatile int *volatile p = (volatile int *)(uintptr_t)16; /* not NULL: UBSan would catch that first */
    *p = 1;
  } else if (strcmp(cmd, "abort") == 0) {
    abort();
  } else if (strcmp(cmd, "hang") == 0) {
    for (volatile int x = 1; x;) {
    }
  } else if (strcmp(cmd, "exit") == 0) {
    _exit(3);
  } else if (strncmp(cmd, "alloc:", 6) == 0) {
    size_t mb = strtoul(cmd + 6, NULL, 10);
    char *m = malloc(mb << 20);
    if (m) memset(m, 1, mb << 20);
    int n = snprintf(resp, cap, "%s", m ? "ok" : "null");
    free(m);
    return n;
  } else if (strcmp(cmd, "pid") == 0) {
    return snprintf(resp, cap, "%d", (int)getpid());
  } else if (strcmp(cmd, "fork") == 0 || strcmp(cmd, "fork+segv") == 0) { /* a child that outlives the call */
    pid_t k = fork();
    if (k == 0) {
      sleep(30);
      _exit(0);
    }
    if (cmd[4] == '+') raise(SIGSEGV);
    return snprintf(resp, cap, "%d", (int)k);
  } else if (strcmp(cmd, "exit(0)") == 0) {
    exit(0); /* runs exit handlers: none of the worker's may run here */
  }
  size_t n = len < cap ? len : cap;
  memcpy(resp, req, n);
  return (long)n;
}

static void call(mpt_isolate *iso, const char *req, double timeout, mpt_isolate_result *res, char *resp) {
  size_t len = 0;
  mpt_error err = {0};
  assert_int_equal(mpt_isolate_call(iso, req, strlen(req), resp, 255, &len, timeout, res, &err), 0);
  resp[len] = 0;
}

static void test_serving_child(void **state) {
  (void)state;
  mpt_isolate *iso = NULL;
  mpt_error err = {0};
  mpt_isolate_opts o = {0};
  assert_int_equal(mpt_isolate_create(&o, serve, NULL, NULL, &iso, &err), 0);
  mpt_isolate_result r;
  char resp[256], pid1[256];
  call(iso, "hello", 5, &r, resp);
  assert_int_equal(r.outcome, MPT_ISO_OK);
  assert_string_equal(resp, "hello");
  call(iso, "pid", 5, &r, pid1);
  assert_int_equal(atoi(pid1), (int)mpt_isolate_pid(iso));
  assert_int_not_equal(atoi(pid1), (int)getpid());
  call(iso, "pid", 5, &r, resp);
  assert_string_equal(resp, pid1); /* the same child serves again */
  assert_int_equal(mpt_isolate_forks(iso), 1);

  call(iso, "segv", 5, &r, resp);
  assert_int_equal(r.outcome, MPT_ISO_CRASH);
  assert_int_equal(r.signal, SIGSEGV);
  assert_non_null(strstr(r.reason, "SIGSEGV"));
  assert_int_equal(mpt_isolate_pid(iso), 0);
  call(iso, "again", 5, &r, resp); /* a new child */
  assert_int_equal(r.outcome, MPT_ISO_OK);
  assert_string_equal(resp, "again");
  assert_int_equal(mpt_isolate_forks(iso), 2);

  call(iso, "abort", 5, &r, resp);
  assert_int_equal(r.outcome, MPT_ISO_CRASH);
  assert_non_null(strstr(r.reason, "SIGABRT"));

  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  call(iso, "hang", 0.3, &r, resp);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double dt = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
  assert_int_equal(r.outcome, MPT_ISO_TIMEOUT);
  assert_true(dt >= 0.29 && dt < 5.0);
  assert_non_null(strstr(r.reason, "killed"));

  call(iso, "exit", 5, &r, resp);
  assert_int_equal(r.outcome, MPT_ISO_CRASH);
  assert_int_equal(r.signal, 0);
  assert_int_equal(r.exit_status, 3);

  call(iso, "still here", 5, &r, resp);
  assert_int_equal(r.outcome, MPT_ISO_OK);
  assert_string_equal(resp, "still here");
  assert_int_equal(mpt_isolate_forks(iso), 5);
  mpt_isolate_destroy(iso);
}

static void test_one_shot(void **state) {
  (void)state;
  mpt_isolate *iso = NULL;
  mpt_error err = {0};
  mpt_isolate_opts o = {.one_shot = 1};
  assert_int_equal(mpt_isolate_create(&o, serve, NULL, NULL, &iso, &err), 0);
  mpt_isolate_result r;
  char a[256], b[256];
  call(iso, "pid", 5, &r, a);
  call(iso, "pid", 5, &r, b);
  assert_int_equal(r.outcome, MPT_ISO_OK);
  assert_string_not_equal(a, b);
  assert_int_equal(mpt_isolate_forks(iso), 2);
  assert_int_equal(mpt_isolate_pid(iso), 0);
  mpt_isolate_destroy(iso);
}

static void test_memory_limit(void **state) {
  (void)state;
  if (ASAN) skip(); /* AddressSanitizer reserves terabytes of address space: no RLIMIT_AS there */
  mpt_isolate *iso = NULL;
  mpt_error err = {0};
  mpt_isolate_opts o = {.mem_limit = (size_t)256 << 20};
  assert_int_equal(mpt_isolate_create(&o, serve, NULL, NULL, &iso, &err), 0);
  mpt_isolate_result r;
  char resp[256];
  call(iso, "alloc:64", 5, &r, resp);
  assert_string_equal(resp, "ok");
  call(iso, "alloc:1024", 5, &r, resp);
  assert_int_equal(r.outcome, MPT_ISO_OK);
  assert_string_equal(resp, "null"); /* the child's allocation fails; the worker is untouched */
  mpt_isolate_destroy(iso);
}

/* 1 when process pid is gone: no such process, or a zombie nobody reaps (a container's init may not) */
static int gone(pid_t pid) {
  char path[64], stat[256] = "";
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  FILE *f = fopen(path, "r");
  if (!f) return 1;
  size_t n = fread(stat, 1, sizeof stat - 1, f);
  fclose(f);
  stat[n] = '\0';
  const char *rp = strrchr(stat, ')');
  return rp && rp[1] == ' ' && (rp[2] == 'Z' || rp[2] == 'X');
}

static char exit_marker[64];

static void worker_exit_handler(void) { /* the worker's own (HDF5 closing the run log, in mptune) */
  if (exit_marker[0]) {
    int fd = open(exit_marker, O_WRONLY | O_CREAT, 0600);
    if (fd >= 0) close(fd);
  }
}

/* What a variant leaves behind goes with it: a process it forked is killed with it, its crash shows at
 * once although that process holds the socket (it showed only at the timeout), and exit() in it runs none
 * of the worker's exit handlers (with -n 1 HDF5's ran there, and crashed) */
static void test_variant_leftovers(void **state) {
  (void)state;
  snprintf(exit_marker, sizeof exit_marker, "/tmp/mpt_iso_exit_%d", (int)getpid());
  unlink(exit_marker);
  atexit(worker_exit_handler);
  mpt_isolate *iso = NULL;
  mpt_error err = {0};
  mpt_isolate_opts o = {0};
  assert_int_equal(mpt_isolate_create(&o, serve, NULL, NULL, &iso, &err), 0);
  mpt_isolate_result r;
  char resp[256];
  call(iso, "fork", 5, &r, resp);
  assert_int_equal(r.outcome, MPT_ISO_OK);
  pid_t grandchild = (pid_t)atoi(resp);
  assert_true(grandchild > 0 && !gone(grandchild));
  mpt_isolate_destroy(iso); /* the worker ends its child: the forked one ends too */
  iso = NULL;
  for (int i = 0; i < 200 && !gone(grandchild); i++) usleep(10000);
  assert_true(gone(grandchild));
  assert_int_equal(mpt_isolate_create(&o, serve, NULL, NULL, &iso, &err), 0);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  call(iso, "fork+segv", 20, &r, resp);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  assert_int_equal(r.outcome, MPT_ISO_CRASH);
  assert_int_equal(r.signal, SIGSEGV);
  assert_true((double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec) < 5); /* not the 20 s */
  call(iso, "exit(0)", 5, &r, resp);
  assert_int_equal(r.outcome, MPT_ISO_CRASH);
  assert_int_equal(r.exit_status, 0);
  assert_int_equal(access(exit_marker, F_OK), -1); /* the handler did not run in the child */
  mpt_isolate_destroy(iso);
  exit_marker[0] = '\0'; /* this process's own exit writes nothing */
}

static void test_run_command(void **state) {
  (void)state;
  char out[256];
  int status;
  double secs;
  mpt_error err = {0};
  char *ok[] = {"sh", "-c", "echo hello; echo oops >&2; exit 3", NULL};
  assert_int_equal(mpt_run_command(ok, 10, out, sizeof out, &status, &secs, &err), 0);
  assert_int_equal(status, 3);
  assert_non_null(strstr(out, "hello"));
  assert_non_null(strstr(out, "oops"));
  char *slow[] = {"sh", "-c", "sleep 20", NULL};
  assert_int_equal(mpt_run_command(slow, 0.3, out, sizeof out, &status, &secs, &err), 0);
  assert_int_equal(status, -1);
  assert_true(secs < 5);
  char *big[] = {"sh", "-c", "yes | head -c 100000", NULL}; /* more output than fits: drained, a part kept */
  assert_int_equal(mpt_run_command(big, 10, out, sizeof out, &status, &secs, &err), 0);
  assert_int_equal(status, 0);
  assert_true(strlen(out) >= sizeof out / 2 && strlen(out) < sizeof out);
  /* a flood of warnings before the first error: the error line is kept (only the first 8 KB of a
   * compiler's output were kept, all warnings) */
  char *flood[] = {"sh", "-c", "i=0; while [ $i -lt 400 ]; do echo \"k.c:$i: warning: suggest parentheses\"; "
                   "i=$((i+1)); done; echo \"k.c:401: error: 'undeclared' undeclared\"; echo \"k.c:402: note: x\"; exit 1", NULL};
  assert_int_equal(mpt_run_command(flood, 10, out, sizeof out, &status, &secs, &err), 0);
  assert_int_equal(status, 1);
  assert_non_null(strstr(out, "k.c:401: error: 'undeclared' undeclared"));
  /* the command inherits no descriptor but stdin, stdout and stderr */
  int keep = open("/dev/null", O_RDONLY); /* not close-on-exec */
  assert_true(keep > 2);
  char probe[64];
  snprintf(probe, sizeof probe, "test -e /proc/self/fd/%d && echo inherited; exit 0", keep);
  char *fds[] = {"sh", "-c", probe, NULL};
  assert_int_equal(mpt_run_command(fds, 10, out, sizeof out, &status, &secs, &err), 0);
  assert_null(strstr(out, "inherited"));
  close(keep);
  char *missing[] = {"/nonexistent/mptune-cc", NULL};
  assert_true(mpt_run_command(missing, 10, out, sizeof out, &status, &secs, &err) < 0);
  assert_non_null(strstr(err.msg, "/nonexistent/mptune-cc"));
  assert_string_equal(mpt_signal_name(SIGSEGV), "SIGSEGV");
  assert_string_equal(mpt_signal_name(SIGKILL), "SIGKILL");
}

/* a watch that says stop while its flag is set, counting its calls */
typedef struct stop_flag {
  int stop;
  int calls;
} stop_flag;

static int watch_flag(void *ctx, const char *doing, double done) {
  (void)doing, (void)done;
  stop_flag *f = ctx;
  f->calls++;
  return f->stop;
}

/* an isolation's watch (mpt_isolate_opts.watch) is its own: asked while its calls wait, it cancels a hang at
 * once (not after the 30 s timeout) and the next call forks a fresh child; another isolation's calls neither
 * ask it nor are cancelled by it. A watched command (mpt_run_command_env) is killed the same way: status -2. */
static void test_watch(void **state) {
  (void)state;
  stop_flag flag = {1, 0};
  mpt_isolate *watched = NULL, *other = NULL;
  mpt_error err = {0};
  mpt_isolate_opts o = {0};
  assert_int_equal(mpt_isolate_create(&o, serve, NULL, NULL, &other, &err), 0);
  o.watch = (mpt_watch){watch_flag, &flag};
  assert_int_equal(mpt_isolate_create(&o, serve, NULL, NULL, &watched, &err), 0);
  mpt_isolate_result r;
  char resp[256];
  call(other, "ping", 5, &r, resp);
  assert_int_equal(r.outcome, MPT_ISO_OK);
  assert_string_equal(resp, "ping");
  assert_int_equal(flag.calls, 0);
  call(watched, "hang", 30, &r, resp);
  assert_int_equal(r.outcome, MPT_ISO_CANCELLED);
  assert_true(r.seconds < 5);
  assert_non_null(strstr(r.reason, "cancelled after"));
  assert_true(flag.calls >= 1);
  flag.stop = 0;
  call(watched, "ping", 5, &r, resp);
  assert_int_equal(r.outcome, MPT_ISO_OK);
  assert_string_equal(resp, "ping");
  assert_int_equal(mpt_isolate_forks(watched), 2);
  int calls = flag.calls;
  call(other, "ping", 5, &r, resp);
  assert_int_equal(flag.calls, calls);
  mpt_isolate_destroy(watched);
  mpt_isolate_destroy(other);

  flag.stop = 1;
  char out[256];
  int status;
  double secs;
  char *slow[] = {"sh", "-c", "sleep 30", NULL};
  mpt_watch w = {watch_flag, &flag};
  assert_int_equal(mpt_run_command_env(slow, environ, &w, 60, out, sizeof out, &status, &secs, &err), 0);
  assert_int_equal(status, -2);
  assert_true(secs < 5);
  assert_int_equal(mpt_run_command_env(slow, environ, NULL, 0.3, out, sizeof out, &status, &secs, &err), 0);
  assert_int_equal(status, -1); /* unwatched: its timeout */
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_serving_child),
    cmocka_unit_test(test_one_shot),
    cmocka_unit_test(test_memory_limit),
    cmocka_unit_test(test_run_command),
    cmocka_unit_test(test_watch),
    cmocka_unit_test(test_variant_leftovers),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
