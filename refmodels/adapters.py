"""Adapters: a fitted scikit-learn (or ``fast``) estimator as a refmodels problem and point.

``from_sklearn(estimator, X, y)`` returns ``(problem, solution)``: ``problem`` is the
refmodels problem, in SPEC's canonical scaling, that the estimator solved on its training
data ``(X, y)``, and ``solution = problem.solution_from(...)`` is the estimator's fitted point
in that problem's terms, ready for ``problem.certify(solution)``. ``X`` and ``y`` must be
the data the estimator was fitted on (for a :class:`~sklearn.pipeline.Pipeline`, the data
given to the pipeline: the transforms are applied and the last step is mapped).

Labels: binary problems take ``y`` as given; the larger of the two sorted labels is +1
(SPEC, notation), which is scikit-learn's ``classes_[1]``, the class a positive
``decision_function`` predicts. A multi-class classifier is several binary problems
(one-vs-one for ``SVC`` / ``NuSVC`` and the ``fast`` estimators' default, one-vs-rest for
``LinearSVC``): ``from_sklearn`` then returns a :class:`ProblemSet` and the list of its
points, one per problem, and ``problems.certify(solutions)`` a :class:`CertificateSet`
(``.ok`` when every certificate holds).

Every mapping, in one line each (details in :func:`from_sklearn`):

* ``SVC`` (binary): ``SVM(X, y, C, kernel, fit_intercept=True)``;
  ``coef[support_] = dual_coef_[0]``, ``intercept = intercept_[0]``, dual ``alpha = y * coef``.
* ``NuSVC`` (binary): the same with ``C = max_i |dual_coef_[0, i]|`` (LIBSVM's ``1/r``).
* ``LinearSVC(loss="hinge")``: ``SVM([X, s e], y, C, Linear(), fit_intercept=False)``,
  ``w = [coef_[0], intercept_[0] / s]``, ``s = intercept_scaling`` (LIBLINEAR regularizes
  its intercept).
* ``LinearSVC()`` (``loss="squared_hinge"``, the default): ``ODM(X, y, lam=C m, mu=0,
  theta=0, kernel=Linear(), fit_intercept, intercept_scaling=s)``, ``w = coef_[0]``,
  ``intercept = intercept_[0]``.
* ``KernelRidge``: ``DRM(K, y, X_test=y^T, alpha=0, beta=alpha, kernel=Precomputed())``,
  ``coef = dual_coef_``: the targets play the part of ``K_x``.
* ``Ridge``: ``DRM(Xc^T Xc, groups, X_test=(Xc^T yc)^T, alpha=0, beta=alpha,
  kernel=Precomputed())``, ``coef = coef_.T`` (the primal ridge over the features; ``Xc``,
  ``yc`` centred when ``fit_intercept``).
* ``fast.SVMClassifier``, ``ODMLClassifier``, ``LDMClassifier``, ``ODMClassifier``,
  ``SVMmClassifier`` (binary): the estimator's own problem, ``coef = dual_coef_[0]``,
  ``intercept = intercept_[0]``.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from . import kernels as _k
from ._multiclass import (MULTICLASS as _MULTICLASS, CertificateSet, ProblemSet,
                          from_fast_multiclass as _from_fast_multiclass,
                          multiclass_y as _multiclass_y)
from ._validation import check_labels, check_X

__all__ = ["from_sklearn", "svc_kernel", "ProblemSet", "CertificateSet"]

#: relative tolerance of the consistency checks between an estimator and the data given
CONSISTENCY_RTOL = 1e-10
#: relative tolerance of Ridge's ``intercept_ = ybar - xbar^T coef_`` (float64 fits; a
#: float32 fit gets ``8 (d + 1)`` float32 epsilons)
INTERCEPT_RTOL = 1e-8


def from_sklearn(estimator, X, y):
    """``(problem, solution)`` of a fitted estimator, in SPEC's canonical scaling.

    Parameters
    ----------
    estimator : a fitted ``sklearn.svm.SVC``, ``NuSVC``, ``LinearSVC``,
        ``sklearn.kernel_ridge.KernelRidge``, ``sklearn.linear_model.Ridge``, one of
        ``fast.SVMClassifier``, ``ODMLClassifier``, ``LDMClassifier``, ``ODMClassifier``,
        ``SVMmClassifier``, or a ``Pipeline`` ending in one of them.
    X : the training data the estimator was fitted on (the m x m Gram for
        ``kernel="precomputed"``).
    y : the training labels (targets for ``KernelRidge`` / ``Ridge``) it was fitted on.

    Returns
    -------
    problem : a refmodels problem (``SVM``, ``DRM``, ``ODML``, ``LDM``, ``ODM``, ``SVMm``),
        or, for a classifier fitted on more than two classes, a :class:`ProblemSet` of its
        binary problems (one per pair of classes for ``SVC``, ``NuSVC`` and the ``fast``
        estimators' default one-vs-one, one per class for ``LinearSVC`` and
        ``multi_class="ovr"``)
    solution : ``problem.solution_from(...)`` of the estimator's fitted point (a list of
        them, one per problem of the :class:`ProblemSet`), its provenance in
        ``solution.info["source"]`` (``"sklearn.SVC"``, ``"fast.ODMClassifier"``, ...).
        Certify it with ``problem.certify(solution, tol=...)`` (a :class:`CertificateSet` for
        a :class:`ProblemSet`, ``.ok`` when all hold); a tolerance near the one the
        estimator's solver was run with (its ``tol``) is the fair one.

    Raises
    ------
    ValueError : an unsupported or unfitted estimator, a setting that does not map (named
        with the rule), or ``X``/``y`` that are not the estimator's training data.

    Notes
    -----
    The mappings, one paragraph each.

    **SVC** (binary; LIBSVM's C-SVC). LIBSVM solves SPEC §1's dual with an intercept:
    ``min 1/2 a^T Q a - e^T a``, ``0 <= a <= C``, ``y^T a = 0``: its ``C`` *is* SPEC's ``C``
    (no scaling by m). scikit-learn stores ``dual_coef_[0, j] = y_i a_i`` for the support
    vector ``i = support_[j]`` with the sign turned so that a positive ``decision_function``
    means ``classes_[1]`` (= our +1), and ``intercept_[0] = -rho``; so
    ``coef = zeros(m); coef[support_] = dual_coef_[0]`` and ``intercept = intercept_[0]``
    give ``f(x) = sum_i coef_i k(x_i, x) + intercept``, the estimator's decision function;
    the solution also carries LIBSVM's own dual point ``alpha = y * coef`` (``dual=``), so
    the certificate is that of the primal-dual pair LIBSVM returned (``0 <= alpha <= C`` is
    checked as dual feasibility).
    Kernels: ``"linear"`` -> ``Linear()``, ``"rbf"`` -> ``RBF(gamma)``, ``"poly"`` ->
    ``Polynomial(degree, gamma, coef0)`` (``coef0 >= 0``, else refused: not PSD),
    ``"precomputed"`` -> ``Precomputed()`` (``X`` is the Gram); ``gamma="scale"`` is
    ``1 / (d X.var())`` (1 when the variance is 0) and ``"auto"`` is ``1 / d``, computed from
    ``X`` exactly as scikit-learn does (and checked against the estimator's ``_gamma``).
    ``"sigmoid"`` (not PSD) and callables are refused. ``class_weight`` (a per-class C) is
    refused; a ``sample_weight`` cannot be seen on a fitted SVC: such a model is a
    different problem and its certificate fails with a dual outside its box.
    Attainable accuracy: LIBSVM keeps its kernel cache in single precision (``Qfloat`` is
    ``float``), so its gradients, hence its stopping test, are exact only to about
    ``6e-8 * max_i sum_j |Q_ij alpha_j|``. With a large ``C`` or a large kernel scale (raw
    features, a polynomial kernel) a fit with ``tol=1e-8`` stalls above that floor and its
    certificate may fail at ``1e-6`` whatever ``tol`` was asked (seen on MinMax-scaled KEEL
    sets, m = 300: mostly poly degree 2-3 and ``C = 16``, 1e-6 to 4e-4; a NuSVC whose ``C =
    1/r`` is 2e4 on bupa, 3e-3; ``validation/sweep_adapters.py``). ``holds_at`` is then the
    floor, not a stop at ``tol``: a tighter ``tol`` does not lower it.

    **NuSVC** (binary). LIBSVM solves the nu-SVM dual ``min 1/2 a^T Q a``,
    ``0 <= a <= 1``, ``y^T a = 0``, ``e^T a = nu m`` and then rescales: with ``r`` the
    multiplier of ``e^T a = nu m`` (the margin of the nu-primal), it stores ``a / r`` as the
    dual coefficients and ``rho / r`` as the threshold. ``a / r`` is then an optimal C-SVM
    dual point for ``C = 1 / r`` (LIBSVM prints ``C = 1/r`` when it trains): the KKT
    conditions of the nu-SVM divided by ``r`` are those of the C-SVM. ``r`` is not stored by
    scikit-learn; a bounded support vector has ``a_i = 1``, so ``1/r = max_i |dual_coef_i|``.
    When no support vector is bounded (all free, margins exactly 1) the point is optimal
    for every ``C >= max_i |dual_coef_i|`` and that smallest ``C`` is the one we use.
    Refused (``ValueError``) when it cannot be determined: no non-zero dual coefficient
    (``r = 0`` or an empty model).

    **LinearSVC** (LIBLINEAR). ``penalty="l2"`` maps, with either loss; ``penalty="l1"``,
    ``multi_class="crammer_singer"`` and ``class_weight`` are refused. Beyond two classes
    LIBLINEAR solves one problem per class (that class +1 against the rest): ``coef_[c]``,
    ``intercept_[c]`` is the point of the problem of ``classes_[c]``.
    ``loss="squared_hinge"`` (the default, LIBLINEAR ``-s 1`` / ``-s 2``) solves
    ``1/2 (||w||^2 + w_b^2) + C sum_i max(0, 1 - y_i (w^T x_i + s w_b))^2``: SPEC §4's
    ``f_O`` at ``theta = 0`` (the band's lower edge is the margin 1), ``mu = 0`` (no loss
    above it) and ``lam / m = C``, with ODM's regularized intercept (the bias feature
    ``s = intercept_scaling``; :mod:`refmodels._intercept`). The adapter returns
    ``ODM(X, y, lam=C m, mu=0, theta=0, kernel=Linear(), fit_intercept=fit_intercept,
    intercept_scaling=s)`` and the point ``w = coef_[0]``, ``intercept = intercept_[0]``.
    LIBLINEAR's primal trust region (``dual=False``, which ``dual="auto"`` picks when
    ``m > d``) stops when its reduction falls below ``1e-12 |f|``: its point is then optimal
    in value to that, and its gradient, which the certificate's stationarity measures, can
    stay a few 1e-6 (seen at ``C = 0.7``, ``intercept_scaling = 3`` on heart).
    ``loss="hinge"`` is SPEC §1 with LIBLINEAR's dual coordinate descent.
    ``C`` is SPEC's ``C``.
    ``coef_[0]`` is ``w``, positive meaning ``classes_[1]``. With ``fit_intercept=True``
    LIBLINEAR does *not* fit an unregularized intercept: it appends a constant feature
    ``s = intercept_scaling`` to every row and regularizes its weight ``w_b`` like the
    others, ``1/2 (||w||^2 + w_b^2) + C sum hinge(y_i (w^T x_i + s w_b))``, and reports
    ``intercept_ = s w_b``. That is exactly SPEC §1 *without* intercept on the augmented
    data: the adapter returns ``SVM(hstack([X, s e]), y, C, Linear(), fit_intercept=False)``
    (its ``problem.X`` has the extra column: augment new points the same way) and
    ``w = [coef_[0], intercept_[0] / s]``. (It is not the SVM with intercept: the
    optimum depends on ``s``, and tends to it only as ``s -> inf``.)

    **SVC / NuSVC beyond two classes** (one-vs-one). LIBSVM solves one problem per pair of
    classes ``(i, j)``, ``i < j`` in ``classes_`` order, on the samples of those two classes;
    ``dual_coef_`` holds ``n_classes - 1`` rows over the support vectors grouped by class
    (``n_support_``): the pair's coefficients are ``dual_coef_[j - 1]`` on the support
    vectors of class ``i`` and ``dual_coef_[i]`` on those of class ``j``, its intercept
    ``intercept_[p]``, and its decision value is positive for class ``i``. Each pair maps
    as the binary case, ``classes_[j]`` being +1 (both signs turned): ``SVM(X_pair,
    y_pair, C, kernel, fit_intercept=True)``, ``gamma`` resolved on all of ``X`` as
    scikit-learn does; a NuSVC pair's ``C`` is its own largest ``|coefficient|``.

    **KernelRidge.** ``dual_coef_ = c = (K + beta I)^{-1} t`` for the targets ``t`` (``y``,
    one column per output), ``beta`` = KernelRidge's ``alpha``. SPEC §8's DRM with
    ``alpha = 0`` has per test point ``w(x) = (K + beta I)^{-1} K_x``: a different object
    (one vector per test point, not one for all). ``c`` is nevertheless exactly a DRM point:
    it minimises ``1/2 c^T (K + beta I) c - t^T c``, which is SPEC §8's DRM objective
    (``alpha = 0``) with the targets in the place of ``K_x``. So KernelRidge maps to
    ``DRM(K, labels, X_test=t^T, alpha=0, beta=alpha_KR, kernel=Precomputed())`` with
    ``coef = dual_coef_`` (shape (m, n_outputs)): with a precomputed kernel a "test point" is
    its kernel row, here ``t``. This certifies the numbers the estimator actually holds. The
    problem's ``predict``/``dissimilarities`` mean nothing for these pseudo test points (the
    ridge prediction at ``x`` is ``K_x^T c = t^T w_DRM(x)``: build ``DRM(X, y, X_test,
    alpha=0, beta)`` for DRM's own predictions). ``K`` is computed as KernelRidge does
    (``pairwise_kernels`` with its ``kernel``, ``gamma``, ``degree``, ``coef0``,
    ``kernel_params``); it must be PSD (``check_precomputed_gram``), so ``"sigmoid"`` is
    refused. A per-target ``alpha`` array with different values is refused. The labels of the
    DRM (its classes) do not enter a DRM with ``alpha = 0``; ``y`` (its first column) is used.
    A ``sample_weight`` cannot be seen on the fitted model; such a fit does not certify.

    **Ridge.** ``coef_ = w`` minimises ``1/2 ||yc - Xc w||^2 + beta/2 ||w||^2``
    (``beta`` = Ridge's ``alpha``; ``Xc, yc`` centred by the column means when
    ``fit_intercept=True``, the data as given otherwise), i.e. ``1/2 w^T (G + beta I) w -
    T^T w`` with ``G = Xc^T Xc``, ``T = Xc^T yc``: DRM with ``alpha = 0`` whose "training
    points" are the d features (Gram ``G``) and whose "test point" rows are ``T^T``. The
    adapter returns ``DRM(G, placeholder groups, X_test=T^T, alpha=0, beta, Precomputed())``
    with ``coef = coef_.T`` (shape (d, n_targets)): the primal ridge itself, so the point
    certified is exactly ``coef_``. The groups (``arange(d) % 2``) do not enter a DRM with
    ``alpha = 0``. With ``fit_intercept=True`` the intercept is unregularized and its optimum
    given ``w`` is ``ybar - xbar^T w``; the adapter checks ``intercept_`` against it (relative
    ``1e-8``, or ``8 (d + 1)`` epsilons of float32 for a fit on float32 data, which
    scikit-learn computes in float32) and raises ``ValueError`` otherwise.
    ``positive=True`` (a constrained problem) and ``d < 2`` are refused; a ``sample_weight``
    (weighted centring) cannot be seen.

    **fast estimators** (binary). Each stores its problem's hyperparameters and kernel
    (``kernel_``) and one :class:`refmodels.Solution` per binary problem (``solutions_``);
    the problem is rebuilt as the estimator built it (``estimator.problems_[0]`` when the
    estimator keeps it) and the point is ``coef = dual_coef_[0]``, ``intercept =
    intercept_[0]`` (``+1`` = ``classes_[1]``, as in ``fit``), with the dual variables of
    ``solutions_[0]`` when it carries them (certified as ``estimator.certify()`` does,
    rather than with multipliers derived from the margins). With a bias feature
    (``fit_intercept`` of ODM, ODML, LDM) the point carries ``intercept_[0]``, which the
    certificate checks against ``s w_b``. Beyond two classes: a :class:`ProblemSet` of
    ``problems_`` (``pairs_`` one-vs-one, or one per class) and their points.

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.preprocessing import StandardScaler
    >>> from sklearn.svm import SVC
    >>> from refmodels.adapters import from_sklearn
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> X = StandardScaler().fit_transform(X)
    >>> prob, sol = from_sklearn(SVC(C=1.0, tol=1e-8).fit(X, y), X, y)
    >>> prob.certify(sol, tol=1e-6, reference=False).ok
    True
    >>> prob, sol = from_sklearn(SVC(C=1.0).fit(X, y), X, y)     # LIBSVM's default tol=1e-3
    >>> prob.certify(sol, tol=1e-6, reference=False).ok, prob.certify(sol, tol=1e-3,
    ...                                                               reference=False).ok
    (False, True)

    """
    from sklearn.pipeline import Pipeline

    if isinstance(estimator, Pipeline):
        if len(estimator.steps) == 0:
            raise ValueError("estimator must be a fitted estimator; got an empty Pipeline")
        Xt = X
        for _, step in estimator.steps[:-1]:
            if step is None or step == "passthrough":
                continue
            Xt = step.transform(Xt)
        return from_sklearn(estimator.steps[-1][1], Xt, y)
    name = type(estimator).__name__
    module = type(estimator).__module__ or ""
    table = {
        ("sklearn", "SVC"): _from_svc,
        ("sklearn", "NuSVC"): _from_nusvc,
        ("sklearn", "LinearSVC"): _from_linear_svc,
        ("sklearn", "KernelRidge"): _from_kernel_ridge,
        ("sklearn", "Ridge"): _from_ridge,
    }
    top = module.split(".")[0]
    if (top, name) in table:
        _check_fitted(estimator)
        if name in _MULTICLASS and np.asarray(estimator.classes_).size > 2:
            return _tagged(_MULTICLASS[name](estimator, X, y), f"sklearn.{name}")
        return _tagged(table[(top, name)](estimator, X, y), f"sklearn.{name}")
    if top == "fast" and name in _fast_problems():
        _check_fitted(estimator)
        return _tagged(_from_fast(estimator, X, y), f"fast.{name}")
    supported = ["SVC", "NuSVC", "LinearSVC", "KernelRidge", "Ridge",
                 *(f"fast.{n}" for n in _fast_problems()), "a Pipeline ending in one of them"]
    raise ValueError(f"estimator must be one of {supported}; got {module}.{name}")


# ---- helpers ------------------------------------------------------------------------------------
def _tagged(pair, source):
    """``(problem, solution)`` with the point's provenance in ``solution.info["source"]``
    (``"sklearn.SVC"``, ...): the certificate offers a library's causes only for its points."""
    prob, sol = pair
    for one in (sol if isinstance(sol, list) else [sol]):    # a ProblemSet's list
        one.info["source"] = source
    return prob, sol


