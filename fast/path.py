"""Warm-started regularization paths: ``fast.path(prob, lam=[...])``.

One :class:`refmodels.Solution` per value of the family's own regularization parameter,
computed from strong to weak regularization, each solve warm-started from the previous
one, as scikit-learn's ``*_path`` functions and glmnet do; returned in the caller's order.

============  ============  ===========================================================
family        parameter     warm start carried along the path
============  ============  ===========================================================
ODM           ``lam``       linear: ``w`` (TRON); kernel: ``zeta, beta`` (DCD, box
                            ``[0, inf)`` for every ``lam``)
ODML          ``lam``       ``alpha`` times ``lam_new / lam_old`` (box ``[0, lam/m]``)
LDM           ``C``         ``beta`` times ``C_new / C_old`` (box ``[0, C]``)
SVM           ``C``         ``alpha`` times ``C_new / C_old`` (box ``[0, C]``; with an
                            intercept, the SMO's; :func:`_scaled_start`)
SVMm          ``C1``        the SMO's variables
============  ============  ===========================================================

"Strong to weak" is increasing ``lam`` / ``C``: the previous dual point then stays inside
the new (larger) box, so it is a feasible start, never clipped. Every point is solved at
the solver's default tolerance unless ``tol`` is given, so each one certifies at ``1e-6``
(``certify=True`` checks it and stores the certificate in ``sol.info["certificate"]``;
off by default because a kernel certificate builds the empirical kernel map, O(m^3)).

The problems along the path share one workspace (:mod:`refmodels.workspace`; the caller's
``workspace=``, else one for the path): the Gram matrix, the feature map and TRON's rows
depend on the data alone, so a kernel path computes the Gram once, without writing
anything on ``prob`` itself.

A warm-started point that does not end ``optimal`` (at the default tolerance) is solved again
from the zero point (:data:`COLD_RETRY`): from a warm start the SMO's polish may take another
route than from zero (:func:`fast._smo_run.newton_polish`: a free set small enough for the
active set, which then crawls, where the cold solve's large one gets the interior-point
method). A point whose solver raises ``SolverError`` (an
honest refusal, e.g. a factorisation failing at the data's scale) does not stop the path
(``on_error="continue"``): it gets a Solution of status ``"error"`` carrying the message, a
``ConvergenceWarning`` names the value, and the next point starts from the last good one.
"""
from __future__ import annotations

import time

import numpy as np

def _path_params():
    from refmodels import registry

    return {n: f.path_param for n, f in registry.FAMILIES.items() if f.path_param}


#: the regularization parameter of each family (larger = weaker regularization), as the
#: registry declares it (:attr:`refmodels.registry.Family.path_param`)
PATH_PARAMS = _path_params()
#: families whose dual box grows linearly with the path's parameter (``[0, C]``; ODML's
#: ``[0, lam/m]``) and whose warm start is the previous dual point scaled by
#: ``v_new / v_old`` (see :func:`_scaled_start`; LDM / ODML on KEEL spambase, m = 3,000,
#: RBF: 5/11 -> 10/11 certified, and a faster path on every set measured;
#: validation/decisions.md)
#: a warm-started point that ends neither ``optimal`` nor ``converged`` is solved again cold
#: (the cold point is kept if it is ``optimal``, else the warm one). On LDM spambase
#: (RBF gamma = 1/d, [0,1]-scaled, m = 3,000, ``validation/sweep_paths.py``) C = 2^20
#: warm-started from 2^18 ends at ``max_iter`` (duality gap 3.0e-4, violation 1e-3 after
#: four active-set polishes, each on a free set of < 1,000, one per chunk) where the cold
#: solve's interior-point polish certifies it (the path: 10/11 -> 11/11 certified, at some
#: cost in time: validation/decisions.md). Points that end ``optimal`` never pay for it (the
#: SVM / LDM / ODML paths of haberman, sonar, australian, german, breast_cancer: no retry)
COLD_RETRY = True


