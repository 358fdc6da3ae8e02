"""Seed 003, Table I (SVMm and eps-SVM against SVM; linear, poly2, poly3, gauss1 kernels) and
Table II (MKLm and eps-MKL against SimpleMKL, 20 base kernels), on the sets available.

Protocol (seed 003 §VII): features standardised (zero mean, unit variance); every kernel
normalised, K_ij / sqrt(K_ii K_jj); kernels linear, polynomial (x.z + 1)^d with d = 2, 3,
Gaussian exp(-||x - z||^2 / (2 sigma^2)) with sigma = 1; C (SVM) or C1 in
{0.1, 1, 10, 100, 1000} chosen by an inner 10-fold CV; C2 = C1 / 3; eps = 3 (SVMm, MKLm),
eps = 0 (eps-SVM, eps-MKL); error by an outer 10-fold CV with the same folds for all
methods. MKL: 20 base kernels, polynomial of degree 1..10 and Gaussian with
sigma in {0.5, 1, 2, 5, 7, 10, 12, 15, 17, 20}, all normalised. SimpleMKL is MKLm with
C2 = 0 (SPEC §6-7: the SVM limit). SVM is ``fast.SVMClassifier`` with intercept (LIBSVM's
model); C1 and C are used as SPEC's 1/2||w||^2 convention states them.

    python validation/reproduce/seed003_svmm.py --quick
    python validation/reproduce/seed003_svmm.py [--tables I,II]
"""
from __future__ import annotations

import math
import numpy as np

from _common import (load, markdown_table, mode, outdir, paper_table, parser, run_cells,
                     select, standardize, warmup, write_report)

NAME = "seed003_svmm"
DATA_NOTES = {"ionosphere": "KEEL ionosphere has 33 features (the constant one dropped; "
                            "paper 34)",
              "bupa": "KEEL bupa = liver-disorders, 345 rows (paper's Table II: 354)"}

# Seed 003 Table I: 10-fold CV error (%), columns SVMm, eps-SVM, SVM (no std printed)
T1, PAPER_NAMES = paper_table("""
file            row               table      SVMm          eps-SVM       SVM
"sonar"         "sonar"           linear     21.63         23.08         32.69
"sonar"         "sonar"           poly2      17.79         17.31         19.23
"sonar"         "sonar"           poly3      13.46         12.98         13.46
"sonar"         "sonar"           gauss1     34.62         34.62         42.79
"ionosphere"    "ionosphere"      linear     9.12          11.97         7.98
"ionosphere"    "ionosphere"      poly2      5.41          5.98          5.98
"ionosphere"    "ionosphere"      poly3      5.98          6.27          6.27
"ionosphere"    "ionosphere"      gauss1     5.41          5.41          10.82
"wdbc"          "wdbc"            linear     2.11          3.69          2.28
"wdbc"          "wdbc"            poly2      3.51          4.75          3.51
"wdbc"          "wdbc"            poly3      2.64          2.28          2.64
"wdbc"          "wdbc"            gauss1     6.5           6.85          16.34
"bupa"          "liver"           linear     30.43         31.3          31.01
"bupa"          "liver"           poly2      30.14         29.86         30.72
"bupa"          "liver"           poly3      28.7          30.43         29.57
"bupa"          "liver"           gauss1     32.17         32.46         32.17
""", std=False)
# Seed 003 Table II: 10-fold CV error (%), columns SimpleMKL, MKLm, eps-MKL
T2 = paper_table("""
file            row               table      SimpleMKL     MKLm          eps-MKL
"sonar"         "sonar"           mkl20      16.35         13.46         12.5
"ionosphere"    "ionosphere"      mkl20      4.27          3.70          3.99
"wdbc"          "wdbc"            mkl20      2.64          2.11          2.64
"bupa"          "liver"           mkl20      34.20         34.49         32.46
""", std=False)[0]["mkl20"]

C_GRID = [0.1, 1.0, 10.0, 100.0, 1000.0]
SIGMAS = [0.5, 1, 2, 5, 7, 10, 12, 15, 17, 20]
KEYS = ("table", "dataset", "kernel", "method", "fold")


def _normalise(K, da, db):
    return K / np.sqrt(np.outer(da, db))


