"""The SMO's Python driver: options, warm starts, the tolerance-refinement and Newton-polish
stages around the numba core (:func:`fast._smo.smo_solve`), and the named result.

The driver knows no family: it takes the dual in LIBSVM's general form (per-variable point
``pt``, sign ``s``, linear term ``p``, box ``u``, optional equality) and a kernel-row source
(:func:`fast._kernels.row_source`); the family files (``fast/svm.py``, ``fast/svmm.py``,
``fast/mklm.py``) map a problem to it and its result back to a Solution.
"""
from __future__ import annotations

import time
from collections import namedtuple

import numpy as np

from . import _common
from ._polish import IPM_STEP_COST, active_set_qp, interior_point_qp
from ._smo import DEFAULT_MIN_ITER, DEFAULT_TOL, smo_solve
from ._smo_steps import _POLISH, _RECON, _RESUME, _SHRINK, intercept_from_gradient
from ._kernels import ROW_MISS, ROW_REQ

#: the Newton polish after a chunk may spend ``POLISH_WORK * n * (SMO iterations so far)``
#: flops (counted as :func:`fast._polish.active_set_qp` counts them, ``4 |F|^3`` per step).
#: With 200 the polish costs about what the SMO has already spent (the cost of an SMO
#: iteration per variable against the polish's counted flops per second, measured on KEEL
#: haberman and yeast3: validation/decisions.md). The former rule (``10 n`` times the last
#: chunk's iterations) refused the polish once the free set passed ~300 (haberman, yeast3
#: C >= 2^12: ``max_iter``); with 200 the SVM paths C = 2^0 ... 2^20 certify 11/11 on both
#: (50: 9/11 on haberman)
POLISH_WORK = 200.0

#: the SMO runs in chunks of ``max(20 n, CHUNK_MIN)`` iterations, each ended (if above the
#: tolerance) by the polish, doubling up to ``max(20 n, CHUNK_LATER)``. A first chunk of
#: 20,000 delayed the polish to ``100 n`` iterations on small sets: a 5-fold RBF ODML grid
#: search on haberman (196 points a fold, lam up to 2^20) took 78 s at tol 1e-3 and 97 s at
#: the default tol; with 2,000, 51 s and 65 s, the same choices. Without the doubling a
#: hopeless run (quadratic kernel on raw haberman, C = 2^20: ``max_iter``) gave up after
#: 49 polishes instead of 15, in 17.8 s instead of 7.6 s, each polish's budget growing with
#: the iterations spent (validation/decisions.md)
CHUNK_MIN = 2000
CHUNK_LATER = 20_000

#: with the equality, :func:`newton_polish` hands ``null_rel = NULL_REL`` to
#: :func:`fast._polish.active_set_qp`: a null-space component below ``1e-6`` of the free
#: gradient is not followed to the box. On haberman, SVM with intercept (RBF gamma = 1/d,
#: [0,1]) C = 2^18, 2^20 warm along the path: certified with 1e-6 and 1e-7, ``max_iter``
#: with 1e-8 and with 0 (the former rule); SVMm there 9/11 -> 11/11 points, and faster
#: (validation/decisions.md). Without the equality (SVM ``method="smo"``, LDM, ODML) it
#: stays 0: there the former rule certifies, and 1e-6 took 3x the iterations on 500
#: spambase rows at C = 2^18, 2^20
NULL_REL = 1e-6

