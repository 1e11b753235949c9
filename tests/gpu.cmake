# tests/gpu.cmake: tests of the cuda/hip evaluators, the run-time compile paths and the GPU examples.
# Without a GPU the device-dependent parts print "SKIPPED: ..." and use cmocka's skip().
mpt_unit_test(test_gpu_compile SOURCES test_gpu_compile.c)
set_tests_properties(test_gpu_compile PROPERTIES TIMEOUT 300)
mpt_unit_test(test_gpu_eval SOURCES test_gpu_eval.c)
set_tests_properties(test_gpu_eval PROPERTIES TIMEOUT 300)
