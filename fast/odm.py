"""Fast solvers of ODM (SPEC §4; seed 002 eqs. 12–15, 18, Algs. 1–2).

Dual (eq. 15), ``a = m (1-theta)^2 / (2 lam)``, over ``alpha = [zeta; beta] >= 0``:

.. math::

    \\min\\ \\tfrac12\\alpha^\\top\\begin{bmatrix}Q+aI&-Q\\\\-Q&Q+\\frac a\\mu I\\end{bmatrix}\\alpha
    +\\begin{bmatrix}(\\theta-1)e\\\\(\\theta+1)e\\end{bmatrix}^\\top\\alpha,
    \\qquad \\nu = Y(\\zeta-\\beta).

The methods (:data:`METHODS`) are below; ``method=None`` (the default) is ``"auto"``:
:func:`choose_method` picks among them from the kernel and the regularization (TRON on the
linear kernel, the DCD there with more features than points, the kernel Newton at weak
regularization, the DCD otherwise), unless an
option that only the DCD takes is given (:data:`DCD_ONLY_OPTIONS`). :data:`FALLBACK`
declares where the DCD finishes what TRON (under ``"auto"``) or the Newton left short,
and TRON what an ``"auto"`` DCD on the linear kernel left short.

``method="dcd"`` (seed 002 Alg. 1): the shared DCD of :mod:`fast._dcd` with the
2m variables as signed copies of the points (``u = zeta - beta``, ``s = Q u``, so
``g_zeta_i = s_i + a zeta_i + theta - 1`` and ``g_beta_i = -s_i + (a/mu) beta_i + theta + 1``,
curvatures ``Q_ii + a`` and ``Q_ii + a/mu``): the block matrix is never formed. Since
``g_zeta_i = a zeta_i - xi_i`` (``gamma_i = s_i``), the default tolerance ``1e-8`` is
scaled by ``min(1, a, a/mu)`` so that the multipliers match ``xi/a`` and ``mu eps/a``
(eq. 14) to ``1e-8``.

``method="smo"`` (:func:`_smo_method`): the same box dual by the SMO of
:mod:`fast._smo_run` without the equality (greedy second-order steps on one variable or a
pair, shrinking, the copies' diagonals ``a`` and ``a/mu`` kept per copy): its working sets
stay on few kernel rows, so an LRU row cache holding part of the Gram stays effective,
where the DCD's random sweeps over every active point recompute most cached rows each
epoch. ``"auto"`` takes it for a kernel whose Gram does not fit
(:func:`fast._kernels.auto_gram_fits`); it is selectable for any ODM (on the linear kernel
its rows are those of ``X X^T``).

``method="newton"`` (kernel only; :mod:`fast._kernel_newton`): Chapelle's primal Newton on
``f_O`` in coefficient space, one solve with ``K_SS + A_S`` per step on the active set (CG
preconditioned by a low-rank factor of the Gram when there is one, else a Cholesky),
safeguarded by an exact line search on the piecewise quadratic; certified at weak
regularization where the DCD crawls. A polynomial kernel whose feature map has fewer
dimensions than there are points (the quadratic kernel: ``(d+1)(d+2)/2``) is solved in that
feature space instead (:func:`fast._kernel_newton.minimize_features`). A run that stalls is
finished by the DCD, warm-started from its multipliers (within the caller's ``max_iter``,
then counted in epochs: :func:`_after_newton`); one that found the optimal active set but
whose residual stays at the rounding floor of the Gram's products (raw features: Gram
entries of 1e11) is returned as it is, ``"inaccurate"`` with a ``ConvergenceWarning``
naming that floor.

``method="svrg"`` (seed 002 Alg. 2, linear kernel only): SVRG on the smooth primal
``f_O`` of eq. 18; stops when ``||grad f_O|| <= tol``. The multipliers ``zeta = xi/a``,
``beta = mu eps/a`` are functions of ``w`` (eq. 14), so the Solution carries them and the
certificate's stationarity residual is exactly ``||grad f_O(w)||``.

``method="tron"`` (linear kernel only; :mod:`fast._tron`): trust-region Newton-CG on
``f_O``, with the same multipliers of eq. 14; under ``"auto"`` the DCD finishes from them
what TRON leaves short (:func:`_after_tron`).
"""
from __future__ import annotations

import time

import numpy as np
from numba import njit

from refmodels.solution import Solution

from . import _chunk, _common, _dcd, _methods, _sgd
from . import _kernels as _K
from ._chunk import PAUSED
from ._tron import _tron as _tron_kernel

SVRG_DEFAULT_TOL = 1e-6
SVRG_DEFAULT_MAX_ITER = 1000


