"""Fast DRR / DRM solvers (fast/drr.py, fast/_prox.py) against the reference (SPEC §8;
seed 004 Algs. 2–6). APG against the reference and the certificate, CSR = dense, the warm
start from its own solution and the common bad input: tests/test_contract.py."""
from __future__ import annotations


import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sklearn.exceptions import ConvergenceWarning
from sklearn.kernel_ridge import KernelRidge

import fast
import fast.drr as fast_drr
from fast import _prox
import refmodels as rm
from fast._prox import group_norm_prox
from refmodels import base as rm_base
from refmodels.regularizers import GroupNorm, Regularizer

from contract import BAD_SCALE_MAX_ITER, QRRHO, check_refused, rel, solve_trusted
from strategies import drr_data, log_uniform


# ---------------------------------------------------------------------------------------
# the prox (independent of CVXPY: Fenchel-Young at the returned point)
# ---------------------------------------------------------------------------------------
@given(seed=st.integers(0, 2**32 - 1), qrp=st.sampled_from(QRRHO + [(1.2, 4, "identity"),
                                                                     (3, 1.5, "half_square"),
                                                                     (1, np.inf, 3.0)]),
       step=log_uniform(1e-2, 1e1), scale=log_uniform(1e-1, 1e1))
def test_prox_fenchel_young(seed, qrp, step, scale):
    """x = prox_{sR}(v) iff u = (v - x)/s is a subgradient of R at x iff R(x) + R*(u) = u^T x."""
    q, r, rho = qrp
    reg = GroupNorm(q, r, rho)
    rng = np.random.default_rng(seed)
    m = int(rng.integers(2, 12))
    g = int(rng.integers(1, 4))
    labels = np.concatenate([np.arange(min(g, m)), rng.integers(0, min(g, m), m - min(g, m))])
    groups = [np.flatnonzero(labels == c) for c in range(min(g, m))]
    V = rng.normal(size=(m, 3)) * scale
    X = group_norm_prox(V, step, reg.q, reg.r, reg.p, groups)
    for j in range(3):
        x, v = X[:, j], V[:, j]
        u = (v - x) / step
        Rx = float(reg.value(x, groups))
        if reg.p == 1:          # R* is the indicator of the dual-norm unit ball
            assert reg.dual_norm(u, groups) <= 1 + 1e-10
            Ru = 0.0
        else:
            Ru = float(reg.conjugate(u, groups))
        assert abs(Rx + Ru - u @ x) <= 1e-9 * (1 + abs(u @ x) + Rx)
        assert np.all(np.abs(x) <= np.abs(v) + 1e-15) and np.all(x * v >= 0)


def test_prox_matches_closed_forms():
    """The closed-form cases of GroupNorm.prox (no CVXPY) agree to machine precision."""
    rng = np.random.default_rng(3)
    groups = [np.array([0, 3, 4]), np.array([1, 2]), np.array([5, 6, 7, 8])]
    for q, r, rho in [(1, 1, "identity"), (2, 1, "identity"), (np.inf, 1, "identity"),
                      (2, 2, "identity"), (2, np.inf, "identity"), (2, 1, "half_square"),
                      (1, 1, 3.0), (np.inf, np.inf, "half_square")]:
        reg = GroupNorm(q, r, rho)
        assert reg.prox_is_closed_form(groups)
        for _ in range(5):
            v, s = rng.normal(size=9) * 3, float(10 ** rng.uniform(-2, 1))
            x = group_norm_prox(v, s, reg.q, reg.r, reg.p, groups)
            np.testing.assert_allclose(x, reg.prox(v, s, groups), rtol=1e-10, atol=1e-12)


@given(seed=st.integers(0, 2**32 - 1), q=st.sampled_from([1.0, 2.0, np.inf]),
       r=st.sampled_from([1.0, 2.0, np.inf]), scale=log_uniform(1e-150, 1e150),
       ties=st.booleans())
