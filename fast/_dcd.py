"""One box-constrained dual coordinate descent (DCD), shared by SVM, ODML, LDM and ODM.

The problem (seed 002 Alg. 1, ``ODM_dcd``; LIBLINEAR's ``solve_l2r_l1l2_svc`` is the
model for permutation, shrinking and stopping):

.. math::

    \\min_{\\alpha}\\ \\tfrac12 u^\\top Q u + p^\\top\\alpha + \\tfrac12\\sum_j d_j\\alpha_j^2
    \\quad\\text{s.t.}\\quad lo \\le \\alpha \\le hi,\\qquad
    u = u_0 + \\sum_j \\sigma_j\\alpha_j e_{i(j)},

over ``n`` variables ``alpha_j``, each a *signed copy* of a training point ``i(j)``
(``sigma_j = +-1``). This one form covers

* SVM (SPEC §1): ``n = m``, ``sigma = 1``, ``Q = YGY``, ``p = -e``, ``d = 0``, ``u0 = 0``;
* ODML / LDM (SPEC §2–3): ``Q = H`` (Woodbury form), ``u = v = alpha + (mu2/m) e``,
  ``p = -e``, ``d = 0``;
* ODM (SPEC §4, eq. 15): ``n = 2m`` variables ``[zeta; beta]``, ``sigma = [+e; -e]``,
  ``u = zeta - beta``, ``Q = YGY``, ``p = [(theta-1)e; (theta+1)e]``, ``d = [a e; (a/mu) e]``:
  expanding ``1/2 u^T Q u`` gives exactly the 2m x 2m block matrix of eq. 15, which is
  never formed.

The gradient of coordinate ``j`` is ``g_j = sigma_j s_{i(j)} + p_j + d_j alpha_j`` with
``s = Q u``, and its curvature ``Q_{ii} + d_j``. The constants ``sigma, p, d, lo, hi`` are
the same for every copy ``b`` of the points (``k = 1`` copy for SVM/ODML/LDM, ``k = 2`` for
ODM), so they are passed per copy, not per variable: the epochs read, per point, only
``alpha``, ``Q_ii``, the label and the data row. An epoch visits the *points* in random
order and takes the steps of the ``k`` copies of each one after the other, sharing one
evaluation of ``s_i`` (:func:`fast._dcd_epochs._make_epochs`). ``s`` is provided by one of
three *paths*:

* ``gram`` (mode 0): ``Q = diag(qy) K diag(qy)`` with ``K`` a dense m x m matrix (the Gram,
  or ``H``), computed once with BLAS; ``s`` is maintained with rows of ``K``;
* ``cache`` (mode 1): the same with kernel rows on demand through the LRU cache of
  :mod:`fast._kernels` (``cache_size`` MB, as LIBSVM) when the Gram does not fit;
* ``linear`` (mode 2 dense, 3 CSR): ``Q = Y X X^T Y`` and ``w = X^T Y u`` is maintained
  (``s_i = y_i x_i^T w``): O(d) (O(nnz of the row) for CSR) per coordinate step, never an
  m x m matrix.

The epoch loop (:mod:`fast._dcd_epochs`) is compiled once per path (the path is a constant
of the closure), so the linear path's loop holds no test of the path and no call to the
kernel-row cache; this and the shared ``s_i`` made the linear epochs several times faster
(``validation/bench_libodm.py`` measures it; validation/decisions.md).

Stopping: the projected gradient ``PG`` over an epoch, ``max PG - min PG <= tol`` with
``max PG >= 0 >= min PG`` by construction (so every ``|PG_j| <= tol``). Shrinking as
LIBLINEAR: a variable at its lower bound whose gradient exceeds last epoch's ``PGmax`` (at
its upper bound: below ``PGmin``) takes no step and is left out of the spread; a point all
of whose copies are in that state leaves the active set; when the active set has
converged, every point is put back (*unshrink*) and the stop is re-checked on the full
set. (Seed 002's Alg. 1 draws the 2m ODM variables in one random order; visiting the two
copies of a point together is the same coordinate descent with another order, and the
same stop.)

Beyond LIBLINEAR (both on by default only when the caller leaves ``tol`` at its default,
the "certified" mode; see :func:`run`): an active-set Newton refinement on the free set
between chunks of epochs (coordinate descent crawls on ill-conditioned duals, e.g. a 1-D
RBF Gram or a linear kernel with d << m and a large C), and a duality-gap check that
tightens the tolerance until ``P + D_min <= 1e-9 (1 + |P|)``. On the linear path with one
copy and few features (SVM, ODML / LDM) the refinement is an active set on *all* the
variables exploiting the rank ``d`` of ``Q`` (``lowrank_polish`` of :func:`run`); with
many features (sparse rows) the SVM's is a conjugate-gradient Newton step on the free set
(``subspace_polish``).
"""
from __future__ import annotations

