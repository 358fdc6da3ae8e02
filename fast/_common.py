"""The one validation vocabulary of :mod:`fast`: tolerances, iteration caps,
methods, flags, cache sizes, seeds, warm-start vectors, and the one not-converged warning.

Every solver module imports its argument checks from here; nothing here knows a family.
"""
from __future__ import annotations

import numbers
import warnings

import numpy as np

from refmodels._numeric import data_span, scale_hint  # noqa: F401 (fast's vocabulary)
from refmodels.workspace import active as _active_workspace

#: kernel-row cache of the DCD / SMO (MB), as LIBSVM's default order of magnitude
DEFAULT_CACHE_MB = 200.0


def not_converged_warning(message, stacklevel=3):
    """The one ``ConvergenceWarning`` of :mod:`fast` (scikit-learn's class)."""
    from sklearn.exceptions import ConvergenceWarning

    warnings.warn(message, ConvergenceWarning, stacklevel=stacklevel + 1)


# ---------------------------------------------------------------------------------------
# argument checks shared by the families
# ---------------------------------------------------------------------------------------
#: the part of a solver's internal duality-gap target that does not scale with ``|P|``, in
#: units of the problem's objective unit (:func:`refmodels.base.objective_scale`): the
#: self-check's allowance there (``0.1 x`` the certificate's ``1e-6``), since below it the gap
#: is at the round-off of evaluating ``P`` and a tighter target only runs to ``max_iter``
GAP_FLOOR_UNITS = 1e-7


def within_check(value, scale):
    """Whether a residual ``value`` over its ``scale`` is within the margin of the fast
    solvers' self-check (:data:`refmodels.cheap.CHECK_MARGIN` times the certificate's
    tolerance): what a solver aims at before it stops."""
    from refmodels.certify import DEFAULT_TOL
    from refmodels.cheap import CHECK_MARGIN

    return bool(value <= CHECK_MARGIN * DEFAULT_TOL * scale)


def relative_gap_target(gap_tol, prob):
    """A solver's duality-gap target as a function of the objective ``P`` (None when
    ``gap_tol`` is None): ``gap_tol |P|`` plus ``GAP_FLOOR_UNITS`` of the problem's objective
    unit (computed once here), or ``gap_tol (1 + |P|)`` for a problem without one (DRR)."""
    if gap_tol is None:
        return None
    if prob.objective_at_zero() is None:
        return lambda P: gap_tol * (1.0 + abs(P))
    floor = GAP_FLOOR_UNITS * prob.objective_unit
    return lambda P: gap_tol * abs(P) + floor


def check_common(method, methods, tol, max_iter, default_tol, default_max_iter):
    """Validate ``method``, ``tol`` and ``max_iter``; return ``(method, tol, max_iter)``."""
    if method is None:
        method = next(iter(methods))
    if not isinstance(method, str) or method not in methods:
        raise ValueError(f"method must be one of {list(methods)}; got {method!r}")
    if tol is None:
        tol = default_tol
    if isinstance(tol, (bool, np.bool_)) or not isinstance(tol, numbers.Real) \
            or not np.isfinite(float(tol)) or tol <= 0:
        raise ValueError(f"tol must be a finite number > 0; got {tol!r}")
    if max_iter is None:
        max_iter = default_max_iter
        if max_iter is None:              # the solver sets it from the problem size
            return method, float(tol), None
    if isinstance(max_iter, bool) or not isinstance(max_iter, (int, np.integer)) or max_iter < 1:
        raise ValueError(f"max_iter must be an integer >= 1; got {max_iter!r}")
    return method, float(tol), int(max_iter)


def check_grid(values, name):
    """A regularization path's grid of ``name``: a 1-D sequence of finite real numbers > 0,
    each value once; returned as a float array in the caller's order. Refused, naming the
    grid: a scalar or an array of another rank (not flattened), booleans (``True`` is not
    the number 1 here), text or complex values, and repeated values (the path would solve a
    value once and hand back one Solution object for each of its positions)."""
    example = f"e.g. {name}=[1, 4, 16]"
    if isinstance(values, (str, bytes, dict, set)):
        raise ValueError(f"{name} must be a 1-D sequence of numbers > 0 ({example}); got "
                         f"{type(values).__name__} {values!r}")
    try:
        arr = np.asarray(values)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a 1-D sequence of numbers > 0 ({example}); got a "
                         "ragged nested sequence") from None
    if arr.ndim != 1:
        got = "a single value" if arr.ndim == 0 else f"an array of shape {arr.shape}"
        raise ValueError(f"{name} must be a 1-D sequence of numbers > 0 ({example}); got {got} "
                         "(a grid is not flattened)")
    items = list(values) if isinstance(values, (list, tuple)) else list(arr)
    if arr.dtype.kind == "b" or any(isinstance(v, (bool, np.bool_)) for v in items):
        raise ValueError(f"{name} must hold numbers, not booleans; got {values!r}")
    if arr.dtype.kind == "O":
        if not all(isinstance(v, numbers.Real) for v in items):
            raise ValueError(f"{name} must hold real numbers; got {values!r}")
    elif arr.dtype.kind not in "iuf":
        raise ValueError(f"{name} must hold real numbers; got {values!r}")
    try:
        vals = arr.astype(np.float64)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{name} must hold real numbers; got {values!r}") from None
    if vals.size == 0:
        raise ValueError(f"{name} must be a non-empty sequence of numbers > 0")
    if not np.all(np.isfinite(vals)) or np.any(vals <= 0):
        raise ValueError(f"{name} must hold finite numbers > 0; got {vals!r}")
    uniq, counts = np.unique(vals, return_counts=True)
    if np.any(counts > 1):
        k = int(np.argmax(counts > 1))
        where = np.flatnonzero(vals == uniq[k]).tolist()
        raise ValueError(f"{name} holds the value {uniq[k]:g} {counts[k]} times (positions "
                         f"{where}): give each value once (e.g. np.unique({name})); the path "
                         "would solve it once and return the same Solution object for each "
                         "position")
    return vals


