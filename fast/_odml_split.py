"""The split dual of linear ODML and LDM (SPEC §2–3): coordinate descent over the hinge
multipliers and a second, free multiplier of the margin variance, without whitening.

The primal of SPEC §2 on the linear kernel, ``gamma = Y X w``, with the variance written
through ``R = sqrt(c) P`` (``P = I - yy^T/m``, ``c = 2 mu1/m``, so ``R^2 = A``):
``mu1 gamma_v = (mu1/m) ||P X w||^2 = 1/2 ||s||^2`` with ``s = R X w``. Dualizing the
margin constraints (``alpha in [0, lam/m]``) and the equality ``s = R X w`` (a free
``rho in R^m``) and minimising the Lagrangian over ``w``, ``s`` and the slacks gives

.. math::

    D(\\alpha, \\rho) = e^\\top\\alpha - \\tfrac12\\|w(\\alpha, \\rho)\\|^2
    - \\tfrac12\\|\\rho\\|^2,\\qquad w(\\alpha, \\rho) = X^\\top(Yv - R\\rho),\\quad
    v = \\alpha + \\tfrac{\\mu_2}{m}e,

a lower bound of the primal for every ``alpha`` in its box and every ``rho`` (weak
duality), with no inverse: maximising over ``rho`` gives ``rho = R X w``, and then
``D`` is the dual of SPEC §2 (``H = Y X M^{-1} X^T Y``, ``M = I + X^T A X``, the d x d
matrix the whitened path factors). LDM is the same problem in its own parameters
(:attr:`refmodels.odml.ODML.box_dual`: box ``[0, upper]``, ``offset`` ``mu2/m``, ``metric``
``c``); its hinge multiplier is ``beta``, the variance multiplier here is ``rho`` for both.

Coordinate steps, one point at a time: ``alpha_i`` has the gradient ``gamma_i - 1`` and the
curvature ``||x_i||^2`` (box, as LIBLINEAR's ``solve_l2r_l1l2_svc``), ``rho_i`` the gradient
``rho_i - sqrt(c) (x_i - y_i xbar)^T w`` and the curvature ``1 + c ||x_i - y_i xbar||^2``
(free, strongly convex), with the dense mean ``xbar = X^T y / m``; the pair is minimised
exactly (``alpha_i`` along its Schur complement with ``rho_i`` at its optimum, projected on
the box, then ``rho_i`` given it), which keeps the alpha steps from being undone by the
variance's multipliers when ``c ||x_i||^2`` is large. Since
``R rho = sqrt(c) (rho - y (y^T rho)/m)``, ``w`` is kept as ``w = w_s + t xbar`` with
``w_s = X^T (Yv - sqrt(c) rho)`` (changed by a sparse row per step), the scalar
``t = sqrt(c) y^T rho`` and ``q = xbar^T w_s``; with the precomputed ``x_i^T xbar`` a step
costs O(nnz of row i), both steps of a point share one row product, and no dense m x d,
d x d or m x m array exists. Between chunks of epochs a truncated projected Newton-CG step
on the face (:func:`face_newton`) ends the slow tail of the descent.

Stopping: on the family's duality gap ``P(w) - D`` relative to the objective
(:func:`fast._common.relative_gap_target`), ``D`` the larger of ``D(alpha, rho)`` and
``D(alpha, R X w)`` (the certificate's dual value at the point,
:meth:`refmodels.odml._MarginDistributionProblem.split_dual_value`), and on the
certificate's stationarity ``||w - X^T(Yv - c P X w)||`` (the two ``w`` differ by
``sqrt(c) X^T P (sqrt(c) X w - rho)``): the epochs run in chunks, each ended by an exact
recomputation of ``w`` (no drift) and these checks, O(nnz) each.
"""
from __future__ import annotations

import time
from collections import namedtuple

import numpy as np
import scipy.sparse as sp
from numba import njit

from . import _chunk, _common
from ._chunk import PAUSED
from ._dcd_epochs import CSR_ENTRY_COST, POINT_COST
from ._rows import (PREFETCH_AHEAD, prefetch, row_arrays, row_axpy, row_dot, row_prefetch,
                    row_sqnorms)

