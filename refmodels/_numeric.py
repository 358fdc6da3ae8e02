"""Small numerical building blocks written once for both layers.

Plain Python on floats, so that :mod:`fast` compiles the very same functions with numba
(``njit(cache=True)(regula_falsi_point)``) while :mod:`refmodels` calls them directly; and
:func:`unit_scale`, the numpy rescaling both layers' norms and prox use.
"""
from __future__ import annotations

import math
import time

import numpy as np

#: a norm or a prox brings entries beyond ``[1 / UNIT_SAFE, UNIT_SAFE]`` to unit scale first
#: (squares overflow beyond ~1e154: ``np.linalg.norm`` of a vector near 1e160 is inf)
UNIT_SAFE = 1e100


def unit_scale(amax):
    """Per entry of ``amax`` (the largest magnitude of a vector or column): the power of two
    just below it where it lies outside ``[1 / UNIT_SAFE, UNIT_SAFE]`` (dividing by it is
    exact, so ``amax / c`` lies in ``[1, 2)``), else 1; and whether any entry was far out."""
    amax = np.asarray(amax, float)
    far = (amax > 0) & np.isfinite(amax) & ((amax > UNIT_SAFE) | (amax < 1.0 / UNIT_SAFE))
    if not np.any(far):
        return np.ones_like(amax), False
    return np.where(far, np.ldexp(1.0, np.frexp(np.where(far, amax, 1.0))[1] - 1), 1.0), True


def unit_scale_scalar(amax):
    """:func:`unit_scale` of one number, as ``(float, bool)``: the same power of two (or 1)
    and the same answer, without the array round trip (a norm of a short vector costs
    little more than this check; DRR's proximal-gradient steps make thousands of them)."""
    amax = float(amax)
    if not 0.0 < amax < math.inf or 1.0 / UNIT_SAFE <= amax <= UNIT_SAFE:
        return 1.0, False
    return math.ldexp(1.0, math.frexp(amax)[1] - 1), True


def dual_exponent(p):
    """Hölder conjugate ``p* = p / (p - 1)`` (1 <-> inf)."""
    if p == 1.0:
        return math.inf
    if math.isinf(p):
        return 1.0
    return p / (p - 1.0)


def regula_falsi_point(lo, hi, flo, fhi):
    """The secant point of the bracket ``[lo, hi]`` (values ``flo``, ``fhi`` of opposite
    signs), or its midpoint when the secant leaves the open bracket."""
    den = fhi - flo
    if den == 0.0:       # equal values (a bracket of underflowed values): bisect
        return 0.5 * (lo + hi)
    x = (lo * fhi - hi * flo) / den
    if not (lo < x < hi):
        x = 0.5 * (lo + hi)
    return x


def illinois_update(x, fx, lo, hi, flo, fhi, side, increasing):
    """One Illinois (modified regula falsi) bracket update at ``(x, f(x))``.

    ``increasing``: whether ``f`` rises across the bracket (``f(lo) < 0 < f(hi)``). The end
    that stays twice in a row has its value halved, which restores superlinear convergence
    where plain regula falsi stalls. Returns ``(lo, hi, flo, fhi, side)``.
    """
    below = fx < 0.0 if increasing else fx > 0.0      # the root lies above x
    if below:
        lo, flo = x, fx
        if side == -1:
            fhi *= 0.5
        side = -1
    else:
        hi, fhi = x, fx
        if side == 1:
            flo *= 0.5
        side = 1
    return lo, hi, flo, fhi, side


#: dense kernel quantities (the Gram, the empirical kernel map F with F F^T = G, which the
#: certificate of a kernel point needs for its feature-space residuals) are refused, before
#: any work, beyond the memory available or, for an m x m eigendecomposition, above this
#: many points (its O(m^3) cost runs to hours on a few cores beyond it)
DENSE_EIG_MAX_M = 15_000


