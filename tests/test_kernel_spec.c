/* tests/test_kernel_spec.c: the T1 KernelSpecification reader and launch computation
 * (evaluators/kernel_spec.c, kernel_launch.c) and the argument buffers (evaluators/args.c), on the shared T1 files,
 * the CPU examples and purpose-made problems with bad input. */
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <sys/wait.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "evaluators/args.h"
#include "evaluators/kernel_spec.h"
#include "spaces/sys/rng.h"
#include "spaces/space.h"
#include "tests/slurp.h"

static char tmpdir[256];

static const char *data_dir(void) {
  const char *d = getenv("MPT_SHARED_DATA");
  return d ? d : "../shared/data";
}
static const char *src_dir(void) {
  const char *d = getenv("MPT_SOURCE_DIR");
  return d ? d : ".";
}

static void touch(const char *name, const char *text) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", tmpdir, name);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

/* a problem parsed as if it lived in tmpdir (so KernelFile resolves there) */
static mpt_problem *parse_in_tmp(const char *text, const char *name) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", tmpdir, name);
  mpt_problem *p = NULL;
  mpt_error err = {0};
  int rc = mpt_problem_parse(text, path, &p, &err);
  if (rc) fprintf(stderr, "%s\n", err.msg);
  assert_int_equal(rc, 0);
  return p;
}

static int has_define(const mpt_launch *l, const char *d) {
  for (int i = 0; i < l->n_defines; i++)
    if (strcmp(l->defines[i], d) == 0) return 1;
  return 0;
}

static int setup(void **state) {
  (void)state;
  snprintf(tmpdir, sizeof tmpdir, "/tmp/mpt_test_kspec_XXXXXX");
  assert_non_null(mkdtemp(tmpdir));
  return 0;
}

static int teardown(void **state) {
  (void)state;
  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf %s", tmpdir);
  return system(cmd) == 0 ? 0 : -1;
}

/* convolution_milo.json: CUDA, GlobalSizeType CUDA, ProblemSize + GridDiv, max(filter_width) sizes,
 * constant memory, Output */
static void test_convolution_milo(void **state) {
  (void)state;
  char path[512];
  snprintf(path, sizeof path, "%s/t1/convolution_milo.json", data_dir());
  char *text = test_slurp(path, NULL);
  touch("convolution_milo.cu", "/* kernel text */\n");
  mpt_problem *p = parse_in_tmp(text, "convolution_milo.json");
  mpt_kernel_spec *ks = NULL;
  mpt_error err = {0};
  int rc = mpt_kspec_load(p, &ks, &err);
  if (rc) fprintf(stderr, "%s\n", err.msg);
  assert_int_equal(rc, 0);
  assert_int_equal(ks->lang, MPT_LANG_CUDA);
  assert_string_equal(ks->kernel_name, "convolution_kernel");
  assert_string_equal(ks->source, "/* kernel text */\n");
  assert_int_equal(ks->n_options, 1);
  assert_string_equal(ks->options[0], "-std=c++11");
  assert_int_equal(ks->global_blocks, 1);
  assert_int_equal(ks->has_problem, 1);
  assert_int_equal(ks->n_problem, 2);
  assert_int_equal(ks->iterations, 7);
  assert_int_equal(ks->n_args, 3);
  assert_int_equal(ks->args[0].n_elems, 4096 * 4096);
  assert_int_equal(ks->args[0].output, 1);
  assert_int_equal(ks->args[0].access, MPT_ACCESS_WRITE_ONLY);
  assert_int_equal(ks->args[1].n_elems, (4096 + 14) * (4096 + 14));
  assert_int_equal(ks->args[1].output, 0);
  assert_int_equal(ks->args[1].fill.type, MPT_FILL_RANDOM);
  assert_int_equal(ks->args[2].n_elems, 225);
  assert_int_equal(ks->args[2].constant, 1);
  assert_int_equal(ks->args[2].bytes, 900);
  assert_int_equal(ks->n_outputs, 1);

  mpt_space *s = NULL;
  assert_int_equal(mpt_space_build(p, &s, &err), 0);
  int64_t def = mpt_space_default_id(s);
  assert_true(def >= 0);
  int idx[16];
  mpt_space_config(s, def, idx);
  mpt_launch l;
  rc = mpt_kspec_launch(ks, idx, &l, &err);
  if (rc) fprintf(stderr, "%s\n", err.msg);
  assert_int_equal(rc, 0);
  /* Default: block 16x16, tile 1x1: grid = ceil(4096 / (16*1)) */
  assert_int_equal(l.block[0], 16);
  assert_int_equal(l.block[1], 16);
  assert_int_equal(l.block[2], 1);
  assert_int_equal(l.grid[0], 256);
  assert_int_equal(l.grid[1], 256);
  assert_int_equal(l.grid[2], 1);
  assert_int_equal(l.problem[0], 4096);
  assert_int_equal(l.shared_bytes, 0);
  assert_true(has_define(&l, "block_size_x=16"));
  assert_true(has_define(&l, "block_size_y=16"));
  assert_true(has_define(&l, "block_size_z=1"));
  assert_true(has_define(&l, "grid_size_x=256"));
  assert_true(has_define(&l, "grid_size_y=256"));
  assert_true(has_define(&l, "grid_size_z=1"));
  assert_true(has_define(&l, "filter_width=15"));
  assert_true(has_define(&l, "use_padding=1"));
  assert_true(has_define(&l, "kernel_tuner=1"));
  assert_int_equal(l.n_defines, 10 + 1 + 3 + 1); /* parameters, block_size_z, grid_size_*, kernel_tuner */
  mpt_launch_free(&l);
  /* another configuration: block_size_x=48, tile_size_x=3 -> ceil(4096/144) = 29 */
  idx[0] = 2;
  idx[2] = 2;
  idx[1] = 0; /* block_size_y=1 */
  idx[5] = 0; /* use_padding=0 */
  assert_int_equal(mpt_kspec_launch(ks, idx, &l, &err), 0);
  assert_int_equal(l.grid[0], 29);
  assert_int_equal(l.block[0], 48);
  assert_int_equal(l.block[1], 1);
  assert_int_equal(l.grid[1], 4096);
  mpt_launch_free(&l);
  mpt_space_free(s);
  mpt_kspec_free(ks);
  mpt_problem_free(p);
  free(text);
}

