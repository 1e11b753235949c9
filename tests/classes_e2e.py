#!/usr/bin/python3
"""tests/classes_e2e.py: end-to-end tests of device classes in one run (`mptune tune` with simulated classes,
--simulate CLASS=FILE) under mpiexec.mpich -n 7: three classes (the A100, MI250X and W6600 convolution spaces)
of two workers each. One ctest test per sub-command:

  run       each class's observations come only from its own workers (and the progress line shows each class) (round-robin, then --class-ranks), the
            per-class budgets are exact with no duplicates within a class, every observation equals its class's
            replayed file, each class's T4 file validates against the T4 schema, the portability table matches
            the replayed files (and --no-cross leaves it out), a worker without a usable device is left out
  kill      SIGKILL of the whole mpiexec at random moments, --resume each time: every flushed (traced) record
            survives, none is repeated within a class, every class ends at its budget with its portability row
  waiting   a class whose workers are absent on --resume waits (the log stays resumable), and a new class on a
            later --resume starts its own search

Environment (set by ctest): MPTUNE, MPIEXEC, MPT_SHARED_DATA.
"""
import json
import math
import os
import random
import re
import shutil
import signal
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dist_e2e as d  # noqa: E402  (its helpers: mpirun, replay tables, T4 records, traces)

import h5py  # noqa: E402
import jsonschema  # noqa: E402

BF = d.BF
CLASSES = [("A100", os.path.join(BF, "convolution_A100_T4.json.gz")),
           ("MI250X", os.path.join(BF, "convolution_MI250X_T4.json.gz")),
           ("W6600", os.path.join(BF, "convolution_W6600_T4.json.gz"))]
A4000 = ("A4000", os.path.join(BF, "convolution_A4000_T4.json.gz"))
SCHEMA = os.path.join(d.DATA, "schemas", "T4-results-1.0.0.json")
check = d.check
TABLES = {}


def table(path):
    if path not in TABLES:
        TABLES[path] = d.replay_table(path)
    return TABLES[path]


def sim_args(classes):
    out = []
    for name, path in classes:
        out += ["--simulate", f"{name}={path}"]
    return out


def records(log):
    """every record of the log (h5py): dicts of id, status, objective, rank, device_class, cross_from"""
    with h5py.File(log, "r") as f:
        data = f["evaluations"][:int(f["count"][()])]
        names = [l.split("\t")[0] for l in f.attrs["classes"].decode().splitlines()] if "classes" in f.attrs else []
    keys = ("id", "status", "objective", "rank", "device_class", "cross_from")
    return [{k: (float(r[k]) if k == "objective" else int(r[k])) for k in keys} for r in data], names


def config_keys(log):
    """config id -> config key (as replay_table keys it), from the records' value indices and the parameter tables"""
    with h5py.File(log, "r") as f:
        data = f["evaluations"][:int(f["count"][()])]
        pnames = [n if isinstance(n, str) else n.decode() for n in f["parameters"].attrs["names"]]
        values = {n: f["parameters"][n][:] for n in pnames}
    out = {}
    for r in data:
        conf = {}
        for i, n in enumerate(d.params()):
            v = values[n][r["config"][pnames.index(n)]]
            conf[n] = v.decode() if isinstance(v, bytes) else (float(v) if not isinstance(v, str) else v)
        out[int(r["id"])] = d.key_of(conf, d.params())
    return out


STATUS = ["ok", "compile_error", "launch_error", "runtime_error", "wrong_result", "timeout", "crash", "cancelled",
          "invalid", "missing"]
MEASURED = lambda r: r["status"] != 7 and r["status"] != 9  # neither cancelled nor missing


