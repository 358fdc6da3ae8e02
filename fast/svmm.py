"""Fast solver for SVMm and epsilon-SVM (SPEC §6; seed 003 eqs. 6, 7, 14, 15).

.. math::

    \\min_{w,b,\\xi,\\eta}\\ \\tfrac12\\|w\\|^2 + C_1\\sum_i\\xi_i + C_2\\sum_i\\eta_i
    \\quad\\text{s.t.}\\quad 1-\\xi_i \\le y_i(w^\\top\\phi(x_i)+b) \\le 1+\\varepsilon+\\eta_i,
    \\ \\xi,\\eta\\ge0.

Dual (seed 003 eq. 15, as a minimisation over ``z = [alpha; beta]`` of ``2m`` variables):

.. math::

    \\min_z\\ \\tfrac12 z^\\top Q z + p^\\top z,\\quad
    Q_{ab} = s_a s_b G_{a \\bmod m,\\, b \\bmod m},\\ s = [y; -y],\\
    p = [-e; (1+\\varepsilon)e],

s.t. :math:`s^\\top z = e^\\top v = 0` (with an intercept), :math:`0\\le\\alpha\\le C_1`,
:math:`0\\le\\beta\\le C_2`; :math:`\\nu = v = Y(\\alpha-\\beta)`. The problem states it as its
box dual (:attr:`refmodels.svmm.SVMm.box_dual`), which the DCD takes as it is and the SMO
as LIBSVM's general form (:func:`fast._smo_run.box_arrays`, the equality added with an
intercept), solved by the one SMO of :mod:`fast._smo` (a kernel row is fetched once for both
copies of a point; the 2m x 2m matrix is never built). ``C2 = 0`` pins ``beta = 0`` (the
beta copies are left out of the working set): the SVM with intercept. Without an
intercept there is no equality constraint and the same machinery takes single-variable
steps (greedy coordinate descent with shrinking).

On the linear kernel the default (``method="auto"``, :func:`choose_method`) is the
interior-point method of :mod:`fast._svmm_linear` in the space of the features (O(m d^2)
per step, 15-60 steps whatever ``C1``), finished by an active-set crossover; the SMO stays
selectable (``method="smo"``), and without an intercept the DCD (``method="dcd"``). Under
``"auto"`` the SMO finishes what the interior point or the DCD leaves short
(:data:`FALLBACK`).
"""
from __future__ import annotations

import time

import numpy as np

from . import _common, _dcd, _methods, _smo_run
from . import _kernels as _K
from . import _svmm_linear

#: ``method="auto"`` takes the interior point on the linear kernel up to this many features
#: (its steps cost O(m d^2) and a d x d factorisation; the KEEL sets have d <= 60: not
#: measured beyond)
IPM_MAX_D = 100
#: the interior point's point is returned as ``optimal`` when its relative duality gap is at
#: most this (the certificate asks 1e-6: a margin of 100); above, ``"auto"`` hands the
#: problem to the SMO, ``method="ipm"`` returns it with status ``max_iter`` and a
#: ConvergenceWarning
IPM_OK_GAP = 1e-8


def choose_method(prob, options=()):
    """``method="auto"`` (and ``None``): on the linear kernel the interior point
    (:func:`solve_ipm`) up to :data:`IPM_MAX_D` features, beyond it the DCD
    (:func:`solve_dcd`) without intercept; the SMO otherwise. When the interior point or
    the DCD does not reach its tolerance, the SMO finishes (:data:`FALLBACK`;
    ``info["ipm_fallback"]`` / ``info["dcd_fallback"]``).

    Why (the measurements: validation/decisions.md, ``validation/sweep_paths.py --quick
    --family SVMm --kernel linear``): on [0,1]-scaled features the interior point certifies
    every point of the path, the SMO all but one, and the interior point's paths are far
    faster. On raw features with entries ~1e7 the interior point's Newton systems lose their
    digits from ``C1 = 2^10`` on; its robust retry and the better of its and the SMO's
    points certify most of the grid. What is left fails at the round-off of the gap itself:
    ``X^T coef`` sums terms ~C1 |x_i| that cancel, and the gap at ``X^T coef`` in float64
    and in exact arithmetic differ by more than the certificate's 1e-6. On sparse data
    without intercept the DCD (then the SMO from its point when it stops at ``max_iter``)
    is faster than the SMO alone, all points certified. With an intercept (the equality)
    the SMO.
    """
    if prob.kernel.is_linear and prob.X.shape[1] <= IPM_MAX_D:
        return "ipm"
    if prob.kernel.is_linear and not prob.fit_intercept:
        return "dcd"
    return "smo"