def test_prox_numpy_closed_forms_match_compiled(seed, q, r, scale, ties):
    """p = 1 with every group thresholded at s (r = 1, q = r or one group) and q in
    {1, 2, inf} is computed in numpy (no compile); the compiled path gives the same numbers:
    groups of size 1, zero columns, a step that kills every group, s = 0, any scale."""
    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 15))
    g = int(rng.integers(1, m + 1))
    labels = np.concatenate([np.arange(g), rng.integers(0, g, m - g)])
    rng.shuffle(labels)
    groups = [np.flatnonzero(labels == c) for c in range(g)]
    k = 16
    V = rng.normal(size=(m, k)) * scale
    if ties:
        V = np.round(V / scale * 2.0) * scale
    V[:, 0] = 0.0                                          # a zero column
    V[rng.integers(0, m), 1] = -0.0
    steps = scale * 10.0 ** rng.uniform(-3, 1, k)
    for j in range(5, k):          # near the level that kills a group (or a coordinate)
        vc = np.abs(V[groups[rng.integers(0, g)], j])
        level = vc.max() if q == 1.0 else (np.sqrt(np.sum(vc * vc)) if q == 2.0 else vc.sum())
        steps[j] = level * 10.0 ** rng.uniform(-0.2, 0.2)
    steps[2] = 0.0                                         # the identity
    steps[3] = 1e3 * m * (np.abs(V[:, 3]).max() + scale)   # kills every group
    perm, offs, r_eff = _prox.group_layout(groups, q, r)
    if r_eff != 1.0:
        return                                             # not a closed form of this kind
    calls = []
    compiled = _prox._compiled_prox
    try:
        _prox._compiled_prox = lambda *a: calls.append(a) or compiled(*a)
        X = group_norm_prox(V, steps, q, r, 1.0, groups)
    finally:
        _prox._compiled_prox = compiled
    assert not calls                                       # numpy only
    Xc = compiled(V, steps, perm, offs, q, r_eff, 1.0)
    tol = 1e-15 * np.abs(V).max(axis=0)
    assert np.all(np.abs(X - Xc) <= tol[None, :])
    assert np.all(X[:, 3] == 0.0) and np.all(X[:, 2] == V[:, 2]) and np.all(X[:, 0] == 0.0)
    assert np.all(X * V >= 0.0) and np.all(np.abs(X) <= np.abs(V))
    Xv = group_norm_prox(V[:, 4], steps[4], q, r, 1.0, groups)   # one column (vector in)
    assert np.abs(Xv - Xc[:, 4]).max() <= tol[4]


def test_prox_numpy_closed_forms_very_unequal_groups():
    """Groups too unequal to pad into one array (one of 200, sixty of 1): the per-group
    numpy path, the same numbers as the compiled one."""
    rng = np.random.default_rng(5)
    groups = [np.arange(60, 260)] + [np.array([i]) for i in range(60)]
    V = rng.normal(size=(260, 4))
    steps = np.array([0.5, 3.0, 10.0, 30.0])
    for q in (2.0, np.inf):
        perm, offs, r_eff = _prox.group_layout(groups, q, 1.0)
        m = int(offs[-1])            # too unequal to pad: one group at a time
        assert _prox._runs(np.arange(m, dtype=np.int64).tobytes(),
                           np.asarray(offs, np.int64).tobytes())[1] is None
        Xc = _prox._compiled_prox(V, steps, perm, offs, q, r_eff, 1.0)
        X = group_norm_prox(V, steps, q, 1.0, 1.0, groups)
        assert np.all(np.abs(X - Xc) <= 1e-15 * np.abs(V).max(axis=0)[None, :])
        assert np.any(X != 0.0) and np.any((X == 0.0) & (V != 0.0))


