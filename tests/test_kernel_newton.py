"""ODM's kernel primal Newton (fast/_kernel_newton.py, ``method="newton"``):
agreement with the reference, certification at every scale and up to lam = 2^20, the
exact line search, the safeguard on an instance where plain Newton steps do not
converge, warm starts, the DCD fallback, ``method="auto"`` and bad input."""
import warnings

import numpy as np
import pytest

import fast
import refmodels as rm
from contract import check_refused, rel
from fast import _kernel_newton as KN
from fast import _kernel_newton_piece as KNP
from strategies import random_binary


def _prob(seed, kernel, lam, m=40, d=3, scale=1.0, mu=0.8, theta=0.2):
    X, y, k, Xraw = random_binary(seed, m=m, d=d, kernel=kernel)
    if scale != 1.0:
        X = Xraw * scale
    return rm.ODM(X, y, lam=lam, mu=mu, theta=theta, kernel=k)


@pytest.mark.parametrize("kernel", ["rbf", "poly", "precomputed"])
@pytest.mark.parametrize("lam", [1.0, 2.0**6, 2.0**12])
def test_agrees_with_reference_and_certifies(kernel, lam):
    prob = _prob(3, kernel, lam, m=35)
    ref = prob.solve()
    sol = fast.solve(prob, method="newton")
    assert sol.status == "optimal" and sol.solver == "fast:newton"
    assert rel(sol.objective, ref.objective) <= 1e-7
    assert prob.certify(sol, reference=ref).ok
    # the multipliers are those of eq. 14 (or the piece's, equal at the optimum)
    assert np.all(sol.variables["zeta"] >= 0) and np.all(sol.variables["beta"] >= 0)
    assert abs(sol.info["dual_objective"] - sol.objective) <= 1e-7 * (1 + abs(sol.objective))


@pytest.mark.parametrize("scale", [1e-3, 1.0, 1e3])
@pytest.mark.parametrize("kernel", ["rbf", "poly"])
@pytest.mark.parametrize("lk", [0, 8, 16, 20])
def test_certified_at_every_scale_up_to_weak_regularization(scale, kernel, lk):
    prob = _prob(11 + lk, kernel, 2.0**lk, m=60, d=4, scale=scale)
    if kernel == "poly" and scale == 1e3:
        if lk != 20:
            pytest.skip("one weak-regularization point of the badly scaled case suffices")
        # kernel values up to 1e13-1e18 against a shift a ~ 10: K_SS + A_S is not SPD in
        # floating point, the DCD crawls too; the honest outcome is a scale warning
        with pytest.warns(Warning, match="scale"):
            sol = fast.solve(prob, method="newton", max_iter=3)
        assert sol.status != "optimal" and sol.info["fallback"] == "dcd"
        return
    with warnings.catch_warnings():
        warnings.simplefilter("error")            # no ConvergenceWarning
        sol = fast.solve(prob, method="newton")
    assert sol.status == "optimal", sol.info
    assert prob.certify(sol, reference=False).ok


def test_line_search_is_exact():
    """The sorted-breakpoint search against a fine grid of the 1-D piecewise quadratic."""
    prob = _prob(5, "rbf", 2.0**8, m=50)
    G, y, mu, th = prob.gram, prob.y, prob.mu, prob.theta
    c = prob.lam / (prob.m * (1 - th) ** 2)
    rng = np.random.default_rng(0)

    def f(b):
        xi, eps = KN.loss_terms(y * (G @ b), 1 - th, 1 + th, mu)
        return 0.5 * b @ G @ b + c * (xi @ xi + mu * eps @ eps)

    for _ in range(5):
        beta = rng.normal(size=prob.m)
        o = G @ beta
        # a descent direction: minus the (coefficient-space) gradient's preconditioned form
        xi, eps = KN.loss_terms(y * o, 1 - th, 1 + th, mu)
        delta = -(beta - y * 2 * c * (xi - mu * eps))
        q = G @ delta
        t, d0 = KN.line_search(o, q, y, beta, delta, delta @ o, delta @ q, c, mu, 1 - th,
                               1 + th)
        assert d0 < 0 and t > 0
        ts = np.linspace(0, 3 * t, 3001)
        vals = [f(beta + s * delta) for s in ts]
        assert f(beta + t * delta) <= min(vals) + 1e-10 * (1 + abs(min(vals)))