import functools
import time

import numpy as np
import scipy.sparse as sp

from . import _chunk, _common
from . import _kernels as _K
from ._chunk import PAUSED
# the epochs (numba) and their records
from ._dcd_epochs import (_EPOCHS, MODE_CACHE, MODE_CSR, MODE_GRAM, MODE_LINEAR, N_CTL,
                          N_STATS, NO_LINEAR, ST_CONVERGED, ST_EPOCHS, ST_NONFINITE, ST_PGMAX,
                          ST_PGMIN, ST_UNSHRINK, ST_UPDATES, ST_VISITS, Copies, DcdData,
                          DcdOptions, DcdState, LinearData, _pg_full)
from ._polish import SUBSPACE_MAX_CG, SUBSPACE_PG_FRACTION  # noqa: F401 (re-exported)
from ._polish import active_set_qp, one_blas_thread
from ._polish_lowrank import active_set_qp_lowrank
from ._polish import subspace_polish as _subspace_polish
from ._rows import row_arrays, row_sqnorms

#: default DCD tolerance on the projected gradient (absolute; gradients are O(1) in every
#: family since the linear terms of the duals are O(1)).
DEFAULT_TOL = 1e-8
DEFAULT_MAX_ITER = 100000
#: the default cap (``max_iter=None``) is a work budget of about ``EPOCH_WORK_BUDGET``
#: multiply-adds, counted on the points the epochs actually visit (a shrunk epoch visits its
#: active set only), at least ``MIN_EPOCHS`` full epochs' worth, in at most
#: ``EPOCH_CAP_FACTOR`` times as many epochs (each chunk of epochs ends in an O(nnz) or
#: O(m^2) product: a crawl on a small active set must not multiply those): on 10^4 kernel
#: points a crawl ends in seconds with a warning
EPOCH_WORK_BUDGET = 5e9
MIN_EPOCHS = 100
EPOCH_CAP_FACTOR = 10
#: with the default tol, the run also continues (tol / 10 at a time) until the duality gap
#: is below ``DEFAULT_GAP_TOL * (1 + |P|)`` (the certificate asks 1e-6)
DEFAULT_GAP_TOL = 1e-9
#: the low-rank active-set polish (``lowrank_polish`` of :func:`run`) is used only for at
#: most ``LOWRANK_MAX_D`` features (its steps cost O(|F| d^2)) and ``d < m / 2``
LOWRANK_MAX_D = 64
#: the low-rank polish may spend about ``LOWRANK_WORK`` times the multiply-adds the epochs
#: spent so far (``n d`` per epoch, ``d`` per update), plus ``LOWRANK_FLOOR``
LOWRANK_WORK = 4.0
LOWRANK_FLOOR = 1e6
#: ... and only once the free set has settled (the same at two checks: a warm start from
#: the previous point of a path) or the epochs have run ``LOWRANK_MIN_EPOCHS`` (its steps
#: touch only the free rows, so starting it before the free set settles costs little:
#: validation/decisions.md)
LOWRANK_MIN_EPOCHS = 300
#: the candidate polish (``candidate_polish`` of :func:`run`): the variables at a bound whose
#: gradient is within ``CANDIDATE_BAND * max |p|`` of zero join the free ones ...
CANDIDATE_BAND = 0.1
#: ... and it is tried once the free set has nearly settled: at most this fraction of it
#: changed since the previous check
SETTLED_FRACTION = 0.1

#: the subspace polish (``subspace_polish`` of :func:`run`) may spend about this fraction
#: of the multiply-adds the epochs spent so far
SUBSPACE_WORK = 0.5
#: (its conjugate gradients' caps: ``SUBSPACE_MAX_CG`` and ``SUBSPACE_PG_FRACTION`` of
#: :mod:`fast._polish`)

#: after a kept subspace step that moved at most this fraction of the free set to a bound,
#: the next chunk is :data:`SUBSPACE_SHORT_CHUNK` epochs
SUBSPACE_CLIPPED = 0.01
SUBSPACE_SHORT_CHUNK = 5

#: dense data with at most this fraction of nonzeros runs the linear path on CSR (a CSR step
#: costs about 3x a dense one per stored entry; validation/decisions.md)
LINEAR_CSR_DENSITY = 0.3
_PATH_NAME = {MODE_GRAM: "gram", MODE_CACHE: "cache", MODE_LINEAR: "linear", MODE_CSR: "linear"}

