/* tests/test_ahead.c: the compile-ahead pipeline (evaluators/ahead.h) with compiles of a test's own that run in the
 * pipeline's real forked processes: a compile writes its id to a file (so the test counts compiles across
 * processes) and sleeps as long as its id says. Compiles run `jobs` at once and ahead of their take; the same key
 * never compiles twice; an artifact that is not cacheable is compiled again; a crash, a hang past the timeout and
 * a stop by the watch are outcomes of their own; a discarded compile is stopped (its process gone), one asked to
 * stop cleans up (the flag mpt_ahead_cancelled), and paused compiles make no progress (id 600 spins for 0.3 s of
 * CPU time). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "evaluators/ahead.h"
#include "evaluators/isolate.h"
#include "spaces/sys/clock.h"

/* ids: 0..99 compile in 0.3 s to "artifact <id>"; 100..: the key of id - 100 (the same compile); 200: crashes;
 * 300: hangs (until asked to stop, then writes "stopped" to the log); 400: not cacheable; 500: compiles in 2 s */
typedef struct test_ctx {
  char log[256];     /* one line per compile started: its id */
  double timeout_s;
} test_ctx;

static void sleep_s(double s) {
  struct timespec t = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
  nanosleep(&t, NULL);
}

static int t_key(void *ctx, int64_t id, mpt_ahead_key *key) {
  (void)ctx;
  if (id < 0) return -1;
  char s[32];
  snprintf(s, sizeof s, "%lld", (long long)(id >= 100 && id < 200 ? id - 100 : id));
  mpt_ahead_key_init(key);
  mpt_ahead_key_str(key, s);
  return 0;
}

static void note(const test_ctx *c, const char *line) {
  int fd = open(c->log, O_WRONLY | O_APPEND | O_CREAT, 0644);
  if (fd < 0) return;
  if (write(fd, line, strlen(line)) < 0) { /* best effort */ }
  close(fd);
}

static int t_compile(void *ctx, int64_t id, const mpt_ahead_key *key, char **blob, size_t *len) {
  (void)key;
  const test_ctx *c = ctx;
  char line[64];
  snprintf(line, sizeof line, "%lld\n", (long long)id);
  note(c, line);
  if (id == 200) raise(SIGSEGV);
  if (id == 300) {
    while (!mpt_ahead_cancelled()) sleep_s(0.01);
    note(c, "stopped\n");
    _exit(0);
  }
  if (id == 700) { /* an external compiler, as the cpu evaluator runs one: ticks 0.6 s of sleeps into the log */
    char script[512];
    snprintf(script, sizeof script, "for i in 1 2 3 4 5 6 7 8 9 10 11 12; do date +%%s.%%N >> %s.ticks; sleep 0.05; done",
             c->log);
    char *argv[] = {"sh", "-c", script, NULL};
    char out[256];
    int status;
    mpt_error e;
    if (mpt_run_command(argv, 30, out, sizeof out, &status, NULL, &e) != 0 || status != 0) _exit(5);
  } else if (id == 600)
    while ((double)clock() / CLOCKS_PER_SEC < 0.3) {}
  else
    sleep_s(id == 500 ? 2.0 : 0.3);
  *blob = malloc(64);
  *len = (size_t)snprintf(*blob, 64, "artifact %lld", (long long)(id >= 100 && id < 200 ? id - 100 : id)) + 1;
  return 0;
}

static double t_timeout(void *ctx) { return ((const test_ctx *)ctx)->timeout_s; }

static int t_cacheable(void *ctx, const char *blob, size_t len) {
  (void)ctx, (void)len;
  return strcmp(blob, "artifact 400") != 0;
}

static const mpt_ahead_ops ops = {t_key, t_compile, t_timeout, NULL, t_cacheable};

/* how many lines of the log say `what` */
static int count_lines(const test_ctx *c, const char *what) {
  FILE *f = fopen(c->log, "r");
  if (!f) return 0;
  char line[64];
  int n = 0;
  while (fgets(line, sizeof line, f)) {
    line[strcspn(line, "\n")] = 0;
    n += strcmp(line, what) == 0;
  }
  fclose(f);
  return n;
}

