"""fast: hand-written (numba) solvers for the problems of :mod:`refmodels`.

``fast.solve(prob)`` dispatches on the problem's family: a problem defined in
``refmodels/<family>.py`` is solved by ``fast/<family>.py``'s ``solve``. Every
solver returns a :class:`refmodels.Solution` in SPEC's canonical scaling, so that
``prob.certify(fast.solve(prob))`` holds. This package never imports cvxpy.
"""
from importlib import import_module

__all__ = ["solve", "SVMClassifier", "ODMLClassifier", "LDMClassifier", "ODMClassifier",
           "McODMClassifier", "SVMmClassifier", "MKLmClassifier", "DRMClassifier",
           "DRRClassifier"]

_ESTIMATORS = {name for name in __all__ if name.endswith("Classifier")}


def solve(prob, method=None, tol=None, max_iter=None, random_state=None, warm_start=None,
          **options):
    """Solve ``prob`` (a :mod:`refmodels` problem) with the fast solver of its family.

    Parameters
    ----------
    method : str or None
        The algorithm by name (family specific; ``None`` picks a sensible default).
    tol, max_iter : stopping tolerance and iteration cap (family defaults when None).
    random_state : int, Generator or None; for the randomised methods (permutations, SGD).
    warm_start : Solution or None; a previous solution to start from.

    Returns
    -------
    refmodels.Solution with ``status`` ``"optimal"`` or ``"max_iter"`` (the latter with a
    ``ConvergenceWarning`` stating the residual reached and the tolerance asked).
    """
    family = type(prob).__module__.rsplit(".", 1)[-1]
    try:
        module = import_module(f".{family}", __name__)
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.{family}":
            raise
        raise ValueError(f"prob must be a refmodels problem with a fast solver; no fast solver "
                         f"for {type(prob).__name__}") from None
    return module.solve(prob, method=method, tol=tol, max_iter=max_iter,
                        random_state=random_state, warm_start=warm_start, **options)


def __getattr__(name):
    if name in _ESTIMATORS:
        return getattr(import_module(".estimators", __name__), name)
    raise AttributeError(f"module 'fast' has no attribute {name!r}")
