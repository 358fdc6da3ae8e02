"""The shared DCD (fast/_dcd.py): shrinking, reproducibility, stopping, arguments."""
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

import fast
import refmodels as rm
from contract import rel
from strategies import random_binary


def _projected_gradient_svm(prob, alpha):
    """Independent check: |PG| of the SVM dual at alpha, from scratch (NumPy)."""
    Q = prob.y[:, None] * prob.gram * prob.y[None, :]
    g = Q @ alpha - 1.0
    pg = np.where(alpha <= 0, np.minimum(g, 0), np.where(alpha >= prob.C, np.maximum(g, 0), g))
    return np.max(np.abs(pg))


def _overlapping(seed, m=400, d=5):
    """Heavily overlapping classes: most multipliers at a bound (0 or C)."""
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(m) < 0.5, 1, -1)
    X = rng.normal(size=(m, d)) + 0.3 * y[:, None]
    return X, y


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_shrinking_agrees_with_no_shrinking_and_rechecks(kernel, seed):
    """Regression test for the shrinking thresholds (LIBLINEAR's PGmax_old / PGmin_old).

    With many bounded variables, shrinking removes most of them; if the thresholds were
    mixed up (a lower-bound variable compared with PGmin, or PGmax_old taken from PGmin_new)
    variables that still violate KKT would be shrunk and the solver would stop early on the
    active set. The unshrink-and-recheck must happen (counter in info) and the final point
    must satisfy |PG| <= tol on *all* variables, checked here independently, and agree with
    the run without shrinking.
    """
    X, y = _overlapping(seed)
    k = rm.kernels.RBF(gamma=0.05) if kernel == "rbf" else rm.kernels.Linear()
    prob = rm.SVM(X, y, C=1.0 if kernel == "rbf" else 10.0, kernel=k)
    # polish=False: the coordinate descent alone (a Newton polish restarts the active set)
    on = fast.solve(prob, method="dcd", shrinking=True, polish=False, random_state=seed)
    off = fast.solve(prob, method="dcd", shrinking=False, polish=False, random_state=seed)
    default = fast.solve(prob, method="dcd", random_state=seed)
    alpha = on.variables["alpha"]
    at_bound = np.mean((alpha == 0) | (alpha == prob.C))
    assert at_bound > 0.5                                # the instance exercises shrinking
    assert on.info["n_unshrink"] >= 1                    # the recheck happened
    assert off.info["n_unshrink"] == 0
    assert _projected_gradient_svm(prob, alpha) <= 10 * on.info["tol"]
    assert _projected_gradient_svm(prob, off.variables["alpha"]) <= 10 * off.info["tol"]
    assert rel(on.objective, off.objective) <= 1e-9
    np.testing.assert_allclose(alpha, off.variables["alpha"], atol=1e-5 * prob.C)
    assert rel(default.objective, off.objective) <= 1e-9
    assert _projected_gradient_svm(prob, default.variables["alpha"]) <= 10 * on.info["tol"]


@pytest.mark.parametrize("family", ["SVM", "ODM", "ODML"])
def test_reproducible_and_seed_independent_optimum(family):
    X, y, k, _ = random_binary(8, m=60, d=4, kernel="rbf")
    make = {"SVM": lambda: rm.SVM(X, y, C=3.0, kernel=k),
            "ODM": lambda: rm.ODM(X, y, lam=5.0, mu=0.4, theta=0.3, kernel=k),
            "ODML": lambda: rm.ODML(X, y, lam=5.0, mu1=1.0, mu2=0.5, kernel=k)}[family]
    prob = make()
    a = fast.solve(prob, random_state=11)
    b = fast.solve(make(), random_state=11)
    c = fast.solve(prob, random_state=12)
    assert a.objective == b.objective
    np.testing.assert_array_equal(a.coef, b.coef)
    assert rel(c.objective, a.objective) <= 1e-9
    gen = fast.solve(prob, random_state=np.random.default_rng(5))
    assert rel(gen.objective, a.objective) <= 1e-9


