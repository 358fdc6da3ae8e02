"""Step 2 of CONTRIBUTING.md: the fast solver (what would be ``fast/l2svm.py``): a method
table of one method, the shared DCD with a diagonal term ``1/(2C)`` and no upper bound, the
family's choice rule, and the ``SOLVERS`` record that ``fast.solve`` reads."""
from __future__ import annotations

import time

import numpy as np

from fast import _common, _dcd, _methods
from fast import _kernels as _K


def _dcd_l2(prob, tol, max_iter, random_state, warm_start, **options):
    gap_tol = _dcd.DEFAULT_GAP_TOL if tol is None else None
    _, tol, max_iter = _common.check_common("dcd", ("dcd",), tol, max_iter, _dcd.DEFAULT_TOL,
                                            None)
    cache_size = _common.check_cache_size(options.pop("cache_size", None))
    path = _K.choose_path(prob, options.pop("path", None), cache_size)
    if options:
        raise ValueError(f"unknown options {sorted(options)} for the L2SVM DCD solver")
    t0 = time.perf_counter()
    C, y = prob.C, prob.y
    alpha0 = np.zeros(prob.m)
    if warm_start is not None:
        (alpha0,) = _common.warm_values(warm_start, ("alpha",), (prob.m,), (0.0,), (np.inf,))

    def primal(alpha, u, s, w):       # s = Q alpha = the margins of coef = Y alpha
        return 0.5 * float(alpha @ s) + C * float(np.sum(np.maximum(0.0, 1.0 - s) ** 2))

    alpha, u, s, w, info = _dcd.run(_dcd.oracle_for(prob, path, cache_size), sign=1.0, lo=0.0,
                                    hi=np.inf, p=-1.0, dg=1.0 / (2.0 * C), alpha0=alpha0,
                                    tol=tol, max_iter=max_iter,
                                    seed=_common.seed_from(random_state), primal=primal,
                                    gap_tol=gap_tol)
    return _dcd.dcd_solution(primal(alpha, u, s, w), y * alpha, {"alpha": alpha}, info, t0,
                             "L2SVM DCD", prob=prob)


def choose_method(prob, options=()):
    return "dcd"


METHODS = {"dcd": _dcd_l2}
SOLVERS = _methods.Solvers(METHODS, choose_method)
