"""Fast solver for MKLm and epsilon-MKL (SPEC §7; seed 003 eqs. 22-26).

.. math::

    \\min_{\\mu\\in\\Delta} J(\\mu),\\qquad
    J(\\mu) = \\max_{\\alpha,\\beta}\\ \\sum_i\\alpha_i-(1+\\varepsilon)\\sum_i\\beta_i
    - \\tfrac12 v^\\top K_\\mu v
    \\quad\\text{s.t.}\\quad e^\\top v = 0,\\ 0\\le\\alpha\\le C_1/2,\\ 0\\le\\beta\\le C_2/2,

with :math:`v = Y(\\alpha-\\beta)`, :math:`K_\\mu = \\sum_k\\mu_kK_k` and :math:`\\Delta` the
simplex: the SVMm dual (SPEC §6, seed 003 eq. 15) on the combined kernel with halved boxes
(seed 003 eqs. 23-26, the two-step scheme). :math:`J` is convex, with
:math:`\\partial J/\\partial\\mu_k = -g_k`, :math:`g_k = \\tfrac12 v^{\\star\\top}K_kv^\\star`.

Algorithm (SimpleMKL, Rakotomamonjy et al., JMLR 2008, with a Newton finish):

* **inner step**: the SVMm on :math:`K_\\mu` by the one SMO of :mod:`fast._smo` (variables
  ``[alpha; beta]`` with signs ``[y; -y]``, boxes ``[C1/2; C2/2]``), on the combined Gram
  (the base Grams are computed once), **warm-started** from the previous ``(alpha, beta)``,
  to a relative gap that follows the outer gap (loose far from the optimum, 1e-11 near it).
  Between SMO stages an active-set polish solves the KKT system of the free multipliers
  exactly (with a ratio test that sends blocking multipliers to their bounds) and is kept
  when it lowers the inner gap: on ill-conditioned combined Grams the SMO crawls, and the
  polish finishes as soon as it has found the active set;
* **direction**: SimpleMKL's reduced gradient with respect to the largest weight
  :math:`\\mu_r`: :math:`d_k = g_k - g_r` for :math:`\\mu_k>0` or :math:`g_k>g_r` (otherwise
  0; a weight at zero whose reduced gradient is positive stays there),
  :math:`d_r = -\\sum_{k\\ne r}d_k`. When no weight at zero wants to enter (the face of the
  simplex is settled) and the face has two or more kernels, the Newton direction on the
  face replaces it: the Hessian of :math:`J` is
  :math:`H_{kl} = (K_kv)_F^\\top Z (K_lv)_F`, where ``F`` are the points with a free
  multiplier and :math:`Z` the inverse of :math:`K_\\mu[F,F]` on :math:`e^\\top\\delta v_F = 0`
  (differentiating the inner KKT system :math:`(K_\\mu v)_F + b = (Yc)_F` with the bounded
  multipliers held). The reduced gradient alone converges linearly and slowly on
  ill-conditioned faces; the Newton steps converge quadratically once the inner active set
  has settled, which is what lets the solver reach the 1e-9 duality gap cheaply;
* **step**: line search on the convex :math:`\\phi(s) = J(\\mu+sd)` over the admissible
  :math:`[0, s_{max}]`, using :math:`\\phi'(s) = -g(\\mu+sd)^\\top d`: the first trial is the
  largest admissible step for the reduced gradient (SimpleMKL: a weight drops to zero)
  and :math:`\\min(1, s_{max})` for Newton; then the root of :math:`\\phi'` in the bracket by
  the Illinois method, until :math:`|\\phi'(s)| \\le 0.1|\\phi'(0)|`;
* **stopping**: the MKL duality gap :math:`P(\\mu,\\nu,b) - D(\\alpha,\\beta) \\le
  tol\\,(1+|P|)`, with :math:`P` the canonical primal of SPEC §7 at :math:`\\nu = v`, and
  :math:`D` the QCQP dual at :math:`t = \\max_k g_k` (the inner SVMm gap plus
  :math:`\\max_kg_k - \\mu^\\top g`): the same gap ``refmodels.MKLm.certify`` checks.
"""
from __future__ import annotations

import numbers
import time

import numpy as np

from . import _kernels as _K
from . import _common, _methods, _smo_run, _smo_steps

