#!/usr/bin/python3
"""tests/dist_e2e.py: end-to-end tests of `mptune tune|collect|devices` under mpiexec.mpich with the
replay evaluator on the brute-forced convolution spaces. One ctest test per sub-command:

  tune NP          budgets respected exactly, no duplicates, best = best logged, statuses and
                   objectives equal to the replayed file (random and brute_force, T4 and KT cache files)
  collect          exhaustive collection with -n 5, then the collection replays to the same observations
  kill             SIGKILL of the whole mpiexec at random moments (>= 10 times), --resume each time:
                   nothing flushed is lost, nothing is evaluated twice, the budget is reached
  signal           SIGTERM / SIGINT: clean exit 0 with a message, resumable, resume completes
  bad              bad input: one clear message, non-zero exit, no hang, no output that passes for a run
                   (an unwritable --t4 refused before the run)
  idle             idle workers and the waiting coordinator each use < 5 % of a core
  devices          `mptune devices` table (CPU, and the replay evaluator)
  time             the time budget stops the run (and says when it cut bo's model of a resumed run short)

Environment (set by ctest): MPTUNE, MPIEXEC, MPT_SHARED_DATA, PYTHON.
"""
import gzip
import json
import math
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

MPTUNE = os.environ.get("MPTUNE", "build/mptune")
MPIEXEC = os.environ.get("MPIEXEC", "mpiexec.mpich")
DATA = os.environ.get("MPT_SHARED_DATA", os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data"))
T1 = os.path.join(DATA, "t1", "convolution_milo.json")
BF = os.path.join(DATA, "brute-forced")
A100 = os.path.join(BF, "convolution_A100_T4.json.gz")
MI250X_KT = os.path.join(BF, "convolution_MI250X_kerneltuner.json.gz")
W7800 = os.path.join(BF, "convolution_W7800_T4.json.gz")

FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL:", what, flush=True)
    return cond


def mpirun(np, *args, timeout=120, env=None, check_rc=None):
    cmd = [MPIEXEC, "-n", str(np), MPTUNE] + [str(a) for a in args]
    e = dict(os.environ)
    e["OPENBLAS_NUM_THREADS"] = "1"
    if env:
        e.update(env)
    t0 = time.time()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout, env=e)
    dt = time.time() - t0
    print(f"$ {' '.join(cmd)}  -> rc {p.returncode} in {dt:.1f} s", flush=True)
    check("Sanitizer" not in p.stderr and "runtime error:" not in p.stderr,
          f"sanitizer report from {' '.join(cmd)}: {p.stderr[-1500:]}")
    if check_rc is not None and p.returncode != check_rc:
        print(p.stdout[-3000:])
        print(p.stderr[-3000:])
    return p


def open_json(path):
    with open(path, "rb") as f:
        magic = f.read(2)
    op = gzip.open if magic == b"\x1f\x8b" else open
    with op(path, "rt") as f:
        return json.load(f)


def key_of(conf, names):
    return tuple(float(conf[n]) if isinstance(conf[n], (int, float)) else conf[n] for n in names)


PARAMS = None


def params():
    global PARAMS
    if PARAMS is None:
        t1 = open_json(T1)
        PARAMS = [p["Name"] for p in t1["ConfigurationSpace"]["TuningParameters"]]
    return PARAMS


def replay_table(path):
    """config key -> (status, objective) from a T4 or Kernel Tuner cache file (as mptune maps them)."""
    d = open_json(path)
    names = params()
    out = {}
    if "results" in d:
        for r in d["results"]:
            inv = r.get("invalidity", "correct")
            status = {"correct": "ok", "compile": "compile_error", "runtime": "runtime_error",
                      "timeout": "timeout", "correctness": "wrong_result", "constraints": "invalid"}.get(inv, inv)
            obj = None
            if status == "ok":
                for m in r.get("measurements", []):
                    if m["name"] == "time" and isinstance(m.get("value"), (int, float)):
                        obj = float(m["value"])
            out[key_of(r["configuration"], names)] = (status, obj)
    else:
        for _, r in d["cache"].items():
            t = r["time"]
            if isinstance(t, str):
                status = {"CompilationFailedConfig": "compile_error", "RuntimeFailedConfig": "runtime_error",
                          "InvalidConfig": "invalid"}.get(t, t)
                obj = None
            else:
                status, obj = "ok", float(t)
            out[key_of(r, names)] = (status, obj)
    return out


def t4_records(path):
    """list of (key, status, objective) from a T4 file written by mptune, in file order."""
    d = open_json(path)
    names = params()
    recs = []
    for r in d["results"]:
        inv = r.get("invalidity", "correct")
        status = {"correct": "ok", "compile": "compile_error", "runtime": "runtime_error", "timeout": "timeout",
                  "correctness": "wrong_result", "constraints": "invalid"}.get(inv, inv)
        obj = None
        for m in r.get("measurements", []):
            if m["name"] == "time" and isinstance(m.get("value"), (int, float)):
                obj = float(m["value"])
        recs.append((key_of(r["configuration"], names), status, obj if status == "ok" else None))
    return recs


def export(log, t4):
    if os.path.exists(t4):
        os.unlink(t4)
    p = subprocess.run([MPTUNE, "export", log, "--t4", t4], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=60)
    return p, (t4_records(t4) if p.returncode == 0 else None)


def parse_best(stdout):
    best = re.search(r"^best: (.*)$", stdout, re.M)
    obj = re.search(r"^objective: (\S+) ms$", stdout, re.M)
    conf = None
    if best and "=" in best.group(1):
        conf = {}
        for kv in best.group(1).split(","):
            k, v = kv.split("=", 1)
            conf[k.strip()] = float(v) if re.match(r"^-?[0-9.eE+-]+$", v) else v
    return conf, (float(obj.group(1)) if obj else None)


def same_obj(a, b):
    if a is None or b is None:
        return a is None and b is None
    return abs(a - b) <= 1e-9 * max(1.0, abs(a))


def verify_run(stdout, recs, table, budget, what):
    ok = check(len(recs) == budget, f"{what}: {len(recs)} evaluations logged, budget {budget}")
    keys = [r[0] for r in recs]
    ok &= check(len(set(keys)) == len(keys), f"{what}: duplicate configurations in the log")
    mism = [r for r in recs if r[0] not in table or table[r[0]][0] != r[1] or not same_obj(table[r[0]][1], r[2])]
    ok &= check(not mism, f"{what}: {len(mism)} logged observations differ from the replayed file, e.g. {mism[:2]}")
    valid = [r for r in recs if r[1] == "ok"]
    conf, obj = parse_best(stdout)
    if valid:
        best = min(valid, key=lambda r: r[2])
        ok &= check(obj is not None and abs(obj - best[2]) <= 1e-5 * best[2],
                    f"{what}: printed objective {obj} != best logged {best[2]}")
        ok &= check(conf is not None and key_of(conf, params()) == best[0],
                    f"{what}: printed best configuration {conf} is not the best logged {best[0]}")
    return ok


# ---------------------------------------------------------------------------------------------------

