#!/usr/bin/env python3
"""tests/python_frontend.py: the Python front-end's translation of Kernel Tuner's arguments into a T1
problem (python/mptune/problem.py) and its refusals. The T1 files written are read back: argument types,
sizes and data files byte for byte, the answer as reference arguments with atol, restrictions as
Conditions (mptune's own `space` finds as many valid configurations as Python's evaluation of the
restrictions), the launch fields as Kernel Tuner computes the launch (block size names, grid_div), a GPU
problem valid against the T1 schema. Every argument mptune cannot honour (a lambda restriction, a Python
int as a kernel argument, verify=, cache= without simulation_mode, ...) is refused with a message naming
it, before any file is written; the strategy names and options become mptune's options."""
import itertools
import json
import os
import subprocess
import sys
import tempfile

import jsonschema
import numpy as np

import mptune
from mptune.strategy import KERNEL_TUNER_NAMES, Plan
from checks import check, exit_code

MPTUNE = os.environ["MPTUNE"]
SCHEMA = os.path.join(os.environ["MPT_SHARED_DATA"], "schemas", "T1-input-1.0.0.json")
VECTOR_ADD = """
#include <stdint.h>
void vector_add(float *c, const float *a, const float *b, int32_t n) {
    for (int32_t i = 0; i < n; i++) c[i] = a[i] + b[i];
}
"""
STENCIL = "__global__ void stencil(float *out, const float *in) { }\n"


def refused(exc_type, words, fn, *args, **kwargs):
    """calls fn, which must raise exc_type with every one of words in its message; the message"""
    try:
        fn(*args, **kwargs)
    except exc_type as e:
        msg = str(e)
        check(all(w in msg for w in words), f"the refusal {msg!r} lacks one of {words}")
        print(f"refused as expected: {msg}")
        return msg
    except Exception as e:  # noqa: BLE001 - any other exception is a failure of the test
        check(False, f"expected {exc_type.__name__} with {words}, got {type(e).__name__}: {e}")
        return ""
    check(False, f"expected {exc_type.__name__} with {words}, nothing was raised")
    return ""


def read(path):
    with open(path) as f:
        return json.load(f)


def file_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def python_valid_count(tune_params, restrictions):
    """the valid configurations as Kernel Tuner counts them: every restriction evaluated by Python"""
    names = list(tune_params)
    return sum(all(eval(r, {}, dict(zip(names, values))) for r in restrictions)
               for values in itertools.product(*tune_params.values()))


def mptune_valid_count(problem_path):
    p = subprocess.run([MPTUNE, "space", problem_path, "--json"], capture_output=True, text=True)
    check(p.returncode == 0, f"mptune space {problem_path}: {p.stderr}")
    return json.loads(p.stdout.splitlines()[-1])["valid"] if p.returncode == 0 else -1


def vector_add_args(n=1000):
    rng = np.random.default_rng(1)
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    return [np.zeros_like(a), a, b, np.int32(n)], a + b


