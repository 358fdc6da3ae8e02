"""Walk-through of DRR / DRM.

Discriminative ridge regression, DRR and DRM (SPEC §8; seed 004).
"""
from __future__ import annotations

import math

import numpy as np

from .core import (Check, Erratum, Step, Walkthrough, _SYMPY_TEXT, _certificate_check,
                   _sym_gradient, _sym_matrix)


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
    p, d = prob.solve(form="primal"), prob.solve(form="dual")
    w_star = p.variables["W"][:, 0]
    z_star = d.variables["z"][:, 0]
    inst = (f"m={m} training points in {g} classes, d=3, one test point, RBF kernel γ=0.3, "
            f"α={al}, β={be}; DRR with (q, r) = (2, 1), ρ(t) = t (a group lasso)")
    steps = []

    wr = rng.normal(size=m)
    pair = 0.0
    for gr in groups:
        for i in gr:
            for j in gr:
                pair += (wr[i] ** 2 * K[i, i] + wr[j] ** 2 * K[j, j]
                         - 2 * wr[i] * wr[j] * K[i, j]) / (4 * len(gr))
    steps.append(Step(
        "Primal", "seed 004 eqs. 3 and 8, Prop. IV.1",
        "A test point x is represented by the training points with coefficients w. The fit "
        "term ½‖φ(x) − Σ_iw_iφ(x_i)‖² (constant dropped) plus α times the within-class "
        "scatter S_w(w) = ½wᵀ(H − B)w, which is a sum of squared distances, hence ≥ 0; "
        "H = diag(κ(x_i, x_i)), B = blockdiag(K^c/n_c).",
        "min_w ½wᵀ(K + αH − αB)w − K_xᵀw + β ρ(‖w|C‖_{q,r}),  ‖w|C‖_{q,r} = ‖(‖w¹‖_q, …, ‖w^g‖_q)‖_r\n"
        "S_w(w) = ½wᵀ(H − B)w = Σ_c (1/(4n_c)) Σ_{i,j∈c} ‖w_iφ(x_i) − w_jφ(x_j)‖² ≥ 0",
        r"\min_w\ \tfrac12w^\top(K+\alpha H-\alpha B)w-K_x^\top w+\beta\,\rho(\|w|C\|_{q,r}),\qquad "
        r"S_w(w)=\tfrac12w^\top(H-B)w=\sum_c\frac1{4n_c}\sum_{i,j\in c}\|w_i\phi(x_i)-w_j\phi(x_j)\|^2",
        [Check("½wᵀ(H − B)w (class matrices) = the pairwise within-class sum (random w)",
               0.5 * wr @ (H - B) @ wr, pair, 1e-12)]))

    u = rng.normal(size=m)
    wv = cp.Variable(m)
    hold = cp.Problem(cp.Maximize(u @ wv),
                      [cp.norm(cp.hstack([cp.norm(wv[gr], 2) for gr in groups]), 1) <= 1])
    hold.solve(solver="CLARABEL")
    steps.append(Step(
        "The dual group norm", "SPEC §8 (ours); Hölder's inequality",
        "The conjugate exponents q*, r* (1/q + 1/q* = 1) give the dual norm of the group norm; "
        "for (q, r) = (2, 1) it is the largest group's Euclidean norm.",
        "‖u|C‖_* = max_{‖w|C‖_{q,r} ≤ 1} uᵀw = ‖u|C‖_{q*,r*}",
        r"\|u|C\|_*=\max_{\|w|C\|_{q,r}\le1}u^\top w=\|u|C\|_{q^*,r^*}",
        [Check("‖u|C‖_{2,∞} (regularizer.dual_norm) = max uᵀw over the unit ball (CVXPY)",
               reg.dual_norm(u, groups), hold.value, 1e-7)]))

    n = 4
    Ls = L[:n, :n]
    ptw, ptz, ptu = rng.normal(size=n), rng.normal(size=n), rng.normal(size=n)
    Kxs = Kx[:n]
    gs = _sym_gradient(lambda s: (s["z"].dot(s["z"]) / 2 - _sym_matrix(Kxs).dot(s["w"])
                                  + s["u"].dot(_sym_matrix(Ls.T) * s["w"] - s["z"])),
                       {"w": n, "z": n, "u": n}, {"w": ptw, "z": ptz, "u": ptu})
    steps.append(Step(
        "Lagrangian and stationarity", "SPEC §8 (ours)",
        "Split the quadratic with Q_D = LLᵀ (empirical map of Q_D) and a new variable z = Lᵀw, "
        "multiplier u. Stationarity in z gives u = z; in w, K_x − Lz ∈ β∂R(w) with "
        "R = ρ(‖·|C‖). " + _SYMPY_TEXT.replace("Lagrangian (built", "smooth part of the "
                                              "Lagrangian (built"),
        "L(w, z, u) = ½‖z‖² − K_xᵀw + βR(w) + uᵀ(Lᵀw − z);  ∇_z: u = z;  ∇_w: K_x − Lz ∈ β∂R(w)",
        r"L(w,z,u)=\tfrac12\|z\|^2-K_x^\top w+\beta R(w)+u^\top(L^\top w-z);\quad u=z,\quad "
        r"K_x-Lz\in\beta\,\partial R(w)",
        [Check("SymPy ∇_z (smooth part) = z − u", gs["z"], ptz - ptu, 1e-12),
         Check("SymPy ∇_w (smooth part) = −K_x + Lu", gs["w"], -Kxs + Ls @ ptu, 1e-12)]))

    steps.append(Step(
        "Dual", "SPEC §8 (ours, a Fenchel dual; the paper has none)",
        "Minimising L over w and z gives the conjugate of βR, which for ρ(t) = t is the "
        "indicator of the dual-norm ball: the dual is a norm-constrained least squares.",
        "max_z −½‖z‖² − β ρ*(‖K_x − Lz‖_*/β);  ρ = t:  max_z −½‖z‖²  s.t. ‖K_x − Lz|C‖_{q*,r*} ≤ β",
        r"\max_z\ -\tfrac12\|z\|^2-\beta\rho^*\big(\|K_x-Lz\|_*/\beta\big);\quad\rho(t)=t:\ "
        r"\max_z-\tfrac12\|z\|^2\ \text{s.t.}\ \|K_x-Lz|C\|_{q^*,r^*}\le\beta",
        [Check("primal optimum (CVXPY) = dual optimum (CVXPY)", p.objective[0],
               prob.dual_value(d.variables["z"])[0], 1e-7),
         Check("dual feasibility: ‖K_x − Lz*‖_* ≤ β", reg.dual_norm(Kx - L @ z_star, groups),
               be, 1e-7, kind="le")]))

    steps.append(Step(
        "Map back and decision", "SPEC §8; seed 004 eqs. 10–11",
        "At the optimum z* = Lᵀw*. The class of x minimises δ_c, the fit of x by class c's "
        "part of w against the rest.",
        "z* = Lᵀw*;   δ_c = w_cᵀKw_c + w_c̄ᵀKw_c̄ − 2w_cᵀK_x,   predict argmin_c δ_c",
        r"z^\star=L^\top w^\star;\qquad\delta_c=w_c^\top Kw_c+w_{\bar c}^\top Kw_{\bar c}-2w_c^\top K_x",
        [Check("z* of the dual solve = Lᵀw* of the primal solve", z_star, L.T @ w_star, 1e-5),
         _certificate_check(prob, "w* (duality gap with the best feasible z)",
                            W=p.variables["W"])]))

    drm = rm.DRM(X, y, Xt, alpha=al, beta=be, kernel=kern)
    cf = drm.closed_form().variables["W"][:, 0]
    cvx = drm.solve(form="primal").variables["W"][:, 0]
    krr = rm.DRM(X, y, Xt, alpha=0.0, beta=be, kernel=kern).solve(form="primal").variables["W"][:, 0]
    steps.append(Step(
        "DRM: the closed form", "seed 004 eqs. 12–13",
        "With q = r = 2 and ρ(t) = ½t² the problem is a ridge regression; α = 0 is kernel "
        "ridge regression.",
        "w* = (K + αH − αB + βI)⁻¹K_x;   α = 0: w* = (K + βI)⁻¹K_x",
        r"w^\star=(K+\alpha H-\alpha B+\beta I)^{-1}K_x;\qquad\alpha=0:\ w^\star=(K+\beta I)^{-1}K_x",
        [Check("closed form (Cholesky) = CVXPY's DRM optimum", cf, cvx, 1e-6),
         Check("α = 0: CVXPY's optimum = (K + βI)⁻¹K_x (kernel ridge)", krr,
               np.linalg.solve(K + be * np.eye(m), Kx), 1e-6)]))

    # proximal step, APG and its rate
    Q_D = prob.Q_D
    Lip = float(np.linalg.eigvalsh(Q_D)[-1])
    vv = rng.normal(size=m)
    tau = 0.3
    pv = cp.Variable(m)
    cp.Problem(cp.Minimize(0.5 * cp.sum_squares(pv - vv) + tau * be * sum(cp.norm(pv[gr], 2)
                                                                          for gr in groups))).solve(
        solver="CLARABEL")
    soft = np.zeros(m)
    for gr in groups:
        nrm = np.linalg.norm(vv[gr])
        soft[gr] = max(0.0, 1 - tau * be / nrm) * vv[gr]

    def Pval(w):
        return 0.5 * w @ Q_D @ w - Kx @ w + be * sum(np.linalg.norm(w[gr]) for gr in groups)
    Pstar = p.objective[0]
    w0 = np.zeros(m)
    x, zz, tk = w0.copy(), w0.copy(), 1.0
    gaps = []
    for _ in range(200):
        xn = zz - (Q_D @ zz - Kx) / Lip
        for gr in groups:
            nrm = np.linalg.norm(xn[gr])
            xn[gr] = 0.0 if nrm == 0 else max(0.0, 1 - be / (Lip * nrm)) * xn[gr]
        tn = (1 + np.sqrt(1 + 4 * tk * tk)) / 2
        zz = xn + (tk - 1) / tn * (xn - x)
        x, tk = xn, tn
        gaps.append(Pval(x))
    P_apg = Pval(x)                      # APG's limit: below CVXPY's P* by its tolerance
    gaps = np.maximum(np.array(gaps) - min(P_apg, Pstar), 0.0)
    tt = np.arange(1, len(gaps) + 1)
    bound_ratio = float(np.max(gaps * (tt + 1) ** 2 / (2 * Lip * np.sum((w0 - w_star) ** 2))))
    # empirical order of convergence while the gap is above rounding (1e-11)
    e = gaps[: int(np.argmax(gaps < 1e-11))] if np.any(gaps < 1e-11) else gaps
    e = e[e > 0]
    with np.errstate(divide="ignore", invalid="ignore"):
        ords = np.log(e[2:] / e[1:-1]) / np.log(e[1:-1] / e[:-2])
    ords = ords[np.isfinite(ords)]
    order = float(np.median(ords)) if ords.size else math.nan
    steps.append(Step(
        "Solver step: the proximal gradient step and APG", "seed 004 §VI-E, Alg. 6 and Thm. VI.4",
        "The smooth part ½wᵀQ_Dw − K_xᵀw has gradient Q_Dw − K_x with Lipschitz constant "
        "σ_max(Q_D); the non-smooth part enters through its prox, here a group soft-threshold. "
        "APG (FISTA) adds momentum. (Thm. VI.1 of the paper also calls the plain gradient "
        "method's rate linear where the proof gives O(1/t).) Run here: 200 APG iterations "
        "from w = 0 with step 1/σ_max.",
        "prox_{τβ‖·|C‖_{2,1}}(v)_c = max(0, 1 − τβ/‖v_c‖)·v_c;   w⁺ = prox_{β/σ_max}(z − (Q_Dz − K_x)/σ_max)",
        r"\mathrm{prox}_{\tau\beta\|\cdot|C\|_{2,1}}(v)_c=\max\Big(0,1-\frac{\tau\beta}{\|v_c\|}\Big)v_c,"
        r"\quad w^+=\mathrm{prox}_{\beta/\sigma_{\max}}\big(z-(Q_Dz-K_x)/\sigma_{\max}\big)",
        [Check("group soft-threshold = CVXPY's prox", soft, pv.value, 1e-6),
         Check("group soft-threshold = regularizer.prox", soft, reg.prox(vv, tau * be, groups),
               1e-12),
         Check("APG after 200 iterations reaches P* (CVXPY)", Pval(x), Pstar, 1e-6)],
        [Erratum("drr-apg-rate-not-quadratic", "seed 004 §VI-B, the outline of the three algorithms",
                 "The paper calls APG's convergence 'quadratic'; it is O(1/t²) in the objective "
                 "(Beck and Teboulle's bound), a sublinear rate, not quadratic convergence "
                 "(order 2: e_{t+1} ≲ e_t²). Measured here: the empirical order of convergence "
                 "of the objective gap, and the O(1/t²) bound over all 200 iterations.",
                 "order of convergence = 2 (quadratic)",
                 r"\text{order }p=2:\ e_{t+1}\lesssim e_t^2",
                 "e_t ≤ 2σ_max‖w₀ − w*‖²/(t + 1)²",
                 r"e_t\le\frac{2\sigma_{\max}\|w_0-w^\star\|^2}{(t+1)^2}",
                 Check("median empirical order log(e_{t+1}/e_t)/log(e_t/e_{t−1}) = 2", order,
                       2.0, 0.05),
                 Check("max_t e_t(t+1)²/(2σ_max‖w₀ − w*‖²) ≤ 1", bound_ratio, 1.0, 1e-9,
                       kind="le"))]))
    return Walkthrough("DRR", seed, inst, steps)