# ---------------------------------------------------------------------------------------
# DRR: PPA against APG (APG against the reference: tests/test_contract.py)
# ---------------------------------------------------------------------------------------
@given(data=drr_data(max_m=15), qrp=st.sampled_from(QRRHO), beta=log_uniform(1e-1, 1e1))
def test_drr_ppa_matches_apg(data, qrp, beta):
    """PPA (Alg. 4 with the regularizer's prox) reaches the same optimum as APG."""
    X, y, Xt, kernel, scale = data
    prob = rm.DRR(X, y, Xt, alpha=0.5, beta=beta, q=qrp[0], r=qrp[1], rho=qrp[2], kernel=kernel)
    if not scale.good:          # off the unit scale: the trust property (solve_trusted)
        solve_trusted(prob, scale,
                      lambda: fast.solve(prob, method="apg", max_iter=BAD_SCALE_MAX_ITER),
                      lambda: fast.solve(prob, method="ppa", max_iter=BAD_SCALE_MAX_ITER))
        return
    a, p = solve_trusted(prob, scale, lambda: fast.solve(prob, method="apg"),
                         lambda: fast.solve(prob, method="ppa"))
    assert rel(p.objective, a.objective) <= 1e-8
    assert prob.certify(p, reference=a).ok


# ---------------------------------------------------------------------------------------
# DRM: every algorithm agrees with the closed form
# ---------------------------------------------------------------------------------------
@given(data=drr_data(), alpha=st.one_of(st.just(0.0), log_uniform(1e-2, 1e1)),
       beta=log_uniform(1e-2, 1e1))
def test_drm_all_methods_agree(data, alpha, beta):
    X, y, Xt, kernel, scale = data
    prob = rm.DRM(X, y, Xt, alpha=alpha, beta=beta, kernel=kernel)
    methods = ["gd", "ppa", "apg"] + (["linear_ppa"] if kernel.is_linear else [])
    if not scale.good:          # off the unit scale: the trust property (solve_trusted)
        solve_trusted(prob, scale, lambda: fast.solve(prob),
                      *[lambda m=m: fast.solve(prob, method=m, max_iter=BAD_SCALE_MAX_ITER)
                        for m in methods])
        return
    cf = fast.solve(prob)
    assert cf.solver == "fast:closed_form"
    ref = prob.closed_form()
    scale = np.abs(ref.coef).max()
    assert np.abs(cf.coef - ref.coef).max() <= 1e-10 * scale
    np.testing.assert_allclose(cf.objective, ref.objective, rtol=1e-10, atol=1e-12)
    # gd and ppa take fixed steps 1/c with c >= sigma_max(Q_D): their residual falls by about
    # 1 - beta / (c + beta) a step (seed 004, Alg. 4), so reaching tol = 1e-10 from O(1) takes
    # ~ 23 sigma_max / beta steps. Where that exceeds their default max_iter (a 1-D cubic
    # kernel with beta = 0.01: sigma_max / beta ~ 1e5), the property is honesty, not arrival.
    sigma = np.linalg.eigvalsh(prob.Q_D)[-1]
    for method in methods:
        hopeless = (method in ("gd", "ppa")
                    and 23.0 * sigma / prob.beta > fast_drr.DEFAULT_MAX_ITER[method])
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            sol = fast.solve(prob, method=method)
        if hopeless and sol.status != "optimal":
            assert sol.status == "max_iter", method
            assert any(issubclass(w.category, ConvergenceWarning) for w in caught), method
            continue
        assert sol.status == "optimal", method
        assert np.abs(sol.coef - ref.coef).max() <= 1e-6 * scale, method
        assert rel(sol.objective, ref.objective) <= 1e-6, method
        assert prob.certify(sol, reference=ref).ok, method


