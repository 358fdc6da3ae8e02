"""CONTRIBUTING.md's walk-through, executed: a toy family (the L2-loss SVM) written in two
files outside the package and one registry entry, then served by ``fast.solve`` (with its
self-check), certified by the one ``certify``, and taken by every part of the package that
reads the registry (``refmodels certify --family``, ``check_solver``, ``refmodels verify``,
the property tests' generator) without editing any other file."""
from __future__ import annotations

import json

import numpy as np
import pytest

import fast
import refmodels as rm
from refmodels import registry
from strategies import random_binary
from toy_family.l2svm import L2SVM


def _toy():
    """The toy's registry entry, as CONTRIBUTING.md's step 3 writes it (from outside the
    package: ``ref_module``, ``solver_module``)."""
    return registry.Family("L2SVM", "l2svm", "toy", None, "L2-loss SVM (the guide)",
                           ref_module="toy_family.l2svm", solver_module="toy_family.fast_l2svm",
                           verify=(registry.VerifyCase({"C": 1.0}),),
                           suite=lambda d: {"C": d.hp(-2, 2)},
                           draws={"L2SVM": lambda d: d.make(C=d.hp(-2, 2))})


@pytest.fixture(scope="module", autouse=True)
def toy_registered():
    registry.register(_toy())
    yield
    registry.FAMILIES.pop("L2SVM")


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_toy_family_fast_matches_reference_and_certifies(kernel):
    X, y, k, _ = random_binary(11, m=40, d=4, kernel=kernel)
    prob = L2SVM(X, y, C=2.0, kernel=k)
    ref = prob.solve()
    assert prob.certify(ref, reference=False).ok
    assert (abs(prob.solve(form="primal").objective - ref.objective)
            <= 1e-6 * (1 + abs(ref.objective)))
    sol = fast.solve(prob)
    # the self-check: kernel-product estimates within their margin (1e-7), or, where they
    # fail only that margin, the full certificate's residuals at its tolerance (1e-6)
    check = sol.info["self_check"]
    assert sol.status == "optimal" and check["worst"] <= check["tol"]
    assert check["tol"] == 1e-7 or all(k.startswith("certificate (") for k in
                                       set(check["residuals"]) - {"reported objective"})
    assert abs(sol.objective - ref.objective) <= 1e-6 * (1 + abs(ref.objective))
    assert prob.certify(sol, reference=ref).ok
    assert registry.of(prob).name == "L2SVM"


def test_toy_family_certificate_rejects_a_perturbed_point():
    X, y, k, _ = random_binary(12, m=30, d=3)
    prob = L2SVM(X, y, C=1.0, kernel=k)
    sol = fast.solve(prob)
    assert not prob.certify(prob.solution_from(coef=1.05 * sol.coef)).ok


def test_unregistered_problem_is_refused():
    class Stray(L2SVM):
        pass

    X, y, k, _ = random_binary(13, m=20, d=3)
    registry.FAMILIES.pop("L2SVM")
    try:
        with pytest.raises(ValueError, match="no fast solver"):
            fast.solve(Stray(X, y))
    finally:
        registry.register(_toy())
    assert rm.registry.get("l2svm").name == "L2SVM"


def _run(argv, capsys):
    from test_cli import run_main            # the CLI's own test driver

    return run_main(argv, capsys)


def test_toy_family_served_by_certify_on_the_command_line(tmp_path, capsys):
    X, y, _, _ = random_binary(14, m=40, d=3)
    data = tmp_path / "data.csv"
    data.write_text("".join(",".join(f"{v:.17g}" for v in xi) + f",{int(yi)}\n"
                            for xi, yi in zip(X, y)))
    prob = L2SVM(X, y, C=2.0)
    sol = fast.solve(prob)
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_text(json.dumps({"w": sol.w.tolist()}))
    bad.write_text(json.dumps({"w": (1.05 * sol.w).tolist()}))
    argv = ["certify", "--data", data, "--family", "l2svm", "--param", "C=2"]
    code, out, err = _run(argv + ["--solution", good, "--json"], capsys)
    assert code == 0, err + out
    assert json.loads(out)["ok"]
    code, out, err = _run(argv + ["--solution", bad], capsys)
    assert code == 1 and "FAILS" in out
    code, out, err = _run(argv + ["--param", "mu=1", "--solution", good], capsys)
    assert code == 2 and "L2SVM has no parameter 'mu'" in err


