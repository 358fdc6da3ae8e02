"""Exercises that check themselves: three or more per family.

Each exercise asks for one Python function (a coordinate step, a map, a corrected formula
from a paper, or a deliberately broken map whose failure the checks must catch). On the
console::

    refmodels derive ODM --exercise 0                 # list ODM's exercises
    refmodels derive ODM --exercise 3                 # statement and a template to fill
    refmodels derive ODM --exercise 3 --answer my.py  # run the numerical check on my.py

The check runs the student's function on random instances (the seed is ``--seed``) against
quantities computed independently (a bounded line search, CVXPY, the problem classes), and
exits 0 only when every check passes (the checks are in :mod:`.exercise_checks`). Solutions
are kept apart (:func:`solution_function`, the documentation's solutions page); every
solution passes its check and a typical mistake (``wrong``) fails it, which the tests
verify.
"""
from __future__ import annotations

import runpy
import textwrap
from dataclasses import dataclass

import numpy as np

from . import exercise_checks as ck


@dataclass
class Exercise:
    family: str
    number: int
    title: str
    statement: str
    function: str
    signature: str
    check: object                  # check(fn, rng) -> list[Check]
    solution_text: str
    solution: str                  # code defining `function`
    wrong: str                     # code defining a typical mistake (must fail)

    def template(self):
        return (f"# {self.family}, exercise {self.number}: {self.title}\n"
                f"import numpy as np\n\n\ndef {self.signature}:\n"
                + textwrap.indent(f'"""{textwrap.fill(self.statement, 72)}"""', "    ")
                + "\n    raise NotImplementedError\n")

    def run(self, fn, seed=0):
        """The checks of ``fn`` (a callable) on the exercise's random instances."""
        return self.check(fn, np.random.default_rng(seed))

    def passes(self, fn, seed=0):
        try:
            return all(c.passed for c in self.run(fn, seed))
        except Exception:                           # noqa: BLE001 - a crash fails
            return False


def _load(code, name):
    ns = {"np": np}                       # the solutions assume `import numpy as np`
    exec(compile(code, f"<{name}>", "exec"), ns)            # noqa: S102 - our own code
    return ns[name]


# ----------------------------------------------------------------------------- the list

_BOX = "x_i, g_i, q_ii, upper"

