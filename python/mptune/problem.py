"""mptune.problem: Kernel Tuner's description of a kernel (source, problem size, numpy arguments, tune
params, restrictions, answer, ...) turned into a T1 problem file and its data files in a work directory
(docs/KERNELS.md says how mptune reads them). Everything that cannot cross to mptune is refused here, with
a message naming the argument, before anything runs."""
import ast
import json
import math
import os

import numpy as np

from .errors import ArgumentTypeError, UnsupportedError

PROBLEM_FILE = "problem.json"
DEFAULT_BLOCK_SIZE_NAMES = ("block_size_x", "block_size_y", "block_size_z")
# Kernel Tuner's thread block when a block size parameter is missing (get_thread_block_dimensions)
DEFAULT_BLOCK = ("256", "1", "1")
LANGUAGES = {"c": ("C", "cpu", "kernel.c"), "cuda": ("CUDA", "cuda", "kernel.cu"), "hip": ("HIP", "hip", "kernel.hip")}
# numpy dtype -> T1 Type (complex numbers as the vector types of their two parts, lane by lane)
DTYPES = {
    np.dtype(np.bool_): "bool", np.dtype(np.int8): "int8", np.dtype(np.uint8): "uint8",
    np.dtype(np.int16): "int16", np.dtype(np.uint16): "uint16", np.dtype(np.int32): "int32",
    np.dtype(np.uint32): "uint32", np.dtype(np.int64): "int64", np.dtype(np.uint64): "uint64",
    np.dtype(np.float16): "half", np.dtype(np.float32): "float", np.dtype(np.float64): "double",
    np.dtype(np.complex64): "float2", np.dtype(np.complex128): "double2",
}
SCALAR_DTYPES = {d: t for d, t in DTYPES.items() if d.kind != "c"}
MAX_ITERATIONS = 32  # mptune times at most 32 iterations per evaluation


class Problem:
    """A T1 problem (`t1`, a dict) with the files it names (`files`: name -> numpy array or text) and the
    evaluator that runs its language."""

    def __init__(self, t1, files, evaluator):
        self.t1 = t1
        self.files = files
        self.evaluator = evaluator

    def write(self, workdir):
        """writes the data files and the T1 file into workdir; the T1 file's path"""
        os.makedirs(workdir, exist_ok=True)
        for name, data in self.files.items():
            path = os.path.join(workdir, name)
            if isinstance(data, str):
                with open(path, "w", encoding="utf-8") as f:
                    f.write(data)
            else:
                little = data.astype(data.dtype.newbyteorder("<"), copy=False)
                little.tofile(path)
        path = os.path.join(workdir, PROBLEM_FILE)
        with open(path, "w", encoding="utf-8") as f:
            json.dump(self.t1, f, indent=1, allow_nan=False)
            f.write("\n")
        return path


def _is_callable(x):
    return callable(x) and not isinstance(x, (str, bytes, np.ndarray))


def language(lang, source_text):
    """(T1 Language, evaluator, kernel file name) of Kernel Tuner's `lang` (None: detected from the source
    as Kernel Tuner does)"""
    if lang is None:
        if "__global__" in source_text:
            lang = "CUDA"
        elif "__kernel" in source_text:
            lang = "OpenCL"
        else:
            lang = "C"
    if not isinstance(lang, str):
        raise ArgumentTypeError(f"lang={lang!r}: expected a string (\"C\", \"CUDA\" or \"HIP\")")
    if lang.lower() not in LANGUAGES:
        raise UnsupportedError(f"lang={lang!r}: mptune runs C kernels (the cpu evaluator), CUDA and HIP "
                               "kernels; OpenCL, Fortran, CuPy and NVCUDA are not supported")
    return LANGUAGES[lang.lower()]


def _looks_like_a_file(s):
    return isinstance(s, str) and "\n" not in s and (os.path.isfile(s) or os.path.splitext(s)[1] in
                                                     (".c", ".cu", ".cpp", ".cc", ".h", ".hip", ".cl", ".cuh"))


