"""Seed 002 (ODM journal version), Tables 2 (linear) and 3 (RBF): ODM and ODM^L against SVM.
Seed 000 (the conference version, Tables 2-3, 50/50 split) is shown beside it for reference.

Protocol (seed 002 §7.1.1): features scaled into [0, 1]; 80/20 random split, repeated
(the paper: 30 times; full mode here: ``--repeats``, default 10); on the training part,
5-fold CV over lambda (ODM, ODM^L) or C in {2^0, 2^2, ..., 2^20}, mu and theta in
{0.2, 0.4, 0.6, 0.8} (ODM), mu1 and mu2 in {2^-4, 2^-2, ..., 2^4} (ODM^L), RBF width
gamma in {2^-4, 2^-2, 2^0, 2^2, 2^4} / d. The SVM is seed 002's eq. 2,
``1/2||w||^2 + (lambda/m) sum xi`` without bias, with lambda on the same grid.

    python validation/reproduce/seed002_odm.py --quick        # 2 data sets, 2 splits, small grid
    python validation/reproduce/seed002_odm.py [--repeats 30] [--n-jobs 2]
"""
from __future__ import annotations

import _binary
from _common import SVMPerSample, begin, mode, mode_sentences, paper_table, parser, pow2, run_cells

NAME = "seed002_odm"
DATA_NOTES = {
    "heart": "KEEL heart is Statlog heart (270 x 13), the paper's heart-statlog row",
    "housevotes": "KEEL housevotes: 232 rows without missing values (paper's vote)",
    "wdbc": "KEEL wdbc has 30 features, the paper's Table 1 says 14",
    "australian": "KEEL australian has 14 features (paper's austra: 15)",
    "german": "KEEL german is credit-g with 20 features",
    "haberman": "KEEL haberman has 3 features (paper's Table 1: 14)",
    "tic-tac-toe": "categorical features as ordinal codes",
    "spambase": "KEEL spambase has 4,597 rows (UCI 4,601)",
    "pima": "no bias: see the note on diabetes",
}

# Seed 002 Tables 2 (linear kernel, table "linear") and 3 (RBF, "rbf"), columns SVM, ODM^L,
# ODM: mean ± std (%) over 30 splits; seed 000 Tables 2 ("linear_s0") and 3 ("rbf_s0"), 50/50
# split, 30 repeats (fractions x 100). "row" is the paper's name of our data file.
PAPER, PAPER_NAMES = paper_table("""
file            row               table      SVM           ODML          ODM
"sonar"         "sonar"           linear     76.1 ± 3.0    75.0 ± 3.6    75.4 ± 3.8
"sonar"         "sonar"           rbf        78.3 ± 3.0    85.7 ± 3.6    85.8 ± 3.6
"sonar"         "sonar"           linear_s0  72.5 ± 3.9    73.6 ± 3.6    74.1 ± 3.5
"sonar"         "sonar"           rbf_s0     84.2 ± 3.4    84.6 ± 3.2    85.7 ± 2.9
"housevotes"    "vote"            linear     93.0 ± 2.2    97.0 ± 1.3    97.0 ± 1.3
"housevotes"    "vote"            rbf        95.7 ± 1.6    97.0 ± 1.3    97.0 ± 1.3
"housevotes"    "vote"            linear_s0  93.4 ± 2.2    97.0 ± 1.4    96.8 ± 1.3
"housevotes"    "vote"            rbf_s0     94.6 ± 1.6    96.8 ± 1.3    96.4 ± 1.1
"heart"         "heart-statlog"   linear     82.7 ± 2.4    84.0 ± 2.5    83.8 ± 2.7
"heart"         "heart-statlog"   rbf        82.8 ± 2.9    84.0 ± 2.5    83.8 ± 2.5
"heart"         "heart-statlog"   linear_s0  82.6 ± 3.1    82.1 ± 2.2    83.6 ± 2.8
"heart"         "heart-statlog"   rbf_s0     81.5 ± 2.7    82.9 ± 2.6    83.4 ± 2.4
"haberman"      "haberman"        linear     74.2 ± 2.1    73.3 ± 3.1    74.3 ± 2.2
"haberman"      "haberman"        rbf        74.2 ± 2.1    74.2 ± 2.2    74.2 ± 2.2
"haberman"      "haberman"        linear_s0  73.4 ± 3.0    73.8 ± 2.0    73.4 ± 1.8
"haberman"      "haberman"        rbf_s0     72.7 ± 2.4    73.1 ± 2.7    74.2 ± 2.1
"bupa"          "liver-disorders" linear     67.3 ± 2.8    67.8 ± 3.0    67.7 ± 3.9
"bupa"          "liver-disorders" rbf        71.8 ± 3.2    72.1 ± 3.2    72.3 ± 3.1
"bupa"          "liver-disorders" linear_s0  67.5 ± 3.0    68.1 ± 2.6    67.2 ± 3.0
"bupa"          "liver-disorders" rbf_s0     71.9 ± 3.0    71.2 ± 3.1    72.1 ± 3.2
"wdbc"          "wdbc"            linear     95.9 ± 1.5    96.8 ± 1.0    96.9 ± 1.0
"wdbc"          "wdbc"            rbf        97.1 ± 1.1    97.2 ± 1.0    97.4 ± 1.0
"wdbc"          "wdbc"            linear_s0  96.3 ± 1.2    96.8 ± 1.1    96.9 ± 1.1
"wdbc"          "wdbc"            rbf_s0     95.1 ± 1.1    96.1 ± 1.0    97.4 ± 1.0
"australian"    "austra"          linear     85.6 ± 1.4    86.0 ± 1.4    86.4 ± 1.5
"australian"    "austra"          rbf        85.7 ± 1.3    86.3 ± 1.4    86.2 ± 1.4
"australian"    "austra"          linear_s0  85.7 ± 1.3    85.9 ± 1.5    86.2 ± 1.3
"australian"    "austra"          rbf_s0     85.3 ± 1.3    85.7 ± 1.4    86.2 ± 1.5
"pima"          "diabetes"        linear     65.6 ± 1.9    77.4 ± 1.6    77.4 ± 1.7
"pima"          "diabetes"        rbf        77.4 ± 1.4    77.4 ± 1.3    77.8 ± 1.7
"pima"          "diabetes"        linear_s0  67.1 ± 1.9    67.0 ± 2.1    67.1 ± 2.0
"pima"          "diabetes"        rbf_s0     77.3 ± 1.4    77.1 ± 1.4    77.7 ± 1.4
"tic-tac-toe"   "tic-tac-toe"     linear     64.9 ± 1.2    65.0 ± 1.8    66.4 ± 1.6
"tic-tac-toe"   "tic-tac-toe"     rbf        98.2 ± 0.4    98.2 ± 0.4    98.4 ± 0.6
"german"        "credit-g"        linear     75.1 ± 1.6    74.9 ± 1.6    75.2 ± 1.6
"german"        "credit-g"        rbf        75.3 ± 1.8    75.3 ± 1.7    75.8 ± 1.4
"german"        "credit-g"        linear_s0  72.6 ± 4.1    74.5 ± 1.5    74.7 ± 1.6
"german"        "credit-g"        rbf_s0     75.1 ± 1.4    75.0 ± 1.6    75.7 ± 1.6
"spambase"      "spambase"        linear     92.7 ± 0.5    92.3 ± 0.6    92.3 ± 0.7
"spambase"      "spambase"        rbf        93.2 ± 0.5    93.5 ± 0.2    93.6 ± 0.4
""")

