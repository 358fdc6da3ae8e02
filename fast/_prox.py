"""Proximal operator of SPEC §8's group-norm regularizer, in numba (seed 004 eq. 8).

For ``R(w) = rho(||w|C||_{q,r})`` with ``rho(t) = t^p / p`` (``p = 1``: ``t``; ``p = 2``:
``t^2/2``) and ``1 <= q, r <= inf``, :func:`group_norm_prox` computes, column by column,

.. math::

    \\mathrm{prox}_{sR}(v) = \\arg\\min_x\\ \\tfrac12\\|x - v\\|^2 + s\\,\\rho(\\|x|C\\|_{q,r})

to machine precision, for every ``(q, r, p)`` (the reference's ``GroupNorm.prox`` falls back
on a CVXPY solve for e.g. ``q = 1.5`` or ``(3, 2)``; a fast solver cannot). Every reduction
below is to a *monotone* scalar equation, solved by the Illinois (modified regula falsi)
method on a sign-changing bracket, so no step can fail to converge:

* the sign pattern of ``x`` is that of ``v`` and ``|x_i| <= |v_i|``: work on ``b = |v|``.
* One group, norm ``||.||_q`` with threshold ``t`` (``x = prox_{t||.||_q}(b)``): closed form for
  ``q`` in {1, 2, inf} (soft-thresholding, block soft-thresholding, clipping at the level
  ``theta`` with ``sum (b - theta)_+ = t``); for ``1 < q < inf``: ``y_i + kappa y_i^{q-1} = b_i``
  (each a convex increasing scalar equation, Newton from the right converges monotonically),
  and ``kappa ||y(kappa)||_q^{q-1} = t`` is increasing in ``kappa``.
* Groups (``r > 1``, ``q != r``): with the group thresholds ``t_c`` and group norms
  ``a_c = A_c(t_c)``, optimality is ``t = tau lambda``, ``lambda`` in the subdifferential of
  ``||.||_r`` at ``a``: for a trial norm value ``N``, each group solves
  ``A_c(t_c) = N (t_c/tau)^{r*-1}`` (left side decreasing, right side increasing in ``t_c``),
  and ``||t(N)||_{r*} - tau`` is decreasing in ``N`` (``r* = r/(r-1)``).
* ``rho`` (``p > 1``): ``tau = s rho'(N)``. It is folded into the outer equation in ``N`` when
  ``p <= r`` (it stays monotone), and otherwise solved by an outer monotone equation
  ``tau - s rho'(N(prox_{tau N}(v))) = 0`` in ``tau``.
* ``q = r`` (or one group) is the plain ``q``-norm of the whole vector; DRM's
  ``(2, 2, t^2/2)`` is ``v / (1 + s)``.

:func:`group_norm_prox` computes DRM's case and, for ``rho(t) = t`` with every group
thresholded at ``s`` (``r = 1``, ``q = r`` or one group) and ``q`` in {1, 2, inf}, the closed
forms above in numpy (:func:`_closed_form_r1`: the same numbers, nothing to compile); every
other case in numba.
"""
from __future__ import annotations

import functools
import math
from collections import namedtuple

import numpy as np
from numba import njit

from refmodels._numeric import dual_exponent, illinois_update, regula_falsi_point, unit_scale
from ._rows import sift_down

_MAXIT = 400
#: typed flags, not literals: one compiled specialisation of _solve_N / _S for both
_NO, _YES = np.bool_(False), np.bool_(True)
#: the Illinois bracket's "no side kept yet", typed for the same reason (one _illinois)
_NOSIDE = np.int64(0)
_XTOL = 1e-15
#: the root-bracketing step written once (:mod:`refmodels._numeric`), compiled here
_secant = njit(cache=True)(regula_falsi_point)
_illinois = njit(cache=True)(illinois_update)
#: the largest |log kappa| a log-space bracket may reach (exp underflows / overflows beyond)
_LOGCAP = 700.0

