"""The active set of :mod:`fast._polish` for a Hessian of low rank, ``Q = Z Z^T``.

The linear-kernel SVM dual (``Z = Y X``, ``r = d`` features, ``n = m`` points) at a large C
or on hard data is nearly an LP: most variables sit at a bound and at most about ``d`` are
free, and the walk to the vertex takes hundreds of steps. A step touches the free set only;
what is global is the gradient of the bound variables, needed only at a working-set
optimum to choose the one to release. So:

* ``v = Z^T (x - x0)`` is computed each step from the rows that may have moved (the free
  set at the start and the variables released since; ``x - x0`` is zero elsewhere), exact
  as the dense product would be, in O(|T| r);
* the whole gradient ``g0 + Z v`` (O(n r)) is computed only when a release cannot be
  decided without it: a bound variable ``j`` whose multiplier at the last whole gradient
  was wrong by less than the tolerance minus ``||z_j|| ||v - v_ref||`` cannot be wrong now
  (Cauchy-Schwarz); the others are computed exactly, and the choice is the one the whole
  gradient would make;
* the free set's ``Z_fr^T Z_fr`` is updated as rows leave and join (:class:`_FreeGram`);
* a step along the null space of ``Q_fr`` (the objective linear along it) searches along
  its clipped path past the first bound (:func:`_projected_search`), so that a
  coordinate-descent point with tens of thousands of free variables reaches the vertex in
  hundreds of steps, not one bound per step.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg as sla

from ._polish import (EIG_CUTOFF, _coordinate_step, _first_bound, _leaves_box, _Progress,
                      _real_null, _step_is_null)

#: a release computes the exact multipliers of the bound variables it cannot rule out, at
#: most this fraction of the ``n``; more, and it computes the whole gradient instead
SCREEN_FRACTION = 0.125
#: a null-space step on more than this many times ``r`` free variables searches along its
#: clipped path (:func:`_projected_search`), at most ``2^SEARCH_DOUBLINGS`` times past the
#: first bound
SEARCH_MIN_FREE = 2
SEARCH_DOUBLINGS = 30
#: the free set's ``Z_fr^T Z_fr`` is updated as rows leave and join (:class:`_FreeGram`),
#: recomputed after this many changes, and always when ``|fr| <= GRAM_EXACT_FREE r``
GRAM_MAX_UPDATES = 16
GRAM_EXACT_FREE = 4
#: from this many features on, a free set with more rows than ``r`` is solved through the
#: Cholesky factor of ``Z_fr^T Z_fr`` (its eigendecomposition costs ~30x the flops: 0.2 s a
#: step at ``r = 1,000``) when its pivots span less than ``1 / CHOLESKY_PIVOT_RATIO``
CHOLESKY_MIN_R = 128
CHOLESKY_PIVOT_RATIO = 1e-4


def active_set_qp_lowrank(Z, g0, x0, lo, hi, budget=np.inf, max_steps=None):
    """The box QP of :mod:`fast._polish` with ``Q = Z Z^T`` (``Z`` n x r, ``r << n``, no
    equality), from ``x0`` (feasible); returns ``(x, change, steps)``.

    The same primal active-set method as :func:`fast._polish.active_set_qp`: on the working
    free set ``fr`` the nonzero eigenpairs of ``Q_fr = Z_fr Z_fr^T`` come from those of the
    r x r matrix ``Z_fr^T Z_fr = V diag(ev) V^T`` (vectors ``U = Z_fr V ev^(-1/2)``), so
    every variable can take part (no cap on ``|fr|``).
    When ``|fr| > r`` the gradient has a component in the null space of ``Q_fr``, along
    which the objective is linear: the step follows it to the box (one variable joins the
    working set per step), which walks a coordinate-descent point with many free variables
    to a vertex-like point; at a working-set optimum the bound variable with the most
    negative multiplier is released (screened as the module doc says). At most
    ``max_steps`` steps (default ``10 n + 10``) and ``budget`` flops (counted as done:
    ``6 |fr| r + r^3 + 2 |T| r`` a step, ``2 n r`` a whole gradient; the free set's
    ``Z_fr^T Z_fr`` is updated as it changes, :class:`_FreeGram`).
    """
    n, r = Z.shape
    x = x0.copy()
    if n == 0:
        return x, 0.0, 0
    if max_steps is None:
        max_steps = 10 * n + 10
    scale = max(1.0, float(np.max(np.abs(g0))))
    thresh = 1e-12 * scale                  # a multiplier wrong by more is released
    W = (x <= lo) | (x >= hi)
    fr = np.flatnonzero(~W)                 # sorted
    T = fr.copy()                           # the rows that may have moved (sorted)
    ZT = Z[T]
    v = np.zeros(r)                         # Z^T (x - x0)
    g_ref, v_ref = g0.copy(), v.copy()      # the gradient g0 + Z v_ref
    zn = None                               # ||z_j||, for the release's screen
    spent = 0.0
    steps = 0
    at_opt = False                          # at the minimiser on the working free set
    rel = -1                                # the variable released by the last step
    prog = _Progress(x)
    gram = _FreeGram()
    while steps < max_steps:
        if at_opt or fr.size == 0:
            cost = 2.0 * n                  # a release's screen, at least
        else:
            cost = 6.0 * fr.size * r + float(r) ** 3
        cost += 2.0 * T.size * r
        if spent + cost > budget:
            break
        spent += cost
        steps += 1
        DT = x[T] - x0[T]
        v = ZT.T @ DT
        df = None
        unbounded_ok = True
        if fr.size and not at_opt:
            Zf = Z[fr]
            gf = g0[fr] + Zf @ v
            # Q_fr = Zf Zf^T = U diag(ev) U^T with U = Zf V ev^(-1/2), (ev, V) the
            # eigenpairs of the r x r matrix Zf^T Zf (:class:`_FreeGram`): no |fr| x |fr|
            few = (_cholesky(Zf @ Zf.T) if r >= CHOLESKY_MIN_R and fr.size <= r
                   else None)
            G = gram.of(Zf) if few is None else None
            chol = _cholesky(G) if G is not None and r >= CHOLESKY_MIN_R and fr.size > r \
                else None
            if few is not None:
                # at most r free rows, Q_fr = Zf Zf^T itself well conditioned: no null
                # space, the Newton step from its Cholesky factor (|fr|^3 / 3, not r^3)
                null = np.zeros(fr.size)
                rank = fr.size
            elif chol is not None:
                # G well conditioned: the same projections by two triangular solves each
                # (G^-1 Z_fr^T g and G^-2 Z_fr^T g), no eigendecomposition
                a1 = sla.cho_solve(chol, Zf.T @ gf, check_finite=False)
                null = gf - Zf @ a1
                rank = r
            else:
                ev, V = np.linalg.eigh(G)
                lmax = max(float(ev[-1]), 0.0) if ev.size else 0.0
                keep = ev > EIG_CUTOFF * lmax if lmax > 0 else np.zeros(ev.size, bool)
                Vk, evk = V[:, keep], ev[keep]
                c = Vk.T @ (Zf.T @ gf)                 # = ev^(1/2) U^T g_fr
                null = gf - Zf @ (Vk @ (c / evk))      # g_fr - U U^T g_fr
                rank = int(np.count_nonzero(keep))
            if _real_null(null, scale, x, rank):
                df = -null
                unbounded_ok = False
            elif few is not None:
                df = -sla.cho_solve(few, gf, check_finite=False)
            elif chol is not None:
                df = -(Zf @ sla.cho_solve(chol, a1, check_finite=False))
            else:
                df = -(Zf @ (Vk @ (c / (evk * evk))))   # -U diag(1/ev) U^T g_fr
        if at_opt or df is None or _step_is_null(df, x):
            at_opt = False
            if not prog.at_release(x, float(g0[T] @ DT) + 0.5 * float(v @ v)):
                break
            if zn is None:
                zn = np.sqrt(np.einsum("ij,ij->i", Z, Z))
            rel, g_new, work = _release_screened(Z, g0, x, lo, hi, W, v, g_ref, v_ref, zn,
                                                 thresh)
            spent += work
            if g_new is not None:
                g_ref, v_ref = g_new, v.copy()
            if rel < 0:
                break
            fr = np.insert(fr, np.searchsorted(fr, rel), rel)
            gram.add(Z[rel:rel + 1])
            if not np.any(T == rel):
                T = np.insert(T, np.searchsorted(T, rel), rel)
                ZT = Z[T]
            continue
        prog.moved = True
        xf, lof, hif = x[fr], lo[fr], hi[fr]
        if rel >= 0:
            k = int(np.searchsorted(fr, rel))
            if _leaves_box(xf, df, lof, hif, k):
                # round-off turned the step: the coordinate step on the released variable
                zk = Z[rel]
                gk = float(g0[rel] + zk @ v)
                xr = _coordinate_step(x, rel, gk, float(zk @ zk), lo, hi)[rel]
                x[rel] = xr
                if xr <= lo[rel] or xr >= hi[rel]:
                    W[rel] = True
                    fr = np.delete(fr, k)
                    gram.remove(Z[rel:rel + 1])
                rel = -1
                continue
        rel = -1
        # the ratio test on the free set (fast._polish._ratio_step; d is zero elsewhere)
        k, t = _first_bound(xf, df, lof, hif)
        if unbounded_ok and t >= 1.0:
            xn = xf + df
            at_opt = True
        elif not np.isfinite(t):
            break                           # a null direction meeting no bound
        else:
            if not unbounded_ok and fr.size > SEARCH_MIN_FREE * r:
                t, more = _projected_search(Zf, gf, xf, df, lof, hif, t)
                spent += more
            xn = np.minimum(np.maximum(xf + t * df, lof), hif)
            xn[k] = hif[k] if df[k] > 0 else lof[k]
        x[fr] = xn
        if not at_opt:
            hit = (xn <= lof) | (xn >= hif)
            W[fr[hit]] = True
            fr = fr[~hit]
            gram.remove(Zf[hit])
    x = np.minimum(np.maximum(x, lo), hi)
    D = x - x0
    zD = Z.T @ D
    f = float(g0 @ D + 0.5 * zD @ zD)
    if f > prog.best_f:
        x = prog.best_x                    # round-off lost ground since the best release
        D = x - x0
        zD = Z.T @ D
        f = float(g0 @ D + 0.5 * zD @ zD)
    return x, f, steps


def _cholesky(G):
    """The Cholesky factor of ``G`` when its diagonal pivots span less than
    :data:`CHOLESKY_PIVOT_RATIO` (the condition number is at least their ratio squared:
    far below the eigendecomposition's cutoff, where both give the same projections),
    else None (the caller takes the eigendecomposition)."""
    try:
        c = sla.cho_factor(G, lower=True, check_finite=False)
    except np.linalg.LinAlgError:
        return None
    d = np.abs(np.diag(c[0]))
    if not np.all(np.isfinite(d)) or d.min() <= CHOLESKY_PIVOT_RATIO * d.max():
        return None
    return c


class _FreeGram:
    """``Z_fr^T Z_fr`` (r x r) of the working free set, kept through its changes: rows
    leave by a rank-k downdate, join by an update (O(k r^2) where recomputing costs
    O(|fr| r^2)). Recomputed exactly when it may have drifted: after
    :data:`GRAM_MAX_UPDATES` changes, when the rows removed since weigh more than what is
    left (the downdate's round-off is relative to what was subtracted), and whenever the
    free set has at most :data:`GRAM_EXACT_FREE` times ``r`` rows (cheap then, and where
    small eigenvalues decide the rank) for fewer than :data:`CHOLESKY_MIN_R` features (with
    more, a recomputation costs as much as 10-20 steps)."""

    def __init__(self):
        self.G = None

    def of(self, Zf):
        r = Zf.shape[1]
        small = Zf.shape[0] <= GRAM_EXACT_FREE * r and r < CHOLESKY_MIN_R
        if (self.G is None or self.updates >= GRAM_MAX_UPDATES or small
                or self.removed > np.trace(self.G)):
            self.G = Zf.T @ Zf
            self.updates, self.removed = 0, 0.0
        return self.G

    def add(self, rows):
        if self.G is not None:
            self.G = self.G + rows.T @ rows
            self.updates += 1

    def remove(self, rows):
        if self.G is not None and rows.shape[0]:
            self.G = self.G - rows.T @ rows
            self.updates += 1
            self.removed += float(np.einsum("ij,ij->", rows, rows))


def _projected_search(Zf, gf, xf, df, lof, hif, t1):
    """Along a null-space direction ``df`` of ``Q_fr`` the objective is linear up to the
    first bound (``t1``); beyond, the clipped path ``clip(x + t df)`` bends and the
    objective ``phi(t)`` has curvature again. Try ``t1 2^j`` while ``phi`` decreases (at
    most :data:`SEARCH_DOUBLINGS`), O(|fr| r) each: one step then sends many variables to
    their bounds where the ratio test sends one (a coordinate-descent point at a large C
    has tens of thousands free, the vertex about ``r``). Returns ``(t, flops)``."""
    def phi(t):
        dx = np.minimum(np.maximum(xf + t * df, lof), hif) - xf
        u = Zf.T @ dx
        return float(gf @ dx + 0.5 * u @ u)
    best_t, best = t1, phi(t1)
    t = 2.0 * t1
    j = 1
    while j <= SEARCH_DOUBLINGS:
        f = phi(t)
        if not f < best:
            break
        best_t, best = t, f
        t *= 2.0
        j += 1
    return best_t, 4.0 * j * gf.size * Zf.shape[1]


def _release_screened(Z, g0, x, lo, hi, W, v, g_ref, v_ref, zn, thresh):
    """At a working-set optimum: release (``W[k] = False``) the bound variable ``k`` whose
    multiplier has the most wrong sign, as :func:`fast._polish._release` on the exact
    gradient ``g0 + Z v`` would. Returns ``(k or -1, g, flops)``, ``g`` the whole gradient
    when it was computed (else None).

    ``g_ref = g0 + Z v_ref`` is the gradient at the last refresh; a multiplier moves by at
    most ``||z_j|| ||v - v_ref||`` since, so only the variables whose bound exceeds
    ``thresh`` can be released, and their multipliers are computed exactly. When they are
    more than :data:`SCREEN_FRACTION` of ``n``, the whole gradient is computed."""
    n, r = Z.shape
    viol_ref = np.where(W & (x <= lo), -g_ref, np.where(W & (x >= hi), g_ref, -np.inf))
    drift = float(np.linalg.norm(v - v_ref))
    cand = np.flatnonzero(viol_ref + zn * drift > thresh)
    if cand.size <= SCREEN_FRACTION * n:
        if cand.size == 0:
            return -1, None, float(n)
        g = g0[cand] + Z[cand] @ v
        c_lo = x[cand] <= lo[cand]
        viol = np.where(c_lo, -g, g)        # (cand are bound: at lo, or else at hi)
        j = int(np.argmax(viol))
        if viol[j] <= thresh:
            return -1, None, float(n + 2 * cand.size * r)
        k = int(cand[j])
        W[k] = False
        return k, None, float(n + 2 * cand.size * r)
    g = g0 + Z @ v
    viol = np.where(W & (x <= lo), -g, np.where(W & (x >= hi), g, 0.0))
    k = int(np.argmax(viol))
    if viol[k] <= thresh:
        k = -1
    else:
        W[k] = False
    return k, g, 2.0 * n * r
