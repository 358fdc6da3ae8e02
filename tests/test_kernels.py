"""Kernels, Gram matrices and the empirical kernel map (SPEC notation section)."""
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, strategies as st
from sklearn.metrics.pairwise import polynomial_kernel, rbf_kernel

import refmodels as rm
from strategies import scales
from refmodels.kernels import EIG_CUTOFF, empirical_map


@given(seed=st.integers(0, 2**31), m=st.integers(1, 30), d=st.integers(1, 8),
       kind=st.sampled_from(["linear", "rbf", "poly"]), scale=scales())
def test_empirical_map_reproduces_gram(seed, m, d, kind, scale):
    rng = np.random.default_rng(seed)
    X = scale.features(rng.normal(size=(m, d)), rng)
    k = {"linear": rm.kernels.Linear(), "rbf": rm.kernels.RBF(gamma=0.7),
         "poly": rm.kernels.Polynomial(degree=2, gamma=0.5, coef0=1.0)}[kind]
    G = k.gram(X)
    F = empirical_map(G)
    assert F.shape[0] == m and F.shape[1] <= m
    lam_max = np.linalg.eigvalsh(G)[-1]
    # dropping eigenvalues below 1e-12 lambda_max changes G by at most m * 1e-12 lambda_max
    assert np.max(np.abs(F @ F.T - G)) <= 1e-9 * max(lam_max, 1.0)


@given(seed=st.integers(0, 2**31), m=st.integers(2, 30), d=st.integers(1, 8),
       scale=scales(), gamma=st.sampled_from([1e-6, 1e-3, 0.1, 1.0, 3.0]))
def test_rbf_entries_are_accurate_at_every_scale(seed, m, d, scale, gamma):
    """Both layers' RBF Gram against the distances taken difference first
    (``sum (x_i - x_j)^2``, no cancellation) at the scales every family test draws: the
    expansion ``||x||^2 + ||z||^2 - 2 x^T z`` on uncentred features (offset 1e6) put errors
    of 2e-4 into entries near 1, and the two layers' errors differed, so a certified fast
    point failed against the reference. (Far rows, and the tight bound: test_kernel_scales.)"""
    from fast._kernels import RowSource, build_gram

    rng = np.random.default_rng(seed)
    X = scale.features(rng.normal(size=(m, d)), rng)
    D = ((X[:, None, :] - X[None, :, :]) ** 2).sum(axis=2)
    exact = np.exp(-gamma * D)
    # a loose bound here (the spread of the data): test_kernel_scales states the tight one
    spread = float(((X - X.mean(axis=0)) ** 2).sum(axis=1).max())
    bound = 1e-13 * (1.0 + gamma * spread)
    k = rm.kernels.RBF(gamma=gamma)
    assert np.max(np.abs(k.gram(X) - exact)) <= bound
    prob = rm.SVM(X, np.where(np.arange(m) % 2 == 0, 1, -1), kernel=k)
    assert np.max(np.abs(build_gram(prob) - exact)) <= bound
    rows = RowSource(k, X, 1.0)                 # the kernel-row cache path
    assert np.max(np.abs(rows.times(np.eye(m)[0]) - exact[:, 0])) <= bound


def test_empirical_map_drops_small_eigenvalues():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 3))
    F = empirical_map(X @ X.T)          # rank 3
    assert F.shape[1] == 3
    assert empirical_map(np.zeros((4, 4))).shape == (4, 1)
    assert EIG_CUTOFF == 1e-12


def test_kernels_match_sklearn():
    rng = np.random.default_rng(1)
    X, Z = rng.normal(size=(7, 3)), rng.normal(size=(5, 3))
    assert np.allclose(rm.kernels.RBF(gamma=0.3).cross(X, Z), rbf_kernel(X, Z, gamma=0.3))
    assert np.allclose(rm.kernels.Polynomial(3, 0.5, 1.0).cross(X, Z),
                       polynomial_kernel(X, Z, degree=3, gamma=0.5, coef0=1.0))
    assert np.allclose(rm.kernels.Linear().cross(sp.csr_matrix(X), Z), X @ Z.T)
    assert np.allclose(rm.kernels.RBF(0.3).diag(X), 1.0)
    G = rm.kernels.RBF(0.3).gram(X)
    assert np.array_equal(G, G.T)


def test_linear_feature_matrix_is_X_and_precomputed_cross():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(10, 4))
    y = np.where(X[:, 0] > 0, 1, -1)
    y[0], y[1] = 1, -1
    prob = rm.SVM(X, y)
    assert prob.F is prob.X
    G = rm.kernels.RBF(0.5).gram(X)
    pre = rm.SVM(G, y, kernel=rm.kernels.Precomputed())
    rbf = rm.SVM(X, y, kernel=rm.kernels.RBF(0.5))
    a, b = pre.solve(), rbf.solve()
    Z = rng.normal(size=(3, 4))
    assert np.allclose(pre.decision_function(a, rm.kernels.RBF(0.5).cross(Z, X)),
                       rbf.decision_function(b, Z), atol=1e-6)
    with pytest.raises(ValueError, match="columns"):
        pre.decision_function(a, np.ones((3, 4)))