def _nonconverging_plain_newton():
    """An instance where plain (undamped) Newton steps do not converge in 40 steps:
    300 points, 4 features, RBF gamma = 0.5, lam = 2^20 (found by a seed scan)."""
    rng = np.random.default_rng(10)
    m = 300
    X = rng.normal(size=(m, 4))
    y = np.where(X[:, 0] + 0.8 * rng.normal(size=m) > 0, 1, -1)
    return rm.ODM(X, y, lam=2.0**20, mu=0.8, theta=0.2, kernel=rm.kernels.RBF(gamma=0.5))


def test_safeguard_where_plain_newton_does_not_converge():
    prob = _nonconverging_plain_newton()
    G = prob.gram
    c = prob.lam / (prob.m * (1 - prob.theta) ** 2)
    args = (lambda v: G @ v, lambda i: G[np.ix_(i, i)], prob.y, c, prob.mu, prob.theta)
    *_, plain = KN.minimize(*args, max_iter=40, line_search_on=False)
    assert not plain["converged"]
    b1, *_, safe = KN.minimize(*args, K_cols=lambda i: G[:, i])
    assert safe["converged"]
    # the Woodbury updates of the last factor (few points changed) against fresh
    # factorisations at every step: the same optimum
    assert any(s.startswith("update") for s in safe["solves"])
    b2, *_, fresh = KN.minimize(*args)
    assert fresh["converged"] and not any(s.startswith("update") for s in fresh["solves"])
    assert np.linalg.norm(G @ (b1 - b2)) <= 1e-6 * (1 + np.linalg.norm(G @ b2))
    # the line search makes f decrease at every step
    sol = fast.solve(prob, method="newton")
    assert sol.status == "optimal" and prob.certify(sol, reference=False).ok
    assert sol.info.get("fallback") is None


