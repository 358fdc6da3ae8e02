"""The numerical checks of the exercises (:mod:`.exercises`): each ``check(fn, rng)`` runs a
student's function on random instances and returns the :class:`~.core.Check` objects that
compare it with quantities computed independently (a bounded line search, CVXPY, the
problem classes of :mod:`refmodels`).
"""
from __future__ import annotations

import numpy as np

from .core import Check
from .numerics import _line_min


def _close(what, got, want, tol=1e-8):
    return Check(what, np.asarray(got, float), np.asarray(want, float), tol)


def box_step_check(fn, rng, lower=0.0, upper_inf=False, n=30):
    """fn(x_i, g_i, q_ii, upper) against a bounded line search on random 1-D quadratics."""
    got, want = [], []
    for _ in range(n):
        q = 0.1 + 3 * rng.random()
        x = rng.uniform(0, 2)
        g = rng.normal() * 2
        up = np.inf if upper_inf else rng.uniform(0.1, 3)
        x = min(x, up)

        def phi(t, x=x, g=g, q=q):
            return g * (t - x) + 0.5 * q * (t - x) ** 2
        hi = up if np.isfinite(up) else x + abs(g) / q + 10
        want.append(_line_min(phi, lower, hi))
        got.append(float(fn(x, g, q, up)))
    return [_close("your step = the minimiser of the 1-D quadratic on its box (bounded line "
                   "search), 30 random cases", got, want, 1e-6)]


def wrong_map_check(fn, rng, make):
    """A deliberately wrong stationarity map: the exercise passes when the map differs from
    the right one and the walk-through's checks catch it (they fail)."""
    prob, F, y, coef_of, right, cert_point = make(rng)
    w_wrong = np.asarray(fn(*coef_of), float)
    differs = np.max(np.abs(w_wrong - right)) / (1 + np.max(np.abs(right)))
    stat = Check("stationarity check with your map: w (primal solve) = your w", right,
                 w_wrong, 1e-6)
    cert = prob.certify(prob.solution_from(**cert_point(w_wrong)))
    worst = max(abs(s) for _, s in cert.residuals.values())
    return [Check("your map differs from the right one (by more than 1e-3)", 1e-3, differs,
                  0.0, kind="le"),
            Check("… and the stationarity check fails with it (its residual is above its "
                  f"tol: {stat.residual:.2e})", 1e-6, stat.residual, 0.0, kind="le"),
            Check(f"… and the KKT certificate of the resulting point fails ({worst:.2e})",
                  1e-6, worst, 0.0, kind="le")]


# ----------------------------------------------------------------------------- instances

def _svm_instance(rng, intercept=False):
    import refmodels as rm
    from .numerics import _binary_instance, solve

    X, y = _binary_instance(rng, m=14, d=2)
    prob = rm.SVM(X, y, C=1.0, kernel=rm.kernels.Linear(), fit_intercept=intercept)
    return prob, X, y, solve(prob, "dual")


def _odm_prob(rng):
    import refmodels as rm
    from .numerics import _binary_instance, solve

    X, y = _binary_instance(rng, m=12, d=2)
    X[:, 0] += y
    prob = rm.ODM(X, y, lam=20.0, mu=0.5, theta=0.3, kernel=rm.kernels.Linear())
    return prob, X, y, solve(prob, "dual")


# ----------------------------------------------------------------------------- SVM

def svm_dual_value_check(fn, rng):
    prob, X, y, d = _svm_instance(rng)
    Q = y[:, None] * (X @ X.T) * y[None, :]
    a = d.variables["alpha"]
    checks = [_close("your D(α*) = P* (strong duality)", fn(a, Q), d.objective, 1e-7)]
    for _ in range(5):
        ar = rng.uniform(0, prob.C, len(y))
        checks.append(Check("weak duality at a random feasible α: your D(α) ≤ P*",
                            float(fn(ar, Q)), d.objective, 1e-9, kind="le"))
    return checks


def svm_wrong_map(rng):
    prob, X, y, d = _svm_instance(rng)
    a = d.variables["alpha"]
    return (prob, X, y, (X, y, a), X.T @ (y * a), lambda w: {"w": w})


# ----------------------------------------------------------------------------- SVMb

