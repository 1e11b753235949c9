# tests/show.cmake: a run log at a glance and its best configuration as a C header: the summary and the header
# writer on logs written through the run-log API (jobs/output/summary.c, header.c), and `mptune show` and
# `mptune export --header` end to end on real logs (replayed and cpu runs).
if(EXISTS ${CMAKE_SOURCE_DIR}/spaces/space.c AND EXISTS ${CMAKE_SOURCE_DIR}/spaces/t1.c)
  mpt_unit_test(test_summary SOURCES test_summary.c)
endif()