#: default relative MKL duality gap at the end
DEFAULT_TOL = 1e-9
#: default cap on the outer (line-search) iterations
DEFAULT_MAX_ITER = 500
_LS_MAX_EVALS = 40
_LS_CURVATURE = 0.1
_INNER_GAP_FLOOR = 1e-11
_INNER_GAP_CAP = 1e-4
_INNER_GAP_RATIO = 1e-3
_INNER_MAX_STAGES = 40
_INNER_MAX_SMO = 10**6
#: SMO iterations of one inner solve up to which the SMO polishes (see _InnerSVMm.__call__)
_INNER_SMO_POLISH = 10**5
#: SMO iterations over a whole MKLm solve (bounded work: a badly scaled base kernel ends
#: with status max_iter and a warning, not in a hang)
_TOTAL_MAX_SMO = 2 * 10**7
_SMO_TOL_MIN = 1e-12
_POLISH_MAX_DROPS = 50
#: stop when the MKL gap has not halved in this many outer iterations at the finest inner
#: precision (status ``stalled`` with the warning, or ``optimal`` if the point certifies:
#: :func:`_finish_not_converged`): the gap has reached its round-off floor
#: (raw pima, 48 rows, linear + RBF + quadratic kernels, Gram entries to 2.3e9: the gap
#: falls to 1e-8 in 4 iterations, then wanders in 5e-9 .. 3e-8 for the other 496 of
#: max_iter, far longer than the reference CVXPY solve takes; validation/decisions.md)
_STALL_ITERS = 8


# ---------------------------------------------------------------------------------------
# the inner SVMm on K_mu (seed 003 eq. 15 with boxes C1/2, C2/2), warm-started SMO
# ---------------------------------------------------------------------------------------
class _Point:
    """One evaluation of ``J``: the inner SVMm solution at ``mu`` and what follows from it."""

    __slots__ = ("inner_tol", "mu", "z", "alpha", "beta", "v", "Kv", "g", "J", "b", "P", "D",
                 "n_smo")


