#!/usr/bin/env python3
"""tests/gpu_power.py: the power observer and the objectives end to end, through `mptune tune --evaluator
cuda` on the stand-in driver (tests/fake_cuda.c, MPT_CUDA_DRIVER_LIB) with the stand-in NVML
(tests/fake_nvml.c, MPT_NVML_LIB) and the real NVRTC. Four correct variants (fmode 11-14) take 1, 2, 3 and
4 ms at 400, 50, 15 and 30 W: 0.4, 0.1, 0.045 and 0.12 J per launch. --objective time picks fmode 11,
energy and edp fmode 13, a problem's metric (GFLOP per joule, maximized) fmode 13, and time,energy prints the
Pareto front {11, 12, 13} (14 is dominated by 13). The summary states every objective's unit and the best's
spread and power. The run log holds every record's power fields and the objective (docs/RUNLOG.md); a
resumed multi-objective run keeps the logged records on its front, and a resume with another objective is
refused; the observer finds the device by the PCI bus id the driver gives; the T4 export carries the energy, power, clock and temperature and names both objectives (valid
against the T4 schema). Without the stand-in NVML the energy objective is refused with the reason, on one
rank and on a worker. Skipped (77) without NVRTC."""
import json
import os
import re
import subprocess
import sys
import tempfile

import h5py
import jsonschema

from checks import check, exit_code
from standins import FAKE_CUDA, FAKE_NVML, MPTUNE, all_built, fk_kernel, fk_problem, mptune_cmd, \
    nvrtc_missing, run, write_fk

PROBLEM = fk_problem("fake_power", [{"Name": "fmode", "Type": "int", "Values": "[11, 12, 13, 14]", "Default": 14},
                                    {"Name": "block_size_x", "Type": "int", "Values": "[256]", "Default": 256}])
PROBLEM["Metrics"] = [{"Name": "gflop_per_j", "Unit": "GFLOP/J", "Goal": "max", "Expression": "2e6 / 1e9 / energy"}]


def tune(tmp, name, objective, np=1, nvml=True, budget=4, extra=(), env_extra=None):
    env = dict(MPT_CUDA_DRIVER_LIB=FAKE_CUDA, **(env_extra or {}))
    env["MPT_NVML_LIB"] = FAKE_NVML if nvml else os.path.join(tmp, "no-libnvidia-ml.so.1")
    return run(mptune_cmd(["tune", "fk.json", "--evaluator", "cuda", "--strategy", "brute_force", "--budget",
                           str(budget), "--iterations", "5", "--log", name + ".h5", "--progress", "off",
                           "--objective", objective, *extra], np), tmp, env)


def front_modes(out):
    front = re.search(r"^pareto front \(time ms, energy J\): (\d+) configurations?\n((?:  .*\n)*)", out, re.M)
    return [int(x) for x in re.findall(r"fmode=(\d+)", front.group(2))] if front else []


def check_log(tmp):
    """front1.h5: every record's power fields (fmode 11 + i at 400, 50, 15, 30 W) and the objective"""
    with h5py.File(os.path.join(tmp, "front1.h5"), "r") as f:
        obj = f.attrs["objective"]
        check((obj.decode() if isinstance(obj, bytes) else obj) == "time,energy", f"the log's objective: {obj}")
        check(int(f.attrs["format_version"]) == 4, "format 4")
        ev = f["evaluations"][:int(f["count"][()])]
    watts = {11: 400, 12: 50, 13: 15, 14: 30}
    for r in ev:
        mode = 11 + int(r["config"][0])
        check(int(r["n_power"]) > 0 and abs(float(r["power_w"]) - watts[mode]) < watts[mode] * 0.02
              and abs(float(r["clock_mhz"]) - (1980 - 10 * mode)) < 1e-9 and float(r["temp_c"]) == 40 + mode
              and abs(float(r["energy_j"]) - watts[mode] * (mode - 10) * 1e-3) < watts[mode] * (mode - 10) * 1e-3 * 0.03,
              f"fmode {mode}: the logged power fields {r['n_power']} {r['power_w']} {r['energy_j']} {r['clock_mhz']} "
              f"{r['temp_c']}")


def check_t4(tmp):
    """the T4 export of front1.h5: energy, power, clock and temperature, both objectives, valid"""
    t4 = os.path.join(tmp, "front1_T4.json")
    p = subprocess.run([MPTUNE, "export", "front1.h5", "--t4", t4], cwd=tmp, capture_output=True, text=True)
    check(p.returncode == 0, f"export: {p.stderr}")
    doc = json.load(open(t4))
    schema = json.load(open(os.path.join(os.environ["MPT_SHARED_DATA"], "schemas", "T4-results-1.0.0.json")))
    jsonschema.validate(doc, schema)
    for r in doc["results"]:
        names = {m["name"]: m for m in r["measurements"]}
        check(r["objectives"] == ["time", "energy"] and {"time", "energy", "power", "clock", "temperature"} <= set(names)
              and names["energy"]["unit"] == "J" and names["power"]["unit"] == "W", f"a T4 record: {r}")


