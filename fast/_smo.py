"""One SMO for duals with an equality constraint (LIBSVM's general form).

.. math::

    \\min_\\alpha\\ \\tfrac12\\alpha^\\top Q\\alpha + p^\\top\\alpha
    \\quad\\text{s.t.}\\quad s^\\top\\alpha = 0,\\ 0 \\le \\alpha \\le u,
    \\qquad Q_{ij} = s_i s_j \\tilde K_{ij},\\ s_i \\in \\{-1, +1\\}.

The variables live on "points" that may repeat: variable ``t`` sits on point
``pt[t]`` and :math:`\\tilde K_{ij} = K[pt_i, pt_j]`. The SVM with intercept (SPEC §1)
has one variable per point (``s = y``, ``p = -e``, ``u = C``); SVMm (SPEC §6, seed 003
eq. 15) has two, ``[alpha; beta]`` with signs ``[y; -y]``, ``p = [-e; (1+eps) e]`` and
boxes ``[C1; C2]``: the 2m x 2m matrix is never built, a row of ``K`` is fetched once
for both copies.

The algorithm is that of LIBSVM's ``Solver`` (``svm.cpp``; Fan, Chen and Lin, JMLR 2005):

* working-set selection WSS3: ``i`` maximises :math:`-s_t\\nabla_t f` over
  :math:`I_{up}` (:math:`s_t=+1, \\alpha_t<u_t` or :math:`s_t=-1, \\alpha_t>0`),
  ``j`` minimises the second-order decrease :math:`-(g_i+\\dots)^2/a_{ij}` over
  :math:`I_{low}` (:math:`s_t=+1, \\alpha_t>0` or :math:`s_t=-1, \\alpha_t<u_t`),
  with :math:`a_{ij} = K_{ii}+K_{jj}-2K_{ij}` (``TAU`` when not positive);
* stopping when the maximal KKT violation
  :math:`m(\\alpha)-M(\\alpha) = \\max_{I_{up}}(-s_t g_t) + \\max_{I_{low}}(s_t g_t) \\le tol`;
* shrinking every ``min(n, 1000)`` iterations, with gradient reconstruction from
  :math:`\\bar G_t = \\sum_{j:\\alpha_j=u_j} u_j Q_{tj}`, unshrinking once when the
  violation drops below ``10 tol`` and always before declaring optimality; as a
  safeguard (not in LIBSVM) all variables are also brought back every
  ``max(100 n, 10**4)`` iterations (ill-conditioned kernels with duplicated points
  otherwise stalled for millions of iterations on a wrongly shrunk set);
* as in LIBSVM (``swap_index``), the variables are kept in an order where the active ones
  come first: a shrunk point (all its variables) is swapped behind them, so the scans of
  the working-set selection and the gradient updates run over a contiguous range,
  without an index array (SVMm m = 1,000 with its Gram: 19.6 -> 14.4 ms; ``smo_solve`` takes and returns
  the caller's order);
* beyond LIBSVM, the state is kept per point, not per variable (see "the state kept per
  point" below): ``f = K nu`` over the ``m`` points gives every copy's gradient
  (:math:`G_t = p_t + s_t f_{pt_t}`), so a step updates ``m`` numbers, not ``2m``, and WSS3
  scans the points (the copies of a point share ``f``, ``K_tt`` and ``K_it``) while picking
  the same pair as WSS3 over the variables; the update of ``f`` and the next scan for ``i``
  share one pass (SVMm m = 1,000 with its Gram: 12.1 -> 9.2 ms; the SVM's is unchanged in
  iterations and faster too);
* beyond LIBSVM, once the free set has not changed for ``NEWTON_WAIT`` steps, a Newton
  step on it with the equality kept (:func:`_newton`: Cholesky of ``K_FF``, cut at the box
  as a primal active-set method; tried only when its cost is of the order of the steps
  that preceded it): the SMO's linear tail ends there (SVMm m = 1,000: 3791 -> 1291
  iterations, 9.0 -> 6.4 ms with its Gram); the SMO resumes from it and alone decides
  the stop;
* kernel rows from the full Gram when it is at hand and fits in ``cache_size`` MB,
  otherwise computed on demand into an LRU row cache of ``cache_size`` MB
  (:mod:`fast._kernels`; all rows stay once computed when the Gram fits);
* beyond LIBSVM, with the default tolerance: the iterations run in chunks of
  ``max(20 n, 20000)``, and a chunk that ends without reaching the tolerance is followed
  by an active-set Newton refinement on the free set (:func:`newton_polish`, the shared
  :func:`fast._polish.active_set_qp` with the equality constraint): the SMO's linear tail
  crawls on ill-conditioned duals (linear kernel in 2-D with C = 1e4: 10^6 iterations
  without, 6 * 10^4 with); a problem that finishes in its first chunk runs exactly as
  before;
* the intercept from the KKT conditions (LIBSVM's ``calculate_rho``): the mean of
  :math:`-s_t g_t` over free variables, otherwise the midpoint of the allowed interval.

Without the equality constraint (``has_eq=False``, problems without intercept) the
same machinery takes single-variable steps (greedy coordinate descent: the variable
of largest objective decrease), stops on the maximal projected gradient and shrinks
bound variables whose gradient points outward by more than the current violation.
"""
from __future__ import annotations

import numbers
import time
import warnings

import numpy as np
from numba import njit

from . import _kernels as K
from ._polish import active_set_qp

TAU = 1e-12
#: steps with an unchanged free set before a Newton step on it (:func:`_newton`)
NEWTON_WAIT = 100
#: a Newton step on ``r`` free variables is tried when ``r^3 <= NEWTON_COST * wait *
#: active_size``: its factorisation (``r^3 / 6`` vectorised multiply-adds, ~0.03 ns per
#: ``r^3``) then costs at most about 5 times the ``wait`` steps of the SMO over
#: ``active_size`` points (~6 ns per point) that preceded it
NEWTON_COST = 1000.0
DEFAULT_TOL = 1e-8
#: kernel-path statistics kept in the ``stats`` array of the solver
_REQ, _MISS, _CLOCK, _RECON, _SHRINK, _RESUME, _POLISH = 0, 1, 2, 3, 4, 5, 6


