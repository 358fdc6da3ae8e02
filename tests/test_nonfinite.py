"""NaN is never "converged": a solver loop that meets a NaN or an overflow stops with
``SolverError`` naming what it met, never a point called optimal (NaN compares false, so a
stop written ``res > tol`` reads a NaN residual as converged)."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import fast
import refmodels as rm
from fast import _dcd, _smo
from fast import _kernels as K
from refmodels.regularizers import Regularizer
from refmodels.solution import SolverError


class Divergent(Regularizer):
    """Not convex (``R = -1/2 ||w||^2``): its "prox" expands, and proximal steps diverge."""

    def value(self, w, groups):
        return -0.5 * float(w @ w)

    def prox(self, v, step, groups):
        return v / max(1.0 - step, 1e-3)

    def expr(self, w, groups):
        import cvxpy as cp

        return -0.5 * cp.sum_squares(w)


class ExpandingProx(Regularizer):
    """Convex (``R = 1/2 ||w||^2``, its expr DCP) with a wrong "prox" that expands: the
    regularizer is accepted (its prox is only not trusted), and proximal steps diverge."""

    def value(self, w, groups):
        return 0.5 * float(w @ w)

    def prox(self, v, step, groups):
        return v / max(1.0 - step, 1e-3)

    def expr(self, w, groups):
        import cvxpy as cp

        return 0.5 * cp.sum_squares(w)


def _drr(reg):
    r = np.random.default_rng(0)
    X, y, Xt = r.normal(size=(30, 3)), r.normal(size=30), r.normal(size=(4, 3))
    return rm.DRR(X, y, Xt, alpha=1.0, beta=5.0, regularizer=reg, kernel=rm.kernels.RBF(0.5))


@pytest.mark.parametrize("method", ["apg", "ppa"])
def test_drr_with_a_divergent_prox_is_an_error_not_optimal(method):
    """The probe's case: the iterates overflowed to |W| ~ 1e155 and the APG reported
    "optimal" with residual 0 (NaN residuals were read as converged). The non-convex
    regularizer of the probe is now refused before any iteration (its expr is not DCP);
    a convex one whose prox expands still diverges, and the error names the prox."""
    with pytest.raises(ValueError, match="expr is convex \\(DCP\\)"):
        fast.solve(_drr(Divergent()), method=method)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.raises(SolverError, match="not finite.*regularizer.prox .* fails"):
            fast.solve(_drr(ExpandingProx()), method=method)


@pytest.mark.parametrize("scale", [1.0, 10.0])
def test_drr_still_converges(scale):
    # the rewritten stop keeps every finite case as it was
    r = np.random.default_rng(1)
    X, y, Xt = r.normal(size=(40, 3)) * scale, r.normal(size=40), r.normal(size=(5, 3)) * scale
    prob = rm.DRR(X, y, Xt, alpha=0.5, beta=0.3, q=2, r=1, rho="identity",
                  kernel=rm.kernels.Linear())
    sol = fast.solve(prob, method="apg")
    assert sol.status == "optimal" and prob.certify(sol).ok


def _overflowing_odm():
    """Linear ODM whose primal gradient overflows at w = 0 (lam / m times features of
    1e149); its dual numbers stay bounded."""
    y = np.array([1.0, -1.0, 1.0, -1.0, 1.0, -1.0])
    X = np.array([[1e149, 0], [0, 1e149], [2e149, 1], [1, -3e149], [5e148, 5e148],
                  [-1e149, 2e148]])
    return rm.ODM(X, y, lam=1e150, mu=0.5, theta=0.3), rm.ODML(X, y, lam=1e150, mu1=0.5,
                                                                mu2=0.3)


@pytest.mark.parametrize("method", ["tron", "svrg"])
def test_primal_methods_that_overflow_raise(method):
    odm, _ = _overflowing_odm()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.raises(SolverError, match="not finite"):
            fast.solve(odm, method=method)


def test_asgd_that_overflows_raises():
    _, odml = _overflowing_odm()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.raises(SolverError, match="not finite"):
            fast.solve(odml, method="asgd")


def test_odm_auto_falls_back_to_the_dcd_when_tron_overflows():
    """TRON's primal overflows where the dual does not: ``method=None`` goes on with the DCD
    (before: "sol.coef must contain only finite values")."""
    odm, _ = _overflowing_odm()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = fast.solve(odm)
    assert sol.solver == "fast:dcd" and sol.info["fallback"] == "dcd"
    assert "not finite" in sol.info["tron"]["error"]
    assert np.isfinite(sol.objective) and np.all(np.isfinite(sol.coef))


def _inf_gram():
    """A symmetric 'Gram' with an infinite entry (the building blocks take any matrix)."""
    G = np.array([[2.0, np.inf, 0.5], [np.inf, 2.0, 0.3], [0.5, 0.3, 1.0]])
    return G, np.array([1.0, -1.0, 1.0])


def test_dcd_stops_on_a_gradient_that_is_not_finite():
    G, y = _inf_gram()
    oracle = _dcd.Oracle("gram", K=G, qy=y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.raises(SolverError, match="not finite"):
            _dcd.run(oracle, sign=1.0, lo=0.0, hi=1.0, p=-1.0, dg=0.0,
                     alpha0=np.full(3, 0.5), tol=1e-8, max_iter=100, seed=0)


@pytest.mark.parametrize("has_eq", [True, False])
def test_smo_stops_on_a_gradient_that_is_not_finite(has_eq):
    """NaN compares false: the working-set selection found no pair and the run ended as if
    at the optimum, with a violation of 0."""
    G, y = _inf_gram()
    src = K.RowSource(gram=G)
    alpha = np.array([0.5, 0.5, 0.0]) if has_eq else np.full(3, 0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.raises(SolverError, match="not finite"):
            _smo.smo_solve(np.arange(3), y, -np.ones(3), np.ones(3), src.diag, alpha, has_eq,
                           1e-8, 1000, True, src.src, np.zeros(7, dtype=np.int64))
