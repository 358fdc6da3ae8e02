"""One SMO for duals with an equality constraint (LIBSVM's general form).

.. math::

    \\min_\\alpha\\ \\tfrac12\\alpha^\\top Q\\alpha + p^\\top\\alpha
    \\quad\\text{s.t.}\\quad s^\\top\\alpha = 0,\\ 0 \\le \\alpha \\le u,
    \\qquad Q_{ij} = s_i s_j \\tilde K_{ij},\\ s_i \\in \\{-1, +1\\}.

The variables live on "points" that may repeat: variable ``t`` sits on point
``pt[t]`` and :math:`\\tilde K_{ij} = K[pt_i, pt_j]`. The SVM with intercept (SPEC §1)
has one variable per point (``s = y``, ``p = -e``, ``u = C``); SVMm (SPEC §6, seed 003
eq. 15) has two, ``[alpha; beta]`` with signs ``[y; -y]``, ``p = [-e; (1+eps) e]`` and
boxes ``[C1; C2]``: the 2m x 2m matrix is never built, a row of ``K`` is fetched once
for both copies.

The algorithm is that of LIBSVM's ``Solver`` (``svm.cpp``; Fan, Chen and Lin, JMLR 2005):

* working-set selection WSS3: ``i`` maximises :math:`-s_t\\nabla_t f` over
  :math:`I_{up}` (:math:`s_t=+1, \\alpha_t<u_t` or :math:`s_t=-1, \\alpha_t>0`),
  ``j`` minimises the second-order decrease :math:`-(g_i+\\dots)^2/a_{ij}` over
  :math:`I_{low}` (:math:`s_t=+1, \\alpha_t>0` or :math:`s_t=-1, \\alpha_t<u_t`),
  with :math:`a_{ij} = K_{ii}+K_{jj}-2K_{ij}` (``TAU`` when not positive);
* stopping when the maximal KKT violation
  :math:`m(\\alpha)-M(\\alpha) = \\max_{I_{up}}(-s_t g_t) + \\max_{I_{low}}(s_t g_t) \\le tol`;
* shrinking every ``min(n, 1000)`` iterations, with gradient reconstruction from
  :math:`\\bar G_t = \\sum_{j:\\alpha_j=u_j} u_j Q_{tj}`, unshrinking once when the
  violation drops below ``10 tol`` and always before declaring optimality; as a
  safeguard (not in LIBSVM) all variables are also brought back every
  ``max(100 n, 10**4)`` iterations (ill-conditioned kernels with duplicated points
  otherwise stalled for millions of iterations on a wrongly shrunk set);
* as in LIBSVM (``swap_index``), the active variables come first: a shrunk point (all its
  variables) is swapped behind them, so the scans of the working-set selection and the
  gradient updates run over a contiguous range, without an index array (faster; see
  validation/decisions.md; ``smo_solve`` takes and returns the caller's order);
* beyond LIBSVM, the state is kept per point, not per variable (see "the state kept per
  point" below): ``f = K nu`` over the ``m`` points gives every copy's gradient
  (:math:`G_t = p_t + s_t f_{pt_t}`), so a step updates ``m`` numbers, not ``2m``, and WSS3
  scans the points (the copies of a point share ``f``, ``K_tt`` and ``K_it``) while picking
  the same pair as WSS3 over the variables; the update of ``f`` and the next scan for ``i``
  share one pass (faster for SVMm and the SVM alike, the SVM's unchanged in iterations;
  validation/decisions.md);
* beyond LIBSVM, once the free set has not changed for ``NEWTON_WAIT`` steps, a Newton
  step on it with the equality kept (:func:`_newton`: Cholesky of ``K_FF``, cut at the box
  as a primal active-set method; tried only when its cost is of the order of the steps
  that preceded it): the SMO's linear tail ends there (SVMm m = 1,000: 3791 -> 1291
  iterations); the SMO resumes from it and alone decides the stop;
* kernel rows from the full Gram when it is at hand and fits in ``cache_size`` MB,
  otherwise computed on demand into an LRU row cache of ``cache_size`` MB
  (:mod:`fast._kernels`; all rows stay once computed when the Gram fits);
* beyond LIBSVM, at any tolerance: chunks of ``max(20 n, 2000)`` iterations, a
  chunk ending above the tolerance followed by an active-set Newton refinement on the free
  set (:func:`fast._smo_run.newton_polish`): the linear tail crawls on ill-conditioned
  duals (linear kernel in 2-D, C = 1e4: 10^6 iterations without, 6 * 10^4 with); a
  problem done in its first chunk runs as before;
* the intercept from the KKT conditions (LIBSVM's ``calculate_rho``): the mean of
  :math:`-s_t g_t` over free variables, otherwise the midpoint of the allowed interval.

Without the equality constraint (``has_eq=False``, problems without intercept) the
same machinery takes single-variable steps (the variable of largest decrease) alternating,
beyond LIBSVM, with WSS3's pair steps (feasible here too): on a smooth RBF kernel single
steps alone crawl along ``e_i - e_j`` (spambase m = 3,000, C = 2^10: not at 1e-3 after
2 * 10^6 iterations; alternating: 17,350; LIBSVM with the equality: 6,470). It stops on
the maximal projected gradient and shrinks bound variables whose gradient points outward
by more than the current violation.
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from . import _chunk
from ._chunk import PAUSED
from ._kernels import ROW_MISS
from ._kernels import source_row as _row
from ._smo_newton import _newton, _point_bounds
from ._smo_steps import (_RECON, _RESUME, _do_shrinking, _select, _select_single, _step_pair,
                         _step_single, _violations, step_vars)

# Compile options: helpers only compiled code calls have no CPython entry point
# (``no_cpython_wrapper``: it unboxes every argument, large for the SMOState / RowData tuples)
# and no function here has a C callback (``no_cfunc_wrapper``); calls between compiled
# functions use neither (a shorter first compile; validation/decisions.md). Those helpers
# (all named ``_...``) cannot be called from Python: such a call crashes the interpreter.
#
# Fewer compiled functions (a shorter first compile, validation/decisions.md): numba
# compiles every helper into a module of its own and links it, with everything it calls,
# into each caller's module, which LLVM optimises and emits again; each also has a fixed
# compile cost. So: the one-call helpers are merged into their caller (the
# layout into :func:`_setup_layout`, the scan for ``i`` and the copies into
# :func:`fast._smo_steps._select`, the exchange of two positions into
# :func:`fast._smo_steps._do_shrinking`; numba's
# ``inline="always"`` was measured slower, for the steps as for the larger helpers); kernel
# rows are fetched by :func:`smo_solve` for the steps and the unshrink (the row code, with
# its LRU cache and RBF kernel, is then linked into fewer modules); arrays are allocated by
# ``np.empty`` in a few signatures (each ``np.zeros``/``np.full``/``np.ones`` signature
# compiles its own implementation) and no builtin ``min``/``max`` is used on integers.

#: steps with an unchanged free set before a Newton step on it (:func:`_newton`)
NEWTON_WAIT = 100
#: a Newton step on ``r`` free variables is tried when ``r^3 <= NEWTON_COST * wait *
#: active_size``: its factorisation (``r^3 / 6`` vectorised multiply-adds) then costs at
#: most about 5 times the ``wait`` steps of the SMO over ``active_size`` points that
#: preceded it (the per-operation costs behind the 1000: validation/decisions.md)
NEWTON_COST = 1000.0
DEFAULT_TOL = 1e-8
#: the default ``max_iter`` is ``max(DEFAULT_MIN_ITER, 100 n)`` SMO iterations
DEFAULT_MIN_ITER = 300_000


# ---------------------------------------------------------------------------------------
# the solver (numba): the state kept per point
# ---------------------------------------------------------------------------------------
#
# The variables are grouped by point: position ``q`` holds point ``pidx[q]`` and its ``k``
# copies (``k`` the largest number of variables on one point: 1 for the SVM, 2 for SVMm and
# MKLm) in row ``q`` of the ``(m, k)`` arrays ``A`` (alpha), ``S``, ``P``, ``U`` (``vid[q, b]``
# the caller's index of copy ``b``; a missing copy is a dummy pinned at ``A = U = 0``).
# Since the gradient of copy ``t`` of point ``i`` is ``G_t = p_t + s_t f_i`` with
# ``f = K nu``, ``nu_i = sum_{pt_t = i} s_t alpha_t``, the solver keeps ``f`` over the points
# (one update per point and step, not one per variable), and, as ``s_t = +-1``:
#
# * ``-s_t G_t = -s_t p_t - f_i`` and ``s_t G_t = s_t p_t + f_i``. With
#   ``UP[q] = max -s_t p_t`` over the copies of the point in ``I_up`` and
#   ``LOW[q] = max s_t p_t`` over its copies in ``I_low`` (``-inf`` when none; they change
#   only when an ``alpha`` of the point does), the maximal ``-s_t G_t`` over the point's
#   copies in ``I_up`` is ``UP[q] - f[q]`` and the maximal ``s_t G_t`` over its copies in
#   ``I_low`` is ``LOW[q] + f[q]``;
# * WSS3 is therefore a scan over points: ``i`` the copy of ``argmax_q UP[q] - f[q]``, and
#   for ``j``, all copies of a point share ``a_ij = K_ii + K_qq - 2 K_iq``, so the copy of
#   largest ``s_t G_t`` (``LOW[q] + f[q]``) is the point's best: the same pair as WSS3 over
#   the variables (ties between the copies of a point go to the last copy);
# * ``fbar = K nu_bar`` (``nu_bar`` from the variables at their upper bound) gives
#   LIBSVM's ``G_bar_t = s_t fbar_i``;
# * shrinking is per point: a point leaves the active set when all its copies (with
#   ``u > 0``) would be shrunk by LIBSVM's rule, so every free variable stays active and
#   the reconstruction ``f_i = fbar_i + sum_{active j} K_ij nu^free_j`` is exact.
#
# A diagonal per copy (ODM's box dual: ``+ 1/2 sum_t dg_t alpha_t^2``, the ``(m, k)`` array
# ``diag`` (``D``)): ``G_t = p_t + s_t f_i + dg_t alpha_t``. The extra term changes only with
# the copy's own ``alpha``, so it is kept where ``p_t`` is: ``UP`` and ``LOW`` read
# ``p_t + dg_t alpha_t`` (:func:`fast._smo_newton._point_bounds`) and the scans above hold
# as they are; a single step's curvature is ``K_ii + dg_t``, a pair's
# ``K_ii + K_jj - 2 K_ij + dg_i + dg_j`` (``dg_i + dg_j`` for two copies of one point, along
# which ``nu`` does not move), so the pair scan for ``j`` runs over the copies
# (:func:`fast._smo_steps._select`). ``f``, ``fbar`` and the reconstruction are unchanged
# (``f = K nu`` only); an upper bound may be ``inf`` (never reached: ``fbar`` stays 0).
# Every reading of ``D`` is skipped where it is 0, so that a dual without a diagonal runs
# the very same floating-point operations as before it existed.
#
# Points whose copies are all pinned (``u = 0``) are placed after all others and never
# enter the active set. The state is an ``SMOState`` of arrays allocated by the driver
# (:func:`new_state`) and filled by :func:`_setup_layout`, so that it lives between the
# calls of :func:`_smo_chunk` (the solve runs in chunks of bounded work, :mod:`fast._chunk`);
# it is taken whole by the helpers called once per solve or shrinking period; the per-step
# ones (:mod:`fast._smo_steps`) take a :data:`fast._smo_steps.StepVars`, only the ten arrays
# a step touches (a compiled call is passed every array of a tuple it takes). Fields:
# ``point`` (``pidx``), ``var`` (``vid``), ``alpha`` (``A``), ``sign`` (``S``), ``lin``
# (``P``), ``upper`` (``U``), ``kdiag`` (``QD``: ``K_ii`` at the point), ``f``, ``fbar``,
# ``up`` (``UP``), ``low`` (``LOW``), and work arrays over the points: ``nu`` and ``nubar``
# (by point index) with their products ``Knu``, ``Knubar`` while the setup sums kernel
# rows, ``cf`` (``nu^free`` by position) while a gradient is reconstructed. The scalars of
# the run (the number ``n_live`` of points with a copy of ``u > 0``, which come first, the
# iteration count, the shrinking counters, ...) are in the ``ctl`` array (slots ``K_...``)
# and ``fctl`` (``F_...``).
SMOState = namedtuple("SMOState", "point var alpha sign lin upper kdiag f fbar up low nu nubar "
                                  "Knu Knubar cf diag")
#: the dual in the caller's order (:func:`smo_solve`): variable ``t`` on point ``pt[t]`` with
#: sign ``s[t]``, linear term ``p[t]``, box ``[0, u[t]]`` (``u`` may be ``inf``) and diagonal
#: ``dg[t]`` (see "a diagonal per copy" below; zeros but for ODM); ``kdiag`` the kernel's
#: diagonal by point; ``alpha`` the point (feasible on entry, written when the run is done)
#: and ``G`` where the gradient ``Q alpha + p + dg * alpha`` is written then
SMODual = namedtuple("SMODual", "pt s p u kdiag alpha G dg")
#: the options of a run: the equality ``s^T alpha = 0`` (``has_eq``), the tolerance on the
#: maximal KKT violation, the iteration cap, shrinking, the Newton steps on the free set, and
#: whether some copy has a diagonal (``has_dg``: the working-set selection's pair scan then
#: runs over the copies)
SMOOptions = namedtuple("SMOOptions", "has_eq tol max_iter shrinking newton has_dg")

#: slots of ``ctl`` (int64), the run's scalars between two calls of :func:`_smo_chunk`: the
#: program counter (:data:`PC_SETUP` ...), iterations, shrinking counter, LIBSVM's
#: ``unshrink``, iterations since all points were last active, active points, whether the
#: last step's scan for ``i`` is known, steps with an unchanged free set, the Newton wait,
#: the last scan's ``i``, whether ``max_iter`` was hit, ``n_live``, the live variables, the
#: setup's next point, a gradient reconstruction in progress (its stage, position, range,
#: whether counted, and what follows it), the shrinking period and the first shrinking
(K_PC, K_IT, K_COUNTER, K_UNSHRINK, K_SINCE_FULL, K_ACTIVE, K_HAVE_UP, K_STABLE, K_WAIT,
 K_IMAX, K_HIT, K_NLIVE, K_NVAR, K_CURSOR, K_R_STAGE, K_R_POS, K_R_LO, K_R_HI, K_R_COUNT,
 K_NEXT, K_SHRINK_EVERY, K_PERIOD) = range(22)
N_KCTL = 22
#: slots of ``fctl`` (float64): the last scan's ``G_max`` and the final violation
F_GMAX, F_VIOL = 0, 1
N_FCTL = 2
#: the program counter: setting up, summing the setup's kernel rows, iterating, a gradient
#: reconstruction in progress
PC_SETUP, PC_SETUP_ROWS, PC_RUN, PC_RECON = 0, 1, 2, 3
#: what follows a reconstruction: the safeguard's unshrink, LIBSVM's unshrink, the check of
#: the stop on all points, the final reconstructions (live, then pinned points)
N_SAFE, N_AGAIN, N_CONV, N_FINAL1, N_FINAL2 = 0, 1, 2, 3, 4
#: where an iteration of :func:`_smo_chunk` starts: at its top, at the shrinking, at the
#: working-set selection, or at the selection that checks the stop on all points
G_TOP, G_SHRINK, G_SELECT, G_CONV = 0, 1, 2, 3
#: the work units (:mod:`fast._chunk`) of an iteration, plus per active point (the scans for
#: ``i`` and ``j``, the update of ``f``), of a kernel row computed on a cache miss per point
#: and feature, plus per point (the kernel's function: RBF's exponential)
ITER_COST = 200.0
ITER_POINT_COST = 8.0
KERNEL_ROW_PER_FEATURE = 2.0
KERNEL_ROW_EXTRA = 10.0
#: a Newton step on the free set (:func:`fast._smo_newton._newton`) is tried only on at most
#: ``NEWTON_MAX_CUBE^(1/3)`` free variables (its factorisation, about ``r^3 / 6`` multiply-
#: adds, then takes a fraction of a second: one chunk of work), besides its cost rule
NEWTON_MAX_CUBE = 1e9


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _reconstruct(st, ctl, src, stats, work, budget, miss_cost):
    """``f_i = fbar_i + sum_{j} K_ij nu^free_j`` for positions ``lo .. hi - 1`` (``ctl``'s
    ``K_R_LO``, ``K_R_HI``), where ``nu^free_j = sum s_t alpha_t`` over the free copies of
    point ``j`` (all among the first ``lo`` positions): rows of the free points or of the
    reconstructed ones, whichever are fewer. ``K_R_COUNT``: a gradient reconstruction of the
    shrunk positions (``hi = n_live``), counted in ``stats`` when there is any.

    Resumable: it stops before a kernel row once ``work`` reaches ``budget`` and the next call
    continues at that row (``K_R_STAGE`` 0: not started; 1, 2: summing rows of the free
    points, of the reconstructed ones; ``K_R_POS``: the next row; ``st.cf``: ``nu^free``).
    Returns ``(done, work)``, ``work`` increased by the rows' work."""
    lo, hi = ctl[K_R_LO], ctl[K_R_HI]
    pidx, f, fbar, A, S, U, cf = st.point, st.f, st.fbar, st.alpha, st.sign, st.upper, st.cf
    if ctl[K_R_STAGE] == 0:
        if lo >= hi:
            return True, work
        if ctl[K_R_COUNT] != 0:
            stats[_RECON] += 1
        k = A.shape[1]
        for q in range(lo, hi):
            f[q] = fbar[q]
        nr_free = 0
        for q in range(lo):
            acc = 0.0
            for b in range(k):
                a = A[q, b]
                if a > 0.0 and a < U[q, b]:
                    acc += S[q, b] * a
            cf[q] = acc
            if acc != 0.0:
                nr_free += 1
        work += hi
        ctl[K_R_STAGE] = 1 if nr_free <= hi - lo else 2
        ctl[K_R_POS] = 0 if nr_free <= hi - lo else lo
    if ctl[K_R_STAGE] == 1:
        for j in range(ctl[K_R_POS], lo):
            if cf[j] != 0.0:
                if work >= budget:
                    ctl[K_R_POS] = j
                    return False, work
                misses = stats[ROW_MISS]
                Kj = _row(pidx[j], src, stats)
                c = cf[j]
                for q in range(lo, hi):
                    f[q] += c * Kj[pidx[q]]
                work += (hi - lo) + (stats[ROW_MISS] - misses) * miss_cost
    else:
        for q in range(ctl[K_R_POS], hi):
            if work >= budget:
                ctl[K_R_POS] = q
                return False, work
            misses = stats[ROW_MISS]
            Kq = _row(pidx[q], src, stats)
            acc = 0.0
            for j in range(lo):
                if cf[j] != 0.0:
                    acc += cf[j] * Kq[pidx[j]]
            f[q] += acc
            work += lo + (stats[ROW_MISS] - misses) * miss_cost
    ctl[K_R_STAGE] = 0
    return True, work


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _setup_layout(dual, st):
    """The first part of the solver's state at the feasible point of ``dual`` (an
    :data:`SMODual`; into the arrays of ``st``, an :data:`SMOState`): the per-point layout
    of the caller's variables (``pidx``, ``vid``, ``A``, ``S``, ``P``, ``U``; the points with
    a copy of ``u > 0`` first, in increasing point order), ``QD``, and ``nu``, ``nubar`` by
    point (``Knu``, ``Knubar`` zeroed for :func:`_setup_rows`). Returns ``n_live``, the
    number of those points.

    (Every array is allocated by ``np.empty`` with one of three signatures and filled by
    loops: each other allocation signature compiles an implementation of its own on a cold
    start.)"""
    pt, s, p, u, QD_pt, alpha = dual.pt, dual.s, dual.p, dual.u, dual.kdiag, dual.alpha
    dg = dual.dg
    m = QD_pt.shape[0]
    n = pt.shape[0]
    pidx, vid, A, S, P, U, D = st.point, st.var, st.alpha, st.sign, st.lin, st.upper, st.diag
    k = A.shape[1]
    cnt = np.empty(m, dtype=np.int64)
    live = np.empty(m, dtype=np.int64)          # 1: the point has a copy with u > 0
    for i in range(m):
        cnt[i] = 0
        live[i] = 0
    for t in range(n):
        if u[t] > 0.0:
            live[pt[t]] = 1
    pos = np.empty(m, dtype=np.int64)
    n_live = 0
    for i in range(m):
        if live[i] != 0:
            pidx[n_live] = i
            pos[i] = n_live
            n_live += 1
    q = n_live
    for i in range(m):
        if live[i] == 0:
            pidx[q] = i
            pos[i] = q
            q += 1
    for q in range(m):
        for b in range(k):
            vid[q, b] = -1
            A[q, b] = 0.0
            S[q, b] = 1.0
            P[q, b] = 0.0
            U[q, b] = 0.0
            D[q, b] = 0.0
    fill = cnt                                  # (the copies placed so far)
    for t in range(n):
        q = pos[pt[t]]
        b = fill[q]
        fill[q] = b + 1
        vid[q, b] = t
        A[q, b] = alpha[t]
        S[q, b] = s[t]
        P[q, b] = p[t]
        U[q, b] = u[t]
        D[q, b] = dg[t]
    QD = st.kdiag
    for q in range(m):
        QD[q] = QD_pt[pidx[q]]
    # nu and nu_bar by point, for f = K nu and fbar = K nu_bar
    c, cb, Kc, Kcb = st.nu, st.nubar, st.Knu, st.Knubar
    for i in range(m):
        c[i] = 0.0
        cb[i] = 0.0
        Kc[i] = 0.0
        Kcb[i] = 0.0
    for q in range(m):
        i = pidx[q]
        for b in range(k):
            a = A[q, b]
            if a != 0.0:
                c[i] += S[q, b] * a
            if U[q, b] > 0.0 and a >= U[q, b]:
                cb[i] += S[q, b] * U[q, b]
    return n_live


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _setup_rows(st, start, src, stats, work, budget, miss_cost):
    """``Knu = K nu`` and ``Knubar = K nu_bar`` from the rows of the points with a nonzero
    coefficient, from point ``start`` on, in point order; stops before a row once ``work``
    reaches ``budget``. Returns ``(next point, work)`` (``m``: done)."""
    c, cb, Kc, Kcb = st.nu, st.nubar, st.Knu, st.Knubar
    m = c.shape[0]
    for i in range(start, m):
        if c[i] != 0.0 or cb[i] != 0.0:
            if work >= budget:
                return i, work
            misses = stats[ROW_MISS]
            row = _row(i, src, stats)
            ci, cbi = c[i], cb[i]
            for r in range(m):
                Kc[r] += ci * row[r]
                Kcb[r] += cbi * row[r]
            work += 2 * m + (stats[ROW_MISS] - misses) * miss_cost
    return m, work


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _setup_finish(st):
    """The rest of the state: ``f``, ``fbar`` by position from ``Knu``, ``Knubar``; ``UP``
    and ``LOW``."""
    pidx, f, fbar, Kc, Kcb = st.point, st.f, st.fbar, st.Knu, st.Knubar
    for q in range(pidx.shape[0]):
        f[q] = Kc[pidx[q]]
        fbar[q] = Kcb[pidx[q]]
        _point_bounds(q, st.alpha, st.sign, st.lin, st.upper, st.diag, st.up, st.low)


