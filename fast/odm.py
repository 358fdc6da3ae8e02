"""Fast solvers of ODM (SPEC §4; seed 002 eqs. 12–15, 18, Algs. 1–2).

Dual (eq. 15), ``a = m (1-theta)^2 / (2 lam)``, over ``alpha = [zeta; beta] >= 0``:

.. math::

    \\min\\ \\tfrac12\\alpha^\\top\\begin{bmatrix}Q+aI&-Q\\\\-Q&Q+\\frac a\\mu I\\end{bmatrix}\\alpha
    +\\begin{bmatrix}(\\theta-1)e\\\\(\\theta+1)e\\end{bmatrix}^\\top\\alpha,
    \\qquad \\nu = Y(\\zeta-\\beta).

``method="dcd"`` (default; seed 002 Alg. 1): the shared DCD of :mod:`fast._dcd` with the
2m variables as signed copies of the points (``u = zeta - beta``, ``s = Q u``, so
``g_zeta_i = s_i + a zeta_i + theta - 1`` and ``g_beta_i = -s_i + (a/mu) beta_i + theta + 1``,
curvatures ``Q_ii + a`` and ``Q_ii + a/mu``): the block matrix is never formed. Since
``g_zeta_i = a zeta_i - xi_i`` (``gamma_i = s_i``), the default tolerance ``1e-8`` is
scaled by ``min(1, a, a/mu)`` so that the multipliers match ``xi/a`` and ``mu eps/a``
(eq. 14) to ``1e-8``.

``method="svrg"`` (seed 002 Alg. 2, linear kernel only): SVRG on the smooth primal
``f_O`` of eq. 18; stops when ``||grad f_O|| <= tol``. The multipliers ``zeta = xi/a``,
``beta = mu eps/a`` are functions of ``w`` (eq. 14), so the Solution carries them and the
certificate's stationarity residual is exactly ``||grad f_O(w)||``.
"""
from __future__ import annotations

import time

import numpy as np

from refmodels.solution import Solution

from . import _dcd, _sgd
from .svm import choose_path, kernel_oracle, make_solution

METHODS = ("dcd", "svrg")
SVRG_DEFAULT_TOL = 1e-6
SVRG_DEFAULT_MAX_ITER = 1000


def primal_objective(prob, gamma, wnorm2):
    """``f_O`` (eq. 18) from the margins and ``||w||^2``."""
    th = prob.theta
    xi = np.maximum(0.0, 1.0 - th - gamma)
    eps = np.maximum(0.0, gamma - 1.0 - th)
    c = prob.lam / (prob.m * (1.0 - th) ** 2)
    return 0.5 * wnorm2 + c * float(xi @ xi + prob.mu * (eps @ eps))


def solve(prob, method=None, tol=None, max_iter=None, random_state=None, warm_start=None,
          **options):
    """Solve :class:`refmodels.ODM`; ``method`` ``"dcd"`` (default) or ``"svrg"`` (linear).

    DCD options: ``shrinking`` (True), ``cache_size`` (MB, 200), ``path``
    (``"auto"``/``"gram"``/``"cache"``/``"linear"``). SVRG options: ``step`` (default
    ``1/(4 L_max)``), ``snapshot`` (``"random"``: seed 002 Alg. 2 line 11, the default;
    ``"last"``: the last inner iterate).
    """
    if method is None:
        method = "dcd"
    if method == "svrg":
        return _solve_svrg(prob, tol, max_iter, random_state, warm_start, **options)
    gap_tol = _dcd.DEFAULT_GAP_TOL if tol is None else None
    a = prob.m * (1.0 - prob.theta) ** 2 / (2.0 * prob.lam)
    # the default is on the slack stationarity of eq. 14: PG_zeta = a zeta - xi and
    # PG_beta = (a/mu) beta - eps, so |zeta - xi/a| = |PG|/a: scale by min(1, a, a/mu)
    default_tol = _dcd.DEFAULT_TOL * min(1.0, a, a / prob.mu)
    method, tol, max_iter = _dcd.check_common(method, METHODS, tol, max_iter,
                                              default_tol, _dcd.DEFAULT_MAX_ITER)
    shrinking = _dcd.check_bool(options.pop("shrinking", True), "shrinking")
    # the active-set Newton polish is on by default (it is kept only when it lowers the
    # dual): on linear problems it cuts the epochs many-fold (bench_linear_svm.py);
    # polish=False gives the plain LIBLINEAR-style descent
    polish = _dcd.check_bool(options.pop("polish", True), "polish")
    cache_size = _dcd.check_cache_size(options.pop("cache_size", None))
    path = options.pop("path", None)
    if options:
        raise ValueError(f"unknown options {sorted(options)} for the ODM DCD solver")
    t0 = time.perf_counter()
    m, y, th, mu = prob.m, prob.y, prob.theta, prob.mu
    if warm_start is not None:
        z0, b0 = _dcd.warm_values(warm_start, ("zeta", "beta"), (m, m), (0.0, 0.0),
                                  (np.inf, np.inf))
        alpha0 = np.concatenate([z0, b0])
    else:
        alpha0 = np.zeros(2 * m)
    path = choose_path(prob, path, cache_size)
    oracle = kernel_oracle(prob, path, cache_size)
    # two signed copies of each point: zeta (sign +1) and beta (sign -1)
    sign = np.array([1.0, -1.0])
    p = np.array([th - 1.0, th + 1.0])
    dg = np.array([a, a / mu])
    alpha, u, s, w, info = _dcd.run(oracle, sign=sign, lo=0.0, hi=np.inf, p=p, dg=dg,
                                    alpha0=alpha0, tol=tol, max_iter=max_iter,
                                    seed=_dcd.seed_from(random_state),
                                    shrinking=shrinking, polish=polish,
                                    primal=lambda al, uu, ss, ww: primal_objective(
                                        prob, ss, float(uu @ ss)),
                                    gap_tol=gap_tol)
    zeta, beta = alpha[:m].copy(), alpha[m:].copy()
    coef = y * u                                   # nu = Y (zeta - beta)
    # s = Q u = y * (G nu): the margins; ||w||^2 = nu^T G nu = u^T s
    objective = primal_objective(prob, s, float(u @ s))
    variables = {"zeta": zeta, "beta": beta}
    if w is not None:
        variables["w"] = w
    return make_solution(objective, coef, variables, info, t0, "ODM DCD", prob=prob)


