"""The regularized intercept of ODM, ODML and LDM (``fit_intercept``: a constant feature
``s``, LIBLINEAR's ``-B`` and LIBODM's ``-b``), in both layers."""
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from contract import solve_trusted
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import binary_data, keel

import fast
import refmodels as rm
from refmodels import formats
from refmodels.kernels import RBF, Linear, Polynomial, Precomputed, WithBias

FAMILIES = {"ODM": dict(lam=16.0, mu=0.5, theta=0.3), "ODML": dict(lam=40.0, mu1=0.2, mu2=0.1),
            "LDM": dict(C=1.0, lam1=0.05, lam2=0.05)}


def _data(m=60, d=4, seed=0, offset=0.0):
    """Two classes that a hyperplane through the origin does not separate (features in
    [0, 1] plus ``offset``): what an intercept is for."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(m, d)) + offset
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=m) > 0.5 + offset, 1, -1)
    y[0], y[-1] = 1, -1
    return X, y


# ---- the kernel of the feature map [phi(x); s] --------------------------------------------
@pytest.mark.parametrize("inner", [RBF(0.7), Polynomial(2, 0.5, 1.0)])
def test_withbias_adds_s2(inner):
    X, _ = _data(12)
    Z = X[:5] * 1.3
    k = WithBias(inner, 1.5)
    np.testing.assert_allclose(k.cross(X, Z), inner.cross(X, Z) + 2.25, rtol=0, atol=1e-13)
    np.testing.assert_allclose(k.gram(X), inner.gram(X) + 2.25, rtol=0, atol=1e-13)
    np.testing.assert_allclose(k.diag(X), inner.diag(X) + 2.25, rtol=0, atol=1e-13)
    assert k.map_data(X) is X and not k.is_linear and not k.is_precomputed


def test_withbias_linear_and_precomputed_carry_the_constant_in_the_data():
    X, _ = _data(12)
    k = WithBias(Linear(), 2.0)
    Xa = k.map_data(X)
    assert Xa.shape == (12, 5) and np.all(Xa[:, -1] == 2.0) and k.is_linear
    np.testing.assert_allclose(k.gram(Xa), X @ X.T + 4.0, atol=1e-13)
    Xs = k.map_data(sp.csr_matrix(X))
    assert sp.issparse(Xs) and np.allclose(Xs.toarray(), Xa)
    G = RBF(0.5).gram(X)
    kp = WithBias(Precomputed(), 2.0)
    assert kp.is_precomputed
    np.testing.assert_allclose(kp.gram(kp.map_data(G)), G + 4.0)
    assert WithBias(RBF(0.5), 2.0) == WithBias(RBF(0.5), 2.0)
    assert hash(WithBias(RBF(0.5), 2.0)) == hash(WithBias(RBF(0.5), 2.0))
    assert WithBias(RBF(0.5), 2.0) != WithBias(RBF(0.5), 1.0)


@pytest.mark.parametrize("args, match", [((RBF(), 0.0), "scaling"), ((RBF(), -1.0), "scaling"),
                                         ((RBF(), np.nan), "scaling"), (("rbf", 1.0), "Kernel"),
                                         ((WithBias(RBF(), 1.0), 1.0), "bias feature")])
def test_withbias_bad_arguments(args, match):
    with pytest.raises(ValueError, match=match):
        WithBias(*args)


# ---- the problems ---------------------------------------------------------------------------
@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("kernel", ["linear", "rbf", "poly", "precomputed"])
def test_intercept_is_the_family_on_the_augmented_map(family, kernel):
    """fit_intercept=True is the family on [phi(x); s] (the same optimum as the family
    without intercept on the augmented data or the Gram K + s^2), certified in both layers;
    the intercept is s w_b = s^2 sum(coef) and the decision function is
    sum_i coef_i k(x_i, x) + intercept with the user's kernel."""
    cls, hyper, s = getattr(rm, family), FAMILIES[family], 1.5
    X, y = _data(50, 4, seed=3)
    Xn = _data(7, 4, seed=4)[0]
    base = {"linear": Linear(), "rbf": RBF(0.8), "poly": Polynomial(2, 1.0, 1.0),
            "precomputed": Precomputed()}[kernel]
    Xin = RBF(0.8).gram(X) if kernel == "precomputed" else X
    Kn = RBF(0.8).cross(Xn, X) if kernel == "precomputed" else Xn
    prob = cls(Xin, y, kernel=base, fit_intercept=True, intercept_scaling=s, **hyper)
    assert prob.fit_intercept and prob.intercept_scaling == s and prob.base_kernel == base
    if kernel == "linear":
        twin = cls(np.hstack([X, np.full((50, 1), s)]), y, **hyper)
    else:
        twin = cls(prob.gram, y, kernel=Precomputed(), **hyper)
    ref, ref_twin = prob.solve(), twin.solve()
    assert abs(ref.objective - ref_twin.objective) <= 1e-7 * (1 + abs(ref.objective))
    without = cls(Xin, y, kernel=base, **hyper).solve()
    assert ref.objective < without.objective          # the intercept is used here
    sol = fast.solve(prob)
    for point in (ref, sol):
        assert point.status == "optimal"
        assert prob.certify(point).ok
        np.testing.assert_allclose(point.intercept, s * s * np.sum(point.coef),
                                   rtol=1e-6, atol=1e-8)
        K = base.cross(Xin, Kn) if kernel != "precomputed" else Kn.T
        np.testing.assert_allclose(prob.decision_function(point, Kn),
                                   K.T @ point.coef + point.intercept, rtol=1e-9, atol=1e-9)
    if kernel == "linear":
        w = sol.variables["w"]
        assert w.shape == (5,) and sol.intercept == pytest.approx(s * w[-1])
        np.testing.assert_allclose(prob.decision_function(sol, Xn), Xn @ w[:4] + sol.intercept)
    assert abs(ref.intercept - sol.intercept) <= 1e-5 * (1 + abs(ref.intercept))


