"""The shared kernel rows / LRU cache (fast/_kernels.py) and the one SMO (fast/_smo.py):
kernel rows against ``Kernel.cross``, cache hits, misses and evictions, the working-set
selection against a brute-force choice, shrinking that must revisit shrunk variables,
and the SVM with intercept (SPEC §1): cache counts, LIBSVM, statuses and the SMO's own
options (against the reference, CSR, cache path, warm start: tests/test_contract.py)."""
import warnings

import numpy as np
import pytest
from numba import njit
from sklearn.exceptions import ConvergenceWarning

import fast
import refmodels as rm
from contract import rel
from fast import _kernels as K
from fast import _smo, _smo_newton, _smo_steps
from fast import svm as fast_svm
from strategies import random_binary

KERNEL_OBJECTS = [rm.kernels.Linear(), rm.kernels.RBF(gamma=0.3),
                  rm.kernels.Polynomial(degree=3, gamma=0.5, coef0=1.0),
                  rm.kernels.Polynomial(degree=2, gamma=2.0, coef0=0.0)]


# ---- fast/_kernels.py ---------------------------------------------------------------------
@pytest.mark.parametrize("kernel", KERNEL_OBJECTS, ids=repr)
def test_kernel_row_matches_cross(kernel):
    X = np.random.default_rng(0).normal(size=(9, 4))
    Kfull = kernel.cross(X, X)
    kind, gamma, degree, coef0 = K.kernel_params(kernel)
    Xd = K.dense_data(X)
    sq = K.sq_norms(Xd)
    out = np.empty(9)
    for i in range(9):
        K.kernel_row(kind, gamma, degree, coef0, Xd, sq, i, out)
        np.testing.assert_allclose(out, Kfull[i], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(K.gram(kernel, X), kernel.gram(X), rtol=1e-12, atol=1e-12)


def test_kernel_row_precomputed_and_sparse():
    X = np.random.default_rng(1).normal(size=(6, 3))
    G = rm.kernels.RBF(0.5).gram(X)
    params = K.kernel_params(rm.kernels.Precomputed())
    assert params[0] == K.PRECOMPUTED
    out = np.empty(6)
    K.kernel_row(*params, G, np.zeros(6), 4, out)
    np.testing.assert_array_equal(out, G[4])
    np.testing.assert_allclose(K.gram(rm.kernels.Precomputed(), G), G)
    import scipy.sparse as sp
    Xs = sp.csr_matrix(np.where(np.abs(X) > 0.7, X, 0.0))
    Xd = K.dense_data(Xs)
    assert Xd.flags.c_contiguous and Xd.dtype == np.float64
    np.testing.assert_array_equal(Xd, Xs.toarray())
    with pytest.raises(ValueError, match="kernel"):
        K.kernel_params(object())


def test_make_cache_sizes_and_fits_in_memory():
    slots, slot_of, owner, last_used = K.make_cache(100, 1.0)
    assert slots.shape == (100, 100)                       # 1 MB holds 1310 rows: capped at m
    slots, *_ = K.make_cache(10_000, 1.0)
    assert slots.shape == (1 * 2**20 // 80_000, 10_000)    # 13 rows
    slots, slot_of, owner, last_used = K.make_cache(50, 1e-9)
    assert slots.shape == (2, 50)                          # at least two slots
    assert np.all(slot_of == -1) and np.all(owner == -1) and slot_of.dtype == np.int64
    assert K.fits_in_memory(100, 8 * 100 * 100 / 2**20)
    assert not K.fits_in_memory(101, 8 * 100 * 100 / 2**20)


def test_lru_cache_hits_misses_evictions():
    kernel = rm.kernels.RBF(gamma=0.2)
    X = np.random.default_rng(2).normal(size=(8, 3))
    Kfull = kernel.gram(X)
    params = K.kernel_params(kernel)
    Xd = K.dense_data(X)
    sq = K.sq_norms(Xd)
    cache = K.make_cache(8, 3 * 8 * 8 / 2**20)             # exactly three slots
    slots, slot_of, owner, last_used = cache
    assert slots.shape[0] == 3
    sequence = [0, 1, 2, 0, 3, 4, 0, 1, 5, 5, 2]
    lru = []                                                # model: most recent last
    for tick, i in enumerate(sequence, start=1):
        hit_expected = i in lru
        before = slot_of[i]
        row = K.get_row(i, *params, Xd, sq, cache, tick)
        np.testing.assert_allclose(row, Kfull[i], rtol=1e-12, atol=1e-13)
        if hit_expected:
            assert slot_of[i] == before                     # a hit keeps its slot
            lru.remove(i)
        elif len(lru) == 3:
            victim = lru.pop(0)                             # least recently used leaves
            assert slot_of[victim] == -1
        lru.append(i)
        # consistency of the two index arrays
        assert sorted(int(o) for o in owner if o >= 0) == sorted(lru)
        for r in lru:
            assert owner[slot_of[r]] == r
            np.testing.assert_allclose(slots[slot_of[r]], Kfull[r], rtol=1e-12, atol=1e-13)


# ---- working-set selection -----------------------------------------------------------------
def _brute_force_pair(Q, s, u, alpha, g):
    """Independent WSS3: i maximises -s_t g_t over the feasible 'up' moves; j gives the
    largest exact decrease of f along the feasible direction d = s_i e_i - s_j e_j."""
    n = len(alpha)
    up = [t for t in range(n) if (alpha[t] < u[t] if s[t] > 0 else alpha[t] > 0)]
    i = max(up, key=lambda t: (-s[t] * g[t], t))
    best, jbest = 0.0, -1
    for j in range(n):
        # moving alpha_j by -s_j must stay in the box
        if not (alpha[j] > 0 if s[j] > 0 else alpha[j] < u[j]) or j == i:
            continue
        d = np.zeros(n)
        d[i], d[j] = s[i], -s[j]
        slope = d @ g
        if slope >= 0:
            continue
        curv = max(d @ Q @ d, 1e-12)
        dec = slope**2 / (2 * curv)
        if dec > best + 1e-12:
            best, jbest = dec, j
    viol = max(-s[t] * g[t] for t in up) + max(
        s[t] * g[t] for t in range(n) if (alpha[t] > 0 if s[t] > 0 else alpha[t] < u[t]))
    return i, jbest, viol


def _assert_same_choice(chosen, brute):
    """The solver's ``(i, j, violation)`` is the brute-force WSS3 choice."""
    (i, j, viol), (bi, bj, bviol) = chosen, brute
    assert abs(viol - bviol) <= 1e-12
    assert i == bi
    if bj < 0:
        assert j < 0 or viol <= 0
    else:
        assert j == bj


@pytest.mark.parametrize("seed", range(12))
def test_working_set_selection_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    m = 7
    X = rng.normal(size=(m, 2))
    Kfull = rm.kernels.RBF(0.7).gram(X)
    s = np.where(rng.random(m) < 0.5, 1.0, -1.0)
    s[0], s[1] = 1.0, -1.0
    u = np.full(m, 2.0)
    alpha = rng.choice([0.0, 2.0, 0.5, 1.3], size=m)          # bounds and free values mixed
    p = rng.normal(size=m)
    Q = s[:, None] * Kfull * s[None, :]
    g = Q @ alpha + p
    source = K.RowSource(gram=Kfull)
    pt = np.arange(m, dtype=np.int64)
    stats = np.zeros(7, dtype=np.int64)
    chosen = _smo.wss_variables(pt, s, p, u, alpha, source.diag, source.src, stats)
    _assert_same_choice(chosen, _brute_force_pair(Q, s, u, alpha, g))


@pytest.mark.parametrize("seed", range(16))
def test_working_set_selection_on_two_copies_per_point_matches_brute_force(seed):
    """The SVMm layout (two variables per point, ``s = [y; -y]``-like signs, boxes per copy,
    some copies pinned at u = 0): the per-point scans of the solver pick the pair that
    WSS3 over all 2m variables picks."""
    rng = np.random.default_rng(100 + seed)
    m = 6
    X = rng.normal(size=(m, 2))
    Kfull = rm.kernels.RBF(0.7).gram(X)
    y = np.where(rng.random(m) < 0.5, 1.0, -1.0)
    y[0], y[1] = 1.0, -1.0
    order = rng.permutation(2 * m) if seed % 2 else np.arange(2 * m)   # any order of copies
    pt = np.concatenate([np.arange(m), np.arange(m)])[order]
    s = np.concatenate([y, -y])[order]
    u = np.concatenate([np.full(m, 2.0), np.full(m, 1.0)])[order]
    u[rng.random(2 * m) < 0.15] = 0.0                                # pinned copies
    alpha = rng.choice([0.0, 1.0, 0.5, 0.3], size=2 * m) * u        # bounds and free values
    p = rng.normal(size=2 * m)
    Q = s[:, None] * Kfull[np.ix_(pt, pt)] * s[None, :]
    g = Q @ alpha + p
    source = K.RowSource(gram=Kfull)
    chosen = _smo.wss_variables(pt.astype(np.int64), s, p, u, alpha, source.diag, source.src,
                                np.zeros(7, np.int64))
    _assert_same_choice(chosen, _brute_force_pair(Q, s, u, alpha, g))


def test_working_set_selection_signs_on_a_hand_made_state():
    # two variables, s = (+1, -1), both at 0, gradients -1: I_up = {0} (s=+1 may increase),
    # I_low = {1} (s=-1 may increase); the pair (0, 1) violates by 2.
    G = np.array([[1.0, 0.0], [0.0, 1.0]])
    s, u = np.array([1.0, -1.0]), np.array([1.0, 1.0])
    alpha, g = np.zeros(2), np.array([-1.0, -1.0])
    src = K.RowSource(gram=G)
    pt = np.arange(2, dtype=np.int64)
    p = g.copy()                                     # (at alpha = 0, G = p)
    i, j, viol = _smo.wss_variables(pt, s, p, u, alpha, src.diag, src.src,
                                    np.zeros(7, np.int64))
    assert (i, j) == (0, 1) and viol == pytest.approx(2.0)
    # both at their upper bound: s=+1 cannot increase, s=-1 cannot increase: no pair.
    p = g - (s[:, None] * G * s[None, :]) @ np.ones(2)   # the same gradient at alpha = 1
    i, j, viol = _smo.wss_variables(pt, s, p, u, np.ones(2), src.diag, src.src,
                                    np.zeros(7, np.int64))
    assert viol == pytest.approx(0.0) and j == -1 or viol <= 0


# ---- Newton step on the free set ----------------------------------------------------------
# (the factorisation and the solve have no CPython entry point: called through compiled code)
@njit
def _cholesky_from_compiled(M, n):
    return _smo_newton._cholesky(M, n)


@njit
def _chol_solve_from_compiled(L, n, x):
    _smo_newton._chol_solve(L, n, x)


def test_cholesky_and_solve_match_numpy_and_refuse_singular():
    rng = np.random.default_rng(3)
    B = rng.normal(size=(30, 30))
    Msym = B @ B.T + 0.1 * np.eye(30)
    M = Msym.copy()
    assert _cholesky_from_compiled(M, 30)
    L = np.tril(M)
    np.testing.assert_allclose(L @ L.T, Msym, rtol=1e-12, atol=1e-10)
    x = rng.normal(size=30)
    z = x.copy()
    _chol_solve_from_compiled(M, 30, z)
    np.testing.assert_allclose(Msym @ z, x, rtol=1e-9, atol=1e-9)
    low_rank = B[:, :5] @ B[:, :5].T                     # rank 5: refused, not garbage
    assert not _cholesky_from_compiled(low_rank.copy(), 30)


# ---- compile options ----------------------------------------------------------------------
def test_helpers_without_a_python_entry_point_are_private():
    """The SMO's helpers compiled without a CPython entry point (``no_cpython_wrapper``, a
    sixth of the SMO's cold compile; a call from Python would crash the interpreter) are
    private, and none of the functions Python calls is among them."""
    called_from_python = {_smo.smo_solve, _smo.wss_variables, _smo_steps.intercept_from_gradient,
                          K.kernel_row, K.get_row, K.exp_nonpositive, K._rows_times,
                          K._rbf_gram}
    without = set()
    for mod in (_smo, _smo_steps, _smo_newton, K):
        for name, f in vars(mod).items():
            if getattr(f, "targetoptions", {}).get("no_cpython_wrapper"):
                without.add(f)
                assert name.startswith("_") or f is K.source_row, name
    assert not without & called_from_python
    assert len(without) >= 14           # (the SMO's helpers: 15 and source_row)


@pytest.mark.parametrize("kernel,eps", [(rm.kernels.RBF(0.3), 0.5), (rm.kernels.RBF(1.0), 0.0),
                                        (rm.kernels.Linear(), 0.3)])
def test_newton_step_reaches_the_plain_smo_optimum(kernel, eps):
    """SVMm's layout (two copies per point): the SMO with its Newton steps on the free set
    stops at the same dual optimum as without them (the SMO alone decides the stop)."""
    X, y, _, _ = random_binary(5, m=120, d=4, kernel="rbf")
    Kfull = np.asarray(kernel.gram(X), dtype=np.float64)
    m = len(y)
    src = K.RowSource(gram=Kfull)
    pt = np.concatenate([np.arange(m), np.arange(m)]).astype(np.int64)
    s = np.concatenate([y, -y]).astype(np.float64)
    p = np.concatenate([-np.ones(m), np.full(m, 1.0 + eps)])
    u = np.concatenate([np.full(m, 2.0), np.full(m, 1.0)])
    Q = s[:, None] * Kfull[np.ix_(pt, pt)] * s[None, :]
    out = {}
    for newton in (False, True):
        z = np.zeros(2 * m)
        stats = np.zeros(7, dtype=np.int64)
        it, hit, viol, G = _smo.smo_solve(pt, s, p, u, src.diag, z, True, 1e-9, 10**7, True,
                                          src.src, stats, newton)
        assert not hit and viol <= 1e-9
        np.testing.assert_allclose(G, Q @ z + p, rtol=0, atol=1e-9)    # the returned gradient
        assert abs(s @ z) <= 1e-10 and np.all(z >= 0) and np.all(z <= u)
        out[newton] = (0.5 * z @ Q @ z + p @ z, stats[_smo_steps._POLISH])
    assert out[False][1] == 0
    assert rel(out[True][0], out[False][0]) <= 1e-9
    if eps > 0 and not kernel.is_linear:
        assert out[True][1] >= 1                       # the Newton step was taken


# ---- shrinking --------------------------------------------------------------------------
def _full_violation(prob, alpha):
    y = prob.y
    g = y * (prob.gram @ (y * alpha)) - 1.0
    up = ((y > 0) & (alpha < prob.C)) | ((y < 0) & (alpha > 0))
    low = ((y > 0) & (alpha > 0)) | ((y < 0) & (alpha < prob.C))
    return np.max(-y[up] * g[up]) - np.min(-y[low] * g[low])


@pytest.mark.parametrize("seed", [7, 13, 22])
def test_shrunk_variables_are_revisited(seed):
    """On these instances shrinking removes variables that violate the KKT conditions
    later: the solver must unshrink, reconstruct their gradient and resume (counted in
    info). A solver that never revisited them would stop with a larger true violation.
    (The SMO alone: its Newton polish would end these runs before the unshrinking.)"""
    X, y, k, _ = random_binary(seed, m=80, d=3, kernel="linear")
    prob = rm.SVM(X, y, C=10.0, kernel=k, fit_intercept=True)
    tol = 1e-3
    on = fast_svm.solve_svm_with_intercept(prob, tol=tol, polish=False)
    off = fast_svm.solve_svm_with_intercept(prob, tol=tol, shrinking=False, polish=False)
    assert on.info["shrunk"] > 0 and on.info["resumed_after_unshrink"] >= 1
    assert on.info["gradient_reconstructions"] >= 2
    assert off.info["shrunk"] == 0 and off.info["gradient_reconstructions"] == 0
    for sol in (on, off):
        assert _full_violation(prob, sol.variables["alpha"]) <= tol * (1 + 1e-9)
        assert abs(sol.info["violation"] - _full_violation(prob, sol.variables["alpha"])) < 1e-9
    # at the default tolerance both certify and agree
    on, off = (fast_svm.solve_svm_with_intercept(prob, shrinking=sh) for sh in (True, False))
    assert rel(on.objective, off.objective) <= 1e-8
    assert prob.certify(on).ok


# ---- SVM with intercept (against the reference, CSR, cache, warm start: test_contract.py) --
def test_svm_intercept_cache_path_counts_and_agrees_with_gram_path():
    X, y, k, _ = random_binary(5, m=120, d=3, kernel="rbf")
    prob = rm.SVM(X, y, C=3.0, kernel=k, fit_intercept=True)
    lazy = fast_svm.solve_svm_with_intercept(prob)          # Gram not built yet: rows on demand
    assert lazy.info["kernel_path"] == "cache" and lazy.info["cache_slots"] == 120
    prob.gram               # built by another call: the SMO keeps its own rows (same run)
    again = fast_svm.solve_svm_with_intercept(prob)
    assert again.info["kernel_path"] == "cache"
    np.testing.assert_array_equal(again.coef, lazy.coef)
    # the Gram path: the same kernel given as a precomputed Gram
    g = fast_svm.solve_svm_with_intercept(
        rm.SVM(prob.gram, y, C=3.0, kernel=rm.kernels.Precomputed(), fit_intercept=True))
    c = fast_svm.solve_svm_with_intercept(prob, cache_size=4 * 8 * 120 / 2**20)
    assert rel(lazy.objective, g.objective) <= 1e-9
    assert g.info["kernel_path"] == "gram" and c.info["kernel_path"] == "cache"
    assert c.info["cache_slots"] == 4
    assert c.info["cache_misses"] > 4                       # evictions happened
    assert c.info["cache_hits"] + c.info["cache_misses"] == c.info["row_requests"]
    assert rel(c.objective, g.objective) <= 1e-9
    assert prob.certify(c).ok


def test_svm_intercept_matches_libsvm():
    from sklearn.svm import SVC

    X, y, _, _ = random_binary(7, m=70, d=4)
    prob = rm.SVM(X, y, C=2.0, kernel=rm.kernels.RBF(0.4), fit_intercept=True)
    sol = fast_svm.solve_svm_with_intercept(prob)
    svc = SVC(C=2.0, kernel="rbf", gamma=0.4, tol=1e-12).fit(X, y)
    coef = np.zeros(len(y))
    coef[svc.support_] = svc.dual_coef_.ravel()
    np.testing.assert_allclose(sol.coef, coef, atol=1e-6)
    assert sol.intercept == pytest.approx(svc.intercept_[0], abs=1e-6)


def test_linear_kernel_reports_w():
    X, y, k, _ = random_binary(8, m=30, d=3)
    prob = rm.SVM(X, y, C=1.0, fit_intercept=True)
    sol = fast_svm.solve_svm_with_intercept(prob)
    np.testing.assert_allclose(sol.variables["w"], X.T @ sol.coef, atol=1e-12)
    assert sol.variables["b"] == sol.intercept
    prob_rbf = rm.SVM(X, y, C=1.0, kernel="rbf", fit_intercept=True)
    assert "w" not in fast_svm.solve_svm_with_intercept(prob_rbf).variables


def test_max_iter_status_and_warning():
    X, y, k, _ = random_binary(9, m=60, d=3, kernel="rbf")
    prob = rm.SVM(X, y, C=5.0, kernel=k, fit_intercept=True)
    with pytest.warns(ConvergenceWarning, match=r"tol=1\.000e-08"):
        sol = fast_svm.solve_svm_with_intercept(prob, max_iter=3)
    assert sol.status == "max_iter" and sol.n_iter == 3
    assert sol.info["violation"] > 1e-8
    assert sol.objective == pytest.approx(prob.primal_value(*prob._primal_point(sol)))


def test_reproducible_and_warm_start():
    X, y, k, _ = random_binary(10, m=50, d=3, kernel="rbf")
    prob = rm.SVM(X, y, C=2.0, kernel=k, fit_intercept=True)
    a = fast_svm.solve_svm_with_intercept(prob)
    b = fast_svm.solve_svm_with_intercept(prob)
    np.testing.assert_array_equal(a.coef, b.coef)
    assert a.intercept == b.intercept and a.n_iter == b.n_iter
    # a warm start off the equality constraint is moved onto it, not rejected
    a0 = np.full(50, 0.5)
    w2 = fast_svm.solve_svm_with_intercept(prob, warm_start={"alpha": a0})
    assert abs(w2.objective - a.objective) <= 1e-8 * (1 + a.objective)


def test_bad_arguments():
    X, y, k, _ = random_binary(11, m=20, d=2)
    prob = rm.SVM(X, y, C=1.0, fit_intercept=True)
    for bad in (0, -1, np.inf, "big"):
        with pytest.raises(ValueError, match="cache_size"):
            fast_svm.solve_svm_with_intercept(prob, cache_size=bad)
    with pytest.raises(ValueError, match="warm_start"):
        fast_svm.solve_svm_with_intercept(prob, warm_start={"alpha": np.full(20, 1.5)})
    with pytest.raises(ValueError, match="warm_start"):
        fast_svm.solve_svm_with_intercept(prob, warm_start={"alpha": -np.ones(20)})
    with pytest.raises(ValueError, match="warm_start"):
        fast_svm.solve_svm_with_intercept(prob, warm_start={"alpha": np.ones(3)})
    with pytest.raises(ValueError, match="shrinking"):
        fast_svm.solve_svm_with_intercept(prob, shrinking="yes")


# ---- Newton polish between chunks (ill-conditioned duals) ---------------------------------
def _crawling_instance(seed, family):
    """Linear kernel in 2-D with a large box: the SMO alone needs > 10^6 iterations."""
    rng = np.random.default_rng(seed)
    m = 200
    X = rng.normal(size=(m, 2))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=m) > 0, 1, -1)
    if family == "SVM":
        return rm.SVM(X, y, C=1e4, fit_intercept=True)
    return rm.SVMm(X, y, C1=1e4, C2=1e3, eps=0.2)


