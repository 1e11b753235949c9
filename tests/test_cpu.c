/* tests/test_cpu.c: the `cpu` evaluator (evaluators/cpu.c) used directly: the matrix-multiply example
 * compiles, verifies and times (objective = mean of the iterations, median recorded, real compile and
 * benchmark times, a tuned variant beats the default); the purpose-made failing kernel
 * (tests/kernels/failing.c) gives compile_error, wrong_result, crash (SIGSEGV, SIGABRT, memory
 * exhaustion) and timeout with their reasons while the evaluator goes on; open() removes the scratch
 * directories of killed workers and only those; bad input is refused by open() with one clear message each. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "evaluators/evaluator.h"
#include "evaluators/isolate.h"
#include "spaces/space.h"
#include "tests/asan.h"

static const char *src_dir(void) {
  const char *d = getenv("MPT_SOURCE_DIR");
  return d ? d : ".";
}

typedef struct fixture {
  mpt_problem *p;
  mpt_space *s;
  mpt_evaluator *ev;
} fixture;

static int open_problem(const char *path, const mpt_eval_settings *set, fixture *f, mpt_error *err) {
  memset(f, 0, sizeof *f);
  int rc = mpt_problem_load(path, &f->p, err);
  if (rc) return rc;
  if ((rc = mpt_space_build(f->p, &f->s, err))) return rc;
  return mpt_evaluator_open("cpu", f->p, f->s, set, &f->ev, err);
}

static void close_problem(fixture *f) {
  mpt_evaluator_close(f->ev);
  mpt_space_free(f->s);
  mpt_problem_free(f->p);
}

/* id of a configuration given as values in parameter order */
static int64_t id_of(const mpt_space *s, const mpt_problem *p, const int *values) {
  int idx[16];
  for (int i = 0; i < p->n_params; i++) {
    idx[i] = -1;
    for (int k = 0; k < p->params[i].n_values; k++)
      if (p->params[i].numeric[k] == values[i]) idx[i] = k;
    assert_true(idx[i] >= 0);
  }
  int64_t id = mpt_space_lookup(s, idx);
  assert_true(id >= 0);
  return id;
}

static void test_matmul_example(void **state) {
  (void)state;
  char path[512];
  snprintf(path, sizeof path, "%s/examples/cpu/matmul.json", src_dir());
  mpt_eval_settings set = {0};
  set.rank = 3;
  fixture f;
  mpt_error err = {0};
  int rc = open_problem(path, &set, &f, &err);
  if (rc) fprintf(stderr, "%s\n", err.msg);
  assert_int_equal(rc, 0);
  assert_string_equal(f.ev->device.vendor, "CPU");
  assert_string_equal(f.ev->device.evaluator, "cpu");
  assert_int_equal(f.ev->device.index, -1);
  assert_int_equal(f.ev->device.rank, 3);
  assert_true(f.ev->device.memory_gib > 0.1);
  assert_true(f.ev->device.arch[0] != 0);

  mpt_obs def;
  int64_t def_id = mpt_space_default_id(f.s);
  assert_int_equal(mpt_evaluator_evaluate(f.ev, def_id, &def, &err), 0);
  if (def.status != MPT_STATUS_OK) fprintf(stderr, "default: %s\n", def.reason);
  assert_int_equal(def.status, MPT_STATUS_OK);
  assert_int_equal(def.n_times, 7);
  assert_int_equal(def.rank, 3);
  double sum = 0;
  for (int i = 0; i < def.n_times; i++) {
    assert_true(def.times[i] > 0);
    sum += def.times[i];
  }
  assert_true(fabs(def.objective - sum / 7) < 1e-9);
  assert_true(isfinite(def.median) && def.median > 0);
  assert_true(def.compile_ms > 1);
  assert_true(def.benchmark_ms >= sum);
  assert_true(def.t_end > def.t_start);

  /* a blocked, vectorized i-k-j variant: tile_i 8, tile_j 256, tile_k 64, unroll 1, vec 16, order 1 */
  int good_v[] = {8, 256, 64, 1, 16, 1};
  mpt_obs good;
  assert_int_equal(mpt_evaluator_evaluate(f.ev, id_of(f.s, f.p, good_v), &good, &err), 0);
  if (good.status != MPT_STATUS_OK) fprintf(stderr, "good: %s\n", good.reason);
  assert_int_equal(good.status, MPT_STATUS_OK);
  fprintf(stderr, "matmul default %.3f ms, tuned %.3f ms (compile %.0f ms)\n", def.objective, good.objective,
          good.compile_ms);
  assert_true(good.objective < def.objective);

  /* a few random configurations: all correct */
  mpt_rng rng;
  mpt_rng_seed(&rng, 7);
  for (int k = 0; k < 3; k++) {
    int64_t id = (int64_t)mpt_rng_below(&rng, (uint64_t)mpt_space_size(f.s));
    mpt_obs o;
    assert_int_equal(mpt_evaluator_evaluate(f.ev, id, &o, &err), 0);
    if (o.status != MPT_STATUS_OK) fprintf(stderr, "id %lld: %s\n", (long long)id, o.reason);
    assert_int_equal(o.status, MPT_STATUS_OK);
  }
  close_problem(&f);
}

