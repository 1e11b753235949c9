#!/usr/bin/env python3
"""tests/show_check.py: checks `mptune show` output against the run log read with h5py (tests/show_cli.sh).

  show_check.py text LOG SHOW.txt TOP          the text of a log with one device class: the counts, the top
                                               table (each configuration's best record, by objective) and the
                                               failures per status
  show_check.py json LOG SHOW.json TOP T1      the JSON: the same per device class, the times' statistics,
                                               the speed-up over the default's last record, the reasons
  show_check.py classes LOG SHOW.txt           the text of a log with several device classes: each class's line
                                               counts its search's records and, apart, its portability checks
                                               (records with cross_from), and the run's line their totals
  show_check.py asserts LOG OUT.c SESSION [wrong]
                                               writes C static assertions that the best configuration of the
                                               device class of SESSION's records is defined (one value off
                                               with `wrong`)
"""
import json
import math
import re
import sys

import h5py
import numpy as np


def text(v):
    return v.decode() if isinstance(v, bytes) else v


class Log:
    def __init__(self, path):
        with h5py.File(path, "r") as f:
            self.names = [text(n) for n in f["parameters"].attrs["names"]]
            self.values, self.kinds = {}, {}
            for n in self.names:
                d = f["parameters"][n]
                kind = text(d.attrs["type"])
                vals = d[:].tolist()
                self.kinds[n] = kind
                self.values[n] = [text(v) if kind == "string" else bool(v) if kind == "bool" else v for v in vals]
            self.ev = f["evaluations"][: int(f["count"][()])]
            self.status = {v: k for k, v in h5py.check_enum_dtype(f["evaluations"].dtype["status"]).items()}
            devices = f["devices"][:] if "devices" in f else []
        self.rows = {(int(d["session"]), int(d["rank"])): (text(d["vendor"]), text(d["name"]), text(d["arch"]))
                     for d in devices}
        self.classes = []
        for d in devices:
            key = (text(d["vendor"]), text(d["name"]), text(d["arch"]))
            if key not in self.classes:
                self.classes.append(key)

    def cls(self, r):
        return self.rows.get((int(r["session"]), int(r["rank"])))

    def config(self, r):
        return {n: self.values[n][r["config"][p]] for p, n in enumerate(self.names)}

    def status_of(self, r):
        st = self.status[r["status"]]
        ok = st == "ok" and math.isfinite(r["objective"])
        return "ok" if ok else "runtime_error" if st == "ok" else st

    def records(self, key):
        """the records of the class's search: its portability checks (cross_from set) are not among them"""
        return [(k, r) for k, r in enumerate(self.ev) if self.cls(r) == key and not self.is_cross(r)]

    def is_cross(self, r):
        return "cross_from" in self.ev.dtype.names and int(r["cross_from"]) > 0

    def cross_checks(self, key):
        """the portability checks run on the class (other classes' bests), cancelled ones not counted"""
        return sum(1 for r in self.ev
                   if self.cls(r) == key and self.is_cross(r) and self.status[r["status"]] != "cancelled")

    def expected_top(self, key):
        """each valid configuration's best record, by objective then record order"""
        best = {}
        for k, r in self.records(key):
            if self.status_of(r) != "ok":
                continue
            i = int(r["id"])
            if i not in best or r["objective"] < best[i][1]["objective"]:
                best[i] = (k, r)
        return sorted(best.values(), key=lambda kr: (kr[1]["objective"], kr[0]))

    def counts(self, key):
        c = {}
        for _, r in self.records(key):
            st = self.status_of(r)
            c[st] = c.get(st, 0) + 1
        return c


REASON_LEN = 200  # jobs/output/summary.h MPT_SUMMARY_REASON_LEN: bytes of a reason's first line show keeps


def first_line(reason):
    """the first line with text, cut as show cuts it: longer than REASON_LEN bytes, it keeps REASON_LEN - 3
    bytes (not inside a UTF-8 character) and '...'"""
    lines = [l.strip() for l in text(reason).splitlines() if l.strip()]
    line = lines[0] if lines else ""
    raw = line.encode()
    if len(raw) > REASON_LEN:
        line = raw[:REASON_LEN - 3].decode("utf-8", errors="ignore") + "..."
    return line


