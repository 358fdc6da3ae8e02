"""Degenerate tiny problems, every family: two points, identical points, a feature that is
zero everywhere, duplicated rows. The fast solve must not crash, must say ``optimal``, and
its point must certify against the reference optimum (``certify(reference=True)`` computes
``prob.solve()`` and checks the objective gap too)."""
from __future__ import annotations

import numpy as np
import pytest

import fast
import refmodels as rm
from fast._polish import mehrotra_box

K = rm.kernels
RNG = np.random.default_rng(7)
Z = RNG.normal(size=(6, 2))

#: binary data sets: (X, y)
BINARY = {
    "two points": (np.eye(2), np.array([0, 1])),
    "identical points": (np.ones((4, 2)), np.array([1, -1, 1, -1])),
    "a zero feature": (np.c_[Z, np.zeros(6)], np.array([1, 1, 1, -1, -1, -1])),
    "duplicated rows": (np.repeat(Z[:3], 2, axis=0), np.array([1, 1, -1, -1, 1, -1])),
}
#: multi-class data sets for McODM and DRR/DRM
MULTI = {
    "three points": (np.eye(3), np.array([0, 1, 2])),
    "identical points": (np.ones((6, 2)), np.array([0, 1, 2, 0, 1, 2])),
    "a zero feature": (np.c_[Z, np.zeros(6)], np.array([0, 0, 1, 1, 2, 2])),
}
#: a family on data, at a large weight (64: the issue's C1 = C2 = 64)
BINARY_FAMILIES = {
    "SVM": lambda X, y: rm.SVM(X, y, C=64.0),
    "SVM+b": lambda X, y: rm.SVM(X, y, C=64.0, fit_intercept=True),
    "ODML": lambda X, y: rm.ODML(X, y, lam=64.0, mu1=0.5, mu2=0.5),
    "LDM": lambda X, y: rm.LDM(X, y, C=64.0, lam1=0.5, lam2=0.5),
    "ODM": lambda X, y: rm.ODM(X, y, lam=64.0, mu=0.5, theta=0.3),
    "SVMm": lambda X, y: rm.SVMm(X, y, C1=64.0, C2=64.0, eps=0.5),
    "SVMm eps=0": lambda X, y: rm.SVMm(X, y, C1=64.0, C2=64.0, eps=0.0),
    "EpsSVM": lambda X, y: rm.EpsSVM(X, y, C1=64.0, C2=64.0),
    "EpsSVM RBF": lambda X, y: rm.EpsSVM(X, y, C1=64.0, C2=64.0, kernel=K.RBF(0.5)),
    "MKLm": lambda X, y: rm.MKLm(X, y, [K.Linear(), K.RBF(0.5)], C1=64.0, C2=64.0),
}
MULTI_FAMILIES = {
    "McODM": lambda X, y: rm.McODM(X, y, lam=64.0, mu=0.5, theta=0.2),
    "DRM": lambda X, y: rm.DRM(X, y, X[:2] + 0.1, alpha=64.0, beta=1.0),
    "DRR": lambda X, y: rm.DRR(X, y, X[:2] + 0.1, alpha=64.0, beta=1.0, q=1, r=2,
                               rho="identity"),
}
CASES = ([(f, d) for f in BINARY_FAMILIES for d in BINARY]
         + [(f, d) for f in MULTI_FAMILIES for d in MULTI])


def _problem(family, data):
    if family in BINARY_FAMILIES:
        return BINARY_FAMILIES[family](*BINARY[data])
    return MULTI_FAMILIES[family](*MULTI[data])


def test_the_issue_reproduction_solves_and_certifies():
    """``EpsSVM(np.eye(2), [0, 1], C1=64, C2=64)``: every dual variable is free at the
    optimum (eps = 0 makes alpha_i = beta_i a null direction), the interior point's Newton
    systems become singular and their solve returned zeros: ZeroDivisionError. It now
    ends at its last point and the crossover finishes."""
    p = rm.EpsSVM(np.eye(2), [0, 1], C1=64, C2=64)
    s = fast.solve(p)
    assert s.status == "optimal"
    cert = p.certify(s, reference=True)
    assert cert.ok, cert
    ref = p.solve()
    assert abs(s.objective - ref.objective) <= 1e-6 * (1 + abs(ref.objective))
    np.testing.assert_allclose(p.decision_function(s, p.X), p.decision_function(ref, p.X),
                               atol=1e-5)


def test_the_estimator_on_the_issue_data():
    est = fast.SVMmClassifier(kernel="linear", C1=64, C2=64, eps=0.0).fit(np.eye(2), [0, 1])
    np.testing.assert_array_equal(est.predict(np.eye(2)), [0, 1])


@pytest.mark.parametrize("family,data", CASES)
def test_degenerate_problem_solves_and_certifies(family, data):
    p = _problem(family, data)
    s = fast.solve(p)
    assert s.status == "optimal", (family, data, s.status)
    cert = p.certify(s, reference=True)
    assert cert.ok, f"{family} on {data}\n{cert}"
    assert cert.values.get("reference_objective") is not None


def test_mehrotra_ends_at_its_last_point_when_a_solve_has_no_digits():
    """A Newton solve that returns zeros (the Schur complement ``a^T M^-1 a`` is 0): the
    method stops at its last point instead of dividing by zero."""
    n = 4
    a = np.array([1.0, -1.0, 1.0, -1.0])
    calls = []

    def grad(xi):
        return xi - 0.5

    def factor(h):
        calls.append(h)
        return lambda r: np.zeros_like(r)

    def stop(steps, *rest):
        return steps >= 10

    xi, _, z, w, _, steps = mehrotra_box(grad, factor, stop, n, a)
    assert steps == 1 and len(calls) == 1
    np.testing.assert_array_equal(xi, np.full(n, 0.5))      # the start, untouched
    assert np.all(np.isfinite(z)) and np.all(np.isfinite(w))


def test_svmm_interior_point_keeps_its_first_point_when_every_merit_is_nan():
    """Weights whose products overflow (C1 = 1e160, now refused by the problem) made every
    merit NaN: no iterate was kept and the unpacking raised TypeError. The first point is
    kept, and the caller's check decides."""
    from fast._svmm_linear import ipm

    X = np.random.default_rng(0).normal(size=(20, 3))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    with np.errstate(all="ignore"):
        alpha, beta, _, info = ipm(X, y, 1e160, 0.5, 0.5, True)
    assert alpha.shape == beta.shape == (20,)
    assert "gap" in info