#: the data of the epochs: CSR rows (``indptr`` int64, ``indices`` int32, ``data``), labels
#: ``y``, ``||x_i||^2`` (``sqn``), ``x_i^T xbar`` (``xb``) and the constants ``k``:
#: ``[sqrt(c), upper, ||xbar||^2, c]``
SplitData = namedtuple("SplitData", "indptr indices data y sqn xb k")
#: the run's arrays: ``alpha``, ``rho`` (m,), ``ws`` (d,), ``sc`` = ``[t, q]``, ``stats``,
#: the order of the points ``index`` and the resumable control ``ctl`` (zeros: a fresh run)
SplitState = namedtuple("SplitState", "alpha rho ws sc stats index ctl")
SplitOptions = namedtuple("SplitOptions", "tol max_iter shrinking seed")

S_EPOCHS, S_SPREAD, S_CONVERGED, S_UPDATES, S_NONFINITE, S_VISITS = range(6)
N_STATS = 6
(C_STARTED, C_IT, C_POS, C_ACTIVE, C_PGMAX_OLD, C_PGMIN_OLD, C_PGMAX_NEW,
 C_PGMIN_NEW, C_UPDATES) = range(9)
N_CTL = 9

DEFAULT_MAX_ITER = 100000
#: the default cap spends about this many multiply-adds (a visit reads its row twice) on
#: the points the epochs visit (a shrunk epoch visits its active set only), at least
#: ``MIN_EPOCHS`` full epochs' worth, in at most the DCD's ``EPOCH_CAP_FACTOR`` times as
#: many epochs
EPOCH_WORK_BUDGET = 5e9
MIN_EPOCHS = 100
#: a point whose ``alpha_i`` LIBLINEAR would shrink leaves the active set when also its
#: ``|rho_i|`` gradient is below this fraction of last epoch's projected-gradient extremes
RHO_SHRINK = 0.1
#: the first chunk of epochs between two exact checks; the chunks grow to a quarter of the
#: epochs run so far (the checks cost about three full epochs each)
FIRST_CHUNK = 4
#: the face Newton step (:func:`face_newton`) takes at most this many CG iterations, and
#: about ``FACE_WORK`` times the multiply-adds the epochs spent so far: a short truncated
#: Newton step between chunks of epochs, not a solve of the face (on rcv1-like data the
#: face's system is ill-conditioned and its CG iterations cost more than the epochs they
#: save; validation/decisions.md)
FACE_MAX_CG = 40
FACE_WORK = 1.0
#: a check whose gap ``P - D(alpha, rho)`` exceeds this many times the target skips the
#: exact-``rho`` dual and the stationarity (two of its four passes over the rows)
GAP_FAR = 100.0