@pytest.mark.parametrize("family", ["SVM", "SVMm"])
def test_polish_ends_the_slow_tail_and_certifies(family):
    """With the default tolerance the SMO runs in chunks of max(20 n, 20000) iterations and
    an active-set Newton step on the free set follows a chunk that did not finish. On this
    instance plain SMO crawls (checked: over 10^6 iterations, see below); with the polish
    the run certifies in far fewer iterations, and the equality constraint still holds."""
    prob = _crawling_instance(0, family)
    sol = fast.solve(prob, method="smo")       # SVMm linear: 'auto' is the interior point
    assert sol.status == "optimal"
    # the crawl is cut by the polish: every chunk that ended short of the tolerance was
    # offered to it, and one was kept unless the SMO finished on its own
    assert sol.info["chunks_short"] == 0 or sol.info["n_polish"] >= 1
    assert sol.n_iter < 300_000
    assert prob.certify(sol).ok, str(prob.certify(sol))
    a = sol.variables["alpha"] - sol.variables.get("beta", 0.0)
    assert abs(float(prob.y @ a)) <= 1e-9 * (1.0 + float(np.sum(np.abs(a))))
    # the plain SMO (polish=False) at a looser tolerance already needs many more iterations
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        plain = fast.solve(prob, method="smo", tol=1e-6, polish=False, max_iter=200_000)
    assert plain.n_iter > sol.n_iter


