"""The representer form of the kernel certificate (refmodels/representer.py): above a size
threshold a kernel point is certified from its coefficients by kernel products, never
through the empirical map or the Gram. It must give the same verdicts as the feature-space
form, with residuals that agree to round-off, and never build an m x m matrix."""
import warnings

import numpy as np
import pytest

import fast
import refmodels as rm
import refmodels.base as base
from refmodels import representer as R
from refmodels.kernels import RBF, Polynomial
from refmodels.representer import FeatureVector, fnorm
from refmodels.workspace import Workspace


def _data(seed, m=90, scale=1.0):
    r = np.random.default_rng(seed)
    X = r.normal(size=(m, 4)) * scale
    y = np.where(X[:, 0] + 0.25 * (X[:, 1] / scale) ** 2 * scale + 0.5 * scale * r.normal(size=m)
                 > 0.2 * scale, 1, -1)
    return X, y


def _problems(X, y, scale):
    g = 0.2 / scale ** 2
    return [rm.SVM(X, y, C=2.0, kernel=RBF(g)),
            rm.SVM(X, y, C=2.0, kernel=RBF(g), fit_intercept=True),
            rm.ODM(X, y, lam=4.0, mu=0.3, theta=0.2, kernel=RBF(g)),
            rm.ODML(X, y, lam=3.0, mu1=0.2, mu2=0.1, kernel=RBF(g)),
            rm.LDM(X, y, C=0.5, lam1=0.25, lam2=0.1, kernel=RBF(g)),
            rm.SVMm(X, y, C1=2.0, C2=1.0, eps=0.5, kernel=RBF(g)),
            rm.EpsSVM(X, y, C1=2.0, C2=1.0, kernel=Polynomial(degree=2, gamma=g))]


def _points(p, sol):
    """The solver's point (with its dual), the coef alone (dual derived), and a point 1e-3
    off (which must fail)."""
    b = sol.intercept if p.has_intercept else None
    names = p.dual_names
    dual = {k: sol.variables[k] for k in names} if all(
        sol.variables.get(k) is not None for k in names) else None
    out = [("solver", sol), ("coef only", p.solution_from(coef=sol.coef, intercept=b))]
    if dual is not None:
        out.append(("off", p.solution_from(coef=sol.coef * (1 + 1e-3), intercept=b, dual=dual)))
    return out


def _both_forms(p, sol, monkeypatch, blocks=False):
    """The certificate in the feature-space form, then in the representer form (on a fresh
    copy of the problem, so nothing computed in one form is seen by the other)."""
    c_feature = p.certify(sol, reference=False, workspace=Workspace())
    with monkeypatch.context() as mp:
        mp.setattr(R, "REPRESENTER_MIN_M", 0)
        if blocks:
            mp.setattr(base, "AUTO_REFERENCE_MAX_M", 0)
        c_rep = p.certify(sol, reference=False, workspace=Workspace())
    return c_feature, c_rep


@pytest.mark.parametrize("seed,scale", [(0, 1.0), (1, 1e-3), (2, 1e3), (3, 1.0)])
def test_the_representer_form_gives_the_feature_space_verdicts(seed, scale, monkeypatch):
    X, y = _data(seed, scale=scale)
    warnings.simplefilter("ignore")
    for p in _problems(X, y, scale):
        sol = fast.solve(p, random_state=0)
        for what, point in _points(p, sol):
            cf, cr = _both_forms(p, point, monkeypatch, blocks=(seed == 3))
            label = f"{type(p).__name__} b={p.has_intercept} {what}"
            assert cf.ok == cr.ok, (label, cf.worst, cr.worst)
            if what == "off":
                assert not cr.ok, label
            # where the point holds, the same scaled residuals to within 1% of the tolerance
            # (both forms evaluate the same quantities; only their round-off differs)
            for name, (_, scaled) in cf.residuals.items():
                if name in cr.residuals and cf.ok:
                    assert abs(scaled - cr.residuals[name][1]) <= 1e-2 * cf.tol, \
                        (label, name, scaled, cr.residuals[name][1])


def test_the_representer_form_builds_no_m_by_m_matrix(monkeypatch):
    """Above the threshold the certificate reads kernel blocks only: no Gram, no map."""
    X, y = _data(5, m=R.REPRESENTER_MIN_M + 200)
    warnings.simplefilter("ignore")
    for p in (rm.SVM(X, y, C=1.0, kernel=RBF(0.3)),
              rm.ODM(X, y, lam=1.0, mu=0.5, theta=0.3, kernel=RBF(0.3))):
        sol = fast.solve(p, random_state=0)
        import refmodels.kernels as K

        def refuse(*a, **k):
            raise AssertionError("an m x m kernel matrix was built")
        with monkeypatch.context() as mp:
            mp.setattr(K, "empirical_map", refuse)
            mp.setattr(type(p.kernel), "gram", refuse)
            ws = Workspace()
            cert = p.certify(sol, reference=False, workspace=ws)
            again = p.certify(sol, reference=False)
        assert cert.ok, cert.worst
        assert "gram" not in ws.keys() and "F" not in ws.keys()
        assert cert.residuals == again.residuals          # the same, to the bit


