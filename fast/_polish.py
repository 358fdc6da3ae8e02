"""Active-set Newton refinement of a box QP, shared by the DCD and the SMO.

Coordinate methods (the DCD of :mod:`fast._dcd`, the SMO of :mod:`fast._smo`) converge
linearly, and crawl on ill-conditioned duals (a 1-D RBF Gram, a linear kernel with
``d << m`` and a large C, a polynomial kernel on unscaled data). Once they have found
roughly which variables sit at a bound, the rest is a small QP on the free variables:

.. math::

    \\min_x\\ \\tfrac12 (x-x_0)^\\top Q (x-x_0) + g_0^\\top (x-x_0)
    \\quad\\text{s.t.}\\quad lo \\le x \\le hi,\\quad [\\,s^\\top (x - x_0) = 0\\,],

(``Q`` the dual Hessian on those variables, ``g_0`` the gradient at ``x_0``, the equality
only for the SMO's duals with an intercept), solved by :func:`active_set_qp`, a primal
active-set method: a Newton step on the working free set, a ratio test, release of the
bound variable with the most negative multiplier at a working-set optimum.
"""
from __future__ import annotations

import numpy as np

#: eigenvalues below ``EIG_CUTOFF * lambda_max`` are treated as zero (``Q`` is singular for
#: the linear kernel with more free variables than features, for duplicated points, and
#: numerically for smooth kernels)
EIG_CUTOFF = 1e-12


def _release(W, x, lo, hi, mult, scale):
    """At a working-set optimum: release from the working set ``W`` the bound variable whose
    multiplier ``mult`` has the most wrong sign; False (nothing released: optimal) when no
    multiplier is wrong by more than ``1e-12 scale``."""
    viol = np.where(W & (x <= lo), -mult, np.where(W & (x >= hi), mult, 0.0))
    k = int(np.argmax(viol))
    if viol[k] <= 1e-12 * scale:
        return False
    W[k] = False
    return True


def _ratio_step(x, d, lo, hi, W, unbounded_ok):
    """The ratio test along ``d``: the full step ``x + d`` when it stays in the box and may
    be taken whole (``unbounded_ok``: a Newton step, not a null direction), else the step to
    the first bound, which joins ``W``; None for a null direction that meets no bound."""
    with np.errstate(divide="ignore", invalid="ignore"):
        t_hi = np.where(d > 0, (hi - x) / d, np.inf)
        t_lo = np.where(d < 0, (lo - x) / d, np.inf)
    t_all = np.minimum(t_hi, t_lo)
    k = int(np.argmin(t_all))
    t = float(t_all[k])
    if unbounded_ok and t >= 1.0:
        return x + d
    if not np.isfinite(t):
        return None
    xn = np.minimum(np.maximum(x + t * d, lo), hi)
    xn[k] = hi[k] if d[k] > 0 else lo[k]
    W[k] = True
    return xn


def active_set_qp(Q, g0, x0, lo, hi, seq=None, budget=np.inf):
    """The QP of the module doc from ``x0`` (feasible); returns ``(x, change)``.

    Each step solves the Newton system on the working free set ``fr`` (the variables not
    held at a bound) through the symmetric eigendecomposition of ``Q_fr`` (projected on
    ``{seq^T d = 0}`` when ``seq`` is given): the components of the (projected) gradient
    on eigenvalues above ``EIG_CUTOFF * lambda_max`` give the Newton step; a component in
    the null space means the objective is linear along it, and the step follows it to the
    box. A ratio test stops at the first bound (which joins the working set); at a
    working-set optimum the bound variable whose multiplier (``g_t``, or ``g_t + lam s_t``
    with the equality's multiplier ``lam``) has the wrong sign is released. At most
    ``2 n + 10`` steps, each about ``4 |fr|^3`` flops, and at most ``budget`` flops in all
    (then it stops where it is). ``change`` is the decrease of the objective (negative
    when it improved); ``x`` always lies in the box and keeps ``seq^T x = seq^T x0`` up to
    round-off.
    """
    n = g0.size
    x = x0.copy()
    scale = max(1.0, float(np.max(np.abs(g0)))) if n else 1.0
    W = (x <= lo) | (x >= hi)          # working set: variables held at a bound
    spent = 0.0
    for _ in range(2 * n + 10):
        gx = g0 + Q @ (x - x0)
        fr = np.flatnonzero(~W)
        spent += 4.0 * float(fr.size) ** 3 + 2.0 * n * n
        if spent > budget:
            break                          # out of budget: keep what was gained
        d = np.zeros(n)
        lam = 0.0
        unbounded_ok = True
        if fr.size:
            gf = gx[fr]
            Qff = Q[np.ix_(fr, fr)]
            if seq is not None:
                # the equality: work in {s_fr^T d = 0} through the projector P
                sf = seq[fr]
                ss = float(sf @ sf)
                if ss > 0.0:
                    def proj(v):
                        return v - sf * (sf @ v) / ss
                    Qff = Qff - np.outer(sf, sf @ Qff) / ss
                    Qff = Qff - np.outer(Qff @ sf, sf) / ss
                    lam = -float(sf @ gf) / ss     # multiplier of the equality
                    gf = proj(gf)
            ev, V = np.linalg.eigh(0.5 * (Qff + Qff.T))
            lmax = max(float(ev[-1]), 0.0)
            keep = ev > EIG_CUTOFF * lmax if lmax > 0 else np.zeros(ev.size, bool)
            coeff = V[:, keep].T @ gf
            null = gf - V[:, keep] @ coeff         # component in the null space
            if np.linalg.norm(null) > 1e-10 * scale:
                d[fr] = -null                      # linear descent to the box
                unbounded_ok = False
            else:
                d[fr] = -(V[:, keep] @ (coeff / ev[keep]))
            if seq is not None and ss > 0.0:
                d[fr] = proj(d[fr])
        if fr.size == 0 or np.max(np.abs(d)) <= 1e-15 * (1.0 + np.max(np.abs(x))):
            # optimal on the working set: release the worst bound multiplier, or stop
            if not _release(W, x, lo, hi, gx + lam * seq if seq is not None else gx, scale):
                break
            continue
        xn = _ratio_step(x, d, lo, hi, W, unbounded_ok)
        if xn is None:
            break                          # unbounded direction: leave it to the caller
        x = xn
    x = np.minimum(np.maximum(x, lo), hi)
    if seq is not None:
        # clipping may move seq^T x by round-off: put it back on the most interior variable
        r = float(seq @ (x - x0))
        inside = np.flatnonzero((x > lo) & (x < hi))
        if r != 0.0 and inside.size:
            q = inside[int(np.argmax(np.minimum(x[inside] - lo[inside], hi[inside] - x[inside])))]
            x[q] = min(max(x[q] - r / seq[q], lo[q]), hi[q])
    D = x - x0
    return x, float(g0 @ D + 0.5 * D @ (Q @ D))


