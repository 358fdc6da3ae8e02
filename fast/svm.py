"""Fast solver of the soft-margin SVM (SPEC §1) by dual coordinate descent.

.. math::

    \\min_{0\\le\\alpha\\le C}\\ \\tfrac12\\alpha^\\top Q\\alpha - e^\\top\\alpha,
    \\qquad Q = YGY,\\qquad \\nu = Y\\alpha,

(seed 002 eq. 2 with ``C = lambda/m``; LIBLINEAR's ``solve_l2r_l1l2_svc``), solved by the
shared DCD of :mod:`fast._dcd` on the ``gram``, ``cache`` or ``linear`` path. With
``fit_intercept=True`` the dual has the equality ``y^T alpha = 0`` and is handed to the SMO
solver (:func:`fast._smo.solve_svm_with_intercept`).
"""
from __future__ import annotations

import time

import numpy as np

from refmodels.solution import Solution

from . import _dcd
from . import _kernels as _K

METHODS = ("dcd",)


def choose_path(prob, path, cache_size, allow_linear=True):
    """``linear`` for the linear kernel; ``gram`` when the Gram fits in ``cache_size`` MB
    (always for a precomputed kernel: the Gram is the data), else ``cache``."""
    kernel = prob.kernel
    allowed = ("gram", "cache", "linear") if allow_linear else ("gram", "cache")
    path = _dcd.check_path(path, allowed)
    if path == "linear" and not kernel.is_linear:
        raise ValueError("path='linear' needs the linear kernel; got "
                         f"kernel={kernel!r}")
    if path == "cache" and kernel.is_precomputed:
        raise ValueError("path='cache' is not available for a precomputed kernel (the Gram "
                         "is the data); use path='gram'")
    if path != "auto":
        return path
    if kernel.is_linear and allow_linear:
        return "linear"
    if kernel.is_precomputed or _K.fits_in_memory(prob.m, cache_size):
        return "gram"
    return "cache"


def gram_matrix(prob):
    """The Gram (the problem's cached one; for a precomputed kernel, the data)."""
    return np.ascontiguousarray(prob.gram, dtype=np.float64)


def kernel_oracle(prob, path, cache_size):
    """An oracle for ``Q = YGY`` on the chosen path."""
    y = prob.y
    if path == "gram":
        return _dcd.Oracle("gram", K=gram_matrix(prob), qy=y)
    if path == "cache":
        return _dcd.Oracle("cache", X=prob.X, kernel=prob.kernel, qy=y, cache_size=cache_size)
    return _dcd.Oracle("linear", X=prob.X, qy=y)


def solve(prob, method=None, tol=None, max_iter=None, random_state=None, warm_start=None,
          **options):
    """Solve :class:`refmodels.SVM` by DCD (no intercept) or SMO (``fit_intercept=True``).

    Options: ``shrinking`` (default True), ``cache_size`` (MB, default 200; the Gram is
    computed once when it fits, else kernel rows are cached), ``path`` (``"auto"``,
    ``"gram"``, ``"cache"``, ``"linear"``), ``polish`` (the active-set Newton refinement of
    :func:`fast._dcd.run`; default True; ``False`` is the plain LIBLINEAR-style descent).
    With ``tol`` left at its default the run also refines until the duality gap is below
    ``1e-9 (1 + |P|)``.
    """
    if getattr(prob, "fit_intercept", False):
        from ._smo import solve_svm_with_intercept

        if method not in (None, "smo"):
            raise ValueError(f"method must be 'smo' (or None) for SVM(fit_intercept=True): "
                             f"the dual has the equality y^T alpha = 0; got {method!r}")
        # the SMO is deterministic: random_state is not used
        return solve_svm_with_intercept(prob, tol=tol, max_iter=max_iter,
                                        warm_start=warm_start, **options)
    shrinking = _dcd.check_bool(options.pop("shrinking", True), "shrinking")
    # the active-set Newton polish is on by default (it is kept only when it lowers the
    # dual): on linear problems it cuts the epochs many-fold (bench_linear_svm.py);
    # polish=False gives the plain LIBLINEAR-style descent
    gap_tol = _dcd.DEFAULT_GAP_TOL if tol is None else None
    polish = _dcd.check_bool(options.pop("polish", True), "polish")
    cache_size = _dcd.check_cache_size(options.pop("cache_size", None))
    path = options.pop("path", None)
    if options:
        raise ValueError(f"unknown options {sorted(options)} for the SVM DCD solver")
    method, tol, max_iter = _dcd.check_common(method, METHODS, tol, max_iter,
                                              _dcd.DEFAULT_TOL, _dcd.DEFAULT_MAX_ITER)
    t0 = time.perf_counter()
    m, C, y = prob.m, prob.C, prob.y

    def primal(alpha, u, s, w):
        # s = Q alpha = y * (G coef): the margins; ||w||^2 = coef^T G coef = alpha^T s
        return 0.5 * float(alpha @ s) + C * float(np.sum(np.maximum(0.0, 1.0 - s)))

    if warm_start is not None:
        (alpha0,) = _dcd.warm_values(warm_start, ("alpha",), (m,), (0.0,), (C,))
    else:
        alpha0 = np.zeros(m)
    path = choose_path(prob, path, cache_size)
    oracle = kernel_oracle(prob, path, cache_size)
    alpha, u, s, w, info = _dcd.run(oracle, sign=1.0, lo=0.0, hi=C, p=-1.0, dg=0.0,
                                    alpha0=alpha0, tol=tol, max_iter=max_iter,
                                    seed=_dcd.seed_from(random_state),
                                    shrinking=shrinking, polish=polish, primal=primal,
                                    gap_tol=gap_tol)
    coef = y * alpha
    objective = primal(alpha, u, s, w)
    variables = {"alpha": alpha}
    if w is not None:
        variables["w"] = w
    return make_solution(objective, coef, variables, info, t0, "SVM DCD", prob=prob)


def make_solution(objective, coef, variables, info, t0, what, solver="fast:dcd", prob=None):
    """The Solution of a DCD run: ``optimal`` iff the full-set stop held, else ``max_iter``
    with a ConvergenceWarning stating the residual (worst ``|PG|`` at the returned point).
    For the linear kernel the weights ``w = X^T coef`` are always carried."""
    if prob is not None and prob.kernel.is_linear and "w" not in variables:
        variables["w"] = np.asarray(prob.X.T @ coef, dtype=np.float64).ravel()
    info["residual"] = info["pg_max_abs"]
    status = "optimal" if info["converged"] else "max_iter"
    sol = Solution(objective=float(objective), coef=coef, intercept=0.0, variables=variables,
                   status=status, solver=solver, form="fast",
                   time=time.perf_counter() - t0, n_iter=info["n_iter"], info=info)
    if status != "optimal":
        _dcd.convergence_warning(what, info["residual"], info["tol"], info["n_iter"])
    return sol
