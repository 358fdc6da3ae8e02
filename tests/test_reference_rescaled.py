"""The reference ladder's last rung: the equivalent rescaled problem (refmodels.base,
``Problem._certified_solve``).

With ``phi -> phi / sqrt(s)`` (``G -> G / s``) and every loss weight times ``s``, the margins
of ``w' = sqrt(s) w`` are those of ``w`` and the objective is ``s P``: the rung solves that
problem when no attempt on the raw one certifies, maps its point back and lets this problem's
certificate decide. Checked here: the map on well-scaled problems (any ``s``), problems the
plain ladder refuses that the rung certifies (objective against the fast solver's certified
point), a mapped point that fails the certificate is still refused, and the families without
the rung.
"""
import numpy as np
import pytest

import refmodels as rm
import refmodels.base as base
import refmodels.reference as reference
from refmodels.certify import DEFAULT_TOL
from refmodels.solution import SolverError
from strategies import make_problem, random_binary


def _family(name, X, y, k, v=1.0):
    """A problem of family ``name``; ``v`` multiplies every loss weight."""
    if name == "SVM":
        return rm.SVM(X, y, C=0.7 * v, kernel=k)
    if name == "SVM+b":
        return rm.SVM(X, y, C=0.7 * v, kernel=k, fit_intercept=True)
    if name == "ODM":
        return rm.ODM(X, y, lam=2.0 * v, mu=0.4, theta=0.3, kernel=k)
    if name == "ODML":
        return rm.ODML(X, y, lam=3.0 * v, mu1=0.5 * v, mu2=0.2 * v, kernel=k)
    if name == "LDM":
        return rm.LDM(X, y, C=0.1 * v, lam1=0.25 * v, lam2=0.2 * v, kernel=k)
    if name == "SVMm":
        return rm.SVMm(X, y, C1=0.8 * v, C2=0.3 * v, eps=0.5, kernel=k)
    if name == "EpsSVM":
        return rm.EpsSVM(X, y, C1=0.8 * v, C2=0.3 * v, kernel=k)
    raise ValueError(name)


FAMILIES = ("SVM", "SVM+b", "ODM", "ODML", "LDM", "SVMm", "EpsSVM")


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
@pytest.mark.parametrize("family", FAMILIES)
def test_rescaled_then_mapped_equals_direct(family, kernel):
    """The map on a well-scaled problem, for an arbitrary ``s`` (the identity holds for any):
    the rescaled problem's optimum is ``s P*``, and mapped back it is the direct optimum
    (objective, coef on the RBF kernel where it is unique, decision values, intercept) to
    1e-6 relative; the mapped point certifies on the original problem."""
    X, y, k, _ = random_binary(11, m=30, d=3, kernel=kernel)
    prob = _family(family, X, y, k)
    s = 37.0
    twin = prob._rescaled(s)
    assert type(twin) is type(prob)
    assert twin.kernel.is_linear == prob.kernel.is_linear
    for name in prob.rescale_params:
        assert getattr(twin, name) == pytest.approx(s * getattr(prob, name), rel=1e-15)
    direct = prob.solve()
    sol_r = twin.solve()
    assert sol_r.objective == pytest.approx(s * direct.objective, rel=1e-6)
    mapped = prob._map_back(sol_r, s)
    assert mapped.objective == pytest.approx(direct.objective, rel=1e-6)
    assert abs(mapped.intercept - direct.intercept) <= 1e-6 * (1 + abs(direct.intercept))
    f_direct = prob.gram_times(direct.coef) + direct.intercept
    f_mapped = prob.gram_times(mapped.coef) + mapped.intercept
    assert np.max(np.abs(f_mapped - f_direct)) <= 1e-6 * (1 + np.max(np.abs(f_direct)))
    if kernel == "rbf":                 # G is non-singular: coef is unique
        assert np.linalg.norm(mapped.coef - direct.coef) <= 1e-6 * (
            1 + np.linalg.norm(direct.coef))
    for name in prob.dual_names:        # the multipliers scale by 1 / s
        assert name in mapped.variables
    assert prob.certify(mapped, reference=False).ok


