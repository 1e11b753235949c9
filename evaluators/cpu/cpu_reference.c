/* evaluators/cpu/cpu_reference.c: what the cpu evaluator checks at open with the reference configuration (the
 * problem's Default, or the first valid one): the kernel's return type (Kernel Tuner's ReturnsTime convention), and
 * the reference compiled and run, so that a missing kernel or a broken default is reported before any evaluation
 * and its output and time are recorded. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "evaluators/cpu/cpu_internal.h"

/* "default" when the problem has a Default configuration (the reference), else "first" */
static const char *reference_kind(const mpt_evaluator *ev) {
  return mpt_space_default_id(ev->space) >= 0 ? "default" : "first";
}

/* the reference configuration: the problem's Default, or the first valid one */
static int64_t reference_id(const mpt_evaluator *ev) {
  int64_t ref = mpt_space_default_id(ev->space);
  return ref < 0 ? 0 : ref;
}

/* the launch of configuration id (l: freed by the caller when this returns 0) */
int mpt_cpu_launch_of(const mpt_evaluator *ev, const cpu_state *st, int64_t id, mpt_launch *l, mpt_error *err) {
  int dims = mpt_space_dims(ev->space);
  int *idx = calloc((size_t)(dims > 0 ? dims : 1), sizeof(int));
  if (!idx) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  mpt_space_config(ev->space, id, idx);
  int rc = mpt_kspec_launch(st->ks, idx, l, err);
  free(idx);
  return rc;
}

/* The kernel's return type, from a compile (-fsyntax-only, the reference configuration's defines) of a source that
 * includes the kernel file and asserts what it returns (evaluators/cpu_toolchain.h); UNKNOWN when that compile
 * cannot tell */
static int find_return_type(mpt_evaluator *ev, cpu_state *st, mpt_cpu_return *kind, mpt_error *err) {
  *kind = MPT_CPU_RETURNS_UNKNOWN;
  char *src = mpt_cpu_return_check_source(st->ks);
  if (!src) return 0;
  char path[PATH_MAX + 32];
  snprintf(path, sizeof path, "%s/return_check.%s", st->dir, st->ks->lang == MPT_LANG_CXX ? "cpp" : "c");
  int rc = mpt_cpu_write_text(path, src);
  free(src);
  if (rc) return mpt_error_set(err, MPT_ERR_IO, "cannot write %s: %s", path, strerror(errno));
  mpt_launch l;
  if ((rc = mpt_cpu_launch_of(ev, st, reference_id(ev), &l, err))) return rc;
  cc_command c;
  rc = mpt_cpu_kernel_command(st, &l, "-fsyntax-only", 4, &c, err);
  mpt_launch_free(&l);
  if (rc) return rc;
  mpt_cpu_push_kernel_language(st, &c);
  mpt_cpu_cmd_push(&c, path);
  char out[8192];
  int status = 0;
  rc = mpt_cpu_run_kernel_compiler(st, &st->cc, c.argv, mpt_cpu_compile_timeout(st), out, sizeof out, &status, NULL, err);
  mpt_cpu_cmd_free(&c);
  unlink(path);
  if (rc == 0) *kind = mpt_cpu_return_kind(status, out);
  return rc;
}

/* Kernel Tuner's C convention: a kernel that returns float returns its own time in ms. Such a kernel must say
 * what that value is (ReturnsTime true: its time; false: ignored, the call is timed), and ReturnsTime true needs
 * a kernel that returns float; the wrapper declares the kernel to return float when it does. */
int mpt_cpu_check_return_type(mpt_evaluator *ev, cpu_state *st, mpt_error *err) {
  const mpt_kernel_spec *ks = st->ks;
  mpt_cpu_return kind;
  int rc = find_return_type(ev, st, &kind, err);
  if (rc) return rc;
  if (kind == MPT_CPU_RETURNS_FLOAT && ks->returns_time < 0)
    return mpt_ks_err(err, MPT_ERR_VALUE, ev->problem, "KernelName", "kernel '%s' returns float: in Kernel Tuner a C "
                      "kernel that returns float returns its own time in ms; add \"ReturnsTime\": true to the "
                      "KernelSpecification to take that time, or \"ReturnsTime\": false to time the call and ignore "
                      "the value", ks->kernel_name);
  if (ks->returns_time == 1 && (kind == MPT_CPU_RETURNS_VOID || kind == MPT_CPU_RETURNS_OTHER))
    return mpt_ks_err(err, MPT_ERR_VALUE, ev->problem, "ReturnsTime", "kernel '%s' returns %s, not float: "
                      "\"ReturnsTime\": true takes the float a kernel returns as its time in ms", ks->kernel_name,
                      kind == MPT_CPU_RETURNS_VOID ? "void" : "another type");
  if (kind == MPT_CPU_RETURNS_FLOAT) st->returns_float = 1;
  return 0;
}

