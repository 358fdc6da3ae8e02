"""Fast solvers of ODML (SPEC §2; seed 002 §3.1, eqs. 4–10, Alg. 1) and LDM (SPEC §3;
seed 001 eqs. 3–12, Alg. 2), one problem in two parametrisations:
LDM(C, λ1, λ2) = ODML(λ = mC, μ1 = 2λ1, μ2 = λ2), multiplier ``beta`` (LDM) = ``alpha`` (ODML).

Dual (constant kept, so :math:`P^\\star=-D^\\star`), with :math:`v=\\frac{\\mu_2}{m}e+\\alpha`:

.. math::

    \\min_{0\\le\\alpha\\le\\lambda/m}\\ \\tfrac12 v^\\top Hv-e^\\top\\alpha,\\qquad
    H=YG(I+AG)^{-1}Y,\\ A=\\frac{2\\mu_1}{m}P,\\ P=I-\\tfrac1m yy^\\top,\\qquad
    \\nu=(I+AG)^{-1}Yv.

Both dual solvers read the dual from the problem, :attr:`refmodels.odml.ODML.box_dual`
(one copy of the multipliers, ``p = -1``, box ``[0, upper]``, offset ``mu2/m``, the Gram
``G (I + AG)^{-1}`` given by its ``metric = 2 mu1/m``; the same for LDM in its own
parameters); the primal's parameters (:func:`odml_params`) serve the whitening's test of
``mu1 = 0`` and the ASGD.

``method="dcd"`` (the default for the linear kernel): the shared DCD of :mod:`fast._dcd`
with ``u = v`` (offset ``(mu2/m) e``), ``p = -e``:

* kernel path (``gram``): ``H`` by the stable Woodbury form of SPEC §2
  (:func:`refmodels.odml.woodbury_H`: one Cholesky of the SPD ``I + RGR``, no inverse of
  ``A`` and no m x m inverse). ``H`` is not a kernel matrix, so there is no bounded-cache
  path: the kernel path needs the full m x m ``H`` in memory.
* linear path: the d x d metric ``M = I + X^T A X = I + (2mu1/m)(X^T X - (X^T y)(X^T y)^T/m)``
  (O(m d^2)), Cholesky ``M = L L^T`` and the whitened data ``Z = X L^{-T}``. By the
  push-through identity ``G (I + AG)^{-1} = X M^{-1} X^T = Z Z^T``, so ``H = Y Z Z^T Y`` and
  the dual is an SVM-like dual over ``Z``: ``u = Z^T Y v`` is maintained (O(d) per step),
  ``w = M^{-1} X^T Y v = L^{-T} u``. An epoch costs O(m d), never O(m^2). With ``mu1 = 0``,
  ``Z = X`` (sparse input stays sparse); otherwise ``Z`` is dense m x d. The automatic
  choice takes this path for the linear kernel unless ``d > m`` and ``mu1 > 0`` (then the
  m x m ``H`` is the smaller matrix and the ``gram`` path is used).

* split path (``path="split"``; :mod:`fast._odml_split`): for sparse data of many
  features, where ``Z`` (dense m x d) or ``H`` (m x m) would not fit, the dual with a second,
  free multiplier ``rho`` of the margin variance (the equality ``s = R X w``,
  ``R = sqrt(2 mu1/m) P``, dualized), ``w = X^T (Yv - R rho)``, no inverse and no whitening:
  coordinate steps of O(nnz of a row) on ``(alpha_i, rho_i)`` with ``w`` kept as a sparse
  part plus a multiple of the mean row ``X^T y / m``, a truncated Newton-CG step on the face
  between chunks of epochs, and the stop on the family's duality gap. The automatic choice
  (:func:`use_split`) takes it for sparse ``X`` with ``mu1 > 0`` when the dense route would
  hold more than :data:`SPLIT_DENSE_BYTES`; on a dense ``X`` it runs on a CSR copy. It is
  conditioned by ``c ||x_i - y_i xbar||^2`` (``c = 2 mu1/m``): moderate for normalised
  sparse rows, far worse than the whitened path's at large features (1e4), where the
  dense routes remain the tools.

Recovery without ``(I + AG)^{-1}``: from ``(I + AG) nu = Yv`` and ``G nu = Y H v``,
``nu = Yv - A Y (Hv)``; the margins are ``gamma = Hv`` and ``||w||^2 = nu^T Y (Hv)``.

``method="smo"``: the ``gram`` path's dual (``Q = H``) by the SMO without equality of
:mod:`fast._smo_run` (greedy second-order single-variable steps with shrinking and the
Newton polish): ``s = +1``, ``p = -e + (mu2/m) H e``, ``u = upper``; ``nu`` by the Woodbury
solve. On LDM with an RBF kernel over the KEEL sets and C from 2^0 to 2^20 the SMO certifies
far more points than the DCD, and in less CPU wherever both do (validation/decisions.md).
Hence the default (``method=None``): the SMO for a kernel, the DCD for the linear kernel
(its whitened linear path is O(d) per step). With the SMO's Newton polish on a budget that
grows with the SMO's own work (:data:`fast._smo_run.POLISH_WORK`), ``fast.path`` over
C = 2^0, 2^2, ..., 2^20 (``validation/sweep_paths.py --family LDM --kernel rbf``)
certifies 65 of 66 points on australian, german, yeast3, ecoli1, haberman, pima; the miss:
haberman C = 2^20 (``max_iter``, duality gap 1.2e-4, warned).
Where the free set is too large for the polish's eigendecompositions (nearly every
multiplier at 0 pointing inward), the polish is an interior-point QP
(:func:`fast._polish.interior_point_qp`, one Cholesky per step): LDM RBF on KEEL spambase,
m = 3,000, C = 2^20, whose ``H`` is nearly singular (eigenvalues down to 1e-14 of the
largest) and whose optimum lies ~1e6 away along its near-null directions, went from a
violation of 1.0 at ``max_iter`` to a point that certifies (gap 1.8e-7; still ``max_iter``,
warned: the SMO's stopping rule sits below its gradient's round-off there).

``method="asgd"`` (linear kernel only): seed 001 Alg. 2 on the primal (see
:mod:`fast._sgd`); a stochastic method for large m that returns ``w`` only (the
certificate derives the multipliers from the margins).
"""
from __future__ import annotations

