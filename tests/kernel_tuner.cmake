# tests/kernel_tuner.cmake: mptune as Kernel Tuner users meet it: Kernel Tuner's strategy and option names, the
# T1 Search and Budget blocks, Kernel Tuner caches of runs still in progress, replayed files that lack
# configurations (engineer "h11").
mpt_script_test(kernel_tuner_cli COMMAND ${MPT_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/kernel_tuner_cli.py)
mpt_script_test(t4_evaluators COMMAND ${MPT_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/t4_evaluators.py)