def active_set_qp_lowrank(Z, g0, x0, lo, hi, budget=np.inf, max_steps=None):
    """The box QP of the module doc with ``Q = Z Z^T`` (``Z`` n x r, ``r << n``, no
    equality), from ``x0`` (feasible); returns ``(x, change, steps)``.

    The same primal active-set method as :func:`active_set_qp`, for a Hessian of low rank
    (the linear-kernel SVM dual, ``Z = Y X``, ``r = d``): the gradient is
    ``g0 + Z Z^T (x - x0)`` (O(n r)), and on the working free set ``fr`` the nonzero
    eigenpairs of ``Q_fr = Z_fr Z_fr^T`` come from those of the r x r matrix
    ``Z_fr^T Z_fr = V diag(ev) V^T`` (vectors ``U = Z_fr V ev^(-1/2)``; O(|fr| r^2)), so
    every variable can take part (no cap on ``|fr|``).
    When ``|fr| > r`` the gradient has a component in the null space of ``Q_fr``, along
    which the objective is linear: the step follows it to the box (one variable joins the
    working set per step), which walks a coordinate-descent point with many free variables
    to a vertex-like point; at a working-set optimum the bound variable with the most
    negative multiplier is released. At most ``max_steps`` steps (default ``10 n + 10``) and
    ``budget`` flops (``2 n r + 2 |fr| r^2`` per step).
    """
    n, r = Z.shape
    x = x0.copy()
    if n == 0:
        return x, 0.0, 0
    if max_steps is None:
        max_steps = 10 * n + 10
    scale = max(1.0, float(np.max(np.abs(g0))))
    W = (x <= lo) | (x >= hi)
    v = np.zeros(r)                    # Z^T (x - x0)
    spent = 0.0
    steps = 0
    while steps < max_steps:
        gx = g0 + Z @ v
        fr = np.flatnonzero(~W)
        spent += 2.0 * n * r + 2.0 * fr.size * r * r
        if spent > budget:
            break
        steps += 1
        d = np.zeros(n)
        unbounded_ok = True
        if fr.size:
            gf = gx[fr]
            Zf = Z[fr]
            # Q_fr = Zf Zf^T = U diag(ev) U^T with U = Zf V ev^(-1/2), (ev, V) the
            # eigenpairs of the r x r matrix Zf^T Zf: O(|fr| r^2), no |fr| x |fr| matrix
            ev, V = np.linalg.eigh(Zf.T @ Zf)
            lmax = max(float(ev[-1]), 0.0) if ev.size else 0.0
            keep = ev > EIG_CUTOFF * lmax if lmax > 0 else np.zeros(ev.size, bool)
            Vk, evk = V[:, keep], ev[keep]
            c = Vk.T @ (Zf.T @ gf)                 # = ev^(1/2) U^T g_fr
            null = gf - Zf @ (Vk @ (c / evk))      # g_fr - U U^T g_fr
            if np.linalg.norm(null) > 1e-10 * scale:
                d[fr] = -null
                unbounded_ok = False
            else:
                d[fr] = -(Zf @ (Vk @ (c / (evk * evk))))   # -U diag(1/ev) U^T g_fr
        if fr.size == 0 or np.max(np.abs(d)) <= 1e-15 * (1.0 + np.max(np.abs(x))):
            if not _release(W, x, lo, hi, gx, scale):
                break
            continue
        xn = _ratio_step(x, d, lo, hi, W, unbounded_ok)
        if xn is None:
            break
        v += Z[fr].T @ (xn[fr] - x[fr])
        x = xn
    x = np.minimum(np.maximum(x, lo), hi)
    D = x - x0
    zD = Z.T @ D
    return x, float(g0 @ D + 0.5 * zD @ zD), steps
