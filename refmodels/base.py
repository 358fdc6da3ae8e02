"""Shared machinery of the problem classes: lazy data, CVXPY solves, decision
functions, user points and the generic KKT certificate.

A problem object stores validated inputs only and is never written to after
construction; the Gram matrix, the empirical kernel map ``F`` (``F F^T = G``) and the
reference optimum are built on first use inside the workspace of the call
(:mod:`refmodels.workspace`).
"""
from __future__ import annotations

import abc
import functools
import inspect
import warnings

import numpy as np
import scipy.sparse as sp

from . import kernels as _k
from ._validation import binary_labels, check_X
from .certify import (DEFAULT_TOL, OBJECTIVE_FLOOR, ROUNDOFF_UNITS,  # noqa: F401 (re-exported)
                      SMALL_OBJECTIVE, Certificate, objective_scale, relative_gap,
                      small_objective_note, zero_unit, PointContext, ExactW,
                      add_coef_consistency, given_slacks)
from .solution import Solution, SolverError
from .workspace import IN_WORKSPACE, active as _active_workspace, of as _workspace_of, \
    in_workspace as _in_workspace, using as _using
from ._numeric import data_span, guard_dense
from ._user_points import UserPoints
from . import representer as _rep
from .representer import FeatureVector
from .reference import (AUTO_REFERENCE_MAX_M, CLARABEL_DEFAULT,  # noqa: F401 (re-exported)
                        CLARABEL_LADDER, CLARABEL_MEDIUM, CLARABEL_TIGHT, RESCALE_AT,
                        SOLVER_DEFAULTS, TIE_THRESHOLDS, BinaryRescaling, ReferenceLadder,
                        derive_box_duals, installed_solvers, quad, run_cvxpy)


@functools.lru_cache(maxsize=None)
def _init_names(cls):
    """The constructor's argument names of a problem class (after ``self``), read once: a
    path or a grid search calls :meth:`Problem.replace` for every point."""
    return tuple(inspect.signature(cls.__init__).parameters)[1:]


class _Immutable(abc.ABCMeta):
    """Problems are immutable: once the constructor has returned, setting an attribute
    raises (what is computed from a problem lives in a workspace)."""

    def __call__(cls, *args, **kwargs):
        obj = super().__call__(*args, **kwargs)
        object.__setattr__(obj, "_frozen", True)
        return obj


