/* tests/test_gpu_compile.c: without a GPU, the GPU examples (examples/gpu/) compile through the
 * evaluators' own compile path (kernel_spec defines -> isolated NVRTC for sm_90 / hiprtc for gfx90a)
 * for several configurations each; compile errors and missing kernels are reported with the
 * compiler's log; a compiler that crashes or hangs in the isolated child is reported, not fatal.
 * Skips visibly ("SKIPPED: ...") when NVRTC or hiprtc is not installed. Prints compile times. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "evaluators/gpu/cuda_api.h"
#include "evaluators/gpu/gpu_eval.h"
#include "evaluators/gpu/hip_api.h"
#include "evaluators/isolate.h"
#include "evaluators/kernel_spec.h"
#include "spaces/space.h"

typedef struct example {
  mpt_problem *p;
  mpt_space *s;
  mpt_kernel_spec *ks;
} example;

/* a problem of the source tree: examples/gpu/NAME, or DIR/NAME when name has a directory */
static void load_example(const char *name, example *ex) {
  const char *src = getenv("MPT_SOURCE_DIR");
  assert_non_null(src);
  char path[1024];
  snprintf(path, sizeof path, strchr(name, '/') ? "%s/%s" : "%s/examples/gpu/%s", src, name);
  mpt_error err;
  mpt_error_clear(&err);
  int rc = mpt_problem_load(path, &ex->p, &err);
  if (rc) fprintf(stderr, "%s\n", err.msg);
  assert_int_equal(rc, 0);
  rc = mpt_space_build(ex->p, &ex->s, &err);
  if (rc) fprintf(stderr, "%s\n", err.msg);
  assert_int_equal(rc, 0);
  rc = mpt_kspec_load(ex->p, &ex->ks, &err);
  if (rc) fprintf(stderr, "%s\n", err.msg);
  assert_int_equal(rc, 0);
}

static void free_example(example *ex) {
  mpt_kspec_free(ex->ks);
  mpt_space_free(ex->s);
  mpt_problem_free(ex->p);
}

static int have_nvrtc(void) {
  const mpt_nvrtc_api *a;
  mpt_error e;
  mpt_error_clear(&e);
  if (mpt_nvrtc_load(&a, &e) == 0) return 1;
  printf("SKIPPED: %s\n", e.msg);
  return 0;
}

static int have_hiprtc(void) {
  const mpt_hip_api *a;
  mpt_error e;
  mpt_error_clear(&e);
  if (mpt_hip_load(&a, &e) != 0) {
    printf("SKIPPED: hiprtc not available: %s\n", e.msg);
    return 0;
  }
  if (!a->have_rtc) {
    printf("SKIPPED: hiprtc entry points not found next to %s\n", a->path);
    return 0;
  }
  return 1;
}

static int is_elf(const mpt_rtc_result *r) {
  return r->code_size > 4 && memcmp(r->code, "\x7f" "ELF", 4) == 0;
}

/* The space's default plus configurations spread over the valid set, including shared-memory ones. */
static int pick_configs(const example *ex, int64_t *ids, int cap) {
  int n = 0;
  int64_t size = mpt_space_size(ex->s);
  ids[n++] = mpt_space_default_id(ex->s);
  int shm = mpt_problem_param_index(ex->p, "use_shmem");
  int *idx = calloc((size_t)mpt_space_dims(ex->s), sizeof *idx);
  for (int k = 1; n < cap && k < 64; k++) {
    int64_t id = (size * k * 37 / 64) % size;
    mpt_space_config(ex->s, id, idx);
    int want_shm = n % 2; /* alternate between with and without shared memory */
    if (shm >= 0 && idx[shm] != want_shm) continue;
    int dup = 0;
    for (int j = 0; j < n; j++) dup |= ids[j] == id;
    if (!dup) ids[n++] = id;
  }
  free(idx);
  return n;
}

