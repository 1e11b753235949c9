#!/usr/bin/python3
"""scripts/plot_bench.py: the plot of `mptune bench`: best time found (ms) versus evaluations, median line
and interquartile band per strategy (variants NAME:key=value in their base strategy's colour, another line
style), one panel per space on a log y axis from the optimum to the first evaluation's worst median, the
expected best of random search (exact E_random) dash-dotted and the optimum dotted; each strategy's legend
entry carries its score (summary.csv next to CURVES.csv: the mean over the spaces that have one).

usage: /usr/bin/python3 scripts/plot_bench.py CURVES.csv OUT.png   (CURVES.csv as written by mptune bench)
As a module: plot_bench(curves_path, summary_path) returns the matplotlib figure.
"""
import csv
import math
import os
import sys

NEEDED = {"space", "strategy", "evaluations", "median", "q25", "q75", "e_random", "optimum"}


class BenchCsvError(ValueError):
    """a CSV that is not what mptune bench writes: the message names the file"""


def quiet_matplotlib_config():
    """matplotlib keeps a font cache in ~/.config/matplotlib; without a writable home (a batch job's user)
    it warns on stderr and uses a temporary one: then a temporary one of ours, removed at exit, quietly"""
    conf = os.environ.get("MPLCONFIGDIR") or os.path.join(os.path.expanduser("~"), ".config", "matplotlib")
    near = conf  # the nearest folder there is: matplotlib makes the rest
    while near and not os.path.isdir(near) and os.path.dirname(near) != near:
        near = os.path.dirname(near) if not os.path.exists(near) else ""
    if not (near and os.access(near, os.W_OK)):
        import atexit
        import shutil
        import tempfile
        os.environ["MPLCONFIGDIR"] = tempfile.mkdtemp(prefix="mptune-mpl-")
        atexit.register(shutil.rmtree, os.environ["MPLCONFIGDIR"], True)


def read_curves(path):
    """curves.csv: (spaces, strategies, data[(space, strategy)] = (k, median, q25, q75),
    ref[space] = (k, E_random, optimum)), in file order"""
    spaces, strategies, data, ref = [], [], {}, {}
    with open(path, newline="") as f:
        rows = csv.DictReader(f)
        if not rows.fieldnames or not NEEDED.issubset(rows.fieldnames):
            raise BenchCsvError(f"{path}: not a curves.csv of mptune bench (columns {sorted(NEEDED)})")
        for r in rows:
            sp, st = r["space"], r["strategy"]
            if sp not in spaces:
                spaces.append(sp)
            if st not in strategies:
                strategies.append(st)
            d = data.setdefault((sp, st), ([], [], [], []))
            d[0].append(int(r["evaluations"]))
            d[1].append(float(r["median"]))
            d[2].append(float(r["q25"]))
            d[3].append(float(r["q75"]))
            e = ref.setdefault(sp, ([], [], float(r["optimum"])))
            if st == strategies[0]:
                e[0].append(int(r["evaluations"]))
                e[1].append(float(r["e_random"]))
    if not spaces:
        raise BenchCsvError(f"{path}: no rows")
    return spaces, strategies, data, ref


def read_scores(path):
    """summary.csv: {strategy: mean score_mean over the spaces that have one}; {} without the file"""
    if not path or not os.path.exists(path):
        return {}
    per = {}
    with open(path, newline="") as f:
        rows = csv.DictReader(f)
        if not rows.fieldnames or not {"strategy", "score_mean"}.issubset(rows.fieldnames):
            raise BenchCsvError(f"{path}: not a summary.csv of mptune bench (columns strategy, score_mean)")
        for r in rows:
            s = float(r["score_mean"])
            if not math.isnan(s):
                per.setdefault(r["strategy"], []).append(s)
    return {st: sum(v) / len(v) for st, v in per.items()}


def legend_label(strategy, scores):
    return f"{strategy} (score {scores[strategy]:.3f})" if strategy in scores else strategy


def line_styles(strategies, cmap_of):
    """one colour per base strategy; its variants (NAME:key=value) share it with another line style"""
    bases = []
    for st in strategies:
        if st.split(":")[0] not in bases:
            bases.append(st.split(":")[0])
    cmap = cmap_of("tab10" if len(bases) <= 10 else "tab20")
    styles = ["-", "--", ":", "-."]
    style = {}
    for st in strategies:
        base = st.split(":")[0]
        n = sum(1 for s in style if s.split(":")[0] == base)
        style[st] = (cmap(bases.index(base) % cmap.N), styles[n % len(styles)])
    return style


def set_time_limits(ax, firsts, opt):
    """log y from just under the optimum to just over the highest first-evaluation value (medians, IQR top,
    E_random), so the start of every curve shows; linear with the same range when a time is not positive"""
    lo, hi = opt, max(firsts + [opt])
    if lo > 0:
        ax.set_yscale("log")
        ax.set_ylim(lo / 1.05, hi * 1.1)
    else:
        pad = 0.05 * (hi - lo) or 1.0
        ax.set_ylim(lo - pad, hi + pad)


def plot_bench(curves_path, summary_path=None):
    """the figure of curves.csv, legend scores from summary_path (default: summary.csv beside it)"""
    spaces, strategies, data, ref = read_curves(curves_path)
    if summary_path is None:
        summary_path = os.path.join(os.path.dirname(os.path.abspath(curves_path)), "summary.csv")
    scores = read_scores(summary_path)
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cols = min(3, len(spaces))
    nrows = math.ceil(len(spaces) / cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(5.2 * cols, 3.9 * nrows), squeeze=False)
    style = line_styles(strategies, plt.get_cmap)
    for i, sp in enumerate(spaces):
        ax = axes[i // cols][i % cols]
        firsts = []
        for st in strategies:
            if (sp, st) not in data:
                continue
            k, med, q25, q75 = data[(sp, st)]
            c, ls = style[st]
            ax.plot(k, med, color=c, ls=ls, lw=1.3, label=legend_label(st, scores))
            ax.fill_between(k, q25, q75, color=c, alpha=0.15 if len(strategies) <= 6 else 0.07, lw=0)
            firsts += [med[0], q75[0]]
        ek, ev, opt = ref[sp]
        ax.plot(ek, ev, color="black", ls="-.", lw=1.6, label="E[random] (exact)")
        ax.axhline(opt, color="grey", ls=":", lw=1.0, label="optimum")
        set_time_limits(ax, firsts + ev[:1], opt)
        ax.set_title(sp)
        ax.set_xlabel("evaluations")
        ax.set_ylabel("best time found (ms)")
        ax.grid(alpha=0.3, which="both")
    for i in range(len(spaces), nrows * cols):
        axes[i // cols][i % cols].axis("off")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(6, len(labels)), fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.04 + 0.025 * math.ceil(len(labels) / 6), 1, 1))
    return fig


def main(argv):
    if len(argv) != 3:
        print("usage: plot_bench.py CURVES.csv OUT.png", file=sys.stderr)
        return 2
    quiet_matplotlib_config()
    try:
        fig = plot_bench(argv[1])
    except BenchCsvError as e:
        print(f"plot_bench.py: {e}", file=sys.stderr)
        return 1
    except ValueError as e:
        print(f"plot_bench.py: {argv[1]} or its summary.csv: {e}", file=sys.stderr)
        return 1
    fig.savefig(argv[2], dpi=110, bbox_inches="tight")  # the legend under the panels whole
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
