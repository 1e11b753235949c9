/* tests/test_gpu_eval.c: the cuda and hip evaluators. Everywhere: bad input is refused at open()
 * with a clear message (missing kernel file, kernel name not in it, failing size expression, wrong
 * language), a machine without a device gives MPT_ERR_DEVICE "no CUDA device: ..." / "no HIP device:
 * ...", the device list and *_VISIBLE_DEVICES rules. With a GPU (skipped visibly without one): the
 * examples compile, verify and time; the failure modes of tests/kernels/gpu_modes.cu are classified
 * (compile_error, wrong_result, runtime_error, timeout, launch_error) and the evaluator goes on. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "evaluators/evaluator.h"
#include "evaluators/gpu/cuda_api.h"
#include "evaluators/gpu/gpu_devices.h"
#include "evaluators/gpu/gpu_eval.h"
#include "evaluators/kernel_spec.h"
#include "spaces/space.h"

typedef struct loaded {
  mpt_problem *p;
  mpt_space *s;
} loaded;

static int load(const char *path, loaded *l, mpt_error *err) {
  memset(l, 0, sizeof *l);
  int rc = mpt_problem_load(path, &l->p, err);
  if (rc) return rc;
  rc = mpt_space_build(l->p, &l->s, err);
  if (rc) {
    mpt_problem_free(l->p);
    l->p = NULL;
  }
  return rc;
}

static void unload(loaded *l) {
  mpt_space_free(l->s);
  mpt_problem_free(l->p);
}

static void source_path(char *buf, size_t cap, const char *rel) {
  const char *src = getenv("MPT_SOURCE_DIR");
  assert_non_null(src);
  snprintf(buf, cap, "%s/%s", src, rel);
}

/* opens evaluator `name` on T1 file `path`; returns open's code, err filled */
static int try_open(const char *name, const char *path, mpt_error *err) {
  loaded l;
  int rc = load(path, &l, err);
  if (rc) return rc;
  mpt_eval_settings set;
  memset(&set, 0, sizeof set);
  mpt_evaluator *ev = NULL;
  rc = mpt_evaluator_open(name, l.p, l.s, &set, &ev, err);
  if (rc == 0) mpt_evaluator_close(ev);
  unload(&l);
  return rc;
}

static int cuda_devices(void) {
  mpt_gpu_desc g[8];
  mpt_error e;
  mpt_error_clear(&e);
  return mpt_gpu_list_cuda(g, 8, &e) > 0;
}

static int hip_devices(void) {
  mpt_gpu_desc g[8];
  mpt_error e;
  mpt_error_clear(&e);
  return access("/dev/kfd", F_OK) == 0 && mpt_gpu_list_hip(g, 8, &e) > 0;
}

/* ---- everywhere ---- */

static void test_registered(void **state) {
  (void)state;
  assert_non_null(mpt_evaluator_find("cuda"));
  assert_non_null(mpt_evaluator_find("hip"));
}

