"""Fast solvers of mcODM (SPEC §5; seed 002 §4, Algs. 3–4, §4.1–4.2, eqs. 20–24, 37–41).

**Relaxed QP** (:class:`refmodels.mcodm.RelaxedMcODM`, eq. 20, for a fixed ``M``), with
``c = lam / (m (1 - theta)^2)``:

.. math::

    \\min_{W,\\xi,\\epsilon}\\ \\tfrac12\\sum_l\\|w_l\\|^2 + c\\sum_i(\\xi_i^2+\\mu\\epsilon_i^2)
    \\ \\text{s.t.}\\ s_{y_i}(x_i)-s_l(x_i)\\ge 1-\\theta-\\xi_i\\ (l\\ne y_i),\\quad
    s_{y_i}(x_i)-M_i\\le 1+\\theta+\\epsilon_i,

solved through its dual (eq. 23, ``M_i`` inside the sum) by **block coordinate descent over
samples** (seed 002 §4.1): block ``i`` holds ``alpha_i^1..alpha_i^k, beta_i`` and is solved
exactly by the sorting method of :mod:`fast._mcodm_block` (eq. 24, eqs. 37–41, with SPEC's
erratum to Alg. 4). The blocks are visited in a random permutation per epoch
(``random_state``). ``coef[i, l] = alpha_i^l - delta_{y_i l} beta_i`` (eq. 22).

Two paths:

* ``gram`` (any kernel): the Gram ``G`` is computed once; the scores
  ``S[j, l] = s_l(x_j) = sum_i coef[i, l] G[i, j]`` are maintained: a block update changes
  row ``i`` of ``coef`` and so every score by ``G[:, i] * delta`` (O(mk));
* ``linear`` (linear kernel; seed 002 §4.2): ``W`` (d x k) is stored explicitly,
  ``s_l(x_i) = w_l^T x_i`` costs O(d) and
  ``B_l = w_l^T x_i - A coef[i, l] (+ 1 - theta for l != y_i)`` O(kd) per block (SPEC's
  erratum: §4.2 drops the ``+ (1 - theta)``); an update costs O(kd).

Stopping: the relative duality gap ``(P - D_max)/(1 + |P|) <= tol`` with ``P`` eq. 20's
objective at ``W`` (smallest feasible slacks) and ``D_max`` minus eq. 23's objective at
``(alpha, beta)``, both computed in O(mk) from the scores (``||W||^2 = sum coef * S``).
The gap is checked every epoch on the maintained scores and confirmed on freshly
recomputed ones (``G @ coef`` resp. ``X @ (X^T coef)``). Since ``P`` is 1-strongly convex in
``W``, ``||W - W*||^2 <= 2 (P - D_max)``. The gap bounds the first-order residuals only
quadratically (``||2c xi - alpha^y||^2 <= 4c (P - D_max)``), so the stop also requires the
scaled slack-stationarity and complementarity residuals of the certificate to be below
``kkt_tol`` (default 1e-9); primal/dual feasibility and stationarity in ``W`` hold exactly
by construction.

**Outer loop** (:class:`refmodels.mcodm.McODM`, Alg. 3) exactly as the reference
``McODM.solve``: start from ``W = 0``; each round sets ``M_i = max_{l != y_i} s_l(x_i)``
from the current iterate and solves the relaxed QP at that ``M`` (warm-started from the
previous round's dual, which stays feasible: the dual's constraints do not involve ``M``);
stop when ``||W_new - W||_F / max(1, ||W_new||_F) < tol`` or after ``max_outer`` rounds.
Norms of ``W`` are computed from the Gram (``||W||^2 = sum coef * (G coef)``) on the
kernel path, never through a feature map.
"""
from __future__ import annotations

import time
import warnings

import numpy as np
import scipy.sparse as sp
from numba import njit

from refmodels.solution import Solution

from . import _dcd
from ._mcodm_block import block_core

