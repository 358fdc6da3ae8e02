"""Shared machinery of the problem classes: lazy data, CVXPY solves, decision
functions, user points and the generic KKT certificate.

A problem object stores validated inputs only; the Gram matrix, the empirical
kernel map ``F`` (``F F^T = G``, SPEC notation) and CVXPY problems are built on
first use and cached.
"""
from __future__ import annotations

import abc
import time
import warnings

import numpy as np
import scipy.sparse as sp
from scipy.optimize import lsq_linear

from . import kernels as _k
from ._validation import binary_labels, check_vector, check_X
from .certify import DEFAULT_TOL, Certificate
from .solution import Solution, SolverError

def _attempt(build, form, solver, verbose, opts):
    """One rung of the reference ladder: ``(solution, None)``, or ``(None, why)`` when the
    solver raised (``SolverError`` or a failed factorisation)."""
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*Solution may be inaccurate.*")
            return build(form, solver, verbose, dict(opts)), None
    except SolverError as exc:
        return None, f"solver error: {exc}"
    except np.linalg.LinAlgError as exc:
        return None, f"linear algebra error: {exc}"


#: the rescaled rung of the reference ladder (:meth:`Problem._certified_solve`) runs when the
#: Gram scale ``s`` (:meth:`BinaryProblem.gram_scale`) is above this or below its reciprocal
RESCALE_AT = 1e3

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


#: the one CVXPY tolerance ladder (every family): Clarabel's tolerances tried in turn by
#: ``run_cvxpy(..., ladder=True)`` when the caller set none: tight, medium, then Clarabel's
#: own defaults passed explicitly (CVXPY keeps the settings of the previous call in its
#: cached solver object). A prox-gradient residual (DRR) or a weakly active multiplier
#: (mcODM) needs more than the default 1e-8.
CLARABEL_TIGHT = {"tol_gap_abs": 1e-12, "tol_gap_rel": 1e-12, "tol_feas": 1e-12,
                  "tol_ktratio": 1e-10}
CLARABEL_MEDIUM = {"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10,
                   "tol_ktratio": 1e-8}
CLARABEL_DEFAULT = {"tol_gap_abs": 1e-8, "tol_gap_rel": 1e-8, "tol_feas": 1e-8,
                    "tol_ktratio": 1e-6}
CLARABEL_LADDER = (CLARABEL_TIGHT, CLARABEL_MEDIUM, CLARABEL_DEFAULT)

_INSTALLED_SOLVERS = []


def installed_solvers():
    """CVXPY's installed solvers (cached: ``cp.installed_solvers()`` costs ~30 ms a call)."""
    if not _INSTALLED_SOLVERS:
        import cvxpy as cp

        _INSTALLED_SOLVERS.extend(cp.installed_solvers())
    return _INSTALLED_SOLVERS


def _data_span(prob):
    X = getattr(prob, "X", None)
    if X is None:
        return None
    data = X.data if sp.issparse(X) else np.asarray(X)
    return float(np.max(np.abs(data))) if data.size else None


def run_cvxpy(problem, solver, verbose=False, ladder=False, **options):
    """Solve a CVXPY problem; raise :class:`SolverError` unless it reports ``optimal``.

    ``ladder=True`` (Clarabel, no ``tol*`` option given): the levels of
    :data:`CLARABEL_LADDER` in turn, the first one reported optimal wins; ``ladder`` may
    also be the tuple of levels to try (e.g. ``CLARABEL_LADDER[1:]``).
    """
    import cvxpy as cp

    if ladder and str(solver).upper() == "CLARABEL" and not any(k.startswith("tol")
                                                                 for k in options):
        levels = CLARABEL_LADDER if ladder is True else tuple(ladder)
        t0 = time.perf_counter()
        for i, level in enumerate(levels):
            try:
                with warnings.catch_warnings():
                    warnings.filterwarnings("ignore", message=".*Solution may be inaccurate.*")
                    run_cvxpy(problem, solver, verbose, **level, **options)
                return time.perf_counter() - t0
            except SolverError:
                if i == len(levels) - 1:
                    raise

    solver = (solver or "CLARABEL").upper()
    if solver not in installed_solvers():
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