def kernel_source_files(kernel_source):
    """(kernel file path or None, source text, include directories) of Kernel Tuner's kernel_source: the
    code as a string, a file name, or a list of file names (the kernel first, then the files it
    includes)"""
    sources = kernel_source if isinstance(kernel_source, (list, tuple)) else [kernel_source]
    if not sources:
        raise UnsupportedError("kernel_source: an empty list (give the code, or the kernel file first)")
    for i, s in enumerate(sources):
        if not isinstance(s, str):
            what = "kernel_source" if not isinstance(kernel_source, (list, tuple)) else f"kernel_source[{i}]"
            raise ArgumentTypeError(f"{what}: expected the kernel's code or a file name (a string), got "
                                    f"{type(s).__name__}")
    if len(sources) == 1 and not _looks_like_a_file(sources[0]):
        return None, sources[0], []
    dirs = []
    for s in sources:
        if not os.path.isfile(s):
            raise UnsupportedError(f"kernel_source: no such file: {s}")
        d = os.path.dirname(os.path.abspath(s))
        if d not in dirs:
            dirs.append(d)
    with open(sources[0], encoding="utf-8", errors="replace") as f:
        text = f.read()
    return os.path.abspath(sources[0]), text, dirs


def _plain(v):
    """a Python value of a numpy scalar (tune param values, sizes)"""
    return v.item() if isinstance(v, np.generic) else v


def param_type_and_values(name, values):
    """(T1 Type, Values expression) of one tune param"""
    if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
        raise ArgumentTypeError(f"tune_params[{name!r}]: expected a list of values, got {type(values).__name__}")
    vals = [_plain(v) for v in values]
    if not vals:
        raise UnsupportedError(f"tune_params[{name!r}]: no values")
    if all(isinstance(v, bool) for v in vals):
        kind = "bool"
    elif all(isinstance(v, int) and not isinstance(v, bool) for v in vals):
        kind = "int"
    elif all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in vals):
        kind = "float"
        if not all(math.isfinite(v) for v in vals):
            raise UnsupportedError(f"tune_params[{name!r}]: values must be finite numbers")
        vals = [float(v) for v in vals]
    elif all(isinstance(v, str) for v in vals):
        kind = "string"
    else:
        raise ArgumentTypeError(f"tune_params[{name!r}]: values must all be ints, floats, bools or strings, got "
                                f"{sorted({type(v).__name__ for v in vals})}")
    return kind, "[" + ", ".join(repr(v) for v in vals) + "]", vals[0]


def tuning_parameters(tune_params):
    if not isinstance(tune_params, dict):
        raise ArgumentTypeError(f"tune_params: expected a dict of name -> list of values, got "
                                f"{type(tune_params).__name__}")
    if not tune_params:
        raise UnsupportedError("tune_params: no parameters to tune")
    out = []
    for name, values in tune_params.items():
        if not isinstance(name, str) or not name.isidentifier():
            raise UnsupportedError(f"tune_params: the name {name!r} is no identifier (it becomes a #define)")
        kind, expr, default = param_type_and_values(name, values)
        out.append({"Name": name, "Type": kind, "Values": expr, "Default": default})
    return out


def conditions(restrictions, tune_params):
    """T1 Conditions of Kernel Tuner's restrictions: Python expressions over the tune params"""
    if restrictions is None:
        return []
    if isinstance(restrictions, str) or _is_callable(restrictions):
        restrictions = [restrictions]
    if not isinstance(restrictions, (list, tuple)):
        raise ArgumentTypeError(f"restrictions: expected a list of expressions (strings), got "
                                f"{type(restrictions).__name__}")
    out = []
    for i, r in enumerate(restrictions):
        if _is_callable(r):
            raise UnsupportedError(
                f"restrictions[{i}]: a Python function ({getattr(r, '__name__', 'callable')}) cannot cross to "
                "mptune's C search: write the restriction as a string, a Python expression over the tune "
                "params, e.g. \"block_size_x * block_size_y <= 1024\"")
        if not isinstance(r, str):
            raise ArgumentTypeError(f"restrictions[{i}]: expected a string (a Python expression over the tune "
                                    f"params), got {type(r).__name__}")
        expr = r.strip()
        try:
            tree = ast.parse(expr, mode="eval")
        except SyntaxError as e:
            col = e.offset if e.offset and 1 <= e.offset <= len(expr) else len(expr) + 1  # 0: at the end
            caret = " " * (col - 1) + "^"
            raise UnsupportedError(f"restrictions[{i}]: column {col}: {e.msg}\n  {expr}\n  {caret}") from None
        used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
        out.append({"Expression": expr, "Parameters": [p for p in tune_params if p in used]})
    return out


