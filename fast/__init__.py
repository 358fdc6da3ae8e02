"""fast: hand-written (numba) solvers for the problems of :mod:`refmodels`.

``fast.solve(prob)`` dispatches on the problem's family through the one registry
(:mod:`refmodels.registry`): a problem of ``refmodels/<module>.py`` is solved by the methods
``fast/<module>.py`` declares in its ``SOLVERS`` table; the choice of a method, the check of
``method`` and the fallbacks run in one place (:mod:`fast._methods`). Every
solver returns a :class:`refmodels.Solution` in SPEC's canonical scaling, so that
``prob.certify(fast.solve(prob))`` holds. This package never imports cvxpy.
"""
from importlib import import_module

import numpy as np

__all__ = ["solve", "SVMClassifier", "ODMLClassifier", "LDMClassifier", "ODMClassifier",
           "McODMClassifier", "SVMmClassifier", "MKLmClassifier", "DRMClassifier",
           "DRRClassifier"]

_ESTIMATORS = {name for name in __all__ if name.endswith("Classifier")}
#: cross-validated estimators (fast/cv.py): the papers' grids, a warm-started path per fold
_CV = {"ODMClassifierCV", "ODMLClassifierCV", "LDMClassifierCV", "SVMClassifierCV"}
__all__ += ["path", *sorted(_CV)]


def solve(prob, method=None, tol=None, max_iter=None, random_state=None, warm_start=None,
          workspace=None, **options):
    """Solve ``prob`` (a :mod:`refmodels` problem) with the fast solver of its family.

    Parameters
    ----------
    method : str or None
        The algorithm by name (family specific; ``None`` picks a sensible default).
    tol, max_iter : stopping tolerance and iteration cap (family defaults when None).
    random_state : int, Generator or None; for the randomised methods (permutations, SGD).
        Calls with the same int (or a Generator in the same state) take the same steps and
        return the same numbers; None draws a new seed at each call, as scikit-learn does,
        so the iteration count of a randomised method varies from call to call.
    warm_start : Solution or None; a previous solution to start from.
    workspace : refmodels.Workspace or None; where the Gram, the feature map and the
        solvers' data layouts are kept for later calls (``fast.path`` passes one to every
        point). It makes later calls faster; it never changes a number.

    Returns
    -------
    refmodels.Solution with ``status`` ``"optimal"`` or ``"max_iter"`` (the latter with a
    ``ConvergenceWarning`` stating the residual reached and the tolerance asked), or
    ``"converged"`` / ``"inaccurate"`` when the self-check fails (:mod:`fast._selfcheck`).
    At the defaults (no ``tol``, no ``max_iter``) a solver's stop at its own cap is checked
    too: a point that meets the certificate is ``"optimal"``, without the warning.
    """
    from refmodels import registry

    try:
        module = registry.of(prob).fast_module()
    except ValueError:
        raise ValueError(f"prob must be a refmodels problem with a fast solver; no fast solver "
                         f"for {type(prob).__name__}") from None
    from refmodels.workspace import using

    from ._common import check_random_state

    check_random_state(random_state)
    with using(workspace, owner=prob):
        return _solve(module, prob, method, tol, max_iter, random_state, warm_start, options)


def _solve(module, prob, method, tol, max_iter, random_state, warm_start, options):
    """:func:`solve` inside its workspace."""
    from . import _methods

    import warnings

    solvers = module.SOLVERS
    default_call = tol is None and max_iter is None
    try:
        # a default call records the solver's warnings: a stop at the default cap whose point
        # meets the certificate is not a failure (see ``finish``), and its warning is dropped
        with warnings.catch_warnings(record=default_call) as caught:
            if default_call:
                warnings.simplefilter("always")
            sol = _methods.run(solvers, prob, method, tol, max_iter, random_state, warm_start,
                               options)
    except np.linalg.LinAlgError as exc:
        from refmodels.solution import SolverError

        from ._common import scale_hint

        raise SolverError(f"{type(prob).__name__}: a factorisation failed in the fast solver "
                          f"({exc}): the problem is numerically singular at this scale"
                          f"{scale_hint(prob)}") from exc
    from ._selfcheck import finish

    def refine(prob, sol):
        """The generic second chance: the same call, warm-started from its own point, at a
        tighter tolerance (the family's ``refine_tol``)."""
        import warnings

        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return _methods.run(solvers, prob, method, solvers.refine_tol(prob), max_iter,
                                    random_state, sol, options)
        except (ValueError, TypeError):
            return None                   # no warm start for this method

    def own(prob, sol):
        return solvers.repair(prob, sol) if solvers.repair is not None else None

    def repair(prob, sol):
        """At the default ``tol`` only (with a looser ``tol`` the caller asked, the point
        that met it is returned as ``"converged"``, at no extra cost): the family's own
        second chance first; when it does not apply or its point still fails the check,
        the generic one too (then the family's on the refined point): the candidate the
        check judges best. A point at the default cap (``finish``'s ``recheck_cap``) gets
        the family's only."""
        from ._selfcheck import _worst, check

        if tol is not None:
            return None                   # the looser tol asked was met: "converged"
        fixed = own(prob, sol)
        if sol.status == "max_iter":
            return fixed                  # a point at the cap: no second solve to the cap
        if fixed is not None and _worst(check(prob, fixed)) <= 1.0:
            return fixed
        refined = refine(prob, sol)
        if refined is None:
            return fixed
        candidates = [c for c in (fixed, refined, own(prob, refined)) if c is not None]
        return min(candidates, key=lambda c: _worst(check(prob, c)))

    capped = sol.status == "max_iter"
    sol = finish(prob, sol, user_tol=tol, repair=repair, recheck_cap=default_call)
    from sklearn.exceptions import ConvergenceWarning

    for w in caught or ():
        if not (capped and sol.status == "optimal" and issubclass(w.category,
                                                                  ConvergenceWarning)):
            warnings.warn(w.message, w.category, stacklevel=3)
    return sol


def __getattr__(name):
    if name in _ESTIMATORS:
        return getattr(import_module(".estimators", __name__), name)
    if name in _CV:
        return getattr(import_module(".cv", __name__), name)
    raise AttributeError(f"module 'fast' has no attribute {name!r}")


# the function, bound eagerly: a lazy import of the submodule would make ``fast.path`` the
# module instead of the function
from .path import path  # noqa: E402
