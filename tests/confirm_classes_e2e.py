#!/usr/bin/python3
"""tests/confirm_classes_e2e.py: --confirm in a run of two device classes (two --simulate files, mpiexec.mpich -n 3:
rank 1 the A100 class, rank 2 the MI250X class). Each class's finalists (its search's K best, portability checks
no finalists) and that class's default are measured again on a worker of that class, three rounds each, logged in
/confirmations with their device_class; the replayed times confirm the search's. The summary reports per class the
confirmation table, whether it keeps or reorders the finalists and the speed-up over that class's confirmed
default; `mptune show` (text and JSON) reports each class's confirmation. A confirmation cut short by SIGINT in the
second class's rounds is resumed per class: the first class's rounds are not measured again, the second's not
logged are, none twice; a resume whose second class's confirmation fails (its replayed file lacks its finalists)
says how many re-measurements the log holds, the first class's included. Two classes on the same device model
(--simulate A=FILE --simulate B=FILE) with a maximized metric as the objective: the summary states each class's
values in the metric's unit with its direction, and `mptune show` reports the two classes apart (the log's classes,
not its devices).

Environment (set by ctest): MPTUNE, MPIEXEC, MPT_SHARED_DATA."""
import json
import os
import re
import signal
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dist_e2e as d  # noqa: E402  (its helpers: mpirun, spawn, stop_run, check)

import gzip  # noqa: E402
import shutil  # noqa: E402

import h5py  # noqa: E402

check = d.check
PROBLEM = os.path.join(d.DATA, "t1", "convolution_milo.json")
CLASSES = [("A100", os.path.join(d.BF, "convolution_A100_T4.json.gz")),
           ("MI250X", os.path.join(d.BF, "convolution_MI250X_T4.json.gz"))]
K, ROUNDS, BUDGET = 2, 3, 12


def args(log, *extra, classes=CLASSES, problem=PROBLEM):
    out = ["tune", problem, "--strategy", "random", "--seed", "3", "--budget", BUDGET, "--confirm", K, "--log", log,
           "--progress", "off"]
    for name, path in classes:
        out += ["--simulate", f"{name}={path}"]
    return out + list(extra)


def table(f, name):
    if name not in f:
        return []
    rows = f[name][:int(f["count"][()])] if name == "evaluations" else f[name][:]
    return [{k: r[k].item() for k in ("id", "status", "objective", "rank", "device_class", "cross_from", "confirm")}
            for r in rows]


def read_log(log):
    with h5py.File(log, "r") as f:
        return table(f, "evaluations"), table(f, "confirmations")


def expected(evals, cls):
    """class cls's finalists (its search's K best valid), its default (its first record) when measured again apart,
    the objective of each in the search, and its workers"""
    own = [r for r in evals if r["device_class"] == cls and r["cross_from"] == 0]
    ok = sorted((r for r in own if r["status"] == 0), key=lambda r: r["objective"])
    finalists = [r["id"] for r in ok[:K]]
    dflt = own[0]
    again = finalists + ([dflt["id"]] if dflt["status"] == 0 and dflt["id"] not in finalists else [])
    search = {r["id"]: r["objective"] for r in own if r["status"] == 0}
    return finalists, dflt["id"], again, search, {r["rank"] for r in own}


def check_confirmations(evals, conf, what):
    for cls in range(len(CLASSES)):
        finalists, dflt, again, search, workers = expected(evals, cls)
        mine = [c for c in conf if c["device_class"] == cls]
        check(len(finalists) == K and len(mine) == ROUNDS * len(again)
              and sorted((c["id"], c["confirm"]) for c in mine) == sorted((i, r) for i in again
                                                                           for r in range(1, ROUNDS + 1)),
              f"{what}: class {cls}: its finalists {finalists} and default {dflt} measured again {ROUNDS} times "
              f"each: {[(c['id'], c['confirm']) for c in mine]}")
        check(all(c["rank"] in workers for c in mine), f"{what}: class {cls}: on its own workers {workers}: "
              f"{[c['rank'] for c in mine]}")
        check(all(c["status"] == 0 and c["objective"] == search.get(c["id"]) for c in mine),
              f"{what}: class {cls}: the replayed times confirm the search's")
    check(len(conf) == len({(c["device_class"], c["id"], c["confirm"]) for c in conf}),
          f"{what}: no re-measurement twice")


