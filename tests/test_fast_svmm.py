"""fast/svmm.py: SVMm and epsilon-SVM (SPEC §6) by the one SMO and, on the linear kernel, the
interior point of fast/_svmm_linear.py: the limits C2 -> 0 and
eps -> infinity (the SVM with intercept); cache evictions, shrinking, statuses, warnings and
bad input specific to the SMO. Agreement with the reference and the certificate, CSR = dense,
the cache path, the warm start and the common bad input: tests/test_contract.py."""
import os
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.exceptions import ConvergenceWarning

import fast
import refmodels as rm
from contract import rel, solve_trusted
from fast import _svmm_linear
from fast import svm as fast_svm
from fast import svmm as fast_svmm
from strategies import binary_data, log_uniform, random_binary


@given(data=binary_data(kernels=("linear", "rbf")), C=log_uniform(1e-2, 1e2))
def test_limits_tend_to_svm_with_intercept(data, C):
    """SPEC §6: C2 = 0 or eps -> infinity gives the SVM with intercept (C = C1)."""
    X, y, kernel, scale = data
    if not scale.good:      # off the unit scale: each side under the trust property, through
        svm = rm.SVM(X, y, C=C, kernel=kernel, fit_intercept=True)  # the public entry (its
        solve_trusted(svm, scale, lambda: fast.solve(svm))  # own check says 'inaccurate')
        for prob in (rm.SVMm(X, y, C1=C, C2=0.0, eps=0.3, kernel=kernel),
                     rm.SVMm(X, y, C1=C, C2=5.0, eps=1e7, kernel=kernel)):
            solve_trusted(prob, scale, lambda: fast.solve(prob))
        return
    svm = fast_svm.solve_svm_with_intercept(rm.SVM(X, y, C=C, kernel=kernel, fit_intercept=True))
    tol = 1e-7 * (1 + abs(svm.objective))
    for prob in (rm.SVMm(X, y, C1=C, C2=0.0, eps=0.3, kernel=kernel),
                 rm.SVMm(X, y, C1=C, C2=5.0, eps=1e7, kernel=kernel)):
        assert abs(fast.solve(prob).objective - svm.objective) <= tol
    # C2 -> 0: the optimum moves continuously (|P(C2) - P(0)| <= C2 * sum eta)
    near = fast.solve(rm.SVMm(X, y, C1=C, C2=1e-9, eps=0.0, kernel=kernel))
    assert abs(near.objective - svm.objective) <= 1e-9 * len(y) * 10 + tol


def test_cache_path_with_evictions_matches_gram_path():
    X, y, k, _ = random_binary(4, m=150, d=3, kernel="rbf")
    prob = rm.SVMm(X, y, C1=5.0, C2=2.0, eps=0.2, kernel=k)
    g = fast.solve(prob)
    c = fast.solve(prob, cache_size=3 * 8 * 150 / 2**20)
    assert c.info["kernel_path"] == "cache" and c.info["cache_slots"] == 3
    assert c.info["cache_misses"] > 3 and c.info["cache_hits"] > 0
    assert rel(c.objective, g.objective) <= 1e-9
    assert prob.certify(c).ok


@pytest.mark.parametrize("fit_intercept", [True, False])
def test_shrinking_on_and_off_agree(fit_intercept):
    X, y, k, _ = random_binary(6, m=80, d=3, kernel="linear")
    prob = rm.SVMm(X, y, C1=10.0, C2=3.0, eps=0.1, kernel=k, fit_intercept=fit_intercept)
    on = fast.solve(prob, method="smo")
    off = fast.solve(prob, method="smo", shrinking=False)
    assert on.info["shrunk"] > 0 and on.info["gradient_reconstructions"] >= 1
    assert off.info["shrunk"] == 0
    assert rel(on.objective, off.objective) <= 1e-8
    assert prob.certify(on).ok and prob.certify(off).ok


def test_linear_kernel_w_and_duplicate_points():
    X, y, k, _ = random_binary(12, m=30, d=2)
    X = np.vstack([X, X[:5]])
    y = np.concatenate([y, -y[:5]])                 # contradicting duplicates
    prob = rm.SVMm(X, y, C1=1.0, C2=0.5, eps=0.0)
    sol = fast.solve(prob)
    np.testing.assert_allclose(sol.variables["w"], X.T @ sol.coef, atol=1e-12)
    assert prob.certify(sol).ok