def test_vector_add(tmp):
    """arguments, data files, answer and atol, restrictions"""
    args, answer = vector_add_args()
    params = {"block_size_x": [16, 32, 64, 128], "unroll": [1, 2, 4, 8], "vec": [1, 4]}
    restrictions = ["block_size_x >= 8 * unroll", "vec == 1 or block_size_x % (vec * unroll) == 0"]
    wd = os.path.join(tmp, "va")
    path = mptune.write_problem(wd, "vector_add", VECTOR_ADD, 1000, args, params, restrictions=restrictions,
                                answer=[answer, None, None, None], atol=1e-4, lang="C")
    p = read(path)
    k = p["KernelSpecification"]
    check(k["Language"] == "C" and k["KernelName"] == "vector_add" and k["KernelFile"] == "kernel.c",
          f"the kernel fields: {k}")
    with open(os.path.join(wd, "kernel.c")) as f:
        check(f.read() == VECTOR_ADD, "the kernel source written")
    a0, a3 = k["Arguments"][0], k["Arguments"][3]
    check(a0 == {"Name": "arg0", "Type": "float", "MemoryType": "Vector", "AccessType": "ReadWrite", "Size": 1000,
                 "FillType": "BinaryRaw", "DataSource": "arg0.bin", "Output": 1}, f"arguments[0]: {a0}")
    check(a3 == {"Name": "arg3", "Type": "int32", "MemoryType": "Scalar", "FillValue": 1000, "Output": 0},
          f"arguments[3]: {a3}")
    check([a["Output"] for a in k["Arguments"]] == [1, 0, 0, 0], "only the answered argument is an output")
    for i in range(3):
        check(file_bytes(os.path.join(wd, f"arg{i}.bin")) == args[i].tobytes(), f"arg{i}.bin holds arguments[{i}]")
    check(k["ReferenceArguments"] == [{"Name": "answer0", "TargetName": "arg0", "FillType": "BinaryRaw",
                                       "DataSource": "answer0.bin"}], f"the references: {k.get('ReferenceArguments')}")
    check(file_bytes(os.path.join(wd, "answer0.bin")) == answer.tobytes(), "answer0.bin holds the answer")
    check(k["Tolerance"] == {"Atol": 1e-4, "Rtol": 1e-5}, f"atol: {k['Tolerance']}")
    conds = p["ConfigurationSpace"]["Conditions"]
    check(conds == [{"Expression": restrictions[0], "Parameters": ["block_size_x", "unroll"]},
                    {"Expression": restrictions[1], "Parameters": ["block_size_x", "unroll", "vec"]}],
          f"the conditions: {conds}")
    tps = p["ConfigurationSpace"]["TuningParameters"]
    check(tps[0] == {"Name": "block_size_x", "Type": "int", "Values": "[16, 32, 64, 128]", "Default": 16},
          f"a tune param: {tps[0]}")
    want = python_valid_count(params, restrictions)
    got = mptune_valid_count(path)
    check(got == want, f"mptune finds {got} valid configurations, Python's restrictions {want}")
    # without an answer nothing is checked (Kernel Tuner's behaviour): no output, no reference
    path = mptune.write_problem(os.path.join(tmp, "va2"), "vector_add", VECTOR_ADD, 1000, args, params, lang="C")
    k = read(path)["KernelSpecification"]
    check(all(a["Output"] == 0 for a in k["Arguments"]) and "ReferenceArguments" not in k,
          "no answer: no argument is checked")


def test_types(tmp):
    """numpy dtypes and scalar types, byte order, tune param types"""
    be = np.arange(5, dtype=">f4")
    args = [np.zeros(3, np.float64), np.zeros(4, np.complex64), np.ones(2, np.bool_), np.zeros(6, np.float16),
            be, np.uint64(2 ** 40), np.float32(0.25), np.int8(-3), np.bool_(True), np.arange(6, dtype=np.int64)
            .reshape(2, 3)]
    params = {"f": [0.5, 1], "flag": [True, False], "mode": ["a", "b'c"], "n": [np.int64(3)]}
    wd = os.path.join(tmp, "types")
    path = mptune.write_problem(wd, "k", "void k() {}", 10, args, params, lang="C")
    p = read(path)
    ks = p["KernelSpecification"]["Arguments"]
    got = [(a["Type"], a["MemoryType"], a.get("Size"), a.get("FillValue")) for a in ks]
    want = [("double", "Vector", 3, None), ("float2", "Vector", 4, None), ("bool", "Vector", 2, None),
            ("half", "Vector", 6, None), ("float", "Vector", 5, None), ("uint64", "Scalar", None, 2 ** 40),
            ("float", "Scalar", None, 0.25), ("int8", "Scalar", None, -3), ("bool", "Scalar", None, 1),
            ("int64", "Vector", 6, None)]
    check(got == want, f"the argument types: {got}")
    check(file_bytes(os.path.join(wd, "arg4.bin")) == np.arange(5, dtype="<f4").tobytes(),
          "a big-endian array is written little-endian")
    check(file_bytes(os.path.join(wd, "arg1.bin")) == args[1].tobytes(), "complex64 as float2, lane by lane")
    tps = {t["Name"]: (t["Type"], t["Values"], t["Default"]) for t in p["ConfigurationSpace"]["TuningParameters"]}
    check(tps == {"f": ("float", "[0.5, 1.0]", 0.5), "flag": ("bool", "[True, False]", True),
                  "mode": ("string", "['a', \"b'c\"]", "a"), "n": ("int", "[3]", 3)}, f"tune param types: {tps}")
    check(mptune_valid_count(path) == 8, "mptune reads every tune param type")


