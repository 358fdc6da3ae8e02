"""Binary-table reproductions (seed 002 Tables 2-3, seed 001 Tables 2-3): one cell is a data
set x kernel x method x repeat; a cell splits the data with the repeat's seed, grid-searches
on the training part (5-fold CV) and scores the test part."""
from __future__ import annotations

import numpy as np

from _common import (compare_row, fit_grid, fit_path_cv, load, markdown_table, minmax,
                     split, summarize, write_report)

KEYS = ("dataset", "kernel", "method", "repeat")


def make_cells(datasets, kernels, methods, seeds):
    return [{"dataset": d, "kernel": k, "method": m, "repeat": r, "seed": s}
            for d in datasets for k in kernels for m in methods for r, s in enumerate(seeds)]


def cell_runner(builders, train_size, cv=5, path_builders=None, bias_feature=False,
                extras=None):
    """``builders[method](kernel, Xtr) -> (estimator, grid)``; ``path_builders[method](kernel,
    Xtr) -> CV estimator`` (with its whole grid, ``gammas`` included) for the methods
    searched by ``fast.cv``'s estimators instead of GridSearchCV. ``Xtr`` is the cell's training part
    (scaled; a grid may depend on it, e.g. seed 001's RBF widths on its mean distance).
    ``extras(kernel, Xtr) -> dict``, if given, is stored in the cell's ``extra`` field."""
    path_builders = path_builders or {}

    def run(cell):
        X, y = load(cell["dataset"])
        X = minmax(X)
        if bias_feature:                        # a constant feature: a (regularised) bias
            X = np.c_[X, np.ones(len(X))]
        Xtr, Xte, ytr, yte = split(X, y, train_size, cell["seed"])
        if cell["method"] in path_builders:
            est = path_builders[cell["method"]](cell["kernel"], Xtr)
            res = fit_path_cv(est, Xtr, ytr, Xte, yte, cv=cv, seed=cell["seed"])
        else:
            est, grid = builders[cell["method"]](cell["kernel"], Xtr)
            res = fit_grid(est, grid, Xtr, ytr, Xte, yte, cv=cv, seed=cell["seed"])
        res["split_seed"] = cell["seed"]
        if extras is not None:
            res["extra"] = extras(cell["kernel"], Xtr)
        return res

    return run


def report(rows, datasets, kernels, methods, paper, paper_names, data_notes, out, title,
           protocol, notes, second=None, second_label=None, quick=False):
    """``paper[kernel][paper_name] = {method: (mean, std)}``; ``second`` likewise (shown, not
    flagged)."""
    S = summarize(rows, ("dataset", "kernel", "method"))
    headers = ["data set (paper row)", "kernel", "method", "ours % (n splits)", "paper %",
               "ours - paper", "flag"]
    if second:
        headers.insert(5, second_label)
    out_rows = []
    n_flag = n_cmp = 0
    for d in datasets:
        pname = paper_names[d]
        for k in kernels:
            for m in methods:
                ours = S.get((d, k, m))
                p = paper.get(k, {}).get(pname, {}).get(m)
                reason = data_notes.get(d, "")
                if quick:
                    reason = ("quick grid and few splits; " + reason).rstrip("; ")
                cells = compare_row(ours, p, reason)
                if ours and p:
                    n_cmp += 1
                    n_flag += bool(cells[3])
                row = [f"{d} ({pname})", k, m] + cells
                if second:
                    s2 = second.get(k, {}).get(pname, {}).get(m)
                    row.insert(5, f"{s2[0]:.1f} ± {s2[1]:.1f}" if s2 else "-")
                out_rows.append(row)
    md = markdown_table(headers, out_rows)
    # method averages over the rows we ran, ours and paper's
    avg = []
    for k in kernels:
        for m in methods:
            o = [S[(d, k, m)][0] for d in datasets if (d, k, m) in S
                 and paper.get(k, {}).get(paper_names[d], {}).get(m)]
            p = [paper[k][paper_names[d]][m][0] for d in datasets if (d, k, m) in S
                 and paper.get(k, {}).get(paper_names[d], {}).get(m)]
            if o:
                avg.append([k, m, f"{np.mean(o):.1f}", f"{np.mean(p):.1f}", len(o)])
    md += "\n\nAverages over the rows run (ours vs the paper's figure on the same rows):\n\n"
    md += markdown_table(["kernel", "method", "ours %", "paper %", "rows"], avg)
    md += f"\n\n{n_flag} of {n_cmp} compared cells differ from the paper by more than its std."
    return write_report(out, title, protocol, md, notes)
