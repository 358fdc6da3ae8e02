"""Multi-class ODM, mcODM (SPEC §5; seed 002 §4, eqs. 20–24, Alg. 3).

Scores :math:`s_l(x) = w_l^\\top\\phi(x)`, ``l = 0..k-1`` (labels mapped to ``0..k-1`` in
sorted order), multi-class margin :math:`\\gamma(x, y) = s_y(x) - \\max_{l\\ne y} s_l(x)`.
The original problem (seed 002, the unnumbered display before eq. 20: ODM, eq. 12, with
this margin) is non-convex because of the ``max`` in its upper-margin constraint. Alg. 3
replaces that ``max`` by a constant :math:`M_i` taken from the previous iterate and
solves a sequence of convex QPs.

**Relaxed QP** (eq. 20), for a given :math:`M\\in\\mathbb R^m`, :math:`c = \\lambda/(m(1-\\theta)^2)`:

.. math::

    \\min_{W,\\xi,\\epsilon}\\ \\tfrac12\\sum_l\\|w_l\\|^2 + c\\sum_i(\\xi_i^2+\\mu\\epsilon_i^2)
    \\quad\\text{s.t.}\\quad s_{y_i}(x_i)-s_l(x_i)\\ge 1-\\theta-\\xi_i\\ \\ \\forall l\\ne y_i,
    \\qquad s_{y_i}(x_i)-M_i\\le 1+\\theta+\\epsilon_i .

One slack :math:`\\xi_i` per sample is shared by its ``k-1`` lower constraints;
:math:`\\xi, \\epsilon` carry no sign constraint (at the optimum they are the smallest
feasible ones, :math:`\\xi_i=\\max(0, 1-\\theta-\\gamma_i)`,
:math:`\\epsilon_i=\\max(0, s_{y_i}(x_i)-M_i-1-\\theta)`).

**Dual** (eq. 23, with SPEC's erratum: :math:`M_i` inside the sum):

.. math::

    \\min_{\\alpha,\\beta}\\ \\tfrac12\\sum_l\\|w_l\\|^2
    + \\frac{m(1-\\theta)^2}{4\\lambda\\mu}\\Big(\\mu\\sum_i(\\alpha_i^{y_i})^2+\\sum_i\\beta_i^2\\Big)
    + (1-\\theta)\\sum_i\\sum_{l\\ne y_i}\\alpha_i^l + \\sum_i(M_i+1+\\theta)\\beta_i

s.t. :math:`\\sum_l\\alpha_i^l = 0`, :math:`\\alpha_i^l\\le0\\ (l\\ne y_i)`, :math:`\\beta_i\\ge0`,
with (eq. 22) :math:`w_l=\\sum_i(\\alpha_i^l-\\delta_{y_il}\\beta_i)\\phi(x_i)`, i.e.
``coef[i, l] = alpha[i, l] - [y_i == l] beta[i]``, and (eq. 21)
:math:`\\xi_i = \\alpha_i^{y_i}/(2c)`, :math:`\\epsilon_i=\\beta_i/(2c\\mu)`.
The multipliers of eq. 20 are :math:`\\zeta_i^l = -\\alpha_i^l\\ge0` (``l != y_i``) for the
lower constraints and :math:`\\beta_i\\ge0` for the upper one, and
:math:`\\alpha_i^{y_i}=\\sum_{l\\ne y_i}\\zeta_i^l`. Derivation (checked numerically in
``tests/test_mcodm.py``): the Lagrangian's terms linear in ``W`` sum to
:math:`-\\sum_l\\|w_l\\|^2` at stationarity, the slack terms to
:math:`-\\sum_i(\\alpha_i^{y_i})^2/(4c)-\\sum_i\\beta_i^2/(4c\\mu)`, and the constants to
:math:`-(1-\\theta)\\sum_i\\sum_{l\\ne y_i}\\alpha_i^l-\\sum_i(M_i+1+\\theta)\\beta_i`; so the dual
function is minus eq. 23's objective and :math:`P^\\star(M) = -D^\\star_{\\min}(M)`. The
seed prints :math:`(M_i+1+\\theta)\\sum_i\\beta_i`; that is only right when ``M`` is constant.

A class with a single training sample is allowed: no formula here needs two samples per
class (only ``k >= 2`` classes).
"""
from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

from ._mcodm_common import _check_M, _check_matrix, _MultiClassData, _run_tight, _solve_psd
from ._validation import check_vector, positive, positive_int
from .base import given_slacks, objective_scale, quad, TIE_THRESHOLDS, warn_convergence
from .certify import DEFAULT_TOL, complementarity
from .solution import Solution, SolverError


