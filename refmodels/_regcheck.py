"""The checker of a user's regularizer: :func:`check` (random draws) and
:func:`check_prox_at` (given vectors), public as :mod:`refmodels.regularizers`' own."""
from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

from ._validation import check_prox
from ._verdict import CheckReport, CheckResult, NONFINITE_PROX


# ----------------------------------------------------------------------------------------
# the checker
# ----------------------------------------------------------------------------------------
def _worse(worst, *errors):
    """The largest of ``worst`` and ``errors``, a non-finite error counting as ``inf`` (``max``
    would drop a NaN: ``max(0.0, nan)`` is 0.0, a check passed by a NaN)."""
    for e in errors:
        e = float(e)
        worst = max(worst, e if math.isfinite(e) else math.inf)
    return worst




def _prox_objective(reg, x, v, step, groups):
    """``F(x) = 1/2 ||x - v||^2 + step R(x)``, the prox problem's objective (``R`` by ``value``)."""
    return 0.5 * float(np.sum((x - v) ** 2)) + step * float(reg.value(x, groups))


#: the name of :func:`check_prox_at`'s result
PROX_AT_POINT = "prox objective at the point (not above CVXPY's)"


def check_prox_at(reg, V, step, groups, tol=1e-6, names=None):
    """:func:`check`'s ``prox objective (not above CVXPY's)`` at given vectors: for each
    column ``v`` of ``V`` (or the vector ``V``), ``reg.prox(v, step, groups)`` against a
    CVXPY/Clarabel solve ``x_cvx`` of ``min_x 1/2||x - v||^2 + step * expr(x)`` on the whole
    vector; passes when ``F(prox) - F(x_cvx) <= 0.1 * tol * (1 + |F(x_cvx)|)`` for every
    column. Returns one :class:`CheckResult` (the worst column's error; its note names that
    column and the distance ``||prox - x_cvx|| / (1 + ||x_cvx||)``, given for information).

    :func:`check` draws six-entry vectors at scales 0.1 to 10; a prox can be right there and
    wrong on the vectors a solver meets (thousands of entries, other norms, other group
    sizes). This tests it on those vectors themselves.

    Why the objective and not the distance: ``F`` is 1-strongly convex, so
    ``F(p) - F(x*) >= 1/2 ||p - x*||^2`` for the true prox ``x*``, and an interior-point
    solution is accurate in objective (about 1e-8 relative) but only to the square root of
    that in distance. Comparing objectives therefore detects a prox off by more than about
    ``sqrt(0.2 tol (1 + |F|))`` in distance, without ever failing a right prox for CVXPY's
    own inaccuracy (a right prox's ``F`` is not above the solver's, up to its rounding).
    An error finer than that is below what the CVXPY reference can see.

    A prox that raises or returns non-finite values fails (the note says which). A vector
    whose CVXPY solve does not reach ``optimal`` leaves the prox unverified there, which
    fails too (the note says so): ``F`` at any point is at least ``F(x*)``, so an
    ``optimal_inaccurate`` point can still show a prox wrong (its ``F`` above the point's),
    never right. Cost: one CVXPY compilation and conic solve of dimension ``len(v)``
    per column.
    ``names``: what to call each column in the note (default ``"vector j"``).
    """
    import cvxpy as cp

    V = np.asarray(V, dtype=float)
    if V.ndim not in (1, 2) or V.size == 0:
        raise ValueError(f"V must be a non-empty vector or matrix (columns are vectors); got "
                         f"shape {V.shape}")
    if not np.all(np.isfinite(V)):
        raise ValueError("V must be finite (NaN or inf found)")
    V2 = V[:, None] if V.ndim == 1 else V
    if isinstance(step, bool) or not isinstance(step, numbers.Real) or not (
            math.isfinite(step) and step >= 0):
        raise ValueError(f"step must be a finite number >= 0; got {step!r}")
    if isinstance(tol, bool) or not isinstance(tol, numbers.Real) or not tol > 0:
        raise ValueError(f"tol must be a number > 0; got {tol!r}")
    from .regularizers import check_groups      # (not at the top: regularizers re-exports
                                                # this module's checks)
    dim = V2.shape[0]
    groups = check_groups(groups, dim)
    names = [f"vector {j}" for j in range(V2.shape[1])] if names is None else list(names)
    if len(names) != V2.shape[1]:
        raise ValueError(f"names must name each of the {V2.shape[1]} vectors; got {len(names)}")
    tolerance = 0.1 * tol
    x = cp.Variable(dim)
    try:
        Rx = reg.expr(x, groups)
    except Exception as exc:                          # a check that raises has failed
        return CheckResult(PROX_AT_POINT, False, math.inf, tolerance,
                           f"expr raised {type(exc).__name__}: {exc}")
    worst, note, unverified = -math.inf, "", ""
    for j in range(V2.shape[1]):
        v = V2[:, j].copy()
        where = (f"{names[j]} (length {dim}, max |v| {float(np.max(np.abs(v))):.3g}, step "
                 f"{float(step):.3g})")
        try:
            xp = check_prox(reg.prox(v.copy(), float(step), groups), v)
            if not np.all(np.isfinite(xp)):
                return CheckResult(PROX_AT_POINT, False, math.inf, tolerance,
                                   f"{NONFINITE_PROX} at {where}")
            # v and the step as constants, not parameters: CVXPY's parametrised (DPP)
            # compilation of an indexed expr grows with the square of the length
            prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(x - v) + float(step) * Rx))
            try:
                with warnings.catch_warnings():
                    warnings.filterwarnings("ignore", message=".*Solution may be inaccurate.*")
                    prob.solve(solver="CLARABEL")
                status = prob.status
            except cp.error.SolverError:
                status = "solver_error"
            if status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE) or x.value is None:
                unverified = unverified or f"{where}: CVXPY status {status!r}"
                continue
            xc = np.asarray(x.value, float)
            Fp = _prox_objective(reg, xp, v, float(step), groups)
            Fc = _prox_objective(reg, xc, v, float(step), groups)
        except Exception as exc:
            return CheckResult(PROX_AT_POINT, False, math.inf, tolerance,
                               f"raised {type(exc).__name__} at {where}: {exc}")
        err = _worse(-math.inf, (Fp - Fc) / (1.0 + abs(Fc)))
        if status != cp.OPTIMAL and err <= tolerance:
            # F(x_cvx) >= F(x*) for any point: an inaccurate one can still show a prox wrong
            # (F above it), never right
            unverified = unverified or f"{where}: CVXPY status {status!r}"
            continue
        if err > worst:
            dist = float(np.linalg.norm(xp - xc) / (1.0 + np.linalg.norm(xc)))
            worst, note = err, f"worst at {where}; distance to CVXPY's {dist:.3g}"
    if worst > tolerance or not unverified:
        return CheckResult(PROX_AT_POINT, worst <= tolerance, max(worst, 0.0), tolerance, note)
    return CheckResult(PROX_AT_POINT, False, math.inf, tolerance,
                       f"not verified at {unverified} (CVXPY's point is no reference there)")