#: a column's groups for the ``r > 1`` solves (:func:`_solve_N`): ``b = |v|`` in group order,
#: the group bounds ``offs`` (group ``c`` is ``b[offs[c]:offs[c + 1]]``), ``y`` where the prox
#: is written, and ``tt`` the groups' thresholds (scratch, one per group)
Groups = namedtuple("Groups", "b offs y tt")
#: the norm ``||.|C||_{q,r}`` of those solves: ``q``, ``r``, ``r* = r / (r - 1)`` (``rstar``)
#: and ``r* - 1 = 1 / (r - 1)`` (``rs1``; 1 and 0 for ``r = inf``)
Norm = namedtuple("Norm", "q r rstar rs1")


@njit(cache=True)
def _bracket(lo, hi, flo, fhi):
    """An Illinois root search on ``[lo, hi]`` (values ``flo``, ``fhi`` of opposite signs):
    its state ``(lo, hi, flo, fhi, side, steps)``, its first point and ``done = False``. A
    search is ``br, x, done = _bracket(...)``, then ``br, x, done = _root_step(br, x, f(x),
    ...)`` while not done; the caller evaluates at the final ``x`` once more to fill its
    output."""
    return (lo, hi, flo, fhi, _NOSIDE, 0), _secant(lo, hi, flo, fhi), False


@njit(cache=True)
def _root_step(br, x, fx, increasing, floor):
    """One step of every root search below: the bracket updated at ``(x, f(x))``
    (:func:`illinois_update`), then the next point and whether to stop: at a zero of ``f``,
    after ``_MAXIT`` steps, or when the bracket is shorter than ``_XTOL * max(floor, |hi|)``
    (``floor = 0`` for an unknown in ``[0, inf)``, 1 for a log-scale unknown that may cross
    zero); stopping, it returns ``x`` itself."""
    lo, hi, flo, fhi, side, steps = br
    if fx == 0.0:
        return br, x, True
    lo, hi, flo, fhi, side = _illinois(x, fx, lo, hi, flo, fhi, side, increasing)
    br = (lo, hi, flo, fhi, side, steps + 1)
    if hi - lo <= _XTOL * max(floor, abs(hi)) or steps + 1 >= _MAXIT:
        return br, x, True
    return br, _secant(lo, hi, flo, fhi), False


@njit(cache=True)
def _log_equation(b, u, q, y, cu, ca, c0):
    """``cu u + ca log a(u) - c0`` with ``a(u) = ||y(e^u)||_q`` (:func:`_y_of_kappa`, which
    fills ``y``): both log-scale equations of a general ``q`` have this form."""
    return cu * u + ca * math.log(max(_y_of_kappa(b, math.exp(u), q, y), 1e-300)) - c0


@njit(cache=True)
def _log_root(b, q, y, cu, ca, c0, u0):
    """Root ``u`` of the increasing :func:`_log_equation`: a bracket grown from ``u0`` by
    steps of 2 (within ``+-_LOGCAP``), then the Illinois search; fills ``y`` at the root."""
    lo = u0
    flo = _log_equation(b, lo, q, y, cu, ca, c0)
    while flo > 0.0 and lo > -_LOGCAP:
        lo -= 2.0
        flo = _log_equation(b, lo, q, y, cu, ca, c0)
    hi = lo + 1.0
    fhi = _log_equation(b, hi, q, y, cu, ca, c0)
    while fhi < 0.0 and hi < _LOGCAP:
        lo, flo = hi, fhi
        hi += 2.0
        fhi = _log_equation(b, hi, q, y, cu, ca, c0)
    br, x, done = _bracket(lo, hi, flo, fhi)
    while not done:
        br, x, done = _root_step(br, x, _log_equation(b, x, q, y, cu, ca, c0), _YES, 1.0)
    _log_equation(b, x, q, y, cu, ca, c0)
    return x