static void open_ctx(test_ctx *c, double timeout_s) {
  snprintf(c->log, sizeof c->log, "/tmp/mpt_test_ahead_%ld.log", (long)getpid());
  unlink(c->log);
  c->timeout_s = timeout_s;
}

static void take_ok(mpt_ahead *a, int64_t id, const char *want, mpt_ahead_result *r) {
  mpt_error err;
  mpt_error_clear(&err);
  assert_int_equal(mpt_ahead_take(a, id, NULL, r, &err), 0);
  assert_int_equal(r->outcome, MPT_AHEAD_DONE);
  assert_string_equal(r->blob, want);
  free(r->blob);
}

static void test_ahead_and_cache(void **state) {
  (void)state;
  test_ctx c;
  open_ctx(&c, 30);
  mpt_ahead *a = mpt_ahead_create(&ops, &c, 2, 8);
  assert_non_null(a);
  double t0 = mpt_clock_mono_s();
  for (int id = 1; id <= 4; id++) mpt_ahead_prepare(a, id);
  for (int k = 0; k < 20; k++) { /* as a worker's watch during a device run: pumped every 100 ms */
    sleep_s(0.1);
    mpt_ahead_pump(a);
  } /* two at a time, 0.3 s each: all four done before they are taken */
  mpt_ahead_result r;
  for (int id = 1; id <= 4; id++) {
    char want[32];
    snprintf(want, sizeof want, "artifact %d", id);
    take_ok(a, id, want, &r);
    assert_true(r.compile_ms >= 250);
  }
  printf("4 compiles ahead, 2 at a time, taken after %.2f s\n", mpt_clock_mono_s() - t0);
  mpt_ahead_stats st;
  mpt_ahead_get_stats(a, &st);
  assert_int_equal(st.compiles, 4);
  assert_true(st.ahead >= 3); /* compiled before they were asked for */
  take_ok(a, 102, "artifact 2", &r); /* another id, the same key: from the cache */
  assert_int_equal(r.cached, 1);
  take_ok(a, 3, "artifact 3", &r); /* taken again: cached */
  assert_int_equal(count_lines(&c, "2"), 1);
  assert_int_equal(count_lines(&c, "3"), 1);
  take_ok(a, 400, "artifact 400", &r); /* not cacheable: compiled for each take */
  take_ok(a, 400, "artifact 400", &r);
  assert_int_equal(count_lines(&c, "400"), 2);
  mpt_ahead_get_stats(a, &st);
  assert_int_equal(st.compiles, 6);
  assert_int_equal(st.cache_hits, 2);
  mpt_ahead_destroy(a);
  unlink(c.log);
}

static void test_failures(void **state) {
  (void)state;
  test_ctx c;
  open_ctx(&c, 1.0);
  mpt_ahead *a = mpt_ahead_create(&ops, &c, 4, 8);
  mpt_ahead_result r;
  mpt_error err;
  mpt_error_clear(&err);
  assert_int_equal(mpt_ahead_take(a, 200, NULL, &r, &err), 0);
  assert_int_equal(r.outcome, MPT_AHEAD_CRASHED);
  printf("200: %s\n", r.reason);
  assert_non_null(strstr(r.reason, "signal 11"));
  double t0 = mpt_clock_mono_s();
  assert_int_equal(mpt_ahead_take(a, 500, NULL, &r, &err), 0); /* 2 s against a 1 s timeout */
  assert_int_equal(r.outcome, MPT_AHEAD_TIMEOUT);
  assert_true(mpt_clock_mono_s() - t0 < 1.9);
  printf("500: %s\n", r.reason);
  take_ok(a, 5, "artifact 5", &r); /* the next one is unaffected */
  mpt_ahead_destroy(a);
  unlink(c.log);
}

static int stop_now(void *ctx, const char *doing, double done) {
  (void)doing, (void)done;
  return mpt_clock_mono_s() >= *(const double *)ctx;
}

