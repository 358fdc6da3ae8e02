"""The contract every fast solver keeps, written once and run over every family.

As CVXPY's ``cvxpy/tests/solver_test_helpers.py`` pairs problem factories with reusable
checks, this module pairs, for each family of :mod:`refmodels.registry` (plus ``"SVM+b"``,
the SVM with an intercept, which another solver serves), *factories* with *checks*.

Factories (one :class:`Case` per family, in :data:`CASES`)
    ``problems(kernels)``  a Hypothesis strategy of problems (the draws of the family's tests);
    ``on_features(X, rng, h)``  the family's problem on given features (dense or CSR), labels
    from ``rng``, main hyperparameter ``h``;
    ``example()``  one small deterministic instance.
Checks (functions taking a case and a problem)
    :func:`check_agrees` / :func:`check_solution`  ``fast.solve(prob)`` is optimal, reports
    the canonical primal at the point it returns, agrees with the reference ``prob.solve()``
    and certifies, and keeps the family's invariants (SPEC's boxes and maps);
    :func:`check_sparse`  CSR input gives the dense optimum (linear kernel);
    :func:`check_cache`  the bounded kernel-row cache gives the Gram path's optimum;
    :func:`check_warm_start`  warm-started from its own solution: the same point, in no more
    iterations;
    :func:`check_bad_input`  a bad argument raises ``ValueError`` naming it;
    :func:`check_refused`  options a family or kernel does not take are refused by name.
Helpers for the reference layer's tests (``tests/test_<family>.py``)
    :func:`check_certifies_from_w`, :func:`check_rejects_perturbed`,
    :func:`libsvm_stopped_early`, :func:`check_rejects_bad_data`.

One relative error, :func:`rel`, serves every test file. ``tests/test_contract.py`` runs
every check over every case that takes it; the family test files keep what is specific to
their family. A new family adds one :class:`Case` here (``test_contract`` fails until it
does).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import note, strategies as st
from sklearn.exceptions import ConvergenceWarning

import fast
import refmodels as rm
from refmodels.certify import DEFAULT_TOL
from refmodels.solution import SolverError
from strategies import (KERNELS, drawn, tag, UNIT, Scale, binary_data, drr_data, log_uniform, mcodm_problem,
                        mkl_data, mklm_problems, random_binary, relaxed_mcodm_problems)

REL = 1e-6          #: relative objective agreement with the reference (CVXPY, Clarabel)
#: iterations of first-order methods (DRR's APG/PPA/GD) off the unit scale: their defaults
#: (5e4-1e5) take too long for a test on 1e18 Grams; stopping early is honest (status +
#: warning)
BAD_SCALE_MAX_ITER = 3000


def rel(a, b):
    """Relative error ``|a - b| / (1 + |b|)``; the largest entry for array objectives (DRR)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.max(np.abs(a - b) / (1.0 + np.abs(b))))


# ---------------------------------------------------------------------------------------
# the trust property: what every solve owes at every scale
# ---------------------------------------------------------------------------------------
def scale_of(prob):
    """The :class:`strategies.Scale` a drawn problem was made at (``UNIT`` if not drawn)."""
    return drawn(prob, "scale", UNIT)


def trusted(prob, run):
    """``run()`` (a solve of ``prob``, either layer) under the trust property: it returns a
    Solution that says ``optimal`` and certifies (``certify(reference=False)``), or it says
    it cannot: :class:`SolverError`, or a status other than ``optimal`` with a
    ``ConvergenceWarning``. The Solution, or ``None`` for an honest refusal; a silent wrong
    answer (``optimal`` and a failing certificate, or a bad status without a warning) fails
    here."""
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            sol = run()
        except SolverError:
            return None
    if sol is None:                 # mkl_reference: every form refused (SolverError)
        return None
    if sol.status != "optimal":
        assert any(issubclass(w.category, ConvergenceWarning) for w in caught), \
            f"status {sol.status!r} without a ConvergenceWarning"
        return None
    cert = prob.certify(sol, reference=False)
    assert cert.ok, f"silent wrong answer: 'optimal' but the certificate fails\n{cert}"
    return sol


