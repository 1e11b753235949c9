/* evaluators/cpu/cpu_compile.c: the cpu evaluator's compiles: a compiler's command line built word by word
 * (-O3 -march=native -fPIC, the problem's CompilerOptions, -I, -D per parameter), the compiler run with a private
 * TMPDIR emptied after each compile, its outcome as an observation, and the call wrapper written and compiled. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "evaluators/cpu/cpu_internal.h"

int mpt_cpu_write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  int ok = fputs(text, f) >= 0;
  if (fclose(f) != 0) ok = 0;
  return ok ? 0 : -1;
}

/* the call wrapper's source (evaluators/cpu_toolchain.h) written to path */
static int write_wrapper(cpu_state *st, const char *path, mpt_error *err) {
  char *src = mpt_cpu_wrapper_source(st->ks, CPU_LAUNCH_SYMBOL, st->returns_float, err);
  if (!src) return err->code ? err->code : MPT_ERR_NOMEM;
  int rc = mpt_cpu_write_text(path, src);
  free(src);
  if (rc) return mpt_error_set(err, MPT_ERR_IO, "cannot write %s: %s", path, strerror(errno));
  return 0;
}

/* The compiler's temporary files (gcc's ccXXXXXX.s, .o, .res …) go to a private directory, emptied after
 * every compile: gcc removes them only when it ends by itself, so a compile killed when the run stops (a
 * signal, its timeout) would otherwise leave them in the user's $TMPDIR. */
static void empty_dir(const char *path) {
  DIR *d = opendir(path);
  if (!d) return;
  for (struct dirent *e; (e = readdir(d)) != NULL;)
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) unlinkat(dirfd(d), e->d_name, 0);
  closedir(d);
}

/* a copy of the environment whose TMPDIR is dir (NULL when out of memory) */
static char **env_with_tmpdir(const char *dir) {
  size_t n = 0;
  while (environ[n]) n++;
  char **env = calloc(n + 2, sizeof *env);
  size_t len = strlen(dir) + 8;
  char *var = malloc(len);
  if (!env || !var) {
    free(env);
    free(var);
    return NULL;
  }
  snprintf(var, len, "TMPDIR=%s", dir);
  size_t k = 0;
  env[k++] = var; /* first: freed with the copy */
  for (size_t i = 0; i < n; i++)
    if (strncmp(environ[i], "TMPDIR=", 7) != 0) env[k++] = environ[i];
  return env;
}

/* runs the compiler with the private TMPDIR, emptied afterwards */
static int run_compiler(cpu_state *st, char *const argv[], double timeout, char *out, size_t cap, int *status,
                        double *secs, mpt_error *err) {
  char **env = env_with_tmpdir(st->cc_tmp); /* the environment as it is now */
  if (!env) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  int rc = mpt_run_command_env(argv, env, &st->watch, timeout, out, cap, status, secs, err);
  free(env[0]);
  free(env);
  empty_dir(st->cc_tmp);
  return rc;
}

void mpt_cpu_cmd_free(cc_command *c) {
  for (int i = 0; i < c->n_owned; i++) free(c->owned[i]);
  free(c->owned);
  free(c->argv);
  memset(c, 0, sizeof *c);
}

/* appends a word (room was made by mpt_cpu_kernel_command) */
void mpt_cpu_cmd_push(cc_command *c, const char *word) {
  if (c->n + 1 < c->cap) c->argv[c->n++] = (char *)word;
  c->argv[c->n] = NULL;
}

/* appends prefix+text as a word of the command's own */
static int push_owned(cc_command *c, const char *prefix, const char *text) {
  size_t len = strlen(prefix) + strlen(text) + 1;
  char *w = malloc(len);
  if (!w) return -1;
  snprintf(w, len, "%s%s", prefix, text);
  c->owned[c->n_owned++] = w;
  mpt_cpu_cmd_push(c, w);
  return 0;
}

/* The start of a kernel compile for launch l: the compiler, -O3 -march=native -fPIC and `mode` (-shared,
 * -fsyntax-only), the problem's CompilerOptions (after mptune's: they can override them), -I<kernel dir>, -D per
 * define; room for `extra` more words */
int mpt_cpu_kernel_command(const cpu_state *st, const mpt_launch *l, const char *mode, int extra, cc_command *c,
                          mpt_error *err) {
  const mpt_kernel_spec *ks = st->ks;
  memset(c, 0, sizeof *c);
  c->cap = st->cc.n + 6 + ks->n_options + l->n_defines + extra;
  c->argv = calloc((size_t)c->cap, sizeof(char *));
  c->owned = calloc((size_t)l->n_defines + 1, sizeof(char *));
  int rc = !c->argv || !c->owned;
  for (int i = 0; !rc && i < st->cc.n; i++) mpt_cpu_cmd_push(c, st->cc.argv[i]);
  const char *ours[] = {"-O3", "-march=native", "-fPIC", mode};
  for (size_t i = 0; !rc && i < sizeof ours / sizeof ours[0]; i++) mpt_cpu_cmd_push(c, ours[i]);
  for (int i = 0; !rc && i < ks->n_options; i++) mpt_cpu_cmd_push(c, ks->options[i]);
  if (!rc) rc = push_owned(c, "-I", ks->kernel_dir);
  for (int i = 0; !rc && i < l->n_defines; i++) rc = push_owned(c, "-D", l->defines[i]);
  if (rc) {
    mpt_cpu_cmd_free(c);
    return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  }
  return 0;
}

