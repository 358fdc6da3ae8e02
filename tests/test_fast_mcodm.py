"""Fast mcODM (fast/mcodm.py, fast/_mcodm_block.py) against the reference (refmodels/mcodm.py).

SPEC §5; seed 002 Algs. 3–4, eqs. 20–24, 37–41. The relaxed QP against the reference and
its certificate, CSR = dense, the warm start from its own solution and the common bad input:
tests/test_contract.py.
"""
import itertools
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.exceptions import ConvergenceWarning

import fast
import refmodels as rm
from contract import rel, solve_trusted
from fast._mcodm_block import block_objective, solve_block
from refmodels.derive.mcodm import mcodm_block_alg4_printed   # the printed Alg. 4
from strategies import drawn, log_uniform, mcodm_problem as make_problem, \
    relaxed_mcodm_problems as relaxed_problems


# ---------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------
def block_H(A, D, E, k, y):
    H = np.zeros((k + 1, k + 1))
    H[np.arange(k), np.arange(k)] = A
    H[y, y] = D
    H[k, k] = E
    H[y, k] = H[k, y] = -A
    return H


def block_by_enumeration(A, B, D, E, F, y):
    """Generic exact QP solver for eq. 24 (A > 0): try every active set of the k
    inequalities, solve its KKT system, keep the one that is primal and dual feasible."""
    k = B.size
    n = k + 1
    H = block_H(A, D, E, k, y)
    q = np.concatenate([B, [F]])
    G = []
    for l in range(k):
        if l != y:
            e = np.zeros(n)
            e[l] = 1.0
            G.append(e)
    e = np.zeros(n)
    e[k] = -1.0
    G.append(e)
    G = np.array(G)
    aeq = np.r_[np.ones(k), 0.0]
    for r in range(len(G) + 1):
        for S in itertools.combinations(range(len(G)), r):
            C = np.vstack([aeq] + [G[s] for s in S])
            K = np.block([[H, C.T], [C, np.zeros((len(C), len(C)))]])
            try:
                sol = np.linalg.solve(K, np.concatenate([-q, np.zeros(len(C))]))
            except np.linalg.LinAlgError:
                continue
            z, mult = sol[:n], sol[n + 1:]
            tol = 1e-11 * (1 + np.max(np.abs(z)))
            if np.all(G @ z <= tol) and np.all(mult >= -1e-11 * (1 + np.max(np.abs(sol)))):
                return z[:k], z[k]
    raise AssertionError("no KKT point found")


def block_by_cvxpy(A, B, D, E, F, y):
    import cvxpy as cp

    k = B.size
    H = block_H(A, D, E, k, y)
    q = np.concatenate([B, [F]])
    z = cp.Variable(k + 1)
    off = np.flatnonzero(np.arange(k) != y)
    prob = cp.Problem(cp.Minimize(0.5 * cp.quad_form(z, cp.psd_wrap(H)) + q @ z),
                      [cp.sum(z[:k]) == 0, z[off] <= 0, z[k] >= 0])
    prob.solve(solver="CLARABEL")
    return prob.value


# ---------------------------------------------------------------------------------------
# the block sub-solver (eq. 24, eqs. 37-41)
# ---------------------------------------------------------------------------------------
def test_block_solver_vs_generic_qp():
    rng = np.random.default_rng(12345)
    n_case = {"beta=0": 0, "beta>0": 0, "A=0": 0, "ties": 0, "k=2": 0}
    for t in range(300):
        k = int(rng.integers(2, 6))
        y = int(rng.integers(k))
        A = 0.0 if t % 10 == 0 else float(rng.exponential() * 10 ** rng.uniform(-2, 2))
        D = A + 10 ** rng.uniform(-3, 2)
        E = A + 10 ** rng.uniform(-3, 2)
        B = rng.normal(size=k)
        F = float(rng.normal() * 2)
        if t % 3 == 0:                      # ties among the B_l (with B_y too, sometimes)
            B[rng.integers(k)] = B[(y + 1) % k]
            n_case["ties"] += 1
        if t % 7 == 0 and k > 2:
            B[:] = B[0]
        alpha, beta = solve_block(A, B, D, E, F, y)
        # feasibility (eq. 24's constraints)
        assert abs(alpha.sum()) <= 1e-12 * (1 + np.abs(alpha).max())
        assert np.all(np.delete(alpha, y) <= 0) and beta >= 0
        val = block_objective(alpha, beta, A, B, D, E, F, y)
        ref_val = block_by_cvxpy(A, B, D, E, F, y)
        assert val <= ref_val + 1e-8 * (1 + abs(ref_val))
        assert rel(val, ref_val) <= 1e-7
        if A > 0:
            za, zb = block_by_enumeration(A, B, D, E, F, y)
            scale = 1 + np.max(np.abs(np.r_[za, zb]))
            assert np.max(np.abs(np.r_[alpha - za, beta - zb])) <= 1e-8 * scale
            assert rel(block_objective(za, zb, A, B, D, E, F, y), val) <= 1e-10
        else:
            n_case["A=0"] += 1
        n_case["beta>0" if beta > 0 else "beta=0"] += 1
        n_case["k=2"] += k == 2
    assert all(v >= 10 for v in n_case.values()), n_case


