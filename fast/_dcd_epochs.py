"""The DCD's epochs (numba): the coordinate steps of :mod:`fast._dcd` over the points, one
compiled loop per path (gram, cache, linear dense, linear CSR), in chunks of bounded work.

The problem, the paths and the stop are described in :mod:`fast._dcd`, whose :func:`run`
drives these epochs between its Newton polishes and duality-gap checks. The epochs read
the problem through named records: the per-copy constants (:data:`Copies`), what they read
of ``Q`` (:data:`DcdData`), the run's arrays (:data:`DcdState`) and its options
(:data:`DcdOptions`).
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from . import _kernels as _K
from ._chunk import PAUSED
from ._rows import (PREFETCH_AHEAD, dense_row_prefetch, prefetch, row_axpy, row_dot,
                    row_prefetch)

MODE_GRAM, MODE_CACHE, MODE_LINEAR, MODE_CSR = 0, 1, 2, 3

#: the constants of the ``k`` signed copies of the points (each a (k,) float64 array):
#: ``sigma``, ``p``, ``d``, ``lo``, ``hi`` of the module doc, per copy
Copies = namedtuple("Copies", "sign p dg lo hi")

#: slots of the epochs' ``stats`` array: the kernel-row source counts in the first three
#: (``fast._kernels.ROW_REQ, ROW_MISS, ROW_CLOCK``: requests, misses and the LRU clock,
#: which carries over between calls), the epochs report in the others
ST_EPOCHS, ST_PGMAX, ST_PGMIN, ST_UNSHRINK, ST_CONVERGED, ST_UPDATES = 3, 4, 5, 6, 7, 8
#: ... whether a gradient was not finite (NaN or infinite: the epochs stopped there), and
#: the points visited (the epochs' actual work: a shrunk epoch visits only its active set)
ST_NONFINITE, ST_VISITS = 9, 10
N_STATS = 11

#: slots of the epochs' ``ctl`` array, the state of a run between two calls (all zeros: a
#: fresh run): whether it started, the epochs done, the position in the current epoch
#: (-1: the next epoch starts), the active points, last epoch's and this epoch's
#: projected-gradient extremes, the unshrink rounds, the coordinate updates and the points
#: visited so far
(C_STARTED, C_IT, C_POS, C_ACTIVE, C_PGMAX_OLD, C_PGMIN_OLD, C_PGMAX_NEW, C_PGMIN_NEW,
 C_UNSHRINK, C_UPDATES, C_VISITS) = range(11)
N_CTL = 11
#: the work units of the epochs (:mod:`fast._chunk`; measured on the paths of
#: ``validation/bench_chunks.py``): a point visited (its data read at a random place), an
#: entry of a data row read or updated on the linear path, dense or CSR (scattered), and an
#: entry of ``s`` updated on the kernel paths (streamed: one unit); a kernel row computed
#: on a cache miss costs ``m (KERNEL_ROW_PER_FEATURE d + KERNEL_ROW_EXTRA)`` (its inner
#: products, then the kernel's function of each: RBF's exponential)
POINT_COST = 300.0
DENSE_ENTRY_COST = 3.0
CSR_ENTRY_COST = 30.0
KERNEL_ROW_PER_FEATURE = 2.0
KERNEL_ROW_EXTRA = 10.0

#: the rows of the linear path's data ``X`` for the epochs (as :func:`fast._rows.row_arrays`
#: gives them): ``Xd`` the dense rows (C-contiguous float64), ``indptr, indices, data`` the
#: CSR arrays (int64, int32, float64); the form the path does not use holds placeholders
LinearData = namedtuple("LinearData", "Xd indptr indices data")
#: a LinearData holding no rows (the placeholder argument of the gram and cache paths)
NO_LINEAR = LinearData(np.zeros((1, 1)), np.zeros(1, dtype=np.int64),
                       np.zeros(1, dtype=np.int32), np.zeros(1))
#: what the epochs read of ``Q = diag(qy) K diag(qy)`` (gram, cache) or ``Y X X^T Y``
#: (linear): its diagonal ``diag`` (``Q_ii``, (m,)), the scaling ``qy`` (m,), the kernel
#: rows ``rows`` (a :data:`fast._kernels.RowData`) and the data rows ``lin`` (a
#: :data:`LinearData`); each path reads only its own rows, the other is a placeholder
#: (:data:`fast._kernels.NO_ROWS` or :data:`NO_LINEAR`)
DcdData = namedtuple("DcdData", "diag qy rows lin")
#: the arrays of a run of the epochs: ``alpha`` ((k m,), in place), ``s = Q u`` (m,) or,
#: on the linear paths, ``w = X^T Y u`` (d,) maintained (the other a placeholder), the
#: report ``stats`` (:data:`N_STATS` float64: slots ``ST_...``), the order of the points
#: ``index`` ((m,) int64) and ``ctl`` (:data:`N_CTL` float64: slots ``C_...``; zeros: a
#: fresh run)
DcdState = namedtuple("DcdState", "alpha s w stats index ctl")
#: the options of a run of the epochs: the tolerance on the projected gradient's spread,
#: the epoch cap, whether to shrink, the seed of the order, and a cap on the points visited
#: (checked between epochs; ``inf``: none)
DcdOptions = namedtuple("DcdOptions", "tol max_iter shrinking seed max_visits")

# ---------------------------------------------------------------------------------------
# numba epoch helpers
# ---------------------------------------------------------------------------------------
@njit(cache=True)
def _pg_full(idx, sign, p, dg, lo, hi, alpha, s):
    """``max_j |PG_j|`` over all variables at ``alpha`` (``s = Q u`` exact)."""
    worst = 0.0
    for j in range(alpha.shape[0]):
        g = sign[j] * s[idx[j]] + p[j] + dg[j] * alpha[j]
        if alpha[j] <= lo[j]:
            pg = g if g < 0.0 else 0.0
        elif alpha[j] >= hi[j]:
            pg = g if g > 0.0 else 0.0
        else:
            pg = g
        if abs(pg) > worst:
            worst = abs(pg)
    return worst


@njit(cache=True, inline="always")
def _base_grad(mode, i, qyi, s, w, Xd, indptr, indices, data):
    """``s_i = (Q u)_i``: maintained (gram, cache) or ``y_i x_i^T w`` (linear; ``qyi = y_i``;
    ``Xd, indptr, indices, data`` the fields of the :data:`LinearData`)."""
    if mode <= 1:
        return s[i]
    if mode == 2:
        return qyi * row_dot(0, i, Xd, indptr, indices, data, w)
    return qyi * row_dot(1, i, Xd, indptr, indices, data, w)


@njit(cache=True, inline="always")
def _kernel_step(mode, i, c, s, qy, rows, stats):
    """``u_i += delta`` with ``c = delta * qy[i]`` on a kernel path (``mode`` 0 gram, 1
    cache): update ``s = Q u`` with row ``i`` of ``K`` from the one row source. The gram
    path reads ``rows.G[i]`` itself (what :func:`fast._kernels.source_row` returns for a
    Gram), so its loop compiles without the cache code. (The linear paths update
    ``w = X^T Y u`` by :func:`fast._rows.row_axpy` in the epochs.)"""
    if mode == 0:
        row = rows.G[i]
    else:
        row = _K.source_row_inline(i, rows, stats)
    for k in range(s.shape[0]):
        s[k] += c * qy[k] * row[k]


def _make_epochs(mode):
    """The epoch loop compiled for one path: ``mode`` is a constant of the closure, so each
    path gets its own machine code with the other paths' branches removed (numba caches
    each). Called through :data:`_EPOCHS`."""

    @njit(cache=True)
    def epochs(copies, data, st, opt, budget):
        """The DCD epochs (LIBLINEAR ``solve_l2r_l1l2_svc`` structure), point by point, in
        chunks of about ``budget`` work units (:mod:`fast._chunk`): returns
        :data:`fast._chunk.PAUSED` when the budget is spent, 0 when the epochs are done
        (``st.stats`` then holds their report). ``data`` is a :data:`DcdData`, ``st`` a
        :data:`DcdState`, ``opt`` a :data:`DcdOptions`. The run's state is in ``st.ctl``
        (zeros: a fresh run, seeded with ``opt.seed``) and ``st.index`` (the order of the
        points): the next call resumes where the last one stopped, at the same point of the
        same epoch, so that a chunked run takes the steps of one long call.
        The work of a point (:data:`POINT_COST` ...) is its visit, its row (linear paths)
        read for ``s_i`` and again for an update, or ``s`` updated (kernel paths), plus a
        kernel row computed on a cache miss.

        The ``n = k m`` variables are ``k`` signed copies of each point (variable
        ``j = b m + i`` is copy ``b`` of point ``i``; ``copies`` the per-copy constants, a
        :data:`Copies`). ``data.rows`` is the :data:`fast._kernels.RowData` of the gram and
        cache paths, ``data.lin`` the :data:`LinearData` of the linear paths.

        An epoch visits the active *points* in random order and takes the coordinate steps
        of their ``k`` copies one after the other, sharing one evaluation of ``s_i``: after
        a step ``delta`` on copy ``b``, ``s_i`` moves by ``sigma_b delta Q_ii`` exactly, and
        ``s`` (or ``w``) is updated once per point with the summed change of ``u_i``. For ODM
        this halves the kernel-row (or ``x_i^T w``) work of a naive loop over the 2m
        variables. A copy that LIBLINEAR would shrink (at ``lo`` with a gradient above last
        epoch's ``PGmax``, at ``hi`` below ``PGmin``) takes no step and is left out of the
        projected-gradient spread; the point leaves the active set when all its copies
        would be shrunk.
        """
        bsign, bp, bdg, blo, bhi = copies
        diag, qy, rows, lin = data
        alpha, s, w, stats, index, ctl = st
        tol, max_iter, shrinking, seed, max_visits = opt
        # the rows read once per call: reading the fields in the per-point helpers instead
        # made the dense linear path's epochs measurably slower
        Xd, indptr, indices, vals = lin.Xd, lin.indptr, lin.indices, lin.data
        m = diag.shape[0]
        k = bsign.shape[0]
        INF = np.inf
        if ctl[C_STARTED] == 0.0:
            np.random.seed(seed)
            for i in range(m):
                index[i] = i
            active = m
            pgmax_old = INF
            pgmin_old = -INF
            it = 0
            n_unshrink = 0
            n_updates = 0
            visits = 0.0
            pgmax_new = 0.0
            pgmin_new = 0.0
            a = -1                     # (-1: an epoch starts, its permutation to draw)
            ctl[C_STARTED] = 1.0
        else:
            active = int(ctl[C_ACTIVE])
            pgmax_old = ctl[C_PGMAX_OLD]
            pgmin_old = ctl[C_PGMIN_OLD]
            it = int(ctl[C_IT])
            n_unshrink = int(ctl[C_UNSHRINK])
            n_updates = int(ctl[C_UPDATES])
            visits = ctl[C_VISITS]
            pgmax_new = ctl[C_PGMAX_NEW]
            pgmin_new = ctl[C_PGMIN_NEW]
            a = int(ctl[C_POS])
        converged = False
        nonfinite = False
        # the work of this call, and that of a kernel row computed on a cache miss
        work = 0.0
        miss_cost = 0.0
        if mode == 1:
            miss_cost = m * (KERNEL_ROW_PER_FEATURE * rows.X.shape[1] + KERNEL_ROW_EXTRA)
        while it < max_iter:
            if a < 0:
                if visits >= max_visits:
                    break
                # random permutation of the active points
                for t in range(active):
                    b = t + np.random.randint(0, active - t)
                    tmp = index[t]
                    index[t] = index[b]
                    index[b] = tmp
                # 0 is inside [min PG, max PG] by construction: the spread bounds every |PG|
                pgmax_new = 0.0
                pgmin_new = 0.0
                a = 0
            while a < active:
                if work >= budget:
                    ctl[C_ACTIVE] = active
                    ctl[C_PGMAX_OLD] = pgmax_old
                    ctl[C_PGMIN_OLD] = pgmin_old
                    ctl[C_IT] = it
                    ctl[C_UNSHRINK] = n_unshrink
                    ctl[C_UPDATES] = n_updates
                    ctl[C_VISITS] = visits
                    ctl[C_PGMAX_NEW] = pgmax_new
                    ctl[C_PGMIN_NEW] = pgmin_new
                    ctl[C_POS] = a
                    return PAUSED
                i = index[a]
                if mode == 3:
                    # the rows a few points ahead, asked for now (random order: no stream
                    # for the hardware to follow), and their offsets further ahead; dense
                    # rows too (fast._rows.PREFETCH_AHEAD)
                    if a + PREFETCH_AHEAD < active:
                        ia = index[a + PREFETCH_AHEAD]
                        row_prefetch(ia, indptr, indices, vals)
                        # (and the point's own entries: an L2 miss each, in random order)
                        prefetch(qy, ia)
                        prefetch(diag, ia)
                        for b in range(k):
                            prefetch(alpha, b * m + ia)
                    if a + 2 * PREFETCH_AHEAD < active:
                        prefetch(indptr, index[a + 2 * PREFETCH_AHEAD])
                elif mode == 2 and a + PREFETCH_AHEAD < active:
                    ia = index[a + PREFETCH_AHEAD]
                    dense_row_prefetch(ia, Xd)
                    prefetch(qy, ia)
                    prefetch(diag, ia)
                    for b in range(k):
                        prefetch(alpha, b * m + ia)
                if mode <= 1:
                    cost = 0.0
                elif mode == 2:
                    cost = DENSE_ENTRY_COST * Xd.shape[1]
                else:
                    cost = CSR_ENTRY_COST * (indptr[i + 1] - indptr[i])
                work += POINT_COST + cost
                visits += 1.0
                si = _base_grad(mode, i, qy[i], s, w, Xd, indptr, indices, vals)
                dii = diag[i]
                du = 0.0
                n_shrunk = 0
                for b in range(k):
                    j = b * m + i
                    sg, lo_j, hi_j, dg_b = bsign[b], blo[b], bhi[b], bdg[b]
                    aj = alpha[j]
                    g = sg * si + bp[b] + dg_b * aj
                    if not abs(g) < INF:
                        nonfinite = True       # (NaN or overflow: no step, the run stops)
                        break
                    pg = 0.0
                    if aj <= lo_j:
                        if shrinking and g > pgmax_old:
                            n_shrunk += 1
                            continue
                        elif g < 0.0:
                            pg = g
                    elif aj >= hi_j:
                        if shrinking and g < pgmin_old:
                            n_shrunk += 1
                            continue
                        elif g > 0.0:
                            pg = g
                    else:
                        pg = g
                    if pg > pgmax_new:
                        pgmax_new = pg
                    if pg < pgmin_new:
                        pgmin_new = pg
                    if abs(pg) > 1e-300:
                        qd_j = dii + dg_b
                        if qd_j > 0.0:
                            new = aj - g / qd_j
                            if new < lo_j:
                                new = lo_j
                            elif new > hi_j:
                                new = hi_j
                        else:
                            # zero curvature (phi(x_i) = 0, no diagonal): the objective is
                            # linear in alpha_j, so it goes to the bound the gradient points
                            # to (SPEC §2)
                            new = lo_j if g > 0.0 else hi_j
                        delta = new - aj
                        if delta != 0.0:
                            alpha[j] = new
                            du += sg * delta
                            si += sg * delta * dii
                            n_updates += 1
                if nonfinite:
                    break
                if n_shrunk == k:
                    active -= 1
                    index[a] = index[active]
                    index[active] = i
                    continue
                if du != 0.0:
                    misses = stats[_K.ROW_MISS] if mode == 1 else 0.0
                    if mode <= 1:
                        _kernel_step(mode, i, du * qy[i], s, qy, rows, stats)
                    elif mode == 2:
                        row_axpy(0, i, du * qy[i], Xd, indptr, indices, vals, w)
                    else:
                        row_axpy(1, i, du * qy[i], Xd, indptr, indices, vals, w)
                    if mode <= 1:
                        work += float(m)
                        if mode == 1:
                            work += (stats[_K.ROW_MISS] - misses) * miss_cost
                    else:
                        work += cost
                a += 1
            if nonfinite:
                break
            it += 1
            a = -1
            if pgmax_new - pgmin_new <= tol:
                if active == m:
                    converged = True
                    break
                # unshrink and recheck on the full set
                active = m
                pgmax_old = INF
                pgmin_old = -INF
                n_unshrink += 1
                continue
            pgmax_old = pgmax_new
            pgmin_old = pgmin_new
            if pgmax_old <= 0.0:
                pgmax_old = INF
            if pgmin_old >= 0.0:
                pgmin_old = -INF
        stats[ST_EPOCHS] = it
        stats[ST_PGMAX] = pgmax_new
        stats[ST_PGMIN] = pgmin_new
        stats[ST_UNSHRINK] = n_unshrink
        stats[ST_CONVERGED] = 1.0 if converged else 0.0
        stats[ST_UPDATES] = n_updates
        stats[ST_NONFINITE] = 1.0 if nonfinite else 0.0
        stats[ST_VISITS] = visits
        return 0

    return epochs


#: the epoch loop, one compiled specialisation per path
_EPOCHS = {mode: _make_epochs(mode) for mode in (MODE_GRAM, MODE_CACHE, MODE_LINEAR, MODE_CSR)}
