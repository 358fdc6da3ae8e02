"""fast.solve on ODML and LDM (SPEC §2–3): DCD (Woodbury H; whitened linear path) and ASGD."""
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, strategies as st

import fast
import refmodels as rm
from fast import _sgd
from strategies import binary_data, log_uniform, random_binary

REL = 1e-6


def _rel(a, b):
    return abs(a - b) / (1.0 + abs(b))


mu1s = st.one_of(st.just(0.0), log_uniform(1e-3, 1e2))
mu2s = st.one_of(st.just(0.0), log_uniform(1e-3, 1e1))


def _check(prob, sol):
    ref = prob.solve()
    assert sol.status == "optimal"
    assert _rel(sol.objective, ref.objective) <= REL
    assert _rel(sol.objective, prob.primal_value(prob.w_from_coef(sol.coef))) <= 1e-9
    cert = prob.certify(sol, reference=ref)
    assert cert.ok, str(cert)
    if "w" in sol.variables:      # linear path: w = M^{-1} X^T Y v agrees with X^T nu
        w = prob.w_from_coef(sol.coef)
        assert np.linalg.norm(w - sol.variables["w"]) <= 1e-8 * (1 + np.linalg.norm(w))


@given(data=binary_data(), lam=log_uniform(1e-2, 1e2), mu1=mu1s, mu2=mu2s)
def test_odml_dcd(data, lam, mu1, mu2):
    X, y, kernel, _ = data
    prob = rm.ODML(X, y, lam=lam, mu1=mu1, mu2=mu2, kernel=kernel)
    sol = fast.solve(prob)
    assert "alpha" in sol.variables
    whiten = kernel.is_linear and (mu1 == 0 or X.shape[1] <= X.shape[0])
    assert sol.info["path"] == ("linear" if whiten else "gram")
    _check(prob, sol)


@given(data=binary_data(), C=log_uniform(1e-3, 1e1), lam1=mu1s, lam2=mu2s)
def test_ldm_dcd(data, C, lam1, lam2):
    X, y, kernel, _ = data
    prob = rm.LDM(X, y, C=C, lam1=lam1, lam2=lam2, kernel=kernel)
    sol = fast.solve(prob)
    assert np.all(sol.variables["beta"] <= C) and np.all(sol.variables["beta"] >= 0)
    _check(prob, sol)


@given(data=binary_data(kernels=("linear",)), lam=log_uniform(1e-2, 1e2), mu1=mu1s, mu2=mu2s)
def test_linear_whitened_path_equals_gram_path(data, lam, mu1, mu2):
    X, y, kernel, _ = data
    prob = rm.ODML(X, y, lam=lam, mu1=mu1, mu2=mu2)
    lin, gram = fast.solve(prob, path="linear"), fast.solve(prob, path="gram")
    assert _rel(lin.objective, gram.objective) <= 1e-7


@given(seed=st.integers(0, 2**31), mu1=mu1s, density=st.floats(0.05, 0.6))
def test_sparse_csr_matches_dense(seed, mu1, density):
    rng = np.random.default_rng(seed)
    m, d = int(rng.integers(5, 40)), int(rng.integers(1, 30))
    Xs = sp.random(m, d, density=density, format="csr", random_state=rng)
    y = np.where(rng.random(m) < 0.5, 1, -1)
    y[0], y[-1] = 1, -1
    dense = fast.solve(rm.ODML(Xs.toarray(), y, lam=3.0, mu1=mu1, mu2=0.2), random_state=1)
    prob = rm.ODML(Xs, y, lam=3.0, mu1=mu1, mu2=0.2)
    sparse = fast.solve(prob, random_state=1)        # same permutations as the dense run
    assert _rel(sparse.objective, dense.objective) <= 1e-9
    assert prob.certify(sparse).ok


