"""Walk-through of MKLm / ε-MKL.

MKLm and ε-MKL (seed 003 eqs. 22–26): the kernel weights on the simplex, the gradient of
J by Danskin's theorem, the QCQP dual, SimpleMKL's reduced-gradient direction with a line
search, and complementary slackness for the points and for the kernels.
"""
from __future__ import annotations

import numpy as np

from . import figures as fg
from .algebra import algebra_lines, evaluate
from .core import Check, Erratum, Figure, Step, Steps, Walkthrough
from .numerics import _binary_instance, _certificate_check, _line_min, cvx_solve


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


class InnerJ:
    """``J(μ)``, the SVMm dual optimum for the kernel ``Σ_k μ_k K_k`` with the boxes
    ``C₁/2, C₂/2``, as one parametrised CVXPY problem (μ a parameter: canonicalised once,
    re-solved for each μ). Returns ``(J, v*)``."""

    def __init__(self, grams, y, C1, C2, eps):
        import cvxpy as cp

        m = len(y)
        self.mu = cp.Parameter(len(grams), nonneg=True)
        self.a, self.b = cp.Variable(m), cp.Variable(m)
        v = cp.multiply(y, self.a - self.b)
        quad = 0
        for k, G in enumerate(grams):
            w_, V = np.linalg.eigh(0.5 * (G + G.T))
            keep = w_ > 1e-12 * max(w_.max(), 1.0)
            Lk = V[:, keep] * np.sqrt(w_[keep])
            quad = quad + self.mu[k] * cp.sum_squares(Lk.T @ v)
        self.y = y
        self.prob = cp.Problem(cp.Maximize(cp.sum(self.a) - (1 + eps) * cp.sum(self.b)
                                           - 0.5 * quad),
                               [cp.sum(v) == 0, self.a >= 0, self.a <= C1 / 2, self.b >= 0,
                                self.b <= C2 / 2])
        self.calls = 0

    def __call__(self, mu):
        self.mu.value = np.maximum(np.asarray(mu, float), 0.0)
        self.calls += 1
        value = cvx_solve(self.prob)
        return float(value), self.y * (self.a.value - self.b.value)


C1_, C2_, EPS_ = 4.0, 0.2, 0.1


def mklm_instance(seed):
    """12 points in 2-D and a far point along the linear kernel's part of f (from the
    solution without it), at margin 3(1 + ε) under that solution: its margin stays above
    the band, so that the band's box C₂/2 binds, which the erratum needs."""
    import refmodels as rm

    rng = np.random.default_rng(seed)
    X, y = _binary_instance(rng, m=11, d=2)
    X[:, 0] += 1.0 * y
    ks = [rm.kernels.RBF(gamma=0.3), rm.kernels.Linear()]
    base = rm.MKLm(X, y, kernels=ks, C1=C1_, C2=C2_, eps=EPS_)
    s = base.solve()
    w_lin = float(s.variables["mu"][1]) * (X.T @ s.coef)
    if np.linalg.norm(w_lin) < 1e-3:            # all weight on the RBF kernel: use the mean
        w_lin = X[y > 0].mean(axis=0) - X[y < 0].mean(axis=0)
        w_lin = w_lin / (w_lin @ w_lin)
    far = (3.0 * (1 + EPS_) - s.intercept) * w_lin / (w_lin @ w_lin)
    return np.vstack([X, far]), np.r_[y, 1], ks, rng


