"""Multi-class models as several binary problems (:func:`refmodels.adapters.from_sklearn`).

A classifier fitted on more than two classes solved one binary problem per pair of classes
(one-vs-one: ``SVC``, ``NuSVC``, the ``fast`` estimators' default) or per class
(one-vs-rest: ``LinearSVC``, ``multi_class="ovr"``). Each is mapped as the binary case of
:mod:`refmodels.adapters`; a :class:`ProblemSet` holds them, and its :meth:`~ProblemSet.certify`
gives a :class:`CertificateSet`, ``.ok`` when every certificate holds.
"""
from __future__ import annotations

import numpy as np

from ._validation import check_labels, check_X

class ProblemSet:
    """The binary problems of a multi-class model, in the model's order.

    ``scheme`` is ``"ovo"`` (one-vs-one: ``labels[p] = (classes[i], classes[j])``, the
    problem of the samples of those two classes, ``classes[j]`` its +1, as the ``fast``
    estimators' ``pairs_``) or ``"ovr"`` (one-vs-rest: ``labels[p] = classes[p]``, that class
    +1 against the rest, on every sample). ``rows[p]`` are the training rows the problem
    holds (None: all). Indexing and iteration give the problems;
    :meth:`certify` certifies one point per problem.
    """

    def __init__(self, problems, labels, scheme, classes, rows):
        self.problems = list(problems)
        self.labels = list(labels)
        self.scheme = scheme
        self.classes = np.asarray(classes)
        self.rows = list(rows)

    def __len__(self):
        return len(self.problems)

    def __getitem__(self, p):
        return self.problems[p]

    def __iter__(self):
        return iter(self.problems)

    def __repr__(self):
        names = sorted({type(p).__name__ for p in self.problems})
        return (f"ProblemSet({len(self)} {'/'.join(names)} problems, {self.scheme}, classes "
                f"{self.classes.tolist()})")

    def certify(self, solutions, tol=None, reference="auto"):
        """One certificate per problem (``solutions`` in the same order): a
        :class:`CertificateSet`, ``.ok`` when every one holds."""
        from .certify import DEFAULT_TOL

        solutions = list(solutions)
        if len(solutions) != len(self.problems):
            raise ValueError(f"solutions must hold one Solution per problem ({len(self)}); got "
                             f"{len(solutions)}")
        tol = DEFAULT_TOL if tol is None else tol
        return CertificateSet([p.certify(s, tol=tol, reference=reference)
                               for p, s in zip(self.problems, solutions)], self.labels)


class CertificateSet:
    """The certificates of a :class:`ProblemSet`'s points: ``ok`` when every one holds,
    ``worst`` the largest scaled residual over them (with its problem's labels), and
    ``holds_at`` the largest ``holds_at``. Indexing and iteration give the certificates."""

    def __init__(self, certificates, labels):
        self.certificates = list(certificates)
        self.labels = list(labels)

    def __len__(self):
        return len(self.certificates)

    def __getitem__(self, p):
        return self.certificates[p]

    def __iter__(self):
        return iter(self.certificates)

    @property
    def ok(self):
        return all(c.ok for c in self.certificates)

    def __bool__(self):
        return self.ok

    @property
    def worst(self):
        """``(labels, residual name, scaled value)`` of the largest scaled residual."""
        best = None
        for lab, c in zip(self.labels, self.certificates):
            name, value = c.worst
            if best is None or abs(value) > abs(best[2]):
                best = (lab, name, value)
        return best

    @property
    def holds_at(self):
        return max(c.holds_at for c in self.certificates)

    def __str__(self):
        lines = [f"{len(self)} certificates, {'all hold' if self.ok else 'some FAIL'}"]
        for lab, c in zip(self.labels, self.certificates):
            name, value = c.worst
            lines.append(f"  {lab}: {'holds' if c.ok else 'FAILS'} (worst {name} {value:.2e})")
        return "\n".join(lines)

    def to_dict(self):
        return {"ok": self.ok, "certificates": [
            {"labels": np.asarray(lab).tolist(), **c.to_dict()}
            for lab, c in zip(self.labels, self.certificates)]}