import hashlib
import time

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

from refmodels.solution import Solution

from . import _common, _dcd, _methods, _sgd, _smo_run
from . import _kernels as _K
from .odm import linear_primal_args

ASGD_DEFAULT_TOL = 1e-6
#: the SMO resumes (tolerance / 100) at most this many times when its box QP's gap met its
#: target but the family's duality gap P - D did not (see :func:`_solve_smo`)
EXTRA_REFINES = 3
ASGD_DEFAULT_MAX_ITER = 20


def odml_params(prob):
    """``(lam, mu1, mu2, upper, dual name)`` in ODML's parametrisation (the problem states
    it: :attr:`refmodels.odml.ODML.odml_params`, the map of SPEC §3 for LDM)."""
    return prob.odml_params


def woodbury_data(G, y, c):
    """``(H, solve)``: ``H = Y G (I + AG)^{-1} Y`` (SPEC §2, the stable form of
    :func:`refmodels.odml.woodbury_H`) and ``solve(u) = (I + AG)^{-1} u``
    (:func:`refmodels.odml.woodbury_solve`), ``A = c P``, from one Cholesky of ``I + RGR``.

    ``c = 2 mu1 / m`` does not depend on the path's parameter (``lam`` of ODML, ``C`` of LDM,
    whose ``mu1 = 2 lam1``), so along :func:`fast.path` (whose problems share one Gram
    array and one workspace) ``H`` and the factor are built once and kept in the workspace
    of the call, keyed on the Gram array (by identity), ``c`` and ``y``: they are most of the
    cost of a point (KEEL spambase, m = 3,000, RBF, C = 1; validation/decisions.md). Like
    every workspace entry, this assumes the Gram array is not modified in place."""
    from refmodels.odml import (_check_woodbury_args, _woodbury_apply, _woodbury_factor,
                                _woodbury_H_from)

    y = np.asarray(y, dtype=np.float64)

    def build():
        Gs, ys, cs = _check_woodbury_args(G, y, c)
        PG, L = _woodbury_factor(Gs, ys, cs) if cs != 0.0 else (None, None)
        return _woodbury_H_from(Gs, ys, cs, PG, L), L          # (PG is not kept)

    labels = hashlib.sha1(y.tobytes()).hexdigest()             # y by value
    H, L = _common.kept(None, "woodbury", build, on=(G, float(c), labels))
    m = y.shape[0]

    def solve(u):
        # (I + AG)^{-1} u, with P G u from G itself (PG is not kept)
        u = np.asarray(u, dtype=np.float64)
        if L is None:
            return u.copy()
        t = 0.5 * (G @ u + G.T @ u)                                   # the symmetric part
        return _woodbury_apply(t - y * (y @ t) / m, y, c, L, u)

    return H, solve


