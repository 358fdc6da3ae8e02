"""SVMm / epsilon-SVM (SPEC §6): primal = dual, limits and equivalences, seed errata,
certificates that hold and that fail."""

import numpy as np
import pytest
from hypothesis import given, strategies as st

import refmodels as rm
from contract import check_certifies_from_w, check_rejects_perturbed, libsvm_stopped_early, \
    primal_and_dual
from strategies import binary_data, log_uniform, projected_gradient, random_binary

C2_VALUES = st.one_of(st.just(0.0), log_uniform(1e-2, 1e2))


@given(data=binary_data(max_m=30), C1=log_uniform(1e-2, 1e2), C2=C2_VALUES,
       eps=st.floats(0.0, 3.0, allow_subnormal=False), fit_intercept=st.booleans())
def test_strong_duality_and_certificates(data, C1, C2, eps, fit_intercept):
    X, y, kernel, scale = data
    prob = rm.SVMm(X, y, C1=C1, C2=C2, eps=eps, kernel=kernel, fit_intercept=fit_intercept)
    pair = primal_and_dual(prob, scale)
    if pair is None:            # off the unit scale: the trust property only
        return
    p, d = pair
    # the dual's optimal value (eq. 15) equals the primal optimum
    assert abs(prob.dual_value(d.variables) - p.objective) <= 1e-6 * (1 + abs(p.objective))
    for sol in (p, d):
        cert = prob.certify(sol, reference=p)
        assert cert.ok, str(cert)
    # a user's point given by the dual only: primal recovered by nu = Y(alpha - beta) + KKT b
    user = prob.solution_from(dual={"alpha": d.variables["alpha"], "beta": d.variables["beta"]})
    assert prob.certify(user, reference=p).ok


def test_intercept_multiplier_sign_matches_primal():
    X, y, k, _ = random_binary(4, m=40, d=3, kernel="rbf")
    prob = rm.SVMm(X, y, C1=1.0, C2=0.3, eps=0.5, kernel=k)
    p, d = prob.solve(form="primal"), prob.solve(form="dual")
    assert abs(p.intercept - d.intercept) <= 1e-6
    assert abs(p.intercept) > 1e-3                      # the test can see a sign error
    np.testing.assert_allclose(prob.decision_function(p, X), prob.decision_function(d, X),
                               atol=1e-6)


def _dual_qp(prob):
    """Eq. 15 over z = [alpha; beta] as min 1/2 z^T H z + p^T z (for projected gradient)."""
    Q = prob.y[:, None] * prob.gram * prob.y[None, :]
    H = np.block([[Q, -Q], [-Q, Q]])
    p = np.concatenate([-np.ones(prob.m), (1 + prob.eps) * np.ones(prob.m)])
    hi = np.concatenate([np.full(prob.m, prob.C1), np.full(prob.m, prob.C2)])
    return H, p, hi


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
@pytest.mark.parametrize("fit_intercept", [False, True])
def test_certificate_fails_when_it_should(kernel, fit_intercept):
    X, y, k, _ = random_binary(1, m=40, d=4, kernel=kernel)
    prob = rm.SVMm(X, y, C1=1.0, C2=0.5, eps=0.2, kernel=k, fit_intercept=fit_intercept)
    ref = prob.solve()
    assert prob.certify(ref).ok
    assert np.any(ref.variables["beta"] > 1e-6)        # the band is active on this instance
    check_rejects_perturbed(prob, ref)
    # dual points outside their box (alpha, then beta)
    for name, C in (("alpha", prob.C1), ("beta", prob.C2)):
        dual = {n: ref.variables[n].copy() for n in ("alpha", "beta")}
        dual[name][np.argmax(dual[name])] = C * 1.5
        cert = prob.certify(prob.solution_from(coef=ref.coef, intercept=ref.intercept, dual=dual))
        assert not cert.ok and "dual feasibility" in cert.failing
    # another solver stopped early
    if fit_intercept:
        early = libsvm_stopped_early(prob, prob.C1)
    else:
        H, p, hi = _dual_qp(prob)
        z = projected_gradient(H, p, 0.0, hi, iters=5)
        early = prob.solution_from(dual={"alpha": z[:prob.m], "beta": z[prob.m:]})
    cert = prob.certify(early)
    assert not cert.ok, str(cert)