def _mklm(seed):
    import refmodels as rm

    C1, C2, eps = C1_, C2_, EPS_
    X, y, ks, rng = mklm_instance(seed)
    prob = rm.MKLm(X, y, kernels=ks, C1=C1, C2=C2, eps=eps)
    m = prob.m
    inst = (f"m={m} points in 2-D (the last one far out), base kernels RBF(γ=0.3) and "
            f"linear, C₁={C1}, C₂={C2}, ε={eps}")
    steps = Steps()
    J = InnerJ(prob.grams, y.astype(float), C1, C2, eps)

    with steps.attempt("Primal", "seed 003 eq. 22"):
        s = prob.solve(form="dual")            # the QCQP, polished (the class's default)
        mu_s = s.variables["mu"]
        J_star, v_star = J(mu_s)
        f_far = float(mu_s[0] * prob.grams[0][-1] @ s.coef + mu_s[1] * prob.grams[1][-1] @ s.coef
                      + s.intercept)
        steps.append(Step(
            "Primal", "seed 003 eq. 22 and eqs. 23–25",
            "Kernel weights μ on the simplex, one w_k per base kernel; ‖w_k‖²/μ_k is a "
            "perspective (jointly convex, 0/0 := 0). For fixed μ the problem is SVMm with "
            "kernel Σ_kμ_kK_k and boxes C₁/2, C₂/2; the MKL problem is min over the simplex "
            "of that optimum J(μ).",
            "min ½Σ_k‖w_k‖²/μ_k + (C₁/2)Σξ_i + (C₂/2)Ση_i  s.t. 1 − ξ_i ≤ y_i(Σ_k⟨w_k, "
            "Φ_k(x_i)⟩ + b) ≤ 1 + ε + η_i, ξ, η ≥ 0, μ ∈ Δ\n"
            "= min_{μ∈Δ} J(μ),  J(μ) = SVMm optimum for K_μ = Σ_kμ_kK_k",
            r"\min\ \tfrac12\sum_k\frac{\|w_k\|^2}{\mu_k}+\frac{C_1}2\sum_i\xi_i+\frac{C_2}2"
            r"\sum_i\eta_i" "\n"
            r"\text{s.t.}\ 1-\xi_i\le y_i\Big(\sum_k\langle w_k,\Phi_k(x_i)\rangle+b\Big)\le1+"
            r"\varepsilon+\eta_i,\ \xi,\eta\ge0,\ \mu\in\Delta" "\n"
            r"=\min_{\mu\in\Delta}J(\mu),\qquad J(\mu)=\text{SVMm optimum for }K_\mu="
            r"\sum_k\mu_kK_k",
            [Check("MKL optimum (class solve) = J(μ*) (an SVMm solve at the optimal weights)",
                   s.objective, J_star, 1e-7),
             Check("primal objective at w_k = μ_k Σ_iν_iΦ_k(x_i) (perspective form) = J(μ*)",
                   prob.primal_value(mu_s, s.coef, s.intercept), J_star, 1e-7),
             Check("premise of this instance: the far point ends above the band, "
                   "1 + ε + 0.001 ≤ its margin", 1 + eps + 1e-3, float(y[-1]) * f_far, 0.0,
                   kind="le")]))

    with steps.attempt("Lagrangian, stationarity and the gradient of J", "seed 003 eqs. 22–26"):
        alg = algebra_lines("MKLm")
        mu0 = np.array([0.5, 0.5])
        J0, v0 = J(mu0)
        grad = np.array([-0.5 * v0 @ G @ v0 for G in prob.grams])
        h = 1e-4
        fd = np.array([(J(mu0 + h * e)[0] - J(mu0 - h * e)[0]) / (2 * h) for e in np.eye(2)])
        F1 = np.linalg.cholesky(prob.grams[0] + 1e-12 * np.eye(m))
        w1, w2 = rng.normal(size=m), rng.normal(size=m)
        vr = rng.normal(size=m)
        Xf = np.c_[X, np.zeros((m, m - 2))]               # linear kernel's map, padded to m
        vals = dict(F_1=F1, F_2=Xf, w_1=w1, w_2=w2, v=vr, mu_1=0.3, mu_2=0.7,
                    K_1=prob.grams[0], K_2=prob.grams[1], m_value=m, r_value=m)
        steps.append(Step(
            "Lagrangian, stationarity and the gradient of J",
            "seed 003 eqs. 22–26 and the gradient of J after them",
            "For fixed μ, the w-part of the inner Lagrangian is Σ_k ½‖w_k‖²/μ_k − vᵀΣ_kF_kw_k "
            "(v = Y(α − β), F_k the map of kernel k); SymPy differentiates it and "
            "substitutes the stationary w_k (below): the result −½Σ_kμ_kvᵀK_kv is linear in "
            "μ. So by Danskin's theorem J is differentiable with the gradient below, taken at "
            "the inner optimum v*.",
            "w_k = μ_k Σ_i v_iΦ_k(x_i),   ∂J/∂μ_k = −½ v*ᵀK_k v*",
            r"w_k=\mu_k\sum_iv_i\Phi_k(x_i),\qquad\frac{\partial J}{\partial\mu_k}=-\tfrac12"
            r"v^{\star\top}K_kv^\star",
            [Check("SymPy's ∇_{w_1} L = w_1/μ₁ − F_1ᵀv (random point)",
                   evaluate("MKLm", "gradients", 0, vals).ravel(), w1 / 0.3 - F1.T @ vr, 1e-12),
             Check("SymPy's w-part at the stationary w_k = −½Σ_kμ_kvᵀK_kv",
                   evaluate("MKLm", "dual", 0, vals).ravel(),
                   -0.5 * (0.3 * vr @ F1 @ F1.T @ vr + 0.7 * vr @ Xf @ Xf.T @ vr), 1e-10),
             Check("−½v*ᵀK_kv* = central finite difference of J (two SVMm solves per k), "
                   "μ = (½, ½)", grad, fd, 1e-5)],
            algebra=alg["gradients"] + alg["dual"]))

    with steps.attempt("Dual: a QCQP", "seed 003 eq. 26"):
        conic_primal = prob.solve(form="primal")
        cd_ = s.info.get("conic_value", s.objective)
        cp_ = conic_primal.info.get("conic_value", conic_primal.objective)
        printed = rm.MKLm(X, y, kernels=ks, C1=C1, C2=C1, eps=eps).solve()
        steps.append(Step(
            "Dual: a QCQP", "seed 003 eq. 26",
            "Maximising over the simplex turns max_k into an epigraph variable t; the "
            "multipliers of the quadratic constraints are the weights μ.",
            "max Σα_i − (1 + ε)Σβ_i − t  s.t. ½vᵀK_kv ≤ t ∀k, eᵀv = 0, 0 ≤ α ≤ C₁/2, "
            "0 ≤ β ≤ C₂/2",
            r"\max\ \sum_i\alpha_i-(1+\varepsilon)\sum_i\beta_i-t" "\n"
            r"\text{s.t.}\ \tfrac12v^\top K_kv\le t\ \forall k,\quad e^\top v=0,\quad0\le\alpha"
            r"\le\tfrac{C_1}2,\quad0\le\beta\le\tfrac{C_2}2",
            [Check("eq. 22 primal (CVXPY) optimum = QCQP dual (CVXPY) optimum", cp_, cd_,
                   1e-6)],
            [Erratum("mklm-eq26-C1-on-eta", "seed 003 eq. 26",
                     "Eq. 26 repeats C₁ on the η term (box of β); it is C₂. The printed "
                     "problem has another optimum as soon as a box on β binds (here the far "
                     "point's).",
                     "… + (C₁/2)Ση_i  (box 0 ≤ β ≤ C₁/2)", r"\dots+\tfrac{C_1}2\sum_i\eta_i",
                     "… + (C₂/2)Ση_i  (box 0 ≤ β ≤ C₂/2)", r"\dots+\tfrac{C_2}2\sum_i\eta_i",
                     Check("printed problem's optimum = the eq. 22 primal optimum",
                           printed.objective, cp_, 1e-6),
                     Check("corrected problem's optimum = the eq. 22 primal optimum",
                           s.objective, cp_, 1e-6))]))

    with steps.attempt("Map back to the primal", "seed 003 eqs. 23–26"):
        steps.append(Step(
            "Map back to the primal", "seed 003 eqs. 23–26",
            "Prediction with the weights and the inner coefficients.",
            "f(x) = Σ_k μ_k Σ_i ν_i K_k(x_i, x) + b,   ν = v = Y(α − β)",
            r"f(x)=\sum_k\mu_k\sum_i\nu_iK_k(x_i,x)+b,\qquad\nu=v=Y(\alpha-\beta)",
            [_certificate_check(prob, "(μ, ν, b)", mu=mu_s, coef=s.coef,
                                intercept=s.intercept),
             Check("ν of the class solve = v* of the inner SVMm at μ* (the parametrised solve)",
                   s.coef, v_star, 1e-5)]))

    with steps.attempt("Complementary slackness: points and kernels", "seed 003 eq. 26"):
        quads = np.array([0.5 * s.coef @ G @ s.coef for G in prob.grams])
        t_ = float(np.max(quads))
        Km = prob.combined_gram(mu_s)
        f = Km @ s.coef + s.intercept
        gamma = y * f
        al = np.where(y * s.coef > 0, y * s.coef, 0.0)
        be = np.where(y * s.coef < 0, -y * s.coef, 0.0)
        tol = 1e-6 * (1 + C1)
        rows = [(i, int(y[i]), float(gamma[i]), float(al[i]), float(be[i]))
                for i in range(m)]
        active = mu_s > 1e-7
        steps.append(Step(
            "Complementary slackness: points and kernels", "seed 003 eq. 26 and its KKT "
            "conditions",
            "For the points, as in SVMm with boxes C₁/2, C₂/2: α_i > 0 only at or below "
            "margin 1, β_i > 0 only at or above 1 + ε. For the kernels: μ_k(t − ½v*ᵀK_kv*) = "
            "0, so a kernel with μ_k > 0 attains the maximum ½v*ᵀK_kv* = t: the selected "
            f"kernels are the 'support kernels'. Here μ* = ({mu_s[0]:.3g}, {mu_s[1]:.3g}), "
            f"½v*ᵀK_kv* = ({quads[0]:.4g}, {quads[1]:.4g}).",
            "μ_k(t − ½v*ᵀK_kv*) = 0,   α_i(γ_i − 1 + ξ_i) = 0,   β_i(1 + ε + η_i − γ_i) = 0",
            r"\mu_k\big(t-\tfrac12v^{\star\top}K_kv^\star\big)=0,\quad\alpha_i(\gamma_i-1+\xi_i)"
            r"=0,\quad\beta_i(1+\varepsilon+\eta_i-\gamma_i)=0",
            [Check("μ_k(t − ½v*ᵀK_kv*) = 0 for every kernel", mu_s * (t_ - quads),
                   np.zeros(2), 1e-6),
             Check("every kernel with μ_k > 0 attains the maximum t", quads[active],
                   np.full(int(active.sum()), t_), 1e-6),
             Check("α_i(γ_i − 1 + ξ_i) = 0 (max over i)",
                   np.max(np.abs(al * (gamma - 1 + np.maximum(0, 1 - gamma)))), 0.0, 1e-6),
             Check("β_i(1 + ε + η_i − γ_i) = 0 (max over i)",
                   np.max(np.abs(be * (1 + eps + np.maximum(0, gamma - 1 - eps) - gamma))),
                   0.0, 1e-6)],
            table=(("i", "y_i", "γ_i", "α_i", "β_i"), rows),
            figure=Figure("decision", "MKLm on the instance: f(x) = Σ_kμ_kΣ_iν_iK_k(x_i, x) "
                          "+ b = 0 (solid), ±1 and ±(1 + ε) (dashed); circled: support "
                          "vectors (ν_i ≠ 0).",
                          fg.decision_2d(X, y, lambda Z: (mu_s[0] * ks[0].cross(Z, X)
                                                          + mu_s[1] * ks[1].cross(Z, X))
                                         @ s.coef + s.intercept,
                                         levels=(-(1 + eps), -1, 0, 1, 1 + eps),
                                         sv=np.abs(s.coef) > tol))))

    with steps.attempt("Solver step: the reduced gradient on the simplex", "seed 003"):
        D = reduced_gradient_direction(mu0, grad)
        hs = 1e-4
        fdD = (J(mu0 + hs * D)[0] - J(mu0 - hs * D)[0]) / (2 * hs)
        neg = D < 0
        s_max = float(np.min(-mu0[neg] / D[neg])) if neg.any() else 1.0
        calls0 = J.calls
        s_best = _line_min(lambda t: J(mu0 + t * D)[0], 0.0, s_max, xatol=1e-5 * s_max)
        n_eval = J.calls - calls0
        J1 = J(mu0 + s_best * D)[0]
        ts = np.linspace(0.0, s_max, 7)
        Js = [J(mu0 + t * D)[0] for t in ts]
        steps.append(Step(
            "Solver step: the reduced gradient on the simplex",
            "seed 003, the two-step algorithm after eq. 26 (as in SimpleMKL, Rakotomamonjy "
            "et al., JMLR 9, 2008)",
            "Alternate: solve the inner SVMm at μ, then move μ along the reduced gradient D, "
            "which keeps Σ_kμ_k = 1 and is a descent direction (gᵀD = −Σ_{k≠r}(g_k − g_r)² "
            "< 0 unless μ is optimal). The step s goes as far as μ + sD ≥ 0 allows "
            f"(s_max = {s_max:.4g}); a line search on J along D picks s (a bounded scalar "
            f"search, {n_eval} SVMm solves here, s = {s_best:.4g}). J is convex in μ, so the "
            "search finds the best step.",
            "r = argmax_k μ_k;  D_k = −(g_k − g_r) (μ_k > 0 or g_k ≤ g_r), 0 otherwise;  "
            "D_r = −Σ_{k≠r}D_k\n"
            "s = argmin_{0 ≤ s ≤ s_max} J(μ + sD),  s_max = min_{D_k<0} −μ_k/D_k;   μ ← μ + sD",
            r"r=\arg\max_k\mu_k,\quad D_k=-(g_k-g_r),\quad D_r=-\sum_{k\ne r}D_k" "\n"
            r"s=\arg\min_{0\le s\le s_{\max}}J(\mu+sD),\quad s_{\max}=\min_{D_k<0}-\mu_k/D_k,"
            r"\quad\mu\leftarrow\mu+sD",
            [Check("directional derivative gᵀD = finite difference of J along D", grad @ D, fdD,
                   1e-5),
             Check("gᵀD < 0: D is a descent direction", float(grad @ D), 0.0, 0.0, kind="le"),
             Check("the line search lowers J: J(μ + sD) ≤ J(μ) (to the inner solves' 1e-10)",
                   J1, J0, 1e-10, kind="le"),
             Check("the chosen step is at least as good as a grid of 7 steps over [0, s_max]",
                   J1, float(np.min(Js)), 1e-10, kind="le")],
            figure=Figure("linesearch", "J(μ + sD) along the reduced-gradient direction from "
                          "μ = (½, ½); the line search's step marked.",
                          fg.curve([ts, [s_best]], [Js, [J1]],
                                   ["J(μ + sD)", "line search's step"], "step s",
                                   "J", styles=["-", "o"]))))
    return Walkthrough("MKLm", seed, inst, steps)