static void compile_example(const char *file, const char *compiler, mpt_rtc_compile_fn fn, const char *arch,
                            int n_configs) {
  example ex;
  load_example(file, &ex);
  assert_true(mpt_space_size(ex.s) >= 1000); /* a real tuning space */
  assert_true(mpt_space_default_id(ex.s) >= 0);
  int64_t ids[16];
  int n = pick_configs(&ex, ids, n_configs);
  assert_int_equal(n, n_configs);
  double total = 0;
  for (int i = 0; i < n; i++) {
    mpt_rtc_result r;
    mpt_launch l;
    mpt_error err;
    mpt_error_clear(&err);
    int rc = mpt_gpu_compile_config(ex.ks, ex.s, ids[i], fn, arch, 300, &l, &r, &err);
    char cfg[512];
    mpt_space_format(ex.s, ids[i], cfg, sizeof cfg);
    if (rc) fprintf(stderr, "%s: %s\n", cfg, err.msg);
    assert_int_equal(rc, 0);
    if (!r.ok) fprintf(stderr, "%s %s %s: %s\n", compiler, arch, cfg, r.log);
    assert_true(r.ok);
    assert_true(is_elf(&r)); /* CUBIN and AMD code objects are ELF files */
    assert_string_equal(r.lowered, ex.ks->kernel_name); /* extern "C": the name itself */
    /* the launch matches the example's tiling: grid = ceil(problem / (block * tile)) per dimension */
    const char *tiles[2] = {"tile_size_x", "tile_size_y"};
    for (int d = 0; d < 2; d++) {
      int pi = mpt_problem_param_index(ex.p, tiles[d]);
      int64_t tile = ex.p->params[pi].values[mpt_space_value_index(ex.s, ids[i], pi)].u.i;
      int64_t per_block = l.block[d] * tile;
      assert_int_equal(l.grid[d], (l.problem[d] + per_block - 1) / per_block);
    }
    assert_int_equal(l.grid[2], 1);
    assert_int_equal(l.block[2], 1);
    printf("%-12s %-6s %-7s %7.0f ms  %7zu bytes  %s\n", file, compiler, arch, r.compile_ms, r.code_size, cfg);
    total += r.compile_ms;
    mpt_launch_free(&l);
    mpt_rtc_result_free(&r);
  }
  printf("%-12s %-6s %-7s mean %.0f ms per configuration over %d\n", file, compiler, arch, total / n, n);
  free_example(&ex);
}

static void test_nvrtc_examples(void **state) {
  (void)state;
  if (!have_nvrtc()) skip();
  compile_example("convolution.json", "nvrtc", mpt_nvrtc_compile, "sm_90", 5);
  compile_example("gemm.json", "nvrtc", mpt_nvrtc_compile, "sm_90", 5);
  /* PTX for a virtual architecture */
  example ex;
  load_example("gemm.json", &ex);
  mpt_rtc_result r;
  mpt_error err;
  mpt_error_clear(&err);
  assert_int_equal(mpt_gpu_compile_config(ex.ks, ex.s, mpt_space_default_id(ex.s), mpt_nvrtc_compile,
                                          "compute_80", 300, NULL, &r, &err), 0);
  assert_true(r.ok && r.is_ptx);
  assert_non_null(strstr(r.code, ".entry gemm_kernel"));
  mpt_rtc_result_free(&r);
  free_example(&ex);
}

static void test_hiprtc_examples(void **state) {
  (void)state;
  if (!have_hiprtc()) skip();
  compile_example("convolution.json", "hiprtc", mpt_hiprtc_compile, "gfx90a", 4);
  compile_example("gemm.json", "hiprtc", mpt_hiprtc_compile, "gfx90a", 4);
  compile_example("gemm.json", "hiprtc", mpt_hiprtc_compile, "gfx1030", 1);
}

