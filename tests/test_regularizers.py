"""Regularizers (SPEC §8): GroupNorm values, closed-form proxes, conjugates, and `check`."""
import math

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import given, strategies as st

from refmodels.regularizers import GroupNorm, Regularizer, check, check_groups

INF = np.inf
#: configurations checked by `check`; the prox of the last four is numerical (CVXPY) or
#: a bisection over a closed-form norm prox.
CONFIGS = [(2, 2, "half_square"), (2, 1, "identity"), (1, 1, "identity"), (INF, 1, "identity"),
           (2, INF, "identity"), (2, 2, "identity"), (INF, INF, "half_square"), (2, 2, 3),
           (2, 1, 3), (1.5, 3, "identity"), (3, 2, "half_square"), (1, INF, "identity"),
           ("inf", 1, 1.5)]
#: configurations with a closed-form prox (or bisection over one)
CLOSED = [(2, 2, "half_square"), (2, 1, "identity"), (1, 1, "identity"), (INF, 1, "identity"),
          (2, INF, "identity"), (2, 2, "identity"), (INF, INF, "identity"), (1, 1, "half_square"),
          (2, 1, 3), (2, 2, 3), (INF, 1, "half_square"), (2, INF, 2.5)]

PROX_ERRORS = {}


def _groups(n, g, seed):
    rng = np.random.default_rng(seed)
    labels = np.concatenate([np.arange(g), rng.integers(0, g, n - g)])
    rng.shuffle(labels)
    return [np.flatnonzero(labels == c) for c in range(g)]


@pytest.mark.parametrize("q,r,rho", CONFIGS)
def test_check_passes_on_group_norm(q, r, rho):
    reg = GroupNorm(q, r, rho)
    rep = check(reg, dim=7, n_trials=4, random_state=1)
    PROX_ERRORS[repr(reg)] = (rep["prox vs CVXPY"].max_error,
                              rep["prox objective (not above CVXPY's)"].max_error,
                              rep["Fenchel-Young equality at prox points"].max_error)
    print(rep)
    assert rep.ok, str(rep)
    assert "PASSED" in str(rep)


def _prox_objective(reg, x, v, s, groups):
    return 0.5 * float(np.sum((x - v) ** 2)) + s * reg.value(x, groups)


@pytest.mark.parametrize("q,r,rho", CLOSED)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 9), g=st.integers(1, 4),
       scale=st.floats(-3, 3), logstep=st.floats(-2, 1.5))
def test_closed_form_prox_is_exact(q, r, rho, seed, n, g, scale, logstep):
    """A closed-form prox satisfies Fenchel-Young with equality to rounding (a sharp,
    CVXPY-free optimality test) and is no worse than a Clarabel solve of the prox problem."""
    g = min(g, n)
    groups = _groups(n, g, seed)
    reg = GroupNorm(q, r, rho)
    assert reg.prox_is_closed_form(groups) or reg.p != 1
    rng = np.random.default_rng(seed)
    v = rng.normal(size=n) * 10.0 ** scale
    if rng.random() < 0.3:                      # a zero group
        v[groups[0]] = 0.0
    s = 10.0 ** logstep
    x = reg.prox(v, s, groups)
    u = (v - x) / s                             # a subgradient of R at x iff x is the prox
    fy = reg.value(x, groups) + reg.conjugate(u, groups) - u @ x
    assert abs(fy) <= 1e-9 * (1 + abs(u @ x) + reg.value(x, groups)), fy
    # against CVXPY
    xv = cp.Variable(n)
    prob = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(xv - v) + s * reg.expr(xv, groups)))
    try:
        prob.solve(solver="CLARABEL")
    except cp.error.SolverError:
        # Clarabel can fail on the power cones far from unit scale (rho = 3, |v| ~ 1e3,
        # step 1e-2): the Fenchel-Young equality above is then the whole test
        return
    xc = xv.value
    Fp, Fc = _prox_objective(reg, x, v, s, groups), _prox_objective(reg, xc, v, s, groups)
    assert Fp <= Fc + 1e-9 * (1 + abs(Fc))
    err = np.linalg.norm(x - xc) / (1 + np.linalg.norm(xc))
    key = f"closed {reg!r}"
    PROX_ERRORS[key] = max(PROX_ERRORS.get(key, 0.0), err)
    assert err <= 1e-3