def _random_groups(dim, rng):
    n_groups = max(1, min(3, dim))
    labels = np.concatenate([np.arange(n_groups), rng.integers(0, n_groups, dim - n_groups)])
    rng.shuffle(labels)
    return [np.flatnonzero(labels == c) for c in range(n_groups)]


def check(reg, dim=6, groups=None, n_trials=5, random_state=0, tol=1e-6):
    """Check a user's regularizer numerically; returns a :class:`CheckReport`.

    Checks (each with its largest error over the trials and its tolerance):

    ``expr is convex (DCP)``
        ``reg.expr`` builds a DCP-convex CVXPY expression;
    ``value vs expr``
        ``reg.value(w)`` equals the CVXPY expression evaluated at ``w``, relative to
        ``1 + |R(w)|`` (tolerance ``1e-3 * tol``);
    ``prox vs CVXPY``
        ``reg.prox(v, s)`` against a Clarabel solve of ``min 1/2||x - v||^2 + s expr(x)``:
        distance relative to ``1 + ||x_cvx||``, tolerance ``sqrt(tol)``: the prox objective
        ``F`` is 1-strongly convex, so an interior-point solution whose objective is accurate
        to ``eps`` is only guaranteed within ``sqrt(2 eps)`` of the minimiser (observed: about
        1e-4 for ``t^3/3`` through CVXPY's power atoms). The sharp test is therefore
    ``prox objective (not above CVXPY's)``
        ``F(reg.prox(v)) - F(x_cvx) <= 0.1 * tol * (1 + |F|)``;
    ``convexity probe``
        ``R(t a + (1-t) b) <= t R(a) + (1-t) R(b)`` on random pairs (relative ``1e-3 * tol``);
    ``Fenchel-Young inequality`` / ``Fenchel-Young equality at prox points`` (with a conjugate)
        ``R(x) + R*(u) >= u^T x`` for random ``(x, u)``, and ``= `` at ``x = prox_{sR}(v)``,
        ``u = (v - x)/s`` (then ``u`` is a subgradient of ``R`` at ``x``).

    Inputs are drawn at several scales (``10^-1 .. 10^1``); steps log-uniform in
    ``[10^-2, 10^1]``. A check that raises counts as failed (the exception is in its note).

    Parameters
    ----------
    reg : Regularizer
    dim : int >= 1, length of the vectors
    groups : list of index arrays partitioning ``range(dim)``; default: a random partition
        into up to three groups
    n_trials : int >= 1, random inputs per check
    random_state : int or numpy Generator
    tol : float > 0, the base tolerance (default 1e-6)
    """
    import cvxpy as cp

    from .regularizers import Regularizer, check_groups

    if not isinstance(reg, Regularizer) and not all(
            callable(getattr(reg, k, None)) for k in ("expr", "value", "prox")):
        raise ValueError("reg must be a Regularizer (with expr, value and prox); got "
                         f"{type(reg).__name__}")
    if isinstance(dim, bool) or not isinstance(dim, numbers.Integral) or dim < 1:
        raise ValueError(f"dim must be an integer >= 1; got {dim!r}")
    if isinstance(n_trials, bool) or not isinstance(n_trials, numbers.Integral) or n_trials < 1:
        raise ValueError(f"n_trials must be an integer >= 1; got {n_trials!r}")
    if isinstance(tol, bool) or not isinstance(tol, numbers.Real) or not tol > 0:
        raise ValueError(f"tol must be a number > 0; got {tol!r}")
    if random_state is not None and not isinstance(random_state, (numbers.Integral,
                                                                  np.random.Generator)):
        raise ValueError(f"random_state must be an int, a numpy Generator or None; got "
                         f"{random_state!r}")
    rng = np.random.default_rng(random_state)
    dim = int(dim)
    groups = _random_groups(dim, rng) if groups is None else check_groups(groups, dim)
    has_conj = getattr(reg, "has_conjugate", False)

    def draw():
        return rng.normal(size=dim) * 10.0 ** rng.uniform(-1, 1)

    results = []

    def run(name, tolerance, fn):
        try:
            err, note = fn()
            results.append(CheckResult(name, err <= tolerance, err, tolerance, note))
        except Exception as exc:  # a check that raises has failed
            results.append(CheckResult(name, False, math.inf, tolerance,
                                       f"raised {type(exc).__name__}: {exc}"))

    x = cp.Variable(dim)

    def dcp():
        e = reg.expr(x, groups)
        if not (e.is_dcp() and e.is_convex() and e.size == 1):
            return math.inf, "expr is not a scalar DCP-convex expression"
        return 0.0, ""

    def value_vs_expr():
        e = reg.expr(x, groups)
        worst = 0.0
        for _ in range(n_trials):
            w = draw()
            x.value = w
            val = float(reg.value(w, groups))
            worst = _worse(worst, abs(val - float(e.value)) / (1.0 + abs(float(e.value))))
        return worst, ""

    prox_pts = []

    def prox_vs_cvxpy():
        vp, sp_ = cp.Parameter(dim), cp.Parameter(nonneg=True)
        prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(x - vp) + sp_ * reg.expr(x, groups)))
        worst_d, worst_f = 0.0, 0.0
        for _ in range(n_trials):
            v, s = draw(), float(10.0 ** rng.uniform(-2, 1))
            vp.value, sp_.value = v, s
            prob.solve(solver="CLARABEL")
            if prob.status != cp.OPTIMAL:
                raise RuntimeError(f"CVXPY status {prob.status!r}")
            xc = np.asarray(x.value, float)
            xp = check_prox(reg.prox(v, s, groups), v)
            if not np.all(np.isfinite(xp)):
                raise ValueError(NONFINITE_PROX)
            prox_pts.append((v, s, xp))
            Fp = _prox_objective(reg, xp, v, s, groups)
            Fc = _prox_objective(reg, xc, v, s, groups)
            worst_d = _worse(worst_d, np.linalg.norm(xp - xc) / (1.0 + np.linalg.norm(xc)))
            worst_f = _worse(worst_f, (Fp - Fc) / (1.0 + abs(Fc)))
        prox_obj.append(worst_f)
        return worst_d, ""

    prox_obj = []
    run("expr is convex (DCP)", 0.0, dcp)
    run("value vs expr", 1e-3 * tol, value_vs_expr)
    run("prox vs CVXPY", math.sqrt(tol), prox_vs_cvxpy)
    if prox_obj:
        results.append(CheckResult("prox objective (not above CVXPY's)", prox_obj[0] <= 0.1 * tol,
                                   max(prox_obj[0], 0.0), 0.1 * tol))
    else:
        results.append(CheckResult("prox objective (not above CVXPY's)", False, math.inf,
                                   0.1 * tol, "prox check did not run"))

    def convexity():
        worst = 0.0
        for _ in range(4 * n_trials):
            a, b, t = draw(), draw(), float(rng.uniform(0.05, 0.95))
            Ra, Rb = float(reg.value(a, groups)), float(reg.value(b, groups))
            Rm = float(reg.value(t * a + (1 - t) * b, groups))
            worst = _worse(worst, (Rm - t * Ra - (1 - t) * Rb) / (1.0 + abs(Ra) + abs(Rb)))
        return max(worst, 0.0), ""

    run("convexity probe", 1e-3 * tol, convexity)

    if has_conj:
        def fy_inequality():
            worst = 0.0
            for _ in range(4 * n_trials):
                w, u = draw(), draw()
                Rw, Ru = float(reg.value(w, groups)), float(reg.conjugate(u, groups))
                if np.isinf(Ru):
                    continue
                worst = _worse(worst, (u @ w - Rw - Ru) / (1.0 + abs(u @ w) + abs(Rw)))
            return max(worst, 0.0), ""

        def fy_equality():
            if not prox_pts:
                raise RuntimeError("no prox points (the prox check failed)")
            worst, note = 0.0, ""
            for v, s, xp in prox_pts:
                u = (v - xp) / s
                Rx, Ru = float(reg.value(xp, groups)), float(reg.conjugate(u, groups))
                shrink = 0.0
                if np.isinf(Ru):
                    # a conjugate with a bounded domain (an indicator): u from a numerical
                    # prox may leave it by rounding; shrink u towards 0 until it is inside
                    # and count the shrink factor as error.
                    lo, hi = 0.0, 1.0
                    if np.isinf(float(reg.conjugate(0.0 * u, groups))):
                        raise ValueError("R*(0) is infinite: cannot shrink u into dom R*")
                    for _ in range(60):
                        mid = 0.5 * (lo + hi)
                        if np.isinf(float(reg.conjugate((1 - mid) * u, groups))):
                            lo = mid
                        else:
                            hi = mid
                    shrink, u = hi, (1 - hi) * u
                    Ru = float(reg.conjugate(u, groups))
                    note = "u shrunk into dom R* (indicator conjugate)"
                worst = _worse(worst, shrink,
                            abs(Rx + Ru - u @ xp) / (1.0 + abs(u @ xp) + abs(Rx)))
            return worst, note

        run("Fenchel-Young inequality", 1e-3 * tol, fy_inequality)
        run("Fenchel-Young equality at prox points", tol, fy_equality)
    return CheckReport(reg, results)