static mpt_obs expect(fixture *f, int mode, int scale, int status, const char *reason_part) {
  int v[2] = {mode, scale};
  mpt_obs o;
  mpt_error err = {0};
  assert_int_equal(mpt_evaluator_evaluate(f->ev, id_of(f->s, f->p, v), &o, &err), 0);
  fprintf(stderr, "mode %d: %s: %.200s\n", mode, mpt_status_name(o.status), o.reason);
  assert_int_equal(o.status, status);
  if (reason_part) assert_non_null(strstr(o.reason, reason_part));
  if (status == MPT_STATUS_OK) {
    assert_int_equal(o.n_times, 3);
    assert_true(isfinite(o.objective));
  } else {
    assert_false(isfinite(o.objective));
    assert_false(mpt_obs_valid(&o));
  }
  if (status != MPT_STATUS_COMPILE_ERROR) assert_true(o.compile_ms > 0);
  return o;
}

static void test_failures(void **state) {
  (void)state;
  char path[512];
  snprintf(path, sizeof path, "%s/tests/kernels/failing.json", src_dir());
  setenv("MPT_CPU_MEMORY_LIMIT_MB", "64", 1); /* the hog fails at once, well within the timeout */
  mpt_eval_settings set = {0};
  set.timeout_s = 2.0; /* the hang; generous for everything else on a loaded machine */
  fixture f;
  mpt_error err = {0};
  int rc = open_problem(path, &set, &f, &err);
  if (rc) fprintf(stderr, "%s\n", err.msg);
  assert_int_equal(rc, 0);
  expect(&f, 0, 1, MPT_STATUS_OK, NULL);
  expect(&f, 1, 1, MPT_STATUS_COMPILE_ERROR, "mode 1: this variant does not compile");
  expect(&f, 2, 1, MPT_STATUS_WRONG_RESULT, "out: 1 of 1000 values differ; first at [500]");
  expect(&f, 0, 2, MPT_STATUS_OK, NULL);
  /* a bad pointer far from the address-space limit: no RLIMIT_AS hint (every SIGSEGV had one) */
  assert_null(strstr(expect(&f, 3, 1, MPT_STATUS_CRASH, "SIGSEGV").reason, "RLIMIT_AS"));
  expect(&f, 0, 1, MPT_STATUS_OK, NULL); /* the evaluator goes on after a crash */
  expect(&f, 4, 1, MPT_STATUS_TIMEOUT, "killed");
  expect(&f, 0, 2, MPT_STATUS_OK, NULL); /* ... and after a hang */
  if (!ASAN) { /* no RLIMIT_AS under AddressSanitizer */
    assert_non_null(strstr(expect(&f, 5, 1, MPT_STATUS_CRASH, "SIGSEGV").reason, "RLIMIT_AS")); /* the hog's */
    expect(&f, 0, 1, MPT_STATUS_OK, NULL);
  }
  expect(&f, 6, 2, MPT_STATUS_CRASH, "SIGABRT");
  expect(&f, 2, 2, MPT_STATUS_WRONG_RESULT, NULL);
  expect(&f, 0, 2, MPT_STATUS_OK, NULL);
  close_problem(&f);
  unsetenv("MPT_CPU_MEMORY_LIMIT_MB");
}

