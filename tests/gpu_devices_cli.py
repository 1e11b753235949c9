#!/usr/bin/env python3
"""tests/gpu_devices_cli.py: `mptune devices` and the GPU evaluators at the command line. On a
machine without GPUs the device table shows no NVIDIA/AMD row and explains why ("no CUDA device: ...",
"no HIP device: ..."), and opening the cuda/hip evaluator on a GPU example fails cleanly (non-zero
exit, one message). With a GPU the table lists it."""
import os
import subprocess
import sys

mptune = os.environ["MPTUNE"]
src = os.environ["MPT_SOURCE_DIR"]


def run(*args, env=None):
    p = subprocess.run([mptune, *args], capture_output=True, text=True, timeout=120, env=env)
    return p.returncode, p.stdout, p.stderr


def has_nvidia():
    return os.path.exists("/dev/nvidiactl") or os.path.exists("/dev/nvidia0")


def has_amd():
    return os.path.exists("/dev/kfd")


rc, out, err = run("devices")
print(out, err)
assert rc == 0, (rc, err)
rows = [l for l in out.splitlines() if l[:1].isdigit()]
assert rows, out
# the vendor column (the third): a CPU row's model name may itself say AMD ("AMD EPYC")
vendors = [r.split()[2] for r in rows]
if not has_nvidia():
    assert "NVIDIA" not in vendors, rows
    assert "no CUDA device: " in out, out
if not has_amd():
    assert "AMD" not in vendors, rows
    assert "no HIP device: " in out, out
if not has_nvidia() and not has_amd():
    assert "no GPU:" in out and all(v == "CPU" for v in vendors), out

for ev, label, present in (("cuda", "CUDA", has_nvidia()), ("hip", "HIP", has_amd())):
    rc, out, err = run("devices", os.path.join(src, "examples/gpu/gemm.json"), "--evaluator", ev)
    print(ev, rc, out, err)
    if not present:
        assert rc != 0, out
        assert "no %s device: " % label in err, err
        assert "Traceback" not in err and "Segmentation" not in err
    else:
        assert rc == 0, err
        assert ("NVIDIA" if ev == "cuda" else "AMD") in [r.split()[2] for r in out.splitlines() if r[:1].isdigit()], out

# every visible device hidden: the evaluator says which variable did it (when a driver is present)
env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
rc, out, err = run("devices", os.path.join(src, "examples/gpu/gemm.json"), "--evaluator", "cuda", env=env)
assert rc != 0 and "no CUDA device: " in err, (rc, err)
# a CUDA driver library that cannot drive a device (the toolkit's stub, when installed): the device
# server starts, cuInit fails in it, and open() reports that cleanly
stub = "/usr/local/cuda/lib64/stubs/libcuda.so"
if os.path.exists(stub) and not has_nvidia():
    env = dict(os.environ, MPT_CUDA_DRIVER_LIB=stub)
    rc, out, err = run("devices", os.path.join(src, "examples/gpu/gemm.json"), "--evaluator", "cuda", env=env)
    print("stub:", rc, err)
    assert rc != 0 and "no CUDA device: cuInit: CUDA_ERROR_STUB_LIBRARY" in err, (rc, err)
    rc, out, err = run("devices", env=env)
    assert rc == 0 and "no CUDA device: cuInit" in out, (rc, out)
print("ok")