def _guard_H(prob):
    """Refuse early, with the estimate, a kernel ODML/LDM whose dense ``H`` does not fit:
    the Gram, ``H``, the Cholesky factor of ``I + RGR`` and its work array, about five
    ``m x m`` arrays (at m = 30,000: 36 GB; the process was killed instead)."""
    from refmodels._numeric import guard_dense

    guard_dense(prob.m, f"{type(prob).__name__}'s dense H = Y G (I + AG)^{{-1}} Y with its "
                "Gram and factor", copies=5,
                advice="solve a subsample, or the linear kernel (or an explicit feature "
                       "map of the kernel) with the whitened DCD, whose memory is O(m d)")


def whiten(X, y, mu1):
    """``(Z, L)`` with ``L L^T = M = I + X^T A X`` and ``Z = X L^{-T}`` (``Z = X`` if mu1 = 0)."""
    m, d = X.shape
    if mu1 == 0.0:
        return X, None
    from refmodels._numeric import guard_bytes

    # Z is dense whatever X is: refused early where it cannot fit (sparse data of many
    # features, rcv1's 700,000 x 47,000 would need 260 GB)
    guard_bytes(8.0 * (2.0 * m * d + 3.0 * d * d),
                f"the whitened data Z = X L^{{-T}} of the linear ODML/LDM solver (dense "
                f"{m:,} x {d:,}, with X^T X and its factor)",
                advice="the variance term makes the whitened data dense; with sparse data of "
                       "many features reduce d (feature selection or a random projection) "
                       "or solve a subsample")
    c = 2.0 * mu1 / m
    XtX = X.T @ X
    XtX = np.asarray(XtX.toarray() if sp.issparse(XtX) else XtX, dtype=np.float64)
    Xty = np.asarray(X.T @ y).ravel()
    M = np.eye(d) + c * (XtX - np.outer(Xty, Xty) / m)
    L = np.linalg.cholesky(0.5 * (M + M.T))
    Xt = X.T.toarray() if sp.issparse(X) else X.T
    Z = sla.solve_triangular(L, Xt, lower=True).T          # rows z_i = L^{-1} x_i
    return np.ascontiguousarray(Z), L


def choose_method(prob, options=()):
    """ODML's and LDM's rule (``method=None``): the SMO for a kernel on the gram path (greedy
    second-order steps do not crawl at weak regularization as the cyclic DCD does; module
    docstring), the DCD (whitened) for the linear kernel or another ``path``."""
    kernel_path = dict(options).get("path") in (None, "auto", "gram")
    return "smo" if (not prob.kernel.is_linear and kernel_path) else "dcd"


