"""tests/standins.py: the stand-in GPU environment the Python end-to-end tests share. Where mptune, mpiexec.mpich
and the built stand-ins are (the CUDA driver tests/fake_cuda.c, the HIP runtime tests/fake_hip.c, NVML
tests/fake_nvml.c); the stand-in kernel `fk`, whose marker string tells the stand-in what to act out for its
`fmode`, and its T1 problem; running mptune on one rank or under mpiexec.mpich with a stand-in's variables
set, printing what it did; and the skips (77) when NVRTC or hiprtc is missing. Environment (set by ctest):
MPTUNE, MPIEXEC, MPT_BINARY_DIR."""
import ctypes
import json
import os
import subprocess

MPTUNE = os.environ["MPTUNE"]
MPIEXEC = os.environ["MPIEXEC"]
TESTS = os.path.join(os.environ["MPT_BINARY_DIR"], "tests")
FAKE_CUDA = os.path.join(TESTS, "libfake_cuda.so")
FAKE_HIP = os.path.join(TESTS, "libfake_hip.so")
FAKE_NVML = os.path.join(TESTS, "libfake_nvml.so")
NO_LIB = "/nonexistent/libnone.so"  # a library path that loads nothing: a rank that sees no GPU of that kind
SKIP = 77


def all_built(*libs):
    """True when every stand-in library was built; else says which is not"""
    for lib in libs:
        if not os.path.exists(lib):
            print(f"FAIL: {lib} was not built")
            return False
    return True


def fk_kernel(external_marker=False, constant_filter=False):
    """the stand-in kernel fk(out, in, n): its marker "MPT_FAKE_MODE=<fmode>;" is what the stand-in reads from the
    compiled code (extern "C" keeps it in hiprtc's code object too); constant_filter adds a __constant__ filt[16]"""
    marker = 'extern "C" ' if external_marker else ""
    filt = "__constant__ float filt[16];\n" if constant_filter else ""
    return (f'\n#define STR2(x) #x\n#define STR(x) STR2(x)\n'
            f'{marker}__device__ const char mpt_fake_marker[] = "MPT_FAKE_MODE=" STR(fmode) ";";\n{filt}'
            'extern "C" __global__ void fk(float *out, const float *in, int n) {\n'
            '  int i = blockIdx.x * blockDim.x + threadIdx.x;\n'
            f'  if (i < n) out[i] = in[i] * 2 + {"filt[0] + " if constant_filter else ""}mpt_fake_marker[0];\n'
            '}\n')


def fk_problem(benchmark, tuning_parameters, constant_filter=False):
    """the T1 problem of fk.cu over 1000 floats (out is the checked output), tuned over tuning_parameters"""
    args = [{"Name": "out", "Type": "float", "MemoryType": "Vector", "AccessType": "WriteOnly",
             "FillType": "Constant", "FillValue": 0.0, "Size": 1000, "Output": 1},
            {"Name": "in", "Type": "float", "MemoryType": "Vector", "AccessType": "ReadOnly",
             "FillType": "Random", "FillValue": 1.0, "Size": 1000}]
    if constant_filter:
        args.append({"Name": "filt", "Type": "float", "MemoryType": "Vector", "MemType": "Constant",
                     "AccessType": "ReadOnly", "FillType": "Constant", "FillValue": 1.0, "Size": 16})
    args.append({"Name": "n", "Type": "int32", "MemoryType": "Scalar", "FillValue": 1000})
    return {"General": {"BenchmarkName": benchmark, "OutputFormat": "JSON"},
            "ConfigurationSpace": {"TuningParameters": tuning_parameters, "Conditions": []},
            "KernelSpecification": {"Language": "CUDA", "KernelName": "fk", "KernelFile": "fk.cu",
                                    "ProblemSize": [1000], "Arguments": args}}


def write_fk(tmp, kernel, problem):
    """fk.cu and fk.json in tmp"""
    with open(os.path.join(tmp, "fk.cu"), "w") as f:
        f.write(kernel)
    with open(os.path.join(tmp, "fk.json"), "w") as f:
        json.dump(problem, f)


def mptune_cmd(args, np=1):
    """mptune with args, under mpiexec.mpich -n np when np > 1"""
    cmd = [MPTUNE, *args]
    return [MPIEXEC, "-n", str(np), *cmd] if np > 1 else cmd


def run(cmd, cwd, env=None, out_tail=2000, err_tail=1500, timeout=600):
    """runs cmd in cwd with env added to this environment, prints the command, its exit status and the ends of
    its output"""
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                       env=dict(os.environ, **(env or {})))
    print(f"$ {' '.join(cmd)} -> {p.returncode}\n{p.stdout[-out_tail:]}{p.stderr[-err_tail:]}", flush=True)
    return p


def nvrtc_missing(p, say="SKIPPED: NVRTC is not installed"):
    """True (saying so) when the run p failed because NVRTC is not installed: the caller skips"""
    if p.returncode != 0 and "NVRTC not found" in p.stderr:
        print(say)
        return True
    return False


def compilers_missing(tmp, problem="fk.json"):
    """True (saying which) when hiprtc or NVRTC is missing, asked of `mptune devices` on each stand-in"""
    try:  # the stand-in HIP runtime forwards hiprtc to the system's ROCm 5 library
        ctypes.CDLL("libamdhip64.so.5")
    except OSError:
        print("SKIPPED: no libamdhip64.so.5 (hiprtc)")
        return True
    for lang in ("cuda", "hip"):
        p = subprocess.run([MPTUNE, "devices", problem, "--evaluator", lang], cwd=tmp, capture_output=True,
                           text=True, env=dict(os.environ, MPT_CUDA_DRIVER_LIB=FAKE_CUDA, MPT_HIP_LIB=FAKE_HIP))
        if p.returncode != 0 and ("NVRTC" in p.stderr or "hiprtc" in p.stderr):
            print(f"SKIPPED: {p.stderr.strip()}")
            return True
    return False
