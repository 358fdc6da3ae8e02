"""Adapters (``refmodels.adapters.from_sklearn``) and model-file readers (``refmodels.formats``)
against the real libraries: scikit-learn, the ``fast`` estimators, LIBSVM and LIBLINEAR (the
``libsvm-official`` / ``liblinear-official`` packages, extra ``formats``; skipped without
them) and LIBODM (model files it wrote, in tests/data/libodm; LIBODM is not a package).

For every adapter, on five real data sets: a converged foreign solution certifies and an
early-stopped one fails, at the same tolerance.
"""
from __future__ import annotations

import functools
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import load_breast_cancer, load_digits, load_iris, load_wine
from sklearn.exceptions import ConvergenceWarning
from sklearn.kernel_ridge import KernelRidge
from sklearn.linear_model import Ridge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MinMaxScaler, StandardScaler
from sklearn.svm import SVC, LinearSVC, NuSVC

import refmodels as rm
from refmodels import formats
from refmodels.adapters import from_sklearn

DATASETS = ("breast_cancer", "iris", "wine", "digits", "heart")


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


# ---- round trips: five data sets, converged holds, early-stopped fails --------------------------
TOL = 1e-6

ROUND_TRIPS = {
    # name: (converged estimator, early-stopped estimator, certificate tolerance)
    "SVC-rbf": (lambda: SVC(kernel="rbf", C=1.0, tol=1e-8),
                lambda: SVC(kernel="rbf", C=1.0, tol=1e-8, max_iter=5), TOL),
    "NuSVC-rbf": (lambda: NuSVC(kernel="rbf", nu=0.3, tol=1e-8),
                  lambda: NuSVC(kernel="rbf", nu=0.3, tol=1e-8, max_iter=5), TOL),
    "LinearSVC-hinge": (lambda: LinearSVC(loss="hinge", C=0.1, tol=1e-8, max_iter=200000),
                        lambda: LinearSVC(loss="hinge", C=0.1, tol=1e-8, max_iter=2), TOL),
    # LinearSVC's defaults (the squared hinge, a regularized intercept, C = 1) at a tight tol
    "LinearSVC-default": (lambda: LinearSVC(tol=1e-10, max_iter=100000),
                          lambda: LinearSVC(tol=1e-10, max_iter=2), TOL),
    "Ridge": (lambda: Ridge(alpha=1.0, solver="cholesky"),
              lambda: Ridge(alpha=1.0, solver="sag", tol=1e-12, max_iter=2, random_state=0), TOL),
    "fast.SVMClassifier": (lambda: _fast("SVMClassifier")(),
                           lambda: _fast("SVMClassifier")(max_iter=1), TOL),
    "fast.ODMLClassifier": (lambda: _fast("ODMLClassifier")(),
                            lambda: _fast("ODMLClassifier")(max_iter=1), TOL),
    "fast.LDMClassifier": (lambda: _fast("LDMClassifier")(),
                           lambda: _fast("LDMClassifier")(max_iter=1), TOL),
    "fast.ODMClassifier": (lambda: _fast("ODMClassifier")(),
                           lambda: _fast("ODMClassifier")(max_iter=1), TOL),
    "fast.SVMmClassifier": (lambda: _fast("SVMmClassifier")(),
                            lambda: _fast("SVMmClassifier")(max_iter=1), TOL),
}


def _fast(name):
    import fast

    cls = getattr(fast, name)
    # the linear kernel whatever the estimator's default (kept fast for five data sets)
    return functools.partial(cls, kernel="linear")


@pytest.mark.parametrize("dataset", DATASETS)
@pytest.mark.parametrize("adapter", sorted(ROUND_TRIPS))
def test_round_trip(adapter, dataset):
    make_converged, make_early, tol = ROUND_TRIPS[adapter]
    X, y = data(dataset)
    good = certificate(fit(make_converged(), X, y), X, y, tol)
    assert good.ok, f"{adapter} on {dataset}: converged point fails\n{good}"
    early = fit(make_early(), X, y)
    bad = certificate(early, X, y, tol)
    if adapter.startswith("fast.") and bad.ok:
        # the fast solvers' Newton polish can land on the optimum within max_iter=1 (seen:
        # ODML on iris): then the point is the converged one, not an early-stopped one.
        np.testing.assert_allclose(early.decision_function(X), fit(make_converged(), X, y)
                                   .decision_function(X), rtol=1e-7, atol=1e-7)
    else:
        assert not bad.ok, f"{adapter} on {dataset}: early-stopped point holds\n{bad}"


@pytest.mark.parametrize("dataset", DATASETS)
@pytest.mark.parametrize("name", ["SVMClassifier", "ODMLClassifier", "LDMClassifier",
                                  "ODMClassifier", "SVMmClassifier"])
def test_fast_perturbed_point_fails(name, dataset):
    """A fast estimator's converged point, its coefficients scaled by 0.99, fails."""
    X, y = data(dataset)
    est = fit(_fast(name)(), X, y)
    est.dual_coef_ = 0.99 * est.dual_coef_
    assert not certificate(est, X, y, TOL).ok