@pytest.mark.parametrize("family", ["SVM", "ODM", "ODML", "LDM"])
def test_max_iter_status_and_warning(family):
    X, y, k, _ = random_binary(9, m=80, d=3, kernel="rbf")
    prob = {"SVM": rm.SVM(X, y, C=10.0, kernel=k),
            "ODM": rm.ODM(X, y, lam=50.0, mu=0.4, theta=0.3, kernel=k),
            "ODML": rm.ODML(X, y, lam=50.0, mu1=1.0, mu2=0.5, kernel=k),
            "LDM": rm.LDM(X, y, C=1.0, lam1=1.0, lam2=0.5, kernel=k)}[family]
    with pytest.warns(ConvergenceWarning, match=r"tol=\d\.\d{3}e-\d\d") as rec:
        sol = fast.solve(prob, max_iter=1)
    msg = str(rec[0].message)
    assert f"tol={sol.info['tol']:.3e}" in msg and f"residual {sol.info['residual']:.3e}" in msg
    assert sol.status == "max_iter" and sol.n_iter == 1
    assert sol.info["residual"] > 0
    # the objective is still the canonical primal at the returned point
    assert abs(sol.objective - prob.primal_value(prob.w_from_coef(sol.coef))) <= 1e-9 * (
        1 + abs(sol.objective))


def test_bad_arguments():
    """The DCD's own options and the stochastic methods' (tol, max_iter, random_state and
    unknown options for every family: tests/test_contract.py)."""
    X, y, _, _ = random_binary(10, m=20, d=3)
    prob = rm.SVM(X, y, C=1.0)
    for bad in ("newton", 3, "svrg"):
        with pytest.raises(ValueError, match="method"):
            fast.solve(prob, method=bad)
    with pytest.raises(ValueError, match="cache_size"):
        fast.solve(prob, cache_size=0)
    with pytest.raises(ValueError, match="shrinking"):
        fast.solve(prob, shrinking="yes")
    odm = rm.ODM(X, y, lam=1.0, mu=0.5, theta=0.1)
    for bad in (0, -1):
        with pytest.raises(ValueError, match="max_iter"):
            fast.solve(odm, method="svrg", max_iter=bad)
    with pytest.raises(ValueError, match="tol"):
        fast.solve(rm.ODML(X, y, lam=1.0), method="asgd", tol=0)


def test_zero_feature_rows():
    """A sample with phi(x_i) = 0 has Q_ii = 0: the step goes to the bound (SPEC §2)."""
    X, y, _, _ = random_binary(11, m=20, d=3)
    X[3] = 0.0
    X[7] = 0.0
    for prob in (rm.SVM(X, y, C=2.0), rm.ODML(X, y, lam=4.0, mu1=0.5, mu2=0.2),
                 rm.ODM(X, y, lam=4.0, mu=0.5, theta=0.1)):
        for path in ("linear", "gram"):
            sol = fast.solve(prob, path=path)
            assert sol.status == "optimal"
            assert prob.certify(sol).ok, str(prob.certify(sol))


def _box_pg(g, x, lo, hi):
    """The projected gradient of a box QP at ``x`` (gradient ``g``): 0 where a bound holds
    the variable with the right sign."""
    return np.where(x <= lo, np.minimum(g, 0), np.where(x >= hi, np.maximum(g, 0), g))


def _box_kkt(g, x, lo, hi):
    """The largest projected-gradient violation of a box QP at ``x`` (gradient ``g``)."""
    return np.max(np.abs(_box_pg(g, x, lo, hi)))


@pytest.mark.parametrize("C", [2.0**10, 2.0**14, 2.0**20])
def test_dense_active_set_reaches_the_kkt_point_of_a_nearly_singular_dual(C):
    """The dense :func:`fast._polish.active_set_qp` on the SVM dual of an RBF Gram of 3-D
    [0,1] data (gamma = 1/d: eigenvalues down to 1e-16 lambda_max) with a box up to 2^20,
    from a cold start, in one call: the KKT point to the gradient's round-off. The hazard:
    repeated Newton steps made only of round-off use the whole step cap, then a released
    variable goes straight back to its bound, so that the SMO / DCD polish stops at the
    start (|PG| = 8) and the haberman solves at C >= 2^14 run to max_iter."""
    from fast._polish import active_set_qp

    rng = np.random.default_rng(0)
    m = 120
    X = rng.random((m, 3))
    y = np.where(X[:, 0] + 0.3 * rng.standard_normal(m) > 0.5, 1.0, -1.0)
    K = np.exp(-((X[:, None, :] - X[None, :, :]) ** 2).sum(-1) / 3.0)
    Q = y[:, None] * K * y[None, :]
    g0, x0, lo, hi = -np.ones(m), np.zeros(m), np.zeros(m), np.full(m, C)
    x, change = active_set_qp(Q, g0, x0, lo, hi)
    assert np.all(x >= lo) and np.all(x <= hi) and change < 0.0
    lmax = float(np.linalg.eigvalsh(Q)[-1])
    assert _box_kkt(g0 + Q @ x, x, lo, hi) <= 1e-12 * lmax * max(1.0, float(np.max(x)))