/* a compiler that dies of SIGINT or SIGTERM (the signal that stops the run, caught in the instant before it
 * has a process group of its own) cancels the evaluation: it is not the variant's compile error, which a
 * resume would never try again. A stand-in `cc` first on PATH sends itself the signal for mode 2. */
static void test_compiler_stopped(void **state) {
  (void)state;
  char path[512], dir[] = "/tmp/mpt_cc_XXXXXX", cc[64], newpath[4096];
  snprintf(path, sizeof path, "%s/tests/kernels/failing.json", src_dir());
  assert_non_null(mkdtemp(dir));
  snprintf(cc, sizeof cc, "%s/cc", dir);
  FILE *f = fopen(cc, "w");
  assert_non_null(f);
  fprintf(f, "#!/bin/sh\nfor a in \"$@\"; do [ \"$a\" = -Dmode=2 ] && [ -n \"$MPT_TEST_CC_SIGNAL\" ] && "
             "kill -s \"$MPT_TEST_CC_SIGNAL\" $$; done\nexec /usr/bin/cc \"$@\"\n");
  fclose(f);
  assert_int_equal(chmod(cc, 0755), 0);
  const char *old = getenv("PATH");
  char *saved = strdup(old ? old : "/usr/bin:/bin");
  snprintf(newpath, sizeof newpath, "%s:%s", dir, saved);
  setenv("PATH", newpath, 1);
  mpt_eval_settings set = {0};
  set.timeout_s = 2.0;
  fixture fx;
  mpt_error err = {0};
  int rc = open_problem(path, &set, &fx, &err);
  if (rc) fprintf(stderr, "%s\n", err.msg);
  assert_int_equal(rc, 0);
  setenv("MPT_TEST_CC_SIGNAL", "INT", 1);
  expect(&fx, 2, 1, MPT_STATUS_CANCELLED, "the compiler was stopped by SIGINT");
  setenv("MPT_TEST_CC_SIGNAL", "TERM", 1);
  expect(&fx, 2, 2, MPT_STATUS_CANCELLED, "the compiler was stopped by SIGTERM");
  unsetenv("MPT_TEST_CC_SIGNAL");
  expect(&fx, 2, 1, MPT_STATUS_WRONG_RESULT, NULL); /* the same variant, compiled: its own outcome */
  close_problem(&fx);
  setenv("PATH", saved, 1);
  free(saved);
  unlink(cc);
  rmdir(dir);
}

/* a compile killed when the run stops leaves none of the compiler's temporary files in $TMPDIR: the compiler
 * runs with a private TMPDIR that is emptied after each compile and removed at close. A stand-in `cc` first
 * on PATH writes a temporary file as gcc's cc1 does (ccXXXX.s) for mode 2, says so, and waits to be killed;
 * the evaluator's watch (mpt_eval_settings.watch), while armed (*ctx), then cancels the compile. */
static char g_cc_started[300];
static int cancel_once_compiling(void *ctx, const char *doing, double done) {
  (void)doing, (void)done;
  return *(const int *)ctx && access(g_cc_started, F_OK) == 0;
}

