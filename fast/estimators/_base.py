"""The shared base of the estimators, as scikit-learn's ``BaseLibSVM`` serves ``SVC``.

:class:`BaseMarginClassifier` holds what every estimator of :mod:`fast.estimators` shares:

* the parameters ``kernel``, ``gamma``, ``degree``, ``coef0`` (``SVC``'s conventions),
  ``tol``, ``max_iter`` and ``random_state``: stored by its ``__init__``, validated by its
  ``_parameter_constraints``, turned into a :mod:`refmodels.kernels` object by
  :meth:`~BaseMarginClassifier._kernel_object`;
* the validation of ``X`` and ``y`` for ``fit`` and of ``X`` for prediction (dense, or CSR
  with the linear kernel; a square Gram matrix with ``kernel="precomputed"``);
* the one-vs-rest fit and prediction of the binary formulations: a subclass names its
  problem class (``_problem_class``) and the hyperparameters it passes to it (``_hyper``),
  and writes its ``__init__`` out, as scikit-learn requires.

The estimators that are not binary formulations solved one-vs-rest (mcODM, natively
multi-class; DRR/DRM, transductive; MKLm, whose kernel is learnt) write their own ``fit``
and prediction on the same helpers.
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


def _positive():
    """The constraint of a hyperparameter > 0."""
    return [Interval(numbers.Real, 0.0, None, closed="neither")]


def _nonnegative():
    """The constraint of a hyperparameter >= 0."""
    return [Interval(numbers.Real, 0.0, None, closed="left")]


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


def gamma_value(gamma, X):
    """``gamma`` as ``SVC`` resolves it on the training data ``X``: ``"scale"`` is
    ``1 / (n_features * X.var())`` (1 when ``X`` has zero variance), ``"auto"`` is
    ``1 / n_features``, a number is itself."""
    if gamma == "scale":
        var = X.var() if not sp.issparse(X) else (X.multiply(X)).mean() - X.mean() ** 2
        return 1.0 / (X.shape[1] * var) if var > 0 else 1.0
    if gamma == "auto":
        return 1.0 / X.shape[1]
    return float(gamma)


#: the numpydoc entries of the shared parameters, written once (``duplicates`` found them
#: repeated in every class): ``name -> (type, {variant: description})``; the default in each
#: entry's header is read from the estimator's signature by :func:`shared_doc`
_SHARED_PARAM_DOCS = {
    "kernel": ('{"linear", "rbf", "poly", "precomputed"}', {"": """\
The kernel, as in ``SVC``: ``"linear"`` is ``x^T z``, ``"rbf"`` is
``exp(-gamma ||x - z||^2)``, ``"poly"`` is ``(gamma x^T z + coef0)^degree``;
with ``"precomputed"``, ``X`` is the Gram matrix in ``fit`` and ``K(X, X_fit)``
in prediction."""}),
    "gamma": ('{"scale", "auto"} or float > 0', {"": """\
Kernel coefficient of ``"rbf"`` and ``"poly"``, as in ``SVC``: ``"scale"`` is
``1 / (n_features * X.var())``, ``"auto"`` is ``1 / n_features``."""}),
    "degree": ("int >= 1", {"": 'Degree of the ``"poly"`` kernel; ignored by the others.'}),
    "coef0": ("float >= 0", {"": 'Constant term of the ``"poly"`` kernel; ignored by the others.'}),
    "tol": ("float > 0 or None", {
        "": """\
Stopping tolerance of the solver. None is the solver's default, tight enough for
the returned point to certify at 1e-6 (``prob.certify(sol).ok``); a looser value is
the speed setting.""",
        "iterative": "Stopping tolerance of the iterative methods (None: their default).",
        "outer": """\
Stopping rule of the outer loop: the relative change of ``W`` between rounds
(None: 1e-6)."""}),
    "max_iter": ("int >= 1 or None", {
        "dcd": """\
Iteration limit of the solver (epochs of the coordinate descent). None is a bound
by work; a solve that reaches it warns (``ConvergenceWarning``).""",
        "svm": """\
Iteration limit of the solver (epochs of the coordinate descent, iterations of the
SMO). None is a bound by work; a solve that reaches it warns
(``ConvergenceWarning``).""",
        "smo": """\
Iteration limit of the SMO. None is a bound by work; a solve that reaches it warns
(``ConvergenceWarning``).""",
        "iterative": "Iteration limit of the iterative methods (None: their default).",
        "outer": """\
Epochs of the block coordinate descent in each relaxed solve (None: the solver's
bound by work)."""}),
    "random_state": ("int >= 0, numpy.random.Generator, RandomState or None", {
        "dcd": "Seed of the coordinate descent's permutation of the points.",
        "smo": "Seed passed to the solver (the SMO's choice of pairs is deterministic).",
        "bcd": "Seed of the block coordinate descent's permutation of the points."}),
}

#: the numpydoc entries of the shared attributes (no default in their header)
_SHARED_PARAM_DOCS.update({
    "classes_": ("ndarray of shape (n_classes,)", {"": "The class labels."}),
    "dual_coef_": ("ndarray of shape (n_problems, n_samples)", {
        "": """\
