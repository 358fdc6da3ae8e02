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
  row ``i`` of ``coef`` and so every score by ``G[:, i] * delta`` (O(mk)); the epochs keep
  them transposed (a C-contiguous k x m copy ``S^T``) so that this is one contiguous AXPY
  ``S^T[l, :] += delta_l G[i, :]`` per class ``l`` whose ``coef[i, l]`` changed, and copy
  them back into ``S`` (C-contiguous m x k, as on the linear path: one compiled layout)
  for each stopping test;
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

**Active-set Newton polish** (not in seed 002; the device of :mod:`fast._dcd`'s
``_newton_polish`` for the box DCD, here for eq. 23's blocks). BCD converges only linearly:
at the default ``tol`` it needs ~200 epochs where the set of active bounds has settled
after ~20. Call the *face* the free variables ``alpha_i^l < 0`` (``l != y_i``) and
``beta_i > 0``; every other ``alpha_i^l`` and ``beta_i`` is at its bound 0, and
``alpha_i^{y_i} = -sum_{l != y_i} alpha_i^l`` (eq. 23's equality, eliminated). On the
face eq. 23 is a convex quadratic in the free variables, with Hessian ``H`` and
gradient ``g`` read off the kernel and the scores (:func:`_face_system`: a free variable
moves ``coef[i, :]`` along ``e_l - e_{y_i}`` resp. ``-e_{y_i}``, eq. 22). Once the face
has not changed for ``POLISH_CALM`` epochs in a row, the BCD stops and, with fresh scores,
the Newton step ``d = -H^{-1} g`` (one Cholesky factorization) is taken, cut by the ratio
test to the largest ``t <= 1`` keeping ``alpha_i^l <= 0``, ``beta_i >= 0``; the variable
that cuts it is set to 0 and leaves the face (the factor is downdated by Givens rotations,
O(n^2)) and the step is redone on the smaller face, until a full step lands on the
minimiser of eq. 23 on the face (:func:`_face_newton`). Every step lowers eq. 23's objective
and keeps the dual feasible. That minimiser is optimal iff no variable at its bound has a
gradient pointing into the feasible set; this is not assumed: the stopping test (relative
gap and KKT residuals on fresh scores, above) decides as before, and if it fails the BCD
resumes from the polished point and the next polish waits for twice as many calm epochs.
The factorization (``n^3/3`` flops for ``n`` free variables, at most ``POLISH_MAX``) is
done only if it costs less than 10 times the flops of the epochs spent so far (+ 1e6), so
the polish never dominates a solve that BCD alone would finish cheaply. A singular ``H``
(linear kernel with ``d`` small, a zero feature vector) sends the whole of eq. 23, a
sign-constrained QP once the equality is eliminated, to the dense active set
(``_box_qp``, :func:`fast._polish.active_set_qp`: it follows the null space to the bounds
and releases variables, which the face's steps cannot), kept only if it descends. ``polish=False`` runs BCD alone (seed 002's method as printed). At
``m = 300, k = 4`` (RBF, ``validation/bench_mcodm.py``) round 1 takes ~20-25 epochs and one
polish instead of ~210 epochs. (Shrinking, as in LIBLINEAR, is not used: it saves the
visits of blocks that stay at 0, and with eq. 20's squared slacks a block is at 0 only if
both its slacks vanish, ``1 - theta <= s_{y_i} - max_{l != y_i} s_l`` and
``s_{y_i} - M_i <= 1 + theta``; in that benchmark no block is at 0 in round 1.)

**Outer loop** (:class:`refmodels.mcodm.McODM`, Alg. 3) exactly as the reference
``McODM.solve``: start from ``W = 0``; each round sets ``M_i = max_{l != y_i} s_l(x_i)``
from the current iterate and solves the relaxed QP at that ``M`` (warm-started from the
previous round's dual, which stays feasible: the dual's constraints do not involve ``M``);
stop when ``||W_new - W||_F / max(1, ||W_new||_F) < tol`` or after ``max_outer`` rounds.
Norms of ``W`` are computed from the Gram (``||W||^2 = sum coef * (G coef)``) on the
kernel path, never through a feature map.

**Anderson acceleration** (not in seed 002; ``accelerate=True``, the default). Write a
round as the map ``T(W) = W*(M(W))`` (the relaxed QP's solution at the ``M`` of ``W``);
Alg. 3 iterates ``W <- T(W)`` and its fixed points are what it returns. With ``lam`` large
against ``m`` this iteration converges linearly but slowly: on digits (linear kernel,
``lam = m``) each change of ``W`` is ~0.985 of the last, and reaching ``tol = 1e-6`` takes
~740 rounds (breast_cancer ~790); it drifts, it does not cycle. Once two successive
changes have each shrunk by less than ``SLOW_RATE`` (a loop converging fast is left exactly
as the reference's), the next round starts instead from Anderson's extrapolation (type II,
the last ``ANDERSON_MEMORY`` differences) ``x = T(W_r) - sum_j gamma_j (T(W_{j+1}) - T(W_j))``,
``gamma`` minimising the norm of the same combination of the residuals ``T(W_j) - W_j``
(the norm of ``W``, from the scores, which are linear in ``coef``); a round whose residual
grew after an extrapolation restarts the memory. Every round still evaluates ``T`` at the
point it starts from, and the stopping test is unchanged: the loop stops when a round
``x -> T(x)`` changes ``W`` by less than ``tol`` and returns ``T(x)``, the relaxed QP at
``M(x)``, certified as before, so the returned point passes the reference's own test for a
fixed point of Alg. 3 (``changes[r]`` is that round's ``||T(x) - x|| / max(1, ||T(x)||)``).
The extrapolated points are never returned and need not be solutions of anything. On the
non-convex problem no iteration can promise the same fixed point as the plain one; on
the measured instances both land within the distance the stopping test allows (digits:
``||W_acc - W_plain|| / ||W_plain|| = 1.2e-4`` after 39 instead of 737 rounds, the plain
loop's own distance to its limit at ``tol`` being ``~1e-6 / (1 - 0.985) = 7e-5``).
``accelerate=False`` runs the reference's plain iteration.
"""
from __future__ import annotations

import time
import warnings

import numpy as np
import scipy.sparse as sp
from scipy.linalg import cho_factor

from refmodels.solution import Solution

from . import _chunk, _common, _methods
from . import _kernels as _K
from ._mcodm_bcd import (_NO_XSQ, _NONFINITE, B_EP, N_BCTL, N_BFCTL, BcdOptions, BcdState,
                         McData, McDual, McParams, _bcd, _coef_dot, _face, _face_newton,
                         _face_set, _face_system, _stop)

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
#: Anderson acceleration of the outer loop (module docstring): used once two successive
#: changes of W have each shrunk by less than ``SLOW_RATE``, with ``ANDERSON_MEMORY``
#: previous differences
SLOW_RATE = 0.5
ANDERSON_MEMORY = 5
#: the Newton "polish" (module docstring): first tried once the face has not changed for
#: this many epochs in a row (doubled after each try), on at most ``POLISH_MAX`` variables
POLISH_CALM = 2
POLISH_MAX = 3000
#: the least budget (flops) of the dense active set on a singular face (``_box_qp``)
BOX_QP_FLOPS = 1e9

from ._mcodm_bcd import _CALM  # noqa: E402  (a status of the epochs)


def _has_F(prob):
    """Whether the workspace of the call already holds the empirical kernel map (the
    relaxed problems of one McODM share their parent's data, hence its map)."""
    return _common.peek(prob, "F", on=prob.data_key) is not None


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
        """``S = G coef`` (kernel) or ``X (X^T coef)`` (linear), fresh, C-contiguous on both
        paths (one compiled specialisation of the numba functions that read it)."""
        if self.path == "linear":
            return np.ascontiguousarray(self.X @ (self.X.T @ coef))
        return np.ascontiguousarray((coef.T @ self.G).T)

    def sq_norm(self, coef):
        """``||W||_F^2`` of ``W = sum_i coef[i, :] phi(x_i)``."""
        if self.path == "linear":
            W = self.X.T @ coef
            return float(np.sum(W * W))
        return float(np.sum(coef * (self.G @ coef)))

    def polish(self, M, alpha, beta, coef, S, budget):
        """Active-set Newton steps on the face of eq. 23 (module docstring); modifies
        ``alpha``, ``beta``, ``coef`` in place. ``S``: fresh scores.

        Builds the face's Hessian and gradient (:func:`_face_system`, from the fresh scores),
        factors it once (Cholesky, O(n^3/3)) and runs :func:`_face_newton` (Newton steps,
        a variable stopped at its bound leaving the face, until a full step). Returns the
        number of steps taken (each lowers eq. 23's objective): 0 if the face is empty,
        has more than ``POLISH_MAX`` variables, its factorization would cost more than
        ``budget`` flops, or there is no descent."""
        p = self.prob
        vi, vl = _chunk.call(_face, alpha, beta, self.y)
        n = vi.shape[0]
        if n == 0 or n > POLISH_MAX or n ** 3 / 3.0 > budget:
            return 0
        if self.path == "linear":
            u, kidx = np.unique(vi, return_inverse=True)
            Xu = self.X[u]
            K = np.ascontiguousarray(Xu @ Xu.T)
            kidx = np.ascontiguousarray(kidx, dtype=np.int64)
        else:
            K, kidx = self.G, vi
        dual, par = McDual(alpha, beta, coef), McParams(p.c, p.mu, p.theta)
        H, g = _chunk.call(_face_system, K, kidx, vi, vl, self.y, M, S, dual,
                           1.0 / (2.0 * p.c), par)
        x = np.where(vl >= 0, alpha[vi, np.maximum(vl, 0)], beta[vi])
        is_alpha = vl >= 0
        try:
            # H.T (Fortran order) holds H's lower triangle as its upper one: U with H = U^T U,
            # so U.T (C order) is the lower factor L that _face_newton downdates
            U, _ = cho_factor(H.T, lower=False, overwrite_a=True, check_finite=False)
            steps = _face_newton(U.T, g, x, is_alpha)
        except np.linalg.LinAlgError:
            # singular H (e.g. linear kernel with few features, a zero feature vector): the
            # whole of eq. 23 by the dense active set, if small enough. Its steps cost about
            # 4 n_free^3 flops and its walk releases variables, which the face cannot; the
            # coordinate descent crawls on such a Hessian, so the walk gets at least
            # BOX_QP_FLOPS (about 0.1-0.5 s) whatever the epochs spent
            if alpha.size > POLISH_MAX:
                return 0
            return self._box_qp(M, alpha, beta, coef, S, max(budget, BOX_QP_FLOPS))
        if steps:
            _face_set(vi, vl, x, self.y, alpha, beta, coef)
        return steps

    def _box_qp(self, M, alpha, beta, coef, S, budget):
        """Eq. 23 over all its variables as a sign-constrained QP (``alpha_i^l <= 0`` for
        ``l != y_i``, ``beta_i >= 0``; the equality eliminated), solved from the current point
        by the dense active set :func:`fast._polish.active_set_qp` (eigendecompositions of
        the free block: a singular Hessian's null space is followed to the bounds, and bound
        variables whose multipliers have the wrong sign are released). Modifies ``alpha``,
        ``beta``, ``coef`` in place; returns 1 if it lowered eq. 23's objective, else 0."""
        from ._polish import active_set_qp

        p, y = self.prob, self.y
        m, k = alpha.shape
        ii, ll = np.repeat(np.arange(m), k), np.tile(np.arange(k), m)
        keep = ll != y[ii]
        vi = np.concatenate([ii[keep], np.arange(m)]).astype(np.int64)
        vl = np.concatenate([ll[keep], np.full(m, -1)]).astype(np.int64)
        if self.path == "linear":
            K = np.ascontiguousarray(self.X @ self.X.T)
        else:
            K = self.G
        H, g = _chunk.call(_face_system, K, vi, vi, vl, y, M, S,
                           McDual(alpha, beta, coef), 1.0 / (2.0 * p.c),
                           McParams(p.c, p.mu, p.theta))
        H = np.tril(H)
        H += np.tril(H, -1).T
        is_alpha = vl >= 0
        x0 = np.where(is_alpha, alpha[vi, np.maximum(vl, 0)], beta[vi])
        lo = np.where(is_alpha, -np.inf, 0.0)
        hi = np.where(is_alpha, 0.0, np.inf)
        x, change = active_set_qp(H, g, x0, lo, hi, budget=budget)
        if not change < 0.0:
            return 0
        _face_set(vi, vl, x, y, alpha, beta, coef)
        return 1

    def run(self, M, alpha, beta, tol, max_iter, seed, kkt_tol, polish=True):
        """BCD from ``(alpha, beta)`` (modified in place) to relative gap ``tol``, with the
        Newton polish (module docstring) if ``polish``.

        Returns ``(coef, S, epochs, P, D_max, converged)`` with fresh scores ``S``; sets
        ``self.kkt`` and ``self.n_polish`` (Newton steps taken)."""
        p = self.prob
        par = McParams(p.c, p.mu, p.theta)
        m, k = self.m, self.k
        M = np.ascontiguousarray(M, dtype=np.float64)
        coef = alpha - p.onehot * beta[:, None]
        dual = McDual(alpha, beta, coef)
        linear = self.path == "linear"
        data = McData(linear, self.X if linear else self.G, self.xsq if linear else _NO_XSQ,
                      self.y, M)
        # flops of one epoch (score maintenance), against which a polish is weighed
        per_epoch = m * k * (self.X.shape[1] if self.path == "linear" else m)
        epochs = 0
        calm = POLISH_CALM if polish else 0
        want_polish = False
        self.n_polish = 0
        while True:
            S = self.scores(coef)
            if self.path == "linear":
                Wt = np.ascontiguousarray((self.X.T @ coef).T)
                wn2 = float(np.sum(Wt * Wt))
            else:
                wn2 = _coef_dot(coef, S)
            P, Dm, r, done = _stop(S, dual, self.y, M, par, wn2, tol, kkt_tol)
            self.kkt = r
            if epochs > 0 and done:
                return coef, S, epochs, P, Dm, True
            if want_polish:
                want_polish = False
                steps = self.polish(M, alpha, beta, coef, S, 10.0 * per_epoch * epochs + 1e6)
                if steps:
                    self.n_polish += steps
                    continue                   # fresh scores and the stop test again
            if epochs >= max_iter:
                return coef, S, epochs, P, Dm, False
            T = Wt if linear else np.ascontiguousarray(S.T)
            perm, ctl, fctl = np.empty(m, dtype=np.int64), np.zeros(N_BCTL, dtype=np.int64), \
                np.zeros(N_BFCTL)
            st = BcdState(T, S, perm, ctl, fctl)
            opt = BcdOptions(tol, kkt_tol, max_iter - epochs, seed + epochs, calm)
            while (status := _bcd(data, dual, par, opt, st, _chunk.budget())) == _chunk.PAUSED:
                pass                  # (between two calls: where Ctrl-C is raised)
            if status == _NONFINITE:
                from refmodels.solution import SolverError

                raise SolverError(f"mcODM BCD: the objective or the dual value is not "
                                  f"finite (NaN or overflow) after {epochs + int(ctl[B_EP])} "
                                  f"epochs (P = {fctl[0]!r}, D = {fctl[1]!r}): the problem's "
                                  f"numbers are beyond float64 at this scale")
            epochs += int(ctl[B_EP])
            if status == _CALM:
                want_polish = True
                calm *= 2                          # a step that does not finish: wait longer


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


def _check_polish(polish):
    if not isinstance(polish, (bool, np.bool_)):
        raise ValueError(f"polish must be True or False; got {polish!r}")
    return bool(polish)


def _check_with_W(with_W):
    if with_W not in ("auto", True, False):
        raise ValueError(f"with_W must be 'auto', True or False; got {with_W!r}")
    return with_W


def _build_solution(prob, eng, M, coef, alpha, beta, S, P, Dm, with_W, solver, t0,
                    status, n_iter, info):
    xi, eps = prob.slacks_from_scores(S, M)
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


def _setup(prob, method, tol, max_iter, random_state, options, extra, default_tol):
    """The checks both entry points share: options (``path``, ``with_W``, ``kkt_tol``,
    ``polish`` and the ``extra`` names), the common arguments, and the BCD engine on the
    chosen kernel path."""
    from refmodels._validation import positive

    _check_options(options, ("path", "with_W", "kkt_tol", "polish") + tuple(extra))
    flags = (_check_with_W(options.get("with_W", "auto")),
             _check_polish(options.get("polish", True)),
             positive(options.get("kkt_tol", DEFAULT_KKT_TOL), "kkt_tol"))
    common = _common.check_common(method, METHODS, tol, max_iter, default_tol, DEFAULT_MAX_ITER)
    common = (*common, _common.seed_from(random_state))
    eng = _Engine(prob, _K.choose_path(prob, options.get("path"), allowed=("gram", "linear")))
    return eng, common, flags


def solve_relaxed(prob, method=None, tol=None, max_iter=None, random_state=None,
                  warm_start=None, **options):
    """The relaxed QP (eq. 20 / 23) at ``prob.M`` by BCD (see the module docstring).

    ``tol``: relative duality gap (default ``DEFAULT_TOL``); ``max_iter``: epochs (default
    ``DEFAULT_MAX_ITER``). Options: ``kkt_tol`` (default ``DEFAULT_KKT_TOL``: the scaled
    slack-stationarity and complementarity residuals must also be below it), ``path``
    (``"auto"``, ``"gram"``, ``"linear"``), ``polish`` (default True: the active-set Newton
    steps of the module docstring; False: BCD alone) and
    ``with_W`` (``"auto"``, True, False: return the feature-space ``W = F^T coef`` on the
    kernel path; ``"auto"`` does so only when the problem already holds its empirical
    kernel map ``F``, since building it is an m x m eigendecomposition that costs more than
    the solve; ``RelaxedMcODM.certify`` accepts the solution either way, from ``coef``).
    Returns a Solution with the variables of the reference's relaxed solutions (``W``,
    ``xi``, ``eps``, ``alpha``, ``beta``), ``coef`` (m x k), ``objective`` = eq. 20 at
    ``W`` (computed from the Gram or ``W``), ``n_iter`` = epochs, ``info`` with ``gap``,
    ``rel_gap``, ``tol``, ``path``, ``M``, ``polish``, ``n_polish`` (Newton steps taken)."""
    t0 = time.perf_counter()
    eng, (method, tol, max_iter, seed), (with_W, polish, kkt_tol) = _setup(
        prob, method, tol, max_iter, random_state, options, (), DEFAULT_TOL)
    if warm_start is not None:
        alpha, beta = _warm_dual(prob, warm_start)
    else:
        alpha, beta = np.zeros((prob.m, prob.k)), np.zeros(prob.m)
    coef, S, epochs, P, Dm, ok = eng.run(prob.M, alpha, beta, tol, max_iter, seed, kkt_tol,
                                         polish)
    status = "optimal" if ok else "max_iter"
    sol = _build_solution(prob, eng, prob.M, coef, alpha, beta, S, P, Dm, with_W, "fast:bcd",
                          t0, status, epochs, {"tol": tol, "epochs": epochs,
                                               "polish": polish, "n_polish": eng.n_polish})
    if not ok:
        _warn(f"mcODM relaxed QP (BCD) stopped after max_iter={max_iter} epochs with relative "
              f"duality gap {sol.info['rel_gap']:.3g} (tol={tol:g}) and scaled KKT residual "
              f"{sol.info['kkt']:.3g} (kkt_tol={kkt_tol:g})")
    return sol


# ---------------------------------------------------------------------------------------
# the outer loop (Alg. 3)
# ---------------------------------------------------------------------------------------
def _slow(changes):
    """Whether the plain outer loop looks slow: its last two changes of ``W`` each shrank
    by less than ``SLOW_RATE`` (a loop that converges fast is left as the reference's)."""
    c = changes[-3:]
    return len(c) == 3 and c[1] > SLOW_RATE * c[0] and c[2] > SLOW_RATE * c[1]


def _anderson(hist, coef_g, S_g):
    """The next point of the outer loop by Anderson's extrapolation (type II) from the
    last rounds ``hist = [(T(x_j), S(T(x_j)), f_j, S(f_j))]``, ``f_j = T(x_j) - x_j``:
    ``x = T(x_r) - sum_j gamma_j (T(x_{j+1}) - T(x_j))`` with ``gamma`` minimising
    ``||f_r - sum_j gamma_j (f_{j+1} - f_j)||`` in the norm of ``W``
    (``<a, b> = sum a * S(b)``, the scores being linear in ``coef``). Returns
    ``(coef, S)`` of that point (``T(x_r)`` itself with fewer than two rounds)."""
    if len(hist) < 2:
        return coef_g, S_g
    dF = np.array([(b[2] - a[2]).ravel() for a, b in zip(hist, hist[1:])])
    dFS = np.array([(b[3] - a[3]).ravel() for a, b in zip(hist, hist[1:])])
    Q = dF @ dFS.T
    Q = 0.5 * (Q + Q.T)
    rhs = dF @ hist[-1][3].ravel()
    gamma = np.linalg.lstsq(Q, rhs, rcond=1e-12)[0]
    if not np.all(np.isfinite(gamma)):
        return coef_g, S_g
    dG = np.array([(b[0] - a[0]).ravel() for a, b in zip(hist, hist[1:])])
    dGS = np.array([(b[1] - a[1]).ravel() for a, b in zip(hist, hist[1:])])
    return ((coef_g.ravel() - gamma @ dG).reshape(coef_g.shape),
            (S_g.ravel() - gamma @ dGS).reshape(S_g.shape))


def solve_mcodm(prob, method=None, tol=None, max_iter=None, random_state=None,
                warm_start=None, **options):
    """Alg. 3 with fast relaxed solves (see the module docstring).

    ``tol``: relative change of ``W`` (default 1e-6, as the reference); ``max_iter``: epochs
    per relaxed solve; options ``max_outer`` (rounds, default 50 as the reference),
    ``inner_tol`` (relative gap of each relaxed solve, default ``DEFAULT_TOL``), ``kkt_tol``,
    ``path``, ``polish``, ``accelerate`` (default True: Anderson steps once the plain loop
    is slow, module docstring; False: the reference's plain iteration),
    ``with_W``. ``warm_start``: a previous Solution of this problem (its ``alpha``, ``beta``;
    the loop then starts from its ``W`` instead of 0).

    Returns the last relaxed solve's Solution with ``n_iter`` = rounds and ``info``:
    ``M`` (of the last relaxed QP), ``change``, ``changes``, ``inner_iters`` (epochs per
    round), ``inner_gaps``, ``inner_polish`` (Newton steps per round), ``accelerate``,
    ``extrapolated`` (rounds started from an Anderson point), ``mcodm_objective``,
    ``fixed_point_residual``; ``objective`` is eq. 20 at ``info["M"]`` (as the
    reference).

    The loop stops early, with status ``"max_iter"`` and a ``ConvergenceWarning``, when the
    relaxed QPs of two rounds in a row end at ``max_iter`` epochs: their solutions are then
    too inexact for the fixed-point iteration to mean anything (typically a badly scaled
    kernel; the warning names the scale), and going on would only repeat the cost."""
    from refmodels._validation import positive, positive_int

    t0 = time.perf_counter()
    eng, (method, tol, max_iter, seed), (with_W, polish, kkt_tol) = _setup(
        prob, method, tol, max_iter, random_state, options,
        ("max_outer", "inner_tol", "accelerate"), DEFAULT_OUTER_TOL)
    accelerate = options.get("accelerate", True)
    if not isinstance(accelerate, (bool, np.bool_)):
        raise ValueError(f"accelerate must be True or False; got {accelerate!r}")
    max_outer = positive_int(options.get("max_outer", DEFAULT_MAX_OUTER), "max_outer")
    inner_tol = positive(options.get("inner_tol", DEFAULT_TOL), "inner_tol")
    m, k = prob.m, prob.k
    if warm_start is not None:
        alpha, beta = _warm_dual(prob, warm_start)
        coef = alpha - prob.onehot * beta[:, None]
    else:
        alpha, beta = np.zeros((m, k)), np.zeros(m)
        coef = np.zeros((m, k))
    changes, inner_iters, inner_gaps, inner_ok, inner_polish = [], [], [], [], []
    extrapolated = []          # whether round r started from an Anderson point
    S = eng.scores(coef)
    hist = []                  # (coef, S) of T(x) and of T(x) - x, the last rounds
    active = False             # Anderson steps taken (the plain iteration looked slow)
    for r in range(max_outer):
        M = prob.M_from_scores(S)                                 # Alg. 3, step 5
        coef_new, S_new, epochs, P, Dm, ok = eng.run(M, alpha, beta, inner_tol, max_iter,
                                                     seed + 7919 * r, kkt_tol, polish)
        d = coef_new - coef
        change = float(np.sqrt(max(eng.sq_norm(d), 0.0))
                       / max(1.0, np.sqrt(max(_coef_dot(coef_new, S_new), 0.0))))
        changes.append(change)
        inner_iters.append(int(epochs))
        inner_gaps.append(float((P - Dm) / (1.0 + abs(P))))
        inner_ok.append(bool(ok))
        inner_polish.append(int(eng.n_polish))
        if change < tol:
            break
        if r >= 1 and not (inner_ok[-1] or inner_ok[-2]):
            break              # two relaxed QPs in a row at max_iter: more rounds will not help
        active = active or (accelerate and _slow(changes))
        if not active:
            coef, S = coef_new, S_new
            extrapolated.append(False)
            continue
        if len(changes) >= 2 and change > changes[-2] and extrapolated and extrapolated[-1]:
            hist = []          # the extrapolation did not lower the residual: restart
        hist.append((coef_new, S_new, d, S_new - S))
        del hist[:-(ANDERSON_MEMORY + 1)]
        coef, S = _anderson(hist, coef_new, S_new)
        extrapolated.append(len(hist) >= 2)
    coef, S = coef_new, S_new                  # the last relaxed QP's solution
    converged = changes[-1] < tol and inner_ok[-1]
    stalled = len(inner_ok) >= 2 and not (inner_ok[-1] or inner_ok[-2])
    status = "optimal" if converged else "max_iter"
    # the original mcODM's objective at the last point (M its largest other scores)
    M_next = prob.M_from_scores(S)
    mc_obj = prob.objective_from_slacks(_coef_dot(coef, S), *prob.slacks_from_scores(S, M_next))
    info = {"tol": tol, "inner_tol": inner_tol, "max_outer": max_outer, "change": changes[-1],
            "changes": changes, "inner_iters": inner_iters, "inner_gaps": inner_gaps,
            "polish": polish, "inner_polish": inner_polish, "accelerate": accelerate,
            "extrapolated": int(sum(extrapolated)),
            "mcodm_objective": float(mc_obj),
            "fixed_point_residual": float(np.max(np.abs(M_next - M)))}
    sol = _build_solution(prob, eng, M, coef, alpha, beta, S, P, Dm, with_W, "fast:bcd", t0,
                          status, len(changes), info)
    if not converged:
        if stalled and changes[-1] >= tol:
            _warn(f"McODM outer loop (Alg. 3) stopped at round {len(changes)}: the relaxed QPs "
                  f"of the last two rounds stopped at max_iter={max_iter} epochs (relative "
                  f"duality gaps {inner_gaps[-2]:.3g}, {inner_gaps[-1]:.3g} > "
                  f"inner_tol={inner_tol:g}), and the relative change of W is "
                  f"{changes[-1]:.3g} >= tol={tol:g}{_common.scale_hint(prob)}")
        elif changes[-1] >= tol:
            _warn(f"McODM outer loop (Alg. 3) stopped after max_outer={max_outer} rounds with "
                  f"relative change of W {changes[-1]:.3g} >= tol={tol:g}")
        else:
            _warn(f"McODM outer loop (Alg. 3): the last relaxed QP stopped after "
                  f"max_iter={max_iter} epochs with relative duality gap {inner_gaps[-1]:.3g} "
                  f"> inner_tol={inner_tol:g}")
    return sol


#: the outer ``tol`` of ``fast.solve``'s second chance (a run warm-started from the point
#: that missed the self-check): the check asks the fixed-point residual of Alg. 3 at a tenth
#: of the certificate's 1e-6, which a change of ``W`` below ~1e-7 gives (measured: a change
#: below 1e-6 leaves it at 1.0-1.3e-7 on breast_cancer and digits); 1e-8 with margin. The
#: generic 1e-13 asks the outer loop for what its inner solves cannot resolve and ran every
#: such fit to ``max_outer`` (digits, linear: 200 rounds instead of ~50, twice the time).
REFINE_OUTER_TOL = 1e-8


def refine_tol(prob):
    """``fast.solve``'s refinement tolerance: :data:`REFINE_OUTER_TOL` for the outer loop;
    the generic one for a relaxed QP (there ``tol`` is the inner relative gap)."""
    from refmodels.mcodm import McODM, RelaxedMcODM

    if isinstance(prob, McODM) and not isinstance(prob, RelaxedMcODM):
        return REFINE_OUTER_TOL
    return _methods.REFINE_TOL


def _bcd_method(prob, tol, max_iter, random_state, warm_start, **options):
    """``method="bcd"``: :class:`refmodels.McODM` runs the outer loop (Alg. 3,
    :func:`solve_mcodm`), :class:`refmodels.mcodm.RelaxedMcODM` one relaxed QP
    (:func:`solve_relaxed`)."""
    from refmodels.mcodm import RelaxedMcODM

    run = solve_relaxed if isinstance(prob, RelaxedMcODM) else solve_mcodm
    return run(prob, "bcd", tol, max_iter, random_state, warm_start, **options)


def choose_method(prob, options=()):
    """McODM has one method."""
    return "bcd"


METHODS = {"bcd": _bcd_method}
SOLVERS = _methods.Solvers(METHODS, choose_method, refine_tol=refine_tol)