def test_max_iter_status_and_warning():
    X, y, k, _ = random_binary(13, m=60, d=3, kernel="rbf")
    prob = rm.SVMm(X, y, C1=5.0, C2=1.0, eps=0.1, kernel=k)
    with pytest.warns(ConvergenceWarning, match=r"tol=1\.000e-04"):
        sol = fast.solve(prob, max_iter=2, tol=1e-4)
    assert sol.status == "max_iter" and sol.n_iter == 2 and sol.info["violation"] > 1e-4
    assert sol.objective == pytest.approx(prob.primal_value(*prob._primal_point(sol)))
    with pytest.warns(ConvergenceWarning, match="tol"):
        fast.solve(rm.SVMm(X, y, C1=5.0, C2=1.0, eps=0.1, kernel=k, fit_intercept=False),
                   max_iter=2)


def test_reproducible_and_warm_start():
    X, y, k, _ = random_binary(14, m=50, d=3, kernel="poly")
    prob = rm.SVMm(X, y, C1=2.0, C2=1.0, eps=0.5, kernel=k)
    a, b = fast.solve(prob, random_state=0), fast.solve(prob, random_state=1)
    np.testing.assert_array_equal(a.coef, b.coef)
    assert a.intercept == b.intercept and a.n_iter == b.n_iter
    # warm start from the SVM (beta = 0) of a related problem
    prob2 = rm.SVMm(X, y, C1=2.0, C2=0.0, eps=0.5, kernel=k)
    s2 = fast.solve(prob2)
    w2 = fast.solve(prob, warm_start=s2)
    assert abs(w2.objective - a.objective) <= 1e-8 * (1 + a.objective)


def test_bad_arguments():
    X, y, k, _ = random_binary(15, m=20, d=2)
    prob = rm.SVMm(X, y, C1=1.0, C2=0.5, eps=0.1)
    with pytest.raises(ValueError, match="cache_size"):
        fast.solve(prob, cache_size=-2)
    with pytest.raises(ValueError, match="method"):
        fast.solve(prob, method="dcd")
    with pytest.raises(ValueError, match="beta"):
        fast.solve(prob, warm_start={"alpha": np.zeros(20), "beta": np.ones(20)})
    with pytest.raises(ValueError, match="alpha"):
        fast.solve(prob, warm_start={"beta": np.zeros(20)})


def test_weak_regularization_keel_certifies():
    """KEEL haberman ([0,1], RBF gamma = 1/d, C2 = 1, eps = 1, with intercept, cold,
    C1 = 2^18) certifies: the polish's active set does not follow null-space components of
    ~1e-10 of the free gradient across the box (:data:`fast._smo_run.NULL_REL`; following
    them ended in ``max_iter``, 300,000 iterations, 84 polishes)."""
    import warnings

    from strategies import keel

    X, y = keel("haberman", minmax=True)
    prob = rm.SVMm(X, y, C1=2.0 ** 18, C2=1.0, eps=1.0,
                   kernel=rm.kernels.RBF(gamma=1.0 / X.shape[1]))
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        sol = fast.solve(prob)
    assert sol.status == "optimal"
    # a chunk that ends short of the tolerance is followed by a kept polish
    assert sol.info["chunks_short"] == 0 or sol.info["n_polish"] > 0
    assert prob.certify(sol, reference=False).ok


# ---------------------------------------------------------------------------------------
# the linear kernel: the interior point of fast/_svmm_linear.py (method="auto" picks it)
# ---------------------------------------------------------------------------------------
@settings(max_examples=10 if os.environ.get("CI") else 40, deadline=None)
@given(data=binary_data(kernels=("linear",), max_m=60, max_d=8),
       C1=log_uniform(1e-3, 2.0 ** 20), C2=st.sampled_from([0.0, 1e-3, 0.1, 1.0, 2.0 ** 10]),
       eps=st.sampled_from([0.0, 0.3, 1.0]), b=st.booleans())
