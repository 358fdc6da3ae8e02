"""The shared DCD (fast/_dcd.py): shrinking, reproducibility, stopping, arguments."""
import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

import fast
import refmodels as rm
from contract import rel
from strategies import random_binary


def _projected_gradient_svm(prob, alpha):
    """Independent check: |PG| of the SVM dual at alpha, from scratch (NumPy)."""
    Q = prob.y[:, None] * prob.gram * prob.y[None, :]
    g = Q @ alpha - 1.0
    pg = np.where(alpha <= 0, np.minimum(g, 0), np.where(alpha >= prob.C, np.maximum(g, 0), g))
    return np.max(np.abs(pg))


def _overlapping(seed, m=400, d=5):
    """Heavily overlapping classes: most multipliers at a bound (0 or C)."""
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(m) < 0.5, 1, -1)
    X = rng.normal(size=(m, d)) + 0.3 * y[:, None]
    return X, y


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_shrinking_agrees_with_no_shrinking_and_rechecks(kernel, seed):
    """Regression test for the shrinking thresholds (LIBLINEAR's PGmax_old / PGmin_old).

    With many bounded variables, shrinking removes most of them; if the thresholds were
    mixed up (a lower-bound variable compared with PGmin, or PGmax_old taken from PGmin_new)
    variables that still violate KKT would be shrunk and the solver would stop early on the
    active set. The unshrink-and-recheck must happen (counter in info) and the final point
    must satisfy |PG| <= tol on *all* variables, checked here independently, and agree with
    the run without shrinking.
    """
    X, y = _overlapping(seed)
    k = rm.kernels.RBF(gamma=0.05) if kernel == "rbf" else rm.kernels.Linear()
    prob = rm.SVM(X, y, C=1.0 if kernel == "rbf" else 10.0, kernel=k)
    # polish=False: the coordinate descent alone (a Newton polish restarts the active set)
    on = fast.solve(prob, method="dcd", shrinking=True, polish=False, random_state=seed)
    off = fast.solve(prob, method="dcd", shrinking=False, polish=False, random_state=seed)
    default = fast.solve(prob, method="dcd", random_state=seed)
    alpha = on.variables["alpha"]
    at_bound = np.mean((alpha == 0) | (alpha == prob.C))
    assert at_bound > 0.5                                # the instance exercises shrinking
    assert on.info["n_unshrink"] >= 1                    # the recheck happened
    assert off.info["n_unshrink"] == 0
    assert _projected_gradient_svm(prob, alpha) <= 10 * on.info["tol"]
    assert _projected_gradient_svm(prob, off.variables["alpha"]) <= 10 * off.info["tol"]
    assert rel(on.objective, off.objective) <= 1e-9
    np.testing.assert_allclose(alpha, off.variables["alpha"], atol=1e-5 * prob.C)
    assert rel(default.objective, off.objective) <= 1e-9
    assert _projected_gradient_svm(prob, default.variables["alpha"]) <= 10 * on.info["tol"]


@pytest.mark.parametrize("family", ["SVM", "ODM", "ODML"])
def test_reproducible_and_seed_independent_optimum(family):
    X, y, k, _ = random_binary(8, m=60, d=4, kernel="rbf")
    make = {"SVM": lambda: rm.SVM(X, y, C=3.0, kernel=k),
            "ODM": lambda: rm.ODM(X, y, lam=5.0, mu=0.4, theta=0.3, kernel=k),
            "ODML": lambda: rm.ODML(X, y, lam=5.0, mu1=1.0, mu2=0.5, kernel=k)}[family]
    prob = make()
    a = fast.solve(prob, random_state=11)
    b = fast.solve(make(), random_state=11)
    c = fast.solve(prob, random_state=12)
    assert a.objective == b.objective
    np.testing.assert_array_equal(a.coef, b.coef)
    assert rel(c.objective, a.objective) <= 1e-9
    gen = fast.solve(prob, random_state=np.random.default_rng(5))
    assert rel(gen.objective, a.objective) <= 1e-9


