"""scikit-learn estimators built on the fast solvers.

Every estimator builds the :mod:`refmodels` problem of its family and solves it with
:func:`fast.solve`, so a fitted estimator's numbers are SPEC's canonical ones.
Binary formulations handle more than two classes one-vs-rest, as ``LinearSVC`` does
(one problem per class, that class +1 against the rest; prediction by the largest score).
Kernels are given as in ``SVC``: ``kernel`` in ``"linear"``, ``"rbf"``, ``"poly"``,
``"precomputed"`` with ``gamma`` (``"scale"``, ``"auto"`` or a number), ``degree``, ``coef0``.

``sample_weight`` and ``class_weight`` are not supported: the formulations of SPEC weigh
every sample equally (the margin mean and variance are unweighted), and a weighted variant
would be a different problem; ``fit`` has no ``sample_weight`` argument rather than one
that is ignored.
"""
from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from refmodels import kernels as _k

from . import solve as _solve

_KERNEL_PARAMS = {
    "kernel": [StrOptions({"linear", "rbf", "poly", "precomputed"})],
    "gamma": [StrOptions({"scale", "auto"}), Interval(numbers.Real, 0.0, None, closed="neither")],
    "degree": [Interval(numbers.Integral, 1, None, closed="left")],
    "coef0": [Interval(numbers.Real, 0.0, None, closed="left")],
    "tol": [Interval(numbers.Real, 0.0, None, closed="neither"), None],
    "max_iter": [Interval(numbers.Integral, 1, None, closed="left"), None],
    "random_state": ["random_state"],
}


def _positive():
    return [Interval(numbers.Real, 0.0, None, closed="neither")]


def _nonnegative():
    return [Interval(numbers.Real, 0.0, None, closed="left")]


class _KernelClassifierMixin:
    """Kernel handling shared by all estimators (SVC's conventions)."""

    def _kernel_object(self, X):
        if self.kernel == "linear":
            return _k.Linear()
        if self.kernel == "precomputed":
            return _k.Precomputed()
        if self.gamma == "scale":
            var = X.var() if not sp.issparse(X) else (X.multiply(X)).mean() - X.mean() ** 2
            gamma = 1.0 / (X.shape[1] * var) if var > 0 else 1.0
        elif self.gamma == "auto":
            gamma = 1.0 / X.shape[1]
        else:
            gamma = float(self.gamma)
        if self.kernel == "rbf":
            return _k.RBF(gamma=gamma)
        return _k.Polynomial(degree=self.degree, gamma=gamma, coef0=self.coef0)

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

    def _cross(self, X):
        """``K[i, j] = k(x_fit_i, x_j)`` (m x n)."""
        if self.kernel == "precomputed":
            return np.asarray(X, float).T
        return self.kernel_.cross(self.X_fit_, X)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.kernel == "precomputed"
        tags.input_tags.sparse = self.kernel == "linear" and self._accepts_sparse
        return tags