EXERCISES = [
    # ---- SVM
    Exercise("SVM", 1, "Derive the dual coordinate step",
             "The SVM dual is min ½αᵀQα − eᵀα on the box 0 ≤ α ≤ C. Fix every coordinate "
             "but α_i: the restriction is a 1-D quadratic with slope g_i = (Qα)_i − 1 and "
             "curvature Q_ii at the current α_i. Return the new α_i that minimises it on "
             "[0, C] (x_i is the current α_i, upper is C).",
             "svm_cd_step", f"svm_cd_step({_BOX})",
             lambda fn, rng: ck.box_step_check(fn, rng),
             "The restriction is φ(t) = g_i(t − α_i) + ½Q_ii(t − α_i)², minimised at "
             "t = α_i − g_i/Q_ii; on the box, clip (a convex 1-D function's minimiser on an "
             "interval is the projection of the unconstrained one).",
             "def svm_cd_step(x_i, g_i, q_ii, upper):\n"
             "    return min(max(x_i - g_i / q_ii, 0.0), upper)\n",
             "def svm_cd_step(x_i, g_i, q_ii, upper):\n"
             "    return max(x_i - g_i / q_ii, 0.0)          # forgets the upper bound C\n"),
    Exercise("SVM", 2, "Break stationarity and watch the check fail",
             "Write a WRONG map from the dual to w (for example drop Y, or the sign, or a "
             "factor ½): w_from_alpha(X, y, alpha) returns your w. The exercise passes when "
             "your map differs from the right one and the walk-through's stationarity check "
             "and the KKT certificate both catch it.",
             "w_from_alpha", "w_from_alpha(X, y, alpha)",
             lambda fn, rng: ck.wrong_map_check(fn, rng, ck.svm_wrong_map),
             "The right map is w = XᵀYα. Any other map (Xᵀα without Y, ½XᵀYα, …) gives "
             "a w whose margins violate complementary slackness: the certificate's "
             "stationarity residual ‖w − XᵀYα‖ is no longer zero.",
             "def w_from_alpha(X, y, alpha):\n"
             "    return X.T @ alpha                 # Y forgotten: wrong, and caught\n",
             "def w_from_alpha(X, y, alpha):\n"
             "    return X.T @ (y * alpha)           # the right map: nothing to catch\n"),
    Exercise("SVM", 3, "The dual function",
             "Write the SVM's dual function D(α) = eᵀα − ½αᵀQα (the value L takes at the "
             "stationary w), dual_value(alpha, Q). Its maximum over the box is P*; at any "
             "feasible α it is at most P* (weak duality).",
             "dual_value", "dual_value(alpha, Q)", ck.svm_dual_value_check,
             "Substitute w = FᵀYα and r = C − α into L: the ξ terms cancel and "
             "½‖w‖² − αᵀYFw + eᵀα = −½αᵀQα + eᵀα.",
             "def dual_value(alpha, Q):\n"
             "    return alpha.sum() - 0.5 * alpha @ Q @ alpha\n",
             "def dual_value(alpha, Q):\n"
             "    return alpha.sum() - alpha @ Q @ alpha      # the ½ lost\n"),
    # ---- SVMb
    Exercise("SVMb", 1, "Recover the intercept from the free support vectors",
             "With an intercept the dual gives α but not b. Write intercept(alpha, y, G, C) "
             "returning b from the free support vectors (0 < α_i < C), as LIBSVM does "
             "(average over them).",
             "intercept", "intercept(alpha, y, G, C)", ck.svmb_intercept_check,
             "A free SV has ξ_i = 0 and a tight constraint: y_i(Σ_jα_jy_jG_ij + b) = 1, so "
             "b = y_i − Σ_jα_jy_jG_ij; average over the free SVs against rounding.",
             "def intercept(alpha, y, G, C, tol=1e-6):\n"
             "    free = (alpha > tol) & (alpha < C - tol)\n"
             "    f0 = G @ (y * alpha)\n"
             "    return float(np.mean(y[free] - f0[free]))\n",
             "def intercept(alpha, y, G, C, tol=1e-6):\n"
             "    sv = alpha > tol                   # bound SVs are not on the margin\n"
             "    f0 = G @ (y * alpha)\n"
             "    return float(np.mean(y[sv] - f0[sv]))\n"),
    Exercise("SVMb", 2, "The SMO pair step",
             "Write smo_step(alpha, g, Q, y, C, i, j): move α_i and α_j along "
             "y_iΔα_i = −y_jΔα_j (so yᵀα stays 0) to the minimiser of the dual on that line "
             "within the box, g = Qα − e being the current gradient; return the new α.",
             "smo_step", "smo_step(alpha, g, Q, y, C, i, j)", ck.svmb_pair_check,
             "With α_i += y_it, α_j −= y_jt the objective is φ(0) + t(y_ig_i − y_jg_j) + "
             "½t²(Q_ii + Q_jj − 2y_iy_jQ_ij): t* = −(y_ig_i − y_jg_j)/η, clipped so that both "
             "stay in [0, C].",
             "def smo_step(alpha, g, Q, y, C, i, j):\n"
             "    eta = Q[i, i] + Q[j, j] - 2 * y[i] * y[j] * Q[i, j]\n"
             "    t = -(y[i] * g[i] - y[j] * g[j]) / eta\n"
             "    lo = max(-alpha[i] if y[i] > 0 else alpha[i] - C,\n"
             "             -(C - alpha[j]) if y[j] > 0 else -alpha[j])\n"
             "    hi = min(C - alpha[i] if y[i] > 0 else alpha[i],\n"
             "             alpha[j] if y[j] > 0 else C - alpha[j])\n"
             "    t = min(max(t, lo), hi)\n"
             "    alpha = alpha.copy()\n"
             "    alpha[i] += y[i] * t\n"
             "    alpha[j] -= y[j] * t\n"
             "    return alpha\n",
             "def smo_step(alpha, g, Q, y, C, i, j):\n"
             "    eta = Q[i, i] + Q[j, j] - 2 * y[i] * y[j] * Q[i, j]\n"
             "    t = -(y[i] * g[i] - y[j] * g[j]) / eta          # not clipped to the box\n"
             "    alpha = alpha.copy()\n"
             "    alpha[i] += y[i] * t\n"
             "    alpha[j] -= y[j] * t\n"
             "    return alpha\n"),
    Exercise("SVMb", 3, "The maximal violating pair",
             "Write max_violating_pair(alpha, g, y, C) returning (i, j): i maximises −y_ig_i "
             "over I_up = {α_i < C, y_i = 1} ∪ {α_i > 0, y_i = −1}, j minimises it over "
             "I_low = {α_i < C, y_i = −1} ∪ {α_i > 0, y_i = 1}.",
             "max_violating_pair", "max_violating_pair(alpha, g, y, C)", ck.svmb_wss_check,
             "I_up holds the coordinates that can move so that y_iα_i grows, I_low those "
             "where it can shrink; the KKT conditions say max_{I_up} −y_ig_i ≤ "
             "min_{I_low} −y_ig_i at the optimum, so the pair of extremes violates them "
             "most (LIBSVM's WSS 1).",
             "def max_violating_pair(alpha, g, y, C):\n"
             "    up = ((alpha < C) & (y > 0)) | ((alpha > 0) & (y < 0))\n"
             "    low = ((alpha < C) & (y < 0)) | ((alpha > 0) & (y > 0))\n"
             "    v = -y * g\n"
             "    return (int(np.argmax(np.where(up, v, -np.inf))),\n"
             "            int(np.argmin(np.where(low, v, np.inf))))\n",
             "def max_violating_pair(alpha, g, y, C):\n"
             "    v = -y * g                          # ignores which moves the box allows\n"
             "    return int(np.argmax(v)), int(np.argmin(v))\n"),
    # ---- ODML
    Exercise("ODML", 1, "The margin variance as a quadratic form",
             "With margins γ = YFw, write variance_matrix(F, y) returning the matrix M with "
             "γ_v = (1/m)Σ_i(γ_i − γ_m)² = wᵀMw for every w.",
             "variance_matrix", "variance_matrix(F, y)", ck.odml_variance_check,
             "γ − γ_me = (I − eeᵀ/m)YFw and Y(I − eeᵀ/m)Y = I − yyᵀ/m = P (Y² = I), so "
             "γ_v = (1/m)wᵀFᵀPFw: M = FᵀPF/m.",
             "def variance_matrix(F, y):\n"
             "    m = len(y)\n"
             "    P = np.eye(m) - np.outer(y, y) / m\n"
             "    return F.T @ P @ F / m\n",
             "def variance_matrix(F, y):\n"
             "    m = len(y)\n"
             "    P = np.eye(m) - np.ones((m, m)) / m     # centres F w, not the margins\n"
             "    return F.T @ P @ F / m\n"),
    Exercise("ODML", 2, "The constant the paper drops",
             "Seed 002 expands ½vᵀHv (v = α + (μ₂/m)e) and neglects a constant. Write "
             "dual_constant(H, mu2, m) returning that constant: added to the paper's eq. 10 "
             "optimum, its negative is P*.",
             "dual_constant", "dual_constant(H, mu2, m)", ck.odml_constant_check,
             "½vᵀHv = ½αᵀHα + (μ₂/m)eᵀHα + ½(μ₂/m)²eᵀHe: the last term does not depend on α "
             "(SymPy's substitution on the ODML page shows it).",
             "def dual_constant(H, mu2, m):\n"
             "    return 0.5 * (mu2 / m) ** 2 * H.sum()\n",
             "def dual_constant(H, mu2, m):\n"
             "    return (mu2 / m) * H.sum()              # the cross term, not the constant\n"),
    Exercise("ODML", 3, "Find the erratum: H without inverting A",
             "Seed 000 Lemma 1 inverts A = (2μ₁/m)(I − yyᵀ/m), which is singular. Write "
             "H_matrix(G, y, mu1) returning H = YG(I + AG)⁻¹Y without inverting A; it must "
             "hold for an RBF kernel and for a linear kernel with d < m.",
             "H_matrix", "H_matrix(G, y, mu1)", ck.odml_H_check,
             "Push-through: (I + FᵀAF)⁻¹Fᵀ = Fᵀ(I + AG)⁻¹, so H = YG(I + AG)⁻¹Y; solve the "
             "linear system (I + AG)X = I (or use the symmetric form G − GR(I + RGR)⁻¹RG with "
             "R² = A) instead of inverting A.",
             "def H_matrix(G, y, mu1):\n"
             "    m = len(y)\n"
             "    A = 2 * mu1 / m * (np.eye(m) - np.outer(y, y) / m)\n"
             "    return y[:, None] * (G @ np.linalg.inv(np.eye(m) + A @ G)) * y[None, :]\n",
             "def H_matrix(G, y, mu1):\n"
             "    m = len(y)\n"
             "    A = 2 * mu1 / m * (np.eye(m) - np.outer(y, y) / m)\n"
             "    Ainv = np.linalg.pinv(A)                 # as in Lemma 1: A is singular\n"
             "    inner = np.linalg.inv(Ainv + G)\n"
             "    return y[:, None] * (G - G @ inner @ G) * y[None, :]\n"),
    # ---- LDM
    Exercise("LDM", 1, "LDM is ODML under a change of parameters",
             "Write odml_params(C, lam1, lam2, m) returning (lam, mu1, mu2) such that "
             "ODML(lam, mu1, mu2) has the same solution and optimal value as LDM(C, λ₁, λ₂).",
             "odml_params", "odml_params(C, lam1, lam2, m)", ck.ldm_params_check,
             "Seed 001's variance is pairwise: (1/m²)Σ_{i,j}(γ_i − γ_j)² = 2γ_v, and its loss "
             "C Σξ_i = (λ/m)Σξ_i with λ = mC: so λ = mC, μ₁ = 2λ₁, μ₂ = λ₂.",
             "def odml_params(C, lam1, lam2, m):\n"
             "    return m * C, 2 * lam1, lam2\n",
             "def odml_params(C, lam1, lam2, m):\n"
             "    return m * C, lam1, lam2             # the 2 of the pairwise variance\n"),
    Exercise("LDM", 2, "ASGD's unbiased two-sample gradient",
             "Write two_sample_grad(w, X, y, i, j, C, lam1, lam2), the stochastic gradient "
             "of LDM's linear primal from two samples i, j, such that its average over all "
             "m² pairs (i, j) (drawn independently) is the full gradient.",
             "two_sample_grad", "two_sample_grad(w, X, y, i, j, C, lam1, lam2)",
             ck.ldm_grad_check,
             "The pairwise variance term averages 2λ₁(γ_i − γ_j)(z_i − z_j) over pairs, the "
             "mean term −λ₂(z_i + z_j)/2, the hinge −(mC/2)(𝟙[γ_i<1]z_i + 𝟙[γ_j<1]z_j), with "
             "z_i = y_ix_i.",
             "def two_sample_grad(w, X, y, i, j, C, lam1, lam2):\n"
             "    m = len(y)\n"
             "    z = y[:, None] * X\n"
             "    g = z @ w\n"
             "    hinge = -m * C * ((g[i] < 1) * z[i] + (g[j] < 1) * z[j]) / 2\n"
             "    return (w + 2 * lam1 * (g[i] - g[j]) * (z[i] - z[j])\n"
             "            - lam2 * (z[i] + z[j]) / 2 + hinge)\n",
             "def two_sample_grad(w, X, y, i, j, C, lam1, lam2):\n"
             "    m = len(y)\n"
             "    z = y[:, None] * X\n"
             "    g = z @ w\n"
             "    hinge = -C * ((g[i] < 1) * z[i] + (g[j] < 1) * z[j]) / 2   # the m lost\n"
             "    return (w + 2 * lam1 * (g[i] - g[j]) * (z[i] - z[j])\n"
             "            - lam2 * (z[i] + z[j]) / 2 + hinge)\n"),
    Exercise("LDM", 3, "Break stationarity and watch the check fail",
             "Write a WRONG map from LDM's dual to w, w_from_beta(X, y, beta, lam1, lam2) "
             "(for example forget the margin-mean shift λ₂/m, or the factor (I + A_LG)⁻¹). "
             "It passes when the walk-through's checks catch it.",
             "w_from_beta", "w_from_beta(X, y, beta, lam1, lam2)",
             lambda fn, rng: ck.wrong_map_check(fn, rng, ck.ldm_wrong_map),
             "The right map is w = Xᵀ(I + A_LG)⁻¹Y(β + (λ₂/m)e); dropping either the shift or "
             "the inverse leaves the stationarity residual of the certificate non-zero.",
             "def w_from_beta(X, y, beta, lam1, lam2):\n"
             "    return X.T @ (y * beta)                 # the SVM's map: wrong for LDM\n",
             "def w_from_beta(X, y, beta, lam1, lam2):\n"
             "    m = len(y)\n"
             "    A = 4 * lam1 / m * (np.eye(m) - np.outer(y, y) / m)\n"
             "    G = X @ X.T\n"
             "    return X.T @ np.linalg.solve(np.eye(m) + A @ G, y * (beta + lam2 / m))\n"),
    # ---- ODM
    Exercise("ODM", 1, "Derive the β-coordinate step",
             "In ODM's dual (seed 002 eq. 15) fix everything but β_i. With g_i the partial "
             "derivative of the dual objective in β_i at the current point, the restriction "
             "is a 1-D quadratic with curvature Q_ii + a/μ on β_i ≥ 0. Write "
             "beta_step(beta_i, g_i, q_ii, a, mu) returning the new β_i.",
             "beta_step", "beta_step(beta_i, g_i, q_ii, a, mu)", ck.odm_beta_check,
             "The diagonal of the β block of eq. 15 is Q_ii + a/μ; the minimiser of "
             "g_i(t − β_i) + ½(Q_ii + a/μ)(t − β_i)² on t ≥ 0 is "
             "max(0, β_i − g_i/(Q_ii + a/μ)).",
             "def beta_step(beta_i, g_i, q_ii, a, mu):\n"
             "    return max(0.0, beta_i - g_i / (q_ii + a / mu))\n",
             "def beta_step(beta_i, g_i, q_ii, a, mu):\n"
             "    return max(0.0, beta_i - g_i / (q_ii + a))     # ζ's diagonal, not β's\n"),
    Exercise("ODM", 2, "Break stationarity and watch the check fail",
             "Write a WRONG map from ODM's multipliers to w, w_from_multipliers(X, y, zeta, "
             "beta) (for instance w = XᵀY(ζ + β)). It passes when the stationarity check and "
             "the certificate catch it.",
             "w_from_multipliers", "w_from_multipliers(X, y, zeta, beta)",
             lambda fn, rng: ck.wrong_map_check(fn, rng, ck.odm_wrong_map),
             "The right map is w = XᵀY(ζ − β): the upper-side multiplier pushes the margin "
             "down. With + the points above the band are pulled further up and the "
             "stationarity residual is non-zero.",
             "def w_from_multipliers(X, y, zeta, beta):\n"
             "    return X.T @ (y * (zeta + beta))        # wrong sign on β: caught\n",
             "def w_from_multipliers(X, y, zeta, beta):\n"
             "    return X.T @ (y * (zeta - beta))        # right: nothing to catch\n"),
    Exercise("ODM", 3, "Find the erratum in this printed step",
             "Seed 002 prints, after eq. 14, the dual function −½(ζ − β)ᵀQ(ζ − β) − "
             "(a/(2μ))(μζᵀζ + βᵀβ) + (1 − θ)(ζᵀe − (1 + θ)βᵀe). One factor is misplaced. "
             "Write the correct dual_function(zeta, beta, Q, a, mu, theta): it must equal L "
             "at the stationary point for every (ζ, β) and P* at the optimum.",
             "dual_function", "dual_function(zeta, beta, Q, a, mu, theta)",
             ck.odm_dual_function_check,
             "Substituting eq. 14 gives + (1 − θ)ζᵀe − (1 + θ)βᵀe: the upper side's "
             "constant is 1 + θ, not (1 − θ)(1 + θ) (SymPy's substitution on the ODM page).",
             "def dual_function(zeta, beta, Q, a, mu, theta):\n"
             "    u = zeta - beta\n"
             "    return (-0.5 * u @ Q @ u - a / (2 * mu) * (mu * zeta @ zeta + beta @ beta)\n"
             "            + (1 - theta) * zeta.sum() - (1 + theta) * beta.sum())\n",
             "def dual_function(zeta, beta, Q, a, mu, theta):\n"
             "    u = zeta - beta                         # as printed\n"
             "    return (-0.5 * u @ Q @ u - a / (2 * mu) * (mu * zeta @ zeta + beta @ beta)\n"
             "            + (1 - theta) * (zeta.sum() - (1 + theta) * beta.sum()))\n"),
    # ---- McODM
    Exercise("McODM", 1, "Find the erratum: the linear speed-up's B",
             "With the linear kernel, the block inputs B_l = Σ_{j≠i}κ_ij coef_j^l + 1 − θ "
             "(l ≠ y_i; no 1 − θ for l = y_i) can be computed from W = Xᵀcoef in O(dk). Write "
             "block_B(x_i, W, coef_i, A, y_i, theta).",
             "block_B", "block_B(x_i, W, coef_i, A, y_i, theta)", ck.mcodm_B_check,
             "Σ_{j≠i}κ_ij coef_j = x_iᵀW − κ_ii coef_i; the paper's §4.2 drops the + (1 − θ) "
             "for l ≠ y_i.",
             "def block_B(x_i, W, coef_i, A, y_i, theta):\n"
             "    g = x_i @ W - A * coef_i\n"
             "    B = g + (1 - theta)\n"
             "    B[y_i] = g[y_i]\n"
             "    return B\n",
             "def block_B(x_i, W, coef_i, A, y_i, theta):\n"
             "    return x_i @ W - A * coef_i             # as printed: 1 − θ dropped\n"),
    Exercise("McODM", 2, "Solve the block QP by sorting",
             "Write block_solve(A, B, D, E, F, y) returning (alpha, beta), the minimiser of "
             "seed 002 eq. 24: Σ_{l≠y}[A/2(α^l)² + B_lα^l] + D/2(α^y)² − Aα^yβ + B_yα^y + "
             "E/2β² + Fβ s.t. Σ_lα^l = 0, α^l ≤ 0 (l ≠ y), β ≥ 0.",
             "block_solve", "block_solve(A, B, D, E, F, y)", ck.mcodm_block_check,
             "KKT: α^l = min(0, (ν − B_l)/A); find ν by sorting the B_l and adding them to Φ "
             "while they exceed the running ratio (p₀ + ΣB)/(q₀ + |Φ|); the case β > 0 has "
             "its own (p₀, q₀) (eq. 41), chosen by A(ν − B_y) > DF. See the block step on the "
             "McODM page; refmodels.derive.mcodm_block_sort is a full solution.",
             "def block_solve(A, B, D, E, F, y):\n"
             "    from refmodels.derive import mcodm_block_sort\n"
             "    return mcodm_block_sort(A, B, D, E, F, y)\n",
             "def block_solve(A, B, D, E, F, y):\n"
             "    from refmodels.derive import mcodm_block_alg4_printed\n"
             "    return mcodm_block_alg4_printed(A, B, D, E, F, y)   # Alg. 4 as printed\n"),
    Exercise("McODM", 3, "The outer loop's M",
             "Alg. 3 recomputes M_i = max_{l≠y_i} s_l(x_i) from the scores S (m × k) of the "
             "current W. Write M_from(S, y).",
             "M_from", "M_from(S, y)", ck.mcodm_M_check,
             "Mask the label's column (−∞) and take the row maximum.",
             "def M_from(S, y):\n"
             "    S = np.array(S, float)\n"
             "    S[np.arange(len(y)), y] = -np.inf\n"
             "    return S.max(axis=1)\n",
             "def M_from(S, y):\n"
             "    return np.max(S, axis=1)                # includes the label's own score\n"),
    # ---- SVMm
    Exercise("SVMm", 1, "ε-SVM's scaling",
             "Seed 003 eq. 6 reads min wᵀw + λΣmax(0, γ_i − 1) + CΣmax(0, 1 − γ_i), "
             "γ_i = y_i(wᵀx_i + b). Write epssvm_params(C, lam) returning (C1, C2) such that "
             "SVMm(C1, C2, ε = 0) (½‖w‖²) has the same minimiser and half the optimal value.",
             "epssvm_params", "epssvm_params(C, lam)", ck.svmm_epssvm_check,
             "Divide eq. 6 by 2: ½‖w‖² + (λ/2)Σ… + (C/2)Σ…, so C₁ = C/2, C₂ = λ/2.",
             "def epssvm_params(C, lam):\n"
             "    return C / 2, lam / 2\n",
             "def epssvm_params(C, lam):\n"
             "    return C, lam                           # the ½ of the norm forgotten\n"),
    Exercise("SVMm", 2, "The intercept from the band",
             "Write intercept(v, G, y, alpha, beta, C1, C2, eps) returning SVMm's b from a "
             "dual solution: a free α_i (0 < α_i < C₁) pins y_if(x_i) = 1, a free β_i "
             "(0 < β_i < C₂) pins y_if(x_i) = 1 + ε.",
             "intercept", "intercept(v, G, y, alpha, beta, C1, C2, eps)",
             ck.svmm_intercept_check,
             "With f0 = Gv: a free α_i gives b = y_i − f0_i, a free β_i gives b = "
             "y_i(1 + ε) − f0_i; average over all free multipliers.",
             "def intercept(v, G, y, alpha, beta, C1, C2, eps, tol=1e-6):\n"
             "    f0 = G @ v\n"
             "    fa = (alpha > tol) & (alpha < C1 - tol)\n"
             "    fb = (beta > tol) & (beta < C2 - tol)\n"
             "    vals = np.r_[y[fa] - f0[fa], y[fb] * (1 + eps) - f0[fb]]\n"
             "    return float(np.mean(vals))\n",
             "def intercept(v, G, y, alpha, beta, C1, C2, eps, tol=1e-6):\n"
             "    f0 = G @ v\n"
             "    fb = (beta > tol) & (beta < C2 - tol)\n"
             "    fa = (alpha > tol) & (alpha < C1 - tol)\n"
             "    vals = np.r_[y[fa] - f0[fa], y[fb] - f0[fb]]   # the band's ε forgotten\n"
             "    return float(np.mean(vals))\n"),
    Exercise("SVMm", 3, "Find the erratum: SVM-FDA's transform",
             "Seed 003 claims that min ½wᵀ(I + λS_W)w + CΣξ_i is a plain SVM on "
             "x̃ = (S_W + λI)⁻¹x. Write fda_transform(Sw, lam) returning the matrix T (x̃ = "
             "Tᵀx, T symmetric) for which it is true.",
             "fda_transform", "fda_transform(Sw, lam)", ck.svmm_fda_check,
             "With M = I + λS_W and u = M^{1/2}w: wᵀMw = ‖u‖², wᵀx = uᵀM^{−1/2}x, so "
             "T = (I + λS_W)^{−1/2} (eigendecomposition).",
             "def fda_transform(Sw, lam):\n"
             "    ev, V = np.linalg.eigh(np.eye(len(Sw)) + lam * Sw)\n"
             "    return V @ np.diag(ev ** -0.5) @ V.T\n",
             "def fda_transform(Sw, lam):\n"
             "    return np.linalg.inv(Sw + lam * np.eye(len(Sw)))   # as printed\n"),
    # ---- MKLm
    Exercise("MKLm", 1, "The gradient of J",
             "J(μ) is the SVMm optimum with kernel Σ_kμ_kK_k. Write grad_J(v, grams) "
             "returning ∂J/∂μ_k for every k, given the inner dual optimum v* = Y(α − β).",
             "grad_J", "grad_J(v, grams)", ck.mklm_grad_check,
             "J(μ) = max over the inner dual of Σα − (1 + ε)Σβ − ½Σ_kμ_kvᵀK_kv; the maximand "
             "is linear in μ, so by Danskin ∂J/∂μ_k = −½v*ᵀK_kv*.",
             "def grad_J(v, grams):\n"
             "    return np.array([-0.5 * v @ G @ v for G in grams])\n",
             "def grad_J(v, grams):\n"
             "    return np.array([0.5 * v @ G @ v for G in grams])     # sign\n"),
    Exercise("MKLm", 2, "The reduced gradient",
             "Write direction(mu, grad), SimpleMKL's descent direction on the simplex: "
             "r = argmax μ; D_k = −(g_k − g_r) for k ≠ r, except D_k = 0 when μ_k = 0 and "
             "g_k > g_r; D_r = −Σ_{k≠r}D_k.",
             "direction", "direction(mu, grad)", ck.mklm_direction_check,
             "Subtracting g_r keeps Σ_kD_k = 0 (the simplex); a weight at 0 whose gradient "
             "would push it negative is left alone.",
             "def direction(mu, grad):\n"
             "    r = int(np.argmax(mu))\n"
             "    D = -(grad - grad[r])\n"
             "    D[(mu <= 0) & (grad > grad[r])] = 0.0\n"
             "    D[r] = 0.0\n"
             "    D[r] = -D.sum()\n"
             "    return D\n",
             "def direction(mu, grad):\n"
             "    return -(grad - grad.mean())            # ignores the bound μ ≥ 0\n"),
    Exercise("MKLm", 3, "The largest step",
             "Write max_step(mu, D): the largest s ≥ 0 with μ + sD ≥ 0 (the end of the line "
             "search's interval).",
             "max_step", "max_step(mu, D)", ck.mklm_step_check,
             "Only the decreasing weights limit the step: s_max = min_{D_k < 0} −μ_k/D_k.",
             "def max_step(mu, D):\n"
             "    neg = D < 0\n"
             "    return float(np.min(-mu[neg] / D[neg])) if neg.any() else np.inf\n",
             "def max_step(mu, D):\n"
             "    return float(np.min(np.abs(mu / D)))    # counts the increasing weights too\n"),
    # ---- DRR
    Exercise("DRR", 1, "The group soft-threshold",
             "Write prox_group(v, t, groups): the minimiser of ½‖x − v‖² + tΣ_c‖x_c‖₂ "
             "(groups: a list of index arrays).",
             "prox_group", "prox_group(v, t, groups)", ck.drr_prox_check,
             "The problem separates over the groups; on each, x_c = max(0, 1 − t/‖v_c‖)v_c "
             "(shrink the norm by t, or to zero).",
             "def prox_group(v, t, groups):\n"
             "    x = np.zeros_like(v)\n"
             "    for g in groups:\n"
             "        n = np.linalg.norm(v[g])\n"
             "        x[g] = 0.0 if n == 0 else max(0.0, 1 - t / n) * v[g]\n"
             "    return x\n",
             "def prox_group(v, t, groups):\n"
             "    return np.sign(v) * np.maximum(np.abs(v) - t, 0.0)   # the lasso's prox\n"),
    Exercise("DRR", 2, "The dual group norm",
             "Write dual_group_norm(u, groups), the dual norm of ‖w|C‖_{2,1} = Σ_c‖w_c‖₂, "
             "i.e. max uᵀw over Σ_c‖w_c‖₂ ≤ 1.",
             "dual_group_norm", "dual_group_norm(u, groups)", ck.drr_dualnorm_check,
             "Hölder with (q, r) = (2, 1): the dual is (q*, r*) = (2, ∞), the largest "
             "group's Euclidean norm.",
             "def dual_group_norm(u, groups):\n"
             "    return max(np.linalg.norm(u[g]) for g in groups)\n",
             "def dual_group_norm(u, groups):\n"
             "    return sum(np.linalg.norm(u[g]) for g in groups)     # the norm itself\n"),
    Exercise("DRR", 3, "DRM's closed form",
             "With q = r = 2 and ρ(t) = ½t², DRR is a ridge regression. Write "
             "drm_coefficients(K, H, B, Kx, alpha, beta) returning w*.",
             "drm_coefficients", "drm_coefficients(K, H, B, Kx, alpha, beta)", ck.drr_drm_check,
             "Setting the gradient (K + αH − αB)w − K_x + βw to zero: "
             "w* = (K + αH − αB + βI)⁻¹K_x.",
             "def drm_coefficients(K, H, B, Kx, alpha, beta):\n"
             "    return np.linalg.solve(K + alpha * (H - B) + beta * np.eye(len(Kx)), Kx)\n",
             "def drm_coefficients(K, H, B, Kx, alpha, beta):\n"
             "    return np.linalg.solve(K + alpha * (H + B) + beta * np.eye(len(Kx)), Kx)\n"),
]