@pytest.mark.parametrize("dataset", DATASETS)
def test_kernel_ridge_round_trip(dataset):
    """KernelRidge has no iterative solver (one Cholesky): no early stop exists. The fit
    certifies at 1e-10; its coefficients 1% off fail at 1e-6 (see also
    test_kernel_ridge_wrong_alpha_fails). A float32 fit, ~1e-7 off, still holds at 1e-10:
    DRM's certificate is a duality gap, quadratic in the distance to the optimum."""
    X, y = data(dataset)
    t = pm1(y)
    est = KernelRidge(alpha=1.0, kernel="rbf", gamma=0.5 / X.shape[1]).fit(X, t)
    prob, sol = from_sklearn(est, X, t)
    assert prob.certify(sol, tol=1e-10, reference=False).ok
    off = prob.solution_from(coef=0.99 * sol.coef)
    assert not prob.certify(off, tol=TOL, reference=False).ok


def test_kernel_ridge_wrong_alpha_fails():
    X, y = data("wine")
    t = pm1(y)
    est = KernelRidge(alpha=1.0, kernel="rbf", gamma=0.05).fit(X, t)
    est.set_params(alpha=2.0)                       # a mis-stated hyperparameter
    assert not certificate(est, X, t, TOL).ok


# ---- what each mapping means, checked against the library ---------------------------------------
def test_svc_layout_sign_and_intercept_match_decision_function():
    X, y = data("breast_cancer")
    labels = np.where(y == 1, "malignant?", "benign?")        # string labels: sorted order
    for kernel in ("linear", "rbf", "poly"):
        est = SVC(kernel=kernel, coef0=1.0, degree=2, tol=1e-8).fit(X, labels)
        prob, sol = from_sklearn(est, X, labels)
        assert list(prob.classes_) == list(est.classes_)
        assert sol.coef.shape == (X.shape[0],)            # full length over training points
        np.testing.assert_allclose(prob.decision_function(sol, X[:50]),
                                   est.decision_function(X[:50]), rtol=1e-9, atol=1e-9)
        np.testing.assert_array_equal(prob.predict(sol, X[:50]), est.predict(X[:50]))
        assert prob.C == est.C and prob.fit_intercept
        assert prob.certify(sol, tol=TOL, reference=False).ok


@pytest.mark.parametrize("gamma", ["scale", "auto", 0.07])
def test_svc_gamma_resolved_as_sklearn(gamma):
    X, y = data("wine")
    est = SVC(kernel="rbf", gamma=gamma, tol=1e-8).fit(X, y)
    prob, sol = from_sklearn(est, X, y)
    assert prob.kernel.gamma == pytest.approx(est._gamma, rel=1e-15)
    assert prob.certify(sol, tol=TOL, reference=False).ok


def test_svc_precomputed_and_default_tolerance():
    X, y = data("heart")
    G = X @ X.T
    est = SVC(kernel="precomputed", C=0.5, tol=1e-8).fit(G, y)
    prob, sol = from_sklearn(est, G, y)
    assert prob.kernel.is_precomputed
    cert = prob.certify(sol, tol=TOL)                   # with the reference optimum too
    assert cert.ok and "objective gap" in cert.residuals
    # scikit-learn's default tol=1e-3: fails at 1e-6, holds at the solver's own 1e-3
    loose = SVC(kernel="linear").fit(X, y)
    assert not certificate(loose, X, y, 1e-6).ok
    assert certificate(loose, X, y, 1e-3).ok


def test_nusvc_C_is_largest_dual_coefficient():
    X, y = data("breast_cancer")
    est = NuSVC(nu=0.2, kernel="rbf", tol=1e-8).fit(X, y)
    prob, sol = from_sklearn(est, X, y)
    assert prob.C == pytest.approx(np.abs(est.dual_coef_).max(), rel=1e-15)
    # the same C-SVM solved by SVC gives the same decision function
    svc = SVC(C=prob.C, kernel="rbf", tol=1e-10).fit(X, y)
    np.testing.assert_allclose(svc.decision_function(X), est.decision_function(X), atol=1e-5)
    est.dual_coef_ = np.zeros_like(est.dual_coef_)
    with pytest.raises(ValueError, match="does not determine C"):
        from_sklearn(est, X, y)