def test_linear_ipm_certifies_and_matches_smo(data, C1, C2, eps, b):
    """The default on the linear kernel (the interior point, or the SMO after it when it
    falls short) at raw and scaled features, weak and strong regularization, with and
    without intercept: each point it calls optimal certifies, and it agrees with the SMO
    (the certificate of one against the other, objective gap included)."""
    X, y, kernel, scale = data
    prob = rm.SVMm(X, y, C1=C1, C2=C2, eps=eps, fit_intercept=b)
    if not scale.good:
        solve_trusted(prob, scale, lambda: fast.solve(prob), lambda: fast.solve(prob, method="smo"))
        return
    sol = fast.solve(prob)
    assert sol.solver in ("fast:ipm", "fast:smo")
    assert sol.status == "optimal"
    assert prob.certify(sol, reference=False).ok
    smo = fast.solve(prob, method="smo")
    if smo.status == "optimal" and prob.certify(smo, reference=False).ok:
        assert prob.certify(sol, reference=smo).ok


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("C1", [1.0, 2.0 ** 8, 2.0 ** 20])
def test_linear_ipm_keel_weak_regularization(fit_intercept, C1):
    """Sonar ([0,1], d = 60 > the free points at C1 = 2^20: a degenerate optimum,
    where the crossover must not snap small free multipliers) certifies at the seeds' grid
    ends, against the reference too."""
    from strategies import keel

    X, y = keel("sonar", minmax=True)
    prob = rm.SVMm(X, y, C1=C1, C2=1.0, eps=1.0, fit_intercept=fit_intercept)
    sol = fast.solve(prob)
    assert sol.solver == "fast:ipm" and sol.status == "optimal"
    assert sol.info["gap"] <= fast_svmm.IPM_OK_GAP
    assert prob.certify(sol, reference=False).ok
    if C1 <= 2.0 ** 8:
        assert prob.certify(sol).ok                      # against CVXPY


def test_linear_ipm_csr_equals_dense_and_raw_features():
    import scipy.sparse as sp

    X, y, k, _ = random_binary(21, m=120, d=6)
    X[X < 0.3] = 0.0
    X = X * 1e3                                         # raw, large features
    for b in (True, False):
        prob = rm.SVMm(X, y, C1=50.0, C2=0.5, eps=0.2, fit_intercept=b)
        dense = fast.solve(prob)
        csr = fast.solve(rm.SVMm(sp.csr_matrix(X), y, C1=50.0, C2=0.5, eps=0.2,
                                 fit_intercept=b))
        assert dense.solver == csr.solver == "fast:ipm"
        cd, cc = prob.certify(dense), prob.certify(csr, reference=False)
        assert cd.ok and cc.ok
        # the same optimum: each certified point brackets P* between its dual and primal
        # values (weak duality), so two of them differ by at most the wider bracket (a bare
        # 1e-9 was the IPM's stopping gap, which CSR and dense products round differently)
        brackets = [c.values["objective"] - c.values["dual_objective"] for c in (cd, cc)]
        assert abs(csr.objective - dense.objective) <= max(brackets) + 1e-12 * abs(
            dense.objective)


def test_linear_ipm_method_choice_and_status(monkeypatch):
    X, y, k, _ = random_binary(22, m=60, d=3)
    prob = rm.SVMm(X, y, C1=4.0, C2=1.0, eps=0.5)
    assert fast_svmm.choose_method(prob) == "ipm"
    assert fast.solve(prob, method="smo").solver == "fast:smo"
    Xr, yr, kr, _ = random_binary(22, m=60, d=3, kernel="rbf")
    assert fast_svmm.choose_method(rm.SVMm(Xr, yr, kernel=kr)) == "smo"
    with pytest.raises(ValueError, match="linear kernel"):
        fast.solve(rm.SVMm(Xr, yr, kernel=kr), method="ipm")
    # too few steps (and no crossover: from 2 steps it can still find this small optimum):
    # max_iter with the warning stating the gap, never a silent optimal
    monkeypatch.setattr(_svmm_linear, "CROSS_ROUNDS", 0)
    with pytest.warns(ConvergenceWarning, match="interior point"):
        sol = fast.solve(prob, method="ipm", max_iter=2)
    assert sol.status == "max_iter" and sol.info["gap"] > fast_svmm.IPM_OK_GAP
    # ... while "auto" hands such a point to the SMO
    auto = fast.solve(prob, max_iter=2)
    assert "ipm_fallback" in auto.info