def test_construction_is_lazy():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(50, 3))
    y = np.where(X[:, 0] > 0, 1, -1)
    ws = rm.Workspace()
    with rm.workspace.using(ws):
        rm.SVM(X, y, kernel=rm.kernels.RBF(1.0))
    assert len(ws) == 0


@pytest.mark.parametrize("make,needle", [
    (lambda: rm.kernels.RBF(gamma=0), "gamma"),
    (lambda: rm.kernels.RBF(gamma=float("nan")), "gamma"),
    (lambda: rm.kernels.Polynomial(degree=0), "degree"),
    (lambda: rm.kernels.Polynomial(degree=2.5), "degree"),
    (lambda: rm.kernels.Polynomial(degree=2, coef0=-1), "coef0"),
    (lambda: rm.kernels.Polynomial(degree=2, gamma=-1), "gamma"),
    (lambda: rm.kernels.make_kernel("sigmoid"), "kernel"),
])
def test_kernel_parameter_errors(make, needle):
    with pytest.raises(ValueError, match=needle):
        make()


def test_precomputed_not_psd_is_refused():
    G = np.array([[1.0, 2.0], [2.0, 1.0]])        # eigenvalues 3 and -1
    with pytest.raises(ValueError, match="positive semidefinite"):
        rm.SVM(G, [1, -1], kernel=rm.kernels.Precomputed())


def test_fast_does_not_import_cvxpy():
    code = ("import sys, numpy as np, refmodels as rm, fast\n"
            "X = np.random.default_rng(0).normal(size=(20, 3)); y = np.sign(X[:, 0]); y[:2] = [1, -1]\n"
            "import refmodels.svm, refmodels.odm, refmodels.odml\n"
            "assert 'cvxpy' not in sys.modules, 'refmodels imported cvxpy at import time'\n"
            "fast.solve(rm.SVM(X, y, C=1.0))\n"
            "assert 'cvxpy' not in sys.modules, 'fast imported cvxpy'\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr


def test_linear_diag_of_sparse_rows():
    """The linear kernel's diagonal ``||x_i||^2`` of CSR rows, read from the stored entries:
    empty rows (first, inner, last) give 0; duplicated entries (a non-canonical CSR, as
    built from triplets) are summed before squaring; other formats and dense agree."""
    rng = np.random.default_rng(3)
    dense = rng.normal(size=(9, 6)) * (rng.random((9, 6)) < 0.4)
    dense[[0, 4, 8]] = 0.0
    want = np.einsum("ij,ij->i", dense, dense)
    k = rm.kernels.Linear()
    for X in (sp.csr_matrix(dense), sp.csc_matrix(dense), dense):
        np.testing.assert_allclose(k.diag(X), want, rtol=1e-15, atol=0)
    # the entry (1, 2) stored twice: 1.5 + 0.5 = 2, squared 4 (not 1.5^2 + 0.5^2)
    dup = sp.csr_matrix((np.array([1.5, 0.5, 3.0]), np.array([2, 2, 0]),
                         np.array([0, 0, 2, 3])), shape=(3, 4))
    assert not dup.has_canonical_format
    np.testing.assert_array_equal(k.diag(dup), [0.0, 4.0, 9.0])
    # unsorted rows (as diags @ X leaves them): the same norms, the caller's arrays untouched
    uns = sp.csr_matrix((np.array([1.0, 2.0, 3.0]), np.array([3, 0, 1]),
                         np.array([0, 2, 3])), shape=(2, 4))
    before = uns.indices.copy()
    np.testing.assert_array_equal(k.diag(uns), [5.0, 9.0])
    np.testing.assert_array_equal(uns.indices, before)
    # read in blocks of rows (a few stored entries each here): the same norms
    big = sp.random(300, 50, density=0.1, format="csr", random_state=1)
    mixed = sp.csr_matrix((np.r_[big.data, 0.5], np.r_[big.indices, big.indices[-1]],
                           np.r_[big.indptr[:-1], big.indptr[-1] + 1]), shape=big.shape)
    for Z in (big, (sp.diags(rng.random(300)) @ big).tocsr(), mixed):
        want = (Z.toarray() ** 2).sum(1)
        np.testing.assert_allclose(k.diag(Z), want, rtol=1e-14)
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(rm.kernels, "SQNORM_BLOCK", 7)
            np.testing.assert_allclose(k.diag(Z), want, rtol=1e-14)
    np.testing.assert_array_equal(k.diag(sp.csr_matrix((5, 3))), np.zeros(5))
