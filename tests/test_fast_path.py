"""TRON on linear ODM, method="auto", and warm-started regularization paths."""
import os
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, note, settings
from hypothesis import strategies as st
from sklearn.exceptions import ConvergenceWarning

import fast
import refmodels as rm
from fast import _tron
from fast.path import PATH_PARAMS, with_params
from fast.path import path as fast_path
from refmodels.solution import SolverError
from strategies import make_problem


def _data(m=120, d=6, seed=0, scale=1.0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(m, d))
    w = rng.normal(size=d)
    y = np.where(X @ w + 0.5 * rng.normal(size=m) > 0, 1.0, -1.0)
    return X * scale, y


@pytest.mark.parametrize("scale", [1.0, 1e3, 1e-3])
@pytest.mark.parametrize("lam", [1.0, 2.0 ** 10, 2.0 ** 20])
def test_tron_certifies_and_matches_dcd_and_reference(scale, lam):
    X, y = _data(scale=scale, seed=int(np.log2(lam)))
    prob = rm.ODM(X, y, lam=lam, mu=0.8, theta=0.2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sol = fast.solve(prob, method="tron")
    assert sol.solver == "fast:tron"
    cert = prob.certify(sol)                       # m = 120: with the CVXPY reference
    if scale == 1e3 and lam == 2.0 ** 20:
        # features x 1e3 at lam = 2^20: the gradient's rounding error (~eps times the sum
        # of its terms) is about the certificate's 1e-6; no silent wrong answer: either it
        # certifies, or the status says so with a warning naming the scale
        assert cert.ok or (sol.status != "optimal" and caught)
        return
    assert sol.status == "optimal"
    assert cert.ok, str(cert)
    ref = prob.reference_solution()
    assert abs(sol.objective - ref.objective) <= 1e-7 * (1 + abs(ref.objective))
    if scale == 1.0 and lam <= 2.0 ** 10:          # the DCD is slow at weak regularization
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            dcd = fast.solve(prob, method="dcd")
        assert abs(sol.objective - dcd.objective) <= 1e-7 * (1 + abs(dcd.objective))


def test_tron_csr_equals_dense():
    X, y = _data(m=150, d=12, seed=3)
    X[np.abs(X) < 0.8] = 0.0
    dense = fast.solve(rm.ODM(X, y, lam=64.0, mu=0.5, theta=0.3), method="tron")
    prob_s = rm.ODM(sp.csr_matrix(X), y, lam=64.0, mu=0.5, theta=0.3)
    sparse = fast.solve(prob_s, method="tron")
    np.testing.assert_allclose(sparse.variables["w"], dense.variables["w"], rtol=1e-9,
                               atol=1e-10)
    assert prob_s.certify(sparse, reference=False).ok


def test_tron_warm_start_and_errors():
    X, y = _data(seed=5)
    prob = rm.ODM(X, y, lam=256.0, mu=0.8, theta=0.2)
    cold = fast.solve(prob, method="tron")
    warm = fast.solve(prob, method="tron", warm_start=cold)
    assert warm.n_iter <= 1
    np.testing.assert_allclose(warm.variables["w"], cold.variables["w"], atol=1e-8)
    # a DCD solution is a valid warm start too (it carries w on the linear path)
    dcd = fast.solve(rm.ODM(X, y, lam=64.0, mu=0.8, theta=0.2))
    assert prob.certify(fast.solve(prob, method="tron", warm_start=dcd), reference=False).ok
    with pytest.raises(ValueError, match="linear kernel"):
        fast.solve(rm.ODM(X, y, kernel=rm.kernels.RBF(0.5)), method="tron")
    with pytest.raises(ValueError, match="unknown options"):
        fast.solve(prob, method="tron", shrinking=True)


def test_tron_max_iter_reports_status():
    X, y = _data(seed=6)
    prob = rm.ODM(X, y, lam=2.0 ** 16, mu=0.8, theta=0.2)
    with pytest.warns(Warning):
        sol = fast.solve(prob, method="tron", max_iter=1)
    assert sol.status != "optimal"


def test_tron_squared_hinge_loss_matches_liblinear():
    """The TRON core is loss-agnostic: L2-loss SVM (LIBLINEAR -s 2) through LOSS_SQHINGE."""
    from sklearn.svm import LinearSVC

    X, y = _data(m=200, d=8, seed=7)
    C = 4.0
    w, gamma, info = _tron.minimize(_tron.Data(X, y), _tron.LOSS_SQHINGE, (C,))
    assert info["converged"]

    def f(v):
        return 0.5 * v @ v + C * np.sum(np.maximum(0.0, 1.0 - y * (X @ v)) ** 2)

    ll = LinearSVC(C=C, loss="squared_hinge", dual=True, fit_intercept=False, tol=1e-10,
                   max_iter=100000).fit(X, y).coef_.ravel()
    assert f(w) <= f(ll) + 1e-9 * f(ll)
    np.testing.assert_allclose(w, ll, rtol=1e-4, atol=1e-6)


def test_auto_chooses_by_kernel():
    X, y = _data(m=80, seed=8)
    assert fast.solve(rm.ODM(X, y, lam=16.0), method="auto").solver == "fast:tron"
    sol = fast.solve(rm.ODM(X, y, lam=16.0, kernel=rm.kernels.RBF(0.3)), method="auto")
    assert sol.solver == "fast:dcd"


def test_path_linear_odm_certified_in_caller_order():
    X, y = _data(m=200, d=5, seed=9)
    grid = [2.0 ** k for k in (8, 0, 20, 4, 12, 16, 2)]         # not sorted
    prob = rm.ODM(X, y, lam=1.0, mu=0.8, theta=0.2)
    sols = fast_path(prob, lam=grid, certify=True)
    assert len(sols) == len(grid)
    for lam, sol in zip(grid, sols):
        assert sol.info["path"]["value"] == lam
        assert sol.info["certificate"].ok
        p = rm.ODM(X, y, lam=lam, mu=0.8, theta=0.2)
        assert p.certify(sol, reference=False).ok
        # the same point as a cold solve
        cold = fast.solve(p, method="tron")
        assert abs(cold.objective - sol.objective) <= 1e-9 * (1 + abs(cold.objective))
    ranks = [s.info["path"]["rank"] for s in sols]
    assert [grid[i] for i in np.argsort(ranks)] == sorted(grid)   # strong -> weak
    assert sum(s.info["path"]["warm_started"] for s in sols) == len(grid) - 1


def test_path_warm_start_saves_iterations():
    X, y = _data(m=300, d=10, seed=10)
    grid = [2.0 ** k for k in range(10, 21)]
    prob = rm.ODM(X, y, lam=1.0, mu=0.8, theta=0.2)
    warm = sum(s.n_iter for s in fast_path(prob, lam=grid))
    cold = sum(fast.solve(rm.ODM(X, y, lam=l, mu=0.8, theta=0.2), method="tron").n_iter
               for l in grid)
    assert warm < cold


def test_path_kernel_odm_and_shared_gram():
    X, y = _data(m=60, d=3, seed=11)
    prob = rm.ODM(X, y, lam=1.0, mu=0.5, theta=0.3, kernel=rm.kernels.RBF(0.5))
    G = prob.gram
    grid = [1.0, 16.0, 4.0]
    sols = fast_path(prob, lam=grid)
    for lam, sol in zip(grid, sols):
        p = rm.ODM(X, y, lam=lam, mu=0.5, theta=0.3, kernel=rm.kernels.RBF(0.5))
        assert p.certify(sol).ok
    from fast.path import with_params
    ws = rm.Workspace()                 # problems on the same data share a workspace's Gram
    with rm.workspace.using(ws):
        G = prob.gram
        assert with_params(prob, lam=8.0).gram is G


def test_path_kernel_builds_the_gram_once(monkeypatch):
    """A problem without a Gram: the path's first solve builds the solvers' Gram, every later
    point reuses it; the certificate's own Gram (one builder each, so that no certificate
    reads what a solver built) is built at most once too."""
    X, y = _data(m=80, d=3, seed=14)
    kern = rm.kernels.RBF(0.5)
    prob = rm.ODM(X, y, lam=1.0, mu=0.5, theta=0.3, kernel=kern)
    calls = []
    from fast import _kernels
    real, real_fast = type(kern).gram, _kernels._rbf_gram
    monkeypatch.setattr(type(kern), "gram", lambda self, Z: calls.append(1) or real(self, Z))
    monkeypatch.setattr(_kernels, "_rbf_gram", lambda *a: calls.append(2) or real_fast(*a))
    sols = fast_path(prob, lam=[1.0, 2.0**6, 2.0**12, 2.0**18])
    assert calls.count(2) == 1 and calls.count(1) <= 1, calls
    assert all(s.status == "optimal" for s in sols)
    monkeypatch.undo()
    for lam, sol in zip([1.0, 2.0**6, 2.0**12, 2.0**18], sols):
        p = rm.ODM(X, y, lam=lam, mu=0.5, theta=0.3, kernel=kern)
        assert p.certify(sol, reference=False).ok


@pytest.mark.parametrize("family", ["SVM", "SVM_b", "ODML", "LDM"])
def test_path_other_families(family):
    X, y = _data(m=50, d=4, seed=12)
    if family == "SVM":
        prob, name, grid = rm.SVM(X, y, C=1.0), "C", [0.1, 10.0, 1.0]
    elif family == "SVM_b":
        prob, name, grid = rm.SVM(X, y, C=1.0, fit_intercept=True), "C", [0.1, 10.0, 1.0]
    elif family == "ODML":
        prob, name, grid = rm.ODML(X, y, lam=1.0, mu1=0.5, mu2=0.1), "lam", [1.0, 64.0, 8.0]
    else:
        prob, name, grid = rm.LDM(X, y, C=1.0, lam1=0.05, lam2=0.05), "C", [0.1, 2.0, 0.5]
    sols = fast_path(prob, **{name: grid})
    from fast.path import with_params
    for v, sol in zip(grid, sols):
        assert with_params(prob, **{name: v}).certify(sol).ok


def test_path_argument_errors():
    X, y = _data(m=40, seed=13)
    prob = rm.ODM(X, y)
    with pytest.raises(ValueError, match="'lam'"):
        fast_path(prob, C=[1.0])
    with pytest.raises(ValueError, match="lam"):
        fast_path(prob, lam=[1.0, -2.0])
    with pytest.raises(ValueError, match="lam"):
        fast_path(prob, lam=[])
    with pytest.raises(ValueError, match=r"lam holds the value 4 2 times \(positions \[0, 2\]\)"):
        fast_path(prob, lam=[4.0, 1.0, 4.0])


@pytest.mark.parametrize("grid,needle", [
    ([[1.0, 4.0], [16.0, 64.0]], r"lam must be a 1-D sequence.*shape \(2, 2\).*not flattened"),
    (np.ones((3, 1)), r"lam must be a 1-D sequence.*shape \(3, 1\)"),
    (4.0, r"lam must be a 1-D sequence.*a single value"),
    ([True, 4.0], r"lam must hold numbers, not booleans"),
    (np.array([True, False]), r"lam must hold numbers, not booleans"),
    ([1.0, "4"], r"lam must hold real numbers"),
    ([1.0, 2j], r"lam must hold real numbers"),
    ([[1.0], [2.0, 3.0]], r"lam must be a 1-D sequence.*ragged"),
    ("1,4", r"lam must be a 1-D sequence"),
    ([1.0, np.nan], r"lam must hold finite numbers > 0"),
])
def test_path_refuses_grids_it_would_reinterpret(grid, needle):
    """A 2-D grid was flattened, ``True`` taken as 1 and a repeated value returned as one
    aliased Solution: each is refused with a ValueError naming the grid."""
    X, y = _data(m=40, seed=13)
    with pytest.raises(ValueError, match=needle):
        fast_path(rm.ODM(X, y), lam=grid)


def test_path_takes_any_real_numbers():
    from fractions import Fraction

    X, y = _data(m=40, seed=13)
    sols = fast_path(rm.ODM(X, y), lam=(Fraction(1, 2), np.int64(4)))
    assert [s.info["path"]["value"] for s in sols] == [0.5, 4.0]
    assert sols[0] is not sols[1]


def test_path_goes_on_after_a_solver_error(monkeypatch):
    """A SolverError at one point does not stop the path: that point gets status "error"
    with the message, a ConvergenceWarning names the value, and the next point starts from
    the last good one; ``on_error="raise"`` lets it propagate."""
    X, y = _data(m=60, seed=31)
    prob = rm.ODM(X, y, lam=1.0, mu=0.8, theta=0.2)
    real = fast.solve
    starts = []

    def refuses_4(p, **kw):
        starts.append((p.lam, kw.get("warm_start")))
        if p.lam == 4.0:
            raise SolverError("refused for the test")
        return real(p, **kw)

    monkeypatch.setattr(fast, "solve", refuses_4)    # (looked up at call time by the path)
    with pytest.warns(ConvergenceWarning, match=r"lam=4 raised SolverError \(refused for"):
        sols = fast_path(prob, lam=[16.0, 1.0, 4.0])
    assert [s.status for s in sols] == ["optimal", "optimal", "error"]
    err = sols[2]
    assert err.info["error"] == "refused for the test" and err.coef is None
    assert np.isnan(err.objective) and err.info["path"]["value"] == 4.0
    assert [v for v, _ in starts] == [1.0, 4.0, 16.0]
    assert starts[1][1] is sols[1] and starts[2][1] is sols[1]    # the last good point
    with pytest.raises(SolverError, match="refused for the test"):
        fast_path(prob, lam=[1.0, 4.0], on_error="raise")
    with pytest.raises(ValueError, match="on_error"):
        fast_path(prob, lam=[1.0], on_error="skip")


@pytest.mark.parametrize("cold_fails", [False, True])
def test_path_solves_a_failed_warm_start_again_cold(cold_fails, monkeypatch):
    """A warm-started point that does not end optimal (as LDM spambase C = 2^20,
    SVM+b magic C = 2^18, certified by the cold solve only) is solved again from zero: the
    cold point is kept when optimal, and the warm solve's warning does not reach the caller;
    if the cold one fails too, the warm point and its warning stay. A tolerance of the
    user's is not retried."""
    X, y = _data(m=60, seed=32)
    prob = rm.ODM(X, y, lam=1.0, mu=0.8, theta=0.2)
    real = fast.solve
    calls = []

    def fails_at_16(p, **kw):
        warm = kw.get("warm_start") is not None
        calls.append((p.lam, warm))
        sol = real(p, **kw)
        if p.lam == 16.0 and (warm or cold_fails) and kw.get("tol") is None:
            warnings.warn(f"{'warm' if warm else 'cold'} solve failed for the test",
                          ConvergenceWarning)
            sol.status = "max_iter"
        return sol

    monkeypatch.setattr(fast, "solve", fails_at_16)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sols = fast_path(prob, lam=[1.0, 4.0, 16.0])
    assert calls == [(1.0, False), (4.0, True), (16.0, True), (16.0, False)]
    ours = [str(w.message) for w in caught if "for the test" in str(w.message)]
    assert sols[2].info["path"]["cold_retry"] and not sols[1].info["path"]["cold_retry"]
    if cold_fails:
        assert sols[2].status == "max_iter" and sols[2].info["path"]["warm_started"] is True
        assert sols[2].info["cold_retry"] == {"cold_status": "max_iter"}
        assert ours == ["warm solve failed for the test"]
    else:
        assert [s.status for s in sols] == ["optimal"] * 3 and ours == []
        assert sols[2].info["cold_retry"] == {"warm_status": "max_iter"}
        assert sols[2].info["path"]["warm_started"] is False          # the cold point
    calls.clear()
    fast_path(prob, lam=[1.0, 16.0], tol=1e-6)
    assert calls == [(1.0, False), (16.0, True)]


@pytest.mark.parametrize("fit_intercept", [False, True])
def test_path_svm_scales_the_warm_start_and_matches_cold_solves(fit_intercept, monkeypatch):
    """The SVM path starts each point from the previous dual times C_new / C_old (in the
    new box, the intercept's equality kept), and every point is the cold solve's, certified,
    over the papers' grid 2^0 .. 2^20."""
    import importlib

    fp = importlib.import_module("fast.path")     # the module (fast.path is also the function)
    X, y = _data(m=150, d=4, seed=15)
    X = (X - X.min(0)) / (X.max(0) - X.min(0))                    # [0, 1] features
    grid = [2.0 ** k for k in range(0, 21, 4)]
    prob = rm.SVM(X, y, C=1.0, fit_intercept=fit_intercept)
    starts = []
    real = fp._scaled_start
    monkeypatch.setattr(fp, "_scaled_start", lambda prev, var, a, b:
                        starts.append((prev, a, b)) or real(prev, var, a, b))
    sols = fast_path(prob, C=grid)
    assert [(a, b) for _, a, b in starts] == list(zip(grid[:-1], grid[1:]))
    for prev, a, b in starts:
        st = real(prev, "alpha", a, b)
        alpha = st.variables["alpha"]
        assert np.array_equal(alpha, np.clip(prev.variables["alpha"] * (b / a), 0.0, b))
        assert np.all(alpha >= 0.0) and np.all(alpha <= b)
        if fit_intercept:
            assert abs(y @ alpha) <= 1e-9 * (1.0 + b * len(y))
    for C, sol in zip(grid, sols):
        p = rm.SVM(X, y, C=C, fit_intercept=fit_intercept)
        assert sol.status == "optimal"
        assert p.certify(sol, reference=False).ok
        cold = fast.solve(p)
        assert abs(cold.objective - sol.objective) <= 1e-6 * (1 + abs(cold.objective))


@pytest.mark.parametrize("family,param,var", [("LDM", "C", "beta"), ("ODML", "lam", "alpha")])
def test_path_ldm_odml_scale_the_warm_start(family, param, var):
    """LDM's box [0, C] and ODML's [0, lam/m] grow linearly with the path's parameter: each
    point starts from the previous dual times v_new / v_old, and every point certifies along
    the papers' grid (RBF; on KEEL spambase m = 3,000 this took LDM from 5/11 to 10/11
    points certified)."""
    import importlib

    fp = importlib.import_module("fast.path")
    X, y = _data(m=120, d=4, seed=16)
    X = (X - X.min(0)) / (X.max(0) - X.min(0))
    grid = [2.0 ** k for k in range(0, 21, 5)]
    kern = rm.kernels.RBF(gamma=0.25)
    prob = (rm.LDM(X, y, C=1.0, lam1=0.25, lam2=0.25, kernel=kern) if family == "LDM"
            else rm.ODML(X, y, lam=1.0, mu1=0.5, mu2=0.5, kernel=kern))
    starts = []
    real = fp._scaled_start
    try:
        fp._scaled_start = lambda prev, v, a, b: starts.append((v, a, b)) or real(prev, v, a, b)
        sols = fast_path(prob, **{param: grid})
    finally:
        fp._scaled_start = real
    assert starts == [(var, a, b) for a, b in zip(grid[:-1], grid[1:])]
    for v, sol in zip(grid, sols):
        assert sol.status == "optimal"
        assert sol.info["path"]["value"] == v
    for sol in sols:
        p = sol.info["path"]
        assert p["warm_started"] == (p["rank"] > 0)


# ---------------------------------------------------------------------------------------
# no silent wrong answer along a path, at every scale
# ---------------------------------------------------------------------------------------
_CI = bool(os.environ.get("CI"))
#: every family fast.path supports, as strategies.make_problem names them
PATH_FAMILIES = ("SVM", "SVM+b", "ODML", "LDM", "ODM", "SVMm")
HONEST = {"optimal", "inaccurate", "max_iter", "stalled"}


def _path_recorded(prob, grid, **kw):
    """``fast.path(prob, **grid, **kw)`` with every solve of the path recorded: the list of
    ``(problem, Solution, ConvergenceWarnings issued by that solve)`` and the path's result
    (``fast.solve`` is looked up at call time by the path, so it is wrapped here)."""
    records = []
    real = fast.solve

    def recording(p, **opts):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            sol = real(p, **opts)
        records.append((p, sol, [w for w in caught
                                 if issubclass(w.category, ConvergenceWarning)]))
        return sol
    fast.solve = recording
    try:
        sols = fast_path(prob, **kw, **grid)
    except SolverError:            # an honest refusal (a factorisation failed at this scale)
        sols = None
    finally:
        fast.solve = real
    return records, sols


def _assert_path_trusted(prob, name, values, records, sols, certified):
    """The trust property at every point of a path: ``optimal`` certifies against a problem
    built from scratch (not the path's), anything else is an honest status that warned; the
    path's own certificate (``certify=True``) agrees."""
    if sols is not None:                                 # (None: a SolverError)
        assert len(sols) == len(values)
        for v, sol in zip(values, sols):
            assert sol.info["path"]["value"] == v
        # a duplicate is not re-solved; a point with status "error" (a SolverError) has no
        # record, a warm start that failed was solved again cold (fast.path.COLD_RETRY)
        distinct = {v: sol for v, sol in zip(values, sols)}.values()
        n_error = sum(sol.status == "error" for sol in distinct)
        n_retry = sum(bool(sol.info["path"].get("cold_retry")) for sol in distinct)
        assert len(records) == len(set(values)) - n_error + n_retry
    for p, sol, warned in records:
        v = getattr(p, name)
        assert sol.status in HONEST, (v, sol.status)
        fresh = with_params(p)                           # its own workspace, Gram, map
        cert = fresh.certify(sol, reference=False)
        if sol.status == "optimal":
            assert cert.ok, f"silent wrong answer at {name}={v:g}: 'optimal' but\n{cert}"
        else:
            assert warned, f"{name}={v:g}: status {sol.status!r} without a ConvergenceWarning"
        if certified and sols is not None and any(sol is s for s in sols):
            # (a warm solve replaced by its cold retry is not the path's point: no certificate)
            assert sol.info["certificate"].ok == cert.ok, (v, sol.info["certificate"], cert)


@pytest.mark.parametrize("family", PATH_FAMILIES)
@given(seed=st.integers(0, 2**31 - 1), rescale=st.sampled_from([1.0, 1.0, 1e-3, 1e3]),
       ks=st.lists(st.integers(-4, 19), min_size=1, max_size=4, unique=True),
       weakest=st.booleans(), certify=st.booleans())
@settings(max_examples=2 if _CI else 10)
def test_path_optimal_means_certified_at_every_scale(family, seed, rescale, ks, weakest,
                                                      certify):
    """Every point of ``fast.path`` over a grid of 2^-4 .. 2^20 (2^20 itself in half the
    draws; each value once: a repeated value is refused), on :func:`strategies.make_problem`'s problems (features
    times 10^U(-3, 3), raw features with polynomial kernels so that Gram entries reach 1e8
    and beyond, near-duplicate points), their features times 1e-3 or 1e3 in half the draws
    (10^-6 .. 10^6 overall): ``optimal`` certifies; otherwise the status says so
    with a ConvergenceWarning of that very solve. The warm starts (scaled duals of SVM /
    LDM / ODML, TRON's w, the SMO's variables) and the cached Woodbury factor of LDM / ODML
    are what is under test: each point is certified against a problem built from scratch."""
    prob, desc = make_problem(family, seed)
    if rescale != 1.0:                  # features at 10^U(-6, 6) overall
        prob = with_params(prob, X=prob.X * rescale)
    name = PATH_PARAMS[prob.family]
    values = [2.0 ** k for k in ks] + ([2.0 ** 20] if weakest else [])
    note(f"{desc}, features x {rescale:g}, {name}={values}, certify={certify}")
    records, sols = _path_recorded(prob, {name: values}, random_state=0, certify=certify)
    _assert_path_trusted(prob, name, values, records, sols, certify)


@pytest.mark.parametrize("seed, ks", [(7525, (0, -1, 9)), (1919, (-1, 19))])
def test_path_point_at_the_round_off_of_a_cubic_raw_gram(seed, ks):
    """Two examples hypothesis found for test_path_optimal_means_certified_at_every_scale:
    raw features x50, cubic kernel (Gram entries 1e9 - 1e10), SVM with intercept,
    C = 512 / 2^19, objectives 7.5e-3 / 3.4e-5 with the unit capped at 1. The self-check's certificate (the path's problem, its Gram built: K coef
    by one matmul) said 9.5e-7 / 8.5e-7 where a problem built afresh said 1.7e-6 / 1.01e-6
    (K coef by kernel blocks over the non-zeros of coef, 2.3e-13 apart, times C = 5e5).
    ``gram_times`` builds the Gram afresh (not kept) up to AUTO_REFERENCE_MAX_M points, so
    the two agree to the bit, and the point the path calls optimal certifies on a fresh
    problem. What remains true: these gaps lie within the round-off of evaluating P of the
    tolerance (the certificate's small-objective note says so); an evaluation summed in
    another order can land on the other side of 1e-6."""
    prob, _ = make_problem("SVM+b", seed)
    name = PATH_PARAMS[prob.family]
    values = [2.0 ** k for k in ks]
    records, sols = _path_recorded(prob, {name: values}, random_state=0, certify=False)
    _assert_path_trusted(prob, name, values, records, sols, False)


# ---------------------------------------------------------------------------------------
# the Woodbury cache of LDM / ODML paths (fast.odml.woodbury_data) at extreme scale
# ---------------------------------------------------------------------------------------
def _raw_poly(seed, m=40, d=3, scale=50.0):
    """Raw features times ``scale`` with the quadratic kernel (gamma 1, coef0 1): Gram
    entries up to ~1e8 (the regime "raw features, lambda of 2^20")."""
    rng = np.random.default_rng(seed)
    X = scale * rng.normal(size=(m, d))
    y = np.where(X[:, 0] + 0.5 * scale * rng.normal(size=m) > 0, 1.0, -1.0)
    y[0], y[-1] = 1.0, -1.0
    return X, y, rm.kernels.Polynomial(2, 1.0, 1.0)


def _quiet(fn, *a, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return fn(*a, **kw)


@pytest.mark.parametrize("family,param,other,var", [
    ("LDM", "C", {"lam1": 2.0 ** -2, "lam2": 2.0 ** -2}, "beta"),
    ("ODML", "lam", {"mu1": 1.0, "mu2": 1.0}, "alpha")])
@pytest.mark.parametrize("method", ["smo", "dcd"])
def test_woodbury_cache_is_a_cold_solve_at_extreme_scale(family, param, other, var, method,
                                                         monkeypatch):
    """Gram entries ~1e8, the parameter up to 2^20: each point of the path (H and its
    factor built once, then taken from the cache) is, bit for bit, the solve of the same
    problem from the same warm start with the cache emptied (H and the factor rebuilt from
    the Gram); and each point is trusted (optimal certifies, else a warning)."""
    import importlib

    from fast import odml as fo

    fp = importlib.import_module("fast.path")
    X, y, kern = _raw_poly(3, m=24)
    cls = getattr(rm, family)
    prob = cls(X, y, kernel=kern, **{param: 1.0}, **other)
    assert np.abs(prob.gram).max() > 1e8
    grid = [1.0, 2.0 ** 10, 2.0 ** 20]
    Hs = []
    real = fo.woodbury_data

    def recorded(*a):
        out = real(*a)
        Hs.append(out[0])
        return out
    monkeypatch.setattr(fo, "woodbury_data", recorded)
    records, sols = _path_recorded(prob, {param: grid}, method=method, random_state=0)
    assert len(Hs) >= len(grid) and all(H is Hs[0] for H in Hs)  # built once for the path
    _assert_path_trusted(prob, param, grid, records, sols, False)
    prev = prev_v = None
    kept = [(p, sol) for p, sol, _ in records if any(sol is s for s in sols)]
    for (p, sol), v in zip(kept, grid):
        # (a point whose warm start failed and whose cold retry was kept started from zero)
        cold_kept = sol.info["path"]["cold_retry"] and not sol.info["path"]["warm_started"]
        start = (None if prev is None or cold_kept
                 else fp._scaled_start(prev, var, prev_v, v))
        cold = _quiet(fast.solve, p, method=method, random_state=0, warm_start=start,
                      workspace=rm.Workspace())                  # nothing kept from the path
        assert cold.status == sol.status
        np.testing.assert_array_equal(cold.variables[var], sol.variables[var])
        np.testing.assert_array_equal(cold.coef, sol.coef)
        assert Hs[-1] is not Hs[0]                               # rebuilt, not cached
        np.testing.assert_array_equal(Hs[-1], Hs[0])
        prev, prev_v = sol, v


def test_woodbury_cache_never_hands_one_problem_anothers_factor():
    """Problems of equal shapes, interleaved: another Gram (other data; the same data under
    another kernel), the same Gram with other labels or another mu1. Each solve is, bit for
    bit, its solve from an empty cache."""
    from fast import odml as fo

    X1, y1, k = _raw_poly(5, m=20)
    X2, y2, _ = _raw_poly(6, m=20)
    G1 = rm.LDM(X1, y1, kernel=k).gram
    probs = [rm.LDM(X1, y1, C=4.0, lam1=0.25, lam2=0.25, kernel=k),
             rm.LDM(X2, y2, C=4.0, lam1=0.25, lam2=0.25, kernel=k),
             rm.LDM(X1, y1, C=4.0, lam1=0.25, lam2=0.25, kernel=rm.kernels.RBF(1e-4)),
             rm.LDM(X1, -y1, C=4.0, lam1=0.25, lam2=0.25, kernel=k),
             rm.LDM(X1, y1, C=4.0, lam1=4.0, lam2=0.25, kernel=k),
             rm.ODML(X1, y1, lam=20 * 4.0, mu1=0.5, mu2=0.25, kernel=k)]  # = probs[0]
    ws = rm.Workspace()                                   # shared by the interleaved solves
    cold = []
    for p in probs:
        cold.append(_quiet(fast.solve, p, random_state=0, workspace=rm.Workspace()))
    for order in (range(len(probs)), reversed(range(len(probs))), [0, 1, 0, 3, 0, 4, 5, 2]):
        for i in order:
            sol = _quiet(fast.solve, probs[i], random_state=0, workspace=ws)  # as left
            np.testing.assert_array_equal(sol.coef, cold[i].coef)
            assert sol.status == cold[i].status
    # ODML(lam = m C, mu1 = 2 lam1, mu2 = lam2) is LDM(C, lam1, lam2): the same key, the
    # same factor, taken from the workspace
    from refmodels.workspace import using

    with using(ws):
        H0, _ = fo.woodbury_data(G1, y1, 2.0 * 0.5 / 20)
        assert fo.woodbury_data(G1, y1, 2.0 * (2.0 * 0.25) / 20)[0] is H0


def test_woodbury_data_in_threads_each_get_their_own_gram():
    """fast.cv's paths may run in threads (joblib's threading or Dask backend) sharing one
    workspace: the Woodbury entry is one value ``(H, L)`` stored and read whole, so each
    thread gets its own Gram's ``H`` and solve, whatever the interleaving."""
    from concurrent.futures import ThreadPoolExecutor

    from fast import odml as fo
    from refmodels.workspace import using

    X1, y, k = _raw_poly(7, m=30)
    grams = [k.gram(X1), k.gram(X1[::-1].copy()), k.gram(X1[::2].repeat(2, axis=0))]
    c, u = 0.05, np.linspace(-1.0, 1.0, 30)
    alone = [(fo.woodbury_data(G, y, c)[0], fo.woodbury_data(G, y, c)[1](u)) for G in grams]
    ws = rm.Workspace()

    def one(i):
        with using(ws):
            H, solve = fo.woodbury_data(grams[i % 3], y, c)
            return i % 3, H.copy(), solve(u)

    with ThreadPoolExecutor(4) as pool:
        for i, H, x in pool.map(one, range(24)):
            np.testing.assert_array_equal(H, alone[i][0])
            np.testing.assert_array_equal(x, alone[i][1])


@pytest.mark.parametrize("family,seed,rescale,grid", [
    ("SVM", 16153, 1.0, [1.0, 2.0 ** 20]),      # features ~70, RBF Gram = I, C = 2^20
    ("ODM", 5685463, 1e3, [4.0])])              # features ~7e4, a cold solve at lam = 4
def test_rbf_raw_features_optimal_certifies(family, seed, rescale, grid):
    """Found by test_path_optimal_means_certified_at_every_scale (a cold solve failed
    alike): ``optimal`` with the certificate failing by 1.1e-6 / 1.3e-6. On raw features the
    RBF entries near 1 (a point and itself, near duplicates) carried the rounding of
    ``||x||^2 + ||z||^2 - 2 x^T z`` (~eps ||x||^2: features ~70 gave k(x, x) = 1 - 6.6e-12,
    ~7e4 gave 1 - 7.7e-6) and fast's rows and refmodels' Gram rounded differently; both
    layers now sum tiny squared distances from the differences (k(x, x) = 1 exactly)."""
    prob, _ = make_problem(family, seed)
    if rescale != 1.0:
        prob = with_params(prob, X=prob.X * rescale)
    name = PATH_PARAMS[prob.family]
    sols = fast_path(prob, random_state=0, **{name: grid})
    for v, sol in zip(grid, sols):
        p = with_params(prob, **{name: v})
        assert sol.status != "optimal" or p.certify(sol, reference=False).ok