def _check_fitted(estimator):
    from sklearn.exceptions import NotFittedError
    from sklearn.utils.validation import check_is_fitted

    try:
        check_is_fitted(estimator)
    except NotFittedError:
        raise ValueError(f"estimator must be fitted; {type(estimator).__name__} is not "
                         "(call fit first)") from None


def _binary_y(estimator, y, m):
    y = check_labels(y, m, "y")
    classes = np.unique(y)
    est_classes = np.asarray(estimator.classes_)
    if est_classes.size != 2:
        raise ValueError(f"estimator must be a binary classifier (two classes); "
                         f"{type(estimator).__name__} was fitted on {est_classes.size} classes: "
                         "fit it (or map it) one binary sub-problem at a time")
    if classes.size != 2 or not np.array_equal(classes, est_classes):
        raise ValueError(f"y must hold the estimator's two classes {est_classes.tolist()}; got "
                         f"classes {classes.tolist()[:5]}")
    return y


def _check_shape_fit(estimator, X):
    shape = getattr(estimator, "shape_fit_", None)
    if shape is not None and tuple(shape) != tuple(X.shape):
        raise ValueError(f"X must be the estimator's training data: it was fitted on shape "
                         f"{tuple(shape)}; got {tuple(X.shape)}")


def _check_n_features(estimator, X):
    n = getattr(estimator, "n_features_in_", None)
    if n is not None and X.shape[1] != n:
        raise ValueError(f"X must be the estimator's training data with {n} features; got "
                         f"{X.shape[1]}")


