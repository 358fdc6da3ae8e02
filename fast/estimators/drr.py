"""The DRR and DRM estimators (SPEC §8): discriminative ridge regression, transductive."""
from __future__ import annotations

import numbers

import numpy as np
from sklearn.utils._param_validation import HasMethods, Interval, Options, StrOptions

from refmodels.drr import DRM, DRR

from .. import solve as _solve
from ._base import _KERNEL_PARAMS, BaseMarginClassifier, _nonnegative, _positive


class DRRClassifier(BaseMarginClassifier):
    r"""Discriminative ridge regression classifier on the fast solvers (SPEC §8; seed 004).

    .. math::

        \min_w\ \tfrac12 w^\top(K+\alpha H-\alpha B)w - K_x^\top w
        + \beta\,\rho(\|w|C\|_{q,r})

    solved for every test point ``x`` (a batch of right-hand sides ``K_x``), then the
    decision rule of eqs. 10–11: ``delta_c = w_c^T K w_c + w_cbar^T K w_cbar - 2 w_c^T K_x``,
    predict ``argmin_c delta_c``. DRR is transductive: ``fit`` stores the training set (and
    checks it), the optimisation runs in ``predict`` / ``decision_function`` for the points
    given.

    Parameters
    ----------
    alpha : float >= 0, default=1.0
        Weight of the within-class scatter ``1/2 w^T (H - B) w``.
    beta : float > 0, default=1.0
        Weight of the regularizer.
    q : float in [1, inf], default=2
        Inner exponent of the group norm ``||w|C||_{q,r}`` (groups = classes).
    r : float in [1, inf], default=2
        Outer exponent of the group norm.
    rho : {"identity", "half_square"} or float >= 1, default="half_square"
        The function applied to the group norm: ``t``, ``t^2 / 2`` or ``t^p / p``.
    regularizer : refmodels.regularizers.Regularizer or None, default=None
        A regularizer used instead of ``(q, r, rho)``; this is how a regularizer a user
        wrote is cross-validated like any estimator.
    kernel : {"linear", "rbf", "poly", "precomputed"}, default="rbf"
        The kernel, as in ``SVC``: ``"linear"`` is ``x^T z``, ``"rbf"`` is
        ``exp(-gamma ||x - z||^2)``, ``"poly"`` is ``(gamma x^T z + coef0)^degree``;
        with ``"precomputed"``, ``X`` is the Gram matrix in ``fit`` and ``K(X, X_fit)``
        in prediction.
    gamma : {"scale", "auto"} or float > 0, default="scale"
        Kernel coefficient of ``"rbf"`` and ``"poly"``, as in ``SVC``: ``"scale"`` is
        ``1 / (n_features * X.var())``, ``"auto"`` is ``1 / n_features``.
    degree : int >= 1, default=3
        Degree of the ``"poly"`` kernel; ignored by the others.
    coef0 : float >= 0, default=0.0
        Constant term of the ``"poly"`` kernel; ignored by the others.
    method : {"closed_form", "gd", "ppa", "linear_ppa", "apg"} or None, default=None
        The algorithm of :func:`fast.solve` for DRR; None is the closed form for DRM and
        APG otherwise.
    tol : float > 0 or None, default=None
        Stopping tolerance of the iterative methods (None: their default).
    max_iter : int >= 1 or None, default=None
        Iteration limit of the iterative methods (None: their default).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels.
    X_fit_ : ndarray of shape (n_samples, n_features)
        The training points (the Gram matrix with ``kernel="precomputed"``).
    y_fit_ : ndarray of shape (n_samples,)
        The training labels.
    kernel_ : refmodels.kernels.Kernel
        The kernel object, with ``gamma`` resolved.
    n_iter_ : int
        1 (the optimisation runs at prediction).
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of the features seen during ``fit``, when ``X`` has string column names.

    See Also
    --------
    refmodels.DRR : The problem, solved by the reference (CVXPY) and certified.
    DRMClassifier : DRR with ``q = r = 2`` and ``rho = t^2 / 2``, in closed form.

    Notes
    -----
    :meth:`decision_function` returns ``-delta_c`` (larger is more likely), shape
    (n_samples, n_classes), or ``delta_0 - delta_1`` (positive means ``classes_[1]``) for
    two classes. :meth:`solve` returns the problem of the test points and its solution, to
    certify. Dense input only; ``sample_weight`` and ``class_weight`` are not supported.

    References
    ----------
    .. [1] Chong Peng and Qiang Cheng. Discriminative Ridge Machine: A Classifier for
       High-Dimensional Data or Imbalanced Data. IEEE Transactions on Neural Networks and
       Learning Systems, 2021 (arXiv:1904.07686, 2019; seed 004, DRR is its eq. 8, the
       decision rule its eqs. 10–11).
    .. [2] Amir Beck and Marc Teboulle. A fast iterative shrinkage-thresholding algorithm
       for linear inverse problems. SIAM Journal on Imaging Sciences, 2(1):183–202, 2009.

    Examples
    --------
    >>> from sklearn.datasets import load_wine
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from fast import DRRClassifier
    >>> X, y = load_wine(return_X_y=True)
    >>> clf = make_pipeline(StandardScaler(), DRRClassifier(q=2, r=1, rho="identity"))
    >>> clf.fit(X, y).score(X, y) > 0.9
    True
    """

    _problem_class = DRR
    _accepts_sparse = False
    _parameter_constraints = {
        "alpha": _nonnegative(), "beta": _positive(),
        # q, r in [1, inf]: Interval(..., None) excludes inf, so inf is its own option
        "q": [Interval(numbers.Real, 1.0, None, closed="left"), Options(numbers.Real, {np.inf})],
        "r": [Interval(numbers.Real, 1.0, None, closed="left"), Options(numbers.Real, {np.inf})],
        "rho": [StrOptions({"identity", "half_square"}),
                Interval(numbers.Real, 1.0, None, closed="left")],
        "regularizer": [None, HasMethods(["expr", "value", "prox"])],
        "method": [None, StrOptions({"closed_form", "gd", "ppa", "linear_ppa", "apg"})],
        **{k: v for k, v in _KERNEL_PARAMS.items() if k != "random_state"},
    }

    def __init__(self, alpha=1.0, beta=1.0, q=2, r=2, rho="half_square", regularizer=None, *,
                 kernel="rbf", gamma="scale", degree=3, coef0=0.0, method=None, tol=None,
                 max_iter=None):
        # random_state=None: the solvers of DRR are deterministic
        super().__init__(kernel=kernel, gamma=gamma, degree=degree, coef0=coef0, tol=tol,
                         max_iter=max_iter, random_state=None)
        self.alpha = alpha
        self.beta = beta
        self.q = q
        self.r = r
        self.rho = rho
        self.regularizer = regularizer
        self.method = method

    def _make_problem(self, X_new):
        """The problem of the test points ``X_new`` on the stored training set."""
        if self.regularizer is not None:
            return DRR(self.X_fit_, self.y_fit_, X_new, alpha=self.alpha, beta=self.beta,
                       kernel=self.kernel_, regularizer=self.regularizer)
        return DRR(self.X_fit_, self.y_fit_, X_new, alpha=self.alpha, beta=self.beta,
                   q=self.q, r=self.r, rho=self.rho, kernel=self.kernel_)

    def fit(self, X, y):
        """Store (and check) the training set ``X``, ``y``; the optimisation runs at prediction.
        Returns ``self``."""
        X, y = self._fit_data(X, y)
        self.kernel_ = self._kernel_object(X)
        self.X_fit_, self.y_fit_ = X, y
        self._make_problem(X[:1])                       # validates the hyperparameters now
        self.n_iter_ = 1
        return self

    def _neg_delta(self, X):
        X = self._validate_X_predict(X)
        if self.kernel == "precomputed":
            self._check_gram_columns(X, self.X_fit_.shape[0])
        prob = self._make_problem(X)
        sol = _solve(prob, method=self.method, tol=self.tol, max_iter=self.max_iter)
        return -prob.dissimilarities(sol)

    def solve(self, X):
        """Build the problem of the test points ``X`` and solve it with the fast solver.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or (n_samples, n_samples_fit)
            Test points; ``K(X, X_fit)`` with ``kernel="precomputed"``.

        Returns
        -------
        prob : refmodels.DRR
            The problem (one per test point, in one object).
        sol : refmodels.Solution
            Its fast solution; ``prob.certify(sol)`` certifies it.
        """
        X = self._validate_X_predict(X)
        prob = self._make_problem(X)
        return prob, _solve(prob, method=self.method, tol=self.tol, max_iter=self.max_iter)

    def decision_function(self, X):
        """Compute the scores ``-delta_c(x)`` of the test points ``X`` (larger is more likely),
        shape (n_samples, n_classes); for two classes ``delta_0 - delta_1`` (positive means
        ``classes_[1]``)."""
        S = self._neg_delta(X)
        return S[:, 1] - S[:, 0] if S.shape[1] == 2 else S

    def predict(self, X):
        """Predict class labels: the smallest ``delta_c(x)`` (ties to the first class)."""
        S = self._neg_delta(X)
        return self.classes_[np.argmax(S, axis=1)]