def _dcd_method(prob, tol, max_iter, random_state, warm_start, **options):
    """``method="dcd"``: options ``shrinking`` (True), ``polish`` (True), ``path``
    (``"auto"``/``"gram"``/``"linear"``/``"split"``; ``"auto"`` is ``"split"`` under
    :func:`use_split`'s rule, else the whitened ``"linear"`` or ``"gram"``)."""
    gap_tol = _dcd.DEFAULT_GAP_TOL if tol is None else None
    _, tol, max_iter = _common.check_common("dcd", METHODS, tol, max_iter, _dcd.DEFAULT_TOL,
                                            None)
    shrinking = _common.check_bool(options.pop("shrinking", True), "shrinking")
    # the active-set Newton polish is on by default (it is kept only when it lowers the
    # dual): on linear problems it cuts the epochs many-fold (bench_linear_svm.py);
    # polish=False gives the plain LIBLINEAR-style descent
    polish = _common.check_bool(options.pop("polish", True), "polish")
    options.pop("cache_size", None)        # accepted for a uniform API; H needs m x m
    path = options.pop("path", None)
    if options:
        raise ValueError(f"unknown options {sorted(options)} for the {type(prob).__name__} "
                         "DCD solver")
    if path == "split" or (path in (None, "auto") and use_split(prob)):
        return _split_method(prob, tol, max_iter, random_state, warm_start, shrinking,
                             polish, gap_tol)
    # whitening costs O(m d^2 + d^3) and d x d memory, H costs O(m^2 d + m^3) and m x m:
    # the linear path unless d > m with a variance term (then H is the smaller matrix);
    # H is not a kernel matrix, so there is no bounded-cache path
    d = prob.X.shape[1]
    whiten_ok = odml_params(prob)[1] == 0.0 or d <= prob.m
    auto_linear = whiten_ok or path not in (None, "auto")   # an explicit path is honoured
    if path not in (None, "auto", "gram", "linear"):
        raise ValueError(f"path must be one of ['auto', 'gram', 'linear', 'split']; got "
                         f"{path!r}")
    path = _K.choose_path(prob, path, allowed=("gram", "linear") if auto_linear else ("gram",))
    t0 = time.perf_counter()
    m, y = prob.m, prob.y
    box = prob.box_dual              # one copy, offset mu2/m, Gram G (I + AG)^{-1}, A = c P
    alpha0 = _dcd.warm_box(warm_start, box, m)
    c = box.metric
    L = None
    if path == "gram":
        _guard_H(prob)
        G = np.asarray(prob.gram, dtype=np.float64)
        H, wsolve = woodbury_data(G, y, c)
        oracle = _dcd.Oracle("gram", K=H, qy=np.ones(m))
    else:
        Z, L = whiten(prob.X, y, odml_params(prob)[1])
        oracle = _dcd.Oracle("linear", X=Z, qy=y)
    def primal(alpha, v, s, u):
        # s = H v = gamma; G nu = Y s; nu = Yv - A (G nu),  A z = c (z - y (y^T z)/m)
        Gnu = y * s
        coef = y * v - c * (Gnu - y * (y @ Gnu) / m)
        return prob.objective_from_margins(s, float(coef @ Gnu))

    alpha, v, s, u, info = _dcd.run(oracle, sign=box.sign, lo=0.0, hi=box.hi, p=box.p,
                                    dg=box.dg, alpha0=alpha0, u0=np.full(m, box.offset),
                                    tol=tol, max_iter=max_iter,
                                    seed=_common.seed_from(random_state), shrinking=shrinking,
                                    polish=polish, primal=primal,
                                    gap_tol=gap_tol,
                                    gap_target=_common.relative_gap_target(gap_tol, prob))
    # s = H v = gamma; G nu = Y s; nu = Yv - A (G nu),  A z = c (z - y (y^T z)/m)
    Gnu = y * s
    if path == "gram" and c > 0.0:
        # nu = (I + AG)^{-1} Y v by the Woodbury solve: the shortcut Yv - A G nu cancels
        # catastrophically when G is large (Gram entries of 1e8: G nu is 1e8 x nu)
        coef = wsolve(y * v)
    else:
        coef = y * v - c * (Gnu - y * (y @ Gnu) / m)
    objective = prob.objective_from_margins(s, float(coef @ Gnu))
    variables = {box.names[0]: alpha}
    if path == "linear":
        w = u if L is None else sla.solve_triangular(L, u, lower=True, trans="T")
        variables["w"] = np.asarray(w, dtype=np.float64)
    info["whitened"] = path == "linear" and L is not None
    return _dcd.dcd_solution(objective, coef, variables, info, t0,
                         f"{type(prob).__name__} DCD", prob=prob)


#: the automatic choice takes the split path (:func:`use_split`) for sparse data whose dense
#: route would hold more than this many bytes
SPLIT_DENSE_BYTES = 2.0**28


