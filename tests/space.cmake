# tests/space.cmake: tests of T1 reading, the valid set and its queries (spaces/t1.c, spaces/sys/name_set.c,
# spaces/space*.c) and of `mptune space` (jobs/cli/cmd_space.c).
mpt_unit_test(test_t1 SOURCES test_t1.c)
mpt_unit_test(test_name_set SOURCES test_name_set.c)
mpt_unit_test(test_json_check SOURCES test_json_check.c)
mpt_unit_test(test_space SOURCES test_space.c)
# lhs_valid's one-pass design equals the per-point scan kept in the test (ids and generator state)
mpt_unit_test(test_lhs_valid_same SOURCES test_lhs_valid_same.c)
# counts of every shared T1 file, error messages and exit codes of `mptune space`
mpt_script_test(space_cli COMMAND ${MPT_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/space_cli.py)
# differential test: 220 generated problems, valid set vs itertools.product + Python eval
mpt_script_test(space_diff COMMAND ${MPT_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/space_diff.py 220)
# construction time, memory and query cost per T1 file (docs/PERFORMANCE.md): bench_space -r 5 FILE...
add_executable(bench_space bench_space.c)
target_link_libraries(bench_space PRIVATE mpt_spaces)
# time of the lhs-valid initial design per T1 file (docs/PERFORMANCE.md): bench_lhs_valid -n 20 FILE...
add_executable(bench_lhs_valid bench_lhs_valid.c)
target_link_libraries(bench_lhs_valid PRIVATE mpt_spaces)
