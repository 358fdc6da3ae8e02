"""
Write a regularizer
===================

Discriminative ridge regression (DRR) takes any convex regularizer
:math:`R(w)` of the coefficients of a test point. A regularizer is a
:class:`refmodels.regularizers.Regularizer` with three methods: a CVXPY expression (for the
reference solve), a NumPy value, and its proximal operator (for the fast solvers);
optionally its convex conjugate (for a duality gap). :func:`refmodels.regularizers.check`
probes all of them numerically.

Here: a weighted lasso :math:`R(w)=\\sum_i c_i|w_i|`, with weights :math:`c_i>0`.
"""
import numpy as np

import refmodels as rm
from refmodels import datasets
from refmodels.regularizers import Regularizer, check


class WeightedL1(Regularizer):
    """:math:`R(w)=\\sum_i c_i|w_i|`, prox = soft-thresholding at :math:`s c_i`."""

    name = "weighted_l1"

    def __init__(self, weights):
        self.weights = np.asarray(weights, float)

    def _c(self, n):
        return np.resize(self.weights, n)        # cycle the weights to the length asked

    def expr(self, w, groups):
        import cvxpy as cp
        return cp.sum(cp.multiply(self._c(w.shape[0]), cp.abs(w)))

    def value(self, w, groups):
        return float(np.sum(self._c(len(w)) * np.abs(w)))

    def prox(self, v, step, groups):
        c = self._c(len(v))
        return np.sign(v) * np.maximum(np.abs(v) - step * c, 0.0)

    def conjugate(self, u, groups):
        # the indicator of the box |u_i| <= c_i
        return 0.0 if np.all(np.abs(u) <= self._c(len(u)) * (1 + 1e-9)) else np.inf


reg = WeightedL1([0.5, 1.0, 2.0])

# %%
# The numerical checks: DCP convexity, value against the CVXPY expression, prox against a
# CVXPY solve, convexity probe, Fenchel-Young (in)equalities.
report = check(reg)
print(report)
assert report.ok

# %%
# A wrong prox (the threshold forgotten) is caught.


class Broken(WeightedL1):
    def prox(self, v, step, groups):
        return v


print("broken prox holds:", check(Broken([0.5, 1.0, 2.0])).ok)

# %%
# Use it in DRR, solved by the reference (CVXPY), and certify.
X, y = datasets.load("wine")
Xtr, ytr, Xte = X[::4], y[::4], X[1::30]
prob = rm.DRR(Xtr, ytr, Xte, alpha=1.0, beta=0.5, regularizer=reg,
              kernel=rm.kernels.RBF(gamma=1.0 / X.shape[1]))
sol = prob.solve(form="primal")
print(prob.certify(sol))
print("predicted:", prob.predict(sol))