METHODS = ("bcd",)
#: default relative duality gap of a relaxed solve (tight enough for ``certify`` at 1e-6)
DEFAULT_TOL = 1e-12
#: default cap on the scaled first-order KKT residuals (slack stationarity, complementarity)
#: checked with the gap: the gap bounds them only quadratically (``||2c xi - alpha^y||^2 <=
#: 4c gap``), so a small gap alone does not certify them at 1e-6 when ``c`` is large.
DEFAULT_KKT_TOL = 1e-9
#: default epoch cap of one relaxed solve
DEFAULT_MAX_ITER = 20000
#: outer loop defaults (as the reference ``McODM.solve``)
DEFAULT_OUTER_TOL = 1e-6
DEFAULT_MAX_OUTER = 50


def _has_F(prob):
    """Whether the problem (or its parent) already holds its empirical kernel map."""
    cache = getattr(getattr(prob, "_parent", None), "_cache", None) or getattr(prob, "_cache", {})
    return "F" in cache or "F" in getattr(prob, "_cache", {})


# ---------------------------------------------------------------------------------------
# numba kernels
# ---------------------------------------------------------------------------------------
@njit(cache=True)
def _gap(S, coef, alpha, beta, y, M, c, mu, theta, wn2):
    """``(P, D_max)``: eq. 20 at the scores ``S`` (``||W||^2 = wn2``), minus eq. 23 at the dual."""
    m, k = S.shape
    sl = 0.0
    dq = 0.0
    lin = 0.0
    for i in range(m):
        yi = y[i]
        sy = S[i, yi]
        so = -np.inf
        for l in range(k):
            if l != yi:
                if S[i, l] > so:
                    so = S[i, l]
                lin += (1.0 - theta) * alpha[i, l]
        xi = 1.0 - theta - (sy - so)
        if xi < 0.0:
            xi = 0.0
        ep = sy - M[i] - 1.0 - theta
        if ep < 0.0:
            ep = 0.0
        sl += xi * xi + mu * ep * ep
        ay = alpha[i, yi]
        dq += ay * ay / (4.0 * c) + beta[i] * beta[i] / (4.0 * c * mu)
        lin += (M[i] + 1.0 + theta) * beta[i]
    P = 0.5 * wn2 + c * sl
    Dmin = 0.5 * wn2 + dq + lin
    return P, -Dmin


@njit(cache=True)
def _kkt(S, alpha, beta, y, M, c, mu, theta, P):
    """The first-order KKT residuals that the gap bounds only quadratically, scaled as
    :meth:`refmodels.mcodm.RelaxedMcODM.kkt_residuals` does: stationarity in the slacks
    (eq. 21, ``2c xi_i = alpha_i^{y_i}``, ``2 c mu eps_i = beta_i``) and complementarity.
    (Primal and dual feasibility and stationarity in ``W`` hold exactly by construction.)"""
    m, k = S.shape
    r2 = 0.0
    n_ab = 0.0
    n_xe = 0.0
    comp = 0.0
    for i in range(m):
        yi = y[i]
        sy = S[i, yi]
        so = -np.inf
        for l in range(k):
            if l != yi and S[i, l] > so:
                so = S[i, l]
        xi = 1.0 - theta - (sy - so)
        if xi < 0.0:
            xi = 0.0
        ep = sy - M[i] - 1.0 - theta
        if ep < 0.0:
            ep = 0.0
        ay = alpha[i, yi]
        r2 += (2.0 * c * xi - ay) ** 2 + (2.0 * c * mu * ep - beta[i]) ** 2
        n_ab += ay * ay + beta[i] * beta[i]
        n_xe += xi * xi + mu * mu * ep * ep
        for l in range(k):
            if l != yi:
                v = abs(alpha[i, l] * (sy - S[i, l] - (1.0 - theta) + xi))
                if v > comp:
                    comp = v
        v = abs(beta[i] * (1.0 + theta + ep - sy + M[i]))
        if v > comp:
            comp = v
    stat = np.sqrt(r2) / (1.0 + np.sqrt(n_ab) + 2.0 * c * np.sqrt(n_xe))
    comp = comp / (1.0 + abs(P))
    return stat if stat > comp else comp


