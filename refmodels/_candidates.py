"""The candidates of a diagnosis (:mod:`refmodels.diagnose`): the nearby problems a
solver writer plausibly solved instead of the one certified, each as ``(change,
description, reason, rank, build)``, and the loss weights fitted to the point (a least
squares on the stationarity in ``w``), named by their ratio to the problem's when one is
close. Every candidate is a new problem built from the original's data and
hyperparameters; the original is never changed."""
from __future__ import annotations

import inspect
import math

import numpy as np
import scipy.sparse as sp
from scipy.optimize import nnls

from . import kernels as _k
from ._variants import _L2SVM, _L2SVMIntercept, intercept_variant, with_intercept

#: a fitted weight is given a name (m, 2, (1-theta)^2, ...) when it is within this relative
#: distance of the named value; the named value is then certified itself
RATIO_RTOL = 2e-2


# ---------------------------------------------------------------------------------------
# the point and the problems around it
# ---------------------------------------------------------------------------------------
class _Point:
    """The user's point as the candidates need it: ``w`` in the problem's feature space,
    ``coef`` (kernel problems), the intercept ``b`` the user gave (also when the problem has
    none: ``sol.info["intercept"]``, which :mod:`refmodels.testing` sets), linear or not."""

    def __init__(self, prob, sol):
        self.linear = prob.kernel.is_linear
        w, _ = prob._primal_point(sol)
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


class Around:
    """The original problem and the user's point, with what every candidate shares: ``F``,
    the problem's feature matrix (dense; the empirical kernel map for a kernel), and
    ``space``, the constructor arguments that put a candidate in that feature space: none
    for the linear kernel; ``F`` with the linear kernel otherwise, so that a candidate costs
    no new eigendecomposition (its certificate then uses ``F``'s margins, as the kernel
    problem's stationarity does). Built once, in the original problem's workspace; the
    candidates are new problems (:meth:`Problem.replace`), the original is never changed."""

    def __init__(self, prob, sol):
        self.prob = prob
        self.pt = _Point(prob, sol)
        F = prob.F
        self.F = np.asarray(F.toarray() if sp.issparse(F) else F, float)
        self.space = {} if prob.kernel.is_linear else {"X": self.F, "kernel": _k.Linear()}

    def problem(self, **changes):
        """The original with ``changes`` (constructor arguments), in its feature space."""
        return self.prob.replace(**{**self.space, **changes})

    def posed(self, q):
        """``(q, the point as a Solution of q)``."""
        return q, self.pt.on(q)

    def augmented(self, column):
        """The problem on its features with a constant column of value ``column`` appended
        and no intercept: a regularised bias (LIBLINEAR's ``-B column``)."""
        F = np.hstack([self.F, np.full((self.F.shape[0], 1), float(column))])
        free = {"fit_intercept": False} if self.prob.has_intercept else {}
        return self.prob.replace(X=F, kernel=_k.Linear(), **free)


# ---------------------------------------------------------------------------------------
# fitting the loss weights to the point
# ---------------------------------------------------------------------------------------
def _nonneg_lsq(M, w):
    """``min ||M x - w||, x >= 0``: SciPy's ``nnls``, or where it stops at its iteration
    cap (it raises RuntimeError in SciPy 1.13) the bounded least squares of ``lsq_linear``."""
    try:
        return nnls(M, w, maxiter=50 * M.shape[1])
    except RuntimeError:
        from scipy.optimize import lsq_linear

        x = lsq_linear(M, w, bounds=(0.0, np.inf), method="bvls", tol=1e-14).x
        return x, float(np.linalg.norm(M @ x - w))


def fit_weights(prob, F, w, b=0.0):
    """The loss weights for which ``w`` (with intercept ``b`` in the margins, ``F`` the
    problem's feature matrix) is stationary:
    ``{name: value}``, or None when the family has no such fit. Least squares on the
    stationarity in ``w``, linear in the weights once the margins fix the active terms:
    ODM ``w = 2c F^T Y (xi - mu eps)`` (two unknowns ``c``, ``c mu``); SVM, ODML, LDM
    ``w + A F^T P F w - k F^T y = F^T Y alpha`` with ``alpha = C`` below the margin, free in
    ``[0, C]`` on it (non-negative least squares in ``C``, ``A``, ``k`` and the tied
    multipliers)."""
    from .odm import ODM
    from .odml import LDM, ODML
    from .svm import SVM

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
        x, rnorm = _nonneg_lsq(M, w)
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


