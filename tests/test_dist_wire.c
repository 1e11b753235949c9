/* tests/test_dist_wire.c: the wire protocol under mpiexec -n 4: back-off, go/no-go (all ok, one rank
 * failing, ranks failing differently), node-local worker ranks, device gathering, WORK/RESULT/STOP
 * round trips with out-of-order replies, and that waiting (coordinator and worker side) costs < 5 % of
 * a core. Every test is entered by every rank (collectives inside). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include "mpi/device.h"
#include "mpi/wire.h"

static int g_rank, g_size;

static double cpu_now(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_sec +
         1e-6 * (double)ru.ru_stime.tv_usec;
}

static void test_backoff(void **state) {
  (void)state;
  mpt_backoff b;
  mpt_backoff_init(&b, 50000, 2000000);
  assert_int_equal(b.ns, 50000);
  mpt_backoff_hold(&b, 0.004); /* naps stay at 50 us for 4 ms */
  double th = mpt_wire_now();
  int naps = 0;
  while (mpt_wire_now() - th < 0.003) {
    mpt_backoff_sleep(&b);
    naps++;
    if (mpt_wire_now() - th < 0.0039) assert_int_equal(b.ns, 50000); /* a loaded machine may overshoot */
  }
  assert_true(naps >= 1);
  while (mpt_wire_now() - th < 0.0045) mpt_backoff_sleep(&b);
  mpt_backoff_sleep(&b);
  assert_true(b.ns > 50000); /* grows again after the hold */
  mpt_backoff_reset(&b);
  double t0 = mpt_wire_now(), expect = 0;
  long prev = b.ns;
  for (int i = 0; i < 30; i++) {
    expect += 1e-9 * (double)b.ns;
    mpt_backoff_sleep(&b);
    assert_true(b.ns >= prev && b.ns <= 2000000); /* grows, never beyond the cap */
    prev = b.ns;
  }
  double el = mpt_wire_now() - t0;
  assert_int_equal(b.ns, 2000000); /* capped */
  assert_true(el >= expect * 0.999); /* it really slept (nanosleep), no busy-wait shortcut */
  mpt_backoff_reset(&b);
  assert_int_equal(b.ns, 50000);
  mpt_backoff_init(&b, 10, 5); /* nonsense bounds are repaired */
  assert_true(b.min_ns >= 1000 && b.max_ns >= b.min_ns);
}

static void test_gonogo_ok(void **state) {
  (void)state;
  mpt_error err;
  mpt_error_clear(&err);
  assert_int_equal(mpt_wire_gonogo(MPI_COMM_WORLD, 0, &err), 0);
  assert_int_equal(err.code, 0);
}

static void test_gonogo_one_fails(void **state) {
  (void)state;
  mpt_error err;
  mpt_error_clear(&err);
  int rc = 0;
  if (g_rank == g_size - 1) rc = mpt_error_set(&err, MPT_ERR_IO, "cannot open 'missing.json': No such file");
  rc = mpt_wire_gonogo(MPI_COMM_WORLD, rc, &err);
  assert_int_equal(rc, MPT_ERR_IO); /* every rank learns it */
  if (g_rank == 0) assert_string_equal(err.msg, "cannot open 'missing.json': No such file");
}

static void test_gonogo_all_same(void **state) {
  (void)state;
  mpt_error err;
  int rc = mpt_error_set(&err, MPT_ERR_VALUE, "the budget must be at least 1 evaluation");
  rc = mpt_wire_gonogo(MPI_COMM_WORLD, rc, &err);
  assert_int_equal(rc, MPT_ERR_VALUE);
  if (g_rank == 0) assert_string_equal(err.msg, "the budget must be at least 1 evaluation"); /* once */
}

static void test_gonogo_different(void **state) {
  (void)state;
  mpt_error err;
  mpt_error_clear(&err);
  int rc = 0;
  if (g_rank == 1) rc = mpt_error_set(&err, MPT_ERR_DEVICE, "no CUDA device");
  if (g_rank == 2) rc = mpt_error_set(&err, MPT_ERR_IO, "replay file gone");
  rc = mpt_wire_gonogo(MPI_COMM_WORLD, rc, &err);
  assert_int_equal(rc, MPT_ERR_DEVICE); /* the lowest failing rank's code */
  if (g_rank == 0) {
    assert_non_null(strstr(err.msg, "rank 1: no CUDA device"));
    assert_non_null(strstr(err.msg, "rank 2: replay file gone"));
  }
}

