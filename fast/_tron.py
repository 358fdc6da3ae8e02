"""Trust-region Newton–CG (TRON) on a linear primal with a smooth, piecewise quadratic loss.

The problem, over ``w`` in ``R^d`` (rows of ``X`` are samples, dense or CSR):

.. math::

    \\min_w\\ f(w) = \\tfrac12\\|w\\|^2 + \\sum_i \\ell(\\gamma_i),\\qquad \\gamma_i = y_i x_i^\\top w,

with a once continuously differentiable per-sample loss ``ell`` whose second derivative is
piecewise constant (a sum of squared hinges). The loss is given to the solver only by its
value, derivative and *generalised* second derivative at a margin (:func:`_loss`), so the
method knows nothing of the family:

* gradient ``g = w + X^T (y * ell'(gamma))`` (``O(nnz)``);
* generalised Hessian ``H = I + X^T D X`` with ``D = diag(ell''(gamma))`` (Mangasarian's
  generalised Hessian of a C^1 piecewise quadratic; Chapelle 2007, Lin, Weng & Keerthi
  2008), never formed: a Hessian-vector product is ``v + X_S^T (D_S (X_S v))`` over the rows
  ``S`` with ``D_i != 0`` only (``O(nnz(X_S))``), as LIBLINEAR's ``subXv``.

Losses (``kind``, ``params``):

* ``LOSS_ODM`` (SPEC §4 eq. 18), ``params = (c, mu, theta)`` with ``c = lam / (m (1-theta)^2)``:
  ``ell(g) = c [max(0, 1-theta-g)^2 + mu max(0, g-1-theta)^2]``;
* ``LOSS_SQHINGE`` (squared-hinge / L2-loss SVM, LIBLINEAR's ``-s 2``), ``params = (C,)``:
  ``ell(g) = C max(0, 1-g)^2``.

A family states its loss once, as ``prob.margin_loss`` (:class:`refmodels._box.MarginLoss`,
by name); :func:`declared_loss` maps it to the codes.

Adding a loss is adding a branch to :func:`_loss`; nothing else changes.

The method (Lin & Moré 1999; Lin, Weng & Keerthi 2008, the algorithm of LIBLINEAR's
TRON): at ``w`` solve ``H s = -g`` approximately by conjugate gradients inside the ball
``||s|| <= delta`` (Steihaug's truncation: stop on the boundary or when the residual is
below ``eta ||g||`` with the forcing term ``eta = min(0.1, sqrt(||g|| / (1 + ||w||)))``, so the
steps become exact Newton steps near the optimum); accept the step when the actual
reduction is at least ``eta0 = 1e-4`` times the reduction the quadratic model predicts,
and update ``delta`` by the ratio (``eta1 = 0.25``, ``eta2 = 0.75``; shrink ``sigma1 = 0.25``,
``sigma2 = 0.5``, grow ``sigma3 = 4``). On a piecewise quadratic ``f`` the model is exact
on the piece of the current point, so once the pieces (which points are below, inside and
above the band) are right, one full CG solve lands on the optimum: the convergence is
finite in exact arithmetic. CG is preconditioned by the diagonal of ``H`` (mixed with the
identity as ``(1 - 0.01) + 0.01 diag H``, Hsia, Chiang & Lin 2018), with the trust region
measured in the preconditioner's norm, which keeps features on very different scales
(x 1e3, x 1e-3) from stalling CG.

**Small dense d** (``d <= DENSE_HESSIAN_MAX_D`` on dense rows): the Hessian is formed,
``H = I + scale * G`` with ``G = sum_S pat_i x_i x_i^T`` (``ell'' = scale * pat``), so that a
CG step costs ``O(d^2)`` instead of ``O(nnz(X_S))``; CG then solves the Newton system
closely (forcing term x 1e-3), and ``G`` is updated by the rows whose curvature changed
(``O(d^2)`` each) instead of being formed again, within a solve and from one solve to the
next on the same :class:`Data` (a path over ``lam``). The margins are updated by ``X s``
and recomputed from ``w`` before a stop is accepted. On KEEL magic (the 11-point path
``2^0..2^20`` warm-started on one Data) the formed Hessian takes fewer Newton steps (3.9
against 6.3) and less time a point than row products (validation/decisions.md).

Stop: ``||g|| <= tol (1 + ||w||)``, or ``||g||`` below its own rounding error (``1e-15``
times the norm of the sums of the absolute values of its terms: on badly scaled data the
tolerance asked may lie below what floating point resolves). For ODM the multipliers
determined by ``w`` (eq. 14) make the certificate's stationarity residual exactly ``||g||``
and its duality gap ``||g||^2 / 2``, so the default ``tol = 1e-9`` certifies at ``1e-6``
with a wide margin (when the data are scaled; see ``tests/test_fast_path.py`` for x 1e3).
An objective or gradient that is not finite (overflow) stops the run (``stop = "not
finite"``), never a point that looks converged.

The compiled loop (:func:`_tron`) runs in chunks of bounded work (:mod:`fast._chunk`),
resuming at the top of a Newton iteration, between two CG steps, or before the rest of an
iteration, so that Ctrl-C stops a long solve.
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from . import _chunk
from ._chunk import PAUSED
from ._rows import row_dot, row_sqnorms, rows_of
from ._tron_cg import (CG, _curv_sync, _dot, _hess_from, _mdot, _precond, _precond_dense,
                       _trcg, _trcg_start)

LOSS_ODM = 0
LOSS_SQHINGE = 1
#: the loss names of :class:`refmodels._box.MarginLoss` (a problem's ``margin_loss``) as
#: TRON's codes
LOSS_KINDS = {"odm": LOSS_ODM, "squared_hinge": LOSS_SQHINGE}


def declared_loss(loss):
    """``(kind, params)`` for :func:`minimize` from a problem's declared
    :class:`refmodels._box.MarginLoss`."""
    return LOSS_KINDS[loss.kind], loss.params


DEFAULT_TOL = 1e-9
#: dense rows with at most this many features: the Hessian is formed (see :func:`_tron`)
DENSE_HESSIAN_MAX_D = 32
DEFAULT_MAX_ITER = 1000

_ETA0, _ETA1, _ETA2 = 1e-4, 0.25, 0.75
_SIGMA1, _SIGMA2, _SIGMA3 = 0.25, 0.5, 4.0
_ALPHA_PCG = 0.01
#: the gradient cannot be resolved below its rounding error, ~ eps * (sum of |terms|); a
#: point whose gradient is within ``_FLOOR * ||gabs||`` (about 5 eps) of zero is optimal to working
#: precision (badly scaled data: x 1e3 features at lam = 2^20)
_FLOOR = 1e-15


class Data:
    """Dense (mode 0) or CSR (mode 1) rows for the numba loops, with the labels.

    On dense rows with ``d <= DENSE_HESSIAN_MAX_D`` it also keeps the curvature of the last
    point solved, ``G = sum_i pat_i x_i x_i^T`` with ``ell''(gamma_i) = scale * pat_i``
    (``scale`` = ``params[0]``, so ``pat`` does not depend on ``lam`` / ``C``): the next call
    on the same data (a warm-started path over ``lam``) updates ``G`` by the rows whose
    curvature changed instead of forming it again. ``G`` is only used for the steps; the
    gradient and the stopping test never read it. It is formed afresh every
    ``_REBUILD_EVERY`` calls (the updates' rounding does not accumulate), and when the
    loss's shape (``kind``, ``mu``) changes."""

    _REBUILD_EVERY = 50

    def __init__(self, X, y):
        self.y = np.ascontiguousarray(y, dtype=np.float64)
        X, self.rows = rows_of(X)
        self.mode, self.Xd = self.rows.mode, self.rows.Xd
        self.nnz = int(X.nnz) if self.mode else int(self.Xd.size)
        self.m, self.d = X.shape
        # the rows' 2-norms: the stop test's bound on the gradient's rounding (_eval)
        self.rn = np.sqrt(row_sqnorms(X) if self.mode
                          else np.einsum("ij,ij->i", self.Xd, self.Xd))
        #: what the compiled loop reads (:data:`TronData`)
        self.tron = TronData(self.rows, self.y, self.rn)
        self._curv_key = None
        self._calls = 0
        self.G = None
        self.pat = None

    def curvature_state(self, kind, params, dense_max):
        """The :data:`Curvature` ``(G, pat, have)`` for :func:`_tron` (``have``: ``G`` matches
        ``pat``)."""
        if not (self.mode == 0 and self.d <= dense_max):
            return Curvature(np.zeros((1, 1)), np.zeros(1), False)
        # the shape of ell'' / scale: the loss and, for ODM, mu (pat in {2, 2 mu, 0})
        key = (int(kind), float(params[1]) if kind == LOSS_ODM else None)
        have = key == self._curv_key and self._calls % self._REBUILD_EVERY != 0
        if self.G is None:
            self.G = np.zeros((self.d, self.d))
            self.pat = np.zeros(self.m)
            have = False
        self._curv_key = key
        self._calls += 1
        return Curvature(self.G, self.pat, bool(have))


def minimize(data, kind, params, w0=None, tol=DEFAULT_TOL, max_iter=DEFAULT_MAX_ITER,
             max_cg=None, dense_max=None, confirm=True):
    """Run TRON from ``w0`` (zeros by default).

    ``dense_max``: dense rows with at most this many features get the formed Hessian
    (default :data:`DENSE_HESSIAN_MAX_D`; 0 turns it off). ``confirm=False``: a stop is not
    confirmed on margins recomputed from ``w`` (they were updated by ``X s``): for a caller
    that checks the returned point from scratch itself (:func:`fast.odm.linear_tron_path`).

    Returns ``(w, gamma, info)``: the point, its margins ``y * (X w)`` and a dict with
    ``n_iter`` (Newton iterations), ``cg_iter`` (total CG iterations, i.e. Hessian-vector
    products), ``f``, ``grad_norm``, ``converged``, ``stop`` (``"tol"``, ``"max_iter"``,
    ``"stalled"``: the trust region collapsed or the reduction fell below rounding, ``"not
    finite"``: the objective or the gradient overflowed) and
    ``hessian_rows`` (rows added to or removed from the formed Hessian) and ``grad_floor``
    (the gradient's rounding floor at the last stop test that needed it, else NaN).
    """
    d = data.d
    w = np.zeros(d) if w0 is None else np.array(w0, dtype=np.float64).ravel().copy()
    if w.shape != (d,):
        raise ValueError(f"w0 must have shape ({d},); got {w.shape}")
    if max_cg is None:
        max_cg = max(2 * d, 10)
    params = np.ascontiguousarray(params, dtype=np.float64)
    dense_max = int(DENSE_HESSIAN_MAX_D if dense_max is None else dense_max)
    gamma = np.zeros(data.m)
    curv = data.curvature_state(kind, params, dense_max)
    G, pat = curv.G, curv.pat
    if data.mode == 0 and d <= dense_max and (G.shape != (d, d) or pat.shape != (data.m,)):
        # the numba loop writes G[:d, :d] and pat[:m] unchecked
        raise RuntimeError(f"TRON's curvature state has shapes {G.shape}, {pat.shape}; "
                           f"expected ({d}, {d}), ({data.m},)")
    if not params[0] > 0.0:
        raise ValueError(f"the loss weight params[0] must be > 0; got {params[0]!r}")
    st = new_state(data.m, d, data.mode == 0 and d <= dense_max)
    opt = TronOptions(int(kind), params, float(tol), int(max_iter), int(max_cg), dense_max,
                      bool(confirm))
    while _tron(data.tron, opt, curv, w, gamma, st, _chunk.budget()) == PAUSED:
        pass                          # (between two calls: where Ctrl-C is raised)
    stats = st.stats
    stop = {0: "tol", 1: "max_iter", 2: "stalled", 3: "not finite"}[int(stats[4])]
    info = {"n_iter": int(stats[0]), "cg_iter": int(stats[1]), "f": float(stats[2]),
            "grad_norm": float(stats[3]), "stop": stop, "converged": bool(stats[5] > 0),
            "grad_floor": float(stats[6]), "hessian_rows": int(stats[7])}
    return w, gamma, info


# ---------------------------------------------------------------------------------------
# numba kernels
# ---------------------------------------------------------------------------------------
@njit(cache=True)
def _loss(kind, g, params):
    """``(ell(g), ell'(g), ell''(g))`` of the per-sample loss at margin ``g``."""
    if kind == 0:                                  # ODM, SPEC §4 eq. 18
        c, mu, th = params[0], params[1], params[2]
        if g < 1.0 - th:
            t = 1.0 - th - g
            return c * t * t, -2.0 * c * t, 2.0 * c
        if g > 1.0 + th:
            t = g - 1.0 - th
            return c * mu * t * t, 2.0 * c * mu * t, 2.0 * c * mu
        return 0.0, 0.0, 0.0
    # squared hinge, C max(0, 1 - g)^2
    C = params[0]
    if g < 1.0:
        t = 1.0 - g
        return C * t * t, -2.0 * C * t, 2.0 * C
    return 0.0, 0.0, 0.0


@njit(cache=True)
def _xv(rows, v, out):
    """``out = X v`` (all rows; ``rows`` a :data:`fast._rows.Rows`)."""
    mode, Xd, indptr, indices, data = rows
    for i in range(out.shape[0]):
        out[i] = row_dot(mode, i, Xd, indptr, indices, data, v)


@njit(cache=True)
def _eval(data, w, z, kind, params, coef, dd, act, grad):
    """At ``w`` with ``z = X w`` (``data`` a :data:`TronData`): value ``f``, gradient into
    ``grad``, ``dd = ell''``, the active rows ``act[:n_act]`` (``dd != 0``), ``coef = y ell'``
    (the gradient is ``w + X^T coef``). Returns ``(f, n_act, gabs_ub)`` with ``gabs_ub =
    ||w|| + sum_i |coef_i| rn_i`` (``rn``: the rows' 2-norms), an upper bound on the norm of
    ``gabs``, the sums of the absolute values of the gradient's terms (:func:`_gabs_norm`)."""
    f = 0.0
    for t in range(w.shape[0]):
        f += 0.5 * w[t] * w[t]
    fl, n_act, ub = _rows(data.y, z, kind, params, coef, dd, act, data.rn)
    _grad(data.rows, w, coef, grad)
    return f + fl, n_act, np.sqrt(_dot(w, w)) + ub


@njit(cache=True)
def _rows(y, z, kind, params, coef, dd, act, rn):
    """The per-row part of :func:`_eval` at the margins ``y z``: ``(sum of the losses,
    n_act, sum_i |coef_i| rn_i)``, and ``coef``, ``dd``, ``act``."""
    f = 0.0
    n_act = 0
    ub = 0.0
    for i in range(y.shape[0]):
        val, d1, d2 = _loss(kind, y[i] * z[i], params)
        f += val
        c = d1 * y[i]
        coef[i] = c
        dd[i] = d2
        if d2 != 0.0:
            act[n_act] = i
            n_act += 1
        ub += abs(c) * rn[i]
    return f, n_act, ub


@njit(cache=True)
def _grad(rows, w, coef, grad):
    """``grad = w + X^T coef`` (one pass over the rows with ``coef != 0``)."""
    mode, Xd, indptr, indices, data = rows
    for t in range(w.shape[0]):
        grad[t] = w[t]
    if mode == 0:
        for i in range(coef.shape[0]):
            c = coef[i]
            if c != 0.0:
                for t in range(Xd.shape[1]):
                    grad[t] += c * Xd[i, t]
    else:
        for i in range(coef.shape[0]):
            c = coef[i]
            if c != 0.0:
                for k in range(indptr[i], indptr[i + 1]):
                    grad[indices[k]] += c * data[k]


@njit(cache=True)
def _trial(data, z, xs, kind, params, w, s, coef, dd, act):
    """The trial point ``w + s`` in one pass over the rows: ``f(w) - f(w + s)`` summed as
    differences (:func:`_loss_drop`), and :func:`_rows` at the new margins ``y (z + xs)``
    (into ``coef``, ``dd``, ``act``: scratch until the step is accepted). Returns
    ``(actred, f(w + s), n_act, sum_i |coef_i| rn_i)``. (Its loop repeats :func:`_rows`'
    body on purpose: with that body in a helper, inlined or not, numba's loop ran slower;
    ``validation/bench_cv_protocol.py`` measures it, validation/decisions.md.)"""
    y, rn = data.y, data.rn
    red = 0.0
    fw = 0.0
    for t in range(w.shape[0]):
        red -= s[t] * (w[t] + 0.5 * s[t])
        wn = w[t] + s[t]
        fw += 0.5 * wn * wn
    n_act = 0
    ub = 0.0
    for i in range(y.shape[0]):
        g = y[i] * z[i]
        dg = y[i] * xs[i]
        red += _loss_drop(kind, g, dg, params)
        val, d1, d2 = _loss(kind, y[i] * (z[i] + xs[i]), params)
        fw += val
        c = d1 * y[i]
        coef[i] = c
        dd[i] = d2
        if d2 != 0.0:
            act[n_act] = i
            n_act += 1
        ub += abs(c) * rn[i]
    return red, fw, n_act, ub


@njit(cache=True)
def _gabs_norm(rows, w, coef, gabs):
    """``||gabs||`` with ``gabs = |w| + sum_i |coef_i| |x_i|`` (componentwise): the gradient
    ``w + X^T coef`` cannot be resolved below ~ eps ``gabs``."""
    mode, Xd, indptr, indices, data = rows
    for t in range(w.shape[0]):
        gabs[t] = abs(w[t])
    for i in range(coef.shape[0]):
        ac = abs(coef[i])
        if ac != 0.0:
            if mode == 0:
                for t in range(Xd.shape[1]):
                    gabs[t] += ac * abs(Xd[i, t])
            else:
                for k in range(indptr[i], indptr[i + 1]):
                    gabs[indices[k]] += ac * abs(data[k])
    return np.sqrt(_dot(gabs, gabs))


@njit(cache=True)
def _stops(rows, w, coef, gabs, gnorm, wnorm, tol, gabs_ub):
    """The stop test ``||g|| <= max(tol (1 + ||w||), _FLOOR ||gabs||)``; ``gabs`` is formed
    only when the bound ``gabs_ub`` says the floor could decide. Returns ``(stop, floor)``
    (``floor`` NaN when it was not needed)."""
    if gnorm <= tol * (1.0 + wnorm):
        return True, np.nan
    if gnorm > _FLOOR * gabs_ub:
        return False, np.nan
    floor = _FLOOR * _gabs_norm(rows, w, coef, gabs)
    return gnorm <= floor, floor


@njit(cache=True)
def _sq_hinge_drop(p_old, p_new, step):
    """``p_old^2 - p_new^2`` for ``p = max(0, .)``; ``step = p_old - p_new`` when both are
    positive (computed from the data, not by subtracting the two), so the difference keeps
    its relative accuracy however large the losses are."""
    if p_old > 0.0 and p_new > 0.0:
        return step * (p_old + p_new)
    return p_old * p_old - p_new * p_new


@njit(cache=True)
def _loss_drop(kind, g, dg, params):
    """``ell(g) - ell(g + dg)``, accurate to rounding of the *difference* (not of ``ell``):
    near the optimum the reduction of ``f`` is ~1e-15 of ``f`` itself, below the rounding of
    ``f(w) - f(w + s)`` computed as two values, and the trust region would stall on noise."""
    gn = g + dg
    if kind == 0:
        c, mu, th = params[0], params[1], params[2]
        lo_old = max(0.0, 1.0 - th - g)
        lo_new = max(0.0, 1.0 - th - gn)
        hi_old = max(0.0, g - 1.0 - th)
        hi_new = max(0.0, gn - 1.0 - th)
        return c * (_sq_hinge_drop(lo_old, lo_new, dg)
                    + mu * _sq_hinge_drop(hi_old, hi_new, -dg))
    C = params[0]
    return C * _sq_hinge_drop(max(0.0, 1.0 - g), max(0.0, 1.0 - gn), dg)



#: what TRON's compiled loop reads of the data (:attr:`Data.tron`): the rows (a
#: :data:`fast._rows.Rows`), the labels ``y`` and the rows' 2-norms ``rn``
TronData = namedtuple("TronData", "rows y rn")
#: TRON's options for the compiled loop: the loss (``kind``, ``params``: :func:`_loss`),
#: ``tol``, ``max_iter`` (Newton iterations), ``max_cg`` (CG steps per iteration),
#: ``dense_max`` (the formed Hessian up to this many features) and ``confirm`` (a stop is
#: confirmed on margins recomputed from ``w``: :func:`minimize`)
TronOptions = namedtuple("TronOptions", "kind params tol max_iter max_cg dense_max confirm")
#: the formed Hessian's curvature kept on a :class:`Data` between solves: ``G``, ``pat`` and
#: ``have`` (``G`` matches ``pat``), as :meth:`Data.curvature_state` gives it
Curvature = namedtuple("Curvature", "G pat have")
#: TRON's state between two calls of :func:`_tron` (arrays allocated by :func:`new_state`):
#: the margins ``z = X w`` and ``X s``, the rows' loss terms at the point and at the trial
#: point (``coef``, ``dd``, the active rows ``act``; swapped when a step is accepted), the
#: gradient, CG's vectors (``s``, ``r``, ``zz``, ``dvec``, ``Hd``), the preconditioner ``M``,
#: the trial point, ``gabs`` (:func:`_gabs_norm`), the formed Hessian ``Hm`` and the rows
#: whose curvature changed (:func:`_curv_sync`; both (1, 1) and (1,) off the formed path);
#: the run's scalars ``ctl`` (int64, slots ``T_...``) and ``fctl`` (float64, ``T_F`` ...),
#: zeros for a fresh run, and its report ``stats`` (8 float64, :func:`minimize` reads it)
TronState = namedtuple("TronState", "z xs coef dd act coef_t dd_t act_t g s r zz dvec Hd M w_new "
                                    "gabs Hm changed ctl fctl stats")
#: slots of ``ctl`` (int64): the phase (:data:`P_INIT` ...), Newton iterations, CG
#: iterations in all and in the current solve, active rows, the stop code, whether it
#: converged, Hessian rows touched, whether the loss arrays are swapped
(T_PHASE, T_IT, T_CG_TOTAL, T_CG_IT, T_NACT, T_STOP, T_CONV, T_TOUCHED, T_SWAP) = range(9)
N_TCTL = 9
#: slots of ``fctl`` (float64): ``f``, the bound on ``||gabs||``, ``||g||``, ``||w||``, the
#: trust radius, the gradient's rounding floor, CG's ``z^T r`` and its tolerance, and the
#: work of one CG step
(T_F, T_GUB, T_GNORM, T_WNORM, T_DELTA, T_FLOOR, T_ZTR, T_CGTOL, T_STEPCOST) = range(9)
N_TFCTL = 9
#: phases: the start, the top of a Newton iteration, its CG, the rest of it
P_INIT, P_NEWTON, P_CG, P_POST = 0, 1, 2, 3
#: work units (:mod:`fast._chunk`) of an entry of the rows read in a pass (dense, CSR), of
#: a row in a pass over the rows, and of an entry of the formed Hessian
DENSE_ENTRY_COST = 1.0
CSR_ENTRY_COST = 3.0
ROW_COST = 5.0


def new_state(m, d, dense):
    """The arrays of a :data:`TronState` for ``m`` rows and ``d`` features (``dense``: with
    the formed Hessian)."""
    e = np.empty
    return TronState(e(m), e(m), e(m), e(m), e(m, dtype=np.int64), e(m), e(m),
                     e(m, dtype=np.int64), e(d), e(d), e(d), e(d), e(d), e(d), e(d), e(d),
                     e(d), e((d, d) if dense else (1, 1)),
                     e(m if dense else 1, dtype=np.int64), np.zeros(N_TCTL, dtype=np.int64),
                     np.zeros(N_TFCTL), np.zeros(8))


@njit(cache=True)
def _pass_cost(rows, act, n_act, all_rows):
    """The work units of a pass over the rows (all, or the ``n_act`` active ones)."""
    mode, Xd, indptr = rows.mode, rows.Xd, rows.indptr
    m = indptr.shape[0] - 1 if mode == 1 else Xd.shape[0]
    if mode == 0:
        n = m if all_rows else n_act
        return n * (ROW_COST + DENSE_ENTRY_COST * Xd.shape[1])
    if all_rows:
        return m * ROW_COST + CSR_ENTRY_COST * indptr[m]
    nnz = 0
    for a in range(n_act):
        nnz += indptr[act[a] + 1] - indptr[act[a]]
    return n_act * ROW_COST + CSR_ENTRY_COST * nnz


@njit(cache=True)
def _tron(data, opt, curv, w, gamma, st, budget):
    """TRON (module docstring) on ``data`` (a :data:`TronData`) with the options ``opt`` (a
    :data:`TronOptions`) and the formed Hessian's curvature ``curv`` (a :data:`Curvature`)
    for about ``budget`` work units (:mod:`fast._chunk`): returns
    :data:`fast._chunk.PAUSED` while not done, 0 when done (``w``, ``gamma`` and
    ``st.stats`` then hold the result). ``st`` (:func:`new_state`; its ``ctl`` and ``fctl``
    zeros on the first call) carries the run between calls, which resume where the last one
    stopped: at the top of a Newton iteration, inside its CG (between two Hessian products),
    or before the rest of the iteration."""
    rows, y = data.rows, data.y
    mode, Xd = rows.mode, rows.Xd
    kind, params, tol, max_iter = opt.kind, opt.params, opt.tol, opt.max_iter
    max_cg, dense_max, confirm = opt.max_cg, opt.dense_max, opt.confirm
    G, pat, have_state = curv
    ctl, fctl, stats = st.ctl, st.fctl, st.stats
    m = y.shape[0]
    d = w.shape[0]
    z, xs, g, s, r, zz = st.z, st.xs, st.g, st.s, st.r, st.zz
    dvec, M, w_new, gabs, Hm, changed = st.dvec, st.M, st.w_new, st.gabs, st.Hm, st.changed
    # the rows' loss terms at the point and at the trial point (swapped when a step is taken)
    if ctl[T_SWAP] == 0:
        coef, dd, act, coef_t, dd_t, act_t = st.coef, st.dd, st.act, st.coef_t, st.dd_t, st.act_t
    else:
        coef, dd, act, coef_t, dd_t, act_t = st.coef_t, st.dd_t, st.act_t, st.coef, st.dd, st.act
    # small dense d: the Hessian is formed once and updated by the rows whose curvature
    # changes, so that a CG step costs O(d^2) instead of O(nnz(X_S))
    # (``G`` and ``pat`` carry it from one call to the next: see :class:`Data`)
    dense = mode == 0 and d <= dense_max
    scale = params[0]                  # dd = scale * pat, pat in {2, 2 mu, 0}
    full_pass = _pass_cost(rows, act, 0, True)
    phase = ctl[T_PHASE]
    it = ctl[T_IT]
    cg_total = ctl[T_CG_TOTAL]
    n_act = ctl[T_NACT]
    stop = ctl[T_STOP]
    converged = ctl[T_CONV] != 0
    touched = ctl[T_TOUCHED]
    f, gub, gnorm, wnorm = fctl[T_F], fctl[T_GUB], fctl[T_GNORM], fctl[T_WNORM]
    delta, floor = fctl[T_DELTA], fctl[T_FLOOR]
    work = 0.0
    paused = False
    while True:
        if phase == P_INIT:
            _xv(rows, w, z)
            f, n_act, gub = _eval(data, w, z, kind, params, coef, dd, act, g)
            gnorm = np.sqrt(_dot(g, g))
            wnorm = np.sqrt(_dot(w, w))
            work += 3.0 * full_pass
            if dense:
                touched += _curv_sync(Xd, dd, scale, act, n_act, G, pat, have_state, changed)
                _hess_from(G, scale, Hm)
                _precond_dense(Hm, M)
            else:
                _precond(rows, dd, act, n_act, M)
            delta = np.sqrt(_mdot(g, 1.0 / M, g))          # ||g||_{M^-1}
            it = 0
            cg_total = 0
            stop = 1
            converged, floor = _stops(rows, w, coef, gabs, gnorm, wnorm, tol, gub)
            if converged:
                stop = 0
            elif not (abs(f) < np.inf and gnorm < np.inf):
                stop = 3                   # not finite (overflow): no step from here
                break
            phase = P_NEWTON
        if phase == P_NEWTON:
            if converged or it >= max_iter:
                break
            if work >= budget:
                paused = True
                break
            it += 1
            eta = min(0.1, np.sqrt(gnorm / (1.0 + wnorm)))
            if dense:
                eta = 1e-3 * eta    # a CG step costs O(d^2): solve the Newton system closely
            fctl[T_CGTOL] = eta * gnorm
            fctl[T_ZTR] = _trcg_start(g, M, s, r, zz, dvec)
            fctl[T_STEPCOST] = d * d if dense else _pass_cost(rows, act, n_act,
                                                              False) * 2.0 + 4.0 * d
            ctl[T_CG_IT] = 0
            phase = P_CG
        if phase == P_CG:
            cg = CG(delta, fctl[T_CGTOL], max_cg, dense, fctl[T_STEPCOST])
            done, ncg, zTr, work = _trcg(rows, st, dd, act, n_act, cg, ctl[T_CG_IT],
                                         fctl[T_ZTR], work, budget)
            ctl[T_CG_IT] = ncg
            fctl[T_ZTR] = zTr
            if not done:
                paused = True
                break
            cg_total += ncg
            phase = P_POST
            if work >= budget:
                paused = True
                break
        # phase == P_POST: the rest of the Newton iteration
        work += 3.0 * full_pass
        for t in range(d):
            w_new[t] = w[t] + s[t]
        _xv(rows, s, xs)
        gs = _dot(g, s)
        prered = -0.5 * (gs - _dot(s, r))
        actred, f_t, n_act_t, gub_t = _trial(data, z, xs, kind, params, w, s, coef_t, dd_t,
                                             act_t)
        fnew = f - actred
        snorm = np.sqrt(_mdot(s, M, s))
        if it == 1:
            delta = min(delta, snorm)
        if fnew - f - gs <= 0.0:
            alpha = _SIGMA3
        else:
            alpha = max(_SIGMA1, -0.5 * (gs / (fnew - f - gs)))
        if actred < _ETA0 * prered:
            delta = min(alpha * snorm, _SIGMA2 * delta)
        elif actred < _ETA1 * prered:
            delta = max(_SIGMA1 * delta, min(alpha * snorm, _SIGMA2 * delta))
        elif actred < _ETA2 * prered:
            delta = max(_SIGMA1 * delta, min(alpha * snorm, _SIGMA3 * delta))
        else:
            delta = max(delta, min(alpha * snorm, _SIGMA3 * delta))
        phase = P_NEWTON
        if actred > _ETA0 * prered or (actred >= 0.0 and prered <= 0.0):
            for t in range(d):
                w[t] = w_new[t]
            # margins updated by X s (one pass less); recomputed from w below before
            # the stop is accepted, so that no drift reaches the answer
            for i in range(m):
                z[i] += xs[i]
            # the trial's rows are the new point's (same margins, y (z + xs))
            coef, coef_t = coef_t, coef
            dd, dd_t = dd_t, dd
            act, act_t = act_t, act
            ctl[T_SWAP] = 1 - ctl[T_SWAP]
            f, n_act, gub = f_t, n_act_t, gub_t
            _grad(rows, w, coef, g)
            gnorm = np.sqrt(_dot(g, g))
            wnorm = np.sqrt(_dot(w, w))
            if confirm and _stops(rows, w, coef, gabs, gnorm, wnorm, tol, gub)[0]:
                _xv(rows, w, z)      # fresh margins
                f, n_act, gub = _eval(data, w, z, kind, params, coef, dd, act, g)
                gnorm = np.sqrt(_dot(g, g))
                work += 2.0 * full_pass
            if dense:
                touched += _curv_sync(Xd, dd, scale, act, n_act, G, pat, True, changed)
                _hess_from(G, scale, Hm)
                _precond_dense(Hm, M)
            else:
                _precond(rows, dd, act, n_act, M)
            converged, floor = _stops(rows, w, coef, gabs, gnorm, wnorm, tol, gub)
            if converged:
                stop = 0
                break
        if not (abs(f) < np.inf and gnorm < np.inf):
            stop = 3                       # not finite (overflow, or NaN from it): stop
            break
        if f < -1.0e32:
            stop = 2
            break
        if prered <= 0.0 and actred <= 0.0:
            stop = 2
            break
        if np.sqrt(_dot(s, s)) <= 1e-15 * (1.0 + wnorm) or delta <= 1e-300:
            stop = 2                       # steps below the rounding of w: no progress left
            break
    if paused:
        # the run's scalars for the next call
        ctl[T_PHASE] = phase
        ctl[T_IT] = it
        ctl[T_CG_TOTAL] = cg_total
        ctl[T_NACT] = n_act
        ctl[T_STOP] = stop
        ctl[T_CONV] = 1 if converged else 0
        ctl[T_TOUCHED] = touched
        fctl[T_F], fctl[T_GUB], fctl[T_GNORM], fctl[T_WNORM] = f, gub, gnorm, wnorm
        fctl[T_DELTA], fctl[T_FLOOR] = delta, floor
        return PAUSED
    if not converged and stop != 3 and it >= max_iter:
        stop = 1
    for i in range(m):
        gamma[i] = y[i] * z[i]
    stats[0] = it
    stats[1] = cg_total
    stats[2] = f
    stats[3] = gnorm
    stats[4] = stop
    stats[5] = 1.0 if converged else 0.0
    stats[6] = floor
    stats[7] = touched
    return 0