@pytest.mark.parametrize("with_eq", [False, True])
def test_interior_point_qp_matches_the_active_set(with_eq):
    """:func:`fast._polish.interior_point_qp` (the SMO's polish on a large free set) on box
    QPs of every rank, boxes from 1 to 1e5 wide, with and without the equality:
    its point lies in the box, keeps ``s^T x = s^T x0``, and its decrease matches the
    dense active set's (the exact optimum of these small QPs) to 1e-9."""
    from fast._polish import active_set_qp, interior_point_qp

    rng = np.random.default_rng(13)
    for _ in range(60):
        n = int(rng.integers(2, 40))
        Z = rng.standard_normal((n, int(rng.integers(1, n + 1))))
        Q = Z @ Z.T
        lo = np.zeros(n)
        hi = rng.uniform(0.5, 10.0, n) * 10.0 ** int(rng.integers(0, 6))
        s = rng.choice([-1.0, 1.0], n) if with_eq else None
        x0 = rng.uniform(0.0, 1.0, n) * hi
        g0 = 3.0 * rng.standard_normal(n)
        x, change, steps = interior_point_qp(Q, g0, x0, lo, hi, seq=s)
        _, ref = active_set_qp(Q, g0, x0, lo, hi, seq=s)
        assert np.all((x >= lo) & (x <= hi)) and 0 < steps < 60
        if with_eq:
            assert abs(s @ (x - x0)) <= 1e-9 * (1.0 + hi.max())
        D = x - x0
        assert change == pytest.approx(g0 @ D + 0.5 * D @ Q @ D, rel=1e-9, abs=1e-9)
        assert change <= ref + 1e-9 * (1.0 + abs(ref))


def _sparse_binary(seed, m, d, per_row, flip=0.0):
    """CSR rows with ``per_row`` stored entries on average among ``d`` features, labels of a
    random hyperplane, a fraction ``flip`` of them flipped (bound multipliers at C)."""
    import scipy.sparse as sp

    rng = np.random.default_rng(seed)
    # (a Generator: with an integer seed, sp.random permutes all m d places, seconds)
    X = sp.random(m, d, density=per_row / d, random_state=np.random.default_rng(seed),
                  format="csr")
    y = np.where(X @ rng.normal(size=d) + 0.1 * rng.normal(size=m) > 0, 1.0, -1.0)
    y[rng.random(m) < flip] *= -1
    return X, y


def test_epoch_budget_counts_the_stored_entries_of_sparse_rows():
    """The default epoch cap spends the work budget on what an epoch costs: on CSR rows the
    stored entries, not the number of features (counting the features left a sparse
    problem with many of them at the 100-epoch floor, far from its stop)."""
    from fast import _dcd

    X, y = _sparse_binary(0, m=2000, d=40000, per_row=5)
    sol = fast.solve(rm.SVM(X, y, C=1.0), method="dcd", max_iter=None, random_state=0)
    per_row = X.nnz / X.shape[0]
    expected = int(min(_dcd.DEFAULT_MAX_ITER,
                       max(_dcd.MIN_EPOCHS, _dcd.EPOCH_WORK_BUDGET / (2000 * per_row))))
    assert sol.info["work_cap_epochs"] == expected > 100 * _dcd.MIN_EPOCHS
    assert sol.status == "optimal"