class _InnerSVMm:
    """``J(mu)``, ``g`` and the inner dual point by the SMO on ``K_mu`` (SPEC §6 general form:
    ``z = [alpha; beta]``, ``s = [y; -y]``, ``p = [-e; (1+eps) e]``, ``u = [C1/2; C2/2]``)."""

    def __init__(self, grams, y, C1, C2, eps, shrinking):
        self.grams = grams
        self.y = y
        self.m = y.shape[0]
        self.C1h, self.C2h, self.eps = 0.5 * C1, 0.5 * C2, eps
        m = self.m
        self.pt = np.concatenate([np.arange(m), np.arange(m)]).astype(np.int64)
        self.s = np.concatenate([y, -y])
        self.p = np.concatenate([-np.ones(m), np.full(m, 1.0 + eps)])
        self.u = np.concatenate([np.full(m, self.C1h), np.full(m, self.C2h)])
        self.shrinking = shrinking
        self.n_eval = 0
        self.n_smo = 0

    def combined(self, mu):
        Kmu = np.zeros((self.m, self.m))
        for k, G in enumerate(self.grams):
            if mu[k] != 0.0:
                Kmu += mu[k] * G
        return Kmu

    def __call__(self, mu, z0, gap_tol):
        """The inner SVMm at ``mu`` from ``z0``, to relative duality gap ``gap_tol``.

        SMO stages of tightening KKT tolerance, each with a bounded budget; between stages,
        an active-set polish (:meth:`_polish`) that is kept when it lowers the gap. On
        well-conditioned kernels the SMO alone finishes; on ill-conditioned ones (low-rank or
        badly scaled combined Grams with many free multipliers, where the SMO converges at
        a glacial linear rate) the polish finishes as soon as the SMO has the active set.
        """
        m, y = self.m, self.y
        Kmu = self.combined(mu)
        src = _K.RowSource(gram=Kmu)
        # below ~ round-off of the gradient the KKT violation cannot be driven
        tol_min = max(_SMO_TOL_MIN, 1e-16 * float(np.max(src.diag)) * max(self.C1h, self.C2h)
                      * np.sqrt(m))
        kkt_tol = min(1e-3, max(10.0 * gap_tol, 1e-9, tol_min))
        budget = max(20 * m, 10_000)
        z, total = np.asarray(z0, dtype=np.float64), 0
        prev_gap, stagnant = np.inf, 0
        for _ in range(_INNER_MAX_STAGES):
            # the SMO's own active-set Newton refinement between its chunks
            # (fast._smo_run.run's polish) while this solve has spent fewer than
            # _INNER_SMO_POLISH SMO iterations: on raw polynomial Grams (entries ~1e8) the
            # SMO crawls (haberman, 48 rows, one quadratic kernel: 1.5 million SMO
            # iterations before the polish of this loop found the active set; with it, a
            # tenth of the time), but its cost grows with the iterations spent, and where it
            # does not finish (raw german: 370,000-iteration stages) it only adds cost
            res = _smo_run.run(src, self.pt, self.s, self.p, self.u, z, True, kkt_tol, budget,
                               self.shrinking, polish=total < _INNER_SMO_POLISH)
            z, G, b, it, hit = res.alpha, res.G, res.b, res.n_iter, res.hit_max
            total += int(it)
            P, gap = _smo_run.generic_gap(self.s, self.p, self.u, z, G, b, self.pt, m)
            if gap <= gap_tol * (1.0 + abs(P)):
                break
            polished = self._polish(Kmu, z)
            if polished is not None and polished[2] < gap:
                z, b, gap, P = polished
                if gap <= gap_tol * (1.0 + abs(P)):
                    break
            # stop when the stages no longer reduce the gap (round-off floor or an SMO that
            # crawls): the caller sees the gap reached
            stagnant = stagnant + 1 if gap > 0.9 * prev_gap else 0
            prev_gap = min(prev_gap, gap)
            if stagnant >= (3 if kkt_tol <= tol_min else 6):
                break
            if hit:                      # slow SMO (ill-conditioned): a longer stage next
                if total >= _INNER_MAX_SMO:
                    break
                budget = min(2 * budget, _INNER_MAX_SMO - total)
            else:
                if kkt_tol <= tol_min:
                    break
                kkt_tol = max(kkt_tol / 100.0, tol_min)
        it = total
        self.n_eval += 1
        self.n_smo += int(it)
        pt = _Point()
        pt.mu, pt.z, pt.n_smo, pt.inner_tol = mu, z, int(it), gap_tol
        pt.alpha, pt.beta = z[:m].copy(), z[m:].copy()
        pt.v = y * (pt.alpha - pt.beta)
        pt.Kv = np.array([G_k @ pt.v for G_k in self.grams])          # (M, m)
        pt.g = 0.5 * (pt.Kv @ pt.v)
        lin = float(np.sum(pt.alpha) - (1.0 + self.eps) * np.sum(pt.beta))
        pt.J = lin - float(mu @ pt.g)                                  # inner dual value
        pt.D = lin - float(np.max(pt.g))                               # QCQP dual, t = max g
        pt.b = float(b)
        pt.P = self.primal(mu, pt, pt.b)
        return pt

    def _polish(self, Kmu, z):
        """Active-set polish of an SMO point: hold the bounded multipliers at their bounds and
        solve the KKT system of the free ones exactly,
        ``[K_FF e; e^T 0][v_F; b] = [(Y c)_F - K_FB v_B; -e^T v_B]`` (``c_i = 1`` for a free
        ``alpha_i``, ``1 + eps`` for a free ``beta_i``). Returns ``(z, b, gap, P)`` if the
        result lies in the boxes, else None; its optimality is judged by its duality gap."""
        m, y, C1h, C2h, eps = self.m, self.y, self.C1h, self.C2h, self.eps
        a, bt = z[:m].copy(), z[m:].copy()
        t = 1e-9 * max(1.0, C1h, C2h)
        fa = (a > t) & (a < C1h - t)
        fb = (bt > t) & (bt < C2h - t)
        a[~fa] = np.where(a[~fa] >= 0.5 * C1h, C1h, 0.0)
        bt[~fb] = np.where(bt[~fb] >= 0.5 * C2h, C2h, 0.0) if C2h > 0 else 0.0
        a0, b0 = a.copy(), bt.copy()                         # the snapped SMO point
        for _ in range(_POLISH_MAX_DROPS):
            F = np.flatnonzero(fa | fb)
            if F.size == 0:
                return None
            target = self._free_solve(Kmu, a, bt, fa, fb, F)
            if target is None:
                return None
            aF, bF = target
            # ratio test from the current (feasible) point towards the face minimiser
            da, db = aF - a[F], bF - bt[F]
            step = 1.0
            with np.errstate(divide="ignore", invalid="ignore"):
                for cur, dlt, hi in ((a[F], da, C1h), (bt[F], db, C2h)):
                    up = dlt > 0
                    if np.any(up):
                        step = min(step, float(np.min((hi - cur[up]) / dlt[up])))
                    dn = dlt < 0
                    if np.any(dn):
                        step = min(step, float(np.min(cur[dn] / -dlt[dn])))
            step = max(step, 0.0)
            a[F] += step * da
            bt[F] += step * db
            if step >= 1.0:
                a[F], bt[F] = aF, bF
                break
            # the blocking multipliers go to their bounds and leave the free set
            for arr, free, hi in ((a, fa, C1h), (bt, fb, C2h)):
                lo_hit = free & (arr <= t)
                hi_hit = free & (arr >= hi - t)
                arr[lo_hit], arr[hi_hit] = 0.0, hi
                free &= ~(lo_hit | hi_hit)
        else:
            return None
        if np.array_equal(a, a0) and np.array_equal(bt, b0):
            return None
        zn = np.concatenate([a, bt])
        v = y * (a - bt)
        Kv = Kmu @ v
        G = np.concatenate([y * Kv - 1.0, -y * Kv + 1.0 + eps])
        bb = float(_smo_steps.intercept_from_gradient(self.s, self.u, zn, G))
        P, gap = _smo_run.generic_gap(self.s, self.p, self.u, zn, G, bb, self.pt, m)
        return zn, bb, gap, P

    def _free_solve(self, Kmu, a, bt, fa, fb, F):
        """``(alpha_F, beta_F)`` minimising the inner dual on the face (bounded ones held)."""
        y, eps = self.y, self.eps
        v = y * (a - bt)
        Bm = np.ones(self.m, dtype=bool)
        Bm[F] = False
        B = np.flatnonzero(Bm)
        c = np.where(fa[F], 1.0, 1.0 + eps)
        n = F.size
        A = np.empty((n + 1, n + 1))
        A[:n, :n] = Kmu[np.ix_(F, F)]
        A[:n, n] = 1.0
        A[n, :n] = 1.0
        A[n, n] = 0.0
        rhs = np.empty(n + 1)
        rhs[:n] = y[F] * c - Kmu[np.ix_(F, B)] @ v[B]
        rhs[n] = -float(np.sum(v[B]))
        try:
            sol = np.linalg.solve(A, rhs)
        except np.linalg.LinAlgError:
            sol = np.linalg.lstsq(A, rhs, rcond=None)[0]
        if not np.all(np.isfinite(sol)):
            return None
        w = y[F] * sol[:n]                                    # alpha_i - beta_i on F
        both = fa[F] & fb[F]
        aF = np.where(both, np.maximum(w, 0.0), np.where(fa[F], w + bt[F], a[F]))
        bF = np.where(both, np.maximum(-w, 0.0), np.where(fa[F], bt[F], a[F] - w))
        return aF, bF

    def primal(self, mu, pt, b):
        """Canonical primal of SPEC §7 at ``(mu, nu = v, b)``, smallest slacks."""
        f = mu @ pt.Kv
        gamma = self.y * (f + b)
        return (float(mu @ pt.g) + self.C1h * float(np.sum(np.maximum(0.0, 1.0 - gamma)))
                + self.C2h * float(np.sum(np.maximum(0.0, gamma - 1.0 - self.eps))))

    # ---- second order: the Hessian of J on the inner active set ----------------------
    def hessian(self, pt, support):
        """``H_kl = (K_k v)_F^T Z (K_l v)_F`` for ``k, l`` in ``support`` (see module doc)."""
        tol = 1e-9 * max(1.0, self.C1h, self.C2h)
        free_a = (pt.alpha > tol) & (pt.alpha < self.C1h - tol)
        free_b = (pt.beta > tol) & (pt.beta < self.C2h - tol)
        F = np.flatnonzero(free_a | free_b)
        A = pt.Kv[support][:, F].T                                     # (|F|, |S|)
        if F.size == 0:
            return np.zeros((support.size, support.size))
        KFF = self.combined(pt.mu)[np.ix_(F, F)]
        n = F.size
        B = np.zeros((n + 1, n + 1))
        B[:n, :n] = KFF
        B[:n, n] = 1.0
        B[n, :n] = 1.0
        rhs = np.zeros((n + 1, support.size))
        rhs[:n] = A
        try:
            X = np.linalg.solve(B, rhs)
            if not np.all(np.isfinite(X)):
                raise np.linalg.LinAlgError
        except np.linalg.LinAlgError:
            X = np.linalg.lstsq(B, rhs, rcond=1e-12)[0]
        H = A.T @ X[:n]
        return 0.5 * (H + H.T)