def new_state(pt, m):
    """The arrays of an :data:`SMOState` for the variables on the points ``pt`` of ``m``
    points (``k``, the largest number of variables on one point, at least 1)."""
    pt = np.asarray(pt)
    k = max(1, int(np.bincount(pt, minlength=m).max(initial=0))) if pt.size else 1
    e1, e2 = (lambda: np.empty(m)), (lambda: np.empty((m, k)))
    return SMOState(np.empty(m, dtype=np.int64), np.empty((m, k), dtype=np.int64), e2(),
                    e2(), e2(), e2(), e1(), e1(), e1(), e1(), e1(), e1(), e1(), e1(), e1(),
                    e1(), e2())


@njit(cache=True, no_cfunc_wrapper=True)
def _wss(dual, src, stats, st):
    """:func:`wss_variables` on the state arrays ``st`` (:func:`new_state`)."""
    n_live = _setup_layout(dual, st)
    _setup_rows(st, 0, src, stats, 0.0, np.inf, 0.0)
    _setup_finish(st)
    iq, ib, jq, jb, viol = _select(step_vars(st), np.bool_(True), n_live, np.bool_(False),
                                   -np.inf, np.int64(-1), src, stats, np.bool_(False))
    i = st.var[iq, ib] if iq >= 0 else -1
    j = st.var[jq, jb] if jq >= 0 else -1
    return i, j, viol