def test_the_dcd_driver_runs_blas_on_one_thread(monkeypatch):
    """The driver's polishes factorise many small matrices one after another; with a second
    BLAS thread on busy cores each took 50x longer (a 100 x 100 eigh: 136 ms against 2.6
    ms), which a decorator moved onto the wrong function once hid from every test but the
    benchmark. Every product of the run is taken with BLAS on one thread."""
    from threadpoolctl import threadpool_info, threadpool_limits

    from fast import _dcd

    seen = []
    product = _dcd.Oracle.product

    def spy(self, u):
        seen.append(max((i["num_threads"] for i in threadpool_info()
                         if i["user_api"] == "blas"), default=1))
        return product(self, u)

    monkeypatch.setattr(_dcd.Oracle, "product", spy)
    X, y = _sparse_binary(0, m=300, d=50, per_row=10)
    with threadpool_limits(limits=2, user_api="blas"):
        outside = max((i["num_threads"] for i in threadpool_info()
                       if i["user_api"] == "blas"), default=1)
        if outside < 2:
            pytest.skip("BLAS runs on one thread here: nothing to tell apart")
        fast.solve(rm.SVM(X.toarray(), y, C=1.0), method="dcd", random_state=0)
    assert seen and max(seen) == 1


def test_default_cap_counts_the_points_visited_not_the_epochs(monkeypatch):
    """The default cap is a work budget on the points the epochs visit: shrinking makes the
    late epochs cheap, and a run that needs more epochs than the budget's full epochs (167
    here against 101 full epochs' visits) finishes; a smaller budget stops it within one
    epoch past the cap, with a warning that names the default cap."""
    from fast import _dcd

    X, y = _sparse_binary(0, m=3000, d=2000, per_row=20, flip=0.1)
    prob = rm.SVM(X, y, C=100.0)
    monkeypatch.setattr(_dcd, "EPOCH_WORK_BUDGET", 1.0)
    monkeypatch.setattr(_dcd, "MIN_EPOCHS", 120)
    sol = fast.solve(prob, method="dcd", random_state=0)
    assert sol.status == "optimal" and sol.info["work_cap_epochs"] == 120
    assert sol.info["n_iter"] > 120 and sol.info["visits"] <= 120 * 3000
    assert sol.info["max_iter"] == _dcd.EPOCH_CAP_FACTOR * 120
    monkeypatch.setattr(_dcd, "MIN_EPOCHS", 20)
    with pytest.warns(ConvergenceWarning, match="the work of 20 full epochs"):
        sol = fast.solve(prob, method="dcd", random_state=0)
    assert sol.status == "max_iter" and sol.info["work_cap_epochs"] == 20
    assert 20 * 3000 <= sol.info["visits"] < 21 * 3000 and sol.info["n_iter"] >= 20
    # an explicit max_iter is an epoch cap, as before
    with pytest.warns(ConvergenceWarning, match="max_iter=7 epochs"):
        sol = fast.solve(prob, method="dcd", random_state=0, max_iter=7)
    assert sol.info["n_iter"] == 7 and sol.info["work_cap_epochs"] is None


@pytest.mark.parametrize("C, flip", [(1.0, 0.0), (10.0, 0.0), (1.0, 0.2)])
def test_subspace_polish_converges_on_sparse_rows_with_many_features(C, flip):
    """Sparse rows, more features than the candidate polish takes: coordinate descent alone
    crawls to the gap the certificate asks (hundreds of epochs per digit once the free set,
    thousands of points, is found). The conjugate-gradient Newton step on the free set
    (``subspace_polish``) finishes it within a few hundred epochs, certified, and the same
    seed gives the same numbers."""
    X, y = _sparse_binary(1, m=4000, d=2000, per_row=10, flip=flip)
    prob = rm.SVM(X, y, C=C)
    sol = fast.solve(prob, method="dcd", max_iter=600, random_state=3)
    assert sol.status == "optimal"
    assert sol.info["subspace_steps"] > 0 and sol.info["n_polish"] >= 1
    alpha = sol.variables["alpha"]
    assert np.count_nonzero((alpha > 0) & (alpha < C)) > 500      # a large free set
    assert prob.certify(sol, reference=False).ok
    again = fast.solve(rm.SVM(X, y, C=C), method="dcd", max_iter=600, random_state=3)
    np.testing.assert_array_equal(again.coef, sol.coef)
    with warnings.catch_warnings():          # (it may stop at max_iter: that is the point)
        warnings.simplefilter("ignore", ConvergenceWarning)
        plain = fast.solve(prob, method="dcd", polish=False, max_iter=600, random_state=3)
    assert plain.status != "optimal" or plain.n_iter > sol.n_iter