def use_split(prob):
    """The automatic rule of the split path (:mod:`fast._odml_split`): the linear kernel,
    sparse ``X`` and a variance term (``mu1 > 0``; without it the whitened data are ``X``
    itself), when the dense route the DCD would otherwise take, the whitened m x d data with
    ``X^T X`` and its factor (``d <= m``) or the m x m ``H`` with its Gram and factor
    (``d > m``), would hold more than :data:`SPLIT_DENSE_BYTES`."""
    if not (prob.kernel.is_linear and sp.issparse(prob.X)) or odml_params(prob)[1] == 0.0:
        return False
    m, d = prob.X.shape
    dense = 8.0 * (2.0 * m * d + 3.0 * d * d) if d <= m else 40.0 * m * m
    return dense > SPLIT_DENSE_BYTES


def _split_method(prob, tol, max_iter, random_state, warm_start, shrinking, polish, gap_tol):
    """``path="split"`` of the DCD (linear kernel, any ``X``; a dense ``X`` is run on CSR):
    the coordinate descent over the hinge multipliers and the variance's multiplier
    ``rho`` of :mod:`fast._odml_split`, without whitening. The Solution carries the
    family's multiplier (``alpha``, LDM's ``beta``), ``w`` and ``coef = Yv - R rho``
    (``w = X^T coef``); ``rho`` is not returned (a warm start takes it at its optimum for
    the warm start's ``w``)."""
    if not prob.kernel.is_linear:
        raise ValueError(f"path='split' needs the linear kernel; got kernel={prob.kernel!r}")
    from . import _odml_split

    box = prob.box_dual
    alpha0 = _dcd.warm_box(warm_start, box, prob.m)
    w0 = None
    if warm_start is not None and hasattr(warm_start, "variables"):
        w = warm_start.variables.get("w")
        if w is not None and np.shape(w) == (prob.X.shape[1],) and np.all(np.isfinite(w)):
            w0 = np.asarray(w, dtype=np.float64)
    t0 = time.perf_counter()
    alpha, w, coef, objective, info = _odml_split.solve(
        prob, tol, max_iter, random_state, alpha0, w0=w0, shrinking=shrinking, polish=polish,
        gap_tol=gap_tol)
    info["method"] = "dcd"
    return _dcd.dcd_solution(objective, coef, {box.names[0]: alpha, "w": w}, info, t0,
                             f"{type(prob).__name__} DCD (split path)", prob=prob)