def multiclass_y(estimator, y, m):
    """``(y, classes)``: the labels checked against the estimator's ``classes_``."""
    y = check_labels(y, m, "y")
    classes = np.asarray(estimator.classes_)
    if not np.array_equal(np.unique(y), classes):
        raise ValueError(f"y must hold the estimator's classes {classes.tolist()}; got "
                         f"{np.unique(y).tolist()[:10]}")
    return y, classes


def _ovo_pairs(k):
    return [(i, j) for i in range(k) for j in range(i + 1, k)]


def _from_libsvm_multiclass(est, X, y, which):
    """``SVC`` / ``NuSVC`` beyond two classes: LIBSVM's one-vs-one problems.

    LIBSVM stores ``dual_coef_`` as ``(n_classes - 1, n_SV)``, the support vectors grouped by
    class (``n_support_``): the pair ``(i, j)`` has the coefficients ``dual_coef_[j - 1]`` on
    the support vectors of class ``i`` and ``dual_coef_[i]`` on those of class ``j``, and the
    intercept ``intercept_[p]`` (pairs in the order ``(0, 1), (0, 2), ..., (1, 2), ...``); its
    decision value is positive for class ``i``. Ours is positive for ``classes[j]`` (the larger
    label, SPEC): both change sign. NuSVC: each pair's ``C`` is its own largest
    ``|coefficient|`` (``1 / r`` of that pair's nu-SVM)."""
    from . import adapters as _a
    from .svm import SVM

    X = check_X(X, allow_sparse=True)
    y, classes = multiclass_y(est, y, X.shape[0])
    _a._check_shape_fit(est, X)
    if getattr(est, "_impl", which) != which:
        raise ValueError(f"estimator must be a {which} model; got {est._impl!r}")
    cw = getattr(est, "class_weight_", None)
    if cw is not None and np.size(cw) and not np.allclose(cw, 1.0):
        raise ValueError(f"class_weight must be None: a per-class C is not SPEC §1's problem; "
                         f"the estimator has class_weight_={np.asarray(cw).tolist()}")
    kernel = _a.svc_kernel(est, X)
    k, m = classes.size, X.shape[0]
    support = np.asarray(est.support_, dtype=np.int64)
    counts = np.asarray(est.n_support_, dtype=np.int64)
    dual = _a._dense_row(est.dual_coef_)
    b_all = np.ravel(est.intercept_)
    if dual.shape != (k - 1, support.size) or counts.sum() != support.size \
            or b_all.size != k * (k - 1) // 2:
        raise ValueError(f"estimator must be a one-vs-one LIBSVM model of {k} classes: "
                         f"dual_coef_ {dual.shape}, n_support_ {counts.tolist()}, "
                         f"intercept_ {b_all.shape}")
    if support.size and (support.min() < 0 or support.max() >= m):
        raise ValueError(f"X must be the estimator's training data: support_ indexes rows up "
                         f"to {support.max()} but X has {m} rows")
    if not kernel.is_precomputed and support.size:
        sv = _a._dense_row(est.support_vectors_)
        if not np.allclose(sv, _a._dense_row(X[support]), rtol=_a.CONSISTENCY_RTOL,
                           atol=0):
            raise ValueError("X must be the estimator's training data: its rows support_ are "
                             "not the estimator's support_vectors_ (scaled differently?)")
    start = np.concatenate([[0], np.cumsum(counts)])
    if support.size and not all(np.all(y[support[start[c]:start[c + 1]]] == classes[c])
                                for c in range(k)):
        raise ValueError("y must be the estimator's training labels: its support vectors are "
                         "not grouped by class as n_support_ says")
    problems, solutions, labels, rows_all = [], [], [], []
    for p, (i, j) in enumerate(_ovo_pairs(k)):
        rows = np.flatnonzero((y == classes[i]) | (y == classes[j]))
        coef_full = np.zeros(m)
        si, sj = slice(start[i], start[i + 1]), slice(start[j], start[j + 1])
        coef_full[support[si]] = -dual[j - 1, si]          # LIBSVM: positive = class i
        coef_full[support[sj]] = -dual[i, sj]
        coef = coef_full[rows]
        yp = np.where(y[rows] == classes[j], 1, -1)
        Xp = X[np.ix_(rows, rows)] if kernel.is_precomputed else X[rows]
        if which == "nu_svc":
            C = float(np.max(np.abs(coef))) if coef.size else 0.0
            if not (np.isfinite(C) and C > 0):
                raise ValueError(f"estimator (NuSVC) does not determine C for the pair "
                                 f"{(classes[i], classes[j])}: no non-zero dual coefficient")
        else:
            C = float(est.C)
        prob = SVM(Xp, yp, C=C, kernel=kernel, fit_intercept=True)
        problems.append(prob)
        solutions.append(_a._libsvm_solution(prob, coef, -float(b_all[p])))
        labels.append((classes.tolist()[i], classes.tolist()[j]))
        rows_all.append(rows)
    return ProblemSet(problems, labels, "ovo", classes, rows_all), solutions