def check_classes(log, classes, budget, what, ranks_of=None):
    """per class: its own workers only, its budget exact, no duplicates, the replayed file's observations"""
    recs, names = records(log)
    check(names[:len(classes)] == [c[0] for c in classes], f"{what}: class table {names}")
    keys = config_keys(log)
    for k, (name, path) in enumerate(classes):
        mine = [r for r in recs if r["device_class"] == k and r["cross_from"] == 0 and MEASURED(r)]
        ids = [r["id"] for r in mine]
        check(len(ids) == budget, f"{what}: class {name}: {len(ids)} evaluations, budget {budget}")
        check(len(set(ids)) == len(ids), f"{what}: class {name}: a configuration evaluated twice")
        if ranks_of:
            bad = {r["rank"] for r in mine} - set(ranks_of[name])
            check(not bad, f"{what}: class {name} has observations of ranks {sorted(bad)} (its own: {ranks_of[name]})")
        t = table(path)
        mism = [r for r in mine if t[keys[r["id"]]][0] != STATUS[r["status"]]
                or (r["status"] == 0 and not d.same_obj(t[keys[r["id"]]][1], r["objective"]))]
        check(not mism, f"{what}: class {name}: {len(mism)} observations differ from {os.path.basename(path)}")
    return recs, keys


def check_t4(t4, classes, budget, what):
    with open(SCHEMA) as fh:
        schema = json.load(fh)
    for name, path in classes:
        f = t4.replace(".json", f".{name.lower()}.json")
        if not check(os.path.exists(f), f"{what}: no T4 file {f}"):
            continue
        with open(f) as fh:
            doc = json.load(fh)
        try:
            jsonschema.validate(doc, schema)
        except jsonschema.ValidationError as e:
            check(False, f"{what}: {f} does not validate: {e.message}")
        recs = d.t4_records(f)
        check(len(recs) == budget, f"{what}: {f} holds {len(recs)} records, budget {budget}")
        t = table(path)
        check(all(t[k][0] == s and d.same_obj(t[k][1], o) for k, s, o in recs), f"{what}: {f} differs from {path}")


CELL = re.compile(r"([0-9.e+-]+) ms \([0-9.]+x\)|failed|(?<!\S)-(?!\S)")


def parse_portability(stdout, names):
    """{(row class, column class): ms, None (failed) or "-" (not measured)} from the printed table"""
    lines = stdout.splitlines()
    at = [i for i, l in enumerate(lines) if l.startswith("portability (")]
    if not at:
        return None
    cells = {}
    for l in lines[at[0] + 2:]:
        m = re.match(r"^best of (\S+)\s+(.*)$", l)
        if not m:
            break
        for col, v in zip(names, CELL.finditer(m.group(2))):
            cells[(m.group(1), col)] = float(v.group(1)) if v.group(1) else (None if v.group(0) == "failed" else "-")
    return cells


def check_portability(stdout, log, classes, what, extended=False):
    """the printed table against the replayed files; each class's final best measured once on every other class
    (extended: a run resumed with a larger budget, whose earlier bests were measured too)"""
    recs, names = records(log)
    keys = config_keys(log)
    cells = parse_portability(stdout, [c[0] for c in classes])
    if not check(cells, f"{what}: no portability table: {stdout[-600:]}"):
        return
    best = {}
    for k, (name, _) in enumerate(classes):
        mine = [r for r in recs if r["device_class"] == k and r["cross_from"] == 0 and r["status"] == 0]
        best[name] = min(mine, key=lambda r: r["objective"])["id"]
    cross = [r for r in recs if r["cross_from"] > 0 and MEASURED(r)]
    if extended:
        cross = [r for r in cross if r["id"] == best[classes[r["cross_from"] - 1][0]]]
    pairs = [(r["cross_from"] - 1, r["device_class"]) for r in cross]
    n = len(classes)
    check(sorted(pairs) == sorted((x, y) for x in range(n) for y in range(n) if x != y),
          f"{what}: portability evaluations {sorted(pairs)}: not each class's best once on every other class")
    for r in cross:
        check(r["id"] == best[classes[r["cross_from"] - 1][0]], f"{what}: a portability evaluation of no class's best")
    for x, (xn, _) in enumerate(classes):
        for y, (yn, ypath) in enumerate(classes):
            status, want = table(ypath)[keys[best[xn]]]
            got = cells.get((xn, yn), "absent")
            ok = got is None if status != "ok" else (got not in ("absent", None) and abs(got - want) <= 6e-4 * want)
            check(ok, f"{what}: portability best of {xn} on {yn}: printed {got}, the replayed file says {want}")