class _OvRMarginClassifier(_KernelClassifierMixin, ClassifierMixin, BaseEstimator):
    """A binary formulation of :mod:`refmodels`, one-vs-rest beyond two classes."""

    _problem = None          # refmodels class name
    _hyper = ()              # hyperparameter names passed to the problem
    _accepts_sparse = True

    def _problem_kwargs(self):
        return {name: getattr(self, name) for name in self._hyper}

    def _solve_options(self):
        return {}

    def fit(self, X, y):
        """Fit one problem (two classes) or one per class (one-vs-rest)."""
        self._validate_params()
        X, y = self._validate_X_fit(X, y)
        self.classes_ = np.unique(y)
        if self.classes_.size < 2:
            raise ValueError(f"y must contain at least two classes; got one class "
                             f"({self.classes_[0]!r}): a classifier can't train on one class")
        import refmodels as rm

        cls = getattr(rm, self._problem)
        self.kernel_ = self._kernel_object(X)
        targets = [y] if self.classes_.size == 2 else [np.where(y == c, 1, -1)
                                                        for c in self.classes_]
        coefs, intercepts, n_iter, ws = [], [], [], []
        self.solutions_ = []
        for t in targets:
            prob = cls(X, t, kernel=self.kernel_, **self._problem_kwargs())
            sol = _solve(prob, tol=self.tol, max_iter=self.max_iter,
                         random_state=self.random_state, **self._solve_options())
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
        """Scores ``f(x)``: shape (n,) for two classes (positive means ``classes_[1]``),
        (n, n_classes) one-vs-rest otherwise."""
        X = self._validate_X_predict(X)
        if self.kernel == "linear":
            scores = np.asarray(X @ self.coef_.T) + self.intercept_
        else:
            if self.kernel == "precomputed" and X.shape[1] != self.shape_fit_[0]:
                raise ValueError(f"X must be K(X, X_fit) with {self.shape_fit_[0]} columns for "
                                 f"kernel='precomputed'; got {X.shape[1]}")
            scores = self._cross(X).T @ self.dual_coef_.T + self.intercept_
        return scores[:, 0] if self.classes_.size == 2 else scores

    def predict(self, X):
        scores = self.decision_function(X)
        if self.classes_.size == 2:
            return self.classes_[(scores > 0).astype(int)]
        return self.classes_[np.argmax(scores, axis=1)]


def _estimator_doc(family, objective, params, spec, extra=""):
    return f"""{family} classifier on the fast solver (SPEC {spec}).

    .. math::

        {objective}

    Parameters
    ----------
{params}
    kernel : {{"linear", "rbf", "poly", "precomputed"}}, default "linear"
    gamma : {{"scale", "auto"}} or float > 0, default "scale" (as ``SVC``)
    degree : int >= 1, default 3;  coef0 : float >= 0, default 0.0 (polynomial kernel)
    tol : float > 0 or None (the solver's default, tight enough to certify at 1e-6)
    max_iter : int or None;  random_state : int, Generator or None
{extra}
    Attributes
    ----------
    classes_ : labels;  dual_coef_ : (n_problems, n_samples) coefficients over training
    points (``f(x) = sum_i dual_coef_[p, i] k(x_i, x) + intercept_[p]``);  intercept_;
    coef_ : (n_problems, n_features), linear kernel only;  support_ : indices with a
    non-zero coefficient;  n_iter_ : solver iterations (epochs);  solutions_ : the
    :class:`refmodels.Solution` of each binary problem (certify them with the problem).

    More than two classes: one-vs-rest (one problem per class), as ``LinearSVC``.
    ``sample_weight`` / ``class_weight`` are not supported (see the module docstring).

    See Also
    --------
    sklearn.svm.SVC, sklearn.svm.LinearSVC

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> clf = make_pipeline(StandardScaler(), {family}Classifier()).fit(X, y)
    >>> clf.score(X, y) > 0.95
    True
    """


class SVMClassifier(_OvRMarginClassifier):
    _problem = "SVM"
    _hyper = ("C", "fit_intercept")
    _parameter_constraints = {"C": _positive(), "fit_intercept": ["boolean"], **_KERNEL_PARAMS}

    def __init__(self, C=1.0, *, fit_intercept=True, kernel="linear", gamma="scale", degree=3,
                 coef0=0.0, tol=None, max_iter=None, random_state=None):
        self.C, self.fit_intercept = C, fit_intercept
        self.kernel, self.gamma, self.degree, self.coef0 = kernel, gamma, degree, coef0
        self.tol, self.max_iter, self.random_state = tol, max_iter, random_state


SVMClassifier.__doc__ = _estimator_doc(
    "SVM", r"\min \tfrac12\|w\|^2 + C\sum_i \xi_i,\ y_i(w^\top\phi(x_i)+b)\ge 1-\xi_i",
    "    C : float > 0, default 1.0\n    fit_intercept : bool, default True (SVC's convention; "
    "solved by the SMO).\n        False is LIBLINEAR's convention (dual coordinate descent).",
    "§1")


