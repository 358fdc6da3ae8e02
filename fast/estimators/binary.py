"""The binary formulations, one-vs-one beyond two classes (``multi_class``): SVM (SPEC
§1), ODML and LDM (§2, §3), ODM (§4) and SVMm (§6).

Each class names its :mod:`refmodels` problem class (``_problem_class``), the
hyperparameters it passes to it (``_hyper``) and their constraints, and writes its
``__init__`` out; :class:`~fast.estimators._base.BaseMarginClassifier` fits one problem per
class and predicts from the scores.
"""
from __future__ import annotations

import numbers

from sklearn.utils._param_validation import Interval, StrOptions

from refmodels.odm import ODM
from refmodels.odml import LDM, ODML
from refmodels.svm import SVM
from refmodels.svmm import SVMm

from ..odm import SOLVERS as _ODM_SOLVERS

from ._base import (_INTERCEPT, _KERNEL_PARAMS, MULTI_CLASS, BaseMarginClassifier, _nonnegative,
                    _positive)
from ._docs import shared_doc


@shared_doc
class SVMClassifier(BaseMarginClassifier):
    r"""Soft-margin SVM classifier on the fast solvers (SPEC §1).

    .. math::

        \min_{w, b, \xi}\ \tfrac12\|w\|^2 + C\sum_i \xi_i
        \quad\text{s.t.}\quad y_i(w^\top\phi(x_i)+b)\ge 1-\xi_i,\ \xi_i \ge 0

    Each binary problem is a :class:`refmodels.SVM` solved by :func:`fast.solve`: the SMO
    (working-set selection of LIBSVM's WSS3) with ``fit_intercept=True``, the dual
    coordinate descent of LIBLINEAR with ``fit_intercept=False``.

    Parameters
    ----------
    C : float > 0, default=1.0
        Weight of the hinge losses (SPEC's ``C``, unscaled by the number of samples, as
        ``SVC``'s).
    fit_intercept : bool, default=True
        Whether the decision function has an intercept ``b``. True is ``SVC``'s convention
        and the default here; False is the canonical SVM of SPEC §1 (and LIBLINEAR's
        convention), the default of :class:`refmodels.SVM`. See the Notes.
    <<kernel gamma degree coef0 tol max_iter:svm random_state:dcd multi_class>>

    <<Attributes: multiclass_attributes dual_coef_:b intercept_:svm n_iter_:svm>>

    See Also
    --------
    refmodels.SVM : The problem, solved by the reference (CVXPY) and certified.
    sklearn.svm.SVC : LIBSVM's SVM, with an intercept, one-vs-one beyond two classes.
    sklearn.svm.LinearSVC : LIBLINEAR's linear SVM, one-vs-rest (``multi_class="ovr"`` here).

    Notes
    -----
    **Defaults**: ``kernel="rbf"``, ``gamma="scale"``, ``C=1``,
    ``fit_intercept=True``: ``SVC``'s own, so that the estimator can stand in for
    ``SVC``. With the former linear default it scored 0.81 on iris (0.93 mean).
    refmodels.SVM defaults to the linear kernel.
    <<defaults breast_cancer=0.979 wine=0.989 iris=0.960 digits=0.987 mean=0.979>>

    The default of ``fit_intercept`` differs from :class:`refmodels.SVM`'s on purpose.
    SPEC's canonical SVM (§1, seed 002 eq. 2) has no intercept, so the reference problem
    defaults to ``fit_intercept=False``; this estimator follows ``SVC``, which fits one, so
    that it can replace ``SVC`` in a pipeline and give the same decision function.

    <<multiclass>>

    References
    ----------
    .. [1] Corinna Cortes and Vladimir Vapnik. Support-vector networks. Machine Learning,
       20(3):273–297, 1995.
    .. [2] Teng Zhang and Zhi-Hua Zhou. Optimal Margin Distribution Machine. IEEE
       Transactions on Knowledge and Data Engineering, 32(6), 2020 (seed 002; the SVM is
       its eq. 2).
    .. [3] Chih-Chung Chang and Chih-Jen Lin. LIBSVM: A library for support vector
       machines. ACM Transactions on Intelligent Systems and Technology, 2(3):27, 2011.
    .. [4] Cho-Jui Hsieh, Kai-Wei Chang, Chih-Jen Lin, S. Sathiya Keerthi and S.
       Sundararajan. A dual coordinate descent method for large-scale linear SVM.
       Proceedings of the 25th International Conference on Machine Learning (ICML), 2008.

    <<Examples: load_breast_cancer 0.95 SVMClassifier()>>
    """

    _problem_class = SVM
    _hyper = ("C", "fit_intercept")
    _parameter_constraints = {"C": _positive(), "fit_intercept": ["boolean"], **_KERNEL_PARAMS,
                              **MULTI_CLASS}

    def __init__(self, C=1.0, *, fit_intercept=True, kernel="rbf", gamma="scale", degree=3,
                 coef0=0.0, tol=None, max_iter=None, random_state=None, multi_class="ovo"):
        self._store_params(locals())