def close(shown, value):
    """a value as the summary shows it (%.6g)"""
    return abs(shown - value) <= 5e-6 * abs(value)


def class_blocks(out):
    """the summary's block of each class: {class index: its lines}"""
    blocks = {}
    for m in re.finditer(r"^class (\d+) \S+: .*?(?=^class \d+ |^portability|^log: |\Z)", out, re.M | re.S):
        blocks[int(m.group(1))] = m.group(0)
    return blocks


def check_summary(out, evals, conf, what):
    blocks = class_blocks(out)
    check(sorted(blocks) == [0, 1], f"{what}: a summary block per class: {sorted(blocks)}")
    for cls, text in blocks.items():
        finalists, dflt, again, search, _ = expected(evals, cls)
        rows = re.findall(r"^    #\d+  search (\S+) ms  confirmed (\S+) ms", text, re.M)
        check(len(rows) == K and all(float(a) == float(b) for a, b in rows),
              f"{what}: class {cls}: the confirmation table: {rows}")
        check("  confirmation keeps the search's best" in text, f"{what}: class {cls}: keeps the search's best")
        best = re.search(r"^  objective: (\S+) ms \(the best confirmed", text, re.M)
        check(best and close(float(best.group(1)), search[finalists[0]]), f"{what}: class {cls}: the best confirmed")
        gain = re.search(r"^  speed-up over default: (\S+)x \(both confirmed in the same rounds", text, re.M)
        want = search[dflt] / search[finalists[0]]
        check(gain and abs(float(gain.group(1)) - want) < 0.006,
              f"{what}: class {cls}: the speed-up over its confirmed default ({want:.2f}x): {text}")


def check_show(log, evals, conf, tmp):
    want = []  # per class: its re-measurements, its best confirmed and its confirmed speed-up (sim: the search's)
    for cls in range(len(CLASSES)):
        finalists, dflt, _, search, _ = expected(evals, cls)
        want.append((len([c for c in conf if c["device_class"] == cls]), search[finalists[0]],
                     search[dflt] / search[finalists[0]]))
    want.sort()
    p = d.mpirun(1, "show", log)
    lines = sorted((int(n), float(b), float(g)) for n, b, _, g in re.findall(
        r"^confirmed \((\d+) re-measurements\): best #1 at (\S+) ms, default at (\S+) ms: "
        r"speed-up (\S+)x over the default \(both confirmed\)$", p.stdout, re.M))
    check(p.returncode == 0 and len(lines) == len(want) and "reorders" not in p.stdout
          and all(n == wn and close(b, wb) and abs(g - wg) < 0.006 for (n, b, g), (wn, wb, wg) in zip(lines, want)),
          f"show: each class's confirmation ({want}): {lines}\n{p.stdout}")
    p = d.mpirun(1, "show", log, "--json")
    devs = json.loads(p.stdout)["devices"] if p.returncode == 0 else []
    got = sorted((c["remeasurements"], c["best"], c["speedup"]) for c in (x.get("confirmation") for x in devs) if c)
    check(len(got) == len(want) and all(n == wn and b == wb and abs(g - wg) < 1e-9
                                        for (n, b, g), (wn, wb, wg) in zip(got, want))
          and all(x["confirmation"]["reordered"] is False and x["confirmation"]["search_rank"] == 1
                  for x in devs if x.get("confirmation")),
          f"show --json: each class's confirmation ({want}): {got}")


def whole(tmp):
    log = os.path.join(tmp, "two.h5")
    p = d.mpirun(3, *args(log), timeout=300, check_rc=0)
    check(p.returncode == 0, "the run of two classes")
    evals, conf = read_log(log)
    check_confirmations(evals, conf, "two classes")
    check_summary(p.stdout, evals, conf, "two classes")
    check_show(log, evals, conf, tmp)