# ---------------------------------------------------------------------------------------
# the outer reduced gradient on the simplex
# ---------------------------------------------------------------------------------------
def _slope(g, d):
    """``-g^T d`` for ``e^T d = 0``, from the centred ``g - max g`` (no cancellation between
    the large equal components of ``g`` on the face)."""
    return -float((g - np.max(g)) @ d)


def _rg_direction(mu, g):
    """SimpleMKL's descent direction (reduced gradient w.r.t. the largest weight)."""
    ref = int(np.argmax(mu))
    r = g - g[ref]
    d = np.where((mu > 0) | (r > 0), r, 0.0)
    d[ref] = 0.0
    d[ref] = -np.sum(d)
    return d


def _newton_direction(inner, pt, support):
    """Newton on the face ``{mu_S >= 0, e^T mu_S = 1}``: ``min -g^T d + 1/2 d^T H d``,
    ``e^T d = 0`` (a small Levenberg term keeps it defined when ``H`` is singular)."""
    H = inner.hessian(pt, support)
    n = support.size
    reg = 1e-10 * max(float(np.trace(H)) / n, 1e-300)
    B = np.zeros((n + 1, n + 1))
    B[:n, :n] = H + reg * np.eye(n)
    B[:n, n] = 1.0
    B[n, :n] = 1.0
    rhs = np.zeros(n + 1)
    rhs[:n] = pt.g[support]
    try:
        sol = np.linalg.solve(B, rhs)
    except np.linalg.LinAlgError:
        return None
    if not np.all(np.isfinite(sol)):
        return None
    d = np.zeros_like(pt.mu)
    d[support] = sol[:n]
    return d