def exercises(family=None):
    """The exercises (of one family)."""
    return [e for e in EXERCISES if family is None or e.family == family]


def get(family, number):
    for e in EXERCISES:
        if e.family == family and e.number == number:
            return e
    n = len(exercises(family))
    raise ValueError(f"--exercise must be between 1 and {n} for {family} (0 lists them); "
                     f"got {number}")


def solution_function(ex):
    return _load(ex.solution, ex.function)


def wrong_function(ex):
    return _load(ex.wrong, ex.function)


def run_exercise(family, number, answer=None, seed=0):
    """The console entry: list (``number == 0``), print, or check an answer file."""
    if number == 0:
        for e in exercises(family):
            print(f"{e.number}. {e.title}")
        print(f"(refmodels derive {family} --exercise N prints exercise N)")
        return 0
    ex = get(family, number)
    if answer is None:
        print(f"{family}, exercise {number}: {ex.title}\n")
        print(textwrap.fill(ex.statement, 88) + "\n")
        print("Write this function in a file (template below), then run\n"
              f"  refmodels derive {family} --exercise {number} --answer FILE.py\n")
        print(ex.template())
        return 0
    try:
        ns = runpy.run_path(answer)
    except FileNotFoundError:
        raise ValueError(f"--answer: no such file {answer!r}") from None
    if ex.function not in ns or not callable(ns[ex.function]):
        raise ValueError(f"--answer: {answer!r} defines no function {ex.function}(...)")
    try:
        checks = ex.run(ns[ex.function], seed)
    except Exception as exc:                            # noqa: BLE001 - the student's code
        print(f"FAIL  your {ex.function} raised {type(exc).__name__}: {exc}")
        return 1
    for c in checks:
        print(c.line())
    ok = all(c.passed for c in checks)
    print(f"{family} exercise {number}: " + ("PASSED" if ok else "not yet: a check fails"))
    return 0 if ok else 1