# ---------------------------------------------------------------------------------------
# one group: ||.||_q
# ---------------------------------------------------------------------------------------
@njit(cache=True)
def _qnorm(b, q):
    n = b.size
    if n == 0:
        return 0.0
    if q == 1.0:
        return np.sum(np.abs(b))
    if q == 2.0:
        return math.sqrt(np.sum(b * b))
    mx = 0.0                  # max |b_i| by a loop: np.max compiles a take and a comparator
    for i in range(n):
        a = abs(b[i])
        if not a <= mx:       # larger, or NaN (which it returns, like np.max)
            mx = a
            if a != a:
                break
    if math.isinf(q):
        return mx
    if mx == 0.0:
        return 0.0
    s = 0.0
    for i in range(n):
        s += (abs(b[i]) / mx) ** q
    return mx * s ** (1.0 / q)


_dual_exp = njit(cache=True)(dual_exponent)


@njit(cache=True)
def _coord_root(b, kappa, q):
    """``y >= 0`` with ``y + kappa y^(q-1) = b`` (``1 < q < inf``, ``b >= 0``)."""
    if b <= 0.0:
        return 0.0
    if kappa <= 0.0:
        return b
    if q >= 2.0:                            # y + kappa y^(q-1) = b, convex in y
        return _newton_from_above(min(b, (b / kappa) ** (1.0 / (q - 1.0))), b, kappa, 1.0,
                                  q - 1.0)
    e = 1.0 / (q - 1.0)                     # z = y^(q-1): z^e + kappa z = b, convex in z
    return _newton_from_above(min(b / kappa, b ** (q - 1.0)), b, kappa, e, 1.0) ** e


@njit(cache=True)
def _newton_from_above(x, b, kappa, p1, p2):
    """Root of the convex increasing ``x^p1 + kappa x^p2 = b`` on ``x > 0`` by Newton from a
    point above it (monotone descent; halving if a step leaves ``x > 0``)."""
    for _ in range(300):
        f = x ** p1 + kappa * x ** p2 - b
        if f <= 0.0:
            break
        xn = x - f / (p1 * x ** (p1 - 1.0) + kappa * p2 * x ** (p2 - 1.0))
        if xn <= 0.0:
            xn = 0.5 * x
        if x - xn <= 1e-16 * x:
            return xn
        x = xn
    return x


@njit(cache=True)
def _y_of_kappa(b, kappa, q, y):
    for i in range(b.size):
        y[i] = _coord_root(b[i], kappa, q)
    return _qnorm(y, q)


@njit(cache=True)
def _linf_level(b, t):
    """``theta`` with ``sum (b - theta)_+ = t`` (``0 < t < sum b``): the ``b_i`` in
    decreasing order (taken from a max-heap: the order of a sort without compiling one),
    ``theta`` the last level ``(b_(1) + ... + b_(k) - t)/k`` not above ``b_(k)`` (``k = 1``
    always qualifies: with ``t`` below the rounding of ``b_(1)`` the level rounds to it)."""
    n = b.size
    h = np.empty(n)
    for i in range(n):
        h[i] = b[i]
    cs = 0.0
    theta = 0.0
    k = 0
    start = n // 2
    while True:
        if start > 0:                      # build the heap: sift every inner node down
            start -= 1
            i = start
        else:                              # take its top: the next largest b_i
            if n == 0:
                break
            sk = h[0]
            cs += sk
            th = (cs - t) / (k + 1.0)
            if sk >= th:                   # not >: a t below the rounding of b_(1) gives
                theta = th                 # th = b_(1), a level (the group was killed)
            k += 1
            n -= 1
            h[0] = h[n]
            i = 0
        sift_down(h, i, n)
    return max(theta, 0.0)


@njit(cache=True)
def _lq_prox_abs(b, t, q, y):
    """``y = prox_{t ||.||_q}(b)`` for ``b >= 0``; returns ``||y||_q``."""
    n = b.size
    if t <= 0.0:
        for i in range(n):
            y[i] = b[i]
        return _qnorm(b, q)
    if q == 1.0:
        for i in range(n):
            y[i] = max(b[i] - t, 0.0)
        return np.sum(y)
    if q == 2.0:
        nb = math.sqrt(np.sum(b * b))
        if nb <= t:
            y[:] = 0.0
            return 0.0
        f = 1.0 - t / nb
        for i in range(n):
            y[i] = b[i] * f
        return nb - t
    if math.isinf(q):
        if np.sum(b) <= t:
            y[:] = 0.0
            return 0.0
        th = _linf_level(b, t)
        for i in range(n):
            y[i] = min(b[i], th)
        return th
    if _qnorm(b, _dual_exp(q)) <= t:
        y[:] = 0.0
        return 0.0
    nb = _qnorm(b, q)
    # psi(u) = log(kappa ||y(kappa)||^(q-1)) - log t, increasing in u = log kappa
    _log_root(b, q, y, 1.0, q - 1.0, math.log(t), math.log(t) - (q - 1.0) * math.log(nb))
    return _qnorm(y, q)


