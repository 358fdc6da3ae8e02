"""fast.solve on SVM (SPEC §1, no intercept): DCD's path choice, LIBLINEAR, the SVM with
intercept handed to the SMO, warm starts outside the box. Agreement with the reference,
CSR = dense, the cache path and the warm start from its own solution: tests/test_contract.py."""
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

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


def test_svm_intercept_raw_scale_is_honest():
    """A 1-D linear SVM with an intercept on features ~1e5 (Gram ~1e10; found by the
    every-scale draws of tests/test_fast_svmm.py): the SMO's own dual value gave a gap of
    2.6e-12 where the certificate's is 1.07e-6, and the status said ``optimal``. Now the
    full certificate decides on badly scaled data for the linear kernel too: either the
    point certifies or the status says otherwise, with a ConvergenceWarning."""
    x = [99954.63698308, 100013.99455658, 100111.50346859, 100030.5576802, 99904.49362464,
         99886.67101195, 99933.07096701, 100000.86306192, 99877.88173122, 99957.92599209,
         99962.92104858, 100075.24100889, 100000.30946182, 100056.69372133, 99913.46068863,
         100008.19508706, 100057.24109658, 99954.63698308, 100013.99455658, 100111.50346859,
         100030.5576802, 99904.49362464]
    y = np.array([1, -1, 1, 1, -1, -1, -1, -1, -1, -1, -1, 1, -1, 1, -1, 1, -1, -1, 1, -1,
                  -1, -1])
    prob = rm.SVM(np.array(x)[:, None], y, C=7.943282347242816, kernel="linear",
                  fit_intercept=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sol = fast.solve(prob)
    cert = prob.certify(sol, reference=False)
    if sol.status == "optimal":
        assert cert.ok, cert
    else:
        assert any(issubclass(w.category, ConvergenceWarning) for w in caught)