def configs(log, ids):
    """the configurations (parameter name: value) of config ids, as the log's records give them"""
    with h5py.File(log, "r") as f:
        names = [n.decode() if isinstance(n, bytes) else n for n in f["parameters"].attrs["names"]]
        values = {n: f["parameters"][n][:].tolist() for n in names}
        rows = f["evaluations"][:int(f["count"][()])]
    out = {}
    for r in rows:
        if int(r["id"]) in ids:
            out[int(r["id"])] = {n: values[n][r["config"][k]] for k, n in enumerate(names)}
    return [out[i] for i in ids]


def without(tmp, path, gone):
    """a copy of replayed file path (its own file name: the same simulated device) without the records of gone"""
    with gzip.open(path, "rt") as f:
        doc = json.load(f)
    doc["results"] = [r for r in doc["results"] if r["configuration"] not in gone]
    os.makedirs(os.path.join(tmp, "lacking"))
    out = os.path.join(tmp, "lacking", os.path.basename(path))
    with gzip.open(out, "wt") as f:
        json.dump(doc, f)
    return out


def failed_second(tmp, log):
    """log cut short in the first class's rounds, resumed where the second class's replayed file lacks its finalists
    and default: the second class's confirmation fails at its first re-measurement; the first class's rounds are
    all measured and logged, and the run's last line counts every re-measurement the log holds"""
    evals, before = read_log(log)
    lacking = without(tmp, CLASSES[1][1], configs(log, expected(evals, 1)[2]))
    p = d.mpirun(3, *args(log, "--resume", classes=[CLASSES[0], ("MI250X", lacking)]), timeout=300)
    evals, conf = read_log(log)
    first = ROUNDS * len(expected(evals, 0)[2])
    check(p.returncode != 0 and "has no record of configuration" in p.stderr and conf[:len(before)] == before
          and len([c for c in conf if c["device_class"] == 0]) == first
          and not [c for c in conf if c["device_class"] == 1],
          f"the second class's confirmation fails, the first's complete: rc {p.returncode}, {len(before)} logged "
          f"before, {len(conf)} after: {p.stderr[-1500:]}")
    want = (f" evaluations and {len(conf)} re-measurements of the confirmation ({len(conf) - len(before)} in this "
            f"session), all logged; it can be continued with --resume")
    check(want in p.stderr, f"the failed run counts every re-measurement logged ('{want}'): {p.stderr[-1500:]}")


def cut_short(tmp):
    """SIGINT once the first class is confirmed and the second has begun; --resume measures the rest. A copy of the
    log taken in the first class's rounds is resumed where the second class's confirmation fails (failed_second)"""
    log = os.path.join(tmp, "cut.h5")
    early = os.path.join(tmp, "early.h5")
    p = d.spawn([d.MPIEXEC, "-n", 3, d.MPTUNE] + args(log, "--simulate-delay", "0.2"))

    def started_first():
        try:
            return len(read_log(log)[1]) > 0
        except (OSError, KeyError):
            return False
    d.wait_until(started_first, 120, 0.02)
    if started_first():
        shutil.copy(log, early)  # the log is replaced whole (renamed) on each change: a copy is complete

    def started_second():
        try:
            return any(c["device_class"] == 1 for c in read_log(log)[1])
        except (OSError, KeyError):
            return False
    d.wait_until(started_second, 120, 0.02)
    stopped = d.stop_run(p, signal.SIGINT, "cut short")
    evals, logged = read_log(log)
    first = ROUNDS * len(expected(evals, 0)[2])
    n1 = len([c for c in logged if c["device_class"] == 1])
    check(stopped is not None and "stopped: signal" in stopped[0] and len(logged) >= first and 1 <= n1 < first,
          f"cut short in the second class's rounds: {len(logged)} logged, {n1} of class 1")
    t = time.time()
    p = d.mpirun(3, *args(log, "--resume"), timeout=300, check_rc=0)
    evals, conf = read_log(log)
    check(p.returncode == 0 and conf[:len(logged)] == logged, "resumed: the logged re-measurements kept")
    check_confirmations(evals, conf, f"resumed ({time.time() - t:.1f} s)")
    blocks = class_blocks(p.stdout)
    check(re.search(r"\(0 now, the rest logged before;", blocks.get(0, "")) is not None
          and re.search(rf"\({len(conf) - len(logged)} now, the rest logged before;", blocks.get(1, "")) is not None,
          f"resumed: the first class measures nothing again, the second only its rounds not logged: {p.stdout}")
    check_summary(p.stdout, evals, conf, "resumed")
    if check(os.path.exists(early), "a copy of the log in the first class's rounds"):
        failed_second(tmp, early)