/* hotspot_milo.json: GlobalSizeType OpenCL, scalars, ReadWrite output, BenchmarkConfig.iterations */
static void test_hotspot_milo(void **state) {
  (void)state;
  char path[512];
  snprintf(path, sizeof path, "%s/t1/hotspot_milo.json", data_dir());
  char *text = test_slurp(path, NULL);
  touch("hotspot_milo.cu", "");
  mpt_problem *p = parse_in_tmp(text, "hotspot_milo.json");
  mpt_kernel_spec *ks = NULL;
  mpt_error err = {0};
  assert_int_equal(mpt_kspec_load(p, &ks, &err), 0);
  assert_int_equal(ks->global_blocks, 0);
  assert_int_equal(ks->iterations, 10);
  assert_int_equal(ks->n_args, 7);
  assert_int_equal(ks->args[3].mem, MPT_MEM_SCALAR);
  assert_int_equal(ks->args[3].n_elems, 1);
  assert_true(fabs(ks->args[3].fill.value - 0.1) < 1e-12);
  assert_int_equal(ks->args[2].output, 1);
  assert_int_equal(ks->args[2].access, MPT_ACCESS_READ_WRITE);
  assert_int_equal(ks->args[0].output, 0);
  assert_int_equal(ks->n_outputs, 1);
  mpt_kspec_free(ks);
  mpt_problem_free(p);
  free(text);
}

/* the shared file's kernel source is not shipped: a clear message naming the field and the path */
static void test_missing_kernel_file(void **state) {
  (void)state;
  char path[512];
  snprintf(path, sizeof path, "%s/t1/convolution_milo.json", data_dir());
  mpt_problem *p = NULL;
  mpt_error err = {0};
  assert_int_equal(mpt_problem_load(path, &p, &err), 0);
  mpt_kernel_spec *ks = NULL;
  assert_int_equal(mpt_kspec_load(p, &ks, &err), MPT_ERR_IO);
  assert_null(ks);
  assert_non_null(strstr(err.msg, "KernelSpecification.KernelFile"));
  assert_non_null(strstr(err.msg, "convolution_milo.cu"));
  assert_non_null(strstr(err.msg, "No such file"));
  mpt_problem_free(p);
}

/* the CPU example: C, ProblemSize + GridDiv giving the number of tiles */
static void test_cpu_example(void **state) {
  (void)state;
  char path[512];
  snprintf(path, sizeof path, "%s/examples/cpu/matmul.json", src_dir());
  mpt_problem *p = NULL;
  mpt_error err = {0};
  assert_int_equal(mpt_problem_load(path, &p, &err), 0);
  mpt_kernel_spec *ks = NULL;
  int rc = mpt_kspec_load(p, &ks, &err);
  if (rc) fprintf(stderr, "%s\n", err.msg);
  assert_int_equal(rc, 0);
  assert_int_equal(ks->lang, MPT_LANG_C);
  assert_int_equal(ks->n_args, 4);
  assert_int_equal(ks->args[3].base, MPT_T_INT32);
  assert_int_equal(ks->args[3].mem, MPT_MEM_SCALAR);
  mpt_space *s = NULL;
  assert_int_equal(mpt_space_build(p, &s, &err), 0);
  assert_true(mpt_space_size(s) > 1000);
  int idx[8];
  mpt_space_config(s, mpt_space_default_id(s), idx);
  mpt_launch l;
  assert_int_equal(mpt_kspec_launch(ks, idx, &l, &err), 0);
  assert_int_equal(l.grid[0], 4);  /* 256 / tile_j 64 */
  assert_int_equal(l.grid[1], 32); /* 256 / tile_i 8 */
  assert_int_equal(l.block[0], 1);
  assert_true(has_define(&l, "tile_i=8"));
  assert_true(has_define(&l, "grid_size_y=32"));
  assert_true(has_define(&l, "block_size_x=1"));
  mpt_launch_free(&l);
  /* arguments: Random fill in [0, 1), deterministic */
  mpt_args *a = NULL, *b = NULL;
  assert_int_equal(mpt_args_create(ks, 0, &a, &err), 0);
  assert_int_equal(mpt_args_create(ks, 1, &b, &err), 0);
  const float *A = a->init[1];
  double sum = 0;
  for (int i = 0; i < 256 * 256; i++) {
    assert_true(A[i] >= 0.0f && A[i] < 1.0f);
    sum += A[i];
  }
  assert_true(fabs(sum / (256 * 256) - 0.5) < 0.01);
  assert_memory_equal(a->init[1], b->init[1], 256 * 256 * 4);
  assert_memory_not_equal(a->init[1], a->init[2], 256 * 256 * 4); /* different seeds */
  assert_int_equal(*(const int32_t *)a->init[3], 256);
  assert_int_equal(mpt_args_needs_reference_run(a), 1);
  mpt_args_free(a);
  mpt_args_free(b);
  mpt_space_free(s);
  mpt_kspec_free(ks);
  mpt_problem_free(p);
}

static const char *bad_template =
    "{\"ConfigurationSpace\": {\"TuningParameters\": ["
    "{\"Name\": \"block_size_x\", \"Type\": \"int\", \"Values\": \"[32, 64]\", \"Default\": 32}]},"
    "\"KernelSpecification\": {\"Language\": \"%s\", \"KernelName\": \"k\", \"KernelFile\": \"k.c\","
    "\"LocalSize\": {\"X\": \"block_size_x\"}, \"GlobalSize\": {\"X\": \"%s\"}%s,"
    "\"Arguments\": [{\"Name\": \"a\", \"Type\": \"%s\", \"MemoryType\": \"Vector\", \"Size\": %s%s}]%s}}";

