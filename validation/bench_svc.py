"""SVM with intercept (SPEC §1, ``fit_intercept=True``), RBF kernel, by
the fast SMO against LIBSVM through ``sklearn.svm.SVC`` (same C, gamma, tol, cache_size),
m = 6,000 at tol 1e-3; also m = 20,000 with a bounded cache (100 MB on both sides).

Both sides stop on the maximal KKT violation ``m(alpha) - M(alpha) <= tol`` (LIBSVM's
criterion, WSS3 on both sides). The dual objective ``D = e^T alpha - 1/2 nu^T G nu``
(``nu = Y alpha``; SVC's ``dual_coef_``) and the primal ``1/2 nu^T G nu + C sum hinge`` at
``(nu, b)`` are computed for both sides with the same code (kernel rows in blocks, never the
whole Gram at m = 20,000).

Target: fast / LIBSVM <= 1.0 at the same dual objective (relative gap <= 1e-3).

    python validation/bench_svc.py [--quick]
"""
from __future__ import annotations

import numpy as np

import _harness as H

TARGET = 1.0


def gram_times(X, gamma, v, block=2000):
    """``G v`` for the RBF Gram of ``X``, in row blocks."""
    from sklearn.metrics.pairwise import rbf_kernel

    out = np.empty(X.shape[0])
    for s in range(0, X.shape[0], block):
        out[s:s + block] = rbf_kernel(X[s:s + block], X, gamma=gamma) @ v
    return out


def objectives(X, y, C, gamma, nu, b):
    Gnu = gram_times(X, gamma, nu)
    q = float(nu @ Gnu)
    alpha = y * nu
    dual = float(np.sum(alpha)) - 0.5 * q
    primal = 0.5 * q + C * float(np.sum(np.maximum(0.0, 1.0 - y * (Gnu + b))))
    return dual, primal


def case(R, args, m, d, C, gamma, tol, cache_mb, repeat):
    import fast
    import refmodels as rm
    from sklearn.svm import SVC

    X, y = H.binary_data(m, d, seed=0)
    kern = rm.kernels.RBF(gamma=gamma)
    sides = {
        "fast SMO": lambda: fast.solve(rm.SVM(X, y, C=C, kernel=kern, fit_intercept=True),
                                       tol=tol, cache_size=cache_mb),
        "LIBSVM (SVC)": lambda: SVC(C=C, kernel="rbf", gamma=gamma, tol=tol,
                                    cache_size=cache_mb, shrinking=True).fit(X, y),
    }
    res = H.interleaved(sides, repeat)
    rows, duals = [], {}
    for k, (t, ts, out) in res.items():
        if k == "fast SMO":
            nu, b, it = out.coef, out.intercept, out.n_iter
            path = out.info.get("kernel_path", out.info.get("path", "?"))
        else:
            nu = np.zeros(m)
            nu[out.support_] = out.dual_coef_.ravel()
            b, it, path = float(out.intercept_[0]), int(np.sum(out.n_iter_)), "cache"
        D, P = objectives(X, y, C, gamma, nu, b)
        duals[k] = D
        rows.append([k, t, " ".join(f"{x:.2f}" for x in ts), it, path, D, P,
                     int(np.sum(np.abs(nu) > 0))])
    for r in rows:
        r += [H.rel_gap(duals[r[0]], duals["LIBSVM (SVC)"]),
              res[r[0]][0] / res["LIBSVM (SVC)"][0]]
    R.table(["solver", "best s", "runs s", "iter", "kernel", "dual objective",
             "primal objective", "n_SV", "rel dual gap to LIBSVM", "time / LIBSVM"], rows,
            caption=f"m = {m}, d = {d}, C = {C}, gamma = {gamma:g}, tol = {tol:g}, "
                    f"cache_size = {cache_mb} MB")
    ratio = res["fast SMO"][0] / res["LIBSVM (SVC)"][0]
    gap = abs(H.rel_gap(duals["fast SMO"], duals["LIBSVM (SVC)"]))
    R.say(f"m = {m}: fast/LIBSVM = {ratio:.3f} (target <= {TARGET}: {H.verdict(ratio, TARGET)}),"
          f" |relative dual gap| = {gap:.2e} (target <= 1e-3: {H.verdict(gap, 1e-3)})")
    R.say()


def main():
    args = H.parser(__doc__.splitlines()[0], C=1.0, tol=1e-3).parse_args()
    import fast
    import refmodels as rm

    R = H.Report("SVM with intercept (RBF): fast SMO vs LIBSVM (sklearn SVC)", args)
    d = 10
    gamma = 1.0 / d
    Xs, ys = H.binary_data(300, d, seed=1)
    comp = H.warmup(lambda: fast.solve(rm.SVM(Xs, ys, C=args.C, kernel=rm.kernels.RBF(gamma),
                                              fit_intercept=True), tol=args.tol))
    R.say(f"compile / warm-up of the fast SMO on 300 x {d}: {comp:.2f} s")
    if args.quick:
        case(R, args, 1500, d, args.C, gamma, args.tol, 500, args.repeat)
        case(R, args, 3000, d, args.C, gamma, args.tol, 20, args.repeat)
    else:
        case(R, args, 6000, d, args.C, gamma, args.tol, 500, args.repeat)
        case(R, args, 20000, d, args.C, gamma, args.tol, 100, min(args.repeat, 2))
    R.record()


if __name__ == "__main__":
    main()
