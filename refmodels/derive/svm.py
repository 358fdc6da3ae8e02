"""Walk-throughs of the soft-margin SVM: without intercept (the LIBLINEAR convention, the
canonical SVM of this package) and with an intercept ``b`` (LIBSVM's C-SVC: the equality
``yᵀα = 0`` in the dual, the recovery of ``b``, and SMO's working-set selection).

Seed 002 eq. 2: primal, Lagrangian (SymPy), dual, map back, complementary slackness and
the support vectors, and the solver's step.
"""
from __future__ import annotations

import numpy as np

from . import figures as fg
from .algebra import algebra_lines, algebra_checks
from .core import Check, Figure, Step, Steps, Walkthrough
from .numerics import _binary_instance, _cd_step_checks, _certificate_check, _line_min, solve


def _roles(a, C, gamma, tol, cname="C"):
    """The support-vector reading of a hinge-loss dual: which KKT case each point is in."""
    out = []
    for ai, gi in zip(a, gamma):
        if ai <= tol:
            out.append("not a SV (α = 0, γ ≥ 1)")
        elif ai >= C - tol:
            out.append(f"bound SV (α = {cname}, γ ≤ 1)")
        else:
            out.append(f"free SV (0 < α < {cname}, γ = 1)")
    return out


def _cs_step(family_text, a, C, gamma, xi, y, source, extra_checks=(), figure=None,
             bound_name="C"):
    """Complementary slackness of a hinge-loss dual and the support vectors it defines
    (``C`` is the box's upper end, called ``bound_name`` in the text)."""
    scale = 1.0 + C
    tol = 1e-6 * scale
    roles = _roles(a, C, gamma, tol, bound_name)
    rows = [(i, int(y[i]), float(gamma[i]), float(a[i]), roles[i]) for i in range(len(a))]
    n_sv = int(np.sum(a > tol))
    free = (a > tol) & (a < C - tol)
    checks = [
        Check("complementary slackness α_i(γ_i − 1 + ξ_i) = 0 (max over i)",
              np.max(np.abs(a * (gamma - 1 + xi))), 0.0, 1e-6),
        Check(f"complementary slackness ({bound_name} − α_i)ξ_i = 0 (max over i)",
              np.max(np.abs((C - a) * xi)), 0.0, 1e-6),
        Check("every point with α_i = 0 has γ_i ≥ 1", np.where(a <= tol, 1 - gamma, 0.0),
              np.zeros(len(a)), 1e-6, kind="le"),
        Check(f"every free SV (0 < α_i < {bound_name}) lies on the margin, γ_i = 1",
              gamma[free] if free.any() else np.ones(1), np.ones(max(int(free.sum()), 1)),
              1e-6),
    ] + list(extra_checks)
    return Step(
        "Complementary slackness and the support vectors", source,
        f"At the optimum each multiplier times its constraint's slack vanishes. So α_i > 0 "
        f"only where the margin constraint is tight: those points are the support vectors, "
        f"the only ones in {family_text}. Here {n_sv} of {len(a)} points are support "
        f"vectors ({int(free.sum())} free, on the margin; {int(np.sum(a >= C - tol))} at "
        f"the bound {bound_name}, inside the margin or misclassified).",
        f"α_i (y_i f(x_i) − 1 + ξ_i) = 0,   ({bound_name} − α_i) ξ_i = 0\n"
        f"α_i = 0 ⇒ γ_i ≥ 1;   0 < α_i < {bound_name} ⇒ γ_i = 1;   α_i = {bound_name} ⇒ "
        "γ_i ≤ 1",
        r"\alpha_i\big(y_if(x_i)-1+\xi_i\big)=0,\qquad(" + bound_name
        + r"-\alpha_i)\,\xi_i=0" "\n"
        r"\alpha_i=0\Rightarrow\gamma_i\ge1,\qquad0<\alpha_i<" + bound_name
        + r"\Rightarrow\gamma_i=1,\qquad\alpha_i=" + bound_name + r"\Rightarrow\gamma_i\le1",
        checks, table=(("i", "y_i", "γ_i", "α_i", "role"), rows), figure=figure)


