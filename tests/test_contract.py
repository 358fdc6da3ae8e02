"""The contract of ``fast.solve`` (tests/contract.py) over every family of the registry:
agreement with the reference and certification, CSR equals dense, the bounded cache equals
the Gram path, warm starts, and bad input."""
import pytest
from hypothesis import given, strategies as st

from contract import BAD_INPUT, CASES, KNOWN_BAD_INPUT_BUGS, check_agrees, check_bad_input, \
    check_cache, check_sparse, check_warm_start, names
from refmodels.registry import FAMILIES
from strategies import log_uniform, scales


def test_every_registered_family_has_a_case():
    assert set(FAMILIES) <= set(CASES)


@pytest.mark.parametrize("family", names("agrees"))
@given(data=st.data())
def test_matches_reference_and_certifies(family, data):
    case = CASES[family]
    check_agrees(case, data.draw(case.problems(), label="prob"))


@pytest.mark.parametrize("family", names("sparse"))
@given(seed=st.integers(0, 2**31), h=log_uniform(1e-2, 1e2), density=st.floats(0.05, 0.6),
       scale=scales())
def test_sparse_csr_matches_dense(family, seed, h, density, scale):
    check_sparse(CASES[family], seed, h, density, factor=scale.factor)


@pytest.mark.parametrize("family", names("cache"))
@given(data=st.data())
def test_bounded_cache_path(family, data):
    case = CASES[family]
    check_cache(case, data.draw(case.problems(kernels=("rbf", "poly")), label="prob"))


@pytest.mark.parametrize("family", names("warm"))
def test_warm_start_from_own_solution(family):
    case = CASES[family]
    check_warm_start(case, case.example())


def _bad_input_params():
    for family in names("bad_input"):
        for argument, value in BAD_INPUT:
            known = KNOWN_BAD_INPUT_BUGS.get((family, argument, value)) \
                if isinstance(value, str) else None
            marks = [pytest.mark.xfail(strict=True, reason=known)] if known else []
            yield pytest.param(family, argument, value, marks=marks,
                               id=f"{family}-{argument}={value!r}")


@pytest.mark.parametrize("family, argument, value", list(_bad_input_params()))
def test_bad_input_names_the_argument(family, argument, value):
    case = CASES[family]
    check_bad_input(case, case.example(), argument, value)


def test_declared_capabilities_match_the_methods():
    """A family declares what it offers (``Problem.capabilities``); the fast layer reads the
    declaration instead of probing the problem. Each declaration matches the methods the
    class really has, for every registered family."""
    from refmodels import registry

    method_of = {"margins": "objective_from_margins",
                 "stationarity_from_gram": "stationarity_from_gram",
                 "slack_stationarity": "slack_stationarity",
                 "dual_from_gram": "dual_value_from_gram",
                 "bias_feature": "intercept_of"}
    for fam in registry.FAMILIES.values():
        cls = fam.problem_class()
        for cap, method in method_of.items():
            assert (cap in cls.capabilities) == callable(getattr(cls, method, None)), \
                (fam.name, cap)
        assert ("test_points" in cls.capabilities) == (fam.module == "drr"), fam.name
        assert ("base_kernels" in cls.capabilities) == (fam.module == "mklm"), fam.name



@pytest.mark.parametrize("family", [f for f in FAMILIES
                                    if hasattr(FAMILIES[f].problem_class(), "box_dual")])