def test_projected_gradient_converged_passes_and_early_fails():
    """The same independent solver passes once run to convergence (no intercept)."""
    X, y, k, _ = random_binary(5, m=25, d=3, kernel="rbf")
    prob = rm.SVMm(X, y, C1=2.0, C2=1.0, eps=0.3, kernel=k, fit_intercept=False)
    H, p, hi = _dual_qp(prob)
    early = projected_gradient(H, p, 0.0, hi, iters=5)
    late = projected_gradient(H, p, 0.0, hi, iters=200000)
    mk = lambda z: prob.solution_from(dual={"alpha": z[:prob.m], "beta": z[prob.m:]})
    assert not prob.certify(mk(early)).ok
    assert prob.certify(mk(late), tol=1e-5).ok


@pytest.mark.parametrize("fit_intercept", [False, True])
def test_certify_from_w_only_at_optimum(fit_intercept):
    X, y, _, _ = random_binary(2, m=50, d=3)
    prob = rm.SVMm(X, y, C1=2.0, C2=0.7, eps=0.4, fit_intercept=fit_intercept)
    ref = prob.solve(form="dual")          # polished: w accurate to ~1e-9
    check_certifies_from_w(prob, ref)
    # the interior-point primal's own w (accurate to ~1e-6) still certifies at 1e-5
    p = prob.solve(form="primal")
    assert prob.certify(prob.solution_from(w=p.w, intercept=p.intercept), tol=1e-5).ok
    cert = prob.certify(prob.solution_from(w=ref.w * 0.98, intercept=ref.intercept))
    assert not cert.ok


def test_erratum_eqs_7_14_half_norm():
    """Eqs. 7/14 print ||w||^2; the dual eq. 15 belongs to 1/2 ||w||^2 (SPEC §6)."""
    import cvxpy as cp

    X, y, _, _ = random_binary(3, m=40, d=3)
    C1, C2, eps = 1.0, 0.5, 0.3
    prob = rm.SVMm(X, y, C1=C1, C2=C2, eps=eps)
    d = prob.solve(form="dual")
    D = prob.dual_value(d.variables)                  # eq. 15's optimal value

    def primal(norm_factor):
        w, b, xi, eta = cp.Variable(3), cp.Variable(), cp.Variable(40), cp.Variable(40)
        g = cp.multiply(prob.y, X @ w + b)
        pr = cp.Problem(cp.Minimize(norm_factor * cp.sum_squares(w) + C1 * cp.sum(xi)
                                    + C2 * cp.sum(eta)),
                        [g >= 1 - xi, g <= 1 + eps + eta, xi >= 0, eta >= 0])
        pr.solve(solver="CLARABEL")
        return pr.value, w.value

    printed, w_printed = primal(1.0)                  # eqs. 7 / 14 as printed
    ours, w_ours = primal(0.5)                        # SPEC
    assert abs(ours - D) <= 1e-6 * (1 + abs(D))       # strong duality with 1/2
    assert abs(printed - D) > 1e-2 * abs(D)           # not with the printed ||w||^2
    # the printed primal is SVMm with (C1/2, C2/2) at twice the value
    twice = rm.SVMm(X, y, C1=C1 / 2, C2=C2 / 2, eps=eps).solve()
    assert abs(printed - 2 * twice.objective) <= 1e-6 * (1 + abs(printed))
    np.testing.assert_allclose(w_ours, d.w, atol=1e-5)


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_eps_svm_is_svmm_with_eps_zero(kernel):
    X, y, k, _ = random_binary(6, m=35, d=4, kernel=kernel)
    a = rm.EpsSVM(X, y, C1=1.5, C2=0.4, kernel=k).solve()
    b = rm.SVMm(X, y, C1=1.5, C2=0.4, eps=0.0, kernel=k).solve()
    assert abs(a.objective - b.objective) <= 1e-8 * (1 + abs(b.objective))
    np.testing.assert_allclose(a.coef, b.coef, atol=1e-6)
    assert rm.EpsSVM(X, y, C1=1.5, C2=0.4, kernel=k).eps == 0.0
    assert "eq. 6" in rm.EpsSVM.__doc__