def test_block_solver_case_test_matches_both_sides():
    """At the break point both cases give the same point (the root is continuous)."""
    rng = np.random.default_rng(3)
    for _ in range(50):
        k, y = 4, 1
        A, D, E = 1.3, 2.0, 3.0
        B = rng.normal(size=k)
        # F chosen so that the case-1 root sits at the break point A(nu - B_y) = D F
        a0, _ = solve_block(A, B, D, E, 1e6, y)           # huge F: case 1 surely
        nu = B[y] + D * a0[y]
        F = A * (nu - B[y]) / D
        for dF in (-1e-9, 1e-9):
            a, b = solve_block(A, B, D, E, F + dF, y)
            za, zb = block_by_enumeration(A, B, D, E, F + dF, y)
            assert np.allclose(np.r_[a, b], np.r_[za, zb], atol=1e-8)


def test_alg4_as_printed_is_wrong_erratum():
    """SPEC §5's erratum: the printed Alg. 4 misses the division of nu."""
    rng = np.random.default_rng(0)
    wrong = 0
    for _ in range(30):
        k, y = 3, 0
        A = 1.0 + rng.random()
        B, D, E, F = rng.normal(size=k), A + 1.0, A + 2.0, rng.normal()
        a, b = mcodm_block_alg4_printed(A, B, D, E, F, y)
        za, zb = block_by_enumeration(A, B, D, E, F, y)
        wrong += not np.allclose(np.r_[a, b], np.r_[za, zb], atol=1e-6)
    assert wrong >= 25


@pytest.mark.parametrize("kernel", ["linear", "rbf"])
def test_block_qp_is_eq23_restricted_to_block(kernel):
    """The change of eq. 23's objective when only block i moves equals the change of the
    block QP (eq. 24) with SPEC's (A, B, D, E, F)."""
    prob, rng = make_problem(1, m=12, d=3, k=4, kernel=kernel, lam=2.0, mu=0.7, theta=0.25)
    rp = prob.relaxed(rng.normal(size=prob.m))
    m, k, y, th = prob.m, prob.k, prob.y, prob.theta
    G = prob.gram

    def random_dual():
        a = -rng.exponential(size=(m, k))
        a[np.arange(m), y] = 0.0
        a[np.arange(m), y] = -a.sum(axis=1)
        return a, rng.exponential(size=m)

    for i in range(m):
        a0, b0 = random_dual()
        coef = a0 - prob.onehot * b0[:, None]
        A = G[i, i]
        g = G[i] @ coef - A * coef[i]              # sum_{j != i} k_ij coef[j, l]
        B = g + (1 - th)
        B[y[i]] = g[y[i]]
        aa = m * (1 - th) ** 2 / (2 * prob.lam)
        D, E = A + aa, A + aa / prob.mu
        F = rp.M[i] + 1 + th - g[y[i]]
        a1, b1 = a0.copy(), b0.copy()
        new_a, new_b = random_dual()
        a1[i], b1[i] = new_a[i], new_b[i]
        d23 = (-rp.dual_value({"alpha": a1, "beta": b1})) - (-rp.dual_value({"alpha": a0, "beta": b0}))
        dblk = (block_objective(a1[i], b1[i], A, B, D, E, F, y[i])
                - block_objective(a0[i], b0[i], A, B, D, E, F, y[i]))
        assert rel(dblk, d23) <= 1e-9
        # and the exact block minimiser does not increase eq. 23
        amin, bmin = solve_block(A, B, D, E, F, y[i])
        a2, b2 = a0.copy(), b0.copy()
        a2[i], b2[i] = amin, bmin
        assert -rp.dual_value({"alpha": a2, "beta": b2}) <= -rp.dual_value({"alpha": a1, "beta": b1}) + 1e-9


