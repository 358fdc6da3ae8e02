"""
Test your solver over many problems, inside pytest
==================================================

``refmodels.testing.check_solver(solve, family)`` draws problems of one family at every
shape and scale (unit, raw, tiny and huge features, far from the origin, near-duplicate
points; hyperparameters over orders of magnitude), certifies the point ``solve(X, y,
params)`` returns for each, diagnoses every failure, and raises ``AssertionError`` with a
report when one fails, as scikit-learn's ``check_estimator`` does. In a test file::

    from refmodels.testing import check_solver

    def test_my_svm():
        check_solver(my_solve, "SVM", n=50, fixed={"fit_intercept": True})

Here ``my_solve`` wraps scikit-learn's :class:`~sklearn.svm.SVC` (LIBSVM).
"""
import numpy as np
from sklearn.svm import SVC

from refmodels.testing import check_solver


def my_solve(X, y, params, tol=1e-10):
    """``params`` holds the hyperparameters (``C``, ``fit_intercept``) and the kernel."""
    kw = {"gamma": params["gamma"]} if params["kernel"] == "rbf" else {}
    svc = SVC(C=params["C"], kernel=params["kernel"], tol=tol, **kw).fit(X, y)
    coef = np.zeros(len(y))
    coef[svc.support_] = svc.dual_coef_[0]
    return {"coef": coef, "intercept": svc.intercept_[0], "alpha": y * coef,
            "source": "sklearn.SVC"}


suite = dict(n=8, kernels=("linear", "rbf"), scales=("unit", "small", "duplicates"),
             fixed={"fit_intercept": True, "C": 1.0})

# %%
# Solved tightly, every certificate holds; the report gives the distribution of
# ``holds_at`` (the smallest tolerance at which each certificate holds).
report = check_solver(my_solve, "SVM", **suite)
print(report)

# %%
# At LIBSVM's default ``tol=1e-3`` the suite fails, and says why: each point is feasible
# and close to its optimum, and no nearby problem fits it better: stopped early. Each of
# the worst cases comes with the code that reproduces it.
try:
    check_solver(lambda X, y, p: my_solve(X, y, p, tol=1e-3), "SVM", **suite)
except AssertionError as failure:
    print(failure)
