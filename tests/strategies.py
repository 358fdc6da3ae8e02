"""Hypothesis strategies shared by every family's tests.

Problems are drawn as a seed plus shape/hyperparameter choices and generated with
NumPy, which keeps examples cheap while covering: m from 2 up, d < m and d > m,
duplicated points, one class much larger than the other, and kernels linear, RBF,
polynomial and precomputed.
"""
from __future__ import annotations

import weakref

import numpy as np
from hypothesis import strategies as st

import refmodels as rm

# every scale: the vocabulary (Scale, UNIT) and the seeded generator (make_problem) live in
# the package (refmodels/_generate.py), which refmodels.testing.check_solver shares
from refmodels._generate import (FAMILIES, UNIT, Scale, _data, _hp, _kernel,  # noqa: F401
                                 make_problem)

#: what a strategy drew for a problem (problems are immutable: the record lives here)
_DRAWN = weakref.WeakKeyDictionary()


def tag(prob, **record):
    """Record what was drawn for ``prob`` (its ``scale``, the draw itself); returns it."""
    _DRAWN.setdefault(prob, {}).update(record)
    return prob


def drawn(prob, key, default=None):
    """What :func:`tag` recorded for ``prob`` under ``key``."""
    return _DRAWN.get(prob, {}).get(key, default)

KERNELS = ("linear", "rbf", "poly", "precomputed")


def scales(good=True):
    """A :class:`Scale`: features times 10^k, k in -3..3, offset 0 / 10 / 1e3 (in units of
    the factor), near duplicates or not; ``good=True`` also draws the unit scale (about half
    the draws, and what Hypothesis shrinks to), ``good=False`` only bad scales."""
    bad = st.builds(Scale, factor=st.sampled_from([10.0 ** k for k in (3, -3, 2, -2, 1, -1, 0)]),
                    offset=st.sampled_from([0.0, 10.0, 1e3]),
                    near_duplicates=st.booleans()).filter(lambda s: not s.good)
    return st.one_of(st.just(UNIT), bad) if good else bad


#: theta in [0, 0.95], or close to 1 (1 - 10^U(-4, -1)): the ODM/mcODM margin at every scale
thetas = st.one_of(st.floats(0.0, 0.95), st.floats(-4.0, -1.0).map(lambda e: 1.0 - 10.0 ** e))


def log_uniform(lo, hi):
    """A float drawn log-uniformly in [lo, hi] (hyperparameters over orders of magnitude)."""
    return st.floats(np.log10(lo), np.log10(hi)).map(lambda e: float(10.0 ** e))


def make_kernel(name, X, rng):
    if name == "linear":
        return rm.kernels.Linear(), X
    if name == "rbf":
        return rm.kernels.RBF(gamma=float(rng.uniform(0.05, 2.0)) / X.shape[1]), X
    if name == "poly":
        return rm.kernels.Polynomial(degree=int(rng.integers(2, 4)), gamma=1.0 / X.shape[1],
                                     coef0=1.0), X
    # precomputed: an RBF Gram handed over as data
    return rm.kernels.Precomputed(), psd_gram(rm.kernels.RBF(gamma=0.5 / X.shape[1]).gram(X))


def psd_gram(G):
    """``G`` projected on the PSD cone when rounding left negative eigenvalues: off the unit
    scale (tiny or offset features) an RBF Gram computed from ``||x||^2 + ||z||^2 - 2 x^T z``
    has eigenvalues down to -1e-4, which a user would not hand over as a Gram."""
    w, V = np.linalg.eigh(0.5 * (G + G.T))
    if w[0] >= 0:
        return G
    G = (V * np.maximum(w, 0.0)) @ V.T
    return 0.5 * (G + G.T)