#: when the active set on the polish's ``F`` could afford fewer than ``IPM_BELOW`` steps
#: (``4 |F|^3`` counted flops each) of its budget, :func:`newton_polish` runs
#: :func:`fast._polish.interior_point_qp` instead, within ``IPM_WORK * n`` counted flops per
#: SMO iteration so far (its ~30-40 steps cost ``IPM_STEP_COST |F|^3`` each: a fixed price,
#: where the active set needs 2-3 |F| steps from an SMO point far from the optimum)
#:
#: The three thresholds were chosen on two cold solves whose free sets are large (RBF
#: gamma = 1/d, [0,1]-scaled, m = 3,000: LDM spambase C = 2^20, SVM with intercept magic
#: C = 2^18), each varied alone (validation/decisions.md): with (10, 2000, 4) both certify;
#: ``IPM_BELOW`` 3 or 30 gives the same polishes (the free sets lie far from the boundary);
#: ``IPM_WORK`` 500 refuses two polishes and LDM ends ``inaccurate``, 8000 gives the same
#: polishes as 2000; ``IPM_FOLLOW`` 0 leaves magic at ``max_iter`` (the certificate fails),
#: 8 leaves LDM ``inaccurate``. On raw features with the quadratic kernel (haberman,
#: breast_cancer; SVM with intercept and LDM, C = 2^0, 2^8, 2^20) the interior point is
#: never chosen (3-13 active-set polishes per path): the thresholds do not bind there
IPM_BELOW = 10
IPM_WORK = 2000.0
#: polishes that follow an interior-point polish at once (:func:`run`; chosen above)
IPM_FOLLOW = 4
#: the interior-point method's steps expected by :func:`newton_polish`'s test of its cost
IPM_STEPS_EXPECTED = 40

#: the round-off floor of the SMO's gradient (:func:`run`, default tolerance only): at the end
#: of a chunk whose violation lies within ``ROUNDOFF_GATE * eps * max_t Q_tt * |nu|_1`` (a
#: bound on the terms summed into ``G``), the gradient is recomputed from scratch at the same
#: point and ``delta = max_t |G_t - G'_t|`` (maintained against recomputed) measured; the SMO
#: then stops at ``ROUNDOFF_MULT * delta`` if the tolerance asked lies below it: on a dual
#: whose violation stalls without a trend (SVM with intercept, RBF, magic m = 3,000,
#: C = 2^18) the stalled violation lies within a few ``delta`` and the point certifies
#: (the case: validation/decisions.md)
ROUNDOFF_MULT = 4.0
ROUNDOFF_GATE = 1e5
#: before the first measurement, a chunk stops early (to measure) at ``ROUNDOFF_PRE`` times
#: the bound ``eps * max Q_tt * |nu|_1``: the floors measured lie at 10-15 times it
#: (validation/decisions.md); an early stop that the measurement does not confirm resumes,
#: at most ``ROUNDOFF_RETRIES`` times
ROUNDOFF_PRE = 4.0
ROUNDOFF_RETRIES = 3
#: the stop at the floor is taken only with a violation of at most ``ROUNDOFF_MAX`` times the
#: tolerance asked (1e-6 by default): above, the self-check's kernel-product residuals are
#: not evidence (SVM, 17 points, 1 raw feature x50, quadratic kernel, C = 2^20:
#: stopped at a floor of 4.6e-5 with violation 1.9e-6, the self-check's duality gap 6.0e-8,
#: the certificate's 1.95e-6) and the former ``max_iter`` stays
ROUNDOFF_MAX = 100.0

#: what :func:`run` returns: the dual point, its gradient ``G = Q alpha + p``, the intercept,
#: iterations, whether the first stage hit ``max_iter``, the final KKT violation, the
#: statistics array, the tolerance reached, whether the SMO stopped at the round-off floor of
#: its gradient (above the tolerance asked) and that floor (0: never measured)
SMOResult = namedtuple("SMOResult", "alpha G b n_iter hit_max violation stats tol at_floor "
                                    "floor")


def check_options(tol, max_iter, cache_size, n, options, allowed=("shrinking", "polish")):
    """The SMO's options in the vocabulary of :mod:`fast._common`; return ``(tol, max_iter,
    cache_size, shrinking, polish)`` (``polish`` None: on, :func:`run`'s default). The
    default ``max_iter`` is bounded by work: ``max(DEFAULT_MIN_ITER, 100 n)`` (a crawl ends
    in a warning, not a hang)."""
    unknown = set(options) - set(allowed)
    if unknown:
        raise ValueError(f"unknown option(s) {sorted(unknown)}; the SMO accepts tol, max_iter, "
                         f"warm_start, cache_size and {list(allowed)}")
    _, tol, max_iter = _common.check_common("smo", ("smo",), tol, max_iter, DEFAULT_TOL,
                                            max(DEFAULT_MIN_ITER, 100 * n))
    cache_size = _common.check_cache_size(cache_size)
    shrinking = _common.check_bool(options.get("shrinking", True), "shrinking")
    polish = options.get("polish", None)
    if polish is not None:
        polish = _common.check_bool(polish, "polish")
    return tol, max_iter, cache_size, shrinking, polish


