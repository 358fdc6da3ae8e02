"""The trust items, one test each: certify checks the point predictions use, never raises
for an unavailable reference, refuses the wrong shapes; nonsense input is refused; the
deterministic solvers validate random_state; the documented arguments are accepted; the
former false alarms end ``optimal`` and certify."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import fast
import refmodels as rm
from refmodels.solution import Solution, SolverError
from strategies import random_binary


@pytest.fixture(scope="module")
def svm_case():
    X, y, k, _ = random_binary(3, m=40, d=4, kernel="linear")
    p = rm.SVM(X, y, C=1.0, kernel=k)
    return p, fast.solve(p)


def test_certify_checks_w_against_coef(svm_case):
    p, s = svm_case
    assert p.certify(p.solution_from(w=s.w, coef=s.coef)).ok
    bad = p.solution_from(w=s.w, coef=-s.coef)
    cert = p.certify(bad)
    assert not cert.ok and "w = F^T coef" in cert.failing


def test_certify_reports_unavailable_reference(monkeypatch, svm_case):
    p, s = svm_case
    q = rm.SVM(p.X, np.where(p.y > 0, 1, -1), C=1.0)

    def refuse(*a, **k):
        raise SolverError("no reference point certifies (test)")

    monkeypatch.setattr(type(q), "reference_solution", refuse)
    cert = q.certify(q.solution_from(coef=s.coef), reference=True)
    assert cert.ok
    assert cert.values["reference_objective"] is None
    assert any("reference optimum unavailable" in n for n in cert.notes)


@pytest.mark.parametrize("bad", [None, "x", 3.0])
def test_certify_refuses_non_solutions(svm_case, bad):
    p, _ = svm_case
    with pytest.raises(ValueError, match="sol must be"):
        p.certify(bad)


def test_certify_refuses_wrong_shapes(svm_case):
    p, s = svm_case
    with pytest.raises(ValueError, match="sol.coef"):
        p.certify(Solution(objective=0.0, coef=np.zeros(p.m + 1)))
    wrong_dual = Solution(objective=0.0, coef=s.coef, variables={"alpha": np.zeros(3)})
    with pytest.raises(ValueError, match="alpha"):
        p.certify(wrong_dual)
    other = rm.SVM(p.X[:10], np.r_[1, -1, np.ones(8)], C=1.0)
    with pytest.raises(ValueError, match="sol.coef"):
        other.certify(s)


@pytest.mark.parametrize("tol", [np.inf, np.nan, 0.0, -1e-6, "1e-6", True])
def test_certify_refuses_nonsense_tol(svm_case, tol):
    p, s = svm_case
    with pytest.raises(ValueError, match="tol"):
        p.certify(s, tol=tol)


def test_complex_input_is_refused():
    X = np.ones((4, 2)) + 1j
    with pytest.raises(ValueError, match="X must be real"):
        rm.SVM(X, [1, -1, 1, -1])
    with pytest.raises(ValueError, match="real"):
        rm.SVM(np.ones((4, 2)), [1, -1, 1, -1]).solution_from(coef=np.ones(4) * (1 + 1j))


@pytest.mark.parametrize("make", [
    lambda X, y: rm.SVMm(X, y), lambda X, y: rm.SVM(X, y, fit_intercept=True),
    lambda X, y: rm.DRM(X, y, X[:2], alpha=1.0, beta=1.0),
])
def test_deterministic_solvers_validate_random_state(make):
    X, y, _, _ = random_binary(1, m=20, d=3)
    with pytest.raises(ValueError, match="random_state"):
        fast.solve(make(X, y), random_state="garbage")
    fast.solve(make(X, y), random_state=np.random.default_rng(0))    # accepted, ignored


def test_estimators_accept_a_generator():
    X, y, _, _ = random_binary(2, m=40, d=3)
    clf = fast.ODMClassifier(random_state=np.random.default_rng(0)).fit(X, y)
    assert clf.score(X, y) > 0.5


def test_drr_classifier_accepts_q_inf_and_refuses_bad_method():
    from sklearn.datasets import load_iris

    X, y = load_iris(return_X_y=True)
    clf = fast.DRRClassifier(q=np.inf, r=1, rho="identity").fit(X, y)
    assert clf.score(X[::10], y[::10]) > 0.5
    with pytest.raises(ValueError, match="method"):
        fast.DRRClassifier(method="bogus").fit(X, y)


def test_mklm_classifier_takes_name_params_pairs():
    X, y, _, _ = random_binary(4, m=30, d=3)
    clf = fast.MKLmClassifier(kernels=[("linear", {}), ("rbf", {"gamma": 0.5})]).fit(X, y)
    assert clf.score(X, y) > 0.5


def test_odm_theta_near_one_is_not_a_false_alarm():
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    X, y = X[:200] / X.max(0), y[:200]
    p = rm.ODM(X, y, lam=1.0, mu=0.5, theta=0.99995)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s = fast.solve(p)
    assert s.status == "optimal" and p.certify(s, reference=False).ok


def test_linear_svm_on_large_features_is_not_a_false_alarm():
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    X, y = 1e4 * X[:200] / X.max(0), y[:200]
    p = rm.SVM(X, y, C=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        s = fast.solve(p)
    assert s.status == "optimal" and p.certify(s, reference=False).ok


def test_loose_tol_is_converged_not_optimal():
    """A point stopped at the caller's loose tolerance that does not meet the certificate is
    ``converged``, not ``optimal``."""
    X, y, k, _ = random_binary(5, m=60, d=4, kernel="rbf")
    p = rm.ODM(X, y, lam=100.0, mu=0.3, theta=0.2, kernel=k)
    s = fast.solve(p, tol=1e-1)
    ok = p.certify(s, reference=False).ok
    assert (s.status == "optimal") == ok
    if not ok:
        assert s.status == "converged"


def test_certificate_says_where_it_would_hold_and_why():
    """A point stopped at a looser tolerance: the certificate names the smallest tol at which
    it holds and the likely cause; the compact text summarises arrays."""
    from sklearn.svm import SVC

    X, y, _, _ = random_binary(6, m=80, d=4)
    est = SVC(kernel="linear", C=1.0, tol=1e-2).fit(X, y)
    prob = rm.SVM(X, y, C=1.0, fit_intercept=True)
    coef = np.zeros(len(y))
    coef[est.support_] = est.dual_coef_[0]
    cert = prob.certify(prob.solution_from(coef=coef, intercept=est.intercept_[0]))
    assert not cert.ok
    assert cert.holds_at == max(abs(s) for _, s in cert.residuals.values())
    assert prob.certify(prob.solution_from(coef=coef, intercept=est.intercept_[0]),
                        tol=cert.holds_at * 1.01).ok
    causes = cert.explain()
    assert set(causes) == set(cert.failing)
    text = str(cert)
    assert "it would hold at tol >=" in text and "likely cause" in text
    d = cert.to_dict()
    assert d["holds_at"] == cert.holds_at and d["likely_causes"] == causes


def test_certificate_explains_a_box_scaled_by_m():
    X, y, _, _ = random_binary(7, m=40, d=3)
    p = rm.SVM(X, y, C=1.0)
    s = fast.solve(rm.SVM(X, y, C=40.0))          # C times m: alpha leaves [0, 1]
    cert = p.certify(p.solution_from(coef=s.coef, dual={"alpha": s.variables["alpha"]}))
    assert "dual feasibility" in cert.failing
    assert "scaled by m" in cert.explain()["dual feasibility"]


def test_drr_reference_refuses_rather_than_errs_on_a_raw_poly_kernel():
    """CVXPY reports 'optimal' for this DRR instance (Gram entries ~1e18) at a point that
    fails its own certificate (no dual point within the conjugate's domain); the reference
    certifies every point it returns, or refuses."""
    rng = np.random.default_rng(0)
    X = 800 * rng.normal(size=(55, 2))
    y = rng.integers(0, 3, 55)
    Xt = 800 * rng.normal(size=(5, 2))
    p = rm.DRR(X, y, Xt, alpha=0.02, beta=36.0, q=2, r=1, rho="identity",
               kernel=rm.kernels.Polynomial(3, 0.5, 1.0))
    raw = p._solve_primal("CLARABEL", False, {})          # CVXPY's own word: "optimal"
    assert raw.status == "optimal" and not p.certify(raw, reference=False).ok
    try:
        sol = p.solve()
    except SolverError as exc:
        assert "certifies" in str(exc) and "scale the features" in str(exc)
    else:
        assert sol.status == "optimal" and p.certify(sol, reference=False).ok


def test_mcodm_outer_loop_stops_when_its_relaxed_qps_cannot_converge():
    """On a raw poly kernel (diagonal ~1e18) every relaxed QP ends at max_iter; the outer
    loop stops after two such rounds (not all max_outer rounds) with status max_iter and a
    warning that names the scale."""
    from sklearn.exceptions import ConvergenceWarning

    rng = np.random.default_rng(0)
    X = 978 * rng.normal(size=(49, 2))
    y = rng.integers(0, 3, 49)
    p = rm.McODM(X, y, lam=21.9, mu=0.96, theta=0.41, kernel=rm.kernels.Polynomial(3, 0.28, 1.0))
    with pytest.warns(ConvergenceWarning, match="last two rounds.*scale them"):
        sol = fast.solve(p, random_state=0, max_iter=500)
    assert sol.status == "max_iter"
    assert sol.n_iter == 2 and sol.info["inner_iters"] == [500, 500]


def test_relaxed_mcodm_on_a_raw_poly_kernel_is_refused_not_certified_by_its_own_gap():
    """A relaxed mcODM QP with a quadratic kernel on features near 1e6 (Gram
    entries ~1e22; data of a Hypothesis example kept in ``tests/data``). The BCD met its own
    stopping rule (duality gap 1.6e-21 of its state) and said ``optimal`` while the
    certificate at the returned point failed (primal feasibility 1.5e-5): the Gram was its
    parent's, so the self-check found no cheap certificate and trusted the solver's rule. Badly scaled, the certificate
    now decides: the solve says it cannot (``inaccurate`` with a warning naming the scale),
    or its point certifies."""
    import os

    from sklearn.exceptions import ConvergenceWarning

    data = np.load(os.path.join(os.path.dirname(__file__), "data", "relaxed_mcodm_raw_poly.npz"))
    # built from its McODM, as the outer loop builds it: the Gram is the parent's, so the
    # relaxed problem's own cache is empty and the full certificate did not look cheap
    p = rm.McODM(data["X"], data["y"], lam=10.0, mu=1.0, theta=0.0,
                 kernel=rm.kernels.Polynomial(degree=2, gamma=1 / 7, coef0=1.0)
                 ).relaxed(data["M"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sol = fast.solve(p, random_state=0, max_iter=300000, with_W=True)
    if sol.status == "optimal":
        assert p.certify(sol, reference=False).ok
    else:
        assert any(issubclass(w.category, ConvergenceWarning) and "scale" in str(w.message)
                   for w in caught)


def _data(name):
    import os

    return np.load(os.path.join(os.path.dirname(__file__), "data", name))


def test_certify_checks_the_decision_values_of_coef_at_every_feature_scale():
    """With features x1e4 (found by an independent sweep), ``||w||`` is ~1e-4, and a
    ``coef`` whose ``F^T coef`` is 1e-7 from ``w`` passed the ``w = F^T coef`` residual
    (scaled by ``1 + ||w||``) while its decision values, what ``predict`` uses, were 1e-3
    off. The certificate now compares the decision values (scale-free) and the objective at
    ``coef``."""
    d = _data("svm_b_features_x1e4.npz")
    p = rm.SVM(d["X"], d["y"], C=2.0 ** 16, fit_intercept=True)
    s = fast.solve(p)
    assert p.certify(s, reference=False).ok
    dcoef = np.zeros(p.m)
    dcoef[0] = 1e-7 / np.linalg.norm(p.X[0])            # ||F^T dcoef|| = 1e-7
    bad = p.solution_from(w=s.w, coef=s.coef + dcoef, intercept=s.intercept)
    cert = p.certify(bad, reference=False)
    assert cert.residuals["w = F^T coef"][1] < 1e-6      # the old residual alone passes it
    assert not cert.ok and "decision values (coef vs w)" in cert.failing


def test_reference_coef_is_the_certified_point_on_large_features():
    """The same data at C = 2^16: the reference said ``optimal`` and its certificate held,
    at a ``w`` of objective 2.8e-8, while the objective at its ``coef`` was 280. Now it
    returns one point (or refuses)."""
    d = _data("svm_b_features_x1e4.npz")
    X, y, C = d["X"], d["y"], 2.0 ** 16
    p = rm.SVM(X, y, C=C, fit_intercept=True)

    def P(w, b):                                         # SPEC §1, in numpy
        return 0.5 * w @ w + C * np.maximum(0.0, 1.0 - y * (X @ w + b)).sum()

    try:
        s = p.solve()
    except SolverError:
        return
    Pw, Pc = P(s.variables["w"], s.intercept), P(X.T @ s.coef, s.intercept)
    assert abs(Pc - Pw) <= 1e-6 * (1.0 + abs(Pw))
    f = X @ s.variables["w"] + s.intercept
    np.testing.assert_allclose(p.decision_function(s, X), f, rtol=0,
                               atol=1e-6 * (1.0 + np.abs(f).max()))


def test_mcodm_fixed_point_residual_is_on_the_scale_of_the_scores():
    """On raw data with a degree-4 polynomial kernel, a fast McODM run stopped at
    ``max_iter`` with ``M`` 18.7 away from ``M_from(W)`` (scores of at most ~40, a margin
    band of 1 +- theta), and its certificate held: the residual was scaled by
    ``||W|| max ||phi||`` ~ 7e7. It is now scaled by the scores."""
    d = _data("mcodm_raw_bupa_poly4.npz")
    p = rm.McODM(d["X"], d["y"], lam=0.0078125, mu=0.4047746856088562, theta=0.8455017625373007,
                 kernel=rm.kernels.Polynomial(4, 0.12396155888312427, 1.0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = fast.solve(p, random_state=0)
    cert = p.certify(s, reference=False)
    fp = cert.residuals["fixed-point residual"][0]
    if fp > 1e-3:                                        # far from a fixed point
        assert not cert.ok and "fixed-point residual" in cert.failing
    if s.status == "optimal":
        assert cert.ok


def test_mcodm_reference_coef_is_the_certified_point():
    """Two points, a quadratic kernel on features ~9e3 (Gram ~4e13): the reference said
    ``optimal`` with scores +-4.8 from its ``coef`` where its certified ``W`` gave ~1e-4. It
    now returns one point, or refuses."""
    d = _data("mcodm_two_points_poly2.npz")
    p = rm.McODM(d["X"], d["y"], lam=512.0, mu=0.7285447902944525, theta=0.321166012930862,
                 kernel=rm.kernels.Polynomial(2, 0.085644617971249, 0.0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            s = p.solve()
        except SolverError:
            return
    np.testing.assert_allclose(p.decision_function(s, p.X), p.scores(s.variables["W"]),
                               rtol=0, atol=1e-6 * (1 + np.abs(p.scores(s.variables["W"])).max()))


def test_reference_names_the_kernel_when_the_gram_overflows():
    """A cubic kernel on features ~1e80 overflows: the reference said only CVXPY's "Problem
    data contains NaN or Inf"; it now names the kernel, X and the fix."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 3)) * 1e80
    y = np.where(rng.normal(size=20) > 0, 1, -1)
    p = rm.SVM(X, y, C=1.0, kernel=rm.kernels.Polynomial(3, 1.0, 1.0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.raises(ValueError, match=r"Polynomial.*overflows float64.*X.*scale the features"):
            p.solve()


def _separable(seed=5, m=30, d=3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, d))
    y = np.where(X @ np.array([1.0, -2.0, 0.5])[:d] > 0, 1.0, -1.0)
    X += 0.5 * y[:, None] * np.array([1.0, -2.0, 0.5])[:d]   # a clear margin
    return X, y


def test_gap_is_relative_to_a_tiny_objective():
    """Features x1e6 with C = 2^-7 is the problem C x 1e12 on the original features with an
    objective 1e12 times smaller (P* ~ 1e-12). A point at 20 times the optimum held when the
    gap was scaled by 1 + |P|; relative to |P| + u (u = 1e-7 of the trivial classifier's
    objective C m) it fails, while the optimum holds."""
    X, y = _separable()
    c, C = 1e6, 2.0 ** -7
    p = rm.SVM(c * X, y, C=C)
    assert p.objective_unit == pytest.approx(1e-7 * C * p.m)
    q = rm.SVM(X, y, C=C * c ** 2)                 # the same problem, well scaled
    sq = q.solve()
    assert q.certify(sq).ok
    w_star = sq.w / c                              # P(c X, w / c) = P(X, w) / c^2
    good = p.solution_from(w=w_star)
    bad = p.solution_from(w=np.sqrt(20.0) * w_star)   # separable: P = 20 P*
    Pg, Pb = p.primal_value(w_star), p.primal_value(np.sqrt(20.0) * w_star)
    assert Pg < 1e-9 and Pb == pytest.approx(20.0 * Pg, rel=1e-6)
    assert p.certify(good, reference=False).ok
    cb = p.certify(bad, reference=False)
    assert not cb.ok and "duality gap" in cb.failing
    assert abs(cb.residuals["duality gap"][0]) / (1.0 + Pb) < 1e-6   # what held before
    assert any("unit" in n for n in cb.notes)


def test_gap_at_the_round_off_of_a_huge_gram_is_not_a_false_alarm():
    """Raw breast_cancer, quadratic kernel (Gram entries up to 7e11): the objective 4.3e-3
    evaluates to ~1e-9 (margins summed from terms ~1e5), so the objective's unit takes the
    round-off bound and the fast point, within 4e-7 of the optimum, is certified."""
    from sklearn.datasets import load_breast_cancer

    X, lab = load_breast_cancer(return_X_y=True)
    rng = np.random.default_rng(9)
    idx = np.sort(rng.choice(X.shape[0], 200, replace=False))
    X, y = X[idx], np.where(lab[idx] == 1, 1.0, -1.0)
    k = rm.kernels.Polynomial(degree=2, gamma=1.0 / X.shape[1], coef0=1.0)
    p = rm.SVM(X, y, C=1.0, kernel=k)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = fast.solve(p)
    cert = p.certify(s, reference=False)
    assert s.status == "optimal" and cert.ok
    assert p.objective_unit < cert.values["objective_unit"] <= 1.0


# ---- the likely cause at the rounding floor (refmodels/certify.py) ------------------------
def _intercept_moved_to(p, sol, target):
    """The certificate of ``sol`` with its intercept moved (bisection on the move) until the
    duality gap, in units of the objective's unit ``u``, is ``target`` (to 10 %)."""
    import copy

    def cert_at(delta):
        s2 = copy.deepcopy(sol)
        s2.intercept = sol.intercept + delta
        s2.variables["b"] = s2.intercept
        return p.certify(s2, reference=False)

    u = p.certify(sol, reference=False).values["objective_unit"]
    lo, hi = 0.0, 1e-12 * (1.0 + abs(sol.intercept))
    while cert_at(hi).residuals["duality gap"][0] <= target * u:
        lo, hi = hi, 2.0 * hi
        assert hi < 1e6, "no intercept gives that gap"
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        c = cert_at(mid)
        a = c.residuals["duality gap"][0] / u
        if abs(a - target) <= 0.1 * target:
            return c, a
        lo, hi = (mid, hi) if a < target else (lo, mid)
    raise AssertionError("no intercept gives that gap")


def test_certificate_names_the_rounding_floor_of_a_tiny_objective():
    """Features ~5e6, C = 2^-7, SVM with intercept: P ~ 1e-11 within ten of its unit
    u ~ 2.6e-8 (the small-objective note), so the objective evaluates to ~u / 1e7. A point
    whose duality gap is 5e-6 u (50 times that round-off: failing the certificate's 1e-6)
    is at the rounding floor, and the likely cause says so and suggests scaling the features
    where it said "far from optimal" or "stopped early" before; a gap of 0.1 u (10^6 times
    the round-off) keeps the former text."""
    rng = np.random.default_rng(6)
    X = rng.normal(size=(32, 3)) * 1.5e6 + 5.5e6
    y = np.where((X[:, 0] - 5.5e6) + 0.5e6 * rng.normal(size=32) > 0, 1.0, -1.0)
    p = rm.SVM(X, y, C=2.0 ** -7, fit_intercept=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        s = fast.solve(p)
    c0 = p.certify(s, reference=False)
    assert c0.ok
    u, P = c0.values["objective_unit"], c0.values["objective"]
    assert abs(P) < 10 * u and any("unit" in n for n in c0.notes)    # the note's regime
    cert, a = _intercept_moved_to(p, s, 5e-6)
    assert not cert.ok and "duality gap" in cert.failing
    assert cert.roundoff_floor() == pytest.approx(u / 1e7)
    why = cert.explain()["duality gap"]
    assert "rounding floor of evaluating the objective" in why and "Scale the features" in why
    assert "far from optimal" not in why and "stopped early" not in why
    ratio = abs(cert.residuals["duality gap"][0]) / cert.roundoff_floor()
    assert 45 <= ratio <= 55 and f"{ratio:.2g} times it" in why
    assert "rounding floor" in str(cert)                          # in the text too
    far, _ = _intercept_moved_to(p, s, 0.1)
    assert far.explain()["duality gap"].startswith("far from optimal")


def test_certificate_keeps_its_former_cause_away_from_the_floor():
    """A well-scaled problem (|P| far above its unit: the unit does not record the
    round-off) with the same relative failing gap keeps the former "stopped early" text; so
    does a hand-made certificate in the note's regime whose gap is 1000 times the round-off
    (the rule: FLOOR_FACTOR = 100 times u / 1e7)."""
    from refmodels.certify import FLOOR_FACTOR, Certificate

    X, y, _, _ = random_binary(6, m=60, d=3)
    p = rm.SVM(X, y, C=1.0, fit_intercept=True)
    s = fast.solve(p)
    c0 = p.certify(s, reference=False)
    assert c0.ok and abs(c0.values["objective"]) > 10 * c0.values["objective_unit"]
    P = c0.values["objective"]
    cert, _ = _intercept_moved_to(p, s, 5e-6 * (abs(P) + c0.values["objective_unit"])
                                  / c0.values["objective_unit"])
    assert not cert.ok and cert.roundoff_floor() is None
    assert cert.explain()["duality gap"].startswith("stopped early")
    # the rule's edge, on a hand-made certificate (u = 1e-6: round-off 1e-13)
    for factor, floor in ((0.5 * FLOOR_FACTOR, True), (10 * FLOOR_FACTOR, False)):
        c = Certificate("SVM")
        c.add("primal feasibility", 0.0, 1.0)
        c.add("duality gap", factor * 1e-13, 1e-6 + 1e-9)
        c.values.update(objective=1e-9, dual_objective=1e-9 - factor * 1e-13,
                        relative_gap=factor * 1e-4, objective_unit=1e-6)
        why = c.explain()["duality gap"]
        assert ("rounding floor" in why) == floor, why