# ---------------------------------------------------------------------------------------
# Python driver
# ---------------------------------------------------------------------------------------
class Oracle:
    """How ``s = Q u`` is provided: ``gram`` / ``cache`` / ``linear`` (see module doc).

    ``gram``: ``K`` (any dense m x m matrix: the Gram, or ODML's ``H``) and ``qy`` with
    ``Q = diag(qy) K diag(qy)``.
    ``cache``: the kernel, the raw data ``X`` and ``qy = y`` (``Q = YKY``), ``cache_size`` MB.
    Both read their kernel rows from :attr:`rows`, a :class:`fast._kernels.RowSource` (the
    one source of the SMO and the DCD); the oracle adds the ``qy`` scaling.
    ``linear``: data ``X`` (dense or CSR) and ``y`` (``Q = Y X X^T Y``); dense data with at
    most a fraction ``LINEAR_CSR_DENSITY`` of nonzeros is run on CSR. Its rows are in
    :attr:`lin`, a :data:`LinearData` (:data:`NO_LINEAR` on the other paths).
    """

    def __init__(self, path, *, K=None, qy=None, X=None, kernel=None, cache_size=None):
        self.path = path
        self.qy = np.ascontiguousarray(qy, dtype=np.float64)
        m = self.qy.shape[0]
        self.m = m
        self.rows = None
        self.lin = NO_LINEAR
        if path == "gram":
            self.mode = MODE_GRAM
            self.rows = _K.RowSource(gram=K)
        elif path == "cache":
            self.mode = MODE_CACHE
            self.rows = _K.RowSource(kernel, X, cache_size)
        elif path == "linear":
            if not sp.issparse(X):
                X = np.ascontiguousarray(X, dtype=np.float64)
                if np.count_nonzero(X) <= LINEAR_CSR_DENSITY * X.size:
                    # mostly zeros: the epochs cost O(nnz of the row) per step on CSR
                    X = sp.csr_matrix(X)
            csr, self.X, Xd, indptr, indices, data = row_arrays(X)
            self.lin = LinearData(Xd, indptr, indices, data)
            self.mode = MODE_CSR if csr else MODE_LINEAR
            self.diag = self.qy**2 * row_sqnorms(self.X)
            self.d = X.shape[1]
            # the multiply-adds of one coordinate step's row (read for s_i, then updated):
            # d on dense rows, the mean stored entries of a row on CSR (at least 1)
            self.row_work = max(1.0, self.X.nnz / m) if csr else float(max(1, self.d))
        else:  # pragma: no cover
            raise ValueError(f"unknown path {path!r}")
        if self.rows is not None:
            self.diag = self.qy**2 * self.rows.diag

    def block(self, pts):
        """``Q[pts][:, pts]`` (``pts`` point indices, repeats allowed), dense."""
        q = self.qy[pts]
        if self.rows is not None:
            Kb = self.rows.block(pts)
        else:
            Xp = self.X[pts]
            Kb = Xp @ Xp.T
            Kb = np.asarray(Kb.toarray() if sp.issparse(Kb) else Kb, dtype=np.float64)
        return q[:, None] * Kb * q[None, :]

    def product(self, u):
        """``s = Q u`` exactly (used at start and to certify the returned point);
        for the linear path also returns ``w = X^T Y u``."""
        qy = self.qy
        c = qy * u
        if self.rows is not None:
            return qy * self.rows.matvec(c), None
        w = np.asarray(self.X.T @ c).ravel()
        return qy * np.asarray(self.X @ w).ravel(), w


def _blas_one_thread(fn):
    """Run ``fn`` with BLAS on one thread (:func:`fast._polish.one_blas_thread`): the
    driver's products and polishes are matrix-vector products and small factorisations."""
    @functools.wraps(fn)
    def wrapped(*args, **kwargs):
        with one_blas_thread():
            return fn(*args, **kwargs)
    return wrapped


def warm_box(warm_start, box, m):
    """The starting point of the box dual ``box`` (:class:`refmodels._box.BoxDual`):
    ``warm_start``'s variables of ``box.names`` (validated against the box), one block of
    ``m`` after the other, or zeros."""
    k = len(box.names)
    if warm_start is None:
        return np.zeros(k * m)
    return np.concatenate(_common.warm_values(warm_start, box.names, (m,) * k, (0.0,) * k,
                                              tuple(float(h) for h in box.hi)))


