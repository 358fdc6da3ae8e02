"""Kernel evaluation and an LRU cache of kernel rows, shared by the fast solvers.

Kernels are passed to numba code as a small tuple ``(kind, gamma, degree, coef0)``
(:func:`kernel_params`); ``kind`` is one of :data:`LINEAR`, :data:`RBF`,
:data:`POLY`, :data:`PRECOMPUTED`. For ``PRECOMPUTED`` the "data" ``X`` *is* the
Gram matrix and row ``i`` is ``G[i]``.

Two ways to get kernel rows:

* the full Gram (:func:`gram`, BLAS) when it fits in memory
  (:func:`fits_in_memory`, ``m * m * 8`` bytes within ``cache_size_mb``);
* otherwise an LRU cache of rows (:func:`make_cache`, :func:`get_row`), as in
  LIBSVM's ``Cache`` class (``svm.cpp``): a fixed number of slots, each holding one
  full row, the least recently used slot evicted on a miss.
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np
import scipy.sparse as sp
from numba import njit

from refmodels.kernels import RBF_EXPANSION_MIN, centre

LINEAR, RBF, POLY, PRECOMPUTED = 0, 1, 2, 3
# (compile options: ``no_cfunc_wrapper``, and no CPython entry point for :func:`source_row`,
# which only compiled code calls; see :mod:`fast._smo`)


def kernel_params(kernel):
    """``(kind, gamma, degree, coef0)`` of a :mod:`refmodels.kernels` object; for a
    :class:`refmodels.kernels.WithBias`, those of the kernel it wraps (the rows computed from
    them get :func:`row_bias` added)."""
    from refmodels.kernels import WithBias

    if isinstance(kernel, WithBias):
        return kernel_params(kernel.kernel)
    name = getattr(kernel, "name", None)
    if getattr(kernel, "is_precomputed", False):
        return PRECOMPUTED, 0.0, 1, 0.0
    if getattr(kernel, "is_linear", False):
        return LINEAR, 0.0, 1, 0.0
    if name == "rbf":
        return RBF, float(kernel.gamma), 1, 0.0
    if name == "poly":
        return POLY, float(kernel.gamma), int(kernel.degree), float(kernel.coef0)
    raise ValueError(f"kernel must be Linear, RBF, Polynomial or Precomputed for the fast "
                     f"solvers; got {kernel!r}")


def row_bias(kernel):
    """What a bias feature adds to the kernel rows computed from :func:`kernel_params`:
    ``s^2`` for :class:`refmodels.kernels.WithBias` around an RBF or polynomial kernel, 0
    otherwise (the linear and precomputed kernels carry the constant in their data)."""
    from refmodels.kernels import WithBias

    if isinstance(kernel, WithBias) and not (kernel.is_linear or kernel.is_precomputed):
        return float(kernel.bias)
    return 0.0


def dense_data(X):
    """``X`` as a dense C-contiguous float64 array (the input of :func:`kernel_row`)."""
    if sp.issparse(X):
        X = X.toarray()
    return np.ascontiguousarray(X, dtype=np.float64)


def kernel_data(kind, X):
    """The dense rows the kernel rows of kind ``kind`` are computed from (:func:`dense_data`).

    For the RBF kernel, ``2m`` rows: the ``m`` rows shifted by
    :func:`refmodels.kernels.centre` (what the expansion ``||x||^2 + ||z||^2 - 2 x^T z`` of
    :func:`kernel_row` is taken on: a large common offset cancels), then the ``m`` rows as
    given (what the entries the expansion cannot give exactly are summed from: the shift's
    rounding would cost them their precision next to a far row), as
    :func:`refmodels.kernels.sq_distances` does."""
    Xd = dense_data(X)
    if kind == RBF:
        with np.errstate(over="ignore", invalid="ignore"):
            Xd = np.ascontiguousarray(np.concatenate([Xd - centre(Xd), Xd]))
    return Xd


def sq_norms(X, m=None):
    """Squared norms of the first ``m`` rows (all by default): the ``sqnorms`` argument of
    :func:`kernel_row` (``m`` rows of :func:`kernel_data`'s ``2m`` for the RBF kernel)."""
    X = X if m is None else X[:m]
    with np.errstate(over="ignore", invalid="ignore"):
        return np.einsum("ij,ij->i", X, X)


_LOG2E = 1.4426950408889634
_LN2_HI = 6.93147180369123816490e-01     # ln 2 in two parts (Cody and Waite)
_LN2_LO = 1.90821492927058770002e-10


@njit(cache=True, no_cfunc_wrapper=True)
def exp_nonpositive(x, out, work):
    """``out = exp(x)`` for ``x <= 0``; ``x``, ``out`` and the float64 buffer ``work`` must be
    three different arrays of the same size (aliasing would keep LLVM from vectorising).

    Written so that LLVM vectorises it (numba's ``np.exp`` in a loop calls the scalar libm
    ``exp``, most of the cost of an RBF kernel row): ``x = k ln 2 + r`` with
    ``k = round(x / ln 2)`` and ``|r| <= ln(2)/2`` (``ln 2`` in two parts, exact
    ``k ln2_hi``), ``exp(r)`` by its Taylor polynomial of degree 14 (truncation below
    ``1e-17``), times ``2^k`` built from its bits. Relative error within 2.3e-16 of NumPy's
    ``exp`` (``tests/test_fast_smo.py``); ``x < -708`` (``exp(x) < 3.3e-308``) gives 0.
    """
    n = x.shape[0]
    for j in range(n):
        v = x[j]
        v = v if v > -708.0 else -708.0
        k = np.floor(v * _LOG2E + 0.5)
        r = (v - k * _LN2_HI) - k * _LN2_LO
        p = 1.0 + r * (1.0 + r * (1.0 / 2 + r * (1.0 / 6 + r * (1.0 / 24 + r * (
            1.0 / 120 + r * (1.0 / 720 + r * (1.0 / 5040 + r * (1.0 / 40320 + r * (
                1.0 / 362880 + r * (1.0 / 3628800 + r * (1.0 / 39916800 + r * (
                    1.0 / 479001600 + r * (1.0 / 6227020800 + r * (1.0 / 87178291200))))))))))))))
        work[j] = k + 1023.0
        out[j] = p if x[j] >= -708.0 else 0.0
    bits = work.view(np.int64)
    for j in range(n):
        bits[j] = np.int64(work[j]) << 52          # the bits of 2^k (k >= -1022)
    for j in range(n):
        out[j] *= work[j]


#: the expansion ``||x||^2 + ||z||^2 - 2 x^T z`` is kept only above this fraction of
#: ``||x||^2 + ||z||^2``, where its rounding is a few units of the result; elsewhere the
#: squared distance is summed from the differences of the raw rows (refmodels' threshold,
#: :data:`refmodels.kernels.RBF_EXPANSION_MIN`)
EXPANSION_MIN = RBF_EXPANSION_MIN


@njit(cache=True, no_cfunc_wrapper=True, fastmath={"reassoc", "contract"})
def sq_distance(X, i, j):
    """``||x_i - x_j||^2`` summed from the differences (0 for ``i == j``). The sum of the
    squares may be reordered (vectorised) and fused: any order of a sum of non-negative
    terms keeps the relative error within ``(d + 2) u`` (``u = 2^-53``); overflow still
    gives inf."""
    d = 0.0
    for k in range(X.shape[1]):
        e = X[i, k] - X[j, k]
        d += e * e
    return d


@njit(cache=True, no_cfunc_wrapper=True)
def kernel_row(kind, gamma, degree, coef0, X, sqnorms, i, out, bias=0.0):
    """``out[j] = k(x_i, x_j) + bias`` for every training row ``j`` (``X`` dense, C-contiguous:
    :func:`kernel_data`'s rows; for the RBF kernel its ``2m`` rows, or any ``m`` rows;
    ``bias``: :func:`row_bias`, never added to a precomputed row).

    RBF: ``||x_i - x_j||^2`` from the expansion over the first ``m`` rows where it exceeds
    :data:`EXPANSION_MIN` ``(||x_i||^2 + ||x_j||^2)`` (a few rounding units), else (and
    where it is NaN or overflowed) summed from the differences of the raw rows (the second
    ``m`` rows when given), as :func:`refmodels.kernels.sq_distances` does."""
    m = out.shape[0]
    if kind == 3:
        for j in range(m):
            out[j] = X[i, j]
        return
    if kind == 1:
        Xc = X[:m]
        np.dot(Xc, Xc[i], out)           # BLAS gemv: out[j] = x_i^T x_j (shifted rows)
        raw = m if X.shape[0] >= 2 * m else 0
        sqi = sqnorms[i]
        for j in range(m):
            sq = sqi + sqnorms[j] - 2.0 * out[j]
            if not sq > EXPANSION_MIN * (sqi + sqnorms[j]):
                sq = sq_distance(X, raw + i, raw + j)     # cancellation: the differences
            out[j] = -gamma * sq
        x = out.copy()
        exp_nonpositive(x, out, np.empty(m))
    else:
        np.dot(X, X[i], out)             # BLAS gemv: out[j] = x_i^T x_j
        if kind == 2:
            for j in range(m):
                base = gamma * out[j] + coef0
                v = 1.0
                for _ in range(degree):
                    v *= base
                out[j] = v
    if bias != 0.0:
        for j in range(m):
            out[j] += bias


#: the arrays of an LRU cache of kernel rows (:func:`make_cache`)
RowCache = namedtuple("RowCache", "slots slot_of owner last_used")


def make_cache(m, cache_size_mb):
    """Arrays of an LRU cache of kernel rows: a :data:`RowCache` ``(slots, slot_of, owner,
    last_used)``.

    ``slots`` has ``n_slots = max(2, min(m, cache_size_mb * 2**20 // (8 m)))`` rows of
    length ``m``; ``slot_of[i]`` is the slot holding row ``i`` (-1: not cached);
    ``owner[s]`` the row held by slot ``s`` (-1: empty); ``last_used[s]`` its last tick.
    """
    n_slots = int(max(2, min(m, int(cache_size_mb * 2**20) // (8 * m))))
    slots = np.empty((n_slots, m), dtype=np.float64)
    slot_of = np.full(m, -1, dtype=np.int64)
    owner = np.full(n_slots, -1, dtype=np.int64)
    last_used = np.zeros(n_slots, dtype=np.int64)
    return RowCache(slots, slot_of, owner, last_used)


@njit(cache=True, no_cfunc_wrapper=True)
def get_row(i, kind, gamma, degree, coef0, X, sqnorms, cache, tick, bias=0.0):
    """Row ``i`` of the kernel matrix (:func:`kernel_row`'s kernel and rows, plus ``bias``)
    through the LRU cache ``cache`` (a :data:`RowCache`; the row is a view of its slot).

    On a miss the least recently used slot (smallest ``last_used``; empty slots first)
    is evicted and the row computed into it. ``tick`` is the caller's clock (increase it
    at every call); the returned view stays valid until the slot is evicted.
    """
    slots, slot_of, owner, last_used = cache
    s = slot_of[i]
    if s < 0:
        best = 0
        for t in range(owner.shape[0]):
            if owner[t] < 0:
                best = t
                break
            if last_used[t] < last_used[best]:
                best = t
        s = best
        if owner[s] >= 0:
            slot_of[owner[s]] = -1
        owner[s] = i
        slot_of[i] = s
        kernel_row(kind, gamma, degree, coef0, X, sqnorms, i, slots[s], bias)
    last_used[s] = tick
    return slots[s]


def kernel_diag(kparams, X, sqnorms):
    """``k(x_i, x_i)`` from the kernel parameters, in O(m d) (never through the Gram);
    ``sqnorms`` are the squared norms of the ``m`` training rows (unused for PRECOMPUTED)."""
    kind, gamma, degree, coef0 = kparams
    if kind == PRECOMPUTED:
        return np.diag(X).astype(np.float64)
    if kind == RBF:
        return np.ones(sqnorms.shape[0])
    if kind == POLY:
        with np.errstate(over="ignore", invalid="ignore"):
            return (gamma * sqnorms + coef0) ** degree
    return np.asarray(sqnorms, dtype=np.float64)


def check_poly_rows(kernel, Xd, sqnorms):
    """Refuse (ValueError naming the kernel and the value) a polynomial kernel whose rows
    over ``Xd`` would overflow float64. ``|gamma x_i^T x_j + coef0| <= gamma max_i ||x_i||^2
    + coef0`` (Cauchy-Schwarz), equal on the diagonal: the largest diagonal base, with a
    margin for the rounding of the inner products, decides for every row at once."""
    kernel.diag(Xd)                     # a non-finite diagonal: refused with its entry
    if sqnorms.size == 0:
        return
    i = int(np.argmax(sqnorms))
    margin = 1.0 + 4.0 * (Xd.shape[1] + 2) * 2.0**-53
    base = (kernel.gamma * float(sqnorms[i]) + kernel.coef0) * margin
    with np.errstate(over="ignore"):
        top = np.float64(base) ** kernel.degree
    if not np.isfinite(top):
        raise ValueError(
            f"kernel={kernel!r} overflows float64 on X: the row of x_{i} reaches gamma x^T z "
            f"+ coef0 = {base:.3g} (within rounding), raised to degree {kernel.degree} beyond "
            f"{np.finfo(float).max:.3g}; scale the features or lower gamma or degree")


def kernel_matvec(kernel, X, c, kparams=None, chunk_mb=64.0):
    """``K c`` without forming ``K`` nor touching a cache: the kernel columns of the nonzeros
    of ``c``, ``chunk_mb`` MB at a time (``X`` dense)."""
    m = X.shape[0]
    nz = np.flatnonzero(c)
    out = np.zeros(m)
    if nz.size == 0:
        return out
    if kparams is not None and kparams[0] == PRECOMPUTED:
        return X[:, nz] @ c[nz]
    step = max(1, int(chunk_mb * 2**20 // (8 * m)))
    for s in range(0, nz.size, step):
        idx = nz[s:s + step]
        out += kernel.cross(X, X[idx]) @ c[idx]
    return out


def gram(kernel, X):
    """The full Gram matrix ``G`` (BLAS), symmetric, C-contiguous float64."""
    kind = kernel_params(kernel)[0]
    if kind == PRECOMPUTED:
        G = np.asarray(X, dtype=np.float64)
        return np.ascontiguousarray(0.5 * (G + G.T))
    return np.ascontiguousarray(kernel.gram(X), dtype=np.float64)


def _rbf_gram(X, sq, gamma):
    """The RBF Gram of the ``m = len(sq)`` points of :func:`kernel_data`'s rows ``X``
    (dense, C-contiguous; ``2m`` rows, shifted then raw, or any ``m`` rows; squared
    distances as in :func:`kernel_row`): row by row over the upper triangle (the inner
    products by BLAS gemv, the exponential vectorised by :func:`exp_nonpositive`), then
    mirrored tile by tile, so the result is exactly symmetric. Built in compiled chunks of
    bounded work (:func:`_rbf_gram_rows`, :func:`_mirror_tiles`; :mod:`fast._chunk`)."""
    from . import _chunk

    m = sq.shape[0]
    G = np.empty((m, m))
    i = 0
    while i < m:
        i = _rbf_gram_rows(X, sq, gamma, G, i, _chunk.budget())
    b = 0
    while b < m:
        b = _mirror_tiles(G, b, _chunk.budget())
    return G


#: work units (:mod:`fast._chunk`) of an entry of the Gram computed, besides its inner
#: product's ``d`` multiply-adds (the distance, the exponential), and of an entry mirrored
GRAM_ENTRY_COST = 15.0
MIRROR_ENTRY_COST = 2.0
_TILE = 64


@njit(cache=True, no_cfunc_wrapper=True)
def _rbf_gram_rows(X, sq, gamma, G, i0, budget):
    """Rows ``i0, i0 + 1, ...`` of :func:`_rbf_gram`'s upper triangle into ``G``, until about
    ``budget`` work units are spent; returns the next row (``m``: done)."""
    m = sq.shape[0]
    raw = m if X.shape[0] >= 2 * m else 0
    x = np.empty(m)
    out = np.empty(m)
    work = np.empty(m)
    spent = 0.0
    for i in range(i0, m):
        if spent >= budget:
            return i
        n = m - i
        np.dot(X[i:m], X[i], x[:n])                   # x_i^T x_j, j >= i
        sqi = sq[i]
        for t in range(n):
            d = sqi + sq[i + t] - 2.0 * x[t]
            if not d > EXPANSION_MIN * (sqi + sq[i + t]):
                d = sq_distance(X, raw + i, raw + i + t)   # cancellation: the differences
            x[t] = -gamma * d
        exp_nonpositive(x[:n], out[:n], work[:n])
        for t in range(n):
            G[i, i + t] = out[t]
        spent += n * (X.shape[1] + GRAM_ENTRY_COST)
    return m


@njit(cache=True, no_cfunc_wrapper=True)
def _mirror_tiles(G, b0, budget):
    """The lower triangle of ``G`` from its upper one, tile by tile (cache-friendly), for
    the tile rows from ``b0`` on, until about ``budget`` work units are spent; returns the
    next tile row (``m``: done)."""
    m = G.shape[0]
    B = _TILE
    spent = 0.0
    for bi in range(b0, m, B):
        if spent >= budget:
            return bi
        for bj in range(bi, m, B):
            for i in range(bi, min(bi + B, m)):
                for j in range(max(bj, i + 1), min(bj + B, m)):
                    G[j, i] = G[i, j]
        spent += MIRROR_ENTRY_COST * B * (m - bi)
    return m


def build_gram(prob):
    """The solvers' Gram of ``prob``. For the RBF kernel, built here (the upper triangle row
    by row, mirrored: :func:`_rbf_gram`, exactly symmetric, within a few ulps of
    :meth:`refmodels.kernels.Kernel.gram`, which symmetrises a full ``cross(X, X)`` in
    several passes over the m x m array) and kept in the workspace under its own name: the
    certificate never reads it, so that its numbers do not depend on which solver ran
    first. A bias feature (:class:`refmodels.kernels.WithBias`) adds its ``s^2``. Other
    kernels: ``prob.gram``."""
    from ._common import kept

    if kernel_params(prob.kernel)[0] != RBF:
        return prob.gram
    built = prob.gram_if_built
    if built is not None:
        return built

    def build():
        Xd = kernel_data(RBF, prob.X)
        G = _rbf_gram(Xd, sq_norms(Xd, prob.m), kernel_params(prob.kernel)[1])
        bias = row_bias(prob.kernel)
        if bias:
            G += bias                    # a bias feature: k + s^2
        return G
    return kept(prob, "solver_gram", build, on=prob.data_key)


def gram_if_built(prob):
    """The Gram of ``prob`` if the workspace of the call holds one (the reference's or the
    solvers'), else None (never builds)."""
    from ._common import peek

    built = prob.gram_if_built
    return built if built is not None else peek(prob, "solver_gram", on=prob.data_key)


def fits_in_memory(m, cache_size_mb):
    """Whether the full ``m x m`` float64 Gram fits in ``cache_size_mb`` megabytes."""
    return 8.0 * m * m <= cache_size_mb * 2**20


def _sparse_gram_fits(X, cache_size_mb):
    """Whether the row source of sparse rows ``X`` on the linear kernel holds the Gram: it
    fits the cache, or it is no larger than the dense copy of the rows the cache would
    compute from and fits in half the memory available."""
    from refmodels._numeric import _available_memory

    m, d = X.shape
    if fits_in_memory(m, cache_size_mb):
        return True
    avail = _available_memory()
    return m <= d and (avail is None or 8.0 * m * m <= 0.5 * avail)


# ---------------------------------------------------------------------------------------
# kernel rows for the dual solvers (SMO, DCD): a given Gram or an LRU cache of rows
# ---------------------------------------------------------------------------------------
#: slots of a solver's ``stats`` array that the row source counts in
ROW_REQ, ROW_MISS, ROW_CLOCK = 0, 1, 2

#: what the compiled solvers read (named, numba-compatible): a full Gram ``G`` (any dense
#: m x m matrix, e.g. ODML's Woodbury ``H``) when ``use_gram``, else the kernel parameters,
#: the dense data with its squared norms and the LRU cache (a :data:`RowCache`)
#: (``bias``: :func:`row_bias`, added to every computed row)
RowData = namedtuple("RowData", "use_gram G kind gamma degree coef0 X sqnorms cache bias")
_full_gram = gram
_Z2, _Z1, _ZI = np.zeros((1, 1)), np.zeros(1), np.zeros(1, dtype=np.int64)
_NO_CACHE = RowCache(_Z2, _ZI, _ZI, _ZI)
#: a RowData holding no rows (the placeholder argument of the DCD's linear path)
NO_ROWS = RowData(True, _Z2, 0, 0.0, 1, 0.0, _Z2, _Z1, _NO_CACHE, 0.0)


class RowSource:
    """Where the dual solvers get rows of ``K``: a given full Gram (``gram=``: any dense
    m x m matrix; also for a precomputed kernel), or rows of ``kernel`` over ``X`` computed
    on demand into an LRU cache of ``cache_size`` MB. The compiled solvers read
    :attr:`src` (a :data:`RowData`) through :func:`source_row`."""

    def __init__(self, kernel=None, X=None, cache_size=200.0, gram=None):
        if gram is not None:
            self.path = "gram"
            Gm = np.ascontiguousarray(gram, dtype=np.float64)
            self.m = Gm.shape[0]
        else:
            kind = kernel_params(kernel)[0]
            self.m = X.shape[0]
            if kind == PRECOMPUTED:
                self.path = "gram"
                Gm = _full_gram(kernel, X)
            elif kind == LINEAR and sp.issparse(X) and _sparse_gram_fits(X, cache_size):
                # sparse rows on the linear kernel: the Gram X X^T by the sparse product (the
                # rows the cache would compute, without a dense copy of the data)
                self.path = "gram"
                Gm = np.asarray((X @ X.T).toarray(), dtype=np.float64)
            else:
                if sp.issparse(X):
                    from refmodels._numeric import guard_bytes

                    guard_bytes(8.0 * X.shape[0] * X.shape[1], "the dense rows of the sparse "
                                "data that the kernel's row cache computes from",
                                "a cache_size holding the m x m Gram (on the linear kernel "
                                "it is then formed from the sparse rows), or on the linear "
                                "kernel fit_intercept=False (the dual coordinate descent "
                                "reads the sparse rows)")
                self.path = "cache"
        self.kernel = kernel
        if self.path == "gram":
            self.kparams = None
            self.diag = np.ascontiguousarray(np.diag(Gm), dtype=np.float64)
            self.src = RowData(True, Gm, 0, 0.0, 1, 0.0, _Z2, _Z1, _NO_CACHE, 0.0)
            self.n_slots = 0
        else:
            self.kparams = kernel_params(kernel)
            Xd = kernel_data(self.kparams[0], X)
            self.X_raw = Xd[self.m:] if Xd.shape[0] > self.m else Xd    # the rows as given
            sq = sq_norms(Xd, self.m)
            if self.kparams[0] == POLY:
                check_poly_rows(getattr(kernel, "kernel", kernel), self.X_raw, sq)   # WithBias
            cache = make_cache(self.m, cache_size)
            self.n_slots = cache.slots.shape[0]
            bias = row_bias(kernel)
            self.diag = np.ascontiguousarray(kernel_diag(self.kparams, Xd, sq) + bias)  # O(m d)
            self.src = RowData(False, _Z2, *self.kparams, Xd, sq, cache, bias)

    def block(self, pts):
        """``K[pts][:, pts]`` (point indices, repeats allowed), dense."""
        if self.path == "gram":
            return self.src.G[np.ix_(pts, pts)]
        return np.asarray(self.kernel.gram(self.X_raw[pts]), dtype=np.float64)

    def K_times(self, c):
        """``K c`` (used for objectives; Gram path only, else None)."""
        if self.path == "gram":
            return self.src.G @ c
        return None

    def matvec(self, c):
        """``K c`` exactly without the cache: the Gram's product, or kernel columns of the
        non-zeros of ``c`` in chunks (:func:`kernel_matvec`)."""
        if self.path == "gram":
            return self.src.G @ c
        return kernel_matvec(self.kernel, self.X_raw, c, self.kparams)

    def times(self, v):
        """``K v`` exactly, from kernel rows: the Gram, or the rows of the non-zeros of ``v``
        from the LRU cache (computed on a miss). After an SMO the support vectors' rows are
        mostly cached, so the self-check re-evaluates the returned point at the cost of an
        axpy per support vector instead of recomputing their kernel rows."""
        v = np.ascontiguousarray(v, dtype=np.float64)
        if self.path == "gram":
            return self.src.G @ v
        return _rows_times(v, self.src, np.zeros(8, dtype=np.int64))


def _rows_times(v, src, stats):
    """``sum_i v_i K[i, :]`` over the non-zeros of ``v`` (``K`` symmetric: ``K v``), in
    compiled chunks of bounded work (:func:`_rows_times_part`, :mod:`fast._chunk`)."""
    from . import _chunk

    out = np.zeros(v.shape[0])
    i = 0
    while i < v.shape[0]:
        i = _rows_times_part(v, src, stats, out, i, _chunk.budget())
    return out


#: work units (:mod:`fast._chunk`) of a kernel row computed on a cache miss, per point and
#: feature and per point (as :data:`fast._dcd_epochs.KERNEL_ROW_PER_FEATURE`)
_ROW_PER_FEATURE, _ROW_EXTRA = 2.0, 10.0


@njit(cache=True, no_cfunc_wrapper=True)
def _rows_times_part(v, src, stats, out, i0, budget):
    """:func:`_rows_times` from row ``i0`` on into ``out``, until about ``budget`` work units
    are spent; returns the next row (``len(v)``: done)."""
    m = v.shape[0]
    miss_cost = m * (_ROW_PER_FEATURE * src.X.shape[1] + _ROW_EXTRA)
    spent = 0.0
    for i in range(i0, m):
        if v[i] != 0.0:
            if spent >= budget:
                return i
            misses = stats[ROW_MISS]
            row = source_row(i, src, stats)
            for j in range(m):
                out[j] += v[i] * row[j]
            spent += m + (stats[ROW_MISS] - misses) * miss_cost
    return m


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def source_row(k, src, stats):
    """Row ``k`` of ``K`` from a :class:`RowSource`'s ``src``: the Gram's row, or the LRU
    cache (computing it on a miss); counts requests and misses in ``stats``."""
    return source_row_inline(k, src, stats)


@njit(cache=True, inline="always")
def source_row_inline(k, src, stats):
    """:func:`source_row` inlined into the caller (the DCD's cache-path epoch loop: one
    compiled function less on a cold start)."""
    use_gram, Gm, kind, gamma, degree, coef0, X, sq, cache, bias = src
    if use_gram:
        return Gm[k]
    stats[ROW_REQ] += 1
    if cache.slot_of[k] < 0:
        stats[ROW_MISS] += 1
    stats[ROW_CLOCK] += 1
    return get_row(k, kind, gamma, degree, coef0, X, sq, cache, stats[ROW_CLOCK], bias)


def row_source(prob, cache_size):
    """Kernel rows for the SMO on ``prob``: the Gram of a precomputed kernel (the data
    itself), else rows computed on demand into the LRU cache of ``cache_size`` MB (when the
    whole Gram fits, this is the Gram filled lazily: an SMO at a loose tolerance touches
    only a fraction of its rows; otherwise rows are evicted as in LIBSVM).

    The source is chosen by the problem alone, never by what a workspace holds: a Gram that
    an earlier call built (the reference's, the certificate's) rounds differently from the
    rows computed here, and taking it would make a second ``fast.solve`` of the same problem
    return another point than the first."""
    if kernel_params(prob.kernel)[0] == PRECOMPUTED:
        return RowSource(gram=prob.gram)
    return RowSource(prob.kernel, prob.X, cache_size)


#: ``"auto"`` without a ``cache_size`` takes the Gram up to this many MB (m = 16,384 points),
#: well above the row cache's default: the DCD visits every active point in random order
#: each epoch, so a cache holding part of the rows recomputes most of them every epoch
#: (LIBSVM's SMO, whose working sets stay on few rows, is another matter). A fixed budget,
#: not a share of the free memory, so that a call takes the same path, hence the same
#: rounding, on every run; only a Gram beyond half the memory available falls back to the
#: cache
AUTO_GRAM_MB = 2048.0


def auto_gram_fits(m, cache_size):
    """Whether ``"auto"`` takes the full Gram of ``m`` points: within ``cache_size`` MB
    when the caller gives one, else within :data:`AUTO_GRAM_MB` and half the memory
    available."""
    from refmodels._numeric import _available_memory

    if cache_size is not None:
        return fits_in_memory(m, cache_size)
    if not fits_in_memory(m, AUTO_GRAM_MB):
        return False
    avail = _available_memory()
    return avail is None or 8.0 * m * m <= 0.5 * avail


def choose_path(prob, path, cache_size=None, allowed=("gram", "cache", "linear")):
    """The one kernel-path chooser of the dual solvers: ``path`` checked against
    ``allowed``; ``"auto"`` gives ``linear`` for the linear kernel (when allowed), ``gram``
    for a precomputed kernel (the Gram is the data), when no bounded cache is allowed, or
    when the Gram fits (:func:`auto_gram_fits`), else ``cache``."""
    from ._common import check_path

    kernel = prob.kernel
    path = check_path(path, allowed)
    if path == "linear" and not kernel.is_linear:
        raise ValueError(f"path='linear' needs the linear kernel; got kernel={kernel!r}")
    if path == "cache" and kernel.is_precomputed:
        raise ValueError("path='cache' is not available for a precomputed kernel (the Gram "
                         "is the data); use path='gram'")
    if path != "auto":
        return path
    if kernel.is_linear and "linear" in allowed:
        return "linear"
    if kernel.is_precomputed or "cache" not in allowed or auto_gram_fits(prob.m, cache_size):
        return "gram"
    return "cache"
