#!/usr/bin/python3
"""tests/campaign_e2e.py: end-to-end tests of `mptune campaign FILE` (a campaign run in one allocation) under
mpiexec.mpich -n 7 with three simulated classes (the A100, MI250X and W6600 convolution spaces, two workers each)
and two jobs: "conv" (random, every class, a small A100 budget) and "conv-a100" (ga, A100 only, a larger budget).
One ctest test per sub-command:

  run    each job's log holds exactly its per-class budgets, no configuration twice within a (job, class), every
         observation from its own class's workers and equal to that class's replayed file; conv-a100 only from
         A100 workers; the A100 worker at home in conv went on to conv-a100 once conv's A100 work ran out; the
         progress line names JOB/CLASS; each job's summary and conv's portability table; the same command again
         reports both jobs finished and runs nothing; a larger budget for conv in the file extends conv alone; then
         raising only conv's smaller class's budget (A100) reopens conv for that search alone, nothing repeated
  kill   SIGKILL of the whole mpiexec (rank 0 with it) at random moments, then a SIGINT (both jobs stopped by it,
         resumable), then the same command until it finishes: nothing logged is lost, nothing is
         repeated within a (job, class), every budget is reached exactly (with --class-ranks)
  bad    bad input: an unknown class, a missing problem, one rank: one message naming file, line and field,
         a non-zero exit, nothing written
  classes  a real campaign (cpu evaluator on examples/cpu/matmul.json, mpiexec.mpich -n 2): a job naming a class
         no worker has is refused with one message before any log is written or changed (the existing log's bytes
         compared); a class only the job's own log knows is accepted and waits
  time   time budgets: a job with its own stops at it, one without at the campaign's, one with a longer own one at
         its evaluation budget, and the run ends when all are done or out of time

Environment (set by ctest): MPTUNE, MPIEXEC, MPT_SHARED_DATA.
"""
import json
import os
import random
import re
import shutil
import signal
import sys
import tempfile
import time

import h5py

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dist_e2e as d  # noqa: E402  (mpirun, spawn, rank_pids, wait_gone, replay tables)
import classes_e2e as c  # noqa: E402  (the simulated classes, records, config keys, statuses)

check = d.check
CLASSES = c.CLASSES
RANKS = {"A100": [1, 4], "MI250X": [2, 5], "W6600": [3, 6]}  # round-robin by rank
BUDGETS = {"conv": {"A100": 4, "MI250X": 20, "W6600": 20}, "conv-a100": {"A100": 60}}


def campaign(tmp, budgets=BUDGETS, delay=None, classes_a100=("A100",), problem=d.T1, name="campaign.json"):
    doc = {"schema_version": "1.0", "name": "e2e", "seed": 5, "log_dir": tmp,
           "simulate": {name: path for name, path in CLASSES},
           "jobs": [{"name": "conv", "problem": problem, "strategy": "random",
                     "budget": {"A100": budgets["conv"]["A100"], "*": budgets["conv"]["MI250X"]}},
                    {"name": "conv-a100", "problem": d.T1, "strategy": "ga", "budget": budgets["conv-a100"]["A100"],
                     "classes": list(classes_a100)}]}
    if delay:
        doc["simulate_delay"] = delay
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
    return path


def measured(log):
    """(records measured by the searches, class names) of a job's log"""
    if not os.path.exists(log):
        return [], []
    recs, names = c.records(log)
    return [r for r in recs if r["cross_from"] == 0 and c.MEASURED(r)], names


def check_job(log, budgets, what, ranks_of=RANKS, exact=True):
    """per class of the job: its budget exactly, no duplicates, its own workers only, the replayed file's values"""
    recs, names = measured(log)
    keys = c.config_keys(log) if recs else {}
    paths = dict(CLASSES)
    for k, name in enumerate(names):
        mine = [r for r in recs if r["device_class"] == k]
        ids = [r["id"] for r in mine]
        want = budgets.get(name, 0)
        if exact:
            check(len(ids) == want, f"{what}: class {name}: {len(ids)} evaluations, budget {want}")
        check(len(set(ids)) == len(ids), f"{what}: class {name}: a configuration evaluated twice")
        bad = {r["rank"] for r in mine} - set(ranks_of[name])
        check(not bad, f"{what}: class {name} has observations of ranks {sorted(bad)} (its own: {ranks_of[name]})")
        t = c.table(paths[name])
        mism = [r for r in mine if t[keys[r["id"]]][0] != c.STATUS[r["status"]]
                or (r["status"] == 0 and not d.same_obj(t[keys[r["id"]]][1], r["objective"]))]
        check(not mism, f"{what}: class {name}: {len(mism)} observations differ from its replayed file")
    return recs, names


