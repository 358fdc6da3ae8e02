"""Walk-through of mcODM.

mcODM, multi-class ODM (seed 002 eqs. 20–41, Algs. 1–4): the block QP
solved by sorting, the printed Alg. 4 beside it, and the walk-through.
"""
from __future__ import annotations

import numpy as np

from . import figures as fg
from .core import Check, Erratum, Figure, Step, Steps, Walkthrough
from .numerics import TIGHT, _sym_gradient, _sym_matrix, cvx_solve, solve


def mcodm_block_sort(A, B, D, E, F, y):
    """Exact minimiser of mcODM's block QP (seed 002 eq. 24) by sorting (eqs. 37–41).

    ``min Σ_{l≠y}[A/2 (α^l)² + B_l α^l] + D/2 (α^y)² − Aα^yβ + B_yα^y + E/2 β² + Fβ``
    s.t. ``Σ_l α^l = 0``, ``α^l ≤ 0 (l ≠ y)``, ``β ≥ 0``. With ν the multiplier of the
    equality: ``α^l = min(0, (ν − B_l)/A)`` (eq. 37), ``β = max(0, (Aα^y − F)/E)`` (eq. 38);
    ``ν = (p₀ + Σ_{l∈Φ} B_l)/(q₀ + |Φ|)``, ``Φ = {l ≠ y: B_l > ν}``, with
    ``(p₀, q₀) = (AB_y/D, A/D)`` when ``β = 0`` (eq. 40) and
    ``((AEB_y + A²F)/(DE − A²), AE/(DE − A²))`` when ``β > 0`` (eq. 41) (the paper's "P and
    Q", renamed: Q is YGY elsewhere); ``β = 0`` iff ``A(ν − B_y) ≤ DF``. Needs
    ``A > 0`` (the A = 0 branch is linear and not shown here). NumPy re-statement of the
    fast solver's block step, with Alg. 4's erratum corrected: ν is the ratio, divided by
    its denominator.
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
    """One block QP (eq. 24) by CVXPY; returns ``(α, β)``."""
    al, be = _blocks_cvxpy([(A, B, D, E, F, y)])[0]
    return al, be


def _blocks_cvxpy(blocks):
    """Several independent block QPs (eq. 24) in one CVXPY problem (one canonicalisation):
    ``[(A, B, D, E, F, y)]`` -> ``[(α, β)]``."""
    import cvxpy as cp

    obj, cons, vars_ = 0, [], []
    for A, B, D, E, F, y in blocks:
        k = B.size
        al, be = cp.Variable(k), cp.Variable()
        off = np.array([l for l in range(k) if l != y])
        # the quadratic part is PSD (D, E > A): written as a sum of squares for CVXPY
        obj = obj + (A / 2 * cp.sum_squares(al[off]) + B[off] @ al[off]
                     + A / 2 * cp.square(al[y] - be) + (D - A) / 2 * cp.square(al[y])
                     + (E - A) / 2 * cp.square(be) + B[y] * al[y] + F * be)
        cons += [cp.sum(al) == 0, be >= 0, al[off] <= 0]
        vars_.append((al, be))
    cvx_solve(cp.Problem(cp.Minimize(obj), cons))
    return [(np.asarray(al.value, float), float(be.value)) for al, be in vars_]


def mcodm_instance(seed, m=12, k=3):
    """Three classes of four points in 2-D, around the corners of a triangle."""
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(k), m // k)
    X = rng.normal(size=(m, 2)) + 1.5 * np.c_[np.cos(2 * np.pi * y / k),
                                              np.sin(2 * np.pi * y / k)]
    return X, y, rng


def _mcodm(seed):
    import cvxpy as cp

    import refmodels as rm

    X, y, rng = mcodm_instance(seed)
    m, k = len(y), 3
    lam, mu, th = 20.0, 0.5, 0.1
    prob = rm.McODM(X, y, lam=lam, mu=mu, theta=th, kernel=rm.kernels.Linear())
    M = rng.normal(size=m)
    R = prob.relaxed(M)
    F_, G = R.F, R.gram
    c = lam / (m * (1 - th) ** 2)
    onehot = R.onehot
    inst = f"m={m}, k={k} classes, d=2, linear kernel, λ={lam}, μ={mu}, θ={th}; M ~ N(0, 1)"
    steps = Steps()

    with steps.attempt("Primal: the relaxed QP", "seed 002 eq. 20"):
        p, d = solve(R, "primal"), solve(R, "dual")
        Wr = rng.normal(size=(F_.shape[1], k))
        S = F_ @ Wr
        sy = S[np.arange(m), y]
        so = np.max(np.where(onehot > 0, -np.inf, S), axis=1)
        gam = sy - so
        orig = 0.5 * np.sum(Wr ** 2) + c * np.sum(np.maximum(0, 1 - th - gam) ** 2
                                                  + mu * np.maximum(0, gam - 1 - th) ** 2)
        steps.append(Step(
            "Primal: the relaxed QP", "seed 002 §4, the display before eq. 20 and eq. 20",
            "One score s_l(x) = w_lᵀφ(x) per class; the multi-class margin is γ_i = "
            "s_{y_i}(x_i) − max_{l≠y_i} s_l(x_i), and ODM with this margin is non-convex (the "
            "max in the upper constraint). Replacing that max by a given M_i gives a convex "
            "QP; at M = M(W) = (max_{l≠y_i} s_l(x_i))_i the relaxation is exact.",
            "min ½Σ_l‖w_l‖² + λ/(m(1−θ)²)·Σ_i(ξ_i² + με_i²)\n"
            "s.t.  s_{y_i}(x_i) − s_l(x_i) ≥ 1 − θ − ξ_i (l ≠ y_i),  s_{y_i}(x_i) − M_i ≤ "
            "1 + θ + ε_i",
            r"\min\ \tfrac12\sum_l\|w_l\|^2+\frac{\lambda}{m(1-\theta)^2}\sum_i(\xi_i^2+\mu"
            r"\epsilon_i^2)" "\n"
            r"\text{s.t.}\ s_{y_i}(x_i)-s_l(x_i)\ge1-\theta-\xi_i\ (l\ne y_i),\quad s_{y_i}"
            r"(x_i)-M_i\le1+\theta+\epsilon_i",
            [Check("relaxed objective at M = M(W) = the original mcODM objective (random W)",
                   prob.relaxed(so).primal_value(Wr), orig, 1e-12)]))

    with steps.attempt("Lagrangian", "seed 002 §4.1"):
        n, Fs, ys = 3, F_[:3, :2], y[:3]
        z0 = rng.uniform(0, 1, (n, k)) * (1 - np.eye(k)[ys])
        b0 = rng.uniform(0, 1, n)
        w0 = rng.normal(size=2 * k)
        x0, e0 = rng.normal(size=n), rng.normal(size=n)

        def build(s):
            Wl = [s["w"][2 * l:2 * l + 2, 0] for l in range(k)]
            sc = [[_sym_matrix(Fs[i]).dot(Wl[l]) for l in range(k)] for i in range(n)]
            L = (sum(wl.dot(wl) for wl in Wl) / 2
                 + c * (s["xi"].dot(s["xi"]) + mu * s["e"].dot(s["e"])))
            for i in range(n):
                for l in range(k):
                    if l != ys[i]:
                        L -= s["z"][i * k + l] * (sc[i][ys[i]] - sc[i][l] - 1 + th + s["xi"][i])
                L -= s["b"][i] * (1 + th + s["e"][i] - sc[i][ys[i]]
                                  + _sym_matrix(M[i:i + 1])[0])
            return L
        g = _sym_gradient(build, {"w": 2 * k, "xi": n, "e": n, "z": n * k, "b": n},
                          {"w": w0, "xi": x0, "e": e0, "z": z0.ravel(), "b": b0},
                          key=("McODM", tuple(ys), c, mu, th),
                          data=[Fs[i] for i in range(n) for _ in range(k)]
                          + [M[i:i + 1] for i in range(n)])
        al = -z0.copy()
        al[np.arange(n), ys] = z0.sum(axis=1)
        coef0 = al - np.eye(k)[ys] * b0[:, None]
        typed = w0.reshape(k, 2).T - Fs.T @ coef0                 # columns: ∇_{w_l} L
        steps.append(Step(
            "Lagrangian", "seed 002 §4.1, the Lagrangian of eq. 20 (before eq. 21)",
            "Multipliers ζ_i^l ≥ 0 (l ≠ y_i) for the k − 1 lower constraints and β_i ≥ 0 for "
            "the upper one; write α_i^l = −ζ_i^l (l ≠ y_i), α_i^{y_i} = Σ_{l≠y_i} ζ_i^l, so "
            "that Σ_l α_i^l = 0. SymPy builds L entry by entry on the first 3 points and 2 "
            "features (every class) and differentiates it; the check compares its gradient "
            "at a random point with the stationarity expression as the paper states it.",
            "L = ½Σ_l‖w_l‖² + cΣ(ξ_i² + με_i²) − Σ_i Σ_{l≠y_i} ζ_i^l(s_{y_i}(x_i) − s_l(x_i) − "
            "1 + θ + ξ_i) − Σ_i β_i(1 + θ + ε_i − s_{y_i}(x_i) + M_i)\n"
            "∇_{w_l} L = w_l − Σ_i (α_i^l − δ_{y_i l}β_i) φ(x_i)",
            r"L=\tfrac12\sum_l\|w_l\|^2+c\sum_i(\xi_i^2+\mu\epsilon_i^2)-\sum_i\sum_{l\ne y_i}"
            r"\zeta_i^l\big(s_{y_i}(x_i)-s_l(x_i)-1+\theta+\xi_i\big)" "\n"
            r"\qquad-\sum_i\beta_i\big(1+\theta+\epsilon_i-s_{y_i}(x_i)+M_i\big)" "\n"
            r"\nabla_{w_l}L=w_l-\sum_i(\alpha_i^l-\delta_{y_il}\beta_i)\phi(x_i)",
            [Check("SymPy ∇_{w_l} L = w_l − Σ_i(α_i^l − δ_{y_i l}β_i)φ(x_i) (random point)",
                   g["w"], typed.T.ravel(), 1e-12)]))

    with steps.attempt("Stationarity", "seed 002 eqs. 21–22"):
        steps.append(Step(
            "Stationarity", "seed 002 eqs. 21–22",
            "The w-gradient gives the class vectors; the slack gradients give ξ_i = "
            "Σ_{l≠y_i} ζ_i^l/(2c) = α_i^{y_i}/(2c) and ε_i = β_i/(2cμ).",
            "w_l = Σ_i (α_i^l − δ_{y_i l} β_i) φ(x_i),   ξ_i = α_i^{y_i}/(2c),   ε_i = "
            "β_i/(2cμ)",
            r"w_l=\sum_i(\alpha_i^l-\delta_{y_il}\beta_i)\phi(x_i),\quad\xi_i=\frac{\alpha_i^"
            r"{y_i}}{2c},\quad\epsilon_i=\frac{\beta_i}{2c\mu}",
            [Check("W of the primal solve = Fᵀ coef of the dual solve (two solves, each "
                   "polished on its active set)", p.variables["W"], F_.T @ d.coef, 1e-6),
             Check("ξ of the primal solve = α^{y}/(2c) of the dual solve", p.variables["xi"],
                   d.variables["alpha"][np.arange(m), y] / (2 * c), 1e-6)]))

    with steps.attempt("Dual", "seed 002 eq. 23"):
        def dual_min(Mterm):
            alpha, beta = cp.Variable((m, k)), cp.Variable(m)
            coef = alpha - cp.multiply(onehot, cp.reshape(beta, (m, 1), order="F")
                                       @ np.ones((1, k)))
            a_y = cp.sum(cp.multiply(alpha, onehot), axis=1)
            obj = (0.5 * cp.sum_squares(F_.T @ coef)
                   + m * (1 - th) ** 2 / (4 * lam * mu) * (mu * cp.sum_squares(a_y)
                                                           + cp.sum_squares(beta))
                   + (1 - th) * cp.sum(cp.multiply(alpha, 1 - onehot)) + Mterm(beta))
            cons = [cp.sum(alpha, axis=1) == 0, cp.multiply(alpha, 1 - onehot) <= 0,
                    beta >= 0]
            return cvx_solve(cp.Problem(cp.Minimize(obj), cons))
        printed = dual_min(lambda b: (np.mean(M) + 1 + th) * cp.sum(b))
        inside = dual_min(lambda b: cp.sum(cp.multiply(M + 1 + th, b)))
        steps.append(Step(
            "Dual", "seed 002 eq. 23",
            "Substituting eq. 22 gives a QP over α (rows summing to zero, α_i^l ≤ 0 off the "
            "label) and β ≥ 0; its optimum is −P*(M).",
            "min ½Σ_l‖w_l‖² + m(1−θ)²/(4λμ)·(μΣ_i(α_i^{y_i})² + Σ_iβ_i²) + "
            "(1−θ)Σ_iΣ_{l≠y_i}α_i^l + Σ_i(M_i + 1 + θ)β_i\n"
            "s.t. Σ_l α_i^l = 0, α_i^l ≤ 0 (l ≠ y_i), β ≥ 0,  w_l as in eq. 22",
            r"\min\ \tfrac12\sum_l\|w_l\|^2+\frac{m(1-\theta)^2}{4\lambda\mu}\Big(\mu\sum_i"
            r"(\alpha_i^{y_i})^2+\sum_i\beta_i^2\Big)" "\n"
            r"\qquad+(1-\theta)\sum_i\sum_{l\ne y_i}\alpha_i^l+\sum_i(M_i+1+\theta)\beta_i" "\n"
            r"\text{s.t.}\ \sum_l\alpha_i^l=0,\ \alpha_i^l\le0\ (l\ne y_i),\ \beta\ge0",
            [Check("primal optimum P*(M) = −(dual optimum) (class solves)", p.objective,
                   R.dual_value(d.variables), 1e-7)],
            [Erratum("mcodm-eq23-M-inside-sum", "seed 002 eq. 23",
                     "The last term is printed (M_i + 1 + θ)Σ_iβ_i, with M_i outside the sum "
                     "over i, which is not well defined; its reading with one scalar (the "
                     "mean of M) has another optimum as soon as M is not constant.",
                     "… + (M_i + 1 + θ) Σ_i β_i   (read with M_i := mean(M))",
                     r"\dots+(M_i+1+\theta)\sum_i\beta_i",
                     "… + Σ_i (M_i + 1 + θ) β_i",
                     r"\dots+\sum_i(M_i+1+\theta)\beta_i",
                     Check("printed dual optimum (negated, CVXPY) = P*(M)", -printed,
                           p.objective, 1e-6),
                     Check("corrected dual optimum (negated, CVXPY) = P*(M)", -inside,
                           p.objective, 1e-6))]))

    def block_inputs(i, coef):
        A = G[i, i]
        gsum = G[i] @ coef - A * coef[i]
        B = gsum + (1 - th)
        B[y[i]] = gsum[y[i]]
        aa = m * (1 - th) ** 2 / (2 * lam)
        return A, B, A + aa, A + aa / mu, M[i] + 1 + th - gsum[y[i]]

    with steps.attempt("Solver step: the block sub-problem and its solution by sorting",
                       "seed 002 Alg. 4"):
        rs = np.random.default_rng(seed + 7)
        blocks = []
        for t in range(6):
            A = 0.5 + rs.random()
            B = rs.normal(size=4)
            D, E = A + 0.5 + rs.random(), A + 0.5 + rs.random()
            Fv = rs.normal() - (1.5 if t % 2 else -1.5)       # both cases β = 0 and β > 0
            blocks.append((A, B, D, E, Fv, int(rs.integers(4))))
        cvx = _blocks_cvxpy(blocks)
        sorted_pts, cvx_pts, printed_pts, cases = [], [], [], []
        for (A, B, D, E, Fv, yb), (ca, cb) in zip(blocks, cvx):
            sa, sb = mcodm_block_sort(A, B, D, E, Fv, yb)
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
            "the other blocks fixed it is a small QP with inputs A = κ(x_i, x_i), B_l = "
            "Σ_{j≠i} κ_ij(α_j^l − δ_{y_j l}β_j) + 1 − θ (l ≠ y_i; without 1 − θ for l = y_i), "
            "D = A + m(1−θ)²/(2λ), E = A + m(1−θ)²/(2λμ), F = M_i + 1 + θ − B_{y_i}. Its KKT "
            "conditions leave one scalar ν (the multiplier of Σ_lα^l = 0), found by sorting "
            "the B_l: Φ is the set of classes whose α^l is strictly negative, and the paper's "
            "constants, called p₀ and q₀ here (the paper's P and Q; Q is YGY elsewhere), are "
            "p₀ = AB_y/D, q₀ = A/D when β = 0 (eq. 40) and p₀ = (AEB_y + A²F)/(DE − A²), "
            "q₀ = AE/(DE − A²) when β > 0 (eq. 41). "
            f"Checked on 6 random blocks (k = 4; {sum(cases)} with β > 0) against CVXPY.",
            "min Σ_{l≠y}[A/2(α^l)² + B_lα^l] + D/2(α^y)² − Aα^yβ + B_yα^y + E/2β² + Fβ  "
            "s.t. Σ_lα^l = 0, α^l ≤ 0 (l≠y), β ≥ 0\n"
            "α^l = min(0, (ν − B_l)/A),  ν = (p₀ + Σ_{l∈Φ}B_l)/(q₀ + |Φ|),  Φ = {l ≠ y: B_l > ν}\n"
            "β = 0 iff A(ν − B_y) ≤ DF;  (p₀, q₀) = (AB_y/D, A/D) if β = 0, "
            "((AEB_y + A²F)/(DE − A²), AE/(DE − A²)) if β > 0",
            r"\min\sum_{l\ne y}\Big[\frac A2(\alpha^l)^2+B_l\alpha^l\Big]+\frac D2(\alpha^y)^2"
            r"-A\alpha^y\beta+B_y\alpha^y+\frac E2\beta^2+F\beta" "\n"
            r"\text{s.t.}\ \sum_l\alpha^l=0,\ \alpha^l\le0\ (l\ne y),\ \beta\ge0" "\n"
            r"\alpha^l=\min\Big(0,\frac{\nu-B_l}{A}\Big),\quad\nu=\frac{p_0+\sum_{l\in\Phi}B_l}"
            r"{q_0+|\Phi|},\quad\Phi=\{l\ne y:B_l>\nu\}" "\n"
            r"\beta=0\iff A(\nu-B_y)\le DF;\qquad(p_0,q_0)=\Big(\frac{AB_y}D,\frac AD\Big)"
            r"\ \text{if}\ \beta=0" "\n"
            r"(p_0,q_0)=\Big(\frac{AEB_y+A^2F}{DE-A^2},\frac{AE}{DE-A^2}\Big)\ \text{if}\ "
            r"\beta>0",
            [Check("block KKT point after one step on the dual optimum = the dual optimum's "
                   "block (a block of an optimum is already optimal)", np.r_[ba, bb],
                   np.r_[d.variables["alpha"][i0], d.variables["beta"][i0]], 1e-6)],
            [Erratum("mcodm-alg4-nu-not-divided", "seed 002 Alg. 4",
                     "As printed, ν accumulates the numerator of eqs. 40/41 and is never "
                     "divided by its denominator (q₀ + |Φ|) before it is used.",
                     "ν ← ν + B̂_i  (used as is)", r"\nu\leftarrow\nu+\hat B_i\ "
                     r"(\text{used as is})",
                     "ν = (p₀ + Σ_{l∈Φ}B_l)/(q₀ + |Φ|)",
                     r"\nu=\frac{p_0+\sum_{l\in\Phi}B_l}{q_0+|\Phi|}",
                     Check("Alg. 4 as printed = CVXPY on 6 random blocks",
                           np.array(printed_pts), np.array(cvx_pts), 1e-6),
                     Check("sorting with ν divided = CVXPY on 6 random blocks",
                           np.array(sorted_pts), np.array(cvx_pts), 1e-6))]))

    with steps.attempt("Solver step: the linear speed-up", "seed 002 §4.2"):
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
            "With the linear kernel, Σ_{j≠i} κ_ij coef_j^l = x_iᵀw_l − κ_ii coef_i^l: the "
            "inputs B cost O(dk) from the current W instead of O(mk) kernel evaluations.",
            "B_l = x_iᵀw_l − A·coef_i^l + (1 − θ)  (l ≠ y_i),   B_{y_i} = x_iᵀw_{y_i} − "
            "A·coef_i^{y_i}",
            r"B_l=x_i^\top w_l-A\,\mathrm{coef}_i^l+(1-\theta)\ (l\ne y_i),\qquad B_{y_i}="
            r"x_i^\top w_{y_i}-A\,\mathrm{coef}_i^{y_i}",
            [],
            [Erratum("mcodm-linear-speedup-B-drops-1-theta", "seed 002 §4.2",
                     "The linear speed-up's formula for B_l drops the + (1 − θ) term for "
                     "l ≠ y_i.",
                     "B_l = x_iᵀw_l − A·coef_i^l", r"B_l=x_i^\top w_l-A\,\mathrm{coef}_i^l",
                     "B_l = x_iᵀw_l − A·coef_i^l + (1 − θ)",
                     r"B_l=x_i^\top w_l-A\,\mathrm{coef}_i^l+(1-\theta)",
                     Check("printed linear B = B from kernel sums (random coef)", B_printed,
                           B_kernel, 1e-10),
                     Check("corrected linear B = B from kernel sums (random coef)", B_lin,
                           B_kernel, 1e-10))]))

    with steps.attempt("Outer loop", "seed 002 Alg. 3"):
        outer = rm.McODM(X, y, lam=1.0, mu=mu, theta=th, kernel=rm.kernels.Linear())
        sol = outer.solve(max_outer=60, tol=1e-7, **TIGHT)
        W_star = sol.variables["W"]
        again = solve(outer.relaxed(outer.M_from(W_star)), "dual").variables["W"]
        steps.append(Step(
            "Outer loop", "seed 002 Alg. 3",
            "Start from W = 0; repeat: M_i ← max_{l≠y_i} s_l(x_i) at the current W, solve "
            "the relaxed QP. The original problem is non-convex: the loop stops at a fixed "
            "point, which is a KKT point of the relaxed QP at its own M (not certified "
            "globally optimal). Run here with λ = 1 (the loop converges slowly for large λ).",
            "M ← M(W),   W ← argmin relaxed QP(M),   until ‖ΔW‖/max(1, ‖W‖) < tol",
            r"M\leftarrow M(W),\quad W\leftarrow\arg\min\ \text{relaxed QP}(M),\quad\text{until }"
            r"\|\Delta W\|/\max(1,\|W\|)<\text{tol}",
            [Check(f"fixed point: W* (after {sol.n_iter} rounds) = the relaxed QP's solution "
                   "at M(W*)", again, W_star, 1e-5)]))

    with steps.attempt("Complementary slackness and the support vectors", "seed 002 eq. 21"):
        Rf = outer.relaxed(sol.info["M"])
        al_, be_ = sol.variables["alpha"], sol.variables["beta"]
        coef_ = sol.coef
        S = outer.gram @ coef_
        sy = S[np.arange(m), y]
        other = np.where(onehot > 0, -np.inf, S)
        gam = sy - np.max(other, axis=1)
        cf = 1.0 / (m * (1 - th) ** 2)                     # λ = 1 here
        xi_ = al_[np.arange(m), y] / (2 * cf)
        eps_ = be_ / (2 * cf * mu)
        tol = 1e-7 * (1 + np.max(np.abs(al_)))
        low = al_[np.arange(m), y] > tol
        high = be_ > tol
        role = np.where(low, "α^{y} > 0: margin below 1 − θ", np.where(
            high, "β > 0: margin above 1 + θ", "inside the band (no multiplier)"))
        zeta_ = np.where(onehot > 0, 0.0, -al_)
        slack = np.where(onehot > 0, 0.0, sy[:, None] - S - (1 - th) + xi_[:, None])
        rows = [(i, int(y[i]), float(gam[i]), float(al_[i, y[i]]), float(be_[i]), role[i])
                for i in range(m)]
        steps.append(Step(
            "Complementary slackness and the support vectors", "seed 002 eqs. 20–22",
            "At the fixed point of the outer loop (λ = 1 above), each ζ_i^l vanishes unless "
            "the gap to class l is at the lower edge, and β_i unless s_{y_i}(x_i) − M_i is at "
            "the upper edge. A sample enters the class vectors w_l only through α_i and β_i: "
            f"the support vectors. Here {int(low.sum())} samples below the band, "
            f"{int(high.sum())} above, {int(np.sum(~low & ~high))} inside (no contribution).",
            "ζ_i^l(s_{y_i}(x_i) − s_l(x_i) − 1 + θ + ξ_i) = 0,   β_i(1 + θ + ε_i − s_{y_i}(x_i) "
            "+ M_i) = 0",
            r"\zeta_i^l\big(s_{y_i}(x_i)-s_l(x_i)-1+\theta+\xi_i\big)=0,\qquad\beta_i\big(1+"
            r"\theta+\epsilon_i-s_{y_i}(x_i)+M_i\big)=0",
            [Check("ζ_i^l × (its constraint's slack) = 0 (max over i, l ≠ y_i)",
                   np.max(np.abs(zeta_ * slack)), 0.0, 1e-6),
             Check("β_i × (its constraint's slack) = 0 (max over i)",
                   np.max(np.abs(be_ * (1 + th + eps_ - sy + sol.info["M"]))), 0.0, 1e-6),
             Check("samples with no multiplier contribute nothing: their rows of coef = 0",
                   np.abs(coef_[~low & ~high]) if np.any(~low & ~high) else np.zeros(1), 0.0,
                   1e-6),
             Check("certificate of the fixed point as a KKT point of its relaxed QP",
                   max(abs(s_) for _, s_ in Rf.certify(sol).residuals.values()), 0.0, 1e-6)],
            table=(("i", "y_i", "γ_i", "α_i^{y_i}", "β_i", "role"), rows),
            figure=Figure("regions", "mcODM (λ = 1, the outer loop's fixed point) on the "
                          "instance: the predicted class regions argmax_l s_l(x) and the three "
                          "classes; circled: samples with a non-zero multiplier.",
                          fg.regions_2d(X, y, lambda Z: Z @ (X.T @ coef_),
                                        sv=low | high))))
    return Walkthrough("McODM", seed, inst, steps)
