"""KKT certificates (SPEC, "KKT certificates").

A :class:`Certificate` collects, for one candidate point of one problem, the
residuals of the Karush-Kuhn-Tucker conditions in SPEC's canonical scaling:

=====================  ==============================================  ==========================
residual               absolute value                                  scaled by
=====================  ==============================================  ==========================
primal feasibility     max violation of a primal constraint            ``1 + max_i |gamma_i|``
dual feasibility       max violation of a dual box / equality          ``1 + largest box bound``
complementarity        ``max_i |multiplier_i * constraint slack_i|``   ``|P| + u``
stationarity           ``||grad_w L||`` (feature space)                ``1 + ||w|| + ||w(dual)||``
duality gap            ``P(primal point) - D_max(feasible dual)``      ``|P| + u``
objective gap          ``P(primal point) - P*`` (reference optimum)    ``|P*| + u``
=====================  ==============================================  ==========================

``D_max`` is evaluated at the dual point moved onto the dual's feasible set (the family's
``feasible_dual``, :func:`project_boxes`): weak duality holds only there; dual feasibility
is measured at the point as given.

A solution that carries both ``coef`` (what predictions use) and ``w`` (what the residuals
use) adds ``w = F^T coef`` (scaled by ``1 + ||w||``), ``decision values (coef vs w)``
(``max_i |f_w(x_i) - f_coef(x_i)|``, scaled by ``1 + max_i |f_w(x_i)|``: free of the
features' scale) and ``objective at coef`` (``|P(F^T coef) - P(w)|``, scaled by
``|P| + u``); mcODM the same on its scores.

**Relative to the objective.** ``u`` is the objective's unit at the point
(:meth:`refmodels.base.Problem.unit_at`): ``min(1, max(1e-7 |P0|, 1e7 R))``, ``P0`` the
objective of the zero decision function (``C m`` for the hinge) and ``R`` a bound on the
round-off of evaluating ``P`` there. A gap is relative to the objective down to 1e-7 of the
trivial classifier's objective or ten times the evaluation's round-off, and never more
lenient than relative to ``1 + |P|`` (the convention of Clarabel's and OSQP's
``eps_abs + eps_rel |P|``, which with features x1e6 and C = 2^-7, P* = 1e-12, accepted a
point at 22 times the optimum). Within ten units of ``u`` the certificate adds a note;
``cert.values["relative_gap"]`` is ``(P - D) / max(|P|, |D|)`` and
``cert.values["objective_unit"]`` is ``u``. DRR keeps ``1 + |P|``. Within those ten units,
a failing objective-valued residual within ``FLOOR_FACTOR`` times the round-off the unit
records (``u / 1e7``) is at the rounding floor of evaluating ``P``, and
:meth:`Certificate.explain` says so (and suggests scaling the features) rather than "far
from optimal".

The certificate holds (``cert.ok``) when every scaled residual is at most
``tol`` (default ``1e-6``; the duality and objective gaps are compared in
absolute value: a negative gap beyond ``tol`` means an infeasible point or a
wrong reference, and fails too). Families add residuals of their own where
their KKT system has more parts; the table above is the common core.
"""
from __future__ import annotations

import json
import math

import numpy as np

DEFAULT_TOL = 1e-6

#: the residuals measured in units of the objective (scaled by ``|P| + u``)
OBJECTIVE_RESIDUALS = ("duality gap", "complementarity", "objective gap", "objective at coef")

#: :meth:`Certificate.explain` names the rounding floor for a failing objective-valued
#: residual of absolute value at most ``FLOOR_FACTOR`` times the round-off of evaluating
#: ``P`` that the certificate knows: ``u / ROUNDOFF_UNITS`` at a point where the objective
#: lies within ``SMALL_OBJECTIVE`` of its unit ``u`` (the note's regime), where ``u`` is
#: the round-off bound ``R`` itself (``u = 1e7 R``; a lower bound on it when ``u`` is capped
#: at 1; above it by at most ~45x when ``u = 1e-7 |P0|``, since ``R >= eps |P0| rho`` with
#: ``rho`` ~ the margins). With the default tol the band is a failing residual up to ~10x
#: the tolerance. 100 is chosen above the failing fast points of ``validation/sweep_scales.py``
#: that stop at the rounding floor (they lie at 38-85 round-off units) and above the SMO's
#: own floor (10-15 times its round-off bound, fast/_smo_run.py ROUNDOFF_PRE); the cases:
#: validation/decisions.md
FLOOR_FACTOR = 100.0