@njit(cache=True)
def _stop(S, coef, alpha, beta, y, M, c, mu, theta, wn2, tol, kkt_tol):
    """``(P, D_max, kkt, done)``: done iff relative gap <= tol and KKT residual <= kkt_tol."""
    P, Dm = _gap(S, coef, alpha, beta, y, M, c, mu, theta, wn2)
    r = _kkt(S, alpha, beta, y, M, c, mu, theta, P)
    return P, Dm, r, (P - Dm) / (1.0 + abs(P)) <= tol and r <= kkt_tol


@njit(cache=True)
def _coef_dot(coef, S):
    s = 0.0
    for i in range(coef.shape[0]):
        for l in range(coef.shape[1]):
            s += coef[i, l] * S[i, l]
    return s


@njit(cache=True)
def _bcd_gram(G, y, M, alpha, beta, coef, S, c, mu, theta, tol, kkt_tol, max_epochs, seed):
    """Epochs of BCD on the Gram path until the relative gap (maintained scores) <= tol.

    Returns ``(epochs, P, D_max)``."""
    m, k = coef.shape
    aD = 1.0 / (2.0 * c)                  # m (1-theta)^2 / (2 lam)
    aE = aD / mu
    B = np.empty(k)
    anew = np.empty(k)
    delta = np.empty(k)
    buf = np.empty(k)
    np.random.seed(seed)
    P = np.inf
    Dm = -np.inf
    ep = 0
    while ep < max_epochs:
        perm = np.random.permutation(m)
        for t in range(m):
            i = perm[t]
            yi = y[i]
            A = G[i, i]
            for l in range(k):
                g = S[i, l] - A * coef[i, l]          # sum_{j != i} k_ij coef[j, l]
                B[l] = g + (1.0 - theta) if l != yi else g
            F = M[i] + 1.0 + theta - B[yi]
            bnew = block_core(A, B, yi, aD, aE, F, anew, buf)
            moved = False
            for l in range(k):
                cn = anew[l] - bnew if l == yi else anew[l]
                delta[l] = cn - coef[i, l]
                if delta[l] != 0.0:
                    moved = True
                coef[i, l] = cn
                alpha[i, l] = anew[l]
            beta[i] = bnew
            if moved:
                for j in range(m):
                    gij = G[i, j]
                    if gij != 0.0:
                        for l in range(k):
                            S[j, l] += gij * delta[l]
        ep += 1
        P, Dm, r, done = _stop(S, coef, alpha, beta, y, M, c, mu, theta, _coef_dot(coef, S),
                               tol, kkt_tol)
        if done:
            break
    return ep, P, Dm


@njit(cache=True)
def _scores_linear(X, Wt, S):
    m, d = X.shape
    k = Wt.shape[0]
    for i in range(m):
        for l in range(k):
            s = 0.0
            for f in range(d):
                s += X[i, f] * Wt[l, f]
            S[i, l] = s


@njit(cache=True)
def _bcd_linear(X, xsq, y, M, alpha, beta, coef, Wt, S, c, mu, theta, tol, kkt_tol, max_epochs,
                seed):
    """Epochs of BCD on the linear path (``Wt`` = W^T, k x d, stored explicitly; seed 002
    §4.2). ``S`` is scratch for the gap (recomputed as ``X W`` at each check).

    Returns ``(epochs, P, D_max)``."""
    m, d = X.shape
    k = coef.shape[1]
    aD = 1.0 / (2.0 * c)
    aE = aD / mu
    B = np.empty(k)
    anew = np.empty(k)
    delta = np.empty(k)
    buf = np.empty(k)
    np.random.seed(seed)
    P = np.inf
    Dm = -np.inf
    ep = 0
    while ep < max_epochs:
        perm = np.random.permutation(m)
        for t in range(m):
            i = perm[t]
            yi = y[i]
            A = xsq[i]
            for l in range(k):
                s = 0.0
                for f in range(d):
                    s += Wt[l, f] * X[i, f]
                g = s - A * coef[i, l]                 # w_l^T x_i - A coef[i, l]
                B[l] = g + (1.0 - theta) if l != yi else g
            F = M[i] + 1.0 + theta - B[yi]
            bnew = block_core(A, B, yi, aD, aE, F, anew, buf)
            for l in range(k):
                cn = anew[l] - bnew if l == yi else anew[l]
                delta[l] = cn - coef[i, l]
                coef[i, l] = cn
                alpha[i, l] = anew[l]
                if delta[l] != 0.0:
                    dl = delta[l]
                    for f in range(d):
                        Wt[l, f] += dl * X[i, f]
            beta[i] = bnew
        ep += 1
        _scores_linear(X, Wt, S)
        wn2 = 0.0
        for l in range(k):
            for f in range(d):
                wn2 += Wt[l, f] * Wt[l, f]
        P, Dm, r, done = _stop(S, coef, alpha, beta, y, M, c, mu, theta, wn2, tol, kkt_tol)
        if done:
            break
    return ep, P, Dm


