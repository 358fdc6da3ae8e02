"""The one switch of ``fast.solve`` (fast/_methods.py): every family's fast module declares a
method table, its choice rule and its fallbacks; the check of ``method`` and the fallbacks
run there, never inside a family module."""
from __future__ import annotations

import ast
import inspect
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from contract import CASES
from strategies import random_binary

import fast
import fast._methods as methods
import refmodels as rm
from refmodels import registry
from refmodels.solution import Solution, SolverError


def _family_modules():
    return sorted({f.fast_module() for f in registry.FAMILIES.values()},
                  key=lambda module: module.__name__)


@pytest.mark.parametrize("name", sorted(CASES))
def test_unknown_method_names_the_family_methods(name):
    prob = CASES[name].example()
    solvers = registry.of(prob).fast_module().SOLVERS
    with pytest.raises(ValueError, match="method must be one of") as err:
        fast.solve(prob, method="nonsense")
    message = str(err.value)
    assert type(prob).__name__ in message and "'nonsense'" in message
    for method in solvers.names:
        assert repr(method) in message
    with pytest.raises(ValueError, match="method must be one of"):
        fast.solve(prob, method=3)
    if not solvers.auto:
        with pytest.raises(ValueError, match="method must be one of"):
            fast.solve(prob, method="auto")


@pytest.mark.parametrize("module", _family_modules(), ids=lambda module: module.__name__)
def test_family_modules_declare_a_table_and_never_call_solve(module):
    """A family module is a table (``SOLVERS``), a rule and its mappings: it has no ``solve``
    of its own and calls no function named ``solve`` (its own, ``fast.solve``, another
    family's): the fallbacks are the table's."""
    solvers = module.SOLVERS
    assert isinstance(solvers, methods.Solvers)
    assert solvers.methods and all(callable(run) for run in solvers.methods.values())
    assert set(solvers.fallback) <= set(solvers.methods)
    assert all(step.then in solvers.methods for step in solvers.fallback.values())
    assert not hasattr(module, "solve")
    tree = ast.parse(inspect.getsource(module))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            assert "solve" not in [alias.name for alias in node.names], ast.unparse(node)
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        assert not (isinstance(f, ast.Name) and f.id == "solve"), ast.unparse(node)
        if isinstance(f, ast.Attribute) and f.attr == "solve" and isinstance(f.value, ast.Name):
            base = module.__dict__.get(f.value.id)      # np.linalg.solve is not ours
            assert not (inspect.ismodule(base) and base.__name__.split(".")[0] == "fast"), \
                ast.unparse(node)


def test_the_rule_picks_a_method_of_the_table():
    X, y, k, _ = random_binary(3, m=30, d=3, kernel="rbf")
    for prob in (rm.SVM(X, y), rm.SVM(X, y, kernel=k), rm.SVM(X, y, fit_intercept=True),
                 rm.ODM(X, y), rm.ODM(X, y, kernel=k), rm.LDM(X, y, kernel=k),
                 rm.SVMm(X, y), rm.EpsSVM(X, y, kernel=k)):
        solvers = registry.of(prob).fast_module().SOLVERS
        name, chosen = methods.resolve(solvers, prob, None, {})
        assert chosen and name in solvers.methods
        assert methods.resolve(solvers, prob, name, {}) == (name, False)


def _short_of(sol):
    """``sol`` as a method that stopped short would return it."""
    return Solution(objective=sol.objective, coef=sol.coef, intercept=sol.intercept,
                    variables=dict(sol.variables), status="max_iter", solver=sol.solver,
                    form="fast", time=sol.time, n_iter=sol.n_iter,
                    info={**sol.info, "stub": True})


def test_odm_tron_short_is_finished_by_the_declared_dcd(monkeypatch):
    X, y, _, _ = random_binary(5, m=60, d=4)
    prob = rm.ODM(X, y, lam=4.0, mu=0.8, theta=0.2)
    tron = fast.odm.METHODS["tron"]
    assert fast.odm.FALLBACK["tron"].then == "dcd"
    calls = []

    def short_tron(prob, *args, **options):
        calls.append(args)
        return _short_of(tron(prob, *args, **options))

    monkeypatch.setitem(fast.odm.METHODS, "tron", short_tron)
    sol = fast.solve(prob, random_state=0)              # "auto": TRON, then the fallback
    assert len(calls) == 1
    assert sol.solver == "fast:dcd" and sol.status == "optimal"
    assert sol.info["fallback"] == "dcd" and sol.info["tron"]["stub"] is True
    assert prob.certify(sol, reference=False).ok
    # the DCD started from TRON's multipliers: the same point as a DCD warm-started there
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = tron(prob, None, None, 0, None)
    direct = fast.solve(prob, method="dcd", random_state=0, warm_start=start)
    np.testing.assert_array_equal(sol.coef, direct.coef)
    # a method named by the caller runs alone (no fallback): its short point stays; at the
    # defaults (no tol, no max_iter) a point at the cap that meets the certificate is
    # optimal (the stub's point is TRON's own), with the caller's cap it stays max_iter
    alone = fast.solve(prob, method="tron")
    assert alone.solver == "fast:tron" and "fallback" not in alone.info
    assert alone.info["stub"] is True and alone.status == "optimal"
    assert "default iteration cap" in alone.info["note"]
    np.testing.assert_allclose(alone.coef, start.coef, rtol=1e-12)      # TRON, unseeded
    capped = fast.solve(prob, method="tron", max_iter=1000)
    assert capped.solver == "fast:tron" and capped.status == "max_iter"


