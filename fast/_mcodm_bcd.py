"""Block coordinate descent for mcODM's relaxed dual (numba): the epochs on the Gram or
linear path (one loop, :func:`_bcd`, around one block step, :func:`_block`, which solves
eq. 24 exactly with :func:`fast._mcodm_block.block_core`), the gap and KKT stop of
eq. 23, and the active-set Newton step on the settled face ("polish").

Nothing here knows a problem object: arrays in, arrays out. ``fast/mcodm.py`` maps a
``rm.RelaxedMcODM`` / ``rm.McODM`` to these and their results back to a Solution.
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from . import _chunk
from ._chunk import PAUSED
from ._mcodm_block import block_core

#: statuses of the numba epoch loops
_DONE, _CALM, _MAXED = 0, 1, 2

#: what the epochs read of the problem: the path (``linear``), ``R`` the Gram ``G`` (Gram
#: path) or the rows ``X`` (linear path), ``xsq`` the rows' squared norms (linear path; a
#: placeholder, :data:`_NO_XSQ`, on the Gram path), the labels ``y`` (int64) and eq. 20's
#: ``M``
McData = namedtuple("McData", "linear R xsq y M")
#: eq. 23's dual variables ``alpha`` (m, k) and ``beta`` (m,), and eq. 22's coefficients
#: ``coef = alpha - onehot * beta`` (m, k), updated together
McDual = namedtuple("McDual", "alpha beta coef")
#: the relaxed problem's constants ``c``, ``mu``, ``theta`` (eq. 20)
McParams = namedtuple("McParams", "c mu theta")
#: the stop of a run of :func:`_bcd`: ``tol`` on the relative gap, ``kkt_tol`` on the scaled
#: KKT residual, the epoch cap, the ``seed`` of the order and ``calm_needed`` (stop after
#: that many epochs without a face change; 0: never)
BcdOptions = namedtuple("BcdOptions", "tol kkt_tol max_epochs seed calm_needed")
#: the arrays of a run of :func:`_bcd`: ``T`` (``S^T`` or ``W^T``), the scores ``S``, the
#: epoch's order ``perm`` ((m,) int64), ``ctl`` (int64, slots ``B_...``) and ``fctl``
#: (float64: ``B_P``, ``B_DM``), both zeros for a fresh run
BcdState = namedtuple("BcdState", "T S perm ctl fctl")
#: the scratch vectors of a block step ((k,) each: eq. 24's ``B``, the new ``alpha_i``,
#: :func:`fast._mcodm_block.block_core`'s buffer)
BlockScratch = namedtuple("BlockScratch", "B anew buf")


@njit(cache=True)
def _stop(S, dual, y, M, par, wn2, tol, kkt_tol):
    """``(P, D_max, kkt, done)`` in one pass over the points: eq. 20 at the scores ``S``
    (``||W||^2 = wn2``; ``par`` a :data:`McParams`), minus eq. 23 at the dual (a
    :data:`McDual`), and the first-order KKT residuals that the
    gap bounds only quadratically, scaled as :meth:`refmodels.mcodm.RelaxedMcODM.kkt_residuals`
    does: stationarity in the slacks (eq. 21, ``2c xi_i = alpha_i^{y_i}``,
    ``2 c mu eps_i = beta_i``) and complementarity. (Primal and dual feasibility and
    stationarity in ``W`` hold exactly by construction.) ``done`` iff the relative gap is at
    most ``tol`` and the KKT residual at most ``kkt_tol``."""
    alpha, beta = dual.alpha, dual.beta
    c, mu, theta = par
    m, k = S.shape
    sl = 0.0
    dq = 0.0
    lin = 0.0
    r2 = 0.0
    n_ab = 0.0
    n_xe = 0.0
    comp = 0.0
    for i in range(m):
        yi = y[i]
        sy = S[i, yi]
        so = -np.inf
        for l in range(k):
            if l != yi:
                if S[i, l] > so:
                    so = S[i, l]
                lin += (1.0 - theta) * alpha[i, l]
        xi = 1.0 - theta - (sy - so)
        if xi < 0.0:
            xi = 0.0
        ep = sy - M[i] - 1.0 - theta
        if ep < 0.0:
            ep = 0.0
        sl += xi * xi + mu * ep * ep
        ay = alpha[i, yi]
        dq += ay * ay / (4.0 * c) + beta[i] * beta[i] / (4.0 * c * mu)
        lin += (M[i] + 1.0 + theta) * beta[i]
        r2 += (2.0 * c * xi - ay) ** 2 + (2.0 * c * mu * ep - beta[i]) ** 2
        n_ab += ay * ay + beta[i] * beta[i]
        n_xe += xi * xi + mu * mu * ep * ep
        for l in range(k):
            if l != yi:
                v = abs(alpha[i, l] * (sy - S[i, l] - (1.0 - theta) + xi))
                if v > comp:
                    comp = v
        v = abs(beta[i] * (1.0 + theta + ep - sy + M[i]))
        if v > comp:
            comp = v
    P = 0.5 * wn2 + c * sl
    Dm = -(0.5 * wn2 + dq + lin)
    stat = np.sqrt(r2) / (1.0 + np.sqrt(n_ab) + 2.0 * c * np.sqrt(n_xe))
    comp = comp / (1.0 + abs(P))
    r = stat if stat > comp else comp
    return P, Dm, r, (P - Dm) / (1.0 + abs(P)) <= tol and r <= kkt_tol


_NO_XSQ = np.zeros(1)          # the Gram path reads A = G[i, i]


@njit(cache=True)
def _coef_dot(coef, S):
    s = 0.0
    for i in range(coef.shape[0]):
        for l in range(coef.shape[1]):
            s += coef[i, l] * S[i, l]
    return s


@njit(cache=True)
def _pattern_changes(alpha_i, beta_i, anew, bnew, yi):
    """Variables of block ``i`` that leave or join the face (eq. 23's bounds): ``alpha_i^l``
    changing between ``< 0`` and ``= 0`` (``l != y_i``), ``beta_i`` between ``> 0`` and ``= 0``."""
    n = 0
    for l in range(anew.shape[0]):
        if l != yi and (anew[l] < 0.0) != (alpha_i[l] < 0.0):
            n += 1
    if (bnew > 0.0) != (beta_i > 0.0):
        n += 1
    return n


@njit(cache=True)
def _scores_linear(X, Wt, S):
    m, d = X.shape
    k = Wt.shape[0]
    for i in range(m):
        for l in range(k):
            s = 0.0
            for f in range(d):
                s += X[i, f] * Wt[l, f]
            S[i, l] = s


@njit(cache=True)
def _block(i, A, T, data, dual, theta, aD, aE, scratch):
    """One block of eq. 24 (Alg. 4, by sorting: :func:`block_core`) at sample ``i``, on
    either path (``data`` a :data:`McData`): the scores of ``x_i`` are ``T[l, i]`` (Gram
    path: ``T = S^T``, k x m) or ``T[l] . R[i]`` (linear path: ``T = W^T``, k x d,
    ``R = X``); writes ``alpha_i``, ``beta_i``, ``coef_i`` of ``dual`` (a :data:`McDual`) and
    moves ``T[l] += delta_l R[i]`` for the ``l`` that changed (``scratch`` a
    :data:`BlockScratch`). Returns the number of face changes."""
    linear, R, _, y, M = data
    alpha, beta, coef = dual
    B, anew, buf = scratch
    k = coef.shape[1]
    yi = y[i]
    for l in range(k):
        if linear:
            sc = 0.0
            for f in range(R.shape[1]):
                sc += T[l, f] * R[i, f]
        else:
            sc = T[l, i]
        g = sc - A * coef[i, l]                    # sum_{j != i} k_ij coef[j, l]
        B[l] = g + (1.0 - theta) if l != yi else g
    F = M[i] + 1.0 + theta - B[yi]
    bnew = block_core(A, B, yi, aD, aE, F, anew, buf)
    changes = _pattern_changes(alpha[i], beta[i], anew, bnew, yi)
    for l in range(k):
        cn = anew[l] - bnew if l == yi else anew[l]
        dl = cn - coef[i, l]
        coef[i, l] = cn
        alpha[i, l] = anew[l]
        if dl != 0.0:
            Ri = R[i]
            Tl = T[l]
            for j in range(Ri.shape[0]):
                Tl[j] += dl * Ri[j]
    beta[i] = bnew
    return changes


#: slots of :func:`_bcd`'s ``ctl`` (int64) between two calls: started, epochs, the position
#: in the epoch (-1: the next epoch starts), the face changes of this epoch, the calm
#: epochs in a row; of its ``fctl`` (float64): ``P`` and ``D_max`` at the last check
B_STARTED, B_EP, B_POS, B_CHANGES, B_CALM = range(5)
N_BCTL = 5
B_P, B_DM = 0, 1
N_BFCTL = 2
#: an epoch's objective or dual value was not finite (overflow): the epochs stopped there
_NONFINITE = 3
#: work units (:mod:`fast._chunk`) of a block step (its row read at a random place), of an
#: entry of the data rows and ``W`` it reads and updates (linear path, ``2 k d`` a block), of
#: an entry of the scores per class (Gram path: a class whose coefficient changed costs
#: ``m``), of an entry of the scores at a check, and of a step of :func:`_face_newton` per
#: squared free variable
BLOCK_COST = 500.0
LINEAR_ENTRY_COST = 3.0
GRAM_ENTRY_COST = 0.3
ENTRY_COST = 1.0
FACE_STEP_COST = 3.0


@njit(cache=True)
def _bcd(data, dual, par, opt, st, budget):
    """Epochs of block coordinate descent (eq. 24 per sample, random order) on one path
    (``data`` a :data:`McData`, ``dual`` the :data:`McDual` updated in place, ``par`` the
    :data:`McParams`, ``opt`` the :data:`BcdOptions`, ``st`` the :data:`BcdState`):
    Gram (``R = G``, ``T = S^T`` a C-contiguous copy of the scores, so that a block update
    is ``k`` contiguous AXPYs ``S^T[l, :] += delta_l G[i, :]``; copied back into ``S`` for
    each stopping test) or linear (``R = X``, ``T = W^T`` stored explicitly,
    seed 002 §4.2; ``S`` is scratch, recomputed as ``X W`` at each check). Runs until the
    relative gap (maintained scores) is at most ``tol`` and the scaled KKT residual at most
    ``kkt_tol``, or (``calm_needed > 0``) until the face has not changed for ``calm_needed``
    epochs in a row.

    In chunks of about ``budget`` work units (:mod:`fast._chunk`): returns
    :data:`fast._chunk.PAUSED` while not done, else the status ``_DONE``, ``_CALM``,
    ``_MAXED`` or ``_NONFINITE`` (the epochs then in ``ctl[B_EP]``, ``P`` and ``D_max`` in
    ``fctl``). The run's state: ``perm`` (the epoch's order, (m,) int64), ``ctl`` (zeros: a
    fresh run, seeded with ``seed``) and ``fctl``; a call resumes at the block where the
    last one stopped."""
    linear, R, xsq, y, M = data
    coef = dual.coef
    c, mu, theta = par
    tol, kkt_tol, max_epochs, seed, calm_needed = opt
    T, S, perm, ctl, fctl = st
    m, k = coef.shape
    aD = 1.0 / (2.0 * c)                  # m (1-theta)^2 / (2 lam)
    aE = aD / mu
    scratch = BlockScratch(np.empty(k), np.empty(k), np.empty(k))
    block_work = BLOCK_COST + (2.0 * LINEAR_ENTRY_COST * k * R.shape[1] if linear
                               else GRAM_ENTRY_COST * k * m)
    if ctl[B_STARTED] == 0:
        np.random.seed(seed)
        fctl[B_P] = np.inf
        fctl[B_DM] = -np.inf
        ctl[B_STARTED] = 1
        ctl[B_POS] = -1
    ep = ctl[B_EP]
    pos = ctl[B_POS]
    changes = ctl[B_CHANGES]
    calm = ctl[B_CALM]
    work = 0.0
    status = _MAXED
    while ep < max_epochs:
        if pos < 0:
            perm[:] = np.random.permutation(m)
            changes = 0
            pos = 0
        while pos < m:
            if work >= budget:
                ctl[B_EP] = ep
                ctl[B_POS] = pos
                ctl[B_CHANGES] = changes
                ctl[B_CALM] = calm
                return PAUSED
            i = perm[pos]
            A = xsq[i] if linear else R[i, i]
            changes += _block(i, A, T, data, dual, theta, aD, aE, scratch)
            work += block_work
            pos += 1
        pos = -1
        ep += 1
        if linear:
            _scores_linear(R, T, S)
            wn2 = 0.0
            for l in range(k):
                for f in range(T.shape[1]):
                    wn2 += T[l, f] * T[l, f]
            work += ENTRY_COST * m * k * R.shape[1]
        else:
            for i in range(m):                 # S (m x k) from the maintained S^T = T
                for l in range(k):
                    S[i, l] = T[l, i]
            wn2 = _coef_dot(coef, S)
        work += ENTRY_COST * 4 * m * k
        P, Dm, r, done = _stop(S, dual, y, M, par, wn2, tol, kkt_tol)
        fctl[B_P] = P
        fctl[B_DM] = Dm
        if done:
            status = _DONE
            break
        if not (abs(P) < np.inf and abs(Dm) < np.inf):
            status = _NONFINITE
            break
        calm = calm + 1 if changes == 0 else 0
        if calm_needed > 0 and calm >= calm_needed:
            status = _CALM
            break
    ctl[B_EP] = ep
    return status


# ---------------------------------------------------------------------------------------
# the active-set Newton step ("polish") on the face of eq. 23
# ---------------------------------------------------------------------------------------
@njit(cache=True)
def _face(alpha, beta, y):
    """The free variables of eq. 23 at ``(alpha, beta)``: ``(sample, class)`` of every
    ``alpha_i^l < 0`` (``l != y_i``) and ``(i, -1)`` of every ``beta_i > 0``. (``alpha_i^{y_i}``
    is not a variable of the face: it is ``-sum_{l != y_i} alpha_i^l``, eq. 23's equality.)"""
    m, k = alpha.shape
    n = 0
    for i in range(m):
        for l in range(k):
            if l != y[i] and alpha[i, l] < 0.0:
                n += 1
        if beta[i] > 0.0:
            n += 1
    vi = np.empty(n, np.int64)
    vl = np.empty(n, np.int64)
    n = 0
    for i in range(m):
        for l in range(k):
            if l != y[i] and alpha[i, l] < 0.0:
                vi[n] = i
                vl[n] = l
                n += 1
        if beta[i] > 0.0:
            vi[n] = i
            vl[n] = -1
            n += 1
    return vi, vl


@njit(cache=True)
def _face_system(K, kidx, vi, vl, y, M, S, dual, a, par):
    """Hessian ``H`` (its lower triangle; the upper one is left unset) and gradient ``g`` of
    eq. 23's objective in the free variables of the face (the others fixed,
    ``alpha_i^{y_i} = -sum_{l != y_i} alpha_i^l``; ``dual`` a :data:`McDual`, ``par`` the
    :data:`McParams`, ``a = 1/(2c)``).

    A free variable ``v`` moves ``coef[i_v, :]`` (eq. 22) along ``c_v = e_l - e_{y_i}``
    (``alpha_i^l``) or ``c_v = -e_{y_i}`` (``beta_i``), so ``1/2 sum_l ||w_l||^2`` contributes
    ``H[v, w] = k(x_{i_v}, x_{i_w}) <c_v, c_w>`` (``K[kidx[v], kidx[w]]``); the quadratic
    terms of eq. 23 add ``a = 1/(2c)`` for two ``alpha`` of one sample (through
    ``(alpha_i^{y_i})^2``) and ``a/mu`` to ``beta_i``'s diagonal. The gradient, from the
    scores ``S``: ``S[i,l] - S[i,y_i] - a alpha_i^{y_i} + 1 - theta`` resp.
    ``-S[i,y_i] + (a/mu) beta_i + M_i + 1 + theta`` (the same quantities as eq. 24's
    ``B, D, E, F``)."""
    alpha, beta = dual.alpha, dual.beta
    mu, theta = par.mu, par.theta
    n = vi.shape[0]
    H = np.empty((n, n))
    g = np.empty(n)
    aE = a / mu
    for v in range(n):
        i = vi[v]
        l = vl[v]
        yi = y[i]
        if l >= 0:
            g[v] = S[i, l] - S[i, yi] - a * alpha[i, yi] + (1.0 - theta)
        else:
            g[v] = -S[i, yi] + aE * beta[i] + M[i] + 1.0 + theta
        kv = kidx[v]
        for w in range(v + 1):
            j = vi[w]
            l2 = vl[w]
            yj = y[j]
            if l >= 0 and l2 >= 0:        # <e_l - e_yi, e_l2 - e_yj>
                ip = (l == l2) - (l == yj) - (yi == l2) + (yi == yj)
            elif l >= 0:                  # <e_l - e_yi, -e_yj>
                ip = (yi == yj) - (l == yj)
            elif l2 >= 0:
                ip = (yj == yi) - (l2 == yi)
            else:                         # <e_yi, e_yj>
                ip = 1 if yi == yj else 0
            h = K[kv, kidx[w]] * ip
            if i == j:
                if l >= 0 and l2 >= 0:
                    h += a
                elif l < 0 and l2 < 0:
                    h += aE
            H[v, w] = h                   # lower triangle only (all that Cholesky reads)
    return H, g


def _face_newton(L, g, x, is_alpha):
    """Active-set Newton steps on the face with the Cholesky factor ``L`` (its lower
    triangle, C order, ``H = L L^T``; the strict upper triangle is never read; overwritten)
    of its Hessian and the gradient ``g`` at the free variables ``x`` (updated in place;
    ``is_alpha``: bound ``x <= 0``, else ``x >= 0``).

    Each step solves ``H d = -g`` on the variables still on the face and takes the largest
    ``t <= 1`` that keeps them within their bounds; the variable that stops it is set to its
    bound and leaves the face (``L`` is downdated by Givens rotations, O(n^2), instead of
    refactored), and the step is redone; a full step (``t = 1``) is the minimiser on the
    face and ends it. Along ``d`` the objective changes by ``t g.d + t^2/2 d.H.d =
    -t (1 - t/2) g.H^{-1}.g < 0``; after the step the gradient on the face is
    ``(1 - t) g``. Returns the number of steps. The steps run in compiled chunks of bounded
    work (:func:`_face_steps`, :mod:`fast._chunk`)."""
    n = g.shape[0]
    act, ga, d = np.arange(n, dtype=np.int64), np.array(g, dtype=np.float64), np.empty(n)
    ctl = np.array([n, 0], dtype=np.int64)
    while _face_steps(L, x, is_alpha, act, ga, d, ctl, _chunk.budget()) == PAUSED:
        pass                          # (between two calls: where Ctrl-C is raised)
    return int(ctl[1])


@njit(cache=True)
def _face_steps(L, x, is_alpha, act, ga, d, ctl, budget):
    """The steps of :func:`_face_newton` for about ``budget`` work units: its state is ``L``,
    ``x``, the variables on the face ``act[:na]``, their gradient ``ga``, and ``ctl = [na,
    steps]``; ``d`` is scratch. Returns :data:`fast._chunk.PAUSED` while not done, else 0."""
    na = ctl[0]
    steps = ctl[1]
    work = 0.0
    while na > 0:
        if work >= budget:
            ctl[0] = na
            ctl[1] = steps
            return PAUSED
        work += FACE_STEP_COST * float(na) * na
        # L L^T d = -ga: forward, then backward substitution (row-wise access of L)
        for i in range(na):
            s = -ga[i]
            for j in range(i):
                s -= L[i, j] * d[j]
            d[i] = s / L[i, i]
        for i in range(na - 1, -1, -1):
            d[i] /= L[i, i]
            di = d[i]
            for j in range(i):
                d[j] -= L[i, j] * di
        gd = 0.0
        for i in range(na):
            gd += ga[i] * d[i]
        if not gd < 0.0:                     # no descent left (g = 0, or not finite)
            break
        # ratio test: the largest t in (0, 1] keeping alpha <= 0, beta >= 0
        t = 1.0
        b = -1
        for i in range(na):
            v = act[i]
            if (is_alpha[v] and d[i] > 0.0) or ((not is_alpha[v]) and d[i] < 0.0):
                ti = -x[v] / d[i]
                if ti < t:
                    t = ti
                    b = i
        if t < 0.0:
            t = 0.0
        for i in range(na):
            x[act[i]] += t * d[i]
            ga[i] *= 1.0 - t
        steps += 1
        if b < 0:
            break
        x[act[b]] = 0.0                      # exactly at its bound; it leaves the face
        # delete row and column b of H from its factor: shift the rows of L below b up, then
        # rotate columns (j, j+1) to zero the new superdiagonal entries L[j, j+1]
        for r in range(b, na - 1):
            for j in range(r + 2):
                L[r, j] = L[r + 1, j]
            act[r] = act[r + 1]
            ga[r] = ga[r + 1]
        na -= 1
        for j in range(b, na):
            a0 = L[j, j]
            a1 = L[j, j + 1]
            rr = np.hypot(a0, a1)
            if rr == 0.0:
                na = 0                       # (a singular factor: stop here)
                break
            cs = a0 / rr
            sn = a1 / rr
            for i in range(j, na):
                u0 = L[i, j]
                u1 = L[i, j + 1]
                L[i, j] = cs * u0 + sn * u1
                L[i, j + 1] = -sn * u0 + cs * u1
            L[j, j + 1] = 0.0
        for i in range(na):
            L[i, na] = 0.0
    ctl[0] = 0
    ctl[1] = steps
    return 0


@njit(cache=True)
def _face_set(vi, vl, x, y, alpha, beta, coef):
    """Write the free variables ``x`` (clipped to their bounds ``alpha_i^l <= 0``,
    ``beta_i >= 0``), then ``alpha_i^{y_i}`` and ``coef[i, :]`` of the samples touched
    (eqs. 22, 23)."""
    n = vi.shape[0]
    for v in range(n):
        i = vi[v]
        l = vl[v]
        if l >= 0:
            alpha[i, l] = x[v] if x[v] < 0.0 else 0.0
        else:
            beta[i] = x[v] if x[v] > 0.0 else 0.0
    k = alpha.shape[1]
    for v in range(n):
        i = vi[v]
        yi = y[i]
        s = 0.0
        for l in range(k):
            if l != yi:
                s += alpha[i, l]
        alpha[i, yi] = -s
        for l in range(k):
            coef[i, l] = alpha[i, l]
        coef[i, yi] -= beta[i]
