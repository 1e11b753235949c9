# tests/bench.cmake: tests of `mptune bench` and its score (jobs/bench/bench.c, jobs/bench/cmd_bench.c; engineer "bench").
if(EXISTS ${CMAKE_SOURCE_DIR}/spaces/space.c AND EXISTS ${CMAKE_SOURCE_DIR}/spaces/t1.c)
  mpt_unit_test(test_bench SOURCES test_bench.c)
endif()
mpt_script_test(bench_cli COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/bench_cli.sh)
mpt_script_test(synthetic_space COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/synthetic_space.sh)
mpt_script_test(bo_feasibility_fallback COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/bo_feasibility_fallback.sh)
# scripts/plot_bench.py on a tiny CSV set: axis labels with the unit, scores in the legend, y range holding the start
mpt_script_test(plot_bench COMMAND ${MPT_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/plot_bench.py)
# transfer between GPUs: tune --prior, bench --prior-from-others and --transfer online (real brute-forced files)
mpt_script_test(transfer_cli COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/transfer_cli.sh)
