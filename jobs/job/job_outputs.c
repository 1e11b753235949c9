/* jobs/job/job_outputs.c: what a job must not replace or cannot write, checked on rank 0 before anything runs
 * (the run log and the T4 export against the problem's inputs: the kernel source, the files it #includes, its
 * BinaryRaw data), and standard output set aside for `--t4 -`. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "jobs/job/job_internal.h"
#include "evaluators/kernel_spec.h"
#include "jobs/cli/commands.h"
#include "jobs/output/outfile.h"

int mpt_job_refuse_input(const mpt_job_options *o, const char *what, const char *path, mpt_error *err) {
  if (mpt_same_file(o->log, path))
    return mpt_error_set(err, MPT_ERR_VALUE, "--log %s is %s: it would be replaced by the run log", o->log, what);
  if (mpt_same_file(o->t4, path))
    return mpt_error_set(err, MPT_ERR_VALUE, "--t4 %s is %s: it would be replaced by the T4 export", o->t4, what);
  return 0;
}

/* the files the kernel source names in #include "FILE" lines (resolved as the compilers' -I of the kernel's
 * directory finds them; one level: a header's own includes are not followed) are inputs too */
static int check_kernel_includes(const mpt_job_options *o, const mpt_kernel_spec *ks, mpt_error *err) {
  for (const char *line = ks->source; line && *line;) {
    const char *t = line, *nl = strchr(line, '\n');
    line = nl ? nl + 1 : NULL;
    while (*t == ' ' || *t == '\t') t++;
    if (*t++ != '#') continue;
    while (*t == ' ' || *t == '\t') t++;
    if (strncmp(t, "include", 7) != 0) continue;
    for (t += 7; *t == ' ' || *t == '\t';) t++;
    const char *q = *t == '"' ? strchr(t + 1, '"') : NULL;
    if (!q || (nl && q > nl) || q == t + 1) continue;
    char path[4096], what[600];
    int len = (int)(q - t - 1);
    snprintf(path, sizeof path, "%s%s%.*s", t[1] == '/' ? "" : ks->kernel_dir, t[1] == '/' ? "" : "/", len, t + 1);
    snprintf(what, sizeof what, "a file the kernel source #includes (\"%.*s\")", len, t + 1);
    if (mpt_job_refuse_input(o, what, path, err)) return err->code;
  }
  return 0;
}

/* the files the problem's KernelSpecification reads (the kernel source, BinaryRaw DataSource files; paths
 * resolved by the spec's own parser) are inputs too. A problem whose spec does not load (none, with a
 * replayed run) has none here; a worker that needs it reports why. */
static int check_kernel_inputs(const mpt_job_options *o, const mpt_problem *prob, mpt_error *err) {
  mpt_kernel_spec *ks = NULL;
  mpt_error ignored;
  mpt_error_clear(&ignored);
  if (mpt_kspec_load(prob, &ks, &ignored) != 0) return 0;
  int rc = mpt_job_refuse_input(o, "the kernel source (KernelSpecification.KernelFile)", ks->kernel_file, err);
  if (rc == 0) rc = check_kernel_includes(o, ks, err);
  for (int i = 0; rc == 0 && i < ks->n_args; i++) {
    const mpt_ks_fillspec *f[2] = {&ks->args[i].fill, ks->args[i].has_reference ? &ks->args[i].ref : NULL};
    for (int k = 0; rc == 0 && k < 2; k++) {
      if (!f[k] || f[k]->type != MPT_FILL_BINARY_RAW || !f[k]->source) continue;
      char what[256];
      snprintf(what, sizeof what, "the BinaryRaw DataSource of %sargument '%s'", k ? "the reference of " : "",
               ks->args[i].name);
      rc = mpt_job_refuse_input(o, what, f[k]->source, err);
    }
  }
  mpt_kspec_free(ks);
  return rc;
}

/* rank 0, before anything runs: what would be replaced, or cannot be written */
int mpt_job_check_outputs(mpt_job *job, mpt_error *err) {
  int rc = check_kernel_inputs(&job->o, job->prob, err);
  if (rc == 0 && !job->o.resume) rc = mpt_cmd_check_output("--log", job->o.log, err);
  if (rc == 0) rc = mpt_cmd_check_output("--t4", job->o.t4, err);
  return rc;
}

/* --t4 - (or a name of standard output): the T4 document alone on standard output, the report on standard
 * error (as with space --list -); the export writes to a copy of the original descriptor */
int mpt_job_set_t4_aside(mpt_job *job, mpt_error *err) {
  if (!job->o.t4 || !mpt_outfile_is_stdout(job->o.t4)) return 0;
  fflush(stdout);
  job->t4_fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
  if (job->t4_fd < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
    return mpt_error_set(err, MPT_ERR_IO, "--t4 %s: cannot set standard output aside: %s", job->o.t4, strerror(errno));
  snprintf(job->t4_fd_name, sizeof job->t4_fd_name, "/dev/fd/%d", job->t4_fd);
  job->o.t4 = job->t4_fd_name;
  return 0;
}