class DRMClassifier(DRRClassifier):
    r"""Discriminative ridge machine classifier on the fast solvers (SPEC §8).

    Seed 004 eqs. 12–13: DRR with ``q = r = 2`` and ``rho = t^2 / 2``, solved in closed form

    .. math::

        w = (K + \alpha H - \alpha B + \beta I)^{-1} K_x

    (one Cholesky factorisation for all test points), then the decision rule of DRR.

    Parameters
    ----------
    alpha : float >= 0, default=1.0
        Weight of the within-class scatter ``1/2 w^T (H - B) w``.
    beta : float > 0, default=1.0
        Weight of the regularizer ``1/2 ||w||^2``.
    kernel : {"linear", "rbf", "poly", "precomputed"}, default="rbf"
        The kernel, as in ``SVC``: ``"linear"`` is ``x^T z``, ``"rbf"`` is
        ``exp(-gamma ||x - z||^2)``, ``"poly"`` is ``(gamma x^T z + coef0)^degree``;
        with ``"precomputed"``, ``X`` is the Gram matrix in ``fit`` and ``K(X, X_fit)``
        in prediction.
    gamma : {"scale", "auto"} or float > 0, default="scale"
        Kernel coefficient of ``"rbf"`` and ``"poly"``, as in ``SVC``: ``"scale"`` is
        ``1 / (n_features * X.var())``, ``"auto"`` is ``1 / n_features``.
    degree : int >= 1, default=3
        Degree of the ``"poly"`` kernel; ignored by the others.
    coef0 : float >= 0, default=0.0
        Constant term of the ``"poly"`` kernel; ignored by the others.
    method : {"closed_form", "gd", "ppa", "linear_ppa", "apg"} or None, default=None
        The algorithm of :func:`fast.solve`; None is the closed form.
    tol : float > 0 or None, default=None
        Stopping tolerance of the iterative methods (None: their default).
    max_iter : int >= 1 or None, default=None
        Iteration limit of the iterative methods (None: their default).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels.
    X_fit_ : ndarray of shape (n_samples, n_features)
        The training points (the Gram matrix with ``kernel="precomputed"``).
    y_fit_ : ndarray of shape (n_samples,)
        The training labels.
    kernel_ : refmodels.kernels.Kernel
        The kernel object, with ``gamma`` resolved.
    n_iter_ : int
        1 (the optimisation runs at prediction).
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of the features seen during ``fit``, when ``X`` has string column names.

    See Also
    --------
    refmodels.DRM : The problem, solved by the reference (CVXPY) and certified.
    DRRClassifier : The general discriminative ridge regression.

    Notes
    -----
    :meth:`decision_function` returns ``-delta_c`` (larger is more likely), shape
    (n_samples, n_classes), or ``delta_0 - delta_1`` (positive means ``classes_[1]``) for
    two classes. Dense input only; ``sample_weight`` and ``class_weight`` are not
    supported.

    References
    ----------
    .. [1] Chong Peng and Qiang Cheng. Discriminative Ridge Machine: A Classifier for
       High-Dimensional Data or Imbalanced Data. IEEE Transactions on Neural Networks and
       Learning Systems, 2021 (arXiv:1904.07686, 2019; seed 004, DRM is its eqs. 12–13).

    Examples
    --------
    >>> from sklearn.datasets import load_digits
    >>> from sklearn.model_selection import cross_val_score
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from fast import DRMClassifier
    >>> X, y = load_digits(return_X_y=True)
    >>> cross_val_score(make_pipeline(StandardScaler(), DRMClassifier()), X, y, cv=3).mean() > 0.9
    True
    """

    _problem_class = DRM
    _parameter_constraints = {k: v for k, v in DRRClassifier._parameter_constraints.items()
                              if k not in ("q", "r", "rho", "regularizer")}

    def __init__(self, alpha=1.0, beta=1.0, *, kernel="rbf", gamma="scale", degree=3,
                 coef0=0.0, method=None, tol=None, max_iter=None):
        # random_state=None: the solvers of DRM are deterministic
        BaseMarginClassifier.__init__(self, kernel=kernel, gamma=gamma, degree=degree,
                                      coef0=coef0, tol=tol, max_iter=max_iter,
                                      random_state=None)
        self.alpha = alpha
        self.beta = beta
        self.method = method

    def _make_problem(self, X_new):
        return DRM(self.X_fit_, self.y_fit_, X_new, alpha=self.alpha, beta=self.beta,
                   kernel=self.kernel_)
