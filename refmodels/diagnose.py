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
data; the original is never changed. When none holds, the diagnosis says whether the point
looks stopped early (feasible, with objective-valued residuals small, the dominant residual
named) or far from this problem and from every nearby one tried.
"""
from __future__ import annotations

import inspect
import math

import numpy as np
import scipy.sparse as sp
from scipy.optimize import nnls

from . import kernels as _k

__all__ = ["diagnose", "Diagnosis", "Candidate"]

#: the candidates named are those whose ``holds_at`` is within this factor of the best one's:
#: a candidate the point fits to round-off makes one it fits to 1e-7 moot (LDM's three
#: weights are not all determined by a point in few dimensions)
FIT_MARGIN = 100.0

#: a fitted weight is given a name (m, 2, (1-theta)^2, ...) when it is within this relative
#: distance of the named value; the named value is then certified itself
RATIO_RTOL = 2e-2


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
# the point and the problems around it
# ---------------------------------------------------------------------------------------
class _Point:
    """The user's point as the candidates need it: ``w`` in the problem's feature space,
    ``coef`` (kernel problems), the intercept ``b`` the user gave (also when the problem has
    none: ``sol.info["intercept"]``, which :mod:`refmodels.testing` sets), linear or not."""

    def __init__(self, prob, sol):
        self.linear = prob.kernel.is_linear
        w, b = prob._primal_point(sol)
        self.w = np.asarray(w, float)
        self.coef = None if sol.coef is None else np.asarray(sol.coef, float)
        given = sol.info.get("intercept") if isinstance(sol.info, dict) else None
        self.b = float(given) if given is not None else float(sol.intercept or 0.0)
        if not prob.has_intercept and given is None:
            self.b = 0.0

    def on(self, prob, b=None, w=None):
        """The point as a Solution of ``prob`` (``w`` for a linear kernel, else ``coef``)."""
        b = self.b if b is None else b
        intercept = b if prob.has_intercept else None
        if prob.kernel.is_linear:
            return prob.solution_from(w=self.w if w is None else w, intercept=intercept,
                                      source="diagnose")
        return prob.solution_from(coef=self.coef, intercept=intercept, source="diagnose")


def _init_args(prob):
    """The constructor arguments of ``prob`` (as :meth:`BinaryProblem._rescaled` reads them)."""
    names = list(inspect.signature(type(prob).__init__).parameters)[1:]
    out = {}
    for name in names:
        # the labels as SPEC's +-1 (the larger class label is +1 either way)
        if hasattr(prob, name):
            out[name] = getattr(prob, name)
    return out


def rebuild(prob, cls=None, **changes):
    """A new problem like ``prob`` with ``changes`` (constructor arguments) applied."""
    kwargs = _init_args(prob)
    kwargs.update(changes)
    names = set(list(inspect.signature(type(prob).__init__).parameters)[1:]) | set(changes)
    return (cls or type(prob))(**{k: v for k, v in kwargs.items() if k in names})


def _feature_problem(prob, extra_column=None, **changes):
    """The problem in its feature space (``F``, linear kernel), a constant column of value
    ``extra_column`` appended when given: a regularised bias."""
    F = prob.F
    if sp.issparse(F):
        F = F.toarray()
    F = np.asarray(F, float)
    if extra_column is not None:
        F = np.hstack([F, np.full((F.shape[0], 1), float(extra_column))])
    return rebuild(prob, X=F, kernel=_k.Linear(), **changes)


# ---- a free intercept for the families that have none --------------------------------
_INTERCEPT_CLASSES = {}


def intercept_variant(cls):
    """``cls`` with a free (unregularised) intercept fixed at the point's value ``b0``: the
    margins are ``y (F w + b0)``; the certificate adds the stationarity in ``b``
    (``sum_i nu_i = 0`` for ODM; ``e^T (Y v - A P z) = 0`` for ODML / LDM) and the dual
    value of the problem with ``b = b0`` (a lower bound on its optimum, equal to the free
    problem's where that stationarity holds)."""
    if cls in _INTERCEPT_CLASSES:
        return _INTERCEPT_CLASSES[cls]
    from .odm import ODM
    from .odml import _MarginDistributionProblem

    if issubclass(cls, ODM):
        base = _ODMIntercept
    elif issubclass(cls, _MarginDistributionProblem):
        base = _MarginIntercept
    else:
        return None
    variant = type(f"{cls.__name__}WithIntercept", (base, cls), {"__module__": __name__})
    _INTERCEPT_CLASSES[cls] = variant
    return variant


class _InterceptMixin:
    has_intercept = True

    def __init__(self, *args, b0=0.0, **kwargs):
        super().__init__(*args, **kwargs)
        self._b0 = float(b0)

    def margins(self, w, b=None):
        return super().margins(w, self._b0 if b is None else b)

    def primal_value(self, w, b=None):
        return self.objective_from_margins(self.margins(w, b), self._norm2(w))

    def reference_solution(self):
        raise NotImplementedError("no reference solver for a diagnosis variant")


class _ODMIntercept(_InterceptMixin):
    """ODM with a free intercept: ``L`` gains ``-b sum_i y_i (zeta_i - beta_i)``."""

    def _dual_value(self, dual):
        nu = self.coef_from_dual(dual)[0]
        return super()._dual_value(dual) - self._b0 * float(np.sum(nu))

    def kkt_residuals(self, point, dual, sol=None):
        r = super().kkt_residuals(point, dual, sol)
        nu = self.coef_from_dual(dual)[0]
        r["stationarity (intercept)"] = (abs(float(np.sum(nu))),
                                         1.0 + float(np.sum(np.abs(nu))))
        return r


class _MarginIntercept(_InterceptMixin):
    """ODML / LDM with a free intercept: with ``z = F w + b e`` the objective is
    ``1/2 ||w||^2 + (A/2) z^T P z - u^T z + ...``; stationarity in ``w`` gains
    ``A F^T P e b`` and in ``b`` reads ``e^T (u - A P z) = 0`` (``u = Y v``)."""

    def _Pe(self):
        e = np.ones(self.m)
        return e - self.y * (self.y @ e) / self.m

    def _stationarity_target(self, w):
        return super()._stationarity_target(w) + self._A_coef * self._b0 * self._Ft(self._Pe())

    def _b_residual(self, w, mult):
        z = self.y * self.margins(w)                    # F w + b0 (decision values)
        Pz = z - self.y * (self.y @ z) / self.m
        u = self.y * self._v(mult)
        val = float(np.sum(u) - self._A_coef * np.sum(Pz))
        scale = 1.0 + float(np.sum(np.abs(u))) + self._A_coef * float(np.sum(np.abs(Pz)))
        return abs(val), scale

    def kkt_residuals(self, point, dual, sol=None):
        r = super().kkt_residuals(point, dual, sol)
        r["stationarity (intercept)"] = self._b_residual(point[0], self._mult(dual))
        return r

    def dual_candidates(self, point, sol=None):
        from .base import TIE_THRESHOLDS, derive_box_duals

        w = point[0]
        gamma = self.margins(w)
        z = self.y * gamma
        Pz = z - self.y * (self.y @ z) / self.m
        A = np.vstack([self._FtY(), self.y[None, :]])
        rhs = self._A_coef * float(np.sum(Pz)) - self._mean_coef * float(np.sum(self.y))
        target = np.concatenate([self._stationarity_target(w), [rhs]])
        for t in TIE_THRESHOLDS:
            (a,) = derive_box_duals([(gamma - 1.0, self._upper, A)], target, t)
            yield {self.dual_names[0]: a}

    def dual_value(self, dual):
        from .odml import woodbury_solve

        a = self._mult(dual)
        u = self.y * self._v(a)
        Pe = self._Pe()
        A, b0 = self._A_coef, self._b0
        up = u - A * b0 * Pe
        G = self.gram
        t = woodbury_solve(G, self.y, A, up)
        return float(np.sum(a) - 0.5 * up @ (G @ t) - b0 * np.sum(u)
                     + 0.5 * A * b0 ** 2 * float(np.sum(Pe)))

    def _dual_value(self, dual):
        return self.dual_value(dual)


# ---- the L2-SVM (squared hinge): ODM with theta = 0 and mu = 0 -------------------------
def _l2svm_classes():
    from .odm import ODM

    class L2SVM(ODM):
        """ODM with ``theta = 0``, ``mu = 0``: the squared hinge (the L2-loss SVM)."""

        def __init__(self, X, y, lam=1.0, kernel=None):
            super().__init__(X, y, lam=lam, mu=1.0, theta=0.0, kernel=kernel)
            self.mu = 0.0

        def dual_value(self, dual):
            z = np.asarray(dual["zeta"], float)
            u = self._FtY() @ z
            return float(z.sum() - 0.5 * u @ u - self.a / 2 * (z @ z))

        def dual_value_from_gram(self, dual, Gv):
            z = np.asarray(dual["zeta"], float)
            return float(z.sum() - 0.5 * (self.y * z) @ Gv - self.a / 2 * (z @ z))

    class L2SVMIntercept(_ODMIntercept, L2SVM):
        pass

    L2SVM.__module__ = L2SVMIntercept.__module__ = __name__
    return L2SVM, L2SVMIntercept


_L2SVM, _L2SVMIntercept = _l2svm_classes()


# ---------------------------------------------------------------------------------------
# fitting the loss weights to the point
# ---------------------------------------------------------------------------------------
def _F(prob):
    F = prob.F
    return np.asarray(F.toarray() if sp.issparse(F) else F, float)


def fit_weights(prob, w, b=0.0):
    """The loss weights for which ``w`` (with intercept ``b`` in the margins) is stationary:
    ``{name: value}``, or None when the family has no such fit. Least squares on the
    stationarity in ``w``, linear in the weights once the margins fix the active terms:
    ODM ``w = 2c F^T Y (xi - mu eps)`` (two unknowns ``c``, ``c mu``); SVM, ODML, LDM
    ``w + A F^T P F w - k F^T y = F^T Y alpha`` with ``alpha = C`` below the margin, free in
    ``[0, C]`` on it (non-negative least squares in ``C``, ``A``, ``k`` and the tied
    multipliers)."""
    from .odm import ODM
    from .odml import LDM, ODML
    from .svm import SVM

    F = _F(prob)
    y, m = prob.y, prob.m
    z = F @ w + b
    gamma = y * z
    if isinstance(prob, ODM):
        th = prob.theta
        xi = np.maximum(0.0, 1.0 - th - gamma)
        eps = np.maximum(0.0, gamma - 1.0 - th)
        g1, g2 = 2 * F.T @ (y * xi), 2 * F.T @ (y * eps)
        M = np.column_stack([g1, -g2])
        if not np.any(M):
            return None
        (c, d), *_ = np.linalg.lstsq(M, w, rcond=None)
        if not (c > 0 and np.isfinite(c)):
            return None
        out = {"lam": float(c * m * (1 - th) ** 2)}
        if np.any(g2) and d > 0:
            out["mu"] = float(d / c)
        return out
    if not isinstance(prob, (SVM, ODML, LDM)):
        return None
    best = None
    FtY = F.T * y[None, :]
    for t in (1e-9, 1e-6, 1e-4, 1e-2):
        below = gamma < 1 - t
        tie = np.abs(gamma - 1) <= t
        cols, names = [FtY @ below.astype(float)], ["C"]
        if isinstance(prob, (ODML, LDM)):
            Pz = z - y * (y @ z) / m
            cols += [-(F.T @ Pz), F.T @ y]
            names += ["A", "k"]
        cols += [FtY[:, i] for i in np.flatnonzero(tie)]
        M = np.column_stack(cols)
        x, rnorm = nnls(M, w, maxiter=50 * M.shape[1])
        C = x[0]
        ties = x[len(names):]
        if C <= 0 or (ties.size and ties.max() > C * (1 + 1e-6)):
            if not (C <= 0 and ties.size and not below.any()):
                continue
            C = ties.max()                         # every active point on the margin
        if best is None or rnorm < best[0]:
            best = (rnorm, C, dict(zip(names[1:], x[1:len(names)])))
    if best is None or not best[1] > 0:
        return None
    _, C, extra = best
    if isinstance(prob, SVM):
        return {"C": float(C)}
    A, k = extra.get("A", 0.0), extra.get("k", 0.0)
    if isinstance(prob, ODML):
        return {"lam": float(C * m), "mu1": float(A * m / 2), "mu2": float(k * m)}
    return {"C": float(C), "lam1": float(A * m / 4), "lam2": float(k * m)}


def _named_ratios(prob):
    """``[(factor, words)]`` a fitted weight's ratio to the problem's is compared with."""
    m = prob.m
    out = [(m, "·m"), (1.0 / m, "/m"), (2.0, "·2"), (0.5, "/2"), (float(m) ** 2, "·m²"),
           (1.0 / m ** 2, "/m²"), (2.0 * m, "·2m"), (m / 2.0, "·m/2"), (0.5 / m, "/(2m)"),
           (2.0 / m, "·2/m")]
    th = getattr(prob, "theta", None)
    if th:
        f = (1 - th) ** 2
        out += [(f, "·(1-θ)²"), (1 / f, "/(1-θ)²"), (f * m, "·m(1-θ)²"), (m / f, "·m/(1-θ)²"),
                (f / m, "·(1-θ)²/m")]
    mu = getattr(prob, "mu", None)
    if mu and mu != 1.0:
        out += [(mu, "·μ"), (1 / mu, "/μ")]
    return out


def _name_ratio(prob, name, old, new):
    """``(value, words)``: ``new`` as ``old`` times a named factor, when one is close."""
    if not (old > 0 and new > 0):
        return None
    r = new / old
    best = None
    for f, words in _named_ratios(prob):
        err = abs(r / f - 1.0)
        if err <= RATIO_RTOL and (best is None or err < best[0]):
            best = (err, old * f, f"{name}' = {name}{words} = {old * f:.6g}")
    return None if best is None else best[1:]


# ---------------------------------------------------------------------------------------
# the candidates
# ---------------------------------------------------------------------------------------
_WEIGHT_REASONS = {
    "·m": "your loss is probably not divided by m (or {p} was multiplied by m)",
    "/m": "your loss is probably divided by m where this problem's is not (seed 002 writes "
          "λ/m for C), or {p} was divided by m",
    "·2": "a factor 2 is probably missing or extra ({p} doubled, the loss not halved, or "
          "||w||² without its 1/2)",
    "/2": "a factor 1/2 is probably missing or extra ({p} halved, or a 1/2 on the loss "
          "that this problem does not have)",
}


def _weight_reason(words, p):
    if words in _WEIGHT_REASONS:
        return _WEIGHT_REASONS[words].format(p=p)
    if words in ("·(1-θ)²",):
        return "the 1/(1-θ)² factor of the loss is probably missing"
    if words in ("/(1-θ)²",):
        return "the 1/(1-θ)² factor of the loss is probably applied twice"
    return f"{p} is probably scaled by {words.lstrip('·')} in your solver"


def _candidates(prob, pt):
    """Yield ``(change, description, reason, rank, build)``; ``build()`` returns
    ``(problem, solution)`` or raises ValueError when the candidate does not apply."""
    from .odm import ODM
    from .odml import LDM, ODML
    from .svm import SVM

    weights = tuple(getattr(prob, "rescale_params", None) or ())
    m = prob.m
    has_b = prob.has_intercept
    b = pt.b
    fi = "fit_intercept" in inspect.signature(type(prob).__init__).parameters

    space = _space(prob)

    def same(**ch):
        return lambda: (lambda q: (q, pt.on(q)))(rebuild(prob, **{**space, **ch}))

    # 1. one loss weight, or all, scaled by m, 1/m, 2, 1/2
    for f, words in ((m, "·m"), (1.0 / m, "/m"), (2.0, "·2"), (0.5, "/2")):
        for p in weights:
            v = getattr(prob, p)
            if v == 0:
                continue
            ch = {p: v * f}
            yield (ch, f"{p}' = {p}{words} = {v * f:.6g}", _weight_reason(words, p), 1,
                   same(**ch))
        if len([p for p in weights if getattr(prob, p)]) > 1:
            ch = {p: getattr(prob, p) * f for p in weights if getattr(prob, p)}
            desc = ", ".join(f"{p}' = {p}{words}" for p in ch)
            yield (ch, desc, _weight_reason(words, "every loss weight"), 1, same(**ch))
    # 2. the parametrisations of the papers
    if isinstance(prob, ODM):
        lam, mu, th = prob.lam, prob.mu, prob.theta
        f = (1 - th) ** 2
        if th > 0:
            yield ({"lam": lam * f}, f"lam' = lam·(1-θ)² = {lam * f:.6g}",
                   "the 1/(1-θ)² factor of the loss is probably missing", 1,
                   same(lam=lam * f))
            yield ({"lam": lam / f}, f"lam' = lam/(1-θ)² = {lam / f:.6g}",
                   "the 1/(1-θ)² factor of the loss is probably applied twice", 2,
                   same(lam=lam / f))
        yield ({"lam": lam * mu, "mu": 1.0 / mu},
               f"lam' = lam·mu = {lam * mu:.6g}, mu' = 1/mu = {1 / mu:.6g}",
               "mu probably weighs the loss below the band (ξ) instead of above it (ε): "
               "mu is on the wrong side", 1, same(lam=lam * mu, mu=1.0 / mu))
        yield ({"mu": 1.0 / mu}, f"mu' = 1/mu = {1 / mu:.6g}",
               "mu is probably inverted (the ratio of the two sides of the band)", 2,
               same(mu=1.0 / mu))
        yield ({"lam": lam * f, "mu": mu / lam},
               f"lam' = lam·(1-θ)² = {lam * f:.6g}, mu' = mu/lam = {mu / lam:.6g}",
               "your solver probably reads (lam, mu, theta) as seed 000's (C1, C2, D) "
               "(ODM.from_seed000)", 2, same(lam=lam * f, mu=mu / lam))
    if isinstance(prob, LDM):
        ch = {"C": prob.C / m, "lam1": prob.lam1 / 2}
        yield (ch, f"C' = C/m = {ch['C']:.6g}, lam1' = lam1/2 = {ch['lam1']:.6g}",
               "your solver probably states ODML's objective (seed 002: λ/m on the mean "
               "hinge, the variance not pairwise) with LDM's numbers", 2, same(**ch))
    if isinstance(prob, ODML):
        ch = {"lam": prob.lam * m, "mu1": prob.mu1 * 2}
        yield (ch, f"lam' = lam·m = {ch['lam']:.6g}, mu1' = 2 mu1 = {ch['mu1']:.6g}",
               "your solver probably states LDM's objective (seed 001: C on the hinge sum, "
               "the pairwise variance) with ODML's numbers", 2, same(**ch))
    # a term of the objective left out (its weight at the neutral value)
    for name, neutral, words in _DROPPED.get(type(prob).__name__, ()):
        v = getattr(prob, name, None)
        if v is not None and v != neutral:
            yield ({name: neutral}, f"{name}' = {neutral:g}",
                   f"your solver probably leaves out {words}", 2, same(**{name: neutral}))
    # 3. the intercept
    if has_b and fi and abs(b) == 0.0:
        yield ({"fit_intercept": False}, "the problem without an intercept",
               "your solver probably fits no intercept", 1, same(fit_intercept=False))
    if not has_b and b != 0.0:
        if fi:
            yield ({"fit_intercept": True}, "the problem with a free intercept",
                   "your solver fits an intercept (unregularised) that this problem does "
                   "not have", 1, same(fit_intercept=True))
        else:
            cls = intercept_variant(type(prob))
            if cls is not None:
                yield ({"intercept": "free"}, "the problem with a free intercept",
                       "your solver fits an intercept (unregularised) that this problem "
                       "does not have", 1,
                       lambda: (lambda q: (q, pt.on(q)))(rebuild(prob, cls=cls, b0=b,
                                                                 **space)))
    if b != 0.0 and not getattr(prob, "kernel").is_precomputed:
        for s, rank in _bias_scales(prob, pt):
            w_aug = np.concatenate([pt.w, [b / s]])
            yield ({"intercept": "regularised", "bias": s},
                   f"the problem without intercept on the features with a constant column "
                   f"{s:.6g} appended (a regularised bias b = {s:.6g}·w_b)",
                   "your solver regularises its intercept like a weight (LIBLINEAR's -B "
                   f"{s:.3g}, a constant feature {s:.3g})", rank,
                   _bias_builder(prob, pt, s, w_aug))
    # 4. hinge against squared hinge
    if isinstance(prob, SVM):
        lam = prob.C * m
        yield ({"loss": "squared_hinge", "lam": lam},
               f"the squared hinge (the L2-SVM: ODM with θ = 0, μ = 0, lam = C·m = {lam:.6g})",
               "your solver probably minimises the squared hinge, not the hinge", 1,
               lambda: _l2svm_build(prob, pt, lam))
    # 5. the labels flipped
    yield ({"y": "flipped"}, "the labels flipped (y' = -y)",
           "your solver probably reads the labels the other way round (+1 for the smaller "
           "class label)", 2, same(y=-prob.y))
    # 6. RBF's gamma read as sigma
    if isinstance(prob.kernel, _k.RBF):
        g = prob.kernel.gamma
        for val, words in ((1 / (2 * g * g), "1/(2γ²)"), (1 / (2 * g), "1/(2γ)")):
            yield ({"gamma": val}, f"the RBF kernel with gamma' = {words} = {val:.6g}",
                   "your solver probably reads gamma as the width σ of exp(-||x-z||²/(2σ²)) "
                   "or writes the kernel with another convention", 2,
                   lambda val=val: (lambda q: (q, pt.on(q)))(
                       rebuild(prob, kernel=_k.RBF(gamma=val))))


#: per family: ``(parameter, neutral value, the term it stands for)``: the candidates of a
#: solver that leaves a term out
_DROPPED = {
    "ODM": (("theta", 0.0, "the insensitive band (theta)"),
            ("mu", 1.0, "mu (the weight of the loss above the band)")),
    "ODML": (("mu1", 0.0, "the margin variance"), ("mu2", 0.0, "the margin mean")),
    "LDM": (("lam1", 0.0, "the margin variance"), ("lam2", 0.0, "the margin mean")),
    "SVMm": (("eps", 0.0, "the band's width eps"), ("C2", 0.0, "the loss above the band")),
    "EpsSVM": (("C2", 0.0, "the loss above the margin"),),
}


def _space(prob):
    """The constructor arguments that put a candidate in the problem's feature space: none
    for the linear kernel; the empirical kernel map ``F`` (computed once, shared by every
    candidate) with the linear kernel otherwise, so that a candidate costs no new
    eigendecomposition (its certificate then uses ``F``'s margins, as the kernel problem's
    stationarity does)."""
    if prob.kernel.is_linear:
        return {}
    return {"X": _F(prob), "kernel": _k.Linear()}


def _bias_scales(prob, pt):
    """``[(s, rank)]``: the scale of a constant column that fits the point (from the
    stationarity in its weight, ``b/s = s sum_i nu_i``), and 1 (LIBLINEAR's default)."""
    out = [(1.0, 1)]
    try:
        nu_sum = _nu_sum(prob, pt)
    except (ValueError, np.linalg.LinAlgError, NotImplementedError):
        nu_sum = None
    if nu_sum is not None and nu_sum != 0.0 and pt.b / nu_sum > 0:
        s = math.sqrt(pt.b / nu_sum)
        if np.isfinite(s) and abs(s - 1.0) > 1e-3:
            out.insert(0, (float(s), 1))
    return out


def _nu_sum(prob, pt):
    """``sum_i nu_i`` of the dual point the margins (with the user's intercept) give."""
    aug = _feature_problem(prob, extra_column=1.0)
    sol = aug.solution_from(w=np.concatenate([pt.w, [pt.b]]), source="diagnose")
    nu, _ = aug.coef_from_dual(aug.certify(sol, reference=False).dual)
    return float(np.sum(nu))


def _bias_builder(prob, pt, s, w_aug):
    def build():
        q = _feature_problem(prob, extra_column=s)
        return q, q.solution_from(w=w_aug, source="diagnose")
    return build


def _l2svm_build(prob, pt, lam):
    sp_ = _space(prob) or {"X": prob.X, "kernel": prob.kernel}
    if prob.has_intercept:
        q = _L2SVMIntercept(sp_["X"], prob.y, lam=lam, kernel=sp_["kernel"], b0=pt.b)
    else:
        q = _L2SVM(sp_["X"], prob.y, lam=lam, kernel=sp_["kernel"])
    return q, pt.on(q)


def _fitted(prob, pt, candidates_done):
    """Candidates from :func:`fit_weights`: the named ratio when one is close, else the
    fitted values themselves; on the problem itself and, for a point with an intercept the
    problem lacks, on its free-intercept variant."""
    variants = [(prob, {}, "", pt.b if prob.has_intercept else 0.0)]
    if not prob.has_intercept and pt.b != 0.0:
        cls = intercept_variant(type(prob))
        if cls is not None:
            variants.append((None, {"intercept": "free"}, " with a free intercept", pt.b))
    for base, extra, where, b in variants:
        try:
            fit = fit_weights(prob, pt.w, b)
        except (ValueError, np.linalg.LinAlgError):
            fit = None
        if not fit:
            continue
        change, words, reasons = {}, [], []
        for name, v in fit.items():
            old = getattr(prob, name)
            if old > 0 and abs(v / old - 1) <= 1e-6:
                continue
            named = _name_ratio(prob, name, old, v) if old > 0 else None
            if named is not None:
                change[name] = named[0]
                words.append(named[1])
                reasons.append(_weight_reason(_ratio_words(named[1], name), name))
            else:
                change[name] = v
                words.append(f"{name}' = {v:.6g} (fitted; {name} = {old:.6g})")
                reasons.append(f"{name} is probably scaled in your solver")
        if not change:
            continue
        full = {**change, **extra}
        if any(_same_change(full, c) for c in candidates_done):
            continue
        desc = ", ".join(words) + where
        reason = "; ".join(dict.fromkeys(reasons))

        def build(change=change, extra=extra, b=b):
            space = _space(prob)
            if extra:
                cls = intercept_variant(type(prob))
                q = rebuild(prob, cls=cls, b0=b, **space, **change)
            else:
                q = rebuild(prob, **space, **change)
            return q, pt.on(q)
        yield full, desc, reason, 3, build


def _ratio_words(text, name):
    """``"·m"`` out of ``"lam' = lam·m = 569"``."""
    head = text.split(" = ")[1]
    return head[len(name):]


def _same_change(a, b):
    if set(a) != set(b):
        return False
    for k in a:
        va, vb = a[k], b[k]
        if isinstance(va, (int, float)) and isinstance(vb, (int, float)):
            if not math.isclose(va, vb, rel_tol=1e-9):
                return False
        elif va != vb:
            return False
    return True


# ---------------------------------------------------------------------------------------
# the diagnosis
# ---------------------------------------------------------------------------------------
def diagnose(cert, *, fit=True, stopped_early_check=True):
    """The nearby problems the certified point does solve (see the module docstring).

    Parameters
    ----------
    cert : a :class:`~refmodels.certify.Certificate` made by ``problem.certify(sol)``
        (``cert.problem`` and ``cert.solution`` are what it certified).
    fit : also fit the loss weights to the point (least squares on the stationarity).
    stopped_early_check : when no candidate holds, compare the point with the reference
        optimum (solved when ``m <= 2000``) to say whether it looks stopped early.

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
    pt = _Point(prob, sol)
    tol = cert.tol
    found, tried, done = [], [], []
    cands = list(_candidates(prob, pt))
    if fit:
        cands += list(_fitted(prob, pt, [c[0] for c in cands]))
    for change, desc, reason, rank, build in cands:
        if any(_same_change(change, d) for d in done):
            continue
        done.append(change)
        try:
            q, s = build()
            c = q.certify(s, tol=tol, reference=False)
        except (ValueError, np.linalg.LinAlgError, ZeroDivisionError, FloatingPointError,
                NotImplementedError) as exc:
            tried.append((change, desc, math.inf))
            del exc
            continue
        except Exception as exc:                  # noqa: BLE001 - a candidate must not kill it
            from .solution import SolverError

            if isinstance(exc, SolverError):
                tried.append((change, desc, math.inf))
                continue
            raise
        tried.append((change, desc, c.holds_at))
        if c.ok:
            found.append(Candidate(change, desc, reason, q, s, c, rank))
    found = _distinguishable(cert, prob, found)
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


def _distinguishable(cert, prob, found):
    """The holding candidates that tell the point's problem apart from the original: the
    point fits the candidate :data:`DISTINCT` times better than the original, and (when the
    certificate computed the reference optimum) the original's optimum does not fit the
    candidate too (else both problems share it, and the failure is the point's accuracy)."""
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
        if "intercept" in c.change or hasattr(c.problem, "_b0"):
            kept.append(c)                # built around the point's own intercept: no guard
            continue
        try:
            pt = _Point(prob, ref)
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