def _dcd_method(prob, tol, max_iter, random_state, warm_start, **options):
    """``method="dcd"`` (seed 002 Alg. 1, module docstring). Options: ``shrinking`` (True),
    ``polish`` (True), ``cache_size`` (MB of kernel rows; not given: the
    Gram when it is within :data:`fast._kernels.AUTO_GRAM_MB`, else a 200 MB row cache),
    ``path`` (``"auto"``/``"gram"``/``"cache"``/``"linear"``)."""
    gap_tol = _dcd.DEFAULT_GAP_TOL if tol is None else None
    box = prob.box_dual                       # zeta and beta: two signed copies of each point
    # the default is on the slack stationarity of eq. 14: PG_zeta = a zeta - xi and
    # PG_beta = (a/mu) beta - eps, so |zeta - xi/a| = |PG|/a: scale by min(1, a, a/mu), the
    # box's diagonals (mu = 0: the beta copies are fixed at 0, their diagonal a, see
    # ODM.box_dual)
    default_tol = _dcd.DEFAULT_TOL * min(1.0, *(float(g) for g in box.dg))
    _, tol, max_iter = _common.check_common("dcd", METHODS, tol, max_iter, default_tol, None)
    shrinking = _common.check_bool(options.pop("shrinking", True), "shrinking")
    # the active-set Newton polish is on by default (it is kept only when it lowers the
    # dual): on linear problems it cuts the epochs many-fold (bench_linear_svm.py);
    # polish=False gives the plain LIBLINEAR-style descent
    polish = _common.check_bool(options.pop("polish", True), "polish")
    cache_asked = options.pop("cache_size", None)       # None: choose_path's own budget
    cache_size = _common.check_cache_size(cache_asked)
    path = options.pop("path", None)
    if options:
        raise ValueError(f"unknown options {sorted(options)} for the ODM DCD solver")
    t0 = time.perf_counter()
    m, y = prob.m, prob.y
    alpha0 = _dcd.warm_box(warm_start, box, m)
    path = _K.choose_path(prob, path, None if cache_asked is None else cache_size)
    if path == "gram":
        _K.build_gram(prob)                   # the RBF Gram in one pass (kept on prob)
    oracle = _dcd.oracle_for(prob, path, cache_size)
    alpha, u, s, w, info = _dcd.run(oracle, sign=box.sign, lo=0.0, hi=box.hi, p=box.p,
                                    dg=box.dg,
                                    alpha0=alpha0, tol=tol, max_iter=max_iter,
                                    seed=_common.seed_from(random_state),
                                    shrinking=shrinking, polish=polish,
                                    primal=lambda al, uu, ss, ww: prob.objective_from_margins(
                                        ss, float(uu @ ss)),
                                    gap_tol=gap_tol,
                                    gap_target=_common.relative_gap_target(gap_tol, prob),
                                    kkt_ok=lambda al, uu, ss, ww: _common.within_check(
                                        *prob.slack_residual(ss, {"zeta": al[:m],
                                                                  "beta": al[m:]})))
    zeta, beta = alpha[:m].copy(), alpha[m:].copy()
    coef = y * u                                   # nu = Y (zeta - beta)
    # s = Q u = y * (G nu): the margins; ||w||^2 = nu^T G nu = u^T s
    objective = prob.objective_from_margins(s, float(u @ s))
    variables = {"zeta": zeta, "beta": beta}
    if w is not None:
        variables["w"] = w
    # weak regularization (large lam) is where the DCD crawls and method="auto" (TRON on
    # the linear kernel, the Newton on a kernel) does not: say so when it stops short
    return _dcd.dcd_solution(objective, coef, variables, info, t0, "ODM DCD", prob=prob,
                             advice="; at weak regularization (large lam) method='auto' "
                                    "(TRON / kernel Newton) converges where the DCD crawls")


def _smo_method(prob, tol, max_iter, random_state, warm_start, cache_size=None, **options):
    """``method="smo"`` (module docstring): :func:`fast._odm_smo.solve_smo`."""
    from ._odm_smo import solve_smo

    return solve_smo(prob, tol, max_iter, warm_start, cache_size, options)


def linear_primal_args(prob, method, solver, primal, options, tol, max_iter, default_tol,
                       default_max_iter, methods, warm_start=None):
    """The argument checks shared by the primal methods on the linear kernel (ODM's SVRG
    and TRON, ODML's ASGD): no unknown ``options``, the linear kernel (``primal`` names the
    objective in the message), ``tol`` / ``max_iter`` with their defaults, and the
    starting ``w`` (:func:`_warm_w` of ``warm_start``, zeros without one). Returns
    ``(tol, max_iter, w0)``."""
    if options:
        raise ValueError(f"unknown options {sorted(options)} for the {solver} solver")
    if not prob.kernel.is_linear:
        raise ValueError(f"method={method!r} works on the linear primal {primal} and needs "
                         f"the linear kernel; got kernel={prob.kernel!r} (use method='dcd')")
    _, tol, max_iter = _common.check_common(method, methods, tol, max_iter, default_tol,
                                         default_max_iter)
    w0 = (_warm_w(prob, warm_start) if warm_start is not None
          else np.zeros(prob.X.shape[1]))
    return tol, max_iter, w0


