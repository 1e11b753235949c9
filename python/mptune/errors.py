"""mptune.errors: the exceptions of the Python front-end and Kernel Tuner's error strings for the `time`
of a configuration that failed."""


class MptuneError(Exception):
    """Base class of every error the front-end raises."""


class ArgumentTypeError(MptuneError, TypeError):
    """An argument of tune_kernel/run_kernel has a type mptune cannot pass to a kernel or read."""


class UnsupportedError(MptuneError, ValueError):
    """A Kernel Tuner argument or value mptune cannot honour (refused rather than ignored)."""


class RunError(MptuneError, RuntimeError):
    """The mptune command failed; the message holds its last lines and where its work directory is."""

    def __init__(self, message, returncode=None, workdir=None, output=""):
        super().__init__(message)
        self.returncode = returncode
        self.workdir = workdir
        self.output = output


class KernelRunError(MptuneError, RuntimeError):
    """run_kernel: the one configuration failed (compile error, crash, ...)."""

    def __init__(self, message, result=None):
        super().__init__(message)
        self.result = result


class ErrorConfig(str):
    """The `time` of a configuration that failed, as Kernel Tuner writes it: a string that is the class
    name (`str(r["time"]) == "CompilationFailedConfig"`), so `isinstance(r["time"], ErrorConfig)` tells
    failures from timings."""

    def __new__(cls):
        return super().__new__(cls, cls.__name__)

    def __repr__(self):
        return self.__class__.__name__


class InvalidConfig(ErrorConfig):
    """The configuration breaks a restriction or a device limit."""


class CompilationFailedConfig(ErrorConfig):
    """The variant did not compile."""


class RuntimeFailedConfig(ErrorConfig):
    """The launch failed, the kernel failed while running, or it crashed."""


class TimeoutConfig(ErrorConfig):
    """The variant ran past its time limit (mptune's status `timeout`)."""


class WrongResultConfig(ErrorConfig):
    """An output differed from `answer` (mptune's status `wrong_result`); Kernel Tuner stops the whole
    tuning run there, mptune records it and goes on."""


# mptune's statuses (docs/RUNLOG.md) -> the error string of the `time` of such a result (as mptune export
# writes them into T4 files)
STATUS_ERROR = {
    "compile_error": CompilationFailedConfig,
    "launch_error": RuntimeFailedConfig,
    "runtime_error": RuntimeFailedConfig,
    "crash": RuntimeFailedConfig,
    "wrong_result": WrongResultConfig,
    "timeout": TimeoutConfig,
    "invalid": InvalidConfig,
}