def wss_variables(pt, s, p, u, alpha, QD_pt, src, stats):
    """The working set :func:`smo_solve` picks at ``alpha`` (all variables active), as the
    caller's variable indices: ``(i, j, m(alpha) - M(alpha))`` (``j = -1``: none)."""
    st = new_state(pt, QD_pt.shape[0])
    return _wss(SMODual(pt, s, p, u, QD_pt, alpha, np.empty(alpha.shape[0]),
                        np.zeros(alpha.shape[0])), src, stats, st)


def smo_solve(pt_in, s_in, p_in, u_in, QD_pt, alpha_in, has_eq, tol, max_iter, shrinking, src,
              stats, newton=True, dg=None):
    """Run the SMO in place on ``alpha_in`` (feasible on entry); returns
    ``(n_iter, reached_max_iter, violation, G)`` with the full gradient
    ``G = Q alpha + p + dg * alpha`` (in the caller's order; ``dg`` the copies' diagonal,
    None: none).

    The variables are regrouped by point (:func:`_setup_layout`; the state is kept per
    point, see above) and, as in LIBSVM, the points are kept in an order where the active
    ones come first (shrinking swaps a shrunk point behind the active ones), so that every
    scan of the working-set selection and every update of ``f`` runs over a contiguous range
    without an index array; points whose variables all have ``u_t = 0`` (pinned at 0) are
    placed after all others. The compiled solver (:func:`_smo_chunk`) runs in chunks of
    bounded work (:mod:`fast._chunk`); Ctrl-C is raised between two of them, and
    ``alpha_in`` is written only when the run is done.
    """
    m = QD_pt.shape[0]
    st = new_state(pt_in, m)
    ctl = np.zeros(N_KCTL, dtype=np.int64)
    fctl = np.zeros(N_FCTL)
    G_out = np.empty(alpha_in.shape[0])
    has_dg = dg is not None and bool(np.any(dg != 0.0))
    dg = (np.ascontiguousarray(dg, dtype=np.float64) if has_dg
          else np.zeros(alpha_in.shape[0]))
    dual = SMODual(pt_in, s_in, p_in, u_in, QD_pt, alpha_in, G_out, dg)
    opt = SMOOptions(np.bool_(has_eq), float(tol), int(max_iter), np.bool_(shrinking),
                     np.bool_(newton), np.bool_(has_dg))
    while _smo_chunk(dual, opt, src, stats, st, ctl, fctl, _chunk.budget()) == PAUSED:
        pass                          # (between two calls: where Ctrl-C is raised)
    if not (np.all(np.isfinite(G_out)) and np.all(np.isfinite(alpha_in))):
        # (NaN compares false: the working-set selection then finds no pair and the run
        # would end as if at the optimum, with a violation of 0)
        from refmodels.solution import SolverError

        raise SolverError(f"the SMO met a gradient or a multiplier that is not finite (NaN "
                          f"or overflow) within {int(ctl[K_IT])} iterations: the problem's "
                          f"numbers are beyond float64 at this scale (largest |G| = "
                          f"{float(np.max(np.abs(G_out), initial=0.0)):.3e})")
    return int(ctl[K_IT]), bool(ctl[K_HIT]), float(fctl[F_VIOL]), G_out


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _start_recon(ctl, lo, hi, count, nxt):
    """Schedule a gradient reconstruction of positions ``lo .. hi - 1`` (:func:`_reconstruct`;
    ``count`` 1: counted in the statistics), followed by ``nxt`` (:data:`N_SAFE` ...)."""
    ctl[K_R_STAGE] = 0
    ctl[K_R_LO] = lo
    ctl[K_R_HI] = hi
    ctl[K_R_COUNT] = count
    ctl[K_NEXT] = nxt
    ctl[K_PC] = PC_RECON