def svmb_intercept_check(fn, rng):
    out = []
    for _ in range(4):
        prob, X, y, d = _svm_instance(rng, intercept=True)
        a = d.variables["alpha"]
        free = (a > 1e-6) & (a < prob.C - 1e-6)
        if not free.any():
            continue
        out.append(_close("your b = the intercept of the reference solve", fn(a, y, X @ X.T,
                                                                              prob.C),
                          d.intercept, 1e-6))
    return out or [Check("an instance with a free SV", 0.0, 1.0, 0.0)]


def svmb_pair_check(fn, rng):
    prob, X, y, d = _svm_instance(rng, intercept=True)
    Q = y[:, None] * (X @ X.T) * y[None, :]
    C = prob.C
    a = np.zeros(len(y))
    ip, ineg = int(np.flatnonzero(y > 0)[0]), int(np.flatnonzero(y < 0)[0])
    a[ip] = a[ineg] = 0.3
    g = Q @ a - 1
    checks = []
    for i, j in [(ip, ineg), (int(np.flatnonzero(y > 0)[1]), ineg)]:
        new = np.asarray(fn(a.copy(), g.copy(), Q, y.astype(float), C, i, j), float)

        def phi(t, i=i, j=j):
            z = a.copy()
            z[i] += y[i] * t
            z[j] -= y[j] * t
            return 0.5 * z @ Q @ z - z.sum()
        lo = max(-a[i] if y[i] > 0 else a[i] - C, -(C - a[j]) if y[j] > 0 else -a[j])
        hi = min(C - a[i] if y[i] > 0 else a[i], a[j] if y[j] > 0 else C - a[j])
        t = _line_min(phi, lo, hi)
        best = a.copy()
        best[i] += y[i] * t
        best[j] -= y[j] * t
        checks += [_close(f"pair ({i}, {j}): your α = the line-search minimiser along "
                          "y_iΔα_i = −y_jΔα_j", new, best, 1e-6),
                   _close("… keeps yᵀα", y @ new, y @ a, 1e-12),
                   Check("… stays in the box [0, C]", np.max(np.r_[-new, new - C]), 0.0, 1e-12,
                         kind="le")]
    return checks


def svmb_wss_check(fn, rng):
    checks = []
    for _ in range(20):
        m = 10
        y = np.where(rng.random(m) < 0.5, 1.0, -1.0)
        C = 1.0
        a = rng.choice([0.0, C, 0.5], size=m)
        g = rng.normal(size=m)
        up = ((a < C) & (y > 0)) | ((a > 0) & (y < 0))
        low = ((a < C) & (y < 0)) | ((a > 0) & (y > 0))
        if not up.any() or not low.any():
            continue
        v = -y * g
        i = int(np.argmax(np.where(up, v, -np.inf)))
        j = int(np.argmin(np.where(low, v, np.inf)))
        gi, gj = fn(a, g, y, C)
        checks.append(Check("your pair attains m(α) and M(α) (the maximal violating pair)",
                            np.array([v[int(gi)], v[int(gj)]]), np.array([v[i], v[j]]), 0.0))
    return checks


# ----------------------------------------------------------------------------- ODML / LDM

def _odml_instance(rng, family="ODML", kernel="rbf"):
    import refmodels as rm
    from .numerics import _binary_instance, solve

    X, y = _binary_instance(rng, m=12, d=3)
    kern = rm.kernels.RBF(gamma=0.5) if kernel == "rbf" else rm.kernels.Linear()
    if family == "ODML":
        prob = rm.ODML(X, y, lam=5.0, mu1=1.0, mu2=2.0, kernel=kern)
    else:
        prob = rm.LDM(X, y, C=0.5, lam1=0.7, lam2=2.0, kernel=kern)
    return prob, X, y, solve(prob, "dual")


def odml_variance_check(fn, rng):
    prob, X, y, d = _odml_instance(rng)
    F = prob.F
    M = np.asarray(fn(F, y.astype(float)), float)
    out = []
    for _ in range(5):
        w = rng.normal(size=F.shape[1])
        out.append(_close("wᵀ(your M)w = γ_v = (1/m)Σ(γ_i − γ_m)² at a random w", w @ M @ w,
                          np.var(y * (F @ w)), 1e-10))
    return out


def odml_constant_check(fn, rng):
    from .numerics import _box_cd

    prob, X, y, d = _odml_instance(rng)
    H, m = prob.H, prob.m
    mean = prob.mu2 / m
    lin = mean * H.sum(axis=1) - 1.0
    a = _box_cd(H, lin, prob.lam / m)
    paper = 0.5 * a @ H @ a + lin @ a
    return [_close("−(the paper's eq. 10 optimum + your constant) = P*",
                   -(paper + float(fn(H, prob.mu2, m))), d.objective, 1e-7)]


