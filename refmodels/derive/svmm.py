"""Walk-through of SVMm / ε-SVM.

SVMm and ε-SVM (seed 003): the primal in CVXPY, the SMO pair step and
the walk-through.
"""
from __future__ import annotations

import numpy as np

from . import figures as fg
from .algebra import algebra_lines, evaluate
from .core import Check, Erratum, Figure, Note, Step, Steps, Walkthrough
from .numerics import _binary_instance, _certificate_check, _line_min, cvx_solve, solve


def _svmm_primal_cvxpy(X, y, C1, C2, eps, half=True):
    """Seed 003 eq. 14 over (w, b, ξ, η) with ½‖w‖² (``half``) or ‖w‖² as printed."""
    import cvxpy as cp

    m, d = X.shape
    w, b, xi, eta = cp.Variable(d), cp.Variable(), cp.Variable(m), cp.Variable(m)
    g = cp.multiply(y, X @ w + b)
    pr = cp.Problem(cp.Minimize((0.5 if half else 1.0) * cp.sum_squares(w) + C1 * cp.sum(xi)
                                + C2 * cp.sum(eta)),
                    [g >= 1 - xi, g <= 1 + eps + eta, xi >= 0, eta >= 0])
    value = cvx_solve(pr)
    return value, np.asarray(w.value, float), float(b.value)


def smo_pair_step(u, s, c, up, G, idx, p, q):
    """SMO's closed-form step on a pair of dual coordinates (seed 003's SVMm dual, eq. 15).

    The dual ``min ½vᵀGv + cᵀu`` over copies ``u_k ∈ [0, up_k]`` (an α_i or a β_i) with
    ``v_i = Σ_{k: idx_k = i} s_k u_k`` (``s_k = y_i`` for α_i, ``−y_i`` for β_i) and
    ``eᵀv = 0``. Moving ``u_p += s_p t``, ``u_q −= s_q t`` keeps ``eᵀv``; along ``t`` the
    objective is ``φ(0) + t(s_p g_p − s_q g_q) + ½t²η`` with ``g_k = s_k(Gv)_{idx_k} + c_k``
    and ``η = G_ii + G_jj − 2G_ij``: ``t* = −(s_p g_p − s_q g_q)/η`` clipped to the box.
    Returns the new ``u``."""
    i, j = idx[p], idx[q]
    v = np.zeros(G.shape[0])
    np.add.at(v, idx, s * u)
    gv = G @ v
    gp, gq = s[p] * gv[i] + c[p], s[q] * gv[j] + c[q]
    eta = G[i, i] + G[j, j] - 2 * G[i, j]
    slope = s[p] * gp - s[q] * gq
    # t range keeping both in their boxes
    lo_p, hi_p = sorted(((0 - u[p]) * s[p], (up[p] - u[p]) * s[p]))
    lo_q, hi_q = sorted(((u[q] - up[q]) * s[q], (u[q] - 0) * s[q]))
    lo, hi = max(lo_p, lo_q), min(hi_p, hi_q)
    t = -slope / eta if eta > 1e-14 else (hi if slope < 0 else lo)
    t = min(max(t, lo), hi)
    u = u.copy()
    u[p] += s[p] * t
    u[q] -= s[q] * t
    return u


C1, C2, EPS = 1.0, 0.5, 0.3


def svmm_instance(seed):
    """12 points in 2-D and a far point placed along the optimal (w, b) of the others at
    margin 4 under it, so that the upper side of the band [1, 1 + ε] binds (β > 0)."""
    import refmodels as rm

    rng = np.random.default_rng(seed)
    X, y = _binary_instance(rng, m=11, d=2)
    X[:, 0] += 0.7 * y
    base = solve(rm.SVMm(X, y, C1=C1, C2=C2, eps=EPS, kernel=rm.kernels.Linear()), "dual")
    w0, b0 = base.w, base.intercept
    far = (4.0 - b0) * w0 / (w0 @ w0)
    return np.vstack([X, far]), np.r_[y, 1], rng