def _smo_method(prob, tol, max_iter, random_state, warm_start, cache_size=200, **options):
    """``method="smo"`` (module docstring). ``tol``: the maximal KKT violation
    ``m(z) - M(z)`` at the end (default 1e-8, then tightened until the relative duality gap
    is below 1e-9); ``max_iter``: SMO iterations (default ``max(3 10**5, 200 m)``: bounded
    work; a crawl ends with a ConvergenceWarning, not a hang); ``warm_start``: ``alpha`` in
    ``[0, C1]`` and ``beta`` in ``[0, C2]``; ``cache_size``: megabytes for kernel rows (the
    full Gram when it fits); options ``shrinking`` (True) and ``polish`` (default on).
    Deterministic (``random_state`` is not used)."""
    return _solve_smo(prob, tol, max_iter, warm_start, cache_size, options)


def _dcd_method(prob, tol, max_iter, random_state, warm_start, cache_size=200, **options):
    """``method="dcd"`` (without intercept): :func:`solve_dcd`."""
    return solve_dcd(prob, tol=tol, max_iter=max_iter, random_state=random_state,
                     warm_start=warm_start, cache_size=cache_size, **options)


def _ipm_method(prob, tol, max_iter, random_state, warm_start, cache_size=200, **options):
    """``method="ipm"`` (linear kernel): :func:`solve_ipm`, the SMO's options and warm start
    checked as the SMO's (the interior point ignores them)."""
    if not prob.kernel.is_linear:
        raise ValueError(f"method='ipm' needs the linear kernel for {type(prob).__name__} "
                         f"(it works on w = X^T nu); got {prob.kernel!r}: use 'smo'")
    _smo_run.check_options(tol, max_iter, cache_size, 2 * prob.m, options)
    _smo_run.warm_box(warm_start, prob.box_dual, prob.m)
    return solve_ipm(prob, tol=tol, max_iter=max_iter)


def _dcd_for_smo(prob, call):
    """Under ``"auto"`` the DCD runs to its own epoch cap (the caller's ``max_iter`` is the
    SMO's that may follow), its options checked as the SMO's first."""
    options = dict(call.options)
    _smo_run.check_options(call.tol, call.max_iter, options.pop("cache_size", 200),
                           2 * prob.m, options)
    return call._replace(max_iter=None)


def _smo_from_dcd(prob, first, call):
    """The SMO finishes from the DCD's point when the descent stopped short (it crawls at a
    large ``C1``)."""
    return None if first.status == "optimal" else call._replace(warm_start=first)


def _smo_from_ipm(prob, first, call):
    """The SMO finishes when the interior point fell short (raw features at a large ``C1``:
    its Newton systems lose their digits), from the caller's warm start (a path's previous
    point) if any, else from the interior point's."""
    if first.status == "optimal":
        return None
    return call._replace(warm_start=first if call.warm_start is None else call.warm_start)


def _dcd_record(prob, first, last, call):
    """The SMO's point, with the DCD's run in ``info["dcd_fallback"]``."""
    last.info["dcd_fallback"] = {"n_iter": first.n_iter, "time": first.time}
    return last


def _better_of(prob, first, last, call):
    """The SMO's point, unless it fell short too and further from the optimum than the
    interior point's (raw breast_cancer, C1 = 2^12, C2 = 0.1: relative gaps 4.8e-7 against
    1.4e-6): then the interior point's, with its status and warning."""
    last.info["ipm_fallback"] = {"gap": first.info["gap"], "n_iter": first.n_iter,
                                 "time": first.time}
    if last.status != "optimal" and first.info["gap"] < relative_gap(prob, last):
        _ipm_warning(prob, first.info)
        first.info["smo_fallback"] = {"status": last.status, "n_iter": last.n_iter,
                                      "time": last.time}
        return first
    return last