def _resolved_gamma(estimator, X):
    """``gamma`` as scikit-learn's BaseLibSVM.fit resolves it."""
    g = estimator.gamma
    if isinstance(g, str):
        if g == "scale":
            var = (X.multiply(X)).mean() - X.mean() ** 2 if sp.issparse(X) else X.var()
            gamma = 1.0 / (X.shape[1] * var) if var != 0 else 1.0
        elif g == "auto":
            gamma = 1.0 / X.shape[1]
        else:
            raise ValueError(f"gamma must be 'scale', 'auto' or a number; got {g!r}")
    else:
        gamma = float(g)
    fitted = getattr(estimator, "_gamma", None)
    if fitted is not None and not np.isclose(gamma, fitted, rtol=1e-12, atol=0):
        raise ValueError(f"X must be the estimator's training data: gamma={g!r} resolves to "
                         f"{gamma!r} on X but the estimator used {fitted!r}")
    return gamma


def svc_kernel(estimator, X):
    """The :mod:`refmodels.kernels` object of a fitted ``SVC`` / ``NuSVC`` on its data ``X``."""
    kernel = estimator.kernel
    if callable(kernel):
        raise ValueError("estimator.kernel must be 'linear', 'rbf', 'poly' or 'precomputed'; a "
                         "callable kernel is not mapped: compute its Gram matrix and fit with "
                         "kernel='precomputed'")
    if kernel not in ("linear", "rbf", "poly", "precomputed"):
        raise ValueError(f"estimator.kernel must be 'linear', 'rbf', 'poly' or 'precomputed'; "
                         f"got {kernel!r} (not positive semidefinite: no SPEC problem)")
    if kernel == "poly" and estimator.coef0 < 0:
        raise ValueError(f"coef0 must be >= 0 for kernel='poly' (a PSD kernel, as "
                         f"refmodels.kernels.Polynomial requires); got {estimator.coef0!r}")
    params = {}
    if kernel in ("rbf", "poly"):
        params["gamma"] = _resolved_gamma(estimator, X)
    if kernel == "poly":
        params.update(degree=int(estimator.degree), coef0=float(estimator.coef0))
    return _k.make_kernel(kernel, **params)


