"""Limits the certificate keeps whatever the input: it never holds because a value
overflowed, it refuses early (with the estimate) a dense computation that cannot be
bounded, and it reports the relative duality gap beside its verdict."""
import math

import numpy as np
import pytest

import refmodels as rm
from refmodels.solution import SolverError
from refmodels import _numeric
from refmodels.certify import Certificate


def test_non_finite_residual_or_scale_fails():
    c = Certificate("SVM")
    c.add("duality gap", 2.8e154, math.inf)          # a scale that overflowed
    assert not c.ok and c.residuals["duality gap"][1] == math.inf
    assert any("not finite" in n for n in c.notes)
    c = Certificate("SVM")
    c.add("stationarity", math.nan, 1.0)
    assert not c.ok and not np.isfinite(c.holds_at)
    c = Certificate("SVM")
    c.add("duality gap", 0.0, 1.0)
    c.values["objective"] = math.inf
    assert not c.ok                                  # an infinite objective never holds


def test_a_point_whose_objective_overflows_fails():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 3))
    y = np.where(X[:, 0] > 0, 1, -1)
    prob = rm.SVM(X, y, C=1.0)
    with np.errstate(over="ignore", invalid="ignore"):
        sol = prob.solution_from(w=np.full(3, 1e160))
        cert = prob.certify(sol, reference=False)
    assert not cert.ok


def test_dense_kernel_quantities_are_refused_early_with_the_estimate(monkeypatch):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(30_000, 4))
    y = np.where(X[:, 0] > 0, 1, -1)
    prob = rm.SVM(X, y, C=1.0, kernel=rm.kernels.RBF(0.25))
    # (the certificate itself never needs the map there: tests/test_representer.py)
    with pytest.raises(MemoryError, match=r"30,000 points needs about .* GB"):
        prob.F
    # the same rule at a small size: the eigendecomposition's cap
    monkeypatch.setattr(_numeric, "DENSE_EIG_MAX_M", 10)
    small = rm.SVM(X[:40], y[:40], C=1.0, kernel=rm.kernels.RBF(0.25))
    with pytest.raises(MemoryError, match="eigendecomposition"):
        small.solution_from(coef=np.zeros(40))


def test_relative_gap_sits_beside_ok():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(30, 3))
    y = np.where(X[:, 0] > 0, 1, -1)
    prob = rm.SVM(X, y, C=1.0)
    cert = prob.certify(prob.solve(), reference=False)
    assert cert.ok and cert.relative_gap is not None and abs(cert.relative_gap) < 1e-6
    assert "relative duality gap" in str(cert)


def test_an_odm_lam_whose_dual_constant_overflows_is_refused():
    X = np.random.default_rng(0).normal(size=(30, 3))
    y = np.where(X[:, 0] > 0, 1, -1)
    with pytest.raises(ValueError, match=r"lam must be at least .* dual's constant a"):
        rm.ODM(X, y, lam=2.3e-308, mu=0.5, theta=0.3)
    rm.ODM(X, y, lam=1e-300, mu=0.5, theta=0.3)          # a ~ 7e300: a number


