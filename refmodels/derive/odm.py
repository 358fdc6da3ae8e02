"""Walk-through of ODM.

ODM, the Optimal margin Distribution Machine (seed 002 eqs. 12–18, seed 000 eqs. 7,
15–19): primal, Lagrangian and dual (SymPy), map back, complementary slackness (the points
outside the band are the support vectors), dual coordinate descent and SVRG on f_O.
"""
from __future__ import annotations

import numpy as np

from . import figures as fg
from .algebra import algebra_lines, evaluate
from .core import Check, Erratum, Figure, Step, Steps, Walkthrough
from .numerics import _binary_instance, _cd_step_checks, _certificate_check, cvx_solve, solve

LAM, MU, THETA = 20.0, 0.5, 0.3


def odm_instance(seed):
    """The teaching instance: 10 points in 2-D (the classes shifted apart by 1 along the
    first axis, so that several margins fall inside the band) and one far point placed
    along the optimal w of the other points, at margin 3 under that w, so that at the
    optimum its margin stays above the band [1 − θ, 1 + θ]: the upper-side multiplier β
    is then non-zero, which the errata of this walk-through need (the primal step checks
    this premise)."""
    import refmodels as rm

    rng = np.random.default_rng(seed)
    X, y = _binary_instance(rng, m=10, d=2)
    X[:, 0] += 1.0 * y
    base = rm.ODM(X, y, lam=LAM, mu=MU, theta=THETA, kernel=rm.kernels.Linear())
    w0 = solve(base, "dual").w
    far = 3.0 * w0 / (w0 @ w0)
    return np.vstack([X, far]), np.r_[y, 1], rng


def odm_primal_cvxpy(F, y, lam, mu, th):
    """Seed 002 eq. 12 stated directly in CVXPY over (w, ξ, ε), independent of the problem
    class: returns ``(value, w, ξ)``."""
    import cvxpy as cp

    m, r = F.shape
    w, xi, ep = cp.Variable(r), cp.Variable(m), cp.Variable(m)
    g = cp.multiply(y, F @ w)
    pr = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(w) + lam / (m * (1 - th) ** 2)
                                * (cp.sum_squares(xi) + mu * cp.sum_squares(ep))),
                    [g >= 1 - th - xi, g <= 1 + th + ep])
    value = cvx_solve(pr)
    return value, np.asarray(w.value, float), np.asarray(xi.value, float)