def test_drm_ppa_uses_lanczos_c():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(30, 4)), np.repeat([0, 1, 2], 10)
    prob = rm.DRM(X, y, rng.normal(size=(2, 4)), alpha=0.5, beta=0.1, kernel="rbf")
    sol = fast.solve(prob, method="ppa")
    sig = np.linalg.eigvalsh(prob.Q_D)[-1]
    assert sig <= sol.info["c"] <= sig * (1 + 1e-5)
    # a c below sigma_max but above (sigma_max - beta)/2 still converges (SPEC §8)
    sol2 = fast.solve(prob, method="ppa", c=0.6 * sig)
    assert sol2.status == "optimal"
    np.testing.assert_allclose(sol2.coef, prob.closed_form().coef, rtol=0, atol=1e-7)


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_drm_alpha0_is_kernel_ridge(kernel):
    """alpha = 0: w = (K + beta I)^{-1} K_x, i.e. KernelRidge fit on targets K_x."""
    rng = np.random.default_rng(7)
    X, y = rng.normal(size=(60, 5)), rng.integers(0, 3, 60)
    Xt = rng.normal(size=(7, 5))
    beta, gamma = 0.3, 0.2
    k = rm.kernels.Linear() if kernel == "linear" else rm.kernels.RBF(gamma=gamma)
    prob = rm.DRM(X, y, Xt, alpha=0.0, beta=beta, kernel=k)
    Kx = prob.K_x
    kr = KernelRidge(alpha=beta, kernel=kernel, gamma=gamma if kernel == "rbf" else None)
    coef = kr.fit(X, Kx).dual_coef_
    kr_pre = KernelRidge(alpha=beta, kernel="precomputed").fit(prob.K, Kx).dual_coef_
    np.testing.assert_allclose(coef, kr_pre, rtol=1e-9, atol=1e-12)
    scale = np.abs(coef).max()
    for method in ("closed_form", "gd", "ppa", "apg"):
        sol = fast.solve(prob, method=method)
        assert np.abs(sol.coef - coef).max() <= 1e-6 * scale, method


def test_batches_give_the_same_result():
    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(25, 3)), rng.integers(0, 3, 25)
    y[:3] = [0, 1, 2]
    prob = rm.DRR(X, y, rng.normal(size=(7, 3)), alpha=0.2, beta=0.5, q=2, r=1,
                  rho="identity", kernel="rbf")
    a = fast.solve(prob)
    b = fast.solve(prob, batch_size=2)
    np.testing.assert_allclose(b.coef, a.coef, rtol=0, atol=1e-9)
    dprob = rm.DRM(X, y, rng.normal(size=(7, 3)), alpha=0.2, beta=0.5)
    np.testing.assert_allclose(fast.solve(dprob, batch_size=3).coef, dprob.closed_form().coef,
                               rtol=1e-12, atol=1e-14)


# ---------------------------------------------------------------------------------------
# a user's regularizer, defined here (not in the package)
# ---------------------------------------------------------------------------------------
class ElasticNet(Regularizer):
    """``R(w) = lam1 ||w||_1 + lam2/2 ||w||^2`` (no conjugate: certified by the prox residual)."""

    def __init__(self, lam1=1.0, lam2=1.0):
        self.lam1, self.lam2 = lam1, lam2

    def expr(self, w, groups):
        import cvxpy as cp
        return self.lam1 * cp.norm(w, 1) + 0.5 * self.lam2 * cp.sum_squares(w)

    def value(self, w, groups):
        return float(self.lam1 * np.abs(w).sum() + 0.5 * self.lam2 * w @ w)

    def prox(self, v, step, groups):
        return np.sign(v) * np.maximum(np.abs(v) - step * self.lam1, 0.0) / (1 + step * self.lam2)


class WeightedGroupL2(Regularizer):
    """``R(w) = sum_c sqrt(n_c) ||w^c||_2`` (group lasso with size weights)."""

    def expr(self, w, groups):
        import cvxpy as cp
        return sum(np.sqrt(len(g)) * cp.norm(w[g], 2) for g in groups)

    def value(self, w, groups):
        return float(sum(np.sqrt(len(g)) * np.linalg.norm(w[g]) for g in groups))

    def prox(self, v, step, groups):
        x = np.zeros_like(v)
        for g in groups:
            n = np.linalg.norm(v[g])
            t = step * np.sqrt(len(g))
            if n > t:
                x[g] = v[g] * (1 - t / n)
        return x