static void test_visibility(void **state) {
  (void)state;
  setenv("CUDA_VISIBLE_DEVICES", "", 1);
  assert_string_equal(mpt_gpu_visibility_hides_all("cuda"), "CUDA_VISIBLE_DEVICES");
  mpt_gpu_desc g[4];
  mpt_error e;
  mpt_error_clear(&e);
  assert_int_equal(mpt_gpu_list_cuda(g, 4, &e), MPT_ERR_DEVICE);
  assert_memory_equal(e.msg, "no CUDA device: ", 16);
  setenv("CUDA_VISIBLE_DEVICES", "-1", 1);
  assert_non_null(mpt_gpu_visibility_hides_all("cuda"));
  setenv("CUDA_VISIBLE_DEVICES", "1,0", 1);
  assert_null(mpt_gpu_visibility_hides_all("cuda"));
  setenv("CUDA_VISIBLE_DEVICES", "GPU-8f3c2a10", 1);
  assert_null(mpt_gpu_visibility_hides_all("cuda"));
  unsetenv("CUDA_VISIBLE_DEVICES");
  assert_null(mpt_gpu_visibility_hides_all("cuda"));
  setenv("ROCR_VISIBLE_DEVICES", "", 1);
  assert_string_equal(mpt_gpu_visibility_hides_all("hip"), "ROCR_VISIBLE_DEVICES");
  mpt_error_clear(&e);
  assert_int_equal(mpt_gpu_list_hip(g, 4, &e), MPT_ERR_DEVICE);
  assert_memory_equal(e.msg, "no HIP device: ", 15);
  unsetenv("ROCR_VISIBLE_DEVICES");
  setenv("HIP_VISIBLE_DEVICES", "-1", 1);
  assert_string_equal(mpt_gpu_visibility_hides_all("hip"), "HIP_VISIBLE_DEVICES");
  unsetenv("HIP_VISIBLE_DEVICES");
  assert_null(mpt_gpu_visibility_hides_all("hip"));
  /* ROCm reads CUDA_VISIBLE_DEVICES when HIP_VISIBLE_DEVICES is not set */
  setenv("CUDA_VISIBLE_DEVICES", "", 1);
  assert_string_equal(mpt_gpu_visibility_hides_all("hip"), "CUDA_VISIBLE_DEVICES");
  mpt_error_clear(&e);
  assert_int_equal(mpt_gpu_list_hip(g, 4, &e), MPT_ERR_DEVICE);
  assert_non_null(strstr(e.msg, "CUDA_VISIBLE_DEVICES"));
  setenv("HIP_VISIBLE_DEVICES", "0", 1); /* HIP_VISIBLE_DEVICES, when set, is the one HIP reads */
  assert_null(mpt_gpu_visibility_hides_all("hip"));
  setenv("CUDA_VISIBLE_DEVICES", "0", 1);
  setenv("HIP_VISIBLE_DEVICES", "", 1);
  assert_string_equal(mpt_gpu_visibility_hides_all("hip"), "HIP_VISIBLE_DEVICES");
  unsetenv("HIP_VISIBLE_DEVICES");
  unsetenv("CUDA_VISIBLE_DEVICES");
  assert_int_equal(mpt_gpu_pick(0, 4), 0);
  assert_int_equal(mpt_gpu_pick(5, 4), 1);
  assert_int_equal(mpt_gpu_pick(3, 0), -1);
}

/* `mptune devices` binds as a run does: over the GPUs of one runtime (NVIDIA's first), not over both */
static void test_bind_one_runtime(void **state) {
  (void)state;
  mpt_gpu_desc g[5];
  memset(g, 0, sizeof g);
  for (int i = 0; i < 5; i++) snprintf(g[i].api, sizeof g[i].api, "%s", i < 2 ? "cuda" : "hip");
  assert_int_equal(mpt_gpu_bind(g, 5, 0), 0);
  assert_int_equal(mpt_gpu_bind(g, 5, 1), 1);
  assert_int_equal(mpt_gpu_bind(g, 5, 2), 0); /* the cuda evaluator's pick: 2 % 2 NVIDIA GPUs, not AMD 0 */
  assert_int_equal(mpt_gpu_bind(g, 5, 3), 1);
  assert_int_equal(mpt_gpu_bind(g + 2, 3, 4), 1); /* AMD only: 4 % 3 */
  assert_int_equal(mpt_gpu_bind(g, 0, 0), -1);
}

static void test_device_list(void **state) {
  (void)state;
  mpt_gpu_desc g[16];
  char why[2048];
  int n = mpt_gpu_list_all(g, 16, why, sizeof why);
  assert_true(n >= 0);
  printf("GPUs: %d\n%s", n, why);
  for (int i = 0; i < n; i++) {
    printf("  %s %d: %s %s %.1f GiB\n", g[i].vendor, g[i].index, g[i].name, g[i].arch, g[i].memory_gib);
    assert_true(strncmp(g[i].arch, "sm_", 3) == 0 || strncmp(g[i].arch, "gfx", 3) == 0);
    assert_true(g[i].memory_gib > 0);
  }
  if (!cuda_devices()) assert_non_null(strstr(why, "CUDA: no CUDA device: "));
  if (!hip_devices()) assert_non_null(strstr(why, "HIP: no HIP device: "));
}

