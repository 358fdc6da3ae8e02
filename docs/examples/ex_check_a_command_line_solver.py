"""
Check a solver written in another language
==========================================

``refmodels check-solver`` runs any executable over the suite of
:func:`refmodels.testing.check_solver`: each problem is written as a LIBSVM-format data file
and a JSON file of parameters, the command runs with a time limit, and the point it writes
(``.npz``, JSON, or a LIBSVM / LIBLINEAR / LIBODM model file) is certified and, when it
fails, diagnosed. The exit status is 0 when every certificate holds, 1 when one fails, 2 on
bad input, as for ``refmodels certify``::

    refmodels check-solver --family ODM --command 'my_odm_train {data} {params} {out}'

Here a small Python script stands in for a compiled ODM solver; its second version forgets
to divide the loss by ``m``.
"""
import os
import sys
import tempfile
import textwrap

from refmodels.cli import main

SOLVER = textwrap.dedent('''
    import json, sys
    import numpy as np

    data, params, out = sys.argv[1:4]
    rows = [line.split() for line in open(data) if line.strip()]
    y = np.array([float(r[0]) for r in rows])
    d = max(int(t.split(":")[0]) for r in rows for t in r[1:])
    X = np.zeros((len(rows), d))
    for i, r in enumerate(rows):
        for t in r[1:]:
            j, v = t.split(":")
            X[i, int(j) - 1] = float(v)
    p = json.load(open(params))
    lam, mu, th = p["lam"], p["mu"], p["theta"]
    m = 1 if "--bug" in sys.argv else len(y)
    c = lam / (m * (1 - th) ** 2)

    def f(v):
        g = y * (X @ v)
        return 0.5 * v @ v + c * np.sum(np.maximum(0, 1 - th - g) ** 2) \\
            + c * mu * np.sum(np.maximum(0, g - 1 - th) ** 2)

    w = np.zeros(d)
    for _ in range(200):                       # Newton with backtracking
        g = y * (X @ w)
        lo, hi = np.maximum(0, 1 - th - g), np.maximum(0, g - 1 - th)
        grad = w - X.T @ (y * (2 * c * lo - 2 * c * mu * hi))
        if np.linalg.norm(grad) <= 1e-13 * (1 + np.linalg.norm(w)):
            break
        L, H = lo > 0, hi > 0
        hess = np.eye(d) + 2 * c * X[L].T @ X[L] + 2 * c * mu * X[H].T @ X[H]
        step = np.linalg.solve(hess, -grad)
        t = 1.0
        while f(w + t * step) > f(w) + 1e-4 * t * grad @ step and t > 1e-12:
            t /= 2
        w = w + t * step
    np.savez(out, w=w)
''')

folder = tempfile.mkdtemp()
solver = os.path.join(folder, "my_odm_train.py")
with open(solver, "w") as fh:
    fh.write(SOLVER)
command = f"{sys.executable} {solver} {{data}} {{params}} {{out}}"

# %%
# The right solver: every certificate holds (exit status 0).
status = main(["check-solver", "--family", "ODM", "--n", "4", "--command", command])
print("exit status", status)

# %%
# The buggy one: every certificate fails (exit status 1) and the diagnosis names the bug;
# each worst case ends with the command that reproduces it alone (``--case``).
status = main(["check-solver", "--family", "ODM", "--n", "2", "--command",
               command + " --bug"])
print("exit status", status)
