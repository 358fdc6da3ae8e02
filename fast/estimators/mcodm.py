"""The multi-class ODM estimator (SPEC §5)."""
from __future__ import annotations

import numbers

import numpy as np
from sklearn.utils._param_validation import Interval

from refmodels.mcodm import McODM

from .. import solve as _solve
from ._base import _KERNEL_PARAMS, BaseMarginClassifier, _positive


class McODMClassifier(BaseMarginClassifier):
    r"""Multi-class ODM classifier on the fast solver (SPEC §5; seed 002 §4, Alg. 3).

    .. math::

        \min_{W, \xi, \epsilon}\ \tfrac12\sum_l\|w_l\|^2
        + \frac{\lambda}{m(1-\theta)^2}\sum_i(\xi_i^2+\mu\epsilon_i^2),
        \quad \gamma(x, y) = s_y(x) - \max_{l\ne y}s_l(x)

    with the score ``s_l(x) = w_l^T phi(x)`` of class ``l`` and the ODM band on the margin
    ``gamma``. Solved by Alg. 3's outer loop: the relaxed QP at ``M`` from the previous
    iterate, block coordinate descent inside. Natively multi-class (also for two classes:
    two score functions). The problem is non-convex; the fitted point is a fixed point of
    Alg. 3 whose relaxed QP is certified (see :class:`refmodels.McODM`). No intercept, as
    in the seed.

    Parameters
    ----------
    lam : float > 0, default=1.0
        Weight :math:`\lambda` of the squared losses.
    mu : float > 0, default=0.5
        Weight of the loss above the margin band, relative to the loss below it.
    theta : float in [0, 1), default=0.3
        Half-width of the insensitive band around margin 1.
    kernel : {"linear", "rbf", "poly", "precomputed"}, default="linear"
        The kernel, as in ``SVC``: ``"linear"`` is ``x^T z``, ``"rbf"`` is
        ``exp(-gamma ||x - z||^2)``, ``"poly"`` is ``(gamma x^T z + coef0)^degree``;
        with ``"precomputed"``, ``X`` is the Gram matrix.
    gamma : {"scale", "auto"} or float > 0, default="scale"
        Kernel coefficient of ``"rbf"`` and ``"poly"``, as in ``SVC``: ``"scale"`` is
        ``1 / (n_features * X.var())``, ``"auto"`` is ``1 / n_features``.
    degree : int >= 1, default=3
        Degree of the ``"poly"`` kernel; ignored by the others.
    coef0 : float >= 0, default=0.0
        Constant term of the ``"poly"`` kernel; ignored by the others.
    tol : float > 0 or None, default=None
        Stopping rule of the outer loop: the relative change of ``W`` between rounds
        (None: 1e-6).
    max_iter : int >= 1 or None, default=None
        Epochs of the block coordinate descent in each relaxed solve (None: the solver's
        bound by work).
    max_outer : int >= 1, default=50
        Rounds of Alg. 3's outer loop.
    random_state : int >= 0, numpy.random.Generator, RandomState or None, default=None
        Seed of the block coordinate descent's permutation of the points.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels.
    dual_coef_ : ndarray of shape (n_classes, n_samples)
        Coefficients over the training points:
        ``s_l(x) = sum_i dual_coef_[l, i] k(x_i, x)``.
    coef_ : ndarray of shape (n_classes, n_features)
        The weights ``w_l`` in input space; linear kernel only.
    n_iter_ : int
        Rounds of the outer loop.
    solution_ : refmodels.Solution
        The solution of the problem; ``prob.certify(sol)`` certifies its relaxed QP.
    kernel_ : refmodels.kernels.Kernel
        The kernel object, with ``gamma`` resolved.
    X_fit_ : ndarray of shape (n_samples, n_features) or None
        The training points (None with ``kernel="precomputed"``).
    shape_fit_ : tuple of int
        Shape of the training ``X``.
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of shape (n_features_in_,)
        Names of the features seen during ``fit``, when ``X`` has string column names.

    See Also
    --------
    refmodels.McODM : The problem, solved by the reference (CVXPY) and certified.
    ODMClassifier : The binary ODM (one-vs-rest beyond two classes).

    Notes
    -----
    Dense input only. ``sample_weight`` and ``class_weight`` are not supported: SPEC's
    formulations weigh every sample equally.

    References
    ----------
    .. [1] Teng Zhang and Zhi-Hua Zhou. Optimal Margin Distribution Machine. IEEE
       Transactions on Knowledge and Data Engineering, 32(6), 2020 (seed 002; mcODM is its
       eqs. 20–41 and Algs. 3–4).

    Examples
    --------
    >>> from sklearn.datasets import load_wine
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from fast import McODMClassifier
    >>> X, y = load_wine(return_X_y=True)
    >>> make_pipeline(StandardScaler(), McODMClassifier(kernel="rbf")).fit(X, y).score(X, y) > 0.95
    True
    """

    _problem_class = McODM
    _accepts_sparse = False
    _parameter_constraints = {"lam": _positive(), "mu": _positive(),
                              "theta": [Interval(numbers.Real, 0.0, 1.0, closed="left")],
                              "max_outer": [Interval(numbers.Integral, 1, None, closed="left")],
                              **_KERNEL_PARAMS}

    def __init__(self, lam=1.0, mu=0.5, theta=0.3, *, kernel="linear", gamma="scale", degree=3,
                 coef0=0.0, tol=None, max_iter=None, max_outer=50, random_state=None):
        super().__init__(kernel=kernel, gamma=gamma, degree=degree, coef0=coef0, tol=tol,
                         max_iter=max_iter, random_state=random_state)
        self.lam = lam
        self.mu = mu
        self.theta = theta
        self.max_outer = max_outer

    def fit(self, X, y):
        """Fit the multi-class problem (all classes at once) on ``X`` (the Gram matrix with
        ``kernel="precomputed"``) and the labels ``y``; returns ``self``."""
        X, y = self._fit_data(X, y)
        self.kernel_ = self._kernel_object(X)
        prob = self._problem_class(X, y, lam=self.lam, mu=self.mu, theta=self.theta,
                                   kernel=self.kernel_)
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
        if self.kernel == "precomputed":
            self._check_gram_columns(X, self.shape_fit_[0])
        return self._cross(X).T @ self.dual_coef_.T

    def decision_function(self, X):
        """Compute the scores ``s_l(x)``, shape (n_samples, n_classes); for two classes,
        scikit-learn's binary convention: ``s_1(x) - s_0(x)`` (positive means ``classes_[1]``)."""
        S = self._scores(X)
        return S[:, 1] - S[:, 0] if S.shape[1] == 2 else S

    def predict(self, X):
        """Predict class labels: the largest score ``s_l(x)`` (ties to the first class)."""
        S = self._scores(X)
        return self.classes_[np.argmax(S, axis=1)]
