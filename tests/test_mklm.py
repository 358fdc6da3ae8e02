"""MKLm / epsilon-MKL (SPEC §7): three forms agree, single kernel = SVMm, certificates that
hold and that fail, the eq. 26 erratum, base-kernel validation."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import refmodels as rm
from contract import solve_trusted
from strategies import log_uniform, random_binary, scales

K = rm.kernels

KERNEL_SETS = {
    "rbf3": lambda d: [K.RBF(0.02 / d), K.RBF(0.5 / d), K.RBF(5.0 / d)],
    "rbf+linear": lambda d: [K.RBF(0.3 / d), K.Linear()],
    "rbf+poly+linear": lambda d: [K.RBF(1.0 / d), K.Polynomial(2, 1.0 / d, 1.0), K.Linear()],
    "poly+rbf": lambda d: [K.Polynomial(3, 1.0, 1.0), K.RBF(2.0)],     # scales 1e3 vs 1
}


def _data(seed, m, d, scale=1.0):
    X, y, _, _ = random_binary(seed, m=m, d=d)
    return X * scale, y


@given(seed=st.integers(0, 2**31), m=st.integers(8, 24), d=st.integers(1, 5),
       kset=st.sampled_from(sorted(KERNEL_SETS)), scale=scales(),
       C1=log_uniform(1e-1, 1e2), C2=st.one_of(st.just(0.0), log_uniform(1e-2, 1e2)),
       eps=st.floats(0.0, 2.0, allow_subnormal=False))
def test_three_forms_agree_and_certify(seed, m, d, kset, scale, C1, C2, eps):
    X, y, _, _ = random_binary(seed, m=m, d=d, scale=scale)
    prob = rm.MKLm(X, y, KERNEL_SETS[kset](d), C1=C1, C2=C2, eps=eps)
    if not scale.good:          # off the unit scale: the trust property (solve_trusted)
        solve_trusted(prob, scale, *[lambda f=f: prob.solve(form=f)
                                     for f in ("dual", "primal", "simplex")])
        return
    sols = {f: prob.solve(form=f) for f in ("dual", "primal", "simplex")}
    ref = sols["simplex"]
    assert ref.status == "optimal"
    for form, sol in sols.items():
        mu = sol.variables["mu"]
        assert np.all(mu >= 0) and abs(mu.sum() - 1) <= 1e-12
        assert abs(sol.objective - ref.objective) <= 1e-5 * (1 + abs(ref.objective)), form
        cert = prob.certify(sol, reference=sols["dual"])
        assert cert.ok, (form, str(cert))
    # the CVXPY optimal values themselves (before polishing) agree with the simplex form
    for form in ("dual", "primal"):
        v = sols[form].info["conic_value"]
        assert abs(v - ref.objective) <= 1e-5 * (1 + abs(ref.objective)), form
    # f(x) on the training points agrees between forms
    f = {k: prob.decision_function(s, X) for k, s in sols.items()}
    np.testing.assert_allclose(f["dual"], f["simplex"], atol=1e-4 * (1 + np.abs(f["dual"]).max()))


@pytest.mark.parametrize("kernel", [K.RBF(0.5), K.Linear(), K.Polynomial(2, 0.5, 1.0)])
@pytest.mark.parametrize("C1,C2,eps", [(1.0, 0.5, 0.3), (10.0, 3.0, 0.0), (0.5, 0.0, 1.0)])
def test_single_kernel_is_svmm_with_half_boxes(kernel, C1, C2, eps):
    X, y = _data(11, 30, 3)
    mkl = rm.MKLm(X, y, [kernel], C1=C1, C2=C2, eps=eps)
    svmm = rm.SVMm(X, y, C1=C1 / 2, C2=C2 / 2, eps=eps, kernel=kernel)
    s, r = mkl.solve(), svmm.solve()
    assert abs(s.objective - r.objective) <= 1e-6 * (1 + abs(r.objective))
    np.testing.assert_allclose(mkl.decision_function(s, X), svmm.decision_function(r, X),
                               atol=1e-5)
    np.testing.assert_array_equal(s.variables["mu"], [1.0])


@pytest.mark.parametrize("C2,eps", [(0.5, 0.3), (0.0, 1.0)])
def test_inner_solves_reuse_one_dpp_problem_with_the_svmm_point(C2, eps):
    # the reduced gradient's inner SVMm (seed 003 eqs. 23-26) is one CVXPY problem per MKLm
    # with mu a parameter; its polished point is SVMm.dual_point's on K_mu, the SVMm whose
    # optimum is J(mu) (inner_problem)
    X, y = _data(5, 30, 3)
    prob = rm.MKLm(X, y, KERNEL_SETS["rbf+poly+linear"](3), C1=2.0, C2=C2, eps=eps)
    rng = np.random.default_rng(0)
    mus = [np.array([1.0, 0.0, 0.0]), np.array([0.0, 0.0, 1.0]), rng.dirichlet(np.ones(3)),
           rng.dirichlet(np.ones(3))]
    built = None
    ws = rm.Workspace()
    with rm.workspace.using(ws):
        for mu in mus:
            a, bt = prob._inner_dual_point(mu, "CLARABEL", {})
            ra, rbt, _, _, _ = prob.inner_problem(mu).dual_point("CLARABEL")
            np.testing.assert_allclose(a, ra, rtol=0, atol=1e-9)
            np.testing.assert_allclose(bt, rbt, rtol=0, atol=1e-9)
            if built is None:
                built = ws.peek("inner_dpp", (prob,))
                assert built[0].is_dpp()
            assert ws.peek("inner_dpp", (prob,)) is built     # built once, mu substituted
        # the boxes and eps are constants of that problem: another C1, another problem
        prob = rm.MKLm(X, y, prob.kernels, C1=6.0, C2=C2, eps=eps)
        a, bt = prob._inner_dual_point(mus[2], "CLARABEL", {})
        assert ws.peek("inner_dpp", (prob,)) is not built
        ra, rbt, _, _, _ = prob.inner_problem(mus[2]).dual_point("CLARABEL")
    assert np.max(ra) > 1.0 + 1e-6                        # the new box C1/2 = 3 is in use
    np.testing.assert_allclose(a, ra, rtol=0, atol=1e-9)
    np.testing.assert_allclose(bt, rbt, rtol=0, atol=1e-9)


def test_certificate_fails_when_it_should():
    X, y = _data(12, 30, 3)
    prob = rm.MKLm(X, y, [K.RBF(0.05), K.RBF(1.0), K.Linear()], C1=2.0, C2=1.0, eps=0.2)
    ref = prob.solve()
    mu = ref.variables["mu"]
    assert np.sum(mu > 1e-6) >= 2                         # an interior point of an edge
    assert prob.certify(ref).ok
    # the user's point without duals: derived on K_mu, certifies
    plain = prob.solution_from(mu=mu, coef=ref.coef, intercept=ref.intercept)
    assert prob.certify(plain).ok
    # mu moved to a vertex (same nu, b): the MKL duality gap sees it
    for k in range(3):
        vert = np.eye(3)[k]
        cert = prob.certify(prob.solution_from(mu=vert, coef=ref.coef, intercept=ref.intercept))
        assert not cert.ok and "duality gap" in cert.failing
        # and even with nu, b re-optimised for the vertex kernel (the SVMm at mu = e_k)
        inner = prob.inner_problem(vert).solve()
        cert = prob.certify(prob.solution_from(
            mu=vert, coef=inner.coef, intercept=inner.intercept,
            dual={n: inner.variables[n] for n in ("alpha", "beta")}))
        assert not cert.ok and "duality gap" in cert.failing
    # mu slightly off the optimum along the edge
    off = mu + 0.05 * (np.eye(3)[np.argmax(mu)] - np.eye(3)[np.argmin(mu)])
    inner = prob.inner_problem(off).solve()
    cert = prob.certify(prob.solution_from(mu=off, coef=inner.coef, intercept=inner.intercept))
    assert not cert.ok
    # mu off the simplex
    cert = prob.certify(prob.solution_from(mu=mu * 1.1, coef=ref.coef, intercept=ref.intercept))
    assert not cert.ok and "primal feasibility" in cert.failing
    # dual points outside their boxes [0, C1/2], [0, C2/2]
    for name, C in (("alpha", prob.C1 / 2), ("beta", prob.C2 / 2)):
        dual = {n: ref.variables[n].copy() for n in ("alpha", "beta")}
        dual[name][np.argmax(dual[name])] = C * 1.5
        cert = prob.certify(prob.solution_from(mu=mu, coef=ref.coef, intercept=ref.intercept,
                                               dual=dual))
        assert not cert.ok and "dual feasibility" in cert.failing
    # a perturbed optimum
    cert = prob.certify(prob.solution_from(mu=mu, coef=ref.coef * 1.01, intercept=ref.intercept))
    assert not cert.ok and "objective gap" in cert.failing


def test_early_stopped_simplex_fails_certificate():
    X, y = _data(13, 25, 3)
    prob = rm.MKLm(X, y, [K.RBF(0.05), K.Polynomial(2, 0.3, 1.0)], C1=3.0, C2=1.0, eps=0.5)
    with pytest.warns(Warning, match="stopped"):
        early = prob.solve(form="simplex", max_outer=0)
    assert early.status == "max_iter"
    assert not prob.certify(early).ok
    assert prob.certify(prob.solve(form="simplex")).ok


def test_eps_mkl_is_mklm_with_eps_zero():
    X, y = _data(14, 25, 3)
    ks = [K.RBF(0.2), K.Linear()]
    a = rm.EpsMKL(X, y, ks, C1=2.0, C2=0.5).solve()
    b = rm.MKLm(X, y, ks, C1=2.0, C2=0.5, eps=0.0).solve()
    assert rm.EpsMKL(X, y, ks, C1=2.0, C2=0.5).eps == 0.0
    assert abs(a.objective - b.objective) <= 1e-8 * (1 + abs(b.objective))
    np.testing.assert_allclose(a.variables["mu"], b.variables["mu"], atol=1e-6)


def test_erratum_eq26_C2_on_eta():
    """Eq. 26 prints C1/2 on the eta term; it is C2/2 (SPEC §7)."""
    import cvxpy as cp

    X, y = _data(15, 30, 3)
    ks = [K.RBF(0.3), K.Linear()]
    C1, C2, eps = 4.0, 0.2, 0.1
    ours = rm.MKLm(X, y, ks, C1=C1, C2=C2, eps=eps)
    printed = rm.MKLm(X, y, ks, C1=C1, C2=C1, eps=eps)      # J(mu) of eq. 26 as printed
    s, p = ours.solve(), printed.solve()
    assert np.any(s.variables["beta"] > 1e-6)                  # the band binds here
    assert abs(s.objective - p.objective) > 1e-3 * abs(s.objective)
    assert np.abs(s.variables["mu"] - p.variables["mu"]).max() > 1e-3
    # ours: the eq. 22 primal (C2/2 on eta) equals the QCQP dual (box C2/2) ...
    assert abs(s.info["conic_value"] - ours.solve(form="primal").info["conic_value"]) \
        <= 1e-6 * (1 + abs(s.objective))
    # ... while the printed primal (C1/2 on eta) does not equal the dual with box C2/2
    Fs, m = ours.feature_maps, ours.m
    mu = cp.Variable(2, nonneg=True)
    ws = [cp.Variable(F.shape[1]) for F in Fs]
    b, xi, eta = cp.Variable(), cp.Variable(m, nonneg=True), cp.Variable(m, nonneg=True)
    g = cp.multiply(ours.y, sum(F @ w for F, w in zip(Fs, ws)) + b)
    pr = cp.Problem(cp.Minimize(0.5 * sum(cp.quad_over_lin(w, mu[k]) for k, w in enumerate(ws))
                                + C1 / 2 * cp.sum(xi) + C1 / 2 * cp.sum(eta)),
                    [g >= 1 - xi, g <= 1 + eps + eta, cp.sum(mu) == 1])
    pr.solve(solver="CLARABEL")
    assert abs(pr.value - s.info["conic_value"]) > 1e-3 * abs(s.objective)
    assert abs(pr.value - p.objective) <= 1e-5 * (1 + abs(p.objective))


def test_predictions_and_precomputed_base_grams():
    X, y = _data(16, 30, 3)
    Xn = np.random.default_rng(0).normal(size=(7, 3))
    ks = [K.RBF(0.3), K.Polynomial(2, 0.5, 1.0)]
    prob = rm.MKLm(X, y, ks, C1=1.0, C2=0.5, eps=0.3)
    sol = prob.solve()
    f = prob.decision_function(sol, X)
    mu = sol.variables["mu"]
    Kmu = sum(mu[k] * ks[k].gram(X) for k in range(2))
    np.testing.assert_allclose(f, Kmu @ sol.coef + sol.intercept, atol=1e-10)
    assert set(prob.predict(sol, Xn)) <= set(prob.classes_)
    # the same base kernels as precomputed Gram arrays (X may be None)
    grams = [k.gram(X) for k in ks]
    pre = rm.MKLm(None, y, grams, C1=1.0, C2=0.5, eps=0.3)
    sp = pre.solve()
    assert abs(sp.objective - sol.objective) <= 1e-6 * (1 + abs(sol.objective))
    cross = [k.cross(Xn, X) for k in ks]                  # K_k(X_new, X_train)
    np.testing.assert_allclose(pre.decision_function(sp, cross), prob.decision_function(sol, Xn),
                               atol=1e-5)
    # mixed: one Kernel object, one Gram array
    mixed = rm.MKLm(X, y, [ks[0], grams[1]], C1=1.0, C2=0.5, eps=0.3)
    sm = mixed.solve()
    np.testing.assert_allclose(mixed.decision_function(sm, [Xn, cross[1]]),
                               prob.decision_function(sol, Xn), atol=1e-5)
    with pytest.raises(ValueError, match="list"):
        mixed.decision_function(sm, Xn)


class _ShiftedLinear(K.Kernel):
    """x^T z - 1: a polynomial kernel of degree 1 with coef0 = -1 (not PSD)."""

    def cross(self, X, Z):
        return X @ Z.T - 1.0


def test_bad_input():
    X, y = _data(17, 12, 2)
    with pytest.raises(ValueError, match="non-empty"):
        rm.MKLm(X, y, [], C1=1.0, C2=1.0, eps=0.1)
    with pytest.raises(ValueError, match="list"):
        rm.MKLm(X, y, K.RBF(1.0), C1=1.0, C2=1.0, eps=0.1)
    G = K.RBF(1.0).gram(X)
    bad = G - 0.5 * np.eye(12) * np.linalg.eigvalsh(G)[-1]
    with pytest.raises(ValueError, match=r"kernels\[1\].*positive semidefinite"):
        rm.MKLm(X, y, [K.Linear(), bad], C1=1.0, C2=1.0, eps=0.1)
    prob = rm.MKLm(X, y, [K.RBF(1.0), _ShiftedLinear()], C1=1.0, C2=1.0, eps=0.1)
    with pytest.raises(ValueError, match=r"kernels\[1\].*positive semidefinite"):
        prob.solve()
    with pytest.raises(ValueError, match=r"kernels\[0\].*Precomputed"):
        rm.MKLm(X, y, [K.Precomputed()], C1=1.0, C2=1.0, eps=0.1)
    with pytest.raises(ValueError, match=r"kernels\[0\]"):
        rm.MKLm(X, y, ["gaussian"], C1=1.0, C2=1.0, eps=0.1)
    with pytest.raises(ValueError, match=r"kernels\[0\].*shape"):
        rm.MKLm(X, y, [np.eye(5)], C1=1.0, C2=1.0, eps=0.1)
    with pytest.raises(ValueError, match="C1"):
        rm.MKLm(X, y, ["rbf"], C1=0.0, C2=1.0, eps=0.1)
    with pytest.raises(ValueError, match="C2"):
        rm.MKLm(X, y, ["rbf"], C1=1.0, C2=-1.0, eps=0.1)
    with pytest.raises(ValueError, match="eps"):
        rm.MKLm(X, y, ["rbf"], C1=1.0, C2=1.0, eps=-0.5)
    with pytest.raises(ValueError, match="C2"):
        rm.EpsMKL(X, y, ["rbf"], C1=1.0, C2=-1.0)
    with pytest.raises(ValueError, match="X"):
        rm.MKLm(None, y, ["rbf"], C1=1.0, C2=1.0, eps=0.1)
    with pytest.raises(ValueError, match="form"):
        rm.MKLm(X, y, ["rbf"]).solve(form="both")
    with pytest.raises(ValueError, match="mu"):
        rm.MKLm(X, y, ["rbf", "linear"]).solution_from(coef=np.zeros(12))
