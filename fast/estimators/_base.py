"""The shared base of the estimators, as scikit-learn's ``BaseLibSVM`` serves ``SVC``.

:class:`BaseMarginClassifier` holds what every estimator of :mod:`fast.estimators` shares:

* the parameters ``kernel``, ``gamma``, ``degree``, ``coef0`` (``SVC``'s conventions),
  ``tol``, ``max_iter`` and ``random_state``: validated by ``_parameter_constraints``
  (:data:`_KERNEL_PARAMS`), turned into a :mod:`refmodels.kernels` object by
  :meth:`~BaseMarginClassifier._kernel_object`;
* the validation of ``X`` and ``y`` for ``fit`` and of ``X`` for prediction (dense, or CSR
  with the linear kernel; a square Gram matrix with ``kernel="precomputed"``);
* the problems of a fit (``_make_problems``: the problem class, its kernel, its
  hyperparameters ``_hyper``, one label vector per problem from ``_targets``), their
  solution (``_solve_each``) and their certificates (``certify``);
* the multi-class fit and prediction of the binary formulations: one-vs-one (the
  default, as ``SVC``) or one-vs-rest (``multi_class``, :data:`MULTI_CLASS`).

A subclass names its problem class (``_problem_class``) and hyperparameters (``_hyper``,
with their ``_parameter_constraints``), writes its ``__init__`` out, as scikit-learn
requires, and overrides only what its family does differently: mcODM (natively
multi-class) its targets and ``fit``; MKLm (the kernel is learnt) its kernel and ``fit``;
DRR/DRM (transductive) ``fit``, prediction and ``certify``.

The docstrings share their parameter and attribute entries through :mod:`._docs`.
"""
from __future__ import annotations

import numbers
from abc import ABCMeta, abstractmethod

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from refmodels import kernels as _k

from .. import solve as _solve
from ._docs import shared_doc


def _positive():
    """The constraint of a hyperparameter > 0."""
    return [Interval(numbers.Real, 0.0, None, closed="neither")]


def _nonnegative():
    """The constraint of a hyperparameter >= 0."""
    return [Interval(numbers.Real, 0.0, None, closed="left")]


#: constraint of ``multi_class``, the parameter of the binary formulations beyond two classes
MULTI_CLASS = {"multi_class": [StrOptions({"ovo", "ovr"})]}

#: constraints of the parameters every estimator shares (scikit-learn's parameter validation)
_KERNEL_PARAMS = {
    "kernel": [StrOptions({"linear", "rbf", "poly", "precomputed"})],
    "gamma": [StrOptions({"scale", "auto"}), Interval(numbers.Real, 0.0, None, closed="neither")],
    "degree": [Interval(numbers.Integral, 1, None, closed="left")],
    "coef0": [Interval(numbers.Real, 0.0, None, closed="left")],
    "tol": [Interval(numbers.Real, 0.0, None, closed="neither"), None],
    "max_iter": [Interval(numbers.Integral, 1, None, closed="left"), None],
    # None, an int >= 0, a NumPy Generator or a legacy RandomState
    "random_state": [None, Interval(numbers.Integral, 0, None, closed="left"),
                     np.random.Generator, np.random.RandomState],
}


#: constraints of the regularized intercept of ODM, ODML and LDM (a constant feature)
_INTERCEPT = {"fit_intercept": ["boolean"],
              "intercept_scaling": [Interval(numbers.Real, 0.0, None, closed="neither")]}


def gamma_value(gamma, X):
    """``gamma`` as ``SVC`` resolves it on the training data ``X``: ``"scale"`` is
    ``1 / (n_features * X.var())`` (1 when ``X`` has zero variance), ``"auto"`` is
    ``1 / n_features``, a number is itself."""
    if gamma == "scale":
        from refmodels._validation import check_X

        check_X(X, "X", allow_sparse=True)     # X's rule first: its variance could overflow
        var = X.var() if not sp.issparse(X) else (X.multiply(X)).mean() - X.mean() ** 2
        return 1.0 / (X.shape[1] * var) if var > 0 else 1.0
    if gamma == "auto":
        return 1.0 / X.shape[1]
    return float(gamma)


