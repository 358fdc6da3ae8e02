"""Errors of the right kind: bad input is a ValueError naming the user's argument and the
rule, at construction where it can be (never a TypeError, an OverflowError, NumPy's or
SciPy's message, nor a name the user never wrote); DRR's certificate reports an
unavailable reference instead of raising it."""
from __future__ import annotations

import warnings
from fractions import Fraction

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp

import fast
import refmodels as rm
from refmodels.regularizers import Regularizer
from refmodels.solution import SolverError

K = rm.kernels
RNG = np.random.default_rng(3)
X = RNG.normal(size=(20, 3))
Y = np.where(X[:, 0] > 0, 1, -1)
YM = np.arange(20) % 3

#: every family's constructor on (X, y), with keyword overrides
MAKERS = {
    "SVM": lambda X, y, **kw: rm.SVM(X, y, **kw),
    "ODML": lambda X, y, **kw: rm.ODML(X, y, **kw),
    "LDM": lambda X, y, **kw: rm.LDM(X, y, **kw),
    "ODM": lambda X, y, **kw: rm.ODM(X, y, **kw),
    "SVMm": lambda X, y, **kw: rm.SVMm(X, y, **kw),
    "MKLm": lambda X, y, **kw: rm.MKLm(X, y, [K.Linear(), K.RBF(0.5)], **kw),
    "McODM": lambda X, y, **kw: rm.McODM(X, YM if y is Y else y, **{"lam": 1.0, "mu": 1.0,
                                                                    "theta": 0.1, **kw}),
    "DRM": lambda X, y, **kw: rm.DRM(X, YM if y is Y else y, X[:2], **{"alpha": 1.0,
                                                                      "beta": 1.0, **kw}),
}
#: (family, hyperparameter) pairs validated as weights
PARAMS = [("SVM", "C"), ("ODML", "lam"), ("ODML", "mu1"), ("LDM", "C"), ("LDM", "lam2"),
          ("ODM", "lam"), ("ODM", "mu"), ("SVMm", "C1"), ("SVMm", "C2"), ("SVMm", "eps"),
          ("MKLm", "C1"), ("McODM", "lam"), ("McODM", "mu"), ("DRM", "alpha"), ("DRM", "beta")]


# ---- hyperparameters ------------------------------------------------------------------

@pytest.mark.parametrize("family,name", PARAMS)
@pytest.mark.parametrize("value", [5e-324, 1e-310])
def test_subnormal_hyperparameter_is_refused_by_its_name(family, name, value):
    """``lam=5e-324`` said "the loss weight params[0] must be > 0" (fast) or CVXPY's
    "Problem data contains NaN or Inf" (reference)."""
    with pytest.raises(ValueError, match=rf"^{name} must be .*subnormal"):
        MAKERS[family](X, Y, **{name: value})


@pytest.mark.parametrize("family,name", PARAMS)
def test_hyperparameter_whose_square_overflows_is_refused_by_its_name(family, name):
    """``lam2=1e160`` ended in Python's OverflowError, ``C1=1e160`` in a TypeError deep in
    the interior point."""
    with pytest.raises(ValueError, match=rf"^{name} must be at most 1e\+150"):
        MAKERS[family](X, Y, **{name: 1e160})


@pytest.mark.parametrize("family,name", PARAMS)
def test_fraction_is_a_number(family, name):
    """``C=Fraction(1, 3)`` raised TypeError: a Fraction is a ``numbers.Real``."""
    p = MAKERS[family](X, Y, **{name: Fraction(1, 3)})
    assert getattr(p, name) == pytest.approx(1 / 3) and isinstance(getattr(p, name), float)


def test_extreme_but_representable_hyperparameters_are_accepted():
    assert rm.SVM(X, Y, C=1e150).C == 1e150
    assert rm.ODM(X, Y, lam=1e-300).lam == 1e-300
    assert rm.SVMm(X, Y, eps=0).eps == 0.0


def test_kernel_parameter_is_checked_the_same_way():
    with pytest.raises(ValueError, match="^gamma must be .*subnormal"):
        K.RBF(5e-324)
    assert K.RBF(Fraction(1, 2)).gamma == 0.5


# ---- X ---------------------------------------------------------------------------------