def _solve_smo(prob, tol, max_iter, random_state, warm_start, cache_size=None, path=None,
               **options):
    """``method="smo"``: the dual on the ``gram`` path, ``Q = H`` (Woodbury form), solved by
    the SMO without equality (:func:`fast._smo_run.run`, ``has_eq=False``: greedy
    second-order single-variable steps with shrinking). With ``v = alpha + (mu2/m) e`` the
    dual is ``1/2 alpha^T H alpha + (-e + (mu2/m) H e)^T alpha + const``: ``s = +1``,
    ``p = -e + (mu2/m) H e``, ``u = upper``; the SMO's gradient ``G = H v - e`` gives the
    margins ``gamma = G + 1``."""
    path = _common.check_path(path, ("gram",))          # H is an m x m matrix, not a kernel
    _common.check_cache_size(cache_size)                # accepted for a uniform API
    t0 = time.perf_counter()
    m, y = prob.m, np.asarray(prob.y, dtype=np.float64)
    box = prob.box_dual              # one copy, offset mu2/m, Gram G (I + AG)^{-1}, A = c P
    (name,), (sign,), (p0,), (upper,), offset = (box.names, box.sign, box.p, box.hi,
                                                 box.offset)
    refine = tol is None
    tol, max_iter, _, shrinking, polish = _smo_run.check_options(tol, max_iter, None, m,
                                                                 options)
    a0 = _smo_run.warm_vector(warm_start, name, m, upper)
    if a0 is None:
        a0 = np.zeros(m)
    c = box.metric
    _guard_H(prob)
    Gk = np.asarray(prob.gram, dtype=np.float64)
    H, wsolve = woodbury_data(Gk, y, c)
    source = _K.RowSource(gram=H)
    # the box QP expanded, without its offset: 1/2 v^T H v with v = alpha + offset e is
    # 1/2 alpha^T H alpha + offset (H e)^T alpha + the constant that the SMO drops
    p = p0 + offset * H.sum(axis=1)
    target = _common.relative_gap_target(1e-9 if refine else None, prob)
    extra, it0 = 0, 0
    while True:
        res = _smo_run.run(source, np.arange(m), np.full(m, sign), p, np.full(m, upper), a0,
                           False, tol, max_iter - it0, shrinking, refine=refine, polish=polish,
                           gap_target=target, roundoff=not _common.scale_hint(prob))
        alpha, it, hit_max = res.alpha, res.n_iter + it0, res.hit_max
        viol, stats, tol = res.violation, res.stats, res.tol
        v = alpha + offset
        gamma = H @ v                                   # exact, no drift of the SMO's G
        coef = wsolve(y * v)                            # nu = (I + AG)^{-1} Y v
        Gnu = y * gamma                                 # G nu = Y H v
        objective = prob.objective_from_margins(gamma, float(coef @ Gnu))
        dual = float(np.sum(alpha) - 0.5 * float(v @ gamma))
        # the SMO's refinement measures the gap of its box QP; the family's gap P - D can
        # be larger by the loss weights (ODML, two RBF points, lam = 10, P* ~ 1e-15, unit
        # 1e-6: violation 5.7e-14, QP gap below its target, P - D = 5e-13 = 5e-7 units,
        # one step from the optimum): resume with the tolerance / 100 (EXTRA_REFINES times)
        if (not refine or hit_max or res.at_floor or extra >= EXTRA_REFINES
                or not objective - dual > target(objective) or it >= max_iter):
            break
        extra, it0, a0, tol = extra + 1, it, alpha, tol / 100.0
    variables = {name: alpha}
    if prob.kernel.is_linear:
        variables["w"] = np.asarray(prob.X.T @ coef, dtype=np.float64).ravel()
    status = _smo_run.status_of(type(prob).__name__, res, max_iter, prob)
    info = _smo_run.info_dict(source, stats, viol, tol, shrinking, res.at_floor, res.floor)
    info.update(path="gram", method="smo", whitened=False, residual=float(viol),
                dual_objective=dual, extra_refines=extra)
    sol = Solution(objective=float(objective), coef=coef, intercept=0.0, variables=variables,
                   status=status, solver="fast:smo", form="fast",
                   time=time.perf_counter() - t0, n_iter=it, info=info)
    _smo_run.check_floor_stop(type(prob).__name__, prob, sol, res)
    return sol


def _solve_asgd(prob, tol, max_iter, random_state, warm_start, eta0=None, t0=None,
                **options):
    tol, max_iter, w0 = linear_primal_args(prob, "asgd", "ASGD", "(seed 001 eq. 14)", options,
                                           tol, max_iter, ASGD_DEFAULT_TOL,
                                           ASGD_DEFAULT_MAX_ITER, METHODS, warm_start)
    start = time.perf_counter()
    m, y, X = prob.m, prob.y, prob.X
    lam, mu1, mu2, _, _ = odml_params(prob)
    data = _sgd.LinearData(X, y)
    R2 = float(np.max(data.sqnorms))
    if eta0 is None:
        eta0 = 1.0 / (1.0 + 4.0 * mu1 * R2)
    elif not (isinstance(eta0, (int, float)) and np.isfinite(eta0) and eta0 > 0):
        raise ValueError(f"eta0 must be a finite number > 0; got {eta0!r}")
    if t0 is None:
        t0 = m
    elif isinstance(t0, bool) or not isinstance(t0, (int, np.integer)) or t0 < 0:
        raise ValueError(f"t0 must be an integer >= 0; got {t0!r}")
    w, stats = _sgd.asgd_odml(data, w0, lam, mu1, mu2, float(eta0), int(t0), tol, max_iter,
                              _common.seed_from(random_state))
    if stats[2]:
        from refmodels.solution import SolverError

        raise SolverError(f"{type(prob).__name__} ASGD: the subgradient is not finite (NaN or "
                          f"overflow) after {int(stats[0])} epochs (norm "
                          f"{float(stats[1])!r}; eta0 {float(eta0):.3e}): the iterates "
                          f"diverged or the problem's numbers are beyond float64"
                          f"{_common.scale_hint(prob)}")
    gamma = data.margins(w)
    objective = prob.objective_from_margins(gamma, float(w @ w))
    n_iter, gnorm = int(stats[0]), float(stats[1])
    converged = gnorm <= tol
    info = {"path": "linear", "method": "asgd", "subgrad_norm": gnorm, "residual": gnorm,
            "tol": tol, "eta0": float(eta0), "t0": int(t0), "n_iter": n_iter,
            "objective": objective,
            "note": "residual = norm of the subgradient with hinge ties counted as 0; "
                    "ASGD is a fixed-budget stochastic method (seed 001 uses 5 epochs)"}
    sol = Solution(objective=float(objective), coef=None, intercept=0.0, variables={"w": w},
                   status="optimal" if converged else "max_iter", solver="fast:asgd",
                   form="fast", time=time.perf_counter() - start, n_iter=n_iter, info=info)
    if not converged:
        _common.convergence_warning(f"{type(prob).__name__} ASGD (subgradient norm)", gnorm, tol,
                                 n_iter)
    return sol