@pytest.mark.parametrize("family", ["SVM", "ODM", "ODML", "LDM"])
def test_max_iter_status_and_warning(family):
    X, y, k, _ = random_binary(9, m=80, d=3, kernel="rbf")
    prob = {"SVM": rm.SVM(X, y, C=10.0, kernel=k),
            "ODM": rm.ODM(X, y, lam=50.0, mu=0.4, theta=0.3, kernel=k),
            "ODML": rm.ODML(X, y, lam=50.0, mu1=1.0, mu2=0.5, kernel=k),
            "LDM": rm.LDM(X, y, C=1.0, lam1=1.0, lam2=0.5, kernel=k)}[family]
    with pytest.warns(ConvergenceWarning, match=r"tol=\d\.\d{3}e-\d\d") as rec:
        sol = fast.solve(prob, max_iter=1)
    msg = str(rec[0].message)
    assert f"tol={sol.info['tol']:.3e}" in msg and f"residual {sol.info['residual']:.3e}" in msg
    assert sol.status == "max_iter" and sol.n_iter == 1
    assert sol.info["residual"] > 0
    # the objective is still the canonical primal at the returned point
    assert abs(sol.objective - prob.primal_value(prob.w_from_coef(sol.coef))) <= 1e-9 * (
        1 + abs(sol.objective))


def test_bad_arguments():
    """The DCD's own options and the stochastic methods' (tol, max_iter, random_state and
    unknown options for every family: tests/test_contract.py)."""
    X, y, _, _ = random_binary(10, m=20, d=3)
    prob = rm.SVM(X, y, C=1.0)
    for bad in ("newton", 3, "svrg"):
        with pytest.raises(ValueError, match="method"):
            fast.solve(prob, method=bad)
    with pytest.raises(ValueError, match="cache_size"):
        fast.solve(prob, cache_size=0)
    with pytest.raises(ValueError, match="shrinking"):
        fast.solve(prob, shrinking="yes")
    odm = rm.ODM(X, y, lam=1.0, mu=0.5, theta=0.1)
    for bad in (0, -1):
        with pytest.raises(ValueError, match="max_iter"):
            fast.solve(odm, method="svrg", max_iter=bad)
    with pytest.raises(ValueError, match="tol"):
        fast.solve(rm.ODML(X, y, lam=1.0), method="asgd", tol=0)


def test_zero_feature_rows():
    """A sample with phi(x_i) = 0 has Q_ii = 0: the step goes to the bound (SPEC §2)."""
    X, y, _, _ = random_binary(11, m=20, d=3)
    X[3] = 0.0
    X[7] = 0.0
    for prob in (rm.SVM(X, y, C=2.0), rm.ODML(X, y, lam=4.0, mu1=0.5, mu2=0.2),
                 rm.ODM(X, y, lam=4.0, mu=0.5, theta=0.1)):
        for path in ("linear", "gram"):
            sol = fast.solve(prob, path=path)
            assert sol.status == "optimal"
            assert prob.certify(sol).ok, str(prob.certify(sol))


def test_active_set_qp_lowrank_matches_the_dense_active_set():
    """:func:`fast._polish.active_set_qp_lowrank` (``Q = Z Z^T`` of rank r < n) reaches the
    KKT point of the box QP from a cold start (the dense :func:`active_set_qp`, run until
    it stops moving, reaches the same objective)."""
    from fast._polish import active_set_qp, active_set_qp_lowrank

    rng = np.random.default_rng(3)
    n, r, C = 80, 5, 50.0
    Z = rng.standard_normal((n, r))
    g0, x0 = -np.ones(n), np.zeros(n)
    lo, hi = np.zeros(n), np.full(n, C)
    x, change, steps = active_set_qp_lowrank(Z, g0, x0, lo, hi)
    g = Z @ (Z.T @ x) + g0
    pg = np.where(x <= lo, np.minimum(g, 0), np.where(x >= hi, np.maximum(g, 0), g))
    assert steps > 0 and np.max(np.abs(pg)) < 1e-9
    assert np.all(x >= lo) and np.all(x <= hi)
    xd, total = x0, 0.0
    for _ in range(20):
        gd = g0 + Z @ (Z.T @ (xd - x0))
        xd, step = active_set_qp(Z @ Z.T, gd, xd, lo, hi)
        total += step
        if step == 0.0:
            break
    assert change == pytest.approx(total, rel=1e-9)
    # a budget below one step leaves x0 unchanged
    x1, c1, s1 = active_set_qp_lowrank(Z, g0, x0, lo, hi, budget=1.0)
    assert s1 == 0 and c1 == 0.0 and np.array_equal(x1, x0)