static int load_variant(const char *lang, const char *global, const char *extra_ks, const char *type,
                        const char *size, const char *extra_arg, const char *refs, mpt_kernel_spec **ks,
                        mpt_problem **pp, mpt_error *err) {
  char text[4096];
  snprintf(text, sizeof text, bad_template, lang, global, extra_ks, type, size, extra_arg, refs);
  touch("k.c", "void k(float *a) { a[0] = 1; }\n");
  *pp = parse_in_tmp(text, "bad.json");
  return mpt_kspec_load(*pp, ks, err);
}

/* err's message has "bad.json:1:COL: " then rest, COL the (1-based) column of at in the one-line problem text */
static void expect_at(const mpt_problem *p, const mpt_error *err, const char *at, const char *rest) {
  char want[256];
  assert_non_null(at);
  snprintf(want, sizeof want, "bad.json:1:%d: %s", (int)(at - p->text) + 1, rest);
  if (!strstr(err->msg, want)) fprintf(stderr, "expected '%s' in %s\n", want, err->msg);
  assert_non_null(strstr(err->msg, want));
}

static void test_bad_input(void **state) {
  (void)state;
  mpt_kernel_spec *ks = NULL;
  mpt_problem *p = NULL;
  mpt_error err = {0};
  /* a run-time error in a Size expression */
  assert_int_equal(load_variant("C", "100", "", "float", "\"ProblemSize[3]\"", "", "", &ks, &p, &err), MPT_ERR_EVAL);
  assert_non_null(strstr(err.msg, "KernelSpecification.Arguments[0].Size"));
  assert_non_null(strstr(err.msg, "ProblemSize[3]"));
  mpt_problem_free(p);
  /* a parameter in a Size expression is its list of values: list * 2 is a list, not a size */
  assert_int_equal(load_variant("C", "100", "", "float", "\"block_size_x * 2\"", "", "", &ks, &p, &err), MPT_ERR_VALUE);
  assert_non_null(strstr(err.msg, "Arguments[0].Size"));
  assert_non_null(strstr(err.msg, "list"));
  mpt_problem_free(p);
  /* max() over the values works */
  assert_int_equal(load_variant("C", "100", "", "float", "\"max(block_size_x) * 2\"", "", "", &ks, &p, &err), 0);
  assert_int_equal(ks->args[0].n_elems, 128);
  mpt_kspec_free(ks);
  mpt_problem_free(p);
  /* syntax error: caret under the column */
  assert_int_equal(load_variant("C", "100", "", "float", "\"(1 + \"", "", "", &ks, &p, &err), MPT_ERR_PARSE);
  assert_non_null(strstr(err.msg, "Arguments[0].Size"));
  assert_non_null(strstr(err.msg, "^"));
  mpt_problem_free(p);
  /* unknown name in a launch expression: the file's line and column are those of the name inside the string */
  assert_int_equal(load_variant("C", "nope * 2", "", "float", "10", "", "", &ks, &p, &err), MPT_ERR_NAME);
  assert_non_null(strstr(err.msg, "GlobalSize.X"));
  expect_at(p, &err, strstr(p->text, "nope * 2"), "KernelSpecification.GlobalSize.X: unknown name 'nope'");
  mpt_problem_free(p);
  assert_int_equal(load_variant("C", "100", "", "float", "\"2 * (1 + bogus)\"", "", "", &ks, &p, &err), MPT_ERR_NAME);
  expect_at(p, &err, strstr(p->text, "bogus"), "KernelSpecification.Arguments[0].Size: unknown name 'bogus'");
  mpt_problem_free(p);
  /* unknown language, unknown type, too many iterations, unsupported fill, bad reference target */
  assert_int_equal(load_variant("Vulkan", "100", "", "float", "10", "", "", &ks, &p, &err), MPT_ERR_VALUE);
  assert_non_null(strstr(err.msg, "Language"));
  mpt_problem_free(p);
  assert_int_equal(load_variant("C", "100", "", "float3", "10", "", "", &ks, &p, &err), MPT_ERR_VALUE);
  assert_non_null(strstr(err.msg, "unknown type 'float3'"));
  expect_at(p, &err, strstr(p->text, "\"float3\""), "KernelSpecification.Arguments[0].Type: "); /* its opening quote */
  mpt_problem_free(p);
  assert_int_equal(load_variant("C", "100", ", \"Iterations\": 50", "float", "10", "", "", &ks, &p, &err), MPT_ERR_VALUE);
  assert_non_null(strstr(err.msg, "Iterations"));
  mpt_problem_free(p);
  assert_int_equal(load_variant("C", "100", "", "float", "10", ", \"FillType\": \"Script\"", "", &ks, &p, &err),
                   MPT_ERR_VALUE);
  assert_non_null(strstr(err.msg, "Script is not supported"));
  mpt_problem_free(p);
  assert_int_equal(load_variant("C", "100", "", "float", "10", "",
                                ", \"ReferenceArguments\": [{\"Name\": \"r\", \"TargetName\": \"zz\", \"FillType\": \"Constant\"}]",
                                &ks, &p, &err),
                   MPT_ERR_NAME);
  assert_non_null(strstr(err.msg, "ReferenceArguments[0].TargetName"));
  mpt_problem_free(p);
  /* a grid that is not positive for one configuration: an error at launch, naming the configuration */
  assert_int_equal(load_variant("C", "64 - block_size_x", "", "float", "10", "", "", &ks, &p, &err), 0);
  int idx[1] = {1};
  mpt_launch l;
  assert_int_equal(mpt_kspec_launch(ks, idx, &l, &err), MPT_ERR_VALUE);
  assert_non_null(strstr(err.msg, "block_size_x=64"));
  idx[0] = 0; /* GlobalSize 32 threads in blocks of 32 (OpenCL type: threads) */
  assert_int_equal(mpt_kspec_launch(ks, idx, &l, &err), 0);
  assert_int_equal(l.grid[0], 1);
  assert_int_equal(l.block[0], 32);
  mpt_launch_free(&l);
  mpt_kspec_free(ks);
  mpt_problem_free(p);
  /* GlobalSizeType CUDA: GlobalSize counts blocks; OpenCL: threads, rounded up to whole blocks */
  assert_int_equal(load_variant("C", "100", ", \"GlobalSizeType\": \"CUDA\", \"SharedMemory\": \"block_size_x * 4\"",
                                "float", "10", "", "", &ks, &p, &err), 0);
  idx[0] = 1;
  assert_int_equal(mpt_kspec_launch(ks, idx, &l, &err), 0);
  assert_int_equal(l.grid[0], 100);
  assert_int_equal(l.block[0], 64);
  assert_int_equal(l.shared_bytes, 256);
  assert_true(has_define(&l, "grid_size_x=100"));
  mpt_launch_free(&l);
  mpt_kspec_free(ks);
  mpt_problem_free(p);
  assert_int_equal(load_variant("C", "100", "", "float", "10", "", "", &ks, &p, &err), 0);
  assert_int_equal(mpt_kspec_launch(ks, idx, &l, &err), 0);
  assert_int_equal(l.grid[0], 2); /* ceil(100 / 64) */
  mpt_launch_free(&l);
  mpt_kspec_free(ks);
  mpt_problem_free(p);
}