def gram(X, kind, param):
    """Normalised Gram matrix of the whole set."""
    if kind == "poly":
        K = (X @ X.T + 1.0) ** param
        d = np.diag(K).copy()
        return _normalise(K, d, d)
    if kind == "linear":
        K = X @ X.T
        d = np.maximum(np.diag(K).copy(), 1e-300)
        return _normalise(K, d, d)
    sq = (X * X).sum(1)
    D = np.maximum(sq[:, None] + sq[None, :] - 2 * X @ X.T, 0.0)
    return np.exp(-D / (2.0 * param ** 2))


TABLE1_KERNELS = {"linear": ("linear", None), "poly2": ("poly", 2), "poly3": ("poly", 3),
                  "gauss1": ("gauss", 1.0)}


class _Indexed:
    """A base kernel over row indices of a precomputed Gram matrix (MKLm takes callables)."""

    def __init__(self, K):
        self.K = K

    def __call__(self, A, B):
        return self.K[np.ix_(A[:, 0].astype(int), B[:, 0].astype(int))]


def make_run(quick, tol, inner, n_outer):
    import fast
    from sklearn.model_selection import GridSearchCV, StratifiedKFold

    def run(cell):
        X, y = load(cell["dataset"])
        X = standardize(X)
        outer = StratifiedKFold(n_splits=n_outer, shuffle=True, random_state=cell["seed"])
        tr, te = list(outer.split(X, y))[cell["fold"]]
        m = cell["method"]
        if cell["table"] == "I":
            K = gram(X, *TABLE1_KERNELS[cell["kernel"]])
            Xtr, Xte = K[np.ix_(tr, tr)], K[np.ix_(te, tr)]
            if m == "SVM":
                est, grid = fast.SVMClassifier(kernel="precomputed", tol=tol), {"C": C_GRID}
            else:
                eps = 3.0 if m == "SVMm" else 0.0
                est = fast.SVMmClassifier(kernel="precomputed", eps=eps, tol=tol)
                grid = [{"C1": [c], "C2": [c / 3.0]} for c in C_GRID]
        else:
            Ks = [gram(X, "poly", d) for d in range(1, 11)] + [gram(X, "gauss", s)
                                                                for s in SIGMAS]
            kernels = [_Indexed(K) for K in Ks]
            idx = np.arange(len(y), dtype=float)[:, None]
            Xtr, Xte = idx[tr], idx[te]
            C2 = (lambda c: 0.0) if m == "SimpleMKL" else (lambda c: c / 3.0)
            eps = 3.0 if m == "MKLm" else 0.0
            est = fast.MKLmClassifier(kernels=kernels, eps=eps, tol=tol)
            cs = [10.0] if quick else C_GRID
            grid = [{"C1": [c], "C2": [C2(c)]} for c in cs]
        ytr, yte = y[tr], y[te]
        n_grid = sum(len(g["C1"]) for g in grid) if isinstance(grid, list) else len(grid["C"])
        if n_grid > 1:
            gs = GridSearchCV(est, grid, cv=StratifiedKFold(inner, shuffle=True,
                                                            random_state=cell["seed"]),
                              n_jobs=1, error_score=0.0).fit(Xtr, ytr)
            best, pred = gs.best_params_, gs.predict(Xte)
        else:
            g = grid[0]
            est.set_params(**{k: v[0] for k, v in g.items()})
            best, pred = {k: v[0] for k, v in g.items()}, est.fit(Xtr, ytr).predict(Xte)
        errors = int(np.sum(pred != yte))
        return {"score": errors / len(yte), "best_params": {k: float(v) for k, v in best.items()},
                "split_seed": cell["seed"], "n_train": len(tr), "n_test": len(te),
                "extra": {"errors": errors}}

    return run


