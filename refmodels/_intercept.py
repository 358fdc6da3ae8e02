"""The regularized intercept of ODM, ODML and LDM: a constant feature (``fit_intercept``).

LIBLINEAR (``-B s``) and LIBODM (``-b``, ``s = 1``) give these machines an intercept by
appending a constant feature ``s`` to every point and regularizing its weight ``w_b`` like
the others:

.. math::

    f(x) = w^\\top\\phi(x) + s\\,w_b,\\qquad
    \\tfrac12\\|w\\|^2 \\;\\to\\; \\tfrac12(\\|w\\|^2 + w_b^2).

That is the family's own problem on the feature map ``[phi(x); s]``, whose kernel is
``k(x, z) + s^2`` (:class:`refmodels.kernels.WithBias`). A problem built with
``fit_intercept=True`` states its feature map so: its ``X`` carries the constant as a last
column (linear kernel), its Gram carries ``s^2`` (precomputed kernel), or its kernel adds
``s^2`` (any other). Every solver, reference and fast, and the certificate then work on it
unchanged: the dual is the family's dual with ``G + s^2 e e^T`` in place of ``G`` (no
equality constraint: the intercept is not free), and the map back is the family's, plus

.. math::

    \\text{intercept} = s\\,w_b = s^2\\sum_i \\mathrm{coef}_i,

so that ``f(x) = sum_i coef_i k(x_i, x) + intercept`` with the user's kernel ``k``
(:meth:`BiasFeature.intercept_of`). ``Solution.variables["w"]`` keeps the weights of the
feature map (linear kernel: ``d + 1`` of them, ``w_b`` last).

This is not the SVM's ``fit_intercept`` (:class:`refmodels.SVM`), whose intercept ``b`` is
free (unregularized; the dual gains ``y^T alpha = 0``): the optimum here depends on ``s``,
and approaches the free intercept's only as ``s -> inf``.
"""
from __future__ import annotations

import inspect

import numpy as np

from . import kernels as _k
from ._validation import check_vector, check_X, positive


def bias_inputs(X, kernel, fit_intercept, intercept_scaling):
    """``(X, kernel)`` of a problem's feature map, before the family validates them.

    ``fit_intercept=True`` wraps ``kernel`` in ``WithBias(kernel, intercept_scaling)`` and
    maps ``X`` with it (:meth:`refmodels.kernels.WithBias.map_data`). A ``kernel`` that is
    already a ``WithBias`` states the map itself, with data already mapped (the problem's own
    ``X`` and ``kernel`` handed back, as :func:`fast.path` and the rescaled reference rung
    rebuild a problem): it is taken as it is, and ``fit_intercept=True`` must then name the
    same ``intercept_scaling``.
    """
    if not isinstance(fit_intercept, (bool, np.bool_)):
        raise ValueError(f"fit_intercept must be True or False; got {fit_intercept!r}")
    s = positive(intercept_scaling, "intercept_scaling")
    kernel = _k.make_kernel(kernel)
    if isinstance(kernel, _k.WithBias):
        if fit_intercept and s != kernel.scaling:
            raise ValueError(f"intercept_scaling must be the scaling of kernel={kernel!r} "
                             f"({kernel.scaling:g}) when fit_intercept=True; got {s:g}")
        if kernel.is_linear:
            Xc = check_X(X, "X", allow_sparse=True)
            if Xc.shape[1] < 2 or not kernel.carries_bias(Xc):
                raise ValueError(f"X must carry the bias feature as its last column (all "
                                 f"equal to {kernel.scaling:g}) with kernel={kernel!r}; give "
                                 f"kernel='linear', fit_intercept=True to have it appended")
            return Xc, kernel
        return X, kernel
    if not fit_intercept:
        return X, kernel
    wb = _k.WithBias(kernel, s)
    if kernel.is_linear:
        return wb.map_data(check_X(X, "X", allow_sparse=True)), wb
    if kernel.is_precomputed:
        return wb.map_data(check_X(X, "X")), wb
    return X, wb