@given(data=drr_data(max_m=20), which=st.sampled_from(["enet", "wgl"]),
       lam=log_uniform(1e-1, 1e1), beta=log_uniform(1e-2, 1e1))
def test_user_regularizer_through_apg(data, which, lam, beta):
    X, y, Xt, kernel, scale = data
    reg = ElasticNet(lam1=lam, lam2=1.0 / lam) if which == "enet" else WeightedGroupL2()
    prob = rm.DRR(X, y, Xt, alpha=0.3, beta=beta, kernel=kernel, regularizer=reg)
    if not scale.good:          # off the unit scale: the trust property (solve_trusted)
        solve_trusted(prob, scale, lambda: fast.solve(prob, max_iter=BAD_SCALE_MAX_ITER),
                      prob.solve)
        return
    sol, ref = solve_trusted(prob, scale, lambda: fast.solve(prob), prob.solve)
    assert sol.status == "optimal" and sol.solver == "fast:apg"
    assert rel(sol.objective, ref.objective) <= 1e-6
    assert prob.certify(sol, reference=ref).ok


# ---------------------------------------------------------------------------------------
# the matrix-free linear path
# ---------------------------------------------------------------------------------------
def _forbid_gram(monkeypatch):
    def boom(*args, **kwargs):
        raise AssertionError("the n x n Gram was formed")
    monkeypatch.setattr(rm.kernels.Linear, "gram", boom)
    monkeypatch.setattr(rm_base.Problem, "gram", property(boom))
    for name in ("K", "H", "B", "Q_D", "L", "sigma_max"):
        monkeypatch.setattr(rm.DRR, name, property(boom))


@pytest.mark.parametrize("method", ["linear_ppa", "apg"])
def test_linear_path_never_forms_the_gram(monkeypatch, method):
    rng = np.random.default_rng(2)
    n, p = 3000, 5
    X, y = rng.normal(size=(n, p)), rng.integers(0, 3, n)
    Xt = rng.normal(size=(4, p))
    expected = np.linalg.solve(  # (Q_D + beta I) w = K_x through the p x p structure is not
        # available in closed form with alpha > 0; use alpha = 0 and the push-through identity
        X.T @ X + 2.0 * np.eye(p), X.T @ (X @ Xt.T))
    W_expected = (X @ Xt.T - X @ expected) / 2.0      # (K + beta I)^{-1} K_x = (K_x - X z)/beta
    prob = rm.DRM(X, y, Xt, alpha=0.0, beta=2.0)
    _forbid_gram(monkeypatch)
    sol = fast.solve(prob, method=method)
    assert sol.status == "optimal" and sol.info["operator"] == "linear"
    assert np.abs(sol.coef - W_expected).max() <= 1e-6 * np.abs(W_expected).max()
    prob2 = rm.DRR(X, y, Xt, alpha=0.5, beta=50.0, q=2, r=1, rho="identity")
    sol2 = fast.solve(prob2, method=method, tol=1e-8)
    assert sol2.status == "optimal"


@pytest.mark.slow
def test_linear_ppa_large_n(monkeypatch):
    """n = 20000, p = 5: Alg. 5 runs matrix-free (O(np) per iteration) and agrees with APG.

    (PPA's rate is (c - sigma_min)/(c + beta) with c ~ n here: beta is taken comparable to
    sigma_max so that the run stays short; with beta ~ 1 it needs ~1e5 iterations.)"""
    rng = np.random.default_rng(4)
    n, p = 20000, 5
    X, y = rng.normal(size=(n, p)), rng.integers(0, 4, n)
    prob = rm.DRM(X, y, rng.normal(size=(3, p)), alpha=0.5, beta=2000.0)
    _forbid_gram(monkeypatch)
    ws = rm.Workspace()
    sol = fast.solve(prob, method="linear_ppa", workspace=ws)
    assert sol.status == "optimal"
    assert "gram" not in ws.keys()
    ref = fast.solve(prob, method="apg", tol=1e-12)
    assert np.abs(sol.coef - ref.coef).max() <= 1e-6 * np.abs(ref.coef).max()