def odml_H_check(fn, rng):
    out = []
    for kernel in ("rbf", "linear"):
        prob, X, y, d = _odml_instance(rng, kernel=kernel)
        H = np.asarray(fn(prob.gram, y.astype(float), prob.mu1), float)
        out.append(_close(f"{kernel} kernel: your H = YG(I + AG)⁻¹Y", H, prob.H, 1e-8))
    return out


def ldm_params_check(fn, rng):
    import refmodels as rm

    from .numerics import solve

    prob, X, y, d = _odml_instance(rng, "LDM")
    lam, mu1, mu2 = fn(prob.C, prob.lam1, prob.lam2, prob.m)
    twin = solve(rm.ODML(X, y, lam=lam, mu1=mu1, mu2=mu2, kernel=prob.kernel), "dual")
    return [_close("ODML(your parameters) optimum = LDM optimum", twin.objective, d.objective,
                   1e-7),
            _close("… with the same w", twin.w, d.w, 1e-5)]


def ldm_grad_check(fn, rng):
    from .numerics import _binary_instance

    X, y = _binary_instance(rng, m=8, d=3)
    m = len(y)
    C, lam1, lam2 = 0.5, 0.7, 2.0
    w = rng.normal(size=3)
    g = y * (X @ w)
    Z = y[:, None] * X
    full = (w + lam1 / m ** 2 * sum(2 * (g[i] - g[j]) * (Z[i] - Z[j])
                                    for i in range(m) for j in range(m))
            - lam2 * Z.mean(axis=0) - C * Z[g < 1].sum(axis=0))
    e = sum(np.asarray(fn(w, X, y.astype(float), i, j, C, lam1, lam2), float)
            for i in range(m) for j in range(m)) / m ** 2
    return [_close("E over i, j drawn independently (all m² pairs) of your gradient = ∇f(w)",
                   e, full, 1e-10)]


def ldm_wrong_map(rng):
    prob, X, y, d = _odml_instance(rng, "LDM", "linear")
    a = d.variables["beta"]
    m = prob.m
    A = 4 * prob.lam1 / m * (np.eye(m) - np.outer(y, y) / m)
    v = a + prob.lam2 / m
    right = X.T @ np.linalg.solve(np.eye(m) + A @ prob.gram, y * v)
    return (prob, X, y, (X, y.astype(float), a, prob.lam1, prob.lam2), right,
            lambda w: {"w": w})


# ----------------------------------------------------------------------------- ODM

def odm_beta_check(fn, rng):
    got, want = [], []
    for _ in range(30):
        q, a, mu = 0.1 + 3 * rng.random(), 0.05 + rng.random(), 0.2 + rng.random()
        b = rng.uniform(0, 2)
        g = 2 * rng.normal()
        qq = q + a / mu

        def phi(t, b=b, g=g, qq=qq):
            return g * (t - b) + 0.5 * qq * (t - b) ** 2
        want.append(_line_min(phi, 0.0, b + abs(g) / qq + 10))
        got.append(float(fn(b, g, q, a, mu)))
    return [_close("your β_i = the minimiser over β_i ≥ 0 of the dual restricted to β_i "
                   "(bounded line search), 30 random cases", got, want, 1e-6)]


def odm_wrong_map(rng):
    prob, X, y, d = _odm_prob(rng)
    z, b = d.variables["zeta"], d.variables["beta"]
    return (prob, X, y, (X, y.astype(float), z, b), X.T @ (y * (z - b)), lambda w: {"w": w})


def odm_dual_function_check(fn, rng):
    prob, X, y, d = _odm_prob(rng)
    Q = y[:, None] * (X @ X.T) * y[None, :]
    a, mu, th = prob.a, prob.mu, prob.theta
    z, b = d.variables["zeta"], d.variables["beta"]
    out = [_close("your dual function at (ζ*, β*) = P*", fn(z, b, Q, a, mu, th), d.objective,
                  1e-7)]
    for _ in range(3):
        zr, br = rng.uniform(0, 1, len(y)), rng.uniform(0, 1, len(y))
        out.append(_close("your dual function at a random (ζ, β) = L at the stationary "
                          "(w, ξ, ε)", fn(zr, br, Q, a, mu, th),
                          prob.dual_value({"zeta": zr, "beta": br}), 1e-9))
    return out


# ----------------------------------------------------------------------------- McODM