def solve_ipm(prob, tol=None, max_iter=None):
    """The linear-kernel SVMm by :func:`fast._svmm_linear.ipm` (Mehrotra's interior point in
    the space of the features, then an active-set crossover; seed 003 eq. 15).

    ``tol``: the relative gap / residual at which the interior point stops (default
    ``fast._svmm_linear.IPM_GAP_REL``); ``max_iter``: interior-point steps (default
    ``fast._svmm_linear.IPM_MAX_STEPS``). The status is ``optimal`` when the relative
    duality gap of the returned point (primal objective at ``w``, ``b`` against the dual at
    ``alpha``, ``beta``) is at most :data:`IPM_OK_GAP`; else ``max_iter`` with a
    ConvergenceWarning. A warm start is not used (an interior point starts at
    the centre of the box)."""
    t0 = time.perf_counter()
    _, tol, max_iter = _common.check_common("ipm", ("ipm",), tol, max_iter,
                                            _svmm_linear.IPM_GAP_REL,
                                            _svmm_linear.IPM_MAX_STEPS)
    y = np.asarray(prob.y, dtype=np.float64)
    has_eq = bool(prob.fit_intercept)
    alpha, beta, b, info = _svmm_linear.ipm(prob.X, y, prob.C1, prob.C2, prob.eps, has_eq,
                                            max_steps=max_iter, gap_rel=tol,
                                            retry_above=IPM_OK_GAP)
    coef = y * (alpha - beta)
    w = np.asarray(prob.X.T @ coef, dtype=np.float64).ravel()
    Kc = np.asarray(prob.X @ w, dtype=np.float64).ravel()
    gamma = y * (Kc + b)
    ww = float(w @ w)
    obj = prob.objective_from_margins(gamma, ww)
    dual = float(np.sum(alpha)) - (1.0 + prob.eps) * float(np.sum(beta)) - 0.5 * ww
    ok = info["gap"] <= IPM_OK_GAP
    info.update(method="ipm", dual_objective=dual, residual=info["gap"], tol=tol,
                kernel_path="linear")
    variables = {"alpha": alpha, "beta": beta, "w": w}
    if has_eq:
        variables["b"] = b
    from refmodels.solution import Solution

    if not ok:
        _ipm_warning(prob, info)
    return Solution(objective=obj, coef=coef, intercept=b if has_eq else 0.0,
                    variables=variables, status="optimal" if ok else "max_iter",
                    solver="fast:ipm", form="fast", time=time.perf_counter() - t0,
                    n_iter=info["n_iter"], info=info)


def _ipm_warning(prob, info):
    """The ConvergenceWarning of an interior point that did not reach :data:`IPM_OK_GAP`."""
    _common.convergence_warning(f"{type(prob).__name__}: the interior point (relative "
                                f"duality gap)", info["gap"], IPM_OK_GAP, info["n_iter"],
                                unit="steps", hint=_common.scale_hint(prob))


#: the interior point on the empirical map (:func:`feature_space_repair`) takes at most this
#: many columns (its steps cost O(m r^2))
REPAIR_MAX_R = 300


