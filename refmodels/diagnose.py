"""What a failing point does solve: the nearby problems a solver writer plausibly solved
instead of the one certified, each checked by its own certificate.

``cert.diagnose()`` (or ``diagnose(cert)``, or ``refmodels certify --diagnose``) takes the
problem and the point a :class:`~refmodels.certify.Certificate` was made of and certifies
the point on each candidate problem:

* every loss weight (``rescale_params``: ``C``, ``lam``, ``lam1``, ...) times ``m``,
  ``1/m``, 2 and 1/2, alone and all together;
* the loss weights *fitted* to the point: the weights for which the point is stationary,
  by a (non-negative) least squares on the stationarity condition in ``w`` (linear in the
  weights once the margins fix which terms are active), rounded to a ratio we can name
  (``m``, ``1/m``, ``2``, ``(1-theta)^2``, ...) when one fits;
* a term left out: ODM's band (``theta = 0``) or ``mu``; the margin variance or mean of
  ODML / LDM; SVMm's ``eps`` or its loss above the band;
* ODM: seed 000's ``(C1, C2, D)`` read for seed 002's ``(lam, mu, theta)``, the
  ``1/(1-theta)^2`` factor dropped or doubled, ``mu`` on the other side of the band;
  LDM/ODML: the other paper's parametrisation (``LDM(C, lam1, lam2) = ODML(mC, 2 lam1,
  lam2)``);
* no intercept, a free (unregularised) intercept, or a regularised bias (a constant feature
  of value ``s`` appended to every point, LIBLINEAR's ``-B s``: ``s`` fitted, and 1);
* the squared hinge for the hinge (SVM: the L2-SVM, ODM with ``theta = 0``, ``mu = 0``,
  ``lam = C m``);
* the labels flipped; RBF's ``gamma`` read as the width ``sigma`` (``1/(2 gamma^2)``) or as
  ``sigma^2`` (``1/(2 gamma)``).

A candidate is named only when its certificate holds (at the certificate's tolerance, with
the KKT residuals and the duality gap; the reference optimum is not solved again). The
candidates are problems in their own right: new problem objects, built from the original's
data (:meth:`~refmodels.base.Problem.replace`; problems are immutable), each certified by
the one certificate, in a workspace of the diagnosis's own: the original problem and its
workspace keep nothing of them. When none holds, the diagnosis says whether the point
looks stopped early (feasible, with objective-valued residuals small, the dominant residual
named) or far from this problem and from every nearby one tried.

This module runs the diagnosis and words its report; the candidates are drawn up in
:mod:`refmodels._candidates`, and the problem classes they need beyond the families (a free
intercept, the squared hinge) live in :mod:`refmodels._variants`.
"""
from __future__ import annotations

import math

import numpy as np

from ._candidates import Around, _candidates, _fitted, _Point, _same_change
from ._variants import has_fixed_intercept
from .workspace import Workspace, using

__all__ = ["diagnose", "Diagnosis", "Candidate"]

#: the candidates named are those whose ``holds_at`` is within this factor of the best one's:
#: a candidate the point fits to round-off makes one it fits to 1e-7 moot (LDM's three
#: weights are not all determined by a point in few dimensions)
FIT_MARGIN = 100.0


class Candidate:
    """A nearby problem the point is optimal for: ``change`` (the problem's own parameter
    names, e.g. ``{"lam": 569.0}``, ``{"intercept": "free"}``), ``problem`` and ``solution``
    (the point on it), ``certificate`` (which holds), ``description`` and ``reason``
    (words); ``str()`` is the sentence."""

    def __init__(self, change, description, reason, problem, solution, certificate,
                 rank=0):
        self.change, self.description, self.reason = dict(change), description, reason
        self.problem, self.solution, self.certificate = problem, solution, certificate
        self.rank = rank

    @property
    def holds_at(self):
        return self.certificate.holds_at

    def __str__(self):
        return (f"your point is optimal (certified at {self.certificate.tol:g}; it holds at "
                f"{self.holds_at:.1g}) for {self.description}: {self.reason}")

    __repr__ = __str__

    def to_dict(self):
        return {"change": _plain(self.change), "description": self.description,
                "reason": self.reason, "holds_at": self.holds_at, "text": str(self)}