class _FixedPoint:
    """A Solution whose primal point is already computed (passed through ``_certify``)."""

    def __init__(self, sol, point):
        self._sol, self.point = sol, point

    def __getattr__(self, name):
        return getattr(self._sol, name)


class Problem(abc.ABC):
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

    def objective_at_zero(self):
        """The canonical objective at the zero decision function (``w = 0``, ``b = 0``: the
        trivial classifier), the unit of the objective-valued residuals (see
        ``OBJECTIVE_FLOOR``); None for a family without one (DRR: ``1 + |P|`` is kept)."""
        return None

    def roundoff_at(self, point, sol=None):
        """A bound on the round-off of evaluating ``P`` at ``point`` (0: none known)."""
        return 0.0

    #: the objective unit of the point being certified (:meth:`unit_at`), while it is
    _point_unit = None

    @property
    def objective_unit(self):
        """The objective unit ``u`` of the objective-valued residuals (scaled by ``|P| + u``):
        :meth:`unit_at` of the point being certified, else ``min(1, OBJECTIVE_FLOOR |P0|)``
        (:meth:`objective_at_zero`), or 1 without ``P0``."""
        if self._point_unit is not None:
            return self._point_unit
        return self._zero_unit()

    def _zero_unit(self):
        """``min(1, OBJECTIVE_FLOOR |P0|)``, or 1 without ``P0``."""
        P0 = self.objective_at_zero()
        if P0 is None or not np.isfinite(P0) or P0 == 0.0:
            return 1.0
        return min(1.0, OBJECTIVE_FLOOR * abs(float(P0)))

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
        self._cache = {}

    # ---- lazily built data -------------------------------------------------
    def _cached(self, key, build):
        if key not in self._cache:
            self._cache[key] = build()
        return self._cache[key]

    @property
    def gram(self):
        """Gram matrix ``G`` of the training points (built on first use)."""
        return self._cached("gram", lambda: self._finite_kernel(self.kernel.gram(self.X)))

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
        """The Gram matrix if it has been built already, else None (never builds it)."""
        return self._cache.get("gram")

    @property
    def F(self):
        """Feature matrix of the primal: ``X`` (linear kernel) or the empirical kernel map."""
        return self._cached("F", lambda: self._finite_kernel(
            _k.feature_matrix(self.kernel, self.X)))

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
        """``G v`` without the feature map: ``X (X^T v)`` for the linear kernel; the Gram if
        it is built (or is the data), or built afresh and not kept up to
        ``AUTO_REFERENCE_MAX_M`` points; else kernel blocks over the non-zeros of ``v``
        (O(m nnz(v)) kernel evaluations, O(m) memory per block), without building and
        caching the Gram (a check must not change the path of a later solve)."""
        v = np.asarray(v, dtype=float)
        if self.kernel.is_linear:
            return np.asarray(self.X @ np.asarray(self.X.T @ v).ravel()).ravel()
        if self.gram_if_built is not None or self.kernel.is_precomputed:
            return self.gram @ v
        if self.m <= AUTO_REFERENCE_MAX_M:
            # the Gram as `gram` builds it, not cached: the same K v (to the bit) whether
            # or not a solve built the Gram first, so that a certificate's verdict does not
            # depend on the cache (raw x50 features, cubic kernel, C = 2^19: K coef by
            # blocks 2.3e-13 off the matmul, the duality gap 1.01e-6 against 8.5e-7)
            return np.asarray(self.kernel.gram(self.X)) @ v
        nz = np.flatnonzero(v)
        out = np.zeros(self.m)
        for start in range(0, nz.size, 1024):
            idx = nz[start:start + 1024]
            out += self.kernel.cross(self.X, self.X[idx]) @ v[idx]
        return out

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
        return self._certified_solve(form, solver.upper(), verbose, solver_options)

    def _certified_solve(self, form, solver, verbose, options, build=None, other=None):
        """The reference never says ``optimal`` for a point that fails its own certificate.

        CVXPY's point (refined on its active set by the family) is certified with
        ``certify(reference=False)``. If it fails, the ladder goes on: Clarabel with tight
        tolerances, the other form (primal / dual), then OSQP; the first point that
        certifies is returned (``info["attempts"]`` records the ladder). Last rung, for a
        family with :attr:`rescale_params` whose Gram scale ``s`` (:meth:`gram_scale`) is
        outside ``[1/RESCALE_AT, RESCALE_AT]``: the same attempts on the equivalent
        rescaled problem (:meth:`_rescaled`), each point mapped back (:meth:`_map_back`)
        and certified on this problem (``info["rescaled"] = s``). If none certifies,
        :class:`SolverError` is raised with the best residuals reached.
        """
        if other is None:
            other = "primal" if form == "dual" else "dual"
        custom_build = build is not None
        if build is None:
            def build(f, s, verbose, opts):
                return (self._solve_primal if f == "primal" else self._solve_dual)(
                    s, verbose, opts)
        ladder = [(form, solver, options), (form, "CLARABEL", CLARABEL_TIGHT),
                  (other, "CLARABEL", CLARABEL_TIGHT), (form, "OSQP", {})]
        attempts, best = [], None
        for f, s, opts in ladder:
            if (f, s, opts) in [(a[0], a[1], a[2]) for a in attempts]:
                continue
            if s != solver and s not in installed_solvers():
                continue
            sol, failed = _attempt(build, f, s, verbose, opts)
            if failed:
                attempts.append((f, s, opts, failed))
                continue
            if sol.status != "optimal":
                return sol                    # e.g. max_iter asked for: it says so itself
            try:
                cert = self.certify(sol, reference=False)
            except (np.linalg.LinAlgError, ValueError) as exc:
                attempts.append((f, s, opts, f"certificate not computable: {exc}"))
                continue
            name, worst = cert.worst
            attempts.append((f, s, opts, f"{name} {worst:.2e}"))
            if cert.ok:
                sol.info["attempts"] = [f"{a[1]} {a[0]}: {a[3]}" for a in attempts]
                return sol
            if best is None or abs(worst) < abs(best[1]):
                best = (name, worst)
        if not custom_build:
            sol = self._rescaled_rung(ladder, solver, verbose, attempts)
            if sol is not None:
                return sol
        log = "; ".join(f"{a[1]} {a[0]}: {a[3]}" for a in attempts)
        hint = ""
        span = _data_span(self)
        if span is not None and (span > 1e3 or span < 1e-3):
            hint = f" The data span {span:.0e}: scale the features."
        raise SolverError(f"no reference point for {type(self).__name__} certifies at "
                          f"tol={DEFAULT_TOL:g} (tried {log}).{hint}")

    # ---- the rescaled rung ---------------------------------------------------------------
    #: the hyperparameters that weigh every term of the objective but ``1/2 ||w||^2`` (the
    #: loss terms, functions of the margins only), set by a family for which
    #: ``phi -> phi / sqrt(s)`` is an equivalent problem (see :meth:`_rescaled`); None: the
    #: ladder has no rescaled rung (MKLm: several kernels; McODM, DRR/DRM: other objectives)
    rescale_params = None

    def gram_scale(self):
        """The Gram scale ``s`` of the rescaled rung, or None when the family has none."""
        return None

    def _rescaled(self, s):
        """The equivalent problem with the features divided by ``sqrt(s)`` (None: none)."""
        return None

    def _map_back(self, sol, s):
        """A solution of :meth:`_rescaled` ``(s)`` as a solution of this problem."""
        raise NotImplementedError

    def _rescaled_rung(self, ladder, solver, verbose, attempts):
        """The last rung of :meth:`_certified_solve`: the ladder's attempts on the equivalent
        rescaled problem, each point mapped back and certified on this problem; the first
        that certifies is returned, else None (``attempts`` records every try)."""
        s = self.gram_scale()
        if s is None or not np.isfinite(s) or s <= 0 or 1.0 / RESCALE_AT <= s <= RESCALE_AT:
            return None
        tag = f"rescaled by s={s:.3g}"
        try:
            twin = self._rescaled(s)
        except (ValueError, np.linalg.LinAlgError) as exc:
            attempts.append(("", tag, {}, f"problem not built: {exc}"))
            return None
        if twin is None:
            return None
        tried = []
        for f, sv, opts in ladder:
            if (f, sv, opts) in tried or (sv != solver and sv not in installed_solvers()):
                continue
            tried.append((f, sv, opts))
            sol_r, failed = _attempt(
                lambda f_, s_, v_, o_: (twin._solve_primal if f_ == "primal"
                                        else twin._solve_dual)(s_, v_, o_),
                f, sv, verbose, opts)
            if failed:
                attempts.append((f, sv, opts, f"{tag}: {failed}"))
                continue
            if sol_r.status != "optimal":
                attempts.append((f, sv, opts, f"{tag}: status {sol_r.status}"))
                continue
            try:
                sol = self._map_back(sol_r, s)
                cert = self.certify(sol, reference=False)
            except (np.linalg.LinAlgError, ValueError, SolverError) as exc:
                attempts.append((f, sv, opts, f"{tag}: certificate not computable: {exc}"))
                continue
            name, worst = cert.worst
            attempts.append((f, sv, opts, f"{tag}: {name} {worst:.2e}"))
            if cert.ok:
                sol.info["attempts"] = [f"{a[1]} {a[0]}: {a[3]}" for a in attempts]
                sol.info["rescaled"] = s
                return sol
        return None

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
        """Add the objective gap ``P - P*`` to ``cert`` (or a note saying why it is absent).

        When the reference optimum cannot be computed (the reference refuses: no CVXPY point
        certifies, or the data make a factorisation fail), the gap is reported as
        unavailable with the reason; the certificate is then judged on its KKT residuals
        and duality gap alone, which bound the objective gap.
        """
        try:
            ref = self._reference_for(reference)
        except (SolverError, np.linalg.LinAlgError) as exc:
            cert.values["reference_objective"] = None
            cert.notes.append(f"reference optimum unavailable ({type(exc).__name__}: {exc}); "
                              "objective gap not computed, the duality gap bounds it")
            return
        if ref is not None:
            cert.values["reference_objective"] = ref.objective
            cert.add("objective gap", P - ref.objective, objective_scale(self, ref.objective))
        else:
            cert.notes.append("objective gap not computed (reference=False or m above "
                              f"{AUTO_REFERENCE_MAX_M}); the duality gap bounds it")

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
        if isinstance(sol, _FixedPoint):
            sol = sol._sol
        if not isinstance(sol, Solution):
            raise ValueError(f"sol must be a refmodels.Solution (from solve(), fast.solve() or "
                             f"solution_from()); got {type(sol).__name__}")

    def _certificate_extras(self, cert, sol, point):
        """Family residuals or values beyond the common core (default: none)."""

    def _dual_value(self, dual):
        exact = getattr(self, "dual_value_exact", None)
        return exact(dual) if exact is not None else self.dual_value(dual)

    def certify(self, sol, tol=DEFAULT_TOL, reference="auto"):
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
        """
        try:
            return self._certify(sol, tol, reference)
        except np.linalg.LinAlgError as exc:
            span = _data_span(self)
            where = f"; the data span {span:.0e}: scale the features" if span else ""
            raise SolverError(f"the certificate of {type(self).__name__} cannot be computed: a "
                              f"factorisation failed ({exc}){where}") from exc

    def _certify(self, sol, tol, reference):
        self._check_solution(sol)
        point = sol.point if isinstance(sol, _FixedPoint) else self.primal_point(sol)
        unit = self.unit_at(point, sol)
        self._point_unit = unit
        try:
            return self._certify_at(sol, tol, reference, point)
        finally:
            self._point_unit = None

    def _certify_at(self, sol, tol, reference, point):
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
                r["duality gap"] = (P - self._dual_value(cand), objective_scale(self, P))
                worst = max(abs(a) / s if s > 0 else abs(a) for a, s in r.values())
                if best is None or worst < best[0]:
                    best = (worst, cand, r)
            if best is None:
                raise ValueError(f"{type(self).__name__} cannot derive a dual point from this "
                                 "point; give the dual variables")
            _, dual, res = best
            cert.notes.append(f"dual point: {self.derived_dual_note}")
        D = self._dual_value(dual)
        res["duality gap"] = (P - D, objective_scale(self, P))
        for k, (a, s) in res.items():
            cert.add(k, a, s)
        cert.values["objective"] = P
        cert.values["dual_objective"] = D
        cert.values["relative_gap"] = relative_gap(P, D)
        cert.values["objective_unit"] = self.objective_unit
        if abs(P) < SMALL_OBJECTIVE * self.objective_unit:
            cert.notes.append(small_objective_note(P, D, self.objective_unit))
        self._add_objective_gap(cert, P, reference)
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


class BinaryProblem(Problem):
    """A binary margin problem over ``w`` (feature space) and optionally ``b``.

    Subclasses state the formulation: ``_solve_primal``, ``_solve_dual``,
    ``objective_from_margins(gamma, ||w||^2)`` (and ``primal_value(w, b)`` from it),
    ``dual_value(dual)``, ``coef_from_dual(dual)``, ``kkt_residuals((w, b), dual, sol)`` and
    ``dual_candidates((w, b), sol)``.
    """

    def __init__(self, X, y, kernel=None):
        super().__init__(X, kernel)
        self.y, self.classes_ = binary_labels(y, self.m, "y")

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
        ex = getattr(self, "_exact_point", None)
        if ex is not None and ex[0] is w:
            return self.y * (ex[1] + b)
        return self.y * (np.asarray(self.F @ w).ravel() + b)

    def _norm2(self, w):
        """``||w||^2``: ``coef^T G coef`` for the point being certified (see :meth:`margins`)."""
        ex = getattr(self, "_exact_point", None)
        if ex is not None and ex[0] is w:
            return ex[2]
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

    # ---- the rescaled rung (see Problem._certified_solve) --------------------------------
    def gram_scale(self):
        """``s = mean_i k(x_i, x_i)``, the mean of the Gram's diagonal (``||x_i||^2`` for the
        linear kernel): the mean squared norm of the training points in feature space, 1 for
        the RBF kernel. The mean, not the largest: raw features under a polynomial kernel
        spread the diagonal over orders of magnitude, and dividing by its largest entry would
        leave most points' kernel values far below 1. None without :attr:`rescale_params`."""
        if self.rescale_params is None:
            return None
        d = np.asarray(self.kernel.diag(self.X), dtype=float)
        return float(np.mean(d)) if d.size else None

    def _rescaled(self, s):
        """The equivalent problem ``phi -> phi / sqrt(s)`` (``G -> G / s``): the same family
        with every hyperparameter of :attr:`rescale_params` multiplied by ``s``.

        With ``w' = sqrt(s) w`` the margins ``y_i (w'^T phi(x_i) / sqrt(s) + b)`` are
        unchanged and ``1/2 ||w'||^2 = s 1/2 ||w||^2``; every other term of the objective is
        a function of the margins weighed by one of :attr:`rescale_params`, so the rescaled
        objective is ``s P(w, b)``: same minimiser (``w = w' / sqrt(s)``, same ``b``), its
        multipliers ``s`` times ours. The linear kernel keeps ``X / sqrt(s)``; another kernel
        becomes ``Precomputed`` on ``G / s`` with our feature map divided by ``sqrt(s)``
        (so that ``w'`` has our coordinates).
        """
        import inspect

        if self.rescale_params is None:
            return None
        r = float(np.sqrt(s))
        if self.kernel.is_linear:
            X, kernel = self.X * (1.0 / r), self.kernel
        else:
            X, kernel = self.gram / s, _k.Precomputed()
        kwargs = {}
        for name in list(inspect.signature(type(self).__init__).parameters)[1:]:
            if name == "X":
                kwargs[name] = X
            elif name == "kernel":
                kwargs[name] = kernel
            elif name in self.rescale_params:
                kwargs[name] = getattr(self, name) * s
            else:
                kwargs[name] = getattr(self, name)
        twin = type(self)(**kwargs)
        if not self.kernel.is_linear:
            twin._cache["F"] = self.F / r
        return twin

    def _map_back(self, sol, s):
        """A solution of ``_rescaled(s)`` here: ``w = w' / sqrt(s)``, ``coef = coef' / s``, the
        intercept and the slacks unchanged, the multipliers (:attr:`dual_names`) ``/ s``."""
        w = np.asarray(sol.variables["w"], float) / np.sqrt(s)
        variables = {}
        for k, v in sol.variables.items():
            if v is None or k in ("w", "b"):
                continue
            if k in self.dual_names:
                variables[k] = np.asarray(v, float) / s
            elif k in self.primal_slack_names:
                variables[k] = np.asarray(v, float)
        extra = {k: v for k, v in sol.info.items() if k == "polished"}
        return self._solution(w=w, b=float(sol.intercept), coef=np.asarray(sol.coef, float) / s,
                              variables=variables, solver=sol.solver, form=sol.form,
                              elapsed=sol.time, extra=extra)

    def objective_at_zero(self):
        """The objective of ``f = 0`` from the margins (all 0), e.g. ``C m`` for the hinge."""
        if not hasattr(self, "objective_from_margins"):
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
            Fa = abs(F) if sp.issparse(F) else np.abs(F)
            rho = float(np.max(np.asarray(Fa @ np.abs(w)).ravel(), initial=0.0))
            q = float(w @ w)
        return float(np.finfo(float).eps * (abs(P0) * rho + q))

    def w_from_coef(self, coef):
        """``w = F^T coef`` (feature-space coordinates of ``sum_i coef_i phi(x_i)``)."""
        return np.asarray(self.F.T @ coef).ravel()

    def _primal_point(self, sol):
        w = sol.variables.get("w")
        r = self.F.shape[1]
        if w is None or np.shape(w) != (r,):
            if sol.coef is None:
                raise ValueError("sol must carry coef of shape (m,) = "
                                 f"({self.m},) or w of shape ({r},); it carries neither")
            w = self.w_from_coef(sol.coef)
        b = float(sol.intercept) if self.has_intercept else 0.0
        return np.asarray(w, float), b

    def _certify(self, sol, tol, reference):
        """The one certificate, with the kernel-product margins of :meth:`margins` for a
        point given by ``coef`` on a non-linear kernel."""
        if (not hasattr(self, "objective_from_margins") or self.kernel.is_linear
                or not isinstance(sol, Solution) or sol.coef is None):
            return super()._certify(sol, tol, reference)
        self._check_solution(sol)
        coef = np.asarray(sol.coef, dtype=float)
        w, b = self._primal_point(sol)
        Gc = self.gram_times(coef)
        self._exact_point = (w, Gc, max(float(coef @ Gc), 0.0))
        sol_point = _FixedPoint(sol, (w, b))
        try:
            return super()._certify(sol_point, tol, reference)
        finally:
            self._exact_point = None

    def dual_value_exact(self, dual):
        """``D_max`` through kernel products when the family states it so
        (``dual_value_from_gram``; SVM, ODM, SVMm), else :meth:`dual_value`."""
        if not hasattr(self, "dual_value_from_gram") or self.kernel.is_linear:
            return self.dual_value(dual)
        nu = np.asarray(self.coef_from_dual(dual)[0], dtype=float)
        return self.dual_value_from_gram(dual, self.gram_times(nu))

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
                                 objective_scale(self, cert.values["objective"]))

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