def _svmm(seed):
    import refmodels as rm

    X, y, rng = svmm_instance(seed)
    prob = rm.SVMm(X, y, C1=C1, C2=C2, eps=EPS, kernel=rm.kernels.Linear())
    m = prob.m
    G = prob.gram
    eps = EPS
    inst = (f"m={m} points in 2-D (the last one far out along w), linear kernel, C₁={C1}, "
            f"C₂={C2}, ε={eps}, intercept")
    steps = Steps()

    with steps.attempt("Primal", "seed 003 eqs. 6, 7 and 14"):
        p, d = solve(prob, "primal"), solve(prob, "dual")
        al, be = d.variables["alpha"], d.variables["beta"]
        v = y * (al - be)
        half_val, wc, bc = _svmm_primal_cvxpy(X, y, C1, C2, eps, half=True)
        printed_val, _, _ = _svmm_primal_cvxpy(X, y, C1, C2, eps, half=False)
        g_far = float(y[-1] * (X[-1] @ p.w + p.intercept))
        steps.append(Step(
            "Primal", "seed 003 eqs. 6, 7 and 14 (½ convention, see the erratum at the dual "
            "step)",
            "Hinge loss below margin 1, plus a linear penalty above 1 + ε: the margin is kept "
            "in a band, an idea from metric learning (points of a class should not spread "
            "too far). ε-SVM is ε = 0; C₂ = 0 (or ε → ∞) is the SVM with intercept.",
            "min_{w,b,ξ,η} ½‖w‖² + C₁Σξ_i + C₂Ση_i  s.t. 1 − ξ_i ≤ y_i(wᵀφ(x_i) + b) ≤ "
            "1 + ε + η_i, ξ, η ≥ 0",
            r"\min_{w,b,\xi,\eta}\ \tfrac12\|w\|^2+C_1\sum_i\xi_i+C_2\sum_i\eta_i" "\n"
            r"\text{s.t.}\ 1-\xi_i\le y_i(w^\top\phi(x_i)+b)\le1+\varepsilon+\eta_i,\ "
            r"\xi,\eta\ge0",
            [Check("constrained optimum (CVXPY) = eliminated form at its (w, b)", half_val,
                   prob.primal_value(wc, bc), 1e-7),
             Check("premise of this instance: the upper side of the band binds at the far "
                   f"point (its margin {g_far:.3g}): β > 1e-6", 1e-6, float(be[-1]), 0.0,
                   kind="le")]))

    with steps.attempt("Lagrangian", "seed 003 eq. 14"):
        alg = algebra_lines("SVMm")
        pt = dict(w=rng.normal(size=2), b=float(rng.normal()), xi=rng.normal(size=m),
                  eta=rng.normal(size=m), alpha=rng.uniform(0, C1, m),
                  beta=rng.uniform(0, C2, m), r=rng.uniform(0, 1, m), s=rng.uniform(0, 1, m))
        Qm = y[:, None] * G * y[None, :]
        vals = dict(X=X, Y=np.diag(y.astype(float)), e=np.ones(m), y=y.astype(float), C_1=C1,
                    C_2=C2, varepsilon=eps, Q=Qm, m_value=m, r_value=2, **pt)
        vv = y * (pt["alpha"] - pt["beta"])
        steps.append(Step(
            "Lagrangian", "seed 003 eq. 14; multipliers α, β ≥ 0 (the two margin sides), "
            "r, s ≥ 0",
            "One multiplier per constraint; SymPy differentiates L (matrix calculus, shown as "
            "computed) and the checks evaluate its gradients on the instance at a random "
            "point.",
            "L = ½‖w‖² + C₁eᵀξ + C₂eᵀη − Σα_i(γ_i − 1 + ξ_i) − Σβ_i(1 + ε + η_i − γ_i) − rᵀξ − "
            "sᵀη\n"
            "∇_w L = w − Σ_i v_iφ(x_i),  ∂_b L = −eᵀv,  ∇_ξ L = C₁ − α − r,  ∇_η L = C₂ − β − s,"
            "  v = Y(α − β)",
            r"L=\tfrac12\|w\|^2+C_1e^\top\xi+C_2e^\top\eta-\sum_i\alpha_i(\gamma_i-1+\xi_i)"
            r"-\sum_i\beta_i(1+\varepsilon+\eta_i-\gamma_i)-r^\top\xi-s^\top\eta" "\n"
            r"\nabla_wL=w-\sum_iv_i\phi(x_i),\quad\partial_bL=-e^\top v,\quad v=Y(\alpha-\beta)",
            [Check("SymPy's ∇_w L = w − Xᵀv", evaluate("SVMm", "gradients", 0, vals).ravel(),
                   pt["w"] - X.T @ vv, 1e-12),
             Check("SymPy's ∂_b L = −eᵀv", evaluate("SVMm", "gradients", 1, vals).ravel(),
                   -vv.sum(), 1e-12),
             Check("SymPy's ∇_η L = C₂ − β − s", evaluate("SVMm", "gradients", 3, vals).ravel(),
                   C2 - pt["beta"] - pt["s"], 1e-12)],
            algebra=alg["gradients"]))

    with steps.attempt("Stationarity", "seed 003 eq. 15"):
        steps.append(Step(
            "Stationarity", "seed 003 eq. 15 (its derivation)",
            "w is a combination of the points with coefficients v; b's stationarity gives the "
            "equality constraint; r, s ≥ 0 give the boxes.",
            "w = Σ_i v_i φ(x_i),  eᵀv = 0,  0 ≤ α ≤ C₁,  0 ≤ β ≤ C₂,  v = Y(α − β)",
            r"w=\sum_iv_i\phi(x_i),\quad e^\top v=0,\quad0\le\alpha\le C_1,\ 0\le\beta\le C_2",
            [Check("w of the primal solve (eq. 14 in CVXPY) = Xᵀv of the dual solve", wc,
                   X.T @ v, 1e-6),
             Check("eᵀv of the dual solve = 0", v.sum(), 0.0, 1e-8)]))

    with steps.attempt("Dual", "seed 003 eq. 15"):
        D = prob.dual_value(d.variables)
        ar, br, bq = rng.uniform(0, C1, m), rng.uniform(0, C2, m), float(rng.normal())
        vr = y * (ar - br)
        vals_d = dict(vals, alpha=ar, beta=br, b=bq)
        typed = ar.sum() - (1 + eps) * br.sum() - 0.5 * vr @ G @ vr - bq * vr.sum()
        steps.append(Step(
            "Dual", "seed 003 eq. 15",
            "SymPy substitutes the stationarity conditions into L (below); the b terms "
            "vanish because eᵀv = 0, leaving a QP with one equality; ε enters only through "
            "the linear term.",
            "max_{α,β} Σ_i(α_i − (1 + ε)β_i) − ½vᵀGv  s.t. eᵀv = 0, 0 ≤ α ≤ C₁, 0 ≤ β ≤ C₂",
            r"\max_{\alpha,\beta}\ \sum_i\big(\alpha_i-(1+\varepsilon)\beta_i\big)-\tfrac12v^"
            r"\top Gv\quad\text{s.t.}\quad e^\top v=0,\ 0\le\alpha\le C_1,\ 0\le\beta\le C_2",
            [Check("SymPy's substituted L at a random (α, β, b) = Σα − (1 + ε)Σβ − ½vᵀGv − "
                   "b·eᵀv", evaluate("SVMm", "dual", 0, vals_d).ravel(), typed, 1e-10),
             Check("primal optimum (class solve) = dual optimum (class solve)", p.objective, D,
                   1e-7)],
            [Erratum("svmm-eqs7-14-half-norm", "seed 003 eqs. 7 and 14",
                     "The primals print ‖w‖²; the dual (eq. 15) belongs to ½‖w‖². With ‖w‖² "
                     "the optimum is that of SVMm(C₁/2, C₂/2) at twice its value, not eq. 15's.",
                     "min ‖w‖² + C₁Σξ_i + C₂Ση_i", r"\min\ \|w\|^2+C_1\sum_i\xi_i+C_2\sum_i\eta_i",
                     "min ½‖w‖² + C₁Σξ_i + C₂Ση_i",
                     r"\min\ \tfrac12\|w\|^2+C_1\sum_i\xi_i+C_2\sum_i\eta_i",
                     Check("printed primal optimum (CVXPY) = eq. 15's optimum", printed_val, D,
                           1e-6),
                     Check("corrected primal optimum (CVXPY) = eq. 15's optimum", half_val, D,
                           1e-6))],
            algebra=alg["dual"]))

    with steps.attempt("Map back to the primal; ε-SVM and the SVM as special cases",
                       "seed 003 eqs. 6, 7, 15"):
        svm_b = rm.SVM(X, y, C=C1, kernel=rm.kernels.Linear(), fit_intercept=True).solve()
        lim = rm.SVMm(X, y, C1=C1, C2=0.0, eps=eps, kernel=rm.kernels.Linear()).solve()
        eps0 = rm.EpsSVM(X, y, C1=C1, C2=C2, kernel=rm.kernels.Linear()).solve()
        eps0_cvx, _, _ = _svmm_primal_cvxpy(X, y, C1, C2, 0.0)
        steps.append(Step(
            "Map back to the primal; ε-SVM and the SVM as special cases",
            "seed 003 eqs. 6, 7, 15",
            "ν = v; b from the KKT conditions (a free α_i or β_i pins the margin at 1 or "
            "1 + ε). ε-SVM (Do & Kalousis' eq. 6/7, ½ convention) is SVMm with ε = 0; C₂ = 0 "
            "is the SVM with intercept.",
            "ν = v = Y(α − β),  f(x) = Σ_i ν_iκ(x_i, x) + b;   ε-SVM(C₁, C₂) = SVMm(C₁, C₂, "
            "ε = 0)",
            r"\nu=v=Y(\alpha-\beta),\quad f(x)=\sum_i\nu_i\kappa(x_i,x)+b;\qquad"
            r"\varepsilon\text{-SVM}(C_1,C_2)=\text{SVMm}(C_1,C_2,0)",
            [_certificate_check(prob, "(ν, b)", coef=v, intercept=d.intercept),
             Check("EpsSVM(C₁, C₂) optimum (class) = eq. 14 at ε = 0 (CVXPY)", eps0.objective,
                   eps0_cvx, 1e-6),
             Check("SVMm with C₂ = 0 = SVM with intercept (LIBSVM's problem)", lim.objective,
                   svm_b.objective, 1e-7)]))

    with steps.attempt("Complementary slackness and the support vectors", "seed 003 eq. 14"):
        f = G @ v + d.intercept
        gamma = y * f
        tol = 1e-6 * (1 + C1)
        xi_ = np.maximum(0.0, 1 - gamma)
        eta_ = np.maximum(0.0, gamma - 1 - eps)

        def role(i):
            if al[i] > tol:
                return "α = C₁: γ ≤ 1" if al[i] >= C1 - tol else "0 < α < C₁: γ = 1"
            if be[i] > tol:
                return "β = C₂: γ ≥ 1 + ε" if be[i] >= C2 - tol else "0 < β < C₂: γ = 1 + ε"
            return "α = β = 0: inside the band"
        rows = [(i, int(y[i]), float(gamma[i]), float(al[i]), float(be[i]), role(i))
                for i in range(m)]
        inside = (al <= tol) & (be <= tol)
        steps.append(Step(
            "Complementary slackness and the support vectors", "seed 003 eqs. 14–15",
            "Each multiplier vanishes unless its side of the band is tight: α_i > 0 only at "
            "or below margin 1, β_i > 0 only at or above 1 + ε, and never both (the band has "
            f"width ε > 0). Points strictly inside the band have ν_i = 0. Here "
            f"{int(np.sum(al > tol))} with α > 0, {int(np.sum(be > tol))} with β > 0, "
            f"{int(inside.sum())} inside.",
            "α_i(γ_i − 1 + ξ_i) = 0,  β_i(1 + ε + η_i − γ_i) = 0,  (C₁ − α_i)ξ_i = 0,  "
            "(C₂ − β_i)η_i = 0",
            r"\alpha_i(\gamma_i-1+\xi_i)=0,\quad\beta_i(1+\varepsilon+\eta_i-\gamma_i)=0,\quad"
            r"(C_1-\alpha_i)\xi_i=0,\quad(C_2-\beta_i)\eta_i=0",
            [Check("α_i(γ_i − 1 + ξ_i) = 0 (max over i)",
                   np.max(np.abs(al * (gamma - 1 + xi_))), 0.0, 1e-6),
             Check("β_i(1 + ε + η_i − γ_i) = 0 (max over i)",
                   np.max(np.abs(be * (1 + eps + eta_ - gamma))), 0.0, 1e-6),
             Check("(C₁ − α_i)ξ_i = 0 and (C₂ − β_i)η_i = 0 (max over i)",
                   max(np.max(np.abs((C1 - al) * xi_)), np.max(np.abs((C2 - be) * eta_))),
                   0.0, 1e-6),
             Check("α_iβ_i = 0: no point on both sides", np.max(al * be), 0.0, 1e-10)],
            table=(("i", "y_i", "γ_i", "α_i", "β_i", "role"), rows),
            figure=Figure("band", "SVMm on the instance: f(x) = 0 (solid), f(x) = ±1 and "
                          "±(1 + ε) (dashed; the band [1, 1 + ε] shaded on each side); "
                          "circled: support vectors (α_i > 0 or β_i > 0).",
                          fg.decision_2d(X, y, lambda Z: Z @ (X.T @ v) + d.intercept,
                                         levels=(-(1 + eps), -1, 0, 1, 1 + eps),
                                         sv=~inside, shade=(1.0, 1 + eps)))))

    with steps.attempt("Solver step: the SMO pair step", "seed 003 eq. 15"):
        _smo_step(steps, X, y, G, m, eps, D, d)

    with steps.attempt("Special case: SVM-FDA", "seed 003 eq. 18"):
        _fda_step(steps, X, y, m)
    return Walkthrough("SVMm", seed, inst, steps)