# ---------------------------------------------------------------------------------------
# kernel rows
# ---------------------------------------------------------------------------------------
class RowSource:
    """Where the SMO gets rows of ``K``: a given full Gram (``gram=``; also for a
    precomputed kernel), or rows of ``kernel`` over ``X`` computed on demand into an LRU
    cache of ``cache_size`` MB."""

    def __init__(self, kernel=None, X=None, cache_size=200.0, gram=None):
        if gram is not None:
            self.path = "gram"
            Gm = np.ascontiguousarray(gram, dtype=np.float64)
            self.m = Gm.shape[0]
        else:
            kind = K.kernel_params(kernel)[0]
            self.m = X.shape[0]
            if kind == K.PRECOMPUTED:
                self.path = "gram"
                Gm = K.gram(kernel, X)
            else:
                self.path = "cache"
        self.kernel = kernel
        z2, z1, zi = np.zeros((1, 1)), np.zeros(1), np.zeros(1, dtype=np.int64)
        if self.path == "gram":
            self.diag = np.ascontiguousarray(np.diag(Gm), dtype=np.float64)
            self.src = (True, Gm, 0, 0.0, 1, 0.0, z2, z1, z2, zi, zi, zi)
            self.n_slots = 0
        else:
            kind, gamma, degree, coef0 = K.kernel_params(kernel)
            Xd = K.dense_data(X)
            sq = K.sq_norms(Xd)
            slots, slot_of, owner, last_used = K.make_cache(self.m, cache_size)
            self.n_slots = slots.shape[0]
            self.diag = np.ascontiguousarray(kernel.diag(Xd), dtype=np.float64)
            self.src = (False, z2, kind, gamma, degree, coef0, Xd, sq, slots, slot_of,
                        owner, last_used)

    def block(self, pts):
        """``K[pts][:, pts]`` (point indices, repeats allowed), dense."""
        if self.path == "gram":
            return self.src[1][np.ix_(pts, pts)]
        return np.asarray(self.kernel.gram(self.src[6][pts]), dtype=np.float64)

    def K_times(self, c):
        """``K c`` (used for objectives; Gram path only, else None)."""
        if self.path == "gram":
            return self.src[1] @ c
        return None


@njit(cache=True)
def _row(k, src, stats):
    use_gram, Gm, kind, gamma, degree, coef0, X, sq, slots, slot_of, owner, last_used = src
    if use_gram:
        return Gm[k]
    stats[_REQ] += 1
    if slot_of[k] < 0:
        stats[_MISS] += 1
    stats[_CLOCK] += 1
    return K.get_row(k, kind, gamma, degree, coef0, X, sq, slots, slot_of, owner, last_used,
                     stats[_CLOCK])


# ---------------------------------------------------------------------------------------
# the solver (numba): the state kept per point
# ---------------------------------------------------------------------------------------
#
# The variables are grouped by point: position ``q`` holds point ``pidx[q]`` and its ``k``
# copies (``k`` the largest number of variables on one point: 1 for the SVM, 2 for SVMm and
# MKLm) in row ``q`` of the ``(m, k)`` arrays ``A`` (alpha), ``S``, ``P``, ``U`` (``vid[q, b]``
# the caller's index of copy ``b``; a missing copy is a dummy pinned at ``A = U = 0``).
# Since the gradient of copy ``t`` of point ``i`` is ``G_t = p_t + s_t f_i`` with
# ``f = K nu``, ``nu_i = sum_{pt_t = i} s_t alpha_t``, the solver keeps ``f`` over the points
# (one update per point and step, not one per variable), and, as ``s_t = +-1``:
#
# * ``-s_t G_t = -s_t p_t - f_i`` and ``s_t G_t = s_t p_t + f_i``. With
#   ``UP[q] = max -s_t p_t`` over the copies of the point in ``I_up`` and
#   ``LOW[q] = max s_t p_t`` over its copies in ``I_low`` (``-inf`` when none; they change
#   only when an ``alpha`` of the point does), the maximal ``-s_t G_t`` over the point's
#   copies in ``I_up`` is ``UP[q] - f[q]`` and the maximal ``s_t G_t`` over its copies in
#   ``I_low`` is ``LOW[q] + f[q]``;
# * WSS3 is therefore a scan over points: ``i`` the copy of ``argmax_q UP[q] - f[q]``, and
#   for ``j``, all copies of a point share ``a_ij = K_ii + K_qq - 2 K_iq``, so the copy of
#   largest ``s_t G_t`` (``LOW[q] + f[q]``) is the point's best: the same pair as WSS3 over
#   the variables (ties between the copies of a point go to the last copy);
# * ``fbar = K nu_bar`` (``nu_bar`` from the variables at their upper bound) gives
#   LIBSVM's ``G_bar_t = s_t fbar_i``;
# * shrinking is per point: a point leaves the active set when all its copies (with
#   ``u > 0``) would be shrunk by LIBSVM's rule, so every free variable stays active and
#   the reconstruction ``f_i = fbar_i + sum_{active j} K_ij nu^free_j`` is exact.
#
# Points whose copies are all pinned (``u = 0``) are placed after all others and never
# enter the active set.


@njit(cache=True)
def _layout(pt, s, p, u, alpha, m):
    """The per-point layout of the caller's variables: ``(k, n_live, pidx, vid, A, S, P, U)``,
    the ``n_live`` points with a copy of ``u > 0`` first (in increasing point order)."""
    n = pt.shape[0]
    cnt = np.zeros(m, dtype=np.int64)
    live = np.zeros(m, dtype=np.bool_)
    for t in range(n):
        cnt[pt[t]] += 1
        if u[t] > 0.0:
            live[pt[t]] = True
    k = 1
    for i in range(m):
        if cnt[i] > k:
            k = cnt[i]
    pidx = np.empty(m, dtype=np.int64)
    pos = np.empty(m, dtype=np.int64)
    n_live = 0
    for i in range(m):
        if live[i]:
            pidx[n_live] = i
            pos[i] = n_live
            n_live += 1
    q = n_live
    for i in range(m):
        if not live[i]:
            pidx[q] = i
            pos[i] = q
            q += 1
    vid = np.full((m, k), -1, dtype=np.int64)
    A = np.zeros((m, k))
    S = np.ones((m, k))
    P = np.zeros((m, k))
    U = np.zeros((m, k))
    fill = np.zeros(m, dtype=np.int64)
    for t in range(n):
        q = pos[pt[t]]
        b = fill[q]
        fill[q] = b + 1
        vid[q, b] = t
        A[q, b] = alpha[t]
        S[q, b] = s[t]
        P[q, b] = p[t]
        U[q, b] = u[t]
    return k, n_live, pidx, vid, A, S, P, U


@njit(cache=True)
def _init_f(pidx, A, S, U, f, fbar, src, stats):
    """``f = K nu`` and ``fbar = K nu_bar`` at every position (rows of the points with a
    nonzero coefficient)."""
    m, k = A.shape
    c = np.zeros(m)
    cb = np.zeros(m)
    for q in range(m):
        i = pidx[q]
        for b in range(k):
            a = A[q, b]
            if a != 0.0:
                c[i] += S[q, b] * a
            if U[q, b] > 0.0 and a >= U[q, b]:
                cb[i] += S[q, b] * U[q, b]
    Kc = np.zeros(m)
    Kcb = np.zeros(m)
    for i in range(m):
        if c[i] != 0.0 or cb[i] != 0.0:
            row = _row(i, src, stats)
            ci, cbi = c[i], cb[i]
            for r in range(m):
                Kc[r] += ci * row[r]
                Kcb[r] += cbi * row[r]
    for q in range(m):
        f[q] = Kc[pidx[q]]
        fbar[q] = Kcb[pidx[q]]


@njit(cache=True)
def _point_bounds(q, A, S, P, U, UP, LOW):
    """``UP[q]`` (max ``-s_t p_t`` over the copies in ``I_up``) and ``LOW[q]`` (max
    ``s_t p_t`` over the copies in ``I_low``), ``-inf`` when there is none."""
    up = -np.inf
    low = -np.inf
    for b in range(A.shape[1]):
        a = A[q, b]
        v = S[q, b] * P[q, b]
        if S[q, b] > 0.0:
            if a < U[q, b] and -v >= up:
                up = -v
            if a > 0.0 and v >= low:
                low = v
        else:
            if a > 0.0 and -v >= up:
                up = -v
            if a < U[q, b] and v >= low:
                low = v
    UP[q] = up
    LOW[q] = low