@pytest.mark.parametrize("method, options", [("dcd", {}), ("svrg", {"max_iter": 5000}),
                                             ("tron", {}), ("auto", {})])
def test_odm_linear_methods(method, options):
    X, y = _data(80, 5, seed=5)
    for Xin in (X, sp.csr_matrix(X)):
        prob = rm.ODM(Xin, y, lam=64.0, mu=0.5, theta=0.3, fit_intercept=True,
                      intercept_scaling=2.0)
        if sp.issparse(Xin) and method == "svrg":
            continue
        sol = fast.solve(prob, method=method, **options)
        assert sol.status == "optimal" and prob.certify(sol).ok, method
        assert sol.intercept == pytest.approx(2.0 * sol.variables["w"][-1])


@pytest.mark.parametrize("family, method, options", [
    ("ODM", "dcd", {"path": "cache", "cache_size": 0.05}), ("ODM", "dcd", {"path": "gram"}),
    ("ODM", "newton", {"path": "cache"}), ("ODM", "newton", {}),
    ("LDM", "smo", {"cache_size": 0.05}), ("LDM", "dcd", {}), ("ODML", "smo", {}),
    ("ODML", "asgd", {})])
def test_kernel_methods_and_cache_paths(family, method, options):
    """The kernel rows of the bounded cache (numba) carry the + s^2 of the bias feature as
    the Gram does."""
    X, y = _data(120, 4, seed=6)
    kernel = "linear" if method == "asgd" else RBF(0.5)
    prob = getattr(rm, family)(X, y, kernel=kernel, fit_intercept=True, intercept_scaling=1.5,
                               **FAMILIES[family])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sol = fast.solve(prob, method=method, **options)
    cert = prob.certify(sol, reference=False)
    if method == "asgd":          # a stochastic method: honest, not necessarily optimal
        assert sol.status == "optimal" or caught
        assert cert.ok or sol.status != "optimal"
        return
    assert sol.status == "optimal" and cert.ok, (family, method, str(cert))


@settings(max_examples=12)
@given(data=binary_data(max_m=30, max_d=5), family=st.sampled_from(sorted(FAMILIES)),
       s=st.sampled_from([0.1, 1.0, 10.0]))
def test_trust_at_every_scale(data, family, s):
    """At every scale (raw, tiny, offset, near-duplicate features), the reference and the fast
    solver are trusted: optimal and certified, or an honest refusal, and two certified
    answers agree."""
    X, y, kernel, scale = data
    prob = getattr(rm, family)(X, y, kernel=kernel, fit_intercept=True, intercept_scaling=s,
                               **FAMILIES[family])
    solve_trusted(prob, scale, lambda: prob.solve(), lambda: fast.solve(prob))


def test_rescaled_rung_maps_back_with_the_intercept():
    """The reference's last rung (features / sqrt(s)) on a problem with a bias feature: the
    constant column is rescaled with the others, the point mapped back certifies here."""
    X, y = _data(40, 3, seed=7)
    X = X * 100.0                           # Gram scale 1e4 (linear), 1e8 (quadratic)
    for kernel in ("linear", Polynomial(2, 1.0, 1.0)):
        prob = rm.ODM(X, y, lam=4.0, mu=0.5, theta=0.3, kernel=kernel, fit_intercept=True)
        s = prob.gram_scale()
        twin = prob._rescaled(s)
        assert not twin.fit_intercept
        sol = prob._map_back(twin.solve(), s)
        cert = prob.certify(sol, reference=False)
        assert cert.ok, str(cert)
        assert sol.intercept == pytest.approx(prob.intercept_of(sol))


