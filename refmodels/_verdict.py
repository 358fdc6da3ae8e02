"""The verdict a DRR acts on: :func:`refmodels.regularizers.check` of a user's regularizer,
run once per regularizer object and kept weakly here (never on a problem), and what it
allows (see :mod:`refmodels.regularizers`: :func:`verdict`, :func:`require_usable`).
The report types of :func:`~refmodels.regularizers.check` live here too; everything is
public from :mod:`refmodels.regularizers`.
"""
from __future__ import annotations

import functools
import math
import weakref

import numpy as np

#: the note of the prox check when ``prox`` returns NaN or inf
NONFINITE_PROX = "prox returned non-finite values (NaN or inf)"
#: how :func:`refmodels._validation.check_prox`'s message of a prox that returns something
#: else than an array of its argument's shape begins
SHAPE_NOTE = "regularizer.prox must return"


class CheckResult:
    """One check of :func:`check`: ``name``, ``passed``, ``max_error``, ``tolerance``, ``note``."""

    def __init__(self, name, passed, max_error, tolerance, note=""):
        self.name, self.passed = name, bool(passed)
        self.max_error, self.tolerance, self.note = float(max_error), float(tolerance), note

    def __repr__(self):
        return (f"CheckResult({self.name!r}, passed={self.passed}, max_error={self.max_error:.3e}, "
                f"tolerance={self.tolerance:.1e})")


class CheckReport:
    """The result of :func:`check`: a list of :class:`CheckResult`; ``ok`` when all passed."""

    def __init__(self, regularizer, results):
        self.regularizer = regularizer
        self.results = list(results)

    @property
    def ok(self):
        return bool(self.results) and all(r.passed for r in self.results)

    def __bool__(self):
        return self.ok

    def __getitem__(self, name):
        for r in self.results:
            if r.name == name:
                return r
        raise KeyError(name)

    @property
    def failing(self):
        return [r.name for r in self.results if not r.passed]

    def __str__(self):
        lines = [f"regularizer check of {self.regularizer!r}: {'PASSED' if self.ok else 'FAILED'}",
                 f"  {'check':<40s} {'max error':>11s} {'tolerance':>10s}  result"]
        for r in self.results:
            lines.append(f"  {r.name:<40s} {r.max_error:11.3e} {r.tolerance:10.1e}  "
                         f"{'ok' if r.passed else 'FAILS'}" + (f"  ({r.note})" if r.note else ""))
        return "\n".join(lines)

    __repr__ = __str__


#: the checks whose failure means the regularizer is not the convex function it states:
#: :func:`require_usable` refuses it
REFUSE_ON = ("expr is convex (DCP)", "value vs expr", "convexity probe")
#: the checks of ``prox``: when one fails, a fixed point of the prox is no evidence
PROX_CHECKS = ("prox vs CVXPY", "prox objective (not above CVXPY's)")
#: the checks of the conjugate: when one fails, a duality gap through it is no evidence (the
#: equality is tested at the prox's points, so it speaks of the conjugate only when the prox
#: passed its checks: :func:`bad_conjugate`)
CONJUGATE_CHECKS = ("Fenchel-Young inequality", "Fenchel-Young equality at prox points")

_VERDICTS = weakref.WeakKeyDictionary()   # regularizer -> CheckReport
_VERDICTS_BY_ID = {}                       # id -> (weak reference, CheckReport): unhashable ones


def _forget(key, _ref, table=_VERDICTS_BY_ID):
    """The weak reference's callback: the entry of an unhashable regularizer goes with it."""
    table.pop(key, None)