def repair_equality(alpha, s, u):
    """Move a box-feasible ``alpha`` onto ``s^T alpha = 0`` (greedily, inside the box)."""
    alpha = alpha.copy()
    r = float(s @ alpha)
    if r == 0.0:
        return alpha
    # decrease r: lower alpha_t with s_t = +1 or raise alpha_t with s_t = -1 (and vice versa)
    sign = 1.0 if r > 0 else -1.0
    for t in np.argsort(-alpha):
        if abs(r) <= 0.0:
            break
        if s[t] == sign:
            room = alpha[t]
            d = min(room, abs(r))
            alpha[t] -= d
        else:
            room = u[t] - alpha[t]
            d = min(room, abs(r))
            alpha[t] += d
        r -= sign * d
    if abs(r) > 1e-12 * (1.0 + float(np.sum(u))):
        raise ValueError("warm_start cannot be made to satisfy the equality constraint")
    return alpha


def generic_gap(s, p, u, alpha, G, b, pt, m):
    """``(P, P - D_max)`` of the general form from the gradient ``G = Q alpha + p``.

    Variable ``t`` is the multiplier of the primal constraint ``s_t (f(x_pt) + b) >= -p_t``
    with weight ``u_t`` on its slack; ``f = K nu``, ``nu_k = sum_{pt_t = k} s_t alpha_t``
    and ``(K nu)_{pt_t} = s_t (G_t - p_t)``. ``D_max = -(1/2 alpha^T (G + p))``.
    """
    nu = np.zeros(m)
    np.add.at(nu, pt, s * alpha)
    f = np.zeros(m)
    f[pt] = s * (G - p)
    P = 0.5 * float(nu @ f) + float(np.sum(u * np.maximum(0.0, -p - s * (f[pt] + b))))
    D = -0.5 * float(alpha @ (G + p))
    return P, P - D


#: :func:`newton_polish`'s answer when its interior point ran and did not lower the dual:
#: after a chunk, :func:`run` then offers no further interior-point polish (SVMm on raw
#: spambase, 3,000 rows, C1 = 2^20: five polishes over 3,800-5,000 variables, 57-81 s each
#: on one core, none kept, before the SMO's ``max_iter``)
IPM_REFUSED = "ipm refused"


def newton_polish(source, pt, s, u, alpha, G, b, has_eq, budget, ipm_budget=0.0, dg=None):
    """Active-set Newton refinement on the free set, the equality kept; ``alpha`` in place.

    The SMO's convergence is linear and can crawl on ill-conditioned kernels (a polynomial
    kernel on unscaled data: 10^6 iterations without reaching a violation of 0.1). ``F``:
    the free variables plus the bound ones whose multiplier ``G_t + b s_t`` (``b`` the
    current intercept) points inward; on ``F`` the QP ``min 1/2 d^T Q_FF d + G_F^T d``,
    ``s_F^T d = 0`` (with an intercept), in the box, is solved by
    :func:`fast._polish.active_set_qp` within ``budget`` flops, or, when that budget affords
    fewer than ``IPM_BELOW`` of its steps (``4 |F|^3`` each), by
    :func:`fast._polish.interior_point_qp` within ``ipm_budget`` (if its ~40 factorisations
    fit): LDM RBF on KEEL spambase, m = 3,000, C = 2^20 has ``|F|`` = 3,000 (nearly every
    multiplier at 0 points inward) and an optimum ~10^6 away along the near-null directions
    of ``H``; the active set took one step per polish (violation 1.0 at ``max_iter``), the
    interior-point method solves it in 33 factorisations (the point certifies). Kept only if it lowers the dual objective; the
    SMO then resumes from it and alone decides the stop. Returns ``"ipm"`` or
    ``"active_set"`` if kept (the method used), :data:`IPM_REFUSED` if the interior point
    ran and was not kept, else ``""``.

    ``dg`` (the copies' diagonal, ODM's box dual): the QP's matrix is ``Q_FF + diag(dg_F)``
    (``G`` includes ``dg * alpha``); the interior point, which scales every variable by its
    box, is not used when an upper bound in ``F`` is infinite (the active set is).
    """
    mult = G + b * s if has_eq else G
    free = (alpha > 0.0) & (alpha < u)
    free |= (alpha <= 0.0) & (mult < 0.0) & (u > 0.0)
    free |= (alpha >= u) & (mult > 0.0) & (u > 0.0)
    F = np.flatnonzero(free)
    nF = F.size
    if nF == 0:
        return ""
    step = 4.0 * float(nF) ** 3
    ipm = (step * IPM_BELOW > budget
           and IPM_STEPS_EXPECTED * IPM_STEP_COST * float(nF) ** 3 <= ipm_budget
           and bool(np.all(np.isfinite(u[F]))))
    if not ipm and step > budget:
        return ""
    sF = s[F]
    Q = sF[:, None] * source.block(pt[F]) * sF[None, :]
    Q = 0.5 * (Q + Q.T)
    if dg is not None:
        Q[np.diag_indices(nF)] += dg[F]
    x0 = alpha[F].copy()
    args = (Q, G[F], x0, np.zeros(nF), u[F])
    kw = dict(seq=sF if has_eq else None, null_rel=NULL_REL if has_eq else 0.0)
    if ipm:
        x, change, _ = interior_point_qp(*args, budget=ipm_budget, **kw)
    else:
        x, change = active_set_qp(*args, budget=budget, **kw)
    if change < -1e-15 * (1.0 + abs(float(G[F] @ x0))):
        alpha[F] = x
        return "ipm" if ipm else "active_set"
    return IPM_REFUSED if ipm else ""


