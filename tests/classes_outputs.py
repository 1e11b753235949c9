#!/usr/bin/python3
"""tests/classes_outputs.py: the outputs of a run of two simulated device classes (mpiexec.mpich -n 3, rank 1 the
first class, rank 2 the second) beyond the per-class summary (tests/confirm_classes_e2e.py):
  rate    --objective rate (a metric to maximize, added to a copy of the T1 file): the portability table states
          each cell in runs/s and the loss against the column's class's own best in the right direction
          (its best's rate over the cell's, 1.00x on the diagonal), never ms nor nan;
  resume  a resume that gives one class's replayed file by another path of the same file says nothing; one that
          gives that class another file names the class and both files (its records come from two files);
  header  two classes on one device model: `mptune export --header` names their macros after the classes
          (TARGET_A, TARGET_B), each block the best configuration of its class.
Environment (set by ctest): MPTUNE, MPIEXEC, MPT_SHARED_DATA."""
import os
import re
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dist_e2e as d  # noqa: E402  (its helpers: mpirun, check)
from confirm_classes_e2e import PROBLEM, metric_problem  # noqa: E402  (the rate metric's problem)

import h5py  # noqa: E402

check = d.check
A100 = os.path.join(d.BF, "convolution_A100_T4.json.gz")
MI250X = os.path.join(d.BF, "convolution_MI250X_T4.json.gz")


def tune(log, classes, budget, *extra, problem=PROBLEM):
    out = ["tune", problem, "--strategy", "random", "--seed", "5", "--budget", budget, "--log", log,
           "--progress", "off"]
    for name, path in classes:
        out += ["--simulate", f"{name}={path}"]
    return d.mpirun(3, *(out + list(extra)), timeout=300, check_rc=0)


def records(log):
    with h5py.File(log, "r") as f:
        rows = f["evaluations"][:int(f["count"][()])]
        return [{k: r[k].item() for k in ("id", "status", "objective", "device_class", "cross_from", "config")
                 if k != "config"} | {"config": list(r["config"])} for r in rows]


def best_of(recs, cls):
    """class cls's best record of its own search (the lowest minimized objective)"""
    own = [r for r in recs if r["device_class"] == cls and r["cross_from"] == 0 and r["status"] == 0]
    return min(own, key=lambda r: r["objective"])


def rate(tmp):
    log = os.path.join(tmp, "rate.h5")
    names = ["A100", "MI250X"]
    p = tune(log, [("A100", A100), ("MI250X", MI250X)], 10, "--objective", "rate", problem=metric_problem(tmp))
    lines = p.stdout.splitlines()
    at = [i for i, l in enumerate(lines) if l.startswith("portability (")]
    if not check(p.returncode == 0 and at, f"rate: a portability table: {p.stdout[-1500:]}"):
        return
    head = lines[at[0]]
    print("\n".join(lines[at[0]:at[0] + 4]))
    check("runs/s" in head and "higher is better" in head and " ms" not in head, f"rate: the table's head: {head}")
    recs = records(log)
    best = [best_of(recs, k) for k in range(2)]
    for x in range(2):
        row = lines[at[0] + 2 + x]
        cells = re.findall(r"(\S+) runs/s \((\S+)x\)", row)
        check(row.startswith(f"best of {names[x]}") and len(cells) == 2 and " ms" not in row and "nan" not in row,
              f"rate: row {names[x]}: {row}")
        for y, (v, ratio) in enumerate(cells[:2]):
            if x == y:
                want = -best[y]["objective"]
            else:
                cross = [r for r in recs if r["cross_from"] == x + 1 and r["device_class"] == y
                         and r["id"] == best[x]["id"] and r["status"] == 0]
                want = -cross[-1]["objective"] if cross else float("nan")
            loss = -best[y]["objective"] / want
            check(abs(float(v) - want) <= 5e-4 * want and abs(float(ratio) - loss) < 0.006 and float(ratio) >= 1,
                  f"rate: best of {names[x]} on {names[y]}: {v} runs/s ({ratio}x), want {want:.4g} ({loss:.2f}x)")


def resume(tmp):
    log = os.path.join(tmp, "resume.h5")
    p = tune(log, [("A100", A100), ("MI250X", MI250X)], 6)
    check(p.returncode == 0, "resume: the first run")
    link = os.path.join(tmp, "link")
    os.symlink(os.path.dirname(MI250X), link)
    same = os.path.join(link, os.path.basename(MI250X))  # another path of the same file
    p = tune(log, [("A100", A100), ("MI250X", same)], 8, "--resume")
    check(p.returncode == 0 and "warning" not in p.stderr,
          f"resume: the same file by another path: no warning: {p.stderr[-1500:]}")
    os.makedirs(os.path.join(tmp, "copy"))
    other = os.path.join(tmp, "copy", os.path.basename(MI250X))
    shutil.copy(MI250X, other)
    p = tune(log, [("A100", A100), ("MI250X", other)], 10, "--resume")
    # the log records the classes' files of the run that began it
    want = (f"warning: {log} was run with --simulate MI250X={MI250X}; resuming it with --simulate MI250X={other}: "
            f"class MI250X's records come from both files")
    check(p.returncode == 0 and want in p.stderr and "A100=" not in p.stderr and "in one log" not in p.stderr,
          f"resume: another file for class MI250X: '{want}' in: {p.stderr[-1500:]}")


def header_blocks(text):
    """{macro: {name: value}} of the header's #if/#elif blocks"""
    out = {}
    for m in re.finditer(r"^#(?:el)?if defined\((\w+)\)\n((?:#define .*\n)+)", text, re.M):
        out[m.group(1)] = dict(re.findall(r"^#define (\S+) (.*)$", m.group(2), re.M))
    return out


def header(tmp):
    log = os.path.join(tmp, "same.h5")
    p = tune(log, [("A", A100), ("B", A100)], 8)
    out = os.path.join(tmp, "same.h")
    q = d.mpirun(1, "export", log, "--header", out, check_rc=0)
    if not check(p.returncode == 0 and q.returncode == 0, f"header: run and export: {q.stderr}"):
        return
    with open(out) as f:
        text = f.read()
    blocks = header_blocks(text)
    recs = records(log)
    with h5py.File(log, "r") as f:
        names = [n.decode() if isinstance(n, bytes) else n for n in f["parameters"].attrs["names"]]
        values = {n: f["parameters"][n][:].tolist() for n in names}
    want = {}
    for k, macro in enumerate(("TARGET_A", "TARGET_B")):
        cfg = best_of(recs, k)["config"]
        want[macro] = {n: str(values[n][cfg[i]]) for i, n in enumerate(names)}
    check(list(blocks) == ["TARGET_A", "TARGET_B"] and blocks == want
          and re.search(r"^ \*   TARGET_A: ", text, re.M) and re.search(r"^ \*   TARGET_B: ", text, re.M),
          f"header: the macros named after the classes, each its class's best {want}: {text}")


def main():
    cases = {"rate": rate, "resume": resume, "header": header}
    with tempfile.TemporaryDirectory() as tmp:
        for name in sys.argv[1:] or list(cases):
            os.makedirs(os.path.join(tmp, name))
            cases[name](os.path.join(tmp, name))
    if d.FAILURES:
        print(f"{len(d.FAILURES)} failure(s)")
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