/* a C++ kernel is compiled as C++ whatever its file's suffix (clang++ warns about a .c file otherwise), unless
 * the CompilerOptions choose a language themselves; 1 when a -x option precedes the inputs */
int mpt_cpu_push_kernel_language(const cpu_state *st, cc_command *c) {
  if (mpt_cpu_options_set_language(st->ks)) return 1;
  if (st->ks->lang != MPT_LANG_CXX) return 0;
  mpt_cpu_cmd_push(c, "-x");
  mpt_cpu_cmd_push(c, "c++");
  return 1;
}

/* runs a compile of the kernel's compiler; a compiler that cannot be started at all is an error naming where it
 * came from (KernelSpecification.Compiler, $CC, $CXX) */
int mpt_cpu_run_kernel_compiler(cpu_state *st, const mpt_cpu_cc *cc, char *const argv[], double timeout, char *out,
                               size_t cap, int *status, double *secs, mpt_error *err) {
  int rc = run_compiler(st, argv, timeout, out, cap, status, secs, err);
  if (rc == 0) return 0;
  char inner[600];
  snprintf(inner, sizeof inner, "%s", err->msg);
  if (strcmp(cc->origin, "KernelSpecification.Compiler") == 0)
    return mpt_ks_err(err, rc, st->ks->problem, "Compiler", "%s", inner);
  return mpt_error_set(err, rc, "%s: the compiler (%s): %s", st->ks->problem->path, cc->origin, inner);
}

/* the outcome of a variant's compile (status as mpt_run_command gives it) in obs */
void mpt_cpu_compile_outcome(const cpu_state *st, int status, double timeout, const char *out, mpt_obs *obs) {
  if (status == -1) {
    obs->status = MPT_STATUS_TIMEOUT;
    snprintf(obs->reason, sizeof obs->reason, "compiling took longer than %g s: killed", timeout);
  } else if (status == -2) {
    obs->status = MPT_STATUS_CANCELLED;
    snprintf(obs->reason, sizeof obs->reason, "cancelled while compiling: the run is stopping");
  } else if (status == 128 + SIGINT || status == 128 + SIGTERM) {
    /* the compiler caught the signal that stops the run (sent to the worker's process group in the instant
     * before the compiler has a group of its own): not the variant's fault, so not a compile error that a
     * resume would never try again */
    obs->status = MPT_STATUS_CANCELLED;
    snprintf(obs->reason, sizeof obs->reason, "the compiler was stopped by %s: the run is stopping",
             status == 128 + SIGINT ? "SIGINT" : "SIGTERM");
  } else if (status != 0) {
    obs->status = MPT_STATUS_COMPILE_ERROR;
    char prefix[320];
    const char *name = strrchr(st->cc.argv[0], '/');
    snprintf(prefix, sizeof prefix, "%s exited with status %d: ", name ? name + 1 : st->cc.argv[0], status);
    mpt_cpu_compiler_reason(obs->reason, sizeof obs->reason, prefix, out);
  }
}

double mpt_cpu_compile_timeout(const cpu_state *st) {
  return st->timeout_s > CPU_COMPILE_TIMEOUT_S ? st->timeout_s : CPU_COMPILE_TIMEOUT_S;
}

/* writes the call wrapper into the scratch directory and compiles it (st->launch_obj) */
int mpt_cpu_compile_call_wrapper(cpu_state *st, mpt_error *err) {
  char wrapper[PATH_MAX + 16];
  snprintf(wrapper, sizeof wrapper, "%s/launch.c", st->dir);
  snprintf(st->launch_obj, sizeof st->launch_obj, "%s/launch.o", st->dir);
  int rc = write_wrapper(st, wrapper, err);
  if (rc) return rc;
  cc_command c = {0};
  c.cap = st->cc_wrapper.n + 8;
  if (!(c.argv = calloc((size_t)c.cap, sizeof(char *)))) return mpt_error_set(err, MPT_ERR_NOMEM, "out of memory");
  for (int i = 0; i < st->cc_wrapper.n; i++) mpt_cpu_cmd_push(&c, st->cc_wrapper.argv[i]);
  const char *rest[] = {"-O2", "-fPIC", "-c", wrapper, "-o", st->launch_obj};
  for (size_t i = 0; i < sizeof rest / sizeof rest[0]; i++) mpt_cpu_cmd_push(&c, rest[i]);
  char out[4096];
  int status = 0;
  rc = mpt_cpu_run_kernel_compiler(st, &st->cc_wrapper, c.argv, CPU_COMPILE_TIMEOUT_S, out, sizeof out, &status, NULL, err);
  mpt_cpu_cmd_free(&c);
  if (rc) return rc;
  if (status != 0)
    return mpt_error_set(err, MPT_ERR_INTERNAL, "cpu evaluator: cannot compile the call wrapper %s:\n%s", wrapper, out);
  return 0;
}