static void test_local_rank(void **state) {
  (void)state;
  int lr, lc;
  assert_int_equal(mpt_device_local_rank(MPI_COMM_WORLD, g_rank > 0, &lr, &lc), 0);
  if (g_rank == 0) {
    assert_int_equal(lr, -1);
    assert_int_equal(lc, 0);
  } else { /* one node: workers 1..size-1 are local ranks 0..size-2 */
    assert_int_equal(lr, g_rank - 1);
    assert_int_equal(lc, g_size - 1);
  }
  /* every rank a worker */
  assert_int_equal(mpt_device_local_rank(MPI_COMM_WORLD, 1, &lr, &lc), 0);
  assert_int_equal(lr, g_rank);
  assert_int_equal(lc, g_size);
}

static void test_devices(void **state) {
  (void)state;
  mpt_device_info mine, all[64];
  mpt_device_cpu(&mine, g_rank, "cpu");
  assert_string_equal(mine.vendor, "CPU");
  assert_true(mine.name[0] != '\0');
  assert_true(mine.host[0] != '\0');
  assert_true(mine.arch[0] != '\0');
  assert_true(mine.memory_gib > 0.01);
  assert_int_equal(mine.index, -1);
  memset(all, 0, sizeof all);
  assert_int_equal(mpt_wire_gather_devices(MPI_COMM_WORLD, &mine, all), 0);
  if (g_rank == 0) {
    for (int r = 0; r < g_size; r++) {
      assert_int_equal(all[r].rank, r);
      assert_string_equal(all[r].name, mine.name);
      assert_string_equal(all[r].evaluator, "cpu");
    }
    char buf[8192];
    FILE *f = fmemopen(buf, sizeof buf, "w");
    mpt_device_table_print(f, all, g_size);
    fclose(f);
    assert_non_null(strstr(buf, mine.name));
    assert_non_null(strstr(buf, "rank"));
  }
  /* describe() without an evaluator is the CPU */
  mpt_device_info d;
  mpt_device_describe(NULL, 7, &d);
  assert_int_equal(d.rank, 7);
  assert_string_equal(d.vendor, "CPU");
}

/* rank 0 sends WORK ids to every worker; workers answer in reverse rank order (the highest rank first)
 * with an observation; rank 0 takes them in arrival order; then STOP. */