def feature_space_repair(prob, sol):
    """SVMm's second chance when its returned point fails the self-check: first the best
    intercept at its ``coef`` (:func:`fast._smo_run.intercept_repair`); if that is not
    enough, on a kernel, the same problem solved by the interior point (:func:`solve_ipm`) on
    the empirical map ``F`` (``G = F F^T``, rank ``r``: the certificate's feature space),
    whichever of the two the self-check judges better. On a polynomial kernel of raw
    features (Gram entries ~1e10) the SMO's steps stall at the round-off of ``G``'s entries
    (duality gap 2.8e-6) where the interior point's ``r x r`` factorisations reach 7e-7.
    Only for ``m`` up to the automatic reference's size and ``r`` up to
    :data:`REPAIR_MAX_R`."""
    import warnings
    from dataclasses import replace

    from refmodels.reference import AUTO_REFERENCE_MAX_M
    from refmodels.svmm import SVMm

    from ._selfcheck import _worst, check

    fixed = _smo_run.intercept_repair(prob, sol, prob.C1, prob.C2, prob.eps)
    if fixed is not None and _worst(check(prob, fixed)) <= 1.0:
        return fixed
    if prob.kernel.is_linear or prob.m > AUTO_REFERENCE_MAX_M:
        return fixed
    F = np.asarray(prob.F, dtype=np.float64)
    if F.shape[1] > REPAIR_MAX_R:
        return fixed
    twin = SVMm(F, prob.y, C1=prob.C1, C2=prob.C2, eps=prob.eps, kernel=None,
                fit_intercept=prob.fit_intercept)              # an EpsSVM: eps = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ipm = solve_ipm(twin)
    coef = np.asarray(ipm.coef, dtype=np.float64)
    variables = {k: v for k, v in ipm.variables.items() if k != "w"}
    cand = replace(sol, objective=prob.objective_at(coef, float(ipm.intercept))[0], coef=coef,
                   intercept=ipm.intercept, variables=variables,
                   info={**sol.info, "feature_space_ipm": ipm.info["n_iter"],
                         "dual_objective": ipm.info["dual_objective"]})
    return cand if fixed is None else min((fixed, cand), key=lambda c: _worst(check(prob, c)))


def relative_gap(prob, sol):
    """``(P - D) / |P|`` of a solution's ``alpha``, ``beta`` and intercept (SPEC §6's
    primal at ``w = X^T Y (alpha - beta)`` against the dual, eq. 15), on the linear kernel;
    ``inf`` when it lacks them."""
    v = sol.variables
    if v.get("alpha") is None or v.get("beta") is None:
        return np.inf
    y = np.asarray(prob.y, dtype=np.float64)
    P, D = _svmm_linear.primal_dual(_svmm_linear._Rows(prob.X), y, v["alpha"], v["beta"],
                                    prob.C1, prob.C2, prob.eps,
                                    float(sol.intercept) if prob.fit_intercept else 0.0)[:2]
    return (P - D) / max(abs(P), 1e-300) if np.isfinite(P - D) else np.inf


def solve_dcd(prob, tol=None, max_iter=None, random_state=None, warm_start=None,
              cache_size=None, **options):
    """SVMm without intercept by the shared dual coordinate descent of :mod:`fast._dcd`
    (``method="dcd"``): the box dual of seed 003 eq. 15 without its equality, read from the
    problem (:attr:`refmodels.svmm.SVMm.box_dual`), as ``k = 2``
    signed copies of each point (``alpha`` with sign ``+1``, box ``[0, C1]``, linear term
    ``-1``; ``beta`` with ``-1``, box ``[0, C2]``, linear term ``1 + eps``), ``u = alpha -
    beta``: on the linear kernel ``w = X^T Y u`` is maintained, O(nnz of the row) per step,
    CSR accepted, shrinking (LIBLINEAR's ``solve_l2r_l1l2_svc`` structure). With an
    intercept the dual has the equality ``y^T (alpha - beta) = 0``, which coordinate steps
    cannot keep: a ValueError (use ``"ipm"`` or ``"smo"``).

    Options: ``shrinking`` (default True), ``polish`` (the DCD's Newton refinement on the
    free set, default True), ``cache_size``, ``path`` (as the SVM's DCD). With
    ``tol`` left at its default the descent also continues until the duality gap is at the
    certificate's level (:func:`fast._dcd.run`)."""
    if prob.fit_intercept:
        raise ValueError(f"method='dcd' needs fit_intercept=False for {type(prob).__name__}: "
                         f"with an intercept the dual has the equality y^T (alpha - beta) = 0; "
                         f"use method='ipm' (linear kernel) or 'smo'")
    shrinking = _common.check_bool(options.pop("shrinking", True), "shrinking")
    polish = _common.check_bool(options.pop("polish", True), "polish")
    cache_size = _common.check_cache_size(cache_size)
    path = options.pop("path", None)
    if options:
        raise ValueError(f"unknown options {sorted(options)} for the SVMm DCD solver")
    gap_tol = _dcd.DEFAULT_GAP_TOL if tol is None else None
    _, tol, max_iter = _common.check_common("dcd", ("dcd",), tol, max_iter, _dcd.DEFAULT_TOL,
                                            None)
    t0 = time.perf_counter()
    m, y = prob.m, np.asarray(prob.y, dtype=np.float64)
    box = prob.box_dual                  # alpha and beta: two signed copies of each point

    def primal(alpha, u, s, w):
        # s = Q u = y * (G nu): the margins (no intercept); ||w||^2 = u^T s
        return prob.objective_from_margins(s, float(u @ s))

    # (a dict or an array is accepted too, as by the SMO)
    alpha0 = _smo_run.warm_box(warm_start, box, m)
    path = _K.choose_path(prob, path, cache_size)
    oracle = _dcd.oracle_for(prob, path, cache_size)
    alpha, u, s, w, info = _dcd.run(oracle, sign=box.sign, lo=0.0, hi=box.hi, p=box.p,
                                    dg=box.dg, alpha0=alpha0, tol=tol, max_iter=max_iter,
                                    seed=_common.seed_from(random_state), shrinking=shrinking,
                                    polish=polish, primal=primal, gap_tol=gap_tol,
                                    gap_target=_common.relative_gap_target(gap_tol, prob))
    variables = {"alpha": alpha[:m].copy(), "beta": alpha[m:].copy()}
    if w is not None:
        variables["w"] = w
    return _dcd.dcd_solution(primal(alpha, u, s, w), y * u, variables, info, t0, "SVMm DCD",
                             prob=prob)


