"""No silent wrong answer, at every scale, in either layer.

Every family is drawn at random scales (:func:`strategies.make_problem`: features scaled by
10^U(-3, 3), raw data with polynomial kernels so that Gram entries reach 1e8, near-duplicate
points, theta close to 1). The contract under test:

* a fast solve that reports ``optimal`` certifies (``certify(reference=False).ok``); one that
  does not certify says so (status ``inaccurate`` / ``max_iter``) with a ConvergenceWarning;
* a reference solve either returns a point that certifies itself or raises ``SolverError``.

``validation/sweep_scales.py`` runs the same generator over thousands of problems.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, note, settings
from hypothesis import strategies as st
from sklearn.exceptions import ConvergenceWarning

import fast
from refmodels.solution import SolverError
from contract import trusted
from strategies import FAMILIES, make_problem

HONEST = {"optimal", "inaccurate", "max_iter", "stalled"}   # stalled: MKLm's line search


@pytest.mark.parametrize("family", FAMILIES)
@given(seed=st.integers(0, 2**31 - 1))
@settings(max_examples=6 if __import__("os").environ.get("CI") else 12)
def test_fast_optimal_means_certified(family, seed):
    """``optimal`` certifies; anything else is a known status with a ConvergenceWarning, or
    a ``SolverError`` (e.g. a factorisation that fails on a numerically singular Gram)."""
    p, desc = make_problem(family, seed)
    note(str(desc))
    statuses = []

    def run():
        sol = fast.solve(p, random_state=0)
        statuses.append(sol.status)
        return sol
    trusted(p, run)
    assert all(s in HONEST for s in statuses), (desc, statuses)


@pytest.mark.parametrize("family", [f for f in FAMILIES if f not in ("McODM",)])
@given(seed=st.integers(0, 2**31 - 1))
@settings(max_examples=4 if __import__("os").environ.get("CI") else 10)
def test_reference_optimal_means_certified(family, seed):
    p, desc = make_problem(family, seed)
    note(str(desc))
    sol = trusted(p, p.solve)
    assert sol is None or sol.status == "optimal"


def test_issue_ldm_example_is_not_silently_wrong():
    """LDM, raw features x50 with a quadratic kernel (50 x 5, lam1 = 70, lam2 = 600): the
    returned coef has the reported objective, and an 'optimal' point certifies."""
    import refmodels as rm

    rng = np.random.default_rng(0)
    X = 50 * rng.normal(size=(50, 5))
    y = np.where(X[:, 0] > 0, 1, -1)
    p = rm.LDM(X, y, C=1.0, lam1=70.0, lam2=600.0, kernel=rm.kernels.Polynomial(2, 0.4, 1.0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = fast.solve(p, random_state=0)
    P_coef = p.primal_value(p.w_from_coef(s.coef), 0.0)
    assert abs(P_coef - s.objective) <= 1e-6 * (1 + abs(P_coef))
    if s.status == "optimal":
        assert p.certify(s, reference=False).ok


def test_issue_eps_svm_reference_certifies_or_refuses():
    import refmodels as rm

    rng = np.random.default_rng(174)
    X = 70 * rng.normal(size=(60, 4))
    y = np.where(X[:, 0] + 70 * rng.normal(size=60) > 0, 1, -1)
    p = rm.EpsSVM(X, y, C1=28.0, C2=0.0015, kernel=rm.kernels.Polynomial(2, 0.08, 1.0))
    try:
        r = p.solve()
    except SolverError as exc:
        assert "certifies" in str(exc)
        return
    assert p.certify(r, reference=False).ok


@pytest.mark.parametrize("scale", [1e5, 1e7])
def test_smo_is_bounded_on_badly_scaled_data(scale):
    """70 x 5 points scaled x1e5 / x1e7 (SVMm, SVM with intercept): the SMO returns (its
    ``max_iter`` is bounded) with a certified point, or a status and a warning that names
    the scale. Speed is not asserted."""
    import refmodels as rm

    rng = np.random.default_rng(1)
    X = rng.normal(size=(70, 5)) * scale
    y = np.where(X[:, 0] > 0, 1, -1)
    for prob in (rm.SVMm(X, y), rm.SVM(X, y, fit_intercept=True)):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            sol = fast.solve(prob)
        if sol.status != "optimal":
            msgs = [str(w.message) for w in caught if issubclass(w.category, ConvergenceWarning)]
            assert msgs and any("scale" in m for m in msgs), msgs
        else:
            assert prob.certify(sol, reference=False).ok


@given(seed=st.integers(0, 2**32 - 1),
       q=st.sampled_from([1.0, 1.5, 2.0, 3.0, np.inf]),
       r=st.sampled_from([1.0, 1.5, 2.0, np.inf]),
       p=st.sampled_from([1.0, 1.5, 2.0, 3.0]),
       log_c=st.floats(-300.0, 300.0))
@settings(max_examples=40 if __import__("os").environ.get("CI") else 200, deadline=None)
def test_group_norm_prox_is_scale_equivariant(seed, q, r, p, log_c):
    """``prox_{s c^(2-p) rho(N)}(c v) = c prox_{s rho(N)}(v)`` (``rho = t^p / p``, any norm
    ``N``) at every scale ``c`` in 1e+-300, for steps ``s`` of unit size relative to ``v``.
    Before the prox brought its input to unit scale, columns near 1e+-160 came back wrong by
    1-90 % for most (q, r) (a q = 2 group norm overflowed to inf and the prox returned its
    input) or raised ZeroDivisionError ((3, inf) at 1e-200, a bracket of equal values); the
    l-inf prox killed a group whose step was below the rounding of its largest entry."""
    from fast._prox import group_norm_prox

    rng = np.random.default_rng(seed)
    groups = [np.array([0, 3, 4]), np.array([1, 2]), np.array([5, 6, 7, 8])]
    V = rng.normal(size=(9, 4)) * 3.0
    steps = 10.0 ** rng.uniform(-2.0, 0.5, 4)
    c = 10.0 ** log_c
    X1 = group_norm_prox(V, steps, q, r, p, groups)
    Xc = group_norm_prox(V * c, steps * c ** (2.0 - p), q, r, p, groups)
    note(f"c={c:g}")
    assert np.all(np.isfinite(Xc))
    # absolute error against the input's scale: an entry shrunk from ~3 to ~1e-6 carries
    # the root's relative error times ~3 (cancellation), as any backward-stable prox does
    np.testing.assert_allclose(Xc / c, X1, rtol=1e-9, atol=1e-11 * np.max(np.abs(V)))


@given(seed=st.integers(0, 2**32 - 1), q=st.sampled_from([1.0, 2.0, np.inf]),
       r=st.sampled_from([1.0, 2.0, np.inf]), log_s=st.floats(-300.0, 300.0))
@settings(max_examples=40 if __import__("os").environ.get("CI") else 200, deadline=None)
def test_group_norm_prox_at_extreme_steps(seed, q, r, log_s):
    """``rho(t) = t``, q and r in {1, 2, inf}: a step ``s`` of any size against unit-scale
    ``v`` moves no entry by more than ``s sqrt(m)`` (the norm's 2-norm Lipschitz bound), and
    the prox is 0 exactly when the dual norm of ``v`` is at most ``s``."""
    from fast._prox import group_norm_prox
    from refmodels.regularizers import GroupNorm

    rng = np.random.default_rng(seed)
    groups = [np.array([0, 3, 4]), np.array([1, 2]), np.array([5, 6, 7, 8])]
    v = rng.normal(size=9) * 3.0
    s = 10.0 ** log_s
    x = group_norm_prox(v, s, q, r, 1.0, groups)
    assert np.all(np.isfinite(x))
    assert np.linalg.norm(v - x) <= s * 3.0 * (1 + 1e-12) + 1e-15 * np.max(np.abs(v))
    dual = GroupNorm(q, r, "identity").dual_norm(v, groups)
    if abs(dual - s) > 1e-9 * s:
        assert bool(np.all(x == 0.0)) == bool(dual < s), (dual, s)


@pytest.mark.xfail(strict=True, reason="general q (here 3) with a step 1e54 times the data's "
                   "scale (p = 1.5): the nested root-finders return entries up to ~1e-11 "
                   "where the prox is ~1e-107 (absolute errors far below the data's rounding, "
                   "but not relatively accurate); no solver comes near such steps (known "
                   "limitation)")
def test_group_norm_prox_general_q_at_astronomic_steps():
    from fast._prox import group_norm_prox

    groups = [np.array([0, 3, 4]), np.array([1, 2]), np.array([5, 6, 7, 8])]
    for seed in range(4):     # seed 3 fails today (seeds 0-2 give 0 or pass)
        v = np.random.default_rng(seed).normal(size=9) * 3.0
        x = group_norm_prox(v, 1.67e54, 3.0, 1.0, 1.5, groups)
        # v - x = s N(x)^(1/2) g with |g| >= 1/sqrt(m): N(x) <= (|v| sqrt(m) / s)^2 ~ 1e-106
        assert np.max(np.abs(x)) <= 1e-100, seed
