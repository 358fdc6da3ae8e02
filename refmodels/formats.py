"""Readers for the model files of LIBSVM, LIBLINEAR and LIBODM.

``load_model(path, fmt, X, y)`` reads a model file written by one of these tools and
returns the keyword arguments of ``problem.solution_from`` for the problem of SPEC on the
same training data ``(X, y)``: ``{"coef": ..., "intercept": ...}`` (coefficients over the
training points, in the order of the rows of ``X``) or ``{"w": ...}`` (linear weights), with
``"dual"`` (SPEC's dual variables by name) when the file determines the tool's dual point.
``model_info(path, fmt)`` returns the header (kernel, bias, labels, ...) so that a caller can
build the matching problem; ``augment(X, bias)`` appends the constant column that LIBLINEAR
(``-B``) and LIBODM (``-b``) add to every row.

Formats (as the tools' ``save_model`` functions write them):

* **LIBSVM** (``svm_save_model``): header lines ``svm_type``, ``kernel_type``, ``degree``
  (poly), ``gamma`` (poly/rbf/sigmoid), ``coef0`` (poly/sigmoid), ``nr_class``,
  ``total_sv``, ``rho``, ``label``, optional ``probA``/``probB``/``prob_density_marks``,
  ``nr_sv``, then ``SV`` and one line per support vector, ``coef idx:val ...`` (1-based
  feature indices, zeros omitted; for ``kernel_type precomputed`` the line is
  ``coef 0:k`` with ``k`` the 1-based index of the training point). The decision value is
  ``sum_j coef_j k(sv_j, x) - rho``, positive meaning the *first* label of the ``label``
  line (LIBSVM orders labels by first appearance in the training file). SV values are
  printed with ``%.8g``: a support vector is matched to the training row that equals it
  exactly, or, failing that, whose values printed with 8 significant digits equal it
  (a ``ValueError`` names the first SV that matches no row). The sign of a SV's
  coefficient is its label (``coef_j = y_j alpha_j``, ``alpha_j > 0``), so it is matched
  only to a row of that label: real data sets repeat points under both labels (haberman
  does), and a SV given to the copy of the other label is a dual variable outside its box.
  Duplicated training rows of one label get one SV each, in order. ``c_svc`` maps to SPEC §1 with ``fit_intercept=True`` and the
  ``C`` of the run (not stored in the file); ``nu_svc`` stores its dual coefficients divided
  by ``r`` (LIBSVM's ``solve_nu_svc``), a C-SVM point for ``C = max_j |coef_j|``
  (``model_info(...)["C"]``; see :func:`refmodels.adapters.from_sklearn`).
* **LIBLINEAR** (``save_model``): ``solver_type``, ``nr_class``, ``label``,
  ``nr_feature``, ``bias``, optional ``rho``, then ``w`` and one line per weight
  (``nr_feature`` lines, plus one for the bias feature when ``bias >= 0``); the decision
  value ``w^T [x; bias]`` is positive for the first label. Three solvers map to a SPEC
  family: ``L2R_L1LOSS_SVC_DUAL`` (``-s 3``, the hinge-loss SVM: SPEC §1 without
  intercept), and ``L2R_L2LOSS_SVC_DUAL`` (``-s 1``) and ``L2R_L2LOSS_SVC`` (``-s 2``), the
  squared hinge ``1/2 ||w||^2 + C sum max(0, 1 - y_i w^T x_i)^2``: SPEC §4 (ODM) at
  ``theta = 0``, ``mu = 0`` with ``lam = C m`` (``model_info`` gives ``family: "ODM"``,
  ``mu``, ``theta``; ``C`` is not in the file). The logistic and L1 solvers are refused.
  With ``bias >= 0`` LIBLINEAR's intercept is the weight of a constant feature ``bias``,
  regularized like the others: ``-s 3`` is certified as SPEC §1 *without* intercept on
  ``augment(X, bias)`` (``X`` must then have ``nr_feature + 1`` columns, the last equal to
  ``bias``); ``-s 1`` / ``-s 2`` as ``ODM(X, ..., fit_intercept=True,
  intercept_scaling=bias)`` on ``X`` itself (or ODM without intercept on the augmented
  data). LIBLINEAR's ``-R`` (an unregularized bias) leaves no mark in the file: such a
  model is another problem, and its certificate fails.
* **LIBODM** (``save_model`` of LIBODM, read from its source, not copied): ``instance``,
  ``feature``, ``bias`` (0/1), ``solver`` (0 dual CD, 1 trust region, 2 SVRG), ``kernel``
  (0 linear, 1 poly, 2 rbf, 3 sigmoid), ``degree``, ``gamma`` (printed ``%g``), ``coef0``,
  then either ``w`` and ``feature`` numbers on one line (linear kernel), or ``total_sv``,
  ``sv`` and lines ``coef idx:val ...`` (values ``%.16g``) with ``coef_i = y_i (zeta_i -
  beta_i)``, SPEC §4's ``nu``. LIBODM's objective is SPEC §4 (ODM, no intercept) with the
  same ``lambda, mu, theta`` (not stored in the file). It stores no labels: it uses the
  labels of the training file as numbers, so ``y`` must be -1/+1. With ``bias 1`` it
  appends a feature equal to 1 to every row (``feature`` counts it) before the kernel.
  On the linear kernel that is SPEC §4 with the regularized intercept
  (``ODM(X, y, ..., fit_intercept=True, intercept_scaling=1)``, ``model_info`` says
  ``fit_intercept: True``): ``load_model`` takes ``X`` itself, or ``augment(X, 1.0)`` for
  ``ODM`` without intercept on the augmented data (the same problem). With another kernel
  the constant enters the kernel's argument (``k([x; 1], [z; 1])``, not ``k(x, z) + 1``):
  certify on ``augment(X, 1.0)``. The sigmoid kernel is not PSD and is refused.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from . import kernels as _k
from . import odm as _odm
from . import svm as _svm
from ._validation import check_labels

FORMATS = ("libsvm", "liblinear", "libodm")

#: significant digits with which each tool prints support-vector values
SV_DIGITS = {"libsvm": 8, "libodm": 16}

_LIBSVM_KERNELS = ("linear", "polynomial", "rbf", "sigmoid", "precomputed")
_LIBODM_KERNELS = ("linear", "poly", "rbf", "sigmoid")
_LIBLINEAR_SVM = "L2R_L1LOSS_SVC_DUAL"
#: LIBLINEAR's squared-hinge solvers (-s 1 dual, -s 2 primal): ODM at theta = mu = 0
_LIBLINEAR_L2LOSS = ("L2R_L2LOSS_SVC_DUAL", "L2R_L2LOSS_SVC")


# ---- public API ---------------------------------------------------------------------------------
def load_model(path, fmt, X, y):
    """``solution_from`` keyword arguments for the model file ``path`` on training data ``(X, y)``.

    Parameters
    ----------
    path : str or path-like, a model file written by the tool ``fmt``.
    fmt : ``"libsvm"``, ``"liblinear"`` or ``"libodm"``.
    X : the training data the model was trained on (rows in the order of the problem to
        certify); for LIBLINEAR ``-B b`` / LIBODM ``-b`` models, ``augment(X, bias)``, or,
        when ``model_info`` says ``fit_intercept: True``, ``X`` itself for the problem with
        ``fit_intercept=True, intercept_scaling=model_info(...)["intercept_scaling"]``.
    y : its labels (LIBSVM / LIBLINEAR: the labels of the model's ``label`` line; LIBODM:
        -1/+1). The larger sorted label is +1 (SPEC), whatever the file's label order.

    Returns
    -------
    dict : pass it as ``problem.solution_from(**d)``.
        LIBSVM: ``{"coef": (m,), "intercept": float, "dual": {"alpha": y * coef}}`` (the
        file's coefficients are ``y_i alpha_i``: the dual point LIBSVM returned).
        LIBLINEAR and LIBODM linear: ``{"w": (d,)}`` (no dual is stored; the certificate
        derives one from the margins).
        LIBODM kernel: ``{"coef": (m,), "dual": {"zeta": max(y coef, 0), "beta":
        max(-y coef, 0)}}``: the file stores ``coef = y (zeta - beta)`` only; at an optimum
        ``zeta_i beta_i = 0`` (a margin cannot be both below ``1 - theta`` and above
        ``1 + theta``), so this split is LIBODM's dual point when it has converged.
        Every dict also holds ``"source": fmt``, the point's provenance (``info["source"]``).
    """
    fmt = _check_fmt(fmt)
    model = _read(path, fmt)
    Xd = _dense(X)
    yv = check_labels(y, Xd.shape[0], "y")
    reader = {"libsvm": _libsvm_solution, "liblinear": _liblinear_solution,
              "libodm": _libodm_solution}[fmt]
    return {**reader(model, Xd, yv), "source": fmt}


def model_info(path, fmt):
    """The header of a model file as a dict: ``format``, ``kernel`` (a
    :mod:`refmodels.kernels` object, or None when the file cannot say, e.g. a LIBSVM
    precomputed kernel is ``Precomputed()``), ``family`` (the SPEC problem it maps to),
    ``fit_intercept``, ``bias`` (the constant column to append with :func:`augment`, or
    None), ``intercept_scaling`` (the constant of a model whose bias feature is the family's
    ``fit_intercept``), ``labels`` (in the file's order, LIBSVM/LIBLINEAR), ``C`` (``nu_svc``
    only: the
    equivalent C-SVM ``C``), ``n_sv`` / ``n_features`` / ``m`` when stored, and ``header``
    (every header line, raw)."""
    fmt = _check_fmt(fmt)
    model = _read(path, fmt)
    return {k: v for k, v in model.items() if k not in ("sv_coef", "sv", "w_raw")}


def augment(X, bias):
    """``X`` with a constant last column ``bias`` (LIBLINEAR ``-B bias``, LIBODM ``-b``: 1)."""
    try:
        bias = float(bias)
    except (TypeError, ValueError):
        raise ValueError(f"bias must be a number; got {bias!r}") from None
    if not np.isfinite(bias):
        raise ValueError(f"bias must be finite; got {bias!r}")
    if sp.issparse(X):
        col = sp.csr_matrix(np.full((X.shape[0], 1), bias))
        return sp.hstack([sp.csr_matrix(X, dtype=np.float64), col], format="csr")
    X = _dense(X)
    return np.hstack([X, np.full((X.shape[0], 1), bias)])


# ---- parsing ------------------------------------------------------------------------------------
def _check_fmt(fmt):
    if fmt not in FORMATS:
        raise ValueError(f"fmt must be one of {FORMATS}; got {fmt!r}")
    return fmt


def _dense(X):
    if sp.issparse(X):
        X = X.toarray()
    try:
        X = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"X must be a numeric 2-D array: {exc}") from None
    if X.ndim != 2 or X.shape[0] == 0:
        raise ValueError(f"X must be a non-empty 2-D array; got shape {X.shape}")
    if not np.all(np.isfinite(X)):
        raise ValueError("X must contain only finite values")
    return X


def _lines(path, fmt):
    try:
        with open(path) as fh:
            text = fh.read()
    except OSError as exc:
        raise ValueError(f"path must name a readable {fmt} model file: {exc}") from None
    return text.splitlines()


def _num(value, key, path, kind=float):
    try:
        return kind(value)
    except (TypeError, ValueError):
        raise ValueError(f"{path}: header {key!r} must be a number; got {value!r}") from None


def _value(header, key, path, kind=float, default=None):
    """The header line ``key``'s first value as ``kind`` (``str``, ``int``, ``float``), or
    ``default`` when there is no such line."""
    if key not in header:
        return default
    if not header[key]:
        raise ValueError(f"{path}: header {key!r} has no value")
    return header[key][0] if kind is str else _num(header[key][0], key, path, kind)


def _parse_sv_line(line, path, n):
    parts = line.split()
    if not parts:
        raise ValueError(f"{path}: support vector line {n} is empty")
    coef = _num(parts[0], "sv coef", path)
    feats = {}
    for tok in parts[1:]:
        idx, sep, val = tok.partition(":")
        if not sep:
            raise ValueError(f"{path}: support vector line {n} must be 'coef idx:val ...'; got "
                             f"token {tok!r}")
        feats[_num(idx, "feature index", path, int)] = _num(val, "feature value", path)
    return coef, feats


def _read(path, fmt):
    return {"libsvm": _read_libsvm, "liblinear": _read_liblinear, "libodm": _read_libodm}[fmt](
        path, _lines(path, fmt))


def _header(path, lines, tool, ends, required):
    """``(header, k)``: the header lines before line ``k`` (the first whose text is one of
    ``ends``) as ``{key: [values]}``, with every key of ``required`` present."""
    header, k = {}, 0
    while k < len(lines) and lines[k].strip() not in ends:
        parts = lines[k].split()
        if parts:
            header[parts[0]] = parts[1:]
        k += 1
    if k == len(lines):
        raise ValueError(f"{path} is not a {tool} model file (no "
                         f"{' or '.join(repr(e) for e in ends)} line)")
    for key in required:
        if key not in header:
            raise ValueError(f"{path}: {tool} header {key!r} is missing")
    return header, k


def _binary_labels(header, path, why):
    """The two labels of a binary model's ``label`` line (``nr_class`` must be 2)."""
    nr_class = _value(header, "nr_class", path, int)
    if nr_class != 2:
        raise ValueError(f"{path}: nr_class must be 2 ({why}); got {nr_class}")
    labels = [_num(v, "label", path) for v in header.get("label", [])]
    if len(labels) != 2:
        raise ValueError(f"{path}: the 'label' line must give the two labels; got {labels}")
    return labels


def _support_vectors(path, lines, total, word):
    """``(coefficients, [{feature index: value}])`` of the ``total`` non-empty SV lines."""
    sv_lines = [ln for ln in lines if ln.strip()]
    if len(sv_lines) != total:
        raise ValueError(f"{path}: total_sv is {total} but {len(sv_lines)} {word} lines follow")
    parsed = [_parse_sv_line(ln, path, n) for n, ln in enumerate(sv_lines, 1)]
    return np.asarray([c for c, _ in parsed], float), [f for _, f in parsed]


def _read_libsvm(path, lines):
    header, k = _header(path, lines, "LIBSVM", ("SV",),
                        ("svm_type", "kernel_type", "nr_class", "total_sv", "rho"))
    svm_type = _value(header, "svm_type", path, str)
    if svm_type not in ("c_svc", "nu_svc"):
        raise ValueError(f"{path}: svm_type must be c_svc or nu_svc (a binary classifier) to map "
                         f"to SPEC §1; got {svm_type!r}")
    labels = _binary_labels(header, path, "a binary model; SPEC §1")
    rho = header["rho"]
    if len(rho) != 1:
        raise ValueError(f"{path}: rho must be one number for a binary model; got {rho}")
    total = _value(header, "total_sv", path, int)
    sv_coef, svs = _support_vectors(path, lines[k + 1:], total, "SV")
    kname = _value(header, "kernel_type", path, str)
    if kname not in _LIBSVM_KERNELS:
        raise ValueError(f"{path}: kernel_type must be one of {_LIBSVM_KERNELS}; got {kname!r}")
    info = {"format": "libsvm", "family": _svm.SVM.family, "fit_intercept": True, "bias": None,
            "kernel": _kernel(kname, header, path), "kernel_name": kname, "labels": labels,
            "svm_type": svm_type, "rho": _num(rho[0], "rho", path), "n_sv": total,
            "header": header, "sv_coef": sv_coef, "sv": svs}
    if svm_type == "nu_svc":
        C = float(np.max(np.abs(sv_coef))) if total else 0.0
        if not C > 0:
            raise ValueError(f"{path}: a nu_svc model with no non-zero coefficient determines "
                             "no C-SVM C")
        info["C"] = C
    return info


def _kernel(kname, header, path):
    """refmodels kernel of a LIBSVM/LIBODM kernel name and the header's ``gamma``, ``degree``
    and ``coef0``, or a ValueError for a non-PSD one."""
    gamma = _value(header, "gamma", path)
    degree = _value(header, "degree", path, int)
    coef0 = _value(header, "coef0", path)
    if kname == "linear":
        return _k.Linear()
    if kname == "precomputed":
        return _k.Precomputed()
    if kname == "rbf":
        return _k.RBF(gamma=gamma)
    if kname in ("polynomial", "poly"):
        if coef0 is None or coef0 < 0:
            raise ValueError(f"{path}: coef0 must be >= 0 for the polynomial kernel (PSD); got "
                             f"{coef0}")
        return _k.Polynomial(degree=degree, gamma=gamma, coef0=coef0)
    raise ValueError(f"{path}: kernel {kname!r} is not positive semidefinite: no SPEC problem")


def _read_liblinear(path, lines):
    header, k = _header(path, lines, "LIBLINEAR", ("w",),
                        ("solver_type", "nr_class", "nr_feature", "bias"))
    solver = _value(header, "solver_type", path, str)
    if solver != _LIBLINEAR_SVM and solver not in _LIBLINEAR_L2LOSS:
        raise ValueError(f"{path}: solver_type must be {_LIBLINEAR_SVM} (-s 3, the hinge-loss "
                         f"SVM of SPEC §1) or {' / '.join(_LIBLINEAR_L2LOSS)} (-s 1 / -s 2, "
                         f"the squared hinge: SPEC §4 at theta = mu = 0); got {solver!r}, "
                         f"which is no SPEC family")
    labels = _binary_labels(header, path, "a binary model")
    d = _value(header, "nr_feature", path, int)
    bias = _value(header, "bias", path)
    n_w = d + (1 if bias >= 0 else 0)
    vals = [ln.split() for ln in lines[k + 1:] if ln.strip()]
    if len(vals) != n_w or any(len(v) != 1 for v in vals):
        raise ValueError(f"{path}: expected {n_w} weight lines of one number (nr_feature {d}"
                         f"{' + bias' if bias >= 0 else ''}); got {len(vals)}")
    w = np.asarray([_num(v[0], "w", path) for v in vals], float)
    info = {"format": "liblinear", "family": _svm.SVM.family, "fit_intercept": False,
            "bias": bias if bias >= 0 else None, "kernel": _k.Linear(), "labels": labels,
            "solver_type": solver, "n_features": d, "header": header, "w_raw": w}
    if solver in _LIBLINEAR_L2LOSS:
        # the squared hinge: ODM's f_O at theta = mu = 0, lam = C m; its bias feature is
        # ODM's fit_intercept
        info.update(family=_odm.ODM.family, fit_intercept=bias >= 0, mu=0.0, theta=0.0,
                    intercept_scaling=bias if bias >= 0 else 1.0)
    return info


def _read_libodm(path, lines):
    header, k = _header(path, lines, "LIBODM", ("w", "sv"),
                        ("instance", "feature", "bias", "kernel"))
    kid = _value(header, "kernel", path, int)
    if not 0 <= kid < len(_LIBODM_KERNELS):
        raise ValueError(f"{path}: kernel must be 0..3; got {kid}")
    kname = _LIBODM_KERNELS[kid]
    kernel = _kernel(kname, header, path)
    m = _value(header, "instance", path, int)
    d = _value(header, "feature", path, int)
    bias = _value(header, "bias", path, int)
    info = {"format": "libodm", "family": _odm.ODM.family,
            # LIBODM's bias feature is SPEC §4's regularized intercept on the linear kernel
            "fit_intercept": bool(bias == 1 and kname == "linear"),
            "bias": 1.0 if bias == 1 else None, "intercept_scaling": 1.0,
            "kernel": kernel, "kernel_name": kname,
            "labels": [-1.0, 1.0], "m": m, "n_features": d, "header": header,
            "solver": _value(header, "solver", path, int, 0)}
    rest = lines[k + 1:]
    if lines[k].strip() == "w":
        toks = " ".join(rest).split()
        if len(toks) != d:
            raise ValueError(f"{path}: expected {d} weights after 'w'; got {len(toks)}")
        info["w_raw"] = np.asarray([_num(t, "w", path) for t in toks], float)
    else:
        total = _value(header, "total_sv", path, int, -1)
        sv_coef, svs = _support_vectors(path, rest, total, "sv")
        info.update(n_sv=total, sv_coef=sv_coef, sv=svs)
    return info


# ---- mapping to a point over the rows of X ------------------------------------------------------
def _sign_from_labels(labels, y, path_fmt):
    """+1 when the file's first label is SPEC's +1 (the larger sorted label of y), else -1."""
    classes = np.unique(y)
    if classes.size != 2:
        raise ValueError(f"y must contain exactly two classes (a binary {path_fmt} model); got "
                         f"{classes.size}")
    try:
        cls = [float(c) for c in classes]
    except (TypeError, ValueError):
        raise ValueError(f"y must hold the numeric labels of the model file {labels}; got "
                         f"{classes.tolist()}") from None
    if sorted(cls) != sorted(labels):
        raise ValueError(f"y must hold the model file's labels {labels}; got {cls}")
    return 1.0 if labels[0] == cls[1] else -1.0


def _round_sig(A, digits):
    f = np.vectorize(lambda v: float(f"{v:.{digits}g}"), otypes=[float])
    return f(A) if A.size else A


def _match_rows(svs, X, digits, path_fmt, y=None, sv_y=None):
    """Index of the training row of every support vector (see the module docstring); with
    ``y`` and ``sv_y`` (each SV's label), only rows of the SV's label qualify."""
    m, d = X.shape
    labelled = y is not None
    S = np.zeros((len(svs), d))
    for j, feats in enumerate(svs):
        for idx, val in feats.items():
            if idx < 1 or idx > d:
                raise ValueError(f"X must have the model's features: support vector {j + 1} has "
                                 f"feature index {idx}, X has {d} columns (1-based indices)")
            S[j, idx - 1] = val
    def key(row, label):
        return tuple(row) + ((float(label),) if labelled else ())

    exact = {}
    for i in range(m):
        exact.setdefault(key(X[i], y[i] if labelled else 0), []).append(i)
    rounded = None
    used = np.zeros(m, bool)
    out = np.empty(len(svs), dtype=np.int64)
    for j in range(len(svs)):
        lab = sv_y[j] if labelled else 0
        cands = exact.get(key(S[j], lab))
        if not cands or all(used[c] for c in cands):
            if rounded is None:
                Xr = _round_sig(X, digits)
                rounded = {}
                for i in range(m):
                    rounded.setdefault(key(Xr[i], y[i] if labelled else 0), []).append(i)
            cands = rounded.get(key(_round_sig(S[j], digits), lab))
        free = [c for c in (cands or []) if not used[c]]
        if not free:
            which = f" of label {lab:+g}" if labelled else ""
            raise ValueError(f"X must be the model's training data: support vector {j + 1} of the "
                             f"{path_fmt} model matches no (unused) row{which} of X, exactly or to "
                             f"{digits} significant digits (scaled differently? labels swapped?)")
        used[free[0]] = True
        out[j] = free[0]
    return out


def _libsvm_solution(model, X, y):
    s = _sign_from_labels(model["labels"], y, "LIBSVM")
    m = X.shape[0]
    coef = np.zeros(m)
    if isinstance(model["kernel"], _k.Precomputed):
        if X.shape[1] != m:
            raise ValueError(f"X must be the m x m training Gram for a precomputed-kernel LIBSVM "
                             f"model; got shape {X.shape}")
        for j, feats in enumerate(model["sv"]):
            i = int(round(feats.get(0, 0)))
            if not 1 <= i <= m:
                raise ValueError(f"support vector {j + 1}: '0:{feats.get(0)}' must be a training "
                                 f"index in 1..{m}")
            coef[i - 1] += s * model["sv_coef"][j]
    else:
        sv_coef = s * np.asarray(model["sv_coef"], float)
        keep = np.flatnonzero(sv_coef)          # a zero coefficient says nothing of its row
        rows = _match_rows([model["sv"][j] for j in keep], X, SV_DIGITS["libsvm"], "LIBSVM",
                           _pm1(y), np.sign(sv_coef[keep]))
        coef[rows] = sv_coef[keep]
    ypm = _pm1(y)
    return {"coef": coef, "intercept": -s * model["rho"], "dual": {"alpha": ypm * coef}}


def _pm1(y):
    """SPEC's labels: +1 for the larger of the two sorted labels, -1 for the other."""
    classes = np.unique(y)
    return np.where(y == classes[1], 1.0, -1.0)


def _check_bias_column(X, n_model, bias, tool, flag):
    """X must have the model's columns; with a bias, the last column must be that constant."""
    if bias is None:
        return
    if X.shape[1] != n_model or not np.all(X[:, -1] == bias):
        raise ValueError(f"X must be augment(X, {bias:g}) for a {tool} model trained with "
                         f"{flag}: {tool}'s intercept is the weight of a constant feature "
                         f"{bias:g}, regularized like the others (SPEC's problem without "
                         f"intercept on the augmented data); got X with {X.shape[1]} columns"
                         + ("" if X.shape[1] != n_model else " whose last column is not constant"))


def _linear_w(w_file, X, tool):
    d = X.shape[1]
    if w_file.size > d:
        raise ValueError(f"X must have the model's {w_file.size} features; got {d}")
    w = np.zeros(d)
    w[:w_file.size] = w_file
    if w_file.size < d and np.any(X[:, w_file.size:] != 0):
        raise ValueError(f"X must have the model's {w_file.size} features; got {d} (the extra "
                         f"columns are not all zero, so {tool} did not see them)")
    return w


def _liblinear_solution(model, X, y):
    s = _sign_from_labels(model["labels"], y, "LIBLINEAR")
    bias = model["bias"]
    w_file = model["w_raw"]
    if bias is not None and model["fit_intercept"] and X.shape[1] == w_file.size - 1:
        # ODM(X, ..., fit_intercept=True, intercept_scaling=bias): w carries w_b last
        return {"w": s * w_file}
    if bias is not None:
        _check_bias_column(X, w_file.size, bias, "LIBLINEAR", f"-B {bias:g}")
    return {"w": s * _linear_w(w_file, X, "LIBLINEAR")}


def _libodm_solution(model, X, y):
    classes = np.unique(y)
    try:
        ok = sorted(float(c) for c in classes) == [-1.0, 1.0]
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise ValueError(f"y must be -1/+1 for a LIBODM model (LIBODM uses the training file's "
                         f"labels as numbers and stores none); got classes {classes.tolist()}")
    if X.shape[0] != model["m"]:
        raise ValueError(f"X must be the model's training data of {model['m']} rows; got "
                         f"{X.shape[0]}")
    if model["bias"] is not None:
        if "w_raw" in model and X.shape[1] == model["n_features"] - 1:
            # the linear kernel on X itself: ODM(X, ..., fit_intercept=True), whose w carries
            # the bias feature's weight last, as the file does
            return {"w": np.asarray(model["w_raw"], float)}
        _check_bias_column(X, model["n_features"], 1.0, "LIBODM", "-b")
    if "w_raw" in model:
        return {"w": _linear_w(model["w_raw"], X, "LIBODM")}
    coef = np.zeros(X.shape[0])
    rows = _match_rows(model["sv"], X, SV_DIGITS["libodm"], "LIBODM")
    coef[rows] = model["sv_coef"]
    ypm = _pm1(y)
    return {"coef": coef, "dual": {"zeta": np.maximum(ypm * coef, 0.0),
                                   "beta": np.maximum(-ypm * coef, 0.0)}}
