#!/usr/bin/env python3
"""scripts/gpu_crosscheck.py PROBLEM.json CONFIG_JSON [REPEATS]: an independent timing of one configuration of a
CUDA T1 problem with CuPy (cupy.RawModule + CUDA events, median of REPEATS runs, 50 by default), to cross-check
the times mptune measured (scripts/gpu-check.sh). CONFIG_JSON is {"name": value, ...} for every tuning parameter.
The kernel is prepared as mptune prepares it: one "#define name value" per parameter, block_size_x/y/z,
grid_size_x/y/z and kernel_tuner=1, then "#line 1" and the source; the grid from the KernelSpecification's
GlobalSize (CUDA: in blocks) or ProblemSize / GridDiv. Sizes and grid expressions are evaluated as Python with the
problem size and the configuration (in a Size expression, a parameter stands for its list of values: max(p)).
Arguments are filled as their FillType says (random values from numpy's seeded generator, or constants);
symbols are copied into the module's global. Prints one JSON line: {"median_ms": ..., "mean_ms": ..., "runs": N}.
Needs python3 with numpy and CuPy (the GPU machines have both)."""
import json
import math
import os
import sys

import numpy as np

DTYPES = {"float": np.float32, "double": np.float64, "int": np.int32, "int32": np.int32, "int64": np.int64,
          "uint32": np.uint32, "float32": np.float32, "float64": np.float64, "char": np.int8, "bool": np.int8}


def param_values(problem):
    env = {}
    for p in problem["ConfigurationSpace"]["TuningParameters"]:
        v = p["Values"]
        env[p["Name"]] = eval(v, {"__builtins__": {}}, {}) if isinstance(v, str) else v
    return env


def launch(ks, cfg):
    ps = ks.get("ProblemSize", [1])
    env = dict(cfg, ProblemSize=ps, max=max, min=min, math=math)
    local = ks.get("LocalSize", {})
    block = [int(eval(str(local.get(a, "1")), {"__builtins__": {}}, env)) for a in "XYZ"]
    glob = ks.get("GlobalSize")
    if glob and ks.get("GlobalSizeType", "CUDA") == "CUDA":
        grid = [int(eval(str(glob.get(a, "1")), {"__builtins__": {}}, env)) for a in "XYZ"]
    else:
        grid = []
        for k, a in enumerate("XYZ"):
            size = ps[k] if k < len(ps) else 1
            div = 1
            for name in ks.get("GridDiv" + a, ["block_size_" + a.lower()] if k < len(ps) else []):
                div *= int(cfg.get(name, block[k] if name == "block_size_" + a.lower() else 1))
            grid.append(max(1, -(-size // div)))
    return block, grid


def source(problem_dir, ks, cfg, block, grid):
    with open(os.path.join(problem_dir, ks["KernelFile"])) as f:
        body = f.read()
    defines = dict(cfg)
    for k, a in enumerate("xyz"):
        defines.setdefault("block_size_" + a, block[k])
        defines["grid_size_" + a] = grid[k]
    defines.setdefault("kernel_tuner", 1)
    lines = ["#define %s %s" % (k, int(v) if isinstance(v, bool) else v) for k, v in defines.items()]
    return "\n".join(lines) + "\n#line 1\n" + body


def make_args(cp, mod, ks, values):
    ps = ks.get("ProblemSize", [1])
    env = dict(values, ProblemSize=ps, max=max, min=min)
    args = []
    for a in ks["Arguments"]:
        dt = DTYPES.get(a.get("Type", "float"), np.float32)
        if a.get("MemoryType") == "Scalar":
            args.append(dt(a.get("FillValue", 0)))
            continue
        n = int(eval(str(a.get("Size", 1)), {"__builtins__": {}}, env))
        if a.get("FillType") == "Random":
            host = np.random.default_rng(a.get("RandomSeed", 0)).random(n).astype(dt) * dt(a.get("FillValue", 1))
        else:
            host = np.full(n, a.get("FillValue", 0), dtype=dt)
        if a.get("MemoryType") == "Symbol" or a.get("MemType") == "Constant":
            ptr = mod.get_global(a["Name"])
            cp.ndarray(host.shape, dt, ptr).set(host)
            continue
        args.append(cp.asarray(host))
    return args


def main():
    if len(sys.argv) < 3:
        sys.exit("usage: gpu_crosscheck.py PROBLEM.json CONFIG_JSON [REPEATS]")
    import cupy as cp
    path, cfg = sys.argv[1], json.loads(sys.argv[2])
    repeats = int(sys.argv[3]) if len(sys.argv) > 3 else 50
    with open(path) as f:
        problem = json.load(f)
    ks = problem["KernelSpecification"]
    block, grid = launch(ks, cfg)
    src = source(os.path.dirname(os.path.abspath(path)), ks, cfg, block, grid)
    mod = cp.RawModule(code=src, options=tuple(ks.get("CompilerOptions", [])))
    fn = mod.get_function(ks["KernelName"])
    args = make_args(cp, mod, ks, param_values(problem))
    shared = int(ks.get("SharedMemory", 0) or 0)
    fn(tuple(grid), tuple(block), tuple(args), shared_mem=shared)  # warm-up
    cp.cuda.Device().synchronize()
    start, end = cp.cuda.Event(), cp.cuda.Event()
    times = []
    for _ in range(repeats):
        start.record()
        fn(tuple(grid), tuple(block), tuple(args), shared_mem=shared)
        end.record()
        end.synchronize()
        times.append(cp.cuda.get_elapsed_time(start, end))
    print(json.dumps({"median_ms": float(np.median(times)), "mean_ms": float(np.mean(times)), "runs": repeats,
                      "grid": grid, "block": block}))


if __name__ == "__main__":
    main()
