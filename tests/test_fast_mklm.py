"""fast/mklm.py: MKLm / epsilon-MKL (SPEC §7, seed 003 eqs. 22-26) by reduced gradient on
the kernel weights with a warm-started SMO inside, against the reference (CVXPY QCQP dual,
polished) and the KKT certificate; a single base kernel is SVMm with halved boxes;
epsilon-MKL is MKLm(eps=0); the Newton Hessian against finite differences; warm starts,
statuses, warnings and bad input."""
import warnings

import numpy as np
import pytest
from hypothesis import given, note, strategies as st
from sklearn.exceptions import ConvergenceWarning

import fast
import refmodels as rm
from fast import mklm as fmklm
from refmodels.solution import SolverError
from strategies import log_uniform, random_binary

K = rm.kernels


def _data(seed, m, d, scale=1.0):
    X, y, _, _ = random_binary(seed, m=m, d=d)
    return X * scale, y


def _base_kernel(name, d, rng, X):
    """A base kernel of type ``name``; the scales differ by orders of magnitude."""
    if name == "rbf":
        return K.RBF(gamma=float(10.0 ** rng.uniform(-2, 1)) / d)
    if name == "linear":
        return K.Linear()
    if name == "poly":
        return K.Polynomial(degree=int(rng.integers(2, 4)), gamma=float(rng.choice([0.1, 1.0])),
                            coef0=1.0)
    return K.RBF(gamma=0.7 / d).gram(X)          # "gram": a precomputed base Gram array


@st.composite
def mklm_problems(draw, max_m=40):
    seed = draw(st.integers(0, 2**31))
    m = draw(st.integers(6, max_m))
    d = draw(st.integers(1, 5))
    scale = draw(st.sampled_from([0.3, 1.0, 3.0]))
    names = draw(st.lists(st.sampled_from(["rbf", "rbf", "linear", "poly", "gram"]),
                          min_size=2, max_size=3))
    C1 = draw(log_uniform(1e-1, 1e2))
    C2 = draw(st.one_of(st.just(0.0), log_uniform(1e-2, 1e2)))
    eps = draw(st.one_of(st.just(0.0), st.floats(0.0, 2.0)))
    X, y = _data(seed, m, d, scale)
    rng = np.random.default_rng(seed)
    kernels = [_base_kernel(n, d, rng, X) for n in names]
    prob = rm.MKLm(X, y, kernels, C1=C1, C2=C2, eps=eps)
    prob._drawn = dict(seed=seed, m=m, d=d, scale=scale, names=names)
    return prob


def _note(prob):
    note(f"{getattr(prob, '_drawn', '')} m={prob.m} C1={prob.C1!r} C2={prob.C2!r} "
         f"eps={prob.eps!r} kernels="
         f"{[k if not isinstance(k, np.ndarray) else 'gram' for k in prob.kernels]}")


def _reference(prob):
    """The reference: ``prob.solve()`` (the QCQP dual, polished); if CLARABEL does not report
    that conic problem optimal, the primal form, then the reduced gradient form. None when
    CLARABEL fails on all three (seen on badly scaled polynomial kernels with large C1)."""
    for form in ("dual", "primal", "simplex"):
        try:
            return prob.solve(form=form)
        except SolverError:
            continue
    return None


def _check(prob, sol, ref, rel=1e-5):
    assert sol.status == "optimal", sol.info
    assert sol.solver == "fast:mkl-rg" and sol.form == "fast"
    mu = sol.variables["mu"]
    assert mu.shape == (prob.M,) and np.all(mu >= 0) and abs(mu.sum() - 1.0) <= 1e-12
    assert sol.info["gap"] <= 1e-9
    # the objective is the canonical primal of SPEC §7 at the returned point (a wrong
    # formula would be off by O(1); summation order alone moves it by ~1e-10 relative when a
    # base Gram has entries ~1e5)
    assert sol.objective == pytest.approx(prob.primal_value(mu, sol.coef, sol.intercept),
                                          rel=1e-8, abs=1e-12)
    assert abs(sol.objective - ref.objective) <= rel * (1 + abs(ref.objective)), \
        (sol.objective, ref.objective)
    cert = prob.certify(sol, reference=ref)
    assert cert.ok, str(cert)
    a, b = sol.variables["alpha"], sol.variables["beta"]
    assert np.all(a >= 0) and np.all(a <= prob.C1 / 2)
    assert np.all(b >= 0) and np.all(b <= prob.C2 / 2)
    assert abs(float(prob.y @ (a - b))) <= 1e-10 * (1 + prob.m * max(prob.C1, prob.C2))
    assert sol.variables["b"] == sol.intercept
    np.testing.assert_array_equal(sol.coef, prob.y * (a - b))


