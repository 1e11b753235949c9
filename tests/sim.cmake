# tests/sim.cmake: tests of the replay loader, the sim evaluator, the HDF5 run log (its rows and its metadata copy), the T4 export
# and its output files under signals
# (engineer "sim").
if(EXISTS ${CMAKE_SOURCE_DIR}/spaces/space.c AND EXISTS ${CMAKE_SOURCE_DIR}/spaces/t1.c)
  mpt_unit_test(test_replay SOURCES test_replay.c conv_fixture.c)
  mpt_unit_test(test_replay_strict SOURCES test_replay_strict.c conv_fixture.c)
  mpt_unit_test(test_runlog SOURCES test_runlog.c conv_fixture.c)
  mpt_unit_test(test_runlog_records SOURCES test_runlog_records.c conv_fixture.c)
  mpt_unit_test(test_runlog_meta SOURCES test_runlog_meta.c)
  mpt_unit_test(test_outfile SOURCES test_outfile.c)
endif()
# the evaluator options a run measured with, in its log: recorded, shown, taken or replaced by a resume (cpu, -n 2)
mpt_script_test(eval_options_log COMMAND ${MPT_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/eval_options_log.py)
mpt_script_test(t4_validate COMMAND ${MPT_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/t4_validate.py)
mpt_script_test(replay_cli COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/replay_cli.sh)
# benchmark program (not a test): replay load, run-log append+flush, read, T4 export
if(EXISTS ${CMAKE_SOURCE_DIR}/spaces/space.c AND EXISTS ${CMAKE_SOURCE_DIR}/spaces/t1.c)
  add_executable(bench_runlog bench_runlog.c)
  target_link_libraries(bench_runlog PRIVATE mptune_core)
endif()
# --confirm: the finalists measured again (sim: the same times; a confirmation cut short and resumed; cpu on a
# worker)
mpt_script_test(confirm_e2e COMMAND ${MPT_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/confirm_e2e.py)
set_tests_properties(confirm_e2e PROPERTIES TIMEOUT 900)
# the Pareto front and rank 0's side of --confirm, unit by unit
mpt_unit_test(test_confirm SOURCES test_confirm.c conv_fixture.c)