def _solve_smo(prob, tol, max_iter, warm_start, cache_size, options):
    t0 = time.perf_counter()
    m, y = prob.m, np.asarray(prob.y, dtype=np.float64)
    box = prob.box_dual                  # with the intercept's equality when fitted
    refine = tol is None
    tol, max_iter, cache_size, shrinking, polish = _smo_run.check_options(
        tol, max_iter, cache_size, 2 * m, options)
    z0 = _smo_run.warm_box(warm_start, box, m)
    source = _K.row_source(prob, cache_size)
    pt, s, p, u = _smo_run.box_arrays(box, y)
    has_eq = bool(prob.fit_intercept)
    # the refinement's gap relative to the objective (features x1e6 or raw poly kernels:
    # P* ~ 1e-10, where 1e-9 (1 + |P|) stopped at 4 % above the optimum); the stop at the
    # gradient's round-off floor is left to the SVM / LDM / ODML, where it was measured
    res = _smo_run.run(source, pt, s, p, u, z0, has_eq, tol, max_iter, shrinking,
                       refine=refine, polish=polish,
                       gap_target=_common.relative_gap_target(1e-9 if refine else None, prob))
    z, G, b = res.alpha, res.G, res.b
    alpha, beta = z[:m].copy(), z[m:].copy()
    coef = y * (alpha - beta)
    Kc = source.K_times(coef)
    if Kc is None:
        Kc = y * (G[:m] + 1.0)            # G_alpha = Y K nu - e
    gamma = y * (Kc + b)
    obj = prob.objective_from_margins(gamma, float(coef @ Kc))
    return _smo_run.solution(prob, type(prob).__name__, source, res, t0, max_iter, shrinking,
                             has_eq, coef, Kc, obj, {"alpha": alpha, "beta": beta},
                             np.sum(alpha) - (1.0 + prob.eps) * np.sum(beta)
                             - 0.5 * float(coef @ Kc))


METHODS = {"smo": _smo_method, "ipm": _ipm_method, "dcd": _dcd_method}
FALLBACK = {
    "dcd": _methods.Fallback("smo", _smo_from_dcd, _dcd_record, when=_methods.when_chosen,
                             prepare=_dcd_for_smo, quiet=True),
    "ipm": _methods.Fallback("smo", _smo_from_ipm, _better_of, when=_methods.when_chosen,
                             quiet=True),
}
SOLVERS = _methods.Solvers(METHODS, choose_method, FALLBACK, auto=True,
                           repair=feature_space_repair)
