"""One step of the kernel ODM Newton (:mod:`fast._kernel_newton`, whose module docstring
describes the method): the sets of a point, its loss terms, the exact line search along a
step, the two representations' residuals, the minimiser of a quadratic piece
(:class:`_PieceSolver`: a Cholesky of the active block, a Woodbury update of the last
factor, or conjugate gradients preconditioned by a low-rank factor of the Gram) and that
low-rank factor (:func:`pivoted_cholesky`, :func:`lowrank_factor`).
"""
from __future__ import annotations

import numpy as np
import scipy.linalg as sla


def _sets(gamma, lo, hi):
    return gamma < lo, gamma > hi


def loss_terms(gamma, lo, hi, mu):
    """``xi = max(0, lo - gamma)``, ``eps = max(0, gamma - hi)``."""
    return np.maximum(0.0, lo - gamma), np.maximum(0.0, gamma - hi)


def line_search(o, q, y, beta, delta, Kbeta_delta, deltaKdelta, c, mu, lo, hi):
    """Exact minimiser ``t > 0`` of ``phi(t) = f(beta + t delta)`` (convex, piecewise
    quadratic) given ``q = K delta``, ``Kbeta_delta = delta^T K beta`` and
    ``deltaKdelta = delta^T K delta``.

    ``phi'(t) = A(t) + B(t) t`` with ``A, B`` constant between breakpoints (margins
    crossing ``lo`` or ``hi``): ``A = delta^T o - 2c sum_L h_i (lo - gamma_i)
    + 2c mu sum_H h_i (gamma_i - hi)``, ``B = delta^T K delta + 2c sum_L h_i^2
    + 2c mu sum_H h_i^2`` with ``h = y q``. Returns ``(t, phi'(0))``.
    """
    gamma = y * o
    h = y * q
    # regions at t = 0+ (ties on a kink are decided by the direction of motion)
    inL = (gamma < lo) | ((gamma == lo) & (h < 0))
    inH = (gamma > hi) | ((gamma == hi) & (h > 0))
    cL, cH = 2.0 * c, 2.0 * c * mu
    A0 = Kbeta_delta - cL * float(h[inL] @ (lo - gamma[inL])) \
        + cH * float(h[inH] @ (gamma[inH] - hi))
    B0 = deltaKdelta + cL * float(h[inL] @ h[inL]) + cH * float(h[inH] @ h[inH])
    dphi0 = A0
    if not (A0 < 0.0):
        return 0.0, dphi0
    nz = h != 0.0
    with np.errstate(divide="ignore", invalid="ignore"):
        tlo = np.where(nz, (lo - gamma) / np.where(nz, h, 1.0), -1.0)
        thi = np.where(nz, (hi - gamma) / np.where(nz, h, 1.0), -1.0)
    pos = h > 0
    # events at lo: h > 0 leaves L (needs gamma < lo); h < 0 enters L (gamma > lo)
    e_lo = (tlo > 0.0)
    sgn_lo = np.where(pos, -1.0, 1.0)[e_lo]         # -1: leaves L, +1: enters L
    hl, gl = h[e_lo], gamma[e_lo]
    dA_lo = sgn_lo * (-cL * hl * (lo - gl))
    dB_lo = sgn_lo * (cL * hl * hl)
    # events at hi: h > 0 enters H (gamma < hi); h < 0 leaves H (gamma > hi)
    e_hi = (thi > 0.0)
    sgn_hi = np.where(pos, 1.0, -1.0)[e_hi]
    hh, gh = h[e_hi], gamma[e_hi]
    dA_hi = sgn_hi * (cH * hh * (gh - hi))
    dB_hi = sgn_hi * (cH * hh * hh)
    te = np.concatenate([tlo[e_lo], thi[e_hi]])
    dA = np.concatenate([dA_lo, dA_hi])
    dB = np.concatenate([dB_lo, dB_hi])
    if te.size:
        order = np.argsort(te, kind="stable")
        te, dA, dB = te[order], dA[order], dB[order]
        # coefficients of the segment ending at te[k] (events 0..k-1 applied)
        A = A0 + np.concatenate([[0.0], np.cumsum(dA)])
        B = B0 + np.concatenate([[0.0], np.cumsum(dB)])
        vals = A[:-1] + B[:-1] * te                   # phi'(te[k]) (continuous)
        hit = np.flatnonzero(vals >= 0.0)
        k = int(hit[0]) if hit.size else te.size
        Ak, Bk = A[k], B[k]
    else:
        Ak, Bk = A0, B0
    if not (Bk > 0.0):                                # unbounded below: cannot happen
        return 0.0, dphi0                             # for a PSD K (f is coercive)
    t = -Ak / Bk
    return float(t), dphi0