def solve_trusted(prob, scale, *runs):
    """Each of ``runs`` under :func:`trusted`: the list of Solutions, ``None`` where a side
    said it cannot (at the unit scale, ``scale.good``, none may). The Solutions returned
    agree: each certifies against the first returned (objective gap included), since two
    certified answers that differ are a silent wrong answer too."""
    sols = [trusted(prob, run) for run in runs]
    if scale.good:
        assert all(s is not None for s in sols), "a solve refused a well-scaled problem"
    got = [s for s in sols if s is not None]
    for s in got[1:]:
        cert = prob.certify(s, reference=got[0])
        assert cert.ok, f"two certified answers disagree\n{cert}"
    return sols


def primal_and_dual(prob, scale, good=None):
    """Both forms of ``prob`` solved under :func:`solve_trusted` (the trust property, at every
    scale). Where the instance is well scaled (``scale.good``, or ``good`` where a family
    narrows it) their canonical objectives also agree to 1e-6 (strong duality) and ``(p, d)``
    is returned for the family's further checks; else ``None``."""
    p, d = solve_trusted(prob, scale, lambda: prob.solve(form="primal"),
                         lambda: prob.solve(form="dual"))
    if not (scale.good if good is None else good):
        return None
    gap = np.abs(np.asarray(p.objective) - d.objective)
    assert np.all(gap <= 1e-6 * (1 + np.abs(p.objective))), (p.objective, d.objective)
    return p, d


def refused(sols):
    """Whether some side of :func:`solve_trusted` said it cannot."""
    return any(s is None for s in sols)


# ---------------------------------------------------------------------------------------
# what a returned Solution of each family looks like (SPEC's boxes and maps)
# ---------------------------------------------------------------------------------------
def _box(v, hi=np.inf, lo=0.0):
    v = np.asarray(v)
    return bool(np.all(v >= lo) and np.all(v <= hi))


def _svm(prob, sol):
    C = prob.C
    assert _box(sol.variables["alpha"], C)
    if prob.has_intercept:
        assert abs(float(prob.y @ sol.variables["alpha"])) <= 1e-10 * (1 + C * prob.m)
    else:
        assert sol.intercept == 0.0
        # the DCD (the linear kernel's default) builds the Gram for a kernel; the SMO (a
        # kernel's default, fast.svm.choose_method) reads rows on demand as LIBSVM does
        paths = ({"linear"} if prob.kernel.is_linear else {"gram"}) \
            if sol.solver == "fast:dcd" else {"gram", "cache"}
        assert sol.info["path"] in paths, (sol.solver, sol.info["path"])


def _odml(prob, sol):
    assert "alpha" in sol.variables
    whiten = prob.kernel.is_linear and (prob.mu1 == 0 or prob.X.shape[1] <= prob.X.shape[0])
    assert sol.info["path"] == ("linear" if whiten else "gram")
    _w_is_Ft_coef(prob, sol)


def _ldm(prob, sol):
    assert _box(sol.variables["beta"], prob.C)
    _w_is_Ft_coef(prob, sol)


def _w_is_Ft_coef(prob, sol):
    if "w" in sol.variables:      # linear path: w = M^{-1} X^T Y v agrees with X^T nu
        w = prob.w_from_coef(sol.coef)
        assert np.linalg.norm(w - sol.variables["w"]) <= 1e-8 * (1 + np.linalg.norm(w))


def _odm(prob, sol):
    z, b = sol.variables["zeta"], sol.variables["beta"]
    assert _box(z) and _box(b)
    np.testing.assert_array_equal(sol.coef, prob.y * (z - b))       # nu = Y (zeta - beta)


def _svmm(prob, sol):
    a, b = sol.variables["alpha"], sol.variables["beta"]
    assert _box(a, prob.C1) and _box(b, prob.C2)
    if prob.C2 == 0:
        assert np.all(b == 0)
    if prob.has_intercept:
        assert abs(float(prob.y @ (a - b))) <= 1e-10 * (1 + prob.m * max(prob.C1, prob.C2))
        assert sol.variables["b"] == sol.intercept
    else:
        assert sol.intercept == 0.0 and "b" not in sol.variables


