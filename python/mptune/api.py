"""mptune.api: tune_kernel and run_kernel with Kernel Tuner's signatures: the kernel written as a T1
problem into a work directory, `mpiexec.mpich -n RANKS mptune tune` run on it with its progress streamed
to stderr, and its run log read back as Kernel Tuner's (results, env). python/README.md lists what is
supported."""
import os
import shutil
import sys
import tempfile

from . import problem as t1
from . import runner
from .errors import ArgumentTypeError, KernelRunError, RunError, UnsupportedError
from .runlog import read_env, read_log
from .strategy import Plan

LOG_FILE = "run.h5"


def _refuse(name, value, why):
    shown = f"<function {getattr(value, '__name__', '?')}>" if callable(value) else repr(value)
    raise UnsupportedError(f"{name}={shown}: {why}")


def _check_unsupported(verify, texmem_args, compiler, defines, metrics, observers, objective,
                       objective_higher_is_better, cache, simulation_mode):
    """refuses every Kernel Tuner argument that matters and that mptune cannot honour"""
    if verify is not None:
        _refuse("verify", verify, "a Python function cannot run inside mptune's C workers: give answer= "
                "(compared as numpy.allclose with atol=) instead")
    if texmem_args is not None:
        _refuse("texmem_args", texmem_args, "texture memory is not supported by mptune")
    if compiler is not None:
        _refuse("compiler", compiler, "mptune compiles C kernels with cc from PATH and CUDA/HIP kernels with "
                "NVRTC/hiprtc; put the C compiler you want first on PATH as cc")
    if defines is not None:
        _refuse("defines", defines, "mptune defines every tune param (and block_size_x/y/z, grid_size_x/y/z); "
                "pass other constant macros as compiler_options=[\"-DNAME=VALUE\"]")
    if metrics is not None:
        _refuse("metrics", metrics, "user metrics are not supported: mptune minimizes the kernel's time")
    if observers is not None:
        _refuse("observers", observers, "Python observers cannot run inside mptune's C workers")
    if objective not in (None, "time"):
        _refuse("objective", objective, "mptune minimizes the kernel's time (objective \"time\")")
    if objective_higher_is_better:
        _refuse("objective_higher_is_better", objective_higher_is_better, "mptune minimizes the kernel's time")
    if cache is not None and not simulation_mode:
        _refuse("cache", cache, "mptune keeps every run in its HDF5 run log instead of Kernel Tuner's cache "
                "file (workdir=DIR keeps it, mptune.read_log reads it); cache= is read only with "
                "simulation_mode=True, which replays a Kernel Tuner cache file")
    if simulation_mode and cache is None:
        _refuse("simulation_mode", simulation_mode, "a simulation replays a Kernel Tuner cache file: give cache=")


def _cache_file(cache):
    if not isinstance(cache, str):
        raise ArgumentTypeError(f"cache={cache!r}: expected a file name")
    for c in (cache, cache + ".json"):
        if os.path.isfile(c):
            return os.path.abspath(c)
    raise UnsupportedError(f"cache={cache!r}: no such file (simulation_mode replays an existing Kernel Tuner "
                           "cache file)")


def _ranks(ranks):
    if isinstance(ranks, bool) or not isinstance(ranks, int) or ranks < 1:
        raise ArgumentTypeError(f"ranks={ranks!r}: expected a positive int (MPI ranks: 1 coordinates and "
                                "evaluates; N > 1: 1 coordinator and N-1 workers)")
    return ranks


def _device_env(device, evaluator):
    env = dict(os.environ)
    if isinstance(device, bool) or not isinstance(device, int) or device < 0:
        raise ArgumentTypeError(f"device={device!r}: expected a device index (an int >= 0)")
    if device == 0 or evaluator == "sim":
        return env
    if evaluator == "cpu":
        _refuse("device", device, "the cpu evaluator runs on the CPU of each worker rank")
    env["HIP_VISIBLE_DEVICES" if evaluator == "hip" else "CUDA_VISIBLE_DEVICES"] = str(device)
    return env