def _lowrank_prob(lam, gamma=0.05, m=240, seed=21):
    """A smooth RBF kernel on 2-D points: its Gram is within a few dozen columns of a
    low-rank matrix at the scale of the shift (as spambase's)."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(m, 2))
    y = np.where(X[:, 0] - X[:, 1] + 0.3 * rng.normal(size=m) > 0, 1, -1)
    return rm.ODM(X, y, lam=lam, mu=0.8, theta=0.2, kernel=rm.kernels.RBF(gamma=gamma))


def test_fast_rbf_gram_matches_the_reference_gram():
    from fast import _kernels as K

    prob = _lowrank_prob(1.0, gamma=3.0, m=130)
    ws = rm.Workspace()
    with rm.workspace.using(ws):
        G = K.build_gram(prob)
        assert K.gram_if_built(prob) is G                   # kept in the workspace
        assert "solver_gram" in ws.keys() and "gram" not in ws.keys()  # not as the certificate's
        assert K.build_gram(prob) is G                      # built once
    assert np.array_equal(G, G.T)                           # exactly symmetric
    G0 = prob.kernel.gram(prob.X)
    assert np.max(np.abs(G - G0)) <= 1e-14
    # another kernel goes through refmodels
    poly = _prob(2, "poly", 1.0, m=30)
    np.testing.assert_array_equal(K.build_gram(poly), poly.kernel.gram(poly.X))


def test_pivoted_cholesky_bounds_the_remainder():
    G = _lowrank_prob(1.0).gram
    for tau in (1.0, 1e-3, 1e-6):
        V = KNP.pivoted_cholesky(np.diag(G), lambda i: G[i], tau, G.shape[0])
        E = G - V @ V.T
        assert np.trace(E) <= tau
        assert np.linalg.eigvalsh(E)[0] >= -1e-10            # K - V V^T stays PSD
        assert V.shape[1] < G.shape[0] // 4                  # low rank indeed
    # a rank cap below what the target needs: None (the Newton then factorises)
    assert KNP.pivoted_cholesky(np.diag(G), lambda i: G[i], 1e-6, 3) is None


@pytest.mark.parametrize("lk", [8, 16, 20])
def test_preconditioned_cg_pieces_match_cholesky_pieces(lk):
    prob = _lowrank_prob(2.0**lk)
    sol = fast.solve(prob, method="newton")
    assert sol.status == "optimal" and sol.info.get("fallback") is None
    assert sol.info["lowrank"] is not None and sol.info["lowrank"] < prob.m // 4
    assert all(s.startswith("pcg") for s in sol.info["solves"])
    assert prob.certify(sol, reference=False).ok
    # the same optimum by Cholesky pieces (no low-rank factor given)
    G = prob.gram
    c = prob.lam / (prob.m * (1 - prob.theta) ** 2)
    beta, *_, info = KN.minimize(lambda v: G @ v, lambda i: G[np.ix_(i, i)], prob.y, c,
                                 prob.mu, prob.theta, K_cols=lambda i: G[:, i])
    assert info["converged"] and not any(s.startswith("pcg") for s in info["solves"])
    assert np.linalg.norm(G @ (beta - sol.coef)) <= 1e-6 * (1 + np.linalg.norm(G @ beta))
    if lk == 8:
        assert rel(sol.objective, prob.solve().objective) <= 1e-7


def test_warm_start():
    prob = _prob(7, "rbf", 2.0**12, m=80)
    strong = fast.solve(rm.ODM(prob.X, prob.y, lam=2.0**8, mu=prob.mu, theta=prob.theta,
                               kernel=prob.kernel), method="newton")
    cold = fast.solve(prob, method="newton")
    warm = fast.solve(prob, method="newton", warm_start=strong)
    assert warm.info["warm_start"] and warm.status == "optimal"
    assert rel(warm.objective, cold.objective) <= 1e-9
    # from its own optimum: no Newton step at all
    again = fast.solve(prob, method="newton", warm_start=cold)
    assert again.n_iter <= 1 and rel(again.objective, cold.objective) <= 1e-10
    # from the DCD's solution (coef = Y (zeta - beta)), and the DCD from the Newton's
    dcd = fast.solve(prob, method="dcd")
    assert fast.solve(prob, method="newton", warm_start=dcd).status == "optimal"
    assert fast.solve(prob, method="dcd", warm_start=cold).status == "optimal"
    bad = rm.solution.Solution(objective=0.0, coef=np.ones(3), variables={})
    with pytest.raises(ValueError, match="warm_start"):
        fast.solve(prob, method="newton", warm_start=bad)
    nan = rm.solution.Solution(objective=0.0, coef=np.full(prob.m, np.nan), variables={})
    with pytest.raises(ValueError, match="warm_start"):
        fast.solve(prob, method="newton", warm_start=nan)


def test_cache_path_matches_gram_path():
    prob = _prob(8, "rbf", 2.0**10, m=50)
    a = fast.solve(prob, method="newton", path="cache")
    b = fast.solve(prob, method="newton", path="gram")
    assert a.info["path"] == "cache" and b.info["path"] == "gram"
    assert rel(a.objective, b.objective) <= 1e-10


def test_stalled_run_is_finished_by_the_dcd(monkeypatch):
    prob = _prob(9, "rbf", 2.0**10, m=60)
    monkeypatch.setattr(KN, "DEFAULT_MAX_ITER", 1)        # a Newton that stops short
    sol = fast.solve(prob, method="newton")
    assert sol.info["fallback"] == "dcd" and sol.info["newton"]["n_iter"] == 1
    assert sol.status == "optimal" and prob.certify(sol, reference=False).ok


def test_fallback_keeps_the_callers_max_iter():
    """An explicit ``max_iter`` bounds the DCD that finishes a stalled Newton too (its
    epochs), not the DCD's own cap."""
    prob = _prob(9, "rbf", 2.0**10, m=60)
    with pytest.warns(Warning, match="max_iter=2 epochs"):
        sol = fast.solve(prob, method="newton", max_iter=2)
    assert sol.info["fallback"] == "dcd" and sol.info["newton"]["n_iter"] == 2
    assert sol.status == "max_iter" and sol.n_iter == 2
    # without the cap the same fallback certifies (the test above): the cap did bind
    assert not prob.certify(sol, reference=False).ok