@_blas_one_thread
def run(oracle, *, sign, lo, hi, p, dg, alpha0, u0=None, tol, max_iter, seed, shrinking=True,
        polish=True, polish_every=50, polish_max=1500, polish_stable_only=False,
        primal=None, gap_tol=None, gap_target=None, kkt_ok=None, lowrank_polish=True,
        candidate_polish=False, subspace_polish=False):
    """Run the DCD on ``n = k m`` variables: ``k`` signed copies of each of the ``m`` points.

    ``sign`` (k,) is ``sigma`` per copy; ``lo``, ``hi``, ``p``, ``dg`` are per copy too (a
    scalar is the same for every copy). Variable ``j = b m + i`` is copy ``b`` of point ``i``
    (``alpha0`` is ordered so: ODM's ``[zeta; beta]``). Returns
    ``(alpha, u, s, w, info)`` with ``s = Q u`` and ``w`` (linear path) recomputed exactly at
    the returned point, and ``info`` with the epochs, the projected-gradient spread of the
    last epoch, the worst ``|PG|`` over all variables at the returned point, the number of
    unshrink-and-recheck rounds and whether it converged.

    ``polish``: coordinate descent converges linearly but slowly on ill-conditioned duals
    (e.g. RBF with a small gamma and a large C). The epochs run in chunks of
    ``polish_every`` (doubling after each kept step); between chunks, if the free set
    (variables strictly inside their box) is the same as at the previous check, a projected
    Newton step on it (:func:`_newton_polish`; at most ``polish_max`` variables and only if
    its O(|F|^3) is small against the work of the last chunk) is kept if it lowers the dual
    objective. The coordinate descent alone decides the stop; each chunk restarts the
    shrinking from the full set, with the seed ``seed + chunk index`` (reproducible).

    ``primal`` and ``gap_tol`` (used by the families when the user leaves ``tol`` at its
    default): when the projected-gradient stop holds, the duality gap
    ``P(primal point) + D_min(alpha)`` is computed (``primal(alpha, u, s, w)`` gives ``P``;
    ``D_min = 1/2 u^T s + p^T alpha + 1/2 sum_j d_j alpha_j^2``, constant included); if it
    exceeds ``gap_target(P)`` (default ``gap_tol (1 + |P|)``; the families pass
    :func:`fast._common.relative_gap_target`, relative to ``|P|`` down to the problem's
    objective unit) the tolerance is divided by 10 and the descent continues
    (down to ``1e-14``). A ``|PG| <= tol`` point can have a large gap when the box is wide
    (gap <= ~ 2 m C tol for the SVM) or the dual is ill-conditioned (ODM with theta near 1).
    ``kkt_ok(alpha, u, s, w) -> bool`` (optional, with ``gap_tol``): the certificate's other
    residuals at the point, which the gap does not bound (ODM's stationarity in the slacks,
    a norm over all the points against the norm of the multipliers); the run goes on the
    same way until it holds too, instead of stopping at a point that the self-check then
    sends back to a second run.

    ``lowrank_polish`` (default on; it applies to the linear path with one copy, no
    diagonal, ``d <=`` :data:`LOWRANK_MAX_D` and ``d < m / 2``: the SVM, and ODML / LDM on
    their whitened data): ``Q = Z Z^T`` with ``Z = Y X`` of rank ``d``, and between chunks
    the polish is :func:`fast._polish_lowrank.active_set_qp_lowrank` on *all* the
    variables (not only the free set), within about :data:`LOWRANK_WORK` times the work the
    epochs spent so far, once the free set has settled (the same at two checks) or the
    epochs have run :data:`LOWRANK_MIN_EPOCHS` (before, the polish of the other paths). At
    a large C the
    hinge dual is nearly an LP (most variables at a bound, at most about ``d`` free), where
    coordinate descent crawls (australian, german at C >= 2^14: 100,000 epochs
    without the stop; LDM on haberman, d = 3, at C = 2^20: 100,000 epochs, the dense polish
    refused on its 300 free variables) and the active set walks to the vertex in O(m) steps
    of O(m d).

    ``candidate_polish`` (default off; the SVM turns it on): where the low-rank polish on
    all the variables does not apply but ``Q = Z Z^T`` still has rank ``d`` (the linear
    path, one copy, no diagonal, more than :data:`LOWRANK_MAX_D` features and at most
    ``polish_max``), the polish is
    the active set on the *candidates*: the free variables and those at a bound whose
    gradient is within ``CANDIDATE_BAND * max |p|`` of zero (a point near the margin may
    still cross it), the others held where they are. It is tried once at most a fraction
    :data:`SETTLED_FRACTION` of the free set changed between two checks (the exact "the
    same at two checks" of the other polishes depends on the permutations: from one seed to
    the next it came hundreds of epochs apart, or not before ``max_iter``), within the
    budget of the low-rank polish, by :func:`fast._polish_lowrank.active_set_qp_lowrank` on
    the candidates' rows of ``Z`` when they outnumber the features (its steps factorise a
    ``d x d`` matrix), else by the dense active set on their ``Q``. If a candidate left out
    should have moved, the descent that follows sees it and the next check polishes again.

    ``subspace_polish`` (default off; the SVM turns it on): on the linear path with one
    copy where neither active set above applies (more features than ``polish_max``,
    typically sparse rows: text-like data with thousands of free variables, where the
    descent takes hundreds of epochs per digit of the gap), the polish is a projected
    Newton step on the free set by conjugate gradients on the rows of its points
    (:func:`_subspace_polish`; no ``|F| x |F|`` matrix), within :data:`SUBSPACE_WORK` times
    the epochs' work so far, tried once at most a fraction :data:`SETTLED_FRACTION` of the
    free set changed between two checks. The step is kept only if it lowers the dual; the
    descent that follows and the stop decide as before.

    The default cap (``max_iter=None``) spends :data:`EPOCH_WORK_BUDGET` on the points the
    epochs visit, at ``k`` times a row's cost each: ``m`` (kernel paths), ``d`` (dense rows)
    or the mean stored entries of a row (CSR); that is the work of ``info["work_cap_epochs"]``
    full epochs, which shrinking spreads over more epochs (up to :data:`EPOCH_CAP_FACTOR`
    times as many).
    Counting full epochs instead stopped the SVM at 500,000 x 50,000 sparse rows at 142
    epochs, most of them shrunk to a small active set, short of its stop.

    The driver runs with BLAS on one thread (:func:`fast._polish.one_blas_thread`).
    """
    m = oracle.m
    bsign = np.ascontiguousarray(np.atleast_1d(sign), dtype=np.float64)
    k = bsign.shape[0]
    n = k * m
    visit_cap, work_cap_epochs = np.inf, None
    if max_iter is None:
        row = m if oracle.mode <= MODE_CACHE else oracle.row_work
        work_cap_epochs = int(min(DEFAULT_MAX_ITER,
                                  max(MIN_EPOCHS, EPOCH_WORK_BUDGET / (n * row))))
        visit_cap = float(work_cap_epochs) * m
        max_iter = min(DEFAULT_MAX_ITER, EPOCH_CAP_FACTOR * work_cap_epochs)
    blo, bhi, bp, bdg = (np.array(np.broadcast_to(v, (k,)), dtype=np.float64)
                         for v in (lo, hi, p, dg))
    # the same constants per variable, for the O(n) NumPy work outside the epochs
    idx = np.arange(n, dtype=np.int64) % m
    sign, lo, hi, p, dg = (np.repeat(v, m) for v in (bsign, blo, bhi, bp, bdg))
    alpha = np.array(alpha0, dtype=np.float64)
    if alpha.shape != (n,):
        raise ValueError(f"alpha0 must have shape ({n},); got {alpha.shape}")
    u0 = np.zeros(m) if u0 is None else np.asarray(u0, dtype=np.float64)

    def u_of(a):
        return u0 + np.bincount(idx, weights=sign * a, minlength=m)

    s, w = oracle.product(u_of(alpha))
    mode = oracle.mode
    Zlr = None
    if (lowrank_polish and polish and mode in (MODE_LINEAR, MODE_CSR) and k == 1
            and not np.any(bdg) and oracle.d <= LOWRANK_MAX_D and 2 * oracle.d < m):
        Xl = oracle.X.toarray() if sp.issparse(oracle.X) else oracle.X
        Zlr = np.ascontiguousarray((bsign[0] * oracle.qy)[:, None] * Xl, dtype=np.float64)
    # the candidate polish: the low-rank structure without the low-rank polish on all the
    # variables (too many features for its steps)
    cand = (candidate_polish and polish and Zlr is None and mode in (MODE_LINEAR, MODE_CSR)
            and k == 1 and not np.any(bdg) and oracle.d <= polish_max)
    n_candidate_steps = 0
    # the subspace polish: the linear path where neither active set applies (many features,
    # typically sparse rows)
    subspace = (subspace_polish and polish and Zlr is None and not cand
                and mode in (MODE_LINEAR, MODE_CSR) and k == 1)
    sub_work = 0.0
    n_subspace_steps = 0
    band = CANDIDATE_BAND * float(np.max(np.abs(bp)))
    dcd_work = 0.0
    copies = Copies(bsign, bp, bdg, blo, bhi)
    rows = _K.NO_ROWS if oracle.rows is None else oracle.rows.src
    data = DcdData(oracle.diag, oracle.qy, rows, oracle.lin)
    stats = np.zeros(N_STATS)
    ctl = np.zeros(N_CTL)
    index = np.empty(m, dtype=np.int64)
    t0 = time.perf_counter()
    epochs, n_unshrink, n_updates, rounds, visits = 0, 0, 0, 0, 0.0
    n_polish, polish_time = 0, 0.0
    converged = False
    last_free = None
    if gap_target is None and gap_tol is not None:
        def gap_target(P):
            return gap_tol * (1.0 + abs(P))
    polish_gap = int(polish_every)
    short_chunk = None
    cur_tol = float(tol)
    n_refine = 0
    n_gap_stop = 0
    n_lowrank_steps = 0
    while True:
        chunk = max_iter - epochs
        if polish:
            chunk = min(chunk, polish_gap if short_chunk is None else short_chunk)
        short_chunk = None
        wv = np.zeros(1) if w is None else np.ascontiguousarray(w, dtype=np.float64)
        ctl[:] = 0.0                  # a fresh run of the epochs (seeded; all points active)
        st = DcdState(alpha, s, wv, stats, index, ctl)
        opt = DcdOptions(float(cur_tol), int(chunk), bool(shrinking),
                         int(seed + rounds) % (2**31), float(visit_cap - visits))
        while _EPOCHS[mode](copies, data, st, opt, _chunk.budget()) == PAUSED:
            pass                      # (between two calls: where Ctrl-C is raised)
        if stats[ST_NONFINITE]:
            _not_finite(f"a gradient (largest |Q u| {float(np.max(np.abs(s))):.3e})",
                        epochs + int(stats[ST_EPOCHS]))
        rounds += 1
        epochs += int(stats[ST_EPOCHS])
        n_unshrink += int(stats[ST_UNSHRINK])
        n_updates += int(stats[ST_UPDATES])
        visits += stats[ST_VISITS]
        converged = bool(stats[ST_CONVERGED])
        if Zlr is not None or cand:
            dcd_work += oracle.d * (stats[ST_UPDATES] + stats[ST_EPOCHS] * n)
        if subspace:
            sub_work += oracle.row_work * (stats[ST_UPDATES] + stats[ST_EPOCHS] * n)
        if converged and primal is not None and gap_tol is not None:
            u_now = u_of(alpha)
            s_ex, w_ex = oracle.product(u_now)
            P = float(primal(alpha, u_now, s_ex, w_ex))
            Dmin = float(0.5 * u_now @ s_ex + p @ alpha + 0.5 * np.sum(dg * alpha * alpha))
            gap = P + Dmin
            if not np.isfinite(gap):
                _not_finite(f"the duality gap ({P!r} + {Dmin!r})", epochs)
            if (gap > gap_target(P) or (kkt_ok is not None
                                        and not kkt_ok(alpha, u_now, s_ex, w_ex))) \
                    and cur_tol > 1e-14:
                cur_tol = max(cur_tol / 10.0, 1e-14)
                n_refine += 1
                converged = False
                s, w = s_ex, w_ex
                if epochs < max_iter and visits < visit_cap:
                    continue
        if converged:
            break
        # exact s / w (no drift); once the free set has settled (the same at two checks),
        # the slow tail of coordinate descent is a linear system: try a Newton step on it
        u_now = u_of(alpha)
        s, w = oracle.product(u_now)
        if primal is not None and gap_tol is not None:
            # the duality gap certifies the point whatever the projected gradient says: on
            # badly scaled data (features x1e4) |PG| <= tol can be below what floating
            # point resolves, while the gap is already at the certificate's level
            P = float(primal(alpha, u_now, s, w))
            Dmin = float(0.5 * u_now @ s + p @ alpha + 0.5 * np.sum(dg * alpha * alpha))
            if P + Dmin <= gap_target(P) and (kkt_ok is None or kkt_ok(alpha, u_now, s, w)):
                converged = True
                n_gap_stop = 1
                break
        if epochs >= max_iter or visits >= visit_cap:   # (after the gap's check: the last
            break                                         # chunk may have met it)
        free = (alpha > lo) & (alpha < hi)
        # the low-rank active set starts once the free set has settled (the same at two
        # checks: after a warm start from the previous point of a path, within a few
        # chunks) or after LOWRANK_MIN_EPOCHS epochs, whichever comes first
        settled = last_free is not None and np.array_equal(free, last_free)
        if Zlr is not None and (epochs >= LOWRANK_MIN_EPOCHS or settled):
            tp = time.perf_counter()
            g = sign * s[idx] + p
            x, change, steps = active_set_qp_lowrank(
                Zlr, g, alpha.copy(), lo, hi, budget=LOWRANK_WORK * dcd_work + LOWRANK_FLOOR)
            n_lowrank_steps += steps
            polish_gap *= 2
            if change < -1e-15 * (1.0 + abs(float(g @ alpha))):
                alpha[:] = x
                n_polish += 1
                s, w = oracle.product(u_of(alpha))
                free = (alpha > lo) & (alpha < hi)
            polish_time += time.perf_counter() - tp
        elif cand:
            # nearly settled: at most SETTLED_FRACTION of the free set changed
            if last_free is not None and (np.count_nonzero(free != last_free)
                                          <= SETTLED_FRACTION * max(1, np.count_nonzero(free))):
                tp = time.perf_counter()
                steps = _candidate_polish(oracle, sign * s[idx] + p, alpha, lo, hi, bsign[0],
                                          band, LOWRANK_WORK * dcd_work + LOWRANK_FLOOR)
                n_candidate_steps += abs(steps)
                polish_gap *= 2
                if steps > 0:
                    n_polish += 1
                    s, w = oracle.product(u_of(alpha))
                    free = (alpha > lo) & (alpha < hi)
                polish_time += time.perf_counter() - tp
        elif subspace:
            if last_free is not None and (np.count_nonzero(free != last_free)
                                          <= SETTLED_FRACTION * max(1, np.count_nonzero(free))):
                tp = time.perf_counter()
                steps = _subspace_polish(oracle, bsign[0], bp[0], bdg[0], blo[0], bhi[0],
                                         alpha, s, SUBSPACE_WORK * sub_work + LOWRANK_FLOOR,
                                         pg_tol=cur_tol)
                # (no doubling of the chunk here: the next check comes as soon, since
                # these steps, not the epochs, make most of the progress; doubling took
                # five times the epochs)
                n_subspace_steps += abs(steps)
                if steps > 0:
                    n_polish += 1
                    s, w = oracle.product(u_of(alpha))
                    before = free
                    free = (alpha > lo) & (alpha < hi)
                    # a step that sent few free variables to a bound is nearly the optimum:
                    # a few epochs fix those, and the next polish (cheap: its residual is
                    # small) finishes (validation/decisions.md)
                    if np.count_nonzero(free != before) <= SUBSPACE_CLIPPED * max(
                            1, np.count_nonzero(before)):
                        short_chunk = SUBSPACE_SHORT_CHUNK
                polish_time += time.perf_counter() - tp
        elif polish_stable_only is False or (last_free is not None
                                           and np.array_equal(free, last_free)):
            tp = time.perf_counter()
            # worth it only if its O(|F|^3) is small against the work of the last chunk
            per_update = m if mode <= MODE_CACHE else max(1, oracle.d)
            work = stats[ST_UPDATES] * per_update + stats[ST_EPOCHS] * n * (
                1 if mode <= MODE_CACHE else max(1, oracle.d))
            if _newton_polish(oracle, idx, sign, p, dg, lo, hi, alpha, s, polish_max,
                              budget=10.0 * work + 1e6):
                n_polish += 1
                polish_gap *= 2   # a step that did not finish the job: wait longer next time
                s, w = oracle.product(u_of(alpha))
                free = (alpha > lo) & (alpha < hi)
            polish_time += time.perf_counter() - tp
        last_free = free
    elapsed = time.perf_counter() - t0
    # the returned point, recomputed exactly (no drift of the maintained s / w)
    u = u_of(alpha)
    s, w = oracle.product(u)
    pg = _pg_full(idx, sign, p, dg, lo, hi, alpha, s)
    dual_min = float(0.5 * u @ s + p @ alpha + 0.5 * np.sum(dg * alpha * alpha))
    info = {
        "dual_objective": -dual_min,
        "path": _PATH_NAME[mode],
        "kernel_path": _PATH_NAME[mode],
        "n_iter": epochs,
        "pg_spread": float(stats[ST_PGMAX] - stats[ST_PGMIN]),
        "pg_max_abs": float(pg),
        "n_unshrink": n_unshrink,
        "n_polish": n_polish,
        "converged": converged,
        "n_updates": n_updates,
        "tol": float(tol),
        "max_iter": int(max_iter),
        "work_cap_epochs": work_cap_epochs,
        "visits": int(visits),
        "tol_final": cur_tol,
        "n_gap_refine": n_refine,
        "stopped_on_gap": bool(n_gap_stop),
        "shrinking": bool(shrinking),
        "loop_time": elapsed,
        "polish_time": polish_time,
    }
    if Zlr is not None:
        info["lowrank_steps"] = n_lowrank_steps
    if cand:
        info["candidate_steps"] = n_candidate_steps
    if subspace:
        info["subspace_steps"] = n_subspace_steps
    if mode == MODE_CACHE:
        info.update(cache_slots=int(oracle.rows.n_slots),
                    row_requests=int(stats[_K.ROW_REQ]), row_misses=int(stats[_K.ROW_MISS]))
    return alpha, u, s, w, info


