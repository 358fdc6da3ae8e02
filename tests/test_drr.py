"""DRR and DRM (SPEC §8; seed 004): Prop. IV.1, special cases, primal = dual, the closed
form, certificates that hold and fail, decisions, a user's regularizer, bad input."""
import cvxpy as cp
import numpy as np
import pytest
from hypothesis import given, strategies as st

import refmodels as rm
from refmodels.regularizers import Regularizer
from contract import primal_and_dual, solve_trusted
from strategies import UNIT, log_uniform, psd_gram, scales

INF = np.inf


def make_instance(seed, m, d, g, n_test, kname, labels="int", scale=UNIT):
    """``(X, y, X_test, kernel, X_raw, Xt_raw, kfun)``: every class present, labels in an
    arbitrary (non 0..g-1) encoding, features at ``scale`` (:class:`strategies.Scale`); for
    ``precomputed`` the data are Gram blocks."""
    rng = np.random.default_rng(seed)
    codes = np.concatenate([np.arange(g), rng.integers(0, g, m - g)])
    rng.shuffle(codes)
    centers = 1.5 * rng.normal(size=(g, d))
    X = centers[codes] + rng.normal(size=(m, d))
    Xt = centers[rng.integers(0, g, n_test)] + rng.normal(size=(n_test, d))
    if scale != UNIT:
        X, Xt = scale.features(X, rng), scale.features(Xt, duplicates=False)
    values = np.array([10, -3, 7, 42, 5])[:g] if labels == "int" else np.array(list("cabde"))[:g]
    y = values[codes]
    if kname == "linear":
        k = rm.kernels.Linear()
    elif kname == "rbf":
        k = rm.kernels.RBF(gamma=float(rng.uniform(0.1, 1.0)) / d)
    elif kname == "poly":
        k = rm.kernels.Polynomial(degree=2, gamma=1.0 / d, coef0=1.0)
    else:
        base = rm.kernels.RBF(gamma=0.5 / d)
        return psd_gram(base.gram(X)), y, base.cross(Xt, X), rm.kernels.Precomputed(), X, Xt, base
    return X, y, Xt, k, X, Xt, k


@st.composite
def drr_data(draw, max_m=25, kernels=("linear", "rbf", "poly", "precomputed")):
    seed = draw(st.integers(0, 2**32 - 1))
    g = draw(st.integers(2, 4))
    m = draw(st.integers(g + 1, max_m))
    d = draw(st.integers(1, 6))
    n_test = draw(st.integers(1, 3))
    kname = draw(st.sampled_from(kernels))
    scale = draw(scales())
    return make_instance(seed, m, d, g, n_test, kname, scale=scale) + (scale,)


def explicit_matrices(X_raw, y, kfun):
    """K, H, B, Q_D(alpha) built independently of refmodels.drr (explicit double loop for B)."""
    K = kfun.cross(X_raw, X_raw)
    K = 0.5 * (K + K.T)
    H = np.diag(np.diag(K))
    B = np.zeros_like(K)
    for i in range(len(y)):
        for j in range(len(y)):
            if y[i] == y[j]:
                B[i, j] = K[i, j] / np.sum(y == y[i])
    return K, H, B


# ---- Prop. IV.1 and the matrices -----------------------------------------------------------------
@given(data=drr_data())
def test_H_minus_B_is_psd_and_matrices_match(data):
    X, y, Xt, k, X_raw, Xt_raw, kfun, _ = data
    prob = rm.DRR(X, y, Xt, alpha=1.0, beta=1.0, kernel=k)
    K, H, B = explicit_matrices(X_raw, y, kfun)
    np.testing.assert_allclose(prob.B, B, atol=1e-12)
    np.testing.assert_allclose(prob.H, H, atol=1e-12)
    scale = 1.0 + np.max(np.abs(K))
    assert np.linalg.eigvalsh(prob.H - prob.B)[0] >= -1e-10 * scale          # Prop. IV.1
    assert np.linalg.eigvalsh(prob.B - prob.K / prob.m)[0] >= -1e-10 * scale  # Prop. IV.2
    np.testing.assert_allclose(prob.L @ prob.L.T, prob.Q_D, atol=1e-9 * scale)
    np.testing.assert_allclose(prob.K_x, kfun.cross(X_raw, Xt_raw), atol=1e-12)