static void test_stop_and_discard(void **state) {
  (void)state;
  test_ctx c;
  open_ctx(&c, 30);
  mpt_ahead *a = mpt_ahead_create(&ops, &c, 2, 8);
  double when = mpt_clock_mono_s() + 0.5;
  const mpt_watch w = {stop_now, &when};
  mpt_ahead_result r;
  mpt_error err;
  mpt_error_clear(&err);
  assert_int_equal(mpt_ahead_take(a, 300, &w, &r, &err), 0); /* hangs until the watch says stop */
  assert_int_equal(r.outcome, MPT_AHEAD_CANCELLED);
  assert_int_equal(count_lines(&c, "stopped"), 1); /* asked to stop, it cleaned up */
  mpt_ahead_prepare(a, 300);
  mpt_ahead_prepare(a, 7);
  sleep_s(0.2);
  mpt_ahead_discard(a, 300); /* stopped, its process gone */
  assert_int_equal(count_lines(&c, "stopped"), 2);
  take_ok(a, 7, "artifact 7", &r);
  /* paused compiles make no progress */
  mpt_ahead_prepare(a, 600);
  mpt_ahead_pause(a, 1);
  sleep_s(0.8);
  mpt_ahead_pump(a);
  mpt_ahead_pause(a, 0);
  double t0 = mpt_clock_mono_s();
  take_ok(a, 600, "artifact 600", &r);
  printf("a compile paused for 0.8 s still had %.2f s to go\n", mpt_clock_mono_s() - t0);
  assert_true(r.waited_ms > 50); /* it had not finished while paused */
  mpt_ahead_destroy(a);
  unlink(c.log);
}

/* the time a compile spends paused does not count against its timeout: 0.3 s of work against a 0.6 s timeout,
 * paused for 1 s on the way, is done, not timed out */
static void test_paused_time_not_counted(void **state) {
  (void)state;
  test_ctx c;
  open_ctx(&c, 0.6);
  mpt_ahead *a = mpt_ahead_create(&ops, &c, 1, 8);
  mpt_ahead_prepare(a, 600);
  mpt_ahead_pause(a, 1);
  sleep_s(1.0);
  mpt_ahead_pump(a);
  mpt_ahead_pause(a, 0);
  mpt_ahead_result r;
  take_ok(a, 600, "artifact 600", &r);
  mpt_ahead_destroy(a);
  unlink(c.log);
}

/* a compile's external compiler (its own process otherwise) is stopped through a pause with the compile: its
 * ticks show the pause as a gap, and the compile's time is its time running (about 0.6 s), not the ticks' span
 * minus the pause (on the old code the compiler ran through the pause and the compile measured almost nothing) */
static void test_pause_stops_the_compiler(void **state) {
  (void)state;
  test_ctx c;
  open_ctx(&c, 30);
  char ticks[300];
  snprintf(ticks, sizeof ticks, "%s.ticks", c.log);
  unlink(ticks);
  mpt_ahead *a = mpt_ahead_create(&ops, &c, 1, 8);
  mpt_ahead_prepare(a, 700);
  sleep_s(0.15);
  mpt_ahead_pause(a, 1);
  sleep_s(1.0);
  mpt_ahead_pause(a, 0);
  mpt_ahead_result r;
  take_ok(a, 700, "artifact 700", &r);
  FILE *f = fopen(ticks, "r");
  assert_non_null(f);
  double prev = 0, t, gap = 0;
  int n = 0;
  while (fscanf(f, "%lf", &t) == 1) {
    if (n++ > 0 && t - prev > gap) gap = t - prev;
    prev = t;
  }
  fclose(f);
  printf("ticks %d, largest gap %.3f s, compile %.3f s\n", n, gap, r.compile_ms / 1e3);
  assert_int_equal(n, 12);
  assert_true(gap > 0.8);                                     /* stopped through the pause */
  assert_true(r.compile_ms > 450 && r.compile_ms < gap * 1e3); /* its running time, not the pause */
  mpt_ahead_destroy(a);
  unlink(ticks);
  unlink(c.log);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_ahead_and_cache),
      cmocka_unit_test(test_failures),
      cmocka_unit_test(test_stop_and_discard),
      cmocka_unit_test(test_paused_time_not_counted),
      cmocka_unit_test(test_pause_stops_the_compiler),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