def _mklm(prob, sol):
    mu = sol.variables["mu"]
    assert mu.shape == (prob.M,) and _box(mu) and abs(mu.sum() - 1.0) <= 1e-12
    # optimal: the solver's own gap met, or a stall at the gap's round-off floor whose
    # point the certificate holds (fast/mklm.py, _finish_not_converged)
    assert sol.info["gap"] <= 1e-9 or sol.info.get("floor_certificate") is True
    a, b = sol.variables["alpha"], sol.variables["beta"]
    assert _box(a, prob.C1 / 2) and _box(b, prob.C2 / 2)
    assert abs(float(prob.y @ (a - b))) <= 1e-10 * (1 + prob.m * max(prob.C1, prob.C2))
    assert sol.variables["b"] == sol.intercept
    np.testing.assert_array_equal(sol.coef, prob.y * (a - b))
    # (f itself is not compared: with nearly parallel base kernels the optimal mu, hence
    # nu and f, need not be unique; the objective and the certificate are what is unique.)


def _relaxed(prob, sol):
    # the shapes of SPEC §5's variables, stated here rather than read off the reference's
    # solution: off the unit scale the reference may refuse (every CVXPY form inexact at a
    # data span of 1e6) while the fast point certifies
    m, k, r = prob.m, prob.k, prob.F.shape[1]
    shapes = {"W": (r, k), "xi": (m,), "eps": (m,), "alpha": (m, k), "beta": (m,)}
    for name, shape in shapes.items():
        assert np.shape(sol.variables[name]) == shape, (name, np.shape(sol.variables[name]))


def _drr(prob, sol):
    assert sol.coef.shape == (prob.m, prob.n_test) and sol.variables["W"] is sol.coef


def mkl_reference(prob):
    """``prob.solve()`` (the QCQP dual, polished); if CLARABEL does not report that conic
    problem optimal, the primal form, then the reduced gradient form. None when CLARABEL
    fails on all three (seen on badly scaled polynomial kernels with large C1)."""
    for form in ("dual", "primal", "simplex"):
        try:
            return prob.solve(form=form)
        except SolverError:
            continue
    return None


# ---------------------------------------------------------------------------------------
# factories
# ---------------------------------------------------------------------------------------
def _binary(make, **hyper):
    """A strategy of ``make(X, y, kernel, **hyperparameters)`` over ``binary_data``."""
    def problems(kernels=KERNELS):
        @st.composite
        def draw(draw_):
            X, y, kernel, scale = draw_(binary_data(kernels=kernels))
            hp = {k: draw_(v) for k, v in hyper.items()}
            note(f"m={len(y)} kernel={kernel!r} {scale} {hp}")
            prob = make(X, y, kernel, **hp)
            tag(prob, scale=scale)
            return prob
        return draw()
    return problems


def _labels(rng, m):
    y = np.where(rng.random(m) < 0.5, 1, -1)
    y[0], y[-1] = 1, -1
    return y


def _classes(rng, m, k=3):
    y = rng.integers(0, k, m)
    y[:k] = np.arange(k)
    return y


def _test_points(X, rng):
    Xt = rng.normal(size=(2, X.shape[1]))
    return sp.csr_matrix(Xt) if sp.issparse(X) else Xt


mu1s = st.one_of(st.just(0.0), log_uniform(1e-3, 1e2))
mu2s = st.one_of(st.just(0.0), log_uniform(1e-3, 1e1))
C2s = st.one_of(st.just(0.0), log_uniform(1e-2, 1e2))
EPSs = st.one_of(st.just(0.0), log_uniform(1e-3, 1e2))
# (q, r, rho): SPEC §8's strong-duality list, q = inf and q = 1.5, and a few more
QRRHO = [(1, 1, "identity"), (2, 1, "identity"), (np.inf, 1, "identity"),
         (1.5, 3, "identity"), (3, 2, "half_square"), (2, 2, 3.0), (np.inf, 2, "half_square"),
         (1.5, 2, "half_square"), (1, 2, "identity"), (2, np.inf, "identity")]
K = rm.kernels


def _drr_problems(kernels=KERNELS):
    @st.composite
    def draw(draw_):
        X, y, Xt, kernel, scale = draw_(drr_data(kernels=kernels))
        q, r, rho = draw_(st.sampled_from(QRRHO))
        alpha = draw_(st.one_of(st.just(0.0), log_uniform(1e-2, 1e1)))
        beta = draw_(log_uniform(1e-2, 1e1))
        note(f"m={len(y)} kernel={kernel!r} {scale} q={q} r={r} rho={rho} alpha={alpha} "
             f"beta={beta}")
        prob = rm.DRR(X, y, Xt, alpha=alpha, beta=beta, q=q, r=r, rho=rho, kernel=kernel)
        tag(prob, scale=scale)
        return prob
    return draw()