@shared_doc
class ODMLClassifier(BaseMarginClassifier):
    r"""ODML classifier (ODM^L, margin mean and variance) on the fast solvers (SPEC §2).

    .. math::

        \min_{w, \xi}\ \tfrac12\|w\|^2 + \mu_1\gamma_v - \mu_2\gamma_m
        + \frac{\lambda}{m}\sum_i\xi_i
        \quad\text{s.t.}\quad y_i w^\top\phi(x_i)\ge 1-\xi_i,\ \xi_i\ge 0

    with the margin mean :math:`\gamma_m` and variance :math:`\gamma_v` over the training
    points. Each binary problem is a :class:`refmodels.ODML` solved by :func:`fast.solve`
    (box-constrained dual coordinate descent), with a regularized intercept
    (``fit_intercept``).

    Parameters
    ----------
    lam : float > 0 or None, default=None
        Weight :math:`\lambda` of the mean hinge loss. None is ``m``, the number of
        training samples, so that ``lam / m = 1`` weighs each hinge loss as ``SVC``'s
        ``C = 1`` (see the Notes).
    mu1 : float >= 0, default=0.1
        Weight of the margin variance.
    mu2 : float >= 0, default=0.1
        Weight of the margin mean (``mu1 = mu2 = 0`` is the SVM with ``C = lam / m``).
    <<fit_intercept:bias intercept_scaling>>
    <<kernel gamma degree coef0 tol max_iter:dcd random_state:dcd multi_class>>

    <<Attributes: multiclass_attributes intercept_:bias>>

    See Also
    --------
    refmodels.ODML : The problem, solved by the reference (CVXPY) and certified.
    LDMClassifier : The same machine in seed 001's parametrisation (pairwise variance).
    ODMClassifier : The optimal margin distribution machine (squared losses, a band).

    Notes
    -----
    **Defaults**: ``kernel="rbf"`` (``gamma="scale"``) and ``lam=None``, i.e.
    ``lam = m``: the mean hinge loss ``lam / m sum xi`` then weighs each point as
    ``SVC``'s ``C = 1`` (``mu1 = mu2 = 0`` is that SVM without intercept); ``mu1 = mu2 =
    0.1`` are kept. The former ``lam=1`` (``C = 1/m``) with the linear kernel scored
    0.50 on iris (0.72 mean). refmodels.ODML defaults to ``lam=1, mu1=mu2=0`` and the
    linear kernel.
    <<defaults breast_cancer=0.979 wine=0.989 iris=0.960 digits=0.987 mean=0.979>>

    <<intercept measured=0.979 before=0.978>>

    <<multiclass:margin>>

    References
    ----------
    .. [1] Teng Zhang and Zhi-Hua Zhou. Optimal Margin Distribution Machine. IEEE
       Transactions on Knowledge and Data Engineering, 32(6), 2020 (seed 002; ODML is its
       eqs. 4–10).
    .. [2] Teng Zhang and Zhi-Hua Zhou. Optimal Margin Distribution Machine. arXiv preprint
       arXiv:1604.03348, 2016 (seed 000, §3.1).

    <<Examples: load_breast_cancer 0.95 ODMLClassifier()>>
    """

    _problem_class = ODML
    _hyper = ("lam", "mu1", "mu2", "fit_intercept", "intercept_scaling")
    _parameter_constraints = {"lam": [*_positive(), None], "mu1": _nonnegative(),
                              "mu2": _nonnegative(), **_INTERCEPT, **_KERNEL_PARAMS,
                              **MULTI_CLASS}

    def __init__(self, lam=None, mu1=0.1, mu2=0.1, *, fit_intercept=True, intercept_scaling=1.0,
                 kernel="rbf", gamma="scale", degree=3, coef0=0.0, tol=None, max_iter=None,
                 random_state=None, multi_class="ovo"):
        self._store_params(locals())


