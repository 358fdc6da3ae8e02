"""Walk-through of ODML / LDM.

ODML (seed 002 §3.1 eqs. 4–10, seed 000 §3.1) and LDM (seed 001
eqs. 3–12), one walk-through builder for both margin-distribution machines.
"""
from __future__ import annotations

import numpy as np

from . import figures as fg
from .algebra import algebra_lines, evaluate
from .core import Check, Erratum, Figure, Note, Step, Steps, Walkthrough
from .numerics import _binary_instance, _box_cd, _cd_step_checks, _certificate_check, solve
from .svm import _cs_step


def _margin_distribution(family, seed):
    """ODML (seed 002 §3.1 eqs. 4–10; seed 000 §3.1) and LDM (seed 001 eqs. 3–12)."""
    import refmodels as rm

    rng = np.random.default_rng(seed)
    X, y = _binary_instance(rng, m=12, d=2)
    kern = rm.kernels.RBF(gamma=0.5)
    if family == "ODML":
        lam, mu1, mu2 = 5.0, 1.0, 2.0
        prob = rm.ODML(X, y, lam=lam, mu1=mu1, mu2=mu2, kernel=kern)
        m = prob.m
        Acoef, mean, upper, name = 2 * mu1 / m, mu2 / m, lam / m, "alpha"
        inst = f"m={m} points in 2-D, RBF kernel γ=0.5, λ={lam}, μ₁={mu1}, μ₂={mu2}"
        src = "seed 002 eq. 4 (§3.1); seed 000 §3.1 with λ₁ = μ₁, λ₂ = μ₂, C = λ"
    else:
        C, lam1, lam2 = 0.5, 0.7, 2.0
        prob = rm.LDM(X, y, C=C, lam1=lam1, lam2=lam2, kernel=kern)
        m = prob.m
        Acoef, mean, upper, name = 4 * lam1 / m, lam2 / m, C, "beta"
        inst = f"m={m} points in 2-D, RBF kernel γ=0.5, C={C}, λ₁={lam1}, λ₂={lam2}"
        src = "seed 001 eqs. 3–6"
    F, G = prob.F, prob.gram
    P = np.eye(m) - np.outer(y, y) / m
    A = Acoef * P
    steps = Steps()
    mlt = "α"

    # 1. primal ------------------------------------------------------------------------
    with steps.attempt("Primal", src):
        p, d = solve(prob, "primal"), solve(prob, "dual")
        a = np.asarray(d.variables[name], float)
        v = a + mean
        H = prob.H
        wr = rng.normal(size=F.shape[1])
        gam = y * (F @ wr)
        if family == "ODML":
            checks = [Check("margin variance γ_v = (1/m)Σ(γ_i − γ_m)² = (1/m) wᵀFᵀPFw at a "
                            "random w", np.var(gam), wr @ F.T @ P @ F @ wr / m, 1e-12)]
            uni = ("min_{w,ξ} ½‖w‖² + μ₁γ_v − μ₂γ_m + (λ/m) Σ_i ξ_i   s.t. y_i wᵀφ(x_i) ≥ 1 − ξ_i,"
                   " ξ ≥ 0\n"
                   "γ_i = y_i wᵀφ(x_i),  γ_m = (1/m)Σγ_i,  γ_v = (1/m)Σ(γ_i − γ_m)² = (1/m) "
                   "wᵀFᵀPFw,  P = I − yyᵀ/m")
            lat = (r"\min_{w,\xi}\ \tfrac12\|w\|^2+\mu_1\gamma_v-\mu_2\gamma_m+\frac{\lambda}{m}"
                   r"\sum_i\xi_i\quad\text{s.t.}\quad y_iw^\top\phi(x_i)\ge1-\xi_i,\ \xi\ge0"
                   "\n"
                   r"\gamma_v=\tfrac1m\sum_i(\gamma_i-\gamma_m)^2=\tfrac1m w^\top F^\top PFw,"
                   r"\qquad "
                   r"P=I-\tfrac1m yy^\top")
            text = ("Hinge loss plus the margin variance (penalised) and the margin mean "
                    "(rewarded): the SVM looks at the smallest margins only, ODML at their "
                    "whole distribution. With rows of F as feature vectors, the variance is a "
                    "quadratic form in w.")
        else:
            pair = np.sum((gam[:, None] - gam[None, :]) ** 2) / m ** 2
            twin = solve(rm.ODML(X, y, lam=m * C, mu1=2 * lam1, mu2=lam2, kernel=kern), "dual")
            checks = [Check("seed 001's pairwise variance γ̂ = (1/m²)Σ_{i,j}(γ_i − γ_j)² = "
                            "2γ_v at a random w", pair, 2 * np.var(gam), 1e-12),
                      Check("LDM(C, λ₁, λ₂) optimum = ODML(λ = mC, μ₁ = 2λ₁, μ₂ = λ₂) optimum",
                            p.objective, twin.objective, 1e-7),
                      Check("… with the same w", p.w, twin.w, 1e-5)]
            uni = ("min_{w,ξ} ½‖w‖² + λ₁γ̂ − λ₂γ_m + C Σ_i ξ_i   s.t. y_i wᵀφ(x_i) ≥ 1 − ξ_i, "
                   "ξ ≥ 0\n"
                   "γ̂ = (1/m²)Σ_{i,j}(γ_i − γ_j)² = 2γ_v;   LDM(C, λ₁, λ₂) = ODML(λ = mC, "
                   "μ₁ = 2λ₁, μ₂ = λ₂)")
            lat = (r"\min_{w,\xi}\ \tfrac12\|w\|^2+\lambda_1\hat\gamma-\lambda_2\gamma_m+C"
                   r"\sum_i\xi_i\quad\text{s.t.}\quad y_iw^\top\phi(x_i)\ge1-\xi_i,\ \xi\ge0"
                   "\n"
                   r"\hat\gamma=\tfrac1{m^2}\sum_{i,j}(\gamma_i-\gamma_j)^2=2\gamma_v,\qquad"
                   r"\mathrm{LDM}(C,\lambda_1,\lambda_2)=\mathrm{ODML}(mC,2\lambda_1,\lambda_2)")
            text = ("Seed 001 measures the margin variance pairwise, which is twice the usual "
                    "variance; LDM is therefore ODML under a change of parameters, and the "
                    "rest of this walk-through uses ODML's names with μ₁ = 2λ₁, μ₂ = λ₂, "
                    "c = C, and α for the multiplier seed 001 calls β.")
        steps.append(Step("Primal", src, text, uni, lat, checks))

    # 2. Lagrangian ------------------------------------------------------------------------
    with steps.attempt("Lagrangian", "seed 002 eqs. 5–6"):
        alg = algebra_lines("ODML")
        mu1_ = Acoef * m / 2
        mu2_ = mean * m
        r_ = F.shape[1]
        w0, x0, a0, r0 = (rng.normal(size=r_), rng.normal(size=m), rng.uniform(0, upper, m),
                          rng.uniform(0, 1, m))
        Minv = np.linalg.inv(np.eye(r_) + F.T @ A @ F)
        vals = dict(F=F, Y=np.diag(y.astype(float)), e=np.ones(m), y=y.astype(float),
                    w=w0, xi=x0, alpha=a0, r=r0, mu_1=mu1_, mu_2=mu2_, c=upper, M=Minv,
                    H=H, m_value=m, r_value=r_)
        typed_w = w0 + F.T @ A @ F @ w0 - F.T @ (y * (a0 + mean))
        steps.append(Step(
            "Lagrangian", ("seed 002 eqs. 5–6" if family == "ODML" else
                           "seed 001 eqs. 8–9 (written there over the coefficients of eq. 7; "
                           "here over w)") + f"; multipliers {mlt} ≥ 0 (margins), r ≥ 0 (ξ ≥ 0)",
            "SymPy builds L with the variance written from its definition, "
            "(1/m)(γ − γ_m e)ᵀ(γ − γ_m e) with γ = YFw, and differentiates it (below, as "
            "computed: the yyᵀ terms are the centring, together FᵀAFw). The check evaluates "
            "SymPy's gradient on the instance at a random point.",
            "L = ½wᵀ(I + FᵀAF)w − (μ₂/m)·yᵀFw + c eᵀξ − αᵀ(YFw − e + ξ) − rᵀξ\n"
            "∇_w L = (I + FᵀAF)w − FᵀY v,  v = α + (μ₂/m)e;   ∇_ξ L = c e − α − r\n"
            + ("A = (2μ₁/m)P, c = λ/m" if family == "ODML" else
               "A = A_L = (4λ₁/m)P, μ₂ = λ₂, c = C"),
            r"L=\tfrac12w^\top(I+F^\top AF)w-\tfrac{\mu_2}{m}y^\top Fw+c\,e^\top\xi-\alpha^\top"
            r"(YFw-e+\xi)-r^\top\xi" "\n"
            r"\nabla_wL=(I+F^\top AF)w-F^\top Yv,\quad v=\alpha+\tfrac{\mu_2}{m}e,\quad"
            r"\nabla_\xi L=ce-\alpha-r" "\n"
            + (r"A=\tfrac{2\mu_1}{m}P,\quad c=\tfrac{\lambda}{m}" if family == "ODML" else
               r"A=A_L=\tfrac{4\lambda_1}{m}P,\quad\mu_2=\lambda_2,\quad c=C"),
            [Check("SymPy's ∇_w L (variance from its definition) = (I + FᵀAF)w − FᵀYv",
                   evaluate("ODML", "gradients", 0, vals).ravel(), typed_w, 1e-12),
             Check("SymPy's ∇_ξ L = c e − α − r", evaluate("ODML", "gradients", 1, vals).ravel(),
                   upper - a0 - r0, 1e-12)],
            algebra=alg["gradients"]))

    # 3. stationarity -------------------------------------------------------------------------
    with steps.attempt("Stationarity", "seed 002 eq. 7 and eq. 9"):
        nu_direct = np.linalg.solve(np.eye(m) + A @ G, y * v)
        steps.append(Step(
            "Stationarity", ("seed 002 eq. 7 and eq. 9" if family == "ODML" else
                             "seed 001 eqs. 10–11"),
            "∇_w L = 0 is a linear system in w; by the push-through identity "
            "(I + FᵀAF)⁻¹Fᵀ = Fᵀ(I + AG)⁻¹ its solution is a combination of the training "
            "points.",
            "w = (I + FᵀAF)⁻¹ FᵀY v = Fᵀ (I + AG)⁻¹ Y v,   0 ≤ α ≤ c",
            r"w=(I+F^\top AF)^{-1}F^\top Yv=F^\top(I+AG)^{-1}Yv,\qquad 0\le\alpha\le c",
            [Check("w of the primal solve = Fᵀ(I + AG)⁻¹Yv with α of the dual solve", p.w,
                   F.T @ nu_direct, 1e-6)]))

    # 4. dual and the constant the paper drops -------------------------------------------------
    with steps.attempt("Dual", "seed 002 eqs. 8–10"):
        const = 0.5 * mean ** 2 * H.sum()
        lin_term = mean * H.sum(axis=1) - 1.0
        a_paper = _box_cd(H, lin_term, upper)           # the paper's eq. 10 (no constant)
        paper_min = 0.5 * a_paper @ H @ a_paper + lin_term @ a_paper
        ar = rng.uniform(0, upper, m)
        vr = ar + mean
        vals_d = dict(vals, alpha=ar)
        key = "odml-dual-drops-constant" if family == "ODML" else "ldm-dual-drops-constant"
        nsrc = ("seed 002 before eq. 10 (\"neglect the const term which doesn't have "
                "influence on the optimization\"); seed 000 eq. 14" if family == "ODML" else
                "seed 001 eq. 12 and its footnote (\"we omit constants without influence on "
                "optimization\")")
        steps.append(Step(
            "Dual", ("seed 002 eqs. 8–10" if family == "ODML" else "seed 001 eq. 12"),
            "SymPy substitutes w(α) = M⁻¹FᵀYv (M = I + FᵀAF) and r = c e − α into L; with "
            "H = YFM⁻¹FᵀY = YG(I + AG)⁻¹Y (push-through) the dual function is the negative "
            "of ½vᵀHv − eᵀα, a box-constrained QP in α. Expanded (below) it has the constant "
            "term −½(μ₂/m)²eᵀHe.",
            "min_α ½ vᵀHv − eᵀα   s.t. 0 ≤ α ≤ c,   v = α + (μ₂/m)e,   H = YG(I + AG)⁻¹Y",
            r"\min_\alpha\ \tfrac12v^\top Hv-e^\top\alpha\quad\text{s.t.}\quad0\le\alpha\le c,"
            r"\quad v=\alpha+\tfrac{\mu_2}{m}e,\quad H=YG(I+AG)^{-1}Y",
            [Check("SymPy's substituted L at a random α = −(½vᵀHv − eᵀα)",
                   evaluate("ODML", "dual", 0, vals_d).ravel(),
                   -(0.5 * vr @ H @ vr - ar.sum()), 1e-9),
             Check("primal optimum P* = −(dual optimum), the constant kept", p.objective,
                   prob.dual_value(d.variables), 1e-7)],
            notes=[Note(key, "convention", nsrc,
                        "The paper expands ½vᵀHv and drops the constant ½(μ₂/m)²eᵀHe, saying so "
                        "(the minimiser does not depend on it). That is right for training. "
                        "What changes is the optimal value: the paper's dual optimum is not "
                        "−P*, so a duality gap or a certificate computed from it must add the "
                        "constant back, as this package does.",
                        checks=[Check("the paper's dual (constant dropped, solved by coordinate "
                                      "descent) has the same minimiser as ours", a_paper, a,
                                      1e-6),
                                Check("−(the paper's optimum + ½(μ₂/m)²eᵀHe) = P*",
                                      -(paper_min + const), p.objective, 1e-7)],
                        unicode="paper: min ½αᵀHα + ((μ₂/m)He − e)ᵀα;  ours: the same + "
                                "½(μ₂/m)²eᵀHe",
                        latex=r"\min_\alpha\ \tfrac12\alpha^\top H\alpha+\big(\tfrac{\mu_2}{m}He-e"
                              r"\big)^\top\alpha\ \Big[+\tfrac12\big(\tfrac{\mu_2}{m}\big)^2e^\top "
                              r"He\Big]")],
            algebra=alg["dual"]))

    # 5. Woodbury ---------------------------------------------------------------------------
    with steps.attempt("Woodbury identity", "seed 000 Lemma 1; seed 001 eqs. 8–12"):
        _woodbury_step(steps, family, seed, m, y, G, A, Acoef, F, H, rm,
                       locals().get("lam1"), locals().get("lam2"), locals().get("C"))

    # 6. map back -------------------------------------------------------------------------------
    with steps.attempt("Map back to the primal", "seed 002 after eq. 10"):
        steps.append(Step(
            "Map back to the primal", ("seed 002 after eq. 10 (from eqs. 7 and 9)"
                                       if family == "ODML" else
                                       "seed 001 after eq. 12 (from eq. 10)"),
            "Coefficients over training points, f(x) = Σ_i ν_i κ(x_i, x).",
            "ν = (I + AG)⁻¹ Y v,   f(x) = Σ_i ν_i κ(x_i, x)",
            r"\nu=(I+AG)^{-1}Yv,\qquad f(x)=\sum_i\nu_i\,\kappa(x_i,x)",
            [Check("decision values Gν (dual) = Fw (primal solve)", G @ nu_direct, F @ p.w,
                   1e-6),
             _certificate_check(prob, "the point given by ν alone", coef=nu_direct)]))

    # 7. complementary slackness -------------------------------------------------------------
    with steps.attempt("Complementary slackness and the support vectors", "KKT"):
        gamma = y * (G @ nu_direct)
        xi_d = np.maximum(0.0, 1.0 - gamma)
        tol = 1e-6 * (1 + upper)
        n_nz = int(np.sum(np.abs(nu_direct) > 1e-8 * (1 + np.max(np.abs(nu_direct)))))
        cs = _cs_step(f"the hinge part of the dual, while ν = (I + AG)⁻¹Y(α + (μ₂/m)e) has "
                      f"{n_nz} non-zeros of {m}: every point enters f through the margin "
                      "mean and variance, so the expansion is not sparse", a, upper,
                      gamma, xi_d, y, "KKT conditions of " + ("seed 002 eq. 4" if family ==
                                                              "ODML" else "seed 001 eq. 5"),
                      [Check("ν is dense: its number of non-zeros is m (not the number of "
                             "SVs)", float(n_nz), float(m), 0.0)],
                      figure=Figure("decision", f"{family} on the instance: f(x) = 0 (solid), "
                                    "f(x) = ±1 (dashed); circled: the points with "
                                    f"{mlt}_i > 0 (bold: at the bound c). Every point, "
                                    "circled or not, has ν_i ≠ 0.",
                                    fg.decision_2d(X, y, lambda Z: kern.cross(Z, X) @ nu_direct,
                                                   sv=a > tol, bound=a >= upper - tol)),
                      bound_name="c")
        steps.append(cs)

    # 8. solver step -------------------------------------------------------------------------
    with steps.attempt("Solver step", "seed 002 Alg. 1; seed 001 Alg. 2"):
        _solver_step(steps, family, seed, rng, H, mean, upper, a, C=locals().get("C"),
                     lam1=locals().get("lam1"), lam2=locals().get("lam2"))
    return Walkthrough(family, seed, inst, steps)