def _size_entry(what, v):
    v = _plain(v)
    if _is_callable(v):
        raise UnsupportedError(f"{what}: a Python function cannot cross to mptune: give a number or an "
                               "expression over the tune params as a string")
    if isinstance(v, bool) or not isinstance(v, (int, str)):
        raise ArgumentTypeError(f"{what}: expected an int or an expression (a string), got {type(v).__name__}")
    return v


def problem_size_list(problem_size):
    sizes = problem_size if isinstance(problem_size, (list, tuple)) else [problem_size]
    if not 1 <= len(sizes) <= 3:
        raise UnsupportedError(f"problem_size: {len(sizes)} dimensions (1 to 3)")
    return [_size_entry(f"problem_size[{d}]" if len(sizes) > 1 else "problem_size", v) for d, v in enumerate(sizes)]


def block_names(block_size_names):
    if block_size_names is None:
        return list(DEFAULT_BLOCK_SIZE_NAMES)
    if isinstance(block_size_names, str) or not isinstance(block_size_names, (list, tuple)):
        raise ArgumentTypeError("block_size_names: expected a list of up to 3 parameter names")
    if not 1 <= len(block_size_names) <= 3 or not all(isinstance(n, str) for n in block_size_names):
        raise UnsupportedError("block_size_names: expected 1 to 3 parameter names")
    return list(block_size_names) + list(DEFAULT_BLOCK_SIZE_NAMES[len(block_size_names):])


def launch_fields(problem_size, grid_div, block_size_names, tune_params):
    """ProblemSize, LocalSize, GlobalSize and GridDivX/Y/Z as Kernel Tuner computes the launch: the block
    from the block size parameters (256, 1, 1 where one is missing), the grid ceil(problem size / product
    of grid_div), a missing grid_div the block size parameter of that dimension when it exists"""
    sizes = problem_size_list(problem_size)
    names = block_names(block_size_names)
    local = {k: (names[d] if names[d] in tune_params else DEFAULT_BLOCK[d]) for d, k in enumerate("XYZ")}
    glob = {k: (f"ProblemSize[{d}]" if d < len(sizes) else "1") for d, k in enumerate("XYZ")}
    fields = {"ProblemSize": sizes, "LocalSize": local, "GlobalSize": glob}
    for d, k in enumerate("XYZ"):
        div = grid_div[d]
        what = f"grid_div_{k.lower()}"
        if div is None:
            div = [names[d]] if names[d] in tune_params else []
        elif _is_callable(div):
            raise UnsupportedError(f"{what}: a Python function cannot cross to mptune: give a list of "
                                   "expressions over the tune params (strings)")
        elif isinstance(div, (str, int)) or not isinstance(div, (list, tuple)):
            raise ArgumentTypeError(f"{what}: expected a list of expressions (strings), e.g. [\"block_size_x\"]")
        fields["GridDiv" + k] = [str(_size_entry(f"{what}[{i}]", v)) for i, v in enumerate(div)]
    return fields


def _scalar_entry(i, x):
    dtype = np.dtype(type(x))
    if dtype not in SCALAR_DTYPES:
        raise ArgumentTypeError(f"arguments[{i}]: a numpy {dtype} scalar has no kernel type in mptune "
                                f"(supported: {', '.join(str(d) for d in SCALAR_DTYPES)})")
    v = x.item()
    if isinstance(v, float) and not math.isfinite(v):
        raise UnsupportedError(f"arguments[{i}]: {v} cannot be written as a T1 FillValue (JSON has no NaN or "
                               "infinity)")
    if isinstance(v, int) and not isinstance(v, bool) and abs(v) > 2 ** 53:
        raise UnsupportedError(f"arguments[{i}]: {v} is larger than 2**53: a T1 FillValue would not hold it "
                               "exactly")
    return {"Name": f"arg{i}", "Type": SCALAR_DTYPES[dtype], "MemoryType": "Scalar", "FillValue": int(v)
            if isinstance(v, bool) else v, "Output": 0}


