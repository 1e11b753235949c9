# tests/cpu.cmake: tests of the KernelSpecification reader, argument buffers, the isolation layer and the
# cpu evaluator (engineer "cpu"): evaluators/kernel_spec.c, kernel_launch.c, args.c, isolate.c, cpu.c, examples/cpu/.
if(EXISTS ${CMAKE_SOURCE_DIR}/spaces/space.c AND EXISTS ${CMAKE_SOURCE_DIR}/spaces/t1.c)
  mpt_unit_test(test_kernel_spec SOURCES test_kernel_spec.c)
  mpt_unit_test(test_cpu SOURCES test_cpu.c)
endif()
mpt_unit_test(test_cpu_isolate SOURCES test_cpu_isolate.c)
# end to end under mpiexec.mpich -n 3: the matmul example (best beats the default, real times in the log)
# and every failure mode of tests/kernels/failing.c in one run
mpt_script_test(cpu_tune COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cpu_tune.sh)
# benchmark (not a test): cost of an isolated call, serving child vs fork per evaluation
add_executable(bench_cpu_isolate bench_cpu_isolate.c)
target_link_libraries(bench_cpu_isolate PRIVATE mptune_core)
# a timed run the scheduler delayed (its threads waited for a core) is run again: tests/kernels/delayed.c
mpt_script_test(cpu_delayed COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cpu_delayed.sh)
# bad input through `mptune tune` (-n 3): one clear message each, non-zero exit, no log
mpt_script_test(cpu_bad_input COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cpu_bad_input.sh)
# C++ kernels through `mptune tune` (-n 2): extern "C" tunes, without it a clear hint; $CC/$CXX and
# KernelSpecification.Compiler choose the compiler; -x c++ in CompilerOptions leaves the call wrapper alone
mpt_script_test(cpu_cxx COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/cpu_cxx.sh)
mpt_unit_test(test_cpu_load SOURCES test_cpu_load.c)
# the compile-ahead pipeline (evaluators/ahead.c): compiles ahead, jobs at once, the run's cache, crash, timeout,
# stop, discard and pause, in real forked compile processes
mpt_unit_test(test_ahead SOURCES test_ahead.c)
# the evaluation pipeline end to end: configurations held ahead and cancelled by a stop, resumed, every id once
# (replay evaluator); the cpu evaluator compiling ahead, stopped by --time and resumed (tests/compile_ahead.py)
foreach(t held cpu)
  mpt_script_test(compile_ahead_${t} COMMAND ${MPT_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/compile_ahead.py ${t})
endforeach()
