"""SVMm and epsilon-SVM (SPEC §6; seed 003 eqs. 6, 7, 14, 15).

.. math::

    \\min_{w,b,\\xi,\\eta}\\ \\tfrac12\\|w\\|^2 + C_1\\sum_i \\xi_i + C_2\\sum_i \\eta_i
    \\quad\\text{s.t.}\\quad y_i(w^\\top\\phi(x_i)+b) \\ge 1-\\xi_i,\\
    y_i(w^\\top\\phi(x_i)+b) \\le 1+\\varepsilon+\\eta_i,\\ \\xi,\\eta \\ge 0,

with ``b = 0`` unless ``fit_intercept=True`` (the seed always fits one). Dual (eq. 15):

.. math::

    \\max_{\\alpha,\\beta}\\ \\sum_i\\big(\\alpha_i-(1+\\varepsilon)\\beta_i\\big)
    - \\tfrac12 v^\\top G v,\\quad v = Y(\\alpha-\\beta),

s.t. :math:`e^\\top v = 0` (with an intercept), :math:`0\\le\\alpha\\le C_1`,
:math:`0\\le\\beta\\le C_2`; :math:`\\nu = v`, :math:`P^\\star = D^\\star`.

Erratum: seed 003 eqs. 7 and 14 print :math:`\\|w\\|^2`; the dual (15) belongs to
:math:`\\tfrac12\\|w\\|^2` (``tests/test_svmm.py`` shows the printed primal has another value).
``C2 = 0`` is allowed: it is the SVM with intercept (``beta`` is pinned to 0).
"""
from __future__ import annotations

import numpy as np
import scipy.linalg as sla

from ._validation import nonnegative, positive
from .base import (BinaryProblem, derive_box_duals, objective_scale, quad, run_cvxpy,
                   TIE_THRESHOLDS)
from .certify import box_violation, complementarity, project_boxes
from .representer import fnorm, stationarity_system, with_row as _with_row