def test_a_run_at_its_epoch_cap_checks_the_gap_before_it_stops():
    """A run that reaches ``max_iter`` with its projected-gradient stop unmet but its duality
    gap within the target is converged (the gap certifies the point): the cap is tested
    after the gap's check, not before it."""
    from fast import _dcd

    X, y = _overlapping(3, m=300, d=5)
    prob = rm.SVM(X, y, C=0.01)
    box = prob.box_dual
    oracle = _dcd.oracle_for(prob, "linear", 200.0)

    def primal(alpha, u, s, w):
        return prob.objective_from_margins(s, float(alpha @ s))

    alpha, u, s, w, info = _dcd.run(oracle, sign=box.sign, lo=0.0, hi=box.hi, p=box.p,
                                    dg=box.dg, alpha0=np.zeros(prob.m), tol=1e-15, max_iter=10,
                                    seed=0, polish=False, primal=primal, gap_tol=1e-6)
    # the stop on the projected gradient (1e-15) is not met in 10 epochs, the gap is
    assert info["pg_spread"] > 1e-6
    P = primal(alpha, u, s, w)
    assert P - info["dual_objective"] <= 1e-6 * (1.0 + abs(P))
    assert info["converged"] and info["stopped_on_gap"] and info["n_iter"] == 10


def test_row_sqnorms_of_sparse_rows_without_a_temporary_matrix():
    """``fast._rows.row_sqnorms`` sums the squares of a CSR row's stored entries in one pass
    (no matrix of squares as large as the data): SciPy's sum to rounding, on empty rows,
    float32 data, entries of 1e-150 and 1e150, and other sparse formats."""
    import scipy.sparse as sp

    from fast._rows import row_sqnorms

    r = np.random.default_rng(5)
    for scale in (1e-150, 1.0, 1e150):
        X = sp.random(60, 40, density=0.2, random_state=3, format="csr") * scale
        X.data[::3] *= -1
        X = sp.vstack([X, sp.csr_matrix((2, 40))]).tocsr()        # two empty rows
        want = np.asarray(X.multiply(X).sum(axis=1)).ravel()
        got = row_sqnorms(X)
        assert got[-2:].tolist() == [0.0, 0.0]
        np.testing.assert_allclose(got, want, rtol=4e-16 * 40, atol=0)
        np.testing.assert_allclose(row_sqnorms(X.tocsc()), want, rtol=4e-16 * 40, atol=0)
    X32 = sp.csr_matrix(r.random((5, 4)).astype(np.float32))
    np.testing.assert_allclose(row_sqnorms(X32), (X32.toarray().astype(float) ** 2).sum(1),
                               rtol=1e-15)


def test_row_sqnorms_of_rows_that_store_a_column_twice():
    """A CSR matrix built from triplets and never summed stores a column of a row twice;
    its norm is that of the summed entries (what ``toarray`` and the products read), also
    when the entries cancel; rows merely unsorted (``diags @ X``) keep theirs. The DCD on
    such a matrix certifies with the same point as on its summed copy."""
    import scipy.sparse as sp

    import refmodels as rm
    from fast._rows import row_sqnorms

    r = np.random.default_rng(11)
    rows = np.repeat(np.arange(300), 6)
    cols = r.integers(0, 8, size=rows.size).astype(np.int32)
    vals = r.normal(size=rows.size)
    vals[:2], cols[:2] = (1.5, -1.5), (4, 4)                     # row 0: a cancelling pair
    indptr = np.arange(0, rows.size + 1, 6)
    X = sp.csr_matrix((vals, cols, indptr), shape=(300, 20))
    assert not X.has_canonical_format
    want = (X.toarray() ** 2).sum(1)
    np.testing.assert_allclose(row_sqnorms(X), want, rtol=1e-13, atol=1e-15)
    Xs = X.copy()
    Xs.sum_duplicates()
    assert not np.allclose((X.data.reshape(300, 6) ** 2).sum(1), want)   # the old answer
    unsorted = (sp.diags(r.random(300) + 0.5) @ Xs).tocsr()
    np.testing.assert_allclose(row_sqnorms(unsorted), (unsorted.toarray() ** 2).sum(1),
                               rtol=1e-13)
    y = np.where(X.toarray() @ r.normal(size=20) > 0, 1.0, -1.0)
    import fast

    for Z in (X, Xs):
        prob = rm.SVM(Z, y, C=1.0)
        sol = fast.solve(prob, method="dcd", random_state=0)
        assert sol.status == "optimal" and prob.certify(sol, reference=False).ok
    np.testing.assert_allclose(fast.solve(rm.SVM(X, y, C=1.0), method="dcd").objective,
                               fast.solve(rm.SVM(Xs, y, C=1.0), method="dcd").objective,
                               rtol=1e-7)