# ---------------------------------------------------------------------------------------
# early stop and bad input
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("method", ["gd", "ppa", "apg"])
def test_max_iter_warns(method):
    rng = np.random.default_rng(5)
    X, y = rng.normal(size=(20, 3)), np.repeat([0, 1], 10)
    prob = rm.DRM(X, y, rng.normal(size=(2, 3)), alpha=1.0, beta=0.01, kernel="rbf")
    with pytest.warns(ConvergenceWarning, match="tol="):
        sol = fast.solve(prob, method=method, max_iter=1)
    assert sol.status == "max_iter" and sol.n_iter == 1
    assert sol.info["residual"] > sol.info["tol"]


def test_bad_input():
    rng = np.random.default_rng(6)
    X, y = rng.normal(size=(12, 3)), np.repeat([0, 1, 2], 4)
    Xt = rng.normal(size=(2, 3))
    drm = rm.DRM(X, y, Xt, alpha=0.5, beta=1.0, kernel="rbf")
    drr = rm.DRR(X, y, Xt, alpha=0.5, beta=1.0, q=2, r=1, rho="identity")
    check_refused(drm, ({"method": "newton"}, "method"), ({"method": "linear_ppa"}, "linear_ppa"),
                  ({"method": "ppa", "c": -1.0}, "c must"),
                  ({"method": "apg", "operator": "linear"}, "operator"))
    check_refused(drr, ({"method": "closed_form"}, "method='closed_form'"),
                  ({"method": "gd"}, "method='gd'"), ({"batch_size": 0}, "batch_size"),
                  ({"eta": 1.0}, "eta"), ({"warm_start": np.zeros((3, 3))}, "warm_start"))


@pytest.mark.parametrize("alpha", [0.0, 0.7])
@pytest.mark.parametrize("kernel", ["rbf", "poly"])
def test_large_m_closed_form_by_panels_matches_lapack(alpha, kernel, monkeypatch, capsys):
    """Above ``LARGE_M`` points Q_D is built from kernel blocks without the Gram and factored
    by panels with a progress bar; the same W as the one-call LAPACK factorisation, to
    round-off (both are backward-stable Choleskys of the same matrix)."""
    r = np.random.default_rng(4)
    X = r.normal(size=(700, 5)) * (1e3 if kernel == "rbf" else 1.0)
    y = r.integers(0, 3, size=700)
    Xt = r.normal(size=(4, 5)) * (1e3 if kernel == "rbf" else 1.0)
    k = rm.kernels.RBF(1e-7) if kernel == "rbf" else rm.kernels.Polynomial(degree=2, gamma=0.1)
    p = rm.DRM(X, y, Xt, alpha=alpha, beta=0.5, kernel=k)
    ref = fast.solve(p)
    monkeypatch.setattr(fast_drr, "LARGE_M", 100)
    monkeypatch.setattr(fast_drr, "CHOLESKY_PANEL", 96)       # panels that do not divide m
    p2 = rm.DRM(X, y, Xt, alpha=alpha, beta=0.5, kernel=k)    # no Gram built yet
    s = fast.solve(p2, progress=True)
    assert s.status == "optimal"
    err = np.abs(s.coef - ref.coef).max() / np.abs(ref.coef).max()
    assert err <= 1e-10, err
    assert p2.certify(s, reference=False).ok
    if rm._progress.available():
        assert "Cholesky of Q_D" in capsys.readouterr().err
    with pytest.raises(ValueError, match="progress must be True, False or None"):
        fast.solve(p2, progress="yes")