static void test_no_device(void **state) {
  (void)state;
  char path[1024];
  source_path(path, sizeof path, "examples/gpu/convolution.json");
  mpt_error err;
  if (!cuda_devices()) {
    mpt_error_clear(&err);
    assert_int_equal(try_open("cuda", path, &err), MPT_ERR_DEVICE);
    printf("cuda: %s\n", err.msg);
    assert_memory_equal(err.msg, "no CUDA device: ", 16);
  } else {
    printf("(a CUDA device is present: the no-device path is not exercised)\n");
  }
  if (!hip_devices()) {
    mpt_error_clear(&err);
    assert_int_equal(try_open("hip", path, &err), MPT_ERR_DEVICE);
    printf("hip: %s\n", err.msg);
    assert_memory_equal(err.msg, "no HIP device: ", 15);
  } else {
    printf("(a HIP device is present: the no-device path is not exercised)\n");
  }
}

/* writes a T1 problem (from gpu_modes.json with one replacement) into dir; returns its path */
static void write_variant(const char *dir, const char *file, const char *from, const char *to, char *out, size_t cap) {
  char src[1024];
  source_path(src, sizeof src, "tests/kernels/gpu_modes.json");
  FILE *f = fopen(src, "rb");
  assert_non_null(f);
  static char text[1 << 16];
  size_t n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[n] = 0;
  char *hit = strstr(text, from);
  assert_non_null(hit);
  snprintf(out, cap, "%s/%s", dir, file);
  f = fopen(out, "wb");
  assert_non_null(f);
  fwrite(text, 1, (size_t)(hit - text), f);
  fputs(to, f);
  fputs(hit + strlen(from), f);
  fclose(f);
}

static void test_bad_input(void **state) {
  (void)state;
  char dir[] = "/tmp/mpt_gpu_badXXXXXX";
  assert_non_null(mkdtemp(dir));
  char kern[1024], copy[1200];
  source_path(kern, sizeof kern, "tests/kernels/gpu_modes.cu");
  snprintf(copy, sizeof copy, "cp '%s' '%s/gpu_modes.cu'", kern, dir);
  assert_int_equal(system(copy), 0);
  char path[1200];
  const char *evs[] = {"cuda", "hip"};
  for (int e = 0; e < 2; e++) {
    mpt_error err;
    /* missing kernel file */
    write_variant(dir, "missing.json", "\"gpu_modes.cu\"", "\"no_such_kernel.cu\"", path, sizeof path);
    mpt_error_clear(&err);
    assert_true(try_open(evs[e], path, &err) < 0);
    printf("%s: %s\n", evs[e], err.msg);
    assert_non_null(strstr(err.msg, "no_such_kernel.cu"));
    /* kernel name not in the file */
    write_variant(dir, "name.json", "\"KernelName\": \"modes\"", "\"KernelName\": \"nonexistent_kernel\"", path, sizeof path);
    mpt_error_clear(&err);
    assert_int_equal(try_open(evs[e], path, &err), MPT_ERR_NAME);
    printf("%s: %s\n", evs[e], err.msg);
    assert_non_null(strstr(err.msg, "nonexistent_kernel"));
    assert_non_null(strstr(err.msg, "KernelName"));
    /* a size expression that fails */
    write_variant(dir, "size.json", "\"Size\": \"ProblemSize[0]\"}", "\"Size\": \"ProblemSize[0] // 0\"}", path, sizeof path);
    mpt_error_clear(&err);
    assert_true(try_open(evs[e], path, &err) < 0);
    printf("%s: %s\n", evs[e], err.msg);
    assert_non_null(strstr(err.msg, "Size"));
    /* a language the evaluator does not run */
    write_variant(dir, "lang.json", "\"Language\": \"CUDA\"", "\"Language\": \"OpenCL\"", path, sizeof path);
    mpt_error_clear(&err);
    assert_true(try_open(evs[e], path, &err) < 0);
    printf("%s: %s\n", evs[e], err.msg);
    assert_non_null(strstr(err.msg, "OpenCL"));
  }
  char rm[1200];
  snprintf(rm, sizeof rm, "rm -rf '%s'", dir);
  assert_int_equal(system(rm), 0);
}

