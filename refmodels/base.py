"""Shared machinery of the problem classes: lazy data, CVXPY solves, decision
functions, user points and the generic KKT certificate.

A problem object stores validated inputs only; the Gram matrix, the empirical
kernel map ``F`` (``F F^T = G``, SPEC notation) and CVXPY problems are built on
first use and cached.
"""
from __future__ import annotations

import time
import warnings

import numpy as np
import scipy.sparse as sp
from scipy.optimize import lsq_linear

from . import kernels as _k
from ._validation import binary_labels, check_vector, check_X
from .certify import DEFAULT_TOL, Certificate
from .solution import Solution, SolverError

#: problems up to this many samples get the reference optimum computed by ``certify``
#: (``reference="auto"``); larger ones skip the objective gap unless asked.
AUTO_REFERENCE_MAX_M = 2000

#: default tolerances handed to the reference solvers (tighter than CVXPY's defaults).
SOLVER_DEFAULTS = {
    "CLARABEL": {},  # Clarabel's defaults are 1e-8 on gap and feasibility
    "OSQP": {"eps_abs": 1e-10, "eps_rel": 1e-10, "max_iter": 400000, "polish": True},
    "SCS": {"eps": 1e-9, "max_iters": 200000},
    "ECOS": {"abstol": 1e-10, "reltol": 1e-10, "feastol": 1e-10},
}

#: tie thresholds tried when a dual certificate is derived from a primal point (see
#: :meth:`Problem.dual_candidates`).
TIE_THRESHOLDS = (0.0, 1e-10, 1e-8, 1e-6, 1e-4, 1e-3)


_INSTALLED_SOLVERS = []


def run_cvxpy(problem, solver, verbose=False, **options):
    """Solve a CVXPY problem; raise :class:`SolverError` unless it reports ``optimal``."""
    import cvxpy as cp

    solver = (solver or "CLARABEL").upper()
    if not _INSTALLED_SOLVERS:                 # cp.installed_solvers() costs ~30 ms a call
        _INSTALLED_SOLVERS.extend(cp.installed_solvers())
    if solver not in _INSTALLED_SOLVERS:
        raise ValueError(f"solver must be one of the installed CVXPY solvers "
                         f"{_INSTALLED_SOLVERS}; got {solver!r}")
    opts = dict(SOLVER_DEFAULTS.get(solver, {}))
    opts.update(options)
    t0 = time.perf_counter()
    try:
        problem.solve(solver=solver, verbose=verbose, **opts)
    except cp.error.SolverError as exc:
        raise SolverError(f"reference solver {solver} failed: {exc}") from exc
    elapsed = time.perf_counter() - t0
    if problem.status != cp.OPTIMAL:
        raise SolverError(f"reference solver {solver} returned status {problem.status!r} "
                          "(not 'optimal'); try another solver= or check the data")
    return elapsed


def quad(x, Q):
    """``x^T Q x`` for a matrix ``Q`` we know to be PSD (skips CVXPY's eigenvalue check)."""
    import cvxpy as cp

    return cp.quad_form(x, cp.psd_wrap(0.5 * (Q + Q.T)))


def derive_box_duals(blocks, target, t, eq_row=False):
    """Best dual multipliers for hinge-type constraints, given a primal point.

    ``blocks`` is a list of ``(slack, upper, A)``: for each constraint family, its slack
    ``s_i`` (>= 0 when satisfied without a slack variable), the box ``[0, upper]`` of its
    multipliers and the matrix ``A`` (r x m) through which the multipliers enter the
    stationarity condition ``sum_k A_k mult_k = target``. Complementarity fixes a
    multiplier at ``upper`` where ``s_i < -t`` (the slack variable is positive) and at
    0 where ``s_i > t``; the others (ties) are chosen in their box by bounded least
    squares on the stationarity residual (plus, with ``eq_row``, the equality row
    ``sum_k y^T mult_k`` carried as the last row of each ``A``).
    """
    mults, fixed_sum = [], np.zeros(target.shape[0])
    free_cols, free_idx = [], []
    for bi, (s, upper, A) in enumerate(blocks):
        upper_v = np.broadcast_to(np.asarray(upper, float), s.shape)
        mult = np.where(s < -t, upper_v, 0.0)
        free = np.flatnonzero(np.abs(s) <= t)
        mult[free] = 0.0
        fixed_sum += A @ mult
        if free.size:
            free_cols.append(A[:, free])
            free_idx.append((bi, free, upper_v[free]))
        mults.append(mult)
    if free_idx:
        Af = np.hstack(free_cols)
        ub = np.concatenate([u for _, _, u in free_idx])
        rhs = target - fixed_sum
        if np.all(ub <= 0):
            x = np.zeros(Af.shape[1])
        else:
            res = lsq_linear(Af, rhs, bounds=(np.zeros_like(ub), np.maximum(ub, 1e-300)),
                             method="bvls" if Af.shape[1] <= 3000 else "trf", tol=1e-14)
            x = np.clip(res.x, 0.0, ub)
        pos = 0
        for bi, free, _ in free_idx:
            mults[bi][free] = x[pos:pos + free.size]
            pos += free.size
    return mults