@pytest.mark.parametrize("weight", [2.3e-308, 1e-300, 1e-200])
@pytest.mark.parametrize("kernel", [None, "rbf"])
def test_tiny_normal_hyperparameters_certify_in_both_layers(weight, kernel):
    """At ``lam = 1e-300`` ODM's multipliers are ~1e-302 and ``a`` ~1e302: the dual's
    ``a/2 ||zeta||^2`` is ~1e-300 although ``||zeta||^2`` underflows to 0. The dual value
    must not lose it (it did: D came out twice P, and every point failed), in either layer."""
    import warnings

    import fast

    rng = np.random.default_rng(3)
    X = rng.normal(size=(30, 3))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=30) > 0, 1, -1)
    odm = [] if weight < 1e-306 else [rm.ODM(X, y, lam=weight, mu=0.5, theta=0.3, kernel=kernel),
                                      rm.ODM(X, y, lam=weight, mu=0.0, theta=0.0, kernel=kernel)]
    for p in odm + [rm.SVM(X, y, C=weight, kernel=kernel),
              rm.LDM(X, y, C=weight, lam1=0.25, lam2=0.1, kernel=kernel),
              rm.SVMm(X, y, C1=weight, C2=weight, eps=0.5, kernel=kernel)]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            s = fast.solve(p, random_state=0)
        c = p.certify(s, reference=False)
        assert s.status == "optimal" and c.ok, (type(p).__name__, weight, s.status, c.worst)
        try:
            ref = p.solve()
        except SolverError:
            # SVMm with its intercept at C1 = C2 <= 1e-200: the conic solvers return b = 0
            # and an objective of 30 C against the optimum 24 C (the fast point's), with
            # multipliers off the intercept's equality by 20 %; the certificate, which
            # judges the gap at their feasible projection, refuses it (it used to pass)
            assert isinstance(p, rm.SVMm) and weight <= 1e-200, (type(p).__name__, weight)
            continue
        assert p.certify(ref, reference=False).ok, (type(p).__name__, weight)
        assert ref.objective <= s.objective + 1e-6 * (abs(s.objective) + c.values[
            "objective_unit"])


def test_a_kernel_odml_whose_dense_h_cannot_fit_is_refused_before_it_is_built(monkeypatch):
    """Kernel ODML/LDM hold the Gram, H and a factor (about five m x m arrays): at
    m = 30,000 that is 36 GB, and the process was killed by the system instead of refused."""
    import fast

    monkeypatch.setattr(_numeric, "_available_memory", lambda: 1e5)   # 5 x 8 x 60^2 = 144 kB
    rng = np.random.default_rng(5)
    X = rng.normal(size=(60, 3))
    y = np.where(X[:, 0] > 0, 1, -1)
    for p in (rm.LDM(X, y, C=1.0, lam1=0.25, lam2=0.1, kernel="rbf"),
              rm.ODML(X, y, lam=1.0, mu1=0.2, mu2=0.1, kernel="rbf")):
        for method in (None, "dcd"):
            with pytest.raises(MemoryError, match=r"dense H .* needs about .* GB.*linear kernel"):
                fast.solve(p, method=method)


@pytest.mark.parametrize("family", ["ODML", "LDM"])
def test_whitening_of_sparse_data_is_refused_early_with_the_estimate(family, monkeypatch):
    """The whitened path of the linear ODML/LDM solver (dense ``m x d`` whatever ``X`` is),
    asked for where it cannot fit: a MemoryError with the estimate before any dense array."""
    import scipy.sparse as sp

    import fast

    monkeypatch.setattr(_numeric, "_available_memory", lambda: 2e9)
    # (d < m: with more features than points the solver takes the m x m path instead)
    # 20,000 stored entries at random places (scipy's sp.random with an integer seed
    # permutes all 2e8 places to draw them: half a minute)
    r = np.random.default_rng(0)
    X = sp.csr_matrix((r.normal(size=20_000), (r.integers(0, 20_000, 20_000),
                                               r.integers(0, 10_000, 20_000))),
                      shape=(20_000, 10_000))
    y = np.where(np.arange(20_000) % 2, 1, -1)
    prob = (rm.ODML(X, y, lam=8.0, mu1=0.5, mu2=0.1) if family == "ODML"
            else rm.LDM(X, y, C=1.0, lam1=0.5, lam2=0.1))
    with pytest.raises(MemoryError, match=r"whitened data .* 20,000 x 10,000.* needs about "
                                          r"5\.6 GB .*reduce d"):
        fast.solve(prob, method="dcd", path="linear")
    # the automatic choice takes the split path there (no whitening): fast/_odml_split.py
    assert fast.odml.use_split(prob)
