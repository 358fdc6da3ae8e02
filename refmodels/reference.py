"""The reference ladder: CVXPY's point is certified before it is returned, and a point that
fails goes down a ladder of attempts (tight Clarabel, the other form, OSQP, then the
equivalent problem rescaled to unit Gram scale), or the reference refuses
(:class:`SolverError`). The helpers every family's CVXPY forms use (``run_cvxpy``, ``quad``,
``derive_box_duals``) live here too; :class:`ReferenceLadder` is mixed into
:class:`refmodels.base.Problem` and :class:`BinaryRescaling` into ``BinaryProblem``.
"""
from __future__ import annotations

import time
import warnings

import numpy as np
import scipy.sparse as sp
from scipy.optimize import lsq_linear

from . import kernels as _k
from ._numeric import data_span
from .certify import DEFAULT_TOL, objective_scale
from .solution import Solution, SolverError
from .workspace import active as _active_workspace, using as _using

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
    """CVXPY's installed solvers (cached: ``cp.installed_solvers()`` does its work again on
    every call, a cost every solve would pay)."""
    if not _INSTALLED_SOLVERS:
        import cvxpy as cp

        _INSTALLED_SOLVERS.extend(cp.installed_solvers())
    return _INSTALLED_SOLVERS


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
        fixed_sum += np.asarray(A @ mult).ravel()
        if free.size:
            free_cols.append(A[:, free])
            free_idx.append((bi, free, upper_v[free]))
        mults.append(mult)
    if free_idx:
        sparse = sp.issparse(free_cols[0])       # (the representer form's diagonal)
        Af = sp.hstack(free_cols).tocsc() if sparse else np.hstack(free_cols)
        ub = np.concatenate([u for _, _, u in free_idx])
        rhs = target - fixed_sum
        if np.all(ub <= 0):
            x = np.zeros(Af.shape[1])
        else:
            dense_ok = not sparse and Af.shape[1] <= 3000
            res = lsq_linear(Af, rhs, bounds=(np.zeros_like(ub), np.maximum(ub, 1e-300)),
                             method="bvls" if dense_ok else "trf", tol=1e-14)
            x = np.clip(res.x, 0.0, ub)
        pos = 0
        for bi, free, _ in free_idx:
            mults[bi][free] = x[pos:pos + free.size]
            pos += free.size
    return mults


class ReferenceLadder:
    """The certified reference solve of a problem (mixed into ``Problem``)."""

    # ---- the reference optimum inside a certificate ----------------------------
    def _reference_or_reason(self, reference):
        """``(reference Solution or None, why it is absent or None)``, computed before the
        point's own certificate (so that a reference solve, which certifies its own point,
        never runs inside another certificate). A reference that cannot be computed (no
        CVXPY point certifies, a factorisation fails) is reported, never raised."""
        try:
            ref = self._reference_for(reference)
        except (SolverError, np.linalg.LinAlgError) as exc:
            return None, (f"reference optimum unavailable ({type(exc).__name__}: {exc}); "
                          "objective gap not computed, the duality gap bounds it")
        if ref is None:
            return None, ("objective gap not computed (reference=False or m above "
                          f"{AUTO_REFERENCE_MAX_M}); the duality gap bounds it")
        return ref, None

    def _add_objective_gap(self, cert, P, ref, why, ctx):
        """Add the objective gap ``P - P*`` to ``cert`` (or the note saying why it is
        absent); the certificate is then judged on its KKT residuals and duality gap alone,
        which bound the objective gap."""
        if ref is not None:
            cert.values["reference_objective"] = ref.objective
            cert.add("objective gap", P - ref.objective,
                     objective_scale(self, ref.objective, ctx))
        else:
            if why.startswith("reference optimum unavailable"):
                cert.values["reference_objective"] = None
            cert.notes.append(why)

    # ---- solving --------------------------------------------------------------
    def solve(self, form="dual", solver="CLARABEL", verbose=False, *, workspace=None,
              **solver_options):
        """Solve the reference CVXPY problem of SPEC; ``form`` is ``"primal"`` or ``"dual"``.

        ``Solution.objective`` is the canonical primal value either way; a dual
        solution is mapped to the primal point with SPEC's maps. Raises
        :class:`SolverError` unless CVXPY reports the problem ``optimal``.
        ``workspace``: a :class:`refmodels.Workspace` that keeps the Gram, the feature map
        and (for the default dual Clarabel solve) this reference optimum for later calls
        (``prob.certify(sol, workspace=ws)`` then reuses it).
        """
        if form not in ("primal", "dual"):
            raise ValueError(f"form must be 'primal' or 'dual'; got {form!r}")
        if not isinstance(solver, str):
            raise ValueError(f"solver must be the name of a CVXPY solver; got {solver!r}")
        with _using(workspace, owner=self) as ws:
            sol = self._certified_solve(form, solver.upper(), verbose, solver_options)
            if (form, solver.upper(), verbose, solver_options) == ("dual", "CLARABEL", False, {}):
                ws.put("reference", (self,), sol)       # what reference_solution() computes
            return sol

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
        span = data_span(self)
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
        """The reference optimum (dual form, Clarabel), kept in the workspace for
        objective gaps."""
        return self._cached("reference", lambda: self.solve(form="dual"))

    # ---- reference optimum for objective gaps ------------------------------------
    def _reference_for(self, reference):
        """The Solution to measure the objective gap against (see ``certify``), or None."""
        if isinstance(reference, Solution):
            self._check_reference(reference)
            return reference
        auto = isinstance(reference, str) and reference == "auto"
        if reference is True or (auto and self.m <= AUTO_REFERENCE_MAX_M):
            from . import _progress         # a long silent wait otherwise (m > 1000)

            with _progress.stage(f"{type(self).__name__}: reference optimum, m={self.m}",
                                 enabled=self.m > _progress.REFERENCE_BAR_M):
                return self.reference_solution()
        if reference is False or reference is None or auto:
            return None
        raise ValueError(f"reference must be 'auto', True, False or a Solution; got {reference!r}")

    def _check_reference(self, reference):
        """Families with array objectives check a given reference's shape here."""


class BinaryRescaling:
    """The rescaled rung of a binary margin problem (mixed into ``BinaryProblem``)."""

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
        if self.rescale_params is None:
            return None
        r = float(np.sqrt(s))
        if self.kernel.is_linear:
            X, kernel = self.X * (1.0 / r), self.kernel
        else:
            X, kernel = self.gram / s, _k.Precomputed()
        twin = self.replace(X=X, kernel=kernel,
                            **{n: getattr(self, n) * s for n in self.rescale_params})
        ws = _active_workspace()
        if not self.kernel.is_linear and ws is not None:
            ws.put("F", twin.data_key, self.F / r)   # our feature map: w' in our coordinates
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