Coefficients over the training points: ``f_p(x) = sum_i dual_coef_[p, i] k(x_i, x)``;
one row for two classes, one per class otherwise.""",
        "b": """\
Coefficients over the training points: ``f_p(x) = sum_i dual_coef_[p, i] k(x_i, x)
+ intercept_[p]``; one row for two classes, one per class otherwise."""}),
    "intercept_": ("ndarray of shape (n_problems,)", {
        "": "Zeros (the formulation has no intercept).",
        "b": "The intercepts ``b``.",
        "svm": "The intercepts (zeros with ``fit_intercept=False``)."}),
    "n_iter_": ("int or ndarray of shape (n_problems,)", {
        "": "Solver epochs, one per problem beyond two classes.",
        "smo": "Solver iterations, one per problem beyond two classes.",
        "svm": "Solver iterations (epochs), one per problem beyond two classes."}),
    "coef_": ("ndarray of shape (n_problems, n_features)",
              {"": "The weights ``w`` in input space; linear kernel only."}),
    "support_": ("ndarray of shape (n_support,)", {"": """\
Indices of the training points with a non-zero coefficient in some problem."""}),
    "problems_": ("list of refmodels problems", {"": """\
The binary problems solved, one per class beyond two (in ``classes_`` order)."""}),
    "solutions_": ("list of refmodels.Solution", {"": """\
The solution of each problem; :meth:`certify` certifies them."""}),
    "kernel_": ("refmodels.kernels.Kernel", {"": "The kernel object, with ``gamma`` resolved."}),
    "X_fit_": ("ndarray or sparse matrix of shape (n_samples, n_features) or None", {"": """\
The training points (None with ``kernel="precomputed"``)."""}),
    "shape_fit_": ("tuple of int", {"": "Shape of the training ``X``."}),
    "n_features_in_": ("int", {"": "Number of features seen during ``fit``."}),
    "feature_names_in_": ("ndarray of shape (n_features_in_,)", {"": """\