static void test_round_trip(void **state) {
  (void)state;
  mpt_backoff b;
  mpt_backoff_init(&b, MPT_BACKOFF_MIN_NS, MPT_BACKOFF_MAX_NS);
  if (g_rank == 0) {
    mpt_wire_work work[64];
    MPI_Request req[64];
    for (int w = 1; w < g_size; w++) {
      work[w] = (mpt_wire_work){1000 + w, w % 3, 0};
      assert_int_equal(mpt_wire_send_work(MPI_COMM_WORLD, w, &work[w], &req[w]), 0);
    }
    int order[64], n = 0;
    while (n < g_size - 1) {
      MPI_Status st;
      assert_int_equal(mpt_wire_probe_wait(MPI_COMM_WORLD, MPI_ANY_SOURCE, MPT_TAG_RESULT, 10.0, &b, NULL, &st), 1);
      mpt_obs o;
      assert_int_equal(mpt_wire_recv_obs(MPI_COMM_WORLD, &st, &o), 0);
      assert_int_equal(o.id, 1000 + st.MPI_SOURCE);
      assert_int_equal(o.status, MPT_STATUS_COMPILE_ERROR);
      assert_string_equal(o.reason, "error: expected ';'");
      assert_true(fabs(o.times[3] - 0.25 * st.MPI_SOURCE) < 1e-12);
      order[n++] = st.MPI_SOURCE;
    }
    for (int w = 1; w < g_size; w++) mpt_wire_wait(&req[w], &b);
    assert_int_equal(order[0], g_size - 1); /* not dispatch order: arrival order */
    mpt_wire_stop_all(MPI_COMM_WORLD, 3);
  } else {
    MPI_Status st;
    assert_int_equal(mpt_wire_probe_wait(MPI_COMM_WORLD, 0, MPI_ANY_TAG, 10.0, &b, NULL, &st), 1);
    mpt_wire_work work;
    assert_int_equal(mpt_wire_recv_work(MPI_COMM_WORLD, &st, &work), 0);
    assert_int_equal(work.id, 1000 + g_rank);
    assert_int_equal(work.search, g_rank % 3); /* the search index travels with the id */
    int64_t id = work.id;
    /* reverse order: rank r waits for rank r+1's go-ahead */
    int token = 0;
    if (g_rank < g_size - 1) {
      MPI_Status ts;
      assert_int_equal(mpt_wire_probe_wait(MPI_COMM_WORLD, g_rank + 1, 77, 10.0, &b, NULL, &ts), 1);
      MPI_Recv(&token, 1, MPI_INT, g_rank + 1, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    mpt_obs o;
    mpt_obs_init(&o, id);
    o.status = MPT_STATUS_COMPILE_ERROR;
    o.n_times = 4;
    o.times[3] = 0.25 * g_rank;
    snprintf(o.reason, sizeof o.reason, "error: expected ';'");
    MPI_Request r;
    assert_int_equal(mpt_wire_send_obs(MPI_COMM_WORLD, 0, &o, &r), 0);
    mpt_wire_wait(&r, &b);
    if (g_rank > 1) {
      usleep(20000); /* let the result arrive first */
      MPI_Send(&token, 1, MPI_INT, g_rank - 1, 77, MPI_COMM_WORLD);
    }
    assert_int_equal(mpt_wire_probe_wait(MPI_COMM_WORLD, 0, MPT_TAG_STOP, 10.0, &b, NULL, &st), 1);
    int code = -1;
    assert_int_equal(mpt_wire_recv_stop(MPI_COMM_WORLD, &st, &code), 0);
    assert_int_equal(code, 3);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

/* After a long idle wait the naps grow past max_ns to a share of the time waited (capped), and activity
 * brings them back to the fine-grained cap at once. */
static void test_backoff_long_idle(void **state) {
  (void)state;
  mpt_backoff b;
  mpt_backoff_init(&b, MPT_BACKOFF_MIN_NS, MPT_BACKOFF_MAX_NS);
  b.idle_since = mpt_wire_now() - 0.2; /* idle for 0.2 s: naps up to 2 % of that, 4 ms */
  for (int i = 0; i < 30; i++) mpt_backoff_sleep(&b);
  assert_true(b.ns > MPT_BACKOFF_MAX_NS);
  assert_true(b.ns <= (long)((mpt_wire_now() - b.idle_since) * MPT_BACKOFF_IDLE_FRAC * 1e9) + 1);
  b.idle_since = mpt_wire_now() - 30.0; /* idle for long: the absolute cap */
  for (int i = 0; i < 10; i++) mpt_backoff_sleep(&b);
  assert_int_equal(b.ns, MPT_BACKOFF_IDLE_MAX_NS);
  mpt_backoff_reset(&b); /* a message came */
  assert_int_equal(b.ns, MPT_BACKOFF_MIN_NS);
  for (int i = 0; i < 30; i++) mpt_backoff_sleep(&b);
  if (mpt_wire_now() - b.idle_since < MPT_BACKOFF_IDLE_AFTER_S) /* ~25 ms unless the machine is very busy */
    assert_int_equal(b.ns, MPT_BACKOFF_MAX_NS); /* the 1 ms cap again */
}

/* Waiting must not burn a core: rank 0 waits 1.5 s for a message that comes at the end, the workers
 * wait for it too (as an idle worker waits for work). Each must use < 10 % of a core meanwhile: a spinning
 * wait uses ~100 %, and the margin is for VMs where a wake-up is slow (CI's took ~5x this dev VM's). */
static void test_idle_cpu(void **state) {
  (void)state;
  mpt_backoff b;
  mpt_backoff_init(&b, MPT_BACKOFF_MIN_NS, MPT_BACKOFF_MAX_NS);
  MPI_Barrier(MPI_COMM_WORLD);
  double c0 = cpu_now(), t0 = mpt_wire_now();
  MPI_Status st;
  int got;
  if (g_rank == 0) {
    /* nothing arrives within 1.5 s: the timeout path */
    got = mpt_wire_probe_wait(MPI_COMM_WORLD, MPI_ANY_SOURCE, MPT_TAG_RESULT, 1.5, &b, NULL, &st);
    assert_int_equal(got, 0);
  } else {
    got = mpt_wire_probe_wait(MPI_COMM_WORLD, 0, MPT_TAG_STOP, 30.0, &b, NULL, &st);
    assert_int_equal(got, 1);
  }
  double wall = mpt_wire_now() - t0, cpu = cpu_now() - c0;
  if (g_rank == 0) mpt_wire_stop_all(MPI_COMM_WORLD, 0);
  else {
    int code;
    mpt_wire_recv_stop(MPI_COMM_WORLD, &st, &code);
  }
  double frac = cpu / wall;
  printf("rank %d waited %.3f s using %.4f CPU-s (%.2f %% of a core)\n", g_rank, wall, cpu, 100 * frac);
  assert_true(wall >= 1.45);
  assert_true(frac < 0.10);
  MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  if (g_size < 2 || g_size > 64) {
    if (g_rank == 0) fprintf(stderr, "run with 2..64 ranks\n");
    MPI_Finalize();
    return 1;
  }
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_backoff),        cmocka_unit_test(test_backoff_long_idle),        cmocka_unit_test(test_gonogo_ok),
    cmocka_unit_test(test_gonogo_one_fails), cmocka_unit_test(test_gonogo_all_same),
    cmocka_unit_test(test_gonogo_different), cmocka_unit_test(test_local_rank),
    cmocka_unit_test(test_devices),        cmocka_unit_test(test_round_trip),
    cmocka_unit_test(test_idle_cpu),
  };
  int failed = cmocka_run_group_tests(tests, NULL, NULL);
  int any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any ? 1 : 0;
}
