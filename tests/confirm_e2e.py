#!/usr/bin/env python3
"""tests/confirm_e2e.py: --confirm end to end. With the sim evaluator on the real brute-forced convolution
space the re-measurements replay the same times: the three finalists keep their order and objectives, the
default is measured again in the same rounds, after them: the twelve re-measurements lie interleaved (A B C D A B
C D A B C D) in /confirmations and /evaluations holds the budget alone (as does the T4 export); --confirm 0
measures nothing again. The speed-up is the confirmed default's over the confirmed best: a log searched on one
replayed file and confirmed (--resume) on a copy where the default takes four times as long reports four times the
speed-up, both confirmed, and `mptune show` (text and JSON) says the same. A default that failed is not measured again. A confirmation cut short by SIGINT once the
default has been measured again leaves the run resumable, and --resume measures only the rounds not logged, the
default's among them (none lost, none twice). With the cpu evaluator on two ranks the finalists are measured again
on the worker and the best reported is the best confirmed; an OpenMP kernel is confirmed near the times the search
measured (a run the scheduler delayed set aside: tests/cpu_delayed.sh)."""
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

import gzip
import json

import h5py

from checks import check, exit_code
from standins import MPTUNE, mptune_cmd, run

DATA = os.environ["MPT_SHARED_DATA"]
SRC = os.environ["MPT_SOURCE_DIR"]
PROBLEM = os.path.join(DATA, "t1", "convolution_milo.json")
SPACE = os.path.join(DATA, "brute-forced", "convolution_A100_T4.json.gz")


def sim_cmd(log, *extra):
    return [MPTUNE, "tune", PROBLEM, "--simulate", SPACE, "--strategy", "random", "--seed", "5", "--budget", "16",
            "--log", log, "--progress", "off", *extra]


def confirmations(log):
    with h5py.File(log, "r") as f:
        c = f["confirmations"][:] if "confirmations" in f else []
        return [(int(r["id"]), int(r["confirm"]), float(r["objective"])) for r in c], int(f["count"][()])


def default_id(log):
    """the default's id: a tuning run measures it first"""
    with h5py.File(log, "r") as f:
        return int(f["evaluations"][0]["id"]), float(f["evaluations"][0]["objective"])


DEFAULT = {"block_size_x": 16, "block_size_y": 16, "tile_size_x": 1, "tile_size_y": 1, "read_only": 0,
           "use_padding": 1, "use_shmem": 1, "use_cmem": 1, "filter_height": 15, "filter_width": 15}


def space_copy(tmp, name, change):
    """the replayed space with the default's record changed by change(record), in folder `name` under its own file
    name (which names the simulated device: a log resumed on it stays of one device class)"""
    with gzip.open(SPACE, "rt") as f:
        doc = json.load(f)
    rec = [r for r in doc["results"] if r["configuration"] == DEFAULT]
    check(len(rec) == 1 and rec[0]["invalidity"] == "correct", "the replayed space has the default, valid")
    change(rec[0])
    os.makedirs(os.path.join(tmp, name))
    path = os.path.join(tmp, name, os.path.basename(SPACE))
    with gzip.open(path, "wt") as f:
        json.dump(doc, f)
    return path


def summary_value(out, label):
    m = re.search(rf"^{label}: (\S+)", out, re.M)
    return float(m.group(1).rstrip("x")) if m else None


def finalists(out):
    return [(float(a), float(b)) for a, b in re.findall(r"^  #\d+  search (\S+) ms  confirmed (\S+) ms", out, re.M)]


def sim_keeps_the_order(tmp):
    log = os.path.join(tmp, "sim.h5")
    p = run(sim_cmd(log), tmp, out_tail=2500)
    check(p.returncode == 0, "sim: the run")
    fin = finalists(p.stdout)
    check(len(fin) == 3 and all(a == b for a, b in fin), f"sim: the replayed times confirm the search's: {fin}")
    check("confirmation keeps the search's best" in p.stdout and "(12 now;" in p.stdout
          and "the 3 best and the default measured again 3 times each" in p.stdout, "sim: the summary")
    conf, count = confirmations(log)
    dflt, dflt_ms = default_id(log)
    ids = [i for i, _, _ in conf[:4]]
    check(count == 16 and len(conf) == 12 and ids[3] == dflt and dflt not in ids[:3]
          and [i for i, _, _ in conf] == ids * 3 and [r for _, r, _ in conf] == [1] * 4 + [2] * 4 + [3] * 4,
          f"sim: interleaved A B C D x3, D the default ({dflt}): {conf}, {count}")
    check(all(o == dflt_ms for i, _, o in conf if i == dflt), "sim: the default confirmed at its replayed time")
    row = re.search(r"^  default  search (\S+) ms  confirmed (\S+) ms  ", p.stdout, re.M)
    check(row and float(row.group(1)) == float(row.group(2)), "sim: the default's row in the table")
    obj = re.search(r"^objective: (\S+) ms$", p.stdout, re.M)
    check(obj and float(obj.group(1)) == fin[0][0], "sim: the best reported is the search's")
    check("(both confirmed in the same rounds: the default's median of its 3 re-measurements;" in p.stdout,
          "sim: the speed-up is said to be over the confirmed default")
    t4 = os.path.join(tmp, "sim_T4.json")
    p = run([MPTUNE, "export", log, "--t4", t4], tmp, out_tail=2500)
    check(p.returncode == 0 and open(t4).read().count('"timestamp"') == 16,
          "sim: the T4 export holds the evaluations alone")
    log0 = os.path.join(tmp, "none.h5")
    p = run(sim_cmd(log0, "--confirm", "0"), tmp, out_tail=2500)
    check(p.returncode == 0 and "confirmation" not in p.stdout and confirmations(log0)[0] == [], "--confirm 0")
    check("both confirmed" not in p.stdout and summary_value(p.stdout, "speed-up over default") is not None,
          "--confirm 0: the speed-up over the search's default")


