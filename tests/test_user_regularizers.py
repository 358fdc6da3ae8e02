"""A user's regularizer is checked before it is trusted (refmodels.regularizers.verdict):
refused when it is not the convex function it states, never the cause of a fast "optimal"
that the certificate does not confirm."""
import gc
import re
import warnings
import weakref

import cvxpy as cp
import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

import fast
import refmodels as rm
from refmodels import _verdict as V
from refmodels import regularizers as R
from refmodels.regularizers import GroupNorm, Regularizer
from refmodels.solution import SolverError


def _instance(kernel="rbf", seed=0, m=24, n_test=3):
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1, 2], m // 3)
    X = rng.normal(size=(m, 3)) + y[:, None]
    Xt = rng.normal(size=(n_test, 3)) + 1.0
    k = rm.kernels.RBF(0.3) if kernel == "rbf" else rm.kernels.Linear()
    return X, y, Xt, k


class ElasticNet(Regularizer):
    """``||w||_1 + 1/2 ||w||^2``: convex, right prox, no conjugate."""

    def expr(self, w, groups):
        return cp.norm1(w) + 0.5 * cp.sum_squares(w)

    def value(self, w, groups):
        return float(np.sum(np.abs(w)) + 0.5 * w @ w)

    def prox(self, v, step, groups):
        return np.sign(v) * np.maximum(np.abs(v) - step, 0.0) / (1.0 + step)


class ElasticNetWrongProx(ElasticNet):
    """The soft threshold at half the step: a wrong prox, no conjugate."""

    def prox(self, v, step, groups):
        return np.sign(v) * np.maximum(np.abs(v) - 0.5 * step, 0.0) / (1.0 + step)


class GroupWrongProx(GroupNorm):
    """A group norm (with its conjugate) whose prox is 5 % off."""

    def prox(self, v, step, groups):
        return 1.05 * super().prox(v, step, groups)


class HalfNorm(Regularizer):
    """The L0.5 quasi-norm ``(sum |w_i|^0.5)^2``, non-convex; its expr, the L1 norm, is a
    convex stand-in (DCP) that hides it from CVXPY."""

    def expr(self, w, groups):
        return cp.norm1(w)

    def value(self, w, groups):
        return float(np.sum(np.sqrt(np.abs(w))) ** 2)

    def prox(self, v, step, groups):            # a stationary point's map: soft threshold
        return np.sign(v) * np.maximum(np.abs(v) - step, 0.0)


class SqrtAbs(Regularizer):
    """``sum sqrt|w_i|``: non-convex, its expr non-DCP."""

    def expr(self, w, groups):
        return cp.sum(cp.sqrt(cp.abs(w)))

    def value(self, w, groups):
        return float(np.sum(np.sqrt(np.abs(w))))

    def prox(self, v, step, groups):
        return np.sign(v) * np.maximum(np.abs(v) - step, 0.0)


class NaNProx(ElasticNet):
    def prox(self, v, step, groups):
        out = super().prox(v, step, groups)
        out[0] = np.nan
        return out


class Unhashable(ElasticNet):
    """``__eq__`` without ``__hash__``: not a key of a WeakKeyDictionary."""

    def __eq__(self, other):
        return isinstance(other, Unhashable)

    __hash__ = None


WRONG = [ElasticNetWrongProx, lambda: GroupWrongProx(2, 1, "identity"),
         lambda: GroupWrongProx(2, 2, 3)]


@pytest.mark.parametrize("kernel", ["rbf", "linear"])
@pytest.mark.parametrize("make", WRONG)
def test_wrong_prox_is_inaccurate_never_optimal(make, kernel):
    """A wrong prox: the fast solve ends 'inaccurate' with a ConvergenceWarning naming the
    prox, and its point fails the certificate; the reference certifies with the conjugate
    when there is one, and refuses (SolverError) when only the prox could vouch."""
    reg = make()
    X, y, Xt, k = _instance(kernel)
    prob = rm.DRR(X, y, Xt, alpha=0.5, beta=0.3, kernel=k, regularizer=reg)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            sol = fast.solve(prob)
        except SolverError as exc:
            # a prox that expands (1.05 x the group norm's) makes the iteration diverge: the
            # error names the prox and the check it fails, never a point called optimal
            assert "prox" in str(exc) and "fails rm.regularizers.check" in str(exc)
            assert "not finite" in str(exc)
            sol = None
    if sol is not None:
        assert sol.status == "inaccurate"
        msgs = [str(w.message) for w in caught if issubclass(w.category, ConvergenceWarning)]
        assert any("prox" in msg and "inaccurate" in msg for msg in msgs), msgs
        cert = prob.certify(sol, reference=False)
        assert not cert.ok
    if reg.has_conjugate:
        ref = prob.solve()
        assert prob.certify(ref).ok
        assert sol is None or ref.objective.sum() < sol.objective.sum()
    else:
        with pytest.raises(SolverError):
            prob.solve()


