"""Step 1 of CONTRIBUTING.md: the reference (what would be ``refmodels/l2svm.py``).

L2-loss SVM: ``min_w 1/2 ||w||^2 + C sum_i max(0, 1 - y_i w^T phi(x_i))^2``; dual
``min_{alpha >= 0} 1/2 alpha^T (Q + I/(2C)) alpha - e^T alpha``, ``nu = Y alpha``, and the
slack stationarity ``alpha_i = 2 C xi_i``.
"""
from __future__ import annotations

import numpy as np

from refmodels._validation import positive
from refmodels.base import BinaryProblem, run_cvxpy
from refmodels.certify import box_violation, complementarity


class L2SVM(BinaryProblem):
    family = "L2SVM"
    # "slack_stationarity": the loss is quadratic in the slacks, so the duality gap is
    # quadratic in the residual of alpha = 2 C xi (a gap of 1e-11 lets it reach 1e-5): the
    # fast layer's cheap certificate checks it on its own, as for ODM
    capabilities = frozenset({"margins", "slack_stationarity"})
    dual_names = ("alpha",)

    def __init__(self, X, y, C=1.0, kernel=None):
        super().__init__(X, y, kernel)
        self.C = positive(C, "C")

    # the objective, once
    def objective_from_margins(self, gamma, wnorm2):
        return 0.5 * wnorm2 + self.C * float(np.sum(np.maximum(0.0, 1.0 - gamma) ** 2))

    def primal_value(self, w, b=0.0):
        return self.objective_from_margins(self.margins(w), self._norm2(w))

    # the CVXPY forms
    def _solve_primal(self, solver, verbose, opts):
        import cvxpy as cp

        F = self.F
        w = cp.Variable(F.shape[1])
        hinge = cp.pos(1 - cp.multiply(self.y, F @ w))
        problem = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(w) + self.C * cp.sum_squares(hinge)))
        t = run_cvxpy(problem, solver, verbose, **opts)
        w = np.asarray(w.value, float)
        alpha = 2 * self.C * np.maximum(0.0, 1.0 - self.margins(w))
        return self._solution(w=w, b=0.0, coef=self.y * alpha, variables={"alpha": alpha},
                              solver=solver, form="primal", elapsed=t)

    def _solve_dual(self, solver, verbose, opts):
        import cvxpy as cp

        a = cp.Variable(self.m, nonneg=True)
        obj = 0.5 * cp.sum_squares(self._FtY() @ a) + cp.sum_squares(a) / (4 * self.C) - cp.sum(a)
        t = run_cvxpy(cp.Problem(cp.Minimize(obj)), solver, verbose, **opts)
        alpha = np.maximum(np.asarray(a.value, float), 0.0)
        coef, _ = self.coef_from_dual({"alpha": alpha})
        return self._solution(w=self.w_from_coef(coef), b=0.0, coef=coef,
                              variables={"alpha": alpha}, solver=solver, form="dual", elapsed=t)

    # the maps and the certificate's parts
    def dual_value(self, dual):
        a = np.asarray(dual["alpha"], float)
        v = self._FtY() @ a
        return float(np.sum(a) - 0.5 * v @ v - a @ a / (4 * self.C))

    def coef_from_dual(self, dual):
        return self.y * np.asarray(dual["alpha"], float), None

    def kkt_residuals(self, point, dual, sol=None):
        w, b = point
        a = np.asarray(dual["alpha"], float)
        gamma = self.margins(w)
        xi = np.maximum(0.0, 1.0 - gamma)
        w_dual = self._FtY() @ a
        return {
            "primal feasibility": (0.0, 1.0),
            "dual feasibility": (box_violation(a, 0.0, np.inf), 1.0 + float(np.max(np.abs(a)))),
            "complementarity": (complementarity(a, gamma - 1.0 + xi), 1.0 + abs(self.primal_value(w))),
            "stationarity": (float(np.linalg.norm(w - w_dual)),
                             1.0 + np.linalg.norm(w) + np.linalg.norm(w_dual)),
            "stationarity (slacks)": self.slack_stationarity(xi, dual),
        }

    def _slacks(self, gamma):
        return (np.maximum(0.0, 1.0 - gamma),)

    def slack_stationarity(self, xi, dual):
        """``(abs, scale)`` of ``alpha = 2 C xi``."""
        a = np.asarray(dual["alpha"], float)
        return float(np.linalg.norm(2 * self.C * xi - a)), 1.0 + float(np.linalg.norm(a))

    def dual_candidates(self, point, sol=None):
        w, _ = point
        yield {"alpha": 2 * self.C * np.maximum(0.0, 1.0 - self.margins(w))}