@njit(cache=True)
def _group_given_C(b, C, rs1, q, y):
    """Group solve ``A(t) = C t^rs1`` (``A(t) = ||prox_{t||.||_q}(b)||_q``); returns ``t``,
    fills ``y = prox_{t ||.||_q}(b)``."""
    nb = _qnorm(b, q)
    if nb == 0.0:
        y[:] = 0.0
        return 0.0
    if rs1 == 0.0 and nb <= C:
        for i in range(b.size):
            y[i] = b[i]
        return 0.0
    d = _qnorm(b, _dual_exp(q))
    if C <= 0.0:
        y[:] = 0.0
        return d
    general = not (q == 1.0 or q == 2.0 or math.isinf(q))
    if not general:
        lo, hi = 0.0, d
        flo = nb - (C * 0.0 ** rs1 if rs1 > 0.0 else C)
        fhi = -(C * d ** rs1 if rs1 > 0.0 else C)
        br, x, done = _bracket(lo, hi, flo, fhi)
        while not done:
            fx = _lq_prox_abs(b, x, q, y) - (C * x ** rs1 if rs1 > 0.0 else C)
            br, x, done = _root_step(br, x, fx, _NO, 0.0)
        _lq_prox_abs(b, x, q, y)
        return x
    # general q: unknown u = log kappa; phi(u) = log a - rs1 log t - log C decreasing, with
    # a = ||y(kappa)||_q and t = kappa a^(q-1): the root of -phi(u), increasing
    x = _log_root(b, q, y, rs1, rs1 * (q - 1.0) - 1.0, -math.log(C), -(q - 2.0) * math.log(nb))
    a = _qnorm(y, q)
    return math.exp(x) * a ** (q - 1.0)


# ---------------------------------------------------------------------------------------
# several groups
# ---------------------------------------------------------------------------------------
@njit(cache=True)
def _r1_sum(b, offs, t, q, y):
    """``r = 1``: every group thresholded at ``t``; returns ``sum_c ||y^c||_q``."""
    tot = 0.0
    for c in range(offs.size - 1):
        tot += _lq_prox_abs(b[offs[c]:offs[c + 1]], t, q, y[offs[c]:offs[c + 1]])
    return tot


@njit(cache=True)
def _group_norms(b, offs, q):
    """``(||b^c||_q)_c`` over the groups (contiguous in ``b``, bounds ``offs``)."""
    out = np.empty(offs.size - 1)
    for c in range(offs.size - 1):
        out[c] = _qnorm(b[offs[c]:offs[c + 1]], q)
    return out


@njit(cache=True)
def _r_norm(v, r):
    return _qnorm(v, r)


@njit(cache=True)
def _S(grp, nrm, N, tau, s, p, folded):
    """``||t(N)||_{r*}`` with ``t_c`` from the group solves at coefficient ``C`` (``grp`` the
    :data:`Groups`, ``nrm`` the :data:`Norm`)."""
    b, offs, y, tt = grp
    q, rstar, rs1 = nrm.q, nrm.rstar, nrm.rs1
    if folded:      # tau = s N^(p-1), C = N tau^(-rs1) = s^(-rs1) N^(1 - (p-1) rs1)
        C = s ** (-rs1) * N ** (1.0 - (p - 1.0) * rs1)
    else:
        C = N * tau ** (-rs1)
    for c in range(offs.size - 1):
        tt[c] = _group_given_C(b[offs[c]:offs[c + 1]], C, rs1, q, y[offs[c]:offs[c + 1]])
    return _r_norm(tt, rstar)