@njit(cache=True)
def _epochs(data, st, opt, budget):
    """Epochs of the split coordinate descent (module docstring), point by point in random
    order, resumable in chunks of about ``budget`` work units (:mod:`fast._chunk`).

    At point ``i``: ``r = x_i^T w`` and ``xw = xbar^T w`` from the kept ``w_s``, ``t``, ``q``;
    the step of ``alpha_i`` (box), then that of ``rho_i`` (free), each updating ``r`` and
    ``xw`` exactly; then one sparse update of ``w_s`` with the summed change. A point whose
    ``alpha_i`` is shrunk (LIBLINEAR's rule) and whose ``rho_i`` gradient is small
    (:data:`RHO_SHRINK`) leaves the active set; the stop (spread of the projected gradients
    of both at most ``tol``) is re-checked on the full set."""
    indptr, indices, vals, y, sqn, xb, k = data
    alpha, rho, ws, sc, stats, index, ctl = st
    tol, max_iter, shrinking, seed = opt
    sq, upper, xbsq, c = k[0], k[1], k[2], k[3]
    m = alpha.shape[0]
    INF = np.inf
    Xd = np.zeros((1, 1))
    if ctl[C_STARTED] == 0.0:
        np.random.seed(seed)
        for i in range(m):
            index[i] = i
        active, it, n_updates, a = m, 0, 0, -1
        pgmax_old, pgmin_old, pgmax_new, pgmin_new = INF, -INF, 0.0, 0.0
        ctl[C_STARTED] = 1.0
    else:
        active, it, n_updates, a = (int(ctl[C_ACTIVE]), int(ctl[C_IT]), int(ctl[C_UPDATES]),
                                    int(ctl[C_POS]))
        pgmax_old, pgmin_old = ctl[C_PGMAX_OLD], ctl[C_PGMIN_OLD]
        pgmax_new, pgmin_new = ctl[C_PGMAX_NEW], ctl[C_PGMIN_NEW]
    converged = False
    nonfinite = False
    work = 0.0
    while it < max_iter:
        if a < 0:
            for t in range(active):
                b = t + np.random.randint(0, active - t)
                tmp = index[t]
                index[t] = index[b]
                index[b] = tmp
            pgmax_new = 0.0
            pgmin_new = 0.0
            a = 0
        while a < active:
            stats[S_VISITS] += 1.0
            if work >= budget:
                ctl[C_ACTIVE], ctl[C_IT], ctl[C_UPDATES], ctl[C_POS] = active, it, n_updates, a
                ctl[C_PGMAX_OLD], ctl[C_PGMIN_OLD] = pgmax_old, pgmin_old
                ctl[C_PGMAX_NEW], ctl[C_PGMIN_NEW] = pgmax_new, pgmin_new
                return PAUSED
            i = index[a]
            # (the rows ahead asked for now: :func:`fast._rows.row_prefetch`)
            if a + PREFETCH_AHEAD < active:
                ia = index[a + PREFETCH_AHEAD]
                row_prefetch(ia, indptr, indices, vals)
                # (and the point's own entries, an L2 miss each in random order)
                prefetch(alpha, ia)
                prefetch(rho, ia)
                prefetch(y, ia)
                prefetch(sqn, ia)
                prefetch(xb, ia)
            if a + 2 * PREFETCH_AHEAD < active:
                prefetch(indptr, index[a + 2 * PREFETCH_AHEAD])
            cost = CSR_ENTRY_COST * (indptr[i + 1] - indptr[i])
            work += POINT_COST + cost
            yi = y[i]
            t_ = sc[0]
            r = row_dot(1, i, Xd, indptr, indices, vals, ws) + t_ * xb[i]
            xw = sc[1] + t_ * xbsq
            # alpha_i: gradient gamma_i - 1 (box [0, upper]); rho_i: gradient
            # rho_i - sqrt(c) (r - y_i xw) (free)
            ai = alpha[i]
            g = yi * r - 1.0
            gr = rho[i] - sq * (r - yi * xw)
            if not (abs(g) < INF and abs(gr) < INF):
                nonfinite = True
                break
            shrunk = False
            pg = 0.0
            if ai <= 0.0:
                if shrinking and g > pgmax_old:
                    shrunk = True
                elif g < 0.0:
                    pg = g
            elif ai >= upper:
                if shrinking and g < pgmin_old:
                    shrunk = True
                elif g > 0.0:
                    pg = g
            else:
                pg = g
            if shrunk and (sq == 0.0 or abs(gr) <= RHO_SHRINK * min(pgmax_old, -pgmin_old)):
                active -= 1
                index[a] = index[active]
                index[active] = i
                continue
            if not shrunk:
                if pg > pgmax_new:
                    pgmax_new = pg
                if pg < pgmin_new:
                    pgmin_new = pg
            if gr > pgmax_new:
                pgmax_new = gr
            if gr < pgmin_new:
                pgmin_new = gr
            # the 2 x 2 curvature of (alpha_i, rho_i): ||x_i||^2, 1 + c ||x_i - y_i xbar||^2
            # and -sqrt(c) (y_i ||x_i||^2 - x_i^T xbar); the step of alpha_i is the exact
            # minimum along it with rho_i at its optimum (the Schur complement
            # (||x_i||^2 + c (||x_i||^2 ||xbar||^2 - (x_i^T xbar)^2)) / (1 + c h), free of
            # cancellation), then rho_i at its optimum given the new alpha_i
            h = sqn[i] - 2.0 * yi * xb[i] + xbsq
            if h < 0.0:
                h = 0.0
            hrr = 1.0 + c * h
            har = -sq * (yi * sqn[i] - xb[i])
            da = 0.0
            if not shrunk and abs(pg) > 1e-300:
                det = sqn[i] * xbsq - xb[i] * xb[i]
                if det < 0.0:
                    det = 0.0
                schur = (sqn[i] + c * det) / hrr
                if schur > 0.0:
                    new = min(max(ai - (g - har * gr / hrr) / schur, 0.0), upper)
                else:
                    new = 0.0 if g > 0.0 else upper     # zero row: linear in alpha_i
                da = new - ai
                if da != 0.0:
                    alpha[i] = new
                    n_updates += 1
            dr = 0.0
            if sq > 0.0:
                dr = -(gr + har * da) / hrr
                if dr != 0.0:
                    rho[i] += dr
                    n_updates += 1
            coef = da * yi - sq * dr
            if coef != 0.0:
                row_axpy(1, i, coef, Xd, indptr, indices, vals, ws)
                sc[1] += coef * xb[i]
                sc[0] += sq * yi * dr
                work += cost
            a += 1
        if nonfinite:
            break
        it += 1
        a = -1
        if pgmax_new - pgmin_new <= tol:
            if active == m:
                converged = True
                break
            active = m
            pgmax_old, pgmin_old = INF, -INF
            continue
        pgmax_old, pgmin_old = pgmax_new, pgmin_new
        if pgmax_old <= 0.0:
            pgmax_old = INF
        if pgmin_old >= 0.0:
            pgmin_old = -INF
    stats[S_EPOCHS] = it
    stats[S_SPREAD] = pgmax_new - pgmin_new
    stats[S_CONVERGED] = 1.0 if converged else 0.0
    stats[S_UPDATES] = n_updates
    stats[S_NONFINITE] = 1.0 if nonfinite else 0.0
    return 0


