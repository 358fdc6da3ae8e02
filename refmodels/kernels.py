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

from ._validation import check_X, positive

#: an RBF squared distance ``||x||^2 + ||z||^2 - 2 x^T z`` at most this fraction of
#: ``||x||^2 + ||z||^2`` is rounding (a point and itself, a near duplicate): both layers then
#: sum it from the differences (``fast._kernels`` reads this constant), so k(x, x) = 1 exactly
RBF_EXACT_BELOW = 1e-8

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
        if sp.issparse(X):
            return np.asarray(X.multiply(X).sum(axis=1)).ravel()
        return np.einsum("ij,ij->i", X, X)


class RBF(Kernel):
    """``k(x, z) = exp(-gamma ||x - z||^2)``, ``gamma > 0``."""

    name = "rbf"

    def __init__(self, gamma=1.0):
        self.gamma = positive(gamma, "gamma")

    def params(self):
        return {"gamma": self.gamma}

    def cross(self, X, Z):
        same = Z is X                                  # the Gram: its diagonal is exactly 1
        X, Z = _dense(X), _dense(Z)
        # The kernel is translation-invariant: centre both sides on X's mean first. The
        # expansion below loses about eps * ||x||^2 to cancellation, so a large common
        # offset (raw features near 1e6) would otherwise put errors of 1e-4 into entries
        # near 1; centred, the loss is eps * (spread)^2.
        mu = X.mean(axis=0)
        X, Z = X - mu, Z - mu
        # ||x - z||^2 = ||x||^2 + ||z||^2 - 2 x^T z, in place in one m x n buffer
        K = X @ Z.T
        K *= -2.0
        nx, nz = np.einsum("ij,ij->i", X, X), np.einsum("ij,ij->i", Z, Z)
        K += nx[:, None]
        K += nz[None, :]
        # a point and itself (or a near duplicate): the expansion leaves about
        # eps (||x||^2 + ||z||^2) where ||x - z||^2 is smaller (features ~70: the diagonal
        # 1 - 6.6e-12, which a hinge weighted by C = 2^20 turns into a duality gap of 1e-6);
        # those entries from the differences, as fast's kernel rows (fast/_kernels.py) do
        # (screened against the largest threshold first: no m x n temporaries of floats, and
        # positions only where some entry qualifies; a Gram's diagonal is set directly)
        if same:
            np.fill_diagonal(K, 0.0)
        near = K <= (RBF_EXACT_BELOW * (float(nx.max()) + float(nz.max())) if K.size else 0.0)
        if same:
            np.fill_diagonal(near, False)
        if near.any():
            i, j = np.nonzero(near)
            keep = K[i, j] <= RBF_EXACT_BELOW * (nx[i] + nz[j])
            i, j = i[keep], j[keep]
            diff = X[i] - Z[j]
            K[i, j] = np.einsum("ij,ij->i", diff, diff)
        np.maximum(K, 0.0, out=K)
        K *= -self.gamma
        np.exp(K, out=K)
        return K

    def diag(self, X):
        return np.ones(X.shape[0])


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
        return base ** self.degree


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
    """The primal feature matrix: ``X`` for the linear kernel, the empirical map of ``G`` otherwise."""
    if kernel.is_linear:
        return _dense(X)
    return empirical_map(kernel.gram(X))
