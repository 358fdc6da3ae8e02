"""Issue 5, benchmark 2: kernel ODM (RBF, m = 800) by the fast DCD against the reference
CVXPY dual (``refmodels.ODM.solve(form="dual")``, Clarabel).

Target: >= 500x faster at relative objective gap <= 1e-6 (both objectives are SPEC §4's
primal ``f_O`` recomputed by ``ODM.primal_value`` at each side's point). The fast solver runs
at its default tolerance (projected gradient 1e-8, tightened until the duality gap is below
1e-9 (1 + |P|)), Clarabel at its defaults (1e-8).

    python validation/bench_kernel_odm_cvxpy.py [--quick]
"""
from __future__ import annotations

import _harness as H


def main():
    p = H.parser(__doc__.splitlines()[0])
    p.add_argument("--lam", type=float, default=10.0)
    p.add_argument("--mu", type=float, default=0.8)
    p.add_argument("--theta", type=float, default=0.2)
    args = p.parse_args()
    m, d = (200, 10) if args.quick else (800, 10)
    import refmodels as rm

    R = H.Report("Kernel ODM (RBF) vs the reference CVXPY dual", args)
    X, y = H.binary_data(m, d, seed=0)
    Xs, ys = H.binary_data(60, d, seed=1)
    kern = rm.kernels.RBF(gamma=1.0 / d)
    R.say(f"data: make_classification {m} x {d}, RBF gamma = {1.0 / d:g}, lam = {args.lam}, "
          f"mu = {args.mu}, theta = {args.theta}")

    def make(Xa=X, ya=y):
        return rm.ODM(Xa, ya, lam=args.lam, mu=args.mu, theta=args.theta, kernel=kern)

    H.fast_vs_cvxpy(R, args, "kernel ODM", make, lambda: make(Xs, ys), 500, 1e-6)
    R.record()


if __name__ == "__main__":
    main()
