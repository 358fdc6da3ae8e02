"""The seed's cost claim (seed 004 §VI, Alg. 5 and Alg. 6): linear-kernel
DRM by ``linear_ppa`` and ``apg`` costs O(n p) per iteration, never forming the n x n Gram,
so the time grows linearly in n (n from 10^4 to 10^6, p = 10; ``--quick``: to 10^5). Plot:
``validation/plots/drm_linear_scaling.png``.

The number of iterations depends on the conditioning of ``Q_D + beta I`` (which changes with
n), so the cost per iteration is measured on a fixed budget: each run does exactly
``--iters`` iterations (``tol`` tiny; the ConvergenceWarning is expected and silenced), and
a run of 1 iteration measures the set-up (data checks and the Lanczos estimate of
``sigma_max``); ``(t_iters - t_1) / (iters - 1) / n`` is printed (it should stay flat). A run
to convergence at the default tolerance is printed for n = 2,000, with its coefficient error
against the fast closed form, for context.

    python validation/bench_drm_linear_scaling.py [--quick]
"""
from __future__ import annotations

import numpy as np

import _harness as H


def main():
    args = H.parser(__doc__.splitlines()[0], iters=30, p=10, n_test=4, alpha=0.5,
                    beta=1.0).parse_args()
    import fast
    import refmodels as rm
    from sklearn.datasets import make_classification

    R = H.Report("Linear-kernel DRM: linear_ppa and apg, cost against n", args)
    d, nt = args.p, args.n_test
    sizes = [10**4, 3 * 10**4, 10**5] + ([] if args.quick else [3 * 10**5, 10**6])

    def data(n, seed=0):
        X, y = make_classification(n_samples=n + nt, n_features=d, n_informative=5,
                                   n_classes=3, random_state=seed)
        X = (X - X.mean(0)) / X.std(0)
        return X[:n], y[:n], X[n:]

    Xs, ys, Xts = data(300, 1)
    comp = H.warmup(lambda: [fast.solve(rm.DRM(Xs, ys, Xts, alpha=args.alpha, beta=args.beta),
                                        method=mth, max_iter=5, tol=1e-14)
                             for mth in ("linear_ppa", "apg")])
    R.say(f"warm-up (300 points): {comp:.2f} s")
    R.say(f"p = {d}, {nt} test points, alpha = {args.alpha}, beta = {args.beta}, "
          f"{args.iters} iterations per run")
    rows, curves = [], {"linear_ppa": [], "apg": []}
    HEAD = ["n", "method", "best s", "set-up s (1 iteration)", "iterations",
            "ns/iteration/point", "status"]
    for n in sizes:
        X, y, Xt = data(n)
        sides = {}
        for mth in ("linear_ppa", "apg"):
            for its in (1, args.iters):
                sides[(mth, its)] = (lambda mth=mth, its=its: fast.solve(
                    rm.DRM(X, y, Xt, alpha=args.alpha, beta=args.beta), method=mth,
                    max_iter=its, tol=1e-15))
        res = H.interleaved(sides, args.repeat if n <= 10**5 else 1)
        for mth in ("linear_ppa", "apg"):
            t1, tn = res[(mth, 1)][0], res[(mth, args.iters)][0]
            sol = res[(mth, args.iters)][2]
            per = max(tn - t1, 0.0) / (args.iters - 1)
            curves[mth].append((n, max(tn - t1, 0.0)))
            rows.append([n, mth, tn, t1, sol.n_iter, 1e9 * per / n, sol.status])
        print(H.table(HEAD, rows[-2:]), flush=True)
    R.table(HEAD, rows)
    # context: a converged run at the smallest n against the closed form
    X, y, Xt = data(2000)
    prob = rm.DRM(X, y, Xt, alpha=args.alpha, beta=args.beta)
    t_cf, cf = H.timed(lambda: fast.solve(prob, method="closed_form"))
    crow = [["closed_form", t_cf, "-", "optimal", "-"]]
    for mth in ("linear_ppa", "apg"):
        t, sol = H.timed(lambda: fast.solve(prob, method=mth))
        crow.append([mth, t, sol.n_iter, sol.status,
                     float(np.max(np.abs(np.asarray(sol.coef) - np.asarray(cf.coef))))])
    R.table(["method", "s", "iterations", "status", "max |W - W_closed_form|"], crow,
            caption="to convergence at the default tol, n = 2000:")
    H.scaling_plot(R, curves, "apg", "n (training points)",
                   f"time of {args.iters - 1} iterations, set-up excluded (s)",
                   f"linear-kernel DRM, p = {d}, {nt} test points", "drm_linear_scaling.png")
    R.record()


if __name__ == "__main__":
    main()