def t_run():
    tmp = tempfile.mkdtemp(prefix="mpt-classes-run-")
    try:
        log, t4 = os.path.join(tmp, "run.h5"), os.path.join(tmp, "run_T4.json")
        budget = 30
        p = d.mpirun(7, "tune", d.T1, "--strategy", "random", "--budget", budget, "--seed", 8, *sim_args(CLASSES),
                     "--log", log, "--t4", t4, "--progress", "lines", check_rc=0)
        what = "round-robin"
        if check(p.returncode == 0, f"{what}: exit {p.returncode}: {p.stderr[-800:]}"):
            for k, (name, _) in enumerate(CLASSES):
                check(f"device class {k}: {name}, 2 workers" in p.stdout, f"{what}: no device class {k} heading")
                check(re.search(rf"^class {k} {name}: {budget} evaluations", p.stdout, re.M), f"{what}: no summary of {name}")
                check(re.search(rf"\| {name} {budget}/{budget} best [0-9.e+-]+ ms [0-9.]+/s ETA", p.stderr.splitlines()[-1]),
                      f"{what}: the last progress line lacks class {name}: {p.stderr[-400:]}")
            ranks_of = {name: [k + 1, k + 4] for k, (name, _) in enumerate(CLASSES)}
            check_classes(log, CLASSES, budget, what, ranks_of)
            check_t4(t4, CLASSES, budget, what)
            check_portability(p.stdout, log, CLASSES, what)
            # mptune export: the same files, one per class
            ex = os.path.join(tmp, "export_T4.json")
            q = d.subprocess.run([d.MPTUNE, "export", log, "--t4", ex], stdout=d.subprocess.PIPE,
                                 stderr=d.subprocess.PIPE, text=True, timeout=60)
            check(q.returncode == 0 and "wrote " + ex.replace(".json", ".mi250x.json") + " (class MI250X)" in q.stdout,
                  f"export: rc {q.returncode}: {q.stdout} {q.stderr}")
            check_t4(ex, CLASSES, budget, "export")
            q = d.subprocess.run([d.MPTUNE, "show", log], stdout=d.subprocess.PIPE, stderr=d.subprocess.PIPE, text=True,
                                 timeout=60)
            check(q.returncode == 0 and f"of a budget of {budget} per device class" in q.stdout
                  and q.stdout.count("device ") >= 3, f"show: rc {q.returncode}: {q.stdout[:600]} {q.stderr[-300:]}")
            # a finished run extended by a larger budget: per class (its portability row measured again for a
            # class whose best changed)
            p = d.mpirun(7, "tune", d.T1, "--budget", budget + 6, *sim_args(CLASSES), "--log", log, "--resume",
                         "--progress", "off", check_rc=0)
            check(p.returncode == 0 and f"had finished with {budget} evaluations; extending it to {budget + 6}" in p.stdout,
                  f"extended: rc {p.returncode}: {p.stdout[:600]} {p.stderr[-300:]}")
            check_classes(log, CLASSES, budget + 6, "extended", ranks_of)
            check_portability(p.stdout, log, CLASSES, "extended", extended=True)
        # explicit ranks, bo (batched asks per class), no portability table
        log2 = os.path.join(tmp, "ranks.h5")
        p = d.mpirun(7, "tune", d.T1, "--strategy", "bo", "--budget", 14, "--seed", 3, *sim_args(CLASSES),
                     "--class-ranks", "A100=5,6", "--class-ranks", "MI250X=1,3", "--class-ranks", "W6600=2,4",
                     "--no-cross", "--log", log2, "--progress", "off", check_rc=0)
        what = "--class-ranks"
        if check(p.returncode == 0, f"{what}: exit {p.returncode}: {p.stderr[-800:]}"):
            check_classes(log2, CLASSES, 14, what, {"A100": [5, 6], "MI250X": [1, 3], "W6600": [2, 4]})
            check("portability" not in p.stdout, f"{what}: --no-cross printed a portability table")
            check(not any(r["cross_from"] for r in records(log2)[0]), f"{what}: --no-cross logged portability evaluations")
        # a worker whose evaluator cannot open (its replayed file does not exist) is left out
        log3 = os.path.join(tmp, "absent.h5")
        gone = os.path.join(tmp, "gone_T4.json")
        p = d.mpirun(4, "tune", d.T1, "--budget", 9, "--seed", 2, *sim_args(CLASSES[:1]), "--simulate", f"GONE={gone}",
                     "--log", log3, "--progress", "off", check_rc=0)
        what = "absent worker"
        if check(p.returncode == 0, f"{what}: exit {p.returncode}: {p.stderr[-800:]}"):
            check("worker rank 2 has no usable device" in p.stderr and "left out" in p.stderr, f"{what}: {p.stderr[-500:]}")
            recs, names = records(log3)
            check(names == ["A100"], f"{what}: class table {names}")
            check({r["rank"] for r in recs} == {1, 3}, f"{what}: ranks {sorted({r['rank'] for r in recs})}")
        p = d.mpirun(3, "tune", d.T1, "--budget", 9, "--simulate", f"GONE={gone}", "--log", os.path.join(tmp, "none.h5"),
                     "--progress", "off")
        check(p.returncode != 0 and gone in p.stderr, f"no usable worker at all: rc {p.returncode}, {p.stderr[-400:]}")
        # a simulated class no rank serves (and that is not a logged one, which would wait): refused
        p = d.mpirun(3, "tune", d.T1, "--budget", 5, *sim_args(CLASSES), "--log", os.path.join(tmp, "few.h5"))
        check(p.returncode != 0 and "no worker rank serves class W6600 (2 workers for 3 simulated classes)" in p.stderr
              and not os.path.exists(os.path.join(tmp, "few.h5")), f"too few ranks: rc {p.returncode}: {p.stderr[-300:]}")
        # bad input: one clear message
        for args, msg in [(["--class-ranks", "A100=1,9"], "worker ranks 1..6"),
                          (["--class-ranks", "K80=1"], "no --simulate K80=FILE"),
                          (["--class-ranks", "A100=1", "--class-ranks", "MI250X=1"], "rank 1 is given a class twice"),
                          (["--simulate", f"A100={CLASSES[1][1]}"], "class A100 is given twice")]:
            p = d.mpirun(7, "tune", d.T1, "--budget", 5, *sim_args(CLASSES), *args, "--log", os.path.join(tmp, "bad.h5"),
                         "--progress", "off")
            check(p.returncode != 0 and msg in p.stderr, f"bad input {args}: rc {p.returncode}: {p.stderr[-300:]}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def t_kill():
    tmp = tempfile.mkdtemp(prefix="mpt-classes-kill-")
    try:
        log, trace, t4 = os.path.join(tmp, "run.h5"), os.path.join(tmp, "trace.txt"), os.path.join(tmp, "run_T4.json")
        budget, kills, rng = 60, 0, random.Random(31)
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1", MPT_TRACE_APPENDS=trace)
        before, out, finished = {}, "", False
        for attempt in range(30):
            args = [d.MPIEXEC, "-n", "7", d.MPTUNE, "tune", d.T1, "--strategy", "random", "--budget", str(budget),
                    "--seed", "6", *sim_args(CLASSES), "--simulate-delay", "0.02", "--log", log, "--t4", t4,
                    "--progress", "off"] + (["--resume"] if os.path.exists(log) else [])
            p = d.spawn(args, env=env)
            if kills >= 6:
                out, err = p.communicate(timeout=180)
                finished = check(p.returncode == 0, f"final resume: rc {p.returncode}: {err[-800:]}")
                break
            if kills == 0:  # anywhere, start-up and the log's creation included
                time.sleep(rng.uniform(0.3, 2.5))
            else:  # in the middle of the evaluations (or the portability ones): after this session logged a record
                n0, t0 = len(d.read_trace(trace)), time.time()
                while p.poll() is None and len(d.read_trace(trace)) == n0 and time.time() - t0 < 30:
                    time.sleep(0.02)
                time.sleep(rng.uniform(0.0, 0.8))
            if p.poll() is not None:
                out, err = p.communicate()
                finished = check(p.returncode == 0, f"ended by itself: rc {p.returncode}: {err[-800:]}")
                break
            os.killpg(p.pid, signal.SIGKILL)
            p.communicate()
            kills += 1
            check(d.wait_gone(log), "rank processes survived the SIGKILL")
            for pid in d.rank_pids(log):
                os.kill(pid, signal.SIGKILL)
            if not os.path.exists(log):
                continue
            recs, _ = records(log)
            now = {(r["device_class"], r["cross_from"], r["id"]): r for r in recs if MEASURED(r)}
            for k in range(len(CLASSES)):
                ids = [r["id"] for r in recs if r["device_class"] == k and r["cross_from"] == 0 and MEASURED(r)]
                check(len(ids) == len(set(ids)), f"kill {kills}: class {k}: a configuration evaluated twice")
            lost = [key for key in before if key not in now]
            check(not lost, f"kill {kills}: {len(lost)} records logged before are gone")
            missing = set(d.read_trace(trace)) - {r["id"] for r in recs}
            check(not missing, f"kill {kills}: {len(missing)} flushed (traced) records are not in the log")
            print(f"kill {kills}: {len(recs)} records", flush=True)
            before = now
        check(kills >= 6, f"only {kills} kills happened")
        if finished:
            check("stopped: evaluation budget reached" in out, f"the final session did not finish: {out[-500:]}")
            check_classes(log, CLASSES, budget, "after the kills", {n: [k + 1, k + 4] for k, (n, _) in enumerate(CLASSES)})
            check_t4(t4, CLASSES, budget, "after the kills")
            check_portability(out, log, CLASSES, "after the kills")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def t_waiting():
    tmp = tempfile.mkdtemp(prefix="mpt-classes-wait-")
    try:
        log = os.path.join(tmp, "run.h5")
        budget = 20
        base = ["tune", d.T1, "--strategy", "random", "--budget", budget, "--seed", 5, "--log", log, "--progress", "off"]
        p = d.mpirun(7, *base, *sim_args(CLASSES), "--time", 0.01, "--simulate-delay", "0.05", check_rc=0)
        check(p.returncode == 0 and "stopped: time budget reached" in p.stdout, f"first session: {p.stdout[-300:]}")
        # -n 3: ranks 1 and 2 serve A100 and MI250X; W6600 (logged) has no workers: it waits
        p = d.mpirun(3, *base, *sim_args(CLASSES), "--resume", check_rc=0)
        what = "W6600 absent"
        if check(p.returncode == 0, f"{what}: exit {p.returncode}: {p.stderr[-600:]}"):
            check("device class 2: W6600, 0 workers (none in this session: its search waits)" in p.stdout,
                  f"{what}: {p.stdout[:800]}")
            check("a class without workers in this session waits" in p.stdout, f"{what}: stop reason: {p.stdout[-800:]}")
            check("portability" not in p.stdout, f"{what}: a portability table before every class is done")
            with h5py.File(log, "r") as f:
                check(int(f.attrs["finished"]) == 0, f"{what}: the log is marked finished")
            recs, _ = records(log)
            for k in (0, 1):
                n = len([r for r in recs if r["device_class"] == k and r["cross_from"] == 0 and MEASURED(r)])
                check(n == budget, f"{what}: class {k}: {n} evaluations, budget {budget}")
        # -n 7 with a fourth class: W6600 goes on, A4000 starts its own search
        four = CLASSES + [A4000]
        p = d.mpirun(7, *base, *sim_args(four), "--resume", check_rc=0)
        what = "new class"
        if check(p.returncode == 0, f"{what}: exit {p.returncode}: {p.stderr[-600:]}"):
            check("device class 3: A4000" in p.stdout, f"{what}: {p.stdout[:900]}")
            ranks_of = {"A100": [1, 5], "MI250X": [2, 6], "W6600": [3], "A4000": [4]}
            check_classes(log, four, budget, what)
            recs, _ = records(log)
            a4000 = [r for r in recs if r["device_class"] == 3]
            check({r["rank"] for r in a4000 if r["cross_from"] == 0} <= set(ranks_of["A4000"]), f"{what}: A4000's ranks")
            check_portability(p.stdout, log, four, what)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    what = sys.argv[1] if len(sys.argv) > 1 else "run"
    t0 = time.time()
    {"run": t_run, "kill": t_kill, "waiting": t_waiting}[what]()
    print(f"{what}: {len(d.FAILURES)} failure(s) in {time.time() - t0:.1f} s")
    return 1 if d.FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