def _svm(seed):
    import refmodels as rm

    rng = np.random.default_rng(seed)
    X, y = _binary_instance(rng, m=12, d=2)
    C = 1.0
    prob = rm.SVM(X, y, C=C, kernel=rm.kernels.RBF(gamma=0.5))
    F, G, m = prob.F, prob.gram, prob.m
    Q = y[:, None] * G * y[None, :]
    inst = f"m={m} points in 2-D, RBF kernel γ=0.5, C={C}, no intercept"
    steps = Steps()

    with steps.attempt("Primal", "seed 002 eq. 2"):
        p, d = solve(prob, "primal"), solve(prob, "dual")
        a = d.variables["alpha"]
        xi = np.asarray(p.variables["xi"], float)
        steps.append(Step(
            "Primal", "seed 002 eq. 2 (LIBSVM/LIBLINEAR convention; the paper writes λ/m for C)",
            "Hinge-loss SVM over w in feature space, with the empirical kernel map F (FFᵀ = "
            "G) standing for φ. The slacks ξ are eliminated as ξ_i = max(0, 1 − γ_i) at the "
            "optimum, γ_i = y_i wᵀφ(x_i) being the margin of point i.",
            "min_{w,ξ} ½‖w‖² + C Σ_i ξ_i   s.t.  y_i wᵀφ(x_i) ≥ 1 − ξ_i,  ξ ≥ 0",
            r"\min_{w,\xi}\ \tfrac12\|w\|^2 + C\sum_i\xi_i\quad\text{s.t.}\quad "
            r"y_i w^\top\phi(x_i)\ge 1-\xi_i,\ \xi\ge0",
            [Check("constrained optimum (CVXPY, its own ξ) = ½‖w‖² + C Σ max(0, 1 − γ_i) at "
                   "its w", 0.5 * p.w @ p.w + C * xi.sum(), prob.primal_value(p.w), 1e-6)]))

    with steps.attempt("Lagrangian", "seed 002 eq. 2"):
        alg = algebra_lines("SVM")
        steps.append(Step(
            "Lagrangian", "seed 002 eq. 2, multipliers α ≥ 0 (margins) and r ≥ 0 (ξ ≥ 0)",
            "One multiplier per constraint. SymPy builds L from matrix symbols and "
            "differentiates it (shown below as computed); the check evaluates SymPy's "
            "gradient on the instance at a random point against the gradient as the paper "
            "states it.",
            "L = ½‖w‖² + C eᵀξ − Σ_i α_i (y_i wᵀφ(x_i) − 1 + ξ_i) − rᵀξ\n"
            "∇_w L = w − Σ_i α_i y_i φ(x_i),   ∇_ξ L = C e − α − r",
            r"L=\tfrac12\|w\|^2+Ce^\top\xi-\sum_i\alpha_i\big(y_iw^\top\phi(x_i)-1+\xi_i\big)"
            r"-r^\top\xi" "\n"
            r"\nabla_wL=w-\sum_i\alpha_iy_i\phi(x_i),\qquad\nabla_\xi L=Ce-\alpha-r",
            algebra_checks("SVM", "gradients", F=F, y=y, C=C, rng=rng),
            algebra=alg["gradients"]))

    with steps.attempt("Stationarity", "seed 002 eq. 7 with μ₁ = μ₂ = 0"):
        steps.append(Step(
            "Stationarity", "seed 002 eq. 7 with μ₁ = μ₂ = 0 (ODML reduces to this SVM)",
            "∇L = 0 gives w as a combination of the training points and, with r ≥ 0, the "
            "box on α.",
            "w = Σ_i α_i y_i φ(x_i) = Fᵀ Y α,   0 ≤ α ≤ C",
            r"w=\sum_i\alpha_iy_i\phi(x_i)=F^\top Y\alpha,\qquad 0\le\alpha\le C",
            [Check("w of the primal solve = Fᵀ Y α of the (separate) dual solve", p.w,
                   F.T @ (y * a), 1e-6)]))

    with steps.attempt("Dual", "seed 002 eq. 10 with μ₁ = μ₂ = 0"):
        steps.append(Step(
            "Dual", "seed 002 eq. 10 with μ₁ = μ₂ = 0 and λ/m = C (LIBSVM's dual)",
            "Substituting the stationarity conditions into L (SymPy's substitution below; "
            "the ξ terms cancel since r = C − α) gives the dual function; minimising its "
            "negative over the box is the dual problem. Strong duality holds: P* = −D*.",
            "min_α ½ αᵀQα − eᵀα   s.t. 0 ≤ α ≤ C,   Q = YGY",
            r"\min_\alpha\ \tfrac12\alpha^\top Q\alpha-e^\top\alpha\quad\text{s.t.}\quad"
            r"0\le\alpha\le C,\qquad Q=YGY",
            algebra_checks("SVM", "dual", F=F, y=y, C=C, rng=rng)
            + [Check("primal optimum P* (primal solve) = −D* (dual solve)", p.objective,
                     prob.dual_value(d.variables), 1e-7)],
            algebra=alg["dual"]))

    with steps.attempt("Map back to the primal", "seed 002 after eq. 10"):
        steps.append(Step(
            "Map back to the primal", "seed 002 after eq. 10, with μ₁ = μ₂ = 0",
            "Predictions as coefficients over training points: ν = Yα, "
            "f(x) = Σ_i ν_i κ(x_i, x).",
            "ν = Y α,   f(x) = Σ_i ν_i κ(x_i, x)",
            r"\nu=Y\alpha,\qquad f(x)=\sum_i\nu_i\,\kappa(x_i,x)",
            [Check("decision values G ν (dual) = F w (primal solve)", G @ (y * a), F @ p.w,
                   1e-6),
             _certificate_check(prob, "the point given by ν alone", coef=y * a)]))

    with steps.attempt("Complementary slackness and the support vectors", "seed 002 eq. 2"):
        gamma = y * (G @ (y * a))
        xi_d = np.maximum(0.0, 1.0 - gamma)
        nu = y * a
        steps.append(_cs_step(
            "ν = Yα: f(x) is a sum over the support vectors alone", a, C, gamma, xi_d, y,
            "KKT conditions of seed 002 eq. 2",
            [Check("ν_i = 0 exactly where α_i = 0 (sparsity of the expansion)",
                   np.abs(nu[a <= 1e-6 * (1 + C)]) if np.any(a <= 1e-6 * (1 + C))
                   else np.zeros(1), 0.0, 1e-6)],
            figure=Figure("decision", "The instance, the decision function f(x) = 0 (solid) "
                          "and the margins f(x) = ±1 (dashed); support vectors circled "
                          "(bold circle: at the bound C).",
                          fg.decision_2d(X, y, lambda Z: prob.kernel.cross(Z, X) @ nu,
                                         levels=(-1, 0, 1), sv=a > 1e-6 * (1 + C),
                                         bound=a >= C - 1e-6 * (1 + C)))))

    with steps.attempt("Solver step: dual coordinate descent", "seed 002 Alg. 1"):
        steps.append(Step(
            "Solver step: dual coordinate descent",
            "seed 002 eq. 16 and Alg. 1 (the DCD of LIBLINEAR)",
            "One coordinate at a time, the restricted problem is a 1-D quadratic on a box, "
            "solved in closed form.",
            "g_i = (Qα)_i − 1,   α_i ← min(max(α_i − g_i / Q_ii, 0), C)",
            r"g_i=(Q\alpha)_i-1,\qquad \alpha_i\leftarrow\min\!\big(\max(\alpha_i-g_i/Q_{ii},"
            r"0),C\big)",
            _cd_step_checks(Q, -np.ones(m), C, a, rng)))
    return Walkthrough("SVM", seed, inst, steps)