@given(prob=mklm_problems())
def test_fast_matches_reference_and_certifies(prob):
    _note(prob)
    ref = _reference(prob)
    sol = fast.solve(prob)
    if ref is None:
        # no reference value: the certificate alone (its duality gap bounds the error)
        assert sol.status == "optimal" and sol.info["gap"] <= 1e-9
        cert = prob.certify(sol, reference=False)
        assert cert.ok, str(cert)
        return
    _check(prob, sol, ref)
    # (f itself is not compared: with nearly parallel base kernels the optimal mu, hence
    # nu and f, need not be unique; the objective and the certificate are what is unique.)


@given(prob=mklm_problems(max_m=30))
def test_plain_reduced_gradient_reaches_the_same_optimum(prob):
    """Without the Newton steps (plain SimpleMKL) the same optimum, certified."""
    _note(prob)
    sol_n = fast.solve(prob)
    sol_rg = fast.solve(prob, newton=False, max_iter=5000)
    assert sol_rg.info["newton_steps"] == 0
    _check(prob, sol_rg, sol_n, rel=1e-7)


@pytest.mark.parametrize("kernel", [K.RBF(0.5), K.Linear(), K.Polynomial(2, 0.5, 1.0)])
@pytest.mark.parametrize("C1,C2,eps", [(1.0, 0.5, 0.3), (10.0, 3.0, 0.0), (0.5, 0.0, 1.0),
                                       (100.0, 100.0, 2.0)])
def test_single_kernel_is_svmm_with_half_boxes(kernel, C1, C2, eps):
    X, y = _data(11, 30, 3)
    mkl = rm.MKLm(X, y, [kernel], C1=C1, C2=C2, eps=eps)
    svmm = rm.SVMm(X, y, C1=C1 / 2, C2=C2 / 2, eps=eps, kernel=kernel)
    sol = fast.solve(mkl)
    assert sol.status == "optimal"
    np.testing.assert_array_equal(sol.variables["mu"], [1.0])
    fs, ref = fast.solve(svmm), svmm.solve()
    for other in (fs, ref):
        assert abs(sol.objective - other.objective) <= 1e-7 * (1 + abs(other.objective))
    np.testing.assert_allclose(mkl.decision_function(sol, X), svmm.decision_function(fs, X),
                               atol=1e-5 * (1 + np.abs(svmm.decision_function(fs, X)).max()))
    assert mkl.certify(sol, reference=False).ok


@given(seed=st.integers(0, 2**31), m=st.integers(6, 30), C1=log_uniform(1e-1, 1e2),
       C2=st.one_of(st.just(0.0), log_uniform(1e-2, 1e2)))
def test_eps_mkl_is_mklm_with_eps_zero(seed, m, C1, C2):
    X, y = _data(seed, m, 3)
    ks = [K.RBF(0.05), K.RBF(2.0), K.Linear()]
    e = fast.solve(rm.EpsMKL(X, y, ks, C1=C1, C2=C2))
    p = rm.MKLm(X, y, ks, C1=C1, C2=C2, eps=0.0)
    s = fast.solve(p)
    assert e.status == s.status == "optimal"
    assert e.objective == pytest.approx(s.objective, rel=1e-12)
    np.testing.assert_array_equal(e.variables["mu"], s.variables["mu"])
    assert rm.EpsMKL(X, y, ks, C1=C1, C2=C2).certify(e, reference=False).ok


