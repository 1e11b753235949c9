#!/usr/bin/python3
"""tests/plot_bench.py: scripts/plot_bench.py on a tiny curves.csv and summary.csv: the y axis names the
time in ms, the x axis the evaluations, each strategy's legend entry its score, and the y range holds the
first evaluation's median, its upper quartile and E_random; the command line writes a PNG."""
import csv
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "scripts", "plot_bench.py")
sys.path.insert(0, os.path.dirname(SCRIPT))
os.environ.setdefault("MPLCONFIGDIR", tempfile.mkdtemp(prefix="plot-bench-test-"))
from plot_bench import plot_bench  # noqa: E402

N, OPT = 30, 1.0
FIRST = {"random": 40.0, "bo": 25.0}  # the first evaluation's median, far above the 20th


def write_set(d):
    with open(os.path.join(d, "curves.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["space", "strategy", "evaluations", "median", "q25", "q75", "e_random", "optimum"])
        for sp in ("A100", "W6600"):
            for st, first in FIRST.items():
                for k in range(1, N + 1):
                    med = OPT + (first - OPT) / k ** 2
                    w.writerow([sp, st, k, med, OPT + (med - OPT) * 0.8, OPT + (med - OPT) * 1.5,
                                OPT + 50.0 / k ** 2, OPT])
    with open(os.path.join(d, "summary.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["space", "strategy", "runs", "score_mean", "score_sd"])
        w.writerows([["A100", "random", 3, 0.01, 0.1], ["A100", "bo", 3, 0.7, 0.1],
                     ["W6600", "random", 3, -0.01, 0.1], ["W6600", "bo", 3, 0.848, 0.1]])


def check_figure(fig):
    axes = [ax for ax in fig.axes if ax.has_data()]
    assert len(axes) == 2, len(axes)
    for ax in axes:
        assert ax.get_ylabel() == "best time found (ms)", ax.get_ylabel()
        assert ax.get_xlabel() == "evaluations", ax.get_xlabel()
        lo, hi = ax.get_ylim()
        top = max(max(FIRST.values()) * 1.5 - 0.5 * OPT, OPT + 50.0)  # the q75 and E_random at k = 1
        assert lo <= OPT and hi >= top, (ax.get_title(), lo, hi, top)
    texts = [t.get_text() for lg in fig.legends for t in lg.get_texts()]
    assert "random (score 0.000)" in texts, texts
    assert "bo (score 0.774)" in texts, texts
    assert "E[random] (exact)" in texts and "optimum" in texts, texts


def main():
    with tempfile.TemporaryDirectory() as d:
        write_set(d)
        check_figure(plot_bench(os.path.join(d, "curves.csv")))
        png = os.path.join(d, "bench.png")
        subprocess.run([sys.executable, SCRIPT, os.path.join(d, "curves.csv"), png], check=True)
        with open(png, "rb") as f:
            assert f.read(8) == b"\x89PNG\r\n\x1a\n", "bench.png is not a PNG"
    print("plot_bench: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