@given(data=st.data())
def test_box_dual_is_the_negated_dual(family, data):
    """A family's ``box_dual`` (the QP of the dual solvers) is minus its ``dual_value`` at
    box-feasible points, constant included (ODML / LDM: the offset ``mu2/m`` of ``v`` keeps
    the constant their seeds drop): the solvers and the certificate read one dual. The
    QP's Gram is the problem's ``G`` or, with a ``metric`` (ODML / LDM), the whitened
    ``G (I + metric P G)^{-1}`` built here by the Woodbury form, so that the ``metric``
    declared is checked against the one ``dual_value`` uses."""
    import numpy as np

    from refmodels.odml import woodbury_H

    prob = data.draw(CASES[family].problems(), label="prob")
    box = prob.box_dual
    r = np.random.default_rng(data.draw(st.integers(0, 2**31), label="seed"))
    blocks = [r.uniform(0, 1, prob.m) * h if np.isfinite(h) else r.exponential(1.0, prob.m)
              for h in box.hi]
    u = box.offset + sum(s * b for s, b in zip(box.sign, blocks))
    if box.metric:
        try:
            H = woodbury_H(prob.gram, prob.y, box.metric)
        except np.linalg.LinAlgError:
            # I + metric P G P not positive definite in float64 (cubic kernel on raw
            # features x 1e3): then the dual cannot be evaluated by the problem either
            from refmodels.solution import SolverError

            with pytest.raises((np.linalg.LinAlgError, SolverError, ValueError)):
                prob.dual_value(dict(zip(box.names, blocks)))
            return
        Gu = H @ u
    else:
        Gu = prob.y * prob.gram_times(prob.y * u)
    # dual_value forms its quadratic term by another route (the whitened Gram by a Cholesky
    # in feature space or a Woodbury solve; the kernel products by blocks): the two agree to
    # the round-off of a quadratic form over |G|, m eps |u|^T |G| |u| (Gram entries 1e8 and
    # more: raw features x 1e3 with the cubic kernel), times the condition number of the
    # whitening's factor I + metric P G P (P = I - y y^T / m) where there is one
    kappa = 1.0
    if box.metric:
        P = np.eye(prob.m) - np.outer(prob.y, prob.y) / prob.m
        kappa += box.metric * float(np.linalg.norm(P @ prob.gram @ P, 2))
    roundoff = 4 * kappa * prob.m * np.finfo(float).eps * float(
        np.abs(u) @ np.abs(prob.gram) @ np.abs(u))
    d_min = 0.5 * float(u @ Gu) + sum(p * b.sum() + 0.5 * dg * float(b @ b)
                                      for p, b, dg in zip(box.p, blocks, box.dg))
    d_max = prob.dual_value(dict(zip(box.names, blocks)))
    scale = 1.0 + abs(d_max) + 0.5 * abs(float(u @ Gu))
    assert abs(d_min + d_max) <= 1e-9 * scale + roundoff, (d_min, d_max, roundoff)


def _margin_loss_value(loss, gamma):
    """``sum_i ell(gamma_i)`` of a :class:`refmodels._box.MarginLoss`, from its definition."""
    import numpy as np

    if loss.kind == "odm":
        c, mu, th = loss.params
        return c * float(np.sum(np.maximum(0.0, 1.0 - th - gamma) ** 2
                                + mu * np.maximum(0.0, gamma - 1.0 - th) ** 2))
    assert loss.kind == "squared_hinge", loss.kind
    (C,) = loss.params
    return C * float(np.sum(np.maximum(0.0, 1.0 - gamma) ** 2))


@pytest.mark.parametrize("family", [f for f in FAMILIES
                                    if hasattr(FAMILIES[f].problem_class(), "margin_loss")])
@given(data=st.data())
def test_margin_loss_is_the_objective(family, data):
    """A family's ``margin_loss`` (what TRON and the kernel Newton minimise with
    ``1/2 ||w||^2``) gives its ``objective_from_margins`` at margins below, inside and above
    any band, and its TRON code exists; ``margin_loss_at(lam)`` is the loss of
    ``replace(lam=lam)``."""
    import numpy as np

    from fast import _tron

    prob = data.draw(CASES[family].problems(), label="prob")
    r = np.random.default_rng(data.draw(st.integers(0, 2**31), label="seed"))
    gamma = r.uniform(-2.0, 4.0, prob.m)
    wnorm2 = float(r.exponential(1.0))
    loss = prob.margin_loss
    assert loss.kind in _tron.LOSS_KINDS
    P = prob.objective_from_margins(gamma, wnorm2)
    assert abs(0.5 * wnorm2 + _margin_loss_value(loss, gamma) - P) <= 1e-12 * (1.0 + abs(P))
    if hasattr(prob, "margin_loss_at"):
        lam = float(r.uniform(0.5, 2.0)) * prob.lam
        assert prob.margin_loss_at(lam) == prob.replace(lam=lam).margin_loss