def _line_search(inner, pt0, d, s0, gap_tol, done):
    """Search the convex ``phi(s) = J(mu + s d)`` on ``[0, s_max]`` (see the module doc).

    ``phi'(s) = -g(mu + s d)^T d``. The first trial is ``min(s0, s_max)``; while ``phi'`` is
    still negative there the step is extrapolated (secant on ``phi'``, at least 1.5x); once
    the root of ``phi'`` is bracketed, regula falsi with a bisection whenever the same end
    is kept twice. Stops when ``|phi'(s)| <= 0.1 |phi'(0)|`` with ``phi(s) <= phi(0)``, or
    at ``s_max`` if ``phi`` still decreases there, or when ``done(point)``. Returns the best
    point found (``pt0`` itself when none is better).
    """
    mu = pt0.mu
    neg = d < 0
    ratios = mu[neg] / -d[neg]
    s_max = float(np.min(ratios))
    block = np.flatnonzero(neg)[np.argmin(ratios)]

    def at(s):
        x = mu + s * d
        if s >= s_max:
            x[block] = 0.0
        x = np.maximum(x, 0.0)
        return x / x.sum()

    slack = 1e-12 * (1.0 + abs(pt0.J))
    dphi0 = _slope(pt0.g, d)
    target = _LS_CURVATURE * abs(dphi0)
    z = pt0.z
    best, best_abs = pt0, np.inf
    lo, f_lo, hi, f_hi = 0.0, dphi0, None, None
    lo_prev, f_lo_prev = None, None
    prev_side = 0
    s = min(s0, s_max)
    for _ in range(_LS_MAX_EVALS):
        cand = inner(at(s), z, gap_tol)
        z = cand.z
        fs = _slope(cand.g, d)
        # J is known to the inner duality gaps of both points
        decrease = cand.J <= pt0.J + slack + (pt0.P - pt0.J) + max(cand.P - cand.J, 0.0)
        if decrease and abs(fs) < best_abs:
            best, best_abs = cand, abs(fs)
        if decrease and (abs(fs) <= target or done(cand)):
            return cand
        if fs < 0:
            if s >= s_max:               # phi still decreasing at the boundary: take it
                return cand if decrease else best
            lo_prev, f_lo_prev = lo, f_lo
            lo, f_lo, side = s, fs, -1
            if hi is None:               # not bracketed yet: extrapolate
                s_new = np.inf
                if f_lo > f_lo_prev:
                    s_new = lo - f_lo * (lo - lo_prev) / (f_lo - f_lo_prev)
                s = min(s_max, max(1.5 * lo, min(s_new, 10.0 * lo)))
                continue
        else:
            hi, f_hi, side = s, fs, 1
        if hi - lo <= 1e-14 * max(s_max, 1.0):
            break
        s_new = (lo * f_hi - hi * f_lo) / (f_hi - f_lo)
        if side == prev_side or not lo < s_new < hi:
            s_new = 0.5 * (lo + hi)      # the same end kept twice: bisect
            prev_side = 0
        else:
            prev_side = side
        s = s_new
    return best