/* a broken source and a kernel name that is not in it: compile errors with the compiler's log */
static void check_errors(mpt_rtc_compile_fn fn, const char *arch) {
  const char *bad = "extern \"C\" __global__ void k(float *a) { a[threadIdx.x] = undefined_thing; }\n";
  const char *good = "extern \"C\" __global__ void k(float *a) { a[threadIdx.x] = VALUE; }\n";
  const char *opts[] = {"-DVALUE=2.0f"};
  mpt_rtc_result r;
  mpt_error err;
  mpt_error_clear(&err);
  assert_int_equal(mpt_rtc_compile_isolated(fn, bad, "bad.cu", "k", arch, opts, 1, 120, NULL, &r, &err), 0);
  assert_false(r.ok);
  assert_non_null(r.log);
  assert_non_null(strstr(r.log, "undefined_thing"));
  assert_int_equal(r.crashed, 0);
  mpt_rtc_result_free(&r);
  assert_int_equal(mpt_rtc_compile_isolated(fn, good, "good.cu", "missing_kernel", arch, opts, 1, 120, NULL, &r, &err), 0);
  assert_false(r.ok);
  assert_non_null(strstr(r.log, "missing_kernel"));
  mpt_rtc_result_free(&r);
  /* a define the source needs but the configuration lacks */
  assert_int_equal(mpt_rtc_compile_isolated(fn, good, "good.cu", "k", arch, NULL, 0, 120, NULL, &r, &err), 0);
  assert_false(r.ok);
  assert_non_null(strstr(r.log, "VALUE"));
  mpt_rtc_result_free(&r);
  assert_int_equal(mpt_rtc_compile_isolated(fn, good, "good.cu", "k", arch, opts, 1, 120, NULL, &r, &err), 0);
  assert_true(r.ok);
  assert_string_equal(r.lowered, "k");
  mpt_rtc_result_free(&r);
}

static void test_nvrtc_errors(void **state) {
  (void)state;
  if (!have_nvrtc()) skip();
  check_errors(mpt_nvrtc_compile, "sm_90");
  mpt_rtc_result r;
  mpt_error err;
  mpt_error_clear(&err);
  assert_int_equal(mpt_nvrtc_compile("", "x.cu", "k", "gfx90a", NULL, 0, &r, &err), MPT_ERR_VALUE);
}

static void test_hiprtc_errors(void **state) {
  (void)state;
  if (!have_hiprtc()) skip();
  check_errors(mpt_hiprtc_compile, "gfx90a");
}

/* The defines reach the kernel as "#define name value" lines before its source (as Kernel Tuner writes
 * them), not as -D options, which also rewrote the runtime's built-in headers: a tuning parameter named
 * `mode` (tests/kernels/gpu_modes.json) made every configuration fail to compile (NVRTC's
 * "enum cudaRoundMode mode", hiprtc's amd_hip_runtime.h). Line numbers of compile errors are the
 * source's own; a loop_unroll_factor_X of 0 drops that loop's "#pragma unroll" (hiprtc rejects 0). */