def _smo_step(steps, X, y, G, m, eps, D, d):
    idx = np.r_[np.arange(m), np.arange(m)]
    s = np.r_[y, -y].astype(float)
    c = np.r_[-np.ones(m), (1 + eps) * np.ones(m)]
    up = np.r_[C1 * np.ones(m), C2 * np.ones(m)]

    def dual_obj(u):
        vv_ = np.zeros(m)
        np.add.at(vv_, idx, s * u)
        return 0.5 * vv_ @ G @ vv_ + c @ u
    u0 = np.zeros(2 * m)
    # a feasible start with e^T v = 0: equal alpha on one point of each class
    ip, ineg = int(np.flatnonzero(y > 0)[0]), int(np.flatnonzero(y < 0)[0])
    u0[ip] = u0[ineg] = 0.5 * C1
    pp, qq = ip, ineg + 0                         # a pair of alpha copies
    u1 = smo_pair_step(u0, s, c, up, G, idx, pp, qq)
    t_closed = (u1[pp] - u0[pp]) * s[pp]

    def phi(t):
        u_ = u0.copy()
        u_[pp] += s[pp] * t
        u_[qq] -= s[qq] * t
        return dual_obj(u_)
    lo = max(sorted(((0 - u0[pp]) * s[pp], (up[pp] - u0[pp]) * s[pp]))[0],
             sorted(((u0[qq] - up[qq]) * s[qq], u0[qq] * s[qq]))[0])
    hi = min(sorted(((0 - u0[pp]) * s[pp], (up[pp] - u0[pp]) * s[pp]))[1],
             sorted(((u0[qq] - up[qq]) * s[qq], u0[qq] * s[qq]))[1])
    t_search = _line_min(phi, lo, hi)
    # SMO with the maximal violating pair until convergence
    u = u0.copy()
    n_it = 0
    for n_it in range(1, 20001):
        vv_ = np.zeros(m)
        np.add.at(vv_, idx, s * u)
        gk = s * (G @ vv_)[idx] + c
        gs = s * gk                                # derivative along +s_k direction
        can_up = np.where(s > 0, u < up - 1e-15, u > 1e-15)     # s_k u_k can increase
        can_dn = np.where(s > 0, u > 1e-15, u < up - 1e-15)
        if not can_up.any() or not can_dn.any():
            break
        p_ = int(np.argmin(np.where(can_up, gs, np.inf)))
        q_ = int(np.argmax(np.where(can_dn, gs, -np.inf)))
        if gs[q_] - gs[p_] < 1e-12:
            break
        u = smo_pair_step(u, s, c, up, G, idx, p_, q_)
    steps.append(Step(
        "Solver step: the SMO pair step", "seed 003 eq. 15 solved by SMO (as LIBSVM)",
        "Each point carries two dual copies (α_i with sign y_i, β_i with sign −y_i). A pair "
        "of copies moves along the one direction that keeps eᵀv = 0; the 1-D problem is a "
        "parabola clipped to the boxes. Pairs are chosen as the maximal violating pair, "
        f"until the violation is below 1e-12 ({n_it} pair steps here).",
        "t* = −(s_p g_p − s_q g_q)/(G_ii + G_jj − 2G_ij) clipped,  u_p += s_p t*,  u_q −= s_q t*\n"
        "g_k = s_k(Gv)_{i(k)} + c_k",
        r"t^\star=-\frac{s_pg_p-s_qg_q}{G_{ii}+G_{jj}-2G_{ij}}\ \text{(clipped)},\quad u_p"
        r"\mathrel{+}=s_pt^\star,\ u_q\mathrel{-}=s_qt^\star" "\n"
        r"g_k=s_k(Gv)_{i(k)}+c_k",
        [Check("closed-form pair step = bounded line search on the same direction", t_closed,
               t_search, 1e-6),
         Check("SMO (maximal violating pairs) optimum = CVXPY dual optimum", -dual_obj(u), D,
               1e-7)]))