def check_random_state(random_state):
    """Validate ``random_state`` without drawing from it (for the deterministic solvers,
    which accept it for a uniform API and ignore it)."""
    ok = (random_state is None or isinstance(random_state, (np.random.Generator,
                                                            np.random.RandomState))
          or (isinstance(random_state, (int, np.integer)) and not isinstance(random_state, bool)
              and random_state >= 0))
    if not ok:
        raise ValueError(f"random_state must be None, an int >= 0, a numpy Generator or "
                         f"RandomState; got {random_state!r}")
    return random_state


def seed_from(random_state):
    """An int seed for numba's generator from ``random_state`` (None, int or Generator)."""
    if isinstance(random_state, np.random.Generator):
        rng = random_state
    elif random_state is None or (isinstance(random_state, (int, np.integer))
                                  and not isinstance(random_state, bool)):
        if random_state is not None and random_state < 0:
            raise ValueError(f"random_state must be None, an int >= 0 or a Generator; "
                             f"got {random_state!r}")
        rng = np.random.default_rng(random_state)
    elif isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(0, 2**31 - 1))
    else:
        raise ValueError(f"random_state must be None, an int >= 0 or a Generator; "
                         f"got {random_state!r}")
    return int(rng.integers(0, 2**31 - 1))


def check_cache_size(cache_size):
    if cache_size is None:
        return DEFAULT_CACHE_MB
    if isinstance(cache_size, bool) or not isinstance(cache_size, (int, float, np.integer,
                                                                    np.floating)) \
            or not np.isfinite(cache_size) or cache_size <= 0:
        raise ValueError(f"cache_size must be a number of megabytes > 0; got {cache_size!r}")
    return float(cache_size)


def check_bool(value, name):
    if not isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False; got {value!r}")
    return bool(value)


def check_path(path, allowed):
    if path is None:
        path = "auto"
    if path not in ("auto",) + tuple(allowed):
        raise ValueError(f"path must be one of {['auto'] + list(allowed)}; got {path!r}")
    return path


def warm_vector(warm_start, name, n, lo, hi):
    """One dual vector from ``warm_start`` (a Solution, a dict or an array), checked to be
    finite, of shape ``(n,)`` and in the box ``[lo, hi]`` (never clipped); None for None."""
    if warm_start is None:
        return None
    from refmodels.solution import Solution

    if isinstance(warm_start, Solution):
        v = warm_start.variables.get(name)
    elif isinstance(warm_start, dict):
        v = warm_start.get(name)
    else:
        v = warm_start
    if v is None:
        raise ValueError(f"warm_start must carry the dual variable {name!r}")
    try:
        v = np.asarray(v, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"warm_start must be a Solution of this problem, a dict of its dual "
                         f"variables or an array for {name!r}; got {type(v).__name__}") from None
    if v.shape != (n,) or not np.all(np.isfinite(v)):
        raise ValueError(f"warm_start[{name!r}] must be a finite vector of shape ({n},)")
    if np.any(v < lo) or np.any(v > hi):
        raise ValueError(f"warm_start[{name!r}] must lie in its box [{lo:g}, {hi:g}] (it is "
                         "not clipped)")
    return v


def warm_values(warm_start, names, sizes, lo, hi):
    """Dual variables of a previous Solution, checked against the box (never clipped)."""
    out = []
    for name, n, l, h in zip(names, sizes, lo, hi):
        v = getattr(warm_start, "variables", {}).get(name) if warm_start is not None else None
        if v is None:
            raise ValueError(f"warm_start must be a Solution carrying the dual variable "
                             f"{name!r} of this problem")
        v = np.asarray(v, dtype=np.float64).ravel()
        if v.shape != (n,):
            raise ValueError(f"warm_start.variables[{name!r}] must have shape ({n},); "
                             f"got {v.shape}")
        if not np.all(np.isfinite(v)):
            raise ValueError(f"warm_start.variables[{name!r}] must be finite")
        if np.any(v < l) or np.any(v > h):
            raise ValueError(f"warm_start.variables[{name!r}] must lie in the box "
                             f"[{l}, {h}] of this problem (it is not clipped)")
        out.append(v)
    return out


def convergence_warning(what, residual, tol, n_iter, unit="epochs", hint=""):
    """Warn that a solver stopped at ``max_iter`` with ``residual`` above ``tol``."""
    not_converged_warning(
        f"{what} stopped at max_iter={n_iter} {unit} with residual {residual:.3e} above the "
        f"tolerance tol={tol:.3e} asked; the point is not optimal to that tolerance "
        f"(increase max_iter or tol){hint}", stacklevel=4)


def kept(prob, name, build, on=None):
    """A solver's data computed from ``prob`` (or from the objects ``on``: e.g. the data
    alone, ``prob.data_key``, which a path's problems share), kept in the workspace of the
    call (:mod:`refmodels.workspace`); built and not kept outside every call."""
    ws = _active_workspace()
    if ws is None:
        return build()            # outside every call (a Solution's rows): not kept
    return ws.get(name, (prob,) if on is None else on, build)


def peek(prob, name, on=None):
    """The workspace's entry ``name`` if held, else None (never builds)."""
    ws = _active_workspace()
    return None if ws is None else ws.peek(name, (prob,) if on is None else on)


def drop(prob, name, on=None):
    """Remove the workspace's entry ``name`` (a solver's state that must start afresh)."""
    ws = _active_workspace()
    if ws is not None:
        ws.pop(name, (prob,) if on is None else on)