# ---- strong duality (SPEC §8's list) ---------------------------------------------------------------
DUALITY_CASES = [(2, 1, "identity"), (1.5, 3, "identity"), (INF, 1, "identity"),
                 (1, 1, "identity"), (3, 2, "half_square"), (2, 2, 3)]


@pytest.mark.parametrize("q,r,rho", DUALITY_CASES)
@given(data=drr_data(), alpha=log_uniform(1e-2, 1e2), beta=log_uniform(1e-2, 1e1))
def test_primal_equals_dual_and_certificates(q, r, rho, data, alpha, beta):
    X, y, Xt, k, *_, scale = data
    prob = rm.DRR(X, y, Xt, alpha=alpha, beta=beta, q=q, r=r, rho=rho, kernel=k)
    pair = primal_and_dual(prob, scale)
    if pair is None:            # off the unit scale: the trust property only
        return
    p, d = pair
    assert p.objective.shape == (prob.n_test,) and p.coef.shape == (prob.m, prob.n_test)
    # the dual's own value equals the primal value (strong duality), and z = L^T w
    np.testing.assert_array_less(np.abs(d.info["dual_objective"] - p.objective),
                                 1e-6 * (1 + np.abs(p.objective)))
    for sol in (p, d):
        cert = prob.certify(sol, reference=p)
        assert cert.ok, str(cert)
        assert "duality gap" in cert.residuals


@given(data=drr_data(), alpha=log_uniform(1e-2, 1e2), beta=log_uniform(1e-3, 1e2))
def test_drm_closed_form_equals_cvxpy(data, alpha, beta):
    X, y, Xt, k, *_, scale = data
    drm = rm.DRM(X, y, Xt, alpha=alpha, beta=beta, kernel=k)
    sols = solve_trusted(drm, scale, drm.closed_form, lambda: drm.solve(form="primal"))
    if not scale.good:          # off the unit scale: the trust property (solve_trusted)
        return
    cf, p = sols
    np.testing.assert_array_less(np.abs(p.objective - cf.objective),
                                 1e-6 * (1 + np.abs(cf.objective)))
    # eq. 13 directly (explicit solve; the reference uses Cholesky)
    A = drm.K + alpha * (drm.H - drm.B) + beta * np.eye(drm.m)
    np.testing.assert_allclose(cf.coef, np.linalg.solve(A, drm.K_x), rtol=1e-7,
                               atol=1e-9 * (1 + np.max(np.abs(cf.coef))))
    # DRR with (2, 2, 1/2 t^2) is DRM
    drr = rm.DRR(X, y, Xt, alpha=alpha, beta=beta, q=2, r=2, rho="half_square", kernel=k)
    np.testing.assert_allclose(drr.solve(form="closed_form").coef, cf.coef)
    assert drm.certify(p).ok and drm.certify(cf).ok
    assert drm.family == "DRR"


# ---- special cases (SPEC §8) -------------------------------------------------------------------------
def test_alpha_zero_drm_is_kernel_ridge():
    """alpha = 0: w = (K + beta I)^{-1} K_x. sklearn's KernelRidge solves (K + alpha I) c = Y;
    fitted on the identity targets Y = I_m, its prediction at x is K_x^T (K + beta I)^{-1} = w^T."""
    from sklearn.kernel_ridge import KernelRidge

    X, y, Xt, k, *_ = make_instance(0, 20, 3, 3, 4, "rbf")
    beta = 0.37
    drm = rm.DRM(X, y, Xt, alpha=0.0, beta=beta, kernel=k)
    W = drm.closed_form().coef
    np.testing.assert_allclose(W, np.linalg.solve(drm.K + beta * np.eye(20), drm.K_x), atol=1e-12)
    kr = KernelRidge(alpha=beta, kernel="rbf", gamma=k.gamma).fit(X, np.eye(20))
    np.testing.assert_allclose(kr.predict(Xt).T, W, atol=1e-10)
    assert np.max(np.abs(drm.solve(form="primal").coef - W)) <= 1e-6 * (1 + np.max(np.abs(W)))


