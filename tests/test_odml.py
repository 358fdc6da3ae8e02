"""ODML and LDM (SPEC §2, §3): primal = dual, Woodbury, the seed errata, certificates."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import refmodels as rm
from contract import check_certifies_from_w, check_rejects_bad_data, primal_and_dual, \
    solve_trusted
from refmodels.odml import woodbury_H, woodbury_solve
from strategies import binary_data, log_uniform, projected_gradient, random_binary

#: mu1, mu2, lam1, lam2: zero (the SVM limit) or over five orders of magnitude
weights = st.one_of(st.just(0.0), log_uniform(1e-3, 1e2))


def direct_P(y):
    m = len(y)
    return np.eye(m) - np.outer(y, y) / m


def seed_dual_pieces(prob):
    """``(H, q, const)`` of the seed's dual in its own form: 1/2 a^T H a + q^T a (+ const)."""
    H, m = prob.H, prob.m
    e = np.ones(m)
    mean = prob._mean_coef                      # mu2/m (ODML) or lam2/m (LDM)
    return H, mean * (H @ e) - e, 0.5 * mean ** 2 * float(e @ H @ e)


def check_pair_at(prob, scale):
    """Primal and dual under the trust property at every scale; at the unit scale also
    :func:`check_pair`."""
    pair = primal_and_dual(prob, scale)
    if pair is not None:
        check_pair(prob, *pair)


def check_pair(prob, p, d):
    """The formulations' values, strong duality and the certificates against the primal."""
    scale = 1 + abs(p.objective)
    name = prob.dual_names[0]
    # the formulations as CVXPY solved them (before polishing): P* = -D*_min, constant kept
    assert abs(p.info["cvxpy_value"] + d.info["cvxpy_value"]) <= 1e-6 * scale
    raw = d.info["cvxpy_point"][name]
    assert abs(prob.dual_value({name: raw}) - p.objective) <= 1e-6 * scale
    # the returned solutions
    assert abs(p.objective - d.objective) <= 1e-6 * scale
    assert abs(prob.dual_value({name: d.variables[name]}) - p.objective) <= 1e-6 * scale
    for sol in (p, d):
        cert = prob.certify(sol, reference=p)
        assert cert.ok, str(cert)
    cert = prob.certify(prob.solution_from(coef=d.coef), reference=p)
    assert cert.ok, str(cert)


@given(data=binary_data(), lam=log_uniform(1e-2, 1e3), mu1=weights, mu2=weights)
def test_odml_strong_duality_and_certificates(data, lam, mu1, mu2):
    X, y, kernel, scale = data
    check_pair_at(rm.ODML(X, y, lam=lam, mu1=mu1, mu2=mu2, kernel=kernel), scale)


@given(data=binary_data(), C=log_uniform(1e-3, 1e2), lam1=weights, lam2=weights)
def test_ldm_strong_duality_and_certificates(data, C, lam1, lam2):
    X, y, kernel, scale = data
    check_pair_at(rm.LDM(X, y, C=C, lam1=lam1, lam2=lam2, kernel=kernel), scale)


@given(data=binary_data(max_m=30), C=log_uniform(1e-3, 1e2), lam1=weights, lam2=weights,
       form=st.sampled_from(["primal", "dual"]))