def _check_options(tol, max_iter, options):
    allowed = {"shrinking", "verbose", "newton"}
    unknown = set(options) - allowed
    if unknown:
        raise ValueError(f"unknown option(s) {sorted(unknown)}; fast MKLm accepts tol, "
                         f"max_iter, warm_start and {sorted(allowed)}")
    if tol is None:
        tol = DEFAULT_TOL
    if (not isinstance(tol, numbers.Real) or isinstance(tol, bool) or not np.isfinite(tol)
            or tol <= 0):
        raise ValueError(f"tol must be a finite number > 0 (relative MKL duality gap); "
                         f"got {tol!r}")
    if max_iter is None:
        max_iter = DEFAULT_MAX_ITER
    if isinstance(max_iter, bool) or not isinstance(max_iter, numbers.Integral) or max_iter < 1:
        raise ValueError(f"max_iter must be an integer >= 1 (outer iterations); got {max_iter!r}")
    flags = {}
    for name, default in (("shrinking", True), ("verbose", False), ("newton", True)):
        val = options.get(name, default)
        if not isinstance(val, (bool, np.bool_)):
            raise ValueError(f"{name} must be True or False; got {val!r}")
        flags[name] = bool(val)
    return float(tol), int(max_iter), flags


def _warm(warm_start, prob):
    """``(mu0, z0)`` from a Solution / dict with ``mu`` and optionally ``alpha``, ``beta``."""
    M, m = prob.M, prob.m
    mu0 = np.full(M, 1.0 / M)
    z0 = np.zeros(2 * m)
    if warm_start is None:
        return mu0, z0
    from refmodels.solution import Solution

    if isinstance(warm_start, Solution):
        vals = warm_start.variables
    elif isinstance(warm_start, dict):
        vals = warm_start
    else:
        raise ValueError("warm_start must be a Solution or a dict with 'mu' (and optionally "
                         f"'alpha', 'beta'); got {type(warm_start).__name__}")
    mu = vals.get("mu")
    if mu is not None:
        mu = np.asarray(mu, dtype=np.float64)
        if mu.shape != (M,) or not np.all(np.isfinite(mu)):
            raise ValueError(f"warm_start['mu'] must be a finite vector of shape ({M},)")
        if np.any(mu < 0) or abs(float(mu.sum()) - 1.0) > 1e-8:
            raise ValueError("warm_start['mu'] must lie on the simplex (mu >= 0, sum 1)")
        mu0 = mu / mu.sum()
    if vals.get("alpha") is not None:
        z0[:m] = _smo_run.warm_vector(vals, "alpha", m, prob.C1 / 2)
        if vals.get("beta") is not None:
            z0[m:] = _smo_run.warm_vector(vals, "beta", m, prob.C2 / 2)
    elif mu is None:
        raise ValueError("warm_start must carry 'mu' or 'alpha'")
    return mu0, z0


