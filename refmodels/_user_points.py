"""What a user hands to a binary problem: a point of their own (``solution_from``) and
the validation every point passes before it is certified (shapes, finiteness, the dual
variables by their SPEC names)."""
from __future__ import annotations

import numpy as np

from ._validation import check_vector
from .solution import Solution


class UserPoints:
    """Mixed into :class:`refmodels.base.BinaryProblem`."""

    def _check_solution(self, sol):
        """Refuse what is not a Solution of this problem (shapes, finiteness), naming it."""
        super()._check_solution(sol)
        if sol.coef is not None:
            check_vector(sol.coef, self.m, "sol.coef")
        w = sol.variables.get("w")
        if w is not None:
            w = np.asarray(w, dtype=float)
            r = self.X.shape[1] if self.kernel.is_linear else None
            if r is not None and w.shape != (r,):
                raise ValueError(f"sol.variables['w'] must have shape ({r},) (one weight per "
                                 f"feature); got {w.shape}")
            if not np.all(np.isfinite(w)):
                raise ValueError("sol.variables['w'] must contain only finite values")
        if sol.coef is None and w is None:
            raise ValueError(f"sol must carry coef of shape ({self.m},) or w")
        try:
            b = float(sol.intercept)
        except (TypeError, ValueError):
            raise ValueError(f"sol.intercept must be a number; got {sol.intercept!r}") from None
        if not np.isfinite(b):
            raise ValueError("sol.intercept must be finite")
        for k in self.dual_names:
            if k in sol.variables and sol.variables[k] is not None:
                check_vector(sol.variables[k], self._dual_size(k), f"sol.variables[{k!r}]")

    def solution_from(self, w=None, coef=None, intercept=None, dual=None, source="user", **primal):
        """A :class:`Solution` from a user's own arrays, ready for :meth:`certify`.

        Give linear weights ``w`` (linear kernel only), or coefficients ``coef`` over the
        training points, and/or the dual variables by their SPEC names in ``dual``.
        With only a dual, the primal point is recovered by SPEC's map (``coef_from_dual``).
        Explicit primal slack variables (e.g. ``xi=``) may be given; otherwise they are
        the smallest feasible ones for the point. ``source`` (``info["source"]``) names where
        the point comes from (``"user"``, ``"libsvm"``, ``"liblinear"``, ``"sklearn.SVC"``,
        ...): :meth:`Certificate.explain` offers a library's causes only for its points.
        """
        variables = {}
        if w is not None:
            if not self.kernel.is_linear:
                raise ValueError("w (linear weights) can only be given for the linear kernel; "
                                 "give coef (coefficients over training points) instead")
            variables["w"] = check_vector(w, self.X.shape[1], "w")
        if coef is not None:
            coef = check_vector(coef, self.m, "coef")
        if intercept is not None:
            intercept = float(check_vector([intercept], 1, "intercept")[0])
            if not self.has_intercept and intercept != 0.0:
                raise ValueError(f"intercept must be 0 (or omitted): {type(self).__name__} has no "
                                 "intercept here")
        if dual is not None:
            if not isinstance(dual, dict):
                raise ValueError("dual must be a dict of dual variables by SPEC name "
                                 f"{list(self.dual_names)}")
            unknown = set(dual) - set(self.dual_names)
            if unknown:
                raise ValueError(f"dual has unknown names {sorted(unknown)}; expected "
                                 f"{list(self.dual_names)}")
            missing = set(self.dual_names) - set(dual)
            if missing:
                raise ValueError(f"dual is missing {sorted(missing)} (needs {list(self.dual_names)})")
            for k in self.dual_names:
                variables[k] = check_vector(dual[k], self._dual_size(k), f"dual[{k!r}]")
        for k, v in primal.items():
            if k not in self.primal_slack_names:
                raise ValueError(f"unknown argument {k!r}; primal slacks are {list(self.primal_slack_names)}")
            variables[k] = check_vector(v, self.m, k)
        if w is None and coef is None:
            if dual is None:
                raise ValueError("give at least one of w, coef or dual")
            coef, b_dual = self.coef_from_dual({k: variables[k] for k in self.dual_names})
            if intercept is None and b_dual is not None:
                intercept = b_dual
        sol = Solution(objective=np.nan, coef=coef, intercept=intercept or 0.0,
                       variables=variables, status="user", solver="user", form="user",
                       info={"source": str(source)})
        wv, b = self._primal_point(sol)
        sol.objective = self.primal_value(wv, b)
        return sol

    primal_slack_names: tuple = ("xi",)

    def _dual_size(self, name):
        return self.m
