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
FAMILIES = ("SVM", "SVM+b", "ODML", "LDM", "ODM", "SVMm", "EpsSVM", "MKLm", "McODM", "DRM",
            "DRR")


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


def make_problem(family, seed):
    """``(problem, description)``: a random instance of ``family`` at a random scale."""
    import refmodels as rm

    rng = np.random.default_rng(seed)
    m = int(rng.integers(8, 60))
    d = int(rng.integers(1, 7))
    if family == "McODM":
        X, y, scale = _data(rng, m, max(d, 2), classes=int(rng.integers(2, 4)))
    else:
        X, y, scale = _data(rng, m, d)
    kernel, kname = _kernel(rng, X.shape[1], raw=scale >= 10)
    desc = {"family": family, "seed": seed, "m": m, "d": X.shape[1], "scale": scale,
            "kernel": kname}
    if family == "SVM":
        p = rm.SVM(X, y, C=_hp(rng), kernel=kernel)
    elif family == "SVM+b":
        p = rm.SVM(X, y, C=_hp(rng), kernel=kernel, fit_intercept=True)
    elif family == "ODML":
        p = rm.ODML(X, y, lam=_hp(rng, -1, 4), mu1=_hp(rng, -2, 3), mu2=_hp(rng, -2, 3),
                    kernel=kernel)
    elif family == "LDM":
        p = rm.LDM(X, y, C=_hp(rng), lam1=_hp(rng, -2, 3), lam2=_hp(rng, -2, 3), kernel=kernel)
    elif family == "ODM":
        theta = float(rng.choice([rng.uniform(0, 0.9), 1 - 10 ** rng.uniform(-4, -1)]))
        p = rm.ODM(X, y, lam=_hp(rng), mu=float(rng.uniform(0.05, 1)), theta=theta,
                   kernel=kernel)
    elif family == "SVMm":
        p = rm.SVMm(X, y, C1=_hp(rng), C2=_hp(rng, -3, 2), eps=float(rng.uniform(0, 3)),
                    kernel=kernel)
    elif family == "EpsSVM":
        p = rm.EpsSVM(X, y, C1=_hp(rng), C2=_hp(rng, -3, 2), kernel=kernel)
    elif family == "MKLm":
        k2, _ = _kernel(rng, X.shape[1], raw=False)
        p = rm.MKLm(X, y, kernels=[kernel, k2], C1=_hp(rng), C2=_hp(rng, -3, 2),
                    eps=float(rng.uniform(0, 2)))
    elif family == "McODM":
        p = rm.McODM(X, y, lam=_hp(rng, -1, 2), mu=float(rng.uniform(0.1, 1)),
                     theta=float(rng.uniform(0, 0.8)), kernel=kernel)
    elif family in ("DRM", "DRR"):
        Xt = scale * rng.normal(size=(int(rng.integers(1, 6)), X.shape[1]))
        yc = np.where(y > 0, 1, 0) if family != "McODM" else y
        if family == "DRM":
            p = rm.DRM(X, yc, Xt, alpha=_hp(rng, -2, 1), beta=_hp(rng, -2, 2), kernel=kernel)
        else:
            q, r = [(2, 1), (1, 1), (2, 2), (np.inf, 1)][int(rng.integers(0, 4))]
            p = rm.DRR(X, yc, Xt, alpha=_hp(rng, -2, 1), beta=_hp(rng, -2, 2), q=q, r=r,
                       rho="identity", kernel=kernel)
    else:
        raise ValueError(family)
    return p, desc