def times_four(rec):
    rec["times"]["runtimes"] = [4 * t for t in rec["times"]["runtimes"]]
    for m in rec["measurements"]:
        if m["name"] == "time":
            m["value"] *= 4


def speedup_over_the_confirmed_default(tmp):
    """searched on the replayed space without a confirmation, then confirmed (--resume) on a copy where the default
    takes four times as long: the speed-up is the confirmed default's (4 x) over the confirmed best"""
    log = os.path.join(tmp, "slow.h5")
    p = run(sim_cmd(log, "--confirm", "0"), tmp, out_tail=2500)
    check(p.returncode == 0, "speed-up: the search")
    slow = space_copy(tmp, "slow_default", times_four)
    cmd = sim_cmd(log, "--resume", "--budget", "17", "--confirm", "3")
    cmd[cmd.index(SPACE)] = slow
    p = run(cmd, tmp, out_tail=2500)
    check(p.returncode == 0 and "(12 now;" in p.stdout, "speed-up: the confirmation on the resume")
    dflt, dflt_ms = default_id(log)
    conf, _ = confirmations(log)
    check([o for i, _, o in conf if i == dflt] == [4 * dflt_ms] * 3, f"speed-up: the default confirmed at 4 x: {conf}")
    best, dconf, gain = (summary_value(p.stdout, k) for k in ("objective", "default objective", "speed-up over default"))
    check(best and dconf == float(f"{4 * dflt_ms:.6g}") and gain and abs(gain - 4 * dflt_ms / best) < 0.006,
          f"speed-up: {gain}x over the confirmed default {dconf} ms (the search's {dflt_ms} ms, the best {best} ms)")
    check(f"the search measured it at {dflt_ms:.6g} ms)" in p.stdout
          and "note: the default was measured in an earlier session" not in p.stdout,
          "speed-up: the search's default said, with no note of a speed-up across sessions")
    p = run([MPTUNE, "show", log], tmp, out_tail=2500)
    m = re.search(r"^confirmed \(12 re-measurements\): best #1 at (\S+) ms, default at (\S+) ms: speed-up (\S+)x over "
                  r"the default \(both confirmed\)$", p.stdout, re.M)
    check(p.returncode == 0 and m and float(m.group(1)) == best and float(m.group(2)) == dconf
          and float(m.group(3)) == gain, "speed-up: mptune show says the same")
    p = run([MPTUNE, "show", log, "--json"], tmp, out_tail=2500)
    c = json.loads(p.stdout)["devices"][0]["confirmation"] if p.returncode == 0 else None
    check(c and c["remeasurements"] == 12 and c["default"] == 4 * dflt_ms
          and abs(c["speedup"] - 4 * dflt_ms / c["best"]) < 1e-9, f"speed-up: mptune show --json: {c}")


def failed_default(tmp):
    def fail(rec):
        rec.update({"invalidity": "runtime", "correctness": 0,
                    "measurements": [{"name": "time", "value": "RuntimeFailedConfig", "unit": ""}]})
        del rec["times"]["runtimes"]
    log = os.path.join(tmp, "failed.h5")
    cmd = sim_cmd(log)
    cmd[cmd.index(SPACE)] = space_copy(tmp, "failed_default", fail)
    p = run(cmd, tmp, out_tail=2500)
    conf, _ = confirmations(log)
    dflt, _ = default_id(log)
    check(p.returncode == 0 and len(conf) == 9 and dflt not in [i for i, _, _ in conf]
          and "the 3 best measured again" in p.stdout and "default: failed" in p.stdout,
          f"a failed default is not measured again: {conf}")