QUICK_DATASETS = ["heart", "sonar"]


def grids(quick):
    if quick:
        # every few points of the paper's grids, spanning their range
        return dict(lam=[2.0 ** p for p in (0, 5, 10)], mu=[0.2, 0.6], theta=[0.2, 0.6],
                    mu12=[2.0 ** -4, 1.0, 2.0 ** 4], width=[2.0 ** -4, 1.0, 2.0 ** 4])
    return dict(lam=[2.0 ** p for p in range(0, 21, 2)], mu=[0.2, 0.4, 0.6, 0.8],
                theta=[0.2, 0.4, 0.6, 0.8], mu12=[2.0 ** p for p in range(-4, 5, 2)],
                width=[2.0 ** p for p in (-4, -2, 0, 2, 4)])


def builders(quick, tol, max_iter):
    """GridSearchCV's estimators and grids. None of the three models has a bias (seed 002's
    eq. 2, ODM^L and ODM have none): ``fit_intercept=False``, which the estimators do not
    default to (``--bias-feature`` appends the constant feature instead)."""
    import fast

    G = grids(quick)

    def gam(kernel, X):
        return {} if kernel == "linear" else {"gamma": [w / X.shape[1] for w in G["width"]]}

    def svm(kernel, X):
        return (SVMPerSample(kernel=kernel, tol=tol, max_iter=max_iter),
                {"lam": G["lam"], **gam(kernel, X)})

    def odml(kernel, X):
        return (fast.ODMLClassifier(fit_intercept=False, kernel=kernel, tol=tol,
                                    max_iter=max_iter),
                {"lam": G["lam"], "mu1": G["mu12"], "mu2": G["mu12"], **gam(kernel, X)})

    def odm(kernel, X):
        return (fast.ODMClassifier(fit_intercept=False, kernel=kernel, tol=tol,
                                   max_iter=max_iter),
                {"lam": G["lam"], "mu": G["mu"], "theta": G["theta"], **gam(kernel, X)})

    return {"SVM": svm, "ODML": odml, "ODM": odm}


