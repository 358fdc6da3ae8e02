"""fast.solve on SVM (SPEC §1, no intercept): DCD's path choice, LIBLINEAR, the SVM with
intercept handed to the SMO, warm starts outside the box. Agreement with the reference,
CSR = dense, the cache path and the warm start from its own solution: tests/test_contract.py.
``method="smo"`` without intercept: the tests at the end."""
import warnings

import numpy as np
import pytest
from hypothesis import given
from sklearn.exceptions import ConvergenceWarning

import fast
import refmodels as rm
from refmodels.certify import DEFAULT_TOL
from contract import rel, solve_trusted
from strategies import binary_data, log_uniform, random_binary


def test_auto_path_choice():
    """The DCD: the Gram when it fits in cache_size MB, else the bounded cache (as LIBSVM)."""
    X, y, k, _ = random_binary(12, m=60, d=3, kernel="rbf")
    prob = rm.SVM(X, y, C=1.0, kernel=k)
    assert fast.solve(prob, method="dcd").info["path"] == "gram"
    small = fast.solve(prob, method="dcd", cache_size=0.01)   # 60 x 60 x 8 B = 28 kB > 10 kB
    assert small.info["path"] == "cache" and small.info["cache_slots"] < 60
    full = fast.solve(prob, method="dcd")
    assert abs(small.objective - full.objective) <= 1e-8 * (1 + small.objective)
    G, _, kp, _ = random_binary(12, m=60, d=3, kernel="precomputed")
    assert fast.solve(rm.SVM(G, y, kernel=kp), method="dcd",
                      cache_size=0.01).info["path"] == "gram"


def test_matches_liblinear():
    from sklearn.svm import LinearSVC

    X, y, _, _ = random_binary(7, m=80, d=5)
    prob = rm.SVM(X, y, C=0.3)
    sol = fast.solve(prob)
    lin = LinearSVC(C=0.3, loss="hinge", dual=True, fit_intercept=False, tol=1e-10,
                    max_iter=10**6).fit(X, y)
    assert rel(sol.objective, prob.primal_value(lin.coef_.ravel())) <= 1e-7
    np.testing.assert_allclose(sol.variables["w"], lin.coef_.ravel(), atol=1e-5)


def test_intercept_goes_to_smo():
    X, y, k, _ = random_binary(3, m=30, d=3, kernel="rbf")
    prob = rm.SVM(X, y, C=1.0, kernel=k, fit_intercept=True)
    sol = fast.solve(prob)
    assert prob.certify(sol).ok
    with pytest.raises(ValueError, match="method"):
        fast.solve(prob, method="dcd")


def test_warm_start_outside_the_box():
    X, y, k, _ = random_binary(4, m=40, d=3, kernel="rbf")
    prob = rm.SVM(X, y, C=2.0, kernel=k)
    sol = fast.solve(prob)
    bad = rm.SVM(X, y, C=1.0, kernel=k)          # sol's alpha leaves [0, 1]
    if np.max(sol.variables["alpha"]) > 1.0:
        with pytest.raises(ValueError, match="warm_start"):
            fast.solve(bad, warm_start=sol)
    with pytest.raises(ValueError, match="warm_start"):
        fast.solve(prob, warm_start=rm.solution.Solution(objective=0.0, coef=None))


