"""
Discriminative ridge regression: which classes represent a test point
=====================================================================

DRR represents a test point by the training points, with coefficients :math:`w`; with the
group norm :math:`\\|w|C\\|_{2,1}` over the classes (a group lasso) whole classes drop out,
and the prediction is the class whose part of :math:`w` fits the point best. On the
``wine`` data (three classes), one point is held out and represented by the others.
"""
import matplotlib.pyplot as plt
import numpy as np

import refmodels as rm
from refmodels.datasets import load
from refmodels.derive import figures

X, y = load("wine")
test = 0
train = np.arange(len(y)) != test
Xtr, ytr = X[train], y[train]
prob = rm.DRR(Xtr, ytr, X[[test]], alpha=1.0, beta=0.5, q=2, r=1, rho="identity",
              kernel=rm.kernels.RBF(gamma=0.05))
sol = prob.solve()
w = sol.coef[:, 0]
classes = np.unique(ytr)
groups = [np.flatnonzero(ytr == c) for c in classes]
for c, g in zip(classes, groups):
    print(f"class {c}: ‖w_c‖ = {np.linalg.norm(w[g]):.4f} over {len(g)} points")
print("predicted class:", prob.predict(sol)[0], "  true class:", y[test])

# %%
# The coefficients by training point, coloured by class.
fig = plt.figure(figsize=(6.4, 3.8))
figures.bars(w, groups, group_names=[f"class {c}" for c in classes],
             title=f"DRR's coefficients for wine point {test} (true class {y[test]})")(fig)
plt.show()