class SVMm(BinaryProblem):
    """SVMm: SVM with a band of width ``eps`` above the margin (SPEC §6, seed 003 eq. 14).

    Parameters
    ----------
    X : array (m, d) (or the m x m Gram with ``kernel=Precomputed()``)
    y : labels, two classes (the larger sorted label is +1)
    C1 : float > 0, weight of the margin slacks ``xi``
    C2 : float >= 0, weight of the band slacks ``eta`` (0: the SVM with intercept)
    eps : float >= 0, band width (in margin units) above the margin ``y f(x) = 1``
    kernel : Kernel or name, default linear
    fit_intercept : bool, default True (the seed's formulation has ``b``)
    """

    family = "SVMm"
    capabilities = frozenset({"margins", "dual_from_gram"})
    dual_names = ("alpha", "beta")
    #: the two slack sums (``eps`` is a margin, unchanged; EpsSVM inherits) (the reference's
    #: rescaled rung, :meth:`BinaryProblem._rescaled`)
    rescale_params = ("C1", "C2")
    primal_slack_names = ("xi", "eta")

    def __init__(self, X, y, C1=1.0, C2=1.0, eps=1.0, kernel=None, fit_intercept=True):
        super().__init__(X, y, kernel)
        self.C1 = positive(C1, "C1")
        self.C2 = nonnegative(C2, "C2")
        self.eps = nonnegative(eps, "eps")
        if not isinstance(fit_intercept, (bool, np.bool_)):
            raise ValueError(f"fit_intercept must be True or False; got {fit_intercept!r}")
        self.fit_intercept = self.has_intercept = bool(fit_intercept)

    # ---- the formulation, as in SPEC §6 -------------------------------------------
    def _solve_primal(self, solver, verbose, opts):
        """Seed 003 eq. 14 with the 1/2 of SPEC, over ``w`` in feature space."""
        import cvxpy as cp

        F, y, m = self.F, self.y, self.m
        w, xi, eta = cp.Variable(F.shape[1]), cp.Variable(m), cp.Variable(m)
        b = cp.Variable() if self.fit_intercept else 0.0
        gamma = cp.multiply(y, F @ w + b)
        constraints = [gamma >= 1 - xi, gamma <= 1 + self.eps + eta, xi >= 0, eta >= 0]
        objective = 0.5 * cp.sum_squares(w) + self.C1 * cp.sum(xi) + self.C2 * cp.sum(eta)
        problem = cp.Problem(cp.Minimize(objective), constraints)
        t = run_cvxpy(problem, solver, verbose, **opts)
        alpha = np.asarray(constraints[0].dual_value, float)    # multipliers of the margin
        beta = np.asarray(constraints[1].dual_value, float)     # ... and of the band
        b_val = float(b.value) if self.fit_intercept else 0.0
        return self._solution(w=w.value, b=b_val, coef=y * (alpha - beta),
                              variables={"xi": xi.value, "eta": eta.value, "alpha": alpha,
                                         "beta": beta},
                              solver=solver, form="primal", elapsed=t)

    def _solve_dual(self, solver, verbose, opts):
        """Eq. 15 as a minimisation: ``min 1/2 v^T G v - e^T alpha + (1+eps) e^T beta``."""
        a, bt, b, polished, t = self.dual_point(solver, verbose, **opts)
        coef = self.y * (a - bt)
        return self._solution(w=self.w_from_coef(coef), b=b, coef=coef,
                              variables={"alpha": a, "beta": bt}, solver=solver, form="dual",
                              elapsed=t, extra={"polished": polished})

    def dual_problem(self, quadratic=None):
        """Eq. 15 as a CVXPY problem: ``(problem, alpha, beta, constraints)``, the last
        constraint ``e^T Y (alpha - beta) = 0`` when there is an intercept. ``quadratic(v)``
        is the term ``1/2 v^T K v`` (default: with this problem's Gram; MKLm passes
        ``sum_k mu_k 1/2 v^T K_k v`` with ``mu`` a CVXPY parameter, so that one problem
        serves every ``mu``)."""
        import cvxpy as cp

        y, m = self.y, self.m
        alpha, beta = cp.Variable(m), cp.Variable(m)
        v = cp.multiply(y, alpha - beta)
        constraints = [alpha >= 0, alpha <= self.C1, beta >= 0, beta <= self.C2]
        if self.fit_intercept:
            constraints.append(cp.sum(v) == 0)
        half_vKv = 0.5 * quad(v, self.gram) if quadratic is None else quadratic(v)
        objective = half_vKv - cp.sum(alpha) + (1.0 + self.eps) * cp.sum(beta)
        return cp.Problem(cp.Minimize(objective), constraints), alpha, beta, constraints

    def dual_point(self, solver="CLARABEL", verbose=False, **opts):
        """``(alpha, beta, b, polished, seconds)``: eq. 15 solved in CVXPY, then polished."""
        problem, alpha, beta, constraints = self.dual_problem()
        t = run_cvxpy(problem, solver, verbose, **opts)
        # the multiplier of e^T v = 0 is the intercept (stationarity on a free alpha_i:
        # y_i (G v)_i - 1 + lambda y_i = 0, i.e. y_i (f_i + lambda) = 1).
        b = float(constraints[4].dual_value) if self.fit_intercept else 0.0
        a, bt, b, polished = self.polish_dual(alpha.value, beta.value, b)
        return a, bt, b, polished, t

    def _gap(self, a, bt, b):
        """``P(nu, b) - D_max(alpha, beta)`` computed with the Gram matrix (``nu = Y(a - bt)``)."""
        v = self.y * (a - bt)
        Gv = self.gram @ v
        vGv = float(v @ Gv)
        xi, eta = self.slacks(self.y * (Gv + b))
        P = 0.5 * vGv + self.C1 * float(np.sum(xi)) + self.C2 * float(np.sum(eta))
        return P - (float(np.sum(a) - (1.0 + self.eps) * np.sum(bt)) - 0.5 * vGv)

    def polish_dual(self, a, bt, b, tol=1e-7, deltas=(1e-7, 1e-6, 1e-5, 1e-4)):
        """Active-set polish of a dual point from an interior-point solver (as OSQP's polish).

        The active set is read from the margins ``gamma = y (G v + b)`` of the point: a margin
        constraint off by more than ``delta`` fixes its multiplier at the bound that
        complementarity asks for (``gamma > 1``: ``alpha = 0``; ``gamma < 1``: ``alpha = C1``;
        ``gamma < 1 + eps``: ``beta = 0``; ``gamma > 1 + eps``: ``beta = C2``); of the others,
        a multiplier within ``tol * C`` of a bound is put on it and the rest are free. The free
        ones and ``b`` then solve the KKT equalities exactly (``gamma_i = 1`` for a free
        ``alpha_i``, ``1 + eps`` for a free ``beta_i``, ``e^T v = 0``) by least squares.
        Several ``delta`` are tried; a polished point is kept only if it is dual feasible and
        has a smaller duality gap ``P - D`` than the input (a wrong active set never makes
        the point worse). Returns ``(alpha, beta, b, polished)``.
        """
        y, G = self.y, self.gram
        a, bt = np.asarray(a, float), np.asarray(bt, float)
        gamma = y * (G @ (y * (a - bt)) + b)
        best = (self._gap(a, bt, b), a, bt, b, False)
        for delta in deltas:
            cand = self._polish_once(a, bt, gamma, tol, delta)
            if cand is None:
                continue
            gap = self._gap(*cand)
            if gap < best[0]:
                best = (gap, *cand, True)
        return best[1], best[2], best[3], best[4]

    def _polish_once(self, a, bt, gamma, tol, delta):
        y, G, C1, C2, eps = self.y, self.gram, self.C1, self.C2, self.eps

        def snap(x, hi, above, below):
            t = tol * max(hi, 1.0)
            x = np.where(x <= t, 0.0, np.where(x >= hi - t, hi, x))
            x = np.where(above, 0.0, np.where(below, hi, x))
            return x, (x > 0.0) & (x < hi)

        a0, fa = snap(a, C1, gamma > 1.0 + delta, gamma < 1.0 - delta)
        b0, fb = snap(bt, C2, gamma < 1.0 + eps - delta, gamma > 1.0 + eps + delta)
        ia, ib = np.flatnonzero(fa), np.flatnonzero(fb)
        rows = np.concatenate([ia, ib])
        v0 = y * (np.where(fa, 0.0, a0) - np.where(fb, 0.0, b0))
        if rows.size:
            yR = y[rows]
            cols = [yR[:, None] * G[np.ix_(rows, ia)] * y[ia][None, :],
                    -yR[:, None] * G[np.ix_(rows, ib)] * y[ib][None, :]]
            rhs = np.concatenate([np.ones(ia.size), np.full(ib.size, 1.0 + eps)])
            rhs = rhs - yR * (G[rows] @ v0)
            if self.fit_intercept:
                cols.append(yR[:, None])
            A = np.hstack(cols)
            if self.fit_intercept:
                eq = np.concatenate([y[ia], -y[ib], [0.0]])
                A = np.vstack([A, eq[None, :]])
                rhs = np.append(rhs, -float(np.sum(v0)))
            # the minimum-norm least-squares solution by a complete orthogonal factorisation
            # (LAPACK gelsy), several times cheaper than the SVD of numpy's lstsq
            x = sla.lstsq(A, rhs, lapack_driver="gelsy", check_finite=False)[0]
            a0[ia], b0[ib] = x[:ia.size], x[ia.size:ia.size + ib.size]
            bp = float(x[-1]) if self.fit_intercept else 0.0
        else:
            bp = (intercept_from_kkt_band(y, G @ v0, a0, b0, C1, C2, eps)
                  if self.fit_intercept else 0.0)
        feas = max(box_violation(a0, 0.0, C1), box_violation(b0, 0.0, C2))
        if self.fit_intercept:
            feas = max(feas, abs(float(y @ (a0 - b0))))
        if not feas <= 1e-12 * max(1.0, C1, C2) * self.m:
            return None
        return np.clip(a0, 0.0, C1), np.clip(b0, 0.0, C2), bp

    # ---- values and maps ------------------------------------------------------------
    def slacks(self, gamma):
        """Smallest feasible slacks ``xi = max(0, 1 - gamma)``, ``eta = max(0, gamma - 1 - eps)``."""
        return np.maximum(0.0, 1.0 - gamma), np.maximum(0.0, gamma - 1.0 - self.eps)

    def primal_value(self, w, b=0.0):
        """Canonical primal objective (SPEC §6) with the smallest feasible slacks."""
        return self.objective_from_margins(self.margins(w, b), self._norm2(w))

    @property
    def box_dual(self):
        """Eq. 15 as the box QP of :class:`refmodels._box.BoxDual`, without the intercept's
        equality ``y^T (alpha - beta) = 0`` (the DCD solves it with ``fit_intercept=False``;
        the SMO adds the equality with an intercept): ``alpha`` (sign +1, ``p = -1``, box
        ``[0, C1]``) and ``beta`` (sign -1, ``p = 1 + eps``, box ``[0, C2]``), no diagonal,
        ``u = Y (alpha - beta)`` on the problem's Gram. ``C2 = 0`` pins ``beta`` at 0."""
        from ._box import BoxDual

        return BoxDual(("alpha", "beta"), np.array([1.0, -1.0]),
                       np.array([-1.0, 1.0 + self.eps]), np.array([0.0, 0.0]),
                       np.array([self.C1, self.C2]))

    def objective_from_margins(self, gamma, wnorm2):
        """SPEC §6's primal from the margins and ``||w||^2``."""
        xi, eta = self.slacks(gamma)
        return 0.5 * wnorm2 + self.C1 * float(np.sum(xi)) + self.C2 * float(np.sum(eta))

    def dual_value_from_gram(self, dual, Gv):
        """``D_max`` with ``Gv = G Y (alpha - beta)`` given (no feature map)."""
        a, bt = np.asarray(dual["alpha"], float), np.asarray(dual["beta"], float)
        return float(np.sum(a) - (1.0 + self.eps) * np.sum(bt) - 0.5 * (self.y * (a - bt)) @ Gv)

    def dual_value(self, dual):
        """``D_max = sum(alpha - (1+eps) beta) - 1/2 v^T G v``, ``v = Y(alpha - beta)`` (eq. 15)."""
        a, bt = np.asarray(dual["alpha"], float), np.asarray(dual["beta"], float)
        u = self._FtYv(a - bt)
        return float(np.sum(a) - (1.0 + self.eps) * np.sum(bt) - 0.5 * u @ u)

    def coef_from_dual(self, dual):
        """``nu = Y(alpha - beta)``; the intercept from the KKT conditions when fitted."""
        a, bt = np.asarray(dual["alpha"], float), np.asarray(dual["beta"], float)
        coef = self.y * (a - bt)
        if not self.fit_intercept:
            return coef, None
        f = self.gram_times(coef)
        return coef, intercept_from_kkt_band(self.y, f, a, bt, self.C1, self.C2, self.eps)

    def feasible_dual(self, dual):
        """``alpha`` in ``[0, C1]``, ``beta`` in ``[0, C2]`` (and ``y^T (alpha - beta) = 0``
        with the intercept)."""
        a, bt = project_boxes(self.y, [(dual["alpha"], self.C1, 1.0),
                                       (dual["beta"], self.C2, -1.0)], self.fit_intercept)
        return {"alpha": a, "beta": bt}

    # ---- KKT ----------------------------------------------------------------------------
    def kkt_residuals(self, point, dual, sol=None):
        w, b = point
        a, bt = np.asarray(dual["alpha"], float), np.asarray(dual["beta"], float)
        gamma = self.margins(w, b)
        xi, eta = self.slacks(gamma)
        if sol is not None and np.shape(sol.variables.get("xi")) == (self.m,):
            xi = np.asarray(sol.variables["xi"], float)
        if sol is not None and np.shape(sol.variables.get("eta")) == (self.m,):
            eta = np.asarray(sol.variables["eta"], float)
        w_dual = self._FtYv(a - bt, w)
        dual_feas = max(box_violation(a, 0.0, self.C1), box_violation(bt, 0.0, self.C2))
        if self.fit_intercept:
            dual_feas = max(dual_feas, abs(float(self.y @ (a - bt))))
        primal_feas = max(self._slack_violation(gamma, sol, "xi", 1.0),
                          self._slack_violation(gamma, sol, "eta", 1.0 + self.eps, upper=True))
        comp = max(complementarity(a, gamma - 1.0 + xi), complementarity(self.C1 - a, xi),
                   complementarity(bt, 1.0 + self.eps + eta - gamma),
                   complementarity(self.C2 - bt, eta))
        return {
            "primal feasibility": (primal_feas, 1.0 + np.max(np.abs(gamma))),
            "dual feasibility": (dual_feas, 1.0 + max(self.C1, self.C2)),
            "complementarity": (comp, objective_scale(self, self.primal_value(w, b), sol)),
            "stationarity": (fnorm(w - w_dual), 1.0 + fnorm(w) + fnorm(w_dual)),
        }

    def dual_candidates(self, point, sol=None):
        """Two blocks for :func:`derive_box_duals`: margin (slack ``gamma - 1``, box C1,
        ``A = F^T Y``) and band (slack ``1 + eps - gamma``, box C2, ``A = -F^T Y``)."""
        w, b = point
        gamma = self.margins(w, b)
        A, target = stationarity_system(self, w, self._FtY)
        if self.fit_intercept:
            A = _with_row(A, self.y)
        target = np.concatenate([target, [0.0]]) if self.fit_intercept else target
        for t in TIE_THRESHOLDS:
            a, bt = derive_box_duals([(gamma - 1.0, self.C1, A),
                                      (1.0 + self.eps - gamma, self.C2, -A)], target, t)
            yield {"alpha": a, "beta": bt}


