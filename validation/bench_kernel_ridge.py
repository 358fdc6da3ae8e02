"""DRM (SPEC §8, seed 004 eq. 13) with alpha = 0 by the fast closed
form against ``sklearn.kernel_ridge.KernelRidge`` on n = 4,000 training and 2,000 test points
(RBF); and DRM with alpha > 0 at the same size.

With alpha = 0, ``W = (K + beta I)^{-1} K_x`` (one column per test point) is exactly
``KernelRidge(alpha=beta, kernel="rbf", gamma=gamma).fit(X, K_x).dual_coef_`` with the
targets ``K_x = k(X, X_test)`` (n x n_test). KernelRidge's time includes computing its
targets ``K_x`` and its own Gram; ours includes building ``K``, ``K_x`` and the problem.

Target: fast / KernelRidge <= 1.0 at max coefficient error <= 1e-6. For alpha > 0 the
coefficients are checked against an independent dense solve of
``(K + alpha (H - B) + beta I) W = K_x`` (``refmodels.DRM.Q_D`` and ``numpy.linalg.solve``),
and the time is compared with alpha = 0 (the same cost is expected).

    python validation/bench_kernel_ridge.py [--quick]
"""
from __future__ import annotations

import numpy as np

import _harness as H

TARGET = 1.0


def main():
    args = H.parser(__doc__.splitlines()[0], beta=0.1,
                    alpha=(0.5, "alpha of the second comparison")).parse_args()
    import fast
    import refmodels as rm
    from sklearn.datasets import make_classification
    from sklearn.kernel_ridge import KernelRidge
    from sklearn.metrics.pairwise import rbf_kernel

    R = H.Report("DRM (alpha = 0) vs KernelRidge; DRM alpha > 0", args)
    n, n_test, d = (1000, 500, 20) if args.quick else (4000, 2000, 20)
    X, y = make_classification(n_samples=n + n_test, n_features=d, n_informative=10,
                               n_classes=3, random_state=0)
    X = (X - X.mean(0)) / X.std(0)
    Xtr, ytr, Xte = X[:n], y[:n], X[n:]
    gamma, beta = 1.0 / d, args.beta
    kern = rm.kernels.RBF(gamma=gamma)
    R.say(f"data: make_classification, {n} training / {n_test} test points, d = {d}, 3 classes, "
          f"RBF gamma = {gamma:g}, beta = {beta}")
    Xs, ys = Xtr[:100], ytr[:100]
    comp = H.warmup(lambda: fast.solve(rm.DRM(Xs, ys, Xte[:20], alpha=0.0, beta=beta,
                                              kernel=kern)))
    R.say(f"warm-up of the fast closed form on 100 x 20 test points: {comp:.2f} s")

    def ours(alpha):
        return fast.solve(rm.DRM(Xtr, ytr, Xte, alpha=alpha, beta=beta, kernel=kern))

    def theirs():
        Kx = rbf_kernel(Xtr, Xte, gamma=gamma)
        return KernelRidge(alpha=beta, kernel="rbf", gamma=gamma).fit(Xtr, Kx)

    res = H.interleaved({"fast DRM alpha=0": lambda: ours(0.0), "KernelRidge": theirs,
                         f"fast DRM alpha={args.alpha:g}": lambda: ours(args.alpha)},
                        args.repeat)
    W0 = np.asarray(res["fast DRM alpha=0"][2].coef)
    Wk = np.asarray(res["KernelRidge"][2].dual_coef_)
    Wa = np.asarray(res[f"fast DRM alpha={args.alpha:g}"][2].coef)
    prob_a = rm.DRM(Xtr, ytr, Xte, alpha=args.alpha, beta=beta, kernel=kern)
    W_ref = np.linalg.solve(prob_a.Q_D + beta * np.eye(n), prob_a.K_x)
    err0 = float(np.max(np.abs(W0 - Wk)))
    erra = float(np.max(np.abs(Wa - W_ref)))
    tk = res["KernelRidge"][0]
    rows = [["fast DRM alpha=0", res["fast DRM alpha=0"][0], "KernelRidge dual_coef_", err0,
             err0 / np.max(np.abs(Wk)), res["fast DRM alpha=0"][0] / tk],
            ["KernelRidge", tk, "-", None, None, 1.0],
            [f"fast DRM alpha={args.alpha:g}", res[f"fast DRM alpha={args.alpha:g}"][0],
             "numpy.linalg.solve", erra, erra / np.max(np.abs(W_ref)),
             res[f"fast DRM alpha={args.alpha:g}"][0] / tk]]
    for r, k in zip(rows, res):
        r.insert(2, " ".join(f"{x:.3f}" for x in res[r[0]][1]))
    R.table(["solver", "best s", "runs s", "coefficients compared with", "max |error|",
             "max rel error", "time / KernelRidge"], rows)
    ratio = res["fast DRM alpha=0"][0] / tk
    R.say(f"fast/KernelRidge = {ratio:.3f} (target <= {TARGET}: {H.verdict(ratio, TARGET)}), "
          f"max coefficient error {err0:.2e} (target <= 1e-6: {H.verdict(err0, 1e-6)})")
    R.say(f"alpha = {args.alpha:g}: time / (alpha = 0) = "
          f"{res[f'fast DRM alpha={args.alpha:g}'][0] / res['fast DRM alpha=0'][0]:.3f}, "
          f"max coefficient error vs a dense solve {erra:.2e}")
    R.record()


if __name__ == "__main__":
    main()