def ovo_votes(scores, pairs, n_classes):
    """One-vs-one class scores, ``SVC``'s ``decision_function_shape="ovr"`` convention.

    ``scores[:, p]`` is the score of the pair ``pairs[p] = (i, j)`` (positive means ``j``).
    Class ``c`` gets one vote per pair it wins (a score ``>= 0`` is ``j``'s win) and the
    sum ``s_c`` of its pair scores (``+score`` as ``j``, ``-score`` as ``i``); the result
    is ``votes + s / (3 (|s| + 1))``: the fraction lies in ``(-1/3, 1/3)``, so it orders
    the classes by votes and only breaks equal votes.
    """
    votes = np.zeros((scores.shape[0], n_classes))
    conf = np.zeros((scores.shape[0], n_classes))
    for p, (i, j) in enumerate(pairs):
        s = scores[:, p]
        win = s >= 0
        votes[:, j] += win
        votes[:, i] += ~win
        conf[:, j] += s
        conf[:, i] -= s
    return votes + conf / (3.0 * (np.abs(conf) + 1.0))


def _weights(sol, X):
    """The weights ``w`` of a linear-kernel solution: its own, or ``X^T coef``."""
    w = sol.variables.get("w")
    return np.asarray(w, float) if w is not None else np.asarray(X.T @ sol.coef).ravel()


@shared_doc
class StoresInitParams:
    """``__init__``'s body for the estimators of :mod:`fast` (this package's and the CV
    searches of :mod:`fast.cv`): ``self._store_params(locals())``."""

    def _store_params(self, args):
        """Store the arguments of ``__init__`` (its ``locals()``) under their names, as
        given: scikit-learn's rule (validation happens in ``fit``)."""
        for name in self._get_param_names():
            setattr(self, name, args[name])