@pytest.mark.parametrize("make, check", [(HalfNorm, "value vs expr"),
                                         (SqrtAbs, "expr is convex (DCP)")])
def test_non_convex_regularizer_is_refused_everywhere(make, check):
    reg = make()
    report = R.check(reg)
    assert "convexity probe" in report.failing
    X, y, Xt, k = _instance()
    prob = rm.DRR(X, y, Xt, alpha=0.5, beta=0.3, kernel=k, regularizer=reg)
    for run in (prob.solve, lambda: fast.solve(prob),
                lambda: prob.certify(prob.solution_from(coef=np.zeros((prob.m, prob.n_test))))):
        with pytest.raises(ValueError, match=re.escape(check)):
            run()


def test_nan_prox():
    reg = NaNProx()
    report = R.check(reg)
    assert "prox vs CVXPY" in report.failing
    assert R.NONFINITE_PROX in report["prox vs CVXPY"].note
    X, y, Xt, k = _instance()
    prob = rm.DRR(X, y, Xt, alpha=0.5, beta=0.3, kernel=k, regularizer=reg)
    for run in (lambda: fast.solve(prob), prob.solve):
        with pytest.raises(ValueError, match="prox .* must return finite values"):
            run()


def test_nan_in_a_check_is_a_failure():
    """``max(0.0, nan)`` is 0.0: a NaN error used to pass a check."""
    class NaNValue(ElasticNet):
        def value(self, w, groups):
            return float("nan")

    report = R.check(NaNValue())
    assert "value vs expr" in report.failing and "convexity probe" in report.failing


@pytest.mark.parametrize("kernel", ["rbf", "linear"])
def test_zero_silent_optimal_over_user_regularizers(kernel):
    """Every regularizer here (right, wrong prox, non-convex, NaN prox, unhashable): fast says
    'optimal' only where the certificate (with the reference where m <= 2000) holds."""
    X, y, Xt, k = _instance(kernel, seed=3)
    regs = [ElasticNet(), Unhashable(), ElasticNetWrongProx(), GroupWrongProx(2, 1, "identity"),
            HalfNorm(), SqrtAbs(), NaNProx(), GroupNorm(2, 1, "identity")]
    optimal = 0
    for reg in regs:
        prob = rm.DRR(X, y, Xt, alpha=0.5, beta=0.3, kernel=k, regularizer=reg)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            try:
                sol = fast.solve(prob)
            except (ValueError, SolverError):
                continue                          # refused, or diverged: never 'optimal'
        if sol.status == "optimal":
            optimal += 1
            assert prob.certify(sol).ok, repr(reg)
    assert optimal == 3                           # the right ones


def test_verdict_once_per_object_and_not_on_the_problem(monkeypatch):
    calls = []
    real = R.check

    def counting(reg, *args, **kwargs):
        calls.append(id(reg))
        return real(reg, *args, **kwargs)

    monkeypatch.setattr(R, "check", counting)
    X, y, Xt, k = _instance()
    for reg in (ElasticNet(), Unhashable()):
        for beta in (0.3, 1.0):
            prob = rm.DRR(X, y, Xt, alpha=0.5, beta=beta, kernel=k, regularizer=reg)
            assert fast.solve(prob).status == "optimal"
            assert prob.certify(prob.solve()).ok
            assert not any(isinstance(v, R.CheckReport) for v in vars(prob).values())
    assert len(calls) == 2                        # one per regularizer object
    assert R.verdict(GroupNorm(2, 1, "identity")) is None        # the package's own
    gc.collect()
    reg = ElasticNet()
    R.verdict(reg)
    assert reg in V._VERDICTS
    n = len(V._VERDICTS)
    alive = weakref.ref(reg)
    del reg
    gc.collect()
    assert alive() is None                        # the table does not keep it alive
    assert len(V._VERDICTS) == n - 1              # and its entry goes with it


class LongerIsWrong(ElasticNet):
    """Its value is its expr's on the check's short draws (six entries) and 10 % more on
    longer vectors, such as a DRR point (one entry per training point): the check passes."""

    def value(self, w, groups):
        return super().value(w, groups) * (1.0 if w.size <= 6 else 1.1)


@pytest.mark.parametrize("kernel", ["rbf", "linear"])
def test_value_is_checked_at_the_point_certified(kernel):
    reg = LongerIsWrong()
    assert R.check(reg).ok                        # the check's draws cannot see it
    X, y, Xt, k = _instance(kernel)
    prob = rm.DRR(X, y, Xt, alpha=0.5, beta=0.3, kernel=k, regularizer=reg)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sol = fast.solve(prob)
    assert sol.status != "optimal"
    assert any("value vs expr" in str(w.message) for w in caught)
    cert = prob.certify(sol, reference=False)
    assert not cert.ok and cert.worst[0] == "regularizer value vs expr at the point"
    # the same point with the right value certifies
    right = rm.DRR(X, y, Xt, alpha=0.5, beta=0.3, kernel=k, regularizer=ElasticNet())
    assert right.certify(right.solution_from(coef=sol.coef), reference=False).ok