def _solve_svrg(prob, tol, max_iter, random_state, warm_start, step=None, snapshot="random",
                **options):
    """``method="svrg"`` (seed 002 Alg. 2, linear kernel): ``tol`` on ``||grad f_O||``
    (default 1e-6); options ``step`` (default ``1/(4 L_max)``), ``snapshot`` (``"random"``:
    Alg. 2 line 11, the default; ``"last"``: the last inner iterate)."""
    tol, max_iter, w0 = linear_primal_args(prob, "svrg", "ODM SVRG", "f_O (seed 002 eq. 18)",
                                           options, tol, max_iter, SVRG_DEFAULT_TOL,
                                           SVRG_DEFAULT_MAX_ITER, METHODS, warm_start)
    if snapshot not in ("random", "last"):
        raise ValueError(f"snapshot must be 'random' or 'last'; got {snapshot!r}")
    t0 = time.perf_counter()
    y, th, mu = prob.y, prob.theta, prob.mu
    X = prob.X
    kappa = 2.0 * prob.lam / (1.0 - th) ** 2      # per-sample loss weight
    data = _sgd.LinearData(X, y)
    L_max = 1.0 + kappa * max(1.0, mu) * float(np.max(data.sqnorms))
    if step is None:
        step = 0.25 / L_max
    elif not (isinstance(step, (int, float)) and np.isfinite(step) and step > 0):
        raise ValueError(f"step must be a finite number > 0; got {step!r}")
    w, stats = _sgd.svrg_odm(data, w0, kappa, mu, th, float(step), tol, max_iter,
                             _common.seed_from(random_state), snapshot == "random")
    if stats[2]:
        from refmodels.solution import SolverError

        raise SolverError(f"ODM SVRG: the gradient is not finite (NaN or overflow) after "
                          f"{int(stats[0])} epochs (||grad f_O|| = {float(stats[1])!r}; step "
                          f"{float(step):.3e}): the iterates diverged or the problem's numbers "
                          f"are beyond float64{_common.scale_hint(prob)}")
    gamma = data.margins(w)
    objective = prob.objective_from_margins(gamma, float(w @ w))
    a = prob.a
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
        _common.convergence_warning("ODM SVRG (||grad f_O||)", grad_norm, tol, n_iter)
    return sol


# ---------------------------------------------------------------------------------------
# method="tron": trust-region Newton-CG on f_O (fast/_tron.py)
# ---------------------------------------------------------------------------------------
def _warm_w(prob, warm_start):
    """``w`` of a previous Solution (any method; the linear DCD and TRON carry it, else
    ``X^T coef``), checked."""
    d = prob.X.shape[1]
    w0 = getattr(warm_start, "variables", {}).get("w")
    if w0 is None and getattr(warm_start, "coef", None) is not None \
            and np.shape(warm_start.coef) == (prob.m,):
        w0 = np.asarray(prob.X.T @ np.asarray(warm_start.coef, float)).ravel()
    if w0 is None or np.shape(w0) != (d,) or not np.all(np.isfinite(w0)):
        raise ValueError(f"warm_start must be a Solution of this problem carrying w of shape "
                         f"({d},) (or coef of shape ({prob.m},))")
    return np.array(w0, dtype=np.float64)


def _tron_data(prob):
    """TRON's rows of ``prob`` (:class:`fast._tron.Data`), kept in the workspace under the
    data (``X``), which a path's problems share (``fast.path``): the curvature of one point
    starts the next. Built again when the labels differ."""
    from . import _tron

    on = (prob.X,)
    data = _common.peek(prob, "tron_data", on=on)
    if data is None or data.y.shape != prob.y.shape or not np.array_equal(data.y, prob.y):
        data = _tron.Data(prob.X, prob.y)
        _common.drop(prob, "tron_data", on=on)
        data = _common.kept(prob, "tron_data", lambda: data, on=on)
    return data