def best_fmode(out):
    m = re.search(r"^best: fmode=(\d+)", out, re.M)
    return int(m.group(1)) if m else None


def main():
    if not all_built(FAKE_CUDA, FAKE_NVML):
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        write_fk(tmp, fk_kernel(), PROBLEM)
        p = tune(tmp, "time", "time")
        if nvrtc_missing(p):
            return 77
        check(p.returncode == 0 and best_fmode(p.stdout) == 11, "time: fmode 11 is the fastest")
        check(re.search(r"^objective: 1\.0\d* ms$", p.stdout, re.M), "time: 'objective: ... ms'")
        check(re.search(r"^spread of the best: median 1\.0\d* ms, std [0-9.e-]+ ms \([0-9.]+ % of the median\) over 5 "
                        r"timed runs$", p.stdout, re.M), "time: the best's spread")
        check(re.search(r"^power of the best: 400 W, 0\.40\d* J per launch, SM clock 1870 MHz, 51 C", p.stdout, re.M),
              "time: the best's power, energy, clock and temperature from the stand-in NVML")
        check(re.search(r"^speed-up over default: 3\.9\d", p.stdout, re.M), "time: the speed-up over the default (fmode 14, 4 ms)")
        for objective in ("energy", "edp"):
            p = tune(tmp, objective, objective)
            unit = "J" if objective == "energy" else r"J\*s"
            check(p.returncode == 0 and best_fmode(p.stdout) == 13, f"{objective}: fmode 13 uses the least energy")
            check(re.search(rf"^objective: [0-9.e-]+ {unit} \({objective}\)$", p.stdout, re.M),
                  f"{objective}: the objective with its unit")
            check("improvement over default: " in p.stdout, f"{objective}: the improvement over the default")
        p = subprocess.run([MPTUNE, "show", "energy.h5"], cwd=tmp, capture_output=True, text=True)
        check(p.returncode == 0 and "objective: energy in J, lower is better" in p.stdout and " energy (J) " in p.stdout
              and "by energy:" in p.stdout, f"mptune show names the logged objective and its unit: {p.stdout}")
        m = re.search(r"^objective: ([0-9.e-]+) J \(energy\)$", tune(tmp, "energy2", "energy").stdout, re.M)
        check(m and abs(float(m.group(1)) - 0.045) < 0.045 * 0.03, "energy: 15 W x 3 ms = 0.045 J per launch")
        p = tune(tmp, "metric", "gflop_per_j")
        check(p.returncode == 0 and best_fmode(p.stdout) == 13, "metric: fmode 13 does the most GFLOP per joule")
        check(re.search(r"^objective: [0-9.e-]+ GFLOP/J \(gflop_per_j, maximized\)$", p.stdout, re.M),
              "metric: its unit and direction")
        for np in (1, 2):
            p = tune(tmp, f"front{np}", "time,energy", np=np)
            modes = front_modes(p.stdout)
            check(p.returncode == 0 and modes == [11, 12, 13], f"-n {np}: the Pareto front is fmode 11, 12, 13: {modes}")
            p = tune(tmp, f"nonvml{np}", "energy", np=np, nvml=False)
            check(p.returncode != 0 and "--objective energy needs the energy of each launch" in p.stderr
                  and "libnvidia-ml.so.1 not found" in p.stderr, f"-n {np}: energy without NVML is refused, saying why")
        # the device found by the PCI bus id the driver gives, not by the runtime's index
        p = tune(tmp, "bus", "energy", env_extra={"FAKE_NVML_BUS_ONLY": "1"})
        check(p.returncode == 0 and best_fmode(p.stdout) == 13, "the power observer finds the device by its bus id")
        check_log(tmp)
        check_t4(tmp)
        # two evaluations (the default fmode 14 first, then 11), the rest on --resume: the front keeps the logged ones
        p = tune(tmp, "resumed", "time,energy", budget=2)
        check(p.returncode == 0 and front_modes(p.stdout) == [11, 14], f"first session's front {front_modes(p.stdout)}")
        p = tune(tmp, "resumed", "energy", extra=["--resume"])
        check(p.returncode != 0 and "was tuned for --objective time,energy" in p.stderr, "a resume with another objective")
        p = tune(tmp, "resumed", "time,energy", extra=["--resume"])
        check(p.returncode == 0 and front_modes(p.stdout) == [11, 12, 13], f"resumed front {front_modes(p.stdout)}")
    return exit_code()


if __name__ == "__main__":
    sys.exit(main())
