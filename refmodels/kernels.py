"""Kernels, Gram matrices and the empirical kernel map (SPEC, notation section).

A kernel object is a small immutable description; ``gram(X)`` and
``cross(X, Z)`` evaluate it. ``cross(X, Z)[i, j] = k(x_i, z_j)``.

For :class:`Precomputed`, the training "data" *is* the Gram matrix ``G`` (m x m,
symmetric) and new data is given as ``K(X_new, X_train)`` of shape
(n_new, m), as in scikit-learn's ``SVC(kernel="precomputed")``.
"""
from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp
from scipy.spatial.distance import cdist

from ._validation import check_X, positive

#: an RBF squared distance from the expansion ``||x||^2 + ||z||^2 - 2 x^T z`` (of the
#: shifted rows, see :func:`sq_distances`) is kept only where it exceeds this fraction of
#: ``||x||^2 + ||z||^2``: its rounding, at most about ``(2d + 4) u (||x||^2 + ||z||^2)``
#: (``u = 2^-53``), is then at most ``(4d + 8) u`` of it, a small multiple of the rounding
#: of the differences themselves (``(d + 2) u``). Every other entry (a point and itself,
#: near duplicates, points far from the centre and near each other, an overflowed norm) is
#: summed from the differences of the raw rows. ``fast._kernels`` reads this constant.
RBF_EXPANSION_MIN = 0.5

#: entries per block of :func:`sq_distances` (bounds its temporaries: a few MB)
_BLOCK = 1 << 18

#: eigenvalues below ``EIG_CUTOFF * lambda_max`` are dropped from the empirical map (SPEC).
EIG_CUTOFF = 1e-12


class Kernel:
    """Base class. Subclasses implement :meth:`cross`."""

    name = "kernel"
    is_linear = False
    is_precomputed = False

    def gram(self, X):
        """Gram matrix ``G_ij = k(x_i, x_j)`` (symmetrised to machine precision)."""
        G = self.cross(X, X)
        return 0.5 * (G + G.T)

    def cross(self, X, Z):  # pragma: no cover - abstract
        raise NotImplementedError

    def diag(self, X):
        """``k(x_i, x_i)`` for every row."""
        return np.einsum("ii->i", self.gram(X)).copy()

    def params(self):
        return {}

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.params().items())
        return f"{type(self).__name__}({args})"

    def __eq__(self, other):
        return type(self) is type(other) and self.params() == other.params()

    def __hash__(self):
        return hash((type(self).__name__, tuple(sorted(self.params().items()))))


def _dense(X):
    return X.toarray() if sp.issparse(X) else X


class Linear(Kernel):
    """``k(x, z) = x^T z``; the empirical map is ``F = X`` itself."""

    name = "linear"
    is_linear = True

    def cross(self, X, Z):
        out = X @ Z.T
        return np.asarray(out.toarray() if sp.issparse(out) else out, dtype=np.float64)

    def diag(self, X):
        if sp.issparse(X) and X.format == "csr":
            return _csr_row_sqnorms(X)
        if sp.issparse(X):
            return np.asarray(X.multiply(X).sum(axis=1)).ravel()
        return np.einsum("ij,ij->i", X, X)


#: :func:`_csr_row_sqnorms` reads the rows in blocks of about this many stored entries
SQNORM_BLOCK = 2**20


def _csr_row_sqnorms(X):
    """``||x_i||^2`` of CSR rows from their stored entries, a block of rows at a time (about
    :data:`SQNORM_BLOCK` entries), so that the squares, and for a non-canonical block (rows
    unsorted, as ``diags @ X`` leaves them, or a column stored twice) its canonical copy
    (SciPy sorts and sums each row in C), take the memory of a block, not of the data (at
    rcv1's shape a copy is 0.42 GB, ``X.multiply(X)`` as much). The caller's matrix is not
    changed."""
    m = X.shape[0]
    out = np.zeros(m)
    canonical = X.has_canonical_format
    step = max(1, int(SQNORM_BLOCK * m / max(X.nnz, 1)))
    for i0 in range(0, m, step):
        if canonical:                             # (views of the block's entries)
            ptr = X.indptr[i0:i0 + step + 1]
            data, ptr = X.data[ptr[0]:ptr[-1]], ptr - ptr[0]
        else:
            B = X[i0:i0 + step]                   # (a copy of the block's arrays)
            B.sum_duplicates()
            data, ptr = B.data, B.indptr
        rows = np.flatnonzero(np.diff(ptr))
        if rows.size:
            out[i0 + rows] = np.add.reduceat(np.square(data, dtype=np.float64), ptr[rows])
    return out