@shared_doc
class LDMClassifier(BaseMarginClassifier):
    r"""LDM classifier, the Large margin Distribution Machine, on the fast solvers (SPEC §3).

    .. math::

        \min_{w, \xi}\ \tfrac12\|w\|^2 + \lambda_1\hat\gamma - \lambda_2\bar\gamma
        + C\sum_i\xi_i
        \quad\text{s.t.}\quad y_i w^\top\phi(x_i)\ge 1-\xi_i,\ \xi_i\ge 0

    with the margin mean :math:`\bar\gamma` and the pairwise margin variance
    :math:`\hat\gamma` (seed 001 eqs. 3–5). Each binary problem is a :class:`refmodels.LDM`
    solved by :func:`fast.solve` (box-constrained dual coordinate descent), with a
    regularized intercept (``fit_intercept``).

    Parameters
    ----------
    C : float > 0, default=1.0
        Weight of the hinge losses.
    lam1 : float >= 0, default=0.05
        Weight of the pairwise margin variance.
    lam2 : float >= 0, default=0.05
        Weight of the margin mean (``lam1 = lam2 = 0`` is the SVM with ``C``).
    <<fit_intercept:bias intercept_scaling>>
    <<kernel gamma degree coef0 tol max_iter:dcd random_state:dcd multi_class>>

    <<Attributes: multiclass_attributes intercept_:bias>>

    See Also
    --------
    refmodels.LDM : The problem, solved by the reference (CVXPY) and certified.
    ODMLClassifier : The same machine in seed 002's parametrisation
        (``LDM(C, lam1, lam2) = ODML(lam = m C, mu1 = 2 lam1, mu2 = lam2)``).

    Notes
    -----
    **Defaults**: ``kernel="rbf"`` (``gamma="scale"``), ``C=1`` (``SVC``'s;
    ``LDM(C) = ODML(lam = m C)``, so the same machine as :class:`ODMLClassifier`'s
    default up to ``mu2``). With the former linear default it scored 0.67 on iris (0.88
    mean). refmodels.LDM defaults to ``lam1=lam2=0`` and the linear kernel.
    <<defaults breast_cancer=0.979 wine=0.989 iris=0.960 digits=0.987 mean=0.979>>

    <<intercept measured=0.979 before=0.978>>

    <<multiclass:margin>>

    References
    ----------
    .. [1] Teng Zhang and Zhi-Hua Zhou. Large Margin Distribution Machine. Proceedings of
       the 20th ACM SIGKDD International Conference on Knowledge Discovery and Data Mining
       (KDD), 2014 (seed 001; LDM is its eqs. 3–12).

    <<Examples: load_breast_cancer 0.95 LDMClassifier()>>
    """

    _problem_class = LDM
    _hyper = ("C", "lam1", "lam2", "fit_intercept", "intercept_scaling")
    _parameter_constraints = {"C": _positive(), "lam1": _nonnegative(), "lam2": _nonnegative(),
                              **_INTERCEPT, **_KERNEL_PARAMS, **MULTI_CLASS}

    def __init__(self, C=1.0, lam1=0.05, lam2=0.05, *, fit_intercept=True,
                 intercept_scaling=1.0, kernel="rbf", gamma="scale", degree=3, coef0=0.0,
                 tol=None, max_iter=None, random_state=None, multi_class="ovo"):
        self._store_params(locals())