# ---------------------------------------------------------------------------------------
# the relaxed QP
# ---------------------------------------------------------------------------------------
class _Engine:
    """Data of one problem on one path, shared by the rounds of the outer loop."""

    def __init__(self, prob, path):
        self.prob = prob
        self.path = path
        self.y = np.ascontiguousarray(prob.y, dtype=np.int64)
        self.m, self.k = prob.m, prob.k
        if path == "linear":
            X = prob.X.toarray() if sp.issparse(prob.X) else prob.X
            self.X = np.ascontiguousarray(X, dtype=np.float64)
            self.xsq = np.einsum("ij,ij->i", self.X, self.X)
        else:
            self.G = np.ascontiguousarray(prob.gram, dtype=np.float64)

    def scores(self, coef):
        """``S = G coef`` (kernel) or ``X (X^T coef)`` (linear), fresh."""
        if self.path == "linear":
            return self.X @ (self.X.T @ coef)
        return self.G @ coef

    def sq_norm(self, coef):
        """``||W||_F^2`` of ``W = sum_i coef[i, :] phi(x_i)``."""
        if self.path == "linear":
            W = self.X.T @ coef
            return float(np.sum(W * W))
        return float(np.sum(coef * (self.G @ coef)))

    def run(self, M, alpha, beta, tol, max_iter, seed, kkt_tol):
        """BCD from ``(alpha, beta)`` (modified in place) to relative gap ``tol``.

        Returns ``(coef, S, epochs, P, D_max, converged)`` with fresh scores ``S``."""
        p = self.prob
        c, mu, theta = p.c, p.mu, p.theta
        M = np.ascontiguousarray(M, dtype=np.float64)
        coef = alpha - p.onehot * beta[:, None]
        epochs = 0
        while True:
            S = np.ascontiguousarray(self.scores(coef))
            if self.path == "linear":
                Wt = np.ascontiguousarray((self.X.T @ coef).T)
                wn2 = float(np.sum(Wt * Wt))
            else:
                wn2 = _coef_dot(coef, S)
            P, Dm, r, done = _stop(S, coef, alpha, beta, self.y, M, c, mu, theta, wn2, tol,
                                   kkt_tol)
            self.kkt = r
            if epochs > 0 and done:
                return coef, S, epochs, P, Dm, True
            if epochs >= max_iter:
                return coef, S, epochs, P, Dm, False
            if self.path == "linear":
                n, _, _ = _bcd_linear(self.X, self.xsq, self.y, M, alpha, beta, coef, Wt, S,
                                      c, mu, theta, tol, kkt_tol, max_iter - epochs,
                                      seed + epochs)
            else:
                n, _, _ = _bcd_gram(self.G, self.y, M, alpha, beta, coef, S, c, mu, theta,
                                    tol, kkt_tol, max_iter - epochs, seed + epochs)
            epochs += n


def _choose_path(prob, path):
    path = _dcd.check_path(path, ("gram", "linear"))
    if path == "linear" and not prob.kernel.is_linear:
        raise ValueError(f"path='linear' needs the linear kernel; got kernel={prob.kernel!r}")
    if path == "auto":
        return "linear" if prob.kernel.is_linear else "gram"
    return path