def test_alpha_zero_l1_is_kernel_lasso():
    """alpha = 0, (q, r) = (1, 1), rho = t: min 1/2 w^T K w - K_x^T w + beta ||w||_1, compared
    with an independent CVXPY lasso and with sklearn's Lasso after a Cholesky transform
    (K = A^T A, b = A^{-T} K_x: 1/2||A w - b||^2 = 1/2 w^T K w - K_x^T w + const)."""
    from scipy.linalg import cholesky, solve_triangular
    from sklearn.linear_model import Lasso

    X, y, Xt, k, *_ = make_instance(1, 18, 4, 2, 2, "rbf")
    beta = 0.05
    prob = rm.DRR(X, y, Xt, alpha=0.0, beta=beta, q=1, r=1, rho="identity", kernel=k)
    sol = prob.solve()
    K = k.gram(X)
    for j in range(2):
        kx = k.cross(X, Xt[j:j + 1]).ravel()
        w = cp.Variable(18)
        lasso = cp.Problem(cp.Minimize(0.5 * cp.quad_form(w, cp.psd_wrap(K)) - kx @ w
                                       + beta * cp.norm1(w)))
        lasso.solve(solver="CLARABEL")
        assert abs(lasso.value - sol.objective[j]) <= 1e-6 * (1 + abs(lasso.value))
        A = cholesky(K + 1e-12 * np.eye(18), lower=False)
        b = solve_triangular(A, kx, trans="T")
        las = Lasso(alpha=beta / 18, fit_intercept=False, tol=1e-14, max_iter=10**6).fit(A, b)
        P_sk = prob.primal_value(np.column_stack([las.coef_ if i == j else sol.coef[:, i]
                                                  for i in range(2)]))[j]
        assert abs(P_sk - sol.objective[j]) <= 1e-6 * (1 + abs(sol.objective[j]))


def test_alpha_zero_group_lasso():
    X, y, Xt, k, *_ = make_instance(2, 20, 3, 3, 2, "rbf")
    beta = 0.1
    prob = rm.DRR(X, y, Xt, alpha=0.0, beta=beta, q=2, r=1, rho="identity", kernel=k)
    sol = prob.solve(form="dual")
    K = k.gram(X)
    for j in range(2):
        kx = k.cross(X, Xt[j:j + 1]).ravel()
        w = cp.Variable(20)
        pen = sum(cp.norm(w[np.flatnonzero(y == c)], 2) for c in np.unique(y))
        gl = cp.Problem(cp.Minimize(0.5 * cp.quad_form(w, cp.psd_wrap(K)) - kx @ w + beta * pen))
        gl.solve(solver="CLARABEL")
        assert abs(gl.value - sol.objective[j]) <= 1e-6 * (1 + abs(gl.value))


@given(data=drr_data(kernels=("rbf", "linear")), alpha=log_uniform(1e-2, 1e1))
def test_objective_is_eq8(data, alpha):
    """primal_value against eq. 8 written from scratch (explicit K, H, B)."""
    X, y, Xt, k, X_raw, Xt_raw, kfun, _ = data
    prob = rm.DRR(X, y, Xt, alpha=alpha, beta=0.5, q=2, r=1, rho=3, kernel=k)
    K, H, B = explicit_matrices(X_raw, y, kfun)
    Kx = kfun.cross(X_raw, Xt_raw)
    W = np.random.default_rng(0).normal(size=(prob.m, prob.n_test))
    for j in range(prob.n_test):
        w = W[:, j]
        norms = [np.linalg.norm(w[y == c]) for c in np.unique(y)]
        P = 0.5 * w @ (K + alpha * H - alpha * B) @ w - Kx[:, j] @ w + 0.5 * np.sum(norms) ** 3 / 3
        assert abs(prob.primal_value(W)[j] - P) <= 1e-10 * (1 + abs(P))


