"""Walk-through of SVMm / ε-SVM.

SVMm and ε-SVM (SPEC §6; seed 003): the primal in CVXPY, the SMO pair step and
the walk-through.
"""
from __future__ import annotations

import numpy as np

from .core import (Check, Erratum, Step, Walkthrough, _SYMPY_TEXT, _binary_instance,
                   _certificate_check, _line_min, _sym_gradient, _sym_matrix)


def _svmm_primal_cvxpy(X, y, C1, C2, eps, half=True):
    """Seed 003 eq. 14 over (w, b, ξ, η) with ½‖w‖² (``half``) or ‖w‖² as printed."""
    import cvxpy as cp

    m, d = X.shape
    w, b, xi, eta = cp.Variable(d), cp.Variable(), cp.Variable(m), cp.Variable(m)
    g = cp.multiply(y, X @ w + b)
    pr = cp.Problem(cp.Minimize((0.5 if half else 1.0) * cp.sum_squares(w) + C1 * cp.sum(xi)
                                + C2 * cp.sum(eta)),
                    [g >= 1 - xi, g <= 1 + eps + eta, xi >= 0, eta >= 0])
    pr.solve(solver="CLARABEL")
    return pr.value, np.asarray(w.value, float), float(b.value)


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


def _svmm(seed):
    import refmodels as rm

    rng = np.random.default_rng(seed)
    X, y = _binary_instance(rng, m=12)
    X[2], y[2] = [3.0, 0.0, 0.0], 1            # a far point: the upper side of the band binds
    C1, C2, eps = 1.0, 0.5, 0.3
    prob = rm.SVMm(X, y, C1=C1, C2=C2, eps=eps, kernel=rm.kernels.Linear())
    m = prob.m
    G = prob.gram
    p, d = prob.solve(form="primal"), prob.solve(form="dual")
    al, be = d.variables["alpha"], d.variables["beta"]
    v = y * (al - be)
    inst = f"m={m}, d=3, linear kernel, C₁={C1}, C₂={C2}, ε={eps}, intercept"
    steps = []

    half_val, wc, bc = _svmm_primal_cvxpy(X, y, C1, C2, eps, half=True)
    printed_val, _, _ = _svmm_primal_cvxpy(X, y, C1, C2, eps, half=False)
    steps.append(Step(
        "Primal", "seed 003 eqs. 6, 7 and 14 (½ convention, see the erratum at the dual step)",
        "Hinge loss below margin 1, plus a linear penalty above 1 + ε: the margin is kept "
        "in a band. ε-SVM is ε = 0; C₂ = 0 (or ε → ∞) is the SVM with intercept.",
        "min_{w,b,ξ,η} ½‖w‖² + C₁Σξ_i + C₂Ση_i  s.t. 1 − ξ_i ≤ y_i(wᵀφ(x_i) + b) ≤ 1 + ε + η_i, ξ, η ≥ 0",
        r"\min_{w,b,\xi,\eta}\ \tfrac12\|w\|^2+C_1\sum_i\xi_i+C_2\sum_i\eta_i\ \text{s.t.}\ "
        r"1-\xi_i\le y_i(w^\top\phi(x_i)+b)\le1+\varepsilon+\eta_i,\ \xi,\eta\ge0",
        [Check("constrained optimum (CVXPY) = eliminated form at its (w, b)", half_val,
               prob.primal_value(wc, bc), 1e-7)]))

    n, Fs, ys = 4, X[:4], y[:4]
    pt = {"w": rng.normal(size=3), "b": rng.normal(size=1), "xi": rng.normal(size=n),
          "eta": rng.normal(size=n), "a": rng.uniform(0, C1, n), "be": rng.uniform(0, C2, n),
          "r": rng.uniform(0, 1, n), "s": rng.uniform(0, 1, n)}

    def build(s):
        f = [ys[i] * (_sym_matrix(Fs[i]).dot(s["w"]) + s["b"][0]) for i in range(n)]
        L = s["w"].dot(s["w"]) / 2 + C1 * sum(s["xi"]) + C2 * sum(s["eta"])
        for i in range(n):
            L -= s["a"][i] * (f[i] - 1 + s["xi"][i]) + s["be"][i] * (1 + eps + s["eta"][i] - f[i])
        return L - s["r"].dot(s["xi"]) - s["s"].dot(s["eta"])
    g = _sym_gradient(build, {k_: len(v_) for k_, v_ in pt.items()}, pt)
    vv = ys * (pt["a"] - pt["be"])
    steps.append(Step(
        "Lagrangian", "seed 003 eq. 14; multipliers α, β ≥ 0 (the two margin sides), r, s ≥ 0",
        _SYMPY_TEXT,
        "L = ½‖w‖² + C₁eᵀξ + C₂eᵀη − Σα_i(γ_i − 1 + ξ_i) − Σβ_i(1 + ε + η_i − γ_i) − rᵀξ − sᵀη\n"
        "∇_w L = w − Σ_i v_iφ(x_i),  ∂_b L = −eᵀv,  ∇_ξ L = C₁ − α − r,  ∇_η L = C₂ − β − s,  "
        "v = Y(α − β)",
        r"L=\tfrac12\|w\|^2+C_1e^\top\xi+C_2e^\top\eta-\sum_i\alpha_i(\gamma_i-1+\xi_i)-\sum_i"
        r"\beta_i(1+\varepsilon+\eta_i-\gamma_i)-r^\top\xi-s^\top\eta,\quad\nabla_wL=w-\sum_iv_i"
        r"\phi(x_i),\ \partial_bL=-e^\top v",
        [Check("SymPy ∇_w L = w − Fᵀv", g["w"], pt["w"] - Fs.T @ vv, 1e-12),
         Check("SymPy ∂_b L = −eᵀv", g["b"], -vv.sum(), 1e-12),
         Check("SymPy ∇_η L = C₂ − β − s", g["eta"], C2 - pt["be"] - pt["s"], 1e-12)]))

    steps.append(Step(
        "Stationarity", "seed 003 eq. 15 (its derivation)",
        "w is a combination of the points with coefficients v; b's stationarity gives the "
        "equality constraint; r, s ≥ 0 give the boxes.",
        "w = Σ_i v_i φ(x_i),  eᵀv = 0,  0 ≤ α ≤ C₁,  0 ≤ β ≤ C₂,  v = Y(α − β)",
        r"w=\sum_iv_i\phi(x_i),\quad e^\top v=0,\quad0\le\alpha\le C_1,\ 0\le\beta\le C_2",
        [Check("w of the primal solve = Fᵀv of the dual solve", p.w, X.T @ v, 1e-6),
         Check("eᵀv of the dual solve = 0", v.sum(), 0.0, 1e-8)]))

    D = prob.dual_value(d.variables)
    steps.append(Step(
        "Dual", "seed 003 eq. 15",
        "Substituting gives a QP with one equality; ε enters only through the linear term.",
        "max_{α,β} Σ_i(α_i − (1 + ε)β_i) − ½vᵀGv  s.t. eᵀv = 0, 0 ≤ α ≤ C₁, 0 ≤ β ≤ C₂",
        r"\max_{\alpha,\beta}\ \sum_i\big(\alpha_i-(1+\varepsilon)\beta_i\big)-\tfrac12v^\top Gv"
        r"\quad\text{s.t.}\quad e^\top v=0,\ 0\le\alpha\le C_1,\ 0\le\beta\le C_2",
        [Check("primal optimum (class solve) = dual optimum (class solve)", p.objective, D, 1e-7)],
        [Erratum("svmm-eqs7-14-half-norm", "seed 003 eqs. 7 and 14",
                 "The primals print ‖w‖²; the dual (eq. 15) belongs to ½‖w‖². With ‖w‖² the "
                 "optimum is that of SVMm(C₁/2, C₂/2) at twice its value, not eq. 15's.",
                 "min ‖w‖² + C₁Σξ_i + C₂Ση_i", r"\min\ \|w\|^2+C_1\sum_i\xi_i+C_2\sum_i\eta_i",
                 "min ½‖w‖² + C₁Σξ_i + C₂Ση_i", r"\min\ \tfrac12\|w\|^2+C_1\sum_i\xi_i+C_2\sum_i\eta_i",
                 Check("printed primal optimum (CVXPY) = eq. 15's optimum", printed_val, D, 1e-6),
                 Check("corrected primal optimum (CVXPY) = eq. 15's optimum", half_val, D,
                       1e-6))]))

    svm_b = rm.SVM(X, y, C=C1, kernel=rm.kernels.Linear(), fit_intercept=True).solve()
    lim = rm.SVMm(X, y, C1=C1, C2=0.0, eps=eps, kernel=rm.kernels.Linear()).solve()
    eps0 = rm.EpsSVM(X, y, C1=C1, C2=C2, kernel=rm.kernels.Linear()).solve()
    eps0_cvx, _, _ = _svmm_primal_cvxpy(X, y, C1, C2, 0.0)
    steps.append(Step(
        "Map back to the primal; ε-SVM and the SVM as special cases", "seed 003 eqs. 6, 7, 15",
        "ν = v; b from the KKT conditions (a free α_i or β_i pins the margin at 1 or 1 + ε). "
        "ε-SVM (Do & Kalousis' eq. 6/7, ½ convention) is SVMm with ε = 0; C₂ = 0 is the SVM "
        "with intercept.",
        "ν = v = Y(α − β),  f(x) = Σ_i ν_iκ(x_i, x) + b;   ε-SVM(C₁, C₂) = SVMm(C₁, C₂, ε = 0)",
        r"\nu=v=Y(\alpha-\beta),\quad f(x)=\sum_i\nu_i\kappa(x_i,x)+b;\qquad"
        r"\varepsilon\text{-SVM}(C_1,C_2)=\text{SVMm}(C_1,C_2,0)",
        [_certificate_check(prob, "(ν, b)", coef=v, intercept=d.intercept),
         Check("EpsSVM(C₁, C₂) optimum (class) = eq. 14 at ε = 0 (CVXPY)", eps0.objective,
               eps0_cvx, 1e-6),
         Check("SVMm with C₂ = 0 = SVM with intercept (LIBSVM's problem)", lim.objective,
               svm_b.objective, 1e-7)]))

    # SMO pair step
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
    for _ in range(3000):
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
        "parabola clipped to the boxes. Pairs are chosen as the maximal violating pair.",
        "t* = −(s_p g_p − s_q g_q)/(G_ii + G_jj − 2G_ij) clipped,  u_p += s_p t*,  u_q −= s_q t*,"
        "  g_k = s_k(Gv)_{i(k)} + c_k",
        r"t^\star=-\frac{s_pg_p-s_qg_q}{G_{ii}+G_{jj}-2G_{ij}}\ \text{(clipped)},\quad u_p\mathrel{+}="
        r"s_pt^\star,\ u_q\mathrel{-}=s_qt^\star,\quad g_k=s_k(Gv)_{i(k)}+c_k",
        [Check("closed-form pair step = bounded line search on the same direction", t_closed,
               t_search, 1e-6),
         Check("SMO (maximal violating pairs) optimum = CVXPY dual optimum", -dual_obj(u), D,
               1e-7)]))

    # SVM-FDA (eq. 18)
    Sw = sum(np.cov(X[y == cl].T, bias=True) * np.sum(y == cl) for cl in (-1, 1))
    lamf, Cf = 0.8, 1.0
    import cvxpy as cp
    w, b, xi = cp.Variable(3), cp.Variable(), cp.Variable(m)
    Mf = np.eye(3) + lamf * Sw
    fda = cp.Problem(cp.Minimize(0.5 * cp.quad_form(w, Mf) + Cf * cp.sum(xi)),
                     [cp.multiply(y, X @ w + b) >= 1 - xi, xi >= 0])
    fda.solve(solver="CLARABEL")
    ev, V = np.linalg.eigh(Mf)
    Xt = X @ (V @ np.diag(ev ** -0.5) @ V.T)
    Xp = X @ np.linalg.inv(Sw + lamf * np.eye(3))
    ok_val = rm.SVM(Xt, y, C=Cf, fit_intercept=True).solve().objective
    bad_val = rm.SVM(Xp, y, C=Cf, fit_intercept=True).solve().objective
    steps.append(Step(
        "Special case: SVM-FDA", "seed 003 eq. 18 (linear kernel only)",
        "Adding the within-class scatter S_W to the regulariser gives an SVM in a whitened "
        "space. Here S_W = Σ_c Σ_{i∈c}(x_i − x̄_c)(x_i − x̄_c)ᵀ, λ = 0.8, C = 1.",
        "min ½wᵀ(I + λS_W)w + CΣξ_i  ⇔  plain SVM on x̃ = (I + λS_W)^{−1/2}x",
        r"\min\ \tfrac12w^\top(I+\lambda S_W)w+C\sum_i\xi_i\iff\text{SVM on }\tilde x="
        r"(I+\lambda S_W)^{-1/2}x",
        [],
        [Erratum("svmm-fda-eq18-transform", "seed 003 eq. 18 and the text after it",
                 "Eq. 18 is printed hard-margin and its claimed transform x̃ = (S_W + λI)⁻¹x is "
                 "wrong; the right statement is the soft-margin problem above, a plain SVM on "
                 "x̃ = (I + λS_W)^{−1/2}x.",
                 "SVM on x̃ = (S_W + λI)⁻¹x", r"\text{SVM on }\tilde x=(S_W+\lambda I)^{-1}x",
                 "SVM on x̃ = (I + λS_W)^{−1/2}x", r"\text{SVM on }\tilde x=(I+\lambda S_W)^{-1/2}x",
                 Check("printed transform: SVM optimum = SVM-FDA optimum (CVXPY)", bad_val,
                       fda.value, 1e-6),
                 Check("corrected transform: SVM optimum = SVM-FDA optimum (CVXPY)", ok_val,
                       fda.value, 1e-6))]))
    return Walkthrough("SVMm", seed, inst, steps)