def test_toy_family_served_by_check_solver():
    from refmodels.testing import check_solver, families, make_kernel

    assert "L2SVM" in families()

    def solve(X, y, params):
        return fast.solve(L2SVM(X, y, C=params["C"], kernel=make_kernel(params)))

    def wrong(X, y, params):                 # the C of another problem: must be caught
        return fast.solve(L2SVM(X, y, C=3.0 * params["C"], kernel=make_kernel(params)))

    assert check_solver(solve, "L2SVM", n=6, kernels=("linear", "rbf"), diagnose=False).ok
    assert not check_solver(wrong, "L2SVM", n=6, diagnose=False, raise_on_failure=False).ok


def test_toy_family_drawn_by_the_property_tests_generator():
    from refmodels._generate import make_problem

    prob, desc = make_problem("L2SVM", 3)
    assert isinstance(prob, L2SVM) and desc["family"] == "L2SVM"
    assert prob.certify(fast.solve(prob), reference=False).ok


def test_toy_family_has_rows_in_verify(capsys):
    from refmodels.cli import verify

    rows = [c for c in verify._cases() if c["family"] == "L2SVM"]
    assert [(r["kernel"], r["data"]) for r in rows] == [("linear", "heart[120]"),
                                                        ("rbf", "heart[120]")]
    assert "L2SVM" in verify._verify_families()
    code, out, err = _run(["verify", "--family", "l2svm", "--jobs", "1", "--json"], capsys)
    assert code == 0, err + out
    got = json.loads(out)
    assert [r["family"] for r in got] == ["L2SVM", "L2SVM"]
    assert all(r["verdict"] == "OK" and r["ok"] for r in got)
    assert all(r.get("fast_ok") for r in got) or not verify._fast_available()
    assert np.all([r["gap"] < 1e-6 for r in got])


def _toy_case():
    """The toy's :class:`contract.Case` (what a family adds to ``tests/contract.py``'s
    ``CASES``)."""
    from contract import Case, _binary, _labels, _rb, log_uniform

    return Case("L2SVM", cache=dict(path="cache", cache_size=1e-4),
                problems=_binary(lambda X, y, k, C: L2SVM(X, y, C=C, kernel=k),
                                 C=log_uniform(1e-2, 1e2)),
                on_features=lambda X, rng, h: L2SVM(X, _labels(rng, X.shape[0]), C=h),
                example=lambda: _rb(L2SVM, 4, 40, 3, "rbf", C=2.0))


def test_toy_family_keeps_the_contract():
    """The checks of :func:`contract.check_case` that the toy passes: the bad input (the
    others: below)."""
    from contract import BAD_INPUT, check_bad_input

    case = _toy_case()
    for argument, value in BAD_INPUT:
        check_bad_input(case, case.example(), argument, value)



def test_toy_family_contract_example_certifies():
    from contract import check_solution

    case = _toy_case()
    prob = case.example()
    check_solution(case, prob, fast.solve(prob), case.reference(prob))


def test_toy_family_contract_cache_certifies():
    from contract import check_cache

    check_cache(_toy_case(), _toy_case().example())


def test_toy_family_contract_warm_start():
    from contract import check_warm_start

    check_warm_start(_toy_case(), _toy_case().example())


def test_toy_family_contract_csr():
    from contract import check_sparse

    check_sparse(_toy_case(), 0, 1.0, 0.3)