def _scaled_start(prev, var, v_old, v_new):
    """The warm start of the next point of an SVM path: the dual ``alpha`` of the previous
    point (box ``[0, C_old]``) times ``C_new / C_old``, clipped to the new box ``[0, C_new]``.

    With ``beta = alpha / C`` the hinge dual (SPEC §1) reads
    ``min_beta C^2 (1/2 beta^T Q beta) - C e^T beta`` on ``[0, 1]^m``: for a large C the
    quadratic term dominates and the optimal ``beta`` (which variables sit at a bound, and
    the free ones) settles, so ``alpha`` grows like ``C``. The unscaled ``alpha`` starts
    every bound variable at ``C_old``, far inside the new box, and coordinate descent then
    spends its epochs moving them one at a time. Scaling keeps the equality
    ``y^T alpha = 0`` of the intercept's dual (it is linear) and the box ``[0, C_new]``;
    the clip only guards round-off.
    """
    from dataclasses import replace

    a = prev.variables.get(var) if prev.variables else None
    if a is None or v_old is None or not v_old > 0:
        return prev
    a = np.minimum(np.maximum(np.asarray(a, dtype=np.float64) * (v_new / v_old), 0.0), v_new)
    return replace(prev, variables={var: a})


def with_params(prob, **changes):
    """``prob.replace(**changes)``: a new problem of ``prob``'s class and data with some
    hyperparameters changed (:meth:`refmodels.base.Problem.replace`)."""
    return prob.replace(**changes)


def _grid(prob, grid):
    from refmodels import registry

    try:
        name = registry.of(prob).path_param
    except ValueError:
        name = None
    if name is None:
        raise ValueError(f"fast.path has no regularization path for {type(prob).__name__}; "
                         f"families with one: {sorted(_path_params())}")
    if set(grid) != {name}:
        raise ValueError(f"fast.path({type(prob).__name__}) takes the grid of its "
                         f"regularization parameter {name!r} (e.g. {name}=[1, 4, 16]); got "
                         f"{sorted(grid) or 'none'}")
    from ._common import check_grid

    return name, check_grid(grid[name], name)


def _solve_point(p, start, warm, **kw):
    """``fast.solve(p, warm_start=start, **kw)``; a warm-started (``warm``) point that ends
    neither ``optimal`` nor ``converged`` is solved again cold (:data:`COLD_RETRY`), its
    warnings held back until the point kept is known (only that point's reach the caller).
    Returns ``(sol, retried, kept_cold)``."""
    import warnings

    import fast
    from refmodels.solution import Solution, SolverError

    if not (warm and COLD_RETRY):
        return fast.solve(p, warm_start=start, **kw), False, False
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sol = fast.solve(p, warm_start=start, **kw)
    chosen, retried, kept_cold = caught, False, False
    if sol.status not in ("optimal", "converged"):
        with warnings.catch_warnings(record=True) as caught_cold:
            warnings.simplefilter("always")
            try:
                cold = fast.solve(p, warm_start=None, **kw)
            except SolverError as exc:                # keep the warm point
                cold = Solution(objective=float("nan"), coef=None, status="error",
                                info={"error": str(exc)})
        retried = True
        if cold.status in ("optimal", "converged"):
            cold.info["cold_retry"] = {"warm_status": sol.status}
            sol, chosen, kept_cold = cold, caught_cold, True
        else:
            sol.info["cold_retry"] = {"cold_status": cold.status}
    for w in chosen:
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return sol, retried, kept_cold


def _error_solution(name, v, exc, t0):
    """The Solution of a point whose solver raised ``SolverError``, with its warning."""
    from refmodels.solution import Solution

    from ._common import not_converged_warning

    msg = str(exc)
    not_converged_warning(f"fast.path: the solve at {name}={v:g} raised SolverError ({msg}); "
                          f"that point has status 'error', the next one starts from the last "
                          f"good point", stacklevel=3)
    return Solution(objective=float("nan"), coef=None, status="error", solver="fast",
                    form="fast", time=time.perf_counter() - t0, info={"error": msg})