# ---- the scale policy of the objective-valued residuals --------------------------------
#: The objective-valued residuals (duality gap, complementarity, objective at coef,
#: objective gap) are scaled by ``|P| + u`` with the objective unit
#: ``u = min(1, OBJECTIVE_FLOOR |P0|)``, ``P0`` the objective of the zero decision function
#: (``f = 0``: ``C m`` for the hinge, ``lam`` for ODM's loss): relative to the objective
#: itself, down to ``1e-7`` of the trivial classifier's objective (the round-off of
#: evaluating ``P``, a sum of ``m`` loss terms each to ``~eps (1 + |gamma_i|)`` of its
#: weight, against the certificate's tolerance), and never more leniently than the former
#: ``1 + |P|``. That former scale was absolute below 1: with features x1e6 and C = 2^-7
#: (P* = 1e-12) a point at 22 times the optimum held. Families without a natural zero point
#: (DRR) keep ``1 + |P|``.
OBJECTIVE_FLOOR = 1e-7


#: the round-off bound ``R`` of :meth:`Problem.roundoff_at` counts this many objective
#: units: ten times the reciprocal of the certificate's default tolerance, so that a gap
#: at the round-off of its evaluation is a tenth of the tolerance
ROUNDOFF_UNITS = 1e7


def zero_unit(P0):
    """``min(1, OBJECTIVE_FLOOR |P0|)``: the objective unit before any point is known, from
    the objective ``P0`` of the zero decision function (1 when ``P0`` is unknown or 0)."""
    if P0 is None or not np.isfinite(P0) or P0 == 0.0:
        return 1.0
    return min(1.0, OBJECTIVE_FLOOR * abs(float(P0)))


def objective_scale(prob, P, ctx=None):
    """The denominator of an objective-valued residual at objective ``P`` (see
    ``OBJECTIVE_FLOOR``): ``|P| + u`` with ``u`` the unit of the point being certified
    (``ctx``, a :class:`PointContext`), else the problem's unit before any point;
    ``1 + |P|`` for a problem without :meth:`objective_at_zero`."""
    unit = getattr(ctx, "unit", None)
    return abs(float(P)) + (prob.objective_unit if unit is None else unit)


#: the certificate adds a note when ``|P|`` is below this many objective units: the
#: objective-valued residuals are then in effect absolute (in units of ``OBJECTIVE_FLOOR
#: |P0|``), and the relative duality gap is reported beside them
SMALL_OBJECTIVE = 10.0


def relative_gap(P, D):
    """``(P - D) / max(|P|, |D|)`` (0 when both vanish): the duality gap relative to the
    objective itself, which the ``1 + |P|`` scaling does not measure when ``|P| << 1``."""
    den = max(abs(P), abs(D))
    return 0.0 if den == 0.0 else float((P - D) / den)


def small_objective_note(P, D, unit):
    return (f"the objective is {P:.3g}, within 10 of its unit {unit:.3g} (the larger of 1e-7 "
            f"of the objective at f = 0 and the round-off bound of evaluating P, at most 1): "
            f"the objective-valued residuals are then in effect absolute in that unit (the "
            f"relative duality gap "
            f"(P - D) / max(|P|, |D|) is {relative_gap(P, D):.2g}). This happens when the "
            f"optimum is a near-zero-loss classifier with a tiny norm (large features: "
            f"features x c is the same problem with C x c^2 on the original ones and an "
            f"objective c^2 smaller), or when P is summed from terms far larger than itself "
            f"(Gram entries far above 1): scale the features")



