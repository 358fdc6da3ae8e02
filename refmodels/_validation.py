"""Input validation at the package boundary.

Every check raises :class:`ValueError` whose message names the argument and the
rule it breaks, so that bad input never reaches CVXPY, NumPy or numba.
"""
from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp


def _refuse_complex(a, name):
    """Complex input is refused (NumPy would silently keep the real part)."""
    if np.iscomplexobj(a) or (isinstance(a, (list, tuple)) and any(
            isinstance(v, complex) or np.iscomplexobj(v) for v in np.ravel(np.asarray(a, object)))):
        raise ValueError(f"{name} must be real; got complex values (their imaginary part "
                         "would be discarded)")


def check_X(X, name="X", allow_sparse=False):
    """Return X as a 2-D float array (or CSR matrix); reject empty, non-finite, complex,
    wrong rank."""
    if sp.issparse(X):
        _refuse_complex(X.data, name)
        if not allow_sparse:
            X = X.toarray()
        else:
            X = sp.csr_matrix(X, dtype=np.float64)
            if X.shape[0] == 0 or X.shape[1] == 0:
                raise ValueError(f"{name} must be non-empty; got shape {X.shape}")
            if not np.all(np.isfinite(X.data)):
                raise ValueError(f"{name} must contain only finite values (no NaN or inf)")
            return X
    _refuse_complex(X, name)
    try:
        X = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a numeric 2-D array: {exc}") from None
    if X.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_samples, n_features); got {X.ndim}-D")
    if X.shape[0] == 0 or X.shape[1] == 0:
        raise ValueError(f"{name} must be non-empty; got shape {X.shape}")
    if not np.all(np.isfinite(X)):
        raise ValueError(f"{name} must contain only finite values (no NaN or inf)")
    return X


def check_labels(y, m, name="y"):
    y = np.asarray(y)
    if y.ndim == 2 and 1 in y.shape:
        y = y.ravel()
    if y.ndim != 1:
        raise ValueError(f"{name} must be 1-D; got shape {y.shape}")
    if y.shape[0] != m:
        raise ValueError(f"{name} must have one label per row of X ({m}); got {y.shape[0]}")
    if y.dtype.kind == "f" and not np.all(np.isfinite(y)):
        raise ValueError(f"{name} must not contain NaN or inf")
    return y


def binary_labels(y, m, name="y"):
    """Map labels to {-1,+1}: the larger of the two sorted labels is +1 (SPEC, notation)."""
    y = check_labels(y, m, name)
    classes = np.unique(y)
    if classes.size < 2:
        raise ValueError(f"{name} must contain two classes; got one class ({classes[0]!r})")
    if classes.size > 2:
        raise ValueError(
            f"{name} must contain exactly two classes for a binary formulation; got {classes.size} "
            "(use McODM, DRR, or a multi-class estimator in `fast`)"
        )
    return np.where(y == classes[1], 1.0, -1.0), classes


def multiclass_labels(y, m, name="y", min_classes=2):
    """Map labels to 0..k-1 in sorted order."""
    y = check_labels(y, m, name)
    classes, codes = np.unique(y, return_inverse=True)
    if classes.size < min_classes:
        raise ValueError(f"{name} must contain at least {min_classes} classes; got {classes.size}")
    return codes.astype(np.int64), classes


def _is_real(v):
    return isinstance(v, numbers.Real) and not isinstance(v, bool) and np.isfinite(v)


def positive(value, name):
    if not _is_real(value) or value <= 0:
        raise ValueError(f"{name} must be a finite number > 0; got {value!r}")
    return float(value)


def nonnegative(value, name):
    if not _is_real(value) or value < 0:
        raise ValueError(f"{name} must be a finite number >= 0; got {value!r}")
    return float(value)


def in_interval(value, name, lo, hi, lo_closed=True, hi_closed=False):
    ok = _is_real(value) and (value >= lo if lo_closed else value > lo) and (
        value <= hi if hi_closed else value < hi)
    if not ok:
        lb = "[" if lo_closed else "("
        rb = "]" if hi_closed else ")"
        raise ValueError(f"{name} must lie in {lb}{lo}, {hi}{rb}; got {value!r}")
    return float(value)


def positive_int(value, name):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise ValueError(f"{name} must be an integer >= 1; got {value!r}")
    return int(value)


def check_vector(v, n, name):
    if isinstance(v, dict):
        raise ValueError(f"{name} must be a numeric array of shape ({n},); got a dict")
    _refuse_complex(v, name)
    try:
        v = np.asarray(v, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a numeric array: {exc}") from None
    if v.ndim == 2 and 1 in v.shape:
        v = v.ravel()
    if v.shape != (n,):
        raise ValueError(f"{name} must have shape ({n},); got {v.shape}")
    if not np.all(np.isfinite(v)):
        raise ValueError(f"{name} must contain only finite values")
    return v
