"""The rows of the data matrix for the numba loops of the linear solvers (the DCD's linear
path, SGD, TRON): dense (mode 0) or CSR (mode 1) rows, their squared norms, and the one row
product and row update.

Kept apart from :mod:`fast._common` (pure-Python argument checks, no numba) because the row
kernels are compiled code that the solvers inline into their loops.
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np
import scipy.sparse as sp
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

#: how many points ahead of the current one the epochs of the coordinate descents ask for
#: a row (:func:`row_prefetch`, :func:`dense_row_prefetch`): their random order reads each
#: row from memory with no stream for the hardware's prefetcher to follow (the measured
#: cost and the choice of 8: validation/decisions.md)
PREFETCH_AHEAD = 8


#: the rows of a data matrix as the numba loops read them (:func:`row_arrays`): ``mode`` 0
#: dense (``Xd``, C-contiguous float64) or 1 CSR (``indptr``, ``indices``, ``data``: int64,
#: int32, float64); the form the mode does not use holds placeholders
Rows = namedtuple("Rows", "mode Xd indptr indices data")


def row_arrays(X):
    """The rows of ``X`` for the numba loops of the linear solvers (DCD, SGD, TRON):
    ``(mode, X, Xd, indptr, indices, data)``. Dense ``X`` (mode 0): ``X = Xd`` C-contiguous
    float64, the CSR arrays length-1 placeholders. Sparse ``X`` (mode 1): ``X`` as float64
    CSR, its arrays (``indptr`` as int64, ``indices`` int32, ``data``: the matrix's own, not
    copies), ``Xd`` a 1 x 1 placeholder. The column indices are used in the order given:
    the loops only take dot products with rows and add rows, which need no order, and
    sorting them would write the caller's arrays (a problem's data) or copy them (as large
    as the data: a product such as ``diags @ X`` leaves them unsorted)."""
    if sp.issparse(X):
        X = sp.csr_matrix(X, dtype=np.float64)
        # the arrays themselves, not copies (at rcv1's shape each copy is 0.14-0.28 GB):
        # the data are float64 already and the column indices int32 (SciPy's type below
        # 2^31 columns; other integer types are converted to it), so that the compiled
        # loops see one type for dense and sparse rows; only indptr (m + 1 entries) is int64
        indices = X.indices if X.indices.dtype == np.int32 or X.shape[1] >= 2**31 \
            else X.indices.astype(np.int32)
        return (1, X, np.zeros((1, 1)), X.indptr.astype(np.int64), indices, X.data)
    Xd = np.ascontiguousarray(X, dtype=np.float64)
    return 0, Xd, Xd, np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int32), np.zeros(1)


def rows_of(X):
    """``(X, Rows)``: :func:`row_arrays`'s ``X`` and its rows as a :data:`Rows`."""
    mode, X, Xd, indptr, indices, data = row_arrays(X)
    return X, Rows(mode, Xd, indptr, indices, data)


def row_sqnorms(X):
    """``||x_i||^2`` for every row of ``X`` (dense or sparse), in O(nnz); on CSR rows in one
    pass over the stored entries, without the temporary matrix of their squares (as large
    as the data). A CSR matrix need not be canonical: a row that stores a column twice
    (built from triplets, never summed) has the norm of its summed entries, as SciPy's
    products and ``toarray`` read it; SciPy's check of the canonical format stops at the
    first unsorted row, so a product such as ``diags @ X`` (unsorted rows) goes to the pass
    that marks each row's columns."""
    if sp.issparse(X):
        if X.format != "csr":
            return np.asarray(X.multiply(X).sum(axis=1), dtype=np.float64).ravel()
        m, d = X.shape
        out = np.empty(m)
        data = X.data.astype(np.float64, copy=False)
        if X.has_canonical_format:
            _csr_sqnorms(X.indptr, data, out)
        else:
            mark = np.full(d, -1, dtype=np.int32 if m < 2**31 - 1 else np.int64)
            _csr_sqnorms_summed(X.indptr, X.indices, data, mark, out)
        return out
    return np.einsum("ij,ij->i", X, X)


@njit(cache=True)
def _csr_sqnorms(indptr, data, out):
    """``out[i] = sum of data[k]^2`` over the stored entries of row ``i``, in their order."""
    for i in range(out.shape[0]):
        acc = 0.0
        for k in range(indptr[i], indptr[i + 1]):
            acc += data[k] * data[k]
        out[i] = acc


