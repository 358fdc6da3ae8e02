"""Issue 6, benchmark 3: MKLm (SPEC §7) with three base kernels, m = 300, by the fast
reduced-gradient solver (``fast/mklm.py``) against the reference CVXPY forms
(``refmodels.MKLm.solve(form="dual")``, the QCQP, and ``form="primal"``, eq. 22; Clarabel).

Target: >= 50x faster than the faster reference form at relative objective gap <= 1e-5
(SPEC §7's primal recomputed by ``MKLm.primal_value(mu, nu, b)`` at each side's point).

    python validation/bench_mklm_cvxpy.py [--quick]
"""
from __future__ import annotations

import _harness as H


def main():
    p = H.parser(__doc__.splitlines()[0])
    p.add_argument("--C1", type=float, default=1.0)
    p.add_argument("--C2", type=float, default=0.5)
    p.add_argument("--eps", type=float, default=0.5)
    args = p.parse_args()
    m, d = (100, 8) if args.quick else (300, 8)
    import refmodels as rm

    R = H.Report("MKLm (3 base kernels) vs the reference CVXPY forms", args)
    try:
        import fast.mklm  # noqa: F401
    except Exception as exc:                        # the solver is missing or broken
        R.say(f"fast/mklm.py is not importable ({type(exc).__name__}: {exc}): skipped")
        R.record()
        return
    X, y = H.binary_data(m, d, seed=0)
    Xs, ys = H.binary_data(40, d, seed=1)
    kernels = [rm.kernels.RBF(gamma=0.1 / d), rm.kernels.RBF(gamma=1.0 / d),
               rm.kernels.Polynomial(degree=2, gamma=1.0 / d, coef0=1.0)]
    R.say(f"data: make_classification {m} x {d}; base kernels {kernels}; C1 = {args.C1}, "
          f"C2 = {args.C2}, eps = {args.eps}")

    def make(Xa=X, ya=y):
        return rm.MKLm(Xa, ya, kernels=kernels, C1=args.C1, C2=args.C2, eps=args.eps)

    try:
        res, _ = H.fast_vs_cvxpy(R, args, "MKLm", make, lambda: make(Xs, ys), 50, 1e-5,
                                 forms=("dual", "primal"))
        R.say(f"fast mu = {res['fast'][2].variables['mu']}, reference (dual) mu = "
              f"{res['CVXPY dual'][2].variables.get('mu')}")
    except Exception as exc:
        R.say(f"the comparison failed ({type(exc).__name__}: {exc}): skipped")
    R.record()


if __name__ == "__main__":
    main()
