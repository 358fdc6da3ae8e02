"""Seed 002, Table 5: mcODM against the multi-class SVM (Crammer-Singer) and one-vs-rest SVM,
linear kernel, on the multi-class sets available.

Protocol (seed 002 §7.2.1): features scaled into [0, 1]; 80/20 random split, 10 repeats
(the paper's count; ``--repeats``); 5-fold CV on the training part over lambda (mcODM) or C
(SVMs) in {2^0, 2^2, ..., 2^20}, mu and theta in {0.2, 0.4, 0.6, 0.8} (mcODM).
mcODM is ``fast.McODMClassifier`` (no bias, as the seed); ovrSVM is ``fast.SVMClassifier``
one-vs-rest without bias (LIBLINEAR's default, which the seed used); mcSVM is LIBLINEAR's
Crammer-Singer solver (``sklearn.svm.LinearSVC(multi_class="crammer_singer",
fit_intercept=False)``; the project has no Crammer-Singer solver of its own).

    python validation/reproduce/seed002_mcodm.py --quick
    python validation/reproduce/seed002_mcodm.py           # the paper's grid: hours per set
"""
from __future__ import annotations

import _binary
from _common import (begin, fit_grid, load, minmax, mode, paper_table, parser, pow2,
                     run_cells, split)

NAME = "seed002_mcodm"
DATA_NOTES = {
    "vowel": "KEEL vowel has 13 features (paper: 10)",
    "satimage": "paper's std 8.0 for mcODM: its runs vary widely",
    "penbased": "KEEL penbased = pendigits (10,992 x 16)",
}

# Seed 002 Table 5(b), columns mcSVM, ovrSVM, ovoSVM, mcODM (% mean ± std)
PAPER, PAPER_NAMES = paper_table("""
file            row               table     mcSVM         ovrSVM        ovoSVM        mcODM
"iris"          "iris"            linear    84.7 ± 5.0    82.0 ± 5.0    73.0 ± 7.1    87.3 ± 3.4
"wine"          "wine"            linear    96.5 ± 2.6    97.0 ± 2.4    96.8 ± 3.1    98.4 ± 1.9
"vehicle"       "vehicle"         linear    80.5 ± 2.1    78.5 ± 2.9    73.5 ± 3.5    85.6 ± 6.6
"vowel"         "vowel"           linear    65.4 ± 2.1    44.1 ± 2.6    71.1 ± 4.9    65.6 ± 3.9
"segment"       "segment"         linear    95.3 ± 0.9    92.3 ± 0.7    93.2 ± 2.2    96.7 ± 1.3
"satimage"      "satimage"        linear    81.8 ± 0.5    80.1 ± 0.7    77.4 ± 4.2    89.1 ± 8.0
"penbased"      "pendigits"       linear    94.8 ± 0.3    91.8 ± 0.5    95.7 ± 0.8    96.7 ± 0.9
""")

QUICK_DATASETS = ["iris", "wine"]


def grids(quick):
    if quick:
        return dict(lam=[2.0 ** p for p in (0, 4, 8)], mu=[0.2, 0.6], theta=[0.2, 0.6])
    return dict(lam=[2.0 ** p for p in range(0, 21, 2)], mu=[0.2, 0.4, 0.6, 0.8],
                theta=[0.2, 0.4, 0.6, 0.8])


def make_run(quick, tol):
    import fast
    from sklearn.svm import LinearSVC

    G = grids(quick)

    def run(cell):
        X, y = load(cell["dataset"])
        X = minmax(X)
        Xtr, Xte, ytr, yte = split(X, y, 0.8, cell["seed"])
        m = cell["method"]
        if m == "mcODM":
            est = fast.McODMClassifier(kernel="linear", tol=tol)
            grid = {"lam": G["lam"], "mu": G["mu"], "theta": G["theta"]}
        elif m == "ovrSVM":
            est = fast.SVMClassifier(kernel="linear", fit_intercept=False, tol=tol,
                                     multi_class="ovr")
            grid = {"C": G["lam"]}
        else:
            est = LinearSVC(multi_class="crammer_singer", fit_intercept=False, tol=tol,
                            max_iter=20000)
            grid = {"C": G["lam"]}
        res = fit_grid(est, grid, Xtr, ytr, Xte, yte, cv=5, seed=cell["seed"])
        res["split_seed"] = cell["seed"]
        return res

    return run


def main(argv=None):
    p = parser(__doc__.split("\n\n")[0])
    p.add_argument("--tol", type=float, default=1e-3, help="solver tolerance (CV and refit)")
    args = p.parse_args(argv)
    datasets, _, seeds, out = begin(args, NAME, NAME, QUICK_DATASETS, PAPER_NAMES)
    repeats = len(seeds)
    methods = ["mcSVM", "ovrSVM", "mcODM"]
    cells = _binary.make_cells(datasets, ["linear"], methods, seeds)
    rows = run_cells(cells, make_run(args.quick, args.tol), out / f"{mode(args)}_cells.csv",
                     _binary.KEYS, args, NAME)
    G = grids(args.quick)
    protocol = (f"seed 002 §7.2.1: features min-max scaled to [0, 1]; {repeats} random "
                f"stratified 80/20 splits (seeds {seeds[0]}..{seeds[-1]}; paper: 10); 5-fold "
                f"stratified CV on the training part over lambda / C in {pow2(G['lam'])}, "
                f"mu, theta in {G['mu']} (mcODM); linear kernel, no bias; tol {args.tol}. "
                + ("QUICK MODE: reduced grid and 2 splits, so only indicative." if args.quick
                   else "Full mode: the paper's grids."))
    notes = ["Paper columns: seed 002 Table 5(b), mean ± std over 10 splits. The paper's "
             "ovoSVM column is not reproduced (ovoSVM is not one of our estimators).",
             "mcSVM is scikit-learn's LinearSVC(crammer_singer) (LIBLINEAR, as the paper).",
             "mcODM is non-convex; the fitted point is a fixed point of Alg. 3 (max_outer 50)."]
    return _binary.report(rows, datasets, ["linear"], methods, PAPER, PAPER_NAMES,
                          DATA_NOTES, out, "Seed 002 Table 5: mcODM vs mcSVM and ovrSVM "
                          "(linear, accuracy %)", protocol, notes, quick=args.quick)


if __name__ == "__main__":
    main()