def roundoff_bound(source, pt, s, alpha):
    """``eps * max_t Q_tt * |nu|_1``: with ``|Q_tj| <= sqrt(Q_tt Q_jj)`` (``Q`` positive
    semidefinite) a bound on ``eps * max_t sum_j |Q_tj alpha_j|``, the scale of the round-off
    of the gradient ``G = Q alpha + p`` (``nu_k = sum_{pt_t = k} s_t alpha_t``)."""
    nu = np.zeros(source.diag.shape[0])
    np.add.at(nu, pt, s * alpha)
    return np.finfo(np.float64).eps * float(np.max(source.diag, initial=0.0)) * float(
        np.sum(np.abs(nu)))


def gradient_floor(G, G2, live):
    """The round-off floor of the SMO's gradient measured at one point (:func:`run`):
    ``ROUNDOFF_MULT * delta``, ``delta = max_t |G_t - G2_t|`` over the variables with a
    nonempty box, ``G`` the gradient the SMO maintained and ``G2`` the one recomputed from
    scratch there. A module function so that a test can put the floor where it needs it
    (tests/test_fast_smo.py: a floor stop that fails its certificate ends ``stalled``)."""
    return ROUNDOFF_MULT * float(np.max(np.abs(G - G2)[live], initial=0.0))