def _mklm_problems(kernels=KERNELS):
    @st.composite
    def draw(draw_):
        prob = draw_(mklm_problems())
        note(f"{drawn(prob, 'drawn')} C1={prob.C1!r} C2={prob.C2!r} eps={prob.eps!r}")
        return prob
    return draw()


def _relaxed_problems(kernels=KERNELS):
    return relaxed_mcodm_problems().map(lambda rp: (note(f"{drawn(rp, 'scale')}"), rp)[1])


def _mcodm_example():
    prob, rng = mcodm_problem(6, m=20, d=3, k=3, kernel="poly")
    return prob


def _drr_example(cls=rm.DRR, **kw):
    rng = np.random.default_rng(1)
    X, y = rng.normal(size=(25, 3)), rng.integers(0, 3, 25)
    y[:3] = [0, 1, 2]
    return cls(X, y, rng.normal(size=(7, 3)), alpha=0.2, beta=0.5, kernel="rbf", **kw)


@dataclass(frozen=True)
class Case:
    """One family (or variant) under the contract; ``None`` for a check it does not take."""

    name: str
    example: Callable                               #: () -> a small fixed problem
    on_features: Callable                           #: (X, rng, h) -> problem on features X
    problems: Callable | None = None                #: (kernels) -> strategy; None: no agree
    reference: Callable = lambda prob: prob.solve()  #: the reference optimum (or None)
    solver: str | None = None                       #: expected ``sol.solver``
    options: dict = field(default_factory=dict)     #: options of every solve here
    invariants: Callable | None = None              #: (prob, sol) -> asserts SPEC's maps
    sparse_methods: tuple = ()                      #: (method, options, tol) also on CSR
    cache: dict | None = None                       #: options forcing the bounded cache
    warm_iters: int = 2                             #: iterations a warm restart may take
    warm_options: dict = field(default_factory=dict)  #: options of the warm-start check
    primal_tol: float = 1e-9                        #: reported vs recomputed objective
    sparse_path: str | None = None                  #: ``info["path"]`` on CSR input
    #: options added off the unit scale (a bounded ``max_iter`` keeps first-order methods
    #: from running out their default budget on 1e18 Grams; the trust property holds at any)
    bad_scale_options: dict = field(default_factory=dict)
    #: the canonical primal objective at the point a solution carries
    value_at: Callable = lambda prob, sol: prob.primal_value(*prob.primal_point(sol))


_DCD_CACHE = dict(path="cache", cache_size=1e-4)
_SMO_CACHE = dict(cache_size=1e-5)

