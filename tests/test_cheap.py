"""The certificate's cheap mode (what a fast solver asks before it says ``optimal``): it is
checked like the full one, judges the returned point (not the solver's state), and the
status policy of :mod:`fast` follows it."""
import warnings

import numpy as np
import pytest

import fast
import refmodels as rm
from strategies import make_problem


def _quiet(f, *a, **k):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return f(*a, **k)


def test_mode_is_checked():
    prob, _ = make_problem("SVM", 0)
    sol = _quiet(fast.solve, prob, random_state=0)
    for bad in ("fast", None, 1):
        with pytest.raises(ValueError, match="mode must be 'full' or 'cheap'"):
            prob.certify(sol, mode=bad)


@pytest.mark.parametrize("family", ["SVM", "ODM", "ODML", "LDM", "SVMm", "McODM", "DRM"])
def test_fast_status_follows_the_cheap_certificate(family):
    """A solve that says ``optimal`` carries the cheap certificate that holds; the full
    certificate agrees at the returned point."""
    for seed in range(3):
        prob, desc = make_problem(family, seed)
        try:
            sol = _quiet(fast.solve, prob, random_state=0)
        except rm.SolverError:
            continue
        if sol.status != "optimal":
            continue
        cheap = prob.certify(sol, mode="cheap")
        assert cheap.values["mode"] == "cheap"
        if cheap.residuals:
            assert cheap.ok, (desc, cheap.residuals)
            assert sol.info["self_check"]["worst"] <= cheap.tol, desc
        assert _quiet(prob.certify, sol, reference=False).ok, desc


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_a_wrong_point_fails_the_cheap_certificate(kernel):
    """The solver's point, its reported objective kept, with coef moved by 1%: the cheap
    certificate sees the reported objective part from the point's (and the gap grow)."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(60, 4))
    y = np.where(X[:, 0] + 0.5 * rng.normal(size=60) > 0, 1, -1)
    prob = rm.SVM(X, y, C=1.0, kernel=kernel)
    sol = _quiet(fast.solve, prob, random_state=0)
    assert prob.certify(sol, mode="cheap").ok
    bad = rm.Solution(objective=sol.objective, coef=sol.coef * 1.01, intercept=sol.intercept,
                      variables=dict(sol.variables), status="optimal", solver=sol.solver,
                      info=dict(sol.info))
    bad.variables.pop("w", None)
    cert = prob.certify(bad, mode="cheap")
    assert not cert.ok and cert.failing, cert.residuals


def test_cheap_never_computes_the_reference():
    prob, _ = make_problem("ODM", 1)
    sol = _quiet(fast.solve, prob, random_state=0)
    ws = rm.Workspace()
    prob.certify(sol, mode="cheap", workspace=ws, reference=True)
    assert not any("reference" in str(k) for k in ws.keys()), list(ws.keys())
