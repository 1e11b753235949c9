# tests/show.cmake: a run log at a glance and its best configuration as a C header: the summary and the header
# writer on logs written through the run-log API (jobs/output/summary.c, header.c), and `mptune show` and
# `mptune export --header` end to end on real logs (replayed and cpu runs).
if(EXISTS ${CMAKE_SOURCE_DIR}/spaces/space.c AND EXISTS ${CMAKE_SOURCE_DIR}/spaces/t1.c)
  mpt_unit_test(test_summary SOURCES test_summary.c)
endif()
# end to end: show and export --header on a replayed run, a cpu run with every failure status, two device
# classes, a log being written, a log cut short, and bad input; checked against the logs read with h5py
mpt_script_test(show_cli COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/show_cli.sh)