class ODMLClassifier(_OvRMarginClassifier):
    _problem = "ODML"
    _hyper = ("lam", "mu1", "mu2")
    _parameter_constraints = {"lam": _positive(), "mu1": _nonnegative(), "mu2": _nonnegative(),
                              **_KERNEL_PARAMS}

    def __init__(self, lam=1.0, mu1=0.1, mu2=0.1, *, kernel="linear", gamma="scale", degree=3,
                 coef0=0.0, tol=None, max_iter=None, random_state=None):
        self.lam, self.mu1, self.mu2 = lam, mu1, mu2
        self.kernel, self.gamma, self.degree, self.coef0 = kernel, gamma, degree, coef0
        self.tol, self.max_iter, self.random_state = tol, max_iter, random_state


ODMLClassifier.__doc__ = _estimator_doc(
    "ODML", r"\min \tfrac12\|w\|^2 + \mu_1\gamma_v - \mu_2\gamma_m + \frac{\lambda}{m}\sum_i\xi_i",
    "    lam : float > 0, default 1.0\n    mu1 : float >= 0, default 0.1 (margin variance)\n"
    "    mu2 : float >= 0, default 0.1 (margin mean)", "§2")


class LDMClassifier(_OvRMarginClassifier):
    _problem = "LDM"
    _hyper = ("C", "lam1", "lam2")
    _parameter_constraints = {"C": _positive(), "lam1": _nonnegative(), "lam2": _nonnegative(),
                              **_KERNEL_PARAMS}

    def __init__(self, C=1.0, lam1=0.05, lam2=0.05, *, kernel="linear", gamma="scale", degree=3,
                 coef0=0.0, tol=None, max_iter=None, random_state=None):
        self.C, self.lam1, self.lam2 = C, lam1, lam2
        self.kernel, self.gamma, self.degree, self.coef0 = kernel, gamma, degree, coef0
        self.tol, self.max_iter, self.random_state = tol, max_iter, random_state


LDMClassifier.__doc__ = _estimator_doc(
    "LDM", r"\min \tfrac12\|w\|^2 + \lambda_1\hat\gamma - \lambda_2\gamma_m + C\sum_i\xi_i",
    "    C : float > 0, default 1.0\n    lam1 : float >= 0, default 0.05 (pairwise margin "
    "variance)\n    lam2 : float >= 0, default 0.05 (margin mean)", "§3")


class ODMClassifier(_OvRMarginClassifier):
    _problem = "ODM"
    _hyper = ("lam", "mu", "theta")
    _parameter_constraints = {"lam": _positive(), "mu": _positive(),
                              "theta": [Interval(numbers.Real, 0.0, 1.0, closed="left")],
                              **_KERNEL_PARAMS}

    def __init__(self, lam=1.0, mu=0.5, theta=0.3, *, kernel="linear", gamma="scale", degree=3,
                 coef0=0.0, tol=None, max_iter=None, random_state=None):
        self.lam, self.mu, self.theta = lam, mu, theta
        self.kernel, self.gamma, self.degree, self.coef0 = kernel, gamma, degree, coef0
        self.tol, self.max_iter, self.random_state = tol, max_iter, random_state


ODMClassifier.__doc__ = _estimator_doc(
    "ODM", r"\min \tfrac12\|w\|^2 + \frac{\lambda}{m(1-\theta)^2}\sum_i(\xi_i^2+\mu\epsilon_i^2)",
    "    lam : float > 0, default 1.0\n    mu : float > 0, default 0.5\n"
    "    theta : float in [0, 1), default 0.3", "§4")


class SVMmClassifier(_OvRMarginClassifier):
    _problem = "SVMm"
    _hyper = ("C1", "C2", "eps")
    _accepts_sparse = False
    _parameter_constraints = {"C1": _positive(), "C2": _nonnegative(), "eps": _nonnegative(),
                              **_KERNEL_PARAMS}

    def __init__(self, C1=1.0, C2=0.5, eps=0.5, *, kernel="linear", gamma="scale", degree=3,
                 coef0=0.0, tol=None, max_iter=None, random_state=None):
        self.C1, self.C2, self.eps = C1, C2, eps
        self.kernel, self.gamma, self.degree, self.coef0 = kernel, gamma, degree, coef0
        self.tol, self.max_iter, self.random_state = tol, max_iter, random_state