def test_ldm_equals_odml_reparametrised(data, C, lam1, lam2, form):
    """LDM(C, lam1, lam2) = ODML(lam = mC, mu1 = 2 lam1, mu2 = lam2): same w, same value."""
    X, y, kernel, scale = data
    ldm = rm.LDM(X, y, C=C, lam1=lam1, lam2=lam2, kernel=kernel)
    odml = rm.ODML(X, y, lam=ldm.m * C, mu1=2 * lam1, mu2=lam2, kernel=kernel)
    # each under the trust property; both certified, the optimal values agree to the
    # certificates' duality gaps (tol each, relative to 1 + |P|)
    (a,), (b,) = solve_trusted(ldm, scale, lambda: ldm.solve(form=form)), \
        solve_trusted(odml, scale, lambda: odml.solve(form=form))
    if a is None or b is None:
        return                                          # a side said it cannot (bad scale)
    assert abs(a.objective - b.objective) <= 2e-6 * (1 + max(abs(a.objective), abs(b.objective)))
    if not scale.good:
        return
    assert abs(a.objective - b.objective) <= 1e-6 * (1 + abs(b.objective))
    assert np.linalg.norm(a.w - b.w) <= 1e-4 * (1 + np.linalg.norm(b.w))
    # the objectives are the same function of w (seed 001's gamma_hat = 2 gamma_v)
    rng = np.random.default_rng(0)
    for w in (a.w, rng.normal(size=a.w.shape)):
        assert np.isclose(ldm.primal_value(w), odml.primal_value(w), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("form", ["primal", "dual"])
def test_polish_only_refines(form):
    """The active-set polish keeps CVXPY's point (same value to 1e-7, w to 1e-3) and never
    makes the worst KKT residual larger."""
    X, y, k, _ = random_binary(14, m=40, d=5, kernel="poly")
    prob = rm.ODML(X, y, lam=50.0, mu1=3.0, mu2=1.0, kernel=k)
    sol = prob.solve(form=form)
    raw = sol.info["cvxpy_point"]["alpha"]
    w_raw = raw_w = sol.info["cvxpy_point"].get("w")
    if w_raw is None:
        raw_w = prob.w_from_coef(prob.coef_from_dual({"alpha": raw})[0])
    assert abs(sol.objective - prob.primal_value(raw_w)) <= 1e-7 * (1 + sol.objective)
    assert np.linalg.norm(sol.w - raw_w) <= 1e-3 * (1 + np.linalg.norm(raw_w))
    assert prob._kkt_score(sol.w, sol.variables["alpha"]) <= prob._kkt_score(raw_w, raw)


def test_svm_limit():
    """mu1 = mu2 = 0 (allowed on purpose): ODML(lam, 0, 0) is the SVM with C = lam/m."""
    X, y, k, _ = random_binary(8, m=30, d=3, kernel="rbf")
    odml = rm.ODML(X, y, lam=6.0, mu1=0.0, mu2=0.0, kernel=k).solve()
    svm = rm.SVM(X, y, C=6.0 / 30, kernel=k).solve()
    assert abs(odml.objective - svm.objective) <= 1e-7 * (1 + svm.objective)


# ---- Woodbury ------------------------------------------------------------------------------
@pytest.mark.parametrize("kernel", ["linear", "rbf", "poly"])
@pytest.mark.parametrize("coef", [0.0, 1e-3, 0.5, 50.0])
def test_woodbury_matches_direct_solve(kernel, coef):
    """Stable form = G (I + AG)^{-1} by a direct (nonsymmetric but nonsingular) solve."""
    X, y, k, _ = random_binary(5, m=25, d=3, kernel=kernel)
    prob = rm.SVM(X, y, kernel=k)
    G, yy, m = prob.gram, prob.y, prob.m
    IAG = np.eye(m) + coef * direct_P(yy) @ G
    K = np.linalg.solve(IAG.T, G.T).T                            # G (I + AG)^{-1}
    H = woodbury_H(G, yy, coef)
    np.testing.assert_allclose(H, yy[:, None] * K * yy[None, :], atol=1e-10 * np.abs(G).max())
    np.testing.assert_array_equal(H, H.T)
    assert np.linalg.eigvalsh(H)[0] >= -1e-10 * np.abs(G).max()
    u = np.random.default_rng(1).normal(size=(m, 2))
    np.testing.assert_allclose(woodbury_solve(G, yy, coef, u), np.linalg.solve(IAG, u),
                               atol=1e-9 * (1 + np.abs(u).max()))
    np.testing.assert_allclose(woodbury_solve(G, yy, coef, u[:, 0]), np.linalg.solve(IAG, u[:, 0]),
                               atol=1e-9 * (1 + np.abs(u).max()))


def test_dual_value_in_feature_space_equals_woodbury_form():
    X, y, k, _ = random_binary(6, m=30, d=4, kernel="poly")
    prob = rm.ODML(X, y, lam=2.0, mu1=3.0, mu2=0.7, kernel=k)
    a = np.random.default_rng(0).random(prob.m) * prob.lam / prob.m
    v = prob.mu2 / prob.m + a
    expected = a.sum() - 0.5 * v @ prob.H @ v
    assert np.isclose(prob.dual_value({"alpha": a}), expected, rtol=1e-10)


def test_woodbury_bad_input():
    G = np.eye(3)
    with pytest.raises(ValueError, match="coef"):
        woodbury_H(G, np.array([1.0, -1, 1]), -1.0)
    with pytest.raises(ValueError, match="y"):
        woodbury_H(G, np.array([1.0, -1]), 1.0)
    with pytest.raises(ValueError, match="G"):
        woodbury_H(np.ones((3, 2)), np.array([1.0, -1, 1]), 1.0)


# ---- the seed errata, each shown failing in the seed's version and holding in ours ------------
def test_erratum_odml_dropped_constant():
    """Seed 002 eq. 10 / seed 000 eq. 14 drop 1/2 (mu2/m)^2 e^T H e: without it the dual
    optimum is not -P*; with it, it is."""
    X, y, k, _ = random_binary(9, m=30, d=3, kernel="rbf")
    prob = rm.ODML(X, y, lam=5.0, mu1=1.0, mu2=2.0, kernel=k)
    p, d = prob.solve(form="primal"), prob.solve(form="dual")
    a = d.variables["alpha"]
    H, q, const = seed_dual_pieces(prob)
    seed_min = 0.5 * a @ H @ a + q @ a                     # the seed's eq. 10 value
    assert const > 1e-3
    assert abs(-seed_min - p.objective) > 1e-3 * (1 + p.objective)          # seed: wrong
    assert abs(-(seed_min + const) - p.objective) <= 1e-6 * (1 + p.objective)  # ours: right


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_erratum_lemma1_inverts_singular_A(kernel):
    """Seed 000 Lemma 1 (and seed 002 before eq. 9) need A^{-1}, but A = (2 mu1/m) P has
    A y = 0. The conclusion Q^{-1} X = X (I + AG)^{-1} (seed notation: X = [phi(x_1)..],
    Q = I + X A X^T) holds by push-through, and the stable form computes G (I+AG)^{-1}."""
    X, y, k, _ = random_binary(10, m=20, d=3, kernel=kernel)
    prob = rm.ODML(X, y, lam=1.0, mu1=1.5, mu2=0.5, kernel=k)
    m, yy = prob.m, prob.y
    A = 2 * prob.mu1 / m * direct_P(yy)
    np.testing.assert_allclose(A @ yy, 0.0, atol=1e-14)
    assert np.linalg.matrix_rank(A) == m - 1                 # singular: A^{-1} does not exist
    assert np.linalg.cond(A) > 1e12
    Xs = prob.F.T                                            # the seed's X (columns = samples)
    Qs = np.eye(Xs.shape[0]) + Xs @ A @ Xs.T                 # nonsingular (r x r)
    G = prob.gram
    IAG = np.eye(m) + A @ G
    lhs = np.linalg.solve(Qs, Xs)                            # Q^{-1} X
    rhs = np.linalg.solve(IAG.T, Xs.T).T                     # X (I + AG)^{-1}
    np.testing.assert_allclose(lhs, rhs, atol=1e-10)
    # X^T Q^{-1} X = G (I + AG)^{-1} = the stable symmetric form
    np.testing.assert_allclose(yy[:, None] * (Xs.T @ lhs) * yy[None, :], prob.H, atol=1e-10)


def test_erratum_ldm_woodbury_equals_direct_on_rbf():
    """On an RBF instance (G > 0) Q = G(I + A_L G) is nonsingular and the seed's
    H = Y G Q^{-1} G Y equals ours."""
    X, y, k, _ = random_binary(11, m=30, d=3, kernel="rbf")
    prob = rm.LDM(X, y, C=0.5, lam1=0.7, lam2=0.4, kernel=k)
    G, yy, m = prob.gram, prob.y, prob.m
    Q = G + 4 * prob.lam1 / m ** 2 * (m * G @ G - G @ np.outer(yy, yy) @ G)   # seed 001
    A_L = 4 * prob.lam1 / m * direct_P(yy)
    np.testing.assert_allclose(Q, G @ (np.eye(m) + A_L @ G), atol=1e-12 * np.abs(Q).max())
    assert np.linalg.eigvalsh(G)[0] > 0
    H_seed = yy[:, None] * (G @ np.linalg.solve(Q, G)) * yy[None, :]
    np.testing.assert_allclose(prob.H, H_seed, atol=1e-8 * np.abs(prob.H).max())


def test_erratum_ldm_singular_Q_on_linear_kernel():
    """Linear kernel with d < m: G and Q are singular. An explicit inv(Q) gives a wrong H
    (or raises), a least-squares / pinv solve happens to give ours, and ours gives the right
    optimum: P* = -D*."""
    X, y, k, _ = random_binary(12, m=30, d=3, kernel="linear")
    prob = rm.LDM(X, y, C=0.5, lam1=0.7, lam2=0.4, kernel=k)
    G, yy, m = prob.gram, prob.y, prob.m
    Q = G + 4 * prob.lam1 / m ** 2 * (m * G @ G - G @ np.outer(yy, yy) @ G)
    assert np.linalg.matrix_rank(Q) <= 3 < m
    H = prob.H
    scale = np.abs(H).max()
    try:
        H_inv = yy[:, None] * (G @ np.linalg.inv(Q) @ G) * yy[None, :]
        assert np.abs(H_inv - H).max() > 1e-2 * scale          # explicit inverse: wrong H
    except np.linalg.LinAlgError:
        H_inv = None                                           # ... or undefined
    H_pinv = yy[:, None] * (G @ np.linalg.pinv(Q, rcond=1e-10) @ G) * yy[None, :]
    H_lstsq = yy[:, None] * (G @ np.linalg.lstsq(Q, G, rcond=1e-10)[0]) * yy[None, :]
    np.testing.assert_allclose(H_pinv, H, atol=1e-9 * scale)
    np.testing.assert_allclose(H_lstsq, H, atol=1e-9 * scale)
    # ours: strong duality with the primal
    p, d = prob.solve(form="primal"), prob.solve(form="dual")
    beta = d.variables["beta"]
    e = np.ones(m)
    mean = prob.lam2 / m

    def D_max(Hm):   # minus seed 001 eq. 12 with the constant kept
        v = beta + mean * e
        return beta.sum() - 0.5 * v @ Hm @ v

    assert abs(D_max(H) - p.objective) <= 1e-6 * (1 + p.objective)
    if H_inv is not None:
        assert abs(D_max(H_inv) - p.objective) > 1e-3 * (1 + p.objective)


# ---- certificates that fail --------------------------------------------------------------------
@pytest.mark.parametrize("family", ["ODML", "LDM"])
@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_certificate_fails_when_it_should(family, kernel):
    X, y, k, _ = random_binary(1, m=40, d=4, kernel=kernel)
    if family == "ODML":
        prob = rm.ODML(X, y, lam=20.0, mu1=1.0, mu2=0.5, kernel=k)
    else:
        prob = rm.LDM(X, y, C=0.5, lam1=0.5, lam2=0.5, kernel=k)
    name, upper = prob.dual_names[0], prob._upper
    ref = prob.solve()
    assert prob.certify(ref).ok
    # perturbed optimum
    cert = prob.certify(prob.solution_from(coef=ref.coef * 1.01))
    assert not cert.ok and "objective gap" in cert.failing
    # a dual point outside its box, above and below
    for bad_value in (1.5 * upper, -0.5 * upper):
        a = ref.variables[name].copy()
        a[np.argmax(a)] = bad_value
        cert = prob.certify(prob.solution_from(coef=ref.coef, dual={name: a}))
        assert not cert.ok and "dual feasibility" in cert.failing
    # another solver stopped early: 5 projected-gradient steps on the seed's dual
    H, q, _ = seed_dual_pieces(prob)
    a = projected_gradient(H, q, 0.0, upper, iters=5)
    cert = prob.certify(prob.solution_from(dual={name: a}))
    assert not cert.ok, str(cert)
    assert "objective gap" in cert.failing


@pytest.mark.parametrize("family", ["ODML", "LDM"])
def test_certify_from_w_only_derives_dual(family):
    X, y, _, _ = random_binary(2, m=50, d=3)
    prob = (rm.ODML(X, y, lam=30.0, mu1=2.0, mu2=1.0) if family == "ODML"
            else rm.LDM(X, y, C=0.3, lam1=1.0, lam2=1.0))
    check_certifies_from_w(prob, prob.solve(form="primal"))


def test_zero_feature_vector():
    """SPEC §2 edge case: phi(x_i) = 0 gives h_ii = 0; alpha_i sits at its bound lam/m."""
    X, y, _, _ = random_binary(13, m=25, d=3)
    X[4] = 0.0
    prob = rm.ODML(X, y, lam=4.0, mu1=0.8, mu2=0.3)
    assert prob.H[4, 4] == 0.0
    np.testing.assert_array_equal(prob.H[4], 0.0)
    p, d = prob.solve(form="primal"), prob.solve(form="dual")
    check_pair(prob, p, d)
    for sol in (p, d):
        assert np.isclose(sol.variables["alpha"][4], prob.lam / prob.m, rtol=1e-6)
        assert np.isclose(sol.variables["xi"][4], 1.0, rtol=1e-6)


def test_bad_input():
    X, y, _, _ = random_binary(3, m=10, d=2)
    for kw, name in [(dict(lam=0), "lam"), (dict(lam=-1.0), "lam"), (dict(mu1=-1e-3), "mu1"),
                     (dict(mu2=-2), "mu2"), (dict(lam=np.inf), "lam"), (dict(mu1=np.nan), "mu1")]:
        with pytest.raises(ValueError, match=name):
            rm.ODML(X, y, **kw)
    for kw, name in [(dict(C=0), "C"), (dict(C=-3), "C"), (dict(lam1=-1), "lam1"),
                     (dict(lam2=-0.1), "lam2")]:
        with pytest.raises(ValueError, match=name):
            rm.LDM(X, y, **kw)
    for cls in (rm.ODML, rm.LDM):
        check_rejects_bad_data(cls, X, y)
    with pytest.raises(ValueError, match="alpha"):
        rm.ODML(X, y).solution_from(dual={"beta": np.zeros(10)})
    with pytest.raises(ValueError, match="beta"):
        rm.LDM(X, y).solution_from(dual={"alpha": np.zeros(10)})


def test_dual_value_through_the_gram_on_a_singular_kernel():
    """The certificate's dual value of a kernel ODML/LDM is computed through the Gram, not
    the empirical feature map: the map drops eigenvalues below 1e-12 of the largest, and at
    large ``C`` what they carry moved ``D`` above ``P`` (ecoli1, RBF, 175 of 336 eigenvalues
    dropped: -2.2e-8 at C = 2^12, -6.6e-6 at C = 2^20, failing an optimal point). Checked
    against ``e^T beta - 1/2 v^T H v`` with ``H`` by the Woodbury form, at the reference
    solution for C = 2^12, relative 1e-10: through the truncated map the error is 2.2e-8;
    the two exact forms part by 1.7e-12 to 2.8e-12 as the Gram's entries move by one ulp
    (the Gram by expansion, centred or not, or by differences), the conditioning of the
    quantity, so a bound of 1e-12 sat on that floor."""
    from refmodels.odml import woodbury_H

    from strategies import keel

    X, y = keel("ecoli1", minmax=True)
    prob = rm.LDM(X, y, C=2.0**12, lam1=2**-8, lam2=2**-8,
                  kernel=rm.kernels.RBF(gamma=1.0 / X.shape[1]))
    beta = prob.solve().variables["beta"]
    v = prob._v(beta)
    exact = beta.sum() - 0.5 * v @ woodbury_H(prob.gram, prob.y, prob._A_coef) @ v
    assert abs(prob.dual_value({"beta": beta}) - exact) <= 1e-10 * (1.0 + abs(exact))