#: :func:`_available_memory` reads ``/proc/meminfo`` at most once in this many seconds (a
#: grid search on a small set guards thousands of small solves a minute: reading it for
#: each cost ~2 % of the search)
MEMINFO_TTL = 0.25
_MEMINFO = [-1.0, None]        # (monotonic time of the reading, its value)


def _available_memory():
    """Bytes of memory available (``MemAvailable``), or None where it cannot be read; the
    reading is reused for :data:`MEMINFO_TTL` seconds."""
    now = time.monotonic()
    if _MEMINFO[0] >= 0.0 and now - _MEMINFO[0] < MEMINFO_TTL:
        return _MEMINFO[1]
    _MEMINFO[0], _MEMINFO[1] = now, _read_meminfo()
    return _MEMINFO[1]


def _read_meminfo():
    """``MemAvailable`` of ``/proc/meminfo`` in bytes, or None."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return 1024.0 * float(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


#: what a refused dense computation suggests by default (the certificate's alternatives)
_ADVICE = ("certify a subsample, use the linear kernel, or rely on the fast solver's own "
           "check at its returned point (sol.info['self_check'])")


def guard_bytes(need, what, advice=None):
    """Refuse early, with the estimate, dense arrays of ``need`` bytes beyond 80 % of the
    memory available: ``MemoryError`` naming ``what``, the estimate and ``advice``."""
    avail = _available_memory()
    if avail is not None and need > 0.8 * avail:
        raise MemoryError(
            f"{what} needs about {need / 1e9:.1f} GB ({avail / 1e9:.1f} GB available): "
            + (advice or _ADVICE))


def guard_dense(m, what, copies=1, cubic=False, advice=None):
    """Refuse early, with the estimate, a dense ``m x m`` computation that cannot be
    bounded: ``copies`` arrays of ``8 m^2`` bytes beyond the memory available, or an
    eigendecomposition (``cubic``) above :data:`DENSE_EIG_MAX_M` points. Raises
    ``MemoryError`` naming ``what``, the size, the estimate and what to do instead
    (``advice``; default: the certificate's alternatives)."""
    need = copies * 8.0 * m * m
    if not cubic:
        guard_bytes(need, f"{what} for m = {m:,} points", advice)
        return
    avail = _available_memory()
    too_big = avail is not None and need > 0.8 * avail
    if too_big or m > DENSE_EIG_MAX_M:
        have = f"{avail / 1e9:.1f} GB available" if avail is not None else "memory unknown"
        raise MemoryError(
            f"{what} for m = {m:,} points needs about {need / 1e9:.1f} GB ({have})"
            + f" and an O(m^3) eigendecomposition (refused above {DENSE_EIG_MAX_M:,} points): "
            + (advice or _ADVICE))


def data_span(prob):
    """Largest absolute feature value (or Gram entry for a precomputed kernel), or None."""
    X = getattr(prob, "X", None)
    if X is None:
        return None
    data = X.data if hasattr(X, "data") and not isinstance(X, np.ndarray) else np.asarray(X)
    return float(np.max(np.abs(data))) if data.size else None


def scale_hint(prob):
    """``"; features span 1e+05: scale them ..."`` when badly scaled data is a likely cause
    (of a failing factorisation, a stalled solver or a failing check), else ``""``."""
    span = data_span(prob)
    kernel = prob.kernel
    gmax = None
    try:
        gmax = float(np.max(np.abs(kernel.diag(prob.X)))) if kernel is not None else None
    except Exception:                 # a kernel without diag (or a precomputed Gram)
        gmax = None
    parts = []
    if span is not None and (span > 1e3 or span < 1e-3):
        what = "Gram entries" if getattr(kernel, "is_precomputed", False) else "features"
        parts.append(f"{what} span {span:.0e}")
    if gmax is not None and gmax > 1e6 and not getattr(kernel, "is_precomputed", False):
        parts.append(f"kernel diagonal up to {gmax:.0e}")
    if not parts:
        return ""
    return (f"; {' and '.join(parts)}: scale them (e.g. MinMaxScaler or StandardScaler) "
            "for a well-conditioned problem")