@pytest.mark.parametrize("dataset", DATASETS)
@pytest.mark.parametrize("scaling", [1.0, 3.0])
def test_linear_svc_default_is_odm_squared_hinge(dataset, scaling):
    """LinearSVC's default problem, 1/2 ||[w; w_b]||^2 + C sum max(0, 1 - y_i ([x_i; s]^T
    [w; w_b]))^2, is ODM's objective at theta = mu = 0 with lam = C m (checked by value, at
    the estimator's point and at a perturbed one), with the bias feature s."""
    X, y = data(dataset)
    t = pm1(y)
    est = fit(LinearSVC(C=0.7, tol=1e-10, max_iter=100000, intercept_scaling=scaling), X, y)
    prob, sol = from_sklearn(est, X, y)
    assert isinstance(prob, rm.ODM) and prob.mu == 0.0 and prob.theta == 0.0
    assert prob.lam == pytest.approx(0.7 * X.shape[0]) and prob.intercept_scaling == scaling
    w = np.r_[est.coef_[0], est.intercept_[0] / scaling]
    Xa = np.hstack([X, np.full((X.shape[0], 1), scaling)])
    for v in (w, w * 1.01 + 0.01):
        liblinear_obj = 0.5 * v @ v + 0.7 * np.sum(np.maximum(0.0, 1.0 - t * (Xa @ v)) ** 2)
        ours = prob.solution_from(w=v[:-1], intercept=v[-1] * scaling).objective
        assert ours == pytest.approx(liblinear_obj, rel=1e-12)
    np.testing.assert_allclose(prob.decision_function(sol, X), est.decision_function(X),
                               rtol=1e-10, atol=1e-10)
    # certified at C = 1, the default. (At C = 0.7, scaling 3 on heart, LIBLINEAR's primal
    # trust region, which dual="auto" picks when m > d, stops on its relative reduction
    # (1e-12 |f|) with the objective 2e-13 above the optimum and a gradient of 3.3e-6: the
    # certificate then fails at 1e-6, rightly.)
    est = fit(LinearSVC(tol=1e-10, max_iter=100000, intercept_scaling=scaling), X, y)
    prob, sol = from_sklearn(est, X, y)
    assert prob.certify(sol, tol=TOL, reference=False).ok
    # without the intercept
    est0 = fit(LinearSVC(C=0.7, tol=1e-10, max_iter=100000, fit_intercept=False), X, y)
    prob0, sol0 = from_sklearn(est0, X, y)
    assert not prob0.fit_intercept and prob0.certify(sol0, tol=TOL, reference=False).ok


# ---- multi-class models: one problem and one certificate per pair (or per class) ----------------
def keel_multiclass(name, max_m=None):
    """A multi-class KEEL set of validation/data/keel, MinMax-scaled, labels as strings;
    skipped when not in this checkout; subsampled to ``max_m`` rows (stratified, seed 0)."""
    root = Path(__file__).parents[1] / "validation" / "data" / "keel" / "balanced"
    path = root / f"{name}.dat"
    if not path.exists():
        pytest.skip(f"validation/data/keel/balanced/{name}.dat is not in this checkout")
    rows = [ln.split(",") for ln in path.read_text().splitlines()
            if ln.strip() and not ln.startswith("@")]
    X = MinMaxScaler().fit_transform(np.array([[float(v) for v in r[:-1]] for r in rows]))
    y = np.array([r[-1].strip() for r in rows])
    if max_m is not None and X.shape[0] > max_m:
        rng = np.random.default_rng(0)
        keep = np.sort(rng.choice(X.shape[0], max_m, replace=False))
        X, y = X[keep], y[keep]
    return X, y


@functools.lru_cache(maxsize=None)
def multiclass_data(name):
    if name == "iris":
        X, y = load_iris(return_X_y=True)
        return MinMaxScaler().fit_transform(X), y
    if name == "wine":
        X, y = load_wine(return_X_y=True)
        return StandardScaler().fit_transform(X), y
    if name == "digits":
        X, y = load_digits(return_X_y=True)
        return MinMaxScaler().fit_transform(X[:600]), y[:600]
    return keel_multiclass(name, max_m=400)


MULTICLASS_SETS = ("iris", "wine", "digits", "segment", "penbased", "vehicle")
#: LIBSVM keeps its kernel cache in single precision (see from_sklearn's Notes): NuSVC's
#: pair (opel, saab) of vehicle, whose C = 1/r is about 34, stalls at a duality gap of
#: 1.4e-6 whatever its tol (SVC at that C on that pair: 1.2e-6); its objective is 1.4e-6
#: relative above the reference optimum. The certificate is right to fail it.
_LIBSVM_FLOOR = {("NuSVC", "vehicle")}
MULTICLASS_TRIPS = {
    # defaults but a tight tol (converged) / the same stopped after a few iterations
    "SVC": (lambda: SVC(tol=1e-8), lambda: SVC(tol=1e-8, max_iter=5)),
    "NuSVC": (lambda: NuSVC(tol=1e-8), lambda: NuSVC(tol=1e-8, max_iter=5)),
    "LinearSVC": (lambda: LinearSVC(tol=1e-10, max_iter=100000),
                  lambda: LinearSVC(tol=1e-10, max_iter=2)),
}


@pytest.mark.parametrize("adapter, dataset", [
    pytest.param(a, d, marks=pytest.mark.xfail(strict=True, reason="LIBSVM's float kernel "
                                                "cache: a duality gap of 1.4e-6 at C = 34"))
    if (a, d) in _LIBSVM_FLOOR else (a, d)
    for a in sorted(MULTICLASS_TRIPS) for d in MULTICLASS_SETS])