def _fda_step(steps, X, y, m):
    import cvxpy as cp

    import refmodels as rm

    d_ = X.shape[1]
    Sw = sum(np.cov(X[y == cl].T, bias=True) * np.sum(y == cl) for cl in (-1, 1))
    lamf, Cf = 0.8, 1.0
    w, b, xi = cp.Variable(d_), cp.Variable(), cp.Variable(m)
    Mf = np.eye(d_) + lamf * Sw
    fda = cp.Problem(cp.Minimize(0.5 * cp.quad_form(w, Mf) + Cf * cp.sum(xi)),
                     [cp.multiply(y, X @ w + b) >= 1 - xi, xi >= 0])
    fda_val = cvx_solve(fda)
    ev, V = np.linalg.eigh(Mf)
    T_ok = V @ np.diag(ev ** -0.5) @ V.T
    T_bad = np.linalg.inv(Sw + lamf * np.eye(d_))
    ok_val = solve(rm.SVM(X @ T_ok, y, C=Cf, fit_intercept=True), "dual").objective
    bad_val = solve(rm.SVM(X @ T_bad, y, C=Cf, fit_intercept=True), "dual").objective
    # the paper's own, hard-margin eq. 18, on the instance relabelled by the soft solution's
    # direction, split at its median (separable by construction, both classes present):
    # wᵀ(λS_W + I)w s.t. y_i(wᵀx_i + b) ≥ 1
    f_soft = X @ w.value
    f_soft = f_soft - np.median(f_soft)
    ys = np.where(f_soft >= 0, 1, -1)
    keep = np.abs(f_soft) > 1e-3 * (1 + np.max(np.abs(f_soft)))
    Xs, ys = X[keep], ys[keep]
    Sws = sum(np.cov(Xs[ys == cl].T, bias=True) * np.sum(ys == cl) for cl in (-1, 1)
              if np.sum(ys == cl) > 1)
    Ms = np.eye(d_) + lamf * Sws
    evs, Vs = np.linalg.eigh(Ms)

    def hard(Xh, Mh):
        wh, bh = cp.Variable(d_), cp.Variable()
        return cvx_solve(cp.Problem(cp.Minimize(cp.quad_form(wh, Mh)),
                                    [cp.multiply(ys, Xh @ wh + bh) >= 1]))
    hard_fda = hard(Xs, Ms)
    hard_ok = hard(Xs @ (Vs @ np.diag(evs ** -0.5) @ Vs.T), np.eye(d_))
    hard_bad = hard(Xs @ np.linalg.inv(Sws + lamf * np.eye(d_)), np.eye(d_))
    steps.append(Step(
        "Special case: SVM-FDA", "seed 003 eq. 18 (linear kernel only)",
        "Adding the within-class scatter S_W to the regulariser gives an SVM in a whitened "
        "space: with M = I + λS_W and u = M^{1/2}w, wᵀMw = ‖u‖² and wᵀx = uᵀM^{−1/2}x. Here "
        "S_W = Σ_c Σ_{i∈c}(x_i − x̄_c)(x_i − x̄_c)ᵀ, λ = 0.8, C = 1.",
        "min ½wᵀ(I + λS_W)w + CΣξ_i  ⇔  plain SVM on x̃ = (I + λS_W)^{−1/2}x",
        r"\min\ \tfrac12w^\top(I+\lambda S_W)w+C\sum_i\xi_i\iff\text{SVM on }\tilde x="
        r"(I+\lambda S_W)^{-1/2}x",
        [],
        [Erratum("svmm-fda-eq18-transform", "seed 003, the sentence after eq. 18",
                 "The claimed transform x̃ = (S_W + λI)⁻¹x is wrong: it neither whitens by "
                 "M = I + λS_W nor uses its square root. The right one is x̃ = "
                 "(I + λS_W)^{−1/2}x (checked here on the soft-margin problem; the note below "
                 "checks the paper's hard-margin one).",
                 "SVM on x̃ = (S_W + λI)⁻¹x", r"\text{SVM on }\tilde x=(S_W+\lambda I)^{-1}x",
                 "SVM on x̃ = (I + λS_W)^{−1/2}x",
                 r"\text{SVM on }\tilde x=(I+\lambda S_W)^{-1/2}x",
                 Check("printed transform: SVM optimum = SVM-FDA optimum (CVXPY)", bad_val,
                       fda_val, 1e-6),
                 Check("corrected transform: SVM optimum = SVM-FDA optimum (CVXPY)", ok_val,
                       fda_val, 1e-6))],
        notes=[Note("svmm-fda-eq18-hard-margin", "remark", "seed 003 eq. 18",
                    "Eq. 18 is stated hard-margin (no slacks), following Xiong et al.: a "
                    "modelling choice, not an error. The whitening argument is the same with "
                    "or without slacks, because the slacks do not involve the metric. This "
                    "walk-through uses the soft-margin form because its instance is not "
                    "separable; on the instance relabelled by the soft solution's direction "
                    "(split at its median: separable by construction) the paper's hard-margin "
                    "eq. 18 itself agrees with a hard-margin SVM on the corrected transform, "
                    "not on the printed one.",
                    checks=[Check("hard margin: eq. 18 optimum = hard-margin SVM on "
                                  "(I + λS_W)^{−1/2}x", hard_ok, hard_fda, 1e-6),
                            Check("hard margin, printed transform (S_W + λI)⁻¹x: its optimum "
                                  "differs from eq. 18's (the residual is above 1e-6)",
                                  1e-6, abs(hard_bad - hard_fda) / (1 + abs(hard_fda)), 0.0,
                                  kind="le")],
                    unicode="eq. 18: min wᵀ(λS_W + I)w  s.t.  y_i(wᵀx_i + b) ≥ 1",
                    latex=r"\min_{w,b}\ w^\top(\lambda S_W+I)w\quad\text{s.t.}\quad "
                          r"y_i(w^\top x_i+b)\ge1")]))