def _solve_svrg(prob, tol, max_iter, random_state, warm_start, step=None, snapshot="random",
                **options):
    if options:
        raise ValueError(f"unknown options {sorted(options)} for the ODM SVRG solver")
    if not prob.kernel.is_linear:
        raise ValueError("method='svrg' works on the linear primal f_O (seed 002 eq. 18) and "
                         f"needs the linear kernel; got kernel={prob.kernel!r} "
                         "(use method='dcd')")
    _, tol, max_iter = _dcd.check_common("svrg", METHODS, tol, max_iter, SVRG_DEFAULT_TOL,
                                         SVRG_DEFAULT_MAX_ITER)
    if snapshot not in ("random", "last"):
        raise ValueError(f"snapshot must be 'random' or 'last'; got {snapshot!r}")
    t0 = time.perf_counter()
    m, y, th, mu = prob.m, prob.y, prob.theta, prob.mu
    X = prob.X
    d = X.shape[1]
    if warm_start is not None:
        w0 = getattr(warm_start, "variables", {}).get("w")
        if w0 is None or np.shape(w0) != (d,) or not np.all(np.isfinite(w0)):
            raise ValueError(f"warm_start must be a Solution of this problem carrying "
                             f"w of shape ({d},)")
        w0 = np.array(w0, dtype=np.float64)
    else:
        w0 = np.zeros(d)
    kappa = 2.0 * prob.lam / (1.0 - th) ** 2      # per-sample loss weight
    data = _sgd.LinearData(X, y)
    L_max = 1.0 + kappa * max(1.0, mu) * float(np.max(data.sqnorms))
    if step is None:
        step = 0.25 / L_max
    elif not (isinstance(step, (int, float)) and np.isfinite(step) and step > 0):
        raise ValueError(f"step must be a finite number > 0; got {step!r}")
    w, stats = _sgd.svrg_odm(data, w0, kappa, mu, th, float(step), tol, max_iter,
                             _dcd.seed_from(random_state), snapshot == "random")
    gamma = data.margins(w)
    objective = primal_objective(prob, gamma, float(w @ w))
    a = m * (1.0 - th) ** 2 / (2.0 * prob.lam)
    zeta = np.maximum(0.0, 1.0 - th - gamma) / a          # eq. 14: zeta = xi / a
    beta = mu * np.maximum(0.0, gamma - 1.0 - th) / a      # beta = mu eps / a
    grad_norm = float(stats[1])
    n_iter = int(stats[0])
    converged = grad_norm <= tol
    info = {"path": "linear", "method": "svrg", "grad_norm": grad_norm, "residual": grad_norm,
            "tol": tol, "step": float(step), "snapshot": snapshot, "n_iter": n_iter,
            "objective": objective}
    sol = Solution(objective=float(objective), coef=None, intercept=0.0,
                   variables={"w": w, "zeta": zeta, "beta": beta},
                   status="optimal" if converged else "max_iter", solver="fast:svrg",
                   form="fast", time=time.perf_counter() - t0, n_iter=n_iter, info=info)
    if not converged:
        _dcd.convergence_warning("ODM SVRG (||grad f_O||)", grad_norm, tol, n_iter)
    return sol
