"""SVMm / epsilon-SVM on the linear kernel (SPEC §6; seed 003 eqs. 6, 7, 14, 15), in the
space of the features: ``w = X^T Y (alpha - beta)`` is carried, never an m x m matrix.

The dual (seed 003 eq. 15, as a minimisation), over the ``2 m`` variables
``x = [alpha; beta]`` (copy ``alpha_i`` with sign ``+1``, ``beta_i`` with ``-1``):

.. math::

    \\min_x\\ \\tfrac12 \\|X^\\top Y(\\alpha-\\beta)\\|^2 - e^\\top\\alpha
    + (1+\\varepsilon)e^\\top\\beta
    \\quad\\text{s.t.}\\quad 0\\le\\alpha\\le C_1,\\ 0\\le\\beta\\le C_2,
    \\ [\\,y^\\top(\\alpha-\\beta) = 0\\,],

the equality only with an intercept (its multiplier is the intercept ``b``). Its Hessian
``Z Z^T`` with ``Z = [Y X; -Y X]`` has rank at most ``d``.

:func:`ipm` solves it by Mehrotra's primal-dual interior-point method (Mehrotra, SIAM J.
Optim. 2(4), 1992; Nocedal and Wright, *Numerical Optimization*, 2nd ed., Alg. 16.4; the
iteration is :func:`fast._polish.mehrotra_box`, shared with the polish's
:func:`fast._polish.interior_point_qp`) on the scaled box ``0 <= xi <= 1``: each Newton
system ``(Z_s Z_s^T + H) dx = r`` (``H`` diagonal) is solved through the
Sherman-Morrison-Woodbury identity with the ``d x d`` matrix ``K = I + X^T diag(c) X``
(Ferris and Munson, *Interior-point methods for massive support vector machines*, SIAM J.
Optim. 13(3), 2002), by a Cholesky factorisation of ``K`` and, in the last phase, by the QR
factorisation of ``[diag(sqrt(c)) X; I]`` (``K`` is never formed: its entries span ~1e20
there), with one step of iterative refinement: O(m d^2) per step, 15-60 steps whatever
``C1``. The equality is a row of the Newton system (its residual shrinks with every step,
to round-off). The interior point is then crossed over to the face of the optimum: the
variables whose multiplier exceeds their distance to a bound by a wide margin go there, and
:func:`fast._polish.active_set_qp` (with the equality) re-solves the free ones, and then
those whose gradient points into the box; the point returned is the one with the smallest
duality gap (primal objective at ``w`` and the best intercept, :func:`best_intercept`,
against the dual), ``info["gap"]``.

Its cost grows as ``d^2``: :func:`fast.svmm.choose_method` takes it for the linear kernel
up to ``fast.svmm.IPM_MAX_D`` features. On raw features at a large ``C1`` (Gram entries
1e7 and more, ``C1 >= 2^10``) its Newton systems lose their digits before the gap is
small; :func:`ipm` then runs again in a robust form (:func:`_ipm`: ``w`` carried along the
steps, the Newton systems by :func:`_split_solver`), which reaches the round-off of
evaluating the gap at ``X^T coef`` (raw breast_cancer: ~5e-7 at ``C1 = 2^12``, ~4e-6 at
``2^16``); where that is above ``fast.svmm.IPM_OK_GAP`` ``fast.svmm`` hands the problem to
the SMO and keeps the better of the two points.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

from ._polish import active_set_qp, crossover_masks, mehrotra_box
from ._smo_run import repair_equality

#: the interior-point method's step cap
IPM_MAX_STEPS = 80
#: stop when the complementarity ``2 n mu`` is below this times ``1 + |objective|`` and the
#: residuals are at round-off (the certificate asks 1e-6 of the objective)
IPM_GAP_REL = 1e-13
#: ... or when the merit (the worst of the relative gap and residuals) has not improved for
#: ``IPM_STALL`` steps once it is below ``IPM_STALL_MERIT`` (the last phase); the best
#: iterate is then returned, converged if its merit is below ``IPM_ACCEPT``
IPM_STALL = 4
IPM_STALL_MERIT = 1e-7
#: ... and at once when the merit jumps above ``IPM_BLOWUP`` times the best (once the best
#: is below ``IPM_STALL_MERIT_LOOSE``)
IPM_BLOWUP = 1e4
IPM_STALL_MERIT_LOOSE = 1e-4
IPM_ACCEPT = 1e-10
#: the Newton systems by a QR factorisation of the m x d rows while ``m d`` is at most this
#: (else by the Cholesky factorisation of the d x d normal matrix)
QR_MAX_ENTRIES = 5e7
#: ... and only in the last phase (merit below ``QR_MERIT``): before, the Cholesky
#: factorisation of the formed matrix is accurate enough and ~3x cheaper
QR_MERIT = 1e-6
#: the crossover's active set: at most ``CROSS_MAX`` variables (O(n^3) per step), at most
#: ``CROSS_ROUNDS`` rounds
CROSS_MAX = 1000
#: ... within ``CROSS_WORK`` times the multiply-adds of the interior-point steps, plus
#: ``CROSS_FLOOR`` (counted as :func:`fast._polish.active_set_qp` counts them): where the
#: interior point did not converge (raw features, Gram entries ~1e7, C1 >= 2^16) a crossover
#: from its point walks thousands of bounds (breast_cancer, m = 569; validation/decisions.md)
CROSS_WORK = 20.0
CROSS_FLOOR = 5e8
CROSS_ROUNDS = 4
#: ... stopping once the relative duality gap is below ``CROSS_DONE``; a bound variable
#: joins when its gradient points inward by more than ``CROSS_GTOL (1 + max |c|)``
CROSS_DONE = 1e-13
CROSS_GTOL = 1e-9
#: the crossover puts a variable on a bound when its distance is below ``CROSS_RATIO`` times
#: its multiplier (scaled units)
CROSS_RATIO = 1e-3
#: the robust retry (:func:`ipm`, ``retry_above``): the Newton systems' variables of the
#: ``SPLIT_PER_D (d + 1)`` smallest ``h_j / (Q_s)_jj`` (of those below 1) are solved apart
#: (:func:`_split_solver`)
SPLIT_PER_D = 4
#: ... and its point's free variables matched to its carried ``w`` in ``MATCH_ROUNDS``
#: least-squares rounds (:func:`_match_w`)
MATCH_ROUNDS = 2


def _split_solver(R, pt, q, h, F, zt, zm):
    """The solver of ``(Z_s Z_s^T + H) dx = r`` (``H = diag(h)``) of :func:`ipm`'s robust
    retry: the variables ``F`` (where ``h`` is small against the diagonal of ``Q_s``) apart.

    Woodbury gives ``dx_j = (r_j - (Z_s v)_j) / h_j``: on a small ``h_j`` (a free variable,
    or every variable at ``C1 >= 2^10`` on raw features, where the diagonal of ``Q_s``
    reaches 1e17) the two terms cancel and the direction loses its digits. Here the rest
    ``B`` goes by Woodbury with ``K_B = I + Z_B^T H_B^{-1} Z_B`` (its ``h`` large: no
    cancellation) and ``F`` by its Schur complement (block elimination of
    ``[H, Z_s; Z_s^T, -I] [dx; v] = [r; 0]``):

    .. math::

        (H_F + Z_F K_B^{-1} Z_F^\\top)\\, dx_F = r_F - Z_F K_B^{-1} Z_B^\\top H_B^{-1} r_B,
        \\quad v = K_B^{-1} (Z_F^\\top dx_F + Z_B^\\top H_B^{-1} r_B),
        \\quad dx_B = H_B^{-1} (r_B - Z_B v),

    two Cholesky factorisations (``d x d`` and ``|F| x |F|``), one step of refinement.
    None when one fails (the caller then takes Woodbury).
    """
    m = R.m
    isF = np.zeros(h.size, bool)
    isF[F] = True
    hB = np.where(isF, np.inf, h)
    ccB = np.bincount(pt, weights=q * q / hB, minlength=m)
    KB = R.gram_weighted(ccB)
    KB[np.diag_indices_from(KB)] += 1.0
    try:
        LB = sla.cholesky(KB, lower=True, check_finite=False)
    except np.linalg.LinAlgError:
        return None
    ZF = q[F, None] * R.Xd[pt[F]]
    W = sla.solve_triangular(LB, ZF.T, lower=True, check_finite=False)
    S = W.T @ W
    S[np.diag_indices_from(S)] += h[F]
    try:
        LS = sla.cho_factor(S, lower=True, check_finite=False)
    except np.linalg.LinAlgError:
        return None

    def kb(r):
        return sla.cho_solve((LB, True), r, check_finite=False)

    def solve1(r):
        gB = zt(np.where(isF, 0.0, r / hB))
        rhs = r[F] - ZF @ kb(gB)
        dF = sla.cho_solve(LS, rhs, check_finite=False)
        v = kb(ZF.T @ dF + gB)
        x = (r - zm(v)) / hB
        x[F] = dF
        return x

    def msolve(r):
        x = solve1(r)
        res = r - zm(zt(x)) - h * x
        return x + solve1(res)

    return msolve


class _Rows:
    """``X`` (dense or CSR) with the products of the method: ``X t``, ``X^T r``,
    ``X^T diag(c) X``."""

    def __init__(self, X):
        if sp.issparse(X):
            self.X = sp.csr_matrix(X, dtype=np.float64)
            self.sparse = True
        else:
            self.X = np.ascontiguousarray(X, dtype=np.float64)
            self.sparse = False
        self.m, self.d = self.X.shape
        # the dense rows for the QR form of the Newton systems (small m d only)
        self.qr_ok = self.m * self.d <= QR_MAX_ENTRIES
        if self.qr_ok:
            self.Xd = self.X.toarray() if self.sparse else self.X
            self.eye = np.eye(self.d)

    def dot(self, t):
        return np.asarray(self.X @ t).ravel()

    def tdot(self, r):
        return np.asarray(self.X.T @ r).ravel()

    def row_sqnorms(self):
        if self.sparse:
            return np.asarray(self.X.multiply(self.X).sum(axis=1), dtype=np.float64).ravel()
        return np.einsum("ij,ij->i", self.X, self.X)

    def gram_weighted(self, c):
        if self.sparse:
            A = self.X.T @ sp.diags(c) @ self.X
            return np.asarray(A.toarray(), dtype=np.float64)
        Xc = self.X * c[:, None]
        return self.X.T @ Xc


def ipm(X, y, C1, C2, eps, has_eq, max_steps=IPM_MAX_STEPS, gap_rel=IPM_GAP_REL,
        retry_above=np.inf):
    """The dual of the module doc by Mehrotra's method; returns
    ``(alpha, beta, b, info)`` (``b`` = 0 without the equality).

    Variables with an empty box (``C1 = 0`` or ``C2 = 0``) are left out (fixed at 0).
    Scaled variables ``xi_j = x_j / u_j`` in ``[0, 1]``; with ``q_j = s_j u_j y_{i(j)}``
    (``s_j = +-1`` the copy's sign, ``u_j`` its upper bound) the scaled Hessian is
    ``Q_s = diag(q) X_p X_p^T diag(q)`` (``X_p`` the rows of the copies' points), the
    scaled linear term ``c_s = u * [-1, 1 + eps]`` and the equality ``q^T xi = 0``.

    When the relative duality gap of the point is above ``retry_above`` (raw features at a
    large ``C1``: the steps lose their digits, see :func:`_ipm`), the method is run again
    in its robust form (``robust=True``) and the better point kept (``info["robust"]``;
    ``info["first_gap"]`` the first run's gap when the robust one's is kept, else
    ``info["robust_gap"]`` the robust one's).
    """
    out = _ipm(X, y, C1, C2, eps, has_eq, max_steps, gap_rel, robust=False)
    if out[3]["gap"] > retry_above:
        again = _ipm(X, y, C1, C2, eps, has_eq, max_steps, gap_rel, robust=True)
        again[3]["robust"] = True
        if again[3]["gap"] < out[3]["gap"]:
            again[3]["first_gap"] = out[3]["gap"]
            return again
        out[3]["robust_gap"] = again[3]["gap"]
    return out


def _ipm(X, y, C1, C2, eps, has_eq, max_steps, gap_rel, robust):
    """:func:`ipm`'s method. ``robust``: two changes for raw features at a large ``C1``
    (breast_cancer, australian at ``C1 >= 2^10``: Gram entries 1e7 and more, columns
    scaled from 0.1 to 25,000):

    * ``w = Z_s^T xi`` is carried along the steps (``w += ap Z_s^T dx``), not summed anew
      from ``xi``: that sum cancels (terms ``C1 |x_i|`` ~ 1e7, ``|w|`` ~ 50) and leaves the
      gradient ``Q_s xi + c_s`` with an error ~1e-5 of the multipliers' scale, the floor
      of the dual residual. The margins at the carried ``w`` are exact to round-off; its
      distance to ``Z_s^T xi`` (~1e-6) enters the duality gap only squared
      (``P(w) - D(alpha, beta)`` = complementarity ``+ 1/2 |w - X^T Y nu|^2``);
    * the Newton systems by :func:`_split_solver` (dense rows, ``m d <= QR_MAX_ENTRIES``).

    Its point is then put on its face (the crossover's rule) and its free variables matched
    to the carried ``w`` (:func:`_match_w`): the ``w`` of the point returned is
    ``X^T Y (alpha - beta)``, as always.
    """
    R = _Rows(X)
    m = R.m
    y = np.asarray(y, dtype=np.float64)
    pts, sgs, us, cs_ = [], [], [], []
    for C, sign, lin in ((C1, 1.0, -1.0), (C2, -1.0, 1.0 + eps)):
        if C > 0:
            pts.append(np.arange(m))
            sgs.append(np.full(m, sign))
            us.append(np.full(m, C))
            cs_.append(np.full(m, lin))
    alpha, beta = np.zeros(m), np.zeros(m)
    if not pts:
        return alpha, beta, 0.0, {"n_iter": 0, "converged": True, "mu": 0.0, "merit": 0.0,
                                  "n_crossover": 0, "gap": 0.0, "equality_residual": 0.0}
    pt = np.concatenate(pts)
    u = np.concatenate(us)
    q = np.concatenate(sgs) * u * y[pt]
    cs = u * np.concatenate(cs_)
    n = pt.size
    a = q if has_eq else None

    def zt(v):                      # Z_s^T v  (d)
        return R.tdot(np.bincount(pt, weights=q * v, minlength=m))

    def zm(t):                      # Z_s t  (n)
        return q * R.dot(t)[pt]

    cscale = float(np.max(np.abs(cs)))
    ascale = float(np.sum(np.abs(a))) if a is not None else 1.0
    best, best_merit, since = None, np.inf, 0
    ipm_work = 0.0                   # multiply-adds of the steps (the crossover's budget)
    rnorm_q = 1e-16 * np.abs(q) * np.sqrt(R.row_sqnorms())[pt] * max(1.0, np.sqrt(R.d))
    wv = None                        # w = Z_s^T xi at the last gradient

    def grad(xi):
        nonlocal wv
        if not robust or wv is None:
            wv = zt(xi)
        return zm(wv) + cs

    def moved(ap, dx):
        nonlocal wv
        wv = wv + ap * zt(dx)

    def stop(steps, xi, t, z, w, yeq, gq, rd, rp, mu):
        nonlocal best, best_merit, since
        f = float(0.5 * wv @ wv + cs @ xi)
        # the worst of the relative gap and the relative residuals: the iterate kept is the
        # best one (late steps can lose ground once the Woodbury solves reach round-off)
        # (the dual residual relative to the size of the terms of Q_s xi, whose round-off
        # bounds it: raw features put it at ~1e-8 of max |Q_s xi|)
        merit = max(2 * n * mu / (1.0 + abs(f)),
                    float(np.max(np.abs(rd))) / (1.0 + cscale + float(np.max(np.abs(gq - cs)))
                                                 + 1e16 * float(np.max(rnorm_q))
                                                 * float(rnorm_q @ xi)),
                    abs(rp) / (1.0 + ascale))
        if not merit <= np.inf:
            merit = np.inf                   # NaN (overflowed products): never the best...
        if best is None or merit < best_merit:   # ... but the first point is kept
            best, best_merit, since = (xi, t, z, w, yeq, mu, wv), merit, 0
        else:
            since += 1
        return (best_merit <= gap_rel or steps >= max_steps
                or (since >= IPM_STALL and best_merit <= IPM_STALL_MERIT)
                # the iterates have left the central path (a Newton direction lost to
                # round-off: the dual residual jumps from 1e-8 to 1): nothing more to gain
                or (merit > IPM_BLOWUP * best_merit and best_merit <= IPM_STALL_MERIT_LOOSE))

    qdiag = q * q * R.row_sqnorms()[pt]      # the diagonal of Q_s
    split_k = SPLIT_PER_D * (R.d + 1)

    def factor(h):
        nonlocal ipm_work
        if robust and R.qr_ok:
            F = np.flatnonzero(h < qdiag)
            if F.size > split_k:
                F = np.sort(F[np.argsort(h[F] / qdiag[F], kind="stable")[:split_k]])
            ms = _split_solver(R, pt, q, h, F, zt, zm) if F.size else None
            if ms is not None:
                ipm_work += float(m) * R.d * R.d + 10.0 * n * R.d + float(F.size) ** 3 / 3
                return ms
        cc = np.bincount(pt, weights=q * q / h, minlength=m)
        if R.qr_ok and best_merit <= QR_MERIT:
            # K = I + A^T A = R^T R with A = diag(sqrt(cc)) X, R from the QR factorisation of
            # [A; I] (never forming K: its entries span ~1e20 once the barrier terms vanish,
            # and the small ones are lost in the sum; the triangular factor keeps them)
            Rf = sla.qr(np.vstack([np.sqrt(cc)[:, None] * R.Xd, R.eye]), mode="r",
                        overwrite_a=True, check_finite=False)[0][:R.d]

            def ksolve(r):
                v = sla.solve_triangular(Rf, r, trans="T", check_finite=False)
                return sla.solve_triangular(Rf, v, check_finite=False)
        else:
            K = R.gram_weighted(cc)
            K[np.diag_indices_from(K)] += 1.0
            try:
                L = sla.cho_factor(K, lower=True, check_finite=False)

                def ksolve(r):
                    return sla.cho_solve(L, r, check_finite=False)
            except np.linalg.LinAlgError:
                ev, V = np.linalg.eigh(0.5 * (K + K.T))
                ev = np.maximum(ev, 1.0)

                def ksolve(r):
                    return V @ ((V.T @ r) / ev)
        ipm_work += float(m) * R.d * R.d + 10.0 * n * R.d

        def msolve(r):
            # (Z_s Z_s^T + diag(h))^{-1} r by Woodbury, plus one step of refinement
            x = r / h
            x -= zm(ksolve(zt(x))) / h
            res = r - zm(zt(x)) - h * x
            y1 = res / h
            y1 -= zm(ksolve(zt(y1))) / h
            return x + y1

        return msolve

    steps = mehrotra_box(grad, factor, stop, n, a, moved=moved if robust else None)[5]
    xi, t, z, w, yeq, mu, w_c = best
    converged = best_merit <= IPM_ACCEPT
    sv = np.concatenate(sgs) * y[pt]             # the equality's coefficients, unscaled
    c = np.concatenate(cs_)

    def split(x):
        al, be = np.zeros(m), np.zeros(m)
        if C1 > 0:
            al = x[:m].copy()
        if C2 > 0:
            be = x[m if C1 > 0 else 0:][:m].copy()
        return al, be

    def score(x, b):
        """(relative duality gap, intercept): the intercept the better of ``b`` and the
        primal's best at this ``w`` (:func:`best_intercept`)."""
        al, be = split(x)
        P, D, _, o = primal_dual(R, y, al, be, C1, C2, eps, b if has_eq else 0.0)
        if has_eq:
            b2 = best_intercept(o, y, C1, C2, eps)
            P2 = primal_dual(R, y, al, be, C1, C2, eps, b2)[0]
            if P2 < P:
                P, b = P2, b2
        return (P - D) / max(abs(P), 1e-300), (b if has_eq else 0.0)

    x = np.clip(u * xi, 0.0, u)
    best_x = x.copy()
    best_gap, best_b = score(x, yeq)
    if robust:
        # the face of the interior point, its free variables matched to the carried w
        xm = x.copy()
        low, upp = crossover_masks(xi, t, z, w, CROSS_RATIO)
        xm[low] = 0.0
        xm[upp] = u[upp]
        xm = _match_w(R, pt, sv, xm, u, w_c, has_eq)
        gap, b = score(xm, yeq)
        if gap < best_gap:
            best_x, best_gap, best_b = xm, gap, b
    # crossover (as fast._polish.interior_point_qp's): a variable whose multiplier exceeds
    # its distance to a bound goes there; the free rest is finished by the active set (a
    # Newton step on the free set, a release if a multiplier is wrong), then the bound
    # variables whose gradient points into the box join; the margins of the free points
    # then hold exactly, where the interior point leaves them ~1e-11 off (x C1 = 2^20 in
    # the primal objective). The point kept is the one with the smallest duality gap.
    # by a wide margin: at a degenerate optimum (more than d + 1 points free) the central
    # path ends inside the optimal face, and a free variable can be small with a multiplier
    # of the same size when mu is not yet at round-off (sonar, C1 = 2^20: xi = 0.004,
    # z = 0.008; a variable at its bound: xi ~ 1e-10, z ~ 1e5)
    lo_, up = crossover_masks(xi, t, z, w, CROSS_RATIO)
    x[lo_] = 0.0
    x[up] = u[up]
    if has_eq:
        x = _repair(x, sv, u)
    n_cross = 0
    gtol = CROSS_GTOL * (1.0 + float(np.max(np.abs(c))))
    for _ in range(CROSS_ROUNDS):
        if best_gap <= CROSS_DONE:
            break
        wf = R.tdot(np.bincount(pt, weights=sv * x, minlength=m))
        g = sv * R.dot(wf)[pt] + c
        gl = g + (yeq * sv if has_eq else 0.0)
        # first round: the variables the interior point leaves free (the bound ones are
        # fixed: their gradient at the snapped point is not yet to be trusted); then also
        # the bound variables whose gradient points into the box
        F = np.flatnonzero(((x > 0.0) & (x < u)) | (n_cross > 0) & (
            ((x <= 0.0) & (gl < -gtol)) | ((x >= u) & (gl > gtol))))
        if F.size == 0 or F.size > CROSS_MAX:
            break
        Zf = sv[F, None] * _take_rows(R, pt[F])
        xF, change = active_set_qp(Zf @ Zf.T, g[F], x[F], np.zeros(F.size), u[F],
                                   seq=sv[F] if has_eq else None,
                                   budget=CROSS_WORK * ipm_work + CROSS_FLOOR)
        n_cross += 1
        if change < 0.0:
            x[F] = xF
        # the equality's multiplier at the new point: from its free variables
        wf = R.tdot(np.bincount(pt, weights=sv * x, minlength=m))
        g = sv * R.dot(wf)[pt] + c
        fr = (x > 0.0) & (x < u)
        if has_eq and fr.any():
            yeq = float(np.median(-g[fr] / sv[fr]))
        gap, b = score(x, yeq)
        if gap < best_gap:
            best_x, best_gap, best_b = x.copy(), gap, b
        if not change < 0.0 and n_cross > 1:
            break
    alpha, beta = split(best_x)
    info = {"n_iter": steps, "converged": converged, "mu": float(mu), "merit": best_merit,
            "n_crossover": n_cross, "gap": float(best_gap),
            "equality_residual": float(abs(y @ (alpha - beta))) if has_eq else 0.0}
    return alpha, beta, float(best_b), info


def best_intercept(o, y, C1, C2, eps):
    """The intercept minimising the primal objective at fixed ``w`` (``o = X w``):
    ``sum_i C1 max(0, 1 - y_i(o_i + b)) + C2 max(0, y_i(o_i + b) - 1 - eps)`` is convex and
    piecewise linear in ``b``; its slope starts at ``-C1 m_+ - C2 m_-`` and jumps at the
    kinks ``y_i - o_i`` (by ``C1``) and ``y_i (1 + eps) - o_i`` (by ``C2``); the minimiser
    is the kink where the slope turns nonnegative. O(m log m)."""
    kinks = np.concatenate([y - o, y * (1.0 + eps) - o])
    jumps = np.concatenate([np.full(o.size, C1), np.full(o.size, C2)])
    order = np.argsort(kinks, kind="stable")
    slope = -C1 * np.sum(y > 0) - C2 * np.sum(y < 0) + np.cumsum(jumps[order])
    k = int(np.searchsorted(slope, 0.0, side="left"))
    return float(kinks[order[min(k, order.size - 1)]])


def primal_dual(R, y, alpha, beta, C1, C2, eps, b):
    """``(P, D, w, o)`` at ``w = X^T Y (alpha - beta)`` and the intercept ``b``: SPEC §6's
    primal objective and the dual's (eq. 15, maximisation form)."""
    w = R.tdot(y * (alpha - beta))
    o = R.dot(w)
    g = y * (o + b)
    ww = float(w @ w)
    P = 0.5 * ww + C1 * float(np.sum(np.maximum(0.0, 1.0 - g))) \
        + C2 * float(np.sum(np.maximum(0.0, g - 1.0 - eps)))
    D = float(np.sum(alpha)) - (1.0 + eps) * float(np.sum(beta)) - 0.5 * ww
    return P, D, w, o


def _match_w(R, pt, sv, x, u, w_target, has_eq, rounds=MATCH_ROUNDS):
    """The robust form's point made one with its carried ``w``: ``x`` (unscaled, in the box,
    its bound variables already on their bounds) moved on its free variables ``F`` by the
    least change with ``Z^T x = w_target`` (``Z`` the rows ``sv_j x_{pt_j}``) and, with
    the equality, ``sv^T x = 0``: the minimum-norm solution of the ``(d + 1) x |F|``
    system, ``rounds`` times (the residual is computed anew from ``x``, as ``X^T coef`` is),
    then clipped to the box. The interior point's ``x`` is dual-optimal to round-off, but
    its ``X^T Y (alpha - beta)`` is ~1e-8 away from the carried ``w`` (margins ~1e-4 off on
    raw breast_cancer at ``C1 = 2^12``, the objective at ``coef`` 2e-5 off): here the free
    variables absorb that difference (1e-10 left)."""
    F = np.flatnonzero((x > 0.0) & (x < u))
    if F.size == 0:
        return x
    x = x.copy()
    A = (sv[F, None] * _take_rows(R, pt[F])).T
    if has_eq:
        A = np.vstack([A, sv[F]])
    for _ in range(rounds):
        r = w_target - R.tdot(np.bincount(pt, weights=sv * x, minlength=R.m))
        if has_eq:
            r = np.append(r, -float(sv @ x))
        x[F] = np.clip(x[F] + np.linalg.lstsq(A, r, rcond=None)[0], 0.0, u[F])
    return x


def _repair(x, sv, u):
    """Put a box-feasible ``x`` back on ``sv^T x = 0`` (moved by the crossover's snapping):
    through the free variables, the most interior first, then
    :func:`fast._smo_run.repair_equality` for what is left."""
    x = x.copy()
    for j in np.argsort(-np.minimum(x, u - x)):
        r = float(sv @ x)
        if r == 0.0 or not (0.0 < x[j] < u[j]):
            break
        x[j] = min(max(x[j] - r / sv[j], 0.0), u[j])
    return repair_equality(x, sv, u)


def _take_rows(R, idx):
    """The rows ``idx`` of ``X``, dense."""
    Xr = R.X[idx]
    return np.asarray(Xr.toarray() if sp.issparse(Xr) else Xr, dtype=np.float64)