class SplitProblem:
    """The data of the split dual of ``prob`` (ODML or LDM, linear kernel): CSR rows (a
    dense ``X`` is converted: this path is for sparse data), labels, the mean
    ``xbar = X^T y / m`` and the constants of :attr:`refmodels.odml.ODML.box_dual`."""

    def __init__(self, prob):
        X = prob.X
        if not sp.issparse(X):
            X = sp.csr_matrix(np.asarray(X, dtype=np.float64))
        _, self.X, _, self.indptr, self.indices, self.data = row_arrays(X)
        box = prob.box_dual
        self.m, self.d = self.X.shape
        self.y = np.ascontiguousarray(prob.y, dtype=np.float64)
        self.c = float(box.metric)
        self.sq = float(np.sqrt(self.c))
        self.offset = float(box.offset)
        self.upper = float(box.hi[0])
        self.xbar = np.asarray(self.X.T @ self.y).ravel() / self.m
        self.xb = np.asarray(self.X @ self.xbar).ravel()
        self.sqn = row_sqnorms(self.X)
        self.row_work = max(1.0, self.X.nnz / self.m)

    def coef(self, alpha, rho):
        """``Yv - R rho``: ``w = X^T coef``."""
        m = self.m
        return self.y * (alpha + self.offset) - self.sq * (rho - self.y * (self.y @ rho) / m)

    def values(self, prob, alpha, rho, target=None):
        """``(w, coef, P, D, stationarity, scale, Xw)`` at the iterate, exactly: ``w`` and
        ``P(w)``, ``D(alpha, rho)`` (two passes over the rows), and ``X w``; then, unless
        that gap is above :data:`GAP_FAR` times ``target(P)`` (the stop cannot hold: the
        descent keeps ``rho`` near its optimum, where the two duals agree to 1e-9 relative
        on rcv1-like rows), two more passes for the larger of it and ``D(alpha, R X w)``
        and the certificate's stationarity ``||w - X^T(Yv - c P X w)||`` with its scale
        (:meth:`refmodels.odml._MarginDistributionProblem.kkt_residuals`); skipped, they are
        ``inf`` and 1. (One ``X^T`` product with two columns is slower than two with one,
        in SciPy.)"""
        X, y, m = self.X, self.y, self.m
        coef = self.coef(alpha, rho)
        w = np.asarray(X.T @ coef).ravel()
        Xw = np.asarray(X @ w).ravel()
        ww = float(w @ w)
        P = float(prob.objective_from_margins(y * Xw, ww))
        D1 = float(np.sum(alpha) - 0.5 * ww - 0.5 * float(rho @ rho))
        if target is not None and P - D1 > GAP_FAR * target(P):
            return w, coef, P, D1, np.inf, 1.0, Xw
        xyv = np.asarray(X.T @ (y * (alpha + self.offset))).ravel()
        pxw = Xw - y * (y @ Xw) / m
        xpxw = np.asarray(X.T @ pxw).ravel()
        wd = xyv - self.c * xpxw
        D2 = float(np.sum(alpha) - 0.5 * float(wd @ wd) - 0.5 * self.c * float(pxw @ pxw))
        grad = float(np.linalg.norm(w - wd))
        scale = (1.0 + np.sqrt(ww) + self.c * float(np.linalg.norm(xpxw))
                 + self.offset * m * float(np.linalg.norm(self.xbar))
                 + float(np.linalg.norm(xyv - self.offset * m * self.xbar)))
        return w, coef, P, max(D1, D2), grad, scale, Xw