def check_text(log, out, top):
    assert len(log.classes) == 1, "text checks take logs of one device class"
    key = log.classes[0]
    lines = open(out).read().splitlines()
    counts = log.counts(key)
    valid, cancelled = counts.get("ok", 0), counts.get("cancelled", 0)
    n = len(log.ev) - cancelled
    assert any(l.startswith("evaluations: %d (%d valid, %d failed" % (n, valid, n - valid)) for l in lines), lines
    want = log.expected_top(key)[:top]
    h = next(i for i, l in enumerate(lines) if l.startswith("  #  "))
    head = re.split(r"\s{2,}", lines[h].strip())
    assert head[1:1 + len(log.names)] == log.names, head
    assert head[1 + len(log.names)] == "time (ms)", head
    rows = [re.split(r"\s{2,}", l.strip()) for l in lines[h + 1:h + 1 + len(want)]]
    assert not lines[h + 1 + len(want)].startswith("  "), "more rows than --top"
    for rank, ((k, r), row) in enumerate(zip(want, rows), 1):
        cfg = log.config(r)
        assert row[0] == str(rank), row
        assert row[1:1 + len(log.names)] == [str(cfg[n]) for n in log.names], (row, cfg)
        assert row[1 + len(log.names)] == "%.6g" % r["objective"], (row, r["objective"])
    print("text: top %d rows as the log's best configurations (first %s = %.6g ms)" % (len(want), log.config(want[0][1]),
                                                                                     want[0][1]["objective"])
          if want else "text: no valid configuration")
    f = next(i for i, l in enumerate(lines) if l.startswith("failures:"))
    shown = {}
    for l in lines[f + 1:]:
        m = re.match(r"^  (\w+)\s+(\d+)  ", l)
        if m:
            shown[m.group(1)] = int(m.group(2))
        elif not l.startswith("   "):
            break
    failures = {st: c for st, c in counts.items() if st != "ok"}
    assert shown == failures, (shown, failures)
    print("text: failures per status as logged:", failures)


def check_json(log, out, top, t1_path):
    d = json.load(open(out))
    t1 = json.load(open(t1_path))
    default = {p["Name"]: p.get("Default") for p in t1["ConfigurationSpace"]["TuningParameters"]}
    assert d["objective"] == {"name": "time", "unit": "ms", "lower_is_better": True}, d["objective"]
    assert d["records"] == len(log.ev)
    assert d["parameters"] == log.names
    total = {}
    devs = [x for x in d["devices"] if x["evaluations"] + x["cancelled"] > 0]
    assert [(x["vendor"], x["name"], x["arch"]) for x in devs] == log.classes, (devs, log.classes)
    for dev, key in zip(devs, log.classes):
        # the macro naming the device in a header: Kernel Tuner's sanitized device name
        assert dev["target"] == "TARGET_" + re.sub("[^0-9a-zA-Z]+", "_", key[1].strip()), (dev["target"], key)
        counts = log.counts(key)
        for st, c in counts.items():
            total[st] = total.get(st, 0) + c
        valid, cancelled = counts.get("ok", 0), counts.get("cancelled", 0)
        n = sum(counts.values()) - cancelled
        assert (dev["evaluations"], dev["valid"], dev["failed"], dev["cancelled"]) == (n, valid, n - valid, cancelled), dev
        assert dev["portability_checks"] == log.cross_checks(key), (dev["portability_checks"], log.cross_checks(key))
        expected = log.expected_top(key)
        assert dev["configurations"] == len(expected)
        want = expected[:top]
        assert len(dev["top"]) == len(want), (len(dev["top"]), len(want))
        # the default's last record in this class (cancelled ones do not count)
        dflt = None
        for _, r in log.records(key):
            if log.status_of(r) != "cancelled" and log.config(r) == default:
                dflt = r["objective"] if log.status_of(r) == "ok" else math.nan
        for rank, ((k, r), got) in enumerate(zip(want, dev["top"]), 1):
            assert got["rank"] == rank and got["id"] == int(r["id"]) and got["record"] == k, (got, k)
            assert got["configuration"] == log.config(r), (got["configuration"], log.config(r))
            assert got["objective"] == r["objective"], (got["objective"], r["objective"])
            n_t = int(r["n_times"])
            if n_t:
                t = r["times"][:n_t]
                g = got["times"]
                assert g["n"] == n_t and g["median"] == np.median(t) and g["min"] == t.min() and g["max"] == t.max(), g
                assert n_t < 2 or abs(g["std"] - np.std(t, ddof=1)) <= 1e-12 * max(1.0, np.std(t, ddof=1)), g
            else:
                assert got["times"] is None, got
            if dflt is not None and math.isfinite(dflt):
                assert got["speedup"] == dflt / r["objective"], (got["speedup"], dflt, r["objective"])
            else:
                assert got["speedup"] is None, got
        assert dev["default"]["measured"] == (dflt is not None), dev["default"]
        assert dev["default"]["configuration"] == default
        failures = {x["status"]: x["count"] for x in dev["failures"]}
        assert failures == {st: c for st, c in counts.items() if st != "ok"}, (failures, counts)
        for x in dev["failures"]:
            seen = []
            for _, r in log.records(key):
                line = first_line(r["reason"])
                if log.status_of(r) == x["status"] and line and line not in seen and len(seen) < 3:
                    seen.append(line)
            if x["status"] == "runtime_error" and not seen:
                continue
            assert x["reasons"] == seen, (x["reasons"], seen)
        print("json: %s %s: %d evaluations, top %d as the log's best (%.6g ms), default %s, failures %s"
              % (key[1], key[2], n, len(want), want[0][1]["objective"] if want else math.nan, dflt, failures))
    valid = total.get("ok", 0)
    cancelled = total.get("cancelled", 0)
    cross = sum(log.cross_checks(key) for key in log.classes)
    cross_all = sum(1 for r in log.ev if log.is_cross(r))
    assert (d["evaluations"], d["valid"], d["cancelled"], d["portability_checks"]) == \
        (len(log.ev) - cancelled - cross_all, valid, cancelled, cross), d