def _dense_row(a):
    if sp.issparse(a):
        a = a.toarray()
    return np.asarray(a, dtype=np.float64)


def _libsvm_point(estimator, X, y, which):
    """Common part of SVC / NuSVC: checks and the full-length coef."""
    X = check_X(X, allow_sparse=True)
    y = _binary_y(estimator, y, X.shape[0])
    _check_shape_fit(estimator, X)
    if getattr(estimator, "_impl", which) != which:
        raise ValueError(f"estimator must be a {which} model; got {estimator._impl!r}")
    cw = getattr(estimator, "class_weight_", None)
    if cw is not None and np.size(cw) and not np.allclose(cw, 1.0):
        raise ValueError(f"class_weight must be None: a per-class C is not SPEC §1's problem; "
                         f"the estimator has class_weight_={np.asarray(cw).tolist()}")
    kernel = svc_kernel(estimator, X)
    m = X.shape[0]
    support = np.asarray(estimator.support_, dtype=np.int64)
    dual = _dense_row(estimator.dual_coef_)
    if dual.shape != (1, support.size):
        raise ValueError(f"estimator.dual_coef_ must have shape (1, n_SV) for a binary model; "
                         f"got {dual.shape}")
    if support.size and (support.min() < 0 or support.max() >= m):
        raise ValueError(f"X must be the estimator's training data: support_ indexes rows up "
                         f"to {support.max()} but X has {m} rows")
    if not kernel.is_precomputed and support.size:
        sv = _dense_row(estimator.support_vectors_)
        rows = _dense_row(X[support])
        if sv.shape != rows.shape or not np.allclose(sv, rows, rtol=CONSISTENCY_RTOL, atol=0):
            raise ValueError("X must be the estimator's training data: its rows support_ are "
                             "not the estimator's support_vectors_ (scaled differently?)")
    coef = np.zeros(m)
    coef[support] = dual[0]
    return X, y, kernel, coef, float(np.ravel(estimator.intercept_)[0])


