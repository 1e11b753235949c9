# tests/virtual.cmake: tests of the virtual clock (coordinator/virtual.c, `tune --virtual-workers N`).
if(EXISTS ${CMAKE_SOURCE_DIR}/spaces/space.c AND EXISTS ${CMAKE_SOURCE_DIR}/spaces/t1.c)
  mpt_unit_test(test_virtual SOURCES test_virtual.c conv_fixture.c)
endif()
mpt_script_test(virtual_cli COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/virtual_cli.sh)
# --virtual-time cpu with --model-ranks: the model ranks' critical path on the clock, and the line says which clock
mpt_script_test(virtual_model_ranks COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/virtual_model_ranks.sh)
