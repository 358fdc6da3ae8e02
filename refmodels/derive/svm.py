"""Walk-through of SVM.

The soft-margin SVM (SPEC §1; seed 002 eq. 2): primal, Lagrangian (SymPy),
dual, map back and the dual coordinate-descent step.
"""
from __future__ import annotations

import numpy as np

from .core import (Check, Step, Walkthrough, _SYMPY_TEXT, _binary_instance, _cd_step_checks,
                   _certificate_check, _sym_gradient, _sym_matrix)


def _svm(seed):
    import refmodels as rm

    rng = np.random.default_rng(seed)
    X, y = _binary_instance(rng)
    C = 1.0
    prob = rm.SVM(X, y, C=C, kernel=rm.kernels.RBF(gamma=0.5))
    F, G, m = prob.F, prob.gram, prob.m
    Q = y[:, None] * G * y[None, :]
    p, d = prob.solve(form="primal"), prob.solve(form="dual")
    a = d.variables["alpha"]
    inst = f"m={m}, d={X.shape[1]}, RBF kernel γ=0.5, C={C}, no intercept"
    steps = []

    xi = np.asarray(p.variables["xi"], float)
    steps.append(Step(
        "Primal", "seed 002 eq. 2 (LIBSVM/LIBLINEAR convention; the paper writes λ/m for C)",
        "Hinge-loss SVM over w in feature space; the slacks ξ are eliminated as "
        "ξ_i = max(0, 1 − γ_i) at the optimum.",
        "min_{w,ξ} ½‖w‖² + C Σ_i ξ_i   s.t.  y_i wᵀφ(x_i) ≥ 1 − ξ_i,  ξ ≥ 0",
        r"\min_{w,\xi}\ \tfrac12\|w\|^2 + C\sum_i\xi_i\quad\text{s.t.}\quad "
        r"y_i w^\top\phi(x_i)\ge 1-\xi_i,\ \xi\ge0",
        [Check("constrained optimum (CVXPY, its own ξ) = ½‖w‖² + C Σ max(0, 1 − γ_i) at its w",
               0.5 * p.w @ p.w + C * xi.sum(), prob.primal_value(p.w), 1e-6)]))

    n, Fs, ys = 4, F[:4, :3], y[:4]          # SymPy on a 4-point, 3-feature sub-instance
    wr, xr, ar, rr = rng.normal(size=3), rng.normal(size=n), rng.uniform(0, C, n), rng.uniform(0, 1, n)
    g = _sym_gradient(
        lambda s: (s["w"].dot(s["w"]) / 2 + C * sum(s["xi"])
                   - sum(s["a"][i] * (ys[i] * _sym_matrix(Fs[i]).dot(s["w"]) - 1 + s["xi"][i])
                         for i in range(n))
                   - s["r"].dot(s["xi"])),
        {"w": 3, "xi": n, "a": n, "r": n}, {"w": wr, "xi": xr, "a": ar, "r": rr})
    steps.append(Step(
        "Lagrangian", "seed 002 eq. 2, multipliers α ≥ 0 (margins) and r ≥ 0 (ξ ≥ 0)",
        _SYMPY_TEXT,
        "L = ½‖w‖² + C eᵀξ − Σ_i α_i (y_i wᵀφ(x_i) − 1 + ξ_i) − rᵀξ\n"
        "∇_w L = w − Σ_i α_i y_i φ(x_i),   ∇_ξ L = C e − α − r",
        r"L=\tfrac12\|w\|^2+Ce^\top\xi-\sum_i\alpha_i\big(y_iw^\top\phi(x_i)-1+\xi_i\big)-r^\top\xi,"
        r"\quad \nabla_wL=w-\sum_i\alpha_iy_i\phi(x_i),\ \nabla_\xi L=Ce-\alpha-r",
        [Check("SymPy ∇_w L = w − Fᵀ Y α (random point, 4-point sub-instance)", g["w"],
               wr - Fs.T @ (ys * ar), 1e-12),
         Check("SymPy ∇_ξ L = C e − α − r (random point)", g["xi"], C - ar - rr, 1e-12)]))

    steps.append(Step(
        "Stationarity", "seed 002 eq. 7 with μ₁ = μ₂ = 0 (ODML reduces to this SVM)",
        "∇L = 0 gives w as a combination of the training points and, with r ≥ 0, the box on α.",
        "w = Σ_i α_i y_i φ(x_i) = Fᵀ Y α,   0 ≤ α ≤ C",
        r"w=\sum_i\alpha_iy_i\phi(x_i)=F^\top Y\alpha,\qquad 0\le\alpha\le C",
        [Check("w of the primal solve = Fᵀ Y α of the (separate) dual solve", p.w,
               F.T @ (y * a), 1e-6)]))

    ar2, xr = rng.uniform(0, C, m), rng.normal(size=m)
    w_of = F.T @ (y * ar2)
    L_at = (0.5 * w_of @ w_of + C * xr.sum() - ar2 @ (y * (F @ w_of) - 1 + xr)
            - (C - ar2) @ xr)
    steps.append(Step(
        "Dual", "seed 002 eq. 10 with μ₁ = μ₂ = 0 and λ/m = C (LIBSVM's dual)",
        "Substituting the stationarity conditions (the ξ terms cancel since r = C − α) gives "
        "the dual; strong duality holds: P* = −D*.",
        "min_α ½ αᵀQα − eᵀα   s.t. 0 ≤ α ≤ C,   Q = YGY",
        r"\min_\alpha\ \tfrac12\alpha^\top Q\alpha-e^\top\alpha\quad\text{s.t.}\quad"
        r"0\le\alpha\le C,\qquad Q=YGY",
        [Check("L(w(α), any ξ, α, r = C − α) = −(½αᵀQα − eᵀα) at a random α",
               L_at, -(0.5 * ar2 @ Q @ ar2 - ar2.sum()), 1e-10),
         Check("primal optimum P* (primal solve) = −D* (dual solve)", p.objective,
               prob.dual_value(d.variables), 1e-7)]))

    steps.append(Step(
        "Map back to the primal", "seed 002 after eq. 10, with μ₁ = μ₂ = 0",
        "Predictions as coefficients over training points: ν = Yα, f(x) = Σ_i ν_i κ(x_i, x).",
        "ν = Y α,   f(x) = Σ_i ν_i κ(x_i, x)",
        r"\nu=Y\alpha,\qquad f(x)=\sum_i\nu_i\,\kappa(x_i,x)",
        [Check("decision values G ν (dual) = F w (primal solve)", G @ (y * a), F @ p.w, 1e-6),
         _certificate_check(prob, "the point given by ν alone", coef=y * a)]))

    steps.append(Step(
        "Solver step: dual coordinate descent", "seed 002 eq. 16 and Alg. 1 (the DCD of LIBLINEAR)",
        "One coordinate at a time, the restricted problem is a 1-D quadratic on a box, "
        "solved in closed form.",
        "g_i = (Qα)_i − 1,   α_i ← min(max(α_i − g_i / Q_ii, 0), C)",
        r"g_i=(Q\alpha)_i-1,\qquad \alpha_i\leftarrow\min\!\big(\max(\alpha_i-g_i/Q_{ii},0),C\big)",
        _cd_step_checks(Q, -np.ones(m), C, a, rng)))
    return Walkthrough("SVM", seed, inst, steps)