def _residual_eq14(beta, o, y, c, mu, lo, hi, K_times):
    """Representation (A): the multipliers of eq. 14 at the margins of ``beta``
    (``zeta = 2c xi``, ``beta_d = 2c mu eps``): slack stationarity and complementarity
    hold exactly; the residual is the stationarity ``||beta - Y(zeta - beta_d)||_K``
    scaled as the certificate's. Returns ``(residual, f, zeta, beta_d)``."""
    gamma = y * o
    xi, eps = loss_terms(gamma, lo, hi, mu)
    zeta, bd = 2.0 * c * xi, 2.0 * c * mu * eps
    coef_d = y * (zeta - bd)
    r = beta - coef_d
    Kr = K_times(r)
    rKr = max(float(r @ Kr), 0.0)
    wn2 = max(float(beta @ o), 0.0)
    wd2 = max(float(coef_d @ (o - Kr)), 0.0)
    residual = np.sqrt(rKr) / (1.0 + np.sqrt(wn2) + np.sqrt(wd2))
    f = 0.5 * wn2 + c * float(xi @ xi + mu * (eps @ eps))
    return residual, f, zeta, bd


def _residual_piece(x, ox, Lm, Hm, y, c, mu, lo, hi):
    """Representation (B), for the minimiser ``x`` of the quadratic piece of the sets
    ``L``, ``H``: multipliers read off ``x`` (``zeta_L = y_L x_L``, ``beta_H = -y_H x_H``,
    clipped at 0), so that ``x = Y (zeta - beta)`` and the stationarity in ``w`` is exact
    where the signs are right. The residual (worst of stationarity in the slacks,
    complementarity and the clipped part, in the certificate's scaling) is at the level
    of the solve's backward error, free of the ``1/a`` amplification that bounds (A) at
    weak regularization. Returns ``(residual, zeta, beta_d)``."""
    gamma = y * ox
    yx = y * x
    zeta = np.where(Lm, np.maximum(yx, 0.0), 0.0)
    bd = np.where(Hm, np.maximum(-yx, 0.0), 0.0)
    xi, eps = loss_terms(gamma, lo, hi, mu)
    g = np.hypot(np.linalg.norm(2 * c * xi - zeta), np.linalg.norm(2 * c * mu * eps - bd))
    sc = (1.0 + np.hypot(np.linalg.norm(zeta), np.linalg.norm(bd))
          + 2 * c * np.hypot(np.linalg.norm(xi), mu * np.linalg.norm(eps)))
    res = g / sc
    wn = np.sqrt(max(float(x @ ox), 0.0))
    f = 0.5 * wn * wn + c * float(xi @ xi + mu * (eps @ eps))
    comp = max(float(np.max(zeta * np.maximum(0.0, gamma - lo), initial=0.0)),
               float(np.max(bd * np.maximum(0.0, hi - gamma), initial=0.0)))
    res = max(res, comp / (1.0 + abs(f)))
    # the part of x that Y (zeta - beta) does not reproduce (wrong signs: the piece is not
    # the optimal one): an upper bound of the stationarity residual's norm
    miss = x - y * (zeta - bd)
    if np.any(miss):
        res = max(res, float(np.linalg.norm(miss)) * np.sqrt(np.max(np.abs(ox)) + 1.0)
                  / (1.0 + wn))
    return res, zeta, bd