def _solve_tron(prob, tol, max_iter, random_state, warm_start, max_cg=None, **options):
    """``method="tron"`` (linear kernel): TRON on ``f_O`` (eq. 18), ``tol`` on
    ``||grad f_O|| / (1 + ||w||)`` (default 1e-9), ``max_iter`` Newton iterations (1000),
    option ``max_cg`` (CG steps per Newton step, default ``max(2d, 10)``); ``warm_start``
    any Solution carrying ``w``. Deterministic (``random_state`` is not used)."""
    from . import _tron

    tol, max_iter, w0 = linear_primal_args(prob, "tron", "ODM TRON", "f_O (seed 002 eq. 18)",
                                           options, tol, max_iter, _tron.DEFAULT_TOL,
                                           _tron.DEFAULT_MAX_ITER, METHODS, warm_start)
    t0 = time.perf_counter()
    y = prob.y
    kind, params = _tron.declared_loss(prob.margin_loss)      # ODM's: (c, mu, theta)
    c, mu, th = params
    data = _tron_data(prob)
    w, gamma, tinfo = _tron.minimize(data, kind, params, w0=w0, tol=tol,
                                     max_iter=max_iter, max_cg=max_cg)
    if tinfo["stop"] == "not finite":
        from refmodels.solution import SolverError

        raise SolverError(f"ODM TRON: the objective or its gradient is not finite (NaN or "
                          f"overflow) after {tinfo['n_iter']} Newton iterations (f = "
                          f"{tinfo['f']!r}, ||grad|| = {tinfo['grad_norm']!r}): the "
                          f"problem's numbers are beyond float64 at this scale"
                          f"{_common.scale_hint(prob)}")
    objective = prob.objective_from_margins(gamma, float(w @ w))
    a = prob.a
    zeta = np.maximum(0.0, 1.0 - th - gamma) / a          # eq. 14: zeta = xi / a
    beta = mu * np.maximum(0.0, gamma - 1.0 - th) / a      # beta = mu eps / a
    grad_norm = tinfo["grad_norm"]
    converged = tinfo["converged"]
    # the coefficients of eq. 14, nu = Y (zeta - beta), give w - grad f_O(w): the same
    # function up to ||grad||, hence the same objective on sane data. On badly scaled data
    # (x 1e3 features at lam = 2^20) the loss amplifies that difference beyond the
    # certificate's tolerance: then the point is w alone (as SVRG's), and coef is omitted
    coef = y * (zeta - beta)
    wc = np.asarray(prob.X.T @ coef).ravel()
    gamma_c = y * np.asarray(prob.X @ wc).ravel()
    obj_c = prob.objective_from_margins(gamma_c, float(wc @ wc))
    # ... and the same multipliers (eq. 14 at the margins of X^T coef)
    mult_c = np.concatenate([np.maximum(0.0, 1.0 - th - gamma_c),
                             mu * np.maximum(0.0, gamma_c - 1.0 - th)]) / a
    mult = np.concatenate([zeta, beta])
    mult_gap = float(np.linalg.norm(mult_c - mult)) / (1.0 + float(np.linalg.norm(mult)))
    # D_max at (zeta, beta) (eq. 15, u = X^T Y (zeta - beta) = wc), O(nnz): the self-check
    # then checks the duality gap and ||w - X^T coef|| = ||grad f_O|| without forming F^T Y
    # (an r x m dense matrix: 800 MB for a 20,000 x 5,000 sparse set)
    dual_objective = prob.dual_value_from_norm({"zeta": zeta, "beta": beta}, float(wc @ wc))
    info = {"path": "linear", "method": "tron", "grad_norm": grad_norm,
            "residual": grad_norm / (1.0 + float(np.linalg.norm(w))), "tol": tol,
            "n_iter": tinfo["n_iter"], "cg_iter": tinfo["cg_iter"], "stop": tinfo["stop"],
            "objective": objective, "dual_objective": dual_objective,
            "warm_start": warm_start is not None}
    if not (abs(obj_c - objective) <= 1e-9 * (1.0 + abs(objective)) and mult_gap <= 1e-9):
        coef = None
        # without coef the gap alone (||grad||^2 / 2) would not show the stationarity
        # residual ||grad||: leave the self-check to the full certificate
        del info["dual_objective"]
        info["coef_omitted"] = (f"nu = Y (zeta - beta) gives the objective {obj_c!r}, "
                                f"not {objective!r}, and multipliers {mult_gap:.1e} apart "
                                "(badly scaled data)")
    sol = Solution(objective=float(objective), coef=coef, intercept=0.0,
                   variables={"w": w, "zeta": zeta, "beta": beta},
                   status="optimal" if converged else "max_iter", solver="fast:tron",
                   form="fast", time=time.perf_counter() - t0, n_iter=tinfo["n_iter"],
                   info=info)
    if not converged and tinfo.get("stop") == "stalled":
        _common.not_converged_warning(
            f"ODM TRON (||grad f_O|| / (1 + ||w||)) stalled after {tinfo['n_iter']} Newton "
            f"iterations (the trust region collapsed or the reduction fell below rounding) "
            f"with residual {info['residual']:.3e} above the tolerance tol={tol:.3e} asked; "
            f"the point is not optimal to that tolerance (method='dcd' finishes from it)")
    elif not converged:
        _common.convergence_warning("ODM TRON (||grad f_O|| / (1 + ||w||))", info["residual"],
                                    tol, tinfo["n_iter"], unit="Newton iterations")
    return sol


