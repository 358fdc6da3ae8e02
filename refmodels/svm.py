"""Soft-margin SVM (SPEC §1; seed 002 eq. 2, LIBSVM/LIBLINEAR convention).

.. math::

    \\min_{w,b,\\xi}\\ \\tfrac12\\|w\\|^2 + C\\sum_i \\xi_i
    \\quad\\text{s.t.}\\quad y_i(w^\\top\\phi(x_i)+b) \\ge 1-\\xi_i,\\ \\xi \\ge 0,

with ``b = 0`` unless ``fit_intercept=True``. Seed 002 writes ``lambda/m`` for ``C``.

Dual: :math:`\\min_\\alpha \\tfrac12\\alpha^\\top Q\\alpha - e^\\top\\alpha` s.t.
:math:`0\\le\\alpha\\le C` (and :math:`y^\\top\\alpha = 0` with an intercept),
:math:`Q = YGY`, :math:`\\nu = Y\\alpha`, :math:`P^\\star = -D^\\star`.
"""
from __future__ import annotations

import numpy as np

from ._validation import positive
from .base import (BinaryProblem, derive_box_duals, objective_scale, quad, run_cvxpy,
                   TIE_THRESHOLDS)
from .certify import box_violation, complementarity, project_boxes
from .representer import fnorm, stationarity_system, with_row as _with_row


