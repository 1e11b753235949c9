# tests/gpu.cmake: tests of the cuda/hip evaluators, the run-time compile paths and the GPU examples.
# Without a GPU the device-dependent parts print "SKIPPED: ..." and use cmocka's skip().
mpt_unit_test(test_gpu_compile SOURCES test_gpu_compile.c)
set_tests_properties(test_gpu_compile PROPERTIES TIMEOUT 300)
mpt_unit_test(test_gpu_eval SOURCES test_gpu_eval.c)
set_tests_properties(test_gpu_eval PROPERTIES TIMEOUT 300)
# the same program's on-device tests: ctest reports "Skipped" (exit 77) where no GPU is present
add_test(NAME test_gpu_device COMMAND test_gpu_eval --device)
set_tests_properties(test_gpu_device PROPERTIES ENVIRONMENT "${MPT_TEST_ENV}" LABELS "gpu" SKIP_RETURN_CODE 77
                     TIMEOUT 600)
# NVRTC/hiprtc compile times of the GPU examples (docs/PERFORMANCE.md):
#   bench_gpu_compile -n 20 nvrtc sm_90 examples/gpu/*.json ; bench_gpu_compile -n 20 hiprtc gfx90a ...
add_executable(bench_gpu_compile bench_gpu_compile.c)
target_link_libraries(bench_gpu_compile PRIVATE mptune_core)
# `mptune devices` lists no GPU on a machine without one, and the cuda/hip evaluators say why
mpt_script_test(gpu_devices_cli COMMAND ${MPT_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/gpu_devices_cli.py)
# the GPU examples' kernels run on the CPU (threads + barrier) for sampled configurations and
# compared with plain loops: indexing, tiling and shared-memory logic checked without a GPU
mpt_script_test(gpu_emulate COMMAND ${MPT_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/gpu_emulate.py 4)
set_tests_properties(gpu_emulate PROPERTIES TIMEOUT 300)
# the cuda evaluator's device path (context, module, launch, timing, output check, failure classes, a
# fresh server after a sticky error, a lost device) with a stand-in driver and the real NVRTC; skipped
# (77) without NVRTC
add_library(fake_cuda SHARED fake_cuda.c)
set_target_properties(fake_cuda PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
mpt_script_test(gpu_fake_driver COMMAND ${MPT_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/gpu_fake_driver.py)
set_tests_properties(gpu_fake_driver PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600)
add_dependencies(mptune fake_cuda)
# the power observer (evaluators/gpu/power*.c) and the objectives time, energy, edp and a problem's metric
# with a stand-in NVML (fake_nvml.c, deterministic power, clock and temperature) on the stand-in driver;
# skipped (77) without NVRTC
add_library(fake_nvml SHARED fake_nvml.c)
target_link_libraries(fake_nvml PRIVATE ${CMAKE_DL_LIBS})
set_target_properties(fake_nvml PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
add_dependencies(mptune fake_nvml)
mpt_unit_test(test_power SOURCES test_power.c conv_fixture.c)
add_dependencies(test_power fake_nvml)
mpt_script_test(gpu_power COMMAND ${MPT_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/gpu_power.py)
set_tests_properties(gpu_power PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600)
# the power meter's sampling rate and window cost (docs/PERFORMANCE.md): bench_power -n 20 -w 100 LIB
add_executable(bench_power bench_power.c)
target_link_libraries(bench_power PRIVATE mptune_core)
# the devices listed by the test process first, then the cuda evaluator opened (it forks its device server and
# compiles): with the stand-in driver, whose cuInit fails in a process forked after it succeeded (as the real
# driver's: CUDA_ERROR_NOT_INITIALIZED on the H200), the listing must not initialize the driver in-process
add_test(NAME test_gpu_fake_examples COMMAND test_gpu_eval --cuda-examples)
set_tests_properties(test_gpu_fake_examples PROPERTIES
                     ENVIRONMENT "${MPT_TEST_ENV};MPT_CUDA_DRIVER_LIB=${CMAKE_BINARY_DIR}/tests/libfake_cuda.so"
                     SKIP_RETURN_CODE 77 TIMEOUT 600)
add_dependencies(test_gpu_eval fake_cuda)
# scripts/gpu-check.sh: the self-contained folder for a GPU machine packs, resolves every library from itself,
# and its run step without a GPU skips (77) what needs one. Release build only: the folder is packed from a
# release build, and the ASan pass of the suite has no time for a second pack (and its host tests)
if(NOT MPT_SANITIZE)
  mpt_script_test(gpu_check_pack COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/gpu_check.sh)
  set_tests_properties(gpu_check_pack PROPERTIES TIMEOUT 900)
endif()