# ---------------------------------------------------------------------------------------
# a whole linear path checked in place (the cross-validated estimators' inner loop)
# ---------------------------------------------------------------------------------------
@njit(cache=True)
def _linear_check(Xd, y, w, c, mu, th, u):
    """At ``w`` (dense rows): ``f_O(w)`` (eq. 18), ``D_max`` (eq. 15) at the one dual point
    that ``w`` determines (eq. 14: ``zeta = 2 c xi``, ``beta = 2 c mu eps``), the objective
    at ``w = 0`` and ``||w - X^T Y (zeta - beta)||`` (the stationarity residual; ``u`` ends
    as ``X^T Y (zeta - beta)``). The certificate's quantities, at ``O(m d)``."""
    m, d = Xd.shape
    P = 0.0
    for t in range(d):
        P += 0.5 * w[t] * w[t]
        u[t] = 0.0
    s_z = 0.0
    s_b = 0.0
    zz = 0.0
    bb = 0.0
    cf = np.empty(m)
    for i in range(m):
        g = 0.0
        for t in range(d):
            g += Xd[i, t] * w[t]
        g *= y[i]
        xi = max(0.0, 1.0 - th - g)
        eps = max(0.0, g - 1.0 - th)
        P += c * (xi * xi + mu * eps * eps)
        z = 2.0 * c * xi
        b = 2.0 * c * mu * eps
        s_z += z
        s_b += b
        zz += z * z
        bb += b * b
        cf[i] = y[i] * (z - b)
    for i in range(m):
        if cf[i] != 0.0:
            for t in range(d):
                u[t] += cf[i] * Xd[i, t]
    a = 0.5 / c
    uu = 0.0
    diff = 0.0
    for t in range(d):
        uu += u[t] * u[t]
        diff += (w[t] - u[t]) * (w[t] - u[t])
    D = (1.0 - th) * s_z - (1.0 + th) * s_b - 0.5 * uu - 0.5 * a * zz
    if mu > 0.0:                   # (mu = 0: beta = 2 c mu eps = 0)
        D -= 0.5 * a / mu * bb
    return P, D, np.sqrt(diff)


def linear_tron_path(prob, lams):
    """Linear ODM along ``lams`` by TRON, warm-started from strong to weak regularization
    (increasing ``lam``), each point checked where it is computed, without a
    :class:`Solution` per point: the inner loop of :class:`fast.cv.ODMClassifierCV`.

    ``prob`` gives the data and ``mu``, ``theta`` (dense rows; its own ``lam`` is ignored).
    A point passes when, with ``P`` and ``D`` of :func:`_linear_check`,

    * ``|P - D| <= t (|P| + u0)`` with ``u0`` the certificate's unit before any point
      (:func:`refmodels.certify.zero_unit` of the problem's objective at ``f = 0``: its
      duality gap on its scale with the smallest unit it can have, no round-off allowance,
      so stricter), and
    * ``||w - X^T Y (zeta - beta)|| <= t (1 + ||w||)`` (its stationarity, on a smaller scale
      than its ``1 + ||w|| + ||X^T Y (zeta - beta)||``),

    with ``t = CHECK_MARGIN * 1e-6`` (the self-check's margin); the dual point is eq. 14's,
    so the slack stationarity and the complementarity hold by construction, as does primal
    feasibility with the smallest slacks. TRON's own stop is not asked for: the residuals
    decide, as in the certificate (at ``lam = 2^20``, ``theta = 0.8`` on magic TRON stops at
    twice its gradient's rounding estimate, 1.6e-8, where the stationarity residual is
    5e-9, twenty times inside the margin). ``tests/test_cv.py`` checks that a point that
    passes is certified by ``prob.certify``.

    Returns ``(W, passed, seconds)``: ``W[k]`` the point at ``lams[k]`` (caller's order).
    A caller must not use a point that did not pass (the CV solves its path again through
    :func:`fast.path`, whose self-check gives each point its honest status)."""
    from refmodels.certify import zero_unit

    from . import _tron
    from ._selfcheck import CERT_TOL, CHECK_MARGIN

    lams = np.asarray(lams, dtype=np.float64).ravel()
    m, d = prob.X.shape
    data = _tron_data(prob)
    if data.mode != 0:
        raise ValueError("linear_tron_path takes dense rows")
    W = np.zeros((lams.size, d))
    passed = np.zeros(lams.size, dtype=bool)
    seconds = np.zeros(lams.size)
    t_ok = CHECK_MARGIN * CERT_TOL
    dense_max = _tron.DENSE_HESSIAN_MAX_D
    u, w, gamma = np.empty(d), np.zeros(d), np.empty(m)
    max_cg = max(2 * d, 10)
    P0_per_lam = prob.objective_at_zero() / prob.lam     # ODM's loss weighs lam: P0 = lam
    # TRON's state, one for the whole path (each point starts it afresh: ctl zeroed)
    st = _tron.new_state(m, d, d <= dense_max)
    for k in np.argsort(lams, kind="stable"):
        t0 = time.perf_counter()
        # the problem's declared loss at lams[k] (ODM's: _lean_point reads (c, mu, theta))
        kind, params = _tron.declared_loss(prob.margin_loss_at(float(lams[k])))
        params = np.array([float(v) for v in params])
        curv = data.curvature_state(kind, params, dense_max)
        # confirm=False: _linear_check recomputes the margins from w itself
        opt = _tron.TronOptions(kind, params, _tron.DEFAULT_TOL, _tron.DEFAULT_MAX_ITER,
                                max_cg, dense_max, False)
        unit = zero_unit(P0_per_lam * float(lams[k]))
        st.ctl[:] = 0
        while (out := _lean_point(data.tron, opt, curv, w, gamma, st, u, t_ok, unit,
                                  _chunk.budget())) == _chunk.PAUSED:
            pass                      # (between two calls: where Ctrl-C is raised)
        passed[k] = out == 1
        W[k] = w
        seconds[k] = time.perf_counter() - t0
        if not np.all(np.isfinite(w)):
            w[:] = 0.0
    return W, passed, seconds


