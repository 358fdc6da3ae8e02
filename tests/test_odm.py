"""ODM (SPEC §4): primal = dual, seed 000's parametrisation, certificates that hold and fail."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import refmodels as rm
from contract import check_certifies_from_w, check_rejects_bad_data, check_rejects_perturbed, \
    primal_and_dual
from strategies import UNIT, binary_data, log_uniform, projected_gradient, random_binary, \
    thetas


def block_dual(prob):
    """Eq. 15 written out: the 2m x 2m block matrix and the linear term."""
    Q = prob.y[:, None] * prob.gram * prob.y[None, :]
    m, a, th = prob.m, prob.a, prob.theta
    I = np.eye(m)
    Qb = np.block([[Q + a * I, -Q], [-Q, Q + a / prob.mu * I]])
    p = np.concatenate([(th - 1) * np.ones(m), (th + 1) * np.ones(m)])
    return Qb, p


@given(data=binary_data(), lam=log_uniform(1e-2, 1e3), mu=log_uniform(1e-2, 1e2), theta=thetas)
def test_strong_duality_and_certificates(data, lam, mu, theta):
    X, y, kernel, scale = data
    prob = rm.ODM(X, y, lam=lam, mu=mu, theta=theta, kernel=kernel)
    # off the unit scale, or theta close to 1: the trust property only
    pair = primal_and_dual(prob, scale, good=scale.good and theta <= 0.95)
    if pair is None:
        return
    p, d = pair
    scale = 1 + abs(p.objective)
    # the formulations themselves, as CVXPY solved them: P* = -D*_min (eq. 12 vs eq. 15)
    assert abs(p.info["cvxpy_value"] + d.info["cvxpy_value"]) <= 1e-6 * scale
    assert abs(p.info["cvxpy_value"] - p.objective) <= 1e-6 * scale       # eq. 12 = f_O (eq. 18)
    raw = d.info["cvxpy_point"]
    assert abs(prob.dual_value(raw) - p.objective) <= 1e-6 * scale
    # the returned solutions (canonical objective)
    assert abs(p.objective - d.objective) <= 1e-6 * scale
    for sol in (p, d):
        cert = prob.certify(sol, reference=p)
        assert cert.ok, str(cert)
    # a user's point given by its coefficients only: the dual is derived from w (eq. 14), so
    # the stationarity residual is ||grad f_O(F^T coef)||. Rounding in coef is amplified by
    # the Hessian norm 1 + 2c max(1, mu) lambda_max(G); past ~1e6 (lam ~ 1e3 with theta
    # near 1) double precision cannot carry the point to 1e-6, so only check below that.
    hess = 1 + 2 * prob.c * max(1.0, mu) * np.linalg.eigvalsh(prob.gram)[-1]
    if hess <= 1e6:
        cert = prob.certify(prob.solution_from(coef=d.coef), reference=p)
        assert cert.ok, str(cert)


def test_dual_is_eq15_block_matrix():
    """The dual objective in code equals eq. 15's block form, and nu = Y(zeta - beta)."""
    X, y, k, _ = random_binary(4, m=25, d=3, kernel="rbf")
    prob = rm.ODM(X, y, lam=2.0, mu=0.3, theta=0.2, kernel=k)
    Qb, p = block_dual(prob)
    rng = np.random.default_rng(0)
    for _ in range(3):
        al = rng.random(2 * prob.m)
        dual = {"zeta": al[:prob.m], "beta": al[prob.m:]}
        assert np.isclose(prob.dual_value(dual), -(0.5 * al @ Qb @ al + p @ al), rtol=1e-12)
    d = prob.solve(form="dual")
    al = np.concatenate([d.variables["zeta"], d.variables["beta"]])
    assert np.isclose(-(0.5 * al @ Qb @ al + p @ al), d.objective, rtol=1e-8)
    np.testing.assert_allclose(d.coef, prob.y * (d.variables["zeta"] - d.variables["beta"]))


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_certificate_fails_when_it_should(kernel):
    X, y, k, _ = random_binary(1, m=40, d=4, kernel=kernel)
    prob = rm.ODM(X, y, lam=5.0, mu=0.5, theta=0.2, kernel=k)
    ref = prob.solve()
    assert prob.certify(ref).ok
    check_rejects_perturbed(prob, ref)
    # a negative multiplier (outside the dual cone zeta, beta >= 0)
    z, bt = ref.variables["zeta"].copy(), ref.variables["beta"].copy()
    bt[np.argmin(bt)] = -0.5
    cert = prob.certify(prob.solution_from(coef=ref.coef, dual={"zeta": z, "beta": bt}))
    assert not cert.ok and "dual feasibility" in cert.failing
    # another solver stopped early: 5 projected-gradient steps on eq. 15
    Qb, p = block_dual(prob)
    al = projected_gradient(Qb, p, 0.0, np.inf, iters=5)
    early = prob.solution_from(dual={"zeta": al[:prob.m], "beta": al[prob.m:]})
    cert = prob.certify(early)
    assert not cert.ok, str(cert)
    assert "duality gap" in cert.failing and "objective gap" in cert.failing


