"""Kernel ODM (RBF, m = 800) by the fast DCD against the reference
CVXPY dual (``refmodels.ODM.solve(form="dual")``, Clarabel).

Target: >= 500x faster at relative objective gap <= 1e-6 (both objectives are SPEC §4's
primal ``f_O`` recomputed by ``ODM.primal_value`` at each side's point). The fast solver runs
at its default tolerance (projected gradient 1e-8, tightened until the duality gap is below
1e-9 (1 + |P|)), Clarabel at its defaults (1e-8).

    python validation/bench_kernel_odm_cvxpy.py [--quick] [--lam 10] [--mu 0.8] [--theta 0.2]
"""
from __future__ import annotations

import refmodels as rm

import _harness as H


def main():
    H.fast_vs_cvxpy_main(
        __doc__, "Kernel ODM (RBF) vs the reference CVXPY dual", "kernel ODM",
        lambda X, y, kern, a: rm.ODM(X, y, lam=a.lam, mu=a.mu, theta=a.theta, kernel=kern),
        options=dict(lam=10.0, mu=0.8, theta=0.2), sizes=((200, 10), (800, 10)), small=60,
        kernels=lambda d: (rm.kernels.RBF(gamma=1.0 / d), f", RBF gamma = {1.0 / d:g}, "),
        target=500, gap_target=1e-6)


if __name__ == "__main__":
    main()