@pytest.mark.parametrize("C1", [0.1, 1.0, 16.0])
def test_dcd_without_intercept_on_sparse_high_dimensional_data(C1):
    """``method="dcd"`` (the shared DCD on the two signed copies of each point) on CSR data
    with d > IPM_MAX_D: the same optimum as the SMO, certified; "auto" picks it (and hands
    a descent that crawls to the SMO); with an intercept it refuses."""
    import scipy.sparse as sp

    rng = np.random.default_rng(3)
    m, d = 300, fast_svmm.IPM_MAX_D + 50
    X = sp.random(m, d, density=0.05, random_state=4, format="csr")
    y = np.where(X @ rng.normal(size=d) + 0.1 * rng.normal(size=m) > 0, 1.0, -1.0)
    prob = rm.SVMm(X, y, C1=C1, C2=0.5, eps=0.3, fit_intercept=False)
    assert fast_svmm.choose_method(prob) == "dcd"
    smo = fast.solve(prob, method="smo")
    auto = fast.solve(prob)
    assert auto.status == "optimal" and auto.solver in ("fast:dcd", "fast:smo")
    assert prob.certify(auto, reference=False).ok
    assert prob.certify(auto, reference=smo).ok
    dcd = fast.solve(prob, method="dcd", max_iter=10**5)
    if dcd.status == "optimal":
        assert dcd.solver == "fast:dcd" and prob.certify(dcd, reference=smo).ok
        np.testing.assert_allclose(dcd.variables["w"], X.T @ dcd.coef, atol=1e-10)
    with pytest.raises(ValueError, match="fit_intercept=False"):
        fast.solve(rm.SVMm(X, y, C1=C1, fit_intercept=True), method="dcd")
    assert fast_svmm.choose_method(rm.SVMm(X, y, C1=C1, fit_intercept=True)) == "smo"


def test_linear_ipm_split_solver_solves_the_newton_system():
    """The robust retry's Newton solver (fast._svmm_linear._split_solver: the variables of
    small ``h`` apart, by their Schur complement) solves ``(Z Z^T + diag(h)) x = r`` as a
    dense solve does, with ``h`` spanning 1e-8 .. 1e8 and features spanning 1e-2 .. 1e3."""
    rng = np.random.default_rng(5)
    m, d = 40, 4
    X = rng.standard_normal((m, d)) * np.array([1e-2, 1.0, 1e2, 1e3])
    R = _svmm_linear._Rows(X)
    pt = np.concatenate([np.arange(m), np.arange(m)])
    q = np.concatenate([np.full(m, 3.0), np.full(m, -0.5)]) * rng.choice([-1.0, 1.0], m)[pt]
    Z = q[:, None] * X[pt]

    def zt(v):
        return R.tdot(np.bincount(pt, weights=q * v, minlength=m))

    def zm(t):
        return q * R.dot(t)[pt]

    h = 10.0 ** rng.uniform(-8, 8, 2 * m)
    qdiag = q * q * R.row_sqnorms()[pt]
    F = np.flatnonzero(h < qdiag)[:12]
    msolve = _svmm_linear._split_solver(R, pt, q, h, F, zt, zm)
    M = Z @ Z.T + np.diag(h)
    for _ in range(3):
        r = rng.standard_normal(2 * m) * 10.0 ** rng.uniform(-3, 3, 2 * m)
        x = msolve(r)
        assert np.max(np.abs(M @ x - r)) <= 1e-9 * np.max(np.abs(M) @ np.abs(x) + np.abs(r))


def test_linear_ipm_raw_features_large_C1_robust_retry():
    """Raw features at ``C1 = 2^12`` (breast_cancer unscaled, features 1e-3 .. 4e3, Gram
    entries to 2e7): ``w = X^T Y (alpha - beta)`` sums terms ~C1 |x_i| that cancel, the
    dual gradient has an error ~1e-5 of the multipliers and the Woodbury solves lose their
    digits, so the plain interior point stops short (relative gap 3e-4 here) and the SMO,
    from its point, ends at ``max_iter``. The robust retry of
    :func:`fast._svmm_linear.ipm` (``w`` carried along the steps, the small-``h`` variables
    solved apart, the free variables matched to the carried ``w``) reaches the round-off of
    evaluating the gap at ``X^T coef`` (~5e-7 at C1 = 2^12), and fast.solve's point
    certifies."""
    from sklearn.datasets import load_breast_cancer

    X, lab = load_breast_cancer(return_X_y=True)
    y = np.where(lab == 1, 1.0, -1.0)
    prob = rm.SVMm(X, y, C1=2.0 ** 12, C2=0.1, eps=0.5)
    _, _, _, info = _svmm_linear.ipm(X, y, prob.C1, prob.C2, prob.eps, True, retry_above=1e-8)
    assert info["robust"] and info["first_gap"] > 1e-5 and info["gap"] < 1e-6
    sol = fast.solve(prob)
    assert sol.status == "optimal"
    assert prob.certify(sol, reference=False).ok