def run(source, pt, s, p, u, alpha0, has_eq, tol, max_iter, shrinking, refine=False,
        gap_tol=1e-9, tol_min=1e-12, polish=None, gap_target=None, roundoff=False, dg=None,
        gap=None, kkt_ok=None):
    """Run the SMO; returns an :data:`SMOResult`.

    With ``refine`` (the default tolerance was asked for), the tolerance is divided by 100
    and the SMO resumed from its point until the duality gap is at most ``gap_target(P)``
    (default ``gap_tol (1 + |P|)``; the families pass
    :func:`fast._common.relative_gap_target`, relative to ``|P|`` down to the problem's objective unit: features x1e6 with C = 2^-7,
    P* = 4e-12, stopped at 20x the optimum under ``1 + |P|``) (or ``tol_min`` is reached,
    or a refinement stage uses up its budget of ``max(iterations so far, 10 n, 10**4)``): a
    KKT violation bounds the gap only up to the size of the boxes. The status is
    ``max_iter`` only if the first stage (the tolerance asked) did not finish.

    With ``refine`` and ``roundoff`` (the SVM and LDM / ODML pass it on data that
    ``fast._common.scale_hint`` does not flag: on badly scaled data the certificate's own
    round-off is of the order of its tolerance, and the former ``max_iter`` stays), the SMO
    also stops at the round-off floor of its own gradient when that lies above the
    tolerance asked (weak regularization: with ``|alpha|`` ~ ``C`` = 2^20 the
    gradient's round-off is ~1e-7, above the tolerance 1e-8; the SMO then moves at random
    until ``max_iter``): see :data:`ROUNDOFF_MULT`. Such a stop is not ``hit_max``: it is
    reported by ``at_floor`` (``info["stopped_at_roundoff"]``), and ``fast.solve``'s
    self-check then decides whether the point is ``optimal`` (it certifies) or not.

    ``polish`` (default on, at any tolerance): the SMO runs in chunks of
    ``max(20 n, CHUNK_MIN)`` iterations, doubling up to ``max(20 n, CHUNK_LATER)``; a chunk
    that ends without reaching the tolerance is followed by an active-set Newton refinement
    (:func:`newton_polish`, within ``POLISH_WORK * n`` flops per SMO iteration spent so far;
    the interior-point method within ``IPM_WORK * n`` when the free set is too large for the
    active set) before the SMO resumes. A well-conditioned problem finishes in its first
    chunk (no polish, LIBSVM's run); an ill-conditioned one (the SMO crawling) gets the
    Newton steps. ``stats`` counts the kept polishes (``info["n_polish"]``).

    ``dg`` (ODM's box dual): a diagonal per variable, the dual
    ``1/2 alpha^T (Q + diag(dg)) alpha + p^T alpha`` (:func:`fast._smo.smo_solve`; ``G``
    then includes ``dg * alpha``); the stop at the round-off floor is not offered with it.
    ``gap(alpha, G, b) -> (P, P - D_max)``: the family's duality gap for the refinement
    (default :func:`generic_gap`, the hinge's primal, which a diagonal does not fit);
    ``kkt_ok(alpha, G) -> bool``: the certificate's other residuals, which the gap does
    not bound (ODM's stationarity in the slacks): the refinement goes on until both hold.
    """
    if polish is None:
        # on at any tolerance: a chunk ends the run only on a crawl, and without the polish
        # a looser tol crawled longer (RBF ODML, 196 haberman points, lam = 2^20: tol 1e-3
        # ran to max_iter at violation 1.0, the default tol was optimal after one polish)
        polish = True
    if dg is not None and not np.any(dg):
        dg = None                     # (no diagonal: the same run as without one)
    if dg is not None:
        dg = np.ascontiguousarray(dg, dtype=np.float64)
    roundoff = bool(refine and roundoff and dg is None)
    tol_asked = tol
    if gap_target is None:
        def gap_target(P):
            return gap_tol * (1.0 + abs(P))
    alpha = np.ascontiguousarray(alpha0, dtype=np.float64).copy()
    pt = np.ascontiguousarray(pt, dtype=np.int64)
    s = np.ascontiguousarray(s, dtype=np.float64)
    p = np.ascontiguousarray(p, dtype=np.float64)
    u = np.ascontiguousarray(u, dtype=np.float64)
    if has_eq:
        alpha = repair_equality(alpha, s, u)
    stats = np.zeros(8, dtype=np.int64)      # the SMO's counters; [_SHORT]: this driver's
    n = len(alpha)
    chunk = max(20 * n, CHUNK_MIN) if polish else max_iter
    total = 0
    first = True                  # still working on the tolerance asked
    stage_total = 0
    stage_budget = max_iter
    floor = 0.0                   # the round-off floor of the gradient, once measured
    at_floor = False
    retries = 0                   # early stops at an estimate the measurement did not confirm
    ipm_work = IPM_WORK           # 0 once an interior-point polish was not kept
    live = u > 0.0
    while True:
        budget = min(stage_budget - stage_total, chunk)
        # the chunk stops early at the floor measured, or before any measurement at
        # ROUNDOFF_PRE times the bound (below every floor measured), to measure it there
        stop = tol
        if roundoff and retries < ROUNDOFF_RETRIES:
            stop = max(tol, floor if floor > 0.0
                       else ROUNDOFF_PRE * roundoff_bound(source, pt, s, alpha))
        it, hit, viol, G = smo_solve(pt, s, p, u, source.diag, alpha, bool(has_eq), stop,
                                     budget, bool(shrinking), source.src, stats, dg=dg)
        total += int(it)
        stage_total += int(it)
        if roundoff and viol > tol and viol <= ROUNDOFF_GATE * roundoff_bound(source, pt, s,
                                                                             alpha):
            # near the round-off of G: recompute it from scratch at this point (the SMO's
            # setup, no step) and measure the floor from the two
            viol2, G2 = smo_solve(pt, s, p, u, source.diag, alpha, bool(has_eq), tol, 0,
                                  bool(shrinking), source.src, stats, dg=dg)[2:]
            floor = gradient_floor(G, G2, live)
            if viol2 <= floor and viol2 <= ROUNDOFF_MAX * tol_asked:
                at_floor, hit, viol, G = True, False, float(viol2), G2
        if (roundoff and retries < ROUNDOFF_RETRIES and not hit and not at_floor
                and viol > tol):
            # stopped early at an estimate above the floor measured: resume (after
            # ROUNDOFF_RETRIES of those, with the tolerance asked only)
            retries += 1
            continue
        b = float(intercept_from_gradient(s, u, alpha, G)) if has_eq else 0.0
        if hit and stage_total < stage_budget:
            # a chunk ended without reaching tol: Newton on the free set, then resume
            stats[_SHORT] += 1
            chunk = min(2 * chunk, max(chunk, 20 * n, CHUNK_LATER))
            kind = newton_polish(source, pt, s, u, alpha, G, b, has_eq,
                                 POLISH_WORK * n * total + 1e6, ipm_work * n * total, dg=dg)
            if kind == IPM_REFUSED:
                ipm_work, kind = 0.0, ""
            # after an interior-point polish (a large move: the variables outside its F now
            # violate), up to IPM_FOLLOW polishes more at the new gradient before the SMO
            # resumes (SVM with intercept, RBF, magic m = 3,000, C = 2^18: each cut the
            # violation 10-100x where a chunk of the SMO did not)
            if kind:
                stats[_POLISH] += 1
            for _ in range(IPM_FOLLOW if kind == "ipm" else 0):
                # the gradient at the polished point (the SMO's setup, no step)
                G = smo_solve(pt, s, p, u, source.diag, alpha, bool(has_eq), tol, 0,
                              bool(shrinking), source.src, stats, dg=dg)[3]
                b = float(intercept_from_gradient(s, u, alpha, G)) if has_eq else 0.0
                if newton_polish(source, pt, s, u, alpha, G, b, has_eq,
                                 POLISH_WORK * n * total + 1e6, ipm_work * n * total,
                                 dg=dg) in ("", IPM_REFUSED):
                    break
                stats[_POLISH] += 1
            continue
        if hit:
            hit_max = first           # a refinement that runs out keeps the tolerance asked
            break
        hit_max = False
        if at_floor or not refine or tol <= tol_min:
            break
        if gap is None:
            P, gap_now = generic_gap(s, p, u, alpha, G, b, pt, source.diag.shape[0])
        else:
            P, gap_now = gap(alpha, G, b)
        if not np.isfinite(gap_now):
            from refmodels.solution import SolverError

            raise SolverError(f"the SMO's duality gap is not finite (P = {P!r}, gap = "
                              f"{gap_now!r}): the problem's numbers are beyond float64 at "
                              "this scale")
        if abs(gap_now) <= gap_target(P) and (kkt_ok is None or kkt_ok(alpha, G)):
            break
        tol = max(tol / 100.0, tol_min)
        first = False
        # refinement stages get a bounded budget (ill-conditioned kernels converge slowly)
        stage_budget = min(max_iter - total, max(total, 10 * n, 10_000))
        stage_total = 0
        if stage_budget <= 0:
            break
    return SMOResult(alpha, G, b, total, bool(hit_max), float(viol), stats, tol, at_floor,
                     floor)