static void check_defines_in_source(mpt_rtc_compile_fn fn, const char *arch, const char *line_2) {
  example ex;
  load_example("tests/kernels/gpu_modes.json", &ex);
  int64_t n = mpt_space_size(ex.s);
  int mode = mpt_problem_param_index(ex.p, "mode");
  int checked = 0;
  for (int64_t id = 0; id < n; id++) {
    int64_t m = ex.p->params[mode].values[mpt_space_value_index(ex.s, id, mode)].u.i;
    mpt_rtc_result r;
    mpt_error err;
    mpt_error_clear(&err);
    assert_int_equal(mpt_gpu_compile_config(ex.ks, ex.s, id, fn, arch, 300, NULL, &r, &err), 0);
    if (!r.ok != (m == 1)) fprintf(stderr, "mode %lld: %s\n", (long long)m, r.log ? r.log : "");
    assert_int_equal(!r.ok, m == 1); /* mode 1 is the purpose-made compile error */
    if (m == 1) assert_non_null(strstr(r.log, "this_is_not_valid_code"));
    mpt_rtc_result_free(&r);
    checked++;
  }
  assert_true(checked >= 6);
  free_example(&ex);
  const char *defs[] = {"loop_unroll_factor_x=0", "loop_unroll_factor_xy=4", "VALUE=2.0f"};
  const char *src = "extern \"C\" __global__ void k(float *a) {\n  a[threadIdx.x] = undefined_thing;\n}\n";
  char *prepared = mpt_gpu_prepare_source(src, defs, 3);
  mpt_rtc_result r;
  mpt_error err;
  mpt_error_clear(&err);
  assert_int_equal(mpt_rtc_compile_isolated(fn, prepared, "bad.cu", "k", arch, NULL, 0, 120, NULL, &r, &err), 0);
  free(prepared);
  assert_false(r.ok);
  if (!strstr(r.log, line_2)) fprintf(stderr, "no '%s' in: %s\n", line_2, r.log);
  assert_non_null(strstr(r.log, line_2)); /* the error's line in the source, not after the defines */
  mpt_rtc_result_free(&r);
  const char *unroll = "extern \"C\" __global__ void k(float *a, int n) {\n"
                       "  float s = 0;\n"
                       "  #pragma unroll loop_unroll_factor_x\n"
                       "  for (int i = 0; i < n; i++) s += a[i];\n"
                       "#pragma unroll loop_unroll_factor_xy\n"
                       "  for (int i = 0; i < n; i++) s += VALUE * a[i];\n"
                       "  a[threadIdx.x] = s;\n}\n";
  prepared = mpt_gpu_prepare_source(unroll, defs, 3);
  assert_non_null(strstr(prepared, "#define loop_unroll_factor_x 0\n#define loop_unroll_factor_xy 4\n"
                                   "#define VALUE 2.0f\n#line 1\nextern"));
  assert_non_null(strstr(prepared, "\n                                     \n  for")); /* blanked, the line kept */
  assert_non_null(strstr(prepared, "\n#pragma unroll loop_unroll_factor_xy\n"));     /* 4: kept */
  assert_int_equal(mpt_rtc_compile_isolated(fn, prepared, "unroll.cu", "k", arch, NULL, 0, 120, NULL, &r, &err), 0);
  free(prepared);
  if (!r.ok) fprintf(stderr, "%s\n", r.log);
  assert_true(r.ok);
  mpt_rtc_result_free(&r);
}

static void test_nvrtc_defines(void **state) {
  (void)state;
  if (!have_nvrtc()) skip();
  check_defines_in_source(mpt_nvrtc_compile, "sm_90", "bad.cu(2)");
}

static void test_hiprtc_defines(void **state) {
  (void)state;
  if (!have_hiprtc()) skip();
  check_defines_in_source(mpt_hiprtc_compile, "gfx90a", "CompileSource:2:"); /* hiprtc names no file */
}

/* the kernel named in the spec is looked for by its own name: a template instance (scale<float>) by
 * its template, a namespaced one (ns::k2) by its last part; a longer identifier is not it */
static void test_source_has_kernel(void **state) {
  (void)state;
  const char *tmpl = "template <typename T> __global__ void scale(T *a, int n) { a[0] *= n; }\n";
  const char *nsk = "namespace ns { __global__ void k2(float *a) { a[0] = 1; } }\n";
  assert_true(mpt_gpu_source_has_kernel(tmpl, "scale<float>"));
  assert_true(mpt_gpu_source_has_kernel(tmpl, "scale"));
  assert_false(mpt_gpu_source_has_kernel(tmpl, "scal<float>"));
  assert_true(mpt_gpu_source_has_kernel(nsk, "ns::k2"));
  assert_true(mpt_gpu_source_has_kernel(nsk, "k2"));
  assert_false(mpt_gpu_source_has_kernel(nsk, "ns::k"));
  assert_false(mpt_gpu_source_has_kernel(nsk, "ns::"));
}

/* compilers that crash or hang only lose their child */
static int crashing_compiler(const char *source, const char *source_name, const char *kernel_name,
                             const char *arch, const char *const *opts, int n_opts, mpt_rtc_result *res,
                             mpt_error *err) {
  (void)source, (void)source_name, (void)kernel_name, (void)arch, (void)opts, (void)n_opts, (void)res, (void)err;
  raise(SIGSEGV);
  return 0;
}