class RelaxedMcODM(_MultiClassData):
    """The convex relaxed QP of mcODM for a fixed ``M`` (SPEC §5; seed 002 eqs. 20–23).

    Usually built by :meth:`McODM.relaxed`; may be constructed directly.

    Parameters
    ----------
    X : array (m, d)
        The training points (or the m x m Gram with ``kernel=Precomputed()``).
    y : array (m,)
        Labels, k >= 2 classes (mapped to ``0..k-1`` in sorted order).
    M : array (m,), finite
        The constants ``M_i`` of the upper-margin constraint.
    lam, mu : float > 0
    theta : float in [0, 1)
    kernel : Kernel or name, default linear

    Notes
    -----
    ``solve(form="primal")`` solves eq. 20 over ``W`` in feature space (``F``) and reads
    the multipliers from the constraints; ``solve(form="dual")`` solves eq. 23 (``M_i``
    inside the sum) and maps it by eqs. 21–22. Either way ``Solution.variables`` holds
    ``W`` (r x k), ``xi``, ``eps`` (the smallest feasible slacks at ``W``), ``alpha``
    (m x k) and ``beta`` (m); ``coef`` is m x k with ``s_l(x) = sum_i coef[i,l] k(x_i, x)``;
    ``objective`` is eq. 20's objective at that point (smallest feasible slacks).

    Accuracy: Clarabel is run with tolerances 1e-12 (:data:`refmodels.base.CLARABEL_TIGHT`, falling back
    to 1e-10, then to its defaults) and the solver's point is then polished on its active
    set (:meth:`_polish`, kept only when it lowers the KKT residuals; ``info["polished"]``).
    With Clarabel's default 1e-8 a multiplier of a weakly active constraint can be off by
    ~1e-5, and ``W`` with it, which a certificate from ``W`` alone (multipliers by eq. 21,
    amplified by ``2c``) rejects.
    """

    dual_names = ("alpha", "beta")

    def __init__(self, X, y, M, lam, mu, theta, kernel=None):
        super().__init__(X, kernel)
        self._init_params(y, lam, mu, theta)
        self.M = _check_M(M, self.m)
        self._parent = None

    @classmethod
    def _from_parent(cls, parent, M):
        """Share the parent's validated data and its Gram / feature map (no recomputation)."""
        self = cls.__new__(cls)
        for a in ("kernel", "X", "m", "y", "classes_", "k", "lam", "mu", "theta", "c",
                  "onehot", "_I", "_L"):
            setattr(self, a, getattr(parent, a))
        self._parent = parent
        self.M = _check_M(M, self.m)
        return self

    # ---- the formulation, as in SPEC §5 ---------------------------------------------------
    def _solve_primal(self, solver, verbose, opts):
        """Eq. 20 over ``W`` (r x k) in feature space; ``zeta``, ``beta`` from the constraints."""
        import cvxpy as cp

        F, m, th = self.F, self.m, self.theta
        I, L = self._I, self._L
        W = cp.Variable((self.r, self.k))
        xi, eps = cp.Variable(m), cp.Variable(m)
        S = F @ W
        sy = cp.sum(cp.multiply(S, self.onehot), axis=1)
        constraints = [sy[I] - S[I, L] >= 1.0 - th - xi[I],
                       sy - self.M <= 1.0 + th + eps]
        obj = 0.5 * cp.sum_squares(W) + self.c * (cp.sum_squares(xi) + self.mu * cp.sum_squares(eps))
        problem = cp.Problem(cp.Minimize(obj), constraints)
        t = _run_tight(problem, solver, verbose, opts)
        zeta = np.asarray(constraints[0].dual_value, float).ravel()
        beta = np.asarray(constraints[1].dual_value, float).ravel()
        alpha = self._alpha_from_zeta(zeta)
        return self._solution(np.asarray(W.value, float), alpha, beta,
                              coef=self.coef_from_dual({"alpha": alpha, "beta": beta}),
                              solver=solver, form="primal", elapsed=t)

    def _solve_dual(self, solver, verbose, opts):
        """Eq. 23 (``M_i`` inside the sum) over ``alpha`` (m x k), ``beta`` (m); eq. 22 maps it."""
        import cvxpy as cp

        m, k, th = self.m, self.k, self.theta
        alpha, beta = cp.Variable((m, k)), cp.Variable(m)
        coef = alpha - cp.multiply(self.onehot, cp.reshape(beta, (m, 1), order="F") @ np.ones((1, k)))
        a_y = cp.sum(cp.multiply(alpha, self.onehot), axis=1)
        off = 1.0 - self.onehot
        obj = (self._half_sum_w2(coef)
               + m * (1 - th) ** 2 / (4 * self.lam * self.mu)
               * (self.mu * cp.sum_squares(a_y) + cp.sum_squares(beta))
               + (1 - th) * cp.sum(cp.multiply(alpha, off))
               + cp.sum(cp.multiply(self.M + 1 + th, beta)))
        constraints = [cp.sum(alpha, axis=1) == 0, alpha[self._I, self._L] <= 0, beta >= 0]
        problem = cp.Problem(cp.Minimize(obj), constraints)
        t = _run_tight(problem, solver, verbose, opts)
        a, b = np.asarray(alpha.value, float), np.asarray(beta.value, float)
        coef_v = self.coef_from_dual({"alpha": a, "beta": b})
        return self._solution(self.W_from_coef(coef_v), a, b, coef=coef_v,
                              solver=solver, form="dual", elapsed=t)

    def _half_sum_w2(self, coef):
        """Eq. 23's ``1/2 sum_l ||w_l||^2`` with ``w_l = F^T coef_l`` (eq. 22), in CVXPY.

        Two statements of the same term; the one Clarabel factors faster is taken: through
        ``F`` (``1/2 ||F^T coef||^2``: CVXPY adds ``r k`` variables and rows) when the feature
        map is narrow (``r <= m/2``, e.g. a linear kernel), in kernel form
        (``1/2 sum_l coef_l^T (F F^T) coef_l``: ``k`` dense m x m blocks) when it is wide.
        Each form was the faster on ``refmodels verify``'s rows on its side of ``m/2``
        (validation/decisions.md)."""
        import cvxpy as cp

        F = self.F
        if sp.issparse(F) or 2 * F.shape[1] <= self.m:
            return 0.5 * cp.sum_squares(F.T @ coef)
        FFt = np.asarray(F @ F.T)
        return 0.5 * sum(quad(coef[:, l], FFt) for l in range(self.k))

    def _alpha_from_zeta(self, zeta):
        """``alpha_i^l = -zeta_i^l`` (l != y_i), ``alpha_i^{y_i} = sum_l zeta_i^l`` (below eq. 21)."""
        alpha = np.zeros((self.m, self.k))
        alpha[self._I, self._L] = -zeta
        alpha[np.arange(self.m), self.y] = np.bincount(self._I, weights=zeta, minlength=self.m)
        return alpha

    def _solution(self, W, alpha, beta, coef, solver, form, elapsed):
        W, alpha, beta, coef, polished = self._polish(W, np.asarray(alpha, float),
                                                      np.asarray(beta, float), coef)
        xi, eps = self.min_slacks(W)
        return Solution(objective=self.primal_value(W), coef=np.asarray(coef, float),
                        intercept=0.0,
                        variables={"W": W, "xi": xi, "eps": eps, "alpha": alpha, "beta": beta},
                        status="optimal", solver=solver, form=form, time=elapsed,
                        info={"M": self.M.copy(), "polished": polished})

    def _worst(self, W, dual):
        r = self.kkt_residuals((W,), dual)
        r["duality gap"] = (self.primal_value(W) - self.dual_value(dual),
                            objective_scale(self, self.primal_value(W)))
        return max(abs(a) / s if s > 0 else abs(a) for a, s in r.values())

    def _polish(self, W, alpha, beta, coef, max_rounds=6):
        """Active-set polish of a solver's point (as OSQP's ``polish``): with the constraints
        guessed active (small slack or positive multiplier) as equalities, eq. 20 is an
        equality-constrained QP whose multipliers solve ``K lam = b`` with
        ``K = A H^{-1} A^T`` (``H = diag(I, 2c I, 2c mu I)``; in kernel form
        ``K_jj' = G_{i_j i_j'} (c_j . c_j') + [same xi_i] / 2c + [same eps_i] / (2 c mu)``,
        ``c_j`` the coef-space pattern of constraint j); then ``coef = sum_j lam_j c_j``
        (eq. 22). Constraints with negative multipliers are dropped, violated ones added.
        The polished point is kept only if its KKT residuals (own dual, duality gap) are
        smaller than the solver's. Returns ``(W, alpha, beta, coef, polished)``."""
        m, k, I, L = self.m, self.k, self._I, self._L
        rows = np.arange(m)
        G = self.gram
        base = self._worst(W, {"alpha": alpha, "beta": beta})

        def slacks(W_):
            S = self.scores(W_)
            sy = S[rows, self.y]
            xi, eps = self.min_slacks(W_)
            return (sy[I] - S[I, L] - (1.0 - self.theta) + xi[I],
                    1.0 + self.theta + eps - sy + self.M, 1.0 + float(np.max(np.abs(S))))

        sl, su, sc = slacks(W)
        zeta = -alpha[I, L]
        zs = 1e-9 * (1.0 + max(float(np.max(np.abs(zeta))), float(np.max(np.abs(beta)))))
        act_l = (sl <= 1e-7 * sc) | (zeta > zs)
        act_u = (su <= 1e-7 * sc) | (beta > zs)
        best = None
        for _ in range(max_rounds):
            jl, ju = np.flatnonzero(act_l), np.flatnonzero(act_u)
            n = jl.size + ju.size
            if n == 0:
                break
            samp = np.concatenate([I[jl], ju])
            C = np.zeros((n, k))
            C[np.arange(jl.size), self.y[I[jl]]] = 1.0
            C[np.arange(jl.size), L[jl]] = -1.0
            C[jl.size + np.arange(ju.size), self.y[ju]] = -1.0
            is_l = np.r_[np.ones(jl.size, bool), np.zeros(ju.size, bool)]
            same = samp[:, None] == samp[None, :]
            K = (G[np.ix_(samp, samp)] * (C @ C.T)
                 + same * (is_l[:, None] & is_l[None, :]) / (2 * self.c)
                 + same * (~is_l[:, None] & ~is_l[None, :]) / (2 * self.c * self.mu))
            b = np.r_[np.full(jl.size, 1.0 - self.theta), -(self.M[ju] + 1.0 + self.theta)]
            lam_ = _solve_psd(K, b)
            coef_p = np.zeros((m, k))
            np.add.at(coef_p, samp, lam_[:, None] * C)
            zeta_p = np.zeros(I.size)
            zeta_p[jl] = lam_[:jl.size]
            beta_p = np.zeros(m)
            beta_p[ju] = lam_[jl.size:]
            alpha_p = self._alpha_from_zeta(zeta_p)
            W_p = self.W_from_coef(coef_p)
            neg_l, neg_u = zeta_p < 0, beta_p < 0
            sl_p, su_p, sc_p = slacks(W_p)
            viol_l, viol_u = sl_p < -1e-12 * sc_p, su_p < -1e-12 * sc_p
            if not (neg_l.any() or neg_u.any() or viol_l.any() or viol_u.any()):
                best = (W_p, alpha_p, beta_p, coef_p)
                break
            act_l = (act_l & ~neg_l) | viol_l
            act_u = (act_u & ~neg_u) | viol_u
        if best is None:
            return W, alpha, beta, coef, False
        W_p, alpha_p, beta_p, coef_p = best
        if self._worst(W_p, {"alpha": alpha_p, "beta": beta_p}) < base:
            return W_p, alpha_p, beta_p, coef_p, True
        return W, alpha, beta, coef, False

    # ---- values and maps ------------------------------------------------------------------
    def min_slacks(self, W):
        """Smallest feasible ``(xi, eps)`` of eq. 20 at ``W``."""
        return self.slacks_from_scores(self.scores(W), self.M)

    def primal_value(self, W):
        """Eq. 20's objective at ``W`` with the smallest feasible slacks."""
        W = np.asarray(W, float)
        return self.objective_from_slacks(float(np.sum(W * W)), *self.min_slacks(W))

    def coef_from_dual(self, dual):
        """Eq. 22: ``coef[i, l] = alpha_i^l - delta_{y_i l} beta_i``."""
        a = np.asarray(dual["alpha"], float)
        b = np.asarray(dual["beta"], float)
        return a - self.onehot * b[:, None]

    def dual_value(self, dual):
        """``D_max = -(eq. 23's objective)`` at ``(alpha, beta)`` (``M_i`` inside the sum)."""
        a = np.asarray(dual["alpha"], float)
        b = np.asarray(dual["beta"], float)
        Wd = self.W_from_coef(self.coef_from_dual(dual))
        a_y = a[np.arange(self.m), self.y]
        val = (0.5 * float(np.sum(Wd * Wd))
               + float(np.sum(a_y ** 2)) / (4 * self.c)
               + float(np.sum(b ** 2)) / (4 * self.c * self.mu)
               + (1 - self.theta) * float(np.sum(a * (1.0 - self.onehot)))
               + float(np.sum((self.M + 1 + self.theta) * b)))
        return -val

    # ---- user points --------------------------------------------------------------------------
    def solution_from(self, coef=None, W=None, dual=None, xi=None, eps=None):
        """A :class:`Solution` from a user's own arrays, ready for :meth:`certify`.

        Give ``coef`` (m x k, over training points), or ``W`` (d x k; linear kernel only),
        and/or ``dual={"alpha": (m x k), "beta": (m,)}``. With only a dual, the point is
        eq. 22's ``W``. Explicit slacks ``xi``, ``eps`` may be given; otherwise the smallest
        feasible ones are used.
        """
        variables = {}
        if W is not None:
            if not self.kernel.is_linear:
                raise ValueError("W (linear weights) can only be given for the linear kernel; "
                                 "give coef (coefficients over training points) instead")
            variables["W"] = _check_matrix(W, (self.X.shape[1], self.k), "W")
        if coef is not None:
            coef = _check_matrix(coef, (self.m, self.k), "coef")
        if dual is not None:
            if not isinstance(dual, dict):
                raise ValueError("dual must be a dict {'alpha': (m x k), 'beta': (m,)}")
            unknown = set(dual) - set(self.dual_names)
            if unknown:
                raise ValueError(f"dual has unknown names {sorted(unknown)}; expected ['alpha', 'beta']")
            missing = set(self.dual_names) - set(dual)
            if missing:
                raise ValueError(f"dual is missing {sorted(missing)} (needs ['alpha', 'beta'])")
            variables["alpha"] = _check_matrix(dual["alpha"], (self.m, self.k), "dual['alpha']")
            variables["beta"] = check_vector(dual["beta"], self.m, "dual['beta']")
        for name, v in (("xi", xi), ("eps", eps)):
            if v is not None:
                variables[name] = check_vector(v, self.m, name)
        if W is None and coef is None:
            if dual is None:
                raise ValueError("give at least one of coef, W or dual")
            coef = self.coef_from_dual(variables)
        sol = Solution(objective=np.nan, coef=coef, intercept=0.0, variables=variables,
                       status="user", solver="user", form="user", info={"M": self.M.copy()})
        sol.objective = self.primal_value(self._W_of(sol))
        return sol

    # ---- KKT ------------------------------------------------------------------------------------
    def _slacks_of(self, W, sol):
        return given_slacks(sol, self.m, self.min_slacks(W))

    def kkt_residuals(self, point, dual, sol=None):
        """KKT residuals of eq. 20 / eq. 23 at ``(W, xi, eps)`` and ``(alpha, beta)``.

        The multipliers of eq. 20 are ``zeta_i^l = -alpha_i^l`` (lower constraints) and
        ``beta_i`` (upper). Conditions: primal feasibility of both constraint families;
        dual feasibility ``alpha_i^l <= 0`` (l != y_i), ``beta >= 0``, ``sum_l alpha_i^l = 0``;
        complementarity ``zeta_i^l * (s_{y_i} - s_l - 1 + theta + xi_i) = 0`` and
        ``beta_i * (1 + theta + eps_i - s_{y_i} + M_i) = 0``; stationarity in ``W``
        (``W = F^T coef(alpha, beta)``, eq. 22) and in the slacks
        (``2 c xi_i = alpha_i^{y_i}``, ``2 c mu eps_i = beta_i``, eq. 21).
        """
        (W,) = point
        a = np.asarray(dual["alpha"], float)
        b = np.asarray(dual["beta"], float)
        I, L, rows = self._I, self._L, np.arange(self.m)
        xi, eps = self._slacks_of(W, sol)
        S = self.scores(W)
        sy = S[rows, self.y]
        lower = sy[I] - S[I, L] - (1.0 - self.theta) + xi[I]        # >= 0
        upper = (1.0 + self.theta) + eps - sy + self.M               # >= 0
        pf = max(float(np.max(np.maximum(-lower, 0.0))), float(np.max(np.maximum(-upper, 0.0))))
        pscale = 1.0 + max(float(np.max(np.abs(sy[I] - S[I, L]))), float(np.max(np.abs(sy - self.M))))
        zeta = -a[I, L]
        df = max(float(np.max(np.maximum(-zeta, 0.0))), float(np.max(np.maximum(-b, 0.0))),
                 float(np.max(np.abs(np.sum(a, axis=1)))))
        dscale = 1.0 + max(float(np.max(np.abs(a))), float(np.max(np.abs(b))))
        P = self.primal_value(W)
        comp = max(complementarity(zeta, lower), complementarity(b, upper))
        Wd = self.W_from_coef(self.coef_from_dual(dual))
        a_y = a[rows, self.y]
        g_slack = np.concatenate([2 * self.c * xi - a_y, 2 * self.c * self.mu * eps - b])
        return {
            "primal feasibility": (pf, pscale),
            "dual feasibility": (df, dscale),
            "complementarity": (comp, objective_scale(self, P, sol)),
            "stationarity": (float(np.linalg.norm(W - Wd)),
                             1.0 + np.linalg.norm(W) + np.linalg.norm(Wd)),
            "stationarity (slacks)": (float(np.linalg.norm(g_slack)),
                                      1.0 + np.linalg.norm(np.concatenate([a_y, b]))
                                      + 2 * self.c * np.linalg.norm(np.concatenate([xi, self.mu * eps]))),
        }

    def dual_candidates(self, point, sol=None):
        """Dual points consistent with ``W`` (and its slacks): the slacks fix
        ``alpha_i^{y_i} = 2 c xi_i`` and ``beta_i = 2 c mu eps_i`` (eq. 21); the split of
        ``alpha_i^{y_i} = sum_{l != y_i} zeta_i^l`` goes to the lower constraints that are
        active (up to a tie threshold ``t``), which is unique when one class attains
        ``max_{l != y_i} s_l(x_i)``; among tied classes it is chosen on the simplex by least
        squares on the stationarity residual in ``W`` (a small CVXPY QP)."""
        (W,) = point
        xi, eps = self._slacks_of(W, sol)
        a_y = 2 * self.c * np.maximum(xi, 0.0)
        beta = 2 * self.c * self.mu * np.maximum(eps, 0.0)
        S = self.scores(W)
        rows = np.arange(self.m)
        sy = S[rows, self.y]
        # slack of each lower constraint (+inf on the y_i column)
        slack = np.where(self.onehot > 0, np.inf, sy[:, None] - S - (1.0 - self.theta) + xi[:, None])
        seen = set()
        for t in TIE_THRESHOLDS:
            tied = slack <= np.min(slack, axis=1, keepdims=True)      # the argmin is always in
            tied |= np.abs(slack) <= t
            tied &= self.onehot == 0
            key = tied.tobytes()
            if key in seen:
                continue
            seen.add(key)
            yield self._split_alpha(W, a_y, beta, tied)

    def _split_alpha(self, W, a_y, beta, tied):
        m, k, rows = self.m, self.k, np.arange(self.m)
        alpha = np.zeros((m, k))
        alpha[rows, self.y] = a_y
        # among the tied columns (the active constraints), the argmin-slack one only when unique
        n_tied = tied.sum(axis=1)
        single = (n_tied == 1) & (a_y > 0)
        cols = np.argmax(tied, axis=1)
        alpha[rows[single], cols[single]] = -a_y[single]
        multi = np.flatnonzero((n_tied > 1) & (a_y > 0))
        if multi.size:
            import cvxpy as cp

            pairs = [(i, l) for i in multi for l in np.flatnonzero(tied[i])]
            R = W - self.W_from_coef(alpha - self.onehot * beta[:, None])    # r x k
            F = self.F
            Fd = F.toarray() if sp.issparse(F) else np.asarray(F)
            # column (i, l): the change of W when zeta_i^l grows by one (coef[i, l] -= 1)
            A = np.zeros((Fd.shape[1] * k, len(pairs)))
            for j, (i, l) in enumerate(pairs):
                block = np.zeros((Fd.shape[1], k))
                block[:, l] = -Fd[i]
                A[:, j] = block.ravel()
            # unknowns scaled by s (the norm objective, not its square, keeps the solver's
            # absolute tolerance meaningful when the multipliers are tiny)
            s = float(np.max(a_y[multi]))
            z = cp.Variable(len(pairs))
            owner = np.array([i for i, _ in pairs])
            cons = [z >= 0]
            for i in multi:
                cons.append(cp.sum(z[np.flatnonzero(owner == i)]) == a_y[i] / s)
            prob = cp.Problem(cp.Minimize(cp.norm(A @ z - R.ravel() / s, 2)), cons)
            try:
                _run_tight(prob, "CLARABEL", False, {})
                zv = s * np.maximum(np.asarray(z.value, float), 0.0)
            except SolverError:          # fall back to an equal split
                zv = np.array([a_y[i] / tied[i].sum() for i, _ in pairs])
            for j, (i, l) in enumerate(pairs):
                alpha[i, l] = -zv[j]
            # restore sum_l alpha_i^l = 0 exactly on the tied rows
            for i in multi:
                off = np.flatnonzero(tied[i])
                s = -alpha[i, off].sum()
                if s > 0:
                    alpha[i, off] *= a_y[i] / s
        return {"alpha": alpha, "beta": beta}

    # ---- the certificate: base.Problem.certify with the point (W,) ----------------------
    derived_dual_note = "derived from W by eq. 21 (ties split by least squares)"

    def primal_point(self, sol):
        """``(W,)``: the solution's ``W`` or ``F^T coef``. The certificate
        (:meth:`refmodels.base.Problem.certify`) is SPEC's for the relaxed QP at this ``M``
        plus the residual ``stationarity (slacks)`` of eq. 21; the primal point carries the
        solution's slacks ``xi``, ``eps`` if given (else the smallest feasible ones); the dual
        point is the solution's ``alpha``, ``beta`` when it carries both, else derived from
        ``W`` (:meth:`dual_candidates`), the best of the tie thresholds."""
        return (self._W_of(sol),)

    def _check_solution(self, sol):
        super()._check_solution(sol)
        a, b = sol.variables.get("alpha"), sol.variables.get("beta")
        if a is not None and b is not None and (np.shape(a) != (self.m, self.k)
                                                or np.shape(b) != (self.m,)):
            raise ValueError(f"sol.variables alpha, beta must have shapes ({self.m}, {self.k}) "
                             f"and ({self.m},); got {np.shape(a)} and {np.shape(b)}")