def _solver_step(steps, family, seed, rng, H, mean, upper, a, C=None, lam1=None, lam2=None):
    lin_term = mean * H.sum(axis=1) - 1.0
    cd = _cd_step_checks(H, lin_term, upper, a, rng)
    if family == "ODML":
        steps.append(Step(
            "Solver step: dual coordinate descent", "seed 002 eq. 16 and Alg. 1",
            "Each coordinate of the box-constrained dual is a 1-D quadratic, minimised in "
            "closed form (the constant term does not move the minimiser).",
            "g_i = (Hv)_i − 1,   α_i ← min(max(α_i − g_i / H_ii, 0), λ/m)",
            r"g_i=(Hv)_i-1,\qquad\alpha_i\leftarrow\min\!\big(\max(\alpha_i-g_i/H_{ii},0),"
            r"\lambda/m\big)",
            cd))
    else:
        # ASGD's two-sample gradient (seed 001 Alg. 2, Thm 2), linear kernel, exact expectation
        XA, yA = _binary_instance(np.random.default_rng(seed + 2), m=8, d=3)
        mA = len(yA)
        wA = rng.normal(size=3)
        gA = yA * (XA @ wA)
        Z = yA[:, None] * XA
        full = (wA + lam1 / mA ** 2 * sum(2 * (gA[i] - gA[j]) * (Z[i] - Z[j])
                                          for i in range(mA) for j in range(mA))
                - lam2 * Z.mean(axis=0) - C * Z[gA < 1].sum(axis=0))

        def g2(i, j):
            hinge = -mA * C * ((gA[i] < 1) * Z[i] + (gA[j] < 1) * Z[j]) / 2
            return (wA + 2 * lam1 * (gA[i] - gA[j]) * (Z[i] - Z[j])
                    - lam2 * (Z[i] + Z[j]) / 2 + hinge)
        e_iid = sum(g2(i, j) for i in range(mA) for j in range(mA)) / mA ** 2
        e_neq = sum(g2(i, j) for i in range(mA) for j in range(mA) if i != j) / (mA * (mA - 1))
        var_part = lam1 / mA ** 2 * sum(2 * (gA[i] - gA[j]) * (Z[i] - Z[j])
                                        for i in range(mA) for j in range(mA))
        steps.append(Step(
            "Solver steps: dual coordinate descent, and ASGD's two-sample gradient",
            "seed 001 eq. 13 and Alg. 1 (DCD); eqs. 14–15, Thm. 2 and Alg. 2 (ASGD, linear kernel)",
            "The dual is solved by the same closed-form coordinate step as ODML's. For large "
            "linear problems seed 001 uses averaged SGD with a stochastic gradient built from "
            "two samples i, j; it is unbiased when i and j are drawn independently WITH "
            "replacement (checked here by exact enumeration of all pairs on an 8-point "
            "instance); drawing i ≠ j inflates the variance term by m/(m − 1).",
            "β_i ← min(max(β_i − g_i/H_ii, 0), C)\n∇̃f = w + 2λ₁(γ_i − γ_j)(y_ix_i − y_jx_j)"
            " − λ₂(y_ix_i + y_jx_j)/2 − (mC/2)(𝟙[γ_i<1]y_ix_i + 𝟙[γ_j<1]y_jx_j)",
            r"\beta_i\leftarrow\min(\max(\beta_i-g_i/H_{ii},0),C)" "\n"
            r"\tilde\nabla f=w+2\lambda_1(\gamma_i-\gamma_j)(y_ix_i-y_jx_j)-\tfrac{\lambda_2}2"
            r"(y_ix_i+y_jx_j)" "\n"
            r"\qquad-\tfrac{mC}2\big(\mathbb 1[\gamma_i<1]y_ix_i+\mathbb 1[\gamma_j<1]y_jx_j"
            r"\big)",
            cd + [Check("E over i, j i.i.d. (all m² pairs) of the two-sample gradient = ∇f(w)",
                        e_iid, full, 1e-12),
                  Check("E over pairs i ≠ j = ∇f(w) + (1/(m − 1))·(variance part): biased",
                        e_neq, full + var_part / (mA - 1), 1e-12)]))


