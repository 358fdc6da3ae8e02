"""The representer form of a kernel certificate: ``w = F^T c`` held by its coefficients.

A binary problem on a non-linear kernel lives in the feature space of the empirical map
``F`` (``F F^T = G``), an ``m x m`` eigendecomposition: O(m^2) memory and O(m^3) time. Above
:data:`REPRESENTER_MIN_M` points the certificate never builds it, nor the Gram. Every
feature-space vector it needs is of the form ``w = F^T c`` (the point itself, the dual's
``F^T Y alpha``, their difference), so it is held by ``c`` (:class:`FeatureVector`) and
measured by kernel products:

* ``||w||^2 = c^T G c`` and the margins ``y (G c + b)``;
* the stationarity residual ``||F^T d|| = sqrt(d^T G d)`` for ``d = c - Y alpha`` (``d``
  is formed in coefficients first, so the residual does not cancel);
* ``G v`` by blocks of kernel columns over the non-zeros of ``v``
  (:meth:`refmodels.base.Problem.gram_times`): O(m x block) memory.

Within one certificate the products are computed once per distinct vector
(:func:`products`): ``G (Y alpha)`` is both the dual's ``w`` and the dual value's product.
The choice of the form depends on the problem's size and kernel alone, so a point gets the
same certificate whatever ran before.
"""
from __future__ import annotations

import contextlib
import contextvars
import hashlib

import numpy as np
import scipy.sparse as sp

from .reference import AUTO_REFERENCE_MAX_M

#: above this many points, a non-linear kernel's certificate takes the representer form
#: (the size at which :meth:`Problem.gram_times` stops using the Gram)
REPRESENTER_MIN_M = AUTO_REFERENCE_MAX_M

_MEMO: contextvars.ContextVar = contextvars.ContextVar("refmodels_products", default=None)


def applies(prob):
    """Whether ``prob``'s certificate takes the representer form (size and kernel alone)."""
    return not prob.kernel.is_linear and prob.m > REPRESENTER_MIN_M


@contextlib.contextmanager
def products():
    """Within the block, ``G v`` is computed once per distinct ``v`` (by its bytes)."""
    token = _MEMO.set({}) if _MEMO.get() is None else None
    try:
        yield
    finally:
        if token is not None:
            _MEMO.reset(token)


def _key(v):
    return hashlib.sha1(np.ascontiguousarray(v).view(np.uint8)).hexdigest()


def memo_times(v, compute):
    """``compute(v)``, remembered within :func:`products` by the exact bytes of ``v``."""
    memo = _MEMO.get()
    if memo is None:
        return compute(v)
    key = _key(v)
    out = memo.get(key)
    if out is None:
        out = memo[key] = compute(v)
    return out


def memo_times_many(vs, compute_many):
    """``[G v for v in vs]``: those not yet remembered within :func:`products` by one call of
    ``compute_many`` (one pass over the kernel blocks for all of them), then remembered."""
    memo = _MEMO.get()
    if memo is None:
        return compute_many(list(vs))
    keys = [_key(v) for v in vs]
    todo = {k: v for k, v in zip(keys, vs) if k not in memo}
    if todo:
        memo.update(zip(todo, compute_many(list(todo.values()))))
    return [memo[k] for k in keys]


class FeatureVector:
    """``w = F^T c`` for the problem ``prob``, held by ``c`` (see the module docstring).

    Sums, differences and multiples by a number combine the coefficients; ``Gc`` is ``G c``
    (computed on first use, or given), ``norm2()`` is ``c^T G c`` (clipped at 0: a PSD form
    evaluated in floating point).
    """

    __array_priority__ = 1000            # ``array - FeatureVector`` is refused by numpy

    def __init__(self, prob, coef, Gc=None, parts=()):
        self.prob = prob
        self.coef = np.asarray(coef, dtype=float)
        self._Gc = None if Gc is None else np.asarray(Gc, dtype=float)
        # the operands of a sum or difference: their products are likely asked next (the
        # stationarity residual ``w - w_dual``, then ``||w_dual||``), so they are computed in
        # the same pass over the kernel blocks
        self._parts = parts

    @property
    def Gc(self):
        if self._Gc is None:
            others = [p for p in self._parts if p._Gc is None]
            if others:
                G = self.prob.gram_times_many([self.coef] + [p.coef for p in others])
                self._Gc = G[0]
                for p, g in zip(others, G[1:]):
                    p._Gc = g
            else:
                self._Gc = self.prob.gram_times(self.coef)
            self._parts = ()
        return self._Gc

    def norm2(self):
        if not np.any(self.coef):
            return 0.0
        return max(float(self.coef @ self.Gc), 0.0)

    def _combine(self, other, sign):
        if not isinstance(other, FeatureVector) or other.prob is not self.prob:
            return NotImplemented
        return FeatureVector(self.prob, self.coef + sign * other.coef, parts=(self, other))

    def __add__(self, other):
        return self._combine(other, 1.0)

    def __sub__(self, other):
        return self._combine(other, -1.0)

    def __mul__(self, s):
        if isinstance(s, (int, float, np.floating, np.integer)):
            return FeatureVector(self.prob, float(s) * self.coef)
        return NotImplemented

    __rmul__ = __mul__

    def __truediv__(self, s):
        if isinstance(s, (int, float, np.floating, np.integer)):
            return FeatureVector(self.prob, self.coef / float(s))
        return NotImplemented

    def __neg__(self):
        return FeatureVector(self.prob, -self.coef)


def fnorm(v):
    """``||v||`` of a feature-space vector: a :class:`FeatureVector` or an array."""
    if isinstance(v, FeatureVector):
        return float(np.sqrt(v.norm2()))
    return float(np.linalg.norm(v))


def stationarity_system(prob, w, A):
    """``(A, target)`` of :func:`refmodels.reference.derive_box_duals` for the stationarity
    ``F^T Y mult = w``: in the representer form the coefficients must match,
    ``Y mult = c`` (a sparse diagonal ``A``; the residual of the chosen multipliers is then
    measured in ``G``'s norm by the certificate); else ``A = F^T Y`` (sparse for a sparse
    ``F``) and ``w`` as given."""
    if isinstance(w, FeatureVector):
        return sp.diags(prob.y).tocsc(), w.coef
    if sp.issparse(prob.F):                      # F^T Y, sparse (d x m)
        return (sp.diags(prob.y) @ prob.F).T.tocsc(), w
    return A(), w


def with_row(A, row):
    """``A`` with ``row`` appended below (dense or sparse, as ``A``)."""
    if sp.issparse(A):
        return sp.vstack([A, sp.csc_matrix(row[None, :])]).tocsc()
    return np.vstack([A, row[None, :]])