def test_known_closed_forms():
    rng = np.random.default_rng(0)
    v, s = rng.normal(size=6), 0.4
    groups = [np.array([0, 1, 2]), np.array([3, 4, 5])]
    soft = np.sign(v) * np.maximum(np.abs(v) - s, 0)
    np.testing.assert_allclose(GroupNorm(1, 1, "identity").prox(v, s, groups), soft, atol=1e-15)
    np.testing.assert_allclose(GroupNorm(2, 2, "half_square").prox(v, s, groups), v / (1 + s))
    nv = np.linalg.norm(v)
    np.testing.assert_allclose(GroupNorm(2, 2, "identity").prox(v, s, groups),
                               v * max(0, 1 - s / nv), atol=1e-15)
    x = GroupNorm(2, 1, "identity").prox(v, s, groups)
    for gidx in groups:
        ng = np.linalg.norm(v[gidx])
        np.testing.assert_allclose(x[gidx], v[gidx] * max(0, 1 - s / ng), atol=1e-15)
    # (inf, 1): each group minus its projection onto the l1 ball of radius s
    x = GroupNorm(INF, 1, "identity").prox(v, s, groups)
    for gidx in groups:
        p = v[gidx] - x[gidx]
        assert np.sum(np.abs(p)) <= s + 1e-12
        if np.sum(np.abs(v[gidx])) > s:
            assert abs(np.sum(np.abs(p)) - s) <= 1e-12


def test_values_and_conjugate_formulas():
    groups = [np.array([0, 1]), np.array([2, 3, 4])]
    w = np.array([3.0, -4.0, 1.0, 2.0, -2.0])
    assert GroupNorm(2, 1, "identity").value(w, groups) == pytest.approx(5 + 3)
    assert GroupNorm(2, INF, "identity").value(w, groups) == pytest.approx(5)
    assert GroupNorm(1, 2, "half_square").value(w, groups) == pytest.approx(0.5 * (49 + 25))
    assert GroupNorm(INF, 1, 3).value(w, groups) == pytest.approx((4 + 2) ** 3 / 3)
    # conjugates: identity -> indicator of the dual ball, 1/2 t^2 -> 1/2 s^2, t^3/3 -> s^1.5/1.5
    u = np.array([0.3, 0.4, 0.1, 0.1, 0.1])
    reg = GroupNorm(2, 1, "identity")            # dual (2, inf): max(0.5, sqrt(.03))
    assert reg.conjugate(u, groups) == 0.0
    assert reg.conjugate(3 * u, groups) == math.inf
    assert GroupNorm(2, 1, "half_square").conjugate(u, groups) == pytest.approx(0.5 * 0.25)
    assert GroupNorm(2, 1, 3).conjugate(u, groups) == pytest.approx(0.5 ** 1.5 / 1.5)


def test_matrix_inputs_are_columnwise():
    rng = np.random.default_rng(3)
    groups = [np.array([0, 2]), np.array([1, 3, 4])]
    V = rng.normal(size=(5, 3))
    steps = np.array([0.1, 1.0, 3.0])
    for reg in (GroupNorm(2, 1, "identity"), GroupNorm(INF, 1, 3), GroupNorm(2, 2, "half_square")):
        np.testing.assert_allclose(reg.value(V, groups),
                                   [reg.value(V[:, j], groups) for j in range(3)])
        np.testing.assert_allclose(reg.conjugate(V, groups),
                                   [reg.conjugate(V[:, j], groups) for j in range(3)])
        np.testing.assert_allclose(reg.prox(V, steps, groups),
                                   np.column_stack([reg.prox(V[:, j], steps[j], groups)
                                                    for j in range(3)]))