@njit(cache=True)
def _copies(q, A, S, P, U):
    """The copies of point position ``q`` that realise ``UP[q]`` and ``LOW[q]`` (the last
    one on ties; -1 when none)."""
    up = -np.inf
    low = -np.inf
    bu = -1
    bl = -1
    for b in range(A.shape[1]):
        a = A[q, b]
        v = S[q, b] * P[q, b]
        if S[q, b] > 0.0:
            in_up = a < U[q, b]
            in_low = a > 0.0
        else:
            in_up = a > 0.0
            in_low = a < U[q, b]
        if in_up and -v >= up:
            up = -v
            bu = b
        if in_low and v >= low:
            low = v
            bl = b
    return bu, bl


@njit(cache=True)
def scan_up(active_size, f, UP):
    """``(G_max, i)``: ``max_{t in I_up} -s_t G_t`` over the active points and the position of
    its point (-1 when ``I_up`` is empty)."""
    Gmax = -np.inf
    imax = -1
    for q in range(active_size):
        v = UP[q] - f[q]
        if v >= Gmax:
            Gmax = v
            imax = q
    if Gmax == -np.inf:
        imax = -1
    return Gmax, imax


@njit(cache=True)
def select_working_set(active_size, pidx, f, LOW, QD, Gmax, imax, src, stats):
    """WSS3 (LIBSVM) over the active point positions ``0 .. active_size - 1``, given
    ``(G_max, i)`` of :func:`scan_up`: returns ``(i, j, m(alpha) - M(alpha))`` (point
    positions; the copies are those of :func:`_copies`).

    ``j = argmin_{I_low, s_t G_t > -G_max} -(G_max + s_t G_t)^2 / a_it`` with
    ``a_it = K_ii + K_tt - 2 K_it`` (``TAU`` when not positive); ``j = -1`` when no pair
    violates. ``QD[q]`` is ``K`` at the point of position ``q``.
    """
    if imax < 0:
        return -1, -1, -np.inf
    Ki = _row(pidx[imax], src, stats)
    Kii = QD[imax]
    Gmax2 = -np.inf
    jmin = -1
    obj_min = np.inf
    for q in range(active_size):
        sg = LOW[q] + f[q]
        if sg >= Gmax2:
            Gmax2 = sg
        gd = Gmax + sg
        if gd > 0.0:
            qc = Kii + QD[q] - 2.0 * Ki[pidx[q]]
            if qc <= 0.0:
                qc = TAU
            od = -(gd * gd) / qc
            if od <= obj_min:
                jmin = q
                obj_min = od
    return imax, jmin, Gmax + Gmax2


@njit(cache=True)
def select_single(active_size, f, A, S, P, U, QD):
    """No equality constraint: the variable of largest decrease; returns
    ``(position, copy, max violation)``."""
    best = -1.0
    qbest = -1
    bbest = -1
    viol = 0.0
    k = A.shape[1]
    for q in range(active_size):
        qd = QD[q]
        if qd <= TAU:
            qd = TAU
        for b in range(k):
            a = A[q, b]
            g = P[q, b] + S[q, b] * f[q]
            v = 0.0
            if g < 0.0 and a < U[q, b]:
                v = -g
            elif g > 0.0 and a > 0.0:
                v = g
            if v <= 0.0:
                continue
            if v > viol:
                viol = v
            a_new = a - g / qd
            if a_new < 0.0:
                a_new = 0.0
            elif a_new > U[q, b]:
                a_new = U[q, b]
            d = a_new - a
            gain = -(g * d + 0.5 * qd * d * d)
            if gain > best:
                best = gain
                qbest = q
                bbest = b
    return qbest, bbest, viol


@njit(cache=True)
def _update_fbar(was_upper, now_upper, su, Krow, pidx, fbar):
    """``fbar += +-s_t u_t K_{:, pt_t}`` when copy ``t`` reached or left its upper bound."""
    if was_upper != now_upper:
        c = su if now_upper else -su
        for q in range(fbar.shape[0]):
            fbar[q] += c * Krow[pidx[q]]


@njit(cache=True)
def _step_pair(iq, ib, jq, jb, active_size, pidx, f, fbar, QD, UP, LOW, A, S, P, U, src,
               stats):
    """Two-variable update of LIBSVM (clipped to the box, ``s^T alpha`` kept) on copy ``ib``
    of position ``iq`` and copy ``jb`` of position ``jq``; then ``f`` over the active
    points, in the same pass as the next :func:`scan_up`, whose ``(G_max, i)`` is
    returned."""
    Ki = _row(pidx[iq], src, stats)
    Kj = _row(pidx[jq], src, stats)
    # (row i was used last, so fetching row j never evicts it: the cache has >= 2 slots)
    Ci, Cj = U[iq, ib], U[jq, jb]
    si, sj = S[iq, ib], S[jq, jb]
    Gi = P[iq, ib] + si * f[iq]
    Gj = P[jq, jb] + sj * f[jq]
    ai_old, aj_old = A[iq, ib], A[jq, jb]
    ai, aj = ai_old, aj_old
    qc = QD[iq] + QD[jq] - 2.0 * Ki[pidx[jq]]
    if qc <= 0.0:
        qc = TAU
    if si != sj:
        delta = (-Gi - Gj) / qc
        diff = ai - aj
        ai += delta
        aj += delta
        if diff > 0.0:
            if aj < 0.0:
                aj = 0.0
                ai = diff
        else:
            if ai < 0.0:
                ai = 0.0
                aj = -diff
        if diff > Ci - Cj:
            if ai > Ci:
                ai = Ci
                aj = Ci - diff
        else:
            if aj > Cj:
                aj = Cj
                ai = Cj + diff
    else:
        delta = (Gi - Gj) / qc
        tot = ai + aj
        ai -= delta
        aj += delta
        if tot > Ci:
            if ai > Ci:
                ai = Ci
                aj = tot - Ci
        else:
            if aj < 0.0:
                aj = 0.0
                ai = tot
        if tot > Cj:
            if aj > Cj:
                aj = Cj
                ai = tot - Cj
        else:
            if ai < 0.0:
                ai = 0.0
                aj = tot
    A[iq, ib] = ai
    A[jq, jb] = aj
    _point_bounds(iq, A, S, P, U, UP, LOW)
    _point_bounds(jq, A, S, P, U, UP, LOW)
    ci = si * (ai - ai_old)
    cj = sj * (aj - aj_old)
    Gmax = -np.inf
    imax = -1
    for q in range(active_size):
        r = pidx[q]
        fq = f[q] + (ci * Ki[r] + cj * Kj[r])
        f[q] = fq
        v = UP[q] - fq
        if v >= Gmax:
            Gmax = v
            imax = q
    if Gmax == -np.inf:
        imax = -1
    _update_fbar(ai_old >= Ci, ai >= Ci, si * Ci, Ki, pidx, fbar)
    _update_fbar(aj_old >= Cj, aj >= Cj, sj * Cj, Kj, pidx, fbar)
    return Gmax, imax