# ---- certificates that fail ---------------------------------------------------------------------------
@pytest.mark.parametrize("q,r,rho", [(2, 1, "identity"), (2, 2, "half_square"), (3, 2, "half_square")])
def test_certificate_fails_for_perturbed_optimum(q, r, rho):
    X, y, Xt, k, *_ = make_instance(3, 20, 3, 3, 3, "rbf")
    prob = rm.DRR(X, y, Xt, alpha=0.5, beta=0.2, q=q, r=r, rho=rho, kernel=k)
    ref = prob.solve()
    assert prob.certify(ref).ok
    bad = prob.solution_from(coef=ref.coef * 1.01)
    cert = prob.certify(bad)
    assert not cert.ok and "objective gap" in cert.failing and "duality gap" in cert.failing
    # only one test point perturbed: still caught (worst over test points)
    W = ref.coef.copy()
    W[:, 1] += 1e-2
    cert = prob.certify(prob.solution_from(coef=W), reference=False)
    assert not cert.ok and cert.failing == ["duality gap"]
    # a wrong dual point z with the right w: the duality gap fails
    Z = prob.L.T @ ref.coef
    cert = prob.certify(prob.solution_from(coef=ref.coef, dual={"z": 1.05 * Z}), reference=False)
    assert not cert.ok


def test_certify_user_point_without_z_uses_LTw():
    X, y, Xt, k, *_ = make_instance(4, 15, 2, 2, 2, "poly")
    prob = rm.DRR(X, y, Xt, alpha=2.0, beta=0.3, q=INF, r=1, rho="identity", kernel=k)
    ref = prob.solve(form="dual")
    cert = prob.certify(prob.solution_from(W=ref.coef), reference=ref)
    assert cert.ok, str(cert)
    assert any("L^T w" in n for n in cert.notes)


# ---- a user's regularizer --------------------------------------------------------------------------------
class ElasticNet(Regularizer):
    """R(w) = ||w||_1 + 1/2 ||w||^2 (no conjugate given: certify uses the prox-gradient residual)."""

    def expr(self, w, groups):
        return cp.norm1(w) + 0.5 * cp.sum_squares(w)

    def value(self, w, groups):
        return float(np.sum(np.abs(w)) + 0.5 * w @ w)

    def prox(self, v, step, groups):
        return np.sign(v) * np.maximum(np.abs(v) - step, 0.0) / (1.0 + step)


@pytest.mark.parametrize("kname", ["rbf", "linear", "precomputed"])
def test_user_regularizer(kname):
    X, y, Xt, k, X_raw, Xt_raw, kfun = make_instance(5, 22, 3, 3, 2, kname)
    reg = ElasticNet()
    assert rm.regularizers.check(reg, dim=6).ok
    prob = rm.DRR(X, y, Xt, alpha=0.7, beta=0.2, kernel=k, regularizer=reg)
    sol = prob.solve(form="primal")
    cert = prob.certify(sol)
    assert cert.ok, str(cert)
    assert "prox-gradient residual" in cert.residuals and "duality gap" not in cert.residuals
    # an independent CVXPY solve of eq. 8 with this R
    K, H, B = explicit_matrices(X_raw, y, kfun)
    Q = K + 0.7 * (H - B)
    Kx = kfun.cross(X_raw, Xt_raw)
    for j in range(2):
        w = cp.Variable(22)
        obj = (0.5 * cp.quad_form(w, cp.psd_wrap(Q)) - Kx[:, j] @ w
               + 0.2 * (cp.norm1(w) + 0.5 * cp.sum_squares(w)))
        pr = cp.Problem(cp.Minimize(obj))
        pr.solve(solver="CLARABEL")
        assert abs(pr.value - sol.objective[j]) <= 1e-6 * (1 + abs(pr.value))
        assert np.linalg.norm(w.value - sol.coef[:, j]) <= 1e-4 * (1 + np.linalg.norm(w.value))
    # a perturbed point fails the prox-gradient residual
    cert = prob.certify(prob.solution_from(coef=sol.coef + 1e-3), reference=False)
    assert not cert.ok and "prox-gradient residual" in cert.failing
    with pytest.raises(ValueError, match="conjugate_expr"):
        prob.solve(form="dual")


@pytest.mark.parametrize("kname", ["linear", "rbf"])
@pytest.mark.parametrize("reg", [ElasticNet(), rm.regularizers.GroupNorm(2, 1, "identity"),
                                 rm.regularizers.GroupNorm(2, 1, 3)])
