"""Method choice, validation and fallback: the one switch of :func:`fast.solve`.

A family's fast module declares its solvers as data, ``SOLVERS = Solvers(METHODS,
choose_method, FALLBACK)``:

* ``METHODS``: name -> ``run(prob, tol, max_iter, random_state, warm_start, **options)``,
  one algorithm whose result is mapped to a :class:`refmodels.Solution`;
* ``choose_method(prob, options)``: the family's rule for ``method=None``; a family that
  declares ``auto=True`` also takes ``method="auto"``, the same rule without regard to the
  options;
* ``FALLBACK``: method -> :class:`Fallback`, the method that finishes what the first one
  left short, and how the two results are joined.

:func:`run` validates ``method``, applies the rule, runs the method and its declared
fallback, and reports the intercept of a bias feature; a family module never runs another
of its methods itself (as LIBLINEAR's ``train_one`` is one switch over its solvers).
"""
from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable
from types import MappingProxyType
from typing import NamedTuple

#: tolerance of the warm-started second solve when a returned point fails its self-check
REFINE_TOL = 1e-13


class Call(NamedTuple):
    """The arguments of one method run."""

    tol: object
    max_iter: object
    random_state: object
    warm_start: object
    options: dict
    #: the family's rule picked the method (``method`` None or ``"auto"``)
    chosen: bool = False
    #: its ``ConvergenceWarning`` is hidden (a fallback judges its point instead)
    quiet: bool = False


def always(call):
    """A fallback that every call of its method takes."""
    return True


def when_chosen(call):
    """A fallback taken only when the family's rule picked the first method: a method named
    by the caller runs alone."""
    return call.chosen


def unchanged(prob, call):
    """The first method's call as the caller made it."""
    return call


class Fallback(NamedTuple):
    """``then`` finishes what the first method left short.

    ``handoff(prob, first, call)`` returns the finishing method's :class:`Call` (usually
    warm-started from ``first``), or None when the first point stands; ``merge(prob, first,
    last, call)`` joins the two results into the one returned. ``when(call)``: whether this
    call takes the fallback at all; ``prepare(prob, call)``: the first method's call when
    the fallback may follow; ``quiet``: the first method's ``ConvergenceWarning`` is hidden;
    ``rescue``: a :class:`refmodels.SolverError` of the first method is handed over too
    (``handoff`` and ``merge`` then receive the exception as ``first``); ``on(prob)``:
    whether the fallback exists for this problem at all (e.g. the linear kernel only).
    """

    then: str
    handoff: Callable
    merge: Callable
    when: Callable = always
    prepare: Callable = unchanged
    quiet: bool = False
    rescue: bool = False
    on: Callable = lambda prob: True


def _refine_tol(prob):
    return REFINE_TOL


class Solvers(NamedTuple):
    """What a family's fast module declares (see the module docstring).

    ``refine_tol(prob)``: the tolerance of :func:`fast.solve`'s warm-started second solve
    (where the family's ``tol`` means something other than a gap); ``repair(prob, sol)``:
    a family's own second chance, tried before that solve (which runs when it returns
    None);
    ``lean_path(prob, values)``: a path over the regularization parameter that the
    cross-validation folds may use instead of one solve per value (None: none)."""

    methods: dict
    choose: Callable
    fallback: dict = MappingProxyType({})
    auto: bool = False
    refine_tol: Callable = _refine_tol
    repair: Callable | None = None
    lean_path: Callable | None = None

    @property
    def names(self):
        """The names ``method`` accepts (besides None)."""
        return tuple(self.methods) + (("auto",) if self.auto else ())


def resolve(solvers, prob, method, options):
    """``(name, chosen)``: the method to run, and whether the family's rule picked it."""
    if method is None:
        return solvers.choose(prob, options), True
    if solvers.auto and method == "auto":
        return solvers.choose(prob, {}), True
    if not isinstance(method, str) or method not in solvers.methods:
        raise ValueError(f"method must be one of {list(solvers.names)} (or None: the "
                         f"family's choice) for {type(prob).__name__}; got {method!r}")
    return method, False


def run(solvers, prob, method, tol, max_iter, random_state, warm_start, options):
    """Solve ``prob`` by ``method`` (None: the family's rule) and its declared fallback."""
    name, chosen = resolve(solvers, prob, method, options)
    call = Call(tol, max_iter, random_state, warm_start, dict(options), chosen)
    step = solvers.fallback.get(name)
    if step is None or not step.when(call) or not step.on(prob):
        sol = _one(solvers, name, prob, call)
    else:
        sol = _with_fallback(solvers, name, step, prob, call)
    if "bias_feature" in prob.capabilities and prob.fit_intercept:
        # the solvers see the feature map [phi(x); s] as any other and return its point
        # with intercept 0: the intercept is s w_b
        sol.intercept = prob.intercept_of(sol)
    return sol


@contextlib.contextmanager
def _quiet(quiet):
    """Hide ``ConvergenceWarning`` inside the block when ``quiet``."""
    if not quiet:
        yield
        return
    from sklearn.exceptions import ConvergenceWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        yield


def _one(solvers, name, prob, call):
    """One method, as the table states it."""
    with _quiet(call.quiet):
        return solvers.methods[name](prob, call.tol, call.max_iter, call.random_state,
                                     call.warm_start, **call.options)


def _with_fallback(solvers, name, step, prob, call):
    from refmodels.solution import SolverError

    try:
        first = _one(solvers, name, prob, step.prepare(prob, call)._replace(quiet=step.quiet))
    except SolverError as exc:
        if not step.rescue:
            raise
        first = exc
    finish = step.handoff(prob, first, call)
    if finish is None:
        if isinstance(first, Exception):
            raise first
        return first
    return step.merge(prob, first, _one(solvers, step.then, prob, finish), call)