class Certificate:
    """KKT residuals of one point; see the module docstring for the definitions."""

    def __init__(self, family, tol=DEFAULT_TOL, notes=None):
        self.family = family
        if isinstance(tol, bool) or not isinstance(tol, (int, float, np.integer, np.floating)) \
                or not np.isfinite(tol) or tol <= 0:
            raise ValueError(f"tol must be a finite number > 0; got {tol!r}")
        self.tol = float(tol)
        self.residuals = {}          # name -> (absolute, scaled)
        self.values = {}             # objective, dual_objective, reference_objective, ...
        self.notes = list(notes or [])
        #: what was certified: the problem and the Solution (set by ``problem.certify``;
        #: None for a certificate made by hand): :meth:`diagnose` certifies the same point
        #: on nearby problems, :meth:`explain` reads its provenance
        self.problem = self.solution = None

    def add(self, name, absolute, scale=1.0):
        """Record a residual; ``scale`` (> 0) is the denominator of its scaled form.

        A residual or a scale that is not finite (NaN, or an overflow: a point of 1e154
        squared) is recorded as an infinite scaled residual, which fails, with a note: a
        certificate never holds because its scale overflowed."""
        if absolute is None:
            return
        absolute = float(np.max(absolute)) if np.ndim(absolute) else float(absolute)
        scale = float(np.max(scale)) if np.ndim(scale) else float(scale)
        if not (math.isfinite(absolute) and math.isfinite(scale)):
            self.residuals[name] = (absolute, math.inf)
            self.notes.append(f"{name}: not finite (absolute {absolute:.3g}, scale "
                              f"{scale:.3g}): the point or its objective overflows or is NaN")
            return
        self.residuals[name] = (absolute, absolute / scale if scale > 0.0 else absolute)

    def merge_max(self, other):
        """Combine with another certificate (DRR: one per test point) by the worst residual."""
        for k, (a, s) in other.residuals.items():
            if k not in self.residuals or abs(s) > abs(self.residuals[k][1]):
                self.residuals[k] = (a, s)

    @property
    def failing(self):
        """Names of the residuals whose scaled value exceeds ``tol`` in absolute value."""
        return [k for k, (_, s) in self.residuals.items() if not (abs(s) <= self.tol)]

    @property
    def ok(self):
        """Every scaled residual within ``tol``, and the objective finite."""
        P = self.values.get("objective")
        finite = P is None or bool(np.all(np.isfinite(np.asarray(P, dtype=float))))
        return bool(self.residuals) and not self.failing and finite

    @property
    def relative_gap(self):
        """``(P - D) / max(|P|, |D|)``: the duality gap relative to the objective itself,
        beside :attr:`ok` (which scales the gap by ``|P| + u``, so that near a zero
        objective a point holds at a larger relative gap: see the module docstring);
        None when the certificate has no dual value."""
        rel = self.values.get("relative_gap")
        return None if rel is None else float(rel)

    @property
    def worst(self):
        """``(name, scaled value)`` of the largest scaled residual."""
        if not self.residuals:
            return (None, math.nan)
        k = max(self.residuals, key=lambda n: abs(self.residuals[n][1]) if np.isfinite(
            self.residuals[n][1]) else math.inf)
        return k, self.residuals[k][1]

    def __bool__(self):
        return self.ok

    @property
    def holds_at(self):
        """The smallest ``tol`` at which this certificate would hold (its largest scaled
        residual in absolute value); ``inf`` if a residual is not finite."""
        if not self.residuals:
            return math.inf
        vals = [abs(s) for _, s in self.residuals.values()]
        return max(vals) if all(np.isfinite(vals)) else math.inf

    def explain(self):
        """``{residual: likely cause}`` for every failing residual (heuristics, in words), or,
        when the certificate holds, ``{"certificate": how tightly it holds}``; causes specific
        to a library (LIBSVM's single-precision kernel values, LIBLINEAR's regularised
        intercept) only for a point from that library (``sol.info["source"]``). The rules are
        in :mod:`refmodels.explain`; :meth:`diagnose` searches the nearby problems the point
        does solve."""
        from .explain import explain

        return explain(self)

    @property
    def source(self):
        """Where the certified point comes from (``solution.info["source"]``), or None."""
        info = getattr(self.solution, "info", None) or {}
        return info.get("source")

    def diagnose(self, **options):
        """The nearby problems this point does solve, best first (see
        :func:`refmodels.diagnose.diagnose`)."""
        from .diagnose import diagnose

        return diagnose(self, **options)

    def roundoff_floor(self):
        """The round-off of evaluating the objective at this point as far as the certificate
        knows it: ``u / ROUNDOFF_UNITS`` (``u`` = ``values["objective_unit"]``, see
        :meth:`refmodels.base.Problem.unit_at`) when ``|P|`` lies within ``SMALL_OBJECTIVE``
        units of ``u`` (where the certificate adds its small-objective note), else None: at
        a larger objective the unit does not record the round-off (see
        :data:`FLOOR_FACTOR`)."""
        u, P = self.values.get("objective_unit"), self.values.get("objective")
        if u is None or P is None or not (np.isfinite(u) and np.isfinite(P)) or u <= 0.0:
            return None
        if not abs(P) < SMALL_OBJECTIVE * u:
            return None
        return float(u) / ROUNDOFF_UNITS

    def _floor_cause(self, name, floor):
        """The likely cause of a failing objective-valued residual at the rounding floor."""
        a = abs(self.residuals[name][0])
        rel = self.values.get("relative_gap")
        rel = f"; the relative duality gap is {rel:.1g}" if rel is not None else ""
        return (f"at the rounding floor of evaluating the objective on this data: the objective "
                f"{self.values['objective']:.3g} lies within 10 of its unit "
                f"{self.values['objective_unit']:.3g}, the round-off of evaluating P here is "
                f"about {floor:.1e}, and this residual ({a:.1e}) is {a / floor:.2g} times it: "
                f"double precision resolves it no further, and it does not measure how far "
                f"the point is from the optimum{rel}. Scale the features (e.g. MinMaxScaler "
                f"or StandardScaler) for an objective evaluated to more digits")

    def to_dict(self):
        return {
            "family": self.family,
            "ok": self.ok,
            "tol": self.tol,
            "failing": self.failing,
            "holds_at": self.holds_at,
            "likely_causes": self.explain(),
            "residuals": {k: {"absolute": a, "scaled": s} for k, (a, s) in self.residuals.items()},
            "values": {k: (v.tolist() if isinstance(v, np.ndarray) else v)
                       for k, v in self.values.items()},
            "notes": list(self.notes),
        }

    def to_json(self, **kw):
        return json.dumps(self.to_dict(), **kw)

    def __str__(self):
        return self.summary(verbose=False)

    def summary(self, verbose=False):
        """The certificate as text: verdict, the smallest tol at which it holds, values
        (arrays summarised unless ``verbose``), residuals, likely causes, notes."""
        head = (f"KKT certificate for {self.family}: "
                f"{'HOLDS' if self.ok else 'FAILS'} (tol={self.tol:g} on scaled residuals)")
        if not self.ok and np.isfinite(self.holds_at):
            head += f"; it would hold at tol >= {self.holds_at:.2g}"
        if self.relative_gap is not None and np.isfinite(self.relative_gap):
            head += f"; relative duality gap {self.relative_gap:.2g}"
        lines = [head]
        for k, v in self.values.items():
            if v is None or (k in ("objective_unit", "relative_gap") and not self.unit_matters()):
                continue
            if isinstance(v, dict):         # a record (the prox spot check): its scalars
                lines.append(f"  {k:<22s} " + ", ".join(
                    f"{a}={b:.3g}" if isinstance(b, float) else f"{a}={b}"
                    for a, b in v.items() if np.ndim(b) == 0 or isinstance(b, list)))
            elif isinstance(v, str):
                lines.append(f"  {k:<22s} {v}")
            elif np.ndim(v) == 0:
                lines.append(f"  {k:<22s} {v: .12g}")
            elif verbose:
                lines.append(f"  {k:<22s} {np.array2string(np.asarray(v), precision=8)}")
            else:
                a = np.asarray(v, dtype=float)
                lines.append(f"  {k:<22s} array of {a.size}: min {a.min():.6g}, max "
                             f"{a.max():.6g}, sum {a.sum():.10g}")
        return "\n".join(lines + self.residual_lines())

    def residual_lines(self):
        """The text lines of the residual table (absolute and scaled, the failing ones
        flagged), the likely causes and the notes, as :meth:`summary` ends."""
        lines = [f"  {'residual':<22s} {'absolute':>12s} {'scaled':>12s}"]
        for k, (a, s) in self.residuals.items():
            flag = "" if abs(s) <= self.tol else "   <-- FAILS"
            lines.append(f"  {k:<22s} {a:12.3e} {s:12.3e}{flag}")
        from .explain import grouped

        lines += [f"  {'likely cause' if not self.ok else 'verdict'} ({', '.join(names)}): "
                  f"{why}" for names, why in grouped(self)]
        return lines + [f"  note: {n}" for n in self.notes]

    def unit_matters(self):
        """Whether the objective unit shapes this certificate (``|P|`` within
        ``SMALL_OBJECTIVE`` units of it: the objective-valued residuals are then in effect
        absolute); the text shows the unit only then."""
        u, P = self.values.get("objective_unit"), self.values.get("objective")
        try:
            return bool(abs(P) < SMALL_OBJECTIVE * u)
        except (TypeError, ValueError):
            return False

    __repr__ = __str__