SVMmClassifier.__doc__ = _estimator_doc(
    "SVMm", r"\min \tfrac12\|w\|^2 + C_1\sum_i\xi_i + C_2\sum_i\eta_i,\ "
    r"1-\xi_i \le y_i f(x_i) \le 1+\varepsilon+\eta_i",
    "    C1 : float > 0, default 1.0\n    C2 : float >= 0, default 0.5\n"
    "    eps : float >= 0, default 0.5 (0 is the eps-SVM)", "§6")


class McODMClassifier(_KernelClassifierMixin, ClassifierMixin, BaseEstimator):
    """Multi-class ODM on the fast solver (SPEC §5; seed 002 §4, Alg. 3).

    .. math::

        \\min \\tfrac12\\sum_l\\|w_l\\|^2 + \\frac{\\lambda}{m(1-\\theta)^2}\\sum_i(\\xi_i^2+\\mu\\epsilon_i^2),
        \\quad \\gamma(x, y) = s_y(x) - \\max_{l\\ne y}s_l(x)

    solved by Alg. 3's outer loop (relaxed QP at ``M`` from the previous iterate, block
    coordinate descent inside). Natively multi-class (also for two classes: two score
    functions). The problem is non-convex; the fitted point is a fixed point of Alg. 3 whose
    relaxed QP is certified (see :class:`refmodels.McODM`). No intercept (as the seed).

    Parameters
    ----------
    lam : float > 0, default 1.0;  mu : float > 0, default 0.5;  theta : float in [0, 1),
    default 0.3
    kernel, gamma, degree, coef0 : as ``SVC``
    tol : float > 0 or None: relative change of ``W`` between rounds (default 1e-6)
    max_iter : int or None: epochs of each relaxed solve;  max_outer : int, default 50
    random_state : int, Generator or None

    Attributes
    ----------
    classes_;  dual_coef_ : (n_classes, n_samples), ``s_l(x) = sum_i dual_coef_[l, i] k(x_i, x)``;
    coef_ : (n_classes, n_features), linear kernel only;  n_iter_ : outer rounds;
    solution_ : the :class:`refmodels.Solution`.

    ``sample_weight`` / ``class_weight`` are not supported.

    Examples
    --------
    >>> from sklearn.datasets import load_wine
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> X, y = load_wine(return_X_y=True)
    >>> make_pipeline(StandardScaler(), McODMClassifier(kernel="rbf")).fit(X, y).score(X, y) > 0.95
    True
    """

    _accepts_sparse = False
    _parameter_constraints = {"lam": _positive(), "mu": _positive(),
                              "theta": [Interval(numbers.Real, 0.0, 1.0, closed="left")],
                              "max_outer": [Interval(numbers.Integral, 1, None, closed="left")],
                              **_KERNEL_PARAMS}

    def __init__(self, lam=1.0, mu=0.5, theta=0.3, *, kernel="linear", gamma="scale", degree=3,
                 coef0=0.0, tol=None, max_iter=None, max_outer=50, random_state=None):
        self.lam, self.mu, self.theta = lam, mu, theta
        self.kernel, self.gamma, self.degree, self.coef0 = kernel, gamma, degree, coef0
        self.tol, self.max_iter, self.max_outer, self.random_state = (tol, max_iter, max_outer,
                                                                      random_state)

    def fit(self, X, y):
        self._validate_params()
        X, y = self._validate_X_fit(X, y)
        self.classes_ = np.unique(y)
        if self.classes_.size < 2:
            raise ValueError(f"y must contain at least two classes; got one class "
                             f"({self.classes_[0]!r}): a classifier can't train on one class")
        import refmodels as rm

        self.kernel_ = self._kernel_object(X)
        prob = rm.McODM(X, y, lam=self.lam, mu=self.mu, theta=self.theta, kernel=self.kernel_)
        sol = _solve(prob, tol=self.tol, max_iter=self.max_iter, random_state=self.random_state,
                     max_outer=self.max_outer)
        self.solution_ = sol
        self.dual_coef_ = np.asarray(sol.coef, float).T
        self.n_iter_ = int(sol.n_iter or 1)
        if self.kernel == "linear":
            self.coef_ = self.dual_coef_ @ X
        self.X_fit_ = X if self.kernel != "precomputed" else None
        self.shape_fit_ = X.shape
        return self

    def _scores(self, X):
        X = self._validate_X_predict(X)
        if self.kernel == "linear":
            return X @ self.coef_.T
        if self.kernel == "precomputed" and X.shape[1] != self.shape_fit_[0]:
            raise ValueError(f"X must be K(X, X_fit) with {self.shape_fit_[0]} columns for "
                             f"kernel='precomputed'; got {X.shape[1]}")
        return self._cross(X).T @ self.dual_coef_.T

    def decision_function(self, X):
        """Scores ``s_l(x)``, shape (n, n_classes); for two classes, scikit-learn's binary
        convention: the shape (n,) score ``s_1(x) - s_0(x)`` (positive means ``classes_[1]``)."""
        S = self._scores(X)
        return S[:, 1] - S[:, 0] if S.shape[1] == 2 else S

    def predict(self, X):
        S = self._scores(X)
        return self.classes_[np.argmax(S, axis=1)]