@njit(cache=True)
def _solve_N(grp, nrm, tau, s, p, folded):
    """Root ``N`` of ``||t(N)||_{r*} - tau(N)`` (decreasing; ``grp`` the :data:`Groups`,
    ``nrm`` the :data:`Norm`); fills ``grp.y``; returns ``N``."""
    b, offs, y = grp.b, grp.offs, grp.y
    q, r, rstar = nrm.q, nrm.r, nrm.rstar
    N0 = _r_norm(_group_norms(b, offs, q), r)
    if N0 == 0.0:
        y[:] = 0.0
        return 0.0
    if not folded:
        if _r_norm(_group_norms(b, offs, _dual_exp(q)), rstar) <= tau:
            y[:] = 0.0
            return 0.0
    lo, hi = 0.0, N0
    tlo = s * lo ** (p - 1.0) if folded else tau
    flo = _S(grp, nrm, lo, tau, s, p, folded) - tlo
    thi = s * hi ** (p - 1.0) if folded else tau
    fhi = _S(grp, nrm, hi, tau, s, p, folded) - thi
    it = 0
    while fhi > 0.0 and it < 60:
        lo, flo = hi, fhi
        hi *= 2.0
        thi = s * hi ** (p - 1.0) if folded else tau
        fhi = _S(grp, nrm, hi, tau, s, p, folded) - thi
        it += 1
    x = lo
    if flo > 0.0:
        br, x, done = _bracket(lo, hi, flo, fhi)
        while not done:
            tx = s * x ** (p - 1.0) if folded else tau
            fx = _S(grp, nrm, x, tau, s, p, folded) - tx
            br, x, done = _root_step(br, x, fx, _NO, 0.0)
    _S(grp, nrm, x, tau, s, p, folded)
    return x


@njit(cache=True)
def _prox_abs_r1(b, offs, s, q, p, y):
    """:func:`_prox_abs` for ``r = 1`` (each group thresholded, or one group: the plain
    ``q``-norm), compiled on its own so that a run that needs only it does not compile the
    ``r > 1`` machinery (:func:`group_norm_prox` chooses; a cold DRR with ``(q, r) = (2, 1)``
    compiled the whole tree)."""
    if s <= 0.0:
        for i in range(b.size):            # not y[:] = b: its shape check formats a message
            y[i] = b[i]
        return
    if p == 1.0:
        _r1_sum(b, offs, s, q, y)
        return
    # G(N) = sum_c A_c(s N^(p-1)) - N, decreasing in N
    N0 = np.sum(_group_norms(b, offs, q))
    if N0 == 0.0:
        y[:] = 0.0
        return
    lo, hi = 0.0, N0
    flo = N0
    fhi = _r1_sum(b, offs, s * N0 ** (p - 1.0), q, y) - N0
    x = hi
    if fhi < 0.0:
        br, x, done = _bracket(lo, hi, flo, fhi)
        while not done:
            fx = _r1_sum(b, offs, s * x ** (p - 1.0), q, y) - x
            br, x, done = _root_step(br, x, fx, _NO, 0.0)
    _r1_sum(b, offs, s * x ** (p - 1.0), q, y)