def test_launch(tmp):
    """launch fields as Kernel Tuner computes the launch; a CUDA problem valid against the T1 schema"""
    out, inp = np.zeros(64, np.float32), np.zeros(64, np.float32)
    params = {"block_size_x": [32, 64], "block_size_y": [1, 2], "tile": [1, 2]}
    path = mptune.write_problem(os.path.join(tmp, "st"), "stencil", STENCIL, (8, 8), [out, inp], params,
                                restrictions=["block_size_x * block_size_y <= 64"])
    p = read(path)
    k = p["KernelSpecification"]
    check(k["Language"] == "CUDA" and k["KernelFile"] == "kernel.cu", f"a __global__ kernel is CUDA: {k['Language']}")
    check(k["LocalSize"] == {"X": "block_size_x", "Y": "block_size_y", "Z": "1"}, f"LocalSize: {k['LocalSize']}")
    check((k["GridDivX"], k["GridDivY"], k["GridDivZ"]) == (["block_size_x"], ["block_size_y"], []),
          f"the default grid_div: {k['GridDivX']} {k['GridDivY']} {k['GridDivZ']}")
    check(k["ProblemSize"] == [8, 8], f"ProblemSize: {k['ProblemSize']}")
    try:
        with open(SCHEMA) as f:
            jsonschema.validate(p, json.load(f))
    except jsonschema.ValidationError as e:
        check(False, f"the CUDA problem is not valid T1: {e.message}")
    # grid_div given, custom block size names, shared and constant memory, another language
    filt = np.arange(9, dtype=np.float32)
    path = mptune.write_problem(os.path.join(tmp, "st2"), "stencil", STENCIL, (8, 8, 2), [out, inp],
                                {"bx": [32], "by": [2], "tile": [1, 2]}, block_size_names=["bx", "by"],
                                grid_div_x=["bx", "tile"], smem_args={"size": "bx * 4"},
                                cmem_args={"filt": filt}, lang="hip")
    k = read(path)["KernelSpecification"]
    check(k["LocalSize"] == {"X": "bx", "Y": "by", "Z": "1"}, f"custom block size names: {k['LocalSize']}")
    check((k["GridDivX"], k["GridDivY"], k["GridDivZ"]) == (["bx", "tile"], ["by"], []),
          f"grid_div_x given, the others from the names: {k['GridDivX']} {k['GridDivY']} {k['GridDivZ']}")
    check(k["GlobalSize"] == {"X": "ProblemSize[0]", "Y": "ProblemSize[1]", "Z": "ProblemSize[2]"},
          f"GlobalSize: {k['GlobalSize']}")
    check(k["Language"] == "HIP" and k["KernelFile"] == "kernel.hip" and k["SharedMemory"] == "bx * 4",
          f"HIP, smem_args: {k['Language']} {k['KernelFile']} {k.get('SharedMemory')}")
    check(k["Arguments"][2] == {"Name": "filt", "Type": "float", "MemoryType": "Symbol", "AccessType": "ReadOnly",
                                "Size": 9, "FillType": "BinaryRaw", "DataSource": "cmem_filt.bin", "Output": 0},
          f"cmem_args: {k['Arguments'][2]}")
    # no block size parameter: Kernel Tuner's 256 threads
    path = mptune.write_problem(os.path.join(tmp, "st3"), "stencil", STENCIL, 8, [out], {"tile": [1, 2]})
    k = read(path)["KernelSpecification"]
    check(k["LocalSize"]["X"] == "256" and k["GridDivX"] == [], f"no block_size_x: {k['LocalSize']} {k['GridDivX']}")
    # the kernel from files: the kernel's path, the directories of the files it includes on the include path
    src_dir = os.path.join(tmp, "src")
    os.makedirs(os.path.join(src_dir, "inc"))
    kernel_file, header = os.path.join(src_dir, "k.cu"), os.path.join(src_dir, "inc", "h.cuh")
    for name in (kernel_file, header):
        with open(name, "w") as f:
            f.write(STENCIL)
    path = mptune.write_problem(os.path.join(tmp, "st4"), "stencil", [kernel_file, header], 8, [out],
                                {"block_size_x": [32]}, compiler_options=["-use_fast_math"])
    k = read(path)["KernelSpecification"]
    check(k["KernelFile"] == kernel_file and k["CompilerOptions"] == ["-use_fast_math", f"-I{src_dir}",
                                                                      f"-I{os.path.join(src_dir, 'inc')}"],
          f"the kernel from files: {k['KernelFile']} {k['CompilerOptions']}")