def _from_svc(est, X, y):
    from .svm import SVM

    X, y, kernel, coef, b = _libsvm_point(est, X, y, "c_svc")
    prob = SVM(X, y, C=float(est.C), kernel=kernel, fit_intercept=True)
    return prob, _libsvm_solution(prob, coef, b)


def _from_nusvc(est, X, y):
    from .svm import SVM

    X, y, kernel, coef, b = _libsvm_point(est, X, y, "nu_svc")
    C = float(np.max(np.abs(coef))) if coef.size else 0.0
    if not (np.isfinite(C) and C > 0):
        raise ValueError("estimator (NuSVC) does not determine C: it has no non-zero dual "
                         "coefficient (r = 0: the nu-SVM margin vanished), so it is no C-SVM "
                         "solution for any C > 0")
    prob = SVM(X, y, C=C, kernel=kernel, fit_intercept=True)
    return prob, _libsvm_solution(prob, coef, b)


def _libsvm_solution(prob, coef, b):
    """LIBSVM's pair: the primal point ``(coef, b)`` and its own dual ``alpha = y * coef``
    (``dual_coef_ = y_i alpha_i``), so the certificate checks the pair LIBSVM returned."""
    return prob.solution_from(coef=coef, intercept=b, dual={"alpha": prob.y * coef})


