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
  come first: a shrunk variable is swapped behind them, so the scans of the working-set
  selection and the gradient updates run over a contiguous range, without an index
  array (SVMm m = 1,000 with its Gram: 19.6 -> 14.4 ms; ``smo_solve`` takes and returns
  the caller's order);
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
# the solver (numba)
# ---------------------------------------------------------------------------------------
@njit(cache=True)
def _init_gradient(pt, s, p, u, alpha, G, Gbar, src, stats, m):
    n = alpha.shape[0]
    c = np.zeros(m)
    cb = np.zeros(m)
    for t in range(n):
        if alpha[t] != 0.0:
            c[pt[t]] += s[t] * alpha[t]
        if u[t] > 0.0 and alpha[t] >= u[t]:
            cb[pt[t]] += s[t] * u[t]
    Kc = np.zeros(m)
    Kcb = np.zeros(m)
    for k in range(m):
        if c[k] != 0.0 or cb[k] != 0.0:
            row = _row(k, src, stats)
            ck, cbk = c[k], cb[k]
            for q in range(m):
                Kc[q] += ck * row[q]
                Kcb[q] += cbk * row[q]
    for t in range(n):
        G[t] = p[t] + s[t] * Kc[pt[t]]
        Gbar[t] = s[t] * Kcb[pt[t]]


@njit(cache=True)
def select_working_set(active_size, pt, s, u, alpha, G, QD, src, stats):
    """WSS3 (LIBSVM): returns ``(i, j, m(alpha) - M(alpha))`` over positions
    ``0 .. active_size - 1`` (the active variables are kept at the front, see
    :func:`smo_solve`; ``QD[t]`` is ``K_tt`` of the point of position ``t``).

    ``i = argmax_{t in I_up} -s_t G_t``; ``j = argmin_{t in I_low, s_t G_t > -G_max}
    -(G_max + s_t G_t)^2 / a_it``; ``j = -1`` when no pair violates.
    """
    Gmax = -np.inf
    imax = -1
    for t in range(active_size):
        if s[t] > 0.0:
            if alpha[t] < u[t]:
                if -G[t] >= Gmax:
                    Gmax = -G[t]
                    imax = t
        else:
            if alpha[t] > 0.0:
                if G[t] >= Gmax:
                    Gmax = G[t]
                    imax = t
    if imax < 0:
        return -1, -1, -np.inf
    Ki = _row(pt[imax], src, stats)
    Kii = QD[imax]
    Gmax2 = -np.inf
    jmin = -1
    obj_min = np.inf
    for t in range(active_size):
        if s[t] > 0.0:
            if alpha[t] > 0.0:
                gd = Gmax + G[t]
                if G[t] >= Gmax2:
                    Gmax2 = G[t]
                if gd > 0.0:
                    qc = Kii + QD[t] - 2.0 * Ki[pt[t]]
                    if qc <= 0.0:
                        qc = TAU
                    od = -(gd * gd) / qc
                    if od <= obj_min:
                        jmin = t
                        obj_min = od
        else:
            if alpha[t] < u[t]:
                gd = Gmax - G[t]
                if -G[t] >= Gmax2:
                    Gmax2 = -G[t]
                if gd > 0.0:
                    qc = Kii + QD[t] - 2.0 * Ki[pt[t]]
                    if qc <= 0.0:
                        qc = TAU
                    od = -(gd * gd) / qc
                    if od <= obj_min:
                        jmin = t
                        obj_min = od
    return imax, jmin, Gmax + Gmax2


@njit(cache=True)
def select_single(active_size, u, alpha, G, QD):
    """No equality constraint: the variable of largest decrease; returns ``(i, max violation)``."""
    best = -1.0
    ibest = -1
    viol = 0.0
    for t in range(active_size):
        g = G[t]
        v = 0.0
        if g < 0.0 and alpha[t] < u[t]:
            v = -g
        elif g > 0.0 and alpha[t] > 0.0:
            v = g
        if v <= 0.0:
            continue
        if v > viol:
            viol = v
        q = QD[t]
        if q <= TAU:
            q = TAU
        step = -g / q
        a_new = alpha[t] + step
        if a_new < 0.0:
            a_new = 0.0
        elif a_new > u[t]:
            a_new = u[t]
        d = a_new - alpha[t]
        gain = -(g * d + 0.5 * q * d * d)
        if gain > best:
            best = gain
            ibest = t
    return ibest, viol


@njit(cache=True)
def _update_gbar(i, was_upper, alpha, u, Ki, pt, s, Gbar):
    now_upper = alpha[i] >= u[i]
    if was_upper != now_upper:
        c = s[i] * u[i]
        if not now_upper:
            c = -c
        for t in range(Gbar.shape[0]):
            Gbar[t] += s[t] * c * Ki[pt[t]]


@njit(cache=True)
def _step_pair(i, j, active_size, pt, s, u, alpha, G, Gbar, QD, src, stats):
    """Two-variable update of LIBSVM (clipped to the box, ``s^T alpha`` kept)."""
    Ki = _row(pt[i], src, stats)
    Kj = _row(pt[j], src, stats)
    # (row i was used last, so fetching row j never evicts it: the cache has >= 2 slots)
    Ci, Cj = u[i], u[j]
    ai_old, aj_old = alpha[i], alpha[j]
    ai, aj = ai_old, aj_old
    qc = QD[i] + QD[j] - 2.0 * Ki[pt[j]]
    if qc <= 0.0:
        qc = TAU
    if s[i] != s[j]:
        delta = (-G[i] - G[j]) / qc
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
        delta = (G[i] - G[j]) / qc
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
    alpha[i] = ai
    alpha[j] = aj
    ci = s[i] * (ai - ai_old)
    cj = s[j] * (aj - aj_old)
    for t in range(active_size):
        q = pt[t]
        G[t] += s[t] * (ci * Ki[q] + cj * Kj[q])
    _update_gbar(i, ai_old >= Ci, alpha, u, Ki, pt, s, Gbar)
    _update_gbar(j, aj_old >= Cj, alpha, u, Kj, pt, s, Gbar)


@njit(cache=True)
def _step_single(i, active_size, pt, s, u, alpha, G, Gbar, QD, src, stats):
    Ki = _row(pt[i], src, stats)
    q = QD[i]
    if q <= TAU:
        q = TAU
    a_old = alpha[i]
    a = a_old - G[i] / q
    if a < 0.0:
        a = 0.0
    elif a > u[i]:
        a = u[i]
    alpha[i] = a
    ci = s[i] * (a - a_old)
    for t in range(active_size):
        G[t] += s[t] * ci * Ki[pt[t]]
    _update_gbar(i, a_old >= u[i], alpha, u, Ki, pt, s, Gbar)


@njit(cache=True)
def reconstruct_gradient(active_size, n_var, pt, s, p, u, alpha, G, Gbar, src, stats):
    """Gradient of positions ``active_size .. n_var - 1`` (shrunk), counted in ``stats``."""
    if active_size >= n_var:
        return
    stats[_RECON] += 1
    _reconstruct(active_size, n_var, pt, s, p, u, alpha, G, Gbar, src, stats)


@njit(cache=True)
def _reconstruct(active_size, n_var, pt, s, p, u, alpha, G, Gbar, src, stats):
    """``G_t = p_t + Gbar_t + sum_{j free} alpha_j Q_tj`` for positions
    ``active_size .. n_var - 1`` (the free ``j`` are among the first ``active_size``)."""
    if active_size >= n_var:
        return
    for t in range(active_size, n_var):
        G[t] = Gbar[t] + p[t]
    nr_free = 0
    for j in range(active_size):
        if alpha[j] > 0.0 and alpha[j] < u[j]:
            nr_free += 1
    if nr_free <= n_var - active_size:
        for j in range(active_size):
            if alpha[j] > 0.0 and alpha[j] < u[j]:
                Kj = _row(pt[j], src, stats)
                c = s[j] * alpha[j]
                for t in range(active_size, n_var):
                    G[t] += s[t] * c * Kj[pt[t]]
    else:
        for t in range(active_size, n_var):
            Kt = _row(pt[t], src, stats)
            acc = 0.0
            for j in range(active_size):
                if alpha[j] > 0.0 and alpha[j] < u[j]:
                    acc += s[j] * alpha[j] * Kt[pt[j]]
            G[t] += s[t] * acc


@njit(cache=True)
def _be_shrunk_eq(t, s, u, alpha, G, Gmax1, Gmax2):
    if alpha[t] >= u[t]:
        if s[t] > 0.0:
            return -G[t] > Gmax1
        return -G[t] > Gmax2
    if alpha[t] <= 0.0:
        if s[t] > 0.0:
            return G[t] > Gmax2
        return G[t] > Gmax1
    return False


@njit(cache=True)
def _be_shrunk_single(t, u, alpha, G, M):
    if alpha[t] >= u[t]:
        return -G[t] > M
    if alpha[t] <= 0.0:
        return G[t] > M
    return False


@njit(cache=True)
def violations(active_size, s, u, alpha, G):
    """``(max_{I_up} -s_t G_t, max_{I_low} s_t G_t)`` over the active positions."""
    Gmax1 = -np.inf
    Gmax2 = -np.inf
    for t in range(active_size):
        if s[t] > 0.0:
            if alpha[t] < u[t] and -G[t] > Gmax1:
                Gmax1 = -G[t]
            if alpha[t] > 0.0 and G[t] > Gmax2:
                Gmax2 = G[t]
        else:
            if alpha[t] < u[t] and -G[t] > Gmax2:
                Gmax2 = -G[t]
            if alpha[t] > 0.0 and G[t] > Gmax1:
                Gmax1 = G[t]
    return Gmax1, Gmax2


@njit(cache=True)
def _swap(a, b, pt, s, p, u, alpha, G, Gbar, QD, idx):
    """Exchange positions ``a`` and ``b`` (LIBSVM's ``swap_index``)."""
    pt[a], pt[b] = pt[b], pt[a]
    s[a], s[b] = s[b], s[a]
    p[a], p[b] = p[b], p[a]
    u[a], u[b] = u[b], u[a]
    alpha[a], alpha[b] = alpha[b], alpha[a]
    G[a], G[b] = G[b], G[a]
    Gbar[a], Gbar[b] = Gbar[b], Gbar[a]
    QD[a], QD[b] = QD[b], QD[a]
    idx[a], idx[b] = idx[b], idx[a]


@njit(cache=True)
def _do_shrinking(has_eq, active_size, n_var, unshrink, tol, pt, s, p, u, alpha, G, Gbar, QD,
                  idx, src, stats):
    if has_eq:
        Gmax1, Gmax2 = violations(active_size, s, u, alpha, G)
        close = Gmax1 + Gmax2 <= 10.0 * tol
    else:
        _, M = select_single(active_size, u, alpha, G, QD)
        Gmax1 = Gmax2 = M
        close = M <= 10.0 * tol
    if (not unshrink) and close:
        unshrink = True
        reconstruct_gradient(active_size, n_var, pt, s, p, u, alpha, G, Gbar, src, stats)
        active_size = n_var
        if has_eq:
            Gmax1, Gmax2 = violations(active_size, s, u, alpha, G)
        else:
            _, M = select_single(active_size, u, alpha, G, QD)
            Gmax1 = Gmax2 = M
    k = 0
    while k < active_size:
        if has_eq:
            sh = _be_shrunk_eq(k, s, u, alpha, G, Gmax1, Gmax2)
        else:
            sh = _be_shrunk_single(k, u, alpha, G, Gmax1)
        if sh:
            active_size -= 1
            stats[_SHRINK] += 1
            while active_size > k:
                if has_eq:
                    sh2 = _be_shrunk_eq(active_size, s, u, alpha, G, Gmax1, Gmax2)
                else:
                    sh2 = _be_shrunk_single(active_size, u, alpha, G, Gmax1)
                if not sh2:
                    _swap(k, active_size, pt, s, p, u, alpha, G, Gbar, QD, idx)
                    break
                active_size -= 1
                stats[_SHRINK] += 1
        k += 1
    return active_size, unshrink


@njit(cache=True)
def _violation(has_eq, active_size, s, u, alpha, G, QD):
    if has_eq:
        g1, g2 = violations(active_size, s, u, alpha, G)
        v = g1 + g2
        return v if v > 0.0 else 0.0
    return select_single(active_size, u, alpha, G, QD)[1]


@njit(cache=True)
def smo_solve(pt_in, s_in, p_in, u_in, QD_pt, alpha_in, has_eq, tol, max_iter, shrinking, src,
              stats):
    """Run the SMO in place on ``alpha_in`` (feasible on entry); returns
    ``(n_iter, reached_max_iter, violation, G)`` with the full gradient ``G = Q alpha + p``
    (in the caller's order).

    As LIBSVM, the variables are kept in an order where the active ones come first
    (shrinking swaps a shrunk variable behind the active ones), so that every scan of the
    working-set selection and every gradient update runs over a contiguous range without
    an index array; variables with ``u_t = 0`` (pinned at 0) are placed after all others.
    """
    n = alpha_in.shape[0]
    m = QD_pt.shape[0]
    idx = np.empty(n, dtype=np.int64)
    n_var = 0
    for t in range(n):
        if u_in[t] > 0.0:
            idx[n_var] = t
            n_var += 1
    k2 = n_var
    for t in range(n):
        if not u_in[t] > 0.0:
            idx[k2] = t
            k2 += 1
    pt = np.empty(n, dtype=np.int64)
    s = np.empty(n)
    p = np.empty(n)
    u = np.empty(n)
    alpha = np.empty(n)
    QD = np.empty(n)
    for k in range(n):
        t = idx[k]
        pt[k] = pt_in[t]
        s[k] = s_in[t]
        p[k] = p_in[t]
        u[k] = u_in[t]
        alpha[k] = alpha_in[t]
        QD[k] = QD_pt[pt_in[t]]
    G = np.empty(n)
    Gbar = np.zeros(n)
    _init_gradient(pt, s, p, u, alpha, G, Gbar, src, stats, m)
    active_size = n_var
    it = 0
    # the first shrinking comes after a quarter of LIBSVM's period (then every min(n, 1000)):
    # the first iterations otherwise scan every variable (SVMm m = 1,000: same iterations,
    # 20% less time; the final unshrink-and-recheck keeps the stop exact)
    counter = min(n, 1000) // 4 + 1
    unshrink = False
    hit_max = False
    since_full = 0
    period = max(100 * n_var, 10_000)
    while True:
        if it >= max_iter:
            hit_max = True
            break
        if shrinking:
            counter -= 1
            if counter == 0:
                counter = min(n, 1000)
                since_full += min(n, 1000)
                if since_full >= period and active_size < n_var:
                    # safeguard (not in LIBSVM): a long run on the shrunk set may be stuck
                    # on a problem whose shrunk variables violate; bring them all back.
                    reconstruct_gradient(active_size, n_var, pt, s, p, u, alpha, G, Gbar, src,
                                         stats)
                    active_size = n_var
                    since_full = 0
                active_size, unshrink = _do_shrinking(has_eq, active_size, n_var, unshrink,
                                                      tol, pt, s, p, u, alpha, G, Gbar, QD,
                                                      idx, src, stats)
        if has_eq:
            i, j, viol = select_working_set(active_size, pt, s, u, alpha, G, QD, src, stats)
        else:
            i, viol = select_single(active_size, u, alpha, G, QD)
            j = i
        if viol <= tol or j < 0:
            if active_size < n_var:
                reconstruct_gradient(active_size, n_var, pt, s, p, u, alpha, G, Gbar, src,
                                     stats)
                active_size = n_var
                if has_eq:
                    i, j, viol = select_working_set(active_size, pt, s, u, alpha, G, QD, src,
                                                    stats)
                else:
                    i, viol = select_single(active_size, u, alpha, G, QD)
                    j = i
                if viol <= tol or j < 0:
                    break
                stats[_RESUME] += 1          # a shrunk variable violates: resume on all
                counter = 1
            else:
                break
        it += 1
        if has_eq:
            _step_pair(i, j, active_size, pt, s, u, alpha, G, Gbar, QD, src, stats)
        else:
            _step_single(i, active_size, pt, s, u, alpha, G, Gbar, QD, src, stats)
    # the gradient of every variable at the returned point: the shrunk ones, and the
    # pinned ones (u = 0), whose gradient the steps do not maintain
    reconstruct_gradient(active_size, n_var, pt, s, p, u, alpha, G, Gbar, src, stats)
    _reconstruct(n_var, n, pt, s, p, u, alpha, G, Gbar, src, stats)
    viol = _violation(has_eq, n_var, s, u, alpha, G, QD)
    G_out = np.empty(n)
    for k in range(n):
        alpha_in[idx[k]] = alpha[k]
        G_out[idx[k]] = G[k]
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
