"""Cross-validated estimators by warm-started paths (fast/cv.py)."""
import warnings

import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.model_selection import GridSearchCV

from fast.cv import LDMClassifierCV, ODMClassifierCV, ODMLClassifierCV, SVMClassifierCV
from fast.estimators import LDMClassifier, ODMClassifier, ODMLClassifier, SVMClassifier


def _binary(m=150, d=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(m, d))
    s = X @ rng.normal(size=d)
    y = np.where(s + 0.2 * rng.normal(size=m) > np.median(s), 1, 0)
    return X, y


ODM_GRID = {"lam": [1.0, 16.0, 256.0, 1024.0], "mu": [0.2, 0.8], "theta": [0.2, 0.6]}


def test_odm_cv_matches_gridsearch_and_refits():
    X, y = _binary(seed=1)
    cv = ODMClassifierCV(kernel="linear", lams=ODM_GRID["lam"], mus=ODM_GRID["mu"],
                         thetas=ODM_GRID["theta"],
                         cv=3).fit(X, y)
    n_cand = 4 * 2 * 2
    res = cv.cv_results_
    for key in ("params", "param_lam", "param_mu", "param_theta", "split0_test_score",
                "split2_test_score", "mean_test_score", "std_test_score", "rank_test_score",
                "mean_fit_time", "std_fit_time", "mean_score_time", "std_score_time"):
        assert len(res[key]) == n_cand, key
    assert "split3_test_score" not in res
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gs = GridSearchCV(ODMClassifier(kernel="linear"), ODM_GRID, cv=3).fit(X, y)
    assert res["params"] == gs.cv_results_["params"]
    np.testing.assert_allclose(res["mean_test_score"], gs.cv_results_["mean_test_score"],
                               atol=1.0 / len(y) + 1e-12)
    assert cv.best_params_ in res["params"]
    assert cv.best_score_ == pytest.approx(res["mean_test_score"].max())
    assert res["rank_test_score"][cv.best_index_] == 1
    # refit on the whole training set with the best parameters
    best = cv.best_estimator_
    assert isinstance(best, ODMClassifier)
    assert {k: best.get_params()[k] for k in cv.best_params_} == cv.best_params_
    ref = ODMClassifier(kernel="linear", **cv.best_params_).fit(X, y)
    np.testing.assert_allclose(best.coef_, ref.coef_, rtol=1e-5, atol=1e-7)
    np.testing.assert_array_equal(cv.predict(X), best.predict(X))
    assert cv.score(X, y) == best.score(X, y)


def test_odm_cv_multiclass_and_kernel():
    X, y = load_iris(return_X_y=True)
    X = (X - X.min(0)) / (X.max(0) - X.min(0))
    cv = ODMClassifierCV(lams=[1.0, 64.0], mus=[0.5], thetas=[0.3], kernel="rbf", gamma=1.0,
                         gammas=[1.0], cv=3).fit(X, y)
    assert len(cv.cv_results_["params"]) == 2
    assert cv.best_score_ > 0.8
    assert set(cv.predict(X)) <= set(np.unique(y))


@pytest.mark.parametrize("cls, base, grid", [
    (SVMClassifierCV, SVMClassifier, {"Cs": [0.1, 1.0, 10.0]}),
    (LDMClassifierCV, LDMClassifier, {"Cs": [0.5, 5.0], "lam1s": [2.0 ** -8, 2.0 ** -2],
                                      "lam2s": [2.0 ** -4]}),
    (ODMLClassifierCV, ODMLClassifier, {"lams": [1.0, 64.0], "mu1s": [0.25],
                                        "mu2s": [0.25, 4.0]}),
])
def test_other_families(cls, base, grid):
    X, y = _binary(m=90, d=4, seed=2)
    cv = cls(kernel="linear", cv=3, **grid).fit(X, y)
    n = int(np.prod([len(v) for v in grid.values()]))
    assert len(cv.cv_results_["mean_test_score"]) == n
    assert isinstance(cv.best_estimator_, base)
    gs_grid = {cls._grid[i][1]: grid[cls._grid[i][0]] for i in range(len(cls._grid))}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gs = GridSearchCV(base(kernel="linear"), gs_grid, cv=3).fit(X, y)
    np.testing.assert_allclose(cv.cv_results_["mean_test_score"],
                               gs.cv_results_["mean_test_score"], atol=1.0 / len(y) + 1e-12)


