/* tests/test_devices_limits.c: the configurations a device refuses (evaluators/device_limits.h) on the shared T1
 * files, whose kernel files are not there (only the launch geometry is read), checked against the block sizes
 * read from each configuration's parameter values; and shared memory per block on a purpose-made problem. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "evaluators/device_limits.h"
#include "spaces/space.h"

static const char *data_dir(void) {
  const char *d = getenv("MPT_SHARED_DATA");
  return d ? d : "../shared/data";
}

static void open_t1(const char *name, mpt_problem **p, mpt_space **s) {
  char path[512];
  mpt_error err = {0};
  snprintf(path, sizeof path, "%s/t1/%s", data_dir(), name);
  int rc = mpt_problem_load(path, p, &err);
  if (rc == 0) rc = mpt_space_build(*p, s, &err);
  if (rc) fprintf(stderr, "%s\n", err.msg);
  assert_int_equal(rc, 0);
}

static mpt_device_info gpu(int max_threads, int64_t max_shared) {
  mpt_device_info d;
  memset(&d, 0, sizeof d);
  d.max_threads_per_block = max_threads;
  d.max_shared_per_block = max_shared;
  return d;
}

/* the product of the values of the parameters x, y, z (each may be NULL: 1) in configuration id */
static int64_t threads_of(const mpt_problem *p, const mpt_space *s, int64_t id, int *idx, const char *const xyz[3]) {
  int64_t t = 1;
  mpt_space_config(s, id, idx);
  for (int d = 0; d < 3; d++) {
    int pi = xyz[d] ? mpt_problem_param_index(p, xyz[d]) : -1;
    if (pi >= 0) t *= (int64_t)p->params[pi].numeric[idx[pi]];
  }
  return t;
}

/* excluded exactly where the block (LocalSize: the parameters xyz) has more than limit threads; the count */
static int64_t check_threads(const char *file, const char *const xyz[3], int limit) {
  mpt_problem *p = NULL;
  mpt_space *s = NULL;
  open_t1(file, &p, &s);
  int64_t n = mpt_space_size(s), got = -1, want = 0;
  uint8_t *ex = malloc((size_t)n);
  int *idx = calloc((size_t)mpt_space_dims(s), sizeof *idx);
  mpt_device_info d = gpu(limit, 0);
  mpt_error err = {0};
  assert_int_equal(mpt_device_excluded(p, s, &d, ex, &got, &err), 0);
  for (int64_t id = 0; id < n; id++) {
    int refused = threads_of(p, s, id, idx, xyz) > limit;
    want += refused;
    assert_int_equal(ex[id], refused);
  }
  assert_int_equal(got, want);
  free(idx);
  free(ex);
  mpt_space_free(s);
  mpt_problem_free(p);
  return got;
}

/* hotspot and convolution: their Conditions already keep blocks at 1024 threads, so a 1024-thread GPU refuses
 * none; a 256-thread one refuses the larger blocks */
static void test_threads_shared_t1(void **state) {
  (void)state;
  static const char *const xy[3] = {"block_size_x", "block_size_y", NULL};
  assert_int_equal(check_threads("hotspot_milo.json", xy, 1024), 0);
  assert_true(check_threads("hotspot_milo.json", xy, 256) > 0);
  assert_int_equal(check_threads("convolution_milo.json", xy, 1024), 0);
  assert_true(check_threads("convolution_milo.json", xy, 256) > 0);
  static const char *const xyz[3] = {"block_size_x", "block_size_y", "block_size_z"};
  assert_int_equal(check_threads("paper_dedispersion.json", xyz, 1024), 0);
  assert_true(check_threads("paper_dedispersion.json", xyz, 512) > 0); /* LocalSize.Z: block_size_z */
  static const char *const gemm[3] = {"MDIMC", "NDIMC", NULL};
  check_threads("paper_gemm.json", gemm, 64);
}

/* a device without limits (the CPU, a replayed device) refuses nothing, whatever the problem */
static void test_no_limits(void **state) {
  (void)state;
  mpt_problem *p = NULL;
  mpt_space *s = NULL;
  open_t1("paper_dedispersion.json", &p, &s);
  uint8_t *ex = malloc((size_t)mpt_space_size(s));
  memset(ex, 7, (size_t)mpt_space_size(s));
  int64_t n = -1;
  mpt_device_info d = gpu(0, 0);
  mpt_error err = {0};
  assert_int_equal(mpt_device_excluded(p, s, &d, ex, &n, &err), 0);
  assert_int_equal(n, 0);
  for (int64_t id = 0; id < mpt_space_size(s); id++) assert_int_equal(ex[id], 0);
  free(ex);
  mpt_space_free(s);
  mpt_problem_free(p);
}