def t_run():
    tmp = tempfile.mkdtemp(prefix="mpt-campaign-run-")
    try:
        camp = campaign(tmp)
        p = d.mpirun(7, "campaign", camp, "--progress", "lines", check_rc=0)
        if not check(p.returncode == 0, f"run: rc {p.returncode}: {p.stderr[-800:]}"):
            return
        conv, a100 = os.path.join(tmp, "conv.h5"), os.path.join(tmp, "conv-a100.h5")
        check_job(conv, BUDGETS["conv"], "conv")
        recs, names = check_job(a100, BUDGETS["conv-a100"], "conv-a100")
        a = names.index("A100") if "A100" in names else -1
        check(recs and all(r["device_class"] == a for r in recs), "conv-a100: evaluations of a class it does not run")
        # rank 1 is at home in conv (the first job that lists it), rank 4 in conv-a100; conv's A100 budget (4 against
        # 60: a margin against a loaded machine's scheduling) ran out early, so rank 1 went on to conv-a100's work
        conv_recs, _ = measured(conv)
        check({r["rank"] for r in conv_recs if r["device_class"] == a} == {1},
              f"conv/A100 evaluated by {sorted({r['rank'] for r in conv_recs if r['device_class'] == a})}, not by rank 1 alone")
        by1 = len([r for r in recs if r["rank"] == 1])
        check(by1 > 0, "rank 1 (conv's A100 worker) took no work of conv-a100 once conv's A100 work was done")
        check(len([r for r in recs if r["rank"] == 4]) > 0, "rank 4 (at home in conv-a100) evaluated none of it")
        print(f"conv-a100: {by1} evaluations by rank 1, {len(recs) - by1} by rank 4")
        for want in ("== job conv ==", "== job conv-a100 ==", "stopped: evaluation budget reached",
                     "portability (rows", "speed-up over default", f"log: {conv}", f"log: {a100}"):
            check(want in p.stdout, f"run: the summary lacks {want!r}: {p.stdout[-1500:]}")
        check(p.stdout.count("stopped: evaluation budget reached") == 2, "run: not both jobs reached their budget")
        for want in ("conv/A100", "conv/W6600", "conv-a100/A100"):
            check(want in p.stderr, f"run: the progress line lacks {want}: {p.stderr[-600:]}")
        check("conv-a100/MI250X" not in p.stderr, "run: conv-a100 has a search on MI250X")
        # the same command again: both jobs are finished, nothing runs, nothing is appended
        n_before = [len(c.records(f)[0]) for f in (conv, a100)]
        q = d.mpirun(7, "campaign", camp, "--progress", "off", check_rc=0)
        check(q.returncode == 0 and "job conv: finished" in q.stdout and "job conv-a100: finished" in q.stdout and
              "every job is finished" in q.stdout, f"again: rc {q.returncode}: {q.stdout[-500:]} {q.stderr[-500:]}")
        check([len(c.records(f)[0]) for f in (conv, a100)] == n_before, "again: records were appended")
        # a larger budget in the file extends a finished job (as tune --resume --budget N), the other stays finished
        more = {"conv": {"A100": 4, "MI250X": 26, "W6600": 26}, "conv-a100": BUDGETS["conv-a100"]}
        q = d.mpirun(7, "campaign", campaign(tmp, more), "--progress", "off", check_rc=0)
        check(q.returncode == 0 and "job conv-a100: finished" in q.stdout and "job conv: finished" not in q.stdout and
              "extending it to 26" in q.stdout, f"extended: rc {q.returncode}: {q.stdout[-800:]} {q.stderr[-400:]}")
        check_job(conv, more["conv"], "conv extended")
        check(len(c.records(a100)[0]) == n_before[1], "extended: conv-a100 was run again")
        # raising only the smaller class's budget (A100: 4 of conv's 26 per class) reopens conv for that search alone:
        # A100 goes on to 9, MI250X and W6600 stay as they were, nothing is evaluated twice (portability included)
        before = measured(conv)[0]
        allrec = c.records(conv)[0]
        small = {"conv": {"A100": 9, "MI250X": 26, "W6600": 26}, "conv-a100": BUDGETS["conv-a100"]}
        q = d.mpirun(7, "campaign", campaign(tmp, small), "--progress", "off", check_rc=0)
        check(q.returncode == 0 and "job conv-a100: finished" in q.stdout and "job conv: finished (" not in q.stdout and
              "reopened for the classes with budget left (evaluations of their budget): A100 4 of 9" in q.stdout,
              f"smaller class raised: rc {q.returncode}: {q.stdout[-800:]} {q.stderr[-400:]}")
        check_job(conv, small["conv"], "conv, its A100 budget raised")
        after, names = measured(conv)
        for k, name in enumerate(names):
            if name != "A100":
                check([r for r in after if r["device_class"] == k] == [r for r in before if r["device_class"] == k],
                      f"smaller class raised: {name}, already finished, has new evaluations")
        new = c.records(conv)[0][len(allrec):]
        check(new and all(names[r["device_class"]] == "A100" or r["cross_from"] for r in new),
              f"smaller class raised: searches other than A100 ran: {new[:5]}")
        cross = [(r["device_class"], r["cross_from"], r["id"]) for r in c.records(conv)[0] if r["cross_from"]]
        check(len(cross) == len(set(cross)), "smaller class raised: a portability evaluation was repeated")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def snapshot(tmp):
    """{(job, class, id)} of every measured record of both logs"""
    out = set()
    for job in BUDGETS:
        recs, names = measured(os.path.join(tmp, f"{job}.h5"))
        out |= {(job, names[r["device_class"]], r["id"]) for r in recs}
    return out