def _from_linear_svc(est, X, y):
    X = check_X(X, allow_sparse=True)
    y = _binary_y(est, y, X.shape[0])
    _check_n_features(est, X)
    _check_linear_svc(est)
    w = np.asarray(est.coef_, dtype=np.float64)
    if w.shape != (1, X.shape[1]):
        raise ValueError(f"estimator.coef_ must have shape (1, {X.shape[1]}); got {w.shape}")
    return _linear_svc_problem(est, X, y, w[0], float(np.ravel(est.intercept_)[0]))


def _check_linear_svc(est):
    """The settings of a LinearSVC that map: ``penalty="l2"`` with the hinge (SPEC §1) or
    the squared hinge (SPEC §4 at ``mu = theta = 0``), one-vs-rest, no class weights."""
    if est.penalty != "l2":
        raise ValueError(f"penalty must be 'l2' to map to SPEC §1 (hinge) or §4 (squared "
                         f"hinge); got {est.penalty!r}")
    if est.loss not in ("hinge", "squared_hinge"):
        raise ValueError(f"loss must be 'hinge' or 'squared_hinge'; got {est.loss!r}")
    if getattr(est, "multi_class", "ovr") != "ovr":
        raise ValueError(f"multi_class must be 'ovr'; got {est.multi_class!r} (Crammer-Singer "
                         "is not a SPEC family)")
    if est.class_weight is not None:
        raise ValueError(f"class_weight must be None: a per-class C is not SPEC §1's problem; "
                         f"got {est.class_weight!r}")