CASES = {c.name: c for c in (
    Case("SVM", solver=None, invariants=_svm, cache=_DCD_CACHE, sparse_path="linear",
         problems=_binary(lambda X, y, k, C: rm.SVM(X, y, C=C, kernel=k),
                          C=log_uniform(1e-2, 1e2)),
         on_features=lambda X, rng, h: rm.SVM(X, _labels(rng, X.shape[0]), C=h),
         example=lambda: _rb(rm.SVM, 4, 40, 3, "rbf", C=2.0)),
    Case("SVM+b", solver="fast:smo", invariants=_svm, cache=_SMO_CACHE,
         problems=_binary(lambda X, y, k, C: rm.SVM(X, y, C=C, kernel=k, fit_intercept=True),
                          C=log_uniform(1e-2, 1e2)),
         on_features=lambda X, rng, h: rm.SVM(X, _labels(rng, X.shape[0]), C=h,
                                              fit_intercept=True),
         example=lambda: _rb(rm.SVM, 10, 50, 3, "rbf", C=2.0, fit_intercept=True)),
    Case("ODML", solver=None, invariants=_odml,        # kernel: fast:smo, linear: fast:dcd
         problems=_binary(lambda X, y, k, lam, mu1, mu2: rm.ODML(X, y, lam=lam, mu1=mu1,
                                                                 mu2=mu2, kernel=k),
                          lam=log_uniform(1e-2, 1e2), mu1=mu1s, mu2=mu2s),
         on_features=lambda X, rng, h: rm.ODML(X, _labels(rng, X.shape[0]), lam=3.0,
                                               mu1=h if rng.random() < 0.8 else 0.0, mu2=0.2),
         example=lambda: _rb(rm.ODML, 1, 30, 3, "rbf", lam=3.0, mu1=0.5, mu2=0.2)),
    Case("LDM", solver=None, invariants=_ldm,          # kernel: fast:smo, linear: fast:dcd
         problems=_binary(lambda X, y, k, C, lam1, lam2: rm.LDM(X, y, C=C, lam1=lam1,
                                                                lam2=lam2, kernel=k),
                          C=log_uniform(1e-3, 1e1), lam1=mu1s, lam2=mu2s),
         on_features=lambda X, rng, h: rm.LDM(X, _labels(rng, X.shape[0]), C=h / 100,
                                              lam1=0.5, lam2=0.2),
         example=lambda: _rb(rm.LDM, 13, 40, 6, "linear", C=0.01, lam1=0.5, lam2=0.2)),
    Case("ODM", solver="fast:dcd", options=dict(method="dcd"), invariants=_odm, cache=_DCD_CACHE,
         problems=_binary(lambda X, y, k, lam, mu, theta: rm.ODM(X, y, lam=lam, mu=mu,
                                                                 theta=theta, kernel=k),
                          lam=log_uniform(1e-2, 1e2), mu=log_uniform(1e-2, 1.0),
                          theta=st.sampled_from([0.0, 0.1, 0.5, 0.9])),
         on_features=lambda X, rng, h: rm.ODM(X, _labels(rng, X.shape[0]), lam=h, mu=0.3,
                                              theta=0.2),
         sparse_methods=(("svrg", dict(random_state=0, tol=1e-9, max_iter=10**5), 1e-8),),
         example=lambda: _rb(rm.ODM, 2, 30, 4, "linear", lam=2.0, mu=0.5, theta=0.3)),
    # kernel: fast:smo; linear: the interior point of fast._svmm_linear
    Case("SVMm", solver=None, invariants=_svmm, cache=_SMO_CACHE,
         problems=_binary(lambda X, y, k, C1, C2, eps, b: rm.SVMm(
             X, y, C1=C1, C2=C2, eps=eps, kernel=k, fit_intercept=b),
             C1=log_uniform(1e-2, 1e2), C2=C2s, eps=EPSs, b=st.booleans()),
         on_features=lambda X, rng, h: rm.SVMm(X, _labels(rng, X.shape[0]), C1=h, C2=0.5,
                                               eps=0.2),
         example=lambda: _rb(rm.SVMm, 14, 50, 3, "poly", C1=2.0, C2=1.0, eps=0.5)),
    Case("EpsSVM", solver=None, invariants=_svmm, cache=_SMO_CACHE,
         problems=_binary(lambda X, y, k, C1, C2: rm.EpsSVM(X, y, C1=C1, C2=C2, kernel=k),
                          C1=log_uniform(1e-2, 1e2), C2=C2s),
         on_features=lambda X, rng, h: rm.EpsSVM(X, _labels(rng, X.shape[0]), C1=h, C2=0.5),
         example=lambda: _rb(rm.EpsSVM, 14, 50, 3, "poly", C1=2.0, C2=1.0)),
    Case("MKLm", solver="fast:mkl-rg", invariants=_mklm, reference=mkl_reference,
         primal_tol=1e-8,
         problems=_mklm_problems, warm_iters=0,
         on_features=lambda X, rng, h: rm.MKLm(X, _labels(rng, X.shape[0]),
                                               [K.Linear(), K.RBF(0.5)], C1=h, C2=0.5,
                                               eps=0.2),
         example=lambda: rm.MKLm(*mkl_data(8, 40, 3), [K.RBF(0.05), K.RBF(1.0),
                                                       K.Polynomial(2, 0.5, 1.0)],
                                 C1=5.0, C2=1.0, eps=0.2)),
    Case("EpsMKL", solver="fast:mkl-rg", warm_iters=0,
         on_features=lambda X, rng, h: rm.EpsMKL(X, _labels(rng, X.shape[0]),
                                                 [K.Linear(), K.RBF(0.5)], C1=h, C2=0.5),
         example=lambda: rm.EpsMKL(*mkl_data(8, 40, 3), [K.RBF(0.05), K.RBF(1.0)],
                                   C1=5.0, C2=1.0)),
    Case("McODM", solver="fast:bcd", options=dict(random_state=0),
         on_features=lambda X, rng, h: rm.McODM(X, _classes(rng, X.shape[0]), lam=h / 10,
                                                mu=0.5, theta=0.3),
         example=_mcodm_example),
    Case("RelaxedMcODM", solver="fast:bcd", invariants=_relaxed,
         options=dict(random_state=0, max_iter=300000, with_W=True),
         problems=_relaxed_problems, reference=lambda prob: prob.reference_solution(),
         on_features=lambda X, rng, h: rm.McODM(X, _classes(rng, X.shape[0]), lam=h / 10,
                                                mu=0.5, theta=0.3).relaxed(
                                                    rng.normal(size=X.shape[0])),
         example=lambda: _mcodm_example().relaxed(np.random.default_rng(6).normal(size=20))),
    Case("DRR", solver="fast:apg", invariants=_drr, problems=_drr_problems,
         bad_scale_options=dict(max_iter=BAD_SCALE_MAX_ITER),
         value_at=lambda prob, sol: prob.primal_value(sol.coef),
         on_features=lambda X, rng, h: rm.DRR(X, _classes(rng, X.shape[0]),
                                              _test_points(X, rng), alpha=0.2, beta=h,
                                              q=2, r=1, rho="identity"),
         example=lambda: _drr_example(q=2, r=1, rho="identity")),
    Case("DRM", solver="fast:closed_form", warm_options=dict(method="apg"),
         value_at=lambda prob, sol: prob.primal_value(sol.coef),
         on_features=lambda X, rng, h: rm.DRM(X, _classes(rng, X.shape[0]),
                                              _test_points(X, rng), alpha=0.2, beta=h),
         example=lambda: _drr_example(rm.DRM)),
)}