def test_row_prefetch_is_only_a_hint():
    """``fast._rows.prefetch`` compiles to LLVM's prefetch, which never faults: hints at
    indices far past the array (as the epochs give near the end of the active set's order
    would not, but a bug might) leave the data and the row products as they were."""
    import scipy.sparse as sp
    from numba import njit

    from fast._rows import prefetch, row_dot, row_prefetch

    X = sp.random(50, 30, density=0.3, random_state=np.random.default_rng(0), format="csr")
    indptr, indices, data = X.indptr.astype(np.int64), X.indices, X.data
    w = np.random.default_rng(1).normal(size=30)

    @njit
    def dots_with_hints(indptr, indices, data, w, order, far):
        out = np.empty(order.shape[0])
        Xd = np.zeros((1, 1))
        for a in range(order.shape[0]):
            if a + 3 < order.shape[0]:
                row_prefetch(order[a + 3], indptr, indices, data)
            prefetch(data, far)
            prefetch(indptr, -far)
            out[a] = row_dot(1, order[a], Xd, indptr, indices, data, w)
        return out

    order = np.random.default_rng(2).permutation(50)
    before = data.copy()
    got = dots_with_hints(indptr, indices, data, w, order, 10**9)
    np.testing.assert_allclose(got, (X @ w)[order], rtol=1e-13, atol=1e-15)
    np.testing.assert_array_equal(data, before)

    from fast._rows import dense_row_prefetch, prefetch_row_entry

    @njit
    def dense_dots_with_hints(Xd, w, order, far):
        out = np.empty(order.shape[0])
        for a in range(order.shape[0]):
            if a + 3 < order.shape[0]:
                dense_row_prefetch(order[a + 3], Xd)
            prefetch_row_entry(Xd, far, -far)
            out[a] = row_dot(0, order[a], Xd, indptr, indices, data, w)
        return out

    Xd = X.toarray()
    got = dense_dots_with_hints(Xd, w, order, 10**9)
    np.testing.assert_allclose(got, (Xd @ w)[order], rtol=1e-13, atol=1e-15)


def test_subspace_polish_stops_its_conjugate_gradients_at_the_descents_tolerance():
    """Near the optimum the free variables' gradient is already small: the conjugate
    gradients stop once every entry of the residual is within ``SUBSPACE_PG_FRACTION *
    pg_tol`` (fewer iterations than the relative stop), and the step they give meets it."""
    from fast import _dcd

    X, y = _sparse_binary(1, m=3000, d=1500, per_row=10, flip=0.1)
    prob = rm.SVM(X, y, C=1.0)
    oracle = _dcd.oracle_for(prob, "linear", 200.0)
    # a point near the optimum with the optimum's free set
    sol = fast.solve(prob, method="dcd", random_state=0, tol=1e-12)
    alpha_opt = sol.variables["alpha"]
    free = (alpha_opt > 0) & (alpha_opt < 1.0)
    rng = np.random.default_rng(0)
    alpha0 = alpha_opt.copy()
    alpha0[free] = np.clip(alpha_opt[free] + 1e-6 * rng.normal(size=free.sum()), 1e-9,
                           1.0 - 1e-9)
    its = {}
    for pg_tol in (0.0, 1e-8):
        alpha = alpha0.copy()
        s, _ = oracle.product(alpha)             # (u = sign alpha, sign 1: Q = Y X X^T Y)
        its[pg_tol] = _dcd._subspace_polish(oracle, 1.0, -1.0, 0.0, 0.0, 1.0, alpha, s,
                                            np.inf, pg_tol=pg_tol)
        assert its[pg_tol] > 0                       # the step was kept
        s, _ = oracle.product(alpha)
        g = s[free] - 1.0
        if pg_tol:
            assert np.max(np.abs(g)) <= _dcd.SUBSPACE_PG_FRACTION * pg_tol * 1.5
    assert its[1e-8] < its[0.0]


