#!/usr/bin/env python3
"""tests/gpu_emulate.py: the GPU examples' kernels (examples/gpu/*.cu) computed on the CPU for a
sample of their valid configurations (tests/gpu_emu: blocks in turn, threads as std::threads,
__syncthreads as a barrier) on small problems, compared with plain loops. Checks the indexing,
tiling, padding and shared-memory logic that a GPU run would verify against the reference, on a
machine without a GPU. Configurations: the T1 default plus a seeded sample of the valid set (the
T1 conditions evaluated with Python); for gemm only those whose tiles divide the small problem."""
import itertools
import json
import os
import random
import subprocess
import sys
import tempfile

src = os.environ.get("MPT_SOURCE_DIR", os.path.join(os.path.dirname(__file__), ".."))
n_sample = int(sys.argv[1]) if len(sys.argv) > 1 else 5


def valid_configs(t1, extra=None):
    params = t1["ConfigurationSpace"]["TuningParameters"]
    names = [p["Name"] for p in params]
    values = [eval(p["Values"]) for p in params]
    conds = [c["Expression"] for c in t1["ConfigurationSpace"]["Conditions"]]
    out = []
    for combo in itertools.product(*values):
        env = dict(zip(names, combo))
        if all(eval(c, {}, env) for c in conds) and (extra is None or extra(env)):
            out.append(env)
    default = {p["Name"]: (p["Default"][0] if isinstance(p["Default"], list) else p["Default"]) for p in params}
    return default, out


def run(example, macro, extra):
    t1 = json.load(open(os.path.join(src, "examples/gpu", example + ".json")))
    default, configs = valid_configs(t1, extra)
    rng = random.Random(20261121)
    picks = [default] + rng.sample(configs, min(n_sample, len(configs)))
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        exe = os.path.join(tmp, "emu")
        for cfg in picks:
            defs = ["-D%s=%s" % kv for kv in cfg.items()]
            cmd = ["g++", "-std=c++20", "-O0", "-pthread", "-Wno-unknown-pragmas", "-D" + macro, *defs,
                   os.path.join(src, "tests/gpu_emu/main.cpp"), "-o", exe]
            c = subprocess.run(cmd, capture_output=True, text=True)
            if c.returncode != 0:
                print("COMPILE FAIL", cfg, c.stderr[-2000:])
                failures += 1
                continue
            r = subprocess.run([exe], capture_output=True, text=True, timeout=120)
            print(example, ",".join("%s=%s" % kv for kv in cfg.items()), r.stdout.strip())
            if r.returncode != 0 or "PASS" not in r.stdout:
                failures += 1
    return failures


fails = run("convolution", "EMU_CONVOLUTION", None)
# the small gemm problem (128x128x96) must be a whole number of block tiles
fails += run("gemm", "EMU_GEMM",
             lambda c: 128 % (c["block_size_x"] * c["tile_size_x"]) == 0 and 128 % (c["block_size_y"] * c["tile_size_y"]) == 0)
if fails:
    print("%d configuration(s) FAILED" % fails)
    sys.exit(1)
print("ok")