# ---- the point being certified, and helpers of the families' residuals --------------
class PointContext:
    """The point being certified, computed once and handed down: the Solution (its
    attributes are read through), its primal ``point`` (the tuple the family's residuals
    take) and the objective ``unit`` of its scaled residuals (:meth:`Problem.unit_at`).

    The certificate is a pure function of (problem, point, tol): everything that depends on
    the point travels in this object, nothing is set on the problem."""

    def __init__(self, sol, point, unit):
        self.sol, self.point, self.unit = sol, point, unit

    def __getattr__(self, name):
        return getattr(self.sol, name)


class ExactW(np.ndarray):
    """``w`` in feature-space coordinates that also knows its kernel products: ``Gc = G coef``
    and ``wnorm2 = coef^T G coef``, for a point given by ``coef`` on a non-linear kernel.

    :meth:`BinaryProblem.margins` and ``_norm2`` read them (exact) instead of going
    through the empirical map, which drops eigenvalues below 1e-12 of the largest (on a
    Gram with entries of 1e10 that truncation alone moves the margins by O(1)). Arrays
    derived from it (``w - v``, a copy) carry nothing."""

    def __new__(cls, w, Gc, wnorm2):
        obj = np.asarray(w, dtype=float).view(cls)
        obj.Gc, obj.wnorm2 = Gc, wnorm2
        return obj

    def __array_finalize__(self, obj):
        self.Gc = None
        self.wnorm2 = None