@pytest.mark.parametrize("large_m", [10, None], ids=["panels", "one-call"])
def test_closed_form_refuses_a_q_that_is_not_positive_definite(large_m, monkeypatch):
    """Both factorisations (by panels above LARGE_M, one LAPACK call below) refuse it."""
    if large_m is not None:
        monkeypatch.setattr(fast_drr, "LARGE_M", large_m)
    X = np.ones((40, 2))                        # K = all ones (rank 1), beta 1e-300
    y = np.r_[np.zeros(20, int), np.ones(20, int)]
    p = rm.DRM(X, y, X[:2], alpha=0.0, beta=1e-300,
               kernel=rm.kernels.Polynomial(degree=1, gamma=1.0, coef0=0.0))
    with pytest.raises(rm.SolverError, match="not numerically positive definite"):
        fast.solve(p)


def test_closed_form_factor_is_lapacks():
    """The worker-thread factorisation is LAPACK's own: the same bits as SciPy's call."""
    from scipy.linalg import cho_factor, cho_solve

    r = np.random.default_rng(3)
    X, Xt = r.normal(size=(300, 4)), r.normal(size=(5, 4))
    y = np.repeat([0, 1, 2], 100)
    p = rm.DRM(X, y, Xt, alpha=0.3, beta=0.5, kernel=rm.kernels.RBF(0.4))
    sol = fast.solve(p, method="closed_form")
    Q = fast_drr.DenseQ(p).Q
    Q[np.diag_indices_from(Q)] += p.beta
    W = cho_solve(cho_factor(Q.T, lower=True), fast_drr._Kx(p, slice(0, 5)))
    assert np.array_equal(sol.coef, W)


@pytest.mark.parametrize("alpha", [0.0, 0.6])
def test_cheap_check_of_a_large_drm_never_builds_the_gram(alpha, monkeypatch):
    """Above ``AUTO_REFERENCE_MAX_M`` points the closed form's cheap check evaluates
    ``(Q_D + beta I) w`` in one pass over kernel rows: the Gram is never built (its builder
    is patched to raise), and the residual is the Gram-based one to round-off."""
    from refmodels import cheap
    from refmodels.reference import AUTO_REFERENCE_MAX_M

    m = AUTO_REFERENCE_MAX_M + 150
    r = np.random.default_rng(9)
    X, Xt = r.normal(size=(m, 4)), r.normal(size=(20, 4))
    y = r.integers(0, 4, size=m)
    p = rm.DRM(X, y, Xt, alpha=alpha, beta=0.3, kernel=rm.kernels.RBF(0.3))
    V = r.normal(size=(m, 3))
    by_gram = cheap._drm_times(rm.DRM(X[:AUTO_REFERENCE_MAX_M], y[:AUTO_REFERENCE_MAX_M],
                                      Xt, alpha=alpha, beta=0.3,
                                      kernel=rm.kernels.RBF(0.3)), V[:AUTO_REFERENCE_MAX_M])
    small = rm.DRM(X[:AUTO_REFERENCE_MAX_M], y[:AUTO_REFERENCE_MAX_M], Xt, alpha=alpha,
                   beta=0.3, kernel=rm.kernels.RBF(0.3))
    K = small.gram                                     # the small problem's path, by hand
    Q = K + alpha * np.diag(np.diag(K))
    for g in small.groups:
        Q[np.ix_(g, g)] -= (alpha / g.size) * K[np.ix_(g, g)]
    assert np.allclose(by_gram, Q @ V[:AUTO_REFERENCE_MAX_M], rtol=0, atol=1e-11)

    monkeypatch.setattr(fast_drr, "LARGE_M", 1000)     # Q_D from kernel blocks as well

    def no_gram(self):
        raise AssertionError("the Gram was built")

    monkeypatch.setattr(type(p), "gram", property(no_gram))
    blocks = cheap._drm_times(p, V)
    monkeypatch.undo()
    K = p.gram
    Q = K + alpha * np.diag(np.diag(K))
    for g in p.groups:
        Q[np.ix_(g, g)] -= (alpha / g.size) * K[np.ix_(g, g)]
    assert np.allclose(blocks, Q @ V, rtol=0, atol=1e-11 * np.abs(Q @ V).max())

    monkeypatch.setattr(fast_drr, "LARGE_M", 1000)
    monkeypatch.setattr(type(p), "gram", property(no_gram))
    p2 = rm.DRM(X, y, Xt, alpha=alpha, beta=0.3, kernel=rm.kernels.RBF(0.3))
    s = fast.solve(p2, progress=False)
    assert s.status == "optimal"
    cert = p2.certify(s, mode="cheap")
    (name, value), = cert.residuals.items()
    assert "(Q_D + beta I) w = K_x" in name and cert.ok, cert