#: slot of ``stats`` counting the chunks that ended short of the tolerance, each offered to
#: the Newton polish (``info["chunks_short"]``; ``info["n_polish"]`` counts those kept)
_SHORT = 7


def info_dict(source, stats, viol, tol, shrinking, at_floor=False, floor=0.0):
    """The SMO's ``info``; ``stopped_at_roundoff``: the SMO stopped at the round-off floor
    ``roundoff_floor`` of its gradient, above the tolerance ``tol`` (:func:`run`)."""
    info = {"kernel_path": source.path, "violation": viol, "residual": viol, "tol": tol,
            "shrinking": shrinking, "stopped_at_roundoff": bool(at_floor),
            "roundoff_floor": float(floor),
            "gradient_reconstructions": int(stats[_RECON]), "shrunk": int(stats[_SHRINK]),
            "resumed_after_unshrink": int(stats[_RESUME]), "n_polish": int(stats[_POLISH]),
            "chunks_short": int(stats[_SHORT])}
    if source.path == "cache":
        info.update(cache_slots=int(source.n_slots), row_requests=int(stats[ROW_REQ]),
                    cache_misses=int(stats[ROW_MISS]),
                    cache_hits=int(stats[ROW_REQ] - stats[ROW_MISS]))
    return info


def solution(prob, name, source, res, t0, max_iter, shrinking, has_eq, coef, Kc, obj,
             variables, dual_objective):
    """The SMO's result ``res`` (:data:`SMOResult`) as a family's ``Solution``: the family
    gives ``coef``, ``K coef`` (``Kc``), SPEC's canonical objective ``obj``, its dual
    variables and dual value; added here are the intercept (with the equality), ``w`` (linear
    kernel), the status with the one not-converged warning, and the statistics."""
    from refmodels.solution import Solution

    if has_eq:
        variables["b"] = res.b
    if prob.kernel.is_linear:
        variables["w"] = np.asarray(prob.X.T @ coef).ravel()
    info = info_dict(source, res.stats, res.violation, res.tol, shrinking, res.at_floor,
                     res.floor)
    info["dual_objective"] = float(dual_objective)
    sol = Solution(objective=obj, coef=coef, intercept=res.b, variables=variables,
                   status=status_of(name, res, max_iter, prob), solver="fast:smo",
                   form="fast", time=time.perf_counter() - t0, n_iter=res.n_iter, info=info)
    check_floor_stop(name, prob, sol, res)
    from ._common import kept

    kept(sol, "kernel_rows", lambda: source)   # for fast.solve's self-check (G coef)
    return sol


