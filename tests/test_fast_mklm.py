"""fast/mklm.py: MKLm / epsilon-MKL (SPEC §7, seed 003 eqs. 22-26) by reduced gradient on
the kernel weights with a warm-started SMO inside: plain reduced gradient, a single base
kernel is SVMm with halved boxes, epsilon-MKL is MKLm(eps=0), kernels of very different
scales, the Newton Hessian against finite differences, warm starts from other points,
statuses, warnings and bad input. Agreement with the reference (CVXPY QCQP dual, polished)
and the certificate, CSR = dense, the warm start from its own solution and the common bad
input: tests/test_contract.py."""
import warnings

import numpy as np
import pytest
from hypothesis import given, note, strategies as st
from sklearn.exceptions import ConvergenceWarning

import fast
import refmodels as rm
from fast import mklm as fmklm
from contract import rel, CASES, check_solution, mkl_reference as _reference, solve_trusted
from strategies import drawn, log_uniform, mkl_base_kernel as _base_kernel, mkl_data as _data, \
    mklm_problems

K = rm.kernels

def _note(prob):
    note(f"{drawn(prob, 'drawn', '')} m={prob.m} C1={prob.C1!r} C2={prob.C2!r} "
         f"eps={prob.eps!r} kernels="
         f"{[k if not isinstance(k, np.ndarray) else 'gram' for k in prob.kernels]}")


@given(prob=mklm_problems(max_m=30))
def test_plain_reduced_gradient_reaches_the_same_optimum(prob):
    """Without the Newton steps (plain SimpleMKL) the same optimum, certified."""
    _note(prob)
    if not drawn(prob, 'scale').good:    # off the unit scale: the trust property (solve_trusted)
        solve_trusted(prob, drawn(prob, 'scale'), lambda: fast.solve(prob),
                      lambda: fast.solve(prob, newton=False, max_iter=5000))
        return
    sol_n = fast.solve(prob)
    sol_rg = fast.solve(prob, newton=False, max_iter=5000)
    assert sol_rg.info["newton_steps"] == 0
    check_solution(CASES["MKLm"], prob, sol_rg, sol_n, tol=1e-7)


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
        assert rel(sol.objective, other.objective) <= 1e-7
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
    check_solution(CASES["MKLm"], prob, fast.solve(prob), ref, tol=1e-5)


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
    # (from its own solution: tests/test_contract.py) a nearby problem from the previous solution: the same optimum as cold, less work
    near = rm.MKLm(X, y, ks, C1=6.0, C2=1.0, eps=0.2)
    c2, w2 = fast.solve(near), fast.solve(near, warm_start=cold)
    assert w2.status == "optimal"
    assert rel(w2.objective, c2.objective) <= 1e-8
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
    assert loose.info["gap"] <= 1e-2
    # 'optimal' is the certificate's promise (1e-6); a point that meets only the loose
    # tolerance asked is 'converged', without a warning
    assert loose.status == ("optimal" if prob.certify(loose, reference=False).ok
                            else "converged")


def test_bad_arguments():
    X, y = _data(1, 12, 2)
    prob = rm.MKLm(X, y, [K.RBF(0.5), K.Linear()], C1=1.0, C2=1.0, eps=0.1)
    with pytest.raises(ValueError, match="method"):
        fast.solve(prob, method="cvxpy")
    with pytest.raises(ValueError, match="unknown option"):
        fast.solve(prob, cache=10)                  # the SMO's option, not the MKL's
    with pytest.raises(ValueError, match="newton"):
        fast.solve(prob, newton="yes")
    for method in (None, "rg", "reduced-gradient"):
        assert fast.solve(prob, method=method).status == "optimal"


def test_reference_agrees_on_a_badly_scaled_polynomial_instance():
    """On this badly scaled instance (polynomial base kernel on data x3, Gram entries up to
    3e7) the CVXPY dual returns a point 1.2% above the optimum and calls it optimal. The
    reference certifies before it answers:
    the dual point fails its certificate, tight Clarabel is inaccurate, and the ladder ends
    at the reduced-gradient form, which agrees with the fast point."""
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
    ref = _reference(prob)
    assert prob.certify(ref, reference=False).ok
    assert rel(sol.objective, ref.objective) <= 1e-6


def _keel_rows(name, m, seed=0):
    """``m`` rows of a raw KEEL set, stratified by the label (validation/sweep_paths.py's
    subsample)."""
    from strategies import keel

    X, y = keel(name)
    rng = np.random.default_rng(seed)
    idx = []
    for c in (-1, 1):
        ic = np.flatnonzero(y == c)
        k = max(1, int(round(m * ic.size / y.size)))
        idx.append(rng.choice(ic, min(k, ic.size), replace=False))
    idx = np.sort(np.concatenate(idx))
    return X[idx], y[idx]


