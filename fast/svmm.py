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
:math:`0\\le\\beta\\le C_2`; :math:`\\nu = v = Y(\\alpha-\\beta)`. This is LIBSVM's general
form, solved by the one SMO of :mod:`fast._smo` (a kernel row is fetched once for both
copies of a point; the 2m x 2m matrix is never built). ``C2 = 0`` pins ``beta = 0`` (the
beta copies are left out of the working set): the SVM with intercept. Without an
intercept there is no equality constraint and the same machinery takes single-variable
steps (greedy coordinate descent with shrinking).
"""
from __future__ import annotations

import time

import numpy as np

from . import _kernels as _K
from . import _smo_run


def solve(prob, method=None, tol=None, max_iter=None, random_state=None, warm_start=None,
          cache_size=200, **options):
    """Solve ``rm.SVMm`` / ``rm.EpsSVM`` by SMO; returns a :class:`refmodels.Solution`.

    Parameters
    ----------
    method : None or ``"smo"``
    tol : float > 0, maximal KKT violation ``m(z) - M(z)`` at the end (default 1e-8, then
        tightened until the relative duality gap is below 1e-9).
    max_iter : int >= 1, SMO iterations (default ``max(3 10**5, 200 m)``: bounded work; a crawl
        ends with a ConvergenceWarning, not a hang).
    random_state : ignored (the SMO is deterministic).
    warm_start : Solution (or dict) with ``alpha`` in ``[0, C1]`` and ``beta`` in ``[0, C2]``.
    cache_size : float, megabytes for kernel rows (the full Gram when it fits).
    shrinking : bool, default True.
    polish : None or bool; the active-set Newton refinement between chunks of SMO
        iterations (:func:`fast._smo_run.run`); None (default): on with the default ``tol``.
    """
    if method not in (None, "smo"):
        raise ValueError(f"method must be None or 'smo' for {type(prob).__name__}; got {method!r}")
    t0 = time.perf_counter()
    m, y = prob.m, np.asarray(prob.y, dtype=np.float64)
    C1, C2, eps = prob.C1, prob.C2, prob.eps
    refine = tol is None
    tol, max_iter, cache_size, shrinking, polish = _smo_run.check_options(
        tol, max_iter, cache_size, 2 * m, options)
    z0 = np.zeros(2 * m)
    if warm_start is not None:
        z0[:m] = _smo_run.warm_vector(warm_start, "alpha", m, C1)
        z0[m:] = _smo_run.warm_vector(warm_start, "beta", m, C2)
    source = _K.row_source(prob, cache_size)
    pt = np.concatenate([np.arange(m), np.arange(m)])
    s = np.concatenate([y, -y])
    p = np.concatenate([-np.ones(m), np.full(m, 1.0 + eps)])
    u = np.concatenate([np.full(m, C1), np.full(m, C2)])
    has_eq = bool(prob.fit_intercept)
    res = _smo_run.run(source, pt, s, p, u, z0, has_eq, tol, max_iter, shrinking,
                       refine=refine, polish=polish)
    z, G, b = res.alpha, res.G, res.b
    alpha, beta = z[:m].copy(), z[m:].copy()
    coef = y * (alpha - beta)
    Kc = source.K_times(coef)
    if Kc is None:
        Kc = y * (G[:m] + 1.0)            # G_alpha = Y K nu - e
    gamma = y * (Kc + b)
    obj = (0.5 * float(coef @ Kc) + C1 * float(np.sum(np.maximum(0.0, 1.0 - gamma)))
           + C2 * float(np.sum(np.maximum(0.0, gamma - 1.0 - eps))))
    return _smo_run.solution(prob, type(prob).__name__, source, res, t0, max_iter, shrinking,
                             has_eq, coef, Kc, obj, {"alpha": alpha, "beta": beta},
                             np.sum(alpha) - (1.0 + eps) * np.sum(beta)
                             - 0.5 * float(coef @ Kc))