class Diagnosis:
    """The outcome of :func:`diagnose`: ``candidates`` (the holding ones, best first),
    ``tried`` (every candidate tried: change, description, holds_at), and, when none holds,
    ``stopped_early`` (True / False) with ``verdict`` (the sentence)."""

    def __init__(self, certificate, candidates, tried, verdict, stopped_early=None):
        self.certificate = certificate
        self.candidates = list(candidates)
        self.tried = list(tried)
        self.verdict = verdict
        self.stopped_early = stopped_early

    @property
    def best(self):
        return self.candidates[0] if self.candidates else None

    def __iter__(self):
        return iter(self.candidates)

    def __len__(self):
        return len(self.candidates)

    def __getitem__(self, i):
        return self.candidates[i]

    def __bool__(self):
        return bool(self.candidates)

    def __str__(self):
        if not self.candidates:
            return self.verdict
        lines = [str(c) for c in self.candidates]
        if len(lines) > 1:
            lines = [lines[0]] + [f"also: {t}" for t in lines[1:]]
        return "\n".join(lines)

    __repr__ = __str__

    def to_dict(self):
        return {"candidates": [c.to_dict() for c in self.candidates],
                "verdict": self.verdict, "stopped_early": self.stopped_early,
                "tried": [{"change": _plain(c), "description": d, "holds_at": h}
                          for c, d, h in self.tried]}


def _plain(change):
    return {k: (float(v) if isinstance(v, (float, np.floating)) else v)
            for k, v in change.items()}


def with_foreign_intercept(prob, sol, b):
    """``sol`` carrying the intercept ``b`` a solver returned for a problem that has none
    (``sol.info["intercept"]``, which the diagnosis reads); certify it with
    :func:`certify_foreign_intercept`."""
    sol.info["intercept"] = float(b)
    return sol


def certify_foreign_intercept(prob, sol, tol, reference):
    """``prob.certify(sol)``, failing with a residual ``intercept (none here)``
    when the solver returned an intercept ``b != 0`` the problem does not have (its
    predictions are not the point certified): ``|b|`` scaled by ``1 + max_i |f(x_i)|``."""
    cert = prob.certify(sol, tol=tol, reference=reference)
    b = sol.info.get("intercept") if isinstance(sol.info, dict) else None
    if b is not None and not prob.has_intercept and b != 0.0:
        w = prob._primal_point(sol)[0]
        f = np.asarray(prob.F @ w).ravel() if prob.kernel.is_linear or sol.coef is None \
            else prob.gram_times(np.asarray(sol.coef, float))
        cert.add("intercept (none here)", abs(float(b)),
                 1.0 + float(np.max(np.abs(f), initial=0.0)))
    return cert


# ---------------------------------------------------------------------------------------
# the diagnosis
# ---------------------------------------------------------------------------------------
def diagnose(cert, *, fit=True, stopped_early_check=True, workspace=None):
    """The nearby problems the certified point does solve (see the module docstring).

    Parameters
    ----------
    cert : a :class:`~refmodels.certify.Certificate` made by ``problem.certify(sol)``
        (``cert.problem`` and ``cert.solution`` are what it certified).
    fit : also fit the loss weights to the point (least squares on the stationarity).
    stopped_early_check : when no candidate holds, compare the point with the reference
        optimum (solved when ``m <= 2000``) to say whether it looks stopped early.
    workspace : the :class:`refmodels.Workspace` the certificate was computed in, if one was
        passed to ``certify``: the problem's feature map and reference optimum are read
        from it (else from the problem's own). The candidates are certified in a workspace
        of their own, dropped with the diagnosis.

    Returns
    -------
    Diagnosis : ``candidates`` (the holding ones, best first; each with ``change``,
        ``certificate``, ``str()`` the sentence), ``verdict`` and ``stopped_early``.
    """
    prob = getattr(cert, "problem", None)
    sol = getattr(cert, "solution", None)
    if prob is None or sol is None:
        raise ValueError("cert must come from problem.certify(sol) of a binary family (SVM, "
                         "ODML, LDM, ODM, SVMm, EpsSVM: cert.problem and cert.solution are "
                         "what it certified); a hand-made Certificate, or DRR's and McODM's, "
                         "has neither")
    if cert.ok:
        return Diagnosis(cert, [], [], f"the certificate holds (at {cert.holds_at:.1g}): "
                         "nothing to diagnose", stopped_early=False)
    if not _supported(prob):
        return Diagnosis(cert, [], [], _stopped_verdict(cert, prob, None),
                         stopped_early=_looks_stopped(cert))
    with using(workspace, owner=prob):           # the original's F and reference optimum
        return _diagnose(cert, prob, sol, fit, stopped_early_check)