class Problem:
    """Base class of every formulation: data, kernel, lazy Gram / feature map."""

    family = "problem"
    has_intercept = False
    #: names (SPEC) of the dual variables a Solution must carry to be certified as a pair
    dual_names: tuple = ()

    def __init__(self, X, kernel=None):
        self.kernel = _k.make_kernel(kernel)
        if self.kernel.is_precomputed:
            X = _k.check_precomputed_gram(X, "X")
        else:
            X = check_X(X, "X", allow_sparse=self.kernel.is_linear)
        self.X = X
        self.m = X.shape[0]
        self._cache = {}

    # ---- lazily built data -------------------------------------------------
    def _cached(self, key, build):
        if key not in self._cache:
            self._cache[key] = build()
        return self._cache[key]

    @property
    def gram(self):
        """Gram matrix ``G`` of the training points (built on first use)."""
        return self._cached("gram", lambda: self.kernel.gram(self.X))

    @property
    def gram_if_built(self):
        """The Gram matrix if it has been built already, else None (never builds it)."""
        return self._cache.get("gram")

    @property
    def F(self):
        """Feature matrix of the primal: ``X`` (linear kernel) or the empirical kernel map."""
        return self._cached("F", lambda: _k.feature_matrix(self.kernel, self.X))

    def kernel_to(self, X_new):
        """``K[i, j] = k(x_i, x_new_j)`` (m x n_new), validated."""
        if self.kernel.is_precomputed:
            K = check_X(X_new, "X_new")
            if K.shape[1] != self.m:
                raise ValueError(f"X_new must be K(X_new, X_train) with {self.m} columns for "
                                 f"kernel=Precomputed(); got shape {K.shape}")
            return K.T
        K = check_X(X_new, "X_new", allow_sparse=self.kernel.is_linear)
        if K.shape[1] != self.X.shape[1]:
            raise ValueError(f"X_new must have {self.X.shape[1]} features (as X); got {K.shape[1]}")
        return self.kernel.cross(self.X, K)

    # ---- solving --------------------------------------------------------------
    def solve(self, form="dual", solver="CLARABEL", verbose=False, **solver_options):
        """Solve the reference CVXPY problem of SPEC; ``form`` is ``"primal"`` or ``"dual"``.

        ``Solution.objective`` is the canonical primal value either way; a dual
        solution is mapped to the primal point with SPEC's maps. Raises
        :class:`SolverError` unless CVXPY reports the problem ``optimal``.
        """
        if form not in ("primal", "dual"):
            raise ValueError(f"form must be 'primal' or 'dual'; got {form!r}")
        if not isinstance(solver, str):
            raise ValueError(f"solver must be the name of a CVXPY solver; got {solver!r}")
        build = self._solve_primal if form == "primal" else self._solve_dual
        return build(solver.upper(), verbose, solver_options)

    def reference_solution(self):
        """The reference optimum (dual form, Clarabel), cached for objective gaps."""
        return self._cached("reference", lambda: self.solve(form="dual"))

    # ---- reference optimum for objective gaps ------------------------------------
    def _reference_for(self, reference):
        """The Solution to measure the objective gap against (see ``certify``), or None."""
        if isinstance(reference, Solution):
            self._check_reference(reference)
            return reference
        auto = isinstance(reference, str) and reference == "auto"
        if reference is True or (auto and self.m <= AUTO_REFERENCE_MAX_M):
            return self.reference_solution()
        if reference is False or reference is None or auto:
            return None
        raise ValueError(f"reference must be 'auto', True, False or a Solution; got {reference!r}")

    def _check_reference(self, reference):
        """Families with array objectives check a given reference's shape here."""

    def _add_objective_gap(self, cert, P, reference):
        """Add the objective gap ``P - P*`` to ``cert`` (or a note saying why it is absent)."""
        ref = self._reference_for(reference)
        if ref is not None:
            cert.values["reference_objective"] = ref.objective
            cert.add("objective gap", P - ref.objective, 1.0 + abs(ref.objective))
        else:
            cert.notes.append("objective gap not computed (reference=False or m above "
                              f"{AUTO_REFERENCE_MAX_M}); the duality gap bounds it")

    # ---- predictions ----------------------------------------------------------
    def decision_function(self, sol, X_new):
        """``f(x) = sum_i coef_i k(x_i, x) + intercept`` for the rows of ``X_new``."""
        if sol.coef is None:
            w = sol.variables.get("w")
            if w is None or not self.kernel.is_linear:
                raise ValueError("sol must carry coef (or w for the linear kernel)")
            Z = check_X(X_new, "X_new", allow_sparse=True)
            if Z.shape[1] != np.shape(w)[0]:
                raise ValueError(f"X_new must have {np.shape(w)[0]} features; got {Z.shape[1]}")
            return np.asarray(Z @ w).ravel() + sol.intercept
        K = self.kernel_to(X_new)
        return K.T @ sol.coef + sol.intercept

    def predict(self, sol, X_new):
        f = self.decision_function(sol, X_new)
        return np.where(f >= 0, self.classes_[1], self.classes_[0])