def test_multiclass_round_trip(adapter, dataset):
    """Multi-class SVC / NuSVC (one-vs-one: one SVM per pair of classes) and LinearSVC
    (one-vs-rest: one ODM per class) at their defaults: converged, every certificate holds;
    stopped early, some fails. The pairs' decision values are the estimator's."""
    X, y = multiclass_data(dataset)
    make_good, make_early = MULTICLASS_TRIPS[adapter]
    est = fit(make_good(), X, y)
    probs, sols = from_sklearn(est, X, y)
    k = np.unique(y).size
    assert len(probs) == len(sols) == (k if adapter == "LinearSVC" else k * (k - 1) // 2)
    certs = probs.certify(sols, tol=TOL, reference=False)
    assert certs.ok, f"{adapter} on {dataset}\n{certs}"
    scores = np.column_stack([p.decision_function(s, X) for p, s in zip(probs, sols)])
    if adapter == "LinearSVC":
        np.testing.assert_allclose(scores, est.decision_function(X), rtol=1e-9, atol=1e-9)
    else:                                   # LIBSVM's one-vs-one values: positive = class i
        est.decision_function_shape = "ovo"
        np.testing.assert_allclose(scores, -est.decision_function(X), rtol=1e-8, atol=1e-8)
    early = fit(make_early(), X, y)
    bad = from_sklearn(early, X, y)
    assert not bad[0].certify(bad[1], tol=TOL, reference=False).ok, f"{adapter} {dataset}"


#: the estimators at their defaults but ``tol``: tight (converged) and loose (stopped early)
AT_DEFAULTS = {"SVC": (lambda: SVC(tol=1e-8), lambda: SVC(tol=0.1)),
               "NuSVC": (lambda: NuSVC(tol=1e-8), lambda: NuSVC(tol=0.1)),
               "LinearSVC": (lambda: LinearSVC(tol=1e-10, max_iter=100000),
                             lambda: LinearSVC(tol=0.1, max_iter=100000))}


@pytest.mark.parametrize("adapter", sorted(AT_DEFAULTS))
@pytest.mark.parametrize("dataset", DATASETS + MULTICLASS_SETS)
def test_defaults_certify_at_a_tight_tol_and_fail_at_a_loose_one(adapter, dataset):
    """SVC(), NuSVC() and LinearSVC() at their defaults on five binary and six multi-class
    real sets: run to a tight tol every certificate holds (but NuSVC's vehicle pair, see
    _LIBSVM_FLOOR), run to tol=0.1 some fails."""
    X, y = data(dataset) if dataset in DATASETS else multiclass_data(dataset)
    tight, loose = AT_DEFAULTS[adapter]
    # (a Problem and a Solution, or a ProblemSet and its Solutions: the same call)
    probs, sols = from_sklearn(fit(tight(), X, y), X, y)
    if (adapter, dataset) not in _LIBSVM_FLOOR:
        assert probs.certify(sols, tol=TOL, reference=False).ok, (adapter, dataset)
    probs, sols = from_sklearn(fit(loose(), X, y), X, y)
    assert not probs.certify(sols, tol=TOL, reference=False).ok, (adapter, dataset)


def test_multiclass_fast_estimators_and_the_containers():
    import fast

    X, y = multiclass_data("iris")
    for est in (fast.ODMClassifier(), fast.SVMClassifier(kernel="linear"),
                fast.LDMClassifier(kernel="linear", multi_class="ovr")):
        probs, sols = from_sklearn(fit(est, X, y), X, y)
        assert probs.scheme == ("ovr" if est.multi_class == "ovr" else "ovo")
        certs = probs.certify(sols, reference=False)
        assert certs.ok and len(certs) == 3 and certs.holds_at <= TOL
        assert "all hold" in str(certs) and certs.to_dict()["ok"]
        labels, name, value = certs.worst
        assert labels in probs.labels and abs(value) <= TOL
        est.dual_coef_ = est.dual_coef_ * 0.99
        probs, sols = from_sklearn(est, X, y)
        assert not probs.certify(sols, reference=False)
    with pytest.raises(ValueError, match="one Solution per problem"):
        probs.certify(sols[:2])
    with pytest.raises(ValueError, match="classes"):
        from_sklearn(fit(SVC(), X, y), X, np.where(y == 2, 1, y))


@pytest.mark.parametrize("scaling", [1.0, 10.0])
def test_linear_svc_regularized_intercept_is_an_augmented_column(scaling):
    X, y = data("iris")
    est = LinearSVC(loss="hinge", C=1.0, tol=1e-10, max_iter=500000,
                    intercept_scaling=scaling).fit(X, y)
    prob, sol = from_sklearn(est, X, y)
    assert prob.X.shape == (X.shape[0], X.shape[1] + 1) and not prob.fit_intercept
    np.testing.assert_array_equal(prob.X[:, -1], scaling)
    np.testing.assert_allclose(sol.w[-1] * scaling, est.intercept_[0])
    assert prob.certify(sol, tol=TOL, reference=False).ok
    # it is not SPEC's SVM with an (unregularized) intercept: that point does not certify
    svm_b = rm.SVM(X, y, C=1.0, fit_intercept=True)
    assert not svm_b.certify(svm_b.solution_from(w=est.coef_[0], intercept=est.intercept_[0]),
                             tol=TOL, reference=False).ok


def test_ridge_with_and_without_intercept_multi_target():
    X, y = data("digits")
    T = np.column_stack([pm1(y), X[:, 20]])
    for fit_intercept in (True, False):
        est = Ridge(alpha=0.5, fit_intercept=fit_intercept).fit(X, T)
        prob, sol = from_sklearn(est, X, T)
        assert sol.coef.shape == (X.shape[1], 2)
        assert prob.certify(sol, tol=1e-10).ok
    est.intercept_ = est.intercept_ + 1.0
    est.fit_intercept = True
    with pytest.raises(ValueError, match="intercept_"):
        from_sklearn(est, X, T)


def test_ridge_float32_fit_maps_and_certifies():
    """scikit-learn fits Ridge on float32 data in float32: its intercept_ is ybar - xbar^T coef_
    to float32 rounding only (it was refused at 1e-8); the point certifies, and an intercept
    1e-3 off is still refused."""
    X, t = load_breast_cancer(return_X_y=True)
    X32 = MinMaxScaler().fit_transform(X).astype(np.float32)   # xbar far from 0
    est = Ridge(alpha=1.0).fit(X32, t)
    assert est.coef_.dtype == np.float32
    prob, sol = from_sklearn(est, X32, t)
    assert prob.certify(sol, tol=TOL, reference=False).ok
    est.intercept_ = est.intercept_ + np.float32(1e-3)
    with pytest.raises(ValueError, match="intercept_"):
        from_sklearn(est, X32, t)


def test_kernel_ridge_kernels_and_prediction_identity():
    X, y = data("wine")
    t = pm1(y)
    for kw in ({"kernel": "linear"}, {"kernel": "poly", "degree": 2, "coef0": 1.0},
               {"kernel": "laplacian", "gamma": 0.1}):
        est = KernelRidge(alpha=0.3, **kw).fit(X, t)
        prob, sol = from_sklearn(est, X, t)
        assert prob.certify(sol, tol=1e-10).ok
    # the ridge prediction is t^T w_DRM(x) for SPEC §8's DRM(alpha=0, beta=alpha) at x
    drm = rm.DRM(X, y, X[:7], alpha=0.0, beta=0.3, kernel=rm.kernels.Linear())
    est = KernelRidge(alpha=0.3, kernel="linear").fit(X, t)
    np.testing.assert_allclose(drm.closed_form().coef.T @ t, est.predict(X[:7]), rtol=1e-9)


def test_pipeline_is_mapped_through_its_transforms():
    X, y = load_breast_cancer(return_X_y=True)
    pipe = make_pipeline(MinMaxScaler(), SVC(tol=1e-8)).fit(X, y)
    prob, sol = from_sklearn(pipe, X, y)
    assert prob.certify(sol, tol=TOL, reference=False).ok


def test_fast_estimator_rbf_and_string_labels():
    import fast

    X, y = data("wine")
    labels = np.where(y == 1, "b", "a")
    est = fast.SVMmClassifier(kernel="rbf").fit(X, labels)
    prob, sol = from_sklearn(est, X, labels)
    np.testing.assert_allclose(prob.decision_function(sol, X), est.decision_function(X),
                               atol=1e-10)
    assert prob.certify(sol, tol=TOL, reference=False).ok


# ---- refusals -----------------------------------------------------------------------------------
def test_refusals_name_the_rule():
    X, y = data("wine")
    cases = [
        (fit(LinearSVC(penalty="l1", dual=False), X, y), "penalty must be 'l2'"),
        (LinearSVC(loss="hinge", class_weight="balanced", max_iter=10), "class_weight"),
        (SVC(kernel="sigmoid").fit(X, y), "kernel"),
        (SVC(kernel="poly", coef0=-1.0).fit(X, y), "coef0 must be >= 0"),
        (SVC(class_weight={0: 2.0, 1: 1.0}).fit(X, y), "class_weight"),
        (SVC(), "must be fitted"),
        (fit(Ridge(positive=True), X, y), "positive"),
        (fit(KernelRidge(kernel="sigmoid", gamma=1.0, coef0=1.0), X, pm1(y)),
         "does not give a DRM"),
    ]
    for est, match in cases:
        if est.__class__ is LinearSVC and est.class_weight is not None:
            est = fit(est, X, y)
        with pytest.raises(ValueError, match=match):
            from_sklearn(est, X, y if not isinstance(est, KernelRidge) else pm1(y))
    with pytest.raises(ValueError, match="estimator must be one of"):
        from_sklearn(StandardScaler().fit(X), X, y)
    Xi, yi = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match="classes"):         # not the estimator's labels
        from_sklearn(SVC().fit(Xi, yi), Xi, np.where(yi == 2, 1, yi))
    est = SVC().fit(X, y)
    with pytest.raises(ValueError, match="training data"):
        from_sklearn(est, 2 * X, y)
    with pytest.raises(ValueError, match="training data"):
        from_sklearn(est, X[:-1], y[:-1])