def _warm_dual(prob, warm_start):
    """``(alpha, beta)`` of a previous Solution, checked (never clipped) against eq. 23's
    constraints; small violations (<= 1e-8 relative, as a CVXPY solution has) are accepted:
    BCD overwrites every block with its exact minimiser in the first epoch."""
    v = getattr(warm_start, "variables", None)
    if not isinstance(v, dict) or "alpha" not in v or "beta" not in v:
        raise ValueError("warm_start must be a Solution carrying the dual variables "
                         "'alpha' (m x k) and 'beta' (m,) of this problem")
    m, k = prob.m, prob.k
    alpha = np.array(v["alpha"], dtype=np.float64)
    beta = np.array(v["beta"], dtype=np.float64).ravel()
    if alpha.shape != (m, k) or beta.shape != (m,):
        raise ValueError(f"warm_start alpha, beta must have shapes ({m}, {k}) and ({m},); "
                         f"got {alpha.shape} and {beta.shape}")
    if not (np.all(np.isfinite(alpha)) and np.all(np.isfinite(beta))):
        raise ValueError("warm_start alpha and beta must be finite")
    scale = 1.0 + max(float(np.max(np.abs(alpha))), float(np.max(np.abs(beta))))
    viol = max(float(np.max(np.where(prob.onehot > 0, 0.0, alpha))), float(np.max(-beta)),
               float(np.max(np.abs(alpha.sum(axis=1)))))
    if viol > 1e-8 * scale:
        raise ValueError("warm_start alpha, beta must satisfy eq. 23's constraints "
                         "(sum_l alpha_i^l = 0, alpha_i^l <= 0 for l != y_i, beta >= 0); "
                         f"violated by {viol:.3g} (not clipped)")
    return np.ascontiguousarray(alpha), np.ascontiguousarray(beta)


def _check_options(options, allowed):
    unknown = set(options) - set(allowed)
    if unknown:
        raise ValueError(f"unknown options {sorted(unknown)} for the mcODM solver; "
                         f"allowed: {sorted(allowed)}")


def _check_with_W(with_W):
    if with_W not in ("auto", True, False):
        raise ValueError(f"with_W must be 'auto', True or False; got {with_W!r}")
    return with_W


def _build_solution(prob, eng, M, coef, alpha, beta, S, P, Dm, with_W, solver, t0,
                    status, n_iter, info):
    rows = np.arange(prob.m)
    sy = S[rows, prob.y]
    so = np.max(np.where(prob.onehot > 0, -np.inf, S), axis=1)
    xi = np.maximum(0.0, 1.0 - prob.theta - (sy - so))
    eps = np.maximum(0.0, sy - M - 1.0 - prob.theta)
    variables = {"xi": xi, "eps": eps, "alpha": alpha, "beta": beta}
    if eng.path == "linear":
        W = eng.X.T @ coef
        variables = {"W": W, **variables}
        info["W"] = "explicit (linear path)"
    elif with_W is True or (with_W == "auto" and _has_F(prob)):
        variables = {"W": np.asarray(prob.F.T @ coef), **variables}
        info["W"] = "F^T coef (empirical kernel map)"
    else:
        info["W"] = ("omitted (kernel path: W needs the empirical kernel map, an m x m "
                     "eigendecomposition; pass with_W=True); coef carries the point")
    info.update({"M": np.array(M, dtype=float), "path": eng.path, "kkt": float(eng.kkt),
                 "gap": float(P - Dm), "rel_gap": float((P - Dm) / (1.0 + abs(P))),
                 "dual_objective": float(Dm)})
    return Solution(objective=float(P), coef=coef, intercept=0.0, variables=variables,
                    status=status, solver=solver, form="fast", time=time.perf_counter() - t0,
                    n_iter=n_iter, info=info)


def _warn(message):
    from sklearn.exceptions import ConvergenceWarning

    warnings.warn(message, ConvergenceWarning, stacklevel=4)


