#!/usr/bin/python3
"""scripts/plot_bench.py: the plot of `mptune bench`: best found versus evaluations, median line and
interquartile band per strategy (variants NAME:key=value in their base strategy's colour, another line
style), one panel per space (y axis from about 20 evaluations on), the expected best of random
search (exact E_random) dash-dotted and the optimum dotted.

usage: /usr/bin/python3 scripts/plot_bench.py CURVES.csv OUT.png   (CURVES.csv as written by mptune bench)
"""
import csv
import math
import sys


def main(argv):
    if len(argv) != 3:
        print("usage: plot_bench.py CURVES.csv OUT.png", file=sys.stderr)
        return 2
    # matplotlib keeps a font cache in ~/.config/matplotlib; without a writable home (a batch job's user) it
    # warns on stderr and uses a temporary one: then a temporary one of ours, removed at exit, quietly
    import os
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
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    spaces, strategies, data, ref = [], [], {}, {}
    with open(argv[1], newline="") as f:
        rows = csv.DictReader(f)
        need = {"space", "strategy", "evaluations", "median", "q25", "q75", "e_random", "optimum"}
        if not rows.fieldnames or not need.issubset(rows.fieldnames):
            print(f"plot_bench.py: {argv[1]}: not a curves.csv of mptune bench (columns {sorted(need)})",
                  file=sys.stderr)
            return 1
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
        print(f"plot_bench.py: {argv[1]}: no rows", file=sys.stderr)
        return 1
    cols = min(3, len(spaces))
    nrows = math.ceil(len(spaces) / cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(5.2 * cols, 3.9 * nrows), squeeze=False)
    # one colour per base strategy; its variants (NAME:key=value) share it with another line style
    bases = []
    for st in strategies:
        if st.split(":")[0] not in bases:
            bases.append(st.split(":")[0])
    cmap = plt.get_cmap("tab10" if len(bases) <= 10 else "tab20")
    styles = ["-", "--", ":", "-."]
    style = {}
    for st in strategies:
        base = st.split(":")[0]
        n = sum(1 for s in style if s.split(":")[0] == base)
        style[st] = (cmap(bases.index(base) % cmap.N), styles[n % len(styles)])
    for i, sp in enumerate(spaces):
        ax = axes[i // cols][i % cols]
        for st in strategies:
            if (sp, st) not in data:
                continue
            k, med, q25, q75 = data[(sp, st)]
            c, ls = style[st]
            ax.plot(k, med, color=c, ls=ls, lw=1.3, label=st)
            ax.fill_between(k, q25, q75, color=c, alpha=0.15 if len(strategies) <= 6 else 0.07, lw=0)
        ek, ev, opt = ref[sp]
        ax.plot(ek, ev, color="black", ls="-.", lw=1.6, label="E[random] (exact)")
        ax.axhline(opt, color="grey", ls=":", lw=1.0, label="optimum")
        hi = max(ev[min(len(ev) - 1, 19)] * 1.05, opt * 1.05)  # the curves from ~20 evaluations on
        ax.set_ylim(opt * 0.98, hi)
        ax.set_title(sp)
        ax.set_xlabel("evaluations")
        ax.set_ylabel("best found (median, IQR)")
        ax.grid(alpha=0.3)
    for i in range(len(spaces), nrows * cols):
        axes[i // cols][i % cols].axis("off")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=min(6, len(labels)), fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.04 + 0.025 * math.ceil(len(labels) / 6), 1, 1))
    fig.savefig(argv[2], dpi=110)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
