"""fast.distributed: TRON over the row partitions of a Dask array (a LocalCluster, the
threaded scheduler, files read at every pass) against the single-machine fast.solve and the
certificate of the refmodels problem on the same data."""
import subprocess
import sys
import warnings

import numpy as np
import pytest

import fast
import refmodels as rm

distributed = pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")
import dask  # noqa: E402

from fast import distributed as D  # noqa: E402


@pytest.fixture(autouse=True, scope="module")
def _environment_kept():
    """Dask's distributed writes its workers' settings (OMP_NUM_THREADS=1, ...) into this
    process's environment: put it back, so that the tests after these see their own."""
    import os

    saved = dict(os.environ)
    yield
    os.environ.clear()
    os.environ.update(saved)


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as c:
        yield c


def _data(kind, seed=0):
    """Binary data of several shapes and scales (labels from a noisy linear rule)."""
    r = np.random.default_rng(seed)
    m, d = {"unit": (600, 8), "x1e3": (600, 8), "const": (500, 6), "d_gt_m": (40, 120),
            "m_gg_d": (20000, 4)}[kind]
    X = r.normal(size=(m, d))
    if kind == "x1e3":
        X *= 1e3
    if kind == "const":
        X[:, 2] = 3.0
    y = np.where(X @ r.normal(size=d) + 0.5 * r.normal(size=m) * np.std(X) > 0, 1.0, -1.0)
    return X, y