def _not_finite(what, epochs):
    """Stop a run whose numbers are no longer finite (overflow, or NaN from it): a
    ``SolverError`` naming what was met, never a point that looks converged."""
    from refmodels.solution import SolverError

    raise SolverError(f"the dual coordinate descent met {what} that is not finite (NaN or "
                      f"overflow) after {epochs} epochs: the problem's numbers are beyond "
                      "float64 at this scale")


def _candidate_polish(oracle, g, alpha, lo, hi, sigma, band, budget):
    """The candidate polish of :func:`run` (one copy ``sigma``, no diagonal, linear path):
    the box QP on the free variables and those at a bound with ``|g| <= band``, the others
    fixed, with ``Q = Z Z^T``, ``Z = sigma diag(qy) X``. Modifies ``alpha`` in place when
    the result lowers the dual objective. Returns the active-set steps taken (1 for the
    dense active set, which does not count them), positive when the result was kept,
    negative (or 0) when not."""
    at_lo = alpha <= lo
    at_hi = alpha >= hi
    F = np.flatnonzero(~(at_lo | at_hi) | (at_lo & (g < band)) | (at_hi & (g > -band)))
    if F.size == 0:
        return 0
    XF = oracle.X[F]
    XF = XF.toarray() if sp.issparse(XF) else XF
    ZF = np.ascontiguousarray((sigma * oracle.qy[F])[:, None] * XF, dtype=np.float64)
    gF, x0 = g[F], alpha[F].copy()
    if F.size > ZF.shape[1]:
        x, change, steps = active_set_qp_lowrank(ZF, gF, x0, lo[F], hi[F], budget=budget)
    else:                                   # (F.size <= d <= polish_max: run's rule)
        x, change = active_set_qp(ZF @ ZF.T, gF, x0, lo[F], hi[F], budget=budget)
        steps = 1
    if change < -1e-15 * (1.0 + abs(float(gF @ x0))):
        alpha[F] = x
        return max(steps, 1)
    return -steps