def path_builders(quick, tol, max_iter):
    """``--search path``: ODM and ODML through ``fast.ODMClassifierCV`` /
    ``fast.ODMLClassifierCV`` (warm-started lambda paths); the SVM stays on GridSearchCV (its
    C = lambda/m depends on the fold size, which a C path cannot follow)."""
    from fast import cv as fast_cv

    G = grids(quick)

    def gam(kernel, X):
        return None if kernel == "linear" else [w / X.shape[1] for w in G["width"]]

    def odml(kernel, X):
        return fast_cv.ODMLClassifierCV(lams=G["lam"], mu1s=G["mu12"], mu2s=G["mu12"],
                                        gammas=gam(kernel, X), fit_intercept=False,
                                        kernel=kernel, tol=tol, max_iter=max_iter)

    def odm(kernel, X):
        return fast_cv.ODMClassifierCV(lams=G["lam"], mus=G["mu"], thetas=G["theta"],
                                       gammas=gam(kernel, X), fit_intercept=False,
                                       kernel=kernel, tol=tol, max_iter=max_iter)

    return {"ODML": odml, "ODM": odm}


def main(argv=None):
    p = parser(__doc__.split("\n\n")[0])
    p.add_argument("--kernels", default="linear,rbf")
    p.add_argument("--tol", type=float, default=1e-3,
                   help="solver tolerance inside CV and refit (LIBODM's eps 1e-3)")
    p.add_argument("--max-iter", type=int, default=None)
    p.add_argument("--search", choices=["grid", "path"], default="grid",
                   help="grid: GridSearchCV; path: fast.ODMClassifierCV / ODMLClassifierCV "
                        "(warm-started paths, much faster on the full grids)")
    p.add_argument("--bias-feature", action="store_true",
                   help="append a constant feature 1 after scaling (a regularised bias; not "
                        "the seed's model, which has none); results in <script>_bias/")
    args = p.parse_args(argv)
    datasets, kernels, seeds, out = begin(
        args, NAME, NAME + ("" if args.search == "grid" else "_path")
        + ("_bias" if args.bias_feature else ""), QUICK_DATASETS, PAPER_NAMES)
    repeats = len(seeds)
    methods = ["SVM", "ODML", "ODM"]
    cells = _binary.make_cells(datasets, kernels, methods, seeds)
    run = _binary.cell_runner(builders(args.quick, args.tol, args.max_iter), train_size=0.8,
                              path_builders=(path_builders(args.quick, args.tol, args.max_iter)
                                             if args.search == "path" else None),
                              bias_feature=args.bias_feature)
    rows = run_cells(cells, run, out / f"{mode(args)}_cells.csv", _binary.KEYS, args, NAME)
    G = grids(args.quick)
    protocol = (f"seed 002 §7.1.1: features min-max scaled to [0, 1] on the whole set; "
                f"{repeats} random stratified 80/20 splits (seeds {seeds[0]}..{seeds[-1]}; "
                f"paper: 30); 5-fold stratified CV on the training part over "
                f"lambda in {pow2(G['lam'])}, "
                f"mu, theta in {G['mu']} (ODM), mu1, mu2 in {G['mu12']} (ODML), "
                f"RBF gamma in {G['width']} x 1/d; SVM = seed 002 eq. 2 (lambda/m, no bias); "
                f"solver tol {args.tol}; search: "
                + ("GridSearchCV. " if args.search == "grid" else
                   "fast.ODMClassifierCV / ODMLClassifierCV (warm-started paths), SVM by "
                   "GridSearchCV. ")
                + mode_sentences(args))
    notes = ["Paper columns: seed 002 Tables 2 (linear) and 3 (RBF), mean ± std over 30 splits; "
             "the 'seed 000' column is the conference version (50/50 split, its Tables 2-3), "
             "shown for reference, not flagged.",
             "A flag means |ours - paper| > the paper's std; with n splits our own standard "
             "error is about std/sqrt(n), so with few splits some flags are noise.",
             "diabetes (pima), linear: models through the origin (seed 002 eq. 2 and ODM have "
             "no bias) on features in [0, 1] stay near the majority rate (65%), as the paper's "
             "own linear SVM (65.6) and all of seed 000's rows (67); seed 002's 77.4 for ODM^L "
             "and ODM is what a bias gives: with a constant feature appended "
             "(--bias-feature), linear ODM reaches 75-76% on 3 splits (measured). Seed 002's "
             "ODM code likely appended one.",
             "Our data are KEEL's versions of the sets (validation/data/keel); the paper used "
             "LIBSVM/UCI versions, whose feature counts differ on several rows (see the flag "
             "reasons)."]
    return _binary.report(rows, datasets, kernels, methods, PAPER, PAPER_NAMES, DATA_NOTES, out,
                          "Seed 002 Tables 2-3: ODM and ODM^L vs SVM (accuracy %)", protocol,
                          notes, second={"linear": PAPER["linear_s0"], "rbf": PAPER["rbf_s0"]},
                          second_label="seed 000 %", quick=args.quick)


if __name__ == "__main__":
    main()