def add_coef_consistency(cert, name, f, df, P, Pc, scale):
    """The residuals that make ``coef`` (what predictions use) and the certified point one
    point: ``name``, the largest difference ``df`` of the decision values (or scores) on the
    training points, scaled by ``1 + max |f|`` (free of the features' scale), and
    ``objective at coef``, ``|Pc - P|`` scaled by ``scale`` (:func:`objective_scale`: a
    large C or lam turns decision values 1e-9 apart into objectives 1e-2 apart)."""
    cert.add(name, float(np.max(np.abs(df), initial=0.0)),
             1.0 + float(np.max(np.abs(f), initial=0.0)))
    cert.add("objective at coef", abs(Pc - P), scale)


def given_slacks(sol, m, defaults, names=("xi", "eps")):
    """The slack variables a solution carries (by name, when of shape ``(m,)``), else the
    ``defaults`` (the smallest feasible ones for the point)."""
    out = list(defaults)
    variables = sol.variables if sol is not None else {}
    for k, name in enumerate(names):
        if np.shape(variables.get(name)) == (m,):
            out[k] = np.asarray(variables[name], float)
    return tuple(out)


def box_violation(x, lo, hi):
    """Max amount by which ``x`` leaves ``[lo, hi]`` (elementwise bounds allowed)."""
    x = np.asarray(x, dtype=float)
    if x.size == 0:
        return 0.0
    return float(max(np.max(np.maximum(lo - x, 0.0)), np.max(np.maximum(x - hi, 0.0))))


