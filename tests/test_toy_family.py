"""CONTRIBUTING.md's walk-through, executed: a toy family (the L2-loss SVM) written in two
files outside the package and one registry line, then served by ``fast.solve`` (with its
self-check) and certified by the one ``certify``."""
from __future__ import annotations

import pytest

import fast
import refmodels as rm
from refmodels import registry
from strategies import random_binary
from toy_family.l2svm import L2SVM


@pytest.fixture(scope="module", autouse=True)
def toy_registered():
    registry.register(registry.Family("L2SVM", "l2svm", "toy", None, "L2-loss SVM (the guide)",
                                      ref_module="toy_family.l2svm",
                                      solver_module="toy_family.fast_l2svm"))
    yield
    registry.FAMILIES.pop("L2SVM")


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_toy_family_fast_matches_reference_and_certifies(kernel):
    X, y, k, _ = random_binary(11, m=40, d=4, kernel=kernel)
    prob = L2SVM(X, y, C=2.0, kernel=k)
    ref = prob.solve()
    assert prob.certify(ref, reference=False).ok
    assert abs(prob.solve(form="primal").objective - ref.objective) <= 1e-6 * (1 + abs(ref.objective))
    sol = fast.solve(prob)
    assert sol.status == "optimal" and sol.info["self_check"]["worst"] <= 1e-7
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
        registry.register(registry.Family("L2SVM", "l2svm", "toy", None, "",
                                          ref_module="toy_family.l2svm",
                                          solver_module="toy_family.fast_l2svm"))
    assert rm.registry.get("l2svm").name == "L2SVM"
