"""Issue 6, benchmark 2: SVMm (SPEC §6; RBF, with intercept, m = 1,000) by the fast SMO
against the reference CVXPY dual (``refmodels.SVMm.solve(form="dual")``, Clarabel).

Target: >= 100x faster. The objective gap (SPEC §6's primal recomputed by
``SVMm.primal_value`` at each side's ``(w, b)``) is printed with the times. The fast solver
runs at its default tolerance (KKT violation 1e-8, tightened until the relative duality gap
is below 1e-9).

    python validation/bench_svmm_cvxpy.py [--quick]
"""
from __future__ import annotations

import _harness as H


def main():
    p = H.parser(__doc__.splitlines()[0])
    p.add_argument("--C1", type=float, default=1.0)
    p.add_argument("--C2", type=float, default=0.5)
    p.add_argument("--eps", type=float, default=0.5)
    args = p.parse_args()
    m, d = (250, 10) if args.quick else (1000, 10)
    import refmodels as rm

    R = H.Report("SVMm (RBF, intercept) vs the reference CVXPY dual", args)
    X, y = H.binary_data(m, d, seed=0)
    Xs, ys = H.binary_data(60, d, seed=1)
    kern = rm.kernels.RBF(gamma=1.0 / d)
    R.say(f"data: make_classification {m} x {d}, RBF gamma = {1.0 / d:g}, C1 = {args.C1}, "
          f"C2 = {args.C2}, eps = {args.eps}")

    def make(Xa=X, ya=y):
        return rm.SVMm(Xa, ya, C1=args.C1, C2=args.C2, eps=args.eps, kernel=kern)

    H.fast_vs_cvxpy(R, args, "SVMm", make, lambda: make(Xs, ys), 100, 1e-6)
    R.record()


if __name__ == "__main__":
    main()