def solve_rg(prob, tol=None, max_iter=None, random_state=None, warm_start=None, **options):
    """Solve ``rm.MKLm`` / ``rm.EpsMKL`` by reduced gradient on ``mu`` with a warm-started SMO
    (``method`` None, ``"rg"`` or ``"reduced-gradient"``: the same algorithm).

    Parameters
    ----------
    tol : float > 0, relative MKL duality gap ``(P - D) / (1 + |P|)`` at the end (default
        1e-9; ``prob.certify`` checks it at 1e-6).
    max_iter : int >= 1, outer iterations (line searches; default 500).
    random_state : ignored (deterministic).
    warm_start : Solution (or dict) with ``mu`` on the simplex and/or ``alpha`` in
        ``[0, C1/2]``, ``beta`` in ``[0, C2/2]`` (e.g. the solution for nearby C1, C2).
    shrinking : bool, SMO shrinking (default True).
    newton : bool, Newton steps on a settled face (default True; False gives plain SimpleMKL).
    verbose : bool, print the outer iterations.

    Returns
    -------
    Solution with ``variables`` ``mu``, ``alpha``, ``beta``, ``b``; ``coef`` = nu = v,
    ``intercept`` = b, ``objective`` the canonical primal of SPEC §7 at ``(mu, nu, b)``,
    ``status`` ``"optimal"``, ``"max_iter"`` or ``"stalled"`` (the latter two with a
    ``ConvergenceWarning``; with the default ``tol``, a stall at the gap's round-off floor
    whose point certifies is ``"optimal"``: ``info["floor_certificate"]``), ``n_iter``
    outer iterations, ``info``: ``gap`` (relative MKL duality gap), ``inner_solves``,
    ``smo_iterations``, ``newton_steps``.
    """
    from refmodels.solution import Solution
    from refmodels.svmm import intercept_from_kkt_band

    default_tol = tol is None
    tol, max_iter, flags = _check_options(tol, max_iter, options)
    t0 = time.perf_counter()
    y = np.asarray(prob.y, dtype=np.float64)
    grams = [np.ascontiguousarray(G, dtype=np.float64) for G in prob.grams]
    mu, z0 = _warm(warm_start, prob)
    inner = _InnerSVMm(grams, y, prob.C1, prob.C2, prob.eps, flags["shrinking"])
    floor = min(_INNER_GAP_FLOOR, 1e-2 * tol)

    def rel_gap(q):
        return (q.P - q.D) / (1.0 + abs(q.P))

    def inner_tol_for(gap, newton):
        """Inner SVMm precision: a fraction of the gap expected after the step (``gap`` for
        the reduced gradient, ``gap**2`` in the quadratic regime of Newton)."""
        expected = min(gap, gap * gap) if newton else gap
        return min(_INNER_GAP_CAP, max(floor, _INNER_GAP_RATIO * expected))

    def done(q):
        return rel_gap(q) <= tol

    pt = inner(mu, z0, _INNER_GAP_CAP if warm_start is None else floor)
    status, it, n_newton = "max_iter", 0, 0
    # the best point seen (the gap at round-off level is noise: a later point can be worse)
    # and the outer iterations since the gap last halved (stagnation: see _STALL_ITERS)
    best, best_gap, ref_gap, since = pt, rel_gap(pt), rel_gap(pt), 0
    while True:
        gap = rel_gap(pt)
        if gap < best_gap:
            best, best_gap = pt, gap
        if gap <= 0.5 * ref_gap:
            ref_gap, since = gap, 0
        if flags["verbose"]:
            print(f"[fast MKLm] it={it} J={pt.J:.12g} gap={gap:.3e} mu={pt.mu}")
        if gap <= tol:
            status = "optimal"
            break
        if since >= _STALL_ITERS and pt.inner_tol <= floor:
            status = "stalled"
            break
        want = inner_tol_for(gap, False)
        inner_part = (pt.P - pt.J) / (1.0 + abs(pt.P))
        if pt.inner_tol > want and inner_part > 0.1 * gap:
            pt = inner(pt.mu, pt.z, want)       # same mu, tighter inner solve (not counted)
            continue
        if it >= max_iter or inner.n_smo >= _TOTAL_MAX_SMO:
            break
        it += 1
        since += 1
        mu, g = pt.mu, pt.g
        d = _rg_direction(mu, g)
        s0 = np.inf
        support = np.flatnonzero(mu > 0)
        entering = np.any((mu <= 0) & (g > g[int(np.argmax(mu))]))
        if flags["newton"] and support.size >= 2 and not entering:
            dn = _newton_direction(inner, pt, support)
            if dn is not None and _slope(g, dn) < 0:
                d, s0 = dn, 1.0
                n_newton += 1
                want = inner_tol_for(gap, True)
        new = pt
        if _slope(g, d) < 0 and np.any(d < 0):
            new = _line_search(inner, pt, d, s0, want, done)
            if new is pt and s0 == 1.0:          # Newton failed: the reduced gradient
                d = _rg_direction(mu, g)
                if _slope(g, d) < 0 and np.any(d < 0):
                    new = _line_search(inner, pt, d, np.inf, want, done)
        if new is pt:
            if pt.inner_tol > floor:            # no progress at this inner precision
                pt = inner(pt.mu, pt.z, max(floor, 1e-3 * pt.inner_tol))
                continue
            status = "stalled"
            break
        pt = new
    if best_gap < rel_gap(pt):
        pt = best
    gap = rel_gap(pt)
    mu = pt.mu
    f = mu @ pt.Kv
    b = float(intercept_from_kkt_band(y, f, pt.alpha, pt.beta, inner.C1h, inner.C2h, prob.eps))
    P_band = inner.primal(mu, pt, b)
    if not P_band <= pt.P:                   # keep the SMO's b when it is at least as good
        b, P_band = pt.b, pt.P
    gap = (P_band - pt.D) / (1.0 + abs(P_band))
    variables = {"mu": mu.copy(), "alpha": pt.alpha, "beta": pt.beta, "b": b}
    info = {"gap": gap, "tol": tol, "inner_solves": inner.n_eval,
            "smo_iterations": inner.n_smo, "newton_steps": n_newton,
            "dual_objective": pt.D, "J": pt.J}
    sol = Solution(objective=P_band, coef=pt.v.copy(), intercept=b, variables=variables,
                   status=status, solver="fast:mkl-rg", form="fast",
                   time=time.perf_counter() - t0, n_iter=it, info=info)
    if status != "optimal":
        if gap <= tol:
            sol.status = "optimal"
        else:
            _finish_not_converged(prob, sol, it, max_iter, inner.n_smo >= _TOTAL_MAX_SMO,
                                  floor_check=default_tol)
    sol.time = time.perf_counter() - t0
    return sol