# ---- deliberately wrong regularizers -----------------------------------------------------------
class WrongProx(GroupNorm):
    def prox(self, v, step, groups):
        return 1.05 * super().prox(v, step, groups)


class WrongValue(GroupNorm):
    def value(self, w, groups):
        return 1.01 * super().value(w, groups)


class WrongConjugate(GroupNorm):
    def conjugate(self, u, groups):
        return super().conjugate(u, groups) + 0.05


class NonConvex(Regularizer):
    """sqrt(|w|) summed: non-convex; its expr is not DCP."""

    def expr(self, w, groups):
        return cp.sum(cp.sqrt(cp.abs(w)))

    def value(self, w, groups):
        return float(np.sum(np.sqrt(np.abs(w))))

    def prox(self, v, step, groups):
        return v


@pytest.mark.parametrize("q,r,rho", [(2, 1, "identity"), (2, 2, 3), (1.5, 3, "identity")])
def test_check_catches_wrong_prox(q, r, rho):
    rep = check(WrongProx(q, r, rho), dim=6, random_state=2)
    assert not rep.ok
    assert "prox objective (not above CVXPY's)" in rep.failing
    assert "FAILED" in str(rep)


def test_check_catches_wrong_value_and_conjugate_and_nonconvexity():
    rep = check(WrongValue(2, 1, "identity"), dim=6)
    assert not rep.ok and "value vs expr" in rep.failing
    rep = check(WrongConjugate(2, 1, "half_square"), dim=6)
    assert not rep.ok and "Fenchel-Young equality at prox points" in rep.failing
    rep = check(NonConvex(), dim=4)
    assert not rep.ok
    assert "expr is convex (DCP)" in rep.failing and "convexity probe" in rep.failing


def test_user_regularizer_passes_check():
    class ElasticNet(Regularizer):
        def expr(self, w, groups):
            return cp.norm(w, 1) + 0.5 * cp.sum_squares(w)

        def value(self, w, groups):
            return float(np.sum(np.abs(w)) + 0.5 * w @ w)

        def prox(self, v, step, groups):
            return np.sign(v) * np.maximum(np.abs(v) - step, 0) / (1 + step)

    rep = check(ElasticNet(), dim=5, groups=[np.arange(5)])
    assert rep.ok, str(rep)
    names = [r.name for r in rep.results]
    assert "Fenchel-Young inequality" not in names          # no conjugate given


# ---- convexity condition -----------------------------------------------------------------------
@pytest.mark.parametrize("kw", [dict(q=0.5), dict(r=0.9), dict(rho=0.5), dict(q=0.99, r=0.5)])
def test_nonconvex_parameters_refused(kw):
    args = dict(q=2, r=2, rho="identity")
    args.update(kw)
    with pytest.raises(ValueError, match="non-convex"):
        GroupNorm(**args)


def test_q_below_one_is_nonconvex_numerically():
    """SPEC §8: for q < 1 the map is non-convex as soon as a group has two members."""
    q = 0.5
    f = lambda x: np.sum(np.abs(x) ** q) ** (1 / q)
    a, b = np.array([1.0, 0.0]), np.array([0.0, 1.0])
    assert f(0.5 * (a + b)) > 0.5 * (f(a) + f(b)) + 0.5     # 2.0 > 1.0: midpoint convexity fails


def test_bad_arguments():
    for bad in ("two", None, True, float("nan")):
        with pytest.raises(ValueError, match="q"):
            GroupNorm(q=bad)
    with pytest.raises(ValueError, match="rho"):
        GroupNorm(rho="cube")
    with pytest.raises(ValueError, match="rho"):
        GroupNorm(rho=float("inf"))
    assert GroupNorm(q="inf", r=np.inf).q == math.inf
    assert GroupNorm(rho=1).rho == "identity" and GroupNorm(rho=2.0).rho == "half_square"
    reg = GroupNorm(2, 1, "identity")
    with pytest.raises(ValueError, match="dim"):
        check(reg, dim=0)
    with pytest.raises(ValueError, match="n_trials"):
        check(reg, n_trials=0)
    with pytest.raises(ValueError, match="partition"):
        check(reg, dim=4, groups=[np.array([0, 1]), np.array([1, 2, 3])])
    with pytest.raises(ValueError, match="reg"):
        check(object())
    with pytest.raises(ValueError, match="groups"):
        check_groups(np.array([0, 0, 1]), 3)
    with pytest.raises(ValueError, match="step"):
        reg.prox(np.ones(3), -1.0, [np.arange(3)])