def _rb(cls, seed, m, d, kernel, **hyper):
    X, y, k, _ = random_binary(seed, m=m, d=d, kernel=kernel)
    return cls(X, y, kernel=k, **hyper)


def names(check):
    """The cases that take ``check`` (``"agrees"``, ``"sparse"``, ``"cache"``, ``"warm"``,
    ``"bad_input"``), in registry order."""
    need = {"agrees": lambda c: c.problems is not None, "cache": lambda c: c.cache is not None}
    return [n for n, c in CASES.items() if need.get(check, lambda c: True)(c)]


# ---------------------------------------------------------------------------------------
# checks
# ---------------------------------------------------------------------------------------
def check_agrees(case, prob):
    """``fast.solve(prob)`` passes :func:`check_solution` against the case's reference at
    the unit scale; at every other scale (:func:`scale_of`) the trust property: both layers
    certify and agree, or the one that cannot says so (:func:`solve_trusted`); what the fast
    layer returns as optimal keeps its objective and the family's invariants."""
    scale = scale_of(prob)
    if scale.good:
        sol = fast.solve(prob, **case.options)
        check_solution(case, prob, sol, case.reference(prob))
        return sol
    options = {**case.options, **case.bad_scale_options}
    sol, _ = solve_trusted(prob, scale, lambda: fast.solve(prob, **options),
                           lambda: case.reference(prob))
    if sol is not None:
        assert sol.form == "fast" and (case.solver is None or sol.solver == case.solver)
        # the reported objective is the one at the returned point (a solver can return a
        # coef whose objective is not the reported one), as the certificate evaluates it:
        # off the unit scale ``case.value_at`` (through w = F^T coef) loses digits to
        # cancellation (1.8e-4 against 3e-15 with polynomial Gram entries of 1e24)
        P = prob.certify(sol, reference=False).values["objective"]
        assert rel(sol.objective, P) <= DEFAULT_TOL, (sol.objective, P)
        if case.invariants is not None:
            case.invariants(prob, sol)
    return sol
    if case.invariants is not None:
        case.invariants(prob, sol)


def check_solution(case, prob, sol, ref, tol=REL):
    """Optimal, the canonical primal at the returned point, the objective of ``ref``
    (relative ``tol``; with ``ref=None`` the certificate alone, whose duality gap bounds the
    error), a certificate that holds, and the family's invariants."""
    assert sol.status == "optimal", sol.info
    assert sol.form == "fast" and (case.solver is None or sol.solver == case.solver)
    # the objective is the canonical primal at the returned point
    P = case.value_at(prob, sol)
    assert rel(sol.objective, P) <= case.primal_tol, (sol.objective, P)
    if ref is None:
        cert = prob.certify(sol, reference=False)
    else:
        assert rel(sol.objective, ref.objective) <= tol, (sol.objective, ref.objective)
        cert = prob.certify(sol, reference=ref)
    assert cert.ok, str(cert)
    if case.invariants is not None:
        case.invariants(prob, sol)


