"""Walk-through of mcODM.

mcODM, multi-class ODM (SPEC §5; seed 002 eqs. 20–41, Algs. 1–4): the block QP
solved by sorting, the printed Alg. 4 beside it, and the walk-through.
"""
from __future__ import annotations

import numpy as np

from .core import Check, Erratum, Step, Walkthrough, _SYMPY_TEXT, _sym_gradient, _sym_matrix


def mcodm_block_sort(A, B, D, E, F, y):
    """Exact minimiser of mcODM's block QP (seed 002 eq. 24) by sorting (eqs. 37–41).

    ``min Σ_{l≠y}[A/2 (α^l)² + B_l α^l] + D/2 (α^y)² − Aα^yβ + B_yα^y + E/2 β² + Fβ``
    s.t. ``Σ_l α^l = 0``, ``α^l ≤ 0 (l ≠ y)``, ``β ≥ 0``. With ν the multiplier of the
    equality: ``α^l = min(0, (ν − B_l)/A)`` (eq. 37), ``β = max(0, (Aα^y − F)/E)`` (eq. 38);
    ν = (P + Σ_{l∈Φ} B_l)/(Q + |Φ|), Φ = {l ≠ y: B_l > ν}, with (P, Q) = (AB_y/D, A/D) when
    β = 0 (eq. 40) and ((AEB_y + A²F)/(DE − A²), AE/(DE − A²)) when β > 0 (eq. 41); β = 0
    iff A(ν − B_y) ≤ DF. Needs ``A > 0`` (the A = 0 branch is linear and not shown here).
    NumPy re-statement of ``fast/_mcodm_block.py`` (SPEC §5's erratum applied: ν is the
    ratio, divided by its denominator).
    """
    B = np.asarray(B, float)
    k = B.size
    off = np.arange(k) != y
    Bs = np.sort(B[off])[::-1]

    def root(Pn, Qd):
        num, den = Pn, Qd
        for b in Bs:
            if num < b * den:
                num, den = num + b, den + 1.0
            else:
                break
        return num / den
    nu = root(A * B[y] / D, A / D)
    case2 = A * (nu - B[y]) > D * F
    if case2:
        det = D * E - A * A
        nu = root((A * E * B[y] + A * A * F) / det, A * E / det)
    alpha = np.zeros(k)
    alpha[off] = np.minimum(0.0, (nu - B[off]) / A)
    alpha[y] = -alpha[off].sum()
    beta = max(0.0, (A * alpha[y] - F) / E) if case2 else 0.0
    return alpha, beta


def mcodm_block_alg4_printed(A, B, D, E, F, y):
    """Alg. 4 of seed 002 as printed: ν accumulates the numerator of eqs. 40/41 and is used
    without dividing it by its denominator (``|Φ| + A/D``, resp. ``|Φ| + AE/(DE − A²)``)."""
    k = B.size
    Bh = B.copy()
    Bh[0], Bh[y] = Bh[y], Bh[0]
    Bh[1:] = np.sort(Bh[1:])[::-1]
    i, nu = 2, A * B[y] / D
    while i <= k and nu / (i - 2 + A / D) < Bh[i - 1]:
        nu += Bh[i - 1]
        i += 1
    alpha = np.zeros(k)
    off = np.arange(k) != y
    if nu <= B[y] + D * F / A:
        alpha[off] = np.minimum(0, (nu - B[off]) / A)
        alpha[y] = (nu - B[y]) / D
        return alpha, 0.0
    i, nu = 2, (A * E * Bh[0] + A * A * F) / (D * E - A * A)
    while i <= k and nu / (i - 2 + A * E / (D * E - A * A)) < Bh[i - 1]:
        nu += Bh[i - 1]
        i += 1
    alpha[off] = np.minimum(0, (nu - B[off]) / A)
    alpha[y] = (E * nu - A * F - E * B[y]) / (D * E - A * A)
    return alpha, (A * alpha[y] - F) / E