#: test points (columns of W) at which :func:`prox_spot_check` tests a user's prox
PROX_SPOT_COLUMNS = 3


def prox_spot_check(prob, W):
    """A user's prox tested at the vectors its certificate rests on.

    Without a checked conjugate and without a reference optimum, DRR's certificate is the
    prox-gradient residual ``||w - prox_{s R}(v)|| / t`` with ``v = w - t (Q_D w - K_x)``,
    ``t = 1/sigma_max(Q_D)``, ``s = t beta`` (:meth:`refmodels.drr.DRR.prox_gradient_argument`):
    a small residual proves ``w`` optimal only if ``prox`` is right at that very ``v``.
    :func:`refmodels.regularizers.check` tested it on random six-entry vectors; ``v`` has one
    entry per training point, its own norm and the problem's groups. So the prox is tested
    at ``v`` itself (:func:`refmodels.regularizers.check_prox_at`: ``F(prox) - F(x_cvx) <=
    0.1 tol (1 + |F|)`` against CVXPY on the whole vector, the objective test because CVXPY's
    point is accurate in objective but only to its square root in distance). This is the
    argument the certificate evaluates, rather than the solver's last one (``ppa``'s step
    ``1/c``, ``apg``'s ``1/b``): a prox right at the certificate's ``v`` makes its residual
    the true one, whatever the iterations did. The whole vector, never a part: a part is
    the prox of nothing unless ``R`` separates over it, which a user's ``expr`` does not
    say.

    Columns: up to :data:`PROX_SPOT_COLUMNS`, those whose ``v`` has the largest max-norm,
    Euclidean norm and l1 norm (a prox wrong above some entry size, some norm, or on
    many entries at once), then by Euclidean norm. Cost: one product ``Q_D W`` (the
    certificate has already made two per column) and, per column checked, one CVXPY/Clarabel
    solve of the prox problem in ``m`` variables (no ``m x m`` matrix).

    Returns the record kept in ``sol.info["self_check"]["prox_spot_check"]``.
    """
    reg = prob.regularizer
    W = np.asarray(W, dtype=np.float64).reshape(prob.m, -1)
    n = W.shape[1]
    V, step = prob.prox_gradient_argument(W, slice(None))
    cols = []
    if np.all(np.isfinite(V)):
        A = np.abs(V)
        l2 = np.linalg.norm(V, axis=0)
        for score in (A.max(axis=0), l2, A.sum(axis=0)):
            j = int(np.argmax(score))
            if j not in cols:
                cols.append(j)
        for j in np.argsort(-l2, kind="stable"):
            if len(cols) >= min(PROX_SPOT_COLUMNS, n):
                break
            if int(j) not in cols:
                cols.append(int(j))
        cols = cols[:PROX_SPOT_COLUMNS]
    record = {"columns": cols, "step": float(step),
              "argument": "v = w - t (Q_D w - K_x), t = 1/sigma_max(Q_D) (the certificate's)"}
    if not cols:
        record.update(check=PROX_AT_POINT, passed=False, error=np.inf,
                      tolerance=np.nan, note="the prox argument is not finite")
        return record
    # each column's argument exactly as the certificate computed it
    Vc = np.column_stack([prob.prox_gradient_argument(W[:, j], j)[0] for j in cols])
    res = check_prox_at(reg, Vc, float(step), prob.groups,
                                      names=[f"test point {j}" for j in cols])
    record.update(check=res.name, passed=res.passed, error=res.max_error,
                  tolerance=res.tolerance, note=res.note)
    return record