@njit(cache=True)
def _lean_point(data, opt, curv, w, gamma, st, u, t_ok, unit, budget):
    """One point of :func:`linear_tron_path` in compiled calls of about ``budget`` work
    units each (:mod:`fast._chunk`): TRON (:func:`fast._tron._tron` on dense rows, with its
    ``data``, ``opt`` and ``curv``; its state in ``st``, zeroed ``st.ctl`` for a new point)
    from ``w`` (in place; ``opt.confirm`` False, since :func:`_linear_check` recomputes the
    margins from ``w`` itself), then the check. Returns :data:`fast._chunk.PAUSED` while
    TRON runs, then 1 if the point passes, else 0."""
    if _tron_kernel(data, opt, curv, w, gamma, st, budget) == PAUSED:
        return PAUSED
    params = opt.params
    c, mu, th = params[0], params[1], params[2]
    P, D, stat = _linear_check(data.rows.Xd, data.y, w, c, mu, th, u)
    if not (np.isfinite(P) and np.isfinite(D)):
        return 0
    return 1 if (abs(P - D) <= t_ok * (abs(P) + unit)
                 and stat <= t_ok * (1.0 + np.sqrt(np.sum(w * w)))) else 0


def _tron_fallback_applies(call):
    """TRON's fallback: only for ``"auto"`` at the default ``tol`` / ``max_iter`` (an explicit
    ``method="tron"``, or a ``tol`` / ``max_iter`` asked, gets TRON alone)."""
    return call.chosen and call.tol is None and call.max_iter is None


def _after_tron(prob, first, call):
    """The DCD finishes from TRON's multipliers (eq. 14) when

    * TRON's primal overflowed (a ``SolverError``: a gradient of ``lam / m`` x features):
      the dual's numbers are bounded by the box, so the DCD solves it from zero;
    * TRON stops short of its tolerance (``theta`` near 1: the loss weight
      ``lam / (m (1-theta)^2)`` is huge and the CG steps stall), or
    * TRON's point has no ``coef`` (raw features, see :func:`_solve_tron`), so that the
      Solution carries the dual point the estimators' ``dual_coef_`` needs; this attempt
      is quiet, and TRON's certified ``w`` is returned if the DCD does not certify
      (validation/decisions.md).
    """
    if isinstance(first, Exception):
        return call._replace(warm_start=None, options={}, quiet=True)
    if first.status == "optimal" and first.coef is not None:
        return None
    return call._replace(warm_start=first, options={}, quiet=first.status == "optimal")


def _after_dcd(prob, first, call):
    """TRON finishes, from the DCD's point, an ``"auto"`` DCD on the linear kernel (wide
    data: :func:`choose_method`) that stopped short of its tolerance."""
    if first.status == "optimal":
        return None
    return call._replace(warm_start=first, options={})


def _finished_by_tron(prob, first, last, call):
    """TRON's point after the DCD's, the DCD's record in ``info["dcd"]``, its time added."""
    last.info["dcd"] = dict(first.info)
    last.info["fallback"] = "tron"
    last.time += first.time
    return last


def _finished_by_dcd(key):
    """The merge of a fallback to the DCD: the DCD's point, the first method's record in
    ``info[key]`` (its error when it raised), its time added."""
    def merge(prob, first, last, call):
        if isinstance(first, Exception):
            last.info[key] = {"error": str(first)}
            last.info["fallback"] = "dcd"
            return last
        if first.status == "optimal" and last.status != "optimal":
            return first                  # TRON's w, certified, without coef
        last.info[key] = dict(first.info)
        last.info["fallback"] = "dcd"
        last.time += first.time
        return last

    return merge