def _number_option(name, v):
    if v is None:
        return []
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v < 0:
        raise ArgumentTypeError(f"{name}={v!r}: expected a number >= 0")
    return [f"--{name}", str(v)]


def _print_results(results, names):
    for r in results:
        params = ", ".join(f"{n}={r[n]}" for n in names)
        what = f"{r['time']:.6g} ms" if r["status"] == "ok" else f"{r['time']} ({r['error'][:200]})"
        sys.stderr.write(f"{params}: {what}\n")


def write_problem(workdir, kernel_name, kernel_source, problem_size, arguments, tune_params, grid_div_x=None,
                  grid_div_y=None, grid_div_z=None, restrictions=None, answer=None, atol=1e-6, lang=None,
                  smem_args=None, cmem_args=None, compiler_options=None, iterations=7, block_size_names=None):
    """writes the T1 problem of a Kernel Tuner description (and its data files) into workdir and returns
    the T1 file's path: `mpiexec.mpich -n N mptune tune PATH --log run.h5 ...` then tunes it anywhere"""
    prob = t1.build(kernel_name, kernel_source, problem_size, arguments, tune_params,
                    (grid_div_x, grid_div_y, grid_div_z), block_size_names, restrictions, answer, atol, lang,
                    smem_args, cmem_args, compiler_options, iterations)
    return prob.write(workdir)


def tune_kernel(kernel_name, kernel_source, problem_size, arguments, tune_params, grid_div_x=None,
                grid_div_y=None, grid_div_z=None, restrictions=None, answer=None, atol=1e-6, verify=None,
                verbose=False, lang=None, device=0, platform=0, smem_args=None, cmem_args=None, texmem_args=None,
                compiler=None, compiler_options=None, defines=None, log=None, iterations=7, block_size_names=None,
                quiet=False, strategy=None, strategy_options=None, cache=None, metrics=None,
                simulation_mode=False, observers=None, objective=None, objective_higher_is_better=None, *,
                ranks=1, workdir=None, seed=None, timeout=None):
    """Tunes a kernel as Kernel Tuner's tune_kernel does, with mptune: returns (results, env).

    Kernel Tuner's arguments keep their meaning (python/README.md lists what is supported; the rest is
    refused with a message, never ignored). `platform` (OpenCL) and `log` (Python logging) have no
    effect. mptune's own, keyword-only: `ranks` (MPI ranks: 1, the default, coordinates and evaluates
    in one process; N > 1 is 1 coordinator and N-1 workers, one device each), `workdir` (where the T1
    file, its data files and the run log `run.h5` are written; default a temporary directory, removed
    after a successful run and kept when it fails), `seed`, `timeout` (seconds before a variant counts
    as hung).

    results: one dict per evaluation (mptune.read_log); env: the run's environment (mptune.read_env) plus
    kernel_name, workdir (None once a temporary one is removed), command (the mptune command line) and
    strategy as given."""
    _check_unsupported(verify, texmem_args, compiler, defines, metrics, observers, objective,
                       objective_higher_is_better, cache, simulation_mode)
    ranks = _ranks(ranks)
    plan = Plan(strategy, strategy_options)
    simulate = _cache_file(cache) if simulation_mode else None
    prob = t1.build(kernel_name, kernel_source, problem_size, arguments, tune_params,
                    (grid_div_x, grid_div_y, grid_div_z), block_size_names, restrictions, answer, atol, lang,
                    smem_args, cmem_args, compiler_options, iterations)
    evaluator = "sim" if simulate else prob.evaluator
    env = _device_env(device, evaluator)
    extra = _number_option("seed", seed) + _number_option("timeout", timeout)
    mptune, mpiexec = runner.find_mptune(), runner.find_mpiexec()
    keep = workdir is not None
    wd = os.path.abspath(workdir) if keep else tempfile.mkdtemp(prefix="mptune-")
    path = prob.write(wd)
    size = runner.space_size(mptune, path, wd) if plan.needs_space_size() else None
    cmd = [mpiexec, "-n", str(ranks), mptune, "tune", t1.PROBLEM_FILE, "--log", LOG_FILE, "--force",
           "--progress", "off" if quiet else "lines"]
    cmd += ["--simulate", simulate] if simulate else ["--evaluator", evaluator]
    cmd += plan.arguments(size) + extra
    rc, tail = runner.stream(cmd, wd, env, quiet)
    runner.check(rc, tail, "mptune tune", wd)
    log_path = os.path.join(wd, LOG_FILE)
    results, run_env = read_log(log_path), read_env(log_path)
    if verbose:
        _print_results(results, list(tune_params))
    run_env.update(kernel_name=kernel_name, strategy=plan.given, mptune_strategy=run_env["strategy"],
                   workdir=wd, command=cmd, ranks=ranks)
    if not keep:
        shutil.rmtree(wd, ignore_errors=True)
        run_env.update(workdir=None, log=None)
    return results, run_env