static void test_compiler_tmpdir(void **state) {
  (void)state;
  char path[512], dir[] = "/tmp/mpt_cctmp_XXXXXX", tmp[300], cc[300], newpath[4096];
  snprintf(path, sizeof path, "%s/tests/kernels/failing.json", src_dir());
  assert_non_null(mkdtemp(dir));
  snprintf(tmp, sizeof tmp, "%s/tmp", dir);
  assert_int_equal(mkdir(tmp, 0700), 0);
  snprintf(cc, sizeof cc, "%s/cc", dir);
  snprintf(g_cc_started, sizeof g_cc_started, "%s/started", dir);
  FILE *f = fopen(cc, "w");
  assert_non_null(f);
  fprintf(f, "#!/bin/sh\nfor a in \"$@\"; do if [ \"$a\" = -Dmode=2 ]; then : > \"${TMPDIR:-/tmp}/ccTEST$$.s\"; "
             ": > %s; exec sleep 60; fi; done\nexec /usr/bin/cc \"$@\"\n", g_cc_started);
  fclose(f);
  assert_int_equal(chmod(cc, 0755), 0);
  const char *old = getenv("PATH"), *old_tmp = getenv("TMPDIR");
  char *saved = strdup(old ? old : "/usr/bin:/bin"), *saved_tmp = old_tmp ? strdup(old_tmp) : NULL;
  snprintf(newpath, sizeof newpath, "%s:%s", dir, saved);
  setenv("PATH", newpath, 1);
  setenv("TMPDIR", tmp, 1); /* the scratch directory goes there too */
  int armed = 0;
  mpt_eval_settings set = {0};
  set.timeout_s = 2.0;
  set.watch = (mpt_watch){cancel_once_compiling, &armed};
  fixture fx;
  mpt_error err = {0};
  int rc = open_problem(path, &set, &fx, &err);
  if (rc) fprintf(stderr, "%s\n", err.msg);
  assert_int_equal(rc, 0);
  armed = 1;
  expect(&fx, 2, 1, MPT_STATUS_CANCELLED, "cancelled while compiling");
  armed = 0;
  char cmd[700];
  snprintf(cmd, sizeof cmd, "find %s -name 'ccTEST*' | grep -q .", tmp);
  assert_int_not_equal(system(cmd), 0); /* the killed compiler's file is gone already */
  expect(&fx, 0, 1, MPT_STATUS_OK, NULL);
  close_problem(&fx);
  snprintf(cmd, sizeof cmd, "test -z \"$(ls -A %s)\"", tmp);
  assert_int_equal(system(cmd), 0); /* nothing left at all */
  if (saved_tmp) setenv("TMPDIR", saved_tmp, 1);
  else unsetenv("TMPDIR");
  setenv("PATH", saved, 1);
  free(saved);
  free(saved_tmp);
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  assert_int_equal(system(cmd), 0);
}

/* a fresh child per evaluation (MPT_CPU_ISOLATION=fork), --iterations and --workdir */
static void test_fork_mode_settings(void **state) {
  (void)state;
  char path[512], wd[] = "/tmp/mpt_test_cpu_wd_XXXXXX";
  assert_non_null(mkdtemp(wd));
  snprintf(path, sizeof path, "%s/tests/kernels/failing.json", src_dir());
  setenv("MPT_CPU_ISOLATION", "fork", 1);
  mpt_eval_settings set = {0};
  set.iterations = 5;
  set.workdir = wd;
  fixture f;
  mpt_error err = {0};
  int rc = open_problem(path, &set, &f, &err);
  unsetenv("MPT_CPU_ISOLATION");
  if (rc) fprintf(stderr, "%s\n", err.msg);
  assert_int_equal(rc, 0);
  int v[2] = {0, 1};
  mpt_obs o;
  assert_int_equal(mpt_evaluator_evaluate(f.ev, id_of(f.s, f.p, v), &o, &err), 0);
  assert_int_equal(o.status, MPT_STATUS_OK);
  assert_int_equal(o.n_times, 5);
  v[0] = 3;
  assert_int_equal(mpt_evaluator_evaluate(f.ev, id_of(f.s, f.p, v), &o, &err), 0);
  assert_int_equal(o.status, MPT_STATUS_CRASH);
  v[0] = 2;
  assert_int_equal(mpt_evaluator_evaluate(f.ev, id_of(f.s, f.p, v), &o, &err), 0);
  assert_int_equal(o.status, MPT_STATUS_WRONG_RESULT); /* the reference survives the children */
  v[0] = 0;
  v[1] = 2;
  assert_int_equal(mpt_evaluator_evaluate(f.ev, id_of(f.s, f.p, v), &o, &err), 0);
  assert_int_equal(o.status, MPT_STATUS_OK);
  char cmd[300];
  snprintf(cmd, sizeof cmd, "test $(ls -A %s | wc -l) -eq 1", wd); /* one scratch directory inside */
  assert_int_equal(system(cmd), 0);
  close_problem(&f);
  assert_int_equal(rmdir(wd), 0); /* close removed the scratch directory */
}

/* ---- scratch directories of killed workers (evaluators/cpu.c: the owner marker) ---- */