def face_newton(sp_, alpha, rho, budget, every_rho, w=None, Xw=None):
    """A projected Newton step of ``-D`` over the points ``S``: the free ``alpha_i`` (inside
    the box, or at a bound with a gradient pointing inside) and the ``rho_i`` of ``S`` move,
    the rest stays. ``S`` is every point when ``every_rho`` (the ``rho`` block is far from diagonal,
    :func:`solve`), else the free points. With ``dw = X_S^T (Y_S da - sqrt(c) dr) +
    sqrt(c) (y_S^T dr) xbar`` (``R`` through the mean row), the Hessian is
    ``B^T B + diag(0, I)``, never formed: the direction is found by conjugate gradients, each
    iteration one product with ``X_S^T`` and one with ``X_S`` (O(their stored entries)),
    stopped at a relative residual of 1e-12, on curvature that is not positive, at
    :data:`FACE_MAX_CG` iterations or when ``budget`` multiply-adds are spent. Coordinate
    descent crawls where ``c X^T P X`` is large (the ``rho`` block is ``I + c P X X^T P``);
    this Hessian is the identity plus a matrix of rank at most ``d + |F|``, where conjugate
    gradients end in about that many steps. The step is projected on the box and halved
    until the exact change of the quadratic is a decrease; ``alpha``, ``rho`` are then
    changed in place. ``w`` and ``X w`` at the iterate when the caller has them (the
    check's), else computed. Returns the CG iterations, positive when the step was kept,
    negative (or 0) when not."""
    X, y, m, sq, xbar = sp_.X, sp_.y, sp_.m, sp_.sq, sp_.xbar
    if w is None or Xw is None:
        w = np.asarray(X.T @ sp_.coef(alpha, rho)).ravel()
        Xw = np.asarray(X @ w).ravel()
    g = y * Xw - 1.0
    # the free alpha_i and those at a bound whose gradient points inside (a projected step)
    free = (((alpha > 0.0) & (alpha < sp_.upper)) | ((alpha <= 0.0) & (g < 0.0))
            | ((alpha >= sp_.upper) & (g > 0.0)))
    S = np.arange(m) if (every_rho and sq > 0.0) else np.flatnonzero(free)
    if S.size == 0:
        return 0
    XS = X if S.size == m else X[S]
    yS, fS = y[S], free[S].astype(np.float64)

    def dw_of(da, dr):
        return np.asarray(XS.T @ (yS * da - sq * dr)).ravel() + (sq * float(yS @ dr)) * xbar

    def hess(da, dr):
        dw = dw_of(da, dr)
        XSdw = np.asarray(XS @ dw).ravel()
        return fS * yS * XSdw, dr - sq * (XSdw - yS * float(xbar @ dw))

    XSw = Xw[S]
    ga = fS * (yS * XSw - 1.0)
    gr = rho[S] - sq * (XSw - yS * float(xbar @ w))
    n = S.size
    per_iter = 2.0 * XS.nnz + 10.0 * n + 2.0 * sp_.d
    max_its = int(min(FACE_MAX_CG, 2 * n + 1, max(1.0, budget / per_iter)))
    Da, Dr = np.zeros(n), np.zeros(n)
    ra, rr_ = -ga, -gr
    pa, pr = ra.copy(), rr_.copy()
    rr = float(ra @ ra + rr_ @ rr_)
    stop = 1e-24 * rr
    its = 0
    while its < max_its and rr > stop:
        qa, qr = hess(pa, pr)
        curv = float(pa @ qa + pr @ qr)
        its += 1
        if not curv > 1e-14 * float(pa @ pa + pr @ pr):
            break
        step = rr / curv
        Da += step * pa
        Dr += step * pr
        ra -= step * qa
        rr_ -= step * qr
        rr_new = float(ra @ ra + rr_ @ rr_)
        pa, pr = ra + (rr_new / rr) * pa, rr_ + (rr_new / rr) * pr
        rr = rr_new
    if not (np.any(Da) or np.any(Dr)):
        return -its
    a0 = alpha[S]
    scale = 1.0 + abs(float(np.sum(alpha))) + float(w @ w)
    t = 1.0
    for _ in range(30):
        da = np.clip(a0 + t * Da, 0.0, sp_.upper) - a0
        dr = t * Dr
        dw = dw_of(da, dr)
        change = float(ga @ da + gr @ dr) + 0.5 * (float(dw @ dw) + float(dr @ dr))
        if change < -1e-15 * scale:
            alpha[S] = a0 + da
            rho[S] += dr
            return max(its, 1)
        t *= 0.5
    return -its