@st.composite
def binary_data(draw, min_m=2, max_m=40, max_d=12, kernels=KERNELS, scale=None):
    """``(X, y, kernel, scale)`` for a binary problem at a drawn :class:`Scale` (``scale``:
    a strategy, default :func:`scales`); ``X`` is the Gram for precomputed."""
    seed = draw(st.integers(0, 2**32 - 1))
    m = draw(st.integers(min_m, max_m))
    d = draw(st.integers(1, max_d))
    kname = draw(st.sampled_from(kernels))
    imbalance = draw(st.sampled_from([0.5, 0.5, 0.2, 0.9]))
    duplicates = draw(st.booleans())
    sc = draw(scales() if scale is None else scale)
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(m) < imbalance, 1, -1)
    y[0], y[-1] = 1, -1                      # both classes present
    X = rng.normal(size=(m, d)) + 0.8 * y[:, None] * rng.normal(size=d)[None, :]
    if duplicates and m >= 4:
        k = m // 4
        X[-k:] = X[:k]
        y[-k:] = y[:k] if rng.random() < 0.5 else -y[:k]    # duplicated, maybe contradicting
        y[0], y[-1] = 1, -1
        if np.all(y == y[0]):
            y[1] = -y[0]
    X = sc.features(X, rng)
    kernel, Xk = make_kernel(kname, X, rng)
    return Xk, y, kernel, sc


def random_binary(seed, m=30, d=5, kernel="linear", scale=None):
    """A deterministic instance for example-based tests (features at ``scale``, a
    :class:`Scale`, when given)."""
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(m) < 0.5, 1, -1)
    y[0], y[-1] = 1, -1
    X = rng.normal(size=(m, d)) + 0.8 * y[:, None] * rng.normal(size=d)[None, :]
    if scale is not None:
        X = scale.features(X, rng)
    k, Xk = make_kernel(kernel, X, rng)
    return Xk, y, k, X


def projected_gradient(Q, p, lo, hi, iters=5):
    """A deliberately unfinished independent solver: ``iters`` projected-gradient steps on
    ``min 1/2 a^T Q a + p^T a`` over the box ``[lo, hi]``, from 0. Used to produce the point
    "another solver returned when it stopped early", which a certificate must reject."""
    a = np.zeros(Q.shape[0])
    step = 1.0 / max(np.linalg.eigvalsh(0.5 * (Q + Q.T))[-1], 1e-12)
    for _ in range(iters):
        a = np.clip(a - step * (Q @ a + p), lo, hi)
    return a


# ---------------------------------------------------------------------------------------
# problem strategies shared by the family test files and tests/contract.py
# ---------------------------------------------------------------------------------------
def mkl_data(seed, m, d, scale=1.0):
    """``(X, y)``: a binary instance (``random_binary``), features times ``scale``."""
    X, y, _, _ = random_binary(seed, m=m, d=d)
    return X * scale, y


def mkl_base_kernel(name, d, rng, X):
    """A base kernel of type ``name``; the scales differ by orders of magnitude."""
    if name == "rbf":
        return rm.kernels.RBF(gamma=float(10.0 ** rng.uniform(-2, 1)) / d)
    if name == "linear":
        return rm.kernels.Linear()
    if name == "poly":
        return rm.kernels.Polynomial(degree=int(rng.integers(2, 4)),
                                     gamma=float(rng.choice([0.1, 1.0])), coef0=1.0)
    return rm.kernels.RBF(gamma=0.7 / d).gram(X)     # "gram": a precomputed base Gram array


@st.composite
def mklm_problems(draw, max_m=40):
    """An ``rm.MKLm`` with 2-3 base kernels (RBF, linear, polynomial, precomputed Grams);
    ``drawn(prob, 'drawn')`` records the draw."""
    seed = draw(st.integers(0, 2**31))
    m = draw(st.integers(6, max_m))
    d = draw(st.integers(1, 5))
    scale = draw(scales())
    names = draw(st.lists(st.sampled_from(["rbf", "rbf", "linear", "poly", "gram"]),
                          min_size=2, max_size=3))
    C1 = draw(log_uniform(1e-1, 1e2))
    C2 = draw(st.one_of(st.just(0.0), log_uniform(1e-2, 1e2)))
    eps = draw(st.one_of(st.just(0.0), st.floats(0.0, 2.0, allow_subnormal=False)))
    X, y = mkl_data(seed, m, d)
    rng = np.random.default_rng(seed)
    X = scale.features(X, rng)
    kernels = [mkl_base_kernel(n, d, rng, X) for n in names]
    prob = rm.MKLm(X, y, kernels, C1=C1, C2=C2, eps=eps)
    return tag(prob, drawn=dict(seed=seed, m=m, d=d, scale=scale, names=names), scale=scale)