# ---- model files --------------------------------------------------------------------------------
def _libsvm():
    return pytest.importorskip("libsvm.svmutil")


def _liblinear():
    return pytest.importorskip("liblinear.liblinearutil")


@pytest.mark.parametrize("dataset", DATASETS)
def test_libsvm_model_files(dataset, tmp_path):
    svmutil = _libsvm()
    X, y = data(dataset)
    yl = pm1(y) * 3 + 4                      # labels 1 and 7, in the file's first-seen order
    gamma = 1.0 / X.shape[1]
    for opts, ok in ((f"-c 1 -t 2 -g {gamma!r} -e 1e-10 -q", True),
                     (f"-c 1 -t 2 -g {gamma!r} -e 0.5 -q", False)):
        path = str(tmp_path / "svm.model")
        svmutil.svm_save_model(path, svmutil.svm_train(yl, sp.csr_matrix(X), opts))
        info = formats.model_info(path, "libsvm")
        assert info["kernel"] == rm.kernels.RBF(gamma=gamma) and info["fit_intercept"]
        prob = rm.SVM(X, yl, C=1.0, kernel=info["kernel"], fit_intercept=True)
        sol = prob.solution_from(**formats.load_model(path, "libsvm", X, yl))
        assert prob.certify(sol, tol=TOL, reference=False).ok is ok, opts


