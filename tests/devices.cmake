# tests/devices.cmake: the device side of heterogeneous runs: the configurations a device refuses by its limits,
# the evaluator option tables, `--evaluator auto` with an NVIDIA and an AMD stand-in in one MPI job, and the
# Slurm examples.
mpt_unit_test(test_devices_limits SOURCES test_devices_limits.c)