def tune(**kw):
    """tune_kernel of a small C vector add with kw replacing its arguments"""
    args, answer = vector_add_args(16)
    base = dict(kernel_name="vector_add", kernel_source=VECTOR_ADD, problem_size=16, arguments=args,
                tune_params={"block_size_x": [16, 32]}, lang="C")
    base.update(kw)
    return mptune.tune_kernel(**base)


def test_refusals(tmp):
    """every refusal names the argument and what to do, and writes nothing"""
    wd = os.path.join(tmp, "never")
    args, answer = vector_add_args(16)
    U, T = mptune.UnsupportedError, mptune.ArgumentTypeError
    msg = refused(U, ["restrictions[1]", "write the restriction as a string"], tune, workdir=wd,
                  restrictions=["block_size_x > 8", lambda p: p["block_size_x"] > 16])
    check(msg.startswith("restrictions[1]: a Python function (<lambda>) cannot cross to mptune's C search"),
          f"the lambda's message: {msg}")
    msg = refused(U, ["restrictions[0]", "column 15"], tune, workdir=wd, restrictions=["block_size_x >"])
    check(msg.endswith("block_size_x >\n" + " " * 16 + "^"), f"the caret under the column: {msg!r}")
    refused(T, ["arguments[3]", "Python int", "np.int32(x)"], tune, workdir=wd, arguments=args[:3] + [16])
    refused(T, ["arguments[1]", "np.float32(x)"], tune, workdir=wd, arguments=[args[0], 1.5])
    refused(T, ["arguments[1]", "expected a numpy array or a numpy scalar, got list"], tune, workdir=wd,
            arguments=[args[0], [1.0, 2.0]])
    refused(T, ["arguments[0]", "object"], tune, workdir=wd, arguments=[np.array([None, 1])])
    refused(T, ["arguments[0]", "<U1"], tune, workdir=wd, arguments=[np.array(["a", "b"])])
    refused(U, ["arguments[0]", "C-contiguous"], tune, workdir=wd, arguments=[np.zeros((4, 4), np.float32).T])
    refused(T, ["arguments:", "got ndarray"], tune, workdir=wd, arguments=args[0])
    refused(T, ["answer[0]", "float64", "float32"], tune, workdir=wd,
            answer=[answer.astype(np.float64), None, None, None])
    refused(U, ["answer", "3 entries for 4 arguments"], tune, workdir=wd, answer=[answer, None, None])
    refused(U, ["answer[3]", "scalar"], tune, workdir=wd, answer=[None, None, None, np.zeros(1, np.int32)])
    refused(U, ["verify=<function <lambda>>", "answer="], tune, workdir=wd, answer=[answer, None, None, None],
            verify=lambda a, b, atol: True)
    refused(U, ["cache", "run log", "simulation_mode"], tune, workdir=wd, cache="vector_add_cache.json")
    refused(U, ["strategy='annealing'", "simulated_annealing"], tune, workdir=wd, strategy="annealing")
    refused(U, ["lang='OpenCL'"], tune, workdir=wd, lang="OpenCL")
    refused(U, ["defines", "compiler_options"], tune, workdir=wd, defines={"N": 16})
    refused(U, ["compiler", "PATH"], tune, workdir=wd, compiler="icx")
    refused(U, ["iterations=40", "1 to 32"], tune, workdir=wd, iterations=40)
    refused(U, ["grid_div_x", "list of expressions"], tune, workdir=wd, grid_div_x=lambda p: 16)
    refused(U, ["problem_size", "Python function"], tune, workdir=wd, problem_size=lambda p: 16)
    refused(T, ["tune_params", "dict"], tune, workdir=wd, tune_params=[("block_size_x", [16])])
    refused(T, ["tune_params['block_size_x']", "list of values"], tune, workdir=wd, tune_params={"block_size_x": 16})
    refused(U, ["fraction", "random_sample"], tune, workdir=wd, strategy="genetic_algorithm",
            strategy_options={"fraction": 0.5})
    refused(U, ["max_fevals", "positive integer"], tune, workdir=wd, strategy_options={"max_fevals": 0})
    refused(T, ["atol"], tune, workdir=wd, atol=-1.0)
    refused(U, ["cmem_args", "GPUs only"], tune, workdir=wd, cmem_args={"f": np.zeros(2, np.float32)})
    refused(T, ["ranks"], tune, workdir=wd, ranks=0)
    refused(U, ["objective"], tune, workdir=wd, objective="GFLOP/s")
    refused(U, ["device=1", "cpu evaluator"], tune, workdir=wd, device=1)
    check(not os.path.exists(wd), "a refused call wrote its work directory")


