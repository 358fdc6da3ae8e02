"""Fast solver of the soft-margin SVM (SPEC §1) by dual coordinate descent.

.. math::

    \\min_{0\\le\\alpha\\le C}\\ \\tfrac12\\alpha^\\top Q\\alpha - e^\\top\\alpha,
    \\qquad Q = YGY,\\qquad \\nu = Y\\alpha,

(seed 002 eq. 2 with ``C = lambda/m``; LIBLINEAR's ``solve_l2r_l1l2_svc``), solved by the
shared DCD of :mod:`fast._dcd` on the ``gram``, ``cache`` or ``linear`` path. With
``fit_intercept=True`` the dual has the equality ``y^T alpha = 0`` and is handed to the SMO
solver (:func:`solve_svm_with_intercept`, on the SMO of :mod:`fast._smo_run`).

``method="smo"`` (no intercept): the same box dual by the SMO without the equality
(:func:`solve_svm_smo`; greedy second-order single-variable steps, shrinking, the kernel-row
cache, the Newton polish of :func:`fast._smo_run.run`). ``method="auto"`` (and
:func:`fast.path`'s default): the SMO for a kernel, the DCD for the linear kernel
(:func:`choose_method`); ``method=None`` is ``"auto"``. The methods: :data:`METHODS`.
"""
from __future__ import annotations

import time

import numpy as np

from . import _common, _dcd, _methods, _smo_run
from . import _kernels as _K


def choose_method(prob, options=()):
    """The SVM's rule (``method=None`` or ``"auto"``, and :func:`fast.path`'s default): the SMO
    with an intercept (the dual's equality) and for a kernel other than the linear one, the
    DCD for the linear kernel without intercept.

    Why (validation/decisions.md, ``validation/sweep_paths.py --family SVM``): along a path
    over C on RBF kernels the SMO certified every point where the DCD missed points at
    large C; on the linear kernel the DCD (O(d) per step on ``w``, with its low-rank
    active-set polish) certifies the whole path and the SMO gave no uniform gain.
    """
    return "dcd" if prob.kernel.is_linear and not prob.fit_intercept else "smo"


def _dcd_method(prob, tol, max_iter, random_state, warm_start, **options):
    """``method="dcd"`` (no intercept): the box dual by the shared DCD of :mod:`fast._dcd`.

    Options: ``shrinking`` (default True), ``cache_size`` (MB; the Gram is computed once
    when it fits in it, else kernel rows are cached; not given: the Gram when it is within
    :data:`fast._kernels.AUTO_GRAM_MB`, else a 200 MB row cache), ``path`` (``"auto"``,
    ``"gram"``, ``"cache"``, ``"linear"``), ``polish`` (the active-set Newton refinement of
    :func:`fast._dcd.run`; default True; ``False`` is the plain LIBLINEAR-style descent).
    With ``tol`` left at its default the run also refines until the duality gap is below
    ``1e-9 (1 + |P|)``.
    """
    if prob.fit_intercept:
        raise ValueError("method must be 'smo' (or None, 'auto') for SVM(fit_intercept=True): "
                         "the dual has the equality y^T alpha = 0; got 'dcd'")
    shrinking = _common.check_bool(options.pop("shrinking", True), "shrinking")
    # the active-set Newton polish is on by default (it is kept only when it lowers the
    # dual): on linear problems it cuts the epochs many-fold (bench_linear_svm.py);
    # polish=False gives the plain LIBLINEAR-style descent
    gap_tol = _dcd.DEFAULT_GAP_TOL if tol is None else None
    polish = _common.check_bool(options.pop("polish", True), "polish")
    cache_asked = options.pop("cache_size", None)       # None: choose_path's own budget
    cache_size = _common.check_cache_size(cache_asked)
    path = options.pop("path", None)
    if options:
        raise ValueError(f"unknown options {sorted(options)} for the SVM DCD solver")
    _, tol, max_iter = _common.check_common("dcd", ("dcd",), tol, max_iter, _dcd.DEFAULT_TOL,
                                            None)
    t0 = time.perf_counter()
    m, y = prob.m, prob.y
    box = prob.box_dual

    def primal(alpha, u, s, w):
        # s = Q alpha = y * (G coef): the margins; ||w||^2 = coef^T G coef = alpha^T s
        return prob.objective_from_margins(s, float(alpha @ s))

    alpha0 = _dcd.warm_box(warm_start, box, m)
    path = _K.choose_path(prob, path, None if cache_asked is None else cache_size)
    oracle = _dcd.oracle_for(prob, path, cache_size)
    alpha, u, s, w, info = _dcd.run(oracle, sign=box.sign, lo=0.0, hi=box.hi, p=box.p,
                                    dg=box.dg,
                                    alpha0=alpha0, tol=tol, max_iter=max_iter,
                                    seed=_common.seed_from(random_state),
                                    shrinking=shrinking, polish=polish, primal=primal,
                                    gap_tol=gap_tol,
                                    gap_target=_common.relative_gap_target(gap_tol, prob),
                                    # linear kernel, large C: the free set (d << m) moves
                                    # for many epochs, and a Newton step on a set that is
                                    # still moving is mostly wasted (measured by
                                    # bench_odm_path.py --svm-only)
                                    polish_stable_only=(path == "linear"),
                                    # ... but Q = Y X X^T Y has rank d: an active set on
                                    # all the variables reaches the vertex (few features),
                                    # or on the candidates near the margin (more features),
                                    # or a CG Newton step on the free set (more features
                                    # than the candidates' dense steps take: sparse rows)
                                    lowrank_polish=True, candidate_polish=True,
                                    subspace_polish=True)
    coef = y * alpha
    objective = primal(alpha, u, s, w)
    variables = {"alpha": alpha}
    if w is not None:
        variables["w"] = w
    return _dcd.dcd_solution(objective, coef, variables, info, t0, "SVM DCD", prob=prob)