def _woodbury_step(steps, family, seed, m, y, G, A, Acoef, F, H, rm, lam1, lam2, C):
    from scipy.linalg import cho_factor, cho_solve

    P = np.eye(m) - np.outer(y, y) / m
    R = np.sqrt(Acoef) * P
    stable = G - G @ R @ cho_solve(cho_factor(np.eye(m) + R @ G @ R), R @ G)
    direct = G @ np.linalg.inv(np.eye(m) + A @ G)
    if family == "ODML":
        try:
            Ainv = np.linalg.inv(A)
        except np.linalg.LinAlgError:
            Ainv = np.linalg.pinv(A)
        r_ = F.shape[1]
        lhs = np.linalg.solve(np.eye(r_) + F.T @ A @ F, F.T)
        rhs = F.T @ np.linalg.inv(np.eye(m) + A @ G)
        steps.append(Step(
            "Woodbury identity", "seed 000 Lemma 1; seed 002, the sentence before eq. 9",
            "H needs G(I + AG)⁻¹. The stable symmetric form factors the SPD matrix I + RGR "
            "(Cholesky) with R = √(2μ₁/m) P, so that R² = A; A itself is never inverted.",
            "G(I + AG)⁻¹ = G − GR(I + RGR)⁻¹RG,   R = √(2μ₁/m)·P,  R² = A",
            r"G(I+AG)^{-1}=G-GR\,(I+RGR)^{-1}RG,\qquad R=\sqrt{2\mu_1/m}\,P,\ R^2=A",
            [Check("stable form (Cholesky of I + RGR) = G(I + AG)⁻¹ by a direct solve",
                   stable, direct, 1e-10),
             Check("H of the problem class (refmodels.odml.woodbury_H) = Y·stable form·Y", H,
                   y[:, None] * stable * y[None, :], 1e-10)],
            [Erratum("odml-lemma1-inverts-singular-A",
                     "seed 000 Lemma 1; seed 002 before eq. 9",
                     "The Woodbury step is stated with A⁻¹, but A = (2μ₁/m)P is singular (Ay = 0): "
                     "no inverse exists (any computed 'inverse' leaves AA⁻¹ ≠ I). The conclusion "
                     "still holds by the push-through identity, which needs no inverse of A.",
                     "(I + FᵀAF)⁻¹ by Woodbury with A⁻¹:  A A⁻¹ = I",
                     r"(I+F^\top AF)^{-1}=I-F^\top(A^{-1}+G)^{-1}F\quad\text{needs}\quad AA^{-1}=I",
                     "push-through: (I + FᵀAF)⁻¹Fᵀ = Fᵀ(I + AG)⁻¹",
                     r"(I+F^\top AF)^{-1}F^\top=F^\top(I+AG)^{-1}",
                     Check("A · inv(A) = I (numpy's inverse of the singular A)", A @ Ainv,
                           np.eye(m), 1e-6),
                     Check("push-through: (I + FᵀAF)⁻¹Fᵀ = Fᵀ(I + AG)⁻¹", lhs, rhs, 1e-10))]))
    else:
        Qs = G + 4 * lam1 / m ** 2 * (m * G @ G - G @ np.outer(y, y) @ G)
        H_seed = y[:, None] * (G @ np.linalg.solve(Qs, G)) * y[None, :]
        XL, yL = _binary_instance(np.random.default_rng(seed + 1), m=12, d=3)
        lin = rm.LDM(XL, yL, C=C, lam1=lam1, lam2=lam2, kernel=rm.kernels.Linear())
        GL, mL = lin.gram, lin.m
        QL = GL + 4 * lam1 / mL ** 2 * (mL * GL @ GL - GL @ np.outer(yL, yL) @ GL)
        try:
            H_inv = yL[:, None] * (GL @ np.linalg.inv(QL) @ GL) * yL[None, :]
        except np.linalg.LinAlgError:
            H_inv = np.full((mL, mL), np.nan)
        pl, dl = solve(lin, "primal"), solve(lin, "dual")
        steps.append(Step(
            "Woodbury identity", "seed 001 eqs. 8 and 12; eq. 18 (linear kernel)",
            "Seed 001 writes H = YGQ⁻¹GY with Q = G + (4λ₁/m²)(mG² − Gyyᵀ G) = G(I + A_L G). "
            "We compute H = YG(I + A_L G)⁻¹Y by the stable form (Cholesky of I + RGR), which "
            "equals the seed's H whenever G ≻ 0 and is always defined.",
            "H = Y G (I + A_L G)⁻¹ Y = Y G Q⁻¹ G Y  (G ≻ 0),   Q = G(I + A_L G)",
            r"H=YG(I+A_LG)^{-1}Y=YGQ^{-1}GY\ (G\succ0),\qquad Q=G+\tfrac{4\lambda_1}{m^2}"
            r"(mG^2-Gyy^\top G)=G(I+A_LG)",
            [Check("Q of seed 001 = G(I + A_L G)", Qs, G @ (np.eye(m) + A @ G), 1e-12),
             Check("RBF instance (G ≻ 0): seed's YGQ⁻¹GY = ours", H_seed, H, 1e-8),
             Check("stable form (Cholesky of I + RGR) = G(I + A_L G)⁻¹ by a direct solve",
                   stable, direct, 1e-10)],
            [Erratum("ldm-singular-Q", "seed 001 eqs. 8–12",
                     f"Q is singular whenever G is (here: linear kernel, d = 3 < m = {mL}), so Q⁻¹ "
                     "does not exist and an explicit inverse gives a wrong H. Ours stays right: "
                     "strong duality with the primal holds on the same instance.",
                     "H = Y G inv(Q) G Y  (explicit inverse)",
                     r"H=YG\,Q^{-1}GY\quad(\text{explicit inverse of a singular }Q)",
                     "H = Y G (I + A_L G)⁻¹ Y  (stable form)",
                     r"H=YG(I+A_LG)^{-1}Y",
                     Check("linear kernel, d < m: H via inv(Q) = H via the push-through form",
                           H_inv, lin.H, 1e-6),
                     Check("linear kernel, d < m: with our H, primal optimum = −(dual optimum)",
                           pl.objective, lin.dual_value(dl.variables), 1e-7))]))