def complementarity(multiplier, slack):
    """``max_i |multiplier_i * slack_i|`` for a constraint ``slack >= 0`` with multiplier ``>= 0``."""
    multiplier, slack = np.asarray(multiplier, float), np.asarray(slack, float)
    if multiplier.size == 0:
        return 0.0
    return float(np.max(np.abs(multiplier * slack)))


def project_boxes(y, blocks, equality=False):
    """The nearest point, in the sense of a common shift, of the dual's feasible set: each
    block ``(x, hi, sign)`` clipped into ``[0, hi]`` and, with ``equality``, all shifted by
    ``sign * lam * y`` with ``lam`` such that ``sum_blocks sign * y^T x = 0`` (the intercept's
    equality; ``y`` the +-1 labels). The sum is non-decreasing in ``lam``, so ``lam`` is
    found by Newton's steps on it (its slope: the entries inside their box), kept in a
    bisection bracket. Returns the blocks' new arrays (equal to the given ones when those are
    feasible): weak duality, ``D <= P``, holds only at a feasible dual point, so the duality gap
    is evaluated there (an interior-point solver's multipliers may leave a box by its
    tolerance: OSQP's ``beta`` of -3.7e-11 where ``C2 = 0``, on a problem whose optimum is
    6.4e-11, lifted ``D`` above the optimum)."""
    y = np.asarray(y, dtype=float)
    xs = [np.asarray(x, dtype=float) for x, _, _ in blocks]

    def at(lam):
        out = [np.clip(x + (s * lam) * y if lam else x, 0.0, hi)
               for x, (_, hi, s) in zip(xs, blocks)]
        g = sum(s * float(y @ z) for z, (_, _, s) in zip(out, blocks))
        slope = sum(float(np.count_nonzero((z > 0.0) & (z < hi))) for z, (_, hi, _) in
                    zip(out, blocks))
        return out, g, slope

    out, g, slope = at(0.0)
    # (the equality to the round-off of its sum: further steps only move the entries by it)
    floor = 4e-16 * sum(float(np.sum(np.abs(z))) for z in out)
    if not equality or abs(g) <= floor:
        return out
    # (a bracket on the scale of the boxes: at lam = +-span every entry is at a bound)
    span = max(float(np.max(np.abs(x), initial=0.0)) + float(np.max(hi)) for x, (_, hi, _)
               in zip(xs, blocks))
    if not 0.0 < span < np.inf:
        return out
    # the shift is computed at unit scale (a power of two: exact both ways for normal
    # numbers), so that boxes of 1e-308, whose entries are subnormal, keep their digits
    unit = 2.0 ** float(np.frexp(span)[1])
    if unit != 1.0:
        scaled = project_boxes(y, [(x / unit, hi / unit, s_) for x, (_, hi, s_)
                                   in zip(xs, blocks)], equality)
        return [z * unit for z in scaled]
    lo, hi_ = (-span, 0.0) if g > 0.0 else (0.0, span)
    lam = 0.0
    for _ in range(200):
        if abs(g) <= floor or hi_ - lo <= 4e-16 * max(abs(lo), abs(hi_)):
            break
        step = lam - g / slope if slope > 0.0 else np.nan
        lam = step if lo < step < hi_ else 0.5 * (lo + hi_)
        out, g, slope = at(lam)
        if g > 0.0:
            hi_ = lam
        else:
            lo = lam
    return out