def test_default_grids_are_the_papers_with_the_plain_defaults():
    """The papers' grids, the plain estimator's default added to each (lam=None is m, as
    the plain estimator's), the same kernel (rbf) with gamma searched (the plain "scale"
    and seed 002's widths / d)."""
    assert ODMClassifierCV(kernel="linear")._param_grid() == {
        "lam": [None] + [2.0 ** k for k in range(0, 21, 2)], "mu": [0.2, 0.4, 0.5, 0.6, 0.8],
        "theta": [0.2, 0.3, 0.4, 0.6, 0.8]}
    g = ODMLClassifierCV()._param_grid(d=4)
    assert g["mu1"] == g["mu2"] == [2.0 ** -4, 0.1] + [2.0 ** k for k in (-2, 0, 2, 4)]
    assert g["gamma"] == ["scale"] + [2.0 ** k / 4 for k in (-4, -2, 0, 2, 4)]
    g = LDMClassifierCV()._param_grid()
    assert g["C"] == [1.0, 10.0, 50.0, 100.0] and len(g["lam1"]) == 8 and 0.05 in g["lam1"]
    assert SVMClassifierCV()._param_grid()["C"] == [1.0, 10.0, 50.0, 100.0]
    for cv_cls, base in ((ODMClassifierCV, ODMClassifier), (ODMLClassifierCV, ODMLClassifier),
                         (LDMClassifierCV, LDMClassifier), (SVMClassifierCV, SVMClassifier)):
        plain, cv = base().get_params(), cv_cls().get_params()
        for name in ("kernel", "gamma", "degree", "coef0", "fit_intercept"):
            if name in cv:
                assert cv[name] == plain[name], (cv_cls, name)
        grid = cv_cls()._param_grid(d=4)
        for name, values in grid.items():
            assert plain[name] in values, (cv_cls, name)
    with pytest.raises(ValueError, match="gammas must be None"):
        ODMClassifierCV(kernel="linear", gammas=[1.0]).fit(*_binary(m=40, d=2))
    with pytest.raises(ValueError, match="gammas must hold"):
        ODMClassifierCV(gammas=[-1.0]).fit(*_binary(m=40, d=2))


@pytest.mark.parametrize("cv_cls, base, grid", [
    (SVMClassifierCV, SVMClassifier, {"C": [1.0, 10.0]}),
    (ODMClassifierCV, ODMClassifier, {"lam": [None, 16.0], "mu": [0.5], "theta": [0.3]})])
def test_gamma_search_is_gridsearchcv(cv_cls, base, grid):
    """The default kernel (rbf) searches gamma: the same scores, in the same order, as
    GridSearchCV over the plain estimator with gamma in its grid ("scale" resolved on each
    fold's training part, numbers as given); None and "scale" kept as objects."""
    X, y = _binary(m=90, d=3, seed=7)
    X = X * [1.0, 4.0, 0.5]                            # "scale" differs from 1/d
    gammas = ["scale", 0.1, 2.0]
    attr = {"C": "Cs", "lam": "lams", "mu": "mus", "theta": "thetas"}
    cv = cv_cls(**{attr[k]: v for k, v in grid.items()}, gammas=gammas, cv=3).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gs = GridSearchCV(base(), {**grid, "gamma": gammas}, cv=3).fit(X, y)
    np.testing.assert_allclose(cv.cv_results_["mean_test_score"],
                               gs.cv_results_["mean_test_score"], atol=1.0 / len(y) + 1e-12)
    assert list(cv.cv_results_["param_gamma"]) == list(gs.cv_results_["param_gamma"])
    assert cv.best_estimator_.gamma == cv.best_params_["gamma"]


def test_lam_none_is_m_as_in_the_plain_estimator():
    X, y = _binary(m=90, d=3, seed=4)
    grid = {"lam": [None, 4.0], "mu": [0.5], "theta": [0.3]}
    cv = ODMClassifierCV(kernel="linear", lams=grid["lam"], mus=grid["mu"],
                         thetas=grid["theta"], cv=3).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gs = GridSearchCV(ODMClassifier(kernel="linear"), grid, cv=3).fit(X, y)
    np.testing.assert_allclose(cv.cv_results_["mean_test_score"],
                               gs.cv_results_["mean_test_score"], atol=1.0 / len(y) + 1e-12)
    assert list(cv.cv_results_["param_lam"]) == [None, 4.0]


