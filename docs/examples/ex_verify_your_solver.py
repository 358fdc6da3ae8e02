"""
Verify a solver of your own
===========================

Hand over the data, the hyperparameters and the point your solver returned; get a KKT
certificate in the canonical scaling, and the gap to the reference optimum.

Here "your solver" is scikit-learn's :class:`~sklearn.svm.SVC` (LIBSVM): the soft-margin
SVM with an intercept, :math:`\\min\\tfrac12\\|w\\|^2+C\\sum_i\\xi_i`, which is
``rm.SVM(..., fit_intercept=True)``.
"""
import numpy as np
from sklearn.svm import SVC

import refmodels as rm
from refmodels import datasets

X, y = datasets.load("heart")
X, y = X[:120], y[:120]
C, gamma = 1.0, 0.05

# %%
# Fit with LIBSVM, tightly. ``dual_coef_`` holds :math:`y_i\alpha_i` of the support
# vectors: the coefficients :math:`\nu` over the training points (zero elsewhere).
svc = SVC(C=C, kernel="rbf", gamma=gamma, tol=1e-10).fit(X, y)
coef = np.zeros(len(y))
coef[svc.support_] = svc.dual_coef_[0]

# %%
# Certify that point with the reference problem (same C, same kernel).
prob = rm.SVM(X, y, C=C, kernel=rm.kernels.RBF(gamma=gamma), fit_intercept=True)
mine = prob.solution_from(coef=coef, intercept=float(svc.intercept_[0]))
cert = prob.certify(mine)
print(cert)

# %%
# A point that is slightly off (2 % shrunk) is caught: the certificate fails.
bad = prob.certify(prob.solution_from(coef=0.98 * coef, intercept=float(svc.intercept_[0])))
print("shrunk point holds:", bad.ok, "- failing:", bad.failing)
