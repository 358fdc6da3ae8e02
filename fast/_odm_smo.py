"""ODM's box dual by the SMO (``fast.solve(prob, method="smo")``; the default of
``"auto"`` on a kernel whose Gram does not fit, :func:`fast.odm.choose_method`).

The dual (:attr:`refmodels.odm.ODM.box_dual`, seed 002 eq. 15) has two copies per point,
``zeta`` (sign ``+1``, linear term ``theta - 1``, diagonal ``a``) and ``beta`` (sign ``-1``,
``theta + 1``, ``a / mu``; pinned at 0 when ``mu = 0``), both unbounded above, and no
equality: the SMO of :mod:`fast._smo_run` without the equality, with its diagonal per
copy (:mod:`fast._smo`). Its greedy working sets with shrinking keep touching the same
few kernel rows, so an LRU row cache holding part of the Gram stays effective where the
DCD's random sweeps recompute most rows each epoch.
"""
from __future__ import annotations

import time

import numpy as np

from . import _common, _dcd, _smo_run
from . import _kernels as _K

def default_cache_mb(m):
    """The SMO's kernel-row cache when the caller gives no ``cache_size``: the whole Gram
    when it is within :data:`fast._kernels.AUTO_GRAM_MB` (filled lazily), else that budget,
    bounded by half the memory available and at least the SMO's usual 200 MB
    (:data:`fast._common.DEFAULT_CACHE_MB`). ODM's multipliers are nonzero at most points
    and none is bounded above, so the active set stays a large share of the points and the
    hits grow with the share of their rows the cache holds (validation/decisions.md); the
    size changes the time, never the point (a row is computed the same way, cached or
    not)."""
    from refmodels._numeric import _available_memory

    mb = min(_K.AUTO_GRAM_MB, 8.0 * m * m / 2**20)
    avail = _available_memory()
    if avail is not None:
        mb = min(mb, 0.5 * avail / 2**20)
    return max(mb, _common.DEFAULT_CACHE_MB)


def solve_smo(prob, tol, max_iter, warm_start, cache_size, options):
    """``method="smo"`` (module docstring). ``tol``: the largest projected gradient of the
    box dual at the end (default ``1e-8 min(1, a, a/mu)``, as the DCD's, then tightened
    until the duality gap and the stationarity in the slacks are at the self-check's level,
    as the DCD does); ``max_iter``: SMO iterations (default ``max(3 10**5, 200 m)``: a crawl
    ends with a ConvergenceWarning); ``warm_start``: ``zeta``, ``beta`` >= 0 (any Solution
    of the problem, a dict or an array); ``cache_size``: megabytes of kernel rows (default
    :func:`default_cache_mb`; rows are computed the same way whatever the size, so it
    changes the time, not the point); ``options``: ``shrinking`` (True) and ``polish`` (None: on with
    the default ``tol``). Deterministic."""
    t0 = time.perf_counter()
    m, y = prob.m, np.asarray(prob.y, dtype=np.float64)
    box = prob.box_dual                       # zeta and beta: two signed copies of each point
    refine = tol is None
    if tol is None:
        # (the DCD's default: the slack stationarity of eq. 14 to 1e-8, see _dcd_method)
        tol = _dcd.DEFAULT_TOL * min(1.0, *(float(g) for g in box.dg))
    tol, max_iter, cache_size, shrinking, polish = _smo_run.check_options(
        tol, max_iter, default_cache_mb(m) if cache_size is None else cache_size, 2 * m,
        options)
    z0 = _smo_run.warm_box(warm_start, box, m)
    source = _K.row_source(prob, cache_size)
    pt, s, p, u, dg = _smo_run.box_arrays(box, y, diag=True)
    p0, a0 = float(box.p[0]), float(box.dg[0])

    def margins(alpha, G):
        # G_zeta = (theta - 1) + y_i (K nu)_i + a zeta_i: the margins y * K nu
        return G[:m] - p0 - a0 * alpha[:m]

    def dual_point(alpha):
        return {"zeta": alpha[:m], "beta": alpha[m:]}

    def gap(alpha, G, b):
        gamma = margins(alpha, G)
        coef = y * (alpha[:m] - alpha[m:])
        Kc = y * gamma
        P = prob.objective_from_margins(gamma, float(coef @ Kc))
        return P, P - prob.dual_value_from_gram(dual_point(alpha), Kc)

    def kkt_ok(alpha, G):
        return _common.within_check(*prob.slack_residual(margins(alpha, G),
                                                         dual_point(alpha)))

    gap_tol = _dcd.DEFAULT_GAP_TOL if refine else None
    res = _smo_run.run(source, pt, s, p, u, z0, False, tol, max_iter, shrinking,
                       refine=refine, polish=polish, tol_min=min(1e-12, tol * 1e-4),
                       gap_target=_common.relative_gap_target(gap_tol, prob), dg=dg,
                       gap=gap, kkt_ok=kkt_ok)
    z, G = res.alpha, res.G
    zeta, beta = z[:m].copy(), z[m:].copy()
    coef = y * (zeta - beta)                  # nu = Y (zeta - beta)
    Kc = source.K_times(coef)
    if Kc is None:
        Kc = y * margins(z, G)                # (the self-check evaluates K coef anew)
    gamma = y * Kc
    obj = prob.objective_from_margins(gamma, float(coef @ Kc))
    variables = {"zeta": zeta, "beta": beta}
    sol = _smo_run.solution(prob, "ODM", source, res, t0, max_iter, shrinking, False, coef,
                            Kc, obj, variables,
                            prob.dual_value_from_gram(variables, Kc))
    sol.info.update(path=source.path, method="smo")
    return sol