def _solve_newton(prob, tol, max_iter, random_state, warm_start, path=None, cache_size=None,
                  **options):
    """``method="newton"`` (kernel; module docstring): ``tol`` on the certificate's scaled
    residual (default 1e-9), ``max_iter`` Newton steps (60), options ``path``
    (``"auto"``/``"gram"``/``"cache"``) and ``cache_size``; ``warm_start`` any Solution
    carrying ``coef``. A stalled run is finished by the DCD (:data:`FALLBACK`)."""
    from . import _kernel_newton

    if options:
        raise ValueError(f"unknown options {sorted(options)} for the ODM Newton solver")
    if prob.mu == 0.0 and not prob.kernel.is_linear:
        raise ValueError("method='newton' needs mu > 0 (its active block's diagonal holds "
                         "a/mu); with mu = 0 use method='dcd'")
    sol = _kernel_newton.solve_odm(prob, tol=tol, max_iter=max_iter, warm_start=warm_start,
                                   path=path, cache_size=cache_size)
    if sol.status == "optimal":
        return sol
    if sol.status == "inaccurate":
        # the explicit feature map's Newton found the optimal piece: its point is the
        # optimum up to the rounding of the Gram's products, which the DCD meets too (and
        # crawls at: raw breast_cancer, quadratic kernel, lam = 2^8: 7,721 epochs to
        # 2.6e-5), so it is returned, with its residual and that floor
        info = sol.info
        if tol is None and info["residual"] <= _kernel_newton.EXPLICIT_CERT_LEVEL:
            # within the certificate's own tolerance: fast.solve's self-check decides
            # (the full certificate on badly scaled data), no warning of ours
            sol.status = "optimal"
            info["note"] = (f"optimal active set; residual {info['residual']:.2e} at the "
                            f"rounding floor (~{info['rounding_floor']:.1e}) of the Gram's "
                            "products, above the Newton's own tol: the self-check decides")
            return sol
        _common.not_converged_warning(
            f"ODM Newton (explicit feature map of the polynomial kernel, {info['features']} "
            f"features) found the optimal active set, but its point's residual "
            f"{info['residual']:.3e} stays above the tolerance tol={info['tol']:.3e} asked: "
            f"the rounding of the kernel products alone leaves about "
            f"{info['rounding_floor']:.1e} there (Gram entries up to "
            f"{float(np.max(np.abs(prob.kernel.diag(_K.dense_data(prob.X))))):.0e} times "
            f"2 lam / (m (1-theta)^2) = {2 * prob.lam / (prob.m * (1 - prob.theta) ** 2):.1e})"
            f"; status 'inaccurate'{_common.scale_hint(prob)}")
        return sol
    return sol


def _after_newton(prob, first, call):
    """A Newton run that stalled (neither optimal nor at the rounding floor) is finished by
    the DCD from its multipliers, within the caller's ``max_iter`` (the DCD's epochs) and
    on the Newton's kernel path."""
    if first.status in ("optimal", "inaccurate"):
        return None
    options = {k: call.options[k] for k in ("cache_size", "path") if k in call.options}
    return call._replace(tol=None, warm_start=first, options=options)


#: options of the DCD that the methods ``"auto"`` may pick on this kernel do not take: with
#: ``method=None`` they select the DCD (``path`` and ``cache_size`` only on the linear
#: kernel: the kernel Newton takes them too)
DCD_ONLY_OPTIONS = ("shrinking", "polish")
_DCD_ONLY_LINEAR = ("path", "cache_size")


def default_method(prob, options=()):
    """``method=None``: ``"auto"`` (:func:`choose_method`), or ``"dcd"`` when ``options``
    name an option only the DCD takes (:data:`DCD_ONLY_OPTIONS`; on the linear kernel also
    ``path`` and ``cache_size``), so that a call written for the DCD, which was the default
    before ``"auto"`` (:func:`choose_method`), keeps its meaning."""
    only = DCD_ONLY_OPTIONS + (_DCD_ONLY_LINEAR if prob.kernel.is_linear else ())
    return "dcd" if any(k in options for k in only) else "auto"


#: ``method="auto"`` on a kernel takes the Newton when ``a / mean(diag K)`` is at most this
#: (``a = m (1-theta)^2 / (2 lam)``: the dual's diagonal shift, its conditioning)
NEWTON_MAX_SHIFT = 1.0 / 16
#: ... and, when ``a / mean(diag K)`` is at most this, if the Gram is within
#: ``LOWRANK_PROBE_FRAC m`` columns of a low-rank matrix on the scale of ``a`` (the Newton's
#: CG preconditioner exists: :func:`fast._kernel_newton.lowrank_factor`)
NEWTON_LOWRANK_SHIFT = 1.0
LOWRANK_PROBE_FRAC = 1.0 / 8