@pytest.mark.parametrize("degree, coef0", [(1, 2.0), (2, 1.0), (2, 0.0), (3, 0.5)])
def test_poly_feature_map_reproduces_the_gram(degree, coef0):
    rng = np.random.default_rng(degree)
    X = rng.standard_normal((9, 4)) * np.array([1e-2, 1.0, 10.0, 1e3])
    k = rm.kernels.Polynomial(degree=degree, gamma=0.3, coef0=coef0)
    Phi = KN.poly_features(k, X)
    assert Phi.shape == (9, KN.poly_feature_dim(k, 4))
    G = k.gram(X)
    assert np.max(np.abs(Phi @ Phi.T - G)) <= 1e-13 * np.max(np.abs(G))
    assert KN.poly_feature_dim(rm.kernels.RBF(gamma=1.0), 4) is None


def _raw_poly(lam, m=300, seed=5, big=300.0):
    """A raw-scale quadratic-kernel problem (features up to ~1e3, Gram entries ~1.6e11), the
    setting of ``validation/sweep_paths.py --scaling raw`` (raw breast_cancer: 2.4e11)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, 6)) * np.array([1.0, 10.0, big / 10, big, 0.01, 3.0]) \
        + np.array([0.0, 20.0, big / 2, 2 * big, 0.1, 0.0])
    y = np.where(X[:, 0] + X[:, 1] / 10 + 0.5 * rng.standard_normal(m) > 2.0, 1.0, -1.0)
    k = rm.kernels.Polynomial(degree=2, gamma=1.0 / 6, coef0=1.0)
    return rm.ODM(X, y, lam=lam, mu=0.8, theta=0.2, kernel=k)


def test_raw_poly_newton_in_feature_space_certifies_where_it_can():
    """Raw quadratic kernel (Gram ~1e11, rank 28 < m): ``K_SS + A_S`` is a tiny shift of a
    singular matrix, which the coefficient-space Newton fails to factor (the DCD then
    crawls). The explicit feature map's Newton (28 features) finds the
    optimal set in a few steps and certifies at lam = 1."""
    prob = _raw_poly(1.0)
    assert KN.explicit_features(prob) is not None
    from fast.odm import choose_method

    assert choose_method(prob) == "newton"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sol = fast.solve(prob)
    assert sol.solver == "fast:newton" and sol.status == "optimal"
    assert sol.info["stop"] == "optimal set" and sol.info["features"] == 28
    assert "fallback" not in sol.info
    # (no CVXPY reference here: CLARABEL and OSQP fail on this Gram)
    cert = prob.certify(sol, reference=False)
    assert cert.ok, cert.worst


def test_raw_poly_at_the_floor_within_the_certificate_is_judged_by_the_self_check():
    """Gram ~2e9, lam = 2^8: the optimal set is found but the rounding of ``K coef`` keeps
    the residual at ~5e-7, above the Newton's tol (1e-9) yet within the certificate's
    1e-6: ``fast.solve``'s self-check (the full certificate here) decides, 'optimal'
    without a warning; the same point with an explicit tol is 'inaccurate' and warns."""
    prob = _raw_poly(2.0**8, big=100.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sol = fast.solve(prob)
    assert sol.status == "optimal" and sol.info["stop"] == "optimal set"
    assert 1e-9 < sol.info["residual"] <= 1e-6 and "self-check decides" in sol.info["note"]
    assert prob.certify(sol, reference=False).ok
    with pytest.warns(Warning, match="optimal active set"):
        strict = fast.solve(prob, method="newton", tol=1e-9)
    assert strict.status == "inaccurate"


def test_raw_poly_weak_regularization_ends_honestly_and_fast():
    """At lam = 2^20 the rounding of ``K coef`` (entries ~1e11, times 2c ~ 1e4) is far
    above any tolerance: no point certifies. The Newton says so at once ('inaccurate',
    the residual and the floor in the warning), instead of a DCD run to its epoch cap."""
    prob = _raw_poly(2.0**20)
    with pytest.warns(Warning, match="optimal active set.*rounding"):
        sol = fast.solve(prob)
    assert sol.status == "inaccurate" and sol.solver == "fast:newton"
    assert "fallback" not in sol.info and sol.info["stop"] == "optimal set"
    assert sol.info["rounding_floor"] > 1e-6
    assert not prob.certify(sol, reference=False).ok
    assert sol.n_iter <= 30                      # a few Newton steps, no epoch cap reached
    # the coefficients still give the optimum's classifier: their outputs K coef are the
    # feature-space optimum's Phi w (eq. 14's coefficients at w did not: K amplifies the
    # solve's error; 'min-norm' is the least-squares x of Phi^T x = w)
    Phi = KN.poly_features(prob.kernel, prob.X)
    c = prob.lam / (prob.m * (1 - prob.theta) ** 2)
    *_, info = KN.minimize_features(Phi, prob.y, c, prob.mu, prob.theta,
                                    K_times=lambda v: prob.gram @ v)
    ow = Phi @ info["w_features"]
    assert sol.info["representation"] == "min-norm"
    assert np.mean(np.sign(prob.gram @ sol.coef) == np.sign(ow)) >= 0.99
    assert np.mean(np.sign(ow) == prob.y) >= 0.8        # and that classifier is a real one


def test_auto_rule():
    weak = _prob(4, "rbf", 2.0**20, m=40)
    strong = _prob(4, "rbf", 1.0, m=40)
    assert fast.odm.choose_method(weak) == "newton"
    assert fast.odm.choose_method(strong) == "dcd"
    assert fast.odm.choose_method(_prob(4, "linear", 2.0**20)) == "tron"
    sol = fast.solve(weak, method="auto")
    assert sol.solver == "fast:newton" and sol.status == "optimal"
    path = fast.path(strong, lam=[1.0, 2.0**20])
    assert [s.solver for s in path] == ["fast:dcd", "fast:newton"]
    assert all(s.status == "optimal" for s in path)
    # a middle shift (1/16 < a / mean(diag K) <= 1): the Newton when its CG preconditioner
    # exists (a Gram close to low rank), the DCD otherwise (a Gram far from it)
    smooth = _lowrank_prob(2.0**10)                      # a = 0.15
    rough = _lowrank_prob(2.0**10, gamma=200.0)
    for p in (smooth, rough):
        a = p.m * (1 - p.theta) ** 2 / (2 * p.lam)
        assert fast.odm.NEWTON_MAX_SHIFT < a / np.mean(np.diag(p.gram)) <= 1.0
    assert fast.odm.choose_method(smooth) == "newton"
    assert fast.odm.choose_method(rough) == "dcd"
    sol = fast.solve(smooth, method="auto")
    assert sol.solver == "fast:newton" and sol.status == "optimal"
    assert all(s.startswith("pcg") for s in sol.info["solves"])


def test_bad_input():
    prob = _prob(1, "rbf", 1.0, m=20)
    check_refused(prob, ({"method": "newton", "tol": -1.0}, "tol"),
                  ({"method": "newton", "tol": np.nan}, "tol"),
                  ({"method": "newton", "max_iter": 0}, "max_iter"),
                  ({"method": "newton", "foo": 1}, "unknown option"),
                  ({"method": "newton", "path": "linear"}, "path"),
                  ({"method": "newton", "cache_size": -5}, "cache_size"))
    lin = _prob(1, "linear", 1.0, m=20)
    check_refused(lin, ({"method": "newton"}, "tron"))