def solve_relaxed(prob, method=None, tol=None, max_iter=None, random_state=None,
                  warm_start=None, **options):
    """The relaxed QP (eq. 20 / 23) at ``prob.M`` by BCD (see the module docstring).

    ``tol``: relative duality gap (default ``DEFAULT_TOL``); ``max_iter``: epochs (default
    ``DEFAULT_MAX_ITER``). Options: ``kkt_tol`` (default ``DEFAULT_KKT_TOL``: the scaled
    slack-stationarity and complementarity residuals must also be below it), ``path``
    (``"auto"``, ``"gram"``, ``"linear"``) and
    ``with_W`` (``"auto"``, True, False: return the feature-space ``W = F^T coef`` on the
    kernel path; ``"auto"`` does so only when the problem already holds its empirical
    kernel map ``F``, since building it is an m x m eigendecomposition that costs more than
    the solve; ``RelaxedMcODM.certify`` accepts the solution either way, from ``coef``).
    Returns a Solution with the variables of the reference's relaxed solutions (``W``,
    ``xi``, ``eps``, ``alpha``, ``beta``), ``coef`` (m x k), ``objective`` = eq. 20 at
    ``W`` (computed from the Gram or ``W``), ``n_iter`` = epochs, ``info`` with ``gap``,
    ``rel_gap``, ``tol``, ``path``, ``M``."""
    from refmodels._validation import positive

    _check_options(options, ("path", "with_W", "kkt_tol"))
    with_W = _check_with_W(options.get("with_W", "auto"))
    kkt_tol = positive(options.get("kkt_tol", DEFAULT_KKT_TOL), "kkt_tol")
    method, tol, max_iter = _dcd.check_common(method, METHODS, tol, max_iter, DEFAULT_TOL,
                                              DEFAULT_MAX_ITER)
    seed = _dcd.seed_from(random_state)
    t0 = time.perf_counter()
    eng = _Engine(prob, _choose_path(prob, options.get("path")))
    if warm_start is not None:
        alpha, beta = _warm_dual(prob, warm_start)
    else:
        alpha, beta = np.zeros((prob.m, prob.k)), np.zeros(prob.m)
    coef, S, epochs, P, Dm, ok = eng.run(prob.M, alpha, beta, tol, max_iter, seed, kkt_tol)
    status = "optimal" if ok else "max_iter"
    sol = _build_solution(prob, eng, prob.M, coef, alpha, beta, S, P, Dm, with_W, "fast:bcd",
                          t0, status, epochs, {"tol": tol, "epochs": epochs})
    if not ok:
        _warn(f"mcODM relaxed QP (BCD) stopped after max_iter={max_iter} epochs with relative "
              f"duality gap {sol.info['rel_gap']:.3g} (tol={tol:g}) and scaled KKT residual "
              f"{sol.info['kkt']:.3g} (kkt_tol={kkt_tol:g})")
    return sol