# ---------------------------------------------------------------------------------------
# relaxed QP: the linear path (fast vs reference: tests/test_contract.py)
# ---------------------------------------------------------------------------------------
@settings(max_examples=6)
@given(relaxed_problems(kernels=("linear",)))
def test_linear_path_equals_gram_path(rp):
    if not drawn(rp, 'scale').good:      # off the unit scale: the trust property (solve_trusted)
        solve_trusted(rp, drawn(rp, 'scale'),
                      lambda: fast.solve(rp, random_state=1, max_iter=300000, path="linear"),
                      lambda: fast.solve(rp, random_state=1, max_iter=300000, path="gram"))
        return
    s_lin = fast.solve(rp, random_state=1, max_iter=300000, path="linear")
    s_gram = fast.solve(rp, random_state=1, max_iter=300000, path="gram", with_W=True)
    assert s_lin.info["path"] == "linear" and s_gram.info["path"] == "gram"
    assert s_lin.objective == pytest.approx(s_gram.objective, rel=1e-9, abs=1e-12)
    W1, W2 = s_lin.variables["W"], s_gram.variables["W"]
    assert np.linalg.norm(W1 - W2) <= 1e-5 * max(1.0, np.linalg.norm(W1))


# ---------------------------------------------------------------------------------------
# outer loop (Alg. 3): fast vs reference, both from W = 0
# ---------------------------------------------------------------------------------------
@settings(max_examples=5)
@given(seed=st.integers(0, 2**32 - 1), k=st.integers(2, 4), m=st.integers(6, 18),
       kernel=st.sampled_from(["linear", "rbf", "poly"]), lam=log_uniform(0.05, 5.0),
       theta=st.floats(0.0, 0.8))
def test_outer_loop_fast_vs_reference(seed, k, m, kernel, lam, theta):
    prob, _ = make_problem(seed, m=max(m, k), d=3, k=k, kernel=kernel, lam=lam, mu=0.6,
                           theta=theta)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        ref = prob.solve(max_outer=30)
        sol = fast.solve(prob, random_state=0, max_iter=300000, max_outer=30)
    if ref.status != "optimal" or sol.status != "optimal":
        return          # the outer loop need not converge (non-convex); compare when both do
    W_ref, W_fast = ref.variables["W"], prob._W_of(sol)
    assert np.linalg.norm(W_fast - W_ref) <= 1e-4 * max(1.0, np.linalg.norm(W_ref))
    assert sol.n_iter == len(sol.info["changes"]) == len(sol.info["inner_iters"])
    assert sol.info["M"].shape == (prob.m,)
    cert = prob.certify(sol)
    assert cert.ok, cert.failing


def test_outer_loop_example_matches_reference():
    prob, _ = make_problem(4, m=20, d=3, k=3, kernel="rbf", lam=1.0, mu=0.5, theta=0.2)
    ref = prob.solve()
    sol = fast.solve(prob, random_state=0)
    assert ref.status == sol.status == "optimal"
    W_ref = ref.variables["W"]
    assert np.linalg.norm(prob._W_of(sol) - W_ref) <= 1e-6 * max(1.0, np.linalg.norm(W_ref))
    assert sol.info["mcodm_objective"] == pytest.approx(ref.info["mcodm_objective"], rel=1e-6)
    assert np.allclose(sol.info["M"], ref.info["M"], atol=1e-6)
    assert prob.certify(sol).ok


@pytest.mark.parametrize("seed", [0, 2, 3])
def test_accelerated_outer_loop_reaches_the_reference_fixed_point(seed):
    # lam = 20: the plain outer loop converges slowly (~40 rounds, each change of W ~0.9 of
    # the last); the Anderson steps (accelerate=True, the default) reach the reference's
    # stopping test (a round changing W by less than tol) in fewer rounds, at the same point.
    # fast.mcodm.solve_mcodm: the solver itself, without fast.solve's self-check and its
    # refinement
    from fast.mcodm import solve_mcodm as solve_outer

    prob, _ = make_problem(seed, m=24, d=3, k=3, kernel="linear", lam=20.0, mu=0.5, theta=0.2)
    ref = prob.solve(max_outer=200)
    acc = solve_outer(prob, random_state=0, max_outer=200)
    plain = solve_outer(prob, random_state=0, max_outer=200, accelerate=False)
    assert ref.status == acc.status == plain.status == "optimal"
    assert acc.info["accelerate"] is True and acc.info["extrapolated"] >= 1
    assert plain.info["accelerate"] is False and plain.info["extrapolated"] == 0
    assert plain.n_iter == ref.n_iter            # accelerate=False is the reference's loop
    assert acc.n_iter < plain.n_iter
    assert acc.info["changes"][-1] < acc.info["tol"]
    W_ref = ref.variables["W"]
    for sol in (acc, plain):
        assert np.linalg.norm(prob._W_of(sol) - W_ref) <= 1e-4 * max(1.0, np.linalg.norm(W_ref))
        assert prob.certify(sol).ok