def test_refine_lowers_the_objective_to_a_small_residual(kname, reg):
    """The accelerated steps that polish CVXPY's primal point (``DRR._refine``), from a
    point 1e-2 away from the optimum: the objective ends below the start's and below the
    plain prox-gradient steps' from the same start, and the residual that certify checks
    when a regularizer has no conjugate ends below 1e-8 (from ~1e-2), within
    ``REFINE_STEPS``."""
    X, y, Xt, k, *_ = make_instance(11, 30, 3, 3, 2, kname)
    prob = rm.DRR(X, y, Xt, alpha=0.7, beta=0.2, kernel=k, regularizer=reg)
    sol = prob.solve(form="primal")
    rng = np.random.default_rng(0)
    t = 1.0 / prob.sigma_max
    for j in range(prob.n_test):
        w0 = sol.coef[:, j] + 1e-2 * rng.normal(size=prob.m)
        res0 = np.divide(*prob.prox_gradient_residual(w0, j))
        assert res0 > 1e-4
        w = prob._refine(w0.copy(), j)
        Wj = sol.coef.copy()

        def P(v):                                   # eq. 8 at test point j
            Wj[:, j] = v
            return prob.primal_value(Wj)[j]

        assert P(w) < P(w0)
        assert np.divide(*prob.prox_gradient_residual(w, j)) <= 1e-8
        assert abs(P(w) - sol.objective[j]) <= 1e-9 * (1 + abs(sol.objective[j]))
        # plain steps (no momentum), as many as the accelerated ones may take
        v, kx = w0.copy(), prob.K_x[:, j]
        for _ in range(prob.REFINE_STEPS):
            nxt = reg.prox(v - t * (prob.Q_D @ v - kx), t * prob.beta, prob.groups)
            if not P(nxt) < P(v):
                break
            v = nxt
        assert P(w) <= P(v) + 1e-12 * (1 + abs(P(v)))


class RefusingProx(ElasticNet):
    def prox(self, v, step, groups):
        raise ValueError("a prox at values it cannot take")


def test_refine_keeps_a_point_it_cannot_improve():
    """A non-finite start, or a prox that raises ValueError, returns the start."""
    X, y, Xt, k, *_ = make_instance(12, 20, 2, 2, 1, "linear")
    prob = rm.DRR(X, y, Xt, alpha=0.5, beta=0.5, q=2, r=1, rho="identity", kernel=k)
    w = np.full(prob.m, np.nan)
    assert prob._refine(w, 0) is w
    prob = rm.DRR(X, y, Xt, alpha=0.5, beta=0.5, kernel=k, regularizer=RefusingProx())
    w = np.ones(prob.m)
    assert prob._refine(w, 0) is w


# ---- decisions (eqs. 10-11) -------------------------------------------------------------------------------
def test_decision_function_and_predict():
    X, y, Xt, k, *_ = make_instance(6, 24, 2, 3, 3, "rbf", labels="str")
    prob = rm.DRM(X, y, Xt, alpha=1.0, beta=0.1, kernel=k)
    sol = prob.closed_form()
    K, Kx = prob.K, prob.K_x
    delta = np.zeros((3, 3))
    for j in range(3):
        w = sol.coef[:, j]
        for ci, c in enumerate(prob.classes_):
            wc = np.where(y == c, w, 0.0)
            wb = w - wc
            delta[j, ci] = wc @ K @ wc + wb @ K @ wb - 2 * wc @ Kx[:, j]
    np.testing.assert_allclose(prob.dissimilarities(sol), delta, atol=1e-12)
    np.testing.assert_allclose(prob.decision_function(sol), -delta, atol=1e-12)
    pred = prob.predict(sol)
    assert list(pred) == [prob.classes_[i] for i in np.argmin(delta, axis=1)]
    assert set(pred) <= set(y)
    with pytest.raises(ValueError, match="X_new"):
        prob.decision_function(sol, Xt)


def test_predicts_well_separated_classes():
    rng = np.random.default_rng(7)
    centers = np.array([[0.0, 0.0], [6.0, 0.0], [0.0, 6.0]])
    codes = np.repeat([0, 1, 2], 6)
    X = centers[codes] + 0.3 * rng.normal(size=(18, 2))
    Xt = centers + 0.3 * rng.normal(size=(3, 2))
    labels = np.array([5, 1, 9])
    for q, r, rho in [(2, 2, "half_square"), (2, 1, "identity")]:
        prob = rm.DRR(X, labels[codes], Xt, alpha=1.0, beta=0.1, q=q, r=r, rho=rho,
                      kernel=rm.kernels.RBF(0.5))
        assert list(prob.predict(prob.solve())) == [5, 1, 9]