@njit(cache=True, no_cfunc_wrapper=True)
def _smo_chunk(dual, opt, src, stats, st, ctl, fctl, budget):
    """The SMO of :func:`smo_solve` on ``dual`` (an :data:`SMODual`) with the options ``opt``
    (an :data:`SMOOptions`) and the kernel rows ``src`` for about ``budget`` work units
    (:mod:`fast._chunk`): returns :data:`fast._chunk.PAUSED` while it is not done, 0 when it
    is (``dual.alpha``, ``dual.G`` and ``ctl[K_IT]``, ``ctl[K_HIT]``, ``fctl[F_VIOL]`` then
    hold the result). ``st`` (:func:`new_state`), ``ctl`` and ``fctl`` (zeros on the first
    call) carry the run from one call to the next, which resumes exactly where the last one
    stopped: at the top of an iteration, in the setup's sum of kernel rows, or in a gradient
    reconstruction (:func:`_reconstruct`); a Newton step or a shrinking round is never cut."""
    u_in, alpha_in = dual.u, dual.alpha
    has_eq, tol, max_iter, shrinking, newton, has_dg = opt
    n = alpha_in.shape[0]
    m = dual.kdiag.shape[0]
    pidx, A, U = st.point, st.alpha, st.upper
    v = step_vars(st)               # the arrays the steps touch (fast._smo_steps.StepVars)
    miss_cost = m * (KERNEL_ROW_PER_FEATURE * src.X.shape[1] + KERNEL_ROW_EXTRA)
    unshrink = np.bool_(False)    # typed, not literal (one specialisation of the callees)
    yes = np.bool_(True)          # (the same for the pair steps' _select: not Literal[True])
    work = 0.0
    if ctl[K_PC] == PC_SETUP:
        ctl[K_NLIVE] = _setup_layout(dual, st)
        work += n + m * A.shape[1]
        ctl[K_CURSOR] = 0
        ctl[K_PC] = PC_SETUP_ROWS
    if ctl[K_PC] == PC_SETUP_ROWS:
        nxt, work = _setup_rows(st, ctl[K_CURSOR], src, stats, work, budget, miss_cost)
        if nxt < m:
            ctl[K_CURSOR] = nxt
            return PAUSED
        _setup_finish(st)
        n_var = 0
        for t in range(n):
            if u_in[t] > 0.0:
                n_var += 1
        # the first shrinking comes after a quarter of LIBSVM's period (then every
        # min(n, 1000)): the first iterations otherwise scan every variable (SVMm m = 1,000:
        # same iterations, less time; the final unshrink-and-recheck keeps the stop exact)
        shrink_every = n if n < 1000 else 1000      # min(n, 1000) (no builtin min, max here:
        ctl[K_SHRINK_EVERY] = shrink_every          # each compiles a function of its own)
        ctl[K_COUNTER] = shrink_every // 4 + 1
        ctl[K_PERIOD] = 100 * n_var if 100 * n_var > 10_000 else 10_000   # max(100 n_var, 10^4)
        ctl[K_ACTIVE] = ctl[K_NLIVE]
        ctl[K_WAIT] = NEWTON_WAIT
        ctl[K_IMAX] = -1
        fctl[F_GMAX] = -np.inf
        ctl[K_PC] = PC_RUN
    n_live = ctl[K_NLIVE]
    shrink_every = ctl[K_SHRINK_EVERY]
    period = ctl[K_PERIOD]
    it = ctl[K_IT]
    counter = ctl[K_COUNTER]
    if ctl[K_UNSHRINK] != 0:
        unshrink = yes
    since_full = ctl[K_SINCE_FULL]
    active_size = ctl[K_ACTIVE]
    have_up = np.bool_(ctl[K_HAVE_UP] != 0)   # (Gmax, imax) of _select's scan known
    stable = ctl[K_STABLE]                    # steps since the free set last changed
    wait = ctl[K_WAIT]
    hit_max = ctl[K_HIT] != 0
    Gmax, imax = fctl[F_GMAX], np.int64(ctl[K_IMAX])
    go = G_TOP
    misses = stats[ROW_MISS]
    while True:
        if ctl[K_PC] == PC_RECON:
            done, work = _reconstruct(st, ctl, src, stats, work, budget, miss_cost)
            if not done:
                break
            nxt = ctl[K_NEXT]
            ctl[K_PC] = PC_RUN
            if nxt == N_SAFE:
                active_size = n_live
                since_full = 0
                go = G_SHRINK
            elif nxt == N_AGAIN:
                active_size, unshrink, again = _do_shrinking(st, has_eq, n_live, yes, tol,
                                                             stats)
                have_up = False
                go = G_SELECT
            elif nxt == N_CONV:
                active_size = n_live
                go = G_CONV
            elif nxt == N_FINAL1:
                # f at the points whose copies are all pinned (u = 0), which the steps do not
                # maintain
                _start_recon(ctl, n_live, m, 0, N_FINAL2)
                continue
            else:
                _finish(st, n_live, has_eq, dual, fctl)
                ctl[K_IT] = it
                ctl[K_HIT] = 1 if hit_max else 0
                return 0
        if go == G_TOP:
            if work >= budget:
                break
            if it >= max_iter:
                hit_max = True
                # f at every point: the shrunk ones first
                _start_recon(ctl, active_size, n_live, 1, N_FINAL1)
                continue
            go = G_SELECT
            if shrinking:
                counter -= 1
                if counter == 0:
                    counter = shrink_every
                    since_full += shrink_every
                    go = G_SHRINK
                    if since_full >= period and active_size < n_live:
                        # safeguard (not in LIBSVM): a long run on the shrunk set may be stuck
                        # on a problem whose shrunk variables violate; bring them all back.
                        _start_recon(ctl, active_size, n_live, 1, N_SAFE)
                        continue
        if go == G_SHRINK:
            active_size, unshrink, again = _do_shrinking(st, has_eq, active_size, unshrink,
                                                         tol, stats)
            have_up = False
            go = G_SELECT
            if again:
                # LIBSVM's unshrink, once: every live point active, then shrink again
                _start_recon(ctl, active_size, n_live, 1, N_AGAIN)
                continue
        misses = stats[ROW_MISS]
        if go == G_CONV:
            iq, ib, jq, jb, viol = _select(v, has_eq, active_size, np.bool_(False), Gmax,
                                           imax, src, stats, has_dg)
            if viol <= tol or jq < 0:
                _start_recon(ctl, active_size, n_live, 1, N_FINAL1)
                continue
            stats[_RESUME] += 1          # a shrunk variable violates: resume on all
            counter = 1
        else:
            iq, ib, jq, jb, viol = _select(v, has_eq, active_size, have_up, Gmax, imax, src,
                                           stats, has_dg)
            if viol <= tol or jq < 0:
                # (a NaN violation is not a stop: it is caught at the stop on all points)
                _start_recon(ctl, active_size, n_live, 1,
                             N_CONV if active_size < n_live else N_FINAL1)
                continue
        go = G_TOP
        work += ITER_COST + ITER_POINT_COST * active_size
        if newton and stable >= wait:
            # the free set has not changed for a while: a Newton step on it (beyond LIBSVM)
            stable = 0
            # (its cost, at most that of the last NEWTON_COST * wait steps)
            cap = NEWTON_COST * float(wait) * active_size
            applied, r = _newton(st, active_size, has_eq, src, stats,
                                 cap if cap < NEWTON_MAX_CUBE else NEWTON_MAX_CUBE)
            work += float(r) ** 3 / 3.0 + float(r) * active_size + (
                stats[ROW_MISS] - misses) * miss_cost
            if applied:
                have_up = False
                wait = NEWTON_WAIT
                continue
            wait *= 2                    # (not applicable now: try again later, less often)
        it += 1
        pair = has_eq
        if not has_eq and (it & 1) == 0:
            # beyond LIBSVM: every other step, WSS3's pair step (a feasible direction here too)
            pq, pb, qq, qb, pv = _select(v, yes, active_size, np.bool_(False), Gmax, imax,
                                         src, stats, has_dg)
            if qq >= 0 and pv > 0.0:
                iq, ib, jq, jb, pair = pq, pb, qq, qb, True
        fi = A[iq, ib] > 0.0 and A[iq, ib] < U[iq, ib]
        fj = A[jq, jb] > 0.0 and A[jq, jb] < U[jq, jb]
        if pair:
            Ki = _row(pidx[iq], src, stats)
            Kj = _row(pidx[jq], src, stats)
            # (row i was used last, so fetching row j never evicts it: the cache has >= 2 slots)
            Gmax, imax = _step_pair(v, iq, ib, jq, jb, active_size, Ki, Kj)
            have_up = True
        else:
            _step_single(v, iq, ib, active_size, _row(pidx[iq], src, stats))
        if (fi == (A[iq, ib] > 0.0 and A[iq, ib] < U[iq, ib])
                and fj == (A[jq, jb] > 0.0 and A[jq, jb] < U[jq, jb])):
            stable += 1
        else:
            stable = 0
        work += (stats[ROW_MISS] - misses) * miss_cost
    # paused (the budget is spent): the run's scalars for the next call
    ctl[K_IT] = it
    ctl[K_COUNTER] = counter
    ctl[K_UNSHRINK] = 1 if unshrink else 0
    ctl[K_SINCE_FULL] = since_full
    ctl[K_ACTIVE] = active_size
    ctl[K_HAVE_UP] = 1 if have_up else 0
    ctl[K_STABLE] = stable
    ctl[K_WAIT] = wait
    ctl[K_IMAX] = imax
    ctl[K_HIT] = 1 if hit_max else 0
    fctl[F_GMAX] = Gmax
    return PAUSED


@njit(cache=True, no_cpython_wrapper=True, no_cfunc_wrapper=True)
def _finish(st, n_live, has_eq, dual, fctl):
    """The end of a run (``f`` known at every point): the maximal KKT violation over all the
    live points into ``fctl[F_VIOL]``, ``alpha`` and the full gradient in the caller's order
    (into ``dual.alpha``, ``dual.G``)."""
    alpha_in, G_out = dual.alpha, dual.G
    A, S, P, U, D, f = st.alpha, st.sign, st.lin, st.upper, st.diag, st.f
    if has_eq:
        g1, g2 = _violations(n_live, f, st.up, st.low)
        viol = g1 + g2
        if not viol > 0.0:
            viol = 0.0
    else:
        viol = _select_single(n_live, f, A, S, P, U, D, st.kdiag)[2]
    fctl[F_VIOL] = viol
    for q in range(A.shape[0]):
        for b in range(A.shape[1]):
            t = st.var[q, b]
            if t >= 0:
                alpha_in[t] = A[q, b]
                G_out[t] = P[q, b] + S[q, b] * f[q]
                if D[q, b] != 0.0:
                    G_out[t] += D[q, b] * A[q, b]