def _raw_poly(seed, factor, weight, family):
    """Features x ``factor`` under ``(x^T z + 1)^2``, every loss weight ``weight / s``."""
    X, y, _, _ = random_binary(seed, m=30, d=3)
    X = X * factor
    k = rm.kernels.Polynomial(degree=2, gamma=1.0, coef0=1.0)
    s = float(np.mean(k.diag(X)))
    if family == "ODML":
        v = weight / s
        return rm.ODML(X, y, lam=v, mu1=0.1 * v, mu2=0.1 * v, kernel=k)
    return rm.SVM(X, y, C=weight / s, kernel=k, fit_intercept=family == "SVM+b")


# problems the ladder without the rescaled rung refuses: raw features under a polynomial
# kernel (Gram scale 4e4 to 4e17): tests/strategies.make_problem seeds found by
# validation/sweep_scales.py and a scan of seeds 0-149, and built ones. None was found for
# LDM and ODM (their refusals there come from C times the Gram's spectrum, 1e10 and more,
# which the rescaling leaves as it is): test_rung_end_to_end_every_family covers them.
REFUSED = {
    "SVM": lambda: _raw_poly(0, 1e4, 1e3, "SVM"),
    "SVM+b": lambda: make_problem("SVM+b", 121)[0],
    "ODML": lambda: _raw_poly(1, 1e4, 1e3, "ODML"),
    "SVMm": lambda: make_problem("SVMm", 9303)[0],
    "EpsSVM": lambda: make_problem("EpsSVM", 9300)[0],
}


@pytest.mark.parametrize("family", [
    pytest.param("SVM", marks=pytest.mark.slow), "SVM+b", "ODML", "SVMm",
    pytest.param("EpsSVM", marks=pytest.mark.slow)])
def test_refused_problem_certifies_through_the_rescaled_rung(family):
    """The rung is reached only when every attempt on the raw problem failed (they are all
    listed before it in ``info["attempts"]``); its point certifies on the raw problem, and
    its objective agrees with the fast solver's certified point to the certificate's
    tolerance."""
    import fast

    prob = REFUSED[family]()
    s = prob.gram_scale()
    assert s > base.RESCALE_AT
    sol = prob.solve()
    assert sol.status == "optimal"
    # which rung certifies depends on the solvers' versions (with the lowest Clarabel
    # allowed, a plain rung certifies SVM+b): the rescaled rung comes only after every
    # plain attempt failed, and whichever certified, the point agrees with the fast one
    attempts = sol.info["attempts"]
    if "rescaled" in sol.info:
        assert sol.info["rescaled"] == s
        raw = [a for a in attempts if "rescaled by s=" not in a]
        assert len(raw) >= 3 and attempts[:len(raw)] == raw      # the plain ladder, failed
        assert "rescaled by s=" in attempts[-1]
    else:
        assert not any("rescaled by s=" in a for a in attempts)
    cert = prob.certify(sol, reference=False)
    assert cert.ok, str(cert)
    # an independent computation: the fast solver's point, certified on its own
    # (objectives as the certificates evaluate them, through kernel products; each is
    # within DEFAULT_TOL (|P| + u) of P*, u the certificate's objective unit)
    other = fast.solve(prob, random_state=0)
    cert_fast = prob.certify(other, reference=False)
    assert cert_fast.ok
    P, P_fast = cert.values["objective"], cert_fast.values["objective"]
    unit = max(cert.values["objective_unit"], cert_fast.values["objective_unit"])
    assert abs(P - P_fast) <= DEFAULT_TOL * (abs(P_fast) + unit)


def test_plain_ladder_refuses_without_the_rung(monkeypatch):
    """SVMm seed 9303 (Gram scale 5e11): refused when the rung is off, certified with it."""
    prob = REFUSED["SVMm"]()
    with monkeypatch.context() as mp:
        mp.setattr(reference, "RESCALE_AT", np.inf)
        with pytest.raises(SolverError, match="no reference point") as info:
            prob.solve()
        assert "rescaled" not in str(info.value)
    assert prob.certify(prob.solve(), reference=False).ok