def test_polish_off_with_explicit_tol_and_bad_value():
    X, y, k, _ = random_binary(4, m=40, d=3, kernel="rbf")
    prob = rm.SVM(X, y, C=1.0, kernel=k, fit_intercept=True)
    assert fast.solve(prob, tol=1e-3).info["n_polish"] == 0
    with pytest.raises(ValueError, match="polish"):
        fast.solve(prob, polish="yes")


def test_vectorised_exp_matches_numpy():
    """fast._kernels.exp_nonpositive (used by the RBF kernel rows) against NumPy's exp:
    relative error <= 4 ulp over the whole range, exact at 0, 0 below -708, -inf -> 0."""
    rng = np.random.default_rng(0)
    x = np.concatenate([-rng.random(20000) * s for s in (1e-8, 1e-3, 1.0, 30.0, 700.0)]
                       + [np.array([0.0, -0.0, -1e-300, -708.0, -np.log(2.0), -1.0])])
    out = np.empty_like(x)
    K.exp_nonpositive(x, out, np.empty_like(x))
    ref = np.exp(x)
    assert np.max(np.abs(out - ref) / ref) <= 4 * np.finfo(float).eps
    assert out[x == 0.0].tolist() == [1.0, 1.0]
    tiny = np.array([-708.5, -745.0, -1e308, -np.inf])
    o2 = np.empty_like(tiny)
    K.exp_nonpositive(tiny, o2, np.empty_like(tiny))
    assert np.all(o2 == 0.0)