def mcodm_B_check(fn, rng):
    from .mcodm import mcodm_instance

    X, y, _ = mcodm_instance(int(rng.integers(1000)))
    m, k, th = len(y), 3, 0.1
    G = X @ X.T
    out = []
    for _ in range(3):
        coef = rng.normal(size=(m, k))
        W = X.T @ coef
        i = int(rng.integers(m))
        gsum = G[i] @ coef - G[i, i] * coef[i]
        B = gsum + (1 - th)
        B[y[i]] = gsum[y[i]]
        out.append(_close("your B (from W, O(dk)) = B from the kernel sums",
                          fn(X[i], W, coef[i], G[i, i], int(y[i]), th), B, 1e-10))
    return out


def mcodm_block_check(fn, rng):
    from .mcodm import _blocks_cvxpy

    blocks = []
    for t in range(8):
        A = 0.5 + rng.random()
        B = rng.normal(size=4)
        D, E = A + 0.5 + rng.random(), A + 0.5 + rng.random()
        Fv = rng.normal() - (1.5 if t % 2 else -1.5)
        blocks.append((A, B, D, E, Fv, int(rng.integers(4))))
    ref = _blocks_cvxpy(blocks)
    got = []
    for bl in blocks:
        a_, b_ = fn(*bl)
        got.append(np.r_[np.asarray(a_, float), float(b_)])
    return [_close("your (α, β) = CVXPY's block optimum on 8 random blocks (both cases)",
                   np.array(got), np.array([np.r_[a, b] for a, b in ref]), 1e-6)]


def mcodm_M_check(fn, rng):
    import refmodels as rm

    from .mcodm import mcodm_instance

    X, y, _ = mcodm_instance(int(rng.integers(1000)))
    prob = rm.McODM(X, y, lam=1.0, mu=0.5, theta=0.1, kernel=rm.kernels.Linear())
    W = rng.normal(size=(2, 3))
    return [_close("your M(W) = max_{l≠y_i} s_l(x_i)", fn(X @ W, y), prob.M_from(W), 1e-12)]


# ----------------------------------------------------------------------------- SVMm

def svmm_epssvm_check(fn, rng):
    import cvxpy as cp

    from .numerics import _binary_instance, cvx_solve, solve
    import refmodels as rm

    X, y = _binary_instance(rng, m=12, d=2)
    Cs, lam = 2.0, 0.6
    w, b = cp.Variable(2), cp.Variable()
    g = cp.multiply(y, X @ w + b)
    val = cvx_solve(cp.Problem(cp.Minimize(cp.sum_squares(w) + lam * cp.sum(cp.pos(g - 1))
                                           + Cs * cp.sum(cp.pos(1 - g)))))
    C1, C2 = fn(Cs, lam)
    ours = solve(rm.SVMm(X, y, C1=C1, C2=C2, eps=0.0, kernel=rm.kernels.Linear()), "dual")
    return [_close("seed 003 eq. 6 optimum (CVXPY) = 2 × SVMm(your C₁, C₂, ε = 0) optimum",
                   val, 2 * ours.objective, 1e-6),
            _close("… with the same w", np.asarray(w.value, float), ours.w, 1e-5)]


def svmm_intercept_check(fn, rng):
    import refmodels as rm

    from .numerics import solve
    from .svmm import svmm_instance

    out = []
    for _ in range(3):
        X, y, _r = svmm_instance(int(rng.integers(1000)))
        prob = rm.SVMm(X, y, C1=1.0, C2=0.5, eps=0.3, kernel=rm.kernels.Linear())
        d = solve(prob, "dual")
        al, be = d.variables["alpha"], d.variables["beta"]
        out.append(_close("your b = the reference intercept",
                          fn(y * (al - be), prob.gram, y.astype(float), al, be, 1.0, 0.5, 0.3),
                          d.intercept, 1e-6))
    return out


def svmm_fda_check(fn, rng):
    import cvxpy as cp

    import refmodels as rm

    from .numerics import _binary_instance, cvx_solve, solve

    X, y = _binary_instance(rng, m=14, d=2)
    Sw = sum(np.cov(X[y == c].T, bias=True) * np.sum(y == c) for c in (-1, 1))
    lam = 0.8
    w, b, xi = cp.Variable(2), cp.Variable(), cp.Variable(len(y))
    val = cvx_solve(cp.Problem(cp.Minimize(0.5 * cp.quad_form(w, np.eye(2) + lam * Sw)
                                           + cp.sum(xi)),
                               [cp.multiply(y, X @ w + b) >= 1 - xi, xi >= 0]))
    T = np.asarray(fn(Sw, lam), float)
    ours = solve(rm.SVM(X @ T, y, C=1.0, fit_intercept=True), "dual").objective
    return [_close("SVM on x̃ = Tx (your T) optimum = SVM-FDA optimum (CVXPY)", ours, val,
                   1e-6)]