def test_svm_intercept_raw_scale_is_honest():
    """A 1-D linear SVM with an intercept on features ~1e5 (Gram ~1e10; found by the
    every-scale draws of tests/test_fast_svmm.py): the SMO's own dual value gave a gap of
    2.6e-12 where the certificate's is 1.07e-6, and the status said ``optimal``. Now the
    full certificate decides on badly scaled data for the linear kernel too: either the
    point certifies or the status says otherwise, with a ConvergenceWarning."""
    x = [99954.63698308, 100013.99455658, 100111.50346859, 100030.5576802, 99904.49362464,
         99886.67101195, 99933.07096701, 100000.86306192, 99877.88173122, 99957.92599209,
         99962.92104858, 100075.24100889, 100000.30946182, 100056.69372133, 99913.46068863,
         100008.19508706, 100057.24109658, 99954.63698308, 100013.99455658, 100111.50346859,
         100030.5576802, 99904.49362464]
    y = np.array([1, -1, 1, 1, -1, -1, -1, -1, -1, -1, -1, 1, -1, 1, -1, 1, -1, -1, 1, -1,
                  -1, -1])
    prob = rm.SVM(np.array(x)[:, None], y, C=7.943282347242816, kernel="linear",
                  fit_intercept=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sol = fast.solve(prob)
    cert = prob.certify(sol, reference=False)
    if sol.status == "optimal":
        assert cert.ok, cert
    else:
        assert any(issubclass(w.category, ConvergenceWarning) for w in caught)


@given(data=binary_data(), C=log_uniform(1e-2, 1e3))
def test_smo_without_intercept_agrees_with_the_reference(data, C):
    """``method="smo"`` (the SMO without the equality): the reference's optimum at
    the unit scale, the trust property at every scale; the bounded row cache gives the Gram
    path's point."""
    X, y, kernel, scale = data
    prob = rm.SVM(X, y, C=C, kernel=kernel)
    smo, ref = solve_trusted(prob, scale, lambda: fast.solve(prob, method="smo"),
                             lambda: prob.solve())
    if smo is None:
        return
    assert smo.solver == "fast:smo" and smo.intercept == 0.0
    assert np.all(smo.variables["alpha"] >= 0) and np.all(smo.variables["alpha"] <= C)
    np.testing.assert_array_equal(smo.coef, prob.y * smo.variables["alpha"])
    # the reported objective is the primal at the returned point (off the unit scale as the
    # certificate evaluates it: through w = X^T coef it loses digits, see contract.py)
    P = prob.certify(smo, reference=False).values["objective"]
    assert rel(smo.objective, P) <= DEFAULT_TOL
    if scale.good:
        assert rel(smo.objective, prob.primal_value(*prob.primal_point(smo))) <= 1e-9
        assert rel(smo.objective, ref.objective) <= 1e-6
        if not kernel.is_precomputed:
            cache = fast.solve(prob, method="smo", path="cache", cache_size=1e-5)
            gram = fast.solve(prob, method="smo", path="gram")
            assert (cache.info["path"], gram.info["path"]) == ("cache", "gram")
            assert cache.status == gram.status == "optimal"
            assert rel(cache.objective, gram.objective) <= 1e-7


def test_smo_without_intercept_warm_start_and_max_iter():
    X, y, k, _ = random_binary(8, m=80, d=4, kernel="rbf")
    prob = rm.SVM(X, y, C=50.0, kernel=k)
    cold = fast.solve(prob, method="smo")
    assert cold.status == "optimal" and cold.n_iter > 0
    again = fast.solve(prob, method="smo", warm_start=cold)
    assert again.status == "optimal" and again.n_iter == 0
    assert rel(again.objective, cold.objective) <= 1e-10
    # from the DCD's point (the same dual variable), and the DCD from the SMO's
    dcd = fast.solve(prob, method="dcd")
    assert rel(fast.solve(prob, method="smo", warm_start=dcd).objective, dcd.objective) <= 1e-8
    assert rel(fast.solve(prob, warm_start=cold).objective, cold.objective) <= 1e-8
    with pytest.warns(ConvergenceWarning, match="tol"):
        short = fast.solve(prob, method="smo", max_iter=3)
    assert short.status == "max_iter" and short.n_iter == 3


def test_smo_without_intercept_bad_input():
    X, y, k, _ = random_binary(9, m=30, d=3, kernel="rbf")
    prob = rm.SVM(X, y, C=1.0, kernel=k)
    big = fast.solve(rm.SVM(X, y, C=5.0, kernel=k), method="smo")
    if np.max(big.variables["alpha"]) > 1.0:
        with pytest.raises(ValueError, match="warm_start"):
            fast.solve(prob, method="smo", warm_start=big)
    for options, words in (({"path": "linear"}, "path"), ({"polish": "yes"}, "polish"),
                           ({"shrinking": 2}, "shrinking"), ({"tol": -1.0}, "tol"),
                           ({"max_iter": 0}, "max_iter"), ({"cache_size": -1}, "cache_size"),
                           ({"foo": 1}, "unknown option"),
                           ({"warm_start": np.ones(5)}, "warm_start")):
        with pytest.raises(ValueError, match=words):
            fast.solve(prob, method="smo", **options)
    with pytest.raises(ValueError, match="path"):
        fast.solve(rm.SVM(X, y, C=1.0), method="smo", path="linear")


def test_auto_rule_smo_for_a_kernel_dcd_for_linear():
    """``method="auto"`` (and fast.path's default) for the SVM without intercept: the SMO
    for a kernel, the DCD for the linear kernel (fast.svm.choose_method); with an
    intercept the SMO (the only solver of that dual). fast.solve's default is "auto"."""
    X, y, k, _ = random_binary(21, m=50, d=3, kernel="rbf")
    kern = rm.SVM(X, y, C=4.0, kernel=k)
    lin = rm.SVM(X, y, C=4.0)
    assert fast.solve(kern, method="auto").solver == "fast:smo"
    assert fast.solve(lin, method="auto").solver == "fast:dcd"
    assert fast.solve(kern).solver == "fast:smo"
    assert fast.solve(lin).solver == "fast:dcd"
    assert fast.solve(kern, method="dcd").solver == "fast:dcd"
    assert fast.solve(rm.SVM(X, y, C=4.0, kernel=k, fit_intercept=True),
                      method="auto").solver == "fast:smo"
    assert {s.solver for s in fast.path(kern, C=[1.0, 16.0])} == {"fast:smo"}
    assert {s.solver for s in fast.path(lin, C=[1.0, 16.0])} == {"fast:dcd"}
    with pytest.raises(ValueError, match="method must be one of"):
        fast.solve(lin, method="newton")


def test_weak_regularization_keel_certifies():
    """KEEL haberman ([0,1], RBF gamma = 1/d, C = 2^12, cold) certifies without a warning:
    the SMO crawls here, and its Newton polish runs within the budget of
    fast._smo_run.POLISH_WORK (a budget of 10 n x the last chunk's iterations, below
    4 |F|^3 for |F| ~ 300, refused it: ``max_iter`` at 300,000 iterations, worst residual
    0.33)."""
    from strategies import keel

    X, y = keel("haberman", minmax=True)
    prob = rm.SVM(X, y, C=2.0 ** 12, kernel=rm.kernels.RBF(gamma=1.0 / X.shape[1]))
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        sol = fast.solve(prob, method="auto")
    assert sol.solver == "fast:smo" and sol.status == "optimal"
    # a chunk that ends short of the tolerance is followed by a kept polish
    assert sol.info["chunks_short"] == 0 or sol.info["n_polish"] > 0
    assert prob.certify(sol, reference=False).ok


def test_smo_without_intercept_takes_pair_steps_on_a_smooth_kernel():
    """KEEL spambase ([0,1], RBF gamma = 1/d, no intercept; 500 of its rows here, 3,000 in
    validation/sweep_paths.py): the SMO without equality alternates single-variable steps
    with WSS3's pair steps, and reaches tol 1e-3 at C = 2^10 within 50,000 iterations and
    certifies cold at C = 2^20. Single-variable steps alone crawl along the directions
    e_i - e_j of a nearly constant kernel (C = 2^10, tol 1e-3: not reached in 10^5
    iterations; C = 2^20 cold: ``max_iter`` at 300,000)."""
    from strategies import keel

    X, y = keel("spambase", minmax=True)
    idx = np.random.default_rng(0).choice(len(y), 500, replace=False)
    X, y = X[idx], y[idx]
    kern = rm.kernels.RBF(gamma=1.0 / X.shape[1])
    prob = rm.SVM(X, y, C=2.0 ** 10, kernel=kern)
    sol = fast.solve(prob, method="smo", tol=1e-3, max_iter=50_000, polish=False)
    assert sol.status == "converged" and sol.n_iter < 50_000
    prob = rm.SVM(X, y, C=2.0 ** 20, kernel=kern)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        sol = fast.solve(prob, method="smo")
    assert sol.status == "optimal"
    assert prob.certify(sol, reference=False).ok


@pytest.mark.parametrize("C", [2.0 ** 14, 2.0 ** 20])
def test_linear_weak_regularization_keel_certifies(C):
    """KEEL australian ([0,1], linear kernel, no intercept, cold) at C >= 2^14: the dual is
    nearly an LP of rank d = 14, where the DCD alone crawls (``max_iter`` at 100,000
    epochs, duality gap ~1 relative) and the free-set polish never fires (the free set
    keeps moving). The low-rank active set on all the variables
    (:func:`fast._polish_lowrank.active_set_qp_lowrank`) reaches the optimum."""
    from strategies import keel

    X, y = keel("australian", minmax=True)
    prob = rm.SVM(X, y, C=C, kernel=rm.kernels.Linear())
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        sol = fast.solve(prob, method="auto")
    assert sol.solver == "fast:dcd" and sol.status == "optimal"
    assert sol.info["lowrank_steps"] > 0 and sol.info["n_iter"] < 100000
    assert prob.certify(sol, reference=False).ok


@pytest.mark.parametrize("C", [2.0 ** 18, 2.0 ** 20])
def test_intercept_weak_regularization_keel_certifies(C):
    """KEEL haberman ([0,1], RBF gamma = 1/d, with intercept, cold) at C = 2^18 and 2^20
    certifies: with :data:`fast._smo_run.NULL_REL` the polish takes the Newton step where
    its active set would follow null-space components of norm ~5e-10 (eigenvalues just
    below its cutoff; free gradient of norm ~5) across the box, one bound per
    factorisation, and stop on its stall rule far from the working-set optimum (``max_iter``,
    300,000 iterations, 27-32 polishes)."""
    from strategies import keel

    X, y = keel("haberman", minmax=True)
    prob = rm.SVM(X, y, C=C, kernel=rm.kernels.RBF(gamma=1.0 / X.shape[1]),
                  fit_intercept=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        sol = fast.solve(prob)
    assert sol.status == "optimal"
    assert sol.info["chunks_short"] == 0 or sol.info["n_polish"] > 0
    assert prob.certify(sol, reference=False).ok


def test_reported_objective_is_the_certificates_on_raw_linear_features():
    """Found by hypothesis (two points, one feature ~1e6, C = 1, ``method="smo"``): the
    SMO's objective through ``coef^T K coef`` (Gram entries 1e12) was 1.1e-5 off the exact
    value at its own point; a linear kernel's objective is now evaluated through the
    feature map, as the certificate evaluates it."""
    X = np.array([[1000211.88715191], [1000533.43561568]])
    prob = rm.SVM(X, np.array([1, -1]), C=1.0, kernel=rm.kernels.Linear())
    sol = fast.solve(prob, method="smo")
    cert = prob.certify(sol, reference=False)
    assert sol.status == "optimal" and cert.ok
    assert abs(sol.objective - cert.values["objective"]) <= 1e-9 * cert.values["objective"]


# ---------------------------------------------------------------------------------------
# the caller's tol, reproducibility and the candidate polish of the linear DCD
# ---------------------------------------------------------------------------------------
def _standardised(m, d, seed=0, scale=1.0):
    from sklearn.datasets import make_classification

    X, y = make_classification(n_samples=m, n_features=d, n_informative=min(d, 10),
                               n_redundant=0, flip_y=0.05, random_state=seed)
    X = (X - X.mean(0)) / X.std(0)
    return X * scale, np.where(y > 0, 1.0, -1.0)


@pytest.mark.parametrize("tol", [1e-2, 1e-4, 1e-7])
@pytest.mark.parametrize("kw, fit_intercept, kernel", [
    ({}, False, "linear"),                           # DCD, linear path, d <= 64
    ({}, False, "linear80"),                         # DCD, linear path, candidate polish
    ({"method": "dcd", "path": "gram"}, False, "linear"),
    ({"method": "smo"}, False, "linear"),
    ({}, False, "rbf"),                              # the SMO
    ({}, True, "rbf")])                              # the SMO with the equality
def test_info_tol_is_the_tol_asked(tol, kw, fit_intercept, kernel):
    """A caller's tol is what every path stops at and reports: ``info['tol']`` (and the
    DCD's ``tol_final``: no refinement below it), the status honest about it."""
    X, y = _standardised(400, 80 if kernel == "linear80" else 5, seed=3)
    k = rm.kernels.RBF(gamma=0.2) if kernel == "rbf" else rm.kernels.Linear()
    prob = rm.SVM(X, y, C=0.5, kernel=k, fit_intercept=fit_intercept)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        sol = fast.solve(prob, tol=tol, random_state=0, **kw)
    assert sol.info["tol"] == tol
    if "tol_final" in sol.info:
        assert sol.info["tol_final"] == tol and sol.info["n_gap_refine"] == 0
    assert sol.status in ("optimal", "converged")
    if sol.status == "optimal":
        assert prob.certify(sol).ok


@pytest.mark.parametrize("d, C, sparse", [(5, 0.1, False), (80, 0.1, False), (80, 10.0, False),
                                           (80, 1.0, True)])
def test_same_random_state_same_run(d, C, sparse):
    """Identical calls with the same random_state take the same steps: the same epochs,
    polishes and coefficients to the bit (the polish decisions are counted in work, never
    timed), also for a Generator seeded alike."""
    import scipy.sparse as sps

    X, y = _standardised(1000, d, seed=5)
    if sparse:
        X = sps.csr_matrix(np.where(np.abs(X) < 0.8, 0.0, X))

    def run(rs):
        return fast.solve(rm.SVM(X, y, C=C), tol=1e-4, random_state=rs)

    a, b = run(7), run(7)
    assert a.n_iter == b.n_iter
    for key in ("n_polish", "n_updates", "candidate_steps", "lowrank_steps"):
        assert a.info.get(key) == b.info.get(key), key
    np.testing.assert_array_equal(a.coef, b.coef)
    np.testing.assert_array_equal(a.variables["w"], b.variables["w"])
    g1, g2 = run(np.random.default_rng(11)), run(np.random.default_rng(11))
    assert g1.n_iter == g2.n_iter
    np.testing.assert_array_equal(g1.coef, g2.coef)


@pytest.mark.parametrize("m, d, C", [(2000, 20, 0.01), (2000, 100, 0.001)])
def test_looser_tol_takes_fewer_epochs_than_the_default(m, d, C):
    """Where the descent reaches the caller's tol by itself, a looser tol stops sooner than
    the default (which refines to the certificate) and needs no more polishes; both are
    the optimum to their tolerance."""
    X, y = _standardised(m, d, seed=0)
    prob = rm.SVM(X, y, C=C)
    loose = fast.solve(prob, tol=1e-4, random_state=0)
    looser = fast.solve(prob, tol=1e-2, random_state=0)
    default = fast.solve(prob, random_state=0)
    assert looser.n_iter <= loose.n_iter < default.n_iter
    assert loose.info["n_polish"] <= default.info["n_polish"]
    assert loose.info["pg_max_abs"] <= 1e-4 and looser.info["pg_max_abs"] <= 1e-2
    assert prob.certify(default).ok


@pytest.mark.parametrize("scale, C", [(1.0, 0.1), (1.0, 1.0), (1.0, 100.0), (1e-3, 1.0),
                                      ("outliers", 1.0), ("mixed", 0.01)])
def test_candidate_polish_certifies_at_many_scales(scale, C):
    """More than 64 features (the candidate polish): the default solve certifies on
    standardised features, tiny ones, far outlier rows and features spanning five orders
    of magnitude, and the polish ran where the descent alone would crawl."""
    X, y = _standardised(1200, 80, seed=0)
    if scale == "outliers":
        X[-5:] *= 1e3
    elif scale == "mixed":
        X = X * np.logspace(-2, 3, 80) + 5.0
    else:
        X = X * scale
    prob = rm.SVM(X, y, C=C)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        sol = fast.solve(prob, random_state=0)
    assert sol.status == "optimal" and prob.certify(sol).ok
    assert "candidate_steps" in sol.info
    if scale == 1.0 and C >= 1.0:
        assert sol.info["n_polish"] >= 1 and sol.info["candidate_steps"] > 0


def test_candidate_polish_on_csr_matches_dense():
    """CSR rows (the polish densifies only the candidates' rows) give the dense optimum."""
    import scipy.sparse as sps

    X, y = _standardised(800, 90, seed=2)
    X = np.where(np.abs(X) < 0.7, 0.0, X)
    dense = fast.solve(rm.SVM(X, y, C=1.0), random_state=0)
    csr = fast.solve(rm.SVM(sps.csr_matrix(X), y, C=1.0), random_state=0)
    assert dense.info["path"] == csr.info["path"] == "linear"
    assert rel(csr.objective, dense.objective) <= 1e-9
    np.testing.assert_allclose(csr.variables["w"], dense.variables["w"], atol=1e-6)


def test_auto_takes_the_gram_beyond_the_row_cache(monkeypatch):
    """Without a cache_size, "auto" takes the full Gram up to AUTO_GRAM_MB (far above the
    200 MB row cache: the DCD's random order recomputes most cached rows every epoch), and
    falls back to the cache beyond it or beyond half the memory available; a cache_size
    given keeps its LIBSVM meaning."""
    from fast import _kernels as K
    from refmodels import _numeric

    assert K.auto_gram_fits(10, None) and K.auto_gram_fits(6000, None) is (
        _numeric._available_memory() is None or 8 * 6000**2 <= 0.5 * _numeric._available_memory())
    assert not K.auto_gram_fits(6000, 200.0)              # 275 MB: beyond 200 MB given
    assert not K.auto_gram_fits(20000, None)              # 3.2 GB: beyond AUTO_GRAM_MB
    monkeypatch.setattr(_numeric, "_available_memory", lambda: 1e6)
    assert not K.auto_gram_fits(1000, None)               # 8 MB Gram, 1 MB available
    assert K.auto_gram_fits(100, None)                    # 80 kB
    monkeypatch.undo()
    X, y, k, _ = random_binary(12, m=60, d=3, kernel="rbf")
    prob = rm.SVM(X, y, C=1.0, kernel=k)
    monkeypatch.setattr(K, "AUTO_GRAM_MB", 0.01)
    assert fast.solve(prob, method="dcd").info["path"] == "cache"
    monkeypatch.undo()
    assert fast.solve(prob, method="dcd").info["path"] == "gram"


def test_intercept_on_sparse_rows_makes_no_dense_copy(monkeypatch):
    """The SVM with an intercept (the SMO) on sparse rows of the linear kernel reads the Gram
    ``X X^T`` formed by the sparse product, never a dense copy of the data (5,000 x 200,000
    rows became an 8 GB array); where the Gram does not fit its cache and the dense rows
    would not fit in memory it refuses early, naming what to do."""
    import scipy.sparse as sp

    from fast import _kernels as K

    r = np.random.default_rng(2)
    X = sp.random(120, 30000, density=0.002, format="csr", random_state=4)
    y = np.where(np.asarray(X.sum(axis=1)).ravel() > np.median(X.sum(axis=1)), 1.0, -1.0)

    dense_data = K.dense_data

    def no_dense(X):
        assert not sp.issparse(X), "a dense copy of the sparse rows"
        return dense_data(X)

    monkeypatch.setattr(K, "dense_data", no_dense)
    prob = rm.SVM(X, y, C=1.0, fit_intercept=True)
    sol = fast.solve(prob, random_state=0)
    assert sol.status == "optimal" and prob.certify(sol).ok
    ref = rm.SVM(X.toarray(), y, C=1.0, fit_intercept=True)
    assert abs(sol.objective - fast.solve(ref).objective) <= 1e-7 * (1 + abs(sol.objective))
    monkeypatch.setattr("refmodels._numeric._available_memory", lambda: 1e5 + r.random())
    with pytest.raises(MemoryError, match="fit_intercept=False"):
        fast.solve(prob, cache_size=0.01)