def test_libsvm_model_with_points_repeated_under_both_labels(tmp_path):
    """Real sets repeat a point under both labels (haberman does): each copy is a support
    vector at its bound, and the file's SV must go to the row of its own label (matching by
    features alone gave one row the other label's coefficient: a dual outside its box)."""
    svmutil = _libsvm()
    X, y = data("heart")
    y = pm1(y)
    i, j = np.flatnonzero(y > 0)[0], np.flatnonzero(y < 0)[0]
    X = np.vstack([X, X[i], X[j]])                 # X[i] now also with -1, X[j] also with +1
    y = np.concatenate([y, [-1.0, 1.0]])
    for order in (np.arange(len(y)), np.arange(len(y))[::-1]):
        Xo, yo = X[order], y[order]
        path = str(tmp_path / "dup.model")
        svmutil.svm_save_model(path, svmutil.svm_train(
            yo, sp.csr_matrix(Xo), f"-c 1 -t 2 -g {1.0 / X.shape[1]!r} -e 1e-10 -q"))
        prob = rm.SVM(Xo, yo, C=1.0, kernel=formats.model_info(path, "libsvm")["kernel"],
                      fit_intercept=True)
        sol = prob.solution_from(**formats.load_model(path, "libsvm", Xo, yo))
        assert np.all(sol.variables["alpha"] >= 0) and np.all(sol.variables["alpha"] <= 1.0)
        assert prob.certify(sol, tol=TOL, reference=False).ok


def test_libsvm_nu_svc_linear_and_precomputed(tmp_path):
    svmutil = _libsvm()
    X, y = data("heart")
    y = pm1(y)
    path = str(tmp_path / "nu.model")
    svmutil.svm_save_model(path, svmutil.svm_train(y, sp.csr_matrix(X),
                                                   "-s 1 -n 0.5 -t 0 -e 1e-10 -q"))
    info = formats.model_info(path, "libsvm")
    prob = rm.SVM(X, y, C=info["C"], fit_intercept=True)
    assert prob.certify(prob.solution_from(**formats.load_model(path, "libsvm", X, y)),
                        tol=TOL, reference=False).ok
    with pytest.raises(ValueError, match="matches no"):
        formats.load_model(path, "libsvm", X + 1.0, y)
    with pytest.raises(ValueError, match="labels"):
        formats.load_model(path, "libsvm", X, y + 5)
    # kernel_type precomputed: SV lines are "coef 0:k" with k the 1-based training index
    G = X @ X.T
    Gk = np.hstack([np.arange(1, X.shape[0] + 1)[:, None], G])
    path = str(tmp_path / "pre.model")
    svmutil.svm_save_model(path, svmutil.svm_train(y, Gk, "-t 4 -c 0.5 -e 1e-10 -q"))
    prob = rm.SVM(G, y, C=0.5, kernel=formats.model_info(path, "libsvm")["kernel"],
                  fit_intercept=True)
    assert prob.certify(prob.solution_from(**formats.load_model(path, "libsvm", G, y)),
                        tol=TOL, reference=False).ok


#: C per data set: the hinge problem is not trivial (not every alpha at C) and LIBLINEAR's
#: dual CD meets -e 1e-10 within its hard-coded 1000 passes.
LIBLINEAR_C = {"breast_cancer": 0.03, "iris": 0.1, "wine": 0.1, "digits": 0.01, "heart": 0.03}


def _seed_libc():
    """LIBLINEAR permutes with libc's rand(), never reseeded: seed it so a run is repeatable."""
    try:
        import ctypes

        ctypes.CDLL(None).srand(1)
    except (OSError, AttributeError):        # not glibc: the runs are merely not repeatable
        pass