# a metric to maximize (the objective of same_device): runs per second of the replayed time
METRIC = {"Name": "rate", "Unit": "runs/s", "Goal": "max", "Expression": "1000 / time"}


def metric_problem(tmp):
    """the problem with METRIC among its Metrics (its kernel file named by its absolute path)"""
    with open(PROBLEM) as f:
        doc = json.load(f)
    spec = doc["KernelSpecification"]
    spec["KernelFile"] = os.path.join(os.path.dirname(PROBLEM), spec["KernelFile"])
    doc["Metrics"] = [METRIC]
    path = os.path.join(tmp, "rate.json")
    with open(path, "w") as f:
        json.dump(doc, f)
    return path


def same_device(tmp):
    """two classes on one device model (the same replayed file), --objective rate (maximized): each class's block
    in the metric's unit and direction; show reports the two classes apart, each with its device"""
    log = os.path.join(tmp, "same.h5")
    same = [("A", CLASSES[0][1]), ("B", CLASSES[0][1])]
    p = d.mpirun(3, *args(log, "--objective", "rate", classes=same, problem=metric_problem(tmp)), timeout=300,
                 check_rc=0)
    evals, conf = read_log(log)
    blocks = class_blocks(p.stdout)
    check(p.returncode == 0 and sorted(blocks) == [0, 1], f"same device: a block per class: {p.stdout}")
    for cls, text in blocks.items():
        finalists, dflt, again, search, _ = expected(evals, cls)  # the log's objective: the rate negated
        best = re.search(r"^  objective: (\S+) runs/s \(rate, maximized\) \(the best confirmed", text, re.M)
        gain = re.search(r"^  improvement over default: (\S+)x \(rate\) \(both confirmed in the same rounds", text,
                         re.M)
        dflt_line = re.search(r"^  default objective: (\S+) runs/s \(rate, maximized\) \(confirmed; the search "
                              r"measured it at (\S+) runs/s\)", text, re.M)
        want = search[finalists[0]] / search[dflt]
        check(best and close(float(best.group(1)), -search[finalists[0]]) and gain
              and abs(float(gain.group(1)) - want) < 0.006 and dflt_line
              and close(float(dflt_line.group(1)), -search[dflt]) and " ms" not in text,
              f"same device: class {cls}: the best ({-search[finalists[0]]:.6g} runs/s), the default "
              f"({-search[dflt]:.6g}) and the improvement ({want:.2f}x) in the metric's unit and direction: {text}")
    counts = {cls: len([c for c in conf if c["device_class"] == cls]) for cls in (0, 1)}
    q = d.mpirun(1, "show", log)
    lines = re.findall(r"^device (\d) of 2: class (\S+) on replay convolution_A100_T4\.json\.gz \(replay\), "
                       r"1 worker: evaluations (\d+) ", q.stdout, re.M)
    shown = [int(n) for n in re.findall(r"^confirmed \((\d+) re-measurements\)", q.stdout, re.M)]
    check(q.returncode == 0 and lines == [("1", "A", str(BUDGET)), ("2", "B", str(BUDGET))]
          and shown == [counts[0], counts[1]],
          f"show: the two classes apart, each its device and its re-measurements {counts}: {q.stdout}")
    q = d.mpirun(1, "show", log, "--json")
    devs = json.loads(q.stdout)["devices"] if q.returncode == 0 else []
    got = [(x.get("class"), x["name"], x["workers"], x["evaluations"],
            (x["confirmation"] or {}).get("remeasurements")) for x in devs if x["evaluations"] > 0]
    check(got == [("A", "convolution_A100_T4.json.gz", 1, BUDGET, counts[0]),
                  ("B", "convolution_A100_T4.json.gz", 1, BUDGET, counts[1])],
          f"show --json: the two classes apart: {got}")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        whole(tmp)
        same_device(tmp)
        cut_short(tmp)
    if d.FAILURES:
        print(f"{len(d.FAILURES)} failure(s)")
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