def test_strategy_plans():
    """Kernel Tuner's strategy names and options as mptune's command-line options"""
    want = {"brute_force": "brute_force", "random_sample": "random", "bayes_opt": "bo", "genetic_algorithm": "ga",
            "diff_evo": "de", "firefly_algorithm": "firefly", "simulated_annealing": "sa", "pso": "pso", "mls": "mls"}
    check(KERNEL_TUNER_NAMES == want, f"the names: {KERNEL_TUNER_NAMES}")
    for kt, name in want.items():
        check(Plan(kt, {"max_fevals": 9}).arguments(None) == ["--strategy", name, "--budget", "9"], f"{kt}'s arguments")
        check(Plan(name, {"max_fevals": 9}).arguments(None)[1] == name, f"mptune's own name {name}")
    cases = [
        (Plan(None, None), 500, ["--strategy", "brute_force", "--budget", "500"]),
        (Plan("random_sample", None), 4362, ["--strategy", "random", "--budget", "436"]),
        (Plan("random_sample", {"fraction": 0.5}), 11, ["--strategy", "random", "--budget", "6"]),
        (Plan("bayes_opt", None), None, ["--strategy", "bo", "--budget", "100"]),
        (Plan("genetic_algorithm", {"max_fevals": 50, "time_limit": 2.5, "popsize": 10, "method": "uniform"}), None,
         ["--strategy", "ga", "--budget", "50", "--time", "2.5", "--option", "popsize=10", "--option",
          "method=uniform"]),
        (Plan("pso", {"time_limit": 3, "c1": 2.0}), None, ["--strategy", "pso", "--time", "3", "--option", "c1=2.0"]),
        (Plan("bayes_opt", {"max_fevals": 5, "fit_hyperparameters": True}), None,
         ["--strategy", "bo", "--budget", "5", "--option", "fit_hyperparameters=1"]),
    ]
    for plan, size, args in cases:
        got = plan.arguments(size)
        check(got == args, f"{plan.given}: {got}, expected {args}")
    check(Plan(None, None).needs_space_size() and not Plan("bayes_opt", None).needs_space_size(),
          "only brute force and fractions need the space size")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        test_vector_add(tmp)
        test_types(tmp)
        test_launch(tmp)
        test_refusals(tmp)
        test_strategy_plans()
    return exit_code()


if __name__ == "__main__":
    sys.exit(main())