def test_raw_polynomial_gap_at_roundoff_stops_early():
    """Raw pima, 48 rows, linear + RBF + quadratic base kernels (Gram entries to 2.3e9):
    the MKL gap falls to ~1e-8 in 4 iterations, then wanders at its round-off floor
    (5e-9 .. 3e-8) above tol = 1e-9. The solver stops after _STALL_ITERS iterations without
    progress (not all 500 of max_iter), says so, and returns the best point seen, which
    certifies."""
    X, y = _keel_rows("pima", 48)
    d = X.shape[1]
    ks = [K.Linear(), K.RBF(gamma=1.0 / (d * X.var())), K.Polynomial(2, 1.0 / d, 1.0)]
    prob = rm.MKLm(X, y, ks, C1=2.0, C2=0.5, eps=0.5)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        sol = fast.solve(prob)
    if sol.status != "optimal":
        assert sol.status == "stalled" and sol.n_iter <= 4 + 2 * fmklm._STALL_ITERS
        assert any(issubclass(w.category, ConvergenceWarning) for w in rec)
    assert prob.certify(sol, reference=False).ok


def test_raw_single_polynomial_kernel_inner_polish():
    """Raw haberman, 48 rows, one quadratic kernel (Gram entries ~1e8): the inner SMO alone
    crawls (1.5 million iterations); with its own polish in the first stages it finishes in
    a few ten thousand. The single-kernel MKLm is SVMm with halved
    boxes."""
    X, y = _keel_rows("haberman", 48)
    kern = K.Polynomial(2, 1.0 / X.shape[1], 1.0)
    prob = rm.MKLm(X, y, [kern], C1=2.0, C2=0.5, eps=0.5)
    sol = fast.solve(prob)
    assert sol.status == "optimal" and sol.info["smo_iterations"] < 2 * 10**5
    assert prob.certify(sol, reference=False).ok
    svmm = fast.solve(rm.SVMm(X, y, C1=1.0, C2=0.25, eps=0.5, kernel=kern))
    assert rel(sol.objective, svmm.objective) <= 1e-7


# ---- a stall at the gap's round-off floor: the certificate decides ----------------------
@pytest.mark.parametrize("seed", [9300, 9311])
def test_stall_at_the_floor_that_certifies_is_optimal(seed):
    """validation/sweep_scales.py --family MKLm --seed 9300: raw cubic (9300) and quadratic
    (9311) base kernels; the reduced gradient stalls with the relative MKL gap at its
    round-off floor (4.2e-7, 1.9e-9) above tol = 1e-9, and the point certifies (duality gap
    4.6e-7, 3.2e-9 of the certificate's 1e-6): it was reported ``stalled`` with a warning.
    As the SMO's floor stop (fast._smo_run.check_floor_stop), the certificate now decides:
    ``optimal``, no warning. A tolerance given by the caller keeps the former status."""
    from strategies import make_problem

    prob, _ = make_problem("MKLm", seed)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        sol = fast.solve(prob)
    assert sol.info["gap"] > sol.info["tol"]          # the stall: above the tolerance
    assert sol.info["floor_certificate"] is True
    assert sol.status == "optimal"
    assert prob.certify(sol, reference=False).ok
    # an explicit tol (here the default's value) is the caller's: not met, so 'stalled'
    with pytest.warns(ConvergenceWarning, match=r"stopped \(stalled\).*tol=1\.000e-09"):
        asked = fast.solve(prob, tol=fmklm.DEFAULT_TOL)
    assert asked.status == "stalled" and "floor_certificate" not in asked.info


def test_stall_that_fails_its_certificate_stays_stalled(monkeypatch):
    """The same stall judged by a certificate it fails (its tolerance tightened to 1e-12
    through the problem's certify): the status stays ``stalled`` and the one warning names
    the gap, the tolerance asked and the certificate's failing residual."""
    from strategies import make_problem

    prob, _ = make_problem("MKLm", 9300)
    certify = type(prob).certify
    monkeypatch.setattr(type(prob), "certify",
                        lambda self, sol, **kw: certify(self, sol, **{**kw, "tol": 1e-12}))
    with pytest.warns(ConvergenceWarning) as record:
        sol = fast.solve(prob)
    assert sol.status == "stalled" and sol.info["floor_certificate"] is False
    msgs = [str(w.message) for w in record if issubclass(w.category, ConvergenceWarning)]
    assert len(msgs) == 1, msgs
    cert = certify(prob, sol, reference=False, tol=1e-12)
    name, value = cert.worst
    assert not cert.ok
    assert (f"relative MKL duality gap {sol.info['gap']:.3e} above the tolerance "
            f"tol=1.000e-09" in msgs[0])
    assert f"fails the certificate ({name} {value:.3e})" in msgs[0]