class EpsSVM(SVMm):
    """epsilon-SVM of Do et al. (seed 003 eqs. 6/7): SVMm with ``eps = 0`` (SPEC §6).

    Seed 003 eq. 6 reads

    .. math::

        \\min_{w,b}\\ w^\\top w + \\lambda\\sum_i\\max(0, y_i(w^\\top x_i+b)-1)
        + C\\sum_i\\max(0, 1-y_i(w^\\top x_i+b)).

    SPEC's scaling remark: with the seed's ``w^T w`` and its ``(C, lambda)``, eq. 6 has the
    minimizer of ``SVMm(C1=C/2, C2=lambda/2, eps=0)`` and twice its value. We use the 1/2
    convention throughout, so ``EpsSVM(X, y, C1, C2)`` is ``SVMm(X, y, C1, C2, eps=0)``.
    """

    family = "EpsSVM"

    def __init__(self, X, y, C1=1.0, C2=1.0, kernel=None, fit_intercept=True):
        super().__init__(X, y, C1=C1, C2=C2, eps=0.0, kernel=kernel, fit_intercept=fit_intercept)


def intercept_from_kkt_band(y, f, alpha, beta, C1, C2, eps, tol=1e-9):
    """Intercept of an SVMm dual point from the KKT conditions (two multiplier families).

    ``f`` is the decision value without intercept, ``gamma_i = y_i (f_i + b)``. The KKT
    condition on ``b`` is ``0 in dP/db``, with ``P(b) = C1 sum max(0, 1 - gamma_i)
    + C2 sum max(0, gamma_i - 1 - eps)`` (convex, piecewise linear, coercive when both
    classes are present and ``C1 > 0``): its minimizers form an interval ``[b_lo, b_hi]``
    whose ends are breakpoints ``b = c y_i - f_i`` (``c = 1`` or ``1 + eps``), found
    exactly. Within it, complementarity picks ``b``: a free ``alpha_i`` (inside
    ``(0, C1)``) pins ``gamma_i = 1``, a free ``beta_i`` pins ``gamma_i = 1 + eps``; the
    mean of the pinned values, kept in ``[b_lo, b_hi]``, is returned (the midpoint when no
    multiplier is free). Unlike reading off free multipliers alone, this is robust to a
    multiplier that a solver left a hair inside its box.
    """
    y, f = np.asarray(y, float), np.asarray(f, float)
    alpha, beta = np.asarray(alpha, float), np.asarray(beta, float)
    t_lo, t_hi = y - f, (1.0 + eps) * y - f          # gamma_i = 1, resp. 1 + eps
    cand = np.unique(np.concatenate([t_lo, t_hi]))

    def P(bs):
        out = np.empty(bs.size)
        for s in range(0, bs.size, 512):
            g = y[None, :] * (f[None, :] + bs[s:s + 512, None])
            out[s:s + 512] = (C1 * np.maximum(0.0, 1.0 - g).sum(axis=1)
                              + C2 * np.maximum(0.0, g - 1.0 - eps).sum(axis=1))
        return out

    vals = P(cand)
    best = vals.min()
    argmin = cand[vals <= best + 1e-12 * (1.0 + abs(best))]
    b_lo, b_hi = float(argmin.min()), float(argmin.max())
    scale = max(1.0, C1, C2)
    pinned = []
    for mult, hi, t in ((alpha, C1, t_lo), (beta, C2, t_hi)):
        free = (mult > tol * scale) & (mult < hi - tol * scale)
        pinned.append(t[free])
    pinned = np.concatenate(pinned)
    b = float(np.mean(pinned)) if pinned.size else 0.5 * (b_lo + b_hi)
    return float(min(max(b, b_lo), b_hi))