def check_sparse(case, seed, h, density, factor=1.0):
    """The family's problem on CSR features equals the one on the same dense features (same
    ``random_state``: the same permutations), and certifies; so do its other CSR methods.
    Features times ``factor`` (an offset would make them dense); off ``factor = 1`` the
    trust property (:func:`solve_trusted`) between the two."""
    rng = np.random.default_rng(seed)
    m, d = int(rng.integers(5, 40)), int(rng.integers(1, 30))
    Xs = sp.random(m, d, density=density, format="csr", random_state=rng) * factor
    dense_prob = case.on_features(Xs.toarray(), np.random.default_rng(seed), h)
    prob = case.on_features(Xs, np.random.default_rng(seed), h)
    if factor != 1.0:
        options = {**case.options, **case.bad_scale_options, "random_state": 1}
        solve_trusted(prob, Scale(factor=factor), lambda: fast.solve(dense_prob, **options),
                      lambda: fast.solve(prob, **options))
        return
    dense = fast.solve(dense_prob, **{**case.options, "random_state": 1})
    sparse = fast.solve(prob, **{**case.options, "random_state": 1})
    assert sparse.status == dense.status == "optimal"
    assert rel(sparse.objective, dense.objective) <= 1e-9
    if case.sparse_path is not None:
        assert sp.issparse(prob.X) and sparse.info["path"] == case.sparse_path
    # the certificate's residuals and duality gap; its objective gap against the dense point
    # (the reference optimum is check_agrees' business: no CVXPY solve here)
    cert = prob.certify(sparse, reference=dense)
    assert cert.ok, str(cert)
    for method, options, tol in case.sparse_methods:
        other = fast.solve(prob, method=method, **options)
        assert rel(other.objective, dense.objective) <= tol, method


def check_cache(case, prob):
    """A tiny ``cache_size`` forces kernel rows on demand (2 slots): the Gram path's optimum
    (at a bad scale: both paths under the trust property, :func:`solve_trusted`)."""
    scale = scale_of(prob)
    if not scale.good:
        prob.gram
        bound = {"max_iter": BAD_SCALE_MAX_ITER}        # 2 cache slots: rows recomputed
        solve_trusted(prob, scale, lambda: fast.solve(prob, **case.cache, **bound),
                      lambda: fast.solve(prob, **({"path": "gram"} if "path" in case.cache
                                                  else {}), **bound))
        return
    sol = fast.solve(prob, **case.options, **case.cache)
    if not prob.kernel.is_precomputed:
        assert sol.info["kernel_path"] == "cache"
        assert 2 <= sol.info["cache_slots"] <= max(2, prob.m)
    prob.gram               # built, which must not change the default's rows (its own)
    gram = fast.solve(prob, **case.options, **({"path": "gram"} if "path" in case.cache else {}))
    if "path" in case.cache:
        assert gram.info["kernel_path"] == "gram"
    else:                   # every row fits the default cache: the Gram, filled lazily
        assert gram.info["kernel_path"] == "cache" and gram.info["cache_slots"] >= prob.m
    # two runs stopped at the solver's tolerance: primal values agree to the certificate's
    assert rel(sol.objective, gram.objective) <= 1e-7
    cert = prob.certify(sol, reference=gram)        # (no CVXPY solve: see check_sparse)
    assert cert.ok, str(cert)


def check_warm_start(case, prob):
    """From its own solution: the same point (objective and coefficients), in no more
    iterations than the cold start took (and at most ``case.warm_iters``)."""
    options = {**case.options, **case.warm_options}
    cold = fast.solve(prob, **options)
    again = fast.solve(prob, warm_start=cold, **options)
    assert again.status == "optimal"
    assert again.n_iter <= min(cold.n_iter, case.warm_iters), (cold.n_iter, again.n_iter)
    assert rel(again.objective, cold.objective) <= 1e-10
    scale = 1.0 + np.max(np.abs(cold.coef))
    assert np.max(np.abs(np.asarray(again.coef) - cold.coef)) <= 1e-6 * scale