def _finish_not_converged(prob, sol, it, max_iter, spent, floor_check):
    """The status of a solve that stopped above its tolerance (``sol.status`` ``"max_iter"``
    or ``"stalled"``), with the one warning.

    A stall (no progress at the finest inner precision: the gap at its round-off floor) is
    only a candidate, as the SMO's stop at the round-off floor of its gradient
    (:func:`fast._smo_run.check_floor_stop`): with the default ``tol`` and ``m <=
    AUTO_REFERENCE_MAX_M`` the full certificate decides. A point that certifies is
    ``"optimal"`` (no warning; ``fast.solve``'s self-check then confirms it), else it stays
    ``"stalled"`` and the warning names the certificate's worst residual. In the sweep
    (``validation/sweep_scales.py --family MKLm --n 20 --seed 9300``) seeds 9300 (raw, cubic
    kernel, relative MKL gap 4.2e-7 at the floor) and 9311 (raw, quadratic, 1.9e-9) ended
    ``stalled`` although their certificates hold (duality gap 4.6e-7 and 3.2e-9 of the
    certificate's 1e-6). ``sol.info["floor_certificate"]`` records the verdict."""
    from refmodels.base import AUTO_REFERENCE_MAX_M

    cert_part = ""
    if sol.status == "stalled" and floor_check and prob.m <= AUTO_REFERENCE_MAX_M:
        cert = prob.certify(sol, reference=False)
        sol.info["floor_certificate"] = bool(cert.ok)
        if cert.ok:
            sol.status = "optimal"
            return
        worst, value = cert.worst
        cert_part = f", and the point fails the certificate ({worst} {value:.3e})"
    budget = (f"; the SMO budget of {_TOTAL_MAX_SMO} iterations is spent" if spent else "")
    _common.not_converged_warning(
        f"{type(prob).__name__}: the reduced gradient stopped ({sol.status}) after {it} outer "
        f"iterations (max_iter={max_iter}){budget} with relative MKL duality gap "
        f"{sol.info['gap']:.3e} above the tolerance tol={sol.info['tol']:.3e} asked"
        f"{cert_part}{_common.scale_hint(prob)}", stacklevel=4)


def choose_method(prob, options=()):
    """MKLm has one method."""
    return "rg"


METHODS = {"rg": solve_rg, "reduced-gradient": solve_rg}
SOLVERS = _methods.Solvers(METHODS, choose_method)