@pytest.mark.parametrize("seed", [7146, 11026, 11030])
def test_ill_conditioned_kernel_drr_is_finished_by_admm(seed):
    """The scale sweep's draws (``validation/sweep_scales.py``, seeds 7100 and 11000) where
    APG stopped at its 50,000 iterations after 15-50 s and the reference certified: cubic
    kernels on raw features, Gram entries ~1e10-1e11, m = 13-56. APG now runs 5,000
    iterations and ADMM (:mod:`fast._drr_admm`) finishes: optimal, certified, the
    reference's objectives to 1e-8 relative. With an explicit ``max_iter`` the caller's cap
    holds and nothing follows APG."""
    from strategies import make_problem as draw

    prob, desc = draw("DRR", seed)
    assert desc["kernel"].startswith("poly(3") and desc["scale"] >= 50
    sol = fast.solve(prob)
    assert sol.status == "optimal" and sol.info["admm_iterations"] > 0
    cert = prob.certify(sol, reference=False)
    assert cert.ok, cert.failing
    np.testing.assert_allclose(sol.objective, prob.solve().objective, rtol=1e-8)
    with pytest.warns(ConvergenceWarning):
        capped = fast.solve(prob, max_iter=200)
    assert capped.status == "max_iter" and "admm_iterations" not in capped.info


def test_admm_matches_the_closed_form_on_drm_like_data():
    """:func:`fast._drr_admm.admm` alone, with the ridge regularizer ``1/2 ||w||^2`` (whose
    prox is ``v / (1 + step beta)``), Q of condition number 1e9, from ``W = 0``: the
    residual of ``(Q + beta I) Z = K_x``, computed here, meets the scaled tolerance asked,
    and ``Z`` lies within that residual over ``lambda_min(Q) + beta`` of the exact
    solution."""
    from fast import _drr_admm
    from fast.drr import _open, _scale

    class Ridge:
        beta = 0.5

        def prox(self, V, step):
            return V / (1.0 + np.asarray(step) * self.beta)

    rng = np.random.default_rng(0)
    m = 30
    Vq = np.linalg.qr(rng.standard_normal((m, m)))[0]
    Q = (Vq * np.logspace(-1, 8, m)) @ Vq.T
    Kx = Q @ rng.standard_normal((m, 3))
    Z, QZ, it, res, conv = _drr_admm.admm(
        Q, Ridge(), Kx, np.zeros((m, 3)), 1e-12, _scale,
        lambda r, sc, i, W: _open(r, sc, 1e-12, "admm", i, W), 5000)
    assert conv and res <= 1e-12 and it < 5000
    r = np.linalg.norm((Q + 0.5 * np.eye(m)) @ Z - Kx, axis=0)
    assert np.all(r <= 1e-12 * _scale(Kx, Q @ Z) * (1.0 + 1e-6))
    exact = np.linalg.solve(Q + 0.5 * np.eye(m), Kx)
    assert np.all(np.linalg.norm(Z - exact, axis=0) <= 1.01 * r / (0.1 + 0.5) + 1e-14)