Names of the features seen during ``fit``, when ``X`` has string column names."""}),
})


def shared_doc(**variants):
    """Class decorator: replace each ``<<name name ...>>`` of the docstring (one line, or
    several) by the numpydoc entries of those shared parameters and attributes
    (:data:`_SHARED_PARAM_DOCS`), one entry per name, with a parameter's default read from
    the class's signature; ``variants`` picks the description of a name that has several
    (``max_iter="smo"``)."""
    import inspect
    import re
    import textwrap

    def entries(names, indent, sig):
        out = []
        for name in names:
            typ, texts = _SHARED_PARAM_DOCS[name]
            text = texts[variants.get(name, next(iter(texts)))]
            default = (f", default={sig[name].default!r}".replace("'", '"') if name in sig
                       else "")
            out.append(f"{indent}{name} : {typ}{default}")
            out.append(textwrap.indent(text, indent + "    "))
        return "\n".join(out)

    def deco(cls):
        sig = inspect.signature(cls.__init__).parameters
        cls.__doc__ = re.sub(r"^( *)<<([\w\s]+?)>>$",
                             lambda m: entries(m.group(2).split(), m.group(1), sig),
                             cls.__doc__, flags=re.M)
        return cls

    return deco


class BaseMarginClassifier(ClassifierMixin, BaseEstimator, metaclass=ABCMeta):
    """Base class of the estimators built on the fast solvers.

    Parameter documentation is in the derived classes (as ``BaseLibSVM``'s is in ``SVC``).
    A derived class whose formulation lacks one of the shared parameters passes a fixed
    value for it (``MKLmClassifier`` passes ``kernel="mkl"``, ``DRRClassifier``
    ``random_state=None``), as ``SVC`` passes ``nu=0.0`` to ``BaseLibSVM``.
    """

    _parameter_constraints: dict = dict(_KERNEL_PARAMS)

    #: the :mod:`refmodels` problem class of a binary formulation (set by each subclass)
    _problem_class = None
    #: the hyperparameters passed to the problem class, by name
    _hyper = ()
    #: whether the linear kernel takes CSR input (the coordinate descent does; SMO does not)
    _accepts_sparse = True

    @abstractmethod
    def __init__(self, *, kernel, gamma, degree, coef0, tol, max_iter, random_state):
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.tol = tol
        self.max_iter = max_iter
        self.random_state = random_state

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

    def _cross(self, X):
        """``K[i, j] = k(x_fit_i, x_j)`` (m x n)."""
        if self.kernel == "precomputed":
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
        """Validate the parameters, ``X`` and ``y``, and set ``classes_`` (two or more)."""
        self._validate_params()
        X, y = self._validate_X_fit(X, y)
        self.classes_ = np.unique(y)
        if self.classes_.size < 2:
            raise ValueError(f"y must contain at least two classes; got one class "
                             f"({self.classes_[0]!r}): a classifier can't train on one class")
        return X, y

    def _ovr_targets(self, y):
        """The labels of the binary problems: ``y`` itself for two classes (the larger label
        is +1), else one ``+1 / -1`` vector per class (that class against the rest)."""
        if self.classes_.size == 2:
            return [y]
        return [np.where(y == c, 1, -1) for c in self.classes_]

    @staticmethod
    def _check_gram_columns(X, m):
        """With ``kernel="precomputed"``, prediction takes ``K(X, X_fit)`` with ``m`` columns."""
        if X.shape[1] != m:
            raise ValueError(f"X must be K(X, X_fit) with {m} columns for "
                             f"kernel='precomputed'; got {X.shape[1]}")

    # ---- binary formulations, one-vs-rest beyond two classes -------------------------------
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
        """The binary problems of ``(X, y)``, one per class beyond two (in ``classes_``
        order), with the fitted kernel and this estimator's hyperparameters."""
        kw = self._problem_kwargs(m=X.shape[0])
        return [self._problem_class(X, t, kernel=self.kernel_, **kw) for t in self._ovr_targets(y)]

    def certify(self, X=None, y=None, tol=1e-6):
        """Certify the fitted estimator: the certificate of each problem it solved.

        Refits nothing: each stored solution (``solutions_``) is certified against its
        problem (``problems_``, one per one-vs-rest binary problem in ``classes_`` order).
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

    def fit(self, X, y):
        """Fit the estimator: one problem (two classes) or one per class (one-vs-rest).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features) or (n_samples, n_samples)
            Training vectors (CSR accepted with the linear kernel); the Gram matrix with
            ``kernel="precomputed"``.
        y : array-like of shape (n_samples,)
            Class labels (two or more classes).

        Returns
        -------
        self : object
            The fitted estimator.
        """
        X, y = self._fit_data(X, y)
        self.kernel_ = self._kernel_object(X)
        coefs, intercepts, n_iter, ws = [], [], [], []
        self.problems_, self.solutions_ = [], []
        for prob in self._make_problems(X, y):
            sol = _solve(prob, tol=self.tol, max_iter=self.max_iter,
                         random_state=self.random_state, **self._solve_options())
            self.problems_.append(prob)
            self.solutions_.append(sol)
            coefs.append(np.asarray(sol.coef, float))
            intercepts.append(float(sol.intercept))
            n_iter.append(sol.n_iter or 0)
            if self.kernel == "linear":
                w = sol.variables.get("w")
                ws.append(np.asarray(w, float) if w is not None
                          else np.asarray(X.T @ sol.coef).ravel())
        self.dual_coef_ = np.vstack(coefs)
        self.intercept_ = np.asarray(intercepts)
        self.support_ = np.flatnonzero(np.any(self.dual_coef_ != 0, axis=0))
        self.n_iter_ = max(n_iter) if len(n_iter) == 1 else np.asarray(n_iter)
        if self.kernel == "linear":
            self.coef_ = np.vstack(ws)
        self.X_fit_ = X if self.kernel != "precomputed" else None
        self.shape_fit_ = X.shape
        return self

    def decision_function(self, X):
        """Compute the scores ``f(x)``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features) or (n_samples, n_samples_fit)
            Points to score; ``K(X, X_fit)`` with ``kernel="precomputed"``.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            Shape (n_samples,) for two classes (positive means ``classes_[1]``);
            one column per class (one-vs-rest) otherwise.
        """
        X = self._validate_X_predict(X)
        if self.kernel == "linear":
            scores = np.asarray(X @ self.coef_.T) + self.intercept_
        else:
            if self.kernel == "precomputed":
                self._check_gram_columns(X, self.shape_fit_[0])
            scores = self._cross(X).T @ self.dual_coef_.T + self.intercept_
        return scores[:, 0] if self.classes_.size == 2 else scores

    def predict(self, X):
        """Predict class labels.

        Ties are broken by a fixed rule: for two classes, ``classes_[1]`` when the score is
        ``>= 0`` (a score of exactly 0 gives ``classes_[1]``, as
        :meth:`refmodels.base.Problem.predict`); one-vs-rest beyond two classes, the class
        of the largest score, equal largest scores going to the smallest class index
        (``numpy.argmax``).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features) or (n_samples, n_samples_fit)
            Points to classify; ``K(X, X_fit)`` with ``kernel="precomputed"``.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            Predicted labels.
        """
        scores = self.decision_function(X)
        if self.classes_.size == 2:
            return self.classes_[(scores >= 0).astype(int)]
        return self.classes_[np.argmax(scores, axis=1)]
