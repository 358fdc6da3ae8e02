"""
A regularization path
=====================

How ODM's solution moves with its regularization weight: the coefficients of the linear
model on the ``heart`` data for 12 values of :math:`\\lambda` (larger :math:`\\lambda`:
less regularization), each solved by the reference (CVXPY, primal form) and certified.
"""
import matplotlib.pyplot as plt
import numpy as np

import refmodels as rm
from refmodels.datasets import load
from refmodels.derive import figures

X, y = load("heart")
y = np.where(y == y.max(), 1.0, -1.0)
lams = np.logspace(-2, 2, 12)
coefs, n_sv = [], []
for lam in lams:
    prob = rm.ODM(X, y, lam=lam, mu=0.5, theta=0.3)
    sol = prob.solve(form="primal")
    assert prob.certify(sol).ok
    coefs.append(sol.w)
    g = y * (X @ sol.w)
    n_sv.append(int(np.sum(np.abs(g - 1) > 0.3 + 1e-9)))
    print(f"λ = {lam:8.3g}: ‖w‖ = {np.linalg.norm(sol.w):.3f}, {n_sv[-1]} points outside the "
          "band")

# %%
# Each line is one feature's coefficient; with more regularization (small λ) all shrink
# to zero, and the number of points outside the band (ODM's support vectors) changes.
fig = plt.figure(figsize=(6.4, 4.2))
figures.path_plot(lams, np.array(coefs), "λ (log scale)", "coefficient w_j",
                  title="ODM's regularization path on heart (13 features)")(fig)
plt.show()