@shared_doc
class ODMClassifier(BaseMarginClassifier):
    r"""ODM classifier on the fast solvers: the Optimal margin Distribution Machine (SPEC §4).

    .. math::

        \min_{w, \xi, \epsilon}\ \tfrac12\|w\|^2
        + \frac{\lambda}{m(1-\theta)^2}\sum_i(\xi_i^2+\mu\epsilon_i^2)
        \quad\text{s.t.}\quad 1-\theta-\xi_i \le y_i w^\top\phi(x_i) \le 1+\theta+\epsilon_i

    Each binary problem is a :class:`refmodels.ODM` solved by :func:`fast.solve` with
    ``method="auto"`` (:func:`fast.odm.choose_method`): TRON (trust-region Newton on the
    primal) on the linear kernel; with another kernel the dual coordinate descent of seed
    002 Alg. 1 (both copies of a point in one pass), or the kernel Newton at weak
    regularization; with a regularized intercept (``fit_intercept``, LIBODM's ``-b``).

    Parameters
    ----------
    lam : float > 0 or None, default=None
        Weight :math:`\lambda` of the squared losses. None is ``m``, the number of
        training samples: ``lam / m = 1`` is the weight of ``SVC``'s ``C = 1`` per point
        (SPEC §1 notes that seed 002 writes ``lambda / m`` for ``C``; see the Notes).
    <<mu theta fit_intercept:bias intercept_scaling kernel gamma degree coef0 tol>>
    max_iter : int >= 1 or None, default=None
        Iteration limit of the method (Newton iterations of TRON and of the kernel Newton,
        epochs of the coordinate descent). None is the method's default; a solve that
        reaches it warns (``ConvergenceWarning``).
    random_state : int >= 0, numpy.random.Generator, RandomState or None, default=None
        Seed of the coordinate descent's permutation of the points (and of SVRG's draws);
        TRON and the kernel Newton are deterministic and do not use it.
    method : {"auto", "dcd", "newton", "smo", "svrg", "tron"} or None, default=None
        The algorithm of :func:`fast.solve` (``fast.odm.SOLVERS.names``); None is its default,
        ``"auto"`` (:func:`fast.odm.choose_method`: TRON on the linear kernel, the kernel
        Newton at weak regularization, the dual coordinate descent otherwise, the SMO on a
        kernel whose Gram does not fit in memory; the rule is in the Notes). ``"dcd"`` is
        the coordinate descent of seed 002 Alg. 1 everywhere (the former default; it crawls
        at large ``lam``); ``"smo"`` the SMO on the same dual.
    <<multi_class>>

    <<Attributes: multiclass_attributes intercept_:bias>>

    See Also
    --------
    refmodels.ODM : The problem, solved by the reference (CVXPY) and certified.
    McODMClassifier : The multi-class ODM (one problem for all classes).
    ODMLClassifier : The margin mean/variance machine of the same papers.

    Notes
    -----
    **Defaults**: ``kernel="rbf"`` (``gamma="scale"``) and ``lam=None``, i.e.
    ``lam = m``, so that ``lam / m = 1`` as ``SVC``'s ``C = 1`` (SPEC §1: seed 002
    writes ``lambda / m`` for ``C``); ``mu=0.5``, ``theta=0.3`` are kept. The former
    ``lam=1`` with the linear kernel scored 0.67 on iris (0.84 mean). refmodels.ODM
    defaults to ``lam=1, mu=1, theta=0`` and the linear kernel.
    <<defaults breast_cancer=0.972 wine=0.994 iris=0.967 digits=0.990 mean=0.981>>

    <<intercept measured=0.981 before=0.980>>

    **Method**: ``method=None`` is :func:`fast.solve`'s ``"auto"``
    (:func:`fast.odm.choose_method`): TRON on the linear kernel (the coordinate descent's
    epochs grow with ``lam`` and with unscaled features: from ``lam = 2^12`` on TRON is far
    faster on the KEEL sets, and on raw features the coordinate descent stopped at its cap
    where TRON certified); with another kernel the
    coordinate descent while ``a = m (1-theta)^2 / (2 lam)`` is large beside the kernel's
    diagonal, the kernel Newton below (``a <= mean(diag K) / 16``, or ``<= mean(diag K)``
    when the Gram is close to low rank); beyond the Gram that fits in memory
    (``fast._kernels.AUTO_GRAM_MB``, m > 16,384) the SMO on a row cache in place of the
    coordinate descent, whose random sweeps recompute most cached rows at every epoch.
    Every solve it returned as optimal certified. The accuracy is the same (the same
    certified optimum).

    <<multiclass>>

    References
    ----------
    .. [1] Teng Zhang and Zhi-Hua Zhou. Optimal Margin Distribution Machine. IEEE
       Transactions on Knowledge and Data Engineering, 32(6), 2020 (seed 002; ODM is its
       eqs. 12–18, the coordinate descent its Alg. 1).
    .. [2] Teng Zhang and Zhi-Hua Zhou. Optimal Margin Distribution Machine. arXiv preprint
       arXiv:1604.03348, 2016 (seed 000; eqs. 7, 15–19).

    <<Examples: load_breast_cancer 0.95 ODMClassifier()>>
    """

    _problem_class = ODM
    _hyper = ("lam", "mu", "theta", "fit_intercept", "intercept_scaling")
    _parameter_constraints = {"lam": [*_positive(), None], "mu": _positive(),
                              "theta": [Interval(numbers.Real, 0.0, 1.0, closed="left")],
                              "method": [StrOptions(set(_ODM_SOLVERS.names)), None],
                              **_INTERCEPT, **_KERNEL_PARAMS, **MULTI_CLASS}

    def __init__(self, lam=None, mu=0.5, theta=0.3, *, fit_intercept=True, intercept_scaling=1.0,
                 kernel="rbf", gamma="scale", degree=3, coef0=0.0, tol=None, max_iter=None,
                 random_state=None, method=None, multi_class="ovo"):
        self._store_params(locals())

    def _solve_options(self):
        return {} if self.method is None else {"method": self.method}

    def _solve_each(self, problems, rows=None, **options):
        """As the base class; a TRON point without ``coef`` (stopped early at the ``tol`` /
        ``max_iter`` asked, or ``method="tron"`` on raw features: ``w`` alone, see
        :func:`fast.odm._after_tron`) gives ``dual_coef_`` its multipliers'
        ``Y (zeta - beta)`` (eq. 14), finite, instead of NaN."""
        super()._solve_each(problems, rows=rows, **options)
        rows = [None] * len(self.problems_) if rows is None else rows
        for p, (prob, sol, r) in enumerate(zip(self.problems_, self.solutions_, rows)):
            if sol.coef is None and "zeta" in sol.variables:
                self.dual_coef_[p if r is None else (p, r)] = prob.y * (
                    sol.variables["zeta"] - sol.variables["beta"])