def _smo_method(prob, tol, max_iter, random_state, warm_start, **options):
    """``method="smo"``: with an intercept :func:`solve_svm_with_intercept`, else
    :func:`solve_svm_smo` (the SMO is deterministic: ``random_state`` is not used)."""
    if prob.fit_intercept:
        return solve_svm_with_intercept(prob, tol=tol, max_iter=max_iter,
                                        warm_start=warm_start, **options)
    return solve_svm_smo(prob, tol=tol, max_iter=max_iter, warm_start=warm_start, **options)


def solve_svm_with_intercept(prob, tol=None, max_iter=None, warm_start=None, cache_size=200,
                             **options):
    """SMO for ``rm.SVM(..., fit_intercept=True)``: SPEC §1's dual
    ``min 1/2 a^T Q a - e^T a``, ``0 <= a <= C``, ``y^T a = 0`` (LIBSVM's ``SVC``)."""
    return _solve_smo(prob, True, tol, max_iter, warm_start, cache_size, None, options)


def solve_svm_smo(prob, tol=None, max_iter=None, warm_start=None, cache_size=None, path=None,
                  **options):
    """SMO for ``rm.SVM(..., fit_intercept=False)`` (``method="smo"``): the same box dual
    without the equality (:func:`fast._smo_run.run` with ``has_eq=False``: greedy
    second-order single-variable steps, shrinking, the kernel-row cache). ``path``:
    ``"auto"`` (the Gram when it is already built and fits in ``cache_size`` MB, else rows
    on demand into the LRU cache), ``"gram"`` (the Gram, built if needed) or ``"cache"``."""
    path = _K.choose_path(prob, path, cache_size, allowed=("gram", "cache")) \
        if path not in (None, "auto") else None
    return _solve_smo(prob, False, tol, max_iter, warm_start,
                      _common.check_cache_size(cache_size), path, options)


def _solve_smo(prob, has_eq, tol, max_iter, warm_start, cache_size, path, options):
    t0 = time.perf_counter()
    m = prob.m
    refine = tol is None
    tol, max_iter, cache_size, shrinking, polish = _smo_run.check_options(
        tol, max_iter, cache_size, m, options)
    y = np.asarray(prob.y, dtype=np.float64)
    a0 = _smo_run.warm_vector(warm_start, "alpha", m, prob.C)
    if a0 is None:
        a0 = np.zeros(m)
    if path == "gram":
        source = _K.RowSource(gram=prob.gram)
    elif path == "cache":
        source = _K.RowSource(prob.kernel, prob.X, cache_size)
    else:
        source = _K.row_source(prob, cache_size)
    res = _smo_run.run(source, np.arange(m), y, -np.ones(m), np.full(m, prob.C), a0, has_eq,
                       tol, max_iter, shrinking, refine=refine, polish=polish,
                       gap_target=_common.relative_gap_target(1e-9 if refine else None, prob),
                       roundoff=not _common.scale_hint(prob))
    alpha, G, b = res.alpha, res.G, res.b
    coef = y * alpha
    Kc = source.K_times(coef)
    if Kc is None:
        Kc = y * (G + 1.0)            # G = Y K Y alpha - e
    gamma = y * (Kc + b)
    obj = prob.objective_from_margins(gamma, float(coef @ Kc))
    sol = _smo_run.solution(prob, type(prob).__name__, source, res, t0, max_iter, shrinking,
                            has_eq, coef, Kc, obj, {"alpha": alpha},
                            np.sum(alpha) - 0.5 * float(coef @ Kc))
    if not has_eq:
        sol.info.update(path=source.path, method="smo")
    return sol


METHODS = {"dcd": _dcd_method, "smo": _smo_method}


def intercept_repair(prob, sol):
    """With an intercept: the best one at the returned ``coef``
    (:func:`fast._smo_run.intercept_repair`)."""
    return _smo_run.intercept_repair(prob, sol, prob.C, 0.0, 0.0)


SOLVERS = _methods.Solvers(METHODS, choose_method, auto=True, repair=intercept_repair)
