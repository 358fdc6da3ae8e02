"""SVMm (SPEC §6; RBF, with intercept, m = 1,000) by the fast SMO
against the reference CVXPY dual (``refmodels.SVMm.solve(form="dual")``, Clarabel).

Target: >= 100x faster. The objective gap (SPEC §6's primal recomputed by
``SVMm.primal_value`` at each side's ``(w, b)``) is printed with the times. The fast solver
runs at its default tolerance (KKT violation 1e-8, tightened until the relative duality gap
is below 1e-9).

    python validation/bench_svmm_cvxpy.py [--quick] [--C1 1] [--C2 0.5] [--eps 0.5]
"""
from __future__ import annotations

import refmodels as rm

import _harness as H


def main():
    rbf = (lambda d: (rm.kernels.RBF(gamma=1.0 / d), f", RBF gamma = {1.0 / d:g}, "))
    H.fast_vs_cvxpy_main(__doc__, "SVMm (RBF, intercept) vs the reference CVXPY dual", "SVMm",
                         lambda X, y, kern, a: rm.SVMm(X, y, C1=a.C1, C2=a.C2, eps=a.eps,
                                                       kernel=kern),
                         dict(C1=1.0, C2=0.5, eps=0.5), ((250, 10), (1000, 10)), 60, rbf,
                         target=100, gap_target=1e-6)


if __name__ == "__main__":
    main()