/* a misspelt key is an error naming the file, line, column, field and the key meant; other keys that
 * mptune does not read (other tools' extensions) are accepted; Output must be a flag */
static void expect_kspec_error(const char *extra_ks, const char *extra_arg, const char *refs, int code,
                               const char *const *needles) {
  mpt_kernel_spec *ks = NULL;
  mpt_problem *p = NULL;
  mpt_error err = {0};
  int rc = load_variant("C", "100", extra_ks, "float", "10", extra_arg, refs, &ks, &p, &err);
  if (rc != code) fprintf(stderr, "%s%s: rc %d, expected %d: %s\n", extra_ks, extra_arg, rc, code, err.msg);
  assert_int_equal(rc, code);
  for (int i = 0; rc && needles[i]; i++) {
    if (!strstr(err.msg, needles[i])) fprintf(stderr, "message lacks '%s':\n%s\n", needles[i], err.msg);
    assert_non_null(strstr(err.msg, needles[i]));
  }
  mpt_kspec_free(ks);
  mpt_problem_free(p);
}

static void test_misspelt_keys(void **state) {
  (void)state;
  /* the template is one line: the column is where the template puts extra_ks, after `{"X": "100"}, ` */
  {
    mpt_kernel_spec *ks = NULL;
    mpt_problem *p = NULL;
    mpt_error err = {0};
    assert_int_equal(load_variant("C", "100", ", \"Iteratons\": 3", "float", "10", "", "", &ks, &p, &err),
                     MPT_ERR_NAME);
    expect_at(p, &err, strstr(p->text, "\"Iteratons\""),
              "KernelSpecification.Iteratons: unknown key; did you mean 'Iterations'?");
    mpt_problem_free(p);
  }
  {
    /* the same key earlier in an extension's object: the position is that of the key in KernelSpecification */
    mpt_kernel_spec *ks = NULL;
    mpt_problem *p = NULL;
    mpt_error err = {0};
    assert_int_equal(load_variant("C", "100", ", \"Misc\": {\"Iteratons\": 1}, \"Iteratons\": 3", "float", "10", "", "",
                                  &ks, &p, &err),
                     MPT_ERR_NAME);
    const char *first = strstr(p->text, "\"Iteratons\"");
    expect_at(p, &err, strstr(first + 1, "\"Iteratons\""), "KernelSpecification.Iteratons: unknown key");
    mpt_problem_free(p);
  }
  expect_kspec_error(", \"GridDivx\": [\"block_size_x\"]", "", "", MPT_ERR_NAME,
                     (const char *[]){"KernelSpecification.GridDivx", "'GridDivX'", NULL});
  expect_kspec_error(", \"Tolerance\": {\"Atol\": 1e-3, \"Rtl\": 0}", "", "", MPT_ERR_NAME,
                     (const char *[]){"KernelSpecification.Tolerance.Rtl", "'Rtol'", NULL});
  expect_kspec_error("", ", \"Fillvalue\": 2", "", MPT_ERR_NAME,
                     (const char *[]){"KernelSpecification.Arguments[0].Fillvalue", "'FillValue'", NULL});
  expect_kspec_error("", ", \"AcessType\": \"ReadOnly\"", "", MPT_ERR_NAME,
                     (const char *[]){"Arguments[0].AcessType", "'AccessType'", NULL});
  expect_kspec_error("", "",
                     ", \"ReferenceArguments\": [{\"Name\": \"r\", \"TargetName\": \"a\", \"FillType\": "
                     "\"Constant\", \"ValidationMetod\": \"AbsoluteDifference\"}]",
                     MPT_ERR_NAME, (const char *[]){"ReferenceArguments[0].ValidationMetod", "'ValidationMethod'", NULL});
  expect_kspec_error(", \"SharedMemory\": 0, \"ReferenceArgument\": []", "", "", MPT_ERR_NAME,
                     (const char *[]){"'ReferenceArguments'", NULL});
  /* case matters to the reader, so a key that differs only in case is caught too, even a short one */
  expect_kspec_error(", \"sharedMemory\": 64", "", "", MPT_ERR_NAME,
                     (const char *[]){"KernelSpecification.sharedMemory", "'SharedMemory'", NULL});
  {
    mpt_kernel_spec *ks = NULL;
    mpt_problem *p = NULL;
    mpt_error err = {0};
    /* GlobalSize {"X": "100", "y": "2"} */
    assert_int_equal(load_variant("C", "100\", \"y\": \"2", "", "float", "10", "", "", &ks, &p, &err), MPT_ERR_NAME);
    assert_non_null(strstr(err.msg, "KernelSpecification.GlobalSize.y: unknown key; did you mean 'Y'?"));
    mpt_problem_free(p);
  }
  /* accepted: other tools' keys far from every known one, and near ones whose key is given too */
  expect_kspec_error(", \"Misc\": {\"jitify\": true}, \"Stream\": 1, \"BenchmarkName\": \"x\"", "", "", 0,
                     (const char *[]){NULL});
  expect_kspec_error("", ", \"Comment\": \"buffer\", \"Names\": \"b\"", "", 0, (const char *[]){NULL});
  /* Output: a flag, not a string */
  expect_kspec_error("", ", \"Output\": \"yes\"", "", MPT_ERR_VALUE,
                     (const char *[]){"Arguments[0].Output: expected true, false, 1 or 0", NULL});
  /* a number other than 0 and 1 is not taken for true */
  expect_kspec_error("", ", \"Output\": 2", "", MPT_ERR_VALUE,
                     (const char *[]){"Arguments[0].Output: expected true, false, 1 or 0", NULL});
  expect_kspec_error("", ", \"Output\": 0.5", "", MPT_ERR_VALUE,
                     (const char *[]){"Arguments[0].Output: expected true, false, 1 or 0", NULL});
}