def _diagnose(cert, prob, sol, fit, stopped_early_check):
    """:func:`diagnose` of a failing certificate of a supported family, run in the original
    problem's workspace; the candidates in ``scratch``."""
    from .solution import SolverError

    around = Around(prob, sol)
    scratch = Workspace()
    found, tried, done = [], [], []
    with using(scratch):
        cands = list(_candidates(around))
        if fit:
            cands += list(_fitted(around, [c[0] for c in cands]))
        for change, desc, reason, rank, build in cands:
            if any(_same_change(change, d) for d in done):
                continue
            done.append(change)
            try:
                q, s = build()
                c = q.certify(s, tol=cert.tol, reference=False)
            except (ValueError, np.linalg.LinAlgError, ZeroDivisionError, FloatingPointError,
                    NotImplementedError, SolverError):
                tried.append((change, desc, math.inf))       # the candidate does not apply
                continue
            tried.append((change, desc, c.holds_at))
            if c.ok:
                found.append(Candidate(change, desc, reason, q, s, c, rank))
    found = _distinguishable(cert, prob, found, scratch)
    found = _minimal(found)
    if any(c.rank < 3 for c in found):                # a fit is the fallback
        found = [c for c in found if c.rank < 3]
    if found:                                         # an exact fit makes a rough one moot
        best = min(c.holds_at for c in found)
        found = [c for c in found if c.holds_at <= FIT_MARGIN * best + 1e-12]
    found.sort(key=lambda c: (c.rank, c.holds_at))
    if found:
        return Diagnosis(cert, found, tried, str(found[0]), stopped_early=False)
    stopped = _looks_stopped(cert)
    verdict = _stopped_verdict(cert, prob, stopped, sol if stopped_early_check else None)
    return Diagnosis(cert, [], tried, verdict, stopped_early=stopped)


#: a candidate is named only if the point fails the original problem by this factor more
#: than it fails the candidate: a point that is merely inaccurate fails both by about as
#: much (an SVM at large C whose optimum is that of C/m too: the same point, stopped at
#: 3e-5, held at 5e-7 for C/m)
DISTINCT = 1e3


def _distinguishable(cert, prob, found, scratch):
    """The holding candidates that tell the point's problem apart from the original: the
    point fits the candidate :data:`DISTINCT` times better than the original, and (when the
    certificate computed the reference optimum) the original's optimum does not fit the
    candidate too (else both problems share it, and the failure is the point's accuracy).
    The reference is the original's (its workspace); the candidates are certified in
    ``scratch``."""
    if not found:
        return found
    out = [c for c in found if c.holds_at * DISTINCT <= cert.holds_at]
    ref = None
    if out and cert.values.get("reference_objective") is not None:
        try:
            ref = prob.reference_solution()
        except Exception:                              # noqa: BLE001 - no guard then
            ref = None
    if ref is None:
        return out
    kept = []
    for c in out:
        if "intercept" in c.change or has_fixed_intercept(c.problem):
            kept.append(c)                # built around the point's own intercept: no guard
            continue
        try:
            pt = _Point(prob, ref)
            with using(scratch):
                same = c.problem.certify(pt.on(c.problem), tol=c.certificate.tol,
                                         reference=False).ok
        except Exception:                              # noqa: BLE001 - keep the candidate
            same = False
        if not same:
            kept.append(c)
    return kept


def _minimal(found):
    """The holding candidates the point tells apart: a change that contains another holding
    change (the same values on its keys, and more) is dropped, since the point does not
    determine what it adds (ODM with no margin above the band says nothing of ``mu``); a
    regularised bias of a fitted scale is dropped when a free intercept holds (its
    large-``s`` limit). LIBLINEAR's scale 1 stays: on the hinge, whose optimum is often a
    vertex fixed by the points on the margin, both can hold."""
    def contains(big, small):
        return set(small) < set(big) and _same_change({k: big[k] for k in small}, small)

    free = any(c.change.get("intercept") == "free" or c.change.get("fit_intercept") is True
               for c in found)
    out = []
    for c in found:
        if any(contains(c.change, o.change) for o in found if o is not c):
            continue
        if free and c.change.get("intercept") == "regularised" and c.change["bias"] != 1.0:
            continue
        out.append(c)
    return out


