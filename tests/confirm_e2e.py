#!/usr/bin/env python3
"""tests/confirm_e2e.py: --confirm end to end. With the sim evaluator on the real brute-forced convolution
space the re-measurements replay the same times: the three finalists keep their order and objectives, the
nine re-measurements lie interleaved (A B C A B C A B C) in /confirmations and /evaluations holds the budget
alone (as does the T4 export); --confirm 0 measures nothing again. A confirmation cut short by SIGINT leaves
the run resumable, and --resume measures only the rounds not logged. With the cpu evaluator on two ranks the
finalists are measured again on the worker and the best reported is the best confirmed; an OpenMP kernel is
confirmed near the times the search measured (a run the scheduler delayed set aside: tests/cpu_delayed.sh)."""
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

import h5py

from checks import check, exit_code
from standins import MPTUNE, mptune_cmd, run

DATA = os.environ["MPT_SHARED_DATA"]
SRC = os.environ["MPT_SOURCE_DIR"]
PROBLEM = os.path.join(DATA, "t1", "convolution_milo.json")
SPACE = os.path.join(DATA, "brute-forced", "convolution_A100_T4.json.gz")


def sim_cmd(log, *extra):
    return [MPTUNE, "tune", PROBLEM, "--simulate", SPACE, "--strategy", "random", "--seed", "5", "--budget", "12",
            "--log", log, "--progress", "off", *extra]


def confirmations(log):
    with h5py.File(log, "r") as f:
        c = f["confirmations"][:] if "confirmations" in f else []
        return [(int(r["id"]), int(r["confirm"]), float(r["objective"])) for r in c], int(f["count"][()])


def finalists(out):
    return [(float(a), float(b)) for a, b in re.findall(r"^  #\d+  search (\S+) ms  confirmed (\S+) ms", out, re.M)]


def sim_keeps_the_order(tmp):
    log = os.path.join(tmp, "sim.h5")
    p = run(sim_cmd(log), tmp, out_tail=2500)
    check(p.returncode == 0, "sim: the run")
    fin = finalists(p.stdout)
    check(len(fin) == 3 and all(a == b for a, b in fin), f"sim: the replayed times confirm the search's: {fin}")
    check("confirmation keeps the search's best" in p.stdout and "(9 now;" in p.stdout, "sim: the summary")
    conf, count = confirmations(log)
    ids = [i for i, _, _ in conf[:3]]
    check(count == 12 and len(conf) == 9 and [i for i, _, _ in conf] == ids * 3
          and [r for _, r, _ in conf] == [1, 1, 1, 2, 2, 2, 3, 3, 3], f"sim: interleaved A B C x3: {conf}, {count}")
    obj = re.search(r"^objective: (\S+) ms$", p.stdout, re.M)
    check(obj and float(obj.group(1)) == fin[0][0], "sim: the best reported is the search's")
    t4 = os.path.join(tmp, "sim_T4.json")
    p = run([MPTUNE, "export", log, "--t4", t4], tmp, out_tail=2500)
    check(p.returncode == 0 and open(t4).read().count('"timestamp"') == 12,
          "sim: the T4 export holds the evaluations alone")
    log0 = os.path.join(tmp, "none.h5")
    p = run(sim_cmd(log0, "--confirm", "0"), tmp, out_tail=2500)
    check(p.returncode == 0 and "confirmation" not in p.stdout and confirmations(log0)[0] == [], "--confirm 0")


def resume_goes_on(tmp):
    """SIGINT once two re-measurements are logged; the resume makes the other seven"""
    log = os.path.join(tmp, "cut.h5")
    proc = subprocess.Popen(sim_cmd(log, "--budget", "3", "--simulate-delay", "0.3"), cwd=tmp, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 300
    while time.time() < deadline and proc.poll() is None:
        try:
            if len(confirmations(log)[0]) >= 2:
                break
        except (OSError, KeyError):
            pass
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=300)
    print(out[-2000:], err[-1000:])
    logged = confirmations(log)[0]
    check(proc.returncode == 130 and 2 <= len(logged) < 9, f"cut short: rc {proc.returncode}, {len(logged)} logged")
    p = run(sim_cmd(log, "--budget", "3", "--resume"), tmp, out_tail=2500)
    conf, count = confirmations(log)
    check(p.returncode == 0 and f"({9 - len(logged)} now, the rest logged before;" in p.stdout,
          f"resumed: the rounds not logged ({9 - len(logged)})")
    check(len(conf) == 9 and count == 3 and sorted(r for _, r, _ in conf) == [1, 1, 1, 2, 2, 2, 3, 3, 3],
          f"resumed: nine re-measurements in all, none twice: {conf}")


def cpu_on_a_worker(tmp):
    log = os.path.join(tmp, "cpu.h5")
    cmd = mptune_cmd(["tune", os.path.join(SRC, "examples", "cpu", "matmul.json"), "--strategy", "random", "--seed",
                      "2", "--budget", "4", "--confirm", "2", "--log", log, "--progress", "off"], 2)
    p = run(cmd, tmp, out_tail=2500)
    check(p.returncode == 0, "cpu: the run")
    conf, count = confirmations(log)
    check(count == 4 and len(conf) == 6 and [r for _, r, _ in conf] == [1, 1, 2, 2, 3, 3], f"cpu: {conf}")
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
        resume_goes_on(tmp)
        cpu_on_a_worker(tmp)
        omp_confirms_the_search(tmp)
    return exit_code()


if __name__ == "__main__":
    sys.exit(main())