@njit(cache=True)
def _step_single(iq, ib, active_size, pidx, f, fbar, QD, UP, LOW, A, S, P, U, src, stats):
    Ki = _row(pidx[iq], src, stats)
    q = QD[iq]
    if q <= TAU:
        q = TAU
    a_old = A[iq, ib]
    g = P[iq, ib] + S[iq, ib] * f[iq]
    a = a_old - g / q
    if a < 0.0:
        a = 0.0
    elif a > U[iq, ib]:
        a = U[iq, ib]
    A[iq, ib] = a
    _point_bounds(iq, A, S, P, U, UP, LOW)
    ci = S[iq, ib] * (a - a_old)
    for t in range(active_size):
        f[t] += ci * Ki[pidx[t]]
    _update_fbar(a_old >= U[iq, ib], a >= U[iq, ib], S[iq, ib] * U[iq, ib], Ki, pidx, fbar)


@njit(cache=True)
def reconstruct_gradient(active_size, n_live, pidx, f, fbar, A, S, U, src, stats):
    """``f`` at positions ``active_size .. n_live - 1`` (shrunk points), counted in ``stats``."""
    if active_size >= n_live:
        return
    stats[_RECON] += 1
    _reconstruct(active_size, n_live, pidx, f, fbar, A, S, U, src, stats)


@njit(cache=True)
def _reconstruct(lo, hi, pidx, f, fbar, A, S, U, src, stats):
    """``f_i = fbar_i + sum_{j} K_ij nu^free_j`` for positions ``lo .. hi - 1``, where
    ``nu^free_j = sum s_t alpha_t`` over the free copies of point ``j`` (all among the
    first ``lo`` positions): rows of the free points or of the reconstructed ones,
    whichever are fewer."""
    if lo >= hi:
        return
    k = A.shape[1]
    for q in range(lo, hi):
        f[q] = fbar[q]
    cf = np.zeros(lo)
    nr_free = 0
    for q in range(lo):
        acc = 0.0
        for b in range(k):
            a = A[q, b]
            if a > 0.0 and a < U[q, b]:
                acc += S[q, b] * a
        cf[q] = acc
        if acc != 0.0:
            nr_free += 1
    if nr_free <= hi - lo:
        for j in range(lo):
            if cf[j] != 0.0:
                Kj = _row(pidx[j], src, stats)
                c = cf[j]
                for q in range(lo, hi):
                    f[q] += c * Kj[pidx[q]]
    else:
        for q in range(lo, hi):
            Kq = _row(pidx[q], src, stats)
            acc = 0.0
            for j in range(lo):
                if cf[j] != 0.0:
                    acc += cf[j] * Kq[pidx[j]]
            f[q] += acc


@njit(cache=True)
def _be_shrunk_eq(q, f, A, S, P, U, Gmax1, Gmax2):
    """LIBSVM's ``be_shrunk`` for every copy (``u > 0``) of position ``q``: True if all."""
    for b in range(A.shape[1]):
        uu = U[q, b]
        if not uu > 0.0:
            continue
        g = P[q, b] + S[q, b] * f[q]
        a = A[q, b]
        if a >= uu:
            sh = (-g > Gmax1) if S[q, b] > 0.0 else (-g > Gmax2)
        elif a <= 0.0:
            sh = (g > Gmax2) if S[q, b] > 0.0 else (g > Gmax1)
        else:
            return False
        if not sh:
            return False
    return True


@njit(cache=True)
def _be_shrunk_single(q, f, A, S, P, U, M):
    """Without the equality constraint: ``be_shrunk`` with one threshold ``M`` (the maximal
    violation) for both sides."""
    return _be_shrunk_eq(q, f, A, S, P, U, M, M)


@njit(cache=True)
def violations(active_size, f, UP, LOW):
    """``(max_{I_up} -s_t G_t, max_{I_low} s_t G_t)`` over the active points."""
    Gmax1 = -np.inf
    Gmax2 = -np.inf
    for q in range(active_size):
        v1 = UP[q] - f[q]
        if v1 > Gmax1:
            Gmax1 = v1
        v2 = LOW[q] + f[q]
        if v2 > Gmax2:
            Gmax2 = v2
    return Gmax1, Gmax2


@njit(cache=True)
def _swap(a, c, pidx, f, fbar, QD, UP, LOW, vid, A, S, P, U):
    """Exchange point positions ``a`` and ``c`` (LIBSVM's ``swap_index``)."""
    pidx[a], pidx[c] = pidx[c], pidx[a]
    f[a], f[c] = f[c], f[a]
    fbar[a], fbar[c] = fbar[c], fbar[a]
    QD[a], QD[c] = QD[c], QD[a]
    UP[a], UP[c] = UP[c], UP[a]
    LOW[a], LOW[c] = LOW[c], LOW[a]
    for b in range(A.shape[1]):
        vid[a, b], vid[c, b] = vid[c, b], vid[a, b]
        A[a, b], A[c, b] = A[c, b], A[a, b]
        S[a, b], S[c, b] = S[c, b], S[a, b]
        P[a, b], P[c, b] = P[c, b], P[a, b]
        U[a, b], U[c, b] = U[c, b], U[a, b]


@njit(cache=True)
def _n_copies(q, U):
    c = 0
    for b in range(U.shape[1]):
        if U[q, b] > 0.0:
            c += 1
    return c


@njit(cache=True)
def _do_shrinking(has_eq, active_size, n_live, unshrink, tol, pidx, f, fbar, QD, UP, LOW, vid,
                  A, S, P, U, src, stats):
    if has_eq:
        Gmax1, Gmax2 = violations(active_size, f, UP, LOW)
        close = Gmax1 + Gmax2 <= 10.0 * tol
    else:
        M = select_single(active_size, f, A, S, P, U, QD)[2]
        Gmax1 = Gmax2 = M
        close = M <= 10.0 * tol
    if (not unshrink) and close:
        unshrink = True
        reconstruct_gradient(active_size, n_live, pidx, f, fbar, A, S, U, src, stats)
        active_size = n_live
        if has_eq:
            Gmax1, Gmax2 = violations(active_size, f, UP, LOW)
        else:
            M = select_single(active_size, f, A, S, P, U, QD)[2]
            Gmax1 = Gmax2 = M
    q = 0
    while q < active_size:
        if has_eq:
            sh = _be_shrunk_eq(q, f, A, S, P, U, Gmax1, Gmax2)
        else:
            sh = _be_shrunk_single(q, f, A, S, P, U, Gmax1)
        if sh:
            active_size -= 1
            stats[_SHRINK] += _n_copies(q, U)
            while active_size > q:
                if has_eq:
                    sh2 = _be_shrunk_eq(active_size, f, A, S, P, U, Gmax1, Gmax2)
                else:
                    sh2 = _be_shrunk_single(active_size, f, A, S, P, U, Gmax1)
                if not sh2:
                    _swap(q, active_size, pidx, f, fbar, QD, UP, LOW, vid, A, S, P, U)
                    break
                stats[_SHRINK] += _n_copies(active_size, U)
                active_size -= 1
        q += 1
    return active_size, unshrink


@njit(cache=True)
def _violation(has_eq, active_size, f, UP, LOW, A, S, P, U, QD):
    if has_eq:
        g1, g2 = violations(active_size, f, UP, LOW)
        v = g1 + g2
        return v if v > 0.0 else 0.0
    return select_single(active_size, f, A, S, P, U, QD)[2]


