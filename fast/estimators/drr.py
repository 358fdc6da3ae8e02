"""The DRR and DRM estimators (SPEC §8): discriminative ridge regression, transductive."""
from __future__ import annotations

import numbers

import numpy as np
from sklearn.utils._param_validation import HasMethods, Interval, Options, StrOptions

from refmodels import kernels as _k
from refmodels.drr import DRM, DRR

from .. import solve as _solve
from ._base import _INTERCEPT, _KERNEL_PARAMS, BaseMarginClassifier, _nonnegative, _positive
from ._docs import shared_doc


@shared_doc
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
    <<alpha>>
    beta : float > 0, default=0.1
        Weight of the regularizer (see the Notes for the default).
    q : float in [1, inf], default=2
        Inner exponent of the group norm ``||w|C||_{q,r}`` (groups = classes).
    r : float in [1, inf], default=2
        Outer exponent of the group norm.
    rho : {"identity", "half_square"} or float >= 1, default="half_square"
        The function applied to the group norm: ``t``, ``t^2 / 2`` or ``t^p / p``.
    regularizer : refmodels.regularizers.Regularizer or None, default=None
        A regularizer used instead of ``(q, r, rho)``; this is how a regularizer a user
        wrote is cross-validated like any estimator.
    <<fit_intercept:drr intercept_scaling kernel gamma degree coef0>>
    method : {"closed_form", "gd", "ppa", "linear_ppa", "apg"} or None, default=None
        The algorithm of :func:`fast.solve` for DRR; None is the closed form for DRM and
        APG otherwise.
    <<tol:iterative max_iter:iterative>>

    <<Attributes: transductive_attributes>>

    See Also
    --------
    refmodels.DRR : The problem, solved by the reference (CVXPY) and certified.
    DRMClassifier : DRR with ``q = r = 2`` and ``rho = t^2 / 2``, in closed form.

    Notes
    -----
    **Defaults**: ``kernel="rbf"`` (``gamma="scale"``), ``alpha=1``, the group
    norm ``q=r=2`` with ``rho="half_square"`` (which is DRM), and ``beta=0.1``.
    <<beta_choice>>
    refmodels.DRR has no defaults for ``alpha``, ``beta``.
    <<defaults breast_cancer=0.975 wine=0.989 iris=0.953 digits=0.980 mean=0.974>>

    <<delta>>
    :meth:`solve` returns the problem of the test points and its solution, to certify.
    Dense input only; ``sample_weight`` and ``class_weight`` are not supported.

    References
    ----------
    .. [1] Chong Peng and Qiang Cheng. Discriminative Ridge Machine: A Classifier for
       High-Dimensional Data or Imbalanced Data. IEEE Transactions on Neural Networks and
       Learning Systems, 2021 (arXiv:1904.07686, 2019; seed 004, DRR is its eq. 8, the
       decision rule its eqs. 10–11).
    .. [2] Amir Beck and Marc Teboulle. A fast iterative shrinkage-thresholding algorithm
       for linear inverse problems. SIAM Journal on Imaging Sciences, 2(1):183–202, 2009.

    <<Examples: load_wine 0.9 DRRClassifier(q=2, r=1, rho="identity")>>
    """

    _problem_class = DRR
    _accepts_sparse = False
    #: not a parameter: the solvers of DRR are deterministic
    random_state = None
    _parameter_constraints = {
        "alpha": _nonnegative(), "beta": _positive(),
        # q, r in [1, inf]: Interval(..., None) excludes inf, so inf is its own option
        "q": [Interval(numbers.Real, 1.0, None, closed="left"), Options(numbers.Real, {np.inf})],
        "r": [Interval(numbers.Real, 1.0, None, closed="left"), Options(numbers.Real, {np.inf})],
        "rho": [StrOptions({"identity", "half_square"}),
                Interval(numbers.Real, 1.0, None, closed="left")],
        "regularizer": [None, HasMethods(["expr", "value", "prox"])],
        "method": [None, StrOptions({"closed_form", "gd", "ppa", "linear_ppa", "apg"})],
        **_INTERCEPT,
        **{k: v for k, v in _KERNEL_PARAMS.items() if k != "random_state"},
    }

    def __init__(self, alpha=1.0, beta=0.1, q=2, r=2, rho="half_square", regularizer=None, *,
                 fit_intercept=True, intercept_scaling=1.0, kernel="rbf", gamma="scale",
                 degree=3, coef0=0.0, method=None, tol=None, max_iter=None):
        self._store_params(locals())

    def _mapped(self, X_new):
        """``(X_fit, X_new, kernel)`` of the problem: with ``fit_intercept``, the feature map
        ``[phi(x); s]`` (:class:`refmodels.kernels.WithBias`: the linear kernel's data gain
        the column ``s``, a precomputed kernel's values ``s^2``, another kernel adds ``s^2``)."""
        if not self.fit_intercept:
            return self.X_fit_, X_new, self.kernel_
        kb = _k.WithBias(self.kernel_, self.intercept_scaling)
        return kb.map_data(self.X_fit_), kb.map_data(X_new), kb

    def _make_problem(self, X_new):
        """The problem of the test points ``X_new`` on the stored training set."""
        X_fit, X_new, kernel = self._mapped(X_new)
        if self.regularizer is not None:
            return DRR(X_fit, self.y_fit_, X_new, alpha=self.alpha, beta=self.beta,
                       kernel=kernel, regularizer=self.regularizer)
        return DRR(X_fit, self.y_fit_, X_new, alpha=self.alpha, beta=self.beta,
                   q=self.q, r=self.r, rho=self.rho, kernel=kernel)

    def fit(self, X, y):
        """Store (and check) the training set ``X``, ``y``; the optimisation runs at prediction.
        Returns ``self``."""
        X, y = self._fit_data(X, y)
        self.X_fit_, self.y_fit_ = X, y                 # the Gram matrix too: DRR needs it
        self._make_problem(X[:1])                       # validates the hyperparameters now
        self.n_iter_ = 1
        return self

    def _neg_delta(self, X):
        prob, sol = self.solve(X)
        return -prob.dissimilarities(sol)

    def solve(self, X):
        """Build the problem of the test points ``X`` and solve it with the fast solver.

        One problem holds every test point (one right-hand side ``K_x`` each), solved by
        the ``method`` of this estimator; :meth:`predict` and :meth:`decision_function`
        read their ``delta_c`` from it, :meth:`certify` certifies it.

        Parameters
        ----------
        <<X:test>>

        Returns
        -------
        prob : refmodels.DRR
            The problem (one per test point, in one object).
        sol : refmodels.Solution
            Its fast solution; ``prob.certify(sol)`` certifies it.
        """
        X = self._validate_X_predict(X)
        if self.kernel == "precomputed":
            self._check_gram_columns(X, self.shape_fit_[0])
        prob = self._make_problem(X)
        return prob, _solve(prob, method=self.method, tol=self.tol, max_iter=self.max_iter)

    def decision_function(self, X):
        """Compute the scores ``-delta_c(x)`` of the test points ``X`` (larger is more likely),
        shape (n_samples, n_classes); for two classes ``delta_0 - delta_1`` (positive means
        ``classes_[1]``)."""
        S = self._neg_delta(X)
        return S[:, 1] - S[:, 0] if S.shape[1] == 2 else S

    def predict(self, X):
        """Predict class labels: the class of the smallest ``delta_c(x)`` (seed 004 eq. 11).

        Ties are broken by a fixed rule: the ``delta_c`` within a relative ``1e-12`` of the
        smallest (``delta_c - min_c delta_c <= 1e-12 max_c |delta_c|``) are ties, and a tie
        goes to the smallest class index, also for two classes. Two certified solutions of
        the same problem (which agree to far better than a class margin but not to the last
        bit, e.g. where several ``w_c`` vanish) thus predict the same.

        Parameters
        ----------
        <<X:test>>

        Returns
        -------
        <<y_pred>>
        """
        index = _argmin_ties(-self._neg_delta(X))        # checks that it is fitted first
        return self.classes_[index]

    def certify(self, X=None, y=None, tol=1e-6):
        """Certify the problem of the test points ``X``: DRR is transductive, so its
        problem is built (and solved, as :meth:`predict` does) for the points given.

        Parameters
        ----------
        <<X:test_required>>
        y : None
            Unused (the labels of the problem are the training labels); must be None.
        tol : float > 0, default=1e-6
            Tolerance of the certificate.

        Returns
        -------
        certificates : list of refmodels.certify.Certificate
            One certificate (the problem holds every test point; see :meth:`solve`).
        """
        if X is None or y is not None:
            raise ValueError("DRR/DRM is transductive: certify(X) takes the test points X "
                             "(and no y); the problem is built for them")
        prob, sol = self.solve(X)
        return [prob.certify(sol, tol=tol)]


def _argmin_ties(delta, rtol=1e-12):
    """Row-wise argmin where values within ``rtol`` (relative to the row's largest
    magnitude) of the minimum are ties, broken to the smallest index."""
    dmin = delta.min(axis=1, keepdims=True)
    scale = np.abs(delta).max(axis=1, keepdims=True)
    return np.argmax(delta - dmin <= rtol * scale, axis=1)


@shared_doc
class DRMClassifier(DRRClassifier):
    r"""Discriminative ridge machine classifier on the fast solvers (SPEC §8).

    Seed 004 eqs. 12–13: DRR with ``q = r = 2`` and ``rho = t^2 / 2``, solved in closed form

    .. math::

        w = (K + \alpha H - \alpha B + \beta I)^{-1} K_x

    (one Cholesky factorisation for all test points), then the decision rule of DRR.

    Parameters
    ----------
    <<alpha>>
    beta : float > 0, default=0.1
        Weight of the regularizer ``1/2 ||w||^2`` (see the Notes for the default).
    <<fit_intercept:drr intercept_scaling kernel gamma degree coef0>>
    method : {"closed_form", "gd", "ppa", "linear_ppa", "apg"} or None, default=None
        The algorithm of :func:`fast.solve`; None is the closed form.
    <<tol:iterative max_iter:iterative>>

    <<Attributes: transductive_attributes>>

    See Also
    --------
    refmodels.DRM : The problem, solved by the reference (CVXPY) and certified.
    DRRClassifier : The general discriminative ridge regression.

    Notes
    -----
    **Defaults**: ``kernel="rbf"`` (``gamma="scale"``), ``alpha=1``,
    ``beta=0.1``.
    <<beta_choice>>
    refmodels.DRM has no defaults for ``alpha``, ``beta``.
    <<defaults breast_cancer=0.975 wine=0.989 iris=0.953 digits=0.980 mean=0.974>>

    <<delta>>
    Dense input only; ``sample_weight`` and ``class_weight`` are not supported.

    References
    ----------
    .. [1] Chong Peng and Qiang Cheng. Discriminative Ridge Machine: A Classifier for
       High-Dimensional Data or Imbalanced Data. IEEE Transactions on Neural Networks and
       Learning Systems, 2021 (arXiv:1904.07686, 2019; seed 004, DRM is its eqs. 12–13).

    <<Examples: load_digits 0.9 DRMClassifier()>>
    """

    _problem_class = DRM
    _parameter_constraints = {k: v for k, v in DRRClassifier._parameter_constraints.items()
                              if k not in ("q", "r", "rho", "regularizer")}

    def __init__(self, alpha=1.0, beta=0.1, *, fit_intercept=True, intercept_scaling=1.0,
                 kernel="rbf", gamma="scale", degree=3, coef0=0.0, method=None, tol=None,
                 max_iter=None):
        self._store_params(locals())

    def _make_problem(self, X_new):
        X_fit, X_new, kernel = self._mapped(X_new)
        return DRM(X_fit, self.y_fit_, X_new, alpha=self.alpha, beta=self.beta, kernel=kernel)
