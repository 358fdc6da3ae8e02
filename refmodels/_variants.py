"""Problems a diagnosis needs that the families do not offer as they stand: a family
without an intercept given a free one (fixed at the point's value, with the stationarity in
``b`` added to its certificate), and the squared hinge (the L2-SVM, ODM with ``theta = 0``
and ``mu = 0``). Each is a subclass of a family, so its certificate is the family's own,
with the terms the variant adds."""
from __future__ import annotations

import inspect

import numpy as np

# ---- a free intercept for the families that have none --------------------------------
_INTERCEPT_CLASSES = {}


def intercept_variant(cls):
    """``cls`` with a free (unregularised) intercept fixed at the point's value ``b0``: the
    margins are ``y (F w + b0)``; the certificate adds the stationarity in ``b``
    (``sum_i nu_i = 0`` for ODM; ``e^T (Y v - A P z) = 0`` for ODML / LDM) and the dual
    value of the problem with ``b = b0`` (a lower bound on its optimum, equal to the free
    problem's where that stationarity holds)."""
    if cls in _INTERCEPT_CLASSES:
        return _INTERCEPT_CLASSES[cls]
    from .odm import ODM
    from .odml import _MarginDistributionProblem

    if issubclass(cls, ODM):
        base = _ODMIntercept
    elif issubclass(cls, _MarginDistributionProblem):
        base = _MarginIntercept
    else:
        return None
    variant = type(f"{cls.__name__}WithIntercept", (base, cls), {"__module__": __name__})
    _INTERCEPT_CLASSES[cls] = variant
    return variant


def with_intercept(prob, b0):
    """``prob`` given a free intercept fixed at ``b0``: a problem of
    :func:`intercept_variant` of its class on the same data and hyperparameters (the
    constructor's arguments read back from the attributes of the same names, as
    :meth:`Problem.replace` reads them), or None for a family without that variant."""
    cls = intercept_variant(type(prob))
    if cls is None:
        return None
    names = list(inspect.signature(type(prob).__init__).parameters)[1:]
    return cls(**{n: getattr(prob, n) for n in names if hasattr(prob, n)}, b0=b0)


def has_fixed_intercept(prob):
    """Whether ``prob`` is a variant built around the point's own intercept."""
    return isinstance(prob, _InterceptMixin)


class _InterceptMixin:
    has_intercept = True

    def __init__(self, *args, b0=0.0, **kwargs):
        super().__init__(*args, **kwargs)
        self._b0 = float(b0)

    def margins(self, w, b=None):
        return super().margins(w, self._b0 if b is None else b)

    def primal_value(self, w, b=None):
        return self.objective_from_margins(self.margins(w, b), self._norm2(w))

    def reference_solution(self):
        raise NotImplementedError("no reference solver for a diagnosis variant")

    @property
    def box_dual(self):
        # the family's box dual has no room for the free intercept's equality: a dual
        # solver given it would solve the family without the intercept
        raise NotImplementedError("a diagnosis variant has no box dual (its free intercept "
                                  "adds an equality constraint)")


class _ODMIntercept(_InterceptMixin):
    """ODM with a free intercept: ``L`` gains ``-b sum_i y_i (zeta_i - beta_i)``."""

    def _dual_value(self, dual):
        nu = self.coef_from_dual(dual)[0]
        return super()._dual_value(dual) - self._b0 * float(np.sum(nu))

    def kkt_residuals(self, point, dual, sol=None):
        r = super().kkt_residuals(point, dual, sol)
        nu = self.coef_from_dual(dual)[0]
        r["stationarity (intercept)"] = (abs(float(np.sum(nu))),
                                         1.0 + float(np.sum(np.abs(nu))))
        return r


class _MarginIntercept(_InterceptMixin):
    """ODML / LDM with a free intercept: with ``z = F w + b e`` the objective is
    ``1/2 ||w||^2 + (A/2) z^T P z - u^T z + ...``; stationarity in ``w`` gains
    ``A F^T P e b`` and in ``b`` reads ``e^T (u - A P z) = 0`` (``u = Y v``)."""

    def _Pe(self):
        e = np.ones(self.m)
        return e - self.y * (self.y @ e) / self.m

    def _stationarity_target(self, w):
        return super()._stationarity_target(w) + self._A_coef * self._b0 * self._Ft(self._Pe())

    def _b_residual(self, w, mult):
        z = self.y * self.margins(w)                    # F w + b0 (decision values)
        Pz = z - self.y * (self.y @ z) / self.m
        u = self.y * self._v(mult)
        val = float(np.sum(u) - self._A_coef * np.sum(Pz))
        scale = 1.0 + float(np.sum(np.abs(u))) + self._A_coef * float(np.sum(np.abs(Pz)))
        return abs(val), scale

    def kkt_residuals(self, point, dual, sol=None):
        r = super().kkt_residuals(point, dual, sol)
        r["stationarity (intercept)"] = self._b_residual(point[0], self._mult(dual))
        return r

    def dual_candidates(self, point, sol=None):
        from .base import TIE_THRESHOLDS, derive_box_duals

        w = point[0]
        gamma = self.margins(w)
        z = self.y * gamma
        Pz = z - self.y * (self.y @ z) / self.m
        A = np.vstack([self._FtY(), self.y[None, :]])
        rhs = self._A_coef * float(np.sum(Pz)) - self._mean_coef * float(np.sum(self.y))
        target = np.concatenate([self._stationarity_target(w), [rhs]])
        for t in TIE_THRESHOLDS:
            (a,) = derive_box_duals([(gamma - 1.0, self._upper, A)], target, t)
            yield {self.dual_names[0]: a}

    def dual_value(self, dual):
        from .odml import woodbury_solve

        a = self._mult(dual)
        u = self.y * self._v(a)
        Pe = self._Pe()
        A, b0 = self._A_coef, self._b0
        up = u - A * b0 * Pe
        G = self.gram
        t = woodbury_solve(G, self.y, A, up)
        return float(np.sum(a) - 0.5 * up @ (G @ t) - b0 * np.sum(u)
                     + 0.5 * A * b0 ** 2 * float(np.sum(Pe)))

    def _dual_value(self, dual):
        return self.dual_value(dual)


# ---- the L2-SVM (squared hinge): ODM with theta = 0 and mu = 0 -------------------------
def _l2svm_classes():
    from .odm import ODM

    class L2SVM(ODM):
        """ODM with ``theta = 0``, ``mu = 0``: the squared hinge (the L2-loss SVM)."""

        def __init__(self, X, y, lam=1.0, kernel=None):
            super().__init__(X, y, lam=lam, mu=1.0, theta=0.0, kernel=kernel)
            self.mu = 0.0

        def dual_value(self, dual):
            z = np.asarray(dual["zeta"], float)
            u = self._FtY() @ z
            return float(z.sum() - 0.5 * u @ u - self.a / 2 * (z @ z))

        def dual_value_from_gram(self, dual, Gv):
            z = np.asarray(dual["zeta"], float)
            return float(z.sum() - 0.5 * (self.y * z) @ Gv - self.a / 2 * (z @ z))

    class L2SVMIntercept(_ODMIntercept, L2SVM):
        pass

    L2SVM.__module__ = L2SVMIntercept.__module__ = __name__
    return L2SVM, L2SVMIntercept


_L2SVM, _L2SVMIntercept = _l2svm_classes()