#: the previous step's Cholesky factor is reused (a Woodbury update) when the number ``k``
#: of points that changed their set (entered or left ``S``, or switched between ``L`` and
#: ``H``) is at most this fraction of ``|S|``: the update costs ``2k`` triangular solves
#: with ``|S|`` (BLAS-3, ``~4 k |S|^2`` flops) against ``|S|^3 / 3`` for a new factor
REUSE_FRAC_CHANGED = 1.0 / 16
#: relative residual ``||b - M x|| / ||b||`` an updated solve must reach (after one step
#: of refinement), else a fresh Cholesky
UPDATE_TOL = 1e-9


class _PieceSolver:
    """The minimiser of the quadratic piece of the sets ``L``, ``H``: ``x = 0`` off ``S``
    and ``(K_SS + A_S) x_S = y_S t_S`` (module docstring). Written on the ``m``-dimensional
    embedding ``M(S) = P_S (K + A) P_S + (I - P_S)`` (``P_S`` the 0/1 mask of ``S``), so
    that two steps' matrices differ only in the rows and columns of the ``k`` points that
    changed: ``M_1 = M_0 + U W U^T`` with ``U = [E_C, V]`` (``m x 2k``), ``V`` the changed
    columns off ``C``, ``W = [[E_CC, I], [I, 0]]``. A small ``k`` is solved by Woodbury on
    the last Cholesky factor (then one step of iterative refinement with ``M_1``), else
    by a new Cholesky of the block ``K_SS + A_S``."""

    def __init__(self, K_times, K_block, K_cols, y, a, mu, lo, hi, refine=1, reuse=True,
                 lowrank=None):
        self.K_times, self.K_block, self.K_cols, self.y = K_times, K_block, K_cols, y
        self.a, self.mu, self.lo, self.hi = a, mu, lo, hi
        self.refine, self.reuse = refine, reuse and K_cols is not None
        self.prev = None             # (S mask, full diagonal, factor, S) of the last factor
        self.lowrank = lowrank       # V (m x r), K - V V^T small: the CG preconditioner

    def _apply(self, Smask, diag, v):
        Kv = self.K_times(np.where(Smask, v, 0.0))
        return np.where(Smask, Kv + diag * v, v)

    def _prev_solve(self, Z):
        """``M_0^{-1} Z`` (columns) with the last factor."""
        _, _, cf, pidx = self.prev
        out = np.array(Z, dtype=np.float64, copy=True)
        out[pidx] = sla.cho_solve(cf, Z[pidx], check_finite=False)
        return out

    def solve(self, Lm, Hm):
        m = self.y.shape[0]
        Smask = Lm | Hm
        diag = np.where(Lm, self.a, np.where(Hm, self.a / self.mu, 0.0))
        b = np.where(Lm, self.y * self.lo, np.where(Hm, self.y * self.hi, 0.0))
        S = np.flatnonzero(Smask)
        if S.size == 0:
            return np.zeros(m), "empty"
        if self.lowrank is not None:
            x, n_cg = self._pcg(Smask, S, diag, b)
            if x is not None:
                return x, f"pcg({n_cg})"
        changed = -1
        if self.prev is not None:
            pS, pdiag = self.prev[0], self.prev[1]
            C = np.flatnonzero((Smask != pS) | (Smask & (diag != pdiag)))
            changed = int(C.size)
            if self.reuse and 0 < changed <= REUSE_FRAC_CHANGED * S.size:
                x = self._woodbury(Smask, diag, b, C)
                if x is not None:
                    return x, f"update({changed})"
        M = self.K_block(S)
        M[np.diag_indices_from(M)] += diag[S]
        cf = sla.cho_factor(M, lower=True, overwrite_a=True, check_finite=False)
        x = np.zeros(m)
        x[S] = sla.cho_solve(cf, b[S], check_finite=False)
        for _ in range(self.refine):     # iterative refinement (residual through K_times)
            r = b - self._apply(Smask, diag, x)
            x[S] += sla.cho_solve(cf, r[S], check_finite=False)
        self.prev = (Smask, diag, cf, S)
        return x, "cholesky" if changed < 0 else f"cholesky({changed})"

    def _pcg(self, Smask, S, diag, b):
        """CG on ``(K_SS + A_S) x_S = b_S`` preconditioned by ``V_S V_S^T + A_S`` (inverted
        by Woodbury: an ``r x r`` Cholesky); ``(x, steps)``, or ``(None, steps)`` if the
        relative residual stays above :data:`UPDATE_TOL` (then a Cholesky decides)."""
        m = b.size
        VS = self.lowrank[S]
        dS = diag[S]
        W = VS / dS[:, None]
        if W.shape[1] == 0:
            # a rank-0 factor: the preconditioner is the diagonal (LAPACK before SciPy 1.14
            # refuses the empty Cholesky solve)
            def prec(r):
                return r / dS
        else:
            cap = VS.T @ W
            cap[np.diag_indices_from(cap)] += 1.0
            try:
                cf = sla.cho_factor(cap, lower=True, check_finite=False)
            except (ValueError, np.linalg.LinAlgError):
                return None, 0

            def prec(r):
                return r / dS - W @ sla.cho_solve(cf, W.T @ r, check_finite=False)

        full = np.zeros(m)

        def mat(v):
            full[S] = v
            return self.K_times(full)[S] + dS * v

        bS = b[S]
        nb = float(np.linalg.norm(bS))
        if nb == 0.0:
            return np.zeros(m), 0
        xS = prec(bS)
        r = bS - mat(xS)
        z = prec(r)
        p = z.copy()
        rz = float(r @ z)
        best = (float(np.linalg.norm(r)), xS.copy())
        k = 0
        while k < PCG_MAX_ITER and best[0] > PCG_TOL * nb:
            q = mat(p)
            pq = float(p @ q)
            if not (pq > 0.0):
                break
            step = rz / pq
            xS += step * p
            k += 1
            if k % 25 == 0:
                r = bS - mat(xS)              # the true residual now and then (no drift)
            else:
                r -= step * q
            nr = float(np.linalg.norm(r))
            if nr < best[0]:
                best = (nr, xS.copy())
            elif nr > 1e3 * best[0]:
                break
            z = prec(r)
            rz_new = float(r @ z)
            p = z + (rz_new / rz) * p
            rz = rz_new
        xS = best[1]
        x = np.zeros(m)
        x[S] = xS
        if not (float(np.linalg.norm(bS - mat(xS))) <= UPDATE_TOL * nb):
            return None, k
        return x, k

    def _woodbury(self, Smask, diag, b, C):
        pS, pdiag = self.prev[0], self.prev[1]
        k = C.size
        KC = self.K_cols(C)                                  # K[:, C], m x k
        # columns C of M_1 and M_0 (embedded), and their difference E[:, C]
        M1C = np.where(Smask[:, None] & Smask[C][None, :], KC, 0.0)
        M0C = np.where(pS[:, None] & pS[C][None, :], KC, 0.0)
        ar = np.arange(k)
        M1C[C, ar] += np.where(Smask[C], diag[C], 1.0)
        M0C[C, ar] += np.where(pS[C], pdiag[C], 1.0)
        E = M1C - M0C
        ECC = E[C]
        V = E.copy()
        V[C] = 0.0
        U = np.zeros((b.size, 2 * k))
        U[C, ar] = 1.0
        U[:, k:] = V
        Winv = np.zeros((2 * k, 2 * k))
        Winv[:k, k:] = np.eye(k)
        Winv[k:, :k] = np.eye(k)
        Winv[k:, k:] = -ECC
        Z = self._prev_solve(U)                              # M_0^{-1} U
        cap = Winv + U.T @ Z
        try:
            lu = sla.lu_factor(cap, check_finite=False)
        except (ValueError, np.linalg.LinAlgError):
            return None

        def inv(r):
            z0 = self._prev_solve(r)
            return z0 - Z @ sla.lu_solve(lu, U.T @ z0, check_finite=False)

        x = inv(b)
        nb = float(np.linalg.norm(b))
        for _ in range(1 + self.refine):
            r = b - self._apply(Smask, diag, x)
            if not np.all(np.isfinite(r)):
                return None
            x += inv(r)
        x[~Smask] = 0.0
        r = b - self._apply(Smask, diag, x)
        if np.linalg.norm(r) <= UPDATE_TOL * nb:
            return x
        return None


