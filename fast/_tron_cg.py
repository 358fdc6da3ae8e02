"""TRON's inner solver (numba): the preconditioned Steihaug CG for the Newton system
``H s = -g`` in the trust region, and the Hessian it multiplies by, ``H = I + X_S^T D_S X_S``,
either through the active rows (:func:`_hv`) or formed, ``H = I + scale G`` on small dense
``d`` (:func:`_curv_sync` keeps ``G`` up to date). The outer loop, the losses and the stop
test are in :mod:`fast._tron`, which explains the method.
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

#: what one CG solve of :func:`_trcg` is given besides its state: the trust radius
#: ``delta`` (in the preconditioner's norm), its tolerance on ``||r||``, its step cap, whether
#: the Hessian is formed (``dense``: products by ``Hm``, else by the active rows) and the
#: work units of one step (:mod:`fast._chunk`)
CG = namedtuple("CG", "delta tol max_iter dense step_cost")


@njit(cache=True)
def _hv(rows, dd, act, n_act, v, out):
    """``out = v + X_S^T (D_S (X_S v))`` over the active rows only (``rows`` a
    :data:`fast._rows.Rows`)."""
    mode, Xd, indptr, indices, data = rows
    for t in range(v.shape[0]):
        out[t] = v[t]
    for a in range(n_act):
        i = act[a]
        acc = 0.0
        if mode == 0:
            for t in range(Xd.shape[1]):
                acc += Xd[i, t] * v[t]
            acc *= dd[i]
            for t in range(Xd.shape[1]):
                out[t] += acc * Xd[i, t]
        else:
            for k in range(indptr[i], indptr[i + 1]):
                acc += data[k] * v[indices[k]]
            acc *= dd[i]
            for k in range(indptr[i], indptr[i + 1]):
                out[indices[k]] += acc * data[k]


@njit(cache=True)
def _precond(rows, dd, act, n_act, M):
    """``M = (1 - a) + a diag(H)``, ``diag(H) = 1 + sum_S dd_i x_ij^2``."""
    mode, Xd, indptr, indices, data = rows
    d = M.shape[0]
    for t in range(d):
        M[t] = 1.0
    for a in range(n_act):
        i = act[a]
        if mode == 0:
            for t in range(Xd.shape[1]):
                M[t] += dd[i] * Xd[i, t] * Xd[i, t]
        else:
            for k in range(indptr[i], indptr[i + 1]):
                M[indices[k]] += dd[i] * data[k] * data[k]
    for t in range(d):
        M[t] = (1.0 - 0.01) + 0.01 * M[t]


@njit(cache=True)
def _curv_sync(Xd, dd, scale, act, n_act, G, pat, have, changed):
    """Bring ``G = sum_i pat_i x_i x_i^T`` to the curvature ``dd = scale * pat`` of the
    current point: the rows whose ``pat`` changed are added / removed (``d^2`` each), or
    ``G`` is rebuilt from the active rows when that is cheaper or ``have`` is false.
    Returns the number of rows touched."""
    d = G.shape[0]
    m = dd.shape[0]
    n_changed = 0
    inv = 1.0 / scale                # pat = dd * inv, the same product everywhere
    if have:
        for i in range(m):
            if dd[i] * inv != pat[i]:
                changed[n_changed] = i
                n_changed += 1
    if have and n_changed < n_act:
        for a in range(n_changed):
            i = changed[a]
            p_new = dd[i] * inv
            di = p_new - pat[i]
            pat[i] = p_new
            for s_ in range(d):
                v = di * Xd[i, s_]
                for t in range(d):
                    G[s_, t] += v * Xd[i, t]
        return n_changed
    acc = np.zeros(d * d)            # flat accumulator: the inner loop runs contiguously
    for a in range(n_act):
        i = act[a]
        pi = dd[i] * inv
        for s_ in range(d):
            v = pi * Xd[i, s_]
            base = s_ * d
            for t in range(d):
                acc[base + t] += v * Xd[i, t]
    for s_ in range(d):
        for t in range(d):
            G[s_, t] = acc[s_ * d + t]
    for i in range(m):
        pat[i] = dd[i] * inv
    return n_act


@njit(cache=True)
def _hess_from(G, scale, Hm):
    """``Hm = I + scale * G``."""
    d = G.shape[0]
    for s_ in range(d):
        for t in range(d):
            Hm[s_, t] = scale * G[s_, t]
        Hm[s_, s_] += 1.0


@njit(cache=True)
def _hv_dense(Hm, v, out):
    """``out = Hm v`` for the formed Hessian (``O(d^2)``)."""
    d = Hm.shape[0]
    for s_ in range(d):
        acc = 0.0
        for t in range(d):
            acc += Hm[s_, t] * v[t]
        out[s_] = acc


@njit(cache=True)
def _precond_dense(Hm, M):
    """:func:`_precond` from the formed Hessian's diagonal."""
    for t in range(M.shape[0]):
        M[t] = (1.0 - 0.01) + 0.01 * Hm[t, t]