def _vector_type(what, a):
    native = a.dtype.newbyteorder("=")
    if native not in DTYPES:
        raise ArgumentTypeError(f"{what}: numpy arrays of {a.dtype} have no kernel type in mptune (supported: "
                                f"{', '.join(str(d) for d in DTYPES)})")
    if not a.flags.c_contiguous:
        raise UnsupportedError(f"{what}: the array is not C-contiguous: pass np.ascontiguousarray(...) so "
                               "that the kernel sees the memory order you mean")
    if a.size < 1:
        raise UnsupportedError(f"{what}: an empty array")
    return DTYPES[native]


def _python_number_hint(x):
    if isinstance(x, bool):
        return "np.bool_(x)"
    if isinstance(x, int):
        return "np.int32(x) or np.int64(x)"
    return "np.float32(x) or np.float64(x)"


def argument_entries(arguments, answer, files):
    """T1 Arguments of Kernel Tuner's argument list (numpy arrays: Vector arguments read from BinaryRaw
    files; numpy scalars: Scalar arguments); an argument is an Output exactly when answer has an array for
    it"""
    if not isinstance(arguments, (list, tuple)):
        raise ArgumentTypeError(f"arguments: expected a list of numpy arrays and numpy scalars, got "
                                f"{type(arguments).__name__}")
    out = []
    for i, x in enumerate(arguments):
        if isinstance(x, np.ndarray):
            kind = _vector_type(f"arguments[{i}]", x)
            files[f"arg{i}.bin"] = x
            out.append({"Name": f"arg{i}", "Type": kind, "MemoryType": "Vector", "AccessType": "ReadWrite",
                        "Size": int(x.size), "FillType": "BinaryRaw", "DataSource": f"arg{i}.bin",
                        "Output": int(answer is not None and answer[i] is not None)})
        elif isinstance(x, np.generic):
            out.append(_scalar_entry(i, x))
        elif isinstance(x, (bool, int, float)):
            raise ArgumentTypeError(f"arguments[{i}]: a Python {type(x).__name__} ({x!r}) does not say its C "
                                    f"type: pass a numpy scalar, {_python_number_hint(x)}")
        else:
            raise ArgumentTypeError(f"arguments[{i}]: expected a numpy array or a numpy scalar, got "
                                    f"{type(x).__name__}")
    return out


def check_answer(answer, arguments):
    if answer is None:
        return None
    if not isinstance(answer, (list, tuple)):
        raise ArgumentTypeError(f"answer: expected a list with one entry per argument (None: not checked), "
                                f"got {type(answer).__name__}")
    if len(answer) != len(arguments):
        raise UnsupportedError(f"answer: {len(answer)} entries for {len(arguments)} arguments (one per argument, "
                               "None where an argument is not checked)")
    for i, (a, x) in enumerate(zip(answer, arguments)):
        if a is None:
            continue
        if not isinstance(a, np.ndarray):
            raise ArgumentTypeError(f"answer[{i}]: expected a numpy array or None, got {type(a).__name__}")
        if not isinstance(x, np.ndarray):
            raise UnsupportedError(f"answer[{i}]: arguments[{i}] is a scalar, only arrays are outputs (use None)")
        if a.dtype != x.dtype:
            raise ArgumentTypeError(f"answer[{i}]: dtype {a.dtype}, but arguments[{i}] is {x.dtype}")
        if a.size != x.size:
            raise UnsupportedError(f"answer[{i}]: {a.size} elements, but arguments[{i}] has {x.size}")
        _vector_type(f"answer[{i}]", a)
    return answer


def reference_entries(answer, files):
    refs = []
    for i, a in enumerate(answer or []):
        if a is not None:
            files[f"answer{i}.bin"] = a
            refs.append({"Name": f"answer{i}", "TargetName": f"arg{i}", "FillType": "BinaryRaw",
                         "DataSource": f"answer{i}.bin"})
    return refs


