"""Input validation at the package boundary.

Every check raises :class:`ValueError` whose message names the argument and the
rule it breaks, so that bad input never reaches CVXPY, NumPy or numba.
"""
from __future__ import annotations

import math
import numbers

import numpy as np
import scipy.sparse as sp

#: the largest squared row norm ``||x_i||^2`` of a data matrix accepted: kernels, norms and
#: the certificates' products are formed from it, and float64 ends at 1.8e308
MAX_SQUARED_NORM = 1e300
#: the largest magnitude of a hyperparameter (weights, kernel parameters, tolerances): its
#: square is formed by the duals and the certificates (``C^2`` in a dual objective) and
#: float64 overflows beyond ~1.3e154
MAX_PARAMETER = 1e150
#: the smallest nonzero magnitude: below it a value is subnormal (2.2e-308), its reciprocal
#: overflows and it rounds to 0 in the solvers' products
MIN_PARAMETER = float(np.finfo(np.float64).tiny)


def _refuse_complex(a, name):
    """Complex input is refused (NumPy would silently keep the real part); so is a ragged
    nested list (NumPy's own message would not name the argument)."""
    if isinstance(a, (list, tuple)):
        try:
            arr = np.asarray(a)
        except ValueError:
            raise ValueError(f"{name} must be a rectangular array (every row of the same "
                             "length); got a ragged nested list") from None
        complex_ = np.iscomplexobj(arr) or (arr.dtype.kind == "O" and any(
            isinstance(v, complex) or np.iscomplexobj(v) for v in arr.ravel()))
    else:
        complex_ = np.iscomplexobj(a)
    if complex_:
        raise ValueError(f"{name} must be real; got complex values (their imaginary part "
                         "would be discarded)")


def _fmt_power(log10v):
    """``10 ** log10v`` written as ``5.4e+320`` (beyond float64's range too)."""
    e = math.floor(log10v)
    return f"{10.0 ** (log10v - e):.2g}e{e:+d}"


def _refuse_overflow(X, name):
    """Refuse a matrix whose largest squared row norm exceeds :data:`MAX_SQUARED_NORM`
    (entries near 1e150 and beyond), naming it and the rule. Computed on ``X / max|X|`` so
    that the check itself cannot overflow."""
    data = X.data if sp.issparse(X) else X
    if data.size == 0:
        return
    s = max(float(np.max(data)), -float(np.min(data)))     # max |x| without a copy of X
    if s == 0.0 or math.log10(s) * 2.0 + math.log10(X.shape[1]) <= math.log10(MAX_SQUARED_NORM):
        return                                           # d max|x|^2 bounds every ||x_i||^2
    if sp.issparse(X):
        Y = X.multiply(1.0 / s).tocsr()
        r = float(np.max(np.asarray(Y.multiply(Y).sum(axis=1))))
    else:
        Y = X / s
        r = float(np.max(np.einsum("ij,ij->i", Y, Y)))
    log_sq = 2.0 * math.log10(s) + math.log10(r)
    if log_sq > math.log10(MAX_SQUARED_NORM):
        raise ValueError(f"{name}'s entries reach {s:.3g}: squared norms overflow (the largest "
                         f"||x_i||^2 is {_fmt_power(log_sq)}; it must stay below "
                         f"{MAX_SQUARED_NORM:g}, float64 ends at 1.8e+308); scale the features")


def check_X(X, name="X", allow_sparse=False):
    """Return X as a 2-D float array (or CSR matrix); reject empty, non-finite, complex,
    ragged, wrong rank, and entries so large that squared norms overflow
    (:data:`MAX_SQUARED_NORM`)."""
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
            _refuse_overflow(X, name)
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
    _refuse_overflow(X, name)
    return X


def _label_kind(v):
    """``"number"``, ``"string"`` or ``None`` (neither) for one label."""
    if isinstance(v, (numbers.Number, np.number, np.bool_)):
        return "number"
    if isinstance(v, (str, bytes, np.str_, np.bytes_)):
        return "string"
    return None