def test_solution_from_and_the_intercept_check():
    X, y = _data(50, 3, seed=8)
    prob = rm.ODM(X, y, lam=16.0, mu=0.5, theta=0.3, fit_intercept=True, intercept_scaling=2.0)
    ref = prob.solve()
    w = ref.variables["w"]
    user = prob.solution_from(w=w[:3], intercept=ref.intercept)    # d weights + intercept
    np.testing.assert_allclose(user.variables["w"], w)
    assert prob.certify(user).ok
    assert prob.certify(prob.solution_from(coef=ref.coef)).ok    # intercept derived
    bad = prob.solution_from(coef=ref.coef, intercept=ref.intercept + 0.5)
    cert = prob.certify(bad)
    assert not cert.ok and cert.worst[0] == "intercept = s w_b"
    with pytest.raises(ValueError, match="w_b last"):
        prob.certify(rm.Solution(objective=0.0, coef=None, variables={"w": w[:3]}))
    with pytest.raises(ValueError, match="3 features"):
        prob.decision_function(ref, np.ones((2, 4)))


def test_bad_arguments():
    X, y = _data(20, 3)
    for kw, match in ((dict(fit_intercept=1), "fit_intercept"),
                      (dict(fit_intercept=True, intercept_scaling=0.0), "intercept_scaling"),
                      (dict(fit_intercept=True, intercept_scaling=np.inf), "intercept_scaling")):
        with pytest.raises(ValueError, match=match):
            rm.ODM(X, y, **kw)
    with pytest.raises(ValueError, match="intercept_scaling must be the scaling"):
        rm.LDM(X, y, kernel=WithBias(RBF(), 2.0), fit_intercept=True, intercept_scaling=1.0)
    with pytest.raises(ValueError, match="last column"):
        rm.ODML(X, y, kernel=WithBias(Linear(), 1.0), fit_intercept=True)


def test_round_trip_through_the_constructor_and_paths():
    """A problem rebuilt from its own attributes (fast.path's with_params) is the same
    problem: the constant is not appended twice; every point of a path certifies."""
    from fast.path import with_params

    X, y = _data(60, 4, seed=9)
    for kernel in ("linear", RBF(0.5)):
        prob = rm.ODM(X, y, lam=4.0, mu=0.5, theta=0.3, kernel=kernel, fit_intercept=True)
        again = with_params(prob, lam=4.0)
        assert again.X.shape == prob.X.shape and again.kernel == prob.kernel
        lams = [1.0, 8.0, 64.0]
        sols = fast.path(prob, lam=lams)
        for v, sol in zip(lams, sols):
            assert sol.status == "optimal"
            assert with_params(prob, lam=v).certify(sol).ok
            assert sol.intercept == pytest.approx(prob.intercept_of(sol))


# ---- estimators ----------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["ODMClassifier", "ODMLClassifier", "LDMClassifier"])
def test_estimators_default_to_the_intercept(name):
    cls = getattr(fast, name)
    assert cls().fit_intercept is True and cls().intercept_scaling == 1.0
    X, y = _data(80, 4, seed=10, offset=5.0)         # far from the origin
    with_b = cls(kernel="linear").fit(X, y)
    without = cls(kernel="linear", fit_intercept=False).fit(X, y)
    assert with_b.coef_.shape == (1, 4)
    assert all(c.ok for c in with_b.certify())
    assert with_b.intercept_[0] != 0.0 and without.intercept_[0] == 0.0
    np.testing.assert_allclose(with_b.decision_function(X),
                               X @ with_b.coef_[0] + with_b.intercept_[0], rtol=1e-9, atol=1e-9)
    # (w, w_b = 0) is a point of the problem with the bias feature: its optimum is no worse
    assert with_b.solutions_[0].objective < without.solutions_[0].objective


def test_estimator_multiclass_kernel():
    from sklearn.datasets import load_iris
    from sklearn.preprocessing import MinMaxScaler

    X, y = load_iris(return_X_y=True)
    X = MinMaxScaler().fit_transform(X)
    est = fast.ODMClassifier().fit(X, y)
    assert all(c.ok for c in est.certify())
    for prob, sol in zip(est.problems_, est.solutions_):
        assert prob.fit_intercept and sol.intercept == pytest.approx(prob.intercept_of(sol))
    assert est.score(X, y) > 0.9