def smo_svm(Q, y, C, tol=1e-12, max_iter=20000):
    """SMO with the maximal violating pair (Keerthi et al.; LIBSVM's WSS 1) on
    ``min ½αᵀQα − eᵀα``, ``0 ≤ α ≤ C``, ``yᵀα = 0``. Returns ``(α, b, gap, n_iter)`` where
    ``gap = m(α) − M(α)`` is the final violation and ``b = (m + M)/2`` the intercept (every
    free support vector has ``−y_ig_i = b``, so m and M bracket b).

    With ``g = Qα − e``: ``I_up = {i: α_i < C, y_i = 1} ∪ {i: α_i > 0, y_i = −1}``,
    ``I_low = {i: α_i < C, y_i = −1} ∪ {i: α_i > 0, y_i = 1}``, ``m(α) = max_{I_up} −y_ig_i``,
    ``M(α) = min_{I_low} −y_ig_i``; α is optimal iff ``m(α) ≤ M(α)``. The pair (i, j) of the
    two extremes moves along ``y_iΔα_i = −y_jΔα_j`` (keeping yᵀα = 0) by the clipped
    minimiser of the 1-D parabola."""
    m = len(y)
    a = np.zeros(m)
    g = -np.ones(m)
    gap, it = np.inf, 0
    for it in range(1, max_iter + 1):
        up = ((a < C) & (y > 0)) | ((a > 0) & (y < 0))
        low = ((a < C) & (y < 0)) | ((a > 0) & (y > 0))
        v = -y * g
        i = int(np.argmax(np.where(up, v, -np.inf)))
        j = int(np.argmin(np.where(low, v, np.inf)))
        gap = v[i] - v[j]
        if gap <= tol:
            break
        # direction: α_i += y_i t, α_j −= y_j t raises −y_ig_i ... decreases the objective
        eta = Q[i, i] + Q[j, j] - 2 * y[i] * y[j] * Q[i, j]
        t = gap / max(eta, 1e-15)
        # box limits on t
        lim_i = (C - a[i]) if y[i] > 0 else a[i]
        lim_j = a[j] if y[j] > 0 else (C - a[j])
        t = min(t, lim_i, lim_j)
        a[i] += y[i] * t
        a[j] -= y[j] * t
        g += t * (y[i] * Q[:, i] - y[j] * Q[:, j])
    up = ((a < C) & (y > 0)) | ((a > 0) & (y < 0))
    low = ((a < C) & (y < 0)) | ((a > 0) & (y > 0))
    v = -y * g
    mm, MM = np.max(v[up]), np.min(v[low])
    return a, float((mm + MM) / 2), float(mm - MM), it