/* compiles configuration ref into so (o: its outcome, initialized here); an error only when its launch cannot
 * be computed or the compiler cannot be run */
static int compile_reference(mpt_evaluator *ev, cpu_state *st, int64_t ref, cpu_artifact *art, mpt_obs *o,
                             mpt_error *err) {
  mpt_launch l;
  int rc = mpt_cpu_launch_of(ev, st, ref, &l, err);
  if (rc) return rc;
  mpt_launch_free(&l);
  mpt_obs_init(o, ref);
  return mpt_cpu_take_variant(ev, ref, art, o, err);
}

/* the error for a reference configuration (cfg) that does not compile: the CompilerOptions entry the compiler
 * names, where it is in the file, else the problem file */
static int reference_compile_error(mpt_evaluator *ev, cpu_state *st, const char *cfg, const mpt_obs *o,
                                   mpt_error *err) {
  const char *which = reference_kind(ev);
  int opt = o->status == MPT_STATUS_COMPILE_ERROR ? mpt_cpu_option_named(st->ks, o->reason) : -1;
  if (opt >= 0) {
    char field[48];
    snprintf(field, sizeof field, "CompilerOptions[%d]", opt);
    return mpt_ks_err(err, MPT_ERR_VALUE, ev->problem, field, "the compiler refuses \"%s\", so the %s configuration "
                      "(%s) does not compile and there is no reference output: %s", st->ks->options[opt], which, cfg,
                      o->reason);
  }
  return mpt_error_set(err, MPT_ERR_VALUE, "%s: the %s configuration (%s) does not compile, so there is no reference "
                       "output: %s", ev->problem->path, which, cfg, o->reason);
}

/* the error for a reference run that failed (o), 0 when it succeeded and delivered every output: a kernel not
 * found, a scratch directory that allows no executables, another failure */
static int reference_run_error(mpt_evaluator *ev, cpu_state *st, const char *cfg, const mpt_obs *o,
                               mpt_error *err) {
  const char *path = ev->problem->path;
  if (o->status == MPT_STATUS_LAUNCH_ERROR) {
    char undefined[300];
    snprintf(undefined, sizeof undefined, "undefined symbol: %s", st->ks->kernel_name);
    if (strstr(o->reason, undefined) || strstr(o->reason, "dlsym"))
      return mpt_error_set(err, MPT_ERR_NAME, "%s: KernelSpecification.KernelName: kernel '%s' not found in %s (%s)%s",
                           path, st->ks->kernel_name, st->ks->kernel_file, o->reason,
                           st->ks->lang == MPT_LANG_CXX ? "; a C++ kernel must be declared extern \"C\" (extern \"C\" "
                           "void kernel(...)): C++ gives other functions a mangled symbol name" : "");
    /* e.g. a scratch directory on a noexec file system */
    return mpt_error_set(err, MPT_ERR_IO, "%s: cannot load the compiled %s configuration from %s (%s); choose a "
                         "scratch directory that allows executables with --workdir", path, reference_kind(ev), st->dir,
                         o->reason);
  }
  if (o->status != MPT_STATUS_OK)
    return mpt_error_set(err, MPT_ERR_VALUE, "%s: the reference configuration (%s) failed (%s): %s", path, cfg,
                         mpt_status_name(o->status), o->reason);
  if (mpt_args_needs_reference_run(st->args))
    return mpt_error_set(err, MPT_ERR_INTERNAL, "%s: the reference run did not deliver every output", path);
  return 0;
}

/* The reference configuration: the problem's Default, or the first valid one. It is compiled and run here, so
 * that a missing kernel or a broken default is reported before any evaluation; its run records the reference
 * output (unless ReferenceArguments gave it) and its time. */
int mpt_cpu_run_reference(mpt_evaluator *ev, cpu_state *st, mpt_error *err) {
  int64_t ref = reference_id(ev);
  st->ref_id = ref;
  char cfg[512];
  mpt_space_format(ev->space, ref, cfg, sizeof cfg);
  mpt_obs o;
  cpu_artifact art;
  int rc = compile_reference(ev, st, ref, &art, &o, err);
  if (rc) return rc;
  if (o.status != MPT_STATUS_OK) return reference_compile_error(ev, st, cfg, &o, err);
  rc = mpt_cpu_run_variant(st, REQ_REFERENCE, art.so_path, &o, err);
  if (rc) return rc;
  if ((rc = reference_run_error(ev, st, cfg, &o, err))) return rc;
  st->ref_objective = o.objective;
  return 0;
}