def _from_linear_svc_multiclass(est, X, y):
    """``LinearSVC`` beyond two classes: LIBLINEAR's one-vs-rest problems, ``coef_[c]`` and
    ``intercept_[c]`` the point of ``classes_[c]`` (+1) against the rest."""
    from . import adapters as _a

    X = check_X(X, allow_sparse=True)
    y, classes = multiclass_y(est, y, X.shape[0])
    _a._check_n_features(est, X)
    _a._check_linear_svc(est)
    W = np.asarray(est.coef_, dtype=np.float64)
    b = np.ravel(np.asarray(est.intercept_, dtype=np.float64))
    if W.shape != (classes.size, X.shape[1]):
        raise ValueError(f"estimator.coef_ must have shape ({classes.size}, {X.shape[1]}); got "
                         f"{W.shape}")
    if b.size != classes.size:
        b = np.zeros(classes.size) if not est.fit_intercept and b.size == 1 else b
    problems, solutions = [], []
    for c in range(classes.size):
        prob, sol = _a._linear_svc_problem(est, X, np.where(y == classes[c], 1, -1), W[c],
                                        float(b[c]))
        problems.append(prob)
        solutions.append(sol)
    return (ProblemSet(problems, classes.tolist(), "ovr", classes, [None] * classes.size),
            solutions)


MULTICLASS = {"SVC": lambda e, X, y: _from_libsvm_multiclass(e, X, y, "c_svc"),
               "NuSVC": lambda e, X, y: _from_libsvm_multiclass(e, X, y, "nu_svc"),
               "LinearSVC": _from_linear_svc_multiclass}


def from_fast_multiclass(est, X, y):
    """A fast estimator beyond two classes: its problems (``problems_``, one per pair of
    ``pairs_`` one-vs-one, or one per class one-vs-rest) and its points."""
    classes = np.asarray(est.classes_)
    problems = getattr(est, "problems_", None)
    if not problems:
        raise ValueError(f"estimator ({type(est).__name__}) keeps no problems_ to map")
    pairs = np.asarray(getattr(est, "pairs_", np.zeros((0, 2))), dtype=int).reshape(-1, 2)
    cl = classes.tolist()
    if pairs.size:
        rows = [np.flatnonzero((y == classes[i]) | (y == classes[j])) for i, j in pairs]
        labels, scheme = [(cl[i], cl[j]) for i, j in pairs], "ovo"
    else:
        rows, labels, scheme = [None] * len(problems), cl, "ovr"
    from .adapters import _fast_point

    sols = [_fast_point(est, prob, p, r) for p, (prob, r) in enumerate(zip(problems, rows))]
    return ProblemSet(problems, labels, scheme, classes, rows), sols
