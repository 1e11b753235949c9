# tests/gp.cmake: tests and benchmark programs of gp/ and strategies/bo/bo.c (engineer "bo").
mpt_unit_test(test_gp SOURCES test_gp.c)
# scoring harness for strategies on brute-forced spaces (tuning tool, not a test)
add_executable(bo_harness bo_harness.c)
target_link_libraries(bo_harness PRIVATE mptune_core)
mpt_unit_test(test_bo SOURCES test_bo.c)
# what bo asks for: batches, pools, initial designs (the same fixture, tests/bo_run.h)
mpt_unit_test(test_bo_batch SOURCES test_bo_batch.c)
# bo's evaluations pending from earlier asks fantasized on the pool (option pending_pool)
mpt_unit_test(test_bo_pending SOURCES test_bo_pending.c conv_fixture.c)
# bo's working set of candidates on huge spaces (option working_set) and the GP's replaced candidates
mpt_unit_test(test_bo_ws SOURCES test_bo_ws.c conv_fixture.c)
# the GP's candidates narrowed to a subset, and bo's working set shrinking with the observations (working_set_bound)
mpt_unit_test(test_bo_ws_shrink SOURCES test_bo_ws_shrink.c conv_fixture.c)
# the cache of bo's feasibility probabilities: the contenders of a pool of pending evaluations kept, exact values
mpt_unit_test(test_bo_feas_cache SOURCES test_bo_feas_cache.c conv_fixture.c)
# ask-time benchmark of bo (docs/PERFORMANCE.md, "Strategy overhead")
add_executable(bench_bo bench_bo.c)
target_link_libraries(bench_bo PRIVATE mptune_core)
# the ScaLAPACK path of gp/ (gp/gp_dist.h) against LAPACK and the serial GP, on 4 ranks
mpt_mpi_test(test_gp_dist NP 4 SOURCES test_gp_dist.c)
# bo with model ranks (the candidates sliced over ranks 0-2) against the serial bo: the same picks
mpt_mpi_test(test_bo_dist NP 3 SOURCES test_bo_dist.c)
# the model ranks' critical path (each command's largest compute of any rank), slices by shares, bo's ask on it
mpt_mpi_test(test_slices_path NP 3 SOURCES test_slices_path.c)
# mptune tune --model-ranks K end to end: the same run as without model ranks, and the refusals
mpt_script_test(dist_model_ranks COMMAND ${MPT_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/model_ranks_e2e.py)
# the distributed model's figures (docs/PERFORMANCE.md, "Distributed GP and model ranks"; not a test)
add_executable(bench_gp_dist bench_gp_dist.c)
target_link_libraries(bench_gp_dist PRIVATE mptune_core)
# the pool's fantasies bit for bit against the plain formulas in their order (gp/gp_pool_fantasy.c)
mpt_unit_test(test_gp_pool_bits SOURCES test_gp_pool_bits.c)
# rows of the factor solved ahead for the runs an ask takes in (gp/gp_ahead.c): the same bits as without
mpt_unit_test(test_gp_ahead SOURCES test_gp_ahead.c)
