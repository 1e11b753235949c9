# tests/strategies.cmake: tests of the strategy base layer and the random, brute_force and
# evolutionary strategies (strategies/).
if(EXISTS ${CMAKE_SOURCE_DIR}/spaces/space.c AND EXISTS ${CMAKE_SOURCE_DIR}/spaces/t1.c) # until spaces/ lands
  mpt_unit_test(test_strategy_base SOURCES test_strategy_base.c)
endif()