# ----------------------------------------------------------------------------- MKLm

def mklm_grad_check(fn, rng):
    import refmodels as rm

    from .mklm import InnerJ, mklm_instance

    X, y, ks, _ = mklm_instance(int(rng.integers(1000)))
    prob = rm.MKLm(X, y, kernels=ks, C1=4.0, C2=0.2, eps=0.1)
    J = InnerJ(prob.grams, y.astype(float), 4.0, 0.2, 0.1)
    mu = np.array([0.4, 0.6])
    _, v = J(mu)
    h = 1e-4
    fd = [(J(mu + h * e)[0] - J(mu - h * e)[0]) / (2 * h) for e in np.eye(2)]
    return [_close("your ∇J(μ) = central finite differences of J", fn(v, prob.grams), fd, 1e-5)]


def mklm_direction_check(fn, rng):
    from .mklm import reduced_gradient_direction

    out = []
    for _ in range(10):
        k = 4
        mu = rng.dirichlet(np.ones(k))
        mu[rng.integers(k)] = 0.0
        mu = mu / mu.sum()
        g = rng.normal(size=k)
        D = np.asarray(fn(mu, g), float)
        out += [_close("your D = SimpleMKL's reduced gradient", D,
                       reduced_gradient_direction(mu, g), 1e-12),
                _close("Σ_k D_k = 0 (stays on the simplex)", D.sum(), 0.0, 1e-12)]
    return out


def mklm_step_check(fn, rng):
    out = []
    for _ in range(10):
        k = 4
        mu = rng.dirichlet(np.ones(k))
        D = rng.normal(size=k)
        D -= D.mean()
        s = float(fn(mu, D))
        new = mu + s * D
        out += [Check("μ + s_max D ≥ 0", -np.min(new), 0.0, 1e-12, kind="le"),
                _close("… with one weight exactly at 0 (the largest step)", np.min(new), 0.0,
                       1e-12)]
    return out


# ----------------------------------------------------------------------------- DRR

def drr_prox_check(fn, rng):
    import cvxpy as cp

    from .numerics import cvx_solve

    groups = [np.arange(0, 3), np.arange(3, 7), np.arange(7, 9)]
    out = []
    for _ in range(4):
        v = rng.normal(size=9)
        t = 0.5 * rng.random() + 0.1
        x = cp.Variable(9)
        cvx_solve(cp.Problem(cp.Minimize(0.5 * cp.sum_squares(x - v)
                                         + t * sum(cp.norm(x[g], 2) for g in groups))))
        out.append(_close("your prox = CVXPY's minimiser of ½‖x − v‖² + tΣ_c‖x_c‖",
                          fn(v, t, groups), x.value, 1e-6))
    return out


def drr_dualnorm_check(fn, rng):
    import cvxpy as cp

    from .numerics import cvx_solve

    groups = [np.arange(0, 3), np.arange(3, 7), np.arange(7, 9)]
    out = []
    for _ in range(4):
        u = rng.normal(size=9)
        w = cp.Variable(9)
        val = cvx_solve(cp.Problem(cp.Maximize(u @ w),
                                   [sum(cp.norm(w[g], 2) for g in groups) <= 1]))
        out.append(_close("your dual norm = max uᵀw over ‖w|C‖_{2,1} ≤ 1 (CVXPY)",
                          fn(u, groups), val, 1e-7))
    return out


def drr_drm_check(fn, rng):
    import refmodels as rm

    from .numerics import solve

    m = 12
    y = np.repeat(np.arange(3), 4)
    X = rng.normal(size=(m, 3)) + np.eye(3)[y] * 1.5
    Xt = rng.normal(size=(1, 3))
    drm = rm.DRM(X, y, Xt, alpha=1.0, beta=0.2, kernel=rm.kernels.RBF(gamma=0.3))
    w = solve(drm, "primal").variables["W"][:, 0]
    return [_close("your DRM coefficients = CVXPY's optimum",
                   fn(drm.K, drm.H, drm.B, drm.K_x[:, 0], 1.0, 0.2), w, 1e-6)]