def check_floor_stop(name, prob, sol, res):
    """A stop at the round-off floor (:func:`run`) is checked by the full certificate when
    ``m <= AUTO_REFERENCE_MAX_M`` (where it is affordable): ``fast.solve``'s self-check
    judges a kernel problem by kernel products, which near the floor are not evidence
    (SVM, 17 points, one raw feature x50, quadratic kernel (a Gram of rank 3), C = 2^20:
    violation 2.2e-8 at the floor, the self-check's duality gap 1.0e-9, the certificate's
    1.8e-6). A point that fails it gets status ``"stalled"`` with a warning."""
    from refmodels.base import AUTO_REFERENCE_MAX_M

    if not (res.at_floor and sol.status == "optimal" and prob.m <= AUTO_REFERENCE_MAX_M):
        return
    cert = prob.certify(sol, reference=False)
    sol.info["floor_certificate"] = bool(cert.ok)
    if not cert.ok:
        sol.status = "stalled"
        worst, value = cert.worst
        _common.not_converged_warning(
            f"{name}: the SMO (maximal KKT violation) stopped at the round-off floor "
            f"{res.floor:.3e} of its gradient with residual {res.violation:.3e} above the "
            f"tolerance tol={res.tol:.3e} asked, and the point fails the certificate "
            f"({worst} {value:.3e}); status 'stalled'{_common.scale_hint(prob)}",
            stacklevel=4)


def status_of(name, res, max_iter, prob):
    """The SMO's status (with its one warning): ``"max_iter"``; ``"stalled"`` for a stop at the
    round-off floor of the gradient (:func:`run`) on badly scaled data (``scale_hint``),
    where the certificate's own round-off is of the order of its tolerance (SVMm, cubic
    kernel, Gram diagonal 1e8: the floor 1.8e-5, the duality gap 4.6e-7 or 1.8e-6 of the
    objective depending on the build of the Gram); else ``"optimal"``, which
    ``fast.solve``'s self-check then confirms or not."""
    if res.hit_max:
        warn_max_iter(name, res.violation, res.tol, max_iter, prob)
        return "max_iter"
    hint = _common.scale_hint(prob) if res.at_floor else ""
    if hint:
        _common.not_converged_warning(
            f"{name}: the SMO (maximal KKT violation) stopped at the round-off floor "
            f"{res.floor:.3e} of its gradient with residual {res.violation:.3e} above the "
            f"tolerance tol={res.tol:.3e} asked; status 'stalled'{hint}", stacklevel=4)
        return "stalled"
    return "optimal"