@shared_doc
class SVMmClassifier(BaseMarginClassifier):
    r"""SVMm classifier, the SVM with a band above the margin, on the fast solvers (SPEC §6).

    .. math::

        \min_{w, b, \xi, \eta}\ \tfrac12\|w\|^2 + C_1\sum_i\xi_i + C_2\sum_i\eta_i
        \quad\text{s.t.}\quad 1-\xi_i \le y_i f(x_i) \le 1+\varepsilon+\eta_i,\
        \xi_i, \eta_i \ge 0

    with ``f(x) = w^T phi(x) + b``. Each binary problem is a :class:`refmodels.SVMm` solved
    by :func:`fast.solve`: the SMO (both copies of a point sharing one gradient entry), or on
    the linear kernel the interior point of :mod:`fast._svmm_linear`. ``eps=0`` is the ε-SVM of seed 003 (:class:`refmodels.EpsSVM`).

    Parameters
    ----------
    C1 : float > 0, default=1.0
        Weight of the margin slacks ``xi``.
    <<C2>>
    eps : float >= 0, default=0.5
        Width of the band above the margin ``y f(x) = 1``, in margin units (0 is the
        ε-SVM).
    <<kernel gamma degree coef0 tol max_iter:smo random_state:smo multi_class>>

    <<Attributes: multiclass_attributes dual_coef_:b intercept_:b n_iter_:smo>>

    See Also
    --------
    refmodels.SVMm : The problem, solved by the reference (CVXPY) and certified.
    MKLmClassifier : The same band with a learnt combination of kernels.
    SVMClassifier : The SVM (no band).

    Notes
    -----
    **Defaults**: ``kernel="rbf"`` (``gamma="scale"``), ``C1=1`` (``SVC``'s
    ``C``), ``C2=0.5``, ``eps=0.5`` kept. With the former linear default it scored 0.74
    on iris (0.90 mean). refmodels.SVMm defaults to ``C2=eps=1`` and the linear kernel.
    <<defaults breast_cancer=0.974 wine=0.989 iris=0.953 digits=0.989 mean=0.976>>

    Dense input only (``X`` is not taken as CSR).
    <<multiclass>>

    References
    ----------
    .. [1] Huyen Do and Alexandros Kalousis. A Metric-learning based framework for Support
       Vector Machines and Multiple Kernel Learning. arXiv preprint arXiv:1309.3877, 2013
       (seed 003; the ε-SVM is its eqs. 6–7, SVMm its eqs. 14–15).
    .. [2] Rong-En Fan, Pai-Hsuen Chen and Chih-Jen Lin. Working set selection using second
       order information for training support vector machines. Journal of Machine Learning
       Research, 6:1889–1918, 2005.

    <<Examples: load_breast_cancer 0.95 SVMmClassifier()>>
    """

    _problem_class = SVMm
    _hyper = ("C1", "C2", "eps")
    _accepts_sparse = False
    _parameter_constraints = {"C1": _positive(), "C2": _nonnegative(), "eps": _nonnegative(),
                              **_KERNEL_PARAMS, **MULTI_CLASS}

    def __init__(self, C1=1.0, C2=0.5, eps=0.5, *, kernel="rbf", gamma="scale", degree=3,
                 coef0=0.0, tol=None, max_iter=None, random_state=None, multi_class="ovo"):
        self._store_params(locals())