@pytest.mark.parametrize("kernel", ["linear", "rbf", "poly"])
def test_limits_are_the_svm_with_intercept(kernel):
    X, y, k, _ = random_binary(7, m=40, d=4, kernel=kernel)
    svm = rm.SVM(X, y, C=0.8, kernel=k, fit_intercept=True)
    s = svm.solve(form="primal")
    for prob in (rm.SVMm(X, y, C1=0.8, C2=0.0, eps=0.3, kernel=k),      # C2 = 0
                 rm.SVMm(X, y, C1=0.8, C2=5.0, eps=1e3, kernel=k)):      # eps -> infinity
        r = prob.solve(form="primal")
        assert abs(r.objective - s.objective) <= 1e-6 * (1 + abs(s.objective))
        np.testing.assert_allclose(r.w, s.w, atol=1e-5 * (1 + np.linalg.norm(s.w)))
        assert np.all(prob.solve(form="dual").variables["beta"] <= 1e-8)
    # and a band that binds changes the optimum
    r = rm.SVMm(X, y, C1=0.8, C2=5.0, eps=0.1, kernel=k).solve()
    assert r.objective > s.objective + 1e-4


@pytest.mark.parametrize("C,lam", [(1.0, 0.5), (4.0, 10.0), (0.1, 0.02)])
def test_seed_eq6_scaling(C, lam):
    """Seed 003 eq. 6 (w^T w, its (C, lambda)) has the minimizer of
    SVMm(C1=C/2, C2=lambda/2, eps=0) and twice its value (SPEC §6)."""
    import cvxpy as cp

    X, y, _, _ = random_binary(8, m=40, d=3)
    yy = np.where(y == y.max(), 1.0, -1.0)
    w, b = cp.Variable(3), cp.Variable()
    g = cp.multiply(yy, X @ w + b)
    pr = cp.Problem(cp.Minimize(cp.sum_squares(w)
                                + lam * cp.sum(cp.pos(g - 1)) + C * cp.sum(cp.pos(1 - g))))
    pr.solve(solver="CLARABEL")
    ref = rm.SVMm(X, y, C1=C / 2, C2=lam / 2, eps=0.0).solve(form="primal")
    assert abs(pr.value - 2 * ref.objective) <= 1e-6 * (1 + abs(pr.value))
    np.testing.assert_allclose(w.value, ref.w, atol=1e-5 * (1 + np.linalg.norm(ref.w)))


def test_C2_zero_box_is_handled_by_derivation():
    X, y, k, _ = random_binary(9, m=30, d=3, kernel="rbf")
    prob = rm.SVMm(X, y, C1=1.0, C2=0.0, eps=0.0, kernel=k)
    ref = prob.solve()
    cert = prob.certify(prob.solution_from(coef=ref.coef, intercept=ref.intercept))
    assert cert.ok, str(cert)
    assert np.all(cert.dual["beta"] == 0.0)


def test_bad_input():
    X, y, _, _ = random_binary(3, m=10, d=2)
    with pytest.raises(ValueError, match="C1"):
        rm.SVMm(X, y, C1=0, C2=1.0, eps=0.1)
    with pytest.raises(ValueError, match="C2"):
        rm.SVMm(X, y, C1=1.0, C2=-1.0, eps=0.1)
    with pytest.raises(ValueError, match="eps"):
        rm.SVMm(X, y, C1=1.0, C2=1.0, eps=-0.1)
    with pytest.raises(ValueError, match="eps"):
        rm.SVMm(X, y, C1=1.0, C2=1.0, eps=np.inf)
    with pytest.raises(ValueError, match="fit_intercept"):
        rm.SVMm(X, y, C1=1.0, C2=1.0, eps=0.1, fit_intercept="yes")
    with pytest.raises(ValueError, match="C2"):
        rm.EpsSVM(X, y, C1=1.0, C2=float("nan"))
    with pytest.raises(ValueError, match="exactly two"):
        rm.SVMm(X, np.arange(10) % 3)
    with pytest.raises(ValueError, match="form"):
        rm.SVMm(X, y).solve(form="simplex")
    with pytest.raises(ValueError, match="beta"):
        rm.SVMm(X, y).solution_from(dual={"alpha": np.zeros(10)})


