"""Walk-through of DRR / DRM.

Discriminative ridge regression, DRR and DRM (seed 004): the model, its Fenchel dual (ours:
the paper has none), the map back, the support classes of the group lasso, DRM's closed
form, and the proximal gradient step with APG and its rates.
"""
from __future__ import annotations

import numpy as np

from . import figures as fg
from .algebra import algebra_lines, evaluate
from .core import Check, Figure, Note, Step, Steps, Walkthrough
from .numerics import DEFAULT, MEDIUM, _certificate_check, cvx_solve, solve


def _drr(seed):
    import cvxpy as cp

    import refmodels as rm

    rng = np.random.default_rng(seed)
    m, g = 12, 3
    y = np.repeat(np.arange(g), m // g)
    X = rng.normal(size=(m, 3)) + np.eye(3)[y] * 1.5
    Xt = rng.normal(size=(1, 3))
    kern = rm.kernels.RBF(gamma=0.3)
    Kx0 = kern.cross(X, Xt)[:, 0]
    # β below ‖K_x|C‖_{2,∞}, so that w* ≠ 0 (at or above it, w* = 0)
    al, be = 1.0, round(0.3 * max(np.linalg.norm(Kx0[y == c]) for c in range(g)), 4)
    prob = rm.DRR(X, y, Xt, alpha=al, beta=be, q=2, r=1, rho="identity", kernel=kern)
    K, H, B, Kx, L = prob.K, prob.H, prob.B, prob.K_x[:, 0], prob.L
    groups, reg = prob.groups, prob.regularizer
    inst = (f"m={m} training points in {g} classes, d=3, one test point, RBF kernel γ=0.3, "
            f"α={al}, β={be}; DRR with (q, r) = (2, 1), ρ(t) = t (a group lasso)")
    steps = Steps()

    with steps.attempt("Primal", "seed 004 eqs. 3 and 8"):
        # Clarabel stops short of 1e-12 on these cone programs: medium, then default
        # tolerances; w* itself comes from APG run to rounding (below)
        p, d = (solve(prob, "primal", levels=[MEDIUM, DEFAULT]),
                solve(prob, "dual", levels=[MEDIUM, DEFAULT]))
        w_cvx = p.variables["W"][:, 0]
        z_star = d.variables["z"][:, 0]
        # w* to rounding: APG on this strongly convex problem converges linearly (see the
        # last step), 600 iterations leave it at machine precision
        ev_ = np.linalg.eigvalsh(prob.Q_D)
        _, w_star, _ = _fista(prob.Q_D, Kx, groups, be, float(ev_[-1]), np.zeros(m), 600,
                              mu_sc=float(ev_[0]))
        P_cvx = prob.primal_value(w_cvx[:, None])[0]
        P_apg = prob.primal_value(w_star[:, None])[0]
        wr = rng.normal(size=m)
        pair = 0.0
        for gr in groups:
            for i in gr:
                for j in gr:
                    pair += (wr[i] ** 2 * K[i, i] + wr[j] ** 2 * K[j, j]
                             - 2 * wr[i] * wr[j] * K[i, j]) / (4 * len(gr))
        steps.append(Step(
            "Primal", "seed 004 eqs. 3 and 8, Prop. IV.1",
            "A test point x is represented by the training points with coefficients w. The "
            "fit term ½‖φ(x) − Σ_iw_iφ(x_i)‖² (constant dropped) plus α times the "
            "within-class scatter S_w(w) = ½wᵀ(H − B)w, which is a sum of squared distances, "
            "hence ≥ 0; H = diag(κ(x_i, x_i)), B is block diagonal with the blocks K^c/n_c "
            "of the classes. The regulariser is the group norm over the classes C.",
            "min_w ½wᵀ(K + αH − αB)w − K_xᵀw + β ρ(‖w|C‖_{q,r}),  ‖w|C‖_{q,r} = "
            "‖(‖w¹‖_q, …, ‖w^g‖_q)‖_r\n"
            "S_w(w) = ½wᵀ(H − B)w = Σ_c (1/(4n_c)) Σ_{i,j∈c} ‖w_iφ(x_i) − w_jφ(x_j)‖² ≥ 0",
            r"\min_w\ \tfrac12w^\top(K+\alpha H-\alpha B)w-K_x^\top w+\beta\,\rho(\|w|C\|_{q,r})"
            "\n"
            r"S_w(w)=\tfrac12w^\top(H-B)w=\sum_c\frac1{4n_c}\sum_{i,j\in c}\|w_i\phi(x_i)-w_j"
            r"\phi(x_j)\|^2\ge0",
            [Check("½wᵀ(H − B)w (class matrices) = the pairwise within-class sum (random w)",
                   0.5 * wr @ (H - B) @ wr, pair, 1e-12),
             Check("‖w (CVXPY) − w* (APG run to rounding)‖ ≤ √(2(P(w) − P(w*) + δ)/μ), "
                   "the accuracy bound of strong convexity (μ = λ_min(Q_D); δ = "
                   "1e-14(1 + |P*|) for the rounding of the two values of P)",
                   float(np.linalg.norm(w_cvx - w_star)),
                   np.sqrt(2 * (max(float(P_cvx - P_apg), 0.0) + 1e-14 * (1 + abs(P_apg)))
                           / float(ev_[0])), 0.0, kind="le")]))

    with steps.attempt("The dual group norm", "Hölder's inequality"):
        u = rng.normal(size=m)
        wv = cp.Variable(m)
        hold = cp.Problem(cp.Maximize(u @ wv),
                          [cp.norm(cp.hstack([cp.norm(wv[gr], 2) for gr in groups]), 1) <= 1])
        hold_val = cvx_solve(hold)
        steps.append(Step(
            "The dual group norm", "Hölder's inequality (this package's dual of DRR; see "
            "Conventions and names)",
            "The conjugate exponents q*, r* (1/q + 1/q* = 1) give the dual norm of the group "
            "norm; for (q, r) = (2, 1) it is the largest group's Euclidean norm.",
            "‖u|C‖_* = max_{‖w|C‖_{q,r} ≤ 1} uᵀw = ‖u|C‖_{q*,r*}",
            r"\|u|C\|_*=\max_{\|w|C\|_{q,r}\le1}u^\top w=\|u|C\|_{q^*,r^*}",
            [Check("‖u|C‖_{2,∞} (regularizer.dual_norm) = max uᵀw over the unit ball (CVXPY)",
                   reg.dual_norm(u, groups), hold_val, 1e-7)]))

    with steps.attempt("Lagrangian and stationarity", "this package's dual of DRR"):
        alg = algebra_lines("DRR")
        r_ = L.shape[1]
        ptw, ptz, ptu = rng.normal(size=m), rng.normal(size=r_), rng.normal(size=r_)
        vals = dict(L=L, w=ptw, z=ptz, u=ptu, K_x=Kx, m_value=m, r_value=r_)
        steps.append(Step(
            "Lagrangian and stationarity", "this package's Fenchel dual of eq. 8 (the paper "
            "has none)",
            "Split the quadratic with Q_D = LLᵀ (L: the empirical map of Q_D = K + α(H − B)) "
            "and a new variable z = Lᵀw, with multiplier u. Stationarity in z gives u = z; "
            "in w, K_x − Lz ∈ β∂R(w) with R = ρ(‖·|C‖). SymPy differentiates the smooth "
            "part of L (below); the checks evaluate it on the instance.",
            "L(w, z, u) = ½‖z‖² − K_xᵀw + βR(w) + uᵀ(Lᵀw − z);  ∇_z: u = z;  ∇_w: K_x − Lz ∈ "
            "β∂R(w)",
            r"L(w,z,u)=\tfrac12\|z\|^2-K_x^\top w+\beta R(w)+u^\top(L^\top w-z)" "\n"
            r"\nabla_z:\ u=z,\qquad\nabla_w:\ K_x-Lz\in\beta\,\partial R(w)",
            [Check("SymPy's ∇_z (smooth part) = z − u",
                   evaluate("DRR", "gradients", 0, vals).ravel(), ptz - ptu, 1e-12),
             Check("SymPy's ∇_w (smooth part) = −K_x + Lu",
                   evaluate("DRR", "gradients", 1, vals).ravel(), -Kx + L @ ptu, 1e-12)],
            algebra=alg["gradients"]))

    with steps.attempt("Dual", "this package's dual of DRR"):
        steps.append(Step(
            "Dual", "this package's Fenchel dual (the paper has none)",
            "At u = z the smooth part becomes −½‖z‖² − (K_x − Lz)ᵀw (SymPy, below); "
            "minimising it plus βR(w) over w gives the conjugate of βR, which for ρ(t) = t is "
            "the indicator of the dual-norm ball: the dual is a norm-constrained least "
            "squares.",
            "max_z −½‖z‖² − β ρ*(‖K_x − Lz‖_*/β);  ρ = t:  max_z −½‖z‖²  s.t. ‖K_x − Lz|C‖_"
            "{q*,r*} ≤ β",
            r"\max_z\ -\tfrac12\|z\|^2-\beta\rho^*\big(\|K_x-Lz\|_*/\beta\big)" "\n"
            r"\rho(t)=t:\quad\max_z-\tfrac12\|z\|^2\ \ \text{s.t.}\ \|K_x-Lz|C\|_{q^*,r^*}\le"
            r"\beta",
            [Check("SymPy's smooth part at u = z equals −½‖z‖² − (K_x − Lz)ᵀw (random w, z)",
                   evaluate("DRR", "dual", 0, vals).ravel(),
                   -0.5 * ptz @ ptz - (Kx - L @ ptz) @ ptw, 1e-12),
             Check("primal optimum (CVXPY) = dual optimum (CVXPY)", p.objective[0],
                   prob.dual_value(d.variables["z"])[0], 1e-7),
             Check("dual feasibility: ‖K_x − Lz*‖_* ≤ β", reg.dual_norm(Kx - L @ z_star, groups),
                   be, 1e-7, kind="le")],
            algebra=alg["dual"]))

    with steps.attempt("Map back and decision", "seed 004 eqs. 10–11"):
        # the dual objective −½‖z‖² is 1-strongly concave, so a dual point with gap
        # g = P(w*) − D(z) is within √(2g) of z*: the bound on ‖z − Lᵀw*‖ below
        gap = max(float(prob.primal_value(w_star[:, None])[0]
                        - prob.dual_value(z_star[:, None])[0]), 0.0)
        steps.append(Step(
            "Map back and decision", "this package's dual; seed 004 eqs. 10–11",
            "At the optimum z* = Lᵀw*. The class of x minimises δ_c, the fit of x by class "
            "c's part of w against the rest.",
            "z* = Lᵀw*;   δ_c = w_cᵀKw_c + w_c̄ᵀKw_c̄ − 2w_cᵀK_x,   predict argmin_c δ_c",
            r"z^\star=L^\top w^\star;\qquad\delta_c=w_c^\top Kw_c+w_{\bar c}^\top Kw_{\bar c}"
            r"-2w_c^\top K_x",
            [Check("‖z (dual solve) − Lᵀw*‖ ≤ √(2·(P(w*) − D(z))) + 1e-9: the dual's accuracy "
                   "bound (its objective is 1-strongly concave)",
                   float(np.linalg.norm(z_star - L.T @ w_star)), np.sqrt(2 * gap) + 1e-9, 0.0,
                   kind="le"),
             _certificate_check(prob, "w* (duality gap with the best feasible z)",
                                W=p.variables["W"])]))

    with steps.attempt("Complementary slackness: the support classes", "group lasso"):
        u_star = Kx - L @ (L.T @ w_star)          # at z* = Lᵀw*
        norms_u = np.array([np.linalg.norm(u_star[gr]) for gr in groups])
        norms_w = np.array([np.linalg.norm(w_star[gr]) for gr in groups])
        act = norms_w > 1e-6 * (1 + np.max(norms_w))
        rows = [(c, int(len(gr)), float(norms_w[c]), float(norms_u[c]),
                 "active: ‖u_c‖ = β" if act[c] else "zero: ‖u_c‖ ≤ β")
                for c, gr in enumerate(groups)]
        checks = [Check("inactive classes (w_c = 0) have ‖u_c‖ ≤ β", norms_u[~act]
                        if (~act).any() else np.zeros(1), be, 1e-6, kind="le"),
                  Check("active classes have ‖u_c‖ = β", norms_u[act] if act.any()
                        else np.full(1, be), be, 1e-6)]
        if act.any():
            c0 = int(np.flatnonzero(act)[0])
            gr0 = groups[c0]
            checks.append(Check("on an active class u_c = β w_c/‖w_c‖ (the subgradient)",
                                u_star[gr0], be * w_star[gr0] / norms_w[c0], 1e-5))
        steps.append(Step(
            "Complementary slackness: the support classes", "the KKT conditions of eq. 8 "
            "with (q, r) = (2, 1), ρ(t) = t",
            "With u = K_x − Lz* = K_x − Q_Dw* (the dual's residual), stationarity says "
            "u ∈ β∂‖w|C‖_{2,1}: "
            "on a class with w_c ≠ 0, u_c = βw_c/‖w_c‖ (so ‖u_c‖ = β); a class with "
            "‖u_c‖ < β has w_c = 0. The classes that represent x are the 'support classes', "
            f"as support vectors are for the SVM. Here {int(act.sum())} of {g} classes are "
            "active.",
            "w_c ≠ 0 ⇒ u_c = β w_c/‖w_c‖;   ‖u_c‖ < β ⇒ w_c = 0;   u = K_x − Lz*",
            r"w_c\ne0\Rightarrow u_c=\beta\frac{w_c}{\|w_c\|},\qquad\|u_c\|<\beta\Rightarrow "
            r"w_c=0,\qquad u=K_x-Lz^\star",
            checks,
            table=(("class c", "n_c", "‖w_c‖", "‖u_c‖", "reading"), rows),
            figure=Figure("coefficients", "DRR's coefficients w* over the training points, "
                          "by class, for the test point (group lasso: whole classes are "
                          "zero or not).",
                          fg.bars(w_star, groups, ylabel="w*_i"))))

    with steps.attempt("DRM: the closed form", "seed 004 eqs. 12–13"):
        drm = rm.DRM(X, y, Xt, alpha=al, beta=be, kernel=kern)
        cf = drm.closed_form().variables["W"][:, 0]
        cvx = solve(drm, "primal").variables["W"][:, 0]
        krr = solve(rm.DRM(X, y, Xt, alpha=0.0, beta=be, kernel=kern),
                    "primal").variables["W"][:, 0]
        steps.append(Step(
            "DRM: the closed form", "seed 004 eqs. 12–13",
            "With q = r = 2 and ρ(t) = ½t² the problem is a ridge regression; α = 0 is kernel "
            "ridge regression.",
            "w* = (K + αH − αB + βI)⁻¹K_x;   α = 0: w* = (K + βI)⁻¹K_x",
            r"w^\star=(K+\alpha H-\alpha B+\beta I)^{-1}K_x;\qquad\alpha=0:\ w^\star=(K+"
            r"\beta I)^{-1}K_x",
            [Check("closed form (Cholesky) = CVXPY's DRM optimum", cf, cvx, 1e-6),
             Check("α = 0: CVXPY's optimum = (K + βI)⁻¹K_x (kernel ridge)", krr,
                   np.linalg.solve(K + be * np.eye(m), Kx), 1e-6)]))

    with steps.attempt("Solver step: the proximal gradient step and APG", "seed 004 §VI-E"):
        _apg_step(steps, prob, Kx, groups, reg, be, m, rng, p, w_star)
    return Walkthrough("DRR", seed, inst, steps)


def _fista(Q_D, Kx, groups, be, Lip, w0, iters, mu_sc=None):
    """FISTA (APG with t_k momentum), or with ``mu_sc`` the constant momentum
    (√κ − 1)/(√κ + 1), κ = L/μ, of the strongly convex variant; step 1/L, group
    soft-threshold prox. Returns the iterates' objective values and the last iterate."""
    def prox(v, t):
        out = v.copy()
        for gr in groups:
            nrm = np.linalg.norm(v[gr])
            out[gr] = 0.0 if nrm == 0 else max(0.0, 1 - t / nrm) * v[gr]
        return out

    def P(w):
        return 0.5 * w @ Q_D @ w - Kx @ w + be * sum(np.linalg.norm(w[gr]) for gr in groups)
    x, z, tk = w0.copy(), w0.copy(), 1.0
    mom = None
    if mu_sc is not None:
        q = np.sqrt(Lip / mu_sc)
        mom = (q - 1) / (q + 1)
    vals = [P(x)]
    for _ in range(iters):
        xn = prox(z - (Q_D @ z - Kx) / Lip, be / Lip)
        if mom is None:
            tn = (1 + np.sqrt(1 + 4 * tk * tk)) / 2
            z = xn + (tk - 1) / tn * (xn - x)
            tk = tn
        else:
            z = xn + mom * (xn - x)
        x = xn
        vals.append(P(x))
    return np.array(vals), x, P


def _apg_step(steps, prob, Kx, groups, reg, be, m, rng, p, w_star):
    import cvxpy as cp

    Q_D = prob.Q_D
    ev = np.linalg.eigvalsh(Q_D)
    Lip, mu_sc = float(ev[-1]), float(ev[0])
    vv = rng.normal(size=m)
    tau = 0.3
    pv = cp.Variable(m)
    cvx_solve(cp.Problem(cp.Minimize(0.5 * cp.sum_squares(pv - vv)
                                     + tau * be * sum(cp.norm(pv[gr], 2) for gr in groups))))
    soft = np.zeros(m)
    for gr in groups:
        nrm = np.linalg.norm(vv[gr])
        soft[gr] = max(0.0, 1 - tau * be / nrm) * vv[gr]
    w0 = np.zeros(m)
    T = 200
    f_vals, x, P = _fista(Q_D, Kx, groups, be, Lip, w0, T)
    v_vals, xv, _ = _fista(Q_D, Kx, groups, be, Lip, w0, T, mu_sc=mu_sc)
    Pstar = min(p.objective[0], float(np.min(f_vals)), float(np.min(v_vals)))
    e_f = np.maximum(f_vals - Pstar, 0.0)
    e_v = np.maximum(v_vals - Pstar, 0.0)
    tt = np.arange(len(e_f))
    R0 = float(np.sum((w0 - w_star) ** 2))
    # Beck–Teboulle: e_t ≤ 2L‖w₀ − w*‖²/(t + 1)² for t ≥ 1
    bt_ratio = float(np.max(e_f[1:] * (tt[1:] + 1) ** 2 / (2 * Lip * R0)))
    # strongly convex variant (Beck, First-Order Methods, Thm. 10.7.7):
    # e_t ≤ (1 − √(μ/L))^t (e_0 + μ/2‖w₀ − w*‖²); rounding floor 1e-13·(1 + |P*|)
    floor = 1e-13 * (1 + abs(Pstar))
    lin_bound = (1 - np.sqrt(mu_sc / Lip)) ** tt * (e_v[0] + 0.5 * mu_sc * R0)
    lin_viol = float(np.max(e_v - lin_bound - floor))
    # the observed rate of FISTA: slope of log e_t while above the rounding floor
    keep = e_f > 1e3 * floor
    slope = float(np.polyfit(tt[keep][5:], np.log(e_f[keep][5:]), 1)[0]) if keep.sum() > 10 \
        else float("nan")
    rate = float(np.exp(slope)) if np.isfinite(slope) else float("nan")
    steps.append(Step(
        "Solver step: the proximal gradient step and APG", "seed 004 §VI-E, Alg. 6 and "
        "Thm. VI.4",
        "The smooth part ½wᵀQ_Dw − K_xᵀw has gradient Q_Dw − K_x with Lipschitz constant "
        "L = σ_max(Q_D); the non-smooth part enters through its prox, here a group "
        "soft-threshold. APG (FISTA) takes the step from an extrapolated point w̄ (momentum; "
        "not the dual variable z of the steps above). Run here: 200 iterations from w = 0 "
        "with step 1/L.",
        "prox_{τβ‖·|C‖_{2,1}}(v)_c = max(0, 1 − τβ/‖v_c‖)·v_c\n"
        "w⁺ = prox_{β/L}(w̄ − (Q_Dw̄ − K_x)/L),   then w̄ ← w⁺ + ((t_k − 1)/t_{k+1})(w⁺ − w), "
        "w ← w⁺",
        r"\mathrm{prox}_{\tau\beta\|\cdot|C\|_{2,1}}(v)_c=\max\Big(0,1-\frac{\tau\beta}{\|v_c"
        r"\|}\Big)v_c" "\n"
        r"w^+=\mathrm{prox}_{\beta/L}\big(\bar w-(Q_D\bar w-K_x)/L\big),\qquad\bar w\leftarrow "
        r"w^++\frac{t_k-1}{t_{k+1}}(w^+-w),\quad w\leftarrow w^+",
        [Check("group soft-threshold = CVXPY's prox", soft, pv.value, 1e-6),
         Check("group soft-threshold = regularizer.prox", soft, reg.prox(vv, tau * be, groups),
               1e-12),
         Check("APG after 200 iterations reaches P* (CVXPY)", P(x), p.objective[0], 1e-7)],
        notes=[Note("drr-apg-rate", "remark", "seed 004 §VI-B (\"theoretically proven quadratic "
                    "convergence\") and Thm. VI.4; likewise Thm. VI.1's \"linear rate\"",
                    "\"Quadratic\" here means the O(1/t²) bound of Beck and Teboulle on the "
                    "objective gap e_t, not convergence of order 2; that bound holds (first "
                    "check). Moreover the paper notes that f is strongly convex: Q_D = K + "
                    f"α(H − B) is positive definite here (μ = λ_min(Q_D) = {mu_sc:.3g}, L = "
                    f"{Lip:.3g}), so the gap decreases linearly, i.e. geometrically. With the "
                    "momentum (√κ − 1)/(√κ + 1), κ = L/μ, APG provably satisfies "
                    "e_t ≤ (1 − √(μ/L))^t(e_0 + μ‖w₀ − w*‖²/2) (second check); plain FISTA is "
                    f"observed to contract by about {rate:.3g} per iteration here. The same "
                    "strong convexity makes Thm. VI.1's 'linear rate' of gradient descent "
                    "true, though its proof only cites the general O(1/t).",
                    checks=[Check("FISTA: max_t e_t(t + 1)²/(2L‖w₀ − w*‖²) ≤ 1", bt_ratio, 1.0,
                                  1e-9, kind="le"),
                            Check("strongly convex APG: e_t ≤ (1 − √(μ/L))^t(e_0 + μ‖w₀ − "
                                  "w*‖²/2) for every t (to the rounding floor)", lin_viol, 0.0,
                                  1e-12, kind="le"),
                            Check("Q_D is positive definite: 0 < λ_min(Q_D)", 0.0, mu_sc, 0.0,
                                  kind="le")],
                    unicode="e_t ≤ 2L‖w₀ − w*‖²/(t + 1)²   and, μ = λ_min(Q_D) > 0:   e_t ≤ "
                            "(1 − √(μ/L))^t (e_0 + μ‖w₀ − w*‖²/2)",
                    latex=r"e_t\le\frac{2L\|w_0-w^\star\|^2}{(t+1)^2},\qquad e_t\le\Big(1-"
                          r"\sqrt{\mu/L}\Big)^t\Big(e_0+	frac{\mu}{2}\|w_0-w^\star\|^2\Big)")],
        figure=Figure("apg", "Objective gap e_t of APG (FISTA) and of the strongly convex "
                      "variant on the instance, against the O(1/t²) bound and the linear "
                      "bound (log scale; both methods stall at the rounding floor near "
                      "1e-15).",
                      fg.curve(tt, [np.maximum(e_f, 1e-17), np.maximum(e_v, 1e-17),
                                    2 * Lip * R0 / (tt + 1.0) ** 2, lin_bound],
                               ["FISTA", "APG, constant momentum (strongly convex)",
                                "bound 2L‖w₀ − w*‖²/(t + 1)²", "bound (1 − √(μ/L))^t(…)"],
                               "iteration t", "objective gap e_t", logy=True,
                               ylim=(1e-17, None)))))