def main(argv=None):
    p = parser(__doc__.split("\n\n")[0])
    p.add_argument("--tables", default="I,II")
    p.add_argument("--tol", type=float, default=1e-3, help="solver tolerance")
    args = p.parse_args(argv)
    tables = [t.strip() for t in args.tables.split(",")]
    if args.quick and not args.datasets:
        sets = {"I": ["sonar"], "II": ["sonar"]}
    else:
        ds = select(args, list(PAPER_NAMES))
        sets = {"I": ds, "II": ds}
    n_outer = 5 if args.quick else 10
    inner = 3 if args.quick else 10
    seed = args.seed
    out = outdir(args, NAME)
    print(f"{NAME} ({mode(args)}): tables {tables}, data {sets}, outer {n_outer}-fold CV "
          f"(StratifiedKFold shuffled with seed {seed}), inner {inner}-fold")
    print(f"random fold seed: {seed} (the same folds for every method and kernel)")
    if not args.no_warmup:
        print(f"numba warm-up {warmup():.1f} s")
    cells = []
    if "I" in tables:
        cells += [{"table": "I", "dataset": d, "kernel": k, "method": m, "fold": f, "seed": seed}
                  for d in sets["I"] for k in TABLE1_KERNELS for m in ("SVM", "eps-SVM", "SVMm")
                  for f in range(n_outer)]
    if "II" in tables:
        mk_folds = 3 if args.quick else n_outer
        cells += [{"table": "II", "dataset": d, "kernel": "mkl20", "method": m, "fold": f,
                   "seed": seed}
                  for d in sets["II"] for m in ("SimpleMKL", "eps-MKL", "MKLm")
                  for f in range(mk_folds)]
    rows = run_cells(cells, make_run(args.quick, args.tol, inner, n_outer),
                     out / f"{mode(args)}_cells.csv", KEYS, args, NAME)
    # aggregate: CV error = total errors / n over the folds run
    agg = {}
    for r in rows:
        import json

        e = json.loads(r["extra"])["errors"]
        g = (r["table"], r["dataset"], r["kernel"], r["method"])
        a = agg.setdefault(g, [0, 0, 0])
        a[0] += e
        a[1] += int(r["n_test"])
        a[2] += 1
    out_rows, n_flag, n_cmp = [], 0, 0
    for (t, d, k, m), (e, n, nf) in agg.items():
        ours = 100.0 * e / n
        pname = PAPER_NAMES[d]
        paper = (T1[k][pname][m] if t == "I" else T2[pname][m])
        # the paper prints no std; the binomial std of a CV error on n points stands in
        sd = 100.0 * math.sqrt(max(paper / 100 * (1 - paper / 100), 1e-4) / n)
        flag = ""
        if abs(ours - paper) > sd:
            reason = DATA_NOTES.get(d, "")
            if args.quick:
                reason = "quick: fewer folds" + ("; C1 fixed at 10, no inner CV" if t == "II"
                                                 else "") + ("; " + reason if reason else "")
            flag = f"**> binomial std** ({reason})" if reason else "**> binomial std**"
            n_flag += 1
        n_cmp += 1
        out_rows.append([t, f"{d} ({pname})", k, m, f"{ours:.2f} ({nf} folds, n={n})",
                         f"{paper:.2f}", f"{sd:.2f}", f"{ours - paper:+.2f}", flag])
    md = markdown_table(["table", "data set", "kernel", "method", "ours: CV error %",
                         "paper error %", "binomial std %", "ours - paper", "flag"], out_rows)
    md += (f"\n\n{n_flag} of {n_cmp} cells differ from the paper by more than the binomial "
           f"std sqrt(p(1-p)/n) of a CV error (the paper prints no std).")
    protocol = (f"seed 003 §VII: standardised features; normalised kernels; outer "
                f"{n_outer}-fold stratified CV (seed {seed}; paper: 10-fold), C / C1 in "
                f"{C_GRID} by inner {inner}-fold CV (paper: 10), C2 = C1/3, eps = 3 (SVMm, "
                f"MKLm) or 0 (eps-SVM, eps-MKL); SimpleMKL = MKLm with C2 = 0; tol {args.tol}."
                + (" QUICK MODE: Table I on sonar with 5 outer, 3 inner folds; Table II on sonar with 3 of "
                   "the folds and C1 fixed at 10 (no inner CV), so only indicative."
                   if args.quick else ""))
    notes = ["Seed 003 does not give the polynomial kernel's offset; we use (x.z + 1)^d.",
             "The paper's eq. 6 uses w^T w (so its C is twice ours for the same model); we "
             "search the same grid in SPEC's convention, which shifts it by a factor 2.",
             "Error is total test errors / n over the outer folds run."]
    return write_report(out, "Seed 003 Tables I-II: SVMm / eps-SVM vs SVM, MKLm / eps-MKL vs "
                        "SimpleMKL (10-fold CV error %)", protocol, md, notes)


if __name__ == "__main__":
    main()