def feature_space_repair(prob, sol):
    """A kernel ODML / LDM's second chance when its returned point fails the self-check:
    the point of the same multipliers recomputed in the certificate's feature space.

    ``coef = (I + AG)^{-1} Y v`` is exact for the dual, but on a badly conditioned Gram
    (a polynomial kernel on raw features, entries ~1e11) the stationarity it gives,
    ``||w + A-term - F^T Y v||`` with ``w = F^T coef``, carries the round-off of ``G coef``
    times the Gram's scale (1e-5 relative where the multipliers match the reference's to
    1e-16). Solved in the empirical map ``F`` (``G = F F^T``, r <= m columns), the r x r
    system ``(I + c F^T P F) w = F^T Y v`` is SPD and its Cholesky solve backward stable:
    the stationarity is then at round-off. The point returned carries that ``w`` and, for
    the predictions, the ``coef`` whose map ``F^T coef`` is nearer to it: the dual solver's,
    or the least-squares ``F^{+T} w``; the self-check judges it as any point. Only for a
    kernel (the linear path's ``w`` is already the feature-space one) and ``m`` up to the
    automatic reference's size (``F`` is an m x m eigendecomposition); else None."""
    from refmodels.reference import AUTO_REFERENCE_MAX_M

    from ._selfcheck import check, _worst

    name = prob.dual_names[0]
    mult = sol.variables.get(name)
    if (prob.kernel.is_linear or prob.m > AUTO_REFERENCE_MAX_M or sol.coef is None
            or mult is None or np.shape(mult) != (prob.m,)):
        return None
    F, y, m = np.asarray(prob.F, dtype=np.float64), prob.y, prob.m
    v = prob._v(np.asarray(mult, dtype=np.float64))
    PF = F - np.outer(y, y @ F) / m
    M = np.eye(F.shape[1]) + prob._A_coef * (F.T @ PF)
    try:
        w = sla.cho_solve(sla.cho_factor(0.5 * (M + M.T)), F.T @ (y * v))
    except np.linalg.LinAlgError:
        return None
    best, best_worst = None, np.inf
    for coef in (np.asarray(sol.coef, dtype=np.float64),
                 np.linalg.lstsq(F.T, w, rcond=None)[0]):
        cand = Solution(objective=sol.objective, coef=coef, intercept=0.0,
                        variables={**sol.variables, "w": w}, status=sol.status,
                        solver=sol.solver, form=sol.form, time=sol.time, n_iter=sol.n_iter,
                        info={**sol.info, "feature_space_w": True})
        worst = _worst(check(prob, cand))
        if worst < best_worst:
            best, best_worst = cand, worst
    return best


METHODS = {"dcd": _dcd_method, "asgd": _solve_asgd, "smo": _solve_smo}
SOLVERS = _methods.Solvers(METHODS, choose_method, repair=feature_space_repair)