def _block_cvxpy(A, B, D, E, F, y):
    import cvxpy as cp

    k = B.size
    al, be = cp.Variable(k), cp.Variable()
    off = [l for l in range(k) if l != y]
    obj = (sum(A / 2 * cp.square(al[l]) + B[l] * al[l] for l in off)
           + D / 2 * cp.square(al[y]) - A * al[y] * be + B[y] * al[y] + E / 2 * cp.square(be)
           + F * be)
    # the quadratic part is PSD (D, E > A): write it as a sum of squares for CVXPY
    obj = (sum(A / 2 * cp.square(al[l]) + B[l] * al[l] for l in off)
           + A / 2 * cp.square(al[y] - be) + (D - A) / 2 * cp.square(al[y])
           + (E - A) / 2 * cp.square(be) + B[y] * al[y] + F * be)
    cons = [cp.sum(al) == 0, be >= 0] + [al[l] <= 0 for l in off]
    cp.Problem(cp.Minimize(obj), cons).solve(solver="CLARABEL", tol_gap_abs=1e-12,
                                             tol_gap_rel=1e-12, tol_feas=1e-12)
    return np.asarray(al.value, float), float(be.value)


def _mcodm(seed):
    import cvxpy as cp

    import refmodels as rm

    rng = np.random.default_rng(seed)
    m, k = 12, 3
    y = np.repeat(np.arange(k), m // k)
    X = rng.normal(size=(m, 2)) + 1.5 * np.c_[np.cos(2 * np.pi * y / k), np.sin(2 * np.pi * y / k)]
    lam, mu, th = 20.0, 0.5, 0.1
    prob = rm.McODM(X, y, lam=lam, mu=mu, theta=th, kernel=rm.kernels.Linear())
    M = rng.normal(size=m)
    R = prob.relaxed(M)
    p, d = R.solve(form="primal"), R.solve(form="dual")
    F_, G = R.F, R.gram
    c = lam / (m * (1 - th) ** 2)
    onehot = R.onehot
    inst = f"m={m}, k={k} classes, d=2, linear kernel, λ={lam}, μ={mu}, θ={th}; M ~ N(0, 1)"
    steps = []

    # 1. relaxed QP, exact at M = M(W)
    Wr = rng.normal(size=(F_.shape[1], k))
    S = F_ @ Wr
    sy = S[np.arange(m), y]
    so = np.max(np.where(onehot > 0, -np.inf, S), axis=1)
    gam = sy - so
    orig = 0.5 * np.sum(Wr ** 2) + c * np.sum(np.maximum(0, 1 - th - gam) ** 2
                                              + mu * np.maximum(0, gam - 1 - th) ** 2)
    steps.append(Step(
        "Primal: the relaxed QP", "seed 002 §4, the display before eq. 20 and eq. 20",
        "The multi-class margin γ_i = s_{y_i}(x_i) − max_{l≠y_i} s_l(x_i) makes ODM non-convex. "
        "Replacing the max by a given M_i in the upper constraint gives a convex QP; at "
        "M = M(W) = (max_{l≠y_i} s_l(x_i))_i the relaxation is exact.",
        "min ½Σ_l‖w_l‖² + λ/(m(1−θ)²)·Σ_i(ξ_i² + με_i²)  s.t.  s_{y_i}(x_i) − s_l(x_i) ≥ 1 − θ − ξ_i "
        "(l ≠ y_i),  s_{y_i}(x_i) − M_i ≤ 1 + θ + ε_i",
        r"\min\ \tfrac12\sum_l\|w_l\|^2+\frac{\lambda}{m(1-\theta)^2}\sum_i(\xi_i^2+\mu\epsilon_i^2)"
        r"\ \text{s.t.}\ s_{y_i}(x_i)-s_l(x_i)\ge1-\theta-\xi_i\ (l\ne y_i),\ s_{y_i}(x_i)-M_i\le"
        r"1+\theta+\epsilon_i",
        [Check("relaxed objective at M = M(W) = the original mcODM objective (random W)",
               prob.relaxed(so).primal_value(Wr), orig, 1e-12)]))

    # 2. Lagrangian, SymPy on 3 points x 2 features x k classes
    n, Fs, ys = 3, F_[:3, :2], y[:3]
    z0 = rng.uniform(0, 1, (n, k)) * (1 - np.eye(k)[ys])
    b0 = rng.uniform(0, 1, n)
    w0 = rng.normal(size=2 * k)
    x0, e0 = rng.normal(size=n), rng.normal(size=n)

    def build(s):
        Wl = [s["w"][2 * l:2 * l + 2, 0] for l in range(k)]
        sc = [[_sym_matrix(Fs[i]).dot(Wl[l]) for l in range(k)] for i in range(n)]
        L = sum(wl.dot(wl) for wl in Wl) / 2 + c * (s["xi"].dot(s["xi"]) + mu * s["e"].dot(s["e"]))
        for i in range(n):
            for l in range(k):
                if l != ys[i]:
                    L -= s["z"][i * k + l] * (sc[i][ys[i]] - sc[i][l] - 1 + th + s["xi"][i])
            L -= s["b"][i] * (1 + th + s["e"][i] - sc[i][ys[i]] + M[i])
        return L
    g = _sym_gradient(build, {"w": 2 * k, "xi": n, "e": n, "z": n * k, "b": n},
                      {"w": w0, "xi": x0, "e": e0, "z": z0.ravel(), "b": b0})
    al = -z0.copy()
    al[np.arange(n), ys] = z0.sum(axis=1)
    coef0 = al - np.eye(k)[ys] * b0[:, None]
    typed = w0.reshape(k, 2).T - Fs.T @ coef0                 # columns: ∇_{w_l} L
    steps.append(Step(
        "Lagrangian", "seed 002 §4.1, the Lagrangian of eq. 20 (before eq. 21)",
        "Multipliers ζ_i^l ≥ 0 (l ≠ y_i) for the k − 1 lower constraints and β_i ≥ 0 for the "
        "upper one; write α_i^l = −ζ_i^l (l ≠ y_i), α_i^{y_i} = Σ_{l≠y_i} ζ_i^l, so that "
        "Σ_l α_i^l = 0. " + _SYMPY_TEXT.replace("first 4 points and 3 features",
                                                 "first 3 points and 2 features"),
        "L = ½Σ_l‖w_l‖² + cΣ(ξ_i² + με_i²) − Σ_i Σ_{l≠y_i} ζ_i^l(s_{y_i}(x_i) − s_l(x_i) − 1 + θ + ξ_i)"
        " − Σ_i β_i(1 + θ + ε_i − s_{y_i}(x_i) + M_i)\n∇_{w_l} L = w_l − Σ_i (α_i^l − δ_{y_i l}β_i) φ(x_i)",
        r"L=\tfrac12\sum_l\|w_l\|^2+c\sum_i(\xi_i^2+\mu\epsilon_i^2)-\sum_i\sum_{l\ne y_i}\zeta_i^l"
        r"\big(s_{y_i}(x_i)-s_l(x_i)-1+\theta+\xi_i\big)-\sum_i\beta_i\big(1+\theta+\epsilon_i-"
        r"s_{y_i}(x_i)+M_i\big),\quad\nabla_{w_l}L=w_l-\sum_i(\alpha_i^l-\delta_{y_il}\beta_i)\phi(x_i)",
        [Check("SymPy ∇_{w_l} L = w_l − Σ_i(α_i^l − δ_{y_i l}β_i)φ(x_i) (random point)",
               g["w"], typed.T.ravel(), 1e-12)]))

    # 3. stationarity (eq. 22)
    steps.append(Step(
        "Stationarity", "seed 002 eqs. 21–22",
        "The w-gradient gives the class vectors; the slack gradients give ξ_i = Σ_{l≠y_i} ζ_i^l/(2c) "
        "= α_i^{y_i}/(2c) and ε_i = β_i/(2cμ).",
        "w_l = Σ_i (α_i^l − δ_{y_i l} β_i) φ(x_i),   ξ_i = α_i^{y_i}/(2c),   ε_i = β_i/(2cμ)",
        r"w_l=\sum_i(\alpha_i^l-\delta_{y_il}\beta_i)\phi(x_i),\quad\xi_i=\frac{\alpha_i^{y_i}}{2c},"
        r"\quad\epsilon_i=\frac{\beta_i}{2c\mu}",
        [Check("W of the primal solve = Fᵀ coef of the dual solve (two solves, each "
               "polished on its active set)", p.variables["W"],
               F_.T @ d.coef, 1e-6),
         Check("ξ of the primal solve = α^{y}/(2c) of the dual solve", p.variables["xi"],
               d.variables["alpha"][np.arange(m), y] / (2 * c), 1e-6)]))

    # 4. dual (eq. 23) and its erratum
    def dual_min(Mterm):
        alpha, beta = cp.Variable((m, k)), cp.Variable(m)
        coef = alpha - cp.multiply(onehot, cp.reshape(beta, (m, 1), order="F") @ np.ones((1, k)))
        a_y = cp.sum(cp.multiply(alpha, onehot), axis=1)
        obj = (0.5 * cp.sum_squares(F_.T @ coef)
               + m * (1 - th) ** 2 / (4 * lam * mu) * (mu * cp.sum_squares(a_y) + cp.sum_squares(beta))
               + (1 - th) * cp.sum(cp.multiply(alpha, 1 - onehot)) + Mterm(beta))
        cons = [cp.sum(alpha, axis=1) == 0, cp.multiply(alpha, 1 - onehot) <= 0, beta >= 0]
        pr = cp.Problem(cp.Minimize(obj), cons)
        pr.solve(solver="CLARABEL")
        return pr.value
    printed = dual_min(lambda b: (np.mean(M) + 1 + th) * cp.sum(b))
    inside = dual_min(lambda b: cp.sum(cp.multiply(M + 1 + th, b)))
    steps.append(Step(
        "Dual", "seed 002 eq. 23",
        "Substituting eq. 22 gives a QP over α (rows summing to zero, α_i^l ≤ 0 off the label) "
        "and β ≥ 0; its optimum is −P*(M).",
        "min ½Σ_l‖w_l‖² + m(1−θ)²/(4λμ)·(μΣ_i(α_i^{y_i})² + Σ_iβ_i²) + (1−θ)Σ_iΣ_{l≠y_i}α_i^l + "
        "Σ_i(M_i + 1 + θ)β_i\n s.t. Σ_l α_i^l = 0, α_i^l ≤ 0 (l ≠ y_i), β ≥ 0,  w_l as in eq. 22",
        r"\min\ \tfrac12\sum_l\|w_l\|^2+\frac{m(1-\theta)^2}{4\lambda\mu}\Big(\mu\sum_i(\alpha_i^{y_i})^2"
        r"+\sum_i\beta_i^2\Big)+(1-\theta)\sum_i\sum_{l\ne y_i}\alpha_i^l+\sum_i(M_i+1+\theta)\beta_i",
        [Check("primal optimum P*(M) = −(dual optimum) (class solves)", p.objective,
               R.dual_value(d.variables), 1e-7)],
        [Erratum("mcodm-eq23-M-inside-sum", "seed 002 eq. 23",
                 "The last term is printed (M_i + 1 + θ)Σ_iβ_i, with M_i outside the sum over i, "
                 "which is not well defined; its reading with one scalar (the mean of M) has "
                 "another optimum as soon as M is not constant.",
                 "… + (M_i + 1 + θ) Σ_i β_i   (read with M_i := mean(M))",
                 r"\dots+(M_i+1+\theta)\sum_i\beta_i",
                 "… + Σ_i (M_i + 1 + θ) β_i",
                 r"\dots+\sum_i(M_i+1+\theta)\beta_i",
                 Check("printed dual optimum (negated) = P*(M)", -printed, p.objective, 1e-6),
                 Check("corrected dual optimum (negated, CVXPY) = P*(M)", -inside, p.objective,
                       1e-6))]))

    # 5. block sub-problem: sorting, Alg. 4 as printed
    def block_inputs(i, coef):
        A = G[i, i]
        gsum = G[i] @ coef - A * coef[i]
        B = gsum + (1 - th)
        B[y[i]] = gsum[y[i]]
        aa = m * (1 - th) ** 2 / (2 * lam)
        return A, B, A + aa, A + aa / mu, M[i] + 1 + th - gsum[y[i]]
    rs = np.random.default_rng(seed + 7)
    sorted_pts, cvx_pts, printed_pts, cases = [], [], [], []
    for t in range(6):
        A = 0.5 + rs.random()
        B = rs.normal(size=4)
        D, E = A + 0.5 + rs.random(), A + 0.5 + rs.random()
        Fv = rs.normal() - (1.5 if t % 2 else -1.5)       # both cases β = 0 and β > 0
        yb = int(rs.integers(4))
        sa, sb = mcodm_block_sort(A, B, D, E, Fv, yb)
        ca, cb = _block_cvxpy(A, B, D, E, Fv, yb)
        pa, pb = mcodm_block_alg4_printed(A, B, D, E, Fv, yb)
        sorted_pts.append(np.r_[sa, sb])
        cvx_pts.append(np.r_[ca, cb])
        printed_pts.append(np.r_[pa, pb])
        cases.append(sb > 0)
    # the block QP is eq. 23 restricted to one sample: one block step on the dual solution
    coef = d.coef.copy()
    i0 = 0
    A, B, D, E, Fv = block_inputs(i0, coef)
    ba, bb = mcodm_block_sort(A, B, D, E, Fv, y[i0])
    steps.append(Step(
        "Solver step: the block sub-problem and its solution by sorting",
        "seed 002 eq. 24, eqs. 37–41 and Alg. 4",
        "Block coordinate descent on eq. 23 moves one sample's (α_i, β_i) at a time. With "
        "the other blocks fixed it is a small QP with inputs A = κ(x_i, x_i), B_l = Σ_{j≠i} "
        "κ_ij(α_j^l − δ_{y_j l}β_j) + 1 − θ (l ≠ y_i; without 1 − θ for l = y_i), "
        "D = A + m(1−θ)²/(2λ), E = A + m(1−θ)²/(2λμ), F = M_i + 1 + θ − B_{y_i}. Its KKT "
        "conditions leave one scalar ν, found by sorting the B_l. "
        f"Checked on 6 random blocks (k = 4; {sum(cases)} with β > 0) against CVXPY.",
        "min Σ_{l≠y}[A/2(α^l)² + B_lα^l] + D/2(α^y)² − Aα^yβ + B_yα^y + E/2β² + Fβ  "
        "s.t. Σ_lα^l = 0, α^l ≤ 0 (l≠y), β ≥ 0\n"
        "α^l = min(0, (ν − B_l)/A),  ν = (P + Σ_{l∈Φ}B_l)/(Q + |Φ|),  Φ = {l ≠ y: B_l > ν};  "
        "β = 0 iff A(ν − B_y) ≤ DF",
        r"\min\sum_{l\ne y}\Big[\frac A2(\alpha^l)^2+B_l\alpha^l\Big]+\frac D2(\alpha^y)^2-A\alpha^y"
        r"\beta+B_y\alpha^y+\frac E2\beta^2+F\beta;\quad\alpha^l=\min\Big(0,\frac{\nu-B_l}{A}\Big),"
        r"\ \nu=\frac{P+\sum_{l\in\Phi}B_l}{Q+|\Phi|}",
        [Check("block KKT point after one step on the dual optimum = the dual optimum's block "
               "(a block of an optimum is already optimal)", np.r_[ba, bb],
               np.r_[d.variables["alpha"][i0], d.variables["beta"][i0]], 1e-6)],
        [Erratum("mcodm-alg4-nu-not-divided", "seed 002 Alg. 4",
                 "As printed, ν accumulates the numerator of eqs. 40/41 and is never divided by "
                 "its denominator (|Φ| + A/D, resp. |Φ| + AE/(DE − A²)) before it is used.",
                 "ν ← ν + B̂_i  (used as is)", r"\nu\leftarrow\nu+\hat B_i\ (\text{used as is})",
                 "ν = (P + Σ_{l∈Φ}B_l)/(Q + |Φ|)",
                 r"\nu=\frac{P+\sum_{l\in\Phi}B_l}{Q+|\Phi|}",
                 Check("Alg. 4 as printed = CVXPY on 6 random blocks", np.array(printed_pts),
                       np.array(cvx_pts), 1e-6),
                 Check("sorting with ν divided = CVXPY on 6 random blocks", np.array(sorted_pts),
                       np.array(cvx_pts), 1e-6))]))

    # 6. linear speed-up of B
    rw = np.random.default_rng(seed + 3)
    coefr = rw.normal(size=(m, k))
    Wlin = X.T @ coefr
    i1 = 1
    A1, B_kernel, *_ = block_inputs(i1, coefr)
    g_lin = X[i1] @ Wlin - A1 * coefr[i1]
    B_lin = g_lin + (1 - th)
    B_lin[y[i1]] = g_lin[y[i1]]
    B_printed = g_lin.copy()
    steps.append(Step(
        "Solver step: the linear speed-up", "seed 002 §4.2",
        "With the linear kernel, Σ_{j≠i} κ_ij coef_j^l = x_iᵀw_l − κ_ii coef_i^l: the inputs B "
        "cost O(dk) from the current W instead of O(mk) kernel evaluations.",
        "B_l = x_iᵀw_l − A·coef_i^l + (1 − θ)  (l ≠ y_i),   B_{y_i} = x_iᵀw_{y_i} − A·coef_i^{y_i}",
        r"B_l=x_i^\top w_l-A\,\mathrm{coef}_i^l+(1-\theta)\ (l\ne y_i),\qquad B_{y_i}=x_i^\top "
        r"w_{y_i}-A\,\mathrm{coef}_i^{y_i}",
        [],
        [Erratum("mcodm-linear-speedup-B-drops-1-theta", "seed 002 §4.2",
                 "The linear speed-up's formula for B_l drops the + (1 − θ) term for l ≠ y_i.",
                 "B_l = x_iᵀw_l − A·coef_i^l", r"B_l=x_i^\top w_l-A\,\mathrm{coef}_i^l",
                 "B_l = x_iᵀw_l − A·coef_i^l + (1 − θ)",
                 r"B_l=x_i^\top w_l-A\,\mathrm{coef}_i^l+(1-\theta)",
                 Check("printed linear B = B from kernel sums (random coef)", B_printed,
                       B_kernel, 1e-10),
                 Check("corrected linear B = B from kernel sums (random coef)", B_lin, B_kernel,
                       1e-10))]))

    # 7. outer loop (Alg. 3)
    outer = rm.McODM(X, y, lam=1.0, mu=mu, theta=th, kernel=rm.kernels.Linear())
    sol = outer.solve(max_outer=40, tol=1e-8)
    W_star = sol.variables["W"]
    again = outer.relaxed(outer.M_from(W_star)).solve(form="dual").variables["W"]
    steps.append(Step(
        "Outer loop", "seed 002 Alg. 3",
        "Start from W = 0; repeat: M_i ← max_{l≠y_i} s_l(x_i) at the current W, solve the "
        "relaxed QP. The original problem is non-convex: the loop stops at a fixed point, "
        "which is a KKT point of the relaxed QP at its own M (not certified globally optimal). "
        "Run here with λ = 1 (the loop converges slowly for large λ).",
        "M ← M(W),   W ← argmin relaxed QP(M),   until ‖ΔW‖/max(1, ‖W‖) < tol",
        r"M\leftarrow M(W),\quad W\leftarrow\arg\min\ \text{relaxed QP}(M),\quad\text{until }"
        r"\|\Delta W\|/\max(1,\|W\|)<\text{tol}",
        [Check(f"fixed point: W* (after {sol.n_iter} rounds) = the relaxed QP's solution at "
               "M(W*)", again, W_star, 1e-5)]))
    return Walkthrough("McODM", seed, inst, steps)