/* 600 damaged copies of the KernelSpecification of the four examples (CPU and GPU), fixed by a seed, one
 * or two edits each: characters changed or cut out, or a value (now and then a key) replaced by, or a
 * token inserted from, JSON tokens, types, fills and expressions. Each loads, and then gives a launch for
 * five configurations and (when its buffers are small) its arguments, or fails with a message naming the
 * file; never a crash (ASan/UBSan build). Fuzzing `mptune tune` this way found that a misspelt
 * "Arguments" ran the kernel without arguments (now an error, test_misspelt_keys). */
static void test_damaged_specs(void **state) {
  (void)state;
  static const char *const tokens[] = {"{", "}", "[", "]", ",", ":", "\"", "0", "-1", "1e999", "null", "true", "[]",
                                       "{}", "\"\"", "2.5", "\"int64\"", "\"double4\"", "\"half\"", "\"custom\"",
                                       "\"Scalar\"", "\"Local\"", "\"Symbol\"", "\"Random\"", "\"Generator\"",
                                       "\"BinaryRaw\"", "\"ProblemSize[2]\"", "\"block_size_x // 0\"",
                                       "\"2**40\"", "\"max(block_size_x)\"", "\"len(tile_i)\"", "-2147483649",
                                       "\"CUDA\"", "\"ReadWrite\"", "\"x\"", "4294967296"};
  char files[4][512];
  snprintf(files[0], sizeof files[0], "%s/examples/cpu/matmul.json", src_dir());
  snprintf(files[1], sizeof files[1], "%s/examples/cpu/convolution.json", src_dir());
  snprintf(files[2], sizeof files[2], "%s/examples/gpu/gemm.json", src_dir());
  snprintf(files[3], sizeof files[3], "%s/examples/gpu/convolution.json", src_dir());
  char *base[4];
  size_t blen[4], cap;
  char *b = test_slurp_many((const char *const[]){files[0], files[1], files[2], files[3]}, 4, base, blen, 4096, &cap);
  mpt_rng rng;
  mpt_rng_seed(&rng, 2211);
  int loaded = 0, refused = 0, launched = 0, args_made = 0;
  for (int i = 0; i < 600; i++) {
    int f = i % 4;
    size_t n = blen[f];
    memcpy(b, base[f], n + 1);
    const char *ksp = strstr(b, "\"KernelSpecification\"");
    assert_non_null(ksp);
    size_t lo = (size_t)(ksp - b);
    for (int m = 1 + (int)mpt_rng_below(&rng, 2); m > 0; m--) {
      size_t pos = lo + (size_t)mpt_rng_below(&rng, n - lo), k;
      switch ((int)mpt_rng_below(&rng, 8)) {
      case 0: b[pos] = (char)(32 + mpt_rng_below(&rng, 95)); break;
      case 1: /* cut out up to 8 characters */
        k = 1 + (size_t)mpt_rng_below(&rng, 8);
        if (k > n - pos) k = n - pos;
        memmove(b + pos, b + pos + k, n - pos - k + 1);
        n -= k;
        break;
      default: { /* a token in place of one string or number of the spec (key or value), or inserted at pos */
        const char *t = tokens[mpt_rng_below(&rng, sizeof tokens / sizeof *tokens)];
        size_t tl = strlen(t), end = pos;
        if (mpt_rng_below(&rng, 8)) {
          size_t starts[2048], ends[2048], nt = 0;
          for (size_t q = lo; q < n && nt < 2048;) {
            if (b[q] == '"') {
              size_t e = q + 1;
              while (e < n && b[e] != '"') e += b[e] == '\\' ? 2 : 1;
              size_t after = e + 1;
              while (after < n && strchr(" \t\r\n", b[after])) after++;
              if (after >= n || b[after] != ':' || mpt_rng_below(&rng, 8) == 0) /* values; keys now and then */
                starts[nt] = q, ends[nt++] = e < n ? e + 1 : n;
              q = e + 1;
            } else if (b[q] == '-' || (b[q] >= '0' && b[q] <= '9')) {
              size_t e = q + 1;
              while (e < n && strchr("0123456789.eE+-", b[e])) e++;
              starts[nt] = q, ends[nt++] = e, q = e;
            } else {
              q++;
            }
          }
          if (nt == 0) break;
          size_t w = (size_t)mpt_rng_below(&rng, nt);
          pos = starts[w], end = ends[w];
        }
        if (n - (end - pos) + tl > cap) break;
        memmove(b + pos + tl, b + end, n - end + 1);
        memcpy(b + pos, t, tl);
        n = n - (end - pos) + tl;
      }
      }
    }
    b[n] = 0;
    mpt_problem *p = NULL;
    mpt_error err = {0};
    if (mpt_problem_parse(b, files[f], &p, &err) != 0) { /* damage that broke the JSON itself */
      assert_non_null(strstr(err.msg, files[f]));
      refused++;
      continue;
    }
    mpt_kernel_spec *ks = NULL;
    int rc = mpt_kspec_load(p, &ks, &err);
    if (rc) {
      assert_true(rc < 0);
      assert_null(ks);
      if (!strstr(err.msg, files[f])) fprintf(stderr, "damaged spec %d: %s\n", i, err.msg);
      assert_non_null(strstr(err.msg, files[f]));
      refused++;
      mpt_problem_free(p);
      continue;
    }
    loaded++;
    mpt_space *s = NULL;
    if (mpt_space_build(p, &s, &err) == 0 && mpt_space_size(s) > 0) {
      int idx[64];
      assert_true(p->n_params <= 64);
      for (int c = 0; c < 5; c++) {
        int64_t id = c == 0 ? mpt_space_default_id(s) : (int64_t)mpt_rng_below(&rng, (uint64_t)mpt_space_size(s));
        if (id < 0) id = 0;
        mpt_space_config(s, id, idx);
        mpt_launch l;
        mpt_error lerr = {0};
        if (mpt_kspec_launch(ks, idx, &l, &lerr) == 0) {
          for (int d = 0; d < 3; d++) assert_true(l.grid[d] >= 1 && l.block[d] >= 1);
          mpt_launch_free(&l);
          launched++;
        } else {
          assert_true(lerr.msg[0] != 0);
        }
      }
    }
    mpt_space_free(s);
    size_t bytes = 0;
    for (int a = 0; a < ks->n_args; a++) bytes += ks->args[a].bytes;
    if (bytes <= ((size_t)64 << 20)) {
      mpt_args *a = NULL;
      mpt_error aerr = {0};
      if (mpt_args_create(ks, 0, &a, &aerr) == 0) {
        args_made++;
        mpt_args_free(a);
      } else {
        assert_true(aerr.msg[0] != 0);
      }
    }
    mpt_kspec_free(ks);
    mpt_problem_free(p);
  }
  for (int f = 0; f < 4; f++) free(base[f]);
  free(b);
  fprintf(stderr, "damaged specs: %d loaded (%d launches, %d argument sets), %d refused\n", loaded, launched,
          args_made, refused);
  /* both outcomes occur */
  assert_true(loaded > 40 && refused > 100 && launched > 150 && args_made > 25);
}

