# tests/devices.cmake: the device side of heterogeneous runs: the configurations a device refuses by its limits,
# the evaluator option tables, `--evaluator auto` with an NVIDIA and an AMD stand-in in one MPI job, and the
# Slurm examples.
mpt_unit_test(test_devices_limits SOURCES test_devices_limits.c)
# `--evaluator auto` (the default) in one MPMD job with an NVIDIA stand-in (tests/fake_cuda.c) on one worker and
# an AMD stand-in (tests/fake_hip.c, the real hiprtc) on another; skipped (77) without NVRTC or hiprtc
add_library(fake_hip SHARED fake_hip.c)
target_link_libraries(fake_hip PRIVATE ${CMAKE_DL_LIBS})
set_target_properties(fake_hip PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/tests)
add_dependencies(mptune fake_hip)
mpt_script_test(devices_auto_mixed COMMAND ${MPT_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/devices_auto_mixed.py)
set_tests_properties(devices_auto_mixed PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600)
# examples/slurm/: the scripts parse, use options mptune has, and local-mix.sh runs (stand-in GPUs) and resumes
mpt_script_test(devices_slurm COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/devices_slurm.sh)
set_tests_properties(devices_slurm PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600)
mpt_unit_test(test_devices_options SOURCES test_devices_options.c)
mpt_script_test(devices_options_cli COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/devices_options_cli.sh)
# times of mpt_device_excluded and mpt_gpu_probe (docs/PERFORMANCE.md):
#   bench_devices -n 5 -t 256 ../shared/data/t1/*.json
add_executable(bench_devices bench_devices.c)
target_link_libraries(bench_devices PRIVATE mptune_core)
