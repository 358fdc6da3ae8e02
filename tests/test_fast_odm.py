"""fast.solve on ODM (SPEC §4): DCD (kernel, cache, linear, sparse) and SVRG."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, strategies as st

import fast
import refmodels as rm
from strategies import binary_data, log_uniform, random_binary

REL = 1e-6


def _rel(a, b):
    return abs(a - b) / (1.0 + abs(b))


hyper = dict(lam=log_uniform(1e-2, 1e2), mu=log_uniform(1e-2, 1.0),
             theta=st.sampled_from([0.0, 0.1, 0.5, 0.9]))


@given(data=binary_data(), **hyper)
def test_dcd_matches_reference_and_certifies(data, lam, mu, theta):
    X, y, kernel, _ = data
    prob = rm.ODM(X, y, lam=lam, mu=mu, theta=theta, kernel=kernel)
    sol = fast.solve(prob)
    ref = prob.solve()
    assert sol.status == "optimal"
    assert _rel(sol.objective, ref.objective) <= REL
    assert _rel(sol.objective, prob.primal_value(prob.w_from_coef(sol.coef))) <= 1e-9
    cert = prob.certify(sol, reference=ref)
    assert cert.ok, str(cert)
    z, b = sol.variables["zeta"], sol.variables["beta"]
    assert np.all(z >= 0) and np.all(b >= 0)
    np.testing.assert_array_equal(sol.coef, prob.y * (z - b))       # nu = Y (zeta - beta)


@given(data=binary_data(kernels=("rbf", "poly")), **hyper)
def test_bounded_cache_path(data, lam, mu, theta):
    X, y, kernel, _ = data
    prob = rm.ODM(X, y, lam=lam, mu=mu, theta=theta, kernel=kernel)
    sol = fast.solve(prob, path="cache", cache_size=1e-4)
    assert sol.info["path"] == "cache"
    gram = fast.solve(prob, path="gram")
    # two runs stopped at |PG| <= 1e-8: primal values agree to the certificate's accuracy
    assert _rel(sol.objective, gram.objective) <= 1e-7
    assert prob.certify(sol).ok


@given(seed=st.integers(0, 2**31), lam=log_uniform(1e-2, 1e2), density=st.floats(0.05, 0.6))
def test_sparse_csr_matches_dense(seed, lam, density):
    rng = np.random.default_rng(seed)
    m, d = int(rng.integers(5, 40)), int(rng.integers(1, 30))
    Xs = sp.random(m, d, density=density, format="csr", random_state=rng)
    y = np.where(rng.random(m) < 0.5, 1, -1)
    y[0], y[-1] = 1, -1
    dense = fast.solve(rm.ODM(Xs.toarray(), y, lam=lam, mu=0.3, theta=0.2), random_state=1)
    prob = rm.ODM(Xs, y, lam=lam, mu=0.3, theta=0.2)
    sparse = fast.solve(prob, random_state=1)        # same permutations as the dense run
    assert _rel(sparse.objective, dense.objective) <= 1e-9
    assert prob.certify(sparse).ok
    # SVRG on CSR as well
    sv = fast.solve(prob, method="svrg", random_state=0, tol=1e-9, max_iter=10**5)
    assert _rel(sv.objective, dense.objective) <= 1e-8


def _large_linear(seed=5, m=2000, d=10):
    X, y, _, _ = random_binary(seed, m=m, d=d)
    return X, y


def test_svrg_approaches_optimum():
    """SVRG (seed 002 Alg. 2) on m = 2000, d = 10: relative objective gap <= 1e-8 at the
    default gradient tolerance 1e-6, and the certificate (stationarity = ||grad f_O||) holds."""
    X, y = _large_linear()
    prob = rm.ODM(X, y, lam=1.0, mu=0.5, theta=0.2)
    dcd = fast.solve(prob)
    for snapshot in ("random", "last"):
        sol = fast.solve(prob, method="svrg", random_state=0, snapshot=snapshot)
        assert sol.status == "optimal" and sol.info["grad_norm"] <= 1e-6
        assert sol.solver == "fast:svrg" and sol.coef is None
        assert _rel(sol.objective, dcd.objective) <= 1e-8
        assert prob.certify(sol, reference=dcd).ok
    # reproducible
    a = fast.solve(prob, method="svrg", random_state=3)
    b = fast.solve(prob, method="svrg", random_state=3)
    np.testing.assert_array_equal(a.variables["w"], b.variables["w"])


def test_svrg_max_iter_warns():
    X, y = _large_linear(m=300)
    prob = rm.ODM(X, y, lam=10.0, mu=0.5, theta=0.2)
    with pytest.warns(Warning, match="tol"):
        sol = fast.solve(prob, method="svrg", max_iter=1, tol=1e-12)
    assert sol.status == "max_iter" and sol.info["residual"] > 1e-12


def test_methods_and_kernels():
    X, y, k, _ = random_binary(1, m=20, d=3, kernel="rbf")
    prob = rm.ODM(X, y, lam=1.0, mu=0.5, theta=0.1, kernel=k)
    with pytest.raises(ValueError, match="method"):
        fast.solve(prob, method="svrg")
    with pytest.raises(ValueError, match="method"):
        fast.solve(prob, method="asgd")
    with pytest.raises(ValueError, match="path"):
        fast.solve(prob, path="linear")


def test_warm_start_and_box():
    X, y, _, _ = random_binary(2, m=30, d=4)
    prob = rm.ODM(X, y, lam=2.0, mu=0.5, theta=0.3)
    sol = fast.solve(prob)
    again = fast.solve(prob, warm_start=sol)
    assert again.n_iter <= 2 and _rel(again.objective, sol.objective) <= 1e-10
    neg = rm.solution.Solution(objective=0.0, coef=None,
                               variables={"zeta": -np.ones(30), "beta": np.zeros(30)})
    with pytest.raises(ValueError, match="box"):
        fast.solve(prob, warm_start=neg)