@pytest.mark.parametrize("family", FAMILIES)
def test_rung_end_to_end_every_family(family, monkeypatch):
    """Every family with the hook, through the rung: the raw attempts made to fail (the
    instance's CVXPY forms raise), the rescaled problem (features x 100, Gram scale ~3e4)
    certifies and its objective is the raw ladder's to the certificate's tolerance."""
    X, y, k, _ = random_binary(7, m=25, d=3, kernel="linear")
    X = X * 100.0
    s_guess = float(np.mean(np.sum(X ** 2, axis=1)))
    prob = _family(family, X, y, k, v=30.0 / s_guess)
    direct = prob.solve()
    assert "rescaled" not in direct.info
    forced = _family(family, X, y, k, v=30.0 / s_guess)

    def fail(*args, **kwargs):
        raise SolverError("forced failure of the raw problem")

    cls = type(forced)                  # problems are immutable: patch the class, for forced only
    for name in ("_solve_dual", "_solve_primal"):
        orig = getattr(cls, name)
        monkeypatch.setattr(cls, name, lambda self, *a, _o=orig, **k:
                            fail(*a, **k) if self is forced else _o(self, *a, **k))
    sol = forced.solve()
    assert sol.info["rescaled"] == forced.gram_scale() > base.RESCALE_AT
    assert sum("forced failure" in a for a in sol.info["attempts"]) >= 3
    cert = forced.certify(sol, reference=False)
    assert cert.ok, str(cert)
    P, P_direct = cert.values["objective"], forced.certify(direct, reference=False).values[
        "objective"]
    assert abs(P - P_direct) <= DEFAULT_TOL * (abs(P_direct) + cert.values["objective_unit"])


def test_rescaled_point_that_fails_the_certificate_is_refused(monkeypatch):
    """The rung hands its point to this problem's certificate: a mapped point moved off the
    optimum (coef and w x 1.01) is refused, and the message lists the rescaled attempts."""
    prob, _ = make_problem("SVMm", 9303)
    good = prob._map_back

    def perturbed(sol, s):
        out = good(sol, s)
        out.coef = out.coef * 1.01
        out.variables["w"] = out.variables["w"] * 1.01
        return out

    monkeypatch.setattr(type(prob), "_map_back", lambda self, sol, s: perturbed(sol, s))
    with pytest.raises(SolverError, match="rescaled by s=") as info:
        prob.solve()
    assert "no reference point for SVMm certifies" in str(info.value)


def test_no_rung_where_the_map_is_not_this_simple_or_not_needed():
    """MKLm (several kernels), McODM and DRR have no rescaled problem; a problem whose Gram
    scale is within [1e-3, 1e3] (RBF: 1) never gets the rung."""
    X, y, k, _ = random_binary(3, m=12, d=2, kernel="rbf")
    mkl = rm.MKLm(X, y, kernels=[k, rm.kernels.Linear()], C1=1.0, C2=0.5, eps=0.5)
    assert mkl.rescale_params is None and mkl.gram_scale() is None and mkl._rescaled(1e6) is None
    svm = rm.SVM(X, y, C=1.0, kernel=k)
    assert svm.gram_scale() == pytest.approx(1.0)
    assert svm._rescaled_rung([("dual", "CLARABEL", {})], "CLARABEL", False, []) is None
    Xl = np.vstack([X, X]) * 1e3
    lin = rm.SVM(Xl, np.concatenate([y, y]), C=1.0)
    assert lin.gram_scale() == pytest.approx(np.mean(np.sum(Xl ** 2, axis=1)))


def test_map_back_scales_multipliers_and_keeps_slacks():
    """``coef = coef' / s``, multipliers ``/ s``, slacks and intercept unchanged, ``w = w' /
    sqrt(s)`` (the linear kernel: X / sqrt(s))."""
    X, y, k, _ = random_binary(5, m=20, d=3, kernel="linear")
    prob = rm.SVMm(X, y, C1=0.8, C2=0.3, eps=0.5, kernel=k)
    s = 1e4
    sol_r = prob._rescaled(s).solve()
    mapped = prob._map_back(sol_r, s)
    assert np.allclose(mapped.coef, sol_r.coef / s, rtol=1e-15, atol=0)
    assert np.allclose(mapped.variables["w"], sol_r.variables["w"] / 100.0, rtol=1e-15, atol=0)
    for name in ("alpha", "beta"):
        assert np.allclose(mapped.variables[name], sol_r.variables[name] / s, rtol=1e-15, atol=0)
    assert mapped.intercept == sol_r.intercept
    for name in ("xi", "eta"):
        if name in sol_r.variables:
            assert np.array_equal(mapped.variables[name], sol_r.variables[name])