@pytest.mark.parametrize("dataset", DATASETS)
def test_liblinear_model_files(dataset, tmp_path):
    liblinearutil = _liblinear()
    X, y = data(dataset)
    X = MinMaxScaler().fit_transform(X)
    C = LIBLINEAR_C[dataset]
    path = str(tmp_path / "lin.model")
    for bias in (None, 1.0):
        for eps, ok in ((1e-10, True), (2.0, False)):
            opts = f"-s 3 -c {C} -e {eps} -q" + ("" if bias is None else f" -B {bias}")
            _seed_libc()
            liblinearutil.save_model(path, liblinearutil.train(y.astype(float), sp.csr_matrix(X),
                                                               opts))
            info = formats.model_info(path, "liblinear")
            assert info["bias"] == bias
            Xa = X if bias is None else formats.augment(X, bias)
            prob = rm.SVM(Xa, y, C=C)
            sol = prob.solution_from(**formats.load_model(path, "liblinear", Xa, y))
            assert prob.certify(sol, tol=TOL, reference=False).ok is ok, opts
    with pytest.raises(ValueError, match="augment"):
        formats.load_model(path, "liblinear", X, y)


@pytest.mark.parametrize("dataset", DATASETS)
@pytest.mark.parametrize("solver", [1, 2])
def test_liblinear_squared_hinge_model_files(dataset, solver, tmp_path):
    """LIBLINEAR -s 1 (dual CD) and -s 2 (primal trust region), the squared hinge: ODM at
    theta = mu = 0 with lam = C m, the -B bias feature as fit_intercept on X itself (or
    ODM without intercept on augment(X, B)). Converged files certify; files stopped early
    (-e large) fail; -R (an unregularized bias, not recorded in the file) fails."""
    liblinearutil = _liblinear()
    X, y = data(dataset)
    X = MinMaxScaler().fit_transform(X)
    m, C = X.shape[0], 0.5
    path = str(tmp_path / "l2.model")
    loose = 1.0 if solver == 1 else 0.5
    for bias, eps, extra, ok in ((None, 1e-12, "", True), (2.0, 1e-12, "", True),
                                 (1.0, loose, "", False), (1.0, 1e-12, " -R", False)):
        if extra and solver == 1:
            continue                     # -R is a primal option (LIBLINEAR refuses -s 1 -R)
        opts = f"-s {solver} -c {C} -e {eps} -q" + ("" if bias is None else f" -B {bias}")
        _seed_libc()
        liblinearutil.save_model(path, liblinearutil.train(y.astype(float), sp.csr_matrix(X),
                                                           opts + extra))
        info = formats.model_info(path, "liblinear")
        assert info["family"] == "ODM" and info["mu"] == 0.0 and info["theta"] == 0.0
        assert info["fit_intercept"] is (bias is not None)
        prob = rm.ODM(X, y, lam=C * m, mu=info["mu"], theta=info["theta"],
                      fit_intercept=info["fit_intercept"],
                      intercept_scaling=info["intercept_scaling"])
        sol = prob.solution_from(**formats.load_model(path, "liblinear", X, y))
        assert prob.certify(sol, tol=TOL, reference=False).ok is ok, opts + extra
        if bias is not None:
            Xa = formats.augment(X, bias)
            plain = rm.ODM(Xa, y, lam=C * m, mu=0.0, theta=0.0)
            assert plain.certify(plain.solution_from(**formats.load_model(
                path, "liblinear", Xa, y)), tol=TOL, reference=False).ok is ok
    path = str(tmp_path / "lr.model")
    liblinearutil.save_model(path, liblinearutil.train(y.astype(float), X, "-s 0 -q"))
    with pytest.raises(ValueError, match="solver_type must be L2R_L1LOSS_SVC_DUAL"):
        formats.load_model(path, "liblinear", X, y)


def _write_libodm(path, X, coef=None, w=None, kernel_id=2, gamma=0.5):
    """A model file in LIBODM's save_model layout, from a point of refmodels.ODM: ``w`` on
    one line (linear kernel) or one line per non-zero coefficient, values with %.16g."""
    head = [f"instance {X.shape[0]}", f"feature {X.shape[1]}", "bias 0", "solver 0"]
    if w is not None:
        body = ["kernel 0", "w", " ".join(f"{v:.16g}" for v in w) + " "]
    else:
        nz = np.flatnonzero(coef)
        body = [f"kernel {kernel_id}", f"gamma {gamma:g}", f"total_sv {nz.size}", "sv"]
        for i in nz:
            feats = " ".join(f"{j + 1}:{v:.16g}" for j, v in enumerate(X[i]) if v != 0)
            body.append(f"{coef[i]:.16g} {feats} ")
    path.write_text("\n".join(head + body) + "\n")