/* the start time (clock ticks after boot, /proc/PID/stat field 22) of process pid */
static unsigned long long start_of(pid_t pid) {
  char path[64], buf[1024];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = 0;
  const char *p = strrchr(buf, ')');
  assert_non_null(p);
  unsigned long long v = 0; /* fields 3 (the state) to 21 skipped */
  assert_int_equal(sscanf(p + 1, "%*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %llu", &v), 1);
  assert_true(v > 0);
  return v;
}

/* base/name made as a worker makes it (files, cc-tmp/ with a compiler's file), with an owner marker naming host
 * and pid/start (no marker when host is NULL) */
static void make_scratch(const char *base, const char *name, const char *host, long pid, unsigned long long start) {
  char dir[600], path[700], boot[64] = "", ns[64] = "";
  snprintf(dir, sizeof dir, "%s/%s", base, name);
  assert_int_equal(mkdir(dir, 0700), 0);
  snprintf(path, sizeof path, "%s/cc-tmp", dir);
  assert_int_equal(mkdir(path, 0700), 0);
  const char *files[] = {"launch.c", "launch.o", "v3.so", "cc-tmp/ccAbCd.s"};
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, files[i]);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs("x\n", f);
    fclose(f);
  }
  if (!host) return;
  FILE *b = fopen("/proc/sys/kernel/random/boot_id", "r");
  assert_non_null(b);
  assert_non_null(fgets(boot, sizeof boot, b));
  fclose(b);
  boot[strcspn(boot, "\n")] = 0;
  ssize_t n = readlink("/proc/self/ns/pid", ns, sizeof ns - 1);
  assert_true(n > 0);
  ns[n] = 0;
  snprintf(path, sizeof path, "%s/mptune-owner", dir);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fprintf(f, "mptune cpu scratch 1\nhost %s\nboot %s\npidns %s\npid %ld\nstart %llu\n", host, boot, ns, pid, start);
  fclose(f);
}

static int exists(const char *base, const char *name) {
  char path[600];
  struct stat sb;
  snprintf(path, sizeof path, "%s/%s", base, name);
  return stat(path, &sb) == 0;
}

/* open removes the scratch directories whose owner is provably gone (a SIGKILLed process; a pid now another
 * process's, told by its start time) and says so in one line; it keeps a live owner's, one without mptune's
 * marker and one of another host */
