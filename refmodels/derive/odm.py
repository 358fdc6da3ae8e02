"""Walk-through of ODM.

ODM, the Optimal margin Distribution Machine (SPEC §4; seed 002 eqs. 12–18, seed 000
eqs. 7, 15–19).
"""
from __future__ import annotations

import numpy as np

from .core import (Check, Erratum, Step, Walkthrough, _binary_instance, _cd_step_checks,
                   _certificate_check, _sym_gradient, _sym_matrix)


def _odm(seed):
    import refmodels as rm

    rng = np.random.default_rng(seed)
    X, y = _binary_instance(rng)
    X[2], y[2] = [4.0, 0.0, 0.0], 1          # a far, easy point: its margin ends above 1 + θ
    lam, mu, th = 20.0, 0.5, 0.1
    prob = rm.ODM(X, y, lam=lam, mu=mu, theta=th, kernel=rm.kernels.Linear())
    F, G, m = prob.F, prob.gram, prob.m
    Q = y[:, None] * G * y[None, :]
    a, c = prob.a, lam / (m * (1 - th) ** 2)
    p, d = prob.solve(form="primal"), prob.solve(form="dual")
    zeta, beta = d.variables["zeta"], d.variables["beta"]
    rawp, rawd = p.info["cvxpy_point"], d.info["cvxpy_point"]
    inst = (f"m={m}, d={X.shape[1]}, linear kernel, λ={lam}, μ={mu}, θ={th} (one far point, so "
            "that the upper side of the band binds)")
    steps = []

    wr = rng.normal(size=F.shape[1])
    gr = y * (F @ wr)
    C1, C2 = lam / (1 - th) ** 2, lam * mu / (1 - th) ** 2
    seed000 = 0.5 * wr @ wr + (C1 * np.sum(np.maximum(0, 1 - th - gr) ** 2)
                               + C2 * np.sum(np.maximum(0, gr - 1 - th) ** 2)) / m
    steps.append(Step(
        "Primal", "seed 002 eqs. 12 and 18; seed 000 eq. 7 with C₁ = λ/(1−θ)², C₂ = λμ/(1−θ)², D = θ",
        "Squared losses on both sides of the band [1 − θ, 1 + θ] of the margin. Eliminating "
        "the slacks gives the unconstrained, continuously differentiable f_O (eq. 18).",
        "min_{w,ξ,ε} ½‖w‖² + λ/(m(1−θ)²)·Σ_i(ξ_i² + μ ε_i²)  s.t. 1 − θ − ξ_i ≤ y_i wᵀφ(x_i) ≤ 1 + θ + ε_i\n"
        "f_O(w) = ½‖w‖² + λ/(m(1−θ)²)·Σ_i[max(0, 1−θ−γ_i)² + μ max(0, γ_i−1−θ)²]",
        r"\min_{w,\xi,\epsilon}\ \tfrac12\|w\|^2+\frac{\lambda}{m(1-\theta)^2}\sum_i(\xi_i^2+\mu"
        r"\epsilon_i^2)\ \text{s.t.}\ 1-\theta-\xi_i\le y_iw^\top\phi(x_i)\le1+\theta+\epsilon_i;"
        r"\quad f_O(w)=\tfrac12\|w\|^2+\frac{\lambda}{m(1-\theta)^2}\sum_i\big[\max(0,1-\theta-"
        r"\gamma_i)^2+\mu\max(0,\gamma_i-1-\theta)^2\big]",
        [Check("constrained optimum (CVXPY value) = f_O at CVXPY's w", p.info["cvxpy_value"],
               prob.primal_value(np.asarray(rawp["w"], float)), 1e-7),
         Check("seed 000's objective (C₁, C₂, D) = f_O at a random w", seed000,
               prob.primal_value(wr), 1e-12)]))

    # Lagrangian on the 4 points with the largest multipliers (2 of each kind)
    idx = np.r_[np.argsort(-zeta)[:2], np.argsort(-beta)[:2]]
    n, Fs, ys = 4, F[idx][:, :], y[idx]
    r_ = F.shape[1]
    pt = {"w": p.w, "xi": p.variables["xi"][idx], "e": p.variables["eps"][idx],
          "z": zeta[idx], "b": beta[idx]}
    rnd = {"w": rng.normal(size=r_), "xi": rng.normal(size=n), "e": rng.normal(size=n),
           "z": rng.uniform(0, 1, n), "b": rng.uniform(0, 1, n)}
    blocks = {"w": r_, "xi": n, "e": n, "z": n, "b": n}

    def lagr(printed):
        def build(s):
            g = [ys[i] * _sym_matrix(Fs[i]).dot(s["w"]) for i in range(n)]
            L = s["w"].dot(s["w"]) / 2 + c * (s["xi"].dot(s["xi"]) + mu * s["e"].dot(s["e"]))
            for i in range(n):
                L -= s["z"][i] * (g[i] - (1 - th) + s["xi"][i])
                # seed 000 eq. 15 prints -xi where -eps belongs in the second constraint
                L += s["b"][i] * (g[i] - (1 + th) - (s["xi"][i] if printed else s["e"][i]))
            return L
        return build
    gr_rand = _sym_gradient(lagr(False), blocks, rnd)
    gr_opt = _sym_gradient(lagr(False), blocks, pt)
    gp_opt = _sym_gradient(lagr(True), blocks, pt)
    steps.append(Step(
        "Lagrangian", "seed 002 eq. 13; seed 000 eq. 15",
        "Multipliers ζ ≥ 0 (lower side) and β ≥ 0 (upper side); the slacks are sign-free. "
        "SymPy builds and differentiates L (on the 4 points of the instance with the largest "
        "multipliers; the w-gradient is checked at a random point).",
        "L = ½‖w‖² + c Σ(ξ_i² + μ ε_i²) − ζᵀ(YFw − (1−θ)e + ξ) − βᵀ((1+θ)e + ε − YFw),  "
        "c = λ/(m(1−θ)²)\n∇_w L = w − FᵀY(ζ − β),  ∇_ξ L = 2cξ − ζ,  ∇_ε L = 2cμ ε − β",
        r"L=\tfrac12\|w\|^2+c\sum_i(\xi_i^2+\mu\epsilon_i^2)-\zeta^\top(YFw-(1-\theta)e+\xi)"
        r"-\beta^\top((1+\theta)e+\epsilon-YFw),\quad\nabla_wL=w-F^\top Y(\zeta-\beta),\ "
        r"\nabla_\xi L=2c\xi-\zeta,\ \nabla_\epsilon L=2c\mu\epsilon-\beta",
        [Check("SymPy ∇_w L = w − FᵀY(ζ − β) (random point)", gr_rand["w"],
               rnd["w"] - Fs.T @ (ys * (rnd["z"] - rnd["b"])), 1e-12),
         Check("SymPy ∇_ε L = 2cμ ε − β (random point)", gr_rand["e"],
               2 * c * mu * rnd["e"] - rnd["b"], 1e-12)],
        [Erratum("odm-seed000-eq15-xi-for-eps", "seed 000 eq. 15",
                 "The Lagrangian prints −ξ in the upper-side constraint, where −ε belongs (the "
                 "paper's eqs. 16–18 then use the right one). With the printed L, the slack "
                 "gradients do not vanish at the optimum.",
                 "L = … + βᵀ(YXᵀw − (1+D)e − ξ)",
                 r"L=\dots+\beta^\top\big(YX^\top w-(1+D)e-\xi\big)",
                 "L = … + βᵀ(YXᵀw − (1+D)e − ε)",
                 r"L=\dots+\beta^\top\big(YX^\top w-(1+D)e-\epsilon\big)",
                 Check("printed L: SymPy (∇_ξ L, ∇_ε L) at the optimum = 0",
                       np.r_[gp_opt["xi"], gp_opt["e"]], np.zeros(2 * n), 1e-6),
                 Check("corrected L: SymPy (∇_ξ L, ∇_ε L) at the optimum = 0",
                       np.r_[gr_opt["xi"], gr_opt["e"]], np.zeros(2 * n), 1e-6))]))

    zr, br = np.asarray(rawd["zeta"], float), np.asarray(rawd["beta"], float)
    steps.append(Step(
        "Stationarity", "seed 002 eq. 14; seed 000 eqs. 16–18",
        "Setting the gradients to zero expresses w and both slacks through the multipliers.",
        "w = FᵀY(ζ − β),   ξ = aζ,   ε = aβ/μ,   a = m(1−θ)²/(2λ)",
        r"w=F^\top Y(\zeta-\beta),\quad\xi=a\zeta,\quad\epsilon=\frac{a}{\mu}\beta,\quad "
        r"a=\frac{m(1-\theta)^2}{2\lambda}",
        [Check("w of CVXPY's primal = FᵀY(ζ − β) of CVXPY's dual (both raw)", rawp["w"],
               F.T @ (y * (zr - br)), 1e-5),
         Check("ξ of CVXPY's primal = aζ of CVXPY's dual (both raw)", rawp["xi"], a * zr, 1e-5)]))

    zq, bq = rng.uniform(0, 1, m), rng.uniform(0, 1, m)
    w_of = F.T @ (y * (zq - bq))
    xi_of, e_of = a * zq, a * bq / mu
    gq = y * (F @ w_of)
    L_at = (0.5 * w_of @ w_of + c * (xi_of @ xi_of + mu * e_of @ e_of)
            - zq @ (gq - (1 - th) + xi_of) - bq @ ((1 + th) + e_of - gq))
    u = zeta - beta
    common = -0.5 * u @ Q @ u - a / (2 * mu) * (mu * zeta @ zeta + beta @ beta)
    printed = common + (1 - th) * (zeta.sum() - (1 + th) * beta.sum())
    corrected = common + (1 - th) * zeta.sum() - (1 + th) * beta.sum()
    steps.append(Step(
        "Dual", "seed 002 eq. 15; seed 000 eq. 19",
        "Substituting eq. 14 gives a QP over α = [ζ; β] ≥ 0 with no upper bounds.",
        "min_{α=[ζ;β]≥0} ½αᵀ[[Q + aI, −Q], [−Q, Q + (a/μ)I]]α + [(θ−1)e; (θ+1)e]ᵀα,  Q = YGY",
        r"\min_{\alpha=[\zeta;\beta]\ge0}\ \tfrac12\alpha^\top\begin{bmatrix}Q+aI&-Q\\-Q&Q+"
        r"\frac a\mu I\end{bmatrix}\alpha+\begin{bmatrix}(\theta-1)e\\(\theta+1)e\end{bmatrix}^\top\alpha",
        [Check("L at the stationary (w, ξ, ε) of a random α = −(eq. 15 objective)", L_at,
               prob.dual_value({"zeta": zq, "beta": bq}), 1e-10),
         Check("primal optimum P* = −(dual optimum)", p.objective,
               prob.dual_value(d.variables), 1e-7)],
        [Erratum("odm-seed002-lagrangian-after-eq14", "seed 002, the unnumbered display after eq. 14",
                 "The dual function after substituting eq. 14 prints (1−θ)(ζᵀe − (1+θ)βᵀe); it "
                 "should read (1−θ)ζᵀe − (1+θ)βᵀe (eq. 15 itself is right). Evaluated at the "
                 "dual optimum, the printed expression is not the optimal value.",
                 "… + (1−θ)(ζᵀe − (1+θ)βᵀe)",
                 r"\dots+(1-\theta)\big(\zeta^\top e-(1+\theta)\beta^\top e\big)",
                 "… + (1−θ)ζᵀe − (1+θ)βᵀe",
                 r"\dots+(1-\theta)\zeta^\top e-(1+\theta)\beta^\top e",
                 Check("printed dual function at (ζ*, β*) = P*", printed, p.objective, 1e-6),
                 Check("corrected dual function at (ζ*, β*) = P*", corrected, p.objective,
                       1e-6))]))

    nu = y * (zeta - beta)
    steps.append(Step(
        "Map back to the primal", "seed 002 after eq. 15",
        "Coefficients over training points.",
        "ν = Y(ζ − β),   f(x) = Σ_i ν_i κ(x_i, x)",
        r"\nu=Y(\zeta-\beta),\qquad f(x)=\sum_i\nu_i\,\kappa(x_i,x)",
        [Check("decision values Gν = Fw (primal solve)", G @ nu, F @ p.w, 1e-6),
         _certificate_check(prob, "the point given by ν alone", coef=nu)]))

    Qm = np.block([[Q + a * np.eye(m), -Q], [-Q, Q + a / mu * np.eye(m)]])
    lin = np.r_[(th - 1) * np.ones(m), (th + 1) * np.ones(m)]
    steps.append(Step(
        "Solver step: dual coordinate descent", "seed 002 eq. 16 and Alg. 1",
        "Each of the 2m coordinates (ζ_i or β_i) is a 1-D quadratic on [0, ∞), minimised in "
        "closed form; the diagonal is Q_ii + a resp. Q_ii + a/μ.",
        "ζ_i ← max(0, ζ_i − ([Q(ζ−β)]_i + aζ_i + θ − 1)/(Q_ii + a)),\n"
        "β_i ← max(0, β_i − (−[Q(ζ−β)]_i + (a/μ)β_i + θ + 1)/(Q_ii + a/μ))",
        r"\zeta_i\leftarrow\max\Big(0,\zeta_i-\frac{[Q(\zeta-\beta)]_i+a\zeta_i+\theta-1}{Q_{ii}+a}"
        r"\Big),\quad\beta_i\leftarrow\max\Big(0,\beta_i-\frac{-[Q(\zeta-\beta)]_i+\frac a\mu"
        r"\beta_i+\theta+1}{Q_{ii}+a/\mu}\Big)",
        _cd_step_checks(Qm, lin, np.inf, np.r_[zeta, beta], rng)))
    return Walkthrough("ODM", seed, inst, steps)