#: ``(argument, bad value)``: each must raise ``ValueError`` naming the argument
BAD_INPUT = [("tol", 0), ("tol", -1e-3), ("tol", np.nan), ("tol", np.inf), ("tol", "1e-3"),
             ("tol", True), ("max_iter", 0), ("max_iter", -1), ("max_iter", 2.5),
             ("max_iter", True), ("max_iter", "10"), ("method", "no-such-method"),
             ("random_state", "seed"), ("foo", 1), ("warm_start", "garbage"),
             ("warm_start", [0.3, 0.7])]

#: ``(family, argument, value)`` known to fail :func:`check_bad_input` (library bugs, see the
#: reason); the tests mark them as strict xfails, so that a fix shows
KNOWN_BAD_INPUT_BUGS = {}    #: (family, argument, value) -> reason, for a strict xfail


def check_refused(prob, *refusals):
    """Each ``(options, words)``: ``fast.solve(prob, **options)`` raises ``ValueError``
    whose message matches ``words`` (a method or path the family or kernel does not take)."""
    for options, words in refusals:
        with pytest.raises(ValueError, match=words):
            fast.solve(prob, **options)


def check_bad_input(case, prob, argument, value):
    """``fast.solve(prob, argument=value)`` raises ``ValueError`` naming ``argument`` (an
    unknown option: the words "unknown option")."""
    match = "unknown option" if argument == "foo" else argument
    with pytest.raises(ValueError, match=match):
        fast.solve(prob, **{**case.options, argument: value})


def check_case(case, seed=0):
    """Every check once: agreement and certification on ``case.example()``, one CSR draw,
    the cache path (kernel examples), the warm start and the bad input. What a new family's
    own quick test can run (e.g. the toy family of CONTRIBUTING.md) before its Case joins
    :data:`CASES`, whose Hypothesis draws ``tests/test_contract.py`` runs."""
    if case.problems is not None:                   # the cases that take check_agrees
        prob = case.example()
        check_solution(case, prob, fast.solve(prob, **case.options), case.reference(prob))
    check_sparse(case, seed, 1.0, 0.3)
    if case.cache is not None and not case.example().kernel.is_linear:
        check_cache(case, case.example())
    check_warm_start(case, case.example())
    for argument, value in BAD_INPUT:
        if not (isinstance(value, str) and (case.name, argument, value) in KNOWN_BAD_INPUT_BUGS):
            check_bad_input(case, case.example(), argument, value)


# ---------------------------------------------------------------------------------------
# the reference layer's certificates (tests/test_<family>.py)
# ---------------------------------------------------------------------------------------
def check_certifies_from_w(prob, ref):
    """A user's ``w`` alone (linear kernel, no dual variables) certifies: the certificate
    derives the dual point from the margins and says so."""
    cert = prob.certify(prob.solution_from(w=ref.w, intercept=ref.intercept))
    assert cert.ok, str(cert)
    assert any("derived" in n for n in cert.notes)
    return cert


def check_rejects_perturbed(prob, ref, factor=1.01):
    """The optimum's coefficients times ``factor`` fail on the objective gap."""
    cert = prob.certify(prob.solution_from(coef=ref.coef * factor, intercept=ref.intercept))
    assert not cert.ok and "objective gap" in cert.failing


def libsvm_stopped_early(prob, C, max_iter=3):
    """The point LIBSVM (scikit-learn's SVC, intercept, the problem's Gram) returns after
    ``max_iter`` iterations: another solver stopped early, for certificates to reject."""
    import warnings

    from sklearn.svm import SVC

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        svc = SVC(C=C, kernel="precomputed", max_iter=max_iter).fit(prob.gram, prob.y)
    coef = np.zeros(prob.m)
    coef[svc.support_] = svc.dual_coef_.ravel()
    return prob.solution_from(coef=coef, intercept=svc.intercept_[0])


def check_rejects_bad_data(cls, X, y, **hyper):
    """Non-finite features, a single class, three classes: ``ValueError`` naming the rule."""
    m = len(y)
    for Xb, yb, words in ((np.where(X > 1, np.nan, X), y, "finite"),
                          (X, np.ones(m), "one class"), (X, np.arange(m) % 3, "exactly two")):
        with pytest.raises(ValueError, match=words):
            cls(Xb, yb, **hyper)
