"""Seed 001 (LDM), Tables 2 (linear) and 3 (RBF): LDM against SVM.

Protocol (seed 001 §4.1): features scaled into [0, 1]; half of the examples drawn at random
for training, the rest for testing (the paper: 30 repeats; full mode here: ``--repeats``,
default 10); 5-fold CV on the training half over C in {10, 50, 100} (SVM and LDM),
lambda1 and lambda2 in {2^-8, 2^-7, ..., 2^-2} (LDM), RBF width sigma in
{2^-2, 2^-1, 2^0, 2^1, 2^2} x delta with delta the average distance between training
instances (kernel exp(-||x - z||^2 / (2 sigma^2))). The SVM is the same model without the
margin terms, ``1/2||w||^2 + C sum xi`` without bias (the LDM has none).

    python validation/reproduce/seed001_ldm.py --quick
    python validation/reproduce/seed001_ldm.py [--repeats 30]
    python validation/reproduce/seed001_ldm.py --search path --repeats 30   # the full grid

``--search path`` selects by ``fast.SVMClassifierCV`` / ``fast.LDMClassifierCV`` (the same
grid, folds and rule, C along warm-started paths); results in ``results/seed001_ldm_path/``.
"""
from __future__ import annotations

import numpy as np

import _binary
from _common import begin, mode, mode_sentences, paper_table, parser, run_cells

NAME = "seed001_ldm"
DATA_NOTES = {
    "heart": "KEEL heart has 13 features; the paper's heart row has 9",
    "housevotes": "KEEL housevotes: 232 rows without missing values (paper's vote)",
    "wdbc": "KEEL wdbc has 30 features, the paper's Table 1 says 14",
    "australian": "KEEL australian has 14 features (paper's austra: 15)",
    "german": "KEEL german has 20 features; the paper's german has 59 (a coded version)",
    "haberman": "KEEL haberman has 3 features (paper's Table 1: 14)",
}

# Seed 001 Tables 2 (linear) and 3 (RBF), columns SVM and LDM: mean ± std over 30 splits
# (printed as fractions; x 100 here)
PAPER, PAPER_NAMES = paper_table("""
file            row               table      SVM           LDM
"sonar"         "sonar"           linear     72.5 ± 3.9    73.6 ± 3.6
"sonar"         "sonar"           rbf        84.2 ± 3.4    84.6 ± 3.2
"housevotes"    "vote"            linear     93.4 ± 2.2    97.0 ± 1.4
"housevotes"    "vote"            rbf        94.6 ± 1.6    96.8 ± 1.3
"heart"         "heart"           linear     79.9 ± 2.9    79.1 ± 3.0
"heart"         "heart"           rbf        80.8 ± 2.5    82.2 ± 2.9
"haberman"      "haberman"        linear     73.4 ± 3.0    73.8 ± 2.0
"haberman"      "haberman"        rbf        72.7 ± 2.4    73.1 ± 2.7
"wdbc"          "wdbc"            linear     96.3 ± 1.2    96.8 ± 1.1
"wdbc"          "wdbc"            rbf        95.1 ± 1.1    96.1 ± 1.0
"australian"    "austra"          linear     85.7 ± 1.3    85.9 ± 1.5
"australian"    "austra"          rbf        85.3 ± 1.3    85.7 ± 1.4
"german"        "german"          linear     71.1 ± 3.0    73.8 ± 1.6
"german"        "german"          rbf        73.1 ± 1.9    74.3 ± 1.6
""")

QUICK_DATASETS = ["housevotes", "wdbc"]


def grids(quick):
    if quick:
        return dict(C=[10.0, 100.0], lam=[2.0 ** -8, 2.0 ** -5, 2.0 ** -2],
                    width=[2.0 ** -1, 2.0 ** 1])
    return dict(C=[10.0, 50.0, 100.0], lam=[2.0 ** p for p in range(-8, -1)],
                width=[2.0 ** p for p in range(-2, 3)])


def avg_distance(X):
    from scipy.spatial.distance import pdist

    return float(np.mean(pdist(X)))


def widths(kernel, Xtr, G):
    """The RBF grid ``gamma = 1 / (2 (sigma delta)^2)`` of the training part (None: linear)."""
    if kernel != "rbf":
        return None
    delta = avg_distance(Xtr)
    return [1.0 / (2.0 * (w * delta) ** 2) for w in G["width"]]


def builders(quick, tol, max_iter):
    """GridSearchCV's estimators and grids. Neither model has a bias (seed 001's SVM and LDM
    have none): ``fit_intercept=False``, which the estimators do not default to."""
    import fast

    G = grids(quick)

    def gam(kernel, Xtr):
        g = widths(kernel, Xtr, G)
        return {} if g is None else {"gamma": g}

    def svm(kernel, Xtr):
        return (fast.SVMClassifier(fit_intercept=False, kernel=kernel, tol=tol,
                                   max_iter=max_iter), {"C": G["C"], **gam(kernel, Xtr)})

    def ldm(kernel, Xtr):
        return (fast.LDMClassifier(fit_intercept=False, kernel=kernel, tol=tol,
                                   max_iter=max_iter),
                {"C": G["C"], "lam1": G["lam"], "lam2": G["lam"], **gam(kernel, Xtr)})

    return {"SVM": svm, "LDM": ldm}