def test_singleton_class_is_fine():
    X, y, Xt, k, *_ = make_instance(8, 10, 2, 2, 1, "rbf")
    y = y.copy()
    y[0] = 99                                    # a class with one member
    prob = rm.DRR(X, y, Xt, alpha=1.0, beta=0.5, q=2, r=1, rho="identity", kernel=k)
    assert np.all(prob.H[0, 0] - prob.B[0, 0] == 0)
    p, d = prob.solve(), prob.solve(form="dual")
    assert abs(p.objective[0] - d.objective[0]) <= 1e-6 * (1 + abs(p.objective[0]))
    assert prob.certify(p).ok


# ---- bad input -------------------------------------------------------------------------------------------------
def test_bad_input():
    X, y, Xt, k, *_ = make_instance(9, 12, 3, 3, 2, "linear")
    with pytest.raises(ValueError, match="X.*finite"):
        rm.DRR(np.where(X > 1, np.nan, X), y, Xt, 1.0, 1.0)
    with pytest.raises(ValueError, match="X_test.*finite"):
        rm.DRR(X, y, np.full_like(Xt, np.nan), 1.0, 1.0)
    with pytest.raises(ValueError, match="X_test.*features"):
        rm.DRR(X, y, Xt[:, :2], 1.0, 1.0)
    with pytest.raises(ValueError, match="X_test.*2-D"):
        rm.DRR(X, y, Xt[0], 1.0, 1.0)
    with pytest.raises(ValueError, match="alpha"):
        rm.DRR(X, y, Xt, -0.1, 1.0)
    for beta in (0.0, -1.0, np.nan):
        with pytest.raises(ValueError, match="beta"):
            rm.DRM(X, y, Xt, 1.0, beta)
    with pytest.raises(ValueError, match="beta"):
        rm.DRR(X, y, Xt, 1.0, 0.0, q=2, r=1, rho="identity")
    for kw in (dict(q=0.5), dict(r=0.5), dict(rho=0.5)):
        with pytest.raises(ValueError, match="non-convex"):
            rm.DRR(X, y, Xt, 1.0, 1.0, **kw)
    with pytest.raises(ValueError, match="rho"):
        rm.DRR(X, y, Xt, 1.0, 1.0, rho="square")
    with pytest.raises(ValueError, match="at least 2 classes"):
        rm.DRR(X, np.zeros(12), Xt, 1.0, 1.0)
    with pytest.raises(ValueError, match="one label per row"):
        rm.DRR(X, y[:-1], Xt, 1.0, 1.0)
    with pytest.raises(ValueError, match="regularizer"):
        rm.DRR(X, y, Xt, 1.0, 1.0, regularizer="l1")
    with pytest.raises(ValueError, match="not both"):
        rm.DRR(X, y, Xt, 1.0, 1.0, q=1, regularizer=ElasticNet())
    prob = rm.DRR(X, y, Xt, 1.0, 1.0, q=2, r=1, rho="identity")
    with pytest.raises(ValueError, match="closed form"):
        prob.closed_form()
    with pytest.raises(ValueError, match="form"):
        prob.solve(form="both")
    with pytest.raises(ValueError, match="coef"):
        prob.solution_from(coef=np.zeros((12, 3)))
    with pytest.raises(ValueError, match="coef"):
        prob.solution_from(coef=np.full((12, 2), np.nan))
    with pytest.raises(ValueError, match="z"):
        prob.solution_from(coef=np.zeros((12, 2)), dual={"z": np.zeros(3)})
    with pytest.raises(ValueError, match="reference"):
        prob.certify(prob.solution_from(coef=np.zeros((12, 2))), reference="yes")
    Xp, yp, Ktp, kp, *_ = make_instance(9, 12, 3, 3, 2, "precomputed")
    with pytest.raises(ValueError, match="X_test.*columns"):
        rm.DRR(Xp, yp, Ktp[:, :5], 1.0, 1.0, kernel=kp)


def test_construction_is_lazy():
    X, y, Xt, k, *_ = make_instance(10, 12, 3, 3, 2, "rbf")
    ws = rm.Workspace()
    with rm.workspace.using(ws):
        rm.DRM(X, y, Xt, 1.0, 1.0, kernel=k)
    assert len(ws) == 0
