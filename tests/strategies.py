"""Hypothesis strategies shared by every family's tests.

Problems are drawn as a seed plus shape/hyperparameter choices and generated with
NumPy, which keeps examples cheap while covering: m from 2 up, d < m and d > m,
duplicated points, one class much larger than the other, and kernels linear, RBF,
polynomial and precomputed.
"""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

import refmodels as rm

KERNELS = ("linear", "rbf", "poly", "precomputed")


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
    k = rm.kernels.RBF(gamma=0.5 / X.shape[1])
    return rm.kernels.Precomputed(), k.gram(X)


@st.composite
def binary_data(draw, min_m=2, max_m=40, max_d=12, kernels=KERNELS):
    """``(X, y, kernel, X_raw)`` for a binary problem; ``X`` is the Gram for precomputed."""
    seed = draw(st.integers(0, 2**32 - 1))
    m = draw(st.integers(min_m, max_m))
    d = draw(st.integers(1, max_d))
    kname = draw(st.sampled_from(kernels))
    imbalance = draw(st.sampled_from([0.5, 0.5, 0.2, 0.9]))
    duplicates = draw(st.booleans())
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
    kernel, Xk = make_kernel(kname, X, rng)
    return Xk, y, kernel, X


def random_binary(seed, m=30, d=5, kernel="linear"):
    """A deterministic instance for example-based tests."""
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(m) < 0.5, 1, -1)
    y[0], y[-1] = 1, -1
    X = rng.normal(size=(m, d)) + 0.8 * y[:, None] * rng.normal(size=d)[None, :]
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