# ---------------------------------------------------------------------------------------
# the round-off floor of the SMO's gradient, and the refinement relative to the objective
# (fast/_smo_run.py run(roundoff=..., gap_target=...))
# ---------------------------------------------------------------------------------------
@pytest.mark.slow
def test_smo_stops_at_the_roundoff_floor_of_its_gradient():
    """KEEL magic, 3,000 rows in [0, 1], RBF gamma = 1/d, SVM with intercept, C = 2^18: the
    violation stalls at 3.6e-7 .. 6.2e-7 (the gradient's round-off, measured against a sum
    in extended precision) above the tolerance 1e-8: the SMO used to run to max_iter (gap
    2.7e-6 along the path). It now stops at the floor it measures, and the point certifies."""
    from strategies import keel

    X, y = keel("magic", minmax=True)
    rng = np.random.default_rng(0)
    idx = []
    for c in (-1.0, 1.0):                       # validation/sweep_paths.py's subsample
        ic = np.flatnonzero(y == c)
        idx.append(rng.choice(ic, int(round(3000 * ic.size / y.size)), replace=False))
    idx = np.sort(np.concatenate(idx))
    X, y = X[idx], y[idx]
    prob = rm.SVM(X, y, C=2.0 ** 18, kernel=rm.kernels.RBF(gamma=1.0 / X.shape[1]),
                  fit_intercept=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        sol = fast.solve(prob)
    assert sol.status == "optimal", sol.info
    assert prob.certify(sol, reference=False).ok


@pytest.mark.parametrize("seed", range(4))
def test_smo_refines_a_tiny_objective_relative_to_itself(seed):
    """Features ~5e6, C = 2^-7, SVM with intercept (P* ~ 1e-12): the refinement's gap target
    was 1e-9 (1 + |P|), so the SMO stopped at up to 20x the optimum; relative to the
    objective (fast._common.relative_gap_target) the SMO alone, before any self-check, ends with a
    relative duality gap below 1e-3 (the reference refuses this scale: the data span 1e7)."""
    from fast import svm as fsvm

    rng = np.random.default_rng(seed)
    X = rng.normal(size=(32, 3)) * 1.5e6 + 5.5e6
    y = np.where((X[:, 0] - 5.5e6) + 0.5e6 * rng.normal(size=32) > 0, 1.0, -1.0)
    prob = rm.SVM(X, y, C=2.0 ** -7, fit_intercept=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = fsvm.solve_svm_with_intercept(prob)
    cert = prob.certify(sol, reference=False)   # P and D re-evaluated from the point
    assert 0.0 <= cert.values["relative_gap"] <= 1e-3


def test_smo_floor_stop_that_fails_its_certificate_ends_stalled(monkeypatch):
    """A stop at the round-off floor (fast/_smo_run.py run(roundoff=...)) is only a
    candidate: where the certificate fails there, check_floor_stop reports ``stalled`` with
    a ConvergenceWarning naming the residual. The floor is put far above the optimum
    through the module's hooks: the bound ``roundoff_bound`` (so that the gate opens at
    once), the measured floor ``gradient_floor`` (1.0) and ``ROUNDOFF_MAX`` (so that a stop
    10^8 x the tolerance asked is taken). RBF, m = 300, C = 2^16. Which chunk the stop
    comes in depends on the SMO's trajectory (BLAS and compiler rounding): what is under
    test is that a stop at the floor, above the tolerance asked, is not called optimal."""
    from fast import _smo_run

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 2))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=300) > 0, 1.0, -1.0)
    prob = rm.SVM(X, y, C=2.0 ** 16, kernel=rm.kernels.RBF(gamma=0.5), fit_intercept=True)
    honest = fast.solve(prob)                  # unpatched: converges and certifies
    assert honest.status == "optimal" and not honest.info["stopped_at_roundoff"]
    assert prob.certify(honest, reference=False).ok
    monkeypatch.setattr(_smo_run, "roundoff_bound", lambda source, pt, s, alpha: 1e-2)
    monkeypatch.setattr(_smo_run, "gradient_floor", lambda G, G2, live: 1.0)
    monkeypatch.setattr(_smo_run, "ROUNDOFF_MAX", 1e9)
    with pytest.warns(ConvergenceWarning) as record:
        sol = fast.solve(prob)
    assert sol.info["stopped_at_roundoff"] and sol.info["roundoff_floor"] == 1.0
    viol = sol.info["violation"]
    assert 1e-8 < viol <= 1.0
    assert sol.status == "stalled"
    assert sol.info["floor_certificate"] is False
    messages = [str(w.message) for w in record if issubclass(w.category, ConvergenceWarning)]
    assert len(messages) == 1, messages
    assert "round-off floor 1.000e+00" in messages[0]
    assert f"residual {viol:.3e} above the tolerance tol=1.000e-08" in messages[0]
    assert "status 'stalled'" in messages[0]
    cert = prob.certify(sol, reference=False)  # the certificate indeed fails at that point
    assert not cert.ok
    name, value = cert.worst
    assert abs(value) > 1e-6 and f"{name} {value:.3e}" in messages[0]


def test_an_interior_point_polish_not_kept_is_not_offered_again(monkeypatch):
    """After a chunk, an interior-point polish that did not lower the dual (its large
    factorisations spent for nothing: 57-81 s each over 3,800-5,000 variables on raw
    spambase, SVMm at C1 = 2^20) is not offered again in the run: the later polishes get
    no interior-point budget; the active set stays offered."""
    from strategies import make_problem

    from fast import _smo_run

    prob, _ = make_problem("EpsSVM", 9353)        # a cubic kernel: the SMO runs in chunks
    budgets = []

    def refusing(source, pt, s, u, alpha, G, b, has_eq, budget, ipm_budget=0.0, dg=None):
        budgets.append((budget, ipm_budget))
        return _smo_run.IPM_REFUSED if len(budgets) == 1 else ""

    monkeypatch.setattr(_smo_run, "newton_polish", refusing)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fast.solve(prob, method="smo", random_state=0)
    assert len(budgets) >= 3
    assert budgets[0][1] > 0.0
    assert all(ipm == 0.0 and budget > 0.0 for budget, ipm in budgets[1:])
