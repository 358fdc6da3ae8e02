"""
Find out what your solver got wrong
===================================

A certificate that fails says *that* a point is not optimal. ``cert.diagnose()`` says what
problem the point *does* solve: it certifies the point on the nearby problems a solver
writer plausibly solved instead (a loss weight scaled by ``m`` or 2, the papers' other
parametrisations, an intercept convention, the squared hinge, flipped labels, ...) and
names those whose certificate holds.

Here "your solver" is a few lines of Newton's method for ODM (seed 002 eq. 18) in which the
loss was not divided by ``m``.
"""
import numpy as np

import refmodels as rm
from refmodels import datasets

X, y = datasets.load("heart")
X = (X - X.mean(0)) / X.std(0)
lam, mu, theta = 1.0, 0.5, 0.3


def my_odm(X, y, lam, mu, theta, iters=50):
    """Newton on 1/2 ||w||^2 + c sum(xi^2 + mu eps^2), with a mistake in c."""
    c = lam / (1 - theta) ** 2                   # should be lam / (m (1 - theta)^2)
    w = np.zeros(X.shape[1])
    for _ in range(iters):
        g = y * (X @ w)
        lo, hi = np.maximum(0, 1 - theta - g), np.maximum(0, g - 1 - theta)
        grad = w - X.T @ (y * (2 * c * lo - 2 * c * mu * hi))
        L, H = lo > 0, hi > 0
        hess = np.eye(len(w)) + 2 * c * X[L].T @ X[L] + 2 * c * mu * X[H].T @ X[H]
        w = w - np.linalg.solve(hess, grad)
    return w


# %%
# The certificate fails, by far:
y = np.where(y == np.unique(y)[1], 1.0, -1.0)
prob = rm.ODM(X, y, lam=lam, mu=mu, theta=theta)
cert = prob.certify(prob.solution_from(w=my_odm(X, y, lam, mu, theta)))
print(cert)

# %%
# The diagnosis names the problem the point solves, as a change of the problem's own
# parameters, with its certificate:
diagnosis = cert.diagnose()
print(diagnosis)
best = diagnosis.best
print(best.change, best.certificate.ok, f"{best.holds_at:.1g}")

# %%
# A point that is merely unfinished is told so (here: the right problem, stopped after
# three Newton steps); no nearby problem is named for it.
c = lam / (len(y) * (1 - theta) ** 2)
w = np.zeros(X.shape[1])
for _ in range(3):
    g = y * (X @ w)
    lo, hi = np.maximum(0, 1 - theta - g), np.maximum(0, g - 1 - theta)
    w = w - 0.05 * (w - X.T @ (y * (2 * c * lo - 2 * c * mu * hi)))
print(prob.certify(prob.solution_from(w=w)).diagnose())

# %%
# From the shell the same diagnosis follows the certificate:
# ``refmodels certify --data train.csv --family ODM --param lam=1 --param mu=0.5
# --param theta=0.3 --solution mine.npz --diagnose``.