def solve(prob, tol, max_iter, random_state, alpha0, w0=None, shrinking=True, polish=True,
          gap_tol=None):
    """:func:`run` with BLAS on one thread (:func:`fast._polish.one_blas_thread`): the
    driver's products are vector operations, which a second BLAS thread only slows when
    the cores are busy."""
    from ._polish import one_blas_thread

    with one_blas_thread():
        return run(prob, tol, max_iter, random_state, alpha0, w0, shrinking, polish, gap_tol)


def run(prob, tol, max_iter, random_state, alpha0, w0=None, shrinking=True, polish=True,
        gap_tol=None):
    """Run the split coordinate descent on ``prob`` from ``alpha0`` and ``rho = R X w0``
    (the optimal ``rho`` at the point ``w0``: a warm start's ``w``; without it the point of
    ``alpha0`` with ``rho = 0``). Returns ``(alpha, w, coef, P, info)``; ``info`` as the
    DCD's (``converged``, ``dual_objective``, ``n_iter``, ...)."""
    t0 = time.perf_counter()
    sp_ = SplitProblem(prob)
    m, d = sp_.m, sp_.d
    visit_cap, work_cap_epochs = np.inf, None
    if max_iter is None:
        work_cap_epochs = int(min(DEFAULT_MAX_ITER, max(
            MIN_EPOCHS, EPOCH_WORK_BUDGET / (2.0 * m * sp_.row_work))))
        visit_cap = float(work_cap_epochs) * m
        from ._dcd import EPOCH_CAP_FACTOR

        max_iter = min(DEFAULT_MAX_ITER, EPOCH_CAP_FACTOR * work_cap_epochs)
    target = _common.relative_gap_target(gap_tol, prob)
    alpha = np.array(alpha0, dtype=np.float64)
    # rho at its optimum for the starting alpha's point with rho = 0 (exact for c = 0)
    if w0 is None:
        w0 = np.asarray(sp_.X.T @ sp_.coef(alpha, np.zeros(m))).ravel()
    Xw0 = np.asarray(sp_.X @ w0).ravel()
    rho = sp_.sq * (Xw0 - sp_.y * (sp_.y @ Xw0) / m)
    data = SplitData(sp_.indptr, sp_.indices, sp_.data, sp_.y, sp_.sqn, sp_.xb,
                     np.array([sp_.sq, sp_.upper, float(sp_.xbar @ sp_.xbar), sp_.c]))
    # the rho block I + c P X X^T P is far from its diagonal when some c ||x_i - y_i xbar||^2
    # reaches 1: the face Newton step then moves every rho_i, else those of the free points
    h = sp_.sqn - 2.0 * sp_.y * sp_.xb + float(sp_.xbar @ sp_.xbar)
    every_rho = bool(sp_.c * float(np.max(h, initial=0.0)) >= 1.0)
    stats = np.zeros(N_STATS)
    ctl = np.zeros(N_CTL)
    index = np.empty(m, dtype=np.int64)
    seed = _common.seed_from(random_state)
    epochs, rounds, n_updates, n_checks = 0, 0, 0, 0
    cur_tol = float(tol)
    converged = stopped_on_gap = False
    chunk = FIRST_CHUNK
    work, n_face, n_polish, n_visits = 0.0, 0, 0, 0
    epoch_time = check_time = polish_time = 0.0
    while True:
        ws = np.asarray(sp_.X.T @ (sp_.y * (alpha + sp_.offset) - sp_.sq * rho)).ravel()
        sc = np.array([sp_.sq * float(sp_.y @ rho), float(sp_.xbar @ ws)])
        ctl[:] = 0.0                  # a fresh run of the epochs (seeded; all points active)
        stats[S_VISITS] = 0.0
        st = SplitState(alpha, rho, ws, sc, stats, index, ctl)
        # (an epoch visits at most m points: the visits stop within an epoch of their cap)
        left = max_iter - epochs if visit_cap == np.inf else min(
            max_iter - epochs, max(1, int(np.ceil((visit_cap - n_visits) / m))))
        opt = SplitOptions(cur_tol, int(min(chunk, left)), bool(shrinking),
                           int(seed + rounds) % (2**31))
        tp = time.perf_counter()
        while _epochs(data, st, opt, _chunk.budget()) == PAUSED:
            pass
        epoch_time += time.perf_counter() - tp
        rounds += 1
        epochs += int(stats[S_EPOCHS])
        n_updates += int(stats[S_UPDATES])
        n_visits += int(stats[S_VISITS])
        work += 2.0 * sp_.row_work * (stats[S_UPDATES] + stats[S_EPOCHS] * m)
        if stats[S_NONFINITE]:
            from ._dcd import _not_finite

            _not_finite("a gradient", epochs)
        pg_conv = bool(stats[S_CONVERGED])
        tp = time.perf_counter()
        w, coef, P, D, grad, scale, Xw = sp_.values(prob, alpha, rho, target)
        check_time += time.perf_counter() - tp
        n_checks += 1
        if not (np.isfinite(P) and np.isfinite(D)):
            from ._dcd import _not_finite

            _not_finite(f"the duality gap ({P!r} - {D!r})", epochs)
        ok = True if target is None else (P - D <= target(P)
                                          and _common.within_check(grad, scale))
        if ok and (target is not None or pg_conv):
            converged, stopped_on_gap = True, target is not None
            break
        if pg_conv and target is not None and cur_tol > 1e-14:
            cur_tol = max(cur_tol / 10.0, 1e-14)        # the spread met, the gap not yet
        elif pg_conv:
            converged = True
            break
        if epochs >= max_iter or n_visits >= visit_cap:
            break
        chunk = max(FIRST_CHUNK, epochs // 4)
        if polish:
            tp = time.perf_counter()
            steps = face_newton(sp_, alpha, rho, FACE_WORK * work + 1e6, every_rho, w, Xw)
            polish_time += time.perf_counter() - tp
            n_face += abs(steps)
            if steps > 0:
                # the Newton steps, not the epochs, make the progress: check again soon
                n_polish += 1
                chunk = FIRST_CHUNK
    info = {"dual_objective": D, "path": "split", "kernel_path": "linear", "n_iter": epochs,
            "pg_spread": float(stats[S_SPREAD]), "pg_max_abs": float(stats[S_SPREAD]),
            "converged": converged, "n_updates": n_updates, "tol": float(tol),
            "max_iter": int(max_iter), "work_cap_epochs": work_cap_epochs,
            "tol_final": cur_tol, "stopped_on_gap": stopped_on_gap,
            "shrinking": bool(shrinking), "gap": P - D, "stationarity": grad,
            "n_checks": n_checks, "loop_time": time.perf_counter() - t0,
            "whitened": False, "d": d, "n_polish": int(n_polish), "face_cg": int(n_face),
            "point_visits": n_visits,
            "epoch_time": epoch_time, "check_time": check_time, "polish_time": polish_time}
    return alpha, w, coef, P, info
