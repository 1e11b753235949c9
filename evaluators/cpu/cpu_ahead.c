/* evaluators/cpu/cpu_ahead.c: the cpu evaluator's compile-ahead (evaluators/ahead.h): a variant's compile in a
 * compile process of its own, keyed by its command, leaving its shared object in the scratch directory; and a
 * configuration's shared object taken when it is evaluated (compiled ahead, cached, or compiled now). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "evaluators/cpu/cpu_internal.h"

/* the command that compiles configuration id into so_path (c: freed by the caller when this returns 0) */
static int variant_command(const mpt_evaluator *ev, const cpu_state *st, int64_t id, const char *so_path, cc_command *c,
                           mpt_error *err) {
  mpt_launch l;
  int rc = mpt_cpu_launch_of(ev, st, id, &l, err);
  if (rc) return rc;
  rc = mpt_cpu_kernel_command(st, &l, "-shared", 10, c, err);
  mpt_launch_free(&l);
  if (rc) return rc;
  int language_set = mpt_cpu_push_kernel_language(st, c);
  mpt_cpu_cmd_push(c, st->ks->kernel_file);
  if (language_set) { /* the call wrapper is an object file, whatever -x the kernel was compiled with */
    mpt_cpu_cmd_push(c, "-x");
    mpt_cpu_cmd_push(c, "none");
  }
  mpt_cpu_cmd_push(c, st->launch_obj);
  mpt_cpu_cmd_push(c, "-o");
  mpt_cpu_cmd_push(c, so_path);
  return 0;
}

/* the key: every word of the command but the output's name */
static int cpu_ahead_key(void *ctx, int64_t id, mpt_ahead_key *key) {
  const mpt_evaluator *ev = ctx;
  cc_command c;
  mpt_error e;
  mpt_error_clear(&e);
  if (variant_command(ev, ev->data, id, "", &c, &e) != 0) return -1;
  mpt_ahead_key_init(key);
  for (int i = 0; i < c.n; i++) mpt_ahead_key_str(key, c.argv[i]);
  mpt_cpu_cmd_free(&c);
  return 0;
}

/* the compiler run (in the compile process, a TMPDIR of its own) into a */
static void compile_into(mpt_evaluator *ev, cpu_state *st, int64_t id, cpu_artifact *a) {
  mpt_error e;
  mpt_error_clear(&e);
  cc_command c;
  char out[8192];
  int status = 0;
  double timeout = mpt_cpu_compile_timeout(st);
  a->rc = variant_command(ev, st, id, a->so_path, &c, &e);
  if (!a->rc) {
    a->rc = mpt_cpu_run_kernel_compiler(st, &st->cc, c.argv, timeout, out, sizeof out, &status, NULL, &e);
    mpt_cpu_cmd_free(&c);
  }
  if (a->rc) {
    snprintf(a->reason, sizeof a->reason, "%s", e.msg);
    return;
  }
  mpt_obs o;
  mpt_obs_init(&o, id);
  mpt_cpu_compile_outcome(st, status, timeout, out, &o);
  a->status = o.status;
  snprintf(a->reason, sizeof a->reason, "%s", o.status == MPT_STATUS_OK ? "" : o.reason);
  if (status != 0) unlink(a->so_path);
}

/* the compile process's watch: the worker asked it to stop (the run stops, the configuration was dropped) */
static int cancelled_watch(void *ctx, const char *doing, double done) {
  (void)ctx, (void)doing, (void)done;
  return mpt_ahead_cancelled();
}

static int cpu_ahead_compile(void *ctx, int64_t id, const mpt_ahead_key *key, char **blob, size_t *len) {
  mpt_evaluator *ev = ctx;
  cpu_state *st = ev->data;
  cpu_artifact *a = calloc(1, sizeof *a);
  if (!a) return -1;
  st->watch = (mpt_watch){cancelled_watch, NULL}; /* never the worker's: it asks MPI */
  char hex[33];
  mpt_ahead_key_hex(key, hex);
  snprintf(a->so_path, sizeof a->so_path, "%s/k%s.so", st->dir, hex);
  size_t n = strlen(st->cc_tmp);
  snprintf(st->cc_tmp + n, sizeof st->cc_tmp - n, "/j%ld", (long)getpid()); /* compiles at once: TMPDIRs apart */
  mkdir(st->cc_tmp, 0700);
  compile_into(ev, st, id, a);
  rmdir(st->cc_tmp);
  *blob = (char *)a;
  *len = sizeof *a;
  return 0;
}

/* the compile process outlives the compiler's own timeout, which says what happened */
static double cpu_ahead_timeout(void *ctx) { return mpt_cpu_compile_timeout(((const mpt_evaluator *)ctx)->data) + 30; }

static void cpu_ahead_forget(void *ctx, const char *blob, size_t len) {
  (void)ctx;
  const cpu_artifact *a = (const cpu_artifact *)blob;
  if (len == sizeof *a && a->rc == 0 && a->status == MPT_STATUS_OK) unlink(a->so_path);
}

/* a compile that was cancelled (the run stopping, a signal to the compiler) or could not run is no outcome of the
 * variant's: not kept, a second request compiles again */
static int cpu_ahead_cacheable(void *ctx, const char *blob, size_t len) {
  (void)ctx;
  const cpu_artifact *a = (const cpu_artifact *)blob;
  return len == sizeof *a && a->rc == 0 && a->status != MPT_STATUS_CANCELLED;
}

const mpt_ahead_ops mpt_cpu_ahead_ops = {cpu_ahead_key, cpu_ahead_compile, cpu_ahead_timeout, cpu_ahead_forget,
                                            cpu_ahead_cacheable};

/* configuration id's shared object (compiled ahead, cached, or compiled now) in art; o says how its compile went */
int mpt_cpu_take_variant(mpt_evaluator *ev, int64_t id, cpu_artifact *art, mpt_obs *o, mpt_error *err) {
  mpt_ahead_result r;
  int rc = mpt_evaluator_compile(ev, id, &r, o, err);
  if (rc || r.outcome != MPT_AHEAD_DONE) return rc;
  int whole = r.len == sizeof *art;
  if (whole) memcpy(art, r.blob, sizeof *art);
  free(r.blob);
  if (!whole) {
    o->status = MPT_STATUS_CRASH;
    snprintf(o->reason, sizeof o->reason, "the compile process sent a malformed answer");
    return 0;
  }
  if (art->rc < 0) return mpt_error_set(err, art->rc, "%s", art->reason);
  o->status = art->status;
  if (o->status != MPT_STATUS_OK) snprintf(o->reason, sizeof o->reason, "%s", art->reason);
  return 0;
}