class Problem(ReferenceLadder, abc.ABC, metaclass=_Immutable):
    """Base class of every formulation: data, kernel, lazy Gram / feature map.

    The family contract, in code: a family writes :meth:`solution_from`,
    :meth:`primal_value` and :meth:`dual_value` (abstract here), and either inherits the
    certified :meth:`solve` (writing ``_solve_primal`` / ``_solve_dual``) and the one
    :meth:`certify` (writing ``primal_point``, ``kkt_residuals(point, dual, sol)`` and
    ``dual_candidates(point, sol)``), or overrides them (DRR: one problem per test point;
    McODM: the non-convex outer loop). It registers in :mod:`refmodels.registry`.
    """

    @abc.abstractmethod
    def solution_from(self, *args, **kwargs):
        """A :class:`Solution` from a user's own arrays, ready for :meth:`certify`."""

    @abc.abstractmethod
    def primal_value(self, *point):
        """SPEC's canonical primal objective at a primal point."""

    @abc.abstractmethod
    def dual_value(self, dual):
        """The dual objective in maximisation form, ``D_max``, at a dual point."""

    family = "problem"
    has_intercept = False
    #: what the family offers beyond the contract, declared (the fast layer reads these,
    #: never probes): ``"margins"`` a binary margin objective ``objective_from_margins(gamma,
    #: ||w||^2)``; ``"stationarity_from_gram"`` its stationarity through kernel products
    #: (ODML, LDM); ``"slack_stationarity"`` (ODM); ``"test_points"`` one problem per test
    #: point (DRR); ``"base_kernels"`` several kernels (MKLm); ``"dual_from_gram"`` an exact
    #: dual value through kernel products. ``tests/test_contract.py`` checks each
    #: declaration against the methods present.
    capabilities: frozenset = frozenset()

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        for name in IN_WORKSPACE:
            fn = cls.__dict__.get(name)
            if callable(fn) and not getattr(fn, "in_workspace", False):
                setattr(cls, name, _in_workspace(fn))

    def __setattr__(self, name, value):
        if self.__dict__.get("_frozen", False):
            raise AttributeError(f"{type(self).__name__} is immutable: {name!r} cannot be set "
                                 "after construction; build a new problem with the new value")
        object.__setattr__(self, name, value)

    def __delattr__(self, name):
        if self.__dict__.get("_frozen", False):
            raise AttributeError(f"{type(self).__name__} is immutable: {name!r} cannot be "
                                 "deleted")
        object.__delattr__(self, name)

    def objective_at_zero(self):
        """The canonical objective at the zero decision function (``w = 0``, ``b = 0``: the
        trivial classifier), the unit of the objective-valued residuals (see
        ``OBJECTIVE_FLOOR``); None for a family without one (DRR: ``1 + |P|`` is kept)."""
        return None

    def roundoff_at(self, point, sol=None):
        """A bound on the round-off of evaluating ``P`` at ``point`` (0: none known)."""
        return 0.0

    def replace(self, **changes):
        """A new problem of this class on the same data with some hyperparameters changed
        (problems are immutable; ``prob.replace(C=4.0)``). The constructor's arguments are
        read back from the attributes of the same names (``X``, ``y`` as the user's labels,
        ``kernel``, ``lam``, ...): the same data objects, so the new problem shares this
        one's data entries of a workspace (Gram, feature map)."""
        cls = type(self)
        kwargs = {}
        for name in _init_names(cls):
            if name in changes:
                kwargs[name] = changes.pop(name)
            elif name == "y" and "classes_" in vars(self):
                kwargs[name] = self._labels_as_given()
            elif name in vars(self) or hasattr(cls, name):
                kwargs[name] = getattr(self, name)
        if changes:
            raise ValueError(f"{cls.__name__} has no hyperparameter(s) {sorted(changes)}")
        return cls(**kwargs)

    def _labels_as_given(self):
        """The labels in the user's terms: ``classes_`` indexed by the class indices (a
        multi-class problem) or by the +-1 labels (a binary one)."""
        y = np.asarray(self.y)
        if np.issubdtype(y.dtype, np.integer) and y.size and y.min() >= 0:
            return self.classes_[y]
        return self.classes_[(y > 0).astype(int)]

    @property
    def objective_unit(self):
        """The objective unit ``u`` of the objective-valued residuals (scaled by ``|P| + u``)
        before any point is known: ``min(1, OBJECTIVE_FLOOR |P0|)``
        (:meth:`objective_at_zero`), or 1 without ``P0``. A certificate uses
        :meth:`unit_at` of its point (``cert.values["objective_unit"]``)."""
        return self._zero_unit()

    def _zero_unit(self):
        """``min(1, OBJECTIVE_FLOOR |P0|)``, or 1 without ``P0``."""
        return zero_unit(self.objective_at_zero())

    def unit_at(self, point, sol=None):
        """The objective unit at ``point``: ``min(1, max(OBJECTIVE_FLOOR |P0|,
        ROUNDOFF_UNITS R))`` with ``R`` the round-off bound of :meth:`roundoff_at`, so that a
        point is never asked for a gap below what evaluating ``P`` resolves (raw
        breast_cancer, quadratic kernel, Gram entries 7e11: ``P = 4.3e-3`` evaluates to
        ~1e-9), and never more leniently than by ``1 + |P|``."""
        u = self._zero_unit()
        if u >= 1.0:
            return 1.0
        R = self.roundoff_at(point, sol)
        return float(min(1.0, max(u, ROUNDOFF_UNITS * R))) if np.isfinite(R) else 1.0

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

    # ---- lazily built data (kept in the workspace of the call) -----------------
    @property
    def data_key(self):
        """What the data entries of a workspace (Gram, feature map) are computed from."""
        return (self.X, self.kernel)

    def _cached(self, key, build, on=None):
        """``build()``, kept in the workspace of the call (else this problem's default
        workspace) under ``key`` computed from ``on`` (default: this problem;
        :attr:`data_key` for what depends on the data alone)."""
        ws = _active_workspace()
        ws = _workspace_of(self) if ws is None else ws
        return ws.get(key, (self,) if on is None else on, build)

    def _peek(self, key, on=None):
        ws = _active_workspace()
        ws = _workspace_of(self) if ws is None else ws
        return ws.peek(key, (self,) if on is None else on)

    @property
    def gram(self):
        """Gram matrix ``G`` of the training points (built on first use in a call)."""
        def build():
            if not self.kernel.is_precomputed:
                guard_dense(self.m, "the Gram matrix", copies=2)
            return self._finite_kernel(self.kernel.gram(self.X))
        return self._cached("gram", build, on=self.data_key)

    def _finite_kernel(self, M):
        """``M`` if every entry is finite, else a ValueError naming the kernel and ``X`` (a
        polynomial kernel on features ~1e80 overflows; CVXPY would only say "Problem data
        contains NaN or Inf")."""
        data = M.data if sp.issparse(M) else M
        if not np.all(np.isfinite(data)):
            raise ValueError(f"kernel={self.kernel!r} on X gives non-finite kernel values "
                             f"(overflow: X's largest |entry| is {_max_abs(self.X):.3g}); "
                             f"scale the features or choose another kernel")
        return M

    @property
    def gram_if_built(self):
        """The Gram matrix if the workspace of the call holds it, else None (never builds)."""
        if self.kernel.is_precomputed:
            return self.X
        return self._peek("gram", self.data_key)

    @property
    def F(self):
        """Feature matrix of the primal: ``X`` (linear kernel) or the empirical kernel map."""
        def build():
            if self.kernel.is_linear:
                return _k.feature_matrix(self.kernel, self.X)
            guard_dense(self.m, "the empirical kernel map (an m x m eigendecomposition)",
                        copies=4, cubic=True)
            return self._finite_kernel(_k.empirical_map(self.gram))
        return self._cached("F", build, on=self.data_key)

    def _check_points(self, Xn, name):
        """New points ``Xn`` validated against the training data: ``(n, d)`` features, or
        ``K(Xn, X_train)`` of shape ``(n, m)`` for ``kernel=Precomputed()``."""
        if self.kernel.is_precomputed:
            K = check_X(Xn, name)
            if K.shape[1] != self.m:
                raise ValueError(f"{name} must be K({name}, X_train) with {self.m} columns for "
                                 f"kernel=Precomputed(); got shape {K.shape}")
            return K
        Z = check_X(Xn, name, allow_sparse=self.kernel.is_linear)
        if Z.shape[1] != self.X.shape[1]:
            raise ValueError(f"{name} must have {self.X.shape[1]} features (as X); got "
                             f"{Z.shape[1]}")
        return Z

    def kernel_to(self, X_new):
        """``K[i, j] = k(x_i, x_new_j)`` (m x n_new), validated."""
        Z = self._check_points(X_new, "X_new")
        return Z.T if self.kernel.is_precomputed else self.kernel.cross(self.X, Z)

    def gram_times(self, v):
        """``G v`` without the feature map: ``X (X^T v)`` for the linear kernel; the Gram
        (the data itself for ``Precomputed``) up to ``AUTO_REFERENCE_MAX_M`` points; above,
        kernel blocks over the non-zeros of ``v`` (O(m nnz(v)) kernel evaluations, O(m)
        memory per block), whether or not a Gram was built. The way is chosen by the size
        alone, so that ``G v`` is the same to the bit whatever ran before."""
        v = np.asarray(v, dtype=float)
        if self.kernel.is_linear:
            return np.asarray(self.X @ np.asarray(self.X.T @ v).ravel()).ravel()
        if self.kernel.is_precomputed:
            return self.X @ v
        if self.m <= AUTO_REFERENCE_MAX_M:
            return self.gram @ v
        return _rep.memo_times(v, self._kernel_blocks_times)

    def gram_times_many(self, vs):
        """``[G v for v in vs]``, as :meth:`gram_times`; above ``AUTO_REFERENCE_MAX_M`` points
        (kernel blocks) in one pass over the blocks for all of them."""
        vs = [np.asarray(v, dtype=float) for v in vs]
        if self.kernel.is_linear or self.kernel.is_precomputed or self.m <= AUTO_REFERENCE_MAX_M:
            return [self.gram_times(v) for v in vs]
        return _rep.memo_times_many(vs, self._kernel_blocks_times_many)

    def _kernel_blocks_times(self, v):
        return self._kernel_blocks_times_many([v])[0]

    def _kernel_blocks_times_many(self, vs):
        """``G v`` for each ``v`` of ``vs`` by blocks of 1024 kernel columns over the union of
        their non-zeros, each block computed once for all of them (O(m) memory a block)."""
        V = np.column_stack(vs)
        nz = np.flatnonzero(np.any(V != 0.0, axis=1))
        out = np.zeros((self.m, V.shape[1]))
        for start in range(0, nz.size, 1024):
            idx = nz[start:start + 1024]
            K = self.kernel.cross(self.X, self.X[idx])
            for k in range(V.shape[1]):
                out[:, k] += K @ V[idx, k]
        return [np.ascontiguousarray(out[:, k]) for k in range(V.shape[1])]

    # ---- the one certificate (every family) ---------------------------------------
    #: what the note says when the dual point is derived rather than given
    derived_dual_note = "derived from the margins (ties by bounded least squares)"

    def primal_point(self, sol):
        """The primal point of ``sol`` as a tuple: ``(w, b)``, ``(mu, coef, b)``, ``(W,)``.

        The family's ``primal_value(*point)``, ``kkt_residuals(point, dual, sol)`` and
        ``dual_candidates(point, sol)`` take it.
        """
        raise NotImplementedError

    def _check_solution(self, sol):
        """Refuse what is not a Solution (families add their shapes)."""
        if not isinstance(sol, Solution):
            raise ValueError(f"sol must be a refmodels.Solution (from solve(), fast.solve() or "
                             f"solution_from()); got {type(sol).__name__}")

    def _certificate_extras(self, cert, sol, point):
        """Family residuals or values beyond the common core (default: none)."""

    def _dual_value(self, dual):
        exact = getattr(self, "dual_value_exact", None)
        return exact(dual) if exact is not None else self.dual_value(dual)

    def feasible_dual(self, dual):
        """``dual`` moved onto the dual's feasible set where the family states the set
        (:func:`refmodels.certify.project_boxes`), so that ``D`` there is a lower bound of
        every primal value; ``dual`` itself elsewhere."""
        return dual

    def _dual_value_at(self, point, dual):
        """The dual value the certificate compares with ``P`` at ``point`` (a family whose
        exact dual value cannot be had in the representer form states a lower bound)."""
        return self._dual_value(dual)

    def certify(self, sol, tol=DEFAULT_TOL, reference="auto", *, workspace=None, mode="full"):
        """KKT certificate of ``sol`` in SPEC's canonical scaling (see :mod:`refmodels.certify`).

        The primal point is :meth:`primal_point` (for a binary problem ``w`` in feature
        space, from ``sol.variables["w"]`` or ``F^T coef``, and ``b``). The dual point is the
        solution's own dual variables when it carries them. Otherwise it is *derived*
        (:meth:`dual_candidates`): every constraint that is strictly slack gets multiplier
        0, every violated one its upper bound, and the multipliers of constraints that hold
        with equality, up to a tie threshold t, are chosen in their box by bounded least
        squares on the stationarity residual. Several thresholds t are tried
        (``TIE_THRESHOLDS``) and the dual point with the smallest worst scaled residual is
        reported, so a point gets the best certificate its margins allow. ``reference``:
        ``"auto"`` computes the reference optimum ``P*`` when ``m <= AUTO_REFERENCE_MAX_M``;
        ``True`` always; ``False`` never; or a :class:`Solution` to compare with. The
        reference gap is reported as unavailable (never raised) when the reference refuses.
        A factorisation that fails on numerically singular data raises
        :class:`SolverError` (not numpy's LinAlgError).

        The certificate is a pure function of (problem, point, tol, reference): the same
        point gets the same residuals, to the bit, whatever ran before. ``workspace``: a
        :class:`refmodels.Workspace` whose Gram, feature map and reference optimum are
        reused (they are computed, and dropped afterwards, without one).

        ``mode="cheap"``: what a fast solver asks before it says ``optimal``
        (:mod:`refmodels.cheap`): the returned point's objective, duality gap against the
        solver's own dual value and consistency of what it returned, by kernel products,
        judged at a tenth of ``tol``; the full residuals where they cost little or the cheap
        ones cannot be trusted. It never computes the reference optimum (``reference`` is
        ignored).
        """
        if mode not in ("full", "cheap"):
            raise ValueError(f"mode must be 'full' or 'cheap'; got {mode!r}")
        with _using(workspace, owner=self), _rep.products():
            self._check_solution(sol)
            if mode == "cheap":
                from .cheap import certify_cheap

                return certify_cheap(self, sol, tol)
            ref, why = self._reference_or_reason(reference)
            try:
                ctx = self._point_context(sol)
                cert = self._certify_at(ctx, tol)
            except np.linalg.LinAlgError as exc:
                span = data_span(self)
                where = f"; the data span {span:.0e}: scale the features" if span else ""
                raise SolverError(f"the certificate of {type(self).__name__} cannot be "
                                  f"computed: a factorisation failed ({exc}){where}") from exc
            self._add_objective_gap(cert, cert.values["objective"], ref, why, ctx)
            cert.problem, cert.solution = self, sol    # what it certifies (cert.diagnose())
            return cert

    def _point_context(self, sol):
        """The :class:`PointContext` of ``sol``: its primal point and objective unit."""
        point = self.primal_point(sol)
        return PointContext(sol, point, self.unit_at(point, sol))

    def _certify_at(self, ctx, tol):
        """The certificate's residuals at the point of ``ctx`` (no objective gap)."""
        sol, point = ctx, ctx.point
        cert = Certificate(self.family, tol)
        P = self.primal_value(*point)
        cert.values["objective"] = P        # (the extras compare the objective at coef with it)
        self._certificate_extras(cert, sol, point)
        if all(sol.variables.get(k) is not None for k in self.dual_names):
            dual = {k: np.asarray(sol.variables[k], float) for k in self.dual_names}
            res = self.kkt_residuals(point, dual, sol)
            cert.notes.append("dual point: the solution's own dual variables")
        else:
            best = None
            for cand in self.dual_candidates(point, sol):
                r = self.kkt_residuals(point, cand, sol)
                r["duality gap"] = (P - self._dual_value_at(point, self.feasible_dual(cand)),
                                    objective_scale(self, P, ctx))
                worst = max(abs(a) / s if s > 0 else abs(a) for a, s in r.values())
                if best is None or worst < best[0]:
                    best = (worst, cand, r)
            if best is None:
                raise ValueError(f"{type(self).__name__} cannot derive a dual point from this "
                                 "point; give the dual variables")
            _, dual, res = best
            cert.notes.append(f"dual point: {self.derived_dual_note}")
        feasible = self.feasible_dual(dual)
        moved = max((float(np.max(np.abs(feasible[k] - dual[k]), initial=0.0)) for k in dual
                     if feasible[k] is not dual[k]), default=0.0)
        if moved > 0.0:
            cert.notes.append(f"duality gap: at the dual point moved onto the dual's feasible "
                              f"set (by at most {moved:.2e}), where D bounds the optimum")
        D = self._dual_value_at(point, feasible)
        if moved > 0.0:                 # (what the point as given claims: explain() names it)
            cert.values["dual_objective_given"] = self._dual_value_at(point, dual)
        res["duality gap"] = (P - D, objective_scale(self, P, ctx))
        for k, (a, s) in res.items():
            cert.add(k, a, s)
        cert.values["objective"] = P
        cert.values["dual_objective"] = D
        cert.values["relative_gap"] = relative_gap(P, D)
        cert.values["objective_unit"] = ctx.unit
        if abs(P) < SMALL_OBJECTIVE * ctx.unit:
            cert.notes.append(small_objective_note(P, D, ctx.unit))
        cert.dual = dual
        return cert

    # ---- predictions ----------------------------------------------------------
    def _primal_scores(self, sol, X_new, name):
        """``X_new @ sol.variables[name]``: the scores of a linear-kernel solution given by
        its primal weights alone (no ``coef``)."""
        W = sol.variables.get(name)
        if W is None or not self.kernel.is_linear:
            raise ValueError(f"sol must carry coef (or {name} for the linear kernel)")
        Z = check_X(X_new, "X_new", allow_sparse=True)
        if Z.shape[1] != np.shape(W)[0]:
            raise ValueError(f"X_new must have {np.shape(W)[0]} features (as X); got {Z.shape[1]}")
        return np.asarray(Z @ W)

    def decision_function(self, sol, X_new):
        """``f(x) = sum_i coef_i k(x_i, x) + intercept`` for the rows of ``X_new``."""
        if sol.coef is None:
            return self._primal_scores(sol, X_new, "w").ravel() + sol.intercept
        K = self.kernel_to(X_new)
        return K.T @ sol.coef + sol.intercept

    def predict(self, sol, X_new):
        f = self.decision_function(sol, X_new)
        return np.where(f >= 0, self.classes_[1], self.classes_[0])