def choose_method(prob, options=()):
    """ODM's rule (``method=None``; ``"auto"`` without the options): ``"dcd"`` when
    ``options`` name an option only the DCD takes (:func:`default_method`); else on the
    linear kernel ``"tron"``, or ``"dcd"`` when there are more features than points (then
    finished by TRON if it stops short, :data:`FALLBACK`); for another kernel ``"newton"``
    (``mu > 0``, the Gram within the default cache) when
    ``a / mean(diag K) <= NEWTON_MAX_SHIFT``, or when it is at most
    ``NEWTON_LOWRANK_SHIFT`` and the Gram is within ``LOWRANK_PROBE_FRAC m`` columns of a
    low-rank matrix on the scale of ``a`` (the Newton's CG preconditioner exists), else
    ``"dcd"`` where the Gram fits and ``"smo"`` where it does not (:func:`_kernel_dual`).

    Why: the DCD's epochs grow as the dual's diagonal shift ``a = m (1-theta)^2 / (2 lam)``
    falls below the kernel's scale (weak regularization), where TRON (linear) and the
    kernel Newton cost a few factorisations whatever ``lam``; TRON was the fastest of the
    three linear methods in every case measured with fewer features than points, and the
    DCD in every case with more. The measurements: validation/decisions.md
    (``validation/bench_odm_path.py --default`` and ``--auto``; the wide cases there too).
    """
    if default_method(prob, options) == "dcd":
        return "dcd"
    if prob.kernel.is_linear:
        # more features than points: the optimum interpolates, many margins sit on the
        # loss's breakpoints and TRON's Newton steps zigzag between its pieces (100-1,000
        # steps at large lam), where the dual's box is the DCD's own ground
        return "dcd" if prob.X.shape[1] > prob.m else "tron"
    dual = _kernel_dual(prob, options)
    if prob.mu == 0.0:               # the kernel Newton needs mu > 0
        return dual
    from ._common import DEFAULT_CACHE_MB

    a = prob.a
    if not _K.fits_in_memory(prob.m, DEFAULT_CACHE_MB):
        return dual
    diag = _kernel_scale(prob)
    if not diag > 0:
        return dual
    if a / diag <= NEWTON_MAX_SHIFT:
        return "newton"
    if a / diag <= NEWTON_LOWRANK_SHIFT:
        from . import _kernel_newton

        # both methods use the Gram (it fits): the probe builds it and the pivoted factor,
        # which the Newton then reuses (cached on the problem)
        if _kernel_newton.lowrank_factor(prob, LOWRANK_PROBE_FRAC) is not None:
            return "newton"
    return dual


def _kernel_dual(prob, options):
    """The dual method of ``"auto"`` on a kernel: the DCD when it would run on the full Gram
    (:func:`fast._kernels.auto_gram_fits` with the ``cache_size`` asked, if any; always for
    a precomputed kernel, or when a ``path`` is asked, which the SMO does not take), else
    the SMO (:func:`_smo_method`): on a row cache holding part of the Gram the DCD's random
    sweeps recompute most rows every epoch, the SMO's working sets stay on few
    (validation/decisions.md)."""
    opts = options if isinstance(options, dict) else dict.fromkeys(options)
    if prob.kernel.is_precomputed or "path" in opts:
        return "dcd"
    cache = opts.get("cache_size")
    try:
        cache = None if cache is None else _common.check_cache_size(cache)
    except ValueError:
        return "dcd"                 # (the method's own check names the bad value)
    return "dcd" if _K.auto_gram_fits(prob.m, cache) else "smo"


def _kernel_scale(prob):
    """``mean(diag K)`` (from the Gram when built, else from the kernel's diagonal)."""
    G = _K.gram_if_built(prob)
    if G is not None:
        return float(np.mean(np.diag(G)))
    if prob.kernel.is_precomputed:
        return float(np.mean(np.diag(np.asarray(prob.X, dtype=np.float64))))
    return float(np.mean(prob.kernel.diag(_K.dense_data(prob.X))))


METHODS = {"dcd": _dcd_method, "svrg": _solve_svrg, "tron": _solve_tron,
           "newton": _solve_newton, "smo": _smo_method}
FALLBACK = {
    "tron": _methods.Fallback("dcd", _after_tron, _finished_by_dcd("tron"),
                              when=_tron_fallback_applies, quiet=True, rescue=True),
    "dcd": _methods.Fallback("tron", _after_dcd, _finished_by_tron,
                             when=_tron_fallback_applies, quiet=True,
                             on=lambda prob: prob.kernel.is_linear),
    "newton": _methods.Fallback("dcd", _after_newton, _finished_by_dcd("newton")),
}
SOLVERS = _methods.Solvers(METHODS, choose_method, FALLBACK, auto=True,
                           lean_path=linear_tron_path)
