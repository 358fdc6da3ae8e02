"""RBF problems with far rows, both layers, against CVXPY on the exact Gram (not a test).

Draws data with far outliers, large common offsets or far rows (``tests/strategies.py``'s
``far_rows``, ``10^e`` with ``e`` in [6, 16], and one row in ten at 1e155), an RBF kernel
(``gamma = 10^U(-1, 0.5) / d``) and SVM (with and without intercept) or ODM problems at
hyperparameters over orders of magnitude. Each problem is solved

* by ``fast.solve`` and by the reference (``prob.solve()``, CVXPY on the problem's own
  Gram), each point then certified (``prob.certify(sol, reference=False)``);
* independently: the same family with ``kernel=Precomputed()`` on the Gram computed from
  SciPy's ``cdist(X, X, "sqeuclidean")`` (differences first), by CVXPY.

A point reported ``optimal`` whose objective on the exact Gram is more than ``1e-6``
(relative) above the independent optimum is a silent wrong answer (the target is zero)::

    python validation/sweep_far_rows.py --n 60 --seed 0
"""
from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np
from scipy.spatial.distance import cdist

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from strategies import FAR_KINDS, far_rows  # noqa: E402  (the tests' generator)

FAMILIES = ("SVM", "SVM+b", "ODM")


def problem(family, seed):
    import refmodels as rm

    rng = np.random.default_rng(10_000 + seed)
    m, d = int(rng.integers(10, 50)), int(rng.integers(1, 6))
    kind = FAR_KINDS[seed % len(FAR_KINDS)]
    e = 155.0 if seed % 10 == 9 else float(rng.uniform(6, 16))
    X, _ = far_rows(seed, m, d, kind, e)
    y = np.where(rng.normal(size=m) + (X[:, 0] > np.median(X[:, 0])) > 0.5, 1, -1)
    y[0], y[-1] = 1, -1
    gamma = float(10 ** rng.uniform(-1, 0.5)) / d
    hp = float(10 ** rng.uniform(-1, 3))
    if family == "ODM":
        mu, theta = float(rng.uniform(0.1, 1.0)), float(rng.uniform(0.0, 0.9))

        def make(Xk, kern):
            return rm.ODM(Xk, y, lam=hp, mu=mu, theta=theta, kernel=kern)
    else:
        def make(Xk, kern):
            return rm.SVM(Xk, y, C=hp, kernel=kern, fit_intercept=family == "SVM+b")
    desc = f"{family} seed={seed} m={m} d={d} {kind} 1e{e:.1f} gamma={gamma:.3g} hp={hp:.3g}"
    return X, gamma, make, desc


def run_one(family, seed):
    import fast
    import refmodels as rm
    from refmodels.solution import SolverError

    X, gamma, make, desc = problem(family, seed)
    exact = make(np.exp(-gamma * cdist(X, X, "sqeuclidean")), rm.kernels.Precomputed())
    P = make(X, rm.kernels.RBF(gamma))
    rec = {"desc": desc}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            ref = exact.solve()
        except SolverError as exc:
            rec["exact"] = f"refused: {exc}"[:120]
            return rec
        f_star = ref.objective
        for layer in ("fast", "ref"):
            try:
                sol = fast.solve(P) if layer == "fast" else P.solve()
            except (SolverError, ValueError):
                rec[layer] = ("refused", None, None)
                continue
            ok = bool(P.certify(sol, reference=False).ok) if sol.status == "optimal" else None
            f = exact.objective_at(sol.coef, sol.intercept)[0]
            rec[layer] = (sol.status, ok, (f - f_star) / max(abs(f_star), 1e-300))
    return rec


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=60, help="problems per family")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--family", action="append", choices=FAMILIES)
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args(argv)
    wrong = []
    print(f"{'family':<7} {'n':>4} {'fast opt':>9} {'fast cert':>9} {'ref opt':>8} "
          f"{'ref cert':>8} {'worst fast gap':>14} {'worst ref gap':>13} {'silent wrong':>12}")
    for fam in args.family or FAMILIES:
        recs = [run_one(fam, s) for s in range(args.seed, args.seed + args.n)]
        row = [fam, len(recs)]
        bad = []
        for layer in ("fast", "ref"):
            got = [r[layer] for r in recs if layer in r]
            opt = [g for g in got if g[0] == "optimal"]
            row += [len(opt), sum(bool(g[1]) for g in opt)]
            bad += [(r["desc"], layer, r[layer]) for r in recs if layer in r
                    and r[layer][0] == "optimal" and r[layer][2] > 1e-6]
        gaps = [max([r[L][2] for r in recs if L in r and r[L][0] == "optimal"] or [np.nan])
                for L in ("fast", "ref")]
        print(f"{row[0]:<7} {row[1]:4d} {row[2]:9d} {row[3]:9d} {row[4]:8d} {row[5]:8d} "
              f"{gaps[0]:14.2e} {gaps[1]:13.2e} {len(bad):12d}", flush=True)
        wrong += bad
        if args.verbose:
            for r in recs:
                print("   ", r)
    for w in wrong:
        print("  silent wrong:", w)
    print(f"silent wrong answers: {len(wrong)} (optimal, yet > 1e-6 above the exact optimum)")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