@njit(cache=True)
def _prox_abs(b, offs, s, q, r, p, y):
    """``y = prox_{s rho(||.|C||_{q,r})}(b)`` for ``b >= 0`` (groups contiguous in ``b``)."""
    g = offs.size - 1
    if s <= 0.0:
        for i in range(b.size):            # not y[:] = b: its shape check formats a message
            y[i] = b[i]
        return
    if r == 1.0:
        _prox_abs_r1(b, offs, s, q, p, y)
        return
    rs1 = 0.0 if math.isinf(r) else 1.0 / (r - 1.0)
    rstar = 1.0 if math.isinf(r) else r / (r - 1.0)
    grp = Groups(b, offs, y, np.empty(g))
    nrm = Norm(q, r, rstar, rs1)
    if p == 1.0:
        _solve_N(grp, nrm, s, s, 1.0, _NO)
        return
    if p <= r:
        _solve_N(grp, nrm, 0.0, s, p, _YES)
        return
    # p > r: outer H(tau) = tau - s N(tau)^(p-1), increasing in tau
    N0 = _r_norm(_group_norms(b, offs, q), r)
    if N0 == 0.0:
        y[:] = 0.0
        return
    lo, hi = 0.0, s * N0 ** (p - 1.0)
    flo = -hi
    fhi = hi - s * _solve_N(grp, nrm, hi, hi, 1.0, _NO) ** (p - 1.0)
    x = hi
    if fhi > 0.0:
        br, x, done = _bracket(lo, hi, flo, fhi)
        while not done:
            fx = x - s * _solve_N(grp, nrm, x, x, 1.0, _NO) ** (p - 1.0)
            br, x, done = _root_step(br, x, fx, _YES, 0.0)
    _solve_N(grp, nrm, x, x, 1.0, _NO)


@njit(cache=True)
def _prox_columns(V, steps, perm, offs, q, r, p, out):
    b, y = np.empty(V.shape[0]), np.empty(V.shape[0])
    for j in range(V.shape[1]):
        _abs_column(V, perm, j, b)
        _prox_abs(b, offs, steps[j], q, r, p, y)
        _signed_back(V, perm, j, y, out)


@njit(cache=True)
def _prox_columns_r1(V, steps, perm, offs, q, p, out):
    """:func:`_prox_columns` for ``r = 1`` (see :func:`_prox_abs_r1`)."""
    b, y = np.empty(V.shape[0]), np.empty(V.shape[0])
    for j in range(V.shape[1]):
        _abs_column(V, perm, j, b)
        _prox_abs_r1(b, offs, steps[j], q, p, y)
        _signed_back(V, perm, j, y, out)


@njit(cache=True)
def _abs_column(V, perm, j, b):
    """``b = |V[perm, j]|``: column ``j`` in group order, signs dropped."""
    for i in range(perm.shape[0]):
        b[i] = abs(V[perm[i], j])


@njit(cache=True)
def _signed_back(V, perm, j, y, out):
    """Column ``j`` of ``out``: ``y`` (the prox of ``|V|``) with the signs of ``V``."""
    for i in range(perm.shape[0]):
        vi = V[perm[i], j]
        out[perm[i], j] = y[i] if vi >= 0.0 else -y[i]


def group_layout(groups, q, r):
    """``(perm, offs, r_eff)``: the groups as contiguous runs of ``perm``; one group of every
    coordinate (``r_eff = 1``) when ``q == r`` or there is a single group."""
    m = int(sum(len(g) for g in groups))
    if len(groups) == 1 or q == r:
        return np.arange(m, dtype=np.int64), np.array([0, m], dtype=np.int64), 1.0
    perm = np.concatenate([np.asarray(g, dtype=np.int64) for g in groups])
    offs = np.concatenate([[0], np.cumsum([len(g) for g in groups])]).astype(np.int64)
    return perm, offs, float(r)


def group_norm_prox(V, steps, q, r, p, groups, layout=None):
    """``prox_{s_j rho(||.|C||_{q,r})}`` of every column ``V[:, j]`` (``s_j = steps[j]``).

    ``V`` (m,) or (m, k); ``steps`` a scalar or (k,); ``p`` the exponent of ``rho = t^p/p``.
    """
    V = np.asarray(V, dtype=np.float64)
    vec = V.ndim == 1
    V2 = V[:, None] if vec else V
    k = V2.shape[1]
    steps = np.array(np.broadcast_to(np.asarray(steps, np.float64), (k,)))
    q, r, p = float(q), float(r), float(p)
    if p == 2.0 and q == 2.0 and (r == 2.0 or len(groups) == 1):
        out = V2 / (1.0 + steps)[None, :]
        return out[:, 0] if vec else out
    perm, offs, r_eff = layout if layout is not None else group_layout(groups, q, r)
    V2, steps, c = _to_unit_scale(V2, steps, p)
    if p == 1.0 and r_eff == 1.0 and (q == 1.0 or q == 2.0 or math.isinf(q)):
        out = _closed_form_r1(V2, steps, perm, offs, q)
    else:
        out = _compiled_prox(V2, steps, perm, offs, q, r_eff, p)
    if c is not None:
        out *= c[None, :]
    return out[:, 0] if vec else out