def test_odm_auto_on_wide_data_is_the_dcd_finished_by_tron(monkeypatch):
    """More features than points: ``"auto"`` takes the DCD (TRON's steps zigzag there: on
    300 x 2,000 at lam = 1e5 m it ran to its 1,000-step cap, the DCD certified in 43
    epochs), and an ``"auto"`` DCD that stops short is finished by TRON from its point; a
    kernel's DCD has no such fallback."""
    r = np.random.default_rng(8)
    X = r.normal(size=(60, 150)) / np.sqrt(150)
    y = np.where(X @ r.normal(size=150) > 0, 1.0, -1.0)
    prob = rm.ODM(X, y, lam=1e3 * 60, mu=0.5, theta=0.3)
    assert fast.odm.choose_method(prob) == "dcd"
    assert fast.odm.choose_method(rm.ODM(X.T[:, :40], np.resize(y, 150), lam=4.0)) == "tron"
    sol = fast.solve(prob, random_state=0)
    assert sol.solver == "fast:dcd" and sol.status == "optimal" and "fallback" not in sol.info
    dcd = fast.odm.METHODS["dcd"]
    monkeypatch.setitem(fast.odm.METHODS, "dcd", lambda p, *a, **o: _short_of(dcd(p, *a, **o)))
    fin = fast.solve(prob, random_state=0)
    assert fin.solver == "fast:tron" and fin.status == "optimal"
    assert fin.info["fallback"] == "tron" and fin.info["dcd"]["stub"] is True
    assert prob.certify(fin, reference=False).ok
    Xk, yk, k, _ = random_binary(3, m=40, d=3, kernel="rbf")
    kern = rm.ODM(Xk, yk, lam=1.0, mu=0.5, theta=0.3, kernel=k)
    assert fast.odm.choose_method(kern) == "dcd"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        short = fast.solve(kern, random_state=0)
    assert short.solver == "fast:dcd" and "fallback" not in short.info


def test_odm_tron_error_is_rescued_by_the_dcd_from_zero(monkeypatch):
    X, y, _, _ = random_binary(6, m=50, d=3)
    prob = rm.ODM(X, y, lam=2.0, mu=0.5, theta=0.3)

    def failing_tron(prob, *args, **options):
        raise SolverError("TRON overflowed (stub)")

    monkeypatch.setitem(fast.odm.METHODS, "tron", failing_tron)
    sol = fast.solve(prob, random_state=0)
    assert sol.solver == "fast:dcd" and sol.status == "optimal"
    assert sol.info["tron"] == {"error": "TRON overflowed (stub)"}
    np.testing.assert_array_equal(sol.coef,
                                  fast.solve(prob, method="dcd", random_state=0).coef)
    with pytest.raises(SolverError, match="stub"):
        fast.solve(prob, method="tron")


def test_svmm_dcd_short_is_finished_by_the_declared_smo(monkeypatch):
    rng = np.random.default_rng(3)
    m, d = 120, fast.svmm.IPM_MAX_D + 20
    X = sp.random(m, d, density=0.05, random_state=4, format="csr")
    y = np.where(X @ rng.normal(size=d) + 0.1 * rng.normal(size=m) > 0, 1.0, -1.0)
    prob = rm.SVMm(X, y, C1=4.0, C2=0.5, eps=0.3, fit_intercept=False)
    assert fast.svmm.choose_method(prob) == "dcd"
    assert fast.svmm.FALLBACK["dcd"].then == "smo"
    dcd = fast.svmm.METHODS["dcd"]
    seen = {}

    def short_dcd(prob, tol, max_iter, *args, **options):
        seen["max_iter"] = max_iter
        return _short_of(dcd(prob, tol, max_iter, *args, **options))

    monkeypatch.setitem(fast.svmm.METHODS, "dcd", short_dcd)
    sol = fast.solve(prob, max_iter=10**6)
    assert seen["max_iter"] is None          # the caller's max_iter is the SMO's
    assert sol.solver == "fast:smo" and sol.status == "optimal"
    assert set(sol.info["dcd_fallback"]) == {"n_iter", "time"}
    assert prob.certify(sol, reference=False).ok
    alone = fast.solve(prob, method="dcd")
    assert alone.info["stub"] is True and "dcd_fallback" not in alone.info


def test_fallback_of_a_toy_table():
    """The switch itself, on a table of two stub methods."""
    def stub(status, solver):
        def run(prob, tol, max_iter, random_state, warm_start, **options):
            return Solution(objective=0.0, coef=None, status=status, solver=solver,
                            form="fast", info={"warm": warm_start, "options": options})
        return run

    def handoff(prob, first, call):
        return None if first.status == "optimal" else call._replace(warm_start=first)

    def merge(prob, first, last, call):
        last.info["first"] = first.solver
        return last

    table = {"a": stub("max_iter", "a"), "b": stub("optimal", "b")}
    solvers = methods.Solvers(table, lambda prob, options: "a",
                              {"a": methods.Fallback("b", handoff, merge,
                                                     when=methods.when_chosen)})
    prob = rm.SVM(*random_binary(1, m=10, d=2)[:2])
    sol = methods.run(solvers, prob, None, None, None, None, None, {"k": 1})
    assert sol.solver == "b" and sol.info["first"] == "a"
    assert sol.info["warm"].solver == "a" and sol.info["options"] == {"k": 1}
    named = methods.run(solvers, prob, "a", None, None, None, None, {})
    assert named.solver == "a"                      # named by the caller: no fallback
    with pytest.raises(ValueError, match=r"\['a', 'b'\]"):
        methods.run(solvers, prob, "c", None, None, None, None, {})