def _candidates(around):
    """Yield ``(change, description, reason, rank, build)``; ``build()`` returns
    ``(problem, solution)`` or raises ValueError when the candidate does not apply."""
    from .odm import ODM
    from .odml import LDM, ODML
    from .svm import SVM

    prob, pt = around.prob, around.pt
    weights = tuple(getattr(prob, "rescale_params", None) or ())
    m = prob.m
    has_b = prob.has_intercept
    b = pt.b
    # a free intercept by the family's own fit_intercept (SVM); ODM/ODML/LDM's fit_intercept
    # is a regularised constant feature (a bias_feature), tried below as such
    fi = ("fit_intercept" in inspect.signature(type(prob).__init__).parameters
          and "bias_feature" not in prob.capabilities)

    def same(**ch):
        return lambda: around.posed(around.problem(**ch))

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
    for name, neutral, words in _dropped(prob):
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
                       lambda: around.posed(with_intercept(around.problem(), b)))
    if b != 0.0 and not prob.kernel.is_precomputed:
        for s, rank in _bias_scales(around):
            w_aug = np.concatenate([pt.w, [b / s]])
            yield ({"intercept": "regularised", "bias": s},
                   f"the problem without intercept on the features with a constant column "
                   f"{s:.6g} appended (a regularised bias b = {s:.6g}·w_b)",
                   "your solver regularises its intercept like a weight (LIBLINEAR's -B "
                   f"{s:.3g}, a constant feature {s:.3g})", rank,
                   _bias_builder(around, s, w_aug))
    # 4. hinge against squared hinge
    if isinstance(prob, SVM):
        lam = prob.C * m
        yield ({"loss": "squared_hinge", "lam": lam},
               f"the squared hinge (the L2-SVM: ODM with θ = 0, μ = 0, lam = C·m = {lam:.6g})",
               "your solver probably minimises the squared hinge, not the hinge", 1,
               lambda: _l2svm_build(around, lam))
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
                   lambda val=val: around.posed(prob.replace(kernel=_k.RBF(gamma=val))))


def _dropped(prob):
    """The family's ``(parameter, neutral value, the term it stands for)`` in the registry
    (:attr:`refmodels.registry.Family.dropped`): the candidates of a solver that leaves a
    term out."""
    from . import registry

    fam = registry.FAMILIES.get(type(prob).__name__)
    return fam.dropped if fam is not None else ()


def _bias_scales(around):
    """``[(s, rank)]``: the scale of a constant column that fits the point (from the
    stationarity in its weight, ``b/s = s sum_i nu_i``), and 1 (LIBLINEAR's default)."""
    pt = around.pt
    out = [(1.0, 1)]
    try:
        nu_sum = _nu_sum(around)
    except (ValueError, np.linalg.LinAlgError, NotImplementedError):
        nu_sum = None
    if nu_sum is not None and nu_sum != 0.0 and pt.b / nu_sum > 0:
        s = math.sqrt(pt.b / nu_sum)
        if np.isfinite(s) and abs(s - 1.0) > 1e-3:
            out.insert(0, (float(s), 1))
    return out


def _nu_sum(around):
    """``sum_i nu_i`` of the dual point the margins (with the user's intercept) give: the
    dual point the certificate derives on the augmented problem (``cert.dual``)."""
    pt, aug = around.pt, around.augmented(1.0)
    sol = aug.solution_from(w=np.concatenate([pt.w, [pt.b]]), source="diagnose")
    nu, _ = aug.coef_from_dual(aug.certify(sol, reference=False).dual)
    return float(np.sum(nu))


def _bias_builder(around, s, w_aug):
    def build():
        q = around.augmented(s)
        return q, q.solution_from(w=w_aug, source="diagnose")
    return build


def _l2svm_build(around, lam):
    prob = around.prob
    X, kernel = (around.space["X"], around.space["kernel"]) if around.space else \
        (prob.X, prob.kernel)
    if prob.has_intercept:
        q = _L2SVMIntercept(X, prob.y, lam=lam, kernel=kernel, b0=around.pt.b)
    else:
        q = _L2SVM(X, prob.y, lam=lam, kernel=kernel)
    return around.posed(q)


def _fitted(around, candidates_done):
    """Candidates from :func:`fit_weights`: the named ratio when one is close, else the
    fitted values themselves; on the problem itself and, for a point with an intercept the
    problem lacks, on its free-intercept variant."""
    prob, pt = around.prob, around.pt
    variants = [({}, "", pt.b if prob.has_intercept else 0.0)]
    if not prob.has_intercept and pt.b != 0.0:
        cls = intercept_variant(type(prob))
        if cls is not None:
            variants.append(({"intercept": "free"}, " with a free intercept", pt.b))
    for extra, where, b in variants:
        try:
            fit = fit_weights(prob, around.F, pt.w, b)
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
            q = around.problem(**change)
            return around.posed(with_intercept(q, b) if extra else q)
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
