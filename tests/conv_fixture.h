/* tests/conv_fixture.h: the cmocka fixture shared by tests that work on the convolution_milo space of
 * the shared data (problem + space + a scratch directory removed at teardown), and the id of a configuration
 * given by its values. */
#ifndef MPT_TEST_CONV_FIXTURE_H
#define MPT_TEST_CONV_FIXTURE_H
#include "spaces/space.h"

typedef struct fixture {
  mpt_problem *p;
  mpt_space *s;
  char dir[1024];    /* $MPT_SHARED_DATA */
  char tmpdir[256];  /* /tmp/mpt_test_<tag>_XXXXXX */
} fixture;

/* loads t1/convolution_milo.json from $MPT_SHARED_DATA, builds its space, makes the scratch dir */
int conv_fixture_setup(void **state, const char *tag);
int conv_fixture_teardown(void **state);
/* id of the convolution configuration with the 10 parameter values vals (block_size_x, block_size_y,
 * tile_size_x, tile_size_y, read_only, use_padding, use_shmem, use_cmem, filter_height, filter_width); -1
 * when a value is not among its parameter's or the configuration is not valid */
int64_t conv_fixture_id(const fixture *f, const int *vals);

#endif