def _check_label_values(raw, y, name):
    """Labels given as Python objects (a list, an object array): no ``None``, no NaN, one
    kind (numbers or strings; NumPy would turn ``[1, "a"]`` into the strings ``"1"``,
    ``"a"``, and ``np.unique`` fails on ``None`` with a TypeError)."""
    flat = raw.ravel() if isinstance(raw, np.ndarray) else np.ravel(np.asarray(raw, object))
    kinds = set()
    for i, v in enumerate(flat):
        if v is None:
            raise ValueError(f"{name} must not contain None (a missing label); found at index "
                             f"{i}")
        kind = _label_kind(v)
        if kind is None:
            raise ValueError(f"{name} must hold numbers or strings; got {type(v).__name__} "
                             f"{v!r} at index {i}")
        if kind == "number" and isinstance(v, (float, np.floating)) and not np.isfinite(v):
            raise ValueError(f"{name} must not contain NaN or inf; found {v!r} at index {i}")
        kinds.add(kind)
        if len(kinds) > 1:
            raise ValueError(f"{name} mixes numbers and strings (e.g. {v!r} at index {i}); "
                             "give labels of one type")
    if y.dtype.kind == "O":
        try:
            np.unique(y)
        except TypeError as exc:
            raise ValueError(f"{name}'s labels cannot be compared with each other ({exc}); "
                             "give labels of one type") from None


def check_labels(y, m, name="y"):
    raw = y
    if isinstance(raw, (list, tuple)):
        try:
            y = np.asarray(raw)
        except ValueError:
            raise ValueError(f"{name} must be a 1-D array of labels; got a ragged nested "
                             "list") from None
    else:
        y = np.asarray(raw)
    if y.ndim == 2 and 1 in y.shape:
        y = y.ravel()
    if y.ndim != 1:
        raise ValueError(f"{name} must be 1-D; got shape {y.shape}")
    if y.shape[0] != m:
        raise ValueError(f"{name} must have one label per row of X ({m}); got {y.shape[0]}")
    if y.dtype.kind == "O" or (isinstance(raw, (list, tuple)) and y.dtype.kind in "US"):
        _check_label_values(y if y.dtype.kind == "O" else raw, y, name)
    if y.dtype.kind == "c":
        raise ValueError(f"{name} must hold real numbers or strings; got complex values")
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
    """A finite real number (``numbers.Real``: int, float, NumPy scalars, Fraction), not a
    bool."""
    if not isinstance(v, numbers.Real) or isinstance(v, (bool, np.bool_)):
        return False
    try:
        return math.isfinite(float(v))
    except (OverflowError, TypeError, ValueError):     # an int beyond float64, say
        return False


def _refuse_extreme(v, name, value, zero_ok):
    """A nonzero hyperparameter between :data:`MIN_PARAMETER` and :data:`MAX_PARAMETER`."""
    if 0.0 < abs(v) < MIN_PARAMETER:
        least = f"{'0 or ' if zero_ok else ''}at least {MIN_PARAMETER:.3g}"
        raise ValueError(f"{name} must be {least} (the smallest normal float64); got "
                         f"{value!r}, a subnormal number whose reciprocal overflows and which "
                         "rounds to 0 in the solvers' products")
    if abs(v) > MAX_PARAMETER:
        raise ValueError(f"{name} must be at most {MAX_PARAMETER:g}; got {value!r} (its square, "
                         "which the duals and the certificates form, would overflow float64)")


def positive(value, name):
    """``value`` as a float: a finite real (``numbers.Real``) in
    [:data:`MIN_PARAMETER`, :data:`MAX_PARAMETER`]; else a ValueError naming ``name``."""
    if not _is_real(value) or value <= 0:
        raise ValueError(f"{name} must be a finite number > 0; got {value!r}")
    v = float(value)
    _refuse_extreme(v, name, value, zero_ok=False)
    return v


def nonnegative(value, name):
    """As :func:`positive`, 0 allowed."""
    if not _is_real(value) or value < 0:
        raise ValueError(f"{name} must be a finite number >= 0; got {value!r}")
    v = float(value)
    _refuse_extreme(v, name, value, zero_ok=True)
    return v


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


def check_prox(out, v, what="regularizer.prox"):
    """The value of a user's prox at ``v``: a float array of ``v``'s shape, else a
    ValueError naming the prox and both shapes (NumPy would say only that operands could
    not be broadcast)."""
    try:
        a = np.asarray(out, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{what} must return a numeric array of v's shape {np.shape(v)}; got "
                         f"{type(out).__name__} ({exc})") from None
    if a.shape != np.shape(v):
        raise ValueError(f"{what} must return an array of v's shape {np.shape(v)}; got shape "
                         f"{a.shape}")
    return a