def no_repeats(tmp, what):
    for job in BUDGETS:
        recs, names = measured(os.path.join(tmp, f"{job}.h5"))
        for k, name in enumerate(names):
            ids = [r["id"] for r in recs if r["device_class"] == k]
            check(len(ids) == len(set(ids)), f"{what}: {job}/{name}: a configuration evaluated twice")


def t_kill():
    tmp = tempfile.mkdtemp(prefix="mpt-campaign-kill-")
    try:
        budgets = {"conv": {"A100": 8, "MI250X": 30, "W6600": 30}, "conv-a100": {"A100": 40}}
        camp = campaign(tmp, budgets, delay=0.1)
        ranks = ["--class-ranks", "A100=1,2", "--class-ranks", "MI250X=3,4", "--class-ranks", "W6600=5,6"]
        ranks_of = {"A100": [1, 2], "MI250X": [3, 4], "W6600": [5, 6]}
        args = [d.MPIEXEC, "-n", "7", d.MPTUNE, "campaign", camp, *ranks, "--progress", "off"]
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1")
        rng, kills, before, done = random.Random(17), 0, set(), False
        for attempt in range(12):
            p = d.spawn(args, env=env)
            if kills >= 4:  # the rest runs to the end
                out, err = p.communicate(timeout=120)
                done = check(p.returncode == 0, f"final run: rc {p.returncode}: {err[-800:]}")
                break
            n0, t0 = len(snapshot(tmp)), time.time()
            if kills > 0:  # mid-run: once this session logged something
                while p.poll() is None and len(snapshot(tmp)) == n0 and time.time() - t0 < 30:
                    time.sleep(0.05)
            time.sleep(rng.uniform(0.2, 1.0))
            if p.poll() is not None:
                out, err = p.communicate()
                done = check(p.returncode == 0, f"ended by itself: rc {p.returncode}: {err[-800:]}")
                break
            last = kills == 3  # the last interruption a SIGINT: a clean, resumable stop
            os.killpg(p.pid, signal.SIGINT if last else signal.SIGKILL)
            out, err = p.communicate(timeout=60)
            kills += 1
            if last:  # 130, as a shell reports it; mpiexec.mpich, signalled itself, may report 0 (as in dist_e2e)
                check(p.returncode in (0, 130) and out.count("stopped: signal 2 received") == 2,
                      f"SIGINT: rc {p.returncode}, stdout {out[-1500:]} {err[-400:]}")
            check(d.wait_gone(tmp), "rank processes survived")
            for pid in d.rank_pids(tmp):
                os.kill(pid, signal.SIGKILL)
            now = snapshot(tmp)
            lost = before - now
            check(not lost, f"interruption {kills}: {len(lost)} records logged before are gone")
            no_repeats(tmp, f"interruption {kills}")
            print(f"interruption {kills}: {len(now)} records", flush=True)
            before = now
        check(kills >= 4, f"only {kills} interruptions happened")
        if done:
            check(out.count("stopped: evaluation budget reached") == 2, f"the final run did not finish both: {out[-800:]}")
            check_job(os.path.join(tmp, "conv.h5"), budgets["conv"], "conv after the kills", ranks_of)
            check_job(os.path.join(tmp, "conv-a100.h5"), budgets["conv-a100"], "conv-a100 after the kills", ranks_of)
            check(before <= snapshot(tmp), "the final run lost records")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def t_bad():
    tmp = tempfile.mkdtemp(prefix="mpt-campaign-bad-")
    try:
        cases = [(campaign(tmp, classes_a100=("V100",), name="c1.json"), "jobs[1].classes[0]: unknown device class 'V100'", 7),
                 (campaign(tmp, problem=os.path.join(tmp, "nowhere.json"), name="c2.json"), "jobs[0].problem: the problem", 7),
                 (campaign(tmp, name="c3.json"), "a campaign runs on several ranks", 1)]
        for path, msg, np in cases:
            p = d.mpirun(np, "campaign", path, "--progress", "off")
            lines = [l for l in p.stderr.splitlines() if "mptune campaign:" in l]
            what = f"bad input ({msg})"
            check(p.returncode != 0, f"{what}: exit 0")
            check(len(lines) == 1 and msg in lines[0], f"{what}: messages {lines}")
            if np > 1:
                check(lines and re.match(rf"mptune campaign: {re.escape(path)}:\d+:\d+: jobs\[\d\]\.", lines[0]),
                      f"{what}: no file, line and field: {lines}")
            check(not [f for f in os.listdir(tmp) if f.endswith(".h5")], f"{what}: a log was written")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