# ---------------------------------------------------------------------------------------
# the outer loop (Alg. 3)
# ---------------------------------------------------------------------------------------
def solve_mcodm(prob, method=None, tol=None, max_iter=None, random_state=None,
                warm_start=None, **options):
    """Alg. 3 with fast relaxed solves (see the module docstring).

    ``tol``: relative change of ``W`` (default 1e-6, as the reference); ``max_iter``: epochs
    per relaxed solve; options ``max_outer`` (rounds, default 50 as the reference),
    ``inner_tol`` (relative gap of each relaxed solve, default ``DEFAULT_TOL``), ``kkt_tol``,
    ``path``,
    ``with_W``. ``warm_start``: a previous Solution of this problem (its ``alpha``, ``beta``;
    the loop then starts from its ``W`` instead of 0).

    Returns the last relaxed solve's Solution with ``n_iter`` = rounds and ``info``:
    ``M`` (of the last relaxed QP), ``change``, ``changes``, ``inner_iters`` (epochs per
    round), ``inner_gaps``, ``mcodm_objective``, ``fixed_point_residual``; ``objective`` is
    eq. 20 at ``info["M"]`` (as the reference)."""
    from refmodels._validation import positive, positive_int

    _check_options(options, ("path", "with_W", "max_outer", "inner_tol", "kkt_tol"))
    kkt_tol = positive(options.get("kkt_tol", DEFAULT_KKT_TOL), "kkt_tol")
    with_W = _check_with_W(options.get("with_W", "auto"))
    max_outer = positive_int(options.get("max_outer", DEFAULT_MAX_OUTER), "max_outer")
    inner_tol = positive(options.get("inner_tol", DEFAULT_TOL), "inner_tol")
    method, tol, max_iter = _dcd.check_common(method, METHODS, tol, max_iter, DEFAULT_OUTER_TOL,
                                              DEFAULT_MAX_ITER)
    seed = _dcd.seed_from(random_state)
    t0 = time.perf_counter()
    eng = _Engine(prob, _choose_path(prob, options.get("path")))
    m, k = prob.m, prob.k
    if warm_start is not None:
        alpha, beta = _warm_dual(prob, warm_start)
        coef = alpha - prob.onehot * beta[:, None]
    else:
        alpha, beta = np.zeros((m, k)), np.zeros(m)
        coef = np.zeros((m, k))
    other = prob.onehot > 0
    changes, inner_iters, inner_gaps, inner_ok = [], [], [], []
    S = eng.scores(coef)
    for r in range(max_outer):
        M = np.max(np.where(other, -np.inf, S), axis=1)          # Alg. 3, step 5
        coef_new, S, epochs, P, Dm, ok = eng.run(M, alpha, beta, inner_tol, max_iter,
                                                 seed + 7919 * r, kkt_tol)
        d = coef_new - coef
        change = float(np.sqrt(max(eng.sq_norm(d), 0.0))
                       / max(1.0, np.sqrt(max(_coef_dot(coef_new, S), 0.0))))
        changes.append(change)
        inner_iters.append(int(epochs))
        inner_gaps.append(float((P - Dm) / (1.0 + abs(P))))
        inner_ok.append(bool(ok))
        coef = coef_new
        if change < tol:
            break
    converged = changes[-1] < tol and inner_ok[-1]
    status = "optimal" if converged else "max_iter"
    rows = np.arange(m)
    S_fin = S
    M_next = np.max(np.where(other, -np.inf, S_fin), axis=1)
    sy = S_fin[rows, prob.y]
    g = sy - M_next
    xi_o = np.maximum(0.0, 1.0 - prob.theta - g)
    eps_o = np.maximum(0.0, g - 1.0 - prob.theta)
    mc_obj = (0.5 * _coef_dot(coef, S_fin)
              + prob.c * float(np.sum(xi_o ** 2 + prob.mu * eps_o ** 2)))
    info = {"tol": tol, "inner_tol": inner_tol, "max_outer": max_outer, "change": changes[-1],
            "changes": changes, "inner_iters": inner_iters, "inner_gaps": inner_gaps,
            "mcodm_objective": float(mc_obj),
            "fixed_point_residual": float(np.max(np.abs(M_next - M)))}
    sol = _build_solution(prob, eng, M, coef, alpha, beta, S, P, Dm, with_W, "fast:bcd", t0,
                          status, len(changes), info)
    if not converged:
        if changes[-1] >= tol:
            _warn(f"McODM outer loop (Alg. 3) stopped after max_outer={max_outer} rounds with "
                  f"relative change of W {changes[-1]:.3g} >= tol={tol:g}")
        else:
            _warn(f"McODM outer loop (Alg. 3): the last relaxed QP stopped after "
                  f"max_iter={max_iter} epochs with relative duality gap {inner_gaps[-1]:.3g} "
                  f"> inner_tol={inner_tol:g}")
    return sol


def solve(prob, method=None, tol=None, max_iter=None, random_state=None, warm_start=None,
          **options):
    """``fast.solve`` entry for the family ``mcodm``: :class:`refmodels.McODM` runs the
    outer loop (Alg. 3, :func:`solve_mcodm`), :class:`refmodels.mcodm.RelaxedMcODM` one
    relaxed QP (:func:`solve_relaxed`). ``method``: ``"bcd"`` (default, the only one)."""
    from refmodels.mcodm import McODM, RelaxedMcODM

    if isinstance(prob, RelaxedMcODM):
        return solve_relaxed(prob, method=method, tol=tol, max_iter=max_iter,
                             random_state=random_state, warm_start=warm_start, **options)
    if isinstance(prob, McODM):
        return solve_mcodm(prob, method=method, tol=tol, max_iter=max_iter,
                           random_state=random_state, warm_start=warm_start, **options)
    raise ValueError(f"prob must be a refmodels McODM or RelaxedMcODM; got {type(prob).__name__}")