static void test_stale_scratch(void **state) {
  (void)state;
  char base[] = "/tmp/mpt_test_scratch_XXXXXX", path[512], host[256] = "";
  assert_non_null(mkdtemp(base));
  assert_int_equal(gethostname(host, sizeof host - 1), 0);
  int hold[2];
  assert_int_equal(pipe(hold), 0);
  pid_t dead = fork();
  assert_true(dead >= 0);
  if (dead == 0) { /* the owner of a killed run: waits until it is killed */
    char c;
    close(hold[1]);
    if (read(hold[0], &c, 1) < 0) _exit(1);
    _exit(0);
  }
  close(hold[0]);
  unsigned long long dead_start = start_of(dead), my_start = start_of(getpid());
  assert_int_equal(kill(dead, SIGKILL), 0);
  assert_int_equal(waitpid(dead, NULL, 0), dead);
  close(hold[1]);
  make_scratch(base, "mptune-cpu-r1-killed", host, (long)dead, dead_start);
  make_scratch(base, "mptune-cpu-r2-reused", host, (long)getpid(), my_start + 1); /* this pid, another start */
  make_scratch(base, "mptune-cpu-r1-live00", host, (long)getpid(), my_start);
  make_scratch(base, "mptune-cpu-r3-nomark", NULL, 0, 0);
  make_scratch(base, "mptune-cpu-r1-elsewh", "another-host.example", (long)dead, dead_start);

  snprintf(path, sizeof path, "%s/tests/kernels/failing.json", src_dir());
  mpt_eval_settings set = {0};
  set.workdir = base;
  set.rank = 4;
  char log[600];
  snprintf(log, sizeof log, "%s.stderr", base);
  fflush(stderr);
  int saved = dup(STDERR_FILENO);
  FILE *cap = fopen(log, "w+");
  assert_non_null(cap);
  dup2(fileno(cap), STDERR_FILENO);
  fixture f;
  mpt_error err = {0};
  int rc = open_problem(path, &set, &f, &err);
  fflush(stderr);
  dup2(saved, STDERR_FILENO);
  close(saved);
  char said[2048] = "";
  rewind(cap);
  size_t n = fread(said, 1, sizeof said - 1, cap);
  said[n] = 0;
  fclose(cap);
  unlink(log);
  fprintf(stderr, "%s", said);
  if (rc) fprintf(stderr, "%s\n", err.msg);
  assert_int_equal(rc, 0);
  assert_false(exists(base, "mptune-cpu-r1-killed"));
  assert_false(exists(base, "mptune-cpu-r2-reused"));
  assert_true(exists(base, "mptune-cpu-r1-live00/cc-tmp/ccAbCd.s"));
  assert_true(exists(base, "mptune-cpu-r3-nomark/v3.so"));
  assert_true(exists(base, "mptune-cpu-r1-elsewh/launch.c"));
  char want[700];
  snprintf(want, sizeof want, "mptune: cpu evaluator (rank 4): removed 2 scratch directories of killed runs (their "
           "process is gone) in %s\n", base);
  assert_string_equal(said, want);
  /* its own directory carries the marker of this process, and a second open (this process: alive) keeps it */
  char cmd[1400];
  snprintf(cmd, sizeof cmd, "grep -qx 'pid %d' %s/mptune-cpu-r4-*/mptune-owner", (int)getpid(), base);
  assert_int_equal(system(cmd), 0);
  fixture g;
  assert_int_equal(open_problem(path, &set, &g, &err), 0);
  snprintf(cmd, sizeof cmd, "test $(ls -d %s/mptune-cpu-r4-* | wc -l) -eq 2", base);
  assert_int_equal(system(cmd), 0);
  close_problem(&g);
  close_problem(&f);
  snprintf(cmd, sizeof cmd, "test $(ls -A %s | wc -l) -eq 3", base); /* the three kept; its own removed at close */
  assert_int_equal(system(cmd), 0);
  snprintf(cmd, sizeof cmd, "rm -rf %s", base);
  assert_int_equal(system(cmd), 0);
}

/* a T1 variant of tests/kernels/NAME.json (the first `from` replaced by `to`) written next to a copy of its kernel
 * NAME.c, opened; with check (may be NULL) called on the open evaluator */