/* references from ReferenceArguments and the comparison rules */
static void test_reference_compare(void **state) {
  (void)state;
  mpt_kernel_spec *ks = NULL;
  mpt_problem *p = NULL;
  mpt_error err = {0};
  int rc = load_variant("C", "100", "", "float", "8", ", \"FillType\": \"Generator\", \"DataSource\": \"i * 0.5\"",
                        ", \"ReferenceArguments\": [{\"Name\": \"r\", \"TargetName\": \"a\", \"FillType\": \"Constant\","
                        " \"FillValue\": 2.0, \"ValidationMethod\": \"SideBySideComparison\", \"ValidationThreshold\": 0.1}]",
                        &ks, &p, &err);
  if (rc) fprintf(stderr, "%s\n", err.msg);
  assert_int_equal(rc, 0);
  assert_int_equal(ks->args[0].has_reference, 1);
  assert_int_equal(ks->args[0].output, 1);
  assert_int_equal(ks->args[0].check, MPT_CHECK_SIDE_BY_SIDE);
  mpt_args *a = NULL;
  assert_int_equal(mpt_args_create(ks, 1, &a, &err), 0);
  assert_int_equal(mpt_args_needs_reference_run(a), 0);
  const float *init = a->init[0];
  for (int i = 0; i < 8; i++) assert_true(init[i] == 0.5f * (float)i);
  float out[8] = {2, 2, 2.05f, 2, 2, 2, 2, 1.95f};
  char msg[256];
  assert_int_equal(mpt_args_compare(a, 0, out, msg, sizeof msg), 1);
  out[3] = 2.2f;
  assert_int_equal(mpt_args_compare(a, 0, out, msg, sizeof msg), 0);
  assert_non_null(strstr(msg, "a: 1 of 8 values differ; first at [3]"));
  mpt_args_free(a);
  mpt_kspec_free(ks);
  mpt_problem_free(p);
  /* default rule: numpy.allclose with atol 1e-6, rtol 1e-5 */
  rc = load_variant("C", "100", "", "double", "4", ", \"Output\": 1", "", &ks, &p, &err);
  assert_int_equal(rc, 0);
  assert_int_equal(mpt_args_create(ks, 0, &a, &err), 0);
  assert_int_equal(mpt_args_needs_reference_run(a), 1);
  double ref[4] = {1000, 0, 1, -5};
  mpt_args_set_reference(a, 0, ref);
  assert_int_equal(mpt_args_needs_reference_run(a), 0);
  double o2[4] = {1000.009, 9e-7, 1 + 1e-6, -5};
  assert_int_equal(mpt_args_compare(a, 0, o2, msg, sizeof msg), 1);
  o2[0] = 1000.02; /* 0.02 > 1e-6 + 1e-5 * 1000 */
  assert_int_equal(mpt_args_compare(a, 0, o2, msg, sizeof msg), 0);
  o2[0] = 1000;
  o2[2] = NAN;
  assert_int_equal(mpt_args_compare(a, 0, o2, msg, sizeof msg), 0);
  /* equal infinities match, as in numpy.allclose (inf - inf is NaN: every variant was wrong_result) */
  mpt_args_free(a);
  assert_int_equal(mpt_args_create(ks, 0, &a, &err), 0); /* a reference is set once */
  double refinf[4] = {INFINITY, -INFINITY, 1, 2}, oinf[4] = {INFINITY, -INFINITY, 1, 2};
  mpt_args_set_reference(a, 0, refinf);
  assert_int_equal(mpt_args_compare(a, 0, oinf, msg, sizeof msg), 1);
  oinf[1] = INFINITY;
  assert_int_equal(mpt_args_compare(a, 0, oinf, msg, sizeof msg), 0);
  mpt_args_free(a);
  mpt_kspec_free(ks);
  mpt_problem_free(p);
  /* integers compare exactly */
  rc = load_variant("C", "100", "", "int32", "4", ", \"Output\": true, \"FillType\": \"Random\", \"FillValue\": 10", "",
                    &ks, &p, &err);
  assert_int_equal(rc, 0);
  assert_int_equal(mpt_args_create(ks, 0, &a, &err), 0);
  const int32_t *iv = a->init[0];
  for (int i = 0; i < 4; i++) assert_true(iv[i] >= 0 && iv[i] < 10);
  int32_t ir[4] = {1, 2, 3, 4}, io[4] = {1, 2, 3, 5};
  mpt_args_set_reference(a, 0, ir);
  assert_int_equal(mpt_args_compare(a, 0, io, msg, sizeof msg), 0);
  assert_non_null(strstr(msg, "exact"));
  mpt_args_free(a);
  mpt_kspec_free(ks);
  mpt_problem_free(p);
  /* 64-bit integers exactly: 2**53 and 2**53 + 1 are one double */
  rc = load_variant("C", "100", "", "int64", "2", ", \"Output\": true", "", &ks, &p, &err);
  assert_int_equal(rc, 0);
  assert_int_equal(mpt_args_create(ks, 0, &a, &err), 0);
  int64_t lr[2] = {(int64_t)1 << 53, 7}, lo[2] = {((int64_t)1 << 53) + 1, 7};
  mpt_args_set_reference(a, 0, lr);
  assert_int_equal(mpt_args_compare(a, 0, lo, msg, sizeof msg), 0);
  lo[0] = lr[0];
  assert_int_equal(mpt_args_compare(a, 0, lo, msg, sizeof msg), 1);
  mpt_args_free(a);
  mpt_kspec_free(ks);
  mpt_problem_free(p);
}