@njit(cache=True)
def _select(has_eq, active_size, have_up, Gmax, imax, pidx, f, UP, LOW, QD, A, S, P, U, src,
            stats):
    """One working-set selection: ``(iq, ib, jq, jb, violation)`` (``jq = -1``: none)."""
    if has_eq:
        if not have_up:
            Gmax, imax = scan_up(active_size, f, UP)
        iq, jq, viol = select_working_set(active_size, pidx, f, LOW, QD, Gmax, imax, src,
                                          stats)
        ib = _copies(iq, A, S, P, U)[0] if iq >= 0 else -1
        jb = _copies(jq, A, S, P, U)[1] if jq >= 0 else -1
        return iq, ib, jq, jb, viol
    iq, ib, viol = select_single(active_size, f, A, S, P, U, QD)
    return iq, ib, iq, ib, viol


@njit(cache=True, fastmath={"reassoc", "contract"})
def _dot_rows(M, i, j, n):
    """``M[i, :n] @ M[j, :n]`` (reassociated: LLVM vectorises it, 4x faster)."""
    acc = 0.0
    for c in range(n):
        acc += M[i, c] * M[j, c]
    return acc


@njit(cache=True)
def _cholesky(M, n):
    """Lower Cholesky factor of ``M[:n, :n]`` in place (row-major, the inner products run
    along rows); False when a pivot is not above ``1e-12`` times the largest diagonal."""
    dmax = 0.0
    for i in range(n):
        if M[i, i] > dmax:
            dmax = M[i, i]
    thr = 1e-12 * dmax
    for j in range(n):
        for i in range(j, n):
            acc = M[i, j] - _dot_rows(M, i, j, j)
            if i == j:
                if not acc > thr:
                    return False
                M[j, j] = np.sqrt(acc)
            else:
                M[i, j] = acc / M[j, j]
    return True


@njit(cache=True)
def _chol_solve(L, n, x):
    """``x <- (L L^T)^{-1} x`` for the factor of :func:`_cholesky`."""
    for i in range(n):
        acc = x[i]
        for c in range(i):
            acc -= L[i, c] * x[c]
        x[i] = acc / L[i, i]
    for i in range(n - 1, -1, -1):
        acc = x[i]
        for c in range(i + 1, n):
            acc -= L[c, i] * x[c]
        x[i] = acc / L[i, i]


@njit(cache=True)
def _newton(active_size, has_eq, pidx, f, fbar, UP, LOW, A, S, P, U, src, stats, budget):
    """Newton step on the free set, the equality kept (beyond LIBSVM): returns True if
    applied.

    The free variables (at most one per point, else nothing is done) are moved to the
    minimiser of the dual on their face, ``K_FF dnu + b e = -s_t p_t - f_F`` with
    ``e^T dnu = 0`` (``dnu`` the change of ``nu`` at the free points, ``b`` the intercept;
    without the equality ``b = 0``), by a Cholesky factorisation of ``K_FF``. When the
    step leaves the box it is cut at the first bound met, that variable is fixed there and
    the face's problem solved again (a primal active-set method, at most 8 rounds); every
    step decreases the dual objective (convexity). Bound variables are not freed: the SMO
    resumes from the new point and alone decides the stop. ``f``, ``fbar``, ``UP`` and
    ``LOW`` are brought up to date over the active points. Nothing is done either when
    ``r^3`` (``r`` free variables; the factorisation costs ``r^3 / 6`` multiply-adds)
    exceeds ``budget``.
    """
    k = A.shape[1]
    fq = np.empty(active_size, dtype=np.int64)
    fb = np.empty(active_size, dtype=np.int64)
    r = 0
    for q in range(active_size):
        nf = 0
        bb = -1
        for b in range(k):
            if A[q, b] > 0.0 and A[q, b] < U[q, b]:
                nf += 1
                bb = b
        if nf > 1:
            return False
        if nf == 1:
            fq[r] = q
            fb[r] = bb
            r += 1
    if r == 0 or float(r) ** 3 > budget:
        return False
    Kff = np.empty((r, r))
    for a in range(r):
        row = _row(pidx[fq[a]], src, stats)
        for c in range(r):
            Kff[a, c] = row[pidx[fq[c]]]
    a0 = np.empty(r)
    sg = np.empty(r)
    tgt = np.empty(r)
    g = np.empty(r)
    for a in range(r):
        q, b = fq[a], fb[a]
        a0[a] = A[q, b]
        sg[a] = S[q, b]
        tgt[a] = -S[q, b] * P[q, b]
        g[a] = f[q]
    dnu = np.zeros(r)
    fixed = np.zeros(r, dtype=np.bool_)
    sub = np.empty(r, dtype=np.int64)
    M = np.empty((r, r))
    z = np.empty(r)
    w = np.empty(r)
    for _ in range(8):
        n = 0
        for a in range(r):
            if not fixed[a]:
                sub[n] = a
                n += 1
        if n == 0:
            break
        for x in range(n):
            for y in range(n):
                M[x, y] = Kff[sub[x], sub[y]]
            z[x] = tgt[sub[x]] - g[sub[x]]
            w[x] = 1.0
        if not _cholesky(M, n):
            break
        _chol_solve(M, n, z)
        if has_eq:
            _chol_solve(M, n, w)
            sz = 0.0
            sw = 0.0
            for x in range(n):
                sz += z[x]
                sw += w[x]
            bnew = sz / sw
            for x in range(n):
                z[x] -= bnew * w[x]
        # ratio test: alpha_a = a0_a + s_a dnu_a stays in [0, u_a]
        tau = 1.0
        block = -1
        for x in range(n):
            a = sub[x]
            cur = a0[a] + sg[a] * dnu[a]
            da = sg[a] * z[x]
            ua = U[fq[a], fb[a]]
            if da > 0.0 and cur + tau * da > ua:
                tau = (ua - cur) / da
                block = a
            elif da < 0.0 and cur + tau * da < 0.0:
                tau = -cur / da
                block = a
        if tau < 0.0:
            tau = 0.0
        for x in range(n):
            d = tau * z[x]
            dnu[sub[x]] += d
            for a in range(r):
                g[a] += d * Kff[a, sub[x]]
        if block < 0:
            break
        fixed[block] = True
    # the change of the dual objective, sum_a (f_a + s_a p_a) dnu_a + 1/2 dnu^T K_FF dnu
    change = 0.0
    for a in range(r):
        change += dnu[a] * (f[fq[a]] - tgt[a] + 0.5 * (g[a] - f[fq[a]]))
    if not change < 0.0:
        return False
    for a in range(r):
        q, b = fq[a], fb[a]
        ua = U[q, b]
        new = a0[a] + sg[a] * dnu[a]
        if fixed[a]:
            new = ua if new > 0.5 * ua else 0.0
        if new < 0.0:
            new = 0.0
        elif new > ua:
            new = ua
        A[q, b] = new
        d = sg[a] * (new - a0[a])
        if d != 0.0:
            row = _row(pidx[q], src, stats)
            for t in range(active_size):
                f[t] += d * row[pidx[t]]
            _update_fbar(a0[a] >= ua, new >= ua, sg[a] * ua, row, pidx, fbar)
        _point_bounds(q, A, S, P, U, UP, LOW)
    stats[_POLISH] += 1
    return True


