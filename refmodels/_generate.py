"""Problems at every scale, drawn from a seed with NumPy: the generator the project's
property tests (``tests/strategies.py``), ``validation/sweep_scales.py`` and
:func:`refmodels.testing.check_solver` share. No Hypothesis here: a user's test suite can
call it without the test extras."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np


# ---------------------------------------------------------------------------------------
# every scale: the one vocabulary every property test draws its data through
# ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Scale:
    """How a drawn problem's features are scaled: ``X * factor + offset * factor`` (one
    offset for every feature, the uncentred data a user hands over), the last ``m // 5`` rows
    optionally near duplicates (relative 1e-9) of the first. Kernels keep their
    data-independent hyperparameters, so the polynomial kernel on ``factor = 1e3`` data has
    Gram entries up to 1e18, the RBF Gram tends to the identity (large factor) or to all
    ones (small factor). ``good``: the unit scale, where the strict properties (agreement to
    1e-6, every solve optimal) hold; elsewhere the tests state the trust property
    (``contract.solve_trusted``)."""

    factor: float = 1.0
    offset: float = 0.0
    near_duplicates: bool = False

    @property
    def good(self):
        return self == UNIT

    def features(self, X, rng=None, duplicates=True):
        """``X`` at this scale (a new array; ``rng`` perturbs the near duplicates; test points
        take ``duplicates=False``)."""
        X = np.asarray(X, dtype=float) * self.factor + self.offset * self.factor
        m = X.shape[0]
        if duplicates and self.near_duplicates and m >= 5:
            k = m // 5
            noise = (rng or np.random.default_rng(0)).normal(size=(k, X.shape[1]))
            X[-k:] = X[:k] * (1 + 1e-9 * noise)
        return X


UNIT = Scale()

# ---------------------------------------------------------------------------------------
# every scale: unscaled features, raw data with polynomial kernels (Gram entries
# up to 1e8 and beyond), near-duplicate points, theta close to 1, hyperparameters over
# orders of magnitude; one generator for the property tests and validation/sweep_scales.py
# ---------------------------------------------------------------------------------------
def _labels():
    """Every generator label of the registry's families (``"SVM"``, ``"SVM+b"``, ...)."""
    from . import registry

    return tuple(label for fam in registry.FAMILIES.values() for label in fam.draws)


#: the labels :func:`make_problem` takes (the registry's ``draws``, in its order)
FAMILIES = _labels()


def _kernel(rng, d, raw):
    import refmodels as rm

    kind = rng.choice(["linear", "rbf", "poly", "poly"] if raw else ["linear", "rbf", "poly"])
    if kind == "linear":
        return rm.kernels.Linear(), "linear"
    if kind == "rbf":
        g = float(10 ** rng.uniform(-2, 1)) / d
        return rm.kernels.RBF(gamma=g), f"rbf(g={g:.2g})"
    deg = int(rng.integers(2, 4))
    g = float(10 ** rng.uniform(-1.5, 0))
    return rm.kernels.Polynomial(deg, g, 1.0), f"poly({deg},{g:.2g})"


def _data(rng, m, d, classes=2):
    scale = float(10 ** rng.uniform(-3, 3)) if rng.random() < 0.7 else float(rng.choice([50, 70]))
    X = scale * rng.normal(size=(m, d))
    if classes == 2:
        y = np.where(X[:, 0] + scale * rng.normal(size=m) * rng.uniform(0, 1.5) > 0, 1, -1)
        y[0], y[-1] = 1, -1
    else:
        y = rng.integers(0, classes, size=m)
        y[:classes] = np.arange(classes)
        X += scale * np.eye(classes, d)[y] if d >= classes else 0
    if rng.random() < 0.25:                          # near-duplicate points
        k = max(1, m // 5)
        X[-k:] = X[:k] * (1 + 1e-9 * rng.normal(size=(k, d)))
    return X, y, scale


def _hp(rng, lo=-2, hi=3):
    return float(10 ** rng.uniform(lo, hi))


class Draw:
    """What a family's draws in the registry are handed (:attr:`refmodels.registry.Family.suite`
    and ``draws``): the generator and its helpers, so that a draw states only the family's
    hyperparameters, in the order it draws them. ``make(**params)`` is the family's class
    on ``X``, ``y`` with ``kernel``; ``cls``, ``X``, ``y``, ``kernel`` and ``scale`` are set
    by :func:`make_problem` (the suite of ``check_solver`` uses only the generator)."""

    def __init__(self, rng, cls=None, X=None, y=None, kernel=None, scale=1.0):
        self.rng, self.cls, self.X, self.y, self.kernel, self.scale = rng, cls, X, y, kernel, scale

    def hp(self, lo=-2, hi=3):
        """A hyperparameter over orders of magnitude, ``10^U(lo, hi)``."""
        return _hp(self.rng, lo, hi)

    def uniform(self, lo, hi):
        return float(self.rng.uniform(lo, hi))

    def coin(self, p):
        return bool(self.rng.random() < p)

    def pick(self, options):
        return options[int(self.rng.integers(0, len(options)))]

    def theta(self, lo_exp):
        """A band width in [0, 0.9) or close to 1 (``1 - 10^U(lo_exp, -1)``), either half the
        time."""
        rng = self.rng
        return float(rng.choice([rng.uniform(0, 0.9), 1 - 10 ** rng.uniform(lo_exp, -1)]))

    def other_kernel(self):
        """A second kernel (of unit-scale kind) for a family with base kernels."""
        return _kernel(self.rng, self.X.shape[1], raw=False)[0]

    def test_points(self):
        """One to five test points at the data's scale."""
        return self.scale * self.rng.normal(size=(int(self.rng.integers(1, 6)), self.X.shape[1]))

    def labels01(self):
        """The binary labels as classes 0 and 1."""
        return np.where(self.y > 0, 1, 0)

    def make(self, **params):
        return self.cls(self.X, self.y, kernel=self.kernel, **params)


def _family_of(label):
    from . import registry

    for fam in registry.FAMILIES.values():
        if label in fam.draws:
            return fam
    raise ValueError(f"family must be one of {list(_labels())}; got {label!r}")


def make_problem(family, seed):
    """``(problem, description)``: a random instance of ``family`` (a label of the registry's
    ``draws``: ``"SVM"``, ``"SVM+b"``, ...) at a random scale."""
    fam = _family_of(family)
    rng = np.random.default_rng(seed)
    m = int(rng.integers(8, 60))
    d = int(rng.integers(1, 7))
    if fam.multiclass:
        X, y, scale = _data(rng, m, max(d, 2), classes=int(rng.integers(2, 4)))
    else:
        X, y, scale = _data(rng, m, d)
    kernel, kname = _kernel(rng, X.shape[1], raw=scale >= 10)
    desc = {"family": family, "seed": seed, "m": m, "d": X.shape[1], "scale": scale,
            "kernel": kname}
    draw = Draw(rng, fam.problem_class(), X, y, kernel, scale)
    return fam.draws[family](draw), desc