/* BinaryRaw inputs and references, vector types filled lane by lane */
static void test_binary_raw(void **state) {
  (void)state;
  char path[512];
  float data[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  snprintf(path, sizeof path, "%s/in.bin", tmpdir);
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  assert_int_equal(fwrite(data, sizeof data, 1, f), 1);
  fclose(f);
  mpt_kernel_spec *ks = NULL;
  mpt_problem *p = NULL;
  mpt_error err = {0};
  int rc = load_variant("C", "100", "", "float4", "2", ", \"FillType\": \"BinaryRaw\", \"DataSource\": \"in.bin\"",
                        ", \"ReferenceArguments\": [{\"Name\": \"r\", \"TargetName\": \"a\", \"FillType\": \"BinaryRaw\","
                        " \"DataSource\": \"in.bin\"}]",
                        &ks, &p, &err);
  if (rc) fprintf(stderr, "%s\n", err.msg);
  assert_int_equal(rc, 0);
  assert_int_equal(ks->args[0].lanes, 4);
  assert_int_equal(ks->args[0].elem_bytes, 16);
  assert_int_equal(ks->args[0].bytes, 32);
  mpt_args *a = NULL;
  assert_int_equal(mpt_args_create(ks, 0, &a, &err), 0);
  assert_memory_equal(a->init[0], data, sizeof data);
  assert_memory_equal(a->ref[0], data, sizeof data);
  char msg[256];
  assert_int_equal(mpt_args_compare(a, 0, data, msg, sizeof msg), 1);
  mpt_args_free(a);
  mpt_kspec_free(ks);
  mpt_problem_free(p);
  /* a file shorter than the argument */
  rc = load_variant("C", "100", "", "float4", "3", ", \"FillType\": \"BinaryRaw\", \"DataSource\": \"in.bin\"", "",
                    &ks, &p, &err);
  assert_int_equal(rc, 0);
  assert_int_equal(mpt_args_create(ks, 0, &a, &err), MPT_ERR_IO);
  assert_non_null(strstr(err.msg, "holds 32 bytes, the argument needs 48"));
  mpt_kspec_free(ks);
  mpt_problem_free(p);
  /* a file longer than the argument (a file of doubles for floats): refused too, it was taken */
  rc = load_variant("C", "100", "", "float4", "1", ", \"FillType\": \"BinaryRaw\", \"DataSource\": \"in.bin\"", "",
                    &ks, &p, &err);
  assert_int_equal(rc, 0);
  assert_int_equal(mpt_args_create(ks, 0, &a, &err), MPT_ERR_IO);
  assert_non_null(strstr(err.msg, "holds more than 16 bytes, the argument needs 16"));
  mpt_kspec_free(ks);
  mpt_problem_free(p);
  /* a missing file: at load, naming the field */
  rc = load_variant("C", "100", "", "float", "3", ", \"FillType\": \"BinaryRaw\", \"DataSource\": \"nothere.bin\"", "",
                    &ks, &p, &err);
  assert_int_equal(rc, MPT_ERR_IO);
  assert_non_null(strstr(err.msg, "Arguments[0].DataSource"));
  mpt_problem_free(p);
}

/* the cpu evaluator's keys: Language "C++" (any case), Compiler (one program), ReturnsTime (a flag); their
 * misspellings and bad values refused at their place */
static void test_cpu_keys(void **state) {
  (void)state;
  mpt_kernel_spec *ks = NULL;
  mpt_problem *p = NULL;
  mpt_error err = {0};
  int rc = load_variant("c++", "100", ", \"Compiler\": \"clang++\", \"ReturnsTime\": true", "float", "10", "", "", &ks,
                        &p, &err);
  if (rc) fprintf(stderr, "%s\n", err.msg);
  assert_int_equal(rc, 0);
  assert_int_equal(ks->lang, MPT_LANG_CXX);
  assert_string_equal(ks->compiler, "clang++");
  assert_int_equal(ks->returns_time, 1);
  mpt_kspec_free(ks);
  mpt_problem_free(p);
  assert_int_equal(load_variant("C", "100", ", \"ReturnsTime\": 0", "float", "10", "", "", &ks, &p, &err), 0);
  assert_int_equal(ks->returns_time, 0);
  assert_null(ks->compiler);
  mpt_kspec_free(ks);
  mpt_problem_free(p);
  assert_int_equal(load_variant("C", "100", "", "float", "10", "", "", &ks, &p, &err), 0);
  assert_int_equal(ks->returns_time, -1); /* not given */
  mpt_kspec_free(ks);
  mpt_problem_free(p);
  expect_kspec_error(", \"Compilr\": \"clang\"", "", "", MPT_ERR_NAME,
                     (const char *[]){"KernelSpecification.Compilr: unknown key; did you mean 'Compiler'?", NULL});
  expect_kspec_error(", \"ReturnTime\": true", "", "", MPT_ERR_NAME,
                     (const char *[]){"KernelSpecification.ReturnTime: unknown key; did you mean 'ReturnsTime'?", NULL});
  assert_int_equal(load_variant("C", "100", ", \"Compiler\": \"gcc -O2\"", "float", "10", "", "", &ks, &p, &err),
                   MPT_ERR_VALUE);
  expect_at(p, &err, strstr(p->text, "\"gcc -O2\""), "KernelSpecification.Compiler: 'gcc -O2' is not one program");
  assert_non_null(strstr(err.msg, "CompilerOptions"));
  mpt_problem_free(p);
  expect_kspec_error(", \"Compiler\": \"\"", "", "", MPT_ERR_VALUE,
                     (const char *[]){"KernelSpecification.Compiler: expected a compiler", NULL});
  expect_kspec_error(", \"ReturnsTime\": \"yes\"", "", "", MPT_ERR_VALUE,
                     (const char *[]){"KernelSpecification.ReturnsTime: expected true, false, 1 or 0", NULL});
  expect_kspec_error(", \"ReturnsTime\": 2", "", "", MPT_ERR_VALUE,
                     (const char *[]){"KernelSpecification.ReturnsTime: expected true, false, 1 or 0", NULL});
  assert_int_equal(load_variant("Fortran", "100", "", "float", "10", "", "", &ks, &p, &err), MPT_ERR_VALUE);
  assert_non_null(strstr(err.msg, "(C, C++, CUDA, HIP or OpenCL)"));
  mpt_problem_free(p);
}

/* a child that writes byte `at` of buf (an offset from its start, may be negative): 1 when that killed it with
 * SIGSEGV */
static int write_faults(char *buf, long at) {
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    signal(SIGSEGV, SIG_DFL);
    ((volatile char *)buf)[at] = 1;
    _exit(0);
  }
  int st = 0;
  assert_int_equal(waitpid(pid, &st, 0), pid);
  return WIFSIGNALED(st) && WTERMSIG(st) == SIGSEGV;
}

