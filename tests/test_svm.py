"""SVM (SPEC §1): primal = dual, external oracles, certificates that hold and that fail."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import refmodels as rm
from contract import check_certifies_from_w, check_rejects_bad_data, check_rejects_perturbed, \
    libsvm_stopped_early, primal_and_dual
from strategies import binary_data, log_uniform, projected_gradient, random_binary


@given(data=binary_data(), C=log_uniform(1e-2, 1e2), fit_intercept=st.booleans())
def test_strong_duality_and_certificates(data, C, fit_intercept):
    X, y, kernel, scale = data
    prob = rm.SVM(X, y, C=C, kernel=kernel, fit_intercept=fit_intercept)
    pair = primal_and_dual(prob, scale)
    if pair is None:            # off the unit scale: the trust property only
        return
    p, d = pair
    for sol in (p, d):
        cert = prob.certify(sol, reference=p)
        assert cert.ok, str(cert)
    # the point alone (coef and intercept, no duals) certifies too: the dual is derived
    cert = prob.certify(prob.solution_from(coef=d.coef, intercept=d.intercept), reference=p)
    assert cert.ok, str(cert)


def test_matches_liblinear_and_libsvm():
    from sklearn.svm import SVC, LinearSVC

    X, y, _, _ = random_binary(0, m=60, d=4)
    C = 0.7
    ref = rm.SVM(X, y, C=C).solve()
    lin = LinearSVC(C=C, loss="hinge", dual=True, fit_intercept=False, tol=1e-10,
                    max_iter=10**6).fit(X, y)
    prob = rm.SVM(X, y, C=C)
    assert abs(prob.primal_value(lin.coef_.ravel()) - ref.objective) <= 1e-5 * ref.objective
    # LIBSVM: SVC with an intercept, RBF kernel; compare through the dual coefficients.
    k = rm.kernels.RBF(gamma=0.3)
    prob = rm.SVM(X, y, C=C, kernel=k, fit_intercept=True)
    ref = prob.solve()
    svc = SVC(C=C, kernel="rbf", gamma=0.3, tol=1e-10).fit(X, y)
    coef = np.zeros(len(y))
    coef[svc.support_] = svc.dual_coef_.ravel()
    mine = prob.solution_from(coef=coef, intercept=svc.intercept_[0])
    assert abs(mine.objective - ref.objective) <= 1e-5 * ref.objective
    assert prob.certify(mine, tol=1e-5).ok


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
@pytest.mark.parametrize("fit_intercept", [False, True])
def test_certificate_fails_when_it_should(kernel, fit_intercept):
    X, y, k, _ = random_binary(1, m=40, d=4, kernel=kernel)
    prob = rm.SVM(X, y, C=1.0, kernel=k, fit_intercept=fit_intercept)
    ref = prob.solve()
    assert prob.certify(ref).ok
    check_rejects_perturbed(prob, ref)
    # dual point outside its box
    a = ref.variables["alpha"].copy()
    a[np.argmax(a)] = prob.C * 1.5
    cert = prob.certify(prob.solution_from(coef=ref.coef, intercept=ref.intercept,
                                           dual={"alpha": a}))
    assert not cert.ok and "dual feasibility" in cert.failing
    # another solver stopped early
    if fit_intercept:
        early = libsvm_stopped_early(prob, prob.C)
    else:
        Q = prob.y[:, None] * prob.gram * prob.y[None, :]
        early = prob.solution_from(dual={"alpha": projected_gradient(Q, -np.ones(len(y)), 0, prob.C)})
    cert = prob.certify(early)
    assert not cert.ok, str(cert)


def test_certify_from_w_only_derives_dual():
    X, y, _, _ = random_binary(2, m=50, d=3)
    prob = rm.SVM(X, y, C=2.0)
    check_certifies_from_w(prob, prob.solve(form="primal"))


def test_bad_input():
    X, y, _, _ = random_binary(3, m=10, d=2)
    with pytest.raises(ValueError, match="C"):
        rm.SVM(X, y, C=0)
    check_rejects_bad_data(rm.SVM, X, y)
    with pytest.raises(ValueError, match="one label per row"):
        rm.SVM(X, y[:-1])
    with pytest.raises(ValueError, match="non-empty"):
        rm.SVM(np.zeros((0, 2)), [])
    with pytest.raises(ValueError, match="form"):
        rm.SVM(X, y).solve(form="both")
    with pytest.raises(ValueError, match="square"):
        rm.SVM(X, y, kernel=rm.kernels.Precomputed())
    with pytest.raises(ValueError, match="symmetric"):
        rm.SVM(np.triu(np.ones((10, 10))), y, kernel=rm.kernels.Precomputed())
    with pytest.raises(ValueError, match="w"):
        rm.SVM(X, y).solution_from(w=np.ones(5))
    with pytest.raises(ValueError, match="gamma"):
        rm.kernels.RBF(gamma=-1)