def test_one_compiled_layout_for_both_paths():
    # the Gram path keeps its scores C-contiguous as the linear path does: the numba
    # functions that read them are compiled for one layout only
    from fast import _mcodm_bcd as B

    for kernel in ("linear", "rbf"):
        prob, _ = make_problem(1, m=15, kernel=kernel)
        fast.solve(prob, random_state=0)
    def arrays_of(t):                 # the arrays of a type, also inside named records
        if hasattr(t, "layout"):
            yield t
        for u in getattr(t, "types", ()):
            yield from arrays_of(u)

    for f in (B._bcd, B._stop, B._coef_dot, B._face_system):
        arrays = [a for sig in f.signatures for t in sig for a in arrays_of(t)]
        assert arrays and all(a.layout == "C" for a in arrays), (f.__name__, f.signatures)


# ---------------------------------------------------------------------------------------
# status, warnings, reproducibility, validation
# ---------------------------------------------------------------------------------------
def test_max_iter_status_and_warning():
    prob, rng = make_problem(2, m=25, d=3, k=3, kernel="rbf", lam=5.0)
    rp = prob.relaxed(rng.normal(size=prob.m))
    with pytest.warns(ConvergenceWarning, match="duality gap"):
        sol = fast.solve(rp, max_iter=1)
    assert sol.status == "max_iter" and sol.n_iter == 1
    assert sol.info["rel_gap"] > sol.info["tol"]
    with pytest.warns(ConvergenceWarning, match="max_outer=1"):
        sol = fast.solve(prob, max_outer=1)
    assert sol.status == "max_iter" and sol.n_iter == 1


def test_hard_case_reports_max_iter_honestly_without_polish_and_is_solved_with_it():
    """SPEC §5: BCD is slow for a rank-deficient Gram (poly kernel on one feature) and large
    lam; alone (``polish=False``, seed 002's method) it must say so. The polish solves it:
    the face's Hessian is singular there, and the whole relaxed QP goes to the dense active
    set (``_box_qp``), which follows the null space to the bounds and releases variables:
    certified, the reference's objective to 1e-9 relative, in few epochs."""
    prob, rng = make_problem(7, m=25, d=1, k=4, kernel="poly", lam=331.0, mu=4.65, theta=0.56)
    rp = prob.relaxed(rng.normal(size=prob.m))
    with pytest.warns(ConvergenceWarning):
        sol = fast.solve(rp, max_iter=2000, polish=False)
    assert sol.status == "max_iter"
    assert not rp.certify(sol, reference=False).ok
    sol = fast.solve(rp, max_iter=2000)
    assert sol.status == "optimal" and sol.n_iter < 2000 and sol.info["n_polish"] >= 1
    cert = rp.certify(sol)
    assert cert.ok, cert.failing
    assert sol.objective == pytest.approx(rp.solve().objective, rel=1e-9)


def test_reproducible_with_random_state():
    prob, rng = make_problem(5, m=20, d=3, k=4, kernel="rbf")
    rp = prob.relaxed(rng.normal(size=prob.m))
    s1 = fast.solve(rp, random_state=3, max_iter=5)
    s2 = fast.solve(rp, random_state=3, max_iter=5)
    s3 = fast.solve(rp, random_state=4, max_iter=5)
    assert np.array_equal(s1.coef, s2.coef)
    assert not np.array_equal(s1.coef, s3.coef)