def mcodm_problem(seed, m=20, d=4, k=3, kernel="linear", lam=1.0, mu=0.5, theta=0.3,
                  scale=UNIT):
    """``(rm.McODM, rng)``: k classes (each present), blobs around random centres, features
    at ``scale``."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, m)
    y[:k] = np.arange(k)
    X = rng.normal(size=(m, d)) + 0.8 * rng.normal(size=(k, d))[y]
    if scale != UNIT:
        X = scale.features(X, rng)
    kern = {"linear": rm.kernels.Linear(),
            "rbf": rm.kernels.RBF(gamma=0.5 / d),
            "poly": rm.kernels.Polynomial(degree=2, gamma=1.0 / d, coef0=1.0)}[kernel]
    return rm.McODM(X, y, lam=lam, mu=mu, theta=theta, kernel=kern), rng


@st.composite
def relaxed_mcodm_problems(draw, kernels=("linear", "rbf", "poly")):
    """mcODM's relaxed QP (``McODM.relaxed(M)``) at a random ``M``."""
    seed = draw(st.integers(0, 2**32 - 1))
    k = draw(st.integers(2, 5))
    m = draw(st.integers(k, 30))
    d = draw(st.integers(2, 8))
    kernel = draw(st.sampled_from(kernels))
    lam = draw(log_uniform(1e-2, 10.0))
    mu = draw(log_uniform(0.1, 10.0))
    theta = draw(st.floats(0.0, 0.9))
    scale = draw(scales())
    prob, rng = mcodm_problem(seed, m=m, d=d, k=k, kernel=kernel, lam=lam, mu=mu, theta=theta,
                              scale=scale)
    M = rng.normal(size=m) * draw(st.sampled_from([0.1, 1.0, 3.0]))
    rp = prob.relaxed(M)
    tag(rp, scale=scale)
    return rp


def drr_kernel(name, X, Xt, rng):
    """``(kernel, X, X_test)``; for ``precomputed`` the data are the Gram and cross blocks."""
    d = X.shape[1]
    if name == "linear":
        return rm.kernels.Linear(), X, Xt
    if name == "rbf":
        return rm.kernels.RBF(gamma=float(rng.uniform(0.1, 2.0)) / d), X, Xt
    if name == "poly":
        return rm.kernels.Polynomial(degree=2, gamma=1.0 / d, coef0=1.0), X, Xt
    k = rm.kernels.RBF(gamma=0.5 / d)
    return rm.kernels.Precomputed(), psd_gram(k.gram(X)), k.cross(Xt, X)


@st.composite
def drr_data(draw, max_m=25, kernels=KERNELS, scale=None):
    """``(X, y, X_test, kernel, scale)``: m <= 25 training points in 2-4 classes, 1-3 test
    points, at a drawn :class:`Scale` (``scale``: a strategy, default :func:`scales`)."""
    seed = draw(st.integers(0, 2**32 - 1))
    g = draw(st.integers(2, 4))
    m = draw(st.integers(max(g, 4), max_m))
    d = draw(st.integers(1, 6))
    n_test = draw(st.integers(1, 3))
    kname = draw(st.sampled_from(kernels))
    sc = draw(scales() if scale is None else scale)
    rng = np.random.default_rng(seed)
    y = np.concatenate([np.arange(g), rng.integers(0, g, m - g)])
    rng.shuffle(y)
    centers = rng.normal(size=(g, d)) * 1.5
    X = sc.features(centers[y] + rng.normal(size=(m, d)), rng)
    Xt = sc.features(centers[rng.integers(0, g, n_test)] + rng.normal(size=(n_test, d)),
                     duplicates=False)
    kernel, Xk, Xtk = drr_kernel(kname, X, Xt, rng)
    return Xk, y, Xtk, kernel, sc