#: the low-rank preconditioner (:func:`pivoted_cholesky`) is built only when its rank stays
#: at most this fraction of ``m`` (beyond it the pivoted factor and the preconditioner's
#: setup stop being small against one Cholesky of the active block)
LOWRANK_MAX_FRAC = 0.25
#: ... and stops when the trace of the remainder ``K - V V^T`` is at most this fraction of the
#: smallest diagonal shift ``min(a, a/mu)``: the preconditioned matrix then has its
#: eigenvalues in ``[1, 1 + LOWRANK_TRACE_FRAC]``, and CG needs a dozen steps or so
LOWRANK_TRACE_FRAC = 16.0
#: relative residual ``||b - M x|| / ||b||`` the preconditioned CG aims at, and its step cap
PCG_TOL = 1e-13
PCG_MAX_ITER = 200


def pivoted_cholesky(K_diag, K_col, tau, max_rank):
    """A low-rank ``V`` (m x r) with ``K - V V^T`` positive semidefinite and ``trace(K -
    V V^T) <= tau`` (the partial Cholesky with diagonal pivoting: each step takes the
    column of the largest remaining diagonal), or None if that needs more than
    ``max_rank`` columns. ``K_col(i)`` is column ``i`` of ``K``. ``O(m r^2)``."""
    d = np.array(K_diag, dtype=np.float64, copy=True)
    m = d.shape[0]
    Vt = np.zeros((max(1, max_rank), m))          # V^T: its first rows stay contiguous
    r = 0
    while True:
        np.maximum(d, 0.0, out=d)
        if float(d.sum()) <= tau:
            return np.ascontiguousarray(Vt[:r].T)
        if r >= max_rank:
            return None
        i = int(np.argmax(d))
        piv = d[i]
        col = np.array(K_col(i), dtype=np.float64)
        if r:
            col -= Vt[:r, i] @ Vt[:r]
        v = Vt[r]
        np.multiply(col, 1.0 / np.sqrt(piv), out=v)
        d -= v * v
        d[i] = 0.0
        r += 1


def lowrank_factor(prob, max_frac=LOWRANK_MAX_FRAC):
    """:func:`pivoted_cholesky` of ``prob``'s Gram (built if needed) at the trace target
    ``LOWRANK_TRACE_FRAC min(a, a/mu)`` of ``prob``'s shift, rank at most ``max_frac m``;
    None when that rank does not suffice. Kept in the workspace, so that
    ``method="auto"``'s probe and the Newton's solve factor once."""
    a = prob.a
    tau = LOWRANK_TRACE_FRAC * min(a, a / prob.mu)
    max_rank = int(max_frac * prob.m)
    key = ("lowrank", tau)
    from . import _kernels as _K
    from ._common import drop, kept, peek

    got = peek(prob, key)
    if got is not None and (got[1] is not None or got[0] >= max_rank):
        return got[1]
    G = _K.build_gram(prob)
    V = pivoted_cholesky(np.diag(G), lambda i: G[i], tau, max_rank)   # G symmetric
    drop(prob, key)
    kept(prob, key, lambda: (max_rank, V))
    return V
