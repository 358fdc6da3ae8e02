"""Linear ODM by the fast DCD and by SVRG against LIBLINEAR's
L2-loss SVM dual (``sklearn.svm.LinearSVC(loss="squared_hinge", dual=True,
fit_intercept=False)``, the closest solver in scikit-learn) on the same data, and the
scaling in m from 10^4 to 10^6 (``--quick``: to 10^5); plot ``validation/plots/linear_scaling.png``.

Same data, matched weights: LIBLINEAR's L2-SVM ``1/2 ||w||^2 + C sum max(0, 1 - gamma_i)^2``
and ODM's ``1/2 ||w||^2 + lam/(m (1-theta)^2) sum (xi_i^2 + mu eps_i^2)`` get the same
weight per sample, ``lam = C m (1-theta)^2``. They are different problems (ODM also
penalises margins above ``1 + theta``), so their objectives are not compared; the DCD and
SVRG objectives (the same ODM) are. DCD and LIBLINEAR stop on the projected-gradient
spread ``<= tol``; SVRG on ``||grad f_O|| <= tol_svrg``.

The time per epoch should grow linearly in m: ``time / epoch / m`` is printed (ns).

    python validation/bench_linear_odm_scaling.py [--quick]
"""
from __future__ import annotations

import numpy as np

import _harness as H


def main():
    args = H.parser(__doc__.splitlines()[0], C=(0.01, "per-sample weight (LIBLINEAR's C)"),
                    mu=0.8, theta=0.2, tol=1e-3, tol_svrg=1e-4, d=20).parse_args()
    import fast
    import refmodels as rm
    from sklearn.svm import LinearSVC

    R = H.Report("Linear ODM (DCD, SVRG) vs LIBLINEAR L2-loss SVM dual: scaling in m", args)
    d, C, mu, th = args.d, args.C, args.mu, args.theta
    Xs, ys = H.binary_data(500, d, seed=1)
    comp = H.warmup(lambda: (fast.solve(rm.ODM(Xs, ys), method="dcd", tol=args.tol),
                             fast.solve(rm.ODM(Xs, ys), method="svrg", tol=args.tol_svrg)))
    R.say(f"compile / warm-up of DCD + SVRG on 500 x {d}: {comp:.2f} s")
    R.say(f"d = {d}, C = {C} per sample (lam = C m (1-theta)^2), mu = {mu}, theta = {th}, "
          f"tol (DCD, LIBLINEAR) = {args.tol:g}, tol SVRG (||grad||) = {args.tol_svrg:g}")
    sizes = [10**4, 3 * 10**4, 10**5] + ([] if args.quick else [3 * 10**5, 10**6])
    rows, curves = [], {"ODM DCD": [], "ODM SVRG": [], "LIBLINEAR L2-SVM": []}
    for m in sizes:
        X, y = H.binary_data(m, d, seed=0)
        lam = C * m * (1 - th) ** 2
        sides = {
            "ODM DCD": lambda: fast.solve(rm.ODM(X, y, lam=lam, mu=mu, theta=th),
                                          method="dcd", tol=args.tol, random_state=0),
            "ODM SVRG": lambda: fast.solve(rm.ODM(X, y, lam=lam, mu=mu, theta=th),
                                           method="svrg", tol=args.tol_svrg, random_state=0),
            "LIBLINEAR L2-SVM": lambda: LinearSVC(loss="squared_hinge", dual=True,
                                                  fit_intercept=False, C=C, tol=args.tol,
                                                  max_iter=100000).fit(X, y),
        }
        res = H.interleaved(sides, args.repeat if m <= 10**5 else 1)
        obj_dcd = res["ODM DCD"][2].objective
        for k, (t, ts, out) in res.items():
            if k.startswith("ODM"):
                ep, obj = out.n_iter, out.objective
                gap = H.rel_gap(obj, obj_dcd)
            else:
                ep, obj, gap = int(np.max(out.n_iter_)), None, None
            curves[k].append((m, t))
            rows.append([m, k, t, ep, 1e9 * t / max(ep, 1) / m, obj, gap,
                         t / res["LIBLINEAR L2-SVM"][0]])
        print(H.table(["m", "solver", "best s", "epochs", "ns/epoch/sample", "ODM objective",
                       "rel gap to DCD", "time / LIBLINEAR"], rows[-3:]), flush=True)
    R.table(["m", "solver", "best s", "epochs", "ns/epoch/sample", "ODM objective",
             "rel gap to DCD", "time / LIBLINEAR"], rows)
    H.scaling_plot(R, curves, "ODM DCD", "m (samples)", "training time (s)",
                   f"linear ODM vs LIBLINEAR L2-SVM, d = {d}", "linear_scaling.png")
    R.record()


if __name__ == "__main__":
    main()