/* Argument buffers are 64-byte aligned (vector types up to 16 floats: malloc's 16 bytes made every access of 8
 * and 16 lanes fault): the initial contents and references of every argument; the working copies a kernel runs
 * on also end, rounded up to 64 bytes, at a guard page, and start a page or less after one; mpt_args_locate names
 * the buffer an address lies in or next to */
static void test_aligned_buffers(void **state) {
  (void)state;
  mpt_kernel_spec *ks = NULL;
  mpt_problem *p = NULL;
  mpt_error err = {0};
  /* 1001 floats (not a multiple of 64 bytes), then a Local buffer and a scalar */
  int rc = load_variant("C", "100", "", "float", "1001", ", \"FillType\": \"Random\"",
                        ", \"ReferenceArguments\": [{\"Name\": \"r\", \"TargetName\": \"a\", \"FillType\": "
                        "\"Constant\"}]", &ks, &p, &err);
  if (rc) fprintf(stderr, "%s\n", err.msg);
  assert_int_equal(rc, 0);
  for (int shared = 0; shared < 2; shared++) {
    mpt_args *a = NULL;
    assert_int_equal(mpt_args_create(ks, shared, &a, &err), 0);
    assert_int_equal((uintptr_t)a->init[0] % 64, 0);
    assert_int_equal((uintptr_t)a->ref[0] % 64, 0);
    mpt_args_free(a);
  }
  for (size_t bytes = 1; bytes < 20000; bytes = bytes * 3 + 7) {
    void *q = mpt_args_aligned_alloc(bytes);
    assert_non_null(q);
    assert_int_equal((uintptr_t)q % 64, 0);
    free(q);
  }
  void *bufs[1];
  size_t bytes = ks->args[0].bytes; /* 4004 */
  char *b = bufs[0] = mpt_args_buffer_alloc(bytes);
  assert_non_null(b);
  assert_int_equal((uintptr_t)b % 64, 0);
  memset(b, 7, bytes);
  assert_false(write_faults(b, 0));
  assert_false(write_faults(b, (long)bytes + 27)); /* within the rounding to 64 bytes: 4032 */
  assert_true(write_faults(b, (long)bytes + 28));  /* the guard page after it */
  assert_true(write_faults(b, -(long)sysconf(_SC_PAGESIZE) + 1)); /* the one before its first page */
  char where[300];
  mpt_args_locate(ks, bufs, (uintptr_t)b + bytes + 28, where, sizeof where);
  char want[300];
  snprintf(want, sizeof want, "28 bytes past the end of argument 'a' (4004 bytes at 0x%llx)",
           (unsigned long long)(uintptr_t)b);
  assert_string_equal(where, want);
  mpt_args_locate(ks, bufs, (uintptr_t)b - 256, where, sizeof where);
  assert_non_null(strstr(where, "256 bytes before the start of argument 'a'"));
  mpt_args_locate(ks, bufs, (uintptr_t)b + 100, where, sizeof where);
  assert_non_null(strstr(where, "inside argument 'a', at byte 100 of 4004"));
  mpt_args_locate(ks, bufs, 16, where, sizeof where);
  assert_string_equal(where, "in no argument buffer");
  mpt_args_buffer_free(b, bytes);
  mpt_kspec_free(ks);
  mpt_problem_free(p);
}

static void test_half(void **state) {
  (void)state;
  float vals[] = {0.0f, 1.0f, -2.5f, 65504.0f, 6.1035156e-05f, 5.9604645e-08f, 0.333251953125f};
  for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++)
    assert_true(mpt_half_to_float(mpt_half_from_float(vals[i])) == vals[i]);
  assert_int_equal(mpt_half_from_float(1.0f), 0x3c00);
  assert_int_equal(mpt_half_from_float(1e6f), 0x7c00); /* overflow to inf */
  assert_true(isnan(mpt_half_to_float(mpt_half_from_float(NAN))));
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_convolution_milo), cmocka_unit_test(test_hotspot_milo),
    cmocka_unit_test(test_missing_kernel_file), cmocka_unit_test(test_cpu_example),
    cmocka_unit_test(test_bad_input), cmocka_unit_test(test_misspelt_keys), cmocka_unit_test(test_damaged_specs),
    cmocka_unit_test(test_reference_compare),
    cmocka_unit_test(test_binary_raw),
    cmocka_unit_test(test_half),
    cmocka_unit_test(test_cpu_keys),
    cmocka_unit_test(test_aligned_buffers),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