def test_report_prox_errors():
    """Runs last in this file: prints the prox errors collected above (for the closing note)."""
    for k, v in sorted(PROX_ERRORS.items()):
        print(f"{k}: {v}")


@pytest.mark.parametrize("c", [1e-300, 1e-160, 1e160, 1e300])
@pytest.mark.parametrize("q,r,rho", [(1, 1, "identity"), (2, 1, "identity"),
                                     (np.inf, 1, "identity"), (2, 2, "identity"),
                                     (2, np.inf, "identity"), (2, 1, "half_square")])
def test_reference_norm_and_prox_at_every_scale(q, r, rho, c):
    """The reference layer's value and closed-form prox are scale-equivariant out to
    1e+-300 (before: ``np.linalg.norm`` of a vector near 1e160 overflowed to inf, so the
    q = 2 value was inf and the prox was off by 30-46 %)."""
    from refmodels.regularizers import GroupNorm

    rng = np.random.default_rng(4)
    groups = [np.array([0, 3, 4]), np.array([1, 2]), np.array([5, 6, 7, 8])]
    v = rng.normal(size=9) * 3.0
    reg = GroupNorm(q, r, rho)
    p = reg.p
    assert reg.norm(v * c, groups) / c == pytest.approx(reg.norm(v, groups), rel=1e-14)
    x1 = reg.prox(v, 0.5, groups)
    xc = reg.prox(v * c, 0.5 * c ** (2.0 - p), groups)
    np.testing.assert_allclose(xc / c, x1, rtol=1e-12, atol=1e-14 * np.max(np.abs(v)))


def test_unit_scale_scalar_is_unit_scale():
    """The scalar rescaling the 1-D norms and the prox use gives unit_scale's power of two
    and answer, at the edges of [1/UNIT_SAFE, UNIT_SAFE], at 0, subnormals, inf and NaN."""
    from refmodels._numeric import UNIT_SAFE, unit_scale, unit_scale_scalar

    rng = np.random.default_rng(5)
    vals = [0.0, 1.0, 3.3, UNIT_SAFE, np.nextafter(UNIT_SAFE, np.inf), 1.0 / UNIT_SAFE,
            np.nextafter(1.0 / UNIT_SAFE, 0.0), 5e-324, 1e-310, 1.7e308, np.inf, np.nan]
    vals += list(10.0 ** rng.uniform(-320, 308, 500))
    for a in vals:
        c, far = unit_scale(np.float64(a))
        c2, far2 = unit_scale_scalar(a)
        assert (float(c), far) == (c2, far2), a
        if far2:
            assert 1.0 <= a / c2 < 2.0


@pytest.mark.parametrize("c", [1.0, 1e-200, 1e200])
def test_vector_and_matrix_norms_agree(c):
    """The 1-D path of the group norms (what DRR's steps call) and the column-wise 2-D
    path give the same numbers, for every (q, r) and at every scale."""
    rng = np.random.default_rng(6)
    groups = [np.array([0, 2]), np.array([1, 3, 4]), np.array([5])]
    V = rng.normal(size=(6, 4)) * c
    V[:, 3] = 0.0
    for q in (1, 1.5, 2, 3, INF):
        for r in (1, 2, 3, INF):
            N = GroupNorm.group_norm(V, groups, q, r)
            for j in range(V.shape[1]):
                assert GroupNorm.group_norm(V[:, j], groups, q, r) == pytest.approx(
                    N[j], rel=1e-14, abs=0.0), (q, r, j)