class SVM(BinaryProblem):
    """Soft-margin SVM, hinge loss, ``C`` on the sum of slacks (SPEC §1).

    Parameters
    ----------
    X : array (m, d) (or the m x m Gram with ``kernel=Precomputed()``)
    y : labels, two classes (the larger sorted label is +1)
    C : float > 0
    kernel : Kernel or name, default linear
    fit_intercept : bool, default False (LIBLINEAR's convention); True is LIBSVM's ``SVC``.
    """

    family = "SVM"
    capabilities = frozenset({"margins", "dual_from_gram"})
    dual_names = ("alpha",)
    #: ``1/2 ||w||^2 + C sum_i max(0, 1 - gamma_i)``: C weighs the one margin term (the
    #: reference's rescaled rung, :meth:`BinaryProblem._rescaled`)
    rescale_params = ("C",)

    def __init__(self, X, y, C=1.0, kernel=None, fit_intercept=False):
        super().__init__(X, y, kernel)
        self.C = positive(C, "C")
        if not isinstance(fit_intercept, (bool, np.bool_)):
            raise ValueError(f"fit_intercept must be True or False; got {fit_intercept!r}")
        self.fit_intercept = self.has_intercept = bool(fit_intercept)

    # ---- the formulation, as in SPEC §1 -------------------------------------------
    def _solve_primal(self, solver, verbose, opts):
        """Seed 002 eq. 2 over ``w`` in feature space (empirical map for kernels)."""
        import cvxpy as cp

        F, y, C, m = self.F, self.y, self.C, self.m
        w, xi = cp.Variable(F.shape[1]), cp.Variable(m)
        b = cp.Variable() if self.fit_intercept else 0.0
        margin = cp.multiply(y, F @ w + b)
        constraints = [margin >= 1 - xi, xi >= 0]
        problem = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(w) + C * cp.sum(xi)), constraints)
        t = run_cvxpy(problem, solver, verbose, **opts)
        alpha = constraints[0].dual_value          # multipliers of the margin constraints
        b_val = float(b.value) if self.fit_intercept else 0.0
        return self._solution(w=w.value, b=b_val, coef=y * alpha,
                              variables={"xi": xi.value, "alpha": alpha},
                              solver=solver, form="primal", elapsed=t)

    def _solve_dual(self, solver, verbose, opts):
        """``min 1/2 a^T Q a - e^T a``, ``0 <= a <= C`` (+ ``y^T a = 0``); ``nu = Y a``."""
        import cvxpy as cp

        y, C, m = self.y, self.C, self.m
        Q = y[:, None] * self.gram * y[None, :]
        alpha = cp.Variable(m)
        constraints = [alpha >= 0, alpha <= C]
        if self.fit_intercept:
            constraints.append(y @ alpha == 0)
        problem = cp.Problem(cp.Minimize(0.5 * quad(alpha, Q) - cp.sum(alpha)), constraints)
        t = run_cvxpy(problem, solver, verbose, **opts)
        # the multiplier of y^T alpha = 0 is the intercept (stationarity on a free alpha_i).
        b_raw = float(constraints[2].dual_value) if self.fit_intercept else 0.0
        a, b, polished = self._polish(alpha.value, b_raw)
        coef = y * a
        return self._solution(w=self.w_from_coef(coef), b=b, coef=coef,
                              variables={"alpha": a}, solver=solver, form="dual", elapsed=t,
                              extra={"polished": polished, "cvxpy_point": {"alpha": alpha.value,
                                                                          "b": b_raw}})

    def _polish(self, a, b):
        """Active-set polish of an interior-point dual point (SVM = SVMm with C2 = 0).

        Clarabel's multipliers are accurate to about 1e-8; on ill-conditioned kernels the
        point's ``coef`` alone then misses a 1e-6 certificate. The polish solves the KKT
        equalities on the active set read from the margins and is kept only if it lowers the
        duality gap (see :meth:`refmodels.svmm.SVMm.polish_dual`); the raw CVXPY point is kept
        in ``info["cvxpy_point"]``.
        """
        from .svmm import SVMm

        twin = SVMm(self.X, self.y, C1=self.C, C2=0.0, eps=0.0, kernel=self.kernel,
                    fit_intercept=self.fit_intercept)
        a2, _, b2, polished = twin.polish_dual(a, np.zeros_like(a), b)
        return a2, (b2 if self.fit_intercept else 0.0), polished

    # ---- values and maps ------------------------------------------------------------
    def primal_value(self, w, b=0.0):
        """Canonical primal objective with the smallest feasible slacks."""
        return self.objective_from_margins(self.margins(w, b), self._norm2(w))

    @property
    def box_dual(self):
        """The dual (SPEC §1, without the intercept's equality) as the box QP of
        :class:`refmodels._box.BoxDual`: ``alpha`` in ``[0, C]``, ``p = -1``, no diagonal."""
        from ._box import BoxDual

        return BoxDual(("alpha",), np.array([1.0]), np.array([-1.0]), np.array([0.0]),
                       np.array([self.C]))

    def objective_from_margins(self, gamma, wnorm2):
        """``1/2 ||w||^2 + C sum_i max(0, 1 - gamma_i)`` (SPEC §1)."""
        return 0.5 * wnorm2 + self.C * float(np.sum(np.maximum(0.0, 1.0 - gamma)))

    def dual_value_from_gram(self, dual, Gv):
        """``D_max`` with ``Gv = G Y alpha`` given (no feature map)."""
        a = np.asarray(dual["alpha"], float)
        return float(np.sum(a) - 0.5 * (self.y * a) @ Gv)

    def dual_value(self, dual):
        """``D_max(alpha) = e^T alpha - 1/2 alpha^T Q alpha``."""
        a = dual["alpha"]
        v = self._FtYv(a)
        return float(np.sum(a) - 0.5 * v @ v)

    def coef_from_dual(self, dual):
        """``nu = Y alpha``; the intercept from the free multipliers (KKT) when fitted."""
        a = np.asarray(dual["alpha"], float)
        coef = self.y * a
        if not self.fit_intercept:
            return coef, None
        from .svmm import intercept_from_kkt_band   # SVM = SVMm with C2 = 0

        f = self.gram_times(coef)
        return coef, intercept_from_kkt_band(self.y, f, a, np.zeros_like(a), self.C, 0.0, 0.0)

    def feasible_dual(self, dual):
        """``alpha`` in ``[0, C]`` (and ``y^T alpha = 0`` with the intercept)."""
        a, = project_boxes(self.y, [(dual["alpha"], self.C, 1.0)], self.fit_intercept)
        return {"alpha": a}

    # ---- KKT ----------------------------------------------------------------------------
    def kkt_residuals(self, point, dual, sol=None):
        w, b = point
        a = dual["alpha"]
        gamma = self.margins(w, b)
        xi = np.maximum(0.0, 1.0 - gamma)
        if sol is not None and np.shape(sol.variables.get("xi")) == (self.m,):
            xi = np.asarray(sol.variables["xi"], float)
        w_dual = self._FtYv(a, w)
        dual_feas = box_violation(a, 0.0, self.C)
        if self.fit_intercept:
            dual_feas = max(dual_feas, abs(float(self.y @ a)))
        return {
            "primal feasibility": (self._slack_violation(gamma, sol), 1.0 + np.max(np.abs(gamma))),
            "dual feasibility": (dual_feas, 1.0 + self.C),
            "complementarity": (max(complementarity(a, gamma - 1.0 + xi),
                                    complementarity(self.C - a, xi)),
                                objective_scale(self, self.primal_value(w, b), sol)),
            "stationarity": (fnorm(w - w_dual), 1.0 + fnorm(w) + fnorm(w_dual)),
        }

    def dual_candidates(self, point, sol=None):
        w, b = point
        gamma = self.margins(w, b)
        FtY, target = stationarity_system(self, w, self._FtY)
        A = _with_row(FtY, self.y) if self.fit_intercept else FtY
        target = np.concatenate([target, [0.0]]) if self.fit_intercept else target
        for t in TIE_THRESHOLDS:
            (a,) = derive_box_duals([(gamma - 1.0, self.C, A)], target, t)
            yield {"alpha": a}