def _linear_svc_problem(est, X, y, w, b):
    """The problem and point of one binary LinearSVC problem (labels ``y``, +1 the larger)."""
    from .odm import ODM
    from .svm import SVM

    if est.loss == "squared_hinge":
        # 1/2 ||[w; w_b]||^2 + C sum max(0, 1 - y_i ([x_i; s]^T [w; w_b]))^2 is ODM's f_O at
        # theta = 0, mu = 0 with lam / m = C, on the bias feature s (LIBLINEAR -B s)
        s = float(est.intercept_scaling)
        prob = ODM(X, y, lam=float(est.C) * X.shape[0], mu=0.0, theta=0.0, kernel=_k.Linear(),
                   fit_intercept=bool(est.fit_intercept), intercept_scaling=s)
        return prob, prob.solution_from(w=w, intercept=b if est.fit_intercept else None)
    if est.fit_intercept:
        s = float(est.intercept_scaling)
        col = np.full((X.shape[0], 1), s)
        Xa = sp.hstack([X, sp.csr_matrix(col)], format="csr") if sp.issparse(X) \
            else np.hstack([X, col])
        w = np.concatenate([w, [b / s]])
    else:
        Xa = X
    prob = SVM(Xa, y, C=float(est.C), kernel=_k.Linear(), fit_intercept=False)
    return prob, prob.solution_from(w=w)


def _scalar_alpha(est):
    a = np.asarray(est.alpha, dtype=np.float64).ravel()
    if a.size == 0 or not np.all(a == a[0]):
        raise ValueError(f"alpha must be one number (the DRM's beta); got per-target values "
                         f"{a.tolist()}: map one target at a time")
    if not (np.isfinite(a[0]) and a[0] > 0):
        raise ValueError(f"alpha must be > 0 to map to a DRM (SPEC §8 needs beta > 0); got "
                         f"{a[0]!r}")
    return float(a[0])


def _targets(y, m, name="y"):
    try:
        t = np.asarray(y, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be the numeric targets the estimator was fitted "
                         "on") from None
    if t.ndim == 1:
        t = t[:, None]
    if t.ndim != 2 or t.shape[0] != m:
        raise ValueError(f"{name} must have one target (row) per row of X ({m}); got shape "
                         f"{np.shape(y)}")
    if not np.all(np.isfinite(t)):
        raise ValueError(f"{name} must contain only finite values")
    return t


def _group_labels(t):
    labels = t[:, 0]
    if np.unique(labels).size < 2:
        raise ValueError("y must take at least two values (a DRM needs two groups)")
    return labels


def _from_kernel_ridge(est, X, y):
    from sklearn.metrics.pairwise import pairwise_kernels

    from .drr import DRM

    beta = _scalar_alpha(est)
    X = check_X(X, allow_sparse=True)
    m = X.shape[0]
    t = _targets(y, m)
    Xfit = getattr(est, "X_fit_", None)
    if Xfit is not None:
        Xfit = _dense_row(Xfit) if sp.issparse(Xfit) else np.asarray(Xfit)
        rtol = max(CONSISTENCY_RTOL, 4 * np.finfo(Xfit.dtype).eps) \
            if Xfit.dtype.kind == "f" else CONSISTENCY_RTOL
        same = Xfit.shape == X.shape and np.allclose(Xfit, _dense_row(X).astype(Xfit.dtype),
                                                     rtol=rtol, atol=0)
        if not same:
            raise ValueError("X must be the estimator's training data (its X_fit_)")
    if est.kernel == "precomputed":
        K = _dense_row(X)
    else:
        params = (est.kernel_params or {}) if callable(est.kernel) else \
            {"gamma": est.gamma, "degree": est.degree, "coef0": est.coef0}
        K = pairwise_kernels(X, metric=est.kernel, filter_params=True, **params)
    K = 0.5 * (K + K.T)
    c = np.asarray(est.dual_coef_, dtype=np.float64)
    c = c[:, None] if c.ndim == 1 else c
    if c.shape != t.shape:
        raise ValueError(f"y must have the shape of the targets the estimator was fitted on "
                         f"({c.shape[0]} rows, {c.shape[1]} outputs); got {t.shape}")
    labels = _group_labels(t)
    try:
        prob = DRM(K, labels, t.T, alpha=0.0, beta=beta, kernel=_k.Precomputed())
    except ValueError as exc:
        raise ValueError(f"estimator.kernel={est.kernel!r} does not give a DRM problem: {exc}") \
            from None
    return prob, prob.solution_from(coef=c)