class RBF(Kernel):
    """``k(x, z) = exp(-gamma ||x - z||^2)``, ``gamma > 0``."""

    name = "rbf"

    def __init__(self, gamma=1.0):
        self.gamma = positive(gamma, "gamma")

    def params(self):
        return {"gamma": self.gamma}

    def cross(self, X, Z):
        K = sq_distances(_dense(X), _dense(Z))
        K *= -self.gamma
        np.exp(K, out=K)
        return K

    def gram(self, X):
        """The Gram from the upper triangle of :func:`sq_distances`' blocks, mirrored: exactly
        symmetric, its diagonal exactly 1, half the work of ``cross(X, X)``."""
        X = np.asarray(_dense(X), dtype=np.float64)
        m = X.shape[0]
        G = np.empty((m, m))
        for s, e, B in _distance_blocks(X, X, upper=True):
            B *= -self.gamma
            np.exp(B, out=B)
            w = e - s
            B[:, :w] += B[:, :w].T            # the diagonal block, symmetrised
            B[:, :w] *= 0.5
            G[s:e, s:] = B
            G[e:, s:e] = B[:, w:].T
        return G

    def diag(self, X):
        return np.ones(X.shape[0])


def centre(X):
    """The column-wise lower median of ``X``: an entry of each column (finite, no rounding),
    robust to far rows (fewer than half), the shift of :func:`sq_distances`."""
    m = X.shape[0]
    if m == 0:
        return np.zeros(X.shape[1])
    k = (m - 1) // 2
    return np.partition(X, k, axis=0)[k]


def sq_distances(X, Z):
    """``D[i, j] = ||x_i - z_j||^2`` for dense ``X`` (m x d) and ``Z`` (n x d), each entry
    within a small multiple of the rounding of the differences ``sum_k (x_ik - z_jk)^2``
    (relative error at most about ``(4d + 12) u``, ``u = 2^-53``, against ``(d + 2) u`` for
    the differences), at any scale: far rows, large common offsets and values whose squares
    overflow included (an overflowed distance is inf).

    The expansion ``||x||^2 + ||z||^2 - 2 x^T z`` (a matrix product, fast) loses about
    ``u (||x||^2 + ||z||^2)`` to cancellation, so it is taken on the rows shifted by
    :func:`centre` (a large common offset cancels), and kept only where the result exceeds
    ``RBF_EXPANSION_MIN (||x||^2 + ||z||^2)``, where that loss is a few rounding units of the
    result; the shift's own rounding is then as small (``u (||x|| + ||z||)`` against
    ``||x - z||``). Every other entry, including NaN or overflowed ones, is summed from the
    differences of the unshifted rows, which lose nothing to cancellation. The work goes
    by blocks of rows; a block where many entries need the differences takes them all from
    SciPy's ``cdist(..., "sqeuclidean")`` (differences too), and so do the blocks after it
    (data whose distances are of the order of their norms, such as standardised features of
    few dimensions, need the differences nearly everywhere: the expansion would be wasted).
    """
    X = np.asarray(X, dtype=np.float64)
    Z = np.asarray(Z, dtype=np.float64)
    D = np.empty((X.shape[0], Z.shape[0]))
    for s, e, B in _distance_blocks(X, Z):
        D[s:e] = B
    return D