class BinaryProblem(Problem):
    """A binary margin problem over ``w`` (feature space) and optionally ``b``.

    Subclasses state the formulation: ``_solve_primal``, ``_solve_dual``,
    ``primal_value(w, b)``, ``dual_value(dual)``, ``coef_from_dual(dual)``,
    ``kkt_residuals(w, b, dual, sol)`` and ``dual_candidates(w, b)``.
    """

    def __init__(self, X, y, kernel=None):
        super().__init__(X, kernel)
        self.y, self.classes_ = binary_labels(y, self.m, "y")

    # ---- points ---------------------------------------------------------------
    def margins(self, w, b=0.0):
        """``gamma_i = y_i (w^T phi(x_i) + b)`` for ``w`` in feature-space coordinates."""
        return self.y * (np.asarray(self.F @ w).ravel() + b)

    def w_from_coef(self, coef):
        """``w = F^T coef`` (feature-space coordinates of ``sum_i coef_i phi(x_i)``)."""
        return np.asarray(self.F.T @ coef).ravel()

    def _primal_point(self, sol):
        w = sol.variables.get("w")
        r = self.F.shape[1]
        if w is None or np.shape(w) != (r,):
            if sol.coef is None:
                raise ValueError("the solution carries neither coef nor w of the right shape")
            w = self.w_from_coef(sol.coef)
        return np.asarray(w, float), float(sol.intercept) if self.has_intercept else 0.0

    def solution_from(self, w=None, coef=None, intercept=None, dual=None, **primal):
        """A :class:`Solution` from a user's own arrays, ready for :meth:`certify`.

        Give linear weights ``w`` (linear kernel only), or coefficients ``coef`` over the
        training points, and/or the dual variables by their SPEC names in ``dual``.
        With only a dual, the primal point is recovered by SPEC's map (``coef_from_dual``).
        Explicit primal slack variables (e.g. ``xi=``) may be given; otherwise they are
        the smallest feasible ones for the point.
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
                       variables=variables, status="user", solver="user", form="user")
        wv, b = self._primal_point(sol)
        sol.objective = self.primal_value(wv, b)
        return sol

    primal_slack_names: tuple = ("xi",)

    def _dual_size(self, name):
        return self.m

    # ---- certificate ------------------------------------------------------------
    def dual_candidates(self, w, b):
        """Dual points consistent with ``(w, b)`` by complementarity; the best one is used."""
        return []

    def certify(self, sol, tol=DEFAULT_TOL, reference="auto"):
        """KKT certificate of ``sol`` in SPEC's canonical scaling (see :mod:`refmodels.certify`).

        The primal point is ``w`` (feature space; from ``sol.variables["w"]`` or
        ``F^T coef``) and ``b``. The dual point is the solution's own dual variables when it
        carries them. Otherwise it is *derived from the margins*: every constraint that
        is strictly slack gets multiplier 0, every violated one (positive slack variable) its
        upper bound, and the multipliers of constraints that hold with equality, up to a
        tie threshold t, are chosen in their box by bounded least squares on the stationarity
        residual. Several thresholds t are tried (``TIE_THRESHOLDS``) and the dual point with
        the smallest worst scaled residual is reported, so a point gets the best certificate
        its margins allow. ``reference``: ``"auto"`` computes the reference optimum ``P*``
        when ``m <= AUTO_REFERENCE_MAX_M``; ``True`` always; ``False`` never; or a
        :class:`Solution` to compare with.
        """
        cert = Certificate(self.family, tol)
        w, b = self._primal_point(sol)
        P = self.primal_value(w, b)
        if all(k in sol.variables for k in self.dual_names):
            dual = {k: np.asarray(sol.variables[k], float) for k in self.dual_names}
            res = self.kkt_residuals(w, b, dual, sol)
            cert.notes.append("dual point: the solution's own dual variables")
        else:
            best = None
            for cand in self.dual_candidates(w, b):
                r = self.kkt_residuals(w, b, cand, sol)
                D = self.dual_value(cand)
                r["duality gap"] = (P - D, 1.0 + abs(P))
                worst = max(abs(a) / max(s, 1.0) for a, s in r.values())
                if best is None or worst < best[0]:
                    best = (worst, cand, r)
            if best is None:
                raise ValueError(f"{type(self).__name__} cannot derive a dual point from w; "
                                 "give the dual variables")
            _, dual, res = best
            cert.notes.append("dual point: derived from the margins (ties by bounded least squares)")
        D = self.dual_value(dual)
        res["duality gap"] = (P - D, 1.0 + abs(P))
        for k, (a, s) in res.items():
            cert.add(k, a, s)
        cert.values["objective"] = P
        cert.values["dual_objective"] = D
        self._add_objective_gap(cert, P, reference)
        cert.dual = dual
        return cert

    # ---- helpers for families ---------------------------------------------------
    def _solution(self, *, w, b, coef, variables, solver, form, elapsed, extra=None):
        variables = {k: (np.asarray(v, float) if v is not None else None)
                     for k, v in variables.items()}
        variables["w"] = np.asarray(w, float)
        if self.has_intercept:
            variables["b"] = float(b)
        return Solution(objective=self.primal_value(np.asarray(w, float), float(b)),
                        coef=np.asarray(coef, float), intercept=float(b), variables=variables,
                        status="optimal", solver=solver, form=form, time=elapsed,
                        info=dict(extra or {}))

    def _FtY(self):
        """``F^T Y`` (r x m), dense."""
        F = self.F
        if sp.issparse(F):
            return np.asarray((sp.diags(self.y) @ F).T.toarray())
        return (F * self.y[:, None]).T

    def _slack_violation(self, gamma, sol, name="xi", bound=1.0, upper=False):
        """Primal feasibility of given slack variables (0 when implied)."""
        xi = sol.variables.get(name) if sol is not None else None
        if xi is None or np.shape(xi) != (self.m,):
            return 0.0
        xi = np.asarray(xi, float)
        viol = (gamma - bound - xi) if upper else (bound - xi - gamma)
        return float(max(np.max(np.maximum(viol, 0.0)), np.max(np.maximum(-xi, 0.0))))


def warn_convergence(message):
    from sklearn.exceptions import ConvergenceWarning

    warnings.warn(message, ConvergenceWarning, stacklevel=3)
