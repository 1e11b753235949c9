/* tests/conv_fixture.h: the cmocka fixture shared by tests that work on the convolution_milo space of
 * the shared data (problem + space + a scratch directory removed at teardown). */
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

#endif