#: The objective-valued residuals (duality gap, complementarity, objective at coef,
#: objective gap) are scaled by ``|P| + u`` with the objective unit
#: ``u = min(1, OBJECTIVE_FLOOR |P0|)``, ``P0`` the objective of the zero decision function
#: (``f = 0``: ``C m`` for the hinge, ``lam`` for ODM's loss): relative to the objective
#: itself, down to ``1e-7`` of the trivial classifier's objective (the round-off of
#: evaluating ``P``, a sum of ``m`` loss terms each to ``~eps (1 + |gamma_i|)`` of its
#: weight, against the certificate's tolerance), and never more leniently than the former
#: ``1 + |P|``. That former scale was absolute below 1: with features x1e6 and C = 2^-7
#: (P* = 1e-12) a point at 22 times the optimum held. Families without a natural zero point
#: (DRR) keep ``1 + |P|``.
OBJECTIVE_FLOOR = 1e-7


#: the round-off bound ``R`` of :meth:`Problem.roundoff_at` counts this many objective
#: units: ten times the reciprocal of the certificate's default tolerance, so that a gap
#: at the round-off of its evaluation is a tenth of the tolerance
ROUNDOFF_UNITS = 1e7


def objective_scale(prob, P):
    """The denominator of an objective-valued residual at objective ``P`` (see
    ``OBJECTIVE_FLOOR``); ``1 + |P|`` for a problem without :meth:`objective_at_zero`."""
    return abs(float(P)) + prob.objective_unit