def _newton_polish(oracle, idx, sign, p, dg, lo, hi, alpha, s, polish_max, budget=np.inf):
    """Active-set Newton refinement on the free set; modifies ``alpha`` in place if kept.

    ``F``: variables strictly inside their box plus bound variables whose gradient points
    inward; the others stay fixed. On ``F`` the box QP ``min 1/2 D^T Q_FF D + g_F^T D`` is
    solved by :func:`fast._polish.active_set_qp` (at most ``polish_max`` variables and
    ``budget`` flops). The result is kept only if it lowers the dual objective (it lies in
    the box, so it is always feasible). Returns True if kept.
    """
    g = sign * s[idx] + p + dg * alpha
    free = (alpha > lo) & (alpha < hi)
    free |= (alpha <= lo) & (g < 0)
    free |= (alpha >= hi) & (g > 0)
    F = np.flatnonzero(free)
    nF = F.size
    if nF == 0 or nF > polish_max or 4.0 * nF**3 > budget:
        return False
    QF = sign[F][:, None] * oracle.block(idx[F]) * sign[F][None, :]
    QF[np.diag_indices_from(QF)] += dg[F]
    QF = 0.5 * (QF + QF.T)
    x0 = alpha[F].copy()
    x, change = active_set_qp(QF, g[F], x0, lo[F], hi[F], budget=budget)
    if change < -1e-15 * (1.0 + abs(float(g[F] @ x0))):
        alpha[F] = x
        return True
    return False



