"""MKLm (SPEC §7) with three base kernels, m = 300, by the fast
reduced-gradient solver (``fast/mklm.py``) against the reference CVXPY forms
(``refmodels.MKLm.solve(form="dual")``, the QCQP, and ``form="primal"``, eq. 22; Clarabel).

Target: >= 50x faster than the faster reference form at relative objective gap <= 1e-5
(SPEC §7's primal recomputed by ``MKLm.primal_value(mu, nu, b)`` at each side's point).

    python validation/bench_mklm_cvxpy.py [--quick] [--C1 1] [--C2 0.5] [--eps 0.5]
"""
from __future__ import annotations

import refmodels as rm

import _harness as H


def base_kernels(d):
    ks = [rm.kernels.RBF(gamma=0.1 / d), rm.kernels.RBF(gamma=1.0 / d),
          rm.kernels.Polynomial(degree=2, gamma=1.0 / d, coef0=1.0)]
    return ks, f"; base kernels {ks}; "


def print_mu(R, res):
    R.say(f"fast mu = {res['fast'][2].variables['mu']}, reference (dual) mu = "
          f"{res['CVXPY dual'][2].variables.get('mu')}")


def main():
    H.fast_vs_cvxpy_main(
        __doc__, "MKLm (3 base kernels) vs the reference CVXPY forms", "MKLm",
        lambda X, y, ks, a: rm.MKLm(X, y, kernels=ks, C1=a.C1, C2=a.C2, eps=a.eps),
        dict(C1=1.0, C2=0.5, eps=0.5), sizes=((100, 8), (300, 8)), small=40,
        kernels=base_kernels, target=50, gap_target=1e-5, forms=("dual", "primal"),
        requires="fast.mklm", after=print_mu)


if __name__ == "__main__":
    main()
