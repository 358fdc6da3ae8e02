"""Stochastic solvers of the linear primals: SVRG for ODM, ASGD for ODML / LDM.

* **SVRG** (seed 002 Alg. 2; Johnson & Zhang 2013) on the smooth ODM primal (eq. 18)

  .. math::

      f_O(w)=\\frac1m\\sum_i f_i(w),\\quad f_i(w)=\\tfrac12\\|w\\|^2+\\kappa\\big[\\max(0,1-\\theta-\\gamma_i)^2
      +\\mu\\max(0,\\gamma_i-1-\\theta)^2\\big]/2,\\quad \\kappa=\\frac{2\\lambda}{(1-\\theta)^2},

  with :math:`\\nabla f_i(w)=w+\\kappa\\,[(\\gamma_i+\\theta-1)1_{\\gamma_i<1-\\theta}
  +\\mu(\\gamma_i-\\theta-1)1_{\\gamma_i>1+\\theta}]\\,y_ix_i` (seed 002 Thm 3.1). Each outer
  round computes the full gradient at the snapshot (stop when its norm is ``<= tol``), then
  ``m`` variance-reduced steps; the next snapshot is the iterate at a random inner step
  (Alg. 2 line 11) or the last one.

* **ASGD** (seed 001 Alg. 2, Thm 2) on the ODML primal (LDM = ODML(mC, 2λ1, λ2), SPEC §3)

  .. math::

      g(w)=\\tfrac12\\|w\\|^2+\\mu_1\\gamma_v-\\mu_2\\gamma_m+\\frac\\lambda m\\sum_i\\max(0,1-\\gamma_i),

  with the two-sample unbiased stochastic subgradient
  :math:`w+2\\mu_1x_ix_i^\\top w-2\\mu_1y_iy_jx_ix_j^\\top w-\\mu_2y_ix_i-\\lambda y_ix_i1_{\\gamma_i<1}`,
  ``i`` and ``j`` drawn **independently, with replacement** (SPEC §3: ``i != j`` would bias
  the variance term), step ``eta_t = eta0 (1 + eta0 t)^{-3/4}`` (Xu 2011, the seed's [28];
  strong convexity 1) and the Polyak–Ruppert average ``wbar`` from ``t0`` on (recursive
  formula of seed 001 with ``mu_t = 1/max(1, t - t0)``).
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from . import _chunk
from ._chunk import PAUSED
from ._rows import row_axpy, row_dot, row_sqnorms, rows_of


class LinearData:
    """Dense or CSR rows for the numba loops (:attr:`rows`, a :data:`fast._rows.Rows`: mode
    0 dense, 1 CSR), with the labels ``y``."""

    def __init__(self, X, y):
        self.y = np.ascontiguousarray(y, dtype=np.float64)
        self.X, self.rows = rows_of(X)
        self.mode = self.rows.mode
        self.sqnorms = row_sqnorms(self.X)
        self.m, self.d = X.shape

    def margins(self, w):
        return self.y * np.asarray(self.X @ w).ravel()


def svrg_odm(data, w0, kappa, mu, theta, step, tol, max_iter, seed, random_snapshot):
    """Run SVRG; returns ``(w, stats)`` with ``stats = [epochs, ||grad f_O(w)||, not
    finite]`` (the last 1 when the gradient overflowed: the run stopped there). The compiled
    loop runs in chunks of bounded work (:mod:`fast._chunk`)."""
    w = np.array(w0, dtype=np.float64)
    m, d = data.m, data.d
    st = SvrgState(np.empty(d), np.empty(m), np.empty(d), np.empty(d), np.zeros(3),
                   np.zeros(N_SCTL, dtype=np.int64))
    opt = SvrgOptions(float(kappa), float(mu), float(theta), float(step), float(tol),
                      int(max_iter), int(seed), bool(random_snapshot))
    while _svrg_loop(data.rows, data.y, w, opt, st, _chunk.budget()) == PAUSED:
        pass                          # (between two calls: where Ctrl-C is raised)
    return w, st.stats


def asgd_odml(data, w0, lam, mu1, mu2, eta0, t0, tol, max_iter, seed):
    """Run ASGD; returns ``(wbar, stats)`` with ``stats = [epochs, subgradient norm, not
    finite]`` (as :func:`svrg_odm`'s)."""
    w = np.array(w0, dtype=np.float64)
    wbar = w.copy()
    stats = np.zeros(3)
    ctl = np.zeros(N_SCTL, dtype=np.int64)
    opt = AsgdOptions(float(lam), float(mu1), float(mu2), float(eta0), int(t0), float(tol),
                      int(max_iter), int(seed))
    while _asgd_loop(data.rows, data.y, w, wbar, opt, stats, ctl, _chunk.budget()) == PAUSED:
        pass
    return wbar, stats


#: SVRG's options for :func:`_svrg_loop`: ``kappa``, ``mu``, ``theta`` of the ODM loss (module
#: docstring), the step, ``tol`` on the full gradient's norm, ``max_iter`` (epochs), the
#: ``seed`` and whether the next snapshot is the iterate at a random inner step
SvrgOptions = namedtuple("SvrgOptions", "kappa mu theta step tol max_iter seed random_snapshot")
#: SVRG's state between two calls of :func:`_svrg_loop`: the full gradient ``mu_bar`` at the
#: snapshot ``wbar`` and its rows' loss derivatives ``coefs_bar``, the next snapshot
#: ``wsnap``, ``stats`` (epochs, the last full gradient's norm, not finite) and ``ctl``
#: (int64, slots ``S_...``; zeros: a fresh run)
SvrgState = namedtuple("SvrgState", "mu_bar coefs_bar wbar wsnap stats ctl")
#: ASGD's options for :func:`_asgd_loop`: ``lam``, ``mu1``, ``mu2`` of the ODML primal, the
#: step's ``eta0``, the step ``t0`` the average starts from, ``tol`` on the subgradient's
#: norm, ``max_iter`` (epochs) and the ``seed``
AsgdOptions = namedtuple("AsgdOptions", "lam mu1 mu2 eta0 t0 tol max_iter seed")
#: slots of the loops' ``ctl`` (int64) between two calls: started, epochs, the position in
#: the epoch (-1: the next epoch starts), SVRG's snapshot step, ASGD's step count
S_STARTED, S_EPOCH, S_POS, S_SNAP, S_T = range(5)
N_SCTL = 5
#: work units (:mod:`fast._chunk`) of a stochastic step (a row drawn at random: read at a
#: random place), of an entry of a data row read in a step (dense, CSR) and of an entry of
#: ``w`` updated (a streamed, vectorised loop)
STEP_COST = 300.0
DENSE_ENTRY_COST = 2.0
CSR_ENTRY_COST = 10.0
W_ENTRY_COST = 0.5


@njit(cache=True)
def _row_cost(mode, i, Xd, indptr):
    """The work units of reading row ``i`` once."""
    if mode == 0:
        return DENSE_ENTRY_COST * Xd.shape[1]
    return CSR_ENTRY_COST * (indptr[i + 1] - indptr[i])


@njit(cache=True)
def _pass_cost(mode, Xd, indptr, m):
    """The work units of a pass over all the rows (twice: a full gradient)."""
    if mode == 0:
        return 2.0 * m * (DENSE_ENTRY_COST * Xd.shape[1] + 10.0)
    return 2.0 * (CSR_ENTRY_COST * indptr[m] + 10.0 * m)


def draw_pairs(m, n, seed):
    """The ``(i, j)`` pairs ASGD draws (for tests of the sampler): ``n`` pairs, ``i`` and
    ``j`` independent and uniform on ``0..m-1`` (with replacement)."""
    out = np.zeros((n, 2), dtype=np.int64)
    _draw_pairs(int(m), int(n), int(seed), out)
    return out


# ---------------------------------------------------------------------------------------
# numba helpers
# ---------------------------------------------------------------------------------------
@njit(cache=True)
def _draw_pair(m):
    """Two indices drawn independently, uniformly, with replacement (SPEC §3)."""
    i = np.random.randint(0, m)
    j = np.random.randint(0, m)
    return i, j


@njit(cache=True)
def _draw_pairs(m, n, seed, out):
    np.random.seed(seed)
    for t in range(n):
        i, j = _draw_pair(m)
        out[t, 0] = i
        out[t, 1] = j


@njit(cache=True)
def _odm_loss_deriv(gamma, kappa, mu, theta):
    """``d/d gamma`` of ``kappa/2 [max(0,1-theta-gamma)^2 + mu max(0,gamma-1-theta)^2]``."""
    if gamma < 1.0 - theta:
        return kappa * (gamma + theta - 1.0)
    if gamma > 1.0 + theta:
        return kappa * mu * (gamma - theta - 1.0)
    return 0.0


@njit(cache=True)
def _odm_full_grad(rows, y, w, kappa, mu, theta, coefs, grad):
    """``grad = grad f_O(w)``; ``coefs[i]`` = loss derivative at the margin of ``i``."""
    mode, Xd, indptr, indices, data = rows
    m = y.shape[0]
    for t in range(w.shape[0]):
        grad[t] = w[t]
    for i in range(m):
        gi = y[i] * row_dot(mode, i, Xd, indptr, indices, data, w)
        c = _odm_loss_deriv(gi, kappa, mu, theta)
        coefs[i] = c
        if c != 0.0:
            row_axpy(mode, i, c * y[i] / m, Xd, indptr, indices, data, grad)
    nrm = 0.0
    for t in range(w.shape[0]):
        nrm += grad[t] * grad[t]
    return np.sqrt(nrm)


@njit(cache=True)
def _svrg_loop(rows, y, w, opt, st, budget):
    """SVRG (``opt`` an :data:`SvrgOptions`) on ``rows`` (a :data:`fast._rows.Rows`) and
    ``y`` for about ``budget`` work units: returns :data:`fast._chunk.PAUSED` while not
    done, 0 when done (``w`` and ``st.stats`` then hold the result). The run's state is
    ``st`` (an :data:`SvrgState`: ``mu_bar``, ``coefs_bar``, ``wbar``, ``wsnap``,
    ``stats[1]``, the last full gradient's norm, and ``ctl``, zeros: a fresh run, seeded
    with ``opt.seed``); a call resumes at the stochastic step where the last one stopped
    (the generator's stream carries over)."""
    mode, Xd, indptr, indices, data = rows
    kappa, mu, theta, step, tol, max_iter, seed, random_snapshot = opt
    mu_bar, coefs_bar, wbar, wsnap, stats, ctl = st
    m = y.shape[0]
    d = w.shape[0]
    work = 0.0
    full = _pass_cost(mode, Xd, indptr, m)
    if ctl[S_STARTED] == 0:
        np.random.seed(seed)
        for t in range(d):
            wbar[t] = w[t]
            wsnap[t] = w[t]
        stats[1] = _odm_full_grad(rows, y, wbar, kappa, mu, theta, coefs_bar, mu_bar)
        work += full
        ctl[S_STARTED] = 1
        ctl[S_POS] = -1
    epoch = ctl[S_EPOCH]
    pos = ctl[S_POS]
    t_snap = ctl[S_SNAP]
    gnorm = stats[1]
    while True:
        if pos < 0:
            if not abs(gnorm) < np.inf:
                stats[2] = 1.0                 # not finite (overflow): the run stops here
                break
            if not (gnorm > tol and epoch < max_iter):
                break
            for t in range(d):
                w[t] = wbar[t]
            t_snap = np.random.randint(0, m) if random_snapshot else m - 1
            pos = 0
        while pos < m:
            if work >= budget:
                ctl[S_EPOCH] = epoch
                ctl[S_POS] = pos
                ctl[S_SNAP] = t_snap
                return PAUSED
            i = np.random.randint(0, m)
            gi = y[i] * row_dot(mode, i, Xd, indptr, indices, data, w)
            dc = _odm_loss_deriv(gi, kappa, mu, theta) - coefs_bar[i]
            # w <- w - step (w - wbar + mu_bar + dc y_i x_i)
            for t in range(d):
                w[t] -= step * (w[t] - wbar[t] + mu_bar[t])
            if dc != 0.0:
                row_axpy(mode, i, -step * dc * y[i], Xd, indptr, indices, data, w)
            if pos == t_snap:
                for t in range(d):
                    wsnap[t] = w[t]
            work += STEP_COST + W_ENTRY_COST * d + 2.0 * _row_cost(mode, i, Xd, indptr)
            pos += 1
        for t in range(d):
            wbar[t] = wsnap[t]
        epoch += 1
        gnorm = _odm_full_grad(rows, y, wbar, kappa, mu, theta, coefs_bar, mu_bar)
        stats[1] = gnorm
        work += full
        pos = -1
    for t in range(d):
        w[t] = wbar[t]
    stats[0] = epoch
    stats[1] = gnorm
    return 0


@njit(cache=True)
def _odml_subgrad(rows, y, w, lam, mu1, mu2, grad):
    """A subgradient of the ODML primal at ``w`` (hinge ties ``gamma_i = 1`` counted as 0)
    and its norm: ``w + (2 mu1/m) X^T P X w - (mu2/m) X^T y - (lam/m) sum_{gamma_i<1} y_i x_i``."""
    mode, Xd, indptr, indices, data = rows
    m = y.shape[0]
    d = w.shape[0]
    f = np.empty(m)
    for i in range(m):
        f[i] = row_dot(mode, i, Xd, indptr, indices, data, w)
    gm = 0.0
    for i in range(m):
        gm += y[i] * f[i]
    gm /= m
    for t in range(d):
        grad[t] = w[t]
    for i in range(m):
        # d/dw of mu1 * gamma_v = (2 mu1/m) sum_i (gamma_i - gamma_m) y_i x_i
        c = 2.0 * mu1 / m * (y[i] * f[i] - gm) * y[i] - mu2 / m * y[i]
        if y[i] * f[i] < 1.0:
            c -= lam / m * y[i]
        if c != 0.0:
            row_axpy(mode, i, c, Xd, indptr, indices, data, grad)
    nrm = 0.0
    for t in range(d):
        nrm += grad[t] * grad[t]
    return np.sqrt(nrm)


@njit(cache=True)
def _asgd_loop(rows, y, w, wbar, opt, stats, ctl, budget):
    """ASGD (``opt`` an :data:`AsgdOptions`) for about ``budget`` work units, as
    :func:`_svrg_loop` (state: ``w``, ``wbar``, ``stats[1]`` and ``ctl``)."""
    mode, Xd, indptr, indices, data = rows
    lam, mu1, mu2, eta0, t0, tol, max_iter, seed = opt
    m = y.shape[0]
    d = w.shape[0]
    grad = np.zeros(d)
    work = 0.0
    full = _pass_cost(mode, Xd, indptr, m)
    if ctl[S_STARTED] == 0:
        np.random.seed(seed)
        stats[1] = _odml_subgrad(rows, y, wbar, lam, mu1, mu2, grad)
        work += full
        ctl[S_STARTED] = 1
        ctl[S_POS] = -1
    t = ctl[S_T]
    epoch = ctl[S_EPOCH]
    pos = ctl[S_POS]
    gnorm = stats[1]
    while True:
        if pos < 0:
            if not abs(gnorm) < np.inf:
                stats[2] = 1.0                 # not finite (overflow): the run stops here
                break
            if not (gnorm > tol and epoch < max_iter):
                break
            pos = 0
        while pos < m:
            if work >= budget:
                ctl[S_T] = t
                ctl[S_EPOCH] = epoch
                ctl[S_POS] = pos
                return PAUSED
            i, j = _draw_pair(m)
            fi = row_dot(mode, i, Xd, indptr, indices, data, w)
            fj = row_dot(mode, j, Xd, indptr, indices, data, w)
            eta = eta0 * (1.0 + eta0 * t) ** (-0.75)
            # grad = w + 2 mu1 x_i (x_i^T w) - 2 mu1 y_i y_j x_i (x_j^T w) - mu2 y_i x_i
            #        - lam y_i x_i 1{y_i x_i^T w < 1}              (seed 001 eq. 15)
            c = 2.0 * mu1 * fi - 2.0 * mu1 * y[i] * y[j] * fj - mu2 * y[i]
            if y[i] * fi < 1.0:
                c -= lam * y[i]
            for k in range(d):
                w[k] -= eta * w[k]
            if c != 0.0:
                row_axpy(mode, i, -eta * c, Xd, indptr, indices, data, w)
            t += 1
            rate = 1.0 / max(1, t - t0)
            for k in range(d):
                wbar[k] += rate * (w[k] - wbar[k])
            work += (2.0 * STEP_COST + 2.0 * W_ENTRY_COST * d
                     + 2.0 * _row_cost(mode, i, Xd, indptr) + _row_cost(mode, j, Xd, indptr))
            pos += 1
        epoch += 1
        gnorm = _odml_subgrad(rows, y, wbar, lam, mu1, mu2, grad)
        stats[1] = gnorm
        work += full
        pos = -1
    stats[0] = epoch
    stats[1] = gnorm
    return 0
