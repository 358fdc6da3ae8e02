"""The SMO's working-set selection, its steps and its shrinking (numba), on the state kept per
point by the core (:mod:`fast._smo`, whose module docstring and comments describe the
algorithm and the layout of the state), and the intercept from the same KKT sets at the end
(:func:`intercept_from_gradient`).

The per-step helpers (:func:`_select`, :func:`_step_pair`, :func:`_step_single`) read and
write the state through a :data:`StepVars`, the ten arrays a step touches, built once per
call of the core's chunk loop; the helpers called once per shrinking round take the whole
:data:`fast._smo.SMOState`. (Compile options: see :mod:`fast._smo`; these helpers have no
CPython entry point and cannot be called from Python.)
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from ._kernels import source_row as _row
from ._smo_newton import _point_bounds, _update_fbar

TAU = 1e-12
#: statistics kept in the ``stats`` array of the solver (the first three are the kernel-row
#: source's, :data:`fast._kernels.ROW_REQ` ...): gradient reconstructions, shrunk variables,
#: resumptions after an unshrink, Newton steps (:data:`fast._smo_newton._POLISH`)
_RECON, _SHRINK, _RESUME, _POLISH = 3, 4, 5, 6

#: the arrays of the state a step reads and writes, by position ``q`` (fields of
#: :data:`fast._smo.SMOState` of the same names): ``point`` (``pidx``), ``f``, ``fbar``,
#: ``kdiag`` (``QD``), ``up`` (``UP``), ``low`` (``LOW``), and the ``(m, k)`` arrays ``alpha``
#: (``A``), ``sign`` (``S``), ``lin`` (``P``), ``upper`` (``U``), ``diag`` (``D``: the copies'
#: own diagonal ``dg``, zero but for ODM)
StepVars = namedtuple("StepVars", "point f fbar kdiag up low alpha sign lin upper diag")


@njit(cache=True, inline="always")
def step_vars(st):
    """The :data:`StepVars` of an :data:`fast._smo.SMOState` (its arrays, not copies)."""
    return StepVars(st.point, st.f, st.fbar, st.kdiag, st.up, st.low, st.alpha, st.sign,
                    st.lin, st.upper, st.diag)


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _select_single(active_size, f, A, S, P, U, D, QD):
    """No equality constraint: the variable of largest decrease; returns
    ``(position, copy, max violation)``. A copy with a diagonal ``dg = D[q, b]`` has the
    gradient ``p + s f + dg alpha`` and the curvature ``K_qq + dg``."""
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
            qb = qd
            d = D[q, b]
            if d != 0.0:
                g += d * a
                qb = QD[q] + d
                if qb <= TAU:
                    qb = TAU
            v = 0.0
            if g < 0.0 and a < U[q, b]:
                v = -g
            elif g > 0.0 and a > 0.0:
                v = g
            if v <= 0.0:
                continue
            if v > viol:
                viol = v
            a_new = a - g / qb
            if a_new < 0.0:
                a_new = 0.0
            elif a_new > U[q, b]:
                a_new = U[q, b]
            d = a_new - a
            gain = -(g * d + 0.5 * qb * d * d)
            if gain > best:
                best = gain
                qbest = q
                bbest = b
    return qbest, bbest, viol


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _step_pair(v, iq, ib, jq, jb, active_size, Ki, Kj):
    """Two-variable update of LIBSVM (clipped to the box, ``s^T alpha`` kept) on copy ``ib``
    of position ``iq`` and copy ``jb`` of position ``jq`` (``Ki``, ``Kj``: the kernel rows of
    their points) of the state ``v`` (a :data:`StepVars`); then ``f`` over the active
    points, in the same pass as the next scan for ``i`` of :func:`_select`, whose
    ``(G_max, i)`` is returned.

    (The caller fetches the rows: the kernel-row code is then compiled into the caller's
    module only, not again into this function's, on a cold start.)"""
    pidx, f, fbar, QD, UP, LOW, A, S, P, U, D = v
    Ci, Cj = U[iq, ib], U[jq, jb]
    si, sj = S[iq, ib], S[jq, jb]
    Gi = P[iq, ib] + si * f[iq]
    Gj = P[jq, jb] + sj * f[jq]
    ai_old, aj_old = A[iq, ib], A[jq, jb]
    ai, aj = ai_old, aj_old
    qc = QD[iq] + QD[jq] - 2.0 * Ki[pidx[jq]]
    dsum = D[iq, ib] + D[jq, jb]
    if dsum != 0.0:
        # the copies' diagonals: G_t gains dg_t alpha_t, the curvature along the pair's
        # direction dg_i + dg_j (two copies of one point: nu does not move, K's part is 0)
        Gi += D[iq, ib] * ai
        Gj += D[jq, jb] * aj
        if iq == jq or qc < 0.0:
            qc = 0.0
        qc += dsum
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
    _point_bounds(iq, A, S, P, U, D, UP, LOW)
    _point_bounds(jq, A, S, P, U, D, UP, LOW)
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


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _step_single(v, iq, ib, active_size, Ki):
    """Single-variable update (no equality) of copy ``ib`` of position ``iq`` of the state
    ``v`` (a :data:`StepVars`), the Newton step on its coordinate clipped to the box; ``Ki``
    the kernel row of its point."""
    pidx, f, fbar, QD, UP, LOW, A, S, P, U, D = v
    q = QD[iq]
    if q <= TAU:
        q = TAU
    a_old = A[iq, ib]
    g = P[iq, ib] + S[iq, ib] * f[iq]
    d = D[iq, ib]
    if d != 0.0:                   # the copy's diagonal (:func:`_select_single`)
        g += d * a_old
        q = QD[iq] + d
        if q <= TAU:
            q = TAU
    a = a_old - g / q
    if a < 0.0:
        a = 0.0
    elif a > U[iq, ib]:
        a = U[iq, ib]
    A[iq, ib] = a
    _point_bounds(iq, A, S, P, U, D, UP, LOW)
    ci = S[iq, ib] * (a - a_old)
    for t in range(active_size):
        f[t] += ci * Ki[pidx[t]]
    _update_fbar(a_old >= U[iq, ib], a >= U[iq, ib], S[iq, ib] * U[iq, ib], Ki, pidx, fbar)


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _shrunk_copies(q, f, A, S, P, U, D, Gmax1, Gmax2):
    """LIBSVM's ``be_shrunk`` for every copy (``u > 0``) of position ``q``: the number of
    those copies if all would be shrunk, else 0 (an active point has at least one)."""
    c = 0
    for b in range(A.shape[1]):
        uu = U[q, b]
        if not uu > 0.0:
            continue
        g = P[q, b] + S[q, b] * f[q]
        a = A[q, b]
        if D[q, b] != 0.0:
            g += D[q, b] * a
        if a >= uu:
            sh = (-g > Gmax1) if S[q, b] > 0.0 else (-g > Gmax2)
        elif a <= 0.0:
            sh = (g > Gmax2) if S[q, b] > 0.0 else (g > Gmax1)
        else:
            return 0
        if not sh:
            return 0
        c += 1
    return c


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _violations(active_size, f, UP, LOW):
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


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _do_shrinking(st, has_eq, active_size, unshrink, tol, stats):
    """LIBSVM's ``do_shrinking`` per point; returns ``(active_size, unshrink, again)``. A
    shrunk point is exchanged with the last active one that stays (LIBSVM's
    ``swap_index``). ``again``: the violation is within ``10 tol`` for the first time and
    nothing was done; the caller reconstructs the gradient of the shrunk points (LIBSVM's
    unshrink) and calls again with every live point active and ``unshrink`` True (the
    kernel rows are fetched by the caller only: on a cold start the row code is not
    compiled into this function)."""
    pidx, vid, A, S, P, U = st.point, st.var, st.alpha, st.sign, st.lin, st.upper
    QD, f, fbar, UP, LOW, D = st.kdiag, st.f, st.fbar, st.up, st.low, st.diag
    if has_eq:
        Gmax1, Gmax2 = _violations(active_size, f, UP, LOW)
        close = Gmax1 + Gmax2 <= 10.0 * tol
    else:
        M = _select_single(active_size, f, A, S, P, U, D, QD)[2]
        Gmax1 = Gmax2 = M
        close = M <= 10.0 * tol
    if (not unshrink) and close:
        return active_size, unshrink, True
    q = np.int64(0)        # not a literal: one compiled specialisation of the callees
    while q < active_size:
        c = _shrunk_copies(q, f, A, S, P, U, D, Gmax1, Gmax2)   # (Gmax1 = Gmax2 = M w/o eq)
        if c > 0:
            active_size -= 1
            stats[_SHRINK] += c
            while active_size > q:
                c = _shrunk_copies(active_size, f, A, S, P, U, D, Gmax1, Gmax2)
                if c == 0:
                    a, z = q, active_size           # exchange positions q and active_size
                    pidx[a], pidx[z] = pidx[z], pidx[a]
                    f[a], f[z] = f[z], f[a]
                    fbar[a], fbar[z] = fbar[z], fbar[a]
                    QD[a], QD[z] = QD[z], QD[a]
                    UP[a], UP[z] = UP[z], UP[a]
                    LOW[a], LOW[z] = LOW[z], LOW[a]
                    for b in range(A.shape[1]):
                        vid[a, b], vid[z, b] = vid[z, b], vid[a, b]
                        A[a, b], A[z, b] = A[z, b], A[a, b]
                        S[a, b], S[z, b] = S[z, b], S[a, b]
                        P[a, b], P[z, b] = P[z, b], P[a, b]
                        U[a, b], U[z, b] = U[z, b], U[a, b]
                        D[a, b], D[z, b] = D[z, b], D[a, b]
                    break
                stats[_SHRINK] += c
                active_size -= 1
        q += 1
    return active_size, unshrink, False


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _select(v, has_eq, active_size, have_up, Gmax, imax, src, stats, has_dg):
    """One working-set selection over the active point positions ``0 .. active_size - 1`` of
    the state ``v`` (a :data:`StepVars`): ``(iq, ib, jq, jb, violation)`` (``jq = -1``:
    none); kernel rows from ``src`` (:func:`fast._kernels.source_row`).

    With the equality, WSS3 (LIBSVM): ``i`` the copy of ``argmax_q UP[q] - f[q]``
    (``max_{t in I_up} -s_t G_t``; ``(G_max, i)`` given by the last :func:`_step_pair` when
    ``have_up``), then ``j = argmin_{I_low, s_t G_t > -G_max} -(G_max + s_t G_t)^2 / a_it``
    with ``a_it = K_ii + K_tt - 2 K_it`` (``TAU`` when not positive); ``QD[q]`` is ``K`` at
    the point of position ``q``. The violation is ``m(alpha) - M(alpha)``. The copy of a
    point is the one that realises ``UP`` (for ``i``) or ``LOW`` (for ``j``), the last one
    on ties. Without it, :func:`_select_single`.

    ``has_dg`` (some copy has a diagonal ``dg``): ``a_it`` gains ``dg_i + dg_t`` (its
    kernel part is 0 when ``t`` is another copy of ``i``'s point: ``nu`` does not move
    along that pair), which differs between the copies of a point, so ``j`` is chosen over
    the copies in ``I_low`` (WSS3 over the variables) instead of by ``LOW``.
    """
    pidx, f, _, QD, UP, LOW, A, S, P, U, D = v
    if not has_eq:
        iq, ib, viol = _select_single(active_size, f, A, S, P, U, D, QD)
        return iq, ib, iq, ib, viol
    if not have_up:
        Gmax = -np.inf
        imax = -1
        for q in range(active_size):
            v = UP[q] - f[q]
            if v >= Gmax:
                Gmax = v
                imax = q
        if Gmax == -np.inf:
            imax = -1
    if imax < 0:
        return -1, -1, -1, -1, -np.inf
    # the copy of i: the last realising UP (in I_up)
    ib = -1
    up = -np.inf
    for b in range(A.shape[1]):
        a = A[imax, b]
        if S[imax, b] > 0.0:
            in_up = a < U[imax, b]
        else:
            in_up = a > 0.0
        pb = P[imax, b]
        if D[imax, b] != 0.0:
            pb = pb + D[imax, b] * a
        if in_up and -(S[imax, b] * pb) >= up:
            up = -(S[imax, b] * pb)
            ib = b
    Ki = _row(pidx[imax], src, stats)
    Kii = QD[imax]
    Gmax2 = -np.inf
    jmin = -1
    jb = -1
    obj_min = np.inf
    if has_dg:
        di = D[imax, ib]
        for q in range(active_size):
            sg = LOW[q] + f[q]
            if sg >= Gmax2:
                Gmax2 = sg
            if not Gmax + sg > 0.0:
                continue            # (no copy of the point can pair with i)
            kq = Kii + QD[q] - 2.0 * Ki[pidx[q]]
            if q == imax or kq < 0.0:
                kq = 0.0
            for b in range(A.shape[1]):
                a = A[q, b]
                if S[q, b] > 0.0:
                    in_low = a > 0.0
                else:
                    in_low = a < U[q, b]
                if not in_low:
                    continue
                sgb = S[q, b] * (P[q, b] + D[q, b] * a) + f[q]
                gd = Gmax + sgb
                if gd > 0.0:
                    qc = kq + di + D[q, b]
                    if qc <= 0.0:
                        qc = TAU
                    od = -(gd * gd) / qc
                    if od <= obj_min:
                        jmin = q
                        jb = b
                        obj_min = od
        return imax, ib, jmin, jb, Gmax + Gmax2
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
    # the copy of j: the last realising LOW (in I_low)
    if jmin >= 0:
        low = -np.inf
        for b in range(A.shape[1]):
            a = A[jmin, b]
            if S[jmin, b] > 0.0:
                in_low = a > 0.0
            else:
                in_low = a < U[jmin, b]
            if in_low and S[jmin, b] * P[jmin, b] >= low:
                low = S[jmin, b] * P[jmin, b]
                jb = b
    return imax, ib, jmin, jb, Gmax + Gmax2


@njit(cache=True, no_cfunc_wrapper=True)
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