#: the certificate adds a note when ``|P|`` is below this many objective units: the
#: objective-valued residuals are then in effect absolute (in units of ``OBJECTIVE_FLOOR
#: |P0|``), and the relative duality gap is reported beside them
SMALL_OBJECTIVE = 10.0


def relative_gap(P, D):
    """``(P - D) / max(|P|, |D|)`` (0 when both vanish): the duality gap relative to the
    objective itself, which the ``1 + |P|`` scaling does not measure when ``|P| << 1``."""
    den = max(abs(P), abs(D))
    return 0.0 if den == 0.0 else float((P - D) / den)


def small_objective_note(P, D, unit):
    return (f"the objective is {P:.3g}, within 10 of its unit {unit:.3g} (the larger of 1e-7 "
            f"of the objective at f = 0 and the round-off bound of evaluating P, at most 1): "
            f"the objective-valued residuals are then in effect absolute in that unit (the "
            f"relative duality gap "
            f"(P - D) / max(|P|, |D|) is {relative_gap(P, D):.2g}). This happens when the "
            f"optimum is a near-zero-loss classifier with a tiny norm (large features: "
            f"features x c is the same problem with C x c^2 on the original ones and an "
            f"objective c^2 smaller), or when P is summed from terms far larger than itself "
            f"(Gram entries far above 1): scale the features")