@pytest.mark.parametrize("family", sorted(MAKERS))
@pytest.mark.parametrize("scale", [1e155, 1e160, 1e300])
def test_features_whose_squared_norms_overflow_are_refused_naming_x(family, scale):
    """Entries of 1e160 gave "sol.coef must contain only finite values", "M must contain
    only finite values", SciPy's "array must not contain infs or NaNs" or a LinAlgError:
    none named an argument of the user's."""
    with pytest.raises(ValueError, match=r"^X's entries reach .*squared norms overflow.*"
                                         r"scale the features"):
        MAKERS[family](X * scale, Y)


def test_overflow_rule_counts_the_features():
    """The rule is on the squared row norms, not the entries: 1e149 in 3 features passes,
    in 10^6 features (a sparse row) it does not."""
    assert rm.SVM(X * 1e149, Y).m == 20
    row = sp.csr_matrix(np.full((1, 10**6), 1e149))
    Xs = sp.vstack([row, sp.csr_matrix(np.ones((3, 10**6)))]).tocsr()
    with pytest.raises(ValueError, match="^X's entries reach 1e\\+149"):
        rm.SVM(Xs, [1, -1, 1, -1])


def test_test_points_are_checked_by_their_name():
    with pytest.raises(ValueError, match="^X_test's entries reach"):
        rm.DRM(X, YM, X[:2] * 1e160, alpha=1.0, beta=1.0)


@pytest.mark.parametrize("make", [
    lambda: rm.SVM([[1.0, 2.0], [3.0]], [1, -1]),
    lambda: rm.DRM([[1.0, 2.0], [3.0, 4.0], [5.0]], [0, 1, 2], [[1.0, 2.0]], alpha=1.0,
                   beta=1.0),
])
def test_ragged_x_is_named(make):
    """NumPy's "setting an array element with a sequence ... inhomogeneous shape" named no
    argument."""
    with pytest.raises(ValueError, match=r"^X must be a rectangular array"):
        make()


# ---- y ---------------------------------------------------------------------------------

@pytest.mark.parametrize("family", ["SVM", "ODM", "McODM", "DRM"])
@pytest.mark.parametrize("labels,needle", [
    ([1, None] * 10, r"^y must not contain None \(a missing label\); found at index 1"),
    (np.array([1, None] * 10, dtype=object), r"^y must not contain None"),
    ([1, "a"] * 10, r"^y mixes numbers and strings"),
    (np.array([1, "a"] * 10, dtype=object), r"^y mixes numbers and strings"),
    ([1.0, float("nan")] * 10, r"^y must not contain NaN"),
    ([{1}, {2}] * 10, r"^y must hold numbers or strings"),
])
def test_bad_labels_are_a_value_error_naming_y(family, labels, needle):
    """``y`` with None or mixed types raised TypeError from ``np.unique``."""
    with pytest.raises(ValueError, match=needle):
        MAKERS[family](X, labels)


def test_labels_of_one_kind_still_work():
    assert list(rm.SVM(X, ["b", "a"] * 10).classes_) == ["a", "b"]
    assert list(rm.SVM(X, np.array(["b", "a"] * 10, dtype=object)).classes_) == ["a", "b"]
    assert list(rm.SVM(X, [True, False] * 10).classes_) == [False, True]
    assert list(rm.McODM(X, [0, 1.5, 3] * 6 + [0, 1.5], lam=1, mu=1, theta=0.1).classes_) \
        == [0, 1.5, 3]


# ---- DRR -------------------------------------------------------------------------------

class _Half(Regularizer):
    """1/2 ||w||^2 written as a user would."""

    def expr(self, w, groups):
        return 0.5 * cp.sum_squares(w)

    def value(self, w, groups):
        return 0.5 * float(w @ w)

    def prox(self, v, step, groups):
        return v / (1.0 + step)


class _WrongProx(_Half):
    def prox(self, v, step, groups):
        return np.full_like(v, 7.0)          # not the prox: no reference point certifies


class _NotConvex(_Half):
    def expr(self, w, groups):
        return -cp.sum_squares(w)            # not DCP-convex: the reference refuses it


class _ShortProx(_Half):
    def prox(self, v, step, groups):
        return v[:-1] / (1.0 + step)


class _MatrixProx(_Half):
    def prox(self, v, step, groups):
        return np.ones((v.size, 2))


def _drr(reg):
    return rm.DRR(X[:12], YM[:12], X[:2] + 0.1, alpha=1.0, beta=1.0, regularizer=reg)