class BaseMarginClassifier(StoresInitParams, ClassifierMixin, BaseEstimator,
                           metaclass=ABCMeta):
    """Base class of the estimators built on the fast solvers.

    Parameter documentation is in the derived classes (as ``BaseLibSVM``'s is in ``SVC``),
    composed from the entries of :mod:`._docs`. A derived class writes its ``__init__`` out
    (scikit-learn reads the parameters and their defaults from its signature) and stores
    every argument unchanged with ``self._store_params(locals())``. A derived class whose
    formulation lacks one of the shared parameters fixes it as a class attribute
    (``MKLmClassifier.kernel = "mkl"``, ``DRRClassifier.random_state = None``), as ``SVC``
    passes ``nu=0.0`` to ``BaseLibSVM``.
    """

    _parameter_constraints: dict = dict(_KERNEL_PARAMS)

    #: the :mod:`refmodels` problem class of the family (set by each subclass)
    _problem_class = None
    #: the hyperparameters passed to the problem class, by name
    _hyper = ()
    #: whether the linear kernel takes CSR input (the coordinate descent does; SMO does not)
    _accepts_sparse = True

    @abstractmethod
    def __init__(self):
        """Written out by each subclass, which calls :meth:`_store_params`."""

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.kernel == "precomputed"
        tags.input_tags.sparse = self.kernel == "linear" and self._accepts_sparse
        return tags

    # ---- kernels --------------------------------------------------------------------------
    def _kernel_object(self, X):
        """The :mod:`refmodels.kernels` object of ``kernel``, ``gamma``, ``degree``,
        ``coef0`` on the training data ``X``."""
        if self.kernel == "linear":
            return _k.Linear()
        if self.kernel == "precomputed":
            return _k.Precomputed()
        gamma = gamma_value(self.gamma, X)
        if self.kernel == "rbf":
            return _k.RBF(gamma=gamma)
        return _k.Polynomial(degree=self.degree, gamma=gamma, coef0=self.coef0)

    def _fit_kernel(self, X):
        """Set the fitted kernel (``kernel_``) on the training data ``X``."""
        self.kernel_ = self._kernel_object(X)

    def _problem_kernel(self):
        """The kernel argument of the problem class."""
        return {"kernel": self.kernel_}

    def _cross(self, X):
        """``K[i, j] = k(x_fit_i, x_j)`` (m x n); with ``kernel="precomputed"``, ``X`` is
        ``K(X, X_fit)`` and must have ``m`` columns."""
        if self.kernel == "precomputed":
            self._check_gram_columns(X, self.shape_fit_[0])
            return np.asarray(X, float).T
        return self.kernel_.cross(self.X_fit_, X)

    # ---- validation -----------------------------------------------------------------------
    def _validate_X_fit(self, X, y):
        sparse = "csr" if (self.kernel == "linear" and self._accepts_sparse) else False
        X, y = validate_data(self, X, y, accept_sparse=sparse, dtype=np.float64)
        if self.kernel == "precomputed" and X.shape[0] != X.shape[1]:
            raise ValueError(f"X must be a square Gram matrix for kernel='precomputed'; got shape "
                             f"{X.shape}")
        check_classification_targets(y)
        return X, y

    def _validate_X_predict(self, X):
        check_is_fitted(self)
        sparse = "csr" if (self.kernel == "linear" and self._accepts_sparse) else False
        X = validate_data(self, X, accept_sparse=sparse, dtype=np.float64, reset=False)
        return X

    def _fit_data(self, X, y):
        """Validate the parameters, ``X`` and ``y``; set ``classes_`` (two or more), the
        fitted kernel, ``shape_fit_`` and ``X_fit_`` (None with ``kernel="precomputed"``)."""
        self._validate_params()
        X, y = self._validate_X_fit(X, y)
        self.classes_ = np.unique(y)
        if self.classes_.size < 2:
            raise ValueError(f"y must contain at least two classes; got one class "
                             f"({self.classes_[0]!r}): a classifier can't train on one class")
        self._fit_kernel(X)
        self.shape_fit_ = X.shape
        self.X_fit_ = X if self.kernel != "precomputed" else None
        return X, y

    def _targets(self, y):
        """The labels of the one-vs-rest problems: ``y`` itself for two classes (the larger
        label is +1), else one ``+1 / -1`` vector per class (that class against the rest)."""
        if self.classes_.size == 2:
            return [y]
        return [np.where(y == c, 1, -1) for c in self.classes_]

    def _one_vs_one(self):
        """Whether the fit is one-vs-one: more than two classes and ``multi_class="ovo"``
        (an estimator without ``multi_class``, natively multi-class, is not)."""
        return self.classes_.size > 2 and getattr(self, "multi_class", "ovr") == "ovo"

    def _pairs(self):
        """The class index pairs ``(i, j)``, ``i < j``, of the one-vs-one problems, in
        ``SVC``'s order ``(0, 1), (0, 2), ..., (1, 2), ...``."""
        k = self.classes_.size
        return [(i, j) for i in range(k) for j in range(i + 1, k)]

    def _subsets(self, y):
        """``(rows, labels)`` of each problem: ``rows`` the training samples it holds (None
        is all of them) and ``labels`` their +1 / -1 labels (or ``y`` itself for two
        classes). One-vs-one, the pair ``(i, j)`` holds the samples of classes ``i`` and
        ``j``, ``classes_[j]`` being +1 as in the two-class problem."""
        if not self._one_vs_one():
            return [(None, t) for t in self._targets(y)]
        out = []
        for i, j in self._pairs():
            rows = np.flatnonzero((y == self.classes_[i]) | (y == self.classes_[j]))
            out.append((rows, np.where(y[rows] == self.classes_[j], 1, -1)))
        return out

    def _rows_of(self, X, rows):
        """The training samples ``rows`` of ``X`` (None: all); with
        ``kernel="precomputed"``, the rows and columns of the Gram matrix."""
        if rows is None:
            return X
        if self.kernel == "precomputed":
            return X[np.ix_(rows, rows)]
        return X[rows]

    @staticmethod
    def _check_gram_columns(X, m):
        """With ``kernel="precomputed"``, prediction takes ``K(X, X_fit)`` with ``m`` columns."""
        if X.shape[1] != m:
            raise ValueError(f"X must be K(X, X_fit) with {m} columns for "
                             f"kernel='precomputed'; got {X.shape[1]}")

    # ---- the problems, their solutions and their certificates -------------------------------
    def _problem_kwargs(self, m=None):
        """The hyperparameters of the problem class, from this estimator's parameters;
        ``lam=None`` is the number of training samples ``m`` (``lam / m = 1``, as ``SVC``'s
        ``C = 1``)."""
        kw = {name: getattr(self, name) for name in self._hyper}
        if "lam" in kw and kw["lam"] is None:
            kw["lam"] = float(self.shape_fit_[0] if m is None else m)
        return kw

    def _solve_options(self):
        """Extra keyword arguments of :func:`fast.solve` (a subclass may add a method)."""
        return {}

    def _make_problems(self, X, y):
        """The problems of ``(X, y)``, one per subset of :meth:`_subsets` (beyond two
        classes: one per pair of classes in :meth:`_pairs` order, one-vs-one, or one per
        class in ``classes_`` order, one-vs-rest), with the fitted kernel (``gamma``
        resolved once, on all of the training data, as ``SVC``) and this estimator's
        hyperparameters (``lam=None`` is the number of samples of each problem)."""
        problems = []
        for rows, t in self._subsets(y):
            Xs = self._rows_of(X, rows)
            problems.append(self._problem_class(Xs, t, **self._problem_kernel(),
                                                **self._problem_kwargs(m=Xs.shape[0])))
        return problems

    def _solve_each(self, problems, rows=None, **options):
        """Solve each problem with :func:`fast.solve`; set ``problems_``, ``solutions_``
        and, stacked over the problems, ``dual_coef_`` (each row over all training samples,
        zero outside the problem's ``rows``), ``intercept_`` and ``n_iter_``."""
        self.problems_ = list(problems)
        self.solutions_ = [_solve(prob, tol=self.tol, max_iter=self.max_iter, **options)
                           for prob in self.problems_]
        rows = [None] * len(self.problems_) if rows is None else rows
        self.dual_coef_ = np.zeros((len(self.problems_), self.shape_fit_[0]))
        for p, (sol, r) in enumerate(zip(self.solutions_, rows)):
            self.dual_coef_[p if r is None else (p, r)] = np.asarray(sol.coef, float)
        self.intercept_ = np.asarray([float(sol.intercept) for sol in self.solutions_])
        n_iter = [sol.n_iter or 0 for sol in self.solutions_]
        self.n_iter_ = n_iter[0] if len(n_iter) == 1 else np.asarray(n_iter)

    def certify(self, X=None, y=None, tol=1e-6):
        """Certify the fitted estimator: the certificate of each problem it solved.

        Refits nothing: each stored solution (``solutions_``) is certified against its
        problem (``problems_``: beyond two classes, one per pair of classes in ``pairs_``
        order, one-vs-one, or one per class in ``classes_`` order, one-vs-rest).
        Given ``X`` and ``y``, the problems are rebuilt on them (with the fitted kernel and
        hyperparameters) and the stored solutions certified against those instead, which
        checks that the estimator is optimal for that data (e.g. the training data after
        the transforms of a pipeline).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or None, default=None
            Training data to certify against; None uses ``problems_``.
        y : array-like of shape (n_samples,) or None, default=None
            Its labels (required with ``X``).
        tol : float > 0, default=1e-6
            Tolerance of the certificates, on SPEC's scaled residuals.

        Returns
        -------
        certificates : list of refmodels.certify.Certificate
            One per problem; ``all(c.ok for c in certificates)`` when the fit is certified.
        """
        check_is_fitted(self)
        return [prob.certify(sol, tol=tol)
                for prob, sol in zip(self._certify_problems(X, y), self.solutions_)]

    def _certify_problems(self, X, y):
        if X is None and y is None:
            return self.problems_
        if X is None or y is None:
            raise ValueError("give both X and y to certify against new data, or neither to "
                             "certify the problems solved by fit (problems_)")
        X = validate_data(self, X, reset=False, dtype=np.float64,
                          accept_sparse="csr" if self.kernel == "linear" else False)
        y = np.asarray(y)
        if X.shape[0] != self.shape_fit_[0] or not np.all(np.isin(y, self.classes_)):
            raise ValueError(f"X, y must be training data of {self.shape_fit_[0]} samples with "
                             f"labels in classes_; got {X.shape[0]} samples")
        return self._make_problems(X, y)

    # ---- fit and prediction of the binary formulations, one-vs-one or one-vs-rest -----------
    def _fit_problems(self, X, y, **options):
        """Build and solve the problems of ``(X, y)`` (validated); set ``pairs_`` too."""
        subsets = self._subsets(y)
        self.pairs_ = np.asarray(self._pairs() if self._one_vs_one() else [], int).reshape(-1, 2)
        self._solve_each(self._make_problems(X, y), rows=[r for r, _ in subsets], **options)
        return subsets

    def fit(self, X, y):
        """Fit the estimator: one problem (two classes), else one per pair of classes
        (``multi_class="ovo"``) or one per class (``"ovr"``).

        Parameters
        ----------
        <<X:fit y:fit>>

        Returns
        -------
        <<self>>
        """
        X, y = self._fit_data(X, y)
        subsets = self._fit_problems(X, y, random_state=self.random_state,
                                     **self._solve_options())
        self.support_ = np.flatnonzero(np.any(self.dual_coef_ != 0, axis=0))
        if self.kernel == "linear":
            # (a bias feature's weight, last in w, is in intercept_ as s w_b)
            self.coef_ = np.vstack([_weights(sol, self._rows_of(X, r))[:X.shape[1]]
                                    for sol, (r, _) in zip(self.solutions_, subsets)])
        return self

    def _raw_scores(self, X):
        """The scores of the points ``X`` before the intercept, one column per row of
        ``dual_coef_``: ``X coef_^T`` with the linear kernel, ``K(X_fit, X)^T dual_coef_^T``
        otherwise."""
        X = self._validate_X_predict(X)
        if self.kernel == "linear":
            return np.asarray(X @ self.coef_.T)
        return self._cross(X).T @ self.dual_coef_.T

    def decision_function(self, X):
        """Compute the scores ``f(x)``.

        Parameters
        ----------
        <<X:score>>

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            Shape (n_samples,) for two classes (positive means ``classes_[1]``);
            otherwise one column per class: one-vs-rest, that class's score;
            one-vs-one, ``SVC``'s ``decision_function_shape="ovr"`` convention: the votes
            of the class plus its summed pair scores ``s`` normalised to
            ``s / (3 (|s| + 1))`` (in ``(-1/3, 1/3)``, so never more than a vote), whose
            argmax is :meth:`predict`. The score of each problem (one-vs-one, of the
            pair ``pairs_[p] = (i, j)``, positive meaning ``classes_[j]``: the opposite
            sign of ``SVC``'s ``decision_function_shape="ovo"``) is
            ``K(X_fit, X)^T dual_coef_[p] + intercept_[p]``.
        """
        return self._class_scores(self._raw_scores(X) + self.intercept_)

    def _class_scores(self, scores):
        """The scores of :meth:`decision_function` from those of the problems (n x n_problems)."""
        if self.classes_.size == 2:
            return scores[:, 0]
        if self.pairs_.size == 0:
            return scores
        return ovo_votes(scores, self.pairs_, self.classes_.size)

    def predict(self, X):
        """Predict class labels.

        Ties are broken by one fixed rule: a binary score of exactly 0 goes to the positive
        class, and equal largest scores to the smallest class index. For two classes,
        ``classes_[1]`` when the score is ``>= 0`` (a score of exactly 0 gives
        ``classes_[1]``, as :meth:`refmodels.base.Problem.predict`). Beyond two classes,
        the argmax of :meth:`decision_function`, equal largest values going to the
        smallest class index (``numpy.argmax``): one-vs-rest, the largest score;
        one-vs-one, the most votes (the pair ``(i, j)`` votes ``classes_[j]`` when its
        score is ``>= 0``, else ``classes_[i]``), equal votes going to the larger summed
        pair score, then to the smallest class index (``SVC(break_ties=True)``'s rule;
        ``SVC``'s default gives equal votes to the smallest index at once).

        Parameters
        ----------
        <<X:predict>>

        Returns
        -------
        <<y_pred>>
        """
        scores = self.decision_function(X)
        if self.classes_.size == 2:
            return self.classes_[(scores >= 0).astype(int)]
        return self.classes_[np.argmax(scores, axis=1)]