static int open_variant_of(const char *name, const char *from, const char *to, void (*check)(fixture *),
                           mpt_error *err) {
  char src[512], dir[] = "/tmp/mpt_test_cpu_XXXXXX";
  assert_non_null(mkdtemp(dir));
  snprintf(src, sizeof src, "%s/tests/kernels/%s.json", src_dir(), name);
  FILE *f = fopen(src, "rb");
  assert_non_null(f);
  char text[8192];
  size_t n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[n] = 0;
  char *at = strstr(text, from);
  assert_non_null(at);
  char out[9000];
  snprintf(out, sizeof out, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
  char path[600], kpath[600], cmd[1400];
  snprintf(path, sizeof path, "%s/bad.json", dir);
  f = fopen(path, "w");
  fputs(out, f);
  fclose(f);
  snprintf(kpath, sizeof kpath, "%s/tests/kernels/%s.c", src_dir(), name);
  snprintf(cmd, sizeof cmd, "cp %s %s/%s.c", kpath, dir, name);
  assert_int_equal(system(cmd), 0);
  mpt_eval_settings set = {0};
  fixture fx;
  int rc = open_problem(path, &set, &fx, err);
  if (rc == 0) {
    if (check) check(&fx);
    close_problem(&fx);
  } else {
    mpt_evaluator_close(fx.ev);
    mpt_space_free(fx.s);
    mpt_problem_free(fx.p);
  }
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  assert_int_equal(system(cmd), 0);
  return rc;
}

/* bad input: a T1 variant of failing.json written next to a copy of the kernel */
static int open_variant(const char *from, const char *to, mpt_error *err) {
  return open_variant_of("failing", from, to, NULL, err);
}

/* opens tests/kernels/NAME.json */
static void open_kernel_problem(const char *name, fixture *f) {
  char path[512];
  snprintf(path, sizeof path, "%s/tests/kernels/%s.json", src_dir(), name);
  mpt_eval_settings set = {0};
  set.timeout_s = 20.0;
  mpt_error err = {0};
  int rc = open_problem(path, &set, f, &err);
  if (rc) fprintf(stderr, "%s\n", err.msg);
  assert_int_equal(rc, 0);
}

/* evaluates the configuration whose one parameter has value v */
static mpt_obs evaluate_value(fixture *f, int v) {
  mpt_obs o;
  mpt_error err = {0};
  assert_int_equal(mpt_evaluator_evaluate(f->ev, id_of(f->s, f->p, &v), &o, &err), 0);
  fprintf(stderr, "%s=%d: %s %g ms: %.300s\n", f->p->params[0].name, v, mpt_status_name(o.status), o.objective,
          o.reason);
  return o;
}

/* vector_add with aligned vector loads and stores of 1, 4, 8 and 16 floats (as Kernel Tuner's examples/c
 * vector_add): every configuration valid, as the argument buffers are 64-byte aligned; with malloc's 16 bytes
 * those of 8 and 16 lanes were killed by SIGSEGV */
static void test_vector_alignment(void **state) {
  (void)state;
  fixture f;
  open_kernel_problem("vector_add_vec", &f);
  const int vecsizes[] = {1, 4, 8, 16};
  for (size_t i = 0; i < sizeof vecsizes / sizeof vecsizes[0]; i++) {
    mpt_obs o = evaluate_value(&f, vecsizes[i]);
    assert_int_equal(o.status, MPT_STATUS_OK);
    assert_int_equal(o.n_times, 3);
  }
  close_problem(&f);
}

/* a crash by SIGSEGV says where it faulted: an access just past or before an argument buffer names the argument
 * (its working copy ends at a guard page), a general-protection fault (a misaligned aligned vector load on x86-64)
 * says it has no address and what causes one; the evaluator goes on */
static void test_fault_address(void **state) {
  (void)state;
  fixture f;
  open_kernel_problem("overrun", &f);
  mpt_obs o = evaluate_value(&f, 1);
  assert_int_equal(o.status, MPT_STATUS_CRASH);
  assert_non_null(strstr(o.reason, "killed by SIGSEGV"));
  assert_non_null(strstr(o.reason, "invalid access at address 0x"));
  assert_non_null(strstr(o.reason, ", 64 bytes past the end of argument 'out' (4000 bytes at 0x"));
  o = evaluate_value(&f, 2);
  assert_int_equal(o.status, MPT_STATUS_CRASH);
  assert_non_null(strstr(o.reason, ", 256 bytes before the start of argument 'in' (4000 bytes at 0x"));
  assert_int_equal(evaluate_value(&f, 0).status, MPT_STATUS_OK);
#if defined(__x86_64__)
  o = evaluate_value(&f, 3);
  assert_int_equal(o.status, MPT_STATUS_CRASH);
  assert_non_null(strstr(o.reason, "killed by SIGSEGV (Segmentation fault): a general-protection fault, which has no "
                                   "address (on x86-64: an aligned vector load or store at an address that is not a "
                                   "multiple of the vector's size"));
#endif
  close_problem(&f);
}

/* Kernel Tuner's C convention: with "ReturnsTime": true the float a kernel returns is each iteration's time in ms
 * (1.25 whatever the call took); a negative one is no time (runtime_error) */
static void test_returns_time(void **state) {
  (void)state;
  fixture f;
  open_kernel_problem("returns_time", &f);
  mpt_obs o = evaluate_value(&f, 125);
  assert_int_equal(o.status, MPT_STATUS_OK);
  assert_int_equal(o.n_times, 5);
  for (int i = 0; i < o.n_times; i++) assert_true(o.times[i] == 1.25);
  assert_true(o.objective == 1.25);
  assert_true(o.median == 1.25);
  assert_true(evaluate_value(&f, 50).objective == 0.5);
  o = evaluate_value(&f, -100);
  assert_int_equal(o.status, MPT_STATUS_RUNTIME_ERROR);
  assert_non_null(strstr(o.reason, "the kernel returned -1 as its time in ms (ReturnsTime): not a time"));
  close_problem(&f);
}

/* "ReturnsTime": false: the returned float is ignored and the call timed (microseconds, not 1.25 ms) */
static void check_measured(fixture *f) {
  mpt_obs o = evaluate_value(f, 125);
  assert_int_equal(o.status, MPT_STATUS_OK);
  for (int i = 0; i < o.n_times; i++) assert_true(o.times[i] != 1.25);
}

/* a kernel that returns float must say what the value is; ReturnsTime true needs a kernel that returns float */
static void test_returns_time_declared(void **state) {
  (void)state;
  mpt_error err = {0};
  assert_int_equal(open_variant_of("returns_time", ", \"ReturnsTime\": true", "", NULL, &err), MPT_ERR_VALUE);
  fprintf(stderr, "%s\n", err.msg);
  assert_non_null(strstr(err.msg, "bad.json:8:36: KernelSpecification.KernelName: kernel 'twice' returns float: in "
                                  "Kernel Tuner a C kernel that returns float returns its own time in ms; add "
                                  "\"ReturnsTime\": true"));
  assert_non_null(strstr(err.msg, "or \"ReturnsTime\": false to time the call"));
  assert_int_equal(open_variant_of("returns_time", "\"ReturnsTime\": true", "\"ReturnsTime\": false", check_measured,
                                   &err), 0);
  assert_int_equal(open_variant("\"Iterations\": 3,", "\"Iterations\": 3, \"ReturnsTime\": true,", &err), MPT_ERR_VALUE);
  fprintf(stderr, "%s\n", err.msg);
  assert_non_null(strstr(err.msg, "KernelSpecification.ReturnsTime: kernel 'twice' returns void, not float: "
                                  "\"ReturnsTime\": true takes the float a kernel returns as its time in ms"));
}

static void test_bad_input(void **state) {
  (void)state;
  mpt_error err = {0};
  assert_int_equal(open_variant("\"KernelFile\": \"failing.c\"", "\"KernelFile\": \"nothere.c\"", &err), MPT_ERR_IO);
  fprintf(stderr, "%s\n", err.msg);
  assert_non_null(strstr(err.msg, "KernelSpecification.KernelFile: cannot read"));
  assert_non_null(strstr(err.msg, "nothere.c"));

  assert_int_equal(open_variant("\"KernelName\": \"twice\"", "\"KernelName\": \"thrice\"", &err), MPT_ERR_NAME);
  fprintf(stderr, "%s\n", err.msg);
  assert_non_null(strstr(err.msg, "kernel 'thrice' not found in"));
  assert_non_null(strstr(err.msg, "KernelSpecification.KernelName"));

  assert_int_equal(open_variant("\"Size\": \"ProblemSize[0]\", \"FillType\": \"Generator\"",
                                "\"Size\": \"ProblemSize[0] // (len(mode) - 7)\", \"FillType\": \"Generator\"", &err),
                   MPT_ERR_EVAL);
  fprintf(stderr, "%s\n", err.msg);
  assert_non_null(strstr(err.msg, "KernelSpecification.Arguments[1].Size"));
  assert_non_null(strstr(err.msg, "ZeroDivisionError"));

  assert_int_equal(open_variant("\"Language\": \"C\"", "\"Language\": \"CUDA\"", &err), MPT_ERR_VALUE);
  assert_non_null(strstr(err.msg, "the cpu evaluator runs C kernels"));

  /* a default configuration that does not compile: no reference output */
  assert_int_equal(open_variant("\"Default\": 0", "\"Default\": 1", &err), MPT_ERR_VALUE);
  fprintf(stderr, "%s\n", err.msg);
  assert_non_null(strstr(err.msg, "does not compile"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_matmul_example),
    cmocka_unit_test(test_failures),
    cmocka_unit_test(test_compiler_stopped),
    cmocka_unit_test(test_compiler_tmpdir),
    cmocka_unit_test(test_fork_mode_settings),
    cmocka_unit_test(test_stale_scratch),
    cmocka_unit_test(test_bad_input),
    cmocka_unit_test(test_vector_alignment),
    cmocka_unit_test(test_fault_address),
    cmocka_unit_test(test_returns_time),
    cmocka_unit_test(test_returns_time_declared),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