MATMUL = os.path.join(os.environ.get("MPT_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..")),
                      "examples", "cpu", "matmul.json")


def real_campaign(tmp, name, jobs):
    """a campaign of real (cpu evaluator) jobs on examples/cpu/matmul.json: jobs = [(name, budget, classes)]"""
    doc = {"schema_version": "1.0", "name": "real", "seed": 3, "log_dir": tmp,
           "jobs": [dict({"name": n, "problem": MATMUL, "strategy": "random", "budget": b},
                         **({"classes": cl} if cl else {})) for n, b, cl in jobs]}
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
    return path


def t_classes():
    """a real campaign (cpu evaluator, the workers' class named by MPTUNE_DEVICE_CLASS): a class no worker has and
    no log of the job knows is refused before any log is written or changed; one the job's own log knows is not
    (its search waits for its workers)"""
    tmp = tempfile.mkdtemp(prefix="mpt-campaign-classes-")
    try:
        cpu_a, cpu_b = {"MPTUNE_DEVICE_CLASS": "cpuA"}, {"MPTUNE_DEVICE_CLASS": "cpuB"}
        mm = os.path.join(tmp, "mm.h5")
        p = d.mpirun(2, "campaign", real_campaign(tmp, "c1.json", [("mm", 2, None)]), "--progress", "off", env=cpu_a,
                     check_rc=0)
        if not check(p.returncode == 0 and os.path.exists(mm), f"first run: rc {p.returncode}: {p.stderr[-800:]}"):
            return
        with open(mm, "rb") as f:
            logged = f.read()
        # mm's budget raised (it would be resumed and get a session) and a second job on a class not present
        bad = real_campaign(tmp, "c2.json", [("mm", 3, None), ("mm2", 2, ["V100"])])
        q = d.mpirun(2, "campaign", bad, "--progress", "off", env=cpu_a)
        lines = [l for l in q.stderr.splitlines() if "mptune campaign:" in l]
        check(q.returncode != 0, "unknown class: exit 0")
        check(len(lines) == 1 and re.match(rf"mptune campaign: {re.escape(bad)}:\d+:\d+: jobs\[1\]\.classes\[0\]: "
                                           r"unknown device class 'V100' \(present: 'cpuA'\)$", lines[0]),
              f"unknown class: messages {lines}")
        with open(mm, "rb") as f:
            check(f.read() == logged, "unknown class: mm.h5 was changed")
        check(not os.path.exists(os.path.join(tmp, "mm2.h5")), "unknown class: mm2.h5 was written")
        # workers of another class now: cpuA, known to mm's log, is accepted and waits for its workers
        known = real_campaign(tmp, "c3.json", [("mm", 3, ["cpuA"])])
        q = d.mpirun(2, "campaign", known, "--progress", "off", env=cpu_b)
        check(q.returncode == 0 and "a class without workers in this session waits" in q.stdout,
              f"a logged class: rc {q.returncode}: {q.stdout[-600:]} {q.stderr[-600:]}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def t_time():
    """time budgets: a job with its own (short, 1 s) stops at it, a job without one (long) at the campaign's (5 s), a
    job whose own is longer (small, 60 s) at its evaluation budget; the run ends when all three are done or out of
    time. Checked by order, with margins of seconds: short's last evaluation starts well before long's."""
    tmp = tempfile.mkdtemp(prefix="mpt-campaign-time-")
    try:
        doc = {"schema_version": "1.0", "name": "timed", "seed": 5, "log_dir": tmp, "time": 5, "simulate_delay": 0.05,
               "simulate": {name: path for name, path in CLASSES},
               "jobs": [{"name": "short", "problem": d.T1, "strategy": "random", "budget": 3000, "time": 1,
                         "classes": ["A100"]},
                        {"name": "long", "problem": d.T1, "strategy": "random", "budget": 3000, "classes": ["MI250X"]},
                        {"name": "small", "problem": d.T1, "strategy": "random", "budget": 8, "time": 60,
                         "classes": ["W6600"]}]}
        camp = os.path.join(tmp, "timed.json")
        with open(camp, "w") as f:
            json.dump(doc, f, indent=1)
        t0 = time.time()
        p = d.mpirun(7, "campaign", camp, "--progress", "off", "--no-cross", timeout=150, check_rc=0)
        took = time.time() - t0
        if not check(p.returncode == 0, f"timed: rc {p.returncode}: {p.stderr[-800:]}"):
            return
        reasons = dict(re.findall(r"== job (\S+) ==\nstopped: ([^;\n]*)", p.stdout))
        check(reasons == {"short": "time budget reached", "long": "time budget reached",
                          "small": "evaluation budget reached"}, f"timed: stop reasons {reasons}")
        starts = {}
        for job in ("short", "long", "small"):
            with h5py.File(os.path.join(tmp, f"{job}.h5"), "r") as f:
                ev = f["evaluations"][:int(f["count"][()])]
            starts[job] = sorted(float(r["t_start"]) for r in ev if int(r["status"]) != 7)  # 7: cancelled
        check(len(starts["small"]) == 8, f"timed: small has {len(starts['small'])} evaluations, budget 8")
        first = min(v[0] for v in starts.values() if v)
        short_end, long_end = starts["short"][-1] - first, starts["long"][-1] - first
        print(f"timed: last start of short {short_end:.2f} s, of long {long_end:.2f} s, the run {took:.1f} s")
        check(short_end < 3.0, f"timed: short (time 1 s) started evaluations until {short_end:.2f} s")
        check(long_end > 3.5, f"timed: long (the campaign's 5 s) stopped at {long_end:.2f} s")
        check(len(starts["short"]) < 3000 and len(starts["long"]) < 3000, "timed: a job reached its evaluation budget")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    what = sys.argv[1] if len(sys.argv) > 1 else "run"
    t0 = time.time()
    {"run": t_run, "kill": t_kill, "bad": t_bad, "classes": t_classes, "time": t_time}[what]()
    print(f"{what}: {len(d.FAILURES)} failure(s) in {time.time() - t0:.1f} s")
    return 1 if d.FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