for _cls in (Problem, ReferenceLadder):
    for _name in IN_WORKSPACE:
        _fn = _cls.__dict__.get(_name)
        if callable(_fn) and not getattr(_fn, "__isabstractmethod__", False):
            setattr(_cls, _name, _in_workspace(_fn))


class BinaryProblem(UserPoints, BinaryRescaling, Problem):
    """A binary margin problem over ``w`` (feature space) and optionally ``b``.

    Subclasses state the formulation: ``_solve_primal``, ``_solve_dual``,
    ``objective_from_margins(gamma, ||w||^2)`` (and ``primal_value(w, b)`` from it),
    ``dual_value(dual)``, ``coef_from_dual(dual)``, ``kkt_residuals((w, b), dual, sol)`` and
    ``dual_candidates((w, b), sol)``.
    """

    def __init__(self, X, y, kernel=None):
        super().__init__(X, kernel)
        self.y, self.classes_ = binary_labels(y, self.m, "y")

    solution_from = UserPoints.solution_from       # (here, so that it runs in a workspace)

    @abc.abstractmethod
    def _solve_primal(self, solver, verbose, opts):
        """The CVXPY primal of SPEC; returns a :class:`Solution` (refined by the family)."""

    @abc.abstractmethod
    def _solve_dual(self, solver, verbose, opts):
        """The CVXPY dual of SPEC, mapped to the primal point by SPEC's maps."""

    @abc.abstractmethod
    def coef_from_dual(self, dual):
        """SPEC's map from a dual point to ``(coef, intercept or None)``."""

    @abc.abstractmethod
    def kkt_residuals(self, point, dual, sol=None):
        """``{name: (absolute, scale)}``: feasibility, complementarity, stationarity."""

    # ---- points ---------------------------------------------------------------
    def margins(self, w, b=0.0):
        """``gamma_i = y_i (w^T phi(x_i) + b)`` for ``w`` in feature-space coordinates.

        Inside :meth:`certify`, for a point given by ``coef`` on a non-linear kernel, the
        margins are ``y (G coef + b)`` (kernel products, exact) rather than through the
        empirical map, which drops eigenvalues below 1e-12 of the largest: on a Gram with
        entries of 1e10 that truncation alone moves the margins by O(1)."""
        if isinstance(w, FeatureVector) or (isinstance(w, ExactW) and w.Gc is not None):
            return self.y * (w.Gc + b)
        return self.y * (np.asarray(self.F @ w).ravel() + b)

    def _norm2(self, w):
        """``||w||^2``: ``coef^T G coef`` for the point being certified (see :meth:`margins`)."""
        if isinstance(w, FeatureVector):
            return w.norm2()
        if isinstance(w, ExactW) and w.wnorm2 is not None:
            return w.wnorm2
        return float(w @ w)

    def objective_at(self, coef, b=0.0, Gc=None):
        """The canonical primal objective at ``f = sum_i coef_i k(x_i, .) + b``, evaluated
        through kernel products (``G coef``; no feature map), with the margins.

        Returns ``(P, gamma, G coef)``. The families state the objective once, in
        ``objective_from_margins(gamma, ||w||^2)``; :meth:`primal_value` is the same
        function in feature-space coordinates. ``Gc``: ``G coef`` when the caller has it
        from exact kernel rows (a solver's row cache).
        """
        coef = np.asarray(coef, dtype=float)
        Gc = self.gram_times(coef) if Gc is None else np.asarray(Gc, dtype=float)
        gamma = self.y * (Gc + (b if self.has_intercept else 0.0))
        wnorm2 = max(float(coef @ Gc), 0.0)
        return self.objective_from_margins(gamma, wnorm2), gamma, Gc

    def objective_at_zero(self):
        """The objective of ``f = 0`` from the margins (all 0), e.g. ``C m`` for the hinge."""
        if "margins" not in self.capabilities:
            return None
        return float(self.objective_from_margins(np.zeros(self.m), 0.0))

    def roundoff_at(self, point, sol=None):
        """``eps (|P0| rho + q)``: ``rho`` bounds the magnitudes each margin is summed from
        (``max_i sum_j |K_ij| |coef_j| <= max_k K_kk sum_j |coef_j|`` for a PSD kernel, or
        ``max_i |F_i| |w|`` in feature space), ``|P0|`` (:meth:`objective_at_zero`) the
        weight of the loss terms, ``q`` the same bound for ``||w||^2``."""
        P0 = self.objective_at_zero()
        if P0 is None:
            return 0.0
        w = point[0]
        coef = getattr(sol, "coef", None) if sol is not None else None
        if coef is not None and not self.kernel.is_linear:
            c = float(np.sum(np.abs(coef)))
            rho = float(np.max(np.abs(self.kernel.diag(self.X)), initial=0.0)) * c
            q = rho * c
        else:
            w = np.asarray(w, float)
            F = self.F
            if sp.issparse(F) and F.format in ("csr", "csc"):
                # |F| sharing F's index arrays (abs(F) copied them too: at 35 M stored
                # entries 0.14 GB and a second of the self-check)
                Fa = type(F)((np.abs(F.data), F.indices, F.indptr), shape=F.shape)
            else:
                Fa = abs(F) if sp.issparse(F) else np.abs(F)
            rho = float(np.max(np.asarray(Fa @ np.abs(w)).ravel(), initial=0.0))
            q = float(w @ w)
        return float(np.finfo(float).eps * (abs(P0) * rho + q))

    def w_from_coef(self, coef):
        """``w = F^T coef`` (feature-space coordinates of ``sum_i coef_i phi(x_i)``)."""
        return np.asarray(self.F.T @ coef).ravel()

    def _FtYv(self, v, like=None):
        """``F^T Y v`` in the form of the point ``like``: a :class:`FeatureVector` for a
        point in the representer form, else an array (never the dense ``F^T Y`` of a
        sparse ``F``)."""
        if isinstance(like, FeatureVector):
            return FeatureVector(self, self.y * np.asarray(v, float))
        if sp.issparse(self.F):
            return np.asarray(self.F.T @ (self.y * np.asarray(v, float))).ravel()
        return self._FtY() @ v

    def _primal_point(self, sol):
        if _rep.applies(self):
            if sol.coef is None:
                raise ValueError(f"sol must carry coef of shape ({self.m},): above "
                                 f"{_rep.REPRESENTER_MIN_M} points a kernel point is certified "
                                 "from its coefficients")
            b = float(sol.intercept) if self.has_intercept else 0.0
            return FeatureVector(self, np.asarray(sol.coef, float)), b
        w = sol.variables.get("w")
        r = self.F.shape[1]
        if w is None or np.shape(w) != (r,):
            if sol.coef is None:
                raise ValueError("sol must carry coef of shape (m,) = "
                                 f"({self.m},) or w of shape ({r},); it carries neither")
            w = self.w_from_coef(sol.coef)
        b = float(sol.intercept) if self.has_intercept else 0.0
        return np.asarray(w, float), b

    def _point_context(self, sol):
        """For a point given by ``coef`` on a non-linear kernel, ``w`` is an :class:`ExactW`
        carrying ``G coef``: the margins and ``||w||^2`` by kernel products (exact)."""
        if ("margins" not in self.capabilities or self.kernel.is_linear
                or sol.coef is None or _rep.applies(self)):
            return super()._point_context(sol)
        coef = np.asarray(sol.coef, dtype=float)
        w, b = self._primal_point(sol)
        Gc = self.gram_times(coef)
        point = (ExactW(w, Gc, max(float(coef @ Gc), 0.0)), b)
        return PointContext(sol, point, self.unit_at(point, sol))

    def dual_value_exact(self, dual):
        """``D_max`` through kernel products when the family states it so
        (``dual_value_from_gram``; SVM, ODM, SVMm), else :meth:`dual_value`."""
        if "dual_from_gram" not in self.capabilities or self.kernel.is_linear:
            return self.dual_value(dual)
        nu = np.asarray(self.coef_from_dual(dual)[0], dtype=float)
        return self.dual_value_from_gram(dual, self.gram_times(nu))

    # ---- certificate ------------------------------------------------------------
    def dual_candidates(self, w, b):
        """Dual points consistent with ``(w, b)`` by complementarity; the best one is used."""
        return []

    def primal_point(self, sol):
        """The primal point of ``sol`` as the tuple the family's residuals take: ``(w, b)``."""
        return self._primal_point(sol)

    def _certificate_extras(self, cert, sol, point):
        """Predictions use ``coef``, the residuals ``w``: when both are given they must be
        one point. Three residuals: ``w = F^T coef`` in feature space (scaled by
        ``1 + ||w||``), and the decision values on the training points, ``F w + b`` against
        ``F F^T coef + b`` (scaled by ``1 + max_i |f_i|``). The second is what predictions
        see and does not depend on the scale of the features: with features x1e4, ``||w||``
        is ~1e-4 and a ``coef`` 1e-7 away from ``F^T``-consistency passes the first while
        its decision values are off by ~1e-3 (a reference point whose objective at ``coef``
        was 280 against 2.8e-8 at ``w``); and the primal objective at ``F^T coef`` against
        that at ``w`` (scaled by :func:`objective_scale`)."""
        w, b = point
        if isinstance(w, FeatureVector):
            return                               # the point is its coef
        if sol.coef is not None and "w" in sol.variables and sol.variables["w"] is not None \
                and np.shape(sol.variables["w"]) == np.shape(w):
            wc = self.w_from_coef(sol.coef)
            cert.add("w = F^T coef", float(np.linalg.norm(w - wc)),
                     1.0 + float(np.linalg.norm(w)))
            F = self.F
            add_coef_consistency(cert, "decision values (coef vs w)",
                                 np.asarray(F @ w).ravel() + (b or 0.0),
                                 np.asarray(F @ (w - wc)).ravel(), cert.values["objective"],
                                 self.primal_value(wc, *point[1:]),
                                 objective_scale(self, cert.values["objective"], sol))

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


def _max_abs(X):
    data = X.data if sp.issparse(X) else np.asarray(X)
    return float(np.max(np.abs(data), initial=0.0))


def warn_convergence(message):
    from sklearn.exceptions import ConvergenceWarning

    warnings.warn(message, ConvergenceWarning, stacklevel=3)