class McODM(_MultiClassData):
    """Multi-class optimal margin distribution machine (SPEC §5; seed 002 §4, Alg. 3).

    Parameters
    ----------
    X : array (m, d)
        The training points (or the m x m Gram with ``kernel=Precomputed()``).
    y : array (m,)
        Labels, k >= 2 classes, mapped to ``0..k-1`` in sorted order (``classes_``); a
        class may have a single sample.
    lam, mu : float > 0
    theta : float in [0, 1)
    kernel : Kernel or name, default linear

    Notes
    -----
    The original problem is non-convex; :meth:`solve` runs Alg. 3's outer loop with
    reference (CVXPY) solves of the relaxed QP :class:`RelaxedMcODM` (eq. 20 / 23), and
    :meth:`relaxed` gives that QP for any ``M``.
    """

    def __init__(self, X, y, lam, mu, theta, kernel=None):
        super().__init__(X, kernel)
        self._init_params(y, lam, mu, theta)

    def primal_value(self, W):
        """The original (non-convex) mcODM objective at ``W``: :meth:`mcodm_value`."""
        return self.mcodm_value(W)

    def dual_value(self, dual):
        """The original mcODM is non-convex: no dual is used. The relaxed QP at ``M`` has
        one (``self.relaxed(M).dual_value``), and :meth:`certify` certifies through it."""
        raise NotImplementedError("McODM is non-convex; use self.relaxed(M).dual_value(dual)")

    def relaxed(self, M):
        """The convex relaxed QP (eq. 20) at ``M`` (length m, finite), sharing this problem's
        data, Gram matrix and feature map."""
        return RelaxedMcODM._from_parent(self, M)

    def solve(self, max_outer=50, tol=1e-6, form="dual", solver="CLARABEL", verbose=False,
              **solver_options):
        """Alg. 3 with reference inner solves.

        Start from ``W = 0``; each round sets ``M_i = max_{l != y_i} s_l(x_i)`` from the
        current iterate (step 5) and solves the relaxed QP at that ``M`` by CVXPY
        (``form="primal"``: eq. 20, ``form="dual"``: eq. 23). Stop when
        ``||W_new - W||_F / max(1, ||W_new||_F) < tol`` (``status="optimal"``) or after
        ``max_outer`` rounds (``status="max_iter"`` and a ``ConvergenceWarning`` with the
        change reached and ``tol``).

        Returns the last relaxed QP's solution (``W``, ``xi``, ``eps``, ``alpha``, ``beta``,
        ``coef`` m x k) with ``n_iter`` = rounds (relaxed QPs solved) and ``info``:
        ``"M"`` (the ``M`` of the last QP, i.e. from the previous iterate), ``"change"``
        (last relative change of ``W``), ``"changes"`` (one per round),
        ``"mcodm_objective"`` (the original non-convex objective at ``W``, see
        :meth:`mcodm_value`), ``"fixed_point_residual"`` (``max_i |M_from(W)_i - M_i|``).

        What is reported and what is certified: ``objective`` is the canonical objective
        of the **last relaxed QP** (eq. 20 at ``info["M"]``, smallest feasible slacks),
        not the non-convex objective (they agree at a fixed point, ``M = M_from(W)``).
        The original problem is non-convex: nothing certifies a global optimum.
        :meth:`certify` certifies that ``W`` is a KKT point of the relaxed QP at
        ``info["M"]`` and reports the fixed-point residual of Alg. 3 (how much ``M``
        changes when recomputed from the returned ``W``): both small means ``W`` is a
        fixed point of Alg. 3, i.e. a KKT point of the relaxed QP at its own ``M``.
        """
        max_outer = positive_int(max_outer, "max_outer")
        tol = positive(tol, "tol")
        if form not in ("primal", "dual"):
            raise ValueError(f"form must be 'primal' or 'dual'; got {form!r}")
        if not isinstance(solver, str):
            raise ValueError(f"solver must be the name of a CVXPY solver; got {solver!r}")
        t0 = time.perf_counter()
        W = np.zeros((self.r, self.k))
        changes, sol, M = [], None, None
        for _ in range(max_outer):
            M = self.M_from(W)
            sol = self.relaxed(M).solve(form=form, solver=solver, verbose=verbose,
                                        **solver_options)
            W_new = sol.variables["W"]
            change = float(np.linalg.norm(W_new - W) / max(1.0, np.linalg.norm(W_new)))
            changes.append(change)
            W = W_new
            if change < tol:
                break
        converged = changes[-1] < tol
        sol.status = "optimal" if converged else "max_iter"
        sol.n_iter = len(changes)
        sol.time = time.perf_counter() - t0
        sol.info = {"M": M, "change": changes[-1], "changes": changes, "tol": tol,
                    "mcodm_objective": self.mcodm_value(W),
                    "fixed_point_residual": float(np.max(np.abs(self.M_from(W) - M)))}
        if not converged:
            warn_convergence(f"McODM outer loop (Alg. 3) stopped after max_outer={max_outer} "
                             f"rounds with relative change of W {changes[-1]:.3g} >= tol={tol:g}")
        return sol

    def solution_from(self, coef=None, W=None, dual=None, M=None, xi=None, eps=None):
        """A user's point for :meth:`certify`: as :meth:`RelaxedMcODM.solution_from`, plus
        the ``M`` of the relaxed QP it solves (default: ``M_from(W)``, a fixed point)."""
        if M is None:
            if coef is not None:
                coef_c = _check_matrix(coef, (self.m, self.k), "coef")
                M = self.M_from(self.W_from_coef(coef_c))
            elif W is not None:
                if not self.kernel.is_linear:
                    raise ValueError("W (linear weights) can only be given for the linear kernel; "
                                     "give coef (coefficients over training points) instead")
                M = self.M_from(_check_matrix(W, (self.X.shape[1], self.k), "W"))
            elif dual is not None:
                tmp = self.relaxed(np.zeros(self.m)).solution_from(dual=dual)
                M = self.M_from(self._W_of(tmp))
            else:
                raise ValueError("give at least one of coef, W or dual")
        return self.relaxed(M).solution_from(coef=coef, W=W, dual=dual, xi=xi, eps=eps)

    def certify(self, sol, tol=DEFAULT_TOL, reference="auto", M=None, *, workspace=None,
                mode="full"):
        """Certificate of an Alg. 3 solution (the original problem is non-convex).

        Certifies the relaxed QP (eq. 20) at ``M`` (default ``sol.info["M"]``, the ``M``
        of the last round; if absent, ``M_from(W)``) exactly as
        :meth:`RelaxedMcODM.certify` does (KKT residuals, duality gap, objective gap to
        the reference optimum of that relaxed QP), and adds ``fixed-point residual``:
        ``max_i |M_from(W)_i - M_i|`` scaled by ``1 + max_{i,l} |s_l(x_i)|`` (the scores
        ``M`` is made of: a scale that does not grow with the features' scale, as
        ``||W|| max_i ||phi(x_i)||`` did, which let an ``M`` 17 off scores of at most 34 pass
        on Gram entries of 1e15). A certificate
        that holds says ``W`` is (to ``tol``) a fixed point of Alg. 3: a KKT point of the
        relaxed QP at its own ``M``. It says nothing about global optimality. ``workspace``,
        ``mode``: as in :meth:`refmodels.base.Problem.certify`.
        """
        if mode not in ("full", "cheap"):
            raise ValueError(f"mode must be 'full' or 'cheap'; got {mode!r}")
        if mode == "cheap":
            from .cheap import certify_cheap
            from .workspace import using

            with using(workspace, owner=self):
                return certify_cheap(self, sol, tol)
        W = self._W_of(sol)
        if M is None:
            M = sol.info.get("M") if isinstance(sol.info, dict) else None
        if M is None:
            M = self.M_from(W)
            note = "M not given: taken as M_from(W) (the fixed-point residual is then 0)"
        else:
            note = "M: the relaxed QP's M carried by the solution (or given)"
        M = _check_M(M, self.m)
        rel = self.relaxed(M)
        cert = rel.certify(sol, tol=tol, reference=reference, workspace=workspace)
        cert.family = self.family
        S = self.scores(W)
        fp = float(np.max(np.abs(self._split_scores(S)[1] - M)))      # M_from(W) - M
        cert.add("fixed-point residual", fp, 1.0 + float(np.max(np.abs(S), initial=0.0)))
        cert.values["mcodm_objective"] = self.mcodm_value(W)
        cert.notes.append(note)
        cert.notes.append("certifies a KKT point of the relaxed QP (eq. 20) at M plus Alg. 3's "
                          "fixed-point residual; the original mcODM is non-convex (no global "
                          "certificate)")
        return cert