def _to_unit_scale(V2, steps, p):
    """``(V2', steps', c)`` for the prox of every column, in one pass over ``|V2|``:

    * far-out columns (largest entry outside :data:`refmodels._numeric.UNIT_SAFE`) brought
      to unit scale, ``prox_{s rho(N)}(v) = c prox_{s c^(p-2) rho(N)}(v / c)`` for
      ``rho(t) = t^p / p`` and a norm ``N``, ``c`` a power of two (exact: the other columns
      keep their numbers bit for bit; the closed forms give the same numbers either way).
      Squares of entries beyond ~1e154 overflow (a q = 2 group norm of inf: the prox
      returned its input), and the root-finders' powers ``t^q`` and logarithms lose the
      small end (measured: relative errors of 0.01-0.9 at 1e+-160 for every (q, r) but
      (1, 1) and (inf, inf), a ZeroDivisionError for (q, r) = (3, inf) at 1e-200);
      ``c`` is None when no column needs it;
    * step 0 (the identity) where the prox moves no entry by more than the rounding of the
      column's largest: ``v - prox(v) = s g`` with ``g`` a subgradient of ``rho(N)`` at the
      prox, so ``||v - prox(v)||_2 <= s L N(v)^(p-1)``, with ``L = sqrt(m)`` bounding the
      Lipschitz constant of every ``||.|C||_{q,r}`` in the 2-norm and ``N(v) <= ||v||_1``.
      There the root-finders would bracket over hundreds of binades (one 9 x 4 call at
      steps 1e-300, p = 3, took far longer than a solve; validation/decisions.md) to
      return the input.
    """
    m = V2.shape[0]
    if m == 0:
        return V2, steps, None
    A = np.abs(V2)
    amax, l1 = np.max(A, axis=0), np.sum(A, axis=0)
    c, far = unit_scale(amax)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        if far:
            V2, steps = V2 / c[None, :], steps * c ** (p - 2.0)
            amax, l1 = amax / c, l1 / c
        move = steps * math.sqrt(m) * l1 ** (p - 1.0)
    small = (steps > 0.0) & (move <= 2.0 ** -53 * amax)
    if small.any():
        steps = np.where(small, 0.0, steps)
    return V2, steps, (c if far else None)


def _compiled_prox(V2, steps, perm, offs, q, r_eff, p):
    """The numba path of :func:`group_norm_prox` for ``V2`` (m, k): every ``(q, r, p)``."""
    out = np.empty(V2.shape)           # C order whatever V's layout: one compiled _prox_columns
    if r_eff == 1.0:     # the r = 1 solver alone (it compiles without the r > 1 machinery)
        _prox_columns_r1(np.ascontiguousarray(V2), steps, perm, offs, q, p, out)
    else:
        _prox_columns(np.ascontiguousarray(V2), steps, perm, offs, q, r_eff, p, out)
    return out


@functools.lru_cache(maxsize=16)
def _runs(perm_bytes, offs_bytes):
    """The groups (runs ``offs[c]:offs[c+1]`` of ``perm``) for the numpy path: the group of
    every coordinate, and the coordinates of every group padded to the longest (``pidx``,
    ``(g, L)``; ``valid`` marks the real ones), or ``None`` for both when that padding
    would cost more than the data (very unequal groups)."""
    perm = np.frombuffer(perm_bytes, dtype=np.int64)
    offs = np.frombuffer(offs_bytes, dtype=np.int64)
    sizes = np.diff(offs)
    g, m = sizes.size, int(offs[-1])
    group_of = np.empty(m, dtype=np.int64)
    group_of[perm] = np.repeat(np.arange(g), sizes)
    L = int(sizes.max())
    if g * L > 4 * m + 64:
        return group_of, None, None
    pos = np.arange(L)
    valid = pos[None, :] < sizes[:, None]
    pidx = perm[np.where(valid, offs[:-1, None] + pos[None, :], 0)]
    return group_of, pidx, valid[:, :, None]