def constant_memory_entries(cmem_args, files):
    """Symbol arguments (constant memory on the GPU) of Kernel Tuner's cmem_args: symbol name -> array"""
    if not isinstance(cmem_args, dict):
        raise ArgumentTypeError("cmem_args: expected a dict of symbol name -> numpy array")
    out = []
    for name, a in cmem_args.items():
        what = f"cmem_args[{name!r}]"
        if isinstance(a, np.generic):
            a = np.array([a])
        if not isinstance(a, np.ndarray):
            raise ArgumentTypeError(f"{what}: expected a numpy array, got {type(a).__name__}")
        kind = _vector_type(what, a)
        files[f"cmem_{name}.bin"] = a
        out.append({"Name": name, "Type": kind, "MemoryType": "Symbol", "AccessType": "ReadOnly",
                    "Size": int(a.size), "FillType": "BinaryRaw", "DataSource": f"cmem_{name}.bin", "Output": 0})
    return out


def shared_memory(smem_args):
    """SharedMemory (bytes of dynamic shared memory) of Kernel Tuner's smem_args {"size": ...}"""
    if not isinstance(smem_args, dict) or set(smem_args) != {"size"}:
        raise UnsupportedError("smem_args: expected {\"size\": bytes} (a number or an expression over the tune "
                               "params as a string)")
    return _size_entry("smem_args['size']", smem_args["size"])


def compiler_option_list(compiler_options, include_dirs):
    """CompilerOptions: the user's, then the directories of the kernel's files on the include path"""
    opts = [] if compiler_options is None else compiler_options
    if isinstance(opts, str) or not isinstance(opts, (list, tuple)) or not all(isinstance(o, str) for o in opts):
        raise ArgumentTypeError("compiler_options: expected a list of strings")
    return list(opts) + [f"-I{d}" for d in include_dirs]


def build(kernel_name, kernel_source, problem_size, arguments, tune_params, grid_div=(None, None, None),
          block_size_names=None, restrictions=None, answer=None, atol=1e-6, lang=None, smem_args=None,
          cmem_args=None, compiler_options=None, iterations=None):
    """the Problem of a Kernel Tuner description (the arguments of tune_kernel that describe the kernel)"""
    if not isinstance(kernel_name, str) or not kernel_name:
        raise ArgumentTypeError("kernel_name: expected the kernel function's name (a string)")
    params = tuning_parameters(tune_params)
    path, text, include_dirs = kernel_source_files(kernel_source)
    lang_name, evaluator, default_file = language(lang, text)
    files = {}
    if path is None:
        files[default_file] = text
    answer = check_answer(answer, arguments)
    if isinstance(atol, bool) or not isinstance(atol, (int, float)) or not atol >= 0:
        raise ArgumentTypeError(f"atol={atol!r}: expected a number >= 0")
    args = argument_entries(arguments, answer, files)
    if cmem_args is not None:
        if lang_name == "C":
            raise UnsupportedError("cmem_args: constant memory exists on GPUs only (lang is C)")
        args += constant_memory_entries(cmem_args, files)
    kernel = {"Language": lang_name, "KernelName": kernel_name, "KernelFile": path or default_file,
              "CompilerOptions": compiler_option_list(compiler_options, include_dirs)}
    kernel.update(launch_fields(problem_size, grid_div, block_size_names, tune_params))
    if smem_args is not None:
        if lang_name == "C":
            raise UnsupportedError("smem_args: shared memory exists on GPUs only (lang is C)")
        kernel["SharedMemory"] = shared_memory(smem_args)
    if iterations is not None:
        if isinstance(iterations, bool) or not isinstance(iterations, int) or not 1 <= iterations <= MAX_ITERATIONS:
            raise UnsupportedError(f"iterations={iterations!r}: mptune times 1 to {MAX_ITERATIONS} iterations "
                                   "per configuration")
        kernel["Iterations"] = iterations
    # Kernel Tuner's check is numpy.allclose(answer, output, atol=atol): rtol stays numpy's 1e-5
    kernel["Tolerance"] = {"Atol": float(atol), "Rtol": 1e-5}
    kernel["Arguments"] = args
    refs = reference_entries(answer, files)
    if refs:
        kernel["ReferenceArguments"] = refs
    t1 = {"General": {"BenchmarkName": kernel_name, "OutputFormat": "JSON"},
          "ConfigurationSpace": {"TuningParameters": params,
                                 "Conditions": conditions(restrictions, tune_params)},
          "KernelSpecification": kernel}
    return Problem(t1, files, evaluator)