@pytest.mark.parametrize("reg,kind", [(_WrongProx(), "SolverError")])
def test_drr_certificate_reports_an_unavailable_reference(reg, kind):
    """``DRR.certify()`` raised the reference's SolverError (a wrong prox); as every
    family's certificate, it reports the reference unavailable and judges the point without
    the objective gap. (A non-DCP expr is refused by the regularizer's check before any
    reference: test_drr_certificate_refuses_a_non_convex_regularizer.)"""
    p = _drr(reg)
    sol = p.solution_from(coef=np.zeros((12, 2)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cert = p.certify(sol)                                   # "auto": m <= 2000
        cert_true = p.certify(sol, reference=True)
    for c in (cert, cert_true):
        assert c.values["reference_objective"] is None
        assert "objective gap" not in c.residuals
        assert any(n.startswith(f"reference optimum unavailable ({kind}") for n in c.notes), \
            c.notes


def test_drr_certificate_refuses_a_non_convex_regularizer():
    p = _drr(_NotConvex())
    sol = p.solution_from(coef=np.zeros((12, 2)))
    for reference in ("auto", True, False):
        with pytest.raises(ValueError, match=r"fails rm.regularizers.check's 'expr is convex"):
            p.certify(sol, reference=reference)


def test_drr_certificate_still_refuses_a_wrong_reference_argument():
    p = _drr(_Half())
    sol = p.solution_from(coef=np.zeros((12, 2)))
    with pytest.raises(ValueError, match="reference must be"):
        p.certify(sol, reference="sometimes")
    bad = rm.Solution(objective=np.zeros(3), coef=np.zeros((12, 3)))
    with pytest.raises(ValueError, match="reference must be a DRR Solution"):
        p.certify(sol, reference=bad)


def test_drr_certificate_with_a_good_regularizer_measures_the_gap():
    p = _drr(_Half())
    cert = p.certify(fast.solve(p), reference=True)
    assert cert.ok and "objective gap" in cert.residuals


@pytest.mark.parametrize("reg,shape", [(_ShortProx(), r"\(5,\)"), (_MatrixProx(), r"\(6, 2\)")])
def test_drr_prox_of_the_wrong_shape_is_named(reg, shape):
    """A bare "operands could not be broadcast together" / "could not broadcast input
    array" named neither the prox nor the shapes. (The regularizer's check meets it first,
    on its vectors of six entries.)"""
    p = _drr(reg)
    needle = rf"^regularizer.prox must return an array of v's shape \(6,\); got shape {shape}"
    with pytest.raises(ValueError, match=needle):
        p.certify(p.solution_from(coef=np.zeros((12, 2))), reference=False)
    with pytest.raises(ValueError, match=needle):
        fast.solve(p)


# ---- the fast layer's own arguments -----------------------------------------------------

def test_fast_tol_takes_any_real_number():
    p = rm.SVM(X, Y, C=1.0)
    assert fast.solve(p, tol=Fraction(1, 10**4)).status in ("optimal", "converged")
    with pytest.raises(ValueError, match="^tol must be"):
        fast.solve(p, tol=True)


def test_reference_error_and_certificate_agree(monkeypatch):
    """A ValueError of the reference (a kernel that overflows on X, say) is raised by
    ``certify()`` in Python; the command line says the same (exit status 2), see
    tests/test_cli_read.py."""
    p = rm.SVM(X, Y, C=1.0)
    sol = fast.solve(p)

    def overflow(self):
        raise ValueError("kernel=Polynomial(degree=9) on X gives non-finite kernel values")

    monkeypatch.setattr(rm.SVM, "reference_solution", overflow)
    with pytest.raises(ValueError, match="non-finite kernel values"):
        p.certify(sol, reference=True)
    assert p.certify(sol, reference=False).ok

    def refuse(self):
        raise SolverError("no reference point certifies")

    monkeypatch.setattr(rm.SVM, "reference_solution", refuse)
    cert = p.certify(sol, reference=True)
    assert cert.ok and any("reference optimum unavailable" in n for n in cert.notes)


@pytest.mark.parametrize("make", [lambda: fast.SVMClassifier(), lambda: fast.ODMClassifier(),
                                  lambda: fast.SVMmClassifier(kernel="linear"),
                                  lambda: fast.DRMClassifier(alpha=1.0, beta=1.0)])
def test_estimators_name_x_whose_squared_norms_overflow(make):
    """gamma='scale' divided by an overflowed variance: "gamma must be a finite number > 0;
    got 0.0" named the estimator's default, not the data."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")                     # and no RuntimeWarning on the way
        with pytest.raises(ValueError,
                           match="^X's entries reach .*e\\+160: squared norms overflow"):
            make().fit(X * 1e160, Y)