def test_warm_start_from_reference():
    prob, rng = make_problem(6, m=20, d=3, k=3, kernel="poly")
    rp = prob.relaxed(rng.normal(size=prob.m))
    ref = rp.solve()
    sol = fast.solve(rp, warm_start=ref, random_state=0)
    cold = fast.solve(rp, random_state=0)
    assert sol.status == "optimal" and sol.n_iter < cold.n_iter
    assert sol.objective == pytest.approx(ref.objective, rel=1e-8)
    bad = rm.Solution(objective=0.0, coef=None, variables={"alpha": -ref.variables["alpha"],
                                                           "beta": ref.variables["beta"]})
    with pytest.raises(ValueError, match="warm_start"):
        fast.solve(rp, warm_start=bad)


@pytest.mark.parametrize("kwargs, match", [({"path": "cache"}, "path")])
def test_bad_arguments_relaxed(kwargs, match):
    prob, rng = make_problem(0, m=10)
    with pytest.raises(ValueError, match=match):
        fast.solve(prob.relaxed(np.zeros(prob.m)), **kwargs)


@pytest.mark.parametrize("kwargs, match", [
    ({"max_outer": 0}, "max_outer"), ({"max_outer": 1.5}, "max_outer"),
    ({"inner_tol": -1e-3}, "inner_tol"), ({"accelerate": 1}, "accelerate"),
])
def test_bad_arguments_outer(kwargs, match):
    prob, _ = make_problem(0, m=10)
    with pytest.raises(ValueError, match=match):
        fast.solve(prob, **kwargs)


def test_with_W_option():
    prob, rng = make_problem(9, m=12, kernel="rbf")
    rp = prob.relaxed(rng.normal(size=prob.m))
    s0 = fast.solve(rp, random_state=0, with_W=False)
    assert "W" not in s0.variables and rp.certify(s0).ok          # certified from coef
    s1 = fast.solve(rp, random_state=0, with_W=True)
    assert np.allclose(s1.variables["W"], prob.F.T @ s1.coef)
    s2 = fast.solve(rp, random_state=0)                              # F now cached: "auto" gives W
    assert "W" in s2.variables
    with pytest.raises(ValueError, match="with_W"):
        fast.solve(rp, with_W="yes")


def test_linear_path_needs_linear_kernel():
    prob, _ = make_problem(0, m=10, kernel="rbf")
    with pytest.raises(ValueError, match="path='linear'"):
        fast.solve(prob.relaxed(np.zeros(prob.m)), path="linear")


def test_zero_feature_vector_block():
    """A sample with phi(x_i) = 0 (A = 0) goes through the A = 0 branch."""
    prob, rng = make_problem(8, m=15, d=3, k=3, kernel="linear")
    X = prob.X.copy()
    X[3] = 0.0
    prob = rm.McODM(X, prob.y, lam=1.0, mu=0.5, theta=0.3)
    rp = prob.relaxed(rng.normal(size=prob.m))
    sol = fast.solve(rp, random_state=0)
    assert sol.status == "optimal"
    assert rp.certify(sol).ok


# ---------------------------------------------------------------------------------------
# the active-set Newton polish on the face of eq. 23 (fast/mcodm.py's module docstring)
# ---------------------------------------------------------------------------------------
def _random_face_point(prob, rng, p_free=0.5):
    """A feasible dual point of eq. 23 with a random face: each alpha_i^l (l != y_i) and
    beta_i is free (nonzero) with probability p_free."""
    m, k, y = prob.m, prob.k, prob.y
    a = -rng.exponential(size=(m, k)) * (rng.random((m, k)) < p_free)
    a[np.arange(m), y] = 0.0
    a[np.arange(m), y] = -a.sum(axis=1)
    b = rng.exponential(size=m) * (rng.random(m) < p_free)
    return a, b