NO_OUTPUTS = ("mptune's run_kernel returns the timing of one configuration, not the kernel's output arrays: "
              "mptune does not hand a kernel's outputs back. Check them with tune_kernel(..., answer=[...]); "
              "read the timing as result['time'], result['times']")


class KernelRun:
    """What run_kernel returns: the one configuration's result (`result`, a dict as in tune_kernel's
    results; `r["time"]`, `r["times"]` read it) and the run's environment (`env`). Indexing it by position
    or unpacking it, as Kernel Tuner's list of output arrays, raises TypeError with NO_OUTPUTS."""

    def __init__(self, result, env):
        self.result = result
        self.env = env

    def __getitem__(self, key):
        if isinstance(key, (int, slice)):
            raise TypeError(NO_OUTPUTS)
        return self.result[key]

    def __iter__(self):
        raise TypeError(NO_OUTPUTS)

    def __len__(self):
        raise TypeError(NO_OUTPUTS)

    def __repr__(self):
        return f"KernelRun({self.result!r})"


def run_kernel(kernel_name, kernel_source, problem_size, arguments, params, grid_div_x=None, grid_div_y=None,
               grid_div_z=None, lang=None, device=0, platform=0, smem_args=None, cmem_args=None, texmem_args=None,
               compiler=None, compiler_options=None, defines=None, block_size_names=None, quiet=False, log=None, *,
               ranks=1, workdir=None, timeout=None, iterations=7):
    """Runs one configuration (params: name -> value) as a tune over that configuration alone and returns
    a KernelRun: its timing (`r["time"]`, `r["times"]`, ms), not Kernel Tuner's output arrays (mptune
    does not hand a kernel's outputs back; indexing the KernelRun by position raises TypeError saying
    so). A configuration that fails (compile error, crash, ...) raises KernelRunError, as Kernel Tuner
    raises."""
    if not isinstance(params, dict):
        raise ArgumentTypeError(f"params: expected a dict of tune param -> value, got {type(params).__name__}")
    for k, v in params.items():
        if isinstance(v, (list, tuple, dict, set)):
            raise ArgumentTypeError(f"params[{k!r}]: expected one value (run_kernel runs one configuration)")
    try:
        results, env = tune_kernel(kernel_name, kernel_source, problem_size, arguments,
                                   {k: [v] for k, v in params.items()}, grid_div_x, grid_div_y, grid_div_z, lang=lang,
                                   device=device, platform=platform, smem_args=smem_args, cmem_args=cmem_args,
                                   texmem_args=texmem_args, compiler=compiler, compiler_options=compiler_options,
                                   defines=defines, log=log, iterations=iterations, block_size_names=block_size_names,
                                   quiet=quiet, strategy="brute_force", strategy_options={"max_fevals": 1},
                                   ranks=ranks, workdir=workdir, timeout=timeout)
    except RunError as e:
        if e.returncode is None:  # mptune did not run
            raise
        # the one configuration is the problem's default, which mptune opens first: a compile error stops it
        raise KernelRunError(f"run_kernel: the configuration {params} failed: {e}") from e
    if len(results) != 1:
        raise KernelRunError(f"run_kernel: expected one result, the run log holds {len(results)}")
    r = results[0]
    if r["status"] != "ok":
        raise KernelRunError(f"run_kernel: the configuration {params} failed: {r['status']}: {r['error']}", r)
    return KernelRun(r, env)