class DRRClassifier(_KernelClassifierMixin, ClassifierMixin, BaseEstimator):
    """Discriminative ridge regression classifier on the fast solvers (SPEC §8; seed 004).

    .. math::

        \\min_w\\ \\tfrac12 w^\\top(K+\\alpha H-\\alpha B)w - K_x^\\top w + \\beta\\,\\rho(\\|w|C\\|_{q,r})

    solved for every test point ``x`` (a batch of right-hand sides), then the decision rule of
    eqs. 10–11: ``delta_c = w_c^T K w_c + w_cbar^T K w_cbar - 2 w_c^T K_x``, predict
    ``argmin_c delta_c``. DRR is transductive: ``fit`` stores the training set (and checks it),
    the optimisation runs in ``predict`` / ``decision_function`` for the points given.

    Parameters
    ----------
    alpha : float >= 0, default 1.0 (within-class scatter weight)
    beta : float > 0, default 1.0 (regularization weight)
    q, r : float in [1, inf], default 2, 2 (group norm ``||w|C||_{q,r}``, groups = classes)
    rho : "identity", "half_square" or a number p >= 1 (``t^p/p``), default "half_square"
    regularizer : refmodels.regularizers.Regularizer or None; replaces ``(q, r, rho)``. This
        is how a regularizer a user wrote is cross-validated like any estimator.
    kernel : default "rbf";  gamma, degree, coef0 : as ``SVC``
    method : str or None (``fast.solve``'s DRR methods: "closed_form", "gd", "ppa",
        "linear_ppa", "apg"; None picks closed form for DRM, APG otherwise)
    tol, max_iter : the iterative methods' stopping rule (None: their defaults)

    Attributes
    ----------
    classes_;  X_fit_, y_fit_ : the training set. ``solve(X)`` returns the problem of test
    points ``X`` and its :class:`refmodels.Solution`, to certify.

    ``decision_function`` returns ``-delta_c`` (larger is more likely), shape (n, n_classes),
    or ``delta_0 - delta_1`` (positive means ``classes_[1]``) for two classes.
    ``sample_weight`` / ``class_weight`` are not supported.

    Examples
    --------
    >>> from sklearn.datasets import load_wine
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> X, y = load_wine(return_X_y=True)
    >>> make_pipeline(StandardScaler(), DRMClassifier()).fit(X, y).score(X, y) > 0.95
    True
    """

    _accepts_sparse = False
    _parameter_constraints = {
        "alpha": _nonnegative(), "beta": _positive(),
        "q": [Interval(numbers.Real, 1.0, None, closed="left")],
        "r": [Interval(numbers.Real, 1.0, None, closed="left")],
        "rho": [StrOptions({"identity", "half_square"}),
                Interval(numbers.Real, 1.0, None, closed="left")],
        "regularizer": [None, HasMethods(["expr", "value", "prox"])],
        "method": [None, str],
        **_KERNEL_PARAMS,
    }

    def __init__(self, alpha=1.0, beta=1.0, q=2, r=2, rho="half_square", regularizer=None, *,
                 kernel="rbf", gamma="scale", degree=3, coef0=0.0, method=None, tol=None,
                 max_iter=None):
        self.alpha, self.beta, self.q, self.r, self.rho = alpha, beta, q, r, rho
        self.regularizer = regularizer
        self.kernel, self.gamma, self.degree, self.coef0 = kernel, gamma, degree, coef0
        self.method, self.tol, self.max_iter = method, tol, max_iter

    def _problem(self, X_new):
        import refmodels as rm

        if self.regularizer is not None:
            return rm.DRR(self.X_fit_, self.y_fit_, X_new, alpha=self.alpha, beta=self.beta,
                          kernel=self.kernel_, regularizer=self.regularizer)
        return rm.DRR(self.X_fit_, self.y_fit_, X_new, alpha=self.alpha, beta=self.beta,
                      q=self.q, r=self.r, rho=self.rho, kernel=self.kernel_)

    def fit(self, X, y):
        self._validate_params()
        X, y = self._validate_X_fit(X, y)
        self.classes_ = np.unique(y)
        if self.classes_.size < 2:
            raise ValueError(f"y must contain at least two classes; got one class "
                             f"({self.classes_[0]!r}): a classifier can't train on one class")
        self.kernel_ = self._kernel_object(X)
        self.X_fit_, self.y_fit_ = X, y
        self._problem(X[:1] if self.kernel != "precomputed" else X[:1])   # validates now
        self.n_iter_ = 1
        return self

    def _neg_delta(self, X):
        X = self._validate_X_predict(X)
        if self.kernel == "precomputed" and X.shape[1] != self.X_fit_.shape[0]:
            raise ValueError(f"X must be K(X, X_fit) with {self.X_fit_.shape[0]} columns for "
                             f"kernel='precomputed'; got {X.shape[1]}")
        prob = self._problem(X)
        sol = _solve(prob, method=self.method, tol=self.tol, max_iter=self.max_iter)
        return -prob.dissimilarities(sol)

    def solve(self, X):
        """The :class:`refmodels.DRR` problem of the test points ``X`` and its fast solution
        ``(prob, sol)``: certify it with ``prob.certify(sol)``."""
        X = self._validate_X_predict(X)
        prob = self._problem(X)
        return prob, _solve(prob, method=self.method, tol=self.tol, max_iter=self.max_iter)

    def decision_function(self, X):
        S = self._neg_delta(X)
        return S[:, 1] - S[:, 0] if S.shape[1] == 2 else S

    def predict(self, X):
        S = self._neg_delta(X)
        return self.classes_[np.argmax(S, axis=1)]