def _short_and_full_chunks(X, y, C, monkeypatch):
    """The SVM on ``X``, ``y`` solved by the DCD as it is (short chunks after a nearly exact
    subspace step) and with the short chunk turned off: ``(prob, short, full)``."""
    from fast import _dcd

    prob = rm.SVM(X, y, C=C)
    short = fast.solve(prob, method="dcd", random_state=3)
    with monkeypatch.context() as mp:
        mp.setattr(_dcd, "SUBSPACE_CLIPPED", -1.0)    # never short
        full = fast.solve(rm.SVM(X, y, C=C), method="dcd", random_state=3)
    return prob, short, full


def test_short_chunk_after_a_nearly_exact_subspace_step_keeps_the_point(monkeypatch):
    """After a kept subspace step that sent at most ``SUBSPACE_CLIPPED`` of the free set to a
    bound, the next chunk is short (a few epochs, then the next polish): the run needs fewer
    epochs than with the full chunks, and ends at the same certified optimum."""
    X, y = _sparse_binary(1, m=4000, d=2000, per_row=10, flip=0.2)
    prob, short, full = _short_and_full_chunks(X, y, 10.0, monkeypatch)
    assert short.status == full.status == "optimal"
    assert short.info["n_iter"] < full.info["n_iter"]
    assert prob.certify(short, reference=False).ok
    assert rel(short.objective, full.objective) <= 1e-8


@pytest.mark.parametrize("scale", [1e-3, 1e4])
def test_short_chunk_keeps_the_certified_point_on_badly_scaled_rows(scale, monkeypatch):
    """The short chunk and the CG's stop at the descent's tolerance on rows scaled by 1e-3
    (every multiplier at its bound C) and by 1e4 (an LP-like dual: thousands of epochs and
    subspace steps): the run ends optimal and certified, at the objective of the run with
    the full chunks."""
    X, y = _sparse_binary(1, m=4000, d=2000, per_row=10, flip=0.2)
    prob, short, full = _short_and_full_chunks(X * scale, y, 1.0, monkeypatch)
    assert short.status == full.status == "optimal"
    assert prob.certify(short, reference=False).ok
    assert rel(short.objective, full.objective) <= 1e-8


@pytest.mark.parametrize("family", ["SVM", "ODM", "ODML"])
def test_unsorted_sparse_rows_are_not_sorted_in_the_callers_arrays(family):
    """A CSR matrix whose column indices are not sorted (legal in SciPy) is solved as its
    sorted twin, and neither the caller's arrays nor the problem's are written (a problem
    is immutable; the same matrix may back other problems): the solvers use the indices in
    the order given."""
    import scipy.sparse as sp

    import fast
    import refmodels as rm

    rng = np.random.default_rng(0)
    A = sp.random(300, 40, density=0.2, random_state=1, format="csr")
    y = np.where(rng.random(300) < 0.5, 1.0, -1.0)
    U = A.copy()
    for i in range(U.shape[0]):                     # reverse each row's entries
        a, b = U.indptr[i], U.indptr[i + 1]
        U.indices[a:b] = U.indices[a:b][::-1].copy()
        U.data[a:b] = U.data[a:b][::-1].copy()
    U.has_sorted_indices = False
    assert (U != A).nnz == 0
    idx0, dat0 = U.indices.copy(), U.data.copy()
    make = {"SVM": lambda X: rm.SVM(X, y, C=1.0),
            "ODM": lambda X: rm.ODM(X, y, lam=300.0, mu=0.5, theta=0.3),
            "ODML": lambda X: rm.ODML(X, y, lam=300.0, mu1=0.1, mu2=0.1)}[family]
    pu = make(U)
    su = fast.solve(pu, tol=1e-8, random_state=0)
    ss = fast.solve(make(A), tol=1e-8, random_state=0)
    assert np.array_equal(U.indices, idx0) and np.array_equal(U.data, dat0)
    if sp.issparse(pu.X):
        assert (pu.X != A).nnz == 0
    assert su.status == "optimal" and ss.status == "optimal"
    assert su.objective == pytest.approx(ss.objective, rel=1e-9, abs=1e-12)