def test_verbose_progress_and_n_jobs(capsys):
    X, y = _binary(m=80, d=3, seed=3)
    import joblib

    with joblib.parallel_backend("threading"):          # no process start-up in the tests
        a = ODMClassifierCV(kernel="linear", lams=[1.0, 16.0], mus=[0.5], thetas=[0.2, 0.4], cv=2,
                            verbose=10,
                            n_jobs=2).fit(X, y)
    out = capsys.readouterr()
    assert "Fitting 2 folds" in out.out
    b = ODMClassifierCV(kernel="linear", lams=[1.0, 16.0], mus=[0.5], thetas=[0.2, 0.4],
                        cv=2).fit(X, y)
    np.testing.assert_array_equal(a.cv_results_["mean_test_score"],
                                  b.cv_results_["mean_test_score"])


def test_refit_false_and_errors():
    X, y = _binary(m=60, d=3, seed=4)
    cv = ODMClassifierCV(kernel="linear", lams=[1.0], mus=[0.5], thetas=[0.3], cv=2,
                         refit=False).fit(X, y)
    assert not hasattr(cv, "best_estimator_")
    with pytest.raises(AttributeError):
        cv.predict(X)
    with pytest.raises(ValueError, match="lams"):
        ODMClassifierCV(kernel="linear", lams=[], cv=2).fit(X, y)
    with pytest.raises(ValueError):
        ODMClassifierCV(kernel="linear", lams=[1.0, -1.0], mus=[0.5], thetas=[0.3], cv=2).fit(X, y)


def test_dask_local_cluster():
    distributed = pytest.importorskip("dask.distributed")
    import joblib

    X, y = _binary(m=80, d=3, seed=5)
    kw = dict(lams=[1.0, 64.0], mus=[0.4, 0.8], thetas=[0.2], cv=2)
    local = ODMClassifierCV(kernel="linear", **kw).fit(X, y)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster):
        with joblib.parallel_backend("dask"):
            remote = ODMClassifierCV(kernel="linear", **kw).fit(X, y)
    np.testing.assert_array_equal(local.cv_results_["mean_test_score"],
                                  remote.cv_results_["mean_test_score"])
    assert remote.best_params_ == local.best_params_


def test_precomputed_kernel_matches_rbf():
    from sklearn.metrics.pairwise import rbf_kernel

    X, y = _binary(m=80, d=3, seed=6)
    kw = dict(lams=[1.0, 32.0], mus=[0.5], thetas=[0.3], cv=2)
    a = ODMClassifierCV(kernel="rbf", gamma=0.7, gammas=[0.7], **kw).fit(X, y)
    b = ODMClassifierCV(kernel="precomputed", **kw).fit(rbf_kernel(X, gamma=0.7), y)
    np.testing.assert_array_equal(a.cv_results_["mean_test_score"],
                                  b.cv_results_["mean_test_score"])


def test_odm_cv_refits_with_method_auto_and_problem_class():
    """The refit is the public ODMClassifier(method="auto"), no private subclass; the folds
    build the estimator's own problem class."""
    import fast.cv as fcv

    assert not hasattr(fcv, "_ODMAuto")
    X, y = _binary(m=60, d=3, seed=7)
    cv = ODMClassifierCV(kernel="linear", lams=[1.0, 4.0], mus=[0.5], thetas=[0.3], cv=2).fit(X, y)
    assert type(cv.best_estimator_) is ODMClassifier
    assert cv.best_estimator_.method == "auto"
    assert cv.best_estimator_.certify()[0].ok


