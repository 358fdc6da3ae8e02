"""The numerical helpers every walk-through uses: reference solves at tight tolerances
(:func:`solve` for the problem classes, :func:`cvx_solve` for CVXPY problems written out in a
walk-through), the random binary instance, SymPy gradients evaluated numerically, a bounded
line search, certificate checks and the box coordinate descent of seed 002 Alg. 1.
"""
from __future__ import annotations

import numpy as np

from .core import Check

# ----------------------------------------------------------------------------- solves

#: Clarabel's tolerances for the walk-throughs' reference solves. The checks compare
#: quantities of two separate solves, and a point that is optimal to a relative gap g can
#: be off by about √(2g) in the variables of a strongly convex objective: the default
#: gap 1e-8 leaves 1e-4 in w, the tight 1e-12 about 1e-6 at worst (far less in practice).
TIGHT = {"tol_gap_abs": 1e-12, "tol_gap_rel": 1e-12, "tol_feas": 1e-12, "tol_ktratio": 1e-10}
#: the next levels, tried in turn when Clarabel reports a level "inaccurate" (second-order
#: cone problems often stop short of 1e-12). Passed explicitly: CVXPY keeps the settings of
#: the previous call in a problem's cached solver object.
MEDIUM = {"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10, "tol_ktratio": 1e-8}
DEFAULT = {"tol_gap_abs": 1e-8, "tol_gap_rel": 1e-8, "tol_feas": 1e-8, "tol_ktratio": 1e-6}


def solve(prob, form="dual", levels=None, **extra):
    """A reference solve of a problem class at the tightest of ``levels`` (default
    :data:`TIGHT`, :data:`MEDIUM`, :data:`DEFAULT`) that succeeds (the class certifies every
    point it returns, so a looser level is still a certified optimum)."""
    from refmodels import SolverError

    err = None
    for level in (levels or (TIGHT, MEDIUM, DEFAULT)):
        try:
            return prob.solve(form=form, **{**level, **extra})
        except SolverError as exc:
            err = exc
    raise err


def cvx_solve(problem):
    """Solve a CVXPY problem of a walk-through: Clarabel with tight tolerances, then with its
    defaults, then OSQP (for QPs) at 1e-10; the first that reports optimal wins. Returns
    the optimal value; raises RuntimeError naming every attempt when none does."""
    import cvxpy as cp

    attempts = [("CLARABEL", TIGHT), ("CLARABEL", MEDIUM), ("CLARABEL", DEFAULT),
                ("OSQP", {"eps_abs": 1e-10, "eps_rel": 1e-10, "max_iter": 200000,
                          "polish": True}),
                ("SCS", {"eps": 1e-10, "max_iters": 200000})]
    log = []
    for solver, opts in attempts:
        if solver not in cp.installed_solvers():
            continue
        try:
            problem.solve(solver=solver, **opts)
        except (cp.error.SolverError, ValueError) as exc:
            log.append(f"{solver}: {str(exc)[:60]}")
            continue
        if problem.status == cp.OPTIMAL:
            return problem.value
        log.append(f"{solver}: {problem.status}")
    raise RuntimeError("no CVXPY solver reached 'optimal' (" + "; ".join(log) + ")")


# ----------------------------------------------------------------------------- helpers

def _binary_instance(rng, m=10, d=3):
    X = rng.normal(size=(m, d))
    y = np.where(X[:, 0] + 0.7 * rng.normal(size=m) > 0, 1, -1)
    y[0], y[1] = 1, -1
    return X, y


_SYM_DATA = []     # (symbol, value) of the data entries of the expression being built
_SYM_CACHE = {}


def _sym_gradient(build, blocks, point, key=None, data=None):
    """Gradient of a SymPy expression, evaluated numerically.

    ``blocks``: ordered ``{name: size}`` of vector symbols; ``build(sym)`` gets
    ``{name: sympy.Matrix column of symbols}`` and returns the expression; ``point``:
    ``{name: array}``. Data matrices enter through :func:`_sym_matrix` as symbols too (their
    values are substituted only when the derivative is evaluated). Returns
    ``{name: gradient array}`` computed by ``sympy.diff`` and ``sympy.lambdify`` (nothing
    typed). ``key``: the expression's structure does not change between calls with the
    same key (only the data values do), so SymPy's work is done once per key and
    process; ``data``: the data arrays in the order ``build`` passes them to
    :func:`_sym_matrix` (then a cached call does not rebuild the expression)."""
    import sympy as sp

    _SYM_DATA.clear()
    if key is not None and key in _SYM_CACHE and data is not None:
        f, _ = _SYM_CACHE[key]
        data = [(None, v) for A in data for v in np.atleast_2d(np.asarray(A, float)).ravel()]
    else:
        syms = {k: sp.Matrix(sp.symbols(f"{k}0:{n}")) for k, n in blocks.items()}
        expr = build(syms)
        data = list(_SYM_DATA)
        _SYM_DATA.clear()
        flat = [s for v in syms.values() for s in v]
        grad = [sp.diff(expr, s) for s in flat]
        f = sp.lambdify(flat + [d for d, _ in data], grad, "numpy")
        if key is not None:
            _SYM_CACHE[key] = (f, None)
    args = np.concatenate([np.asarray(point[k], float).ravel() for k in blocks]
                          + [np.array([v for _, v in data], float)])
    vals = np.asarray(f(*args), dtype=float)
    out, pos = {}, 0
    for k, n in blocks.items():
        out[k] = vals[pos:pos + n]
        pos += n
    return out


def _sym_matrix(A):
    """A data array as a SymPy matrix of fresh symbols (values kept for evaluation)."""
    import sympy as sp

    A = np.atleast_2d(np.asarray(A, float))
    n0 = len(_SYM_DATA)
    syms = sp.symbols(f"data{n0}:{n0 + A.size}")
    _SYM_DATA.extend(zip(syms, A.ravel()))
    return sp.Matrix(A.shape[0], A.shape[1], syms)


def _line_min(phi, lo, hi, xatol=1e-12):
    """Minimiser of a scalar function on ``[lo, hi]`` by a bounded scalar search (SciPy),
    independent of any closed form; the end points are compared too (a bounded Brent search
    never evaluates them exactly)."""
    from scipy.optimize import minimize_scalar

    res = minimize_scalar(phi, bounds=(lo, hi), method="bounded",
                          options={"xatol": xatol, "maxiter": 500})
    best, fbest = float(res.x), float(res.fun)
    for t in (lo, hi):
        ft = phi(t)
        if ft < fbest:
            best, fbest = float(t), ft
    return best


def _cert_residual(cert):
    """Largest scaled residual of a certificate (0 when it holds exactly)."""
    return max(abs(s) for _, s in cert.residuals.values())


def _certificate_check(prob, what, **point):
    """The check that ``prob``'s KKT certificate of ``prob.solution_from(**point)`` holds
    (its largest scaled residual is 0 to 1e-6); ``what`` names the point."""
    cert = prob.certify(prob.solution_from(**point))
    return Check(f"KKT certificate of {what}: largest scaled residual", _cert_residual(cert),
                 0.0, 1e-6)


def _box_cd(Qm, lin, upper, x0=None, epochs=20000, stop=1e-13, return_epochs=False):
    """Dual coordinate descent on ``1/2 x^T Qm x + lin^T x``, ``0 <= x <= upper`` with the
    closed-form step of seed 002 Alg. 1: ``x_i <- clip(x_i - g_i / Qm_ii, 0, upper_i)``,
    epochs until the largest step of an epoch is below ``stop·(1 + max|x|)`` (CD converges
    linearly on these strongly convex or box-bounded QPs) or ``epochs`` have run."""
    n = Qm.shape[0]
    x = np.zeros(n) if x0 is None else np.array(x0, float)
    up = np.broadcast_to(np.asarray(upper, float), (n,))
    g = Qm @ x + lin
    ep = 0
    for ep in range(1, epochs + 1):
        big = 0.0
        for i in range(n):
            if Qm[i, i] <= 0:
                continue
            new = min(max(x[i] - g[i] / Qm[i, i], 0.0), up[i])
            d = new - x[i]
            if d != 0.0:
                g += d * Qm[:, i]
                x[i] = new
                big = max(big, abs(d))
        if big <= stop * (1.0 + float(np.max(np.abs(x)))):
            break
    return (x, ep) if return_epochs else x


def _cd_step_checks(Qm, lin, upper, x_star, rng, tol=1e-6):
    """The closed-form coordinate step against a bounded line search on the same 1-D
    restriction, and CD run to convergence against the CVXPY optimum ``x_star``."""
    n = Qm.shape[0]
    up = np.broadcast_to(np.asarray(upper, float), (n,))
    x = rng.uniform(0, 1, n) * np.where(np.isfinite(up), up, 1.0)
    i = int(rng.integers(n))
    g = Qm[i] @ x + lin[i]
    closed = min(max(x[i] - g / Qm[i, i], 0.0), up[i])

    def phi(t):
        z = x.copy()
        z[i] = t
        return 0.5 * z @ Qm @ z + lin @ z
    hi = up[i] if np.isfinite(up[i]) else abs(x[i]) + 10 * (abs(g) / Qm[i, i] + 1)
    searched = _line_min(phi, 0.0, hi)
    xcd, ep = _box_cd(Qm, lin, upper, return_epochs=True)
    return [Check(f"closed-form step on coordinate {i} = bounded line search on the same "
                  "1-D restriction", closed, searched, 1e-6),
            Check(f"coordinate descent from 0 until its largest step is below 1e-13 ({ep} "
                  "epochs) = the CVXPY dual optimum", xcd, x_star, tol)]