@pytest.mark.parametrize("kernel", ["linear", "rbf", "poly"])
def test_face_system_is_eq23_on_the_face(kernel):
    """H and g of _face_system: eq. 23's objective along any move u of the free variables
    (alpha_i^{y_i} following the equality) changes by exactly g.u + u.H.u / 2."""
    from fast.mcodm import McDual, McParams, _face, _face_system

    prob, rng = make_problem(11, m=14, d=3, k=4, kernel=kernel, lam=3.0, mu=0.7, theta=0.25)
    rp = prob.relaxed(rng.normal(size=prob.m))
    y, G = prob.y, prob.gram
    a = prob.m * (1 - prob.theta) ** 2 / (2 * prob.lam)
    for _ in range(5):
        alpha, beta = _random_face_point(prob, rng)
        coef = alpha - prob.onehot * beta[:, None]
        S = G @ coef
        vi, vl = _face(alpha, beta, y)
        assert np.all(np.where(vl >= 0, alpha[vi, np.maximum(vl, 0)], -beta[vi]) < 0)
        assert vi.size == np.sum((alpha < 0) & (prob.onehot == 0)) + np.sum(beta > 0)
        H, g = _face_system(G, vi, vi, vl, y, rp.M, S, McDual(alpha, beta, coef), a,
                            McParams(rp.c, prob.mu, prob.theta))
        H = np.tril(H)
        H = H + np.tril(H, -1).T
        assert np.all(np.linalg.eigvalsh(H) >= -1e-9 * np.abs(H).max())

        def d23(a_, b_):
            return -rp.dual_value({"alpha": a_, "beta": b_})

        for _ in range(3):
            u = rng.normal(size=vi.size)
            a1, b1 = alpha.copy(), beta.copy()
            for v in range(vi.size):
                if vl[v] >= 0:
                    a1[vi[v], vl[v]] += u[v]
                else:
                    b1[vi[v]] += u[v]
            a1[np.arange(prob.m), y] = 0.0
            a1[np.arange(prob.m), y] = -a1.sum(axis=1)
            lhs = d23(a1, b1) - d23(alpha, beta)
            rhs = g @ u + 0.5 * u @ H @ u
            assert rel(rhs, lhs) <= 1e-9


def _face_newton_reference(H, g, x, is_alpha):
    """_face_newton's iteration with a fresh dense solve on each face (no downdate)."""
    x = x.copy()
    g = g.copy()
    act = list(range(g.size))
    steps = 0
    while act:
        A = np.array(act)
        d = np.linalg.solve(H[np.ix_(A, A)], -g[A])
        towards = np.where(is_alpha[A], d > 0, d < 0)
        with np.errstate(divide="ignore", invalid="ignore"):
            tv = np.where(towards, -x[A] / d, np.inf)
        b = int(np.argmin(tv))
        t = min(float(tv[b]), 1.0)
        x[A] += t * d
        g[A] *= 1 - t
        steps += 1
        if t >= 1.0:
            break
        x[A[b]] = 0.0
        act.remove(A[b])
    return x, steps


def test_face_newton_downdate_matches_dense_solves():
    """The Cholesky downdate (Givens) of _face_newton gives the iterates of fresh dense
    solves; the end point is feasible, lowers the quadratic and is stationary on its face."""
    from fast.mcodm import _face_newton

    rng = np.random.default_rng(21)
    n_blocked = 0
    for trial in range(40):
        n = int(rng.integers(1, 40))
        R = rng.normal(size=(n, n))
        H = R @ R.T + 10 ** rng.uniform(-3, 0) * np.eye(n)
        is_alpha = rng.random(n) < 0.7
        x0 = np.where(is_alpha, -1.0, 1.0) * rng.exponential(size=n)
        g = rng.normal(size=n) * 3
        x_ref, steps_ref = _face_newton_reference(H, g, x0, is_alpha)
        L = np.linalg.cholesky(H)
        L[np.triu_indices(n, 1)] = np.nan          # never read
        x = x0.copy()
        steps = _face_newton(np.ascontiguousarray(L), g.copy(), x, is_alpha)
        assert steps == steps_ref
        n_blocked += steps - 1
        assert np.allclose(x, x_ref, rtol=1e-8, atol=1e-10 * (1 + np.abs(x_ref).max()))
        assert np.all(x[is_alpha] <= 0) and np.all(x[~is_alpha] >= 0)

        def q(z):
            return g @ (z - x0) + 0.5 * (z - x0) @ H @ (z - x0)

        assert q(x) < 0
        free = x != 0
        grad = g + H @ (x - x0)
        if free.any():
            assert np.max(np.abs(grad[free])) <= 1e-8 * (1 + np.abs(g).max())
    assert n_blocked >= 20          # the downdate was exercised