# ---------------------------------------------------------------------------------------
# no silent wrong answer in the refit, on raw (unscaled) data
# ---------------------------------------------------------------------------------------
def _breast_cancer_raw(m=80, seed=0):
    """A stratified subsample of scikit-learn's breast_cancer, features as shipped (up to
    ~4,000: Gram entries ~1e7 linear, far beyond under a polynomial kernel)."""
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    rng = np.random.default_rng(seed)
    rows = np.concatenate([rng.choice(np.flatnonzero(y == c), m // 2, replace=False)
                           for c in (0, 1)])
    return X[rows], y[rows]


_POLY = {"kernel": "poly", "degree": 2, "coef0": 1.0}


@pytest.mark.parametrize("cls, grid, kernel", [
    (SVMClassifierCV, {"Cs": [2.0 ** 16, 2.0 ** 20], "fit_intercept": False},
     {**_POLY, "gamma": "scale"}),
    (SVMClassifierCV, {"Cs": [2.0 ** 16, 2.0 ** 20]}, {**_POLY, "gamma": 1e-3}),
    (LDMClassifierCV, {"Cs": [2.0 ** 16, 2.0 ** 20], "lam1s": [2.0 ** -8],
                       "lam2s": [2.0 ** -8]}, {"kernel": "rbf", "gamma": "scale"}),
    (LDMClassifierCV, {"Cs": [2.0 ** 16, 2.0 ** 20], "lam1s": [2.0 ** -8],
                       "lam2s": [2.0 ** -2]}, {**_POLY, "gamma": 1e-3}),
    (ODMLClassifierCV, {"lams": [2.0 ** 16, 2.0 ** 20], "mu1s": [1.0], "mu2s": [1.0]},
     {**_POLY, "gamma": "scale"}),
    (ODMLClassifierCV, {"lams": [2.0 ** 16, 2.0 ** 20], "mu1s": [1.0], "mu2s": [1.0]},
     {"kernel": "linear"}),
    (ODMClassifierCV, {"lams": [2.0 ** 16, 2.0 ** 20], "mus": [0.8], "thetas": [0.2]},
     {"kernel": "linear"}),
], ids=["svm-poly", "svm-b-poly-1e-3", "ldm-rbf", "ldm-poly-1e-3", "odml-poly", "odml-linear",
        "odm-linear"])
def test_cv_refit_is_trusted_on_raw_features(cls, grid, kernel):
    """The refit of a CV estimator on raw breast_cancer (lambda / C of 2^16 or 2^20, so the
    refit is at the weak end of the papers' grids): each of its
    solutions that says ``optimal`` certifies; any other says so with a ConvergenceWarning
    (the folds' paths silence theirs; the refit's reach the caller). A ``SolverError``
    (a factorisation failing at this scale) is an honest refusal."""
    from sklearn.exceptions import ConvergenceWarning

    from refmodels.solution import SolverError

    X, y = _breast_cancer_raw()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            cv = cls(cv=2, random_state=0, **grid, **kernel).fit(X, y)
        except SolverError:
            return
    est = cv.best_estimator_
    warned = any(issubclass(w.category, ConvergenceWarning) for w in caught)
    assert len(est.solutions_) == len(est.problems_) >= 1
    for prob, sol in zip(est.problems_, est.solutions_):
        if sol.status == "optimal":
            cert = prob.certify(sol, reference=False)
            assert cert.ok, f"silent wrong answer in the refit {cv.best_params_}\n{cert}"
        else:
            assert warned, f"refit {cv.best_params_}: status {sol.status!r} without a warning"


def test_fold_fits_that_did_not_converge_are_reported_once():
    """Each fold's own ConvergenceWarning is silenced inside the paths; the search says once
    how many fold fits missed the certificate's tolerance, and cv_results_ says where."""
    from sklearn.exceptions import ConvergenceWarning

    X, y = _binary(m=80, d=3, seed=5)
    # (not lam = 1: from w = 0 every margin stays below the band there, the loss is one
    # quadratic, and TRON's first Newton step, exact with the formed Hessian, is optimal)
    kw = dict(lams=[16.0, 1024.0], mus=[0.5], thetas=[0.3], cv=2, refit=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        ok = ODMClassifierCV(kernel="linear", **kw).fit(X, y)           # converges: no warning
    assert np.array_equal(ok.cv_results_["n_fits_not_optimal"], [0, 0])
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        bad = ODMClassifierCV(kernel="linear", **kw, max_iter=1).fit(X, y)
    ours = [w for w in rec if issubclass(w.category, ConvergenceWarning)]
    assert len(ours) == 1 and "fold fits did not reach" in str(ours[0].message), \
        [str(w.message) for w in rec]
    n_bad = bad.cv_results_["n_fits_not_optimal"]
    assert n_bad.shape == (2,) and np.all(n_bad >= 1) and np.all(n_bad <= 2)


def _through_fast_path(monkeypatch):
    """Linear ODM's fold paths run by fast.odm.linear_tron_path (no fast.solve per point):
    the tests of the error machinery route them through fast.path, as every other family."""
    import fast.cv

    monkeypatch.setattr(fast.cv, "_lean", lambda *a, **k: False)


def test_a_path_that_raises_solver_error_scores_nan_and_ranks_last(monkeypatch):
    """A SolverError (a solver's honest refusal, e.g. a factorisation failing at the data's
    scale) in one fold path no longer aborts the search: its candidates score NaN there and
    rank last, with one FitFailedWarning, as GridSearchCV's error_score=np.nan; all paths
    failing is an error."""
    from sklearn.exceptions import FitFailedWarning

    import sys

    from refmodels import SolverError

    fp = sys.modules["fast.path"]           # (fast.path is also the function's name)
    real = fp.path

    def refuses_mu_08(prob, **kw):
        if prob.mu == 0.8:
            raise SolverError("refused for the test")
        return real(prob, **kw)

    monkeypatch.setattr(fp, "path", refuses_mu_08)
    _through_fast_path(monkeypatch)
    X, y = _binary(m=80, d=3, seed=6)
    kw = dict(lams=[1.0, 16.0], mus=[0.5, 0.8], thetas=[0.3], cv=2)
    with pytest.warns(FitFailedWarning, match="2 of the 4 fold paths met a SolverError"):
        cv = ODMClassifierCV(kernel="linear", **kw).fit(X, y)
    mus = np.asarray(cv.cv_results_["param_mu"])
    assert np.all(np.isnan(cv.cv_results_["mean_test_score"][mus == 0.8]))
    assert np.all(np.isfinite(cv.cv_results_["mean_test_score"][mus == 0.5]))
    assert np.all(cv.cv_results_["rank_test_score"][mus == 0.8]
                  > cv.cv_results_["rank_test_score"][mus == 0.5].max())
    assert cv.best_params_["mu"] == 0.5 and hasattr(cv, "best_estimator_")
    with pytest.raises(ValueError, match="Every fit of the 2 fold paths failed"):
        ODMClassifierCV(kernel="linear", lams=[1.0], mus=[0.8], thetas=[0.3], cv=2).fit(X, y)


def test_a_solver_error_at_one_grid_value_scores_that_value_nan(monkeypatch):
    """fast.path goes on past a SolverError at one value (a point of status 'error'): the
    search scores that value NaN in every fold, ranks it last, and keeps the others."""
    from sklearn.exceptions import FitFailedWarning

    import fast as fast_pkg
    from refmodels import SolverError

    real = fast_pkg.solve

    def refuses_lam_16(prob, *a, **kw):
        if getattr(prob, "lam", None) == 16.0:
            raise SolverError("refused for the test")
        return real(prob, *a, **kw)

    monkeypatch.setattr(fast_pkg, "solve", refuses_lam_16)
    _through_fast_path(monkeypatch)
    X, y = _binary(m=80, d=3, seed=6)
    with pytest.warns(FitFailedWarning, match="met a SolverError"):
        cv = ODMClassifierCV(kernel="linear", lams=[1.0, 16.0, 256.0], mus=[0.5], thetas=[0.3],
                             cv=2).fit(X, y)
    lams = np.asarray(cv.cv_results_["param_lam"], float)
    scores = cv.cv_results_["mean_test_score"]
    assert np.all(np.isnan(scores[lams == 16.0])) and np.all(np.isfinite(scores[lams != 16.0]))
    assert cv.cv_results_["rank_test_score"][lams == 16.0].min() == 3
    assert cv.best_params_["lam"] != 16.0


# ---------------------------------------------------------------------------------------
# linear ODM's fold paths checked in place (fast.odm.linear_tron_path)
# ---------------------------------------------------------------------------------------
def test_lean_path_points_that_pass_are_certified():
    """A point of linear_tron_path that passes its in-place check is certified by the
    problem's own certificate, on scaled and on raw (x 1e3, x 1e-3) features, across the
    seeds' lam grid; the check is not vacuous: a point moved off the optimum fails it."""
    import refmodels as rm
    from fast.odm import linear_tron_path

    lams = [2.0 ** k for k in range(0, 21, 2)]
    n_pass = 0
    for seed, scale in ((0, 1.0), (1, 1e3), (2, 1e-3), (3, 30.0)):
        X, y = _binary(m=120, d=4, seed=seed)
        X = X * scale
        for mu, th in ((0.2, 0.2), (0.8, 0.8)):
            prob = rm.ODM(X, y, lam=1.0, mu=mu, theta=th)
            W, passed, secs = linear_tron_path(prob, lams)
            assert W.shape == (len(lams), 4) and secs.shape == (len(lams),)
            for k, lam in enumerate(lams):
                if not passed[k]:
                    continue
                n_pass += 1
                p = rm.ODM(X, y, lam=lam, mu=mu, theta=th)
                assert p.certify(_point(p, W[k]), reference=False).ok, (seed, mu, th, lam)
    assert n_pass >= 0.75 * 4 * 2 * len(lams)
    # moved off the optimum by 1e-4: the check refuses it
    X, y = _binary(m=120, d=4, seed=0)
    prob = rm.ODM(X, y, lam=64.0, mu=0.5, theta=0.3)
    W, passed, _ = linear_tron_path(prob, [64.0])
    assert passed[0]
    from fast.odm import _linear_check
    u = np.empty(4)
    c = 64.0 / (120 * 0.7 ** 2)
    P, D, stat = _linear_check(np.ascontiguousarray(X, float), prob.y, W[0] * (1 + 1e-4),
                               c, 0.5, 0.3, u)
    assert abs(P - D) > 1e-7 * (abs(P) + prob.objective_unit) \
        or stat > 1e-7 * (1 + np.linalg.norm(W[0]))


def _point(prob, w):
    import refmodels as rm

    g = prob.y * (prob.X @ w)
    a = prob.m * (1.0 - prob.theta) ** 2 / (2.0 * prob.lam)
    return rm.Solution(objective=prob.primal_value(w), coef=None, intercept=0.0,
                       variables={"w": w, "zeta": np.maximum(0, 1 - prob.theta - g) / a,
                                  "beta": prob.mu * np.maximum(0, g - 1 - prob.theta) / a},
                       status="optimal", solver="test", form="fast")


@pytest.mark.parametrize("scale, classes", [(1.0, (2, 3)), (1e3, (2,))])
def test_lean_paths_give_the_table_of_fast_path(monkeypatch, scale, classes):
    """ODMClassifierCV with its in-place checked paths and routed through fast.path (a
    Solution and a self-check per point) give the same cv_results_ (scores, fits not
    optimal), binary and one-vs-rest; a point that fails its check sends the path through
    fast.path, with the same table. (On raw features, x 1e3, binary only: its DCD points
    are the slow ones, and one-vs-rest runs the same paths once per class.)"""
    import fast.cv
    import fast.odm

    X, y = _binary(m=150, d=5, seed=7)
    X = X * scale
    y3 = np.digitize(X @ np.arange(1.0, 6.0), np.quantile(X @ np.arange(1.0, 6.0), [1 / 3, 2 / 3]))
    # (random_state: fast.path's DCD points, on raw features, visit coordinates at random)
    kw = dict(lams=[1.0, 16.0, 1024.0, 2.0 ** 20], mus=[0.3, 0.8], thetas=[0.2, 0.7], cv=3,
              refit=False, random_state=0)
    for target in [{2: y, 3: y3}[k] for k in classes]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lean = ODMClassifierCV(kernel="linear", **kw).fit(X, target).cv_results_
            with monkeypatch.context() as mp:
                mp.setattr(fast.cv, "_lean", lambda *a, **k: False)
                full = ODMClassifierCV(kernel="linear", **kw).fit(X, target).cv_results_
            with monkeypatch.context() as mp:
                calls = []
                real = fast.odm.linear_tron_path

                def one_fails(prob, lams):
                    W, passed, secs = real(prob, lams)
                    calls.append(1)
                    passed[len(calls) % len(lams)] = False
                    return W, passed, secs
                mp.setattr(fast.odm, "SOLVERS", fast.odm.SOLVERS._replace(lean_path=one_fails))
                fallback = ODMClassifierCV(kernel="linear", **kw).fit(X, target).cv_results_
                assert calls
        for res in (lean, fallback):
            np.testing.assert_allclose(res["mean_test_score"], full["mean_test_score"],
                                       atol=1e-12)
            np.testing.assert_array_equal(res["n_fits_not_optimal"], full["n_fits_not_optimal"])


def test_small_folds_run_with_one_blas_thread(monkeypatch):
    """A fold of at most ONE_BLAS_THREAD_MAX_M rows runs its path with one BLAS thread (its
    small factorisations; the search's parallelism is its tasks); a larger one as set."""
    from threadpoolctl import threadpool_info

    import fast.cv as fcv

    seen = []

    def record(*args):
        seen.append(max((p["num_threads"] for p in threadpool_info()
                         if p["user_api"] == "blas"), default=1))
        return np.ones(len(args[9])), np.zeros(len(args[9])), np.zeros(len(args[9])), \
            np.zeros(len(args[9]), dtype=np.int64), None

    monkeypatch.setattr(fcv, "_fold_path_in", record)
    X = np.random.default_rng(0).normal(size=(60, 3))
    args = (None, None, X, None, None, None, None, None, "lam", [1.0, 2.0])
    fcv._fold_path(*args)
    monkeypatch.setattr(fcv, "ONE_BLAS_THREAD_MAX_M", 10)
    fcv._fold_path(*args)
    outside = max((p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"),
                  default=1)
    assert seen[0] == 1
    assert seen[1] == outside