def t_tune(np):
    tmp = tempfile.mkdtemp(prefix=f"mpt-dist-tune{np}-")
    try:
        cases = [("random", A100, 60, 11), ("brute_force", MI250X_KT, 37, 5), ("random", W7800, 2 * np + 1, 3)]
        for strategy, replay, budget, seed in cases:
            log, t4 = os.path.join(tmp, f"{strategy}.h5"), os.path.join(tmp, f"{strategy}_T4.json")
            for f in (log, t4):
                if os.path.exists(f):
                    os.unlink(f)
            p = mpirun(np, "tune", T1, "--strategy", strategy, "--budget", budget, "--seed", seed, "--simulate",
                       replay, "--log", log, "--t4", t4, "--progress", "lines", check_rc=0)
            what = f"tune -n {np} {strategy} {os.path.basename(replay)} budget {budget}"
            if not check(p.returncode == 0, f"{what}: exit {p.returncode}: {p.stderr[-500:]}"):
                continue
            check("stopped: evaluation budget reached" in p.stdout, f"{what}: no budget stop message")
            check(f"log: {log}" in p.stdout, f"{what}: log location not printed")
            check("progress:" in p.stderr, f"{what}: no progress line on stderr")
            check(re.search(r"^rank\s+host", p.stdout, re.M) is not None, f"{what}: no device table")
            check(p.stdout.count("replay") >= (np - 1 if np > 1 else 1), f"{what}: device table lacks the workers")
            recs = t4_records(t4)
            verify_run(p.stdout, recs, replay_table(replay), budget, what)
            import h5py
            with h5py.File(log, "r") as f:  # the device table is stored in the log: one row per worker
                devs = f["devices"][:]
            check(sorted(int(d["rank"]) for d in devs) == (list(range(1, np)) if np > 1 else [0]) and
                  all(d["vendor"].split(b"\0")[0] == b"replay" for d in devs), f"{what}: device table in the log: {devs}")
            if strategy == "brute_force":
                # brute force in id order: the first `budget` valid configurations, each once
                check(len(set(r[0] for r in recs)) == budget, f"{what}: brute force repeated a configuration")
            # the log read back independently of the T4 export (mptune export) gives the same records
            p2, recs2 = export(log, os.path.join(tmp, "again.json"))
            check(p2.returncode == 0 and recs2 == recs, f"{what}: exporting the log again differs from --t4")
            # the same run again with the same seed on one rank evaluates the same set (reproducible)
        if np == 5:  # every registered strategy runs distributed: batched asks, exact budget, no duplicates
            for strategy in ("bo", "ga", "de", "pso", "firefly", "sa", "mls"):
                log, t4 = os.path.join(tmp, f"s_{strategy}.h5"), os.path.join(tmp, f"s_{strategy}.json")
                p = mpirun(np, "tune", T1, "--strategy", strategy, "--budget", 24, "--seed", 1, "--simulate", W7800,
                           "--log", log, "--t4", t4, "--progress", "off")
                if "unknown strategy" in p.stderr:
                    print(f"strategy {strategy} not registered: skipped")
                    continue
                if check(p.returncode == 0, f"tune -n 5 --strategy {strategy}: rc {p.returncode}: {p.stderr[-400:]}"):
                    verify_run(p.stdout, t4_records(t4), replay_table(W7800), 24, f"tune -n 5 {strategy}")
        # reproducibility across rank counts: random with a seed proposes the same set of configurations
        log1 = os.path.join(tmp, "repro.h5")
        t41 = os.path.join(tmp, "repro.json")
        p = mpirun(np, "tune", T1, "--budget", 25, "--seed", 99, "--simulate", A100, "--log", log1, "--t4", t41,
                   "--progress", "off", check_rc=0)
        if check(p.returncode == 0, f"tune -n {np} repro run failed"):
            ref = os.path.join(tmp, "repro1.h5")
            ref4 = os.path.join(tmp, "repro1.json")
            q = mpirun(1, "tune", T1, "--budget", 25, "--seed", 99, "--simulate", A100, "--log", ref, "--t4", ref4,
                       "--progress", "off", check_rc=0)
            if check(q.returncode == 0, "tune -n 1 repro run failed"):
                check(set(r[0] for r in t4_records(t41)) == set(r[0] for r in t4_records(ref4)),
                      f"random --seed 99 --budget 25 evaluates different configurations with -n {np} and -n 1")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def t_collect():
    tmp = tempfile.mkdtemp(prefix="mpt-dist-collect-")
    try:
        log, t4 = os.path.join(tmp, "space.h5"), os.path.join(tmp, "space_T4.json")
        p = mpirun(5, "collect", T1, "--simulate", A100, "--log", log, "--t4", t4, "--progress", "lines",
                   timeout=300, check_rc=0)
        if not check(p.returncode == 0, f"collect -n 5 failed: {p.stderr[-800:]}"):
            return
        table = replay_table(A100)
        recs = t4_records(t4)
        check("ETA" in p.stderr, "collect: no progress line with ETA")
        check("stopped: every configuration evaluated" in p.stdout, "collect: wrong stop reason")
        verify_run(p.stdout, recs, table, len(table), "collect -n 5")
        check(set(r[0] for r in recs) == set(table), "collect: the collection misses configurations")
        # the collection is itself a brute-forced space: replay it and get the same observations
        log2, t42 = os.path.join(tmp, "replayed.h5"), os.path.join(tmp, "replayed_T4.json")
        q = mpirun(3, "tune", T1, "--strategy", "random", "--budget", 150, "--seed", 7, "--simulate", t4, "--log", log2,
                   "--t4", t42, "--progress", "off", check_rc=0)
        if check(q.returncode == 0, f"replaying the collection failed: {q.stderr[-800:]}"):
            verify_run(q.stdout, t4_records(t42), table, 150, "replay of the collection")
        # a budget larger than the space: stops when the space is exhausted
        log3 = os.path.join(tmp, "exhaust.h5")
        q = mpirun(2, "tune", T1, "--budget", 5000, "--simulate", A100, "--log", log3, "--progress", "off", check_rc=0)
        check(q.returncode == 0 and "stopped: every configuration evaluated" in q.stdout and
              re.search(r"^evaluations: 4362 ", q.stdout, re.M), f"budget beyond the space: {q.stdout[-400:]}")
        check(len(set(r[0] for r in log_ids(log3))) == 4362, "budget beyond the space: not every configuration once")
        # a finished collection cannot be resumed
        r = mpirun(2, "collect", T1, "--simulate", A100, "--log", log, "--resume")
        check(r.returncode != 0 and "finished" in r.stderr, f"collect --resume of a finished collection: rc {r.returncode} {r.stderr[-300:]}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def rank_pids(marker):
    """pids of the mptune rank processes whose command line contains marker"""
    pids = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/cmdline", "rb") as f:
                cl = f.read().split(b"\0")
        except OSError:
            continue
        if cl and os.path.basename(cl[0].decode(errors="replace")) == "mptune" and marker.encode() in b" ".join(cl):
            pids.append(int(d))
    return pids


def wait_gone(marker, timeout=10):
    t0 = time.time()
    while time.time() - t0 < timeout:
        if not rank_pids(marker):
            return True
        time.sleep(0.05)
    return False


def read_trace(path):
    ids = []
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                parts = line.split()
                if len(parts) == 2:
                    ids.append(int(parts[0]))
    return ids


def spawn(args, cwd=None, env=None):
    """starts ARGS (a whole command line) in a session of its own (for signals to mpiexec, or killpg),
    output captured, one OpenBLAS thread"""
    return subprocess.Popen([str(a) for a in args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, cwd=cwd, env=env or dict(os.environ, OPENBLAS_NUM_THREADS="1"))


def wait_until(ready, seconds, step=0.05):
    """polls READY() until it is true or SECONDS have passed"""
    t0 = time.time()
    while time.time() - t0 < seconds and not ready():
        time.sleep(step)


def stop_run(p, sig, what, timeout=60):
    """sends SIG to the spawned run P (mpiexec forwards it to the ranks) and waits for it: (out, err), or None
    (a failure recorded) when it did not stop within TIMEOUT s, its process group then killed"""
    os.kill(p.pid, sig)
    try:
        return p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        check(False, f"{what}: the run did not stop within {timeout} s of the signal")
        return None


def log_ids(log):
    """config ids and records from the log with h5py (independent of mptune's reader)"""
    import h5py
    with h5py.File(log, "r") as f:  # a killed run's log opens as it is (docs/RUNLOG.md)
        data = f["evaluations"][:int(f["count"][()])]
    return [(int(r["id"]), int(r["status"]), float(r["objective"])) for r in data]


def t_kill():
    tmp = tempfile.mkdtemp(prefix="mpt-dist-kill-")
    try:
        log, trace = os.path.join(tmp, "run.h5"), os.path.join(tmp, "trace.txt")
        budget, kills, rng = 220, 0, random.Random(12345)
        before = {}  # id -> (status, objective) seen after earlier kills
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1", MPT_TRACE_APPENDS=trace)
        attempt = 0
        finished = False
        while attempt < 40:
            attempt += 1
            args = [MPIEXEC, "-n", "3", MPTUNE, "tune", T1, "--strategy", "random", "--budget", str(budget),
                    "--seed", "4", "--simulate", A100, "--simulate-delay", "0.008", "--log", log, "--progress", "off"]
            if os.path.exists(log):
                args.append("--resume")
            last = kills >= 10
            p = spawn(args, env=env)
            if last:
                out, err = p.communicate(timeout=120)
                if not check(p.returncode == 0, f"final resume failed: rc {p.returncode}: {err[-800:]}"):
                    break
                finished = "stopped: evaluation budget reached" in out
                break
            if kills % 2 == 0:  # anywhere, start-up and log (re)opening included
                time.sleep(rng.uniform(0.05, 1.2))
            else:  # in the middle of the evaluations: after this session logged its first record
                n0, t0 = len(read_trace(trace)), time.time()
                while p.poll() is None and len(read_trace(trace)) == n0 and time.time() - t0 < 20:
                    time.sleep(0.02)
                time.sleep(rng.uniform(0.0, 0.5))
            if p.poll() is not None:  # finished before the kill
                out, err = p.communicate()
                check(p.returncode == 0, f"run ended by itself with rc {p.returncode}: {err[-800:]}")
                finished = p.returncode == 0
                break
            os.killpg(p.pid, signal.SIGKILL)
            p.communicate()
            kills += 1
            check(wait_gone(log), "rank processes survived the SIGKILL of the process group")
            for pid in rank_pids(log):
                os.kill(pid, signal.SIGKILL)
            if not os.path.exists(log):
                continue  # killed before the log was created
            recs = log_ids(log)
            ids = [r[0] for r in recs]
            check(len(ids) == len(set(ids)), f"kill {kills}: a configuration is logged twice")
            now = {r[0]: r[1:] for r in recs}
            lost = [i for i in before if i not in now or now[i][0] != before[i][0] or not (
                now[i][1] == before[i][1] or (math.isnan(now[i][1]) and math.isnan(before[i][1])))]
            check(not lost, f"kill {kills}: {len(lost)} records present before are gone or changed")
            traced = set(read_trace(trace))
            missing = traced - set(now)
            check(not missing, f"kill {kills}: {len(missing)} flushed records (traced) are not in the log")
            print(f"kill {kills}: {len(recs)} records, {len(traced)} traced", flush=True)
            before = now
        check(kills >= 10, f"only {kills} kills happened")
        check(finished, "the run did not reach its budget after the kills")
        recs = log_ids(log)
        ids = [r[0] for r in recs]
        check(len(ids) == budget, f"after resuming: {len(ids)} records, budget {budget}")
        check(len(set(ids)) == len(ids), "after resuming: duplicates")
        for i in before:
            check(i in set(ids), f"record {i} lost at the end")
        # statuses match the replayed file (through the T4 export)
        p, t4recs = export(log, os.path.join(tmp, "run_T4.json"))
        if check(p.returncode == 0, f"export failed: {p.stderr}"):
            table = replay_table(A100)
            mism = [r for r in t4recs if table[r[0]][0] != r[1] or not same_obj(table[r[0]][1], r[2])]
            check(not mism, f"after kills: {len(mism)} observations differ from the replayed file")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def interrupted(args, log, what, np=1, after=0.7):
    """runs mptune ARGS under mpiexec -n NP, sends SIGINT once the log exists and AFTER seconds more,
    and checks it stopped resumably (exit 0, the stop message)"""
    n0 = len(log_ids(log)) if os.path.exists(log) else 0
    p = spawn([MPIEXEC, "-n", np, MPTUNE] + list(args))
    wait_until(lambda: os.path.exists(log) and len(log_ids(log)) > n0, 30)
    time.sleep(after)
    stopped = stop_run(p, signal.SIGINT, what)
    if stopped is None:
        return ""
    out, err = stopped
    # 130: the status a shell gives a command SIGINT stopped; mpiexec.mpich, signalled itself, may report 0
    check(p.returncode in (0, 130) and "stopped: signal" in out, f"{what}: rc {p.returncode}: {out[-300:]} {err[-300:]}")
    return out


def t_signal():
    tmp = tempfile.mkdtemp(prefix="mpt-dist-signal-")
    try:
        for np, sig in ((3, signal.SIGTERM), (1, signal.SIGINT), (4, signal.SIGINT)):
            log = os.path.join(tmp, f"run{np}.h5")
            args = [MPIEXEC, "-n", str(np), MPTUNE, "tune", T1, "--budget", "300", "--seed", "8", "--simulate", A100,
                    "--simulate-delay", "0.01", "--log", log, "--progress", "off"]
            if np == 1:  # resumed without --strategy and --option: the logged ones
                args += ["--strategy", "ga", "--option", "popsize=10"]
            p = spawn(args)
            wait_until(lambda: os.path.exists(log), 30)  # the run has started
            time.sleep(0.7)
            stopped = stop_run(p, sig, f"-n {np} {sig.name}")
            if stopped is None:
                continue
            out, err = stopped
            what = f"-n {np} {sig.name}"
            # the exit status a shell gives a command the signal stopped (the log is resumable all the same);
            # mpiexec.mpich, signalled itself, may report 0 instead of its ranks' status
            check(p.returncode in (0, 128 + sig), f"{what}: exit {p.returncode} (expected {128 + sig}): {err[-600:]}")
            check("stopped: signal" in out and "--resume" in out, f"{what}: no stop message: {out[-400:]}")
            n = len(log_ids(log))
            check(0 < n < 300, f"{what}: {n} records after the stop")
            budget_args = [] if np == 1 else ["--budget", 300]  # without --budget: the logged budget
            q = mpirun(np, "tune", T1, *budget_args, "--seed", 8, "--simulate", A100, "--log", log, "--resume",
                       "--progress", "off", check_rc=0)
            check(q.returncode == 0 and "stopped: evaluation budget reached" in q.stdout, f"{what}: resume failed")
            recs = log_ids(log)
            ids = [r[0] for r in recs if r[1] != 7]  # 7: cancelled
            check(len(ids) == 300 and len(set(ids)) == 300, f"{what}: after resume {len(ids)} evaluations, {len(set(ids))} distinct")
            check(f"resuming {log}: {n} logged observations" in q.stdout, f"{what}: resume did not report the logged observations")
            if np == 1:
                check(f"note: continuing with the strategy {log} was started with, 'ga' (options popsize=10)" in q.stdout
                      and "strategy ga," in q.stdout, f"{what}: resume did not take the logged strategy: {q.stdout[:600]}")
        # settings across resumes: a --time given to a resume bounds the logged budget, it does not replace it;
        # what a resume replaced (--budget, --strategy) is what the next plain --resume continues with; a log
        # is resumed by the command that made it
        log = os.path.join(tmp, "settings.h5")
        base = ["tune", T1, "--seed", "3", "--simulate", A100, "--simulate-delay", "0.01", "--log", log, "--progress", "off"]
        interrupted(base + ["--budget", "100"], log, "settings: first run")
        q = mpirun(1, *base, "--resume", "--time", "60", check_rc=0)
        check("budget 100 (and a time budget)" in q.stdout and "stopped: evaluation budget reached" in q.stdout
              and len(log_ids(log)) == 100, f"settings: --resume --time dropped the logged budget: {q.stdout[:400]}")
        log2 = os.path.join(tmp, "settings2.h5")
        base2 = [a if a != log else log2 for a in base]
        interrupted(base2 + ["--budget", "100"], log2, "settings: second run")
        interrupted(base2 + ["--resume", "--budget", "400", "--strategy", "ga", "--option", "popsize=12"], log2,
                    "settings: resume with a new budget and strategy")
        with open(log2, "rb") as f:
            before = f.read()
        q = mpirun(1, "collect", T1, "--simulate", A100, "--log", log2, "--resume", "--progress", "off")
        check(q.returncode != 0 and f"{log2} is the log of an `mptune tune` run: resume it with mptune tune --resume" in q.stderr,
              f"settings: collect --resume of a tune log: rc {q.returncode}: {q.stderr[-300:]}")
        # a finished tune log is refused as the other command's too (it was said to be 'finished (budget
        # reached); nothing to resume (a larger budget extends it)', and collect has no --budget)
        log3 = os.path.join(tmp, "settings3.h5")
        mpirun(1, "tune", T1, "--simulate", A100, "--strategy", "random", "--budget", "20", "--log", log3,
               "--progress", "off", check_rc=0)
        q = mpirun(1, "collect", T1, "--simulate", A100, "--log", log3, "--resume", "--progress", "off")
        check(q.returncode != 0 and f"{log3} is the log of an `mptune tune` run: resume it with mptune tune --resume"
              in q.stderr and "budget" not in q.stderr,
              f"settings: collect --resume of a finished tune log: rc {q.returncode}: {q.stderr[-300:]}")
        # another replay file (another device's measurements) would mix two sources in one log
        w6600 = os.path.join(BF, "convolution_W6600_T4.json.gz")
        q = mpirun(1, "tune", T1, "--log", log2, "--resume", "--progress", "off")
        check(q.returncode != 0 and f"{log2} was run with --simulate {A100}; resuming it on real evaluations would mix"
              in q.stderr, f"settings: resume of a replayed run on real evaluations: rc {q.returncode}: {q.stderr[-300:]}")
        q = mpirun(2, "tune", T1, "--simulate", os.path.join(tmp, "nothere_T4.json"), "--log", log2, "--resume")
        check(q.returncode != 0 and "nothere_T4.json" in q.stderr, f"settings: a missing replay file: {q.stderr[-300:]}")
        with open(log2, "rb") as f:  # refused resumes leave the log exactly as it was (they added a session row)
            check(f.read() == before, "settings: a refused resume changed the log")
        # --force over a log another run is writing: refused before anything runs (no run header)
        p = spawn([MPIEXEC, "-n", 1, MPTUNE] + base2 + ["--resume", "--time", "30"])
        wait_until(lambda: os.path.exists(log2 + ".lock"), 30)
        q = mpirun(1, "tune", T1, "--simulate", A100, "--log", log2, "--force", "--budget", 5)
        stop_run(p, signal.SIGINT, "settings: the run --force met")
        check(q.returncode != 0 and "being written by another mptune" in q.stderr and "valid configurations" not in q.stdout,
              f"settings: --force over a log being written: rc {q.returncode}: {q.stdout[-300:]} {q.stderr[-300:]}")
        q = mpirun(1, "tune", T1, "--simulate", w6600, "--simulate-delay", "0.01", "--log", log2, "--resume", "--time",
                   "0.3", "--progress", "off", check_rc=0)
        check(f"warning: {log2} was run with --simulate {A100}; resuming it with --simulate {w6600}" in q.stderr,
              f"settings: no warning for another replay file: {q.stderr[-300:]}")
        q = mpirun(1, *base2, "--resume", "--time", "0.5", check_rc=0)
        check(f"continuing with the strategy {log2} was started with, 'ga' (options popsize=12)" in q.stdout
              and "budget 400 (and a time budget)" in q.stdout,
              f"settings: the next resume did not take the settings the last one gave: {q.stdout[:500]}")
        # --grace bounds the stop of a real evaluation too: a variant that hangs (cpu evaluator, failing.c mode 4,
        # --timeout 120) is killed when the grace period after the signal expires, on one rank (in-process) and
        # on a worker, and logged as cancelled (evaluated again on --resume)
        src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "kernels")
        shutil.copy(os.path.join(src, "failing.c"), tmp)
        with open(os.path.join(src, "failing.json")) as f:
            hang = json.load(f)
        for prm in hang["ConfigurationSpace"]["TuningParameters"]:
            if prm["Name"] == "mode":
                prm["Values"] = "[0, 4]"  # 4: the variant hangs
        hang_t1 = os.path.join(tmp, "hang.json")
        with open(hang_t1, "w") as f:
            json.dump(hang, f)
        for np in (1, 2):
            log = os.path.join(tmp, f"hang{np}.h5")
            launch = [] if np == 1 else [MPIEXEC, "-n", str(np)]  # one rank started directly: its own exit status
            args = launch + [MPTUNE, "tune", hang_t1, "--strategy", "brute_force", "--budget", "4",
                    "--timeout", "120", "--grace", "1", "--log", log, "--progress", "off"]
            p = spawn(args, cwd=tmp)
            wait_until(lambda: os.path.exists(log) and len(log_ids(log)) >= 1, 60, 0.1)
            time.sleep(1.0)  # the next variant (mode 4) hangs
            ts = time.time()
            stopped = stop_run(p, signal.SIGTERM, f"hang -n {np}")
            if stopped is None:
                continue
            out, err = stopped
            took = time.time() - ts
            recs = log_ids(log)
            # the hanging variant, and what the worker held ahead of it (compile-ahead): cancelled
            n_cancelled = re.search(r"\((\d+) cancelled in flight\)", out)
            check(p.returncode in ((143,) if np == 1 else (0, 143)) and n_cancelled and int(n_cancelled.group(1)) >= 1,
                  f"hang -n {np}: rc {p.returncode}: {out[-300:]} {err[-300:]}")
            check(took < 30, f"hang -n {np}: stopping took {took:.1f} s with --grace 1 (the evaluation ran on to its timeout)")
            check(7 in [r[1] for r in recs], f"hang -n {np}: no cancelled record: {recs}")
        # grace period expired: in-flight evaluations are recorded as cancelled; resume evaluates them
        log = os.path.join(tmp, "grace.h5")
        args = [MPIEXEC, "-n", "3", MPTUNE, "tune", T1, "--strategy", "brute_force", "--budget", "6", "--simulate",
                A100, "--simulate-delay", "2", "--grace", "0.3", "--log", log, "--progress", "off"]
        p = spawn(args)
        wait_until(lambda: os.path.exists(log), 20)
        time.sleep(0.4)
        stopped = stop_run(p, signal.SIGTERM, "grace expiry")
        if stopped is None:
            return
        out, err = stopped
        check(p.returncode in (0, 143) and "2 cancelled in flight" in out, f"grace expiry: rc {p.returncode}: {out[-300:]} {err[-300:]}")
        recs = log_ids(log)
        check([r[1] for r in recs] == [7, 7], f"grace expiry: expected two cancelled records, got {recs}")
        q = mpirun(3, "tune", T1, "--strategy", "brute_force", "--budget", 6, "--simulate", A100, "--log", log,
                   "--resume", "--progress", "off", check_rc=0)
        check(q.returncode == 0 and "stopped: evaluation budget reached" in q.stdout, "grace expiry: resume failed")
        done = [r[0] for r in log_ids(log) if r[1] != 7]
        # brute force in id order, after the default configuration that a tuning run measures first
        extra, missing = set(done) - set(range(6)), set(range(6)) - set(done)
        check(len(done) == 6 and len(set(done)) == 6 and len(extra) <= 1 and len(missing) == len(extra),
              f"grace expiry: after resume the evaluated ids are {sorted(done)}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def t_bad():
    tmp = tempfile.mkdtemp(prefix="mpt-dist-bad-")
    try:
        log = os.path.join(tmp, "run.h5")
        # a replay file whose parameters do not match: rename one parameter
        d = open_json(A100)
        for r in d["results"]:
            r["configuration"]["blocksize_x"] = r["configuration"].pop("block_size_x")
        wrong = os.path.join(tmp, "wrong_T4.json")
        with open(wrong, "w") as f:
            json.dump(d, f)
        # a replay file lacking configurations (every block_size_x=16 one): the evaluator fails mid-run
        d2 = open_json(A100)
        d2["results"] = [r for r in d2["results"] if r["configuration"]["block_size_x"] != 16]
        partial = os.path.join(tmp, "partial_T4.json")
        with open(partial, "w") as f:
            json.dump(d2, f)
        unreadable = os.path.join(tmp, "unreadable.json")
        shutil.copy(T1, unreadable)
        os.chmod(unreadable, 0)
        nodir_t4 = os.path.join(tmp, "nodir", "x.json")
        notlog = os.path.join(tmp, "notalog.h5")
        with open(notlog, "w") as f:
            f.write("this is not HDF5\n")
        divzero = os.path.join(tmp, "divzero.json")  # every configuration fails a condition: the cause is said
        with open(T1) as f:
            dz = json.load(f)
        dz["ConfigurationSpace"]["Conditions"][1] = {"Expression": "block_size_x // (tile_size_x - tile_size_x) > 1"}
        with open(divzero, "w") as f:
            json.dump(dz, f)
        cases = [
            ("empty space", ["tune", divzero, "--budget", 5, "--simulate", A100, "--log", log],
             "ZeroDivisionError: integer division or modulo by zero (at block_size_x=16, tile_size_x=1); configurations "
             "where it fails are not valid (reported once); so the search space has no valid configuration"),
            ("missing T1", ["tune", os.path.join(tmp, "nope.json"), "--budget", 5, "--simulate", A100, "--log", log],
             "nope.json"),
            ("missing replay", ["tune", T1, "--budget", 5, "--simulate", os.path.join(tmp, "nope_T4.json"), "--log", log],
             "nope_T4.json"),
            ("mismatched replay", ["tune", T1, "--budget", 5, "--simulate", wrong, "--log", log], "block_size_x"),
            ("budget 0", ["tune", T1, "--budget", 0, "--simulate", A100, "--log", log], "budget"),
            ("value left out", ["tune", T1, "--budget", "--simulate", A100, "--log", log],
             "--budget needs a value, but is followed by the option '--simulate'"),
            ("unknown strategy", ["tune", T1, "--strategy", "nosuch", "--budget", 5, "--simulate", A100, "--log", log],
             "nosuch"),
            ("not an mptune log", ["tune", T1, "--budget", 5, "--simulate", A100, "--log", notlog, "--resume"],
             "not an mptune"),
            ("existing file without --resume", ["tune", T1, "--budget", 5, "--simulate", A100, "--log", notlog],
             "--resume"),
            # an output that cannot be written is refused before the run, not after it
            ("--t4 in a missing directory", ["tune", T1, "--budget", 5, "--simulate", A100, "--log", log, "--t4", nodir_t4],
             f"--t4 {nodir_t4}: cannot write there: directory '{os.path.dirname(nodir_t4)}' does not exist"),
            # both say what is accepted
            ("time 0", ["tune", T1, "--time", 0, "--simulate", A100, "--log", log],
             "--time: bad value '0' (expected a number > 0 and <= 1e+09)"),
            ("time -1", ["tune", T1, "--time", -1, "--simulate", A100, "--log", log],
             "--time: bad value '-1' (expected a number > 0 and <= 1e+09)"),
        ]
        if os.geteuid() != 0:
            cases.append(("unreadable T1", ["tune", unreadable, "--budget", 5, "--simulate", A100, "--log", log],
                          "unreadable.json"))
            unreadable_replay = os.path.join(tmp, "unreadable_T4.json.gz")
            shutil.copy(A100, unreadable_replay)
            os.chmod(unreadable_replay, 0)
            cases.append(("unreadable replay", ["tune", T1, "--budget", 5, "--simulate", unreadable_replay, "--log", log],
                          "unreadable_T4.json.gz"))
        for np in (1, 3):
            for what, args, needle in cases:
                if np == 1 and what not in ("missing T1", "missing replay", "mismatched replay", "not an mptune log"):
                    continue  # the rest is the same code on one rank; -n 3 also checks the go/no-go
                t0 = time.time()
                try:
                    p = mpirun(np, *args, timeout=60)
                except subprocess.TimeoutExpired:
                    check(False, f"-n {np} {what}: hangs")
                    continue
                w = f"-n {np} {what}"
                check(p.returncode != 0, f"{w}: exit 0")
                msgs = [l for l in p.stderr.splitlines() if l.startswith("mptune tune:")]
                check(len(msgs) == 1, f"{w}: expected one message, got {msgs or p.stderr[-500:]}")
                check(needle in p.stderr, f"{w}: message does not mention '{needle}': {p.stderr[-400:]}")
                check(time.time() - t0 < 30, f"{w}: took {time.time() - t0:.0f} s")
                check(not os.path.exists(log), f"{w}: left a run log behind")
                if os.path.exists(log):
                    os.unlink(log)
        p = mpirun(3, "collect", T1, "--simulate", A100, "--log", log, "--t4", nodir_t4, timeout=60)
        check(p.returncode != 0 and p.stderr.count("mptune collect:") == 1 and "nodir" in p.stderr
              and not os.path.exists(log), f"collect --t4 in a missing directory: rc {p.returncode}: {p.stderr[-400:]}")
        for np in (1, 3):
            plog = os.path.join(tmp, f"partial{np}.h5")
            p = mpirun(np, "tune", T1, "--strategy", "brute_force", "--budget", 50, "--simulate", partial, "--log", plog,
                       "--t4", os.path.join(tmp, f"partial{np}.json"), timeout=60)
            check(p.returncode != 0 and "block_size_x=16" in p.stderr and "--resume" in p.stderr,
                  f"-n {np} replay lacking a configuration: rc {p.returncode}: {p.stderr[-400:]}")
            check(not os.path.exists(os.path.join(tmp, f"partial{np}.json")), "a failed run wrote its T4")
            q = mpirun(np, "tune", T1, "--budget", 5, "--simulate", A100, "--log", plog, "--resume", "--progress", "off")
            check(q.returncode == 0, f"-n {np}: the failed run could not be resumed: {q.stderr[-300:]}")
        # --resume of a finished run
        t4 = os.path.join(tmp, "run_T4.json")
        p = mpirun(2, "tune", T1, "--budget", 4, "--simulate", A100, "--log", log, "--t4", t4, "--progress", "off", check_rc=0)
        check(p.returncode == 0, "a short run failed")
        first = [r[0] for r in log_ids(log)]
        for extra in ([], ["--budget", 4]):  # nothing to go on to
            q = mpirun(3, "tune", T1, "--simulate", A100, "--log", log, "--t4", t4, "--resume", *extra)
            check(q.returncode != 0 and "finished" in q.stderr and len(q.stderr.strip().splitlines()) == 1,
                  f"--resume {extra} of a finished run: rc {q.returncode}: {q.stderr[-400:]}")
            check(len(t4_records(t4)) == 4, "--resume of a finished run touched its T4")
        # a larger budget extends it: the logged records kept, new ones distinct, the T4 rewritten, finished again
        q = mpirun(3, "tune", T1, "--budget", 8, "--simulate", A100, "--log", log, "--t4", t4, "--resume", "--progress", "off")
        ids = [r[0] for r in log_ids(log)]
        check(q.returncode == 0 and "extending it to 8" in q.stdout and len(ids) == 8 and ids[:4] == first
              and len(set(ids)) == 8 and len(t4_records(t4)) == 8, f"--resume --budget 8 of a finished run: rc "
              f"{q.returncode}: {ids} {q.stderr[-300:]}")
        import h5py
        with h5py.File(log, "r") as f:
            check(int(f.attrs["finished"]) == 1 and int(f.attrs["budget"]) == 8, "the extended run is not finished at 8")
        # --force overwrites it
        q = mpirun(3, "tune", T1, "--budget", 7, "--simulate", A100, "--log", log, "--t4", t4, "--force", "--progress", "off")
        check(q.returncode == 0 and len(log_ids(log)) == 7 and len(t4_records(t4)) == 7, f"--force: {q.stderr[-300:]}")
        # a worker-side failure after rank 0 checked fine (the replay file vanishes on the workers only is
        # not possible here; the mismatched replay above fails on the workers only with -n 3)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def cpu_ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime (clock ticks)


def rank_of(pid):
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            for kv in f.read().split(b"\0"):
                if kv.startswith(b"PMI_RANK="):
                    return int(kv[9:])
    except OSError:
        pass
    return -1


def parent_of(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except OSError:
        return -1


def t_idle():
    """-n 4, budget 2, long evaluations: rank 3 has no work (idle worker), rank 0 waits for results."""
    tmp = tempfile.mkdtemp(prefix="mpt-dist-idle-")
    try:
        log = os.path.join(tmp, "idle.h5")
        args = [MPIEXEC, "-n", "4", MPTUNE, "tune", T1, "--strategy", "brute_force", "--budget", "2", "--simulate",
                A100, "--simulate-delay", "4", "--log", log, "--progress", "off"]
        p = spawn(args)
        # wait for the device table (the run has started), then measure over 2 s
        t0 = time.time()
        pids = {}
        while time.time() - t0 < 30:
            pids = {rank_of(x): x for x in rank_pids(log)}
            if len(pids) == 4 and os.path.exists(log):
                break
            time.sleep(0.1)
        time.sleep(0.8)
        hz = os.sysconf("SC_CLK_TCK")
        c0 = {r: cpu_ticks(x) for r, x in pids.items()}
        w0 = time.time()
        time.sleep(2.0)
        c1 = {r: cpu_ticks(x) for r, x in pids.items()}
        wall = time.time() - w0
        alive = p.poll() is None
        out, err = p.communicate(timeout=120)
        check(p.returncode == 0, f"idle run failed: {err[-500:]}")
        check(alive, "the run ended before the measurement was over (evaluations too short)")
        for r in sorted(c0):
            frac = (c1[r] - c0[r]) / hz / wall
            role = {0: "coordinator (waiting)", 3: "idle worker"}.get(r, "worker (evaluating: sleeps)")
            print(f"rank {r} {role}: {100 * frac:.2f} % of a core over {wall:.1f} s")
            # a spinning wait uses ~100 %; the margin is for VMs where a wake-up is slow (CI's: ~5x this VM's)
            check(frac < 0.10, f"rank {r} ({role}) used {100 * frac:.1f} % of a core while waiting")
        check(0 in c0 and 3 in c0, "could not find the coordinator and the idle worker")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def t_devices():
    p = mpirun(3, "devices", check_rc=0)
    check(p.returncode == 0, f"devices failed: {p.stderr}")
    rows = [l for l in p.stdout.splitlines() if re.match(r"^\d+\s", l)]
    check(len(rows) == 2 and rows[0].split()[0] == "1" and rows[1].split()[0] == "2",
          f"devices -n 3: expected rows for ranks 1 and 2: {p.stdout}")
    if not os.path.exists("/dev/nvidia0") and not os.path.exists("/dev/kfd"):
        check(all(" CPU " in r for r in rows), f"devices without a GPU should show the CPU: {rows}")
        check("no GPU" in p.stdout, "devices without a GPU should say why")
    p = mpirun(1, "devices", check_rc=0)
    rows = [l for l in p.stdout.splitlines() if re.match(r"^\d+\s", l)]
    check(p.returncode == 0 and len(rows) == 1 and rows[0].split()[0] == "0", f"devices -n 1: {p.stdout}")
    p = mpirun(3, "devices", T1, "--simulate", MI250X_KT, check_rc=0)
    check(p.returncode == 0 and "replay" in p.stdout and "MI250X" in p.stdout, f"devices --simulate: {p.stdout} {p.stderr}")
    p = mpirun(2, "devices", T1, "--simulate", os.path.join(DATA, "nope.json"))
    check(p.returncode != 0 and "nope.json" in p.stderr, f"devices with a missing replay file: {p.stderr}")


def t_time():
    tmp = tempfile.mkdtemp(prefix="mpt-dist-time-")
    try:
        log = os.path.join(tmp, "t.h5")
        t0 = time.time()
        p = mpirun(3, "tune", T1, "--time", 2, "--simulate", A100, "--simulate-delay", "0.02", "--log", log,
                   "--progress", "lines", check_rc=0)
        el = time.time() - t0
        check(p.returncode == 0 and "stopped: time budget reached" in p.stdout, f"time budget: {p.stdout[-500:]}")
        n = len(log_ids(log))
        check(n > 5, f"time budget: only {n} evaluations in 2 s")
        check(el < 20, f"time budget of 2 s took {el:.0f} s")
        # a run stopped by its time budget is resumable with more time (a batch job's allocation at a time)
        q = mpirun(2, "tune", T1, "--time", 1, "--simulate", A100, "--simulate-delay", "0.02", "--log", log, "--resume",
                   "--progress", "off", check_rc=0)
        check(q.returncode == 0 and "stopped: time budget reached" in q.stdout and len(log_ids(log)) > n,
              f"time budget: the resume with more time did not go on: {q.stdout[-400:]} {q.stderr[-300:]}")
        # the time running out while bo takes in the logged observations (the first ask of a resumed run, slow
        # here with a refit per observation) is said: a resume with as little time starts that over and does
        # nothing again (the summary only said 'more with --resume')
        blog = os.path.join(tmp, "bo.h5")
        mpirun(1, "tune", T1, "--strategy", "bo", "--budget", 300, "--simulate", A100, "--log", blog, "--progress",
               "off", check_rc=0)
        q = mpirun(1, "tune", T1, "--simulate", A100, "--resume", "--budget", 310, "--option", "fit_hyperparameters=1",
                   "--option", "refit_interval=1", "--time", 1, "--log", blog, "--progress", "off", check_rc=0)
        check(q.returncode == 0 and "0 in this session" in q.stdout
              and "note: the time ran out before the strategy proposed anything (bo: stopped taking in logged "
                  "observations (" in q.stdout and "give it a longer --time" in q.stdout,
              f"time budget during bo's model: no note: {q.stdout[-600:]} {q.stderr[-300:]}")
        # an exhaustive collection stopped by time writes no partial T4, and a resume completes it
        clog, ct4 = os.path.join(tmp, "c.h5"), os.path.join(tmp, "c_T4.json")
        p = mpirun(3, "collect", T1, "--time", 1, "--simulate", A100, "--simulate-delay", "0.02", "--log", clog,
                   "--t4", ct4, "--progress", "off", check_rc=0)
        check("t4: not written (the collection is not finished)" in p.stdout and not os.path.exists(ct4),
              f"collect stopped by time wrote its T4: {p.stdout[-400:]}")
        p = mpirun(3, "collect", T1, "--simulate", A100, "--log", clog, "--t4", ct4, "--resume", "--progress", "off",
                   check_rc=0)
        check(p.returncode == 0 and "stopped: every configuration evaluated" in p.stdout
              and len(t4_records(ct4)) == len(replay_table(A100)), f"collect resumed after a time stop: {p.stdout[-400:]}")
        # on a terminal (through mpiexec's forwarding) the progress line is redrawn in place
        script = shutil.which("script")
        log2 = os.path.join(tmp, "tty.h5")
        cmd = f"{MPIEXEC} -n 2 {MPTUNE} tune {T1} --budget 20 --simulate {A100} --simulate-delay 0.01 --log {log2}"
        if script:
            r = subprocess.run([script, "-qec", cmd, "/dev/null"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               timeout=60, env=dict(os.environ, OPENBLAS_NUM_THREADS="1"))
            if r.returncode == 0 and os.path.exists(log2):
                out = r.stdout.decode(errors="replace")
                check("\033[K" in out and "progress:" not in out and "20/20 evaluations" in out,
                      f"progress on a terminal is not redrawn in place: {out[-500:]!r}")
            else:
                print("SKIPPED: the terminal progress check (script(1) could not run here)")
        else:
            print("SKIPPED: the terminal progress check (no script(1))")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def t_stops():
    """what bounds a stop: --grace after the time budget (-n 3 and -n 1), a signal while waiting for what the
    time budget left in flight, --grace during a simulated delay, and a signal to one worker alone (the whole
    run stops at once, resumably, with the signal's exit status: worker_signal)"""
    tmp = tempfile.mkdtemp(prefix="mpt-dist-stops-")
    try:
        # each evaluation ~14 s (6 x the recorded ~2.4 s compile + run): the time budget of 2 s is spent while
        # they run, and --grace 1 later they are cancelled (logged as such, evaluated again on --resume)
        for np in (3, 1):
            log = os.path.join(tmp, f"time{np}.h5")
            t0 = time.time()
            p = mpirun(np, "tune", T1, "--time", 2, "--grace", 1, "--budget", 50, "--simulate", A100,
                       "--simulate-delay", 6, "--log", log, "--progress", "off", check_rc=0)
            el = time.time() - t0
            recs = log_ids(log)
            cancelled = sum(1 for r in recs if r[1] == 7)
            check(p.returncode == 0 and "stopped: time budget reached" in p.stdout and cancelled >= 1
                  and "cancelled: still running --grace seconds later" in p.stdout,
                  f"-n {np} --time 2 --grace 1: rc {p.returncode}, {cancelled} cancelled: {p.stdout[-400:]} {p.stderr[-300:]}")
            check(el < 10, f"-n {np} --time 2 --grace 1 with 14 s evaluations took {el:.1f} s")
        # a signal while the run waits, after its time budget, for what is in flight (--grace 60): the signal's
        # stop, and a second signal cancels at once
        log = os.path.join(tmp, "drain.h5")
        p = spawn([MPIEXEC, "-n", 3, MPTUNE, "tune", T1, "--time", 1, "--grace", 60, "--budget", 50, "--simulate", A100,
                   "--simulate-delay", 6, "--log", log, "--progress", "off"])
        wait_until(lambda: os.path.exists(log), 30)
        time.sleep(2.5)
        # to rank 0 itself (mpiexec.mpich aborts the job on a second Ctrl-C of its own)
        rank0 = [x for x in rank_pids(log) if rank_of(x) == 0]
        t0 = time.time()
        for _ in range(2):
            for x in rank0:
                os.kill(x, signal.SIGINT)
            time.sleep(0.3)
        try:
            out, err = p.communicate(timeout=30)
            check(len(rank0) == 1 and time.time() - t0 < 8 and "stopped: signal 2 received" in out and p.returncode == 130,
                  f"signals after the time budget: rc {p.returncode} after {time.time() - t0:.1f} s: {out[-300:]} {err[-300:]}")
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.communicate()
            check(False, "signals after the time budget: the run did not stop")
        # --simulate-delay (10 x: ~24 s an evaluation) ends --grace 1 after a signal, not when its sleep is over
        log = os.path.join(tmp, "delay.h5")
        p = spawn([MPIEXEC, "-n", 3, MPTUNE, "tune", T1, "--budget", 20, "--grace", 1, "--simulate", A100,
                   "--simulate-delay", 10, "--log", log, "--progress", "off"])
        wait_until(lambda: os.path.exists(log), 30)
        time.sleep(1.0)
        t0 = time.time()
        stopped = stop_run(p, signal.SIGINT, "signal during a simulated delay", timeout=30)
        if stopped:
            check(time.time() - t0 < 8 and "stopped: signal" in stopped[0],
                  f"signal during a simulated delay: stopped after {time.time() - t0:.1f} s: {stopped[0][-300:]}")
        # a search space whose enumeration would take hours (1.1e12 combinations, one condition over all ten
        # parameters): a progress line from 5 s on, and SIGTERM stops the build at once, nothing logged
        prob = os.path.join(tmp, "huge.json")
        with open(prob, "w") as f:
            json.dump({"General": {"BenchmarkName": "huge", "OutputFormat": "JSON"},
                       "ConfigurationSpace": {"TuningParameters": [
                           {"Name": f"p{i}", "Type": "int", "Values": "list(range(16))"} for i in range(10)],
                           "Conditions": [{"Expression": " + ".join(f"p{i}" for i in range(10)) + " == 1"}]},
                       "KernelSpecification": {"Language": "CUDA", "KernelName": "k", "KernelFile": "k.cu",
                                               "GlobalSize": ["1"], "LocalSize": ["1"], "Arguments": []}}, f)
        log = os.path.join(tmp, "huge.h5")
        p = spawn([MPIEXEC, "-n", 2, MPTUNE, "tune", prob, "--simulate", A100, "--budget", 3, "--log", log])
        time.sleep(7)
        t0 = time.time()
        stopped = stop_run(p, signal.SIGTERM, "SIGTERM while the search space is built", timeout=30)
        if stopped:
            out, err = stopped
            check(time.time() - t0 < 5 and "building the search space: " in err and "% of its enumeration walked in" in err
                  and "building the search space was stopped" in err and p.returncode in (0, 143)
                  and not os.path.exists(log),
                  f"SIGTERM during the space build: rc {p.returncode} after {time.time() - t0:.1f} s: {err[-500:]}")
        # a signal to one worker rank alone, while the run has most of its budget left: the worker takes no more
        # work and tells rank 0 at once, so the whole run stops well within --grace (20 s, the default), resumable,
        # with the signal's exit status; a --resume then completes the budget, nothing lost, nothing twice
        for np, rank, sig in ((4, 2, signal.SIGTERM), (3, 1, signal.SIGINT)):
            worker_signal(tmp, np, rank, sig)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def worker_signal(tmp, np, rank, sig):
    """SIG to worker RANK of an -n NP run (not to rank 0, not to mpiexec): the run ends within 8 s (--grace is
    20 s), exits 128 + SIG saying which worker had which signal, logs at most a few cancelled evaluations, and a
    --resume completes the budget of 300 keeping every record the stopped run logged"""
    what = f"{sig.name} to worker rank {rank} of -n {np}"
    log = os.path.join(tmp, f"worker{np}.h5")
    args = ["tune", T1, "--budget", 300, "--seed", 4, "--simulate", A100, "--progress", "off"]
    p = spawn([MPIEXEC, "-n", np, MPTUNE] + args + ["--simulate-delay", "0.01", "--log", log])
    wait_until(lambda: rank in {rank_of(x) for x in rank_pids(log)} and os.path.exists(log) and len(log_ids(log)) >= 5, 30)
    procs = rank_pids(log)  # an evaluator's children (forks of the rank) are left out: the signal is the rank's
    pids = {rank_of(x): x for x in procs if parent_of(x) not in procs}
    if not check(rank in pids, f"{what}: could not find the worker"):
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        return
    t0 = time.time()
    os.kill(pids[rank], sig)
    try:
        out, err = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        check(False, f"{what}: the run did not end")
    el = time.time() - t0
    check(el < 8, f"{what}: the run took {el:.1f} s to stop (--grace 20)")
    recs = log_ids(log)
    done = {r[0]: r[1:] for r in recs if r[1] != 7}
    cancelled = len(recs) - len(done)
    check(p.returncode == 128 + sig and f"worker rank {rank} received signal {int(sig)} ({sig.name})" in out
          and "--resume" in out, f"{what}: rc {p.returncode} after {el:.1f} s: {out[-400:]} {err[-300:]}")
    check(len(done) < 300 and cancelled <= np, f"{what}: {len(done)} evaluated, {cancelled} cancelled")
    q = mpirun(np, *args, "--log", log, "--resume", check_rc=0)
    after = log_ids(log)
    ids = [r[0] for r in after if r[1] != 7]
    kept = {r[0]: r[1:] for r in after if r[1] != 7}
    lost = [i for i in done if i not in kept or kept[i][0] != done[i][0]
            or not (kept[i][1] == done[i][1] or (math.isnan(kept[i][1]) and math.isnan(done[i][1])))]
    check(q.returncode == 0 and "stopped: evaluation budget reached" in q.stdout and len(ids) == 300
          and len(set(ids)) == 300 and not lost,
          f"resume after {what}: {len(ids)} evaluations, {len(set(ids))} distinct, {len(lost)} lost: {q.stdout[-300:]}")


def t_progress():
    """-n 1 (rank 0 evaluates itself): the progress line goes on while one evaluation runs long (the replay's
    delay sleeps at least 2.4 s here), saying for how long; it stood still until the evaluation ended"""
    with tempfile.TemporaryDirectory() as tmp:
        log = os.path.join(tmp, "p.h5")
        p = mpirun(1, "tune", T1, "--simulate", A100, "--simulate-delay", "2", "--budget", "1", "--seed", "1",
                   "--log", log, "--progress", "tty", check_rc=0)
        lines = p.stderr.replace("\r", "\n").splitlines()
        running = [l for l in lines if l.startswith("0/1 evaluations") and "evaluating for 0:0" in l]
        check(p.returncode == 0 and running, f"-n 1: no progress line during the evaluation: {lines[:5]}")
        check(any(l.startswith("1/1 evaluations") and "evaluating" not in l for l in lines),
              f"-n 1: the final line: {lines[-3:]}")


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    what = sys.argv[1]
    t0 = time.time()
    if what == "tune":
        t_tune(int(sys.argv[2]))
    elif what == "collect":
        t_collect()
    elif what == "kill":
        t_kill()
    elif what == "signal":
        t_signal()
    elif what == "bad":
        t_bad()
    elif what == "idle":
        t_idle()
    elif what == "devices":
        t_devices()
    elif what == "time":
        t_time()
    elif what == "stops":
        t_stops()
    elif what == "progress":
        t_progress()
    else:
        print("unknown test", what)
        return 2
    print(f"{what}: {len(FAILURES)} failure(s) in {time.time() - t0:.1f} s")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
