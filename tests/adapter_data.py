"""Shared by the adapter tests (``tests/test_adapters.py``, scikit-learn and ``fast``
estimators) and the model-file tests (``tests/test_adapters_files.py``, LIBSVM, LIBLINEAR
and LIBODM files): five binary real data sets, the fit and the certificate of a foreign
solution, and one BLAS thread for the whole module."""
from __future__ import annotations

import functools
import warnings

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_digits, load_iris, load_wine
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import MinMaxScaler, StandardScaler

import refmodels as rm
from refmodels.adapters import from_sklearn

DATASETS = ("breast_cancer", "iris", "wine", "digits", "heart")
#: the certificates' tolerance: a converged solution holds at it, an early-stopped one fails
TOL = 1e-6


@pytest.fixture(autouse=True, scope="module")
def _one_blas_thread():
    """One thread (BLAS, OpenMP): the certificates' eigendecompositions are small (m <= 569),
    and threaded BLAS on such small matrices made this file several times slower
    (validation/decisions.md)."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        yield


@functools.lru_cache(maxsize=None)
def data(name):
    """Binary, scaled real data: ``(X, y)`` with the original labels."""
    if name == "breast_cancer":
        X, y = load_breast_cancer(return_X_y=True)
        return StandardScaler().fit_transform(X), y
    if name == "iris":                       # versicolor vs virginica (not separable)
        X, y = load_iris(return_X_y=True)
        keep = y > 0
        return MinMaxScaler().fit_transform(X[keep]), y[keep]
    if name == "wine":
        X, y = load_wine(return_X_y=True)
        keep = y < 2
        return StandardScaler().fit_transform(X[keep]), y[keep]
    if name == "digits":                     # 3 vs 8
        X, y = load_digits(return_X_y=True)
        keep = (y == 3) | (y == 8)
        return MinMaxScaler().fit_transform(X[keep]), y[keep]
    X, y = rm.datasets.load("heart")         # standardised by the loader
    return X, y


def fit(est, X, y):
    """``est.fit(X, y)``, the library's warnings (ConvergenceWarning for early stops) silenced."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.simplefilter("ignore", UserWarning)
        return est.fit(X, y)


def certificate(est, X, y, tol):
    prob, sol = from_sklearn(est, X, y)
    return prob.certify(sol, tol=tol, reference=False)


def pm1(y):
    """Labels as -1/+1 (the larger sorted label +1, as SPEC)."""
    return np.where(y == np.unique(y)[1], 1.0, -1.0)