@njit(cache=True)
def _csr_sqnorms_summed(indptr, indices, data, mark, out):
    """:func:`_csr_sqnorms` where a row may store a column more than once: ``mark[j]`` holds
    the last row that stored column ``j`` (all ``-1`` on entry); a row that meets one of its
    own columns again sums its entries per column in a scratch vector, then squares the
    sums."""
    acc = np.zeros(0)
    for i in range(out.shape[0]):
        s = 0.0
        repeated = False
        for k in range(indptr[i], indptr[i + 1]):
            j = indices[k]
            if mark[j] == i:
                repeated = True
            mark[j] = i
            s += data[k] * data[k]
        if repeated:
            if acc.shape[0] == 0:
                acc = np.zeros(mark.shape[0])
            for k in range(indptr[i], indptr[i + 1]):
                acc[indices[k]] += data[k]
            s = 0.0
            for k in range(indptr[i], indptr[i + 1]):
                j = indices[k]
                s += acc[j] * acc[j]          # a repeated column's second visit adds 0
                acc[j] = 0.0
        out[i] = s


@njit(cache=True, inline="always")
def row_dot(mode, i, Xd, indptr, indices, data, w):
    """``x_i^T w`` for row ``i`` of dense (mode 0) or CSR (mode 1) rows (the one row product
    of the linear solvers: SGD, TRON, the DCD's linear path)."""
    acc = 0.0
    if mode == 0:
        for t in range(Xd.shape[1]):
            acc += Xd[i, t] * w[t]
    else:
        for k in range(indptr[i], indptr[i + 1]):
            acc += data[k] * w[indices[k]]
    return acc


@njit(cache=True, inline="always")
def row_axpy(mode, i, c, Xd, indptr, indices, data, out):
    """``out += c x_i`` for row ``i`` of dense (mode 0) or CSR (mode 1) rows."""
    if mode == 0:
        for t in range(Xd.shape[1]):
            out[t] += c * Xd[i, t]
    else:
        for k in range(indptr[i], indptr[i + 1]):
            out[indices[k]] += c * data[k]


def _emit_prefetch(builder, ptr):
    """LLVM's ``prefetch`` of the address ``ptr``: for a read, locality 3 (keep in all
    cache levels), data cache."""
    i8p = ir.PointerType(ir.IntType(8))
    i32 = ir.IntType(32)
    fn = cgutils.get_or_insert_function(
        builder.module, ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]), "llvm.prefetch")
    builder.call(fn, [builder.bitcast(ptr, i8p), ir.Constant(i32, 0), ir.Constant(i32, 3),
                      ir.Constant(i32, 1)])


@intrinsic
def prefetch(typingctx, arr, idx):
    """A hint that ``arr[idx]`` (1-D array) will be read soon: LLVM's ``prefetch`` (for a
    read, into all cache levels). It never faults, whatever the index: an address past the
    array is only a wasted hint. (The unmangled name is upgraded by LLVM to its pointer
    type's, on the typed and the opaque pointers of llvmlite's versions alike.)"""
    if not isinstance(arr, types.Array) or arr.ndim != 1 or not isinstance(idx, types.Integer):
        return None

    def codegen(context, builder, signature, args):
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [args[1]],
                                       wraparound=False)
        _emit_prefetch(builder, ptr)
        return context.get_dummy_value()

    return types.void(arr, idx), codegen


@intrinsic
def prefetch_row_entry(typingctx, arr, i, j):
    """:func:`prefetch` of ``arr[i, j]`` for a 2-D array (a dense row's cache line)."""
    if not isinstance(arr, types.Array) or arr.ndim != 2 or not (
            isinstance(i, types.Integer) and isinstance(j, types.Integer)):
        return None

    def codegen(context, builder, signature, args):
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, aryty, ary, [args[1], args[2]],
                                       wraparound=False)
        _emit_prefetch(builder, ptr)
        return context.get_dummy_value()

    return types.void(arr, i, j), codegen


@njit(cache=True, inline="always")
def dense_row_prefetch(i, Xd):
    """Ask for dense row ``i`` (a hint per cache line of 8 values) ahead of its product."""
    for t in range(0, Xd.shape[1], 8):
        prefetch_row_entry(Xd, i, t)


@njit(cache=True, inline="always")
def row_prefetch(i, indptr, indices, data):
    """Ask for CSR row ``i``'s stored values and column indices (a hint per cache line of
    64 bytes: 8 values, 16 indices) ahead of its :func:`row_dot` in a random order. Dense
    rows: :func:`dense_row_prefetch`."""
    s0 = indptr[i]
    s1 = indptr[i + 1]
    for k in range(s0, s1, 8):
        prefetch(data, k)
    for k in range(s0, s1, 16):
        prefetch(indices, k)


@njit(cache=True)
def sift_down(h, i, n):
    """Move ``h[i]`` down the max-heap ``h[:n]`` to its place (a parent is never smaller than
    its children ``2i+1``, ``2i+2``). The prox's l-inf level and mcODM's sorted root take
    values in decreasing order from such a heap: the order of a sort, only as far as they
    need it, and without compiling numba's quicksort (a noticeable part of a first run)."""
    v = h[i]
    while True:
        c = 2 * i + 1
        if c >= n:
            break
        if c + 1 < n and h[c + 1] > h[c]:
            c += 1
        if not h[c] > v:
            break
        h[i] = h[c]
        i = c
    h[i] = v