def _odm(seed):
    import refmodels as rm

    lam, mu, th = LAM, MU, THETA
    steps = Steps()
    X, y, rng = odm_instance(seed)
    prob = rm.ODM(X, y, lam=lam, mu=mu, theta=th, kernel=rm.kernels.Linear())
    F, G, m = prob.F, prob.gram, prob.m
    Q = y[:, None] * G * y[None, :]
    a, c = prob.a, lam / (m * (1 - th) ** 2)
    inst = (f"m={m} points in 2-D (the last one far out along w), linear kernel, λ={lam}, "
            f"μ={mu}, θ={th}")

    with steps.attempt("Primal", "seed 002 eqs. 12 and 18"):
        p, d = solve(prob, "primal"), solve(prob, "dual")
        zeta, beta = d.variables["zeta"], d.variables["beta"]
        wr = rng.normal(size=F.shape[1])
        gr = y * (F @ wr)
        C1, C2 = lam / (1 - th) ** 2, lam * mu / (1 - th) ** 2
        seed000 = 0.5 * wr @ wr + (C1 * np.sum(np.maximum(0, 1 - th - gr) ** 2)
                                   + C2 * np.sum(np.maximum(0, gr - 1 - th) ** 2)) / m
        g_far = float(y[-1] * (F[-1] @ p.w))
        own_val, own_w, own_xi = odm_primal_cvxpy(F, y, lam, mu, th)
        steps.append(Step(
            "Primal", "seed 002 eqs. 12 and 18; seed 000 eq. 7 with C₁ = λ/(1−θ)², "
            "C₂ = λμ/(1−θ)², D = θ",
            "ODM penalises margins on both sides of the band [1 − θ, 1 + θ], quadratically: "
            "ξ_i below it, ε_i above it (weight μ). Unlike the SVM's hinge, a margin that is "
            "too large costs too: ODM shapes the whole margin distribution. Eliminating the "
            "slacks gives the unconstrained, continuously differentiable f_O (eq. 18).",
            "min_{w,ξ,ε} ½‖w‖² + λ/(m(1−θ)²)·Σ_i(ξ_i² + μ ε_i²)  s.t. 1 − θ − ξ_i ≤ "
            "y_i wᵀφ(x_i) ≤ 1 + θ + ε_i\n"
            "f_O(w) = ½‖w‖² + λ/(m(1−θ)²)·Σ_i[max(0, 1−θ−γ_i)² + μ max(0, γ_i−1−θ)²]",
            r"\min_{w,\xi,\epsilon}\ \tfrac12\|w\|^2+\frac{\lambda}{m(1-\theta)^2}\sum_i(\xi_i^2"
            r"+\mu\epsilon_i^2)" "\n"
            r"\text{s.t.}\ 1-\theta-\xi_i\le y_iw^\top\phi(x_i)\le1+\theta+\epsilon_i" "\n"
            r"f_O(w)=\tfrac12\|w\|^2+\frac{\lambda}{m(1-\theta)^2}\sum_i\big[\max(0,1-\theta-"
            r"\gamma_i)^2+\mu\max(0,\gamma_i-1-\theta)^2\big]",
            [Check("constrained optimum (eq. 12 in CVXPY, its own slacks) = f_O at its w",
                   own_val, prob.primal_value(own_w), 1e-7),
             Check("seed 000's objective (C₁, C₂, D) = f_O at a random w", seed000,
                   prob.primal_value(wr), 1e-12),
             Check("premise of this instance: the far point ends above the band, "
                   "1 + θ + 0.001 ≤ its margin", 1 + th + 1e-3, g_far, 0.0, kind="le")]))

    with steps.attempt("Lagrangian", "seed 002 eq. 13; seed 000 eq. 15"):
        alg = algebra_lines("ODM")
        r_ = F.shape[1]
        pt = dict(w=rng.normal(size=r_), xi=rng.normal(size=m), epsilon=rng.normal(size=m),
                  zeta=rng.uniform(0, 1, m), beta=rng.uniform(0, 1, m))
        base = dict(F=F, Y=np.diag(y.astype(float)), e=np.ones(m), c=c, mu=mu, theta=th, Q=Q,
                    m_value=m, r_value=r_)
        vals = {**base, **pt}
        opt = {**base, "w": p.w, "xi": p.variables["xi"], "epsilon": p.variables["eps"],
               "zeta": zeta, "beta": beta}
        g_opt = np.r_[evaluate("ODM", "gradients", 1, opt).ravel(),
                      evaluate("ODM", "gradients", 2, opt).ravel()]
        g_pr = np.r_[evaluate("ODM", "printed", 0, opt).ravel(),
                     evaluate("ODM", "printed", 1, opt).ravel()]
        steps.append(Step(
            "Lagrangian", "seed 002 eq. 13; seed 000 eq. 15",
            "Multipliers ζ ≥ 0 (lower side) and β ≥ 0 (upper side); the slacks need no sign "
            "constraint (a negative slack never helps a squared loss). SymPy differentiates "
            "L (matrix calculus; shown as computed); the checks evaluate SymPy's gradients on "
            "the instance.",
            "L = ½‖w‖² + c Σ(ξ_i² + μ ε_i²) − ζᵀ(YFw − (1−θ)e + ξ) − βᵀ((1+θ)e + ε − YFw),  "
            "c = λ/(m(1−θ)²)\n∇_w L = w − FᵀY(ζ − β),  ∇_ξ L = 2cξ − ζ,  ∇_ε L = 2cμ ε − β",
            r"L=\tfrac12\|w\|^2+c\sum_i(\xi_i^2+\mu\epsilon_i^2)-\zeta^\top(YFw-(1-\theta)e+\xi)"
            r"-\beta^\top((1+\theta)e+\epsilon-YFw)" "\n"
            r"\nabla_wL=w-F^\top Y(\zeta-\beta),\quad\nabla_\xi L=2c\xi-\zeta,\quad"
            r"\nabla_\epsilon L=2c\mu\epsilon-\beta,\qquad c=\frac{\lambda}{m(1-\theta)^2}",
            [Check("SymPy's ∇_w L = w − FᵀY(ζ − β) (random point)",
                   evaluate("ODM", "gradients", 0, vals).ravel(),
                   pt["w"] - F.T @ (y * (pt["zeta"] - pt["beta"])), 1e-12),
             Check("SymPy's ∇_ξ L = 2cξ − ζ (random point)",
                   evaluate("ODM", "gradients", 1, vals).ravel(),
                   2 * c * pt["xi"] - pt["zeta"], 1e-12),
             Check("SymPy's ∇_ε L = 2cμ ε − β (random point)",
                   evaluate("ODM", "gradients", 2, vals).ravel(),
                   2 * c * mu * pt["epsilon"] - pt["beta"], 1e-12)],
            [Erratum("odm-seed000-eq15-xi-for-eps", "seed 000 eq. 15",
                     "The Lagrangian prints −ξ in the upper-side constraint, where −ε belongs "
                     "(the paper's eqs. 16–18 then use the right one). With the printed L, "
                     "the slack gradients do not vanish at the optimum wherever β_i > 0.",
                     "L = … + βᵀ(YXᵀw − (1+D)e − ξ)",
                     r"L=\dots+\beta^\top\big(YX^\top w-(1+D)e-\xi\big)",
                     "L = … + βᵀ(YXᵀw − (1+D)e − ε)",
                     r"L=\dots+\beta^\top\big(YX^\top w-(1+D)e-\epsilon\big)",
                     Check("printed L: SymPy's (∇_ξ L, ∇_ε L) at the optimum = 0", g_pr,
                           np.zeros(2 * m), 1e-6),
                     Check("corrected L: SymPy's (∇_ξ L, ∇_ε L) at the optimum = 0", g_opt,
                           np.zeros(2 * m), 1e-6))],
            algebra=alg["gradients"]))

    with steps.attempt("Stationarity", "seed 002 eq. 14"):
        raw = d.info.get("cvxpy_point") or {}
        zr = np.asarray(raw.get("zeta", zeta), float)
        br = np.asarray(raw.get("beta", beta), float)
        steps.append(Step(
            "Stationarity", "seed 002 eq. 14; seed 000 eqs. 16–18",
            "Setting the gradients to zero expresses w and both slacks through the "
            "multipliers.",
            "w = FᵀY(ζ − β),   ξ = aζ,   ε = aβ/μ,   a = m(1−θ)²/(2λ) = 1/(2c)",
            r"w=F^\top Y(\zeta-\beta),\quad\xi=a\zeta,\quad\epsilon=\frac{a}{\mu}\beta,\quad "
            r"a=\frac{m(1-\theta)^2}{2\lambda}=\frac1{2c}",
            [Check("w of eq. 12 (CVXPY) = FᵀY(ζ − β) of the dual solve (CVXPY's point, "
                   "before any polish)", own_w, F.T @ (y * (zr - br)), 1e-6),
             Check("ξ of eq. 12 (CVXPY) = aζ of the dual solve", own_xi, a * zr, 1e-6)]))

    with steps.attempt("Dual", "seed 002 eq. 15"):
        zq, bq = rng.uniform(0, 1, m), rng.uniform(0, 1, m)
        vals_d = {**base, "zeta": zq, "beta": bq, "w": 0.0, "xi": 0.0, "epsilon": 0.0}
        u = zeta - beta
        common = -0.5 * u @ Q @ u - a / (2 * mu) * (mu * zeta @ zeta + beta @ beta)
        printed = common + (1 - th) * (zeta.sum() - (1 + th) * beta.sum())
        corrected = common + (1 - th) * zeta.sum() - (1 + th) * beta.sum()
        steps.append(Step(
            "Dual", "seed 002 eq. 15; seed 000 eq. 19",
            "SymPy substitutes eq. 14 into L (below): the dual function of (ζ, β). Minimising "
            "its negative over α = [ζ; β] ≥ 0 is a QP with no upper bounds.",
            "min_{α=[ζ;β]≥0} ½αᵀ[[Q + aI, −Q], [−Q, Q + (a/μ)I]]α + [(θ−1)e; (θ+1)e]ᵀα,  "
            "Q = YGY",
            r"\min_{\alpha=[\zeta;\beta]\ge0}\ \tfrac12\alpha^\top\begin{bmatrix}Q+aI&-Q\\-Q&Q+"
            r"\frac a\mu I\end{bmatrix}\alpha+\begin{bmatrix}(\theta-1)e\\(\theta+1)e"
            r"\end{bmatrix}^\top\alpha",
            [Check("SymPy's substituted L at a random (ζ, β) = −(eq. 15 objective)",
                   evaluate("ODM", "dual", 0, vals_d).ravel(),
                   prob.dual_value({"zeta": zq, "beta": bq}), 1e-10),
             Check("primal optimum P* = −(dual optimum)", p.objective,
                   prob.dual_value(d.variables), 1e-7)],
            [Erratum("odm-seed002-lagrangian-after-eq14",
                     "seed 002, the unnumbered display after eq. 14",
                     "The dual function after substituting eq. 14 prints "
                     "(1−θ)(ζᵀe − (1+θ)βᵀe); it should read (1−θ)ζᵀe − (1+θ)βᵀe, as SymPy's "
                     "substitution gives (eq. 15 itself is right). Evaluated at the dual "
                     "optimum, the printed expression is not the optimal value.",
                     "… + (1−θ)(ζᵀe − (1+θ)βᵀe)",
                     r"\dots+(1-\theta)\big(\zeta^\top e-(1+\theta)\beta^\top e\big)",
                     "… + (1−θ)ζᵀe − (1+θ)βᵀe",
                     r"\dots+(1-\theta)\zeta^\top e-(1+\theta)\beta^\top e",
                     Check("printed dual function at (ζ*, β*) = P*", printed, p.objective,
                           1e-6),
                     Check("corrected dual function at (ζ*, β*) = P*", corrected, p.objective,
                           1e-6))],
            algebra=alg["dual"]))

    with steps.attempt("Map back to the primal", "seed 002 after eq. 15"):
        nu = y * (zeta - beta)
        steps.append(Step(
            "Map back to the primal", "seed 002 after eq. 15",
            "Coefficients over training points.",
            "ν = Y(ζ − β),   f(x) = Σ_i ν_i κ(x_i, x)",
            r"\nu=Y(\zeta-\beta),\qquad f(x)=\sum_i\nu_i\,\kappa(x_i,x)",
            [Check("decision values Gν = Fw (primal solve)", G @ nu, F @ p.w, 1e-6),
             _certificate_check(prob, "the point given by ν alone", coef=nu)]))

    with steps.attempt("Complementary slackness and the support vectors", "seed 002 eq. 14"):
        gamma = y * (G @ nu)
        tol = 1e-7 * (1 + np.max(np.r_[zeta, beta]))
        below, above = zeta > tol, beta > tol
        role = np.where(below, "ζ > 0: below the band", np.where(
            above, "β > 0: above the band", "inside the band (ν_i = 0)"))
        rows = [(i, int(y[i]), float(gamma[i]), float(zeta[i]), float(beta[i]), role[i])
                for i in range(m)]
        inside = ~below & ~above
        steps.append(Step(
            "Complementary slackness and the support vectors", "seed 002 eqs. 13–14",
            "ζ_i(γ_i − 1 + θ + ξ_i) = 0 and β_i(1 + θ + ε_i − γ_i) = 0, with ξ = aζ, ε = aβ/μ: "
            "ζ_i > 0 exactly when the margin is below 1 − θ and β_i > 0 exactly when it is "
            "above 1 + θ. Points inside the band have ν_i = 0: ODM's support vectors are the "
            f"points outside the band, on either side. Here {int(below.sum())} below, "
            f"{int(above.sum())} above (among them the far point), {int(inside.sum())} inside.",
            "ζ_i > 0 ⇔ γ_i < 1 − θ,   β_i > 0 ⇔ γ_i > 1 + θ,   1 − θ ≤ γ_i ≤ 1 + θ ⇒ ν_i = 0",
            r"\zeta_i>0\iff\gamma_i<1-\theta,\qquad\beta_i>0\iff\gamma_i>1+\theta" "\n"
            r"1-\theta\le\gamma_i\le1+\theta\ \Rightarrow\ \nu_i=0",
            [Check("ζ_i(γ_i − (1 − θ) + aζ_i) = 0 (max over i)",
                   np.max(np.abs(zeta * (gamma - (1 - th) + a * zeta))), 0.0, 1e-6),
             Check("β_i((1 + θ) + aβ_i/μ − γ_i) = 0 (max over i)",
                   np.max(np.abs(beta * ((1 + th) + a * beta / mu - gamma))), 0.0, 1e-6),
             Check("no point has both multipliers non-zero (ζ_iβ_i = 0)",
                   np.max(zeta * beta), 0.0, 1e-10),
             Check("points with ζ = β = 0 lie in the band: |γ_i − 1| ≤ θ",
                   np.abs(gamma[inside] - 1) if inside.any() else np.zeros(1),
                   th + 1e-9, 1e-7, kind="le")],
            table=(("i", "y_i", "γ_i", "ζ_i", "β_i", "role"), rows),
            figure=Figure("band", "ODM on the instance: f(x) = 0 (solid), the band edges "
                          "f(x) = ±(1 − θ) and ±(1 + θ) (dashed; the band shaded on each "
                          "side); circled: support vectors (points outside the band).",
                          fg.decision_2d(X, y, lambda Z: Z @ (X.T @ nu),
                                         levels=(-(1 + th), -(1 - th), 0, 1 - th, 1 + th),
                                         sv=~inside, shade=(1 - th, 1 + th)))))

    with steps.attempt("Solver step: dual coordinate descent", "seed 002 Alg. 1"):
        Qm = np.block([[Q + a * np.eye(m), -Q], [-Q, Q + a / mu * np.eye(m)]])
        lin = np.r_[(th - 1) * np.ones(m), (th + 1) * np.ones(m)]
        steps.append(Step(
            "Solver step: dual coordinate descent", "seed 002 eq. 16 and Alg. 1",
            "Each of the 2m coordinates (ζ_i or β_i) is a 1-D quadratic on [0, ∞), minimised "
            "in closed form; the diagonal is Q_ii + a resp. Q_ii + a/μ.",
            "ζ_i ← max(0, ζ_i − ([Q(ζ−β)]_i + aζ_i + θ − 1)/(Q_ii + a)),\n"
            "β_i ← max(0, β_i − (−[Q(ζ−β)]_i + (a/μ)β_i + θ + 1)/(Q_ii + a/μ))",
            r"\zeta_i\leftarrow\max\Big(0,\zeta_i-\frac{[Q(\zeta-\beta)]_i+a\zeta_i+\theta-1}"
            r"{Q_{ii}+a}\Big)" "\n"
            r"\beta_i\leftarrow\max\Big(0,\beta_i-\frac{-[Q(\zeta-\beta)]_i+\frac a\mu\beta_i"
            r"+\theta+1}{Q_{ii}+a/\mu}\Big)",
            _cd_step_checks(Qm, lin, np.inf, np.r_[zeta, beta], rng)))

    with steps.attempt("Solver step: SVRG on f_O", "seed 002 Alg. 2"):
        steps.append(_svrg_step(prob, X, y, p, rng))
    return Walkthrough("ODM", seed, inst, steps)


