"""mptune: a Python front-end to mptune that speaks Kernel Tuner. tune_kernel and run_kernel take Kernel
Tuner's arguments (numpy arrays and scalars, tune params, string restrictions, answer, strategy, ...),
write the kernel as a T1 problem, run `mpiexec.mpich -n RANKS mptune tune` on it and return Kernel Tuner's
(results, env); read_log reads a run log into the same results. python/README.md lists what is
supported."""
from .api import KernelRun, run_kernel, tune_kernel, write_problem
from .errors import (ArgumentTypeError, CompilationFailedConfig, ErrorConfig, InvalidConfig, KernelRunError,
                     MptuneError, RunError, RuntimeFailedConfig, TimeoutConfig, UnsupportedError,
                     WrongResultConfig)
from .runlog import read_env, read_log

__all__ = ["tune_kernel", "run_kernel", "write_problem", "read_log", "read_env", "KernelRun", "ErrorConfig",
           "InvalidConfig", "CompilationFailedConfig", "RuntimeFailedConfig", "TimeoutConfig",
           "WrongResultConfig", "MptuneError", "ArgumentTypeError", "UnsupportedError", "RunError",
           "KernelRunError"]