def _distance_blocks(X, Z, upper=False):
    """``(s, e, B)`` with ``B = D[s:e, s:]`` (``upper``, for ``Z is X``) or ``D[s:e, :]``, the
    squared distances of :func:`sq_distances`, block after block of rows (a few MB each)."""
    m, n = X.shape[0], Z.shape[0]
    if m == 0 or n == 0:
        return
    with np.errstate(over="ignore", invalid="ignore"):
        c = centre(X)
        Xc = X - c
        Zc = Xc if Z is X else Z - c
        nx = np.einsum("ij,ij->i", Xc, Xc)
        nz = nx if Z is X else np.einsum("ij,ij->i", Zc, Zc)
        step = max(1, _BLOCK // n)
        differences = False       # a block has needed them for most entries: all by cdist
        for s in range(0, m, step):
            e = min(m, s + step)
            c0 = s if upper else 0
            if differences:
                yield s, e, cdist(X[s:e], Z[c0:], "sqeuclidean")
                continue
            B = Xc[s:e] @ Zc[c0:].T
            B *= -2.0
            B += nx[s:e, None]
            B += nz[None, c0:]
            lim = nx[s:e, None] + nz[None, c0:]
            lim *= RBF_EXPANSION_MIN
            redo = ~(B > lim)                     # cancellation, NaN (inf - inf) or inf
            count = int(np.count_nonzero(redo))
            if 8 * count > B.size:               # much of the block: all of it, by cdist
                B = cdist(X[s:e], Z[c0:], "sqeuclidean")
                differences = True
            elif count:                           # a few entries: their differences
                i, j = np.nonzero(redo)
                chunk = max(1, _BLOCK // X.shape[1])
                for t in range(0, i.size, chunk):
                    it, jt = i[t:t + chunk], j[t:t + chunk]
                    diff = X[s + it] - Z[c0 + jt]
                    B[it, jt] = np.einsum("ij,ij->i", diff, diff)
            yield s, e, B


class Polynomial(Kernel):
    """``k(x, z) = (gamma x^T z + coef0)^degree``, integer ``degree >= 1``, ``gamma > 0``, ``coef0 >= 0``.

    ``coef0 >= 0`` keeps the kernel positive semidefinite for every degree.
    """

    name = "poly"

    def __init__(self, degree=3, gamma=1.0, coef0=1.0):
        if isinstance(degree, bool) or not isinstance(degree, numbers.Integral) or degree < 1:
            raise ValueError(f"degree must be an integer >= 1; got {degree!r}")
        self.degree = int(degree)
        self.gamma = positive(gamma, "gamma")
        if not isinstance(coef0, numbers.Real) or isinstance(coef0, bool) or not np.isfinite(coef0) \
                or coef0 < 0:
            raise ValueError(f"coef0 must be a finite number >= 0 (PSD kernel); got {coef0!r}")
        self.coef0 = float(coef0)

    def params(self):
        return {"degree": self.degree, "gamma": self.gamma, "coef0": self.coef0}

    def cross(self, X, Z):
        base = self.gamma * np.asarray(_dense(X) @ _dense(Z).T) + self.coef0
        with np.errstate(over="ignore", invalid="ignore"):
            K = base ** self.degree
        if not np.all(np.isfinite(K)):
            self._refuse(base, K, "in the Gram of X" if Z is X else "between rows of X and Z")
        return K

    def diag(self, X):
        """``(gamma ||x_i||^2 + coef0)^degree``, in O(m d) (not through the Gram)."""
        sq = Linear().diag(X)
        with np.errstate(over="ignore", invalid="ignore"):
            base = self.gamma * sq + self.coef0
            K = base ** self.degree
        if not np.all(np.isfinite(K)):
            self._refuse(base, K, "at a point and itself")
        return K

    def _refuse(self, base, K, where):
        """The ValueError for kernel values that are not finite float64 numbers (overflow),
        naming the kernel, the first such entry and its ``gamma x^T z + coef0``."""
        at = int(np.flatnonzero(~np.isfinite(np.ravel(K)))[0])
        pos = tuple(int(p) for p in np.unravel_index(at, np.shape(K)))
        raise ValueError(
            f"kernel={self!r} overflows float64 {where}: at entry {pos}, gamma x^T z + coef0 "
            f"= {float(np.ravel(base)[at]):.3g} raised to degree {self.degree} is "
            f"{float(np.ravel(K)[at])}; scale the features or lower gamma or degree")


class Precomputed(Kernel):
    """The training input is the Gram matrix itself; new data is ``K(X_new, X_train)``."""

    name = "precomputed"
    is_precomputed = True

    def gram(self, X):
        return 0.5 * (X + X.T)

    def cross(self, X, Z):
        # X is the training Gram (unused); Z is K(Z, X_train) of shape (n_new, m).
        return np.asarray(Z, dtype=np.float64).T

    def diag(self, X):
        return np.diag(X).copy()


class WithBias(Kernel):
    """The kernel of the feature map ``[phi(x); s]``: ``k(x, z) + s^2`` (a constant feature of
    value ``s = scaling``, regularized like the others: LIBLINEAR's ``-B s`` and LIBODM's
    ``-b``). A problem built with ``fit_intercept=True`` states its feature map with it.

    Its methods take data mapped by :meth:`map_data`, which is how the problem stores them:

    * ``WithBias(Linear(), s)``: the feature map is explicit, so the constant is a column of
      the data (``map_data`` appends it) and the linear solvers see it as one more feature;
      ``cross``, ``gram`` and ``diag`` are the linear kernel's on those data.
    * ``WithBias(Precomputed(), s)``: the Gram and ``K(X_new, X_train)`` carry it
      (``map_data`` adds ``s^2``); the methods are :class:`Precomputed`'s.
    * any other kernel: ``map_data`` is the identity and ``cross``, ``gram`` and ``diag`` add
      ``s^2`` to the kernel's.

    In each case ``cross(map_data(X), map_data(Z)) = k(X, Z) + s^2``.
    """

    def __init__(self, kernel, scaling=1.0):
        if not isinstance(kernel, Kernel):
            raise ValueError(f"kernel must be a refmodels.kernels.Kernel object; got "
                             f"{type(kernel).__name__}")
        if isinstance(kernel, WithBias):
            raise ValueError(f"kernel must not itself carry a bias feature; got {kernel!r}")
        self.kernel = kernel
        self.scaling = positive(scaling, "scaling")
        self.is_linear = kernel.is_linear
        self.is_precomputed = kernel.is_precomputed
        self.name = f"{kernel.name}+bias"

    @property
    def bias(self):
        """``s^2``, what the constant feature adds to every kernel value."""
        return self.scaling * self.scaling

    def params(self):
        return {"kernel": self.kernel, "scaling": self.scaling}

    def map_data(self, X):
        """The data as this kernel's methods take them: ``X`` with a last column ``s`` (linear
        kernel; CSR stays CSR), ``X + s^2`` (precomputed kernel values), else ``X``."""
        if self.is_linear:
            col = np.full((X.shape[0], 1), self.scaling)
            if sp.issparse(X):
                return sp.hstack([sp.csr_matrix(X, dtype=np.float64), sp.csr_matrix(col)],
                                 format="csr")
            return np.hstack([np.asarray(X, dtype=np.float64), col])
        if self.is_precomputed:
            return np.asarray(X, dtype=np.float64) + self.bias
        return X

    def carries_bias(self, X):
        """Whether ``X`` is mapped data of this kernel as far as the data can tell: for the
        linear kernel, a last column equal to ``s`` everywhere (always True otherwise)."""
        if not self.is_linear:
            return True
        last = X[:, -1]
        last = last.toarray().ravel() if sp.issparse(last) else np.asarray(last).ravel()
        return bool(np.all(last == self.scaling))

    def _added(self):
        return 0.0 if (self.is_linear or self.is_precomputed) else self.bias

    def cross(self, X, Z):
        return self.kernel.cross(X, Z) + self._added()

    def gram(self, X):
        return self.kernel.gram(X) + self._added()

    def diag(self, X):
        return self.kernel.diag(X) + self._added()


def make_kernel(kernel=None, **params):
    """A kernel object from an object or a name (``"linear"``, ``"rbf"``, ``"poly"``, ``"precomputed"``)."""
    if kernel is None:
        return Linear()
    if isinstance(kernel, Kernel):
        if params:
            raise ValueError("kernel parameters must not be given with a kernel object")
        return kernel
    if isinstance(kernel, str):
        table = {"linear": Linear, "rbf": RBF, "poly": Polynomial, "polynomial": Polynomial,
                 "precomputed": Precomputed}
        if kernel not in table:
            raise ValueError(f"kernel must be one of {sorted(table)} or a Kernel object; got {kernel!r}")
        return table[kernel](**params)
    raise ValueError(f"kernel must be a Kernel object or a name; got {type(kernel).__name__}")


def check_precomputed_gram(G, name="X", psd=True):
    """Validate a precomputed Gram matrix: square, finite, symmetric, and (if ``psd``) PSD."""
    G = check_X(G, name)
    if G.shape[0] != G.shape[1]:
        raise ValueError(f"{name} must be a square Gram matrix for kernel=Precomputed(); got shape {G.shape}")
    scale = max(1.0, float(np.max(np.abs(G))))
    if np.max(np.abs(G - G.T)) > 1e-10 * scale:
        raise ValueError(f"{name} must be a symmetric Gram matrix for kernel=Precomputed()")
    if psd:
        lam_min = np.linalg.eigvalsh(0.5 * (G + G.T))[0]
        if lam_min < -1e-8 * scale:
            raise ValueError(
                f"{name} must be positive semidefinite (a Gram matrix); smallest eigenvalue {lam_min:.3g}")
    return G


def empirical_map(G, cutoff=EIG_CUTOFF):
    """``F`` with ``F F^T = G`` from the symmetric eigendecomposition (SPEC, notation).

    Eigenvalues below ``cutoff * lambda_max`` are dropped, so ``F`` has ``r <= m``
    columns. A zero Gram matrix gives a single zero column.
    """
    lam, V = np.linalg.eigh(0.5 * (G + G.T))
    lam_max = lam[-1] if lam.size else 0.0
    if lam_max <= 0:
        return np.zeros((G.shape[0], 1))
    keep = lam > cutoff * lam_max
    return V[:, keep] * np.sqrt(lam[keep])


def feature_matrix(kernel, X):
    """The primal feature matrix: ``X`` for the linear kernel (sparse stays sparse: a
    500,000 x 50,000 CSR set would need 186 GiB dense), the empirical map of ``G`` otherwise."""
    if kernel.is_linear:
        return X
    return empirical_map(kernel.gram(X))
