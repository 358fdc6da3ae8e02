"""Walk-through of MKLm / ε-MKL.

MKLm and ε-MKL (SPEC §7; seed 003): SimpleMKL's reduced-gradient direction and
the walk-through.
"""
from __future__ import annotations

import numpy as np

from .core import Check, Erratum, Step, Walkthrough, _binary_instance, _certificate_check


def reduced_gradient_direction(mu, grad):
    """SimpleMKL's descent direction on the simplex (the reduced gradient; seed 003's solver).

    With ``r = argmax_k μ_k``: ``D_k = −(g_k − g_r)`` for ``μ_k > 0``, ``D_k = 0`` for
    ``μ_k = 0`` with ``g_k > g_r``, and ``D_r = −Σ_{k≠r} D_k`` (so ``Σ_k D_k = 0``)."""
    mu, grad = np.asarray(mu, float), np.asarray(grad, float)
    r = int(np.argmax(mu))
    D = -(grad - grad[r])
    D[(mu <= 0) & (grad > grad[r])] = 0.0
    D[r] = 0.0
    D[r] = -D.sum()
    return D


def _mklm(seed):
    import refmodels as rm

    rng = np.random.default_rng(seed)
    X, y = _binary_instance(rng, m=12)
    X[2], y[2] = [3.0, 0.0, 0.0], 1
    ks = [rm.kernels.RBF(gamma=0.3), rm.kernels.Linear()]
    C1, C2, eps = 4.0, 0.2, 0.1
    prob = rm.MKLm(X, y, kernels=ks, C1=C1, C2=C2, eps=eps)
    m = prob.m
    s = prob.solve()
    mu_s = s.variables["mu"]
    inst = f"m={m}, d=3, base kernels RBF(γ=0.3) and linear, C₁={C1}, C₂={C2}, ε={eps}"
    steps = []

    J_at = prob.inner_problem(mu_s).solve()
    steps.append(Step(
        "Primal", "seed 003 eq. 22 and eqs. 23–25",
        "Kernel weights μ on the simplex, one w_k per base kernel; ‖w_k‖²/μ_k is a perspective "
        "(jointly convex, 0/0 := 0). For fixed μ the problem is SVMm with kernel Σ_kμ_kK_k "
        "and boxes C₁/2, C₂/2; the MKL problem is min over the simplex of that optimum J(μ).",
        "min ½Σ_k‖w_k‖²/μ_k + (C₁/2)Σξ_i + (C₂/2)Ση_i  s.t. 1 − ξ_i ≤ y_i(Σ_k⟨w_k, Φ_k(x_i)⟩ + b)"
        " ≤ 1 + ε + η_i, ξ, η ≥ 0, μ ∈ Δ\n= min_{μ∈Δ} J(μ),  J(μ) = SVMm optimum for K_μ = Σ_kμ_kK_k",
        r"\min\ \tfrac12\sum_k\frac{\|w_k\|^2}{\mu_k}+\frac{C_1}2\sum_i\xi_i+\frac{C_2}2\sum_i\eta_i"
        r"\ \text{s.t.}\ 1-\xi_i\le y_i\Big(\sum_k\langle w_k,\Phi_k(x_i)\rangle+b\Big)\le1+"
        r"\varepsilon+\eta_i,\ \mu\in\Delta;\qquad=\min_{\mu\in\Delta}J(\mu)",
        [Check("MKL optimum (class solve) = J(μ*) (an SVMm solve at the optimal weights)",
               s.objective, J_at.objective, 1e-7),
         Check("primal objective at w_k = μ_k Σ_iν_iΦ_k(x_i) (perspective form) = J(μ*)",
               prob.primal_value(mu_s, J_at.coef, J_at.intercept), J_at.objective, 1e-7)]))

    mu0 = np.array([0.5, 0.5])
    inner0 = prob.inner_problem(mu0).solve()
    grad = -prob.kernel_quadratics(inner0.coef)
    h = 1e-4
    fd = np.array([(prob.inner_problem(mu0 + h * e).solve().objective
                    - prob.inner_problem(mu0 - h * e).solve().objective) / (2 * h)
                   for e in np.eye(2)])
    steps.append(Step(
        "Lagrangian, stationarity and the gradient of J", "seed 003 eqs. 22–26 and the gradient of J after them",
        "Stationarity of the inner Lagrangian in w_k gives w_k = μ_k Σ_i v_i Φ_k(x_i); by the "
        "envelope theorem (Danskin), J is differentiable with the gradient below, evaluated at "
        "the inner dual optimum v*.",
        "w_k = μ_k Σ_i v_iΦ_k(x_i),   ∂J/∂μ_k = −½ v*ᵀK_k v*",
        r"w_k=\mu_k\sum_iv_i\Phi_k(x_i),\qquad\frac{\partial J}{\partial\mu_k}=-\tfrac12v^{\star\top}"
        r"K_kv^\star",
        [Check("−½v*ᵀK_kv* = central finite difference of J (two SVMm solves per k), μ = (½, ½)",
               grad, fd, 1e-5)]))

    conic_dual = prob.solve(form="dual").info.get("conic_value", s.objective)
    conic_primal = prob.solve(form="primal").info.get("conic_value", s.objective)
    printed = rm.MKLm(X, y, kernels=ks, C1=C1, C2=C1, eps=eps).solve()
    steps.append(Step(
        "Dual: a QCQP", "seed 003 eq. 26",
        "Maximising over the simplex turns max_k into an epigraph variable t; the multipliers "
        "of the quadratic constraints are the weights μ.",
        "max Σα_i − (1 + ε)Σβ_i − t  s.t. ½vᵀK_kv ≤ t ∀k, eᵀv = 0, 0 ≤ α ≤ C₁/2, 0 ≤ β ≤ C₂/2",
        r"\max\ \sum_i\alpha_i-(1+\varepsilon)\sum_i\beta_i-t\ \ \text{s.t.}\ \tfrac12v^\top K_kv"
        r"\le t\ \forall k,\ e^\top v=0,\ 0\le\alpha\le\tfrac{C_1}2,\ 0\le\beta\le\tfrac{C_2}2",
        [Check("eq. 22 primal (CVXPY) optimum = QCQP dual (CVXPY) optimum", conic_primal,
               conic_dual, 1e-6)],
        [Erratum("mklm-eq26-C1-on-eta", "seed 003 eq. 26",
                 "Eq. 26 repeats C₁ on the η term (box of β); it is C₂. The printed problem has "
                 "another optimum.",
                 "… + (C₁/2)Ση_i  (box 0 ≤ β ≤ C₁/2)", r"\dots+\tfrac{C_1}2\sum_i\eta_i",
                 "… + (C₂/2)Ση_i  (box 0 ≤ β ≤ C₂/2)", r"\dots+\tfrac{C_2}2\sum_i\eta_i",
                 Check("printed problem's optimum = the eq. 22 primal optimum", printed.objective,
                       conic_primal, 1e-6),
                 Check("corrected problem's optimum = the eq. 22 primal optimum", s.objective,
                       conic_primal, 1e-6))]))

    steps.append(Step(
        "Map back to the primal", "seed 003 eqs. 23–26",
        "Prediction with the weights and the inner coefficients.",
        "f(x) = Σ_k μ_k Σ_i ν_i K_k(x_i, x) + b,   ν = v = Y(α − β)",
        r"f(x)=\sum_k\mu_k\sum_i\nu_iK_k(x_i,x)+b,\qquad\nu=v=Y(\alpha-\beta)",
        [_certificate_check(prob, "(μ, ν, b)", mu=mu_s, coef=s.coef, intercept=s.intercept)]))

    D = reduced_gradient_direction(mu0, grad)
    hs = 1e-4
    fdD = (prob.inner_problem(mu0 + hs * D).solve().objective
           - prob.inner_problem(mu0 - hs * D).solve().objective) / (2 * hs)
    J0 = inner0.objective
    step_len = 0.5 * min(1.0, float(np.min(np.where(D < 0, -mu0 / np.where(D < 0, D, -1), np.inf))))
    J1 = prob.inner_problem(mu0 + step_len * D).solve().objective
    steps.append(Step(
        "Solver step: the reduced gradient on the simplex",
        "seed 003, the two-step algorithm after eq. 26 (as in SimpleMKL, Rakotomamonjy et al., "
        "JMLR 9, 2008)",
        "Alternate: solve the inner SVMm at μ, then move μ along the reduced gradient D, which "
        "keeps Σ_kμ_k = 1 and μ ≥ 0 and is a descent direction (gᵀD = −Σ_{k≠r}(g_k − g_r)² < 0 "
        "unless μ is optimal); a line search picks the step.",
        "r = argmax_k μ_k;  D_k = −(g_k − g_r) (μ_k > 0 or g_k ≤ g_r), 0 otherwise;  "
        "D_r = −Σ_{k≠r}D_k;   μ ← μ + sD",
        r"r=\arg\max_k\mu_k,\quad D_k=-(g_k-g_r),\quad D_r=-\sum_{k\ne r}D_k,\quad\mu\leftarrow\mu+sD",
        [Check("directional derivative gᵀD = finite difference of J along D", grad @ D, fdD,
               1e-5),
         Check("a step along D lowers J: J(μ + sD) ≤ J(μ)", J1, J0, 1e-12, kind="le")]))
    return Walkthrough("MKLm", seed, inst, steps)