def _supported(prob):
    """The families whose nearby problems the diagnosis knows: SVM, ODML, LDM, ODM, SVMm,
    EpsSVM (one ``w``, margins, loss weights)."""
    from .odm import ODM
    from .odml import LDM, ODML
    from .svm import SVM
    from .svmm import SVMm

    return isinstance(prob, (SVM, ODML, LDM, ODM, SVMm))


#: when no candidate fits, a feasible point whose objective-valued residuals (duality and
#: objective gaps, relative to the objective) are at most this looks stopped early
STOPPED_GAP = 0.5


def _looks_stopped(cert):
    """Feasible, with the objective within :data:`STOPPED_GAP` of the optimum (relative):
    the problem's own point, unfinished (no nearby problem fitted it)."""
    from .explain import GAP_RESIDUALS

    res = {k: abs(s) for k, (_, s) in cert.residuals.items()}
    feasible = res.get("dual feasibility", 0.0) <= cert.tol and \
        res.get("primal feasibility", 0.0) <= cert.tol
    if "objective gap" in cert.residuals:
        # the distance in objective itself, when the reference optimum is known: the
        # duality gap also measures the dual point derived from the margins, which a point
        # short of its optimum can make arbitrarily poor (LIBLINEAR at its iteration cap on
        # raw features: objective gap 0.2, duality gap 7e5)
        gap = cert.residuals["objective gap"][1]
        return bool(feasible and -cert.tol <= gap <= STOPPED_GAP)
    gaps = [res[k] for k in GAP_RESIDUALS if k in res]
    return bool(feasible and gaps and max(gaps) <= STOPPED_GAP)


def _stopped_verdict(cert, prob, stopped, sol=None):
    name, worst = cert.worst
    res = {k: abs(s) for k, (_, s) in cert.residuals.items()}
    gap = res.get("duality gap")
    ogap = res.get("objective gap")
    trend = _trend(cert, prob, sol) if sol is not None else ""
    figures = (f"holds_at {cert.holds_at:.1g}, dominated by {name} ({abs(worst):.1e})"
               + (f", duality gap {gap:.1e}" if gap is not None else "")
               + (f", objective gap {ogap:.1e}" if ogap is not None else ""))
    if stopped:
        return (f"no nearby problem tried fits the point, and it looks stopped early: it is "
                f"feasible and its objective is close to this problem's optimum ({figures})"
                f"{trend}. Solve to a tighter tolerance, or certify with tol >= "
                f"{cert.holds_at:.1g}")
    return (f"no nearby problem tried fits the point, and it is far from this problem's "
            f"optimum ({figures}){trend}: a problem further away (another loss, kernel or "
            f"data scaling), or a solver that did not converge")


def _trend(cert, prob, sol):
    """``"; moving toward the reference optimum lowers ..."``: holds_at along the segment from
    the point to the reference optimum (for a binary problem, when it is computed)."""
    from .base import AUTO_REFERENCE_MAX_M, BinaryProblem

    if not isinstance(prob, BinaryProblem) or prob.m > AUTO_REFERENCE_MAX_M:
        return ""
    try:
        ref = prob.reference_solution()
        pt = _Point(prob, sol)
        w_ref, b_ref = prob._primal_point(ref)
        vals = []
        for t in (0.5, 0.9):
            if prob.kernel.is_linear:
                s = prob.solution_from(w=(1 - t) * pt.w + t * w_ref,
                                       intercept=((1 - t) * pt.b + t * b_ref)
                                       if prob.has_intercept else None, source="diagnose")
            else:
                s = prob.solution_from(coef=(1 - t) * pt.coef + t * np.asarray(ref.coef),
                                       intercept=((1 - t) * pt.b + t * b_ref)
                                       if prob.has_intercept else None, source="diagnose")
            vals.append(prob.certify(s, tol=cert.tol, reference=False).holds_at)
    except Exception:                                 # noqa: BLE001 - the trend is an aside
        return ""
    if not (vals[1] <= vals[0] <= cert.holds_at and vals[1] <= 0.5 * cert.holds_at):
        return ""                            # no clear fall: nothing to say
    return (f"; on the way to the reference optimum holds_at falls from {cert.holds_at:.1g} "
            f"to {vals[0]:.1g} (half way) and {vals[1]:.1g} (90 %)")
