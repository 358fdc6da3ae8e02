"""ADMM for DRR on a dense ``Q_D`` (SPEC §8): the second method of :mod:`fast.drr`, for the
test points that the accelerated proximal gradient leaves unsolved after
:data:`APG_FIRST` iterations (at the default ``max_iter``, up to :data:`ADMM_MAX_M` points).

APG's step is ``1 / sigma_max(Q_D)`` and its rate is set by the condition number: a
polynomial kernel on raw features (Gram entries ~1e11, smallest eigenvalues ~1e3) leaves it
short after 50,000 iterations. ADMM on ``min 1/2 w^T Q w - K_x^T w + beta R(z)``,
``w = z`` (scaled form, one ``rho`` for all columns) solves the smooth part exactly:

* ``x = (Q + rho I)^{-1} (K_x + rho (z - u))``, through ``Q = V diag(lam) V^T`` computed
  once, so that ``rho`` can change without a new factorization;
* ``z = prox_{beta R / rho}(x + u)``; ``u <- u + x - z``.

Since ``rho (x + u - z) \\in beta \\partial R(z)``, ``r = Q z - K_x + rho u`` (with the new
``u``) is an element of the subdifferential of the objective at ``z``: the stop is the same
scaled residual as the other methods', ``||r|| <= tol (1 + ||K_x|| + ||Q z||)``, at the
returned point ``z``. ``rho`` starts at ``sqrt(lam_max lam_min)`` (the smallest positive
eigenvalue) and is balanced every :data:`BALANCE_EVERY` iterations (Boyd et al. 2011,
§3.4.1: doubled when the primal residual ``||x - z||`` exceeds 10 times the dual one
``rho ||z - z_old||``, halved in the opposite case, ``u`` rescaled with it). Converged
columns are frozen.
"""
from __future__ import annotations

import numpy as np

#: the eigendecomposition is O(m^3): the fallback runs up to this many points
ADMM_MAX_M = 2000
#: the iterations' cap: about this many multiply-adds (three m x m products per column and
#: iteration), between ADMM_MIN_ITER and ADMM_MAX_ITER iterations
ADMM_WORK = 3e10
ADMM_MIN_ITER = 500
ADMM_MAX_ITER = 50000
BALANCE_EVERY = 10
#: at the default ``max_iter``, APG's iterations before ADMM takes the columns it left
APG_FIRST = 5000


def default_max_iter(m, k):
    """The cap of :func:`admm` on ``k`` columns of ``m`` points."""
    return int(min(ADMM_MAX_ITER, max(ADMM_MIN_ITER, ADMM_WORK / (3.0 * m * m * max(k, 1)))))


def admm(Q, reg, Kx, W, tol, scale, still_open, max_iter):
    """ADMM (module docstring) from ``z = W`` and ``rho u = K_x - Q W`` (the multiplier the
    smooth part's gradient gives). ``reg``: :class:`fast.drr._Reg` (``prox_{step beta R}``
    per column); ``scale(Kx, QZ)``: the residual's per-column scale; ``still_open(res, sc,
    it, Z)``: the columns not yet within ``tol`` (:func:`fast.drr._open`, which raises on a
    residual that is not finite). Returns ``(Z, QZ, iterations, worst scaled residual,
    converged)``."""
    lam, V = np.linalg.eigh(0.5 * (Q + Q.T))
    top = max(float(lam[-1]), 1e-300)
    pos = lam[lam > 1e-12 * top]
    rho = float(np.sqrt(top * (pos[0] if pos.size else top)))
    Z = np.array(W, dtype=np.float64, copy=True)
    QZ = Q @ Z
    U = (Kx - QZ) / rho
    k = Z.shape[1]
    res = np.full(k, np.inf)
    active = np.arange(k)
    it = 0
    while active.size and it < max_iter:
        it += 1
        a = active
        Za, Ua, Ka = Z[:, a], U[:, a], Kx[:, a]
        X = V @ ((V.T @ (Ka + rho * (Za - Ua))) / (lam + rho)[:, None])
        Zn = reg.prox(X + Ua, np.full(a.size, 1.0 / rho))
        Ua = Ua + X - Zn
        QZa = Q @ Zn
        r = np.linalg.norm(QZa - Ka + rho * Ua, axis=0)
        sc = scale(Ka, QZa)
        keep = still_open(r, sc, it, Zn)
        res[a] = r / sc
        Z[:, a], U[:, a], QZ[:, a] = Zn, Ua, QZa
        if it % BALANCE_EVERY == 0:
            primal = float(np.linalg.norm(X - Zn))
            dual = rho * float(np.linalg.norm(Zn - Za))
            if primal > 10.0 * dual:
                rho *= 2.0
                U /= 2.0
            elif dual > 10.0 * primal:
                rho /= 2.0
                U *= 2.0
        active = a[keep]
    return Z, QZ, it, float(np.max(res)), not active.size