@pytest.mark.parametrize("dataset", DATASETS)
def test_libodm_layout_round_trip(dataset, tmp_path):
    """LIBODM is not a package: files in its layout are written from fast.ODMClassifier points
    (converged, and stopped after one epoch): linear (``w``) on the five sets, kernel (SV
    lines matched to rows) on wine. See test_libodm_real_files for LIBODM's own files."""
    import fast

    X, y = data(dataset)
    t = pm1(y)
    path = tmp_path / "odm.model"
    kernels = ("linear", "rbf") if dataset == "wine" else ("linear",)
    for kernel in kernels:
        for max_iter, ok in ((None, True), (1, False)):
            est = fit(fast.ODMClassifier(lam=1.0, kernel=kernel, gamma=0.5, max_iter=max_iter,
                                         fit_intercept=False), X, t)
            if kernel == "linear":
                _write_libodm(path, X, w=est.coef_[0])
            else:
                _write_libodm(path, X, coef=est.dual_coef_[0], gamma=0.5)
            info = formats.model_info(str(path), "libodm")
            prob = rm.ODM(X, t, lam=est.lam, mu=est.mu, theta=est.theta, kernel=info["kernel"])
            sol = prob.solution_from(**formats.load_model(str(path), "libodm", X, t))
            cert = prob.certify(sol, tol=TOL, reference=False)
            if max_iter is None or not cert.ok:
                assert cert.ok is ok, (kernel, max_iter)
            else:    # the polish may finish within one epoch: then it is the optimum
                np.testing.assert_allclose(sol.objective, prob.solution_from(
                    coef=fit(fast.ODMClassifier(lam=1.0, kernel=kernel, gamma=0.5,
                                                fit_intercept=False), X, t)
                    .dual_coef_[0]).objective, rtol=1e-9)
    with pytest.raises(ValueError, match="-1/\\+1"):
        formats.load_model(str(path), "libodm", X, y + 5)


#: Model files written by LIBODM (version 200520) itself, kept as data (tests/data/libodm).
LIBODM_FILES = Path(__file__).parent / "data" / "libodm"


def test_libodm_real_files():
    """Model files written by LIBODM itself on iris (versicolor = -1, virginica = +1,
    MinMaxScaler), trained as ``libodm-train -s 0 -k 2 -g 2 -l 1 -m 0.5 -t 0.3 -e 1e-10``
    (converged, iris_rbf.model), the same with ``-e 2`` (stopped early, iris_rbf_loose.model)
    and ``-s 1 -k 0 -l 1 -m 0.5 -t 0.3 -e 1e-10 -b`` (trust region, linear, with LIBODM's
    bias feature, iris_linear_bias.model)."""
    X, y = data("iris")
    t = pm1(y)
    for name, ok in (("iris_rbf", True), ("iris_rbf_loose", False), ("iris_linear_bias", True)):
        path = str(LIBODM_FILES / f"{name}.model")
        info = formats.model_info(path, "libodm")
        Xa = X if info["bias"] is None else formats.augment(X, info["bias"])
        prob = rm.ODM(Xa, t, lam=1.0, mu=0.5, theta=0.3, kernel=info["kernel"])
        sol = prob.solution_from(**formats.load_model(path, "libodm", Xa, t))
        assert prob.certify(sol, tol=TOL, reference=False).ok is ok, name
    # the linear -b model on X itself is ODM with fit_intercept=True (tests/test_intercept.py);
    # X with neither its columns nor the augmented ones is refused
    with pytest.raises(ValueError, match="augment"):
        formats.load_model(str(LIBODM_FILES / "iris_linear_bias.model"), "libodm", X[:, :3], t)


def test_format_argument_errors(tmp_path):
    X, y = data("wine")
    with pytest.raises(ValueError, match="fmt must be one of"):
        formats.load_model("x", "svmlight", X, y)
    with pytest.raises(ValueError, match="readable"):
        formats.load_model(str(tmp_path / "missing"), "libsvm", X, y)
    bad = tmp_path / "bad.model"
    bad.write_text("svm_type epsilon_svr\nkernel_type rbf\nnr_class 2\ntotal_sv 0\nrho 0\nSV\n")
    with pytest.raises(ValueError, match="svm_type must be c_svc or nu_svc"):
        formats.load_model(str(bad), "libsvm", X, y)
    bad.write_text("svm_type\nkernel_type rbf\nnr_class 2\ntotal_sv 0\nrho 0\nSV\n")
    with pytest.raises(ValueError, match="header 'svm_type' has no value"):
        formats.load_model(str(bad), "libsvm", X, y)


def test_from_fast_carries_the_estimators_own_multipliers():
    """ODMClassifier on raw breast_cancer (the 'auto' default: TRON, then the DCD from its
    multipliers; a case of validation/sweep_adapters.py): its own certificate holds, and
    the round trip through from_sklearn carries the solver's multipliers, not only coef
    (multipliers derived from the margins leave stationarity 9e-3)."""
    from sklearn.datasets import load_breast_cancer

    fast = pytest.importorskip("fast")
    X, y = load_breast_cancer(return_X_y=True)
    clf = fast.ODMClassifier(kernel="linear").fit(X, y)
    assert clf.solutions_[0].status == "optimal"
    prob, sol = rm.from_sklearn(clf, X, y)
    assert all(sol.variables.get(k) is not None for k in prob.dual_names)
    assert prob.certify(sol, reference=False).ok
    bad = prob.solution_from(coef=-sol.coef, dual={k: sol.variables[k] for k in prob.dual_names})
    assert not prob.certify(bad, reference=False).ok     # coef is still checked against them
