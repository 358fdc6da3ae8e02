"""fast.solve on SVM (SPEC §1, no intercept): DCD's path choice, LIBLINEAR, the SVM with
intercept handed to the SMO, warm starts outside the box. Agreement with the reference,
CSR = dense, the cache path and the warm start from its own solution: tests/test_contract.py."""
import numpy as np
import pytest

import fast
import refmodels as rm
from contract import rel
from strategies import random_binary


def test_auto_path_choice():
    """The Gram when it fits in cache_size MB, else the bounded cache (as LIBSVM)."""
    X, y, k, _ = random_binary(12, m=60, d=3, kernel="rbf")
    prob = rm.SVM(X, y, C=1.0, kernel=k)
    assert fast.solve(prob).info["path"] == "gram"
    small = fast.solve(prob, cache_size=0.01)            # 60 x 60 x 8 B = 28 kB > 10 kB
    assert small.info["path"] == "cache" and small.info["cache_slots"] < 60
    assert abs(small.objective - fast.solve(prob).objective) <= 1e-8 * (1 + small.objective)
    G, _, kp, _ = random_binary(12, m=60, d=3, kernel="precomputed")
    assert fast.solve(rm.SVM(G, y, kernel=kp), cache_size=0.01).info["path"] == "gram"


def test_matches_liblinear():
    from sklearn.svm import LinearSVC

    X, y, _, _ = random_binary(7, m=80, d=5)
    prob = rm.SVM(X, y, C=0.3)
    sol = fast.solve(prob)
    lin = LinearSVC(C=0.3, loss="hinge", dual=True, fit_intercept=False, tol=1e-10,
                    max_iter=10**6).fit(X, y)
    assert rel(sol.objective, prob.primal_value(lin.coef_.ravel())) <= 1e-7
    np.testing.assert_allclose(sol.variables["w"], lin.coef_.ravel(), atol=1e-5)


def test_intercept_goes_to_smo():
    X, y, k, _ = random_binary(3, m=30, d=3, kernel="rbf")
    prob = rm.SVM(X, y, C=1.0, kernel=k, fit_intercept=True)
    sol = fast.solve(prob)
    assert prob.certify(sol).ok
    with pytest.raises(ValueError, match="method"):
        fast.solve(prob, method="dcd")


def test_warm_start_outside_the_box():
    X, y, k, _ = random_binary(4, m=40, d=3, kernel="rbf")
    prob = rm.SVM(X, y, C=2.0, kernel=k)
    sol = fast.solve(prob)
    bad = rm.SVM(X, y, C=1.0, kernel=k)          # sol's alpha leaves [0, 1]
    if np.max(sol.variables["alpha"]) > 1.0:
        with pytest.raises(ValueError, match="warm_start"):
            fast.solve(bad, warm_start=sol)
    with pytest.raises(ValueError, match="warm_start"):
        fast.solve(prob, warm_start=rm.solution.Solution(objective=0.0, coef=None))