def warn_max_iter(name, viol, tol, max_iter, prob=None):
    """The one not-converged warning, in the SMO's words."""
    _common.convergence_warning(f"{name}: the SMO (maximal KKT violation)", viol, tol, max_iter,
                                unit="iterations",
                                hint=_common.scale_hint(prob) if prob is not None else "")


def warm_vector(warm_start, name, n, hi):
    """A dual vector from ``warm_start`` (a Solution, a dict or an array), checked in its box
    (:func:`fast._common.warm_vector`)."""
    return _common.warm_vector(warm_start, name, n, 0.0, hi)


def warm_box(warm_start, box, m):
    """The starting point of a family's box dual ``box`` (:class:`refmodels._box.BoxDual`):
    the :func:`warm_vector` of each copy's variable, one block of ``m`` after the other, or
    zeros without a warm start."""
    z0 = np.zeros(len(box.names) * m)
    if warm_start is not None:
        for k, (name, hi) in enumerate(zip(box.names, box.hi)):
            z0[k * m:(k + 1) * m] = warm_vector(warm_start, name, m, float(hi))
    return z0


def box_arrays(box, y, diag=False):
    """The general form's ``(pt, s, p, u)`` of a family's box dual ``box`` on the problem's
    Gram: variable ``k m + i`` is copy ``k`` of point ``i``, with sign ``sign_k y_i``,
    linear term ``p_k`` and box ``[0, hi_k]``; with ``diag``, also ``dg`` (copy ``k``'s
    diagonal ``dg_k``: ODM's), as a fifth array. The SMO takes neither an offset of ``u``
    nor another Gram (ODML / LDM expand theirs: ``fast/odml.py``), nor a diagonal unless
    ``diag`` is asked (the caller then hands it to :func:`run`)."""
    if (np.any(box.dg) and not diag) or box.offset or box.metric:
        raise ValueError("the SMO's general form takes a box dual without offset or metric "
                         "(and a diagonal only when asked: diag=True)")
    m = y.shape[0]
    pt = np.concatenate([np.arange(m)] * len(box.names))
    s = np.concatenate([sg * y for sg in box.sign])
    p = np.concatenate([np.full(m, pk) for pk in box.p])
    u = np.concatenate([np.full(m, hk) for hk in box.hi])
    if diag:
        return pt, s, p, u, np.concatenate([np.full(m, float(dk)) for dk in box.dg])
    return pt, s, p, u


def intercept_repair(prob, sol, C1, C2, eps):
    """The SVM's and SVMm's second chance (a free intercept, the dual's equality): the
    intercept of the returned ``coef`` replaced by the one that minimises the primal at that
    ``coef`` (:func:`fast._svmm_linear.best_intercept`, exact on the piecewise-linear
    objective). The SMO reads ``b`` off the gradient of its free variables; with no free
    variable it takes the middle of the feasible band, and there the primal grows with
    ``C |b - b*|`` per point on a kink: an RBF kernel on far-apart points, the dual value
    1e-9 from the optimum and the primal at the SMO's ``b`` 1.4e-7 above it. ``None`` without
    an intercept, or when the best ``b`` does not lower the objective. ``C1``, ``C2``, ``eps``:
    the primal's weights (the SVM's ``C``, 0, 0)."""
    from dataclasses import replace

    from refmodels.cheap import _solver_rows

    from ._svmm_linear import best_intercept

    if not prob.has_intercept or sol.coef is None or not np.isfinite(sol.intercept or 0.0):
        return None
    coef = np.asarray(sol.coef, dtype=np.float64)
    rows = _solver_rows(sol)
    Gc = rows.times(coef) if rows is not None else prob.gram_times(coef)
    b = best_intercept(Gc, prob.y, C1, C2, eps)
    P_old = prob.objective_at(coef, float(sol.intercept), Gc)[0]
    P_new = prob.objective_at(coef, b, Gc)[0]
    if not P_new < P_old:
        return None
    return replace(sol, intercept=b, objective=P_new, variables={**sol.variables, "b": b},
                   info={**sol.info, "intercept_repair": float(sol.intercept)})