def test_ldm_is_odml_reparametrised():
    X, y, k, _ = random_binary(6, m=40, d=3, kernel="rbf")
    m, C, lam1, lam2 = 40, 0.05, 0.7, 0.3
    ldm = fast.solve(rm.LDM(X, y, C=C, lam1=lam1, lam2=lam2, kernel=k))
    odml = fast.solve(rm.ODML(X, y, lam=m * C, mu1=2 * lam1, mu2=lam2, kernel=k))
    assert _rel(ldm.objective, odml.objective) <= 1e-9
    np.testing.assert_allclose(ldm.variables["beta"], odml.variables["alpha"], atol=1e-7)


def test_asgd_approaches_optimum_and_is_reproducible():
    """ASGD (seed 001 Alg. 2) on m = 2000, d = 10, 100 epochs: relative objective gap
    <= 1e-3 against the certified DCD optimum (observed ~1e-4)."""
    X, y, _, _ = random_binary(5, m=2000, d=10)
    for prob in (rm.ODML(X, y, lam=1.0, mu1=0.5, mu2=0.2),
                 rm.LDM(X, y, C=0.005, lam1=1.0, lam2=0.5)):
        dcd = fast.solve(prob)
        with pytest.warns(Warning, match="tol"):        # honest: a subgradient norm > tol
            sol = fast.solve(prob, method="asgd", random_state=0, max_iter=100)
        assert sol.status == "max_iter" and sol.coef is None and sol.solver == "fast:asgd"
        assert sol.n_iter == 100
        assert sol.objective >= dcd.objective - 1e-12 * abs(dcd.objective)
        assert _rel(sol.objective, dcd.objective) <= 1e-3
        assert _rel(sol.objective, prob.primal_value(sol.variables["w"])) <= 1e-12
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = fast.solve(prob, method="asgd", random_state=4, max_iter=3)
        b = fast.solve(prob, method="asgd", random_state=4, max_iter=3)
    np.testing.assert_array_equal(a.variables["w"], b.variables["w"])


def test_asgd_sparse_and_warm_start():
    import warnings

    X, y, _, _ = random_binary(13, m=200, d=6)
    X[np.abs(X) < 0.7] = 0.0
    dense = rm.LDM(X, y, C=0.01, lam1=0.5, lam2=0.2)
    sparse = rm.LDM(sp.csr_matrix(X), y, C=0.01, lam1=0.5, lam2=0.2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = fast.solve(dense, method="asgd", random_state=2, max_iter=5)
        b = fast.solve(sparse, method="asgd", random_state=2, max_iter=5)
    np.testing.assert_allclose(a.variables["w"], b.variables["w"], rtol=1e-10, atol=1e-12)
    # DCD warm start from a previous dual solution
    sol = fast.solve(dense)
    again = fast.solve(dense, warm_start=sol)
    assert again.n_iter <= 2 and _rel(again.objective, sol.objective) <= 1e-10
    with pytest.raises(ValueError, match="warm_start"):
        fast.solve(rm.LDM(X, y, C=0.001, lam1=0.5, lam2=0.2), warm_start=sol)


def test_asgd_samples_independently_with_replacement():
    """SPEC §3: i and j independent and uniform, i == j allowed (P = 1/m)."""
    m, n = 5, 200000
    pairs = _sgd.draw_pairs(m, n, seed=0)
    joint = np.zeros((m, m))
    np.add.at(joint, (pairs[:, 0], pairs[:, 1]), 1.0)
    joint /= n
    # every cell 1/m^2 (diagonal included) within ~5 standard errors
    se = np.sqrt((1 / m**2) * (1 - 1 / m**2) / n)
    assert np.max(np.abs(joint - 1 / m**2)) <= 5 * se
    assert abs(np.trace(joint) - 1 / m) <= 5 * np.sqrt((1 / m) * (1 - 1 / m) / n)


def test_methods_and_kernels():
    X, y, k, _ = random_binary(1, m=20, d=3, kernel="rbf")
    prob = rm.ODML(X, y, lam=1.0, mu1=0.5, mu2=0.1, kernel=k)
    with pytest.raises(ValueError, match="method"):
        fast.solve(prob, method="asgd")
    with pytest.raises(ValueError, match="method"):
        fast.solve(prob, method="svrg")
    with pytest.raises(ValueError, match="path"):
        fast.solve(prob, path="cache")
