# tests/strategies.cmake: tests of the strategy base layer and the random, brute_force and
# evolutionary strategies (strategies/), and the scoring harness evo_harness (a plain executable).
mpt_unit_test(test_strategy_base SOURCES test_strategy_base.c)
mpt_unit_test(test_strategy_evo SOURCES test_strategy_evo.c)
add_executable(evo_harness evo_harness.c)
target_link_libraries(evo_harness PRIVATE mpt_strategies mpt_evaluators mpt_spaces m)
# transfer between GPUs: related observations in the strategies and bench's runs with priors and joint campaigns
mpt_unit_test(test_transfer SOURCES test_transfer.c)