class DRMClassifier(DRRClassifier):
    """Discriminative ridge machine (SPEC §8, seed 004 eqs. 12–13): DRR with ``q = r = 2`` and
    ``rho = 1/2 t^2``, solved in closed form ``w = (K + alpha H - alpha B + beta I)^{-1} K_x``
    (one Cholesky for all test points). Parameters and attributes as :class:`DRRClassifier`
    without ``q``, ``r``, ``rho``, ``regularizer``.

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from sklearn.model_selection import cross_val_score
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> X, y = load_digits(return_X_y=True)
    >>> cross_val_score(make_pipeline(StandardScaler(), DRMClassifier()), X, y, cv=3).mean() > 0.9
    True
    """

    _parameter_constraints = {k: v for k, v in DRRClassifier._parameter_constraints.items()
                              if k not in ("q", "r", "rho", "regularizer")}

    def __init__(self, alpha=1.0, beta=1.0, *, kernel="rbf", gamma="scale", degree=3,
                 coef0=0.0, method=None, tol=None, max_iter=None):
        self.alpha, self.beta = alpha, beta
        self.kernel, self.gamma, self.degree, self.coef0 = kernel, gamma, degree, coef0
        self.method, self.tol, self.max_iter = method, tol, max_iter

    def _problem(self, X_new):
        import refmodels as rm

        return rm.DRM(self.X_fit_, self.y_fit_, X_new, alpha=self.alpha, beta=self.beta,
                      kernel=self.kernel_)