/* the launch of the failure-mode kernel: mode 5 asks for 32x the threads (over any GPU's limit) */
static void test_modes_launch(void **state) {
  (void)state;
  char path[1024];
  source_path(path, sizeof path, "tests/kernels/gpu_modes.json");
  loaded l;
  mpt_error err;
  mpt_error_clear(&err);
  assert_int_equal(load(path, &l, &err), 0);
  mpt_kernel_spec *ks;
  assert_int_equal(mpt_kspec_load(l.p, &ks, &err), 0);
  assert_int_equal(mpt_space_size(l.s), 12);
  for (int bs = 0; bs < 2; bs++)
    for (int mode = 0; mode < 6; mode++) {
      int idx[2] = {bs, mode};
      mpt_launch ln;
      assert_int_equal(mpt_kspec_launch(ks, idx, &ln, &err), 0);
      int64_t threads = bs ? 128 : 64;
      assert_int_equal(ln.block[0], mode == 5 ? 32 * threads : threads);
      assert_int_equal(ln.grid[0], 1048576 / threads);
      int found = 0;
      for (int d = 0; d < ln.n_defines; d++) {
        char want[32];
        snprintf(want, sizeof want, "mode=%d", mode);
        found |= strcmp(ln.defines[d], want) == 0;
      }
      assert_true(found);
      mpt_launch_free(&ln);
    }
  mpt_kspec_free(ks);
  unload(&l);
}

/* ---- with a GPU ---- */

static int open_or_skip(const char *name, const char *rel, loaded *l, mpt_evaluator **ev, double timeout_s) {
  int present = strcmp(name, "cuda") == 0 ? cuda_devices() : hip_devices();
  if (!present) {
    printf("SKIPPED: no %s device: %s needs a GPU\n", strcmp(name, "cuda") == 0 ? "CUDA" : "HIP", rel);
    return 0;
  }
  char path[1024];
  source_path(path, sizeof path, rel);
  mpt_error err;
  mpt_error_clear(&err);
  if (load(path, l, &err)) fprintf(stderr, "%s\n", err.msg);
  mpt_eval_settings set;
  memset(&set, 0, sizeof set);
  set.timeout_s = timeout_s;
  int rc = mpt_evaluator_open(name, l->p, l->s, &set, ev, &err);
  if (rc) fprintf(stderr, "%s\n", err.msg);
  assert_int_equal(rc, 0);
  printf("%s on %s %s (%s, %.1f GiB)\n", name, (*ev)->device.vendor, (*ev)->device.name, (*ev)->device.arch,
         (*ev)->device.memory_gib);
  return 1;
}

static void run_examples(const char *name) {
  const char *files[] = {"examples/gpu/convolution.json", "examples/gpu/gemm.json"};
  for (int f = 0; f < 2; f++) {
    loaded l;
    mpt_evaluator *ev;
    if (!open_or_skip(name, files[f], &l, &ev, 0)) skip();
    int64_t size = mpt_space_size(l.s);
    int64_t ids[4] = {mpt_space_default_id(l.s), size / 3, 2 * size / 3, size - 1};
    for (int i = 0; i < 4; i++) {
      mpt_obs o;
      mpt_error err;
      mpt_error_clear(&err);
      assert_int_equal(mpt_evaluator_evaluate(ev, ids[i], &o, &err), 0);
      char cfg[512];
      mpt_space_format(l.s, ids[i], cfg, sizeof cfg);
      printf("  %s: %s %.3f ms (median %.3f, compile %.0f ms) %s\n", cfg, mpt_status_name(o.status), o.objective,
             o.median, o.compile_ms, o.reason);
      if (o.status == MPT_STATUS_LAUNCH_ERROR) continue; /* e.g. too many registers for a block on this GPU */
      assert_int_equal(o.status, MPT_STATUS_OK);
      assert_true(o.objective > 0 && isfinite(o.median));
      assert_true(o.n_times >= 1);
      assert_true(o.compile_ms > 0);
    }
    mpt_evaluator_close(ev);
    unload(&l);
  }
}

static void test_cuda_examples(void **state) {
  (void)state;
  run_examples("cuda");
}

static void test_hip_examples(void **state) {
  (void)state;
  run_examples("hip");
}