def _from_ridge(est, X, y):
    from .drr import DRM

    if getattr(est, "positive", False):
        raise ValueError("positive must be False: Ridge(positive=True) is a constrained problem, "
                         "not a DRM")
    beta = _scalar_alpha(est)
    X = check_X(X, allow_sparse=True)
    m, d = X.shape
    _check_n_features(est, X)
    if d < 2:
        raise ValueError(f"X must have at least 2 features to map Ridge to a DRM over its "
                         f"features; got {d}")
    Xd = _dense_row(X)
    t = _targets(y, m)
    W = np.asarray(est.coef_, dtype=np.float64)
    W = W[None, :] if W.ndim == 1 else W                  # (n_targets, d)
    if W.shape != (t.shape[1], d):
        raise ValueError(f"y must have the estimator's {W.shape[0]} target column(s); got "
                         f"{t.shape[1]}")
    if est.fit_intercept:
        xbar, ybar = Xd.mean(axis=0), t.mean(axis=0)
        Xc, tc = Xd - xbar, t - ybar
        b_opt = ybar - W @ xbar
        b = np.asarray(est.intercept_, dtype=np.float64).reshape(-1)
        scale = 1.0 + np.abs(ybar) + np.abs(W) @ np.abs(xbar)
        # a fit on float32 data is computed in float32 (scikit-learn keeps the dtype): its
        # intercept is ybar - xbar^T coef_ to float32's rounding, not to 1e-8
        dtype = np.result_type(np.asarray(est.coef_).dtype, np.asarray(est.intercept_).dtype)
        eps = np.finfo(dtype).eps if dtype.kind == "f" else 0.0
        rtol = max(INTERCEPT_RTOL, 8 * (d + 1) * eps)
        if b.shape != b_opt.shape or np.any(np.abs(b - b_opt) > rtol * scale):
            raise ValueError("estimator.intercept_ is not ybar - xbar^T coef_, the minimiser of "
                             "the ridge objective over the unregularized intercept given coef_ "
                             f"(got {b.tolist()}, expected {b_opt.tolist()}); the DRM mapping "
                             "certifies coef_ only when the intercept is that minimiser")
    else:
        Xc, tc = Xd, t
    G = Xc.T @ Xc
    T = Xc.T @ tc                                          # (d, n_targets)
    prob = DRM(G, np.arange(d) % 2, T.T, alpha=0.0, beta=beta, kernel=_k.Precomputed())
    return prob, prob.solution_from(coef=W.T)


def _fast_problems():
    """fast estimator class name -> its family (the registry's families with ``adapter``)."""
    from . import registry

    return {f.estimator: f for f in registry.FAMILIES.values() if f.adapter and f.estimator}


def _from_fast(est, X, y):
    name = type(est).__name__
    kernel = est.kernel_
    X = check_X(X, allow_sparse=kernel.is_linear)
    multi = np.asarray(est.classes_).size > 2
    if multi:
        y, _ = _multiclass_y(est, y, X.shape[0])
    else:
        y = _binary_y(est, y, X.shape[0])
    Xfit = getattr(est, "X_fit_", None)
    if Xfit is not None:
        same = Xfit.shape == X.shape and (
            (sp.issparse(Xfit) and sp.issparse(X) and (Xfit != X).nnz == 0)
            or (not sp.issparse(Xfit) and not sp.issparse(X)
                and np.allclose(Xfit, X, rtol=CONSISTENCY_RTOL, atol=0))
            or (sp.issparse(Xfit) != sp.issparse(X)
                and np.allclose(_dense_row(Xfit), _dense_row(X), rtol=CONSISTENCY_RTOL, atol=0)))
        if not same:
            raise ValueError("X must be the estimator's training data (its X_fit_)")
    elif tuple(getattr(est, "shape_fit_", X.shape)) != tuple(X.shape):
        raise ValueError(f"X must be the estimator's training data of shape {est.shape_fit_}; "
                         f"got {X.shape}")
    if multi:
        return _from_fast_multiclass(est, X, y)
    problems = getattr(est, "problems_", None)
    if problems:
        prob = problems[0]
    else:
        cls = _fast_problems()[name].problem_class()
        prob = cls(X, y, kernel=kernel, **est._problem_kwargs())
    return prob, _fast_point(est, prob, 0, None)


def _fast_point(est, prob, p, rows):
    """The point of the fast estimator's problem ``p`` (its training ``rows``, None: all)."""
    coef = np.asarray(est.dual_coef_, dtype=np.float64)[p]
    coef = coef if rows is None else coef[rows]
    b = float(np.ravel(est.intercept_)[p])
    # the estimator's own dual variables, when its solution carries them: the point is then
    # certified with the multipliers the solver found, as est.certify() does, rather than
    # with multipliers derived from the margins (on raw features, e.g. ODM on raw
    # breast_cancer, the derivation's least squares left a stationarity residual of 9e-3
    # for a point whose own multipliers certify)
    dual = None
    sols = getattr(est, "solutions_", None)
    if getattr(est, "problems_", None) and sols:
        v = sols[p].variables
        if prob.dual_names and all(np.shape(v.get(k)) == (prob._dual_size(k),)
                                   for k in prob.dual_names):
            dual = {k: np.asarray(v[k], dtype=np.float64) for k in prob.dual_names}
    # the intercept_ the estimator predicts with: the free b, or s w_b of a bias feature
    # (the certificate checks it is the point's)
    has_b = prob.has_intercept or getattr(prob, "fit_intercept", False)
    return prob.solution_from(coef=coef, intercept=b if has_b else None, dual=dual)