class BiasFeature:
    """What a problem with a bias feature adds to its family (mixed in before
    :class:`refmodels.base.BinaryProblem`): the intercept it reports, the decision function
    on new points given in the user's terms, user points with an intercept, the
    certificate's check that the intercept is the point's, and the rescaled reference rung.
    Without a bias feature every method is the family's own."""

    # ---- what the problem is ------------------------------------------------------------
    @property
    def fit_intercept(self):
        """Whether the feature map has the constant feature (the kernel is a ``WithBias``)."""
        return isinstance(self.kernel, _k.WithBias)

    @property
    def intercept_scaling(self):
        """``s``, the value of the constant feature (1.0 without one)."""
        return self.kernel.scaling if self.fit_intercept else 1.0

    @property
    def base_kernel(self):
        """The kernel ``k`` of ``f(x) = sum_i coef_i k(x_i, x) + intercept`` (the user's)."""
        return self.kernel.kernel if self.fit_intercept else self.kernel

    def intercept_of(self, sol):
        """``s w_b`` of a solution: ``s`` times the last weight for the linear kernel (when
        ``sol`` carries ``w``), else ``s^2 sum(coef)`` (``w_b = s sum(coef)``); 0 without a
        bias feature, ``sol.intercept`` for a solution without a point."""
        if not self.fit_intercept:
            return 0.0
        s = self.intercept_scaling
        w = sol.variables.get("w") if sol.variables else None
        if self.kernel.is_linear and w is not None and np.shape(w) == (self.X.shape[1],):
            return float(s * np.asarray(w, dtype=float)[-1])
        if sol.coef is not None and np.shape(sol.coef) == (self.m,):
            return float(s * s * np.sum(sol.coef))
        return float(sol.intercept)

    # ---- the solutions the solvers build -------------------------------------------------
    def _solution(self, **kwargs):
        sol = super()._solution(**kwargs)
        if self.fit_intercept:
            sol.intercept = self.intercept_of(sol)
        return sol

    # ---- new points, in the user's terms ---------------------------------------------------
    def _check_points(self, Xn, name):
        """New points as the user gives them (``d`` features, or ``K(X_new, X_train)``),
        mapped like the training data (the constant column, or ``+ s^2``)."""
        if not self.fit_intercept or not (self.kernel.is_linear or self.kernel.is_precomputed):
            return super()._check_points(Xn, name)
        if self.kernel.is_precomputed:
            K = check_X(Xn, name)
            if K.shape[1] != self.m:
                raise ValueError(f"{name} must be K({name}, X_train) with {self.m} columns for "
                                 f"kernel=Precomputed(); got shape {K.shape}")
            return self.kernel.map_data(K)
        d = self.X.shape[1] - 1
        Z = check_X(Xn, name, allow_sparse=True)
        if Z.shape[1] != d:
            raise ValueError(f"{name} must have {d} features (as X, without the bias feature "
                             f"that fit_intercept appends); got {Z.shape[1]}")
        return self.kernel.map_data(Z)

    def decision_function(self, sol, X_new):
        """``f(x) = sum_i coef_i k(x_i, x) + intercept`` for the rows of ``X_new``; with a bias
        feature, evaluated through the feature map ``[phi(x); s]`` (``sum_i coef_i (k(x_i, x)
        + s^2)``, or ``[x; s]^T w``), which is that sum when the intercept is the point's
        ``s^2 sum(coef)`` (the certificate checks it)."""
        if not self.fit_intercept:
            return super().decision_function(sol, X_new)
        if sol.coef is None:
            w = sol.variables.get("w")
            if w is None or not self.kernel.is_linear:
                raise ValueError("sol must carry coef (or w for the linear kernel)")
            Z = self._check_points(X_new, "X_new")
            return np.asarray(Z @ np.asarray(w, dtype=float)).ravel()
        return self.kernel_to(X_new).T @ np.asarray(sol.coef, dtype=float)

    # ---- a user's point ---------------------------------------------------------------------
    def solution_from(self, w=None, coef=None, intercept=None, dual=None, **primal):
        """As the family's; with a bias feature, ``intercept`` is ``s w_b``: give ``w`` of
        ``d`` weights and ``intercept`` (linear kernel; ``w_b = intercept / s``), ``w`` of
        ``d + 1`` (``w_b`` last), or ``coef`` (the intercept is then ``s^2 sum(coef)``; one
        given beside it is kept as given, and the certificate checks it)."""
        if not self.fit_intercept:
            return super().solution_from(w=w, coef=coef, intercept=intercept, dual=dual,
                                         **primal)
        s = self.intercept_scaling
        if intercept is not None:
            intercept = float(check_vector([intercept], 1, "intercept")[0])
        if w is not None and self.kernel.is_linear:
            d = self.X.shape[1] - 1
            if np.ndim(w) == 1 and np.shape(w)[0] == d:
                w = np.append(check_vector(w, d, "w"), (intercept or 0.0) / s)
        sol = super().solution_from(w=w, coef=coef, intercept=None, dual=dual, **primal)
        sol.intercept = self.intercept_of(sol) if intercept is None else intercept
        return sol

    def _check_solution(self, sol):
        w = getattr(sol, "variables", {}).get("w") if hasattr(sol, "variables") else None
        if (self.fit_intercept and self.kernel.is_linear and w is not None
                and np.shape(w) == (self.X.shape[1] - 1,)):
            raise ValueError(f"sol.variables['w'] must have shape ({self.X.shape[1]},) with "
                             f"fit_intercept=True: the {self.X.shape[1] - 1} feature weights "
                             f"and the bias feature's weight w_b last (intercept = s w_b); "
                             f"prob.solution_from(w=w, intercept=b) builds it")
        super()._check_solution(sol)

    # ---- the certificate ------------------------------------------------------------------
    def _certificate_extras(self, cert, sol, point):
        """The family's, and with a bias feature ``intercept = s w_b``: the intercept the
        solution reports (what ``f(x) = sum_i coef_i k(x_i, x) + intercept`` adds) against
        the point's, scaled by ``1 + max_i |f(x_i)|`` as the decision values are."""
        super()._certificate_extras(cert, sol, point)
        if not self.fit_intercept:
            return
        s = self.intercept_scaling
        w = point[0]
        if self.kernel.is_linear:
            b_point = s * float(w[-1])
        elif sol.coef is not None:
            b_point = s * s * float(np.sum(sol.coef))
        else:
            cert.notes.append("intercept not checked: the solution carries no coef (the bias "
                              "feature's weight is not a coordinate of the empirical map)")
            return
        f = self.margins(w)
        cert.add("intercept = s w_b", abs(float(sol.intercept) - b_point),
                 1.0 + float(np.max(np.abs(f), initial=0.0)))

    # ---- the reference's rescaled rung ---------------------------------------------------
    def _without_bias_feature(self):
        """The same problem with the feature map as plain data: the family without a bias
        feature on the mapped data (the linear kernel's augmented ``X``, or the Gram
        ``K + s^2`` as a precomputed kernel)."""
        if self.kernel.is_linear:
            X, kernel = self.X, _k.Linear()
        else:
            X, kernel = (self.X if self.kernel.is_precomputed else self.gram), _k.Precomputed()
        kwargs = {}
        for name in list(inspect.signature(type(self).__init__).parameters)[1:]:
            if name == "X":
                kwargs[name] = X
            elif name == "kernel":
                kwargs[name] = kernel
            elif name == "fit_intercept":
                kwargs[name] = False
            elif name == "intercept_scaling":
                kwargs[name] = 1.0
            else:
                kwargs[name] = getattr(self, name)
        return type(self)(**kwargs)

    def _rescaled(self, s):
        """The rescaled problem of the reference ladder (:meth:`BinaryProblem._rescaled`),
        built from :meth:`_without_bias_feature` (the constant column is rescaled with the
        others); its points map back as the family's (the intercept by :meth:`_solution`)."""
        if not self.fit_intercept:
            return super()._rescaled(s)
        if self.rescale_params is None:
            return None
        return self._without_bias_feature()._rescaled(s)


def n_user_features(prob):
    """The number of features of the user's points (without the appended bias column)."""
    d = prob.X.shape[1]
    return d - 1 if getattr(prob, "fit_intercept", False) and prob.kernel.is_linear \
        and not getattr(prob, "has_intercept", False) else d