@njit(cache=True)
def _setup(pt, s, p, u, alpha, QD_pt, src, stats):
    """The solver's state at a feasible ``alpha``: the layout of :func:`_layout`, ``QD``,
    ``f``, ``fbar``, ``UP`` and ``LOW`` over the point positions."""
    m = QD_pt.shape[0]
    k, n_live, pidx, vid, A, S, P, U = _layout(pt, s, p, u, alpha, m)
    QD = np.empty(m)
    for q in range(m):
        QD[q] = QD_pt[pidx[q]]
    f = np.empty(m)
    fbar = np.empty(m)
    _init_f(pidx, A, S, U, f, fbar, src, stats)
    UP = np.empty(m)
    LOW = np.empty(m)
    for q in range(m):
        _point_bounds(q, A, S, P, U, UP, LOW)
    return k, n_live, pidx, vid, A, S, P, U, QD, f, fbar, UP, LOW


@njit(cache=True)
def wss_variables(pt, s, p, u, alpha, QD_pt, src, stats):
    """The working set :func:`smo_solve` picks at ``alpha`` (all variables active), as the
    caller's variable indices: ``(i, j, m(alpha) - M(alpha))`` (``j = -1``: none)."""
    k, n_live, pidx, vid, A, S, P, U, QD, f, fbar, UP, LOW = _setup(pt, s, p, u, alpha, QD_pt,
                                                                   src, stats)
    iq, ib, jq, jb, viol = _select(True, n_live, False, -np.inf, -1, pidx, f, UP, LOW, QD, A,
                                   S, P, U, src, stats)
    i = vid[iq, ib] if iq >= 0 else -1
    j = vid[jq, jb] if jq >= 0 else -1
    return i, j, viol


@njit(cache=True)
def smo_solve(pt_in, s_in, p_in, u_in, QD_pt, alpha_in, has_eq, tol, max_iter, shrinking, src,
              stats, newton=True):
    """Run the SMO in place on ``alpha_in`` (feasible on entry); returns
    ``(n_iter, reached_max_iter, violation, G)`` with the full gradient ``G = Q alpha + p``
    (in the caller's order).

    The variables are regrouped by point (:func:`_layout`; the state is kept per point,
    see above) and, as in LIBSVM, the points are kept in an order where the active ones
    come first (shrinking swaps a shrunk point behind the active ones), so that every scan
    of the working-set selection and every update of ``f`` runs over a contiguous range
    without an index array; points whose variables all have ``u_t = 0`` (pinned at 0) are
    placed after all others.
    """
    n = alpha_in.shape[0]
    m = QD_pt.shape[0]
    k, n_live, pidx, vid, A, S, P, U, QD, f, fbar, UP, LOW = _setup(
        pt_in, s_in, p_in, u_in, alpha_in, QD_pt, src, stats)
    n_var = 0
    for t in range(n):
        if u_in[t] > 0.0:
            n_var += 1
    active_size = n_live
    it = 0
    # the first shrinking comes after a quarter of LIBSVM's period (then every min(n, 1000)):
    # the first iterations otherwise scan every variable (SVMm m = 1,000: same iterations,
    # 20% less time; the final unshrink-and-recheck keeps the stop exact)
    counter = min(n, 1000) // 4 + 1
    unshrink = False
    hit_max = False
    since_full = 0
    period = max(100 * n_var, 10_000)
    have_up = False               # (Gmax, imax) of scan_up known from the last step
    stable = 0                    # steps since the free set last changed
    wait = NEWTON_WAIT
    Gmax, imax = -np.inf, -1
    while True:
        if it >= max_iter:
            hit_max = True
            break
        if shrinking:
            counter -= 1
            if counter == 0:
                counter = min(n, 1000)
                since_full += min(n, 1000)
                if since_full >= period and active_size < n_live:
                    # safeguard (not in LIBSVM): a long run on the shrunk set may be stuck
                    # on a problem whose shrunk variables violate; bring them all back.
                    reconstruct_gradient(active_size, n_live, pidx, f, fbar, A, S, U, src,
                                         stats)
                    active_size = n_live
                    since_full = 0
                active_size, unshrink = _do_shrinking(has_eq, active_size, n_live, unshrink,
                                                      tol, pidx, f, fbar, QD, UP, LOW, vid, A,
                                                      S, P, U, src, stats)
                have_up = False
        iq, ib, jq, jb, viol = _select(has_eq, active_size, have_up, Gmax, imax, pidx, f, UP,
                                       LOW, QD, A, S, P, U, src, stats)
        if viol <= tol or jq < 0:
            if active_size < n_live:
                reconstruct_gradient(active_size, n_live, pidx, f, fbar, A, S, U, src, stats)
                active_size = n_live
                iq, ib, jq, jb, viol = _select(has_eq, active_size, False, Gmax, imax, pidx,
                                               f, UP, LOW, QD, A, S, P, U, src, stats)
                if viol <= tol or jq < 0:
                    break
                stats[_RESUME] += 1          # a shrunk variable violates: resume on all
                counter = 1
            else:
                break
        if newton and stable >= wait:
            # the free set has not changed for a while: a Newton step on it (beyond LIBSVM)
            stable = 0
            # (its cost, at most that of the last NEWTON_COST * wait steps)
            if _newton(active_size, has_eq, pidx, f, fbar, UP, LOW, A, S, P, U, src, stats,
                       NEWTON_COST * float(wait) * active_size):
                have_up = False
                wait = NEWTON_WAIT
                continue
            wait *= 2                    # (not applicable now: try again later, less often)
        it += 1
        fi = A[iq, ib] > 0.0 and A[iq, ib] < U[iq, ib]
        fj = A[jq, jb] > 0.0 and A[jq, jb] < U[jq, jb]
        if has_eq:
            Gmax, imax = _step_pair(iq, ib, jq, jb, active_size, pidx, f, fbar, QD, UP, LOW, A,
                                    S, P, U, src, stats)
            have_up = True
        else:
            _step_single(iq, ib, active_size, pidx, f, fbar, QD, UP, LOW, A, S, P, U, src,
                         stats)
        if (fi == (A[iq, ib] > 0.0 and A[iq, ib] < U[iq, ib])
                and fj == (A[jq, jb] > 0.0 and A[jq, jb] < U[jq, jb])):
            stable += 1
        else:
            stable = 0
    # f at every point: the shrunk ones, and those whose copies are all pinned (u = 0),
    # which the steps do not maintain
    reconstruct_gradient(active_size, n_live, pidx, f, fbar, A, S, U, src, stats)
    _reconstruct(n_live, m, pidx, f, fbar, A, S, U, src, stats)
    viol = _violation(has_eq, n_live, f, UP, LOW, A, S, P, U, QD)
    G_out = np.empty(n)
    for q in range(m):
        for b in range(k):
            t = vid[q, b]
            if t >= 0:
                alpha_in[t] = A[q, b]
                G_out[t] = P[q, b] + S[q, b] * f[q]
    return it, hit_max, viol, G_out