static void run_modes(const char *name) {
  loaded l;
  mpt_evaluator *ev;
  if (!open_or_skip(name, "tests/kernels/gpu_modes.json", &l, &ev, 5)) skip();
  int bs = mpt_problem_param_index(l.p, "block_size_x"), md = mpt_problem_param_index(l.p, "mode");
  /* mode -> expected status; a correct variant after each failure shows the evaluator went on */
  const int modes[] = {0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0};
  const int want[] = {MPT_STATUS_OK, MPT_STATUS_COMPILE_ERROR, MPT_STATUS_OK, MPT_STATUS_WRONG_RESULT,
                      MPT_STATUS_OK, MPT_STATUS_RUNTIME_ERROR, MPT_STATUS_OK, MPT_STATUS_TIMEOUT,
                      MPT_STATUS_OK, MPT_STATUS_LAUNCH_ERROR, MPT_STATUS_OK};
  for (int k = 0; k < 11; k++) {
    int idx[2];
    idx[bs] = k % 2;
    idx[md] = modes[k];
    int64_t id = mpt_space_lookup(l.s, idx);
    assert_true(id >= 0);
    mpt_obs o;
    mpt_error err;
    mpt_error_clear(&err);
    assert_int_equal(mpt_evaluator_evaluate(ev, id, &o, &err), 0);
    printf("  mode %d: %s %s\n", modes[k], mpt_status_name(o.status), o.reason);
    /* ROCm aborts the whole process on a GPU memory fault ("Memory access fault by GPU node"): on AMD
     * the fault shows as a crash of the device server rather than a runtime error */
    if (strcmp(name, "hip") == 0 && want[k] == MPT_STATUS_RUNTIME_ERROR && o.status == MPT_STATUS_CRASH)
      continue;
    assert_int_equal(o.status, want[k]);
    if (want[k] != MPT_STATUS_OK) assert_true(strlen(o.reason) > 0);
    if (want[k] == MPT_STATUS_COMPILE_ERROR) assert_non_null(strstr(o.reason, "this_is_not_valid_code"));
  }
  mpt_evaluator_close(ev);
  unload(&l);
}

static void test_cuda_failures(void **state) {
  (void)state;
  run_modes("cuda");
}

static void test_hip_failures(void **state) {
  (void)state;
  run_modes("hip");
}

/* Without arguments: the tests that need no device. With --device: the tests that run kernels on a
 * GPU; with neither a CUDA nor a HIP device present this prints why and exits 77, which ctest reports
 * as a skipped test (SKIP_RETURN_CODE in tests/gpu.cmake), so the skip shows in every test log. With
 * --cuda-examples: the CUDA examples alone (with the stand-in driver, tests/fake_cuda.c, whose cuInit fails in a
 * process forked after it succeeded, as a real driver's does: the devices are listed here first, then the
 * evaluator forks its device server, which must still get the device); 77 without NVRTC. */
int main(int argc, char **argv) {
  const struct CMUnitTest host_tests[] = {
      cmocka_unit_test(test_registered),    cmocka_unit_test(test_visibility),
      cmocka_unit_test(test_device_list),   cmocka_unit_test(test_no_device),
      cmocka_unit_test(test_bind_one_runtime),
      cmocka_unit_test(test_bad_input),     cmocka_unit_test(test_modes_launch),
  };
  const struct CMUnitTest device_tests[] = {
      cmocka_unit_test(test_cuda_examples), cmocka_unit_test(test_hip_examples),
      cmocka_unit_test(test_cuda_failures), cmocka_unit_test(test_hip_failures),
  };
  if (argc > 1 && strcmp(argv[1], "--cuda-examples") == 0) {
    const mpt_nvrtc_api *rtc;
    mpt_error e;
    mpt_error_clear(&e);
    if (mpt_nvrtc_load(&rtc, &e) != 0 || !cuda_devices()) {
      printf("SKIPPED: no NVRTC or no CUDA driver: %s\n", e.msg);
      return 77;
    }
    const struct CMUnitTest examples[] = {cmocka_unit_test(test_cuda_examples)};
    return cmocka_run_group_tests(examples, NULL, NULL);
  }
  if (argc > 1 && strcmp(argv[1], "--device") == 0) {
    if (!cuda_devices() && !hip_devices()) {
      printf("SKIPPED: no CUDA or HIP device on this machine: the GPU evaluator tests (examples and "
             "failure modes on a device) need one\n");
      return 77;
    }
    return cmocka_run_group_tests(device_tests, NULL, NULL);
  }
  return cmocka_run_group_tests(host_tests, NULL, NULL);
}