def _group_sums(A, perm, offs, pidx, valid):
    """``sum`` over every group of ``A`` (m, k) (its coordinates in ``perm``'s order), added
    in order like :func:`_qnorm`'s ``np.sum`` (a running sum: the same rounding), (g, k)."""
    if pidx is None:
        return np.stack([np.cumsum(A[perm[offs[c]:offs[c + 1]]], axis=0)[-1]
                         for c in range(offs.size - 1)])
    P = A[pidx]
    P *= valid                     # exact: x * 1 = x, the padding to 0
    return np.cumsum(P, axis=1)[:, -1]


def _closed_form_r1(V2, steps, perm, offs, q):
    """:func:`_prox_columns_r1` for ``p = 1`` and ``q`` in {1, 2, inf} in numpy, no compile
    (module docstring: every group thresholded at ``s``, one closed form per group; with
    ``v`` the column): soft-thresholding ``v - clip(v, -s, s)`` (``q = 1``), block
    soft-thresholding ``v (1 - s/||v_c||_2)_+`` (``q = 2``), clipping at ``+-theta_c``, the
    level of :func:`_linf_level`, or 0 if ``||v_c||_1 <= s`` (``q = inf``). The same
    operations as the compiled path on ``|v|`` (IEEE arithmetic is symmetric in the sign;
    group sums are running sums there and here), so the same numbers up to the sign of a
    zero."""
    m, k = V2.shape
    sizes = np.diff(offs)
    if m == 0 or k == 0 or sizes.size == 0 or sizes.min() == 0:
        return _compiled_prox(V2, steps, perm, offs, q, 1.0, 1.0)
    t = steps[None, :]
    if q == 1.0:
        out = V2 - np.minimum(np.maximum(V2, -t), t)
    else:
        group_of, pidx, valid = _runs(np.ascontiguousarray(perm, np.int64).tobytes(),
                                      np.ascontiguousarray(offs, np.int64).tobytes())
        if q == 2.0:
            nb = np.sqrt(_group_sums(V2 * V2, perm, offs, pidx, valid))
            live = nb > t
            f = 1.0 - np.divide(t, nb, out=np.ones_like(nb), where=live)
            f[~live] = 0.0
            out = V2 * f[group_of]
        else:
            B = np.abs(V2)
            if pidx is None:
                theta = np.stack([_linf_levels(B[perm[offs[c]:offs[c + 1]]][None], steps)[0]
                                  for c in range(sizes.size)])
            else:
                theta = _linf_levels(np.where(valid, B[pidx], -np.inf), steps)
            theta[_group_sums(B, perm, offs, pidx, valid) <= t] = 0.0   # the group is 0
            th = theta[group_of]
            out = np.minimum(np.maximum(V2, -th), th)
    still = steps <= 0.0                                   # s <= 0: the identity
    if still.any():
        out[:, still] = V2[:, still]
    return out


def _linf_levels(P, steps):
    """:func:`_linf_level` of every group and column at once: ``P`` (g, L, k) the groups'
    ``b``, padded with ``-inf`` at the end; returns ``theta`` (g, k)."""
    S = np.sort(P, axis=1)[:, ::-1]                        # decreasing, the padding last
    cs = np.cumsum(S, axis=1)
    with np.errstate(invalid="ignore"):
        th = (cs - steps[None, None, :]) / (np.arange(P.shape[1]) + 1.0)[None, :, None]
        ok = (S >= th) & (S > -np.inf)      # >= as in _linf_level; False on the padding
    L = P.shape[1]
    last = L - 1 - np.argmax(ok[:, ::-1], axis=1)
    theta = np.take_along_axis(th, last[:, None, :], axis=1)[:, 0]
    theta = np.where(ok.any(axis=1), theta, 0.0)
    return np.maximum(theta, 0.0)