def test_the_odml_dual_bound_is_a_lower_bound_equal_at_the_optimum():
    """ODML/LDM's representer dual value ``L(w, a) - ||grad||^2 / 2`` never exceeds the exact
    ``D_max(a)`` and equals it at a stationary point."""
    X, y = _data(7)
    r = np.random.default_rng(7)
    warnings.simplefilter("ignore")
    for p in _problems(X, y, 1.0)[3:5]:
        sol = fast.solve(p, random_state=0)
        name = p.dual_names[0]
        upper = p._upper
        for k in range(6):
            a = sol.variables[name] if k == 0 else r.uniform(0, upper, size=p.m)
            coef = sol.coef if k < 3 else sol.coef * (1 + r.normal(scale=0.1, size=p.m))
            exact = p.dual_value({name: a})
            bound = p._dual_value_at((FeatureVector(p, coef), 0.0), {name: a})
            tol = 1e-10 * (1 + abs(exact))
            assert bound <= exact + tol, (type(p).__name__, k, bound, exact)
            if k == 0:
                assert bound == pytest.approx(exact, rel=1e-9, abs=1e-9)


def test_feature_vectors_combine_coefficients_and_refuse_arrays():
    X, y = _data(9, m=40)
    p = rm.SVM(X, y, C=1.0, kernel=RBF(0.5))
    r = np.random.default_rng(9)
    c1, c2 = r.normal(size=40), r.normal(size=40)
    u, v = FeatureVector(p, c1), FeatureVector(p, c2)
    G = p.gram
    d = 2.0 * u - v / 4
    assert np.array_equal(d.coef, 2.0 * c1 - c2 / 4)
    assert fnorm(d) == pytest.approx(np.sqrt(d.coef @ G @ d.coef), rel=1e-12)
    assert np.allclose(u.Gc, G @ c1, rtol=0, atol=1e-12 * np.abs(G).sum())
    assert fnorm(FeatureVector(p, np.zeros(40))) == 0.0
    with pytest.raises(TypeError):
        u - np.ones(40)
    with pytest.raises(TypeError):
        u + FeatureVector(rm.SVM(X, y, C=2.0, kernel=RBF(0.5)), c2)   # another problem


def test_products_are_computed_once_per_vector_within_a_certificate(monkeypatch):
    X, y = _data(11, m=60)
    p = rm.SVM(X, y, C=1.0, kernel=RBF(0.5))
    calls = []
    orig = type(p)._kernel_blocks_times

    def counted(self, v):
        calls.append(v.copy())
        return orig(self, v)
    monkeypatch.setattr(type(p), "_kernel_blocks_times", counted)
    monkeypatch.setattr(base, "AUTO_REFERENCE_MAX_M", 0)
    v = np.arange(60.0)
    with R.products():
        a = p.gram_times(v)
        b = p.gram_times(v.copy())
    assert len(calls) == 1 and np.array_equal(a, b)
    p.gram_times(v)                    # outside a certificate: no memory between calls
    assert len(calls) == 2


def test_the_reference_solve_works_when_its_certificate_takes_the_representer_form(monkeypatch):
    """The reference ladder works in feature space (arrays) and certifies its own point in
    the representer form: the two must not mix (ODML's polish scores array points)."""
    X, y = _data(13, m=50)
    monkeypatch.setattr(R, "REPRESENTER_MIN_M", 0)
    for p in _problems(X, y, 1.0):
        ref = p.solve()
        cert = p.certify(ref, reference=False)
        assert cert.ok, (type(p).__name__, cert.worst)


def test_sparse_linear_certificates_never_densify(monkeypatch):
    """A CSR problem's certificate works on the sparse matrix: no dense m x d array (a
    500,000 x 50,000 set would need 186 GiB)."""
    import scipy.sparse as sp

    r = np.random.default_rng(17)
    X = sp.random(400, 300, density=0.02, random_state=17, format="csr")
    y = np.where(X @ r.normal(size=300) > 0, 1, -1)

    def refuse(self, *a, **k):
        raise AssertionError("a sparse matrix was densified")
    warnings.simplefilter("ignore")
    for p in (rm.SVM(X, y, C=1.0), rm.ODM(X, y, lam=1.0, mu=0.5, theta=0.3),
              rm.SVMm(X, y, C1=1.0, C2=0.5, eps=0.5)):
        sol = fast.solve(p, random_state=0)
        user = p.solution_from(w=sol.variables["w"] if "w" in sol.variables else
                               np.asarray(X.T @ sol.coef).ravel(),
                               intercept=sol.intercept if p.has_intercept else None)
        with monkeypatch.context() as mp:
            for cls in (sp.csr_matrix, sp.csc_matrix, sp.coo_matrix):
                mp.setattr(cls, "toarray", refuse)
            for point in (sol, user):
                cert = p.certify(point, reference=False)
                assert np.isfinite(cert.worst[1]), (type(p).__name__, cert.worst)
        assert p.certify(sol, reference=False).ok or sol.status != "optimal"