# ---------------------------------------------------------------------------------------
# glue for the families that use the DCD (a problem's kernel -> an Oracle; a run -> Solution)
# ---------------------------------------------------------------------------------------
def oracle_for(prob, path, cache_size):
    """An :class:`Oracle` for ``Q = YGY`` of a binary problem on the chosen path."""
    y = prob.y
    if path == "gram":
        return Oracle("gram", K=np.ascontiguousarray(prob.gram, dtype=np.float64), qy=y)
    if path == "cache":
        return Oracle("cache", X=prob.X, kernel=prob.kernel, qy=y, cache_size=cache_size)
    return Oracle("linear", X=prob.X, qy=y)


def dcd_solution(objective, coef, variables, info, t0, what, solver="fast:dcd", prob=None,
                 advice=""):
    """The Solution of a DCD run: ``optimal`` iff the full-set stop held (the self-check of
    :mod:`fast._selfcheck` then decides), else ``max_iter`` with a ConvergenceWarning stating
    the residual (worst ``|PG|`` at the returned point). For the linear kernel the weights
    ``w = X^T coef`` are always carried."""
    from refmodels.solution import Solution

    from ._common import convergence_warning, scale_hint

    if prob is not None and prob.kernel.is_linear and "w" not in variables:
        variables["w"] = np.asarray(prob.X.T @ coef, dtype=np.float64).ravel()
    info["residual"] = info["pg_max_abs"]
    status = "optimal" if info["converged"] else "max_iter"
    sol = Solution(objective=float(objective), coef=coef, intercept=0.0, variables=variables,
                   status=status, solver=solver, form="fast",
                   time=time.perf_counter() - t0, n_iter=info["n_iter"], info=info)
    if status != "optimal":
        if info.get("work_cap_epochs") is not None and info["n_iter"] < info["max_iter"]:
            advice = (f"; the default cap is the work of {info['work_cap_epochs']} full "
                      f"epochs (pass max_iter for more)" + advice)
        convergence_warning(what, info["residual"], info["tol"], info["n_iter"],
                            hint=(scale_hint(prob) if prob is not None else "") + advice)
    return sol