def test_certify_from_w_only_derives_dual():
    X, y, _, _ = random_binary(2, m=50, d=3)
    prob = rm.ODM(X, y, lam=10.0, mu=0.2, theta=0.4)
    ref = prob.solve(form="primal")
    cert = check_certifies_from_w(prob, ref)
    # the derived dual is eq. 14's, unique given w
    np.testing.assert_allclose(cert.dual["zeta"], ref.variables["zeta"], atol=1e-10)
    # and a slightly wrong w fails on stationarity (the gradient of f_O)
    cert = prob.certify(prob.solution_from(w=ref.w + 1e-3))
    assert not cert.ok and "stationarity" in cert.failing


@given(data=binary_data(max_m=30, kernels=("linear", "rbf"), scale=st.just(UNIT)),
       C1=log_uniform(1e-2, 1e2), C2=log_uniform(1e-2, 1e2), D=st.floats(0.0, 0.95))
def test_from_seed000_maps_parameters(data, C1, C2, D):
    """Seed 000 eq. 7, written independently in its own (C1, C2, D) scaling:
    ``1/2 w^T w + (1/m) sum_i (C1 xi_i^2 + C2 eps_i^2)``. With SPEC's map the objective is
    *the same function* (constant factor 1), so w and the optimal value coincide."""
    import cvxpy as cp

    X, y, kernel, _ = data
    prob = rm.ODM.from_seed000(X, y, C1=C1, C2=C2, D=D, kernel=kernel)
    # (the map alone, drawn at the unit scale: the trust property at every scale is
    # test_strong_duality_and_certificates')
    assert np.isclose(prob.lam / (1 - prob.theta) ** 2, C1)
    assert np.isclose(prob.lam * prob.mu / (1 - prob.theta) ** 2, C2)
    assert prob.theta == D
    F, yy, m = prob.F, prob.y, prob.m
    w, xi, eps = cp.Variable(F.shape[1]), cp.Variable(m), cp.Variable(m)
    marg = cp.multiply(yy, F @ w)
    seed = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(w)
                                  + (C1 * cp.sum_squares(xi) + C2 * cp.sum_squares(eps)) / m),
                      [marg >= 1 - D - xi, marg <= 1 + D + eps])
    seed.solve(solver="CLARABEL")
    assert seed.status == cp.OPTIMAL
    ref = prob.solve()
    assert abs(seed.value - ref.objective) <= 1e-6 * (1 + abs(ref.objective))
    assert np.linalg.norm(w.value - ref.w) <= 1e-4 * (1 + np.linalg.norm(ref.w))


def test_polish_only_refines():
    """The Newton polish keeps the CVXPY point within 1e-3 relative and lowers the gradient."""
    X, y, k, _ = random_binary(5, m=40, d=5, kernel="poly")
    prob = rm.ODM(X, y, lam=100.0, mu=10.0, theta=0.9, kernel=k)
    p = prob.solve(form="primal")
    w0 = p.info["cvxpy_point"]["w"]
    assert np.linalg.norm(p.w - w0) <= 1e-3 * (1 + np.linalg.norm(w0))
    assert np.linalg.norm(prob.gradient(p.w)) <= np.linalg.norm(prob.gradient(w0))
    assert p.objective <= prob.primal_value(w0) + 1e-12


def test_bad_input():
    X, y, _, _ = random_binary(3, m=10, d=2)
    for kw, name in [(dict(lam=0), "lam"), (dict(lam=-1), "lam"),
                     (dict(mu=-2), "mu"), (dict(theta=-0.1), "theta"), (dict(theta=1.0), "theta"),
                     (dict(theta=1.5), "theta"), (dict(lam=np.nan), "lam")]:
        with pytest.raises(ValueError, match=name):
            rm.ODM(X, y, **kw)
    for kw, name in [(dict(C1=0, C2=1, D=0.1), "C1"), (dict(C1=1, C2=-1, D=0.1), "C2"),
                     (dict(C1=1, C2=1, D=1.0), "D"), (dict(C1=1, C2=1, D=-0.2), "D")]:
        with pytest.raises(ValueError, match=name):
            rm.ODM.from_seed000(X, y, **kw)
    check_rejects_bad_data(rm.ODM, X, y)
    with pytest.raises(ValueError, match="dual"):
        rm.ODM(X, y).solution_from(dual={"zeta": np.zeros(10)})