def test_cv_with_the_intercept_matches_gridsearch():
    from sklearn.model_selection import GridSearchCV

    X, y = _data(120, 4, seed=11, offset=3.0)
    grid = {"lam": [1.0, 16.0, 256.0], "mu": [0.2, 0.8], "theta": [0.2]}
    cv = fast.ODMClassifierCV(kernel="linear", lams=grid["lam"], mus=grid["mu"],
                              thetas=grid["theta"], cv=3).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gs = GridSearchCV(fast.ODMClassifier(kernel="linear"), grid, cv=3).fit(X, y)
    np.testing.assert_allclose(cv.cv_results_["mean_test_score"],
                               gs.cv_results_["mean_test_score"], atol=1.0 / len(y) + 1e-12)
    assert cv.best_estimator_.fit_intercept
    kcv = fast.ODMLClassifierCV(kernel="rbf", lams=[1.0, 64.0], mu1s=[0.25], mu2s=[0.25],
                                gammas=["scale"], cv=3).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        kgs = GridSearchCV(fast.ODMLClassifier(kernel="rbf"),
                           {"lam": [1.0, 64.0], "mu1": [0.25], "mu2": [0.25]}, cv=3).fit(X, y)
    np.testing.assert_allclose(kcv.cv_results_["mean_test_score"],
                               kgs.cv_results_["mean_test_score"], atol=1.0 / len(y) + 1e-12)


# ---- LIBODM -b -------------------------------------------------------------------------------
def test_libodm_bias_model_is_fit_intercept():
    """LIBODM's own -b model (linear, trust region; tests/data/libodm) certifies as
    ODM(X, fit_intercept=True) on the data as given, as it does as ODM on augment(X, 1)."""
    from sklearn.datasets import load_iris
    from sklearn.preprocessing import MinMaxScaler

    X, y = load_iris(return_X_y=True)
    keep = y > 0
    X, t = MinMaxScaler().fit_transform(X[keep]), np.where(y[keep] == 2, 1, -1)
    path = str(Path(__file__).parent / "data" / "libodm" / "iris_linear_bias.model")
    info = formats.model_info(path, "libodm")
    assert info["fit_intercept"] and info["intercept_scaling"] == 1.0
    prob = rm.ODM(X, t, lam=1.0, mu=0.5, theta=0.3, fit_intercept=True,
                  intercept_scaling=info["intercept_scaling"])
    sol = prob.solution_from(**formats.load_model(path, "libodm", X, t))
    assert prob.certify(sol, tol=1e-6, reference=False).ok
    Xa = formats.augment(X, 1.0)
    plain = rm.ODM(Xa, t, lam=1.0, mu=0.5, theta=0.3)
    assert plain.certify(plain.solution_from(**formats.load_model(path, "libodm", Xa, t)),
                         reference=False).ok
    # a model trained without the intercept is not the optimum of the problem with one
    est = fast.ODMClassifier(lam=1.0, kernel="linear", fit_intercept=False).fit(X, t)
    assert not prob.certify(prob.solution_from(w=est.coef_[0]), reference=False).ok


def test_keel_protocol_gains_from_the_intercept():
    """Seed 002's linear protocol (smaller grid) on a real set: the intercept is selected
    and certified."""
    X, y = keel("haberman", minmax=True)
    cv = fast.ODMClassifierCV(kernel="linear", lams=[1.0, 16.0, 256.0], mus=[0.4],
                              thetas=[0.4], cv=3).fit(X, y)
    est = cv.best_estimator_
    assert est.fit_intercept and all(c.ok for c in est.certify())


# ---- the command line ------------------------------------------------------------------------
def test_cli_certifies_a_solution_with_the_intercept(tmp_path, capsys):
    from refmodels.cli import main

    def run(argv):
        try:
            code = main([str(a) for a in argv])
        except SystemExit as exc:
            code = exc.code
        return code, capsys.readouterr()

    X, y = _data(80, 3, seed=12)
    data = tmp_path / "train.csv"
    np.savetxt(data, np.column_stack([X, y]), delimiter=",")
    prob = rm.ODM(X, y, lam=16.0, mu=0.5, theta=0.3, fit_intercept=True)
    sol = fast.solve(prob)
    good, bad = tmp_path / "good.npz", tmp_path / "bad.npz"
    np.savez(good, w=sol.variables["w"][:3], intercept=sol.intercept)
    np.savez(bad, w=sol.variables["w"][:3], intercept=sol.intercept + 0.3)
    base = ["certify", "--data", data, "--family", "ODM", "--param", "lam=16", "--param",
            "mu=0.5", "--param", "theta=0.3", "--no-reference"]
    code, out = run(base + ["--param", "fit_intercept=true", "--solution", good])
    assert code == 0 and "HOLDS" in out.out and "fit_intercept=True" in out.out
    code, out = run(base + ["--param", "fit_intercept=true", "--solution", bad])
    assert code == 1 and "FAILS" in out.out
    code, out = run(base + ["--solution", good])
    assert code == 2 and "fit_intercept=true" in out.err