@njit(cache=True)
def _dot(a, b):
    acc = 0.0
    for t in range(a.shape[0]):
        acc += a[t] * b[t]
    return acc


@njit(cache=True)
def _mdot(a, M, b):
    """``a^T M b`` for a diagonal ``M``."""
    acc = 0.0
    for t in range(a.shape[0]):
        acc += a[t] * M[t] * b[t]
    return acc


@njit(cache=True)
def _trcg_start(g, M, s, r, z, dvec):
    """The start of the preconditioned Steihaug CG of :func:`_trcg` (``s = 0``, ``r = -g``);
    returns ``z^T r``."""
    for t in range(g.shape[0]):
        s[t] = 0.0
        r[t] = -g[t]
        z[t] = r[t] / M[t]
        dvec[t] = z[t]
    return _dot(z, r)


@njit(cache=True)
def _trcg(rows, st, dd, act, n_act, cg, it, zTr, work, budget):
    """Preconditioned Steihaug CG for ``H s = -g`` in ``||s||_M <= delta``, from its state
    after ``it`` steps (:func:`_trcg_start` for ``it = 0``: ``s``, ``r``, ``z``, ``dvec`` and
    ``zTr = z^T r``), until it ends or ``work`` (increased by ``cg.step_cost`` per step)
    reaches ``budget``. The vectors are those of TRON's state ``st`` (a
    :data:`fast._tron.TronState`: ``g``, ``M``, ``s``, ``r``, ``z = st.zz``, ``dvec``, ``Hd``,
    ``Hm``); ``dd``, ``act``, ``n_act`` the current point's curvature and active rows; ``cg``
    a :data:`CG`.

    ``cg.dense``: the Hessian-vector products use the formed ``Hm`` (``O(d^2)`` each)
    instead of the rows (``O(nnz(X_S))``). Returns ``(done, cg iterations, zTr, work)``;
    ``r`` ends as ``-g - H s``."""
    g, M, s, r, z, dvec, Hd, Hm = st.g, st.M, st.s, st.r, st.zz, st.dvec, st.Hd, st.Hm
    delta, cg_tol, max_cg, dense, step_cost = cg
    n = g.shape[0]
    while it < max_cg:
        rnorm = np.sqrt(_dot(r, r))
        if rnorm <= cg_tol:
            break
        if work >= budget:
            return False, it, zTr, work
        it += 1
        work += step_cost
        if dense:
            _hv_dense(Hm, dvec, Hd)
        else:
            _hv(rows, dd, act, n_act, dvec, Hd)
        dHd = _dot(dvec, Hd)
        if dHd <= 0.0:
            break
        alpha = zTr / dHd
        # would s + alpha d leave the region (M-norm)?
        sMs = 0.0
        sMd = 0.0
        dMd = 0.0
        for t in range(n):
            snew = s[t] + alpha * dvec[t]
            sMs += snew * M[t] * snew
        if sMs > delta * delta:
            # step back to the boundary: ||s + tau d||_M = delta, tau >= 0
            sMs = _mdot(s, M, s)
            sMd = _mdot(s, M, dvec)
            dMd = _mdot(dvec, M, dvec)
            dsq = delta * delta
            rad = np.sqrt(max(sMd * sMd + dMd * (dsq - sMs), 0.0))
            if sMd >= 0.0:
                tau = (dsq - sMs) / (sMd + rad) if (sMd + rad) > 0.0 else 0.0
            else:
                tau = (rad - sMd) / dMd
            for t in range(n):
                s[t] += tau * dvec[t]
                r[t] -= tau * Hd[t]
            return True, it, zTr, work
        for t in range(n):
            s[t] += alpha * dvec[t]
            r[t] -= alpha * Hd[t]
        for t in range(n):
            z[t] = r[t] / M[t]
        zTr_new = _dot(z, r)
        beta = zTr_new / zTr
        for t in range(n):
            dvec[t] = z[t] + beta * dvec[t]
        zTr = zTr_new
    return True, it, zTr, work