def path(prob, method=None, tol=None, max_iter=None, random_state=None, certify=False,
         warm_start=None, verbose=False, on_error="continue", workspace=None, progress=False,
         **grid):
    """Solve ``prob`` along a grid of its regularization parameter, warm-started.

    Parameters
    ----------
    prob : a refmodels problem (ODM, ODML, LDM, SVM, SVMm); its other hyperparameters are
        kept, its own value of the grid's parameter is ignored.
    lam= / C= / C1= : the grid (the family's parameter name, see :data:`PATH_PARAMS`): a
        1-D sequence of numbers > 0, any order, each value once (a repeated value, a
        boolean or a grid of another rank is refused with a ValueError naming it).
    method : passed to :func:`fast.solve`; for ODM ``None`` means ``"auto"`` (TRON on the
        linear kernel, the DCD otherwise); for the SVM too (without intercept: the SMO for
        a kernel, the DCD for the linear kernel, :func:`fast.svm.choose_method`).
    tol, max_iter, random_state : passed to every solve (defaults: certified mode).
    certify : bool, default False. Certify every point at the default tolerance (1e-6,
        no reference solve) and store the certificate in ``sol.info["certificate"]``.
    warm_start : a Solution to start the first (strongest) point from, or None.
    verbose : print one line per point.
    progress : bool, default False. A ``tqdm`` progress bar of the points (when ``tqdm`` is
        installed).
    on_error : ``"continue"`` (default) or ``"raise"``. A ``SolverError`` at one point:
        ``"continue"`` gives that point a Solution of status ``"error"`` (``coef`` None,
        objective NaN, the message in ``info["error"]``) with a ``ConvergenceWarning``
        naming the value, and warm-starts the next point from the last good one;
        ``"raise"`` lets it propagate (the path stops).
    workspace : refmodels.Workspace or None; shared by every point (see the module
        docstring).

    Returns
    -------
    list of Solution, one per value, in the caller's order. ``sol.info["path"]`` holds the
    parameter name and value and the position in the solve order (and ``"cold_retry"``
    when a warm start that failed was replaced by a cold solve, see :data:`COLD_RETRY`).
    """
    from refmodels.workspace import using

    if on_error not in ("continue", "raise"):
        raise ValueError(f"on_error must be 'continue' or 'raise'; got {on_error!r}")
    if not isinstance(progress, (bool, np.bool_)):
        raise ValueError(f"progress must be True or False; got {progress!r}")
    name, values = _grid(prob, grid)
    with using(workspace, owner=prob):
        return _path(prob, name, values, method, tol, max_iter, random_state, certify,
                     warm_start, verbose, on_error, progress)


def _path(prob, name, values, method, tol, max_iter, random_state, certify, warm_start,
          verbose, on_error, progress=False):
    """:func:`path` inside its workspace."""
    from refmodels.solution import SolverError

    from refmodels import registry

    family = registry.of(prob)
    if method is None and family.path_method is not None:
        method = family.path_method
    order = np.argsort(values, kind="stable")           # increasing = strong -> weak
    out = [None] * values.size
    prev, prev_v = warm_start, None
    done = {}
    from refmodels import _progress

    bar = _progress.bar(total=values.size, desc=f"fast.path {name}", enabled=progress)
    for rank, k in enumerate(order):
        bar.update(1)
        v = float(values[k])
        if v in done:                                     # a duplicate value: same point
            out[k] = done[v]
            continue
        p = with_params(prob, **{name: v})
        t0 = time.perf_counter()
        start = prev
        if prev is not None and prev is not warm_start and family.path_scaled_dual:
            start = _scaled_start(prev, family.path_scaled_dual, prev_v, v)
        try:
            sol, retried, kept_cold = _solve_point(
                p, start, prev is not None and tol is None, method=method, tol=tol,
                max_iter=max_iter, random_state=random_state)
        except SolverError as exc:
            if on_error == "raise":
                raise
            sol = _error_solution(name, v, exc, t0)
            sol.info["path"] = {"param": name, "value": v, "rank": rank,
                                "warm_started": prev is not None}
            if verbose:
                print(f"[path] {name}={v:g}: error ({exc})", flush=True)
            out[k] = sol
            done[v] = sol
            continue                                      # prev: the last good point
        sol.info["path"] = {"param": name, "value": v, "rank": rank,
                            "warm_started": prev is not None and not kept_cold,
                            "cold_retry": retried}
        if certify:
            cert = p.certify(sol, reference=False)
            sol.info["certificate"] = cert
        if verbose:
            extra = (f", certificate {'holds' if sol.info['certificate'].ok else 'FAILS'}"
                     if certify else "")
            print(f"[path] {name}={v:g}: {sol.status}, {sol.n_iter} iterations, "
                  f"{time.perf_counter() - t0:.3f} s{extra}", flush=True)
        out[k] = sol
        done[v] = sol
        prev, prev_v = sol, v
    bar.close()
    return out