def _rows(X, nparts=4):
    return da.from_array(X, chunks=(-(-X.shape[0] // nparts), X.shape[1]))


def _agrees(res, prob, tol=1e-9):
    """The distributed point is fast.solve's TRON point (both stop at ||g|| <= tol (1 +
    ||w||) and H >= I, so they lie within ~2 tol (1 + ||w||) of each other), and the
    certificate of the refmodels problem holds at it."""
    sol = fast.solve(prob, method="tron")
    w = sol.variables["w"]
    assert res.status == "optimal"
    assert res.residual <= tol or res.grad_norm <= 1e-12 * (1.0 + np.abs(res.w).sum())
    scale = 1.0 + np.linalg.norm(w)
    assert np.linalg.norm(res.w - w) <= 1e-7 * scale
    P = prob.primal_value(res.w)
    assert abs(res.objective - P) <= 1e-9 * (1.0 + abs(P))
    assert abs(P - sol.objective) <= 1e-9 * (1.0 + abs(P))
    cert = prob.certify(prob.solution_from(w=res.w))
    assert cert.ok, cert.worst


@pytest.mark.parametrize("kind", ["unit", "x1e3", "const", "d_gt_m", "m_gg_d"])
@pytest.mark.parametrize("fit_intercept", [False, True])
def test_odm_on_a_cluster_is_fast_solves_point(client, kind, fit_intercept):
    X, y = _data(kind)
    lam, mu, theta = 64.0, 0.5, 0.3
    res = D.solve_odm(client.persist(_rows(X)), y, lam, mu, theta,
                      fit_intercept=fit_intercept, intercept_scaling=2.0)
    assert res.hessian == "formed" and res.passes == 1 + res.n_iter
    assert res.w.shape == (X.shape[1] + fit_intercept,)
    assert res.intercept == (2.0 * res.w[-1] if fit_intercept else 0.0)
    prob = rm.ODM(X, y, lam=lam, mu=mu, theta=theta, fit_intercept=fit_intercept,
                  intercept_scaling=2.0)
    _agrees(res, prob)
    # the margins' summary is the point's
    g = prob.margins(res.w)            # y_i x_i^T w
    assert res.margins["mean"] == pytest.approx(g.mean(), rel=1e-9, abs=1e-12)
    assert res.margins["std"] == pytest.approx(g.std(), rel=1e-6, abs=1e-12)
    assert res.margins["min"] == pytest.approx(g.min(), rel=1e-9, abs=1e-12)
    assert res.margins["below"] == np.sum(g < 1 - theta)
    assert res.margins["above"] == np.sum(g > 1 + theta)


@pytest.mark.parametrize("fit_intercept", [False, True])
def test_squared_hinge_is_odm_at_mu_0_theta_0(client, fit_intercept):
    X, y = _data("unit", seed=3)
    C = 0.05
    res = D.solve_svm(_rows(X, 3), y, C=C, fit_intercept=fit_intercept)
    assert res.loss == "squared_hinge"
    prob = rm.ODM(X, y, lam=C * X.shape[0], mu=0.0, theta=0.0, fit_intercept=fit_intercept)
    _agrees(res, prob)


def test_squared_hinge_is_liblinears_problem():
    from sklearn.svm import LinearSVC

    X, y = _data("unit", seed=4)
    with dask.config.set(scheduler="threads"):
        res = D.solve_svm(_rows(X), y, C=0.1)
    svc = LinearSVC(C=0.1, loss="squared_hinge", dual=False, fit_intercept=False, tol=1e-12,
                    max_iter=100000).fit(X, y)
    # LIBLINEAR's own stop is relative to its first gradient: a loose agreement
    np.testing.assert_allclose(res.w, svc.coef_.ravel(), atol=1e-5)
    f = 0.5 * res.w @ res.w + 0.1 * np.sum(np.maximum(0, 1 - y * (X @ res.w)) ** 2)
    assert res.objective == pytest.approx(f, rel=1e-12)


@pytest.mark.parametrize("scheduler", ["threads", "synchronous"])
def test_local_schedulers_and_dask_labels(scheduler):
    X, y = _data("const", seed=5)
    Xd = _rows(X, 5)
    yd = da.from_array(y, chunks=(Xd.chunks[0],))
    with dask.config.set(scheduler=scheduler):
        res = D.solve_odm(Xd, yd, 8.0, 0.8, 0.1, fit_intercept=True)
    _agrees(res, rm.ODM(X, y, lam=8.0, mu=0.8, theta=0.1, fit_intercept=True))


def test_numpy_input_is_wrapped():
    X, y = _data("unit", seed=6)
    with dask.config.set(scheduler="threads"):
        res = D.solve_odm(X, y, 2.0, 0.5, 0.2)
    _agrees(res, rm.ODM(X, y, lam=2.0, mu=0.5, theta=0.2))


@pytest.mark.parametrize("fit_intercept", [False, True])
def test_above_the_threshold_hessian_vector_passes(client, fit_intercept):
    """Above hessian_max_d each CG step is one pass: the same point, the passes counted."""
    X, y = _data("unit", seed=7)
    X = np.hstack([X, np.random.default_rng(1).normal(size=(X.shape[0], 32))])
    Xd = client.persist(_rows(X))
    res = D.solve_odm(Xd, y, 32.0, 0.5, 0.3, fit_intercept=fit_intercept, hessian_max_d=10)
    assert res.hessian == "products"
    assert res.cg_iter > 0 and res.passes == 1 + res.n_iter + res.cg_iter
    _agrees(res, rm.ODM(X, y, lam=32.0, mu=0.5, theta=0.3, fit_intercept=fit_intercept))
    formed = D.solve_odm(Xd, y, 32.0, 0.5, 0.3, fit_intercept=fit_intercept)
    assert formed.hessian == "formed" and formed.passes == 1 + formed.n_iter
    assert np.linalg.norm(formed.w - res.w) <= 1e-7 * (1 + np.linalg.norm(res.w))


def test_warm_start_from_the_optimum_takes_one_pass(client):
    X, y = _data("unit", seed=8)
    Xd = _rows(X)
    res = D.solve_odm(Xd, y, 16.0, 0.5, 0.3)
    again = D.solve_odm(Xd, y, 16.0, 0.5, 0.3, w0=res.w)
    assert again.n_iter == 0 and again.passes == 1 and again.status == "optimal"


def test_max_iter_warns_with_residual_and_tol(client):
    from sklearn.exceptions import ConvergenceWarning

    X, y = _data("x1e3", seed=9)
    with pytest.warns(ConvergenceWarning, match=r"residual .* tol=1\.000e-09"):
        res = D.solve_odm(_rows(X), y, 1e4, 0.5, 0.3, max_iter=1)
    assert res.status == "max_iter" and res.n_iter == 1 and res.residual > 1e-9


@pytest.mark.parametrize("case", ["outlier", "x1e8", "x1e8-intercept"])
def test_badly_scaled_data_is_never_called_optimal_when_uncertified(case):
    """A far outlier row (x 1e4) or entries of 1e8: fast.solve's TRON does not certify these
    either (max_iter, or a gradient at its rounding error); the distributed solve must say so
    (a ConvergenceWarning and a status other than "optimal") whenever the certificate fails.
    (The outlier: fast.solve's TRON also ends at max_iter there.)"""
    from sklearn.exceptions import ConvergenceWarning

    X, y = _data("unit", seed=15)
    if case == "outlier":
        X[5] *= 1e4
    else:
        X *= 1e8
    fi = case.endswith("intercept")
    with dask.config.set(scheduler="threads"), warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        res = D.solve_odm(_rows(X), y, 64.0, 0.5, 0.3, fit_intercept=fi, max_iter=60)
    prob = rm.ODM(X, y, lam=64.0, mu=0.5, theta=0.3, fit_intercept=fi)
    ok = prob.certify(prob.solution_from(w=res.w), reference=False).ok
    warned = any(issubclass(w.category, ConvergenceWarning) for w in rec)
    # never optimal when uncertified; every status but optimal warns. (The converse may
    # not hold: at x 1e8 with the intercept the gradient's rounding floor stops it above tol,
    # "inaccurate", where the certificate's own scaled tolerance still holds.)
    assert ok or res.status != "optimal"
    assert warned == (res.status != "optimal")
    if case == "outlier":
        assert res.status == "max_iter" and not ok


def _write(path, A):
    np.ascontiguousarray(A, dtype="<f8").tofile(path)


def test_out_of_core_file_is_streamed(tmp_path):
    """The rows read from a raw float64 file at every pass (memmap_rows, and dask's own
    from_array on a np.memmap): the in-memory answer."""
    X, y = _data("m_gg_d", seed=10)
    _write(tmp_path / "X.f64", X)
    _write(tmp_path / "y.f64", y)
    Xf = D.memmap_rows(tmp_path / "X.f64", X.shape[1], chunk_rows=3000)
    assert Xf.shape == X.shape and Xf.numblocks == (7, 1)
    yf = D.memmap_rows(tmp_path / "y.f64", 1, chunk_rows=3000)[:, 0]
    with dask.config.set(scheduler="threads"):
        res = D.solve_odm(Xf, yf, 100.0, 0.5, 0.3, fit_intercept=True)
        mm = np.memmap(tmp_path / "X.f64", dtype=np.float64, mode="r", shape=X.shape)
        res2 = D.solve_odm(da.from_array(mm, chunks=(5000, X.shape[1])), y, 100.0, 0.5, 0.3,
                           fit_intercept=True)
    prob = rm.ODM(X, y, lam=100.0, mu=0.5, theta=0.3, fit_intercept=True)
    _agrees(res, prob)
    _agrees(res2, prob)
    np.testing.assert_array_equal(Xf[123:4567].compute(), X[123:4567])


def test_process_workers_read_the_file(tmp_path):
    """A process worker: the file's chunks are read where the tasks run (memmap_rows
    pickles as its path), the labels scattered once. (One worker: a process starts in
    seconds.)"""
    X, y = _data("unit", seed=11)
    _write(tmp_path / "X.f64", X)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster):
        res = D.solve_odm(D.memmap_rows(tmp_path / "X.f64", X.shape[1], chunk_rows=150), y,
                          4.0, 0.5, 0.3)
    _agrees(res, rm.ODM(X, y, lam=4.0, mu=0.5, theta=0.3))


# ---------------------------------------------------------------------------------------
# bad input: a ValueError naming the argument and the rule
# ---------------------------------------------------------------------------------------
def _bad_cases():
    X, y = _data("unit", seed=12)
    Xn = X.copy()
    Xn[17, 3] = np.nan
    Xi = X.copy()
    Xi[400, 0] = np.inf
    y01 = (y > 0).astype(float)
    yd = da.from_array(y, chunks=(150,))
    ydbad = da.from_array(np.where(np.arange(y.size) == 500, 2.0, y), chunks=(150,))
    return [
        (dict(X=_rows(Xn)), "X must contain only finite values; 1 entries"),
        (dict(X=_rows(Xi)), "X must contain only finite values"),
        (dict(X=da.from_array(X, chunks=(150, 4))), "chunked by rows only"),
        (dict(X=X[:, :, None]), "2-dimensional"),
        (dict(X=X.astype(complex)), "real numbers"),
        (dict(X=_rows(X)[_rows(X)[:, 0] > 0]), "known chunk sizes"),
        (dict(y=y01), r"labels \+1 and -1 only"),
        (dict(y=np.ones_like(y)), "two classes"),
        (dict(y=np.where(np.arange(y.size) == 3, np.nan, y)), r"\+1 and -1 only"),
        (dict(y=y[:-1]), "y must be a vector of 600 labels"),
        (dict(y=da.from_array(y, chunks=(100,))), "chunked as X's rows"),
        (dict(X=da.from_array(X, chunks=(150, 8)), y=ydbad), r"\+1 and -1 only"),
        (dict(X=da.from_array(X, chunks=(150, 8)), y=yd, lam=0.0), "lam must be"),
        (dict(lam=-1.0), "lam must be a finite number > 0"),
        (dict(lam=np.inf), "lam must be"),
        (dict(mu=-0.5), "mu must be a finite number >= 0"),
        (dict(theta=1.0), r"theta must lie in \[0.0, 1.0\)"),
        (dict(fit_intercept="yes"), "fit_intercept must be True or False"),
        (dict(fit_intercept=True, intercept_scaling=0.0), "intercept_scaling must be"),
        (dict(tol=-1e-9), "tol must be"),
        (dict(max_iter=0), "max_iter must be an integer >= 1"),
        (dict(max_cg=2.5), "max_cg must be"),
        (dict(hessian_max_d=-1), "hessian_max_d must be an integer >= 0"),
        (dict(w0=np.zeros(3)), "w0 must be 8 finite weights"),
        (dict(w0=np.full(8, np.nan)), "w0 must be 8 finite weights"),
    ]


@pytest.mark.parametrize("case", range(25))
def test_bad_input_is_refused_naming_the_rule(case):
    X, y = _data("unit", seed=12)
    cases = _bad_cases()
    assert len(cases) == 25
    over, match = cases[case]
    kw = dict(X=_rows(X), y=y, lam=1.0, mu=0.5, theta=0.3)
    kw.update(over)
    with dask.config.set(scheduler="threads"), pytest.raises(ValueError, match=match):
        D.solve_odm(**kw)


def test_bad_input_of_the_svm_and_the_file(tmp_path):
    X, y = _data("unit", seed=13)
    with pytest.raises(ValueError, match="loss must be 'squared_hinge'"):
        D.solve_svm(_rows(X), y, C=1.0, loss="hinge")
    with pytest.raises(ValueError, match="C must be a finite number > 0"):
        D.solve_svm(_rows(X), y, C=0.0)
    (tmp_path / "odd.f64").write_bytes(b"\0" * 20)
    with pytest.raises(ValueError, match="multiple of a row's 16 bytes"):
        D.memmap_rows(tmp_path / "odd.f64", 2)
    with pytest.raises(ValueError, match="path must name a readable file"):
        D.memmap_rows(tmp_path / "missing.f64", 2)
    with pytest.raises(ValueError, match="d must be an integer >= 1"):
        D.memmap_rows(tmp_path / "odd.f64", 0)
    with pytest.raises(ValueError, match="chunk_rows must be an integer >= 1"):
        D.memmap_rows(tmp_path / "odd.f64", 1, chunk_rows=0, offset=4)


def test_import_fast_does_not_import_dask():
    code = "import sys, fast, fast.distributed; assert 'dask' not in sys.modules, 'dask'"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_without_dask_the_message_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "dask", None)
    with pytest.raises(ImportError, match=r"pip install 'refmodels\[dask\]'"):
        D.solve_odm(np.eye(2), [1.0, -1.0])


def test_result_without_warnings_when_optimal(client):
    X, y = _data("d_gt_m", seed=14)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = D.solve_odm(_rows(X, 2), y, 1.0, 1.0, 0.0)
    assert res.status == "optimal" and res.info["partitions"] == 2


def test_a_stop_at_the_rounding_floor_within_the_certificate_is_optimal(monkeypatch):
    """A stop at the gradient's rounding error (it grows with the number of rows: at 25
    million rows it lies above the default tol 1e-9) is "optimal" at the default tol when the
    residual is within the self-check's level of the certificate, with a note; a tol asked
    below the floor gets "inaccurate" and a warning."""
    from sklearn.exceptions import ConvergenceWarning

    from fast import _tron

    X, y = _data("unit", seed=3)
    monkeypatch.setattr(_tron, "DEFAULT_TOL", 1e-30)       # below any rounding floor
    with dask.config.set(scheduler="threads"), warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        res = D.solve_odm(_rows(X), y, 64.0, 0.5, 0.3)
    assert res.status == "optimal" and res.residual > 1e-30
    assert "rounding error" in res.info["note"]
    prob = rm.ODM(X, y, lam=64.0, mu=0.5, theta=0.3)
    assert prob.certify(prob.solution_from(w=res.w)).ok
    with dask.config.set(scheduler="threads"), pytest.warns(ConvergenceWarning,
                                                            match="rounding error"):
        asked = D.solve_odm(_rows(X), y, 64.0, 0.5, 0.3, tol=1e-30)
    assert asked.status == "inaccurate" and "note" not in asked.info


def _sparse(kind, seed=0):
    """CSR rows (3 % stored) at the scales of the dense cases, labels of a noisy rule."""
    import scipy.sparse as sp

    r = np.random.default_rng(seed)
    m, d = {"unit": (900, 60), "x1e-3": (900, 60), "x1e4": (900, 60),
            "d_gt_m": (80, 400)}[kind]
    X = sp.random(m, d, density=0.03, random_state=r, format="csr")
    X.data = (X.data - 0.5) * {"x1e-3": 1e-3, "x1e4": 1e4}.get(kind, 1.0)
    f = X @ r.normal(size=d)
    y = np.where(f + 0.1 * np.std(f) * r.normal(size=m) > 0, 1.0, -1.0)
    y[:2] = (1.0, -1.0)
    return X, y


@pytest.mark.parametrize("kind", ["unit", "x1e-3", "x1e4", "d_gt_m"])
@pytest.mark.parametrize("fit_intercept", [False, True])
@pytest.mark.parametrize("hessian_max_d", [None, 10])
def test_sparse_rows_stay_sparse_and_give_the_dense_point(monkeypatch, kind, fit_intercept,
                                                         hessian_max_d):
    """A scipy.sparse matrix is split into CSR row partitions (never densified: toarray and
    todense of the partitions fail here) and gives fast.solve's point on the same sparse
    problem, certified, with the Hessian formed or by products; a Dask array of CSR chunks
    too."""
    import scipy.sparse as sp

    X, y = _sparse(kind)
    Xd = X.toarray()
    prob = rm.ODM(X, y, lam=float(X.shape[0]), mu=0.5, theta=0.3, fit_intercept=fit_intercept)
    monkeypatch.setattr(D, "CHUNK_BYTES", 12 * X.nnz // 3)        # about 3 partitions

    def refuse(self, *a, **k):
        raise AssertionError("a partition was densified")

    with dask.config.set(scheduler="synchronous"):
        for cls in (sp.csr_matrix, sp.csr_array):
            monkeypatch.setattr(cls, "toarray", refuse)
            monkeypatch.setattr(cls, "todense", refuse)
        res = D.solve_odm(X, y, float(X.shape[0]), 0.5, 0.3, fit_intercept=fit_intercept,
                          hessian_max_d=hessian_max_d)
        chunked = D.solve_odm(da.from_array(X, chunks=(250, X.shape[1]), asarray=False), y,
                              float(X.shape[0]), 0.5, 0.3, fit_intercept=fit_intercept,
                              hessian_max_d=hessian_max_d)
        monkeypatch.undo()
    assert res.info["partitions"] >= 3 and chunked.info["partitions"] == -(-X.shape[0] // 250)
    # (sparse rows form the Hessian up to SPARSE_HESSIAN_MAX_D features by default)
    formed = X.shape[1] <= (hessian_max_d if hessian_max_d is not None
                            else D.SPARSE_HESSIAN_MAX_D)
    assert res.hessian == chunked.hessian == ("formed" if formed else "products")
    _agrees(res, prob)
    _agrees(chunked, prob)
    dense = D.solve_odm(Xd, y, float(X.shape[0]), 0.5, 0.3, fit_intercept=fit_intercept,
                        hessian_max_d=hessian_max_d)
    assert np.linalg.norm(res.w - dense.w) <= 1e-7 * (1.0 + np.linalg.norm(dense.w))


def test_sparse_squared_hinge_and_bad_sparse_input():
    """The squared-hinge SVM on CSR rows is ODM at mu = 0, theta = 0 on the same sparse data;
    a NaN stored value or a bad label in a sparse partition is refused as for dense rows."""
    X, y = _sparse("unit", seed=3)
    with dask.config.set(scheduler="synchronous"):
        res = D.solve_svm(X, y, C=0.5)
        _agrees(res, rm.ODM(X, y, lam=0.5 * X.shape[0], mu=0.0, theta=0.0))
        bad = X.copy()
        bad.data[5] = np.nan
        with pytest.raises(ValueError, match="finite"):
            D.solve_svm(bad, y, C=0.5)
        yb = y.copy()
        yb[3] = 0.0
        with pytest.raises(ValueError, match=r"\+1 and -1"):
            D.solve_svm(X, yb, C=0.5)