@pytest.mark.parametrize("seed", [7118, 7129])
def test_raw_linear_features_are_solved_through_the_singular_face(seed):
    """The scale sweep's draws (``validation/sweep_scales.py --seed 7100``) where the fast
    solver stopped at ``max_iter`` and the reference certified: the linear kernel on raw
    features (scales 70 and 135, 2-3 features, Gram diagonals to 1.5e5), where the face's
    Hessian is singular and the coordinate descent crawls. Now optimal, certified, and
    the reference's objective to 1e-7 relative (Alg. 3 is a fixed-point iteration of a
    non-convex problem: both stop within its tolerance 1e-6 of the same fixed point)."""
    from strategies import make_problem as draw

    prob, desc = draw("McODM", seed)
    assert desc["kernel"] == "linear" and desc["scale"] > 50
    sol = fast.solve(prob, random_state=0)
    assert sol.status == "optimal"
    cert = prob.certify(sol, reference=False)
    assert cert.ok, cert.failing
    assert sol.objective == pytest.approx(prob.solve().objective, rel=1e-7)


@settings(max_examples=10)
@given(relaxed_problems())
def test_polish_on_and_off_reach_the_same_optimum(rp):
    if not drawn(rp, 'scale').good:      # off the unit scale: the trust property (solve_trusted)
        solve_trusted(rp, drawn(rp, 'scale'), lambda: fast.solve(rp, random_state=2, max_iter=300000),
                      lambda: fast.solve(rp, random_state=2, max_iter=300000, polish=False))
        return
    s_on = fast.solve(rp, random_state=2, max_iter=300000)
    s_off = fast.solve(rp, random_state=2, max_iter=300000, polish=False)
    assert s_on.status == s_off.status == "optimal"
    assert s_on.info["polish"] is True and s_off.info["polish"] is False
    assert s_off.info["n_polish"] == 0
    assert s_on.objective == pytest.approx(s_off.objective, rel=1e-9, abs=1e-12)
    for s in (s_on, s_off):
        cert = rp.certify(s)
        assert cert.ok, cert.failing


@pytest.mark.parametrize("kernel, path", [("rbf", "gram"), ("linear", "linear"),
                                          ("linear", "gram")])
def test_polish_is_exercised_and_certifies(kernel, path):
    """A problem where the BCD's tail is long: the polish takes steps, the point certifies
    and agrees with the reference and with BCD alone."""
    prob, rng = make_problem(12, m=60, d=4, k=4, kernel=kernel, lam=10.0, mu=0.8, theta=0.2)
    rp = prob.relaxed(rng.normal(size=prob.m))
    s_on = fast.solve(rp, random_state=0, path=path)
    s_off = fast.solve(rp, random_state=0, path=path, polish=False)
    assert s_on.status == s_off.status == "optimal"
    assert s_on.info["n_polish"] >= 1
    assert s_on.objective == pytest.approx(s_off.objective, rel=1e-9)
    assert s_on.objective == pytest.approx(rp.reference_solution().objective, rel=1e-6)
    assert rp.certify(s_on).ok
    # the outer loop reports the Newton steps per round
    sol = fast.solve(prob, random_state=0, path=path)
    assert len(sol.info["inner_polish"]) == sol.n_iter and sum(sol.info["inner_polish"]) >= 1
    assert prob.certify(sol).ok
    off = fast.solve(prob, random_state=0, path=path, polish=False)
    assert sum(off.info["inner_polish"]) == 0
    W_on, W_off = prob._W_of(sol), prob._W_of(off)
    assert np.linalg.norm(W_on - W_off) <= 1e-6 * max(1.0, np.linalg.norm(W_off))


def test_bad_polish_option():
    prob, _ = make_problem(0, m=10)
    with pytest.raises(ValueError, match="polish"):
        fast.solve(prob.relaxed(np.zeros(prob.m)), polish="yes")
    with pytest.raises(ValueError, match="polish"):
        fast.solve(prob, polish=1)


@pytest.mark.parametrize("kernel", ["rbf", "poly"])
def test_relaxed_qp_of_a_parent_is_checked_at_the_returned_point(kernel):
    """A relaxed QP built by ``McODM.relaxed(M)`` keeps its Gram in the parent's cache: its
    fast solve is checked by the full certificate at the returned point (the self-check
    names it), not by the BCD's own gap and KKT residuals of its state, which is what it
    was judged by on well-scaled data before."""
    prob, rng = make_problem(5, m=40, d=3, k=3, kernel=kernel, lam=4.0, mu=0.8, theta=0.2)
    rp = prob.relaxed(rng.normal(size=prob.m))
    sol = fast.solve(rp, random_state=0)
    assert sol.status == "optimal"
    checked = sol.info["self_check"]
    assert "residuals" in checked, checked
    assert any(k.startswith("certificate (") for k in checked["residuals"]), checked
    assert rp.certify(sol).ok