static int hanging_compiler(const char *source, const char *source_name, const char *kernel_name,
                            const char *arch, const char *const *opts, int n_opts, mpt_rtc_result *res,
                            mpt_error *err) {
  (void)source, (void)source_name, (void)kernel_name, (void)arch, (void)opts, (void)n_opts, (void)res, (void)err;
  for (;;) pause();
  return 0;
}

static int failing_compiler(const char *source, const char *source_name, const char *kernel_name,
                            const char *arch, const char *const *opts, int n_opts, mpt_rtc_result *res,
                            mpt_error *err) {
  (void)source, (void)source_name, (void)kernel_name, (void)arch, (void)opts, (void)n_opts, (void)res;
  return mpt_error_set(err, MPT_ERR_INTERNAL, "NVRTC produced no CUBIN for %s", arch);
}

/* a compiler that produces a result with every field set (code with NUL and high bytes, PTX) */
static int reporting_compiler(const char *source, const char *source_name, const char *kernel_name,
                              const char *arch, const char *const *opts, int n_opts, mpt_rtc_result *res,
                              mpt_error *err) {
  (void)source, (void)source_name, (void)kernel_name, (void)arch, (void)opts, (void)n_opts, (void)err;
  static const char code[] = {0x7f, 0, 'E', 0, (char)0xff};
  memset(res, 0, sizeof *res);
  res->ok = 1;
  res->is_ptx = 1;
  res->code = malloc(sizeof code);
  if (res->code) memcpy(res->code, code, sizeof code);
  res->code_size = sizeof code;
  res->lowered = strdup("_Z1kPf");
  res->log = strdup("note: fine");
  res->compile_ms = 12.5;
  return 0;
}

/* a compiler process that leaves without a word */
static int exiting_compiler(const char *source, const char *source_name, const char *kernel_name,
                            const char *arch, const char *const *opts, int n_opts, mpt_rtc_result *res,
                            mpt_error *err) {
  (void)source, (void)source_name, (void)kernel_name, (void)arch, (void)opts, (void)n_opts, (void)res, (void)err;
  _exit(7);
}

/* a compiler whose report breaks off after its header: its code cannot be read (a page without access),
 * so writing it fails and the child exits with status 3 */
static int truncating_compiler(const char *source, const char *source_name, const char *kernel_name,
                               const char *arch, const char *const *opts, int n_opts, mpt_rtc_result *res,
                               mpt_error *err) {
  (void)source, (void)source_name, (void)kernel_name, (void)arch, (void)opts, (void)n_opts, (void)err;
  memset(res, 0, sizeof *res);
  void *page = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) _exit(9);
  res->ok = 1;
  res->code = page;
  res->code_size = 4096;
  return 0;
}

/* what the child reports comes back whole; a child that exits early or breaks off its report fails this
 * variant's compile (crashed = SIGABRT) with a log that says so */
static void test_isolation_report(void **state) {
  (void)state;
  mpt_rtc_result r;
  mpt_error err;
  mpt_error_clear(&err);
  assert_int_equal(mpt_rtc_compile_isolated(reporting_compiler, "", "x.cu", "k", "compute_90", NULL, 0, 30, NULL, &r, &err), 0);
  assert_true(r.ok);
  assert_true(r.is_ptx);
  assert_int_equal(r.crashed, 0);
  assert_int_equal(r.code_size, 5);
  assert_memory_equal(r.code, ((const char[]){0x7f, 0, 'E', 0, (char)0xff}), 5);
  assert_string_equal(r.lowered, "_Z1kPf");
  assert_string_equal(r.log, "note: fine");
  assert_true(r.compile_ms == 12.5);
  mpt_rtc_result_free(&r);
  assert_int_equal(mpt_rtc_compile_isolated(exiting_compiler, "", "x.cu", "k", "sm_90", NULL, 0, 30, NULL, &r, &err), 0);
  assert_false(r.ok);
  assert_int_equal(r.crashed, SIGABRT);
  assert_string_equal(r.log, "compiler process exited with status 7 before reporting (compiling for sm_90)");
  mpt_rtc_result_free(&r);
  assert_int_equal(mpt_rtc_compile_isolated(truncating_compiler, "", "x.cu", "k", "sm_90", NULL, 0, 30, NULL, &r, &err), 0);
  assert_false(r.ok);
  assert_int_equal(r.crashed, SIGABRT);
  assert_null(r.code);
  assert_non_null(strstr(r.log, "compiler process ended before its result was complete ("));
  assert_non_null(strstr(r.log, " bytes; exit status 3; compiling for sm_90)"));
  mpt_rtc_result_free(&r);
}