def verdict(reg):
    """:func:`check` of ``reg`` at its defaults, run once per regularizer object and kept
    while the object lives (a module-level weak table); None for :class:`GroupNorm`, whose
    value, prox and conjugate are the package's own (tested in its test suite)."""
    from . import regularizers as _r           # (``check`` looked up there: tests patch it)

    if type(reg) is _r.GroupNorm:
        return None
    try:
        report = _VERDICTS.get(reg)
    except TypeError:                          # unhashable (``__eq__`` without ``__hash__``)
        entry = _VERDICTS_BY_ID.get(id(reg))
        report = entry[1] if entry is not None and entry[0]() is reg else None
        if report is None:
            report = _weak_report(_r.check(reg), reg)
            key = id(reg)
            ref = weakref.ref(reg, functools.partial(_forget, key))
            _VERDICTS_BY_ID[key] = (ref, report)
        return report
    if report is None:
        report = _weak_report(_r.check(reg), reg)
        _VERDICTS[reg] = report
    return report


def _weak_report(report, reg):
    """``report`` referring to ``reg`` weakly (a value of the weak table must not keep its
    key alive)."""
    report.regularizer = weakref.proxy(reg)
    return report


def require_usable(reg):
    """Refuse (``ValueError`` naming the failed check) a regularizer that is not the convex
    function it states (:data:`REFUSE_ON`) or whose ``prox`` returns non-finite values;
    return its :func:`verdict` (None for :class:`GroupNorm`)."""
    report = verdict(reg)
    if report is None:
        return None
    bad = [r for r in report.results if r.name in REFUSE_ON and not r.passed]
    if bad:
        r = bad[0]
        why = r.note or f"error {r.max_error:.3g} above {r.tolerance:.1g}"
        raise ValueError(f"regularizer {reg!r} fails rm.regularizers.check's {r.name!r} ({why}): "
                         "DRR is a convex problem and takes only a convex regularizer whose "
                         "value is its expr's (a non-convex one has stationary points that are "
                         "not the optimum); see rm.regularizers.check(reg)")
    for r in report.results:
        if r.name in PROX_CHECKS and NONFINITE_PROX in r.note:
            raise ValueError(f"regularizer.prox of {reg!r} must return finite values; "
                             f"rm.regularizers.check's {r.name!r}: {r.note}")
        if r.name in PROX_CHECKS and SHAPE_NOTE in r.note:   # check_prox's own message
            raise ValueError(r.note[r.note.index(SHAPE_NOTE):] + f" (in rm.regularizers."
                             f"check's {r.name!r})")
    return report


def bad_conjugate(report):
    """The failed checks that speak against the conjugate of a :func:`verdict`: the
    Fenchel-Young inequality (a conjugate too small, which would make a duality gap too
    small), and the equality when the prox passed (at a wrong prox's points it fails for a
    right conjugate)."""
    bad = failed(report, CONJUGATE_CHECKS[:1])
    if not failed(report, PROX_CHECKS):
        bad += failed(report, CONJUGATE_CHECKS[1:])
    return bad


def failed(report, names):
    """The checks of ``names`` that ``report`` (a :func:`verdict`, or None: all passed) failed."""
    if report is None:
        return []
    return [r for r in report.results if r.name in names and not r.passed]


def value_vs_expr_at(reg, W, groups):
    """``(max_j |value(w_j) - expr(w_j)|, 1 + max_j |expr(w_j)|)`` over the columns ``w_j`` of
    ``W``: :func:`~refmodels.regularizers.check`'s ``value vs expr`` at the point being
    certified. The check draws vectors of six entries at scales 0.1 to 10; a point has its
    own length and scale, and its objective is computed with ``value``. A non-finite
    difference counts as ``inf``."""
    import cvxpy as cp

    W = np.asarray(W, dtype=float)
    x = cp.Variable(W.shape[0])
    e = reg.expr(x, groups)
    err, top = 0.0, 0.0
    for j in range(W.shape[1]):
        x.value = W[:, j]
        ev = e.value
        ev = float(ev) if ev is not None else math.nan
        d = abs(float(reg.value(W[:, j], groups)) - ev)
        err = max(err, d if math.isfinite(d) else math.inf)
        top = max(top, abs(ev) if math.isfinite(ev) else 0.0)
    return err, 1.0 + top