def keel(name, minmax=False):
    """``(X, y)`` of a numeric KEEL set shipped in ``validation/data/keel`` (``y``: +1 for
    the last label in sorted order, -1 otherwise), features in [0, 1] if ``minmax``; skips
    the test when the file is not in this checkout."""
    import pytest
    from pathlib import Path

    root = Path(__file__).parents[1] / "validation" / "data" / "keel"
    paths = [root / sub / f"{name}.dat" for sub in ("balanced", "imbalanced")]
    path = next((p for p in paths if p.exists()), None)
    if path is None:
        pytest.skip(f"validation/data/keel/*/{name}.dat is not in this checkout")
    rows = [ln.split(",") for ln in path.read_text().splitlines()
            if ln.strip() and not ln.startswith("@")]
    X = np.array([[float(v) for v in r[:-1]] for r in rows])
    labels = np.array([r[-1].strip() for r in rows])
    y = np.where(labels == np.unique(labels)[-1], 1, -1)
    if minmax:
        span = X.max(0) - X.min(0)
        X = (X - X.min(0)) / np.where(span > 0, span, 1.0)
    return X, y



# ---------------------------------------------------------------------------------------
# far rows: what cancels the precision of ||x||^2 + ||z||^2 - 2 x^T z (kernels at any scale)
# ---------------------------------------------------------------------------------------
FAR_KINDS = ("outliers", "offset", "far rows", "offset and outliers")


def far_rows(seed, m, d, kind, e):
    """``(X, Z)``: training rows ``X`` (m x d) and new rows ``Z`` where a few rows lie far away.

    ``kind`` is one of :data:`FAR_KINDS`: one to three rows with one feature or every
    feature at ``+-10^e`` (``outliers``); every row plus a common offset ``10^e``, the same
    for every feature or one per feature (``offset``); two to four rows shifted by one far
    vector of norm ``10^e``, so far rows near each other (``far rows``); or an offset with
    outliers ten times beyond it. The rest is unit Gaussian data at a scale
    ``10^U(-2, 2)``, with near duplicates (relative 1e-9) of some rows half of the time.
    ``Z``: perturbed copies of some rows of ``X``, a far row and, half of the time, exact
    copies.
    """
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, d)) * 10.0 ** rng.uniform(-2, 2)
    if rng.random() < 0.5:
        k = max(1, m // 5)
        X[-k:] = X[:k] * (1 + 1e-9 * rng.normal(size=(k, d)))
    far = 10.0 ** e
    if kind in ("offset", "offset and outliers"):
        X += far * (rng.uniform(0.5, 1.0, size=d) if rng.random() < 0.5 else 1.0)
    if kind in ("outliers", "offset and outliers"):
        rows = rng.choice(m, size=int(rng.integers(1, min(3, m - 1) + 1)), replace=False)
        cols = slice(None) if rng.random() < 0.5 else [int(rng.integers(d))]
        for r in rows:
            X[r, cols] = rng.choice([-1.0, 1.0]) * far * (1.0 + 10.0 * rng.random()) \
                * (10.0 if kind == "offset and outliers" else 1.0)
    if kind == "far rows":
        rows = rng.choice(m, size=int(min(m - 1, rng.integers(2, 5))), replace=False)
        v = rng.normal(size=d)
        X[rows] += far * v / np.linalg.norm(v)
    n = int(rng.integers(1, 6))
    pick = rng.integers(0, m, size=n)
    Z = X[pick] + rng.normal(size=(n, d)) * 10.0 ** rng.uniform(-6, 0)
    Z = np.vstack([Z, far * rng.normal(size=(1, d))]
                  + ([X[pick[:2]]] if rng.random() < 0.5 else []))
    return X, Z


@st.composite
def far_data(draw, max_m=24, max_d=6, exponents=(6.0, 16.0)):
    """``(X, Z, kind)`` of :func:`far_rows`: 3 to ``max_m`` rows, 1 to ``max_d`` features,
    ``kind`` in :data:`FAR_KINDS`, the far distance ``10^e`` with ``e`` in ``exponents``."""
    seed = draw(st.integers(0, 2**32 - 1))
    m = draw(st.integers(3, max_m))
    d = draw(st.integers(1, max_d))
    kind = draw(st.sampled_from(FAR_KINDS))
    e = draw(st.floats(*exponents))
    return (*far_rows(seed, m, d, kind, e), kind)
