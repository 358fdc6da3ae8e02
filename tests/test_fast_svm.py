"""fast.solve on SVM (SPEC §1, no intercept): DCD vs the reference, on every path."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, strategies as st

import fast
import refmodels as rm
from strategies import binary_data, log_uniform, random_binary

REL = 1e-6      # relative objective agreement with the reference (CVXPY, Clarabel)


def _rel(a, b):
    return abs(a - b) / (1.0 + abs(b))


@given(data=binary_data(), C=log_uniform(1e-2, 1e2))
def test_dcd_matches_reference_and_certifies(data, C):
    X, y, kernel, _ = data
    prob = rm.SVM(X, y, C=C, kernel=kernel)
    sol = fast.solve(prob)
    ref = prob.solve()
    assert sol.status == "optimal" and sol.form == "fast" and sol.solver == "fast:dcd"
    assert _rel(sol.objective, ref.objective) <= REL
    # the objective is the canonical primal at the returned point
    assert _rel(sol.objective, prob.primal_value(prob.w_from_coef(sol.coef))) <= 1e-9
    cert = prob.certify(sol, reference=ref)
    assert cert.ok, str(cert)
    assert sol.intercept == 0.0
    assert np.all(sol.variables["alpha"] >= 0) and np.all(sol.variables["alpha"] <= C)
    expected = "linear" if kernel.is_linear else "gram"
    assert sol.info["path"] == expected


@given(data=binary_data(kernels=("rbf", "poly")), C=log_uniform(1e-2, 1e2))
def test_bounded_cache_path(data, C):
    """A tiny cache_size forces kernel rows on demand (2 slots): same optimum."""
    X, y, kernel, _ = data
    prob = rm.SVM(X, y, C=C, kernel=kernel)
    sol = fast.solve(prob, path="cache", cache_size=1e-4)
    assert sol.info["path"] == "cache" and 2 <= sol.info["cache_slots"] <= max(2, prob.m)
    gram = fast.solve(prob, path="gram")
    # two runs stopped at |PG| <= 1e-8: primal values agree to the certificate's accuracy
    assert _rel(sol.objective, gram.objective) <= 1e-7
    assert prob.certify(sol).ok


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


@given(seed=st.integers(0, 2**31), C=log_uniform(1e-2, 1e2), density=st.floats(0.05, 0.6))
def test_sparse_csr_matches_dense(seed, C, density):
    rng = np.random.default_rng(seed)
    m, d = int(rng.integers(5, 40)), int(rng.integers(1, 30))
    Xs = sp.random(m, d, density=density, format="csr", random_state=rng)
    y = np.where(rng.random(m) < 0.5, 1, -1)
    y[0], y[-1] = 1, -1
    dense = fast.solve(rm.SVM(Xs.toarray(), y, C=C), random_state=1)
    prob = rm.SVM(Xs, y, C=C)
    assert sp.issparse(prob.X)
    sparse = fast.solve(prob, random_state=1)
    assert sparse.info["path"] == "linear"
    assert _rel(sparse.objective, dense.objective) <= 1e-9
    assert prob.certify(sparse).ok


def test_matches_liblinear():
    from sklearn.svm import LinearSVC

    X, y, _, _ = random_binary(7, m=80, d=5)
    prob = rm.SVM(X, y, C=0.3)
    sol = fast.solve(prob)
    lin = LinearSVC(C=0.3, loss="hinge", dual=True, fit_intercept=False, tol=1e-10,
                    max_iter=10**6).fit(X, y)
    assert _rel(sol.objective, prob.primal_value(lin.coef_.ravel())) <= 1e-7
    np.testing.assert_allclose(sol.variables["w"], lin.coef_.ravel(), atol=1e-5)


def test_intercept_goes_to_smo():
    X, y, k, _ = random_binary(3, m=30, d=3, kernel="rbf")
    prob = rm.SVM(X, y, C=1.0, kernel=k, fit_intercept=True)
    sol = fast.solve(prob)
    assert prob.certify(sol).ok
    with pytest.raises(ValueError, match="method"):
        fast.solve(prob, method="dcd")


def test_warm_start():
    X, y, k, _ = random_binary(4, m=40, d=3, kernel="rbf")
    prob = rm.SVM(X, y, C=2.0, kernel=k)
    sol = fast.solve(prob)
    again = fast.solve(prob, warm_start=sol)
    assert again.n_iter <= 2
    assert _rel(again.objective, sol.objective) <= 1e-10
    bad = rm.SVM(X, y, C=1.0, kernel=k)          # sol's alpha leaves [0, 1]
    if np.max(sol.variables["alpha"]) > 1.0:
        with pytest.raises(ValueError, match="warm_start"):
            fast.solve(bad, warm_start=sol)
    with pytest.raises(ValueError, match="warm_start"):
        fast.solve(prob, warm_start=rm.solution.Solution(objective=0.0, coef=None))