@njit(cache=True)
def intercept_from_gradient(s, u, alpha, G):
    """``b = -rho`` of LIBSVM's ``calculate_rho``: free variables pin ``b = -s_t G_t``
    (their mean); otherwise the midpoint of the interval the bounded ones allow."""
    ub = np.inf
    lb = -np.inf
    nf = 0
    sf = 0.0
    for t in range(alpha.shape[0]):
        if not u[t] > 0.0:
            continue
        yG = s[t] * G[t]
        if alpha[t] >= u[t]:
            if s[t] < 0.0:
                if yG < ub:
                    ub = yG
            else:
                if yG > lb:
                    lb = yG
        elif alpha[t] <= 0.0:
            if s[t] > 0.0:
                if yG < ub:
                    ub = yG
            else:
                if yG > lb:
                    lb = yG
        else:
            nf += 1
            sf += yG
    if nf > 0:
        rho = sf / nf
    elif np.isfinite(ub) and np.isfinite(lb):
        rho = 0.5 * (ub + lb)
    elif np.isfinite(ub):
        rho = ub
    elif np.isfinite(lb):
        rho = lb
    else:
        rho = 0.0
    return -rho


# ---------------------------------------------------------------------------------------
# Python driver
# ---------------------------------------------------------------------------------------
def check_options(tol, max_iter, cache_size, n, options, allowed=("shrinking", "polish")):
    """Validate the common arguments; return ``(tol, max_iter, cache_size, shrinking,
    polish)`` (``polish`` None: on exactly when the default tolerance is used)."""
    unknown = set(options) - set(allowed)
    if unknown:
        raise ValueError(f"unknown option(s) {sorted(unknown)}; the SMO accepts tol, max_iter, "
                         f"warm_start, cache_size and {list(allowed)}")
    if tol is None:
        tol = DEFAULT_TOL
    if (not isinstance(tol, numbers.Real) or isinstance(tol, bool) or not np.isfinite(tol)
            or tol <= 0):
        raise ValueError(f"tol must be a finite number > 0; got {tol!r}")
    if max_iter is None:
        max_iter = max(100_000_000, 100 * n)
    if isinstance(max_iter, bool) or not isinstance(max_iter, numbers.Integral) or max_iter < 1:
        raise ValueError(f"max_iter must be an integer >= 1; got {max_iter!r}")
    if (not isinstance(cache_size, numbers.Real) or isinstance(cache_size, bool)
            or not np.isfinite(cache_size) or cache_size <= 0):
        raise ValueError(f"cache_size must be a finite number of megabytes > 0; got {cache_size!r}")
    shrinking = options.get("shrinking", True)
    if not isinstance(shrinking, (bool, np.bool_)):
        raise ValueError(f"shrinking must be True or False; got {shrinking!r}")
    polish = options.get("polish", None)
    if polish is not None and not isinstance(polish, (bool, np.bool_)):
        raise ValueError(f"polish must be None, True or False; got {polish!r}")
    return (float(tol), int(max_iter), float(cache_size), bool(shrinking),
            None if polish is None else bool(polish))


def repair_equality(alpha, s, u):
    """Move a box-feasible ``alpha`` onto ``s^T alpha = 0`` (greedily, inside the box)."""
    alpha = alpha.copy()
    r = float(s @ alpha)
    if r == 0.0:
        return alpha
    # decrease r: lower alpha_t with s_t = +1 or raise alpha_t with s_t = -1 (and vice versa)
    sign = 1.0 if r > 0 else -1.0
    for t in np.argsort(-alpha):
        if abs(r) <= 0.0:
            break
        if s[t] == sign:
            room = alpha[t]
            d = min(room, abs(r))
            alpha[t] -= d
        else:
            room = u[t] - alpha[t]
            d = min(room, abs(r))
            alpha[t] += d
        r -= sign * d
    if abs(r) > 1e-12 * (1.0 + float(np.sum(u))):
        raise ValueError("warm_start cannot be made to satisfy the equality constraint")
    return alpha


def generic_gap(s, p, u, alpha, G, b, pt, m):
    """``(P, P - D_max)`` of the general form from the gradient ``G = Q alpha + p``.

    Variable ``t`` is the multiplier of the primal constraint ``s_t (f(x_pt) + b) >= -p_t``
    with weight ``u_t`` on its slack; ``f = K nu``, ``nu_k = sum_{pt_t = k} s_t alpha_t``
    and ``(K nu)_{pt_t} = s_t (G_t - p_t)``. ``D_max = -(1/2 alpha^T (G + p))``.
    """
    nu = np.zeros(m)
    np.add.at(nu, pt, s * alpha)
    f = np.zeros(m)
    f[pt] = s * (G - p)
    P = 0.5 * float(nu @ f) + float(np.sum(u * np.maximum(0.0, -p - s * (f[pt] + b))))
    D = -0.5 * float(alpha @ (G + p))
    return P, P - D


def newton_polish(source, pt, s, u, alpha, G, b, has_eq, budget):
    """Active-set Newton refinement on the free set, the equality kept; ``alpha`` in place.

    The SMO's convergence is linear and can crawl on ill-conditioned kernels (a polynomial
    kernel on unscaled data: 10^6 iterations without reaching a violation of 0.1). ``F``:
    the free variables plus the bound ones whose multiplier ``G_t + b s_t`` (``b`` the
    current intercept) points inward; on ``F`` the QP ``min 1/2 d^T Q_FF d + G_F^T d``,
    ``s_F^T d = 0`` (with an intercept), in the box, is solved by
    :func:`fast._polish.active_set_qp` within ``budget`` flops. Kept only if it lowers the
    dual objective; the SMO then resumes from it and alone decides the stop. Returns True
    if kept.
    """
    mult = G + b * s if has_eq else G
    free = (alpha > 0.0) & (alpha < u)
    free |= (alpha <= 0.0) & (mult < 0.0) & (u > 0.0)
    free |= (alpha >= u) & (mult > 0.0) & (u > 0.0)
    F = np.flatnonzero(free)
    nF = F.size
    if nF == 0 or 4.0 * float(nF) ** 3 > budget:
        return False
    sF = s[F]
    Q = sF[:, None] * source.block(pt[F]) * sF[None, :]
    Q = 0.5 * (Q + Q.T)
    x0 = alpha[F].copy()
    x, change = active_set_qp(Q, G[F], x0, np.zeros(nF), u[F], seq=sF if has_eq else None,
                              budget=budget)
    if change < -1e-15 * (1.0 + abs(float(G[F] @ x0))):
        alpha[F] = x
        return True
    return False