def test_several_kernels_of_very_different_scales():
    """Base Grams from ~1e-2 to ~1e5 in size; the weights land on a face, certified."""
    X, y = _data(5, 40, 4, scale=3.0)
    ks = [K.RBF(0.01), K.RBF(3.0), K.Polynomial(3, 1.0, 1.0), K.Linear()]
    prob = rm.MKLm(X, y, ks, C1=20.0, C2=1.0, eps=0.5)
    scales = [np.abs(G).max() for G in prob.grams]
    assert max(scales) / min(scales) > 1e3
    ref = _reference(prob)
    assert ref is not None
    _check(prob, fast.solve(prob), ref)


def test_newton_hessian_matches_finite_differences():
    """The Hessian of J used by the Newton steps (inner active set held) against central
    differences of g = -grad J; a wrong sign or a missing block would show."""
    X, y = _data(3, 40, 3)
    prob = rm.MKLm(X, y, [K.RBF(0.1), K.RBF(1.0), K.Linear()], C1=4.0, C2=1.0, eps=0.3)
    grams = [np.ascontiguousarray(G) for G in prob.grams]
    inner = fmklm._InnerSVMm(grams, prob.y.astype(float), prob.C1, prob.C2, prob.eps, True)
    mu = np.array([0.5, 0.3, 0.2])
    z0 = np.zeros(2 * prob.m)
    pt = inner(mu, z0, 1e-14)
    H = inner.hessian(pt, np.arange(3))
    assert np.all(np.linalg.eigvalsh(H) >= -1e-8 * np.abs(H).max())      # J is convex
    for delta in (np.array([1.0, -1.0, 0.0]), np.array([0.2, 0.5, -0.7])):
        h = 1e-6
        gp = inner(mu + h * delta, pt.z, 1e-14).g
        gm = inner(mu - h * delta, pt.z, 1e-14).g
        fd = -(gp - gm) / (2 * h)                 # d(grad J)/d(delta) = -dg
        np.testing.assert_allclose(H @ delta, fd, rtol=1e-4, atol=1e-6 * np.abs(fd).max())


def test_warm_start():
    X, y = _data(8, 40, 3)
    ks = [K.RBF(0.05), K.RBF(1.0), K.Polynomial(2, 0.5, 1.0)]
    prob = rm.MKLm(X, y, ks, C1=5.0, C2=1.0, eps=0.2)
    cold = fast.solve(prob)
    # from its own solution: optimal at once
    again = fast.solve(prob, warm_start=cold)
    assert again.status == "optimal" and again.n_iter == 0
    assert again.objective == pytest.approx(cold.objective, rel=1e-9)
    # a nearby problem from the previous solution: the same optimum as cold, less work
    near = rm.MKLm(X, y, ks, C1=6.0, C2=1.0, eps=0.2)
    c2, w2 = fast.solve(near), fast.solve(near, warm_start=cold)
    assert w2.status == "optimal"
    assert abs(w2.objective - c2.objective) <= 1e-8 * (1 + abs(c2.objective))
    assert w2.info["smo_iterations"] < c2.info["smo_iterations"]
    assert near.certify(w2, reference=False).ok
    # mu alone (dict), or alpha/beta alone
    mu_only = fast.solve(prob, warm_start={"mu": cold.variables["mu"]})
    assert mu_only.objective == pytest.approx(cold.objective, rel=1e-9)
    dual_only = fast.solve(prob, warm_start={"alpha": cold.variables["alpha"],
                                             "beta": cold.variables["beta"]})
    assert dual_only.objective == pytest.approx(cold.objective, rel=1e-9)
    # bad warm starts
    with pytest.raises(ValueError, match="mu"):
        fast.solve(prob, warm_start={"mu": [0.5, 0.5, 0.5]})
    with pytest.raises(ValueError, match="mu"):
        fast.solve(prob, warm_start={"mu": [1.2, -0.2, 0.0]})
    with pytest.raises(ValueError, match="mu"):
        fast.solve(prob, warm_start={"mu": [1.0, 0.0]})
    with pytest.raises(ValueError, match="alpha"):
        fast.solve(prob, warm_start={"alpha": np.full(prob.m, prob.C1)})   # box is C1/2
    with pytest.raises(ValueError, match="warm_start"):
        fast.solve(prob, warm_start={"b": 0.0})
    with pytest.raises(ValueError, match="warm_start"):
        fast.solve(prob, warm_start=[0.3, 0.3, 0.4])