static int g_cancel_polls;
/* a watch that says stop on the third time it is asked (the compiler is running by then) */
static int cancel_on_third_poll(void *ctx, const char *doing, double done) {
  (void)ctx, (void)doing, (void)done;
  return ++g_cancel_polls >= 3;
}

/* the watch's stop kills a hanging compile at once instead of after its timeout (60 s here), and says so */
static void test_isolation_cancel(void **state) {
  (void)state;
  mpt_rtc_result r;
  mpt_error err;
  mpt_error_clear(&err);
  g_cancel_polls = 0;
  mpt_watch watch = {cancel_on_third_poll, NULL};
  int rc = mpt_rtc_compile_isolated(hanging_compiler, "", "x.cu", "k", "sm_90", NULL, 0, 60, &watch, &r, &err);
  assert_int_equal(rc, 0);
  assert_false(r.ok);
  assert_true(r.cancelled);
  assert_false(r.timed_out);
  assert_int_equal(g_cancel_polls, 3);
  assert_non_null(strstr(r.log, "cancelled while compiling for sm_90"));
  mpt_rtc_result_free(&r);
}

static void test_isolation(void **state) {
  (void)state;
  mpt_rtc_result r;
  mpt_error err;
  mpt_error_clear(&err);
  assert_int_equal(mpt_rtc_compile_isolated(crashing_compiler, "", "x.cu", "k", "gfx1100", NULL, 0, 30, NULL, &r, &err), 0);
  assert_false(r.ok);
  assert_int_equal(r.crashed, SIGSEGV);
  assert_non_null(strstr(r.log, "SIGSEGV"));
  assert_non_null(strstr(r.log, "gfx1100"));
  mpt_rtc_result_free(&r);
  assert_int_equal(mpt_rtc_compile_isolated(hanging_compiler, "", "x.cu", "k", "sm_90", NULL, 0, 0.5, NULL, &r, &err), 0);
  assert_false(r.ok);
  assert_true(r.timed_out);
  assert_non_null(strstr(r.log, "timed out"));
  mpt_rtc_result_free(&r);
  /* a compiler that fails on this source (no program, no code: MPT_ERR_INTERNAL) fails this variant's
   * compile; it ended the evaluator, and the run, before */
  assert_int_equal(mpt_rtc_compile_isolated(failing_compiler, "", "x.cu", "k", "sm_90", NULL, 0, 30, NULL, &r, &err), 0);
  assert_false(r.ok);
  assert_string_equal(r.log, "NVRTC produced no CUBIN for sm_90");
  mpt_rtc_result_free(&r);
  /* errors of the compile function itself (no compiler, an architecture it does not know) come back as errors */
  assert_int_equal(mpt_rtc_compile_isolated(mpt_hiprtc_compile, "", "x.cu", "k", "sm_90", NULL, 0, 30, NULL, &r, &err),
                   have_hiprtc() ? MPT_ERR_VALUE : MPT_ERR_DEVICE);
  assert_true(strlen(err.msg) > 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_isolation),      cmocka_unit_test(test_isolation_cancel),
      cmocka_unit_test(test_isolation_report),
      cmocka_unit_test(test_nvrtc_errors),
      cmocka_unit_test(test_hiprtc_errors),  cmocka_unit_test(test_nvrtc_examples),
      cmocka_unit_test(test_hiprtc_examples), cmocka_unit_test(test_nvrtc_defines),
      cmocka_unit_test(test_hiprtc_defines),  cmocka_unit_test(test_source_has_kernel),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