def test_duality_gap_at_an_infeasible_dual_point_bounds_the_optimum():
    """The duality gap is evaluated at the dual point moved onto its feasible set: weak
    duality holds only there. Found on a point OSQP returned as the reference of two raw
    points on a cubic kernel (Gram ~1e12, C2 = 0, optimum 6.4e-11): its ``beta`` of -3.7e-11
    (box [0, 0]) lifted ``D`` to 8.8e-11, above the optimum, and its point, 1.8 times the
    optimum, certified. Now ``D`` lies below the exact optimum (here in closed form: both
    margins at 1) and the point fails; the exact optimum certifies."""
    X = np.array([[100.77434462, 90.9256294, 89.65711057],
                  [109.24583244, 123.16337222, 114.45700533]])
    y = np.array([1.0, -1.0])
    prob = rm.SVMm(X, y, C1=17.78279410038923, C2=0.0, eps=0.5623413251903491,
                   kernel=rm.kernels.Polynomial(degree=3, gamma=1 / 3, coef0=1.0),
                   fit_intercept=False)
    Q = np.outer(y, y) * prob.gram
    a_opt = np.linalg.solve(Q, np.ones(2))          # interior: Q alpha = e, 0 < alpha < C1
    assert np.all((a_opt > 0) & (a_opt < prob.C1))
    P_opt = float(np.sum(a_opt) - 0.5 * a_opt @ Q @ a_opt)
    osqp = {"alpha": np.array([7.49896568e-11, 3.98790671e-11]),
            "beta": np.array([-3.74952693e-11, -1.99399746e-11])}
    bad = prob.solution_from(coef=y * (osqp["alpha"] - osqp["beta"]), dual=osqp)
    cert = prob.certify(bad, reference=False)
    assert cert.values["dual_objective"] <= P_opt * (1 + 1e-6)
    assert prob.dual_value(osqp) > P_opt * 1.3             # the value at the point itself
    assert not cert.ok and cert.worst[0] == "duality gap", str(cert)
    assert any("moved onto the dual's feasible set" in n for n in cert.notes)
    assert cert.values["dual_objective_given"] > P_opt
    assert "leaves its feasible set" in cert.explain()["duality gap"]     # not "round-off"
    good = prob.solution_from(coef=y * a_opt, dual={"alpha": a_opt, "beta": np.zeros(2)})
    assert prob.certify(good, reference=False).ok


@pytest.mark.parametrize("with_beta", [False, True])
def test_project_boxes(with_beta):
    """``refmodels.certify.project_boxes``: every block inside its box and, with the
    equality, ``sum sign y^T x = 0`` to round-off; a feasible point comes back unchanged."""
    from refmodels.certify import project_boxes

    r = np.random.default_rng(4)
    y = np.where(r.random(200) < 0.3, 1.0, -1.0)
    blocks = [(r.normal(0.5, 1.0, 200), 1.0, 1.0)]
    if with_beta:
        blocks.append((r.normal(0.2, 0.5, 200), 0.4, -1.0))
    for equality in (False, True):
        out = project_boxes(y, blocks, equality)
        for x, (_, hi, _) in zip(out, blocks):
            assert np.all((x >= 0.0) & (x <= hi))
        if equality:
            total = sum(s * float(y @ x) for x, (_, _, s) in zip(out, blocks))
            assert abs(total) <= 1e-12 * 200
        else:
            for x, (x0, hi, _) in zip(out, blocks):
                np.testing.assert_array_equal(x, np.clip(x0, 0.0, hi))
    # already feasible: the same numbers
    a = np.full(200, 0.5)
    a[y < 0] = 0.5 * np.sum(y > 0) / np.sum(y < 0)
    assert abs(float(y @ a)) <= 1e-13
    np.testing.assert_allclose(project_boxes(y, [(a, 1.0, 1.0)], True)[0], a, rtol=0,
                               atol=1e-15)
    assert project_boxes(y, [(a, 1.0, 1.0)])[0].tolist() == a.tolist()