def resume_goes_on(tmp):
    """SIGINT once five re-measurements are logged (the default's first among them); the resume makes the rest"""
    log = os.path.join(tmp, "cut.h5")
    proc = subprocess.Popen(sim_cmd(log, "--simulate-delay", "0.2"), cwd=tmp, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 300
    while time.time() < deadline and proc.poll() is None:
        try:
            if len(confirmations(log)[0]) >= 5:
                break
        except (OSError, KeyError):
            pass
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=300)
    print(out[-2000:], err[-1000:])
    logged = confirmations(log)[0]
    dflt, _ = default_id(log)
    cut = [r for i, r, _ in logged if i == dflt]
    check(proc.returncode == 130 and 5 <= len(logged) < 12 and 1 <= len(cut) < 3,
          f"cut short: rc {proc.returncode}, {len(logged)} logged, the default's rounds {cut}")
    p = run(sim_cmd(log, "--resume"), tmp, out_tail=2500)
    conf, count = confirmations(log)
    check(p.returncode == 0 and f"({12 - len(logged)} now, the rest logged before;" in p.stdout,
          f"resumed: the rounds not logged ({12 - len(logged)})")
    check(len(conf) == 12 and count == 16 and len({(i, r) for i, r, _ in conf}) == 12
          and sorted(r for _, r, _ in conf) == [1] * 4 + [2] * 4 + [3] * 4,
          f"resumed: twelve re-measurements in all, none twice: {conf}")
    check(conf[:len(logged)] == logged and [r for i, r, _ in conf if i == dflt] == [1, 2, 3],
          f"resumed: the default's rounds neither lost nor repeated: {conf}")


def cpu_on_a_worker(tmp):
    log = os.path.join(tmp, "cpu.h5")
    cmd = mptune_cmd(["tune", os.path.join(SRC, "examples", "cpu", "matmul.json"), "--strategy", "random", "--seed",
                      "2", "--budget", "4", "--confirm", "2", "--log", log, "--progress", "off"], 2)
    p = run(cmd, tmp, out_tail=2500)
    check(p.returncode == 0, "cpu: the run")
    conf, count = confirmations(log)
    dflt, _ = default_id(log)
    per_round = 2 if dflt in [i for i, r, _ in conf if r == 1][:2] else 3  # the default a finalist, or after them
    check(count == 4 and len(conf) == 3 * per_round and [r for _, r, _ in conf] == sorted(
          [1, 2, 3] * per_round) and (per_round == 2 or [i for i, _, _ in conf][2::3] == [dflt] * 3), f"cpu: {conf}")
    with h5py.File(log, "r") as f:
        check(all(int(r["rank"]) == 1 for r in f["confirmations"][:]), "cpu: measured again on the worker")
    fin = finalists(p.stdout)
    best = re.search(r"^best: (.*)$", p.stdout, re.M)
    rows = re.findall(r"^  #\d+  search \S+ ms  confirmed (\S+) ms  (.*)$", p.stdout, re.M)
    want = min(rows, key=lambda r: float(r[0])) if rows else None
    check(len(fin) == 2 and best and want and best.group(1) == want[1], f"cpu: the best reported is the best confirmed")
    reorder = "confirmation reorders the finalists" in p.stdout
    check(reorder == (want is not None and want[1] != rows[0][1]), "cpu: the summary says whether it reorders")


def omp_confirms_the_search(tmp):
    """an OpenMP kernel (two threads, a passive pool: tests/cpu_tune.sh's, about 3 us a call) on a worker. On a loaded
    machine the scheduler delays some of its timed runs by 1-10 ms; under AddressSanitizer on the loaded CI machine
    the re-measurements, each with such a run in its mean, confirmed the finalists at 1.4-1.9 ms against the search's
    0.0026 ms, and the speed-up over the default read 0.00x. The cpu evaluator now sets such runs aside (their
    threads' runqueue wait): the confirmed objectives stay within 50x of the search's (what is left is a wake-up the
    guest does not see as a runqueue wait, tens of microseconds on the dev VM), and the speed-up is no 0.00x"""
    log = os.path.join(tmp, "omp.h5")
    cmd = mptune_cmd(["tune", os.path.join(SRC, "tests", "kernels", "omp.json"), "--strategy", "brute_force",
                      "--budget", "24", "--log", log, "--progress", "off"], 2)
    p = run(cmd, tmp, env={"OMP_WAIT_POLICY": "passive", "OMP_NUM_THREADS": "2"}, out_tail=2500)
    check(p.returncode == 0 and "evaluations: 24 (24 valid, 0 failed)" in p.stdout, "omp: the run")
    fin = finalists(p.stdout)
    check(len(fin) == 3 and all(c < 50 * s for s, c in fin), f"omp: confirmed within 50x of the search: {fin}")
    m = re.search(r"^speed-up over default: (\S+)x$", p.stdout, re.M)
    check(m and float(m.group(1)) >= 0.02, f"omp: a speed-up over the default of {m.group(1) if m else None}x")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        sim_keeps_the_order(tmp)
        speedup_over_the_confirmed_default(tmp)
        failed_default(tmp)
        resume_goes_on(tmp)
        cpu_on_a_worker(tmp)
        omp_confirms_the_search(tmp)
    return exit_code()


if __name__ == "__main__":
    sys.exit(main())
