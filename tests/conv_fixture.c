/* tests/conv_fixture.c: see tests/conv_fixture.h. */
#include "tests/conv_fixture.h"
#include "tests/conv_space.h"
#include <stdio.h>
#include <stdlib.h>

int conv_fixture_setup(void **state, const char *tag) {
  const char *dir = getenv("MPT_SHARED_DATA");
  if (!dir) return -1;
  fixture *f = calloc(1, sizeof *f);
  if (!f) return -1;
  snprintf(f->dir, sizeof f->dir, "%s", dir);
  if (conv_space_load(&f->p, &f->s)) return -1;
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

int64_t conv_fixture_id(const fixture *f, const int *vals) {
  static const char *const names[] = {"block_size_x", "block_size_y", "tile_size_x", "tile_size_y", "read_only",
                                      "use_padding", "use_shmem", "use_cmem", "filter_height", "filter_width"};
  int idx[10];
  for (int k = 0; k < 10; k++) {
    int p = mpt_problem_param_index(f->p, names[k]);
    if (p < 0 || p >= 10) return -1;
    idx[p] = -1;
    for (int i = 0; i < f->p->params[p].n_values; i++)
      if (f->p->params[p].numeric[i] == vals[k]) idx[p] = i;
    if (idx[p] < 0) return -1;
  }
  return mpt_space_lookup(f->s, idx);
}
