"""A safeguarded primal Newton for kernel ODM in coefficient space (SPEC §4).

Chapelle (2007), "Training a support vector machine in the primal": with ``w = F^T beta``
and the outputs ``o = K beta`` (``K`` the Gram), ODM's ``f_O`` (seed 002 eq. 18) reads

.. math::

    f(\\beta) = \\tfrac12\\beta^\\top K\\beta + c\\sum_i\\big[\\max(0, 1-\\theta-\\gamma_i)^2
    + \\mu\\max(0, \\gamma_i-1-\\theta)^2\\big],\\qquad \\gamma = y\\circ K\\beta,
    \\quad c = \\frac{\\lambda}{m(1-\\theta)^2}.

It is convex, continuously differentiable and piecewise quadratic. Its gradient is
``K r`` with ``r = beta - Y (zeta - beta_d)``, where ``zeta = 2c xi`` and
``beta_d = 2c mu eps`` are the multipliers of eq. 14 at the current margins; ``||r||_K =
||w - F^T Y (zeta - beta_d)||`` is exactly the certificate's stationarity residual.

**Newton step.** On the active set ``S = L u H`` (``L = {gamma_i < 1-theta}``, ``H =
{gamma_i > 1+theta}``) the generalized Hessian gives the minimiser of the current quadratic
piece in closed form: ``beta_i = 0`` off ``S`` and, on ``S``,

.. math::

    (K_{SS} + A_S)\\,\\beta_S = y_S\\circ t_S,\\qquad A_i = a\\ (i\\in L),\\ a/\\mu\\ (i\\in H),
    \\quad t_i = 1-\\theta\\ (L),\\ 1+\\theta\\ (H),

with ``a = 1/(2c)`` of eq. 15: the dual's optimality conditions restricted to ``S``. When
the Gram is within a few hundred columns of a low-rank matrix on the scale of ``a`` (a
pivoted Cholesky ``K ~ V V^T`` with ``trace(K - V V^T) <= 16 min(a, a/mu)``, rank at most
``m / 4``: the smooth kernels where the DCD crawls), the system is solved by conjugate
gradients preconditioned with ``V_S V_S^T + A_S`` (inverted by Woodbury, an ``r x r``
Cholesky): a dozen ``O(m^2)`` products per step instead of an ``O(|S|^3)`` factorisation
(spambase 3,000 x 57, RBF gamma = 1/57, lam = 2^16: rank 63, 9 CG steps a piece, several
times faster than with Cholesky factors; validation/decisions.md). Otherwise one Cholesky
of the SPD block ``K_SS + A_S`` per step (LAPACK through scipy), or, when at most
``|S| / 16`` points changed their set since the last factorisation, a Woodbury update of
that factor (:class:`fast._kernel_newton_piece._PieceSolver`; typical of the last steps).

**Safeguard.** Plain full steps need not converge: they did not in 40 steps on a
300-point RBF instance at ``lam = 2^20`` (``tests/test_kernel_newton.py``; a previous
prototype reported the same at ``lam = 2^12`` on 3,000 points). The step is therefore
taken along ``d = beta_new - beta`` with an **exact line search**: ``f(beta + t d)`` is a
1-D convex piecewise quadratic whose derivative is piecewise linear with at most two
breakpoints per point (where a margin crosses ``1 -+ theta``); the breakpoints are sorted
and the derivative's root is found in one sweep. Every step then strictly lowers ``f``;
once the active set is the optimal one the piece's minimiser is the optimum. A run that
stops without meeting the tolerance (no further decrease, a failed factorisation on badly
scaled data, ``max_iter``) says so (``converged`` False) and ``fast/odm.py`` finishes it
with the DCD, warm-started from the returned multipliers.

**Stop, and which multipliers.** Two representations of a point are scored in the
certificate's scaled residuals, and the better is returned:

* (A) ``coef = beta`` with the multipliers of eq. 14 at its margins: slack stationarity
  and complementarity hold exactly, the residual is ``||r||_K / (1 + ||w|| + ||w_d||)``.
  Computing ``r`` amplifies the rounding of ``o = K beta`` by ``2c``: at ``lam = 2^20``
  on 3,000 points it cannot go below ~2e-7.
* (B) ``coef = x``, the last piece's minimiser, with the multipliers read off it
  (``zeta_L = y_L x_L``, ``beta_H = -y_H x_H``): ``coef = Y (zeta - beta)`` exactly, and
  the residual (slack stationarity, complementarity) is at the solve's backward error
  (1e-10 to 1e-13 in the same cases).

The run stops when the better one is at most ``tol`` (default 1e-9, a hundredth of the
self-check's 1e-7); a run that stalls at rounding level is accepted up to ``STALL_TOL``.

**Polynomial kernels: the explicit feature map.** ``(gamma x^T z + c_0)^p`` is ``Phi Phi^T``
with ``Phi`` the ``D = C(d+p, p)`` weighted monomials of degree ``<= p``
(:func:`poly_features`). When ``D < m`` the Gram is singular, and on raw features (entries of
1e11) ``K_SS + A_S`` with a shift ``a`` of 1e-4 is not SPD in floating point: the Newton
above failed to factor it and the DCD crawled (raw breast_cancer). There the same Newton
runs in the ``D``-dimensional feature space (:func:`minimize_features`: ``D x D`` systems, a
Cholesky of the Jacobi-scaled Hessian, a QR least-squares solve if it fails), and its point
is mapped back to coefficients and refined in coefficient space. On raw features at weak
regularization the residual through ``K coef`` has a floor no point beats (the rounding of
the products times ``2c``, :func:`rounding_floor`); the run then ends at once with
``stop = "optimal set"`` and ``fast/odm.py`` says so instead of running the DCD.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg as sla

from ._kernel_newton_piece import (_PieceSolver, _residual_eq14, _residual_piece, _sets,
                                   line_search, loss_terms, lowrank_factor)

#: relative stationarity residual (certificate scaling) at which the Newton stops
DEFAULT_TOL = 1e-9
#: Newton steps before giving up (the caller then falls back to the DCD)
DEFAULT_MAX_ITER = 60


#: a stalled Newton (no further decrease: rounding level) is accepted up to this residual
STALL_TOL = 1e-8


def minimize(K_times, K_block, y, c, mu, theta, beta0=None, tol=DEFAULT_TOL,
             max_iter=DEFAULT_MAX_ITER, refine=1, line_search_on=True, K_cols=None,
             lowrank=None):
    """Minimise ``f(beta)`` (module docstring). ``K_times(v) = K v``; ``K_block(idx) =
    K[idx][:, idx]`` (dense); ``K_cols(idx) = K[:, idx]`` (optional: then a step whose
    set changed little updates the last factor instead of a new one). ``lowrank``
    (optional): a ``V`` with ``K - V V^T`` small on the scale of the shift
    (:func:`lowrank_factor`); each piece is then solved by CG preconditioned with it
    instead of a Cholesky of the active block (``O(m^2)`` per CG step against
    ``O(|S|^3)``). Returns ``(beta, o, zeta,
    beta_d, info)`` with ``o = K beta``
    and the multipliers of the better of two representations (eq. 14 at the margins, or
    read off the last piece's minimiser); ``info``: ``n_iter`` (Newton steps),
    ``converged``, ``residual``, ``stop``, ``active`` (size of ``S``), ``line_steps``,
    ``residuals`` (history), ``representation``. ``line_search_on=False`` takes plain full
    Newton steps (no safeguard; for tests showing why the line search is there)."""
    m = y.shape[0]
    lo, hi = 1.0 - theta, 1.0 + theta
    a = 1.0 / (2.0 * c)
    beta = np.zeros(m) if beta0 is None else np.array(beta0, dtype=np.float64)
    o = K_times(beta)
    steps, history = [], []
    stop, n_iter, n_active = "max_iter", 0, 0
    f_prev = np.inf
    best = None                      # (residual, beta, o, zeta, beta_d, representation)
    solver = _PieceSolver(K_times, K_block, K_cols, y, a, mu, lo, hi, refine=refine,
                          lowrank=lowrank)
    solves = []
    while True:
        resA, f, zA, bA = _residual_eq14(beta, o, y, c, mu, lo, hi, K_times)
        history.append(resA)
        if best is None or resA < best[0]:
            best = (resA, beta, o, zA, bA, "eq. 14")
        if best[0] <= tol:
            stop = "tol"
            break
        if n_iter >= max_iter:
            break
        if not (f < f_prev):
            stop = "no decrease"
            break
        f_prev = f
        gamma = y * o
        Lm, Hm = _sets(gamma, lo, hi)
        S = np.flatnonzero(Lm | Hm)
        n_active = int(S.size)
        n_iter += 1
        try:
            x, how = solver.solve(Lm, Hm)
        except np.linalg.LinAlgError:
            # K_SS + A_S is SPD in exact arithmetic; rounding broke it (a far below the
            # kernel's scale: badly scaled features). Stop: the caller's DCD finishes,
            # with its scale warning if it cannot either
            stop = "factorisation failed"
            n_iter -= 1
            break
        solves.append(how)
        ox = K_times(x)
        resB, zB, bB = _residual_piece(x, ox, Lm, Hm, y, c, mu, lo, hi)
        history.append(resB)
        if resB < best[0]:
            best = (resB, x, ox, zB, bB, "piece")
        if best[0] <= tol:                # the piece's minimiser is the optimum
            stop = "tol"
            steps.append(1.0)
            break
        delta = x - beta
        q = ox - o
        dKb = float(delta @ o)
        dKd = max(float(delta @ q), 0.0)
        if line_search_on:
            t, _ = line_search(o, q, y, beta, delta, dKb, dKd, c, mu, lo, hi)
        else:                          # the plain full Newton step (tests: it can cycle)
            t, f_prev = 1.0, np.inf
        if not (t > 0.0) or not np.isfinite(t):
            stop = "no descent direction"
            break
        steps.append(t)
        beta = beta + t * delta
        o = K_times(beta)              # exact outputs (one O(m^2) product; no drift)
    residual, beta, o, zeta, bd, rep = best
    converged = residual <= tol or (stop != "max_iter" and residual <= max(tol, STALL_TOL))
    info = {"n_iter": n_iter, "converged": bool(converged), "residual": float(residual),
            "stop": stop, "active": n_active, "line_steps": [float(v) for v in steps],
            "tol": tol, "residuals": [float(v) for v in history], "representation": rep,
            "solves": solves, "lowrank": None if lowrank is None else int(lowrank.shape[1])}
    return beta, o, zeta, bd, info


def solve_odm(prob, tol=None, max_iter=None, warm_start=None, path=None, cache_size=None):
    """Kernel ODM by :func:`minimize`; returns a :class:`refmodels.Solution` (status
    ``"optimal"`` when the stop held, else ``"max_iter"``, without a warning: the caller
    decides on the fallback) carrying ``coef = beta``, the multipliers of eq. 14
    (``zeta = 2c xi``, ``beta = 2c mu eps``) and ``info["dual_objective"]`` (``D_max`` at
    them, through the Gram) for the self-check.

    ``path``: ``"gram"`` (the full Gram, built once and kept on the problem) or
    ``"cache"`` (kernel products computed in chunks, the active block formed per step);
    ``"auto"``/None: :func:`fast._kernels.choose_path`. ``warm_start``: a Solution carrying
    ``coef`` of shape ``(m,)``. A polynomial kernel accepted by :func:`explicit_features`
    is solved by :func:`minimize_features` (``info["features"]``); if that run found the
    optimal set but not ``tol`` (rounding of the Gram's products), the status is
    ``"inaccurate"`` and ``info["rounding_floor"]`` estimates that rounding.
    """
    import time

    from refmodels.solution import Solution

    from . import _common
    from . import _kernels as _K

    if prob.kernel.is_linear:
        raise ValueError("method='newton' is the kernel (coefficient-space) Newton; for the "
                         "linear kernel use method='tron' (the same Newton in w-space)")
    _, tol, max_iter = _common.check_common("newton", ("newton",), tol, max_iter,
                                         DEFAULT_TOL, DEFAULT_MAX_ITER)
    cache_size = _common.check_cache_size(cache_size)
    path = _K.choose_path(prob, path, cache_size, allowed=("gram", "cache"))
    t0 = time.perf_counter()
    m, y = prob.m, prob.y
    c, mu, th = prob.margin_loss.params    # the declared loss: ODM's (c, mu, theta), eq. 18
    beta0 = None
    if warm_start is not None:
        coef = getattr(warm_start, "coef", None)
        if coef is None or np.shape(coef) != (m,) or not np.all(np.isfinite(coef)):
            raise ValueError(f"warm_start must be a Solution of this problem carrying coef "
                             f"of shape ({m},) with finite values")
        beta0 = np.array(coef, dtype=np.float64)
    if path == "gram":
        G = _K.build_gram(prob)
        if not (G.flags.c_contiguous and G.dtype == np.float64):
            G = np.ascontiguousarray(G, dtype=np.float64)

        def K_times(v):
            return G @ v

        def K_block(idx):
            return G[np.ix_(idx, idx)]

        def K_cols(idx):
            return G[:, idx]
        lowrank = lowrank_factor(prob) if explicit_features(prob) is None else None
    else:
        kparams = _K.kernel_params(prob.kernel)
        Xd = _K.dense_data(prob.X)
        kernel = prob.kernel

        def K_times(v):
            return _K.kernel_matvec(kernel, Xd, v, kparams)

        def K_block(idx):
            return np.array(kernel.gram(Xd[idx]), dtype=np.float64)

        def K_cols(idx):
            return np.asarray(kernel.cross(Xd, Xd[idx]), dtype=np.float64)
        lowrank = None          # each CG step would cost a pass over the kernel: Cholesky
    Phi = explicit_features(prob)
    if Phi is not None:
        # a polynomial kernel of rank D < m: the Newton in its feature space
        w0 = None if beta0 is None else Phi.T @ beta0
        beta, o, zeta, beta_d, info = minimize_features(Phi, y, c, mu, th, w0=w0, tol=tol,
                                                        max_iter=max_iter, K_times=K_times)
        del info["w_features"]                # a D-vector: not kept on the Solution
    else:
        beta, o, zeta, beta_d, info = minimize(K_times, K_block, y, c, mu, th, beta0=beta0,
                                               tol=tol, max_iter=max_iter, K_cols=K_cols,
                                               lowrank=lowrank)
    xi, eps = loss_terms(y * o, 1.0 - th, 1.0 + th, mu)
    objective = 0.5 * float(beta @ o) + c * float(xi @ xi + mu * (eps @ eps))
    coef_d = y * (zeta - beta_d)
    dual = {"zeta": zeta, "beta": beta_d}
    dual_objective = prob.dual_value_from_gram(dual, K_times(coef_d))
    info.update({"path": path, "method": "newton", "objective": float(objective),
                 "dual_objective": float(dual_objective),
                 "warm_start": warm_start is not None})
    status = "optimal" if info["converged"] else "max_iter"
    if not info["converged"] and info["stop"] == "optimal set":
        # the optimum's active set is found; what is left is the rounding of K x: say how
        # large it is (the floor the certificate's own products meet)
        status = "inaccurate"
        info["rounding_floor"] = rounding_floor(prob, beta, zeta, beta_d, c, K_times, path)
    return Solution(objective=float(objective), coef=beta, intercept=0.0,
                    variables={"zeta": zeta, "beta": beta_d}, status=status,
                    solver="fast:newton", form="fast", time=time.perf_counter() - t0,
                    n_iter=info["n_iter"], info=info)


# ---------------------------------------------------------------------------------------
# the polynomial kernel through its explicit feature map
# ---------------------------------------------------------------------------------------
#: the explicit-map Newton is used when the polynomial kernel's feature dimension ``D`` is
#: below ``m`` (the Gram then has rank ``<= D < m``: ``K_SS + A_S`` is a shift of a singular
#: matrix), at most :data:`EXPLICIT_MAX_DIM`, and either
#:
#: * ``max(diag K) / min(a, a/mu) >= EXPLICIT_MIN_RATIO``: that shift is too small for the
#:   coefficient-space Cholesky (its condition is at least this ratio; raw breast_cancer,
#:   quadratic kernel: 4e9 at lam = 1, and the factorisation failed or lost every digit
#:   from lam = 2^8 on), or
#: * ``D <= EXPLICIT_SMALL_FRAC m``: the ``D x D`` systems are then far cheaper than the
#:   ``|S| x |S|`` ones.
#:
#: Elsewhere (features in [0, 1], ``D`` near ``m``) the coefficient-space Newton is kept:
#: it was faster there (spambase 3,000 x 57 in [0, 1], quadratic kernel, 1,711 features;
#: breast_cancer 569 x 30, 496 features; validation/decisions.md).
EXPLICIT_MIN_RATIO = 1e6
EXPLICIT_SMALL_FRAC = 1.0 / 8
EXPLICIT_MAX_FRAC = 1.0
EXPLICIT_MAX_DIM = 2000
#: a final point whose residual stays above this (the certificate's tolerance) cannot be
#: certified: the coefficients returned are then those whose outputs ``K x`` are closest to
#: the feature-space optimum's ``Phi w`` (see :func:`minimize_features`)
EXPLICIT_CERT_LEVEL = 1e-6
#: ... when the outputs ``K x`` of its coefficients are more than this away from ``Phi w``
#: (the margins live on the scale of ``1 -+ theta``; below it the classifier is the same)
EXPLICIT_MAX_DEV = 1e-3
#: coefficient-space refinement rounds of the final point (each one ``O(m^2)`` product)
EXPLICIT_REFINE = 3
#: once the optimal piece is found, its refined point is accepted up to this residual
#: (the self-check's level, ``0.1 x`` the certificate's ``1e-6``, which then decides):
#: the residual is the rounding of ``K x`` times ``2c`` there, not a distance to the
#: optimum that more steps could shorten
EXPLICIT_ACCEPT = 1e-7


def poly_feature_dim(kernel, d):
    """Dimension of the explicit feature map of ``(gamma x^T z + coef0)^p`` on ``d``
    features: the monomials of degree ``<= p`` (``C(d+p, p)``), of degree ``p`` alone when
    ``coef0 = 0`` (``C(d+p-1, p)``); None for another kernel."""
    from math import comb

    from refmodels.kernels import Polynomial

    if not isinstance(kernel, Polynomial):
        return None
    p = kernel.degree
    return comb(d + p - 1, p) if kernel.coef0 == 0.0 else comb(d + p, p)


def poly_features(kernel, X):
    """The explicit feature map ``Phi`` (m x D) of the polynomial kernel, ``Phi Phi^T = K``:
    by the multinomial theorem ``(gamma x^T z + c_0)^p = sum_alpha (p; alpha_0, alpha) c_0^
    {alpha_0} gamma^{|alpha|} x^alpha z^alpha`` over ``alpha_0 + |alpha| = p``, so
    ``phi_alpha(x) = sqrt((p; alpha_0, alpha) c_0^{alpha_0} gamma^{|alpha|}) x^alpha``.
    Built degree by degree (each monomial of degree ``k`` is one of degree ``k - 1`` times a
    feature), ``O(m D)``, on the features times ``sqrt(gamma)`` (weights ``(p; alpha_0,
    alpha) c_0^{alpha_0}``): a monomial of ``sqrt(gamma) x`` is at most ``sqrt(k(x, x))``,
    finite whenever the kernel is (refused otherwise, by ``kernel.diag``), where ``x^alpha``
    alone could overflow and ``gamma^k`` underflow to a dropped block of features."""
    from math import comb, factorial

    X = np.ascontiguousarray(X, dtype=np.float64)
    kernel.diag(X)                                # overflow: a ValueError naming the kernel
    m, d = X.shape
    p, c0 = kernel.degree, kernel.coef0
    X = X * np.sqrt(kernel.gamma)
    D = poly_feature_dim(kernel, d)
    Phi = np.empty((m, D))
    # monomials of degree k as (column block, last index, multinomial denominators)
    prev_cols = np.ones((m, 1))
    prev_last = np.zeros(1, dtype=np.int64)
    prev_den = [()]                               # the exponents of each monomial
    out = 0
    for k in range(p + 1):
        if k > 0:
            blocks, lasts, dens = [], [], []
            for j in range(d):
                keep = np.flatnonzero(prev_last <= j)          # nondecreasing indices
                blocks.append(prev_cols[:, keep] * X[:, j:j + 1])
                lasts.append(np.full(keep.size, j, dtype=np.int64))
                dens += [prev_den[t] + (j,) for t in keep]
            prev_cols = np.concatenate(blocks, axis=1)
            prev_last = np.concatenate(lasts)
            prev_den = dens
            if k == 1:
                prev_last = np.arange(d, dtype=np.int64)
        if c0 == 0.0 and k < p:                  # no such monomials (poly_feature_dim)
            continue
        weight = comb(p, k) * c0 ** (p - k)
        mult = np.array([factorial(k) / np.prod([factorial(e.count(j)) for j in set(e)])
                         if e else 1.0 for e in prev_den])
        Phi[:, out:out + prev_cols.shape[1]] = prev_cols * np.sqrt(weight * mult)
        out += prev_cols.shape[1]
    assert out == D
    return Phi


def explicit_features(prob):
    """``Phi`` of :func:`poly_features` when :func:`minimize_features` applies to ``prob``
    (a polynomial kernel with ``D < m``, ``D <= EXPLICIT_MAX_DIM``, ``Phi`` within the
    default cache size (200 MB), and a small shift or a small ``D``: see
    :data:`EXPLICIT_MIN_RATIO`), else None. Kept on the problem."""
    from . import _kernels as _K

    from ._common import DEFAULT_CACHE_MB

    D = poly_feature_dim(prob.kernel, prob.X.shape[1])
    if D is None or D >= EXPLICIT_MAX_FRAC * prob.m or D > EXPLICIT_MAX_DIM \
            or 8.0 * D * prob.m > DEFAULT_CACHE_MB * 2**20:          # Phi in the cache's budget
        return None
    if D > EXPLICIT_SMALL_FRAC * prob.m:
        a = prob.a
        G = _K.gram_if_built(prob)
        kmax = float(np.max(np.diag(G) if G is not None
                            else prob.kernel.diag(_K.dense_data(prob.X))))
        if not kmax >= EXPLICIT_MIN_RATIO * min(a, a / prob.mu):
            return None
    from ._common import kept

    return kept(prob, "poly_features",
                lambda: poly_features(prob.kernel, _K.dense_data(prob.X)), on=prob.data_key)


class _FeaturePiece:
    """The minimiser of a quadratic piece in feature space: ``H w = Phi_S^T A_S^{-1} b_S``
    with ``H = I + Phi_S^T A_S^{-1} Phi_S`` (``A_S^{-1} = 2c`` on ``L``, ``2c mu`` on
    ``H``): the primal Newton system of ``f_O`` (eq. 18) on the piece, the same minimiser as
    ``(K_SS + A_S) x_S = b_S`` through ``x_S = A_S^{-1} (b_S - Phi_S w)`` (Woodbury). ``H``
    is kept and updated by the rank-``k`` change of the points that changed their set
    (``k D^2`` flops instead of ``|S| D^2``), and factored by a Cholesky of its Jacobi
    scaling (LAPACK's accuracy is then that of the best diagonal scaling, van der Sluis);
    a failed factorisation (raw features: ``H``'s scaled condition beyond ``1/eps``) is
    replaced by a least-squares solve of ``[I; A_S^{-1/2} Phi_S] w ~ [0; A_S^{-1/2} b_S]``
    (QR, the condition of ``H`` not squared)."""

    def __init__(self, Phi, y, c, mu, lo, hi):
        self.Phi, self.y = Phi, y
        self.c, self.mu, self.lo, self.hi = c, mu, lo, hi
        self.H, self.weights = None, None
        self.factor, self.scale = None, None

    def weights_of(self, Lm, Hm):
        return np.where(Lm, 2.0 * self.c, np.where(Hm, 2.0 * self.c * self.mu, 0.0))

    def set_piece(self, Lm, Hm):
        wts = self.weights_of(Lm, Hm)
        Phi = self.Phi
        if self.H is not None:
            C = np.flatnonzero(wts != self.weights)
        if self.H is None or C.size > 0.25 * max(1, np.count_nonzero(wts)):
            S = np.flatnonzero(wts)
            PS = Phi[S]
            H = PS.T @ (PS * wts[S, None])
            H[np.diag_indices_from(H)] += 1.0
        else:
            PC = Phi[C]
            H = self.H + PC.T @ (PC * (wts[C] - self.weights[C])[:, None])
        self.H, self.weights = H, wts
        self.b = np.where(Lm, self.y * self.lo, np.where(Hm, self.y * self.hi, 0.0))
        dg = np.sqrt(np.maximum(np.diag(H), 1.0))
        self.scale = dg
        try:
            self.factor = sla.cho_factor(H / np.outer(dg, dg), lower=True,
                                         check_finite=False)
        except (np.linalg.LinAlgError, ValueError):
            self.factor = None

    def solve_w(self, rhs_m):
        """``H^{-1} Phi^T (weights * rhs_m)``: the ``w`` of the piece for the right-hand side
        ``rhs_m`` (on ``S``)."""
        wts = self.weights
        g = self.Phi.T @ (wts * rhs_m)
        if self.factor is not None:
            w = sla.cho_solve(self.factor, g / self.scale, check_finite=False) / self.scale
            r = g - self.H @ w                          # one step of refinement
            w += sla.cho_solve(self.factor, r / self.scale, check_finite=False) / self.scale
            if np.all(np.isfinite(w)):
                return w
        S = np.flatnonzero(wts)
        sw = np.sqrt(wts[S])
        D = self.Phi.shape[1]
        A = np.vstack([np.eye(D), sw[:, None] * self.Phi[S]])
        rhs = np.concatenate([np.zeros(D), sw * rhs_m[S]])
        return sla.lstsq(A, rhs, lapack_driver="gelsd", check_finite=False)[0]

    def coef(self, w, rhs_m):
        """``x = A^{-1} (rhs - Phi w)`` on ``S``, 0 off it."""
        return np.where(self.weights > 0, self.weights * (rhs_m - self.Phi @ w), 0.0)


def minimize_features(Phi, y, c, mu, theta, w0=None, tol=DEFAULT_TOL,
                      max_iter=DEFAULT_MAX_ITER, K_times=None):
    """``f_O`` (eq. 18) minimised in the explicit feature space of ``Phi`` (``w`` of
    dimension ``D``): Chapelle's primal Newton, each step the minimiser of the current
    quadratic piece (:class:`_FeaturePiece`) safeguarded by the exact line search of
    :func:`fast._kernel_newton_piece.line_search` (the same 1-D piecewise quadratic, with
    ``o = Phi w``, ``q = Phi delta``, ``K``-products replaced by dot products in feature
    space). The run
    ends when a piece's minimiser lies in its own piece (the sets of its margins are the
    ones it was solved with: it is the optimum of ``f_O``), at ``max_iter`` steps, or when
    ``f`` no longer decreases.

    The point returned is the coefficient vector ``x`` of the last piece (``x_S = A_S^{-1}
    (b_S - Phi_S w)``: eq. 14's multipliers at the margins of ``w``, ``x = Y (zeta -
    beta)``), refined in coefficient space with ``K_times`` (``K v``, the products the
    certificate uses): ``r = b_S - (K_SS + A_S) x_S`` and ``x += `` the piece's solve of
    ``r``, up to :data:`EXPLICIT_REFINE` rounds, keeping the best of
    :func:`fast._kernel_newton_piece._residual_piece` (slack stationarity and
    complementarity at the margins ``y K x``). Its floor is the rounding of ``K x`` times
    ``2c``: with Gram entries of 1e11 (raw breast_cancer, quadratic kernel) and ``2c`` of 1
    and more, no point certifies.
    There (residual above :data:`EXPLICIT_CERT_LEVEL`) the minimum-norm ``x`` with
    ``Phi^T x = w`` (least squares) is returned instead when its outputs ``K x`` are closer
    to ``Phi w`` (``info["representation"] = "min-norm"``, multipliers of eq. 14 at its
    margins): the classifier the coefficients give is then the optimum's.
    Returns ``(x, Kx, zeta, beta_d, info)``; ``info["stop"]`` is ``"optimal set"`` when the
    optimal piece was found; ``info["w_features"]`` is the feature-space ``w``."""
    m, D = Phi.shape
    lo, hi = 1.0 - theta, 1.0 + theta
    w = np.zeros(D) if w0 is None else np.array(w0, dtype=np.float64)
    piece = _FeaturePiece(Phi, y, c, mu, lo, hi)
    steps, history = [], []
    stop, n_iter = "max_iter", 0
    f_prev = np.inf
    while True:
        o = Phi @ w
        gamma = y * o
        Lm, Hm = _sets(gamma, lo, hi)
        xi, eps = loss_terms(gamma, lo, hi, mu)
        f = 0.5 * float(w @ w) + c * float(xi @ xi + mu * (eps @ eps))
        grad = w - 2.0 * c * (Phi.T @ (y * (xi - mu * eps)))
        history.append(float(np.linalg.norm(grad)) / (1.0 + float(np.linalg.norm(w))))
        if n_iter >= max_iter:
            break
        if not (f < f_prev):
            stop = "no decrease"
            break
        f_prev = f
        n_iter += 1
        piece.set_piece(Lm, Hm)
        w_new = piece.solve_w(piece.b)
        gn = y * (Phi @ w_new)
        Ln, Hn = _sets(gn, lo, hi)
        if np.array_equal(Ln, Lm) and np.array_equal(Hn, Hm):
            w = w_new
            steps.append(1.0)
            stop = "optimal set"
            break
        delta = w_new - w
        q = Phi @ delta
        t, _ = line_search(o, q, y, w, delta, float(delta @ w), float(delta @ delta), c,
                           mu, lo, hi)
        if not (t > 0.0) or not np.isfinite(t):
            stop = "no descent direction"
            break
        steps.append(t)
        w = w + t * delta
    if stop != "optimal set":
        o = Phi @ w
        gamma = y * o
        Lm, Hm = _sets(gamma, lo, hi)
        piece.set_piece(Lm, Hm)
    b = piece.b
    x = piece.coef(w, b)
    best = None
    for k in range(EXPLICIT_REFINE + 1):
        Kx = K_times(x) if K_times is not None else Phi @ (Phi.T @ x)
        res, zeta, bd = _residual_piece(x, Kx, Lm, Hm, y, c, mu, lo, hi)
        history.append(res)
        if best is None or res < best[0]:
            best = (res, x, Kx, zeta, bd)
        if res <= tol or k == EXPLICIT_REFINE:
            break
        r = np.where(piece.weights > 0, b - Kx - np.where(piece.weights > 0, x, 0.0)
                     / np.where(piece.weights > 0, piece.weights, 1.0), 0.0)
        dw = piece.solve_w(r)
        x = x + piece.coef(dw, r)
    res, x, Kx, zeta, bd = best
    rep = "piece"
    if res > EXPLICIT_CERT_LEVEL:
        # no certificate at this point: return the coefficients that best represent the
        # optimum's outputs Phi w instead. x = A^{-1} (b - Phi w) reproduces w only up to
        # the solve's error, which K amplifies (raw breast_cancer, lam = 2^20: training
        # accuracy 0.37 from K x against 0.996 from Phi w); the least-squares x of
        # Phi^T x = w (min-norm, O(m D^2)) keeps K x = Phi w to rounding (0.996)
        ow = Phi @ w
        dev = float(np.max(np.abs(Kx - ow)))
        devm = np.inf
        if dev > EXPLICIT_MAX_DEV:              # the margins moved: worth the O(m D^2)
            xm = sla.lstsq(Phi.T, w, lapack_driver="gelsd", check_finite=False)[0]
            Kxm = K_times(xm) if K_times is not None else Phi @ (Phi.T @ xm)
            devm = float(np.max(np.abs(Kxm - ow)))
        if devm < dev:
            resm, _, zm, bm = _residual_eq14(xm, Kxm, y, c, mu, lo, hi,
                                             K_times if K_times is not None
                                             else (lambda v: Phi @ (Phi.T @ v)))
            res, x, Kx, zeta, bd, rep = resm, xm, Kxm, zm, bm, "min-norm"
            history.append(resm)
    converged = res <= tol or (stop == "optimal set" and res <= max(tol, EXPLICIT_ACCEPT))
    info = {"n_iter": n_iter, "converged": bool(converged), "residual": float(res),
            "stop": stop, "active": int(np.count_nonzero(Lm | Hm)),
            "line_steps": [float(v) for v in steps], "tol": tol,
            "residuals": [float(v) for v in history], "representation": rep,
            "features": int(D), "cholesky": piece.factor is not None, "w_features": w}
    return x, Kx, zeta, bd, info


def rounding_floor(prob, coef, zeta, beta_d, c, K_times, path):
    """An estimate of the slack-stationarity residual that the rounding of the margins
    ``y K coef`` alone leaves at ``coef``, in the certificate's scaling: ``2c eps || |K|
    |coef| || / (1 + ||(zeta, beta)||)`` (each margin carries up to ``eps sum_j |K_ij
    coef_j|``; ``2c`` turns it into a multiplier). ``|K|`` from the Gram when it is built,
    else ``K`` itself (the polynomial kernel of even degree is nonnegative)."""
    from . import _kernels as _K

    G = _K.gram_if_built(prob) if path == "gram" else None
    ac = np.abs(coef)
    Kac = np.abs(G) @ ac if G is not None else np.abs(K_times(ac))
    eps = np.finfo(np.float64).eps
    return float(2.0 * c * eps * np.linalg.norm(Kac)
                 / (1.0 + np.hypot(np.linalg.norm(zeta), np.linalg.norm(beta_d))))
