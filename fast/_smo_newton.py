"""The SMO's Newton step on a settled free set (numba), and the per-point helpers it shares
with the SMO core (:mod:`fast._smo`).

Once the free set has not changed for ``NEWTON_WAIT`` steps, :func:`_newton` solves the
equality-constrained QP on it by a Cholesky of ``K_FF`` (written here in numba, with the
equality kept) and cuts the step at the box. The state layout is the core's (see the
comment block in :mod:`fast._smo`).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ._kernels import source_row as _row

# (compile options: see :mod:`fast._smo`; the helpers that only compiled code calls have no
# CPython entry point)

#: the solver's statistics slot counting Newton steps (:data:`fast._smo_steps._POLISH`)
_POLISH = 6


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _point_bounds(q, A, S, P, U, D, UP, LOW):
    """``UP[q]`` (max ``-s_t (p_t + dg_t alpha_t)`` over the copies in ``I_up``) and
    ``LOW[q]`` (max ``s_t (p_t + dg_t alpha_t)`` over the copies in ``I_low``), ``-inf`` when
    there is none: the part of ``-+s_t G_t`` that changes only with the point's own
    multipliers (``D`` the copies' diagonal ``dg``; a copy with ``dg = 0`` reads ``p_t``
    alone, exactly as without a diagonal)."""
    up = -np.inf
    low = -np.inf
    for b in range(A.shape[1]):
        a = A[q, b]
        pb = P[q, b]
        d = D[q, b]
        if d != 0.0:
            pb = pb + d * a
        v = S[q, b] * pb
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


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _update_fbar(was_upper, now_upper, su, Krow, pidx, fbar):
    """``fbar += +-s_t u_t K_{:, pt_t}`` when copy ``t`` reached or left its upper bound."""
    if was_upper != now_upper:
        c = su if now_upper else -su
        for q in range(fbar.shape[0]):
            fbar[q] += c * Krow[pidx[q]]


@njit(cache=True, fastmath={"reassoc", "contract"}, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _dot_rows(M, i, j, n):
    """``M[i, :n] @ M[j, :n]`` (reassociated, so that LLVM vectorises it)."""
    acc = 0.0
    for c in range(n):
        acc += M[i, c] * M[j, c]
    return acc


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
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


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
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


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _newton(st, active_size, has_eq, src, stats, budget):
    """Newton step on the free set, the equality kept (beyond LIBSVM): returns ``(applied,
    r)``, ``r`` the number of free variables it worked on (0 when it did not start).

    The free variables (at most one per point, else nothing is done) are moved to the
    minimiser of the dual on their face, ``(K_FF + D_F) dnu + b e = -s_t (p_t + dg_t
    alpha_t) - f_F`` with ``e^T dnu = 0`` (``dnu`` the change of ``nu`` at the free points,
    ``b`` the intercept; without the equality ``b = 0``; ``D_F`` the free copies' diagonal
    ``dg``, zero without one), by a Cholesky factorisation of ``K_FF + D_F``. When the
    step leaves the box it is cut at the first bound met, that variable is fixed there and
    the face's problem solved again (a primal active-set method, at most 8 rounds); every
    step decreases the dual objective (convexity). Bound variables are not freed: the SMO
    resumes from the new point and alone decides the stop. ``f``, ``fbar``, ``UP`` and
    ``LOW`` are brought up to date over the active points. Nothing is done either when
    ``r^3`` (``r`` free variables; the factorisation costs ``r^3 / 6`` multiply-adds)
    exceeds ``budget``. ``st`` is the core's :data:`fast._smo.SMOState`.
    """
    pidx, f, fbar, UP, LOW = st.point, st.f, st.fbar, st.up, st.low
    A, S, P, U, D = st.alpha, st.sign, st.lin, st.upper, st.diag
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
            return False, 0
        if nf == 1:
            fq[r] = q
            fb[r] = bb
            r += 1
    if r == 0 or float(r) ** 3 > budget:
        return False, 0
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
        d = D[q, b]
        if d != 0.0:
            # a copy's diagonal: in dnu (dalpha = s dnu) the Hessian gains dg on its
            # diagonal and the gradient dg alpha (kept in tgt, g tracking f + H dnu)
            Kff[a, a] += d
            tgt[a] -= S[q, b] * d * a0[a]
    dnu = np.empty(r)
    fixed = np.empty(r, dtype=np.int64)     # 1: fixed at a bound by the ratio test
    for a in range(r):
        dnu[a] = 0.0
        fixed[a] = 0
    sub = np.empty(r, dtype=np.int64)
    M = np.empty((r, r))
    z = np.empty(r)
    w = np.empty(r)
    for _ in range(8):
        n = np.int64(0)     # not a literal: one specialisation of _cholesky
        for a in range(r):
            if fixed[a] == 0:
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
        fixed[block] = 1
    # the change of the dual objective, sum_a (f_a - tgt_a) dnu_a + 1/2 dnu^T (K_FF + D_F) dnu
    change = 0.0
    for a in range(r):
        change += dnu[a] * (f[fq[a]] - tgt[a] + 0.5 * (g[a] - f[fq[a]]))
    if not change < 0.0:
        return False, r
    for a in range(r):
        q, b = fq[a], fb[a]
        ua = U[q, b]
        new = a0[a] + sg[a] * dnu[a]
        if fixed[a] != 0:
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
        _point_bounds(q, A, S, P, U, D, UP, LOW)
    stats[_POLISH] += 1
    return True, r
