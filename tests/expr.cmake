# tests/expr.cmake: tests and benchmark of the expression language (spaces/expr/*.c, engineer "expr").
mpt_unit_test(test_expr SOURCES test_expr.c)
# counts allocations to check that mpt_expr_eval_bool allocates nothing on scalar expressions
target_link_options(test_expr PRIVATE -Wl,--wrap=malloc -Wl,--wrap=calloc -Wl,--wrap=realloc)
# differential test against python3: the driver evaluates expressions read from stdin
add_executable(expr_driver expr_driver.c)
target_link_libraries(expr_driver PRIVATE mpt_spaces)
mpt_script_test(expr_diff COMMAND ${MPT_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/expr_diff.py $<TARGET_FILE:expr_driver>)
# ns per evaluation of typical constraints (docs/PERFORMANCE.md)
add_executable(bench_expr bench_expr.c)
target_link_libraries(bench_expr PRIVATE mpt_spaces)