def test_smo_two_raw_points_c1_1e6_is_not_silently_wrong():
    """Found by hypothesis: two raw points ~1e2, C1 = 1e6, C2 = eps = 0, no
    intercept, method="smo". The SMO's gap by kernel products was 0.0 and it said optimal;
    through the feature map (w = X^T coef first, as the certificate) the objective is 2.4e-6
    above the optimum and the certificate fails (forming w sums terms |x| |coef| ~ 3e3 whose
    round-off C1 amplifies). The self-check now compares the two evaluations and lets the
    certificate decide when they part: not 'optimal' without the certificate."""
    from contract import trusted

    X = np.array([[93.26598187113846, 81.77577886742273],
                  [120.60045652215162, 105.25120602655099]])
    prob = rm.SVMm(X, np.array([1.0, -1.0]), C1=1e6, C2=0.0, eps=0.0, fit_intercept=False)
    trusted(prob, lambda: fast.solve(prob, method="smo"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = fast.solve(prob, method="smo")
    assert (sol.status == "optimal") == prob.certify(sol, reference=False).ok
    # the full certificate decided (the two evaluations parted)
    assert any(k.startswith("certificate (") for k in sol.info["self_check"]["residuals"])
    assert sol.status != "optimal"


def test_intercept_repair_finds_the_best_intercept_of_the_returned_coef():
    """An RBF kernel on far-apart points (features x57): the SMO's dual value is 1e-9 from the
    optimum, but its intercept, read off a band without free variables, leaves the primal
    1.4e-7 above it (the estimates' margin is 1e-7; the full certificate accepts the point).
    The repair keeps ``coef`` and puts the intercept at the primal's minimiser."""
    from strategies import make_problem

    from fast import _smo_run

    prob, _ = make_problem("EpsSVM", 7119)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        sol = fast.solve(prob, random_state=0)
    assert sol.status == "optimal" and prob.certify(sol).ok
    fixed = _smo_run.intercept_repair(prob, sol, prob.C1, prob.C2, prob.eps)
    assert fixed is not None and fixed.info["intercept_repair"] == sol.intercept
    np.testing.assert_array_equal(fixed.coef, sol.coef)
    assert fixed.objective < sol.objective - 1e-8
    # the minimiser: no intercept nearby does better
    for db in (-1e-6, -1e-9, 1e-9, 1e-6):
        assert prob.objective_at(fixed.coef, fixed.intercept + db)[0] >= fixed.objective - 1e-15
    cert = prob.certify(fixed)
    assert cert.ok and cert.worst[1] < 1e-9        # the gap was 1.4e-7
    assert _smo_run.intercept_repair(prob, fixed, prob.C1, prob.C2, prob.eps) is None


@pytest.mark.parametrize("family,seed", [("EpsSVM", 9353), ("SVMm", 7146)])
def test_a_point_at_the_default_cap_that_certifies_is_optimal(family, seed):
    """A polynomial kernel on raw features (Gram entries 1e10 to 1e11): the SMO runs out of
    iterations with its violation at the Gram's round-off (3e-8 to 6e-8 against 1e-8), while
    its point meets the certificate. At the defaults the cap is the solver's and the target
    the certificate: ``optimal``, without a warning. A cap the caller gives is honoured:
    the same iterations with ``max_iter`` given say ``max_iter`` and warn. (The SMO's
    Newton polish, now after shorter first chunks, changes where these runs stop, so the
    policy is tested on the SMO without it, as it ran when these draws were found.)"""
    from strategies import make_problem

    prob, _ = make_problem(family, seed)
    polished = fast.solve(prob, random_state=0)
    assert polished.status == "optimal" and prob.certify(polished, reference=False).ok
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        sol = fast.solve(prob, random_state=0, polish=False)
    assert sol.status == "optimal" and "default iteration cap" in sol.info["note"]
    assert prob.certify(sol, reference=False).ok
    assert abs(sol.objective - prob.solve().objective) <= 1e-6 * (1 + abs(sol.objective))
    with pytest.warns(ConvergenceWarning):
        capped = fast.solve(prob, random_state=0, max_iter=sol.n_iter, polish=False)
    assert capped.status == "max_iter"


def test_feature_space_repair_solves_in_the_empirical_map_where_the_smo_stalls():
    """A cubic kernel on raw features (Gram entries ~1e10): the SMO stalls at the Gram's
    round-off (certificate's duality gap 2.8e-6) and the best intercept does not close it;
    the interior point on the empirical map ``F`` (26 columns) reaches a point the
    certificate accepts. Judged by the full certificate, not by the repair's own word."""
    from strategies import make_problem

    prob, _ = make_problem("EpsSVM", 9340)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        sol = fast.solve(prob, random_state=0)
    assert sol.status == "optimal" and sol.info.get("feature_space_ipm", 0) > 0
    assert prob.certify(sol, reference=False).ok
    ref = prob.solve()
    assert abs(sol.objective - ref.objective) <= 1e-6 * (1 + abs(ref.objective))