def run(source, pt, s, p, u, alpha0, has_eq, tol, max_iter, shrinking, refine=False,
        gap_tol=1e-9, tol_min=1e-12, polish=None):
    """Run the SMO; returns ``(alpha, G, b, n_iter, hit_max, violation, stats, tol)``.

    With ``refine`` (the default tolerance was asked for), the tolerance is divided by 100
    and the SMO resumed from its point until the duality gap is at most
    ``gap_tol (1 + |P|)`` (or ``tol_min`` is reached, or a refinement stage uses up its
    budget of ``max(iterations so far, 10 n, 10**4)``): a KKT violation bounds the gap
    only up to the size of the boxes. The status is ``max_iter`` only if the first stage
    (the tolerance asked) did not finish.

    ``polish`` (default: on with ``refine``): the SMO runs in chunks of
    ``max(20 n, 20000)`` iterations; a chunk that ends without reaching the tolerance is
    followed by an active-set Newton refinement (:func:`newton_polish`) before the SMO
    resumes. A well-conditioned problem finishes in its first chunk (no polish, LIBSVM's
    run); an ill-conditioned one (the SMO crawling) gets the Newton steps. ``stats``
    counts the kept polishes (``info["n_polish"]``).
    """
    if polish is None:
        polish = refine
    alpha = np.ascontiguousarray(alpha0, dtype=np.float64).copy()
    pt = np.ascontiguousarray(pt, dtype=np.int64)
    s = np.ascontiguousarray(s, dtype=np.float64)
    p = np.ascontiguousarray(p, dtype=np.float64)
    u = np.ascontiguousarray(u, dtype=np.float64)
    if has_eq:
        alpha = repair_equality(alpha, s, u)
    stats = np.zeros(7, dtype=np.int64)
    n = len(alpha)
    chunk = max(20 * n, 20_000) if polish else max_iter
    total = 0
    first = True                  # still working on the tolerance asked
    stage_total = 0
    stage_budget = max_iter
    while True:
        budget = min(stage_budget - stage_total, chunk)
        it, hit, viol, G = smo_solve(pt, s, p, u, source.diag, alpha, bool(has_eq), tol,
                                     budget, bool(shrinking), source.src, stats)
        total += int(it)
        stage_total += int(it)
        b = float(intercept_from_gradient(s, u, alpha, G)) if has_eq else 0.0
        if hit and stage_total < stage_budget:
            # a chunk ended without reaching tol: Newton on the free set, then resume
            if newton_polish(source, pt, s, u, alpha, G, b, has_eq, 10.0 * n * it + 1e6):
                stats[_POLISH] += 1
            continue
        if hit:
            hit_max = first           # a refinement that runs out keeps the tolerance asked
            break
        hit_max = False
        if not refine or tol <= tol_min:
            break
        P, gap = generic_gap(s, p, u, alpha, G, b, pt, source.diag.shape[0])
        if abs(gap) <= gap_tol * (1.0 + abs(P)):
            break
        tol = max(tol / 100.0, tol_min)
        first = False
        # refinement stages get a bounded budget (ill-conditioned kernels converge slowly)
        stage_budget = min(max_iter - total, max(total, 10 * n, 10_000))
        stage_total = 0
        if stage_budget <= 0:
            break
    return alpha, G, b, total, bool(hit_max), float(viol), stats, tol


def info_dict(source, stats, viol, tol, shrinking):
    info = {"kernel_path": source.path, "violation": viol, "tol": tol, "shrinking": shrinking,
            "gradient_reconstructions": int(stats[_RECON]), "shrunk": int(stats[_SHRINK]),
            "resumed_after_unshrink": int(stats[_RESUME]), "n_polish": int(stats[_POLISH])}
    if source.path == "cache":
        info.update(cache_slots=int(source.n_slots), row_requests=int(stats[_REQ]),
                    cache_misses=int(stats[_MISS]),
                    cache_hits=int(stats[_REQ] - stats[_MISS]))
    return info


def warn_max_iter(name, viol, tol, max_iter):
    from sklearn.exceptions import ConvergenceWarning

    warnings.warn(f"{name}: the SMO stopped after max_iter={max_iter} iterations with maximal "
                  f"KKT violation {viol:.3e} above the tolerance tol={tol:.3e} asked",
                  ConvergenceWarning, stacklevel=4)


def warm_vector(warm_start, name, n, hi):
    """A dual vector from ``warm_start`` (a Solution, a dict or an array), checked in its box."""
    if warm_start is None:
        return None
    from refmodels.solution import Solution

    if isinstance(warm_start, Solution):
        v = warm_start.variables.get(name)
    elif isinstance(warm_start, dict):
        v = warm_start.get(name)
    else:
        v = warm_start
    if v is None:
        raise ValueError(f"warm_start must carry the dual variable {name!r}")
    v = np.asarray(v, dtype=np.float64)
    if v.shape != (n,) or not np.all(np.isfinite(v)):
        raise ValueError(f"warm_start[{name!r}] must be a finite vector of shape ({n},)")
    if np.any(v < 0) or np.any(v > hi):
        raise ValueError(f"warm_start[{name!r}] must lie in its box [0, {hi:g}]")
    return v


# ---------------------------------------------------------------------------------------
# SVM with intercept (SPEC §1)
# ---------------------------------------------------------------------------------------
def solve_svm_with_intercept(prob, tol=None, max_iter=None, warm_start=None, cache_size=200,
                             **options):
    """SMO for ``rm.SVM(..., fit_intercept=True)``: SPEC §1's dual
    ``min 1/2 a^T Q a - e^T a``, ``0 <= a <= C``, ``y^T a = 0`` (LIBSVM's ``SVC``)."""
    from refmodels.solution import Solution

    t0 = time.perf_counter()
    m = prob.m
    refine = tol is None
    tol, max_iter, cache_size, shrinking, polish = check_options(tol, max_iter, cache_size, m,
                                                                 options)
    y = np.asarray(prob.y, dtype=np.float64)
    a0 = warm_vector(warm_start, "alpha", m, prob.C)
    if a0 is None:
        a0 = np.zeros(m)
    source = make_source(prob, cache_size)
    alpha, G, b, it, hit_max, viol, stats, tol = run(
        source, np.arange(m), y, -np.ones(m), np.full(m, prob.C), a0, True, tol, max_iter,
        shrinking, refine=refine, polish=polish)
    coef = y * alpha
    Kc = source.K_times(coef)
    if Kc is None:
        Kc = y * (G + 1.0)            # G = Y K Y alpha - e
    gamma = y * (Kc + b)
    obj = 0.5 * float(coef @ Kc) + prob.C * float(np.sum(np.maximum(0.0, 1.0 - gamma)))
    variables = {"alpha": alpha, "b": b}
    if prob.kernel.is_linear:
        variables["w"] = np.asarray(prob.X.T @ coef).ravel()
    status = "max_iter" if hit_max else "optimal"
    if hit_max:
        warn_max_iter("SVM", viol, tol, max_iter)
    return Solution(objective=obj, coef=coef, intercept=b, variables=variables, status=status,
                    solver="fast:smo", form="fast", time=time.perf_counter() - t0, n_iter=it,
                    info=info_dict(source, stats, viol, tol, shrinking))


def make_source(prob, cache_size):
    """Kernel rows for the SMO on ``prob``.

    The full Gram is used when it is already at hand (a precomputed kernel, or
    ``prob.gram`` built earlier, e.g. by a reference solve) and fits in ``cache_size`` MB.
    Otherwise rows are computed on demand into the LRU cache of ``cache_size`` MB: when
    the whole Gram fits, this is the Gram filled lazily (an SMO at a loose tolerance
    touches only a fraction of its rows), otherwise rows are evicted as in LIBSVM.
    """
    kind = K.kernel_params(prob.kernel)[0]
    built = prob.gram_if_built
    if kind == K.PRECOMPUTED or (built is not None and K.fits_in_memory(prob.m, cache_size)):
        return RowSource(gram=prob.gram)
    return RowSource(prob.kernel, prob.X, cache_size)