def _max_abs(X):
    data = X.data if sp.issparse(X) else np.asarray(X)
    return float(np.max(np.abs(data), initial=0.0))


def add_coef_consistency(cert, name, f, df, P, Pc, scale):
    """The residuals that make ``coef`` (what predictions use) and the certified point one
    point: ``name``, the largest difference ``df`` of the decision values (or scores) on the
    training points, scaled by ``1 + max |f|`` (free of the features' scale), and
    ``objective at coef``, ``|Pc - P|`` scaled by ``scale`` (:func:`objective_scale`: a
    large C or lam turns decision values 1e-9 apart into objectives 1e-2 apart)."""
    cert.add(name, float(np.max(np.abs(df), initial=0.0)),
             1.0 + float(np.max(np.abs(f), initial=0.0)))
    cert.add("objective at coef", abs(Pc - P), scale)


def given_slacks(sol, m, defaults, names=("xi", "eps")):
    """The slack variables a solution carries (by name, when of shape ``(m,)``), else the
    ``defaults`` (the smallest feasible ones for the point)."""
    out = list(defaults)
    variables = sol.variables if sol is not None else {}
    for k, name in enumerate(names):
        if np.shape(variables.get(name)) == (m,):
            out[k] = np.asarray(variables[name], float)
    return tuple(out)


def warn_convergence(message):
    from sklearn.exceptions import ConvergenceWarning

    warnings.warn(message, ConvergenceWarning, stacklevel=3)
