#!/usr/bin/python3
"""tests/compile_ahead.py: the evaluation pipeline end to end (docs/GPU.md, "The evaluation pipeline").

  held     workers holding configurations ahead (--lookahead 3, the replay evaluator with a delay, -n 3) are
           stopped by SIGTERM: what they held and had not started is logged as cancelled ("held by worker rank"),
           every configuration sent has exactly one record (no lost or duplicate observation), and --resume
           evaluates the cancelled ones again until the budget is reached with every id once
  cpu      the cpu evaluator compiling ahead (-n 2, --compile-jobs 1 --lookahead 2) on examples/cpu/matmul.json:
           the run's summary says how busy the device was, every observation has its compile time; stopped by
           --time mid-run, held configurations are cancelled and a resume completes the budget, every id once;
           the compile processes and their compilers are gone after the run
Environment (set by ctest): MPTUNE, MPIEXEC, MPT_SHARED_DATA, MPT_SOURCE_DIR.
"""
import os
import signal
import subprocess
import sys
import tempfile
import time

MPTUNE = os.environ["MPTUNE"]
MPIEXEC = os.environ["MPIEXEC"]
DATA = os.environ["MPT_SHARED_DATA"]
SRC = os.environ["MPT_SOURCE_DIR"]
T1 = os.path.join(DATA, "t1", "convolution_milo.json")
A100 = os.path.join(DATA, "brute-forced", "convolution_A100_T4.json.gz")
MATMUL = os.path.join(SRC, "examples", "cpu", "matmul.json")
CANCELLED = 7
FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what, flush=True)
    return cond


def records(log):
    import h5py
    with h5py.File(log, "r") as f:
        data = f["evaluations"][:int(f["count"][()])]
    return [(int(r["id"]), int(r["status"]), r["reason"].decode(errors="replace"), float(r["compile_ms"]))
            for r in data]


def run(args, timeout=600):
    p = subprocess.run([MPIEXEC] + [str(a) for a in args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=timeout, env=dict(os.environ, OPENBLAS_NUM_THREADS="1"))
    print(f"$ {' '.join(str(a) for a in args)} -> {p.returncode}\n{p.stdout[-1500:]}{p.stderr[-800:]}", flush=True)
    return p


def once_each(recs, budget, what):
    """every id measured at most once, cancelled ones aside; with budget: exactly budget of them"""
    ids = [r[0] for r in recs if r[1] != CANCELLED]
    check(len(ids) == len(set(ids)), f"{what}: {len(ids)} measurements of {len(set(ids))} ids: a duplicate")
    if budget is not None:
        check(len(ids) == budget, f"{what}: {len(ids)} measurements, budget {budget}")
    return ids


def t_held():
    tmp = tempfile.mkdtemp(prefix="mpt-ahead-held-")
    log = os.path.join(tmp, "run.h5")
    args = [MPIEXEC, "-n", "3", MPTUNE, "tune", T1, "--budget", "200", "--seed", "3", "--simulate", A100,
            "--simulate-delay", "0.02", "--lookahead", "3", "--log", log, "--progress", "off"]
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    t0 = time.time()
    while time.time() - t0 < 60 and not (os.path.exists(log) and len(records(log)) >= 10):
        time.sleep(0.05)
    os.kill(p.pid, signal.SIGTERM)
    out, err = p.communicate(timeout=120)
    print(out[-800:], err[-400:])
    check(p.returncode in (0, 143) and "stopped: signal" in out, f"held: not stopped by the signal: {p.returncode}")
    recs = records(log)
    held = [r for r in recs if r[1] == CANCELLED and "held by worker rank" in r[2]]
    print(f"held: {len(recs)} records, {len(held)} held ahead and cancelled")
    check(len(held) >= 1, "held: no configuration held ahead was logged as cancelled")
    measured = once_each(recs, None, "held, stopped")
    check(not set(r[0] for r in held) & set(measured), "held: a configuration both measured and cancelled as held")
    q = run(["-n", "3", MPTUNE, "tune", T1, "--budget", "200", "--seed", "3", "--simulate", A100, "--lookahead", "3",
             "--log", log, "--resume", "--progress", "off"])
    check(q.returncode == 0 and "stopped: evaluation budget reached" in q.stdout, "held: the resume did not finish")
    once_each(records(log), 200, "held, resumed")


def compile_processes(workdir):
    """this run's compilers still running: processes whose command line names the matmul kernel and this run's
    scratch folder (other tests compile matmul.c beside it under ctest -j)"""
    out = subprocess.run(["ps", "-eo", "args"], stdout=subprocess.PIPE, text=True).stdout
    return [l for l in out.splitlines() if "matmul.c" in l and workdir in l and "ps -eo" not in l]


def t_cpu():
    tmp = tempfile.mkdtemp(prefix="mpt-ahead-cpu-")
    log = os.path.join(tmp, "run.h5")
    base = ["-n", "2", MPTUNE, "tune", MATMUL, "--strategy", "random", "--seed", "5", "--compile-jobs", "1",
            "--lookahead", "2", "--iterations", "3", "--log", log, "--progress", "off", "--workdir", tmp]
    # a budget no run reaches in 6 s (every variant compiles for more than 0.1 s): the time budget stops it
    p = run(base + ["--budget", "400", "--time", "6", "--grace", "0"])
    check(p.returncode == 0 and "stopped: time budget reached" in p.stdout, "cpu: the time-limited run failed")
    recs = records(log)
    measured = once_each(recs, None, "cpu, stopped by --time")
    print(f"cpu: {len(measured)} measured, {len(recs) - len(measured)} cancelled after --time")
    check(all(r[3] > 0 for r in recs if r[1] not in (CANCELLED,)), "cpu: an observation without its compile time")
    budget = len(measured) + 4
    q = run(base + ["--budget", budget, "--resume"])
    check(q.returncode == 0 and "stopped: evaluation budget reached" in q.stdout, "cpu: the resume did not finish")
    check("devices: worked " in q.stdout and "evaluations/s" in q.stdout, "cpu: no device share in the summary")
    once_each(records(log), budget, "cpu, resumed")
    time.sleep(0.5)
    left = compile_processes(tmp)
    check(not left, f"cpu: compilers left running after the run: {left}")
    check(not [f for f in os.listdir(tmp) if f.startswith("mptune-")], f"cpu: scratch left in {tmp}: {os.listdir(tmp)}")


def main():
    what = sys.argv[1] if len(sys.argv) > 1 else ""
    if what == "held":
        t_held()
    elif what == "cpu":
        t_cpu()
    else:
        sys.exit("usage: compile_ahead.py held|cpu")
    if FAILURES:
        print(f"{len(FAILURES)} failure(s)")
        sys.exit(1)
    print("PASS")


if __name__ == "__main__":
    main()
