# tests/gp.cmake: tests and benchmark programs of gp/ and strategies/bo.c (engineer "bo").
mpt_unit_test(test_gp SOURCES test_gp.c)
