"""The block sub-problem of mcODM's relaxed dual, solved exactly by sorting
(SPEC §5; seed 002 §4.1, eq. 24, eqs. 25–41, Alg. 4 with SPEC's erratum).

**The block QP, derived from eq. 23.** Write ``coef[j, l] = alpha_j^l - delta_{y_j l} beta_j``
(eq. 22), ``y = y_i``, ``c = lam / (m (1 - theta)^2)`` and ``a = 1/(2c) = m(1-theta)^2/(2 lam)``.
Keeping every block ``j != i`` fixed, put ``g_l = sum_{j != i} k(x_i, x_j) coef[j, l]``
(the score ``s_l(x_i)`` without sample ``i``'s own contribution). The terms of eq. 23 that
involve block ``i`` are

* ``1/2 sum_l ||w_l||^2`` -> ``sum_l [ A/2 coef[i,l]^2 + g_l coef[i,l] ]`` with
  ``A = k(x_i, x_i)``, i.e.
  ``sum_{l != y} [A/2 (alpha^l)^2 + g_l alpha^l] + A/2 (alpha^y)^2 - A alpha^y beta
  + A/2 beta^2 + g_y (alpha^y - beta)``;
* ``m(1-theta)^2/(4 lam mu) * (mu (alpha^y)^2 + beta^2)`` -> ``a/2 (alpha^y)^2 + a/(2 mu) beta^2``;
* ``(1-theta) sum_{l != y} alpha^l`` and ``(M_i + 1 + theta) beta``.

Collecting, the block QP (eq. 24) is

.. math::

    \\min\\ \\sum_{l\\ne y}\\Big[\\frac A2(\\alpha^l)^2 + B_l\\alpha^l\\Big]
    + \\frac D2(\\alpha^y)^2 - A\\alpha^y\\beta + B_y\\alpha^y + \\frac E2\\beta^2 + F\\beta
    \\quad\\text{s.t.}\\ \\sum_l\\alpha^l = 0,\\ \\alpha^l\\le0\\ (l\\ne y),\\ \\beta\\ge0,

with ``B_l = g_l + 1 - theta`` (``l != y``), ``B_y = g_y``, ``D = A + a``,
``E = A + a/mu``, ``F = M_i + 1 + theta - g_y`` (SPEC §5's inputs). The change of eq. 23's
objective when only block ``i`` moves equals the change of this QP's objective
(checked numerically in ``tests/test_fast_mcodm.py``).

**Solution by sorting (eqs. 37–41).** With ``nu`` the multiplier of ``sum_l alpha^l = 0``,
KKT gives (``A > 0``) ``alpha^l = min(0, (nu - B_l)/A)`` for ``l != y`` (eq. 37) and
``beta = max(0, (A alpha^y - F)/E)`` (eq. 38); then (eq. 39)

* case 1, ``beta = 0``: ``alpha^y = (nu - B_y)/D``, valid iff ``A (nu - B_y) <= D F``;
* case 2, ``beta > 0``: ``alpha^y = (E (nu - B_y) - A F)/(D E - A^2)``,
  ``beta = (A alpha^y - F)/E``.

``alpha^y(nu)`` is continuous and increasing, so ``h(nu) = alpha^y(nu) + sum_{l != y}
min(0, (nu - B_l)/A)`` has one root. In each case the root is
``nu = (P + sum_{l in Phi} B_l)/(Q + |Phi|)`` with ``Phi = {l != y : B_l > nu}`` and
``(P, Q) = (A B_y / D, A / D)`` (eq. 40) resp.
``(P, Q) = ((A E B_y + A^2 F)/(D E - A^2), A E/(D E - A^2))`` (eq. 41); it is found by
sorting ``B_l`` (``l != y``) in decreasing order and adding them to ``Phi`` while the
current ratio ``(P + sum_Phi B_l)/(Q + |Phi|)`` is below the next ``B_l`` (the ratio then
increases; every ``B_l`` added exceeds the final ``nu``). **Erratum (SPEC §5)**: Alg. 4 as
printed accumulates the numerator in ``nu`` and never divides it by ``Q + |Phi|`` before
its lines 8–10 and 18–20 use it; here ``nu`` is the ratio. The case test is done on the
case-1 root without dividing by ``A``: ``beta = 0`` iff ``A (nu_1 - B_y) <= D F`` (the
case-2 function lies above the case-1 one beyond the break point, so the case-1 root is
the root iff it lies before the break point).

``A = k(x_i, x_i) = 0`` (a zero feature vector): the ``alpha^l`` enter only linearly and
``alpha^y`` is decoupled from ``beta``. Then ``beta = max(0, -F/E)``, and with
``t = alpha^y = -sum_{l != y} alpha^l >= 0`` the best split puts all of ``-t`` on one class
of largest ``B_l`` (the first in index order among ties: the minimiser is not unique then,
and the block does not move ``W``): ``t = max(0, (max_{l != y} B_l - B_y)/D)``.

To avoid the cancellation in ``D - A`` and ``D E - A^2`` when ``A >> a`` (large ``lam``),
the core routine takes ``aD = D - A`` and ``aE = E - A`` and uses
``D E - A^2 = A (aD + aE) + aD aE``.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ._rows import sift_down


@njit(cache=True)
def _sorted_root(P, Q, B, y, order_buf):
    """Root ``nu = (P + sum_Phi B_l)/(Q + |Phi|)`` of eqs. 40/41 by sorting (``Q > 0``): the
    ``B_l`` (``l != y``) taken in decreasing order from a max-heap, only as many as enter
    ``Phi`` (the same values in the same order as a full sort, without compiling one)."""
    k = B.shape[0]
    h = order_buf
    n = 0
    for l in range(k):
        if l != y:
            h[n] = B[l]
            n += 1
    num = P
    den = Q
    start = n // 2
    while True:
        if start > 0:                      # build the heap: sift every inner node down
            start -= 1
            i = start
        else:                              # take its top while the ratio num/den is below
            if n == 0 or not num < h[0] * den:
                break
            num += h[0]
            den += 1.0
            n -= 1
            h[0] = h[n]
            i = 0
        sift_down(h, i, n)
    return num / den


@njit(cache=True)
def block_core(A, B, y, aD, aE, F, alpha_out, buf):
    """Exact minimiser of eq. 24 for one sample; ``D = A + aD``, ``E = A + aE`` (``aD, aE > 0``).

    Writes ``alpha^1..alpha^k`` into ``alpha_out`` and returns ``beta``; ``buf`` is scratch
    of length >= k.
    """
    k = B.shape[0]
    D = A + aD
    E = A + aE
    if A <= 0.0:
        # alpha^l linear: everything on one class of largest B_l (first among ties)
        best = -1
        bmax = -np.inf
        for l in range(k):
            if l != y and B[l] > bmax:
                bmax = B[l]
                best = l
        t = (bmax - B[y]) / D
        if t < 0.0:
            t = 0.0
        for l in range(k):
            alpha_out[l] = 0.0
        alpha_out[y] = t
        alpha_out[best] = -t
        beta = -F / E
        return beta if beta > 0.0 else 0.0
    By = B[y]
    # case 1 (beta = 0), eq. 40
    nu = _sorted_root(A * By / D, A / D, B, y, buf)
    case2 = A * (nu - By) > D * F                          # SPEC: beta = 0 iff A(nu-B_y) <= DF
    beta = 0.0
    if case2:
        # case 2 (beta > 0), eq. 41
        det = A * (aD + aE) + aD * aE                      # D E - A^2
        nu = _sorted_root((A * E * By + A * A * F) / det, A * E / det, B, y, buf)
    s = 0.0
    for l in range(k):
        if l == y:
            continue
        v = (nu - B[l]) / A                                # eq. 37
        if v > 0.0:
            v = 0.0
        alpha_out[l] = v
        s += v
    alpha_out[y] = -s                                      # eq. 25 exactly
    if case2:
        beta = (A * alpha_out[y] - F) / E                  # eq. 38
        if beta < 0.0:
            beta = 0.0
    return beta


def solve_block(A, B, D, E, F, y):
    """The block QP (eq. 24) for inputs ``(A, B, D, E, F)`` as SPEC §5 defines them and the
    sample's class ``y`` (index into ``B``). Returns ``(alpha, beta)``, ``alpha`` of length k.

    Requires ``A >= 0``, ``D > A``, ``E > A`` (true for every block of eq. 23)."""
    B = np.ascontiguousarray(B, dtype=np.float64)
    A, D, E, F = float(A), float(D), float(E), float(F)
    if not (A >= 0 and D > A and E > A):
        raise ValueError("the block QP needs A >= 0, D > A and E > A")
    if not (0 <= int(y) < B.shape[0]) or B.shape[0] < 2:
        raise ValueError("y must index B (length k >= 2)")
    out = np.empty(B.shape[0])
    beta = block_core(A, B, int(y), D - A, E - A, F, out, np.empty(B.shape[0]))
    return out, float(beta)


def block_objective(alpha, beta, A, B, D, E, F, y):
    """Eq. 24's objective at ``(alpha, beta)``."""
    alpha = np.asarray(alpha, float)
    off = np.arange(alpha.size) != y
    return float(np.sum(0.5 * A * alpha[off] ** 2 + B[off] * alpha[off])
                 + 0.5 * D * alpha[y] ** 2 - A * alpha[y] * beta + B[y] * alpha[y]
                 + 0.5 * E * beta ** 2 + F * beta)