def _svrg_step(prob, X, y, p, rng):
    """SVRG on the smooth f_O (seed 002 Alg. 2, linear kernel): the variance-reduced
    direction is unbiased, and the method converges to the reference optimum."""
    m = len(y)
    lam, mu, th = prob.lam, prob.mu, prob.theta
    c = lam / (1 - th) ** 2

    def grad_i(w, i):
        g = y[i] * (X[i] @ w)
        lo, hi = max(0.0, 1 - th - g), max(0.0, g - 1 - th)
        return w + c * (-2 * lo + 2 * mu * hi) * y[i] * X[i]

    def full(w):
        return sum(grad_i(w, i) for i in range(m)) / m

    w_t, w_s = rng.normal(size=X.shape[1]), rng.normal(size=X.shape[1])
    mu_s = full(w_s)
    mean_dir = sum(grad_i(w_t, i) - grad_i(w_s, i) + mu_s for i in range(m)) / m
    # SVRG epochs: step 1/L_max (L_i = 1 + 2c·max(1, μ)‖x_i‖² bounds the curvature of f_i),
    # inner loop of 2m steps, stopped when the snapshot's full gradient is below 1e-10:
    # f_O is 1-strongly convex (the ½‖w‖² term), so then ‖w − w*‖ ≤ 1e-10.
    Lmax = 1 + 2 * c * max(1.0, mu) * float(np.max(np.sum(X * X, axis=1)))
    eta = 1.0 / Lmax
    w = np.zeros(X.shape[1])
    rs = np.random.default_rng(0)
    epochs, gnorm = 0, np.inf
    while epochs < 5000:
        w_snap, g_snap = w.copy(), full(w)
        gnorm = float(np.linalg.norm(g_snap))
        if gnorm <= 1e-10:
            break
        epochs += 1
        for _ in range(2 * m):
            i = int(rs.integers(m))
            w = w - eta * (grad_i(w, i) - grad_i(w_snap, i) + g_snap)
    return Step(
        "Solver step: SVRG on f_O", "seed 002 Alg. 2 (linear kernel)",
        "For large linear problems the paper minimises the smooth f_O by SVRG: each epoch "
        "takes a snapshot w̃ and its full gradient μ̃, then steps along the variance-reduced "
        "direction ∇f_i(w) − ∇f_i(w̃) + μ̃ for random i. Its expectation over i is the full "
        "gradient (checked by enumerating all i), and near the optimum its variance vanishes, "
        "which is why a constant step converges. Run here from w = 0 with step 1/L_max, "
        f"epochs of 2m steps, until ‖∇f_O(w̃)‖ ≤ 1e-10 ({epochs} epochs); f_O is "
        "1-strongly convex, so then ‖w − w*‖ ≤ 1e-10.",
        "f_O = (1/m)Σ_i f_i,  f_i(w) = ½‖w‖² + C₁max(0, 1−θ−γ_i)² + C₂max(0, γ_i−1−θ)²\n"
        "w ← w − η(∇f_i(w) − ∇f_i(w̃) + ∇f_O(w̃)),  i uniform",
        r"f_O=\frac1m\sum_if_i,\quad f_i(w)=\tfrac12\|w\|^2+C_1\max(0,1-\theta-\gamma_i)^2+"
        r"C_2\max(0,\gamma_i-1-\theta)^2" "\n"
        r"w\leftarrow w-\eta\big(\nabla f_i(w)-\nabla f_i(\tilde w)+\nabla f_O(\tilde w)\big)",
        [Check("E_i[SVRG direction] = ∇f_O(w) (all i enumerated; random w, w̃)", mean_dir,
               full(w_t), 1e-12),
         Check("∇f_O at CVXPY's optimum = 0 (f_O is differentiable)", full(p.w),
               np.zeros(X.shape[1]), 1e-6),
         Check("SVRG's w = CVXPY's w", w, p.w, 1e-6),
         Check("SVRG's f_O(w) = P* (CVXPY)", prob.primal_value(w), p.objective, 1e-9)])