static const char *shared_problem =
    "{\"ConfigurationSpace\": {\"TuningParameters\": ["
    "{\"Name\": \"block_size_x\", \"Type\": \"int\", \"Values\": \"[32, 64, 128, 256, 512, 1024]\", \"Default\": 32},"
    "{\"Name\": \"tile\", \"Type\": \"int\", \"Values\": \"[1, 2, 4, 8]\", \"Default\": 1}]},"
    "\"KernelSpecification\": {\"Language\": \"CUDA\", \"KernelName\": \"k\", \"KernelFile\": \"absent.cu\","
    "\"ProblemSize\": [4096], \"SharedMemory\": \"block_size_x * tile * 4\","
    "\"Arguments\": [{\"Name\": \"a\", \"Type\": \"float\", \"MemoryType\": \"Vector\", \"Size\": 4096},"
    "{\"Name\": \"scratch\", \"Type\": \"float\", \"MemoryType\": \"Local\", \"Size\": 256}]}}";

/* SharedMemory plus the Local arguments (1 KiB here) against the device's shared memory per block; the reason */
static void test_shared_memory(void **state) {
  (void)state;
  mpt_problem *p = NULL;
  mpt_space *s = NULL;
  mpt_error err = {0};
  assert_int_equal(mpt_problem_parse(shared_problem, "/tmp/shared.json", &p, &err), 0);
  assert_int_equal(mpt_space_build(p, &s, &err), 0);
  int64_t n = mpt_space_size(s), got = 0, want = 0;
  uint8_t *ex = malloc((size_t)n);
  int idx[2];
  mpt_device_info d = gpu(1024, 8192);
  assert_int_equal(mpt_device_excluded(p, s, &d, ex, &got, &err), 0);
  for (int64_t id = 0; id < n; id++) {
    mpt_space_config(s, id, idx);
    int64_t bytes = (int64_t)p->params[0].numeric[idx[0]] * (int64_t)p->params[1].numeric[idx[1]] * 4 + 1024;
    assert_int_equal(ex[id], bytes > 8192);
    want += bytes > 8192;
  }
  assert_int_equal(got, want);
  assert_true(want > 0 && want < n);
  char why[160];
  int64_t block[3] = {1024, 2, 1};
  assert_int_equal(mpt_device_refuses(&d, block, 0, why, sizeof why), 1);
  assert_string_equal(why, "block of 2048 threads exceeds the device's 1024 threads per block");
  block[1] = 1;
  assert_int_equal(mpt_device_refuses(&d, block, 9000, why, sizeof why), 1);
  assert_string_equal(why, "9000 bytes of shared memory exceed the device's 8192 per block");
  assert_int_equal(mpt_device_refuses(&d, block, 8192, why, sizeof why), 0);
  assert_string_equal(why, "");
  free(ex);
  mpt_space_free(s);
  mpt_problem_free(p);
}

/* a bad launch expression is the problem's error, naming the file and field */
static void test_bad_geometry(void **state) {
  (void)state;
  char text[2048];
  snprintf(text, sizeof text, "%s", shared_problem);
  char *at = strstr(text, "block_size_x * tile * 4");
  memcpy(at, "block_size_x * tile * )", 23);
  mpt_problem *p = NULL;
  mpt_space *s = NULL;
  mpt_error err = {0};
  assert_int_equal(mpt_problem_parse(text, "/tmp/bad.json", &p, &err), 0);
  assert_int_equal(mpt_space_build(p, &s, &err), 0);
  uint8_t ex[64];
  int64_t n = 0;
  mpt_device_info d = gpu(1024, 8192);
  assert_true(mpt_device_excluded(p, s, &d, ex, &n, &err) < 0);
  assert_non_null(strstr(err.msg, "/tmp/bad.json:1:"));
  assert_non_null(strstr(err.msg, "KernelSpecification.SharedMemory"));
  mpt_space_free(s);
  mpt_problem_free(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_threads_shared_t1),
      cmocka_unit_test(test_no_limits),
      cmocka_unit_test(test_shared_memory),
      cmocka_unit_test(test_bad_geometry),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