def checks_text(n):
    """what show appends to a line of counts for n portability checks"""
    return ", +%d portability check%s" % (n, "" if n == 1 else "s") if n else ""


def check_classes(log, out):
    """the counts of a log of several device classes: per class its search's, its portability checks apart"""
    assert len(log.classes) > 1, "class checks take logs of several device classes"
    lines = open(out).read().splitlines()
    sections = [l for l in lines if l.startswith("device ")]
    assert len(sections) == len(log.classes), sections
    total = [0, 0, 0]
    for key, line in zip(log.classes, sections):
        counts = log.counts(key)
        valid, cancelled = counts.get("ok", 0), counts.get("cancelled", 0)
        n, cross = sum(counts.values()) - cancelled, log.cross_checks(key)
        want = ": evaluations %d (%d valid, %d failed%s)%s" % (n, valid, n - valid, ", %d cancelled" % cancelled
                                                             if cancelled else "", checks_text(cross))
        assert line.endswith(want), (line, want)
        total = [total[0] + n, total[1] + valid, total[2] + cross]
        print("classes: %s: %d evaluations, %d portability checks" % (key[1], n, cross))
    run = next(l for l in lines if l.startswith("evaluations: "))
    assert run.startswith("evaluations: %d (%d valid, %d failed" % (total[0], total[1], total[0] - total[1])), run
    assert run.endswith(checks_text(total[2])) and total[2] > 0, (run, total)


def write_asserts(log, out, session, wrong):
    key = next(log.cls(r) for r in log.ev if int(r["session"]) == session)
    k, best = log.expected_top(key)[0]
    cfg = log.config(best)
    with open(out, "w") as f:
        for i, n in enumerate(log.names):
            v = cfg[n]
            if log.kinds[n] in ("int", "bool"):
                v = int(v) + (1 if wrong and i == 0 else 0)
                f.write("_Static_assert(%s == %d, \"%s\");\n" % (n, v, n))
    print("asserts: %s, record %d of %s" % (cfg, k, key))


def main():
    mode, log_path, out = sys.argv[1:4]
    log = Log(log_path)
    if mode == "text":
        check_text(log, out, int(sys.argv[4]))
    elif mode == "json":
        check_json(log, out, int(sys.argv[4]), sys.argv[5])
    elif mode == "classes":
        check_classes(log, out)
    elif mode == "asserts":
        write_asserts(log, out, int(sys.argv[4]), len(sys.argv) > 5 and sys.argv[5] == "wrong")
    else:
        sys.exit("unknown mode " + mode)


if __name__ == "__main__":
    main()