def path_builders(quick, tol, max_iter):
    """``--search path``: ``fast.SVMClassifierCV`` and ``fast.LDMClassifierCV``, whose folds
    run the C grid {10, 50, 100} as one warm-started path per (lambda1, lambda2, gamma);
    the same grid, folds and selection as GridSearchCV (see :func:`_common.fit_path_cv`)."""
    from fast import cv as fast_cv

    G = grids(quick)

    def svm(kernel, Xtr):
        return fast_cv.SVMClassifierCV(Cs=G["C"], gammas=widths(kernel, Xtr, G),
                                       fit_intercept=False, kernel=kernel, tol=tol,
                                       max_iter=max_iter)

    def ldm(kernel, Xtr):
        return fast_cv.LDMClassifierCV(Cs=G["C"], lam1s=G["lam"], lam2s=G["lam"],
                                       gammas=widths(kernel, Xtr, G), fit_intercept=False,
                                       kernel=kernel, tol=tol, max_iter=max_iter)

    return {"SVM": svm, "LDM": ldm}


def extras(kernel, Xtr):
    return {"delta": avg_distance(Xtr)} if kernel == "rbf" else {}


def main(argv=None):
    p = parser(__doc__.split("\n\n")[0])
    p.add_argument("--kernels", default="linear,rbf")
    p.add_argument("--tol", type=float, default=1e-3, help="solver tolerance (CV and refit)")
    p.add_argument("--max-iter", type=int, default=None)
    p.add_argument("--search", choices=["grid", "path"], default="grid",
                   help="grid: GridSearchCV; path: fast.SVMClassifierCV / LDMClassifierCV "
                        "(warm-started C paths, much faster on the full grid); results in "
                        "<script>_path/")
    p.add_argument("--bias-feature", action="store_true",
                   help="append a constant feature 1 after scaling (a regularised bias; not "
                        "the seed's model, which has none); results in <script>_bias/")
    args = p.parse_args(argv)
    datasets, kernels, seeds, out = begin(
        args, NAME, NAME + ("" if args.search == "grid" else "_path")
        + ("_bias" if args.bias_feature else ""), QUICK_DATASETS, PAPER_NAMES)
    repeats = len(seeds)
    methods = ["SVM", "LDM"]
    cells = _binary.make_cells(datasets, kernels, methods, seeds)
    run = _binary.cell_runner(builders(args.quick, args.tol, args.max_iter), train_size=0.5,
                              path_builders=(path_builders(args.quick, args.tol, args.max_iter)
                                             if args.search == "path" else None),
                              bias_feature=args.bias_feature, extras=extras)
    rows = run_cells(cells, run, out / f"{mode(args)}_cells.csv", _binary.KEYS, args, NAME)
    G = grids(args.quick)
    protocol = (f"seed 001 §4.1: features min-max scaled to [0, 1]; {repeats} random stratified "
                f"50/50 splits (seeds {seeds[0]}..{seeds[-1]}; paper: 30); 5-fold stratified CV "
                f"on the training half over C in {G['C']}, lambda1, lambda2 in "
                f"{{{', '.join(f'2^{int(np.log2(v))}' for v in G['lam'])}}} (LDM), RBF sigma in "
                f"{G['width']} x delta (delta = mean pairwise distance of the training half); "
                f"no bias for either model; solver tol {args.tol}; search: "
                + ("GridSearchCV. " if args.search == "grid" else
                   "fast.SVMClassifierCV / LDMClassifierCV (one warm-started C path per fold "
                   "and (lambda1, lambda2, sigma)). ")
                + mode_sentences(args))
    notes = ["Paper columns: seed 001 Tables 2 (linear) and 3 (RBF), mean ± std over 30 "
             "splits (printed as fractions; x 100 here).",
             "A flag means |ours - paper| > the paper's std; with n splits our own standard "
             "error is about std/sqrt(n).",
             "Seed 001 leaves the RBF form open; we read 'width sigma' as "
             "exp(-||x-z||^2/(2 sigma^2)).",
             "Expect LDM = SVM here. In SPEC's LDM (= seed 001 eq. 3: 1/2||w||^2 + lambda1 "
             "gamma_hat - lambda2 gamma_m + C sum xi) with the paper's grid, C in {10, 50, 100} "
             "and lambda1, lambda2 <= 2^-2, the margin terms are tiny next to C sum xi: "
             "measured on wdbc (50/50 split, linear, C = 10), ||w_LDM - w_SVM|| / ||w_SVM|| is "
             "1.3e-4 at lambda = 2^-8 and 8e-3 at 2^-2 (housevotes: 9e-4, 5e-2), with the same "
             "test accuracy; the two only part at lambda >= 16. The paper's LDM gains therefore "
             "suggest that its code scaled the terms differently (e.g. C or the lambdas per "
             "sample); we keep the printed grid and report the consequence."]
    if args.search == "path":
        notes.append("--search path runs the grid exactly (C in the 3 values above, every "
                     "lambda1, lambda2 and sigma, the same 5 stratified folds, the first best "
                     "mean CV accuracy in GridSearchCV's order, refit on the training half). "
                     "What differs: each fold solves C = 10, 50, 100 as one warm-started path "
                     "(fast.path, strong to weak C) instead of three cold solves, so a fold's "
                     "points agree with GridSearchCV's to the solver tolerance and a near-tie "
                     "of two candidates can fall the other way; a solve that fails scores NaN "
                     "(ranked last) where GridSearchCV scores it 0.")
    return _binary.report(rows, datasets, kernels, methods, PAPER, PAPER_NAMES, DATA_NOTES, out,
                          "Seed 001 Tables 2-3: LDM vs SVM (accuracy %)", protocol, notes,
                          quick=args.quick)


if __name__ == "__main__":
    main()