def _svmb(seed):
    import refmodels as rm

    rng = np.random.default_rng(seed)
    X, y = _binary_instance(rng, m=12, d=2)
    X[:, 1] += 0.8                  # off the origin: the intercept matters
    C = 1.0
    prob = rm.SVM(X, y, C=C, kernel=rm.kernels.Linear(), fit_intercept=True)
    G, m = prob.gram, prob.m
    Q = y[:, None] * G * y[None, :]
    inst = f"m={m} points in 2-D, linear kernel, C={C}, with an intercept b"
    steps = Steps()

    with steps.attempt("Primal", "seed 002 eq. 2"):
        p, d = solve(prob, "primal"), solve(prob, "dual")
        a = d.variables["alpha"]
        b_p = float(p.intercept)
        nob = rm.SVM(X, y, C=C, kernel=rm.kernels.Linear())
        steps.append(Step(
            "Primal", "seed 002 eq. 2 with an intercept (LIBSVM's C-SVC)",
            "The hinge-loss SVM with a free offset b: the separating hyperplane need not pass "
            "through the origin. b is not regularised.",
            "min_{w,b,ξ} ½‖w‖² + C Σ_i ξ_i   s.t.  y_i(wᵀx_i + b) ≥ 1 − ξ_i,  ξ ≥ 0",
            r"\min_{w,b,\xi}\ \tfrac12\|w\|^2+C\sum_i\xi_i\quad\text{s.t.}\quad "
            r"y_i(w^\top x_i+b)\ge1-\xi_i,\ \xi\ge0",
            [Check("constrained optimum (CVXPY) = ½‖w‖² + C Σ max(0, 1 − y_i(wᵀx_i + b)) at "
                   "its (w, b)", p.objective, prob.primal_value(p.w, b_p), 1e-7),
             Check("the intercept helps on this instance: optimum with b ≤ optimum without",
                   p.objective, solve(nob, "dual").objective, 1e-9, kind="le")]))

    with steps.attempt("Lagrangian", "seed 002 eq. 2"):
        alg = algebra_lines("SVMb")
        steps.append(Step(
            "Lagrangian", "seed 002 eq. 2; multipliers α ≥ 0 and r ≥ 0",
            "As without intercept, plus one new variable b. Since b is free (no sign, no "
            "penalty), its partial derivative must vanish: this is where the dual gets its "
            "equality constraint. SymPy's derivatives are shown below.",
            "L = ½‖w‖² + C eᵀξ − Σ_i α_i(y_i(wᵀx_i + b) − 1 + ξ_i) − rᵀξ\n"
            "∇_w L = w − Xᵀ Y α,   ∂L/∂b = −yᵀα,   ∇_ξ L = C e − α − r",
            r"L=\tfrac12\|w\|^2+Ce^\top\xi-\sum_i\alpha_i\big(y_i(w^\top x_i+b)-1+\xi_i\big)"
            r"-r^\top\xi" "\n"
            r"\nabla_wL=w-X^\top Y\alpha,\qquad\frac{\partial L}{\partial b}=-y^\top\alpha,"
            r"\qquad\nabla_\xi L=Ce-\alpha-r",
            algebra_checks("SVMb", "gradients", F=X, y=y, C=C, rng=rng),
            algebra=alg["gradients"]))

    with steps.attempt("Stationarity", "seed 002 eq. 2"):
        steps.append(Step(
            "Stationarity", "seed 002 eq. 2 (the classic derivation, as LIBSVM's)",
            "∇_w L = 0 gives w; ∂L/∂b = 0 gives yᵀα = 0: the multipliers of the two classes "
            "balance. r = C − α ≥ 0 gives the box.",
            "w = Xᵀ Y α,   yᵀα = 0,   0 ≤ α ≤ C",
            r"w=X^\top Y\alpha,\qquad y^\top\alpha=0,\qquad0\le\alpha\le C",
            [Check("w of the primal solve = XᵀYα of the dual solve", p.w, X.T @ (y * a), 1e-6),
             Check("yᵀα = 0 at the dual solve (Σ of α over the +1 class = over the −1 class)",
                   float(a[y > 0].sum()), float(a[y < 0].sum()), 1e-8)]))

    with steps.attempt("Dual", "seed 002 eq. 10 with μ₁ = μ₂ = 0"):
        steps.append(Step(
            "Dual", "LIBSVM's C-SVC dual (seed 002 eq. 10 with μ₁ = μ₂ = 0, plus the equality)",
            "The same dual function as without intercept (b's term −b·yᵀα vanishes by "
            "stationarity), now with one equality constraint: a coordinate cannot move alone "
            "any more, which is why the solver moves pairs (below).",
            "min_α ½ αᵀQα − eᵀα   s.t. 0 ≤ α ≤ C,  yᵀα = 0,   Q = YGY",
            r"\min_\alpha\ \tfrac12\alpha^\top Q\alpha-e^\top\alpha\quad\text{s.t.}\quad"
            r"0\le\alpha\le C,\ y^\top\alpha=0,\qquad Q=YGY",
            algebra_checks("SVMb", "dual", F=X, y=y, C=C, rng=rng)
            + [Check("primal optimum P* = −D* (dual solve)", p.objective,
                     prob.dual_value(d.variables), 1e-7)],
            algebra=alg["dual"]))

    with steps.attempt("Recovering the intercept b", "LIBSVM"):
        f0 = G @ (y * a)                       # f(x_i) − b
        tol = 1e-6 * (1 + C)
        free = (a > tol) & (a < C - tol)
        b_free = y[free] - f0[free]
        # every point bounds b: y_i f(x_i) ≥ 1 where α_i < C, ≤ 1 where α_i > 0
        lower = ((a <= tol) & (y > 0)) | ((a >= C - tol) & (y < 0))      # b ≥ y_i − f0_i
        upper = ((a <= tol) & (y < 0)) | ((a >= C - tol) & (y > 0))      # b ≤ y_i − f0_i
        lo_b = float(np.max((y - f0)[lower])) if lower.any() else -np.inf
        hi_b = float(np.min((y - f0)[upper])) if upper.any() else np.inf
        if free.any():
            b_d = float(np.mean(b_free))
            checks = [Check("b from the free support vectors (their mean) = b of the primal "
                            "solve", b_d, b_p, 1e-6)]
            if free.sum() >= 2:
                checks.append(Check("every free SV gives the same b: y_i − Σ_j α_jy_jG_ij",
                                    b_free, np.full(int(free.sum()), b_free.mean()), 1e-6))
        else:
            b_d = 0.5 * (lo_b + hi_b) if np.isfinite(lo_b + hi_b) else \
                (lo_b if np.isfinite(lo_b) else hi_b)
            checks = [Check("no free SV: b is not unique; the midpoint of the interval gives "
                            "the same objective as the primal solve's b",
                            prob.primal_value(X.T @ (y * a), b_d), p.objective, 1e-7)]
        if np.isfinite(lo_b):
            checks.append(Check("b lies in the interval the other KKT conditions allow: "
                                "max lower ≤ b", lo_b, b_p, 1e-6, kind="le"))
        if np.isfinite(hi_b):
            checks.append(Check("... and b ≤ min upper", b_p, hi_b, 1e-6, kind="le"))
        steps.append(Step(
            "Recovering the intercept b", "LIBSVM's guide (Chang and Lin, §4.1.5); seed 002 eq. 2",
            "The dual has no b: it comes back from complementary slackness. A free support "
            "vector (0 < α_i < C) has ξ_i = 0 and a tight constraint, so y_i f(x_i) = 1, i.e. "
            "b = y_i − Σ_j α_j y_j G_ij; averaging over the free SVs is what LIBSVM does. "
            f"Here {int(free.sum())} free SV(s). Without a free SV, the other points only "
            "bracket b (y_if(x_i) ≥ 1 where α_i < C, ≤ 1 where α_i > 0): any b in that "
            "interval is optimal, and LIBSVM takes the midpoint.",
            "0 < α_i < C  ⇒  b = y_i − Σ_j α_j y_j κ(x_j, x_i);   "
            "f(x) = Σ_j α_j y_j κ(x_j, x) + b",
            r"0<\alpha_i<C\ \Rightarrow\ b=y_i-\sum_j\alpha_jy_j\,\kappa(x_j,x_i)" "\n"
            r"f(x)=\sum_j\alpha_jy_j\,\kappa(x_j,x)+b",
            checks + [_certificate_check(prob, "(ν = Yα, b)", coef=y * a, intercept=b_d)]))

    with steps.attempt("Complementary slackness and the support vectors", "seed 002 eq. 2"):
        gamma = y * (f0 + b_d)
        xi_d = np.maximum(0.0, 1.0 - gamma)
        w = X.T @ (y * a)
        steps.append(_cs_step(
            "w = XᵀYα and in b", a, C, gamma, xi_d, y, "KKT conditions of the C-SVC",
            figure=Figure("decision", "The separating line wᵀx + b = 0 (solid), the margins "
                          "wᵀx + b = ±1 (dashed); support vectors circled (bold: α = C).",
                          fg.decision_2d(X, y, lambda Z: Z @ w + b_d, levels=(-1, 0, 1),
                                         sv=a > tol, bound=a >= C - tol))))

    with steps.attempt("Solver step: SMO and its working set", "LIBSVM"):
        a_smo, b_smo, gap, n_it = smo_svm(Q, y.astype(float), C)
        # one pair step against a bounded line search on the same direction
        a0 = np.zeros(m)
        g0 = -np.ones(m)
        v0 = -y * g0
        up0 = ((a0 < C) & (y > 0)) | ((a0 > 0) & (y < 0))
        low0 = ((a0 < C) & (y < 0)) | ((a0 > 0) & (y > 0))
        i0 = int(np.argmax(np.where(up0, v0, -np.inf)))
        j0 = int(np.argmin(np.where(low0, v0, np.inf)))
        eta = Q[i0, i0] + Q[j0, j0] - 2 * y[i0] * y[j0] * Q[i0, j0]
        t_closed = min((v0[i0] - v0[j0]) / eta, C)

        def phi(t):
            z = a0.copy()
            z[i0] += y[i0] * t
            z[j0] -= y[j0] * t
            return 0.5 * z @ Q @ z - z.sum()
        t_search = _line_min(phi, 0.0, C)
        steps.append(Step(
            "Solver step: SMO and its working set",
            "LIBSVM (Fan, Chen and Lin 2005, WSS 1; Keerthi et al. 2001), the solver of "
            "LIBSVM's C-SVC",
            "yᵀα = 0 forbids moving one coordinate: SMO moves two, i and j, along "
            "y_iΔα_i = −y_jΔα_j. With g = Qα − e, the maximal violating pair is i = "
            "argmax over I_up of −y_ig_i and j = argmin over I_low; α is optimal iff "
            "m(α) = max_{I_up}(−y_ig_i) ≤ M(α) = min_{I_low}(−y_ig_i). The 1-D problem is a "
            "parabola clipped to the box. A free SV has −y_ig_i = y_i − Σ_jα_jy_jG_ij = b, "
            "so at the end b = (m + M)/2 lies between the two "
            f"(run here from α = 0: {n_it} pair steps).",
            "I_up = {α_i < C, y_i = 1} ∪ {α_i > 0, y_i = −1},  I_low = {α_i < C, y_i = −1} ∪ "
            "{α_i > 0, y_i = 1}\n"
            "i = argmax_{I_up} −y_ig_i,  j = argmin_{I_low} −y_ig_i,  "
            "t = (−y_ig_i + y_jg_j)/(Q_ii + Q_jj − 2y_iy_jQ_ij) clipped,  α_i += y_it,  "
            "α_j −= y_jt",
            r"I_{up}=\{\alpha_i<C,y_i=1\}\cup\{\alpha_i>0,y_i=-1\},\quad I_{low}=\{\alpha_i<C,"
            r"y_i=-1\}\cup\{\alpha_i>0,y_i=1\}" "\n"
            r"i=\arg\max_{I_{up}}-y_ig_i,\quad j=\arg\min_{I_{low}}-y_ig_i" "\n"
            r"t=\frac{-y_ig_i+y_jg_j}{Q_{ii}+Q_{jj}-2y_iy_jQ_{ij}}\ \text{(clipped)},\quad"
            r"\alpha_i\mathrel{+}=y_it,\quad\alpha_j\mathrel{-}=y_jt",
            [Check("first pair step from α = 0: closed form = bounded line search",
                   t_closed, t_search, 1e-6),
             Check("SMO to m(α) − M(α) ≤ 1e-12: dual objective = the CVXPY dual optimum",
                   0.5 * a_smo @ Q @ a_smo - a_smo.sum(), 0.5 * a @ Q @ a - a.sum(), 1e-9),
             (Check("SMO's b = (m + M)/2 = b of the primal solve", b_smo, b_p, 1e-6)
              if free.any() else
              Check("no free SV (b not unique): P(w, b) at SMO's α and b = (m + M)/2 is P*",
                    prob.primal_value(X.T @ (y * a_smo), b_smo), p.objective, 1e-7)),
             Check("stopping rule: m(α) − M(α) ≤ 0 (to 1e-12) at SMO's end", gap, 0.0, 1e-12,
                   kind="le")]))
    return Walkthrough("SVMb", seed, inst, steps)
