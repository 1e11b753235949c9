/* tests/conv_fixture.c: see tests/conv_fixture.h. */
#include "tests/conv_fixture.h"
#include <stdio.h>
#include <stdlib.h>

int conv_fixture_setup(void **state, const char *tag) {
  const char *dir = getenv("MPT_SHARED_DATA");
  if (!dir) return -1;
  fixture *f = calloc(1, sizeof *f);
  if (!f) return -1;
  snprintf(f->dir, sizeof f->dir, "%s", dir);
  char path[1200];
  snprintf(path, sizeof path, "%s/t1/convolution_milo.json", dir);
  mpt_error err;
  mpt_error_clear(&err);
  if (mpt_problem_load(path, &f->p, &err)) { fprintf(stderr, "%s\n", err.msg); return -1; }
  if (mpt_space_build(f->p, &f->s, &err)) { fprintf(stderr, "%s\n", err.msg); return -1; }
  snprintf(f->tmpdir, sizeof f->tmpdir, "/tmp/mpt_test_%s_XXXXXX", tag);
  if (!mkdtemp(f->tmpdir)) return -1;
  *state = f;
  return 0;
}

int conv_fixture_teardown(void **state) {
  fixture *f = *state;
  char cmd[400];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->tmpdir);
  if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", f->tmpdir);
  mpt_space_free(f->s);
  mpt_problem_free(f->p);
  free(f);
  return 0;
}
