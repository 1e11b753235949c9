# tests/dist.cmake: tests of mpi/, coordinator/ and `mptune tune|collect|devices` (engineer "dist").
mpt_unit_test(test_dist_progress SOURCES test_dist_progress.c)
mpt_mpi_test(test_dist_wire NP 4 SOURCES test_dist_wire.c)