class _CallableKernel(_k.Kernel):
    """A base kernel given as a callable ``k(X, Z) -> Gram`` (as ``SVC(kernel=callable)``)."""

    name = "callable"

    def __init__(self, func):
        self.func = func

    def params(self):
        return {"func": getattr(self.func, "__name__", repr(self.func))}

    def cross(self, X, Z):
        K = np.asarray(self.func(X, Z), dtype=np.float64)
        if K.shape != (X.shape[0], Z.shape[0]):
            raise ValueError(f"kernels: a callable kernel must return shape "
                             f"({X.shape[0]}, {Z.shape[0]}); got {K.shape}")
        return K


class MKLmClassifier(_KernelClassifierMixin, ClassifierMixin, BaseEstimator):
    """Multiple kernel learning with the margin band (MKLm; SPEC §7, seed 003 eqs. 22–26) on
    the fast solver: reduced gradient on the kernel weights ``mu`` with the SMO inside.

    .. math::

        \\min\\ \\tfrac12\\sum_k\\frac{\\|w_k\\|^2}{\\mu_k}+\\frac{C_1}2\\sum_i\\xi_i+\\frac{C_2}2\\sum_i\\eta_i,
        \\ 1-\\xi_i\\le y_i f(x_i)\\le 1+\\varepsilon+\\eta_i,\\ \\mu\\in\\Delta

    Parameters
    ----------
    kernels : list or None, default None (meaning ``["linear", "rbf"]``). Each base kernel as
        in ``SVC``: a name (``"linear"``, ``"rbf"``, ``"poly"``; ``gamma``, ``degree``,
        ``coef0`` of this estimator apply), a pair ``(name, {params})`` such as
        ``("rbf", {"gamma": 0.1})``, a :class:`refmodels.kernels.Kernel`, or a callable
        ``k(X, Z)`` returning the Gram matrix. Every base kernel must be PSD.
    C1 : float > 0, default 1.0;  C2 : float >= 0, default 0.5;  eps : float >= 0, default 0.5
        (``eps = 0`` is the eps-MKL)
    gamma, degree, coef0 : defaults for named base kernels (as ``SVC``)
    tol, max_iter : the reduced gradient's MKL duality gap and outer iterations (None: defaults)

    Attributes
    ----------
    classes_;  kernels_ : the base kernels as objects;  mu_ : (n_problems, n_kernels) learnt
    weights;  dual_coef_ : (n_problems, n_samples);  intercept_;  n_iter_;  solutions_.
    ``f(x) = sum_k mu_k sum_i dual_coef_i K_k(x_i, x) + intercept``; one-vs-rest beyond two
    classes. ``sample_weight`` / ``class_weight`` are not supported.

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> clf = make_pipeline(StandardScaler(), MKLmClassifier(kernels=["linear", ("rbf", {"gamma": 0.05})]))
    >>> clf.fit(X, y).score(X, y) > 0.95
    True
    """

    _accepts_sparse = False
    kernel = "mkl"      # for the shared validation helpers (dense input, no pairwise)
    _parameter_constraints = {
        "kernels": [None, list, tuple],
        "C1": _positive(), "C2": _nonnegative(), "eps": _nonnegative(),
        **{k: v for k, v in _KERNEL_PARAMS.items() if k != "kernel"},
    }

    def __init__(self, kernels=None, C1=1.0, C2=0.5, eps=0.5, *, gamma="scale", degree=3,
                 coef0=0.0, tol=None, max_iter=None, random_state=None):
        self.kernels, self.C1, self.C2, self.eps = kernels, C1, C2, eps
        self.gamma, self.degree, self.coef0 = gamma, degree, coef0
        self.tol, self.max_iter, self.random_state = tol, max_iter, random_state

    def _base_kernels(self, X):
        specs = ["linear", "rbf"] if self.kernels is None else list(self.kernels)
        if not specs:
            raise ValueError("kernels must be a non-empty list of base kernels")
        out = []
        for k, spec in enumerate(specs):
            if isinstance(spec, _k.Kernel):
                out.append(spec)
            elif callable(spec):
                out.append(_CallableKernel(spec))
            elif isinstance(spec, str) or (isinstance(spec, tuple) and len(spec) == 2
                                           and isinstance(spec[0], str)
                                           and isinstance(spec[1], dict)):
                name, params = (spec, {}) if isinstance(spec, str) else spec
                if name not in ("linear", "rbf", "poly"):
                    raise ValueError(f"kernels[{k}] must name 'linear', 'rbf' or 'poly'; got "
                                     f"{name!r}")
                if name == "linear":
                    out.append(_k.Linear(**params))
                    continue
                gamma = params.get("gamma", self.gamma)
                if gamma in ("scale", "auto"):
                    var = X.var()
                    gamma = (1.0 / (X.shape[1] * var) if (gamma == "scale" and var > 0)
                             else 1.0 / X.shape[1])
                if name == "rbf":
                    out.append(_k.RBF(gamma=gamma))
                else:
                    out.append(_k.Polynomial(degree=params.get("degree", self.degree),
                                             gamma=gamma, coef0=params.get("coef0", self.coef0)))
            else:
                raise ValueError(f"kernels[{k}] must be a name, a (name, params) pair, a Kernel "
                                 f"or a callable; got {spec!r}")
        return out

    def fit(self, X, y):
        self._validate_params()
        X, y = self._validate_X_fit(X, y)
        self.classes_ = np.unique(y)
        if self.classes_.size < 2:
            raise ValueError(f"y must contain at least two classes; got one class "
                             f"({self.classes_[0]!r}): a classifier can't train on one class")
        import refmodels as rm

        self.kernels_ = self._base_kernels(X)
        targets = [y] if self.classes_.size == 2 else [np.where(y == c, 1, -1)
                                                        for c in self.classes_]
        self.solutions_, mus, coefs, bs, iters = [], [], [], [], []
        for t in targets:
            prob = rm.MKLm(X, t, kernels=self.kernels_, C1=self.C1, C2=self.C2, eps=self.eps)
            sol = _solve(prob, tol=self.tol, max_iter=self.max_iter)
            self.solutions_.append(sol)
            mus.append(np.asarray(sol.variables["mu"], float))
            coefs.append(np.asarray(sol.coef, float))
            bs.append(float(sol.intercept))
            iters.append(sol.n_iter or 0)
        self.mu_, self.dual_coef_ = np.vstack(mus), np.vstack(coefs)
        self.intercept_ = np.asarray(bs)
        self.n_iter_ = max(iters) if len(iters) == 1 else np.asarray(iters)
        self.X_fit_ = X
        return self

    def decision_function(self, X):
        """``f(x)``: shape (n,) for two classes (positive means ``classes_[1]``), else
        (n, n_classes) one-vs-rest."""
        X = self._validate_X_predict(X)
        scores = np.tile(self.intercept_, (X.shape[0], 1))
        for k, kern in enumerate(self.kernels_):
            Kx = kern.cross(self.X_fit_, X)                     # m x n
            scores += (Kx.T @ self.dual_coef_.T) * self.mu_[:, k]
        return scores[:, 0] if self.classes_.size == 2 else scores

    def predict(self, X):
        scores = self.decision_function(X)
        if self.classes_.size == 2:
            return self.classes_[(scores > 0).astype(int)]
        return self.classes_[np.argmax(scores, axis=1)]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = False
        tags.input_tags.sparse = False
        return tags