def test_max_iter_status_and_warning():
    X, y = _data(2, 40, 3)
    prob = rm.MKLm(X, y, [K.RBF(0.02), K.RBF(1.0), K.Linear()], C1=10.0, C2=2.0, eps=0.1)
    with pytest.warns(ConvergenceWarning, match=r"max_iter=1.*gap .*tol=1\.000e-09"):
        sol = fast.solve(prob, max_iter=1)
    assert sol.status == "max_iter" and sol.n_iter == 1
    assert sol.info["gap"] > 1e-9
    # still a feasible point with its true objective and a valid duality gap
    assert sol.objective == pytest.approx(prob.primal_value(sol.variables["mu"], sol.coef,
                                                            sol.intercept), rel=1e-12)
    cert = prob.certify(sol, reference=False)
    assert cert.values["objective"] - cert.values["dual_objective"] >= -1e-12
    # a loose tolerance is met without warning
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        loose = fast.solve(prob, tol=1e-2)
    assert loose.status == "optimal" and loose.info["gap"] <= 1e-2


def test_bad_arguments():
    X, y = _data(1, 12, 2)
    prob = rm.MKLm(X, y, [K.RBF(0.5), K.Linear()], C1=1.0, C2=1.0, eps=0.1)
    for tol in (0, -1e-3, np.nan, np.inf, "1e-6", True):
        with pytest.raises(ValueError, match="tol"):
            fast.solve(prob, tol=tol)
    for max_iter in (0, -1, 2.5, True, "10"):
        with pytest.raises(ValueError, match="max_iter"):
            fast.solve(prob, max_iter=max_iter)
    with pytest.raises(ValueError, match="method"):
        fast.solve(prob, method="cvxpy")
    with pytest.raises(ValueError, match="unknown option"):
        fast.solve(prob, cache=10)
    with pytest.raises(ValueError, match="newton"):
        fast.solve(prob, newton="yes")
    for method in (None, "rg", "reduced-gradient"):
        assert fast.solve(prob, method=method).status == "optimal"


@pytest.mark.xfail(strict=True, reason=(
    "reference layer: on this badly scaled instance (polynomial base kernel on data x3, Gram "
    "entries up to 3e7) all three CVXPY forms of MKLm return 1.43712e-4, while the fast "
    "solution has objective 1.41985e-4 with its own duality gap 4e-16, and an independent "
    "NumPy KKT check at mu = [1, 0] confirms it (violation 4e-16, P = D): the reference is "
    "1.2% above the optimum. Found by HYPOTHESIS_PROFILE=thorough; not fixed (session 2)."))
def test_reference_agrees_on_a_badly_scaled_polynomial_instance():
    X, y = _data(5, 33, 5, 3.0)
    rng = np.random.default_rng(5)
    kernels = [_base_kernel(n, 5, rng, X) for n in ("poly", "rbf")]
    prob = rm.MKLm(X, y, kernels, C1=1.0, C2=0.0, eps=0.0)
    sol = fast.solve(prob)
    # what holds today: the fast point certifies on its own (no reference value)
    assert sol.status == "optimal" and sol.info["gap"] <= 1e-9
    assert prob.certify(sol, reference=False).ok
    # an independent check of the fast point: the SVM dual at its mu, by NumPy
    mu, a = sol.variables["mu"], sol.variables["alpha"]
    Kmu = sum(w * k.gram(X) for w, k in zip(mu, kernels))
    Q = y[:, None] * Kmu * y[None, :]
    assert np.sum(a) - 0.5 * a @ Q @ a == pytest.approx(sol.objective, rel=1e-9)
    # what fails: the reference optimum is above the certified fast one
    ref = _reference(prob)
    assert abs(sol.objective - ref.objective) <= 1e-6 * (1 + abs(ref.objective))
